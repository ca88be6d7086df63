/*
 * shoal/detail/coll_gpu_reduce.cuh - device side of the GPU reduction to all (single source: nvcc, hipcc, and the CPU
 * emulation): libshoal's grid kernels (collectives/gpu/coll_gpu_reduce.cu) and the block forms of
 * <shoal/shmem_coll_device.cuh>.
 * NOT ABI: may change in any release, with no notice; programs include <shoal/shmem_coll_device.cuh>, never
 * this file.
 *
 * PE me owns slice me of the call's 16-byte vectors (ceil(nv / W) of them; the few elements past the last whole vector
 * belong to PE W - 1, reduced by scalar code). Its blocks walk the slice's tiles like coll_gpu_kernels.cuh's walk_tiles:
 * per chunk a thread loads VPT vectors from every PE's source (PE order 0 .. W-1, so that every PE's result has the same
 * bits), combines them in the accumulator type (float for fp16 / bf16), and stores the VPT result vectors into every
 * PE's dest (destination order rotated per PE, me + 1 first, so that the PEs' stores spread over the heaps).
 *   HOISTED: every source and destination pointer (peer base + offset + slice start) is computed once before the tile
 *            loop: in registers for W = 2, 4, 8 (template constants: the PE loops unroll fully), in shared memory for
 *            any other W.
 *   NAIVE:   the reference design: the peer's base is reloaded from the global table (volatile) for every source and
 *            every destination of every chunk, and the pointers recomputed from it.
 * Completion: shoal_cg::signal_and_wait, twice per call (entry, exit; coll_gpu_reduce.h).
 */
#ifndef SHOAL_COLL_GPU_REDUCE_CUH
#define SHOAL_COLL_GPU_REDUCE_CUH
#include <stdint.h>
#include <string.h>

#ifndef SHOAL_COLL_GPU_NO_PICK
#define SHOAL_COLL_GPU_NO_PICK
#endif
#include "coll_gpu_defs.h"
#include "coll_gpu_kernels.cuh"

