/* shoal/shmem_coll.h - part of <shmem.h>; include <shmem.h> instead.
 *
 * Collectives (spec 9.9). Team forms are collective over every PE of team, return 0, and may be called back to
 * back without any synchronization in between. nelems counts elements of the routine's type (bytes for the *mem
 * forms, 4 or 8 bytes for the 32/64 forms); 0 elements is a no-op on every PE. source and dest are symmetric
 * (heap or global/static data) and must be the same objects on every PE. source and dest must not overlap, except
 * that reductions and broadcasts accept source == dest (in place).
 *
 * Deprecated active-set forms take (PE_start, logPE_stride, PE_size, pSync): the PEs PE_start + i * 2^logPE_stride,
 * 0 <= i < PE_size (at most SHMEM_SYNC_SIZE - 1 of them); pSync (SHMEM_*_SYNC_SIZE longs, all SHMEM_SYNC_VALUE) is
 * used as the signal array and is all SHMEM_SYNC_VALUE again on return. pWrk is not used.
 *
 * Errors (fatal, one line naming routine, PE and argument): SHMEM_TEAM_INVALID or a destroyed team, PE_root
 * outside the team, a calling PE outside the active set, overlapping source and dest, non-symmetric addresses, and
 * with SHMEM_DEBUG=1 different nelems/PE_root/strides on different PEs (checked with two extra barriers).
 *
 * Algorithms (chosen by size and team size; SHOAL_COLL_<FAMILY>_ALGO forces one, see docs):
 *   barrier: dissemination | linear           broadcast: push | pull | tree
 *   fcollect, collect: push | ring | rdbl     alltoall(s): push | pairwise      reductions: oneshot | rdbl | rsag
 */
#ifndef SHOAL_SHMEM_COLL_H
#define SHOAL_SHMEM_COLL_H
#ifdef __cplusplus
extern "C" {
#endif

/** Collective over team: returns when every member has called it; no completion of RMA implied (spec 9.9.x
 *  shmem_team_sync). Returns 0. */
int shmem_team_sync(shmem_team_t team);
/** Active set: quiet, then wait until every PE of the set arrives (spec shmem_barrier, deprecated). */
void shmem_barrier(int PE_start, int logPE_stride, int PE_size, long *pSync);
/** Active set: wait until every PE of the set arrives (spec shmem_sync, deprecated). The one-argument C11 form
 *  shmem_sync(team) is shmem_team_sync (see <shmem.h>). */
void shmem_sync(int PE_start, int logPE_stride, int PE_size, long *pSync);

/* ---- broadcast, collect, fcollect, alltoall, alltoalls for every standard RMA type (spec 9.9) ---- */
#define SHOAL_DECL_COLL_TYPED(T, N)                                                                                   \
  int shmem_##N##_broadcast(shmem_team_t team, T *dest, const T *source, size_t nelems, int PE_root);                 \
  int shmem_##N##_collect(shmem_team_t team, T *dest, const T *source, size_t nelems);                                \
  int shmem_##N##_fcollect(shmem_team_t team, T *dest, const T *source, size_t nelems);                               \
  int shmem_##N##_alltoall(shmem_team_t team, T *dest, const T *source, size_t nelems);                               \
  int shmem_##N##_alltoalls(shmem_team_t team, T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst,               \
                            size_t nelems);
SHOAL_RMA_TYPES(SHOAL_DECL_COLL_TYPED)
/** Team PE PE_root's source (nelems bytes) to dest on every member, the root included. */
int shmem_broadcastmem(shmem_team_t team, void *dest, const void *source, size_t nelems, int PE_root);
/** Concatenation of every member's source (nelems bytes; may differ between members) in team order into dest. */
int shmem_collectmem(shmem_team_t team, void *dest, const void *source, size_t nelems);
/** As collectmem with the same nelems on every member: member i's block lands at dest + i * nelems. */
int shmem_fcollectmem(shmem_team_t team, void *dest, const void *source, size_t nelems);
/** Block j (nelems bytes at source + j * nelems) goes to member j's dest + my_pe * nelems. */
int shmem_alltoallmem(shmem_team_t team, void *dest, const void *source, size_t nelems);
/** Strided alltoall of bytes: element k of block j is source[(j * nelems + k) * sst], landing at
 *  dest[(my_pe * nelems + k) * dst] on member j; dst, sst >= 1. */
int shmem_alltoallsmem(shmem_team_t team, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,
                       size_t nelems);

