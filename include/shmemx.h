/*
 * shmemx.h - Shoal extensions to OpenSHMEM 1.5 (names shmemx_* / SHMEMX_*). Includes <shmem.h>.
 */
#ifndef SHMEMX_H
#define SHMEMX_H
#include <shmem.h>
#ifdef __cplusplus
extern "C" {
#endif

/** Node-local rank of this PE in [0, shmemx_local_n_pes()) (as NVSHMEM's NVSHMEMX_TEAM_NODE rank). */
int shmemx_local_pe(void);
/** Number of PEs on this node. */
int shmemx_local_n_pes(void);
/** Bytes of the symmetric heap: total (SHMEM_SYMMETRIC_SIZE) and still free (largest block) on this PE. */
void shmemx_heap_info(size_t *total, size_t *free_largest);

/* ---- GPUs: device symmetric heap and stream-ordered operations (docs/gpu.md) ----
 * A stream argument is a cudaStream_t / hipStream_t passed as void * (NULL = the default stream), so that this header
 * needs no vendor include. Without a GPU (shmemx_gpu_available() == 0) every routine below works on host memory:
 * SHMEMX_MALLOC_DEVICE is ignored, the _on_stream forms act as their host forms. */

/** Hint for shmem_malloc_with_hints: allocate from the GPU symmetric heap (SHOAL_DEVICE_SYMMETRIC_SIZE bytes per PE).
 *  Same collective semantics as the host heap; NULL on exhaustion (SHMEM_DEBUG prints the sizes). */
#define SHMEMX_MALLOC_DEVICE (1L << 16)

/** Most PEs the device-side API addresses (the peer table lives in __constant__ memory). */
#define SHMEMX_DEVICE_MAX_PES 256
/** delta[pe] / peer_delta[pe] of a PE that loads and stores cannot reach (another node): its device heap is not mapped
 *  in this process; the device API reaches it through the host proxy (docs/gpu.md, "The proxy"), host RMA and AMOs
 *  through the transport between nodes (docs/gpu.md section 3). */
#define SHMEMX_DEVICE_DELTA_FAR INT64_MIN

/** State the device API reads, filled by the runtime (shmemx_device_state_get) and copied to the GPU by
 *  shmemx_init_device_state() of <shoal/shmem_device.cuh>. Addresses are device addresses of this PE. */
typedef struct shmemx_device_state {
  uint32_t size;                  /* sizeof(shmemx_device_state_t): checked by both sides */
  int32_t my_pe, n_pes;
  int32_t pes_per_gpu;            /* PEs sharing this PE's GPU: a collective launch gets 1/pes_per_gpu of it */
  char *heap_base;                /* this PE's device symmetric heap */
  uint64_t heap_size;             /* bytes, identical on every PE */
  const int64_t *peer_delta;      /* device memory [n_pes]: the same table as delta[] (kernels of other modules) */
  uint64_t *bar_flags;            /* symmetric, SHMEMX_DEVICE_BAR_ROUNDS lines of 128 bytes: device barrier flags */
  uint64_t *bar_epoch;            /* this PE's barrier count (device memory, one writer) */
  uint32_t *grid_bar;             /* [count, generation]: grid-wide barrier inside one PE's kernel */
  shmem_team_t team_world, team_shared; /* the predefined handles: SHMEM_TEAM_WORLD, SHMEM_TEAM_SHARED in kernels */
  const int32_t *teams;           /* device memory [team_count][4]: wstart, wstride, size (0: no team), my rank */
  uint64_t team_pool;             /* host address of team entry 0: a handle's entry is (handle - team_pool) / stride */
  uint32_t team_stride, team_count;
  int64_t delta[SHMEMX_DEVICE_MAX_PES]; /* peer p's device heap in this address space minus heap_base, or
                                           SHMEMX_DEVICE_DELTA_FAR for a PE of another node: reached through the proxy */
  void *proxy_queue;              /* device address of this PE's proxy queue (shoal/detail/proxy_queue.h), or NULL */
} shmemx_device_state_t;
#define SHMEMX_DEVICE_BAR_ROUNDS 16

/** 1 if this PE has a GPU and every PE of the job has its device symmetric heap (mapped here for the PEs of this
 *  node, reached through the transport between nodes for the others), else 0. Never fatal
 *  itself; a program that includes <shoal/shmem_device.cuh> without SHOAL_DEVICE_OPTIONAL has already stopped in
 *  shmem_init where it would return 0. */
int shmemx_gpu_available(void);
/** Device ordinal (cudaSetDevice/hipSetDevice numbering) of this PE's GPU, or -1 without a GPU. */
int shmemx_gpu_device(void);
/** Copy the device-API state into buf (len must be sizeof(shmemx_device_state_t)). Returns 0, or -1 without a GPU,
 *  with a bad len, or with more than SHMEMX_DEVICE_MAX_PES PEs. */
int shmemx_device_state_get(void *buf, size_t len);
/** Register fill, a function of one translation unit that copies the device state to that unit's __constant__
 *  memory (what <shoal/shmem_device.cuh> does for every unit that includes it, from a static initializer): the
 *  runtime calls every registered fill at the end of shmem_init, once the device heap is mapped, on the PE's GPU;
 *  one registered after shmem_init (a library loaded later) is called at once. May be called before shmem_init.
 *  A registered unit tells the runtime that this process uses the device API: where its kernels cannot run (no
 *  GPU, no device symmetric heap, fill failing: fill writes why into why[len], a NUL-terminated line), shmem_init
 *  (or this call, after shmem_init) ends the job with one line naming the PE and the cause, exit status 1, as
 *  NVSHMEM's nvshmem_init fails without a GPU. flags: 0, or SHMEMX_DEVICE_UNIT_OPTIONAL for a unit whose program
 *  checks shmemx_gpu_available() and has a host path (then only a failing fill, with a GPU, ends the job).
 *  Returns 0, or -1 when out of memory or with a NULL fill or an unknown flag (docs/gpu.md, "Without a GPU"). */
int shmemx_device_unit_register(int (*fill)(char *why, size_t len), unsigned flags);
#define SHMEMX_DEVICE_UNIT_OPTIONAL 1u
/** The form of the headers before shmemx_device_unit_register, kept for programs built with them: an optional unit
 *  (as SHMEMX_DEVICE_UNIT_OPTIONAL; those headers never ended the job without a GPU) whose fill prints its own
 *  failure: without a GPU it is not filled and shmem_init returns; with one, a failing fill ends the job. Returns 0,
 *  or -1 when out of memory or with a NULL fill. */
int shmemx_device_state_register(int (*fill)(void));
/** Bytes of the device symmetric heap: total and largest free block (0 and 0 without a GPU). */
void shmemx_device_heap_info(size_t *total, size_t *free_largest);

/** Enqueue on stream a copy of nelems bytes from source (host or device memory) to dest's instance on pe. dest is a
 *  symmetric address (device or host heap). Returns at once; complete in stream order (or at
 *  shmemx_quiet_on_stream). Without a GPU: shmem_putmem. Errors (fatal): bad pe, dest not symmetric. */
void shmemx_putmem_on_stream(void *dest, const void *source, size_t nelems, int pe, void *stream);
/** Enqueue on stream a copy of nelems bytes from source's instance on pe to dest (host or device memory). */
void shmemx_getmem_on_stream(void *dest, const void *source, size_t nelems, int pe, void *stream);
/** Operations enqueued on stream before this call are complete (visible at their targets) before any work enqueued
 *  after it starts. */
void shmemx_quiet_on_stream(void *stream);
/** Enqueue on stream a barrier over all PEs: work after it on stream starts once every PE's stream reached its
 *  barrier and the stream-ordered operations before it are complete. Collective. CUDA: a one-thread kernel, the host
 *  does not wait; HIP: the host waits for the stream, then runs shmem_barrier_all. */
void shmemx_barrier_all_on_stream(void *stream);

/* ---- GPU collectives (docs/gpu-collectives.md) ---- */
/** Enqueue on stream (a cudaStream_t / hipStream_t as void *) an fcollect of nelems bytes per PE over team: dest and
 *  source on the device heap (shmem_malloc_with_hints(..., SHMEMX_MALLOC_DEVICE) or SHOAL_HEAP=device). Returns 0 at
 *  once; the result is complete on every member when work enqueued after it on stream starts. With host buffers, or
 *  where the GPU kernels cannot finish on their own (several PEs per GPU without MPS: SHOAL_COLL_GPU_SYNC), the stream
 *  is synchronized and the call returns when complete. Collective over team; errors as shmem_fcollectmem. */
int shmemx_fcollectmem_on_stream(shmem_team_t team, void *dest, const void *source, size_t nelems, void *stream);
/** The same for an alltoall: block j (nelems bytes) of source goes to the slot of this PE in dest on member j. */
int shmemx_alltoallmem_on_stream(shmem_team_t team, void *dest, const void *source, size_t nelems, void *stream);
/** Enqueue on stream a broadcast (spec 9.9.6 shmem_broadcastmem semantics, NVSHMEM's argument order): nelems bytes
 *  (typed forms: elements of TYPE, the standard RMA types) of source on member PE_root of team (team numbering) to dest
 *  on every member, the root's dest included. dest and source on the device heap: a GPU kernel (the root stores to
 *  every member's dest), complete on every member when work enqueued after it on stream starts; host buffers: the
 *  stream is synchronized and the host broadcast runs. Collective over team. Errors (fatal, one line): PE_root out
 *  of [0, team size), one of dest and source on the device heap and the other not, as shmem_broadcastmem. */
int shmemx_broadcastmem_on_stream(shmem_team_t team, void *dest, const void *source, size_t nelems, int PE_root,
                                  void *stream);
#define SHOAL_DECL_BCAST_ON_STREAM(T, N)                                                                              \
  int shmemx_##N##_broadcast_on_stream(shmem_team_t team, T *dest, const T *source, size_t nelems, int PE_root,       \
                                       void *stream);
