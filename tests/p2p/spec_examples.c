/* spec_examples.c - the OpenSHMEM 1.5 specification's example programs for AMOs, put-with-signal, wait/test and locks,
 * rewritten as one program (each example is a function, run in turn between barriers) with their results asserted.
 * The context examples are in ctx_threads.c (they need threads); the lock example is also in lock.c. */
#include "ptest.h"

#include <stdint.h>

static int me, npes;
static int last_pe(void) { return npes - 1; } /* "PE 1" of the examples, PE 0 when alone */

/* shmem_atomic_add: PE 1 adds 44 to PE 0's dst (22). */
static void ex_atomic_add(void) {
  static int dst;
  dst = 22;
  shmem_barrier_all();
  if (me == last_pe()) shmem_atomic_add(&dst, 44, 0);
  shmem_barrier_all();
  if (me == 0) CHECK(dst == 66, "atomic_add: dst %d", dst);
}

/* shmem_atomic_compare_swap: every PE races to put its number into PE 0's race_winner (-1); exactly one wins. */
static void ex_compare_swap(void) {
  static int race_winner, winners;
  race_winner = -1;
  winners = 0;
  shmem_barrier_all();
  int oldval = shmem_atomic_compare_swap(&race_winner, -1, me, 0);
  if (oldval == -1) shmem_atomic_inc(&winners, 0);
  else CHECK(oldval >= 0 && oldval < npes, "compare_swap: lost to %d", oldval);
  shmem_barrier_all();
  if (me == 0) CHECK(winners == 1 && race_winner >= 0 && race_winner < npes, "compare_swap: %d winners", winners);
}

/* shmem_atomic_fetch_add: PE 1 adds 44 to PE 0's dst (22) and gets 22 back. */
static void ex_fetch_add(void) {
  static int dst;
  dst = 22;
  shmem_barrier_all();
  if (me == last_pe()) {
    int old = shmem_atomic_fetch_add(&dst, 44, 0);
    CHECK(old == 22, "fetch_add: fetched %d", old);
  }
  shmem_barrier_all();
  if (me == 0) CHECK(dst == 66, "fetch_add: dst %d", dst);
}

/* shmem_atomic_fetch_inc and shmem_atomic_inc: dst 74 becomes 75. */
static void ex_fetch_inc_inc(void) {
  static int dst;
  dst = 74;
  shmem_barrier_all();
  if (me == last_pe()) CHECK(shmem_atomic_fetch_inc(&dst, 0) == 74, "fetch_inc: wrong old value");
  shmem_barrier_all();
  if (me == 0) CHECK(dst == 75, "fetch_inc: dst %d", dst);
  dst = 74;
  shmem_barrier_all();
  if (me == last_pe()) shmem_atomic_inc(&dst, 0);
  shmem_barrier_all();
  if (me == 0) CHECK(dst == 75, "inc: dst %d", dst);
}

/* shmem_atomic_swap: odd PEs swap their number into their right neighbour's dest and get its number back. */
static void ex_swap(void) {
  static long dest;
  dest = me;
  shmem_barrier_all();
  int right = (me + 1) % npes;
  if (me & 1) {
    long swapped = shmem_atomic_swap(&dest, (long)me, right);
    CHECK(swapped == right, "swap: got %ld from PE %d", swapped, right);
  }
  shmem_barrier_all();
  int left = (me + npes - 1) % npes;
  CHECK(dest == ((left & 1) ? left : me), "swap: dest %ld", dest);
}

/* shmem_put_signal: a broadcast from PE 0 along the ring, each PE forwarding what it received. */
static void ex_put_signal(void) {
  static uint64_t sig_addr;
  size_t n = 2 << 10;
  uint64_t *data = shmem_calloc(n, sizeof(uint64_t));
  uint64_t *message = malloc(n * sizeof(uint64_t));
  for (size_t i = 0; i < n; i++) message[i] = me == 0 ? 0xabc00000 + i : 0;
  sig_addr = 0;
  shmem_barrier_all();
  int next = (me + 1) % npes;
  if (me != 0) {
    shmem_uint64_wait_until(&sig_addr, SHMEM_CMP_EQ, 1);
    memcpy(message, data, n * sizeof(uint64_t));
  }
  shmem_putmem_signal(data, message, n * sizeof(uint64_t), &sig_addr, 1, SHMEM_SIGNAL_SET, next);
  if (me == 0) shmem_uint64_wait_until(&sig_addr, SHMEM_CMP_EQ, 1);
  size_t bad = 0;
  for (size_t i = 0; i < n; i++) bad += data[i] != 0xabc00000 + i;
  CHECK(bad == 0, "put_signal broadcast: %zu words wrong", bad);
  shmem_barrier_all();
  free(message);
  shmem_free(data);
}

