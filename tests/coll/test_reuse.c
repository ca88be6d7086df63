/*
 * test_reuse.c - a team slot reused while a member of the destroyed team still reads it (one node; 3+ PEs).
 *
 * A collect whose sizes are all 0 moves no data, so nothing used to tell a member that the others had read its size
 * cell. Here team A = {0, 1} does such a collect and PE 1 sleeps 100 ms between the size exchange and reading the
 * cells (shoal_coll_test_sizes_delay_ns). Meanwhile PE 0 leaves, destroys A, and with PE 2 makes team B from a
 * parent without PE 1; B takes A's slot (checked: the test says so if slot assignment ever stops doing that) and
 * B's collect rewrites PE 0's cell with 8. PE 1 then read 8, waited for data that never came, and the job hung
 * (oshrun's timeout). Now the collect exchanges once more when all sizes are 0: PE 0 leaves A's collect only after
 * PE 1 has read the sizes. PE 1 checks that its dest is untouched and B's members check B's values.
 */
#include "coll_core.h"

#include <shmem.h>
#include <stdio.h>
#include <string.h>

static long src[4], dst[4 * 64];
static int me, npes, fails;

#define CHECK(c, ...)                                                                                                 \
  do {                                                                                                                 \
    if (!(c) && fails++ < 10) {                                                                                        \
      fprintf(stderr, "test_reuse: PE %d: ", me);                                                                      \
      fprintf(stderr, __VA_ARGS__);                                                                                    \
      fprintf(stderr, "\n");                                                                                           \
    }                                                                                                                  \
  } while (0)

int main(void) {
  shmem_init();
  me = shmem_my_pe(), npes = shmem_n_pes();
  if (npes < 3) {
    if (me == 0) printf("test_reuse: needs 3 PEs or more (%d): skipped\n", npes);
    shmem_finalize();
    return 77;
  }
  shmem_team_t P = SHMEM_TEAM_INVALID;
  shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, 2, NULL, 0, &P); /* {0, 2} */
  for (int it = 0; it < 4; it++) {
    shmem_team_t A = SHMEM_TEAM_INVALID;
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, 2, NULL, 0, &A); /* {0, 1} */
    int aslot = -1;
    if (A != SHMEM_TEAM_INVALID) {
      aslot = shoal_team_get(A, "test_reuse")->slot;
      for (size_t i = 0; i < sizeof dst / sizeof dst[0]; i++) dst[i] = -5;
      shoal_coll_test_sizes_delay_ns = me == 1 ? 100000000 : 0; /* room for PE 0 and 2 on a loaded machine */
      shmem_long_collect(A, dst, src, 0);
      shoal_coll_test_sizes_delay_ns = 0;
      for (size_t i = 0; i < sizeof dst / sizeof dst[0]; i++)
        if (dst[i] != -5) {
          CHECK(0, "round %d: a collect of 0 elements from every PE wrote dest[%zu] = %ld", it, i, dst[i]);
          break;
        }
      shmem_team_destroy(A);
    }
    if (P != SHMEM_TEAM_INVALID) {
      shmem_team_t B = SHMEM_TEAM_INVALID;
      shmem_team_split_strided(P, 0, 1, 2, NULL, 0, &B);
      CHECK(me != 0 || shoal_team_get(B, "test_reuse")->slot == aslot,
            "round %d: team B took slot %d, not A's %d: this test no longer reuses a slot", it,
            shoal_team_get(B, "test_reuse")->slot, aslot);
      src[0] = 1000L * me + it;
      shmem_long_collect(B, dst, src, 1);
      CHECK(dst[0] == it && dst[1] == 2000L + it, "round %d: team B's collect gave %ld %ld, want %d %ld", it, dst[0],
            dst[1], it, 2000L + it);
      shmem_team_destroy(B);
    }
    shmem_barrier_all();
  }
  if (P != SHMEM_TEAM_INVALID) shmem_team_destroy(P);
  static int fsum, fsrc;
  fsrc = fails;
  shmem_int_sum_reduce(SHMEM_TEAM_WORLD, &fsum, &fsrc, 1);
  if (me == 0) printf("test_reuse: %d PEs: %s\n", npes, fsum ? "FAILED" : "ok");
  shmem_finalize();
  return fsum ? 1 : 0;
}
