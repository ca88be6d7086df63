/* heap_gpu.c - the device symmetric heap over the GPU ops table (device/gpu.h), next to the host heap (heap.c): this
 * PE's GPU, the heap (one allocation per PE, mapped by every PE of the node), its space entry (host RMA through the
 * copy engine), the device state of the device API, the teams table of device code, and the _on_stream routines.
 * The backends below the table know none of this (device/ is a leaf: docs/design/modules.md); api/init.c sets
 * up the GPU collectives once this heap is up, having reserved their area and registered the teams' fill first.
 *
 * Sharing the heap (SHOAL_GPU_HEAP_MAP): "vmm" (auto where the backend has it: CUDA's VMM API) allocates it with
 * share_alloc, which gives a file descriptor; the PEs of the node exchange their descriptors through the
 * bootstrap's authenticated node socket (shoal_boot_fd_allgather: SCM_RIGHTS, every connection's uid and pid
 * checked), and map them with share_open. "ipc" exchanges the vendor's IPC handles through the bootstrap
 * all-gather instead (cudaIpcOpenMemHandle / hipIpcOpenMemHandle).
 *
 * Device heap of every PE: [internal area: barrier flags, epoch, grid barrier, AMO scratch, peer table][user heap].
 * Offsets are the same on every PE; the heaps of this node's peers are mapped here through IPC, so that a device
 * address of PE p's instance is base + off + delta[p] in this process, on the host (copies) as in kernels (loads and
 * stores). A PE of another node (boot's node: SHOAL_NODE_PES splits one machine into several) is not mapped:
 * G.peer[p] is NULL, delta[p] is SHMEMX_DEVICE_DELTA_FAR and the space's lim[p] is 0, so that rma.c and amo.c send
 * its host RMA and AMOs to the comm layer (staged through the transport: docs/gpu.md). */
#include "proxy.h"
#include "heap_gpu.h"
#include "comm.h"
#include "xlate.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static struct {
  bool ready;            /* the device heap is mapped by every PE */
  int dev, ndev, sms;
  char *base;            /* this PE's allocation */
  size_t size;           /* internal + user bytes, the same on every PE */
  shoal_gpu_layout_t lay;
  char **peer;           /* [npes] peer's heap mapped here; peer[me] = base; NULL for a PE of another node */
  size_t *lim;           /* [npes] the space's lim: size for a PE mapped here, 0 for one of another node */
  bool *opened;          /* [npes] peer[p] came from ipc_open / share_open (close it at the end) */
  bool share;            /* the heap came from share_alloc (peers map it with share_open) */
  bool any_far;          /* some PE is of another node (peer[p] NULL) */
  int share_fd;          /* share: this heap's descriptor until sent to every peer, else -1 */
  shoal_alloc_t alloc;   /* user heap, offsets from user_base */
  char *user_base;
  void *stream;          /* the runtime's own non-blocking stream */
  void *pinned;          /* the transport's staging region, page-locked here (stage_pin); NULL: none */
  pthread_mutex_t lock;  /* AMO scratch */
  shmemx_device_state_t st;
  char busid[16];        /* this PE's GPU, for the debug line of shoal_gpu_announce */
  char why[320];         /* without a device heap: why ("no GPU is visible (...)"), for a device-API program's line */
} G = {.lock = PTHREAD_MUTEX_INITIALIZER, .share_fd = -1};

/* Events of the staged puts' copies, under G.lock, where the copier (below) does not take them: CP the target's into
 * the heap (shoal_comm_dev_copy_start, on G.stream), CO the requester's out of its GPU memory
 * (shoal_comm_dev_memcpy_start, on CO.stream, its own: the copy engines run the two directions at once, and this
 * PE's copies out need not wait behind its peers' copies in). */
#define COPY_EVENTS SHOAL_COMM_DEV_COPIES
_Static_assert(COPY_EVENTS <= 32, "copy_pool_t.used is a 32-bit mask");
typedef struct {
  void *ev[COPY_EVENTS];
  uint32_t used; /* bit k: ev[k] behind a copy not yet seen done */
  int ok;        /* 0 not asked yet, 1 event_query works, -1 it does not (copies wait) */
  void *stream;  /* CO's own stream (made on first use); CP uses G.stream */
} copy_pool_t;
static copy_pool_t CP, CO;

/* The copier (SHOAL_GPU_COPIER): staged copies enqueued, and their events asked, by a thread of their own, so that
 * the threads that start them make no driver call for them: the device proxy's (its deferred nbi puts' copies out of
 * GPU memory, shoal_comm_dev_memcpy_start) and the transport's progress (a far PE's chunk into the heap,
 * shoal_comm_dev_copy_start). Measured on an H100 (session 29's profile): per 64 KiB chunk the proxy spent 3.9 us
 * enqueuing the copy and 1.4 us per event query, beside a chunk's write of 15-20 us, and the proxy's thread was what
 * set the pace; the target's progress spent 4.2 us per chunk enqueuing its copy (session 31). Slots are a lane's
 * events: the starter takes a free one (used, under mu), fills job[k], sets st[k] QUEUED and appends k to ring; the
 * copier enqueues the copy and records ev[k] (ENQUEUED), then asks the oldest until done (DONE or FAILED: copies of
 * one stream end in order, so the states change in order, a failure found at once aside: release reports it); done
 * or release frees the slot. The copier spins while it has work, and for a while after, then sleeps on cv until a
 * start wakes it. */
enum { CY_FREE, CY_QUEUED, CY_ENQUEUED, CY_DONE, CY_FAILED };
/* Lanes: OUT the proxy's copies out of GPU memory (on CO.stream), IN the target's copies of staged chunks into the
 * heap (shoal_comm_dev_copy_start, on in_stream): the copy engines run the two directions at once, and each lane's
 * copies end in order. */
enum { CY_OUT, CY_IN, CY_LANES };
#define CY_IDLE_NS 2000000L /* the copier sleeps after this long without work (waking costs the next chunk) */
typedef struct {
  uint32_t used;      /* slot k taken (started, not yet found done or released); under CY.mu */
  struct { void *dst; const void *src; size_t n; } job[COPY_EVENTS];
  void *ev[COPY_EVENTS]; /* the copier's own events (CO's and CP's stay with copies started before it, or without it) */
  _Atomic int st[COPY_EVENTS];
  int ring[COPY_EVENTS];
  _Atomic unsigned tail; /* slots appended to ring, ever */
  unsigned head;         /* the copier's: taken from ring */
} cy_lane_t;
static struct {
  pthread_mutex_t mu; /* lanes' used, rings' tails, sleeping's handshake with cv */
  pthread_cond_t cv;
  pthread_t th;
  _Atomic int up;     /* 1 running, -1 could not start (copies go as before), 0 not yet, -2 stopped (the heap goes) */
  cy_lane_t l[CY_LANES];
  void *_Atomic in_stream; /* IN's stream, made under G.lock by the first copy that takes the lane */
  _Atomic bool in_failed;  /* it could not be made: the target's copies stay with CP */
  _Atomic bool sleeping, stop;
} CY = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

/* The backends' messages, printed as the runtime prints its own (device/ writes nothing itself). */
static void gpu_log(int level, const char *line) {
  if (level == SHOAL_GPU_LOG_WARN) shoal_warn("%s", line);
  else SHOAL_DEBUG(SHOAL_SUB_GPU, "%s", line);
}

static size_t (*coll_area_bytes)(int npes); /* shoal_gpu_area_reserve's */
void (*shoal_gpu_teams_hook)(shmemx_device_state_t *st, int32_t (*rows)[4], int nrows);

void shoal_gpu_area_reserve(size_t (*bytes)(int npes)) { coll_area_bytes = bytes; }

