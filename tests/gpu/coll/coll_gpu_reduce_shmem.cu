/*
 * coll_gpu_reduce_shmem.cu - the GPU reductions through the API under oshrun (issue 16): on device-heap buffers over
 * SHMEM_TEAM_WORLD and a split team (every other PE), the host-blocking typed forms (shmem_float_sum_reduce,
 * shmem_int_max_reduce, shmem_double_prod_reduce, shmem_uint64_xor_reduce, shmem_complexf_sum_reduce, in place too),
 * the on-stream forms (shmemx_float_sum_reduce_on_stream, shmemx_half_sum_reduce_on_stream,
 * shmemx_bfloat16_max_reduce_on_stream, shmemx_int8_and_reduce_on_stream; three back to back on the stream), the
 * on-stream form on host buffers (host path), and with SHOAL_TEST_DEVICE_FORMS=1 the block forms
 * (shmemx_float_sum_reduce_block, shmemx_int32_min_reduce_block, shmemx_half_sum_reduce_block) on both teams. Values
 * against coll_gpu_reduce_ref.h (tolerances there), 1 element to --max-bytes per PE.
 *   oshrun -n N coll_gpu_reduce_shmem [--max-bytes B]         exit 77 without a GPU
 */
#include <shmem.h>
#include <shmemx.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <vector>

#include <cuda_runtime.h>

#include "coll_gpu_reduce_ref.h"
#define SHOAL_DEVICE_OPTIONAL /* skips (77) without a GPU: shmem_init must not end it */
#include <shoal/shmem_coll_device.cuh>

#define CK(call)                                                                                                       \
  do {                                                                                                                 \
    cudaError_t e_ = (call);                                                                                           \
    if (e_ != cudaSuccess) {                                                                                           \
      fprintf(stderr, "PE %d: %s: %s (line %d)\n", shmem_my_pe(), #call, cudaGetErrorString(e_), __LINE__);            \
      shmem_global_exit(1);                                                                                            \
    }                                                                                                                  \
  } while (0)

static long failures, checks;

__global__ void k_block(shmem_team_t team, int which, void *dest, const void *src, size_t n) {
  if (blockIdx.x) return;
  if (which == 0) shmemx_float_sum_reduce_block(team, (float *)dest, (const float *)src, n);
  else if (which == 1) shmemx_int32_min_reduce_block(team, (int32_t *)dest, (const int32_t *)src, n);
  else shmemx_half_sum_reduce_block(team, (shmemx_half_t *)dest, (const shmemx_half_t *)src, n);
}

enum { F_HOST, F_STREAM, F_BLOCK };
struct form { int how, type, op, inplace; const char *name; };
static const form forms[] = {
  {F_HOST, SHOAL_RT_F32, SHOAL_RED_SUM, 0, "shmem_float_sum_reduce"},
  {F_HOST, SHOAL_RT_I32, SHOAL_RED_MAX, 0, "shmem_int_max_reduce"},
  {F_HOST, SHOAL_RT_F64, SHOAL_RED_PROD, 1, "shmem_double_prod_reduce (in place)"},
  {F_HOST, SHOAL_RT_U64, SHOAL_RED_XOR, 0, "shmem_uint64_xor_reduce"},
  {F_HOST, SHOAL_RT_CF32, SHOAL_RED_SUM, 0, "shmem_complexf_sum_reduce"},
  {F_STREAM, SHOAL_RT_F32, SHOAL_RED_SUM, 0, "shmemx_float_sum_reduce_on_stream"},
  {F_STREAM, SHOAL_RT_F16, SHOAL_RED_SUM, 1, "shmemx_half_sum_reduce_on_stream (in place)"},
  {F_STREAM, SHOAL_RT_BF16, SHOAL_RED_MAX, 0, "shmemx_bfloat16_max_reduce_on_stream"},
  {F_STREAM, SHOAL_RT_I8, SHOAL_RED_AND, 0, "shmemx_int8_and_reduce_on_stream"},
  {F_BLOCK, SHOAL_RT_F32, SHOAL_RED_SUM, 0, "shmemx_float_sum_reduce_block"},
  {F_BLOCK, SHOAL_RT_I32, SHOAL_RED_MIN, 0, "shmemx_int32_min_reduce_block"},
  {F_BLOCK, SHOAL_RT_F16, SHOAL_RED_SUM, 1, "shmemx_half_sum_reduce_block (in place)"},
};

static void call(const form &f, shmem_team_t team, void *d, const void *s, size_t n, cudaStream_t st) {
  switch (f.how * 100 + f.type) {
  case F_HOST * 100 + SHOAL_RT_F32: shmem_float_sum_reduce(team, (float *)d, (const float *)s, n); break;
  case F_HOST * 100 + SHOAL_RT_I32: shmem_int_max_reduce(team, (int *)d, (const int *)s, n); break;
  case F_HOST * 100 + SHOAL_RT_F64: shmem_double_prod_reduce(team, (double *)d, (const double *)s, n); break;
  case F_HOST * 100 + SHOAL_RT_U64: shmem_uint64_xor_reduce(team, (uint64_t *)d, (const uint64_t *)s, n); break;
  case F_HOST * 100 + SHOAL_RT_CF32:
    shmem_complexf_sum_reduce(team, (float _Complex *)d, (const float _Complex *)s, n);
    break;
  case F_STREAM * 100 + SHOAL_RT_F32: shmemx_float_sum_reduce_on_stream(team, (float *)d, (const float *)s, n, st); break;
  case F_STREAM * 100 + SHOAL_RT_F16:
    shmemx_half_sum_reduce_on_stream(team, (shmemx_half_t *)d, (const shmemx_half_t *)s, n, st);
    break;
  case F_STREAM * 100 + SHOAL_RT_BF16:
    shmemx_bfloat16_max_reduce_on_stream(team, (shmemx_bfloat16_t *)d, (const shmemx_bfloat16_t *)s, n, st);
    break;
  case F_STREAM * 100 + SHOAL_RT_I8: shmemx_int8_and_reduce_on_stream(team, (int8_t *)d, (const int8_t *)s, n, st); break;
  default:
    k_block<<<2, 256, 0, st>>>(team, f.type == SHOAL_RT_F32 ? 0 : f.type == SHOAL_RT_I32 ? 1 : 2, d, s, n);
    CK(cudaGetLastError());
  }
}

__global__ void lag_kernel(unsigned long long ns) { /* keeps this PE's stream busy for ns */
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); while (t - t0 < ns);
}

