/* alloc_noop.c - symmetric heap calls that perform no action return at once, without a barrier (spec 1.5 9.3.1:
 * "when no action is performed, these routines return without performing a barrier").
 *
 * Usage: alloc_noop (oshrun -n N --timeout S). For each such call in turn, ONE PE (rotating) makes it alone and
 * then tells every other PE so with a put; the others wait for that word. A call that entered a barrier would wait
 * for PEs that never join it, so the job would hang (oshrun --timeout stops it). Checks that each call returns NULL,
 * then that the heap still works: realloc(ptr, 0) by every PE frees (NULL, a barrier), and a later malloc succeeds
 * at the same offset on every PE. */
#include "test_common.h"

static long done_word; /* done_word on PE p: the number of lone calls whose maker has finished */

int main(void) {
  test_name = "alloc_noop";
  shmem_init();
  int me = shmem_my_pe(), npes = shmem_n_pes();
  static const char *names[] = {"shmem_malloc(0)", "shmem_calloc(0, 8)", "shmem_calloc(8, 0)",
                                "shmem_align(64, 0)", "shmem_align(3, 0)", "shmem_malloc_with_hints(0, 0)",
                                "shmem_malloc_with_hints(0, SHMEM_MALLOC_ATOMICS_REMOTE)", "shmem_realloc(NULL, 0)",
                                "shmem_free(NULL)"};
  int ncalls = (int)(sizeof names / sizeof names[0]);
  shmem_barrier_all();
  for (int k = 0; k < ncalls; k++) {
    int maker = k % npes;
    if (me == maker) {
      void *p = (void *)1;
      switch (k) {
      case 0: p = shmem_malloc(0); break;
      case 1: p = shmem_calloc(0, 8); break;
      case 2: p = shmem_calloc(8, 0); break;
      case 3: p = shmem_align(64, 0); break;
      case 4: p = shmem_align(3, 0); break; /* size 0 is no action whatever the alignment */
      case 5: p = shmem_malloc_with_hints(0, 0); break;
      case 6: p = shmem_malloc_with_hints(0, SHMEM_MALLOC_ATOMICS_REMOTE); break;
      case 7: p = shmem_realloc(NULL, 0); break;
      case 8: shmem_free(NULL); p = NULL; break;
      }
      CHECK(p == NULL, "%s returned %p, want NULL", names[k], p);
      for (int pe = 0; pe < npes; pe++) shmem_long_atomic_inc(&done_word, pe); /* the next maker may add already */
    } else {
      shmem_long_wait_until(&done_word, SHMEM_CMP_GE, k + 1);
    }
  }
  shmem_barrier_all();
  CHECK(done_word == ncalls, "done_word %ld, want %d", done_word, ncalls);
  /* Calls that do act are still collective: a block freed by realloc(ptr, 0), then a fresh one. */
  long *a = shmem_malloc(64);
  CHECK(a != NULL, "shmem_malloc(64) failed");
  long *z = shmem_realloc(a, 0);
  CHECK(z == NULL, "shmem_realloc(ptr, 0) returned %p, want NULL", (void *)z);
  long *b = shmem_malloc(64);
  CHECK(b == a, "shmem_malloc(64) after realloc(ptr, 0) gave %p, want the freed block %p", (void *)b, (void *)a);
  shmem_long_p(b, me, (me + 1) % npes);
  shmem_barrier_all();
  CHECK(*b == (me + npes - 1) % npes, "value from the left neighbour %ld, want %d", *b, (me + npes - 1) % npes);
  shmem_free(b);
  return test_finish();
}
