/* comm.c - the comm layer (issue 12 and 30, docs/design/transport.md): which transport reaches each PE, decided once
 * at init from an ordered registry, and the calls the runtime's off-path code makes through it.
 *
 * A PE whose host heap this PE maps (its node's PEs, unless SHOAL_TRANSPORT=ofi) is reached through shm: inline, by
 * load/store, in rma.c and amo.h. Any other PE has heap_lim[pe] == 0 (and the static space's lim[pe] == 0), so the
 * inline range checks fail for it and the off-path code lands here, where tl_of[pe] is the transport between nodes
 * (libfabric). */
#include "comm.h"
#include "heap_gpu.h"
#include "xlate.h"

#include <pthread.h>

#include <stdlib.h>

/* The registry: every transport built, in the order they are asked whether they reach a PE. shm first: it reaches
 * the PEs this PE maps, and rma.c and amo.h reach those inline. A new transport is one line here (and its folder). */
static const shoal_tl_ops_t *const registry[] = {
  &shoal_tl_shm_ops,
#if SHOAL_HAVE_OFI
  &shoal_tl_ofi_ops,
#endif
};
#define NREG (sizeof registry / sizeof registry[0])

/* shmem_quiet and shmem_fence call these through their hooks, so a job of one node pays no test for them. */
static void quiet_hook(void) { shoal_comm_quiet("shmem_quiet", NULL); }
static void fence_hook(void) { shoal_comm_fence("shmem_fence", NULL); }

shoal_status_t shoal_comm_setup(const char *routine) {
  int n = shoal_g.npes, far = 0;
  const shoal_tl_ops_t *t = NULL; /* the transport reaching the PEs that shm does not */
  shoal_g.tl_of = calloc((size_t)n, sizeof *shoal_g.tl_of);
  if (!shoal_g.tl_of) return SHOAL_ERR_NOMEM;
  for (int p = 0; p < n; p++) {
    for (size_t r = 0; r < NREG && !shoal_g.tl_of[p]; r++)
      if (registry[r]->can_reach(p)) shoal_g.tl_of[p] = registry[r];
    if (shoal_g.tl_of[p] != registry[0]) far++;
    if (shoal_g.tl_of[p] && shoal_g.tl_of[p] != registry[0]) t = shoal_g.tl_of[p];
  }
  if (!far) return SHOAL_OK;
  if (!t) {
    shoal_warn("%s: %d of the job's %d PEs are on other nodes, and this Shoal was built without libfabric (no "
               "transport between nodes): rebuild with libfabric (meson -Dofi=enabled, Debian's libfabric-dev), or run "
               "every PE on one node", routine, far, n);
    return SHOAL_ERR_NOSYS;
  }
  const shoal_space_t *st = &shoal_g.space[SHOAL_SPACE_STATIC];
  shoal_status_t rc = t->reg(SHOAL_SPACE_HEAP, shoal_g.heap_base, shoal_g.heap_size, 0, 0);
  if (!rc && st->size) rc = t->reg(SHOAL_SPACE_STATIC, (void *)st->base, st->size, 0, 0);
  if (!rc) rc = t->init(&shoal_g.boot);
  if (rc) {
    shoal_warn("%s: %d of the job's %d PEs are not reached through shared memory (%s), and the %s transport cannot "
               "start (the line above says why)", routine, far, n,
               shoal_g.boot.local_size < n ? "other nodes" : "SHOAL_TRANSPORT=ofi", t->name);
    return rc;
  }
  shoal_g.tl = t;
  shoal_quiet_hook = quiet_hook;
  shoal_fence_hook = fence_hook;
  /* Every PE's node, for the collectives that go through the node (coll.h, "hierarchy"): a PE maps exactly its
   * node's PEs, so the lowest PE it maps names the node. */
  int node = shoal_g.me;
  for (int p = 0; p < n; p++)
    if (shoal_g.heap_lim[p]) {
      node = p;
      break;
    }
  shoal_g.node_of = malloc((size_t)n * sizeof *shoal_g.node_of);
  if (!shoal_g.node_of) {
    shoal_warn("%s: out of memory for the table of %d PEs' nodes", routine, n);
    return SHOAL_ERR_NOMEM;
  }
  if (shoal_boot_allgather(&shoal_g.boot, &node, shoal_g.node_of, sizeof node)) {
    shoal_warn("%s: the all-gather of every PE's node failed", routine);
    return SHOAL_ERR_IO;
  }
  SHOAL_DEBUG(SHOAL_SUB_OFI, "%d PEs through shm, %d through %s", n - far, far, t->name);
  return SHOAL_OK;
}

