/*
 * bench_gpu_api.cu - time per call of the on-stream GPU collectives through the OpenSHMEM API, as a program sees them
 * (shmemx_fcollectmem_on_stream, shmemx_alltoallmem_on_stream on SHMEM_TEAM_WORLD, device-heap buffers): what the
 * launcher-level benchmark (bench_gpu_coll) measures plus the runtime's own work per call (argument checks, team slot,
 * completion event). Issue 16 part 3: docs/gpu-collectives.md "The small-message floor".
 *
 *   oshrun -n N ./bench_gpu_api [--min 4K] [--max 1M] [--repeat R] [--csv FILE] [--label TEXT]
 *
 * Per size and op: N back-to-back calls between two CUDA events on one stream (N chosen for about 20 ms, 16 to 500),
 * R interleaved measurements (fcollect, alltoall, fcollect, ...), the median of the max over PEs; also the host's time
 * per call (how long the launching loop took, divided by N). Several PEs on one GPU need MPS. Exits 77 without a GPU.
 * CSV: impl,W,op,bytes_per_pe,time_us,min_us,max_us,host_us,label.
 */
#include <shmem.h>
#include <shmemx.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <vector>

#define CK(call)                                                                                                      \
  do {                                                                                                                 \
    cudaError_t e_ = (call);                                                                                           \
    if (e_ != cudaSuccess) {                                                                                           \
      fprintf(stderr, "bench_gpu_api: PE %d: %s: %s\n", shmem_my_pe(), #call, cudaGetErrorString(e_));                 \
      shmem_global_exit(2);                                                                                            \
    }                                                                                                                  \
  } while (0)

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static size_t parse_size(const char *s) {
  char *e;
  double v = strtod(s, &e);
  if (*e == 'K' || *e == 'k') v *= 1024;
  else if (*e == 'M' || *e == 'm') v *= 1024 * 1024;
  else if (*e == 'G' || *e == 'g') v *= 1024.0 * 1024 * 1024;
  return (size_t)v;
}

static double g_in[2], g_out[2]; /* symmetric: {GPU time, host time} per call, max over PEs */

int main(int argc, char **argv) {
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1) {
    printf("bench_gpu_api: no GPU: skipped\n");
    return 77;
  }
  size_t lo = 4096, hi = 1 << 20;
  int repeat = 5;
  const char *csvp = NULL, *label = "";
  for (int i = 1; i < argc; i++) {
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(argv[i], "--min") && v) lo = parse_size(argv[++i]);
    else if (!strcmp(argv[i], "--max") && v) hi = parse_size(argv[++i]);
    else if (!strcmp(argv[i], "--repeat") && v) repeat = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--csv") && v) csvp = argv[++i];
    else if (!strcmp(argv[i], "--label") && v) label = argv[++i];
    else {
      fprintf(stderr, "bench_gpu_api: bad argument '%s' (see the comment at the top of perf/bench_gpu_api.cu)\n", argv[i]);
      return 2;
    }
  }
  if (lo < 16 || hi < lo || repeat < 1 || repeat > 99) {
    fprintf(stderr, "bench_gpu_api: --min >= 16, --max >= --min, --repeat 1..99\n");
    return 2;
  }
  shmem_init();
  const int me = shmem_my_pe(), W = shmem_n_pes();
  char *dest = (char *)shmem_malloc_with_hints((size_t)W * hi, SHMEMX_MALLOC_DEVICE);
  char *src = (char *)shmem_malloc_with_hints((size_t)W * hi, SHMEMX_MALLOC_DEVICE);
  if (!dest || !src) {
    fprintf(stderr, "bench_gpu_api: PE %d: shmem_malloc_with_hints(%zu, SHMEMX_MALLOC_DEVICE) failed (device heap: "
            "SHOAL_DEVICE_SYMMETRIC_SIZE)\n", me, (size_t)W * hi);
    shmem_global_exit(1);
  }
  CK(cudaMemset(src, 0x5a, (size_t)W * hi));
  CK(cudaDeviceSynchronize());
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  FILE *csv = NULL;
  if (me == 0) {
    printf("impl,W,op,bytes_per_pe,time_us,min_us,max_us,host_us,label\n");
    if (csvp && (csv = fopen(csvp, "a")) && ftell(csv) == 0)
      fprintf(csv, "impl,W,op,bytes_per_pe,time_us,min_us,max_us,host_us,label\n");
  }
  const char *opn[2] = {"fcollect", "alltoall"};
  for (size_t n = lo; n <= hi; n *= 4) {
    std::vector<double> t[2], h[2];
    for (int rep = 0; rep < repeat; rep++)
      for (int op = 0; op < 2; op++) {
        auto call = [&] {
          int rc = op ? shmemx_alltoallmem_on_stream(SHMEM_TEAM_WORLD, dest, src, n, s)
                      : shmemx_fcollectmem_on_stream(SHMEM_TEAM_WORLD, dest, src, n, s);
          if (rc) {
            fprintf(stderr, "bench_gpu_api: PE %d: %s_on_stream returned %d\n", me, opn[op], rc);
            shmem_global_exit(1);
          }
        };
        for (int i = 0; i < 3; i++) call();
        CK(cudaStreamSynchronize(s));
        shmem_barrier_all();
        const double w0 = now_us();
        for (int i = 0; i < 3; i++) call();
        CK(cudaStreamSynchronize(s));
        g_in[0] = (now_us() - w0) / 3;
        shmem_double_max_reduce(SHMEM_TEAM_WORLD, g_out, g_in, 1);
        const int iters = std::max(16, std::min(500, (int)(20000.0 / std::max(g_out[0], 1.0))));
        shmem_barrier_all();
        CK(cudaEventRecord(e0, s));
        const double h0 = now_us();
        for (int i = 0; i < iters; i++) call();
        g_in[1] = (now_us() - h0) / iters;
        CK(cudaEventRecord(e1, s));
        CK(cudaEventSynchronize(e1));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        g_in[0] = ms * 1e3 / iters;
        shmem_double_max_reduce(SHMEM_TEAM_WORLD, g_out, g_in, 2);
        t[op].push_back(g_out[0]);
        h[op].push_back(g_out[1]);
      }
    if (me == 0)
      for (int op = 0; op < 2; op++) {
        std::sort(t[op].begin(), t[op].end());
        std::sort(h[op].begin(), h[op].end());
        const size_t m = t[op].size();
        char line[256];
        snprintf(line, sizeof line, "shoal,%d,%s,%zu,%.2f,%.2f,%.2f,%.2f,%s", W, opn[op], n,
                 m % 2 ? t[op][m / 2] : (t[op][m / 2 - 1] + t[op][m / 2]) / 2, t[op].front(), t[op].back(), h[op][m / 2],
                 label);
        printf("%s\n", line);
        if (csv) fprintf(csv, "%s\n", line);
        fflush(stdout);
      }
  }
  if (csv) fclose(csv);
  CK(cudaStreamDestroy(s));
  shmem_free(dest);
  shmem_free(src);
  shmem_finalize();
  return 0;
}
