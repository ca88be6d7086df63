/* amo.c - atomic memory operations (spec 9.8) and their deprecated 1.4 names.
 *
 * Every PE of the node maps every peer's symmetric memory, so an AMO is one __atomic builtin on the peer's object
 * through its mapping (shoal_amo_addr: a few compares and one add for the heap and static data). The same memory is
 * reached from every PE and thread, so AMOs from anywhere, the target PE's own included, are mutually atomic.
 * Fetching reads are acquire, set is a release store, read-modify-writes are sequentially consistent (a locked
 * instruction on x86 either way). The _nbi forms complete at once, which the spec allows. */
#include "amo.h"
#include "ctx.h"

void *shoal_amo_addr_slow(const char *routine, const char *arg, const void *addr, size_t size, int pe) {
  if (!addr) shoal_fatal(routine, "%s is NULL", arg);
  if ((uintptr_t)addr & (size - 1))
    shoal_fatal(routine, "%s %p is not aligned to its %zu-byte type", arg, addr, size);
  shoal_space_t *s = shoal_space_find(addr, size, NULL);
  if (!s) shoal_xlate_slow(addr, size, pe, routine, arg); /* fatal, with the reason */
  if (!s->delta || s->device)
    shoal_fatal(routine, "%s %p is in %s, which the host cannot update atomically", arg, addr, s->name);
  return (char *)addr + s->delta[pe];
}

#define SHOAL_CTX_PARAMS(...) (shmem_ctx_t ctx, __VA_ARGS__)
/* Defines routine NAME and shmem_ctx_NAME-style twin CNAME with the same body; the body sees the routine's name in rt
 * (for error messages) and, in the ctx form, a checked ctx and pe as a world PE number. */
#define SHOAL_DEF_PAIR(R, NAME, CNAME, PARAMS, ...)                                                                    \
  R NAME PARAMS {                                                                                                      \
    static const char rt[] = #NAME;                                                                                    \
    __VA_ARGS__                                                                                                        \
  }                                                                                                                    \
  R CNAME SHOAL_CTX_PARAMS PARAMS {                                                                                    \
    static const char rt[] = #CNAME;                                                                                   \
    SHOAL_CHECK_CTX(rt, ctx);                                                                                          \
    pe = shoal_ctx_pe(rt, ctx, pe);                                                                                    \
    __VA_ARGS__                                                                                                        \
  }
