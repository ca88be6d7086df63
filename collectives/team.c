/* team.c - teams (spec 9.4): the predefined teams, active sets, queries, team contexts, and the team slots that hold
 * every team's flags and scratch (model in coll.h; the struct and handles in team.h; splits and destroy, which run
 * collectives: team_split.c). */
#include "team.h"
#include "xlate.h" /* shoal_space_find, shoal_xlate_slow: a pSync's space */
#include "ctx.h"
#include "heap_gpu.h"

#include <stdlib.h>
#include <unistd.h>

/* SHMEM_TEAM_WORLD and SHMEM_TEAM_SHARED are stored in the runtime (state.c: contexts compare with WORLD); this
 * module sets them at init. */

shoal_team_t shoal_team_pool[SHOAL_TEAM_POOL]; /* every team object of this PE (coll.h) */
#define world_obj (shoal_team_pool[0])
#define shared_obj (shoal_team_pool[1])
static unsigned pool_next = 2; /* where the round-robin search for a free entry starts */

/* Team slots: per slot, the flag cells (one per possible sender), the pub cell, and the scratch. */
static struct {
  _Atomic uint64_t *flags, *pub;
  char *scratch, *stage;
  size_t scratch_size, stage_size;
} slots[SHOAL_TEAM_SLOTS];
bool shoal_team_slot_used[SHOAL_TEAM_SLOTS];   /* a team of this PE holds the slot */
uint64_t shoal_team_slot_hw[SHOAL_TEAM_SLOTS]; /* highest signal value a team of this PE used in the slot */
static int flag_stride;                        /* uint64 units between cells: a cache line when affordable */
uint64_t *shoal_team_split_buf;                /* symmetric: the slot table reduced over the parent at a split */
_Atomic uint64_t *shoal_coll_dbg;              /* symmetric: SHMEM_DEBUG argument checks (coll_core.c) */
bool shoal_coll_oversubscribed;
size_t shoal_coll_stream_min = (size_t)16 << 20;

/* Arrays of a team for n members, in one block. */
static shoal_status_t team_arrays(shoal_team_t *t, int n) {
  if (t->cap >= n) return SHOAL_OK;
  free(t->delta); /* the block */
  size_t un = (size_t)n;
  char *b = malloc(un * (6 * sizeof(int) + 4 * sizeof(ptrdiff_t) + sizeof(void *)) + (un + 1) * sizeof(size_t) +
                   sizeof(int));
  if (!b) return SHOAL_ERR_NOMEM;
  t->delta = (ptrdiff_t *)b;
  t->adelta = t->delta + un; /* an active set's cdelta */
  t->tdelta[0] = t->adelta + un;
  t->tdelta[1] = t->tdelta[0] + un;
  t->rflag = (_Atomic uint64_t **)(t->tdelta[1] + un);
  t->offs = (size_t *)(t->rflag + un);
  t->world = (int *)(t->offs + un + 1);
  t->lead = t->world + un;
  t->mates = t->lead + un;
  t->lnode = t->mates + un;
  t->npos = t->lnode + un;
  t->nstart = t->npos + un; /* un + 1 */
  t->cap = n;
  return SHOAL_OK;
}

/* The nodes of t's members (coll.h): set once its members and t->remote are known. A team whose members are all on
 * one node, or each on its own, has nothing to gain from them (hier false). */
static _Thread_local int *hier_buf, hier_cap; /* team_hier's table, kept per thread: active sets come there at
                                                 every cache miss */
