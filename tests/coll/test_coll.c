/*
 * test_coll.c - every team collective on SHMEM_TEAM_WORLD, SHMEM_TEAM_SHARED and split teams (even PEs, reversed,
 * both axes of a 2-D split), at element counts 0, 1, 7, 64 and 1021 (plus long reductions that need many scratch
 * chunks). Each batch runs 16 collectives back to back with no synchronization in between (each into its own dest,
 * sources rewritten between calls); every member checks every element of a dest against values computed locally
 * from the known inputs as soon as the call returns. Outputs are poisoned before each batch. Exit status 1 on any
 * mismatch (all PEs stop). The algorithms are those SHOAL_COLL_*_ALGO select (the meson tests force each in turn).
 */
#include <shmem.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOPS 16
#define MAXE 1021
#define BIGE 40003  /* long reductions: several chunks of any team's scratch ... */
#define BIGW 160003 /* ... and of WORLD's on jobs that span nodes (1 MiB there, collectives/team.h) */
#define POISON 0xA5

static int me, npes, errors;
static char *S[NOPS], *D[NOPS];
static size_t bufsize;

/* The value a PE (world number) contributes at index i; salt changes it between calls. */
static int64_t pat(int wpe, long i, int salt) { return (wpe + 1) * 1000003LL + i * 7 + salt * 131; }

static void fail(const char *what, const char *team, size_t ne, long i, double got, double want) {
  if (errors++ < 10)
    fprintf(stderr, "PE %d: %s on %s, nelems %zu: element %ld is %.17g, expected %.17g\n", me, what, team, ne, i, got,
            want);
}
#define CHECK(what, i, got, want)                                                                                     \
  do {                                                                                                                 \
    if ((got) != (want)) fail(what, tname, ne, (long)(i), (double)(got), (double)(want));                               \
  } while (0)

/* World number of team member j. */
static int wpe(shmem_team_t t, int j) { return shmem_team_translate_pe(t, j, SHMEM_TEAM_WORLD); }

/* Per-member element count of collect: varies, includes 0. */
static size_t ccount(size_t ne, int j) { return ne ? (ne + (size_t)j) % (ne + 1) : 0; }

