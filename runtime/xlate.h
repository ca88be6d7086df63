/* xlate.h - address translation: the inline fast path (shoal_xlate) and its slow path in xlate.c, one module, so
 * that shoal.h's state and types call nothing. A leaf on the state and the log. */
#ifndef SHOAL_XLATE_H
#define SHOAL_XLATE_H
#include "shoal.h"

/* Slow path: other spaces; returns the space (and *off) holding [addr, addr+n), or NULL. */
shoal_space_t *shoal_space_find(const void *addr, size_t n, size_t *off);
void *shoal_xlate_slow(const void *addr, size_t n, int pe, const char *routine, const char *arg);

/* Translate a symmetric address of this PE to the address of pe's instance in this address space. One compare and
 * one add on the host heap; anything else goes to the slow path, which is fatal for non-symmetric addresses and
 * returns NULL where pe's instance has no load/store mapping here (the device heap, a PE of another node). */
static inline void *shoal_xlate(const void *addr, size_t n, int pe, const char *routine, const char *arg) {
  uintptr_t off = (uintptr_t)addr - (uintptr_t)shoal_g.heap_base;
  size_t lim = shoal_g.heap_lim[pe];
  if (SHOAL_LIKELY(off < lim && n <= lim - off)) return (char *)addr + shoal_g.heap_delta[pe];
  return shoal_xlate_slow(addr, n, pe, routine, arg);
}

#endif
