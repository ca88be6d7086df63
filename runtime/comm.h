/* comm.h - the comm layer (design 2, 8 and 9; the role SOS's shmem_comm.h plays): which transport reaches each PE,
 * decided once at init (comm.c), and the calls the runtime's off-path code makes through it. Transports sit behind one
 * small ops table each (filled with designated initializers, size field first), in an ordered registry (comm.c):
 * runtime/transport/shm/ (load/store through this node's mappings) and runtime/transport/ofi/ (libfabric).
 *
 * Addresses are (space, pe, off): space is a SHOAL_SPACE_* index, off the byte offset from the start of that space's
 * region as registered on every PE (regions are symmetric: the same len on every PE). Every slot returns SHOAL_OK or
 * a negative status after one line on stderr naming the libfabric routine that failed ("fi_write: ..."). Callable
 * from several threads at once after init. */
#ifndef SHOAL_COMM_H
#define SHOAL_COMM_H
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
  /* Whether this transport can reach pe: asked once per PE at init (comm.c, after the host heap and static data are
   * mapped, before reg and init), the answer cached in shoal_g.tl_of. The first transport of the registry that
   * answers yes reaches pe. */
  bool (*can_reach)(int pe);
  /* Collective over b's PEs: endpoint, address vector of every PE, and the regions given to reg registered, their
   * keys and bases exchanged through b's allgather. SHOAL_ERR_NOSYS: no usable provider (one line names those found
   * and the capability missing). */
  shoal_status_t (*init)(shoal_boot_t *b);
  /* Before init: the region [base, base + len) of space on this PE. gpu_kind: SHOAL_GPU_NONE (0) for host memory,
   * else the shoal_gpu_kind_t whose device gpu_dev holds it (registered with FI_HMEM; SHOAL_ERR_NOSYS at init when
   * the provider has no FI_HMEM, or, where init goes on without it, the region left out: nothing may be sent to it).
   * SHOAL_ERR_INVAL: space out of range or already given. */
  shoal_status_t (*reg)(int space, void *base, size_t len, int gpu_kind, int gpu_dev);
  /* The data slots act on ep, the endpoint of a context made by ctx_create, or NULL for the default context's (as
   * libfabric's operations take their fid_ep): one slot each, whatever the context. They trust their caller (the
   * comm layer, whose callers checked pe and the bounds once): space registered, pe in range, [off, off + n) inside
   * the region; only what is the transport's own (an op or type it cannot do, alignment) is checked here.
   * put: nbi false, blocking: on return src may be reused (locally complete); remotely complete after quiet. nbi
   * true: src must stay unchanged until quiet returns. get: nbi false, dst holds the data on return; nbi true, dst is
   * not valid until quiet returns. */
  shoal_status_t (*put)(void *ep, int space, int pe, size_t off, const void *src, size_t n, bool nbi);
  shoal_status_t (*get)(void *ep, int space, int pe, size_t off, void *dst, size_t n, bool nbi);
  /* op on the type-sized object at off (naturally aligned). operand: the value (set, swap, compare_swap's new
   * value, add, and/or/xor; NULL for fetch, inc), compare: compare_swap's condition, fetch: the old value (NULL for
   * set, inc, add, and, or, xor). Fetching ops are complete on return; the others remotely complete after quiet.
   * Every AMO on one object of one type is atomic with every other, from any PE and any endpoint. */
  shoal_status_t (*amo)(void *ep, int space, int pe, size_t off, int op, int type, const void *operand,
                        const void *compare, void *fetch);
  /* The runtime's own flag cells (barriers, collectives), always on the default endpoint (the collectives use the
   * default context): stores the 8-byte v (a value that only grows) at off on pe, arriving after every put and AMO
   * this PE issued to pe before it on that endpoint; on return the sources of this PE's nbi puts may be reused (local
   * completion; no round trip where the transport orders writes). A poller on pe that sees v sees those puts. Not
   * atomic against AMOs on the same cell: a cell is signalled or takes AMOs, not both. */
  shoal_status_t (*signal)(int space, int pe, size_t off, uint64_t v);
  /* Every put, AMO and nbi operation issued so far on ep is complete at its target (spec 9.11.2). */
  shoal_status_t (*quiet)(void *ep);
  /* Puts and AMOs issued on ep before it reach each PE before those issued on ep after it (spec 9.11.1). */
  shoal_status_t (*fence)(void *ep);
  /* Moves this PE's side of the wire along (incoming puts, gets and AMOs of peers; completions; every context's
   * endpoint): called by a PE that polls its own memory (SHOAL_WAIT_WHILE) so that peers waiting on it are served at
   * once, not after a thread's wake-up. Cheap when nothing is pending; never blocks. */
  void (*progress)(void);
  /* Releases everything init made (endpoint, memory registrations, threads, descriptors; context endpoints left
   * open). Call after a barrier: a peer may still be reading this PE's memory otherwise. The regions are forgotten
   * too. */
  void (*fini)(void);
  /* Contexts (spec 9.4) with resources of their own: ctx_create makes an endpoint for one (*ep; shared: other
   * threads may use it too, so calls on it are serialized under SHMEM_THREAD_MULTIPLE). A status other than SHOAL_OK
   * leaves *ep NULL: the context then uses the default endpoint, which is correct, only not separate. ctx_destroy
   * completes ep's operations and frees it (NULL: nothing). */
  shoal_status_t (*ctx_create)(bool shared, void **ep);
  void (*ctx_destroy)(void *ep);
  /* The device heap of pe, a PE of another node (space SHOAL_SPACE_DEVICE, not given to reg: off from the heap's
   * base, [off, off + n) inside it, checked by the comm layer's callers), staged through host memory: the transport
   * carries the bytes to or from a host buffer of pe, whose own side copies them into or out of its device heap
   * (shoal_comm_dev_copy) and does the AMOs there (shoal_comm_dev_amo), since no RMA of the provider reaches device
   * memory that is not registered (docs/gpu.md, "Device memory of other nodes"). On ep as the slots above.
   * dev_put returns once buf may be reused and is complete at pe after quiet or fence on ep (as a put); dev_get is
   * complete on return, and sees the puts before it to pe; buf is host or device memory of this PE (copied with
   * shoal_gpu_ops.memcpy). dev_amo: op (enum shoal_tl_amo_op) on the size-byte (4 or
   * 8) object at off, values as bits; fetching ops are complete on return with the old value in *old, the others
   * remotely complete after quiet (fence orders them as other AMOs). NULL: the transport cannot (comm.c's line). */
  shoal_status_t (*dev_put)(void *ep, int pe, size_t off, const void *src, size_t n);
  shoal_status_t (*dev_get)(void *ep, int pe, size_t off, void *dst, size_t n);
  shoal_status_t (*dev_amo)(void *ep, int pe, size_t off, int op, size_t size, uint64_t v, uint64_t c, uint64_t *old);
  /* Optional (NULL: put, then signal): a blocking put of n bytes (src free on return) and the signal of v in the flag
   * cell at (fspace, foff) on pe, as one message, the flag stored at pe only once the data is there. Last in the
   * table so that tables built before it keep their layout. SHOAL_ERR_NOSYS: not as one message here (this cell,
   * size or provider); nothing was sent, the caller puts and signals. */
  shoal_status_t (*put_signal)(int space, int pe, size_t off, const void *src, size_t n, int fspace, size_t foff,
                               uint64_t v);
  /* Optional (NULL: no thread of its own): move the transport's helper threads (ofi's progress thread) onto cpus, the
   * CPUs no PE of the node is bound to (the device proxy's, runtime/proxy.c); *moved: how many threads went. */
  shoal_status_t (*helpers_to)(const cpu_set_t *cpus, int *moved);
  /* Optional (NULL: none): the host memory the transport stages device-heap bytes through (ofi's staging region,
   * page aligned), which the device heap's set-up page-locks for the GPU's DMA copies (heap_gpu.c). */
  shoal_status_t (*stage_region)(void **base, size_t *len);
  /* Optional (NULL: dev_put), the device proxy's nbi put (runtime/proxy.c): as dev_put, but the copy out of src (GPU
   * memory) is only enqueued, and the chunk is sent once it is done, so that the next requests are served meanwhile;
   * src must stay unchanged until the next quiet or fence on ep (the spec's nbi put). ep: a context's own endpoint,
   * used by one thread, which calls dev_pending until it returns 0; until then other threads' staged calls wait. */
  shoal_status_t (*dev_put_nbi)(void *ep, int pe, size_t off, const void *src, size_t n);
  /* Sends ep's deferred chunks whose copy is done (all of them, their copies waited for, while another thread's
   * staged call waits for them); returns how many are left. */
  int (*dev_pending)(void *ep);
  /* Optional (NULL: quiet(NULL)): quiet(NULL), except that the puts to pe need only be ordered before what the
   * default endpoint carries next (a fence for them), for a caller whose next operation is a signal to pe that pe
   * waits for before it uses them (shmem_barrier_all of two PEs). The transport quiets fully wherever it cannot keep
   * that order, or where a later operation of this PE could overtake the puts (it flushes them first then). */
  shoal_status_t (*quiet_before_signal)(int pe);
} shoal_tl_ops_t;

