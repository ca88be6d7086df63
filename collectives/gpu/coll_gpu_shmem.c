/*
 * coll_gpu_shmem.c - the GPU fcollect / alltoall kernels behind the OpenSHMEM API (issue 6, docs/gpu-collectives.md).
 *
 * The area the kernels signal in is part of the device heap's internal area (runtime/heap_gpu.c's layout, offset coll:
 * the same offset on every PE); shoal_coll_gpu_init, called by api/init.c once the device heap is up, sets it up:
 *   flags  [2 SLOTS][npes] u64     per team slot s, row s for the host-launched kernels and row SLOTS + s for the
 *                                  device forms (<shoal/shmem_coll_device.cuh>), indexed by the sender's team rank
 *   bar    [SLOTS][16] u64         per slot, the device team barrier's flags (one per dissemination round)
 *   tables [SLOTS][npes] char *    per slot, the team members' heap bases in this process (local contents)
 *   sync   [2 SLOTS]               per slot, the completion counter and epoch of each row (local contents)
 *   bar_epoch [SLOTS] u64          per slot, this PE's device barrier count (local)
 *   team_slot [SHOAL_TEAM_POOL]    slot of each team object (by its index in shoal_team_pool; -1: none), for kernels
 *   ll [SLOTS][2][LL_HALF]         per slot, the one-exchange reductions' scratch (coll_gpu_reduce.h), written by peers
 * WORLD's and SHARED's slots are set up here; a split team's at its creation (shoal_coll_gpu_team_made: the split is
 * collective, so every member resets its flags, table and epochs, then the parent syncs), never lazily: kernels
 * cannot set a slot up, and teams that reuse a slot must start from equal epochs and clean flags.
 *
 * shoal_coll_gpu_fcollect / shoal_coll_gpu_alltoall are the entry points of the host collectives (collectives/coll_*.c):
 * they take the call when the kernels are built, the device heap is up, and dest and source are on it; otherwise they
 * return SHOAL_ERR_NOSYS and the host algorithm runs. Completion: in the kernel (device flags, SHOAL_COLL_GPU_SYNC=
 * device) when the PEs' kernels can run concurrently (one PE per GPU, or MPS running), else the kernel without the wait
 * followed by a stream synchronize and a team barrier on the host (SHOAL_COLL_GPU_SYNC=host).
 */
#include "coll_core.h"
#include "heap_gpu.h"
#include "gpu/coll_gpu.h"
#include "gpu/coll_gpu_reduce.h" /* shoal_coll_gpu_entry_launch */

#include <stdlib.h>
#include <sys/stat.h>

#ifndef SHOAL_HAVE_COLL_GPU
#define SHOAL_HAVE_COLL_GPU 0
#endif

static struct {
  bool ready;
  bool far; /* some PE's device heap is on another node: the device forms only (shoal_coll_gpu_init) */
  int npes;
  char *area;                 /* this PE's reservation (device heap) */
  size_t flags_off;           /* offset of the flag rows from the device heap base */
  size_t bar_off;             /* offset of the device barrier flags */
  char **tables;              /* [SLOTS][npes], device memory */
  shoal_coll_gpu_sync_t *sync;/* [2 SLOTS], device memory */
  uint64_t *bar_epoch;        /* [SLOTS], device memory */
  int32_t *team_slot;         /* [SHOAL_TEAM_POOL], device memory */
  const void *slot_team[SHOAL_TEAM_SLOTS]; /* team object each slot was last set up for */
  void *stream;               /* for the blocking forms */
  void *ev[SHOAL_TEAM_SLOTS]; /* per slot: recorded when its team is destroyed with a launch pending (created then) */
  bool ev_set[SHOAL_TEAM_SLOTS];
  void *last[SHOAL_TEAM_SLOTS]; /* per slot: the stream of its last launch (NULL: none since armed) */
  unsigned long long issued[SHOAL_TEAM_SLOTS]; /* per slot: epochs launched (fcollect 1, reduction 2 or 1) */
  bool prev_ll[SHOAL_TEAM_SLOTS]; /* per slot: the last call was a one-exchange reduction (a peer may still be
                                     writing its dest: a call that stores into peers runs an entry exchange first) */
  size_t ll_off;              /* offset of the slots' one-exchange scratch from the device heap base */
  int wait;                   /* 1: completion in the kernel; 0: host barrier */
  int one_gpu;                /* every PE shares this GPU: device-scope completion suffices */
  shoal_coll_gpu_cfg_t cfg;
} C;

