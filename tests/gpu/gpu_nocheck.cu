/* gpu_nocheck.cu - a user's device-API program that checks nothing (issue 32, item 4): no shmemx_gpu_available(), no
 * CUDA error checks, exit status 0 whatever it got. Each PE puts its number to the next PE from a kernel and prints
 * what it received:
 *   gpu_nocheck: PE <me>: got <value> (expected <previous PE>)
 * With a GPU the values are right. Without one (or without a device heap) shmem_init must end the job with one line
 * naming the cause, before the program can print a wrong value and exit 0 (tests/scripts/check_device_api.py). */
#include <shoal/shmem_device.cuh>
#include <stdio.h>

__global__ void ring(int *dst) {
  int me = shmem_my_pe(), n = shmem_n_pes();
  shmem_int_p(dst, me, (me + 1) % n);
}

int main(void) {
  shmem_init();
  int me = shmem_my_pe(), n = shmem_n_pes(), got = -1;
  int *dst = (int *)shmem_malloc_with_hints(sizeof(int), SHMEMX_MALLOC_DEVICE);
  ring<<<1, 1>>>(dst);
  cudaDeviceSynchronize();
  shmem_barrier_all();
  cudaMemcpy(&got, dst, sizeof got, cudaMemcpyDefault);
  printf("gpu_nocheck: PE %d: got %d (expected %d)\n", me, got, (me + n - 1) % n);
  shmem_finalize();
  return 0;
}
