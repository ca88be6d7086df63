/*
 * coll_gpu_shmem.c - the GPU fcollect / alltoall kernels behind the OpenSHMEM API (issue 6, docs/gpu-collectives.md).
 *
 * The area the kernels signal in is part of the device heap's internal area (device/gpu.c's layout, offset coll: the
 * same offset on every PE); shoal_coll_gpu_init, called by the device heap's init once it is up, sets it up:
 *   flags  [SHOAL_TEAM_SLOTS + 1][npes] u64   one row per team slot (indexed by the sender's team rank) and one for the
 *                                            block-scoped device forms (world ranks)
 *   tables [SHOAL_TEAM_SLOTS][npes] char *   per slot, the team members' heap bases in this process (local contents)
 *   sync   [SHOAL_TEAM_SLOTS + 1]            per slot, the completion counter and epoch (local contents)
 * A team slot is re-armed (its flags, table and epoch reset, then a team sync) the first time a GPU collective runs on
 * a team object other than the slot's last one, so that teams that reuse a slot start from equal epochs.
 *
 * shoal_coll_gpu_fcollect / shoal_coll_gpu_alltoall are the entry points of the host collectives (collectives/coll_*.c):
 * they take the call when the kernels are built, the device heap is up, and dest and source are on it; otherwise they
 * return SHOAL_ERR_NOSYS and the host algorithm runs. Completion: in the kernel (device flags, SHOAL_COLL_GPU_SYNC=
 * device) when the PEs' kernels can run concurrently (one PE per GPU, or MPS running), else the kernel without the wait
 * followed by a stream synchronize and a team barrier on the host (SHOAL_COLL_GPU_SYNC=host).
 */
#include "coll.h"
#include "gpu.h"
#include "gpu/coll_gpu.h"

#include <stdlib.h>
#include <sys/stat.h>

#ifndef SHOAL_HAVE_COLL_GPU
#define SHOAL_HAVE_COLL_GPU 0
#endif

static struct {
  bool ready;
  int npes;
  char *area;                 /* this PE's reservation (device heap) */
  size_t flags_off;           /* offset of the flag rows from the device heap base */
  char **tables;              /* [SLOTS][npes], device memory */
  shoal_coll_gpu_sync_t *sync;/* [SLOTS + 1], device memory */
  const void *slot_team[SHOAL_TEAM_SLOTS]; /* team object each slot was last armed for */
  void *stream;               /* for the blocking forms */
  void *ev[SHOAL_TEAM_SLOTS]; /* per slot: recorded after its last launch (created on first use) */
  void *last[SHOAL_TEAM_SLOTS]; /* per slot: the stream of that launch */
  int wait;                   /* 1: completion in the kernel; 0: host barrier */
  int one_gpu;                /* every PE shares this GPU: device-scope completion suffices */
  shoal_coll_gpu_cfg_t cfg;
} C;

size_t shoal_coll_gpu_area_bytes(int npes) {
  return (size_t)(SHOAL_TEAM_SLOTS + 1) * npes * 8 + (size_t)SHOAL_TEAM_SLOTS * npes * sizeof(char *) +
         (SHOAL_TEAM_SLOTS + 1) * sizeof(shoal_coll_gpu_sync_t);
}

/* Does this process share its GPU through MPS (then the PEs' kernels run concurrently)? The driver's answer where it
 * gives one (CUDA 12.4+); else whether an MPS control pipe exists (a pipe left behind by a stopped daemon fools this
 * fallback: the kernels then time-slice and every in-kernel wait costs time slices, not correctness). */
static bool mps_running(void) {
#if SHOAL_HAVE_COLL_GPU
  const int m = shoal_coll_gpu_mps_enabled();
  if (m >= 0) return m == 1;
#endif
  const char *dir = getenv("CUDA_MPS_PIPE_DIRECTORY");
  char path[512];
  snprintf(path, sizeof path, "%s/control", dir && *dir ? dir : "/tmp/nvidia-mps");
  struct stat st;
  return stat(path, &st) == 0 && S_ISFIFO(st.st_mode);
}

