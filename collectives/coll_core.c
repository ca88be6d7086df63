/* coll_core.c - what every collective shares: the all-to-all exchange, the barrier, per-call delta tables, argument
 * checks, the SHMEM_DEBUG cross-PE argument check, and algorithm selection from SHOAL_COLL_<FAMILY>_ALGO. */
#include "coll_core.h"
#include "xlate.h" /* shoal_space_find, shoal_xlate_slow */

void shoal_coll_exchange(shoal_team_t *t, uint64_t v) {
  int n = t->size, me = t->rank;
  for (int k = 1; k < n; k++) shoal_coll_post(t, me + k < n ? me + k : me + k - n, v);
  for (int k = 1; k < n; k++) shoal_coll_wait(t, me - k >= 0 ? me - k : me - k + n, v);
}

void shoal_coll_post_far(const shoal_team_t *t, int r, uint64_t v) {
  if (!t->aset) {
    shoal_tl_signal("collective", t->world[r], (void *)t->rflag[r], v);
    return;
  }
  shoal_tl_fence("collective");
  shoal_tl_amo("collective", t->world[r], (void *)t->rflag[r], 8, SHOAL_TL_AMO_ADD, 1, 0);
}

/* The barrier algorithms (the entry points: coll_barrier.c):
 *   dissemination (default): round k signals member (me + 2^k) % n and waits for (me - 2^k) % n; ceil(log2 n)
 *     rounds, each sender's signals land in a distinct cell of the receiver.
 *   linear: every member signals member 0, which then releases every member (2 (n - 1) signals through one PE).
 *   hierarchical (default for teams on several nodes with two or more PEs on some node): members signal their
 *     node's leader through shared memory, the leaders run the dissemination barrier among themselves, then release
 *     their node; ceil(log2 nodes) messages between nodes per leader, none for the other members (flat
 *     dissemination sends up to ceil(log2 n) from every PE). As SOS's and OSHMEM's node-aware barriers. */
static void barrier_hier(shoal_team_t *t, uint64_t v) {
  if (t->lead_idx < 0) {
    shoal_coll_post(t, t->mates[0], v);
    shoal_coll_wait(t, t->mates[0], v);
    return;
  }
  for (int k = 0; k < t->nmates; k++) shoal_coll_wait(t, t->mates[k], v);
  int n = t->nlead, me = t->lead_idx;
  for (int d = 1; d < n; d <<= 1) {
    shoal_coll_post(t, t->lead[me + d < n ? me + d : me + d - n], v);
    shoal_coll_wait(t, t->lead[me - d >= 0 ? me - d : me - d + n], v);
  }
  for (int k = 0; k < t->nmates; k++) shoal_coll_post(t, t->mates[k], v);
}

void shoal_coll_barrier(shoal_team_t *t, const char *routine) {
  int n = t->size, me = t->rank;
  if (n == 1) {
    atomic_thread_fence(memory_order_seq_cst);
    return;
  }
  uint64_t v = ++t->seq;
  int algo = shoal_coll_algo(SHOAL_COLL_BARRIER, routine);
  if (SHOAL_UNLIKELY(t->hier) && (algo == SHOAL_ALGO_AUTO || algo == SHOAL_BARRIER_HIER)) {
    barrier_hier(t, v);
    return;
  }
  if (algo == SHOAL_BARRIER_LINEAR) {
    if (me == 0) {
      for (int s = 1; s < n; s++) shoal_coll_wait(t, s, v);
      for (int r = 1; r < n; r++) shoal_coll_post(t, r, v);
    } else {
      shoal_coll_post(t, 0, v);
      shoal_coll_wait(t, 0, v);
    }
    return;
  }
  for (int d = 1; d < n; d <<= 1) {
    shoal_coll_post(t, me + d < n ? me + d : me + d - n, v);
    shoal_coll_wait(t, me - d >= 0 ? me - d : me - d + n, v);
  }
}

