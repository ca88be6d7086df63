/* coll_bcast.c - broadcast (spec 9.9: shmem_TYPENAME_broadcast, shmem_broadcastmem, shmem_broadcast32/64).
 *   push (small): every member signals the root that it entered; the root copies into each member's dest once that
 *     member has entered (coll.h, entry rule), starting with member root + 1 so that concurrent broadcasts from
 *     different roots do not all hit the same PE first, signalling each right after.
 *   staged (small, teams; the default up to half the team's staging): the root copies into its staging and
 *     signals; every member copies from there into its dest and signals back (coll.h): no round trip per call.
 *     On teams whose other members are all on other nodes (t->all_far) the data is put into each member's staging
 *     instead, down a binomial tree from the root, see bcast_far: a member's read of the root's would be a round
 *     trip.
 *   push-unsafe: push without the entry signals (a fast root may overwrite the previous call's result that a slow
 *     member is still reading: only for calls that something else orders).
 *   pull (large): the root signals "source ready"; every member copies from the root's source at the same time
 *     (the copies run on every member's core, not one) and acknowledges; the root returns after every ack.
 *   tree (large teams): a binomial tree of pulls; a member copies from its parent's dest (the root's source for the
 *     root's children), then releases its children and waits for their acks.
 *   hierarchical (teams on several nodes with two or more members on some node; the automatic choice there): push
 *     through the nodes, see bcast_hier.
 * Apart from staged, the root's source and every dest are read or written directly: no scratch, no staging copy. */
#include "coll_core.h"
#include "gpu/coll_gpu.h"

/* Automatic choice (measured on 2 cores, 2 and 4 PEs): staged for teams up to half their staging (16 KiB for WORLD
 * and SHARED, 4 KiB for other teams), then push up to BCAST_PUSH_MAX bytes (4 times that when some node of the job
 * is crowded: pulls need every member scheduled), then pull up to BCAST_PULL_MAX_PES members, then the tree. */
#define BCAST_PUSH_MAX ((size_t)16 << 10)
#define BCAST_PULL_MAX_PES 8

static inline int wrap(int x, int n) { return x >= n ? x - n : x; }

/* Teams on several nodes (t->hier): push, with the entry rule (coll.h), through the nodes. The root writes the dest
 * of its node's members and of every other node's leader, each once it entered; each of those leaders then writes
 * its members' dest, each once it entered. One copy of the data crosses to each node (flat push: one per PE), and
 * a member of another node signals only its leader. ready: "entered", ack: "your dest holds the data". */
static void bcast_hier(shoal_team_t *t, void *dest, const void *src, size_t nb, int root, bool local,
                       const ptrdiff_t *dd, uint64_t ready, uint64_t ack, const char *routine) {
  int n = t->size, me = t->rank, rn = t->lnode[root], mn = t->lnode[me];
  if (me == root) { /* other nodes first: their puts run while this node's copies are made */
    for (int k = 1; k < n; k++) {
      int r = wrap(me + k, n);
      if (t->lnode[r] == rn || t->lead[t->lnode[r]] != r) continue;
      shoal_coll_wait(t, r, ready);
      shoal_coll_put(t, r, (char *)dest + dd[r], src, nb, routine);
    }
    for (int k = 1; k < n; k++) {
      int r = wrap(me + k, n);
      if (t->lnode[r] != rn) continue;
      shoal_coll_wait(t, r, ready);
      shoal_coll_put(t, r, (char *)dest + dd[r], src, nb, routine);
      shoal_coll_post(t, r, ack);
    }
    for (int q = 0; q < t->nlead; q++)
      if (q != rn) shoal_coll_post(t, t->lead[q], ack);
    if (local) memcpy(dest, src, nb);
    return;
  }
  if (mn != rn && t->lead_idx < 0) { /* written by its leader */
    shoal_coll_post(t, t->mates[0], ready);
    shoal_coll_wait(t, t->mates[0], ack);
    return;
  }
  shoal_coll_post(t, root, ready);
  shoal_coll_wait(t, root, ack);
  if (mn == rn) return;
  for (int k = 0; k < t->nmates; k++) { /* a leader of another node: on to its members */
    int r = t->mates[k];
    shoal_coll_wait(t, r, ready);
    memcpy((char *)dest + dd[r], dest, nb);
    shoal_coll_post(t, r, ack);
  }
}

