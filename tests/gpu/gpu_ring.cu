/* gpu_ring.cu - device-initiated put and get in a ring (PE me -> me+1) at thread, warp and block scope, blocking and
 * nbi, odd sizes and relative alignments: every byte of the destination and a guard zone around it are checked.
 *   gpu_ring [quick]   quick: 3 of the 7 sizes (1, 4099, 1 MiB + 3 bytes) and 2 of the 5 offset pairs, 72
 *   configurations of 420: for PEs that time-slice one GPU (no MPS) with every PE its own node, where each
 *   configuration waits for the other PE's slice (about 0.35 s on an H100). */
#include "gpu_test.h"

enum { SC_THREAD, SC_WARP, SC_BLOCK };

__global__ void fill(unsigned char *p, size_t n, int pe, int r) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    p[i] = t_pat(pe, i, r);
}

/* [0, n) is split among units (threads, warps or blocks of the grid); each moves its part to / from PE peer. */
__global__ void ring(int scope, int put, int nbi, unsigned char *dst, const unsigned char *src, size_t n, int peer) {
  size_t units, u;
  unsigned bt = blockDim.x;
  if (scope == SC_THREAD) {
    units = (size_t)gridDim.x * bt;
    u = (size_t)blockIdx.x * bt + threadIdx.x;
  } else if (scope == SC_WARP) {
    unsigned wpb = bt / warpSize;
    units = (size_t)gridDim.x * wpb;
    u = (size_t)blockIdx.x * wpb + threadIdx.x / warpSize;
  } else {
    units = gridDim.x;
    u = blockIdx.x;
  }
  size_t lo = n * u / units, len = n * (u + 1) / units - lo;
  unsigned char *d = dst + lo;
  const unsigned char *s = src + lo;
  if (put) {
    if (scope == SC_THREAD) nbi ? shmem_putmem_nbi(d, s, len, peer) : shmem_putmem(d, s, len, peer);
    if (scope == SC_WARP) nbi ? shmemx_putmem_nbi_warp(d, s, len, peer) : shmemx_putmem_warp(d, s, len, peer);
    if (scope == SC_BLOCK) nbi ? shmemx_putmem_nbi_block(d, s, len, peer) : shmemx_putmem_block(d, s, len, peer);
  } else {
    if (scope == SC_THREAD) nbi ? shmem_getmem_nbi(d, s, len, peer) : shmem_getmem(d, s, len, peer);
    if (scope == SC_WARP) nbi ? shmemx_getmem_nbi_warp(d, s, len, peer) : shmemx_getmem_warp(d, s, len, peer);
    if (scope == SC_BLOCK) nbi ? shmemx_getmem_nbi_block(d, s, len, peer) : shmemx_getmem_block(d, s, len, peer);
  }
  if (nbi) shmem_quiet();
}

int main(int argc, char **argv) {
  const int quick = argc > 1 && !strcmp(argv[1], "quick");
  t_start("gpu_ring");
  static const size_t sizes[] = {1, 7, 64, 1000, 4099, 65537, (1u << 20) + 3};
  static const size_t offs[][2] = {{0, 0}, {3, 3}, {1, 6}, {8, 0}, {4, 12}}; /* {dst, src} byte offsets */
  const size_t max = (1u << 20) + 3 + 16 + 64;
  unsigned char *src = (unsigned char *)t_dmalloc(max), *dst = (unsigned char *)t_dmalloc(max);
  unsigned char *host = (unsigned char *)malloc(max);
  int next = (t_me + 1) % t_npes, prev = (t_me + t_npes - 1) % t_npes, r = 0, configs = 0;
  for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
    for (size_t oi = 0; oi < sizeof offs / sizeof offs[0]; oi++) {
      if (quick && !((si == 0 || si == 4 || si == 6) && (oi == 0 || oi == 2))) continue;
      for (int scope = SC_THREAD; scope <= SC_BLOCK; scope++)
        for (int put = 0; put < 2; put++)
          for (int nbi = 0; nbi < 2; nbi++, r = (r + 1) % 16, configs++) {
            size_t n = sizes[si], od = offs[oi][0], os = offs[oi][1];
            LAUNCH_SYNC(fill<<<64, 256>>>(src + os, n, t_me, r));
            GPU_OK(gpuMemset(dst, T_POISON, max));
            GPU_OK(gpuDeviceSynchronize());
            shmem_barrier_all();
            /* put: our src goes to next's dst; get: next's src comes to our dst. Either way dst holds a neighbour's. */
            LAUNCH_SYNC(ring<<<3, 128>>>(scope, put, nbi, dst + od, src + os, n, next));
            shmem_barrier_all();
            int owner = put ? prev : next;
            GPU_OK(gpuMemcpy(host, dst, od + n + 64, gpuMemcpyDefault));
            int bad = 0;
            for (size_t i = 0; i < od; i++) bad += host[i] != T_POISON;
            for (size_t i = 0; i < n; i++) bad += host[od + i] != t_pat(owner, i, r);
            for (size_t i = od + n; i < od + n + 64; i++) bad += host[i] != T_POISON;
            CHECK(!bad, "%s%s scope %d, %zu bytes, offsets dst %zu src %zu: %d wrong bytes", put ? "put" : "get",
                  nbi ? "_nbi" : "", scope, n, od, os, bad);
          }
    }
  if (t_me == 0) printf("gpu_ring: %d configurations\n", configs);
  free(host);
  shmem_free(dst);
  shmem_free(src);
  return t_finish("gpu_ring");
}
