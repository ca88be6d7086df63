/* gpu.h - host side of the GPU backends: one ops table per vendor (libfabric hmem_ops style), chosen at init.
 * The "none" backend stands for hosts without a GPU. */
#ifndef SHOAL_GPU_H
#define SHOAL_GPU_H
#include "shoal.h"

typedef enum { SHOAL_GPU_NONE = 0, SHOAL_GPU_CUDA, SHOAL_GPU_HIP, SHOAL_GPU_NKINDS } shoal_gpu_kind_t;

/* Set by shoal_gpu_init: the backend in use (SHOAL_GPU_NONE without a GPU). */
extern shoal_gpu_kind_t shoal_gpu_kind;

#endif
