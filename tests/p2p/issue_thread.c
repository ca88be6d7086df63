/* issue_thread.c - a PE that only issues keeps its progress thread back, and still serves its peers (issue 29).
 * 1. Each PE reads its right neighbour's array in windows of 64 nbi gets with ~4 us of work between two gets (a
 *    window's issues outlast the thread's 200 us look at whether its PE polls), then shmem_quiet; every value is
 *    checked. Over ofi with a progress thread, that thread may make progress calls of its own in at most one window
 *    of 4 (windows are counted, not calls, so a stall of the PE's CPU costs one window however many calls the
 *    thread makes during it). Before, the issuing PE made no progress call between its quiets, so the thread went
 *    back to the fd and woke at the answers to its own gets, on the PE's core: calls in 16-26 of the 40 windows (38-49
 *    calls), and in a benchmark's windows (no work between the gets) 12-20 us a get in half of them against 6-10.
 * 2. PE 0 only issues for 300 ms (nbi puts to PE 1, work between them, never a wait) while every other PE reads PE
 *    0's memory with blocking gets and fetching AMOs for 200 ms: over ofi each must be answered within 50 ms (150
 *    where PEs outnumber CPUs). PE 0's issues serve them now; keeping the thread back without a progress call of
 *    the PE's own would leave them for 300 ms.
 * Without ofi, or without a progress thread, only the values are checked; where PEs outnumber the node's CPUs (the
 * runtime's own count: shoal_wait_oversubscribed) the thread's calls are not (a PE then waits off its CPU for whole
 * slices, and its thread serves its peers meanwhile, as it should). */
#include "comm.h"
#include "ptest.h"

#include <time.h>

#define W 64
#define WINDOWS 40

static long arr[W], word, ctr, total, sink[W];
static const long one = 1;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
static void work_us(double us) { /* compute without a call of the library */
  double end = now_s() + us * 1e-6;
  while (now_s() < end) {
  }
}

int main(void) {
  shmem_init();
  ptest_init();
  int me = ptest_me, n = ptest_npes, right = (me + 1) % n;
  for (int i = 0; i < W; i++) arr[i] = me * 1000 + i;
  word = 7000 + me;
  shmem_barrier_all();

  bool ofi = shoal_g.tl_of[right] == &shoal_tl_ofi_ops;
  bool crowd = shoal_wait_oversubscribed();
  shoal_tl_ofi_info_t a, b;
  if (ofi) shoal_tl_ofi_query(&a);
  bool counted = ofi && a.progress_thread && !crowd;
  unsigned long long calls = 0;
  int busy = 0; /* windows in which the thread made a progress call */
  long got[W];
  for (int w = 0; w < WINDOWS; w++) {
    if (counted) shoal_tl_ofi_query(&a);
    for (int i = 0; i < W; i++) {
      got[i] = -1;
      shmem_getmem_nbi(&got[i], &arr[i], sizeof got[i], right);
      work_us(4);
    }
    shmem_quiet();
    if (counted) {
      shoal_tl_ofi_query(&b);
      calls += b.thread_progress - a.thread_progress;
      busy += b.thread_progress != a.thread_progress;
    }
    for (int i = 0; i < W; i++)
      if (got[i] != right * 1000 + i) {
        CHECK(0, "window %d: got[%d] from PE %d is %ld, want %ld", w, i, right, got[i], (long)(right * 1000 + i));
        break;
      }
  }
  if (counted) {
    CHECK(busy <= WINDOWS / 4, "in %d of %d windows of %d nbi gets to PE %d the progress thread made progress calls "
          "of its own (%llu in all; want at most %d windows: the issuing PE's own calls keep it back)", busy, WINDOWS,
          W, right, calls, WINDOWS / 4);
    printf("issue_thread: PE %d over ofi (%s): thread progress calls in %d of %d windows (%llu calls)\n", me,
           a.provider, busy, WINDOWS, calls);
  }
  shmem_barrier_all();

  if (n >= 2) {
    double t0 = now_s(), worst = 0;
    long ops = 0;
    if (me == 0) {
      for (long i = 0; now_s() - t0 < 0.3; i++) {
        shmem_putmem_nbi(&sink[i % W], &one, sizeof one, 1);
        work_us(20);
      }
    } else {
      while (now_s() - t0 < 0.2) {
        double s = now_s();
        long v = shmem_long_g(&word, 0);
        long c = shmem_long_atomic_fetch_inc(&ctr, 0);
        double d = now_s() - s;
        worst = d > worst ? d : worst;
        CHECK(v == 7000, "a get of PE 0's word while it only issued gave %ld, want 7000", v);
        CHECK(c >= ops, "a fetch_inc of PE 0's counter gave %ld, want at least %ld", c, ops);
        ops++;
      }
      const double bound = crowd ? 0.15 : 0.05;
      if (shoal_g.tl_of[0] == &shoal_tl_ofi_ops)
        CHECK(worst < bound, "while PE 0 only issued, a get and a fetch_inc to it took up to %.1f ms (want under "
              "%.0f)", worst * 1e3, bound * 1e3);
      CHECK(ops > 0, "no get answered in 200 ms");
    }
    if (me != 0) shmem_long_atomic_add(&total, ops, 0);
    shmem_barrier_all();
    if (me == 0) CHECK(ctr == total, "PE 0's counter is %ld after %ld fetch_incs of the others", ctr, total);
    if (me != 0) printf("issue_thread: PE %d: %ld gets and fetch_incs to PE 0 while it only issued, worst %.2f ms\n",
                        me, ops, worst * 1e3);
  }
  return ptest_finish("issue_thread");
}
