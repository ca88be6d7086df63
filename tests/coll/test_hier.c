/*
 * test_hier.c - barriers, broadcasts and reductions of a job on several nodes go through each node's leader (issue
 * 12: "collectives on teams that span nodes use the node-local shm path inside a node and ofi between nodes").
 *
 * Nodes are simulated with SHOAL_NODE_PES=k (each run of k PEs maps each other's heaps, libfabric between runs). For
 * every barrier form (shmem_sync_all, shmem_barrier_all, shmem_team_sync on WORLD, the active-set shmem_sync) the
 * test counts the operations each PE sends through the transport (shoal_g.tl_ops) over ROUNDS calls and compares
 * with what the algorithm must send: a node's leader ceil(log2 nodes) per call, every other PE none. Under
 * SHOAL_COLL_BARRIER_ALGO=dissemination (or when every PE is its own node) it expects the flat dissemination
 * barrier's count, PE by PE. Each form also runs rounds of value checks (every PE writes its slot on every PE,
 * quiet, barrier, reads every slot), so a barrier that lets a PE through early fails here too.
 * Reductions on WORLD (one chunk; several chunks of the scratch; in place too) and broadcasts from three roots are
 * counted the same way (exact counts for every PE) and every value is checked; back-to-back reductions without a
 * barrier between them (the scratch halves' reuse), and a double sum whose bits depend on the order of the
 * additions, compared across PEs. Counts are skipped under SHMEM_DEBUG (its argument checks add barriers).
 */
#include "coll_core.h" /* WORLD's scratch_size: the reduction's chunks */

#include "transport.h"

#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROUNDS 50
#define MAXPE 64

#define LONGN 70000 /* longs: three or more chunks of WORLD's scratch at 3+ PEs (1 MiB on jobs across nodes) */

static long slot[2][MAXPE];
static long red_src[LONGN], red_dst[LONGN];
static long pSync[SHMEM_SYNC_SIZE];
static int me, npes, k, fails;
static bool cyclic;
static bool counting; /* off under SHMEM_DEBUG */
static double dsrc[3][64], ddst[2][64];
static long dbits[MAXPE];

/* Half of WORLD's scratch: its size depends on whether the job spans nodes (team.h). */
static size_t world_half(void) { return ((shoal_team_t *)SHMEM_TEAM_WORLD)->scratch_size / 2; }

static int nnodes(void) { return (npes + k - 1) / k; }
/* SHOAL_NODE_MAP=cyclic deals the ranks round robin over the nodes; a node's leader is its lowest rank. */
static int node(int pe) { return cyclic ? pe % nnodes() : pe / k; }
static bool leader(int pe) { return cyclic ? pe < nnodes() : pe % k == 0; }
/* Reads this PE issued through libfabric so far (gets, fetching AMOs, a quiet's flush reads). */
static uint64_t ofi_reads(void) {
  shoal_tl_ofi_info_t i;
  shoal_tl_ofi_query(&i);
  return i.reads;
}

static int ceil_log2(int n) {
  int r = 0;
  while ((1 << r) < n) r++;
  return r;
}

/* Atomics PE me must send through the transport per barrier. */
static long expected(bool flat) {
  int nodes = (npes + k - 1) / k;
  if (nodes == 1) return 0;
  if (!flat && nodes < npes) return leader(me) ? ceil_log2(nodes) : 0;
  long c = 0; /* dissemination over every PE: round d signals me + d */
  for (int d = 1; d < npes; d <<= 1) c += node((me + d) % npes) != node(me);
  return c;
}

static void sync_form(int form) {
  switch (form) {
  case 0: shmem_sync_all(); break;
  case 1: shmem_barrier_all(); break;
  case 2: shmem_team_sync(SHMEM_TEAM_WORLD); break;
  default: shmem_sync(0, 0, npes, pSync); break;
  }
}
static const char *const form_name[] = {"shmem_sync_all", "shmem_barrier_all", "shmem_team_sync(WORLD)",
                                        "shmem_sync(active set)"};