#define LINE 128 /* one GPU cache line per flag: rounds of a barrier do not share lines */
shoal_status_t shoal_gpu_layout_make(int npes, shoal_gpu_layout_t *out) {
  if (npes < 1 || !out) return SHOAL_ERR_INVAL;
  shoal_gpu_layout_t l;
  l.bar_flags = 0;
  l.bar_epoch = l.bar_flags + SHMEMX_DEVICE_BAR_ROUNDS * LINE;
  l.grid_bar = l.bar_epoch + LINE;
  l.amo_scratch = l.grid_bar + LINE;
  l.teams = l.amo_scratch + LINE;
  l.peer_delta = l.teams + (SHOAL_GPU_TEAM_ROWS * 4 * sizeof(int32_t) + LINE - 1) / LINE * LINE;
  l.coll = (l.peer_delta + (size_t)npes * sizeof(int64_t) + LINE - 1) / LINE * LINE;
  size_t end = l.coll + (coll_area_bytes ? coll_area_bytes(npes) : 0), chunk = (size_t)64 << 10;
  l.total = (end + chunk - 1) / chunk * chunk; /* the user heap starts 64 KiB-aligned: shmem_align up to 64 KiB */
  *out = l;
  return SHOAL_OK;
}

/* ---- setup ---- */
#define BUSID_LEN 16 /* "dddd:bb:dd.f" and its NUL (runtime/topo.h SHOAL_TOPO_BUSID_LEN) */
typedef struct gpu_hello {
  int32_t ok, dev;
  int32_t share, pad_; /* share: heap from share_alloc, its descriptor comes through shoal_boot_fd_allgather */
  int64_t pid;
  uint64_t size, base;
  char busid[BUSID_LEN];
  shoal_gpu_ipc_t ipc;
} gpu_hello_t;

/* This PE's GPU: the one hwloc mapped to it (runtime/topo.c), else local rank modulo the devices. */
static int pick_device(int ndev) {
  char busid[32];
  int dev;
  if (!shoal_topo_gpu_busid(busid, sizeof busid) && shoal_gpu_ops.device_by_busid(busid, &dev) == SHOAL_OK) {
    SHOAL_DEBUG(SHOAL_SUB_GPU, "GPU %s (device %d) from the topology map", busid, dev);
    return dev;
  }
  dev = shoal_g.boot.local_rank % ndev;
  SHOAL_DEBUG(SHOAL_SUB_GPU, "no usable GPU bus id from the topology: device %d (local rank %d of %d devices)", dev,
              shoal_g.boot.local_rank, ndev);
  return dev;
}

/* Device, allocation, zeroed internal area, IPC handle or shared descriptor. On failure everything local is
 * released. */
static shoal_status_t local_setup(gpu_hello_t *h) {
  const shoal_gpu_ops_t *o = &shoal_gpu_ops;
  size_t chunk = (size_t)2 << 20, user = (shoal_env.device_symmetric_size + chunk - 1) / chunk * chunk;
  void *p = NULL;
  pthread_mutex_lock(&CY.mu); /* a copier stopped by an earlier heap's release may start again */
  if (atomic_load(&CY.up) == -2) atomic_store(&CY.up, 0);
  atomic_store(&CY.in_failed, false);
  pthread_mutex_unlock(&CY.mu);
  G.dev = pick_device(G.ndev);
  if (shoal_gpu_layout_make(shoal_g.npes, &G.lay) || o->set_device(G.dev) || o->sm_count(G.dev, &G.sms) ||
      o->device_busid(G.dev, h->busid, sizeof h->busid) || o->stream_create(&G.stream))
    return SHOAL_ERR;
  G.size = G.lay.total + user;
  shoal_status_t rc = SHOAL_ERR_NOSYS;
  if (strcmp(shoal_env.gpu_heap_map, "ipc")) {
    rc = o->share_alloc(&p, G.size, &G.share_fd);
    if (rc && (rc == SHOAL_ERR_NOSYS || !strcmp(shoal_env.gpu_heap_map, "auto"))) {
      /* no VMM API, or it failed (a driver without POSIX descriptor handles): IPC handles, as every PE of the node
       * will find (a PE that differs is caught after the all-gather) */
      if (!strcmp(shoal_env.gpu_heap_map, "vmm"))
        shoal_warn("shmem_init: SHOAL_GPU_HEAP_MAP=vmm: the %s backend cannot (old driver?): device heap shared by "
                   "IPC handles", o->name);
      else if (rc != SHOAL_ERR_NOSYS)
        SHOAL_DEBUG(SHOAL_SUB_GPU, "%s: heap shared by descriptor failed: IPC handles instead", o->name);
      G.share_fd = -1;
      rc = SHOAL_ERR_NOSYS;
    }
    G.share = rc == SHOAL_OK;
  }
  if (rc == SHOAL_ERR_NOSYS) rc = o->mem_alloc(&p, G.size);
  if (rc) {
    shoal_warn("shmem_init: cannot allocate the %zu-byte device symmetric heap (SHOAL_DEVICE_SYMMETRIC_SIZE) on "
               "device %d", G.size, G.dev);
    goto fail_stream;
  }
  if (o->memset(p, 0, G.lay.total, G.stream) || o->stream_sync(G.stream)) goto fail_mem;
  if (!G.share && o->ipc_get(p, &h->ipc) != SHOAL_OK) goto fail_mem;
  h->share = G.share;
  G.base = p;
  h->ok = 1;
  h->dev = G.dev;
  h->pid = getpid();
  h->size = G.size;
  h->base = (uintptr_t)p;
  return SHOAL_OK;
fail_mem:
  if (G.share) {
    o->share_free(p, G.size);
    if (G.share_fd >= 0) close(G.share_fd);
    G.share_fd = -1;
    G.share = false;
  } else {
    o->mem_free(p);
  }
fail_stream:
  o->stream_destroy(G.stream);
  G.stream = NULL;
  return SHOAL_ERR;
}

/* Unmap peer p's heap. */
static void peer_close(int p) {
  if (!G.opened[p]) return;
  if (G.share) shoal_gpu_ops.share_close(G.peer[p], G.size);
  else shoal_gpu_ops.ipc_close(G.peer[p]);
  G.opened[p] = false;
}

static void copier_stop(void);
static void local_release(void) {
  copier_stop(); /* before the events and stream it uses go */
  if (G.peer)
    for (int p = 0; p < shoal_g.npes; p++) peer_close(p);
  if (G.base) {
    if (G.share) shoal_gpu_ops.share_free(G.base, G.size);
    else shoal_gpu_ops.mem_free(G.base);
  }
  if (G.share_fd >= 0) close(G.share_fd);
  G.share_fd = -1;
  G.share = false;
  if (G.stream) shoal_gpu_ops.stream_destroy(G.stream);
  pthread_mutex_lock(&G.lock); /* the transport's progress may still reap (its fini comes later) */
  for (int k = 0; k < COPY_EVENTS; k++) {
    if (CP.ev[k]) shoal_gpu_ops.event_destroy(CP.ev[k]);
    if (CO.ev[k]) shoal_gpu_ops.event_destroy(CO.ev[k]);
  }
  if (CO.stream) shoal_gpu_ops.stream_destroy(CO.stream);
  void *in = atomic_exchange(&CY.in_stream, NULL); /* after copier_stop: nothing is enqueued on it any more */
  if (in) shoal_gpu_ops.stream_destroy(in);
  memset(&CP, 0, sizeof CP);
  memset(&CO, 0, sizeof CO);
  pthread_mutex_unlock(&G.lock);
  free(G.peer);
  free(G.opened);
  free(G.lim);
  G.peer = NULL;
  G.opened = NULL;
  G.lim = NULL;
  G.any_far = false;
  G.base = NULL;
  G.stream = NULL;
}

/* Every PE says whether its part worked; all go on with the GPU only if every one did. Collective. */
static bool all_agree(bool ok) {
  int32_t mine = ok, *all = calloc((size_t)shoal_g.npes, sizeof *all);
  bool every = all && !shoal_boot_allgather(&shoal_g.boot, &mine, all, sizeof mine);
  for (int p = 0; every && p < shoal_g.npes; p++) every = all[p];
  free(all);
  return every;
}

