/* sync.c - fence, quiet, and the all-PE barrier: a dissemination barrier over flags in the internal symmetric area
 * (one cache line per round), so two PEs meet in one cache-line exchange each way. */
#include "coll.h"
#include "transport.h"

#include <sched.h>

void shoal_yield(void) { sched_yield(); }

/* Hook for transports with outstanding operations (GPU streams, libfabric): NULL when everything is synchronous. */
void (*shoal_quiet_hook)(void);

void shmem_fence(void) {
  SHOAL_CHECK_INIT("shmem_fence");
  atomic_thread_fence(memory_order_release); /* stores to each peer's mapping become visible in order */
  if (SHOAL_UNLIKELY(shoal_g.tl != NULL)) shoal_tl_fence("shmem_fence");
}

/* On SHMEM_CTX_INVALID, quiet and fence perform no operation (spec 1.5 9.11), as shmem_ctx_destroy does. */
void shmem_ctx_fence(shmem_ctx_t ctx) {
  SHOAL_CHECK_INIT("shmem_ctx_fence");
  if (ctx == SHMEM_CTX_INVALID) return;
  SHOAL_CHECK_CTX("shmem_ctx_fence", ctx);
  shmem_fence();
}

void shmem_quiet(void) {
  SHOAL_CHECK_INIT("shmem_quiet");
  if (shoal_quiet_hook) shoal_quiet_hook();
  if (SHOAL_UNLIKELY(shoal_g.tl != NULL)) shoal_tl_quiet("shmem_quiet");
  atomic_thread_fence(memory_order_seq_cst);
}

void shmem_ctx_quiet(shmem_ctx_t ctx) {
  SHOAL_CHECK_INIT("shmem_ctx_quiet");
  if (ctx == SHMEM_CTX_INVALID) return;
  SHOAL_CHECK_CTX("shmem_ctx_quiet", ctx);
  shmem_quiet();
}

/* Round k: tell PE (me + 2^k) % n that this PE reached barrier number e, then wait for PE (me - 2^k) % n. Flags hold
 * the epoch, so no reset is needed and a fast PE's next barrier cannot be mistaken for this one. */
void shoal_barrier_world(void) {
  int n = shoal_g.npes, me = shoal_g.me;
  if (n == 1) {
    atomic_thread_fence(memory_order_seq_cst);
    return;
  }
  uint64_t e = ++shoal_g.barrier_epoch;
  for (int k = 0, d = 1; d < n; k++, d <<= 1) {
    int to = me + d >= n ? me + d - n : me + d;
    _Atomic uint64_t *mine = &shoal_g.sync->bar_flag[k][0];
    if (SHOAL_LIKELY(shoal_g.heap_lim[to]))
      atomic_store_explicit((_Atomic uint64_t *)((char *)mine + shoal_g.heap_delta[to]), e, memory_order_release);
    else /* a PE of another node */
      shoal_tl_amo("shmem_barrier_all", to, (void *)mine, sizeof(uint64_t), SHOAL_TL_AMO_SET, e, 0);
    SHOAL_WAIT_WHILE(atomic_load_explicit(mine, memory_order_acquire) < e);
  }
}

/* SHOAL_COLL_BARRIER_ALGO applies here too: linear is SHMEM_TEAM_WORLD's linear barrier; auto and dissemination
 * are the dissemination barrier above (its own flags: init and finalize use it before and after teams exist). */
static void barrier_all(const char *routine) {
  if (SHOAL_UNLIKELY(shoal_coll_algo(SHOAL_COLL_BARRIER, routine) == SHOAL_BARRIER_LINEAR))
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
