/*
 * bench_p2p.c - atomics and point-to-point synchronization of an OpenSHMEM implementation (standard API only; the
 * method and the CSV columns: bench.h). PE 0 measures against PE 1; further PEs only take part in the barriers.
 * Tests (--only takes these names; bytes is the operand size):
 *   fetch_add_lat        shmem_long_atomic_fetch_add on PE 1, one at a time (usec per op)
 *   compare_swap_lat     shmem_long_atomic_compare_swap on PE 1
 *   compare_swap32_lat   shmem_int_atomic_compare_swap on PE 1 (checked first: a wrong result skips the row with
 *                        a "# compare_swap32_lat: wrong result" line)
 *   add_rate             back-to-back shmem_long_atomic_add to PE 1, quiet at the end (Mops/s)
 *   inc_rate             back-to-back shmem_long_atomic_inc to PE 1, quiet at the end
 *   fetch_add_contended  PE 0 and PE 1 both fetch_add one counter on PE 1 (Mops/s of the two)
 *   wait_until           ping-pong: shmem_long_p, shmem_long_wait_until for the answer (usec one way)
 *   signal               ping-pong: 8-byte shmem_putmem_signal (SHMEM_SIGNAL_SET), shmem_signal_wait_until (one
 *                        way; only where <shmem.h> defines SHMEM_SIGNAL_SET)
 *   lock                 PE 0 alone: shmem_set_lock + shmem_clear_lock (the lock lives on PE 0)
 *
 * Build and run: oshcc -O2 perf/bench_p2p.c -o bench_p2p && oshrun -n 2 ./bench_p2p   (see perf/README.md)
 */
#include "bench.h"

static long seq;
#ifdef SHMEM_SIGNAL_SET
static long pay_src;
#endif
static volatile long sink;
/* Symmetric objects, one cache line each (no false sharing between what the PEs write), in the symmetric heap. */
static long *ctr, *pp_flag, *lock, *payload;
static int *ctr32;
#ifdef SHMEM_SIGNAL_SET
static uint64_t *sig;
#endif

static void op_fadd(long k, size_t n) {
  (void)n;
  if (me == 0)
    for (long i = 0; i < k; i++) sink += shmem_long_atomic_fetch_add(ctr, 1, 1);
}
static void op_cswap(long k, size_t n) {
  (void)n;
  if (me == 0)
    for (long i = 0; i < k; i++) sink += shmem_long_atomic_compare_swap(ctr, -1, 0, 1);
}
static void op_cswap32(long k, size_t n) {
  (void)n;
  if (me == 0)
    for (long i = 0; i < k; i++) sink += shmem_int_atomic_compare_swap(ctr32, -1, 0, 1);
}
static void op_add(long k, size_t n) {
  (void)n;
  if (me == 0) {
    for (long i = 0; i < k; i++) shmem_long_atomic_add(ctr, 1, 1);
    shmem_quiet();
  }
}
static void op_inc(long k, size_t n) {
  (void)n;
  if (me == 0) {
    for (long i = 0; i < k; i++) shmem_long_atomic_inc(ctr, 1);
    shmem_quiet();
  }
}
static void op_fadd_contended(long k, size_t n) {
  (void)n;
  if (me < 2)
    for (long i = 0; i < k; i++) sink += shmem_long_atomic_fetch_add(ctr, 1, 1);
}
/* Round trip: PE 0 writes seq into PE 1's flag, PE 1 sees it and writes it back into PE 0's flag. */
static void op_p_pingpong(long k, size_t n) {
  (void)n;
  for (long i = 0; i < k && me < 2; i++) {
    seq++;
    if (me == 0) {
      shmem_long_p(pp_flag, seq, 1);
      shmem_long_wait_until(pp_flag, SHMEM_CMP_EQ, seq);
    } else {
      shmem_long_wait_until(pp_flag, SHMEM_CMP_EQ, seq);
      shmem_long_p(pp_flag, seq, 0);
    }
  }
}
#ifdef SHMEM_SIGNAL_SET
static void op_signal_pingpong(long k, size_t n) {
  (void)n;
  for (long i = 0; i < k && me < 2; i++) {
    seq++;
    pay_src = seq;
    if (me == 0) {
      shmem_putmem_signal(payload, &pay_src, sizeof *payload, sig, (uint64_t)seq, SHMEM_SIGNAL_SET, 1);
      shmem_signal_wait_until(sig, SHMEM_CMP_EQ, (uint64_t)seq);
    } else {
      shmem_signal_wait_until(sig, SHMEM_CMP_EQ, (uint64_t)seq);
      shmem_putmem_signal(payload, &pay_src, sizeof *payload, sig, (uint64_t)seq, SHMEM_SIGNAL_SET, 0);
    }
  }
}
#endif
static void op_lock(long k, size_t n) {
  (void)n;
  if (me == 0)
    for (long i = 0; i < k; i++) {
      shmem_set_lock(lock);
      shmem_clear_lock(lock);
    }
}

