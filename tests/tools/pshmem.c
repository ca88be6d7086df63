/* pshmem.c - a profiling tool in the program itself (spec 1.5 annex, as TAU and Score-P wrap the API): it defines
 * shmem_putmem, shmem_barrier_all, shmem_quiet, shmem_long_atomic_fetch_add and shmem_pcontrol, counts each call and
 * calls the pshmem_ name. The counts must be exactly the program's own calls: the library's internal calls (the quiet
 * inside shmem_barrier_all, the barrier inside shmem_realloc, the collectives' work) use the pshmem_ names and never
 * reach the wrapper, and a pshmem_ name that came back to the wrapper would recurse (caught as re-entry, or as a
 * stack overflow). The values are checked too.
 * Built twice: against libshoal.so and against libshoal.a (the library's shmem_ names are weak there, so these
 * definitions replace them without a duplicate-symbol error). */
#include <pshmem.h>
#include <shmem.h>
#include <stdarg.h>

#include "../multi/test_common.h"

static long n_putmem, n_barrier, n_quiet, n_fadd, n_pcontrol, depth, max_depth;
static int last_level = -1;

static void enter(void) {
  if (++depth > max_depth) max_depth = depth;
}

void shmem_putmem(void *dest, const void *source, size_t nelems, int pe) {
  n_putmem++;
  enter();
  pshmem_putmem(dest, source, nelems, pe);
  depth--;
}
void shmem_barrier_all(void) {
  n_barrier++;
  enter();
  pshmem_barrier_all();
  depth--;
}
void shmem_quiet(void) {
  n_quiet++;
  enter();
  pshmem_quiet();
  depth--;
}
long shmem_long_atomic_fetch_add(long *dest, long value, int pe) {
  n_fadd++;
  enter();
  long r = pshmem_long_atomic_fetch_add(dest, value, pe);
  depth--;
  return r;
}
void shmem_pcontrol(const int level, ...) {
  n_pcontrol++;
  last_level = level;
  pshmem_pcontrol(level);
}

int main(void) {
  test_name = "pshmem";
  shmem_pcontrol(1); /* before shmem_init: allowed */
  shmem_init();
  int me = shmem_my_pe(), npes = shmem_n_pes(), right = (me + 1) % npes, left = (me + npes - 1) % npes;
  enum { ROUNDS = 5, N = 16 };
  char *buf = shmem_malloc(N);
  buf = shmem_realloc(buf, ROUNDS * N); /* collective: a barrier inside, which must not reach the wrapper */
  long *counter = shmem_calloc(1, sizeof(long));
  long olds[ROUNDS];
  shmem_pcontrol(0);
  shmem_pcontrol(2);
  shmem_pcontrol(7, "tool-defined", 1.5); /* other levels and arguments: the tool's, the library ignores them */
  for (int r = 0; r < ROUNDS; r++) {
    char src[N];
    for (int i = 0; i < N; i++) src[i] = (char)(me * 31 + r * 7 + i);
    shmem_putmem(buf + r * N, src, N, right);
    olds[r] = shmem_long_atomic_fetch_add(counter, me + 1, 0);
    shmem_quiet();
    shmem_barrier_all(); /* quiets inside: not the program's calls */
  }
  long *mine = shmem_malloc(2 * sizeof(long));
  mine[0] = me + 1;
  shmem_long_sum_reduce(SHMEM_TEAM_WORLD, mine + 1, mine, 1); /* a collective: its internal puts are not counted */
  CHECK(mine[1] == (long)npes * (npes + 1) / 2, "sum_reduce: %ld", mine[1]);
  shmem_sync_all();
  for (int r = 0; r < ROUNDS; r++)
    for (int i = 0; i < N; i++)
      CHECK(buf[r * N + i] == (char)(left * 31 + r * 7 + i), "round %d byte %d from PE %d: %d", r, i, left,
            buf[r * N + i]);
  long total = (long)npes * (npes + 1) / 2 * ROUNDS;
  if (me == 0) CHECK(*counter == total, "counter on PE 0: %ld, expected %ld", *counter, total);
  for (int r = 0; r < ROUNDS; r++)
    CHECK(olds[r] >= 0 && olds[r] < total, "fetch_add round %d returned %ld, outside [0, %ld)", r, olds[r], total);
  CHECK(n_putmem == ROUNDS, "shmem_putmem wrapper called %ld times, expected %d", n_putmem, ROUNDS);
  CHECK(n_fadd == ROUNDS, "shmem_long_atomic_fetch_add wrapper called %ld times, expected %d", n_fadd, ROUNDS);
  CHECK(n_barrier == ROUNDS, "shmem_barrier_all wrapper called %ld times, expected %d (the library's own barriers "
        "must not reach it)", n_barrier, ROUNDS);
  CHECK(n_quiet == ROUNDS, "shmem_quiet wrapper called %ld times, expected %d (shmem_barrier_all's quiet must not "
        "reach it)", n_quiet, ROUNDS);
  CHECK(n_pcontrol == 4 && last_level == 7, "shmem_pcontrol wrapper: %ld calls, last level %d", n_pcontrol,
        last_level);
  CHECK(max_depth == 1, "a wrapper was re-entered (depth %ld): a pshmem_ name called back into the tool", max_depth);
  printf("pshmem: PE %d: putmem %ld, fetch_add %ld, quiet %ld, barrier_all %ld, pcontrol %ld calls\n", me, n_putmem,
         n_fadd, n_quiet, n_barrier, n_pcontrol);
  shmem_free(mine);
  shmem_free(counter);
  shmem_free(buf);
  return test_finish();
}
