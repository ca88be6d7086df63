/* gpu_cuda.c - the CUDA backend: plain C on the CUDA runtime API (libcudart_static, so that libshoal loads on a
 * machine without the driver: cudaGetDeviceCount then fails and the PE runs host-only). Every failing call is
 * reported once, here, with the call and the error string, through the log hook (device/gpu.h; the runtime's logger
 * prefixes the PE). The kernels the runtime itself launches (stream barrier, host-side AMOs) are in gpu_kernels.cu,
 * compiled by nvcc. */
#include "gpu.h"

#include <ctype.h>
#include <stdio.h>
#include <cuda.h> /* types of the driver's VMM API; its entry points come through the runtime (no -lcuda) */
#include <cuda_runtime_api.h>
#include <unistd.h>

static shoal_status_t cuda_fail(const char *call, cudaError_t e) {
  shoal_gpu_logf(SHOAL_GPU_LOG_WARN, "%s: %s (%s)", call, cudaGetErrorString(e), cudaGetErrorName(e));
  return SHOAL_ERR;
}
#define CU(call)                                                                                                      \
  do {                                                                                                                 \
    cudaError_t e_ = (call);                                                                                           \
    if (SHOAL_UNLIKELY(e_ != cudaSuccess)) return cuda_fail(#call, e_);                                                \
  } while (0)

/* No driver (libcuda missing or too old) or no device: not an error, the PE runs host-only. */
static shoal_status_t cuda_device_count(int *n) {
  cudaError_t e = cudaGetDeviceCount(n);
  if (e != cudaSuccess) {
    SHOAL_GPU_DEBUG("cuda: cudaGetDeviceCount: %s: no usable GPU", cudaGetErrorString(e));
    snprintf(shoal_gpu_count_why, sizeof shoal_gpu_count_why, "cudaGetDeviceCount: %s", cudaGetErrorString(e));
    cudaGetLastError();
    *n = 0;
  }
  return SHOAL_OK;
}

/* A bus id hwloc sees but CUDA does not (CUDA_VISIBLE_DEVICES) is expected: reported at debug level only. */
static shoal_status_t cuda_device_by_busid(const char *busid, int *dev) {
  cudaError_t e = cudaDeviceGetByPCIBusId(dev, busid);
  if (e != cudaSuccess) {
    SHOAL_GPU_DEBUG("cuda: cudaDeviceGetByPCIBusId(%s): %s", busid, cudaGetErrorString(e));
    cudaGetLastError();
    return SHOAL_ERR;
  }
  return SHOAL_OK;
}

static shoal_status_t cuda_device_busid(int dev, char *busid, size_t len) {
  CU(cudaDeviceGetPCIBusId(busid, (int)len, dev));
  for (char *c = busid; *c; c++) *c = (char)tolower((unsigned char)*c);
  return SHOAL_OK;
}

static shoal_status_t cuda_set_device(int dev) {
  CU(cudaSetDevice(dev));
  return SHOAL_OK;
}

static shoal_status_t cuda_sm_count(int dev, int *n) {
  CU(cudaDeviceGetAttribute(n, cudaDevAttrMultiProcessorCount, dev));
  return SHOAL_OK;
}

static shoal_status_t cuda_mem_alloc(void **p, size_t n) {
  CU(cudaMalloc(p, n));
  return SHOAL_OK;
}

static shoal_status_t cuda_mem_free(void *p) {
  CU(cudaFree(p));
  return SHOAL_OK;
}

static shoal_status_t cuda_ipc_get(void *p, shoal_gpu_ipc_t *h) {
  cudaIpcMemHandle_t ch;
  _Static_assert(sizeof ch == sizeof h->bytes, "cudaIpcMemHandle_t is 64 bytes");
  CU(cudaIpcGetMemHandle(&ch, p));
  memcpy(h->bytes, &ch, sizeof ch);
  return SHOAL_OK;
}

static shoal_status_t cuda_ipc_open(const shoal_gpu_ipc_t *h, void **p) {
  cudaIpcMemHandle_t ch;
  memcpy(&ch, h->bytes, sizeof ch);
  CU(cudaIpcOpenMemHandle(p, ch, cudaIpcMemLazyEnablePeerAccess));
  return SHOAL_OK;
}

static shoal_status_t cuda_ipc_close(void *p) {
  CU(cudaIpcCloseMemHandle(p));
  return SHOAL_OK;
}

/* ---- the device heap shared through the driver's virtual memory management API ----
 * cuMemCreate with a POSIX file descriptor handle, mapped by every peer (cuMemImportFromShareableHandle, cuMemMap), as
 * NVSHMEM and NCCL map theirs. Measured on an H200 with 4 PEs under MPS (docs/gpu-collectives.md): a peer mapped this
 * way copies and takes stores at the local rate at every size, while a cudaIpcOpenMemHandle mapping lost a quarter of
 * the copy rate at 1 GiB (3.1 against 4.2 TB/s) and GPU fcollect up to 45%. */
static struct {
  int state; /* 0: not looked up; 1: available; -1: not (old driver): callers take the cudaIpc path */
  __typeof__(&cuMemCreate) create;
  __typeof__(&cuMemGetAllocationGranularity) gran;
  __typeof__(&cuMemExportToShareableHandle) export_fd;
  __typeof__(&cuMemImportFromShareableHandle) import_fd;
  __typeof__(&cuMemAddressReserve) reserve;
  __typeof__(&cuMemAddressFree) addr_free;
  __typeof__(&cuMemMap) map;
  __typeof__(&cuMemUnmap) unmap;
  __typeof__(&cuMemSetAccess) access;
  __typeof__(&cuMemRelease) release;
  struct { void *p; CUmemGenericAllocationHandle h; } own[8]; /* this process's share_alloc allocations */
} V;

static bool vmm_load(void) {
  if (V.state) return V.state > 0;
  V.state = -1;
#if CUDART_VERSION >= 12050
  struct { const char *name; void **fn; } e[] = {
    {"cuMemCreate", (void **)&V.create}, {"cuMemGetAllocationGranularity", (void **)&V.gran},
    {"cuMemExportToShareableHandle", (void **)&V.export_fd}, {"cuMemImportFromShareableHandle", (void **)&V.import_fd},
    {"cuMemAddressReserve", (void **)&V.reserve}, {"cuMemAddressFree", (void **)&V.addr_free},
    {"cuMemMap", (void **)&V.map}, {"cuMemUnmap", (void **)&V.unmap}, {"cuMemSetAccess", (void **)&V.access},
    {"cuMemRelease", (void **)&V.release}};
  for (size_t i = 0; i < sizeof e / sizeof e[0]; i++) {
    enum cudaDriverEntryPointQueryResult q;
    if (cudaGetDriverEntryPointByVersion(e[i].name, e[i].fn, CUDART_VERSION, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess) {
      cudaGetLastError();
      SHOAL_GPU_DEBUG("cuda: driver entry point %s not available: device heap shared by cudaIpc", e[i].name);
      return false;
    }
  }
  V.state = 1;
#endif
  return V.state > 0;
}

static shoal_status_t vmm_fail(const char *call, CUresult r) {
  shoal_gpu_logf(SHOAL_GPU_LOG_WARN, "%s: CUresult %d", call, (int)r);
  return SHOAL_ERR;
}
#define CUV(call)                                                                                                     \
  do {                                                                                                                 \
    CUresult r_ = (call);                                                                                              \
    if (SHOAL_UNLIKELY(r_ != CUDA_SUCCESS)) return vmm_fail(#call, r_);                                                \
  } while (0)

/* Allocation properties on the current device and the size a mapping of n bytes takes (granularity multiple). */
static shoal_status_t vmm_prop(CUmemAllocationProp *prop, size_t n, size_t *size, int *dev) {
  CU(cudaGetDevice(dev));
  CU(cudaFree(0)); /* the primary context exists and is current: the driver calls below need one */
  memset(prop, 0, sizeof *prop);
  prop->type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop->requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  prop->location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop->location.id = *dev;
  size_t g = 0;
  CUV(V.gran(&g, prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  if (!g) g = (size_t)2 << 20;
  *size = (n + g - 1) / g * g;
  return SHOAL_OK;
}

/* Reserve an address range of size bytes, map h there, read-write for device dev. */
static shoal_status_t vmm_map(CUmemGenericAllocationHandle h, size_t size, int dev, void **p) {
  CUdeviceptr a = 0;
  CUV(V.reserve(&a, size, 0, 0, 0));
  CUresult r = V.map(a, size, 0, h, 0);
  if (r == CUDA_SUCCESS) {
    CUmemAccessDesc d;
    memset(&d, 0, sizeof d);
    d.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    d.location.id = dev;
    d.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    r = V.access(a, size, &d, 1);
    if (r != CUDA_SUCCESS) V.unmap(a, size);
  }
  if (r != CUDA_SUCCESS) {
    V.addr_free(a, size);
    return vmm_fail("cuMemMap/cuMemSetAccess", r);
  }
  *p = (void *)a;
  return SHOAL_OK;
}

static shoal_status_t cuda_share_alloc(void **p, size_t n, int *fd) {
  if (!vmm_load()) return SHOAL_ERR_NOSYS;
  int slot = -1;
  for (int i = 0; i < 8 && slot < 0; i++)
    if (!V.own[i].p) slot = i;
  if (slot < 0) return SHOAL_ERR_NOMEM;
  CUmemAllocationProp prop;
  size_t size;
  int dev;
  if (vmm_prop(&prop, n, &size, &dev)) return SHOAL_ERR;
  CUmemGenericAllocationHandle h;
  CUV(V.create(&h, size, &prop, 0));
  void *q = NULL;
  int f = -1;
  CUresult r = V.export_fd(&f, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
  if (r != CUDA_SUCCESS) {
    V.release(h);
    return vmm_fail("cuMemExportToShareableHandle", r);
  }
  if (vmm_map(h, size, dev, &q)) {
    close(f);
    V.release(h);
    return SHOAL_ERR;
  }
  V.own[slot].p = q;
  V.own[slot].h = h;
  *p = q;
  *fd = f;
  return SHOAL_OK;
}

static shoal_status_t cuda_share_open(int fd, size_t n, void **p) {
  if (!vmm_load()) return SHOAL_ERR_NOSYS;
  CUmemAllocationProp prop;
  size_t size;
  int dev;
  if (vmm_prop(&prop, n, &size, &dev)) return SHOAL_ERR;
  CUmemGenericAllocationHandle h;
  CUV(V.import_fd(&h, (void *)(uintptr_t)fd, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  shoal_status_t rc = vmm_map(h, size, dev, p);
  V.release(h); /* the mapping holds the memory */
  return rc;
}

static shoal_status_t cuda_share_close(void *p, size_t n) {
  CUmemAllocationProp prop;
  size_t size;
  int dev;
  if (!vmm_load() || vmm_prop(&prop, n, &size, &dev)) return SHOAL_ERR;
  CUV(V.unmap((CUdeviceptr)p, size));
  CUV(V.addr_free((CUdeviceptr)p, size));
  return SHOAL_OK;
}

static shoal_status_t cuda_share_free(void *p, size_t n) {
  shoal_status_t rc = cuda_share_close(p, n);
  for (int i = 0; i < 8; i++)
    if (V.own[i].p == p) {
      if (V.release(V.own[i].h) != CUDA_SUCCESS && !rc) rc = SHOAL_ERR;
      V.own[i].p = NULL;
    }
  return rc;
}

static shoal_status_t cuda_memcpy(void *dst, const void *src, size_t n, void *stream) {
  CU(cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, (cudaStream_t)stream));
  return SHOAL_OK;
}

static shoal_status_t cuda_memset(void *p, int v, size_t n, void *stream) {
  CU(cudaMemsetAsync(p, v, n, (cudaStream_t)stream));
  return SHOAL_OK;
}

static shoal_status_t cuda_stream_create(void **s) {
  cudaStream_t cs;
  CU(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
  *s = cs;
  return SHOAL_OK;
}

static shoal_status_t cuda_stream_destroy(void *s) {
  CU(cudaStreamDestroy((cudaStream_t)s));
  return SHOAL_OK;
}

static shoal_status_t cuda_stream_sync(void *s) {
  CU(cudaStreamSynchronize((cudaStream_t)s));
  return SHOAL_OK;
}

static shoal_status_t cuda_event_create(void **e) {
  cudaEvent_t ce;
  CU(cudaEventCreate(&ce));
  *e = ce;
  return SHOAL_OK;
}

static shoal_status_t cuda_event_destroy(void *e) {
  CU(cudaEventDestroy((cudaEvent_t)e));
  return SHOAL_OK;
}

static shoal_status_t cuda_event_record(void *e, void *stream) {
  CU(cudaEventRecord((cudaEvent_t)e, (cudaStream_t)stream));
  return SHOAL_OK;
}

static shoal_status_t cuda_event_sync(void *e) {
  CU(cudaEventSynchronize((cudaEvent_t)e));
  return SHOAL_OK;
}

static shoal_status_t cuda_event_query(void *e, int *done) {
  cudaError_t r = cudaEventQuery((cudaEvent_t)e);
  *done = r == cudaSuccess;
  return r == cudaSuccess || r == cudaErrorNotReady ? SHOAL_OK : cuda_fail("cudaEventQuery", r);
}

static shoal_status_t cuda_event_elapsed(void *start, void *end, float *ms) {
  CU(cudaEventElapsedTime(ms, (cudaEvent_t)start, (cudaEvent_t)end));
  return SHOAL_OK;
}

static shoal_status_t cuda_device_sync(void) {
  CU(cudaDeviceSynchronize());
  return SHOAL_OK;
}

/* Pinned, mapped into every device's address space (portable), for a queue the GPU writes and the CPU reads. */
static shoal_status_t cuda_host_alloc(void **host, void **dev, size_t n) {
  CU(cudaHostAlloc(host, n, cudaHostAllocMapped | cudaHostAllocPortable));
  cudaError_t e = cudaHostGetDevicePointer(dev, *host, 0);
  if (e != cudaSuccess) {
    cudaFreeHost(*host);
    return cuda_fail("cudaHostGetDevicePointer", e);
  }
  return SHOAL_OK;
}

static shoal_status_t cuda_host_free(void *host) {
  CU(cudaFreeHost(host));
  return SHOAL_OK;
}

/* An optimization: where it fails the caller goes on (a debug line), and the error must not stay behind as the
 * thread's last error, which a user's cudaGetLastError after a launch would take for the launch's. */
static shoal_status_t cuda_host_register(void *p, size_t n) {
  cudaError_t e = cudaHostRegister(p, n, cudaHostRegisterPortable);
  if (e == cudaSuccess) return SHOAL_OK;
  SHOAL_GPU_DEBUG("cudaHostRegister of %zu bytes: %s", n, cudaGetErrorString(e));
  cudaGetLastError();
  return SHOAL_ERR;
}

static shoal_status_t cuda_host_unregister(void *p) {
  cudaError_t e = cudaHostUnregister(p);
  if (e == cudaSuccess) return SHOAL_OK;
  SHOAL_GPU_DEBUG("cudaHostUnregister: %s", cudaGetErrorString(e));
  cudaGetLastError();
  return SHOAL_ERR;
}

static shoal_status_t cuda_ptr_device(const void *p, int *on_device) {
  struct cudaPointerAttributes a;
  cudaError_t e = cudaPointerGetAttributes(&a, p);
  *on_device = e == cudaSuccess && a.type == cudaMemoryTypeDevice;
  if (e != cudaSuccess) cudaGetLastError(); /* an unknown pointer is host memory here, not a sticky error */
  return SHOAL_OK;
}

static shoal_status_t cuda_occupancy(const void *func, int block_threads, size_t shmem, int *blocks_per_sm) {
  CU(cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, func, block_threads, shmem));
  return SHOAL_OK;
}

static shoal_status_t cuda_launch(const void *func, const unsigned grid[3], const unsigned block[3], void **args,
                                  size_t shmem, void *stream) {
  dim3 g = {grid[0], grid[1], grid[2]}, b = {block[0], block[1], block[2]};
  CU(cudaLaunchKernel(func, g, b, args, shmem, (cudaStream_t)stream));
  return SHOAL_OK;
}

#if SHOAL_HAVE_CUDA_KERNELS
/* gpu_kernels.cu: each returns a cudaError_t. */
int shoal_gpu_cuda_kernels_setup(const shmemx_device_state_t *st);
int shoal_gpu_cuda_barrier(void *stream);
int shoal_gpu_cuda_amo(void *target, int op, size_t size, uint64_t value, uint64_t cmp, void *scratch, void *stream);

static shoal_status_t cuda_kernels_setup(const shmemx_device_state_t *st) {
  CU((cudaError_t)shoal_gpu_cuda_kernels_setup(st));
  return SHOAL_OK;
}

static shoal_status_t cuda_barrier_on_stream(void *stream) {
  CU((cudaError_t)shoal_gpu_cuda_barrier(stream));
  return SHOAL_OK;
}

static shoal_status_t cuda_amo(void *target, int op, size_t size, uint64_t value, uint64_t cmp, void *scratch,
                               uint64_t *old, void *stream) {
  CU((cudaError_t)shoal_gpu_cuda_amo(target, op, size, value, cmp, scratch, stream));
  CU(cudaMemcpyAsync(old, scratch, sizeof *old, cudaMemcpyDeviceToHost, (cudaStream_t)stream));
  CU(cudaStreamSynchronize((cudaStream_t)stream));
  if (size == 4) *old = (uint32_t)*old;
  return SHOAL_OK;
}
#endif

const shoal_gpu_ops_t shoal_gpu_cuda_ops = {
  .size = sizeof(shoal_gpu_ops_t),
  .name = "cuda",
  .device_count = cuda_device_count,
  .device_by_busid = cuda_device_by_busid,
  .device_busid = cuda_device_busid,
  .set_device = cuda_set_device,
  .sm_count = cuda_sm_count,
  .mem_alloc = cuda_mem_alloc,
  .mem_free = cuda_mem_free,
  .ipc_get = cuda_ipc_get,
  .ipc_open = cuda_ipc_open,
  .ipc_close = cuda_ipc_close,
  .share_alloc = cuda_share_alloc,
  .share_open = cuda_share_open,
  .share_close = cuda_share_close,
  .share_free = cuda_share_free,
  .memcpy = cuda_memcpy,
  .memset = cuda_memset,
  .stream_create = cuda_stream_create,
  .stream_destroy = cuda_stream_destroy,
  .stream_sync = cuda_stream_sync,
  .event_create = cuda_event_create,
  .event_destroy = cuda_event_destroy,
  .event_record = cuda_event_record,
  .event_sync = cuda_event_sync,
  .event_elapsed = cuda_event_elapsed,
  .event_query = cuda_event_query,
  .device_sync = cuda_device_sync,
  .host_alloc = cuda_host_alloc,
  .host_free = cuda_host_free,
  .ptr_device = cuda_ptr_device,
  .host_register = cuda_host_register,
  .host_unregister = cuda_host_unregister,
  .occupancy = cuda_occupancy,
  .launch = cuda_launch,
#if SHOAL_HAVE_CUDA_KERNELS
  .kernels_setup = cuda_kernels_setup,
  .barrier_on_stream = cuda_barrier_on_stream,
  .amo = cuda_amo,
#endif
};
