/*
 * coll_gpu_reduce_shmem.c - the GPU reduction kernels (coll_gpu_reduce.h) behind the OpenSHMEM API (issue 16):
 * shmem_TYPENAME_OP_reduce on device-heap buffers (collectives/coll_reduce.c calls shoal_coll_gpu_reduce first) and
 * the stream-ordered shmemx_TYPENAME_OP_reduce_on_stream, shmemx_half_OP_reduce_on_stream and
 * shmemx_bfloat16_OP_reduce_on_stream. The team's slot, flags and completion are coll_gpu_shmem.c's
 * (shoal_coll_gpu_slot_begin / _end): a reduction takes two epochs of the slot (one with the one-exchange kernel of
 * small calls, whose scratch is the slot's: shoal_coll_gpu_slot_scratch), a fcollect one.
 */
#include "coll_core.h"
#include "heap_gpu.h"
#include "gpu/coll_gpu_reduce.h"

#include <math.h>
#include <stdlib.h>

#ifndef SHOAL_HAVE_COLL_GPU
#define SHOAL_HAVE_COLL_GPU 0
#endif

void shoal_coll_gpu_slot_begin(shoal_team_t *t, void *stream, const char *routine, shoal_coll_gpu_args_t *a, void **s);
void shoal_coll_gpu_slot_end(shoal_team_t *t, void *s, void *stream, int epochs, bool ll, const char *routine);
void shoal_coll_gpu_slot_scratch(const shoal_team_t *t, size_t *off, size_t *half, unsigned long long *peers_after,
                                 unsigned long long after);

int shoal_coll_gpu_reduce(shoal_team_t *t, void *dest, const void *source, size_t nelems, int type, int op,
                          void *stream, const char *routine) {
  if (!shoal_gpu_heap_ready()) return SHOAL_ERR_NOSYS;
  const bool ddev = shoal_gpu_heap_owns(dest), sdev = shoal_gpu_heap_owns(source);
  if (!ddev && !sdev) return SHOAL_ERR_NOSYS;
  if (ddev != sdev)
    shoal_fatal(routine, "%s is on the device heap and %s is not: both must be device symmetric objects",
                ddev ? "dest" : "source", ddev ? "source" : "dest");
  if (type == SHOAL_RT_LDBL)
    shoal_fatal(routine, "long double: no GPU reduction for long double (dest and source are on the device heap)");
  if (!nelems) return SHOAL_OK;
  const size_t es = shoal_red_type_size(type), nb = shoal_coll_bytes(routine, nelems, es);
  const bool dend = shoal_gpu_heap_owns((const char *)dest + nb - 1);
  if (!dend || !shoal_gpu_heap_owns((const char *)source + nb - 1))
    shoal_fatal(routine, "%s: %zu bytes from %p run past the end of the device heap", dend ? "source" : "dest", nb,
                dend ? source : dest);
  shoal_coll_check_overlap(routine, dest, nb, source, nb, true);
  if ((uintptr_t)dest % es || (uintptr_t)source % es)
    shoal_fatal(routine, "%s: %p is not aligned to its %zu-byte elements", (uintptr_t)dest % es ? "dest" : "source",
                (uintptr_t)dest % es ? dest : source, es);
  shoal_coll_gpu_args_t g;
  void *s;
  shoal_coll_gpu_slot_begin(t, stream, routine, &g, &s);
  const shmemx_device_state_t *st = shoal_gpu_state();
  shoal_coll_gpu_red_args_t a;
  memset(&a, 0, sizeof a);
  a.op = op;
  a.type = type;
  a.me = g.me;
  a.npes = g.npes;
  a.peer_base = g.peer_base;
  a.dst_off = (size_t)((const char *)dest - st->heap_base);
  a.src_off = (size_t)((const char *)source - st->heap_base);
  a.nelems = nelems;
  a.flag_off = g.flag_off;
  a.sync = g.sync;
  a.wait = g.wait;
  a.one_gpu = g.one_gpu;
  a.cfg = g.cfg;
  a.after = g.after;
  shoal_coll_gpu_slot_scratch(t, &a.ll_off, &a.ll_half, &a.peers_after, a.after);
  int epochs = 2;
#if SHOAL_HAVE_COLL_GPU
  if (!a.wait) { /* the host-side entry: every PE's source written (its stream drained), then a team barrier */
    if (shoal_gpu_ops.stream_sync(s)) shoal_fatal(routine, "cannot synchronize stream %p", s);
    shmem_team_sync((shmem_team_t)t);
  }
  char err[256];
  if (shoal_coll_gpu_reduce_launch(&a, s, err, sizeof err)) shoal_fatal(routine, "%s", err);
  epochs = shoal_coll_gpu_reduce_epochs(&a);
#else
  (void)a; /* not reached: without the kernels slot_begin is fatal */
#endif
  shoal_coll_gpu_slot_end(t, s, stream, epochs, epochs == 1, routine);
  return SHOAL_OK;
}

/* ---- host operators for shmemx_half_* / shmemx_bfloat16_* on host buffers: each pairwise step in float, rounded to
 * the type (the kernels round once, after all PEs; on host buffers results may differ by the roundings) ---- */
static float h2f(uint16_t h) {
  const uint32_t s = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  if (!e) return (s ? -1.f : 1.f) * (float)m * 5.9604644775390625e-8f;
  uint32_t u = s | (e == 31 ? 0x7f800000u | (m << 13) : ((e + 112) << 23) | (m << 13));
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static uint16_t f2h(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  const uint16_t s = (uint16_t)((x >> 16) & 0x8000);
  x &= 0x7fffffff;
  if (x >= 0x7f800000u) return (uint16_t)(s | 0x7c00 | (x > 0x7f800000u ? 0x200 : 0));
  if (x >= 0x477ff000u) return (uint16_t)(s | 0x7c00);
  if (x < 0x38800000u) {
    float a, t;
    memcpy(&a, &x, 4);
    t = a + 0.5f;
    uint32_t u;
    memcpy(&u, &t, 4);
    return (uint16_t)(s | (u - 0x3f000000u));
  }
  x += 0xc8000fffu + ((x >> 13) & 1);
  return (uint16_t)(s | (x >> 13));
}
static float bf2f(uint16_t b) {
  uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static uint16_t f2bf(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7fffffff) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40);
  return (uint16_t)((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}
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
