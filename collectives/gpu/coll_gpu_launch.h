/*
 * coll_gpu_launch.h - host side shared by the GPU collective launchers (coll_gpu.cu, coll_gpu_reduce.cu; nvcc or
 * hipcc): the current device's multiprocessor count and compute capability, cached, and one kernel launch with or
 * without programmatic dependent launch, through the driver's cuLaunchKernelEx where the runtime gives it (CUDA 12.5+),
 * else through the runtime.
 */
#ifndef SHOAL_COLL_GPU_LAUNCH_H
#define SHOAL_COLL_GPU_LAUNCH_H
#include <stdio.h>
#include <string.h>

#include <shoal/detail/gpu_port.cuh>

#if !defined(__HIPCC__) && defined(CUDART_VERSION) && CUDART_VERSION >= 12050
#include <cuda.h>
#include <pthread.h>
#define SHOAL_CG_DRIVER_LAUNCH 1
#endif

namespace shoal_gl {

/* Multiprocessor count of the current device, cached per device (-1 on error). */
inline int sm_count(void) {
  static int cache[64];
  int dev = 0;
  if (SHOAL_GPU_API(GetDevice)(&dev) != SHOAL_GPU_API(Success) || dev < 0) return -1;
  if (dev < 64 && cache[dev] > 0) return cache[dev];
  int n = 0;
  if (SHOAL_GPU_API(DeviceGetAttribute)(&n, SHOAL_GPU_ATTR_SM_COUNT, dev) != SHOAL_GPU_API(Success) || n <= 0) return -1;
  if (dev < 64) cache[dev] = n;
  return n;
}

/* Compute capability major of the current device, cached per device (0 on error and on HIP): programmatic dependent
 * launch needs 9 (Hopper) or later. */
inline int cc_major(void) {
  static int cache[64];
  int dev = 0;
  if (SHOAL_GPU_API(GetDevice)(&dev) != SHOAL_GPU_API(Success) || dev < 0) return 0;
  if (dev < 64 && cache[dev]) return cache[dev] > 0 ? cache[dev] : 0;
  int n = 0;
#if !defined(__HIPCC__)
  if (cudaDeviceGetAttribute(&n, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess) n = 0;
#endif
  if (dev < 64) cache[dev] = n > 0 ? n : -1;
  return n > 0 ? n : 0;
}

/* Whether a kernel of this library may be launched with programmatic dependent launch on the current device: the
 * device must be sm_90 or later AND the code it runs compiled for compute_90 or later (ptxVersion: the virtual
 * architecture, which is what __CUDA_ARCH__ sees), because only that code has the griddepcontrol.wait such a launch
 * needs. A library built for sm_80 alone runs JIT'd compute_80 code on an H200: no wait, so no such launch. k: any
 * kernel of the calling library (all are compiled for the same architectures). Cached per device; false on HIP. */
inline bool pdl_ok(const void *k) {
  static int cache[64]; /* 0 not asked, 1 yes, -1 no */
  if (cc_major() < 9) return false;
  int dev = 0;
  if (SHOAL_GPU_API(GetDevice)(&dev) != SHOAL_GPU_API(Success) || dev < 0) return false;
  if (dev < 64 && cache[dev]) return cache[dev] > 0;
  bool ok = false;
#if !defined(__HIPCC__)
  cudaFuncAttributes at;
  ok = cudaFuncGetAttributes(&at, k) == cudaSuccess && at.ptxVersion >= 90;
#else
  (void)k;
#endif
  if (dev < 64) cache[dev] = ok ? 1 : -1;
  return ok;
}

#ifdef SHOAL_CG_DRIVER_LAUNCH
/* The driver's cuLaunchKernelEx through the runtime's entry-point query (no -lcuda), and each kernel's CUfunction
 * (cudaGetFuncBySymbol), cached: in the VM of our H200 a runtime launch costs 4.2-4.8 us of host time per call and the
 * driver's 3.9-4.2 (bench_gpu_floor empty / empty-culaunch). NULL: not found, use the runtime. */
typedef CUresult (*culaunch_ex_t)(const CUlaunchConfig *, CUfunction, void **, void **);
inline CUfunction driver_fn(const void *k, culaunch_ex_t *launch) {
  struct fn_entry { const void *k; CUfunction f; };
  static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
  static int state; /* 0 not asked, 1 found, -1 not found */
  static culaunch_ex_t drv;
  static fn_entry tab[512]; /* open addressing on the kernel's address; a full table just stops caching */
  pthread_mutex_lock(&mu);
  CUfunction f = nullptr;
  if (!state) {
    cudaDriverEntryPointQueryResult q;
    void *fp = nullptr;
    state = cudaGetDriverEntryPointByVersion("cuLaunchKernelEx", &fp, 12000, cudaEnableDefault, &q) == cudaSuccess &&
                    q == cudaDriverEntryPointSuccess && fp ? 1 : -1;
    drv = (culaunch_ex_t)fp;
    (void)cudaGetLastError();
  }
  if (state == 1) {
    const size_t h = ((uintptr_t)k >> 4) % 512;
    for (size_t i = 0; i < 512; i++) {
      fn_entry &e = tab[(h + i) % 512];
      if (e.k == k) { f = e.f; break; }
      if (!e.k) {
        cudaFunction_t cf = nullptr;
        if (cudaGetFuncBySymbol(&cf, k) == cudaSuccess && cf) e.k = k, e.f = (CUfunction)cf, f = e.f;
        else (void)cudaGetLastError();
        break;
      }
    }
  }
  *launch = drv;
  pthread_mutex_unlock(&mu);
  return f;
}
#endif

/* Enqueue k(p) on s: grid x block threads, shmem bytes of dynamic shared memory; pdl: with programmatic dependent
 * launch (the caller checked cc_major() >= 9; ignored on HIP); rt: the runtime's launch even where the driver's is
 * found. 0, or -1 with "who: <launch> (grid ...): <error>" in err. */
template <typename P>
inline int launch(void (*k)(P), unsigned grid, unsigned block, size_t shmem, SHOAL_GPU_API(Stream_t) s, bool pdl,
                  P &p, bool rt, char *err, size_t errlen, const char *who) {
#ifdef SHOAL_CG_DRIVER_LAUNCH
  culaunch_ex_t dl = nullptr;
  CUfunction fn = rt ? nullptr : driver_fn((const void *)k, &dl);
  if (fn && dl) {
    CUlaunchAttribute at[1];
    memset(at, 0, sizeof at);
    at[0].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    at[0].value.programmaticStreamSerializationAllowed = 1;
    CUlaunchConfig lc;
    memset(&lc, 0, sizeof lc);
    lc.gridDimX = grid, lc.gridDimY = 1, lc.gridDimZ = 1;
    lc.blockDimX = block, lc.blockDimY = 1, lc.blockDimZ = 1;
    lc.sharedMemBytes = (unsigned)shmem;
    lc.hStream = (CUstream)s;
    lc.attrs = at;
    lc.numAttrs = pdl ? 1 : 0;
    void *args[] = {&p};
    const CUresult r = dl(&lc, fn, args, nullptr);
    if (r != CUDA_SUCCESS) {
      if (err) snprintf(err, errlen, "%s: cuLaunchKernelEx (grid %u x %u, %zu B shared): CUresult %d", who, grid, block,
                        shmem, (int)r);
      return -1;
    }
    return 0;
  }
#else
  (void)rt;
#endif
#if !defined(__HIPCC__)
  if (pdl) {
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    at[0].val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t lc;
    memset(&lc, 0, sizeof lc);
    lc.gridDim = dim3(grid);
    lc.blockDim = dim3(block);
    lc.dynamicSmemBytes = shmem;
    lc.stream = s;
    lc.attrs = at;
    lc.numAttrs = 1;
    cudaLaunchKernelEx(&lc, k, p);
  } else
#else
  (void)pdl;
#endif
    k<<<grid, block, shmem, s>>>(p);
  SHOAL_GPU_API(Error_t) e = SHOAL_GPU_API(GetLastError)();
  if (e != SHOAL_GPU_API(Success)) {
    if (err) snprintf(err, errlen, "%s: kernel launch (grid %u x %u, %zu B shared): %s", who, grid, block, shmem,
                      SHOAL_GPU_API(GetErrorString)(e));
    return -1;
  }
  return 0;
}

} // namespace shoal_gl
#endif
