/* transport.c - the seam (issue 12, docs/design/transport.md): which transport reaches each PE, decided once at init,
 * and the calls the runtime's slow paths make through it.
 *
 * A PE whose host heap this PE maps (its node's PEs, unless SHOAL_TRANSPORT=ofi) is reached through shm: inline, by
 * load/store, in rma.c and amo.h, and through shoal_tl_shm_ops elsewhere. Any other PE has heap_lim[pe] == 0 (and
 * the static space's lim[pe] == 0), so the inline range checks fail for it and the slow paths land here, where
 * tl_of[pe] is the transport between nodes (libfabric). */
#include "transport.h"

#include <stdlib.h>

/* shmem_quiet and shmem_fence call these through their hooks, so a job of one node pays no test for them. */
static void quiet_hook(void) { shoal_tl_quiet("shmem_quiet"); }
static void fence_hook(void) { shoal_tl_fence("shmem_fence"); }

shoal_status_t shoal_tl_setup(const char *routine) {
  int n = shoal_g.npes, far = 0;
  shoal_g.tl_of = calloc((size_t)n, sizeof *shoal_g.tl_of);
  if (!shoal_g.tl_of) return SHOAL_ERR_NOMEM;
  for (int p = 0; p < n; p++) {
    if (shoal_g.heap_lim[p]) shoal_g.tl_of[p] = &shoal_tl_shm_ops;
    else far++;
  }
  if (!far) return SHOAL_OK;
#if SHOAL_HAVE_OFI
  const shoal_tl_ops_t *t = &shoal_tl_ofi_ops;
  const shoal_space_t *st = &shoal_g.space[SHOAL_SPACE_STATIC];
  shoal_status_t rc = t->reg(SHOAL_SPACE_HEAP, shoal_g.heap_base, shoal_g.heap_size, 0, 0);
  if (!rc && st->size) rc = t->reg(SHOAL_SPACE_STATIC, (void *)st->base, st->size, 0, 0);
  if (!rc) rc = t->init(&shoal_g.boot);
  if (rc) {
    shoal_warn("%s: %d of the job's %d PEs are not reached through shared memory (%s), and the ofi transport cannot "
               "start (the line above says why)", routine, far, n,
               shoal_g.boot.local_size < n ? "other nodes" : "SHOAL_TRANSPORT=ofi");
    return rc;
  }
  shoal_g.tl = t;
  shoal_quiet_hook = quiet_hook;
  shoal_fence_hook = fence_hook;
  for (int p = 0; p < n; p++)
    if (!shoal_g.tl_of[p]) shoal_g.tl_of[p] = t;
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
#else
  shoal_warn("%s: %d of the job's %d PEs are on other nodes, and this Shoal was built without libfabric (no transport "
             "between nodes): rebuild with libfabric (meson -Dofi=enabled, Debian's libfabric-dev), or run every PE "
             "on one node", routine, far, n);
  return SHOAL_ERR_NOSYS;
#endif
}

