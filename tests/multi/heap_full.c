/* heap_full.c - an allocation larger than the symmetric heap returns NULL (spec 1.5 9.3: the program goes on), and
 * the runtime says so once per PE (the first failure; later ones only under SHMEM_DEBUG), naming the routine, the
 * size asked and the variable that enlarges the heap: a NULL from a too-small heap must not be silent.
 *
 * Usage: heap_full BYTES (oshrun -n N, SHMEM_SYMMETRIC_SIZE below BYTES). Every allocating routine asks for BYTES
 * in turn (malloc, calloc, align, malloc_with_hints, realloc of a live block), each must return NULL, the live block
 * must keep its contents, and a put/get round with the neighbours must still give the right values. */
#include "test_common.h"

#include <stdlib.h>

int main(int argc, char **argv) {
  test_name = "heap_full";
  size_t big = argc > 1 ? strtoull(argv[1], NULL, 0) : (size_t)1 << 30;
  shmem_init();
  int me = shmem_my_pe(), npes = shmem_n_pes();
  long *a = shmem_malloc(4 * sizeof(long));
  CHECK(a != NULL, "shmem_malloc(32) failed");
  a[0] = 1000 + me;
  void *p = shmem_malloc(big);
  CHECK(p == NULL, "shmem_malloc(%zu) returned %p, want NULL", big, p);
  p = shmem_calloc(1, big);
  CHECK(p == NULL, "shmem_calloc(1, %zu) returned %p, want NULL", big, p);
  p = shmem_align(4096, big);
  CHECK(p == NULL, "shmem_align(4096, %zu) returned %p, want NULL", big, p);
  p = shmem_malloc_with_hints(big, 0);
  CHECK(p == NULL, "shmem_malloc_with_hints(%zu, 0) returned %p, want NULL", big, p);
  p = shmem_realloc(a, big);
  CHECK(p == NULL, "shmem_realloc(a, %zu) returned %p, want NULL", big, p);
  CHECK(a[0] == 1000 + me, "a[0] %ld after the failed realloc, want %d", a[0], 1000 + me);
  /* the program goes on: the heap and the PEs still work */
  shmem_barrier_all();
  shmem_long_p(&a[1], me, (me + 1) % npes);
  shmem_barrier_all();
  int left = (me + npes - 1) % npes;
  CHECK(a[1] == left, "a[1] %ld from the left neighbour, want %d", a[1], left);
  CHECK(shmem_long_g(&a[0], left) == 1000 + left, "a[0] of PE %d, want %d", left, 1000 + left);
  printf("heap_full: PE %d: 5 NULLs, values after: %ld %ld\n", me, a[0], a[1]);
  shmem_barrier_all();
  shmem_free(a);
  return test_finish();
}