/* The transports, in the order comm.c asks them (runtime/transport/<name>/): shm first (this node's PEs, also
 * reached inline by rma.c and amo.h), then ofi when built. A new transport is one folder and one line of the registry
 * (comm.c).
 *
 * The shm table's data slots are not called by the runtime: every caller reaches a PE of this node itself (rma.c and
 * amo.h inline, one add and a memcpy or an __atomic; rma.c's other host spaces and amo.c's off path by delta and
 * shoal_amo_host; the collectives' copies) and enters the comm layer only for a PE that shoal_space_far places on
 * another node, so that the node's path gains no call and no branch. shm answers can_reach for the registry; its
 * data slots are the same load/store path behind the table, called by tests only (tests/coll/test_far.c: signal). */
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

/* ---- this PE's device heap, for the transports' staged path (the dev_* slots above) ---- */
/* The target's side, run from the transport's progress (any thread, serialized with the host's AMOs on the heap):
 * n bytes between host (a staging buffer) and this PE's device heap at byte offset off (to_device: into the heap).
 * SHOAL_ERR_INVAL, nothing copied, when there is no device heap or [off, off + n) is not inside it (heap_gpu.c). */
shoal_status_t shoal_comm_dev_copy(size_t off, void *host, size_t n, bool to_device);
/* Copies of shoal_comm_dev_copy_start a caller may have pending at once, at most (each pool of events, the heap's
 * and the copier's, has as many; the transport's ring of pending answers too, and it holds them to it). */
