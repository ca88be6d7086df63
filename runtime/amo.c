/* amo.c - atomic memory operations (spec 9.8) and their deprecated 1.4 names.
 *
 * Every PE of the node maps every peer's symmetric memory, so an AMO is one __atomic builtin on the peer's object
 * through its mapping (shoal_amo_addr: a few compares and one add for the heap and static data). The same memory is
 * reached from every PE and thread, so AMOs from anywhere, the target PE's own included, are mutually atomic.
 * Fetching reads are acquire, set is a release store, read-modify-writes are sequentially consistent (a locked
 * instruction on x86 either way). The _nbi forms complete at once, which the spec allows. Objects on the device heap
 * go through the GPU backend (amo_dev). */
#include "amo.h"
#include "ctx.h"
#include "heap_gpu.h"
#include "comm.h"
#include "xlate.h"

void *shoal_amo_addr_slow(const char *routine, const char *arg, const void *addr, size_t size, int pe, bool dev_ok) {
  if (!addr) shoal_fatal(routine, "%s is NULL", arg);
  if ((uintptr_t)addr & (size - 1))
    shoal_fatal(routine, "%s %p is not aligned to its %zu-byte type", arg, addr, size);
  shoal_space_t *s = shoal_space_find(addr, size, NULL);
  if (!s) shoal_xlate_slow(addr, size, pe, routine, arg); /* fatal, with the reason */
  if (s->device && dev_ok) return NULL;
  if (!s->delta || s->device)
    shoal_fatal(routine, "%s %p is in %s, which the host cannot update atomically", arg, addr, s->name);
  return (char *)addr + s->delta[pe];
}

/* p2p.c's check (amo.h), here beside its twin above so that amo.c, which p2p.c uses, uses nothing of p2p.c. */
void shoal_p2p_check_slow(const char *routine, const char *arg, const void *addr, size_t size, size_t align) {
  if (!addr) shoal_fatal(routine, "%s is NULL", arg);
  if ((uintptr_t)addr & (align - 1))
    shoal_fatal(routine, "%s %p is not aligned to its %zu-byte type", arg, addr, align);
  shoal_space_t *s = shoal_space_find(addr, size, NULL);
  if (!s) shoal_xlate_slow(addr, size, shoal_g.me, routine, arg); /* fatal, with the reason */
  if (s->device) shoal_fatal(routine, "%s %p is in %s, which the host cannot poll", arg, addr, s->name);
}

/* The device backends have an enum of their own (device/ is a leaf): fetch, set, swap, cswap, add, and, or, xor;
 * a fetching op and its non-fetching form are the same call there. */
static const unsigned char gpu_op[SHOAL_TL_AMO_NOPS] = {
    [SHOAL_TL_AMO_FETCH] = SHOAL_GPU_AMO_FETCH, [SHOAL_TL_AMO_SET] = SHOAL_GPU_AMO_SET,
    [SHOAL_TL_AMO_SWAP] = SHOAL_GPU_AMO_SWAP,   [SHOAL_TL_AMO_CSWAP] = SHOAL_GPU_AMO_CSWAP,
    [SHOAL_TL_AMO_INC] = SHOAL_GPU_AMO_ADD,     [SHOAL_TL_AMO_FETCH_INC] = SHOAL_GPU_AMO_ADD,
    [SHOAL_TL_AMO_ADD] = SHOAL_GPU_AMO_ADD,     [SHOAL_TL_AMO_FETCH_ADD] = SHOAL_GPU_AMO_ADD,
    [SHOAL_TL_AMO_AND] = SHOAL_GPU_AMO_AND,     [SHOAL_TL_AMO_FETCH_AND] = SHOAL_GPU_AMO_AND,
    [SHOAL_TL_AMO_OR] = SHOAL_GPU_AMO_OR,       [SHOAL_TL_AMO_FETCH_OR] = SHOAL_GPU_AMO_OR,
    [SHOAL_TL_AMO_XOR] = SHOAL_GPU_AMO_XOR,     [SHOAL_TL_AMO_FETCH_XOR] = SHOAL_GPU_AMO_XOR};

/* An AMO on pe's instance of a device-heap object: the backend's one-thread kernel on the target, through the IPC
 * mapping (shoal_gpu_amo; synchronous, serialized per PE), as NVSHMEM's host-side AMOs on device memory do. */
static uint64_t amo_dev(const char *rt, const char *arg, const void *addr, int op, size_t size, uint64_t v, uint64_t c,
                        int pe) {
  uint64_t old = 0;
  if (op == SHOAL_TL_AMO_INC || op == SHOAL_TL_AMO_FETCH_INC) v = 1;
  shoal_status_t rc = shoal_gpu_amo(rt, (void *)addr, gpu_op[op], size, v, c, &old, pe);
  if (rc == SHOAL_ERR_NOSYS)
    shoal_fatal(rt, "%s %p is on the device heap, and the %s backend has no host-initiated atomics on device memory",
                arg, addr, shoal_gpu_ops.name);
  if (rc) shoal_fatal(rt, "%s %p: the atomic on PE %d's device memory failed", arg, addr, pe);
  return old;
}

