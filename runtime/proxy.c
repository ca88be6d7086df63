/* proxy.c - the host proxy of device-initiated operations on far PEs (issue 31; docs/gpu.md, "The proxy"; anchors:
 * NVSHMEM's proxy thread, NCCL GIN's proxy backend, rocSHMEM's reverse offload).
 *
 * A kernel's put/get/p/g/AMO/put_signal/fence/quiet on a PE that loads and stores cannot reach goes into this PE's
 * queue (include/shoal/detail/proxy_queue.h: a ring of 64-byte entries in pinned host memory, a ticket counter in
 * GPU memory). One thread per PE serves it in ticket order through the host paths (shmem_ctx_* on a private context
 * of its own: its own endpoint between nodes, no lock), so whatever those reach (host heap and static data of any PE,
 * the device heap of this node's PEs, and of far PEs once the host paths reach them) the device API reaches too.
 * Local buffers of the kernel (a PUT's source, a GET's destination) may be GPU memory: the host paths take them as
 * they are (staged through their pinned buffers, one copy). Every request is checked first; bad input ends the job with one line
 * naming the device routine, the PE and the argument. The proxy never waits for a producer: no deadlock. */
#include "proxy.h"
#include "heap_gpu.h"
#include "xlate.h"
#include "comm.h"

#include <pthread.h>
#include <stdio.h>
#include <time.h>

static struct {
  shoal_proxy_queue_t *q;    /* the descriptor as producers address it */
  void *q_mem;               /* its allocation: GPU memory (q_dev) or host_alloc'd */
  bool q_dev;
  shoal_proxy_entry_t *ring; /* the ring, host address */
  void *ring_host;           /* its host_alloc */
  uint64_t entries, head;    /* head: next ticket to serve (the thread's) */
  void *stream;              /* the backend's stream (reading the ticket counter; NULL: none) */
  int dev;                   /* GPU of this PE (-1: none) */
  pthread_t th;
  bool running;
  int stop;                  /* set by shoal_proxy_fini (atomic) */
  uint64_t served;           /* atomic: requests served */
  uint64_t fences;           /* atomic: transport fences issued for FENCE requests (tests) */
  /* Drains (shoal_proxy_drain): a host thread sets drain_to (a ticket), then bumps drain_req; the thread, once it has
   * served every ticket below drain_to, quiets its context if it served anything since the last quiet (dirty) and
   * sets drain_done = drain_req. All atomic. */
  uint64_t drain_to, drain_req, drain_done;
  int dirty;
  cpu_set_t cpus; /* the thread's CPUs (shoal_topo_helper_cpus), read at start on the PE's thread */
  bool cpus_ok;
  int moved;      /* transport threads moved onto cpus too */
} P = {.dev = -1};


bool shoal_proxy_on; /* proxy.h: the thread runs (shmem_quiet's one branch) */

/* The device routine a request stands for, in messages: "shmem_putmem (device, via proxy)". */
static const char *routine_of(const shoal_proxy_entry_t *e, char *buf, size_t len) {
  static const char *const amo[] = {"fetch", "set", "swap", "compare_swap", "fetch_add", "fetch_and", "fetch_or",
                                    "fetch_xor"};
  const bool nbi = e->flags & SHOAL_PROXY_F_NBI;
  const char *name = "proxy request";
  switch (e->op) {
  case SHOAL_PROXY_PUT: name = nbi ? "shmem_putmem_nbi" : "shmem_putmem"; break;
  case SHOAL_PROXY_GET: name = nbi ? "shmem_getmem_nbi" : "shmem_getmem"; break;
  case SHOAL_PROXY_P: name = "shmem_p"; break;
  case SHOAL_PROXY_G: name = "shmem_g"; break;
  case SHOAL_PROXY_PUT_SIGNAL: name = nbi ? "shmem_putmem_signal_nbi" : "shmem_putmem_signal"; break;
  case SHOAL_PROXY_FENCE: name = "shmem_fence"; break;
  case SHOAL_PROXY_QUIET: name = "shmem_quiet"; break;
  case SHOAL_PROXY_AMO:
    snprintf(buf, len, "shmem_atomic_%s (device, via proxy)", e->aop < SHOAL_PROXY_AMO_NOPS ? amo[e->aop] : "?");
    return buf;
  default: break;
  }
  snprintf(buf, len, "%s (device, via proxy)", name);
  return buf;
}

