/*
 * shoal/shmem_coll_device.cuh - block-scoped GPU collectives callable inside a kernel (nvcc or hipcc; issue 6):
 *
 *   #include <shoal/shmem_coll_device.cuh>     (includes <shoal/shmem_device.cuh>)
 *   host: shmem_init();                         nothing per translation unit (shmem_init fills this unit's state)
 *   kernel, every thread of ONE block per PE (1-D block, any size), the same arguments on every PE:
 *     shmemx_fcollectmem_block(SHMEM_TEAM_WORLD, dest, source, nelems);     // or any team: SHARED, a split team
 *     shmemx_alltoallmem_block(SHMEM_TEAM_WORLD, dest, source, nelems);
 *     shmemx_broadcastmem_block(SHMEM_TEAM_WORLD, dest, source, nelems, 0); // PE_root 0; shmemx_TYPE_broadcast_block
 *
 * dest and source are on the device heap; nelems bytes per PE. The calling block moves the whole of this PE's part
 * with the hoisted tile loop of the grid kernels (<shoal/detail/coll_gpu_kernels.cuh>: destination pointers built
 * once, in shared memory, 16-byte stores where aligned), then signals every PE and waits for every PE's signal
 * (system-scope release/acquire on flags in the device heap, epochs counted on the device): on return every PE's dest
 * is complete and visible to the calling block. Every PE's calling kernel must be running at the same time (one PE
 * per GPU, or MPS), as for any device-side collective. team: any team of this PE (SHMEM_TEAM_WORLD, SHMEM_TEAM_SHARED,
 * a split team: members numbered as on the host, slots of dest by team rank); SHMEM_TEAM_INVALID, a destroyed team,
 * or a unit without state stops the kernel with one line naming the routine and the team. Each team slot has the
 * device forms' own flags and epoch (shoal_d_cteam_of, <shoal/shmem_device.cuh>): calls on different teams may run
 * at once; calls on one team run one at a time on each member. Returns 0. Uses 2 x n_pes pointers of static shared
 * memory (at most 4 KiB). A team with a member on another node (issue 31): that member's part goes through the proxy
 * (shoal_coll_block_far below), then a team barrier with a quiet; same arguments, same result.
 */
#ifndef SHOAL_SHMEM_COLL_DEVICE_CUH
#define SHOAL_SHMEM_COLL_DEVICE_CUH
#include <shoal/shmem_device.cuh>
#include <stdio.h>

#include <shoal/detail/coll_gpu_kernels.cuh>

/* By hand (not needed: shmem_init fills every unit that includes <shoal/shmem_device.cuh>, and with it the device
 * collectives' state). The same as shmemx_init_device_state(). */
static inline int shmemx_coll_init_device_state(void) { return shoal_dstate_fill(NULL, 0); }

/* One PE's part of a block-scoped collective on team c with members on other nodes (issue 31): to each far member one
 * _nbi put through the proxy (posted first, by thread 0, so the proxy's staging runs while the block stores), to each
 * member of this node the block's stores through the peer table; then the team barrier with a quiet (every put of
 * this PE complete at its member, this PE's stores visible, before its flags): on return every member's dest holds
 * every member's part. OP as below; bcast: the root alone sends, to every member, itself included. */
template <int OP>
__device__ inline void shoal_coll_block_far(const shoal_d_cteam &c, void *dest, const void *source, size_t nelems,
                                            bool bcast, int root) {
  const unsigned tid = shoal_d_tid(), nt = shoal_d_nthreads();
  const bool sends = !bcast || c.me == root;
  const size_t at = bcast ? 0 : (size_t)c.me * nelems; /* this PE's part in every member's dest */
  __syncthreads(); /* the block's stores to source before the proxy reads it */
  if (sends && tid == 0) {
    shoal_proxy_queue_t *const q = (shoal_proxy_queue_t *)shoal_dstate.proxy_queue; /* a far member: not NULL */
    __threadfence_system();
    for (int r = 0; r < c.npes; r++)
      if (shoal_d_cteam_far(c, r))
        shoal_d_proxy_q(q, SHOAL_PROXY_PUT, 0, SHOAL_PROXY_F_NBI, shoal_d_cteam_pe(c, r), (char *)dest + at,
                      (const char *)source + (OP == shoal_cg::OP_ALLTOALL ? (size_t)r * nelems : 0), nelems, 0, 0, 0,
                      0);
  }
  for (int k = 0; sends && k < c.npes; k++) {
    const int r = c.me + k < c.npes ? c.me + k : c.me + k - c.npes; /* this PE first, then the next ones */
    if (!shoal_d_cteam_far(c, r))
      shoal_d_copy(shoal_d_cteam_peer(c, (char *)dest + at, r),
                   (const char *)source + (OP == shoal_cg::OP_ALLTOALL ? (size_t)r * nelems : 0), nelems, tid, nt);
  }
  __syncthreads();
  if (tid == 0) {
    __threadfence_system(); /* the block's stores before the flags */
    shoal_d_team_barrier(c, SHOAL_D_BAR_QUIET);
  }
  __syncthreads();
}

