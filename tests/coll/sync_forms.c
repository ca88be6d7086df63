/* sync_forms.c - shmem_sync by argument count (spec 1.5 9.9.4), compiled by compile_check.sh with -DCASE=n: case 0
 * (both forms, and the deprecated routine by address) must compile, as C99, C11 and C++; other counts must not. */
#include <shmem.h>

static long ps[SHMEM_SYNC_SIZE];

int f(void);
int f(void) {
  int r = 0;
#if CASE == 0
  r = shmem_sync(SHMEM_TEAM_WORLD);
  shmem_sync(0, 0, 1, ps);
#ifndef __cplusplus
  void (*dep)(int, int, int, long *) = shmem_sync;
  dep(0, 0, 1, ps);
  (shmem_sync)(0, 0, 1, ps);
#endif
#elif CASE == 1
  shmem_sync(SHMEM_TEAM_WORLD, 0);
#elif CASE == 2
  shmem_sync(0, 0, 1);
#endif
  return r;
}
