/* signal.c - put-with-signal in every form (putmem, typed, sized, _nbi, ctx, C11 generic; SHMEM_SIGNAL_SET and ADD),
 * shmem_signal_fetch and shmem_signal_wait_until.
 *
 * Part 1, ring: each round every PE sends a 64 KiB payload (a round- and sender-specific pattern) to the next PE with
 * put-with-signal; the receiver waits for the signal and checks every byte at once (the data must be visible when the
 * signal is), then acknowledges with an AMO so the sender may overwrite the buffer. The form changes every round.
 * Part 2, fan-in with SHMEM_SIGNAL_ADD: every PE puts its slot into every PE and adds 1 to the signal; the owner waits
 * for npes with signal_wait_until, checks the returned value and every slot. Part 3: static dest and signal. */
#include "ptest.h"

#include <stdint.h>

#define PAYLOAD (64 * 1024)
#define ROUNDS 24
static int me, npes;

static uint64_t s_sig, s_ack;         /* static signal and acknowledgement */
static unsigned char s_buf[4][4096];  /* static destination, one slot per sender */
static uint64_t s_fan;

static unsigned char pattern(int round, int sender, size_t i) {
  return (unsigned char)(round * 31 + sender * 7 + i * 13 + (i >> 8));
}

/* Send buf to pe with the form chosen by round; every form signals with value sigval (SET) or adds it (ADD). */
static void send_round(int r, void *dst, const void *src, uint64_t *sig, uint64_t sigval, int op, int pe,
                       shmem_ctx_t ctx) {
  size_t n = PAYLOAD;
  switch (r % 12) {
  case 0: shmem_putmem_signal(dst, src, n, sig, sigval, op, pe); break;
  case 1: shmem_putmem_signal_nbi(dst, src, n, sig, sigval, op, pe); shmem_quiet(); break;
  case 2: shmem_ctx_putmem_signal(ctx, dst, src, n, sig, sigval, op, pe); break;
  case 3: shmem_ctx_putmem_signal_nbi(ctx, dst, src, n, sig, sigval, op, pe); shmem_ctx_quiet(ctx); break;
  case 4: shmem_int64_put_signal((int64_t *)dst, (const int64_t *)src, n / 8, sig, sigval, op, pe); break;
  case 5: shmem_ctx_char_put_signal_nbi(ctx, (char *)dst, (const char *)src, n, sig, sigval, op, pe);
          shmem_ctx_quiet(ctx);
          break;
  case 6: shmem_put32_signal(dst, src, n / 4, sig, sigval, op, pe); break;
  case 7: shmem_put64_signal_nbi(dst, src, n / 8, sig, sigval, op, pe); shmem_quiet(); break;
  case 8: shmem_ctx_put128_signal(ctx, dst, src, n / 16, sig, sigval, op, pe); break;
  case 9: shmem_put_signal((long *)dst, (const long *)src, n / sizeof(long), sig, sigval, op, pe); break;
  case 10: shmem_put_signal(ctx, (double *)dst, (const double *)src, n / 8, sig, sigval, op, pe); break;
  default:
    shmem_put_signal_nbi(ctx, (short *)dst, (const short *)src, n / 2, sig, sigval, op, pe);
    shmem_quiet();
    break;
  }
}

