/*
 * coll_gpu_reduce_plan.h - host side of a GPU reduction call without any vendor API (coll_gpu_reduce.cu and the CPU
 * emulation test): argument checks with their messages, vector path, tile, grid and kernel class.
 */
#ifndef SHOAL_COLL_GPU_REDUCE_PLAN_H
#define SHOAL_COLL_GPU_REDUCE_PLAN_H
#include <stdint.h>
#include <stdio.h>

#include "coll_gpu_plan.h"
#include "coll_gpu_reduce.h"

namespace shoal_cr {

struct rplan {
  int wclass, vec, gpu_scope, entry_kernel; /* entry_kernel: the entry exchange runs in its own one-block kernel */
  int ll;                                   /* 1: the one-exchange kernel (coll_gpu_reduce.h), one block */
  unsigned grid;
  size_t shmem, tile;
};

/* Validate a call and choose kernel, tile and grid; 0 or -3 with the reason in err. The tile is auto_tile of this PE's
 * slice (bytes reduced here, about nelems * size / W), so a 4 KiB call is one tile: one block, one launch. */
inline int make_red_plan(const shoal_coll_gpu_red_args_t *a, rplan *pl, char *err, size_t errlen, int (*sm_count)(void)) {
  const char *bad = NULL;
  if (a->op < 0 || a->op >= SHOAL_RED_NOPS) bad = "op: not a SHOAL_RED_* operation";
  else if (a->type < 0 || a->type >= SHOAL_RT_NTYPES) bad = "type: not a SHOAL_RT_* type with a kernel";
  else if (!shoal_red_supported(a->type, a->op)) bad = "op: not defined for this type (bitwise: integers; complex: sum, prod)";
  else if (a->npes < 1 || a->npes > SHOAL_COLL_GPU_MAX_PES) bad = "npes: out of range [1, 1024]";
  else if (a->me < 0 || a->me >= a->npes) bad = "me: out of range [0, npes)";
  else if (a->cfg.variant != SHOAL_COLL_GPU_HOISTED && a->cfg.variant != SHOAL_COLL_GPU_NAIVE) bad = "variant: not hoisted (0) or naive (1)";
  else if (a->cfg.sms < 0) bad = "sms: negative";
  else if (a->cfg.tile % 16) bad = "tile: not a multiple of 16 bytes";
  else if (a->cfg.scope != SHOAL_COLL_GPU_SCOPE_AUTO && a->cfg.scope != SHOAL_COLL_GPU_SCOPE_SYS)
    bad = "scope: not auto (0) or sys (1)";
  else if (a->nelems && !a->peer_base) bad = "peer_base: NULL";
  else if (a->nelems && a->wait && a->npes > 1 && !a->sync) bad = "sync: NULL with wait = 1";
  else if ((a->src_off | a->dst_off) % shoal_red_type_size(a->type)) bad = "src_off/dst_off: not a multiple of the element size";
  else if (a->ll_half % 16 || (a->ll_half && a->ll_off % 16)) bad = "ll_off/ll_half: not multiples of 16 bytes";
  else if (a->nelems > ((size_t)1 << 62) / shoal_red_type_size(a->type)) bad = "nelems: more than 2^62 bytes";
  if (bad) {
    if (err) snprintf(err, errlen, "shoal_coll_gpu_reduce_launch: %s", bad);
    return -3;
  }
  const size_t es = shoal_red_type_size(a->type);
  const int w = a->npes;
  pl->vec = (a->src_off | a->dst_off) % 16 == 0 ? 16 : (int)es; /* 16: uint4 vectors (complex double: one each) */
  pl->wclass = (pl->vec == 16 && es < 16 && a->cfg.variant == SHOAL_COLL_GPU_HOISTED && a->op == SHOAL_RED_SUM &&
                (w == 2 || w == 4 || w == 8)) ? w : 0;
  int sms = a->cfg.sms;
  if (!sms) {
    sms = sm_count();
    if (sms <= 0) {
      if (err) snprintf(err, errlen, "shoal_coll_gpu_reduce_launch: sms: the GPU's multiprocessor count is not available");
      return -1;
    }
  }
  const size_t nv = a->nelems * es / (size_t)pl->vec, per = (nv + w - 1) / w, slice_bytes = per * (size_t)pl->vec;
  pl->tile = a->cfg.tile ? a->cfg.tile : shoal_cg::auto_tile(slice_bytes);
  if (pl->tile < (size_t)pl->vec) pl->tile = (size_t)pl->vec;
  const size_t ntiles = (slice_bytes + pl->tile - 1) / pl->tile;
  pl->grid = (unsigned)(ntiles < (size_t)sms ? (ntiles ? ntiles : 1) : (size_t)sms);
  pl->gpu_scope = a->cfg.scope == SHOAL_COLL_GPU_SCOPE_AUTO && a->one_gpu;
  /* One exchange: small calls with in-kernel completion, 16-byte aligned buffers, the hoisted variant (naive stays the
   * two-exchange reference), SHOAL_COLL_GPU_SMALL not off; the records (8 data bytes in 16) of every PE fit a scratch
   * half and their data a block's shared memory. Every input is the same on every PE (a.after is not one: PEs may
   * spread their calls over streams differently), so all PEs of a call take the same path. */
  const size_t nb = a->nelems * es, rec = (nb + 7) / 8 * 16, row = (nb + 15) / 16 * 16;
  pl->ll = a->wait && w > 1 && a->ll_half && pl->vec == 16 &&
           a->cfg.variant == SHOAL_COLL_GPU_HOISTED && a->cfg.small != SHOAL_COLL_GPU_SMALL_OFF &&
           rec <= a->ll_half / (size_t)w && row <= SHOAL_COLL_GPU_LL_SMEM / (size_t)w;
  if (pl->ll) {
    pl->grid = 1;
    pl->entry_kernel = 0;
    pl->shmem = (size_t)w * row;
    pl->tile = row;
    return 0;
  }
  pl->entry_kernel = a->wait && w > 1 && pl->grid > 1;
  /* generic W: the hoisted pointer tables (the element path is always the hoisted generic kernel; naive ignores them) */
  pl->shmem = pl->wclass ? 0 : 2 * (size_t)w * sizeof(char *);
  return 0;
}

} // namespace shoal_cr
#endif
