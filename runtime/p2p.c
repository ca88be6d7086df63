/* p2p.c - point-to-point synchronization (spec 9.10: wait_until, test and their _all/_any/_some/_vector forms, the
 * deprecated shmem_wait) and put-with-signal (spec 9.7).
 *
 * Waiting polls the local object with acquire loads inside SHOAL_WAIT_WHILE (spin, then sched_yield), so what a peer
 * wrote before its update of the object (a put before put_signal, a put then fence then AMO) is visible on return.
 * A put-with-signal copies the data into the peer's mapping and then updates the signal with a release atomic. */
#include "amo.h"
#include "ctx.h"
#include "comm.h"
#include "xlate.h"

static _Noreturn void bad_cmp(const char *routine, int cmp) {
  shoal_fatal(routine, "cmp %d is not one of SHMEM_CMP_EQ/NE/GT/GE/LT/LE", cmp);
}
#define CHECK_CMP(rt, cmp)                                                                                             \
  do {                                                                                                                 \
    if (SHOAL_UNLIKELY((unsigned)(cmp) > SHMEM_CMP_GE)) bad_cmp(rt, cmp);                                              \
  } while (0)

/* Bytes of nelems elements, or fatal on overflow. */
static size_t span_of(const char *routine, size_t nelems, size_t size) {
  if (SHOAL_UNLIKELY(nelems > SIZE_MAX / size))
    shoal_fatal(routine, "nelems %zu of %zu-byte elements overflows", nelems, size);
  return nelems * size;
}

/* Successive _any calls start their scan one element further on, so that every satisfied element is eventually
 * returned (spec: "a series of calls ... must eventually return i"). Per thread: no shared state. */
static _Thread_local size_t any_rotor;

enum { SCAN_ALL, SCAN_ANY, SCAN_SOME };

#define NEED(rt, n, p)                                                                                                 \
  do {                                                                                                                 \
    if (SHOAL_UNLIKELY((n) && !(p))) shoal_fatal(rt, "%s is NULL", #p);                                                \
  } while (0)

/* shmem_<N>_<W>_<K> and its _vector twin, K = any | some (the _some forms take an indices array). */
#define SHOAL_P2P_IDX_any(...)
#define SHOAL_P2P_IDX_some(...) __VA_ARGS__
#define SHOAL_P2P_IDXARG_any NULL
#define SHOAL_P2P_IDXARG_some indices
#define SHOAL_DEF_P2P_SCAN(T, N, W, CORE, K, MODE)                                                                     \
  size_t shmem_##N##_##W##_##K(T *ivars, size_t nelems, SHOAL_P2P_IDX_##K(size_t *indices, ) const int *status,        \
                               int cmp, T cmp_value) {                                                                 \
    static const char rt[] = "shmem_" #N "_" #W "_" #K;                                                                \
    SHOAL_P2P_IDX_##K(NEED(rt, nelems, indices);)                                                                      \
    return CORE##_##N(rt, MODE, ivars, nelems, SHOAL_P2P_IDXARG_##K, status, cmp, NULL, cmp_value);                    \
  }                                                                                                                    \
  size_t shmem_##N##_##W##_##K##_vector(T *ivars, size_t nelems, SHOAL_P2P_IDX_##K(size_t *indices, )                  \
                                        const int *status, int cmp, const T *cmp_values) {                             \
    static const char rt[] = "shmem_" #N "_" #W "_" #K "_vector";                                                      \
    SHOAL_P2P_IDX_##K(NEED(rt, nelems, indices);)                                                                      \
    NEED(rt, nelems, cmp_values);                                                                                      \
    return CORE##_##N(rt, MODE, ivars, nelems, SHOAL_P2P_IDXARG_##K, status, cmp, cmp_values, 0);                      \
  }

