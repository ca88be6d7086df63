/* coll_collect.c - fcollect and collect (spec 9.9: shmem_TYPENAME_[f]collect, shmem_[f]collectmem,
 * shmem_[f]collect32/64): member j's block lands at dest + off_j on every member.
 *   push (default): each member copies its block into every member's dest, starting with member me + 1 (so that
 *     no PE is everybody's first target), signalling each right after, then into its own dest; then waits for
 *     every member's signal.
 *   ring: n - 1 steps; in step k a member forwards block (me - k) to member me + 1 and waits for block me - k - 1.
 *   rdbl (power-of-two teams; others use ring): step k exchanges the 2^k blocks held with member me ^ 2^k.
 * fcollect keeps the entry rule (coll.h): each member first signals "entered" to the members that write into its
 * dest (push: all; ring: me - 1; rdbl: every partner), and a writer waits for that before its first copy to one;
 * push-unsafe (fcollect only) leaves it out. collect needs no entry signals: it first learns every member's size
 * (each publishes it in a pub cell, signals everyone, and reads the others' cells; prefix sums give the offsets;
 * on teams with members on other nodes, where each far read is a round trip, an fcollect of the sizes through the
 * leaders or the receivers' scratch instead), and that exchange already tells each member that all have entered. Blocks go straight into the destinations: no
 * scratch. (Staging, as broadcast has, measured no faster here: every member waits for every other anyway.)
 * On teams whose other members are all on other nodes (t->all_far), and for small blocks on any team (up to
 * 2 KiB when a node is crowded, 256 B otherwise), fcollect's automatic choice for blocks that fit a slot of the
 * scratch pushes into the receivers' scratch (coll.h, "Pushes into scratch"): no entry signal.
 * hierarchical (fcollect's automatic choice on teams spanning nodes with two or more members on some node, for
 *   blocks of at most SHOAL_COLL_HIER_GATHER_PIECES pieces): through each node's leader, see fcollect_hier. */
#include "coll_core.h"
#include "gpu/coll_gpu.h"

#include <time.h>

/* Offset of block j: fixed blocks (offs NULL) or the prefix table. */
static inline size_t blk_off(const size_t *offs, size_t nb, int j) { return offs ? offs[j] : (size_t)j * nb; }

/* entry: post and wait for the entry signals (fcollect); collect's size exchange has done that already. */
static inline __attribute__((always_inline)) void gather(shoal_team_t *t, char *dest, const char *src, size_t nb,
                                                          const size_t *offs, const ptrdiff_t *dd, int algo,
                                                          bool entry, const char *routine) {
  int n = t->size, me = t->rank;
  size_t myoff = blk_off(offs, nb, me);
  if (algo == SHOAL_GATHER_RDBL && (n & (n - 1))) algo = SHOAL_GATHER_RING;
  if (algo == SHOAL_GATHER_PUSH_UNSAFE) algo = SHOAL_GATHER_PUSH, entry = false;
  if (nb && (n == 1 || algo != SHOAL_GATHER_PUSH)) memcpy(dest + myoff, src, nb); /* ring, rdbl: sent from dest */
  if (n == 1) return;
  uint64_t e = t->seq + 1, v = e; /* entry signal value; data signals follow it */
  t->seq++;
  if (algo == SHOAL_GATHER_RING) {
    t->seq += (uint64_t)n - 1;
    int next = me + 1 < n ? me + 1 : 0, prev = me ? me - 1 : n - 1;
    if (entry) shoal_coll_post(t, prev, e), shoal_coll_wait(t, next, e);
    for (int k = 0; k < n - 1; k++) {
      int b = me - k >= 0 ? me - k : me - k + n;
      size_t o = blk_off(offs, nb, b), len = blk_off(offs, nb, b + 1) - o;
      shoal_coll_put(t, next, dest + o + dd[next], dest + o, len, routine);
      shoal_coll_post(t, next, v + 1 + (uint64_t)k);
      shoal_coll_wait(t, prev, v + 1 + (uint64_t)k);
    }
  } else if (algo == SHOAL_GATHER_RDBL) {
    int steps = __builtin_ctz((unsigned)n);
    t->seq += (uint64_t)steps;
    if (entry)
      for (int k = 0; k < steps; k++) shoal_coll_post(t, me ^ (1 << k), e);
    for (int k = 0; k < steps; k++) {
      int p = me ^ (1 << k), base = me & ~((1 << k) - 1);
      size_t o = blk_off(offs, nb, base), len = blk_off(offs, nb, base + (1 << k)) - o;
      if (entry) shoal_coll_wait(t, p, e);
      shoal_coll_put(t, p, dest + o + dd[p], dest + o, len, routine);
      shoal_coll_post(t, p, v + 1 + (uint64_t)k);
      shoal_coll_wait(t, p, v + 1 + (uint64_t)k);
    }
  } else {
    size_t total = blk_off(offs, nb, n); /* dest bytes per member: n times that across the team */
    bool stream = total >= shoal_coll_stream_min / (size_t)n;
    v = ++t->seq;
    if (entry)
      for (int k = 1; k < n; k++) shoal_coll_post(t, me - k >= 0 ? me - k : me - k + n, e);
    for (int k = 1; k < n; k++) {
      int r = me + k < n ? me + k : me + k - n;
      if (entry) shoal_coll_wait(t, r, e);
      if (nb) shoal_coll_put_bulk(t, r, dest + myoff + dd[r], src, nb, stream, routine); /* collect: a member may have nothing (and source NULL) */
      shoal_coll_post(t, r, v);
    }
    if (nb) shoal_coll_put_bulk(t, me, dest + myoff, src, nb, stream, routine); /* off the critical path */
    for (int k = 1; k < n; k++) shoal_coll_wait(t, me - k >= 0 ? me - k : me - k + n, v);
  }
}

