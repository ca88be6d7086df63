/*
 * bench.h - the timing harness shared by perf/bench_*.c (standard OpenSHMEM API only, so every benchmark also builds
 * with another implementation's oshcc).
 *
 * Method (OSU-style, with medians): an operation op(k, n) runs k iterations on n bytes, called by every PE. A batch
 * is barrier, k iterations timed with CLOCK_MONOTONIC, (optionally a barrier inside the timing), barrier. K is
 * calibrated on PE 0 (the calibration is the warm-up) so that a batch takes about 1 ms x --iters-scale; then one more
 * warm-up batch and BENCH_NBATCH timed batches. A result is the median time per iteration with the 10th and 90th
 * percentiles of the batches (the spread). Buffers are filled from a fixed seed (--seed), so every run moves the same
 * bytes. CSV (--csv): test,bytes,usec,usec_p10,usec_p90,GB/s,Mops/s then benchmark-specific columns.
 *
 * Common options: --iters-scale F, --min-size BYTES, --max-size BYTES (powers of two from min to max),
 * --only NAME[,NAME...], --seed N, --csv, --no-ref (bench_coll: no put-then-barrier and memcpy references).
 */
#ifndef SHOAL_PERF_BENCH_H
#define SHOAL_PERF_BENCH_H
#define _POSIX_C_SOURCE 200809L
#include <shmem.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BENCH_NBATCH 21
#define BENCH_KMAX (1L << 24)

typedef void (*bench_op)(long k, size_t n);
typedef struct {
  double med, p10, p90; /* seconds per iteration */
} bench_stat;

static int me, npes, csv;
static double target_s = 1e-3;
static size_t min_size = 8, max_size = 4u << 20;
static const char *only;
static unsigned long seed = 1;
static int barrier_in_timing; /* 1: a batch ends with a barrier inside the timing (collectives: the slowest PE) */
static int no_ref;            /* --no-ref: measure the operation alone, not its references (faster runs) */
static int prewarm;           /* 1: one untimed op(1, n) first puts the op's buffers in the state its calls leave */
static long bench_bc_val;

static double bench_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* PE 0's v on every PE. Collective. */
static long bench_bcast_long(long v) {
  if (me == 0)
    for (int pe = 1; pe < npes; pe++) shmem_long_p(&bench_bc_val, v, pe);
  if (me == 0) bench_bc_val = v;
  shmem_barrier_all();
  long r = bench_bc_val;
  shmem_barrier_all();
  return r;
}

/* Seconds per iteration of one batch of k (PE 0's clock). Collective. */
static double bench_batch(bench_op op, long k, size_t n) {
  if (prewarm) op(1, n);
  shmem_barrier_all();
  double t0 = bench_now();
  op(k, n);
  if (barrier_in_timing) shmem_barrier_all();
  double t = (bench_now() - t0) / k;
  shmem_barrier_all();
  return t;
}

/* K for op: grow until a batch takes about target_s (the warm-up, too). Collective; every PE gets PE 0's K. */
static long bench_calibrate(bench_op op, size_t n) {
  long k = 1;
  for (;;) {
    double t = bench_batch(op, k, n), batch_s = t * k;
    long next = 0;
    if (me == 0 && batch_s < 0.5 * target_s && k < BENCH_KMAX) {
      double g = batch_s > 0 ? target_s / batch_s : 16;
      next = (long)(k * (g > 16 ? 16 : g < 2 ? 2 : g));
    } else if (me == 0) {
      next = -(long)(target_s / t + 1);
    }
    next = bench_bcast_long(next);
    if (next < 0) return -next > BENCH_KMAX ? BENCH_KMAX : -next;
    k = next;
  }
}

static int bench_cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}
static bench_stat bench_stats(double *t, int nb) {
  qsort(t, (size_t)nb, sizeof t[0], bench_cmp);
  return (bench_stat){t[nb / 2], t[nb / 10], t[nb - 1 - nb / 10]};
}

/* Median (and spread) of each of the m <= 4 operations ops[i] on ns[i] bytes, meaningful on PE 0. Their batches are
 * interleaved in a pseudo-random order fixed by the seed, so that all see the same machine (a loaded or migrating VM
 * shifts every timing; their ratios stay). Collective. */
static void bench_measure_set(int m, const bench_op *ops, const size_t *ns, bench_stat *out) {
  long k[4];
  double t[4][BENCH_NBATCH];
  for (int i = 0; i < m; i++) k[i] = bench_calibrate(ops[i], ns[i]);
  for (int i = 0; i < m; i++) bench_batch(ops[i], k[i], ns[i]);
  unsigned x = (unsigned)seed * 2654435761u + 12345u;
  for (int b = 0; b < BENCH_NBATCH; b++) {
    int order[4] = {0, 1, 2, 3};
    for (int j = m - 1; j > 0; j--) { /* Fisher-Yates: each op follows each other op about equally often */
      x = x * 1103515245u + 12345u;
      int r = (int)((x >> 16) % (unsigned)(j + 1)), tmp = order[j];
      order[j] = order[r], order[r] = tmp;
    }
    for (int j = 0; j < m; j++) t[order[j]][b] = bench_batch(ops[order[j]], k[order[j]], ns[order[j]]);
  }
  for (int i = 0; i < m; i++) out[i] = bench_stats(t[i], BENCH_NBATCH);
}
static inline bench_stat bench_measure(bench_op op, size_t n) {
  bench_stat s;
  bench_measure_set(1, &op, &n, &s);
  return s;
}

