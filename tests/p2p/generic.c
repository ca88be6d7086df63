/* generic.c - every C11 type-generic form of the point-to-point API, default and ctx arities, on several types,
 * with values checked; compiling this file is the positive half of the generic test (generic_reject.c is the other). */
#include "ptest.h"

static int me, npes;

#define AMO_CHECKS(T, ctx)                                                                                             \
  do {                                                                                                                 \
    T *d = shmem_calloc(2, sizeof(T)), f = 0;                                                                          \
    int pe = (me + 1) % npes, from = (me + npes - 1) % npes;                                                           \
    shmem_atomic_set(d, (T)5, pe);                                                                                     \
    shmem_atomic_set(ctx, d + 1, (T)1, pe);                                                                            \
    shmem_ctx_quiet(ctx); /* barrier_all completes the default context's operations only */                            \
    shmem_barrier_all();                                                                                               \
    CHECK(shmem_atomic_fetch(d, from) == (T)5 && shmem_atomic_fetch(ctx, d + 1, from) == (T)1, #T " set/fetch");       \
    shmem_barrier_all();                                                                                               \
    CHECK(shmem_atomic_swap(d, (T)6, pe) == (T)5 && shmem_atomic_swap(ctx, d, (T)7, pe) == (T)6, #T " swap");          \
    shmem_atomic_fetch_nbi(&f, d, pe);                                                                                 \
    CHECK(f == (T)7, #T " fetch_nbi");                                                                                 \
    shmem_atomic_fetch_nbi(ctx, &f, d + 1, pe);                                                                        \
    CHECK(f == (T)1, #T " ctx fetch_nbi");                                                                             \
    shmem_atomic_swap_nbi(&f, d, (T)8, pe);                                                                            \
    CHECK(f == (T)7, #T " swap_nbi");                                                                                  \
    shmem_atomic_swap_nbi(ctx, &f, d, (T)9, pe);                                                                       \
    CHECK(f == (T)8, #T " ctx swap_nbi");                                                                              \
    shmem_barrier_all();                                                                                               \
    shmem_free(d);                                                                                                     \
  } while (0)

#define STD_CHECKS(T, ctx)                                                                                             \
  do {                                                                                                                 \
    T *d = shmem_calloc(1, sizeof(T)), f = 0;                                                                          \
    int pe = (me + 1) % npes;                                                                                          \
    CHECK(shmem_atomic_compare_swap(d, (T)0, (T)10, pe) == (T)0, #T " cswap");                                         \
    CHECK(shmem_atomic_compare_swap(ctx, d, (T)0, (T)11, pe) == (T)10, #T " ctx cswap (fails)");                       \
    CHECK(shmem_atomic_fetch_inc(d, pe) == (T)10 && shmem_atomic_fetch_inc(ctx, d, pe) == (T)11, #T " finc");          \
    shmem_atomic_inc(d, pe);                                                                                           \
    shmem_atomic_inc(ctx, d, pe);                                                                                      \
    shmem_quiet(), shmem_ctx_quiet(ctx); /* two contexts: ordered by quiet only (spec 9.4, 9.11) */                    \
    CHECK(shmem_atomic_fetch_add(d, (T)2, pe) == (T)14 && shmem_atomic_fetch_add(ctx, d, (T)3, pe) == (T)16,           \
          #T " fadd");                                                                                                 \
    shmem_atomic_add(d, (T)4, pe);                                                                                     \
    shmem_atomic_add(ctx, d, (T)5, pe); /* 28 */                                                                       \
    shmem_quiet(), shmem_ctx_quiet(ctx);                                                                               \
    shmem_atomic_compare_swap_nbi(&f, d, (T)28, (T)30, pe);                                                            \
    CHECK(f == (T)28, #T " cswap_nbi");                                                                                \
    shmem_atomic_compare_swap_nbi(ctx, &f, d, (T)30, (T)31, pe);                                                       \
    CHECK(f == (T)30, #T " ctx cswap_nbi");                                                                            \
    shmem_atomic_fetch_inc_nbi(&f, d, pe);                                                                             \
    shmem_atomic_fetch_inc_nbi(ctx, &f, d, pe);                                                                        \
    CHECK(f == (T)32, #T " fetch_inc_nbi");                                                                            \
    shmem_atomic_fetch_add_nbi(&f, d, (T)2, pe);                                                                       \
    shmem_atomic_fetch_add_nbi(ctx, &f, d, (T)2, pe);                                                                  \
    CHECK(f == (T)35, #T " fetch_add_nbi");                                                                            \
    shmem_barrier_all();                                                                                               \
    CHECK(*d == (T)37, #T " total %lld", (long long)*d);                                                               \
    shmem_barrier_all();                                                                                               \
    shmem_free(d);                                                                                                     \
  } while (0)

#define BIT_CHECKS(T, ctx)                                                                                             \
  do {                                                                                                                 \
    T *d = shmem_calloc(1, sizeof(T)), f = 0;                                                                          \
    int pe = (me + 1) % npes;                                                                                          \
    CHECK(shmem_atomic_fetch_or(d, (T)0x0f, pe) == 0 && shmem_atomic_fetch_or(ctx, d, (T)0xf0, pe) == (T)0x0f,         \
          #T " or");                                                                                                   \
    CHECK(shmem_atomic_fetch_and(d, (T)0x3c, pe) == (T)0xff && shmem_atomic_fetch_and(ctx, d, (T)0x1f, pe) == (T)0x3c, \
          #T " and");                                                                                                  \
    CHECK(shmem_atomic_fetch_xor(d, (T)0x01, pe) == (T)0x1c && shmem_atomic_fetch_xor(ctx, d, (T)0x03, pe) == (T)0x1d, \
          #T " xor");                                                                                                  \
    shmem_atomic_or(d, (T)0x100, pe);                                                                                  \
    shmem_quiet();                                                                                                     \
    shmem_atomic_or(ctx, d, (T)0x200, pe);                                                                             \
    shmem_ctx_quiet(ctx);                                                                                              \
    shmem_atomic_and(d, (T)0x3ff, pe);                                                                                 \
    shmem_quiet();                                                                                                     \
    shmem_atomic_and(ctx, d, (T)0x30f, pe);                                                                            \
    shmem_ctx_quiet(ctx);                                                                                              \
    shmem_atomic_xor(d, (T)0x1, pe);                                                                                   \
    shmem_quiet();                                                                                                     \
    shmem_atomic_xor(ctx, d, (T)0x2, pe); /* 0x31e & 0x30f = 0x30e, ^ 3 = 0x30d */                                     \
    shmem_ctx_quiet(ctx);                                                                                              \
    shmem_atomic_fetch_or_nbi(&f, d, (T)0, pe);                                                                        \
    CHECK(f == (T)0x30d, #T " fetch_or_nbi %llx", (unsigned long long)f);                                              \
    shmem_atomic_fetch_or_nbi(ctx, &f, d, (T)0x1000, pe);                                                              \
    shmem_atomic_fetch_and_nbi(&f, d, (T)0x1fff, pe);                                                                  \
    shmem_atomic_fetch_and_nbi(ctx, &f, d, (T)0x1fff, pe);                                                             \
    shmem_atomic_fetch_xor_nbi(&f, d, (T)0x1000, pe);                                                                  \
    shmem_atomic_fetch_xor_nbi(ctx, &f, d, (T)0, pe);                                                                  \
    CHECK(f == (T)0x30d, #T " fetch_xor_nbi %llx", (unsigned long long)f);                                             \
    shmem_barrier_all();                                                                                               \
    shmem_free(d);                                                                                                     \
  } while (0)

int main(void) {
  shmem_init();
  ptest_init();
  me = shmem_my_pe();
  npes = shmem_n_pes();
  shmem_ctx_t ctx;
  CHECK(shmem_ctx_create(0, &ctx) == 0, "ctx_create");
  AMO_CHECKS(int, ctx);
  AMO_CHECKS(unsigned long long, ctx);
  AMO_CHECKS(float, ctx);
  AMO_CHECKS(double, SHMEM_CTX_DEFAULT);
  AMO_CHECKS(int64_t, ctx);
  AMO_CHECKS(size_t, ctx);
  STD_CHECKS(int, ctx);
  STD_CHECKS(long, ctx);
  STD_CHECKS(long long, SHMEM_CTX_DEFAULT);
  STD_CHECKS(unsigned int, ctx);
  STD_CHECKS(ptrdiff_t, ctx);
  STD_CHECKS(uint64_t, ctx);
  BIT_CHECKS(unsigned int, ctx);
  BIT_CHECKS(unsigned long, ctx);
  BIT_CHECKS(unsigned long long, ctx);
  BIT_CHECKS(int32_t, ctx);
  BIT_CHECKS(int64_t, ctx);
  BIT_CHECKS(uint32_t, ctx);

  /* put_signal generic, both arities, then wait/test generic on short and unsigned long long */
  static uint64_t sig;
  static short sflags[4];
  static unsigned long long uflags[4];
  static double dbuf[8];
  double src[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  int next = (me + 1) % npes;
  shmem_put_signal(dbuf, src, 4, &sig, 1, SHMEM_SIGNAL_ADD, next);
  shmem_put_signal_nbi(ctx, dbuf + 4, src + 4, 4, &sig, 1, SHMEM_SIGNAL_ADD, next);
  shmem_ctx_quiet(ctx);
  shmem_wait_until(&sig, SHMEM_CMP_GE, 2);
  for (int i = 0; i < 8; i++) CHECK(dbuf[i] == i + 1, "put_signal generic dbuf[%d] = %g", i, dbuf[i]);
  CHECK(shmem_signal_fetch(&sig) == 2, "two SIGNAL_ADDs of 1");
  shmem_barrier_all();
  shmem_put_signal(ctx, &sflags[me], &sflags[me], 0, &sig, 3, SHMEM_SIGNAL_SET, next); /* 0 elements: signal only */
  shmem_ctx_quiet(ctx); /* the set before the add below: two contexts are ordered by quiet only (spec 9.4) */
  shmem_put_signal_nbi((float *)NULL, (const float *)NULL, 0, &sig, 4, SHMEM_SIGNAL_ADD, next);
  CHECK(shmem_signal_wait_until(&sig, SHMEM_CMP_EQ, 7) == 7, "signal only");
  for (int p = 0; p < npes && p < 4; p++) {
    shmem_short_p(&sflags[me], (short)(me + 1), p);
    shmem_ulonglong_atomic_set(&uflags[me], (unsigned long long)me + 1, p);
  }
  int n = npes < 4 ? npes : 4;
  if (me < 4) {
    shmem_wait_until_all(sflags, (size_t)n, NULL, SHMEM_CMP_GT, 0);
    unsigned long long cv[4] = {1, 2, 3, 4};
    shmem_wait_until_all_vector(uflags, (size_t)n, NULL, SHMEM_CMP_EQ, cv);
    CHECK(shmem_test(&sflags[0], SHMEM_CMP_EQ, 1) == 1, "generic test short");
    CHECK(shmem_test_all(uflags, (size_t)n, NULL, SHMEM_CMP_GE, 1ULL) == 1, "generic test_all ulonglong");
  }
  shmem_barrier_all();
  shmem_ctx_destroy(ctx);
  return ptest_finish("generic");
}
