// cxx_generic.cpp - shmem.h from C++: the generic names (shmem_put, shmem_g, shmem_atomic_fetch_add, ...) resolve as
// overloads to the typed routines, in default and ctx forms, for several types (function templates instantiate them,
// as C++ code does). Every result is checked; a ring over all PEs, so each PE reads what its left neighbour wrote.
#include <shmem.h>
#include <shmemx.h>

#include <cstdio>

#include "../multi/test_common.h"

static int me, npes, right, left;

template <typename T> static T val(int pe, int i) { return (T)(pe * 10 + i + 1); }

template <typename T> static void rma(shmem_ctx_t ctx, const char *tn) {
  const int n = 6;
  T *d = (T *)shmem_calloc(4 * n, sizeof(T));
  T src[2 * n], got[2 * n];
  for (int i = 0; i < 2 * n; i++) src[i] = val<T>(me, i);
  shmem_put(d, src, n, right);
  shmem_put(ctx, d + n, src, n, right);
  shmem_put_nbi(d + 2 * n, src, 1, right);
  shmem_put_nbi(ctx, d + 2 * n + 1, src + 1, 1, right);
  shmem_p(d + 2 * n + 2, val<T>(me, 7), right);
  shmem_p(ctx, d + 2 * n + 3, val<T>(me, 8), right);
  shmem_iput(d + 3 * n, src, 2, 1, 3, right); // d[3n], d[3n+2], d[3n+4] = src[0..2]
  shmem_quiet();
  shmem_ctx_quiet(ctx);
  shmem_barrier_all();
  for (int i = 0; i < n; i++)
    CHECK(d[i] == val<T>(left, i) && d[n + i] == val<T>(left, i), "%s put/ctx put element %d", tn, i);
  CHECK(d[2 * n] == val<T>(left, 0) && d[2 * n + 1] == val<T>(left, 1), "%s put_nbi", tn);
  CHECK(d[2 * n + 2] == val<T>(left, 7) && d[2 * n + 3] == val<T>(left, 8), "%s p", tn);
  CHECK(d[3 * n] == val<T>(left, 0) && d[3 * n + 2] == val<T>(left, 1) && d[3 * n + 4] == val<T>(left, 2) &&
            d[3 * n + 1] == (T)0,
        "%s iput", tn);
  // Read back what this PE wrote into its right neighbour.
  for (int i = 0; i < 2 * n; i++) got[i] = (T)0;
  shmem_get(got, d, n, right);
  shmem_get(ctx, got + n, d + n, 2, right);
  for (int i = 0; i < n; i++) CHECK(got[i] == val<T>(me, i), "%s get element %d", tn, i);
  CHECK(got[n] == val<T>(me, 0) && got[n + 1] == val<T>(me, 1), "%s ctx get", tn);
  shmem_get_nbi(got, d + 2 * n + 2, 1, right);
  shmem_get_nbi(ctx, got + 1, d + 2 * n + 3, 1, right);
  shmem_quiet();
  CHECK(got[0] == val<T>(me, 7) && got[1] == val<T>(me, 8), "%s get_nbi", tn);
  CHECK(shmem_g(d + 2 * n + 2, right) == val<T>(me, 7) && shmem_g(ctx, d + 2 * n + 3, right) == val<T>(me, 8),
        "%s g", tn);
  shmem_iget(got, d + 3 * n, 1, 2, 3, right);
  shmem_iget(ctx, got + 3, d + 3 * n, 1, 2, 1, right);
  CHECK(got[0] == val<T>(me, 0) && got[1] == val<T>(me, 1) && got[2] == val<T>(me, 2) && got[3] == val<T>(me, 0),
        "%s iget", tn);
  shmem_barrier_all();
  shmem_free(d);
}