static shoal_status_t dev_put(shoal_space_t *s, int pe, size_t off, const void *src, size_t n) {
  if (shoal_gpu_ops.memcpy(G.peer[pe] + off, src, n, G.stream)) return SHOAL_ERR;
  return shoal_gpu_ops.stream_sync(G.stream);
}

static shoal_status_t dev_get(shoal_space_t *s, int pe, size_t off, void *dst, size_t n) {
  if (shoal_gpu_ops.memcpy(dst, G.peer[pe] + off, n, G.stream)) return SHOAL_ERR;
  return shoal_gpu_ops.stream_sync(G.stream);
}

/* Peer table and barrier pointers for the device API; the table is also copied to device memory. */
static shoal_status_t state_setup(const gpu_hello_t *all) {
  int n = shoal_g.npes;
  char *busids = calloc((size_t)n, BUSID_LEN);
  int64_t *delta = calloc((size_t)n, sizeof *delta);
  if (!busids || !delta) {
    free(busids);
    free(delta);
    return SHOAL_ERR_NOMEM;
  }
  for (int p = 0; p < n; p++) { /* a PE of another node shares no GPU with this one: its bus id stays empty */
    if (G.peer[p]) memcpy(busids + (size_t)p * BUSID_LEN, all[p].busid, BUSID_LEN);
    delta[p] = G.peer[p] ? G.peer[p] - G.base : SHMEMX_DEVICE_DELTA_FAR;
  }
  shmemx_device_state_t *st = &G.st;
  memset(st, 0, sizeof *st);
  st->size = sizeof *st;
  st->my_pe = shoal_g.me;
  st->n_pes = n;
  st->pes_per_gpu = shoal_gpu_count_sharing(busids, BUSID_LEN, n, shoal_g.me);
  st->heap_base = G.base;
  st->heap_size = G.size;
  st->peer_delta = (const int64_t *)(G.base + G.lay.peer_delta);
  st->bar_flags = (uint64_t *)(G.base + G.lay.bar_flags);
  st->bar_epoch = (uint64_t *)(G.base + G.lay.bar_epoch);
  st->grid_bar = (uint32_t *)(G.base + G.lay.grid_bar);
  st->teams = (const int32_t *)(G.base + G.lay.teams);
  int32_t teams[SHOAL_GPU_TEAM_ROWS][4] = {{0}}; /* the teams made before the GPU: WORLD, SHARED */
  if (shoal_gpu_teams_hook) shoal_gpu_teams_hook(st, teams, SHOAL_GPU_TEAM_ROWS);
  for (int p = 0; p < n && p < SHMEMX_DEVICE_MAX_PES; p++) st->delta[p] = delta[p];
  shoal_status_t rc = shoal_gpu_ops.memcpy(G.base + G.lay.peer_delta, delta, (size_t)n * sizeof *delta, G.stream);
  if (!rc) rc = shoal_gpu_ops.memcpy(G.base + G.lay.teams, teams, sizeof teams, G.stream);
  if (!rc) rc = shoal_gpu_ops.stream_sync(G.stream);
  if (!rc && n <= SHMEMX_DEVICE_MAX_PES) {
    rc = shoal_gpu_ops.kernels_setup(st);
    if (rc == SHOAL_ERR_NOSYS) rc = SHOAL_OK;
  }
  free(busids);
  free(delta);
  return rc;
}

static void units_check(const char *routine);
static void stage_pin(void);

shoal_status_t shoal_gpu_init(void) {
  int n = shoal_g.npes, me = shoal_g.me;
  char tried[64] = "";
  shoal_gpu_log_hook = gpu_log;
  shoal_gpu_log_level = shoal_log_mask & SHOAL_SUB_GPU ? SHOAL_GPU_LOG_DEBUG : SHOAL_GPU_LOG_WARN;
  shoal_gpu_select(&G.ndev, tried, sizeof tried);
  gpu_hello_t mine, *all = calloc((size_t)n, sizeof *all);
  memset(&mine, 0, sizeof mine);
  if (!all) return SHOAL_ERR_NOMEM;
  if (shoal_gpu_kind != SHOAL_GPU_NONE && local_setup(&mine)) local_release();
  if (shoal_boot_allgather(&shoal_g.boot, &mine, all, sizeof mine)) {
    free(all);
    return SHOAL_ERR_IO;
  }
  bool every = true, self_failed = false;
  for (int p = 0; p < n; p++) every = every && all[p].ok && all[p].size == mine.size && all[p].share == mine.share;
  if (every) { /* map every peer's heap: IPC from another process; our own (or a same-process PE's) directly */
    bool ok = (G.peer = calloc((size_t)n, sizeof *G.peer)) && (G.opened = calloc((size_t)n, sizeof *G.opened)) &&
              (G.lim = calloc((size_t)n, sizeof *G.lim));
    bool *near = ok ? calloc((size_t)n, sizeof *near) : NULL; /* this node's PEs (boot's, after SHOAL_NODE_PES) */
    ok = ok && near;
    for (int i = 0; ok && i < shoal_g.boot.local_size; i++) near[shoal_g.boot.local[i]] = true;
    if (ok) near[me] = true;
    int *fds = G.share ? calloc((size_t)n, sizeof *fds) : NULL;
    uint64_t *tags = G.share ? calloc((size_t)n, sizeof *tags) : NULL;
    /* collective: every PE takes part, with no descriptor if it is already failing; descriptors travel within the
     * node only (fds[p] is -1 for a PE of another node) */
    if (G.share && (!fds || !tags || shoal_boot_fd_allgather(&shoal_g.boot, ok ? G.share_fd : -1, G.size, fds, tags)))
      ok = false;
    for (int p = 0; ok && p < n; p++) {
      void *q = NULL;
      if (!near[p]) { /* first: a process of another node may have our pid */
        continue;     /* another node: no mapping, reached through the comm layer (lim[p] stays 0) */
      } else if (all[p].pid == mine.pid) {
        G.peer[p] = (char *)(uintptr_t)all[p].base;
      } else if (G.share && (fds[p] < 0 || tags[p] != G.size)) {
        shoal_warn("shmem_init: PE %d shared no device heap of %zu bytes", p, G.size);
        ok = false;
      } else if ((G.share ? shoal_gpu_ops.share_open(fds[p], G.size, &q)
                          : shoal_gpu_ops.ipc_open(&all[p].ipc, &q)) == SHOAL_OK) {
        G.peer[p] = q;
        G.opened[p] = true;
      } else {
        shoal_warn("shmem_init: cannot map PE %d's device heap (device %d, %s) through %s", p, all[p].dev,
                   all[p].busid, G.share ? "its shared descriptor" : "IPC");
        ok = false;
      }
    }
    for (int p = 0; ok && p < n; p++) G.lim[p] = G.peer[p] ? G.size : 0, G.any_far |= !G.peer[p];
    for (int p = 0; fds && p < n; p++)
      if (fds[p] >= 0) close(fds[p]);
    free(near);
    free(fds);
    free(tags);
    if (G.share_fd >= 0) close(G.share_fd); /* every peer has its own copy now */
    G.share_fd = -1;
    if (ok && state_setup(all)) ok = false;
    self_failed = !ok;
    every = all_agree(ok);
  }
  if (!every) {
    int bad = -1, differs = -1; /* the first PE without a usable GPU; the first whose heap is not like ours */
    for (int p = n - 1; p >= 0; p--) {
      if (!all[p].ok) bad = p;
      else if (all[p].size != mine.size || all[p].share != mine.share) differs = p;
    }
    char which[96];
    if (self_failed || !mine.ok)
      snprintf(which, sizeof which, "this PE could not set up or map it");
    else if (bad >= 0)
      snprintf(which, sizeof which, "PE %d has no usable GPU", bad);
    else if (differs >= 0)
      snprintf(which, sizeof which, "PE %d's device heap differs in size or in how it is shared", differs);
    else
      snprintf(which, sizeof which, "another PE could not map it");
    if (shoal_gpu_kind == SHOAL_GPU_NONE && !tried[0])
      snprintf(G.why, sizeof G.why, "this libshoal was built without a GPU backend (CUDA, HIP)");
    else if (shoal_gpu_kind == SHOAL_GPU_NONE)
      snprintf(G.why, sizeof G.why, "no GPU is visible (%s)", shoal_gpu_select_why);
    else
      snprintf(G.why, sizeof G.why, "the device symmetric heap could not be set up on every PE (%s)", which);
    if (shoal_gpu_kind != SHOAL_GPU_NONE && me == 0)
      shoal_warn("shmem_init: not every PE could set up its GPU (%s): host memory only", shoal_gpu_ops.name);
    local_release();
    shoal_gpu_ops_fill(&shoal_gpu_ops, &shoal_gpu_none_ops);
    shoal_gpu_kind = SHOAL_GPU_NONE;
    if (me == 0 && shoal_env.info)
      printf("shoal: no GPU (backends tried: %s): host memory only\n", tried[0] ? tried : "none built");
    if (me == 0 && !strcmp(shoal_env.heap_kind, "device"))
      shoal_warn("shmem_init: SHOAL_HEAP=device but no GPU: shmem_malloc uses the host heap");
    fflush(stdout);
    free(all);
    return SHOAL_OK;
  }
  free(all);
  if (shoal_alloc_init(&G.alloc, G.size - G.lay.total)) return SHOAL_ERR_NOMEM;
  G.user_base = G.base + G.lay.total;
  shoal_g.space[SHOAL_SPACE_DEVICE] = (shoal_space_t){
    .name = "device heap", .base = (uintptr_t)G.base, .size = G.size, .delta = NULL, .lim = G.lim, .device = true,
    .put = dev_put, .get = dev_get};
  if (shoal_g.nspaces <= SHOAL_SPACE_DEVICE) shoal_g.nspaces = SHOAL_SPACE_DEVICE + 1;
  G.ready = true;
  memcpy(G.busid, mine.busid, sizeof G.busid);
  stage_pin();
  return SHOAL_OK;
}

