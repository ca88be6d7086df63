/* heap.c - shmem_malloc and friends (spec 9.3): collective, same offsets everywhere, barrier semantics. */
#include "shoal.h"
#include "heap_gpu.h" /* device heap: SHOAL_HEAP=device, SHMEMX_MALLOC_DEVICE */

#include <stdlib.h>

#define SHOAL_HEAP_ALIGN 64 /* a cache line: no false sharing between objects, full-speed memcpy */

/* With SHMEM_DEBUG, every PE must ask for the same thing: compare through the bootstrap (slow, debug only). */
static void debug_check_same(const char *routine, size_t a, size_t b) {
  if (!shoal_env.debug || shoal_g.npes == 1) return;
  size_t mine[2] = {a, b}, *all = malloc(sizeof mine * (size_t)shoal_g.npes);
  if (!all || shoal_boot_allgather(&shoal_g.boot, mine, all, sizeof mine))
    shoal_fatal(routine, "bootstrap all-gather failed");
  for (int p = 0; p < shoal_g.npes; p++)
    if (all[2 * p] != a || all[2 * p + 1] != b)
      shoal_fatal(routine, "size %zu (alignment %zu) differs from PE %d's size %zu (alignment %zu): symmetric "
                  "allocations must be the same on every PE", a, b, p, all[2 * p], all[2 * p + 1]);
  free(all);
}

static void *alloc_nobarrier(const char *routine, size_t size, size_t align) {
  static bool said; /* the first failure is said whatever SHMEM_DEBUG says (see shoal_heap_say_full) */
  size_t off;
  if (!size) return NULL;
  if (shoal_alloc_alloc(&shoal_g.alloc, size, align, &off)) {
    shoal_heap_say_full(routine, "symmetric heap", &shoal_g.alloc, size, align, "SHMEM_SYMMETRIC_SIZE", &said);
    return NULL;
  }
  return shoal_g.user_base + off;
}

/* Size 0 performs no action: NULL, and no barrier (spec 1.5 9.3.1: "when no action is performed, these routines return
 * without performing a barrier"), so a PE may ask for 0 bytes alone; nor the debug comparison, which is collective. */
static void *alloc_common(const char *routine, size_t size, size_t align, bool dev) {
  SHOAL_CHECK_INIT(routine);
  if (!size) return NULL;
  debug_check_same(routine, size, align);
  void *p = dev ? shoal_gpu_heap_alloc(routine, size, align) : alloc_nobarrier(routine, size, align);
  shoal_barrier_world();
  return p;
}

/* Offset of ptr in the user heap, or fatal when ptr is no live allocation. */
static size_t user_off(const char *routine, void *ptr) {
  uintptr_t off = (uintptr_t)ptr - (uintptr_t)shoal_g.user_base;
  if (off >= shoal_g.alloc.size || !shoal_alloc_size_of(&shoal_g.alloc, off))
    shoal_fatal(routine, "ptr %p is not a live allocation of the symmetric heap", ptr);
  return off;
}

void *shmem_malloc(size_t size) {
  return alloc_common("shmem_malloc", size, SHOAL_HEAP_ALIGN, shoal_gpu_heap_default());
}

void *shmem_malloc_with_hints(size_t size, long hints) {
  /* Every hint is a performance hint on one node: the memory is the same. Device placement is the GPU module's. */
  bool dev = (hints & SHMEMX_MALLOC_DEVICE) ? shoal_gpu_heap_ready() : shoal_gpu_heap_default();
  return alloc_common("shmem_malloc_with_hints", size, SHOAL_HEAP_ALIGN, dev);
}

void *shmem_calloc(size_t count, size_t size) {
  size_t bytes;
  if (!count || !size) { /* no action, no barrier (spec 1.5 9.3.3) */
    SHOAL_CHECK_INIT("shmem_calloc");
    return NULL;
  }
  if (__builtin_mul_overflow(count, size, &bytes)) {
    SHOAL_CHECK_INIT("shmem_calloc");
    if (shoal_env.debug) shoal_warn("shmem_calloc: count %zu * size %zu overflows", count, size);
    shoal_barrier_world();
    return NULL;
  }
  bool dev = shoal_gpu_heap_default();
  void *p = alloc_common("shmem_calloc", bytes, SHOAL_HEAP_ALIGN, dev);
  if (p && dev) shoal_gpu_memset(p, 0, bytes);
  else if (p) memset(p, 0, bytes);
  shoal_barrier_world(); /* nobody writes into p before every PE has zeroed its copy */
  return p;
}

void *shmem_align(size_t alignment, size_t size) {
  SHOAL_CHECK_INIT("shmem_align");
  if (!size) return NULL; /* no action, no barrier, whatever the alignment */
  if (!alignment || (alignment & (alignment - 1)) || alignment > SHOAL_HEAP_MAX_ALIGN) {
    if (shoal_env.debug)
      shoal_warn("shmem_align: alignment %zu is not a power of two <= %zu", alignment, SHOAL_HEAP_MAX_ALIGN);
    shoal_barrier_world();
    return NULL;
  }
  return alloc_common("shmem_align", size, alignment < SHOAL_HEAP_ALIGN ? SHOAL_HEAP_ALIGN : alignment,
                      shoal_gpu_heap_default());
}

void shmem_free(void *ptr) {
  SHOAL_CHECK_INIT("shmem_free");
  if (!ptr) return; /* no action, no barrier (spec 1.5 9.3.1) */
  shoal_barrier_all_hook(); /* nobody still accesses ptr on any PE */
  if (shoal_gpu_heap_owns(ptr))
    shoal_gpu_heap_free("shmem_free", ptr);
  else
    shoal_alloc_free(&shoal_g.alloc, user_off("shmem_free", ptr));
}

void *shmem_realloc(void *ptr, size_t size) {
  SHOAL_CHECK_INIT("shmem_realloc");
  if (!ptr) return shmem_malloc(size); /* size 0 too: no action, no barrier */
  if (!size) { /* frees ptr: an action, so shmem_free's barrier on entry (spec 1.5 9.3.1) */
    shmem_free(ptr);
    return NULL;
  }
  if (shoal_gpu_heap_owns(ptr)) {
    shoal_barrier_all_hook();
    void *p = shoal_gpu_heap_realloc("shmem_realloc", ptr, size);
    shoal_barrier_world();
    return p;
  }
  size_t off = user_off("shmem_realloc", ptr), old = shoal_alloc_size_of(&shoal_g.alloc, off);
  debug_check_same("shmem_realloc", size, old);
  shoal_barrier_all_hook(); /* accesses to the old block are done */
  void *p = ptr;
  if (shoal_alloc_resize(&shoal_g.alloc, off, size)) {
    p = alloc_nobarrier("shmem_realloc", size, SHOAL_HEAP_ALIGN);
    if (p) {
      memcpy(p, ptr, old < size ? old : size);
      shoal_alloc_free(&shoal_g.alloc, off);
    }
  }
  shoal_barrier_world();
  return p;
}

void shmemx_heap_info(size_t *total, size_t *free_largest) {
  SHOAL_CHECK_INIT("shmemx_heap_info");
  if (total) *total = shoal_g.alloc.size;
  if (free_largest) *free_largest = shoal_alloc_largest_free(&shoal_g.alloc);
}
