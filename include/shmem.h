/*
 * shmem.h - OpenSHMEM 1.5 API of Shoal.
 *
 * Only names from the OpenSHMEM 1.5 specification live here (plus the deprecated names that the specification still
 * lists). Shoal extensions are in shmemx.h. Units: "nelems" counts elements of the routine's type, "nbytes"/"size"
 * counts bytes. Unless a routine says otherwise, calling it before shmem_init or after shmem_finalize, with a PE
 * outside [0, shmem_n_pes()), or with an address that is not symmetric stops the job with a one-line error
 * "shoal: PE <me>: <routine>: <argument>: <reason>".
 */
#ifndef SHMEM_H
#define SHMEM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- library constants (spec 9.1) ---- */
#define SHMEM_MAJOR_VERSION 1
#define SHMEM_MINOR_VERSION 5
#define SHMEM_MAX_NAME_LEN 256
#define SHMEM_VENDOR_STRING "Shoal"

#define SHMEM_THREAD_SINGLE 0
#define SHMEM_THREAD_FUNNELED 1
#define SHMEM_THREAD_SERIALIZED 2
#define SHMEM_THREAD_MULTIPLE 3

#define SHMEM_CMP_EQ 0
#define SHMEM_CMP_NE 1
#define SHMEM_CMP_GT 2
#define SHMEM_CMP_LE 3
#define SHMEM_CMP_LT 4
#define SHMEM_CMP_GE 5

#define SHMEM_SIGNAL_SET 0
#define SHMEM_SIGNAL_ADD 1

#define SHMEM_CTX_SERIALIZED (1L << 0)
#define SHMEM_CTX_PRIVATE (1L << 1)
#define SHMEM_CTX_NOSTORE (1L << 2)

#define SHMEM_MALLOC_ATOMICS_REMOTE (1L << 0)
#define SHMEM_MALLOC_SIGNAL_REMOTE (1L << 1)

#define SHMEM_TEAM_NUM_CONTEXTS (1L << 0)

/* Active-set pSync/pWrk sizes, in longs (spec 9.1). One size fits every collective: the buffer is reused by all. */
#define SHMEM_SYNC_VALUE 0L
#define SHMEM_SYNC_SIZE 256
#define SHMEM_BARRIER_SYNC_SIZE SHMEM_SYNC_SIZE
#define SHMEM_BCAST_SYNC_SIZE SHMEM_SYNC_SIZE
#define SHMEM_REDUCE_SYNC_SIZE SHMEM_SYNC_SIZE
#define SHMEM_COLLECT_SYNC_SIZE SHMEM_SYNC_SIZE
#define SHMEM_ALLTOALL_SYNC_SIZE SHMEM_SYNC_SIZE
#define SHMEM_ALLTOALLS_SYNC_SIZE SHMEM_SYNC_SIZE
#define SHMEM_REDUCE_MIN_WRKDATA_SIZE 16

/* Deprecated spellings the 1.5 specification still lists (Annex). */
#define _SHMEM_MAJOR_VERSION SHMEM_MAJOR_VERSION
#define _SHMEM_MINOR_VERSION SHMEM_MINOR_VERSION
#define _SHMEM_MAX_NAME_LEN SHMEM_MAX_NAME_LEN
#define _SHMEM_VENDOR_STRING SHMEM_VENDOR_STRING
#define _SHMEM_SYNC_VALUE SHMEM_SYNC_VALUE
#define _SHMEM_BARRIER_SYNC_SIZE SHMEM_BARRIER_SYNC_SIZE
#define _SHMEM_BCAST_SYNC_SIZE SHMEM_BCAST_SYNC_SIZE
#define _SHMEM_REDUCE_SYNC_SIZE SHMEM_REDUCE_SYNC_SIZE
#define _SHMEM_COLLECT_SYNC_SIZE SHMEM_COLLECT_SYNC_SIZE
#define _SHMEM_ALLTOALL_SYNC_SIZE SHMEM_ALLTOALL_SYNC_SIZE
#define _SHMEM_ALLTOALLS_SYNC_SIZE SHMEM_ALLTOALLS_SYNC_SIZE
#define _SHMEM_REDUCE_MIN_WRKDATA_SIZE SHMEM_REDUCE_MIN_WRKDATA_SIZE
#define _SHMEM_CMP_EQ SHMEM_CMP_EQ
#define _SHMEM_CMP_NE SHMEM_CMP_NE
#define _SHMEM_CMP_GT SHMEM_CMP_GT
#define _SHMEM_CMP_LE SHMEM_CMP_LE
#define _SHMEM_CMP_LT SHMEM_CMP_LT
#define _SHMEM_CMP_GE SHMEM_CMP_GE

