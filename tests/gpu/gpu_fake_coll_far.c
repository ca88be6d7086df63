/* gpu_fake_coll_far.c - GPU collectives on teams with members on other nodes (issue 31 part 3,
 * collectives/gpu/coll_gpu_far.c), on the fake backend: fcollect, alltoall, broadcast (team and _on_stream forms)
 * and reductions of every kind of element type on device-heap buffers, WORLD and a split team, sizes from 1 byte to
 * more than a reduction's chunk, in place too; every value checked. Run with members on other nodes
 * (SHOAL_NODE_PES=1 or 2, SHOAL_TRANSPORT=ofi on lo): the test fails if WORLD is not such a team. Before part 3 the
 * same calls stopped with "the GPU kernels reach the device heaps of one node only" (or "kernels not available"). */
#include "coll_core.h"
#include "heap_gpu.h"
#include "gpu/coll_gpu.h"

#include "gpu_fake_backend.h"
#include "coll_half.h"

#include <complex.h>

static int fails, me, npes, traffic_checks;

/* Through the nodes (coll_gpu_far.c, SHOAL_COLL_GPU_FAR): on a team with two or more members on some node, a member
 * that is not its node's leader sends nothing through the transport for an fcollect or a reduction, and as a
 * broadcast's root one put per other node (shoal_g.tl_ops counts one per far put or get; near members' heaps are the
 * copy engine's, and the hierarchical barrier goes to the leader by shared memory). The flat form sends its blocks to
 * (and reads its chunks from) every far member: counted too, so that the count is seen to count. Leaders are not
 * checked (their barrier signals cross nodes). */
static uint64_t ops0;
static bool traffic_on(void) { /* a barrier other than the hierarchical one signals far PEs from every member */
  const char *b = getenv("SHOAL_COLL_BARRIER_ALGO");
  return !b || !strcmp(b, "auto") || !strcmp(b, "hierarchical");
}
static void traffic_start(void) { ops0 = __atomic_load_n(&shoal_g.tl_ops, __ATOMIC_RELAXED); }
enum { TR_FCOLLECT, TR_BCAST_ROOT, TR_BCAST_OTHER, TR_REDUCE };
static void traffic_check(shmem_team_t team, int kind, const char *what, size_t nb) {
  const char *algo = getenv("SHOAL_COLL_GPU_FAR");
  const bool flat = algo && !strcmp(algo, "flat");
  shoal_team_t *t = shoal_team_get(team, "test");
  if (!t->hier || t->lead_idx >= 0 || !traffic_on()) return;
  long sent = (long)(__atomic_load_n(&shoal_g.tl_ops, __ATOMIC_RELAXED) - ops0), far = 0;
  for (int r = 0; r < t->size; r++) far += t->lnode[r] != t->lnode[t->rank];
  long want = kind == TR_BCAST_OTHER ? 0 : kind == TR_BCAST_ROOT ? (flat ? far : t->nlead - 1) : flat ? far : 0;
  bool ok = kind == TR_REDUCE && flat ? sent >= far : sent == want; /* a flat reduction: far x its chunks */
  CHECK(ok, "%s of %zu B (%s): PE %d, not its node's leader, sent %ld operations through the transport, expected %s%ld",
        what, nb, flat ? "flat" : "through the nodes", me, sent, kind == TR_REDUCE && flat ? ">= " : "", want);
  traffic_checks++;
}

/* Byte i of team member r's contribution in call c. */
static unsigned char pat(int r, size_t i, int c) { return (unsigned char)(r * 37 + i * 11 + c * 5 + 1); }

static void *dmalloc(size_t n) {
  void *p = shmem_malloc_with_hints(n ? n : 1, SHMEMX_MALLOC_DEVICE);
  CHECK(p && shoal_gpu_heap_owns(p), "device allocation of %zu bytes", n);
  return p;
}

