/* ofi_victim.c - the job that tests/scripts/ofi_attack.py attacks through libfabric (SHOAL_TRANSPORT=ofi): every
 * value it owns is known, so that a stranger who reads, writes or adds to its memory, or stalls its AMOs, shows.
 *
 *   ofi_victim DONE_FILE [ROUND_LIMIT_S]
 *
 * Every PE: a heap buffer (the first shmem_malloc) and a static array filled with a pattern nobody writes again,
 * then the line "ofi_victim PE <i> ready pid <pid> heap <va> static <va>" (the driver turns the addresses into region
 * offsets for the attacker). Then rounds until DONE_FILE exists (PE 0 looks; every PE learns it from PE 0 after a
 * barrier), each on the right neighbour: long fetch_add (the old value must be the round number), int add, int and
 * long compare_swap (the old value must be the round number), on heap and static counters; a put of a round value
 * into a mailbox and a get of it back; a get of one word of the neighbour's pattern. On providers without native
 * atomics (net) every AMO goes through the runtime's message fallback. A round slower than ROUND_LIMIT_S (default
 * 5) ends the PE (SIGALRM) with a line on stderr and status 1, as does no DONE_FILE within 100 s. At the end: the
 * patterns unchanged, every counter exactly the number of rounds, then "ofi_victim PE <i> ok" (flushed); any
 * mismatch: a line on stderr and status 1. */
#include <shmem.h>

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NPAT 512
#define NO_DONE_S 200

static long s_pat[NPAT];                     /* static pattern */
static long s_lcount, s_lswap, s_mail;       /* static counters and mailbox */
static int s_icount, s_iswap;

static int me = -1, failures;
static volatile long cur_round;

static long pat(int pe, size_t i, unsigned salt) {
  uint64_t x = (uint64_t)(pe + 1) * 0x9E3779B97F4A7C15ull ^ (uint64_t)(i + 1) * 0xBF58476D1CE4E5B9ull ^
               (uint64_t)(salt + 1) * 0x94D049BB133111EBull;
  x ^= x >> 31;
  x *= 0xD6E8FEB86659FD93ull;
  return (long)(x ^ (x >> 29));
}

static void check(long got, long want, const char *what, long i) {
  if (got == want) return;
  if (failures++ < 8)
    fprintf(stderr, "ofi_victim PE %d: %s[%ld] = %#lx, want %#lx\n", me, what, i, (unsigned long)got,
            (unsigned long)want);
}