/* ---- types (spec 9.2) ---- */
typedef struct shoal_ctx *shmem_ctx_t;   /* communication context handle */
typedef struct shoal_team *shmem_team_t; /* team handle */
typedef struct {
  int num_contexts; /* contexts the team expects to create (a hint) */
} shmem_team_config_t;

#define SHMEM_CTX_INVALID ((shmem_ctx_t)0)
#define SHMEM_TEAM_INVALID ((shmem_team_t)0)
/* Predefined handles: valid from shmem_init to shmem_finalize. */
extern shmem_ctx_t SHMEM_CTX_DEFAULT;
extern shmem_team_t SHMEM_TEAM_WORLD;
extern shmem_team_t SHMEM_TEAM_SHARED;

/* ---- library setup and query (spec 9.2) ---- */
/** Start the PE: join the job launched by oshrun (or a 1-PE job without it), map every local peer's symmetric heap.
 *  Collective over all PEs. Calling it again after a successful init is a no-op (spec 9.2.1). */
void shmem_init(void);
/** As shmem_init; requested is one of SHMEM_THREAD_*; *provided gets the level granted (always the requested one:
 *  every level up to SHMEM_THREAD_MULTIPLE is supported). Returns 0 on success, non-zero otherwise (spec 9.2.2). */
int shmem_init_thread(int requested, int *provided);
/** *provided = the thread level granted at init (spec 9.2.3). */
void shmem_query_thread(int *provided);
/** Collective: barrier, then release every resource. Later calls are no-ops (spec 9.2.5). */
void shmem_finalize(void);
/** Stop every PE of the job; the launcher exits with status (spec 9.2.6). Does not return. */
void shmem_global_exit(int status);
/** This PE's number in [0, shmem_n_pes()) (spec 9.2.7). */
int shmem_my_pe(void);
/** Number of PEs in the job, >= 1 (spec 9.2.8). */
int shmem_n_pes(void);
/** 1 if pe is in range and reachable by RMA/AMO from this PE, else 0 (spec 9.2.9). Never fatal. */
int shmem_pe_accessible(int pe);
/** 1 if addr is a symmetric address reachable on pe, else 0 (spec 9.2.10). Never fatal. */
int shmem_addr_accessible(const void *addr, int pe);
/** Local load/store pointer to dest's instance on pe, or NULL if pe's memory is not mapped here (spec 9.2.11). */
void *shmem_ptr(const void *dest, int pe);
/** SHMEM_MAJOR_VERSION / SHMEM_MINOR_VERSION (spec 9.2.13). May be called before init. */
void shmem_info_get_version(int *major, int *minor);
/** Copies SHMEM_VENDOR_STRING (at most SHMEM_MAX_NAME_LEN bytes with the NUL) to name (spec 9.2.14). */
void shmem_info_get_name(char *name);

/* ---- profiling interface (spec 1.5 annex) ---- */
/** Control a profiling tool: level 0 disables profiling, 1 enables it at the default detail (the state after
 *  shmem_init), 2 also flushes the tool's buffers; other levels and further arguments mean what the tool defines.
 *  Without a tool it returns at once, whatever the level: Shoal has no profiler of its own. A tool wraps this
 *  name like any other (pshmem.h declares pshmem_pcontrol). May be called before shmem_init. */
void shmem_pcontrol(const int level, ...);

/* ---- memory management (spec 9.3) ----
 * A call that performs no action (size 0, count or size 0 for calloc, shmem_free(NULL), shmem_realloc(NULL, 0))
 * returns NULL at once without a barrier (spec 1.5 9.3.1), so one PE may make it alone. */
/** Collective: size bytes from the symmetric heap, same offset on every PE, aligned to 64 bytes; ends with a barrier.
 *  size 0 returns NULL; exhaustion returns NULL (SHMEM_DEBUG prints bytes asked, free, total) (spec 9.3.1). */
void *shmem_malloc(size_t size);
/** Collective: count*size zeroed bytes; NULL on 0 (no barrier), overflow or exhaustion (spec 9.3.3). */
void *shmem_calloc(size_t count, size_t size);
/** Collective: size bytes aligned to alignment (a power of two, at most 1 GiB); NULL otherwise; size 0: NULL, no
 *  barrier (spec 9.3.1). */