/* Staged, on t->all_far teams (coll.h, "Members on other nodes"): src goes into a run of slots of every member's
 * staging ring (t->stage_pos, as shoal_coll_stage's) with a signal (ack), down the tree below; a member copies it
 * into dest. Before the root writes a run again it needs each member's word that it read the slots' last round: a
 * signal from it of at least that round's ack when this root staged it (t->stage_root, t->stage_done: the same on
 * every member), otherwise the member's entry signal (ready) of this round. A member posts "done" (its latest value)
 * only every few rounds from one root (BCAST_FAR_ACK_EVERY, at most half the ring's rounds of this size) or when the
 * root changes, and "ready" on entry when the root would otherwise wait for a round it has not confirmed: in a loop
 * from one root a member sends one message per BCAST_FAR_ACK_EVERY calls (one per call before), and the root waits
 * for nothing (it waited for the round before last's "done", a round trip per two calls). Each "done" costs the root
 * far more than its share: it lands while the root is sending, not waiting, so the root's progress thread wakes on
 * its core (2 PEs over net on lo, 8 B-1 KiB: 12.3 us per call with one per 8 calls, 10.0 per 32, 9.5 per
 * 64, 9.4 per 128; session 30).
 * The data goes down a binomial tree (shoal_coll_tree_kids): the root writes ceil(log2 n) members' slots, each of
 * them forwards from its own slot to its children, so no member sends more than that many puts per call (n - 1 from
 * the root before: with a member per node, the root's sends were the call's time). The members' words still go to
 * the root, and it waits for every member's before its first write: a member's slot is written only after the root's
 * write of that round to the member's parent, so after the root saw that the member had read the slot's last round. */
#define BCAST_FAR_ACK_EVERY 64
static void far_post(shoal_team_t *t, int root, uint64_t v) {
  shoal_coll_post(t, root, v);
  t->far_post_root = root;
  t->far_post_val = v;
  t->far_unposted = 0;
}

static void bcast_far(shoal_team_t *t, void *dest, const void *src, size_t nb, int root, bool local, uint64_t ready,
                      uint64_t ack, const char *routine) {
  int n = t->size, me = t->rank, pos = t->stage_pos, need = (int)((nb + SHOAL_STAGE_SLOT - 1) / SHOAL_STAGE_SLOT);
  if (pos + need > t->stage_slots) pos = 0;
  t->stage_pos = pos + need;
  bool other = false; /* a slot last staged by another root: every member's entry signal */
  uint64_t own = 0;   /* else the newest ack of this root's last rounds in these slots */
  for (int k = pos; k < pos + need; k++) {
    if (t->stage_root[k] == root) own = t->stage_done[k] > own ? t->stage_done[k] : own;
    else if (t->stage_root[k] >= 0) other = true;
    t->stage_root[k] = root;
    t->stage_done[k] = ack;
  }
  char *stage = t->stage + (size_t)pos * SHOAL_STAGE_SLOT;
  const int vr = wrap(me - root + n, n);
  if (me != root) {
    if (other || (own && (t->far_post_root != root || t->far_post_val < own))) far_post(t, root, ready);
    const long first = shoal_coll_tree_first(vr); /* twice vr's highest bit: its parent is vr - first / 2 */
    shoal_coll_wait(t, wrap((int)(vr - first / 2) + root, n), ack);
    for (long m = first; vr + m < n; m <<= 1) { /* forwarded before the copy: the children wait, the copy does not */
      int r = wrap((int)(vr + m) + root, n);
      shoal_coll_put_post(t, r, stage + t->delta[r], stage, nb, ack, routine);
    }
    memcpy(dest, stage, nb);
    int half = t->stage_slots / need / 2, every = half < BCAST_FAR_ACK_EVERY ? half : BCAST_FAR_ACK_EVERY;
    if (t->far_post_root != root || ++t->far_unposted >= every) far_post(t, root, ack);
    return;
  }
  if (other || own) /* every member's word, before anyone writes its slot */
    for (int k = 1; k < n; k++) shoal_coll_wait(t, wrap(me + k, n), other ? ready : own);
  for (long m = 1; m < n; m <<= 1) {
    int r = wrap((int)m + me, n);
    shoal_coll_put_post(t, r, stage + t->delta[r], src, nb, ack, routine);
  }
  if (local) memcpy(dest, src, nb);
}