void shoal_comm_teardown(void) {
  if (shoal_g.tl) {
    shoal_g.tl->quiet(NULL);           /* this PE's writes are in place (those the last barrier carried flushed) ... */
    shoal_boot_barrier(&shoal_g.boot); /* ... everywhere: no PE reads or writes another any more */
    shoal_g.tl->fini();
    shoal_g.tl = NULL;
    shoal_quiet_hook = shoal_fence_hook = NULL;
  }
  free(shoal_g.tl_of);
  free(shoal_g.node_of);
  shoal_g.tl_of = NULL;
  shoal_g.node_of = NULL;
}

shoal_space_t *shoal_comm_space(const char *routine, const char *arg, const void *sym, size_t n, size_t *off) {
  shoal_space_t *s = shoal_space_find(sym, n ? n : 1, off);
  if (!s) shoal_xlate_slow(sym, n, shoal_g.me, routine, arg); /* fatal, with the reason */
  return s;
}

/* The device heap of a PE of another node through a transport without a staged path: fatal, naming arg. */
static _Noreturn __attribute__((cold)) void device_far(const char *routine, const char *arg, const void *sym, int pe) {
  shoal_fatal(routine, "%s %p is on the device heap, and the transport to PE %d (%s) cannot reach another node's", arg,
              sym, pe, shoal_g.tl_of[pe] ? shoal_g.tl_of[pe]->name : "none");
}

static _Noreturn __attribute__((cold)) void failed(const char *routine, const char *what, size_t n, int pe) {
  shoal_fatal(routine, "%s of %zu bytes with PE %d through %s failed (the line above says why)", what, n, pe,
              shoal_g.tl_of[pe]->name);
}

_Thread_local bool shoal_comm_defer_ok;

/* A put (put true: from buf) or get (into buf) of n bytes at off of pe's device heap, staged by the transport (its
 * dev_put: buf reusable on return, complete at pe after quiet or fence; dev_get: complete on return, nbi too). An nbi
 * put of the device proxy's thread (shoal_comm_defer_ok, its own endpoint) takes dev_put_nbi: buf is reusable after
 * quiet, as the spec's nbi put, so its copy out of GPU memory need not be waited for here. */
static __attribute__((cold, noinline)) void dev_rma(const char *routine, void *ep, int pe, size_t off, const void *sym,
                                                    void *buf, size_t n, bool put, bool nbi) {
  const shoal_tl_ops_t *t = shoal_g.tl_of[pe];
  if (!t || (put ? !t->dev_put : !t->dev_get)) device_far(routine, put ? "dest" : "source", sym, pe);
  __atomic_fetch_add(&shoal_g.tl_ops, 1, __ATOMIC_RELAXED);
  if (put && nbi && ep && shoal_comm_defer_ok && t->dev_put_nbi) {
    if (t->dev_put_nbi(ep, pe, off, buf, n)) failed(routine, "put to the device heap", n, pe);
    return;
  }
  if (put ? t->dev_put(ep, pe, off, buf, n) : t->dev_get(ep, pe, off, buf, n))
    failed(routine, put ? "put to the device heap" : "get from the device heap", n, pe);
}

int shoal_comm_dev_pending(void *ep) {
  return ep && shoal_g.tl && shoal_g.tl->dev_pending ? shoal_g.tl->dev_pending(ep) : 0;
}

/* A local buffer in GPU memory (a put's source, a get's destination) with a PE of another node: the transports
 * read and write host memory only (no FI_HMEM here), so the bytes go through a pinned bounce buffer, BOUNCE at a
 * time, with blocking transfers (complete on return, the nbi forms too). One bounce
 * per process, under a lock: only jobs with a GPU come here. NVSHMEM's host RMA takes GPU buffers; so does this. */
#define BOUNCE ((size_t)1 << 20)
/* A symmetric space's own buffer answers from its flag; only other addresses cost the backend's query (on CUDA a
 * driver call, cudaPointerGetAttributes). */
