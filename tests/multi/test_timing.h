/* test_timing.h - the clock and the median's sort of the multi-PE tests that bound a wait's time (shared_cpu.c,
 * busy_core.c). */
#ifndef SHOAL_TEST_TIMING_H
#define SHOAL_TEST_TIMING_H
#include <time.h>

static inline double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}
/* qsort comparison of doubles, ascending. */
static inline int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}
#endif
