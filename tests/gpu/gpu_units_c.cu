/* gpu_units_c.cu - a unit of gpu_units that opts out of the automatic fill and never copies its state: its kernels
 * must stop with a message (shoal_d_unset), never run with a zeroed state. */
#define SHOAL_DEVICE_NO_AUTO_INIT
#include "gpu_test.h" /* <shoal/shmem_device.cuh> and the vendor names */

__global__ void units_c_kernel(int *ids) {
  ids[0] = shmem_my_pe();
  ids[1] = shmem_n_pes();
}

int units_c_query(int *ids) {
  units_c_kernel<<<1, 1>>>(ids);
  auto e = gpuGetLastError();
  if (e == gpuSuccess) e = gpuDeviceSynchronize();
  return (int)e;
}
