/* lock.c - shmem_set_lock/test_lock/clear_lock on a static and a heap lock.
 *
 * Every PE takes each lock ITER times and, while holding it, does a non-atomic read-modify-write (g, then p) of a
 * counter on PE 0 and checks that nobody else is inside (an AMO "inside" counter must read 0). A broken lock loses
 * updates or sees two PEs inside. Every PE must get the lock exactly ITER times (no starvation, no failure), and the
 * order of acquisitions is recorded to show that every PE got in while others were waiting. test_lock must report
 * a held lock as taken (1) and a free one as acquired (0). */
#include "ptest.h"

#include <unistd.h>

#define ITER 200
static int me, npes;
static long s_lock;           /* static lock */
static long s_counter;        /* on PE 0: incremented non-atomically under the lock */
static int s_inside;          /* on PE 0: PEs inside the critical section */
static int s_got[64];         /* on PE 0: acquisitions per PE */
static int s_order[64 * ITER * 2]; /* on PE 0: who held the lock, in order */

static void critical(int slot) {
  int in = shmem_int_atomic_fetch_inc(&s_inside, 0);
  CHECK(in == 0, "%d other PE(s) inside the critical section", in);
  long c = shmem_long_g(&s_counter, 0);
  for (volatile int spin = 0; spin < 3000; spin++) { /* widen the window a broken lock would lose updates in */
  }
  shmem_long_p(&s_counter, c + 1, 0);
  shmem_int_p(&s_order[slot], me, 0);
  shmem_int_atomic_inc(&s_got[me], 0);
  shmem_int_atomic_add(&s_inside, -1, 0);
}

int main(void) {
  shmem_init();
  ptest_init();
  me = shmem_my_pe();
  npes = shmem_n_pes();
  if (npes > 64) {
    shmem_finalize();
    return 77;
  }
  long *h_lock = shmem_calloc(1, sizeof(long));

  /* ---- set_lock/clear_lock, static lock then heap lock ---- */
  for (int round = 0; round < 2; round++) {
    long *lock = round ? h_lock : &s_lock;
    for (int i = 0; i < ITER; i++) {
      shmem_set_lock(lock);
      /* slot from the counter: it is the number of acquisitions so far (valid under the lock) */
      critical((int)shmem_long_g(&s_counter, 0));
      shmem_clear_lock(lock);
      if (i % 16 == 0) usleep(20); /* let the other PEs run, so acquisitions interleave */
    }
    shmem_barrier_all();
  }
  if (me == 0) {
    CHECK(s_counter == 2L * npes * ITER, "counter %ld, want %ld (lost updates)", s_counter, 2L * npes * ITER);
    for (int p = 0; p < npes; p++) CHECK(s_got[p] == 2 * ITER, "PE %d got the lock %d times", p, s_got[p]);
    /* fairness: with several PEs contending, nobody holds the lock for all its rounds in one stretch */
    if (npes > 1) {
      int changes = 0;
      for (long k = 1; k < s_counter; k++) changes += s_order[k] != s_order[k - 1];
      CHECK(changes >= npes - 1, "the lock changed hands only %d times", changes);
      printf("lock: %ld acquisitions, %d hand-overs between PEs\n", s_counter, changes);
    }
  }
  shmem_barrier_all();

  /* ---- test_lock: a held lock reads as taken; a free one is acquired ---- */
  if (me == 0) CHECK(shmem_test_lock(&s_lock) == 0, "test_lock on a free lock did not acquire it");
  shmem_barrier_all();
  if (me != 0) CHECK(shmem_test_lock(&s_lock) == 1, "test_lock acquired a lock PE 0 holds");
  shmem_barrier_all();
  if (me == 0) shmem_clear_lock(&s_lock);
  shmem_barrier_all();
  if (me == 0) s_counter = 0;
  shmem_barrier_all();
  for (int i = 0; i < ITER; i++) { /* test_lock polling loops from every PE */
    long tries = 1;
    while (shmem_test_lock(h_lock)) tries++;
    critical((int)shmem_long_g(&s_counter, 0));
    shmem_clear_lock(h_lock);
  }
  shmem_barrier_all();
  if (me == 0) CHECK(s_counter == (long)npes * ITER, "test_lock counter %ld", s_counter);

  /* ---- the spec's example: every PE increments a count on PE 0 under the lock ---- */
  static long ex_lock;
  static int ex_count;
  shmem_set_lock(&ex_lock);
  int val = shmem_int_g(&ex_count, 0);
  val++;
  shmem_int_p(&ex_count, val, 0);
  shmem_clear_lock(&ex_lock);
  shmem_barrier_all();
  if (me == 0) CHECK(ex_count == npes, "spec example: count %d, want %d", ex_count, npes);
  shmem_free(h_lock);
  return ptest_finish("lock");
}
