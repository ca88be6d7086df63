/*
 * bench_rma.c - RMA latency, bandwidth and message rate of an OpenSHMEM implementation, OSU-style (standard API only;
 * the method and the CSV columns: bench.h). 2 PEs or more: PE 0 measures against PE 1; the others only take part in
 * the barriers. Tests (--only takes these names), each for every size from --min-size to --max-size:
 *   put_lat      shmem_putmem + shmem_quiet, one at a time (usec per put)
 *   put_nbi_lat  shmem_putmem_nbi + shmem_quiet, one at a time
 *   get_lat      shmem_getmem
 *   get_nbi_lat  shmem_getmem_nbi + shmem_quiet
 *   put_bw       a window of WINDOW shmem_putmem_nbi, then shmem_quiet (usec per put, GB/s)
 *   get_bw       a window of WINDOW shmem_getmem_nbi, then shmem_quiet
 *   put_bibw     PE 0 and PE 1 both put windows to each other at once (GB/s of the two directions)
 *   pingpong     shmem_putmem, shmem_fence, shmem_long_p of a flag; the peer shmem_long_wait_until's it and answers
 *                the same way (usec one way: half the round trip)
 *   put_signal   ping-pong with shmem_putmem_signal (SHMEM_SIGNAL_SET) and shmem_signal_wait_until (one way; only
 *                where <shmem.h> defines SHMEM_SIGNAL_SET)
 *   msg_rate     8-byte shmem_putmem_nbi, WINDOW in flight, then quiet (Mops/s; one row)
 *   memcpy       memcpy between two private buffers on PE 0 (the machine's reference)
 *
 * Build and run: oshcc -O2 perf/bench_rma.c -o bench_rma && oshrun -n 2 ./bench_rma   (see perf/README.md)
 */
#include "bench.h"

#define WINDOW 64

static char *sbuf, *dbuf, *pa, *pb; /* symmetric buf_size; private max_size */
static long flag, seq;
#ifdef SHMEM_SIGNAL_SET
static uint64_t sig;
#endif
static void *(*volatile memcpy_fn)(void *, const void *, size_t) = memcpy; /* not optimised away */

#define SLOT_MAX 16384 /* a window of puts up to this size goes to distinct slots, larger ones to one buffer (OSU) */
static size_t buf_size;
static char *slot(char *b, long i, size_t n) { return n <= SLOT_MAX ? b + (size_t)(i % WINDOW) * n : b; }

static void op_put_lat(long k, size_t n) {
  if (me == 0)
    for (long i = 0; i < k; i++) { shmem_putmem(dbuf, sbuf, n, 1); shmem_quiet(); }
}
static void op_put_nbi_lat(long k, size_t n) {
  if (me == 0)
    for (long i = 0; i < k; i++) { shmem_putmem_nbi(dbuf, sbuf, n, 1); shmem_quiet(); }
}
static void op_get_lat(long k, size_t n) {
  if (me == 0)
    for (long i = 0; i < k; i++) shmem_getmem(dbuf, sbuf, n, 1);
}
static void op_get_nbi_lat(long k, size_t n) {
  if (me == 0)
    for (long i = 0; i < k; i++) { shmem_getmem_nbi(dbuf, sbuf, n, 1); shmem_quiet(); }
}
/* k puts in windows of WINDOW, each to its own slot (as OSU's osu_oshm_put_bw), a quiet per window. */
static void put_window(long k, size_t n, int to) {
  for (long i = 0; i < k;) {
    long w = k - i < WINDOW ? k - i : WINDOW;
    for (long j = 0; j < w; j++) shmem_putmem_nbi(slot(dbuf, j, n), slot(sbuf, j, n), n, to);
    shmem_quiet();
    i += w;
  }
}
static void op_put_bw(long k, size_t n) {
  if (me == 0) put_window(k, n, 1);
}
static void op_get_bw(long k, size_t n) {
  if (me != 0) return;
  for (long i = 0; i < k;) {
    long w = k - i < WINDOW ? k - i : WINDOW;
    for (long j = 0; j < w; j++) shmem_getmem_nbi(slot(dbuf, j, n), slot(sbuf, j, n), n, 1);
    shmem_quiet();
    i += w;
  }
}
static void op_put_bibw(long k, size_t n) {
  if (me < 2) put_window(k, n, 1 - me);
}
static void op_pingpong(long k, size_t n) {
  for (long i = 0; i < k && me < 2; i++) {
    seq++;
    if (me == 1) shmem_long_wait_until(&flag, SHMEM_CMP_GE, seq);
    shmem_putmem(dbuf, sbuf, n, 1 - me);
    shmem_fence();
    shmem_long_p(&flag, seq, 1 - me);
    if (me == 0) shmem_long_wait_until(&flag, SHMEM_CMP_GE, seq);
  }
}
#ifdef SHMEM_SIGNAL_SET
static void op_put_signal(long k, size_t n) {
  for (long i = 0; i < k && me < 2; i++) {
    seq++;
    if (me == 1) shmem_signal_wait_until(&sig, SHMEM_CMP_GE, (uint64_t)seq);
    shmem_putmem_signal(dbuf, sbuf, n, &sig, (uint64_t)seq, SHMEM_SIGNAL_SET, 1 - me);
    if (me == 0) shmem_signal_wait_until(&sig, SHMEM_CMP_GE, (uint64_t)seq);
  }
}
#endif
static void op_memcpy(long k, size_t n) {
  if (me == 0)
    for (long i = 0; i < k; i++) memcpy_fn(i & 1 ? pa : pb, i & 1 ? pb : pa, n);
}

