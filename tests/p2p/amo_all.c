/* amo_all.c - every AMO routine for every type of its table (standard, extended, bitwise), in default, ctx, C11
 * generic and _nbi forms, under contention: every PE hits every PE (itself included) at once. Checks exact totals,
 * that fetch_inc hands out every ticket exactly once, that compare_swap loops lose no update, that swap passes every
 * token on exactly once, that fetch never sees a torn value, and the same on global/static variables. */
#include "ptest.h"

/* Iterations per round: fewer where a peer is reached over the network (each AMO a round trip), same checks. */
static int ITER = 2000;
static int me, npes;
static shmem_ctx_t ctx;

/* Target of round t: every PE hits the same PE at once (the owner included), for maximal contention. */
#define TARGET(t) (t)

/* ---- standard types: add/inc families, unique tickets, compare_swap loops ---- */
/* Increments per iteration of slot 0: 1 (fetch_add) + 2 (add) + 1 (inc) + 1 (fetch_inc) + 3 (ctx add) + 4 (generic
 * fetch_add) + 5 (generic ctx add) + 6 (fetch_add_nbi) + 1 (fetch_inc_nbi) + 7 (ctx generic fetch_add_nbi). */
#define STD_PER_ITER 31
#define DEF_STD(T, N)                                                                                                  \
  static void std_##N(void) {                                                                                          \
    T *v = shmem_calloc(4, sizeof(T));                                                                                 \
    unsigned char *seen = shmem_calloc((size_t)npes * ITER, 1);                                                        \
    for (int t = 0; t < npes; t++) {                                                                                   \
      int pe = TARGET(t);                                                                                              \
      T last = 0;                                                                                                      \
      for (int i = 0; i < ITER; i++) {                                                                                 \
        T a = shmem_##N##_atomic_fetch_add(&v[0], 1, pe);                                                              \
        shmem_##N##_atomic_add(&v[0], 2, pe);                                                                          \
        shmem_##N##_atomic_inc(&v[0], pe);                                                                             \
        T b = shmem_##N##_atomic_fetch_inc(&v[0], pe);                                                                 \
        shmem_ctx_##N##_atomic_add(ctx, &v[0], 3, pe);                                                                 \
        shmem_ctx_quiet(ctx); /* two contexts: ordered by quiet only (spec 9.4, 9.11) */                               \
        T c = shmem_atomic_fetch_add(&v[0], (T)4, pe);                                                                 \
        shmem_atomic_add(ctx, &v[0], (T)5, pe);                                                                        \
        shmem_ctx_quiet(ctx);                                                                                          \
        T f1 = (T)-1, f2 = (T)-1, f3 = (T)-1;                                                                          \
        shmem_##N##_atomic_fetch_add_nbi(&f1, &v[0], 6, pe);                                                           \
        shmem_ctx_##N##_atomic_fetch_inc_nbi(ctx, &f2, &v[0], pe);                                                     \
        shmem_atomic_fetch_add_nbi(ctx, &f3, &v[0], (T)7, pe);                                                         \
        shmem_quiet();                                                                                                 \
        /* this PE's own updates are ordered: each fetch is at least the previous one plus its own increment */        \
        CHECK(a >= last && b >= a + 4 && c >= b + 4 && f1 >= c + 9 && f2 >= f1 + 6 && f3 >= f2 + 1,                    \
              #N " fetch order %lld %lld %lld %lld %lld %lld (last %lld)", (long long)a, (long long)b, (long long)c,   \
              (long long)f1, (long long)f2, (long long)f3, (long long)last);                                           \
        last = f3 + 7;                                                                                                 \
        /* slot 1: tickets; each one must be handed out once, in this PE's order */                                    \
        T u = i % 3 == 0 ? shmem_##N##_atomic_fetch_inc(&v[1], pe)                                                     \
            : i % 3 == 1 ? shmem_atomic_fetch_inc(ctx, &v[1], pe)                                                      \
                         : shmem_atomic_fetch_inc(&v[1], pe);                                                          \
        int in_range = (unsigned long long)(long long)u < (unsigned long long)npes * ITER;                             \
        CHECK(in_range, #N " ticket %lld out of range", (long long)u);                                                 \
        if (in_range) shmem_char_p((char *)&seen[u], 1, pe);                                                           \
        /* slot 2: increment by compare_swap, retrying on conflict */                                                  \
        T cur = shmem_##N##_atomic_fetch(&v[2], pe);                                                                   \
        for (int tries = 0;; tries++) {                                                                                \
          T old;                                                                                                       \
          if (tries % 3 == 0) old = shmem_##N##_atomic_compare_swap(&v[2], cur, (T)(cur + 1), pe);                     \
          else if (tries % 3 == 1) old = shmem_atomic_compare_swap(ctx, &v[2], cur, (T)(cur + 1), pe);                 \
          else {                                                                                                       \
            old = (T)-1;                                                                                               \
            shmem_atomic_compare_swap_nbi(&old, &v[2], cur, (T)(cur + 1), pe);                                         \
            shmem_quiet();                                                                                             \
          }                                                                                                            \
          if (old == cur) break;                                                                                       \
          CHECK(old > cur, #N " compare_swap returned %lld, older than %lld", (long long)old, (long long)cur);         \
          cur = old;                                                                                                   \
        }                                                                                                              \
        /* slot 3: ctx compare_swap_nbi that must fail (cond never matches), returning the current value */            \
        T keep = (T)-2;                                                                                                \
        shmem_ctx_##N##_atomic_compare_swap_nbi(ctx, &keep, &v[3], (T)99, (T)5, pe);                                   \
        shmem_ctx_quiet(ctx);                                                                                          \
        CHECK(keep == 0, #N " failing compare_swap_nbi fetched %lld", (long long)keep);                                \
      }                                                                                                                \
    }                                                                                                                  \
    shmem_barrier_all();                                                                                               \
    long long want = (long long)npes * ITER;                                                                           \
    CHECK((long long)v[0] == want * STD_PER_ITER, #N " add total %lld, want %lld", (long long)v[0],                    \
          want * STD_PER_ITER);                                                                                        \
    CHECK((long long)v[1] == want, #N " tickets %lld, want %lld", (long long)v[1], want);                              \
    CHECK((long long)v[2] == want, #N " compare_swap total %lld, want %lld", (long long)v[2], want);                   \
    CHECK(v[3] == 0, #N " failing compare_swap changed the value to %lld", (long long)v[3]);                           \
    for (long long k = 0; k < want; k++) CHECK(seen[k] == 1, #N " ticket %lld handed out %d times?", k, seen[k]);      \
    shmem_barrier_all();                                                                                               \
    shmem_free(seen);                                                                                                  \
    shmem_free(v);                                                                                                     \
  }
SHOAL_AMO_STD_TYPES(DEF_STD)

/* ---- extended types: fetch/set (no torn values), swap (every token passed on exactly once) ---- */
/* Token k of PE p: a value exact in every type (float included), never 0. */
#define TOKEN(p, k) ((p) * 10000 + (k) + 1) /* k < SWAPS < 10000 */
#define SWAPS (4 * ITER)
#define DEF_EXT(T, N)                                                                                                  \
  static void ext_##N(void) {                                                                                          \
    T *v = shmem_calloc(2, sizeof(T));                                                                                 \
    long long *acc = shmem_calloc(1, sizeof(long long)); /* sum of tokens swapped out, on each target */               \
    for (int t = 0; t < npes; t++) {                                                                                   \
      int pe = TARGET(t);                                                                                              \
      long long got = 0;                                                                                               \
      for (int i = 0; i < SWAPS; i++) {                                                                                \
        T tok = (T)TOKEN(me, i), r = (T)-1;                                                                            \
        switch (i % 4) {                                                                                               \
        case 0: r = shmem_##N##_atomic_swap(&v[0], tok, pe); break;                                                    \
        case 1: r = shmem_atomic_swap(ctx, &v[0], tok, pe); break;                                                     \
        case 2: shmem_##N##_atomic_swap_nbi(&r, &v[0], tok, pe); shmem_quiet(); break;                                 \
        default: shmem_atomic_swap_nbi(ctx, &r, &v[0], tok, pe); shmem_ctx_quiet(ctx); break;                          \
        }                                                                                                              \
        long long rl = (long long)r;                                                                                   \
        CHECK((T)rl == r && rl >= 0 && rl <= TOKEN(npes - 1, SWAPS - 1), #N " swap returned %g", (double)r);           \
        got += rl;                                                                                                     \
      }                                                                                                                \
      shmem_longlong_atomic_add(acc, got, pe);                                                                         \
      for (int i = 0; i < ITER; i++) {                                                                                 \
        T tok = (T)TOKEN(me, i);                                                                                       \
        /* slot 1: concurrent set and fetch: only whole values ever seen */                                            \
        if (i % 2) shmem_##N##_atomic_set(&v[1], tok, pe);                                                             \
        else shmem_atomic_set(ctx, &v[1], tok, pe);                                                                    \
        shmem_ctx_quiet(ctx);                                                                                          \
        T f = (T)-1, g = (T)-1, h = (T)-1;                                                                             \
        f = shmem_##N##_atomic_fetch(&v[1], pe);                                                                       \
        g = shmem_atomic_fetch(ctx, &v[1], pe);                                                                        \
        shmem_atomic_fetch_nbi(&h, &v[1], pe);                                                                         \
        shmem_quiet();                                                                                                 \
        T all[3] = {f, g, h};                                                                                          \
        for (int j = 0; j < 3; j++) {                                                                                  \
          long long x = (long long)all[j];                                                                             \
          CHECK((T)x == all[j] && x >= 1 && x <= TOKEN(npes - 1, ITER - 1) && x % 10000 <= ITER,                       \
                #N " fetch saw %g", (double)all[j]);                                                                   \
        }                                                                                                              \
      }                                                                                                                \
    }                                                                                                                  \
    shmem_barrier_all();                                                                                               \
    long long put = 0;                                                                                                 \
    for (int p = 0; p < npes; p++)                                                                                     \
      for (int i = 0; i < SWAPS; i++) put += TOKEN(p, i);                                                              \
    CHECK(*acc + (long long)v[0] == put, #N " swap: %lld out + %lld left != %lld in", *acc, (long long)v[0], put);     \
    shmem_barrier_all();                                                                                               \
    shmem_free(acc);                                                                                                   \
    shmem_free(v);                                                                                                     \
  }
SHOAL_AMO_EXT_TYPES(DEF_EXT)

/* ---- bitwise types: every PE owns 8 bits (npes <= 4 keeps them within 32) ---- */
#define BIT(T, p, i) ((T)(1ull << ((p) * 8 + (i) % 8))) /* shifted unsigned: no signed overflow */
#define DEF_BIT(T, N)                                                                                                  \
  static void bit_##N(void) {                                                                                          \
    T *v = shmem_calloc(3, sizeof(T));                                                                                 \
    v[1] = (T)~(T)0; /* slot 1 starts with every bit set, the and target */                                            \
    shmem_barrier_all();                                                                                               \
    for (int t = 0; t < npes; t++) {                                                                                   \
      int pe = TARGET(t);                                                                                              \
      T mine = 0, mx = 0;                                                                                              \
      for (int i = 0; i < ITER; i++) {                                                                                 \
        T b = BIT(T, me, i), o0 = 0, o1 = 0, o2 = 0;                                                                   \
        switch (i % 4) {                                                                                               \
        case 0:                                                                                                        \
          o0 = shmem_##N##_atomic_fetch_or(&v[0], b, pe);                                                              \
          o1 = shmem_##N##_atomic_fetch_and(&v[1], (T)~b, pe);                                                         \
          o2 = shmem_##N##_atomic_fetch_xor(&v[2], b, pe);                                                             \
          break;                                                                                                       \
        case 1:                                                                                                        \
          shmem_ctx_##N##_atomic_or(ctx, &v[0], b, pe);                                                                \
          shmem_##N##_atomic_and(&v[1], (T)~b, pe);                                                                    \
          shmem_atomic_xor(ctx, &v[2], b, pe);                                                                         \
          shmem_quiet(), shmem_ctx_quiet(ctx); /* two contexts: ordered by quiet only */                               \
          o0 = shmem_atomic_fetch_or(&v[0], (T)0, pe);                                                                 \
          o1 = shmem_atomic_fetch_and(ctx, &v[1], (T)~(T)0, pe);                                                       \
          o2 = b ^ shmem_atomic_fetch_xor(&v[2], (T)0, pe);                                                            \
          break;                                                                                                       \
        case 2:                                                                                                        \
          shmem_##N##_atomic_fetch_or_nbi(&o0, &v[0], b, pe);                                                          \
          shmem_ctx_##N##_atomic_fetch_and_nbi(ctx, &o1, &v[1], (T)~b, pe);                                            \
          shmem_##N##_atomic_fetch_xor_nbi(&o2, &v[2], b, pe);                                                         \
          shmem_quiet();                                                                                               \
          break;                                                                                                       \
        default:                                                                                                       \
          shmem_atomic_or(&v[0], b, pe);                                                                               \
          shmem_atomic_and(&v[1], (T)~b, pe);                                                                          \
          shmem_ctx_##N##_atomic_xor(ctx, &v[2], b, pe);                                                               \
          shmem_quiet();                                                                                               \
          shmem_atomic_fetch_or_nbi(ctx, &o0, &v[0], (T)0, pe);                                                        \
          shmem_atomic_fetch_and_nbi(&o1, &v[1], (T)~(T)0, pe);                                                        \
          shmem_atomic_fetch_xor_nbi(ctx, &o2, &v[2], (T)0, pe);                                                       \
          shmem_ctx_quiet(ctx);                                                                                        \
          o2 ^= b;                                                                                                     \
          break;                                                                                                       \
        }                                                                                                              \
        /* this PE's own bits (nobody else touches them) as this PE left them: before this iteration's update for      \
         * the fetch-first forms (cases 0, 2), after it for the update-then-fetch ones (1, 3); xor was adjusted */     \
        T own = (T)(0xffull << (me * 8)), want = i % 2 ? (T)(mine | b) : mine;                                         \
        CHECK((o0 & own) == want, #N " or: old %llx, want %llx", (unsigned long long)o0, (unsigned long long)want);    \
        CHECK((~o1 & own) == want, #N " and: old %llx", (unsigned long long)o1);                                       \
        CHECK((o2 & own) == mx, #N " xor: old %llx, want %llx", (unsigned long long)o2, (unsigned long long)mx);       \
        mine |= b;                                                                                                     \
        mx ^= b;                                                                                                       \
      }                                                                                                                \
    }                                                                                                                  \
    shmem_barrier_all();                                                                                               \
    T all = 0, x = 0; /* every PE applied its ITER bits once to every target */                                        \
    for (int p = 0; p < npes; p++)                                                                                     \
      for (int i = 0; i < ITER; i++) all |= BIT(T, p, i), x ^= BIT(T, p, i);                                           \
    CHECK(v[0] == all, #N " or: %llx, want %llx", (unsigned long long)v[0], (unsigned long long)all);                  \
    CHECK(v[1] == (T)~all, #N " and: %llx, want %llx", (unsigned long long)v[1], (unsigned long long)(T)~all);         \
    CHECK(v[2] == x, #N " xor: %llx, want %llx", (unsigned long long)v[2], (unsigned long long)x);                     \
    shmem_barrier_all();                                                                                               \
    shmem_free(v);                                                                                                     \
  }
SHOAL_AMO_BIT_TYPES(DEF_BIT)

/* ---- global/static variables as AMO targets ---- */
static long g_long;
static unsigned int g_uint;
static double g_dbl;
static uint64_t g_bits;
static int g_ticket;
static unsigned char g_seen[4 * 2000]; /* 4 PEs x the largest ITER */

static void statics(void) {
  for (int t = 0; t < npes; t++) {
    int pe = TARGET(t);
    for (int i = 0; i < ITER; i++) {
      shmem_long_atomic_add(&g_long, 2, pe);
      shmem_atomic_inc(ctx, &g_uint, pe);
      shmem_uint64_atomic_or(&g_bits, (uint64_t)1 << (me * 16 + i % 16), pe);
      int u = shmem_int_atomic_fetch_inc(&g_ticket, pe);
      if (u >= 0 && u < npes * ITER) shmem_char_p((char *)&g_seen[u], 1, pe);
      double old = shmem_double_atomic_swap(&g_dbl, (double)TOKEN(me, i), pe);
      CHECK(old == 0 || (old >= 1 && old <= TOKEN(npes - 1, ITER - 1)), "static double swap returned %g", old);
    }
  }
  shmem_ctx_quiet(ctx); /* barrier_all completes the default context's operations only */
  shmem_barrier_all();
  CHECK(g_long == 2L * npes * ITER, "static long: %ld", g_long);
  CHECK(g_uint == (unsigned)(npes * ITER), "static uint: %u", g_uint);
  CHECK(g_ticket == npes * ITER, "static tickets: %d", g_ticket);
  for (int k = 0; k < npes * ITER; k++) CHECK(g_seen[k] == 1, "static ticket %d seen %d", k, g_seen[k]);
  uint64_t want = 0;
  for (int p = 0; p < npes; p++) want |= (uint64_t)0xffff << (p * 16);
  CHECK(g_bits == want, "static bits %llx", (unsigned long long)g_bits);
  CHECK(shmem_double_atomic_fetch(&g_dbl, me) == g_dbl, "static double fetch of own copy");
}

int main(void) {
  shmem_init();
  ptest_init();
  me = shmem_my_pe();
  npes = shmem_n_pes();
  if (npes > 4) {
    if (me == 0) fprintf(stderr, "amo_all: at most 4 PEs (bit patterns)\n");
    shmem_finalize();
    return 77;
  }
  CHECK(shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) == 0 && ctx != SHMEM_CTX_INVALID, "ctx_create");
  {
    long *probe = shmem_malloc(sizeof(long));
    for (int p = 0; p < npes; p++)
      if (!shmem_ptr(probe, p)) ITER = 100;
    shmem_free(probe);
  }
#define STD_RUN(T, N) std_##N();
#define EXT_RUN(T, N) ext_##N();
#define BIT_RUN(T, N) bit_##N();
  SHOAL_AMO_STD_TYPES(STD_RUN)
  SHOAL_AMO_EXT_TYPES(EXT_RUN)
  SHOAL_AMO_BIT_TYPES(BIT_RUN)
  statics();
  shmem_ctx_destroy(ctx);
  return ptest_finish("amo_all");
}
