/* transport.h - the transport seam (design 2 and 8): one small ops table per transport, filled with designated
 * initializers, size field first; a slot a transport does not implement points at a stub returning SHOAL_ERR_NOSYS.
 * Transports: transport_shm.c (load/store through this node's mappings) and transport_ofi.c (libfabric); which one
 * reaches each PE is decided once at init (transport.c, docs/design/transport.md).
 *
 * Addresses are (space, pe, off): space is a SHOAL_SPACE_* index, off the byte offset from the start of that space's
 * region as registered on every PE (regions are symmetric: the same len on every PE). Every slot returns SHOAL_OK or
 * a negative status after one line on stderr naming the libfabric routine that failed ("fi_write: ..."). Callable
 * from several threads at once after init. */
#ifndef SHOAL_TRANSPORT_H
#define SHOAL_TRANSPORT_H
#include "shoal.h"

/* AMOs of spec 9.8; the fetch_* forms and fetch, swap, compare_swap return the old value in *fetch. */
enum shoal_tl_amo_op {
  SHOAL_TL_AMO_FETCH, SHOAL_TL_AMO_SET, SHOAL_TL_AMO_SWAP, SHOAL_TL_AMO_CSWAP, SHOAL_TL_AMO_INC,
  SHOAL_TL_AMO_FETCH_INC, SHOAL_TL_AMO_ADD, SHOAL_TL_AMO_FETCH_ADD, SHOAL_TL_AMO_AND, SHOAL_TL_AMO_FETCH_AND,
  SHOAL_TL_AMO_OR, SHOAL_TL_AMO_FETCH_OR, SHOAL_TL_AMO_XOR, SHOAL_TL_AMO_FETCH_XOR, SHOAL_TL_AMO_NOPS
};
/* The AMO types of spec Tables 6-8, by C type. Extended ops (fetch, set, swap) take every one; the standard ones
 * (compare_swap, inc, add and their fetch forms) all but float and double; the bitwise ones only unsigned int,
 * unsigned long, unsigned long long, int32_t, int64_t, uint32_t and uint64_t. Another pairing is SHOAL_ERR_INVAL. */
enum shoal_tl_type {
  SHOAL_TL_INT, SHOAL_TL_LONG, SHOAL_TL_LONGLONG, SHOAL_TL_UINT, SHOAL_TL_ULONG, SHOAL_TL_ULONGLONG, SHOAL_TL_INT32,
  SHOAL_TL_INT64, SHOAL_TL_UINT32, SHOAL_TL_UINT64, SHOAL_TL_SIZE, SHOAL_TL_PTRDIFF, SHOAL_TL_FLOAT, SHOAL_TL_DOUBLE,
  SHOAL_TL_NTYPES
};

typedef struct shoal_tl_ops {
  size_t size; /* sizeof(shoal_tl_ops_t): first, so that a table built against another layout is refused */
  const char *name;
  /* Collective over b's PEs: endpoint, address vector of every PE, and the regions given to reg registered, their
   * keys and bases exchanged through b's allgather. SHOAL_ERR_NOSYS: no usable provider (one line names those found
   * and the capability missing). */
  shoal_status_t (*init)(shoal_boot_t *b);
  /* Before init: the region [base, base + len) of space on this PE. gpu_kind: SHOAL_GPU_NONE (0) for host memory,
   * else the shoal_gpu_kind_t whose device gpu_dev holds it (registered with FI_HMEM; SHOAL_ERR_NOSYS at init when
   * the provider has no FI_HMEM). SHOAL_ERR_INVAL: space out of range or already given. */
  shoal_status_t (*reg)(int space, void *base, size_t len, int gpu_kind, int gpu_dev);
  /* Blocking: on return src may be reused (locally complete); remotely complete after quiet. */
  shoal_status_t (*put)(int space, int pe, size_t off, const void *src, size_t n);
  /* Blocking: dst holds the data on return. */
  shoal_status_t (*get)(int space, int pe, size_t off, void *dst, size_t n);
  /* Non-blocking: src must stay unchanged, and dst is not valid, until quiet returns. */
  shoal_status_t (*put_nbi)(int space, int pe, size_t off, const void *src, size_t n);
  shoal_status_t (*get_nbi)(int space, int pe, size_t off, void *dst, size_t n);
  /* op on the type-sized object at off (naturally aligned). operand: the value (set, swap, compare_swap's new
   * value, add, and/or/xor; NULL for fetch, inc), compare: compare_swap's condition, fetch: the old value (NULL for
   * set, inc, add, and, or, xor). Fetching ops are complete on return; the others remotely complete after quiet.
   * Every AMO on one object of one type is atomic with every other, from any PE. */
  shoal_status_t (*amo)(int space, int pe, size_t off, int op, int type, const void *operand, const void *compare,
                        void *fetch);
  /* The runtime's own flag cells (barriers, collectives): stores the 8-byte v (a value that only grows) at off on
   * pe, arriving after every put and AMO this PE issued to pe before it; on return the sources of this PE's nbi
   * puts may be reused (local completion; no round trip where the transport orders writes). A poller on pe that
   * sees v sees those puts. Not atomic against AMOs on the same cell: a cell is signalled or takes AMOs, not both. */
  shoal_status_t (*signal)(int space, int pe, size_t off, uint64_t v);
  /* Every put, AMO and nbi operation issued so far is complete at its target (spec 9.11.2). */
  shoal_status_t (*quiet)(void);
  /* Puts and AMOs issued before it reach each PE before those issued after it (spec 9.11.1). */
  shoal_status_t (*fence)(void);
  /* Moves this PE's side of the wire along (incoming puts, gets and AMOs of peers; completions): called by a PE that
   * polls its own memory (SHOAL_WAIT_WHILE) so that peers waiting on it are served at once, not after a thread's
   * wake-up. Cheap when nothing is pending; never blocks. */
  void (*progress)(void);
  /* Releases everything init made (endpoint, memory registrations, threads, descriptors; context endpoints left
   * open). Call after a barrier: a peer may still be reading this PE's memory otherwise. The regions are forgotten
   * too. */
  void (*fini)(void);
  /* Contexts (spec 9.4) with resources of their own: ctx_create makes a handle for one (*tx; shared: other threads
   * may use it too, so calls on it are serialized under SHMEM_THREAD_MULTIPLE). A status other than SHOAL_OK leaves
   * *tx NULL: the context then uses the slots above, which is correct, only not separate. The _ctx slots act as
   * put/put_nbi (nbi), get/get_nbi, amo, quiet and fence on tx (NULL: the default context's); quiet_ctx and
   * fence_ctx cover tx's operations only. ctx_destroy completes tx's operations and frees it (NULL: nothing). */
  shoal_status_t (*ctx_create)(bool shared, void **tx);
  void (*ctx_destroy)(void *tx);
  shoal_status_t (*put_ctx)(void *tx, int space, int pe, size_t off, const void *src, size_t n, bool nbi);
  shoal_status_t (*get_ctx)(void *tx, int space, int pe, size_t off, void *dst, size_t n, bool nbi);
  shoal_status_t (*amo_ctx)(void *tx, int space, int pe, size_t off, int op, int type, const void *operand,
                            const void *compare, void *fetch);
  shoal_status_t (*quiet_ctx)(void *tx);
  shoal_status_t (*fence_ctx)(void *tx);
} shoal_tl_ops_t;

