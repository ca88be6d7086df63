/*
 * shoal/shmem_coll_device.cuh - block-scoped GPU collectives callable inside a kernel (nvcc or hipcc; issue 6):
 *
 *   #include <shoal/shmem_coll_device.cuh>     (includes <shoal/shmem_device.cuh>)
 *   host: shmem_init();                         nothing per translation unit (shmem_init fills this unit's state)
 *   kernel, every thread of ONE block per PE (1-D block, any size), the same arguments on every PE:
 *     shmemx_fcollectmem_block(SHMEM_TEAM_WORLD, dest, source, nelems);
 *     shmemx_alltoallmem_block(SHMEM_TEAM_WORLD, dest, source, nelems);
 *
 * dest and source are on the device heap; nelems bytes per PE. The calling block moves the whole of this PE's part
 * with the hoisted tile loop of the grid kernels (collectives/gpu/coll_gpu_kernels.cuh: destination pointers built
 * once, in shared memory, 16-byte stores where aligned), then signals every PE and waits for every PE's signal
 * (system-scope release/acquire on flags in the device heap, epochs counted on the device): on return every PE's dest
 * is complete and visible to the calling block. Every PE's calling kernel must be running at the same time (one PE
 * per GPU, or MPS), as for any device-side collective. Only SHMEM_TEAM_WORLD is supported (another team, or a unit
 * without state, stops the kernel with a message). shmemx_coll_init_device_state() still copies the state by hand.
 * Returns 0. Uses 2 x n_pes pointers of static shared memory (at most 4 KiB).
 */
#ifndef SHOAL_SHMEM_COLL_DEVICE_CUH
#define SHOAL_SHMEM_COLL_DEVICE_CUH
#include <shoal/shmem_device.cuh>
#include <stdio.h>

#include "coll_gpu_kernels.cuh"

struct shoal_coll_dstate_t {
  int ready, me, npes;
  char *heap_base;
  char *const *table;
  size_t flag_off;
  shoal_coll_gpu_sync_t *sync;
  shmem_team_t world;
};
static __constant__ shoal_coll_dstate_t shoal_coll_dstate; /* one copy per translation unit */

/* Copy this PE's state for the device forms to this unit's constant memory. 0, or -1 (message unless quiet)
 * without them. */
static inline int shoal_coll_dstate_fill(int quiet) {
  shmemx_device_state_t st;
  shmemx_coll_device_info_t info;
  if (shmemx_device_state_get(&st, sizeof st) || shmemx_coll_device_info(&info, sizeof info)) {
    if (!quiet)
      fprintf(stderr, "shoal: PE %d: shmemx_coll_init_device_state: no GPU collectives on this PE\n", shmem_my_pe());
    return -1;
  }
  shoal_coll_dstate_t h = {1, st.my_pe, st.n_pes, st.heap_base, info.table, (size_t)info.flag_off,
                           (shoal_coll_gpu_sync_t *)info.sync, SHMEM_TEAM_WORLD};
#if defined(__HIPCC__)
  hipError_t e = hipMemcpyToSymbol(HIP_SYMBOL(shoal_coll_dstate), &h, sizeof h, 0, hipMemcpyHostToDevice);
#else
  cudaError_t e = cudaMemcpyToSymbol(shoal_coll_dstate, &h, sizeof h, 0, cudaMemcpyHostToDevice);
#endif
  if (e != SHOAL_GPU_API(Success)) {
    fprintf(stderr, "shoal: PE %d: %s: %s\n", shmem_my_pe(), quiet ? "shmem_init" : "shmemx_coll_init_device_state",
            SHOAL_GPU_API(GetErrorString)(e));
    return -1;
  }
  return 0;
}
/* By hand (not needed: shmem_init fills every unit that includes this header). */
static inline int shmemx_coll_init_device_state(void) { return shoal_coll_dstate_fill(0); }
static int shoal_coll_dstate_autofill(void) { return shoal_coll_dstate_fill(1); }
namespace { /* registered after this unit's module (see shoal_dstate_registrar) */
struct shoal_coll_dstate_registrar {
  shoal_coll_dstate_registrar() { shmemx_device_state_register(shoal_coll_dstate_autofill); }
};
shoal_coll_dstate_registrar shoal_coll_dstate_registrar_instance;
} // namespace

static __device__ __noinline__ void shoal_coll_d_refuse(int ready) {
  if (ready)
    printf("shoal: PE %d: shmemx_fcollectmem_block/shmemx_alltoallmem_block: team is not SHMEM_TEAM_WORLD (the only "
           "team the device forms support)\n", shoal_coll_dstate.me);
  else
    printf("shoal: PE ?: shmemx_fcollectmem_block/shmemx_alltoallmem_block: this unit has no state for the device "
           "collectives: launch after shmem_init, or call shmemx_coll_init_device_state()\n");
#if defined(__HIPCC__)
  __builtin_trap();
#else
  __trap();
#endif
}

template <int OP>
__device__ inline int shoal_coll_block(shmem_team_t team, void *dest, const void *source, size_t nelems) {
  const shoal_coll_dstate_t &d = shoal_coll_dstate;
  if (!d.ready || team != d.world) shoal_coll_d_refuse(d.ready); /* not initialized, or not SHMEM_TEAM_WORLD */
  __shared__ char *tab[2 * SHMEMX_DEVICE_MAX_PES];
  __shared__ unsigned long long epoch;
  shoal_cg::params p;
  p.peer_base = d.table;
  p.src = (const char *)source;
  p.dst_off = (size_t)((char *)dest - d.heap_base);
  p.nbytes = nelems;
  p.tile = (size_t)blockDim.x * SHOAL_COLL_GPU_VPT * 16; /* one chunk of this block */
  p.flag_off = d.flag_off;
  p.timeout_ns = 0;
  p.sync = d.sync;
  p.me = d.me;
  p.npes = d.npes;
  p.wait = 1;
  p.gpu_scope = 0;
  if (nelems) {
    if ((((uintptr_t)source | p.dst_off | nelems) & 15) == 0)
      shoal_cg::walk_tiles<OP, shoal_cg::VAR_HOISTED, 0, 4, uint4, 0>(p, 0, 1, tab);
    else
      shoal_cg::walk_tiles<OP, shoal_cg::VAR_HOISTED, 0, 1, unsigned char, 0>(p, 0, 1, tab);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence_system(); /* the block's stores before the signals */
    epoch = ++d.sync->epoch;
  }
  __syncthreads();
  if (d.npes > 1) shoal_cg::signal_and_wait(p, epoch);
  return 0;
}

__device__ inline int shmemx_fcollectmem_block(shmem_team_t team, void *dest, const void *source, size_t nelems) {
  return shoal_coll_block<shoal_cg::OP_FCOLLECT>(team, dest, source, nelems);
}
__device__ inline int shmemx_alltoallmem_block(shmem_team_t team, void *dest, const void *source, size_t nelems) {
  return shoal_coll_block<shoal_cg::OP_ALLTOALL>(team, dest, source, nelems);
}
/* the reductions (issue 16): shmemx_TYPENAME_OP_reduce_block */
#include "shmem_reduce_device.cuh"
#endif