static void cfg_from_env(void) {
  C.cfg.variant = strcmp(shoal_env.coll_variant, "naive") ? SHOAL_COLL_GPU_HOISTED : SHOAL_COLL_GPU_NAIVE;
  C.cfg.group = strcmp(shoal_env.coll_gpu_g, "auto") ? atoi(shoal_env.coll_gpu_g) : 0;
  C.cfg.sms = shoal_env.coll_gpu_sms > 0 ? (int)shoal_env.coll_gpu_sms : 0;
  C.cfg.tile = shoal_env.coll_gpu_tile;
  C.cfg.pipe = !strcmp(shoal_env.coll_gpu_pipe, "on")    ? SHOAL_COLL_GPU_PIPE_ON
               : !strcmp(shoal_env.coll_gpu_pipe, "off") ? SHOAL_COLL_GPU_PIPE_OFF
                                                         : SHOAL_COLL_GPU_PIPE_AUTO;
  C.cfg.scope = strcmp(shoal_env.coll_gpu_scope, "sys") ? SHOAL_COLL_GPU_SCOPE_AUTO : SHOAL_COLL_GPU_SCOPE_SYS;
  /* SHOAL_COLL_GPU_TILE is a multiple of 16: runtime/env.c refused anything else at init. */
}

int shoal_coll_gpu_init(void) {
  const shmemx_device_state_t *st = shoal_gpu_state();
  if (!SHOAL_HAVE_COLL_GPU || !st || C.ready || shoal_g.npes > SHMEMX_DEVICE_MAX_PES) return SHOAL_OK;
  cfg_from_env();
  const int n = shoal_g.npes;
  const size_t bytes = shoal_coll_gpu_area_bytes(n);
  shoal_gpu_layout_t lay;
  if (shoal_gpu_layout_make(n, &lay)) return SHOAL_ERR_INVAL;
  C.area = st->heap_base + lay.coll;
  C.npes = n;
  C.flags_off = (size_t)(C.area - st->heap_base);
  C.tables = (char **)(C.area + (size_t)(SHOAL_TEAM_SLOTS + 1) * n * 8);
  C.sync = (shoal_coll_gpu_sync_t *)((char *)C.tables + (size_t)SHOAL_TEAM_SLOTS * n * sizeof(char *));
  shoal_gpu_memset(C.area, 0, bytes);
  if (shoal_gpu_ops.stream_create(&C.stream)) return SHOAL_ERR;
  char **bases = malloc((size_t)n * sizeof *bases); /* slot 0's table: world, also the device forms' */
  if (!bases) return SHOAL_ERR_NOMEM;
  for (int p = 0; p < n; p++) bases[p] = st->heap_base + st->delta[p];
  shoal_status_t rc = shoal_gpu_ops.memcpy(C.tables, bases, (size_t)n * sizeof *bases, C.stream);
  if (!rc) rc = shoal_gpu_ops.stream_sync(C.stream);
  free(bases);
  if (rc) return rc;
  if (!strcmp(shoal_env.coll_gpu_sync, "device")) C.wait = 1;
  else if (!strcmp(shoal_env.coll_gpu_sync, "host")) C.wait = 0;
  else C.wait = st->pes_per_gpu <= 1 || mps_running();
  C.one_gpu = st->pes_per_gpu >= n;
  C.ready = true;
  SHOAL_DEBUG(SHOAL_SUB_COLL, "GPU collectives: %zu bytes of flags at device heap offset %zu, completion %s, %s",
              bytes, C.flags_off, C.wait ? "in the kernel" : "host barrier", shoal_env.coll_variant);
  return SHOAL_OK;
}

void shoal_coll_gpu_fini(void) {
  if (!C.ready) return;
  for (int i = 0; i < SHOAL_TEAM_SLOTS; i++)
    if (C.ev[i]) shoal_gpu_ops.event_destroy(C.ev[i]);
  shoal_gpu_ops.stream_sync(C.stream);
  shoal_gpu_ops.stream_destroy(C.stream);
  memset(&C, 0, sizeof C);
}

void shoal_coll_gpu_forget_slot(int slot) {
  if (slot >= 0 && slot < SHOAL_TEAM_SLOTS) C.slot_team[slot] = NULL;
}

/* Slot of team t, armed for it: the members' heap bases in this process, flags and epoch from zero (then a team
 * sync, so that no member signals into a row another member still resets). */
static int arm(shoal_team_t *t, const shmemx_device_state_t *st) {
  const int slot = t->slot;
  if (C.slot_team[slot] == (const void *)t) return slot;
  char **bases = malloc((size_t)t->size * sizeof *bases);
  if (!bases) shoal_fatal("shmem_team", "out of host memory");
  for (int r = 0; r < t->size; r++) bases[r] = st->heap_base + st->delta[t->world[r]];
  shoal_coll_gpu_sync_t zero;
  memset(&zero, 0, sizeof zero);
  if (shoal_gpu_ops.memcpy(C.tables + (size_t)slot * C.npes, bases, (size_t)t->size * sizeof *bases, C.stream) ||
      shoal_gpu_ops.memset(C.area + (size_t)slot * C.npes * 8, 0, (size_t)C.npes * 8, C.stream) ||
      shoal_gpu_ops.memcpy(&C.sync[slot], &zero, sizeof zero, C.stream) || shoal_gpu_ops.stream_sync(C.stream))
    shoal_fatal("shmem_team", "cannot set up the GPU collective state of team slot %d", slot);
  free(bases);
  C.slot_team[slot] = t;
  shmem_team_sync((shmem_team_t)t);
  return slot;
}

