/* victim.c - the job that tests/scripts/attack.py attacks: a small but complete OpenSHMEM program whose every value is
 * checked, so that an attack that corrupts the job's memory or breaks its bootstrap shows.
 *
 *   victim [run|hang] [token...]
 *
 * The last PE sleeps VICTIM_DELAY_MS milliseconds (default 0) before shmem_init, so that an attacker has a window in
 * which that rank has not connected to oshrun yet. It finds out that it is the last PE, before shmem_init, from the
 * launcher's environment (SHOAL_RANK, SHOAL_SIZE). Then every PE: a ring of puts (PE i to PE i+1) into a
 * shmem_malloc'd buffer and into a static array, checks what its left neighbour put, gets back from its right
 * neighbour what it put there, a barrier, a fetch-add on PE 0 by every PE; every value is checked. On success it prints
 * exactly "victim PE <me> ok" (flushed); on any mismatch it prints why on stderr and exits 1. Mode "hang": after the
 * checks, sleep until killed (never finalize). Extra arguments (a token for the test's process search) are ignored. */
#include <shmem.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NELEM 4099 /* odd, more than a page of longs */

static long s_dst[NELEM];   /* static data: symmetric */
static long s_count;        /* fetch-add target on PE 0 (static, starts at 0 on every PE) */

static long pat(int pe, size_t i, unsigned salt) {
  uint64_t x = (uint64_t)(pe + 1) * 0x9E3779B97F4A7C15ull ^ (uint64_t)(i + 1) * 0xBF58476D1CE4E5B9ull ^
               (uint64_t)(salt + 1) * 0x94D049BB133111EBull;
  x ^= x >> 31;
  x *= 0xD6E8FEB86659FD93ull;
  return (long)(x ^ (x >> 29));
}

static int me = -1, failures;

static void check(long got, long want, const char *what, size_t i) {
  if (got == want) return;
  if (failures++ < 5)
    fprintf(stderr, "victim PE %d: %s[%zu] = %#lx, want %#lx\n", me, what, i, (unsigned long)got, (unsigned long)want);
}

static void delay_if_last(void) {
  const char *d = getenv("VICTIM_DELAY_MS"), *r = getenv("SHOAL_RANK"), *n = getenv("SHOAL_SIZE");
  long ms = d ? strtol(d, NULL, 10) : 0;
  if (ms <= 0) return;
  if (!r || !n) {
    fprintf(stderr, "victim: VICTIM_DELAY_MS set but SHOAL_RANK/SHOAL_SIZE missing: no delay\n");
    return;
  }
  if (strtol(r, NULL, 10) != strtol(n, NULL, 10) - 1) return;
  struct timespec t = {.tv_sec = ms / 1000, .tv_nsec = ms % 1000 * 1000000L};
  while (nanosleep(&t, &t)) {
  }
}

int main(int argc, char **argv) {
  int hang = argc > 1 && !strcmp(argv[1], "hang");
  delay_if_last();
  shmem_init();
  me = shmem_my_pe();
  int npes = shmem_n_pes(), right = (me + 1) % npes, left = (me + npes - 1) % npes;
  long *h_dst = shmem_malloc(NELEM * sizeof(long));
  long *src = malloc(NELEM * sizeof(long)), *back = malloc(NELEM * sizeof(long));
  if (!h_dst || !src || !back) {
    fprintf(stderr, "victim PE %d: allocation failed\n", me);
    return 1;
  }
  for (size_t i = 0; i < NELEM; i++) {
    h_dst[i] = s_dst[i] = -1;
  }
  shmem_barrier_all();

  /* Ring: heap and static destinations, then read back what arrived. */
  for (size_t i = 0; i < NELEM; i++) src[i] = pat(me, i, 1);
  shmem_long_put(h_dst, src, NELEM, right);
  for (size_t i = 0; i < NELEM; i++) src[i] = pat(me, i, 2);
  shmem_long_put(s_dst, src, NELEM, right);
  shmem_barrier_all();
  for (size_t i = 0; i < NELEM; i++) {
    check(h_dst[i], pat(left, i, 1), "heap", i);
    check(s_dst[i], pat(left, i, 2), "static", i);
  }
  shmem_long_get(back, h_dst, NELEM, right);
  for (size_t i = 0; i < NELEM; i++) check(back[i], pat(me, i, 1), "heap get", i);
  shmem_long_get(back, s_dst, NELEM, right);
  for (size_t i = 0; i < NELEM; i++) check(back[i], pat(me, i, 2), "static get", i);
  shmem_barrier_all();

  /* Fetch-add on PE 0 by everyone: the sum is fixed, every fetched value is a partial sum below it. */
  long add = 1 + (pat(me, 0, 3) & 0xffff), total = 0;
  for (int p = 0; p < npes; p++) total += 1 + (pat(p, 0, 3) & 0xffff);
  long old = shmem_long_atomic_fetch_add(&s_count, add, 0);
  if (old < 0 || old + add > total) check(old, -1, "fetch-add old value (out of range)", 0);
  shmem_barrier_all();
  check(shmem_long_atomic_fetch(&s_count, 0), total, "fetch-add sum", 0);
  shmem_barrier_all();

  if (failures) {
    fprintf(stderr, "victim PE %d: %d value(s) wrong\n", me, failures);
    fflush(stderr);
    _exit(1);
  }
  printf("victim PE %d ok\n", me);
  fflush(stdout);
  if (hang)
    for (;;) pause();
  free(src);
  free(back);
  shmem_free(h_dst);
  shmem_finalize();
  return 0;
}
