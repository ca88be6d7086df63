/* nested.c - a PE that starts another Shoal program: the inner program runs as a 1-PE job of its own (it inherits the
 * launcher's variables, but SHOAL_PE_JOB tells it they belong to this PE's job), and this job is unharmed.
 *
 * Usage: nested N NPES_PROGRAM   (runs "NPES_PROGRAM 1" with system() after shmem_init, on every PE)
 * Checks: the inner program exited 0 (it checks that it is 1 PE); then this job's shmem_n_pes() == N, my_pe distinct
 * (a fetch-add on PE 0's counter ends at N) and a put to the right neighbour arrives. Each PE prints
 * "nested: PE i: inner job exited 0"; PE 0 then prints "nested: OK: N PEs". Exits 1 on any mismatch. */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

static long counter, from_left = -1;
static int fails;

#define EXPECT(cond, ...)                                                                                             \
  do {                                                                                                                 \
    if (!(cond)) {                                                                                                     \
      char m_[4400];                                                                                                    \
      snprintf(m_, sizeof m_, __VA_ARGS__);                                                                            \
      fprintf(stderr, "nested: PE %d: %s\n", shmem_my_pe(), m_);                                                       \
      fails++;                                                                                                         \
    }                                                                                                                  \
  } while (0)

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: nested N NPES_PROGRAM\n");
    return 2;
  }
  int want = atoi(argv[1]);
  shmem_init();
  int me = shmem_my_pe(), n = shmem_n_pes();
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "'%s' 1", argv[2]);
  fflush(stdout);
  int st = system(cmd);
  EXPECT(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "inner program \"%s\": %s %d, expected exit 0", cmd,
         st != -1 && WIFSIGNALED(st) ? "signal" : "exit status", st == -1 ? -1 : WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
  if (!fails) printf("nested: PE %d: inner job exited 0\n", me);
  fflush(stdout);
  EXPECT(n == want, "shmem_n_pes() is %d, expected %d", n, want);
  long before = shmem_long_atomic_fetch_add(&counter, 1, 0);
  EXPECT(before >= 0 && before < n, "fetch-add on PE 0's counter returned %ld, expected [0, %d)", before, n);
  shmem_long_p(&from_left, me, (me + 1) % n);
  shmem_barrier_all();
  EXPECT(from_left == (me + n - 1) % n, "the left neighbour wrote %ld, expected %d", from_left, (me + n - 1) % n);
  if (me == 0) {
    EXPECT(counter == n, "PE 0's counter is %ld, expected %d", counter, n);
    if (!fails) printf("nested: OK: %d PEs\n", n);
  }
  shmem_finalize();
  return fails ? 1 : 0;
}
