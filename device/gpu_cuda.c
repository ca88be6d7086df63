/* gpu_cuda.c - the CUDA backend: plain C on the CUDA runtime API (libcudart_static, so that libshoal loads on a
 * machine without the driver: cudaGetDeviceCount then fails and the PE runs host-only). Every failing call is
 * reported once, here, with the call, the error string and the PE (shoal_warn prefixes the PE). The kernels the
 * runtime itself launches (stream barrier, host-side AMOs) are in gpu_kernels.cu, compiled by nvcc. */
#include "gpu.h"

#include <ctype.h>
#include <cuda_runtime_api.h>

static shoal_status_t cuda_fail(const char *call, cudaError_t e) {
  shoal_warn("%s: %s (%s)", call, cudaGetErrorString(e), cudaGetErrorName(e));
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
    SHOAL_DEBUG(SHOAL_SUB_GPU, "cuda: cudaGetDeviceCount: %s: no usable GPU", cudaGetErrorString(e));
    cudaGetLastError();
    *n = 0;
  }
  return SHOAL_OK;
}

/* A bus id hwloc sees but CUDA does not (CUDA_VISIBLE_DEVICES) is expected: reported at debug level only. */
static shoal_status_t cuda_device_by_busid(const char *busid, int *dev) {
  cudaError_t e = cudaDeviceGetByPCIBusId(dev, busid);
  if (e != cudaSuccess) {
    SHOAL_DEBUG(SHOAL_SUB_GPU, "cuda: cudaDeviceGetByPCIBusId(%s): %s", busid, cudaGetErrorString(e));
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

static shoal_status_t cuda_event_elapsed(void *start, void *end, float *ms) {
  CU(cudaEventElapsedTime(ms, (cudaEvent_t)start, (cudaEvent_t)end));
  return SHOAL_OK;
}

static shoal_status_t cuda_device_sync(void) {
  CU(cudaDeviceSynchronize());
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
  .device_sync = cuda_device_sync,
  .occupancy = cuda_occupancy,
  .launch = cuda_launch,
#if SHOAL_HAVE_CUDA_KERNELS
  .kernels_setup = cuda_kernels_setup,
  .barrier_on_stream = cuda_barrier_on_stream,
  .amo = cuda_amo,
#endif
};