/* End the job with one line naming the device routine of request e (the name is made only then). */
#define PROXY_FATAL(e, ...)                                                                                           \
  do {                                                                                                                 \
    char rt_[96];                                                                                                      \
    shoal_fatal(routine_of((e), rt_, sizeof rt_), __VA_ARGS__);                                                        \
  } while (0)

/* Symmetric [a, a + n) on some space of this PE (device heap, symmetric heap, static data), else fatal naming arg. */
static void check_sym(const shoal_proxy_entry_t *e, const char *arg, uint64_t a, uint64_t n, int pe) {
  size_t off;
  if (!shoal_space_find((const void *)(uintptr_t)a, n ? n : 1, &off))
    PROXY_FATAL(e, "%s 0x%llx (%llu bytes, PE %d) is not a symmetric address (device heap, symmetric heap or static "
                "data)", arg, (unsigned long long)a, (unsigned long long)n, pe);
}

/* Check e before anything is done for it: op and aop known, pe in range, sizes, alignment, symmetric target and
 * signal, a local buffer where bytes move. Fatal (one line) otherwise. */
static void check(const shoal_proxy_entry_t *e) {
  if (e->op == 0 || e->op >= SHOAL_PROXY_NOPS)
    PROXY_FATAL(e, "unknown operation %u in queue slot %llu (ticket %llu): the queue was overwritten", e->op,
                (unsigned long long)(P.head & (P.entries - 1)), (unsigned long long)P.head);
  if (e->op == SHOAL_PROXY_FENCE || e->op == SHOAL_PROXY_QUIET) return;
  if ((unsigned)e->pe >= (unsigned)shoal_g.npes) PROXY_FATAL(e, "pe %d out of range [0, %d)", e->pe, shoal_g.npes);
  const uint64_t n = e->bytes;
  switch (e->op) {
  case SHOAL_PROXY_P:
  case SHOAL_PROXY_G:
    if (n != 1 && n != 2 && n != 4 && n != 8) PROXY_FATAL(e, "element size %llu: 1, 2, 4 or 8", (unsigned long long)n);
    break;
  case SHOAL_PROXY_AMO:
    if (e->aop >= SHOAL_PROXY_AMO_NOPS) PROXY_FATAL(e, "unknown atomic operation %u", e->aop);
    if (n != 4 && n != 8) PROXY_FATAL(e, "element size %llu: 4 or 8", (unsigned long long)n);
    if (e->target % n) PROXY_FATAL(e, "dest 0x%llx is not aligned to its %llu bytes", (unsigned long long)e->target,
                                   (unsigned long long)n);
    break;
  case SHOAL_PROXY_PUT_SIGNAL:
    if (e->sig_op != SHMEM_SIGNAL_SET && e->sig_op != SHMEM_SIGNAL_ADD)
      PROXY_FATAL(e, "sig_op %u: SHMEM_SIGNAL_SET or SHMEM_SIGNAL_ADD", e->sig_op);
    if (e->sig % 8) PROXY_FATAL(e, "sig_addr 0x%llx is not 8-byte aligned", (unsigned long long)e->sig);
    check_sym(e, "sig_addr", e->sig, 8, e->pe);
    /* fall through */
  default: /* PUT, GET */
    if ((e->flags & SHOAL_PROXY_F_INLINE) && (e->op != SHOAL_PROXY_PUT || n < 1 || n > 8))
      PROXY_FATAL(e, "%llu bytes carried in the request: 1 to 8, puts only", (unsigned long long)n);
    if (n && !e->local)
      PROXY_FATAL(e, "%s is NULL with %llu bytes", e->op == SHOAL_PROXY_GET ? "dest" : "source",
                  (unsigned long long)n);
    break;
  }
  check_sym(e, e->op == SHOAL_PROXY_GET || e->op == SHOAL_PROXY_G ? "source" : "dest", e->target, n, e->pe);
}

