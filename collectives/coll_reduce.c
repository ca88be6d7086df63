/* coll_reduce.c - reductions (spec 9.9: shmem_TYPENAME_OP_reduce, shmem_TYPENAME_OP_to_all) for every type and
 * operation of the specification's tables.
 *   oneshot (small): each member copies its vector into slot me of every member's scratch (rotated start) and
 *     signals; then every member combines the n slots in team order. One exchange; n - 1 copies out per member.
 *   rdbl (power-of-two teams): log2 n steps; in step k a member swaps its partial result with member me ^ 2^k
 *     through the partner's scratch and combines (lower team number on the left, so that both get the same bits).
 *   rsag (large): reduce-scatter + allgather without scratch: member j combines segment j of every member's
 *     source and writes the result straight into every member's dest. Per member one vector read and one vector
 *     written, all members busy at once, two exchanges. Active sets (no scratch) always use it. On teams with
 *     members on other nodes it pushes instead (reduce_rsag_push: the reads would be round trips).
 *   hierarchical (teams on several nodes with two or more members on some node): through each node's leader, see
 *     reduce_hier; the automatic choice on such teams, oneshot/rdbl/rsag as above on any other.
 *   halving (power-of-two teams; large vectors on teams of far members): recursive halving, then doubling; see
 *     reduce_halving.
 * oneshot, rdbl and hierarchical take long vectors in chunks that fit half the team's scratch; consecutive chunks
 * alternate halves (coll.h). Every member combines in the same order, so all get bit-identical results. */
#include "coll_core.h"
#include "gpu/coll_gpu_reduce.h"

#include <stdlib.h>

/* Automatic choice (measured on 2 cores, 2 to 4 PEs): one-shot up to ONESHOT_MAX bytes (ONESHOT_MAX / 2 for teams
 * of 4 and more, whose other choice is rdbl), then for power-of-two teams of 4 and more rdbl up to RDBL_MAX, then
 * rsag (rdbl's pairwise steps need fewer members scheduled at once than rsag's all-to-all exchanges). Where rsag
 * follows and every PE has a CPU, one-shot stops at ONESHOT_RSAG_MAX: from 2 KiB rsag's two exchanges cost less
 * than one-shot's whole-vector push and n-fold combine (2 PEs, a source rewritten before each call: 2 KiB 0.68-0.73
 * against 0.69-0.74 us, 4 KiB 1.14-1.17 against 1.30-1.33; an unchanged source, which rsag reads from the peer's
 * cache, 2 KiB 0.25 against 0.45). On crowded nodes one-shot, one exchange, wins up to 4 KiB (3 PEs: 4 KiB 6.8-10.8
 * us against 10.2-11.8 for rsag). Teams with members on other nodes: reduce_far_choice. */
#define ONESHOT_MAX ((size_t)4 << 10)
#define ONESHOT_RSAG_MAX ((size_t)1 << 10)
#define RDBL_MAX ((size_t)128 << 10)
#define HIER_RDBL_MIN ((size_t)8 << 10)
/* Teams with members on other nodes and no node of two or more (t->remote; the others took reduce_hier): where
 * each step of an exchange crosses the network, fewer bytes and fewer steps per byte win over fewer messages.
 * Chosen by forcing each over net on lo (every PE its own node, 2 CPUs, WORLD's scratch then 256 KiB; session 30;
 * us at 1 MiB): 2 PEs one-shot while it fits one chunk of its slots (64 KiB: 29 against 34 for rdbl), then rdbl,
 * one exchange of whole halves (357 against 511 for one-shot in chunks); 3 PEs one-shot in one chunk up to
 * ONESHOT_FAR_MAX (64 KiB: 198 against 227), then rsag pushed (2179 against 2606; 128 KiB 320 against 395); 4 PEs
 * rdbl past one-shot's 2 KiB at every size (3020 against 9164 for one-shot in chunks, 3772 for rsag pushed).
 * Larger teams: rdbl up to RDBL_MAX on powers of two, else rsag pushed (one-shot sends n - 1 vectors, rdbl log2 n,
 * rsag 2 (n - 1) / n). Against OSHMEM with WORLD's far scratch: docs/design/transport.md. */
