/* gpu_hip.c - the HIP backend: plain C on the HIP runtime API (AMD platform). libamdhip64 is opened with dlopen at
 * the first device query, so that one libshoal serves NVIDIA, AMD and GPU-less hosts alike: without the library
 * the backend reports no device. Every failing call is reported (through the log hook, device/gpu.h) with the call
 * and the error string. The runtime's own kernels (gpu_kernels.cu: stream barrier, host-side AMOs) are built by hipcc
 * into libshoal_hip_kernels.so, opened the same way right after libamdhip64: without it barrier_on_stream, amo and
 * kernels_setup answer SHOAL_ERR_NOSYS and the runtime falls back (host barrier) or refuses, as before. */
#include "gpu.h"

#include <ctype.h>
#include <dlfcn.h>
#include <stdio.h>
#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__ /* the AMD platform's C API (with nvcc's platform, HIP maps onto CUDA: not this file) */
#endif
#include <hip/hip_runtime_api.h>

/* The HIP entry points used, resolved by name; each pointer has the type of the declaration in the header. */
#define SHOAL_HIP_FUNCS(X)                                                                                            \
  X(hipGetDeviceCount) X(hipDeviceGetByPCIBusId) X(hipDeviceGetPCIBusId) X(hipSetDevice) X(hipDeviceGetAttribute)    \
  X(hipMalloc) X(hipFree) X(hipIpcGetMemHandle) X(hipIpcOpenMemHandle) X(hipIpcCloseMemHandle) X(hipMemcpyAsync)     \
  X(hipMemsetAsync) X(hipStreamCreateWithFlags) X(hipStreamDestroy) X(hipStreamSynchronize) X(hipEventCreate)        \
  X(hipEventDestroy) X(hipEventRecord) X(hipEventSynchronize) X(hipEventElapsedTime) X(hipDeviceSynchronize)         \
  X(hipOccupancyMaxActiveBlocksPerMultiprocessor) X(hipLaunchKernel) X(hipGetErrorString) X(hipGetErrorName)         \
  X(hipGetLastError) X(hipHostMalloc) X(hipHostFree) X(hipHostGetDevicePointer) X(hipPointerGetAttributes)  \
  X(hipHostRegister) X(hipHostUnregister) X(hipEventQuery)
#define SHOAL_HIP_PTR(f) static __typeof__(f) *p_##f;
SHOAL_HIP_FUNCS(SHOAL_HIP_PTR)
#undef SHOAL_HIP_PTR

/* The launchers of libshoal_hip_kernels.so (gpu_kernels.cu built by hipcc); each returns a hipError_t. NULL: not
 * loaded. The library needs libamdhip64.so.5 or later (its DT_NEEDED), the same object hip_load opened: one HIP
 * runtime in the process, so that the streams made here are valid there. */
static struct {
  int (*setup)(const shmemx_device_state_t *st);
  int (*barrier)(void *stream);
  int (*amo)(void *target, int op, size_t size, uint64_t value, uint64_t cmp, void *scratch, void *stream);
} K;

/* Look for the kernels next to libshoal (its installed place: the same libdir), then in the build tree (libshoal in
 * runtime/, the kernels in device/), then on the loader's search path. Absent: debug message only. */
static void hip_kernels_load(void) {
  static const char *const rel[] = {"", "/../device"};
  const char *lib = "libshoal_hip_kernels.so";
  void *h = NULL;
  Dl_info info;
  if (dladdr((void *)&shoal_gpu_hip_ops, &info) && info.dli_fname && strrchr(info.dli_fname, '/')) {
    int dn = (int)(strrchr(info.dli_fname, '/') - info.dli_fname);
    for (size_t i = 0; !h && i < sizeof rel / sizeof rel[0]; i++) {
      char path[4096];
      snprintf(path, sizeof path, "%.*s%s/%s", dn, info.dli_fname, rel[i], lib);
      h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    }
  }
  if (!h) h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    SHOAL_GPU_DEBUG("hip: cannot load %s (%s): stream barrier and host-side AMOs on device memory fall back", lib,
                    dlerror());
    return;
  }
  *(void **)&K.setup = dlsym(h, "shoal_gpu_hip_kernels_setup");
  *(void **)&K.barrier = dlsym(h, "shoal_gpu_hip_barrier");
  *(void **)&K.amo = dlsym(h, "shoal_gpu_hip_amo");
  if (!K.setup || !K.barrier || !K.amo) {
    SHOAL_GPU_DEBUG("hip: %s lacks its launchers: not used", lib);
    memset(&K, 0, sizeof K);
    dlclose(h);
  }
}