template <typename T> static void amo(shmem_ctx_t ctx, const char *tn) {
  T *d = (T *)shmem_calloc(2, sizeof(T));
  T f = 0;
  shmem_barrier_all();
  // Every PE adds to PE 0's counter: default and ctx forms, fetching and not.
  shmem_atomic_add(d, (T)1, 0);
  shmem_atomic_add(ctx, d, (T)2, 0);
  shmem_atomic_inc(d, 0);
  shmem_atomic_inc(ctx, d, 0);
  (void)shmem_atomic_fetch_add(d, (T)3, 0);
  (void)shmem_atomic_fetch_add(ctx, d, (T)4, 0);
  (void)shmem_atomic_fetch_inc(d, 0);
  shmem_atomic_fetch_inc_nbi(&f, d, 0);
  shmem_atomic_fetch_add_nbi(ctx, &f, d, (T)5, 0); // 1 + 2 + 1 + 1 + 3 + 4 + 1 + 1 + 5 = 19 per PE
  shmem_barrier_all();
  CHECK(shmem_atomic_fetch(d, 0) == (T)(19 * npes) && shmem_atomic_fetch(ctx, d, 0) == (T)(19 * npes),
        "%s fetch after adds: %lld, expected %d", tn, (long long)shmem_atomic_fetch(d, 0), 19 * npes);
  shmem_barrier_all();
  // Each PE owns its right neighbour's d[1]: set, swap, compare_swap.
  shmem_atomic_set(d + 1, (T)3, right);
  CHECK(shmem_atomic_swap(d + 1, (T)4, right) == (T)3, "%s swap", tn);
  CHECK(shmem_atomic_swap(ctx, d + 1, (T)5, right) == (T)4, "%s ctx swap", tn);
  CHECK(shmem_atomic_compare_swap(d + 1, (T)5, (T)6, right) == (T)5, "%s compare_swap", tn);
  CHECK(shmem_atomic_compare_swap(ctx, d + 1, (T)0, (T)9, right) == (T)6, "%s ctx compare_swap (no swap)", tn);
  shmem_atomic_compare_swap_nbi(&f, d + 1, (T)6, (T)7, right);
  CHECK(f == (T)6, "%s compare_swap_nbi", tn);
  shmem_atomic_swap_nbi(ctx, &f, d + 1, (T)8, right);
  CHECK(f == (T)7, "%s ctx swap_nbi", tn);
  shmem_atomic_fetch_nbi(&f, d + 1, right);
  CHECK(f == (T)8, "%s fetch_nbi", tn);
  shmem_atomic_set(ctx, d + 1, (T)2, right);
  shmem_barrier_all();
  CHECK(d[1] == (T)2, "%s ctx set: %lld", tn, (long long)d[1]);
  shmem_barrier_all();
  shmem_free(d);
}

template <typename T> static void bitwise(const char *tn) {
  T *d = (T *)shmem_calloc(1, sizeof(T));
  T f = 0;
  shmem_atomic_set(d, (T)0xf0, right);
  CHECK(shmem_atomic_fetch_or(d, (T)0x0f, right) == (T)0xf0, "%s fetch_or", tn);
  shmem_atomic_and(d, (T)0x3c, right);
  shmem_atomic_xor(SHMEM_CTX_DEFAULT, d, (T)0x01, right);
  shmem_atomic_fetch_xor_nbi(&f, d, (T)0, right);
  CHECK(f == (T)0x3d, "%s and/xor: %llx", tn, (unsigned long long)f);
  CHECK(shmem_atomic_fetch_and(d, (T)0x0f, right) == (T)0x3d && shmem_atomic_fetch(d, right) == (T)0x0d,
        "%s fetch_and", tn);
  shmem_barrier_all();
  shmem_free(d);
}

template <typename T> static void colls(const char *tn) {
  const int n = 3;
  T *src = (T *)shmem_calloc(n * npes, sizeof(T)), *dst = (T *)shmem_calloc(n * npes, sizeof(T));
  for (int i = 0; i < n * npes; i++) src[i] = val<T>(me, i);
  shmem_barrier_all();
  // A barrier after each check: the next collective may write into a PE's dst before that PE has read it.
  shmem_broadcast(SHMEM_TEAM_WORLD, dst, src, n, npes - 1);
  for (int i = 0; i < n; i++) CHECK(dst[i] == val<T>(npes - 1, i), "%s broadcast element %d", tn, i);
  shmem_barrier_all();
  shmem_fcollect(SHMEM_TEAM_WORLD, dst, src, n);
  for (int p = 0; p < npes; p++)
    for (int i = 0; i < n; i++) CHECK(dst[p * n + i] == val<T>(p, i), "%s fcollect block %d element %d", tn, p, i);
  shmem_barrier_all();
  shmem_collect(SHMEM_TEAM_WORLD, dst, src, 1);
  for (int p = 0; p < npes; p++) CHECK(dst[p] == val<T>(p, 0), "%s collect element %d", tn, p);
  shmem_barrier_all();
  shmem_alltoall(SHMEM_TEAM_WORLD, dst, src, n);
  for (int p = 0; p < npes; p++) CHECK(dst[p * n] == val<T>(p, me * n), "%s alltoall from %d", tn, p);
  shmem_barrier_all();
  shmem_sum_reduce(SHMEM_TEAM_WORLD, dst, src, n);
  for (int i = 0; i < n; i++) {
    T want = 0;
    for (int p = 0; p < npes; p++) want += val<T>(p, i);
    CHECK(dst[i] == want, "%s sum_reduce element %d", tn, i);
  }
  shmem_barrier_all();
  shmem_max_reduce(SHMEM_TEAM_WORLD, dst, src, 1);
  CHECK(dst[0] == val<T>(npes - 1, 0), "%s max_reduce", tn);
  shmem_barrier_all();
  shmem_free(src);
  shmem_free(dst);
}