/* Per type: the comparison, one wait/test core, and every public routine. */
#define SHOAL_DEF_P2P(T, N)                                                                                            \
  static inline bool cmp_##N(T v, int cmp, T x) {                                                                      \
    switch (cmp) {                                                                                                     \
    case SHMEM_CMP_EQ: return v == x;                                                                                  \
    case SHMEM_CMP_NE: return v != x;                                                                                  \
    case SHMEM_CMP_GT: return v > x;                                                                                   \
    case SHMEM_CMP_GE: return v >= x;                                                                                  \
    case SHMEM_CMP_LT: return v < x;                                                                                   \
    default: return v <= x; /* SHMEM_CMP_LE; cmp was checked on entry */                                               \
    }                                                                                                                  \
  }                                                                                                                    \
  static inline bool sat_##N(const T *p, int cmp, T x) {                                                               \
    return cmp_##N(__atomic_load_n(p, __ATOMIC_ACQUIRE), cmp, x);                                                      \
  }                                                                                                                    \
  /* One pass over the included elements (vals: per-element values or NULL for x). SCAN_ALL returns how many are       \
   * not satisfied; SCAN_ANY one satisfied index (from a rotating start) or SIZE_MAX; SCAN_SOME fills idx and          \
   * returns the count. */                                                                                             \
  static size_t scan_##N(int mode, const T *iv, size_t n, size_t *idx, const int *st, int cmp, const T *vals, T x) {   \
    size_t count = 0, start = 0;                                                                                       \
    if (mode == SCAN_ANY) start = any_rotor++ % n;                                                                     \
    for (size_t k = 0, i = start; k < n; k++, i = i + 1 == n ? 0 : i + 1) {                                            \
      if (st && st[i]) continue;                                                                                       \
      bool ok = sat_##N(&iv[i], cmp, vals ? vals[i] : x);                                                              \
      if (mode == SCAN_ALL) count += !ok;                                                                              \
      else if (ok && mode == SCAN_ANY) return i;                                                                       \
      else if (ok) idx[count++] = i;                                                                                   \
    }                                                                                                                  \
    return mode == SCAN_ANY ? SIZE_MAX : count;                                                                        \
  }                                                                                                                    \
  /* Checks arguments; returns false when the set is empty (nelems 0 or every element excluded). */                    \
  static bool args_##N(const char *rt, const T *iv, size_t n, const int *st, int cmp) {                                \
    CHECK_CMP(rt, cmp);                                                                                                \
    if (!n) return false;                                                                                              \
    shoal_p2p_check(rt, "ivars", iv, span_of(rt, n, sizeof(T)), sizeof(T));                                            \
    if (!st) return true;                                                                                              \
    for (size_t i = 0; i < n; i++)                                                                                     \
      if (!st[i]) return true;                                                                                         \
    return false;                                                                                                      \
  }                                                                                                                    \
  /* Element by element: once an element is satisfied the next one is awaited. */                                      \
  static void wait_all_##N(const char *rt, T *iv, size_t n, const int *st, int cmp, const T *vals, T x) {              \
    if (!args_##N(rt, iv, n, st, cmp)) return;                                                                         \
    for (size_t i = 0; i < n; i++)                                                                                     \
      if (!st || !st[i]) SHOAL_WAIT_WHILE(!sat_##N(&iv[i], cmp, vals ? vals[i] : x));                                  \
  }                                                                                                                    \
  /* SCAN_ANY / SCAN_SOME until the scan finds something; SIZE_MAX / 0 for an empty set. */                            \
  static size_t wait_scan_##N(const char *rt, int mode, T *iv, size_t n, size_t *idx, const int *st, int cmp,          \
                              const T *vals, T x) {                                                                    \
    size_t none = mode == SCAN_ANY ? SIZE_MAX : 0, r;                                                                  \
    if (!args_##N(rt, iv, n, st, cmp)) return none;                                                                    \
    SHOAL_WAIT_WHILE((r = scan_##N(mode, iv, n, idx, st, cmp, vals, x)) == none);                                      \
    return r;                                                                                                          \
  }                                                                                                                    \
  /* One scan; an empty set is satisfied for SCAN_ALL (0 unsatisfied), SIZE_MAX for SCAN_ANY, 0 for SCAN_SOME. */      \
  static size_t test_scan_##N(const char *rt, int mode, T *iv, size_t n, size_t *idx, const int *st, int cmp,          \
                              const T *vals, T x) {                                                                    \
    if (!args_##N(rt, iv, n, st, cmp)) return mode == SCAN_ANY ? SIZE_MAX : 0;                                         \
    return scan_##N(mode, iv, n, idx, st, cmp, vals, x);                                                               \
  }                                                                                                                    \
  void shmem_##N##_wait_until(T *ivar, int cmp, T cmp_value) {                                                         \
    static const char rt[] = "shmem_" #N "_wait_until";                                                                \
    CHECK_CMP(rt, cmp);                                                                                                \
    shoal_p2p_check(rt, "ivar", ivar, sizeof(T), sizeof(T));                                                           \
    SHOAL_WAIT_WHILE(!sat_##N(ivar, cmp, cmp_value));                                                                  \
  }                                                                                                                    \
  int shmem_##N##_test(T *ivar, int cmp, T cmp_value) {                                                                \
    static const char rt[] = "shmem_" #N "_test";                                                                      \
    CHECK_CMP(rt, cmp);                                                                                                \
    shoal_p2p_check(rt, "ivar", ivar, sizeof(T), sizeof(T));                                                           \
    return sat_##N(ivar, cmp, cmp_value);                                                                              \
  }                                                                                                                    \
  void shmem_##N##_wait_until_all(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value) {                  \
    wait_all_##N("shmem_" #N "_wait_until_all", ivars, nelems, status, cmp, NULL, cmp_value);                          \
  }                                                                                                                    \
  void shmem_##N##_wait_until_all_vector(T *ivars, size_t nelems, const int *status, int cmp, const T *cmp_values) {   \
    static const char rt[] = "shmem_" #N "_wait_until_all_vector";                                                     \
    NEED(rt, nelems, cmp_values);                                                                                      \
    wait_all_##N(rt, ivars, nelems, status, cmp, cmp_values, 0);                                                       \
  }                                                                                                                    \
  int shmem_##N##_test_all(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value) {                         \
    return !test_scan_##N("shmem_" #N "_test_all", SCAN_ALL, ivars, nelems, NULL, status, cmp, NULL, cmp_value);       \
  }                                                                                                                    \
  int shmem_##N##_test_all_vector(T *ivars, size_t nelems, const int *status, int cmp, const T *cmp_values) {          \
    static const char rt[] = "shmem_" #N "_test_all_vector";                                                           \
    NEED(rt, nelems, cmp_values);                                                                                      \
    return !test_scan_##N(rt, SCAN_ALL, ivars, nelems, NULL, status, cmp, cmp_values, 0);                              \
  }                                                                                                                    \
  SHOAL_DEF_P2P_SCAN(T, N, wait_until, wait_scan, any, SCAN_ANY)                                                       \
  SHOAL_DEF_P2P_SCAN(T, N, test, test_scan, any, SCAN_ANY)                                                             \
  SHOAL_DEF_P2P_SCAN(T, N, wait_until, wait_scan, some, SCAN_SOME)                                                     \
  SHOAL_DEF_P2P_SCAN(T, N, test, test_scan, some, SCAN_SOME)                                                           \
  /* Deprecated 1.4: wait until *ivar != cmp_value. */                                                                 \
  void shmem_##N##_wait(T *ivar, T cmp_value) {                                                                        \
    static const char rt[] = "shmem_" #N "_wait";                                                                      \
    shoal_p2p_check(rt, "ivar", ivar, sizeof(T), sizeof(T));                                                           \
    SHOAL_WAIT_WHILE(!sat_##N(ivar, SHMEM_CMP_NE, cmp_value));                                                         \
  }
