/* busy_core.c - a bound PE whose core also runs unrelated busy work must not hand that work a scheduler slice in the
 * middle of a message (issue 15). The last PE forks a child that spins on the PE's own CPU (the job's binding put one
 * PE per core); then PE 0 and the last PE ping-pong BYTES with putmem + atomic set, N times, and the median one-way
 * time must stay below LIMIT_US. A PE that yields after 50 us of waiting (the copy of 1 MiB on half a CPU takes
 * longer) gets its CPU back ~2 ms later, a slice of the busy child; one that keeps spinning takes ~25-60 us.
 *   busy_core [N]  (default 40); exits 77 where the PEs are not bound to one CPU each (--bind-to core on a machine
 *   with SMT gives each PE two) or reach each other through the network transport (SHOAL_TRANSPORT=ofi). */

#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test_common.h"
#include "test_timing.h"

#define BYTES ((size_t)1 << 20)
#define LIMIT_US 500.0
#define MAXN 400

static char buf[BYTES], src[BYTES];
static long flag;
static double t[MAXN];

int main(int argc, char **argv) {
  test_name = "busy_core";
  shmem_init();
  int me = shmem_my_pe(), last = shmem_n_pes() - 1, n = argc > 1 ? atoi(argv[1]) : 40;
  if (n < 3 || n > MAXN) n = 40;
  cpu_set_t mask;
  long bound = sched_getaffinity(0, sizeof mask, &mask) == 0 && CPU_COUNT(&mask) == 1, all_bound;
  static long b_src, b_dst;
  b_src = bound;
  shmem_long_min_reduce(SHMEM_TEAM_WORLD, &b_dst, &b_src, 1);
  all_bound = b_dst;
  /* Over the network transport on loopback a message's own scheduling on the busy CPU swamps the wait's (200-2000
   * us): shared memory only. */
  if (!all_bound || last == 0 || !shmem_ptr(buf, me ? 0 : last)) {
    if (me == 0) printf("busy_core: skipped: needs 2+ PEs bound to one CPU each, on shared memory\n");
    shmem_finalize();
    return 77;
  }
  pid_t child = -1;
  if (me == last) {
    child = fork();
    if (child == 0) { /* the unrelated busy work: inherits this PE's one-CPU mask */
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() == 1) _exit(0); /* the PE died before the line above */
      for (volatile unsigned long x = 0;; x++) {
      }
    }
    CHECK(child > 0, "fork failed");
  }
  size_t bytes = BYTES;
  memset(src, me + 1, sizeof src);
  shmem_barrier_all();
  for (int i = 0; i < n; i++) {
    double t0 = now_us();
    if (me == 0) {
      shmem_putmem(buf, src, bytes, last);
      shmem_fence();
      shmem_long_atomic_set(&flag, 2 * i + 1, last);
      shmem_long_wait_until(&flag, SHMEM_CMP_GE, 2 * i + 2);
    } else if (me == last) {
      shmem_long_wait_until(&flag, SHMEM_CMP_GE, 2 * i + 1);
      shmem_putmem(buf, src, bytes, 0);
      shmem_fence();
      shmem_long_atomic_set(&flag, 2 * i + 2, 0);
    }
    t[i] = (now_us() - t0) / 2;
  }
  if (me == 0) {
    qsort(t, (size_t)n, sizeof t[0], cmp);
    printf("busy_core: %zu KiB ping-pong, busy work on PE %d's CPU: median %.1f us one way, p90 %.1f us\n",
           bytes >> 10, last, t[n / 2], t[n * 9 / 10]);
    CHECK(t[n / 2] < LIMIT_US, "median %.1f us one way, want < %.0f us (a wait that yielded to the busy work)",
          t[n / 2], LIMIT_US);
    CHECK(buf[0] == (char)(last + 1) && buf[bytes - 1] == (char)(last + 1), "data: %d %d", buf[0], buf[bytes - 1]);
  }
  shmem_barrier_all();
  if (child > 0) {
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
  }
  return test_finish();
}
