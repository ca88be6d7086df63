/*
 * shoal/shmem_reduce_device.cuh - block-scoped GPU reductions callable inside a kernel (issue 16), included by
 * <shoal/shmem_coll_device.cuh> (its state and rules: one block per PE, every PE's kernel running at once):
 *
 *   shmemx_TYPENAME_OP_reduce_block(SHMEM_TEAM_WORLD, dest, source, nreduce);
 *
 * TYPENAME and OP as shmem_TYPENAME_OP_reduce (spec 9.9.12's team table) except long double and the complex types,
 * plus half and bfloat16 (shmemx_half_t / shmemx_bfloat16_t storage: a __half * or __nv_bfloat16 * cast; sum, prod,
 * min, max, accumulated in float). dest and source on the device heap, nreduce elements, dest == source or disjoint.
 * The algorithm of the grid kernel (<shoal/detail/coll_gpu_reduce.cuh>) on the calling block: entry exchange, this
 * PE's slice reduced from every PE's source and stored into every PE's dest (hoisted pointers in shared memory,
 * 16-byte vectors where dest and source offsets are 16-byte aligned), exit exchange; on return every PE's dest is
 * complete and visible to the calling block. team: any live team (shoal_d_cteam_of: its slot's device-form flags and
 * epoch, two epochs per call; SHMEM_TEAM_INVALID or a destroyed team stops the kernel with one line). A team with
 * a member on another node: reduce_block_far below (through the proxy). Returns 0.
 * Shared memory: the fcollect forms' 2 x n_pes pointers (a table of its own).
 */
#ifndef SHOAL_SHMEM_REDUCE_DEVICE_CUH
#define SHOAL_SHMEM_REDUCE_DEVICE_CUH
#ifndef SHOAL_COLL_GPU_REDUCE_CUH /* the block functions only: no grid kernels in the user's unit */
#define SHOAL_COLL_GPU_REDUCE_NO_PICK
#endif
#include <shoal/detail/coll_gpu_reduce.cuh>

