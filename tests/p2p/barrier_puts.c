/* barrier_puts.c - shmem_barrier_all completes the puts before it (spec 9.9.3), with no other quiet: each PE puts
 * to every other PE (8 B to 1 MiB: injected, copied, written), overwrites its source at once, then
 * shmem_barrier_all; the receiver checks every byte after the barrier, and the writer reads a word of what it put
 * back (a get, then a fetch AMO, on the default context) and from a context it creates after the barrier.
 *
 * Then, on 2 PEs reached over libfabric where the transport orders a signal behind the puts (saw), the barrier's
 * first signal to the peer carries the puts before it (runtime/sync.c shoal_barrier_all_quiet):
 *   20 x (a 4 KiB put to the peer, shmem_barrier_all) issue no flush read (shoal_tl_ofi_info_t.reads does not move;
 *   before: one per barrier, a round trip each);
 *   a context created after such a barrier first flushes those puts (one read), so that its get cannot pass them;
 *   with that context open, the barrier flushes again (one read per barrier): its gets could pass them.
 * Each count fails on the code before it (20 reads; no read at the context's creation). Counts skipped under
 * SHMEM_DEBUG. */
#include "comm.h"
#include "proxy.h"
#include "ptest.h"

#include <stdint.h>

#define MAXN ((size_t)1 << 20)
#define COUNTED 20

static unsigned char box[2][MAXN]; /* [parity]: a part per writer */
static long words[64];             /* [writer] */
static char cbuf[COUNTED][4096];

static unsigned char pat(int pe, long it, size_t i) { return (unsigned char)(pe * 31 + it * 7 + (long)(i * 13 + i / 4096)); }

