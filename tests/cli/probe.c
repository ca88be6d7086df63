/* probe.c - what a PE sees of its launch: "PE i of n local j of m cpus K var VALUE" (VALUE of the variable named by
 * argv[1], or "-"), for tests/cli/oshrun_cli.py. */
#include <sched.h>
#include <shmem.h>
#include <shmemx.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  shmem_init();
  cpu_set_t set;
  int cpus = sched_getaffinity(0, sizeof set, &set) ? -1 : CPU_COUNT(&set);
  const char *v = argc > 1 ? getenv(argv[1]) : NULL;
  printf("PE %d of %d local %d of %d cpus %d var %s\n", shmem_my_pe(), shmem_n_pes(), shmemx_local_pe(),
         shmemx_local_n_pes(), cpus, v ? v : "-");
  shmem_finalize();
  return 0;
}
