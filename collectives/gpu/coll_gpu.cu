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

#include "coll_gpu_kernels.cuh"
#include "coll_gpu_plan.h"

#if !defined(__HIPCC__) && defined(CUDART_VERSION) && CUDART_VERSION >= 12050
#include <cuda.h>
#include <pthread.h>
#define SHOAL_CG_DRIVER_LAUNCH 1
#endif

using namespace shoal_cg;

namespace {

/* Multiprocessor count of the current device, cached per device (-1 on error). */
int sm_cache[64];
int sm_count(void) {
  int *cache = sm_cache;
  int dev = 0;
  if (SHOAL_GPU_API(GetDevice)(&dev) != SHOAL_GPU_API(Success) || dev < 0) return -1;
  if (dev < 64 && cache[dev] > 0) return cache[dev];
  int n = 0;
  if (SHOAL_GPU_API(DeviceGetAttribute)(&n, SHOAL_GPU_ATTR_SM_COUNT, dev) != SHOAL_GPU_API(Success) || n <= 0) return -1;
  if (dev < 64) cache[dev] = n;
  return n;
}

/* Compute capability major of the current device, cached per device (0 on error): programmatic dependent launch
 * needs 9 (Hopper) or later. */
int cc_cache[64];
int cc_major(void) {
  int dev = 0;
  if (SHOAL_GPU_API(GetDevice)(&dev) != SHOAL_GPU_API(Success) || dev < 0) return 0;
  if (dev < 64 && cc_cache[dev]) return cc_cache[dev] > 0 ? cc_cache[dev] : 0;
  int n = 0;
#if defined(__HIPCC__)
  n = 0; /* no such launch on HIP */
#else
  if (cudaDeviceGetAttribute(&n, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess) n = 0;
#endif
  if (dev < 64) cc_cache[dev] = n > 0 ? n : -1;
  return n;
}

#ifdef SHOAL_CG_DRIVER_LAUNCH
/* The driver's cuLaunchKernelEx through the runtime's entry-point query (no -lcuda), and each kernel's CUfunction
 * (cudaGetFuncBySymbol), cached: in the VM of our H200 a runtime launch costs 4.2-4.8 us of host time per call and the
 * driver's 3.9-4.2 (bench_gpu_floor empty / empty-culaunch). NULL: not found, use the runtime. */
typedef CUresult (*culaunch_ex_t)(const CUlaunchConfig *, CUfunction, void **, void **);
pthread_mutex_t drv_mu = PTHREAD_MUTEX_INITIALIZER;
int drv_state; /* 0 not asked, 1 found, -1 not found */
culaunch_ex_t drv_launch;
struct fn_entry { const void *k; CUfunction f; };
fn_entry fn_tab[256]; /* open addressing on the kernel's address; a full table just stops caching */
CUfunction driver_fn(const void *k, culaunch_ex_t *launch) {
  pthread_mutex_lock(&drv_mu);
  CUfunction f = nullptr;
  if (!drv_state) {
    cudaDriverEntryPointQueryResult q;
    void *fp = nullptr;
    drv_state = cudaGetDriverEntryPointByVersion("cuLaunchKernelEx", &fp, 12000, cudaEnableDefault, &q) ==
                            cudaSuccess && q == cudaDriverEntryPointSuccess && fp ? 1 : -1;
    drv_launch = (culaunch_ex_t)fp;
    (void)cudaGetLastError();
  }
  if (drv_state == 1) {
    const size_t h = ((uintptr_t)k >> 4) % 256;
    for (size_t i = 0; i < 256; i++) {
      fn_entry &e = fn_tab[(h + i) % 256];
      if (e.k == k) { f = e.f; break; }
      if (!e.k) {
        cudaFunction_t cf = nullptr;
        if (cudaGetFuncBySymbol(&cf, k) == cudaSuccess && cf) e.k = k, e.f = (CUfunction)cf, f = e.f;
        else (void)cudaGetLastError();
        break;
      }
    }
  }
  *launch = drv_launch;
  pthread_mutex_unlock(&drv_mu);
  return f;
}
#endif

} // namespace

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
  params p;
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
  p.pdl = pl.pdl && cc_major() >= 9;
  kernel_fn k = pick(a->op, a->cfg.variant, pl.wclass, pl.g, pl.vec, pl.pipe);
  SHOAL_GPU_API(Stream_t) s = (SHOAL_GPU_API(Stream_t))stream;
#ifdef SHOAL_CG_DRIVER_LAUNCH
  culaunch_ex_t dl = nullptr;
  CUfunction fn = a->cfg.rt_launch ? nullptr : driver_fn((const void *)k, &dl);
  if (fn && dl) {
    CUlaunchAttribute at[1];
    memset(at, 0, sizeof at);
    at[0].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    at[0].value.programmaticStreamSerializationAllowed = 1;
    CUlaunchConfig lc;
    memset(&lc, 0, sizeof lc);
    lc.gridDimX = pl.grid, lc.gridDimY = 1, lc.gridDimZ = 1;
    lc.blockDimX = NT, lc.blockDimY = 1, lc.blockDimZ = 1;
    lc.sharedMemBytes = (unsigned)pl.shmem;
    lc.hStream = (CUstream)s;
    lc.attrs = at;
    lc.numAttrs = pl.pdl && cc_major() >= 9 ? 1 : 0;
    void *args[] = {&p};
    const CUresult r = dl(&lc, fn, args, nullptr);
    if (r != CUDA_SUCCESS) {
      if (err) snprintf(err, errlen, "shoal_coll_gpu_launch: cuLaunchKernelEx (grid %u x %d, %zu B shared): CUresult %d",
                        pl.grid, NT, pl.shmem, (int)r);
      return -1;
    }
    return 0;
  }
#endif
#if !defined(__HIPCC__)
  if (pl.pdl && cc_major() >= 9) {
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    at[0].val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t lc;
    memset(&lc, 0, sizeof lc);
    lc.gridDim = dim3(pl.grid);
    lc.blockDim = dim3(NT);
    lc.dynamicSmemBytes = pl.shmem;
    lc.stream = s;
    lc.attrs = at;
    lc.numAttrs = 1;
    cudaLaunchKernelEx(&lc, k, p);
  } else
#endif
    k<<<pl.grid, NT, pl.shmem, s>>>(p);
  SHOAL_GPU_API(Error_t) e = SHOAL_GPU_API(GetLastError)();
  if (e != SHOAL_GPU_API(Success)) {
    if (err) snprintf(err, errlen, "shoal_coll_gpu_launch: kernel launch (grid %u x %d, %zu B shared): %s", pl.grid, NT,
                      pl.shmem, SHOAL_GPU_API(GetErrorString)(e));
    return -1;
  }
  return 0;
}
