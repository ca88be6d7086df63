/* wait_test.c - every wait/test routine for every point-to-point synchronization type.
 *
 * Part 1 (local, exact): on a known array with satisfied and unsatisfied elements, for every cmp, three comparison
 * values (unsigned types see wrapped "negative" values) and status masks (none, some excluded, all excluded, nelems 0):
 * test, test_all/any/some and their _vector forms, and the wait forms whose condition already holds, against a
 * reference. test_any must return every satisfied element over repeated calls; _some must return exactly the set.
 * Part 2 (blocking, all PEs): every PE writes its element on every PE after a PE-dependent delay while the owner waits
 * with each wait form (and an excluded element that is never written). Part 3: global/static ivars, the C11 generic
 * forms and the deprecated shmem_wait names. */
#include "ptest.h"

#include <stdint.h>
#include <unistd.h>

#define NE 7
static int me, npes;

static int ref_cmp_ll(long double a, int cmp, long double b) { /* exact for every value these tests use */
  switch (cmp) {
  case SHMEM_CMP_EQ: return a == b;
  case SHMEM_CMP_NE: return a != b;
  case SHMEM_CMP_GT: return a > b;
  case SHMEM_CMP_GE: return a >= b;
  case SHMEM_CMP_LT: return a < b;
  default: return a <= b;
  }
}

/* Delay of PE me before writing to target: different for every pair, so owners really wait. */
static void stagger(int target) { usleep((useconds_t)(((me * 3 + target * 5) % 7) * 300)); }