/* From HALVING_FAR_MIN bytes (HALVING_FAR_MIN_2 on 2 PEs) power-of-two teams take halving: 2 (n - 1) / n of the
 * vector sent and (n - 1) / n combined per member, in pairwise steps (session 37, 3 rounds alternating with the
 * choice before, us; 4 PEs: 256 KiB 557 -> 447, 1 MiB 2029 -> 1877, 4 MiB 8639 -> 6385, but 64 KiB 232 -> 271 and
 * 4 KiB 104 -> 190: twice rdbl's steps; 8 PEs 1.03-1.64x from 256 KiB; 2 PEs 1.04-1.08x from 1 MiB, 0.77-0.93x
 * below, where the combine it halves costs less than its second exchange). */
#define HALVING_FAR_MIN ((size_t)256 << 10)
#define HALVING_FAR_MIN_2 ((size_t)1 << 20)
#define ONESHOT_FAR_PES 4
#define ONESHOT_FAR_MAX ((size_t)64 << 10)
static int reduce_far_choice(int n, size_t nb, size_t esize, size_t per_oneshot, size_t per_rdbl) {
  bool pow2 = !(n & (n - 1)), fits = per_oneshot >= esize;
  /* on 2 PEs only with chunks of at least HALVING_FAR_MIN: with a user team's 16 KiB scratch its second exchange per
   * chunk made a 1-4 MiB sum 1.9x slower than rdbl (the review's run) */
  if (pow2 && nb >= (n == 2 ? HALVING_FAR_MIN_2 : HALVING_FAR_MIN) && per_rdbl >= esize &&
      (n > 2 || per_rdbl >= HALVING_FAR_MIN))
    return SHOAL_REDUCE_HALVING;
  if (n == 2) return nb <= per_oneshot || per_rdbl < esize ? SHOAL_REDUCE_ONESHOT : SHOAL_REDUCE_RDBL;
  if (pow2 && nb > ONESHOT_MAX / 2 && per_rdbl >= esize && (n <= ONESHOT_FAR_PES || nb <= RDBL_MAX))
    return SHOAL_REDUCE_RDBL;
  /* one chunk only: on a team with a small scratch (16 KiB for user teams) one-shot's chunks cost a wait each */
  size_t most = pow2 ? ONESHOT_MAX / 2 : n <= ONESHOT_FAR_PES ? ONESHOT_FAR_MAX : ONESHOT_MAX;
  if (fits && nb <= per_oneshot && nb <= most) return SHOAL_REDUCE_ONESHOT;
  return SHOAL_REDUCE_RSAG;
}

/* Segment j of n of [0, nelems) starts here. */
static inline size_t seg_lo(size_t nelems, int j, int n) {
  return (size_t)((unsigned __int128)nelems * (unsigned)j / (unsigned)n);
}

static inline int wrap(int x, int n) { return x >= n ? x - n : x < 0 ? x + n : x; }

/* out = in(0) op in(1) op ... op in(n-1), in this order; out may be any input. */
#define COMBINE(op, out, n, IN, c)                                                                                    \
  do {                                                                                                                 \
    op(out, IN(0), IN(1), c);                                                                                          \
    for (int s_ = 2; s_ < (n); s_++) op(out, out, IN(s_), c);                                                          \
  } while (0)

static void reduce_oneshot(shoal_team_t *t, char *dest, const char *src, size_t nelems, size_t esize,
                           shoal_coll_op_fn op, const char *routine) {
  int n = t->size, me = t->rank;
  size_t half = t->scratch_size / 2, per = (half / (size_t)n) & ~(size_t)(SHOAL_CACHELINE - 1), m = per / esize;
  for (size_t off = 0; off < nelems; off += m) {
    size_t c = nelems - off < m ? nelems - off : m, cb = c * esize;
    char *h = t->scratch + (t->round++ & 1) * half;
    const char *mine = src + off * esize;
    uint64_t v = ++t->seq;
    for (int k = 1; k < n; k++) {
      int r = wrap(me + k, n);
      shoal_coll_put_post(t, r, h + (size_t)me * per + t->delta[r], mine, cb, v, routine);
    }
    if (dest == src) { /* in place: the output must not be an input */
      memcpy(h + (size_t)me * per, mine, cb);
      mine = h + (size_t)me * per;
    }
    for (int k = 1; k < n; k++) shoal_coll_wait(t, wrap(me - k, n), v);
#define IN(s) ((s) == me ? mine : h + (size_t)(s) * per)
    COMBINE(op, dest + off * esize, n, IN, c);
#undef IN
  }
}

