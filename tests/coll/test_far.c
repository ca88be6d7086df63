/*
 * test_far.c - small broadcasts, fcollects and alltoalls on a team whose members are all on different nodes cost
 * one message each way and no round trip (issue 12: collectives over ofi; coll.h, "Members on other nodes").
 *
 * Run with SHOAL_NODE_PES=1 (every PE its own node: libfabric between all of them). Per call, counted on each PE
 * through the transport (shoal_g.tl_ops, and libfabric's reads):
 *   broadcast: down a binomial tree, a put and a signal per child (the root ceil(log2 n) of them, not n - 1 as
 *     before: fails at 4 and 5 PEs without the tree), a member no read (it does not get the root's staging) and at
 *     most an entry signal and a "done"; from one root, once around the staging ring, one "done" per 64 calls
 *     (batched: the root does not wait on them);
 *   fcollect, alltoall, sum_reduce: a put and a signal per other member, no entry signal (3 per member before).
 * Where the transport carries the flag with the data (shoal_tl_ofi_info_t.cq_signal: remote CQ data, issue 29), a
 * put and its signal are one operation: one per member and call (two before), crowded jobs included.
 * TEST_FAR_CQ_SIGNAL=0 splits them (a provider without CQ data).
 * Values are checked on every call, back to back with no barrier between calls: roots change every third call (the
 * staging halves pass between roots), sources are rewritten right after each call returns, alltoall also with a
 * strided dest, and sizes past the scratch slot take the push path with the entry rule. Then reductions, fcollects,
 * alltoalls and broadcasts in turn with no barrier (scratch and staging halves passing between collectives), on
 * WORLD and on a team of the even PEs created and destroyed three times. Counts are skipped under
 * SHMEM_DEBUG (its argument checks add barriers) and when WORLD is not such a team (SHOAL_NODE_PES overridden).
 * A sum of 160000 longs per PE reads nothing through the transport and takes few chunks (sum_reduce_big).
 * Also: the shm transport's signal refuses a misaligned flag as the ofi one does (each PE prints that one line).
 */
#include "coll_core.h"

#include "transport.h"

#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CALLS 60
#define BIG 20000 /* longs per block: past WORLD's staging half (broadcast: push with entry signals) */
#define MID 6000  /* longs: a broadcast staged in a run of many slots (WORLD's staging: 256 KiB across nodes) */
#define MAXPE 16

static long src[MAXPE * BIG], dst[MAXPE * BIG * 2];
static int me, npes, fails;
static bool counting;
static long per_put; /* operations per put with its signal: 1 where the transport carries the flag with the data */

static int calls_for(size_t nel) { return nel > 64 ? 4 : CALLS; }

static uint64_t ofi_reads(void) {
  shoal_tl_ofi_info_t i;
  shoal_tl_ofi_query(&i);
  return i.reads;
}

static long val(int pe, int c, size_t i) { return (long)pe * 1000003 + (long)c * 131 + (long)i; }

static void check_count(const char *what, size_t nel, long sent, long want, uint64_t reads) {
  if (!counting) return;
  if (sent != want && fails++ < 10)
    fprintf(stderr, "test_far: PE %d: %s of %zu longs: %ld operations through the transport in %d calls, want %ld\n",
            me, what, nel, sent, calls_for(nel), want);
  if (reads && fails++ < 10)
    fprintf(stderr, "test_far: PE %d: %s of %zu longs: %lu reads through the transport, want 0\n", me, what, nel,
            (unsigned long)reads);
}

static void bcast_check(int c, size_t nel, int root) {
  for (size_t i = 0; i < nel; i++)
    if (dst[i] != val(root, c, i) && fails++ < 10)
      fprintf(stderr, "test_far: PE %d: broadcast %d of %zu longs from PE %d: element %zu is %ld, want %ld\n", me, c,
              nel, root, i, dst[i], val(root, c, i));
}

/* Roots change every third call: each PE sends a put and a signal per child in the root's tree and call; a member
 * at most its entry signal (a slot last staged by another root) and a "done" (on a root change) more. */
