/* xlate.c - address translation's slow path (the fast path is shoal_xlate in xlate.h): which symmetric space holds
 * an address, and pe's instance of it. A leaf: it reads the state (shoal_g) and reports through the log, nothing
 * else, so that the inline translation every RMA and AMO routine uses ties no other module to them. */
#include "xlate.h"

/* Spaces are searched in table order (at most SHOAL_SPACE_MAX, empty ones skipped): the host heap, then the device
 * heap, then static data; [addr, addr + n) must lie wholly in one space. */
shoal_space_t *shoal_space_find(const void *addr, size_t n, size_t *off) {
  for (int i = 0; i < SHOAL_SPACE_MAX; i++) {
    shoal_space_t *s = &shoal_g.space[i];
    uintptr_t o = (uintptr_t)addr - s->base;
    if (s->size && o < s->size && n <= s->size - o) {
      if (off) *off = o;
      return s;
    }
  }
  return NULL;
}

/* Out of line so that shoal_xlate stays one compare and one add inline; fatal (naming routine and arg) for an address
 * outside every space or a range running past its space's end, so callers need no error path. */
void *shoal_xlate_slow(const void *addr, size_t n, int pe, const char *routine, const char *arg) {
  size_t off;
  shoal_space_t *s = shoal_space_find(addr, n, &off);
  if (s && s->delta && !shoal_space_far(s, pe)) return (char *)addr + s->delta[pe];
  if (s) return NULL; /* reachable, but only through the space's put/get or the transport */
  if (shoal_space_find(addr, 1, NULL))
    shoal_fatal(routine, "%s %p + %zu bytes runs past the end of its symmetric region", arg, addr, n);
  shoal_fatal(routine, "%s %p is not a symmetric address (not in the symmetric heap or static data)", arg, addr);
}
