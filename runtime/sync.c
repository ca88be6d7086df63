/* sync.c - fence, quiet, and the runtime's all-PE barrier (shmem_barrier_all and shmem_sync_all are the collectives':
 * collectives/coll_barrier.c): a dissemination barrier over flags in the internal symmetric area
 * (one cache line per round), so two PEs meet in one cache-line exchange each way. */
#include "proxy.h"
#include "shoal.h"
#include "transport.h"

#include <sched.h>
#include <time.h>

/* Waiting (model in shoal.h). The numbers come from this 2-vCPU VM (docs/performance.md): a sched_yield that finds
 * nobody else to run returns in ~0.3-1 us; WAIT_SPIN_NS covers every wait of a bound PE pair up to 4 MiB messages
 * (a 1 MiB put takes ~25 us on half a CPU), and past it a yield every microsecond costs a bound PE nothing
 * measurable (nobody else is there to run). It was 50 us: a PE sharing its core with unrelated busy work then
 * yielded in the middle of a 512 KiB-1 MiB ping-pong and got its CPU back a scheduler slice later (2-4 ms per
 * message against 24-32 us now; tests/multi/busy_core.c). */
#define WAIT_SHARED_NS 500    /* when a PE shares this CPU: yield at the first step and every later one */
#define WAIT_SPIN_NS 1000000  /* spin before yielding otherwise */
#define WAIT_YIELD_NS 1000000 /* then yields without progress before sleeping */
#define WAIT_SLEEP_MAX_NS 200000
#define WAIT_RESCAN_NS 100000 /* how long a look at the peers' CPUs stays valid */
static bool wait_oversubscribed;
static _Thread_local int wait_cpu = -1; /* the CPU of this thread's last look, and what it found: */
static _Thread_local bool wait_shared;
static _Thread_local int64_t wait_scanned; /* ns */

static int64_t wait_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void shoal_wait_init(bool oversubscribed) { wait_oversubscribed = oversubscribed; }
bool shoal_wait_oversubscribed(void) { return wait_oversubscribed; }

/* Did another PE of this node last wait on CPU cpu? Publishes ours first. Racy by design (threads, stale reports):
 * a wrong answer only costs a few yields or a longer spin. */
static bool wait_cpu_shared(int64_t t) {
  int cpu = sched_getcpu();
  if (cpu == wait_cpu && t - wait_scanned < WAIT_RESCAN_NS) return wait_shared;
  shoal_sync_area_t *sync = shoal_g.sync;
  if (!sync || !shoal_g.peer_heap) return false;
  atomic_store_explicit(&sync->cpu, cpu + 1, memory_order_relaxed);
  size_t off = (size_t)((char *)&sync->cpu - shoal_g.heap_base);
  bool shared = false;
  for (int p = 0; p < shoal_g.npes && !shared; p++)
    if (p != shoal_g.me && shoal_g.peer_heap[p])
      shared = atomic_load_explicit((_Atomic int *)(shoal_g.peer_heap[p] + off), memory_order_relaxed) == cpu + 1;
  wait_cpu = cpu, wait_shared = shared, wait_scanned = t;
  return shared;
}

void shoal_wait_step(shoal_wait_t *w) {
  /* A PE waiting on its own memory serves its peers of other nodes meanwhile (their gets, puts and AMOs to it move
   * on at once, not after the transport's progress thread wakes up). */
  if (SHOAL_UNLIKELY(shoal_g.tl != NULL)) shoal_g.tl->progress();
  shoal_wait_backoff(w);
}

void shoal_wait_backoff(shoal_wait_t *w) {
  if (shoal_g.spin > 0) { /* fixed SHOAL_SPIN: yield every spin polls */
    if ((w->polls += SHOAL_WAIT_CHECK) >= shoal_g.spin) {
      w->polls = 0;
      sched_yield();
    }
    return;
  }
  int64_t t = wait_now();
  if (!w->t0) {
    w->t0 = t;
    w->spin = wait_oversubscribed || wait_cpu_shared(t) ? WAIT_SHARED_NS : WAIT_SPIN_NS;
    if (w->spin == WAIT_SHARED_NS) sched_yield(); /* the PE sharing this CPU may be the one to wait for */
    return;
  }
  int64_t waited = t - w->t0;
  if (waited < w->spin) return;
  /* With peers on other nodes, keep serving them (no sleep: their latency would be this PE's wake-up). */
  if (waited < w->spin + WAIT_YIELD_NS || shoal_g.tl) {
    sched_yield();
    return;
  }
  /* Sleep a thirty-second of the time waited so far: at most ~3% (plus the timer slack) on top of a long wait. */
  int64_t ns = waited / 32 < WAIT_SLEEP_MAX_NS ? waited / 32 : WAIT_SLEEP_MAX_NS;
  struct timespec ts = {0, (long)ns};
  nanosleep(&ts, NULL);
}

