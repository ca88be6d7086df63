/* transport.h - the seam's names from before the comm layer (comm.h), kept for the files that still call them
 * (collectives/, sync.c, tests/coll) until they use comm.h's names; each is the comm call on the default context
 * (ep NULL) or, for the _tx forms, on the context's endpoint tx; those given an address find its space here,
 * once, as the seam did. Delete once nothing includes it. */
#ifndef SHOAL_TRANSPORT_H
#define SHOAL_TRANSPORT_H
#include "comm.h"

static inline void shoal_tl_put(const char *routine, int pe, void *sym, const void *src, size_t n, bool nbi) {
  size_t off;
  const shoal_space_t *s = shoal_comm_space(routine, "dest", sym, n, &off);
  shoal_comm_put(routine, NULL, pe, s, off, sym, src, n, nbi);
}
static inline void shoal_tl_get(const char *routine, int pe, const void *sym, void *dst, size_t n, bool nbi) {
  size_t off;
  const shoal_space_t *s = shoal_comm_space(routine, "source", sym, n, &off);
  shoal_comm_get(routine, NULL, pe, s, off, sym, dst, n, nbi);
}
static inline uint64_t shoal_tl_amo(const char *routine, int pe, const void *sym, size_t size, int op, uint64_t v,
                                    uint64_t c) {
  size_t off;
  const shoal_space_t *s = shoal_comm_space(routine, "dest", sym, size, &off);
  return shoal_comm_amo(routine, NULL, pe, s, off, sym, size, op, v, c);
}
static inline void shoal_tl_signal(const char *routine, int pe, void *sym, uint64_t v) {
  shoal_comm_signal(routine, pe, sym, v);
}
static inline void shoal_tl_put_signal(const char *routine, int pe, void *sym, const void *src, size_t n, void *flag,
                                       uint64_t v) {
  shoal_comm_put_signal(routine, pe, sym, src, n, flag, v);
}
static inline void shoal_tl_fence(const char *routine) { shoal_comm_fence(routine, NULL); }
static inline void shoal_tl_quiet(const char *routine) { shoal_comm_quiet(routine, NULL); }
static inline void shoal_tl_fence_tx(const char *routine, void *tx) { shoal_comm_fence(routine, tx); }
static inline void shoal_tl_quiet_tx(const char *routine, void *tx) { shoal_comm_quiet(routine, tx); }

#endif
