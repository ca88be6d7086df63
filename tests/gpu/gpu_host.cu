/* gpu_host.cu - host-initiated RMA on device symmetric memory, and host and device heaps side by side:
 * shmem_putmem/getmem, typed p/g and iput/iget into a peer's device memory; shmemx_putmem_on_stream /
 * getmem_on_stream between the device and the host heap, with quiet_on_stream; shmem_calloc / shmem_realloc / free
 * on the device heap; shmem_ptr (NULL for device memory on the host) and shmem_addr_accessible. Run it once as is
 * and once with SHOAL_HEAP=device (then shmem_malloc itself returns device memory). */
#include "gpu_test.h"

#define N 100003 /* bytes: odd */
#define NI 513   /* ints */

static bool is_device(const void *p) {
  gpuPointerAttributes a;
  if (gpuPointerGetAttributes(&a, p) != gpuSuccess) {
    gpuGetLastError();
    return false;
  }
  return GPU_ATTR_IS_DEVICE(a);
}

int main(void) {
  t_start("gpu_host");
  int me = t_me, n = t_npes, next = (me + 1) % n, prev = (me + n - 1) % n;
  const char *hk = getenv("SHOAL_HEAP");
  bool dev_default = hk && !strcmp(hk, "device");
  unsigned char *d = (unsigned char *)t_dmalloc(N);                         /* device heap */
  unsigned char *h = (unsigned char *)shmem_malloc_with_hints(N, 0);      /* host heap, unless SHOAL_HEAP=device */
  unsigned char *m = (unsigned char *)shmem_malloc(N);
  unsigned char *src = (unsigned char *)malloc(N), *out = (unsigned char *)malloc(N);
  CHECK(is_device(d), "shmem_malloc_with_hints(SHMEMX_MALLOC_DEVICE) did not return device memory");
  CHECK(is_device(m) == dev_default, "shmem_malloc with SHOAL_HEAP=%s returned %s memory", hk ? hk : "(unset)",
        is_device(m) ? "device" : "host");
  CHECK(shmem_ptr(d, next) == NULL, "shmem_ptr of device memory on the host is not NULL");
  CHECK(shmem_addr_accessible(d, next), "device heap address not accessible");
  size_t total = 0, largest = 0;
  shmemx_device_heap_info(&total, &largest);
  CHECK(total > 0 && largest > 0 && largest <= total, "device heap info %zu / %zu", total, largest);

  /* 1. blocking host put into next's device memory, get back from prev's, all bytes */
  for (int i = 0; i < N; i++) src[i] = t_pat(me, (size_t)i, 1);
  GPU_OK(gpuMemset(d, T_POISON, N));
  GPU_OK(gpuDeviceSynchronize());
  shmem_barrier_all();
  shmem_putmem(d + 1, src, N - 2, next);
  shmem_barrier_all();
  memset(out, 0, N);
  shmem_getmem(out, d, N, me); /* our own device memory, through the runtime */
  int bad = (out[0] != T_POISON) + (out[N - 1] != T_POISON);
  for (int i = 0; i < N - 2; i++) bad += out[i + 1] != t_pat(prev, (size_t)i, 1);
  CHECK(!bad, "host putmem into device memory: %d wrong bytes", bad);
  memset(out, 0, N);
  shmem_getmem(out, d + 1, N - 2, next);
  bad = 0;
  for (int i = 0; i < N - 2; i++) bad += out[i] != t_pat(me, (size_t)i, 1);
  CHECK(!bad, "host getmem from a peer's device memory: %d wrong bytes", bad);

  /* 2. typed p/g and strided iput/iget on device ints */
  int *di = (int *)t_dmalloc(sizeof(int) * NI);
  GPU_OK(gpuMemset(di, 0xFF, sizeof(int) * NI));
  GPU_OK(gpuDeviceSynchronize());
  shmem_barrier_all();
  for (int i = 0; i < NI; i += 2) shmem_int_p(&di[i], me * 100000 + i, next);
  int vals[NI];
  for (int i = 0; i < NI; i++) vals[i] = -(me * 100000 + i);
  shmem_int_iput(&di[1], &vals[1], 2, 2, NI / 2, next); /* odd elements */
  shmem_barrier_all();
  bad = 0;
  for (int i = 0; i < NI; i++) {
    int v = shmem_int_g(&di[i], me), want = i % 2 ? -(prev * 100000 + i) : prev * 100000 + i;
    bad += v != want;
  }
  CHECK(!bad, "host int p / iput into device memory: %d wrong elements", bad);
  int back[NI / 2];
  shmem_int_iget(back, &di[0], 1, 2, NI / 2, next);
  bad = 0;
  for (int i = 0; i < NI / 2; i++) bad += back[i] != me * 100000 + 2 * i;
  CHECK(!bad, "host iget from device memory: %d wrong elements", bad);

  /* 3. stream-ordered copies: device heap -> next's host heap, next's device heap -> our host buffer */
  gpuStream_t s;
  GPU_OK(gpuStreamCreate(&s));
  unsigned char *hh = dev_default ? (unsigned char *)malloc(N) : h; /* a host-heap target when there is one */
  for (int i = 0; i < N; i++) src[i] = t_pat(me, (size_t)i, 2);
  shmem_putmem(d, src, N, me); /* our device buffer holds round 2 */
  if (!dev_default) memset(h, T_POISON, N);
  shmem_barrier_all();
  if (!dev_default) shmemx_putmem_on_stream(h, d, N, next, (void *)s);
  memset(out, 0, N);
  shmemx_getmem_on_stream(out, d, N, next, (void *)s);
  shmemx_quiet_on_stream((void *)s);
  GPU_OK(gpuStreamSynchronize(s));
  shmem_barrier_all();
  bad = 0;
  for (int i = 0; i < N; i++) bad += out[i] != t_pat(next, (size_t)i, 2);
  CHECK(!bad, "getmem_on_stream from a peer's device heap: %d wrong bytes", bad);
  if (!dev_default) {
    bad = 0;
    for (int i = 0; i < N; i++) bad += hh[i] != t_pat(prev, (size_t)i, 2);
    CHECK(!bad, "putmem_on_stream from device into a peer's host heap: %d wrong bytes", bad);
  } else {
    free(hh);
  }
  GPU_OK(gpuStreamDestroy(s));

  /* 4. calloc zeroes device memory; realloc keeps the contents; free */
  void *save = shmemx_gpu_available() ? shmem_malloc_with_hints(64, SHMEMX_MALLOC_DEVICE) : NULL;
  unsigned char *z = (unsigned char *)(dev_default ? shmem_calloc(N, 1) : NULL);
  if (dev_default) {
    CHECK(z && is_device(z), "shmem_calloc with SHOAL_HEAP=device: %p", (void *)z);
    memset(out, 1, N);
    shmem_getmem(out, z, N, me);
    bad = 0;
    for (int i = 0; i < N; i++) bad += out[i] != 0;
    CHECK(!bad, "shmem_calloc on the device heap: %d non-zero bytes", bad);
    shmem_free(z);
  }
  unsigned char *r = (unsigned char *)shmem_realloc(d, 4 * N); /* grows past `save`: moves */
  CHECK(r && is_device(r), "shmem_realloc of device memory: %p", (void *)r);
  memset(out, 0, N);
  shmem_getmem(out, r, N, me);
  bad = 0;
  for (int i = 0; i < N; i++) bad += out[i] != t_pat(me, (size_t)i, 2);
  CHECK(!bad, "shmem_realloc on the device heap lost %d bytes", bad);
  shmem_free(save);
  shmem_free(r);
  shmem_free(di);
  shmem_free(m);
  shmem_free(h);
  free(src);
  free(out);
  return t_finish(dev_default ? "gpu_host (SHOAL_HEAP=device)" : "gpu_host");
}
