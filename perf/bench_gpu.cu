/*
 * bench_gpu.cu - device-initiated RMA between two PEs sharing one GPU (Shoal's device API, CUDA).
 *
 *   oshrun -n 2 ./bench_gpu [max_bytes]          (MPS running, so that both PEs' kernels run at once)
 *
 * 1. Bandwidth, 4 KiB .. max_bytes (256 MiB): PE 0's kernel puts S bytes into PE 1's device heap, each block a
 *    slice with shmemx_putmem_block; the same S copied by cudaMemcpyAsync device-to-device to the same destination
 *    (PE 1's heap through its IPC mapping) in the same run. Medians of 5 timings (CUDA events), each of `reps`
 *    repetitions; ratio put / memcpy (target >= 80% from 64 MiB).
 * 2. Latency: put_signal ping-pong (8-byte payload, SIGNAL_SET) between the PEs' kernels, round trip = time of
 *    10000 exchanges inside one kernel / 10000 (%globaltimer); median of 5 (target < 3 us). A wait longer than 5 s
 *    ends the kernel and reports the kernels were not co-scheduled (no MPS).
 */
#define SHOAL_DEVICE_OPTIONAL /* says SKIP (77) without a GPU: shmem_init must not end it */
#include <shoal/shmem_device.cuh>

#include <algorithm>
#include <stdio.h>
#include <stdlib.h>
#include <vector>