static void run_batch(shmem_team_t t, const char *tname, size_t ne, int salt) {
  int n = shmem_team_n_pes(t), r = shmem_team_my_pe(t), w = shmem_my_pe();
  int root1 = salt % n, root2 = (salt * 7 + 3) % n;
  size_t big = ne != MAXE ? ne : t == SHMEM_TEAM_WORLD ? BIGW : BIGE;
  for (int k = 0; k < NOPS; k++) memset(D[k], POISON, bufsize);
  /* Inputs. */
  for (size_t i = 0; i < ne; i++) {
    ((long *)S[0])[i] = (long)pat(w, (long)i, salt);
    ((unsigned char *)S[1])[i] = (unsigned char)pat(w, (long)i, salt + 1);
    ((int64_t *)S[2])[i] = pat(w, (long)i, salt + 2);
    ((int *)D[7])[i] = (int)(pat(w, (long)i, salt) % 1000) - 500; /* in place */
    ((uint64_t *)S[8])[i] = (uint64_t)pat(w, (long)i, salt) * 0x9E3779B97F4A7C15ull;
    ((float *)S[11])[i] = (float)(pat(w, (long)i, salt) % 4096);
  }
  for (size_t i = 0; i < ccount(ne, r); i++) ((double *)S[3])[i] = (double)pat(w, (long)i, salt + 3);
  for (int i = 0; i < 3; i++) ((unsigned char *)S[10])[i] = (unsigned char)pat(w, i, salt + 1);
  for (int j = 0; j < n; j++)
    for (size_t i = 0; i < ne; i++) {
      ((int32_t *)S[4])[(size_t)j * ne + i] = (int32_t)(pat(w, (long)i, salt) * 31 + j);
      ((int64_t *)S[5])[((size_t)j * ne + i) * 3] = pat(w, (long)i, salt) * 17 + j;
      ((short *)S[12])[(size_t)j * ne + i] = (short)(pat(w, (long)i, salt) + j);
    }
  for (size_t i = 0; i < big; i++) {
    ((long *)S[6])[i] = (long)pat(w, (long)i, salt) % 100000;
    ((double *)D[9])[i] = (double)(pat(w, (long)i, salt) % 100000); /* in place */
  }
  shmem_team_sync(t); /* every dest is poisoned and ready */

  /* The batch: no synchronization between calls; each dest is checked right after its call returns (other members
   * may already be in the next calls, which write other buffers); sources are rewritten only after the call that
   * read them returned. */
  int wr1 = wpe(t, root1), wr2 = wpe(t, root2);
  shmem_long_broadcast(t, (long *)D[0], (long *)S[0], ne, root1);
  for (size_t i = 0; i < ne; i++) CHECK("long_broadcast", i, ((long *)D[0])[i], (long)pat(wr1, (long)i, salt));
  shmem_broadcastmem(t, D[1], S[1], ne, root2);
  for (size_t i = 0; i < ne; i++)
    CHECK("broadcastmem", i, ((unsigned char *)D[1])[i], (unsigned char)pat(wr2, (long)i, salt + 1));
  shmem_int64_fcollect(t, (int64_t *)D[2], (int64_t *)S[2], ne);
  for (int j = 0; j < n; j++)
    for (size_t i = 0; i < ne; i++)
      CHECK("int64_fcollect", j * ne + i, ((int64_t *)D[2])[j * ne + i], pat(wpe(t, j), (long)i, salt + 2));
  shmem_double_collect(t, (double *)D[3], (double *)S[3], ccount(ne, r));
  size_t o = 0;
  for (int j = 0; j < n; j++)
    for (size_t i = 0; i < ccount(ne, j); i++, o++)
      CHECK("double_collect", o, ((double *)D[3])[o], (double)pat(wpe(t, j), (long)i, salt + 3));
  unsigned char *after = (unsigned char *)&((double *)D[3])[o]; /* nothing past the last block */
  for (int b = 0; b < 16; b++) CHECK("double_collect end", o, after[b], POISON);
  /* collect with every block empty, then non-empty, back to back: the sizes of one must not leak into the other */
  for (int k = 0; k < 3; k++) {
    shmem_collectmem(t, D[10], S[10], 0);
    shmem_collectmem(t, D[10] + k * (n * 8 + 8), S[10], (size_t)(r % 3 + 1));
    size_t oo = (size_t)k * ((size_t)n * 8 + 8);
    for (int j = 0; j < n; j++)
      for (int i = 0; i < j % 3 + 1; i++, oo++)
        CHECK("collectmem after an empty one", oo, ((unsigned char *)D[10])[oo],
              (unsigned char)pat(wpe(t, j), (long)i, salt + 1));
  }
  shmem_int32_alltoall(t, (int32_t *)D[4], (int32_t *)S[4], ne);
  for (int j = 0; j < n; j++)
    for (size_t i = 0; i < ne; i++)
      CHECK("int32_alltoall", j * ne + i, ((int32_t *)D[4])[j * ne + i],
            (int32_t)(pat(wpe(t, j), (long)i, salt) * 31 + r));
  shmem_int64_alltoalls(t, (int64_t *)D[5], (int64_t *)S[5], 2, 3, ne);
  for (size_t k = 0; ne && k < (size_t)n * ne; k++) {
    CHECK("int64_alltoalls", k * 2, ((int64_t *)D[5])[k * 2], pat(wpe(t, (int)(k / ne)), (long)(k % ne), salt) * 17 + r);
    unsigned char *g = (unsigned char *)&((int64_t *)D[5])[k * 2 + 1]; /* the dest stride's gaps stay alone */
    for (int b = 0; k + 1 < (size_t)n * ne && b < 8; b++) CHECK("int64_alltoalls gap", k * 2 + 1, g[b], POISON);
  }
  shmem_long_sum_reduce(t, (long *)D[6], (long *)S[6], big);
  shmem_int_max_reduce(t, (int *)D[7], (int *)D[7], ne);
  shmem_uint64_xor_reduce(t, (uint64_t *)D[8], (uint64_t *)S[8], ne);
  shmem_double_sum_reduce(t, (double *)D[9], (double *)D[9], big);
  for (size_t i = 0; i < big; i++) {
    long sm = 0;
    double d = 0;
    for (int j = 0; j < n; j++) {
      sm += (long)pat(wpe(t, j), (long)i, salt) % 100000;
      d += (double)(pat(wpe(t, j), (long)i, salt) % 100000);
    }
    CHECK("long_sum_reduce", i, ((long *)D[6])[i], sm);
    CHECK("double_sum_reduce (in place)", i, ((double *)D[9])[i], d);
  }
  shmem_team_sync(t);
  shmem_float_min_reduce(t, (float *)D[11], (float *)S[11], ne);
  shmem_short_alltoall(t, (short *)D[12], (short *)S[12], ne);
  for (int j = 0; j < n; j++)
    for (size_t i = 0; i < ne; i++)
      CHECK("short_alltoall", j * ne + i, ((short *)D[12])[j * ne + i], (short)(pat(wpe(t, j), (long)i, salt) + r));
  for (size_t i = 0; i < ne; i++) ((long *)S[0])[i] = (long)pat(w, (long)i, salt + 9); /* reuse a source */
  shmem_broadcast(t, (long *)D[13], (long *)S[0], ne, root2); /* C11 generic */
  for (size_t i = 0; i < ne; i++) CHECK("broadcast (generic)", i, ((long *)D[13])[i], (long)pat(wr2, (long)i, salt + 9));
  shmem_fcollectmem(t, D[14], S[1], ne);
  for (int j = 0; j < n; j++)
    for (size_t i = 0; i < ne; i++)
      CHECK("fcollectmem", j * ne + i, ((unsigned char *)D[14])[j * ne + i],
            (unsigned char)pat(wpe(t, j), (long)i, salt + 1));
  shmem_sum_reduce(t, (long *)D[15], (long *)S[0], ne); /* C11 generic */
  for (size_t i = 0; i < ne; i++) {
    int mx = -1000;
    uint64_t x = 0;
    float mn = 1e9f;
    long sm = 0;
    for (int j = 0; j < n; j++) {
      int v = (int)(pat(wpe(t, j), (long)i, salt) % 1000) - 500;
      mx = v > mx ? v : mx;
      x ^= (uint64_t)pat(wpe(t, j), (long)i, salt) * 0x9E3779B97F4A7C15ull;
      float f = (float)(pat(wpe(t, j), (long)i, salt) % 4096);
      mn = f < mn ? f : mn;
      sm += (long)pat(wpe(t, j), (long)i, salt + 9);
    }
    CHECK("int_max_reduce (in place)", i, ((int *)D[7])[i], mx);
    CHECK("uint64_xor_reduce", i, ((uint64_t *)D[8])[i], x);
    CHECK("float_min_reduce", i, ((float *)D[11])[i], mn);
    CHECK("sum_reduce (generic)", i, ((long *)D[15])[i], sm);
  }
  shmem_team_sync(t); /* nobody writes the next batch into a dest still being checked */
}