SHOAL_RMA_TYPES(SHOAL_DECL_BCAST_ON_STREAM)
#undef SHOAL_DECL_BCAST_ON_STREAM
/** Storage of the 16-bit floating types of the reductions below, usable from C: the bits of an IEEE binary16
 *  (bit-compatible with CUDA's __half / HIP's __half) and of a bfloat16 (__nv_bfloat16 / hip_bfloat16). */
typedef uint16_t shmemx_half_t;
typedef uint16_t shmemx_bfloat16_t;
/** Enqueue on stream a reduction to all over team (NVSHMEM's nvshmemx_TYPENAME_OP_reduce_on_stream): dest[i] =
 *  source[i] OP over every member, i < nreduce (elements), for every TYPENAME and OP of shmem_TYPENAME_OP_reduce
 *  (spec 9.9.12's team table), and for half and bfloat16 with OP sum, prod, min, max (accumulated in float, rounded
 *  once). dest == source (in place) or disjoint. Device-heap dest and source: the GPU kernel (each member reduces 1/n
 *  of the vector from every member's source and stores it into every member's dest), returns 0 at once, complete when
 *  work enqueued after it on stream starts; every member gets the same bits. Host buffers: the stream is
 *  synchronized, then the host reduction. Errors (fatal, one line): one buffer on the device heap and the other not,
 *  a buffer past the heap's end, dest overlapping source other than exactly, long double on device buffers. */
