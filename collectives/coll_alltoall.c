/* coll_alltoall.c - alltoall and alltoalls (spec 9.9: shmem_TYPENAME_alltoall[s], shmem_alltoall[s]mem,
 * shmem_alltoall[s]32/64): block j of member i's source goes to block i of member j's dest.
 *   push (default): member i copies block j into member j's dest for j = i + 1, i + 2, ... (rotated, so every PE
 *     is written by one peer at a time), signalling each right after, then its own block; then waits for every
 *     member's signal.
 *   pairwise: the same order, but in step k a member waits for the block of member me - k before going on (one
 *     incoming and one outgoing copy per step: the pattern for networks or heavily loaded memory).
 * Both keep the entry rule (coll.h): a member first signals "entered" to every member (each writes into its dest),
 * and copies into member j's dest only once j has entered. push-unsafe: push without the entry signals. (Staging, as
 * broadcast has, measured no faster here: every member waits for every other anyway.) On teams whose other
 * members are all on other nodes (t->all_far), and for small blocks on any team (up to 2 KiB when a node is
 * crowded, 256 B otherwise), the automatic choice for contiguous sources whose blocks fit a slot of the scratch
 * pushes into the receivers' scratch (coll.h, "Pushes into scratch"): no entry signal.
 * hierarchical (the automatic choice for contiguous alltoall on teams spanning nodes with two or more members on
 *   some node, for blocks of at most SHOAL_COLL_HIER_A2A_PIECES pieces): through each node's leader, see
 *   alltoall_hier. */
#include "coll_core.h"
#include "gpu/coll_gpu.h"

#include <time.h>

/* shoal_copy_strided into member r's dest (d = its address from the delta table): through the transport for a member of
 * another node, one put per element when strided (the signal after them waits for their sources). */
static void put_block(const shoal_team_t *t, int r, char *d, const char *s, size_t nelems, size_t esize,
                      ptrdiff_t dst, ptrdiff_t sst, bool stream, const char *routine) {
  if (!shoal_coll_far(t, r)) {
    if (stream && dst == 1 && sst == 1)
      shoal_copy_stream(d, s, nelems * esize);
    else
      shoal_copy_strided(d, s, nelems, esize, dst, sst);
    return;
  }
  if (dst == 1 && sst == 1) {
    shoal_coll_put(t, r, d, s, nelems * esize, routine);
    return;
  }
  for (size_t i = 0; i < nelems; i++)
    shoal_coll_put(t, r, d + i * (size_t)dst * esize, s + i * (size_t)sst * esize, esize, routine);
}

/* Teams on several nodes (t->hier): through each node's leader, in pieces of every block such that n * n of them fit
 * a scratch half, as fcollect_hier (coll_collect.c). The half is laid out by receiving node q, then sending node p:
 * the tile of the blocks from p's members to q's starts at block nstart[q] * n + |q| * nstart[p], and holds block
 * (s -> d) at npos-relative place (d's place in q) * |p| + (s's place in p). Each PE copies its blocks into its leader's half;
 * a leader, once its members' are in, puts tile (q, p) into the leader of q with one put and one signal, waits for
 * the other leaders' tiles and releases its members; each PE copies its row (the blocks with d = itself) into its
 * dest. Between nodes: one put and one signal per pair of leaders, where push sends |p| * |q| of each. */