static shoal_status_t team_hier(shoal_team_t *t) {
  t->hier = t->pow2_runs = false;
  t->nlead = t->nmates = 0;
  t->lead_idx = -1;
  if (!t->remote || !shoal_g.node_of) return SHOAL_OK;
  int *leader_of = hier_buf; /* node -> its index in lead + 1 */
  if (hier_cap < shoal_g.npes) {
    free(hier_buf);
    hier_cap = 0;
    if (!(leader_of = hier_buf = malloc((size_t)shoal_g.npes * sizeof *leader_of))) return SHOAL_ERR_NOMEM;
    hier_cap = shoal_g.npes;
  }
  memset(leader_of, 0, (size_t)shoal_g.npes * sizeof *leader_of);
  for (int r = 0; r < t->size; r++) {
    int node = shoal_g.node_of[t->world[r]];
    if (!leader_of[node]) {
      leader_of[node] = t->nlead + 1;
      if (r == t->rank) t->lead_idx = t->nlead;
      t->lead[t->nlead++] = r;
    }
    t->lnode[r] = leader_of[node] - 1;
  }
  int mynode = shoal_g.node_of[t->world[t->rank]];
  if (t->lead_idx < 0) {
    t->mates[t->nmates++] = t->lead[leader_of[mynode] - 1];
  } else {
    for (int r = 0; r < t->size; r++)
      if (r != t->rank && shoal_g.node_of[t->world[r]] == mynode) t->mates[t->nmates++] = r;
  }
  /* Node order (the hierarchical fcollect and alltoall): lead[0]'s node's members by rank, then lead[1]'s, ...;
   * leader_of is done with, so it counts each node's members placed so far. */
  for (int q = 0; q <= t->nlead; q++) t->nstart[q] = 0;
  for (int r = 0; r < t->size; r++) t->nstart[t->lnode[r] + 1]++;
  for (int q = 0; q < t->nlead; q++) t->nstart[q + 1] += t->nstart[q], leader_of[q] = 0;
  for (int r = 0; r < t->size; r++) t->npos[r] = t->nstart[t->lnode[r]] + leader_of[t->lnode[r]]++;
  t->hier = t->nlead > 1 && t->nlead < t->size;
  int run = t->size / t->nlead;
  t->pow2_runs = t->hier && t->size % t->nlead == 0 && !(run & (run - 1));
  for (int r = 0; r < t->size && t->pow2_runs; r++) t->pow2_runs = t->lnode[r] == r / run;
  return SHOAL_OK;
}

void shoal_team_free(shoal_team_t *t) {
  free(t->delta);
  t->delta = NULL;
  t->world = NULL;
  t->cap = 0;
}

/* Fill a team on slot with members wstart + i * wstride; rank is this PE's number. */
shoal_status_t shoal_team_setup(shoal_team_t *t, int slot, int wstart, int wstride, int size, int rank,
                                uint64_t seq) {
  if (team_arrays(t, size)) return SHOAL_ERR_NOMEM;
  t->aset = false;
  t->slot = slot;
  t->size = size;
  t->rank = rank;
  t->wstart = wstart;
  t->wstride = size > 1 ? wstride : 1;
  t->fstride = flag_stride;
  t->flag = slots[slot].flags;
  t->pub = slots[slot].pub;
  t->scratch = slots[slot].scratch;
  t->scratch_size = slots[slot].scratch_size;
  t->stage = slots[slot].stage;
  t->stage_half = slots[slot].stage_size / 2;
  t->stage_slots = (int)(slots[slot].stage_size / SHOAL_STAGE_SLOT);
  t->stage_pos = 0;
  t->seq = seq;
  t->round = t->ncollect = t->lead_read = 0;
  memset(t->stage_done, 0, sizeof t->stage_done);
  for (size_t k = 0; k < SHOAL_STAGE_SLOTS; k++) t->stage_root[k] = -1;
  t->far_post_root = -1;
  t->far_post_val = 0;
  t->far_unposted = 0;
  t->psync = NULL;
  t->cdelta = t->delta;
  t->remote = false;
  for (int r = 0; r < size; r++) {
    t->world[r] = wstart + r * wstride;
    t->delta[r] = shoal_g.heap_delta[t->world[r]]; /* 0 for a member of another node (coll.h) */
    t->rflag[r] = (_Atomic uint64_t *)((char *)(t->flag + (size_t)rank * (size_t)flag_stride) + t->delta[r]);
    t->remote |= !shoal_g.heap_lim[t->world[r]];
  }
  if (team_hier(t)) return SHOAL_ERR_NOMEM;
  /* From the nodes every member has the same table of, not from this PE's mappings: a PE alone on its node sees every
   * other member far while its neighbours do not, and the members must all choose the same algorithm. */
  t->all_far = t->remote && t->nlead == size;
  t->config = (shmem_team_config_t){0};
  t->config_mask = 0;
  t->magic = SHOAL_TEAM_MAGIC;
  return SHOAL_OK;
}

