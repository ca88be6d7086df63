/* gpu_none.c - the GPU module on hosts without a GPU backend: init reports "host only" and nothing else happens. */
#include "gpu.h"

shoal_gpu_kind_t shoal_gpu_kind = SHOAL_GPU_NONE;

shoal_status_t shoal_gpu_init(void) {
  SHOAL_DEBUG(SHOAL_SUB_GPU, "no GPU backend built: host memory only");
  return SHOAL_OK;
}

void shoal_gpu_fini(void) {}