int main(void) {
  for (int i = 0; i < SHMEM_SYNC_SIZE; i++) pSync[i] = SHMEM_SYNC_VALUE;
  shmem_init();
  me = shmem_my_pe();
  npes = shmem_n_pes();
  if (!shoal_g.tl) {
    if (me == 0) printf("test_hier: no transport between nodes runs (libfabric not built in, or one node): skip\n");
    shmem_finalize();
    return 77;
  }
  if (npes > MAXPE) {
    shmem_finalize();
    return 77;
  }
  const char *np = getenv("SHOAL_NODE_PES"), *tr = getenv("SHOAL_TRANSPORT"), *al = getenv("SHOAL_COLL_BARRIER_ALGO");
  k = np ? atoi(np) : npes;
  const char *nm = getenv("SHOAL_NODE_MAP");
  cyclic = nm && !strcmp(nm, "cyclic");
  if (tr && !strcmp(tr, "ofi")) k = 1;
  bool flat = al && !strcmp(al, "dissemination");
  const char *dbg = getenv("SHMEM_DEBUG");
  counting = !dbg || !*dbg || !strcmp(dbg, "0");
  shmem_barrier_all();
  for (int form = 0; form < 4; form++) {
    uint64_t before = shoal_g.tl_ops;
    for (int r = 0; r < ROUNDS; r++) sync_form(form);
    long sent = (long)(shoal_g.tl_ops - before), want = expected(flat) * ROUNDS;
    if (counting && sent != want && fails++ < 10)
      fprintf(stderr, "test_hier: PE %d (node %d of %d PEs each): %s: %ld operations through the transport in %d "
              "calls, want %ld (%s)\n", me, node(me), k, form_name[form], sent, ROUNDS, want,
              flat ? "flat dissemination" : !leader(me) ? "a member only signals its leader" : "a node's leader");
    for (int r = 0; r < ROUNDS; r++) {
      long *s = slot[r & 1], v = ((long)form << 40) + ((long)r << 16);
      for (int p = 0; p < npes; p++) shmem_long_p(&s[me], v + me, p);
      shmem_quiet();
      sync_form(form);
      for (int p = 0; p < npes; p++)
        if (s[p] != v + p && fails++ < 10)
          fprintf(stderr, "test_hier: PE %d: %s round %d: slot of PE %d holds %#lx, want %#lx\n", me, form_name[form],
                  r, p, (unsigned long)s[p], (unsigned long)(v + p));
    }
  }
  /* Reductions: element i of PE p is p * 1000003 + i * 7 + r; the sum over PEs is checked for every element. */
  long sum_pe = (long)npes * (npes - 1) / 2;
  size_t sizes[] = {1, 5, 300, LONGN};
  for (int z = 0; z < 4; z++)
    for (int inplace = 0; inplace < 2; inplace++) {
      size_t nel = sizes[z];
      int rounds = nel > 1000 ? 3 : 10;
      uint64_t before = shoal_g.tl_ops;
      for (int r = 0; r < rounds; r++) {
        for (size_t i = 0; i < nel; i++) red_src[i] = (long)me * 1000003 + (long)i * 7 + r;
        for (size_t i = 0; i < nel; i++) red_dst[i] = -1;
        long *dst = inplace ? red_src : red_dst;
        shmem_long_sum_reduce(SHMEM_TEAM_WORLD, dst, red_src, nel);
        for (size_t i = 0; i < nel; i++) {
          long want = sum_pe * 1000003 + (long)npes * ((long)i * 7 + r);
          if (dst[i] != want && fails++ < 10)
            fprintf(stderr, "test_hier: PE %d: sum_reduce of %zu longs%s round %d: element %zu is %ld, want %ld\n", me,
                    nel, inplace ? " in place" : "", r, i, dst[i], want);
        }
        shmem_barrier_all(); /* the next round rewrites red_src, which a flat algorithm may still read */
      }
      /* A leader sends its node's partial (a put and a signal) to every other leader per chunk of the scratch's
       * slots (coll_reduce.c: half the scratch over the team's size); these sizes are all outside rdbl's range. */
      long sent = (long)(shoal_g.tl_ops - before) - rounds * expected(flat);
      int nodes = (npes + k - 1) / k;
      size_t per = (world_half() / (size_t)npes) & ~(size_t)63, m = per / sizeof(long);
      long want = !leader(me) ? 0 : 2L * (nodes - 1) * (long)((nel + m - 1) / m) * rounds;
      if (counting && !flat && nodes > 1 && nodes < npes && sent != want && fails++ < 10)
        fprintf(stderr, "test_hier: PE %d: sum_reduce of %zu longs: %ld operations through the transport in %d calls, "
                "want %ld (%s)\n", me, nel, sent, rounds, want,
                !leader(me) ? "a member only talks to its leader" : "a leader sends its partial to every other leader");
    }
  /* Broadcasts from three roots: values, and the operations through the transport per call: the root one put and
   * one signal to each other node's leader, such a leader one signal (it entered) to the root, nobody else any. */
  int roots[3] = {0, 1, npes - 1};
  for (int z = 0; z < 2; z++)
    for (int q = 0; q < 3; q++) {
      size_t nel = z ? LONGN : 3;
      int root = roots[q], rounds = z ? 3 : 10, nodes = (npes + k - 1) / k;
      uint64_t before = shoal_g.tl_ops, reads = ofi_reads();
      for (int r = 0; r < rounds; r++) {
        for (size_t i = 0; i < nel; i++) red_src[i] = (long)root * 1000003 + (long)i * 11 + r;
        for (size_t i = 0; i < nel; i++) red_dst[i] = -1;
        shmem_long_broadcast(SHMEM_TEAM_WORLD, red_dst, red_src, nel, root);
        for (size_t i = 0; i < nel; i++)
          if (red_dst[i] != (long)root * 1000003 + (long)i * 11 + r && fails++ < 10)
            fprintf(stderr, "test_hier: PE %d: broadcast of %zu longs from %d round %d: element %zu is %ld\n", me,
                    nel, root, r, i, red_dst[i]);
      }
      long sent = (long)(shoal_g.tl_ops - before);
      long want = me == root ? 2L * (nodes - 1) : leader(me) && node(me) != node(root) ? 1 : 0;
      if (counting && !flat && nodes > 1 && nodes < npes && sent != want * rounds && fails++ < 10)
        fprintf(stderr, "test_hier: PE %d: broadcast of %zu longs from PE %d: %ld operations through the transport in "
                "%d calls, want %ld\n", me, nel, root, sent, rounds, want * rounds);
      /* The signal after the data is ordered behind it on the wire: no flush read (a round trip) per signal. */
      reads = ofi_reads() - reads;
      if (counting && !flat && nodes > 1 && nodes < npes && reads && fails++ < 10)
        fprintf(stderr, "test_hier: PE %d: broadcast of %zu longs from PE %d: %lu reads through the transport in %d "
                "calls, want 0 (a signal after puts waits for nothing)\n", me, nel, root, (unsigned long)reads, rounds);
      shmem_barrier_all();
    }
  /* fcollect and alltoall on WORLD: values at sizes that fit a leader's scratch half, that take two pieces of it,
   * and that take more pieces than the automatic choice sends through the leaders (the flat push); and the
   * operations through the transport per call where the leaders carry them: a node's leader one put and one signal
   * to every other leader per piece, nobody else any. */
  {
    size_t half = world_half(), froom = half / (size_t)npes, aroom = half / ((size_t)npes * npes);
    size_t fsizes[] = {1, 7, 300, froom / sizeof(long) + 1, 4 * froom / sizeof(long)};
    size_t asizes[] = {1, 5, 100, aroom / sizeof(long) + 1, 5 * aroom / sizeof(long)};
    size_t cap = (fsizes[4] > asizes[4] ? fsizes[4] : asizes[4]) * (size_t)npes;
    long *src = shmem_malloc(cap * sizeof(long)), *dst = shmem_malloc(cap * sizeof(long));
    int nodes = nnodes();
    for (int a2a = 0; a2a < 2; a2a++)
      for (int z = 0; z < 5; z++) {
        size_t nel = a2a ? asizes[z] : fsizes[z], room = a2a ? aroom : froom, nb = nel * sizeof(long);
        if (room > 64) room &= ~(size_t)63; /* as coll.h's shoal_coll_hier_piece */
        size_t cb = nb < room ? nb : room, pieces = (nb + cb - 1) / cb;
        bool through_leaders = pieces <= (a2a ? SHOAL_COLL_HIER_A2A_PIECES : SHOAL_COLL_HIER_GATHER_PIECES);
        if (z == 3 && pieces != 2 && fails++ < 10)
          fprintf(stderr, "test_hier: PE %d: %zu longs should take 2 pieces, not %zu\n", me, nel, pieces);
        if (z == 4 && through_leaders && fails++ < 10)
          fprintf(stderr, "test_hier: PE %d: %zu longs should take the flat push (%zu pieces)\n", me, nel, pieces);
        int rounds = z >= 3 ? 3 : 10;
        uint64_t before = shoal_g.tl_ops;
        for (int r = 0; r < rounds; r++) {
          for (size_t i = 0; i < nel * (a2a ? npes : 1); i++) src[i] = (long)me * 1000003 + (long)i * 13 + r;
          for (size_t i = 0; i < nel * npes; i++) dst[i] = -1;
          if (a2a)
            shmem_long_alltoall(SHMEM_TEAM_WORLD, dst, src, nel);
          else
            shmem_long_fcollect(SHMEM_TEAM_WORLD, dst, src, nel);
          for (int p = 0; p < npes; p++)
            for (size_t i = 0; i < nel; i++) {
              long want = (long)p * 1000003 + (long)((a2a ? (size_t)me * nel : 0) + i) * 13 + r;
              if (dst[(size_t)p * nel + i] != want && fails++ < 10)
                fprintf(stderr, "test_hier: PE %d: %s of %zu longs round %d: element %zu of PE %d's block is %ld, "
                        "want %ld\n", me, a2a ? "alltoall" : "fcollect", nel, r, i, p, dst[(size_t)p * nel + i], want);
            }
        }
        long sent = (long)(shoal_g.tl_ops - before), want = leader(me) ? 2L * (nodes - 1) * (long)pieces * rounds : 0;
        if (counting && !flat && through_leaders && nodes > 1 && nodes < npes && sent != want && fails++ < 10)
          fprintf(stderr, "test_hier: PE %d: %s of %zu longs: %ld operations through the transport in %d calls, want "
                  "%ld (%s)\n", me, a2a ? "alltoall" : "fcollect", nel, sent, rounds, want,
                  leader(me) ? "a leader: one put and one signal to every other leader per piece" : "a member talks to its "
                  "leader only");
        shmem_barrier_all();
      }
    /* A team of PEs 1..npes-1 (other leaders, other places in node order), and calls back to back with reductions
     * between them, no barrier: sources rotate over three buffers, dests over two. */
    shmem_team_t team = SHMEM_TEAM_INVALID;
    if (npes > 2) shmem_team_split_strided(SHMEM_TEAM_WORLD, 1, 1, npes - 1, NULL, 0, &team);
    for (int w = 0; w < 2; w++) {
      shmem_team_t tm = w ? team : SHMEM_TEAM_WORLD;
      if (tm == SHMEM_TEAM_INVALID) continue;
      int tme = shmem_team_my_pe(tm), tn = shmem_team_n_pes(tm);
      size_t nel = 6, sz = nel * (size_t)tn;
      for (int c = 0; c < 30; c++) {
        long *sc = src + (size_t)(c % 3) * sz, *dc = dst + (size_t)(c & 1) * sz;
        int kind = c % 3;
        for (size_t i = 0; i < sz; i++) sc[i] = (long)tme * 1000003 + (long)i * 17 + c;
        if (kind == 0) shmem_long_fcollect(tm, dc, sc, nel);
        if (kind == 1) shmem_long_alltoall(tm, dc, sc, nel);
        if (kind == 2) shmem_long_sum_reduce(tm, dc, sc, sz);
        for (int p = 0; p < (kind == 2 ? 1 : tn); p++)
          for (size_t i = 0; i < (kind == 2 ? sz : nel); i++) {
            long want = kind == 0 ? (long)p * 1000003 + (long)i * 17 + c
                        : kind == 1 ? (long)p * 1000003 + (long)((size_t)tme * nel + i) * 17 + c
                                    : (long)tn * (tn - 1) / 2 * 1000003 + (long)tn * ((long)i * 17 + c);
            long got = dc[(size_t)p * nel + i];
            if (got != want && fails++ < 10)
              fprintf(stderr, "test_hier: PE %d: %s, back to back call %d (%s): element %zu of block %d is %ld, "
                      "want %ld\n", me, w ? "team of PEs 1.." : "WORLD", c,
                      kind == 0 ? "fcollect" : kind == 1 ? "alltoall" : "sum_reduce", i, p, got, want);
          }
      }
    }
    if (team != SHMEM_TEAM_INVALID) shmem_team_destroy(team);
    shmem_barrier_all();
    shmem_free(src);
    shmem_free(dst);
  }
  /* collect: sizes differ per PE (PE p gives p % 4 longs, so some give none). The sizes travel as an fcollect of one
   * word through the leaders (no read of a far PE's cell: each would be a round trip); then every PE puts its block
   * and a signal to each PE of another node (just the signal when it has nothing). */
  {
    long *src = shmem_malloc(4 * sizeof(long)), *dst = shmem_malloc(4 * (size_t)npes * sizeof(long));
    int nodes = nnodes(), mates = 0;
    for (int p = 0; p < npes; p++) mates += node(p) == node(me);
    size_t mine = (size_t)me % 4, total = 0;
    for (int p = 0; p < npes; p++) total += (size_t)p % 4;
    uint64_t before = shoal_g.tl_ops;
    for (int r = 0; r < 10; r++) {
      for (size_t i = 0; i < mine; i++) src[i] = (long)me * 1000003 + (long)i * 5 + r;
      for (size_t i = 0; i < total; i++) dst[i] = -1;
      shmem_long_collect(SHMEM_TEAM_WORLD, dst, src, mine);
      size_t at = 0;
      for (int p = 0; p < npes; p++)
        for (size_t i = 0; i < (size_t)p % 4; i++, at++)
          if (dst[at] != (long)p * 1000003 + (long)i * 5 + r && fails++ < 10)
            fprintf(stderr, "test_hier: PE %d: collect round %d: element %zu of PE %d's block is %ld, want %ld\n", me,
                    r, i, p, dst[at], (long)p * 1000003 + (long)i * 5 + r);
    }
    long far = npes - mates, want = 10 * ((leader(me) ? 2L * (nodes - 1) : 0) + far * (mine ? 2 : 1));
    long sent = (long)(shoal_g.tl_ops - before);
    if (counting && !flat && nodes > 1 && nodes < npes && sent != want && fails++ < 10)
      fprintf(stderr, "test_hier: PE %d: collect: %ld operations through the transport in 10 calls, want %ld (the "
              "sizes through the leaders, then a put and a signal to each of %ld PEs of other nodes)\n", me, sent,
              want, far);
    shmem_barrier_all();
    shmem_free(src);
    shmem_free(dst);
  }
  /* A destroyed team's slot reused while a member still copies out of its leader's scratch half: T1 (a copy of
   * WORLD) does an fcollect through the leaders, its member m (on PE 0's node) sleeps 20 ms before its copy-out, and
   * meanwhile T1 is destroyed and PE 0 and a PE w of another node make T3 on the same slot, whose fcollect puts into
   * PE 0's half (a scratch push: T3 has one member per node). shmem_team_destroy must wait for m. */
  {
    int m = -1, w = -1;
    for (int p = 1; p < npes; p++) {
      if (m < 0 && node(p) == node(0)) m = p;
      if (w < 0 && node(p) != node(0)) w = p;
    }
    /* n blocks fill T1's half (8 KiB of a user team's scratch) in one piece (cache-line multiples) */
    size_t nel = ((SHOAL_TEAM_SCRATCH_USER / 2 / (size_t)npes) & ~(size_t)63) / sizeof(long);
    long *src = shmem_malloc(nel * sizeof(long)), *dst = shmem_malloc((size_t)npes * nel * sizeof(long));
    shmem_team_t P = SHMEM_TEAM_INVALID;
    if (m > 0 && w > 0) shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, w, 2, NULL, 0, &P);
    for (int it = 0; m > 0 && w > 0 && it < 5; it++) {
      shmem_team_t t1 = SHMEM_TEAM_INVALID;
      shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, npes, NULL, 0, &t1);
      for (size_t i = 0; i < nel; i++) src[i] = (long)me * 1000003 + (long)i + 7L * it;
      shoal_coll_test_copyout_delay_ns = me == m ? 20000000 : 0;
      shmem_long_fcollect(t1, dst, src, nel);
      shoal_coll_test_copyout_delay_ns = 0;
      for (int p = 0; p < npes; p++)
        for (size_t i = 0; i < nel; i++)
          if (dst[(size_t)p * nel + i] != (long)p * 1000003 + (long)i + 7L * it && fails++ < 10)
            fprintf(stderr, "test_hier: PE %d: fcollect on a team destroyed right after (round %d): element %zu of "
                    "PE %d's block is %ld, want %ld (its leader's scratch was reused under it)\n", me, it, i, p,
                    dst[(size_t)p * nel + i], (long)p * 1000003 + (long)i + 7L * it);
      shmem_team_destroy(t1);
      if (P != SHMEM_TEAM_INVALID) {
        shmem_team_t t3 = SHMEM_TEAM_INVALID;
        shmem_team_split_strided(P, 0, 1, 2, NULL, 0, &t3);
        for (size_t i = 0; i < nel; i++) src[i] = -1 - (long)i;
        shmem_long_fcollect(t3, dst, src, nel);
        shmem_team_destroy(t3);
      }
    }
    if (P != SHMEM_TEAM_INVALID) shmem_team_destroy(P);
    shmem_barrier_all();
    shmem_free(src);
    shmem_free(dst);
  }
  /* Back to back, no barrier between the calls: sources rotate over three buffers, dests over two (a PE may still
   * be in call c when another starts c + 1, never c + 2 before this one returned from c + 1). Doubles of mixed
   * magnitudes, so the sum's bits depend on the order of the additions: every PE must get the same bits. */
  for (int c = 0; c < 40; c++) {
    double *src = dsrc[c % 3], *dst = ddst[c & 1];
    for (int i = 0; i < 64; i++) src[i] = (me & 1 ? 1e16 : 1.0) * (1 + me + i + c) + 0.1 * (me + 1);
    shmem_double_sum_reduce(SHMEM_TEAM_WORLD, dst, src, 64);
    double want = 0;
    for (int p = 0; p < npes; p++) want += (p & 1 ? 1e16 : 1.0) * (1 + p + 7 + c) + 0.1 * (p + 1);
    if ((dst[7] - want > 1e3 || want - dst[7] > 1e3) && fails++ < 10) /* the order changes bits, not magnitude */
      fprintf(stderr, "test_hier: PE %d: back-to-back double sum %d: element 7 is %.17g, want about %.17g\n", me, c,
              dst[7], want);
    if (c == 39) {
      long bits;
      memcpy(&bits, &dst[7], sizeof bits);
      shmem_long_p(&dbits[me], bits, 0);
    }
  }
  shmem_barrier_all();
  if (me == 0)
    for (int p = 1; p < npes; p++)
      if (dbits[p] != dbits[0] && fails++ < 10)
        fprintf(stderr, "test_hier: PE %d's double sum has bits %#lx, PE 0's %#lx: every PE must get the same bits\n",
                p, (unsigned long)dbits[p], (unsigned long)dbits[0]);
  shmem_barrier_all();
  if (me == 0 && !fails)
    printf("test_hier: %d PEs, %d per node%s%s: barriers, broadcasts, reductions, fcollects and alltoalls, counts "
           "and values OK\n", npes, k, cyclic ? " (dealt round robin)" : "", flat ? " (flat algorithms forced)" : "");
  shmem_finalize();
  return fails ? 1 : 0;
}