/* The last-level cache of CPU 0, from sysfs (sysconf's figure was 10x too large in a VM here); 32 MiB if unknown. */
static size_t llc_bytes(void) {
  size_t best = 0;
  for (int i = 0; i < 8; i++) {
    char path[96], buf[32];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
    FILE *f = fopen(path, "r");
    if (!f) break;
    char *ok = fgets(buf, sizeof buf, f);
    fclose(f);
    char *end;
    unsigned long long v = ok ? strtoull(buf, &end, 10) : 0;
    if (!v) continue;
    v <<= *end == 'K' ? 10 : *end == 'M' ? 20 : 0;
    if (v > best) best = (size_t)v;
  }
  return best ? best : (size_t)32 << 20;
}

shoal_status_t shoal_team_init(void) {
  int n = shoal_g.npes;
  /* Job-wide, not this PE's affinity: bound PEs see one CPU each, and members choosing differently would hang. */
  shoal_coll_oversubscribed = shoal_g.crowded;
  shoal_coll_stream_min = shoal_env.coll_stream_min ? shoal_env.coll_stream_min : llc_bytes() / 2;
  flag_stride = n <= 64 ? SHOAL_CACHELINE / 8 : 1;
  for (int s = 0; s < SHOAL_TEAM_SLOTS; s++) {
    size_t sz = s == 0 ? 0 /* last, below */ : s == 1 ? SHOAL_TEAM_SCRATCH_SHARED : SHOAL_TEAM_SCRATCH_USER;
    slots[s].flags = shoal_internal_alloc((size_t)n * (size_t)flag_stride * 8, SHOAL_CACHELINE);
    slots[s].pub = shoal_internal_alloc(SHOAL_CACHELINE, SHOAL_CACHELINE);
    slots[s].scratch = sz ? shoal_internal_alloc(sz, SHOAL_CACHELINE) : NULL;
    slots[s].scratch_size = sz;
    slots[s].stage_size = s == 0 ? 0 : s == 1 ? SHOAL_TEAM_STAGE_WORLD : SHOAL_TEAM_STAGE_USER;
    slots[s].stage = s ? shoal_internal_alloc(slots[s].stage_size, SHOAL_CACHELINE) : NULL;
    shoal_team_slot_used[s] = s < 2;
    shoal_team_slot_hw[s] = 0;
  }
  shoal_team_split_buf = shoal_internal_alloc(SHOAL_TEAM_SLOTS * sizeof(uint64_t), SHOAL_CACHELINE);
  shoal_coll_dbg = shoal_internal_alloc(SHOAL_CACHELINE, SHOAL_CACHELINE);
  /* WORLD's scratch and staging last, the larger sizes where the job spans nodes and the area has room for them:
   * every PE has made the same allocations before (their sizes follow npes), and shoal_g.tl is set on every PE or
   * on none. */
  bool far = shoal_g.tl && shoal_g.internal_used + 2 * SHOAL_CACHELINE + SHOAL_TEAM_SCRATCH_WORLD_FAR +
                                   SHOAL_TEAM_STAGE_WORLD_FAR <= SHOAL_INTERNAL_SIZE;
  size_t wsz = far ? SHOAL_TEAM_SCRATCH_WORLD_FAR : SHOAL_TEAM_SCRATCH_WORLD;
  slots[0].scratch = shoal_internal_alloc(wsz, SHOAL_CACHELINE);
  slots[0].scratch_size = wsz;
  slots[0].stage_size = far ? SHOAL_TEAM_STAGE_WORLD_FAR : SHOAL_TEAM_STAGE_WORLD;
  slots[0].stage = shoal_internal_alloc(slots[0].stage_size, SHOAL_CACHELINE);
  /* SHARED: the PEs whose memory this PE maps (spec 9.4.2: shmem_ptr works between them), this node's unless
   * SHOAL_TRANSPORT=ofi. Teams here are arithmetic sequences of world PEs: where the node's PEs are not one (an
   * unusual mapping of ranks to nodes), SHARED is this PE alone, which the specification allows. */
  int sh[3] = {shoal_g.me, 1, 1}, srank = 0, prev = -1, cnt = 0, stride = 0; /* start, stride, size */
  bool seq = true;
  for (int i = 0; i < shoal_g.boot.local_size; i++) {
    int p = shoal_g.boot.local[i];
    if (!shoal_g.heap_lim[p]) continue;
    if (cnt == 1) stride = p - prev;
    else if (cnt > 1 && p - prev != stride) seq = false;
    if (p == shoal_g.me) srank = cnt;
    if (!cnt) sh[0] = p;
    prev = p, cnt++;
  }
  if (seq && cnt > 1) sh[1] = stride, sh[2] = cnt;
  else srank = 0, sh[0] = shoal_g.me;
  if (shoal_team_setup(&world_obj, 0, 0, 1, n, shoal_g.me, 0) ||
      shoal_team_setup(&shared_obj, 1, sh[0], sh[1], sh[2], srank, 0))
    return SHOAL_ERR_NOMEM;
  world_obj.predefined = shared_obj.predefined = true;
  SHMEM_TEAM_WORLD = &world_obj;
  SHMEM_TEAM_SHARED = &shared_obj;
  SHOAL_DEBUG(SHOAL_SUB_COLL, "%d team slots, %zu B of scratch and %zu of staging for WORLD, flag cells %d B apart",
              SHOAL_TEAM_SLOTS, wsz, slots[0].stage_size, flag_stride * 8);
  return SHOAL_OK;
}

