/* gpu_kernels.cu - the kernels libshoal itself launches (the stream-ordered barrier and host-initiated atomics on
 * device memory), one source for both vendors:
 *   nvcc:  compiled into libshoal, registered with its own static CUDA runtime; gpu_cuda.c calls shoal_gpu_cuda_*.
 *   hipcc: built into libshoal_hip_kernels.so (with the HIP runtime as its dependency, so that libshoal itself needs
 *          no ROCm), which gpu_hip.c opens at run time next to libamdhip64 and calls shoal_gpu_hip_*.
 * They use the device API of <shoal/shmem_device.cuh> with this unit's copy of the device state. Each entry returns
 * the vendor's error code (cudaError_t / hipError_t) as an int. */
#define SHOAL_DEVICE_NO_AUTO_INIT /* kernels_setup fills this unit (with the runtime of its own vendor) */
#include <shoal/shmem_device.cuh>

#if defined(__HIPCC__)
#define SHOAL_K(name) shoal_gpu_hip_##name
#define SHOAL_K_EXPORT __attribute__((visibility("default"))) /* dlsym'd by gpu_hip.c */
#else
#define SHOAL_K(name) shoal_gpu_cuda_##name
#define SHOAL_K_EXPORT /* linked into libshoal, hidden */
#endif

extern "C" {
SHOAL_K_EXPORT int SHOAL_K(kernels_setup)(const shmemx_device_state_t *st);
SHOAL_K_EXPORT int SHOAL_K(barrier)(void *stream);
SHOAL_K_EXPORT int SHOAL_K(amo)(void *target, int op, size_t size, uint64_t value, uint64_t cmp, void *scratch,
                                void *stream);
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

/* Also loads both kernels now. With lazy loading (CUDA's default since 12.2) the first launch loads the module, and
 * loading may wait for the context's running kernels: the AMO kernel a far PE's request launches from the progress
 * thread would then wait for the application's kernel that spins until that very AMO lands (a deadlock seen on the
 * GPU machine: the requester's "did not answer for 30 s"). The vendors' advice: load such kernels before any may
 * spin. */
int SHOAL_K(kernels_setup)(const shmemx_device_state_t *st) {
  int e = (int)SHOAL_GPU_MEMCPY_TO_SYMBOL(shoal_dstate, st, sizeof *st);
  if (e != (int)SHOAL_GPU_API(Success)) return e;
  SHOAL_GPU_API(FuncAttributes) at;
  e = (int)SHOAL_GPU_API(FuncGetAttributes)(&at, (const void *)shoal_k_barrier);
  if (e == (int)SHOAL_GPU_API(Success)) e = (int)SHOAL_GPU_API(FuncGetAttributes)(&at, (const void *)shoal_k_amo);
  if (e == (int)SHOAL_GPU_API(Success)) shoal_dstate_ready = 1;
  return e;
}

int SHOAL_K(barrier)(void *stream) {
  shoal_k_barrier<<<1, 1, 0, (shoal_d_stream_t)stream>>>();
  return (int)SHOAL_GPU_API(GetLastError)();
}

int SHOAL_K(amo)(void *target, int op, size_t size, uint64_t value, uint64_t cmp, void *scratch, void *stream) {
  shoal_k_amo<<<1, 1, 0, (shoal_d_stream_t)stream>>>(target, op, (int)size, value, cmp, (uint64_t *)scratch);
  return (int)SHOAL_GPU_API(GetLastError)();
}
