/*
 * bench_coll.c - collectives of an OpenSHMEM implementation against a straightforward put-then-barrier version of
 * each and against memcpy (standard API only: OpenSHMEM 1.5 team forms where <shmem.h> is 1.5 or later, the 1.4
 * active-set forms otherwise, so that it also builds with Open MPI's OSHMEM).
 *
 * Rows: barrier (team_sync / shmem_barrier vs barrier_all), then for each size from 8 B to --max-size (powers of 2):
 *   broadcast   PE 0's `bytes` to every PE           ref: PE 0 putmem to every PE (itself included), barrier_all
 *   fcollect    every PE's `bytes` to every PE        ref: every PE putmem its block to every PE, barrier_all
 *   alltoall    `bytes` from every PE to every PE     ref: every PE putmem block j to PE j, barrier_all
 *   sum_reduce  `bytes` of longs, summed              ref: every PE putmem its vector into slot me of every PE's
 *                                                          work array, barrier_all, local sum, barrier_all
 * usec: median time per call (method: bench.h); a batch times K back-to-back calls on every PE and ends with a
 * barrier that is inside the timing, so the slowest PE counts. The batches of a collective, its reference and the
 * two memcpy references are
 * interleaved, so that all see the same machine. vs_ref = ref_usec / usec (> 1: faster than put-then-barrier).
 * GB/s = bytes landing in each PE's dest per second: `bytes` for broadcast and sum_reduce, npes x `bytes` for
 * fcollect and alltoall. memcpy_GB/s: one memcpy of that many bytes between private buffers on PE 0 while the
 * other PEs wait (vs_memcpy = GB/s / memcpy_GB/s); memcpy_all: every PE copies that many bytes at the same time
 * (per-PE GB/s; with more PEs than cores this is what the machine can give each PE).
 * Each collective's result is checked once per size (a message on stderr and exit status 1 when wrong).
 *
 * Usage: bench_coll [bench.h options]; --only: barrier, barrier_all, broadcast, fcollect, alltoall, sum_reduce
 * Build and run: oshcc -O2 perf/bench_coll.c -o bench_coll && oshrun -n 4 ./bench_coll   (see perf/README.md)
 */
#include "bench.h"

#if SHMEM_MAJOR_VERSION > 1 || (SHMEM_MAJOR_VERSION == 1 && SHMEM_MINOR_VERSION >= 5)
#define TEAMS 1 /* team-based collectives (1.5) */
#else
#define TEAMS 0 /* active-set collectives (1.4) */
#endif

static int failed;
static char *sbuf, *dbuf, *wbuf; /* symmetric: max_size, npes x max_size, npes x max_size */
static char *pa, *pb;            /* private, for memcpy */
static void *(*volatile memcpy_fn)(void *, const void *, size_t) = memcpy;
#if !TEAMS
static long pSync[2][SHMEM_REDUCE_SYNC_SIZE], pSyncB[SHMEM_BARRIER_SYNC_SIZE];
static long *pWrk;
static int ps;
static long *psync(void) { return pSync[ps ^= 1]; } /* alternate, as the 1.4 pSync rules ask */
#endif

/* ---- the operations: op(k, n) runs k calls on every PE ---- */
static void coll_barrier(void) {
#if TEAMS
  shmem_team_sync(SHMEM_TEAM_WORLD);
#else
  shmem_barrier(0, 0, npes, pSyncB);
#endif
}
static void coll_bcast(size_t n) {
#if TEAMS
  shmem_broadcastmem(SHMEM_TEAM_WORLD, dbuf, sbuf, n, 0);
#else
  shmem_broadcast64(dbuf, sbuf, n / 8, 0, 0, 0, npes, psync());
  if (me == 0) memcpy(dbuf, sbuf, n); /* the 1.4 root's dest is not written; 1.5 writes it */
#endif
}
static void coll_fcollect(size_t n) {
#if TEAMS
  shmem_fcollectmem(SHMEM_TEAM_WORLD, dbuf, sbuf, n);
#else
  shmem_fcollect64(dbuf, sbuf, n / 8, 0, 0, npes, psync());
#endif
}
static void coll_alltoall(size_t n) {
#if TEAMS
  shmem_alltoallmem(SHMEM_TEAM_WORLD, dbuf, sbuf, n);
#else
  shmem_alltoall64(dbuf, sbuf, n / 8, 0, 0, npes, psync());
#endif
}
static void coll_reduce(size_t n) {
#if TEAMS
  shmem_long_sum_reduce(SHMEM_TEAM_WORLD, (long *)dbuf, (const long *)sbuf, n / 8);
#else
  shmem_long_sum_to_all((long *)dbuf, (const long *)sbuf, (int)(n / 8), 0, 0, npes, pWrk, psync());
#endif
}

