/* bad.c - one kind of bad input per run; the last PE (npes - 1) commits it, the others wait in a barrier. The runtime
 * must print one line "shoal: PE <n>: <routine>: <argument/reason>" and stop the job with a non-zero status;
 * tests/scripts/check_run.py checks both. Returning normally from main here is a test failure (exit 99).
 *
 * Usage: bad MODE   with MODE one of
 *   pe_range pe_negative nonsym_stack nonsym_malloc past_end neg_stride zero_stride before_init after_finalize
 *   reinit double_free malloc_mismatch (with SHMEM_DEBUG=1) init_only (for bad environment values)
 *   null_putmem null_getmem null_put_nbi null_ctx_get null_put64 null_iput null_iget null_put_signal null_fetch_nbi
 *   (a NULL local buffer with a nonzero length) */
#include <stdint.h>
#include <shmem.h>
#include <shmemx.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long gsrc[16];

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  long local[16] = {0};
  if (!strcmp(mode, "before_init")) {
    const char *rank = getenv("SHOAL_RANK"), *size = getenv("SHOAL_SIZE");
    if (rank && size && atoi(rank) == atoi(size) - 1) shmem_putmem(gsrc, local, 8, 0);
    shmem_init(); /* the other PEs wait here for the one that failed */
    shmem_barrier_all();
    return 99;
  }
  shmem_init();
  int me = shmem_my_pe(), npes = shmem_n_pes(), bad = me == npes - 1;
  long *sym = shmem_malloc(16 * sizeof(long));
  if (!strcmp(mode, "init_only")) {
    shmem_finalize();
    return 99; /* shmem_init should not have returned */
  } else if (!strcmp(mode, "malloc_mismatch")) {
    void *p = shmem_malloc((size_t)64 * (me + 1)); /* SHMEM_DEBUG compares the sizes of every PE */
    (void)p;
  } else if (!strcmp(mode, "after_finalize")) {
    shmem_finalize();
    if (bad) shmem_putmem(sym, local, 8, 0);
    return bad ? 99 : 0;
  } else if (!strcmp(mode, "reinit")) {
    shmem_finalize();
    if (bad) shmem_init();
    return bad ? 99 : 0;
  } else if (bad) {
    if (!strcmp(mode, "pe_range")) shmem_putmem(sym, local, 8, npes);
    else if (!strcmp(mode, "pe_negative")) shmem_long_p(sym, 1, -1);
    else if (!strcmp(mode, "nonsym_stack")) shmem_long_put(local, gsrc, 4, 0);
    else if (!strcmp(mode, "nonsym_malloc")) {
      long *priv = malloc(4 * sizeof(long));
      shmem_long_get(gsrc, priv, 4, 0);
    } else if (!strcmp(mode, "past_end")) {
      size_t total = 0;
      shmemx_heap_info(&total, NULL);
      shmem_putmem(sym, sym, total + 1, 0); /* starts in the heap, ends past it */
    } else if (!strcmp(mode, "neg_stride")) shmem_long_iput(sym, gsrc, -1, 1, 4, 0);
    else if (!strcmp(mode, "zero_stride")) shmem_long_iget(local, sym, 1, 0, 4, 0);
    else if (!strcmp(mode, "null_putmem")) shmem_putmem(sym, NULL, 8, 0);
    else if (!strcmp(mode, "null_getmem")) shmem_getmem(NULL, sym, 8, 0);
    else if (!strcmp(mode, "null_put_nbi")) shmem_long_put_nbi(sym, NULL, 2, 0);
    else if (!strcmp(mode, "null_ctx_get")) shmem_ctx_int_get(SHMEM_CTX_DEFAULT, NULL, (int *)sym, 3, 0);
    else if (!strcmp(mode, "null_put64")) shmem_put64(sym, NULL, 1, 0);
    else if (!strcmp(mode, "null_iput")) shmem_long_iput(sym, NULL, 2, 1, 4, 0);
    else if (!strcmp(mode, "null_iget")) shmem_iget32(NULL, sym, 1, 2, 4, 0);
    else if (!strcmp(mode, "null_put_signal")) {
      static uint64_t sig;
      shmem_putmem_signal(sym, NULL, 8, &sig, 1, SHMEM_SIGNAL_SET, 0);
    } else if (!strcmp(mode, "null_fetch_nbi")) shmem_long_atomic_fetch_add_nbi(NULL, sym, 1, 0);
    else if (!strcmp(mode, "double_free")) {
      /* Only this PE frees twice; the barrier inside the first free is matched by the others' barrier below. */
      shmem_free(sym);
      shmem_free(sym);
    } else {
      fprintf(stderr, "bad: unknown mode '%s'\n", mode);
      return 2;
    }
  }
  shmem_barrier_all(); /* the good PEs wait here until the job is stopped */
  shmem_barrier_all();
  shmem_finalize();
  return 99;
}
