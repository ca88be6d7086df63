/*
 * coll_gpu.h - GPU all-gather (fcollect) and all-to-all kernels over a symmetric heap (issue 6; docs/gpu-collectives.md).
 *
 * Plain C interface to the kernels of coll_gpu.cu (built by nvcc for CUDA or by hipcc for HIP): the runtime, the tests
 * and the benchmark call these launchers; no vendor type appears here (a stream is a void *).
 *
 * Model: W PEs, each with a "heap" of device memory that every PE can address (IPC-mapped peer heaps, or in the
 * one-process harness W allocations of one process). A collective names its buffers by their offset in the heap:
 *   fcollect:  every PE p stores its nbytes of src into slot p (offset dst_off + p * nbytes) of every PE's heap;
 *   alltoall:  every PE p stores block j of its src (src + j * nbytes) into slot p of PE j's heap.
 * Completion: with wait = 1 the kernel signals every peer (a 64-bit flag per source PE in each destination's heap at
 * flag_off, written with system-scope release to the call's epoch) and waits for every peer's flag (acquire), so when it
 * completes every PE's output is complete and visible; flags are never reset: the epoch (calls made on these flags)
 * is counted in device memory by the kernel itself, so that a replayed launch (a CUDA graph) stays correct. With
 * wait = 0 the kernel only moves data: the caller synchronizes the stream and runs a host barrier (needed when the PEs'
 * kernels are not guaranteed to run concurrently, e.g. several processes on one GPU without MPS).
 */
#ifndef SHOAL_COLL_GPU_H
#define SHOAL_COLL_GPU_H
#include <stddef.h>
#include <stdint.h>

