/* heap_gpu.h - the device symmetric heap (runtime/heap_gpu.c), next to the host heap: the allocation of every PE
 * over the GPU ops table (device/gpu.h), its internal area, the exchange of the mappings over the bootstrap, the
 * device state of the device API and the teams table kernels read (filled through shoal_gpu_teams_hook). Modules:
 * docs/design/modules.md. */
#ifndef SHOAL_HEAP_GPU_H
#define SHOAL_HEAP_GPU_H
#include "shoal.h"
#include "gpu.h"

/* Layout of the internal area at the start of the device heap: offsets of the barrier flags (symmetric), the local
 * barrier epoch, the grid barrier, the AMO scratch word, and the peer table for npes PEs; total bytes reserved. */
typedef struct shoal_gpu_layout {
  size_t bar_flags, bar_epoch, grid_bar, amo_scratch, teams, peer_delta, coll, total; /* coll: GPU collectives (issue 6) */
} shoal_gpu_layout_t;
shoal_status_t shoal_gpu_layout_make(int npes, shoal_gpu_layout_t *out);
/* Rows of the device teams table (lay.teams: int32_t[4] each, wstart, wstride, size (0: no team), rank), one per entry
 * of the teams module's pool: the table is part of the device state's format, so its capacity is fixed here (the
 * teams module checks that its pool fits, collectives/team.c). */
#define SHOAL_GPU_TEAM_ROWS 96

/* ---- what the layers above put into the device heap (registered by api/init.c before shoal_gpu_init) ----
 * The runtime does not call up into collectives/: it asks through these. */
/* The GPU collectives' share of the internal area (lay.coll, after the peer table): bytes(npes) for a job of npes
 * PEs. Without a reservation (NULL, the default) the share is 0 bytes. Call before the device heap is laid out. */
void shoal_gpu_area_reserve(size_t (*bytes)(int npes));
/* The teams module's part of the device state, called once while the device heap is set up: sets st's team fields
 * (team_world, team_shared, team_pool, team_stride, team_count; st->teams is set already) and fills rows (nrows rows,
 * zeroed) with the teams made before the GPU (WORLD, SHARED), which become the device teams table. NULL (the
 * default): those fields and the table stay zero. */
extern void (*shoal_gpu_teams_hook)(shmemx_device_state_t *st, int32_t (*rows)[4], int nrows);

/* ---- the device heap, for the runtime (heap.c, rma.c, AMO code) ---- */
/* Choose the backend and set up the device heap (collective: every PE takes part, whatever its GPU). A PE without
 * a GPU, or a job where some PE failed, runs host-only (SHOAL_OK). api/init.c then sets up the GPU collectives
 * (shoal_coll_gpu_init) and calls shoal_gpu_announce. */
shoal_status_t shoal_gpu_init(void);
/* Once the GPU collectives are set up (whether or not there is a device heap): fill the registered device-API units
 * (shmemx_device_unit_register), or end the job with one line naming routine and the cause when a required unit
 * cannot run (no GPU, no device heap, its state not copied); then print the SHMEM_INFO line. */
void shoal_gpu_announce(const char *routine);
/* Unmap and free the device heap (collective; after shoal_coll_gpu_fini). */
void shoal_gpu_fini(void);
/* Team entry slot (index in the teams module's pool, below SHOAL_GPU_TEAM_ROWS) now holds a team of size members
 * wstart + i * wstride in which this PE is rank (size 0: none): copied to the device table that kernels read
 * (shmem_team_my_pe in device code). */
void shoal_gpu_team_set(int slot, int wstart, int wstride, int size, int rank);
/* True when the device heap is up. */
bool shoal_gpu_heap_ready(void);
/* Some PE's device heap is not mapped here (another node: delta SHMEMX_DEVICE_DELTA_FAR): kernels that address every
 * PE's heap through the peer table (the device barrier, the GPU collectives) cannot run for the whole job. */
bool shoal_gpu_heap_any_far(void);
/* True when shmem_malloc should allocate device memory (SHOAL_HEAP=device and a device heap). */
bool shoal_gpu_heap_default(void);
/* Device heap allocation without barrier; NULL on exhaustion (SHMEM_DEBUG: sizes). */
void *shoal_gpu_heap_alloc(const char *routine, size_t size, size_t align);
/* True when p is in the device heap (any address of it). */
bool shoal_gpu_heap_owns(const void *p);
/* True when p is GPU memory the CPU cannot load from: the device heap, or any allocation the backend calls device
 * memory (its ptr_device). False without a device heap. A driver query outside the heap: not for a fast path. */
bool shoal_gpu_local_device(const void *p);
/* Release a live device allocation (fatal when p is none). No barrier. */
void shoal_gpu_heap_free(const char *routine, void *p);
/* Resize in place or move (copy, free); NULL on exhaustion with p untouched. No barrier. */
void *shoal_gpu_heap_realloc(const char *routine, void *p, size_t size);
/* Fill n bytes of local device memory (synchronous). */
void shoal_gpu_memset(void *p, int v, size_t n);
/* Host-initiated atomic on the device symmetric object dest (size 4 or 8 bytes) on pe: *old gets the previous value.
 * SHOAL_ERR_NOSYS when the backend has no kernel for it (HIP), SHOAL_ERR_INVAL when dest is not on the device heap. */
shoal_status_t shoal_gpu_amo(const char *routine, void *dest, int op, size_t size, uint64_t value, uint64_t cmp,
                             uint64_t *old, int pe);
/* Launch a collective kernel compiled into libshoal (every block spins on peers): refused with a message naming the
 * co-residency limit when the grid is larger; SHOAL_ERR_NOSYS without a GPU. */
shoal_status_t shoal_gpu_collective_launch(const char *routine, const void *func, const unsigned grid[3],
                                           const unsigned block[3], void **args, size_t shmem, void *stream);
/* This PE's device state (peer table pointer for kernels of other modules), or NULL without a GPU. */
const shmemx_device_state_t *shoal_gpu_state(void);
/* The device state's proxy queue (runtime/proxy.c): set before the device-API units are filled, NULL at the end. */
void shoal_gpu_state_set_proxy(void *queue);
/* The device proxy's thread, as it starts: the copier thread of its copies out of GPU memory (heap_gpu.c) started
 * there, so that it inherits that thread's CPUs (not where it has only one, nor with SHOAL_GPU_COPIER=0). */
void shoal_gpu_copier_prepare(void);
/* The copier runs (tests: whether the proxy's copies are enqueued by it). */
bool shoal_gpu_copier_up(void);

#endif