static void alltoall_hier(shoal_team_t *t, char *dest, const char *src, size_t nb, const char *routine) {
  int n = t->size, me = t->rank, nl = t->nlead, li = t->lead_idx, l = li < 0 ? t->mates[0] : me;
  const int *ns = t->nstart, *lnode = t->lnode;
  int p = lnode[me], mp = ns[p + 1] - ns[p], ip = t->npos[me] - ns[p];
  size_t half = t->scratch_size / 2, un = (size_t)n, cb = shoal_coll_hier_piece(half / un / un, nb);
  memcpy(dest + (size_t)me * nb, src + (size_t)me * nb, nb);
  for (size_t off = 0; off < nb; off += cb) { /* a scratch round per piece of every block */
    size_t c = nb - off < cb ? nb - off : cb;
    char *h = t->scratch + (t->round++ & 1) * half, *lh = h + t->delta[l];
    uint64_t v = ++t->seq;
    for (int d = 0; d < n; d++) { /* block (me -> d) */
      if (d == me) continue;
      int q = lnode[d], mq = ns[q + 1] - ns[q];
      size_t at = (size_t)ns[q] * un + (size_t)mq * (size_t)ns[p] + (size_t)(t->npos[d] - ns[q]) * (size_t)mp +
                  (size_t)ip;
      memcpy(lh + at * c, src + (size_t)d * nb + off, c);
    }
    if (li < 0) {
      shoal_coll_hier_member(t, l, v);
    } else {
      shoal_coll_hier_gathered(t, v);
      for (int k = 1; k < nl; k++) { /* every put first: the first signal waits for all their sources at once */
        int q = li + k < nl ? li + k : li + k - nl, r = t->lead[q], mq = ns[q + 1] - ns[q];
        char *tile = h + ((size_t)ns[q] * un + (size_t)mq * (size_t)ns[p]) * c;
        shoal_coll_put(t, r, tile + t->delta[r], tile, (size_t)mq * (size_t)mp * c, routine);
      }
      shoal_coll_hier_exchanged(t, v);
    }
    for (int s = 0; s < n; s++) { /* block (s -> me) */
      if (s == me) continue;
      int ps = lnode[s], ms = ns[ps + 1] - ns[ps];
      size_t at = (size_t)ns[p] * un + (size_t)mp * (size_t)ns[ps] + (size_t)ip * (size_t)ms +
                  (size_t)(t->npos[s] - ns[ps]);
      memcpy(dest + (size_t)s * nb + off, lh + at * c, c);
    }
  }
  t->lead_read = t->round; /* shmem_team_destroy waits for the members' last reads */
}

static inline __attribute__((always_inline)) void alltoall_impl(shoal_team_t *t, void *dest, const void *src,
                                                                  size_t nelems, size_t esize, ptrdiff_t dst,
                                                                  ptrdiff_t sst, const char *routine) {
  int n = t->size, me = t->rank;
  int algo = shoal_coll_algo(SHOAL_COLL_ALLTOALL, routine);
  /* Spans: the last element of the last block, plus one element. */
  size_t last = shoal_coll_bytes(routine, (size_t)n, nelems) - 1;
  size_t dspan = shoal_coll_bytes(routine, shoal_coll_bytes(routine, last, (size_t)dst) + 1, esize);
  size_t sspan = shoal_coll_bytes(routine, shoal_coll_bytes(routine, last, (size_t)sst) + 1, esize);
  const ptrdiff_t *dd = shoal_coll_deltas(t, dest, dspan, 0, routine, "dest");
  shoal_coll_deltas(t, src, sspan, 1, routine, "source");
  shoal_coll_check_overlap(routine, dest, dspan, src, sspan, false);
  size_t dblk = nelems * (size_t)dst * esize, sblk = nelems * (size_t)sst * esize; /* bytes between blocks */
  size_t a2a_room = t->scratch_size / 2 / (size_t)n / (size_t)n; /* a hierarchical piece (0: no scratch) */
  if (SHOAL_UNLIKELY(t->hier) && a2a_room && dst == 1 && sst == 1 &&
      (algo == SHOAL_A2A_HIER ||
       (algo == SHOAL_ALGO_AUTO && shoal_coll_hier_few(a2a_room, nelems * esize, SHOAL_COLL_HIER_A2A_PIECES)))) {
    alltoall_hier(t, dest, src, nelems * esize, routine);
    return;
  }
  if (algo == SHOAL_A2A_HIER) algo = SHOAL_ALGO_AUTO;
  if (SHOAL_UNLIKELY(shoal_coll_use_scratch_push(t, nelems * esize)) && algo == SHOAL_ALGO_AUTO && sst == 1) {
    shoal_coll_scratch_push(t, dest, dblk, dst, src, nelems * esize, nelems, esize, routine);
    return;
  }
  char *mine = (char *)dest + (size_t)me * dblk;
  const char *s = src;
  uint64_t e = t->seq + 1, v = t->seq + 2; /* entry signal, then data signal */
  t->seq += 2;
  bool pairwise = algo == SHOAL_A2A_PAIRWISE, entry = algo != SHOAL_A2A_PUSH_UNSAFE;
  bool stream = nelems * esize >= shoal_coll_stream_min / ((size_t)n * (size_t)n); /* the call's volume, not a block's */
  if (entry)
    for (int k = 1; k < n; k++) shoal_coll_post(t, me - k >= 0 ? me - k : me - k + n, e);
  for (int k = 1; k < n; k++) {
    int r = me + k < n ? me + k : me + k - n;
    if (entry) shoal_coll_wait(t, r, e);
    put_block(t, r, mine + dd[r], s + (size_t)r * sblk, nelems, esize, dst, sst, stream, routine);
    shoal_coll_post(t, r, v);
    if (pairwise) shoal_coll_wait(t, me - k >= 0 ? me - k : me - k + n, v);
  }
  put_block(t, me, mine, s + (size_t)me * sblk, nelems, esize, dst, sst, stream, routine); /* own block last */
  if (!pairwise)
    for (int k = 1; k < n; k++) shoal_coll_wait(t, me - k >= 0 ? me - k : me - k + n, v);
}