namespace shoal_rd {
/* Storage type of the kernels for a user type: signed integers only for min and max (the others: the same bits
 * unsigned, no signed overflow), half and bfloat16 as their bit structs. */
template <int S, bool SIGNED> struct int_of;
template <> struct int_of<1, true> { typedef int8_t t; };
template <> struct int_of<1, false> { typedef uint8_t t; };
template <> struct int_of<2, true> { typedef int16_t t; };
template <> struct int_of<2, false> { typedef uint16_t t; };
template <> struct int_of<4, true> { typedef int32_t t; };
template <> struct int_of<4, false> { typedef uint32_t t; };
template <> struct int_of<8, true> { typedef long long t; };
template <> struct int_of<8, false> { typedef unsigned long long t; };
template <typename T, int OP> struct kt {
  typedef typename int_of<sizeof(T), (T)-1 < (T)0 && (OP == SHOAL_RED_MIN || OP == SHOAL_RED_MAX)>::t t;
};
template <int OP> struct kt<float, OP> { typedef float t; };
template <int OP> struct kt<double, OP> { typedef double t; };

/* A volatile load of an element (1, 2, 4 or 8 bytes): memory written by the proxy's copies or by other PEs since this
 * kernel last read it, never a stale line of this SM's cache. */
template <typename K> __device__ inline K vload(const K *p) {
  typedef typename int_of<sizeof(K), false>::t W;
  W w = *(const volatile W *)p;
  K k;
  memcpy(&k, &w, sizeof k);
  return k;
}
/* The reduction on a team with a member on another node (issue 31), by the calling block: an entry barrier (arrival:
 * every member's source ready), then per tile (the same on every member whatever its block size: the barriers' count
 * and the ranges must match) every member's tile combined in team order 0 .. n-1 in the accumulator type (so every
 * member gets the same bits) into accumulators in the second half of the slot's scratch: a member of this node read
 * through the peer table, a far one's tile fetched first into the first half by one get through the proxy; a team
 * barrier (every member read this tile of every source: dest may be the source), then the tile stored into this PE's
 * dest. An exit barrier: on return every member's dest is complete (a next call may write into it at once). */
template <int OP, typename K>
__device__ inline void reduce_block_far(const shoal_d_cteam &c, K *dest, const K *source, size_t nreduce) {
  typedef shoal_cr::tr<K> R;
  typedef typename R::acc A;
  const unsigned tid = shoal_d_tid(), nt = shoal_d_nthreads();
  const size_t half = c.scratch_bytes / 2, wide = sizeof(A) > sizeof(K) ? sizeof(A) : sizeof(K);
  const size_t tile = half / wide < 4096 ? half / wide : 4096; /* 4096 elements: 32 KiB of 8-byte ones */
  K *const got = (K *)c.scratch;
  A *const acc = (A *)(c.scratch + half);
  shoal_proxy_queue_t *const q = (shoal_proxy_queue_t *)shoal_dstate.proxy_queue; /* a far member: not NULL */
  __syncthreads();
  if (tid == 0) {
    __threadfence_system(); /* the block's stores to source before the entry flags */
    shoal_d_team_barrier(c, SHOAL_D_BAR_ARRIVE);
  }
  __syncthreads();
  for (size_t at = 0; at < nreduce; at += tile) {
    const size_t cnt = nreduce - at < tile ? nreduce - at : tile;
    for (int r = 0; r < c.npes; r++) {
      const K *from;
      if (shoal_d_cteam_far(c, r)) {
        __syncthreads(); /* the last tile's reads of got */
        if (tid == 0)
          shoal_d_proxy_q(q, SHOAL_PROXY_GET, 0, SHOAL_PROXY_F_WAIT, shoal_d_cteam_pe(c, r), source + at, got,
                          cnt * sizeof(K), 0, 0, 0, 0);
        __syncthreads();
        from = got;
      } else {
        from = shoal_d_cteam_peer(c, source + at, r);
      }
      for (size_t i = tid; i < cnt; i += nt) { /* acc[i]: this thread's alone */
        const A v = R::in(vload(from + i));
        acc[i] = r ? shoal_cr::apply<OP, A>(acc[i], v) : v;
      }
    }
    __syncthreads();
    if (tid == 0) shoal_d_team_barrier(c, SHOAL_D_BAR_ARRIVE); /* every member read this tile of this PE's source */
    __syncthreads();
    for (size_t i = tid; i < cnt; i += nt) dest[at + i] = R::out(acc[i]);
  }
  __syncthreads();
  if (tid == 0) {
    __threadfence_system(); /* the block's stores to dest before the exit flags */
    shoal_d_team_barrier(c, SHOAL_D_BAR_ARRIVE);
  }
  __syncthreads();
}

template <int OP, typename K>
__device__ inline int reduce_block(const char *routine, shmem_team_t team, void *dest, const void *source,
                                   size_t nreduce) {
  const shoal_d_cteam c = shoal_d_cteam_of(team, routine); /* any live team; else one line and the kernel stops */
  if (shoal_d_cteam_any_far_block(c)) { /* the grid kernel's walk reads every member's source directly: not a far one's */
    reduce_block_far<OP, K>(c, (K *)dest, (const K *)source, nreduce);
    return 0;
  }
  __shared__ char *tab[2 * SHMEMX_DEVICE_MAX_PES];
  __shared__ unsigned long long epoch;
  shoal_cr::rparams p = {}; /* every field not set below is 0 (after, ll_off, ...) */
  p.c.peer_base = c.base;
  p.c.src = nullptr;
  p.c.dst_off = (size_t)((char *)dest - shoal_dstate.heap_base);
  p.c.nbytes = nreduce * sizeof(K);
  p.c.tile = (size_t)blockDim.x * SHOAL_COLL_GPU_VPT * 16; /* one chunk of this block */
  p.c.flag_off = c.flag_off;
  p.c.timeout_ns = 0;
  p.c.sync = (shoal_coll_gpu_sync_t *)c.sync;
  p.c.me = c.me;
  p.c.npes = c.npes;
  p.c.wait = 1;
  p.c.gpu_scope = 0;
  p.src_off = (size_t)((const char *)source - shoal_dstate.heap_base);
  p.nelems = nreduce;
  p.entry = 0;
  shoal_coll_gpu_sync_t *const sy = p.c.sync;
  if (c.npes > 1) { /* entry: every PE's source ready, its dest free */
    if (threadIdx.x == 0) {
      __threadfence_system();
      epoch = ++sy->epoch;
    }
    __syncthreads();
    shoal_cg::signal_and_wait(p.c, epoch);
  }
  if (nreduce) {
    if (((p.src_off | p.c.dst_off) & 15) == 0 && sizeof(K) < 16)
      shoal_cr::red_walk<OP, K, shoal_cg::VAR_HOISTED, 0, uint4, 0>(p, 0, 1, tab);
    else
      shoal_cr::red_walk<OP, K, shoal_cg::VAR_HOISTED, 0, K, 0>(p, 0, 1, tab);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence_system(); /* the block's stores before the signals */
    epoch = ++sy->epoch;
  }
  __syncthreads();
  if (c.npes > 1) shoal_cg::signal_and_wait(p.c, epoch);
  return 0;
}
} // namespace shoal_rd