/* Hook for transports with outstanding operations (GPU streams, libfabric): NULL when everything is synchronous. */
void (*shoal_quiet_hook)(void);
void (*shoal_fence_hook)(void);

void shmem_fence(void) {
  SHOAL_CHECK_INIT("shmem_fence");
  atomic_thread_fence(memory_order_release); /* stores to each peer's mapping become visible in order */
  if (shoal_fence_hook) shoal_fence_hook();
}

/* On SHMEM_CTX_INVALID, quiet and fence perform no operation (spec 1.5 9.11), as shmem_ctx_destroy does. */
void shmem_ctx_fence(shmem_ctx_t ctx) {
  SHOAL_CHECK_INIT("shmem_ctx_fence");
  if (ctx == SHMEM_CTX_INVALID) return;
  SHOAL_CHECK_CTX("shmem_ctx_fence", ctx);
  if (!ctx->tl) {
    shmem_fence();
    return;
  }
  atomic_thread_fence(memory_order_release);
  shoal_tl_fence_tx("shmem_ctx_fence", ctx->tl); /* the context's own endpoint: its operations only */
}

void shmem_quiet(void) {
  SHOAL_CHECK_INIT("shmem_quiet");
  /* the device proxy's requests first (kernels' operations on PEs of other nodes are this PE's too): a kernel put
   * then the host's barrier (after a device synchronize) is then complete, as in NVSHMEM */
  if (SHOAL_UNLIKELY(__atomic_load_n(&shoal_proxy_on, __ATOMIC_RELAXED))) shoal_proxy_drain("shmem_quiet", false);
  if (shoal_quiet_hook) shoal_quiet_hook(); /* the transport between nodes (comm.c), when one runs */
  atomic_thread_fence(memory_order_seq_cst);
}

void shmem_ctx_quiet(shmem_ctx_t ctx) {
  SHOAL_CHECK_INIT("shmem_ctx_quiet");
  if (ctx == SHMEM_CTX_INVALID) return;
  SHOAL_CHECK_CTX("shmem_ctx_quiet", ctx);
  if (!ctx->tl) {
    shmem_quiet();
    return;
  }
  shoal_tl_quiet_tx("shmem_ctx_quiet", ctx->tl); /* the context's own endpoint: its operations only */
  atomic_thread_fence(memory_order_seq_cst);
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
      shoal_tl_signal("shmem_barrier_all", to, (void *)mine, e);
    SHOAL_WAIT_WHILE(atomic_load_explicit(mine, memory_order_acquire) < e);
  }
}

/* With two PEs, the peer on another node, in both barriers of WORLD (dissemination, linear) the peer leaves only
 * after this PE's signal, this PE's first operation on the default context after this quiet, which arrives behind
 * its puts there (comm.h): those puts are at the peer before it leaves, so they cost no round trip of their own here
 * (2 PEs over net on lo: shmem_int_p, a wait, then shmem_barrier_all, 54 -> 26 us a round). Not with more PEs: a
 * third could leave, and read the peer's memory, before the signal arrived there. */
void shoal_barrier_all_quiet(const char *routine) {
  int peer = 1 - shoal_g.me;
  if (shoal_g.npes != 2 || !shoal_quiet_hook || shoal_g.heap_lim[peer] ||
      __atomic_load_n(&shoal_proxy_on, __ATOMIC_RELAXED)) {
    shmem_quiet();
    return;
  }
  shoal_comm_quiet_before_signal(routine, peer);
  atomic_thread_fence(memory_order_seq_cst);
}

/* Until the collectives register theirs (shoal.h): shmem_barrier_all's meaning with the runtime's own barrier. */
static void barrier_all_world(void) {
  shoal_barrier_all_quiet("shmem_barrier_all");
  shoal_barrier_world();
}
void (*shoal_barrier_all_hook)(void) = barrier_all_world;
