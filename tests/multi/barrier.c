/* barrier.c - shmem_barrier_all and shmem_sync_all separate rounds: in round r every PE writes r into its slot on
 * every PE (shmem_int_p) and a block of data (shmem_long_put), then waits in the barrier, then checks that every
 * slot and every word holds r. Without a working barrier a PE checks before a slower PE wrote (or after a faster one
 * wrote r + 2), so the checks fail. Slots alternate between two buffers, so one barrier per round is enough: a PE can
 * only write buffer r % 2 again in round r + 2, after every PE passed barrier r + 1, i.e. finished checking round r.
 *
 * Usage: barrier [ROUNDS]   (default 1000; each of the two routines runs ROUNDS rounds) */
#include "test_common.h"

#define MAXPE 64
#define WORDS 16
static int slot[2][MAXPE];              /* static data: symmetric */
static long data[2][MAXPE][WORDS];

int main(int argc, char **argv) {
  test_name = "barrier";
  int rounds = argc > 1 ? atoi(argv[1]) : 1000;
  shmem_init();
  int me = shmem_my_pe(), npes = shmem_n_pes();
  if (npes > MAXPE) shmem_global_exit(2);
  long *heapdata = shmem_calloc(2 * MAXPE * WORDS, sizeof(long)); /* the same through the heap */
  long mine[WORDS];
  for (int kind = 0; kind < 2; kind++) {
    for (int r = 1; r <= rounds; r++) {
      int b = r & 1;
      for (int w = 0; w < WORDS; w++) mine[w] = (long)r * 1000 + me * 100 + w;
      for (int p = 0; p < npes; p++) {
        int q = (me + p) % npes; /* start with a different PE on each PE */
        shmem_int_p(&slot[b][me], r, q);
        shmem_long_put(data[b][me], mine, WORDS, q);
        shmem_long_put(heapdata + (b * MAXPE + me) * WORDS, mine, WORDS, q);
      }
      if (kind == 0) {
        shmem_barrier_all();
      } else {
        shmem_quiet(); /* sync_all orders nothing by itself */
        shmem_sync_all();
      }
      const char *what = kind ? "sync_all" : "barrier_all";
      for (int p = 0; p < npes; p++) {
        CHECK(slot[b][p] == r, "%s round %d: slot of PE %d = %d", what, r, p, slot[b][p]);
        for (int w = 0; w < WORDS; w++) {
          long want = (long)r * 1000 + p * 100 + w;
          CHECK(data[b][p][w] == want, "%s round %d: static word %d of PE %d = %ld", what, r, w, p, data[b][p][w]);
          CHECK(heapdata[(b * MAXPE + p) * WORDS + w] == want, "%s round %d: heap word %d of PE %d = %ld", what, r,
                w, p, heapdata[(b * MAXPE + p) * WORDS + w]);
        }
      }
    }
    shmem_barrier_all();
    memset(slot, 0, sizeof slot); /* the second kind starts from zero again */
    memset(data, 0, sizeof data);
    memset(heapdata, 0, 2 * MAXPE * WORDS * sizeof(long));
    shmem_barrier_all();
  }
  shmem_free(heapdata);
  return test_finish();
}