/* One AMO through the host path; returns the old value (0 for the non-fetching forms). 4 or 8 bytes as bits. */
static uint64_t amo(shmem_ctx_t ctx, const shoal_proxy_entry_t *e) {
  const bool fetch = e->flags & SHOAL_PROXY_F_WAIT;
  const int pe = e->pe;
#define PROXY_AMO(T, N)                                                                                               \
  do {                                                                                                                 \
    T *d = (T *)(uintptr_t)e->target, v = (T)e->value, c = (T)e->cmp;                                                  \
    switch (e->aop) {                                                                                                  \
    case SHOAL_PROXY_AMO_FETCH: return shmem_ctx_##N##_atomic_fetch(ctx, d, pe);                                       \
    case SHOAL_PROXY_AMO_SET: shmem_ctx_##N##_atomic_set(ctx, d, v, pe); return 0;                                     \
    case SHOAL_PROXY_AMO_SWAP: return shmem_ctx_##N##_atomic_swap(ctx, d, v, pe);                                      \
    case SHOAL_PROXY_AMO_CSWAP: return shmem_ctx_##N##_atomic_compare_swap(ctx, d, c, v, pe);                          \
    case SHOAL_PROXY_AMO_ADD:                                                                                          \
      if (fetch) return shmem_ctx_##N##_atomic_fetch_add(ctx, d, v, pe);                                               \
      shmem_ctx_##N##_atomic_add(ctx, d, v, pe);                                                                       \
      return 0;                                                                                                        \
    case SHOAL_PROXY_AMO_AND:                                                                                          \
      if (fetch) return shmem_ctx_##N##_atomic_fetch_and(ctx, d, v, pe);                                               \
      shmem_ctx_##N##_atomic_and(ctx, d, v, pe);                                                                       \
      return 0;                                                                                                        \
    case SHOAL_PROXY_AMO_OR:                                                                                           \
      if (fetch) return shmem_ctx_##N##_atomic_fetch_or(ctx, d, v, pe);                                                \
      shmem_ctx_##N##_atomic_or(ctx, d, v, pe);                                                                        \
      return 0;                                                                                                        \
    default:                                                                                                           \
      if (fetch) return shmem_ctx_##N##_atomic_fetch_xor(ctx, d, v, pe);                                               \
      shmem_ctx_##N##_atomic_xor(ctx, d, v, pe);                                                                       \
      return 0;                                                                                                        \
    }                                                                                                                  \
  } while (0)
  if (e->bytes == 4) PROXY_AMO(uint32_t, uint32);
  PROXY_AMO(uint64_t, uint64);
#undef PROXY_AMO
}

/* Serve one checked request; returns the answer's value (G, AMO). A PUT's source and a GET's destination go to the
 * host paths as they are (GPU memory too: the staged path copies straight between them and its pinned staging slots,
 * the copy of one chunk overlapping the network's transfer of the one before; comm.c stages other targets). A
 * PUT_SIGNAL's signal follows its data: on a host heap as put_signal does, on the device heap (the host's put_signal
 * cannot update it, its AMOs can) after a fence, as an atomic set or add (put_signal's meaning). */