/* Active-set forms (deprecated). The broadcast root's dest is not written. */
#define SHOAL_DECL_COLL_ASET(S)                                                                                       \
  void shmem_broadcast##S(void *dest, const void *source, size_t nelems, int PE_root, int PE_start,                   \
                          int logPE_stride, int PE_size, long *pSync);                                                \
  void shmem_collect##S(void *dest, const void *source, size_t nelems, int PE_start, int logPE_stride, int PE_size,   \
                        long *pSync);                                                                                 \
  void shmem_fcollect##S(void *dest, const void *source, size_t nelems, int PE_start, int logPE_stride, int PE_size,  \
                         long *pSync);                                                                                \
  void shmem_alltoall##S(void *dest, const void *source, size_t nelems, int PE_start, int logPE_stride, int PE_size,  \
                         long *pSync);                                                                                \
  void shmem_alltoalls##S(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,               \
                          int PE_start, int logPE_stride, int PE_size, long *pSync);
SHOAL_DECL_COLL_ASET(32)
SHOAL_DECL_COLL_ASET(64)

/* ---- reductions (spec 9.9.x): team types (spec Table "team-based reductions") ----
 * Every list entry is X(TYPE, TYPENAME, A); A is passed through (the operation). */
#define SHOAL_REDUCE_BITWISE_TYPES(X, A)                                                                              \
  X(unsigned char, uchar, A) X(unsigned short, ushort, A) X(unsigned int, uint, A) X(unsigned long, ulong, A)         \
  X(unsigned long long, ulonglong, A) X(int8_t, int8, A) X(int16_t, int16, A) X(int32_t, int32, A)                    \
  X(int64_t, int64, A) X(uint8_t, uint8, A) X(uint16_t, uint16, A) X(uint32_t, uint32, A) X(uint64_t, uint64, A)      \
  X(size_t, size, A)
#define SHOAL_REDUCE_MINMAX_TYPES(X, A)                                                                               \
  SHOAL_REDUCE_BITWISE_TYPES(X, A)                                                                                    \
  X(char, char, A) X(signed char, schar, A) X(short, short, A) X(int, int, A) X(long, long, A)                        \
  X(long long, longlong, A) X(ptrdiff_t, ptrdiff, A) X(float, float, A) X(double, double, A)                          \
  X(long double, longdouble, A)
#define SHOAL_REDUCE_ARITH_TYPES(X, A)                                                                                \
  SHOAL_REDUCE_MINMAX_TYPES(X, A) X(double _Complex, complexd, A) X(float _Complex, complexf, A)
/* Active-set types (spec Table "active-set-based reductions"). */
#define SHOAL_TOALL_BITWISE_TYPES(X, A) X(short, short, A) X(int, int, A) X(long, long, A) X(long long, longlong, A)
#define SHOAL_TOALL_MINMAX_TYPES(X, A)                                                                                \
  SHOAL_TOALL_BITWISE_TYPES(X, A) X(float, float, A) X(double, double, A) X(long double, longdouble, A)
#define SHOAL_TOALL_ARITH_TYPES(X, A)                                                                                 \
  SHOAL_TOALL_MINMAX_TYPES(X, A) X(double _Complex, complexd, A) X(float _Complex, complexf, A)
/* Every (types, operation) pair: X(TYPE, TYPENAME, OP) through each list. */
#define SHOAL_REDUCE_ALL(X)                                                                                           \
  SHOAL_REDUCE_BITWISE_TYPES(X, and) SHOAL_REDUCE_BITWISE_TYPES(X, or) SHOAL_REDUCE_BITWISE_TYPES(X, xor)             \
  SHOAL_REDUCE_MINMAX_TYPES(X, max) SHOAL_REDUCE_MINMAX_TYPES(X, min) SHOAL_REDUCE_ARITH_TYPES(X, sum)                \
  SHOAL_REDUCE_ARITH_TYPES(X, prod)
#define SHOAL_TOALL_ALL(X)                                                                                            \
  SHOAL_TOALL_BITWISE_TYPES(X, and) SHOAL_TOALL_BITWISE_TYPES(X, or) SHOAL_TOALL_BITWISE_TYPES(X, xor)                \
  SHOAL_TOALL_MINMAX_TYPES(X, max) SHOAL_TOALL_MINMAX_TYPES(X, min) SHOAL_TOALL_ARITH_TYPES(X, sum)                   \
  SHOAL_TOALL_ARITH_TYPES(X, prod)

/** dest[i] = source[i] OP over every member, for i < nreduce; source == dest (in place) or disjoint. Every member
 *  gets bit-identical results (the same evaluation order everywhere). Returns 0. */
#define SHOAL_DECL_REDUCE(T, N, OP)                                                                                   \
  int shmem_##N##_##OP##_reduce(shmem_team_t team, T *dest, const T *source, size_t nreduce);
SHOAL_REDUCE_ALL(SHOAL_DECL_REDUCE)
/** Active-set reduction (deprecated): nreduce >= 0; pWrk is not used. */
#define SHOAL_DECL_TOALL(T, N, OP)                                                                                    \
  void shmem_##N##_##OP##_to_all(T *dest, const T *source, int nreduce, int PE_start, int logPE_stride, int PE_size,  \
                                 T *pWrk, long *pSync);