/* With PEs of other nodes, their staged puts and gets copy between the transport's staging region and this heap
 * (shoal_comm_dev_copy), and this PE's own staged calls copy from and to its slot there: page-locked, those copies
 * are the GPU's DMA instead of the runtime's pageable path through a driver buffer. Locking touches every page: only
 * up to PIN_MAX (the region's size up to 1024 PEs). Done here, on the PE's thread before any kernel runs (never from
 * the progress thread, while a kernel may spin). Where it fails the copies stay pageable: slower, still right. */
#define PIN_MAX ((size_t)16 << 20)
static void stage_pin(void) {
  void *b = NULL;
  size_t n = 0;
  const shoal_tl_ops_t *t = shoal_g.tl;
  if (!G.any_far || !t || !t->stage_region || t->stage_region(&b, &n)) return;
  if (n > PIN_MAX) { /* past 1024 PEs: every page locked would be npes x 16 KiB, most of it never used */
    SHOAL_DEBUG(SHOAL_SUB_GPU, "the staging region (%zu bytes) stays pageable: more than %zu", n, PIN_MAX);
    return;
  }
  shoal_status_t rc = shoal_gpu_ops.host_register(b, n);
  if (rc == SHOAL_OK) G.pinned = b;
  SHOAL_DEBUG(SHOAL_SUB_GPU, "the %s transport's staging region (%zu bytes) %s", t->name, n,
              rc == SHOAL_OK ? "page-locked for the GPU" : "stays pageable (page-locking failed)");
}

void shoal_gpu_announce(const char *routine) {
  units_check(routine);
  if (!G.ready) return;
  if (shoal_g.me == 0 && shoal_env.info)
    printf("shoal: GPU backend %s: %d device(s), device heap %zu bytes per PE, %d PE(s) per GPU\n",
           shoal_gpu_ops.name, G.ndev, G.size - G.lay.total, G.st.pes_per_gpu);
  fflush(stdout);
  SHOAL_DEBUG(SHOAL_SUB_GPU, "%s device %d (%s, %d SMs): device heap %p, %zu bytes, %d PEs share this GPU, mapped by "
              "peers through %s", shoal_gpu_ops.name, G.dev, G.busid, G.sms, (void *)G.base, G.size,
              G.st.pes_per_gpu, G.share ? "shared descriptors (VMM)" : "IPC handles");
}

void shoal_gpu_fini(void) {
  if (!G.ready) return;
  shoal_gpu_ops.device_sync(); /* no kernel of this process still uses a heap */
  for (int p = 0; p < shoal_g.npes; p++) peer_close(p);
  if (G.pinned) shoal_gpu_ops.host_unregister(G.pinned); /* the transport unmaps the region later */
  G.pinned = NULL;
  shoal_boot_barrier(&shoal_g.boot); /* every mapping of our heap is gone before it is freed */
  local_release();
  shoal_alloc_fini(&G.alloc);
  memset(&shoal_g.space[SHOAL_SPACE_DEVICE], 0, sizeof(shoal_space_t));
  G.ready = false;
  shoal_gpu_ops_fill(&shoal_gpu_ops, &shoal_gpu_none_ops);
  shoal_gpu_kind = SHOAL_GPU_NONE;
}

/* ---- device heap ---- */
bool shoal_gpu_heap_ready(void) { return G.ready; }
bool shoal_gpu_heap_any_far(void) { return G.ready && G.any_far; }
bool shoal_gpu_heap_default(void) { return G.ready && !strcmp(shoal_env.heap_kind, "device"); }

bool shoal_gpu_heap_owns(const void *p) { return G.ready && (uintptr_t)p - (uintptr_t)G.base < G.size; }

bool shoal_gpu_local_device(const void *p) {
  if (!G.ready) return false;
  if ((uintptr_t)p - (uintptr_t)G.base < G.size) return true;
  int d = 0;
  return shoal_gpu_ops.ptr_device(p, &d) == SHOAL_OK && d;
}

const shmemx_device_state_t *shoal_gpu_state(void) { return G.ready ? &G.st : NULL; }

void shoal_gpu_state_set_proxy(void *queue) {
  if (G.ready) G.st.proxy_queue = queue;
}

void *shoal_gpu_heap_alloc(const char *routine, size_t size, size_t align) {
  size_t off;
  if (!size || !G.ready) return NULL;
  if (shoal_alloc_alloc(&G.alloc, size, align, &off)) {
    static bool said; /* the first failure is said whatever SHMEM_DEBUG says (see shoal_heap_say_full) */
    shoal_heap_say_full(routine, "device symmetric heap", &G.alloc, size, align, "SHOAL_DEVICE_SYMMETRIC_SIZE",
                        &said);
    return NULL;
  }
  return G.user_base + off;
}

static size_t user_off(const char *routine, void *p) {
  uintptr_t off = (uintptr_t)p - (uintptr_t)G.user_base;
  if (off >= G.alloc.size || !shoal_alloc_size_of(&G.alloc, off))
    shoal_fatal(routine, "ptr %p is not a live allocation of the device symmetric heap", p);
  return off;
}

void shoal_gpu_heap_free(const char *routine, void *p) { shoal_alloc_free(&G.alloc, user_off(routine, p)); }

static void sync_copy(const char *routine, void *dst, const void *src, size_t n) {
  if (shoal_gpu_ops.memcpy(dst, src, n, G.stream) || shoal_gpu_ops.stream_sync(G.stream))
    shoal_fatal(routine, "device copy of %zu bytes failed", n);
}

