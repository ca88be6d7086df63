/*
 * coll_gpu_reduce.cu - instantiations of the GPU reduction kernels and their extern "C" launchers (coll_gpu_reduce.h).
 * Single source: nvcc (CUDA) and hipcc (HIP).
 *
 * Instantiated for every (type, op) of shoal_red_supported (signed integers for min and max only: the other operations
 * are the unsigned kernels' bits): hoisted and naive on the 16-byte path with generic W, hoisted with W = 2, 4, 8
 * unrolled for sum, and the element path (misaligned offsets; complex double), hoisted.
 */
#include <stdio.h>
#include <string.h>

#include <shoal/detail/coll_gpu_reduce.cuh>
#include "coll_gpu_reduce_plan.h"
#include "coll_gpu_launch.h"

using namespace shoal_cr;

using shoal_gl::sm_count;

extern "C" void shoal_coll_gpu_reduce_kernel_name(const shoal_coll_gpu_red_args_t *a, char *buf, size_t len) {
  rplan pl;
  if (make_red_plan(a, &pl, NULL, 0, sm_count)) {
    snprintf(buf, len, "invalid");
    return;
  }
  if (pl.ll) {
    snprintf(buf, len, "reduce_%s_%s_ll", shoal_red_op_name(a->op), shoal_red_type_name(red_type(a->type, a->op)));
    return;
  }
  char w[16];
  if (pl.wclass) snprintf(w, sizeof w, "w%d", pl.wclass);
  else snprintf(w, sizeof w, "wgen");
  snprintf(buf, len, "reduce_%s_%s_%s_%s_v%d", shoal_red_op_name(a->op), shoal_red_type_name(red_type(a->type, a->op)),
           a->cfg.variant == SHOAL_COLL_GPU_NAIVE && pl.vec == 16 && shoal_red_type_size(a->type) < 16 ? "naive" : "hoisted", w, pl.vec);
}

extern "C" int shoal_coll_gpu_reduce_launch(const shoal_coll_gpu_red_args_t *a, void *stream, char *err, size_t errlen) {
  rplan pl;
  int rc = make_red_plan(a, &pl, err, errlen, sm_count);
  if (rc) return rc;
  if (!a->nelems) return 0;
  rparams p;
  memset(&p, 0, sizeof p);
  p.c.peer_base = a->peer_base;
  p.c.dst_off = a->dst_off;
  p.c.nbytes = a->nelems * shoal_red_type_size(a->type);
  p.c.tile = pl.tile;
  p.c.flag_off = a->flag_off;
  p.c.timeout_ns = a->timeout_ns;
  p.c.after = a->wait ? a->after : 0;
  p.c.sync = a->sync;
  p.c.me = a->me;
  p.c.npes = a->npes;
  p.c.wait = a->wait && a->npes > 1;
  p.c.gpu_scope = pl.gpu_scope;
  p.src_off = a->src_off;
  p.nelems = a->nelems;
  p.ll_off = a->ll_off;
  p.ll_half = a->ll_half;
  p.peers_after = pl.ll && a->wait ? a->peers_after : 0;
  p.entry = p.c.wait && !pl.entry_kernel && !pl.ll;
  SHOAL_GPU_API(Stream_t) s = (SHOAL_GPU_API(Stream_t))stream;
  /* Small grids as the fcollect's (coll_gpu_plan.h): programmatic dependent launch, so that a call starts while the
   * stream's previous kernel ends (CUDA, sm_90 and later). */
  const bool pdl = pl.grid <= SHOAL_COLL_GPU_PDL_MAX_GRID && a->cfg.pdl != SHOAL_COLL_GPU_PDL_OFF &&
                   shoal_gl::pdl_ok((const void *)red_entry_kernel<0>);
  const bool rt = a->cfg.rt_launch != 0;
  p.c.pdl = pdl;
  if (pl.entry_kernel &&
      shoal_gl::launch(red_entry_kernel<0>, 1u, 64u, 0, s, pdl, p.c, rt, err, errlen, "shoal_coll_gpu_reduce_launch: entry"))
    return -1;
  rkernel_fn k = rpick(a->type, a->op, pl.ll ? VAR_LL : a->cfg.variant, pl.wclass, pl.vec);
  return shoal_gl::launch(k, pl.grid, (unsigned)NT, pl.shmem, s, pdl, p, rt, err, errlen, "shoal_coll_gpu_reduce_launch");
}

extern "C" int shoal_coll_gpu_reduce_epochs(const shoal_coll_gpu_red_args_t *a) {
  rplan pl;
  if (make_red_plan(a, &pl, NULL, 0, sm_count)) return -3;
  if (!a->nelems || !a->wait || a->npes < 2) return 0;
  return pl.ll ? 1 : 2;
}

extern "C" int shoal_coll_gpu_entry_launch(const shoal_coll_gpu_args_t *a, void *stream, char *err, size_t errlen) {
  if (!a || a->npes < 1 || a->npes > SHOAL_COLL_GPU_MAX_PES || a->me < 0 || a->me >= a->npes || !a->peer_base ||
      !a->sync) {
    if (err) snprintf(err, errlen, "shoal_coll_gpu_entry_launch: npes, me, peer_base or sync out of range or NULL");
    return -3;
  }
  if (!a->wait || a->npes < 2) return 0;
  params c;
  memset(&c, 0, sizeof c);
  c.peer_base = a->peer_base;
  c.flag_off = a->flag_off;
  c.sync = a->sync;
  c.me = a->me;
  c.npes = a->npes;
  c.wait = 1;
  c.timeout_ns = a->timeout_ns;
  c.after = a->after;
  c.gpu_scope = a->cfg.scope == SHOAL_COLL_GPU_SCOPE_AUTO && a->one_gpu;
  SHOAL_GPU_API(Stream_t) s = (SHOAL_GPU_API(Stream_t))stream;
  const bool pdl = a->cfg.pdl != SHOAL_COLL_GPU_PDL_OFF && shoal_gl::pdl_ok((const void *)red_entry_kernel<0>);
  c.pdl = pdl;
  return shoal_gl::launch(red_entry_kernel<0>, 1u, 64u, 0, s, pdl, c, a->cfg.rt_launch != 0, err, errlen,
                          "shoal_coll_gpu_entry_launch");
}