/* fcollect, alltoall and broadcast of nb bytes per member on team (its rank tr of tn), host and on-stream forms. */
static void movers(shmem_team_t team, size_t nb, int c) {
  int tr = shmem_team_my_pe(team), tn = shmem_team_n_pes(team);
  /* allocations are collective over every PE, members of team or not */
  unsigned char *src = dmalloc(nb * (size_t)npes), *dst = dmalloc(nb * (size_t)npes);
  for (int form = 0; form < 2 && tr >= 0; form++) {
    /* fcollect */
    for (size_t i = 0; i < nb; i++) src[i] = pat(tr, i, c);
    memset(dst, 0xee, nb * (size_t)tn);
    traffic_start();
    int rc = form ? shmemx_fcollectmem_on_stream(team, dst, src, nb, NULL) : shmem_fcollectmem(team, dst, src, nb);
    CHECK(rc == 0, "fcollect rc %d", rc);
    traffic_check(team, TR_FCOLLECT, "fcollect", nb);
    size_t bad = 0;
    for (int r = 0; r < tn; r++)
      for (size_t i = 0; i < nb; i++) bad += dst[(size_t)r * nb + i] != pat(r, i, c);
    CHECK(!bad, "fcollect %zu B (form %d): %zu bytes wrong", nb, form, bad);
    /* alltoall: block j of member r goes to block r of member j */
    for (int j = 0; j < tn; j++)
      for (size_t i = 0; i < nb; i++) src[(size_t)j * nb + i] = pat(tr * 8 + j, i, c);
    memset(dst, 0xee, nb * (size_t)tn);
    rc = form ? shmemx_alltoallmem_on_stream(team, dst, src, nb, NULL) : shmem_alltoallmem(team, dst, src, nb);
    CHECK(rc == 0, "alltoall rc %d", rc);
    bad = 0;
    for (int r = 0; r < tn; r++)
      for (size_t i = 0; i < nb; i++) bad += dst[(size_t)r * nb + i] != pat(r * 8 + tr, i, c);
    CHECK(!bad, "alltoall %zu B (form %d): %zu bytes wrong", nb, form, bad);
    /* broadcast from the first and the last member: every dest, the root's too (spec 1.5) */
    for (int root = 0; root < tn; root += tn > 1 ? tn - 1 : 1) {
      for (size_t i = 0; i < nb; i++) src[i] = pat(tr + 100, i, c);
      memset(dst, 0xee, nb + 1);
      traffic_start();
      rc = form ? shmemx_broadcastmem_on_stream(team, dst, src, nb, root, NULL)
                : shmem_broadcastmem(team, dst, src, nb, root);
      CHECK(rc == 0, "broadcast rc %d", rc);
      traffic_check(team, tr == root ? TR_BCAST_ROOT : TR_BCAST_OTHER, "broadcast", nb);
      bad = 0;
      for (size_t i = 0; i < nb; i++) bad += dst[i] != pat(root + 100, i, c);
      CHECK(!bad && dst[nb] == 0xee, "broadcast %zu B from %d (form %d): %zu bytes wrong, past end %#x", nb, root,
            form, bad, dst[nb]);
      if (tn == 1) break;
    }
  }
  shmem_free(dst);
  shmem_free(src);
}

/* Reductions: member r's element i is a small value exact in every type, the expected result computed here in the
 * same order (team order). */
static long val(int r, size_t i) { return (long)((r * 7 + i * 3) % 11) + 1; }

