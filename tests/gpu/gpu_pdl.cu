/* gpu_pdl.cu - programmatic dependent launch only where the loaded code has its wait (shoal_gl::pdl_ok). Built twice:
 * gpu_pdl_sm90 (sm_90 code: PDL expected on an sm_90+ GPU) and gpu_pdl_ptx80 (compute_80 PTX alone, JIT-compiled on
 * an H100/H200: no griddepcontrol.wait in it, so PDL must be refused there, or a collective kernel could start before
 * the previous kernel's writes are visible). Exit 0 when pdl_ok agrees, 1 when not, 77 without a GPU. */
#include <stdio.h>

#include "coll_gpu_launch.h"

__global__ void probe_kernel(int *p) {
  if (p) *p = 1;
}

int main(void) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1) {
    printf("gpu_pdl: SKIP: no GPU\n");
    return 77;
  }
  const int cc = shoal_gl::cc_major();
  cudaFuncAttributes at;
  const cudaError_t e = cudaFuncGetAttributes(&at, (const void *)probe_kernel);
  if (e != cudaSuccess) {
    printf("gpu_pdl: FAIL: cudaFuncGetAttributes: %s\n", cudaGetErrorString(e));
    return 1;
  }
  const bool want = cc >= 9 && SHOAL_PDL_EXPECT_CODE >= 90;
  const bool got = shoal_gl::pdl_ok((const void *)probe_kernel);
  printf("gpu_pdl: device cc %d, code ptx %d binary %d: pdl_ok %d (want %d): %s\n", cc, at.ptxVersion,
         at.binaryVersion, got, want, got == want ? "OK" : "FAIL");
  return got == want ? 0 : 1;
}
