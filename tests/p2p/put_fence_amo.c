/* put_fence_amo.c - PRK stencil's exchange (issue 29): each PE puts a halo to both ring neighbours, shmem_fence, a
 * shmem_long_atomic_inc of each neighbour's flag, then waits for its own flag to count both; every byte of both
 * halos is checked, double-buffered as PRK does, and each put's source is overwritten as soon as the put returns.
 * Sizes from 8 B (inject) past the transport's copy limit (8 KiB) to 1 MiB, several rounds each.
 *
 * Then, where the next PE is reached over libfabric (SHOAL_TRANSPORT=ofi, or a far node), what the transport says
 * it does costs no wait for a completion counter (shoal_tl_ofi_info_t.counter_waits on the default endpoint):
 *   bounce: 20 blocking puts of 4 KiB return without waiting for their writes (they were copied);
 *   saw:    20 x (a put, shmem_fence, shmem_long_atomic_inc) send the inc behind the put, with no quiet;
 *   bounce with cq_signal: 20 put_signals of 4 KiB (shoal_comm_put_signal, the collectives' one write with the
 *           flag in its CQ data) return without waiting for their writes either; every byte and the flag checked.
 * Each fails on the code before it (a wait per put or put_signal; a quiet's flush read per inc). Skipped under
 * SHMEM_DEBUG. */
#include "comm.h"
#include "ptest.h"

#include <stdint.h>

#define MAXN ((size_t)1 << 20)
#define COUNTED 20

static char in_buf[2][2][MAXN]; /* [parity][from: 0 left, 1 right] */
static long flag[2];
static char cbuf[COUNTED][4096];
static long ccnt;
static char sbuf[COUNTED][4096];
static uint64_t sig[COUNTED];

static unsigned char pat(int pe, long it, size_t i) { return (unsigned char)(pe * 31 + it * 7 + (long)(i * 13 + i / 4096)); }