#define SHOAL_RD_BITWISE_TYPES(X, A)                                                                                  \
  X(unsigned char, uchar, A) X(unsigned short, ushort, A) X(unsigned int, uint, A) X(unsigned long, ulong, A)         \
  X(unsigned long long, ulonglong, A) X(int8_t, int8, A) X(int16_t, int16, A) X(int32_t, int32, A)                    \
  X(int64_t, int64, A) X(uint8_t, uint8, A) X(uint16_t, uint16, A) X(uint32_t, uint32, A) X(uint64_t, uint64, A)      \
  X(size_t, size, A)
#define SHOAL_RD_ARITH_TYPES(X, A)                                                                                    \
  SHOAL_RD_BITWISE_TYPES(X, A)                                                                                        \
  X(char, char, A) X(signed char, schar, A) X(short, short, A) X(int, int, A) X(long, long, A)                        \
  X(long long, longlong, A) X(ptrdiff_t, ptrdiff, A) X(float, float, A) X(double, double, A)
#define SHOAL_RD_DEF(T, N, OP)                                                                                        \
  __device__ inline int shmemx_##N##_##OP##_reduce_block(shmem_team_t team, T *dest, const T *source,                \
                                                         size_t nreduce) {                                            \
    return shoal_rd::reduce_block<SHOAL_RED_N_##OP, typename shoal_rd::kt<T, SHOAL_RED_N_##OP>::t>(                \
        "shmemx_" #N "_" #OP "_reduce_block", team, dest, source, nreduce);                                           \
  }
SHOAL_RD_BITWISE_TYPES(SHOAL_RD_DEF, and) SHOAL_RD_BITWISE_TYPES(SHOAL_RD_DEF, or) SHOAL_RD_BITWISE_TYPES(SHOAL_RD_DEF, xor)
SHOAL_RD_ARITH_TYPES(SHOAL_RD_DEF, sum) SHOAL_RD_ARITH_TYPES(SHOAL_RD_DEF, prod)
SHOAL_RD_ARITH_TYPES(SHOAL_RD_DEF, min) SHOAL_RD_ARITH_TYPES(SHOAL_RD_DEF, max)
#define SHOAL_RD_DEF16(N, K, OP)                                                                                      \
  __device__ inline int shmemx_##N##_##OP##_reduce_block(shmem_team_t team, shmemx_##N##_t *dest,                    \
                                                         const shmemx_##N##_t *source, size_t nreduce) {              \
    return shoal_rd::reduce_block<SHOAL_RED_N_##OP, K>("shmemx_" #N "_" #OP "_reduce_block", team, dest, source,      \
                                                       nreduce);                                                      \
  }
SHOAL_RD_DEF16(half, shoal_cr::h16, sum) SHOAL_RD_DEF16(half, shoal_cr::h16, prod)
SHOAL_RD_DEF16(half, shoal_cr::h16, min) SHOAL_RD_DEF16(half, shoal_cr::h16, max)
SHOAL_RD_DEF16(bfloat16, shoal_cr::b16, sum) SHOAL_RD_DEF16(bfloat16, shoal_cr::b16, prod)
SHOAL_RD_DEF16(bfloat16, shoal_cr::b16, min) SHOAL_RD_DEF16(bfloat16, shoal_cr::b16, max)
#endif