static void reduce_rdbl(shoal_team_t *t, char *dest, const char *src, size_t nelems, size_t esize,
                        shoal_coll_op_fn op, const char *routine) {
  int n = t->size, me = t->rank, steps = __builtin_ctz((unsigned)n);
  size_t half = t->scratch_size / 2, per = (half / (size_t)steps) & ~(size_t)(SHOAL_CACHELINE - 1), m = per / esize;
  for (size_t off = 0; off < nelems; off += m) {
    size_t c = nelems - off < m ? nelems - off : m, cb = c * esize;
    char *h = t->scratch + (t->round++ & 1) * half, *out = dest + off * esize;
    const char *cur = src + off * esize;
    for (int k = 0; k < steps; k++) {
      int p = me ^ (1 << k);
      uint64_t v = ++t->seq;
      char *in = h + (size_t)k * per;
      shoal_coll_put_post(t, p, in + t->delta[p], cur, cb, v, routine);
      shoal_coll_wait(t, p, v);
      if (me < p)
        op(out, cur, in, c);
      else
        op(out, in, cur, c);
      cur = out;
    }
  }
}

/* halving (power-of-two teams): recursive halving, then recursive doubling (Rabenseifner's reduce-scatter +
 * allgather), in chunks of c elements that fit half the scratch. Segment j (seg_lo of n) ends on member j. Halving
 * step k (b = n >> (k + 1)): the member keeps the half of its current segments [me & ~(2b - 1), + 2b) that holds its
 * own, puts the other half of its partial (the source at step 0, dest after) into region k of partner me ^ b's
 * scratch half, and combines the partner's half of its kept segments into its dest (lower team number on the left);
 * then doubling, steps in reverse: its finished segments go straight into the partner's dest. Per member
 * 2 (n - 1) / n of the vector leaves and (n - 1) / n is combined (rdbl: log2 n of each), in 2 log2 n pairwise steps
 * per chunk; each segment's result is computed by one member only, so every member gets the same bits. A partner's
 * dest range is written in doubling step k only after that partner's halving step k put it away from there (its
 * signal came after its put), and every step's partner is the same in the next chunk, whose exchange says the
 * partner is done with this chunk's scratch half (coll.h). In place works: the source's part a step puts away is
 * never written before the partner's doubling step brings the result back. */
/* Elements of a chunk of halving on a power-of-two team of n with half bytes of scratch (0: none fits): region k
 * holds at most seg_lo(c, b, n) + 1 elements from a cache line's start, so c plus that slack fits the half. */
static inline size_t halving_chunk(int n, size_t half, size_t esize) {
  size_t slack = (size_t)__builtin_ctz((unsigned)n) * (SHOAL_CACHELINE + esize);
  return half > slack ? (half - slack) / esize : 0;
}

static void reduce_halving(shoal_team_t *t, char *dest, const char *src, size_t nelems, size_t esize,
                           shoal_coll_op_fn op, const ptrdiff_t *dd, const char *routine) {
  int n = t->size, me = t->rank, steps = __builtin_ctz((unsigned)n);
  size_t half = t->scratch_size / 2, m = halving_chunk(n, half, esize);
  for (size_t off = 0; off < nelems; off += m) {
    size_t c = nelems - off < m ? nelems - off : m;
    char *h = t->scratch + (t->round++ & 1) * half, *out = dest + off * esize;
    const char *cur = src + off * esize;
    size_t roff = 0;
    for (int k = 0; k < steps; k++) {
      int b = n >> (k + 1), p = me ^ b, keep = me & ~(b - 1), give = p & ~(b - 1);
      size_t klo = seg_lo(c, keep, n), khi = seg_lo(c, keep + b, n);
      size_t glo = seg_lo(c, give, n), ghi = seg_lo(c, give + b, n);
      char *in = h + roff;
      uint64_t v = ++t->seq;
      shoal_coll_put_post(t, p, in + t->delta[p], cur + glo * esize, (ghi - glo) * esize, v, routine);
      shoal_coll_wait(t, p, v);
      if (khi > klo) {
        if (me < p)
          op(out + klo * esize, cur + klo * esize, in, khi - klo);
        else
          op(out + klo * esize, in, cur + klo * esize, khi - klo);
      }
      roff += ((seg_lo(c, b, n) + 1) * esize + SHOAL_CACHELINE - 1) & ~(size_t)(SHOAL_CACHELINE - 1);
      cur = out;
    }
    for (int k = steps - 1; k >= 0; k--) {
      int b = n >> (k + 1), p = me ^ b, mine = me & ~(b - 1);
      size_t lo = seg_lo(c, mine, n), hi = seg_lo(c, mine + b, n);
      uint64_t v = ++t->seq;
      shoal_coll_put_post(t, p, out + lo * esize + dd[p], out + lo * esize, (hi - lo) * esize, v, routine);
      shoal_coll_wait(t, p, v);
    }
  }
}

