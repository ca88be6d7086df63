/* gpu_typed.cu - typed device RMA for several types: p and g element by element, put/get (blocking, nbi, warp and
 * block scope) of whole arrays, to and from the next PE. Every element is checked against its expected value. */
#include "gpu_test.h"

#define NEL 1000 /* elements per array: not a multiple of the warp or block size */

template <typename T> __host__ __device__ T val(int pe, int i, int r) { return (T)(pe * 37 + i * 3 + r + 1); }

/* Mode 0: p (each thread its elements) then g back of the same; 1: put/get of the whole array by thread 0; 2: nbi;
 * 3: warp 0 (put_warp/get_warp); 4: the block (put_block/get_block). After it, got[] holds what was read from
 * peer's dst, and peer's dst holds our src. */
#define KERNEL(T, N)                                                                                                  \
  __global__ void k_##N(int mode, T *dst, const T *src, T *got, int peer, int r) {                                    \
    int me = shmem_my_pe();                                                                                            \
    if (mode == 0) {                                                                                                   \
      for (int i = threadIdx.x; i < NEL; i += blockDim.x) shmem_##N##_p(&dst[i], val<T>(me, i, r), peer);              \
      shmem_quiet();                                                                                                   \
      __syncthreads();                                                                                                 \
      for (int i = threadIdx.x; i < NEL; i += blockDim.x) got[i] = shmem_##N##_g(&dst[i], peer);                       \
    } else if (mode == 1 || mode == 2) {                                                                               \
      if (threadIdx.x == 0) {                                                                                          \
        if (mode == 1) shmem_##N##_put(dst, src, NEL, peer); else shmem_##N##_put_nbi(dst, src, NEL, peer);            \
        shmem_quiet();                                                                                                 \
        if (mode == 1) shmem_##N##_get(got, dst, NEL, peer); else shmem_##N##_get_nbi(got, dst, NEL, peer);            \
        shmem_quiet();                                                                                                 \
      }                                                                                                                \
    } else if (mode == 3) {                                                                                            \
      if (threadIdx.x < warpSize) {                                                                                    \
        shmemx_##N##_put_warp(dst, src, NEL, peer);                                                                    \
        shmem_quiet();                                                                                                 \
        shmemx_##N##_get_warp(got, dst, NEL, peer);                                                                    \
      }                                                                                                                \
    } else {                                                                                                           \
      shmemx_##N##_put_block(dst, src, NEL, peer);                                                                     \
      shmem_quiet();                                                                                                   \
      shmemx_##N##_get_block(got, dst, NEL, peer);                                                                     \
    }                                                                                                                  \
  }                                                                                                                    \
  __global__ void f_##N(T *src, T *got, int me, int r) {                                                               \
    for (int i = threadIdx.x; i < NEL; i += blockDim.x) {                                                              \
      src[i] = val<T>(me, i, r);                                                                                       \
      got[i] = (T)-1;                                                                                                  \
    }                                                                                                                  \
  }
#define TYPES(X) X(int, int) X(long, long) X(double, double) X(float, float) X(short, short) X(char, char)             \
  X(uint64_t, uint64) X(unsigned char, uchar) X(size_t, size) X(int16_t, int16)
TYPES(KERNEL)

template <typename T>
static void run(const char *name, void (*k)(int, T *, const T *, T *, int, int), void (*f)(T *, T *, int, int)) {
  T *src = (T *)t_dmalloc(NEL * sizeof(T)), *dst = (T *)t_dmalloc(NEL * sizeof(T)), *got;
  GPU_OK(gpuMalloc((void **)&got, NEL * sizeof(T)));
  T host[NEL], hgot[NEL];
  int next = (t_me + 1) % t_npes, prev = (t_me + t_npes - 1) % t_npes;
  for (int mode = 0; mode <= 4; mode++) {
    int r = mode + 1;
    LAUNCH_SYNC(f<<<1, 128>>>(src, got, t_me, r));
    GPU_OK(gpuMemset(dst, T_POISON, NEL * sizeof(T)));
    GPU_OK(gpuDeviceSynchronize());
    shmem_barrier_all();
    LAUNCH_SYNC(k<<<1, 128>>>(mode, dst, src, got, next, r));
    shmem_barrier_all();
    GPU_OK(gpuMemcpy(host, dst, sizeof host, gpuMemcpyDefault));
    GPU_OK(gpuMemcpy(hgot, got, sizeof hgot, gpuMemcpyDefault));
    int bad = 0, badgot = 0;
    for (int i = 0; i < NEL; i++) {
      bad += host[i] != val<T>(prev, i, r);  /* prev wrote into ours */
      badgot += hgot[i] != val<T>(t_me, i, r); /* we read back what we wrote into next's */
    }
    CHECK(!bad, "%s mode %d: %d wrong elements in dst (first: %g, expected %g)", name, mode, bad, (double)host[0],
          (double)val<T>(prev, 0, r));
    CHECK(!badgot, "%s mode %d: %d wrong elements read back", name, mode, badgot);
  }
  GPU_OK(gpuFree(got));
  shmem_free(dst);
  shmem_free(src);
}

int main(void) {
  t_start("gpu_typed");
#define RUN(T, N) run<T>(#N, k_##N, f_##N);
  TYPES(RUN)
  return t_finish("gpu_typed");
}