static bool gpu_local(const void *p) {
  if (SHOAL_LIKELY(!shoal_gpu_heap_ready())) return false;
  for (int i = 0; i < shoal_g.nspaces; i++) {
    const shoal_space_t *s = &shoal_g.space[i];
    if ((uintptr_t)p - s->base < s->size) return s->device;
  }
  return shoal_gpu_local_device(p);
}

static __attribute__((cold, noinline)) void staged_rma(const char *routine, void *ep, int pe, const shoal_space_t *s,
                                                       size_t off, void *buf, size_t n, bool put) {
  static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
  static void *bounce;
  const shoal_tl_ops_t *t = shoal_g.tl_of[pe];
  pthread_mutex_lock(&mu);
  if (!bounce) {
    void *dev;
    shoal_status_t rc = shoal_gpu_ops.host_alloc(&bounce, &dev, BOUNCE);
    if (rc == SHOAL_ERR_NOSYS) rc = shoal_gpu_none_ops.host_alloc(&bounce, &dev, BOUNCE); /* a test backend's */
    if (rc) bounce = NULL;
    if (!bounce) shoal_fatal(routine, "cannot allocate %zu bytes of pinned memory to stage GPU memory", BOUNCE);
  }
  __atomic_fetch_add(&shoal_g.tl_ops, 1, __ATOMIC_RELAXED);
  for (size_t o = 0; o < n; o += BOUNCE) {
    const size_t c = n - o < BOUNCE ? n - o : BOUNCE;
    char *b = (char *)buf + o;
    if (put ? shoal_comm_dev_memcpy(bounce, b, c) || t->put(ep, (int)(s - shoal_g.space), pe, off + o, bounce, c, false)
            : t->get(ep, (int)(s - shoal_g.space), pe, off + o, bounce, c, false) || shoal_comm_dev_memcpy(b, bounce, c))
      failed(routine, put ? "put from GPU memory" : "get into GPU memory", n, pe);
  }
  pthread_mutex_unlock(&mu);
}

void shoal_comm_put(const char *routine, void *ep, int pe, const shoal_space_t *s, size_t off, void *sym,
                    const void *src, size_t n, bool nbi) {
  if (!n) return;
  if (SHOAL_UNLIKELY(s->device)) {
    dev_rma(routine, ep, pe, off, sym, (void *)src, n, true, nbi);
    return;
  }
  if (SHOAL_UNLIKELY(gpu_local(src))) {
    staged_rma(routine, ep, pe, s, off, (void *)src, n, true);
    return;
  }
  const shoal_tl_ops_t *t = shoal_g.tl_of[pe];
  __atomic_fetch_add(&shoal_g.tl_ops, 1, __ATOMIC_RELAXED);
  __atomic_fetch_add(&shoal_g.tl_put_bytes, n, __ATOMIC_RELAXED);
  if (t->put(ep, (int)(s - shoal_g.space), pe, off, src, n, nbi)) failed(routine, "put", n, pe);
}

void shoal_comm_get(const char *routine, void *ep, int pe, const shoal_space_t *s, size_t off, const void *sym,
                    void *dst, size_t n, bool nbi) {
  if (!n) return;
  if (SHOAL_UNLIKELY(s->device)) {
    dev_rma(routine, ep, pe, off, sym, dst, n, false, nbi);
    return;
  }
  if (SHOAL_UNLIKELY(gpu_local(dst))) {
    staged_rma(routine, ep, pe, s, off, dst, n, false);
    return;
  }
  const shoal_tl_ops_t *t = shoal_g.tl_of[pe];
  __atomic_fetch_add(&shoal_g.tl_ops, 1, __ATOMIC_RELAXED);
  if (t->get(ep, (int)(s - shoal_g.space), pe, off, dst, n, nbi)) failed(routine, "get", n, pe);
}

