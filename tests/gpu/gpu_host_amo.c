/* gpu_host_amo.c - host-initiated atomics on device symmetric memory (shoal_gpu_amo: a one-thread kernel on the
 * target through the IPC mapping), as the AMO routines use them for device objects. Every PE adds to PE 0's
 * counters (32- and 64-bit) under contention; fetched values must be distinct; compare-swap, swap, set, fetch and
 * the bitwise ops are checked against their definitions. PEs of other nodes are reached by the public AMOs. Exit 77
 * without a GPU or without the AMO kernel (HIP). */
#include "heap_gpu.h"

#include <stdio.h>
#include <stdlib.h>

#define ITERS 200

static int fails, me;
#define CHECK(c, ...)                                                                                                 \
  do {                                                                                                                 \
    if (!(c)) {                                                                                                        \
      fails++;                                                                                                         \
      fprintf(stderr, "PE %d: FAIL line %d: ", me, __LINE__);                                                          \
      fprintf(stderr, __VA_ARGS__);                                                                                    \
      fputc('\n', stderr);                                                                                             \
    }                                                                                                                  \
  } while (0)

/* The public AMO that does op on a device object of a PE of another node (the staged device-space AMO of the
 * transport: issue 31 part 1); shoal_gpu_amo reaches this node's PEs only. */
static uint64_t far_amo(void *dest, int op, size_t size, uint64_t v, uint64_t c, int pe) {
  if (size == 4) {
    uint32_t *d = dest, v4 = (uint32_t)v;
    switch (op) {
    case SHOAL_GPU_AMO_ADD: return shmem_uint32_atomic_fetch_add(d, v4, pe);
    case SHOAL_GPU_AMO_FETCH: return shmem_uint32_atomic_fetch(d, pe);
    default: break;
    }
  } else {
    uint64_t *d = dest;
    switch (op) {
    case SHOAL_GPU_AMO_FETCH: return shmem_uint64_atomic_fetch(d, pe);
    case SHOAL_GPU_AMO_SET: shmem_uint64_atomic_set(d, v, pe); return 0;
    case SHOAL_GPU_AMO_SWAP: return shmem_uint64_atomic_swap(d, v, pe);
    case SHOAL_GPU_AMO_CSWAP: return shmem_uint64_atomic_compare_swap(d, c, v, pe);
    case SHOAL_GPU_AMO_ADD: return shmem_uint64_atomic_fetch_add(d, v, pe);
    case SHOAL_GPU_AMO_AND: return shmem_uint64_atomic_fetch_and(d, v, pe);
    case SHOAL_GPU_AMO_OR: return shmem_uint64_atomic_fetch_or(d, v, pe);
    case SHOAL_GPU_AMO_XOR: return shmem_uint64_atomic_fetch_xor(d, v, pe);
    default: break;
    }
  }
  fprintf(stderr, "PE %d: no public AMO for op %d size %zu\n", me, op, size);
  shmem_global_exit(2);
  return 0;
}

/* op on pe's dest: shoal_gpu_amo for this node's PEs (and this PE), the public AMO for PEs of other nodes (every PE
 * its own node under SHOAL_NODE_PES=1: the far run of scripts/gpu-tests.sh). */
static uint64_t amo(void *dest, int op, size_t size, uint64_t v, uint64_t c, int pe) {
  if (shmem_team_translate_pe(SHMEM_TEAM_WORLD, pe, SHMEM_TEAM_SHARED) < 0) return far_amo(dest, op, size, v, c, pe);
  uint64_t old = 0;
  shoal_status_t rc = shoal_gpu_amo("gpu_host_amo", dest, op, size, v, c, &old, pe);
  if (rc) {
    fprintf(stderr, "PE %d: shoal_gpu_amo op %d failed: %d\n", me, op, rc);
    shmem_global_exit(2);
  }
  return old;
}

