/* lock.c - distributed locks (spec 9.12): a FIFO ticket lock in PE 0's copy of the symmetric long.
 *
 * The 64-bit word holds two 32-bit counters: "next" (high half: the ticket the next arrival takes) and "serving" (low
 * half: the ticket that holds the lock). set_lock takes a ticket with one fetch_add on the high half (a carry out of
 * the top is lost harmlessly) and waits until serving reaches it; clear_lock advances serving with a compare-and-swap
 * that leaves the high half alone. Tickets are served in arrival order, so no PE starves; waiting yields the CPU after
 * a short spin (SHOAL_WAIT_WHILE). A zero word is a free lock, as the spec requires.
 *
 * A word no lock ever holds (not set to 0 before first use) would make set_lock wait forever. Tickets are taken
 * before they are served, so next - serving (mod 2^32) counts the tickets outstanding: serving ahead of next (the
 * difference past 2^31) is impossible, and is caught always: one compare on the value the atomic already returned.
 * With SHMEM_DEBUG=1 and at most one calling thread per PE (a thread level below SHMEM_THREAD_MULTIPLE), more
 * outstanding tickets than PEs is impossible too. Either stops the job with one line naming the routine and lock. */
#include "amo.h"
#include "comm.h" /* SHOAL_TL_AMO_* */

_Static_assert(sizeof(long) == sizeof(uint64_t), "the lock word is a 64-bit long");

#define TICKET_ONE ((uint64_t)1 << 32)
static inline uint32_t next_of(uint64_t w) { return (uint32_t)(w >> 32); }
static inline uint32_t serving_of(uint64_t w) { return (uint32_t)w; }

static inline bool impossible(uint64_t w) {
  uint32_t d = next_of(w) - serving_of(w);
  if (SHOAL_UNLIKELY(d > INT32_MAX)) return true;
  return SHOAL_UNLIKELY(shoal_env.debug) && shoal_g.thread_level != SHMEM_THREAD_MULTIPLE && d > (uint32_t)shoal_g.npes;
}
static _Noreturn __attribute__((noinline, cold)) void bad_word(const char *routine, long *lock, uint64_t w) {
  shoal_fatal(routine, "lock %p holds %#llx, which no lock ever holds (was it set to 0 on every PE before its first "
              "use?)", (void *)lock, (unsigned long long)w);
}

/* One AMO on PE 0's lock word (fatal if lock is not a symmetric, aligned long in host memory): inline through the
 * mapping on one node, through the transport when PE 0 is on another. */
static inline uint64_t lk(const char *routine, long *lock, int op, uint64_t v, uint64_t c) {
  return shoal_amo_bits(routine, "lock", lock, sizeof(long), op, v, c, 0);
}

void shmem_set_lock(long *lock) {
  uint64_t old = lk("shmem_set_lock", lock, SHOAL_TL_AMO_FETCH_ADD, TICKET_ONE, 0);
  if (impossible(old)) bad_word("shmem_set_lock", lock, old);
  uint32_t ticket = next_of(old);
  SHOAL_WAIT_WHILE(serving_of(lk("shmem_set_lock", lock, SHOAL_TL_AMO_FETCH, 0, 0)) != ticket);
}

int shmem_test_lock(long *lock) {
  uint64_t old = lk("shmem_test_lock", lock, SHOAL_TL_AMO_FETCH, 0, 0);
  if (impossible(old)) bad_word("shmem_test_lock", lock, old);
  if (next_of(old) != serving_of(old)) return 1; /* held (or waited for) */
  return lk("shmem_test_lock", lock, SHOAL_TL_AMO_CSWAP, old + TICKET_ONE, old) == old ? 0 : 1;
}

void shmem_clear_lock(long *lock) {
  shmem_quiet(); /* the holder's puts and AMOs complete before the next holder enters */
  uint64_t old = lk("shmem_clear_lock", lock, SHOAL_TL_AMO_FETCH, 0, 0), upd, got;
  for (;; old = got) {
    if (impossible(old)) bad_word("shmem_clear_lock", lock, old);
    if (next_of(old) == serving_of(old))
      shoal_fatal("shmem_clear_lock", "lock %p is not held by any PE", (void *)lock);
    upd = (old & ~(uint64_t)UINT32_MAX) | (uint32_t)(serving_of(old) + 1);
    if ((got = lk("shmem_clear_lock", lock, SHOAL_TL_AMO_CSWAP, upd, old)) == old) break;
  }
}