SHOAL_P2P_TYPES(SHOAL_DEF_P2P)

/* Deprecated 1.4 long-typed names. */
void shmem_wait(long *ivar, long cmp_value) {
  shoal_p2p_check("shmem_wait", "ivar", ivar, sizeof(long), sizeof(long));
  SHOAL_WAIT_WHILE(!sat_long(ivar, SHMEM_CMP_NE, cmp_value));
}
void(shmem_wait_until)(long *ivar, int cmp, long cmp_value) {
  CHECK_CMP("shmem_wait_until", cmp);
  shoal_p2p_check("shmem_wait_until", "ivar", ivar, sizeof(long), sizeof(long));
  SHOAL_WAIT_WHILE(!sat_long(ivar, cmp, cmp_value));
}

/* ---- signals ---- */
uint64_t shmem_signal_fetch(const uint64_t *sig_addr) {
  shoal_p2p_check("shmem_signal_fetch", "sig_addr", sig_addr, sizeof(uint64_t), sizeof(uint64_t));
  return __atomic_load_n(sig_addr, __ATOMIC_ACQUIRE);
}

uint64_t shmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t cmp_value) {
  static const char rt[] = "shmem_signal_wait_until";
  CHECK_CMP(rt, cmp);
  shoal_p2p_check(rt, "sig_addr", sig_addr, sizeof(uint64_t), sizeof(uint64_t));
  uint64_t v;
  SHOAL_WAIT_WHILE(!cmp_uint64(v = __atomic_load_n(sig_addr, __ATOMIC_ACQUIRE), cmp, cmp_value));
  return v;
}

/* Through the transport between nodes: the data, a fence (the provider orders no AMO after RMA), then the signal as
 * a non-fetching atomic. The nbi form leaves the data and the signal to complete at quiet. */
static __attribute__((noinline, cold)) void put_signal_tl(const char *rt, void *dest, const void *src, size_t nbytes,
                                                          uint64_t *sig_addr, const shoal_space_t *s, size_t off,
                                                          uint64_t signal, int sig_op, int pe, bool nbi, void *tx) {
  shoal_rma_put_tx(rt, tx, dest, src, nbytes, pe, nbi);
  shoal_comm_fence(rt, tx);
  (void)shoal_comm_amo(rt, tx, pe, s, off, sig_addr, sizeof(uint64_t),
                        sig_op == SHMEM_SIGNAL_SET ? SHOAL_TL_AMO_SET : SHOAL_TL_AMO_ADD, signal, 0);
}