static uint64_t serve(shmem_ctx_t ctx, const shoal_proxy_entry_t *e) {
  char *t = (char *)(uintptr_t)e->target, *l = (char *)(uintptr_t)e->local;
  uint64_t v = 0, *sig = (uint64_t *)(uintptr_t)e->sig;
  const size_t n = e->bytes;
  switch (e->op) {
  case SHOAL_PROXY_PUT:
    if (e->flags & SHOAL_PROXY_F_INLINE) shmem_ctx_putmem(ctx, t, &e->value, n, e->pe); /* checked: 1-8 bytes */
    else if (e->flags & SHOAL_PROXY_F_NBI) shmem_ctx_putmem_nbi(ctx, t, l, n, e->pe); /* far device heap: deferred */
    else shmem_ctx_putmem(ctx, t, l, n, e->pe);
    break;
  case SHOAL_PROXY_PUT_SIGNAL:
    if (!shoal_gpu_heap_owns(sig)) {
      shmem_ctx_putmem_signal(ctx, t, l, n, sig, e->value, e->sig_op, e->pe);
      break;
    }
    shmem_ctx_putmem(ctx, t, l, n, e->pe);
    shmem_ctx_fence(ctx);
    if (e->sig_op == SHMEM_SIGNAL_ADD) shmem_ctx_uint64_atomic_add(ctx, sig, e->value, e->pe);
    else shmem_ctx_uint64_atomic_set(ctx, sig, e->value, e->pe);
    break;
  case SHOAL_PROXY_GET: shmem_ctx_getmem(ctx, l, t, n, e->pe); break;
  case SHOAL_PROXY_P: shmem_ctx_putmem(ctx, t, &e->value, n, e->pe); break; /* the low bytes (little endian) */
  case SHOAL_PROXY_G: shmem_ctx_getmem(ctx, &v, t, n, e->pe); break;
  case SHOAL_PROXY_AMO: v = amo(ctx, e); break;
  case SHOAL_PROXY_FENCE:
    shmem_ctx_fence(ctx);
    __atomic_fetch_add(&P.fences, 1, __ATOMIC_RELAXED);
    break;
  case SHOAL_PROXY_QUIET: shmem_ctx_quiet(ctx); break;
  default: break;
  }
  return v;
}

/* Idle: spin briefly, then yield, then sleep 50 us at a time (the PE's own threads need the CPU more; a request after
 * a long idle waits up to 50 us). */
static void idle(unsigned *polls) {
  if (++*polls < 64) {
    SHOAL_CPU_RELAX();
  } else if (*polls < 1024) {
    sched_yield();
  } else {
    struct timespec ts = {0, 50000};
    nanosleep(&ts, NULL);
  }
}

/* The thread: serve tickets in order until shoal_proxy_fini asks it to stop and nothing more is posted. The slot of
 * the next ticket t holds 4t (free, not posted yet), 4t + 1 (posted), or 4(t - entries) + 2 (the answer of the
 * previous round, not yet taken by its producer, who frees the slot next); anything else is a corrupted queue. */
