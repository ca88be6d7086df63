/*
 * coll_gpu_kernels.cuh - device side of the GPU fcollect / alltoall (single source: nvcc and hipcc).
 *
 * One block walks tiles t = first, first + stride, ... (the grid kernel: blockIdx.x, gridDim.x; a block-scoped call from
 * a user kernel: 0, 1). A tile is `tile` bytes of the PE's block; each thread loads VPT vectors of it (coalesced, one
 * load per element per tile) and stores them to every destination, destination order rotated per PE (PE me starts
 * with me + 1). Destinations are stored in groups of G: a group's pointers (and for alltoall its G x VPT loaded
 * vectors) are what is live across the stores.
 *
 *   HOISTED: every destination pointer (peer heap base + this PE's output offset) is computed once before the tile loop
 *            and kept in registers (W = 2, 4, 8: template constants, the destination loop unrolls fully) or in shared
 *            memory (generic W); in the loop only the element offset is added.
 *   NAIVE:   the reference design: inside the tile loop and inside the destination loop it reloads the peer's base from
 *            the global table, through a volatile pointer so that the compiler cannot hoist the load (nvcc does hoist
 *            a plain load out of this loop), and recomputes the output pointer from it.
 */
#ifndef SHOAL_COLL_GPU_KERNELS_CUH
#define SHOAL_COLL_GPU_KERNELS_CUH
#include "coll_gpu.h"
#include "coll_gpu_port.h"

