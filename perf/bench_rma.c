/*
 * bench_rma.c - put/get latency and bandwidth of an OpenSHMEM implementation (standard OpenSHMEM 1.5 API only).
 *
 * PE 0 measures, PE 1 is the target; any further PEs only take part in the barriers. Every number is the MEDIAN of
 * NBATCH batches; a batch times K iterations with clock_gettime(CLOCK_MONOTONIC) and divides by K, K being calibrated
 * (which also warms up) so that one batch takes about 2 ms x --iters-scale. Output: one table, a row per test:
 *   latency rows (8 bytes): put+quiet, p, get, g, ping-pong one-way (p + wait_until), put_signal ping-pong (only
 *   where <shmem.h> defines SHMEM_SIGNAL_SET), barrier_all;
 *   bandwidth rows (8 B .. --max-size, powers of 2): putmem+quiet and getmem, each beside a memcpy between two private
 *   buffers of the same size measured in the same run; vs_memcpy = GB/s of the row / GB/s of memcpy.
 * GB/s means 1e9 bytes per second.
 *
 * Usage: bench_rma [--iters-scale F] [--max-size BYTES] [--csv]
 * Build and run: oshcc -O2 perf/bench_rma.c -o bench_rma && oshrun -n 2 ./bench_rma   (see perf/README.md)
 */
#define _POSIX_C_SOURCE 200809L
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NBATCH 31
#define KMAX (1L << 24)

static int me, npes, csv;
static double target_s = 2e-3;              /* wanted duration of one batch */
static char *sbuf, *dbuf;                   /* symmetric, max_size bytes each */
static char *pa, *pb;                       /* private, for the memcpy reference */
static long bc_val, pp_flag, seq;           /* symmetric control words; seq counts ping-pongs on each PE */
static void *(*volatile memcpy_fn)(void *, const void *, size_t) = memcpy; /* not optimised away */
#ifdef SHMEM_SIGNAL_SET
static uint64_t sig;
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

/* ---- the timed operations: op(k, n) runs k iterations; called by every PE ---- */
typedef void (*op_fn)(long k, size_t n);

static void op_put(long k, size_t n) {
  if (me == 0)
    for (long i = 0; i < k; i++) { shmem_putmem(dbuf, sbuf, n, 1); shmem_quiet(); }
}
static void op_p(long k, size_t n) {
  (void)n;
  if (me == 0)
    for (long i = 0; i < k; i++) { shmem_long_p((long *)dbuf, i, 1); shmem_quiet(); }
}
static void op_get(long k, size_t n) {
  if (me == 0)
    for (long i = 0; i < k; i++) shmem_getmem(dbuf, sbuf, n, 1);
}
static void op_g(long k, size_t n) {
  (void)n;
  volatile long sink = 0;
  if (me == 0)
    for (long i = 0; i < k; i++) sink += shmem_long_g((long *)sbuf, 1);
}
static void op_memcpy(long k, size_t n) {
  if (me == 0)
    for (long i = 0; i < k; i++) memcpy_fn(i & 1 ? pa : pb, i & 1 ? pb : pa, n);
}
/* Round trip: PE 0 writes seq into PE 1's flag, PE 1 sees it and writes it back into PE 0's flag. */
static void op_pingpong(long k, size_t n) {
  (void)n;
  for (long i = 0; i < k && me < 2; i++) {
    seq++;
    if (me == 0) {
      shmem_long_p(&pp_flag, seq, 1);
      shmem_long_wait_until(&pp_flag, SHMEM_CMP_EQ, seq);
    } else {
      shmem_long_wait_until(&pp_flag, SHMEM_CMP_EQ, seq);
      shmem_long_p(&pp_flag, seq, 0);
    }
  }
}
#ifdef SHMEM_SIGNAL_SET
static void op_signal_pingpong(long k, size_t n) {
  for (long i = 0; i < k && me < 2; i++) {
    seq++;
    if (me == 0) {
      shmem_putmem_signal(dbuf, sbuf, n, &sig, (uint64_t)seq, SHMEM_SIGNAL_SET, 1);
      shmem_signal_wait_until(&sig, SHMEM_CMP_EQ, (uint64_t)seq);
    } else {
      shmem_signal_wait_until(&sig, SHMEM_CMP_EQ, (uint64_t)seq);
      shmem_putmem_signal(dbuf, sbuf, n, &sig, (uint64_t)seq, SHMEM_SIGNAL_SET, 0);
    }
  }
}
#endif
static void op_barrier(long k, size_t n) {
  (void)n;
  for (long i = 0; i < k; i++) shmem_barrier_all();
}