static void on_alarm(int sig) {
  (void)sig;
  char buf[128];
  int n = snprintf(buf, sizeof buf, "ofi_victim PE %d: round %ld took too long (stalled)\n", me, cur_round);
  if (write(2, buf, (size_t)n) < 0) _exit(1);
  _exit(1);
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: ofi_victim DONE_FILE [ROUND_LIMIT_S]\n");
    return 2;
  }
  const char *done_file = argv[1];
  unsigned limit = argc > 2 ? (unsigned)atoi(argv[2]) : 5;
  signal(SIGALRM, on_alarm);
  shmem_init();
  me = shmem_my_pe();
  int npes = shmem_n_pes(), right = (me + 1) % npes;
  long *h_pat = shmem_malloc(NPAT * sizeof(long)); /* first: its offset is the attacker's hint */
  long *h_l = shmem_malloc(4 * sizeof(long));      /* count, swap, mail */
  int *h_i = shmem_malloc(2 * sizeof(int));         /* count, swap */
  static int stop;
  if (!h_pat || !h_l || !h_i) {
    fprintf(stderr, "ofi_victim PE %d: shmem_malloc failed\n", me);
    return 1;
  }
  for (size_t i = 0; i < NPAT; i++) h_pat[i] = pat(me, i, 1), s_pat[i] = pat(me, i, 2);
  memset(h_l, 0, 4 * sizeof(long));
  memset(h_i, 0, 2 * sizeof(int));
  shmem_barrier_all();
  printf("ofi_victim PE %d ready pid %d heap %p static %p\n", me, (int)getpid(), (void *)h_pat, (void *)s_pat);
  fflush(stdout);

  double t0 = now();
  long r;
  for (r = 0;; r++) {
    cur_round = r;
    alarm(limit);
    long old = shmem_long_atomic_fetch_add(&h_l[0], 1, right);
    check(old, r, "heap long fetch_add old", r);
    old = shmem_long_atomic_fetch_add(&s_lcount, 1, right);
    check(old, r, "static long fetch_add old", r);
    shmem_int_atomic_add(&h_i[0], 3, right);
    shmem_int_atomic_add(&s_icount, 3, right);
    old = shmem_long_atomic_compare_swap(&h_l[1], r, r + 1, right);
    check(old, r, "heap long compare_swap old", r);
    old = shmem_long_atomic_compare_swap(&s_lswap, r, r + 1, right);
    check(old, r, "static long compare_swap old", r);
    int iold = shmem_int_atomic_compare_swap(&h_i[1], (int)r, (int)r + 1, right);
    check(iold, r, "heap int compare_swap old", r);
    iold = shmem_int_atomic_compare_swap(&s_iswap, (int)r, (int)r + 1, right);
    check(iold, r, "static int compare_swap old", r);
    long v = pat(me, (size_t)r, 3), back = 0;
    shmem_long_p(&h_l[2], v, right);
    shmem_long_p(&s_mail, v, right);
    shmem_quiet();
    check(shmem_long_g(&h_l[2], right), v, "heap mailbox get", r);
    check(shmem_long_g(&s_mail, right), v, "static mailbox get", r);
    size_t idx = (size_t)(r * 37) % NPAT;
    shmem_long_get(&back, &h_pat[idx], 1, right);
    check(back, pat(right, idx, 1), "heap pattern get", (long)idx);
    shmem_long_get(&back, &s_pat[idx], 1, right);
    check(back, pat(right, idx, 2), "static pattern get", (long)idx);
    if (me == 0) stop = access(done_file, F_OK) == 0 || now() - t0 > NO_DONE_S;
    shmem_barrier_all();
    int st = shmem_int_g(&stop, 0);
    shmem_barrier_all(); /* PE 0 changes stop only after everyone read it */
    if (st) break;
    struct timespec ts = {0, 2000000};
    nanosleep(&ts, NULL);
  }
  alarm(0);
  long rounds = r + 1;
  if (now() - t0 > NO_DONE_S && access(done_file, F_OK)) {
    fprintf(stderr, "ofi_victim PE %d: no %s within %d s\n", me, done_file, NO_DONE_S);
    failures++;
  }
  shmem_barrier_all();
  for (size_t i = 0; i < NPAT; i++) {
    check(h_pat[i], pat(me, i, 1), "heap pattern", (long)i);
    check(s_pat[i], pat(me, i, 2), "static pattern", (long)i);
  }
  if (!failures) { /* counters: exact only when every round ran to its end */
    check(h_l[0], rounds, "heap long count", 0);
    check(s_lcount, rounds, "static long count", 0);
    check(h_i[0], 3 * rounds, "heap int count", 0);
    check(s_icount, 3 * rounds, "static int count", 0);
    check(h_l[1], rounds, "heap long swap", 0);
    check(s_lswap, rounds, "static long swap", 0);
    check(h_i[1], rounds, "heap int swap", 0);
    check(s_iswap, rounds, "static int swap", 0);
  }
  if (failures) {
    fprintf(stderr, "ofi_victim PE %d: %d value(s) wrong after %ld rounds\n", me, failures, rounds);
    fflush(stderr);
    _exit(1);
  }
  printf("ofi_victim PE %d ok (%ld rounds)\n", me, rounds);
  fflush(stdout);
  alarm(limit);
  shmem_finalize();
  return 0;
}