/* Data first (a copy into pe's mapping, complete on return), then the signal with release order. */
static void put_signal(const char *rt, void *dest, const void *src, size_t nbytes, uint64_t *sig_addr,
                       uint64_t signal, int sig_op, int pe, bool nbi, void *tx) {
  if (SHOAL_UNLIKELY(sig_op != SHMEM_SIGNAL_SET && sig_op != SHMEM_SIGNAL_ADD))
    shoal_fatal(rt, "sig_op %d is not SHMEM_SIGNAL_SET or SHMEM_SIGNAL_ADD", sig_op);
  void *q;
  if (SHOAL_UNLIKELY(!shoal_amo_fast(rt, sig_addr, sizeof(uint64_t), pe, &q))) {
    size_t off;
    const shoal_space_t *s;
    if (sig_addr && !((uintptr_t)sig_addr & 7) &&
        shoal_space_far(s = shoal_space_find(sig_addr, sizeof(uint64_t), &off), pe)) {
      put_signal_tl(rt, dest, src, nbytes, sig_addr, s, off, signal, sig_op, pe, nbi, tx);
      return;
    }
    q = shoal_amo_addr_slow(rt, "sig_addr", sig_addr, sizeof(uint64_t), pe, true);
    if (!q) { /* the device heap of a PE of this node: the copy (complete on return), then the backend's atomic */
      shoal_rma_put(rt, dest, src, nbytes, pe);
      (void)shoal_amo_bits(rt, "sig_addr", sig_addr, sizeof(uint64_t),
                           sig_op == SHMEM_SIGNAL_SET ? SHOAL_TL_AMO_SET : SHOAL_TL_AMO_ADD, signal, 0, pe);
      return;
    }
  }
  uint64_t *sig = q;
  shoal_rma_put(rt, dest, src, nbytes, pe);
  if (sig_op == SHMEM_SIGNAL_SET)
    __atomic_store_n(sig, signal, __ATOMIC_RELEASE);
  else
    __atomic_fetch_add(sig, signal, __ATOMIC_RELEASE);
}

#define SHOAL_DEF_PUT_SIGNAL(NAME, CNAME, T, SIZE, NBI)                                                                \
  void NAME(T *dest, const T *source, size_t nelems, uint64_t *sig_addr, uint64_t signal, int sig_op, int pe) {        \
    put_signal(#NAME, dest, source, span_of(#NAME, nelems, SIZE), sig_addr, signal, sig_op, pe, NBI, NULL);            \
  }                                                                                                                    \
  void CNAME(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems, uint64_t *sig_addr, uint64_t signal,            \
             int sig_op, int pe) {                                                                                     \
    SHOAL_CHECK_CTX(#CNAME, ctx);                                                                                      \
    put_signal(#CNAME, dest, source, span_of(#CNAME, nelems, SIZE), sig_addr, signal, sig_op,                          \
               shoal_ctx_pe(#CNAME, ctx, pe), NBI, ctx->tl);                                                           \
  }
#define SHOAL_DEF_PUT_SIGNAL_TYPED(T, N)                                                                               \
  SHOAL_DEF_PUT_SIGNAL(shmem_##N##_put_signal, shmem_ctx_##N##_put_signal, T, sizeof(T), false)                        \
  SHOAL_DEF_PUT_SIGNAL(shmem_##N##_put_signal_nbi, shmem_ctx_##N##_put_signal_nbi, T, sizeof(T), true)
SHOAL_RMA_TYPES(SHOAL_DEF_PUT_SIGNAL_TYPED)
#define SHOAL_DEF_PUT_SIGNAL_SIZED(S)                                                                                  \
  SHOAL_DEF_PUT_SIGNAL(shmem_put##S##_signal, shmem_ctx_put##S##_signal, void, S / 8, false)                           \
  SHOAL_DEF_PUT_SIGNAL(shmem_put##S##_signal_nbi, shmem_ctx_put##S##_signal_nbi, void, S / 8, true)
SHOAL_RMA_SIZES(SHOAL_DEF_PUT_SIGNAL_SIZED)
SHOAL_DEF_PUT_SIGNAL(shmem_putmem_signal, shmem_ctx_putmem_signal, void, 1, false)
SHOAL_DEF_PUT_SIGNAL(shmem_putmem_signal_nbi, shmem_ctx_putmem_signal_nbi, void, 1, true)
