/*
 * coll_gpu_reduce.cu - instantiations of the GPU reduction kernels and their extern "C" launchers (coll_gpu_reduce.h).
 * Single source: nvcc (CUDA) and hipcc (HIP).
 *
 * Instantiated for every (type, op) of shoal_red_supported (signed integers for min and max only: the other operations
 * are the unsigned kernels' bits): hoisted and naive on the 16-byte path with generic W, hoisted with W = 2, 4, 8
 * unrolled for sum, and the element path (misaligned offsets; complex double), hoisted.
 */
#include <stdio.h>
#include <string.h>

#include "coll_gpu_reduce.cuh"
#include "coll_gpu_reduce_plan.h"

using namespace shoal_cr;

namespace {
int sm_cache[64];
int sm_count(void) {
  int dev = 0;
  if (SHOAL_GPU_API(GetDevice)(&dev) != SHOAL_GPU_API(Success) || dev < 0) return -1;
  if (dev < 64 && sm_cache[dev] > 0) return sm_cache[dev];
  int n = 0;
  if (SHOAL_GPU_API(DeviceGetAttribute)(&n, SHOAL_GPU_ATTR_SM_COUNT, dev) != SHOAL_GPU_API(Success) || n <= 0) return -1;
  if (dev < 64) sm_cache[dev] = n;
  return n;
}
} // namespace

extern "C" void shoal_coll_gpu_reduce_kernel_name(const shoal_coll_gpu_red_args_t *a, char *buf, size_t len) {
  rplan pl;
  if (make_red_plan(a, &pl, NULL, 0, sm_count)) {
    snprintf(buf, len, "invalid");
    return;
  }
  if (pl.ll) {
    snprintf(buf, len, "reduce_%s_%s_ll", shoal_red_op_name(a->op), shoal_red_type_name(red_type(a->type, a->op)));
    return;
  }
  char w[16];
  if (pl.wclass) snprintf(w, sizeof w, "w%d", pl.wclass);
  else snprintf(w, sizeof w, "wgen");
  snprintf(buf, len, "reduce_%s_%s_%s_%s_v%d", shoal_red_op_name(a->op), shoal_red_type_name(red_type(a->type, a->op)),
           a->cfg.variant == SHOAL_COLL_GPU_NAIVE && pl.vec == 16 && shoal_red_type_size(a->type) < 16 ? "naive" : "hoisted", w, pl.vec);
}

