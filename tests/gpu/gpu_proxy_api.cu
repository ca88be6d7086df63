/* gpu_proxy_api.cu - compile check of the device API's proxy route (issue 31): one kernel calls every routine whose
 * far path posts to the proxy (put/get/p/g/AMOs/put_signal in thread, warp and block forms, fence, quiet), so that
 * nvcc and hipcc compile the route for every form. Built only (with the GPU test programs); the proxy's behaviour is
 * tested without a GPU by gpu_proxy.c, whose CPU producers run the same queue code (shoal/detail/proxy_queue.h). */
#include "gpu_test.h"

__global__ void every_route(char *sym, char *loc, uint64_t *sig, int pe) {
  long *ls = (long *)sym;
  float *fs = (float *)(sym + 64);
  shmem_putmem(sym, loc, 13, pe);
  shmem_putmem_nbi(sym, loc, 13, pe);
  shmem_getmem(loc, sym, 13, pe);
  shmem_getmem_nbi(loc, sym, 13, pe);
  shmemx_putmem_warp(sym, loc, 13, pe);
  shmemx_putmem_nbi_warp(sym, loc, 13, pe);
  shmemx_getmem_warp(loc, sym, 13, pe);
  shmemx_getmem_nbi_warp(loc, sym, 13, pe);
  shmemx_putmem_block(sym, loc, 13, pe);
  shmemx_putmem_nbi_block(sym, loc, 13, pe);
  shmemx_getmem_block(loc, sym, 13, pe);
  shmemx_getmem_nbi_block(loc, sym, 13, pe);
  shmem_long_put(ls, (long *)loc, 2, pe);
  shmem_long_put_nbi(ls, (long *)loc, 2, pe);
  shmem_long_get((long *)loc, ls, 2, pe);
  shmem_long_get_nbi((long *)loc, ls, 2, pe);
  shmemx_long_put_warp(ls, (long *)loc, 2, pe);
  shmemx_long_put_block(ls, (long *)loc, 2, pe);
  shmemx_long_get_warp((long *)loc, ls, 2, pe);
  shmemx_long_get_block((long *)loc, ls, 2, pe);
  shmem_char_p(sym, 'x', pe);
  shmem_short_p((short *)sym, 3, pe);
  shmem_float_p(fs, 1.5f, pe);
  shmem_double_p((double *)sym, 2.5, pe);
  loc[0] = shmem_char_g(sym, pe);
  fs[1] = shmem_float_g(fs, pe);
  ls[2] = shmem_long_g(ls, pe);
  shmem_putmem_signal(sym, loc, 13, sig, 1, SHMEM_SIGNAL_SET, pe);
  shmem_putmem_signal_nbi(sym, loc, 13, sig, 1, SHMEM_SIGNAL_ADD, pe);
  shmem_long_put_signal(ls, (long *)loc, 2, sig, 1, SHMEM_SIGNAL_ADD, pe);
  shmem_long_put_signal_nbi(ls, (long *)loc, 2, sig, 1, SHMEM_SIGNAL_ADD, pe);
  shmemx_putmem_signal_warp(sym, loc, 13, sig, 1, SHMEM_SIGNAL_ADD, pe);
  shmemx_putmem_signal_block(sym, loc, 13, sig, 1, SHMEM_SIGNAL_ADD, pe);
  long v = shmem_long_atomic_fetch(ls, pe);
  shmem_long_atomic_set(ls, v, pe);
  v += shmem_long_atomic_swap(ls, 1, pe);
  v += shmem_long_atomic_compare_swap(ls, 1, 2, pe);
  v += shmem_long_atomic_fetch_add(ls, 1, pe);
  shmem_long_atomic_add(ls, 1, pe);
  v += shmem_long_atomic_fetch_inc(ls, pe);
  shmem_long_atomic_inc(ls, pe);
  v += shmem_float_atomic_fetch(fs, pe) + shmem_double_atomic_swap((double *)sym, 1.0, pe);
  unsigned u = shmem_uint_atomic_fetch_and((unsigned *)sym, 1u, pe);
  shmem_uint_atomic_and((unsigned *)sym, 1u, pe);
  u += shmem_uint_atomic_fetch_or((unsigned *)sym, 1u, pe);
  shmem_uint_atomic_or((unsigned *)sym, 1u, pe);
  u += shmem_uint_atomic_fetch_xor((unsigned *)sym, 1u, pe);
  shmem_uint_atomic_xor((unsigned *)sym, 1u, pe);
  shmem_long_atomic_fetch_nbi(&ls[3], ls, pe);
  shmem_long_atomic_fetch_add_nbi(&ls[3], ls, 1, pe);
  shmem_uint64_atomic_fetch_xor_nbi(sig + 1, sig, 1, pe);
  shmem_fence();
  shmem_quiet();
  ls[4] = v + u + (shmem_ptr(sym, pe) != 0);
}

int main(void) {
  shmem_init();
  /* built, not run for its values: launching it needs a far PE, which the GPU runs check (scripts/gpu-tests.sh) */
  printf("gpu_proxy_api: built (%p)\n", (void *)every_route);
  shmem_finalize();
  return 0;
}