#define SHOAL_COMM_DEV_COPIES 32
/* The same copy into the heap, only enqueued (by the copier's thread where it runs: heap_gpu.c): *slot (0 to
 * 2 * SHOAL_COMM_DEV_COPIES - 1) names it for shoal_comm_dev_copy_done, which the caller asks until *done before it
 * tells the requester (host must stay unchanged until then). *slot -1: the copy was done before return (no pollable
 * event in the backend, or SHOAL_COMM_DEV_COPIES copies pending). Errors as shoal_comm_dev_copy's; a failed copy
 * found by done returns SHOAL_ERR with *done true. */
shoal_status_t shoal_comm_dev_copy_start(size_t off, const void *host, size_t n, int *slot);
shoal_status_t shoal_comm_dev_copy_done(int slot, bool *done);
/* op (enum shoal_tl_amo_op) on the size-byte object at off of this PE's device heap (the backend's device atomic,
 * atomic with the near PEs' and the kernels'); *old: the old value (inc: v ignored). SHOAL_ERR_INVAL for an op, size,
 * alignment or offset out of range or no device heap (amo.c). */
shoal_status_t shoal_comm_dev_amo(size_t off, int op, size_t size, uint64_t v, uint64_t c, uint64_t *old);
/* The requester's side: n bytes from src to dst, either one host or device memory of this PE (the backend's copy,
 * synchronous; a plain memcpy without a GPU). */
