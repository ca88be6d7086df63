/* deprecated.c - the names the 1.5 Annex still requires: start_pes, _my_pe, _num_pes, shmalloc, shfree, shrealloc,
 * shmemalign, the cache routines, the 1.4 AMO names (typed and C11 generic) and shmem_wait, with values checked.
 * Built with SHOAL_WARN_DEPRECATED off, so the names compile silently (the header can flag them on request). */
#include "ptest.h"

#include <stdint.h>

static int s_ivar;
static long s_lvar;
static int s_wins;

#define AMO_EXT(T, N)                                                                                                  \
  do {                                                                                                                 \
    T *d = shmalloc(sizeof(T));                                                                                        \
    shmem_##N##_set(d, (T)3, right);                                                                                   \
    shmem_barrier_all();                                                                                               \
    CHECK(shmem_##N##_fetch(d, left) == (T)3 && *d == (T)3, #N "_set/_fetch");                                         \
    shmem_barrier_all(); /* everyone has read its copy before it changes */                                            \
    CHECK(shmem_##N##_swap(d, (T)4, right) == (T)3, #N "_swap");                                                       \
    shmem_set(d, (T)5, right);                                                                                         \
    CHECK(shmem_fetch(d, right) == (T)5 && shmem_swap(d, (T)6, right) == (T)5, "C11 shmem_fetch/set/swap " #N);        \
    shmem_barrier_all();                                                                                               \
    shfree(d);                                                                                                         \
  } while (0)
#define AMO_INT(T, N)                                                                                                  \
  do {                                                                                                                 \
    T *d = shmalloc(sizeof(T));                                                                                        \
    *d = 0;                                                                                                            \
    shmem_barrier_all();                                                                                               \
    for (int p = 0; p < npes; p++) {                                                                                   \
      shmem_##N##_inc(d, p);                                                                                           \
      shmem_##N##_add(d, (T)2, p);                                                                                     \
      CHECK(shmem_##N##_finc(d, p) >= (T)3 && shmem_##N##_fadd(d, (T)4, p) >= (T)4, #N "_finc/_fadd");                 \
      shmem_inc(d, p);                                                                                                 \
      shmem_add(d, (T)5, p);                                                                                           \
      CHECK(shmem_finc(d, p) >= (T)13 && shmem_fadd(d, (T)6, p) >= (T)14, "C11 shmem_finc/fadd " #N);                  \
    }                                                                                                                  \
    shmem_barrier_all();                                                                                               \
    CHECK(*d == (T)(21 * npes), #N " total %lld, want %d", (long long)*d, 21 * npes);                                  \
    shmem_barrier_all();                                                                                               \
    T old = shmem_##N##_cswap(d, (T)(21 * npes), (T)-7, 0); /* exactly one PE wins */                                  \
    if (old == (T)(21 * npes)) shmem_int_atomic_inc(&s_wins, 0);                                                       \
    else CHECK(old == (T)-7, #N "_cswap lost to %lld", (long long)old);                                                \
    shmem_barrier_all();                                                                                               \
    if (me == 0) {                                                                                                     \
      CHECK(s_wins == 1 && *d == (T)-7, #N "_cswap: %d winners", s_wins);                                              \
      CHECK(shmem_cswap(d, (T)-7, (T)0, 0) == (T)-7 && *d == 0, "C11 shmem_cswap " #N);                                \
      s_wins = 0;                                                                                                      \
    }                                                                                                                  \
    shmem_barrier_all();                                                                                               \
    shfree(d);                                                                                                         \
  } while (0)

int main(void) {
  start_pes(0);
  ptest_init();
  int me = _my_pe(), npes = _num_pes();
  CHECK(me == shmem_my_pe() && npes == shmem_n_pes(), "_my_pe %d / _num_pes %d", me, npes);
  int right = (me + 1) % npes, left = (me + npes - 1) % npes;

  /* memory: shmalloc, shmemalign, shrealloc (contents kept), shfree */
  long *a = shmalloc(16 * sizeof(long));
  CHECK(a != NULL, "shmalloc");
  for (int i = 0; i < 16; i++) a[i] = i * me;
  long *b = shmemalign(4096, 100);
  CHECK(b && ((uintptr_t)b & 4095) == 0, "shmemalign %p", (void *)b);
  a = shrealloc(a, 4096 * sizeof(long));
  CHECK(a != NULL, "shrealloc");
  for (int i = 0; a && i < 16; i++) CHECK(a[i] == i * me, "shrealloc lost a[%d]", i);
  shmem_long_p(&a[100], me, right);
  shmem_barrier_all();
  CHECK(a[100] == left, "remote put into shrealloc'ed memory: %ld", a[100]);
  shfree(b);
  shfree(a);

  /* cache routines: no-ops that must exist */
  shmem_clear_cache_inv();
  shmem_set_cache_inv();
  shmem_clear_cache_line_inv(&s_ivar);
  shmem_set_cache_line_inv(&s_ivar);
  shmem_udcflush();
  shmem_udcflush_line(&s_ivar);

  AMO_EXT(int, int);
  AMO_EXT(long, long);
  AMO_EXT(long long, longlong);
  AMO_EXT(float, float);
  AMO_EXT(double, double);
  AMO_INT(int, int);
  AMO_INT(long, long);
  AMO_INT(long long, longlong);

  /* shmem_wait / shmem_TYPENAME_wait: until the value differs from the given one */
  shmem_int_p(&s_ivar, 9, right);
  shmem_int_wait(&s_ivar, 0);
  CHECK(s_ivar == 9, "shmem_int_wait: %d", s_ivar);
  shmem_long_atomic_set(&s_lvar, 11, right);
  shmem_wait(&s_lvar, 0);
  CHECK(s_lvar == 11, "shmem_wait: %ld", s_lvar);
  return ptest_finish("deprecated");
}
