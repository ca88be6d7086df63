/* gpu_user.cu - what a CUDA user writes against an installed Shoal (issue 14): one translation unit, no
 * per-unit setup call, the device API and SHMEM_TEAM_WORLD in a kernel. Built by check_gpu_toolchain.py with
 * oshnvcc, with SHOAL_CC=nvcc oshcc, with nvcc $(pkg-config --cflags --libs shoal-cuda) and with CMake's
 * shoal::device; it runs without a GPU too (prints SKIP and exits 77) and, with one, checks a ring of shmem_int_p. */
#define SHOAL_DEVICE_OPTIONAL /* it checks shmemx_gpu_available(): shmem_init must not end it without a GPU */
#include <shoal/shmem_device.cuh>
#include <stdio.h>

__global__ void ring(int *dst, int *ranks) {
  int me = shmem_team_my_pe(SHMEM_TEAM_WORLD), n = shmem_team_n_pes(SHMEM_TEAM_WORLD);
  shmem_int_p(dst, me, (me + 1) % n);
  ranks[0] = shmem_my_pe();
}

int main(void) {
  shmem_init();
  int me = shmem_my_pe(), n = shmem_n_pes();
  if (!shmemx_gpu_available()) {
    printf("gpu_user: SKIP: no GPU\n");
    shmem_finalize();
    return 77;
  }
  int *dst = (int *)shmem_malloc_with_hints(sizeof(int), SHMEMX_MALLOC_DEVICE), *ranks, got[2];
  cudaMalloc((void **)&ranks, sizeof(int));
  ring<<<1, 1>>>(dst, ranks);
  cudaDeviceSynchronize();
  shmem_barrier_all();
  cudaMemcpy(&got[0], dst, sizeof(int), cudaMemcpyDefault);
  cudaMemcpy(&got[1], ranks, sizeof(int), cudaMemcpyDefault);
  int ok = got[0] == (me + n - 1) % n && got[1] == me;
  printf("gpu_user: PE %d: %s (got %d from the previous PE, device shmem_my_pe %d)\n", me, ok ? "PASS" : "FAIL", got[0],
         got[1]);
  shmem_finalize();
  return ok ? 0 : 1;
}