/* Teams on several nodes (t->hier): through each node's leader, in pieces of every block that fit a scratch half
 * (one scratch round each). Each PE copies its piece into its place in its leader's half, in node order (npos: a
 * node's pieces are one run), and signals it; a leader, once its node's pieces are in, puts that run into every
 * other leader's half (one put and one signal per pair of leaders: no entry signal, no message from any other
 * member), waits for the other leaders' runs, and releases its members; each PE then copies every piece from its
 * leader's half into its own dest. A member that reads its leader's half in round q signals its leader in round
 * q + 1 before anyone writes that half again in round q + 2 (a leader signals the other leaders only after all
 * its members). */
static void fcollect_hier(shoal_team_t *t, char *dest, const char *src, size_t nb, const char *routine) {
  int n = t->size, me = t->rank, nl = t->nlead, li = t->lead_idx, l = li < 0 ? t->mates[0] : me;
  size_t half = t->scratch_size / 2, cb = shoal_coll_hier_piece(half / (size_t)n, nb);
  memcpy(dest + (size_t)me * nb, src, nb);
  for (size_t off = 0; off < nb; off += cb) { /* a scratch round per piece of every block */
    size_t c = nb - off < cb ? nb - off : cb;
    char *h = t->scratch + (t->round++ & 1) * half, *lh = h + t->delta[l];
    uint64_t v = ++t->seq;
    memcpy(lh + (size_t)t->npos[me] * c, src + off, c);
    if (li < 0) {
      shoal_coll_hier_member(t, l, v);
    } else {
      shoal_coll_hier_gathered(t, v);
      char *run = h + (size_t)t->nstart[li] * c;
      size_t rb = (size_t)(t->nstart[li + 1] - t->nstart[li]) * c;
      for (int k = 1; k < nl; k++) { /* every put first: the first signal waits for all their sources at once */
        int r = t->lead[li + k < nl ? li + k : li + k - nl];
        shoal_coll_put(t, r, run + t->delta[r], run, rb, routine);
      }
      shoal_coll_hier_exchanged(t, v);
    }
    for (int r = 0; r < n; r++)
      if (r != me) memcpy(dest + (size_t)r * nb + off, lh + (size_t)t->npos[r] * c, c);
  }
  t->lead_read = t->round; /* shmem_team_destroy waits for the members' last reads */
}