#define BAR_BYTES 128 /* per slot: SHMEMX_DEVICE_BAR_ROUNDS flags */
static shoal_status_t slot_setup(shoal_team_t *t, const shmemx_device_state_t *st);

static size_t area_head(int npes) { /* everything before the scratch */
  const size_t b = (size_t)2 * SHOAL_TEAM_SLOTS * npes * 8 + (size_t)SHOAL_TEAM_SLOTS * BAR_BYTES +
                   (size_t)SHOAL_TEAM_SLOTS * npes * sizeof(char *) + 2 * SHOAL_TEAM_SLOTS * sizeof(shoal_coll_gpu_sync_t) +
                   SHOAL_TEAM_SLOTS * sizeof(uint64_t) + SHOAL_TEAM_POOL * sizeof(int32_t);
  return (b + 127) / 128 * 128; /* the scratch starts on its own cache line */
}
#define LL_SLOT_BYTES (2 * SHOAL_COLL_GPU_LL_HALF)
/* The device heap reserves this at shmem_init (api/init.c registers it: shoal_gpu_area_reserve). */
size_t shoal_coll_gpu_area_bytes(int npes) { return area_head(npes) + (size_t)SHOAL_TEAM_SLOTS * LL_SLOT_BYTES; }

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
  C.cfg.small = strcmp(shoal_env.coll_gpu_small, "off") ? SHOAL_COLL_GPU_SMALL_AUTO : SHOAL_COLL_GPU_SMALL_OFF;
  C.cfg.pdl = strcmp(shoal_env.coll_gpu_pdl, "off") ? SHOAL_COLL_GPU_PDL_AUTO : SHOAL_COLL_GPU_PDL_OFF;
  /* SHOAL_COLL_GPU_TILE is a multiple of 16: runtime/env.c refused anything else at init. */
}

int shoal_coll_gpu_init(void) {
  const shmemx_device_state_t *st = shoal_gpu_state();
  if (!SHOAL_HAVE_COLL_GPU || !st || C.ready || shoal_g.npes > SHMEMX_DEVICE_MAX_PES) return SHOAL_OK;
  /* Some PEs' device heaps on other nodes: the host-launched kernels (which reach every member's heap by the peer
   * table) are never used (gpu_coll and the reductions take coll_gpu_far.c's path first), but the slots are set up
   * for the device forms: team barriers and block collectives reach far members through the proxy (a far member's
   * base in the table is NULL). */
  C.far = shoal_gpu_heap_any_far();
  if (C.far) SHOAL_DEBUG(SHOAL_SUB_COLL, "GPU collectives: some PEs' device heaps are on other nodes: device forms only");
  cfg_from_env();
  const int n = shoal_g.npes;
  const size_t bytes = shoal_coll_gpu_area_bytes(n);
  shoal_gpu_layout_t lay;
  if (shoal_gpu_layout_make(n, &lay)) return SHOAL_ERR_INVAL;
  C.area = st->heap_base + lay.coll;
  C.flags_off = (size_t)(C.area - st->heap_base);
  C.bar_off = C.flags_off + (size_t)2 * SHOAL_TEAM_SLOTS * n * 8;
  C.tables = (char **)(st->heap_base + C.bar_off + (size_t)SHOAL_TEAM_SLOTS * BAR_BYTES);
  C.sync = (shoal_coll_gpu_sync_t *)((char *)C.tables + (size_t)SHOAL_TEAM_SLOTS * n * sizeof(char *));
  C.bar_epoch = (uint64_t *)(C.sync + 2 * SHOAL_TEAM_SLOTS);
  C.team_slot = (int32_t *)(C.bar_epoch + SHOAL_TEAM_SLOTS);
  C.ll_off = C.flags_off + area_head(n);
  shoal_gpu_memset(C.area, 0, bytes);
  if (shoal_gpu_ops.stream_create(&C.stream)) return SHOAL_ERR;
  int32_t none[SHOAL_TEAM_POOL];
  for (int i = 0; i < SHOAL_TEAM_POOL; i++) none[i] = -1;
  if (shoal_gpu_ops.memcpy(C.team_slot, none, sizeof none, C.stream)) return SHOAL_ERR;
  C.npes = n;
  shoal_status_t rc = slot_setup(&shoal_team_pool[0], st); /* WORLD and SHARED; no sync needed: nothing ran yet */
  if (!rc) rc = slot_setup(&shoal_team_pool[1], st);
  if (!rc) rc = shoal_gpu_ops.stream_sync(C.stream);
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
  if (slot < 0 || slot >= SHOAL_TEAM_SLOTS) return;
  C.slot_team[slot] = NULL;
  /* A kernel of the team may still run on its stream: the next team on the slot resets the slot's flags only after
   * this event (recorded now, once, instead of after every launch: an event between two kernels costs each call its
   * programmatic dependent launch). */
  if (C.ready && C.last[slot] == C.stream) {
    if ((!C.ev[slot] && shoal_gpu_ops.event_create(&C.ev[slot])) || shoal_gpu_ops.event_record(C.ev[slot], C.last[slot]))
      shoal_fatal("shmem_team_destroy", "cannot record the end of the team's last GPU collective (stream %p)",
                  C.last[slot]);
    C.ev_set[slot] = true;
  } else if (C.ready && C.last[slot]) {
    /* The last call went to a program's stream, which it may have destroyed since (recording on it would crash in the
     * driver): wait for the device instead, once per destroyed team that ran on-stream collectives. */
    if (shoal_gpu_ops.device_sync())
      shoal_fatal("shmem_team_destroy", "the team's last GPU collective failed (stream %p)", C.last[slot]);
  }
  C.last[slot] = NULL;
}

