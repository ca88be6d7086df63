/*
 * coll_gpu_reduce.h - GPU reductions to all (all-reduce) over a symmetric heap (issue 16; docs/gpu-collectives.md).
 *
 * Plain C interface to the kernels of coll_gpu_reduce.cu (nvcc or hipcc), in the model of coll_gpu.h: W PEs whose heaps
 * every PE addresses (peer_base), buffers named by their offset in the heap. One call: every PE p reduces its slice
 * (1/W of the nelems elements, in 16-byte units) by reading that slice of every PE's source directly (sum order: PE 0,
 * 1, .., W-1, so that every PE gets the same bits and a host reference in that order matches), and stores the result
 * slice into every PE's dest. Because a slice is read and written by its owner only, dest == source (in place) works.
 * Completion (wait = 1), two epochs per call on coll_gpu.h's flags and sync: entry (every PE's source is ready and its
 * dest free: signal epoch + 1, wait for it) and exit (every slice stored everywhere: epoch + 2). The entry runs in a
 * one-block kernel before the data grid (or in the data kernel itself when its grid is one block), so that no block
 * of the grid spins while a peer's grid waits for multiprocessors. wait = 0: data only; the caller runs a host barrier
 * before and after (stream synchronized).
 *
 * One exchange (small calls, shoal_coll_gpu_reduce_epochs() == 1): where the caller gives a scratch area (ll_off,
 * ll_half) and the whole call fits it, every PE writes its source into its row of every peer's scratch as records
 * of 16 bytes, each two 8-byte words of 4 data bytes and a 4-byte tag of the call's epoch (one store per word, so a
 * record is seen whole or not at all: no fence, no flag), then polls its own scratch until every peer's records carry
 * the tag, and reduces locally into its own dest (PE order 0 .. W-1, the same bits as the two-exchange path). Dest is
 * written by its owner only and the source is read by its owner only, so the call needs no entry and no exit
 * exchange. Scratch halves alternate by epoch parity: a PE writes half e % 2 of a peer only after it saw every peer
 * reach epoch e - 1, which each peer did after it finished reading that half in call e - 2. With calls on several
 * streams (args.after) the call first waits its turn, as every call does; the one-exchange kernel publishes its epoch
 * only when its dest is complete, and a call after a two-exchange or fcollect call (which publish theirs on arrival)
 * also waits for every peer's flag (peers_after). Not taken with wait = 0. A caller that follows such a call with one
 * that stores into peers' memory without an entry exchange (fcollect, alltoall, broadcast: coll_gpu.h) launches
 * shoal_coll_gpu_entry_launch first: a peer may still be writing its dest. Every PE must see the same
 * SHOAL_COLL_GPU_SMALL (the choice of path).
 */