int main(void) {
  shmem_init();
  ptest_init();
  me = shmem_my_pe();
  npes = shmem_n_pes();
  shmem_ctx_t ctx;
  CHECK(shmem_ctx_create(0, &ctx) == 0, "ctx_create");
  unsigned char *dst = shmem_malloc(PAYLOAD), *src = malloc(PAYLOAD);
  uint64_t *sig = shmem_calloc(2, sizeof(uint64_t)), *ack = sig + 1;
  memset(dst, 0, PAYLOAD);
  shmem_barrier_all();
  int next = (me + 1) % npes, prev = (me + npes - 1) % npes;

  /* ---- Part 1: ring ---- */
  for (int r = 1; r <= ROUNDS; r++) {
    for (size_t i = 0; i < PAYLOAD; i++) src[i] = pattern(r, me, i);
    int op = r % 2 ? SHMEM_SIGNAL_SET : SHMEM_SIGNAL_ADD;
    /* SET writes r; ADD adds 1 to r - 1: the receiver sees r either way */
    send_round(r, dst, src, sig, op == SHMEM_SIGNAL_SET ? (uint64_t)r : 1, op, next, ctx);
    uint64_t got = r % 3 ? shmem_signal_wait_until(sig, SHMEM_CMP_GE, (uint64_t)r)
                         : (shmem_uint64_wait_until(sig, SHMEM_CMP_EQ, (uint64_t)r), shmem_signal_fetch(sig));
    CHECK(got == (uint64_t)r, "round %d: signal %llu", r, (unsigned long long)got);
    size_t bad = 0;
    for (size_t i = 0; i < PAYLOAD; i++) bad += dst[i] != pattern(r, prev, i);
    CHECK(bad == 0, "round %d: %zu of %d payload bytes from PE %d not there when the signal was", r, bad, PAYLOAD,
          prev);
    memset(dst, 0xee, PAYLOAD);
    shmem_uint64_atomic_set(ack, (uint64_t)r, prev); /* prev may now send again */
    shmem_signal_wait_until(ack, SHMEM_CMP_EQ, (uint64_t)r);
  }
  uint64_t last = shmem_signal_fetch(sig);
  CHECK(last == ROUNDS, "signal_fetch after the ring: %llu", (unsigned long long)last);
  shmem_barrier_all();

  /* ---- Part 2: fan-in with SHMEM_SIGNAL_ADD into every PE ---- */
  size_t slot = PAYLOAD / 4; /* npes <= 4 slots of 16 KiB */
  if (npes <= 4) {
    sig[0] = 0;
    memset(dst, 0, PAYLOAD);
    shmem_barrier_all();
    for (size_t i = 0; i < slot; i++) src[i] = pattern(100, me, i);
    for (int t = 0; t < npes; t++) {
      int pe = (me + t) % npes;
      switch (t % 3) {
      case 0: shmem_putmem_signal(dst + me * slot, src, slot, sig, 1, SHMEM_SIGNAL_ADD, pe); break;
      case 1: shmem_ctx_uint64_put_signal(ctx, (uint64_t *)(dst + me * slot), (const uint64_t *)src, slot / 8, sig, 1,
                                          SHMEM_SIGNAL_ADD, pe); break;
      default: shmem_put16_signal_nbi(dst + me * slot, src, slot / 2, sig, 1, SHMEM_SIGNAL_ADD, pe); break;
      }
    }
    uint64_t got = shmem_signal_wait_until(sig, SHMEM_CMP_GE, (uint64_t)npes);
    CHECK(got == (uint64_t)npes, "fan-in: signal_wait_until returned %llu, want %d", (unsigned long long)got, npes);
    for (int p = 0; p < npes; p++) {
      size_t bad = 0;
      for (size_t i = 0; i < slot; i++) bad += dst[p * slot + i] != pattern(100, p, i);
      CHECK(bad == 0, "fan-in: %zu bytes of PE %d's slot wrong", bad, p);
    }
    shmem_quiet();
    shmem_barrier_all();

    /* ---- Part 3: static destination and signal ---- */
    for (size_t i = 0; i < sizeof s_buf[0]; i++) src[i] = pattern(200, me, i);
    for (int t = 0; t < npes; t++) {
      int pe = (me + t) % npes;
      if (t % 2) shmem_putmem_signal(s_buf[me], src, sizeof s_buf[0], &s_fan, 1, SHMEM_SIGNAL_ADD, pe);
      else shmem_ctx_putmem_signal_nbi(ctx, s_buf[me], src, sizeof s_buf[0], &s_fan, 1, SHMEM_SIGNAL_ADD, pe);
    }
    shmem_ctx_quiet(ctx);
    shmem_uint64_wait_until(&s_fan, SHMEM_CMP_EQ, (uint64_t)npes);
    for (int p = 0; p < npes; p++) {
      size_t bad = 0;
      for (size_t i = 0; i < sizeof s_buf[0]; i++) bad += s_buf[p][i] != pattern(200, p, i);
      CHECK(bad == 0, "static: %zu bytes of PE %d's slot wrong", bad, p);
    }
    shmem_barrier_all(); /* everyone has checked s_buf */
    /* static ping-pong with SET between ring neighbours */
    for (int r = 1; r <= 50; r++) {
      shmem_putmem_signal(&s_buf[0][0], &r, sizeof r, &s_sig, (uint64_t)r, SHMEM_SIGNAL_SET, next);
      CHECK(shmem_signal_wait_until(&s_sig, SHMEM_CMP_EQ, (uint64_t)r) == (uint64_t)r, "static ping-pong");
      int v;
      memcpy(&v, &s_buf[0][0], sizeof v);
      CHECK(v == r, "static ping-pong payload %d, want %d", v, r);
      shmem_uint64_atomic_set(&s_ack, (uint64_t)r, prev);
      shmem_signal_wait_until(&s_ack, SHMEM_CMP_EQ, (uint64_t)r);
    }
  }
  shmem_barrier_all();
  shmem_ctx_destroy(ctx);
  free(src);
  shmem_free(sig);
  shmem_free(dst);
  return ptest_finish("signal");
}