void shoal_coll_alltoall(shoal_team_t *t, void *dest, const void *src, size_t nelems, size_t esize,
                         ptrdiff_t dst, ptrdiff_t sst, const char *routine) {
  alltoall_impl(t, dest, src, nelems, esize, dst, sst, routine);
}

/* ---- API ---- */
static void a2a_any(const char *routine, shoal_team_t *t, void *dest, const void *source, ptrdiff_t dst,
                    ptrdiff_t sst, size_t nelems, size_t esize) {
  if (SHOAL_UNLIKELY(dst < 1)) shoal_fatal(routine, "dst: stride %td must be >= 1", dst);
  if (SHOAL_UNLIKELY(sst < 1)) shoal_fatal(routine, "sst: stride %td must be >= 1", sst);
  shoal_coll_debug_check(t, routine, "nelems", nelems, "dst", (uint64_t)dst);
  if (!nelems) return;
  /* Contiguous blocks on the device heap: the GPU kernels (issue 6); host stores cannot reach device memory. */
  if (dst == 1 && sst == 1 &&
      SHOAL_UNLIKELY(shoal_coll_gpu_alltoall(t, dest, source, shoal_coll_bytes(routine, nelems, esize), NULL,
                                             routine) == SHOAL_OK))
    return;
  if (dst != 1 || sst != 1) shoal_coll_host_only(routine, dest, source); /* contiguous: checked by the GPU path */
  alltoall_impl(t, dest, source, nelems, esize, dst, sst, routine);
}

#define SHOAL_DEF_A2A(T, N)                                                                                           \
  int shmem_##N##_alltoall(shmem_team_t team, T *dest, const T *source, size_t nelems) {                              \
    a2a_any("shmem_" #N "_alltoall", shoal_team_get(team, "shmem_" #N "_alltoall"), dest, source, 1, 1, nelems,       \
            sizeof(T));                                                                                               \
    return 0;                                                                                                          \
  }                                                                                                                    \
  int shmem_##N##_alltoalls(shmem_team_t team, T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst,               \
                            size_t nelems) {                                                                          \
    a2a_any("shmem_" #N "_alltoalls", shoal_team_get(team, "shmem_" #N "_alltoalls"), dest, source, dst, sst,         \
            nelems, sizeof(T));                                                                                       \
    return 0;                                                                                                          \
  }
SHOAL_RMA_TYPES(SHOAL_DEF_A2A)

int shmem_alltoallmem(shmem_team_t team, void *dest, const void *source, size_t nelems) {
  a2a_any("shmem_alltoallmem", shoal_team_get(team, "shmem_alltoallmem"), dest, source, 1, 1, nelems, 1);
  return 0;
}
int shmem_alltoallsmem(shmem_team_t team, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,
                       size_t nelems) {
  a2a_any("shmem_alltoallsmem", shoal_team_get(team, "shmem_alltoallsmem"), dest, source, dst, sst, nelems, 1);
  return 0;
}

#define SHOAL_DEF_A2A_ASET(S)                                                                                         \
  void shmem_alltoall##S(void *dest, const void *source, size_t nelems, int PE_start, int logPE_stride, int PE_size,  \
                         long *pSync) {                                                                               \
    a2a_any("shmem_alltoall" #S, shoal_aset_get(PE_start, logPE_stride, PE_size, pSync, "shmem_alltoall" #S), dest,   \
            source, 1, 1, nelems, S / 8);                                                                             \
  }                                                                                                                    \
  void shmem_alltoalls##S(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,               \
                          int PE_start, int logPE_stride, int PE_size, long *pSync) {                                 \
    a2a_any("shmem_alltoalls" #S, shoal_aset_get(PE_start, logPE_stride, PE_size, pSync, "shmem_alltoalls" #S),       \
            dest, source, dst, sst, nelems, S / 8);                                                                   \
  }
SHOAL_DEF_A2A_ASET(32)
SHOAL_DEF_A2A_ASET(64)
