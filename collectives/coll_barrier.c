/* coll_barrier.c - team and active-set barriers (spec 9.9: shmem_team_sync, shmem_barrier, shmem_sync).
 *   dissemination (default): round k signals member (me + 2^k) % n and waits for (me - 2^k) % n; ceil(log2 n)
 *     rounds, each sender's signals land in a distinct cell of the receiver.
 *   linear: every member signals member 0, which then releases every member (2 (n - 1) signals through one PE). */
#include "coll.h"

void shoal_coll_barrier(shoal_team_t *t, const char *routine) {
  int n = t->size, me = t->rank;
  if (n == 1) {
    atomic_thread_fence(memory_order_seq_cst);
    return;
  }
  uint64_t v = ++t->seq;
  if (shoal_coll_algo(SHOAL_COLL_BARRIER, routine) == SHOAL_BARRIER_LINEAR) {
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
