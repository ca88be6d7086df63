/* team_split.c - the team operations that run collectives (spec 9.4): shmem_team_split_strided, shmem_team_split_2d
 * and shmem_team_destroy, above the collectives they call; the teams' data, pool, slots and queries: team.c. */
#include "coll_core.h"
#include "ctx.h"
#include "heap_gpu.h"
#include "gpu/coll_gpu.h"

#define world_obj (shoal_team_pool[0]) /* as in team.c: pool entry 0 is WORLD */

#define TOP_BIT ((uint64_t)1 << 63)

/* ---- creation ---- */

static void u64_max(void *o, const void *a, const void *b, size_t n) {
  uint64_t *x = o;
  const uint64_t *y = a, *z = b;
  for (size_t i = 0; i < n; i++) x[i] = y[i] > z[i] ? y[i] : z[i];
}

typedef struct {
  int start, stride, size; /* parent team numbers start + i * stride, i < size; size 0: not a member */
  const shmem_team_config_t *config;
  long mask;
  shmem_team_t *out;
} team_spec_t;

/* Collective over p: create nnew teams (spec[k] describes the caller's k-th new team). Every new team takes a slot
 * that no member of p holds: one max-reduction over p of the slot table (bit 63: held; low bits: highest signal
 * value used), so members agree on the slots and start above every stale value in their flag cells. */
static int team_create(shoal_team_t *p, const char *routine, int nnew, team_spec_t *spec) {
  for (int s = 0; s < SHOAL_TEAM_SLOTS; s++)
    shoal_team_split_buf[s] = shoal_team_slot_hw[s] | (shoal_team_slot_used[s] ? TOP_BIT : 0);
  shoal_coll_reduce(p, shoal_team_split_buf, shoal_team_split_buf, SHOAL_TEAM_SLOTS, sizeof(uint64_t), u64_max,
                    routine);
  int chosen[2], nfound = 0;
  for (int s = 2; s < SHOAL_TEAM_SLOTS && nfound < nnew; s++)
    if (!(shoal_team_split_buf[s] & TOP_BIT)) chosen[nfound++] = s;
  for (int k = 0; k < nnew; k++) *spec[k].out = SHMEM_TEAM_INVALID;
  if (nfound < nnew) { /* the same on every PE of the parent; the nonzero return says it, SHMEM_DEBUG says why */
    if (shoal_env.debug && p->rank == 0)
      shoal_warn("%s: no free team slot: at most %d teams sharing a PE with this parent team may exist at once "
                 "(destroy unused teams)", routine, SHOAL_TEAM_SLOTS - 2);
    return -1;
  }
  shoal_team_t *made[2] = {NULL, NULL};
  for (int k = 0; k < nnew; k++) {
    team_spec_t *sp = &spec[k];
    if (!sp->size) continue;
    int myrank = (p->rank - sp->start) / (sp->stride ? sp->stride : 1);
    shoal_team_t *t = shoal_team_alloc();
    int wstart = p->world[sp->start], wstride = p->wstride * sp->stride;
    if (!t || shoal_team_setup(t, chosen[k], wstart, wstride, sp->size, myrank, shoal_team_split_buf[chosen[k]])) {
      /* Cannot happen on one PE only without the others knowing; out of memory here is fatal. */
      shoal_fatal(routine, "out of memory for a %d-PE team", sp->size);
    }
    if (sp->config && (sp->mask & SHMEM_TEAM_NUM_CONTEXTS)) t->config.num_contexts = sp->config->num_contexts;
    t->config_mask = sp->mask;
    shoal_team_slot_used[chosen[k]] = true;
    *sp->out = t;
    made[k] = t;
    shoal_gpu_team_set((int)(t - shoal_team_pool), t->wstart, t->wstride, t->size, t->rank);
    SHOAL_DEBUG(SHOAL_SUB_COLL, "%s: team %p: slot %d, %d PEs (world %d + i*%d), my number %d", routine, (void *)t,
                chosen[k], t->size, t->wstart, t->wstride, t->rank);
  }
  shoal_coll_gpu_team_made(p, made, nnew, routine); /* collective over p, as the split */
  return 0;
}

static void check_config(const char *routine, const char *arg, const shmem_team_config_t *config, long mask) {
  if (mask & ~SHMEM_TEAM_NUM_CONTEXTS)
    shoal_fatal(routine, "%s_mask %#lx has bits other than SHMEM_TEAM_NUM_CONTEXTS", arg, mask);
  if (mask && !config) shoal_fatal(routine, "%s: NULL with %s_mask %#lx", arg, arg, mask);
  if (mask && config->num_contexts < 0)
    shoal_fatal(routine, "%s: num_contexts %d must be >= 0", arg, config->num_contexts);
}

