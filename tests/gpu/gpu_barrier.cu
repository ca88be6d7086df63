/* gpu_barrier.cu - barriers across the PEs' kernels: shmem_barrier_all and shmem_sync_all inside a multi-block
 * kernel started with shmemx_collective_launch, shmemx_barrier_all_block, and shmemx_barrier_all_on_stream between
 * kernels on a stream. Each round every PE writes the round number into its slot on every PE, meets the others,
 * and checks that every slot holds the round: a barrier that lets anyone through early is caught. */
#include "gpu_test.h"

#define ROUNDS 40

enum { W_BARRIER, W_SYNC, W_BLOCK };

__device__ static void write_slots(int *slots, int r, unsigned rank, unsigned size) {
  int me = shmem_my_pe(), n = shmem_n_pes();
  for (unsigned p = rank; p < (unsigned)n; p += size) shmem_int_p(&slots[me], r, (int)p);
}
__device__ static void check_slots(const int *slots, int r, unsigned rank, unsigned size, int *errors) {
  for (unsigned q = rank; q < (unsigned)shmem_n_pes(); q += size)
    if (((volatile const int *)slots)[q] != r) atomicAdd(errors, 1);
}

__global__ void rounds(int *slots, int which, int *errors) {
  unsigned rank = blockIdx.x * blockDim.x + threadIdx.x, size = gridDim.x * blockDim.x;
  for (int r = 1; r <= ROUNDS; r++) {
    write_slots(slots, r, rank, size);
    if (which == W_BARRIER) shmem_barrier_all();
    if (which == W_SYNC) {
      shmem_quiet();
      shmem_sync_all();
    }
    if (which == W_BLOCK) shmemx_barrier_all_block();
    check_slots(slots, r, rank, size, errors);
    if (which == W_BLOCK)
      shmemx_barrier_all_block();
    else
      shmem_sync_all(); /* nobody writes round r + 1 before every check of round r */
  }
}

__global__ void stream_write(int *slots, int r) { write_slots(slots, r, threadIdx.x, blockDim.x); }
__global__ void stream_check(int *slots, int r, int *errors) { check_slots(slots, r, threadIdx.x, blockDim.x, errors); }

int main(void) {
  t_start("gpu_barrier");
  int *slots = (int *)t_dmalloc(sizeof(int) * t_npes), *errors;
  GPU_OK(gpuMalloc((void **)&errors, sizeof(int)));
  static const char *names[] = {"shmem_barrier_all", "shmem_sync_all", "shmemx_barrier_all_block"};
  for (int which = W_BARRIER; which <= W_BLOCK; which++) {
    GPU_OK(gpuMemset(slots, 0, sizeof(int) * t_npes));
    GPU_OK(gpuMemset(errors, 0, sizeof(int)));
    GPU_OK(gpuDeviceSynchronize());
    shmem_barrier_all();
    void *args[] = {&slots, &which, &errors};
    dim3 grid(which == W_BLOCK ? 1 : 4), block(128);
    int rc = shmemx_collective_launch((const void *)rounds, grid, block, args, 0, 0);
    CHECK(rc == 0, "shmemx_collective_launch of %u blocks refused", grid.x);
    GPU_OK(gpuGetLastError());
    GPU_OK(gpuDeviceSynchronize());
    int e = -1;
    GPU_OK(gpuMemcpy(&e, errors, sizeof e, gpuMemcpyDefault));
    CHECK(e == 0, "%s, %d rounds: %d slots seen with the wrong round", names[which], ROUNDS, e);
    shmem_barrier_all();
  }
  /* stream-ordered: write, barrier, check, barrier, ... all enqueued; the host waits once at the end */
  gpuStream_t s;
  GPU_OK(gpuStreamCreate(&s));
  GPU_OK(gpuMemset(slots, 0, sizeof(int) * t_npes));
  GPU_OK(gpuMemset(errors, 0, sizeof(int)));
  GPU_OK(gpuDeviceSynchronize());
  shmem_barrier_all();
  for (int r = 1; r <= ROUNDS; r++) {
    stream_write<<<1, 64, 0, s>>>(slots, r);
    shmemx_barrier_all_on_stream((void *)s);
    stream_check<<<1, 64, 0, s>>>(slots, r, errors);
    shmemx_barrier_all_on_stream((void *)s);
  }
  GPU_OK(gpuGetLastError());
  GPU_OK(gpuStreamSynchronize(s));
  int e = -1;
  GPU_OK(gpuMemcpy(&e, errors, sizeof e, gpuMemcpyDefault));
  CHECK(e == 0, "shmemx_barrier_all_on_stream, %d rounds: %d slots seen with the wrong round", ROUNDS, e);
  GPU_OK(gpuStreamDestroy(s));
  GPU_OK(gpuFree(errors));
  shmem_free(slots);
  return t_finish("gpu_barrier");
}
