/*
 * bench_p2p.c - point-to-point synchronization and AMO latency/throughput of an OpenSHMEM implementation (standard
 * OpenSHMEM 1.5 API only, so that it also runs on other implementations).
 *
 * PE 0 measures, PE 1 is the target; further PEs only take part in the barriers. Every number is the MEDIAN of NBATCH
 * batches; a batch times K iterations with clock_gettime(CLOCK_MONOTONIC) and divides by K, K being calibrated (which
 * also warms up, on the fastest of 3 trial batches per step) so that a batch takes about 2 ms x --iters-scale. Rows:
 *   fetch_add latency          PE 0: shmem_long_atomic_fetch_add on PE 1, one at a time (usec per op)
 *   compare_swap latency       PE 0: shmem_long_atomic_compare_swap on PE 1
 *   add throughput             PE 0: back-to-back shmem_long_atomic_add to PE 1, quiet at the end (Mops/s)
 *   fetch_add contended        PE 0 and PE 1 both fetch_add one counter on PE 1 (aggregate Mops/s of the two PEs)
 *   p+wait_until one-way       ping-pong: shmem_long_p, then shmem_long_wait_until for the answer (half round trip)
 *   put_signal one-way         ping-pong: shmem_putmem_signal of 8 bytes (SHMEM_SIGNAL_SET), shmem_signal_wait_until
 *                              (half round trip; only where <shmem.h> defines SHMEM_SIGNAL_SET)
 *   set_lock+clear_lock        PE 0 alone takes and releases a lock (uncontended; the lock lives on PE 0)
 *
 * Usage: bench_p2p [--iters-scale F] [--csv]
 * Build and run: oshcc -O2 perf/bench_p2p.c -o bench_p2p && oshrun -n 2 ./bench_p2p   (see perf/README.md)
 */
#define _POSIX_C_SOURCE 200809L
#include <shmem.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NBATCH 31
#define KMAX (1L << 24)

static int me, npes, csv;
static double target_s = 2e-3;
static long bc_val, seq, pay_src;
static volatile long sink;
/* Symmetric objects, one cache line each (no false sharing between what the PEs write), in the symmetric heap. */
static long *ctr, *pp_flag, *lock, *payload;
#ifdef SHMEM_SIGNAL_SET
static uint64_t *sig;
#endif

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* PE 0's value of v on every PE. Collective. */
static long bcast_long(long v) {
  if (me == 0)
    for (int pe = 1; pe < npes; pe++) shmem_long_p(&bc_val, v, pe);
  if (me == 0) bc_val = v;
  shmem_barrier_all();
  long r = bc_val;
  shmem_barrier_all();
  return r;
}

/* ---- timed operations: op(k) runs k iterations; called by every PE ---- */
typedef void (*op_fn)(long k);

