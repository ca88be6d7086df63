/*
 * test_crowd.c - collectives when PEs outnumber CPUs (issue 15; coll.h, "Staging" and "Pushes into scratch").
 *
 * 1. Every PE makes the same choice. PE 0 pins itself to one CPU before shmem_init, the others keep their mask:
 *    each PE then sees a different number of CPUs, but shoal_g.crowded (and the broadcast's push/pull choice for
 *    16-64 KiB, which reads it) must agree, or a 32 KiB broadcast hangs (it did: the choice came from each PE's
 *    own affinity mask). The flag is compared across PEs, and 32 KiB broadcasts from every root are checked.
 * 2. On a crowded node (more PEs than CPUs online: 3+ PEs on 2 cores), a root runs small broadcasts ahead of members
 *    that have not entered yet: the members wait (up to 8 s) for the root to say it finished RUNAHEAD broadcasts
 *    (fewer than WORLD's ring of 64 slots) before they enter any; then they check every value. With two staging
 *    halves the root would wait at the third call for the first one's readers, and the members would time out.
 *    The same on a team of all PEs (a user team: a ring of 16 slots, RUNAHEAD_TEAM calls). Where the node is not
 *    crowded the test says so and checks values only, as on teams with each member on its own node (t->all_far,
 *    SHOAL_TRANSPORT=ofi), whose broadcasts keep two halves in the receivers' staging.
 * 3. Small fcollects and alltoalls (scratch pushes when crowded) back to back with sum reductions between them (all
 *    take scratch rounds), values checked on every call.
 * 4. The staging ring wraps: 150 broadcasts of 24 B to 16 KiB (runs of 1 to 32 slots, the tail skipped at the wrap,
 *    reused slots waited for) from a root whose members enter 100 ms late, values checked on every call.
 * --expect-crowded (under cpuset_run.sh, one CPU): shoal_g.crowded must be set though more CPUs are online.
 */
#include "coll_core.h"

#include <sched.h>
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RUNAHEAD 40
#define RUNAHEAD_TEAM 12
#define BIGN 4096 /* longs: 32 KiB, past the staging (push or pull) */
#define MAXPE 16

static long big_src[BIGN], big_dst[BIGN], small_src[RUNAHEAD], small_dst[RUNAHEAD][4];
static long gsrc[MAXPE * 64], gdst[MAXPE * MAXPE * 64];
static long root_done, flags[MAXPE];
static int me, npes, fails;

#define CHECK(c, ...)                                                                                                 \
  do {                                                                                                                 \
    if (!(c)) {                                                                                                        \
      fprintf(stderr, "PE %d: ", me);                                                                                  \
      fprintf(stderr, __VA_ARGS__);                                                                                    \
      fputc('\n', stderr);                                                                                             \
      fails++;                                                                                                         \
    }                                                                                                                  \
  } while (0)

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Broadcasts of calls x 3 longs from root 0 on team; members enter only after the root says it is done. */
static void runahead(shmem_team_t team, int calls, bool crowded, const char *what) {
  int rank = shmem_team_my_pe(team);
  const char *forced = getenv("SHOAL_COLL_BCAST_ALGO");
  shoal_team_t *tt = (shoal_team_t *)team; /* all_far: two halves; hier: through the nodes; forced: not staged */
  crowded = crowded && !tt->all_far && !tt->hier && (!forced || !strcmp(forced, "auto"));
  static long rounds; /* not root_done + 1: the root may have set root_done here already */
  long expect_done = ++rounds;
  if (rank == 0) {
    for (int c = 0; c < calls; c++) {
      for (int i = 0; i < 3; i++) small_src[i] = 1000L * c + i + 1; /* free again once the call returns */
      shmem_broadcastmem(team, small_dst[c], small_src, 3 * sizeof(long), 0);
    }
    for (int p = 0; p < npes; p++)
      if (p != me) shmem_long_atomic_set(&root_done, expect_done, p);
    shmem_quiet();
  } else {
    double t0 = now();
    while (crowded && shmem_long_atomic_fetch(&root_done, me) < expect_done && now() - t0 < 8.0) usleep(1000);
    bool ahead = shmem_long_atomic_fetch(&root_done, me) >= expect_done;
    if (crowded)
      CHECK(ahead, "%s: the root did not finish %d small broadcasts before the members entered (it waited for them)",
            what, calls);
    for (int c = 0; c < calls; c++) {
      shmem_broadcastmem(team, small_dst[c], small_src, 3 * sizeof(long), 0);
      for (int i = 0; i < 3; i++)
        CHECK(small_dst[c][i] == 1000L * c + i + 1, "%s: call %d element %d: %ld, expected %ld", what, c, i,
              small_dst[c][i], 1000L * c + i + 1);
    }
  }
  shmem_barrier_all();
}

