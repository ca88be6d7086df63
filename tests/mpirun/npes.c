/* npes.c - one job of N PEs: the launcher's processes are the PEs of one job, not N 1-PE jobs.
 *
 * Usage: npes N [TOKEN]   (TOKEN is ignored: it marks the processes of one run in /proc/PID/cmdline)
 *        npes N nodes=A,B,...   the PEs span nodes of A, B, ... PEs, ranks in that order (mpirun --host a:A,b:B):
 *                               local counts, local ranks and SHMEM_TEAM_SHARED are checked per node
 * Checks: shmem_n_pes() == N; shmemx_local_n_pes() == N (one node); every PE's shmem_my_pe() distinct and in [0, N)
 * (an fcollect of my_pe, and a fetch-add on a counter of PE 0 that ends at N); shmemx_local_pe() distinct too.
 * Every PE prints "npes: PE i of n, local j of m"; PE 0 then prints "npes: OK: one job of N PEs". Exits 1 on any
 * mismatch (after printing what it expected and what it got). */
#include <shmem.h>
#include <shmemx.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXPES 64
static long pes[MAXPES], locals[MAXPES], mine[2];
static long counter;
static int fails;

#define EXPECT(cond, ...)                                                                                             \
  do {                                                                                                                 \
    if (!(cond)) {                                                                                                     \
      char m_[256];                                                                                                    \
      snprintf(m_, sizeof m_, __VA_ARGS__);                                                                            \
      fprintf(stderr, "npes: PE %d: %s\n", shmem_my_pe(), m_);                                                         \
      fails++;                                                                                                         \
    }                                                                                                                  \
  } while (0)

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: npes N [TOKEN]\n");
    return 2;
  }
  int want = atoi(argv[1]);
  int node_of[MAXPES], node_first[MAXPES], node_n[MAXPES], nodes = 0;
  for (int i = 0; i < MAXPES; i++) node_of[i] = 0, node_first[i] = 0, node_n[i] = want;
  const char *np = getenv("SHOAL_NODE_PES"); /* runs of k PEs act as nodes (the "mixed" test setup) */
  if (np && atoi(np) > 0)
    for (int r = 0, k = atoi(np); r < MAXPES; r++)
      node_of[r] = r / k, node_first[r] = r / k * k, node_n[r] = want - r / k * k < k ? want - r / k * k : k;
  if (argc > 2 && !strncmp(argv[2], "nodes=", 6)) {
    int r = 0;
    for (char *q = argv[2] + 6; *q && nodes < MAXPES; nodes++) {
      int c = (int)strtol(q, &q, 10);
      for (int i = 0; i < c && r < MAXPES; i++) node_of[r] = nodes, node_first[r] = r - i, node_n[r++] = c;
      if (*q == ',') q++;
    }
  }
  shmem_init();
  int me = shmem_my_pe(), n = shmem_n_pes(), lme = shmemx_local_pe(), ln = shmemx_local_n_pes();
  printf("npes: PE %d of %d, local %d of %d\n", me, n, lme, ln);
  fflush(stdout);
  EXPECT(n == want, "shmem_n_pes() is %d, expected %d", n, want);
  if (me < MAXPES) {
    EXPECT(ln == node_n[me], "shmemx_local_n_pes() is %d, expected %d (the PEs of this node)", ln, node_n[me]);
    EXPECT(lme == me - node_first[me], "shmemx_local_pe() is %d, expected %d", lme, me - node_first[me]);
    /* SHARED: the PEs whose memory this PE maps: its node's, or itself alone under SHOAL_TRANSPORT=ofi. */
    const char *tr = getenv("SHOAL_TRANSPORT");
    int reach = 0, want_shared = tr && !strcmp(tr, "ofi") ? 1 : ln;
    for (int p = 0; p < n; p++) reach += shmem_ptr(&counter, p) != NULL;
    EXPECT(shmem_team_n_pes(SHMEM_TEAM_SHARED) == want_shared && reach == want_shared,
           "SHMEM_TEAM_SHARED has %d PEs, shmem_ptr reaches %d, expected %d", shmem_team_n_pes(SHMEM_TEAM_SHARED),
           reach, want_shared);
  }
  EXPECT(me >= 0 && me < n, "shmem_my_pe() %d is outside [0, %d)", me, n);
  EXPECT(lme >= 0 && lme < ln, "shmemx_local_pe() %d is outside [0, %d)", lme, ln);
  if (n <= MAXPES) {
    mine[0] = me, mine[1] = lme;
    shmem_long_fcollect(SHMEM_TEAM_WORLD, pes, &mine[0], 1);
    shmem_long_fcollect(SHMEM_TEAM_WORLD, locals, &mine[1], 1);
    for (int i = 0; i < n; i++) {
      EXPECT(pes[i] == i, "PE %d's shmem_my_pe() is %ld, expected %d", i, pes[i], i);
      for (int j = 0; j < i; j++)
        EXPECT(node_of[j] != node_of[i] || locals[j] != locals[i], "PEs %d and %d both have shmemx_local_pe() %ld",
               j, i, locals[i]);
    }
  }
  long before = shmem_long_atomic_fetch_add(&counter, 1, 0);
  EXPECT(before >= 0 && before < n, "fetch-add on PE 0's counter returned %ld, expected [0, %d)", before, n);
  shmem_barrier_all();
  if (me == 0) {
    EXPECT(counter == n, "PE 0's counter is %ld after every PE added 1, expected %d", counter, n);
    if (!fails) printf("npes: OK: one job of %d PEs\n", n);
  }
  shmem_finalize();
  return fails ? 1 : 0;
}
