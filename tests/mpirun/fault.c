/* fault.c - the job that tests/mpirun/fault.py strikes (a link down, a PE killed or stopped, lo down, a segfault):
 * traffic between the PEs of every node, so that a fault between nodes finds PEs waiting on the wire.
 *
 * Usage: fault MODE [SECONDS] [TOKEN...]   (TOKEN is ignored: it marks the processes of one run in /proc/PID/cmdline)
 * Every PE first does one full round of the loop below (so every connection is made), then prints
 * "fault: PE i of n running (pid P)" (flushed): the driver strikes once every PE has printed it. Then:
 *   loop   rounds until SECONDS (default 60) have passed on PE 0: each PE puts a block into its right neighbour's ring
 *          buffer, sets its right neighbour's flag to the round (an atomic set after a fence) and waits for its own
 *          flag with shmem_long_wait_until; odd PEs also get a word from the right neighbour (a blocking get);
 *          every PE adds to a counter on PE 0 (a blocking fetch-add); a barrier; a 1 ms pause. Values are checked.
 *          Ends with "fault: PE i done after R rounds" and exit 0 (when no fault came).
 *   wait   every PE waits in shmem_long_wait_until on a word that nobody sets: nothing is in flight, every PE waits
 *          on its own memory. Never ends by itself (the launcher's timeout, or the fault, ends it).
 *   segv   after the first round and a barrier, the last PE prints "fault: PE i: segfault" and writes through a null
 *          pointer; the others wait in shmem_barrier_all, which cannot complete.
 * A check that fails prints "fault: PE i: check failed: ..." and exits 1. A PE that gets past what cannot complete
 * prints "fault: PE i: past the end" and exits 3. */
#include <shmem.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RING 512

static long ring[RING];     /* written by the left neighbour */
static long flag;           /* set by the left neighbour to the round it finished */
static long counter;        /* on PE 0: one add per PE per round */
static long stop_word;      /* set on every PE by PE 0 when the time is up */
static long never;          /* mode wait: nobody sets it */
static long mine;           /* what the left neighbour gets back from me in a round */

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void fail(int me, const char *what, long got, long want) {
  fprintf(stderr, "fault: PE %d: check failed: %s: got %ld, expected %ld\n", me, what, got, want);
  exit(1);
}

/* One round; returns 1 when PE 0 said the time is up. */
static int round_once(int me, int n, long r, double t0, double seconds) {
  int right = (me + 1) % n, left = (me + n - 1) % n;
  long buf[RING];
  for (int k = 0; k < RING; k++)
    buf[k] = (long)me * 1000003L + r * 7919L + k;
  mine = r * 31 + me;
  shmem_long_put(ring, buf, RING, right);
  shmem_fence();
  shmem_long_atomic_set(&flag, r, right);
  shmem_long_wait_until(&flag, SHMEM_CMP_GE, r);
  for (int k = 0; k < RING; k += 97) { /* the left neighbour's block came before its flag */
    long want = (long)left * 1000003L + r * 7919L + k;
    if (ring[k] != want)
      fail(me, "ring", ring[k], want);
  }
  if (me % 2) {
    long got = shmem_long_g(&mine, right);
    long prev = r > 1 ? (r - 1) * 31 + right : 0; /* it may not have started this round yet */
    if (got != r * 31 + right && got != prev)
      fail(me, "get from the right neighbour", got, r * 31 + right);
  }
  long before = shmem_long_atomic_fetch_add(&counter, 1, 0);
  if (before < (r - 1) * n || before >= r * n)
    fail(me, "fetch-add on PE 0", before, (r - 1) * n);
  if (me == 0 && now() - t0 >= seconds)
    for (int pe = 0; pe < n; pe++)
      shmem_long_p(&stop_word, 1, pe);
  shmem_barrier_all();
  return stop_word != 0;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "loop") && strcmp(mode, "wait") && strcmp(mode, "segv")) {
    fprintf(stderr, "usage: fault loop|wait|segv [SECONDS] [TOKEN...]\n");
    return 2;
  }
  double seconds = argc > 2 ? atof(argv[2]) : 60;
  if (seconds <= 0)
    seconds = 60;
  shmem_init();
  int me = shmem_my_pe(), n = shmem_n_pes();
  double t0 = now();
  long r = 1;
  int done = round_once(me, n, r, t0, seconds);
  printf("fault: PE %d of %d running (pid %d)\n", me, n, (int)getpid());
  fflush(stdout);
  if (!strcmp(mode, "wait")) {
    shmem_long_wait_until(&never, SHMEM_CMP_NE, 0);
  } else if (!strcmp(mode, "segv")) {
    shmem_barrier_all();
    if (me == n - 1) {
      printf("fault: PE %d: segfault\n", me);
      fflush(stdout);
      volatile int *volatile null = NULL;
      *null = 1;
    }
    shmem_barrier_all();
  } else {
    while (!done) {
      usleep(1000);
      done = round_once(me, n, ++r, t0, seconds);
    }
    printf("fault: PE %d done after %ld rounds\n", me, r);
    fflush(stdout);
    shmem_finalize();
    return 0;
  }
  printf("fault: PE %d: past the end\n", me);
  fflush(stdout);
  return 3;
}
