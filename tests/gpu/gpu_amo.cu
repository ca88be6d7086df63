/* gpu_amo.cu - device AMOs under contention across PEs: fetch_add and inc totals (and every fetched value unique),
 * a compare_swap retry loop, the bitwise ops, swap, set/fetch (integer and floating point), a failing compare_swap.
 *   gpu_amo [BLOCKS THREADS ROUNDS]   the contention kernel's shape (default 4 128 8). The compare_swap loop costs
 *   about THREADS^2 x ROUNDS / 2 attempts per block: on a far PE each is a proxy round trip (tens of us), so the far
 *   runs (gpu-tests.sh) use a smaller shape. PE 0 prints the contention phase's time. */
#include "gpu_test.h"

#include <time.h>

static int NB = 4, NT = 128, K = 8;
#define PER_PE (NB * NT * K)

struct counters {
  long long fadd;              /* PE 0: fetch_add by everyone */
  int inc;                     /* every PE: inc by everyone, spread */
  unsigned long long cas;      /* PE me+1: compare_swap loop by PE me */
  unsigned int uadd;           /* PE 0: atomic_add (no fetch) */
  uint64_t bor, band;          /* PE 0: bit p set / cleared by PE p */
  unsigned int bxor;           /* PE 0: bit p toggled by PE p */
  int swap;                    /* PE 0: every PE swaps its number in */
  long setv;                   /* PE me+1: set by PE me */
  double dset;                 /* PE me+1: set by PE me */
  float fswap;                 /* PE me+1: swapped by PE me */
  int cswap_fail;              /* compare_swap with a wrong condition must leave it */
  unsigned long long nbi;      /* PE 0: fetch_add_nbi by everyone */
};

__global__ void init(counters *c) {
  memset(c, 0, sizeof *c);
  c->band = ~(uint64_t)0;
  c->swap = -1;
  c->fswap = 1.5f;
  c->cswap_fail = 42;
}

__global__ void contend(counters *c, long long *fetched, int K) {
  int me = shmem_my_pe(), n = shmem_n_pes(), next = (me + 1) % n;
  int g = blockIdx.x * blockDim.x + threadIdx.x;
  for (int k = 0; k < K; k++) {
    fetched[g * K + k] = shmem_longlong_atomic_fetch_add(&c->fadd, 1, 0);
    shmem_int_atomic_inc(&c->inc, (g + k) % n);
    unsigned long long o = shmem_ulonglong_atomic_fetch(&c->cas, next), prev;
    while ((prev = shmem_ulonglong_atomic_compare_swap(&c->cas, o, o + 1, next)) != o) o = prev;
    shmem_uint_atomic_add(&c->uadd, 2u, 0);
  }
}

__global__ void bits(counters *c, int *swapped, float *fold, unsigned long long *nbi_old) {
  int me = shmem_my_pe(), n = shmem_n_pes(), next = (me + 1) % n;
  shmem_ulonglong_atomic_fetch_add_nbi(nbi_old, &c->nbi, 5ull, 0);
  shmem_quiet();
  if (me < 64) {
    shmem_uint64_atomic_fetch_or(&c->bor, (uint64_t)1 << me, 0);
    shmem_uint64_atomic_and(&c->band, ~((uint64_t)1 << me), 0);
  }
  if (me < 32) shmem_uint_atomic_xor(&c->bxor, 1u << me, 0);
  *swapped = shmem_int_atomic_swap(&c->swap, me, 0);
  shmem_long_atomic_set(&c->setv, 1000L * me + 7, next);
  shmem_double_atomic_set(&c->dset, 0.25 + me, next);
  *fold = shmem_float_atomic_swap(&c->fswap, 2.5f + me, next);
  int r = shmem_int_atomic_compare_swap(&c->cswap_fail, 41, 7, next);
  if (r != 42) c->cswap_fail = -1000 - r; /* reported through our own copy */
}

__global__ void fetch_next(counters *c, long *setv, double *dset) {
  int next = (shmem_my_pe() + 1) % shmem_n_pes();
  *setv = shmem_long_atomic_fetch(&c->setv, next);
  *dset = shmem_double_atomic_fetch(&c->dset, next);
}

