/* bench_gpu_far.cu - issue 31's measurements: GPU PEs of other nodes, side by side in one run with the host path.
 * Run on one GPU with every PE its own node over libfabric on lo (docs/gpu.md, "The proxy"):
 *   SHOAL_NODE_PES=1 SHOAL_TRANSPORT=ofi FI_PROVIDER=net FI_NET_IFACE=lo FI_TCP_IFACE=lo \
 *     oshrun -n 2 bench_gpu_far [--min 64K] [--max 64M] [--coll-min 4K] [--coll-max 256M] [--csv FILE]
 *                               [--lat-iters 2000] [--bw 0] [--coll 0] [--hostapi 0]
 * PE 0 measures, PE 1 is the far target (it only serves: its progress thread copies staged bytes into its GPU).
 * Rows (CSV: impl,op,bytes,iters,time_us,GBs; bandwidth rows interleaved per size, so both paths see the same noise):
 *   host_put     shmem_putmem_nbi from host memory into PE 1's host heap, k times, then shmem_quiet (the reference)
 *   host_put_ring  the same, but the i-th put's source and destination at (i * bytes) mod the largest multiple of
 *                bytes in --ring BYTES (default 0: no such row): puts that walk a window as the staged path's ring does
 *                (a slot of 4 MiB at 2 PEs), so that their bytes are not the last put's, warm in the caches
 *   dev_put      a kernel's shmem_putmem_nbi from the device heap into PE 1's device heap, k times, then shmem_quiet,
 *                all in the kernel (the proxy path); timed around the launch and a stream synchronize
 *   hostapi_dput the host's shmem_putmem_nbi from the device heap into PE 1's device heap (part 1's staged path;
 *                --hostapi 0 leaves it out, so that SHOAL_OFI_STAGE_PROFILE's sums are the kernel's puts alone)
 *   host_lat     8 B shmem_putmem + shmem_quiet from the host, per iteration
 *   dev_lat      8 B shmem_putmem + shmem_quiet in one kernel thread, per iteration
 *   host_amo     shmem_uint64_atomic_fetch_add from the host on PE 1's host heap, per iteration
 *   hostapi_damo the same from the host on PE 1's device heap (the target's GPU does it: a kernel its thread launches)
 *   dev_amo      the same from one kernel thread on PE 1's device heap (the proxy, then as hostapi_damo)
 *   copy_d2h, copy_h2d  one cudaMemcpyAsync of that many bytes between the device heap and page-locked host memory,
 *                then a stream synchronize, per iteration (up to 1 MiB, a staged chunk's size): what each of the staged
 *                path's two copies costs, the requester's (d2h) and the target's (h2d)
 *   pcie_rtt     a kernel thread stores to pinned host memory and waits for the host thread's answer in pinned host
 *                memory: one PCIe round trip GPU -> CPU -> GPU (what the proxy adds to every device request)
 *   fcollect, alltoall  shmem_fcollectmem / shmem_alltoallmem on device buffers, SHMEM_TEAM_WORLD, bytes per PE
 *                (perf/torch_coll_bench.py --backend gloo -W 2 gives torch.distributed's on the same sizes)
 *   broadcast, sum_reduce  shmem_broadcastmem from PE 0, shmem_float_sum_reduce, bytes per PE
 * With other than 2 PEs only the collectives run (SHOAL_NODE_PES=2 -n 4: two nodes of two PEs; impl "shoal-flat"
 * and "shoal-hierarchical" under SHOAL_COLL_GPU_FAR, for the A/B of the leaders' form). Collective buffers are 2 x
 * --coll-max bytes per PE: fcollect and alltoall sizes whose npes blocks do not fit are left out.
 * Exit 77 without a GPU. */