char *shoal_coll_stage(shoal_team_t *t, bool owner, uint64_t done, size_t nb) {
  int need = nb ? (int)((nb + SHOAL_STAGE_SLOT - 1) / SHOAL_STAGE_SLOT) : 1, pos = t->stage_pos, n = t->size;
  /* Deep run-ahead for rounds past SHOAL_STAGE_DEEP_MAX only where members may not be scheduled: with a PE per
   * core, runs of half the staging (two rounds in flight) measured fastest there (a 64-round ring: 2-8 KiB
   * broadcasts 1.5-2x slower at 2 PEs, 512 B 1.7x), while rounds of up to 128 B gained 1.25-1.35x from it. */
  if (!shoal_coll_oversubscribed && nb > SHOAL_STAGE_DEEP_MAX) need = t->stage_slots / 2;
  if (pos + need > t->stage_slots) pos = 0;
  t->stage_pos = pos + need;
  if (owner) {
    uint64_t last = 0; /* values only grow: the newest of the run's rounds stands for all of them */
    for (int k = pos; k < pos + need; k++) {
      if (t->stage_done[k] > last) last = t->stage_done[k];
      t->stage_done[k] = done;
    }
    for (int k = 1; k < n && last; k++) shoal_coll_wait(t, t->rank + k < n ? t->rank + k : t->rank + k - n, last);
  }
  return t->stage + (size_t)pos * SHOAL_STAGE_SLOT;
}

void shoal_coll_stage_drain(shoal_team_t *t) {
  int n = t->size, me = t->rank;
  uint64_t last = 0;
  for (size_t k = 0; k < SHOAL_STAGE_SLOTS; k++) {
    int q = t->stage_root[k];
    if (t->all_far && q != me) { /* a member (bcast_far): post what that root may not have been told yet */
      if (q >= 0 && t->stage_done[k] > (t->far_post_root == q ? t->far_post_val : 0)) {
        shoal_coll_post(t, q, t->seq);
        t->far_post_root = q;
        t->far_post_val = t->seq;
      }
      continue;
    }
    if (t->stage_done[k] > last) last = t->stage_done[k];
  }
  for (int k = 1; k < n && last; k++) shoal_coll_wait(t, me + k < n ? me + k : me + k - n, last);
}

long shoal_coll_test_copyout_delay_ns;
long shoal_coll_test_sizes_delay_ns;

void shoal_coll_scratch_drain(shoal_team_t *t) {
  if (!t->hier || !t->round || t->lead_read != t->round) return;
  uint64_t v = ++t->seq;
  if (t->lead_idx < 0)
    shoal_coll_post(t, t->mates[0], v);
  else
    for (int k = 0; k < t->nmates; k++) shoal_coll_wait(t, t->mates[k], v);
}

void shoal_coll_hier_member(shoal_team_t *t, int l, uint64_t v) {
  shoal_coll_post(t, l, v);
  shoal_coll_wait(t, l, v);
  if (SHOAL_UNLIKELY(shoal_coll_test_copyout_delay_ns))
    nanosleep(&(struct timespec){.tv_nsec = shoal_coll_test_copyout_delay_ns}, NULL);
}

void shoal_coll_hier_gathered(shoal_team_t *t, uint64_t v) {
  for (int k = 0; k < t->nmates; k++) shoal_coll_wait(t, t->mates[k], v);
}

void shoal_coll_hier_exchanged(shoal_team_t *t, uint64_t v) {
  int nl = t->nlead, li = t->lead_idx;
  for (int k = 1; k < nl; k++) shoal_coll_post(t, t->lead[li + k < nl ? li + k : li + k - nl], v);
  for (int k = 1; k < nl; k++) shoal_coll_wait(t, t->lead[li - k >= 0 ? li - k : li - k + nl], v);
  for (int k = 0; k < t->nmates; k++) shoal_coll_post(t, t->mates[k], v);
}

void shoal_coll_scratch_push(shoal_team_t *t, char *dest, size_t dblk, ptrdiff_t dst, const char *src, size_t sblk,
                             size_t nelems, size_t esize, const char *routine) {
  int n = t->size, me = t->rank;
  size_t nb = nelems * esize, per = shoal_coll_scratch_slot(t);
  char *h = t->scratch + (t->round++ & 1) * (t->scratch_size / 2);
  uint64_t v = ++t->seq;
  for (int k = 1; k < n; k++) {
    int r = me + k < n ? me + k : me + k - n;
    shoal_coll_put_post(t, r, h + (size_t)me * per + t->delta[r], src + (size_t)r * sblk, nb, v, routine);
  }
  shoal_copy_strided(dest + (size_t)me * dblk, src + (size_t)me * sblk, nelems, esize, dst, 1);
  for (int k = 1; k < n; k++) {
    int s = me - k >= 0 ? me - k : me - k + n;
    shoal_coll_wait(t, s, v);
    shoal_copy_strided(dest + (size_t)s * dblk, h + (size_t)s * per, nelems, esize, dst, 1);
  }
}

