/* coll_core.h - the host collectives' inline fast paths (members' memory, signals, scratch, per-call checks, the
 * algorithm lookup) and the slow paths and shared steps behind them (coll_core.c); the model: coll.h. */
#ifndef SHOAL_COLL_CORE_H
#define SHOAL_COLL_CORE_H

#include "coll.h"
#include "transport.h"

/* ---- members on other nodes ----
 * A member whose memory this PE does not map (another node, or SHOAL_TRANSPORT=ofi) has delta 0 in every delta table
 * and rflag pointing at this PE's own cell, so that `p + d[r]` is this PE's own symmetric address p, which the
 * transport translates for member r. Every access to a member's memory goes through the helpers below (or
 * shoal_coll_post / shoal_coll_load): memcpy for members of this node, the transport for the others (puts
 * non-blocking: the next signal to that member lands after them and returns once their sources are free). */
static inline bool shoal_coll_far(const shoal_team_t *t, int r) {
  return SHOAL_UNLIKELY(t->remote) && !shoal_g.heap_lim[t->world[r]];
}
/* n bytes from src into member r's memory at to (its address from a delta table). */
static inline void shoal_coll_put(const shoal_team_t *t, int r, void *to, const void *src, size_t n,
                                  const char *routine) {
  if (shoal_coll_far(t, r))
    shoal_tl_put(routine, t->world[r], to, src, n, true);
  else
    memcpy(to, src, n);
}
/* shoal_coll_put; stream: a member of this node gets non-temporal stores. */
static inline void shoal_coll_put_bulk(const shoal_team_t *t, int r, void *to, const void *src, size_t n, bool stream,
                                       const char *routine) {
  if (shoal_coll_far(t, r))
    shoal_tl_put(routine, t->world[r], to, src, n, true);
  else if (stream)
    shoal_copy_stream(to, src, n);
  else
    memcpy(to, src, n);
}
/* n bytes of member r's memory at from (its address from a delta table) into dst, complete on return. */
static inline void shoal_coll_get(const shoal_team_t *t, int r, void *dst, const void *from, size_t n,
                                  const char *routine) {
  if (shoal_coll_far(t, r))
    shoal_tl_get(routine, t->world[r], from, dst, n, false);
  else
    memcpy(dst, from, n);
}
/* A relaxed load of member r's cell c (its address from a delta table). */
static inline uint64_t shoal_coll_load(const shoal_team_t *t, int r, _Atomic uint64_t *c) {
  if (shoal_coll_far(t, r)) return shoal_tl_amo("collective", t->world[r], (void *)c, 8, SHOAL_TL_AMO_FETCH, 0, 0);
  return atomic_load_explicit(c, memory_order_relaxed);
}
/* The signal to a member of another node: the transport's signal, behind what this PE put to it (active sets, whose
 * cells count: a fence, then an atomic add). */
void shoal_coll_post_far(const shoal_team_t *t, int r, uint64_t v);

/* ---- signals ---- */
static inline void shoal_coll_post(const shoal_team_t *t, int r, uint64_t v) {
  if (shoal_coll_far(t, r))
    shoal_coll_post_far(t, r, v);
  else if (SHOAL_LIKELY(!t->aset))
    atomic_store_explicit(t->rflag[r], v, memory_order_release);
  else
    atomic_fetch_add_explicit(t->rflag[r], 1, memory_order_release);
}
static inline void shoal_coll_wait(const shoal_team_t *t, int s, uint64_t v) {
  _Atomic uint64_t *f = t->flag + (size_t)s * (size_t)t->fstride;
  if (SHOAL_LIKELY(!t->aset)) {
    SHOAL_WAIT_WHILE(atomic_load_explicit(f, memory_order_acquire) < v);
  } else {
    SHOAL_WAIT_WHILE(atomic_load_explicit(f, memory_order_acquire) == 0);
    atomic_fetch_sub_explicit(f, 1, memory_order_relaxed);
  }
}
/* shoal_coll_put of n bytes to member r, then shoal_coll_post of v to it: to a member of another node one message
 * where the transport carries the flag with the data (shoal_tl_put_signal), which a collective's step to each peer
 * is (the second message per peer cost about as much as the first over tcp); a memcpy and the store here. */
static inline void shoal_coll_put_post(const shoal_team_t *t, int r, void *to, const void *src, size_t n, uint64_t v,
                                       const char *routine) {
  if (shoal_coll_far(t, r) && !t->aset && n) {
    shoal_tl_put_signal(routine, t->world[r], to, src, n, (void *)t->rflag[r], v);
    return;
  }
  shoal_coll_put(t, r, to, src, n, routine);
  shoal_coll_post(t, r, v);
}
/* Signal every other member with v, then wait for every other member's v (an all-to-all exchange). */
void shoal_coll_exchange(shoal_team_t *t, uint64_t v);

/* ---- staging (coll_core.c; model: coll.h) ---- */
/* This PE's run of slots for the next staged round of team t, nb bytes (at most t->stage_half); a reader's owner
 * has it at the same offset (+ t->delta[r]). owner: this PE writes it in this round, whose readers will post done:
 * first wait until every member has read what this PE last left in those slots. */
