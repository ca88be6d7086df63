/* coll_barrier.c - the barriers' entry points, teams, active sets and all PEs (spec 9.9: shmem_team_sync,
 * shmem_barrier, shmem_sync, shmem_barrier_all, shmem_sync_all; the runtime registers the last as its
 * shoal_barrier_all_hook); the algorithms are coll_core.c's (shoal_coll_barrier). */
#include "coll_core.h"

int shmem_team_sync(shmem_team_t team) {
  shoal_coll_barrier(shoal_team_get(team, "shmem_team_sync"), "shmem_team_sync");
  return 0;
}

void shmem_barrier(int PE_start, int logPE_stride, int PE_size, long *pSync) {
  shoal_team_t *t = shoal_aset_get(PE_start, logPE_stride, PE_size, pSync, "shmem_barrier");
  shmem_quiet();
  shoal_coll_barrier(t, "shmem_barrier");
}

void(shmem_sync)(int PE_start, int logPE_stride, int PE_size, long *pSync) { /* (): not shmem.h's shmem_sync(...) */
  shoal_coll_barrier(shoal_aset_get(PE_start, logPE_stride, PE_size, pSync, "shmem_sync"), "shmem_sync");
}

/* SHOAL_COLL_BARRIER_ALGO applies here too: linear is SHMEM_TEAM_WORLD's linear barrier, and so is the
 * hierarchical one where WORLD spans nodes with several PEs on one (auto or hierarchical); otherwise the runtime's
 * dissemination barrier (shoal_barrier_world, runtime/sync.c; its own flags: init and finalize use it before and
 * after teams exist). */
static void barrier_all(const char *routine) {
  int algo = shoal_coll_algo(SHOAL_COLL_BARRIER, routine);
  if (SHOAL_UNLIKELY(algo == SHOAL_BARRIER_LINEAR) ||
      (SHOAL_UNLIKELY(SHMEM_TEAM_WORLD && ((shoal_team_t *)SHMEM_TEAM_WORLD)->hier) && algo != SHOAL_BARRIER_DISSEM))
    shoal_coll_barrier((shoal_team_t *)SHMEM_TEAM_WORLD, routine);
  else
    shoal_barrier_world();
}

void shmem_barrier_all(void) {
  SHOAL_CHECK_INIT("shmem_barrier_all");
  shoal_barrier_all_quiet("shmem_barrier_all");
  barrier_all("shmem_barrier_all");
}

void shmem_sync_all(void) {
  SHOAL_CHECK_INIT("shmem_sync_all");
  barrier_all("shmem_sync_all");
}