/* shmem_wait_until_all: every PE sets its flag on every PE to 1, then waits for all flags. */
static void ex_wait_until_all(void) {
  int *flags = shmem_calloc(npes, sizeof(int));
  for (int i = 0; i < npes; i++) shmem_atomic_set(&flags[me], 1, i);
  shmem_wait_until_all(flags, npes, NULL, SHMEM_CMP_EQ, 1);
  for (int i = 0; i < npes; i++) CHECK(flags[i] == 1, "wait_until_all: flag %d", i);
  shmem_free(flags);
}

/* shmem_wait_until_any / shmem_wait_until_some: an all-to-all of N ints per PE, summed as each block arrives. */
#define N 100
static void ex_all2all_sum(int some) {
  int total_sum = 0;
  int *my_data = malloc(N * sizeof(int));
  int *all_data = shmem_malloc(N * npes * sizeof(int));
  int *flags = shmem_calloc(npes, sizeof(int));
  int *status = calloc(npes, sizeof(int));
  size_t *indices = malloc(npes * sizeof(size_t));
  for (int i = 0; i < N; i++) my_data[i] = me * N + i;
  for (int i = 0; i < npes; i++) shmem_put_nbi(&all_data[me * N], my_data, N, i);
  shmem_fence();
  for (int i = 0; i < npes; i++) shmem_atomic_set(&flags[me], 1, i);
  for (int done = 0; done < npes;) {
    size_t ncompleted = 1;
    if (some) ncompleted = shmem_wait_until_some(flags, npes, indices, status, SHMEM_CMP_NE, 0);
    else indices[0] = shmem_wait_until_any(flags, npes, status, SHMEM_CMP_NE, 0);
    for (size_t k = 0; k < ncompleted; k++) {
      for (int j = 0; j < N; j++) total_sum += all_data[indices[k] * N + j];
      status[indices[k]] = 1;
    }
    done += (int)ncompleted;
  }
  int M = N * npes - 1;
  CHECK(total_sum == M * (M + 1) / 2, "all2all sum (%s): %d, want %d", some ? "some" : "any", total_sum,
        M * (M + 1) / 2);
  shmem_barrier_all();
  free(indices);
  free(status);
  shmem_free(flags);
  shmem_free(all_data);
  free(my_data);
}

/* shmem_wait_until_any_vector: odd PEs put 2, even PEs 1; each element is awaited with its own value. */
static void ex_wait_until_any_vector(void) {
  int total_sum = 0;
  int *ivars = shmem_calloc(npes, sizeof(int));
  int *status = calloc(npes, sizeof(int));
  int *cmp_values = malloc(npes * sizeof(int));
  for (int i = 0; i < npes; i++) {
    shmem_atomic_set(&ivars[me], me % 2 + 1, i);
    cmp_values[i] = i % 2 + 1;
  }
  for (int i = 0; i < npes; i++) {
    size_t completed_idx = shmem_wait_until_any_vector(ivars, npes, status, SHMEM_CMP_EQ, cmp_values);
    status[completed_idx] = 1;
    total_sum += ivars[completed_idx];
  }
  CHECK(total_sum == npes + npes / 2, "wait_until_any_vector: sum %d", total_sum);
  shmem_barrier_all();
  free(cmp_values);
  free(status);
  shmem_free(ivars);
}

/* shmem_wait_until_some (user_wait_all): PE 0 collects every PE's number with wait_until_some. */
static void ex_wait_until_some_user_wait_all(void) {
  int *ivars = shmem_calloc(npes, sizeof(int));
  size_t *indices = malloc(npes * sizeof(size_t));
  int *status = calloc(npes, sizeof(int));
  shmem_int_p(&ivars[me], me + 1, 0);
  if (me == 0) {
    size_t count = 0;
    while (count < (size_t)npes) {
      size_t got = shmem_wait_until_some(ivars, npes, indices, status, SHMEM_CMP_NE, 0);
      for (size_t k = 0; k < got; k++) status[indices[k]] = 1;
      count += got;
    }
    for (int i = 0; i < npes; i++) CHECK(ivars[i] == i + 1, "wait_until_some: ivars[%d] = %d", i, ivars[i]);
  }
  shmem_barrier_all();
  free(status);
  free(indices);
  shmem_free(ivars);
}