void shoal_coll_bcast(shoal_team_t *t, void *dest, const void *src, size_t nb, int root, bool root_copies,
                      const char *routine) {
  int n = t->size, me = t->rank;
  int algo = shoal_coll_algo(SHOAL_COLL_BCAST, routine);
  const ptrdiff_t *dd = shoal_coll_deltas(t, dest, nb, 0, routine, "dest");
  const ptrdiff_t *sd = shoal_coll_deltas(t, src, nb, 1, routine, "source");
  bool local = me == root && root_copies && dest != src;
  if (n == 1) {
    if (local) memcpy(dest, src, nb);
    return;
  }
  bool stage_fits = nb <= t->stage_half; /* 0 for active sets */
  if (SHOAL_UNLIKELY(t->hier) && (algo == SHOAL_ALGO_AUTO || algo == SHOAL_BCAST_HIER)) {
    uint64_t ready = t->seq + 1, ack = t->seq + 2;
    t->seq += 2;
    bcast_hier(t, dest, src, nb, root, local, dd, ready, ack, routine);
    return;
  }
  if (algo == SHOAL_ALGO_AUTO || algo == SHOAL_BCAST_HIER)
    algo = stage_fits                                                 ? SHOAL_BCAST_STAGED
         : nb <= BCAST_PUSH_MAX * (shoal_coll_oversubscribed ? 4 : 1) ? SHOAL_BCAST_PUSH
         : n <= BCAST_PULL_MAX_PES                                    ? SHOAL_BCAST_PULL
                                                                      : SHOAL_BCAST_TREE;
  if (algo == SHOAL_BCAST_STAGED && !stage_fits) algo = SHOAL_BCAST_PUSH;
  uint64_t ready = t->seq + 1, ack = t->seq + 2;
  t->seq += 2;
  if (algo == SHOAL_BCAST_STAGED && t->all_far) {
    bcast_far(t, dest, src, nb, root, local, ready, ack, routine);
    return;
  }
  switch (algo) {
  case SHOAL_BCAST_STAGED: {
    char *stage = shoal_coll_stage(t, me == root, ack, nb);
    if (me == root) {
      memcpy(stage, src, nb);
      for (int k = 1; k < n; k++) shoal_coll_post(t, me + k < n ? me + k : me + k - n, ready);
      if (local) memcpy(dest, src, nb);
    } else {
      shoal_coll_wait(t, root, ready);
      shoal_coll_get(t, root, dest, stage + t->delta[root], nb, routine);
      shoal_coll_post(t, root, ack);
    }
    return;
  }
  case SHOAL_BCAST_PUSH:
  case SHOAL_BCAST_PUSH_UNSAFE: { /* push: members post "entered" (ready), the root posts "data" (ack) */
    bool entry = algo == SHOAL_BCAST_PUSH;
    if (me == root) {
      for (int k = 1; k < n; k++) {
        int r = me + k < n ? me + k : me + k - n;
        if (entry) shoal_coll_wait(t, r, ready);
        shoal_coll_put(t, r, (char *)dest + dd[r], src, nb, routine);
        shoal_coll_post(t, r, ack);
      }
      if (local) memcpy(dest, src, nb);
    } else {
      if (entry) shoal_coll_post(t, root, ready);
      shoal_coll_wait(t, root, ack);
    }
    return;
  }
  case SHOAL_BCAST_PULL:
    if (me == root) {
      for (int k = 1; k < n; k++) shoal_coll_post(t, me + k < n ? me + k : me + k - n, ready);
      if (local) memcpy(dest, src, nb);
      for (int k = 1; k < n; k++) shoal_coll_wait(t, me + k < n ? me + k : me + k - n, ack);
    } else {
      shoal_coll_wait(t, root, ready);
      shoal_coll_get(t, root, dest, (const char *)src + sd[root], nb, routine);
      shoal_coll_post(t, root, ack);
    }
    return;
  default: { /* tree: member numbers relative to the root (vr); parent = vr minus its highest bit */
    int vr = me - root < 0 ? me - root + n : me - root, mask = 1;
    if (vr) {
      int hb = (int)(shoal_coll_tree_first(vr) / 2), vp = vr - hb, p = vp + root < n ? vp + root : vp + root - n;
      shoal_coll_wait(t, p, ready);
      shoal_coll_get(t, p, dest, vp ? (const char *)dest + dd[p] : (const char *)src + sd[p], nb, routine);
      shoal_coll_post(t, p, ack);
      mask = hb << 1;
    } else if (local) {
      memcpy(dest, src, nb);
    }
    int top = mask; /* children vr + m for m = mask, 2 mask, ... < n - vr: largest subtree first */
    while ((long)top * 2 < n - vr) top <<= 1;
    for (int m = top; m >= mask; m >>= 1)
      if (vr + m < n) shoal_coll_post(t, (vr + m + root) % n, ready);
    for (int m = mask; vr + m < n; m <<= 1) shoal_coll_wait(t, (vr + m + root) % n, ack);
    return;
  }
  }
}

