/* shoal/shmem_cxx.h - part of <shmem.h> when compiled as C++; include <shmem.h> instead.
 *
 * The C11 type-generic names (shmem_put(dest, source, nelems, pe), shmem_atomic_fetch_add(ctx, dest, value, pe), ...)
 * as C++ overloads, as Sandia OpenSHMEM provides them: one inline function per type of the routine's table, calling
 * the typed C routine. The types are those of the C11 _Generic selections of this header set (the standard C types;
 * the stdint, size_t and ptrdiff_t types are aliases of them), so a C++ program accepts and rejects the same calls as
 * a C11 one: a type outside a routine's table (shmem_atomic_add on a double) matches no overload and does not
 * compile. Behaviour, units and errors are those of the typed routine. Like the C11 forms, these are not routines of
 * the library: a profiling tool sees the typed name they call (spec 1.5 annex, C11 type-generic interfaces).
 */
#ifndef SHOAL_SHMEM_CXX_H
#define SHOAL_SHMEM_CXX_H
#ifdef __cplusplus

/* The association lists of the C11 selections (SHOAL_GENERIC_STD, _AMO_STD, _AMO_EXT, _AMO_BIT, _P2P and the
 * reductions' BITWISE, MINMAX, ARITH), as X(TYPE, TYPENAME) lists. */
#define SHOAL_CXX_STD_TYPES(X)                                                                                         \
  X(float, float) X(double, double) X(long double, longdouble) X(char, char) X(signed char, schar) X(short, short)     \
  X(int, int) X(long, long) X(long long, longlong) X(unsigned char, uchar) X(unsigned short, ushort)                   \
  X(unsigned int, uint) X(unsigned long, ulong) X(unsigned long long, ulonglong)
#define SHOAL_CXX_AMO_STD_TYPES(X)                                                                                     \
  X(int, int) X(long, long) X(long long, longlong) X(unsigned int, uint) X(unsigned long, ulong)                       \
  X(unsigned long long, ulonglong)
#define SHOAL_CXX_AMO_EXT_TYPES(X) SHOAL_CXX_AMO_STD_TYPES(X) X(float, float) X(double, double)
#define SHOAL_CXX_AMO_BIT_TYPES(X)                                                                                     \
  X(unsigned int, uint) X(unsigned long, ulong) X(unsigned long long, ulonglong) X(int32_t, int32) X(int64_t, int64)
/* shmem_wait_until on long is the deprecated C routine of that name (shoal/shmem_deprecated.h), same behaviour. */
#define SHOAL_CXX_P2P_TYPES_NOLONG(X)                                                                                  \
  X(short, short) X(int, int) X(long long, longlong) X(unsigned short, ushort) X(unsigned int, uint)                   \
  X(unsigned long, ulong) X(unsigned long long, ulonglong)
#define SHOAL_CXX_P2P_TYPES(X) SHOAL_CXX_P2P_TYPES_NOLONG(X) X(long, long)
#define SHOAL_CXX_RED_BITWISE_TYPES(X)                                                                                 \
  X(unsigned char, uchar) X(unsigned short, ushort) X(unsigned int, uint) X(unsigned long, ulong)                      \
  X(unsigned long long, ulonglong) X(signed char, int8) X(short, int16) X(int, int32) X(long, int64)
#define SHOAL_CXX_RED_MINMAX_TYPES(X) SHOAL_CXX_STD_TYPES(X)
#define SHOAL_CXX_RED_ARITH_TYPES(X)                                                                                   \
  SHOAL_CXX_STD_TYPES(X) X(double _Complex, complexd) X(float _Complex, complexf)