_Static_assert(SHOAL_TEAM_POOL <= SHOAL_GPU_TEAM_ROWS, "the device teams table has a row per pool entry");

void shoal_team_gpu_fill(shmemx_device_state_t *st, int32_t (*rows)[4], int nrows) {
  st->team_world = SHMEM_TEAM_WORLD;
  st->team_shared = SHMEM_TEAM_SHARED;
  st->team_pool = (uint64_t)(uintptr_t)shoal_team_pool;
  st->team_stride = sizeof shoal_team_pool[0];
  st->team_count = SHOAL_TEAM_POOL;
  for (int i = 0; i < SHOAL_TEAM_POOL && i < nrows; i++) {
    const shoal_team_t *t = &shoal_team_pool[i];
    if (t->magic == SHOAL_TEAM_MAGIC && !t->aset)
      memcpy(rows[i], (int32_t[4]){t->wstart, t->wstride, t->size, t->rank}, sizeof rows[i]);
  }
}

static _Thread_local shoal_team_t aset_obj; /* per thread: threads may run active-set collectives at once */

/* A pool entry for a new team: never used, or destroyed longest ago. Destroyed entries keep their header (magic
 * SHOAL_TEAM_DEAD) until reused, so a late use of the handle is reported as such. */
shoal_team_t *shoal_team_alloc(void) {
  for (unsigned k = 0; k < SHOAL_TEAM_POOL - 2; k++) {
    unsigned i = 2 + (pool_next - 2 + k) % (SHOAL_TEAM_POOL - 2);
    if (shoal_team_pool[i].magic != SHOAL_TEAM_MAGIC) {
      pool_next = i + 1 < SHOAL_TEAM_POOL ? i + 1 : 2;
      memset(&shoal_team_pool[i], 0, sizeof shoal_team_pool[i]);
      return &shoal_team_pool[i];
    }
  }
  return NULL; /* cannot happen: a PE holds at most SHOAL_TEAM_SLOTS - 2 user teams */
}