/* 1 loaded, -1 unavailable (reported once at debug level), 0 not tried yet. Called at init, single-threaded. */
static int hip_loaded;
static int hip_load(void) {
  if (hip_loaded) return hip_loaded;
  static const char *const names[] = {"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"};
  void *h = NULL;
  for (size_t i = 0; !h && i < sizeof names / sizeof names[0]; i++) h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    SHOAL_GPU_DEBUG("hip: cannot load libamdhip64: %s", dlerror());
    return hip_loaded = -1;
  }
#define SHOAL_HIP_SYM(f)                                                                                              \
  if (!(*(void **)&p_##f = dlsym(h, #f))) {                                                                           \
    SHOAL_GPU_DEBUG("hip: libamdhip64 lacks %s", #f);                                                                \
    dlclose(h);                                                                                                        \
    return hip_loaded = -1;                                                                                            \
  }
  SHOAL_HIP_FUNCS(SHOAL_HIP_SYM)
#undef SHOAL_HIP_SYM
  hip_kernels_load();
  return hip_loaded = 1;
}

static shoal_status_t hip_fail(const char *call, hipError_t e) {
  shoal_gpu_logf(SHOAL_GPU_LOG_WARN, "%s: %s (%s)", call, p_hipGetErrorString(e), p_hipGetErrorName(e));
  return SHOAL_ERR;
}
#define HIP(f, ...)                                                                                                   \
  do {                                                                                                                 \
    hipError_t e_ = p_##f(__VA_ARGS__);                                                                                \
    if (SHOAL_UNLIKELY(e_ != hipSuccess)) return hip_fail(#f "(" #__VA_ARGS__ ")", e_);                                \
  } while (0)

static shoal_status_t hip_device_count(int *n) {
  *n = 0;
  if (hip_load() < 0) {
    snprintf(shoal_gpu_count_why, sizeof shoal_gpu_count_why, "no usable libamdhip64 (HIP runtime)");
    return SHOAL_OK;
  }
  hipError_t e = p_hipGetDeviceCount(n);
  if (e != hipSuccess) {
    SHOAL_GPU_DEBUG("hip: hipGetDeviceCount: %s: no usable GPU", p_hipGetErrorString(e));
    snprintf(shoal_gpu_count_why, sizeof shoal_gpu_count_why, "hipGetDeviceCount: %s", p_hipGetErrorString(e));
    p_hipGetLastError();
    *n = 0;
  }
  return SHOAL_OK;
}

static shoal_status_t hip_device_by_busid(const char *busid, int *dev) {
  hipError_t e = p_hipDeviceGetByPCIBusId(dev, busid);
  if (e != hipSuccess) {
    SHOAL_GPU_DEBUG("hip: hipDeviceGetByPCIBusId(%s): %s", busid, p_hipGetErrorString(e));
    p_hipGetLastError();
    return SHOAL_ERR;
  }
  return SHOAL_OK;
}

static shoal_status_t hip_device_busid(int dev, char *busid, size_t len) {
  HIP(hipDeviceGetPCIBusId, busid, (int)len, dev);
  for (char *c = busid; *c; c++) *c = (char)tolower((unsigned char)*c);
  return SHOAL_OK;
}

static shoal_status_t hip_set_device(int dev) {
  HIP(hipSetDevice, dev);
  return SHOAL_OK;
}

static shoal_status_t hip_sm_count(int dev, int *n) {
  HIP(hipDeviceGetAttribute, n, hipDeviceAttributeMultiprocessorCount, dev);
  return SHOAL_OK;
}

static shoal_status_t hip_mem_alloc(void **p, size_t n) {
  HIP(hipMalloc, p, n);
  return SHOAL_OK;
}

static shoal_status_t hip_mem_free(void *p) {
  HIP(hipFree, p);
  return SHOAL_OK;
}

static shoal_status_t hip_ipc_get(void *p, shoal_gpu_ipc_t *h) {
  hipIpcMemHandle_t hh;
  _Static_assert(sizeof hh == sizeof h->bytes, "hipIpcMemHandle_t is 64 bytes");
  HIP(hipIpcGetMemHandle, &hh, p);
  memcpy(h->bytes, &hh, sizeof hh);
  return SHOAL_OK;
}

static shoal_status_t hip_ipc_open(const shoal_gpu_ipc_t *h, void **p) {
  hipIpcMemHandle_t hh;
  memcpy(&hh, h->bytes, sizeof hh);
  HIP(hipIpcOpenMemHandle, p, hh, hipIpcMemLazyEnablePeerAccess);
  return SHOAL_OK;
}

static shoal_status_t hip_ipc_close(void *p) {
  HIP(hipIpcCloseMemHandle, p);
  return SHOAL_OK;
}

static shoal_status_t hip_memcpy(void *dst, const void *src, size_t n, void *stream) {
  HIP(hipMemcpyAsync, dst, src, n, hipMemcpyDefault, (hipStream_t)stream);
  return SHOAL_OK;
}

static shoal_status_t hip_memset(void *p, int v, size_t n, void *stream) {
  HIP(hipMemsetAsync, p, v, n, (hipStream_t)stream);
  return SHOAL_OK;
}

static shoal_status_t hip_stream_create(void **s) {
  hipStream_t hs;
  HIP(hipStreamCreateWithFlags, &hs, hipStreamNonBlocking);
  *s = hs;
  return SHOAL_OK;
}

static shoal_status_t hip_stream_destroy(void *s) {
  HIP(hipStreamDestroy, (hipStream_t)s);
  return SHOAL_OK;
}

static shoal_status_t hip_stream_sync(void *s) {
  HIP(hipStreamSynchronize, (hipStream_t)s);
  return SHOAL_OK;
}

static shoal_status_t hip_event_create(void **e) {
  hipEvent_t he;
  HIP(hipEventCreate, &he);
  *e = he;
  return SHOAL_OK;
}

static shoal_status_t hip_event_destroy(void *e) {
  HIP(hipEventDestroy, (hipEvent_t)e);
  return SHOAL_OK;
}

static shoal_status_t hip_event_record(void *e, void *stream) {
  HIP(hipEventRecord, (hipEvent_t)e, (hipStream_t)stream);
  return SHOAL_OK;
}

static shoal_status_t hip_event_sync(void *e) {
  HIP(hipEventSynchronize, (hipEvent_t)e);
  return SHOAL_OK;
}

static shoal_status_t hip_event_query(void *e, int *done) {
  hipError_t r = p_hipEventQuery((hipEvent_t)e);
  *done = r == hipSuccess;
  if (r == hipErrorNotReady) p_hipGetLastError(); /* ROCm before 7.0 leaves it as the last error */
  return r == hipSuccess || r == hipErrorNotReady ? SHOAL_OK : hip_fail("hipEventQuery", r);
}

static shoal_status_t hip_event_elapsed(void *start, void *end, float *ms) {
  HIP(hipEventElapsedTime, ms, (hipEvent_t)start, (hipEvent_t)end);
  return SHOAL_OK;
}

static shoal_status_t hip_device_sync(void) {
  HIP(hipDeviceSynchronize);
  return SHOAL_OK;
}

/* Pinned, mapped and coherent (the GPU's stores reach the CPU without a flush), portable to every device. */
static shoal_status_t hip_host_alloc(void **host, void **dev, size_t n) {
  HIP(hipHostMalloc, host, n, hipHostMallocMapped | hipHostMallocPortable | hipHostMallocCoherent);
  hipError_t e = p_hipHostGetDevicePointer(dev, *host, 0);
  if (e != hipSuccess) {
    p_hipHostFree(*host);
    return hip_fail("hipHostGetDevicePointer", e);
  }
  return SHOAL_OK;
}

static shoal_status_t hip_host_free(void *host) {
  HIP(hipHostFree, host);
  return SHOAL_OK;
}

/* An optimization (gpu_cuda.c's): a failure is a debug line, and not left as the thread's last error. */
static shoal_status_t hip_host_register(void *p, size_t n) {
  hipError_t e = p_hipHostRegister(p, n, hipHostRegisterPortable);
  if (e == hipSuccess) return SHOAL_OK;
  SHOAL_GPU_DEBUG("hipHostRegister of %zu bytes: %s", n, p_hipGetErrorString(e));
  p_hipGetLastError();
  return SHOAL_ERR;
}

static shoal_status_t hip_host_unregister(void *p) {
  hipError_t e = p_hipHostUnregister(p);
  if (e == hipSuccess) return SHOAL_OK;
  SHOAL_GPU_DEBUG("hipHostUnregister: %s", p_hipGetErrorString(e));
  p_hipGetLastError();
  return SHOAL_ERR;
}

/* By the pointers, not the memory type: hipMemoryType's values changed in ROCm 6 (its member was renamed too, at the
 * same place). Device memory has a device pointer and no host one; pinned host memory has both; an unknown pointer
 * is an error (ROCm 5) or has neither. */
static shoal_status_t hip_ptr_device(const void *p, int *on_device) {
  hipPointerAttribute_t a;
  memset(&a, 0, sizeof a);
  hipError_t e = p_hipPointerGetAttributes(&a, p);
  *on_device = e == hipSuccess && a.devicePointer && !a.hostPointer && !a.isManaged;
  if (e != hipSuccess) p_hipGetLastError();
  return SHOAL_OK;
}

static shoal_status_t hip_occupancy(const void *func, int block_threads, size_t shmem, int *blocks_per_sm) {
  HIP(hipOccupancyMaxActiveBlocksPerMultiprocessor, blocks_per_sm, func, block_threads, shmem);
  return SHOAL_OK;
}

static shoal_status_t hip_launch(const void *func, const unsigned grid[3], const unsigned block[3], void **args,
                                 size_t shmem, void *stream) {
  dim3 g = {grid[0], grid[1], grid[2]}, b = {block[0], block[1], block[2]};
  HIP(hipLaunchKernel, func, g, b, args, shmem, (hipStream_t)stream);
  return SHOAL_OK;
}

#define HIPK(f, ...)                                                                                                  \
  do {                                                                                                                 \
    if (!K.f) return SHOAL_ERR_NOSYS;                                                                                  \
    hipError_t e_ = (hipError_t)K.f(__VA_ARGS__);                                                                      \
    if (SHOAL_UNLIKELY(e_ != hipSuccess)) return hip_fail("shoal_gpu_hip_" #f, e_);                                   \
  } while (0)

static shoal_status_t hip_kernels_setup(const shmemx_device_state_t *st) {
  HIPK(setup, st);
  return SHOAL_OK;
}

static shoal_status_t hip_barrier_on_stream(void *stream) {
  HIPK(barrier, stream);
  return SHOAL_OK;
}

static shoal_status_t hip_amo(void *target, int op, size_t size, uint64_t value, uint64_t cmp, void *scratch,
                              uint64_t *old, void *stream) {
  HIPK(amo, target, op, size, value, cmp, scratch, stream);
  HIP(hipMemcpyAsync, old, scratch, sizeof *old, hipMemcpyDeviceToHost, (hipStream_t)stream);
  HIP(hipStreamSynchronize, (hipStream_t)stream);
  if (size == 4) *old = (uint32_t)*old;
  return SHOAL_OK;
}

const shoal_gpu_ops_t shoal_gpu_hip_ops = {
  .size = sizeof(shoal_gpu_ops_t),
  .name = "hip",
  .device_count = hip_device_count,
  .device_by_busid = hip_device_by_busid,
  .device_busid = hip_device_busid,
  .set_device = hip_set_device,
  .sm_count = hip_sm_count,
  .mem_alloc = hip_mem_alloc,
  .mem_free = hip_mem_free,
  .ipc_get = hip_ipc_get,
  .ipc_open = hip_ipc_open,
  .ipc_close = hip_ipc_close,
  .memcpy = hip_memcpy,
  .memset = hip_memset,
  .stream_create = hip_stream_create,
  .stream_destroy = hip_stream_destroy,
  .stream_sync = hip_stream_sync,
  .event_create = hip_event_create,
  .event_destroy = hip_event_destroy,
  .event_record = hip_event_record,
  .event_sync = hip_event_sync,
  .event_elapsed = hip_event_elapsed,
  .event_query = hip_event_query,
  .device_sync = hip_device_sync,
  .host_alloc = hip_host_alloc,
  .host_free = hip_host_free,
  .ptr_device = hip_ptr_device,
  .host_register = hip_host_register,
  .host_unregister = hip_host_unregister,
  .occupancy = hip_occupancy,
  .launch = hip_launch,
  .kernels_setup = hip_kernels_setup,
  .barrier_on_stream = hip_barrier_on_stream,
  .amo = hip_amo,
};
