/* coll_stream.c - the stream-ordered collectives (shmemx_*_on_stream): the GPU kernels for device-heap buffers
 * (gpu/coll_gpu_shmem.c, gpu/coll_gpu_reduce_shmem.c), else the host collective's entry point, above both. */
#include "coll_core.h"
#include "heap_gpu.h"
#include "gpu/coll_gpu.h"
#include "gpu/coll_gpu_reduce.h" /* shoal_coll_gpu_reduce */
#include "coll_half.h"             /* h2f, f2h, bf2f, f2bf */

/* ---- public: stream-ordered forms ---- */
static int on_stream(int op, const char *routine, shmem_team_t team, void *dest, const void *source, size_t nelems,
                     void *stream) {
  SHOAL_CHECK_INIT(routine);
  shoal_team_t *t = shoal_team_get(team, routine);
  int rc = op == SHOAL_COLL_GPU_ALLTOALL ? shoal_coll_gpu_alltoall(t, dest, source, nelems, stream, routine)
                                         : shoal_coll_gpu_fcollect(t, dest, source, nelems, stream, routine);
  if (rc == SHOAL_OK) return 0;
  /* Host buffers (or no GPU kernels): drain the stream, then the host collective. */
  if (shoal_gpu_heap_ready() && shoal_gpu_ops.stream_sync(stream))
    shoal_fatal(routine, "cannot synchronize stream %p", stream);
  return op == SHOAL_COLL_GPU_ALLTOALL ? shmem_alltoallmem(team, dest, source, nelems)
                                       : shmem_fcollectmem(team, dest, source, nelems);
}

int shmemx_fcollectmem_on_stream(shmem_team_t team, void *dest, const void *source, size_t nelems, void *stream) {
  return on_stream(SHOAL_COLL_GPU_FCOLLECT, "shmemx_fcollectmem_on_stream", team, dest, source, nelems, stream);
}

int shmemx_alltoallmem_on_stream(shmem_team_t team, void *dest, const void *source, size_t nelems, void *stream) {
  return on_stream(SHOAL_COLL_GPU_ALLTOALL, "shmemx_alltoallmem_on_stream", team, dest, source, nelems, stream);
}

/* Broadcast on a stream: as shmem_broadcastmem (PE_root in team numbering, dest written on every member, the root's
 * too), enqueued on stream for device-heap buffers; host buffers drain the stream and run the host broadcast. */
static int bcast_on_stream(const char *routine, shmem_team_t team, void *dest, const void *source, size_t nelems,
                           size_t esize, int PE_root, void *stream) {
  SHOAL_CHECK_INIT(routine);
  shoal_team_t *t = shoal_team_get(team, routine);
  if (SHOAL_UNLIKELY(PE_root < 0 || PE_root >= t->size))
    shoal_fatal(routine, "PE_root: %d out of range [0, %d) of the team", PE_root, t->size);
  const size_t nb = shoal_coll_bytes(routine, nelems, esize);
  if (!nb) return 0;
  shoal_coll_check_overlap(routine, dest, nb, source, nb, true);
  if (shoal_coll_gpu_bcast(t, dest, source, nb, PE_root, stream, routine) == SHOAL_OK) return 0;
  if (shoal_gpu_heap_ready() && shoal_gpu_ops.stream_sync(stream))
    shoal_fatal(routine, "cannot synchronize stream %p", stream);
  return shmem_broadcastmem(team, dest, source, nb, PE_root);
}

int shmemx_broadcastmem_on_stream(shmem_team_t team, void *dest, const void *source, size_t nelems, int PE_root,
                                  void *stream) {
  return bcast_on_stream("shmemx_broadcastmem_on_stream", team, dest, source, nelems, 1, PE_root, stream);
}
#define SHOAL_DEF_BCAST_ON_STREAM(T, N)                                                                               \
  int shmemx_##N##_broadcast_on_stream(shmem_team_t team, T *dest, const T *source, size_t nelems, int PE_root,       \
                                       void *stream) {                                                                \
    return bcast_on_stream("shmemx_" #N "_broadcast_on_stream", team, dest, source, nelems, sizeof(T), PE_root,      \
                           stream);                                                                                    \
  }
SHOAL_RMA_TYPES(SHOAL_DEF_BCAST_ON_STREAM)