void *shoal_gpu_heap_realloc(const char *routine, void *p, size_t size) {
  size_t off = user_off(routine, p), old = shoal_alloc_size_of(&G.alloc, off);
  if (!shoal_alloc_resize(&G.alloc, off, size)) return p;
  void *q = shoal_gpu_heap_alloc(routine, size, 64);
  if (q) {
    sync_copy(routine, q, p, old < size ? old : size);
    shoal_alloc_free(&G.alloc, off);
  }
  return q;
}

void shoal_gpu_memset(void *p, int v, size_t n) {
  if (shoal_gpu_ops.memset(p, v, n, G.stream) || shoal_gpu_ops.stream_sync(G.stream))
    shoal_fatal("shmem_calloc", "device memset of %zu bytes failed", n);
}

shoal_status_t shoal_gpu_amo(const char *routine, void *dest, int op, size_t size, uint64_t value, uint64_t cmp,
                             uint64_t *old, int pe) {
  if (!shoal_gpu_heap_owns(dest) || (size != 4 && size != 8) || (uintptr_t)dest % size) return SHOAL_ERR_INVAL;
  size_t off = (uintptr_t)dest - (uintptr_t)G.base;
  if (off + size > G.size || (unsigned)pe >= (unsigned)shoal_g.npes || !G.peer[pe]) return SHOAL_ERR_INVAL;
  pthread_mutex_lock(&G.lock);
  /* any thread may come here (the transport's progress thread for a far PE's AMO, the proxy): the stream is G.dev's */
  shoal_status_t rc = shoal_gpu_ops.set_device(G.dev);
  if (!rc)
    rc = shoal_gpu_ops.amo(G.peer[pe] + off, op, size, value, cmp, G.base + G.lay.amo_scratch, old, G.stream);
  pthread_mutex_unlock(&G.lock);
  if (rc == SHOAL_ERR_NOSYS)
    SHOAL_DEBUG(SHOAL_SUB_GPU, "%s: the %s backend has no host-side atomics on device memory", routine,
                shoal_gpu_ops.name);
  return rc;
}

/* The target's side of a transport's staged copy (comm.h): bytes of a far PE's put or get between the transport's
 * host staging buffer and this heap, [off, off + n) checked against the heap's G.size bytes. Runs on the transport's
 * progress thread as well as the PE's: the device is set for that thread, and G.lock keeps it apart from the AMOs. */
shoal_status_t shoal_comm_dev_copy(size_t off, void *host, size_t n, bool to_device) {
  if (!G.ready || off > G.size || n > G.size - off || !host) return SHOAL_ERR_INVAL;
  pthread_mutex_lock(&G.lock);
  shoal_status_t rc = shoal_gpu_ops.set_device(G.dev);
  if (!rc)
    rc = to_device ? shoal_gpu_ops.memcpy(G.base + off, host, n, G.stream)
                   : shoal_gpu_ops.memcpy(host, G.base + off, n, G.stream);
  if (!rc) rc = shoal_gpu_ops.stream_sync(G.stream);
  pthread_mutex_unlock(&G.lock);
  return rc;
}

/* The same copy into the heap, enqueued without waiting (comm.h): an event of a small pool is recorded behind it,
 * *slot names it for shoal_comm_dev_copy_done. Where the backend cannot say whether an event is done (no
 * event_query: the fake backend, old tables) or every event is taken, the copy is waited for here and *slot is -1,
 * as shoal_comm_dev_copy. Measured on an H100 (session 27): a 64 KiB chunk's copy and synchronize took 9 us, in
 * series with the network's transfer of the next chunks while the transport's progress waited for it. */
/* dst <- src, n bytes, enqueued on pool c's stream with an event of c recorded behind it: *slot k, or -1 where the copy
 * was waited for here (no pollable event, every event taken, SHOAL_GPU_STAGE_ASYNC=0). Under G.lock. */
static shoal_status_t pool_copy(copy_pool_t *c, void *stream, void *dst, const void *src, size_t n, int *slot) {
  *slot = -1;
  if (!c->ok && !shoal_env.gpu_stage_async) __atomic_store_n(&c->ok, -1, __ATOMIC_RELEASE);
  int k = c->ok >= 0 && c->used != UINT32_MAX ? __builtin_ctz(~c->used) : -1;
  shoal_status_t rc = shoal_gpu_ops.set_device(G.dev); /* first: an event belongs to the current device */
  if (!rc && k >= 0 && !c->ev[k] && shoal_gpu_ops.event_create(&c->ev[k]))
    c->ev[k] = NULL, k = -1, __atomic_store_n(&c->ok, -1, __ATOMIC_RELEASE);
  if (!rc) rc = shoal_gpu_ops.memcpy(dst, src, n, stream);
  if (!rc && k >= 0 && !shoal_gpu_ops.event_record(c->ev[k], stream)) {
    int done = 0;
    if (!c->ok)
      __atomic_store_n(&c->ok, shoal_gpu_ops.event_query(c->ev[k], &done) == SHOAL_ERR_NOSYS ? -1 : 1,
                       __ATOMIC_RELEASE);
    if (c->ok > 0) c->used |= 1u << k, *slot = k;
  }
  if (!rc && *slot < 0) rc = shoal_gpu_ops.stream_sync(stream);
  return rc;
}

static shoal_status_t pool_done(copy_pool_t *c, void *stream, int slot, bool *done) {
  int d = 1;
  if (slot < 0 || slot >= COPY_EVENTS) return *done = true, SHOAL_ERR_INVAL;
  pthread_mutex_lock(&G.lock);
  shoal_status_t rc = c->ev[slot] ? shoal_gpu_ops.set_device(G.dev) : SHOAL_ERR; /* NULL: the heap is gone */
  if (!rc) rc = shoal_gpu_ops.event_query(c->ev[slot], &d);
  if (rc && c->ev[slot]) shoal_gpu_ops.stream_sync(stream); /* answered refused: the slot is not read any more */
  if (rc || d) c->used &= ~(1u << slot);
  pthread_mutex_unlock(&G.lock);
  *done = rc || d;
  return rc;
}

static bool copier_take(int lane, bool start, void *dst, const void *src, size_t n, int *slot);
static shoal_status_t copier_done(int lane, int k, bool *done);
shoal_status_t shoal_comm_dev_copy_start(size_t off, const void *host, size_t n, int *slot) {
  *slot = -1;
  if (!G.ready || off > G.size || n > G.size - off || !host) return SHOAL_ERR_INVAL;
  /* Through the copier's IN lane once CP's events are known to answer queries (the first copy asks): the
   * transport's progress thread then makes no driver call per chunk (session 31's profile: 4.2 us to enqueue 64 KiB
   * beside a host put's 15). Only a copier already up (the proxy's thread starts it, on its CPUs): this thread may
   * be the PE's own. */
  if (shoal_env.gpu_copier && atomic_load(&CY.up) > 0 && __atomic_load_n(&CP.ok, __ATOMIC_ACQUIRE) > 0 &&
      !atomic_load(&CY.in_failed)) {
    if (!atomic_load(&CY.in_stream)) {
      void *st = NULL;
      pthread_mutex_lock(&G.lock);
      if (!atomic_load(&CY.in_stream)) {
        if (!shoal_gpu_ops.set_device(G.dev) && !shoal_gpu_ops.stream_create(&st)) atomic_store(&CY.in_stream, st);
        else atomic_store(&CY.in_failed, true);
      }
      pthread_mutex_unlock(&G.lock);
    }
    if (atomic_load(&CY.in_stream) && copier_take(CY_IN, false, G.base + off, host, n, slot))
      return *slot += COPY_EVENTS, SHOAL_OK; /* the copier's slots: COPY_EVENTS up */
    /* not taken (the copier stopped, or no stream): the heap's own pool below; every slot taken cannot happen (each
     * is an answer the transport holds, at most SHOAL_COMM_DEV_COPIES) */
  }
  pthread_mutex_lock(&G.lock);
  shoal_status_t rc = pool_copy(&CP, G.stream, G.base + off, host, n, slot);
  pthread_mutex_unlock(&G.lock);
  return rc;
}