namespace shoal_cg {

enum { OP_FCOLLECT = SHOAL_COLL_GPU_FCOLLECT, OP_ALLTOALL = SHOAL_COLL_GPU_ALLTOALL };
enum { VAR_HOISTED = SHOAL_COLL_GPU_HOISTED, VAR_NAIVE = SHOAL_COLL_GPU_NAIVE };
constexpr int NT = SHOAL_COLL_GPU_THREADS;
constexpr int VPT = SHOAL_COLL_GPU_VPT;

/* Kernel parameters (by value: they live in the constant bank / kernel argument segment). */
struct params {
  char *const *peer_base; /* [npes] heap bases */
  const char *src;
  size_t dst_off, nbytes, tile, flag_off;
  unsigned long long timeout_ns;
  shoal_coll_gpu_sync_t *sync;
  int me, npes, wait;
};

/* PE of the k-th destination in this PE's order: me + 1 + k modulo npes. */
__device__ __forceinline__ int rot(int me, int k, int npes) {
  int pe = me + 1 + k;
  return pe >= npes ? pe - npes : pe; /* me < npes and k < npes: me + 1 + k < 2 npes */
}

/* NAIVE's table read: a volatile load is performed where it is written, once per evaluation. */
__device__ __forceinline__ char *load_base_volatile(char *const *tab, int pe) {
  typedef char *volatile vptr;
  return ((const vptr *)tab)[pe];
}

/* Walk this block's tiles (BT: the block's threads when known at compile time, 0: blockDim.x). V is the vector type (uint4 where src, dst_off and nbytes are 16-byte aligned, else unsigned
 * char); W = 0 is the generic path (W from p.npes); G divides W for W != 0. s_tab: generic HOISTED only, shared memory of
 * npes (fcollect) or 2 npes (alltoall) pointers. */
template <int OP, int VAR, int W, int G, typename V, int BT = NT>
__device__ __forceinline__ void walk_tiles(const params &p, size_t first, size_t stride, char **s_tab) {
  const size_t bt = BT ? BT : blockDim.x; /* threads of the block: NT for the grid kernel, any for the device forms */
  const int npes = W ? W : p.npes;
  const int me = p.me;
  const size_t n = p.nbytes / sizeof(V); /* elements of one PE block */
  const size_t te = p.tile / sizeof(V);  /* elements of one tile */
  const size_t ntiles = (n + te - 1) / te;
  const V *__restrict__ src = (const V *)p.src;

  /* HOISTED: destination pointers with the output offset folded in, and (alltoall) source block pointers, rotated. */
  char *dreg[W ? W : 1];
  const V *sreg[W ? W : 1];
  if (VAR == VAR_HOISTED) {
    const size_t out = p.dst_off + (size_t)me * p.nbytes;
    if (W) {
#pragma unroll
      for (int k = 0; k < (W ? W : 1); k++) {
        const int pe = rot(me, k, npes);
        dreg[k] = p.peer_base[pe] + out;
        sreg[k] = src + (size_t)pe * n;
      }
    } else {
      for (int k = threadIdx.x; k < npes; k += blockDim.x) {
        const int pe = rot(me, k, npes);
        s_tab[k] = p.peer_base[pe] + out;
        if (OP == OP_ALLTOALL) s_tab[npes + k] = (char *)(src + (size_t)pe * n);
      }
      __syncthreads();
    }
  }

#pragma unroll 1
  for (size_t t = first; t < ntiles; t += stride) {
    const size_t t0 = t * te;
    const size_t tend = t0 + te < n ? t0 + te : n;
#pragma unroll 1 /* one chunk per iteration: the loop body is the unit the resource report counts */
    for (size_t c = t0 + threadIdx.x; c < tend; c += bt * VPT) {
      V v[OP == OP_FCOLLECT ? 1 : G][VPT];
      if (OP == OP_FCOLLECT) { /* the tile's input: loaded once, stored to every destination */
#pragma unroll
        for (int j = 0; j < VPT; j++)
          if (c + (size_t)j * bt < tend) v[0][j] = src[c + (size_t)j * bt];
      }
      constexpr int NGROUPS = W ? W / G : 1; /* W != 0: the destination loop unrolls fully; generic W: a loop */
      (void)NGROUPS;
#pragma unroll NGROUPS
      for (int g = 0; g < npes; g += G) {
        char *dp[G];
        const V *sp[G];
#pragma unroll
        for (int d = 0; d < G; d++) {
          const int k = g + d;
          if (W == 0 && k >= npes) { dp[d] = nullptr; sp[d] = nullptr; continue; }
          if (VAR == VAR_HOISTED) {
            dp[d] = W ? dreg[W ? k : 0] : s_tab[k];
            sp[d] = W ? sreg[W ? k : 0] : (const V *)s_tab[npes + k];
          } else { /* NAIVE: reload the base and recompute the pointers, per tile and destination */
            const int pe = rot(me, k, npes);
            dp[d] = load_base_volatile(p.peer_base, pe) + p.dst_off + (size_t)me * p.nbytes;
            sp[d] = src + (size_t)pe * n;
          }
        }
        if (OP == OP_ALLTOALL) { /* destination k takes block k of the source: G x VPT loads, then the stores */
#pragma unroll
          for (int d = 0; d < G; d++)
#pragma unroll
            for (int j = 0; j < VPT; j++)
              if ((W || dp[d]) && c + (size_t)j * bt < tend) v[OP == OP_FCOLLECT ? 0 : d][j] = sp[d][c + (size_t)j * bt];
        }
#pragma unroll
        for (int j = 0; j < VPT; j++) {
          const size_t i = c + (size_t)j * bt;
          if (i < tend) {
#pragma unroll
            for (int d = 0; d < G; d++)
              if (W || dp[d]) ((V *)dp[d])[i] = v[OP == OP_FCOLLECT ? 0 : d][j];
          }
        }
      }
    }
  }
}

/* Completion of one PE's call, run by one block after every block of this PE has stored its tiles (ordered by the
 * caller): signal every peer, then wait for every peer's signal. Flag of source s at destination d: 8 bytes at
 * peer_base[d] + flag_off + 8 s, set to the call's epoch with a system-scope release; never reset. With a timeout, a
 * peer not heard from in time is recorded in sync->blocks as SHOAL_COLL_GPU_TIMED_OUT | s and the wait ends (no
 * printf or trap in the kernel: they cost stack, scratch and registers in every variant); the host checks it. */
__device__ __forceinline__ void signal_and_wait(const params &p, unsigned long long epoch) {
  const int npes = p.npes, me = p.me;
  for (int k = threadIdx.x; k < npes - 1; k += blockDim.x) {
    const int pe = rot(me, k, npes);
    __threadfence_system();
    unsigned long long *f = (unsigned long long *)(p.peer_base[pe] + p.flag_off) + me;
    shoal_port::st_release_sys(f, epoch);
  }
  const unsigned long long *mine = (const unsigned long long *)(p.peer_base[me] + p.flag_off);
  for (int s = threadIdx.x; s < npes; s += blockDim.x) {
    if (s == me) continue;
    unsigned long long t0 = 0;
    while (shoal_port::ld_acquire_sys(mine + s) < epoch) {
      shoal_port::pause();
      if (p.timeout_ns) {
        const unsigned long long now = shoal_port::clock_ns();
        if (!t0) t0 = now;
        else if (now - t0 > p.timeout_ns) {
          atomicExch(&p.sync->blocks, SHOAL_COLL_GPU_TIMED_OUT | (unsigned)s);
          break;
        }
      }
    }
  }
  __syncthreads();
}

/* The grid kernel: a persistent grid walks the tiles; with p.wait the last block to finish runs the completion. */
template <int OP, int VAR, int W, int G, typename V>
__global__ void __launch_bounds__(NT, 1) coll_kernel(params p) {
  SHOAL_DYN_SHARED(char *, s_tab);
  walk_tiles<OP, VAR, W, G, V>(p, blockIdx.x, gridDim.x, s_tab);
  if (!p.wait) return;
  __shared__ int last;
  __shared__ unsigned long long epoch;
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence_system(); /* this block's stores before its arrival */
    const unsigned prev = atomicAdd(&p.sync->blocks, 1u);
    last = prev == gridDim.x - 1;
    if (last) {
      p.sync->blocks = 0;                 /* ready for the next call */
      epoch = p.sync->epoch + 1;          /* this PE's calls on these flags, counted on the device */
      p.sync->epoch = epoch;
      __threadfence_system();             /* every block's stores (observed through the counter) before the signals */
    }
  }
  __syncthreads();
  if (last) signal_and_wait(p, epoch);
}