int main(void) {
  shmem_init();
  ptest_init();
  int me = ptest_me, n = ptest_npes;
  /* every writer gets its own part of the box: MAXN / n bytes at most */
  size_t part = MAXN / (size_t)n / 64 * 64;
  unsigned char *out = malloc(MAXN);
  if (!out || n > 64) {
    fprintf(stderr, "barrier_puts: PE %d: %s\n", me, out ? "at most 64 PEs" : "out of memory");
    shmem_global_exit(1);
  }
  static const size_t sizes[] = {8, 100, 129, 4096, 8193, 65536, MAXN};
  long it = 0;
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
    size_t len = sizes[s] < part ? sizes[s] : part;
    int rounds = len <= 8193 ? 20 : 3;
    for (int r = 0; r < rounds; r++, it++) {
      int sw = (int)(it & 1);
      for (int q = 1; q < n; q++) {
        int to = (me + q) % n;
        for (size_t i = 0; i < len; i++) out[i] = pat(me, it, i);
        shmem_putmem(box[sw] + (size_t)me * part, out, len, to);
        memset(out, 0xEE, len); /* the source is free once the put returned */
        shmem_long_p(&words[me], it + 1, to);
      }
      shmem_barrier_all();
      for (int q = 1; q < n; q++) {
        int from = (me + n - q) % n;
        const unsigned char *b = box[sw] + (size_t)from * part;
        size_t bad = SIZE_MAX;
        for (size_t i = 0; i < len && bad == SIZE_MAX; i++)
          if (b[i] != pat(from, it, i)) bad = i;
        CHECK(bad == SIZE_MAX, "round %ld, %zu bytes from PE %d: byte %zu is %#x after the barrier, want %#x", it,
              len, from, bad, bad == SIZE_MAX ? 0 : b[bad], bad == SIZE_MAX ? 0 : pat(from, it, bad));
        CHECK(words[from] == it + 1, "round %ld: the word from PE %d is %ld after the barrier, want %ld", it, from,
              words[from], it + 1);
      }
      if (n > 1) { /* the writer reads back what it put: behind its puts on the default context */
        int to = (me + 1) % n;
        long g = shmem_long_g(&words[me], to);
        CHECK(g == it + 1, "round %ld: shmem_long_g of this PE's word on PE %d: %ld, want %ld", it, to, g, it + 1);
        long f = shmem_long_atomic_fetch(&words[me], to);
        CHECK(f == it + 1, "round %ld: fetch of this PE's word on PE %d: %ld, want %ld", it, to, f, it + 1);
      }
      shmem_barrier_all(); /* nobody writes the next round's slot while it is read */
    }
  }

  /* The counted part: 2 PEs over libfabric (both reach each other the same way). */
  const char *dbg = getenv("SHMEM_DEBUG");
  /* (not where the GPU proxy runs, or a context endpoint is open: the barrier then quiets fully, as it must) */
  bool counted = (!dbg || !*dbg || !strcmp(dbg, "0")) && n == 2 && shoal_g.tl_of[1 - me] == &shoal_tl_ofi_ops &&
                 !__atomic_load_n(&shoal_proxy_on, __ATOMIC_RELAXED);
  shoal_tl_ofi_info_t a, b;
  if (counted) {
    shmem_quiet();
    shoal_tl_ofi_query(&a);
    counted = !a.ctx_endpoints;
  }
  if (counted) {
    int peer = 1 - me;
    char src[4096];
    for (int k = 0; k < COUNTED; k++) {
      memset(src, k + 1 + me, sizeof src);
      shmem_putmem(cbuf[k], src, sizeof src, peer);
      shmem_barrier_all();
      CHECK((unsigned char)cbuf[k][0] == k + 1 + peer && (unsigned char)cbuf[k][4095] == k + 1 + peer,
            "counted put %d of 4 KiB from PE %d: %#x after the barrier, want %#x", k, peer, (unsigned char)cbuf[k][0],
            k + 1 + peer);
    }
    shoal_tl_ofi_query(&b);
    const char *prov = getenv("FI_PROVIDER");
    if (prov && !strcmp(prov, "net")) /* what net gives, or the checks below would pass on nothing */
      CHECK(a.saw, "over net: the transport does not send behind the puts (saw 0)");
    printf("barrier_puts: PE %d over ofi (%s): saw %d, %d x (put, barrier_all): %llu reads\n", me, a.provider, a.saw,
           COUNTED, (unsigned long long)(b.reads - a.reads));
    if (a.saw)
      CHECK(b.reads == a.reads, "%d x (a put to the peer, shmem_barrier_all) issued %llu reads (want none: the "
            "barrier's signal carries the puts)", COUNTED, (unsigned long long)(b.reads - a.reads));
    else if (a.flush_read)
      CHECK(b.reads - a.reads == COUNTED, "%d x (a put, shmem_barrier_all) without saw: %llu flush reads, want %d",
            COUNTED, (unsigned long long)(b.reads - a.reads), COUNTED);

    /* a context made now must not pass the puts the last barrier carried */
    memset(src, 0x5A + me, sizeof src);
    shmem_putmem(cbuf[0], src, sizeof src, peer);
    shmem_long_p(&words[me], 777 + me, peer);
    shmem_barrier_all();
    shoal_tl_ofi_query(&a);
    shmem_ctx_t ctx;
    CHECK(shmem_ctx_create(0, &ctx) == 0, "shmem_ctx_create failed");
    shoal_tl_ofi_query(&b);
    if (a.saw && b.ctx_endpoints > a.ctx_endpoints)
      CHECK(b.reads - a.reads == 1, "a context created after a barrier that carried puts: %llu reads on the "
            "default endpoint, want 1 (their flush)", (unsigned long long)(b.reads - a.reads));
    long g = shmem_ctx_long_g(ctx, &words[me], peer);
    CHECK(g == 777 + me, "the new context's get of this PE's word on PE %d: %ld, want %d", peer, g, 777 + me);
    /* with the context open, the barrier flushes: the context's gets could pass the puts */
    shoal_tl_ofi_query(&a);
    for (int k = 0; k < 4; k++) { /* a word per round: the peer may write the next before this PE looks */
      shmem_long_p(&words[2 + k], 800 + k, peer);
      shmem_barrier_all();
      CHECK(words[2 + k] == 800 + k, "with a context open: the word from PE %d is %ld, want %d", peer, words[2 + k],
            800 + k);
      g = shmem_ctx_long_g(ctx, &words[2 + k], peer);
      CHECK(g == 800 + k, "with a context open: its get of this PE's word: %ld, want %d", g, 800 + k);
    }
    shoal_tl_ofi_query(&b);
    if (b.ctx_endpoints) /* the context's gets are on its own endpoint: these are the flushes */
      CHECK(b.reads - a.reads == 4, "4 barriers after puts with a context open: %llu flush reads, want 4",
            (unsigned long long)(b.reads - a.reads));
    shmem_ctx_destroy(ctx);
  }
  free(out);
  return ptest_finish("barrier_puts");
}