static void bcast(size_t nel) {
  uint64_t ops = shoal_g.tl_ops, reads = ofi_reads();
  long want = 0, members = 0;
  bool fits = nel * sizeof(long) <= ((shoal_team_t *)SHMEM_TEAM_WORLD)->stage_half;
  for (int c = 0; c < calls_for(nel); c++) {
    int root = (c / 3) % npes;
    for (size_t i = 0; i < nel; i++) src[i] = val(root, c, i);
    shmem_long_broadcast(SHMEM_TEAM_WORLD, dst, src, nel, root);
    bcast_check(c, nel, root);
    want += per_put * shoal_coll_tree_kids((me - root + npes) % npes, npes);
    members += me != root;
  }
  long sent = (long)(shoal_g.tl_ops - ops);
  if (fits && (sent < want || sent > want + 2 * members) && counting && fails++ < 10)
    fprintf(stderr, "test_far: PE %d: broadcast of %zu longs: %ld operations through the transport in %d calls, want "
            "%ld plus at most 2 per call as a member (%ld)\n", me, nel, sent, calls_for(nel), want, members);
  if (fits) check_count("broadcast", nel, want, want, ofi_reads() - reads);
  shmem_barrier_all();
}

/* From one root, twice around WORLD's staging ring (slots staged by other roots before: entry signals on the first
 * pass): on the second a member sends one "done" per ACK_EVERY calls (session 30: one per 8 calls before; each cost
 * the root a wake-up of its progress thread) besides a put and a signal per child in the tree and call, as the
 * root does. Values checked on every call, sources rewritten right after it returns. */
#define ACK_EVERY 64 /* coll_bcast.c's BCAST_FAR_ACK_EVERY, at most half the ring's rounds */
static void bcast_one_root(int root) {
  int ring = ((shoal_team_t *)SHMEM_TEAM_WORLD)->stage_slots, every = ring / 2 < ACK_EVERY ? ring / 2 : ACK_EVERY;
  uint64_t ops = 0;
  for (int c = 0; c < 2 * ring; c++) {
    if (c == ring) ops = shoal_g.tl_ops;
    src[0] = val(root, c, 0);
    shmem_long_broadcast(SHMEM_TEAM_WORLD, dst, src, 1, root);
    bcast_check(c, 1, root);
  }
  long sent = (long)(shoal_g.tl_ops - ops);
  long kids = per_put * shoal_coll_tree_kids((me - root + npes) % npes, npes) * ring;
  long want = kids + (me == root ? 0 : (ring + every - 1) / every + 1);
  if ((me == root ? sent != want : sent > want || sent < kids) && counting && fails++ < 10)
    fprintf(stderr, "test_far: PE %d: %d broadcasts of 1 long from PE %d: %ld operations through the transport, want "
            "%ld to %ld\n", me, ring, root, sent, me == root ? want : kids, want);
  shmem_barrier_all();
}

static void fcollect(size_t nel) {
  uint64_t ops = shoal_g.tl_ops, reads = ofi_reads();
  for (int c = 0; c < calls_for(nel); c++) {
    for (size_t i = 0; i < nel; i++) src[i] = val(me, c, i);
    shmem_long_fcollect(SHMEM_TEAM_WORLD, dst, src, nel);
    for (int p = 0; p < npes; p++)
      for (size_t i = 0; i < nel; i++)
        if (dst[(size_t)p * nel + i] != val(p, c, i) && fails++ < 10)
          fprintf(stderr, "test_far: PE %d: fcollect %d of %zu longs: element %zu of PE %d is %ld, want %ld\n", me,
                  c, nel, i, p, dst[(size_t)p * nel + i], val(p, c, i));
  }
  if (nel <= 64) check_count("fcollect", nel, (long)(shoal_g.tl_ops - ops), per_put * (npes - 1) * CALLS,
                             ofi_reads() - reads);
  shmem_barrier_all();
}

