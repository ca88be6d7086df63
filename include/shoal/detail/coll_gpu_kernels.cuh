/*
 * shoal/detail/coll_gpu_kernels.cuh - device side of the GPU fcollect / alltoall (single source: nvcc and hipcc):
 * libshoal's grid kernels (collectives/gpu/coll_gpu.cu) and the block forms of <shoal/shmem_coll_device.cuh>.
 * NOT ABI: may change in any release, with no notice; programs include <shoal/shmem_coll_device.cuh>, never
 * this file.
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
#include <stddef.h>
#include <stdint.h>

#include "coll_gpu_defs.h"
#include "gpu_port.cuh"

namespace shoal_cg {

enum { OP_FCOLLECT = SHOAL_COLL_GPU_FCOLLECT, OP_ALLTOALL = SHOAL_COLL_GPU_ALLTOALL, OP_BCAST = SHOAL_COLL_GPU_BCAST };
enum { VAR_HOISTED = SHOAL_COLL_GPU_HOISTED, VAR_NAIVE = SHOAL_COLL_GPU_NAIVE };
constexpr int NT = SHOAL_COLL_GPU_THREADS;
constexpr int VPT = SHOAL_COLL_GPU_VPT;

/* Kernel parameters (by value: they live in the constant bank / kernel argument segment). */
struct params {
  char *const *peer_base; /* [npes] heap bases */
  const char *src;
  size_t dst_off, nbytes, tile, flag_off;
  unsigned long long timeout_ns, after;
  shoal_coll_gpu_sync_t *sync;
  int me, npes, wait;
  int root;      /* OP_BCAST: the root's team index */
  int gpu_scope; /* 1: every PE runs on this GPU, so device-scope fences and flags suffice; 0: system scope */
  int small;     /* 1: a grid of one block completes with complete_one_block */
  int pdl;       /* 1: launched with programmatic dependent launch (the griddepcontrol instructions run) */
#ifdef SHOAL_COLL_GPU_TRACE /* perf/bench_gpu_floor.cu's copy of the kernels only: globaltimer stamps per call */
  unsigned long long *trace; /* [calls][SHOAL_COLL_GPU_TRACE_N] */
#endif
};
#ifdef SHOAL_COLL_GPU_TRACE
enum { TR_ENTRY, TR_DATA, TR_ARRIVE, TR_SIGNALED, TR_DONE, SHOAL_COLL_GPU_TRACE_N = 8 };
#define SHOAL_TRACE(p, call, k) ((p).trace[(size_t)(call) * SHOAL_COLL_GPU_TRACE_N + (k)] = shoal_port::clock_ns())
#else
#define SHOAL_TRACE(p, call, k) ((void)0)
#endif

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

/* Destination pointers of group g (destinations g .. g + G - 1 in rotated order) and, for alltoall, the source block
 * each one takes. Generic W: a slot past npes is nullptr. HOISTED reads the pointers computed before the tile loop;
 * NAIVE reloads the base (volatile) and recomputes the output pointer, per call: once per destination and chunk. */
template <int OP, int VAR, int W, int G, typename V>
__device__ __forceinline__ void group_dst(const params &p, int g, int npes, char *const *dreg, char **s_tab, char **dp) {
#pragma unroll
  for (int d = 0; d < G; d++) {
    const int k = g + d;
    if (W == 0 && k >= npes) { dp[d] = nullptr; continue; }
    if (VAR == VAR_HOISTED) dp[d] = W ? dreg[W ? k : 0] : s_tab[k];
    else
      dp[d] = shoal_port::peer(load_base_volatile(p.peer_base, rot(p.me, k, npes)), p.dst_off) + (size_t)p.me * p.nbytes;
  }
}
template <int OP, int VAR, int W, int G, typename V>
__device__ __forceinline__ void group_src(const params &p, int g, int npes, size_t n, const V *src, const V *const *sreg,
                                          char **s_tab, const V **sp) {
#pragma unroll
  for (int d = 0; d < G; d++) {
    const int k = g + d;
    if (W == 0 && k >= npes) { sp[d] = nullptr; continue; }
    if (VAR == VAR_HOISTED) sp[d] = W ? sreg[W ? k : 0] : (const V *)s_tab[npes + k];
    else sp[d] = src + (size_t)rot(p.me, k, npes) * n;
  }
}