#define CK(call)                                                                                                      \
  do {                                                                                                                 \
    cudaError_t e_ = (call);                                                                                           \
    if (e_ != cudaSuccess) {                                                                                           \
      fprintf(stderr, "bench_gpu: PE %d: %s: %s\n", shmem_my_pe(), #call, cudaGetErrorString(e_));                     \
      shmem_global_exit(2);                                                                                            \
    }                                                                                                                  \
  } while (0)

#define THREADS 512
#define PING_ITERS 10000
#define TRIALS 5

__global__ void __launch_bounds__(THREADS, 2) put_bw(char *dst, const char *src, size_t n, int peer, int reps) {
  size_t chunk = ((n + gridDim.x - 1) / gridDim.x + 15) & ~(size_t)15, lo = blockIdx.x * chunk;
  if (lo >= n) return;
  size_t len = n - lo < chunk ? n - lo : chunk;
  for (int r = 0; r < reps; r++) shmemx_putmem_block(dst + lo, src + lo, len, peer);
  shmem_quiet();
}

__device__ static unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/* Round trips between PE 0 and 1; sig counts the exchange number. out[0] = ns for iters, out[1] = 1 on timeout. */
__global__ void pingpong(uint64_t *data, const uint64_t *src, uint64_t *sig, uint64_t base, int iters,
                         unsigned long long *out) {
  int me = shmem_my_pe(), peer = 1 - me;
  unsigned long long t0 = now_ns();
  for (int i = 1; i <= iters; i++) {
    uint64_t want = base + (uint64_t)i;
    if (me == 0) shmem_uint64_put_signal(data, src, 1, sig, want, SHMEM_SIGNAL_SET, peer);
    unsigned long long w0 = now_ns();
    for (unsigned k = 1; shmem_signal_fetch(sig) < want; k++)
      if (!(k & 1023) && now_ns() - w0 > 5000000000ull) {
        out[1] = 1;
        return;
      }
    if (me == 1) shmem_uint64_put_signal(data, src, 1, sig, want, SHMEM_SIGNAL_SET, peer);
  }
  out[0] = now_ns() - t0;
  out[1] = 0;
}

/* Experiments, not the library's code: the same exchange written out with other memory-model choices, to see where
 * the time goes. peer_data / peer_sig are the peer's objects mapped here.
 *   mode 1: .sys scope, release store; polls are relaxed (ld.relaxed.sys), one fence.acq_rel.sys after the last one
 *   mode 2: .gpu scope release store / acquire polls: valid only for PEs on one GPU, and outside the PTX model
 *           across processes (the model's .gpu scope covers one program), so not what the library does. */
__device__ static void exp_signal(int mode, uint64_t *peer_data, uint64_t *peer_sig, unsigned long long v) {
  *(volatile uint64_t *)peer_data = v;
  if (mode == 2)
    asm volatile("st.release.gpu.u64 [%0], %1;" ::"l"(peer_sig), "l"(v) : "memory");
  else
    asm volatile("st.release.sys.u64 [%0], %1;" ::"l"(peer_sig), "l"(v) : "memory");
}
__device__ static unsigned long long exp_poll(int mode, uint64_t *sig) {
  unsigned long long v;
  if (mode == 2)
    asm volatile("ld.acquire.gpu.u64 %0, [%1];" : "=l"(v) : "l"(sig) : "memory");
  else
    asm volatile("ld.relaxed.sys.u64 %0, [%1];" : "=l"(v) : "l"(sig) : "memory");
  return v;
}
__global__ void pingpong_exp(int mode, uint64_t *peer_data, uint64_t *peer_sig, uint64_t *sig, uint64_t base,
                             int iters, unsigned long long *out) {
  int me = shmem_my_pe();
  unsigned long long t0 = now_ns();
  for (int i = 1; i <= iters; i++) {
    unsigned long long want = base + (unsigned long long)i;
    if (me == 0) exp_signal(mode, peer_data, peer_sig, want);
    unsigned long long w0 = now_ns();
    for (unsigned k = 1; exp_poll(mode, sig) < want; k++)
      if (!(k & 1023) && now_ns() - w0 > 5000000000ull) {
        out[1] = 1;
        return;
      }
    if (mode == 1) asm volatile("fence.acq_rel.sys;" ::: "memory");
    if (me == 1) exp_signal(mode, peer_data, peer_sig, want);
  }
  out[0] = now_ns() - t0;
  out[1] = 0;
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main(int argc, char **argv) {
  shmem_init();
  int me = shmem_my_pe(), n = shmem_n_pes();
  if (n < 2 || !shmemx_gpu_available()) {
    if (me == 0) printf("bench_gpu: needs 2 PEs and a GPU (%d PEs, GPU %s): skipped\n", n,
                        shmemx_gpu_available() ? "yes" : "no");
    fflush(stdout);
    shmem_finalize();
    return 77;
  }
  if (shmemx_init_device_state()) shmem_global_exit(2);
  size_t max = argc > 1 ? strtoull(argv[1], NULL, 0) : (size_t)256 << 20;
  char *src = (char *)shmem_malloc_with_hints(max, SHMEMX_MALLOC_DEVICE);
  char *dst = (char *)shmem_malloc_with_hints(max, SHMEMX_MALLOC_DEVICE);
  if (!src || !dst) {
    if (me == 0) fprintf(stderr, "bench_gpu: cannot allocate 2 x %zu bytes of device heap\n", max);
    shmem_global_exit(2);
  }
  shmemx_device_state_t st;
  shmemx_device_state_get(&st, sizeof st);
  char *peer_dst = dst + st.delta[1]; /* PE 1's dst, mapped here */
  cudaDeviceProp prop;
  int dev = shmemx_gpu_device();
  CK(cudaGetDeviceProperties(&prop, dev));
  CK(cudaMemset(src, 0x5A, max));
  CK(cudaDeviceSynchronize());
  cudaStream_t s;
  cudaEvent_t e0, e1;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  if (me == 0) {
    printf("bench_gpu: %s (%d SMs), %d PEs on one GPU, %d threads per block\n", prop.name, prop.multiProcessorCount,
           st.pes_per_gpu, THREADS);
    printf("| bytes | blocks | reps | putmem_block GB/s | cudaMemcpy D2D GB/s | put / memcpy |\n");
    printf("|------:|-------:|-----:|------------------:|--------------------:|-------------:|\n");
  }
  bool bw_ok = true;
  shmem_barrier_all();
  for (size_t sz = 4096; sz <= max; sz *= 4) {
    if (me == 0) {
      int blocks = (int)std::min<size_t>(std::max<size_t>(1, sz / (64 << 10)), (size_t)prop.multiProcessorCount * 2);
      int reps = (int)std::min<size_t>(1000, std::max<size_t>(5, ((size_t)1 << 30) / sz));
      std::vector<double> tp, tm;
      for (int t = 0; t <= TRIALS; t++) { /* trial 0 warms up */
        float ms;
        CK(cudaEventRecord(e0, s));
        put_bw<<<blocks, THREADS, 0, s>>>(dst, src, sz, 1, reps);
        CK(cudaEventRecord(e1, s));
        CK(cudaEventSynchronize(e1));
        CK(cudaGetLastError());
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (t) tp.push_back((double)sz * reps / (ms * 1e-3) / 1e9);
        CK(cudaEventRecord(e0, s));
        for (int r = 0; r < reps; r++) CK(cudaMemcpyAsync(peer_dst, src, sz, cudaMemcpyDeviceToDevice, s));
        CK(cudaEventRecord(e1, s));
        CK(cudaEventSynchronize(e1));
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (t) tm.push_back((double)sz * reps / (ms * 1e-3) / 1e9);
      }
      double p = median(tp), m = median(tm);
      if (sz >= ((size_t)64 << 20) && p < 0.8 * m) bw_ok = false;
      printf("| %zu | %d | %d | %.1f | %.1f | %.0f%% |\n", sz, blocks, reps, p, m, 100.0 * p / m);
      fflush(stdout);
    }
    shmem_barrier_all();
  }
  /* the data arrived: PE 1 checks its dst (last size) */
  if (me == 1) {
    std::vector<unsigned char> h(4096);
    CK(cudaMemcpy(h.data(), dst + (max / 4096 - 1) * 4096, 4096, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (unsigned char c : h) bad += c != 0x5A;
    if (bad) {
      fprintf(stderr, "bench_gpu: PE 1: %d wrong bytes in the destination\n", bad);
      shmem_global_exit(1);
    }
  }
  shmem_barrier_all();

  /* latency */
  uint64_t *data = (uint64_t *)shmem_malloc_with_hints(64, SHMEMX_MALLOC_DEVICE);
  uint64_t *sig = (uint64_t *)shmem_malloc_with_hints(64, SHMEMX_MALLOC_DEVICE);
  unsigned long long *out;
  CK(cudaMalloc(&out, 2 * sizeof(unsigned long long)));
  CK(cudaMemset(sig, 0, 64));
  CK(cudaDeviceSynchronize());
  std::vector<double> rtt[3];
  bool timed_out = false;
  uint64_t *peer_data = data + st.delta[1 - me] / (int64_t)sizeof(uint64_t);
  uint64_t *peer_sig = sig + st.delta[1 - me] / (int64_t)sizeof(uint64_t);
  for (int t = 0; t < 3 * (TRIALS + 1) && !timed_out; t++) {
    int mode = t / (TRIALS + 1); /* 0: the library's put_signal; 1, 2: experiments. First trial of each warms up. */
    shmem_barrier_all();
    if (mode == 0)
      pingpong<<<1, 1, 0, s>>>(data, (const uint64_t *)src, sig, (uint64_t)t * PING_ITERS, PING_ITERS, out);
    else
      pingpong_exp<<<1, 1, 0, s>>>(mode, peer_data, peer_sig, sig, (uint64_t)t * PING_ITERS, PING_ITERS, out);
    CK(cudaStreamSynchronize(s));
    CK(cudaGetLastError());
    unsigned long long h[2];
    CK(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));
    int to = (int)h[1], any = to;
    /* every PE learns whether someone timed out (through symmetric host memory) */
    static int flags[2];
    shmem_barrier_all();
    shmem_int_p(&flags[me], to, 0);
    shmem_barrier_all();
    if (me == 0) {
      any = flags[0] | flags[1];
      shmem_int_p(&flags[0], any, 1);
    }
    shmem_barrier_all();
    if (me == 1) any = flags[0];
    if (any) timed_out = true;
    if (t % (TRIALS + 1) && !any) rtt[mode].push_back((double)h[0] / PING_ITERS / 1000.0);
  }
  if (me == 0) {
    if (timed_out)
      printf("put_signal ping-pong: timed out: the two PEs' kernels did not run at once (is MPS running?)\n");
    else {
      double m = median(rtt[0]);
      printf("put_signal ping-pong round trip (8 bytes, %d exchanges, median of %d): %.2f us (min %.2f, max %.2f; "
             "target < 3 us: %s)\n", PING_ITERS, TRIALS, m, *std::min_element(rtt[0].begin(), rtt[0].end()),
             *std::max_element(rtt[0].begin(), rtt[0].end()), m < 3.0 ? "met" : "missed");
      printf("experiment 1, .sys release store, relaxed polls + one acquire fence: %.2f us\n", median(rtt[1]));
      printf("experiment 2, .gpu-scope release/acquire (one GPU only, outside the PTX model across processes): "
             "%.2f us\n", median(rtt[2]));
    }
    printf("bandwidth target (put >= 80%% of cudaMemcpy from 64 MiB): %s\n",
           max < ((size_t)64 << 20) ? "not measured" : bw_ok ? "met" : "missed");
  }
  CK(cudaFree(out));
  shmem_free(sig);
  shmem_free(data);
  shmem_free(dst);
  shmem_free(src);
  shmem_finalize();
  return 0;
}
