/*
 * coll_gpu_shmem.cu - the GPU collectives through the API, under oshrun (every PE a process; several PEs on one GPU
 * need MPS for their kernels to run at once, else SHOAL_COLL_GPU_SYNC picks the host completion):
 * shmemx_fcollectmem_on_stream / shmemx_alltoallmem_on_stream, shmem_fcollectmem / shmem_alltoallmem and the typed
 * forms (shmem_float/uint16/int8_fcollect/alltoall; the form follows the case's seed) on device-heap buffers over
 * SHMEM_TEAM_WORLD and over a
 * split team (every other PE), fp32/fp16/bf16/int8 from 1 element to --max-bytes per PE, destinations poisoned, inputs
 * from tests/gpu/coll/coll_gpu_testdata.h with a seed shared by the PEs; three calls back to back on the stream with no
 * barrier; host-heap buffers (the host path); and, where available, a kernel that calls the block-scoped device forms.
 * The variant, G, COMM_SMS and tile come from SHOAL_COLL_VARIANT, SHOAL_COLL_GPU_G/_SMS/_TILE.
 *   oshrun -n N coll_gpu_shmem [--max-bytes B]         exit 77 without a GPU
 */
#include <shmem.h>
#include <shmemx.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <vector>

#include <cuda_runtime.h>

#include "coll_gpu_testdata.h"
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

static int me, npes;

/* Block 0 of the grid runs the block-scoped device form; the other blocks do nothing. */
__global__ void k_block(shmem_team_t team, int op, void *dest, const void *src, size_t nb) {
  if (blockIdx.x == 0) {
    if (op) shmemx_alltoallmem_block(team, dest, src, nb);
    else shmemx_fcollectmem_block(team, dest, src, nb);
  }
}
static long failures, checks, forms[3];
static bool trace; /* SHOAL_TEST_TRACE=1: a line per call and section on stderr (where a hang sits) */
#define TRACE(...) (trace ? (void)fprintf(stderr, __VA_ARGS__) : (void)0)

/* Host-to-device upload that has landed when it returns: a pageable cudaMemcpy may return once the bytes are staged,
 * before the DMA reaches device memory, and neither the kernel's non-blocking stream nor a host barrier orders that
 * DMA; without this wait a late poison store overwrites data a peer has already delivered. */
static void upload(void *dst, const void *src, size_t n) {
  CK(cudaMemcpy(dst, src, n, cudaMemcpyHostToDevice));
  CK(cudaDeviceSynchronize());
}