/* d holds call c's sum of nel longs over every PE: each wrong element is a line (10 at most). */
static void sum_check(const long *d, int c, size_t nel) {
  for (size_t i = 0; i < nel; i++) {
    long want = 0;
    for (int p = 0; p < npes; p++) want += val(p, c, i);
    if (d[i] != want && fails++ < 10)
      fprintf(stderr, "test_far: PE %d: sum_reduce %d of %zu longs: element %zu is %ld, want %ld\n", me, c, nel, i,
              d[i], want);
  }
}

/* Sums of nel longs (oneshot at these sizes: a put and a signal per other member, into its scratch). */
static void sum_reduce(size_t nel) {
  static long rsrc[64], rdst[64];
  uint64_t ops = shoal_g.tl_ops, reads = ofi_reads();
  for (int c = 0; c < CALLS; c++) {
    for (size_t i = 0; i < nel; i++) rsrc[i] = val(me, c, i);
    shmem_long_sum_reduce(SHMEM_TEAM_WORLD, rdst, rsrc, nel);
    sum_check(rdst, c, nel);
  }
  check_count("sum_reduce", nel, (long)(shoal_g.tl_ops - ops), per_put * (npes - 1) * CALLS, ofi_reads() - reads);
  shmem_barrier_all();
}

/* Sums of RBIG longs (1.25 MB: past one-shot's sizes and WORLD's scratch), pushed: no read through the transport
 * (rsag, before, read every far member's source with gets: 4-5x slower over net), and few chunks: WORLD's scratch
 * is SHOAL_TEAM_SCRATCH_WORLD_FAR on such jobs and each chunk costs a member at most 2 (n - 1) puts with their
 * signals (halving 2 log2 n, rsag pushed 2 (n - 1)). Before session 30 a 256 KiB scratch and one-shot in chunks of
 * a slot: 20 operations per call at 2 PEs, 60 at 3, 120 at 4 (bounds here: 6, 12, 18). */
#define RBIG 160000
static void sum_reduce_big(void) {
  uint64_t reads = ofi_reads(), ops = shoal_g.tl_ops, bytes = shoal_g.tl_put_bytes;
  for (int c = 0; c < 3; c++) {
    for (size_t i = 0; i < RBIG; i++) src[i] = val(me, c, i);
    shmem_long_sum_reduce(SHMEM_TEAM_WORLD, dst, src, RBIG);
    sum_check(dst, c, RBIG);
  }
  uint64_t r = ofi_reads() - reads, b = shoal_g.tl_put_bytes - bytes;
  /* Bytes each member sends: 2 (n - 1) / n of the vector per call on a power-of-two team (halving; rdbl, before,
   * log2 n: 2 at 4 PEs against 1.5), and other teams' rsag pushed the same; plus 1% for the segments' rounding. */
  double vec = (double)RBIG * sizeof(long), most_b = 3 * vec * 2 * (npes - 1) / npes * 1.01;
  if (counting && npes > 2 && (double)b > most_b && fails++ < 10)
    fprintf(stderr, "test_far: PE %d: 3 sum_reduce of %d longs: %llu bytes put through the transport, want at most "
            "%.0f (2 (n - 1) / n of the vector per call)\n", me, RBIG, (unsigned long long)b, most_b);
  long sent = (long)(shoal_g.tl_ops - ops), half = SHOAL_TEAM_SCRATCH_WORLD_FAR / 2;
  long chunks = ((long)(RBIG * sizeof(long)) + half - 1) / half, most = 3 * per_put * 2 * (npes - 1) * chunks;
  size_t have = ((shoal_team_t *)SHMEM_TEAM_WORLD)->scratch_size;
  if (counting && have != SHOAL_TEAM_SCRATCH_WORLD_FAR && fails++ < 10)
    fprintf(stderr, "test_far: PE %d: WORLD's scratch is %zu bytes, want %zu on a job across nodes\n", me, have,
            (size_t)SHOAL_TEAM_SCRATCH_WORLD_FAR);
  if (counting && sent > most && fails++ < 10)
    fprintf(stderr, "test_far: PE %d: 3 sum_reduce of %d longs: %ld operations through the transport, want at most "
            "%ld (2 (n - 1) per chunk of half WORLD's scratch)\n", me, RBIG, sent, most);
  if (counting && r && fails++ < 10)
    fprintf(stderr, "test_far: PE %d: sum_reduce of %d longs: %lu reads through the transport, want 0 (pushed)\n", me,
            RBIG, (unsigned long)r);
  /* in place, an odd length: segments of unequal lengths, the parts of the source put away and brought back */
  for (size_t i = 0; i < RBIG - 3; i++) dst[i] = val(me, 3, i);
  shmem_long_sum_reduce(SHMEM_TEAM_WORLD, dst, dst, RBIG - 3);
  sum_check(dst, 3, RBIG - 3);
  shmem_barrier_all();
}

