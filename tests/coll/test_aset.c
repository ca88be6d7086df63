/*
 * test_aset.c - the deprecated active-set collectives: shmem_barrier/shmem_sync (100 back to back on one pSync, as
 * the specification allows), broadcast32/64 (the root's dest stays untouched), collect32/64 (different counts per
 * PE, zeros included), fcollect32/64, alltoall32/64 and alltoalls32/64, on four active sets (all PEs, even PEs,
 * PEs 1.., the last PE alone) at 0, 1, 5 and 300 elements. Every element is checked, and every pSync must be all
 * SHMEM_SYNC_VALUE again after each call. Exit status 1 on any mismatch.
 */
#include <shmem.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define MAXE 300
static int me, npes, errors;
static long pSync[SHMEM_COLLECT_SYNC_SIZE], pBar[SHMEM_BARRIER_SYNC_SIZE];
static uint64_t src[MAXE * 64 * 3], dst[MAXE * 64 * 2 + 8]; /* symmetric (static data) */

static uint64_t pat(int w, long i, int s) { return (uint64_t)(w + 1) * 0x100000001ull + (uint64_t)i * 3 + (uint64_t)s; }

static void fail(const char *what, int n, size_t ne, long i, uint64_t got, uint64_t want) {
  if (errors++ < 10)
    fprintf(stderr, "PE %d: %s over %d PEs, nelems %zu: element %ld is %#llx, expected %#llx\n", me, what, n, ne, i,
            (unsigned long long)got, (unsigned long long)want);
}
#define CHECK(what, i, got, want)                                                                                     \
  do {                                                                                                                 \
    if ((uint64_t)(got) != (uint64_t)(want)) fail(what, n, ne, (long)(i), (uint64_t)(got), (uint64_t)(want));          \
  } while (0)

/* Barrier on another pSync, then check that pSync is clean, then barrier again before anyone uses it. */
static void check_psync(int start, int logs, int n, const char *what) {
  size_t ne = 0;
  shmem_barrier(start, logs, n, pBar);
  for (int k = 0; k < SHMEM_COLLECT_SYNC_SIZE; k++) CHECK(what, k, pSync[k], SHMEM_SYNC_VALUE);
  shmem_barrier(start, logs, n, pBar);
}