#include <shoal/shmem_device.cuh>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define OK(call)                                                                                                      \
  do {                                                                                                                 \
    cudaError_t e_ = (call);                                                                                           \
    if (e_ != cudaSuccess) {                                                                                           \
      fprintf(stderr, "bench_gpu_far: PE %d: %s: %s\n", shmem_my_pe(), #call, cudaGetErrorString(e_));              \
      shmem_global_exit(2);                                                                                            \
    }                                                                                                                  \
  } while (0)

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static size_t parse_size(const char *s) {
  char *e;
  double v = strtod(s, &e);
  if (*e == 'K' || *e == 'k') v *= 1024;
  if (*e == 'M' || *e == 'm') v *= 1024 * 1024;
  if (*e == 'G' || *e == 'g') v *= 1024.0 * 1024 * 1024;
  return (size_t)v;
}

#define STAGE_CHUNK ((size_t)1 << 20) /* the staged path's largest chunk (runtime/transport/ofi/rma.c) */

static FILE *csv;
static void row(const char *impl, const char *op, size_t bytes, long iters, double secs) {
  const double us = 1e6 * secs / (double)iters, gbs = (double)bytes * (double)iters / secs / 1e9;
  printf("%-13s %-9s %10zu %6ld %12.2f us %9.3f GB/s\n", impl, op, bytes, iters, us, gbs);
  if (csv) fprintf(csv, "%s,%s,%zu,%ld,%.3f,%.4f\n", impl, op, bytes, iters, us, gbs);
  fflush(stdout);
}

__global__ void k_put(char *dst, const char *src, size_t n, long k, int pe) {
  for (long i = 0; i < k; i++) shmem_putmem_nbi(dst, src, n, pe);
  shmem_quiet();
}

__global__ void k_amo(unsigned long long *dst, long k, int pe) {
  for (long i = 0; i < k; i++) (void)shmem_ulonglong_atomic_fetch_add(dst, 1ull, pe);
}

__global__ void k_lat(char *dst, const char *src, long k, int pe) {
  for (long i = 0; i < k; i++) {
    shmem_putmem(dst, src, 8, pe);
    shmem_quiet();
  }
}

/* ping: the kernel's stores (system scope), pong: the host's answers; both pinned host memory the GPU maps */
__global__ void k_rtt(volatile unsigned long long *ping, volatile unsigned long long *pong, long k) {
  for (long i = 1; i <= k; i++) {
    *ping = (unsigned long long)i;
    __threadfence_system();
    while (*pong != (unsigned long long)i) {
    }
  }
}

struct echo_arg {
  volatile unsigned long long *ping, *pong;
  long k;
};
static void *echo(void *p) {
  echo_arg *a = (echo_arg *)p;
  for (long i = 1; i <= a->k; i++) {
    while (*a->ping != (unsigned long long)i) {
    }
    *a->pong = (unsigned long long)i;
  }
  return NULL;
}

/* k for about target seconds of op, from one timed call of k0 (at least 1, at most kmax) */
static long pick(double one_call_s, long k0, double target, long kmax) {
  long k = one_call_s > 0 ? (long)(target / (one_call_s / (double)k0)) : kmax;
  return k < 1 ? 1 : k > kmax ? kmax : k;
}

int main(int argc, char **argv) {
  size_t min = 64 << 10, max = 64 << 20, cmin = 4 << 10, cmax = 256 << 20;
  const char *csv_path = NULL;
  long kl = 2000; /* --lat-iters */
  bool bw = true, coll = true, hostapi = true;
  size_t ring = 0; /* --ring */
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--lat-iters")) kl = atol(argv[i + 1]);
    if (!strcmp(argv[i], "--bw")) bw = atoi(argv[i + 1]);
    if (!strcmp(argv[i], "--coll")) coll = atoi(argv[i + 1]);
    if (!strcmp(argv[i], "--hostapi")) hostapi = atoi(argv[i + 1]);
    if (!strcmp(argv[i], "--min")) min = parse_size(argv[i + 1]);
    else if (!strcmp(argv[i], "--max")) max = parse_size(argv[i + 1]);
    else if (!strcmp(argv[i], "--coll-min")) cmin = parse_size(argv[i + 1]);
    else if (!strcmp(argv[i], "--coll-max")) cmax = parse_size(argv[i + 1]);
    else if (!strcmp(argv[i], "--csv")) csv_path = argv[i + 1];
    else if (!strcmp(argv[i], "--ring")) ring = parse_size(argv[i + 1]);
  }
  shmem_init();
  const int me = shmem_my_pe(), npes = shmem_n_pes();
  if (!shmemx_gpu_available()) {
    if (me == 0) printf("bench_gpu_far: SKIP: no GPU\n");
    shmem_finalize();
    return 77;
  }
  if (me == 0 && csv_path && !(csv = fopen(csv_path, "a"))) perror(csv_path);
  if (csv && ftell(csv) == 0) fprintf(csv, "impl,op,bytes,iters,time_us,GBs\n");
  if (npes != 2 && me == 0) printf("bench_gpu_far: %d PEs: the collectives only\n", npes);
  if (npes == 2) { /* PE 0 -> PE 1 */
  shmemx_device_state_t st;
  if (shmemx_device_state_get(&st, sizeof st) || st.delta[1 - me] != SHMEMX_DEVICE_DELTA_FAR) {
    if (me == 0) fprintf(stderr, "bench_gpu_far: PE 1 is not another node's (set SHOAL_NODE_PES=1)\n");
    shmem_global_exit(2);
  }
  cudaStream_t s;
  OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  char *ddst = (char *)shmem_malloc_with_hints(max, SHMEMX_MALLOC_DEVICE);
  char *dsrc = (char *)shmem_malloc_with_hints(max, SHMEMX_MALLOC_DEVICE);
  char *hdst = (char *)shmem_malloc(max), *hsrc = (char *)malloc(max);
  if (!ddst || !dsrc || !hdst || !hsrc) {
    fprintf(stderr, "bench_gpu_far: PE %d: cannot allocate 2 x %zu bytes (SHOAL_DEVICE_SYMMETRIC_SIZE, "
            "SHMEM_SYMMETRIC_SIZE)\n", me, max);
    shmem_global_exit(2);
  }
  memset(hsrc, 1, max);
  char *hpin; /* page-locked, as the staging region is */
  OK(cudaHostAlloc((void **)&hpin, STAGE_CHUNK, cudaHostAllocPortable));
  OK(cudaMemset(dsrc, 2, max));
  OK(cudaDeviceSynchronize());
  shmem_barrier_all();

  if (me == 0) {
    printf("bench_gpu_far: 2 PEs, every PE its own node; PE 0 -> PE 1\n");
    for (size_t n = min; bw && n <= max; n *= 4) {
      const long kmax = n <= (1 << 20) ? 200 : 20;
      for (int rep = 0; rep < 2; rep++) { /* rep 0: warm-up and k */
        static long kh, kd, ka;
        double t = now();
        long k = rep ? kh : 2;
        for (long i = 0; i < k; i++) shmem_putmem_nbi(hdst, hsrc, n, 1);
        shmem_quiet();
        t = now() - t;
        if (rep) row("host_put", "put", n, k, t); else kh = pick(t, k, 0.3, kmax);
        if (rep && ring >= n && ring <= max) {
          const size_t places = ring / n;
          t = now();
          for (long i = 0; i < k; i++) {
            const size_t o = (size_t)i % places * n;
            shmem_putmem_nbi(hdst + o, hsrc + o, n, 1);
          }
          shmem_quiet();
          row("host_put_ring", "put", n, k, now() - t);
        }
        k = rep ? kd : 2;
        t = now();
        k_put<<<1, 1, 0, s>>>(ddst, dsrc, n, k, 1);
        OK(cudaGetLastError());
        OK(cudaStreamSynchronize(s));
        t = now() - t;
        if (rep) row("dev_put", "put", n, k, t); else kd = pick(t, k, 0.3, kmax);
        k = rep ? ka : 2;
        t = now();
        for (long i = 0; hostapi && i < k; i++) shmem_putmem_nbi(ddst, dsrc, n, 1);
        shmem_quiet();
        t = now() - t;
        if (hostapi && rep) row("hostapi_dput", "put", n, k, t);
        else if (hostapi) ka = pick(t, k, 0.3, kmax);
        if (n > STAGE_CHUNK || !rep) continue;
        for (int dir = 0; dir < 2; dir++) {
          t = now();
          for (long i = 0; i < kmax; i++) {
            OK(cudaMemcpyAsync(dir ? (void *)ddst : (void *)hpin, dir ? (const void *)hpin : (const void *)dsrc, n,
                               dir ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, s));
            OK(cudaStreamSynchronize(s));
          }
          t = now() - t;
          row(dir ? "copy_h2d" : "copy_d2h", "copy", n, kmax, t);
        }
      }
    }
    for (int rep = 0; rep < 2; rep++) {
      double t = now();
      for (long i = 0; i < kl; i++) {
        shmem_putmem(hdst, hsrc, 8, 1);
        shmem_quiet();
      }
      t = now() - t;
      if (rep) row("host_lat", "put_quiet", 8, kl, t);
      t = now();
      k_lat<<<1, 1, 0, s>>>(ddst, dsrc, kl, 1);
      OK(cudaGetLastError());
      OK(cudaStreamSynchronize(s));
      t = now() - t;
      if (rep) row("dev_lat", "put_quiet", 8, kl, t);
      const long ka8 = kl / 4 > 0 ? kl / 4 : 1;
      t = now();
      for (long i = 0; i < ka8; i++) (void)shmem_uint64_atomic_fetch_add((uint64_t *)hdst, 1, 1);
      t = now() - t;
      if (rep) row("host_amo", "fetch_add", 8, ka8, t);
      t = now();
      for (long i = 0; i < ka8; i++) (void)shmem_uint64_atomic_fetch_add((uint64_t *)ddst, 1, 1);
      t = now() - t;
      if (rep) row("hostapi_damo", "fetch_add", 8, ka8, t);
      t = now();
      k_amo<<<1, 1, 0, s>>>((unsigned long long *)ddst, ka8, 1);
      OK(cudaGetLastError());
      OK(cudaStreamSynchronize(s));
      t = now() - t;
      if (rep) row("dev_amo", "fetch_add", 8, ka8, t);
      unsigned long long *pp;
      OK(cudaHostAlloc((void **)&pp, 2 * sizeof *pp, cudaHostAllocMapped | cudaHostAllocPortable));
      pp[0] = pp[1] = 0;
      unsigned long long *dpp;
      OK(cudaHostGetDevicePointer((void **)&dpp, pp, 0));
      echo_arg a = {pp, pp + 1, 20000};
      pthread_t th;
      pthread_create(&th, NULL, echo, &a);
      t = now();
      k_rtt<<<1, 1, 0, s>>>(dpp, dpp + 1, a.k);
      OK(cudaGetLastError());
      OK(cudaStreamSynchronize(s));
      t = now() - t;
      pthread_join(th, NULL);
      if (rep) row("pcie_rtt", "roundtrip", 8, a.k, t);
      OK(cudaFreeHost(pp));
    }
  }
  shmem_barrier_all();
  shmem_free(ddst);
  shmem_free(dsrc);
  shmem_free(hdst);
  free(hsrc);
  OK(cudaFreeHost(hpin));
  } /* npes == 2 */

  /* collectives: every PE calls; PE 0's time per call (the barrier before each batch lines the PEs up) */
  char *cdst = (char *)shmem_malloc_with_hints(2 * cmax, SHMEMX_MALLOC_DEVICE);
  char *csrc = (char *)shmem_malloc_with_hints(2 * cmax, SHMEMX_MALLOC_DEVICE);
  if (!cdst || !csrc) {
    fprintf(stderr, "bench_gpu_far: PE %d: cannot allocate 2 x %zu device bytes for the collectives\n", me, 2 * cmax);
    shmem_global_exit(2);
  }
  OK(cudaMemset(csrc, 3, 2 * cmax));
  OK(cudaDeviceSynchronize());
  /* impl: "shoal", or "shoal-ALGO" under SHOAL_COLL_GPU_FAR=ALGO (flat / hierarchical, for A/B runs) */
  const char *algo = getenv("SHOAL_COLL_GPU_FAR");
  char impl[64];
  snprintf(impl, sizeof impl, algo && *algo ? "shoal-%s" : "shoal", algo);
  static const char *const ops[] = {"fcollect", "alltoall", "broadcast", "sum_reduce"};
  for (size_t n = cmin; coll && n <= cmax; n *= 4) {
    for (int op = 0; op < 4; op++) {
      long k = n <= (1 << 20) ? 20 : n <= (16 << 20) ? 5 : 2;
      if ((op == 0 || op == 1) && n * (size_t)npes > 2 * cmax) continue; /* dest holds npes blocks */
      for (int rep = 0; rep < 2; rep++) {
        shmem_barrier_all();
        double t = now();
        for (long i = 0; i < (rep ? k : 1); i++) {
          if (op == 0) shmem_fcollectmem(SHMEM_TEAM_WORLD, cdst, csrc, n);
          else if (op == 1) shmem_alltoallmem(SHMEM_TEAM_WORLD, cdst, csrc, n);
          else if (op == 2) shmem_broadcastmem(SHMEM_TEAM_WORLD, cdst, csrc, n, 0);
          else shmem_float_sum_reduce(SHMEM_TEAM_WORLD, (float *)cdst, (const float *)csrc, n / sizeof(float));
        }
        t = now() - t;
        if (rep && me == 0) row(impl, ops[op], n, k, t);
      }
    }
  }
  shmem_free(cdst);
  shmem_free(csrc);
  if (csv) fclose(csv);
  shmem_finalize();
  return 0;
}