static void *proxy_main(void *arg) {
  (void)arg;
  if (P.dev >= 0) shoal_gpu_ops.set_device(P.dev);
  shoal_gpu_copier_prepare(); /* on this thread's CPUs */
  shmem_ctx_t ctx = SHMEM_CTX_DEFAULT;
  if (shmem_ctx_create(SHMEM_CTX_PRIVATE | SHMEM_CTX_SERIALIZED, &ctx)) ctx = SHMEM_CTX_DEFAULT;
  /* Below SHMEM_THREAD_MULTIPLE the default endpoint is not locked against the application's thread: the proxy must
   * have an endpoint of its own (a provider may refuse one more), else the two threads would race on it. */
  if (shoal_g.tl && shoal_g.thread_level != SHMEM_THREAD_MULTIPLE &&
      (ctx == SHMEM_CTX_DEFAULT || !((struct shoal_ctx *)ctx)->tl))
    shoal_fatal("shmem_init", "the device proxy got no transport endpoint of its own (shmem_ctx_create); "
                "initialize with shmem_init_thread(SHMEM_THREAD_MULTIPLE, ...) to let it share the default one");
  /* This thread's nbi puts to far device heaps may leave their copy out of GPU memory enqueued (comm.h): the loop
   * below sends them as their copies end, and its quiets and fences wait for them. */
  shoal_comm_defer_ok = true;
  void *ep = ctx != SHMEM_CTX_DEFAULT ? ((struct shoal_ctx *)ctx)->tl : NULL;
  unsigned polls = 0;
  uint64_t drained = 0; /* the last drain_req answered */
  for (;;) {
    const uint64_t h = P.head;
    shoal_proxy_entry_t *s = &P.ring[h & (P.entries - 1)];
    const uint64_t seq = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
    const uint64_t req = __atomic_load_n(&P.drain_req, __ATOMIC_ACQUIRE);
    if (req != drained) {
      const uint64_t to = __atomic_load_n(&P.drain_to, __ATOMIC_RELAXED); /* stored before req: visible */
      if (h >= to) {
        if (__atomic_load_n(&P.dirty, __ATOMIC_RELAXED)) {
          shmem_ctx_quiet(ctx);
          __atomic_store_n(&P.dirty, 0, __ATOMIC_RELEASE); /* after: a drain that sees 0 finds nothing to complete */
        }
        drained = req;
        __atomic_store_n(&P.drain_done, req, __ATOMIC_RELEASE);
      }
    }
    if (seq == 4 * h + 1) {
      shoal_proxy_entry_t e = *s;
      check(&e);
      const uint64_t v = serve(ctx, &e);
      /* a QUIET completed everything; anything else may leave work for a drain's quiet */
      __atomic_store_n(&P.dirty, e.op != SHOAL_PROXY_QUIET, __ATOMIC_RELAXED);
      if (e.flags & SHOAL_PROXY_F_WAIT) {
        s->value = v;
        __atomic_store_n(&s->seq, 4 * h + 2, __ATOMIC_RELEASE);
      } else {
        __atomic_store_n(&s->seq, 4 * (h + P.entries), __ATOMIC_RELEASE);
      }
      __atomic_store_n(&P.head, h + 1, __ATOMIC_RELEASE);
      __atomic_fetch_add(&P.served, 1, __ATOMIC_RELAXED);
      polls = 0;
      shoal_comm_dev_pending(ep); /* chunks whose copies ended go out between requests too (a load when none) */
      continue;
    }
    if (seq != 4 * h && !(h >= P.entries && seq == 4 * (h - P.entries) + 2))
      shoal_fatal("device proxy", "queue slot %llu holds sequence %llu, expected %llu (ticket %llu): the queue was "
                  "overwritten", (unsigned long long)(h & (P.entries - 1)), (unsigned long long)seq,
                  (unsigned long long)(4 * h + 1), (unsigned long long)h);
    if (__atomic_load_n(&P.stop, __ATOMIC_ACQUIRE)) break;
    if (shoal_comm_dev_pending(ep)) { /* copies running: their chunks go out as each ends, no sleep meanwhile */
      polls = 0;
      SHOAL_CPU_RELAX();
      continue;
    }
    idle(&polls);
  }
  shmem_ctx_quiet(ctx);
  if (ctx != SHMEM_CTX_DEFAULT) shmem_ctx_destroy(ctx);
  /* a drain still waiting (a quiet racing shmem_finalize): everything is served and quiet now */
  __atomic_store_n(&P.drain_done, __atomic_load_n(&P.drain_req, __ATOMIC_ACQUIRE), __ATOMIC_RELEASE);
  return NULL;
}

/* Free host_alloc memory: the backend's, or plain memory where its slot is a stub (host_alloc below). */
static void host_free(void *p) {
  if (p && shoal_gpu_ops.host_free(p) == SHOAL_ERR_NOSYS) shoal_gpu_none_ops.host_free(p);
}

static void release(void) {
  if (P.q_mem && P.q_dev) shoal_gpu_ops.mem_free(P.q_mem);
  else host_free(P.q_mem);
  host_free(P.ring_host);
  if (P.stream) shoal_gpu_ops.stream_destroy(P.stream);
  P.q_mem = P.ring_host = P.stream = NULL;
  P.q = NULL;
  P.ring = NULL;
}

/* Pinned memory from the backend, or plain memory where it has none (no GPU: the none backend's, or a backend of the
 * tests without the slot). */
static shoal_status_t host_alloc(void **host, void **dev, size_t n) {
  shoal_status_t rc = shoal_gpu_ops.host_alloc(host, dev, n);
  if (rc == SHOAL_ERR_NOSYS) rc = shoal_gpu_none_ops.host_alloc(host, dev, n);
  return rc;
}