shoal_status_t shoal_comm_dev_memcpy(void *dst, const void *src, size_t n);
/* The same, only enqueued, for dst host memory: *slot (0 to 2 * SHOAL_COMM_DEV_COPIES - 1) names it for
 * shoal_comm_dev_memcpy_done, asked until *done before dst is read (src must stay unchanged until then); *slot -1:
 * done before return (src host memory, no pollable event, every event taken, SHOAL_GPU_STAGE_ASYNC=0). Errors as
 * shoal_comm_dev_memcpy's; a failed copy found by done returns SHOAL_ERR with *done true. */
shoal_status_t shoal_comm_dev_memcpy_start(void *dst, const void *src, size_t n, int *slot);
shoal_status_t shoal_comm_dev_memcpy_done(int slot, bool *done);
/* slot's copy is known done without asking (a later copy of the same stream was found done: they end in order);
 * SHOAL_ERR where it is known to have failed (the copier's thread could not enqueue it, or its event said so). */
shoal_status_t shoal_comm_dev_memcpy_release(int slot);

/* ---- the comm layer (comm.c) ---- */
/* At init, after the host heap and static data are mapped (heap_lim and the spaces' lim say which peers are):
 * shoal_g.tl_of[pe] for every PE (the first transport of the registry that can reach it), and, when some PE is reached
 * by a transport other than shm, that transport registered and started (collective over every PE). One line and a
 * negative status when a PE cannot be reached. */
shoal_status_t shoal_comm_setup(const char *routine);
/* At finalize, after the last barrier: this PE's operations complete, every PE meets out of band (nobody still
 * reads or writes this PE), then the transport between nodes closes. */
void shoal_comm_teardown(void);
/* The space holding [sym, sym + n) (n 0: one byte) and sym's offset in it (*off); fatal with one line naming routine
 * and arg when sym is not symmetric. For callers that hold only an address (the forwards of transport.h, a signal). */
shoal_space_t *shoal_comm_space(const char *routine, const char *arg, const void *sym, size_t n, size_t *off);
/* The off-path calls of rma.c, amo.c, p2p.c and the collectives for a PE reached through shoal_g.tl_of[pe], on ep (a
 * context's endpoint from shoal_comm_ctx_create, NULL: the default context's): sym, at offset off of space s (as
 * found by the caller, once), is a symmetric address of this PE (n bytes), the data goes to or comes from pe's
 * instance. The caller has checked pe (SHOAL_CHECK_PE) and that [sym, sym + n) lies in s (shoal_space_find): the
 * regions are symmetric, so it lies in pe's too, and neither this layer nor the transport checks pe or the bounds
 * again. The device heap goes through the transport's dev_* slots (staged; gets complete on return, nbi included), fatal
 * naming sym where it has none. Blocking forms are locally
 * complete on return (a get's dst is filled); nbi ones at quiet. op: enum shoal_tl_amo_op on an unsigned object of
 * size 4 or 8 bytes (values as bits); returns the old value for fetching ops. Fatal with one line naming routine on
 * failure. */
void shoal_comm_put(const char *routine, void *ep, int pe, const shoal_space_t *s, size_t off, void *sym,
                    const void *src, size_t n, bool nbi);
void shoal_comm_get(const char *routine, void *ep, int pe, const shoal_space_t *s, size_t off, const void *sym,
                    void *dst, size_t n, bool nbi);
uint64_t shoal_comm_amo(const char *routine, void *ep, int pe, const shoal_space_t *s, size_t off, const void *sym,
                        size_t size, int op, uint64_t v, uint64_t c);
/* Stores v in pe's instance of the 8-byte flag cell sym after everything this PE put to pe on the default context
 * (the ops table's signal: no round trip where the provider orders writes). For the runtime's flag cells only: finds
 * sym's space itself (the callers hold only the address; pe is theirs, checked). Fatal on failure. */
void shoal_comm_signal(const char *routine, int pe, void *sym, uint64_t v);
/* A blocking put of n bytes from src to sym on pe, then the signal of v in flag (as shoal_comm_signal): one message
 * where the transport carries the flag with the data (the ops table's put_signal), else the two. Saves the
 * collectives' second message per peer. Fatal on failure. */
