/* mpp.c - a program of the older SHMEM style that includes <mpp/shmem.h> and <mpp/shmemx.h> (as SGI SHMEM, SOS and
 * OSHMEM install them): it must compile with oshcc (and, as C++, with oshc++) and work. Each PE puts its number + 1
 * into its right neighbour and checks what its left one put, and that the shmemx extension is declared. */
#include <mpp/shmem.h>
#include <mpp/shmemx.h>
#include <stdio.h>

int main(void) {
  static long x;
  shmem_init();
  int me = shmem_my_pe(), n = shmem_n_pes();
  shmem_long_p(&x, me + 1, (me + 1) % n);
  shmem_barrier_all();
  int ok = x == (me + n - 1) % n + 1 && shmemx_local_n_pes() == n;
  printf("mpp: PE %d of %d: %s\n", me, n, ok ? "ok" : "FAILED");
  shmem_finalize();
  return !ok;
}