/* One PE's part of a block-scoped collective on team c: move the data (OP: fcollect, alltoall; broadcast is fcollect's
 * data path run on the root alone, as PE 0 of its output so that it stores to dest itself, not to its slot), then
 * signal every member and wait for every member's signal (flags of c's slot, epoch of c's slot counted here). */
template <int OP>
__device__ inline void shoal_coll_block_run(const shoal_d_cteam &c, void *dest, const void *source, size_t nelems,
                                            bool bcast, int root) {
  __shared__ char *tab[2 * SHMEMX_DEVICE_MAX_PES];
  __shared__ unsigned long long epoch;
  if (shoal_d_cteam_any_far_block(c)) { /* a member on another node: the proxy's path */
    shoal_coll_block_far<OP>(c, dest, source, nelems, bcast, root);
    return;
  }
  shoal_cg::params p = {}; /* every field not set below is 0 (after, root, small) */
  p.peer_base = c.base;
  p.src = (const char *)source;
  p.dst_off = (size_t)((char *)dest - shoal_dstate.heap_base);
  p.nbytes = nelems;
  p.tile = (size_t)blockDim.x * SHOAL_COLL_GPU_VPT * 16; /* one chunk of this block */
  p.flag_off = c.flag_off;
  p.timeout_ns = 0;
  p.sync = (shoal_coll_gpu_sync_t *)c.sync;
  p.me = c.me;
  p.npes = c.npes;
  p.wait = 1;
  p.gpu_scope = 0;
  shoal_cg::params q = p;
  if (bcast) {
    q.me = 0;
    q.nbytes = c.me == root ? nelems : 0;
  }
  if (q.nbytes) {
    if ((((uintptr_t)source | p.dst_off | nelems) & 15) == 0)
      shoal_cg::walk_tiles<OP, shoal_cg::VAR_HOISTED, 0, 4, uint4, 0>(q, 0, 1, tab);
    else
      shoal_cg::walk_tiles<OP, shoal_cg::VAR_HOISTED, 0, 1, unsigned char, 0>(q, 0, 1, tab);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence_system(); /* the block's stores before the signals */
    epoch = ++p.sync->epoch;
  }
  __syncthreads();
  if (p.npes > 1) shoal_cg::signal_and_wait(p, epoch);
}

__device__ inline int shmemx_fcollectmem_block(shmem_team_t team, void *dest, const void *source, size_t nelems) {
  shoal_coll_block_run<shoal_cg::OP_FCOLLECT>(shoal_d_cteam_of(team, "shmemx_fcollectmem_block"), dest, source, nelems,
                                              false, 0);
  return 0;
}
__device__ inline int shmemx_alltoallmem_block(shmem_team_t team, void *dest, const void *source, size_t nelems) {
  shoal_coll_block_run<shoal_cg::OP_ALLTOALL>(shoal_d_cteam_of(team, "shmemx_alltoallmem_block"), dest, source, nelems,
                                              false, 0);
  return 0;
}
static __device__ __noinline__ void shoal_coll_d_bad_root(const char *routine, int root, int npes) {
  printf("shoal: PE %d: %s: PE_root %d out of range [0, %d) of the team\n", shoal_dstate.my_pe, routine, root, npes);
  SHOAL_GPU_TRAP();
}
/* Broadcast (spec 9.9.6 semantics): nelems bytes of source on member PE_root (team numbering) to dest on every member,
 * the root's dest included; on return dest is complete on every member. Collective over team as the forms above.
 * PE_root out of [0, team size) stops the kernel with one line. */
__device__ inline int shoal_coll_bcast_block(const char *routine, shmem_team_t team, void *dest, const void *source,
                                             size_t nbytes, int PE_root) {
  const shoal_d_cteam c = shoal_d_cteam_of(team, routine);
  if (PE_root < 0 || PE_root >= c.npes) shoal_coll_d_bad_root(routine, PE_root, c.npes);
  shoal_coll_block_run<shoal_cg::OP_FCOLLECT>(c, dest, source, nbytes, true, PE_root);
  return 0;
}
__device__ inline int shmemx_broadcastmem_block(shmem_team_t team, void *dest, const void *source, size_t nelems,
                                                int PE_root) {
  return shoal_coll_bcast_block("shmemx_broadcastmem_block", team, dest, source, nelems, PE_root);
}
#define SHOAL_COLL_D_BCAST(T, N)                                                                                      \
  __device__ inline int shmemx_##N##_broadcast_block(shmem_team_t team, T *dest, const T *source, size_t nelems,     \
                                                     int PE_root) {                                                   \
    return shoal_coll_bcast_block("shmemx_" #N "_broadcast_block", team, dest, source, nelems * sizeof(T), PE_root);  \
  }
SHOAL_D_RMA_TYPES(SHOAL_COLL_D_BCAST)
#undef SHOAL_COLL_D_BCAST
/* the reductions (issue 16): shmemx_TYPENAME_OP_reduce_block */
#include <shoal/shmem_reduce_device.cuh>
#endif