#define SHOAL_DECL_REDUCE_ON_STREAM(T, N, OP)                                                                         \
  int shmemx_##N##_##OP##_reduce_on_stream(shmem_team_t team, T *dest, const T *source, size_t nreduce, void *stream);
SHOAL_REDUCE_ALL(SHOAL_DECL_REDUCE_ON_STREAM)
#define SHOAL_DECL_HALF_ON_STREAM(N, OP)                                                                              \
  int shmemx_##N##_##OP##_reduce_on_stream(shmem_team_t team, shmemx_##N##_t *dest, const shmemx_##N##_t *source,    \
                                           size_t nreduce, void *stream);
SHOAL_DECL_HALF_ON_STREAM(half, sum) SHOAL_DECL_HALF_ON_STREAM(half, prod) SHOAL_DECL_HALF_ON_STREAM(half, min)
SHOAL_DECL_HALF_ON_STREAM(half, max) SHOAL_DECL_HALF_ON_STREAM(bfloat16, sum) SHOAL_DECL_HALF_ON_STREAM(bfloat16, prod)
SHOAL_DECL_HALF_ON_STREAM(bfloat16, min) SHOAL_DECL_HALF_ON_STREAM(bfloat16, max)
/** What the device-side collectives and team barriers (<shoal/shmem_device.cuh>, <shoal/shmem_coll_device.cuh>) need,
 *  per team slot (every team holds one of `slots` slots while it exists; team entry i of the device team table is on
 *  slot team_slot[i]); filled by shmemx_coll_device_info(buf, sizeof(shmemx_coll_device_info_t)), which returns 0, or
 *  -1 without the GPU collectives (no GPU, HIP, or no room in the device heap). */
typedef struct shmemx_coll_device_info {
  uint32_t size;       /* sizeof(shmemx_coll_device_info_t) */
  uint32_t slots;      /* team slots */
  uint64_t flag_off;   /* offset in the device heap of the device forms' flags: slot s's row of n_pes at + 8 s n_pes */
  char *const *table;  /* device memory [slots][n_pes]: slot s's members' device heap bases in this process, by rank */
  void *sync;          /* device memory [slots] of sync_size bytes: this PE's completion state of the device forms */
  uint64_t bar_off;    /* offset in the device heap of the team barriers' flags: slot s's at + 128 s (16 rounds) */
  uint64_t *bar_epoch; /* device memory [slots]: this PE's barrier count per slot */
  const int32_t *team_slot; /* device memory [team_count]: slot of team entry i (-1: none) */
  uint32_t sync_size;
  uint64_t scratch_off;   /* some PE on another node: offset in the device heap of slot 0's scratch (0: none) */
  uint64_t scratch_bytes; /* bytes of each slot's scratch (slot s's at scratch_off + s scratch_bytes) */
} shmemx_coll_device_info_t;
int shmemx_coll_device_info(void *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
