/* shoal/shmem_amo.h - part of <shmem.h>; include <shmem.h> instead.
 *
 * Atomic memory operations (spec 9.8). Every routine exists in a default form and a ctx form (shmem_ctx_..., first
 * argument a live context). dest/source must be symmetric, naturally aligned objects of the routine's type in host
 * memory (heap or global/static data); pe in [0, shmem_n_pes()), or for a ctx form a PE number of the context's team
 * (shmem_team_create_ctx; shmem_ctx_create contexts are on SHMEM_TEAM_WORLD). On one node an AMO is a hardware
 * atomic on the target's memory, so AMOs from every PE (the target included) and from every thread are mutually
 * atomic. Blocking AMOs are complete on return; the _nbi forms also complete before returning (their result is in
 * *fetch at once, as it must be after shmem_quiet). Errors (not initialized, pe out of range, non-symmetric or
 * misaligned address, destroyed context) stop the job with a one-line message naming the routine and the argument.
 */
#ifndef SHOAL_SHMEM_AMO_H
#define SHOAL_SHMEM_AMO_H
#ifdef __cplusplus
extern "C" {
#endif

/* Standard AMO types (spec Table 6): compare_swap, fetch_inc, inc, fetch_add, add (and everything below). */
#define SHOAL_AMO_STD_TYPES(X)                                                                                         \
  X(int, int) X(long, long) X(long long, longlong) X(unsigned int, uint) X(unsigned long, ulong)                       \
  X(unsigned long long, ulonglong) X(int32_t, int32) X(int64_t, int64) X(uint32_t, uint32) X(uint64_t, uint64)         \
  X(size_t, size) X(ptrdiff_t, ptrdiff)
/* Extended AMO types (spec Table 7): the standard ones plus float and double, for fetch, set, swap. */
#define SHOAL_AMO_EXT_TYPES(X) SHOAL_AMO_STD_TYPES(X) X(float, float) X(double, double)
/* Bitwise AMO types (spec Table 8): fetch_and/or/xor, and/or/xor. */
#define SHOAL_AMO_BIT_TYPES(X)                                                                                         \
  X(unsigned int, uint) X(unsigned long, ulong) X(unsigned long long, ulonglong) X(int32_t, int32) X(int64_t, int64)   \
  X(uint32_t, uint32) X(uint64_t, uint64)

/* Declares shmem_<N>_atomic_<OP>(args) and shmem_ctx_<N>_atomic_<OP>(ctx, args). */
#define SHOAL_DECL_AMO2(R, N, OP, ...)                                                                                 \
  R shmem_##N##_atomic_##OP(__VA_ARGS__);                                                                              \
  R shmem_ctx_##N##_atomic_##OP(shmem_ctx_t ctx, __VA_ARGS__);

/** Extended types (spec 9.8.1-9.8.3 and the _nbi forms 9.8.13-9.8.15):
 *  fetch: returns source's value on pe. set: writes value to dest on pe. swap: writes value, returns the old value.
 *  fetch_nbi/swap_nbi: as fetch/swap, the old value stored to the local *fetch. */
#define SHOAL_DECL_AMO_EXT(T, N)                                                                                       \
  SHOAL_DECL_AMO2(T, N, fetch, const T *source, int pe)                                                                \
  SHOAL_DECL_AMO2(void, N, set, T *dest, T value, int pe)                                                              \
  SHOAL_DECL_AMO2(T, N, swap, T *dest, T value, int pe)                                                                \
  SHOAL_DECL_AMO2(void, N, fetch_nbi, T *fetch, const T *source, int pe)                                               \
  SHOAL_DECL_AMO2(void, N, swap_nbi, T *fetch, T *dest, T value, int pe)
SHOAL_AMO_EXT_TYPES(SHOAL_DECL_AMO_EXT)

/** Standard types (spec 9.8.4-9.8.8, _nbi 9.8.16-9.8.18): compare_swap writes value if dest == cond and returns the
 *  old value; fetch_inc/inc add 1; fetch_add/add add value (two's complement wrap-around for every integer type);
 *  the fetch forms return the old value, the _nbi forms store it to *fetch. */
#define SHOAL_DECL_AMO_STD(T, N)                                                                                       \
  SHOAL_DECL_AMO2(T, N, compare_swap, T *dest, T cond, T value, int pe)                                                \
  SHOAL_DECL_AMO2(T, N, fetch_inc, T *dest, int pe)                                                                    \
  SHOAL_DECL_AMO2(void, N, inc, T *dest, int pe)                                                                       \
  SHOAL_DECL_AMO2(T, N, fetch_add, T *dest, T value, int pe)                                                           \
  SHOAL_DECL_AMO2(void, N, add, T *dest, T value, int pe)                                                              \
  SHOAL_DECL_AMO2(void, N, compare_swap_nbi, T *fetch, T *dest, T cond, T value, int pe)                               \
  SHOAL_DECL_AMO2(void, N, fetch_inc_nbi, T *fetch, T *dest, int pe)                                                   \
  SHOAL_DECL_AMO2(void, N, fetch_add_nbi, T *fetch, T *dest, T value, int pe)
SHOAL_AMO_STD_TYPES(SHOAL_DECL_AMO_STD)

/** Bitwise types (spec 9.8.9-9.8.12, _nbi 9.8.19-9.8.21): dest = dest OP value; the fetch forms return the old value,
 *  the _nbi forms store it to *fetch. */
#define SHOAL_DECL_AMO_BIT(T, N)                                                                                       \
  SHOAL_DECL_AMO2(T, N, fetch_and, T *dest, T value, int pe)                                                           \
  SHOAL_DECL_AMO2(void, N, and, T *dest, T value, int pe)                                                              \
  SHOAL_DECL_AMO2(void, N, fetch_and_nbi, T *fetch, T *dest, T value, int pe)                                          \
  SHOAL_DECL_AMO2(T, N, fetch_or, T *dest, T value, int pe)                                                            \
  SHOAL_DECL_AMO2(void, N, or, T *dest, T value, int pe)                                                               \
  SHOAL_DECL_AMO2(void, N, fetch_or_nbi, T *fetch, T *dest, T value, int pe)                                           \
  SHOAL_DECL_AMO2(T, N, fetch_xor, T *dest, T value, int pe)                                                           \
  SHOAL_DECL_AMO2(void, N, xor, T *dest, T value, int pe)                                                              \
  SHOAL_DECL_AMO2(void, N, fetch_xor_nbi, T *fetch, T *dest, T value, int pe)
SHOAL_AMO_BIT_TYPES(SHOAL_DECL_AMO_BIT)

#ifdef __cplusplus
}
#endif