void *shmem_align(size_t alignment, size_t size);
/** Collective: resize ptr to size bytes, keeping the contents up to the smaller size; NULL ptr acts as malloc,
 *  size 0 as free (a barrier on entry; returns NULL). On failure returns NULL and ptr is untouched (spec 9.3.1). */
void *shmem_realloc(void *ptr, size_t size);
/** Collective: release ptr, starting with a barrier; NULL is a no-op without one (spec 9.3.1). */
void shmem_free(void *ptr);
/** As shmem_malloc (size 0: NULL, no barrier); hints is 0 or SHMEM_MALLOC_* bits (Shoal extensions: SHMEMX_MALLOC_*)
 *  (spec 9.3.2). */
void *shmem_malloc_with_hints(size_t size, long hints);

/* ---- RMA (spec 9.5) ----
 * Every standard RMA type (spec Table 5) gets put, get, p, g, iput, iget, put_nbi, get_nbi, in default and ctx forms.
 * nelems counts elements; strides (tst/sst/dst) count elements and must be >= 1 (spec 9.5.5). A transfer of 0 elements
 * is a no-op, valid with NULL pointers. Blocking put returns when source may be reused; nbi forms complete at
 * shmem_quiet. Transfers to PEs on this node are copies into the peer's mapping (complete on return). */
#define SHOAL_RMA_TYPES(X)                                                                                            \
  X(float, float) X(double, double) X(long double, longdouble) X(char, char) X(signed char, schar) X(short, short)   \
  X(int, int) X(long, long) X(long long, longlong) X(unsigned char, uchar) X(unsigned short, ushort)                  \
  X(unsigned int, uint) X(unsigned long, ulong) X(unsigned long long, ulonglong) X(int8_t, int8) X(int16_t, int16)   \
  X(int32_t, int32) X(int64_t, int64) X(uint8_t, uint8) X(uint16_t, uint16) X(uint32_t, uint32) X(uint64_t, uint64)  \
  X(size_t, size) X(ptrdiff_t, ptrdiff)

/* Sizes of the sized routines (put8 ... put128) and mem (bytes). */
#define SHOAL_RMA_SIZES(X) X(8) X(16) X(32) X(64) X(128)

#define SHOAL_DECL_RMA_TYPED(T, N)                                                                                    \
  void shmem_##N##_put(T *dest, const T *source, size_t nelems, int pe);                                              \
  void shmem_ctx_##N##_put(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems, int pe);                         \
  void shmem_##N##_put_nbi(T *dest, const T *source, size_t nelems, int pe);                                          \
  void shmem_ctx_##N##_put_nbi(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems, int pe);                     \
  void shmem_##N##_get(T *dest, const T *source, size_t nelems, int pe);                                              \
  void shmem_ctx_##N##_get(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems, int pe);                         \
  void shmem_##N##_get_nbi(T *dest, const T *source, size_t nelems, int pe);                                          \
  void shmem_ctx_##N##_get_nbi(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems, int pe);                     \
  void shmem_##N##_p(T *dest, T value, int pe);                                                                       \
  void shmem_ctx_##N##_p(shmem_ctx_t ctx, T *dest, T value, int pe);                                                  \
  T shmem_##N##_g(const T *source, int pe);                                                                           \
  T shmem_ctx_##N##_g(shmem_ctx_t ctx, const T *source, int pe);                                                      \
  void shmem_##N##_iput(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);               \
  void shmem_ctx_##N##_iput(shmem_ctx_t ctx, T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,   \
                            int pe);                                                                                  \
  void shmem_##N##_iget(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);               \
  void shmem_ctx_##N##_iget(shmem_ctx_t ctx, T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,   \
                            int pe);
SHOAL_RMA_TYPES(SHOAL_DECL_RMA_TYPED)

#define SHOAL_DECL_RMA_SIZED(S)                                                                                       \
  void shmem_put##S(void *dest, const void *source, size_t nelems, int pe);                                           \
  void shmem_ctx_put##S(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe);                      \
  void shmem_put##S##_nbi(void *dest, const void *source, size_t nelems, int pe);                                     \
  void shmem_ctx_put##S##_nbi(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe);                \
  void shmem_get##S(void *dest, const void *source, size_t nelems, int pe);                                           \
  void shmem_ctx_get##S(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe);                      \
  void shmem_get##S##_nbi(void *dest, const void *source, size_t nelems, int pe);                                     \
  void shmem_ctx_get##S##_nbi(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe);                \
  void shmem_iput##S(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);            \
  void shmem_ctx_iput##S(shmem_ctx_t ctx, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,               \
                         size_t nelems, int pe);                                                                      \
  void shmem_iget##S(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);            \
  void shmem_ctx_iget##S(shmem_ctx_t ctx, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,               \
                         size_t nelems, int pe);