char *shoal_coll_stage(shoal_team_t *t, bool owner, uint64_t done, size_t nb);
/* Wait until every member has read what this PE staged (before its team's slot is released); on all_far teams a
 * member first posts to each root the "done" it has not yet sent (bcast_far batches them). Collective. */
void shoal_coll_stage_drain(shoal_team_t *t);
/* Before a team's slot is released: when its last scratch round had members read their leader's half
 * (fcollect_hier, alltoall_hier; a leader releases its members and returns without waiting for that), each member
 * tells its leader it has finished, and the leader waits, so that a later team on the slot cannot write the half
 * under a slow member. Collective over the team. */
void shoal_coll_scratch_drain(shoal_team_t *t);
/* Tests (test_hier): nanoseconds (0 to 999999999) a member of a hier team sleeps before it copies out of its
 * leader's half, to widen the window that shoal_coll_scratch_drain closes. 0 (the default): never. */
extern long shoal_coll_test_copyout_delay_ns;
/* Tests (test_reuse): nanoseconds (0 to 999999999) a collect on a one-node team sleeps between its size exchange and
 * reading the sizes, to widen the window its final exchange closes. 0 (the default): never. */
extern long shoal_coll_test_sizes_delay_ns;
/* A scratch round through the leaders (fcollect_hier, alltoall_hier), round value v. A member: its piece is in its
 * leader l's half; tell l and wait for l's release (then the half holds every node's runs). A leader, in two calls
 * around its puts to the other leaders: shoal_coll_hier_gathered waits until every member's piece is in its half;
 * shoal_coll_hier_exchanged signals the other leaders (after those puts), waits for theirs and releases its
 * members. */
void shoal_coll_hier_member(shoal_team_t *t, int l, uint64_t v);
void shoal_coll_hier_gathered(shoal_team_t *t, uint64_t v);
void shoal_coll_hier_exchanged(shoal_team_t *t, uint64_t v);

/* ---- pushes into scratch (coll_core.c; model: coll.h) ---- */
#define SHOAL_COLL_CROWDED_PUSH_MAX ((size_t)2 << 10) /* bytes per block on crowded nodes (the copy out costs more) */
/* ... and with a PE per core: the entry round trip saved outweighs the copy out up to here (2 PEs, alternating
 * launches: fcollect 8-128 B 0.12-0.13 -> 0.07-0.10 us, alltoall 8-32 B 0.14-0.17 -> 0.10-0.11; 512 B slower) */
#define SHOAL_COLL_SMALL_PUSH_MAX ((size_t)256)
/* The binomial tree of broadcasts (coll_bcast.c), in virtual ranks vr = (rank - root) mod n, 0 <= vr < n: the
 * parent of vr > 0 is vr less its highest bit; its children are vr + m for every power of two m above that bit
 * (every power of two for the root) with vr + m < n, the lowest m (the largest subtree) first. tree_first: that
 * lowest m (twice vr's highest bit, 1 for the root); tree_kids: how many children vr has (test_far counts each
 * PE's sends with it). */
static inline long shoal_coll_tree_first(int vr) { return vr ? 2L << (31 - __builtin_clz((unsigned)vr)) : 1; }
static inline int shoal_coll_tree_kids(int vr, int n) {
  int k = 0;
  for (long m = shoal_coll_tree_first(vr); vr + m < n; m <<= 1) k++;
  return k;
}
/* Bytes of a member's slot in a scratch half (0 for active sets). */
static inline size_t shoal_coll_scratch_slot(const shoal_team_t *t) {
  return (t->scratch_size / 2 / (size_t)t->size) & ~(size_t)(SHOAL_CACHELINE - 1);
}
/* Whether blocks of nb bytes go through the receivers' scratch: the same on every member. */
static inline bool shoal_coll_use_scratch_push(const shoal_team_t *t, size_t nb) {
  size_t max = shoal_coll_oversubscribed ? SHOAL_COLL_CROWDED_PUSH_MAX : SHOAL_COLL_SMALL_PUSH_MAX;
  if (SHOAL_LIKELY(!t->all_far) && nb > max) return false;
  return nb && nb <= shoal_coll_scratch_slot(t);
}
/* Every member r gets src + r * sblk (nelems * esize contiguous bytes; sblk 0: the same block for all) in its slot
 * of r's scratch half; then this PE copies member s's slot to dest + s * dblk (element stride dst), its own block
 * straight from src. A scratch round; a PE's dest is written by that PE alone, so no entry signal is needed. */
void shoal_coll_scratch_push(shoal_team_t *t, char *dest, size_t dblk, ptrdiff_t dst, const char *src, size_t sblk,
                             size_t nelems, size_t esize, const char *routine);

/* The hierarchical fcollect and alltoall (through each node's leader: t->hier teams, not active sets) move blocks
 * of nb bytes through each leader's scratch half in pieces of at most room bytes per block (a scratch round per
 * piece): room rounded down to a cache line where it holds more than one. The automatic choice takes them for up
 * to this many pieces (flat push beyond: each piece costs the leaders a round of messages; measured in
 * docs/design/transport.md "Through the nodes"). */
