/*
 * coll_gpu_reduce_shmem.c - the GPU reduction kernels (coll_gpu_reduce.h) behind the OpenSHMEM API (issue 16):
 * shmem_TYPENAME_OP_reduce on device-heap buffers (collectives/coll_reduce.c calls shoal_coll_gpu_reduce first) and
 * the stream-ordered shmemx_TYPENAME_OP_reduce_on_stream, shmemx_half_OP_reduce_on_stream and
 * shmemx_bfloat16_OP_reduce_on_stream (../coll_stream.c). The team's slot, flags and completion are coll_gpu_shmem.c's
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
  /* members on other nodes (no mapping of their heaps here), or kernels left off because some PE is far */
  if ((t->remote || shoal_gpu_heap_any_far()) && !t->aset)
    return shoal_coll_gpu_reduce_far(t, dest, source, nelems, type, op, stream, routine);
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
    shoal_coll_barrier(t, "shmem_team_sync");
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