/* Compute capability major of the current device, cached per device (0 on error or HIP). */
static int red_cc[64];
static int red_cc_major(void) {
  int dev = 0;
  if (SHOAL_GPU_API(GetDevice)(&dev) != SHOAL_GPU_API(Success) || dev < 0 || dev >= 64) return 0;
  if (red_cc[dev]) return red_cc[dev] > 0 ? red_cc[dev] : 0;
  int n = 0;
#if !defined(__HIPCC__)
  if (cudaDeviceGetAttribute(&n, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess) n = 0;
#endif
  red_cc[dev] = n > 0 ? n : -1;
  return n > 0 ? n : 0;
}

extern "C" int shoal_coll_gpu_reduce_launch(const shoal_coll_gpu_red_args_t *a, void *stream, char *err, size_t errlen) {
  rplan pl;
  int rc = make_red_plan(a, &pl, err, errlen, sm_count);
  if (rc) return rc;
  if (!a->nelems) return 0;
  rparams p;
  memset(&p, 0, sizeof p);
  p.c.peer_base = a->peer_base;
  p.c.dst_off = a->dst_off;
  p.c.nbytes = a->nelems * shoal_red_type_size(a->type);
  p.c.tile = pl.tile;
  p.c.flag_off = a->flag_off;
  p.c.timeout_ns = a->timeout_ns;
  p.c.after = a->wait ? a->after : 0;
  p.c.sync = a->sync;
  p.c.me = a->me;
  p.c.npes = a->npes;
  p.c.wait = a->wait && a->npes > 1;
  p.c.gpu_scope = pl.gpu_scope;
  p.src_off = a->src_off;
  p.nelems = a->nelems;
  p.ll_off = a->ll_off;
  p.ll_half = a->ll_half;
  p.entry = p.c.wait && !pl.entry_kernel && !pl.ll;
  SHOAL_GPU_API(Stream_t) s = (SHOAL_GPU_API(Stream_t))stream;
  const char *what = "entry kernel";
  /* Small grids as the fcollect's (coll_gpu_plan.h): programmatic dependent launch, so that a call starts while the
   * stream's previous kernel ends (CUDA, sm_90 and later). */
  const bool pdl = pl.grid <= SHOAL_COLL_GPU_PDL_MAX_GRID && a->cfg.pdl != SHOAL_COLL_GPU_PDL_OFF && red_cc_major() >= 9;
  rkernel_fn k = rpick(a->type, a->op, pl.ll ? VAR_LL : a->cfg.variant, pl.wclass, pl.vec);
#if !defined(__HIPCC__)
  if (pdl) {
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    at[0].val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t lc;
    memset(&lc, 0, sizeof lc);
    lc.stream = s;
    lc.attrs = at;
    lc.numAttrs = 1;
    if (pl.entry_kernel) {
      lc.gridDim = dim3(1);
      lc.blockDim = dim3(64);
      cudaLaunchKernelEx(&lc, red_entry_kernel<0>, p.c);
    }
    SHOAL_GPU_API(Error_t) e = SHOAL_GPU_API(GetLastError)();
    if (e == SHOAL_GPU_API(Success)) {
      what = "kernel";
      lc.gridDim = dim3(pl.grid);
      lc.blockDim = dim3(NT);
      lc.dynamicSmemBytes = pl.shmem;
      cudaLaunchKernelEx(&lc, k, p);
      e = SHOAL_GPU_API(GetLastError)();
    }
    if (e != SHOAL_GPU_API(Success)) {
      if (err) snprintf(err, errlen, "shoal_coll_gpu_reduce_launch: %s launch (grid %u x %d, %zu B shared): %s", what,
                        pl.grid, NT, pl.shmem, SHOAL_GPU_API(GetErrorString)(e));
      return -1;
    }
    return 0;
  }
#else
  (void)pdl;
#endif
  if (pl.entry_kernel) red_entry_kernel<0><<<1, 64, 0, s>>>(p.c);
  SHOAL_GPU_API(Error_t) e = SHOAL_GPU_API(GetLastError)();
  if (e == SHOAL_GPU_API(Success)) {
    what = "kernel";
    k<<<pl.grid, NT, pl.shmem, s>>>(p);
    e = SHOAL_GPU_API(GetLastError)();
  }
  if (e != SHOAL_GPU_API(Success)) {
    if (err) snprintf(err, errlen, "shoal_coll_gpu_reduce_launch: %s launch (grid %u x %d, %zu B shared): %s", what,
                      pl.grid, NT, pl.shmem, SHOAL_GPU_API(GetErrorString)(e));
    return -1;
  }
  return 0;
}

extern "C" int shoal_coll_gpu_reduce_epochs(const shoal_coll_gpu_red_args_t *a) {
  rplan pl;
  if (make_red_plan(a, &pl, NULL, 0, sm_count)) return -3;
  if (!a->nelems || !a->wait || a->npes < 2) return 0;
  return pl.ll ? 1 : 2;
}

extern "C" int shoal_coll_gpu_entry_launch(const shoal_coll_gpu_args_t *a, void *stream, char *err, size_t errlen) {
  if (!a || a->npes < 1 || a->npes > SHOAL_COLL_GPU_MAX_PES || a->me < 0 || a->me >= a->npes || !a->peer_base ||
      !a->sync) {
    if (err) snprintf(err, errlen, "shoal_coll_gpu_entry_launch: npes, me, peer_base or sync out of range or NULL");
    return -3;
  }
  if (!a->wait || a->npes < 2) return 0;
  params c;
  memset(&c, 0, sizeof c);
  c.peer_base = a->peer_base;
  c.flag_off = a->flag_off;
  c.sync = a->sync;
  c.me = a->me;
  c.npes = a->npes;
  c.wait = 1;
  c.timeout_ns = a->timeout_ns;
  c.after = a->after;
  c.gpu_scope = a->cfg.scope == SHOAL_COLL_GPU_SCOPE_AUTO && a->one_gpu;
  SHOAL_GPU_API(Stream_t) s = (SHOAL_GPU_API(Stream_t))stream;
#if !defined(__HIPCC__)
  if (a->cfg.pdl != SHOAL_COLL_GPU_PDL_OFF && red_cc_major() >= 9) {
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    at[0].val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t lc;
    memset(&lc, 0, sizeof lc);
    lc.stream = s;
    lc.attrs = at;
    lc.numAttrs = 1;
    lc.gridDim = dim3(1);
    lc.blockDim = dim3(64);
    cudaLaunchKernelEx(&lc, red_entry_kernel<0>, c);
  } else
#endif
    red_entry_kernel<0><<<1, 64, 0, s>>>(c);
  SHOAL_GPU_API(Error_t) e = SHOAL_GPU_API(GetLastError)();
  if (e != SHOAL_GPU_API(Success)) {
    if (err) snprintf(err, errlen, "shoal_coll_gpu_entry_launch: launch: %s", SHOAL_GPU_API(GetErrorString)(e));
    return -1;
  }
  return 0;
}