void shoal_comm_put_signal(const char *routine, int pe, void *sym, const void *src, size_t n, void *flag, uint64_t v);
/* The fence and quiet of ep (NULL: the default context) in the transport between nodes, if one runs (no-ops
 * otherwise: on one node every operation is complete on return). Fatal with one line naming routine on failure. */
void shoal_comm_fence(const char *routine, void *ep);
void shoal_comm_quiet(const char *routine, void *ep);
/* The default context's quiet, where the caller's next call is shoal_comm_signal to pe, which pe waits for before it
 * uses what this PE put there (the ops table's quiet_before_signal: those puts then cost no round trip). */
void shoal_comm_quiet_before_signal(const char *routine, int pe);
/* Contexts (spec 9.4): an endpoint for a context in the transport between nodes, or NULL (no such transport runs, or
 * it could not make one: the default endpoint serves the context, which is correct). shared: not SHMEM_CTX_PRIVATE.
 * ctx_destroy completes ep's operations first. */
void *shoal_comm_ctx_create(bool shared);
void shoal_comm_ctx_destroy(void *ep);
/* The device proxy's thread sets it (runtime/proxy.c): its nbi puts to far device heaps may leave their copy out of
 * GPU memory pending (the ops table's dev_put_nbi) on its own endpoint, and it calls shoal_comm_dev_pending(ep),
 * which sends those whose copy is done and returns how many still wait (0 without a transport or such puts), until
 * that is 0; its quiet and fence wait for them all. */
extern _Thread_local bool shoal_comm_defer_ok;
int shoal_comm_dev_pending(void *ep);

#if SHOAL_HAVE_OFI
extern const shoal_tl_ops_t shoal_tl_ofi_ops;
/* Tests: before init, force the message fallback for every AMO type (SHOAL_TL_OFI_FORCE_MSG_AMO) and delivery-complete
 * writes instead of the flush read at quiet (SHOAL_TL_OFI_FORCE_DC), put_signal as a put and a signal
 * (SHOAL_TL_OFI_FORCE_NO_CQ_SIGNAL), a target that waits 50 ms before it copies each staged put chunk into its device
 * heap (SHOAL_TL_OFI_FORCE_SLOW_DPUT); 0 restores the defaults. (8, once "one message on crowded jobs too", is now
 * the default.) */
enum { SHOAL_TL_OFI_FORCE_MSG_AMO = 1, SHOAL_TL_OFI_FORCE_DC = 2, SHOAL_TL_OFI_FORCE_NO_CQ_SIGNAL = 4,
       SHOAL_TL_OFI_FORCE_SLOW_DPUT = 16 };
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
  bool cq_signal;         /* put_signal is one write carrying the flag as remote CQ data */
  uint64_t counter_waits; /* waits for the completion counters that had to read them (default endpoint) */
  int ctx_endpoints;      /* contexts with an endpoint of their own, open now */
  uint64_t dropped;       /* messages refused since init: not from this job (token), malformed, truncated */
  unsigned stage_unanswered; /* staged put chunks sent and not answered yet (complete at their target after quiet) */
  uint64_t stage_early;      /* staged put chunk requests this PE got before their bytes (left for their resend) */
  uint64_t stage_msgs;       /* staged put chunks whose request this PE sent as a message of its own, not in the
                              * chunk's write (no remote CQ data, or the provider's message too short) */
  uint64_t stage_cq_reqs;    /* staged put requests this PE (as the target) took from their chunks' writes */
  uint64_t answers_joined;   /* answers to staged puts this PE (as the target) sent several to a message */
  size_t stage_reach;        /* bytes of this PE's staging ring its puts have used since init (their furthest end) */
  bool saw;    /* a fallback AMO after a fence over puts is sent behind them: no quiet, no counter read */
  bool bounce; /* a blocking put of inject_size+1 to 8 KiB (a collective's put with signal: 32 KiB) is copied and
                * returns without waiting for its write */
} shoal_tl_ofi_info_t;
void shoal_tl_ofi_query(shoal_tl_ofi_info_t *out);
#endif

#endif