/* The GPU path of one call, or SHOAL_ERR_NOSYS to let the host algorithm run. stream NULL: blocking. */
static int gpu_coll(int op, shoal_team_t *t, void *dest, const void *source, size_t nbytes, void *stream,
                    const char *routine) {
  if (!shoal_gpu_heap_ready()) return SHOAL_ERR_NOSYS; /* no device heap: the host algorithm */
  const size_t dbytes = shoal_coll_bytes(routine, nbytes, (size_t)t->size),
               sbytes = op == SHOAL_COLL_GPU_ALLTOALL ? dbytes : nbytes;
  const bool ddev = shoal_gpu_heap_owns(dest), sdev = shoal_gpu_heap_owns(source);
  if (!ddev && !sdev) return SHOAL_ERR_NOSYS;
  /* From here on a host algorithm would store into device memory from the CPU: refuse rather than fault. */
  if (ddev != sdev)
    shoal_fatal(routine, "%s is on the device heap and %s is not: both must be device symmetric objects",
                ddev ? "dest" : "source", ddev ? "source" : "dest");
  if (!nbytes) return SHOAL_OK;
  if (!shoal_gpu_heap_owns((const char *)dest + dbytes - 1) || !shoal_gpu_heap_owns((const char *)source + sbytes - 1))
    shoal_fatal(routine, "%s: %zu bytes from %p run past the end of the device heap",
                shoal_gpu_heap_owns((const char *)dest + dbytes - 1) ? "source" : "dest",
                shoal_gpu_heap_owns((const char *)dest + dbytes - 1) ? sbytes : dbytes,
                shoal_gpu_heap_owns((const char *)dest + dbytes - 1) ? source : dest);
  const shmemx_device_state_t *st = shoal_gpu_state();
  if (!C.ready || !st)
    shoal_fatal(routine, "dest and source are on the device heap, but the GPU collective kernels are not available "
                "(not built for the %s backend, more than %d PEs, or not set up at shmem_init)", shoal_gpu_ops.name,
                SHMEMX_DEVICE_MAX_PES);
  if (t->aset || t->slot < 0 || t->slot >= SHOAL_TEAM_SLOTS)
    shoal_fatal(routine, "device-heap buffers need a team (the active-set forms run on the host)");
  if (t->remote)
    shoal_fatal(routine, "team: its PEs span several nodes (or SHOAL_TRANSPORT=ofi), and the GPU kernels reach the "
                "device heaps of one node only");
  void *s = stream ? stream : C.stream;
  /* The slot's previous kernel may still run on another stream (an on-stream call, then a blocking one): it must end
   * before this one reuses the slot's flags and epoch, or before arm() resets them. */
  if (C.last[t->slot] && C.last[t->slot] != s && shoal_gpu_ops.event_sync(C.ev[t->slot]))
    shoal_fatal(routine, "the previous collective kernel of this team failed");
  const int slot = arm(t, st);
  shoal_coll_gpu_args_t a;
  memset(&a, 0, sizeof a);
  a.op = op;
  a.me = t->rank;
  a.npes = t->size;
  a.peer_base = C.tables + (size_t)slot * C.npes;
  a.dst_off = (size_t)((const char *)dest - st->heap_base);
  a.src = source;
  a.nbytes = nbytes;
  a.flag_off = C.flags_off + (size_t)slot * C.npes * 8;
  a.sync = &C.sync[slot];
  a.wait = C.wait;
  a.one_gpu = C.one_gpu;
  a.cfg = C.cfg;
#if SHOAL_HAVE_COLL_GPU
  char err[256];
  if (shoal_coll_gpu_launch(&a, s, err, sizeof err)) shoal_fatal(routine, "%s", err);
  if ((!C.ev[slot] && shoal_gpu_ops.event_create(&C.ev[slot])) || shoal_gpu_ops.event_record(C.ev[slot], s))
    shoal_fatal(routine, "cannot record the collective's completion event on stream %p", s);
  C.last[slot] = s;
#else
  (void)a; /* not reached: without the kernels C.ready stays false (fatal above); the #if keeps their symbol out */
  (void)s;
  return SHOAL_ERR_NOSYS;
#endif
  if (!stream || !C.wait) { /* blocking, or the host-side completion */
    if (shoal_gpu_ops.stream_sync(s)) shoal_fatal(routine, "the collective kernel failed (stream %p)", s);
    if (!C.wait) shmem_team_sync((shmem_team_t)t);
  }
  return SHOAL_OK;
}