/* Teams on several nodes (t->hier): through each node's leader, in chunks of oneshot's slots (a slot per team rank
 * in half the scratch). Each member copies its chunk into its slot in its leader's scratch (shared memory) and
 * signals; the leader combines its node's chunks in team order into its own slot, copies that partial result into
 * its slot in every other leader's scratch (the only data between nodes: a vector per node instead of one per PE)
 * and signals; then every leader combines the leaders' partials in leader order (the same bits everywhere), writes
 * dest and copies it into its members' dest (they entered: they signalled) before releasing them. Halves alternate
 * per chunk; a member writes a half again two chunks later only after its leader released it in between, and a
 * leader only after every leader's signal of the chunk in between, sent once their reads of the half were done. */
static void reduce_hier(shoal_team_t *t, char *dest, const char *src, size_t nelems, size_t esize,
                        shoal_coll_op_fn op, const ptrdiff_t *dd, const char *routine) {
  int n = t->size, me = t->rank, nm = t->nmates;
  size_t half = t->scratch_size / 2, per = (half / (size_t)n) & ~(size_t)(SHOAL_CACHELINE - 1), m = per / esize;
  for (size_t off = 0; off < nelems; off += m) {
    size_t c = nelems - off < m ? nelems - off : m, cb = c * esize;
    char *h = t->scratch + (t->round++ & 1) * half, *out = dest + off * esize;
    const char *mine = src + off * esize;
    uint64_t v = ++t->seq;
    if (t->lead_idx < 0) { /* a member: its chunk to the leader, then the result comes back into dest */
      int l = t->mates[0];
      memcpy(h + (size_t)me * per + t->delta[l], mine, cb);
      shoal_coll_post(t, l, v);
      shoal_coll_wait(t, l, v);
      continue;
    }
    char *part = h + (size_t)me * per;
    for (int k = 0; k < nm; k++) shoal_coll_wait(t, t->mates[k], v);
    if (nm) {
#define IN(s) ((s) == 0 ? mine : h + (size_t)t->mates[(s) - 1] * per)
      COMBINE(op, part, nm + 1, IN, c);
#undef IN
    } else {
      memcpy(part, mine, cb);
    }
    int nl = t->nlead, li = t->lead_idx;
    for (int k = 1; k < nl; k++) { /* every put first: the first post waits for all their sources at once */
      int r = t->lead[wrap(li + k, nl)];
      shoal_coll_put(t, r, part + t->delta[r], part, cb, routine);
    }
    for (int k = 1; k < nl; k++) shoal_coll_post(t, t->lead[wrap(li + k, nl)], v);
    for (int k = 1; k < nl; k++) shoal_coll_wait(t, t->lead[wrap(li - k, nl)], v);
#define IN(q) (h + (size_t)t->lead[q] * per)
    COMBINE(op, out, nl, IN, c);
#undef IN
    for (int k = 0; k < nm; k++) {
      int r = t->mates[k];
      memcpy(out + dd[r], out, cb);
      shoal_coll_post(t, r, v);
    }
  }
}

/* Member me owns segment me: it combines that segment of every member's source (only the owner ever reads a
 * segment of any source, so every dest may be the source: in place works) block by block in a private buffer that
 * stays in cache, and copies each block into every member's dest. Two exchanges: "sources ready" and "your dest has
 * my segment" (which also says that this member's source is no longer read). No scratch: active sets use it too. */
/* Segment s of member r's source (at p through the delta table): in place, or fetched into buf from a member of
 * another node. */
