/* idle_thread.c - a PE between calls costs no CPU over libfabric (issue 29). Each PE sends its right neighbour 20
 * rounds of a non-fetching and a fetching AMO and a put with signal (over net: fallback requests and answers, and a
 * flag as remote CQ data, all entries of the receive CQ); every value is checked. Then each PE that reaches a
 * neighbour over ofi sleeps 300 ms without a call: its progress thread must sleep too, at most 50 progress calls of
 * its own and under a quarter of the wall time of CPU for the whole process. On libfabric 1.17's net the CQ's fd
 * stayed readable after the first entry and the thread spun (tens of thousands of calls, a CPU per PE).
 * Without ofi, or without a progress thread, only the values are checked. */
#include "comm.h"
#include "ptest.h"

#include <time.h>
#include <unistd.h>

#define ROUNDS 20
#define N 64

static uint64_t sig; /* the type of spec 9.7's signal routines */
static long cnt, buf[N];

static double clock_s(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(void) {
  shmem_init();
  ptest_init();
  int me = ptest_me, n = ptest_npes, right = (me + 1) % n, left = (me + n - 1) % n;
  long src[N];
  for (long r = 1; r <= ROUNDS; r++) {
    for (int i = 0; i < N; i++) src[i] = me * 100000 + r * 100 + i;
    shmem_long_atomic_add(&cnt, 1, right);
    long got = shmem_long_atomic_fetch(&cnt, right);
    CHECK(got >= r, "round %ld: fetched %ld from PE %d's counter, want at least %ld", r, got, right, r);
    shmem_putmem_signal(buf, src, sizeof src, &sig, (uint64_t)r, SHMEM_SIGNAL_SET, right);
    shmem_signal_wait_until(&sig, SHMEM_CMP_GE, (uint64_t)r);
    for (int i = 0; i < N; i++)
      if (buf[i] != left * 100000 + r * 100 + i) {
        CHECK(0, "round %ld: buf[%d] from PE %d is %ld, want %ld", r, i, left, buf[i], left * 100000 + r * 100 + i);
        break;
      }
    shmem_barrier_all(); /* the left neighbour's next put waits for this check */
  }
  CHECK(cnt == ROUNDS, "counter %ld, want %d adds from PE %d", cnt, ROUNDS, left);

  bool ofi = shoal_g.tl_of[right] == &shoal_tl_ofi_ops || shoal_g.tl_of[left] == &shoal_tl_ofi_ops;
  shoal_tl_ofi_info_t a, b;
  if (ofi) shoal_tl_ofi_query(&a);
  if (ofi && a.progress_thread) {
    double c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID), t0 = clock_s(CLOCK_MONOTONIC);
    usleep(300 * 1000);
    double cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0, wall = clock_s(CLOCK_MONOTONIC) - t0;
    shoal_tl_ofi_query(&b);
    unsigned long long calls = (unsigned long long)(b.thread_progress - a.thread_progress);
    CHECK(calls <= 50, "while this PE slept %.0f ms its progress thread made %llu progress calls (want at most 50: "
          "spinning on a readable fd?)", wall * 1e3, calls);
    CHECK(cpu < 0.25 * wall, "while this PE slept %.0f ms the process used %.0f ms of CPU", wall * 1e3, cpu * 1e3);
    printf("idle_thread: PE %d over ofi (%s): %llu progress calls and %.1f ms of CPU in %.0f ms of sleep\n", me,
           a.provider, calls, cpu * 1e3, wall * 1e3);
  }
  return ptest_finish("idle_thread");
}