/* Is test name selected by --only (a comma list; names match whole or as a prefix up to '_')? */
static int bench_selected(const char *name) {
  if (!only) return 1;
  size_t ln = strlen(name);
  for (const char *p = only; *p;) {
    const char *e = strchr(p, ',');
    size_t l = e ? (size_t)(e - p) : strlen(p);
    if (l && l <= ln && !strncmp(p, name, l) && (l == ln || name[l] == '_')) return 1;
    p += l + (e != NULL);
  }
  return 0;
}

/* Fill n bytes from the fixed seed (splitmix64), different on every PE. */
static inline void bench_fill(void *buf, size_t n, unsigned salt) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + (uint64_t)me * 0xBF58476D1CE4E5B9ull + salt;
  unsigned char *b = buf;
  for (size_t i = 0; i < n; i += 8) {
    uint64_t z = (x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    memcpy(b + i, &z, n - i < 8 ? n - i : 8);
  }
}

/* One result row on PE 0: bytes 0 = not a transfer; gb_bytes = bytes moved per iteration (GB/s), ops = operations
 * per iteration (Mops/s); extra = more CSV columns (with a leading comma) or "". */
static void bench_row(const char *test, size_t bytes, bench_stat s, double gb_bytes, double ops, const char *extra) {
  if (me != 0) return;
  double gbs = gb_bytes / s.med / 1e9, mops = ops / s.med / 1e6;
  if (csv)
    printf("%s,%zu,%.4f,%.4f,%.4f,%.4f,%.4f%s\n", test, bytes, s.med * 1e6, s.p10 * 1e6, s.p90 * 1e6, gbs, mops,
           extra);
  else
    printf("%-22s %9zu %11.3f %11.3f %11.3f %9.3f %9.3f %s\n", test, bytes, s.med * 1e6, s.p10 * 1e6, s.p90 * 1e6,
           gbs, mops, extra);
  fflush(stdout);
}

static void bench_usage(const char *prog, const char *more) {
  if (me == 0)
    fprintf(stderr,
            "usage: %s [--iters-scale F] [--min-size BYTES] [--max-size BYTES] [--only NAME[,NAME...]] [--seed N] "
            "[--csv] [--no-ref]\n  tests: %s\n",
            prog, more);
  shmem_finalize();
  exit(2);
}

/* shmem_init, the common options, the header lines (implementation, method, CSV columns + extra_cols). */
static void bench_init(int argc, char **argv, const char *prog, const char *tests, const char *extra_cols) {
  double scale = 1.0;
  shmem_init();
  me = shmem_my_pe();
  npes = shmem_n_pes();
  for (int i = 1; i < argc; i++) {
    char *end = NULL;
    if (!strcmp(argv[i], "--csv")) csv = 1;
    else if (!strcmp(argv[i], "--iters-scale") && i + 1 < argc) scale = strtod(argv[++i], &end);
    else if (!strcmp(argv[i], "--max-size") && i + 1 < argc) max_size = strtoull(argv[++i], &end, 0);
    else if (!strcmp(argv[i], "--min-size") && i + 1 < argc) min_size = strtoull(argv[++i], &end, 0);
    else if (!strcmp(argv[i], "--seed") && i + 1 < argc) seed = strtoul(argv[++i], &end, 0);
    else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
    else if (!strcmp(argv[i], "--no-ref")) no_ref = 1;
    else bench_usage(prog, tests);
    if (end && (*end || scale <= 0 || max_size < 8 || min_size < 8 || min_size % 8 || min_size > max_size))
      bench_usage(prog, tests);
  }
  target_s *= scale;
  if (me == 0) {
    char name[SHMEM_MAX_NAME_LEN];
    int major, minor;
    shmem_info_get_name(name);
    shmem_info_get_version(&major, &minor);
    printf("# %s: implementation \"%s\", OpenSHMEM %d.%d (header %d.%d), %d PEs\n", prog, name, major, minor,
           SHMEM_MAJOR_VERSION, SHMEM_MINOR_VERSION, npes);
    printf("# median (p10, p90) of %d batches of K iterations, K such that a batch takes ~%.2f ms; seed %lu; "
           "GB/s = 1e9 B/s\n", BENCH_NBATCH, target_s * 1e3, seed);
    if (csv)
      printf("test,bytes,usec,usec_p10,usec_p90,GB/s,Mops/s%s\n", extra_cols);
    else
      printf("%-22s %9s %11s %11s %11s %9s %9s %s\n", "test", "bytes", "usec", "usec_p10", "usec_p90", "GB/s",
             "Mops/s", extra_cols);
    fflush(stdout);
  }
}
#endif