int shoal_coll_gpu_fcollect(shoal_team_t *t, void *dest, const void *source, size_t nbytes, void *stream,
                            const char *routine) {
  return gpu_coll(SHOAL_COLL_GPU_FCOLLECT, t, dest, source, nbytes, stream, routine);
}

int shoal_coll_gpu_alltoall(shoal_team_t *t, void *dest, const void *source, size_t nbytes, void *stream,
                            const char *routine) {
  return gpu_coll(SHOAL_COLL_GPU_ALLTOALL, t, dest, source, nbytes, stream, routine);
}

/* ---- public: stream-ordered forms ---- */
static int on_stream(int op, const char *routine, shmem_team_t team, void *dest, const void *source, size_t nelems,
                     void *stream) {
  SHOAL_CHECK_INIT(routine);
  shoal_team_t *t = shoal_team_get(team, routine);
  if (gpu_coll(op, t, dest, source, nelems, stream, routine) == SHOAL_OK) return 0;
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

int shmemx_coll_device_info(void *buf, size_t len) {
  SHOAL_CHECK_INIT("shmemx_coll_device_info");
  if (!C.ready || !buf || len != sizeof(shmemx_coll_device_info_t)) return -1;
  shmemx_coll_device_info_t *i = buf;
  memset(i, 0, sizeof *i);
  i->size = sizeof *i;
  i->flag_off = C.flags_off + (size_t)SHOAL_TEAM_SLOTS * C.npes * 8; /* the device forms' row */
  i->table = C.tables;                                               /* slot 0: SHMEM_TEAM_WORLD, world ranks */
  i->sync = &C.sync[SHOAL_TEAM_SLOTS];
  return 0;
}

/* ---- for the other GPU collectives (coll_gpu_reduce_shmem.c; issue 16) ---- */
/* gpu_coll's checks after its buffer checks, the team's slot armed, and a's team fields (me, npes, peer_base,
 * flag_off, sync, wait, one_gpu, cfg); *s: the stream to launch on. */
void shoal_coll_gpu_slot_begin(shoal_team_t *t, void *stream, const char *routine, shoal_coll_gpu_args_t *a, void **s) {
  const shmemx_device_state_t *st = shoal_gpu_state();
  if (!C.ready || !st)
    shoal_fatal(routine, "dest and source are on the device heap, but the GPU collective kernels are not available "
                "(not built for the %s backend, more than %d PEs, or not set up at shmem_init)", shoal_gpu_ops.name,
                SHMEMX_DEVICE_MAX_PES);
  if (t->aset || t->slot < 0 || t->slot >= SHOAL_TEAM_SLOTS)
    shoal_fatal(routine, "device-heap buffers need a team (the active-set forms run on the host)");
  if (t->remote)
    shoal_fatal(routine, "team: its PEs span several nodes (or SHOAL_TRANSPORT=ofi), and the GPU kernels reach the "
                "device heaps of one node only");
  *s = stream ? stream : C.stream;
  if (C.last[t->slot] && C.last[t->slot] != *s && shoal_gpu_ops.event_sync(C.ev[t->slot]))
    shoal_fatal(routine, "the previous collective kernel of this team failed");
  const int slot = arm(t, st);
  memset(a, 0, sizeof *a);
  a->me = t->rank;
  a->npes = t->size;
  a->peer_base = C.tables + (size_t)slot * C.npes;
  a->flag_off = C.flags_off + (size_t)slot * C.npes * 8;
  a->sync = &C.sync[slot];
  a->wait = C.wait;
  a->one_gpu = C.one_gpu;
  a->cfg = C.cfg;
}

/* After the launch on s: the slot's completion event, and for a blocking call (stream NULL) or the host-side
 * completion the stream synchronized (and the team barrier). */
void shoal_coll_gpu_slot_end(shoal_team_t *t, void *s, void *stream, const char *routine) {
  const int slot = t->slot;
  if ((!C.ev[slot] && shoal_gpu_ops.event_create(&C.ev[slot])) || shoal_gpu_ops.event_record(C.ev[slot], s))
    shoal_fatal(routine, "cannot record the collective's completion event on stream %p", s);
  C.last[slot] = s;
  if (!stream || !C.wait) {
    if (shoal_gpu_ops.stream_sync(s)) shoal_fatal(routine, "the collective kernel failed (stream %p)", s);
    if (!C.wait) shmem_team_sync((shmem_team_t)t);
  }
}