shoal_status_t shoal_comm_dev_copy_done(int slot, bool *done) {
  if (slot >= COPY_EVENTS && slot < 2 * COPY_EVENTS) return copier_done(CY_IN, slot - COPY_EVENTS, done);
  return pool_done(&CP, G.stream, slot, done);
}

static int64_t cy_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* The copier's thread (above). */
static void *lane_stream(int lane) { return lane == CY_OUT ? CO.stream : atomic_load(&CY.in_stream); }
static void *copier_main(void *arg) {
  (void)arg;
  int fly[CY_LANES][COPY_EVENTS], fh[CY_LANES] = {0}, fn[CY_LANES] = {0}; /* slots enqueued per lane, oldest at fh */
  int64_t idle = cy_now();
  bool dev = false;
  unsigned spins = 0;
  /* stopping, it still enqueues and waits for what the rings hold (a take before the stop: its answer waits) */
  while (!atomic_load_explicit(&CY.stop, memory_order_acquire) || fn[CY_OUT] || fn[CY_IN] ||
         CY.l[CY_OUT].head != atomic_load(&CY.l[CY_OUT].tail) || CY.l[CY_IN].head != atomic_load(&CY.l[CY_IN].tail)) {
    bool work = false;
    for (int lane = 0; lane < CY_LANES; lane++) {
      cy_lane_t *L = &CY.l[lane];
      void *stream = lane_stream(lane);
      while (L->head != atomic_load_explicit(&L->tail, memory_order_acquire)) {
        const int k = L->ring[L->head++ % COPY_EVENTS];
        /* not under G.lock: its events and the lanes' streams are the copier's alone (the first copy out, CO's own,
         * was enqueued before it started), the device is set per thread, and the heap goes only after copier_stop's
         * join; so the AMOs on the heap, which take G.lock, never wait behind these calls */
        shoal_status_t rc = dev ? SHOAL_OK : shoal_gpu_ops.set_device(G.dev);
        dev = !rc;
        if (!rc && !L->ev[k] && shoal_gpu_ops.event_create(&L->ev[k])) L->ev[k] = NULL, rc = SHOAL_ERR;
        bool queued = false;
        if (!rc) rc = shoal_gpu_ops.memcpy(L->job[k].dst, L->job[k].src, L->job[k].n, stream), queued = !rc;
        if (!rc) rc = shoal_gpu_ops.event_record(L->ev[k], stream);
        if (rc && queued) shoal_gpu_ops.stream_sync(stream); /* no event behind it: its bytes must not land later */
        if (rc) {
          atomic_store_explicit(&L->st[k], CY_FAILED, memory_order_release);
        } else {
          atomic_store_explicit(&L->st[k], CY_ENQUEUED, memory_order_release);
          fly[lane][(fh[lane] + fn[lane]++) % COPY_EVENTS] = k;
        }
        work = true;
      }
      while (fn[lane]) {
        const int k = fly[lane][fh[lane]];
        int d = 0;
        shoal_status_t rc = shoal_gpu_ops.event_query(L->ev[k], &d);
        if (rc) shoal_gpu_ops.stream_sync(stream); /* nothing of it is read: the bytes must not land later */
        if (!rc && !d) break;
        atomic_store_explicit(&L->st[k], rc ? CY_FAILED : CY_DONE, memory_order_release);
        fh[lane] = (fh[lane] + 1) % COPY_EVENTS, fn[lane]--;
        work = true;
      }
    }
    if (work) {
      idle = cy_now(), spins = 0;
      continue;
    }
    if (fn[CY_OUT] || fn[CY_IN] || cy_now() - idle < CY_IDLE_NS) { /* a copy runs, or one may come: spin */
      if (++spins % 64 == 0) sched_yield();
      else SHOAL_CPU_RELAX();
      continue;
    }
    pthread_mutex_lock(&CY.mu);
    atomic_store(&CY.sleeping, true);
    while (CY.l[CY_OUT].head == atomic_load(&CY.l[CY_OUT].tail) && CY.l[CY_IN].head == atomic_load(&CY.l[CY_IN].tail) &&
           !atomic_load(&CY.stop))
      pthread_cond_wait(&CY.cv, &CY.mu);
    atomic_store(&CY.sleeping, false);
    pthread_mutex_unlock(&CY.mu);
    idle = cy_now();
  }
  return NULL;
}

/* Started by the first copy that may use it, from the thread that starts copies (the proxy's or the transport's
 * progress thread, which run on the CPUs no PE is bound to: the copier inherits them), where that thread may run on
 * two CPUs or more: on one, a second thread that spins while copies run would take that thread's own time. Under
 * CY.mu. */
static void copier_start(void) {
  cpu_set_t cpus;
  if (!pthread_getaffinity_np(pthread_self(), sizeof cpus, &cpus) && CPU_COUNT(&cpus) < 2) {
    atomic_store(&CY.up, -1);
    SHOAL_DEBUG(SHOAL_SUB_GPU, "one CPU: the proxy and the transport enqueue their copies themselves (no copier)");
    return;
  }
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old); /* signals stay with the application's threads */
  atomic_store(&CY.stop, false);
  atomic_store(&CY.up, pthread_create(&CY.th, NULL, copier_main, NULL) ? -1 : 1);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (atomic_load(&CY.up) < 0)
    SHOAL_DEBUG(SHOAL_SUB_GPU, "the copier thread did not start: copies are enqueued by their starters");
}

void shoal_gpu_copier_prepare(void) {
  if (!shoal_env.gpu_copier) return;
  pthread_mutex_lock(&CY.mu);
  if (!atomic_load(&CY.up)) copier_start();
  pthread_mutex_unlock(&CY.mu);
}
bool shoal_gpu_copier_up(void) {
  return atomic_load(&CY.up) > 0;
}

/* Stopped for good until the heap's next setup (-2: no take starts it again), the rings drained by the copier. */
static void copier_stop(void) {
  pthread_mutex_lock(&CY.mu);
  const bool up = atomic_load(&CY.up) > 0;
  atomic_store(&CY.up, -2);
  atomic_store(&CY.stop, true);
  pthread_cond_signal(&CY.cv);
  pthread_mutex_unlock(&CY.mu);
  if (up) pthread_join(CY.th, NULL);
  pthread_mutex_lock(&CY.mu);
  for (int lane = 0; lane < CY_LANES; lane++) {
    cy_lane_t *L = &CY.l[lane];
    for (int k = 0; k < COPY_EVENTS; k++) {
      if (L->ev[k]) shoal_gpu_ops.event_destroy(L->ev[k]), L->ev[k] = NULL;
      atomic_store(&L->st[k], CY_FREE);
    }
    L->used = 0, L->head = 0;
    atomic_store(&L->tail, 0);
  }
  pthread_mutex_unlock(&CY.mu);
}

/* dst <- src through the copier's lane: *slot k, or -1 where it cannot take it (not running, every slot taken: the
 * caller copies as before); start: a copier not yet started is started here (on this thread's CPUs). */
static bool copier_take(int lane, bool start, void *dst, const void *src, size_t n, int *slot) {
  cy_lane_t *L = &CY.l[lane];
  pthread_mutex_lock(&CY.mu);
  if (start && !atomic_load(&CY.up)) copier_start();
  int k = atomic_load(&CY.up) > 0 && L->used != UINT32_MAX ? __builtin_ctz(~L->used) : -1;
  if (k >= 0) {
    L->used |= 1u << k;
    L->job[k].dst = dst, L->job[k].src = src, L->job[k].n = n;
    atomic_store_explicit(&L->st[k], CY_QUEUED, memory_order_relaxed);
    const unsigned t = atomic_load_explicit(&L->tail, memory_order_relaxed);
    L->ring[t % COPY_EVENTS] = k;
    atomic_store(&L->tail, t + 1); /* seq_cst, then sleeping: the copier sets sleeping, then looks at tail */
    if (atomic_load(&CY.sleeping)) pthread_cond_signal(&CY.cv);
  }
  pthread_mutex_unlock(&CY.mu);
  *slot = k;
  return k >= 0;
}