extern const shoal_tl_ops_t shoal_tl_shm_ops;

/* Bytes of an AMO type (0 for a value out of range). */
static inline size_t shoal_tl_type_size(int type) {
  static const unsigned char sz[SHOAL_TL_NTYPES] = {4, sizeof(long), 8, 4, sizeof(long), 8, 4, 8, 4, 8,
                                                    sizeof(size_t), sizeof(ptrdiff_t), 4, 8};
  return (unsigned)type < SHOAL_TL_NTYPES ? sz[type] : 0;
}

/* op (enum shoal_tl_amo_op) on the 4- or 8-byte host object p (size 4 or 8, naturally aligned), values as bits:
 * integer ops of one size are the same on signed and unsigned types, and float and double only take fetch, set and
 * swap, which move bits. inc and fetch_inc add 1 (v unused). Returns the old value (0 for set). Memory orders: fetch
 * acquire, set release, read-modify-writes sequentially consistent (a locked instruction on x86 either way). The one
 * body of the host-side arithmetic: amo.c's AMOs off the inline path, the shm transport, and the ofi transport's
 * message fallback on its target, so AMOs on one object are the same operation whichever way they come. */
#define SHOAL_AMO_HOST(U)                                                                                              \
  do {                                                                                                                 \
    U *q = p, cc = (U)c;                                                                                               \
    switch (op) {                                                                                                      \
    case SHOAL_TL_AMO_FETCH: return __atomic_load_n(q, __ATOMIC_ACQUIRE);                                              \
    case SHOAL_TL_AMO_SET: __atomic_store_n(q, (U)v, __ATOMIC_RELEASE); return 0;                                      \
    case SHOAL_TL_AMO_SWAP: return __atomic_exchange_n(q, (U)v, __ATOMIC_SEQ_CST);                                     \
    case SHOAL_TL_AMO_CSWAP:                                                                                           \
      __atomic_compare_exchange_n(q, &cc, (U)v, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);                                \
      return cc;                                                                                                       \
    case SHOAL_TL_AMO_INC: case SHOAL_TL_AMO_FETCH_INC: return __atomic_fetch_add(q, 1, __ATOMIC_SEQ_CST);             \
    case SHOAL_TL_AMO_ADD: case SHOAL_TL_AMO_FETCH_ADD: return __atomic_fetch_add(q, (U)v, __ATOMIC_SEQ_CST);          \
    case SHOAL_TL_AMO_AND: case SHOAL_TL_AMO_FETCH_AND: return __atomic_fetch_and(q, (U)v, __ATOMIC_SEQ_CST);          \
    case SHOAL_TL_AMO_OR: case SHOAL_TL_AMO_FETCH_OR: return __atomic_fetch_or(q, (U)v, __ATOMIC_SEQ_CST);             \
    default: return __atomic_fetch_xor(q, (U)v, __ATOMIC_SEQ_CST);                                                    \
    }                                                                                                                  \
  } while (0)
