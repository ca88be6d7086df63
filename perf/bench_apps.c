/*
 * bench_apps.c - the communication patterns of real OpenSHMEM applications (standard API only; the method and the
 * CSV columns: bench.h), so that a runtime is judged on what apps do, not only on microbenchmarks (issue 29: Shoal
 * was fast on put_bw and several times slower than OSHMEM on PRK stencil and transpose, on the same network). Every
 * PE takes part; usec is per iteration; bytes is the size of one message; every iteration's data is checked.
 *   stencil    PRK Stencil's halo exchange: PEs on a 2-D grid; per iteration each PE packs a halo for each of its
 *              (up to 4) neighbours (the east/west ones gathered from a strided column), shmem_putmem's it into the
 *              neighbour's double-buffered input, then one shmem_fence and a shmem_int_atomic_inc of the neighbour's
 *              flag; then shmem_int_wait_until its own flag counts every neighbour, and unpacks
 *   transpose  PRK Transpose's exchange: per iteration and phase p = 1..npes-1 a block to PE me+p (shmem_putmem),
 *              shmem_fence, shmem_int_p of that phase's flag (the iteration number), shmem_int_wait_until the block
 *              from PE me-p; a barrier ends the iteration (the next one rewrites the blocks)
 *   isx        ISx's key exchange: per iteration, to every PE in turn from me+1, shmem_long_atomic_fetch_add on its
 *              receive offset (a reservation) then shmem_putmem of the keys there; shmem_barrier_all; every PE
 *              checks that it received npes chunks
 *
 * Build and run: oshcc -O2 perf/bench_apps.c -o bench_apps && oshrun -n 4 ./bench_apps   (see perf/README.md)
 */
#include "bench.h"

static int px, py, mex, mey; /* the stencil's PE grid: px x py, this PE at (mex, mey) */
static int nbr[4];           /* north, south, east, west: the neighbour's PE or -1 */
static char *out_buf, *in_buf; /* stencil: 4 halos out; 2 x 4 in (double-buffered); transpose: blocks */
static double *tile; /* the stencil's local tile: TILE_W doubles a row, as many rows as a halo has doubles */
#define TILE_W 8     /* a column's elements a cache line apart, as a wide tile's are */
static int *flag;              /* stencil: 2 counters; transpose: one per phase */
static long *isx_off;          /* isx: 2 receive offsets (by iteration parity) */
static long iter_no;           /* iterations done by this PE (the same on every PE) */
static size_t max_n;
static long errors;

static void grid(void) {
  px = 1;
  for (int d = 1; d * d <= npes; d++)
    if (npes % d == 0) px = d;
  py = npes / px;
  mex = me % px, mey = me / px;
  nbr[0] = mey > 0 ? me - px : -1;
  nbr[1] = mey < py - 1 ? me + px : -1;
  nbr[2] = mex < px - 1 ? me + 1 : -1;
  nbr[3] = mex > 0 ? me - 1 : -1;
}

/* Halo d of this PE for iteration it, n bytes: the tile's edge (a row, or for east/west a gathered column). */
static void pack(int d, size_t n, long it, double *dst) {
  size_t m = n / sizeof(double), stride = d < 2 ? 1 : TILE_W;
  for (size_t i = 0; i < m; i++) tile[i * stride] = (double)(me * 1000003L + it + (long)i);
  for (size_t i = 0; i < m; i++) dst[i] = tile[i * stride];
}

static void op_stencil(long k, size_t n) {
  int cnt = 0;
  for (int d = 0; d < 4; d++) cnt += nbr[d] >= 0;
  if (!cnt) return;
  for (long i = 0; i < k; i++) {
    long it = iter_no++;
    int sw = (int)(it & 1);
    for (int d = 0; d < 4; d++) {
      if (nbr[d] < 0) continue;
      double *o = (double *)(out_buf + (size_t)d * max_n);
      pack(d, n, it, o);
      /* into the neighbour's slot for the direction it receives from (north's south slot, ...) */
      shmem_putmem(in_buf + ((size_t)sw * 4 + (d ^ 1)) * max_n, o, n, nbr[d]);
    }
    shmem_fence();
    for (int d = 0; d < 4; d++)
      if (nbr[d] >= 0) shmem_int_atomic_inc(&flag[sw], nbr[d]);
    shmem_int_wait_until(&flag[sw], SHMEM_CMP_GE, cnt * (int)(it / 2 + 1));
    for (int d = 0; d < 4; d++) {
      if (nbr[d] < 0) continue;
      const double *v = (const double *)(in_buf + ((size_t)sw * 4 + d) * max_n);
      size_t m = n / sizeof(double);
      if (v[0] != (double)(nbr[d] * 1000003L + it) || v[m - 1] != (double)(nbr[d] * 1000003L + it + m - 1))
        errors++;
    }
  }
}

