/* amo_nonfetch.c - non-fetching AMOs complete at quiet and are ordered by fence, and do not wait for the target
 * (issue 29: over ofi's message fallback they return once sent; a fetching one still waits for its answer).
 *   1. every PE adds, incs, xors and sets on every PE, then quiet and a barrier: exact values;
 *   2. adds to the next PE, fence, a put of a flag that PE waits for: the adds must have landed;
 *   3. (2+ PEs) PE 0 issues adds to the last PE while that PE is stopped (SIGSTOP): the calls must return at once
 *      (an AMO waiting for its answer would wait until SIGCONT, sent after 1.5 s by an alarm); quiet after SIGCONT
 *      completes them. Over shm the target's CPU is not needed anyway: the check holds trivially.
 *   4. adds on a context of its own to the next PE, shmem_ctx_quiet, a flag put on the default context: the
 *      context's quiet covers the AMOs issued on it. */
#include "ptest.h"

#include <signal.h>
#include <stdbool.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define ITER 300
#define FENCE_N 100
#define STOP_N 32

static long cnt, cnt2, fcnt, scnt, flag, ccnt, cflag;
static unsigned long bits;
static long slot[64];
static int pid;
static volatile sig_atomic_t cont_pid;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}
static void on_alarm(int s) {
  (void)s;
  if (cont_pid) kill(cont_pid, SIGCONT);
}
static bool stopped(int p) { /* /proc/PID/stat's third field: T when stopped */
  char path[64], buf[512];
  snprintf(path, sizeof path, "/proc/%d/stat", p);
  FILE *f = fopen(path, "r");
  if (!f) return false;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  char *e = strrchr(buf, ')');
  return e && e[1] == ' ' && (e[2] == 'T' || e[2] == 't');
}

int main(void) {
  shmem_init();
  ptest_init();
  int me = ptest_me, n = ptest_npes;
  if (n > 64) n = 64; /* slot[] and bits: the first 64 take part in part 1 */

  /* 1. */
  if (me < n) {
    for (int i = 0; i < ITER; i++)
      for (int q = 0; q < n; q++) {
        shmem_long_atomic_add(&cnt, me + 1, q);
        shmem_long_atomic_inc(&cnt2, q);
      }
    for (int q = 0; q < n; q++) {
      shmem_ulong_atomic_xor(&bits, 1ul << me, q);
      shmem_long_atomic_set(&slot[me], 1000 + me, q);
    }
  }
  shmem_quiet();
  shmem_barrier_all();
  if (me < n) {
    long want = (long)ITER * n * (n + 1) / 2;
    CHECK(cnt == want, "cnt %ld, want %ld", cnt, want);
    CHECK(cnt2 == (long)ITER * n, "cnt2 %ld, want %ld", cnt2, (long)ITER * n);
    CHECK(bits == (n == 64 ? ~0ul : (1ul << n) - 1), "bits %#lx", bits);
    for (int p = 0; p < n; p++) CHECK(slot[p] == 1000 + p, "slot[%d] %ld", p, slot[p]);
  }
  shmem_barrier_all();

  /* 2. */
  int next = (me + 1) % ptest_npes;
  for (int i = 0; i < FENCE_N; i++) shmem_long_atomic_add(&fcnt, 1, next);
  shmem_fence();
  shmem_long_p(&flag, 1, next);
  shmem_long_wait_until(&flag, SHMEM_CMP_EQ, 1);
  CHECK(fcnt == FENCE_N, "after the fence and the flag: fcnt %ld, want %d", fcnt, FENCE_N);
  shmem_barrier_all();

  /* 3. */
  if (ptest_npes >= 2) {
    int last = ptest_npes - 1;
    if (me == last) {
      shmem_int_p(&pid, (int)getpid(), 0);
      shmem_quiet();
    }
    shmem_barrier_all();
    if (me == last) {
      raise(SIGSTOP); /* PE 0 continues it */
    } else if (me == 0) {
      double t = now_s();
      while (!stopped(pid) && now_s() - t < 5) usleep(1000);
      CHECK(stopped(pid), "PE %d (pid %d) did not stop", last, pid);
      cont_pid = pid;
      signal(SIGALRM, on_alarm);
      struct itimerval it = {.it_value = {1, 500000}};
      setitimer(ITIMER_REAL, &it, NULL);
      t = now_s();
      for (int i = 0; i < STOP_N; i++) shmem_long_atomic_add(&scnt, 2, last);
      double took = now_s() - t;
      struct itimerval off = {0};
      setitimer(ITIMER_REAL, &off, NULL);
      kill(pid, SIGCONT);
      CHECK(took < 1.0, "%d adds to a stopped PE took %.3f s: they waited for its answers", STOP_N, took);
      shmem_quiet();
    }
    shmem_barrier_all();
    if (me == last) CHECK(scnt == 2 * STOP_N, "scnt %ld, want %d", scnt, 2 * STOP_N);
  }
  /* 4. */
  shmem_ctx_t ctx;
  if (shmem_ctx_create(0, &ctx)) ctx = SHMEM_CTX_DEFAULT;
  for (int i = 0; i < FENCE_N; i++) shmem_ctx_long_atomic_add(ctx, &ccnt, 3, next);
  shmem_ctx_quiet(ctx);
  shmem_long_p(&cflag, 1, next);
  shmem_long_wait_until(&cflag, SHMEM_CMP_EQ, 1);
  CHECK(ccnt == 3 * FENCE_N, "after the context's quiet and the flag: ccnt %ld, want %d", ccnt, 3 * FENCE_N);
  if (ctx != SHMEM_CTX_DEFAULT) shmem_ctx_destroy(ctx);
  return ptest_finish("amo_nonfetch");
}