/* One batch of k iterations on every PE; PE 0 returns seconds per iteration (others 0). */
static double batch(op_fn op, long k, size_t n) {
  shmem_barrier_all();
  double t0 = now();
  op(k, n);
  double t = (now() - t0) / k;
  shmem_barrier_all();
  return t;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median seconds per iteration of op (meaningful on PE 0). Collective. */
static double measure(op_fn op, size_t n) {
  long k = 1;
  for (;;) { /* calibrate K on PE 0 (also the warm-up): grow until a batch takes >= half the target */
    double t = batch(op, k, n), batch_s = t * k;
    long next = 0; /* 0: k is final */
    if (me == 0 && batch_s < 0.5 * target_s && k < KMAX) {
      double g = batch_s > 0 ? target_s / batch_s : 16;
      next = (long)(k * (g > 16 ? 16 : g < 2 ? 2 : g));
    } else if (me == 0) {
      next = -(long)(target_s / t + 1); /* final K from the measured rate */
    }
    next = bcast_long(next);
    if (next < 0) { k = -next > KMAX ? KMAX : -next; break; }
    k = next;
  }
  double t[NBATCH];
  batch(op, k, n); /* one more warm-up at the final K */
  for (int b = 0; b < NBATCH; b++) t[b] = batch(op, k, n);
  qsort(t, NBATCH, sizeof t[0], cmp_double);
  return t[NBATCH / 2];
}

/* One table row (PE 0). bytes 0 = not a transfer; ref_s 0 = no memcpy reference. */
static void row(const char *test, size_t bytes, double s, double ref_s) {
  if (me != 0) return;
  double us = s * 1e6, gbs = bytes ? bytes / s / 1e9 : 0, ref_gbs = bytes && ref_s ? bytes / ref_s / 1e9 : 0;
  if (csv)
    printf("%s,%zu,%.4f,%.4f,%.4f,%.4f,%.4f\n", test, bytes, us, gbs, ref_s * 1e6, ref_gbs,
           ref_gbs ? gbs / ref_gbs : 0);
  else if (ref_s)
    printf("%-30s %9zu %11.3f %9.3f %11.3f %9.3f %9.3f\n", test, bytes, us, gbs, ref_s * 1e6, ref_gbs,
           gbs / ref_gbs);
  else if (bytes)
    printf("%-30s %9zu %11.3f %9.3f %11s %9s %9s\n", test, bytes, us, gbs, "-", "-", "-");
  else
    printf("%-30s %9s %11.3f %9s %11s %9s %9s\n", test, "-", us, "-", "-", "-", "-");
  fflush(stdout);
}

static void usage(void) {
  if (me == 0) fprintf(stderr, "usage: bench_rma [--iters-scale F] [--max-size BYTES] [--csv]\n");
  shmem_finalize();
  exit(2);
}

int main(int argc, char **argv) {
  size_t max_size = 4u << 20;
  double scale = 1.0;
  shmem_init();
  me = shmem_my_pe();
  npes = shmem_n_pes();
  for (int i = 1; i < argc; i++) {
    char *end = NULL;
    if (!strcmp(argv[i], "--csv")) csv = 1;
    else if (!strcmp(argv[i], "--iters-scale") && i + 1 < argc) scale = strtod(argv[++i], &end);
    else if (!strcmp(argv[i], "--max-size") && i + 1 < argc) max_size = strtoull(argv[++i], &end, 0);
    else usage();
    if (end && (*end || scale <= 0 || max_size < 8)) usage();
  }
  if (npes < 2) {
    if (me == 0) fprintf(stderr, "bench_rma: needs at least 2 PEs (got %d)\n", npes);
    shmem_finalize();
    return 1;
  }
  target_s *= scale;

  sbuf = shmem_malloc(max_size);
  dbuf = shmem_malloc(max_size);
  pa = malloc(max_size);
  pb = malloc(max_size);
  if (!sbuf || !dbuf || !pa || !pb) {
    fprintf(stderr, "bench_rma: PE %d: cannot allocate 2 x %zu bytes\n", me, max_size);
    shmem_global_exit(1);
  }
  for (size_t i = 0; i < max_size; i++) sbuf[i] = dbuf[i] = pa[i] = pb[i] = (char)(i * 7 + me);
  shmem_barrier_all();

  if (me == 0) {
    char name[SHMEM_MAX_NAME_LEN];
    int major, minor;
    shmem_info_get_name(name);
    shmem_info_get_version(&major, &minor);
    printf("# bench_rma: implementation \"%s\", OpenSHMEM %d.%d (header %d.%d), %d PEs, PE 0 -> PE 1\n", name,
           major, minor, SHMEM_MAJOR_VERSION, SHMEM_MINOR_VERSION, npes);
    printf("# median of %d batches of K iterations, K such that a batch takes ~%.2f ms; GB/s = 1e9 B/s\n", NBATCH,
           target_s * 1e3);
    printf(csv ? "test,bytes,usec,GB/s,memcpy_usec,memcpy_GB/s,vs_memcpy\n"
               : "%-30s %9s %11s %9s %11s %9s %9s\n",
           "test", "bytes", "usec", "GB/s", "memcpy_usec", "memcpy_GB/s", "vs_memcpy");
  }
  row("put+quiet 8B", 8, measure(op_put, 8), 0);
  row("p 8B", 8, measure(op_p, 8), 0);
  row("get 8B", 8, measure(op_get, 8), 0);
  row("g 8B", 8, measure(op_g, 8), 0);
  row("pingpong 8B one-way", 8, measure(op_pingpong, 8) / 2, 0);
#ifdef SHMEM_SIGNAL_SET
  row("put_signal pingpong 8B one-way", 8, measure(op_signal_pingpong, 8) / 2, 0);
#endif
  row("barrier_all", 0, measure(op_barrier, 0), 0);

  int nsz = 0;
  double ref[64];
  for (size_t n = 8; n <= max_size; n *= 2) ref[nsz++] = measure(op_memcpy, n);
  nsz = 0;
  for (size_t n = 8; n <= max_size; n *= 2) row("putmem+quiet", n, measure(op_put, n), ref[nsz++]);
  nsz = 0;
  for (size_t n = 8; n <= max_size; n *= 2) row("getmem", n, measure(op_get, n), ref[nsz++]);

  shmem_barrier_all();
  shmem_free(dbuf);
  shmem_free(sbuf);
  free(pa);
  free(pb);
  shmem_finalize();
  return 0;
}