#define RED_CHECK(T, NAME, OP, EXPECT, nel, inplace)                                                                  \
  do {                                                                                                                 \
    size_t n_ = (nel);                                                                                                 \
    T *s_ = dmalloc(n_ * sizeof(T)), *d_ = (inplace) ? s_ : dmalloc(n_ * sizeof(T));                                   \
    size_t bad_ = 0;                                                                                                   \
    for (size_t i = 0; i < n_ && tr >= 0; i++) s_[i] = (T)val(tr, i);                                                  \
    for (size_t i = 0; i < n_ && tr >= 0 && !(inplace); i++) d_[i] = (T)-1;                                            \
    traffic_start();                                                                                                   \
    if (tr >= 0) shmem_##NAME##_##OP##_reduce(team, d_, s_, n_);                                                       \
    if (tr >= 0) traffic_check(team, TR_REDUCE, #NAME "_" #OP "_reduce", n_ * sizeof(T));                              \
    for (size_t i = 0; i < n_ && tr >= 0; i++) {                                                                       \
      long e_ = val(0, i);                                                                                             \
      for (int r = 1; r < tn; r++) e_ = EXPECT(e_, val(r, i));                                                         \
      bad_ += d_[i] != (T)e_;                                                                                          \
    }                                                                                                                  \
    CHECK(!bad_, #NAME "_" #OP "_reduce of %zu (in place %d): %zu elements wrong", n_, (int)(inplace), bad_);          \
    if (!(inplace)) shmem_free(d_);                                                                                    \
    shmem_free(s_);                                                                                                    \
  } while (0)
#define E_SUM(a, b) ((a) + (b))
#define E_PROD(a, b) ((a) * (b))
#define E_MAX(a, b) ((a) > (b) ? (a) : (b))
#define E_MIN(a, b) ((a) < (b) ? (a) : (b))
#define E_XOR(a, b) ((a) ^ (b))

static void reductions(shmem_team_t team) {
  int tr = shmem_team_my_pe(team), tn = shmem_team_n_pes(team);
  RED_CHECK(int, int, sum, E_SUM, 1, false);
  RED_CHECK(int, int, sum, E_SUM, 1001, true);
  RED_CHECK(long, long, max, E_MAX, 37, false);
  RED_CHECK(short, short, min, E_MIN, 9, false);
  RED_CHECK(unsigned char, uchar, xor, E_XOR, 333, false);
  RED_CHECK(double, double, sum, E_SUM, 515, false);
  RED_CHECK(float, float, prod, E_PROD, 5, false);
  /* more than one 4 MiB chunk (8-byte elements), in place: chunks are written only after every member read them */
  RED_CHECK(long, long, sum, E_SUM, ((size_t)4 << 20) / 8 + 1001, true);
  /* half and bfloat16: accumulated in float, rounded once (sums of small integers are exact) */
  size_t n = 77;
  shmemx_half_t *hs = dmalloc(n * 2), *hd = dmalloc(n * 2);
  shmemx_bfloat16_t *bs = dmalloc(n * 2), *bd = dmalloc(n * 2);
  for (size_t i = 0; i < n && tr >= 0; i++) {
    float v = (float)val(tr, i);
    uint16_t h = f2h(v), b = f2bf(v);
    memcpy(&hs[i], &h, 2);
    memcpy(&bs[i], &b, 2);
  }
  if (tr >= 0) shmemx_half_sum_reduce_on_stream(team, hd, hs, n, NULL);
  if (tr >= 0) shmemx_bfloat16_max_reduce_on_stream(team, bd, bs, n, NULL);
  size_t bad = 0;
  for (size_t i = 0; i < n && tr >= 0; i++) {
    long es = 0, em = 0;
    for (int r = 0; r < tn; r++) es += val(r, i), em = E_MAX(em, val(r, i));
    uint16_t h, b;
    memcpy(&h, &hd[i], 2);
    memcpy(&b, &bd[i], 2);
    bad += h2f(h) != (float)es || bf2f(b) != (float)em;
  }
  CHECK(!bad, "half sum / bfloat16 max of %zu: %zu elements wrong", n, bad);
  /* complex double sum */
  double _Complex *cs = dmalloc(n * sizeof *cs), *cd = dmalloc(n * sizeof *cd);
  for (size_t i = 0; i < n && tr >= 0; i++) cs[i] = (double)val(tr, i) + (double)val(tr, i + 1) * 1.0i;
  if (tr >= 0) shmem_complexd_sum_reduce(team, cd, cs, n);
  bad = 0;
  for (size_t i = 0; i < n && tr >= 0; i++) {
    double re = 0, im = 0;
    for (int r = 0; r < tn; r++) re += (double)val(r, i), im += (double)val(r, i + 1);
    bad += cd[i] != re + im * 1.0i;
  }
  CHECK(!bad, "complexd sum of %zu: %zu elements wrong", n, bad);
  shmem_free(cd);
  shmem_free(cs);
  shmem_free(bd);
  shmem_free(bs);
  shmem_free(hd);
  shmem_free(hs);
}

int main(void) {
  setenv("SHOAL_DEVICE_SYMMETRIC_SIZE", "32M", 1);
  shoal_gpu_test_backend = &fake;
  shmem_init();
  me = shmem_my_pe();
  npes = shmem_n_pes();
  CHECK(shmemx_gpu_available() == 1, "fake GPU not in use");
  shoal_team_t *w = shoal_team_get(SHMEM_TEAM_WORLD, "test");
  CHECK(w->remote || npes == 1, "WORLD has no member on another node: run with SHOAL_NODE_PES and SHOAL_TRANSPORT=ofi");
  shmem_team_t odd = SHMEM_TEAM_INVALID; /* PEs 1 .. npes-1: a split team, other ranks than world's */
  if (npes >= 3) shmem_team_split_strided(SHMEM_TEAM_WORLD, 1, 1, npes - 1, NULL, 0, &odd);
  static const size_t sizes[] = {1, 7, 4099, 300001};
  for (int c = 0; c < 4; c++) {
    movers(SHMEM_TEAM_WORLD, sizes[c], c);
    if (npes >= 3) movers(odd, sizes[c], c + 10); /* every PE: the allocations are collective */
  }
  reductions(SHMEM_TEAM_WORLD);
  if (npes >= 3) reductions(odd);
  if (odd != SHMEM_TEAM_INVALID) shmem_team_destroy(odd);
  /* nodes of 2 PEs (SHOAL_NODE_PES=2) with shared memory inside (not SHOAL_TRANSPORT=ofi: there every PE is its own
   * node for the collectives) and 3 PEs or more: WORLD goes through the nodes, and its members that are not leaders
   * checked the traffic of every call */
  const char *np = getenv("SHOAL_NODE_PES"), *tl = getenv("SHOAL_TRANSPORT");
  if (np && !strcmp(np, "2") && !(tl && !strcmp(tl, "ofi")) && npes >= 3) {
    CHECK(w->hier, "WORLD with nodes of 2 PEs is not a team through the nodes");
    if (w->lead_idx < 0 && traffic_on()) CHECK(traffic_checks >= 20, "only %d calls' traffic checked", traffic_checks);
  }
  static int all, sum_fails;
  all = fails;
  shmem_int_sum_reduce(SHMEM_TEAM_WORLD, &sum_fails, &all, 1);
  if (!me) printf("gpu_fake_coll_far: %d PEs: %s (%d failures)\n", npes, sum_fails ? "FAIL" : "ok", sum_fails);
  shmem_finalize();
  return fails ? 1 : 0;
}