/* Set team t's slot up for it (the host-launched and the device forms' rows): the members' heap bases in this
 * process, flags, barrier flags and epochs from zero, and t's entry in team_slot. Enqueued on C.stream. */
static shoal_status_t slot_setup(shoal_team_t *t, const shmemx_device_state_t *st) {
  const int slot = t->slot, n = C.npes;
  char **bases = malloc((size_t)t->size * sizeof *bases);
  if (!bases) return SHOAL_ERR_NOMEM;
  for (int r = 0; r < t->size; r++)
    bases[r] = st->delta[t->world[r]] == SHMEMX_DEVICE_DELTA_FAR ? NULL : st->heap_base + st->delta[t->world[r]];
  static const shoal_coll_gpu_sync_t zero[2];
  const int32_t s32 = slot;
  shoal_status_t rc =
      shoal_gpu_ops.memcpy(C.tables + (size_t)slot * n, bases, (size_t)t->size * sizeof *bases, C.stream);
  if (!rc) rc = shoal_gpu_ops.memset(C.area + (size_t)slot * n * 8, 0, (size_t)n * 8, C.stream);
  if (!rc) rc = shoal_gpu_ops.memset(C.area + (size_t)(SHOAL_TEAM_SLOTS + slot) * n * 8, 0, (size_t)n * 8, C.stream);
  if (!rc) rc = shoal_gpu_ops.memset(st->heap_base + C.bar_off + (size_t)slot * BAR_BYTES, 0, BAR_BYTES, C.stream);
  if (!rc) rc = shoal_gpu_ops.memcpy(&C.sync[slot], &zero[0], sizeof zero[0], C.stream);
  if (!rc) rc = shoal_gpu_ops.memcpy(&C.sync[SHOAL_TEAM_SLOTS + slot], &zero[1], sizeof zero[1], C.stream);
  if (!rc) rc = shoal_gpu_ops.memset(&C.bar_epoch[slot], 0, sizeof C.bar_epoch[slot], C.stream);
  /* epochs restart from 0: records of the slot's last team would carry this team's first tags */
  if (!rc) rc = shoal_gpu_ops.memset(st->heap_base + C.ll_off + (size_t)slot * LL_SLOT_BYTES, 0, LL_SLOT_BYTES, C.stream);
  if (!rc) rc = shoal_gpu_ops.memcpy(&C.team_slot[t - shoal_team_pool], &s32, sizeof s32, C.stream);
  if (!rc) rc = shoal_gpu_ops.stream_sync(C.stream); /* bases and s32 are read by the copies */
  free(bases);
  if (!rc) C.slot_team[slot] = t;
  return rc;
}

