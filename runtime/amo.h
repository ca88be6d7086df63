/* amo.h - internal: the address an atomic operates on (amo.c, p2p.c, lock.c). Never installed. */
#ifndef SHOAL_AMO_H
#define SHOAL_AMO_H
#include "shoal.h"

/* Slow path of shoal_amo_addr: other spaces, or a fatal error naming routine and argument. dev_ok: NULL for an
 * object on the device heap (the caller updates it through the GPU backend) instead of the fatal error. */
void *shoal_amo_addr_slow(const char *routine, const char *arg, const void *addr, size_t size, int pe, bool dev_ok);

/* Static data (global and static variables) as a second inline case: base, size and deltas of its space; a size of
 * 0 (static data not symmetric) never matches. */
static inline __attribute__((always_inline)) bool shoal_in_static(const void *addr, size_t size, size_t align) {
  const shoal_space_t *s = &shoal_g.space[SHOAL_SPACE_STATIC];
  uintptr_t off = (uintptr_t)addr - s->base;
  return off < s->size && size <= s->size - off && !((uintptr_t)addr & (align - 1));
}

/* The same for pe's instance: false also when pe's static data is not mapped here (a PE of another node). */
static inline __attribute__((always_inline)) bool shoal_in_static_pe(const void *addr, size_t size, size_t align,
                                                                     int pe) {
  const shoal_space_t *s = &shoal_g.space[SHOAL_SPACE_STATIC];
  uintptr_t off = (uintptr_t)addr - s->base;
  size_t lim = s->lim[pe];
  return off < lim && size <= lim - off && !((uintptr_t)addr & (align - 1));
}

/* pe's instance of the symmetric object addr (size bytes, a power of two, naturally aligned) as an address in this
 * process, ready for __atomic builtins. Checks init and pe. Host heap and static data: a few compares and one add;
 * anything else goes to the slow path, which is fatal for non-symmetric, misaligned or non-host memory. */
/* The inline part: true with *out set for the host heap and static data (a few compares and one add). */
static inline __attribute__((always_inline)) bool shoal_amo_fast(const char *routine, const void *addr, size_t size,
                                                                 int pe, void **out) {
  SHOAL_CHECK_INIT(routine);
  SHOAL_CHECK_PE(routine, pe);
  uintptr_t off = (uintptr_t)addr - (uintptr_t)shoal_g.heap_base; /* the heap base is page aligned */
  size_t lim = shoal_g.heap_lim[pe];                                /* 0: pe is reached through the transport */
  if (SHOAL_LIKELY(off < lim && off <= lim - size && !(off & (size - 1)))) {
    *out = (char *)addr + shoal_g.heap_delta[pe];
    return true;
  }
  if (shoal_in_static_pe(addr, size, size, pe)) {
    *out = (char *)addr + shoal_g.space[SHOAL_SPACE_STATIC].delta[pe];
    return true;
  }
  return false;
}
static inline __attribute__((always_inline)) void *shoal_amo_addr(const char *routine, const char *arg,
                                                                  const void *addr, size_t size, int pe) {
  void *p;
  if (SHOAL_LIKELY(shoal_amo_fast(routine, addr, size, pe, &p))) return p;
  return shoal_amo_addr_slow(routine, arg, addr, size, pe, false);
}

/* One AMO on pe's instance of the 4- or 8-byte object addr, values as bits, wherever it is (inline path, another
 * space, the device heap, the transport between nodes); op is an enum shoal_tl_amo_op (transport.h: the
 * non-fetching form where the old value is not wanted, which saves a round trip between nodes). Returns the old value
 * (0 for set and the other non-fetching ops off this node). Fatal on bad addresses (naming rt and arg). */
uint64_t shoal_amo_bits(const char *rt, const char *arg, const void *addr, size_t size, int op, uint64_t v, uint64_t c,
                        int pe);

/* A local symmetric object that this PE polls (wait/test/signal): fatal unless [addr, addr + size) is symmetric host
 * memory aligned to align. Checks init. */
void shoal_p2p_check_slow(const char *routine, const char *arg, const void *addr, size_t size, size_t align);
static inline __attribute__((always_inline)) void shoal_p2p_check(const char *routine, const char *arg,
                                                                  const void *addr, size_t size, size_t align) {
  SHOAL_CHECK_INIT(routine);
  uintptr_t off = (uintptr_t)addr - (uintptr_t)shoal_g.heap_base;
  if (SHOAL_UNLIKELY(!(off < shoal_g.heap_size && size <= shoal_g.heap_size - off && !(off & (align - 1)))) &&
      !shoal_in_static(addr, size, align))
    shoal_p2p_check_slow(routine, arg, addr, size, align);
}

#endif