#define DEF_WAIT(T, N)                                                                                                 \
  /* expected set of (v, st, cmp, x or xs) into e; returns its size; *incl = included elements */                      \
  static size_t expect_##N(const T *v, size_t n, const int *st, int cmp, T x, const T *xs, int *e, size_t *incl) {     \
    size_t k = 0;                                                                                                      \
    *incl = 0;                                                                                                         \
    for (size_t i = 0; i < n; i++) {                                                                                   \
      e[i] = 0;                                                                                                        \
      if (st && st[i]) continue;                                                                                       \
      ++*incl;                                                                                                         \
      T c = xs ? xs[i] : x;                                                                                            \
      e[i] = ref_cmp_ll((long double)v[i], cmp, (long double)c);                                                       \
      k += e[i];                                                                                                       \
    }                                                                                                                  \
    return k;                                                                                                          \
  }                                                                                                                    \
  static void local_##N(void) {                                                                                        \
    T *v = shmem_malloc(NE * sizeof(T));                                                                               \
    for (int i = 0; i < NE; i++) v[i] = (T)(i - 3);                                                                    \
    int masks[3][NE] = {{0}, {1, 0, 0, 1, 0, 0, 1}, {1, 1, 1, 1, 1, 1, 1}};                                            \
    T xs_base[3] = {(T)0, (T)-1, (T)2};                                                                                \
    /* the comparison itself, by hand: signed -3..3 or unsigned (huge, huge, huge, 0, 1, 2, 3) */                      \
    CHECK(shmem_##N##_test(&v[5], SHMEM_CMP_EQ, (T)2) == 1 && shmem_##N##_test(&v[5], SHMEM_CMP_NE, (T)2) == 0,        \
          #N " test EQ/NE");                                                                                           \
    CHECK(shmem_##N##_test(&v[4], SHMEM_CMP_GT, (T)0) == 1 && shmem_##N##_test(&v[3], SHMEM_CMP_GT, (T)0) == 0,        \
          #N " test GT");                                                                                              \
    CHECK(shmem_##N##_test(&v[0], SHMEM_CMP_LT, (T)0) == ((long double)(T)-1 < 0), #N " test LT on -3");               \
    CHECK(shmem_##N##_test(&v[6], SHMEM_CMP_LE, (T)3) && shmem_##N##_test(&v[6], SHMEM_CMP_GE, (T)3), #N " LE/GE");    \
    for (int cmp = SHMEM_CMP_EQ; cmp <= SHMEM_CMP_GE; cmp++)                                                           \
      for (int xi = 0; xi < 3; xi++)                                                                                   \
        for (int mi = 0; mi < 4; mi++)                                                                                 \
          for (int vec = 0; vec < 2; vec++) {                                                                          \
            size_t n = mi == 3 ? 0 : NE, incl, got;                                                                    \
            const int *st = mi == 0 || mi == 3 ? NULL : masks[mi];                                                     \
            T x = xs_base[xi], xs[NE];                                                                                 \
            for (int i = 0; i < NE; i++) xs[i] = (T)(x + (i % 2)); /* vector: alternate x and x + 1 */                 \
            int e[NE];                                                                                                 \
            size_t ne = expect_##N(v, n, st, cmp, x, vec ? xs : NULL, e, &incl);                                       \
            for (int i = 0; i < NE; i++)                                                                               \
              CHECK(shmem_##N##_test(&v[i], cmp, x) == ref_cmp_ll((long double)v[i], cmp, (long double)x),             \
                    #N " test(v[%d], %d)", i, cmp);                                                                    \
            int all = vec ? shmem_##N##_test_all_vector(v, n, st, cmp, xs) : shmem_##N##_test_all(v, n, st, cmp, x);   \
            CHECK(all == (ne == incl), #N " test_all%s cmp %d x %d mask %d: %d", vec ? "_vector" : "", cmp, xi, mi,    \
                  all);                                                                                                \
            /* test_any: always a satisfied element; repeated calls reach every satisfied element */                   \
            int hit[NE] = {0};                                                                                         \
            for (int rep = 0; rep < 3 * NE; rep++) {                                                                   \
              size_t k = vec ? shmem_##N##_test_any_vector(v, n, st, cmp, xs)                                          \
                             : shmem_##N##_test_any(v, n, st, cmp, x);                                                 \
              if (!ne) {                                                                                               \
                CHECK(k == SIZE_MAX, #N " test_any with nothing satisfied returned %zu", k);                           \
                break;                                                                                                 \
              }                                                                                                        \
              CHECK(k < n && e[k], #N " test_any returned %zu (cmp %d x %d mask %d vec %d)", k, cmp, xi, mi, vec);     \
              if (k < n) hit[k] = 1;                                                                                   \
            }                                                                                                          \
            for (size_t i = 0; i < n; i++) CHECK(hit[i] == e[i], #N " test_any never returned %zu", i);                \
            /* test_some: exactly the satisfied set; indices past the count untouched */                               \
            size_t idx[NE + 1];                                                                                        \
            for (int i = 0; i <= NE; i++) idx[i] = SIZE_MAX - 1;                                                       \
            got = vec ? shmem_##N##_test_some_vector(v, n, idx, st, cmp, xs)                                           \
                      : shmem_##N##_test_some(v, n, idx, st, cmp, x);                                                  \
            CHECK(got == ne, #N " test_some count %zu, want %zu", got, ne);                                            \
            int seen[NE] = {0};                                                                                        \
            for (size_t j = 0; j < got && j < NE; j++) {                                                               \
              CHECK(idx[j] < n && e[idx[j]] && !seen[idx[j]], #N " test_some index %zu", idx[j]);                      \
              if (idx[j] < n) seen[idx[j]] = 1;                                                                        \
            }                                                                                                          \
            for (size_t j = got; j <= NE; j++) CHECK(idx[j] == SIZE_MAX - 1, #N " test_some wrote idx[%zu]", j);       \
            /* the wait forms whose condition holds return at once with the same answers */                            \
            if (ne == incl) {                                                                                          \
              if (vec) shmem_##N##_wait_until_all_vector(v, n, st, cmp, xs);                                           \
              else shmem_##N##_wait_until_all(v, n, st, cmp, x);                                                       \
            }                                                                                                          \
            if (ne || !incl) {                                                                                         \
              size_t k = vec ? shmem_##N##_wait_until_any_vector(v, n, st, cmp, xs)                                    \
                             : shmem_##N##_wait_until_any(v, n, st, cmp, x);                                           \
              CHECK(incl ? k < n && e[k] : k == SIZE_MAX, #N " wait_until_any returned %zu", k);                       \
              got = vec ? shmem_##N##_wait_until_some_vector(v, n, idx, st, cmp, xs)                                   \
                        : shmem_##N##_wait_until_some(v, n, idx, st, cmp, x);                                          \
              CHECK(got == ne, #N " wait_until_some count %zu, want %zu", got, ne);                                    \
              for (size_t j = 0; j < got && j < NE; j++) CHECK(idx[j] < n && e[idx[j]], #N " wait_until_some index");  \
            }                                                                                                          \
          }                                                                                                            \
    shmem_free(v);                                                                                                     \
  }                                                                                                                    \
  /* Value PE p writes in round r: never 0, exact in every type. */                                                    \
  static T val_##N(int r, int p) { return (T)(r * 10 + p + 1); }                                                       \
  static void blocking_##N(void) {                                                                                     \
    T *iv = shmem_calloc((size_t)npes + 1, sizeof(T)); /* element npes is never written */                             \
    int *st = calloc((size_t)npes + 1, sizeof(int));                                                                   \
    size_t *idx = malloc(((size_t)npes + 1) * sizeof(size_t));                                                         \
    T *cv = malloc(((size_t)npes + 1) * sizeof(T));                                                                    \
    for (int r = 0; r < 7; r++) {                                                                                      \
      for (int p = 0; p <= npes; p++) iv[p] = 0, st[p] = 0, cv[p] = val_##N(r, p);                                     \
      st[npes] = 1;                                                                                                    \
      shmem_barrier_all();                                                                                             \
      for (int t = 0; t < npes; t++) {                                                                                 \
        int pe = (me + t) % npes;                                                                                      \
        stagger(pe);                                                                                                   \
        shmem_##N##_p(&iv[me], val_##N(r, me), pe);                                                                    \
      }                                                                                                                \
      size_t left = (size_t)npes;                                                                                      \
      switch (r) {                                                                                                     \
      case 0: shmem_##N##_wait_until_all(iv, (size_t)npes + 1, st, SHMEM_CMP_NE, 0); break;                            \
      case 1: shmem_##N##_wait_until_all_vector(iv, (size_t)npes + 1, st, SHMEM_CMP_EQ, cv); break;                    \
      case 2: case 3:                                                                                                  \
        while (left) {                                                                                                 \
          size_t k = r == 2 ? shmem_##N##_wait_until_any(iv, (size_t)npes + 1, st, SHMEM_CMP_GT, 0)                    \
                            : shmem_##N##_wait_until_any_vector(iv, (size_t)npes + 1, st, SHMEM_CMP_GE, cv);           \
          CHECK(k < (size_t)npes && !st[k], #N " round %d: wait_until_any returned %zu", r, k);                        \
          if (k >= (size_t)npes) break;                                                                                \
          CHECK(iv[k] == val_##N(r, (int)k), #N " round %d: element %zu is %lld", r, k, (long long)iv[k]);             \
          st[k] = 1, left--;                                                                                           \
        }                                                                                                              \
        CHECK(shmem_##N##_wait_until_any(iv, (size_t)npes + 1, st, SHMEM_CMP_GT, 0) == SIZE_MAX,                       \
              #N " wait_until_any on an empty set");                                                                   \
        break;                                                                                                         \
      case 4: case 5:                                                                                                  \
        while (left) {                                                                                                 \
          size_t got = r == 4 ? shmem_##N##_wait_until_some(iv, (size_t)npes + 1, idx, st, SHMEM_CMP_NE, 0)            \
                              : shmem_##N##_wait_until_some_vector(iv, (size_t)npes + 1, idx, st, SHMEM_CMP_EQ, cv);   \
          CHECK(got >= 1 && got <= left, #N " round %d: wait_until_some returned %zu", r, got);                        \
          if (got < 1 || got > left) break;                                                                            \
          for (size_t j = 0; j < got; j++) {                                                                           \
            CHECK(idx[j] < (size_t)npes && !st[idx[j]], #N " wait_until_some index %zu", idx[j]);                      \
            if (idx[j] < (size_t)npes) st[idx[j]] = 1;                                                                 \
          }                                                                                                            \
          left -= got;                                                                                                 \
        }                                                                                                              \
        CHECK(shmem_##N##_wait_until_some(iv, (size_t)npes + 1, idx, st, SHMEM_CMP_NE, 0) == 0,                        \
              #N " wait_until_some on an empty set");                                                                  \
        break;                                                                                                         \
      default:                                                                                                         \
        for (int p = 0; p < npes; p++) shmem_##N##_wait_until(&iv[p], SHMEM_CMP_GE, val_##N(r, p));                    \
      }                                                                                                                \
      for (int p = 0; p < npes; p++)                                                                                   \
        CHECK(iv[p] == val_##N(r, p), #N " round %d: element %d is %lld", r, p, (long long)iv[p]);                     \
      CHECK(iv[npes] == 0 && !shmem_##N##_test_all(iv, (size_t)npes + 1, NULL, SHMEM_CMP_NE, 0),                       \
            #N " the unwritten element counts when included");                                                         \
      shmem_barrier_all();                                                                                             \
    }                                                                                                                  \
    free(cv);                                                                                                          \
    free(idx);                                                                                                         \
    free(st);                                                                                                          \
    shmem_free(iv);                                                                                                    \
  }
SHOAL_P2P_TYPES(DEF_WAIT)

/* ---- Part 3: static ivars, C11 generic forms, deprecated names ---- */
static int s_flags[4];
static long s_long;
static unsigned short s_ushort;
static long long s_ll[4];

static void statics_generic_deprecated(void) {
  int st[4] = {0};
  size_t idx[4];
  long long cv[4];
  for (int r = 1; r <= 3; r++) {
    shmem_barrier_all();
    for (int t = 0; t < npes; t++) {
      int pe = (me + t) % npes;
      stagger(pe);
      shmem_int_atomic_set(&s_flags[me], r, pe);
      shmem_fence(); /* the flag is delivered before the counter */
      shmem_longlong_atomic_add(&s_ll[me], 1, pe);
      if (pe == (me + 1) % npes) {
        shmem_long_atomic_add(&s_long, 1, pe);
        shmem_ushort_p(&s_ushort, (unsigned short)r, pe);
      }
    }
    for (int p = 0; p < npes; p++) cv[p] = r;
    switch (r) {
    case 1: shmem_wait_until_all(s_flags, (size_t)npes, NULL, SHMEM_CMP_EQ, 1); /* generic */
            shmem_wait_until(&s_long, SHMEM_CMP_EQ, 1);
            shmem_wait_until(&s_ushort, SHMEM_CMP_EQ, 1);
            shmem_wait_until_all_vector(s_ll, (size_t)npes, NULL, SHMEM_CMP_EQ, cv);
            CHECK(shmem_test_all_vector(s_ll, (size_t)npes, NULL, SHMEM_CMP_EQ, cv) == 1, "generic test_all_vector");
            break;
    case 2: { /* deprecated: wait until != old value */
      for (int p = 0; p < npes; p++) shmem_int_wait(&s_flags[p], 1);
      shmem_long_wait(&s_long, 1);
      shmem_wait(&s_long, 1);
      (shmem_wait_until)(&s_long, SHMEM_CMP_EQ, 2); /* the deprecated long-typed function */
      shmem_ushort_wait(&s_ushort, 1);
      for (int p = 0; p < npes; p++) shmem_longlong_wait_until(&s_ll[p], SHMEM_CMP_EQ, 2);
      break;
    }
    default: {
      size_t left = (size_t)npes;
      while (left) {
        size_t n = shmem_wait_until_some_vector(s_ll, (size_t)npes, idx, st, SHMEM_CMP_EQ, cv);
        for (size_t j = 0; j < n; j++) st[idx[j]] = 1;
        CHECK(n >= 1 && n <= left, "generic wait_until_some_vector returned %zu", n);
        if (n < 1 || n > left) break;
        left -= n;
      }
      for (int p = 0; p < npes; p++) st[p] = 0;
      size_t k = shmem_wait_until_any(s_flags, (size_t)npes, st, SHMEM_CMP_EQ, 3);
      CHECK(k < (size_t)npes, "generic wait_until_any returned %zu", k);
      CHECK(shmem_test(&s_flags[0], SHMEM_CMP_EQ, 3) == 1 || s_flags[0] != 3, "generic test");
      shmem_wait_until(&s_ushort, SHMEM_CMP_EQ, 3);
      shmem_wait_until(&s_long, SHMEM_CMP_EQ, 3);
      CHECK(shmem_test_some(s_flags, (size_t)npes, idx, NULL, SHMEM_CMP_EQ, 3) == (size_t)npes, "generic test_some");
      CHECK(shmem_test_any(s_flags, (size_t)npes, NULL, SHMEM_CMP_LT, 0) == SIZE_MAX, "generic test_any none");
      CHECK(shmem_test_any_vector(s_ll, (size_t)npes, NULL, SHMEM_CMP_NE, cv) == SIZE_MAX, "generic test_any_vector");
      CHECK(shmem_test_some_vector(s_ll, (size_t)npes, idx, NULL, SHMEM_CMP_EQ, cv) == (size_t)npes,
            "generic test_some_vector");
      size_t k2 = shmem_wait_until_any_vector(s_ll, (size_t)npes, NULL, SHMEM_CMP_EQ, cv);
      CHECK(k2 < (size_t)npes, "generic wait_until_any_vector");
      CHECK(shmem_wait_until_some(s_flags, (size_t)npes, idx, NULL, SHMEM_CMP_EQ, 3) == (size_t)npes,
            "generic wait_until_some");
    }
    }
    for (int p = 0; p < npes; p++) {
      CHECK(s_flags[p] == r, "static flag %d is %d in round %d", p, s_flags[p], r);
      CHECK(s_ll[p] == r, "static counter %d is %lld in round %d", p, s_ll[p], r);
    }
    CHECK(s_long == r && s_ushort == r, "static long %ld / ushort %d in round %d", s_long, s_ushort, r);
    shmem_barrier_all();
  }
}

int main(void) {
  shmem_init();
  ptest_init();
  me = shmem_my_pe();
  npes = shmem_n_pes();
  if (npes > 4) {
    shmem_finalize();
    return 77;
  }
#define RUN_LOCAL(T, N) local_##N();
#define RUN_BLOCKING(T, N) blocking_##N();
  SHOAL_P2P_TYPES(RUN_LOCAL)
  SHOAL_P2P_TYPES(RUN_BLOCKING)
  statics_generic_deprecated();
  return ptest_finish("wait_test");
}
