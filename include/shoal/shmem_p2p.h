/* shoal/shmem_p2p.h - part of <shmem.h>; include <shmem.h> instead.
 *
 * Contexts (spec 9.4), put-with-signal (spec 9.7), point-to-point synchronization (spec 9.10) and distributed locks
 * (spec 9.12). Waiting routines spin briefly, then yield the CPU between polls, so a waiting PE never starves the PE
 * it waits for when PEs outnumber cores. Errors stop the job with a one-line message naming routine and argument.
 */
#ifndef SHOAL_SHMEM_P2P_H
#define SHOAL_SHMEM_P2P_H
#ifdef __cplusplus
extern "C" {
#endif

/* ---- contexts (spec 9.4) ---- */
/** Create a context on SHMEM_TEAM_WORLD. options: 0 or any of SHMEM_CTX_SERIALIZED | SHMEM_CTX_PRIVATE |
 *  SHMEM_CTX_NOSTORE (hints on one node). Returns 0 and sets *ctx on success; otherwise returns non-zero and sets
 *  *ctx to SHMEM_CTX_INVALID (unknown option bits, out of memory) (spec 9.4.1). Thread safe. */
int shmem_ctx_create(long options, shmem_ctx_t *ctx);
/** Quiet ctx, then invalidate it: any later use of the handle stops the job ("not a valid context"). SHMEM_CTX_INVALID
 *  is a no-op; SHMEM_CTX_DEFAULT cannot be destroyed (fatal) (spec 9.4.3). */
void shmem_ctx_destroy(shmem_ctx_t ctx);
/** *team = the team ctx was created on (SHMEM_TEAM_WORLD for SHMEM_CTX_DEFAULT and shmem_ctx_create); returns 0.
 *  For SHMEM_CTX_INVALID sets *team = SHMEM_TEAM_INVALID and returns non-zero (spec 9.4.4). */
int shmem_ctx_get_team(shmem_ctx_t ctx, shmem_team_t *team);

/* ---- put-with-signal (spec 9.7) ---- */
/* Copies nelems elements (bytes for putmem) to dest on pe, then updates the 64-bit symmetric *sig_addr on pe
 * atomically: sig_op SHMEM_SIGNAL_SET stores signal, SHMEM_SIGNAL_ADD adds it. A PE that observes the new signal
 * value (wait_until, signal_wait_until, test, signal_fetch) also observes the data (release/acquire order). The
 * blocking and _nbi forms both complete before returning. Other sig_op values stop the job. The ctx forms take a PE
 * number of the context's team. */
#define SHOAL_DECL_PUT_SIGNAL_TYPED(T, N)                                                                              \
  void shmem_##N##_put_signal(T *dest, const T *source, size_t nelems, uint64_t *sig_addr, uint64_t signal,            \
                              int sig_op, int pe);                                                                     \
  void shmem_ctx_##N##_put_signal(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems, uint64_t *sig_addr,        \
                                  uint64_t signal, int sig_op, int pe);                                                \
  void shmem_##N##_put_signal_nbi(T *dest, const T *source, size_t nelems, uint64_t *sig_addr, uint64_t signal,        \
                                  int sig_op, int pe);                                                                 \
  void shmem_ctx_##N##_put_signal_nbi(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems, uint64_t *sig_addr,    \
                                      uint64_t signal, int sig_op, int pe);
SHOAL_RMA_TYPES(SHOAL_DECL_PUT_SIGNAL_TYPED)
#define SHOAL_DECL_PUT_SIGNAL_SIZED(S)                                                                                 \
  void shmem_put##S##_signal(void *dest, const void *source, size_t nelems, uint64_t *sig_addr, uint64_t signal,       \
                             int sig_op, int pe);                                                                      \
  void shmem_ctx_put##S##_signal(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, uint64_t *sig_addr,   \
                                 uint64_t signal, int sig_op, int pe);                                                 \
  void shmem_put##S##_signal_nbi(void *dest, const void *source, size_t nelems, uint64_t *sig_addr, uint64_t signal,   \
                                 int sig_op, int pe);                                                                  \
  void shmem_ctx_put##S##_signal_nbi(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems,                   \
                                     uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);
SHOAL_RMA_SIZES(SHOAL_DECL_PUT_SIGNAL_SIZED)
SHOAL_DECL_PUT_SIGNAL_SIZED(mem)
/** Value of the local symmetric signal *sig_addr, read atomically with acquire order (spec 9.7.3). */
uint64_t shmem_signal_fetch(const uint64_t *sig_addr);
/** Wait until *sig_addr (local, symmetric) compares to cmp_value by cmp (SHMEM_CMP_*); returns the value that
 *  satisfied the condition (spec 9.10.x shmem_signal_wait_until). */
