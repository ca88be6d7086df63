/*
 * coll_gpu_plan.h - host side of a GPU collective call, without any vendor API (shared by coll_gpu.cu and the CPU
 * emulation test): argument checks with their messages, and the automatic choices of G, tile, grid and vector width.
 */
#ifndef SHOAL_COLL_GPU_PLAN_H
#define SHOAL_COLL_GPU_PLAN_H
#include <stdint.h>
#include <stdio.h>

#include "coll_gpu.h"

namespace shoal_cg {

struct plan {
  int wclass, g, vec, pipe, gpu_scope, small, pdl;
  unsigned grid;
  size_t shmem;
  shoal_coll_gpu_cfg_t cfg;
};

/* Automatic tile (bytes per PE block -> bytes per tile, a multiple of 16): about nbytes / 64 up to one chunk (32 KiB),
 * then nbytes / 512 up to 512 KiB, at least 4 KiB. Small calls get few blocks (each block's arrival and fences cost
 * more than its bytes), large ones tiles of 128-512 KiB: 4 PEs on one H200 (2026-11-29 sweeps of tile x COMM_SMS,
 * docs/gpu-collectives.md) ran within 2-8% of the best tile at every size from 64 KiB to 1 GiB per PE. Up to
 * SHOAL_COLL_GPU_ONE_BLOCK bytes one tile (one block): 16 KiB at 4 PEs took 4.48 us in one block against 4.80 in four
 * (2026-12-01, both with programmatic dependent launch); then up to SHOAL_COLL_GPU_PDL_TILES bytes 8 tiles, so that the
 * grid keeps its programmatic dependent launch: 64 KiB 5.27 us (8 blocks) against 8.71 (16 blocks, without it), 256
 * KiB 6.87 against 9.05 (64 blocks). */
inline size_t auto_tile(size_t nbytes) {
  if (nbytes <= SHOAL_COLL_GPU_ONE_BLOCK) /* one block: its completion and launch beat more blocks' bandwidth here */
    return nbytes < 4096 ? 4096 : (nbytes + 15) & ~(size_t)15;
  if (nbytes <= SHOAL_COLL_GPU_PDL_TILES) /* SHOAL_COLL_GPU_PDL_MAX_GRID blocks: programmatic dependent launch */
    return ((nbytes + SHOAL_COLL_GPU_PDL_MAX_GRID - 1) / SHOAL_COLL_GPU_PDL_MAX_GRID + 15) & ~(size_t)15;
  size_t a = nbytes / 64, b = nbytes / 512;
  if (a > 32768) a = 32768;
  if (b > 524288) b = 524288;
  size_t t = a > b ? a : b;
  if (t < 4096) t = 4096;
  return (t + 15) & ~(size_t)15;
}

/* Validate a call and choose kernel, grid and shared memory; 0 or -3 with the reason in err. */
inline int make_plan(const shoal_coll_gpu_args_t *a, plan *pl, char *err, size_t errlen, int (*sm_count)(void)) {
  const char *bad = NULL;
  if (a->op != SHOAL_COLL_GPU_FCOLLECT && a->op != SHOAL_COLL_GPU_ALLTOALL && a->op != SHOAL_COLL_GPU_BCAST)
    bad = "op: not fcollect (0), alltoall (1) or broadcast (2)";
  else if (a->npes < 1 || a->npes > SHOAL_COLL_GPU_MAX_PES) bad = "npes: out of range [1, 1024]";
  else if (a->me < 0 || a->me >= a->npes) bad = "me: out of range [0, npes)";
  else if (a->op == SHOAL_COLL_GPU_BCAST && (a->root < 0 || a->root >= a->npes)) bad = "root: out of range [0, npes)";
  else if (a->cfg.variant != SHOAL_COLL_GPU_HOISTED && a->cfg.variant != SHOAL_COLL_GPU_NAIVE) bad = "variant: not hoisted (0) or naive (1)";
  else if (a->cfg.group != 0 && a->cfg.group != 1 && a->cfg.group != 2 && a->cfg.group != 4 && a->cfg.group != 8)
    bad = "G: not 1, 2, 4 or 8";
  else if (a->cfg.sms < 0) bad = "sms: negative";
  else if (a->cfg.tile % 16) bad = "tile: not a multiple of 16 bytes";
  else if (a->cfg.pipe < SHOAL_COLL_GPU_PIPE_AUTO || a->cfg.pipe > SHOAL_COLL_GPU_PIPE_ON) bad = "pipe: not auto (0), off (1) or on (2)";
  else if (a->cfg.scope != SHOAL_COLL_GPU_SCOPE_AUTO && a->cfg.scope != SHOAL_COLL_GPU_SCOPE_SYS)
    bad = "scope: not auto (0) or sys (1)";
  else if (a->cfg.small < SHOAL_COLL_GPU_SMALL_AUTO || a->cfg.small > SHOAL_COLL_GPU_SMALL_ON)
    bad = "small: not auto (0), off (1) or on (2)";
  else if (a->cfg.pdl < SHOAL_COLL_GPU_PDL_AUTO || a->cfg.pdl > SHOAL_COLL_GPU_PDL_ON)
    bad = "pdl: not auto (0), off (1) or on (2)";
  else if (a->nbytes && (!a->peer_base || !a->src)) bad = "peer_base/src: NULL";
  else if (a->nbytes && a->wait && a->npes > 1 && !a->sync) bad = "sync: NULL with wait = 1";
  if (bad) {
    if (err) snprintf(err, errlen, "shoal_coll_gpu_launch: %s", bad);
    return -3;
  }
  const int w = a->npes;
  pl->wclass = (w == 2 || w == 4 || w == 8) ? w : 0;
  pl->vec = (((uintptr_t)a->src | a->dst_off | a->nbytes) % 16 == 0) ? 16 : 1;
  pl->cfg = a->cfg;
  int g = a->cfg.group;
  if (!g) g = a->op != SHOAL_COLL_GPU_ALLTOALL ? (pl->wclass ? pl->wclass : 4) : 2;
  if (pl->wclass && g > pl->wclass) g = pl->wclass;
  if (pl->vec == 1) g = 1;
  pl->cfg.group = g;
  pl->g = g;
  int sms = a->cfg.sms;
  if (!sms) {
    sms = sm_count();
    if (sms <= 0) {
      if (err) snprintf(err, errlen, "shoal_coll_gpu_launch: sms: the GPU's multiprocessor count is not available");
      return -1;
    }
  }
  pl->cfg.sms = sms;
  size_t tile = a->cfg.tile;
  const size_t chunk = (size_t)SHOAL_COLL_GPU_THREADS * SHOAL_COLL_GPU_VPT * 16; /* 32 KiB */
  if (!tile) tile = auto_tile(a->nbytes);
  pl->cfg.tile = tile;
  const size_t ntiles = a->nbytes ? (a->nbytes + tile - 1) / tile : 0;
  pl->grid = (unsigned)(ntiles < (size_t)sms ? (ntiles ? ntiles : 1) : (size_t)sms);
  if (a->op == SHOAL_COLL_GPU_BCAST && a->me != a->root) pl->grid = 1; /* no data: the completion only */
  /* Pipelining (the byte path has none). AUTO: alltoall on (the next group's loads overlap this group's stores) unless
   * G >= 4, whose doubled G x VPT vectors spill on sm_90; fcollect on only when a block has two chunks or more (with
   * one there is nothing to overlap). Measured: docs/gpu-collectives.md. */
  int pipe = a->cfg.pipe;
  if (!pipe) {
    if (a->op == SHOAL_COLL_GPU_ALLTOALL) pipe = g >= 4 ? SHOAL_COLL_GPU_PIPE_OFF : SHOAL_COLL_GPU_PIPE_ON;
    else pipe = a->nbytes >= 2 * (size_t)pl->grid * chunk ? SHOAL_COLL_GPU_PIPE_ON : SHOAL_COLL_GPU_PIPE_OFF;
  }
  if (pl->vec == 1) pipe = SHOAL_COLL_GPU_PIPE_OFF;
  pl->cfg.pipe = pipe;
  pl->pipe = pipe == SHOAL_COLL_GPU_PIPE_ON;
  pl->gpu_scope = a->cfg.scope == SHOAL_COLL_GPU_SCOPE_AUTO && a->one_gpu;
  pl->small = pl->grid == 1 && a->cfg.small != SHOAL_COLL_GPU_SMALL_OFF;
  pl->cfg.small = pl->small ? SHOAL_COLL_GPU_SMALL_ON : SHOAL_COLL_GPU_SMALL_OFF;
  /* Programmatic dependent launch for small grids only: an early grid holds its blocks on the GPU while it waits for
   * the stream's previous kernel, and those blocks must leave room for every PE's running grid (each PE adds at most
   * SHOAL_COLL_GPU_PDL_MAX_GRID waiting blocks). The launcher drops it where unsupported (HIP, before sm_90). */
  pl->pdl = pl->grid <= SHOAL_COLL_GPU_PDL_MAX_GRID && a->cfg.pdl != SHOAL_COLL_GPU_PDL_OFF;
  pl->cfg.pdl = pl->pdl ? SHOAL_COLL_GPU_PDL_ON : SHOAL_COLL_GPU_PDL_OFF;
  pl->shmem = (!pl->wclass && a->cfg.variant == SHOAL_COLL_GPU_HOISTED)
                  ? (size_t)w * sizeof(char *) * (a->op == SHOAL_COLL_GPU_ALLTOALL ? 2 : 1)
                  : 0;
  return 0;
}

} // namespace shoal_cg
#endif