static inline const char *rsag_in(const shoal_team_t *t, int r, const char *p, char *buf, size_t n,
                                  const char *routine) {
  if (!shoal_coll_far(t, r)) return p;
  shoal_coll_get(t, r, buf, p, n, routine);
  return buf;
}

static void reduce_rsag(shoal_team_t *t, char *dest, const char *src, size_t nelems, size_t esize,
                        shoal_coll_op_fn op, const ptrdiff_t *sd, const ptrdiff_t *dd, const char *routine) {
  int n = t->size, me = t->rank;
  _Alignas(SHOAL_CACHELINE) char tmp[16 << 10];
  char *far[2] = {NULL, NULL}; /* two inputs of one op, fetched from members of other nodes */
  if (SHOAL_UNLIKELY(t->remote) && (!(far[0] = malloc(sizeof tmp)) || !(far[1] = malloc(sizeof tmp))))
    shoal_fatal(routine, "out of memory for %zu bytes of buffers", 2 * sizeof tmp);
  size_t lo = seg_lo(nelems, me, n), hi = seg_lo(nelems, me + 1, n), step = sizeof tmp / esize;
  shoal_coll_exchange(t, ++t->seq);
  for (size_t off = lo; off < hi; off += step) {
    size_t c = hi - off < step ? hi - off : step;
    const char *seg = src + off * esize;
#define IN(s) (SHOAL_LIKELY(!t->remote) ? seg + sd[s] : rsag_in(t, s, seg + sd[s], far[(s) & 1], c * esize, routine))
    COMBINE(op, tmp, n, IN, c);
#undef IN
    for (int k = 0; k < n; k++) {
      int r = wrap(me + k, n);
      shoal_coll_put(t, r, dest + off * esize + dd[r], tmp, c * esize, routine);
    }
    if (SHOAL_UNLIKELY(t->remote)) shoal_tl_quiet(routine); /* tmp is refilled next: the puts must have left it */
  }
  shoal_coll_exchange(t, ++t->seq);
  free(far[0]);
  free(far[1]);
}

/* rsag on teams with members on other nodes (t->remote, with scratch): pushed, in chunks of n slots of half the
 * scratch (a slot per member, as oneshot's). Per chunk member me puts segment r of its source into slot me of member
 * r's scratch and signals (v); once every member's segment me has come it combines them in team order into its own
 * slot me (no member writes there), then puts that result into segment me of every member's dest and signals (v + 1).
 * Per member 2 (n - 1) / n of the vector leaves (oneshot: n - 1 vectors, rdbl: log2 n), and every put is followed
 * by its own flag: no get, no quiet. A member's signal v of chunk c + 1 comes after its v + 1 of chunk c, so a half is
 * written again (chunk c + 2) only once every member has combined from it; the last chunk's v + 1 from every member
 * means every segment is in dest (each member's writes to a PE arrive in order, as its signals say). */
static void reduce_rsag_push(shoal_team_t *t, char *dest, const char *src, size_t nelems, size_t esize,
                             shoal_coll_op_fn op, const ptrdiff_t *dd, const char *routine) {
  int n = t->size, me = t->rank;
  size_t half = t->scratch_size / 2, per = (half / (size_t)n) & ~(size_t)(SHOAL_CACHELINE - 1), m = per / esize;
  size_t span = m * (size_t)n; /* elements per chunk: at most m in each segment */
  uint64_t v = 0;
  for (size_t off = 0; off < nelems; off += span) {
    size_t c = nelems - off < span ? nelems - off : span;
    char *h = t->scratch + (t->round++ & 1) * half, *mine = h + (size_t)me * per;
    v = t->seq + 1;
    t->seq += 2;
    for (int k = 1; k < n; k++) {
      int r = wrap(me + k, n);
      size_t lo = seg_lo(c, r, n), hi = seg_lo(c, r + 1, n);
      shoal_coll_put_post(t, r, mine + t->delta[r], src + (off + lo) * esize, (hi - lo) * esize, v, routine);
    }
    for (int k = 1; k < n; k++) shoal_coll_wait(t, wrap(me - k, n), v);
    size_t lo = seg_lo(c, me, n), cm = seg_lo(c, me + 1, n) - lo;
    const char *own = src + (off + lo) * esize;
    if (cm) {
#define IN(s) ((s) == me ? own : h + (size_t)(s) * per)
      COMBINE(op, mine, n, IN, cm);
#undef IN
    }
    char *out = dest + (off + lo) * esize;
    for (int k = 1; k < n; k++) {
      int r = wrap(me + k, n);
      shoal_coll_put_post(t, r, out + dd[r], mine, cm * esize, v + 1, routine);
    }
    memcpy(out, mine, cm * esize);
  }
  for (int k = 1; k < n; k++) shoal_coll_wait(t, wrap(me - k, n), v + 1);
}