/* The collectives' put with signal (shoal_tl_put_signal, one message) of 16 and 32 KiB, its source rewritten as
 * soon as it returns: past inject_size the data is copied into the endpoint's bounce arena (BOUNCE_SIG_MAX, ofi.h),
 * so the call does not wait for its write; the counters are read only when the 256 KiB arena fills (session 30:
 * before, a wait per call from 8 KiB on). The receiver checks every block once its signal says it is there. */
#define PSIG_CALLS 24
static uint64_t psig_flag;
static void put_signal_copied(bool check_waits) {
  const size_t lens[2] = {2048, 4096}; /* longs: 16 and 32 KiB */
  long *blk = src + MAXPE * BIG - 4096, *out = dst; /* PSIG_CALLS blocks of at most 32 KiB: within dst */
  int to = (me + 1) % npes, from = (me + npes - 1) % npes;
  shoal_tl_ofi_info_t oi;
  shoal_tl_ofi_query(&oi);
  uint64_t waits = oi.counter_waits;
  size_t bytes = 0;
  for (int c = 0; c < PSIG_CALLS; c++) {
    size_t nel = lens[c & 1];
    for (size_t i = 0; i < nel; i++) blk[i] = val(me, c, i);
    shoal_tl_put_signal("test_far", to, out + (size_t)c * 4096, blk, nel * sizeof(long), &psig_flag, (uint64_t)c + 1);
    memset(blk, 0, nel * sizeof(long)); /* the source is free on return */
    bytes += nel * sizeof(long);
  }
  shoal_tl_ofi_query(&oi);
  uint64_t w = oi.counter_waits - waits, most = bytes / (256 << 10) + 2; /* the arena may start nearly full */
  if (check_waits && w > most && fails++ < 10)
    fprintf(stderr, "test_far: PE %d: %d put_signals of 16-32 KiB read the completion counters %lu times, want at most "
            "%lu (copied into the bounce arena, no wait for each write)\n", me, PSIG_CALLS, (unsigned long)w,
            (unsigned long)most);
  shmem_signal_wait_until(&psig_flag, SHMEM_CMP_EQ, PSIG_CALLS);
  for (int c = 0; c < PSIG_CALLS; c++)
    for (size_t i = 0; i < lens[c & 1]; i++)
      if (out[(size_t)c * 4096 + i] != val(from, c, i) && fails++ < 10) {
        fprintf(stderr, "test_far: PE %d: put_signal %d from PE %d: element %zu is %ld, want %ld\n", me, c, from, i,
                out[(size_t)c * 4096 + i], val(from, c, i));
        break;
      }
  shmem_barrier_all();
  psig_flag = 0;
  shmem_barrier_all();
}