static inline __attribute__((always_inline)) void fcollect_impl(shoal_team_t *t, void *dest, const void *src,
                                                                   size_t nb, const char *routine) {
  int algo = shoal_coll_algo(SHOAL_COLL_FCOLLECT, routine);
  const ptrdiff_t *dd = shoal_coll_deltas(t, dest, nb * (size_t)t->size, 0, routine, "dest");
  shoal_coll_deltas(t, src, nb, 1, routine, "source");
  if (SHOAL_UNLIKELY(t->hier) && t->scratch &&
      (algo == SHOAL_GATHER_HIER ||
       (algo == SHOAL_ALGO_AUTO &&
        shoal_coll_hier_few(t->scratch_size / 2 / (size_t)t->size, nb, SHOAL_COLL_HIER_GATHER_PIECES)))) {
    fcollect_hier(t, dest, src, nb, routine);
    return;
  }
  if (algo == SHOAL_GATHER_HIER) algo = SHOAL_ALGO_AUTO;
  if (SHOAL_UNLIKELY(shoal_coll_use_scratch_push(t, nb)) && algo == SHOAL_ALGO_AUTO) {
    shoal_coll_scratch_push(t, dest, nb, 1, src, 0, nb, 1, routine);
    return;
  }
  gather(t, dest, src, nb, NULL, dd, algo ? algo : SHOAL_GATHER_PUSH, true, routine);
}

void shoal_coll_fcollect(shoal_team_t *t, void *dest, const void *src, size_t nb, const char *routine) {
  fcollect_impl(t, dest, src, nb, routine);
}

void shoal_coll_collect(shoal_team_t *t, void *dest, const void *src, size_t nb, const char *routine) {
  int n = t->size, algo = shoal_coll_algo(SHOAL_COLL_COLLECT, routine);
  shoal_coll_deltas(t, src, nb, 1, routine, "source");
  size_t *offs = t->offs;
  offs[0] = 0;
  /* Teams alternate two cells: a member rewrites cell c two collects later, after every member has entered the
   * collect in between, i.e. finished reading c (the data alone would not tell when all sizes are 0; then the final
   * exchange below does, which also covers a later team on the slot). */
  _Atomic uint64_t *pub = t->pub + (t->aset ? 0 : t->ncollect++ & 1);
  uint64_t mine = nb;
  if (n > 1 && SHOAL_UNLIKELY(t->remote) && !t->aset && sizeof(size_t) == 8 && shoal_coll_scratch_slot(t) >= 8) {
    /* Members on other nodes: reading their pub cells costs a round trip each, so the sizes travel as an fcollect
     * of one word (through the leaders, or pushed into the receivers' scratch), into offs[1..n]; it also tells that
     * every member entered. */
    if (t->hier)
      fcollect_hier(t, (char *)(offs + 1), (const char *)&mine, sizeof mine, routine);
    else
      shoal_coll_scratch_push(t, (char *)(offs + 1), sizeof mine, 1, (const char *)&mine, 0, 1, sizeof mine, routine);
    for (int j = 0; j < n; j++)
      if (__builtin_add_overflow(offs[j], offs[j + 1], &offs[j + 1]))
        shoal_fatal(routine, "nelems: the blocks of all PEs add up to more than SIZE_MAX bytes");
  } else if (n > 1) {
    atomic_store_explicit(pub, nb, memory_order_relaxed);
    shoal_coll_exchange(t, ++t->seq);
    if (SHOAL_UNLIKELY(shoal_coll_test_sizes_delay_ns))
      nanosleep(&(struct timespec){.tv_nsec = shoal_coll_test_sizes_delay_ns}, NULL);
    for (int j = 0; j < n; j++) {
      size_t len = j == t->rank ? nb : shoal_coll_load(t, j, (_Atomic uint64_t *)((char *)pub + t->cdelta[j]));
      if (__builtin_add_overflow(offs[j], len, &offs[j + 1]))
        shoal_fatal(routine, "nelems: the blocks of all PEs add up to more than SIZE_MAX bytes");
    }
    /* All sizes 0: no data follows to say that every member has read this PE's cell, and a member that left could
     * destroy the team and rewrite the cell in a later team on the slot whose members exclude the slow reader (the
     * next collect here waits on that reader's entry; a team made without it does not). One more exchange says so. */
    if (!offs[n] && !t->aset) shoal_coll_exchange(t, ++t->seq);
  } else {
    offs[1] = nb;
  }
  if (offs[n]) { /* every member sees the same total, so every member takes this branch */
    const ptrdiff_t *dd = shoal_coll_deltas(t, dest, offs[n], 0, routine, "dest");
    shoal_coll_check_overlap(routine, dest, offs[n], src, nb, false);
    gather(t, dest, src, nb, offs, dd, algo ? algo : SHOAL_GATHER_PUSH, false, routine);
  }
  /* Active sets: restore pSync. Every member read the cell before sending the data this PE waited for; when all
   * sizes are 0 the cell already holds 0 (and the specification forbids reusing pSync before everyone is done). */
  if (t->aset) atomic_store_explicit(pub, 0, memory_order_relaxed);
}