void shoal_team_fini(void) {
  for (int i = 0; i < SHOAL_TEAM_POOL; i++) {
    shoal_team_free(&shoal_team_pool[i]);
    shoal_team_pool[i].magic = 0;
  }
  pool_next = 2;
  shoal_team_free(&aset_obj);
  aset_obj.magic = 0;
  free(hier_buf);
  hier_buf = NULL;
  hier_cap = 0;
  aset_obj.psync = NULL;
}

_Noreturn void shoal_team_invalid(const char *routine, shmem_team_t team) {
  if (!team) shoal_fatal(routine, "team: SHMEM_TEAM_INVALID passed where a valid team is required");
  /* Only a handle into the pool is read: anything else may point anywhere. */
  if (shoal_team_in_pool(team) && ((const shoal_team_t *)team)->magic == SHOAL_TEAM_DEAD)
    shoal_fatal(routine, "team %p: used after shmem_team_destroy", (void *)team);
  shoal_fatal(routine, "team %p: not a team handle (never created, or corrupted)", (void *)team);
}

shoal_team_t *shoal_aset_get(int PE_start, int logPE_stride, int PE_size, long *pSync, const char *routine) {
  SHOAL_CHECK_INIT(routine);
  shoal_team_t *t = &aset_obj;
  if (SHOAL_LIKELY(t->magic == SHOAL_TEAM_MAGIC && t->psync == pSync && t->wstart == PE_start &&
                   t->size == PE_size && t->wstride == (1 << (logPE_stride & 31)) && logPE_stride >= 0 &&
                   logPE_stride < 31))
    return t;
  int n = shoal_g.npes, me = shoal_g.me;
  if (PE_start < 0 || PE_start >= n) shoal_fatal(routine, "PE_start %d out of range [0, %d)", PE_start, n);
  if (logPE_stride < 0 || logPE_stride > 30) shoal_fatal(routine, "logPE_stride %d out of range [0, 30]", logPE_stride);
  if (PE_size < 1 || PE_size > SHOAL_ASET_MAX)
    shoal_fatal(routine, "PE_size %d out of range [1, %d] (active sets are limited to SHMEM_SYNC_SIZE - 1 PEs)",
                PE_size, SHOAL_ASET_MAX);
  long long stride = 1LL << logPE_stride, last = PE_start + (PE_size - 1) * stride;
  if (last >= n)
    shoal_fatal(routine, "PE_size: active set (PE_start %d, logPE_stride %d, PE_size %d) ends at PE %lld, past the "
                "last PE %d", PE_start, logPE_stride, PE_size, last, n - 1);
  long long d = me - PE_start;
  if (d < 0 || d % stride || d / stride >= PE_size)
    shoal_fatal(routine, "PE_start: this PE is not in the active set (PE_start %d, logPE_stride %d, PE_size %d)",
                PE_start, logPE_stride, PE_size);
  if (!pSync) shoal_fatal(routine, "pSync: NULL");
  size_t off;
  shoal_space_t *s = shoal_space_find(pSync, SHMEM_SYNC_SIZE * sizeof(long), &off);
  if (!s) shoal_xlate_slow(pSync, SHMEM_SYNC_SIZE * sizeof(long), me, routine, "pSync"); /* fatal, with the reason */
  if (!s->delta || s->device) shoal_fatal(routine, "pSync %p: must be host memory (it is in %s)", (void *)pSync, s->name);
  if (team_arrays(t, PE_size)) shoal_fatal(routine, "out of memory for a %d-PE active set", PE_size);
  t->aset = true;
  t->slot = -1;
  t->size = PE_size;
  t->rank = (int)(d / stride);
  t->wstart = PE_start;
  t->wstride = (int)stride;
  t->fstride = 1;
  t->psync = pSync;
  t->flag = (_Atomic uint64_t *)pSync;
  t->pub = (_Atomic uint64_t *)(pSync + SHMEM_SYNC_SIZE - 1);
  t->scratch = t->stage = NULL;
  t->scratch_size = t->stage_half = 0;
  t->stage_slots = 0;
  t->cdelta = t->adelta;
  t->remote = t->all_far = false; /* all_far: no staging or scratch */
  for (int r = 0; r < PE_size; r++) {
    t->world[r] = PE_start + r * (int)stride;
    t->delta[r] = shoal_g.heap_delta[t->world[r]]; /* 0 for a member of another node (coll.h) */
    t->cdelta[r] = shoal_space_far(s, t->world[r]) ? 0 : s->delta[t->world[r]];
    t->rflag[r] = (_Atomic uint64_t *)((char *)(pSync + t->rank) + t->cdelta[r]);
    t->remote |= !shoal_g.heap_lim[t->world[r]];
  }
  if (team_hier(t)) shoal_fatal(routine, "out of memory for a %d-PE active set", PE_size);
  t->magic = SHOAL_TEAM_MAGIC;
  return t;
}