const ptrdiff_t *shoal_coll_deltas_slow(shoal_team_t *t, const void *p, size_t span, int k, const char *routine,
                                        const char *arg) {
  if (!span) return t->delta; /* nothing is accessed */
  shoal_space_t *s = shoal_space_find(p, span, NULL);
  if (!s) shoal_xlate_slow(p, span, shoal_g.me, routine, arg); /* fatal, with the reason */
  if (!s->delta || s->device)
    shoal_fatal(routine, "%s %p: host collectives need host memory (it is in %s)", arg, p, s->name);
  ptrdiff_t *d = t->tdelta[k];
  for (int r = 0; r < t->size; r++) d[r] = s->delta[t->world[r]];
  return d;
}

_Noreturn void shoal_coll_overlap_fail(const char *routine, const void *dest, size_t nd, const void *src, size_t ns,
                                       bool allow_same) {
  shoal_fatal(routine, "dest: [%p, +%zu) overlaps source [%p, +%zu)%s", dest, nd, src, ns,
              allow_same ? " (only identical buffers, in place, are allowed)" : "");
}

_Noreturn void shoal_coll_device_fail(const char *routine, const char *arg, const void *p) {
  shoal_fatal(routine, "%s: %p is on the device heap; this collective runs on the host only (GPU kernels exist for "
              "fcollect, contiguous alltoall and broadcast)", arg, p);
}

_Noreturn void shoal_coll_bytes_fail(const char *routine, size_t nelems, size_t size) {
  shoal_fatal(routine, "nelems: %zu elements of %zu bytes overflow", nelems, size);
}

extern _Atomic uint64_t *shoal_coll_dbg; /* team.c: 3 symmetric cells */

static uint64_t name_hash(const char *s) {
  uint64_t h = 1469598103934665603ull;
  while (*s) h = (h ^ (unsigned char)*s++) * 1099511628211ull;
  return h;
}

/* Publish (routine, a, b), barrier, compare with every member's, barrier: the cells are free again only after the
 * second barrier, so one set of cells per PE serves every team. */
void shoal_coll_debug_check_(shoal_team_t *t, const char *routine, const char *what_a, uint64_t a,
                             const char *what_b, uint64_t b) {
  uint64_t mine[3] = {name_hash(routine), a, b};
  for (int i = 0; i < 3; i++) atomic_store_explicit(&shoal_coll_dbg[i], mine[i], memory_order_relaxed);
  shoal_coll_barrier(t, routine);
  for (int r = 0; r < t->size; r++) {
    _Atomic uint64_t *c = (_Atomic uint64_t *)((char *)shoal_coll_dbg + t->delta[r]);
    uint64_t theirs[3];
    for (int i = 0; i < 3; i++) theirs[i] = shoal_coll_load(t, r, &c[i]);
    if (theirs[0] != mine[0])
      shoal_fatal(routine, "team: PE %d of the team (world PE %d) is in a different collective at the same time",
                  r, t->world[r]);
    if (theirs[1] != a)
      shoal_fatal(routine, "%s: %lld here but %lld on PE %d of the team (world PE %d): it must be the same on every "
                  "PE", what_a, (long long)a, (long long)theirs[1], r, t->world[r]);
    if (what_b && theirs[2] != b)
      shoal_fatal(routine, "%s: %lld here but %lld on PE %d of the team (world PE %d): it must be the same on every "
                  "PE", what_b, (long long)b, (long long)theirs[2], r, t->world[r]);
  }
  shoal_coll_barrier(t, routine);
}

/* ---- algorithm selection ---- */
/* The names are the env table's (runtime/env.c), which checked the value at init: the position of a name there is
 * its enum value. */
static const char *const family_env[SHOAL_COLL_NFAMILY] = {
  "SHOAL_COLL_BARRIER_ALGO", "SHOAL_COLL_BCAST_ALGO", "SHOAL_COLL_FCOLLECT_ALGO",
  "SHOAL_COLL_ALLTOALL_ALGO", "SHOAL_COLL_REDUCE_ALGO", "SHOAL_COLL_COLLECT_ALGO"};
int shoal_coll_algo_cache[SHOAL_COLL_NFAMILY] = {-1, -1, -1, -1, -1, -1};

int shoal_coll_algo_parse(enum shoal_coll_family f, const char *routine) {
  int a = shoal_env_choice(family_env[f]);
  if (a < 0) shoal_fatal(routine, "%s: not in the environment table (a bug)", family_env[f]);
  SHOAL_DEBUG(SHOAL_SUB_COLL, "%s: %s=%s", routine, family_env[f], shoal_env.coll_algo[f]);
  return shoal_coll_algo_cache[f] = a;
}
