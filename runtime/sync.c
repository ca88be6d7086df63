/* sync.c - fence, quiet, and the all-PE barrier: a dissemination barrier over flags in the internal symmetric area
 * (one cache line per round), so two PEs meet in one cache-line exchange each way. */
#include "coll.h"

#include <sched.h>
#include <time.h>

/* Waiting (model in shoal.h). The numbers come from this 2-vCPU VM (docs/performance.md): a sched_yield that finds
 * nobody else to run returns in ~0.3-1 us, one that runs another task takes that task's slice or its own spin (>= a few
 * us); a spin of WAIT_MAX_NS covers every wait of a bound PE pair up to large collectives, and past it a yield every
 * microsecond costs a bound PE nothing measurable (nobody else is there to run). */
#define WAIT_MIN_NS 500       /* spin budget when the peer shares the CPU: the first or second step yields */
#define WAIT_MAX_NS 50000     /* spin budget when waits end while spinning */
#define WAIT_RAN_NS 3000      /* a yield that took longer ran another task */
#define WAIT_YIELD_NS 1000000 /* yields without progress before sleeping */
#define WAIT_SLEEP_MAX_NS 200000
static _Atomic int64_t wait_budget_ns = WAIT_MAX_NS; /* relaxed: a hint shared by the PE's threads */

static int64_t wait_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void shoal_wait_init(bool oversubscribed) {
  atomic_store_explicit(&wait_budget_ns, oversubscribed ? WAIT_MIN_NS : WAIT_MAX_NS, memory_order_relaxed);
}

void shoal_wait_step(shoal_wait_t *w) {
  if (shoal_g.spin > 0) { /* fixed SHOAL_SPIN: yield every spin polls */
    w->t0 = 1;
    if ((w->polls += SHOAL_WAIT_CHECK) >= shoal_g.spin) {
      w->polls = 0;
      sched_yield();
    }
    return;
  }
  int64_t t = wait_now();
  if (!w->t0) {
    w->t0 = t;
    return;
  }
  int64_t waited = t - w->t0;
  if (waited < atomic_load_explicit(&wait_budget_ns, memory_order_relaxed)) return;
  if (waited < WAIT_YIELD_NS) {
    sched_yield();
    w->yields++;
    w->ran = wait_now() - t > WAIT_RAN_NS;
    return;
  }
  /* Sleep a thirty-second of the time waited so far: at most ~3% (plus the timer slack) on top of a long wait. */
  int64_t ns = waited / 32 < WAIT_SLEEP_MAX_NS ? waited / 32 : WAIT_SLEEP_MAX_NS;
  struct timespec ts = {0, (long)ns};
  nanosleep(&ts, NULL);
  w->slept = true;
  w->ran = false;
}

void shoal_wait_end(const shoal_wait_t *w) {
  if (shoal_g.spin > 0) return;
  int64_t b = atomic_load_explicit(&wait_budget_ns, memory_order_relaxed);
  if (w->ran && !w->slept)
    b = WAIT_MIN_NS; /* the yield let the peer run here: spin less before the next one */
  else if (!w->yields && b < WAIT_MAX_NS)
    b = 2 * b < WAIT_MAX_NS ? 2 * b : WAIT_MAX_NS; /* the peer runs beside us: spinning pays */
  else
    return;
  atomic_store_explicit(&wait_budget_ns, b, memory_order_relaxed);
}

/* Hook for transports with outstanding operations (GPU streams, libfabric): NULL when everything is synchronous. */
void (*shoal_quiet_hook)(void);

void shmem_fence(void) {
  SHOAL_CHECK_INIT("shmem_fence");
  atomic_thread_fence(memory_order_release); /* stores to each peer's mapping become visible in order */
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
    _Atomic uint64_t *theirs = (_Atomic uint64_t *)((char *)mine + shoal_g.heap_delta[to]);
    atomic_store_explicit(theirs, e, memory_order_release);
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