void shoal_coll_reduce(shoal_team_t *t, void *dest, const void *src, size_t nelems, size_t esize,
                       shoal_coll_op_fn op, const char *routine) {
  int n = t->size;
  size_t nb = nelems * esize;
  const ptrdiff_t *dd = shoal_coll_deltas(t, dest, nb, 0, routine, "dest");
  const ptrdiff_t *sd = shoal_coll_deltas(t, src, nb, 1, routine, "source");
  if (n == 1) {
    if (dest != src) memcpy(dest, src, nb);
    return;
  }
  if (t->aset) { /* no scratch */
    reduce_rsag(t, dest, src, nelems, esize, op, sd, dd, routine);
    return;
  }
  int algo = shoal_coll_algo(SHOAL_COLL_REDUCE, routine);
  bool pow2 = !(n & (n - 1));
  size_t half = t->scratch_size / 2;
  size_t per_oneshot = (half / (size_t)n) & ~(size_t)(SHOAL_CACHELINE - 1);
  size_t per_rdbl = pow2 ? (half / (size_t)__builtin_ctz((unsigned)n)) & ~(size_t)(SHOAL_CACHELINE - 1) : 0;
  /* On teams spanning nodes the automatic choice goes through the nodes, except where rdbl would run past
   * HIER_RDBL_MIN on nodes that are runs of the same power-of-two number of members: there rdbl's first steps stay
   * inside a node and its last ones send from every PE at once (4 PEs, 2 per node: the leaders' funnel took 1.2x
   * rdbl's time at 16 KiB, 1.6x at 64 KiB; at 2-4 KiB 0.7-0.9x). Elsewhere every rdbl step may cross nodes. */
  bool rdbl_wins = t->pow2_runs && pow2 && n >= 4 && nb > HIER_RDBL_MIN && nb <= RDBL_MAX && per_rdbl >= esize;
  if (SHOAL_UNLIKELY(t->hier) && per_oneshot >= esize &&
      ((algo == SHOAL_ALGO_AUTO && !rdbl_wins) || algo == SHOAL_REDUCE_HIER)) {
    reduce_hier(t, dest, src, nelems, esize, op, dd, routine);
    return;
  }
  if (algo == SHOAL_ALGO_AUTO || algo == SHOAL_REDUCE_HIER) {
    bool rdbl = pow2 && n >= 4;
    size_t oneshot_max = rdbl ? ONESHOT_MAX / 2 : shoal_coll_oversubscribed ? ONESHOT_MAX : ONESHOT_RSAG_MAX;
    if (SHOAL_UNLIKELY(t->remote))
      algo = reduce_far_choice(n, nb, esize, per_oneshot, per_rdbl);
    else
      algo = nb <= oneshot_max && nb <= per_oneshot     ? SHOAL_REDUCE_ONESHOT
           : rdbl && nb <= RDBL_MAX && per_rdbl >= esize ? SHOAL_REDUCE_RDBL
                                                         : SHOAL_REDUCE_RSAG;
  }
  /* Forced algorithms that cannot run here (non-power-of-two rdbl, elements larger than a slot) use rsag. */
  if ((algo == SHOAL_REDUCE_ONESHOT && per_oneshot < esize) || (algo == SHOAL_REDUCE_RDBL && per_rdbl < esize))
    algo = SHOAL_REDUCE_RSAG;
  if (algo == SHOAL_REDUCE_HALVING && (!pow2 || !halving_chunk(n, half, esize))) algo = SHOAL_REDUCE_RSAG;
  if (algo == SHOAL_REDUCE_ONESHOT)
    reduce_oneshot(t, dest, src, nelems, esize, op, routine);
  else if (algo == SHOAL_REDUCE_HALVING)
    reduce_halving(t, dest, src, nelems, esize, op, dd, routine);
  else if (algo == SHOAL_REDUCE_RDBL)
    reduce_rdbl(t, dest, src, nelems, esize, op, routine);
  else if (t->remote && per_oneshot >= esize)
    reduce_rsag_push(t, dest, src, nelems, esize, op, dd, routine);
  else
    reduce_rsag(t, dest, src, nelems, esize, op, sd, dd, routine);
}