static void copier_free(int lane, int slot) {
  pthread_mutex_lock(&CY.mu);
  CY.l[lane].used &= ~(1u << slot);
  pthread_mutex_unlock(&CY.mu);
}

/* A copier slot's state once its copy may be done (a load, no driver call): DONE or FAILED frees the slot. */
static shoal_status_t copier_done(int lane, int k, bool *done) {
  const int s = atomic_load_explicit(&CY.l[lane].st[k], memory_order_acquire);
  *done = s == CY_DONE || s == CY_FAILED || s == CY_FREE; /* FREE: the copier was stopped (the heap is gone) */
  if (s == CY_DONE || s == CY_FAILED)
    atomic_store_explicit(&CY.l[lane].st[k], CY_FREE, memory_order_relaxed), copier_free(lane, k);
  return s == CY_DONE ? SHOAL_OK : s == CY_FREE ? SHOAL_ERR_INVAL : s == CY_FAILED ? SHOAL_ERR : SHOAL_OK;
}

/* The requester's copy out of its GPU memory into host memory, enqueued (comm.h). Host to host is the CPU's memcpy,
 * done here (*slot -1). Measured on an H100 (session 27): a 64 KiB copy and its synchronize took 8 us, which the
 * staged put paid before each chunk's write, one after the other. Through the copier once CO's events are known to
 * answer queries (the first copy asks), and its stream made. */
shoal_status_t shoal_comm_dev_memcpy_start(void *dst, const void *src, size_t n, int *slot) {
  *slot = -1;
  if (!G.ready || !shoal_gpu_local_device(src)) return memcpy(dst, src, n), SHOAL_OK;
  if (!shoal_env.gpu_stage_async || __atomic_load_n(&CO.ok, __ATOMIC_RELAXED) < 0) /* waited for: not under G.lock */
    return shoal_comm_dev_memcpy(dst, src, n);
  if (shoal_env.gpu_copier && __atomic_load_n(&CO.ok, __ATOMIC_ACQUIRE) > 0 && CO.stream) {
    if (copier_take(CY_OUT, true, dst, src, n, slot))
      return *slot += COPY_EVENTS, SHOAL_OK; /* the copier's slots: COPY_EVENTS up */
    /* every slot taken: waited for here, not enqueued behind the copier's (a copy started later must not end before
     * one started earlier: the caller takes the newest one's end for all of them) */
    if (atomic_load(&CY.up) > 0) return shoal_comm_dev_memcpy(dst, src, n);
  }
  pthread_mutex_lock(&G.lock);
  shoal_status_t rc = SHOAL_OK;
  if (!CO.stream && (rc = shoal_gpu_ops.set_device(G.dev)) == SHOAL_OK && shoal_gpu_ops.stream_create(&CO.stream))
    CO.stream = NULL, rc = SHOAL_ERR;
  if (!rc) rc = pool_copy(&CO, CO.stream, dst, src, n, slot);
  pthread_mutex_unlock(&G.lock);
  return rc;
}

shoal_status_t shoal_comm_dev_memcpy_done(int slot, bool *done) {
  if (slot >= COPY_EVENTS && slot < 2 * COPY_EVENTS) return copier_done(CY_OUT, slot - COPY_EVENTS, done);
  return pool_done(&CO, CO.stream, slot, done);
}

shoal_status_t shoal_comm_dev_memcpy_release(int slot) {
  if (slot >= COPY_EVENTS && slot < 2 * COPY_EVENTS) { /* a later copy was found done: so is this one, or it failed */
    const int s = atomic_exchange_explicit(&CY.l[CY_OUT].st[slot - COPY_EVENTS], CY_FREE, memory_order_acquire);
    copier_free(CY_OUT, slot - COPY_EVENTS);
    return s == CY_FAILED ? SHOAL_ERR : SHOAL_OK;
  }
  if (slot < 0 || slot >= COPY_EVENTS) return SHOAL_OK;
  pthread_mutex_lock(&G.lock);
  CO.used &= ~(1u << slot);
  pthread_mutex_unlock(&G.lock);
  return SHOAL_OK;
}

/* The requester's side (comm.h): n bytes between this PE's buffers (host or device, any direction), complete on
 * return; the plain memcpy of host memory without a device heap (a staged call needs none on this side). */
shoal_status_t shoal_comm_dev_memcpy(void *dst, const void *src, size_t n) {
  /* host to host (the proxy's pinned bounce, a value on its stack, the transport's staging slot): the CPU's copy,
   * not a stream-ordered one of the GPU's runtime (which may wait behind whatever that runtime is doing) */
  if (!G.ready || (!shoal_gpu_local_device(dst) && !shoal_gpu_local_device(src))) return memcpy(dst, src, n), SHOAL_OK;
  if (shoal_gpu_ops.memcpy(dst, src, n, G.stream)) return SHOAL_ERR;
  return shoal_gpu_ops.stream_sync(G.stream);
}

shoal_status_t shoal_gpu_collective_launch(const char *routine, const void *func, const unsigned grid[3],
                                           const unsigned block[3], void **args, size_t shmem, void *stream) {
  if (!G.ready) return SHOAL_ERR_NOSYS;
  int per_sm = 0;
  int threads = (int)(block[0] * block[1] * block[2]);
  if (shoal_gpu_ops.occupancy(func, threads, shmem, &per_sm)) return SHOAL_ERR;
  long limit = shoal_gpu_coresident_limit(per_sm, G.sms, G.st.pes_per_gpu);
  unsigned long blocks = (unsigned long)grid[0] * grid[1] * grid[2];
  if (blocks > (unsigned long)limit) {
    shoal_warn("%s: grid of %lu blocks of %d threads cannot be co-resident: at most %ld (%d per SM x %d SMs / %d "
               "PEs on this GPU)", routine, blocks, threads, limit, per_sm, G.sms, G.st.pes_per_gpu);
    return SHOAL_ERR_INVAL;
  }
  return shoal_gpu_ops.launch(func, grid, block, args, shmem, stream);
}

/* ---- public API ---- */
int shmemx_gpu_available(void) { return shoal_g.state == 1 && G.ready; }

int shmemx_gpu_device(void) { return shmemx_gpu_available() ? G.dev : -1; }

int shmemx_device_state_get(void *buf, size_t len) {
  SHOAL_CHECK_INIT("shmemx_device_state_get");
  if (!G.ready || !buf || len != sizeof(shmemx_device_state_t) || shoal_g.npes > SHMEMX_DEVICE_MAX_PES) return -1;
  memcpy(buf, &G.st, sizeof G.st);
  return 0;
}

void shoal_gpu_team_set(int slot, int wstart, int wstride, int size, int rank) {
  if (!G.ready || slot < 0 || slot >= SHOAL_GPU_TEAM_ROWS) return;
  int32_t e[4] = {wstart, wstride, size, rank};
  if (shoal_gpu_ops.memcpy(G.base + G.lay.teams + (size_t)slot * sizeof e, e, sizeof e, G.stream) ||
      shoal_gpu_ops.stream_sync(G.stream))
    shoal_warn("shmem_team_split: cannot copy the team to the GPU: shmem_team_my_pe in kernels will not see it");
}

/* The fills of the translation units that use the device API (registered from their static initializers, before
 * main or at dlopen): run once the device state exists. A unit is required (the default of
 * shmemx_device_unit_register) unless it registered with SHMEMX_DEVICE_UNIT_OPTIONAL or through the older
 * shmemx_device_state_register: a process with a required unit and no device state ends the job at shmem_init, one
 * line naming the cause, instead of running its kernels on nothing (issue 32). */