/* ---- host operators for shmemx_half_* / shmemx_bfloat16_* on host buffers: each pairwise step in float, rounded to
 * the type (the kernels round once, after all PEs; on host buffers results may differ by the roundings) ---- */
#define SHOAL_H_sum(a, b) ((a) + (b))
#define SHOAL_H_prod(a, b) ((a) * (b))
#define SHOAL_H_min(a, b) ((b) < (a) ? (b) : (a))
#define SHOAL_H_max(a, b) ((a) < (b) ? (b) : (a))
#define SHOAL_DEF_HOP(N, IN, OUT, OP)                                                                                 \
  static void hop_##N##_##OP(void *o, const void *a, const void *b, size_t n) {                                       \
    uint16_t *x = o;                                                                                                   \
    const uint16_t *y = a, *z = b;                                                                                     \
    for (size_t i = 0; i < n; i++) x[i] = OUT(SHOAL_H_##OP(IN(y[i]), IN(z[i])));                                      \
  }
#define SHOAL_HALF_OPS(X, N, IN, OUT) X(N, IN, OUT, sum) X(N, IN, OUT, prod) X(N, IN, OUT, min) X(N, IN, OUT, max)
SHOAL_HALF_OPS(SHOAL_DEF_HOP, half, h2f, f2h)
SHOAL_HALF_OPS(SHOAL_DEF_HOP, bfloat16, bf2f, f2bf)

/* ---- public: stream-ordered reductions ---- */
/* Host buffers (or no device heap): drain the stream, then the host reduction. */
static void drain(void *stream, const char *routine) {
  if (shoal_gpu_heap_ready() && shoal_gpu_ops.stream_sync(stream))
    shoal_fatal(routine, "cannot synchronize stream %p", stream);
}

#define SHOAL_DEF_REDUCE_ON_STREAM(T, N, OP)                                                                          \
  int shmemx_##N##_##OP##_reduce_on_stream(shmem_team_t team, T *dest, const T *source, size_t nreduce,              \
                                           void *stream) {                                                            \
    static const char routine[] = "shmemx_" #N "_" #OP "_reduce_on_stream";                                          \
    SHOAL_CHECK_INIT(routine);                                                                                         \
    shoal_team_t *t = shoal_team_get(team, routine);                                                                  \
    if (shoal_coll_gpu_reduce(t, dest, source, nreduce, SHOAL_RT_N_##N, SHOAL_RED_N_##OP, stream, routine) ==         \
        SHOAL_OK)                                                                                                      \
      return 0;                                                                                                        \
    drain(stream, routine);                                                                                            \
    return shmem_##N##_##OP##_reduce(team, dest, source, nreduce);                                                    \
  }
SHOAL_REDUCE_ALL(SHOAL_DEF_REDUCE_ON_STREAM)

#define SHOAL_DEF_HALF_ON_STREAM(N, IN, OUT, OP)                                                                      \
  int shmemx_##N##_##OP##_reduce_on_stream(shmem_team_t team, shmemx_##N##_t *dest, const shmemx_##N##_t *source,    \
                                           size_t nreduce, void *stream) {                                            \
    static const char routine[] = "shmemx_" #N "_" #OP "_reduce_on_stream";                                          \
    SHOAL_CHECK_INIT(routine);                                                                                         \
    shoal_team_t *t = shoal_team_get(team, routine);                                                                  \
    if (shoal_coll_gpu_reduce(t, dest, source, nreduce, SHOAL_RT_N_##N, SHOAL_RED_N_##OP, stream, routine) ==         \
        SHOAL_OK)                                                                                                      \
      return 0;                                                                                                        \
    drain(stream, routine);                                                                                            \
    const size_t nb = shoal_coll_bytes(routine, nreduce, 2);                                                          \
    shoal_coll_debug_check(t, routine, "nreduce", nreduce, NULL, 0);                                                  \
    if (!nb) return 0;                                                                                                 \
    shoal_coll_check_overlap(routine, dest, nb, source, nb, true);                                                    \
    shoal_coll_reduce(t, dest, source, nreduce, 2, hop_##N##_##OP, routine);                                          \
    return 0;                                                                                                          \
  }
SHOAL_HALF_OPS(SHOAL_DEF_HALF_ON_STREAM, half, h2f, f2h)
SHOAL_HALF_OPS(SHOAL_DEF_HALF_ON_STREAM, bfloat16, bf2f, f2bf)
