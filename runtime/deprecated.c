/* deprecated.c - names the OpenSHMEM 1.5 Annex still requires (the deprecated AMO and wait names live with their
 * families in amo.c and p2p.c, start_pes with shmem_init in api/init.c). */
#include "shoal.h"

int _my_pe(void) { return shmem_my_pe(); }
int _num_pes(void) { return shmem_n_pes(); }
void *shmalloc(size_t size) { return shmem_malloc(size); }
void shfree(void *ptr) { shmem_free(ptr); }
void *shrealloc(void *ptr, size_t size) { return shmem_realloc(ptr, size); }
void *shmemalign(size_t alignment, size_t size) { return shmem_align(alignment, size); }

/* Cache management: nothing to do on cache-coherent hardware. */
void shmem_clear_cache_inv(void) {}
void shmem_set_cache_inv(void) {}
void shmem_clear_cache_line_inv(void *dest) {}
void shmem_set_cache_line_inv(void *dest) {}
void shmem_udcflush(void) {}
void shmem_udcflush_line(void *dest) {}