static inline uint64_t shoal_amo_host(void *p, int op, size_t size, uint64_t v, uint64_t c) {
  if (size == 4) SHOAL_AMO_HOST(uint32_t);
  SHOAL_AMO_HOST(uint64_t);
}
#undef SHOAL_AMO_HOST

/* ---- the seam (transport.c) ---- */
/* At init, after the host heap and static data are mapped (heap_lim and the spaces' lim say which peers are):
 * shoal_g.tl_of[pe] for every PE, and, when some PE is not mapped, the transport between nodes registered and
 * started (collective over every PE). One line and a negative status when a PE cannot be reached. */
shoal_status_t shoal_tl_setup(const char *routine);
/* At finalize, after the last barrier: this PE's operations complete, every PE meets out of band (nobody still
 * reads or writes this PE), then the transport between nodes closes. */
void shoal_tl_teardown(void);
/* The slow paths of rma.c, amo.c, p2p.c and the collectives for a PE reached through shoal_g.tl_of[pe]: sym is a
 * symmetric address of this PE (n bytes, inside one space), the data goes to or comes from pe's instance. Blocking
 * forms are locally complete on return (a get's dst is filled); nbi ones at quiet. op: enum shoal_tl_amo_op on an
 * unsigned object of size 4 or 8 bytes (values as bits); returns the old value for fetching ops. Fatal with one line
 * naming routine on failure. */
void shoal_tl_put(const char *routine, int pe, void *sym, const void *src, size_t n, bool nbi);
void shoal_tl_get(const char *routine, int pe, const void *sym, void *dst, size_t n, bool nbi);
uint64_t shoal_tl_amo(const char *routine, int pe, const void *sym, size_t size, int op, uint64_t v, uint64_t c);
/* Stores v in pe's instance of the 8-byte flag cell sym after everything this PE put to pe (the ops table's signal:
 * no round trip where the provider orders writes). For the runtime's flag cells only. Fatal on failure. */
void shoal_tl_signal(const char *routine, int pe, void *sym, uint64_t v);
/* The transport's fence and quiet, if one runs between nodes (no-ops otherwise). */
void shoal_tl_fence(const char *routine);
void shoal_tl_quiet(const char *routine);
/* Contexts (spec 9.4): a handle for a context's own endpoint in the transport between nodes, or NULL (no such
 * transport runs, or it could not make one: the default endpoint serves the context, which is correct). shared:
 * not SHMEM_CTX_PRIVATE. The _tx forms act as the forms above on tx (NULL: the default context); fence and quiet
 * cover tx's operations only. Fatal with one line naming routine on failure. */
void *shoal_tl_ctx_create(bool shared);
void shoal_tl_ctx_destroy(void *tx);
void shoal_tl_put_tx(const char *routine, void *tx, int pe, void *sym, const void *src, size_t n, bool nbi);
void shoal_tl_get_tx(const char *routine, void *tx, int pe, const void *sym, void *dst, size_t n, bool nbi);
uint64_t shoal_tl_amo_tx(const char *routine, void *tx, int pe, const void *sym, size_t size, int op, uint64_t v,
                         uint64_t c);
void shoal_tl_fence_tx(const char *routine, void *tx);
void shoal_tl_quiet_tx(const char *routine, void *tx);

#if SHOAL_HAVE_OFI
extern const shoal_tl_ops_t shoal_tl_ofi_ops;
/* Tests: before init, force the message fallback for every AMO type (SHOAL_TL_OFI_FORCE_MSG_AMO) and delivery-complete
 * writes instead of the flush read at quiet (SHOAL_TL_OFI_FORCE_DC); 0 restores the defaults. */
enum { SHOAL_TL_OFI_FORCE_MSG_AMO = 1, SHOAL_TL_OFI_FORCE_DC = 2 };
void shoal_tl_ofi_test_force(unsigned flags);
/* What init found, for tests and SHMEM_DEBUG: the provider's name, whether a progress thread runs, and the number of
 * AMO types done natively (out of SHOAL_TL_NTYPES); and what the progress thread did since init: its progress calls
 * (fi_cq_read or fi_cq_sread of its own) and its sleeps while the PE polled. Valid between init and fini. */
typedef struct shoal_tl_ofi_info {
  const char *provider;
  bool progress_thread, flush_read, virt_addr, hmem;
  int native_types;
  size_t inject_size;
  uint64_t thread_progress, thread_holds;
  uint64_t writes, reads; /* operations issued so far: puts, non-fetching AMOs, signals; gets, fetching AMOs, flushes */
  bool ordered_signal;    /* signal is one ordered write (no quiet, no AMO) */
  int ctx_endpoints;      /* contexts with an endpoint of their own, open now */
  uint64_t dropped;       /* messages refused since init: not from this job (token), malformed, truncated */
} shoal_tl_ofi_info_t;
void shoal_tl_ofi_query(shoal_tl_ofi_info_t *out);
#endif

#endif
