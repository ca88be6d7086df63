/* gpu_units.cu - the device state reaches every translation unit without a per-unit call (issue 14). This unit's
 * main calls only shmem_init; gpu_units_b.cu, which never calls shmemx_init_device_state,
 * runs a ring put (shmem_int_put, shmem_int_p) and reads shmem_my_pe / shmem_n_pes in its kernels: every value is
 * checked. `gpu_units noinit` launches a kernel of gpu_units_c.cu, a unit built with SHOAL_DEVICE_NO_AUTO_INIT that
 * never copied its state: the kernel must stop with the message naming shmemx_init_device_state (scripts/gpu-tests.sh
 * checks it), not compute with zeroed state. */
#include "gpu_test.h"

extern int units_b_ring(int *dst, const int *src, size_t n, int *ids); /* gpu_units_b.cu: 0 or a cudaError_t */
extern int units_c_query(int *ids);                                   /* gpu_units_c.cu */

int main(int argc, char **argv) {
  bool noinit = argc > 1 && !strcmp(argv[1], "noinit");
  shmem_init();
  t_me = shmem_my_pe();
  t_npes = shmem_n_pes();
  if (!shmemx_gpu_available()) {
    if (t_me == 0) printf("gpu_units: SKIP: no GPU (host-only run)\n");
    fflush(stdout);
    shmem_finalize();
    return 77;
  }
  int *ids = NULL;
  GPU_OK(gpuMalloc((void **)&ids, 4 * sizeof(int)));
  GPU_OK(gpuMemset(ids, 0xff, 4 * sizeof(int)));
  if (noinit) {
    int e = units_c_query(ids); /* must not return normally with values */
    int h[4];
    if (!e) e = (int)gpuMemcpy(h, ids, sizeof h, gpuMemcpyDefault);
    fprintf(stderr, "PE %d: gpu_units noinit: the kernel %s (%s)\n", t_me, e ? "failed" : "ran to its end",
            e ? gpuGetErrorString((decltype(gpuSuccess))e) : "wrong: it should have stopped");
    shmem_global_exit(e ? 3 : 1);
  }
  const size_t n = 4096;
  int *src = (int *)t_dmalloc(n * sizeof(int)), *dst = (int *)t_dmalloc((n + 1) * sizeof(int));
  int *h = (int *)malloc((n + 1) * sizeof(int));
  for (size_t i = 0; i < n; i++) h[i] = t_me * 100000 + (int)i;
  GPU_OK(gpuMemcpy(src, h, n * sizeof(int), gpuMemcpyDefault));
  GPU_OK(gpuMemset(dst, T_POISON, (n + 1) * sizeof(int)));
  GPU_OK(gpuDeviceSynchronize());
  shmem_barrier_all();
  GPU_OK((decltype(gpuSuccess))units_b_ring(dst, src, n, ids));
  shmem_barrier_all();
  int got[4];
  GPU_OK(gpuMemcpy(got, ids, sizeof got, gpuMemcpyDefault));
  CHECK(got[0] == t_me, "device shmem_my_pe() in the other unit: %d, expected %d", got[0], t_me);
  CHECK(got[1] == t_npes, "device shmem_n_pes() in the other unit: %d, expected %d", got[1], t_npes);
  GPU_OK(gpuMemcpy(h, dst, (n + 1) * sizeof(int), gpuMemcpyDefault));
  int prev = (t_me + t_npes - 1) % t_npes, wrong = 0;
  for (size_t i = 0; i < n; i++) wrong += h[i] != prev * 100000 + (int)i;
  CHECK(wrong == 0, "ring put from the other unit: %d wrong of %zu (dst[0] = %d, expected %d)", wrong, n, h[0],
        prev * 100000);
  CHECK(h[n] == -prev - 1, "shmem_int_p from the other unit: %d, expected %d", h[n], -prev - 1);
  free(h);
  return t_finish("gpu_units");
}