int main(int argc, char **argv) {
  if (argc == 4) NB = atoi(argv[1]), NT = atoi(argv[2]), K = atoi(argv[3]);
  if (NB < 1 || NT < 1 || NT > 1024 || K < 1) {
    fprintf(stderr, "usage: gpu_amo [BLOCKS THREADS(1-1024) ROUNDS]\n");
    return 2;
  }
  t_start("gpu_amo");
  int n = t_npes, me = t_me;
  counters *c = (counters *)t_dmalloc(sizeof(counters));
  long long *fetched = (long long *)t_dmalloc(sizeof(long long) * PER_PE);
  int *swapped;
  float *fold;
  long *setv;
  double *dset;
  GPU_OK(gpuMalloc((void **)&swapped, sizeof(int)));
  GPU_OK(gpuMalloc((void **)&fold, sizeof(float)));
  GPU_OK(gpuMalloc((void **)&setv, sizeof(long)));
  GPU_OK(gpuMalloc((void **)&dset, sizeof(double)));
  LAUNCH_SYNC(init<<<1, 1>>>(c));
  shmem_barrier_all();
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  LAUNCH_SYNC(contend<<<NB, NT>>>(c, fetched, K));
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (me == 0)
    printf("gpu_amo: contention %d x %d threads x %d rounds: %.3f s\n", NB, NT, K,
           (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
  unsigned long long *nbi_old;
  GPU_OK(gpuMalloc((void **)&nbi_old, sizeof(unsigned long long)));
  LAUNCH_SYNC(bits<<<1, 1>>>(c, swapped, fold, nbi_old));
  shmem_barrier_all();
  LAUNCH_SYNC(fetch_next<<<1, 1>>>(c, setv, dset));
  shmem_barrier_all();

  counters h;
  GPU_OK(gpuMemcpy(&h, c, sizeof h, gpuMemcpyDefault));
  long long total = (long long)n * PER_PE;
  /* inc: thread g of every PE hit PE (g + k) % n in round k */
  long long want_inc = 0;
  for (int g = 0; g < NB * NT; g++)
    for (int k = 0; k < K; k++) want_inc += (g + k) % n == me;
  CHECK(h.inc == want_inc * n, "inc total %d, expected %lld", h.inc, want_inc * n);
  CHECK(h.cas == (unsigned long long)PER_PE, "compare_swap loop total %llu, expected %d", h.cas, PER_PE);
  CHECK(h.cswap_fail == 42, "compare_swap with a wrong condition changed the value to %d", h.cswap_fail);
  int prev = (me + n - 1) % n;
  CHECK(h.setv == 1000L * prev + 7, "atomic_set from PE %d: %ld", prev, h.setv);
  CHECK(h.dset == 0.25 + prev, "double atomic_set from PE %d: %g", prev, h.dset);
  CHECK(h.fswap == 2.5f + prev, "float atomic_swap from PE %d: %g", prev, (double)h.fswap);
  long hset;
  double hdset;
  float hfold;
  GPU_OK(gpuMemcpy(&hset, setv, sizeof hset, gpuMemcpyDefault));
  GPU_OK(gpuMemcpy(&hdset, dset, sizeof hdset, gpuMemcpyDefault));
  GPU_OK(gpuMemcpy(&hfold, fold, sizeof hfold, gpuMemcpyDefault));
  CHECK(hset == 1000L * me + 7, "atomic_fetch from PE %d: %ld", (me + 1) % n, hset);
  CHECK(hdset == 0.25 + me, "double atomic_fetch: %g", hdset);
  CHECK(hfold == 1.5f, "float atomic_swap returned %g, expected the initial 1.5", (double)hfold);
  unsigned long long hn;
  GPU_OK(gpuMemcpy(&hn, nbi_old, sizeof hn, gpuMemcpyDefault));
  CHECK(hn % 5 == 0 && hn < 5ull * n, "fetch_add_nbi returned %llu", hn);
  GPU_OK(gpuFree(nbi_old));
  if (me == 0) {
    CHECK(h.nbi == 5ull * n, "fetch_add_nbi total %llu, expected %llu", h.nbi, 5ull * n);
    CHECK(h.fadd == total, "fetch_add total %lld, expected %lld", h.fadd, total);
    CHECK(h.uadd == 2u * (unsigned)total, "atomic_add total %u, expected %u", h.uadd, 2u * (unsigned)total);
    uint64_t mask = n >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << n) - 1);
    CHECK(h.bor == mask, "fetch_or: %#llx, expected %#llx", (unsigned long long)h.bor, (unsigned long long)mask);
    CHECK(h.band == ~mask, "and: %#llx, expected %#llx", (unsigned long long)h.band, (unsigned long long)~mask);
    unsigned xmask = n >= 32 ? ~0u : ((1u << n) - 1);
    CHECK(h.bxor == xmask, "xor: %#x, expected %#x", h.bxor, xmask);
    /* every fetched value of every PE is distinct and in [0, total): read the others' arrays by host RMA */
    char *seen = (char *)calloc((size_t)total, 1);
    long long *buf = (long long *)malloc(sizeof(long long) * PER_PE);
    int dup = 0, out = 0;
    for (int p = 0; p < n; p++) {
      for (int i = 0; i < PER_PE; i++) buf[i] = -1;
      shmem_getmem(buf, fetched, sizeof(long long) * PER_PE, p);
      for (int i = 0; i < PER_PE; i++) {
        if (buf[i] < 0 || buf[i] >= total) out++;
        else dup += seen[buf[i]]++ > 0;
      }
    }
    CHECK(!dup && !out, "fetch_add results: %d duplicates, %d out of range", dup, out);
    free(seen);
    free(buf);
  }
  /* swap: the values returned plus the final one are the initial -1 and every PE number, once each */
  int *sw = (int *)t_dmalloc(sizeof(int));
  int mine_sw;
  GPU_OK(gpuMemcpy(&mine_sw, swapped, sizeof mine_sw, gpuMemcpyDefault));
  shmem_int_p(sw, mine_sw, me); /* host RMA into device memory */
  shmem_barrier_all();
  if (me == 0) {
    char *seen = (char *)calloc((size_t)n + 1, 1);
    int bad = 0;
    for (int p = 0; p <= n; p++) {
      int v = p < n ? shmem_int_g(sw, p) : h.swap; /* host RMA from device memory */
      if (v < -1 || v >= n || seen[v + 1]++) bad++;
    }
    CHECK(!bad, "swap: returned and final values are not {-1, 0..%d} (%d bad)", n - 1, bad);
    free(seen);
  }
  shmem_free(sw);
  GPU_OK(gpuFree(swapped));
  GPU_OK(gpuFree(fold));
  GPU_OK(gpuFree(setv));
  GPU_OK(gpuFree(dset));
  shmem_free(fetched);
  shmem_free(c);
  return t_finish("gpu_amo");
}
