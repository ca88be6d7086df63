/* shoal/shmem_deprecated.h - part of <shmem.h>; include <shmem.h> instead.
 *
 * Names the OpenSHMEM 1.5 specification lists as deprecated (Annex "OpenSHMEM Specification and Deprecated API") and
 * still requires. New code should use the replacements named on each line. Define SHOAL_WARN_DEPRECATED before
 * including <shmem.h> to get a compiler warning at every use.
 */
#ifndef SHOAL_SHMEM_DEPRECATED_H
#define SHOAL_SHMEM_DEPRECATED_H
#ifdef __cplusplus
extern "C" {
#endif

#ifdef SHOAL_WARN_DEPRECATED
#define SHOAL_DEPRECATED __attribute__((deprecated))
#else
#define SHOAL_DEPRECATED
#endif

/** Deprecated 1.2: shmem_init (npes is ignored). */
SHOAL_DEPRECATED void start_pes(int npes);
/** Deprecated 1.2: shmem_my_pe, shmem_n_pes. */
SHOAL_DEPRECATED int _my_pe(void);
SHOAL_DEPRECATED int _num_pes(void);
/** Deprecated 1.2: shmem_malloc, shmem_free, shmem_realloc, shmem_align (same semantics, collective). */
SHOAL_DEPRECATED void *shmalloc(size_t size);
SHOAL_DEPRECATED void shfree(void *ptr);
SHOAL_DEPRECATED void *shrealloc(void *ptr, size_t size);
SHOAL_DEPRECATED void *shmemalign(size_t alignment, size_t size);

/** Deprecated 1.3, no replacement: cache management, no-ops on cache-coherent systems. */
SHOAL_DEPRECATED void shmem_clear_cache_inv(void);
SHOAL_DEPRECATED void shmem_set_cache_inv(void);
SHOAL_DEPRECATED void shmem_clear_cache_line_inv(void *dest);
SHOAL_DEPRECATED void shmem_set_cache_line_inv(void *dest);
SHOAL_DEPRECATED void shmem_udcflush(void);
SHOAL_DEPRECATED void shmem_udcflush_line(void *dest);

/** Deprecated 1.4: shmem_wait_until(ivar, SHMEM_CMP_NE, cmp_value). Waits until *ivar != cmp_value. */
SHOAL_DEPRECATED void shmem_wait(long *ivar, long cmp_value);
#define SHOAL_DECL_WAIT_DEPR(T, N) SHOAL_DEPRECATED void shmem_##N##_wait(T *ivar, T cmp_value);
SHOAL_P2P_TYPES(SHOAL_DECL_WAIT_DEPR)
/** Deprecated 1.4: the long-typed C function shmem_wait_until; use shmem_long_wait_until (or C11 shmem_wait_until).
 *  The parentheses keep the C11 type-generic macro of the same name from expanding here. */
SHOAL_DEPRECATED void(shmem_wait_until)(long *ivar, int cmp, long cmp_value);

/** Deprecated 1.4: shmem_TYPENAME_{fetch,set,swap} (int, long, long long, float, double) and
 *  shmem_TYPENAME_{cswap,finc,inc,fadd,add} (int, long, long long) -> shmem_TYPENAME_atomic_{fetch, set, swap,
 *  compare_swap, fetch_inc, inc, fetch_add, add}: identical behavior. */
#define SHOAL_AMO_DEPR_INT_TYPES(X) X(int, int) X(long, long) X(long long, longlong)
#define SHOAL_AMO_DEPR_EXT_TYPES(X) SHOAL_AMO_DEPR_INT_TYPES(X) X(float, float) X(double, double)
#define SHOAL_DECL_AMO_DEPR_EXT(T, N)                                                                                  \
  SHOAL_DEPRECATED T shmem_##N##_fetch(const T *source, int pe);                                                       \
  SHOAL_DEPRECATED void shmem_##N##_set(T *dest, T value, int pe);                                                     \
  SHOAL_DEPRECATED T shmem_##N##_swap(T *dest, T value, int pe);
#define SHOAL_DECL_AMO_DEPR_INT(T, N)                                                                                  \
  SHOAL_DEPRECATED T shmem_##N##_cswap(T *dest, T cond, T value, int pe);                                              \
  SHOAL_DEPRECATED T shmem_##N##_finc(T *dest, int pe);                                                                \
  SHOAL_DEPRECATED void shmem_##N##_inc(T *dest, int pe);                                                              \
  SHOAL_DEPRECATED T shmem_##N##_fadd(T *dest, T value, int pe);                                                       \
  SHOAL_DEPRECATED void shmem_##N##_add(T *dest, T value, int pe);
SHOAL_AMO_DEPR_EXT_TYPES(SHOAL_DECL_AMO_DEPR_EXT)
SHOAL_AMO_DEPR_INT_TYPES(SHOAL_DECL_AMO_DEPR_INT)

#ifdef __cplusplus
}
#endif

/* Deprecated 1.4, C11 type-generic: shmem_fetch, shmem_set, shmem_swap (extended AMO types), shmem_cswap, shmem_finc,
 * shmem_inc, shmem_fadd, shmem_add (standard AMO types) -> the shmem_atomic_* generic forms. */
#if !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define shmem_fetch(s, pe) SHOAL_GENERIC_AMO_EXT(*(s), shmem_, _atomic_fetch)(s, pe)
#define shmem_set(d, v, pe) SHOAL_GENERIC_AMO_EXT(*(d), shmem_, _atomic_set)(d, v, pe)
#define shmem_swap(d, v, pe) SHOAL_GENERIC_AMO_EXT(*(d), shmem_, _atomic_swap)(d, v, pe)
#define shmem_cswap(d, k, v, pe) SHOAL_GENERIC_AMO_STD(*(d), shmem_, _atomic_compare_swap)(d, k, v, pe)
#define shmem_finc(d, pe) SHOAL_GENERIC_AMO_STD(*(d), shmem_, _atomic_fetch_inc)(d, pe)
#define shmem_inc(d, pe) SHOAL_GENERIC_AMO_STD(*(d), shmem_, _atomic_inc)(d, pe)
#define shmem_fadd(d, v, pe) SHOAL_GENERIC_AMO_STD(*(d), shmem_, _atomic_fetch_add)(d, v, pe)
#define shmem_add(d, v, pe) SHOAL_GENERIC_AMO_STD(*(d), shmem_, _atomic_add)(d, v, pe)
#endif

#endif