/* ---- C11 type-generic forms: shmem_atomic_OP(args) and shmem_atomic_OP(ctx, args). A type outside the routine's
 * table (e.g. shmem_atomic_add on a double) does not compile. ---- */
#if !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
/* The stdint and size_t/ptrdiff_t types alias these standard types. */
#define SHOAL_GENERIC_AMO_STD(x, pre, post)                                                                            \
  _Generic((x), int: pre##int##post, long: pre##long##post, long long: pre##longlong##post,                            \
           unsigned int: pre##uint##post, unsigned long: pre##ulong##post,                                             \
           unsigned long long: pre##ulonglong##post)
#define SHOAL_GENERIC_AMO_EXT(x, pre, post)                                                                            \
  _Generic((x), int: pre##int##post, long: pre##long##post, long long: pre##longlong##post,                            \
           unsigned int: pre##uint##post, unsigned long: pre##ulong##post,                                             \
           unsigned long long: pre##ulonglong##post, float: pre##float##post, double: pre##double##post)
/* Bitwise: int32_t/int64_t are the only signed ones (int and long on LP64 systems). */
#define SHOAL_GENERIC_AMO_BIT(x, pre, post)                                                                            \
  _Generic((x), unsigned int: pre##uint##post, unsigned long: pre##ulong##post,                                        \
           unsigned long long: pre##ulonglong##post, int32_t: pre##int32##post, int64_t: pre##int64##post)

#define shoal_afetch2(s, pe) SHOAL_GENERIC_AMO_EXT(*(s), shmem_, _atomic_fetch)(s, pe)
#define shoal_afetch3(c, s, pe) SHOAL_GENERIC_AMO_EXT(*(s), shmem_ctx_, _atomic_fetch)(c, s, pe)
#define shmem_atomic_fetch(...) SHOAL_ARG4(__VA_ARGS__, shoal_afetch3, shoal_afetch2, ~)(__VA_ARGS__)
#define shoal_aset3(d, v, pe) SHOAL_GENERIC_AMO_EXT(*(d), shmem_, _atomic_set)(d, v, pe)
#define shoal_aset4(c, d, v, pe) SHOAL_GENERIC_AMO_EXT(*(d), shmem_ctx_, _atomic_set)(c, d, v, pe)
#define shmem_atomic_set(...) SHOAL_ARG5(__VA_ARGS__, shoal_aset4, shoal_aset3, ~)(__VA_ARGS__)
#define shoal_aswap3(d, v, pe) SHOAL_GENERIC_AMO_EXT(*(d), shmem_, _atomic_swap)(d, v, pe)
#define shoal_aswap4(c, d, v, pe) SHOAL_GENERIC_AMO_EXT(*(d), shmem_ctx_, _atomic_swap)(c, d, v, pe)
#define shmem_atomic_swap(...) SHOAL_ARG5(__VA_ARGS__, shoal_aswap4, shoal_aswap3, ~)(__VA_ARGS__)
#define shoal_afetchnbi3(f, s, pe) SHOAL_GENERIC_AMO_EXT(*(s), shmem_, _atomic_fetch_nbi)(f, s, pe)
#define shoal_afetchnbi4(c, f, s, pe) SHOAL_GENERIC_AMO_EXT(*(s), shmem_ctx_, _atomic_fetch_nbi)(c, f, s, pe)
#define shmem_atomic_fetch_nbi(...) SHOAL_ARG5(__VA_ARGS__, shoal_afetchnbi4, shoal_afetchnbi3, ~)(__VA_ARGS__)
#define shoal_aswapnbi4(f, d, v, pe) SHOAL_GENERIC_AMO_EXT(*(d), shmem_, _atomic_swap_nbi)(f, d, v, pe)
#define shoal_aswapnbi5(c, f, d, v, pe) SHOAL_GENERIC_AMO_EXT(*(d), shmem_ctx_, _atomic_swap_nbi)(c, f, d, v, pe)
#define shmem_atomic_swap_nbi(...) SHOAL_ARG6(__VA_ARGS__, shoal_aswapnbi5, shoal_aswapnbi4, ~)(__VA_ARGS__)

#define shoal_acswap4(d, k, v, pe) SHOAL_GENERIC_AMO_STD(*(d), shmem_, _atomic_compare_swap)(d, k, v, pe)
#define shoal_acswap5(c, d, k, v, pe) SHOAL_GENERIC_AMO_STD(*(d), shmem_ctx_, _atomic_compare_swap)(c, d, k, v, pe)
#define shmem_atomic_compare_swap(...) SHOAL_ARG6(__VA_ARGS__, shoal_acswap5, shoal_acswap4, ~)(__VA_ARGS__)
#define shoal_afinc2(d, pe) SHOAL_GENERIC_AMO_STD(*(d), shmem_, _atomic_fetch_inc)(d, pe)
#define shoal_afinc3(c, d, pe) SHOAL_GENERIC_AMO_STD(*(d), shmem_ctx_, _atomic_fetch_inc)(c, d, pe)
#define shmem_atomic_fetch_inc(...) SHOAL_ARG4(__VA_ARGS__, shoal_afinc3, shoal_afinc2, ~)(__VA_ARGS__)
#define shoal_ainc2(d, pe) SHOAL_GENERIC_AMO_STD(*(d), shmem_, _atomic_inc)(d, pe)
#define shoal_ainc3(c, d, pe) SHOAL_GENERIC_AMO_STD(*(d), shmem_ctx_, _atomic_inc)(c, d, pe)
#define shmem_atomic_inc(...) SHOAL_ARG4(__VA_ARGS__, shoal_ainc3, shoal_ainc2, ~)(__VA_ARGS__)
#define shoal_afadd3(d, v, pe) SHOAL_GENERIC_AMO_STD(*(d), shmem_, _atomic_fetch_add)(d, v, pe)
#define shoal_afadd4(c, d, v, pe) SHOAL_GENERIC_AMO_STD(*(d), shmem_ctx_, _atomic_fetch_add)(c, d, v, pe)
#define shmem_atomic_fetch_add(...) SHOAL_ARG5(__VA_ARGS__, shoal_afadd4, shoal_afadd3, ~)(__VA_ARGS__)
#define shoal_aadd3(d, v, pe) SHOAL_GENERIC_AMO_STD(*(d), shmem_, _atomic_add)(d, v, pe)
#define shoal_aadd4(c, d, v, pe) SHOAL_GENERIC_AMO_STD(*(d), shmem_ctx_, _atomic_add)(c, d, v, pe)
#define shmem_atomic_add(...) SHOAL_ARG5(__VA_ARGS__, shoal_aadd4, shoal_aadd3, ~)(__VA_ARGS__)
#define shoal_acswapnbi5(f, d, k, v, pe) SHOAL_GENERIC_AMO_STD(*(d), shmem_, _atomic_compare_swap_nbi)(f, d, k, v, pe)
#define shoal_acswapnbi6(c, f, d, k, v, pe)                                                                            \
  SHOAL_GENERIC_AMO_STD(*(d), shmem_ctx_, _atomic_compare_swap_nbi)(c, f, d, k, v, pe)
#define shmem_atomic_compare_swap_nbi(...) SHOAL_ARG7(__VA_ARGS__, shoal_acswapnbi6, shoal_acswapnbi5, ~)(__VA_ARGS__)
#define shoal_afincnbi3(f, d, pe) SHOAL_GENERIC_AMO_STD(*(d), shmem_, _atomic_fetch_inc_nbi)(f, d, pe)
#define shoal_afincnbi4(c, f, d, pe) SHOAL_GENERIC_AMO_STD(*(d), shmem_ctx_, _atomic_fetch_inc_nbi)(c, f, d, pe)
#define shmem_atomic_fetch_inc_nbi(...) SHOAL_ARG5(__VA_ARGS__, shoal_afincnbi4, shoal_afincnbi3, ~)(__VA_ARGS__)
#define shoal_afaddnbi4(f, d, v, pe) SHOAL_GENERIC_AMO_STD(*(d), shmem_, _atomic_fetch_add_nbi)(f, d, v, pe)
#define shoal_afaddnbi5(c, f, d, v, pe) SHOAL_GENERIC_AMO_STD(*(d), shmem_ctx_, _atomic_fetch_add_nbi)(c, f, d, v, pe)
#define shmem_atomic_fetch_add_nbi(...) SHOAL_ARG6(__VA_ARGS__, shoal_afaddnbi5, shoal_afaddnbi4, ~)(__VA_ARGS__)

#define shoal_afand3(d, v, pe) SHOAL_GENERIC_AMO_BIT(*(d), shmem_, _atomic_fetch_and)(d, v, pe)
#define shoal_afand4(c, d, v, pe) SHOAL_GENERIC_AMO_BIT(*(d), shmem_ctx_, _atomic_fetch_and)(c, d, v, pe)
#define shmem_atomic_fetch_and(...) SHOAL_ARG5(__VA_ARGS__, shoal_afand4, shoal_afand3, ~)(__VA_ARGS__)
#define shoal_aand3(d, v, pe) SHOAL_GENERIC_AMO_BIT(*(d), shmem_, _atomic_and)(d, v, pe)
#define shoal_aand4(c, d, v, pe) SHOAL_GENERIC_AMO_BIT(*(d), shmem_ctx_, _atomic_and)(c, d, v, pe)
#define shmem_atomic_and(...) SHOAL_ARG5(__VA_ARGS__, shoal_aand4, shoal_aand3, ~)(__VA_ARGS__)
#define shoal_afandnbi4(f, d, v, pe) SHOAL_GENERIC_AMO_BIT(*(d), shmem_, _atomic_fetch_and_nbi)(f, d, v, pe)
#define shoal_afandnbi5(c, f, d, v, pe) SHOAL_GENERIC_AMO_BIT(*(d), shmem_ctx_, _atomic_fetch_and_nbi)(c, f, d, v, pe)
#define shmem_atomic_fetch_and_nbi(...) SHOAL_ARG6(__VA_ARGS__, shoal_afandnbi5, shoal_afandnbi4, ~)(__VA_ARGS__)
#define shoal_afor3(d, v, pe) SHOAL_GENERIC_AMO_BIT(*(d), shmem_, _atomic_fetch_or)(d, v, pe)
#define shoal_afor4(c, d, v, pe) SHOAL_GENERIC_AMO_BIT(*(d), shmem_ctx_, _atomic_fetch_or)(c, d, v, pe)
#define shmem_atomic_fetch_or(...) SHOAL_ARG5(__VA_ARGS__, shoal_afor4, shoal_afor3, ~)(__VA_ARGS__)
#define shoal_aor3(d, v, pe) SHOAL_GENERIC_AMO_BIT(*(d), shmem_, _atomic_or)(d, v, pe)
#define shoal_aor4(c, d, v, pe) SHOAL_GENERIC_AMO_BIT(*(d), shmem_ctx_, _atomic_or)(c, d, v, pe)
#define shmem_atomic_or(...) SHOAL_ARG5(__VA_ARGS__, shoal_aor4, shoal_aor3, ~)(__VA_ARGS__)
#define shoal_afornbi4(f, d, v, pe) SHOAL_GENERIC_AMO_BIT(*(d), shmem_, _atomic_fetch_or_nbi)(f, d, v, pe)
#define shoal_afornbi5(c, f, d, v, pe) SHOAL_GENERIC_AMO_BIT(*(d), shmem_ctx_, _atomic_fetch_or_nbi)(c, f, d, v, pe)
#define shmem_atomic_fetch_or_nbi(...) SHOAL_ARG6(__VA_ARGS__, shoal_afornbi5, shoal_afornbi4, ~)(__VA_ARGS__)
#define shoal_afxor3(d, v, pe) SHOAL_GENERIC_AMO_BIT(*(d), shmem_, _atomic_fetch_xor)(d, v, pe)
#define shoal_afxor4(c, d, v, pe) SHOAL_GENERIC_AMO_BIT(*(d), shmem_ctx_, _atomic_fetch_xor)(c, d, v, pe)
#define shmem_atomic_fetch_xor(...) SHOAL_ARG5(__VA_ARGS__, shoal_afxor4, shoal_afxor3, ~)(__VA_ARGS__)
#define shoal_axor3(d, v, pe) SHOAL_GENERIC_AMO_BIT(*(d), shmem_, _atomic_xor)(d, v, pe)
#define shoal_axor4(c, d, v, pe) SHOAL_GENERIC_AMO_BIT(*(d), shmem_ctx_, _atomic_xor)(c, d, v, pe)
#define shmem_atomic_xor(...) SHOAL_ARG5(__VA_ARGS__, shoal_axor4, shoal_axor3, ~)(__VA_ARGS__)
#define shoal_afxornbi4(f, d, v, pe) SHOAL_GENERIC_AMO_BIT(*(d), shmem_, _atomic_fetch_xor_nbi)(f, d, v, pe)
#define shoal_afxornbi5(c, f, d, v, pe) SHOAL_GENERIC_AMO_BIT(*(d), shmem_ctx_, _atomic_fetch_xor_nbi)(c, f, d, v, pe)
#define shmem_atomic_fetch_xor_nbi(...) SHOAL_ARG6(__VA_ARGS__, shoal_afxornbi5, shoal_afxornbi4, ~)(__VA_ARGS__)
#endif

#endif