/* ---- operators: one function per (type, operation) ---- */
#define SHOAL_OP_and(a, b) ((a) & (b))
#define SHOAL_OP_or(a, b) ((a) | (b))
#define SHOAL_OP_xor(a, b) ((a) ^ (b))
#define SHOAL_OP_max(a, b) ((a) > (b) ? (a) : (b))
#define SHOAL_OP_min(a, b) ((a) < (b) ? (a) : (b))
#define SHOAL_OP_sum(a, b) ((a) + (b))
#define SHOAL_OP_prod(a, b) ((a) * (b))
#define SHOAL_DEF_OP(T, N, OP)                                                                                        \
  static void op_##N##_##OP(void *o, const void *a, const void *b, size_t n) {                                        \
    T *x = o;                                                                                                          \
    const T *y = a, *z = b;                                                                                            \
    for (size_t i = 0; i < n; i++) x[i] = (T)SHOAL_OP_##OP(y[i], z[i]);                                               \
  }
SHOAL_REDUCE_ALL(SHOAL_DEF_OP)
/* The active-set table adds bitwise operations on the signed types. */
SHOAL_TOALL_BITWISE_TYPES(SHOAL_DEF_OP, and)
SHOAL_TOALL_BITWISE_TYPES(SHOAL_DEF_OP, or)
SHOAL_TOALL_BITWISE_TYPES(SHOAL_DEF_OP, xor)

/* ---- API ---- */
static void reduce_any(const char *routine, shoal_team_t *t, void *dest, const void *source, size_t nreduce,
                       size_t esize, shoal_coll_op_fn op, int gtype, int gop) {
  size_t nb = shoal_coll_bytes(routine, nreduce, esize);
  shoal_coll_debug_check(t, routine, "nreduce", nreduce, NULL, 0);
  if (!nb) return;
  shoal_coll_check_overlap(routine, dest, nb, source, nb, true);
  /* Device-heap buffers: the GPU kernels (issue 16); host stores cannot reach device memory. */
  if (SHOAL_UNLIKELY(shoal_coll_gpu_reduce(t, dest, source, nreduce, gtype, gop, NULL, routine) == SHOAL_OK)) return;
  shoal_coll_host_only(routine, dest, source);
  shoal_coll_reduce(t, dest, source, nreduce, esize, op, routine);
}

#define SHOAL_DEF_REDUCE(T, N, OP)                                                                                    \
  int shmem_##N##_##OP##_reduce(shmem_team_t team, T *dest, const T *source, size_t nreduce) {                        \
    static const char routine[] = "shmem_" #N "_" #OP "_reduce";                                                      \
    reduce_any(routine, shoal_team_get(team, routine), dest, source, nreduce, sizeof(T), op_##N##_##OP,               \
               SHOAL_RT_N_##N, SHOAL_RED_N_##OP);                                                                     \
    return 0;                                                                                                          \
  }
SHOAL_REDUCE_ALL(SHOAL_DEF_REDUCE)

#define SHOAL_DEF_TOALL(T, N, OP)                                                                                     \
  void shmem_##N##_##OP##_to_all(T *dest, const T *source, int nreduce, int PE_start, int logPE_stride, int PE_size,  \
                                 T *pWrk, long *pSync) {                                                              \
    static const char routine[] = "shmem_" #N "_" #OP "_to_all";                                                      \
    shoal_team_t *t = shoal_aset_get(PE_start, logPE_stride, PE_size, pSync, routine);                                \
    if (SHOAL_UNLIKELY(nreduce < 0)) shoal_fatal(routine, "nreduce: %d must be >= 0", nreduce);                       \
    reduce_any(routine, t, dest, source, (size_t)nreduce, sizeof(T), op_##N##_##OP, SHOAL_RT_N_##N, SHOAL_RED_N_##OP); \
  }
SHOAL_TOALL_ALL(SHOAL_DEF_TOALL)