SHOAL_RMA_SIZES(SHOAL_DECL_RMA_SIZED)

/** Byte forms: nelems counts bytes (spec 9.5). */
void shmem_putmem(void *dest, const void *source, size_t nelems, int pe);
void shmem_ctx_putmem(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe);
void shmem_putmem_nbi(void *dest, const void *source, size_t nelems, int pe);
void shmem_ctx_putmem_nbi(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe);
void shmem_getmem(void *dest, const void *source, size_t nelems, int pe);
void shmem_ctx_getmem(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe);
void shmem_getmem_nbi(void *dest, const void *source, size_t nelems, int pe);
void shmem_ctx_getmem_nbi(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe);

/* ---- memory ordering (spec 9.11) ---- */
/** Order puts/AMOs to each PE issued before it ahead of those issued after it (spec 9.11.1). */
void shmem_fence(void);
/** shmem_fence for the operations of ctx; on SHMEM_CTX_INVALID, no operation (spec 1.5 9.11.1). */
void shmem_ctx_fence(shmem_ctx_t ctx);
/** Complete every put, AMO and nbi operation issued so far by this PE (spec 9.11.2). */
void shmem_quiet(void);
/** shmem_quiet for the operations of ctx; on SHMEM_CTX_INVALID, no operation (spec 1.5 9.11.2). */
void shmem_ctx_quiet(shmem_ctx_t ctx);

/* ---- barrier over all PEs (spec 9.9) ---- */
/** Collective over all PEs: quiet, then wait until every PE arrives (spec 9.9.x shmem_barrier_all). */
void shmem_barrier_all(void);
/** Collective over all PEs: wait until every PE arrives; no completion of RMA implied (spec shmem_sync_all). */
void shmem_sync_all(void);

#ifdef __cplusplus
}
#endif

