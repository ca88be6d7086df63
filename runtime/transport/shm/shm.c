/* shm.c - the shm transport: PEs whose memory this PE maps (one node): load/store through the delta tables of the
 * spaces (init.c, static.c). rma.c and amo.h inline this same path for the host heap and static data, so a put to such
 * a PE makes no call, and the runtime calls none of the data slots below (comm.h says why); can_reach places this
 * node's PEs for the comm layer. Device memory is not here: the GPU backend's copies reach it (rma.c). */
#include "comm.h"

static inline void *at(int space, int pe, size_t off, size_t n) {
  const shoal_space_t *s = &shoal_g.space[space];
  if ((unsigned)space >= SHOAL_SPACE_MAX || !s->delta || s->device || shoal_space_far(s, pe) || off > s->size ||
      n > s->size - off)
    return NULL;
  return (char *)s->base + off + s->delta[pe];
}

static shoal_status_t nosys(const char *routine, int space, int pe) {
  shoal_warn("%s: space %d of PE %d is not mapped here", routine, space, pe);
  return SHOAL_ERR_NOSYS;
}

/* Blocking or nbi alike (nbi completes at once, which the spec allows), on any endpoint. */
static shoal_status_t shm_put(void *ep, int space, int pe, size_t off, const void *src, size_t n, bool nbi) {
  (void)ep, (void)nbi;
  void *d = at(space, pe, off, n);
  if (!d) return nosys("shoal_tl_shm_put", space, pe);
  memcpy(d, src, n);
  return SHOAL_OK;
}

static shoal_status_t shm_signal(int space, int pe, size_t off, uint64_t v) {
  void *d = at(space, pe, off, sizeof v);
  if (!d) return nosys("shoal_tl_shm_signal", space, pe);
  if (off % sizeof v) { /* as the ofi transport: a flag is one aligned 8-byte store */
    shoal_warn("shoal_tl_shm_signal: offset %zu on pe %d is not 8-byte aligned", off, pe);
    return SHOAL_ERR_INVAL;
  }
  __atomic_store_n((uint64_t *)d, v, __ATOMIC_RELEASE);
  return SHOAL_OK;
}

static shoal_status_t shm_get(void *ep, int space, int pe, size_t off, void *dst, size_t n, bool nbi) {
  (void)ep, (void)nbi;
  const void *s = at(space, pe, off, n);
  if (!s) return nosys("shoal_tl_shm_get", space, pe);
  memcpy(dst, s, n);
  return SHOAL_OK;
}

static shoal_status_t shm_amo(void *ep, int space, int pe, size_t off, int op, int type, const void *operand,
                              const void *compare, void *fetch) {
  (void)ep;
  size_t size = shoal_tl_type_size(type);
  if ((unsigned)op >= SHOAL_TL_AMO_NOPS || !size || off % size) {
    shoal_warn("shoal_tl_shm_amo: op %d, type %d at offset %zu: no AMO of spec 9.8", op, type, off);
    return SHOAL_ERR_INVAL;
  }
  void *p = at(space, pe, off, size);
  if (!p) return nosys("shoal_tl_shm_amo", space, pe);
  uint64_t v = 0, c = 0; /* the operands' bits (little-endian: an object of 4 bytes is the low half) */
  if (operand) memcpy(&v, operand, size);
  if (compare) memcpy(&c, compare, size);
  uint64_t old = shoal_amo_host(p, op, size, v, c);
  if (fetch) memcpy(fetch, &old, size);
  return SHOAL_OK;
}

/* On one node every operation is complete when it returns, on any endpoint: quiet and fence only order this thread's
 * memory accesses. */
static shoal_status_t shm_quiet(void *ep) {
  (void)ep;
  atomic_thread_fence(memory_order_seq_cst);
  return SHOAL_OK;
}
static shoal_status_t shm_fence(void *ep) {
  (void)ep;
  atomic_thread_fence(memory_order_release);
  return SHOAL_OK;
}
/* A PE whose host heap this PE maps (init.c sets heap_lim at the mapping: 0 for any other PE). */
static bool shm_can_reach(int pe) { return shoal_g.heap_lim[pe] != 0; }
/* The mappings are made and undone by init.c and static.c, with the bootstrap's descriptor exchange. */
static shoal_status_t shm_init(shoal_boot_t *b) {
  (void)b;
  return SHOAL_OK;
}
static shoal_status_t shm_reg(int space, void *base, size_t len, int gpu_kind, int gpu_dev) {
  (void)space, (void)base, (void)len, (void)gpu_kind, (void)gpu_dev;
  return SHOAL_OK;
}
static void shm_fini(void) {}
static void shm_progress(void) {}
/* Every shm operation completes before it returns: a context needs no endpoint of its own here. */
static shoal_status_t shm_ctx_create(bool shared, void **ep) {
  (void)shared;
  *ep = NULL;
  return SHOAL_ERR_NOSYS;
}
static void shm_ctx_destroy(void *ep) { (void)ep; }

const shoal_tl_ops_t shoal_tl_shm_ops = {
  .size = sizeof(shoal_tl_ops_t), .name = "shm", .can_reach = shm_can_reach, .init = shm_init, .reg = shm_reg,
  .put = shm_put, .get = shm_get, .amo = shm_amo, .signal = shm_signal, .quiet = shm_quiet, .fence = shm_fence,
  .progress = shm_progress, .fini = shm_fini, .ctx_create = shm_ctx_create, .ctx_destroy = shm_ctx_destroy,
};