void shoal_coll_gpu_team_made(shoal_team_t *parent, shoal_team_t *const *made, int n, const char *routine) {
  const shmemx_device_state_t *st = shoal_gpu_state();
  if (!C.ready || !st) return;
  for (int k = 0; k < n; k++) {
    shoal_team_t *t = made[k];
    if (!t) continue;
    /* a kernel of the slot's previous team still running on a stream must end before its state is reset (the event
     * shoal_coll_gpu_forget_slot recorded at that team's destruction) */
    if (C.ev_set[t->slot] && shoal_gpu_ops.event_sync(C.ev[t->slot]))
      shoal_fatal(routine, "the last collective kernel of team slot %d failed", t->slot);
    C.ev_set[t->slot] = false;
    C.last[t->slot] = NULL;
    C.issued[t->slot] = 0;
    C.prev_ll[t->slot] = false;
    if (slot_setup(t, st))
      shoal_fatal(routine, "cannot set up the GPU collective state of team slot %d", t->slot);
  }
  shoal_coll_barrier(parent, "shmem_team_sync"); /* no member signals into a row that another one still resets */
}

/* ---- a call's slot: gpu_coll below and the reductions (coll_gpu_reduce_shmem.c; issue 16) ---- */
/* The checks that follow a call's buffer checks, the team's slot armed, and a's team fields (me, npes, peer_base,
 * flag_off, sync, wait, one_gpu, cfg); *s: the stream to launch on. */
void shoal_coll_gpu_slot_begin(shoal_team_t *t, void *stream, const char *routine, shoal_coll_gpu_args_t *a, void **s) {
  const shmemx_device_state_t *st = shoal_gpu_state();
  if (!C.ready || !st)
    shoal_fatal(routine, "dest and source are on the device heap, but the GPU collective kernels are not available "
                "(not built for the %s backend, more than %d PEs, or not set up at shmem_init)", shoal_gpu_ops.name,
                SHMEMX_DEVICE_MAX_PES);
  if (t->aset || t->slot < 0 || t->slot >= SHOAL_TEAM_SLOTS)
    shoal_fatal(routine, "device-heap buffers need a team (the active-set forms run on the host)");
  if (t->remote || C.far)
    shoal_fatal(routine, "team: its PEs span several nodes (or SHOAL_TRANSPORT=ofi), and the GPU kernels reach the "
                "device heaps of one node only");
  *s = stream ? stream : C.stream;
  const int slot = t->slot;
  if (C.slot_team[slot] != (const void *)t) /* set up at the team's creation: a team of before the GPU's? a bug */
    shoal_fatal(routine, "team: no GPU collective state for this team (slot %d)", slot);
  memset(a, 0, sizeof *a);
  a->me = t->rank;
  a->npes = t->size;
  a->peer_base = C.tables + (size_t)slot * C.npes;
  a->flag_off = C.flags_off + (size_t)slot * C.npes * 8;
  a->sync = &C.sync[slot];
  a->wait = C.wait;
  a->one_gpu = C.one_gpu;
  a->cfg = C.cfg;
  /* The slot's previous calls may still run on another stream (an on-stream call, then a blocking one, or two user
   * streams): this kernel's completion waits on the device until they have passed theirs (args.after). */
  a->after = C.wait && C.last[slot] && C.last[slot] != *s ? C.issued[slot] : 0;
}

/* The one-exchange scratch of t's slot, for a reduction's args (coll_gpu_reduce_shmem.c), and the peers' epoch a
 * one-exchange call must see first when it follows, on another stream (after != 0), a call that was not one. */
void shoal_coll_gpu_slot_scratch(const shoal_team_t *t, size_t *off, size_t *half, unsigned long long *peers_after,
                                 unsigned long long after) {
  *off = C.ll_off + (size_t)t->slot * LL_SLOT_BYTES;
  *half = SHOAL_COLL_GPU_LL_HALF;
  *peers_after = after && !C.prev_ll[t->slot] ? after : 0;
}

/* After the launch on s of a call that takes `epochs` epochs of the slot (fcollect, alltoall, broadcast 1; a
 * reduction 2, or 1 with one exchange: ll): for a blocking call (stream NULL) or the host-side completion the stream
 * synchronized (and the team barrier). */
void shoal_coll_gpu_slot_end(shoal_team_t *t, void *s, void *stream, int epochs, bool ll, const char *routine) {
  const int slot = t->slot;
  C.last[slot] = s;
  C.prev_ll[slot] = ll;
  C.issued[slot] += C.wait && t->size > 1 ? (unsigned long long)epochs : 0;
  if (!stream || !C.wait) {
    if (shoal_gpu_ops.stream_sync(s)) shoal_fatal(routine, "the collective kernel failed (stream %p)", s);
    if (!C.wait) shoal_coll_barrier(t, "shmem_team_sync");
  }
}