/* RMA (spec 9.5), put-with-signal (9.7), collectives (9.9): the standard RMA types. */
#define SHOAL_CXX_RMA(T, N)                                                                                            \
  inline void shmem_put(T *d, const T *s, size_t n, int pe) { shmem_##N##_put(d, s, n, pe); }                          \
  inline void shmem_put(shmem_ctx_t c, T *d, const T *s, size_t n, int pe) { shmem_ctx_##N##_put(c, d, s, n, pe); }    \
  inline void shmem_put_nbi(T *d, const T *s, size_t n, int pe) { shmem_##N##_put_nbi(d, s, n, pe); }                  \
  inline void shmem_put_nbi(shmem_ctx_t c, T *d, const T *s, size_t n, int pe) {                                       \
    shmem_ctx_##N##_put_nbi(c, d, s, n, pe);                                                                           \
  }                                                                                                                    \
  inline void shmem_get(T *d, const T *s, size_t n, int pe) { shmem_##N##_get(d, s, n, pe); }                          \
  inline void shmem_get(shmem_ctx_t c, T *d, const T *s, size_t n, int pe) { shmem_ctx_##N##_get(c, d, s, n, pe); }    \
  inline void shmem_get_nbi(T *d, const T *s, size_t n, int pe) { shmem_##N##_get_nbi(d, s, n, pe); }                  \
  inline void shmem_get_nbi(shmem_ctx_t c, T *d, const T *s, size_t n, int pe) {                                       \
    shmem_ctx_##N##_get_nbi(c, d, s, n, pe);                                                                           \
  }                                                                                                                    \
  inline void shmem_p(T *d, T v, int pe) { shmem_##N##_p(d, v, pe); }                                                  \
  inline void shmem_p(shmem_ctx_t c, T *d, T v, int pe) { shmem_ctx_##N##_p(c, d, v, pe); }                            \
  inline T shmem_g(const T *s, int pe) { return shmem_##N##_g(s, pe); }                                                \
  inline T shmem_g(shmem_ctx_t c, const T *s, int pe) { return shmem_ctx_##N##_g(c, s, pe); }                          \
  inline void shmem_iput(T *d, const T *s, ptrdiff_t dst, ptrdiff_t sst, size_t n, int pe) {                           \
    shmem_##N##_iput(d, s, dst, sst, n, pe);                                                                           \
  }                                                                                                                    \
  inline void shmem_iput(shmem_ctx_t c, T *d, const T *s, ptrdiff_t dst, ptrdiff_t sst, size_t n, int pe) {            \
    shmem_ctx_##N##_iput(c, d, s, dst, sst, n, pe);                                                                    \
  }                                                                                                                    \
  inline void shmem_iget(T *d, const T *s, ptrdiff_t dst, ptrdiff_t sst, size_t n, int pe) {                           \
    shmem_##N##_iget(d, s, dst, sst, n, pe);                                                                           \
  }                                                                                                                    \
  inline void shmem_iget(shmem_ctx_t c, T *d, const T *s, ptrdiff_t dst, ptrdiff_t sst, size_t n, int pe) {            \
    shmem_ctx_##N##_iget(c, d, s, dst, sst, n, pe);                                                                    \
  }                                                                                                                    \
  inline void shmem_put_signal(T *d, const T *s, size_t n, uint64_t *sa, uint64_t sv, int op, int pe) {                \
    shmem_##N##_put_signal(d, s, n, sa, sv, op, pe);                                                                   \
  }                                                                                                                    \
  inline void shmem_put_signal(shmem_ctx_t c, T *d, const T *s, size_t n, uint64_t *sa, uint64_t sv, int op, int pe) { \
    shmem_ctx_##N##_put_signal(c, d, s, n, sa, sv, op, pe);                                                            \
  }                                                                                                                    \
  inline void shmem_put_signal_nbi(T *d, const T *s, size_t n, uint64_t *sa, uint64_t sv, int op, int pe) {            \
    shmem_##N##_put_signal_nbi(d, s, n, sa, sv, op, pe);                                                               \
  }                                                                                                                    \
  inline void shmem_put_signal_nbi(shmem_ctx_t c, T *d, const T *s, size_t n, uint64_t *sa, uint64_t sv, int op,       \
                                   int pe) {                                                                           \
    shmem_ctx_##N##_put_signal_nbi(c, d, s, n, sa, sv, op, pe);                                                        \
  }                                                                                                                    \
  inline int shmem_broadcast(shmem_team_t t, T *d, const T *s, size_t n, int root) {                                   \
    return shmem_##N##_broadcast(t, d, s, n, root);                                                                    \
  }                                                                                                                    \
  inline int shmem_collect(shmem_team_t t, T *d, const T *s, size_t n) { return shmem_##N##_collect(t, d, s, n); }     \
  inline int shmem_fcollect(shmem_team_t t, T *d, const T *s, size_t n) { return shmem_##N##_fcollect(t, d, s, n); }   \
  inline int shmem_alltoall(shmem_team_t t, T *d, const T *s, size_t n) { return shmem_##N##_alltoall(t, d, s, n); }   \
  inline int shmem_alltoalls(shmem_team_t t, T *d, const T *s, ptrdiff_t dst, ptrdiff_t sst, size_t n) {               \
    return shmem_##N##_alltoalls(t, d, s, dst, sst, n);                                                                \
  }
SHOAL_CXX_STD_TYPES(SHOAL_CXX_RMA)

/* AMOs (spec 9.8): a default and a ctx overload of each. */
#define SHOAL_CXX_AMO(R, OP, N, PARAMS, ARGS)                                                                          \
  inline R shmem_atomic_##OP PARAMS { return shmem_##N##_atomic_##OP ARGS; }                                           \
  inline R shmem_atomic_##OP(shmem_ctx_t c, SHOAL_CXX_UNPAREN PARAMS) {                                                \
    return shmem_ctx_##N##_atomic_##OP(c, SHOAL_CXX_UNPAREN ARGS);                                                     \
  }
#define SHOAL_CXX_UNPAREN(...) __VA_ARGS__
#define SHOAL_CXX_AMO_EXT(T, N)                                                                                        \
  SHOAL_CXX_AMO(T, fetch, N, (const T *s, int pe), (s, pe))                                                            \
  SHOAL_CXX_AMO(void, set, N, (T *d, T v, int pe), (d, v, pe))                                                         \
  SHOAL_CXX_AMO(T, swap, N, (T *d, T v, int pe), (d, v, pe))                                                           \
  SHOAL_CXX_AMO(void, fetch_nbi, N, (T *f, const T *s, int pe), (f, s, pe))                                            \
  SHOAL_CXX_AMO(void, swap_nbi, N, (T *f, T *d, T v, int pe), (f, d, v, pe))
SHOAL_CXX_AMO_EXT_TYPES(SHOAL_CXX_AMO_EXT)
#define SHOAL_CXX_AMO_STD(T, N)                                                                                        \
  SHOAL_CXX_AMO(T, compare_swap, N, (T *d, T k, T v, int pe), (d, k, v, pe))                                           \
  SHOAL_CXX_AMO(T, fetch_inc, N, (T *d, int pe), (d, pe))                                                              \
  SHOAL_CXX_AMO(void, inc, N, (T *d, int pe), (d, pe))                                                                 \
  SHOAL_CXX_AMO(T, fetch_add, N, (T *d, T v, int pe), (d, v, pe))                                                      \
  SHOAL_CXX_AMO(void, add, N, (T *d, T v, int pe), (d, v, pe))                                                         \
  SHOAL_CXX_AMO(void, compare_swap_nbi, N, (T *f, T *d, T k, T v, int pe), (f, d, k, v, pe))                           \
  SHOAL_CXX_AMO(void, fetch_inc_nbi, N, (T *f, T *d, int pe), (f, d, pe))                                              \
  SHOAL_CXX_AMO(void, fetch_add_nbi, N, (T *f, T *d, T v, int pe), (f, d, v, pe))
SHOAL_CXX_AMO_STD_TYPES(SHOAL_CXX_AMO_STD)
#define SHOAL_CXX_AMO_BIT1(T, N, OP)                                                                                   \
  SHOAL_CXX_AMO(T, fetch_##OP, N, (T *d, T v, int pe), (d, v, pe))                                                     \
  SHOAL_CXX_AMO(void, OP, N, (T *d, T v, int pe), (d, v, pe))                                                          \
  SHOAL_CXX_AMO(void, fetch_##OP##_nbi, N, (T *f, T *d, T v, int pe), (f, d, v, pe))
#define SHOAL_CXX_AMO_BIT(T, N) SHOAL_CXX_AMO_BIT1(T, N, and) SHOAL_CXX_AMO_BIT1(T, N, or) SHOAL_CXX_AMO_BIT1(T, N, xor)
SHOAL_CXX_AMO_BIT_TYPES(SHOAL_CXX_AMO_BIT)

/* Point-to-point synchronization (spec 9.10). */
#define SHOAL_CXX_WAIT_UNTIL(T, N)                                                                                     \
  inline void shmem_wait_until(T *iv, int cmp, T v) { shmem_##N##_wait_until(iv, cmp, v); }
SHOAL_CXX_P2P_TYPES_NOLONG(SHOAL_CXX_WAIT_UNTIL)
#define SHOAL_CXX_P2P(T, N)                                                                                            \
  inline void shmem_wait_until_all(T *iv, size_t n, const int *st, int cmp, T v) {                                     \
    shmem_##N##_wait_until_all(iv, n, st, cmp, v);                                                                     \
  }                                                                                                                    \
  inline size_t shmem_wait_until_any(T *iv, size_t n, const int *st, int cmp, T v) {                                   \
    return shmem_##N##_wait_until_any(iv, n, st, cmp, v);                                                              \
  }                                                                                                                    \
  inline size_t shmem_wait_until_some(T *iv, size_t n, size_t *idx, const int *st, int cmp, T v) {                     \
    return shmem_##N##_wait_until_some(iv, n, idx, st, cmp, v);                                                        \
  }                                                                                                                    \
  inline void shmem_wait_until_all_vector(T *iv, size_t n, const int *st, int cmp, const T *vs) {                      \
    shmem_##N##_wait_until_all_vector(iv, n, st, cmp, vs);                                                             \
  }                                                                                                                    \
  inline size_t shmem_wait_until_any_vector(T *iv, size_t n, const int *st, int cmp, const T *vs) {                    \
    return shmem_##N##_wait_until_any_vector(iv, n, st, cmp, vs);                                                      \
  }                                                                                                                    \
  inline size_t shmem_wait_until_some_vector(T *iv, size_t n, size_t *idx, const int *st, int cmp, const T *vs) {      \
    return shmem_##N##_wait_until_some_vector(iv, n, idx, st, cmp, vs);                                                \
  }                                                                                                                    \
  inline int shmem_test(T *iv, int cmp, T v) { return shmem_##N##_test(iv, cmp, v); }                                 \
  inline int shmem_test_all(T *iv, size_t n, const int *st, int cmp, T v) {                                           \
    return shmem_##N##_test_all(iv, n, st, cmp, v);                                                                    \
  }                                                                                                                    \
  inline size_t shmem_test_any(T *iv, size_t n, const int *st, int cmp, T v) {                                         \
    return shmem_##N##_test_any(iv, n, st, cmp, v);                                                                    \
  }                                                                                                                    \
  inline size_t shmem_test_some(T *iv, size_t n, size_t *idx, const int *st, int cmp, T v) {                           \
    return shmem_##N##_test_some(iv, n, idx, st, cmp, v);                                                              \
  }                                                                                                                    \
  inline int shmem_test_all_vector(T *iv, size_t n, const int *st, int cmp, const T *vs) {                             \
    return shmem_##N##_test_all_vector(iv, n, st, cmp, vs);                                                            \
  }                                                                                                                    \
  inline size_t shmem_test_any_vector(T *iv, size_t n, const int *st, int cmp, const T *vs) {                          \
    return shmem_##N##_test_any_vector(iv, n, st, cmp, vs);                                                            \
  }                                                                                                                    \
  inline size_t shmem_test_some_vector(T *iv, size_t n, size_t *idx, const int *st, int cmp, const T *vs) {            \
    return shmem_##N##_test_some_vector(iv, n, idx, st, cmp, vs);                                                      \
  }
SHOAL_CXX_P2P_TYPES(SHOAL_CXX_P2P)

/* Team reductions (spec 9.9). */
#define SHOAL_CXX_REDUCE(T, N, OP)                                                                                     \
  inline int shmem_##OP##_reduce(shmem_team_t t, T *d, const T *s, size_t n) {                                         \
    return shmem_##N##_##OP##_reduce(t, d, s, n);                                                                      \
  }
#define SHOAL_CXX_RED_AND(T, N) SHOAL_CXX_REDUCE(T, N, and)
#define SHOAL_CXX_RED_OR(T, N) SHOAL_CXX_REDUCE(T, N, or)
#define SHOAL_CXX_RED_XOR(T, N) SHOAL_CXX_REDUCE(T, N, xor)
#define SHOAL_CXX_RED_MAX(T, N) SHOAL_CXX_REDUCE(T, N, max)
#define SHOAL_CXX_RED_MIN(T, N) SHOAL_CXX_REDUCE(T, N, min)
#define SHOAL_CXX_RED_SUM(T, N) SHOAL_CXX_REDUCE(T, N, sum)
#define SHOAL_CXX_RED_PROD(T, N) SHOAL_CXX_REDUCE(T, N, prod)
SHOAL_CXX_RED_BITWISE_TYPES(SHOAL_CXX_RED_AND)
SHOAL_CXX_RED_BITWISE_TYPES(SHOAL_CXX_RED_OR)
SHOAL_CXX_RED_BITWISE_TYPES(SHOAL_CXX_RED_XOR)
SHOAL_CXX_RED_MINMAX_TYPES(SHOAL_CXX_RED_MAX)
SHOAL_CXX_RED_MINMAX_TYPES(SHOAL_CXX_RED_MIN)
SHOAL_CXX_RED_ARITH_TYPES(SHOAL_CXX_RED_SUM)
SHOAL_CXX_RED_ARITH_TYPES(SHOAL_CXX_RED_PROD)

/* Deprecated 1.4 generic names (shoal/shmem_deprecated.h): default forms only, as in C11. */
#define SHOAL_CXX_DEPR_EXT(T, N)                                                                                       \
  inline T shmem_fetch(const T *s, int pe) { return shmem_##N##_atomic_fetch(s, pe); }                                 \
  inline void shmem_set(T *d, T v, int pe) { shmem_##N##_atomic_set(d, v, pe); }                                      \
  inline T shmem_swap(T *d, T v, int pe) { return shmem_##N##_atomic_swap(d, v, pe); }
SHOAL_CXX_AMO_EXT_TYPES(SHOAL_CXX_DEPR_EXT)
#define SHOAL_CXX_DEPR_STD(T, N)                                                                                       \
  inline T shmem_cswap(T *d, T k, T v, int pe) { return shmem_##N##_atomic_compare_swap(d, k, v, pe); }                \
  inline T shmem_finc(T *d, int pe) { return shmem_##N##_atomic_fetch_inc(d, pe); }                                    \
  inline void shmem_inc(T *d, int pe) { shmem_##N##_atomic_inc(d, pe); }                                              \
  inline T shmem_fadd(T *d, T v, int pe) { return shmem_##N##_atomic_fetch_add(d, v, pe); }                            \
  inline void shmem_add(T *d, T v, int pe) { shmem_##N##_atomic_add(d, v, pe); }
SHOAL_CXX_AMO_STD_TYPES(SHOAL_CXX_DEPR_STD)

#endif /* __cplusplus */
#endif