#ifndef SHOAL_COLL_GPU_REDUCE_H
#define SHOAL_COLL_GPU_REDUCE_H
#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "coll_gpu.h"
#ifdef __cplusplus
extern "C" {
#endif

#define SHOAL_RT_SINT(sz) ((sz) == 1 ? SHOAL_RT_I8 : (sz) == 2 ? SHOAL_RT_I16 : (sz) == 4 ? SHOAL_RT_I32 : SHOAL_RT_I64)
#define SHOAL_RT_UINT(sz) ((sz) == 1 ? SHOAL_RT_U8 : (sz) == 2 ? SHOAL_RT_U16 : (sz) == 4 ? SHOAL_RT_U32 : SHOAL_RT_U64)
/* The kernel type of each TYPENAME of include/shoal/shmem_coll.h's lists (SHOAL_RT_N_##N), for the host API. */
enum {
  SHOAL_RT_N_char = CHAR_MIN < 0 ? SHOAL_RT_I8 : SHOAL_RT_U8, SHOAL_RT_N_schar = SHOAL_RT_I8,
  SHOAL_RT_N_short = SHOAL_RT_SINT(sizeof(short)), SHOAL_RT_N_int = SHOAL_RT_SINT(sizeof(int)),
  SHOAL_RT_N_long = SHOAL_RT_SINT(sizeof(long)), SHOAL_RT_N_longlong = SHOAL_RT_SINT(sizeof(long long)),
  SHOAL_RT_N_ptrdiff = SHOAL_RT_SINT(sizeof(ptrdiff_t)), SHOAL_RT_N_uchar = SHOAL_RT_U8,
  SHOAL_RT_N_ushort = SHOAL_RT_UINT(sizeof(short)), SHOAL_RT_N_uint = SHOAL_RT_UINT(sizeof(int)),
  SHOAL_RT_N_ulong = SHOAL_RT_UINT(sizeof(long)), SHOAL_RT_N_ulonglong = SHOAL_RT_UINT(sizeof(long long)),
  SHOAL_RT_N_int8 = SHOAL_RT_I8, SHOAL_RT_N_int16 = SHOAL_RT_I16, SHOAL_RT_N_int32 = SHOAL_RT_I32,
  SHOAL_RT_N_int64 = SHOAL_RT_I64, SHOAL_RT_N_uint8 = SHOAL_RT_U8, SHOAL_RT_N_uint16 = SHOAL_RT_U16,
  SHOAL_RT_N_uint32 = SHOAL_RT_U32, SHOAL_RT_N_uint64 = SHOAL_RT_U64, SHOAL_RT_N_size = SHOAL_RT_UINT(sizeof(size_t)),
  SHOAL_RT_N_float = SHOAL_RT_F32, SHOAL_RT_N_double = SHOAL_RT_F64, SHOAL_RT_N_longdouble = SHOAL_RT_LDBL,
  SHOAL_RT_N_complexf = SHOAL_RT_CF32, SHOAL_RT_N_complexd = SHOAL_RT_CF64, SHOAL_RT_N_half = SHOAL_RT_F16,
  SHOAL_RT_N_bfloat16 = SHOAL_RT_BF16
};
/* Bytes of one element of kernel type t (0 for an unknown type). */
static inline size_t shoal_red_type_size(int t) {
  static const unsigned char sz[SHOAL_RT_NTYPES + 1] = {1, 1, 2, 2, 4, 4, 8, 8, 4, 8, 2, 2, 8, 16, 0};
  return t >= 0 && t < SHOAL_RT_NTYPES ? sz[t] : 0;
}
/* Whether the kernels have (type, op): 1 or 0. */
static inline int shoal_red_supported(int t, int op) {
  if (t < 0 || t >= SHOAL_RT_NTYPES || op < 0 || op >= SHOAL_RED_NOPS) return 0;
  if (t <= SHOAL_RT_U64) return 1;
  if (t <= SHOAL_RT_BF16) return op <= SHOAL_RED_MAX;
  return op <= SHOAL_RED_PROD;
}

typedef struct shoal_coll_gpu_red_args {
  int op, type;            /* SHOAL_RED_*, SHOAL_RT_* (shoal_red_supported) */
  int me, npes;            /* as in shoal_coll_gpu_args_t */
  char *const *peer_base;  /* device array [npes]: heap bases in this address space */
  size_t dst_off, src_off; /* offsets of dest and source (nelems elements each) in every heap; equal: in place */
  size_t nelems;           /* elements; 0 is a no-op */
  size_t flag_off;         /* as in shoal_coll_gpu_args_t (the same flags and sync may serve both kinds of call) */
  struct shoal_coll_gpu_sync *sync;
  int wait, one_gpu;
  uint64_t timeout_ns;
  unsigned long long after;   /* as shoal_coll_gpu_args_t's: calls before this one on another stream (epochs) */
  size_t ll_off;           /* offset in every heap of the one-exchange scratch: 2 halves of ll_half bytes, zeroed
                              when the flags are; ll_half = 0: no one-exchange path */
  size_t ll_half;          /* bytes of one half, a multiple of 16 (SHOAL_COLL_GPU_LL_HALF) */
  unsigned long long peers_after; /* one exchange with after != 0 when the call of epoch `after` was not itself a
                              one-exchange call (it published its epoch on arrival): wait until every peer's flag
                              has reached it before writing into their scratch; else 0 */
  shoal_coll_gpu_cfg_t cfg; /* variant, sms, tile (bytes per tile of a slice, multiple of 16), scope; group, pipe
                               unused (a chunk's result is stored to every PE together) */
} shoal_coll_gpu_red_args_t;

/* Enqueue one reduction on stream. 0, -3 for a bad argument (message in err: the argument and why), -1 for a failed
 * launch. */
int shoal_coll_gpu_reduce_launch(const shoal_coll_gpu_red_args_t *a, void *stream, char *err, size_t errlen);
/* Epochs of the flags a call takes: 0 (wait = 0, one PE or nothing to do), 1 (one exchange) or 2; -3 for a bad
 * argument. */
int shoal_coll_gpu_reduce_epochs(const shoal_coll_gpu_red_args_t *a);
/* Enqueue an entry exchange alone (one epoch of a's flags: every PE has entered; a.after honoured; one block), for a
 * call that follows a one-exchange reduction and stores into peers. 0, -3 (bad argument), -1 (failed launch). */
int shoal_coll_gpu_entry_launch(const shoal_coll_gpu_args_t *a, void *stream, char *err, size_t errlen);
/* Name of the kernel a call would run, e.g. "reduce_sum_f32_hoisted_w4_v16" ("reduce_sum_f32_ll" for one exchange). */
void shoal_coll_gpu_reduce_kernel_name(const shoal_coll_gpu_red_args_t *a, char *buf, size_t len);
/* Names for messages. */
static inline const char *shoal_red_op_name(int op) {
  static const char *const n[SHOAL_RED_NOPS] = {"sum", "prod", "min", "max", "and", "or", "xor"};
  return op >= 0 && op < SHOAL_RED_NOPS ? n[op] : "?";
}
static inline const char *shoal_red_type_name(int t) {
  static const char *const n[SHOAL_RT_NTYPES + 1] = {"i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "f32",
                                                     "f64", "f16", "bf16", "cf32", "cf64", "long double"};
  return t >= 0 && t <= SHOAL_RT_NTYPES ? n[t] : "?";
}

/* ---- runtime glue (coll_gpu_reduce_shmem.c, part of libshoal) ---- */
struct shoal_team;
/* The host reductions' entry: on the GPU when dest and source are on the device heap (0), else SHOAL_ERR_NOSYS and the
 * host algorithm runs. nelems elements of kernel type type; stream NULL: blocking. Fatal (one line naming routine) for
 * mixed host/device buffers, past the heap end, long double, no kernels. */
int shoal_coll_gpu_reduce(struct shoal_team *t, void *dest, const void *source, size_t nelems, int type, int op,
                          void *stream, const char *routine);
/* The same on a team with members on other nodes (gpu/coll_gpu_far.c): every member reads every source, combines in
 * team order in the kernels' accumulator type; checks done by shoal_coll_gpu_reduce. Returns SHOAL_OK. */
int shoal_coll_gpu_reduce_far(struct shoal_team *t, void *dest, const void *source, size_t nelems, int type, int op,
                              void *stream, const char *routine);

#ifdef __cplusplus
}
#endif
#endif