/* shmem_test_any: flags set by every PE, consumed with non-blocking test_any. */
static void ex_test_any(void) {
  int *flags = shmem_calloc(npes, sizeof(int));
  int *status = calloc(npes, sizeof(int));
  for (int i = 0; i < npes; i++) shmem_atomic_set(&flags[me], 1, i);
  int ncompleted = 0;
  while (ncompleted < npes) {
    size_t completed_idx = shmem_test_any(flags, npes, status, SHMEM_CMP_EQ, 1);
    if (completed_idx != SIZE_MAX) {
      CHECK(completed_idx < (size_t)npes && !status[completed_idx], "test_any: index %zu", completed_idx);
      ncompleted++;
      status[completed_idx] = 1;
    }
  }
  shmem_barrier_all();
  free(status);
  shmem_free(flags);
}

/* shmem_test_some: PE 0 counts the puts it has observed, without blocking, until all arrived. */
static void ex_test_some(void) {
  int *ivars = shmem_calloc(npes, sizeof(int));
  int *status = calloc(npes, sizeof(int));
  size_t *indices = malloc(npes * sizeof(size_t));
  if (me == 0) {
    size_t seen = 0;
    ivars[0] = 1;
    while (seen < (size_t)npes) {
      size_t count = shmem_test_some(ivars, npes, indices, status, SHMEM_CMP_NE, 0);
      for (size_t k = 0; k < count; k++) status[indices[k]] = 1;
      seen += count;
    }
    CHECK(shmem_test_some(ivars, npes, indices, status, SHMEM_CMP_NE, 0) == 0, "test_some: empty set");
  } else {
    shmem_p(&ivars[me], me, 0);
  }
  shmem_barrier_all();
  free(indices);
  free(status);
  shmem_free(ivars);
}

/* shmem_test (user_wait) and shmem_wait_until with SHMEM_CMP_LT (the ivar example). */
static long tflag;
static int ivar;
static void user_wait(long *v, long value) {
  while (!shmem_test(v, SHMEM_CMP_EQ, value)) {
  }
}
static void ex_test_wait_lt(void) {
  tflag = 0;
  ivar = 0;
  shmem_barrier_all();
  shmem_long_atomic_set(&tflag, 7, (me + 1) % npes);
  user_wait(&tflag, 7);
  shmem_int_atomic_set(&ivar, -1, (me + npes - 1) % npes);
  shmem_int_wait_until(&ivar, SHMEM_CMP_LT, 0);
  CHECK(tflag == 7 && ivar == -1, "test/wait_until LT: %ld %d", tflag, ivar);
  shmem_barrier_all();
}

/* The deprecated 1.4 examples (cswap, fadd, finc, inc, add, swap) with their old names. */
static void ex_deprecated(void) {
  static int race_winner, dst, winners;
  static long dest;
  race_winner = -1, dst = 22, winners = 0, dest = me;
  shmem_barrier_all();
  if (shmem_int_cswap(&race_winner, -1, me, 0) == -1) shmem_int_inc(&winners, 0);
  if (me == last_pe()) {
    CHECK(shmem_int_fadd(&dst, 44, 0) == 22, "shmem_int_fadd");
    CHECK(shmem_int_finc(&dst, 0) == 66, "shmem_int_finc");
    shmem_int_add(&dst, 10, 0);
    shmem_inc(&dst, 0);              /* C11 deprecated generic */
    CHECK(shmem_fadd(&dst, 1, 0) == 78, "C11 shmem_fadd");
  }
  int right = (me + 1) % npes;
  if (me & 1) CHECK(shmem_long_swap(&dest, (long)me, right) == right, "shmem_long_swap");
  shmem_barrier_all();
  if (me == 0) CHECK(winners == 1 && dst == 79, "deprecated: %d winners, dst %d", winners, dst);
  shmem_barrier_all();
}

int main(void) {
  shmem_init();
  ptest_init();
  me = shmem_my_pe();
  npes = shmem_n_pes();
  ex_atomic_add();
  ex_compare_swap();
  ex_fetch_add();
  ex_fetch_inc_inc();
  ex_swap();
  ex_put_signal();
  ex_wait_until_all();
  ex_all2all_sum(0);
  ex_all2all_sum(1);
  ex_wait_until_any_vector();
  ex_wait_until_some_user_wait_all();
  ex_test_any();
  ex_test_some();
  ex_test_wait_lt();
  ex_deprecated();
  return ptest_finish("spec_examples");
}
