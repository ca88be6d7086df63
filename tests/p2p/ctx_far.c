/* ctx_far.c - a context's operations between nodes (SHOAL_TRANSPORT=ofi and the mixed setup give each context a
 * libfabric endpoint of its own; on one node this passes trivially):
 * 1. a context's 8 MiB nbi put, a fence and a flag on that context reach a peer that waits for the flag, while the
 *    sender itself only waits on the default context (for the peer's answer): nothing but those waits may drive the
 *    context's endpoint, so they must (before, the data behind a full socket never left and both PEs hung);
 * 2. an 8 MiB nbi put left on a shareable context that the program never destroys is complete when shmem_finalize
 *    returns on the target (spec 1.5: finalize destroys shareable contexts, completing them; before, their endpoints
 *    closed with the data still queued). Checked after finalize, in global memory the target still owns. */
#include "ptest.h"

#define BIG ((size_t)8 << 20)
static char g_big[BIG], g_fin[BIG];
static long flag, ack;

static char pat(int pe, int round, size_t i) { return (char)(pe * 37 + round * 11 + (int)(i % 251) + (int)(i >> 16)); }

int main(void) {
  shmem_init();
  ptest_init();
  int me = ptest_me, n = ptest_npes, right = (me + 1) % n, left = (me + n - 1) % n;
  shmem_ctx_t ctx;
  CHECK(shmem_ctx_create(0, &ctx) == 0 && ctx != SHMEM_CTX_INVALID, "ctx_create");
  char *src = malloc(BIG);
  if (!src) shmem_global_exit(2);
  for (int r = 1; r <= 3; r++) {
    for (size_t i = 0; i < BIG; i++) src[i] = pat(me, r, i);
    shmem_ctx_putmem_nbi(ctx, g_big, src, BIG, right);
    shmem_ctx_fence(ctx);
    shmem_ctx_long_p(ctx, &flag, r, right);
    shmem_long_wait_until(&flag, SHMEM_CMP_EQ, r); /* the left neighbour's flag: its data is here */
    size_t bad = BIG;
    for (size_t i = 0; i < BIG && bad == BIG; i++)
      if (g_big[i] != pat(left, r, i)) bad = i;
    CHECK(bad == BIG, "round %d: byte %zu from PE %d wrong after its flag", r, bad, left);
    shmem_long_p(&ack, r, left);                  /* default context: read, g_big may be written again */
    shmem_long_wait_until(&ack, SHMEM_CMP_EQ, r); /* the right neighbour read ours */
    shmem_ctx_quiet(ctx);                         /* src is rewritten next round */
  }
  int fails = ptest_fails;
  static int total;
  shmem_barrier_all();
  shmem_int_atomic_add(&total, fails, 0);
  shmem_barrier_all();
  fails = shmem_int_atomic_fetch(&total, 0);
  for (size_t i = 0; i < BIG; i++) src[i] = pat(me, 7, i);
  shmem_ctx_putmem_nbi(ctx, g_fin, src, BIG, right); /* no quiet, no destroy: finalize's to complete */
  shmem_finalize();
  size_t bad = BIG;
  for (size_t i = 0; i < BIG && bad == BIG; i++)
    if (g_fin[i] != pat(left, 7, i)) bad = i;
  if (bad != BIG)
    fprintf(stderr, "PE %d: byte %zu of PE %d's put on a context left alive is wrong after shmem_finalize\n", me,
            bad, left);
  if (me == 0) printf("ctx_far: %s (%d PEs, %d failed checks)\n", fails || bad != BIG ? "FAILED" : "OK", n, fails);
  free(src);
  return fails || bad != BIG ? 1 : 0;
}