int main(void) {
  shmem_init();
  me = shmem_my_pe();
  int n = shmem_n_pes();
  uint64_t probe;
  if (!shmemx_gpu_available() || shoal_gpu_amo("probe", NULL, 0, 8, 0, 0, &probe, 0) != SHOAL_ERR_INVAL) {
    if (me == 0) printf("gpu_host_amo: SKIP: no GPU\n");
    fflush(stdout);
    shmem_finalize();
    return 77;
  }
  struct { uint64_t c64, bits, sw, set; uint32_t c32, pad; } *d = shmem_malloc_with_hints(64, SHMEMX_MALLOC_DEVICE);
  uint64_t *seen = shmem_malloc(sizeof(uint64_t) * ITERS * (size_t)n); /* host heap: fetched values, on PE 0 */
  memset(seen, 0, sizeof(uint64_t) * ITERS * (size_t)n);
  uint64_t init[4] = {0, 0, 0, 0};
  uint32_t init32[2] = {0, 0};
  shmem_putmem(&d->c64, init, sizeof init, me); /* host RMA into our own device memory */
  shmem_putmem(&d->c32, init32, sizeof init32, me);
  shmem_barrier_all();
  if (shoal_gpu_amo("probe", d, 0, 8, 0, 0, &probe, 0) == SHOAL_ERR_NOSYS) { /* HIP: no runtime kernel yet */
    if (me == 0) printf("gpu_host_amo: SKIP: the %s backend has no host-side AMO kernel\n", shoal_gpu_ops.name);
    shmem_finalize();
    return 77;
  }
  for (int i = 0; i < ITERS; i++) {
    uint64_t old = amo(&d->c64, SHOAL_GPU_AMO_ADD, 8, 1, 0, 0);
    shmem_uint64_p(&seen[me * ITERS + i], old, 0);
    amo(&d->c32, SHOAL_GPU_AMO_ADD, 4, 3, 0, 0);
  }
  if (me < 64) amo(&d->bits, SHOAL_GPU_AMO_OR, 8, (uint64_t)1 << me, 0, 0);
  uint64_t swapped = amo(&d->sw, SHOAL_GPU_AMO_SWAP, 8, (uint64_t)me + 1, 0, 0);
  amo(&d->set, SHOAL_GPU_AMO_SET, 8, 0x1234, 0, (me + 1) % n);
  shmem_barrier_all();
  CHECK(amo(&d->set, SHOAL_GPU_AMO_FETCH, 8, 0, 0, me) == 0x1234, "set/fetch");
  CHECK(amo(&d->set, SHOAL_GPU_AMO_CSWAP, 8, 7, 0x9999, me) == 0x1234, "failing compare-swap returned a new value");
  CHECK(amo(&d->set, SHOAL_GPU_AMO_FETCH, 8, 0, 0, me) == 0x1234, "failing compare-swap changed the value");
  CHECK(amo(&d->set, SHOAL_GPU_AMO_CSWAP, 8, 7, 0x1234, me) == 0x1234, "compare-swap");
  CHECK(amo(&d->set, SHOAL_GPU_AMO_XOR, 8, 3, 0, me) == 7 && amo(&d->set, SHOAL_GPU_AMO_AND, 8, 0, 0, me) == 4,
        "xor / and");
  shmem_barrier_all();
  if (me == 0) {
    CHECK(amo(&d->c64, SHOAL_GPU_AMO_FETCH, 8, 0, 0, 0) == (uint64_t)n * ITERS, "64-bit total");
    CHECK(amo(&d->c32, SHOAL_GPU_AMO_FETCH, 4, 0, 0, 0) == 3u * n * ITERS, "32-bit total");
    uint64_t mask = n >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << n) - 1;
    CHECK(amo(&d->bits, SHOAL_GPU_AMO_FETCH, 8, 0, 0, 0) == mask, "or bits");
    char *hit = calloc((size_t)n * ITERS, 1);
    int dup = 0;
    for (int i = 0; i < n * ITERS; i++) dup += seen[i] >= (uint64_t)n * ITERS || hit[seen[i]]++;
    CHECK(!dup, "%d fetched values repeated or out of range", dup);
    free(hit);
  }
  /* swap: returned values plus the final one are 0 (initial) and 1..n */
  uint64_t *sw = shmem_malloc(sizeof(uint64_t) * ((size_t)n + 1));
  shmem_uint64_p(&sw[me], swapped, 0);
  shmem_barrier_all();
  if (me == 0) {
    sw[n] = amo(&d->sw, SHOAL_GPU_AMO_FETCH, 8, 0, 0, 0);
    char *hit = calloc((size_t)n + 1, 1);
    int bad = 0;
    for (int p = 0; p <= n; p++) bad += sw[p] > (uint64_t)n || hit[sw[p]]++;
    CHECK(!bad, "swap values");
    free(hit);
  }
  shmem_free(sw);
  shmem_free(seen);
  shmem_free(d);
  if (me == 0) printf("gpu_host_amo: %s with %d PEs\n", fails ? "FAIL" : "PASS", n);
  shmem_finalize();
  return fails ? 1 : 0;
}
