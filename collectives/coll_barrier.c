/* coll_barrier.c - team, active-set and all-PE barriers (spec 9.9: shmem_team_sync, shmem_barrier, shmem_sync,
 * shmem_barrier_all, shmem_sync_all; the runtime registers the last as its shoal_barrier_all_hook).
 *   dissemination (default): round k signals member (me + 2^k) % n and waits for (me - 2^k) % n; ceil(log2 n)
 *     rounds, each sender's signals land in a distinct cell of the receiver.
 *   linear: every member signals member 0, which then releases every member (2 (n - 1) signals through one PE).
 *   hierarchical (default for teams on several nodes with two or more PEs on some node): members signal their
 *     node's leader through shared memory, the leaders run the dissemination barrier among themselves, then release
 *     their node; ceil(log2 nodes) messages between nodes per leader, none for the other members (flat
 *     dissemination sends up to ceil(log2 n) from every PE). As SOS's and OSHMEM's node-aware barriers. */
#include "coll.h"

static void barrier_hier(shoal_team_t *t, uint64_t v) {
  if (t->lead_idx < 0) {
    shoal_coll_post(t, t->mates[0], v);
    shoal_coll_wait(t, t->mates[0], v);
    return;
  }
  for (int k = 0; k < t->nmates; k++) shoal_coll_wait(t, t->mates[k], v);
  int n = t->nlead, me = t->lead_idx;
  for (int d = 1; d < n; d <<= 1) {
    shoal_coll_post(t, t->lead[me + d < n ? me + d : me + d - n], v);
    shoal_coll_wait(t, t->lead[me - d >= 0 ? me - d : me - d + n], v);
  }
  for (int k = 0; k < t->nmates; k++) shoal_coll_post(t, t->mates[k], v);
}

void shoal_coll_barrier(shoal_team_t *t, const char *routine) {
  int n = t->size, me = t->rank;
  if (n == 1) {
    atomic_thread_fence(memory_order_seq_cst);
    return;
  }
  uint64_t v = ++t->seq;
  int algo = shoal_coll_algo(SHOAL_COLL_BARRIER, routine);
  if (SHOAL_UNLIKELY(t->hier) && (algo == SHOAL_ALGO_AUTO || algo == SHOAL_BARRIER_HIER)) {
    barrier_hier(t, v);
    return;
  }
  if (algo == SHOAL_BARRIER_LINEAR) {
    if (me == 0) {
      for (int s = 1; s < n; s++) shoal_coll_wait(t, s, v);
      for (int r = 1; r < n; r++) shoal_coll_post(t, r, v);
    } else {
      shoal_coll_post(t, 0, v);
      shoal_coll_wait(t, 0, v);
    }
    return;
  }
  for (int d = 1; d < n; d <<= 1) {
    shoal_coll_post(t, me + d < n ? me + d : me + d - n, v);
    shoal_coll_wait(t, me - d >= 0 ? me - d : me - d + n, v);
  }
}

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
  shmem_quiet();
  barrier_all("shmem_barrier_all");
}

void shmem_sync_all(void) {
  SHOAL_CHECK_INIT("shmem_sync_all");
  barrier_all("shmem_sync_all");
}