shoal_status_t shoal_proxy_start(const char *routine) {
  if (P.running) return SHOAL_OK;
  P.entries = (uint64_t)shoal_env.proxy_queue_entries;
  P.dev = shmemx_gpu_device();
  void *ring_dev = NULL;
  if (host_alloc(&P.ring_host, &ring_dev, P.entries * sizeof(shoal_proxy_entry_t))) goto fail;
  P.ring = P.ring_host;
  memset(P.ring, 0, P.entries * sizeof *P.ring);
  for (uint64_t i = 0; i < P.entries; i++) P.ring[i].seq = 4 * i; /* slot i free for ticket i */
  if (shoal_gpu_ops.stream_create(&P.stream)) P.stream = NULL;
  shoal_proxy_queue_t d = {.tail = 0, .mask = P.entries - 1, .ring = ring_dev};
  /* the descriptor (its ticket counter) in GPU memory: the producers' fetch-add stays on the GPU */
  if (P.dev >= 0 && shoal_gpu_ops.mem_alloc(&P.q_mem, sizeof d) == SHOAL_OK) {
    P.q_dev = true;
    if (shoal_gpu_ops.memcpy(P.q_mem, &d, sizeof d, P.stream) || shoal_gpu_ops.stream_sync(P.stream)) goto fail;
    P.q = P.q_mem;
  } else {
    void *qd;
    P.q_dev = false;
    if (host_alloc(&P.q_mem, &qd, sizeof d)) goto fail;
    memcpy(P.q_mem, &d, sizeof d);
    P.q = qd;
  }
  P.head = 0;
  P.stop = 0;
  P.cpus_ok = !shoal_topo_helper_cpus(&P.cpus);
  P.drain_to = P.drain_req = P.drain_done = 0;
  P.dirty = 0;
  /* The thread starts off the PE's core when the node has CPUs no PE is bound to: the PE's thread may spin there
   * without yielding (a GPU runtime's synchronize), and each request would wait for the scheduler's slice (7 ms per
   * device put + quiet on the H200 before). */
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  if (P.cpus_ok && pthread_attr_setaffinity_np(&attr, sizeof P.cpus, &P.cpus)) P.cpus_ok = false;
  int prc = pthread_create(&P.th, &attr, proxy_main, NULL);
  if (prc && P.cpus_ok) { /* a set the kernel refuses (a cpuset cgroup changed since): where the PE is */
    pthread_attr_destroy(&attr);
    pthread_attr_init(&attr);
    P.cpus_ok = false;
    prc = pthread_create(&P.th, &attr, proxy_main, NULL);
  }
  pthread_attr_destroy(&attr);
  if (prc) goto fail;
  if (P.cpus_ok) {
    /* the transport's thread too: it answers far PEs' requests on this PE's GPU while the PE's thread may spin */
    int moved = 0;
    if (shoal_g.tl && shoal_g.tl->helpers_to && shoal_g.tl->helpers_to(&P.cpus, &moved)) moved = 0;
    P.moved = moved;
    SHOAL_DEBUG(SHOAL_SUB_GPU, "%s: device proxy (and %d transport thread%s) on %d CPUs no PE is bound to", routine,
                moved, moved == 1 ? "" : "s", CPU_COUNT(&P.cpus));
  }
  P.running = true;
  __atomic_store_n(&shoal_proxy_on, true, __ATOMIC_RELEASE);
  SHOAL_DEBUG(SHOAL_SUB_GPU, "%s: device proxy started: queue of %llu entries at %p (descriptor in %s memory)", routine,
              (unsigned long long)P.entries, (void *)P.q, P.q_dev ? "GPU" : "host");
  return SHOAL_OK;
fail:
  release();
  return SHOAL_ERR;
}

void shoal_proxy_init(const char *routine) {
  const shmemx_device_state_t *st = shoal_gpu_state();
  if (!st) return;
  bool far = false;
  for (int p = 0; p < st->n_pes && p < SHMEMX_DEVICE_MAX_PES; p++) far = far || st->delta[p] == SHMEMX_DEVICE_DELTA_FAR;
  if (!far) return;
  if (shoal_proxy_start(routine))
    shoal_fatal(routine, "cannot start the device proxy (queue of %ld entries, SHOAL_PROXY_QUEUE_ENTRIES) for the "
                "PEs of other nodes", shoal_env.proxy_queue_entries);
  shoal_gpu_state_set_proxy(P.q);
}