/* Walk this block's tiles (BT: the block's threads when known at compile time, 0: blockDim.x). V is the vector type (uint4 where src, dst_off and nbytes are 16-byte aligned, else unsigned
 * char); W = 0 is the generic path (W from p.npes); G divides W for W != 0. s_tab: generic HOISTED only, shared memory of
 * npes (fcollect) or 2 npes (alltoall) pointers.
 * P = 0: a thread loads its chunk (alltoall: a group's G chunks), waits for the loads, stores them, then loads the next.
 * P = 1 (pipelined): the loads of the next step (next group, or the next chunk of this thread) are issued before the
 *        stores of this one, so that load latency overlaps the stores; twice the registers for the loaded vectors. */
template <int OP, int VAR, int W, int G, typename V, int BT = NT, int P = 0>
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
        dreg[k] = shoal_port::peer(p.peer_base[pe], out);
        sreg[k] = src + (size_t)pe * n;
      }
    } else {
      for (int k = threadIdx.x; k < npes; k += blockDim.x) {
        const int pe = rot(me, k, npes);
        s_tab[k] = shoal_port::peer(p.peer_base[pe], out);
        if (OP == OP_ALLTOALL) s_tab[npes + k] = (char *)(src + (size_t)pe * n);
      }
      __syncthreads();
    }
  }
  constexpr int NGROUPS = W ? W / G : 1; /* W != 0: the destination loop unrolls fully; generic W: a loop */
  (void)NGROUPS;
  constexpr int NB = OP == OP_FCOLLECT ? 1 : G; /* loaded chunks held per step: fcollect its one input */

  if (P == 0) {
#pragma unroll 1
    for (size_t t = first; t < ntiles; t += stride) {
      const size_t t0 = t * te;
      const size_t tend = t0 + te < n ? t0 + te : n;
#pragma unroll 1 /* one chunk per iteration: the loop body is the unit the resource report counts */
      for (size_t c = t0 + threadIdx.x; c < tend; c += bt * VPT) {
        V v[NB][VPT];
        if (OP == OP_FCOLLECT) { /* the tile's input: loaded once, stored to every destination */
#pragma unroll
          for (int j = 0; j < VPT; j++)
            if (c + (size_t)j * bt < tend) v[0][j] = src[c + (size_t)j * bt];
        }
#pragma unroll NGROUPS
        for (int g = 0; g < npes; g += G) {
          char *dp[G];
          group_dst<OP, VAR, W, G, V>(p, g, npes, dreg, s_tab, dp);
          if (OP == OP_ALLTOALL) { /* destination k takes block k of the source: G x VPT loads, then the stores */
            const V *sp[G];
            group_src<OP, VAR, W, G, V>(p, g, npes, n, src, sreg, s_tab, sp);
#pragma unroll
            for (int d = 0; d < G; d++)
#pragma unroll
              for (int j = 0; j < VPT; j++)
                if ((W || sp[d]) && c + (size_t)j * bt < tend) v[OP == OP_FCOLLECT ? 0 : d][j] = sp[d][c + (size_t)j * bt];
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
    return;
  }

  /* P = 1. A step is (chunk position, group); the position walks this thread's chunks tile by tile. */
  struct pos_t { size_t t, c, tend; };
  auto seek = [&](size_t t, pos_t &q) -> bool { /* first tile from t in which this thread has a chunk */
    for (; t < ntiles; t += stride) {
      const size_t t0 = t * te;
      const size_t tend = t0 + te < n ? t0 + te : n;
      if (t0 + threadIdx.x < tend) {
        q.t = t, q.c = t0 + threadIdx.x, q.tend = tend;
        return true;
      }
    }
    return false;
  };
  auto advance = [&](pos_t &q) -> bool {
    const size_t c = q.c + bt * VPT;
    if (c < q.tend) {
      q.c = c;
      return true;
    }
    return seek(q.t + stride, q);
  };
  auto load = [&](V (*v)[VPT], const V *const *sp, const pos_t &q) {
#pragma unroll
    for (int d = 0; d < NB; d++)
#pragma unroll
      for (int j = 0; j < VPT; j++)
        if ((W || sp[d]) && q.c + (size_t)j * bt < q.tend) v[d][j] = sp[d][q.c + (size_t)j * bt];
  };
  /* the stores of group g (destinations g .. g + G - 1) of the chunk at q; fcollect stores its one input everywhere */
  auto store = [&](V (*v)[VPT], int g, const pos_t &q) {
    char *dp[G];
    group_dst<OP, VAR, W, G, V>(p, g, npes, dreg, s_tab, dp);
#pragma unroll
    for (int j = 0; j < VPT; j++) {
      const size_t i = q.c + (size_t)j * bt;
      if (i < q.tend) {
#pragma unroll
        for (int d = 0; d < G; d++)
          if (W || dp[d]) ((V *)dp[d])[i] = v[OP == OP_FCOLLECT ? 0 : d][j];
      }
    }
  };
  pos_t q;
  bool ok = seek(first, q);
  V a[NB][VPT];
  if (ok) {
    const V *sp[NB];
    if (OP == OP_FCOLLECT) sp[0] = src;
    else group_src<OP, VAR, W, NB, V>(p, 0, npes, n, src, sreg, s_tab, sp);
    load(a, sp, q);
  }
#pragma unroll 1
  while (ok) {
    pos_t r = q;
    const bool ok2 = advance(r);
    if (OP == OP_FCOLLECT) { /* the next chunk's input, then this one's stores to every destination */
      V b[1][VPT];
      const V *sp[1] = {src};
      if (ok2) load(b, sp, r);
#pragma unroll NGROUPS
      for (int g = 0; g < npes; g += G) store(a, g, q);
#pragma unroll
      for (int j = 0; j < VPT; j++) a[0][j] = b[0][j];
    } else { /* the next group's chunks (or the next chunk's first group), then this group's stores */
#pragma unroll NGROUPS
      for (int g = 0; g < npes; g += G) {
        V b[NB][VPT];
        const V *sp[NB];
        if (g + G < npes) {
          group_src<OP, VAR, W, NB, V>(p, g + G, npes, n, src, sreg, s_tab, sp);
          load(b, sp, q);
        } else if (ok2) {
          group_src<OP, VAR, W, NB, V>(p, 0, npes, n, src, sreg, s_tab, sp);
          load(b, sp, r);
        }
        store(a, g, q);
#pragma unroll
        for (int d = 0; d < NB; d++)
#pragma unroll
          for (int j = 0; j < VPT; j++) a[d][j] = b[d][j];
      }
    }
    q = r;
    ok = ok2;
  }
}

/* Completion of one PE's call, run by one block after every block of this PE has stored its tiles (ordered by the
 * caller): signal every peer, then wait for every peer's signal. Flag of source s at destination d: 8 bytes at
 * peer_base[d] + flag_off + 8 s, set to the call's epoch with a system-scope release; never reset. With a timeout, a
 * peer not heard from in time is recorded in sync->blocks as SHOAL_COLL_GPU_TIMED_OUT | s and the wait ends (no
 * printf or trap in the kernel: they cost stack, scratch and registers in every variant); the host checks it. */
__device__ __forceinline__ void fence(const params &p) {
  if (p.gpu_scope) __threadfence();
  else __threadfence_system();
}
/* Calls on another stream first (p.after, see coll_gpu.h): wait until this PE's epoch has reached p.after. */
__device__ __forceinline__ void wait_turn(const params &p) {
  if (!p.after) return;
  const unsigned long long *e = &p.sync->epoch;
  while ((p.gpu_scope ? shoal_port::ld_acquire_gpu(e) : shoal_port::ld_acquire_sys(e)) < p.after) shoal_port::pause();
}
__device__ __forceinline__ void set_epoch(const params &p, unsigned long long e) {
  if (p.gpu_scope) shoal_port::st_relaxed_gpu(&p.sync->epoch, e);
  else shoal_port::st_relaxed_sys(&p.sync->epoch, e);
}

/* Wait for every peer's flag to reach epoch (the caller's threads share the polling), then a block barrier. */
__device__ __forceinline__ void wait_peers(const params &p, unsigned long long epoch) {
  const int npes = p.npes, me = p.me;
  const unsigned long long *mine = (const unsigned long long *)shoal_port::peer(p.peer_base[me], p.flag_off);
  for (int s = threadIdx.x; s < npes; s += blockDim.x) {
    if (s == me) continue;
    unsigned long long t0 = 0;
    while ((p.gpu_scope ? shoal_port::ld_acquire_gpu(mine + s) : shoal_port::ld_acquire_sys(mine + s)) < epoch) {
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
__device__ __forceinline__ void signal_and_wait(const params &p, unsigned long long epoch) {
  const int npes = p.npes, me = p.me;
  for (int k = threadIdx.x; k < npes - 1; k += blockDim.x) {
    const int pe = rot(me, k, npes);
    fence(p);
    unsigned long long *f = (unsigned long long *)shoal_port::peer(p.peer_base[pe], p.flag_off) + me;
    if (p.gpu_scope) shoal_port::st_release_gpu(f, epoch);
    else shoal_port::st_release_sys(f, epoch);
  }
  if (threadIdx.x == 0) SHOAL_TRACE(p, epoch - 1, TR_SIGNALED);
  wait_peers(p, epoch);
}
/* The completion of a one-block call (every small call): no arrival counter and one fence, by thread 0, which then
 * sets every peer's flag with relaxed stores (fence + relaxed store: the PTX release pattern, so the fence orders the
 * block's data stores, observed by thread 0 through the barrier, before every flag). Measured against the grid
 * completion: docs/gpu-collectives.md "The small-message floor". */
__device__ __forceinline__ void complete_one_block(const params &p) {
  __shared__ unsigned long long epoch1;
  __syncthreads();
  if (threadIdx.x == 0) {
#ifdef SHOAL_COLL_GPU_TRACE
    const unsigned long long t_data = shoal_port::clock_ns();
#endif
    fence(p);
    wait_turn(p);
    const unsigned long long e = p.sync->epoch + 1;
    set_epoch(p, e);
    epoch1 = e;
#ifdef SHOAL_COLL_GPU_TRACE
    p.trace[(size_t)(e - 1) * SHOAL_COLL_GPU_TRACE_N + TR_DATA] = t_data;
    SHOAL_TRACE(p, e - 1, TR_ARRIVE);
#endif
    for (int k = 0; k < p.npes - 1; k++) {
      unsigned long long *f =
          (unsigned long long *)shoal_port::peer(p.peer_base[rot(p.me, k, p.npes)], p.flag_off) + p.me;
      if (p.gpu_scope) shoal_port::st_relaxed_gpu(f, e);
      else shoal_port::st_relaxed_sys(f, e);
    }
    SHOAL_TRACE(p, e - 1, TR_SIGNALED);
  }
  __syncthreads();
  wait_peers(p, epoch1);
  if (threadIdx.x == 0) SHOAL_TRACE(p, epoch1 - 1, TR_DONE);
}

/* The grid kernel: a persistent grid walks the tiles; with p.wait the last block to finish runs the completion. */
template <int OP, int VAR, int W, int G, typename V, int P>
__global__ void __launch_bounds__(NT, 1) coll_kernel(params p) {
  SHOAL_DYN_SHARED(char *, s_tab);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  /* Launched with programmatic dependent launch (one-block calls), this grid may start before the stream's previous
   * kernel has ended: wait for it (and its memory) before touching sync, source or destination; let the stream's next
   * kernel, if launched the same way, start early in turn. Both are no-ops in a grid launched without it, which skips
   * them (uniform branch) so that large grids run the code of before programmatic launch existed. */
  if (p.pdl) {
    asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  }
#endif
#ifdef SHOAL_COLL_GPU_TRACE
  if (blockIdx.x == 0 && threadIdx.x == 0) SHOAL_TRACE(p, p.sync->epoch, TR_ENTRY); /* the previous call has ended */
#endif
  if (OP == OP_BCAST) { /* fcollect's data path on the root alone, as PE 0 (it stores to dest, not to a slot) */
    params q = p;
    q.me = 0;
    if (p.me != p.root) q.nbytes = 0;
    walk_tiles<OP_FCOLLECT, VAR, W, G, V, NT, P>(q, blockIdx.x, gridDim.x, s_tab);
  } else {
    walk_tiles<OP, VAR, W, G, V, NT, P>(p, blockIdx.x, gridDim.x, s_tab);
  }
  if (!p.wait) return;
  if (p.small && gridDim.x == 1) { /* uniform: the whole grid takes one side */
    complete_one_block(p);
    return;
  }
  __shared__ int last;
  __shared__ unsigned long long epoch;
  __syncthreads();
  if (threadIdx.x == 0) {
#ifdef SHOAL_COLL_GPU_TRACE
    const unsigned long long t_data = shoal_port::clock_ns();
#endif
    fence(p); /* this block's stores before its arrival */
    wait_turn(p); /* the counter is free: every earlier call has passed its arrival */
    const unsigned prev = atomicAdd(&p.sync->blocks, 1u);
    last = prev == gridDim.x - 1;
    if (last) {
      p.sync->blocks = 0;                 /* ready for the next call */
      epoch = p.sync->epoch + 1;          /* this PE's calls on these flags, counted on the device */
      fence(p);                           /* every block's stores (observed through the counter) before the signals,
                                             and the reset counter before the epoch that frees it (wait_turn) */
      set_epoch(p, epoch);
#ifdef SHOAL_COLL_GPU_TRACE
      p.trace[(size_t)(epoch - 1) * SHOAL_COLL_GPU_TRACE_N + TR_DATA] = t_data;
      SHOAL_TRACE(p, epoch - 1, TR_ARRIVE);
#endif
    }
  }
  __syncthreads();
  if (last) {
    signal_and_wait(p, epoch);
    if (threadIdx.x == 0) SHOAL_TRACE(p, epoch - 1, TR_DONE);
  }
}

#ifndef SHOAL_COLL_GPU_NO_PICK /* (units that reuse the templates, e.g. coll_gpu_reduce.cu: no fcollect kernels) */
/* The kernel for a call: op, variant, W class (2, 4, 8 or 0 = generic), G (clamped to W), vector width (16 or 1) and
 * pipelining (P; the byte path has none). */
typedef void (*kernel_fn)(params);
template <int OP, int VAR, int W, typename V, int P> kernel_fn pick_g(int g) {
  if constexpr (sizeof(V) == 1) return coll_kernel<OP, VAR, W, 1, V, 0>; /* byte path: one destination at a time */
  else switch (g) {
  case 1: return coll_kernel<OP, VAR, W, 1, V, P>;
  case 2: return coll_kernel<OP, VAR, W, (W == 0 || W >= 2) ? 2 : W, V, P>;
  case 4: return coll_kernel<OP, VAR, W, (W == 0 || W >= 4) ? 4 : W, V, P>;
  default: return coll_kernel<OP, VAR, W, (W == 0 || W >= 8) ? 8 : W, V, P>;
  }
}
template <int OP, int VAR, typename V, int P> kernel_fn pick_w(int wclass, int g) {
  switch (wclass) {
  case 2: return pick_g<OP, VAR, 2, V, P>(g);
  case 4: return pick_g<OP, VAR, 4, V, P>(g);
  case 8: return pick_g<OP, VAR, 8, V, P>(g);
  default: return pick_g<OP, VAR, 0, V, P>(g);
  }
}
template <int OP, typename V, int P> kernel_fn pick_var(int var, int wclass, int g) {
  return var == VAR_NAIVE ? pick_w<OP, VAR_NAIVE, V, P>(wclass, g) : pick_w<OP, VAR_HOISTED, V, P>(wclass, g);
}
template <int OP, int P> kernel_fn pick_vec(int var, int wclass, int g, int vec) {
  return vec == 16 ? pick_var<OP, uint4, P>(var, wclass, g) : pick_var<OP, unsigned char, 0>(var, wclass, g);
}
template <int OP> kernel_fn pick_pipe(int var, int wclass, int g, int vec, int pipe) {
  return pipe ? pick_vec<OP, 1>(var, wclass, g, vec) : pick_vec<OP, 0>(var, wclass, g, vec);
}
kernel_fn pick(int op, int var, int wclass, int g, int vec, int pipe) {
  return op == OP_ALLTOALL ? pick_pipe<OP_ALLTOALL>(var, wclass, g, vec, pipe)
         : op == OP_BCAST  ? pick_pipe<OP_BCAST>(var, wclass, g, vec, pipe)
                           : pick_pipe<OP_FCOLLECT>(var, wclass, g, vec, pipe);
}
#endif

} // namespace shoal_cg
#endif