/* ---- queries ---- */

int shmem_team_my_pe(shmem_team_t team) {
  SHOAL_CHECK_INIT("shmem_team_my_pe");
  if (team == SHMEM_TEAM_INVALID) return -1;
  return shoal_team_get(team, "shmem_team_my_pe")->rank;
}

int shmem_team_n_pes(shmem_team_t team) {
  SHOAL_CHECK_INIT("shmem_team_n_pes");
  if (team == SHMEM_TEAM_INVALID) return -1;
  return shoal_team_get(team, "shmem_team_n_pes")->size;
}

int shmem_team_get_config(shmem_team_t team, long config_mask, shmem_team_config_t *config) {
  SHOAL_CHECK_INIT("shmem_team_get_config");
  if (team == SHMEM_TEAM_INVALID || !config) return -1;
  shoal_team_t *t = shoal_team_get(team, "shmem_team_get_config");
  if (config_mask & SHMEM_TEAM_NUM_CONTEXTS) config->num_contexts = t->config.num_contexts;
  return 0;
}

/* Team number of world PE w, or -1. */
static int team_rank_of(const shoal_team_t *t, int w) {
  long long d = (long long)w - t->wstart;
  if (d % t->wstride) return -1;
  d /= t->wstride;
  return d >= 0 && d < t->size ? (int)d : -1;
}

int shmem_team_translate_pe(shmem_team_t src_team, int src_pe, shmem_team_t dest_team) {
  SHOAL_CHECK_INIT("shmem_team_translate_pe");
  if (src_team == SHMEM_TEAM_INVALID || dest_team == SHMEM_TEAM_INVALID) return -1;
  shoal_team_t *s = shoal_team_get(src_team, "shmem_team_translate_pe");
  shoal_team_t *d = shoal_team_get(dest_team, "shmem_team_translate_pe");
  if (src_pe < 0 || src_pe >= s->size) return -1;
  return team_rank_of(d, s->world[src_pe]);
}

void *shmem_team_ptr(shmem_team_t team, const void *dest, int pe) {
  SHOAL_CHECK_INIT("shmem_team_ptr");
  if (team == SHMEM_TEAM_INVALID) return NULL;
  shoal_team_t *t = shoal_team_get(team, "shmem_team_ptr");
  if (pe < 0 || pe >= t->size) return NULL;
  return shmem_ptr(dest, t->world[pe]);
}

int shmem_team_create_ctx(shmem_team_t team, long options, shmem_ctx_t *ctx) {
  static const char routine[] = "shmem_team_create_ctx";
  SHOAL_CHECK_INIT(routine);
  if (!ctx) shoal_fatal(routine, "ctx: NULL");
  *ctx = SHMEM_CTX_INVALID;
  if (team == SHMEM_TEAM_INVALID) return -1;
  shoal_team_get(team, routine);
  return shoal_ctx_create_team(team, options, ctx);
}
