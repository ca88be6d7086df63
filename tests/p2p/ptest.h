/* ptest.h - helpers shared by the p2p tests: value checks that count failures, and the exit status. */
#ifndef PTEST_H
#define PTEST_H
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int ptest_me, ptest_npes, ptest_fails;

/* Record a failure with its location and a formatted detail; give up (exit the job) after 20. */
#define CHECK(cond, ...)                                                                                               \
  do {                                                                                                                 \
    if (!(cond)) {                                                                                                     \
      fprintf(stderr, "PE %d: %s:%d: check failed: %s: ", ptest_me, __FILE__, __LINE__, #cond);                        \
      fprintf(stderr, __VA_ARGS__);                                                                                    \
      fputc('\n', stderr);                                                                                             \
      if (__atomic_add_fetch(&ptest_fails, 1, __ATOMIC_RELAXED) >= 20) shmem_global_exit(1);                           \
    }                                                                                                                  \
  } while (0)

static void ptest_init(void) {
  ptest_me = shmem_my_pe();
  ptest_npes = shmem_n_pes();
}

/* Every PE learns whether any PE failed; PE 0 prints the verdict. Returns the process exit status. */
__attribute__((unused)) static int ptest_finish(const char *name) {
  static int total;
  shmem_barrier_all();
  shmem_int_atomic_add(&total, ptest_fails, 0);
  shmem_barrier_all();
  int all = shmem_int_atomic_fetch(&total, 0);
  if (ptest_me == 0) printf("%s: %s (%d PEs, %d failed checks)\n", name, all ? "FAILED" : "OK", ptest_npes, all);
  shmem_finalize();
  return all ? 1 : 0;
}
#endif