uint64_t shmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t cmp_value);

/* ---- point-to-point synchronization (spec 9.10) ----
 * ivars: local symmetric objects (heap or global/static data), updated by other PEs through AMOs, puts or signals.
 * cmp: SHMEM_CMP_EQ/NE/GT/GE/LT/LE (anything else stops the job). status: optional (NULL = every element) array of
 * nelems ints, non-zero = element excluded. _vector forms compare element i with cmp_values[i].
 *   wait_until / test: one object; test returns 1 if the condition holds, else 0.
 *   _all: every included element (test_all: 1 if so, else 0; an empty set counts as satisfied).
 *   _any: index of one satisfied included element; SIZE_MAX when the set is empty (test_any: also when none holds).
 *         Successive calls rotate where they start, so every satisfied element is eventually returned.
 *   _some: writes the indices of every satisfied included element (at least one for wait) to indices[] and returns
 *          how many; 0 when the set is empty (test_some: also when none holds). */
#define SHOAL_P2P_TYPES(X)                                                                                             \
  X(short, short) X(int, int) X(long, long) X(long long, longlong) X(unsigned short, ushort) X(unsigned int, uint)     \
  X(unsigned long, ulong) X(unsigned long long, ulonglong) X(int32_t, int32) X(int64_t, int64) X(uint32_t, uint32)     \
  X(uint64_t, uint64) X(size_t, size) X(ptrdiff_t, ptrdiff)
#define SHOAL_DECL_P2P(T, N)                                                                                           \
  void shmem_##N##_wait_until(T *ivar, int cmp, T cmp_value);                                                          \
  void shmem_##N##_wait_until_all(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value);                   \
  size_t shmem_##N##_wait_until_any(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value);                 \
  size_t shmem_##N##_wait_until_some(T *ivars, size_t nelems, size_t *indices, const int *status, int cmp,             \
                                     T cmp_value);                                                                     \
  void shmem_##N##_wait_until_all_vector(T *ivars, size_t nelems, const int *status, int cmp, const T *cmp_values);    \
  size_t shmem_##N##_wait_until_any_vector(T *ivars, size_t nelems, const int *status, int cmp,                        \
                                           const T *cmp_values);                                                       \
  size_t shmem_##N##_wait_until_some_vector(T *ivars, size_t nelems, size_t *indices, const int *status, int cmp,      \
                                            const T *cmp_values);                                                      \
  int shmem_##N##_test(T *ivar, int cmp, T cmp_value);                                                                 \
  int shmem_##N##_test_all(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value);                          \
  size_t shmem_##N##_test_any(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value);                       \
  size_t shmem_##N##_test_some(T *ivars, size_t nelems, size_t *indices, const int *status, int cmp, T cmp_value);     \
  int shmem_##N##_test_all_vector(T *ivars, size_t nelems, const int *status, int cmp, const T *cmp_values);           \
  size_t shmem_##N##_test_any_vector(T *ivars, size_t nelems, const int *status, int cmp, const T *cmp_values);        \
  size_t shmem_##N##_test_some_vector(T *ivars, size_t nelems, size_t *indices, const int *status, int cmp,            \
                                      const T *cmp_values);
SHOAL_P2P_TYPES(SHOAL_DECL_P2P)

/* ---- distributed locks (spec 9.12) ----
 * lock: a symmetric long, 0 on every PE before first use and not otherwise accessed. The lock is a FIFO ticket lock
 * kept in PE 0's copy, so PEs acquire it in arrival order and none starves. Not reentrant. A word that no lock ever
 * holds (one not set to 0 first, with its "serving" half ahead of its "next" half) stops the job in all three
 * routines instead of a silent hang; SHMEM_DEBUG=1 also catches more outstanding tickets than PEs (below
 * SHMEM_THREAD_MULTIPLE). Other stale values cannot be told from a held lock. */
/** Block until the calling PE holds the lock (spec 9.12.1). */
void shmem_set_lock(long *lock);
/** Release the lock after completing this PE's outstanding puts and AMOs (quiet). Releasing a lock nobody holds
 *  stops the job (spec 9.12.2). */
void shmem_clear_lock(long *lock);
/** Take the lock only if it is free: returns 0 if the calling PE now holds it, 1 otherwise (spec 9.12.3). */
int shmem_test_lock(long *lock);

#ifdef __cplusplus
}
#endif

