/* gpu_kernels.cu - the kernels libshoal itself launches on CUDA (compiled by nvcc into libshoal, registered with its
 * own CUDA runtime): the stream-ordered barrier and host-initiated atomics on device memory. They use the device
 * API of <shoal/shmem_device.cuh> with this unit's copy of the device state. Each entry returns a cudaError_t. */
#define SHOAL_DEVICE_NO_AUTO_INIT /* shoal_gpu_cuda_kernels_setup fills this unit (with its own CUDA runtime) */
#include <shoal/shmem_device.cuh>

extern "C" {
int shoal_gpu_cuda_kernels_setup(const shmemx_device_state_t *st);
int shoal_gpu_cuda_barrier(void *stream);
int shoal_gpu_cuda_amo(void *target, int op, size_t size, uint64_t value, uint64_t cmp, void *scratch, void *stream);
}

static __global__ void shoal_k_barrier() {
  __threadfence_system();
  shoal_d_pe_barrier();
}

/* op on target (already the peer's address in this process); the old value goes to *out. */
static __global__ void shoal_k_amo(void *target, int op, int size, uint64_t value, uint64_t cmp, uint64_t *out) {
  if (size == 4)
    *out = shoal_d_amo_word<unsigned>((unsigned *)target, op, (unsigned)value, (unsigned)cmp);
  else
    *out = shoal_d_amo_word<unsigned long long>((unsigned long long *)target, op, value, cmp);
}

int shoal_gpu_cuda_kernels_setup(const shmemx_device_state_t *st) {
  cudaError_t e = cudaMemcpyToSymbol(shoal_dstate, st, sizeof *st, 0, cudaMemcpyHostToDevice);
  if (e == cudaSuccess) shoal_dstate_ready = 1;
  return (int)e;
}

int shoal_gpu_cuda_barrier(void *stream) {
  shoal_k_barrier<<<1, 1, 0, (cudaStream_t)stream>>>();
  return (int)cudaGetLastError();
}

int shoal_gpu_cuda_amo(void *target, int op, size_t size, uint64_t value, uint64_t cmp, void *scratch, void *stream) {
  shoal_k_amo<<<1, 1, 0, (cudaStream_t)stream>>>(target, op, (int)size, value, cmp, (uint64_t *)scratch);
  return (int)cudaGetLastError();
}