/* Block j of PE p: val(p, c, j * nel + i); dest strided by dstride elements. */
static void alltoall(size_t nel, ptrdiff_t dstride) {
  uint64_t ops = shoal_g.tl_ops, reads = ofi_reads();
  for (int c = 0; c < calls_for(nel); c++) {
    for (size_t i = 0; i < (size_t)npes * nel; i++) src[i] = val(me, c, i);
    if (dstride == 1)
      shmem_long_alltoall(SHMEM_TEAM_WORLD, dst, src, nel);
    else
      shmem_long_alltoalls(SHMEM_TEAM_WORLD, dst, src, dstride, 1, nel);
    for (int p = 0; p < npes; p++)
      for (size_t i = 0; i < nel; i++) {
        long got = dst[((size_t)p * nel + i) * (size_t)dstride], want = val(p, c, (size_t)me * nel + i);
        if (got != want && fails++ < 10)
          fprintf(stderr, "test_far: PE %d: alltoall%s %d of %zu longs: element %zu from PE %d is %ld, want %ld\n",
                  me, dstride == 1 ? "" : "s", c, nel, i, p, got, want);
      }
  }
  if (nel <= 64) check_count(dstride == 1 ? "alltoall" : "alltoalls", nel, (long)(shoal_g.tl_ops - ops),
                             per_put * (npes - 1) * CALLS, ofi_reads() - reads);
  shmem_barrier_all();
}

/* Back to back on team t (its members' own numbering), no barrier: a sum reduction (scratch rounds, oneshot),
 * fcollect, alltoall and broadcast in turn, so that the scratch halves pass between collectives and the staging
 * halves between roots. Values only. */
static long msrc[MAXPE * 8], mdst[MAXPE * 8];
static void mixed(shmem_team_t t, const char *name, int calls) {
  int tm = shmem_team_my_pe(t), tn = shmem_team_n_pes(t);
  for (int c = 0; c < calls; c++) {
    int kind = c % 4, root = (c / 4) % tn;
    for (int i = 0; i < tn * 8; i++) msrc[i] = val(tm, c, (size_t)i);
    switch (kind) {
    case 0: shmem_long_sum_reduce(t, mdst, msrc, 8); break;
    case 1: shmem_long_fcollect(t, mdst, msrc, 8); break;
    case 2: shmem_long_alltoall(t, mdst, msrc, 8); break;
    default: shmem_long_broadcast(t, mdst, msrc, 8, root); break;
    }
    for (int p = 0; p < (kind == 0 || kind == 3 ? 1 : tn); p++)
      for (size_t i = 0; i < 8; i++) {
        long want = 0, got = mdst[(size_t)p * 8 + i];
        if (kind == 0)
          for (int q = 0; q < tn; q++) want += val(q, c, i);
        else
          want = kind == 1 ? val(p, c, i) : kind == 2 ? val(p, c, (size_t)tm * 8 + i) : val(root, c, i);
        if (got != want && fails++ < 10)
          fprintf(stderr, "test_far: PE %d: %s, back to back, call %d (%s): element %zu of block %d is %ld, want "
                  "%ld\n", me, name, c, kind == 0 ? "sum_reduce" : kind == 1 ? "fcollect" : kind == 2 ? "alltoall"
                  : "broadcast", i, p, got, want);
      }
  }
}

