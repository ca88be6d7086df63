/*
 * coll_gpu.cu - instantiations of the GPU fcollect / alltoall kernels and their extern "C" launchers (coll_gpu.h).
 * Single source: nvcc (CUDA) and hipcc (HIP) both build it.
 *
 * Instantiated: op (fcollect, alltoall) x variant (hoisted, naive) x W (2, 4, 8, generic) x G (1, 2, 4, 8; G <= W for
 * W != 0) x pipelining (off, on) for 16-byte vectors, and G = 1 without pipelining for the byte path taken when src,
 * dst_off or nbytes is not 16-byte aligned.
 */
#include <stdio.h>
#include <string.h>

#include <shoal/detail/coll_gpu_kernels.cuh>
#include "coll_gpu_plan.h"

#include "coll_gpu_launch.h"

using namespace shoal_cg;
using shoal_gl::sm_count;

extern "C" int shoal_coll_gpu_resolve(const shoal_coll_gpu_args_t *a, shoal_coll_gpu_cfg_t *out) {
  plan pl;
  if (make_plan(a, &pl, NULL, 0, sm_count)) return -1;
  *out = pl.cfg;
  return (int)pl.grid;
}

extern "C" int shoal_coll_gpu_mps_enabled(void) {
#if defined(CUDART_VERSION) && CUDART_VERSION >= 12040
  int dev = 0, v = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&v, cudaDevAttrMpsEnabled, dev) != cudaSuccess) {
    (void)cudaGetLastError();
    return -1;
  }
  return v ? 1 : 0;
#else
  return -1;
#endif
}

extern "C" void shoal_coll_gpu_kernel_name(const shoal_coll_gpu_args_t *a, char *buf, size_t len) {
  plan pl;
  if (make_plan(a, &pl, NULL, 0, sm_count)) {
    snprintf(buf, len, "invalid");
    return;
  }
  char w[16];
  if (pl.wclass) snprintf(w, sizeof w, "w%d", pl.wclass);
  else snprintf(w, sizeof w, "wgen");
  snprintf(buf, len, "%s_%s_%s_g%d_v%d%s",
           a->op == SHOAL_COLL_GPU_ALLTOALL ? "alltoall" : a->op == SHOAL_COLL_GPU_BCAST ? "bcast" : "fcollect",
           a->cfg.variant == SHOAL_COLL_GPU_NAIVE ? "naive" : "hoisted", w, pl.g, pl.vec, pl.pipe ? "_pipe" : "");
}

extern "C" int shoal_coll_gpu_launch(const shoal_coll_gpu_args_t *a, void *stream, char *err, size_t errlen) {
  plan pl;
  int rc = make_plan(a, &pl, err, errlen, sm_count);
  if (rc) return rc;
  if (!a->nbytes) return 0; /* nothing to move and, with no data, nothing to wait for */
  params p = {};
  p.peer_base = a->peer_base;
  p.src = (const char *)a->src;
  p.dst_off = a->dst_off;
  p.nbytes = a->nbytes;
  p.tile = pl.cfg.tile;
  p.flag_off = a->flag_off;
  p.timeout_ns = a->timeout_ns;
  p.after = a->wait ? a->after : 0;
  p.sync = a->sync;
  p.me = a->me;
  p.npes = a->npes;
  p.root = a->root;
  p.wait = a->wait && a->npes > 1;
  p.gpu_scope = pl.gpu_scope;
  p.small = pl.small;
  kernel_fn k = pick(a->op, a->cfg.variant, pl.wclass, pl.g, pl.vec, pl.pipe);
  p.pdl = pl.pdl && shoal_gl::pdl_ok((const void *)k);
  SHOAL_GPU_API(Stream_t) s = (SHOAL_GPU_API(Stream_t))stream;
  return shoal_gl::launch(k, pl.grid, (unsigned)NT, pl.shmem, s, p.pdl != 0, p, a->cfg.rt_launch != 0, err, errlen,
                          "shoal_coll_gpu_launch");
}