typedef struct unit {
  int (*fill)(void);                 /* shmemx_device_state_register (older headers): reports its own failure */
  int (*fill_why)(char *, size_t);   /* shmemx_device_unit_register: writes why it failed */
  unsigned flags;
} unit_t;
static struct {
  pthread_mutex_t lock;
  unit_t *u;
  size_t n, cap;
  bool checked; /* shmem_init has checked and filled the units: a later one is checked and filled at once */
} units = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Why this process cannot run a required unit's kernels, or NULL when it can. */
static const char *no_state_why(void) {
  if (!G.ready) return G.why[0] ? G.why : "no device symmetric heap";
  if (G.alloc.size == 0) return "SHOAL_DEVICE_SYMMETRIC_SIZE is 0: no device symmetric heap for its buffers";
  if (shoal_g.npes > SHMEMX_DEVICE_MAX_PES) {
    snprintf(G.why, sizeof G.why, "the job has %d PEs and the device API addresses at most %d", shoal_g.npes,
             SHMEMX_DEVICE_MAX_PES);
    return G.why;
  }
  return NULL;
}

/* Fill unit u, or end the job: one line naming routine, the PE and the cause. Called with units.lock held. */
static void unit_fill(const char *routine, const unit_t *u) {
  const char *why = no_state_why();
  if (why) {
    if (u->flags & SHMEMX_DEVICE_UNIT_OPTIONAL && !G.ready) return; /* it checks shmemx_gpu_available() itself */
    shoal_fatal(routine, "this program uses the device API (<shoal/shmem_device.cuh>) but %s: ending the job", why);
  }
  char msg[256] = "";
  int rc = u->fill_why ? u->fill_why(msg, sizeof msg) : u->fill();
  if (rc)
    shoal_fatal(routine, "this program uses the device API (<shoal/shmem_device.cuh>) but its device state could not "
                "be copied to the GPU (%s): ending the job", msg[0] ? msg : "the line above says why");
}

static int unit_add(const char *late, unit_t u) {
  pthread_mutex_lock(&units.lock);
  if (units.n == units.cap) {
    size_t cap = units.cap ? 2 * units.cap : 16;
    unit_t *v = realloc(units.u, cap * sizeof *v);
    if (!v) {
      pthread_mutex_unlock(&units.lock);
      return -1;
    }
    units.u = v;
    units.cap = cap;
  }
  units.u[units.n++] = u;
  if (units.checked && shoal_g.state == 1) unit_fill(late, &u);
  pthread_mutex_unlock(&units.lock);
  return 0;
}

/* Programs built with the headers before shmemx_device_unit_register: their units were filled only where a GPU was
 * in use and never ended the job without one (such a program checks shmemx_gpu_available() or runs on GPU nodes
 * only), so they stay optional; only a rebuilt program's unit is required by default. */
int shmemx_device_state_register(int (*fill)(void)) {
  return fill ? unit_add("shmemx_device_state_register (a unit loaded after init)",
                         (unit_t){.fill = fill, .flags = SHMEMX_DEVICE_UNIT_OPTIONAL})
              : -1;
}

int shmemx_device_unit_register(int (*fill)(char *why, size_t len), unsigned flags) {
  if (!fill || flags & ~SHMEMX_DEVICE_UNIT_OPTIONAL) return -1;
  return unit_add("shmemx_device_unit_register (a unit loaded after init)", (unit_t){.fill_why = fill, .flags = flags});
}

static void units_check(const char *routine) {
  pthread_mutex_lock(&units.lock);
  for (size_t i = 0; i < units.n; i++) unit_fill(routine, &units.u[i]);
  units.checked = true;
  pthread_mutex_unlock(&units.lock);
}

void shmemx_device_heap_info(size_t *total, size_t *free_largest) {
  SHOAL_CHECK_INIT("shmemx_device_heap_info");
  if (total) *total = G.ready ? G.alloc.size : 0;
  if (free_largest) *free_largest = G.ready ? shoal_alloc_largest_free(&G.alloc) : 0;
}

/* The address of sym's instance on pe in this process: the IPC mapping for the device heap, the host mapping for
 * the host heap and static data (fatal for anything else, or for a range past the end of its space). */
static void *remote_addr(const char *routine, const void *sym, size_t n, int pe, const char *arg) {
  size_t off;
  shoal_space_t *s = shoal_space_find(sym, n, &off);
  if (s == &shoal_g.space[SHOAL_SPACE_DEVICE]) return G.peer[pe] + off;
  void *r = shoal_xlate(sym, n, pe, routine, arg);
  if (!r) shoal_fatal(routine, "%s %p: %s cannot be reached by the GPU copy engine", arg, sym, s ? s->name : "?");
  return r;
}

static void on_stream_copy(const char *routine, bool put, void *dest, const void *source, size_t n, int pe,
                           void *stream) {
  SHOAL_CHECK_INIT(routine);
  SHOAL_CHECK_PE(routine, pe);
  if (!n) return;
  if (!G.ready || !G.peer[pe]) { /* no GPU; or a PE of another node: the stream's work first, then the host path */
    if (G.ready && shoal_gpu_ops.stream_sync(stream))
      shoal_fatal(routine, "cannot synchronize stream %p before a copy %s PE %d", stream, put ? "to" : "from", pe);
    (put ? shoal_rma_put : shoal_rma_get)(routine, dest, source, n, pe);
    return;
  }
  void *d = put ? remote_addr(routine, dest, n, pe, "dest") : dest;
  const void *s = put ? source : remote_addr(routine, source, n, pe, "source");
  if (shoal_gpu_ops.memcpy(d, s, n, stream))
    shoal_fatal(routine, "cannot enqueue a copy of %zu bytes %s PE %d", n, put ? "to" : "from", pe);
}

void shmemx_putmem_on_stream(void *dest, const void *source, size_t nelems, int pe, void *stream) {
  on_stream_copy("shmemx_putmem_on_stream", true, dest, source, nelems, pe, stream);
}

void shmemx_getmem_on_stream(void *dest, const void *source, size_t nelems, int pe, void *stream) {
  on_stream_copy("shmemx_getmem_on_stream", false, dest, source, nelems, pe, stream);
}

/* Copies enqueued on a stream complete in stream order, and a completed copy is visible at its target: nothing to
 * add. Without a GPU the host forms completed already. With PEs of other nodes the stream's kernels may have posted
 * to the device proxy, and the far puts above return before their target has them (the staged path completes at
 * quiet): the stream is drained, then the proxy, then the default context (host-blocking). */
static void far_stream_drain(const char *routine, void *stream) {
  if (shoal_gpu_ops.stream_sync(stream)) shoal_fatal(routine, "cannot synchronize stream %p", stream);
  shoal_proxy_drain(routine, true);
  shoal_comm_quiet(routine, NULL);
}

void shmemx_quiet_on_stream(void *stream) {
  SHOAL_CHECK_INIT("shmemx_quiet_on_stream");
  if (G.ready && G.any_far) far_stream_drain("shmemx_quiet_on_stream", stream);
}

void shmemx_barrier_all_on_stream(void *stream) {
  SHOAL_CHECK_INIT("shmemx_barrier_all_on_stream");
  if (G.ready && !G.any_far) { /* the barrier kernel stores into every PE's heap through the peer table */
    shoal_status_t rc = shoal_gpu_ops.barrier_on_stream(stream);
    if (rc == SHOAL_OK) return;
    if (rc != SHOAL_ERR_NOSYS || shoal_gpu_ops.stream_sync(stream))
      shoal_fatal("shmemx_barrier_all_on_stream", "cannot enqueue the barrier on stream %p", stream);
  }
  if (G.ready && G.any_far) far_stream_drain("shmemx_barrier_all_on_stream", stream);
  shoal_barrier_all_hook(); /* no barrier kernel: the stream is drained (and the proxy), then the host barrier */
}