int main(void) {
  /* TEST_FAR_CQ_SIGNAL=0: puts and their signals as two messages, as on a provider without remote CQ data. */
  const char *cqs = getenv("TEST_FAR_CQ_SIGNAL");
  bool split = cqs && !strcmp(cqs, "0");
  if (split) shoal_tl_ofi_test_force(SHOAL_TL_OFI_FORCE_NO_CQ_SIGNAL);
  shmem_init();
  me = shmem_my_pe();
  npes = shmem_n_pes();
  if (!shoal_g.tl || npes > MAXPE) {
    if (me == 0) printf("test_far: no transport between nodes runs (libfabric not built in), or too many PEs: skip\n");
    shmem_finalize();
    return 77;
  }
  /* The shm transport's signal refuses a misaligned flag with its own line (not "not mapped here"). */
  if (shoal_tl_shm_ops.signal(SHOAL_SPACE_HEAP, me, 4, 1) != SHOAL_ERR_INVAL && fails++ < 10)
    fprintf(stderr, "test_far: PE %d: the shm transport's signal at a misaligned offset: not SHOAL_ERR_INVAL\n", me);
  const char *dbg = getenv("SHMEM_DEBUG"), *np = getenv("SHOAL_NODE_PES"), *tr = getenv("SHOAL_TRANSPORT");
  bool far = ((shoal_team_t *)SHMEM_TEAM_WORLD)->all_far;
  counting = far && (!dbg || !*dbg || !strcmp(dbg, "0"));
  if (npes > 1 && !far && ((np && !strcmp(np, "1")) || (tr && !strcmp(tr, "ofi"))) && fails++ < 10)
    fprintf(stderr, "test_far: PE %d: every PE is its own node here, but WORLD is not a team of far members\n", me);
  if (me == 0 && !far) printf("test_far: WORLD has members on one node: values only\n");
  /* libfabric's tcp providers (tcp;ofi_rxm and net) carry 8 bytes of remote CQ data: there a put and its signal must
   * be one message (issue 29), crowded jobs too (more PEs than CPUs), unless the test split them. */
  shoal_tl_ofi_info_t oi;
  shoal_tl_ofi_query(&oi);
  per_put = oi.cq_signal ? 1 : 2;
  bool cq_prov = oi.provider && (!strncmp(oi.provider, "tcp", 3) || !strncmp(oi.provider, "net", 3));
  bool want_one = !split;
  if (far && cq_prov && oi.cq_signal != want_one && fails++ < 10)
    fprintf(stderr, "test_far: PE %d: provider %s%s: put with signal as %s, want %s\n", me, oi.provider,
            shoal_g.crowded ? " (crowded job)" : "", oi.cq_signal ? "one message" : "two",
            want_one ? "one message" : "two");
  shmem_barrier_all();
  /* A quiet with nothing issued since the last one but the runtime's flag writes reads no completion counter (each
   * read is a provider progress call): nor does shmem_barrier_all's, which follows the previous barrier's signals. */
  shmem_quiet();
  shoal_tl_ofi_query(&oi);
  uint64_t waits = oi.counter_waits;
  for (int i = 0; i < 100; i++) shmem_quiet();
  for (int i = 0; i < 100; i++) shmem_barrier_all();
  shoal_tl_ofi_query(&oi);
  if (far && oi.counter_waits != waits && fails++ < 10)
    fprintf(stderr, "test_far: PE %d: 100 quiets and 100 barrier_alls with nothing in flight read the counters %lu "
            "times, want 0\n", me, (unsigned long)(oi.counter_waits - waits));
  size_t sizes[] = {1, 7, 64, MID, BIG};
  for (int z = 0; z < 5; z++) {
    bcast(sizes[z]);
    if (z == 0) bcast_one_root(npes - 1);
    fcollect(sizes[z]);
    if (sizes[z] <= 64) sum_reduce(sizes[z]);
    alltoall(sizes[z], 1);
    if (sizes[z] <= 64) alltoall(sizes[z], 2);
  }
  sum_reduce_big();
  put_signal_copied(counting && cq_prov && oi.cq_signal && oi.bounce);
  mixed(SHMEM_TEAM_WORLD, "WORLD", 80);
  /* A team of every other PE, created, used, destroyed and created again (most likely on the same slot: a new
   * team's staging and scratch must not take a slow member's reads of the old one's). */
  for (int rep = 0; rep < 3 && npes >= 3; rep++) {
    shmem_team_t t;
    if (shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (npes + 1) / 2, NULL, 0, &t) && fails++ < 10)
      fprintf(stderr, "test_far: PE %d: shmem_team_split_strided failed\n", me);
    if (t != SHMEM_TEAM_INVALID) {
      mixed(t, "team of even PEs", 40);
      shmem_team_destroy(t);
    }
  }
  shmem_barrier_all();
  if (me == 0 && !fails)
    printf("test_far: %d PEs: broadcast, fcollect, sum_reduce and alltoall across nodes, counts and values OK\n", npes);
  shmem_finalize();
  return fails ? 1 : 0;
}