static void run(int start, int logs, int n) {
  int d = me - start, st = 1 << logs;
  if (n < 1 || d < 0 || d % st || d / st >= n) return;
  int r = d / st;
  for (int k = 0; k < 100; k++) shmem_sync(start, logs, n, pSync); /* back to back on one pSync */
  for (int k = 0; k < 10; k++) shmem_barrier(start, logs, n, pSync);
  check_psync(start, logs, n, "barrier pSync");
  static const size_t sizes[] = {0, 1, 5, MAXE};
  for (int si = 0; si < 4; si++) {
    size_t ne = sizes[si];
    int root = (int)(ne % (size_t)n);
    for (int bits = 32; bits <= 64; bits += 32) {
/* Element i of a buffer seen as 32- or 64-bit elements. */
#define GET(buf, i) (bits == 64 ? (buf)[i] : ((uint32_t *)(buf))[i])
#define PUT(buf, i, v) (bits == 64 ? (void)((buf)[i] = (v)) : (void)(((uint32_t *)(buf))[i] = (uint32_t)(v)))
#define WANT(v) (bits == 64 ? (uint64_t)(v) : (uint64_t)(uint32_t)(v))
      /* broadcast */
      memset(dst, 0xA5, sizeof dst);
      for (size_t i = 0; i < ne; i++) PUT(src, i, pat(me, (long)i, bits));
      check_psync(start, logs, n, "before broadcast");
      if (bits == 32)
        shmem_broadcast32(dst, src, ne, root, start, logs, n, pSync);
      else
        shmem_broadcast64(dst, src, ne, root, start, logs, n, pSync);
      for (size_t i = 0; i < ne; i++)
        CHECK(r == root ? "broadcast (root's dest must stay)" : "broadcast", i, GET(dst, i),
              r == root ? WANT(0xA5A5A5A5A5A5A5A5ull) : WANT(pat(start + root * st, (long)i, bits)));
      check_psync(start, logs, n, "broadcast pSync");
      /* collect: member j contributes (ne + j) % (ne + 1) elements */
      memset(dst, 0xA5, sizeof dst);
      size_t mine = ne ? (ne + (size_t)r) % (ne + 1) : 0;
      for (size_t i = 0; i < mine; i++) PUT(src, i, pat(me, (long)i, bits + 1));
      check_psync(start, logs, n, "before collect");
      if (bits == 32)
        shmem_collect32(dst, src, mine, start, logs, n, pSync);
      else
        shmem_collect64(dst, src, mine, start, logs, n, pSync);
      size_t o = 0;
      for (int j = 0; j < n; j++)
        for (size_t i = 0; i < (ne ? (ne + (size_t)j) % (ne + 1) : 0); i++, o++)
          CHECK("collect", o, GET(dst, o), WANT(pat(start + j * st, (long)i, bits + 1)));
      CHECK("collect end", o, GET(dst, o), WANT(0xA5A5A5A5A5A5A5A5ull));
      check_psync(start, logs, n, "collect pSync");
      /* fcollect */
      memset(dst, 0xA5, sizeof dst);
      for (size_t i = 0; i < ne; i++) PUT(src, i, pat(me, (long)i, bits + 2));
      check_psync(start, logs, n, "before fcollect");
      if (bits == 32)
        shmem_fcollect32(dst, src, ne, start, logs, n, pSync);
      else
        shmem_fcollect64(dst, src, ne, start, logs, n, pSync);
      for (int j = 0; j < n; j++)
        for (size_t i = 0; i < ne; i++)
          CHECK("fcollect", j * ne + i, GET(dst, j * ne + i), WANT(pat(start + j * st, (long)i, bits + 2)));
      check_psync(start, logs, n, "fcollect pSync");
      /* alltoall */
      memset(dst, 0xA5, sizeof dst);
      for (int j = 0; j < n; j++)
        for (size_t i = 0; i < ne; i++) PUT(src, j * ne + i, pat(me, (long)i, bits + 3 + j));
      check_psync(start, logs, n, "before alltoall");
      if (bits == 32)
        shmem_alltoall32(dst, src, ne, start, logs, n, pSync);
      else
        shmem_alltoall64(dst, src, ne, start, logs, n, pSync);
      for (int j = 0; j < n; j++)
        for (size_t i = 0; i < ne; i++)
          CHECK("alltoall", j * ne + i, GET(dst, j * ne + i), WANT(pat(start + j * st, (long)i, bits + 3 + r)));
      check_psync(start, logs, n, "alltoall pSync");
      /* alltoalls: dest stride 2, source stride 3 */
      memset(dst, 0xA5, sizeof dst);
      for (int j = 0; j < n; j++)
        for (size_t i = 0; i < ne; i++) PUT(src, (j * ne + i) * 3, pat(me, (long)i, bits + 5 + j));
      check_psync(start, logs, n, "before alltoalls");
      if (bits == 32)
        shmem_alltoalls32(dst, src, 2, 3, ne, start, logs, n, pSync);
      else
        shmem_alltoalls64(dst, src, 2, 3, ne, start, logs, n, pSync);
      for (int j = 0; j < n; j++)
        for (size_t i = 0; i < ne; i++) {
          CHECK("alltoalls", (j * ne + i) * 2, GET(dst, (j * ne + i) * 2), WANT(pat(start + j * st, (long)i, bits + 5 + r)));
          if (j * ne + i + 1 < n * ne)
            CHECK("alltoalls gap", (j * ne + i) * 2 + 1, GET(dst, (j * ne + i) * 2 + 1), WANT(0xA5A5A5A5A5A5A5A5ull));
        }
      check_psync(start, logs, n, "alltoalls pSync");
    }
  }
}

int main(void) {
  for (int k = 0; k < SHMEM_COLLECT_SYNC_SIZE; k++) pSync[k] = SHMEM_SYNC_VALUE;
  for (int k = 0; k < SHMEM_BARRIER_SYNC_SIZE; k++) pBar[k] = SHMEM_SYNC_VALUE;
  shmem_init();
  me = shmem_my_pe();
  npes = shmem_n_pes();
  if (npes > 64) {
    if (me == 0) fprintf(stderr, "test_aset: at most 64 PEs\n");
    shmem_global_exit(2);
  }
  run(0, 0, npes);
  shmem_barrier_all();
  run(0, 1, (npes + 1) / 2);
  shmem_barrier_all();
  run(1, 0, npes - 1);
  shmem_barrier_all();
  run(npes - 1, 0, 1);
  shmem_barrier_all();
  if (errors) {
    fprintf(stderr, "PE %d: %d mismatches\n", me, errors);
    shmem_global_exit(1);
  }
  if (me == 0) printf("test_aset: %d PEs: all active-set collectives correct\n", npes);
  shmem_finalize();
  return 0;
}
