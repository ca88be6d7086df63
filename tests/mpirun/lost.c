/* lost.c - a PE lost, or a shmem_global_exit, under a launcher: the rest of the job must be stopped.
 *
 * Usage: lost MODE [TOKEN]   (TOKEN is ignored: it marks the processes of one run in /proc/PID/cmdline)
 * Every PE prints "lost: PE i of n ready" (flushed), then a barrier; then
 *   sigkill       the last PE prints "lost: PE i: SIGKILL" and kills itself; the others wait in shmem_barrier_all
 *                 (which can never complete)
 *   global_exit   the last PE prints "lost: PE i: global_exit 5" and calls shmem_global_exit(5); the others wait in
 *                 shmem_barrier_all
 * Nobody should ever get past that barrier: a PE that does prints "lost: PE i: barrier completed" and exits 3. */
#include <shmem.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "sigkill") && strcmp(mode, "global_exit")) {
    fprintf(stderr, "usage: lost sigkill|global_exit [TOKEN]\n");
    return 2;
  }
  shmem_init();
  int me = shmem_my_pe(), n = shmem_n_pes();
  printf("lost: PE %d of %d ready\n", me, n);
  fflush(stdout);
  shmem_barrier_all();
  if (me == n - 1) {
    printf("lost: PE %d: %s\n", me, strcmp(mode, "sigkill") ? "global_exit 5" : "SIGKILL");
    fflush(stdout);
    if (!strcmp(mode, "sigkill"))
      raise(SIGKILL);
    else
      shmem_global_exit(5);
  } else {
    shmem_barrier_all();
  }
  printf("lost: PE %d: barrier completed\n", me);
  fflush(stdout);
  return 3;
}