static void op_fadd(long k) {
  if (me == 0)
    for (long i = 0; i < k; i++) sink += shmem_long_atomic_fetch_add(ctr, 1, 1);
}
static void op_cswap(long k) {
  if (me == 0)
    for (long i = 0; i < k; i++) sink += shmem_long_atomic_compare_swap(ctr, -1, 0, 1);
}
static void op_add(long k) {
  if (me == 0) {
    for (long i = 0; i < k; i++) shmem_long_atomic_add(ctr, 1, 1);
    shmem_quiet();
  }
}
static void op_fadd_contended(long k) {
  if (me < 2)
    for (long i = 0; i < k; i++) sink += shmem_long_atomic_fetch_add(ctr, 1, 1);
}
/* Round trip: PE 0 writes seq into PE 1's flag, PE 1 sees it and writes it back into PE 0's flag. */
static void op_p_pingpong(long k) {
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
static void op_signal_pingpong(long k) {
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
static void op_lock(long k) {
  if (me == 0)
    for (long i = 0; i < k; i++) {
      shmem_set_lock(lock);
      shmem_clear_lock(lock);
    }
}

/* One batch of k iterations on every PE; PE 0 returns seconds per iteration. */
static double batch(op_fn op, long k) {
  shmem_barrier_all();
  double t0 = now();
  op(k);
  double t = (now() - t0) / k;
  shmem_barrier_all();
  return t;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median seconds per iteration of op (meaningful on PE 0). Collective. */
static double measure(op_fn op) {
  long k = 1;
  for (;;) { /* calibrate K on PE 0 (also the warm-up); the fastest of 3 batches, so that one descheduling of a PE
              * (PEs that wait yield the CPU) does not leave K tiny and every batch dominated by barrier skew */
    double t = batch(op, k);
    for (int rep = 0; rep < 2; rep++) {
      double u = batch(op, k);
      if (u < t) t = u;
    }
    double batch_s = t * k;
    long next = 0;
    if (me == 0 && batch_s < 0.5 * target_s && k < KMAX) {
      double g = batch_s > 0 ? target_s / batch_s : 16;
      next = (long)(k * (g > 16 ? 16 : g < 2 ? 2 : g));
    } else if (me == 0) {
      next = -(long)(target_s / t + 1);
    }
    next = bcast_long(next);
    if (next < 0) {
      k = -next > KMAX ? KMAX : -next;
      break;
    }
    k = next;
  }
  double t[NBATCH];
  batch(op, k);
  for (int b = 0; b < NBATCH; b++) t[b] = batch(op, k);
  qsort(t, NBATCH, sizeof t[0], cmp_double);
  return t[NBATCH / 2];
}

/* One row: usec per operation (one-way message for ping-pongs), and Mops/s (ops_per_iter operations, or messages, per
 * timed unit). */
static void row(const char *test, double s, double ops_per_iter) {
  if (me != 0) return;
  double us = s * 1e6, mops = ops_per_iter / s / 1e6;
  if (csv)
    printf("%s,%.4f,%.3f\n", test, us, mops);
  else
    printf("%-32s %11.3f %11.3f\n", test, us, mops);
  fflush(stdout);
}

static void usage(void) {
  if (me == 0) fprintf(stderr, "usage: bench_p2p [--iters-scale F] [--csv]\n");
  shmem_finalize();
  exit(2);
}

int main(int argc, char **argv) {
  double scale = 1.0;
  shmem_init();
  me = shmem_my_pe();
  npes = shmem_n_pes();
  for (int i = 1; i < argc; i++) {
    char *end = NULL;
    if (!strcmp(argv[i], "--csv")) csv = 1;
    else if (!strcmp(argv[i], "--iters-scale") && i + 1 < argc) scale = strtod(argv[++i], &end);
    else usage();
    if (end && (*end || scale <= 0)) usage();
  }
  if (npes < 2) {
    if (me == 0) fprintf(stderr, "bench_p2p: needs at least 2 PEs (got %d)\n", npes);
    shmem_finalize();
    return 1;
  }
  target_s *= scale;
  long *cells = shmem_calloc(5 * 8, sizeof(long)); /* 5 objects 64 bytes apart: no two share a cache line */
  if (!cells) {
    fprintf(stderr, "bench_p2p: PE %d: cannot allocate symmetric memory\n", me);
    shmem_global_exit(1);
  }
  ctr = cells, pp_flag = cells + 8, lock = cells + 16, payload = cells + 24;
#ifdef SHMEM_SIGNAL_SET
  sig = (uint64_t *)(cells + 32);
#endif
  if (me == 0) {
    char name[SHMEM_MAX_NAME_LEN];
    int major, minor;
    shmem_info_get_name(name);
    shmem_info_get_version(&major, &minor);
    printf("# bench_p2p: implementation \"%s\", OpenSHMEM %d.%d (header %d.%d), %d PEs, PE 0 -> PE 1\n", name, major,
           minor, SHMEM_MAJOR_VERSION, SHMEM_MINOR_VERSION, npes);
    printf("# median of %d batches of K iterations, K such that a batch takes ~%.2f ms\n", NBATCH, target_s * 1e3);
    printf(csv ? "test,usec,Mops/s\n" : "%-32s %11s %11s\n", "test", "usec", "Mops/s");
  }
  row("fetch_add latency", measure(op_fadd), 1);
  row("compare_swap latency", measure(op_cswap), 1);
  row("add throughput", measure(op_add), 1);
  row("fetch_add contended (2 PEs)", measure(op_fadd_contended), 2);
  row("p+wait_until one-way", measure(op_p_pingpong) / 2, 1);
#ifdef SHMEM_SIGNAL_SET
  row("put_signal one-way (8 B)", measure(op_signal_pingpong) / 2, 1);
#endif
  row("set_lock+clear_lock", measure(op_lock), 1);
  shmem_barrier_all();
  shmem_free(cells);
  shmem_finalize();
  return 0;
}