static void run_team(shmem_team_t t, const char *tname) {
  static const size_t sizes[] = {0, 1, 7, 64, MAXE};
  if (t == SHMEM_TEAM_INVALID) return;
  for (int s = 0; s < (int)(sizeof sizes / sizeof sizes[0]); s++)
    for (int salt = 0; salt < 2; salt++) run_batch(t, tname, sizes[s], salt + s * 2);
}

int main(void) {
  shmem_init();
  me = shmem_my_pe();
  npes = shmem_n_pes();
  bufsize = (size_t)npes * MAXE * 3 * 8 + 64;
  if (bufsize < BIGW * 8) bufsize = BIGW * 8;
  for (int k = 0; k < NOPS; k++) {
    S[k] = shmem_malloc(bufsize);
    D[k] = shmem_malloc(bufsize);
    if (!S[k] || !D[k]) {
      fprintf(stderr, "PE %d: shmem_malloc failed\n", me);
      shmem_global_exit(2);
    }
  }
  shmem_team_t even, rev, xt, yt;
  if (shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (npes + 1) / 2, NULL, 0, &even) ||
      shmem_team_split_strided(SHMEM_TEAM_WORLD, npes - 1, -1, npes, NULL, 0, &rev) ||
      shmem_team_split_2d(SHMEM_TEAM_WORLD, 2, NULL, 0, &xt, NULL, 0, &yt)) {
    fprintf(stderr, "PE %d: team split failed\n", me);
    shmem_global_exit(2);
  }
  run_team(SHMEM_TEAM_WORLD, "WORLD");
  run_team(SHMEM_TEAM_SHARED, "SHARED");
  run_team(even, "even PEs");
  shmem_barrier_all();
  run_team(rev, "reversed");
  run_team(xt, "2-D x axis");
  run_team(yt, "2-D y axis");
  shmem_barrier_all();
  shmem_team_destroy(even);
  shmem_team_destroy(rev);
  shmem_team_destroy(xt);
  shmem_team_destroy(yt);
  if (errors) {
    fprintf(stderr, "PE %d: %d mismatches\n", me, errors);
    shmem_global_exit(1);
  }
  if (me == 0) printf("test_coll: %d PEs: all collectives correct\n", npes);
  shmem_finalize();
  return 0;
}