#include "shoal/detail/coll_gpu_defs.h" /* the kernels' vocabulary (ops, variants, sizes, sync state) */
#ifdef __cplusplus
extern "C" {
#endif

/* Tuning, from SHOAL_COLL_VARIANT, SHOAL_COLL_GPU_G, SHOAL_COLL_GPU_SMS, SHOAL_COLL_GPU_TILE; 0 = automatic. */
typedef struct shoal_coll_gpu_cfg {
  int variant;  /* SHOAL_COLL_GPU_HOISTED | SHOAL_COLL_GPU_NAIVE */
  int group;    /* G: destinations stored together, 1, 2, 4 or 8; 0 = auto (fcollect min(W, 8), alltoall 2) */
  int sms;      /* COMM_SMS: blocks of the persistent grid; 0 = the GPU's multiprocessor count */
  size_t tile;  /* bytes per tile, a multiple of 16; 0 = auto (nbytes / 64 up to 32 KiB, then nbytes / 512 up to
                   512 KiB, at least 4 KiB: coll_gpu_plan.h auto_tile) */
  int pipe;     /* SHOAL_COLL_GPU_PIPE_*: loads of the next step issued before this step's stores (16-byte path) */
  int scope;    /* SHOAL_COLL_GPU_SCOPE_*: fences and flags of the completion */
  int small;    /* SHOAL_COLL_GPU_SMALL_*: a one-block call completes with one fence (auto: on) */
  int pdl;      /* SHOAL_COLL_GPU_PDL_*: a call of at most SHOAL_COLL_GPU_PDL_MAX_GRID blocks is launched with
                   programmatic dependent launch (CUDA, sm_90 and later: it starts while the stream's previous kernel
                   ends; auto: on where available) */
  int rt_launch; /* 1: launch through the runtime API (<<<>>>, cudaLaunchKernelEx) where 0 (auto) uses the driver's
                    cuLaunchKernelEx when it is found (CUDA 12.5+): 0.3-0.5 us less host time per call (docs/gpu-
                    collectives.md "The small-message floor") */
} shoal_coll_gpu_cfg_t;
enum { SHOAL_COLL_GPU_SMALL_AUTO = 0, SHOAL_COLL_GPU_SMALL_OFF = 1, SHOAL_COLL_GPU_SMALL_ON = 2 };
enum { SHOAL_COLL_GPU_PDL_AUTO = 0, SHOAL_COLL_GPU_PDL_OFF = 1, SHOAL_COLL_GPU_PDL_ON = 2 };
#define SHOAL_COLL_GPU_ONE_BLOCK 16384 /* bytes per PE block up to which the automatic tile is the whole block */
#define SHOAL_COLL_GPU_PDL_MAX_GRID 8 /* blocks: larger grids are launched without programmatic dependent launch */
#define SHOAL_COLL_GPU_PDL_TILES ((size_t)256 << 10) /* bytes per PE block up to which the automatic tile keeps the
                                                         grid at SHOAL_COLL_GPU_PDL_MAX_GRID blocks */
/* The one-exchange reductions (coll_gpu_reduce.h): the runtime's scratch half per team slot, taken while W x 2 x
 * (bytes rounded up to 8) fits (4 KiB at W <= 8), and the staging of W rows in a block's shared memory. */
#define SHOAL_COLL_GPU_LL_HALF ((size_t)64 << 10)
#define SHOAL_COLL_GPU_LL_SMEM (((size_t)48 << 10) - 256) /* 48 KiB less the kernel's static shared memory */
enum { SHOAL_COLL_GPU_PIPE_AUTO = 0, SHOAL_COLL_GPU_PIPE_OFF = 1, SHOAL_COLL_GPU_PIPE_ON = 2 };
/* AUTO: device scope when the caller says every PE is on this GPU (args.one_gpu), else system scope; SYS: always
 * system scope (there is no way to force device scope: across GPUs it would be wrong). */
enum { SHOAL_COLL_GPU_SCOPE_AUTO = 0, SHOAL_COLL_GPU_SCOPE_SYS = 1 };

typedef struct shoal_coll_gpu_args {
  int op;                  /* SHOAL_COLL_GPU_FCOLLECT | SHOAL_COLL_GPU_ALLTOALL | SHOAL_COLL_GPU_BCAST */
  int me, npes;            /* this PE's index in the team and the team size W, 1 <= W <= SHOAL_COLL_GPU_MAX_PES */
  char *const *peer_base;  /* device array [npes]: base of PE i's heap in this address space (16-byte aligned) */
  size_t dst_off;          /* offset of the destination buffer (npes * nbytes bytes) in every heap */
  const void *src;         /* local device pointer: nbytes (fcollect) or npes * nbytes (alltoall) bytes */
  size_t nbytes;           /* bytes per PE block (broadcast: the whole message); 0 is a no-op */
  size_t flag_off;         /* offset in every heap of SHOAL_COLL_GPU_FLAG_BYTES(npes) bytes of flags, zeroed once */
  struct shoal_coll_gpu_sync *sync; /* this PE's device memory, zeroed together with the flags; wait = 1 only */
  int wait;                /* 1: signal peers and wait for them in the kernel; 0: data only (host barrier follows) */
  int one_gpu;             /* 1: every PE of the call runs on this GPU (device-scope completion is enough) */
  uint64_t timeout_ns;     /* wait = 1: give up waiting after this long, leaving SHOAL_COLL_GPU_TIMED_OUT | (the PE not
                              heard from) in sync->blocks (0 after a good call); 0 = wait forever */
  unsigned long long after; /* wait = 1: 0, or the number of calls made on these flags before this one when the last
                              of them went to another stream: the kernel's completion then waits until sync->epoch has
                              reached it (those calls have passed their arrival), so that calls on several streams
                              share the counter and epoch in order without a host wait or an event per call */
  shoal_coll_gpu_cfg_t cfg;
  int root;                /* broadcast: the root's index in the team, [0, npes); else unused */
} shoal_coll_gpu_args_t;

/* Effective settings for a call: fills every 0 field of cfg from nbytes, npes and the current device, and returns the
 * number of blocks that will be launched (min(sms, tiles), at least 1). */
int shoal_coll_gpu_resolve(const shoal_coll_gpu_args_t *a, shoal_coll_gpu_cfg_t *out);

/* Enqueue one collective on stream (a cudaStream_t / hipStream_t; NULL = the default stream). Returns 0, or -3 for a
 * bad argument (G not 1/2/4/8, tile not a multiple of 16, npes out of range, me not in [0, npes), NULL pointers) or -1
 * for a failed launch; err (may be NULL) receives a one-line reason naming the argument or the vendor call and error. */
int shoal_coll_gpu_launch(const shoal_coll_gpu_args_t *a, void *stream, char *err, size_t errlen);

/* Whether contexts on the current device are shared through MPS (several processes' kernels run concurrently): 1 or
 * 0 from the driver (CUDA 12.4+ attribute), -1 when the driver cannot tell (older CUDA, HIP, error). */
int shoal_coll_gpu_mps_enabled(void);

/* Name of the kernel a call would run, e.g. "fcollect_hoisted_w4_g2_v16" (for reports and benchmarks). */
void shoal_coll_gpu_kernel_name(const shoal_coll_gpu_args_t *a, char *buf, size_t len);

/* ---- runtime glue (coll_gpu_shmem.c, part of libshoal) ---- */
struct shoal_team;
/* Bytes of the GPU collectives' area in the device heap's internal area (runtime/heap_gpu.c's layout, offset coll). */
size_t shoal_coll_gpu_area_bytes(int npes);
/* At shmem_init, after the device heap is up (api/init.c): set up that area. 0 or an error. */
int shoal_coll_gpu_init(void);
/* The end of a split of parent (collective over it) that made teams made[0 .. n - 1] on this PE (NULL: not a member):
 * set their slots up for the GPU collectives (table of member heap bases, flags, epochs, the device lookup's entry),
 * then sync parent. Nothing without the GPU collectives. Fatal (naming routine, the split) if a copy fails. */
void shoal_coll_gpu_team_made(struct shoal_team *parent, struct shoal_team *const *made, int n, const char *routine);
/* shmem_team_destroy: the slot's GPU state belongs to no team any more, so that the next team on the slot re-arms it
 * even if its object lands at the destroyed one's address. */
void shoal_coll_gpu_forget_slot(int slot);
void shoal_coll_gpu_fini(void);
/* Entry points for the host collectives: run the call on the GPU when dest and source are on the device heap (0),
 * else return -4 (SHOAL_ERR_NOSYS) and let the host algorithm run. nbytes per PE; stream NULL: blocking. */
int shoal_coll_gpu_fcollect(struct shoal_team *t, void *dest, const void *source, size_t nbytes, void *stream,
                            const char *routine);
int shoal_coll_gpu_alltoall(struct shoal_team *t, void *dest, const void *source, size_t nbytes, void *stream,
                            const char *routine);
/* The same for a broadcast of nbytes from team rank root (checked by the caller) to dest on every member. */
int shoal_coll_gpu_bcast(struct shoal_team *t, void *dest, const void *source, size_t nbytes, int root, void *stream,
                         const char *routine);
/* Teams with members on other nodes (t->remote; gpu/coll_gpu_far.c): the host drives op (SHOAL_COLL_GPU_*) through
 * the RMA paths that reach every member's device heap; checks done by the caller. Returns SHOAL_OK. */
int shoal_coll_gpu_far(int op, struct shoal_team *t, void *dest, const void *source, size_t nbytes, int root,
                       void *stream, const char *routine);

#ifdef __cplusplus
}
#endif
#endif