uint64_t shoal_comm_amo(const char *routine, void *ep, int pe, const shoal_space_t *s, size_t off, const void *sym,
                        size_t size, int op, uint64_t v, uint64_t c) {
  const shoal_tl_ops_t *t = shoal_g.tl_of[pe];
  if (SHOAL_UNLIKELY(s->device)) {
    uint64_t old = 0;
    if (!t || !t->dev_amo) device_far(routine, "dest", sym, pe);
    __atomic_fetch_add(&shoal_g.tl_ops, 1, __ATOMIC_RELAXED);
    if (t->dev_amo(ep, pe, off, op, size, v, c, &old)) failed(routine, "atomic on the device heap", size, pe);
    return old;
  }
  bool fetching = op == SHOAL_TL_AMO_FETCH || op == SHOAL_TL_AMO_SWAP || op == SHOAL_TL_AMO_CSWAP ||
                  op == SHOAL_TL_AMO_FETCH_INC || op == SHOAL_TL_AMO_FETCH_ADD || op == SHOAL_TL_AMO_FETCH_AND ||
                  op == SHOAL_TL_AMO_FETCH_OR || op == SHOAL_TL_AMO_FETCH_XOR;
  uint64_t old = 0;
  int type = size == 4 ? SHOAL_TL_UINT32 : SHOAL_TL_UINT64;
  __atomic_fetch_add(&shoal_g.tl_ops, 1, __ATOMIC_RELAXED);
  if (t->amo(ep, (int)(s - shoal_g.space), pe, off, op, type, &v, &c, fetching ? &old : NULL))
    failed(routine, "atomic", size, pe);
  return old;
}

void shoal_comm_signal(const char *routine, int pe, void *sym, uint64_t v) {
  size_t off;
  const shoal_space_t *s = shoal_comm_space(routine, "flag", sym, sizeof v, &off);
  if (SHOAL_UNLIKELY(s->device)) { /* a set on the device heap: the staged AMO, ordered after the puts by a fence */
    shoal_comm_fence(routine, NULL);
    (void)shoal_comm_amo(routine, NULL, pe, s, off, sym, sizeof v, SHOAL_TL_AMO_SET, v, 0);
    return;
  }
  const shoal_tl_ops_t *t = shoal_g.tl_of[pe];
  __atomic_fetch_add(&shoal_g.tl_ops, 1, __ATOMIC_RELAXED);
  if (t->signal((int)(s - shoal_g.space), pe, off, v)) failed(routine, "signal", sizeof v, pe);
}

void shoal_comm_put_signal(const char *routine, int pe, void *sym, const void *src, size_t n, void *flag, uint64_t v) {
  size_t off, foff;
  const shoal_space_t *s = shoal_comm_space(routine, "dest", sym, n, &off);
  const shoal_space_t *fs = shoal_comm_space(routine, "flag", flag, sizeof v, &foff);
  const shoal_tl_ops_t *t = shoal_g.tl_of[pe];
  if (n && t->put_signal && !s->device && !fs->device && !gpu_local(src)) {
    shoal_status_t rc = t->put_signal((int)(s - shoal_g.space), pe, off, src, n, (int)(fs - shoal_g.space), foff, v);
    if (rc == SHOAL_OK) {
      __atomic_fetch_add(&shoal_g.tl_ops, 1, __ATOMIC_RELAXED);
      __atomic_fetch_add(&shoal_g.tl_put_bytes, n, __ATOMIC_RELAXED);
      return;
    }
    if (rc != SHOAL_ERR_NOSYS) failed(routine, "put with signal", n, pe);
  }
  shoal_comm_put(routine, NULL, pe, s, off, sym, src, n, true);
  if (s->device && !fs->device) shoal_comm_fence(routine, NULL); /* a staged put completes at pe after a fence */
  shoal_comm_signal(routine, pe, flag, v);
}

void *shoal_comm_ctx_create(bool shared) {
  void *ep = NULL;
  if (shoal_g.tl && shoal_g.tl->ctx_create(shared, &ep)) ep = NULL; /* the default endpoint serves it */
  return ep;
}

void shoal_comm_ctx_destroy(void *ep) {
  if (ep && shoal_g.tl) shoal_g.tl->ctx_destroy(ep);
}

void shoal_comm_fence(const char *routine, void *ep) {
  if (shoal_g.tl && shoal_g.tl->fence(ep)) shoal_fatal(routine, "fence through %s failed", shoal_g.tl->name);
}

void shoal_comm_quiet(const char *routine, void *ep) {
  if (shoal_g.tl && shoal_g.tl->quiet(ep)) shoal_fatal(routine, "quiet through %s failed", shoal_g.tl->name);
}

void shoal_comm_quiet_before_signal(const char *routine, int pe) {
  const shoal_tl_ops_t *t = shoal_g.tl;
  if (t && (t->quiet_before_signal ? t->quiet_before_signal(pe) : t->quiet(NULL)))
    shoal_fatal(routine, "quiet through %s failed", t->name);
}
