/* gpu_bad.cu - bad input around the device heap and the device API. Without arguments (must pass): device heap
 * exhaustion returns NULL on every PE and the heap stays usable; size 0 returns NULL; a grid too large to be
 * co-resident is refused by shmemx_collective_launch; shmemx_device_state_get rejects a wrong length; zero-length
 * device RMA is a no-op. With an argument (must fail with a one-line error): "badfree" frees an address inside a
 * device allocation, "badpe" puts to PE n_pes, "mixedcoll" calls shmem_fcollectmem with dest on the device heap and source on the host heap. The heap is 64 MiB here (SHOAL_DEVICE_SYMMETRIC_SIZE). */
#include "gpu_test.h"

#define MiB ((size_t)1 << 20)

__global__ void noop(int *slot) { shmem_barrier_all(); }
__global__ void zero_len(char *p, int *flag) {
  int next = (shmem_my_pe() + 1) % shmem_n_pes();
  shmem_putmem(p, p, 0, next);
  shmem_getmem(p, p, 0, next);
  shmemx_putmem_block(p, p, 0, next);
  *flag = 1;
}

int main(int argc, char **argv) {
  setenv("SHOAL_DEVICE_SYMMETRIC_SIZE", "64M", 1);
  t_start("gpu_bad");
  if (argc > 1 && !strcmp(argv[1], "badfree")) {
    char *p = (char *)t_dmalloc(4096);
    shmem_free(p + 64); /* fatal: not the start of a live allocation */
    return 0;
  }
  if (argc > 1 && !strcmp(argv[1], "mixedcoll")) {
    char *d = (char *)t_dmalloc(4096);
    char *h = (char *)shmem_malloc(4096);
    shmem_fcollectmem(SHMEM_TEAM_WORLD, d, h, 8); /* fatal: dest on the device heap, source on the host heap */
    return 0;
  }
  if (argc > 1 && !strcmp(argv[1], "badpe")) {
    char *p = (char *)t_dmalloc(4096), c = 1;
    shmem_putmem(p, &c, 1, t_npes); /* fatal: pe out of range */
    return 0;
  }
  size_t total = 0, largest = 0;
  shmemx_device_heap_info(&total, &largest);
  CHECK(total == 64 * MiB, "device heap of %zu bytes, expected 64 MiB", total);
  CHECK(shmem_malloc_with_hints(0, SHMEMX_MALLOC_DEVICE) == NULL, "size 0 gave memory");
  CHECK(shmem_malloc_with_hints(65 * MiB, SHMEMX_MALLOC_DEVICE) == NULL, "65 MiB from a 64 MiB heap");
  CHECK(shmem_malloc_with_hints(SIZE_MAX / 2, SHMEMX_MALLOC_DEVICE) == NULL, "SIZE_MAX / 2 bytes");
  void *a = shmem_malloc_with_hints(32 * MiB, SHMEMX_MALLOC_DEVICE);
  CHECK(a != NULL, "32 MiB from an empty 64 MiB heap failed");
  CHECK(shmem_malloc_with_hints(40 * MiB, SHMEMX_MALLOC_DEVICE) == NULL, "40 MiB with 32 MiB free");
  void *b = shmem_malloc_with_hints(16 * MiB, SHMEMX_MALLOC_DEVICE);
  CHECK(b != NULL, "16 MiB with 32 MiB free failed");
  shmem_free(a);
  shmem_free(b);
  void *c = shmem_malloc_with_hints(60 * MiB, SHMEMX_MALLOC_DEVICE);
  CHECK(c != NULL, "60 MiB after freeing everything failed (the heap did not coalesce)");
  shmem_free(c);

  shmemx_device_state_t st;
  CHECK(shmemx_device_state_get(&st, sizeof st - 1) == -1, "a wrong length was accepted");
  CHECK(shmemx_device_state_get(&st, sizeof st) == 0 && st.my_pe == t_me && st.n_pes == t_npes,
        "device state: PE %d of %d", st.my_pe, st.n_pes);

  int *flag;
  GPU_OK(gpuMalloc((void **)&flag, sizeof(int)));
  GPU_OK(gpuMemset(flag, 0, sizeof(int)));
  char *p = (char *)t_dmalloc(64);
  LAUNCH_SYNC(zero_len<<<1, 64>>>(p, flag));
  int f = 0;
  GPU_OK(gpuMemcpy(&f, flag, sizeof f, gpuMemcpyDefault));
  CHECK(f == 1, "zero-length device RMA kernel did not finish");

  /* a grid no GPU can hold at once: refused before launch, on every PE alike */
  void *args[] = {&flag};
  if (t_me == 0) fprintf(stderr, "gpu_bad: a refusal message is expected next:\n");
  int rc = shmemx_collective_launch((const void *)noop, dim3(1u << 20), dim3(1024), args, 0, 0);
  CHECK(rc == -1, "a grid of 2^20 blocks of 1024 threads was accepted");
  GPU_OK(gpuFree(flag));
  shmem_free(p);
  return t_finish("gpu_bad");
}
