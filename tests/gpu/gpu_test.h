/* gpu_test.h - helpers of the GPU test programs (one source for nvcc and hipcc): vendor spelling, value checks that
 * count failures, and the start/end of a test (exit 77 without a GPU: the test is skipped). */
#ifndef SHOAL_GPU_TEST_H
#define SHOAL_GPU_TEST_H
/* The tests check shmemx_gpu_available() and skip (exit 77) without a GPU: they have a host path, so shmem_init
 * must not end them there (docs/gpu.md, "Without a GPU"). */
#ifndef SHOAL_DEVICE_OPTIONAL
#define SHOAL_DEVICE_OPTIONAL
#endif
#include <shoal/shmem_device.cuh>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__HIPCC__)
#define gpuMalloc hipMalloc
#define gpuFree hipFree
#define gpuMemcpy hipMemcpy
#define gpuMemset hipMemset
#define gpuMemsetAsync hipMemsetAsync
#define gpuDeviceSynchronize hipDeviceSynchronize
#define gpuGetLastError hipGetLastError
#define gpuGetErrorString hipGetErrorString
#define gpuStreamCreate hipStreamCreate
#define gpuStreamDestroy hipStreamDestroy
#define gpuStreamSynchronize hipStreamSynchronize
#define gpuStream_t hipStream_t
#define gpuSuccess hipSuccess
#define gpuMemcpyDefault hipMemcpyDefault
#define gpuPointerGetAttributes hipPointerGetAttributes
#define gpuPointerAttributes hipPointerAttribute_t
#define GPU_ATTR_IS_DEVICE(a) ((a).memoryType == hipMemoryTypeDevice)
#else
#define gpuMalloc cudaMalloc
#define gpuFree cudaFree
#define gpuMemcpy cudaMemcpy
#define gpuMemset cudaMemset
#define gpuMemsetAsync cudaMemsetAsync
#define gpuDeviceSynchronize cudaDeviceSynchronize
#define gpuGetLastError cudaGetLastError
#define gpuGetErrorString cudaGetErrorString
#define gpuStreamCreate cudaStreamCreate
#define gpuStreamDestroy cudaStreamDestroy
#define gpuStreamSynchronize cudaStreamSynchronize
#define gpuStream_t cudaStream_t
#define gpuSuccess cudaSuccess
#define gpuMemcpyDefault cudaMemcpyDefault
#define gpuPointerGetAttributes cudaPointerGetAttributes
#define gpuPointerAttributes cudaPointerAttributes
#define GPU_ATTR_IS_DEVICE(a) ((a).type == cudaMemoryTypeDevice)
#endif

static int t_failures, t_me, t_npes;

/* A failed vendor call ends the job (every PE stops, oshrun exits non-zero). */
#define GPU_OK(call)                                                                                                  \
  do {                                                                                                                 \
    auto e_ = (call);                                                                                                  \
    if (e_ != gpuSuccess) {                                                                                            \
      fprintf(stderr, "PE %d: %s:%d: %s: %s\n", t_me, __FILE__, __LINE__, #call, gpuGetErrorString(e_));               \
      shmem_global_exit(2);                                                                                            \
    }                                                                                                                  \
  } while (0)
/* A wrong value is counted and reported (the first few of each check site). */
#define CHECK(cond, ...)                                                                                              \
  do {                                                                                                                 \
    if (!(cond)) {                                                                                                     \
      if (t_failures++ < 20) {                                                                                         \
        fprintf(stderr, "PE %d: FAIL %s:%d: %s: ", t_me, __FILE__, __LINE__, #cond);                                   \
        fprintf(stderr, __VA_ARGS__);                                                                                  \
        fputc('\n', stderr);                                                                                           \
      }                                                                                                                \
    }                                                                                                                  \
  } while (0)

/* Kernel launch, then wait for it and report a fault. */
#define LAUNCH_SYNC(...)                                                                                              \
  do {                                                                                                                 \
    __VA_ARGS__;                                                                                                       \
    GPU_OK(gpuGetLastError());                                                                                         \
    GPU_OK(gpuDeviceSynchronize());                                                                                    \
  } while (0)

static void t_start(const char *name) {
  shmem_init();
  t_me = shmem_my_pe();
  t_npes = shmem_n_pes();
  if (!shmemx_gpu_available()) {
    if (t_me == 0) printf("%s: SKIP: no GPU (host-only run)\n", name);
    fflush(stdout);
    shmem_finalize();
    exit(77);
  }
  if (shmemx_init_device_state()) shmem_global_exit(2);
}

/* Every PE's failures are summed on PE 0, through symmetric static data (host memory whatever SHOAL_HEAP says). */
static int t_all_failures[4096];
static int t_finish(const char *name) {
  shmem_barrier_all();
  shmem_int_p(&t_all_failures[t_me], t_failures, 0);
  shmem_barrier_all();
  int total = 0;
  if (t_me == 0) {
    for (int p = 0; p < t_npes; p++) total += t_all_failures[p];
    printf("%s: %s with %d PEs (%d failures)\n", name, total ? "FAIL" : "PASS", t_npes, total);
    fflush(stdout);
  }
  shmem_finalize();
  return t_failures ? 1 : 0;
}

/* Device heap allocation that must succeed. */
static void *t_dmalloc(size_t n) {
  void *p = shmem_malloc_with_hints(n, SHMEMX_MALLOC_DEVICE);
  if (!p) {
    fprintf(stderr, "PE %d: cannot allocate %zu bytes of device symmetric memory\n", t_me, n);
    shmem_global_exit(2);
  }
  return p;
}

/* The byte pattern of PE pe at index i in round r: 1..199, never the poison T_POISON. */
#define T_POISON 0xEE
__host__ __device__ static inline unsigned char t_pat(int pe, size_t i, int r) {
  return (unsigned char)(1 + (i * 131u + (size_t)pe * 17u + (size_t)r * 7u) % 199u);
}
#endif