/* Small reductions (one exchange) and fcollects into the same dest (the reduction's result covers the whole fcollect
 * output), back to back, team rank 0 late before each reduction; a copy of each reduction's result is taken before the
 * fcollect overwrites it. Odd rounds put the fcollect on a second stream (ordered after the copy by an event: the
 * runtime orders the two streams' collectives itself, args.after). Then a reduction on the second stream after a
 * fcollect on the first. A fcollect that stored into a peer still writing its reduction result would leave reduction
 * values in the fcollect's output. */
static void mixed_b2b(shmem_team_t team, int tn, int tr, char *src, char *dst, size_t big, cudaStream_t st,
                      uint64_t seed) {
  const int K = 16;
  const size_t m = 64, n = (size_t)tn * m / 4; /* fcollect bytes per PE; floats per reduction: its dest is tn x m */
  if ((size_t)(K + 2) * (tn * m + n * 4) > big) return;
  cudaStream_t st2;
  CK(cudaStreamCreateWithFlags(&st2, cudaStreamNonBlocking));
  std::vector<char> in(n * 4), fin(m);
  std::vector<std::vector<char>> exps(K + 1, std::vector<char>(n * 4));
  for (int i = 0; i <= K; i++) {
    red_fill(SHOAL_RT_F32, SHOAL_RED_SUM, seed + i, tr, 0, n, in.data());
    red_reference(SHOAL_RT_F32, SHOAL_RED_SUM, tn, seed + i, n, exps[i].data());
    CK(cudaMemcpy(src + (size_t)i * n * 4, in.data(), n * 4, cudaMemcpyHostToDevice));
  }
  for (size_t j = 0; j < m; j++) fin[j] = (char)(tr * 7 + j);
  char *fsrc = src + (size_t)(K + 1) * n * 4, *copies = dst + (size_t)K * tn * m;
  CK(cudaMemcpy(fsrc, fin.data(), m, cudaMemcpyHostToDevice));
  CK(cudaDeviceSynchronize());
  shmem_team_sync(team);
  cudaEvent_t ev;
  CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
  for (int i = 0; i < K; i++) {
    char *d = dst + (size_t)i * tn * m;
    if (tr == 0) lag_kernel<<<1, 1, 0, st>>>(20000);
    shmemx_float_sum_reduce_on_stream(team, (float *)d, (const float *)(src + (size_t)i * n * 4), n, st);
    CK(cudaMemcpyAsync(copies + (size_t)i * n * 4, d, n * 4, cudaMemcpyDeviceToDevice, st));
    cudaStream_t fs = st;
    if (i % 2) {
      CK(cudaEventRecord(ev, st));
      CK(cudaStreamWaitEvent(st2, ev, 0));
      fs = st2;
    }
    shmemx_fcollectmem_on_stream(team, d, fsrc, m, fs);
    if (i % 2) { /* back to st for the next round, after the fcollect on st2 (its dest is not read again) */
      CK(cudaEventRecord(ev, st2));
      CK(cudaStreamWaitEvent(st, ev, 0));
    }
  }
  char *d2 = copies + (size_t)K * n * 4;
  shmemx_fcollectmem_on_stream(team, dst + (size_t)K * tn * m + (K + 1) * n * 4, fsrc, m, st);
  shmemx_float_sum_reduce_on_stream(team, (float *)d2, (const float *)(src + (size_t)K * n * 4), n, st2);
  CK(cudaStreamSynchronize(st));
  CK(cudaStreamSynchronize(st2));
  std::vector<char> got(tn * m), gotr(n * 4);
  for (int i = 0; i <= K; i++) {
    checks++;
    char l[160];
    snprintf(l, sizeof l, "mixed back-to-back: reduction %d%s", i, i == K ? " (second stream)" : "");
    CK(cudaMemcpy(gotr.data(), copies + (size_t)i * n * 4, n * 4, cudaMemcpyDeviceToHost));
    if (red_compare(SHOAL_RT_F32, tn, exps[i].data(), gotr.data(), n, l, shmem_my_pe())) {
      failures++;
      fprintf(stderr, "FAIL PE %d: %s\n", shmem_my_pe(), l);
    }
    if (i == K) break;
    checks++;
    CK(cudaMemcpy(got.data(), dst + (size_t)i * tn * m, tn * m, cudaMemcpyDeviceToHost));
    for (int q = 0; q < tn; q++)
      for (size_t j = 0; j < m; j++)
        if (got[q * m + j] != (char)(q * 7 + j)) {
          failures++;
          fprintf(stderr, "FAIL PE %d: mixed back-to-back: fcollect %d after a reduction: block %d byte %zu\n",
                  shmem_my_pe(), i, q, j);
          q = tn;
          break;
        }
  }
  shmem_team_sync(team);
  CK(cudaEventDestroy(ev));
  CK(cudaStreamDestroy(st2));
}

