/* generic_reject.c - types outside a routine's table must not compile (the C11 forms have no default case).
 * Built with -DCASE=n by compile_check.sh; CASE 0 is the control that must compile. */
#include <shmem.h>

void f(void);
void f(void) {
  static double d;
  static float fl;
  static char c;
  static struct { int x; } s;
  static long l;
  (void)d, (void)fl, (void)c, (void)s, (void)l;
#if CASE == 0
  shmem_atomic_add(&l, 1, 0);
  shmem_atomic_swap(&d, 1.0, 0);
  shmem_wait_until(&l, SHMEM_CMP_EQ, 0);
#elif CASE == 1
  shmem_atomic_add(&d, 1.0, 0); /* add: standard AMO types only */
#elif CASE == 2
  shmem_atomic_fetch_and(&fl, 1.0f, 0); /* bitwise types only */
#elif CASE == 3
  shmem_atomic_compare_swap(SHMEM_CTX_DEFAULT, &fl, 0.0f, 1.0f, 0); /* no floating point compare_swap */
#elif CASE == 4
  shmem_atomic_fetch_inc(&c, 0); /* char is not an AMO type */
#elif CASE == 5
  shmem_wait_until(&d, SHMEM_CMP_EQ, 0.0); /* point-to-point synchronization types only */
#elif CASE == 6
  shmem_test_any(&fl, 1, NULL, SHMEM_CMP_EQ, 0.0f);
#elif CASE == 7
  shmem_put_signal(&s, &s, 1, NULL, 1, SHMEM_SIGNAL_SET, 0); /* standard RMA types only */
#elif CASE == 8
  shmem_fadd(&d, 1.0, 0); /* deprecated generic, standard AMO types only */
#endif
}