/* The target's side of a far PE's AMO on this PE's device heap (comm.h), from the transport's progress: every field
 * came off the wire, so each is checked (op, size 4 or 8, aligned off inside the heap) before the device atomic. */
shoal_status_t shoal_comm_dev_amo(size_t off, int op, size_t size, uint64_t v, uint64_t c, uint64_t *old) {
  const shoal_space_t *s = &shoal_g.space[SHOAL_SPACE_DEVICE];
  if ((unsigned)op >= SHOAL_TL_AMO_NOPS || (size != 4 && size != 8) || off % size || !s->size || off > s->size - size)
    return SHOAL_ERR_INVAL;
  if (op == SHOAL_TL_AMO_INC || op == SHOAL_TL_AMO_FETCH_INC) v = 1;
  *old = 0;
  return shoal_gpu_amo("shoal_comm_dev_amo", (void *)(s->base + off), gpu_op[op], size, v, c, old, shoal_g.me);
}

/* Everything off the inline path: a PE of another node (the transport), objects in other host spaces, on the device
 * heap, or a fatal error naming rt and arg (a misaligned or NULL addr never reaches the transport). */
static uint64_t amo_off_path(const char *rt, const char *arg, const void *addr, size_t size, int op, uint64_t v,
                             uint64_t c, int pe, void *tx) {
  size_t off;
  const shoal_space_t *s;
  if (addr && !((uintptr_t)addr & (size - 1)) && shoal_space_far(s = shoal_space_find(addr, size, &off), pe))
    return shoal_comm_amo(rt, tx, pe, s, off, addr, size, op, v, c); /* found once; pe checked by the entry point */
  void *p = shoal_amo_addr_slow(rt, arg, addr, size, pe, true);
  return p ? shoal_amo_host(p, op, size, v, c) : amo_dev(rt, arg, addr, op, size, v, c, pe);
}

uint64_t shoal_amo_bits(const char *rt, const char *arg, const void *addr, size_t size, int op, uint64_t v, uint64_t c,
                        int pe) {
  void *p;
  if (shoal_amo_fast(rt, addr, size, pe, &p)) return shoal_amo_host(p, op, size, v, c);
  return amo_off_path(rt, arg, addr, size, op, v, c, pe, NULL);
}

/* The AMO bodies' slow path, in one call: values travel as their bits (every AMO type is 4 or 8 bytes; little-endian:
 * the low bytes); the old value is returned and, when fetch is not NULL, stored there. One out-of-line call with
 * nothing live after it keeps the inline bodies free of saved registers. */