/* ---- API ---- */
static shoal_team_t *team_of(shmem_team_t team, const char *routine) { return shoal_team_get(team, routine); }

static void fcollect_any(const char *routine, shoal_team_t *t, void *dest, const void *source, size_t nelems,
                         size_t esize) {
  size_t nb = shoal_coll_bytes(routine, nelems, esize);
  shoal_coll_debug_check(t, routine, "nelems", nelems, NULL, 0);
  if (!nb) return;
  shoal_coll_check_overlap(routine, dest, shoal_coll_bytes(routine, nb, (size_t)t->size), source, nb, false);
  /* Device-heap buffers: the GPU kernels (issue 6); host stores cannot reach device memory. */
  if (SHOAL_UNLIKELY(shoal_coll_gpu_fcollect(t, dest, source, nb, NULL, routine) == SHOAL_OK)) return;
  fcollect_impl(t, dest, source, nb, routine);
}

static void collect_any(const char *routine, shoal_team_t *t, void *dest, const void *source, size_t nelems,
                        size_t esize) {
  size_t nb = shoal_coll_bytes(routine, nelems, esize);
  shoal_coll_debug_check(t, routine, "element size", esize, NULL, 0);
  shoal_coll_host_only(routine, dest, source);
  shoal_coll_collect(t, dest, source, nb, routine);
}

#define SHOAL_DEF_COLLECT(T, N)                                                                                       \
  int shmem_##N##_collect(shmem_team_t team, T *dest, const T *source, size_t nelems) {                               \
    collect_any("shmem_" #N "_collect", team_of(team, "shmem_" #N "_collect"), dest, source, nelems, sizeof(T));      \
    return 0;                                                                                                          \
  }                                                                                                                    \
  int shmem_##N##_fcollect(shmem_team_t team, T *dest, const T *source, size_t nelems) {                              \
    fcollect_any("shmem_" #N "_fcollect", team_of(team, "shmem_" #N "_fcollect"), dest, source, nelems, sizeof(T));   \
    return 0;                                                                                                          \
  }
SHOAL_RMA_TYPES(SHOAL_DEF_COLLECT)

int shmem_collectmem(shmem_team_t team, void *dest, const void *source, size_t nelems) {
  collect_any("shmem_collectmem", team_of(team, "shmem_collectmem"), dest, source, nelems, 1);
  return 0;
}
int shmem_fcollectmem(shmem_team_t team, void *dest, const void *source, size_t nelems) {
  fcollect_any("shmem_fcollectmem", team_of(team, "shmem_fcollectmem"), dest, source, nelems, 1);
  return 0;
}

#define SHOAL_DEF_COLLECT_ASET(S)                                                                                     \
  void shmem_collect##S(void *dest, const void *source, size_t nelems, int PE_start, int logPE_stride, int PE_size,   \
                        long *pSync) {                                                                                \
    collect_any("shmem_collect" #S, shoal_aset_get(PE_start, logPE_stride, PE_size, pSync, "shmem_collect" #S), dest, \
                source, nelems, S / 8);                                                                               \
  }                                                                                                                    \
  void shmem_fcollect##S(void *dest, const void *source, size_t nelems, int PE_start, int logPE_stride, int PE_size,  \
                         long *pSync) {                                                                               \
    fcollect_any("shmem_fcollect" #S, shoal_aset_get(PE_start, logPE_stride, PE_size, pSync, "shmem_fcollect" #S),    \
                 dest, source, nelems, S / 8);                                                                        \
  }
SHOAL_DEF_COLLECT_ASET(32)
SHOAL_DEF_COLLECT_ASET(64)
