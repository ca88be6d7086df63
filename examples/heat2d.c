/*
 * heat2d.c - 2-D heat diffusion (Jacobi iteration, 5-point stencil) on an N x N grid, standard OpenSHMEM 1.5 API.
 *
 * Rows are split into contiguous blocks over all PEs (any PE count <= N; the first N % npes PEs get one extra row).
 * Each PE keeps its rows plus two ghost rows in two symmetric buffers (current / next). Every step it puts its first
 * and last rows into the ghost rows of its neighbours' current buffer (shmem_double_put), calls shmem_barrier_all,
 * then computes its rows of the next buffer. Double buffering makes one barrier per step enough: a ghost row of a
 * buffer is only written one step after its owner stopped reading it.
 * Boundary: top row 100.0, bottom row and left/right columns 0.0, fixed; interior starts from a deterministic field.
 * Check: every PE recomputes the whole grid serially with the same arithmetic, compares its own rows (the results
 * should be bitwise identical), and puts its max abs error into an array on PE 0 (shmem_double_p + barrier).
 * PE 0 prints "heat2d: N=.. steps=.. PEs=.. max_error=.. time=.. s" and "heat2d: PASSED" / "FAILED" (tolerance
 * 1e-12); every PE exits 1 on failure.
 *
 * Usage: heat2d [-n N] [-s steps]      (defaults: N=512, steps=200)
 * Build and run: oshcc -O2 examples/heat2d.c -o heat2d && oshrun -n 4 ./heat2d
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h> /* HUGE_VAL */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TOL 1e-12

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* Rows [*lo, *lo + *cnt) of an n-row grid belong to PE pe of npes. */
static void block(int n, int npes, int pe, int *lo, int *cnt) {
  int base = n / npes, extra = n % npes;
  *cnt = base + (pe < extra);
  *lo = pe * base + (pe < extra ? pe : extra);
}

/* Initial value of global cell (i, j), boundaries included. */
static double init_value(int n, int i, int j) {
  if (i == 0) return 100.0;
  if (i == n - 1 || j == 0 || j == n - 1) return 0.0;
  return (double)((i * 37 + j * 11) % 101) / 10.0;
}

/* New value of global row i from the rows above/at/below it (shared by the parallel and the serial code). */
static void update_row(int n, int i, double *out, const double *up, const double *mid, const double *down) {
  if (i == 0 || i == n - 1) { memcpy(out, mid, n * sizeof *out); return; }
  out[0] = mid[0];
  for (int j = 1; j < n - 1; j++) out[j] = 0.25 * (up[j] + down[j] + mid[j - 1] + mid[j + 1]);
  out[n - 1] = mid[n - 1];
}

int main(int argc, char **argv) {
  int n = 512, steps = 200;
  shmem_init();
  int me = shmem_my_pe(), npes = shmem_n_pes();
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-n") && i + 1 < argc) n = atoi(argv[++i]);
    else if (!strcmp(argv[i], "-s") && i + 1 < argc) steps = atoi(argv[++i]);
    else n = -1;
  }
  if (n < 3 || n < npes || steps < 0) {
    if (me == 0) fprintf(stderr, "usage: heat2d [-n N] [-s steps]   (N >= 3, N >= number of PEs, steps >= 0)\n");
    shmem_finalize();
    return 2;
  }

  int lo, cnt, maxcnt = n / npes + (n % npes != 0);
  block(n, npes, me, &lo, &cnt);
  /* Local row r (1..cnt) is global row lo + r - 1; rows 0 and cnt + 1 are ghosts. Same size on every PE. */
  size_t rows_bytes = (size_t)(maxcnt + 2) * n * sizeof(double);
  double *cur = shmem_malloc(rows_bytes), *nxt = shmem_malloc(rows_bytes);
  double *errs = shmem_malloc(npes * sizeof(double));
  if (!cur || !nxt || !errs) {
    fprintf(stderr, "heat2d: PE %d: shmem_malloc of %zu bytes failed\n", me, 2 * rows_bytes);
    shmem_global_exit(1);
  }
  memset(cur, 0, rows_bytes);
  memset(nxt, 0, rows_bytes);
  for (int r = 1; r <= cnt; r++)
    for (int j = 0; j < n; j++) cur[(size_t)r * n + j] = init_value(n, lo + r - 1, j);
  int up_pe = me - 1, down_pe = me + 1, up_lo, up_cnt = 0;
  if (up_pe >= 0) block(n, npes, up_pe, &up_lo, &up_cnt);
  shmem_barrier_all();

  double t0 = now();
  for (int s = 0; s < steps; s++) {
    if (up_pe >= 0) /* my first row -> the up neighbour's bottom ghost row */
      shmem_double_put(cur + (size_t)(up_cnt + 1) * n, cur + n, n, up_pe);
    if (down_pe < npes) /* my last row -> the down neighbour's top ghost row */
      shmem_double_put(cur, cur + (size_t)cnt * n, n, down_pe);
    shmem_barrier_all(); /* completes the puts and orders them before everybody's reads */
    for (int r = 1; r <= cnt; r++)
      update_row(n, lo + r - 1, nxt + (size_t)r * n, cur + (size_t)(r - 1) * n, cur + (size_t)r * n,
                 cur + (size_t)(r + 1) * n);
    double *t = cur; cur = nxt; nxt = t;
  }
  shmem_barrier_all();
  double elapsed = now() - t0;

  /* Serial reference of the whole grid, private to this PE; compare my rows. */
  double *a = malloc((size_t)n * n * sizeof *a), *b = malloc((size_t)n * n * sizeof *b);
  if (!a || !b) {
    fprintf(stderr, "heat2d: PE %d: malloc of the reference grid failed\n", me);
    shmem_global_exit(1);
  }
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) a[(size_t)i * n + j] = init_value(n, i, j);
  for (int s = 0; s < steps; s++) {
    for (int i = 0; i < n; i++) /* rows 0 and n-1 are copied, so up/down are never read out of range there */
      update_row(n, i, b + (size_t)i * n, a + (size_t)(i > 0 ? i - 1 : i) * n, a + (size_t)i * n,
                 a + (size_t)(i < n - 1 ? i + 1 : i) * n);
    double *t = a; a = b; b = t;
  }
  double err = 0.0;
  for (int r = 1; r <= cnt; r++)
    for (int j = 0; j < n; j++) {
      double d = cur[(size_t)r * n + j] - a[(size_t)(lo + r - 1) * n + j];
      d = d < 0 ? -d : d;
      if (d != d) d = HUGE_VAL; /* a NaN counts as a huge error */
      if (d > err) err = d;
    }
  shmem_double_p(&errs[me], err, 0);
  shmem_barrier_all();

  static int failed; /* symmetric: PE 0 tells everybody */
  if (me == 0) {
    double max_err = 0.0;
    for (int pe = 0; pe < npes; pe++)
      if (errs[pe] > max_err) max_err = errs[pe];
    int fail = !(max_err <= TOL);
    printf("heat2d: N=%d steps=%d PEs=%d max_error=%.3e time=%.3f s\n", n, steps, npes, max_err, elapsed);
    printf("heat2d: %s\n", fail ? "FAILED" : "PASSED");
    fflush(stdout);
    for (int pe = 0; pe < npes; pe++) shmem_int_p(&failed, fail, pe);
  }
  shmem_barrier_all();
  int rc = failed;
  free(a);
  free(b);
  shmem_free(errs);
  shmem_free(nxt);
  shmem_free(cur);
  shmem_finalize();
  return rc;
}
