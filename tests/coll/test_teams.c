/*
 * test_teams.c - team management (spec 9.4): predefined teams, SHMEM_TEAM_INVALID answers, split_strided (positive,
 * negative and zero strides, invalid triplets, splits of splits), split_2d (several xranges, checked against the
 * spec's coordinates), translate_pe, get_config, team_ptr, create_ctx, and team slots: 200 create/use/destroy cycles
 * (slots are reused; every new team works at once, whatever stale signals its slot holds), exhaustion after exactly
 * 30 live teams (nonzero on every PE, no team created), and recovery after destroying them.
 */
#include <shmem.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

static int me, npes, errors;
static long sbuf[64], dbuf[64], fbuf[2 * 64]; /* symmetric (static data) */

#define EXPECT(cond, ...)                                                                                             \
  do {                                                                                                                 \
    if (!(cond)) {                                                                                                     \
      errors++;                                                                                                        \
      fprintf(stderr, "PE %d: line %d: ", me, __LINE__);                                                              \
      fprintf(stderr, __VA_ARGS__);                                                                                    \
      fputc('\n', stderr);                                                                                             \
    }                                                                                                                  \
  } while (0)

/* Members w0 + j * ws, j < n: check the queries, then a sum reduction and an fcollect on the team. */
static void check_team(shmem_team_t t, int w0, int ws, int n, const char *what) {
  int mine = (me - w0) / (ws ? ws : 1);
  bool member = ws ? (me - w0) % ws == 0 && mine >= 0 && mine < n : me == w0;
  if (!member) {
    EXPECT(t == SHMEM_TEAM_INVALID, "%s: non-member got a team", what);
    return;
  }
  EXPECT(t != SHMEM_TEAM_INVALID, "%s: member got SHMEM_TEAM_INVALID", what);
  if (t == SHMEM_TEAM_INVALID) return;
  EXPECT(shmem_team_my_pe(t) == mine, "%s: my_pe %d, expected %d", what, shmem_team_my_pe(t), mine);
  EXPECT(shmem_team_n_pes(t) == n, "%s: n_pes %d, expected %d", what, shmem_team_n_pes(t), n);
  for (int j = 0; j < n; j++) {
    EXPECT(shmem_team_translate_pe(t, j, SHMEM_TEAM_WORLD) == w0 + j * ws, "%s: translate %d", what, j);
    EXPECT(shmem_team_translate_pe(SHMEM_TEAM_WORLD, w0 + j * ws, t) == j, "%s: translate back %d", what, j);
    EXPECT(shmem_team_ptr(t, sbuf, j) == shmem_ptr(sbuf, w0 + j * ws), "%s: team_ptr %d", what, j);
  }
  EXPECT(shmem_team_translate_pe(t, n, SHMEM_TEAM_WORLD) == -1, "%s: translate out of range", what);
  EXPECT(shmem_team_translate_pe(t, -1, SHMEM_TEAM_WORLD) == -1, "%s: translate -1", what);
  EXPECT(shmem_team_ptr(t, sbuf, n) == NULL, "%s: team_ptr out of range", what);
  for (int i = 0; i < 8; i++) sbuf[i] = me * 100 + i;
  shmem_long_sum_reduce(t, dbuf, sbuf, 8);
  for (int i = 0; i < 8; i++) {
    long want = 0;
    for (int j = 0; j < n; j++) want += (w0 + j * ws) * 100 + i;
    EXPECT(dbuf[i] == want, "%s: sum_reduce[%d] = %ld, expected %ld", what, i, dbuf[i], want);
  }
  shmem_long_fcollect(t, fbuf, sbuf, 2); /* into another buffer: others may write it while dbuf is checked */
  for (int j = 0; j < n; j++)
    EXPECT(fbuf[2 * j] == (w0 + j * ws) * 100 && fbuf[2 * j + 1] == (w0 + j * ws) * 100 + 1, "%s: fcollect %d", what,
           j);
  shmem_team_sync(t);
}

