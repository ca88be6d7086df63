/* gpu_signal.cu - put_signal and waits between kernels of different PEs: a token passed around the ring with data
 * (thread scope, 8 bytes; block scope, 4099 bytes) checked at every hop, SIGNAL_ADD gathering into PE 0, and
 * int wait_until / test on a flag set by the previous PE. Kernels of all PEs run at once (MPS, or time slicing). */
#include "gpu_test.h"

#define ROUNDS 50
#define BIG 4099

/* Fill our payload for round r, wait for the token (except PE 0 first), check the data, pass it on. */
__global__ void token_ring(unsigned char *buf, unsigned char *mine, uint64_t *sig, size_t nbytes, int block,
                           int *errors) {
  int me = shmem_my_pe(), n = shmem_n_pes(), next = (me + 1) % n, prev = (me + n - 1) % n;
  for (int r = 1; r <= ROUNDS; r++) {
    for (size_t i = threadIdx.x; i < nbytes; i += blockDim.x) mine[i] = t_pat(me, i, r % 16);
    __syncthreads();
    if (me != 0) {
      if (threadIdx.x == 0) shmem_signal_wait_until(sig, SHMEM_CMP_GE, (uint64_t)r);
      __syncthreads();
      for (size_t i = threadIdx.x; i < nbytes; i += blockDim.x)
        if (buf[i] != t_pat(prev, i, r % 16)) atomicAdd(errors, 1);
      __syncthreads();
    }
    if (block)
      shmemx_putmem_signal_block(buf, mine, nbytes, sig, (uint64_t)r, SHMEM_SIGNAL_SET, next);
    else if (threadIdx.x == 0)
      shmem_putmem_signal(buf, mine, nbytes, sig, (uint64_t)r, SHMEM_SIGNAL_SET, next);
    /* mine is free again only when thread 0's put returns: the others refill it next round (to a far PE the put
     * waits for the proxy's copy, and the other threads of the warp need not wait at the branch's end) */
    __syncthreads();
    if (me == 0) {
      if (threadIdx.x == 0) shmem_signal_wait_until(sig, SHMEM_CMP_GE, (uint64_t)r);
      __syncthreads();
      for (size_t i = threadIdx.x; i < nbytes; i += blockDim.x)
        if (buf[i] != t_pat(prev, i, r % 16)) atomicAdd(errors, 1);
      __syncthreads();
    }
  }
}

/* Every PE puts its 64-bit word into slot me of PE 0's array and adds 1 to PE 0's counter; PE 0 waits for n. */
__global__ void gather_add(uint64_t *slots, uint64_t *counter, uint64_t *word, int *errors) {
  int me = shmem_my_pe(), n = shmem_n_pes();
  *word = 0xC0FFEE00ull + (uint64_t)me;
  shmem_uint64_put_signal_nbi(&slots[me], word, 1, counter, 1, SHMEM_SIGNAL_ADD, 0);
  shmem_quiet();
  if (me == 0) {
    uint64_t got = shmem_signal_wait_until(counter, SHMEM_CMP_EQ, (uint64_t)n);
    if (got != (uint64_t)n) atomicAdd(errors, 1);
    for (int p = 0; p < n; p++)
      if (slots[p] != 0xC0FFEE00ull + (uint64_t)p) atomicAdd(errors, 1);
    if (shmem_signal_fetch(counter) != (uint64_t)n) atomicAdd(errors, 1);
  }
}

/* Flag handshake: PE me sets next's flag to r with p, then waits until its own flag reaches r (wait_until; test
 * must agree). Round r + 1 of a PE needs only its predecessor to have entered round r, so the predecessor can be
 * up to n - 1 rounds ahead, never n: the flag stays within [r, r + n - 1] during our round r. */
__global__ void flags(int *flag, int *errors) {
  int me = shmem_my_pe(), n = shmem_n_pes(), next = (me + 1) % n;
  for (int r = 1; r <= ROUNDS; r++) {
    shmem_fence();
    shmem_int_p(flag, r, next);
    shmem_int_wait_until(flag, SHMEM_CMP_GE, r);
    if (!shmem_int_test(flag, SHMEM_CMP_GE, r)) atomicAdd(errors, 1);
    if (shmem_int_test(flag, SHMEM_CMP_GT, r + n - 1)) atomicAdd(errors, 1);
  }
}

int main(void) {
  t_start("gpu_signal");
  unsigned char *buf = (unsigned char *)t_dmalloc(BIG), *mine = (unsigned char *)t_dmalloc(BIG);
  uint64_t *sig = (uint64_t *)t_dmalloc(sizeof(uint64_t)), *slots = (uint64_t *)t_dmalloc(sizeof(uint64_t) * t_npes);
  uint64_t *counter = (uint64_t *)t_dmalloc(sizeof(uint64_t)), *word = (uint64_t *)t_dmalloc(sizeof(uint64_t));
  int *flag = (int *)t_dmalloc(sizeof(int)), *errors;
  GPU_OK(gpuMalloc((void **)&errors, sizeof(int)));
  for (int block = 0; block < 2; block++) {
    size_t nbytes = block ? BIG : 8;
    GPU_OK(gpuMemset(sig, 0, sizeof(uint64_t)));
    GPU_OK(gpuMemset(buf, T_POISON, BIG));
    GPU_OK(gpuMemset(errors, 0, sizeof(int)));
    GPU_OK(gpuDeviceSynchronize());
    shmem_barrier_all();
    LAUNCH_SYNC(token_ring<<<1, 256>>>(buf, mine, sig, nbytes, block, errors));
    int e = -1;
    GPU_OK(gpuMemcpy(&e, errors, sizeof e, gpuMemcpyDefault));
    CHECK(e == 0, "token ring (%s scope, %zu bytes, %d rounds): %d wrong bytes", block ? "block" : "thread", nbytes,
          ROUNDS, e);
    shmem_barrier_all();
  }
  GPU_OK(gpuMemset(counter, 0, sizeof(uint64_t)));
  GPU_OK(gpuMemset(slots, 0, sizeof(uint64_t) * t_npes));
  GPU_OK(gpuMemset(flag, 0, sizeof(int)));
  GPU_OK(gpuMemset(errors, 0, sizeof(int)));
  GPU_OK(gpuDeviceSynchronize());
  shmem_barrier_all();
  LAUNCH_SYNC(gather_add<<<1, 1>>>(slots, counter, word, errors));
  int e = -1;
  GPU_OK(gpuMemcpy(&e, errors, sizeof e, gpuMemcpyDefault));
  CHECK(e == 0, "SIGNAL_ADD gather into PE 0: %d errors", e);
  GPU_OK(gpuMemset(errors, 0, sizeof(int)));
  GPU_OK(gpuDeviceSynchronize());
  shmem_barrier_all();
  LAUNCH_SYNC(flags<<<1, 1>>>(flag, errors));
  GPU_OK(gpuMemcpy(&e, errors, sizeof e, gpuMemcpyDefault));
  CHECK(e == 0, "int wait_until / test flag handshake, %d rounds: %d errors", ROUNDS, e);
  GPU_OK(gpuFree(errors));
  shmem_free(flag);
  shmem_free(word);
  shmem_free(counter);
  shmem_free(slots);
  shmem_free(sig);
  shmem_free(mine);
  shmem_free(buf);
  return t_finish("gpu_signal");
}