/* ---- API ---- */
static void bcast_team(const char *routine, shmem_team_t team, void *dest, const void *source, size_t nelems,
                       size_t esize, int PE_root) {
  shoal_team_t *t = shoal_team_get(team, routine);
  if (SHOAL_UNLIKELY(PE_root < 0 || PE_root >= t->size))
    shoal_fatal(routine, "PE_root: %d out of range [0, %d) of the team", PE_root, t->size);
  size_t nb = shoal_coll_bytes(routine, nelems, esize);
  shoal_coll_debug_check(t, routine, "nelems", nelems, "PE_root", (uint64_t)PE_root);
  if (!nb) return;
  shoal_coll_check_overlap(routine, dest, nb, source, nb, true);
  /* Device-heap buffers: the GPU kernel (the root's block stores to every member's dest); host stores cannot reach
   * device memory. */
  if (SHOAL_UNLIKELY(shoal_coll_gpu_bcast(t, dest, source, nb, PE_root, NULL, routine) == SHOAL_OK)) return;
  shoal_coll_host_only(routine, dest, source);
  shoal_coll_bcast(t, dest, source, nb, PE_root, true, routine);
}

#define SHOAL_DEF_BCAST(T, N)                                                                                         \
  int shmem_##N##_broadcast(shmem_team_t team, T *dest, const T *source, size_t nelems, int PE_root) {                \
    bcast_team("shmem_" #N "_broadcast", team, dest, source, nelems, sizeof(T), PE_root);                             \
    return 0;                                                                                                          \
  }
SHOAL_RMA_TYPES(SHOAL_DEF_BCAST)

int shmem_broadcastmem(shmem_team_t team, void *dest, const void *source, size_t nelems, int PE_root) {
  bcast_team("shmem_broadcastmem", team, dest, source, nelems, 1, PE_root);
  return 0;
}

#define SHOAL_DEF_BCAST_ASET(S)                                                                                       \
  void shmem_broadcast##S(void *dest, const void *source, size_t nelems, int PE_root, int PE_start,                   \
                          int logPE_stride, int PE_size, long *pSync) {                                               \
    static const char routine[] = "shmem_broadcast" #S;                                                               \
    shoal_team_t *t = shoal_aset_get(PE_start, logPE_stride, PE_size, pSync, routine);                                \
    if (SHOAL_UNLIKELY(PE_root < 0 || PE_root >= t->size))                                                            \
      shoal_fatal(routine, "PE_root: %d out of range [0, %d) of the active set", PE_root, t->size);                   \
    size_t nb = shoal_coll_bytes(routine, nelems, S / 8);                                                             \
    shoal_coll_debug_check(t, routine, "nelems", nelems, "PE_root", (uint64_t)PE_root);                               \
    if (!nb) return;                                                                                                   \
    shoal_coll_host_only(routine, dest, source);                                                                      \
    shoal_coll_check_overlap(routine, dest, nb, source, nb, true);                                                    \
    shoal_coll_bcast(t, dest, source, nb, PE_root, false, routine);                                                   \
  }
SHOAL_DEF_BCAST_ASET(32)
SHOAL_DEF_BCAST_ASET(64)
