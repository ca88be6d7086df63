/* gpu_units_b.cu - a second translation unit of gpu_units that includes the device header and never calls
 * shmemx_init_device_state(): its __constant__ state must come from shmem_init all the same. */
#include "gpu_test.h" /* <shoal/shmem_device.cuh> and the vendor names */

__global__ void units_b_kernel(int *dst, const int *src, size_t n, int *ids) {
  int me = shmem_my_pe(), npes = shmem_n_pes(), next = (me + 1) % npes;
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    ids[0] = me;
    ids[1] = npes;
    shmem_int_p(dst + n, -me - 1, next);
  }
  size_t per = (n + gridDim.x - 1) / gridDim.x, lo = blockIdx.x * per, len = lo < n ? (n - lo < per ? n - lo : per) : 0;
  size_t tlo = lo + len * threadIdx.x / blockDim.x, thi = lo + len * (threadIdx.x + 1) / blockDim.x;
  shmem_int_put(dst + tlo, src + tlo, thi - tlo, next);
  shmem_quiet();
}

int units_b_ring(int *dst, const int *src, size_t n, int *ids) {
  units_b_kernel<<<4, 128>>>(dst, src, n, ids);
  auto e = gpuGetLastError();
  if (e == gpuSuccess) e = gpuDeviceSynchronize();
  return (int)e;
}