/* ---- C11 type-generic forms (spec 9.5 etc.): shmem_put(dest, src, n, pe) and shmem_put(ctx, dest, src, n, pe) ---- */
#if !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define SHOAL_ARG6(a, b, c, d, e, f, ...) f
#define SHOAL_ARG7(a, b, c, d, e, f, g, ...) g
#define SHOAL_ARG8(a, b, c, d, e, f, g, h, ...) h
#define SHOAL_ARG4(a, b, c, d, ...) d
#define SHOAL_ARG5(a, b, c, d, e, ...) e
/* One generic association list over the standard C types (the stdint types alias these). */
#define SHOAL_GENERIC_STD(x, pre, post)                                                                              \
  _Generic((x), float: pre##float##post, double: pre##double##post, long double: pre##longdouble##post,               \
           char: pre##char##post, signed char: pre##schar##post, short: pre##short##post, int: pre##int##post,         \
           long: pre##long##post, long long: pre##longlong##post, unsigned char: pre##uchar##post,                     \
           unsigned short: pre##ushort##post, unsigned int: pre##uint##post, unsigned long: pre##ulong##post,          \
           unsigned long long: pre##ulonglong##post)
#endif

/* The rest of the API, one header per family (all included: a program needs only <shmem.h>). */
#include <shoal/shmem_amo.h>
#include <shoal/shmem_p2p.h>
#include <shoal/shmem_teams.h>
#include <shoal/shmem_coll.h>
#include <shoal/shmem_deprecated.h>
/* C++: the generic names as overloads (the C11 _Generic forms below are C only). */
#include <shoal/shmem_cxx.h>

/* ---- shmem_sync by argument count (spec 1.5 9.9.4) ----
 * shmem_sync(team) is shmem_team_sync(team) (the C11 binding: returns 0); shmem_sync(PE_start, logPE_stride,
 * PE_size, pSync) is the deprecated active-set form. Both library symbols stay as they are: shmem_sync (the
 * active-set routine; its address, or (shmem_sync)(...), names it) and shmem_team_sync. Another argument count does
 * not compile (it names shoal_shmem_sync_takes_1_or_4_arguments). C++ gets an overload instead. */
#if !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 199901L
extern const char shoal_shmem_sync_takes_1_or_4_arguments[]; /* never defined: only a wrong call names it */
#define SHOAL_SYNC_PICK(a, b, c, d, name, ...) name
#define shmem_sync(...)                                                                                               \
  SHOAL_SYNC_PICK(__VA_ARGS__, shmem_sync, shoal_shmem_sync_takes_1_or_4_arguments,                                   \
                  shoal_shmem_sync_takes_1_or_4_arguments, shmem_team_sync, ~)(__VA_ARGS__)
#elif defined(__cplusplus)
static inline int shmem_sync(shmem_team_t team) { return shmem_team_sync(team); }
#endif

#if !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define shoal_put4(d, s, n, pe) SHOAL_GENERIC_STD(*(d), shmem_, _put)(d, s, n, pe)
#define shoal_put5(c, d, s, n, pe) SHOAL_GENERIC_STD(*(d), shmem_ctx_, _put)(c, d, s, n, pe)
#define shmem_put(...) SHOAL_ARG6(__VA_ARGS__, shoal_put5, shoal_put4, ~)(__VA_ARGS__)
#define shoal_put_nbi4(d, s, n, pe) SHOAL_GENERIC_STD(*(d), shmem_, _put_nbi)(d, s, n, pe)
#define shoal_put_nbi5(c, d, s, n, pe) SHOAL_GENERIC_STD(*(d), shmem_ctx_, _put_nbi)(c, d, s, n, pe)
#define shmem_put_nbi(...) SHOAL_ARG6(__VA_ARGS__, shoal_put_nbi5, shoal_put_nbi4, ~)(__VA_ARGS__)
#define shoal_get4(d, s, n, pe) SHOAL_GENERIC_STD(*(d), shmem_, _get)(d, s, n, pe)
#define shoal_get5(c, d, s, n, pe) SHOAL_GENERIC_STD(*(d), shmem_ctx_, _get)(c, d, s, n, pe)
#define shmem_get(...) SHOAL_ARG6(__VA_ARGS__, shoal_get5, shoal_get4, ~)(__VA_ARGS__)
#define shoal_get_nbi4(d, s, n, pe) SHOAL_GENERIC_STD(*(d), shmem_, _get_nbi)(d, s, n, pe)
#define shoal_get_nbi5(c, d, s, n, pe) SHOAL_GENERIC_STD(*(d), shmem_ctx_, _get_nbi)(c, d, s, n, pe)
#define shmem_get_nbi(...) SHOAL_ARG6(__VA_ARGS__, shoal_get_nbi5, shoal_get_nbi4, ~)(__VA_ARGS__)
#define shoal_p3(d, v, pe) SHOAL_GENERIC_STD(*(d), shmem_, _p)(d, v, pe)
#define shoal_p4(c, d, v, pe) SHOAL_GENERIC_STD(*(d), shmem_ctx_, _p)(c, d, v, pe)
#define shmem_p(...) SHOAL_ARG5(__VA_ARGS__, shoal_p4, shoal_p3, ~)(__VA_ARGS__)
#define shoal_g2(s, pe) SHOAL_GENERIC_STD(*(s), shmem_, _g)(s, pe)
#define shoal_g3(c, s, pe) SHOAL_GENERIC_STD(*(s), shmem_ctx_, _g)(c, s, pe)
#define shmem_g(...) SHOAL_ARG4(__VA_ARGS__, shoal_g3, shoal_g2, ~)(__VA_ARGS__)
#define shoal_iput6(d, s, dst, sst, n, pe) SHOAL_GENERIC_STD(*(d), shmem_, _iput)(d, s, dst, sst, n, pe)
#define shoal_iput7(c, d, s, dst, sst, n, pe) SHOAL_GENERIC_STD(*(d), shmem_ctx_, _iput)(c, d, s, dst, sst, n, pe)
#define shmem_iput(...) SHOAL_ARG8(__VA_ARGS__, shoal_iput7, shoal_iput6, ~)(__VA_ARGS__)
#define shoal_iget6(d, s, dst, sst, n, pe) SHOAL_GENERIC_STD(*(d), shmem_, _iget)(d, s, dst, sst, n, pe)
#define shoal_iget7(c, d, s, dst, sst, n, pe) SHOAL_GENERIC_STD(*(d), shmem_ctx_, _iget)(c, d, s, dst, sst, n, pe)
#define shmem_iget(...) SHOAL_ARG8(__VA_ARGS__, shoal_iget7, shoal_iget6, ~)(__VA_ARGS__)
#endif

#include <shoal/shmem_bindings.h> /* feature macros for language bindings (shmem4py) */

#endif /* SHMEM_H */