static void op_barrier(long k, size_t n) {
  (void)n;
  for (long i = 0; i < k; i++) coll_barrier();
}
static void op_barrier_all(long k, size_t n) {
  (void)n;
  for (long i = 0; i < k; i++) shmem_barrier_all();
}
static void op_bcast(long k, size_t n) {
  for (long i = 0; i < k; i++) coll_bcast(n);
}
static void op_bcast_ref(long k, size_t n) {
  for (long i = 0; i < k; i++) {
    if (me == 0)
      for (int pe = 0; pe < npes; pe++) shmem_putmem(dbuf, sbuf, n, pe);
    shmem_barrier_all();
  }
}
static void op_fcollect(long k, size_t n) {
  for (long i = 0; i < k; i++) coll_fcollect(n);
}
static void op_fcollect_ref(long k, size_t n) {
  for (long i = 0; i < k; i++) {
    for (int pe = 0; pe < npes; pe++) shmem_putmem(dbuf + (size_t)me * n, sbuf, n, pe);
    shmem_barrier_all();
  }
}
static void op_alltoall(long k, size_t n) {
  for (long i = 0; i < k; i++) coll_alltoall(n);
}
static void op_alltoall_ref(long k, size_t n) {
  for (long i = 0; i < k; i++) {
    for (int pe = 0; pe < npes; pe++) shmem_putmem(dbuf + (size_t)me * n, sbuf + (size_t)pe * n, n, pe);
    shmem_barrier_all();
  }
}
static void op_reduce(long k, size_t n) {
  for (long i = 0; i < k; i++) coll_reduce(n);
}
static void op_reduce_ref(long k, size_t n) {
  size_t m = n / 8;
  long *d = (long *)dbuf;
  for (long i = 0; i < k; i++) {
    for (int pe = 0; pe < npes; pe++) shmem_putmem(wbuf + (size_t)me * n, sbuf, n, pe);
    shmem_barrier_all();
    memcpy(d, wbuf, n);
    for (int j = 1; j < npes; j++) {
      const long *w = (const long *)(wbuf + (size_t)j * n);
      for (size_t e = 0; e < m; e++) d[e] += w[e];
    }
    shmem_barrier_all(); /* the next call's puts must not overwrite wbuf before it is summed */
  }
}
static void op_memcpy(long k, size_t n) {
  if (me == 0)
    for (long i = 0; i < k; i++) memcpy_fn(i & 1 ? pa : pb, i & 1 ? pb : pa, n);
}
static void op_memcpy_all(long k, size_t n) {
  for (long i = 0; i < k; i++) memcpy_fn(i & 1 ? pa : pb, i & 1 ? pb : pa, n);
}

/* ---- checks: one call with known inputs, every PE looks at its dest ---- */
static long val(int pe, size_t i) { return (long)(pe + 1) * 1000003L + (long)i; }

static void check(const char *name, void (*call)(size_t), size_t n) {
  size_t m = n / 8;
  long *s = (long *)sbuf, *d = (long *)dbuf;
  int bad = 0, alltoall = call == coll_alltoall;
  shmem_barrier_all();
  for (size_t j = 0; j < (alltoall ? (size_t)npes : 1); j++)
    for (size_t i = 0; i < m; i++) s[j * m + i] = val(me, i) + (long)j * 7;
  memset(dbuf, 0, (size_t)npes * n);
  shmem_barrier_all();
  call(n);
  shmem_barrier_all();
  for (size_t i = 0; i < m && !bad; i++) {
    if (call == coll_bcast) bad = d[i] != val(0, i);
    if (call == coll_reduce) {
      long want = 0;
      for (int p = 0; p < npes; p++) want += val(p, i);
      bad = d[i] != want;
    }
    for (int p = 0; p < npes && (call == coll_fcollect || alltoall); p++)
      bad |= d[(size_t)p * m + i] != val(p, i) + (alltoall ? me * 7 : 0);
  }
  if (bad) {
    fprintf(stderr, "bench_coll: PE %d: %s of %zu bytes gave a wrong result\n", me, name, n);
    failed = 1;
  }
  /* The next size starts with a call into the same dest: without this barrier an implementation that lets a fast PE
   * write the next call's data before a slow PE has entered it (Shoal's push-unsafe) fails this check. */
  shmem_barrier_all();
}