/* One call on team (members tn, my rank tr): fill, poison, barrier, call, read back, check. */
static void one(shmem_team_t team, int tr, int tn, int op, int type, size_t n, uint64_t seed, char *dest, char *src,
                cudaStream_t s, bool device) {
  const size_t es = coll_types[type].size, nb = n * es, nsrc = (op ? tn : 1) * n;
  std::vector<char> in(nsrc * es), exp((size_t)tn * nb), got((size_t)tn * nb);
  coll_fill(type, seed, tr, 0, nsrc, in.data());
  for (int r = 0; r < tn; r++) coll_fill(type, seed, r, op ? (uint64_t)tr * n : 0, n, &exp[r * nb]);
  std::vector<char> poison(exp.size());
  for (size_t i = 0; i < exp.size(); i++) poison[i] = (char)~exp[i];
  if (device) {
    upload(src, in.data(), in.size());
    upload(dest, poison.data(), poison.size());
  } else {
    memcpy(src, in.data(), in.size());
    memcpy(dest, poison.data(), poison.size());
  }
  shmem_team_sync(team); /* every destination is ready before anyone calls */
  /* the call form follows the seed (the same on every member): on-stream, the blocking mem form, the typed form */
  const int form = device ? (int)(seed % 3) : 0;
  int rc;
  TRACE("PE %d: call %s %s n=%zu team %d/%d form %d%s\n", me, op ? "alltoall" : "fcollect", coll_types[type].name, n,
        tr, tn, form, device ? "" : " (host buffers)");
  if (form == 0)
    rc = op ? shmemx_alltoallmem_on_stream(team, dest, src, nb, s) : shmemx_fcollectmem_on_stream(team, dest, src, nb, s);
  else if (form == 1)
    rc = op ? shmem_alltoallmem(team, dest, src, nb) : shmem_fcollectmem(team, dest, src, nb);
  else if (es == 4)
    rc = op ? shmem_float_alltoall(team, (float *)dest, (const float *)src, n)
            : shmem_float_fcollect(team, (float *)dest, (const float *)src, n);
  else if (es == 2)
    rc = op ? shmem_uint16_alltoall(team, (uint16_t *)dest, (const uint16_t *)src, n)
            : shmem_uint16_fcollect(team, (uint16_t *)dest, (const uint16_t *)src, n);
  else
    rc = op ? shmem_int8_alltoall(team, (int8_t *)dest, (const int8_t *)src, n)
            : shmem_int8_fcollect(team, (int8_t *)dest, (const int8_t *)src, n);
  forms[form]++;
  TRACE("PE %d: returned rc %d\n", me, rc);
  if (device) {
    CK(cudaMemcpyAsync(got.data(), dest, got.size(), cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
  } else {
    memcpy(got.data(), dest, got.size());
  }
  size_t bad = 0;
  for (size_t i = 0; i < exp.size(); i += es)
    if (memcmp(&exp[i], &got[i], es) && bad++ < 3)
      fprintf(stderr, "  PE %d: %s %s n=%zu team %d/%d %s: slot %zu element %zu wrong\n", me, op ? "alltoall" : "fcollect",
              coll_types[type].name, n, tr, tn, device ? "device" : "host", i / es / n, (i / es) % n);
  checks++;
  if (bad || rc) {
    failures++;
    fprintf(stderr, "FAIL PE %d: %s %s n=%zu (%zu bad, rc %d)\n", me, op ? "alltoall" : "fcollect", coll_types[type].name,
            n, bad, rc);
  }
  shmem_team_sync(team); /* nobody poisons the next case while a peer still reads this one */
}

int main(int argc, char **argv) {
  size_t max_bytes = (size_t)64 << 20;
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--max-bytes") && i + 1 < argc) max_bytes = strtoull(argv[++i], nullptr, 0);
  trace = getenv("SHOAL_TEST_TRACE") && *getenv("SHOAL_TEST_TRACE") == '1';
  shmem_init();
  me = shmem_my_pe();
  npes = shmem_n_pes();
  shmemx_coll_device_info_t info;
  const bool gpu = shmemx_gpu_available() && shmemx_coll_device_info(&info, sizeof info) == 0;
  if (!gpu) {
    if (me == 0) printf("coll_gpu_shmem: no GPU (or no GPU collectives): skipped\n");
    shmem_finalize();
    return 77;
  }
  CK(cudaSetDevice(shmemx_gpu_device()));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  uint64_t *seedp = (uint64_t *)shmem_malloc(sizeof(uint64_t));
  if (me == 0) *seedp = (uint64_t)time(nullptr);
  shmem_barrier_all();
  const uint64_t seed0 = shmem_uint64_g(seedp, 0);
  /* largest per-PE block: destination npes * n and (alltoall) source npes * n on each PE's device heap */
  size_t dev_total = 0, dev_free = 0;
  shmemx_device_heap_info(&dev_total, &dev_free);
  size_t big = max_bytes;
  while (big > 4096 && 2 * (size_t)npes * big * 3 + (1 << 20) > dev_free) big /= 2;
  const size_t nslots = 3; /* back-to-back needs three destinations */
  char *dest = (char *)shmem_malloc_with_hints(nslots * npes * big + 4096, SHMEMX_MALLOC_DEVICE);
  char *src = (char *)shmem_malloc_with_hints(nslots * npes * big + 4096, SHMEMX_MALLOC_DEVICE);
  char *hdest = (char *)shmem_malloc((size_t)npes * 65536 * 4);
  char *hsrc = (char *)shmem_malloc((size_t)npes * 65536 * 4);
  if (!dest || !src || !hdest || !hsrc) {
    fprintf(stderr, "PE %d: shmem_malloc_with_hints(%zu, SHMEMX_MALLOC_DEVICE) failed\n", me, nslots * npes * big);
    shmem_global_exit(1);
  }
  uint64_t seed = seed0;
  for (int op = 0; op < 2; op++)
    for (int t = 0; t < COLL_NTYPES; t++) {
      const size_t es = coll_types[t].size;
      std::vector<size_t> ns = {1, 3, 4095, 65537, (big / es) - 1, big / es};
      for (size_t n : ns)
        if (n && n * es <= big) one(SHMEM_TEAM_WORLD, me, npes, op, t, n, seed++, dest, src, s, true);
    }
  TRACE("PE %d: section: split team\n", me);
  /* a split team: every other PE */
  shmem_team_t half;
  shmem_team_config_t cfg;
  memset(&cfg, 0, sizeof cfg);
  shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (npes + 1) / 2, &cfg, 0, &half);
  if (half != SHMEM_TEAM_INVALID) {
    const int tr = shmem_team_my_pe(half), tn = shmem_team_n_pes(half);
    uint64_t hs = seed;
    for (int op = 0; op < 2; op++)
      for (size_t n : {(size_t)1, (size_t)100003}) one(half, tr, tn, op, COLL_FP32, n, hs++, dest, src, s, true);
    shmem_team_destroy(half);
  }
  seed += 4; /* on every PE, members of the split team or not: the seed must stay the same on all PEs */
  TRACE("PE %d: section: back to back\n", me);
  /* back to back: three calls enqueued with no barrier in between, then one check; on one stream, and on two streams
   * (the second call on another stream: the kernels order their completions on the device, args.after); grid calls
   * and one-block calls (4000 bytes per PE: one fence, programmatic dependent launch) */
  cudaStream_t s2;
  CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  for (int mode = 0; mode < 4; mode++) {
    const bool two = mode & 2;
    const size_t n = mode & 1 ? 1000 : 50001, nb = n * 4, area = (size_t)npes * nb;
    std::vector<std::vector<char>> exp(nslots);
    for (size_t k = 0; k < nslots; k++) {
      const int op = (int)(k % 2);
      std::vector<char> in((op ? npes : 1) * nb);
      coll_fill(COLL_FP32, seed + k, me, 0, in.size() / 4, in.data());
      upload(src + k * area, in.data(), in.size());
      exp[k].resize(area);
      for (int r = 0; r < npes; r++) coll_fill(COLL_FP32, seed + k, r, op ? (uint64_t)me * n : 0, n, &exp[k][r * nb]);
      std::vector<char> poison(area);
      for (size_t i = 0; i < area; i++) poison[i] = (char)~exp[k][i];
      upload(dest + k * area, poison.data(), area);
    }
    shmem_barrier_all();
    for (size_t k = 0; k < nslots; k++)
      (k % 2 ? shmemx_alltoallmem_on_stream : shmemx_fcollectmem_on_stream)(SHMEM_TEAM_WORLD, dest + k * area,
                                                                           src + k * area, nb, two && k == 1 ? s2 : s);
    CK(cudaStreamSynchronize(s2));
    std::vector<char> got(nslots * area);
    CK(cudaMemcpyAsync(got.data(), dest, got.size(), cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    for (size_t k = 0; k < nslots; k++) {
      checks++;
      if (memcmp(got.data() + k * area, exp[k].data(), area)) {
        failures++;
        fprintf(stderr, "FAIL PE %d: back-to-back call %zu (%s, %zu bytes per PE)\n", me, k,
                two ? "two streams" : "one stream", nb);
      }
    }
    seed += nslots;
    shmem_barrier_all();
  }
  /* block-scoped device forms (the PEs' kernels must run at once: MPS or one PE per GPU; the caller says so) */
  const char *df = getenv("SHOAL_TEST_DEVICE_FORMS");
  if (df && *df == '1') {
    TRACE("PE %d: section: device forms\n", me);
    if (shmemx_coll_init_device_state()) shmem_global_exit(1);
    for (int op = 0; op < 2; op++)
      for (int t = 0; t < COLL_NTYPES; t++)
        for (size_t n : {(size_t)1, (size_t)777, (size_t)65536}) {
          const size_t es = coll_types[t].size, nb = n * es, nsrc = (op ? npes : 1) * n;
          std::vector<char> in(nsrc * es), exp((size_t)npes * nb), got(exp.size()), poison(exp.size());
          coll_fill(t, seed, me, 0, nsrc, in.data());
          for (int r = 0; r < npes; r++) coll_fill(t, seed, r, op ? (uint64_t)me * n : 0, n, &exp[r * nb]);
          for (size_t i = 0; i < exp.size(); i++) poison[i] = (char)~exp[i];
          upload(src, in.data(), in.size());
          upload(dest, poison.data(), poison.size());
          shmem_barrier_all();
          k_block<<<2, 256, 0, s>>>(SHMEM_TEAM_WORLD, op, dest, src, nb);
          CK(cudaGetLastError());
          CK(cudaMemcpyAsync(got.data(), dest, got.size(), cudaMemcpyDeviceToHost, s));
          CK(cudaStreamSynchronize(s));
          checks++;
          if (memcmp(got.data(), exp.data(), exp.size())) {
            failures++;
            fprintf(stderr, "FAIL PE %d: device form %s %s n=%zu\n", me, op ? "alltoall" : "fcollect",
                    coll_types[t].name, n);
          }
          seed++;
          shmem_barrier_all();
        }
  }
  TRACE("PE %d: section: host buffers\n", me);
  /* host buffers: the host path, the stream drained first */
  for (int op = 0; op < 2; op++) one(SHMEM_TEAM_WORLD, me, npes, op, COLL_INT8, 65536, seed++, hdest, hsrc, s, false);

  long *tot = (long *)shmem_calloc(2, sizeof(long));
  shmem_long_atomic_add(&tot[0], failures, 0);
  shmem_long_atomic_add(&tot[1], checks, 0);
  shmem_barrier_all();
  if (me == 0)
    printf("coll_gpu_shmem %d PEs (%s): %ld passed, %ld failed (PE 0's device calls: %ld on-stream, %ld mem, "
           "%ld typed)\n", npes, getenv("SHOAL_COLL_VARIANT") ? getenv("SHOAL_COLL_VARIANT") : "hoisted",
           tot[1] - tot[0], tot[0], forms[0], forms[1], forms[2]);
  const int rc = tot[0] ? 1 : 0;
  shmem_barrier_all();
  shmem_free(tot);
  shmem_free(hsrc);
  shmem_free(hdest);
  shmem_free(src);
  shmem_free(dest);
  shmem_free(seedp);
  CK(cudaStreamDestroy(s));
  CK(cudaStreamDestroy(s2));
  shmem_finalize();
  return rc;
}