/* The GPU path of one call, or SHOAL_ERR_NOSYS to let the host algorithm run. stream NULL: blocking. */
static int gpu_coll(int op, shoal_team_t *t, void *dest, const void *source, size_t nbytes, int root, void *stream,
                    const char *routine) {
  if (!shoal_gpu_heap_ready()) return SHOAL_ERR_NOSYS; /* no device heap: the host algorithm */
  const size_t dbytes = op == SHOAL_COLL_GPU_BCAST ? nbytes : shoal_coll_bytes(routine, nbytes, (size_t)t->size),
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
  /* members on other nodes (no mapping of their heaps here), or kernels left off because some PE is far */
  if ((t->remote || shoal_gpu_heap_any_far()) && !t->aset)
    return shoal_coll_gpu_far(op, t, dest, source, nbytes, root, stream, routine);
  shoal_coll_gpu_args_t a;
  void *s;
  shoal_coll_gpu_slot_begin(t, stream, routine, &a, &s);
  a.op = op;
  a.dst_off = (size_t)((const char *)dest - shoal_gpu_state()->heap_base);
  a.src = source;
  a.nbytes = nbytes;
  a.root = root;
  int epochs = 1;
#if SHOAL_HAVE_COLL_GPU
  char err[256];
  if (C.prev_ll[t->slot] && a.wait && a.npes > 1) { /* this kernel stores into peers that may still write their dest */
    if (shoal_coll_gpu_entry_launch(&a, s, err, sizeof err)) shoal_fatal(routine, "%s", err);
    a.after = 0; /* the entry waited its turn; this kernel follows it on s */
    epochs = 2;
  }
  if (shoal_coll_gpu_launch(&a, s, err, sizeof err)) shoal_fatal(routine, "%s", err);
#else
  (void)a; /* not reached: without the kernels slot_begin is fatal; the #if keeps their symbol out */
  return SHOAL_ERR_NOSYS;
#endif
  shoal_coll_gpu_slot_end(t, s, stream, epochs, false, routine);
  return SHOAL_OK;
}

int shoal_coll_gpu_fcollect(shoal_team_t *t, void *dest, const void *source, size_t nbytes, void *stream,
                            const char *routine) {
  return gpu_coll(SHOAL_COLL_GPU_FCOLLECT, t, dest, source, nbytes, 0, stream, routine);
}

int shoal_coll_gpu_alltoall(shoal_team_t *t, void *dest, const void *source, size_t nbytes, void *stream,
                            const char *routine) {
  return gpu_coll(SHOAL_COLL_GPU_ALLTOALL, t, dest, source, nbytes, 0, stream, routine);
}

int shoal_coll_gpu_bcast(shoal_team_t *t, void *dest, const void *source, size_t nbytes, int root, void *stream,
                         const char *routine) {
  return gpu_coll(SHOAL_COLL_GPU_BCAST, t, dest, source, nbytes, root, stream, routine);
}

int shmemx_coll_device_info(void *buf, size_t len) {
  SHOAL_CHECK_INIT("shmemx_coll_device_info");
  if (!C.ready || !buf || len != sizeof(shmemx_coll_device_info_t)) return -1;
  shmemx_coll_device_info_t *i = buf;
  memset(i, 0, sizeof *i);
  i->size = sizeof *i;
  i->slots = SHOAL_TEAM_SLOTS;
  i->flag_off = C.flags_off + (size_t)SHOAL_TEAM_SLOTS * C.npes * 8; /* the device forms' rows */
  i->table = C.tables;
  i->sync = &C.sync[SHOAL_TEAM_SLOTS];
  i->sync_size = sizeof(shoal_coll_gpu_sync_t);
  i->bar_off = C.bar_off;
  i->bar_epoch = C.bar_epoch;
  i->team_slot = C.team_slot;
  if (C.far) { /* the one-exchange scratch, which no host-launched kernel uses then: the far in-kernel reductions' */
    i->scratch_off = C.ll_off;
    i->scratch_bytes = LL_SLOT_BYTES;
  }
  return 0;
}