#if !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define SHOAL_ARG9(a, b, c, d, e, f, g, h, i, ...) i
#define SHOAL_GENERIC_P2P(x, pre, post)                                                                                \
  _Generic((x), short: pre##short##post, int: pre##int##post, long: pre##long##post, long long: pre##longlong##post,   \
           unsigned short: pre##ushort##post, unsigned int: pre##uint##post, unsigned long: pre##ulong##post,          \
           unsigned long long: pre##ulonglong##post)

#define shoal_put_signal7(d, s, n, sa, sv, op, pe) SHOAL_GENERIC_STD(*(d), shmem_, _put_signal)(d, s, n, sa, sv, op, pe)
#define shoal_put_signal8(c, d, s, n, sa, sv, op, pe)                                                                  \
  SHOAL_GENERIC_STD(*(d), shmem_ctx_, _put_signal)(c, d, s, n, sa, sv, op, pe)
#define shmem_put_signal(...) SHOAL_ARG9(__VA_ARGS__, shoal_put_signal8, shoal_put_signal7, ~)(__VA_ARGS__)
#define shoal_put_signal_nbi7(d, s, n, sa, sv, op, pe)                                                                 \
  SHOAL_GENERIC_STD(*(d), shmem_, _put_signal_nbi)(d, s, n, sa, sv, op, pe)
#define shoal_put_signal_nbi8(c, d, s, n, sa, sv, op, pe)                                                              \
  SHOAL_GENERIC_STD(*(d), shmem_ctx_, _put_signal_nbi)(c, d, s, n, sa, sv, op, pe)
#define shmem_put_signal_nbi(...) SHOAL_ARG9(__VA_ARGS__, shoal_put_signal_nbi8, shoal_put_signal_nbi7, ~)(__VA_ARGS__)

#define shmem_wait_until(ivar, cmp, v) SHOAL_GENERIC_P2P(*(ivar), shmem_, _wait_until)(ivar, cmp, v)
#define shmem_wait_until_all(ivars, n, st, cmp, v)                                                                     \
  SHOAL_GENERIC_P2P(*(ivars), shmem_, _wait_until_all)(ivars, n, st, cmp, v)
#define shmem_wait_until_any(ivars, n, st, cmp, v)                                                                     \
  SHOAL_GENERIC_P2P(*(ivars), shmem_, _wait_until_any)(ivars, n, st, cmp, v)
#define shmem_wait_until_some(ivars, n, idx, st, cmp, v)                                                               \
  SHOAL_GENERIC_P2P(*(ivars), shmem_, _wait_until_some)(ivars, n, idx, st, cmp, v)
#define shmem_wait_until_all_vector(ivars, n, st, cmp, vs)                                                             \
  SHOAL_GENERIC_P2P(*(ivars), shmem_, _wait_until_all_vector)(ivars, n, st, cmp, vs)
#define shmem_wait_until_any_vector(ivars, n, st, cmp, vs)                                                             \
  SHOAL_GENERIC_P2P(*(ivars), shmem_, _wait_until_any_vector)(ivars, n, st, cmp, vs)
#define shmem_wait_until_some_vector(ivars, n, idx, st, cmp, vs)                                                       \
  SHOAL_GENERIC_P2P(*(ivars), shmem_, _wait_until_some_vector)(ivars, n, idx, st, cmp, vs)
#define shmem_test(ivar, cmp, v) SHOAL_GENERIC_P2P(*(ivar), shmem_, _test)(ivar, cmp, v)
#define shmem_test_all(ivars, n, st, cmp, v) SHOAL_GENERIC_P2P(*(ivars), shmem_, _test_all)(ivars, n, st, cmp, v)
#define shmem_test_any(ivars, n, st, cmp, v) SHOAL_GENERIC_P2P(*(ivars), shmem_, _test_any)(ivars, n, st, cmp, v)
#define shmem_test_some(ivars, n, idx, st, cmp, v)                                                                     \
  SHOAL_GENERIC_P2P(*(ivars), shmem_, _test_some)(ivars, n, idx, st, cmp, v)
#define shmem_test_all_vector(ivars, n, st, cmp, vs)                                                                   \
  SHOAL_GENERIC_P2P(*(ivars), shmem_, _test_all_vector)(ivars, n, st, cmp, vs)
#define shmem_test_any_vector(ivars, n, st, cmp, vs)                                                                   \
  SHOAL_GENERIC_P2P(*(ivars), shmem_, _test_any_vector)(ivars, n, st, cmp, vs)
#define shmem_test_some_vector(ivars, n, idx, st, cmp, vs)                                                             \
  SHOAL_GENERIC_P2P(*(ivars), shmem_, _test_some_vector)(ivars, n, idx, st, cmp, vs)
#endif

#endif
