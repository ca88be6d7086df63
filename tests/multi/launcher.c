/* launcher.c - PE behaviours for the oshrun tests (tests/scripts/launcher.py drives it and checks oshrun's answer).
 * Every PE first prints "pid RANK PID" (flushed) so that the driver can find, kill and later look for it.
 *
 * Usage: launcher MODE [TOKEN]   (TOKEN is ignored: it marks the processes of one run in /proc/PID/cmdline)
 *   ok           everyone finalizes, exit 0
 *   exit1        the last PE prints "exiting" and calls exit(1) (not _exit); the others sleep
 *   sigkill      the last PE kills itself with SIGKILL; the others sleep
 *   global_exit  the last PE calls shmem_global_exit(3); the others sleep
 *   status       everyone finalizes; then the last PE exits 5, PE 0 (if another) exits 7 after 300 ms
 *   hang         everyone sleeps forever (PE 0 inside a barrier)
 *   sleep        everyone sleeps forever (the driver kills something)
 *   tag          PE i prints "out from PE i" on stdout, "err from PE i" on stderr, then "partial i" without newline
 *   stdin        PE i reads its stdin to EOF and prints "PE i read N bytes: <text>" */
#include <shmem.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void sleep_forever(void) {
  for (;;) pause();
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "ok";
  shmem_init();
  int me = shmem_my_pe(), npes = shmem_n_pes(), last = me == npes - 1;
  printf("pid %d %d\n", me, (int)getpid());
  fflush(stdout);
  shmem_barrier_all(); /* every PE is up and has printed its pid */
  if (!strcmp(mode, "ok")) {
    shmem_finalize();
    return 0;
  } else if (!strcmp(mode, "exit1") || !strcmp(mode, "sigkill") || !strcmp(mode, "global_exit")) {
    if (!last) sleep_forever();
    printf("exiting\n");
    fflush(stdout);
    if (!strcmp(mode, "exit1")) exit(1);
    if (!strcmp(mode, "sigkill")) raise(SIGKILL);
    shmem_global_exit(3);
  } else if (!strcmp(mode, "status")) {
    shmem_finalize();
    if (last) return 5;
    if (me == 0) {
      nanosleep(&(struct timespec){0, 300000000}, NULL);
      return 7;
    }
    return 0;
  } else if (!strcmp(mode, "hang")) {
    if (me == 0 && npes > 1) shmem_barrier_all(); /* never matched */
    sleep_forever();
  } else if (!strcmp(mode, "sleep")) {
    sleep_forever();
  } else if (!strcmp(mode, "tag")) {
    printf("out from PE %d\n", me);
    fflush(stdout);
    fprintf(stderr, "err from PE %d\n", me);
    printf("partial %d", me);
    fflush(stdout);
    shmem_finalize();
    return 0;
  } else if (!strcmp(mode, "stdin")) {
    char buf[256];
    size_t n = fread(buf, 1, sizeof buf - 1, stdin);
    buf[n] = 0;
    if (n && buf[n - 1] == '\n') buf[n - 1] = 0;
    printf("PE %d read %zu bytes: %s\n", me, n, buf);
    shmem_finalize();
    return 0;
  }
  fprintf(stderr, "launcher: unknown mode '%s'\n", mode);
  shmem_global_exit(2);
}
