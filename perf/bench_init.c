/* bench_init - how long shmem_init takes (standard API only, so it also builds against other OpenSHMEMs).
 *
 *   LAUNCHER -n N bench_init     prints "init N PEs: max X ms, min Y ms (shmem_init), Z ms to the first barrier"
 *
 * Each PE times its own shmem_init call (CLOCK_MONOTONIC); PE 0 prints the slowest and the fastest, and the time of
 * the first barrier after init (the job's start skew is not in it). Run it under each launcher in one session to
 * compare them: the wall time of the whole launch is the launcher's own business (time it from outside). */
#include <shmem.h>
#include <stdio.h>
#include <time.h>

static double ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

static double t_init, t_max, t_min;

int main(void) {
  double t0 = ms();
  shmem_init();
  t_init = ms() - t0;
  double t1 = ms();
  shmem_barrier_all();
  double t_bar = ms() - t1;
  static double ws[SHMEM_REDUCE_MIN_WRKDATA_SIZE];
  static long ps[SHMEM_REDUCE_SYNC_SIZE];
  for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++) ps[i] = SHMEM_SYNC_VALUE;
  shmem_barrier_all();
  shmem_double_max_to_all(&t_max, &t_init, 1, 0, 0, shmem_n_pes(), ws, ps);
  shmem_barrier_all();
  shmem_double_min_to_all(&t_min, &t_init, 1, 0, 0, shmem_n_pes(), ws, ps);
  if (shmem_my_pe() == 0)
    printf("init %d PEs: max %.2f ms, min %.2f ms (shmem_init), %.3f ms to the first barrier\n", shmem_n_pes(), t_max,
           t_min, t_bar);
  shmem_finalize();
  return 0;
}