#define SHOAL_COLL_HIER_GATHER_PIECES 3
#define SHOAL_COLL_HIER_A2A_PIECES 4
static inline size_t shoal_coll_hier_piece(size_t room, size_t nb) {
  if (room > SHOAL_CACHELINE) room &= ~(size_t)(SHOAL_CACHELINE - 1);
  return nb < room ? nb : room;
}
/* Whether blocks of nb bytes take at most max pieces of room bytes (room > 0). */
static inline bool shoal_coll_hier_few(size_t room, size_t nb, size_t max) {
  size_t cb = shoal_coll_hier_piece(room, nb);
  return (nb + cb - 1) / cb <= max;
}

/* ---- per-call helpers (coll_core.c; the common case inline) ---- */
const ptrdiff_t *shoal_coll_deltas_slow(shoal_team_t *t, const void *p, size_t span, int k, const char *routine,
                                        const char *arg);
/* Deltas for symmetric object p (span bytes): the team's heap deltas, or table k filled from p's space. */
static inline const ptrdiff_t *shoal_coll_deltas(shoal_team_t *t, const void *p, size_t span, int k,
                                                 const char *routine, const char *arg) {
  uintptr_t off = (uintptr_t)p - (uintptr_t)shoal_g.heap_base;
  if (SHOAL_LIKELY(off < shoal_g.heap_size && span <= shoal_g.heap_size - off)) return t->delta;
  return shoal_coll_deltas_slow(t, p, span, k, routine, arg);
}
_Noreturn void shoal_coll_overlap_fail(const char *routine, const void *dest, size_t nd, const void *src, size_t ns,
                                       bool allow_same);
/* Fatal when [a, a+na) and [b, b+nb) overlap (allow_same: a == b with na == nb is fine). */
static inline void shoal_coll_check_overlap(const char *routine, const void *dest, size_t nd, const void *src,
                                            size_t ns, bool allow_same) {
  uintptr_t d = (uintptr_t)dest, s = (uintptr_t)src;
  if (SHOAL_LIKELY(!nd || !ns || d + nd <= s || s + ns <= d)) return;
  if (allow_same && d == s && nd == ns) return;
  shoal_coll_overlap_fail(routine, dest, nd, src, ns, allow_same);
}
_Noreturn void shoal_coll_device_fail(const char *routine, const char *arg, const void *p);
/* Fatal when dest or source is on the device heap: the host algorithms store with the CPU, which cannot reach GPU
 * memory, and only fcollect and contiguous alltoall have GPU kernels (collectives/gpu). */
static inline void shoal_coll_host_only(const char *routine, const void *dest, const void *src) {
  const shoal_space_t *dev = &shoal_g.space[SHOAL_SPACE_DEVICE];
  if (SHOAL_LIKELY(!dev->size)) return;
  if ((uintptr_t)dest - dev->base < dev->size) shoal_coll_device_fail(routine, "dest", dest);
  if ((uintptr_t)src - dev->base < dev->size) shoal_coll_device_fail(routine, "source", src);
}
_Noreturn void shoal_coll_bytes_fail(const char *routine, size_t nelems, size_t size);
/* nelems * size, fatal on overflow. */
static inline size_t shoal_coll_bytes(const char *routine, size_t nelems, size_t size) {
  size_t b;
  if (SHOAL_UNLIKELY(__builtin_mul_overflow(nelems, size, &b))) shoal_coll_bytes_fail(routine, nelems, size);
  return b;
}
void shoal_coll_debug_check_(shoal_team_t *t, const char *routine, const char *what_a, uint64_t a,
                             const char *what_b, uint64_t b);
/* SHMEM_DEBUG: every member must pass the same routine and values a, b; fatal naming the first mismatch. */
static inline void shoal_coll_debug_check(shoal_team_t *t, const char *routine, const char *what_a, uint64_t a,
                                          const char *what_b, uint64_t b) {
  if (SHOAL_UNLIKELY(shoal_env.debug) && t->size > 1) shoal_coll_debug_check_(t, routine, what_a, a, what_b, b);
}

/* ---- algorithm selection (coll_core.c; the families and algorithm ids: coll.h) ---- */
extern int shoal_coll_algo_cache[SHOAL_COLL_NFAMILY];
int shoal_coll_algo_parse(enum shoal_coll_family f, const char *routine);
/* The forced algorithm of a family (SHOAL_ALGO_AUTO if none). */
static inline int shoal_coll_algo(enum shoal_coll_family f, const char *routine) {
  int a = shoal_coll_algo_cache[f];
  return SHOAL_LIKELY(a >= 0) ? a : shoal_coll_algo_parse(f, routine);
}

/* ---- the barrier (coll_core.c, below every other collective: the SHMEM_DEBUG check above and the GPU collectives'
 * host completion use it; the entry points: coll_barrier.c) ---- */
void shoal_coll_barrier(shoal_team_t *t, const char *routine);

#endif