int main() {
  test_name = "cxx_generic";
  shmem_init();
  me = shmem_my_pe();
  npes = shmem_n_pes();
  right = (me + 1) % npes;
  left = (me + npes - 1) % npes;
  shmem_ctx_t ctx;
  CHECK(shmem_ctx_create(0, &ctx) == 0, "shmem_ctx_create");
  rma<int>(ctx, "int");
  rma<double>(ctx, "double");
  rma<unsigned char>(ctx, "unsigned char");
  rma<long long>(ctx, "long long");
  rma<int64_t>(ctx, "int64_t");
  amo<int>(ctx, "int");
  amo<unsigned long>(ctx, "unsigned long");
  amo<size_t>(ctx, "size_t");
  bitwise<unsigned int>("unsigned int");
  bitwise<uint64_t>("uint64_t");
  colls<int>("int");
  colls<double>("double");
  colls<short>("short");

  // Bitwise reductions, put-with-signal, wait_until and test on long.
  unsigned *bs = (unsigned *)shmem_malloc(sizeof(unsigned)), *bd = (unsigned *)shmem_malloc(sizeof(unsigned));
  *bs = 1u << me;
  shmem_barrier_all();
  shmem_or_reduce(SHMEM_TEAM_WORLD, bd, bs, 1);
  CHECK(*bd == (npes >= 32 ? ~0u : (1u << npes) - 1), "or_reduce: %x", *bd);
  long *buf = (long *)shmem_calloc(4, sizeof(long));
  uint64_t *sig = (uint64_t *)shmem_calloc(1, sizeof(uint64_t));
  long msg[4] = {me + 100L, me + 200L, me + 300L, me + 400L};
  shmem_barrier_all();
  shmem_put_signal(buf, msg, 2, sig, 1, SHMEM_SIGNAL_ADD, right);
  shmem_put_signal_nbi(ctx, buf + 2, msg + 2, 2, sig, 1, SHMEM_SIGNAL_ADD, right);
  shmem_ctx_quiet(ctx);
  shmem_signal_wait_until(sig, SHMEM_CMP_EQ, 2);
  CHECK(buf[0] == left + 100 && buf[1] == left + 200 && buf[2] == left + 300 && buf[3] == left + 400,
        "put_signal data: %ld %ld %ld %ld", buf[0], buf[1], buf[2], buf[3]);
  int *flag = (int *)shmem_calloc(1, sizeof(int));
  long *lflag = (long *)shmem_calloc(1, sizeof(long));
  shmem_barrier_all();
  shmem_p(flag, 7, right);
  shmem_p(lflag, 8L, right);
  shmem_wait_until(flag, SHMEM_CMP_EQ, 7);
  shmem_wait_until(lflag, SHMEM_CMP_GE, 8L); // the deprecated C routine of this name
  CHECK(shmem_test(flag, SHMEM_CMP_EQ, 7) == 1 && shmem_test(lflag, SHMEM_CMP_NE, 8L) == 0, "test");
  int st[1] = {0};
  CHECK(shmem_test_any(flag, 1, st, SHMEM_CMP_EQ, 7) == 0, "test_any");
  shmem_wait_until_all(flag, 1, nullptr, SHMEM_CMP_EQ, 7);
  // Deprecated 1.4 generic names.
  shmem_barrier_all();
  shmem_add(lflag, 2L, right);
  shmem_inc(lflag, right);
  shmem_barrier_all();
  CHECK(shmem_fetch(lflag, right) == 11 && shmem_fadd(lflag, 1L, right) == 11 && shmem_finc(lflag, right) == 12,
        "deprecated add/inc/fetch/fadd/finc");
  shmem_barrier_all();
  shmem_ctx_destroy(ctx);
  shmem_free(bs);
  shmem_free(bd);
  shmem_free(buf);
  shmem_free(sig);
  shmem_free(flag);
  shmem_free(lflag);
  if (me == 0) printf("cxx_generic: generic names as C++ overloads on %d PEs\n", npes);
  return test_finish();
}