int main(void) {
  shmem_init();
  me = shmem_my_pe();
  npes = shmem_n_pes();

  /* Predefined teams and SHMEM_TEAM_INVALID. */
  check_team(SHMEM_TEAM_WORLD, 0, 1, npes, "WORLD");
  /* SHARED: the PEs whose memory this PE maps (all of one node; a run of them under SHOAL_NODE_PES, every
   * ceil(npes / k)-th PE under SHOAL_NODE_MAP=cyclic, this PE alone under SHOAL_TRANSPORT=ofi or across hosts): an
   * arithmetic sequence here. */
  int s0 = -1, sn = 0, sst = 1;
  for (int p = 0; p < npes; p++)
    if (shmem_ptr(sbuf, p)) {
      if (s0 < 0) s0 = p;
      else if (sn == 1) sst = p - s0;
      EXPECT(p == s0 + sn * sst, "PE %d is load/store reachable, but PE %d before it is not", p, s0 + sn * sst);
      sn++;
    }
  check_team(SHMEM_TEAM_SHARED, s0, sst, sn, "SHARED");
  EXPECT(shmem_team_translate_pe(SHMEM_TEAM_SHARED, (me - s0) / sst, SHMEM_TEAM_WORLD) == me, "SHARED -> WORLD");
  shmem_team_t t = SHMEM_TEAM_WORLD;
  shmem_ctx_t ctx = SHMEM_CTX_DEFAULT;
  shmem_team_config_t cfg = {.num_contexts = 3};
  EXPECT(shmem_team_my_pe(SHMEM_TEAM_INVALID) == -1, "my_pe(INVALID)");
  EXPECT(shmem_team_n_pes(SHMEM_TEAM_INVALID) == -1, "n_pes(INVALID)");
  EXPECT(shmem_team_translate_pe(SHMEM_TEAM_INVALID, 0, SHMEM_TEAM_WORLD) == -1, "translate(INVALID)");
  EXPECT(shmem_team_translate_pe(SHMEM_TEAM_WORLD, 0, SHMEM_TEAM_INVALID) == -1, "translate(, INVALID)");
  EXPECT(shmem_team_get_config(SHMEM_TEAM_INVALID, SHMEM_TEAM_NUM_CONTEXTS, &cfg) != 0, "get_config(INVALID)");
  EXPECT(shmem_team_ptr(SHMEM_TEAM_INVALID, sbuf, 0) == NULL, "team_ptr(INVALID)");
  EXPECT(shmem_team_create_ctx(SHMEM_TEAM_INVALID, 0, &ctx) != 0 && ctx == SHMEM_CTX_INVALID, "create_ctx(INVALID)");
  EXPECT(shmem_team_split_strided(SHMEM_TEAM_INVALID, 0, 1, 1, NULL, 0, &t) != 0 && t == SHMEM_TEAM_INVALID,
         "split(INVALID)");
  shmem_team_destroy(SHMEM_TEAM_INVALID); /* a no-op */

  /* split_strided: even PEs; all PEs reversed; stride 0; the last PE; a split of a split; invalid triplets. */
  shmem_team_t even, rev, zero, last, quarter;
  EXPECT(!shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (npes + 1) / 2, &cfg, SHMEM_TEAM_NUM_CONTEXTS, &even),
         "split even");
  check_team(even, 0, 2, (npes + 1) / 2, "even");
  if (even != SHMEM_TEAM_INVALID) {
    shmem_team_config_t got = {0};
    EXPECT(!shmem_team_get_config(even, SHMEM_TEAM_NUM_CONTEXTS, &got) && got.num_contexts == 3, "get_config");
    EXPECT(!shmem_team_create_ctx(even, 0, &ctx) && ctx != SHMEM_CTX_INVALID, "create_ctx");
    shmem_team_t back = SHMEM_TEAM_INVALID;
    EXPECT(!shmem_ctx_get_team(ctx, &back) && back == even, "ctx_get_team of a team context");
    shmem_ctx_destroy(ctx);
    /* A split of a split: every other member of the even team, i.e. world PEs 0, 4, 8, ... */
    EXPECT(!shmem_team_split_strided(even, 0, 2, (shmem_team_n_pes(even) + 1) / 2, NULL, 0, &quarter), "quarter");
    check_team(quarter, 0, 4, (shmem_team_n_pes(even) + 1) / 2, "quarter");
    shmem_team_destroy(quarter);
  }
  EXPECT(!shmem_team_split_strided(SHMEM_TEAM_WORLD, npes - 1, -1, npes, NULL, 0, &rev), "split reversed");
  check_team(rev, npes - 1, -1, npes, "reversed");
  EXPECT(!shmem_team_split_strided(SHMEM_TEAM_WORLD, npes / 2, 0, 1, NULL, 0, &zero), "split stride 0");
  check_team(zero, npes / 2, 0, 1, "stride 0");
  EXPECT(!shmem_team_split_strided(SHMEM_TEAM_WORLD, npes - 1, 1, 1, NULL, 0, &last), "split last");
  check_team(last, npes - 1, 1, 1, "last PE");
  static const int bad[][3] = {{0, 1, 0}, {-1, 1, 1}, {0, 1, 1000}, {0, 0, 2}, {1, 1, 1000}, {0, -1, 2}};
  for (int k = 0; k < 6; k++) {
    shmem_team_t b = SHMEM_TEAM_WORLD;
    EXPECT(shmem_team_split_strided(SHMEM_TEAM_WORLD, bad[k][0], bad[k][1], bad[k][2], NULL, 0, &b) != 0 &&
               b == SHMEM_TEAM_INVALID, "invalid triplet %d accepted", k);
  }
  shmem_team_destroy(even);
  shmem_team_destroy(rev);
  shmem_team_destroy(zero);
  shmem_team_destroy(last);

  /* split_2d: coordinates (p % xrange, p / xrange); xrange above the size is the size. */
  for (int xr = 1; xr <= npes + 2; xr++) {
    shmem_team_t xt, yt;
    EXPECT(!shmem_team_split_2d(SHMEM_TEAM_WORLD, xr, NULL, 0, &xt, &cfg, SHMEM_TEAM_NUM_CONTEXTS, &yt), "2d %d", xr);
    int x = xr > npes ? npes : xr, row = me / x, col = me % x;
    int xsize = npes - row * x < x ? npes - row * x : x, ysize = (npes - 1 - col) / x + 1;
    check_team(xt, row * x, 1, xsize, "2-D x axis");
    check_team(yt, col, x, ysize, "2-D y axis");
    EXPECT(shmem_team_my_pe(xt) == col && shmem_team_my_pe(yt) == row, "2-D coordinates, xrange %d", xr);
    shmem_team_destroy(xt);
    shmem_team_destroy(yt);
  }
  shmem_team_t xt = SHMEM_TEAM_WORLD, yt = SHMEM_TEAM_WORLD;
  EXPECT(shmem_team_split_2d(SHMEM_TEAM_WORLD, 0, NULL, 0, &xt, NULL, 0, &yt) != 0 && xt == SHMEM_TEAM_INVALID &&
             yt == SHMEM_TEAM_INVALID, "2-D xrange 0 accepted");

  /* Slots: create, use and destroy teams many times (stale signals in reused slots must not confuse new teams). */
  for (int k = 0; k < 200; k++) {
    int n = 1 + k % npes, start = (k * 7) % (npes - n + 1);
    EXPECT(!shmem_team_split_strided(SHMEM_TEAM_WORLD, start, 1, n, NULL, 0, &t), "cycle %d", k);
    check_team(t, start, 1, n, "cycled team");
    shmem_team_destroy(t);
  }
  /* Exhaustion: 30 live teams over every PE, then the 31st fails everywhere; destroying one frees a slot. */
  shmem_team_t live[31];
  int made = 0;
  while (made < 31 && !shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, npes, NULL, 0, &live[made])) made++;
  EXPECT(made == 30, "%d teams created before exhaustion, expected 30", made);
  EXPECT(made == 31 || live[made] == SHMEM_TEAM_INVALID, "failed split set a team");
  for (int k = 0; k < made; k++) check_team(live[k], 0, 1, npes, "one of 30 live teams");
  shmem_team_destroy(live[made - 1]);
  EXPECT(!shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, npes, NULL, 0, &live[made - 1]), "no slot after destroy");
  check_team(live[made - 1], 0, 1, npes, "team in a freed slot");
  for (int k = 0; k < made; k++) shmem_team_destroy(live[k]);

  shmem_barrier_all();
  if (errors) {
    fprintf(stderr, "PE %d: %d errors\n", me, errors);
    shmem_global_exit(1);
  }
  if (me == 0) printf("test_teams: %d PEs: all team checks passed\n", npes);
  shmem_finalize();
  return 0;
}
