/* fatal.c - misuse that must stop the job with one line "shoal: PE n: routine: argument: reason" (checked by
 * expect_fatal.sh). Usage: p2p_fatal MODE. The last PE misbehaves; the others wait in a barrier and are stopped. */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long s_lock;
static long s_bad_lock = 5;                   /* serving 5 ahead of next 0: no lock ever holds it */
static long s_bad_lock2 = 0x3ff0000000000000; /* 1.0's bits: 2^30 tickets outstanding; caught with SHMEM_DEBUG=1 */
static uint64_t s_sig;

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  const char *m = argv[1];
  shmem_init();
  int me = shmem_my_pe(), npes = shmem_n_pes();
  long *heap = shmem_calloc(4, sizeof(long));
  long local = 0, larr[4] = {0};
  uint64_t lsig = 0;
  char buf[16] = {0};
  shmem_team_t all = SHMEM_TEAM_INVALID; /* collective: every PE splits, the last one misuses the team context */
  if (!strcmp(m, "team-ctx-pe") && shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, npes, NULL, 0, &all)) return 3;
  if (me == npes - 1) {
    if (!strcmp(m, "team-ctx-pe")) {
      shmem_ctx_t ctx;
      if (shmem_team_create_ctx(all, 0, &ctx)) return 3;
      shmem_ctx_long_atomic_add(ctx, heap, 1, npes); /* team PE npes does not exist */
    } else if (!strcmp(m, "destroyed-ctx")) {
      shmem_ctx_t ctx;
      if (shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx)) return 3;
      shmem_ctx_long_atomic_inc(ctx, heap, 0); /* fine while live */
      shmem_ctx_destroy(ctx);
      shmem_ctx_long_atomic_inc(ctx, heap, 0);
    } else if (!strcmp(m, "destroyed-ctx-put")) {
      shmem_ctx_t ctx;
      if (shmem_ctx_create(0, &ctx)) return 3;
      shmem_ctx_destroy(ctx);
      shmem_ctx_putmem_signal(ctx, buf, buf, 1, &s_sig, 1, SHMEM_SIGNAL_SET, 0);
    } else if (!strcmp(m, "destroy-default")) {
      shmem_ctx_destroy(SHMEM_CTX_DEFAULT);
    } else if (!strcmp(m, "wait-nonsym")) {
      shmem_long_wait_until(&local, SHMEM_CMP_NE, 0);
    } else if (!strcmp(m, "test-nonsym")) {
      shmem_long_test_any(larr, 4, NULL, SHMEM_CMP_EQ, 0);
    } else if (!strcmp(m, "signal-nonsym")) {
      shmem_signal_wait_until(&lsig, SHMEM_CMP_NE, 0);
    } else if (!strcmp(m, "sig-addr-nonsym")) {
      shmem_putmem_signal(heap, buf, 8, &lsig, 1, SHMEM_SIGNAL_SET, 0);
    } else if (!strcmp(m, "lock-nonsym")) {
      shmem_set_lock(&local);
    } else if (!strcmp(m, "lock-garbage")) {
      shmem_set_lock(&s_bad_lock);
    } else if (!strcmp(m, "lock-garbage-test")) {
      shmem_test_lock(&s_bad_lock);
    } else if (!strcmp(m, "lock-garbage-clear")) {
      shmem_clear_lock(&s_bad_lock);
    } else if (!strcmp(m, "lock-garbage-wide")) {
      shmem_set_lock(&s_bad_lock2);
    } else if (!strcmp(m, "clear-unheld")) {
      shmem_clear_lock(&s_lock);
    } else if (!strcmp(m, "amo-nonsym")) {
      shmem_long_atomic_add(&local, 1, 0);
    } else if (!strcmp(m, "amo-misaligned")) {
      shmem_long_atomic_fetch_inc((long *)((char *)heap + 4), 0);
    } else if (!strcmp(m, "amo-pe")) {
      shmem_long_atomic_fetch_add(heap, 1, npes);
    } else if (!strcmp(m, "amo-null-fetch")) {
      shmem_long_atomic_fetch_nbi(NULL, heap, 0);
    } else if (!strcmp(m, "bad-cmp")) {
      shmem_long_wait_until(heap, 42, 0);
    } else if (!strcmp(m, "bad-sigop")) {
      shmem_putmem_signal(heap, buf, 8, &s_sig, 1, 7, 0);
    } else if (!strcmp(m, "some-null-indices")) {
      shmem_long_test_some(heap, 4, NULL, NULL, SHMEM_CMP_EQ, 0);
    } else if (!strcmp(m, "vector-null-values")) {
      shmem_long_wait_until_all_vector(heap, 4, NULL, SHMEM_CMP_EQ, NULL);
    } else {
      fprintf(stderr, "unknown mode %s\n", m);
      return 2;
    }
    printf("no error raised for %s\n", m);
    return 4;
  }
  shmem_barrier_all(); /* the misbehaving PE never arrives */
  shmem_finalize();
  return 0;
}