SHOAL_TOALL_ALL(SHOAL_DECL_TOALL)

#ifdef __cplusplus
}
#endif

/* ---- C11 type-generic forms ---- */
#if !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define shmem_broadcast(team, dest, source, nelems, PE_root)                                                          \
  SHOAL_GENERIC_STD(*(dest), shmem_, _broadcast)(team, dest, source, nelems, PE_root)
#define shmem_collect(team, dest, source, nelems) SHOAL_GENERIC_STD(*(dest), shmem_, _collect)(team, dest, source, nelems)
#define shmem_fcollect(team, dest, source, nelems)                                                                    \
  SHOAL_GENERIC_STD(*(dest), shmem_, _fcollect)(team, dest, source, nelems)
#define shmem_alltoall(team, dest, source, nelems)                                                                    \
  SHOAL_GENERIC_STD(*(dest), shmem_, _alltoall)(team, dest, source, nelems)
#define shmem_alltoalls(team, dest, source, dst, sst, nelems)                                                         \
  SHOAL_GENERIC_STD(*(dest), shmem_, _alltoalls)(team, dest, source, dst, sst, nelems)
/* Bitwise operations exist for the unsigned types and int8..int64 (signed char, short, int, long here). */
#define SHOAL_GENERIC_BITWISE(x, op)                                                                                  \
  _Generic((x), unsigned char: shmem_uchar_##op##_reduce, unsigned short: shmem_ushort_##op##_reduce,                 \
           unsigned int: shmem_uint_##op##_reduce, unsigned long: shmem_ulong_##op##_reduce,                          \
           unsigned long long: shmem_ulonglong_##op##_reduce, signed char: shmem_int8_##op##_reduce,                  \
           short: shmem_int16_##op##_reduce, int: shmem_int32_##op##_reduce, long: shmem_int64_##op##_reduce)
#define SHOAL_GENERIC_ARITH(x, op)                                                                                    \
  _Generic((x), float: shmem_float_##op##_reduce, double: shmem_double_##op##_reduce,                                 \
           long double: shmem_longdouble_##op##_reduce, char: shmem_char_##op##_reduce,                              \
           signed char: shmem_schar_##op##_reduce, short: shmem_short_##op##_reduce, int: shmem_int_##op##_reduce,    \
           long: shmem_long_##op##_reduce, long long: shmem_longlong_##op##_reduce,                                   \
           unsigned char: shmem_uchar_##op##_reduce, unsigned short: shmem_ushort_##op##_reduce,                      \
           unsigned int: shmem_uint_##op##_reduce, unsigned long: shmem_ulong_##op##_reduce,                          \
           unsigned long long: shmem_ulonglong_##op##_reduce, double _Complex: shmem_complexd_##op##_reduce,          \
           float _Complex: shmem_complexf_##op##_reduce)
#define SHOAL_GENERIC_MINMAX(x, op)                                                                                   \
  _Generic((x), float: shmem_float_##op##_reduce, double: shmem_double_##op##_reduce,                                 \
           long double: shmem_longdouble_##op##_reduce, char: shmem_char_##op##_reduce,                              \
           signed char: shmem_schar_##op##_reduce, short: shmem_short_##op##_reduce, int: shmem_int_##op##_reduce,    \
           long: shmem_long_##op##_reduce, long long: shmem_longlong_##op##_reduce,                                   \
           unsigned char: shmem_uchar_##op##_reduce, unsigned short: shmem_ushort_##op##_reduce,                      \
           unsigned int: shmem_uint_##op##_reduce, unsigned long: shmem_ulong_##op##_reduce,                          \
           unsigned long long: shmem_ulonglong_##op##_reduce)
#define shmem_and_reduce(team, dest, source, nreduce) SHOAL_GENERIC_BITWISE(*(dest), and)(team, dest, source, nreduce)
#define shmem_or_reduce(team, dest, source, nreduce) SHOAL_GENERIC_BITWISE(*(dest), or)(team, dest, source, nreduce)
#define shmem_xor_reduce(team, dest, source, nreduce) SHOAL_GENERIC_BITWISE(*(dest), xor)(team, dest, source, nreduce)
#define shmem_max_reduce(team, dest, source, nreduce) SHOAL_GENERIC_MINMAX(*(dest), max)(team, dest, source, nreduce)
#define shmem_min_reduce(team, dest, source, nreduce) SHOAL_GENERIC_MINMAX(*(dest), min)(team, dest, source, nreduce)
#define shmem_sum_reduce(team, dest, source, nreduce) SHOAL_GENERIC_ARITH(*(dest), sum)(team, dest, source, nreduce)
#define shmem_prod_reduce(team, dest, source, nreduce) SHOAL_GENERIC_ARITH(*(dest), prod)(team, dest, source, nreduce)
#endif

#endif