namespace shoal_cr {
using shoal_cg::NT;
using shoal_cg::VPT;
using shoal_cg::params;

/* Storage types without a C++ arithmetic type. */
struct h16 { uint16_t b; };              /* IEEE binary16 bits */
struct b16 { uint16_t b; };              /* bfloat16 bits */
struct cf32 { float re, im; };            /* float _Complex */
struct cf64 { double re, im; };           /* double _Complex */

__host__ __device__ __forceinline__ uint32_t f2u(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
__host__ __device__ __forceinline__ float u2f(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}
/* binary16 <-> float, exact / round to nearest even (subnormals, infinities, NaN kept). */
__host__ __device__ __forceinline__ float h2f(uint16_t h) {
#if defined(__CUDA_ARCH__)
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
#else
  const uint32_t s = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  if (!e) {
    const float f = (float)m * 5.9604644775390625e-8f; /* m * 2^-24 */
    return s ? -f : f;
  }
  return u2f(s | (e == 31 ? 0x7f800000u | (m << 13) : ((e + 112) << 23) | (m << 13)));
#endif
}
__host__ __device__ __forceinline__ uint16_t f2h(float f) {
#if defined(__CUDA_ARCH__)
  unsigned short h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
#else
  uint32_t x = f2u(f);
  const uint16_t s = (uint16_t)((x >> 16) & 0x8000);
  x &= 0x7fffffff;
  if (x >= 0x7f800000u) return (uint16_t)(s | 0x7c00 | (x > 0x7f800000u ? 0x200 : 0));
  if (x >= 0x477ff000u) return (uint16_t)(s | 0x7c00); /* 65520 and above round to infinity */
  if (x < 0x38800000u) /* below 2^-14: the 2^-24 grid of the subnormals, by adding 0.5 (whose ulp is 2^-24) */
    return (uint16_t)(s | (f2u(u2f(x) + 0.5f) - 0x3f000000u));
  x += 0xc8000fffu + ((x >> 13) & 1); /* rebias the exponent (-112 << 23) and round to nearest even */
  return (uint16_t)(s | (x >> 13));
#endif
}
__host__ __device__ __forceinline__ float bf2f(uint16_t b) { return u2f((uint32_t)b << 16); }
__host__ __device__ __forceinline__ uint16_t f2bf(float f) {
  const uint32_t x = f2u(f);
  if ((x & 0x7fffffff) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40); /* NaN stays NaN */
  return (uint16_t)((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

/* Accumulator type of each storage type, and the conversions. Narrow integers widen to 32 bits (unsigned stays
 * unsigned, so that a product wraps instead of overflowing int). */
template <typename T> struct tr {
  typedef T acc;
  static __host__ __device__ __forceinline__ acc in(T v) { return v; }
  static __host__ __device__ __forceinline__ T out(acc a) { return a; }
};
#define SHOAL_CR_WIDEN(T, A)                                                                                          \
  template <> struct tr<T> {                                                                                           \
    typedef A acc;                                                                                                     \
    static __host__ __device__ __forceinline__ acc in(T v) { return v; }                                               \
    static __host__ __device__ __forceinline__ T out(acc a) { return (T)a; }                                           \
  };
SHOAL_CR_WIDEN(int8_t, int)
SHOAL_CR_WIDEN(uint8_t, unsigned)
SHOAL_CR_WIDEN(int16_t, int)
SHOAL_CR_WIDEN(uint16_t, unsigned)
#undef SHOAL_CR_WIDEN
template <> struct tr<h16> {
  typedef float acc;
  static __host__ __device__ __forceinline__ acc in(h16 v) { return h2f(v.b); }
  static __host__ __device__ __forceinline__ h16 out(acc a) { return h16{f2h(a)}; }
};
template <> struct tr<b16> {
  typedef float acc;
  static __host__ __device__ __forceinline__ acc in(b16 v) { return bf2f(v.b); }
  static __host__ __device__ __forceinline__ b16 out(acc a) { return b16{f2bf(a)}; }
};

/* a OP b. */
template <int OP, typename A> __host__ __device__ __forceinline__ A apply(A a, A b) {
  if constexpr (OP == SHOAL_RED_SUM) return a + b;
  else if constexpr (OP == SHOAL_RED_PROD) return a * b;
  else if constexpr (OP == SHOAL_RED_MIN) return b < a ? b : a;
  else if constexpr (OP == SHOAL_RED_MAX) return a < b ? b : a;
  else if constexpr (OP == SHOAL_RED_AND) return a & b;
  else if constexpr (OP == SHOAL_RED_OR) return a | b;
  else return a ^ b;
}
template <int OP, typename C> __host__ __device__ __forceinline__ C capply(C a, C b) {
  if constexpr (OP == SHOAL_RED_SUM) return C{a.re + b.re, a.im + b.im};
  else return C{a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
template <> __host__ __device__ __forceinline__ cf32 apply<SHOAL_RED_SUM, cf32>(cf32 a, cf32 b) {
  return capply<SHOAL_RED_SUM>(a, b);
}
template <> __host__ __device__ __forceinline__ cf32 apply<SHOAL_RED_PROD, cf32>(cf32 a, cf32 b) {
  return capply<SHOAL_RED_PROD>(a, b);
}
template <> __host__ __device__ __forceinline__ cf64 apply<SHOAL_RED_SUM, cf64>(cf64 a, cf64 b) {
  return capply<SHOAL_RED_SUM>(a, b);
}
template <> __host__ __device__ __forceinline__ cf64 apply<SHOAL_RED_PROD, cf64>(cf64 a, cf64 b) {
  return capply<SHOAL_RED_PROD>(a, b);
}

/* Kernel parameters: the fcollect's (flags, sync, completion; c.src unused, c.nbytes = bytes of the vector) and the
 * reduction's own. */
struct rparams {
  params c;
  size_t src_off, nelems;
  size_t ll_off, ll_half; /* red_ll_kernel: the scratch (shoal_coll_gpu_red_args_t) */
  unsigned long long peers_after; /* red_ll_kernel: 0, or wait until every peer's flag here has reached it */
  int entry; /* 1: this (one-block) kernel runs the entry exchange before its data */
};
enum { VAR_LL = 2 }; /* rpick's variant for red_ll_kernel */

/* Slice of PE me: whole vectors [lo, hi) of nv. */
__device__ __forceinline__ void slice(size_t nv, int me, int npes, size_t *lo, size_t *hi) {
  const size_t per = (nv + npes - 1) / npes, l = (size_t)me * per;
  *lo = l < nv ? l : nv;
  *hi = *lo + per < nv ? *lo + per : nv;
}

/* Reduce this block's tiles of the slice (tiles first, first + stride, ...). V: uint4 (16-byte path: src_off and
 * dst_off 16-byte aligned) or T (element path). BT: threads per block at compile time, 0 = blockDim.x. s_tab: generic
 * HOISTED only, 2 npes pointers of shared memory. */
template <int OP, typename T, int VAR, int W, typename V, int BT = NT>
__device__ __forceinline__ void red_walk(const rparams &p, size_t first, size_t stride, char **s_tab) {
  typedef tr<T> R;
  typedef typename R::acc A;
  constexpr int E = sizeof(V) / sizeof(T); /* elements per vector */
  static_assert(E >= 1 && sizeof(V) % sizeof(T) == 0, "vector of whole elements");
  const size_t bt = BT ? BT : blockDim.x;
  const int npes = W ? W : p.c.npes, me = p.c.me;
  char *const *tab = p.c.peer_base;
  const size_t nv = p.nelems / E;
  size_t lo, hi;
  slice(nv, me, npes, &lo, &hi);
  const size_t L = hi - lo;
  const size_t te = p.c.tile / sizeof(V) ? p.c.tile / sizeof(V) : 1;
  const size_t ntiles = (L + te - 1) / te;
  constexpr int UW = W ? W : 1; /* the PE loops unroll fully for W != 0 */
  const V *sreg[UW];
  V *dreg[UW];
  if (VAR == shoal_cg::VAR_HOISTED) {
    if (W) {
#pragma unroll
      for (int k = 0; k < (W ? W : 1); k++) {
        sreg[k] = (const V *)shoal_port::peer(tab[k], p.src_off) + lo;
        dreg[k] = (V *)shoal_port::peer(tab[shoal_cg::rot(me, k, npes)], p.c.dst_off) + lo;
      }
    } else {
      for (int k = threadIdx.x; k < npes; k += blockDim.x) {
        s_tab[k] = (char *)((const V *)shoal_port::peer(tab[k], p.src_off) + lo);
        s_tab[npes + k] = (char *)((V *)shoal_port::peer(tab[shoal_cg::rot(me, k, npes)], p.c.dst_off) + lo);
      }
      __syncthreads();
    }
  }
  auto src_of = [&](int k) -> const V * {
    if (VAR == shoal_cg::VAR_HOISTED) return W ? sreg[W ? k : 0] : (const V *)s_tab[k];
    return (const V *)shoal_port::peer(shoal_cg::load_base_volatile(tab, k), p.src_off) + lo;
  };
  auto dst_of = [&](int k) -> V * {
    if (VAR == shoal_cg::VAR_HOISTED) return W ? dreg[W ? k : 0] : (V *)s_tab[npes + k];
    return (V *)shoal_port::peer(shoal_cg::load_base_volatile(tab, shoal_cg::rot(me, k, npes)), p.c.dst_off) + lo;
  };
#pragma unroll 1
  for (size_t t = first; t < ntiles; t += stride) {
    const size_t t0 = t * te;
    const size_t tend = t0 + te < L ? t0 + te : L;
#pragma unroll 1
    for (size_t c = t0 + threadIdx.x; c < tend; c += bt * VPT) {
      A acc[VPT][E];
#pragma unroll UW
      for (int k = 0; k < npes; k++) {
        const V *sp = src_of(k);
        V v[VPT];
#pragma unroll
        for (int j = 0; j < VPT; j++)
          if (c + (size_t)j * bt < tend) v[j] = sp[c + (size_t)j * bt];
#pragma unroll
        for (int j = 0; j < VPT; j++) {
          T e[E]; /* (memcpy, not a cast: no aliasing of uint4 as T; compiles to register moves) */
          memcpy(e, &v[j], sizeof(V));
#pragma unroll
          for (int q = 0; q < E; q++) acc[j][q] = k ? apply<OP, A>(acc[j][q], R::in(e[q])) : R::in(e[q]);
        }
      }
      V o[VPT];
#pragma unroll
      for (int j = 0; j < VPT; j++) {
        T e[E];
#pragma unroll
        for (int q = 0; q < E; q++) e[q] = R::out(acc[j][q]);
        memcpy(&o[j], e, sizeof(V));
      }
#pragma unroll UW
      for (int k = 0; k < npes; k++) {
        V *dp = dst_of(k);
#pragma unroll
        for (int j = 0; j < VPT; j++)
          if (c + (size_t)j * bt < tend) dp[c + (size_t)j * bt] = o[j];
      }
    }
  }
  /* The elements past the last whole vector (fewer than E): PE npes - 1, the block of tile 0. */
  if (E > 1 && me == npes - 1 && first == 0) {
    for (size_t i = nv * E + threadIdx.x; i < p.nelems; i += bt) {
      A a = R::in(((const T *)shoal_port::peer(tab[0], p.src_off))[i]);
      for (int k = 1; k < npes; k++) a = apply<OP, A>(a, R::in(((const T *)shoal_port::peer(tab[k], p.src_off))[i]));
      const T r = R::out(a);
      for (int k = 0; k < npes; k++) ((T *)shoal_port::peer(tab[shoal_cg::rot(me, k, npes)], p.c.dst_off))[i] = r;
    }
  }
}

/* The entry exchange, by one block: this PE's source is ready and its dest free (every earlier write to them is
 * before this kernel on its stream); wait until every peer says the same. Epoch: this call's first. */
__device__ __forceinline__ void entry(const params &c) {
  shoal_cg::complete_one_block(c); /* one fence, thread 0 signals, waits its turn (args.after) first */
}
/* Programmatic dependent launch (small grids, coll_gpu_reduce.cu): wait for the stream's previous kernel, then let the
 * next one start early; no-ops in a grid launched without it. */
__device__ __forceinline__ void pdl_entry(const params &c) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (c.pdl) {
    asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  }
#else
  (void)c;
#endif
}
template <int X = 0> /* (a template: defined in every unit that includes this, no duplicate symbol) */
__global__ void __launch_bounds__(64, 1) red_entry_kernel(params c) {
  pdl_entry(c);
  entry(c);
}

/* The data grid: with p.entry (one block) the entry first; with c.wait the last block to finish runs the exit
 * exchange (as coll_gpu_kernels.cuh's coll_kernel). */
template <int OP, typename T, int VAR, int W, typename V>
__global__ void __launch_bounds__(NT, 1) red_kernel(rparams p) {
  SHOAL_DYN_SHARED(char *, s_tab);
  pdl_entry(p.c);
  if (p.entry) entry(p.c);
  /* an entry exchange that timed out (here or in the entry kernel) leaves its mark for the host: nothing more runs */
  if (p.c.wait && (*(volatile unsigned *)&p.c.sync->blocks & SHOAL_COLL_GPU_TIMED_OUT)) return;
  red_walk<OP, T, VAR, W, V, NT>(p, blockIdx.x, gridDim.x, s_tab);
  if (!p.c.wait) return;
  if (gridDim.x == 1) { /* one block: the exit as a small fcollect's (one fence, thread 0 signals) */
    shoal_cg::complete_one_block(p.c);
    return;
  }
  __shared__ int last;
  __shared__ unsigned long long epoch;
  __syncthreads();
  if (threadIdx.x == 0) {
    shoal_cg::fence(p.c);
    const unsigned prev = atomicAdd(&p.c.sync->blocks, 1u);
    last = prev == gridDim.x - 1;
    if (last) {
      p.c.sync->blocks = 0;
      epoch = p.c.sync->epoch + 1;
      shoal_cg::fence(p.c); /* the reset counter before the epoch that frees it (wait_turn) */
      shoal_cg::set_epoch(p.c, epoch);
    }
  }
  __syncthreads();
  if (last) shoal_cg::signal_and_wait(p.c, epoch);
}

/* Tag of epoch e's one-exchange records: never 0 (the zeroed scratch); period 2^32 - 1 epochs. */
__host__ __device__ __forceinline__ unsigned ll_tag(unsigned long long e) { return 1u + (unsigned)(e % 0xffffffffull); }

/* The one-exchange call (coll_gpu_reduce.h; one block): records of this PE's source into its row of every peer's
 * scratch half e % 2, its own source into its row of the staging (shared memory, [npes][rv] 16-byte vectors); then the
 * peers' records, polled until their tags are this call's, into their rows; then each vector reduced over the rows in
 * PE order and stored into this PE's dest (the tail vector element by element). */
template <int OP, typename T>
__global__ void __launch_bounds__(NT, 1) red_ll_kernel(rparams p) {
  SHOAL_DYN_SHARED(uint4, stage);
  typedef tr<T> R;
  typedef typename R::acc A;
  constexpr int E = sizeof(uint4) / sizeof(T) ? sizeof(uint4) / sizeof(T) : 1;
  pdl_entry(p.c);
  const params &c = p.c;
  const int npes = c.npes, me = c.me;
  const size_t nb = c.nbytes, nw = (nb + 7) / 8, rv = (nb + 15) / 16, bt = blockDim.x;
  __shared__ unsigned long long epoch_s;
  if (threadIdx.x == 0) {
    shoal_cg::wait_turn(c);
    epoch_s = c.sync->epoch + 1;
  }
  if (p.peers_after) /* the last call went to another stream and had only arrived: every peer has passed it */
    shoal_cg::wait_peers(c, p.peers_after);
  __syncthreads();
  const unsigned long long e = epoch_s, tag = (unsigned long long)ll_tag(e) << 32, lo32 = 0xffffffffull;
  const size_t half = (size_t)(e & 1) * p.ll_half;
  const char *src = shoal_port::peer(c.peer_base[me], p.src_off);
  unsigned long long *st64 = (unsigned long long *)stage;
  if (nw & 1) /* the unused half of each row's last vector: zero (reduced with the rest, never stored) */
    for (int k = threadIdx.x; k < npes; k += bt) st64[(size_t)k * 2 * rv + nw] = 0;
  for (size_t w = threadIdx.x; w < nw; w += bt) {
    unsigned long long v = 0;
    if (8 * w + 8 <= nb) v = ((const unsigned long long *)src)[w];
    else memcpy(&v, src + 8 * w, nb - 8 * w);
    st64[(size_t)me * 2 * rv + w] = v;
    const unsigned long long a = (v & lo32) | tag, b = (v >> 32) | tag;
    for (int k = 0; k < npes - 1; k++) {
      char *row = shoal_port::peer(c.peer_base[shoal_cg::rot(me, k, npes)], p.ll_off) + half;
      shoal_port::st_rec((unsigned long long *)row + ((size_t)me * nw + w) * 2, a, b);
    }
  }
#ifdef SHOAL_COLL_GPU_EMULATE
  if (shoal_emu_ll_lag_us && threadIdx.x == 0) usleep(shoal_emu_ll_lag_us); /* a slow reader (the test's) */
#endif
  const unsigned long long *mine = (const unsigned long long *)(shoal_port::peer(c.peer_base[me], p.ll_off) + half);
  const size_t items = (size_t)(npes - 1) * nw;
  constexpr int B = 4; /* records whose loads are in flight together per thread */
#pragma unroll 1
  for (size_t i0 = threadIdx.x; i0 < items; i0 += bt * B) {
    unsigned long long a[B], b[B];
    size_t at[B];
    int from[B];
#pragma unroll
    for (int j = 0; j < B; j++) {
      const size_t i = i0 + (size_t)j * bt;
      if (i >= items) break;
      const int k = (int)(i / nw);
      from[j] = shoal_cg::rot(me, k, npes);
      at[j] = (size_t)from[j] * nw + (i - (size_t)k * nw);
      shoal_port::ld_rec(mine + at[j] * 2, a[j], b[j]);
    }
#pragma unroll
    for (int j = 0; j < B; j++) {
      if (i0 + (size_t)j * bt >= items) break;
      unsigned long long t0 = 0;
      unsigned spins = 0;
      while ((a[j] & ~lo32) != tag || (b[j] & ~lo32) != tag) {
        if (++spins > 32) shoal_port::pause(); /* a late peer: poll less often (on a CPU emulation: let it run) */
        if (c.timeout_ns) { /* one timeout per call: a thread that sees another's gives up at once */
          if (*(volatile unsigned *)&c.sync->blocks & SHOAL_COLL_GPU_TIMED_OUT) break;
          const unsigned long long now = shoal_port::clock_ns();
          if (!t0) t0 = now;
          else if (now - t0 > c.timeout_ns) {
            atomicExch(&c.sync->blocks, SHOAL_COLL_GPU_TIMED_OUT | (unsigned)from[j]);
            break;
          }
        }
        shoal_port::ld_rec(mine + at[j] * 2, a[j], b[j]);
      }
      const size_t w = at[j] - (size_t)from[j] * nw;
      st64[(size_t)from[j] * 2 * rv + w] = (a[j] & lo32) | (b[j] << 32);
    }
  }
  __syncthreads();
  char *dst = shoal_port::peer(c.peer_base[me], c.dst_off);
  const size_t nv = nb / 16;
  for (size_t v = threadIdx.x; v < rv; v += bt) {
    A acc[E];
    T el[E];
    uint4 x = stage[v];
    memcpy(el, &x, sizeof el);
#pragma unroll
    for (int q = 0; q < E; q++) acc[q] = R::in(el[q]);
    for (int k = 1; k < npes; k++) {
      x = stage[(size_t)k * rv + v];
      memcpy(el, &x, sizeof el);
#pragma unroll
      for (int q = 0; q < E; q++) acc[q] = apply<OP, A>(acc[q], R::in(el[q]));
    }
    T o[E];
#pragma unroll
    for (int q = 0; q < E; q++) o[q] = R::out(acc[q]);
    if (v < nv) {
      uint4 y;
      memcpy(&y, o, sizeof y);
      ((uint4 *)dst)[v] = y;
    } else {
      const size_t ne = (nb - 16 * v) / sizeof(T);
      for (size_t q = 0; q < ne; q++) ((T *)dst)[v * E + q] = o[q];
    }
  }
  /* This PE has passed epoch e only when its dest is complete: a later call on another stream (args.after) waits for
   * this, and only then may its peers store into this PE's memory (it signals them after its wait). */
  __syncthreads();
  if (threadIdx.x == 0) {
    shoal_cg::fence(c);
    shoal_cg::set_epoch(c, e);
  }
}

#ifndef SHOAL_COLL_GPU_REDUCE_NO_PICK /* (units that only use the device functions: no grid kernels instantiated) */
/* Kernel selection. wclass: 2, 4, 8 (SUM, HOISTED, 16-byte path only) or 0; vec 16 or the element size. The signed
 * integer types reach the kernels only for min and max (the others are the same bits as unsigned: red_type). */
typedef void (*rkernel_fn)(rparams);
template <int OP, typename T, int VAR> rkernel_fn pick_rw(int wclass, int vec) {
  if (vec != 16 || sizeof(T) == 16) {
    if constexpr (VAR == shoal_cg::VAR_HOISTED) return red_kernel<OP, T, VAR, 0, T>;
    else return red_kernel<OP, T, shoal_cg::VAR_HOISTED, 0, T>; /* the element path has one variant */
  }
  if constexpr (OP == SHOAL_RED_SUM && VAR == shoal_cg::VAR_HOISTED) {
    switch (wclass) {
    case 2: return red_kernel<OP, T, VAR, 2, uint4>;
    case 4: return red_kernel<OP, T, VAR, 4, uint4>;
    case 8: return red_kernel<OP, T, VAR, 8, uint4>;
    default: break;
    }
  }
  return red_kernel<OP, T, VAR, 0, uint4>;
}
template <int OP, typename T> rkernel_fn pick_rv(int var, int wclass, int vec) {
  if (var == VAR_LL) return red_ll_kernel<OP, T>;
  return var == shoal_cg::VAR_NAIVE ? pick_rw<OP, T, shoal_cg::VAR_NAIVE>(wclass, vec)
                                    : pick_rw<OP, T, shoal_cg::VAR_HOISTED>(wclass, vec);
}
template <typename T> rkernel_fn pick_int(int op, int var, int wclass, int vec) {
  switch (op) {
  case SHOAL_RED_SUM: return pick_rv<SHOAL_RED_SUM, T>(var, wclass, vec);
  case SHOAL_RED_PROD: return pick_rv<SHOAL_RED_PROD, T>(var, wclass, vec);
  case SHOAL_RED_MIN: return pick_rv<SHOAL_RED_MIN, T>(var, wclass, vec);
  case SHOAL_RED_MAX: return pick_rv<SHOAL_RED_MAX, T>(var, wclass, vec);
  case SHOAL_RED_AND: return pick_rv<SHOAL_RED_AND, T>(var, wclass, vec);
  case SHOAL_RED_OR: return pick_rv<SHOAL_RED_OR, T>(var, wclass, vec);
  default: return pick_rv<SHOAL_RED_XOR, T>(var, wclass, vec);
  }
}
template <typename T> rkernel_fn pick_minmax(int op, int var, int wclass, int vec) {
  return op == SHOAL_RED_MIN ? pick_rv<SHOAL_RED_MIN, T>(var, wclass, vec) : pick_rv<SHOAL_RED_MAX, T>(var, wclass, vec);
}
template <typename T> rkernel_fn pick_float(int op, int var, int wclass, int vec) {
  switch (op) {
  case SHOAL_RED_SUM: return pick_rv<SHOAL_RED_SUM, T>(var, wclass, vec);
  case SHOAL_RED_PROD: return pick_rv<SHOAL_RED_PROD, T>(var, wclass, vec);
  case SHOAL_RED_MIN: return pick_rv<SHOAL_RED_MIN, T>(var, wclass, vec);
  default: return pick_rv<SHOAL_RED_MAX, T>(var, wclass, vec);
  }
}
template <typename T> rkernel_fn pick_cplx(int op, int var, int wclass, int vec) {
  return op == SHOAL_RED_SUM ? pick_rv<SHOAL_RED_SUM, T>(var, wclass, vec) : pick_rv<SHOAL_RED_PROD, T>(var, wclass, vec);
}
/* The kernel type for (type, op): signed integers as unsigned except for min and max. */
inline int red_type(int type, int op) {
  if (type <= SHOAL_RT_U64 && !(type & 1) && op != SHOAL_RED_MIN && op != SHOAL_RED_MAX) return type + 1;
  return type;
}
inline rkernel_fn rpick(int type, int op, int var, int wclass, int vec) {
  switch (red_type(type, op)) {
  case SHOAL_RT_I8: return pick_minmax<int8_t>(op, var, wclass, vec);
  case SHOAL_RT_U8: return pick_int<uint8_t>(op, var, wclass, vec);
  case SHOAL_RT_I16: return pick_minmax<int16_t>(op, var, wclass, vec);
  case SHOAL_RT_U16: return pick_int<uint16_t>(op, var, wclass, vec);
  case SHOAL_RT_I32: return pick_minmax<int32_t>(op, var, wclass, vec);
  case SHOAL_RT_U32: return pick_int<uint32_t>(op, var, wclass, vec);
  case SHOAL_RT_I64: return pick_minmax<long long>(op, var, wclass, vec);
  case SHOAL_RT_U64: return pick_int<unsigned long long>(op, var, wclass, vec);
  case SHOAL_RT_F32: return pick_float<float>(op, var, wclass, vec);
  case SHOAL_RT_F64: return pick_float<double>(op, var, wclass, vec);
  case SHOAL_RT_F16: return pick_float<h16>(op, var, wclass, vec);
  case SHOAL_RT_BF16: return pick_float<b16>(op, var, wclass, vec);
  case SHOAL_RT_CF32: return pick_cplx<cf32>(op, var, wclass, vec);
  default: return pick_cplx<cf64>(op, var, wclass, vec);
  }
}
#endif

} // namespace shoal_cr
#endif