/* The kernel for a call: op, variant, W class (2, 4, 8 or 0 = generic), G (clamped to W) and vector width (16 or 1). */
typedef void (*kernel_fn)(params);
template <int OP, int VAR, int W, typename V> kernel_fn pick_g(int g) {
  if constexpr (sizeof(V) == 1) return coll_kernel<OP, VAR, W, 1, V>; /* byte path: one destination at a time */
  else switch (g) {
  case 1: return coll_kernel<OP, VAR, W, 1, V>;
  case 2: return coll_kernel<OP, VAR, W, (W == 0 || W >= 2) ? 2 : W, V>;
  case 4: return coll_kernel<OP, VAR, W, (W == 0 || W >= 4) ? 4 : W, V>;
  default: return coll_kernel<OP, VAR, W, (W == 0 || W >= 8) ? 8 : W, V>;
  }
}
template <int OP, int VAR, typename V> kernel_fn pick_w(int wclass, int g) {
  switch (wclass) {
  case 2: return pick_g<OP, VAR, 2, V>(g);
  case 4: return pick_g<OP, VAR, 4, V>(g);
  case 8: return pick_g<OP, VAR, 8, V>(g);
  default: return pick_g<OP, VAR, 0, V>(g);
  }
}
template <int OP, typename V> kernel_fn pick_var(int var, int wclass, int g) {
  return var == VAR_NAIVE ? pick_w<OP, VAR_NAIVE, V>(wclass, g) : pick_w<OP, VAR_HOISTED, V>(wclass, g);
}
kernel_fn pick(int op, int var, int wclass, int g, int vec) {
  if (op == OP_ALLTOALL)
    return vec == 16 ? pick_var<OP_ALLTOALL, uint4>(var, wclass, g) : pick_var<OP_ALLTOALL, unsigned char>(var, wclass, g);
  return vec == 16 ? pick_var<OP_FCOLLECT, uint4>(var, wclass, g) : pick_var<OP_FCOLLECT, unsigned char>(var, wclass, g);
}

} // namespace shoal_cg
#endif