int shmem_team_split_strided(shmem_team_t parent_team, int start, int stride, int size,
                             const shmem_team_config_t *config, long config_mask, shmem_team_t *new_team) {
  static const char routine[] = "shmem_team_split_strided";
  SHOAL_CHECK_INIT(routine);
  if (!new_team) shoal_fatal(routine, "new_team: NULL");
  *new_team = SHMEM_TEAM_INVALID;
  if (parent_team == SHMEM_TEAM_INVALID) return -1;
  shoal_team_t *p = shoal_team_get(parent_team, routine);
  check_config(routine, "config", config, config_mask);
  shoal_coll_debug_check(p, routine, "start", (uint64_t)start, "stride", (uint64_t)stride);
  shoal_coll_debug_check(p, routine, "size", (uint64_t)size, NULL, 0);
  /* Every PE of the parent passes the same triplet, so an invalid one is refused everywhere without talking. */
  long long last = start + (long long)stride * (size - 1);
  if (size < 1 || size > p->size || start < 0 || start >= p->size || last < 0 || last >= p->size ||
      (stride == 0 && size != 1)) {
    if (shoal_env.debug)
      shoal_warn("%s: invalid triplet (start %d, stride %d, size %d) for a parent team of %d PEs", routine, start,
                 stride, size, p->size);
    return -1;
  }
  int d = p->rank - start;
  bool member = stride ? d % stride == 0 && d / stride >= 0 && d / stride < size : d == 0;
  team_spec_t spec = {start, stride, member ? size : 0, config, config_mask, new_team};
  return team_create(p, routine, 1, &spec);
}

int shmem_team_split_2d(shmem_team_t parent_team, int xrange, const shmem_team_config_t *xaxis_config,
                        long xaxis_mask, shmem_team_t *xaxis_team, const shmem_team_config_t *yaxis_config,
                        long yaxis_mask, shmem_team_t *yaxis_team) {
  static const char routine[] = "shmem_team_split_2d";
  SHOAL_CHECK_INIT(routine);
  if (!xaxis_team) shoal_fatal(routine, "xaxis_team: NULL");
  if (!yaxis_team) shoal_fatal(routine, "yaxis_team: NULL");
  *xaxis_team = *yaxis_team = SHMEM_TEAM_INVALID;
  if (parent_team == SHMEM_TEAM_INVALID) return -1;
  shoal_team_t *p = shoal_team_get(parent_team, routine);
  check_config(routine, "xaxis_config", xaxis_config, xaxis_mask);
  check_config(routine, "yaxis_config", yaxis_config, yaxis_mask);
  shoal_coll_debug_check(p, routine, "xrange", (uint64_t)xrange, NULL, 0);
  if (xrange < 1) {
    if (shoal_env.debug) shoal_warn("%s: xrange %d must be >= 1", routine, xrange);
    return -1;
  }
  int n = p->size, xr = xrange > n ? n : xrange, x = p->rank % xr, y = p->rank / xr;
  int xsize = n - y * xr < xr ? n - y * xr : xr; /* the last row may be short */
  int ysize = (n - 1 - x) / xr + 1;
  team_spec_t spec[2] = {{y * xr, 1, xsize, xaxis_config, xaxis_mask, xaxis_team},
                         {x, xr, ysize, yaxis_config, yaxis_mask, yaxis_team}};
  return team_create(p, routine, 2, spec);
}

void shmem_team_destroy(shmem_team_t team) {
  static const char routine[] = "shmem_team_destroy";
  SHOAL_CHECK_INIT(routine);
  if (team == SHMEM_TEAM_INVALID) return;
  shoal_team_t *t = shoal_team_get(team, routine);
  if (t->predefined)
    shoal_fatal(routine, "team: %s is predefined and cannot be destroyed",
                t == &world_obj ? "SHMEM_TEAM_WORLD" : "SHMEM_TEAM_SHARED");
  shoal_ctx_destroy_team(team);
  shoal_coll_gpu_forget_slot(t->slot);
  shoal_coll_stage_drain(t); /* a later team on the slot must not overwrite what a slow member still reads */
  shoal_coll_scratch_drain(t); /* nor a leader's scratch half that its members still copy out of */
  /* No other synchronization: every signal a member sends is consumed before its receiver leaves the collective (or,
   * staging's "done", by the drain above), and a later team on this slot starts above t->seq (shoal_team_slot_hw), so
   * nothing stale can be mistaken for a new signal. */
  shoal_team_slot_used[t->slot] = false;
  if (t->seq > shoal_team_slot_hw[t->slot]) shoal_team_slot_hw[t->slot] = t->seq;
  t->magic = SHOAL_TEAM_DEAD;
  shoal_gpu_team_set((int)(t - shoal_team_pool), 0, 0, 0, 0);
  shoal_team_free(t);
}