__attribute__((noinline, cold)) static uint64_t amo_slow(const char *rt, const char *arg, const void *addr,
                                                         size_t size, int op, uint64_t v, uint64_t c, int pe,
                                                         void *fetch, void *tx) {
  const uint64_t old = amo_off_path(rt, arg, addr, size, op, v, c, pe, tx);
  if (fetch) memcpy(fetch, &old, size);
  return old;
}
static inline uint64_t amo_bits(const void *p, size_t n) {
  uint64_t b = 0;
  memcpy(&b, p, n);
  return b;
}
#define AMO_BITS(T, x) ({ T x_ = (T)(x); amo_bits(&x_, sizeof(T)); })
#define AMO_SLOW_CALL(T, arg, OP, v, c, fetch)                                                                         \
  amo_slow(rt, #arg, arg, sizeof(T), SHOAL_TL_AMO_##OP, AMO_BITS(T, v), AMO_BITS(T, c), pe, fetch, tx)
/* The slow path's result as a T. */
#define AMO_SLOW(T, arg, OP, v, c)                                                                                     \
  ({                                                                                                                   \
    uint64_t b_ = AMO_SLOW_CALL(T, arg, OP, v, c, NULL);                                                               \
    T r_;                                                                                                              \
    memcpy(&r_, &b_, sizeof(T));                                                                                       \
    r_;                                                                                                                \
  })

#define SHOAL_CTX_PARAMS(...) (shmem_ctx_t ctx, __VA_ARGS__)
/* Defines routine NAME and shmem_ctx_NAME-style twin CNAME with the same body; the body sees the routine's name in rt
 * (for error messages), the endpoint between nodes in tx (the context's, NULL for the default one) and, in the ctx
 * form, a checked ctx and pe as a world PE number. */
#define SHOAL_DEF_PAIR(R, NAME, CNAME, PARAMS, ...)                                                                    \
  R NAME PARAMS {                                                                                                      \
    static const char rt[] = #NAME;                                                                                    \
    void *const tx = NULL;                                                                                             \
    __VA_ARGS__                                                                                                        \
  }                                                                                                                    \
  R CNAME SHOAL_CTX_PARAMS PARAMS {                                                                                    \
    static const char rt[] = #CNAME;                                                                                   \
    SHOAL_CHECK_CTX(rt, ctx);                                                                                          \
    pe = shoal_ctx_pe(rt, ctx, pe);                                                                                    \
    void *const tx = ctx->tl;                                                                                          \
    __VA_ARGS__                                                                                                        \
  }
#define SHOAL_DEF_AMO2(R, N, OP, PARAMS, ...)                                                                          \
  SHOAL_DEF_PAIR(R, shmem_##N##_atomic_##OP, shmem_ctx_##N##_atomic_##OP, PARAMS, __VA_ARGS__)
/* Deprecated names: default form only. */
#define SHOAL_DEF_DEPR(R, NAME, PARAMS, ...)                                                                           \
  R NAME PARAMS {                                                                                                      \
    static const char rt[] = #NAME;                                                                                    \
    void *const tx = NULL;                                                                                             \
    __VA_ARGS__                                                                                                        \
  }

/* Bodies, shared by the 1.5 names and the deprecated ones. T is the type; dest/source/value/cond/fetch/pe the
 * parameters. p: pe's object in the host heap or static data (inline); anything else runs SLOW, which returns. */
#define AMO_AT(T, arg, SLOW)                                                                                           \
  T *p;                                                                                                                \
  {                                                                                                                    \
    void *q_;                                                                                                          \
    if (SHOAL_UNLIKELY(!shoal_amo_fast(rt, arg, sizeof(T), pe, &q_))) SLOW                                             \
    p = (T *)q_;                                                                                                       \
  }
/* fetch is written by the CPU: local host memory only. */
#define AMO_FETCH_OUT()                                                                                                \
  if (SHOAL_UNLIKELY(!fetch)) shoal_fatal(rt, "fetch is NULL");                                                        \
  if (SHOAL_UNLIKELY((uintptr_t)fetch - shoal_g.space[SHOAL_SPACE_DEVICE].base <                                       \
                     shoal_g.space[SHOAL_SPACE_DEVICE].size))                                                          \
    shoal_fatal(rt, "fetch %p is on the device heap: the fetched value is stored by the host", (void *)fetch);
#define B_FETCH(T)                                                                                                     \
  AMO_AT(T, source, return AMO_SLOW(T, source, FETCH, 0, 0);)                                                          \
  T r;                                                                                                                 \
  __atomic_load(p, &r, __ATOMIC_ACQUIRE);                                                                              \
  return r;
#define B_SET(T)                                                                                                       \
  AMO_AT(T, dest, { (void)AMO_SLOW_CALL(T, dest, SET, value, 0, NULL); return; })                                      \
  __atomic_store(p, &value, __ATOMIC_RELEASE);
#define B_SWAP(T)                                                                                                      \
  AMO_AT(T, dest, return AMO_SLOW(T, dest, SWAP, value, 0);)                                                           \
  T r;                                                                                                                 \
  __atomic_exchange(p, &value, &r, __ATOMIC_SEQ_CST);                                                                  \
  return r;
#define B_CSWAP(T)                                                                                                     \
  AMO_AT(T, dest, return AMO_SLOW(T, dest, CSWAP, value, cond);)                                                       \
  __atomic_compare_exchange_n(p, &cond, value, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);                                 \
  return cond; /* unchanged on success (== old value), the current value on failure */
#define B_FADD(T, v)                                                                                                   \
  AMO_AT(T, dest, return AMO_SLOW(T, dest, FETCH_ADD, v, 0);)                                                          \
  return __atomic_fetch_add(p, (T)(v), __ATOMIC_SEQ_CST);
#define B_ADD(T, v)                                                                                                    \
  AMO_AT(T, dest, { (void)AMO_SLOW_CALL(T, dest, ADD, v, 0, NULL); return; })                                          \
  __atomic_fetch_add(p, (T)(v), __ATOMIC_SEQ_CST);
/* _nbi forms: the old value into *fetch. */
#define B_FETCH_NBI(T)                                                                                                 \
  AMO_FETCH_OUT()                                                                                                      \
  AMO_AT(T, source, { (void)AMO_SLOW_CALL(T, source, FETCH, 0, 0, fetch); return; })                                   \
  __atomic_load(p, fetch, __ATOMIC_ACQUIRE);
#define B_SWAP_NBI(T)                                                                                                  \
  AMO_FETCH_OUT()                                                                                                      \
  AMO_AT(T, dest, { (void)AMO_SLOW_CALL(T, dest, SWAP, value, 0, fetch); return; })                                    \
  __atomic_exchange(p, &value, fetch, __ATOMIC_SEQ_CST);
#define B_CSWAP_NBI(T)                                                                                                 \
  AMO_FETCH_OUT()                                                                                                      \
  AMO_AT(T, dest, { (void)AMO_SLOW_CALL(T, dest, CSWAP, value, cond, fetch); return; })                                \
  __atomic_compare_exchange_n(p, &cond, value, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);                                 \
  *fetch = cond;
#define B_FADD_NBI(T, v)                                                                                               \
  AMO_FETCH_OUT()                                                                                                      \
  AMO_AT(T, dest, { (void)AMO_SLOW_CALL(T, dest, FETCH_ADD, v, 0, fetch); return; })                                   \
  *fetch = __atomic_fetch_add(p, (T)(v), __ATOMIC_SEQ_CST);
#define B_BIT(T, op, OPU)                                                                                              \
  AMO_AT(T, dest, return AMO_SLOW(T, dest, FETCH_##OPU, value, 0);)                                                    \
  return __atomic_fetch_##op(p, value, __ATOMIC_SEQ_CST);
#define B_BIT_VOID(T, op, OPU)                                                                                         \
  AMO_AT(T, dest, { (void)AMO_SLOW_CALL(T, dest, OPU, value, 0, NULL); return; })                                      \
  __atomic_fetch_##op(p, value, __ATOMIC_SEQ_CST);
#define B_BIT_NBI(T, op, OPU)                                                                                          \
  AMO_FETCH_OUT()                                                                                                      \
  AMO_AT(T, dest, { (void)AMO_SLOW_CALL(T, dest, FETCH_##OPU, value, 0, fetch); return; })                             \
  *fetch = __atomic_fetch_##op(p, value, __ATOMIC_SEQ_CST);

#define SHOAL_DEF_AMO_EXT(T, N)                                                                                        \
  SHOAL_DEF_AMO2(T, N, fetch, (const T *source, int pe), B_FETCH(T))                                                   \
  SHOAL_DEF_AMO2(void, N, set, (T *dest, T value, int pe), B_SET(T))                                                   \
  SHOAL_DEF_AMO2(T, N, swap, (T *dest, T value, int pe), B_SWAP(T))                                                    \
  SHOAL_DEF_AMO2(void, N, fetch_nbi, (T *fetch, const T *source, int pe), B_FETCH_NBI(T))                              \
  SHOAL_DEF_AMO2(void, N, swap_nbi, (T *fetch, T *dest, T value, int pe), B_SWAP_NBI(T))
SHOAL_AMO_EXT_TYPES(SHOAL_DEF_AMO_EXT)

#define SHOAL_DEF_AMO_STD(T, N)                                                                                        \
  SHOAL_DEF_AMO2(T, N, compare_swap, (T *dest, T cond, T value, int pe), B_CSWAP(T))                                   \
  SHOAL_DEF_AMO2(T, N, fetch_inc, (T *dest, int pe), B_FADD(T, 1))                                                     \
  SHOAL_DEF_AMO2(void, N, inc, (T *dest, int pe), B_ADD(T, 1))                                                         \
  SHOAL_DEF_AMO2(T, N, fetch_add, (T *dest, T value, int pe), B_FADD(T, value))                                        \
  SHOAL_DEF_AMO2(void, N, add, (T *dest, T value, int pe), B_ADD(T, value))                                            \
  SHOAL_DEF_AMO2(void, N, compare_swap_nbi, (T *fetch, T *dest, T cond, T value, int pe), B_CSWAP_NBI(T))              \
  SHOAL_DEF_AMO2(void, N, fetch_inc_nbi, (T *fetch, T *dest, int pe), B_FADD_NBI(T, 1))                                \
  SHOAL_DEF_AMO2(void, N, fetch_add_nbi, (T *fetch, T *dest, T value, int pe), B_FADD_NBI(T, value))
SHOAL_AMO_STD_TYPES(SHOAL_DEF_AMO_STD)

#define SHOAL_DEF_AMO_BITOP(T, N, OP, OPU)                                                                             \
  SHOAL_DEF_AMO2(T, N, fetch_##OP, (T *dest, T value, int pe), B_BIT(T, OP, OPU))                                      \
  SHOAL_DEF_AMO2(void, N, OP, (T *dest, T value, int pe), B_BIT_VOID(T, OP, OPU))                                      \
  SHOAL_DEF_AMO2(void, N, fetch_##OP##_nbi, (T *fetch, T *dest, T value, int pe), B_BIT_NBI(T, OP, OPU))
#define SHOAL_DEF_AMO_BIT(T, N)                                                                                        \
  SHOAL_DEF_AMO_BITOP(T, N, and, AND) SHOAL_DEF_AMO_BITOP(T, N, or, OR) SHOAL_DEF_AMO_BITOP(T, N, xor, XOR)
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