shoal_proxy_queue_t *shoal_proxy_queue(void) { return P.running ? P.q : NULL; }

uint64_t shoal_proxy_served(void) { return __atomic_load_n(&P.served, __ATOMIC_RELAXED); }

int shoal_proxy_affinity(cpu_set_t *set) {
  return P.running ? pthread_getaffinity_np(P.th, sizeof *set, set) : -1;
}

int shoal_proxy_helpers_moved(void) { return P.running ? P.moved : 0; }

uint64_t shoal_proxy_fences(void) { return __atomic_load_n(&P.fences, __ATOMIC_RELAXED); }

void shoal_proxy_drain(const char *routine, bool exact) {
  static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
  if (!P.running || pthread_equal(pthread_self(), P.th)) return; /* the thread's own quiet (a shared context) */
  if (!exact) {
    /* The common case, nothing posted at head and nothing served since the last quiet: three loads, in this order.
     * head's acquire shows every request served before it, with its dirty; seq's acquire shows ticket head served
     * (and its dirty) if the thread got that far since. */
    const uint64_t h = __atomic_load_n(&P.head, __ATOMIC_ACQUIRE);
    const uint64_t seq = __atomic_load_n(&P.ring[h & (P.entries - 1)].seq, __ATOMIC_ACQUIRE);
    if (seq != 4 * h + 1 && !__atomic_load_n(&P.dirty, __ATOMIC_ACQUIRE)) return;
  }
  pthread_mutex_lock(&mu);
  uint64_t to;
  if (!exact) {
    /* What is posted now: from head, past the slots of this round that are posted (4t + 1) or already served (4t + 2,
     * 4(t + entries): the thread stores a slot's state before it moves head), up to the first not posted yet; a
     * ring's worth at most. */
    const uint64_t h = __atomic_load_n(&P.head, __ATOMIC_ACQUIRE);
    for (to = h; to - h < P.entries; to++) {
      const uint64_t q = __atomic_load_n(&P.ring[to & (P.entries - 1)].seq, __ATOMIC_ACQUIRE);
      if (q != 4 * to + 1 && q != 4 * to + 2 && q != 4 * (to + P.entries)) break;
    }
  } else if (P.q_dev) { /* the ticket counter lives in GPU memory */
    if (shoal_gpu_ops.memcpy(&to, &((shoal_proxy_queue_t *)P.q_mem)->tail, sizeof to, P.stream) ||
        shoal_gpu_ops.stream_sync(P.stream))
      shoal_fatal(routine, "cannot read the device proxy's ticket counter");
  } else {
    to = __atomic_load_n(&((shoal_proxy_queue_t *)P.q_mem)->tail, __ATOMIC_ACQUIRE);
  }
  __atomic_store_n(&P.drain_to, to, __ATOMIC_RELAXED);
  const uint64_t req = P.drain_req + 1;
  __atomic_store_n(&P.drain_req, req, __ATOMIC_RELEASE);
  for (unsigned polls = 0; __atomic_load_n(&P.drain_done, __ATOMIC_ACQUIRE) < req;) idle(&polls);
  pthread_mutex_unlock(&mu);
}

void shoal_proxy_fini(void) {
  if (!P.running) return;
  __atomic_store_n(&shoal_proxy_on, false, __ATOMIC_RELEASE);
  if (P.dev >= 0) shoal_gpu_ops.set_device(P.dev); /* the proxy's GPU: kernels of this PE run there */
  shoal_gpu_ops.device_sync(); /* no kernel of this PE posts any more (they may wait for the proxy: it still runs) */
  __atomic_store_n(&P.stop, 1, __ATOMIC_RELEASE);
  pthread_join(P.th, NULL);
  P.running = false;
  shoal_gpu_state_set_proxy(NULL);
  release();
}