int main(int argc, char **argv) {
  size_t max_bytes = (size_t)16 << 20;
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--max-bytes") && i + 1 < argc) max_bytes = strtoull(argv[++i], nullptr, 0);
  shmem_init();
  const int me = shmem_my_pe(), npes = shmem_n_pes();
  shmemx_coll_device_info_t info;
  if (!shmemx_gpu_available() || shmemx_coll_device_info(&info, sizeof info)) {
    if (me == 0) printf("coll_gpu_reduce_shmem: no GPU (or no GPU collectives): skipped\n");
    shmem_finalize();
    return 77;
  }
  CK(cudaSetDevice(shmemx_gpu_device()));
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  uint64_t *seedp = (uint64_t *)shmem_malloc(sizeof(uint64_t));
  if (me == 0) *seedp = (uint64_t)time(nullptr);
  shmem_barrier_all();
  uint64_t seed = shmem_uint64_g(seedp, 0);
  const size_t big = max_bytes;
  char *src = (char *)shmem_malloc_with_hints(3 * big + 4096, SHMEMX_MALLOC_DEVICE);
  char *dst = (char *)shmem_malloc_with_hints(3 * big + 4096, SHMEMX_MALLOC_DEVICE);
  char *hsrc = (char *)shmem_malloc(1 << 16), *hdst = (char *)shmem_malloc(1 << 16);
  if (!src || !dst || !hsrc || !hdst) {
    fprintf(stderr, "PE %d: shmem_malloc_with_hints(%zu, SHMEMX_MALLOC_DEVICE) failed\n", me, 3 * big + 4096);
    shmem_global_exit(1);
  }
  shmem_team_t half = SHMEM_TEAM_INVALID;
  shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (npes + 1) / 2, nullptr, 0, &half);
  const char *df = getenv("SHOAL_TEST_DEVICE_FORMS");
  const bool device_forms = df && *df == '1';
  std::vector<char> in, exp, got;
  for (int ti = 0; ti < 2; ti++) {
    const shmem_team_t team = ti ? half : SHMEM_TEAM_WORLD;
    const int tn = ti ? (npes + 1) / 2 : npes, tr = ti ? (me % 2 ? -1 : me / 2) : me;
    for (const form &f : forms) {
      if (f.how == F_BLOCK && !device_forms) continue;
      const size_t es = shoal_red_type_size(f.type);
      for (size_t nb : {es, (size_t)4096, (size_t)777 * 16 + es, big}) {
        const size_t n = nb / es;
        if (tr >= 0) {
          in.resize(n * es), exp.resize(n * es), got.resize(n * es);
          red_fill(f.type, f.op, seed, tr, 0, n, in.data());
          red_reference(f.type, f.op, tn, seed, n, exp.data());
          CK(cudaMemcpy(src, in.data(), in.size(), cudaMemcpyHostToDevice));
          CK(cudaMemset(dst, 0xa5, in.size()));
          CK(cudaDeviceSynchronize());
          shmem_team_sync(team);
          char *d = f.inplace ? src : dst;
          call(f, team, d, src, n, st);
          CK(cudaMemcpyAsync(got.data(), d, got.size(), cudaMemcpyDeviceToHost, st));
          CK(cudaStreamSynchronize(st));
          checks++;
          char l[200];
          snprintf(l, sizeof l, "%s team %s n=%zu", f.name, ti ? "split" : "world", n);
          if (red_compare(f.type, tn, exp.data(), got.data(), n, l, me)) {
            failures++;
            fprintf(stderr, "FAIL PE %d: %s\n", me, l);
          }
          shmem_team_sync(team);
        }
        seed++;
      }
    }
    /* three on-stream calls back to back, no host synchronization between them */
    if (tr >= 0) {
      const size_t n = 100000;
      std::vector<std::vector<char>> exps(3);
      for (int i = 0; i < 3; i++) {
        in.resize(n * 4);
        red_fill(SHOAL_RT_F32, SHOAL_RED_SUM, seed + i, tr, 0, n, in.data());
        exps[i].resize(n * 4);
        red_reference(SHOAL_RT_F32, SHOAL_RED_SUM, tn, seed + i, n, exps[i].data());
        CK(cudaMemcpy(src + i * big, in.data(), in.size(), cudaMemcpyHostToDevice));
      }
      CK(cudaDeviceSynchronize());
      shmem_team_sync(team);
      for (int i = 0; i < 3; i++)
        shmemx_float_sum_reduce_on_stream(team, (float *)(dst + i * big), (const float *)(src + i * big), n, st);
      for (int i = 0; i < 3; i++) {
        got.resize(n * 4);
        CK(cudaMemcpyAsync(got.data(), dst + i * big, n * 4, cudaMemcpyDeviceToHost, st));
        CK(cudaStreamSynchronize(st));
        checks++;
        if (red_compare(SHOAL_RT_F32, tn, exps[i].data(), got.data(), n, "back-to-back on stream", me)) {
          failures++;
          fprintf(stderr, "FAIL PE %d: back-to-back call %d team %s\n", me, i, ti ? "split" : "world");
        }
      }
      shmem_team_sync(team);
    }
    seed += 3;
    if (tr >= 0) mixed_b2b(team, tn, tr, src, dst, big, st, seed);
    seed += 100;
  }
  /* host buffers: the stream drained, then the host reduction */
  {
    const size_t n = 1000;
    in.resize(n * 4), exp.resize(n * 4);
    red_fill(SHOAL_RT_F32, SHOAL_RED_SUM, seed, me, 0, n, hsrc);
    red_reference(SHOAL_RT_F32, SHOAL_RED_SUM, npes, seed, n, exp.data());
    shmem_barrier_all();
    shmemx_float_sum_reduce_on_stream(SHMEM_TEAM_WORLD, (float *)hdst, (const float *)hsrc, n, st);
    checks++;
    if (red_compare(SHOAL_RT_F32, npes, exp.data(), hdst, n, "host buffers on stream", me)) {
      failures++;
      fprintf(stderr, "FAIL PE %d: host buffers on stream\n", me);
    }
  }
  long *tot = (long *)shmem_calloc(2, sizeof(long));
  shmem_long_atomic_add(&tot[0], failures, 0);
  shmem_long_atomic_add(&tot[1], checks, 0);
  shmem_barrier_all();
  if (me == 0)
    printf("coll_gpu_reduce_shmem %d PEs (%s%s): %ld passed, %ld failed\n", npes,
           getenv("SHOAL_COLL_VARIANT") ? getenv("SHOAL_COLL_VARIANT") : "hoisted",
           device_forms ? ", block forms" : "", tot[1] - tot[0], tot[0]);
  const int rc = tot[0] ? 1 : 0;
  shmem_barrier_all();
  if (half != SHMEM_TEAM_INVALID) shmem_team_destroy(half);
  shmem_free(tot);
  shmem_free(hsrc);
  shmem_free(hdst);
  shmem_free(src);
  shmem_free(dst);
  shmem_free(seedp);
  CK(cudaStreamDestroy(st));
  shmem_finalize();
  return rc;
}