/* Does the 32-bit compare_swap work? PE 1's word holds 5: swapping 5 for 7 must return 5 and leave 7. Collective. */
static int cswap32_works(void) {
  *ctr32 = 5;
  shmem_barrier_all();
  int ok = 1;
  if (me == 0) {
    int old = shmem_int_atomic_compare_swap(ctr32, 5, 7, 1), now = shmem_int_g(ctr32, 1);
    ok = old == 5 && now == 7;
    if (!ok) printf("# compare_swap32_lat: wrong result (returned %d, target then %d; want 5, 7): not measured\n", old,
                    now);
  }
  ok = (int)bench_bcast_long(ok);
  *ctr32 = 0;
  shmem_barrier_all();
  return ok;
}

int main(int argc, char **argv) {
  bench_init(argc, argv, "bench_p2p",
             "fetch_add_lat compare_swap_lat compare_swap32_lat add_rate inc_rate fetch_add_contended wait_until "
             "signal lock", "");
  if (npes < 2) {
    if (me == 0) fprintf(stderr, "bench_p2p: needs at least 2 PEs (got %d)\n", npes);
    shmem_finalize();
    return 1;
  }
  char *area = shmem_calloc(8, 64);
  if (!area) {
    fprintf(stderr, "bench_p2p: PE %d: shmem_calloc failed\n", me);
    shmem_global_exit(1);
  }
  ctr = (long *)area, pp_flag = (long *)(area + 64), lock = (long *)(area + 128), payload = (long *)(area + 192);
  ctr32 = (int *)(area + 320);
#ifdef SHMEM_SIGNAL_SET
  sig = (uint64_t *)(area + 256);
#endif
  shmem_barrier_all();

  static const struct {
    const char *name;
    bench_op op;
    size_t bytes;
    double ops, div; /* operations per iteration (Mops/s); time per row = per iteration / div */
  } tests[] = {
    {"fetch_add_lat", op_fadd, 8, 1, 1},
    {"compare_swap_lat", op_cswap, 8, 1, 1},
    {"compare_swap32_lat", op_cswap32, 4, 1, 1},
    {"add_rate", op_add, 8, 1, 1},
    {"inc_rate", op_inc, 8, 1, 1},
    {"fetch_add_contended", op_fadd_contended, 8, 2, 1},
    {"wait_until", op_p_pingpong, 8, 1, 2},
#ifdef SHMEM_SIGNAL_SET
    {"signal", op_signal_pingpong, 8, 1, 2},
#endif
    {"lock", op_lock, 0, 1, 1},
  };
  for (size_t t = 0; t < sizeof tests / sizeof tests[0]; t++) {
    if (!bench_selected(tests[t].name)) continue;
    if (tests[t].op == op_cswap32 && !cswap32_works()) continue;
    bench_stat s = bench_measure(tests[t].op, tests[t].bytes);
    s.med /= tests[t].div, s.p10 /= tests[t].div, s.p90 /= tests[t].div;
    bench_row(tests[t].name, tests[t].bytes, s, 0, tests[t].ops, "");
  }
  shmem_barrier_all();
  shmem_free(area);
  shmem_finalize();
  return 0;
}