int main(void) {
  shmem_init();
  ptest_init();
  int me = ptest_me, n = ptest_npes, left = (me + n - 1) % n, right = (me + 1) % n;
  unsigned char *out = malloc(MAXN);
  if (!out) {
    fprintf(stderr, "put_fence_amo: PE %d: out of memory for %zu bytes\n", me, MAXN);
    shmem_global_exit(1);
  }
  static const size_t sizes[] = {8, 100, 129, 4096, 8192, 8193, 65536, MAXN};
  long it = 0;
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
    size_t len = sizes[s];
    int rounds = len <= 8193 ? 40 : 4;
    for (int r = 0; r < rounds; r++, it++) {
      int sw = (int)(it & 1);
      for (int d = 0; d < 2; d++) { /* to the left neighbour into its "from right" slot, and the other way */
        for (size_t i = 0; i < len; i++) out[i] = pat(me, it, i);
        shmem_putmem(in_buf[sw][d ^ 1], out, len, d ? right : left);
        memset(out, 0xEE, len); /* the source is free once the put returned */
      }
      shmem_fence();
      shmem_long_atomic_inc(&flag[sw], left);
      shmem_long_atomic_inc(&flag[sw], right);
      shmem_long_wait_until(&flag[sw], SHMEM_CMP_GE, 2 * (it / 2 + 1));
      for (int d = 0; d < 2; d++) {
        int from = d ? right : left;
        size_t bad = SIZE_MAX;
        for (size_t i = 0; i < len && bad == SIZE_MAX; i++)
          if ((unsigned char)in_buf[sw][d][i] != pat(from, it, i)) bad = i;
        CHECK(bad == SIZE_MAX, "round %ld, %zu bytes from PE %d: byte %zu is %#x, want %#x (seen before its put?)", it,
              len, from, bad, bad == SIZE_MAX ? 0 : (unsigned char)in_buf[sw][d][bad],
              bad == SIZE_MAX ? 0 : pat(from, it, bad));
      }
    }
  }
  shmem_barrier_all();

  /* Transports are symmetric: the left neighbour reaches this PE over ofi where this PE reaches it so. */
  const char *dbg = getenv("SHMEM_DEBUG");
  bool quiet = !dbg || !*dbg || !strcmp(dbg, "0");
  bool send = quiet && shoal_g.tl_of[right] == &shoal_tl_ofi_ops, recv = quiet && shoal_g.tl_of[left] == &shoal_tl_ofi_ops;
  shoal_tl_ofi_info_t a, b;
  if (send || recv) {
    shmem_quiet(); /* the copies' room is free again */
    shoal_tl_ofi_query(&a);
  }
  if (send) {
    char src[4096];
    for (int k = 0; k < COUNTED; k++) {
      memset(src, k + 1, sizeof src);
      shmem_putmem(cbuf[k], src, sizeof src, right);
      if (a.saw) {
        shmem_fence();
        shmem_long_atomic_inc(&ccnt, right);
      }
    }
    shoal_tl_ofi_query(&b);
    const char *prov = getenv("FI_PROVIDER");
    if (prov && !strcmp(prov, "net")) /* what net gives: both, or the checks below would pass on nothing */
      CHECK(a.saw && a.bounce, "over net: copied puts %d, incs behind fenced puts %d (want both)", a.bounce, a.saw);
    if (a.bounce || a.saw)
      CHECK(b.counter_waits == a.counter_waits, "%d puts of 4 KiB%s waited %llu times for a completion counter "
            "(want none: %s)", COUNTED, a.saw ? ", each with a fence and an inc," : "",
            (unsigned long long)(b.counter_waits - a.counter_waits),
            a.bounce && a.saw ? "copied puts, incs behind them" : a.bounce ? "copied puts" : "incs behind the puts");
    printf("put_fence_amo: PE %d to %d over ofi (%s): copied puts %d, incs behind fenced puts %d, put_signal in one "
           "write %d, counter waits %llu\n", me, right, a.provider, a.bounce, a.saw, a.cq_signal,
           (unsigned long long)(b.counter_waits - a.counter_waits));
    if (a.bounce && a.cq_signal) {
      shmem_quiet(); /* the copies' room free again */
      shoal_tl_ofi_query(&b);
      for (int k = 0; k < COUNTED; k++) {
        memset(src, 0x40 + k, sizeof src);
        shoal_comm_put_signal("put_fence_amo", right, sbuf[k], src, sizeof src, &sig[k], (uint64_t)k + 1);
        memset(src, 0xEE, sizeof src); /* free on return */
      }
      shoal_tl_ofi_info_t c;
      shoal_tl_ofi_query(&c);
      CHECK(c.counter_waits == b.counter_waits, "%d put_signals of 4 KiB waited %llu times for a completion "
            "counter (want none: copied)", COUNTED, (unsigned long long)(c.counter_waits - b.counter_waits));
    }
  }
  shmem_barrier_all();
  if (recv) {
    for (int k = 0; k < COUNTED; k++)
      CHECK((unsigned char)cbuf[k][0] == k + 1 && (unsigned char)cbuf[k][4095] == k + 1, "put %d of 4 KiB: %#x", k,
            (unsigned char)cbuf[k][0]);
    if (a.saw) CHECK(ccnt == COUNTED, "ccnt %ld, want %d", ccnt, COUNTED);
    if (a.bounce && a.cq_signal) {
      for (int k = 0; k < COUNTED; k++) {
        /* the flag is stored when this PE reads its write's completion (no quiet makes it so): waited for, as the
         * collectives do, then the bytes */
        CHECK(shmem_signal_wait_until(&sig[k], SHMEM_CMP_NE, 0) == (uint64_t)k + 1, "put_signal %d: flag %llu", k,
              (unsigned long long)sig[k]);
        for (size_t i = 0; i < sizeof sbuf[k]; i += 511)
          if ((unsigned char)sbuf[k][i] != 0x40 + k) {
            CHECK(0, "put_signal %d of 4 KiB: byte %zu is %#x, want %#x", k, i, (unsigned char)sbuf[k][i], 0x40 + k);
            break;
          }
      }
    }
  }
  free(out);
  return ptest_finish("put_fence_amo");
}
