/* gpu_none.c - the "none" backend (hosts without a GPU: it finds no device) and the SHOAL_ERR_NOSYS stub of every
 * slot, which shoal_gpu_ops_fill puts where a backend leaves a slot NULL (libfabric's enosys.c). */
#include "gpu.h"

#include <stdlib.h>

#define SHOAL_GPU_STUB(name, params)                                                                                  \
  static shoal_status_t nosys_##name params { return SHOAL_ERR_NOSYS; }
SHOAL_GPU_OPS(SHOAL_GPU_STUB)
#undef SHOAL_GPU_STUB

static shoal_status_t none_device_count(int *n) {
  *n = 0;
  return SHOAL_OK;
}

/* Without a GPU "pinned host memory" is plain memory, the same address for both sides (the proxy's queue with a CPU
 * producer: tests). 64-byte aligned: the queue's entries are cache lines. */
static shoal_status_t none_host_alloc(void **host, void **dev, size_t n) {
  void *p = aligned_alloc(64, (n + 63) / 64 * 64);
  if (!p) return SHOAL_ERR_NOMEM;
  *host = *dev = p;
  return SHOAL_OK;
}

static shoal_status_t none_host_free(void *host) {
  free(host);
  return SHOAL_OK;
}

const shoal_gpu_ops_t shoal_gpu_none_ops = {
  .size = sizeof(shoal_gpu_ops_t),
  .name = "none",
  .device_count = none_device_count,
  .host_alloc = none_host_alloc,
  .host_free = none_host_free,
};

shoal_status_t shoal_gpu_ops_fill(shoal_gpu_ops_t *dst, const shoal_gpu_ops_t *src) {
  if (!src || src->size != sizeof(shoal_gpu_ops_t)) return SHOAL_ERR_INVAL;
  *dst = *src;
#define SHOAL_GPU_FILL(name, params)                                                                                  \
  if (!dst->name) dst->name = nosys_##name;
  SHOAL_GPU_OPS(SHOAL_GPU_FILL)
#undef SHOAL_GPU_FILL
  return SHOAL_OK;
}
