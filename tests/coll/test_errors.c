/*
 * test_errors.c - bad input to teams and collectives: each mode makes one mistake, which must stop the job with one
 * line "shoal: PE <n>: <routine>: <argument>: <reason>" (checked by tests/scripts/check_run.py from meson).
 *   test_errors MODE     (modes: see the table in main; "ok" runs clean)
 */
#include <shmem.h>
#include <stdio.h>
#include <string.h>

static long a[16], b[64 * 16], pSync[SHMEM_SYNC_SIZE];

int main(int argc, char **argv) {
  const char *m = argc > 1 ? argv[1] : "ok";
  for (int k = 0; k < SHMEM_SYNC_SIZE; k++) pSync[k] = SHMEM_SYNC_VALUE;
  shmem_init();
  int me = shmem_my_pe(), n = shmem_n_pes();
  long stack[4] = {0};
  shmem_team_t t;
  if (!strcmp(m, "invalid_team")) {
    shmem_team_sync(SHMEM_TEAM_INVALID);
  } else if (!strcmp(m, "invalid_team_reduce")) {
    shmem_long_sum_reduce(SHMEM_TEAM_INVALID, b, a, 1);
  } else if (!strcmp(m, "destroyed")) {
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, n, NULL, 0, &t);
    shmem_team_destroy(t);
    shmem_long_sum_reduce(t, b, a, 1);
  } else if (!strcmp(m, "destroyed_query")) {
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, n, NULL, 0, &t);
    shmem_team_destroy(t);
    shmem_team_my_pe(t);
  } else if (!strcmp(m, "destroyed_ctx")) { /* spec 1.5: destroying a team destroys its shareable contexts */
    shmem_ctx_t ctx;
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, n, NULL, 0, &t);
    shmem_team_create_ctx(t, 0, &ctx);
    shmem_team_destroy(t);
    shmem_ctx_get_team(ctx, &t);
  } else if (!strcmp(m, "destroy_world")) {
    shmem_team_destroy(SHMEM_TEAM_WORLD);
  } else if (!strcmp(m, "root")) {
    shmem_long_broadcast(SHMEM_TEAM_WORLD, b, a, 1, n);
  } else if (!strcmp(m, "root_negative")) {
    shmem_broadcastmem(SHMEM_TEAM_WORLD, b, a, 8, -1);
  } else if (!strcmp(m, "root_aset")) {
    shmem_broadcast64(b, a, 1, n, 0, 0, n, pSync);
  } else if (!strcmp(m, "overlap_fcollect")) {
    shmem_long_fcollect(SHMEM_TEAM_WORLD, b + 1, b, 4);
  } else if (!strcmp(m, "overlap_alltoall")) {
    shmem_long_alltoall(SHMEM_TEAM_WORLD, b, b, 1);
  } else if (!strcmp(m, "overlap_reduce")) {
    shmem_long_sum_reduce(SHMEM_TEAM_WORLD, b + 1, b, 4);
  } else if (!strcmp(m, "nonsymmetric")) {
    shmem_long_broadcast(SHMEM_TEAM_WORLD, stack, a, 4, 0);
  } else if (!strcmp(m, "nelems_mismatch")) { /* SHMEM_DEBUG=1 */
    shmem_long_fcollect(SHMEM_TEAM_WORLD, b, a, (size_t)(1 + me));
  } else if (!strcmp(m, "root_mismatch")) { /* SHMEM_DEBUG=1 */
    shmem_long_broadcast(SHMEM_TEAM_WORLD, b, a, 2, me);
  } else if (!strcmp(m, "routine_mismatch")) { /* SHMEM_DEBUG=1 */
    if (me == 0)
      shmem_long_fcollect(SHMEM_TEAM_WORLD, b, a, 1);
    else
      shmem_long_sum_reduce(SHMEM_TEAM_WORLD, b, a, 1);
  } else if (!strcmp(m, "aset_member")) {
    shmem_barrier(1, 0, n - 1, pSync);
  } else if (!strcmp(m, "aset_size")) {
    shmem_long_sum_to_all(b, a, 1, 0, 0, 0, b, pSync);
  } else if (!strcmp(m, "aset_range")) {
    shmem_fcollect64(b, a, 1, 0, 1, n, pSync);
  } else if (!strcmp(m, "aset_nreduce")) {
    shmem_int_max_to_all((int *)b, (int *)a, -1, 0, 0, n, (int *)b, pSync);
  } else if (!strcmp(m, "alltoalls_stride")) {
    shmem_long_alltoalls(SHMEM_TEAM_WORLD, b, a, 0, 1, 1);
  } else if (!strcmp(m, "algo")) { /* SHOAL_COLL_REDUCE_ALGO=fast: refused by shmem_init, before this */
    shmem_long_sum_reduce(SHMEM_TEAM_WORLD, b, a, 1);
  } else if (!strcmp(m, "algo_barrier")) { /* SHOAL_COLL_BARRIER_ALGO=tree: the same, before this */
    shmem_team_sync(SHMEM_TEAM_WORLD);
  } else if (!strcmp(m, "algo_bcast")) {
    shmem_long_broadcast(SHMEM_TEAM_WORLD, b, a, 1, 0);
  } else if (!strncmp(m, "garbage_", 8)) { /* a handle no team routine made: reported, never dereferenced */
    const char *r = m + 8;
    shmem_team_t g = (shmem_team_t)0x1234, x, y;
    shmem_ctx_t ctx;
    shmem_team_config_t cfg;
    if (!strcmp(r, "inside")) g = (shmem_team_t)((char *)SHMEM_TEAM_WORLD + 8); /* inside a team object */
    if (!strcmp(r, "data")) g = (shmem_team_t)a;                                 /* readable, not a team */
    if (!strcmp(r, "my_pe") || !strcmp(r, "inside") || !strcmp(r, "data")) shmem_team_my_pe(g);
    else if (!strcmp(r, "n_pes")) shmem_team_n_pes(g);
    else if (!strcmp(r, "config")) shmem_team_get_config(g, 0, &cfg);
    else if (!strcmp(r, "translate")) shmem_team_translate_pe(SHMEM_TEAM_WORLD, 0, g);
    else if (!strcmp(r, "ptr")) shmem_team_ptr(g, a, 0);
    else if (!strcmp(r, "split")) shmem_team_split_strided(g, 0, 1, 1, NULL, 0, &x);
    else if (!strcmp(r, "split_2d")) shmem_team_split_2d(g, 1, NULL, 0, &x, NULL, 0, &y);
    else if (!strcmp(r, "create_ctx")) shmem_team_create_ctx(g, 0, &ctx);
    else if (!strcmp(r, "destroy")) shmem_team_destroy(g);
    else if (!strcmp(r, "sync")) shmem_team_sync(g);
    else if (!strcmp(r, "broadcast")) shmem_long_broadcast(g, b, a, 1, 0);
    else if (!strcmp(r, "fcollect")) shmem_fcollectmem(g, b, a, 8);
    else if (!strcmp(r, "alltoall")) shmem_long_alltoall(g, b, a, 1);
    else if (!strcmp(r, "reduce")) shmem_long_sum_reduce(g, b, a, 1);
  } else if (strcmp(m, "ok")) {
    fprintf(stderr, "test_errors: unknown mode %s\n", m);
    return 2;
  }
  shmem_barrier_all();
  if (me == 0) printf("test_errors: %s: no error\n", m);
  shmem_finalize();
  return 0;
}
