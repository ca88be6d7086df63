/* pre_init.c - a PE that runs another Shoal program (argv[1]) before its own shmem_init, as a wrapper script that
 * runs a Shoal tool and then the application does: the tool takes the PE's place in the job while it runs (it has
 * the PE's launcher variables and nothing tells it otherwise), and the PE joins once the tool has finalized. */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  int rc = system(argv[1]);
  shmem_init();
  printf("pre_init: PE %d of %d, tool status %d\n", shmem_my_pe(), shmem_n_pes(), rc);
  shmem_finalize();
  return rc != 0;
}