static void op_transpose(long k, size_t n) {
  for (long i = 0; i < k; i++) {
    int it = (int)++iter_no;
    for (int p = 1; p < npes; p++) {
      int to = (me + p) % npes, from = (me - p + npes) % npes;
      long *o = (long *)out_buf;
      size_t m = n / sizeof(long);
      for (size_t j = 0; j < m; j++) o[j] = (long)me * 7919 + it + (long)j; /* the local transpose's stand-in */
      shmem_putmem(in_buf + (size_t)p * max_n, o, n, to);
      shmem_fence();
      shmem_int_p(&flag[p], it, to);
      shmem_int_wait_until(&flag[p], SHMEM_CMP_GE, it);
      const long *v = (const long *)(in_buf + (size_t)p * max_n);
      if (v[0] != (long)from * 7919 + it || v[m - 1] != (long)from * 7919 + it + (long)(m - 1)) errors++;
    }
    shmem_barrier_all();
  }
}

static void op_isx(long k, size_t n) {
  for (long i = 0; i < k; i++) {
    long it = iter_no++;
    int par = (int)(it & 1);
    long *o = (long *)out_buf;
    for (int p = 0; p < npes; p++) {
      int to = (me + 1 + p) % npes;
      long at = shmem_long_atomic_fetch_add(&isx_off[par], (long)n, to);
      o[0] = me, o[n / sizeof(long) - 1] = it;
      if (at + n <= (size_t)npes * max_n) shmem_putmem(in_buf + at, o, n, to);
    }
    shmem_barrier_all();
    if (isx_off[par] != (long)n * npes) errors++;
    long seen = 0;
    for (int p = 0; p < npes; p++) seen += ((const long *)(in_buf + (size_t)p * n))[n / sizeof(long) - 1] == it;
    if (seen != npes) errors++;
    isx_off[par ^ 1] = 0; /* the next iteration's counter: the barrier above ordered every use of it */
    shmem_barrier_all();
  }
}

int main(int argc, char **argv) {
  bench_init(argc, argv, "bench_apps", "stencil transpose isx", "");
  grid();
  max_n = max_size;
  size_t slots = (size_t)(npes > 8 ? npes : 8);
  out_buf = shmem_malloc(4 * max_n);
  in_buf = shmem_malloc(slots * max_n);
  flag = shmem_calloc((size_t)(npes > 2 ? npes : 2), sizeof(int));
  isx_off = shmem_calloc(2, sizeof(long));
  tile = malloc(TILE_W * max_n);
  if (!out_buf || !in_buf || !flag || !isx_off || !tile) {
    if (me == 0) fprintf(stderr, "bench_apps: out of symmetric memory for %zu-byte messages\n", max_n);
    shmem_global_exit(1);
  }
  memset(in_buf, 0, slots * max_n);
  barrier_in_timing = 1;
  shmem_barrier_all();
  static const struct {
    const char *name;
    bench_op op;
  } tests[] = {{"stencil", op_stencil}, {"transpose", op_transpose}, {"isx", op_isx}};
  for (size_t t = 0; t < sizeof tests / sizeof tests[0]; t++) {
    if (!bench_selected(tests[t].name)) continue;
    if (tests[t].op == op_transpose) memset(flag, 0, sizeof(int) * (size_t)(npes > 2 ? npes : 2));
    iter_no = 0;
    if (tests[t].op == op_stencil) flag[0] = flag[1] = 0;
    shmem_barrier_all();
    for (size_t n = min_size < 8 ? 8 : min_size; n <= max_size; n *= 2) {
      bench_stat s = bench_measure(tests[t].op, n);
      int nmsg = 0;
      for (int d = 0; d < 4; d++) nmsg += nbr[d] >= 0;
      double per_pe = tests[t].op == op_stencil ? nmsg : npes - (tests[t].op == op_transpose);
      bench_row(tests[t].name, n, s, per_pe * (double)n, per_pe, "");
    }
  }
  long all = 0;
  static long err_sym;
  err_sym = errors;
  shmem_barrier_all();
  for (int pe = 0; pe < npes; pe++) all += shmem_long_g(&err_sym, pe);
  if (me == 0 && all) printf("# bench_apps: wrong result: %ld iterations saw wrong data\n", all);
  shmem_barrier_all();
  free(tile);
  shmem_finalize();
  return all ? 1 : 0;
}