#define SHOAL_DEF_AMO2(R, N, OP, PARAMS, ...)                                                                          \
  SHOAL_DEF_PAIR(R, shmem_##N##_atomic_##OP, shmem_ctx_##N##_atomic_##OP, PARAMS, __VA_ARGS__)
/* Deprecated names: default form only. */
#define SHOAL_DEF_DEPR(R, NAME, PARAMS, ...)                                                                           \
  R NAME PARAMS {                                                                                                      \
    static const char rt[] = #NAME;                                                                                    \
    __VA_ARGS__                                                                                                        \
  }

/* Bodies, shared by the 1.5 names and the deprecated ones. T is the type; dest/source/value/cond/fetch/pe the
 * parameters. */
#define AMO_AT(T, arg) ((T *)shoal_amo_addr(rt, #arg, arg, sizeof(T), pe))
#define AMO_FETCH_OUT()                                                                                                \
  if (SHOAL_UNLIKELY(!fetch)) shoal_fatal(rt, "fetch is NULL");
#define B_FETCH(T) T r; __atomic_load(AMO_AT(T, source), &r, __ATOMIC_ACQUIRE); return r;
#define B_SET(T) __atomic_store(AMO_AT(T, dest), &value, __ATOMIC_RELEASE);
#define B_SWAP(T) T r; __atomic_exchange(AMO_AT(T, dest), &value, &r, __ATOMIC_SEQ_CST); return r;
#define B_CSWAP(T)                                                                                                     \
  __atomic_compare_exchange_n(AMO_AT(T, dest), &cond, value, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);                   \
  return cond; /* unchanged on success (== old value), the current value on failure */
#define B_FADD(T, v) return __atomic_fetch_add(AMO_AT(T, dest), (T)(v), __ATOMIC_SEQ_CST);
#define B_ADD(T, v) __atomic_fetch_add(AMO_AT(T, dest), (T)(v), __ATOMIC_SEQ_CST);

#define SHOAL_DEF_AMO_EXT(T, N)                                                                                        \
  SHOAL_DEF_AMO2(T, N, fetch, (const T *source, int pe), B_FETCH(T))                                                   \
  SHOAL_DEF_AMO2(void, N, set, (T *dest, T value, int pe), B_SET(T))                                                   \
  SHOAL_DEF_AMO2(T, N, swap, (T *dest, T value, int pe), B_SWAP(T))                                                    \
  SHOAL_DEF_AMO2(void, N, fetch_nbi, (T *fetch, const T *source, int pe), AMO_FETCH_OUT()                              \
                 __atomic_load(AMO_AT(T, source), fetch, __ATOMIC_ACQUIRE);)                                           \
  SHOAL_DEF_AMO2(void, N, swap_nbi, (T *fetch, T *dest, T value, int pe), AMO_FETCH_OUT()                              \
                 __atomic_exchange(AMO_AT(T, dest), &value, fetch, __ATOMIC_SEQ_CST);)
SHOAL_AMO_EXT_TYPES(SHOAL_DEF_AMO_EXT)

#define SHOAL_DEF_AMO_STD(T, N)                                                                                        \
  SHOAL_DEF_AMO2(T, N, compare_swap, (T *dest, T cond, T value, int pe), B_CSWAP(T))                                   \
  SHOAL_DEF_AMO2(T, N, fetch_inc, (T *dest, int pe), B_FADD(T, 1))                                                     \
  SHOAL_DEF_AMO2(void, N, inc, (T *dest, int pe), B_ADD(T, 1))                                                         \
  SHOAL_DEF_AMO2(T, N, fetch_add, (T *dest, T value, int pe), B_FADD(T, value))                                        \
  SHOAL_DEF_AMO2(void, N, add, (T *dest, T value, int pe), B_ADD(T, value))                                            \
  SHOAL_DEF_AMO2(void, N, compare_swap_nbi, (T *fetch, T *dest, T cond, T value, int pe), AMO_FETCH_OUT()              \
                 __atomic_compare_exchange_n(AMO_AT(T, dest), &cond, value, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);    \
                 *fetch = cond;)                                                                                       \
  SHOAL_DEF_AMO2(void, N, fetch_inc_nbi, (T *fetch, T *dest, int pe), AMO_FETCH_OUT()                                  \
                 *fetch = __atomic_fetch_add(AMO_AT(T, dest), (T)1, __ATOMIC_SEQ_CST);)                                \
  SHOAL_DEF_AMO2(void, N, fetch_add_nbi, (T *fetch, T *dest, T value, int pe), AMO_FETCH_OUT()                         \
                 *fetch = __atomic_fetch_add(AMO_AT(T, dest), value, __ATOMIC_SEQ_CST);)
SHOAL_AMO_STD_TYPES(SHOAL_DEF_AMO_STD)

#define SHOAL_DEF_AMO_BITOP(T, N, OP)                                                                                  \
  SHOAL_DEF_AMO2(T, N, fetch_##OP, (T *dest, T value, int pe),                                                         \
                 return __atomic_fetch_##OP(AMO_AT(T, dest), value, __ATOMIC_SEQ_CST);)                                \
  SHOAL_DEF_AMO2(void, N, OP, (T *dest, T value, int pe),                                                              \
                 __atomic_fetch_##OP(AMO_AT(T, dest), value, __ATOMIC_SEQ_CST);)                                       \
  SHOAL_DEF_AMO2(void, N, fetch_##OP##_nbi, (T *fetch, T *dest, T value, int pe), AMO_FETCH_OUT()                      \
                 *fetch = __atomic_fetch_##OP(AMO_AT(T, dest), value, __ATOMIC_SEQ_CST);)
#define SHOAL_DEF_AMO_BIT(T, N)                                                                                        \
  SHOAL_DEF_AMO_BITOP(T, N, and) SHOAL_DEF_AMO_BITOP(T, N, or) SHOAL_DEF_AMO_BITOP(T, N, xor)
SHOAL_AMO_BIT_TYPES(SHOAL_DEF_AMO_BIT)

/* ---- deprecated 1.4 names (spec Annex): same bodies, their own names in error messages ---- */
#define SHOAL_DEF_AMO_DEPR_EXT(T, N)                                                                                   \
  SHOAL_DEF_DEPR(T, shmem_##N##_fetch, (const T *source, int pe), B_FETCH(T))                                          \
  SHOAL_DEF_DEPR(void, shmem_##N##_set, (T *dest, T value, int pe), B_SET(T))                                          \
  SHOAL_DEF_DEPR(T, shmem_##N##_swap, (T *dest, T value, int pe), B_SWAP(T))
#define SHOAL_DEF_AMO_DEPR_INT(T, N)                                                                                   \
  SHOAL_DEF_DEPR(T, shmem_##N##_cswap, (T *dest, T cond, T value, int pe), B_CSWAP(T))                                 \
  SHOAL_DEF_DEPR(T, shmem_##N##_finc, (T *dest, int pe), B_FADD(T, 1))                                                 \
  SHOAL_DEF_DEPR(void, shmem_##N##_inc, (T *dest, int pe), B_ADD(T, 1))                                                \
  SHOAL_DEF_DEPR(T, shmem_##N##_fadd, (T *dest, T value, int pe), B_FADD(T, value))                                    \
  SHOAL_DEF_DEPR(void, shmem_##N##_add, (T *dest, T value, int pe), B_ADD(T, value))
SHOAL_AMO_DEPR_EXT_TYPES(SHOAL_DEF_AMO_DEPR_EXT)
SHOAL_AMO_DEPR_INT_TYPES(SHOAL_DEF_AMO_DEPR_INT)
