/* ring.cu - an NVSHMEM ring program ported to Shoal (docs/porting.md, "From NVSHMEM"). Each line that changed
 * keeps the NVSHMEM original in a comment. Every PE sends a block of N ints to the next PE from a kernel (one block,
 * put-with-signal at block scope), the receiver's kernel waits for the signal, then an on-stream fcollect gathers
 * everyone's first received value and a stream barrier ends the round; every value is checked on the host.
 *   oshnvcc -O2 examples/porting/ring.cu -o ring && oshrun -n 4 ./ring
 * Prints "ring: PASS: R rounds of N ints on P PEs" on PE 0 (exit 0), "ring: SKIP: no GPU" without a GPU (exit 77),
 * and "ring: FAIL ..." lines otherwise (exit 1). */
/* It checks shmemx_gpu_available() and skips without a GPU; a program without such a check leaves this out and
 * shmem_init stops it there with one line naming the cause (NVSHMEM: nvshmem_init fails). */
#define SHOAL_DEVICE_OPTIONAL
#include <shoal/shmem_device.cuh> /* NVSHMEM: #include <nvshmem.h> and <nvshmemx.h> */
#include <stdio.h>
#include <stdlib.h>

#define CUDA_OK(call)                                                                                                 \
  do {                                                                                                                 \
    cudaError_t e_ = (call);                                                                                           \
    if (e_ != cudaSuccess) {                                                                                           \
      fprintf(stderr, "ring: PE %d: %s: %s\n", shmem_my_pe(), #call, cudaGetErrorString(e_));                         \
      shmem_global_exit(2); /* NVSHMEM: nvshmem_global_exit(2) */                                                      \
    }                                                                                                                  \
  } while (0)

enum { N = 5000, ROUNDS = 3 };

static __host__ __device__ int value(int pe, int round, int i) { return pe * 1000000 + round * 10000 + i; }

__global__ void fill(int *src, int me, int round) {
  for (int i = threadIdx.x; i < N; i += blockDim.x) src[i] = value(me, round, i);
}

/* One block: the whole block sends src to the next PE, then waits until the previous PE's block arrived here. */
__global__ void ring(int *dst, const int *src, uint64_t *sig, uint64_t round) {
  int me = shmem_my_pe(), npes = shmem_n_pes(); /* NVSHMEM: nvshmem_my_pe(), nvshmem_n_pes() */
  int next = (me + 1) % npes;
  /* NVSHMEM: nvshmemx_int_put_signal_block(dst, src, N, sig, round, NVSHMEM_SIGNAL_SET, next); */
  shmemx_putmem_signal_block(dst, src, N * sizeof(int), sig, round, SHMEM_SIGNAL_SET, next);
  if (threadIdx.x == 0) shmem_signal_wait_until(sig, SHMEM_CMP_GE, round); /* NVSHMEM: nvshmem_signal_wait_until,
                                                                             NVSHMEM_CMP_GE */
  __syncthreads();
}

int main(void) {
  shmem_init(); /* NVSHMEM: nvshmem_init(); cudaSetDevice(nvshmem_team_my_pe(NVSHMEMX_TEAM_NODE)) (Shoal sets the
                 * PE's GPU itself: shmemx_gpu_device()) */
  int me = shmem_my_pe(), npes = shmem_n_pes();
  if (!shmemx_gpu_available()) {
    if (me == 0) printf("ring: SKIP: no GPU\n");
    shmem_finalize();
    return 77;
  }
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreate(&stream));
  /* NVSHMEM: nvshmem_malloc(bytes) (GPU memory); Shoal: the device heap by hint (or SHOAL_HEAP=device) */
  int *src = (int *)shmem_malloc_with_hints(N * sizeof(int), SHMEMX_MALLOC_DEVICE);
  int *dst = (int *)shmem_malloc_with_hints(N * sizeof(int), SHMEMX_MALLOC_DEVICE);
  int *firsts = (int *)shmem_malloc_with_hints(npes * sizeof(int), SHMEMX_MALLOC_DEVICE);
  uint64_t *sig = (uint64_t *)shmem_malloc_with_hints(sizeof(uint64_t), SHMEMX_MALLOC_DEVICE); /* NVSHMEM: calloc */
  int *host = (int *)malloc(N * sizeof(int) > npes * sizeof(int) ? N * sizeof(int) : npes * sizeof(int));
  if (!src || !dst || !firsts || !sig || !host) {
    fprintf(stderr, "ring: PE %d: out of device symmetric memory\n", me);
    shmem_global_exit(2);
  }
  CUDA_OK(cudaMemset(sig, 0, sizeof(uint64_t)));
  CUDA_OK(cudaDeviceSynchronize());
  shmem_barrier_all();
  int prev = (me + npes - 1) % npes, wrong = 0;
  for (int r = 1; r <= ROUNDS; r++) {
    fill<<<1, 256, 0, stream>>>(src, me, r);
    shmemx_barrier_all_on_stream(stream); /* NVSHMEM: nvshmemx_barrier_all_on_stream(stream) */
    ring<<<1, 256, 0, stream>>>(dst, src, sig, (uint64_t)r);
    /* NVSHMEM: nvshmemx_int_fcollect_on_stream(NVSHMEM_TEAM_WORLD, firsts, dst, 1, stream) */
    shmemx_fcollectmem_on_stream(SHMEM_TEAM_WORLD, firsts, dst, sizeof(int), stream);
    CUDA_OK(cudaGetLastError());
    CUDA_OK(cudaMemcpyAsync(host, dst, N * sizeof(int), cudaMemcpyDeviceToHost, stream));
    CUDA_OK(cudaStreamSynchronize(stream));
    for (int i = 0; i < N; i++)
      if (host[i] != value(prev, r, i) && wrong++ < 5)
        fprintf(stderr, "ring: FAIL: PE %d round %d: dst[%d] = %d, expected %d\n", me, r, i, host[i],
                value(prev, r, i));
    CUDA_OK(cudaMemcpy(host, firsts, npes * sizeof(int), cudaMemcpyDeviceToHost));
    for (int p = 0; p < npes; p++)
      if (host[p] != value((p + npes - 1) % npes, r, 0) && wrong++ < 10)
        fprintf(stderr, "ring: FAIL: PE %d round %d: fcollect slot %d = %d, expected %d\n", me, r, p, host[p],
                value((p + npes - 1) % npes, r, 0));
    shmemx_barrier_all_on_stream(stream); /* nobody refills src before every PE has checked */
    CUDA_OK(cudaStreamSynchronize(stream));
  }
  static int total; /* symmetric (static data): every PE's count of wrong values, summed on PE 0 */
  shmem_int_atomic_add(&total, wrong, 0);
  shmem_barrier_all();
  if (me == 0 && total) printf("ring: FAIL: %d wrong values\n", total);
  if (me == 0 && !total) printf("ring: PASS: %d rounds of %d ints on %d PEs\n", ROUNDS, N, npes);
  int rc = total != 0;
  shmem_free(sig); /* NVSHMEM: nvshmem_free */
  shmem_free(firsts);
  shmem_free(dst);
  shmem_free(src);
  free(host);
  CUDA_OK(cudaStreamDestroy(stream));
  shmem_finalize(); /* NVSHMEM: nvshmem_finalize() */
  return rc;
}