int main(int argc, char **argv) {
  bench_init(argc, argv, "bench_rma",
             "put_lat put_nbi_lat get_lat get_nbi_lat put_bw get_bw put_bibw pingpong put_signal msg_rate memcpy", "");
  if (npes < 2) {
    if (me == 0) fprintf(stderr, "bench_rma: needs at least 2 PEs (got %d)\n", npes);
    shmem_finalize();
    return 1;
  }
  buf_size = max_size > WINDOW * SLOT_MAX ? max_size : WINDOW * SLOT_MAX;
  sbuf = shmem_malloc(buf_size);
  dbuf = shmem_malloc(buf_size);
  pa = malloc(max_size);
  pb = malloc(max_size);
  if (!sbuf || !dbuf || !pa || !pb) {
    fprintf(stderr, "bench_rma: PE %d: cannot allocate 2 x %zu bytes (SHMEM_SYMMETRIC_SIZE)\n", me, buf_size);
    shmem_global_exit(1);
  }
  bench_fill(sbuf, buf_size, 1);
  bench_fill(dbuf, buf_size, 2);
  bench_fill(pa, max_size, 3);
  bench_fill(pb, max_size, 4);
  shmem_barrier_all();

  static const struct {
    const char *name;
    bench_op op;
    int dirs;  /* GB/s counts bytes x dirs */
    double div; /* time per row: per iteration / div (ping-pongs: one way) */
  } tests[] = {
    {"put_lat", op_put_lat, 1, 1},         {"put_nbi_lat", op_put_nbi_lat, 1, 1},
    {"get_lat", op_get_lat, 1, 1},         {"get_nbi_lat", op_get_nbi_lat, 1, 1},
    {"put_bw", op_put_bw, 1, 1},           {"get_bw", op_get_bw, 1, 1},
    {"put_bibw", op_put_bibw, 2, 1},       {"pingpong", op_pingpong, 1, 2},
#ifdef SHMEM_SIGNAL_SET
    {"put_signal", op_put_signal, 1, 2},
#endif
    {"memcpy", op_memcpy, 1, 1},
  };
  for (size_t t = 0; t < sizeof tests / sizeof tests[0]; t++) {
    if (!bench_selected(tests[t].name)) continue;
    for (size_t n = min_size; n <= max_size; n *= 2) {
      bench_stat s = bench_measure(tests[t].op, n);
      s.med /= tests[t].div, s.p10 /= tests[t].div, s.p90 /= tests[t].div;
      bench_row(tests[t].name, n, s, (double)n * tests[t].dirs, tests[t].dirs, "");
    }
  }
  if (bench_selected("msg_rate")) bench_row("msg_rate", 8, bench_measure(op_put_bw, 8), 8, 1, "");

  shmem_barrier_all();
  shmem_free(dbuf);
  shmem_free(sbuf);
  free(pa);
  free(pb);
  shmem_finalize();
  return 0;
}