int main(int argc, char **argv) {
  bool expect_crowded = argc > 1 && !strcmp(argv[1], "--expect-crowded");
  const char *r = getenv("SHOAL_RANK");
  if (r && atoi(r) == 0) { /* before shmem_init: the runtime reads the mask there */
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(sched_getcpu(), &one);
    if (sched_setaffinity(0, sizeof one, &one)) perror("sched_setaffinity");
  }
  shmem_init();
  me = shmem_my_pe();
  npes = shmem_n_pes();
  if (npes > MAXPE) {
    if (me == 0) fprintf(stderr, "test_crowd: at most %d PEs\n", MAXPE);
    shmem_finalize();
    return 77;
  }

  /* 1. the same choice everywhere */
  bool crowded = shoal_g.crowded;
  long mine = (crowded ? 1 : 0) | (shoal_coll_oversubscribed ? 2 : 0);
  for (int p = 0; p < npes; p++) shmem_long_p(&flags[me], mine, p);
  shmem_barrier_all();
  for (int p = 0; p < npes; p++)
    CHECK(flags[p] == mine, "crowded/oversubscribed %ld here but %ld on PE %d: collectives would choose differently",
          mine, flags[p], p);
  if (expect_crowded) /* run in a cgroup cpuset of one CPU (cpuset_run.sh): the node has fewer CPUs than PEs */
    CHECK(crowded, "not crowded with %d PEs in a cpuset of one CPU (%ld online): the cgroup's limit was not counted",
          shoal_g.boot.local_size, sysconf(_SC_NPROCESSORS_ONLN));
  for (int root = 0; root < npes; root++)
    for (int c = 0; c < 3; c++) {
      for (int i = 0; i < BIGN; i++) big_src[i] = me == root ? (long)root * 100000 + c * 10000 + i : -1;
      shmem_broadcastmem(SHMEM_TEAM_WORLD, big_dst, big_src, sizeof big_src, root);
      for (int i = 0; i < BIGN; i++)
        if (big_dst[i] != (long)root * 100000 + c * 10000 + i) {
          CHECK(0, "32 KiB broadcast from %d, call %d: element %d is %ld", root, c, i, big_dst[i]);
          break;
        }
    }

  /* 2. a root runs ahead of members that are not there yet */
  if (me == 0 && !crowded)
    printf("test_crowd: %d PEs per node on %ld CPUs is not crowded: run-ahead not expected, values checked only\n",
           shoal_g.boot.local_size, sysconf(_SC_NPROCESSORS_ONLN));
  shmem_barrier_all();
  runahead(SHMEM_TEAM_WORLD, RUNAHEAD, crowded, "WORLD");
  shmem_team_t all;
  CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, npes, NULL, 0, &all) == 0, "team split failed");
  runahead(all, RUNAHEAD_TEAM, crowded, "a team of all PEs");
  runahead(all, RUNAHEAD_TEAM, crowded, "a team of all PEs, again");
  shmem_team_destroy(all);

  /* 3. small fcollects and alltoalls back to back */
  for (int c = 0; c < 50; c++) {
    int nel = 1 + c % 64;
    for (int i = 0; i < nel * npes; i++) gsrc[i] = (long)me * 1000000 + c * 1000 + i;
    shmem_long_fcollect(SHMEM_TEAM_WORLD, gdst, gsrc, (size_t)nel);
    for (int p = 0; p < npes; p++)
      for (int i = 0; i < nel; i++)
        if (gdst[p * nel + i] != (long)p * 1000000 + c * 1000 + i) {
          CHECK(0, "fcollect call %d: block %d element %d is %ld", c, p, i, gdst[p * nel + i]);
          p = npes;
          break;
        }
    static long rsrc[64], rdst[64];
    for (int i = 0; i < nel; i++) rsrc[i] = me + c + i;
    shmem_long_sum_reduce(SHMEM_TEAM_WORLD, rdst, rsrc, (size_t)nel);
    for (int i = 0; i < nel; i++)
      if (rdst[i] != (long)npes * (npes - 1) / 2 + (long)npes * (c + i)) {
        CHECK(0, "sum_reduce call %d: element %d is %ld", c, i, rdst[i]);
        break;
      }
    shmem_long_alltoall(SHMEM_TEAM_WORLD, gdst, gsrc, (size_t)nel);
    for (int p = 0; p < npes; p++)
      for (int i = 0; i < nel; i++)
        if (gdst[p * nel + i] != (long)p * 1000000 + c * 1000 + me * nel + i) {
          CHECK(0, "alltoall call %d: block %d element %d is %ld", c, p, i, gdst[p * nel + i]);
          p = npes;
          break;
        }
  }

  /* 4. the ring wraps with mixed sizes */
  static const int sizes[] = {3, 75, 512, 2048, 16, 700, 1, 300}; /* longs: 24 B .. 16 KiB */
  if (me != 0) usleep(100000);
  for (int c = 0; c < 150; c++) {
    int nel = sizes[c % 8];
    if (me == 0)
      for (int i = 0; i < nel; i++) big_src[i] = 7L * c + i;
    shmem_broadcastmem(SHMEM_TEAM_WORLD, big_dst, big_src, (size_t)nel * sizeof(long), 0);
    for (int i = 0; i < nel; i++)
      if (big_dst[i] != 7L * c + i) {
        CHECK(0, "ring broadcast %d (%d longs): element %d is %ld", c, nel, i, big_dst[i]);
        break;
      }
  }
  shmem_barrier_all();

  int all_fails = 0;
  static int fsum, fsrc;
  fsrc = fails;
  shmem_int_sum_reduce(SHMEM_TEAM_WORLD, &fsum, &fsrc, 1);
  all_fails = fsum;
  if (me == 0) printf("test_crowd: %d PEs, crowded %d: %s\n", npes, crowded, all_fails ? "FAILED" : "ok");
  shmem_finalize();
  return all_fails ? 1 : 0;
}
