/* shared_cpu.c - waits must not collapse when PEs share one CPU while their affinity masks still show several (issue
 * 15): after shmem_init every PE moves itself to CPU 0, so init saw the PEs fit the cores. Then each kind of wait
 * (barrier_all, wait_until ping-pong, signal_wait_until ping-pong, set_lock, broadcast, alltoall) runs N times, and
 * the median time per call must stay below LIMIT_US: a PE that spins hundreds of microseconds before it lets the peer
 * on its CPU run takes > 600 us per call; one that backs off takes a few context switches (~5-50 us here).
 *   shared_cpu [N]  (default 400) */

#include <sched.h>
#include <time.h>

#include "test_common.h"
#include "test_timing.h"

#define LIMIT_US 250.0
#define MAXN 4000

static long flag, bsrc[8], bdst[8], adst[64], asrc[64], lk;
static uint64_t sig;
static double t[MAXN];

static void op(const char *name, int n, void (*f)(long i)) {
  int me = shmem_my_pe();
  shmem_barrier_all();
  for (long i = 0; i < n; i++) {
    double t0 = now_us();
    f(i);
    t[i] = now_us() - t0;
  }
  qsort(t, (size_t)n, sizeof t[0], cmp);
  double med = t[n / 2];
  if (me == 0) printf("shared_cpu: %-16s median %8.1f us  p90 %8.1f us\n", name, med, t[n * 9 / 10]);
  CHECK(med < LIMIT_US, "%s: median %.1f us per call, want < %.0f us (a wait that does not let the peer run)", name,
        med, LIMIT_US);
  shmem_barrier_all();
}

static void f_barrier(long i) { (void)i; shmem_barrier_all(); }
/* PE 0 and the last PE ping-pong; the others only wait in the barrier at the end. */
static void f_pingpong(long i) {
  int me = shmem_my_pe(), last = shmem_n_pes() - 1;
  if (me == 0) {
    shmem_long_p(&flag, 2 * i + 1, last);
    shmem_long_wait_until(&flag, SHMEM_CMP_GE, 2 * i + 2);
  } else if (me == last) {
    shmem_long_wait_until(&flag, SHMEM_CMP_GE, 2 * i + 1);
    shmem_long_p(&flag, 2 * i + 2, 0);
  }
}
static void f_signal(long i) {
  int me = shmem_my_pe(), last = shmem_n_pes() - 1;
  if (me == 0) {
    shmem_putmem_signal(bdst, bsrc, sizeof bsrc, &sig, (uint64_t)(2 * i + 1), SHMEM_SIGNAL_SET, last);
    shmem_signal_wait_until(&sig, SHMEM_CMP_GE, (uint64_t)(2 * i + 2));
  } else if (me == last) {
    shmem_signal_wait_until(&sig, SHMEM_CMP_GE, (uint64_t)(2 * i + 1));
    shmem_putmem_signal(bdst, bsrc, sizeof bsrc, &sig, (uint64_t)(2 * i + 2), SHMEM_SIGNAL_SET, 0);
  }
}
/* Every PE takes the lock in turn: a waiter spins on a word that the holder, maybe on its CPU, must release. */
static void f_lock(long i) {
  (void)i;
  shmem_set_lock(&lk);
  shmem_clear_lock(&lk);
  shmem_barrier_all();
}
static void f_bcast(long i) {
  bsrc[0] = i;
  shmem_broadcastmem(SHMEM_TEAM_WORLD, bdst, bsrc, sizeof bsrc, 0);
  CHECK(bdst[0] == i, "broadcast %ld: got %ld", i, bdst[0]);
}
static void f_alltoall(long i) {
  int me = shmem_my_pe(), n = shmem_n_pes();
  for (int p = 0; p < n; p++) asrc[p] = i * 1000 + me * 10 + p;
  shmem_long_alltoall(SHMEM_TEAM_WORLD, adst, asrc, 1);
  CHECK(adst[0] == i * 1000 + me, "alltoall %ld: from PE 0 got %ld", i, adst[0]);
}

int main(int argc, char **argv) {
  test_name = "shared_cpu";
  int n = argc > 1 ? atoi(argv[1]) : 400;
  if (n < 10 || n > MAXN) n = 400;
  shmem_init();
  /* The limit is for waits on shared memory: over a network transport (SHOAL_TRANSPORT=ofi, several nodes) a call is
   * round trips of the wire plus its progress threads on the one CPU, which this test does not measure. */
  for (int p = 0; p < shmem_n_pes(); p++)
    if (!shmem_ptr(&flag, p)) {
      if (shmem_my_pe() == 0) printf("shared_cpu: not timed: PE %d is not reached through shared memory\n", p);
      return test_finish();
    }
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(0, &one);
  CHECK(sched_setaffinity(0, sizeof one, &one) == 0, "cannot move to CPU 0");
  CHECK(shmem_n_pes() <= 8, "at most 8 PEs");
  op("barrier_all", n, f_barrier);
  op("wait_until", n, f_pingpong);
  op("signal_wait", n, f_signal);
  op("set_lock", n, f_lock);
  op("broadcast", n, f_bcast);
  op("alltoall", n, f_alltoall);
  return test_finish();
}