void shoal_tl_teardown(void) {
  if (shoal_g.tl) {
    shoal_g.tl->quiet();               /* this PE's writes have left (the last barrier's signals were awaited) ... */
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

/* The space holding [sym, sym + n) and sym's offset in it; fatal (naming routine and arg) if none. */
static int space_of(const char *routine, const char *arg, const void *sym, size_t n, size_t *off) {
  shoal_space_t *s = shoal_space_find(sym, n ? n : 1, off);
  if (!s) shoal_xlate_slow(sym, n, shoal_g.me, routine, arg); /* fatal, with the reason */
  if (s->device)
    shoal_fatal(routine, "%s %p is on the device heap, which PEs of other nodes do not reach (no FI_HMEM path)", arg,
                sym);
  return (int)(s - shoal_g.space);
}

static _Noreturn __attribute__((cold)) void failed(const char *routine, const char *what, size_t n, int pe) {
  shoal_fatal(routine, "%s of %zu bytes with PE %d through %s failed (the line above says why)", what, n, pe,
              shoal_g.tl_of[pe]->name);
}

void shoal_tl_put_tx(const char *routine, void *tx, int pe, void *sym, const void *src, size_t n, bool nbi) {
  if (!n) return;
  size_t off;
  int sp = space_of(routine, "dest", sym, n, &off);
  const shoal_tl_ops_t *t = shoal_g.tl_of[pe];
  __atomic_fetch_add(&shoal_g.tl_ops, 1, __ATOMIC_RELAXED);
  if (tx ? t->put_ctx(tx, sp, pe, off, src, n, nbi) : (nbi ? t->put_nbi : t->put)(sp, pe, off, src, n))
    failed(routine, "put", n, pe);
}
void shoal_tl_put(const char *routine, int pe, void *sym, const void *src, size_t n, bool nbi) {
  shoal_tl_put_tx(routine, NULL, pe, sym, src, n, nbi);
}

void shoal_tl_get_tx(const char *routine, void *tx, int pe, const void *sym, void *dst, size_t n, bool nbi) {
  if (!n) return;
  size_t off;
  int sp = space_of(routine, "source", sym, n, &off);
  const shoal_tl_ops_t *t = shoal_g.tl_of[pe];
  __atomic_fetch_add(&shoal_g.tl_ops, 1, __ATOMIC_RELAXED);
  if (tx ? t->get_ctx(tx, sp, pe, off, dst, n, nbi) : (nbi ? t->get_nbi : t->get)(sp, pe, off, dst, n))
    failed(routine, "get", n, pe);
}
void shoal_tl_get(const char *routine, int pe, const void *sym, void *dst, size_t n, bool nbi) {
  shoal_tl_get_tx(routine, NULL, pe, sym, dst, n, nbi);
}

uint64_t shoal_tl_amo_tx(const char *routine, void *tx, int pe, const void *sym, size_t size, int op, uint64_t v,
                         uint64_t c) {
  size_t off;
  int sp = space_of(routine, "dest", sym, size, &off);
  const shoal_tl_ops_t *t = shoal_g.tl_of[pe];
  bool fetching = op == SHOAL_TL_AMO_FETCH || op == SHOAL_TL_AMO_SWAP || op == SHOAL_TL_AMO_CSWAP ||
                  op == SHOAL_TL_AMO_FETCH_INC || op == SHOAL_TL_AMO_FETCH_ADD || op == SHOAL_TL_AMO_FETCH_AND ||
                  op == SHOAL_TL_AMO_FETCH_OR || op == SHOAL_TL_AMO_FETCH_XOR;
  uint64_t old = 0;
  int type = size == 4 ? SHOAL_TL_UINT32 : SHOAL_TL_UINT64;
  __atomic_fetch_add(&shoal_g.tl_ops, 1, __ATOMIC_RELAXED);
  if (tx ? t->amo_ctx(tx, sp, pe, off, op, type, &v, &c, fetching ? &old : NULL)
         : t->amo(sp, pe, off, op, type, &v, &c, fetching ? &old : NULL))
    failed(routine, "atomic", size, pe);
  return old;
}
uint64_t shoal_tl_amo(const char *routine, int pe, const void *sym, size_t size, int op, uint64_t v, uint64_t c) {
  return shoal_tl_amo_tx(routine, NULL, pe, sym, size, op, v, c);
}

void shoal_tl_signal(const char *routine, int pe, void *sym, uint64_t v) {
  size_t off;
  int sp = space_of(routine, "flag", sym, sizeof v, &off);
  const shoal_tl_ops_t *t = shoal_g.tl_of[pe];
  __atomic_fetch_add(&shoal_g.tl_ops, 1, __ATOMIC_RELAXED);
  if (t->signal(sp, pe, off, v)) failed(routine, "signal", sizeof v, pe);
}

void shoal_tl_fence(const char *routine) { shoal_tl_fence_tx(routine, NULL); }

void shoal_tl_quiet(const char *routine) { shoal_tl_quiet_tx(routine, NULL); }

void *shoal_tl_ctx_create(bool shared) {
  void *tx = NULL;
  if (shoal_g.tl && shoal_g.tl->ctx_create(shared, &tx)) tx = NULL; /* the default endpoint serves it */
  return tx;
}

void shoal_tl_ctx_destroy(void *tx) {
  if (tx && shoal_g.tl) shoal_g.tl->ctx_destroy(tx);
}

void shoal_tl_fence_tx(const char *routine, void *tx) {
  if (shoal_g.tl && (tx ? shoal_g.tl->fence_ctx(tx) : shoal_g.tl->fence()))
    shoal_fatal(routine, "fence through %s failed", shoal_g.tl->name);
}

void shoal_tl_quiet_tx(const char *routine, void *tx) {
  if (shoal_g.tl && (tx ? shoal_g.tl->quiet_ctx(tx) : shoal_g.tl->quiet()))
    shoal_fatal(routine, "quiet through %s failed", shoal_g.tl->name);
}