/* A row with the put-then-barrier reference and the memcpy references (PE 0). */
static void row(const char *test, size_t bytes, size_t dest_bytes, bench_stat s, const char *refname, double ref_s,
                double mc, double mc_all) {
  char extra[256];
  double gbs = dest_bytes ? dest_bytes / s.med / 1e9 : 0;
  double mgbs = dest_bytes && mc ? dest_bytes / mc / 1e9 : 0;
  double agbs = dest_bytes && mc_all ? dest_bytes / mc_all / 1e9 : 0;
  snprintf(extra, sizeof extra, csv ? ",%s,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f" : "%-9s %10.2f %6.2f %7.2f %6.2f %7.2f %6.2f",
           refname, ref_s * 1e6, ref_s / s.med, mgbs, mgbs ? gbs / mgbs : 0, agbs, agbs ? gbs / agbs : 0);
  bench_row(test, bytes, s, (double)dest_bytes, 1, extra);
}

int main(int argc, char **argv) {
#if !TEAMS
  for (int k = 0; k < SHMEM_REDUCE_SYNC_SIZE; k++) pSync[0][k] = pSync[1][k] = SHMEM_SYNC_VALUE;
  for (int k = 0; k < SHMEM_BARRIER_SYNC_SIZE; k++) pSyncB[k] = SHMEM_SYNC_VALUE;
#endif
  barrier_in_timing = prewarm = 1;
  bench_init(argc, argv, "bench_coll", "barrier barrier_all broadcast fcollect alltoall sum_reduce",
             ",ref,ref_usec,vs_ref,memcpy_GB/s,vs_memcpy,memcpy_all_GB/s,vs_memcpy_all");
  if (me == 0) printf("# %s collectives; GB/s = bytes into each PE's dest; vs_ref = ref_usec / usec\n",
                      TEAMS ? "team (1.5)" : "active-set (1.4)");
  size_t big = (size_t)npes * max_size;
  sbuf = shmem_malloc(big);
  dbuf = shmem_malloc(big);
  wbuf = shmem_malloc(big);
#if !TEAMS
  pWrk = shmem_malloc((max_size / 16 + SHMEM_REDUCE_MIN_WRKDATA_SIZE) * sizeof(long));
#endif
  pa = malloc(big);
  pb = malloc(big);
  if (!sbuf || !dbuf || !wbuf || !pa || !pb) {
    fprintf(stderr, "bench_coll: PE %d: cannot allocate 5 x %zu bytes\n", me, big);
    shmem_global_exit(1);
  }
  bench_fill(sbuf, big, 1);
  bench_fill(dbuf, big, 2);
  bench_fill(wbuf, big, 3);
  bench_fill(pa, big, 4);
  bench_fill(pb, big, 5);
  shmem_barrier_all();

  if (bench_selected("barrier") || bench_selected("barrier_all")) {
    bench_op ops[2] = {op_barrier, op_barrier_all};
    size_t ns[2] = {0, 0};
    bench_stat t[2];
    bench_measure_set(2, ops, ns, t);
    if (bench_selected("barrier")) row("barrier", 0, 0, t[0], "barr_all", t[1].med, 0, 0);
    if (bench_selected("barrier_all")) row("barrier_all", 0, 0, t[1], "barrier", t[0].med, 0, 0);
  }
  static const struct {
    const char *name;
    bench_op op, ref;
    void (*call)(size_t);
    int dest_npes; /* dest bytes = bytes x npes */
  } colls[] = {
    {"broadcast", op_bcast, op_bcast_ref, coll_bcast, 0},
    {"fcollect", op_fcollect, op_fcollect_ref, coll_fcollect, 1},
    {"alltoall", op_alltoall, op_alltoall_ref, coll_alltoall, 1},
    {"sum_reduce", op_reduce, op_reduce_ref, coll_reduce, 0},
  };
  for (int c = 0; c < 4; c++) {
    if (!bench_selected(colls[c].name)) continue;
    for (size_t n = min_size; n <= max_size; n *= 2) {
      size_t dest = colls[c].dest_npes ? n * (size_t)npes : n;
      bench_op ops[4] = {colls[c].op, colls[c].ref, op_memcpy, op_memcpy_all};
      size_t ns[4] = {n, n, dest, dest};
      bench_stat t[4] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
      bench_measure_set(no_ref ? 1 : 4, ops, ns, t);
      check(colls[c].name, colls[c].call, n);
      row(colls[c].name, n, dest, t[0], "put+barr", t[1].med, t[2].med, t[3].med);
    }
  }
  shmem_barrier_all();
  if (failed) shmem_global_exit(1);
  shmem_free(wbuf);
  shmem_free(dbuf);
  shmem_free(sbuf);
  free(pa);
  free(pb);
  shmem_finalize();
  return 0;
}
