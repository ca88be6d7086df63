/*
 * shoal/detail/coll_gpu_defs.h - NOT ABI: may change in any release, with no notice. Programs include
 * <shoal/shmem_coll_device.cuh>, never this file.
 *
 * The vocabulary that the GPU collectives' device code (coll_gpu_kernels.cuh, coll_gpu_reduce.cuh: inline in every
 * unit that includes <shoal/shmem_coll_device.cuh>) shares with libshoal's launchers (collectives/gpu/coll_gpu.h,
 * coll_gpu_reduce.h, not installed): operations, variants, block and vector sizes, the per-PE completion state, the
 * reduction operations and element types. It lives here, not in those headers, so that the installed device API
 * needs nothing internal; values and layout are those of the library the program runs with (one build).
 */
#ifndef SHOAL_DETAIL_COLL_GPU_DEFS_H
#define SHOAL_DETAIL_COLL_GPU_DEFS_H

/* BCAST: the root's nbytes of src to dst_off on every PE, the root's own dest included (fcollect's data path, run on
 * the root alone, as if it were PE 0 of an fcollect), then the same completion: every PE's kernel takes part. */
enum { SHOAL_COLL_GPU_FCOLLECT = 0, SHOAL_COLL_GPU_ALLTOALL = 1, SHOAL_COLL_GPU_BCAST = 2 };
enum { SHOAL_COLL_GPU_HOISTED = 0, SHOAL_COLL_GPU_NAIVE = 1 };
#ifndef SHOAL_COLL_GPU_THREADS /* (the CPU emulation test builds with fewer) */
#define SHOAL_COLL_GPU_THREADS 512 /* threads per block (a multiple of every warp size) */
#endif
#define SHOAL_COLL_GPU_VPT 4       /* 16-byte vectors a thread loads before storing them (per chunk of a tile) */
#define SHOAL_COLL_GPU_MAX_PES 1024 /* generic path: destination tables in shared memory */
#define SHOAL_COLL_GPU_TIMED_OUT 0x80000000u /* sync->blocks after a wait that timed out: | the silent PE */
#define SHOAL_COLL_GPU_FLAG_BYTES(npes) ((size_t)(npes) * 8) /* flag array at flag_off in every heap */

/* Per-PE completion state in device memory (zeroed once, when the flags are): the blocks of the running call that
 * finished their tiles, and the calls completed on the flags (the epoch the next call signals is epoch + 1). */
typedef struct shoal_coll_gpu_sync {
  unsigned blocks;
  unsigned pad_;
  unsigned long long epoch;
} shoal_coll_gpu_sync_t;

/* Operations (spec 9.9.9). Bitwise ones take integer types only; complex types take sum and prod only. */
enum { SHOAL_RED_SUM = 0, SHOAL_RED_PROD, SHOAL_RED_MIN, SHOAL_RED_MAX, SHOAL_RED_AND, SHOAL_RED_OR, SHOAL_RED_XOR,
       SHOAL_RED_NOPS };
/* Element types of the kernels (storage classes): integers by size and signedness, the floating types, fp16 / bf16
 * (IEEE binary16 and bfloat16 bits in a uint16_t; accumulated in float), complex float / double (C99 layout: re, im).
 * long double has no kernel (SHOAL_RT_LDBL: refused). */
enum { SHOAL_RT_I8 = 0, SHOAL_RT_U8, SHOAL_RT_I16, SHOAL_RT_U16, SHOAL_RT_I32, SHOAL_RT_U32, SHOAL_RT_I64,
       SHOAL_RT_U64, SHOAL_RT_F32, SHOAL_RT_F64, SHOAL_RT_F16, SHOAL_RT_BF16, SHOAL_RT_CF32, SHOAL_RT_CF64,
       SHOAL_RT_NTYPES, SHOAL_RT_LDBL = SHOAL_RT_NTYPES };
/* OP of a routine's name (shmemx_TYPENAME_OP_reduce_block) to its operation. */
enum { SHOAL_RED_N_sum = SHOAL_RED_SUM, SHOAL_RED_N_prod = SHOAL_RED_PROD, SHOAL_RED_N_min = SHOAL_RED_MIN,
       SHOAL_RED_N_max = SHOAL_RED_MAX, SHOAL_RED_N_and = SHOAL_RED_AND, SHOAL_RED_N_or = SHOAL_RED_OR,
       SHOAL_RED_N_xor = SHOAL_RED_XOR };

#endif
