/* ofi.h - the libfabric transport's state, shared by the files of this folder (issue 12; docs/design/transport.md):
 * state.c (shoal_ofi, errors, drops), msg.c (the message fallback's target side), progress.c (progress thread, watch,
 * CQs, quiet and fence), ctx.c (context endpoints), amo.c (native and the fallback's requester side), rma.c, init.c
 * (getinfo, domain, AV, memory keys, trust; the ops table). One RDM endpoint with FI_RMA, FI_ATOMIC and FI_MSG; the
 * regions given to reg registered and their keys and bases exchanged at init, so that the remote address of (space,
 * pe, off) is one add: rbase[space][pe] + off.
 *
 * Completion. Two counters: every write (put, non-fetching AMO) counts on wcntr when locally complete, every read
 * (get, fetching AMO, flush) on rcntr; blocking calls wait for their counter to reach what was issued. Remote
 * completion, for quiet: a provider's write completion may be only transmit-complete (tcp: the bytes are in the
 * socket), so quiet reads one byte back from every PE written since the last quiet: the provider's FI_ORDER_RMA_RAW
 * makes that read complete after the writes before it. Without RMA_RAW every write asks for FI_DELIVERY_COMPLETE
 * instead. Non-fetching AMOs always ask for FI_DELIVERY_COMPLETE (no read ordering between AMOs and RMA reads).
 *
 * AMOs. A type is done natively (fi_atomic, fi_fetch_atomic, fi_compare_atomic) when fi_query_atomic says yes for
 * every op the spec has on it, else every op on it goes through the message fallback: a 48-byte request that the
 * target performs with __atomic builtins and answers; a non-fetching one returns once sent, and quiet and fence wait
 * for its answer (amo.c). One route per type keeps AMOs on one object mutually atomic.
 *
 * Progress. With FI_PROGRESS_MANUAL data progress (tcp;ofi_rxm) nothing moves at a target that makes no libfabric
 * call, and a PE may be computing while peers put to it. So a thread waits on the receive CQ's fd, which also wakes
 * on the endpoint's sockets: it runs the provider's progress when bytes arrive and answers fallback AMOs, and uses
 * no CPU while the wire is idle. Every blocking call and every wait of the PE progresses the endpoint itself
 * (fi_cntr_read, fi_cq_read), and so does an issuing call once the PE's last progress call is PT_ISSUE_NS old
 * (note_issue; not on a PE with a device heap). While the PE makes progress calls, the thread stands back: it
 * sleeps, looks again after PT_HOLD_NS, doubling up to PT_HOLD_MAX_NS, and goes back to the fd once the PE has
 * stopped polling. Two threads driving one endpoint on one core (a bound PE) cost a wake-up and a lock hand-off per
 * message: 1.5-3x the latency of one on tcp loopback (docs/design/transport.md). OSSS-UCX backs its progress thread
 * off in the same spirit. */
#ifndef SHOAL_TRANSPORT_OFI_H
#define SHOAL_TRANSPORT_OFI_H
#include "comm.h"
#include "gpu.h"

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <net/if.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#define OFI_API FI_VERSION(1, 10) /* FI_HMEM and fi_mr_attr.iface */
#define ADDR_MAX 240              /* bytes of an endpoint name (sockaddr_in6: 28; verbs, cxi, efa: under 64) */
#define NRECV 1024                /* fallback AMO messages in flight towards one PE: libfabric's net provider loses a
                                     message that finds no receive posted (seen: a stranger's flood of 10,000 junk
                                     messages against 64 buffers stalled a PE's AMO 3 times in 8 runs; 0 in 10
                                     with 1024). 48 KiB; each PE has up to fb_cap non-fetching AMOs in flight and
                                     one fetching AMO per thread */
#define NWAIT 64                  /* fallback AMOs in flight from one PE */
#define RESEND_NS 200000000L      /* a fallback request unanswered this long is sent again (the target answers a */
#define RESEND_MAX_NS 1600000000L /* request it saw again from its record), doubling up to this */
#define FB_LOOK_NS 10000000L      /* waits look at the non-fetching requests in flight at most this often */
#define PT_HOLD_NS 200000L        /* the progress thread's first look again at whether the PE still polls ... */
#define PT_HOLD_MAX_NS 2000000L   /* ... doubling while it does, up to this: the longest a peer's operation waits
                                     for the thread after the PE stops polling (more often costs a bound PE 20-30%
                                     of its latency on tcp loopback: each look is a timer wake-up on its core) */
#define PT_ISSUE_NS 100000L       /* an issuing call runs a progress call when the PE's last is this old (note_issue) */

/* put_signal's remote CQ data (rma.c, progress.c): bits 63-62 the flag's space, 61-40 its offset in 8-byte cells
 * (cells in the first 32 MiB of a space: the runtime's flags are in the heap's internal area), 39-0 the low bits of
 * the value. The target rebuilds the value from its cell's: a flag grows by less than 2^39 between two signals.
 * Space SHOAL_SPACE_STAGE holds no flag: there the data says that a staged put's chunk came with its request in the
 * same write (rma.c stage_send): bits 61-40 the request's offset in the sender's slot, in 8-byte units, 39-0 the
 * sender. */
#define CQS_VAL_BITS 40
#define CQS_VAL_MASK ((1ull << CQS_VAL_BITS) - 1)
#define CQS_IDX_MAX (1ull << 22)

/* ---- AMO ops and types ---- */
enum { CLS_EXT = 1, CLS_STD = 2, CLS_BIT = 4 };
enum { K_WRITE, K_FETCH, K_CMP };
static const struct { enum fi_op op; unsigned char kind, cls; const char *name; } amo_ops[SHOAL_TL_AMO_NOPS] = {
  [SHOAL_TL_AMO_FETCH] = {FI_ATOMIC_READ, K_FETCH, CLS_EXT, "fetch"},
  [SHOAL_TL_AMO_SET] = {FI_ATOMIC_WRITE, K_WRITE, CLS_EXT, "set"},
  [SHOAL_TL_AMO_SWAP] = {FI_ATOMIC_WRITE, K_FETCH, CLS_EXT, "swap"},
  [SHOAL_TL_AMO_CSWAP] = {FI_CSWAP, K_CMP, CLS_STD, "compare_swap"},
  [SHOAL_TL_AMO_INC] = {FI_SUM, K_WRITE, CLS_STD, "inc"},
  [SHOAL_TL_AMO_FETCH_INC] = {FI_SUM, K_FETCH, CLS_STD, "fetch_inc"},
  [SHOAL_TL_AMO_ADD] = {FI_SUM, K_WRITE, CLS_STD, "add"},
  [SHOAL_TL_AMO_FETCH_ADD] = {FI_SUM, K_FETCH, CLS_STD, "fetch_add"},
  [SHOAL_TL_AMO_AND] = {FI_BAND, K_WRITE, CLS_BIT, "and"},
  [SHOAL_TL_AMO_FETCH_AND] = {FI_BAND, K_FETCH, CLS_BIT, "fetch_and"},
  [SHOAL_TL_AMO_OR] = {FI_BOR, K_WRITE, CLS_BIT, "or"},
  [SHOAL_TL_AMO_FETCH_OR] = {FI_BOR, K_FETCH, CLS_BIT, "fetch_or"},
  [SHOAL_TL_AMO_XOR] = {FI_BXOR, K_WRITE, CLS_BIT, "xor"},
  [SHOAL_TL_AMO_FETCH_XOR] = {FI_BXOR, K_FETCH, CLS_BIT, "fetch_xor"},
};
#define DT_S(T) (sizeof(T) == 4 ? FI_INT32 : FI_INT64)
#define DT_U(T) (sizeof(T) == 4 ? FI_UINT32 : FI_UINT64)
#define STD_CLS (CLS_EXT | CLS_STD)
#define BIT_CLS (CLS_EXT | CLS_STD | CLS_BIT)
static const struct { enum fi_datatype dt; unsigned char size, cls; const char *name; } amo_types[SHOAL_TL_NTYPES] = {
  [SHOAL_TL_INT] = {DT_S(int), sizeof(int), STD_CLS, "int"},
  [SHOAL_TL_LONG] = {DT_S(long), sizeof(long), STD_CLS, "long"},
  [SHOAL_TL_LONGLONG] = {DT_S(long long), sizeof(long long), STD_CLS, "long long"},
  [SHOAL_TL_UINT] = {DT_U(unsigned), sizeof(unsigned), BIT_CLS, "unsigned int"},
  [SHOAL_TL_ULONG] = {DT_U(unsigned long), sizeof(unsigned long), BIT_CLS, "unsigned long"},
  [SHOAL_TL_ULONGLONG] = {DT_U(unsigned long long), sizeof(unsigned long long), BIT_CLS, "unsigned long long"},
  [SHOAL_TL_INT32] = {FI_INT32, 4, BIT_CLS, "int32_t"},
  [SHOAL_TL_INT64] = {FI_INT64, 8, BIT_CLS, "int64_t"},
  [SHOAL_TL_UINT32] = {FI_UINT32, 4, BIT_CLS, "uint32_t"},
  [SHOAL_TL_UINT64] = {FI_UINT64, 8, BIT_CLS, "uint64_t"},
  [SHOAL_TL_SIZE] = {DT_U(size_t), sizeof(size_t), STD_CLS, "size_t"},
  [SHOAL_TL_PTRDIFF] = {DT_S(ptrdiff_t), sizeof(ptrdiff_t), STD_CLS, "ptrdiff_t"},
  [SHOAL_TL_FLOAT] = {FI_FLOAT, sizeof(float), CLS_EXT, "float"},
  [SHOAL_TL_DOUBLE] = {FI_DOUBLE, sizeof(double), CLS_EXT, "double"},
};

/* The fallback's wire format: a request (kind REQ) and its answer (kind REP, operand = old value, op = status).
 * token: the receiver's secret (each PE draws one at init and tells only the job's PEs, through the bootstrap): a
 * message whose token, length or fields are wrong is dropped and counted before anything is read or written. */
enum { MSG_REQ = 1, MSG_REP = 2, MSG_DPUT = 3, MSG_DGET = 4, MSG_REPN = 5 };
/* MSG_REPN: size (2 to REPN_MAX) answers of status op to one requester, none with a value (staged puts' copies found
 * done together: msg.c shoal_ofi_copies_reap), their ids in id, off, operand, compare. */
#define REPN_MAX 4
/* A blocking put of inject_size < n <= BOUNCE_PUT_MAX bytes is copied into its endpoint's bounce arena and returns
 * at once, as UCX's buffered copy does, rather than wait for the write's local completion (a progress round on tcp:
 * PRK transpose 2 PEs 47 us at 256 B against 41 at 128, issue 29). So is a put_signal's data (rma.c), which the
 * collectives send: their root no longer waits a round per member past inject_size. The arena is reused after a
 * wait for every write of the endpoint (quiet, or when it is full). */
#define BOUNCE_PUT_MAX ((size_t)8 << 10)
/* ... and a put_signal's data up to this: a collective's step sends one per peer and then waits for the peers' own,
 * so its wait for the write would come first (2 PEs over net on lo, staged broadcast of 16 and 32 KiB: 12.5-14.1
 * and 14.4-17.2 us per call copying up to 8 KiB, 9.3-9.5 and 11.0-11.4 up to 32 KiB, no gain at 64; session 30). */
#define BOUNCE_SIG_MAX ((size_t)32 << 10)
#define BOUNCE_BYTES ((size_t)256 << 10)

/* The staged path to device heaps of other nodes (docs/gpu.md): every PE keeps a host region (SHOAL_SPACE_STAGE,
 * registered and keyed as the others) of npes slots of stage_slot bytes; slot s at a target belongs to requester s,
 * and a requester's own slot in its own region is its bounce buffer. MSG_DPUT: "copy operand bytes from my slot to
 * your device heap at off" (with size 1-8: those bytes are in compare, no slot); MSG_DGET: "copy operand bytes from
 * your device heap at off into my slot"; a MSG_REQ on space SHOAL_SPACE_DEVICE is an AMO the target does on its
 * device heap. Each is answered as an AMO (op: status). */
#define STAGE_SLOT_MAX ((size_t)4 << 20)   /* bytes of one slot: one chunk of a staged get */
#define STAGE_INFLIGHT 16                  /* staged put chunks of a PE sent and not yet answered, at most */
#define STAGE_CHUNK_MAX ((size_t)1 << 20)  /* bytes of a put's chunk: at most this and a quarter slot, less its tag */
/* A put's chunk of len bytes at offset o of a slot is written with its tag: its request's id (amo_msg_t id) xor the
 * target's token, as 8 bytes at o + STAGE_TAG_AT(len). The target copies it only if the tag is there: a request resent while its write is
 * still on the way (another endpoint, another path) is left unanswered, never done on stale bytes. */
#define STAGE_TAG_AT(len) (((len) + 7) & ~(size_t)7)
#define STAGE_SLOT_MIN ((size_t)16 << 10)
#define STAGE_TOTAL ((size_t)16 << 20)     /* the region is at most this (or npes * STAGE_SLOT_MIN), lazily touched */
/* Bytes of one slot for a job of npes PEs: STAGE_TOTAL / npes in 4 KiB pages, within [STAGE_SLOT_MIN, _MAX]. */
static inline size_t stage_slot(int npes) {
  size_t s = STAGE_TOTAL / (size_t)(npes > 0 ? npes : 1) / 4096 * 4096;
  return s > STAGE_SLOT_MAX ? STAGE_SLOT_MAX : s < STAGE_SLOT_MIN ? STAGE_SLOT_MIN : s;
}
typedef struct amo_msg {
  uint8_t kind, op, size, space;
  int32_t pe; /* the requester */
  uint64_t off, operand, compare;
  uint64_t id; /* the requester's waiter: slot | generation << 8 */
  uint64_t token;
} amo_msg_t;
struct txep;
/* A fallback request's slot. A fetching AMO waits in it for the answer (state 2). A non-fetching one (async) returns
 * once sent: the slot keeps the request for resends and its issuing endpoint, whose fb_out the answer decrements
 * as it frees the slot (docs/design/transport.md). */
typedef struct waiter {
  _Atomic uint32_t state; /* 0 free, 3 being set up, 1 waiting, 4 being answered, 2 answered, 5 being sent again */
  _Atomic uint64_t gen; /* 56 bits travel in the id: never wraps in a job's life */
  int32_t status;
  uint64_t value;
  _Atomic bool async; /* the fields below: set before state 1 */
  int32_t pe;
  struct txep *owner;
  amo_msg_t m;
  int64_t t0, last, resend, rto; /* waiting since (stretches of waiting only), last look, next resend, its step */
  int64_t sent_ns;               /* SHOAL_OFI_STAGE_PROFILE: a staged chunk's send (its answer's time) */
} waiter_t;

/* A request of the fallback sent and not yet answered (amo.c's fb_start / fb_finish), or a staged put's chunk
 * (shoal_ofi_fb_claim / _post, then shoal_ofi_fb_answered). */
typedef struct {
  waiter_t *w;
  amo_msg_t m;
  int pe;
} shoal_ofi_fb_pending_t;

/* What one PE tells the others at init. */
typedef struct wire {
  char prov[32]; /* the provider's name: every PE must run the same one */
  uint64_t addrlen;
  uint8_t addr[ADDR_MAX];
  uint64_t key[SHOAL_SPACE_MAX], base[SHOAL_SPACE_MAX], len[SHOAL_SPACE_MAX];
  uint64_t token; /* what this PE's fallback messages must carry */
} wire_t;

typedef struct region {
  void *base;
  size_t len;
  int gpu_kind, gpu_dev;
  struct fid_mr *mr;
} region_t;

/* What one issuing endpoint keeps: the main one (shoal_ofi.t0, which also receives) and one per context made with an
 * endpoint of its own (shoal_ofi_ctx_create). Quiet and fence act on one of these: a context's operations only. */
typedef struct txep {
  struct fid_ep *ep;
  struct fid_cq *txcq;
  struct fid_cntr *wcntr, *rcntr;
  bool lock;             /* serialize callers (SHMEM_THREAD_MULTIPLE, unless the context is private) */
  bool amo_out;          /* non-fetching AMOs issued since the last quiet (delivery complete: done once counted) */
  bool wbuf_out;         /* nbi writes (not inject) issued since the last wait for the writes: their sources busy */
  bool fence_w, fence_a; /* a fence is pending over the puts (w) or the non-fetching AMOs (a) before it */
  pthread_mutex_t mu;
  _Atomic uint64_t w_issued, r_issued, w_err, r_err;
  _Atomic uint64_t w_done, r_done; /* issued counts a wait saw complete, less w_sig: a quiet with nothing new reads
                                      no counter */
  _Atomic uint64_t w_sig;          /* of w_issued, the runtime's flag writes (signal): nothing waits for them alone */
  _Atomic uint64_t cntr_waits;     /* waits that read a counter (shoal_tl_ofi_query, for tests) */
  _Atomic uint64_t fb_out; /* non-fetching fallback AMOs issued here and not answered yet (quiet and fence wait) */
  _Atomic uint32_t fb_err; /* of those, answered "refused": quiet reports it */
  _Atomic uint8_t *dirty; /* [npes]: written since the last flush */
  _Atomic bool dirty_any;
  _Atomic bool carried; /* t0: puts a two-PE barrier left fenced, not flushed (rma.c quiet_before_signal); atomic:
                           the proxy's thread looks at it when it makes its context (ctx.c) */
  char *bounce;      /* BOUNCE_BYTES (malloc'd at first use): blocking puts past inject_size copied here (rma.c) */
  size_t bounce_pos; /* bytes of it in use; free again once a wait for the writes returned (quiet, or a full one) */
  char flush_byte[SHOAL_CACHELINE];
  struct txep *prev, *next; /* context endpoints: on shoal_ofi.txs, for fini */
} txep_t;

/* SHOAL_OFI_STAGE_PROFILE: where staged put chunks' time goes, summed per PE (rma.c, msg.c; printed at fini).
 * Initiator: waiting for room in the ring or the queue, enqueueing the copy out of GPU memory (or doing it, not
 * deferred), the enqueued copy's wait until seen done, the send, send to answer. Target: enqueueing the copy into
 * the device heap, its wait until reaped, a copy done at once (the ring of pending copies full, or a get's). */
enum { SP_ROOM, SP_COPY_START, SP_COPY_SYNC, SP_COPY_WAIT, SP_SEND, SP_ANSWER, SP_T_COPY_START, SP_T_COPY, SP_T_SYNC,
       SP_N };

extern struct shoal_ofi_state {
  bool up, flush, thread_on, fallback_ok, rx_main, hmem, mt, lazy_fence;
  bool saw; /* a send is processed after the bytes of the writes before it on its endpoint, whatever their size
               (FI_ORDER_SAW, max_order_waw_size >= max_msg, one in-order stream: net or tcp by name): a fallback AMO
               after a fence follows the puts there, no quiet */
  bool bounce_ok; /* blocking puts up to BOUNCE_PUT_MAX are copied and sent from t->bounce (no FI_MR_LOCAL) */
  bool cq_signal; /* put_signal as one fi_writedata, the flag in its remote CQ data (rma.c) */
  int me, npes, wait_fd; /* wait_fd: the receive CQ's, or -1 */
  bool wait_fd_sticks;   /* the provider leaves wait_fd readable after an entry until a CQ wait reads it (progress.c) */
  region_t reg[SHOAL_SPACE_MAX];
  struct fi_info *info;
  struct fid_fabric *fabric;
  struct fid_domain *domain;
  struct fid_av *av;
  struct fid_ep *ep; /* t0.ep: receives the fallback's messages */
  struct fid_cq *rxcq;
  txep_t t0;
  _Atomic int ntx;        /* context endpoints open */
  txep_t txs;             /* their list's head (prev/next only) */
  fi_addr_t *addr;
  uint64_t *rbase[SHOAL_SPACE_MAX], *rkey[SHOAL_SPACE_MAX], *rlen[SHOAL_SPACE_MAX];
  size_t inject_size, max_msg;
  bool native[SHOAL_TL_NTYPES];
  amo_msg_t rxbuf[NRECV];
  uint64_t token, *rtoken;     /* this PE's message secret; every PE's */
  _Atomic uint64_t dropped;    /* messages refused: foreign, malformed, truncated */
  _Atomic bool dropped_said;   /* the first drop's line was printed */
  waiter_t waiters[NWAIT];
  _Atomic int fb_async;     /* slots held by non-fetching requests, all endpoints: at most fb_cap */
  int fb_cap;               /* min(NWAIT - 8, NRECV / (2 npes)), at least 1: a target's receives stay ahead */
  _Atomic int64_t fb_next_ns; /* the next look at their resends and timeouts */
  pthread_mutex_t fb_mu;    /* one looker at a time (trylock: a resend's own progress may look again) */
  /* The last request carried out for each (requester, waiter slot), and its answer: a request sent again (its
   * answer or itself lost) is answered again without being carried out twice. Under exec_mu (the PE and its
   * progress thread both handle messages). */
  struct done { uint64_t id, value; uint8_t status; } *done; /* [npes * NWAIT] */
  pthread_mutex_t exec_mu;
  /* Staged put chunks whose copy into the device heap is enqueued and not yet seen done (status PENDING in their
   * record), oldest first: answered by shoal_ofi_copies_reap once done. Under exec_mu; pend_out is pend_n for a
   * look without it. At most SHOAL_COMM_DEV_COPIES, the heap's events (with all taken, shoal_comm_dev_copy_start
   * synchronizes the stream: that copy is answered at once). */
  struct pend_copy { int pe, slot; uint64_t id; int64_t t_ns; } pend[SHOAL_COMM_DEV_COPIES];
  unsigned pend_head, pend_n;
  _Atomic unsigned pend_out;
  pthread_t thread;
  _Atomic bool stop;
  _Alignas(SHOAL_CACHELINE) _Atomic int64_t polled_ns; /* the PE's last progress call of its own (note_poll) */
  _Atomic uint64_t thread_progress, thread_holds;      /* the thread's, for shoal_tl_ofi_query */
  const shoal_tl_ops_t *self; /* &shoal_tl_ofi_ops, set by tl_init: the watch probes the PEs reached through it */
  size_t stage_slot;          /* bytes of one staging slot (stage_slot(npes)); the region is reg[SHOAL_SPACE_STAGE] */
  pthread_mutex_t stage_mu;   /* this PE's staged operations, one at a time: its bounce and its slots at targets */
  /* Staged put chunks sent (rma.c), oldest first, under stage_mu: each holds [off, off + len) of the bounce and of
   * its target's slot until answered (its request is a non-fetching one: quiet and fence wait for it). The last
   * stage_unposted are not sent yet: the device proxy's nbi puts, whose copy out of GPU memory (copy: its slot of
   * shoal_comm_dev_memcpy_start, -1 done) was only enqueued; only their endpoint's thread (stage_owner) sends them,
   * in order, and other threads' staged calls wait until there are none. */
  /* wd: the chunk's request rides in its write (stage_send); len then counts the request after the tag */
  struct stage_fly { shoal_ofi_fb_pending_t p; size_t off, len; struct txep *t; int copy; bool wd; int64_t t_ns; }
    stage_q[STAGE_INFLIGHT]; /* t_ns: SHOAL_OFI_STAGE_PROFILE, when its deferred copy was enqueued (0: none) */
  unsigned stage_head, stage_n, stage_unposted;
  _Atomic(struct txep *) stage_owner; /* the endpoint of the unposted chunks; NULL: none */
  _Atomic unsigned stage_waiters;     /* other threads' staged calls waiting for them: the owner sends all, defers none */
  _Atomic int stage_err;              /* a deferred chunk that failed (stage_err_ep's): its next quiet or fence says so */
  _Atomic(struct txep *) stage_err_ep;
  size_t stage_pos;           /* where the next chunk goes in the bounce (a ring of stage_slot bytes at most) */
  size_t stage_reach;         /* the furthest end of a chunk's place in the ring since init (bytes) */
  bool slow_dput;             /* SHOAL_TL_OFI_FORCE_SLOW_DPUT (tests): 50 ms before each staged put chunk's copy */
  bool prof;                  /* SHOAL_OFI_STAGE_PROFILE */
  _Atomic uint64_t prof_n[SP_N], prof_ns[SP_N];
  bool stage_saw;             /* the provider orders a send after a write (FI_ORDER_SAW): a chunk's request follows
                               * its write on the same endpoint without waiting for its delivery */
  _Atomic uint64_t stage_early; /* chunk requests that came before their data (tag mismatch): left unanswered */
  _Atomic uint64_t stage_msgs;  /* staged put chunks whose request went as a message of its own (not in the write) */
  _Atomic uint64_t stage_cq_reqs; /* staged put requests this PE read out of its slots at their writes' CQ data */
  _Atomic uint64_t answers_joined; /* staged puts' answers sent in MSG_REPN messages */
} shoal_ofi;

static inline int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
/* SHOAL_OFI_STAGE_PROFILE (SP_* above): since, from prof_now (0 when off), to now added to stage k. */
static inline int64_t prof_now(void) { return SHOAL_UNLIKELY(shoal_ofi.prof) ? now_ns() : 0; }
static inline void prof_add(int k, int64_t since) {
  if (SHOAL_UNLIKELY(shoal_ofi.prof) && since) {
    atomic_fetch_add_explicit(&shoal_ofi.prof_n[k], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&shoal_ofi.prof_ns[k], (uint64_t)(now_ns() - since), memory_order_relaxed);
  }
}
/* The PE's own progress calls note the time, for the thread to see that the PE polls. */
static inline void note_poll(void) { atomic_store_explicit(&shoal_ofi.polled_ns, now_ns(), memory_order_relaxed); }
static inline bool pe_polls(long within) {
  return now_ns() - atomic_load_explicit(&shoal_ofi.polled_ns, memory_order_relaxed) < within;
}
void shoal_ofi_issue_poll(void);
/* After a put, get, AMO or signal call returned from the provider (MT_ISSUE). A PE that only issues (a window of nbi
 * gets, a stream of puts or AMOs) made no progress call between its waits, so the thread went back to the fd and
 * woke at every answer to the PE's own operations, on the PE's core: 2 PEs over net, windows of 64 nbi gets took
 * 12-20 us a get in half the windows, 6-10 with the initiator's thread off. So the first call that finds the PE's
 * last progress call PT_ISSUE_NS old makes one (serving peers as a wait does, contexts' endpoints too), and the
 * thread stands back as it does for a wait. Not on a PE with a device heap (progress.c). */
static inline void note_issue(void) {
  if (shoal_ofi.thread_on && !shoal_g.space[SHOAL_SPACE_DEVICE].size && !pe_polls(PT_ISSUE_NS))
    shoal_ofi_issue_poll();
}

/* Waits for the wire back off as every wait of the runtime does (shoal_wait_backoff: at once where PEs share a CPU,
 * after 1 ms otherwise): each poll here is a progress call (a syscall on tcp, ~1 us), so a step after the first
 * poll and every WAIT_POLLS. A fixed 4096 polls before the first yield held a CPU shared by 2 PEs for 4-8 ms per
 * wait (4-PE collectives over ofi on 2 cores: 5-6 ms per 8 B alltoall, 0.8 ms with this). */
#define WAIT_POLLS 4
static inline void wait_backoff(shoal_wait_t *w, unsigned spins) {
  if (spins % WAIT_POLLS == 0) shoal_wait_backoff(w); /* the caller's polls progress */
}

#define WAIT_W(t) shoal_ofi_wait_cntr(t, (t)->wcntr, &(t)->w_issued, &(t)->w_err, &(t)->w_done, &(t)->w_sig)
#define WAIT_R(t) shoal_ofi_wait_cntr(t, (t)->rcntr, &(t)->r_issued, &(t)->r_err, &(t)->r_done, NULL)

/* Post an operation on t; -FI_EAGAIN (a full transmit queue) retries after progress, backing off as a wait. */
#define POST(t, routine, call)                                                                                         \
  do {                                                                                                                 \
    ssize_t r_;                                                                                                        \
    shoal_wait_t w_ = {0};                                                                                             \
    for (unsigned s_ = 0; (r_ = (call)) == -FI_EAGAIN; s_++) {                                                         \
      shoal_ofi_progress_once();                                                                                       \
      if ((t) != &shoal_ofi.t0) fi_cntr_read((t)->wcntr); /* a context's own endpoint: its progress */                 \
      wait_backoff(&w_, s_);                                                                                           \
    }                                                                                                                  \
    if (SHOAL_UNLIKELY(r_)) return shoal_ofi_fail(routine, r_);                                                        \
  } while (0)


static inline void mark_dirty(txep_t *t, int pe) {
  if (shoal_ofi.flush && !atomic_load_explicit(&t->dirty[pe], memory_order_relaxed)) {
    atomic_store(&t->dirty[pe], 1);
    atomic_store(&t->dirty_any, true);
  }
}

/* SHMEM_THREAD_MULTIPLE: one thread at a time issues and waits on an endpoint (t->lock; a private context's is
 * its thread's alone). The counters count every thread's operations, so "every operation issued so far is
 * complete" is a wait for this thread's own only while no other thread issues on that endpoint. */
#define MT_THEN(t, call, after)                                                                                        \
  do {                                                                                                                 \
    shoal_status_t rc_;                                                                                                \
    if (SHOAL_LIKELY(!(t)->lock)) {                                                                                    \
      rc_ = call;                                                                                                      \
    } else {                                                                                                           \
      pthread_mutex_lock(&(t)->mu);                                                                                    \
      rc_ = call;                                                                                                      \
      pthread_mutex_unlock(&(t)->mu);                                                                                  \
    }                                                                                                                  \
    after;                                                                                                             \
    return rc_;                                                                                                        \
  } while (0)
#define MT(t, call) MT_THEN(t, call, (void)0)
/* MT, then note_issue (ofi.h) with t's lock released and the call's counts done */
#define MT_ISSUE(t, call) MT_THEN(t, call, note_issue())

/* ---- between the files of this folder (each documented where it is defined) ----
 * Bottom up, each file calling only those before it: state.c, msg.c, progress.c, ctx.c, amo.c, rma.c, init.c. */
/* state.c */
extern pthread_mutex_t shoal_ofi_txs_mu;
shoal_status_t shoal_ofi_fail(const char *routine, ssize_t ret);
shoal_status_t shoal_ofi_report_cq_error(struct fid_cq *cq);
shoal_status_t shoal_ofi_bad_call(const char *routine, int space, int pe, size_t off, size_t n);
void shoal_ofi_close_fid(void *fidp);
void shoal_ofi_drop(const char *why, size_t len);
ssize_t shoal_ofi_post_recv(amo_msg_t *buf);
/* msg.c */
ssize_t shoal_ofi_send_msg(const amo_msg_t *m, int pe);
void shoal_ofi_handle_msg(const amo_msg_t *m, size_t len);
/* A staged put's chunk whose request came in its write (CQ data of space SHOAL_SPACE_STAGE, ofi.h CQS_*): the request
 * read from the sender's slot at off, checked as a message is, then handled as one. */
void shoal_ofi_stage_req(uint64_t from, size_t off);
/* Answer the staged put chunks whose copy into the device heap finished (msg.c). Cheap when none is pending. */
void shoal_ofi_copies_reap(void);
/* progress.c */
void shoal_ofi_rx_poll(void);
int64_t shoal_ofi_watch_timeout_ns(void);
void shoal_ofi_watch(void);
shoal_status_t shoal_ofi_watch_init(void);
void shoal_ofi_watch_fini(void);
void shoal_ofi_tx_progress_all(void);
void *shoal_ofi_progress_main(void *arg);
void shoal_ofi_fb_tend(bool force);
void shoal_ofi_progress_once(void);
shoal_status_t shoal_ofi_wait_cntr(txep_t *t, struct fid_cntr *c, _Atomic uint64_t *issued, _Atomic uint64_t *errs,
                                   _Atomic uint64_t *done, _Atomic uint64_t *sigs);
shoal_status_t shoal_ofi_flush_post(txep_t *t);
shoal_status_t shoal_ofi_quiet_common(txep_t *t);
shoal_status_t shoal_ofi_fence_before(txep_t *t, bool amo, bool fallback);
shoal_status_t shoal_ofi_quiet(void *ep);
void shoal_ofi_progress(void);
shoal_status_t shoal_ofi_fb_drain(txep_t *t);
/* One poll of a wait for fallback answers (spins: polls so far): the answers, the watch and resends every
 * WAIT_POLLS polls, then the wait's back-off. */
void shoal_ofi_fb_step(shoal_wait_t *ws, unsigned spins);
shoal_status_t shoal_ofi_fence_common(txep_t *t);
shoal_status_t shoal_ofi_fence(void *ep);
/* ctx.c */
void shoal_ofi_tx_close(txep_t *t);
shoal_status_t shoal_ofi_ctx_create(bool shared, void **out);
void shoal_ofi_ctx_destroy(void *h);
/* amo.c */
/* A request of the message fallback (kind MSG_REQ: an AMO; MSG_DPUT, MSG_DGET: a staged copy of v bytes) to pe, and
 * its answer: a non-fetching AMO returns once sent (quiet and fence wait for it), the others wait for the answer
 * (fetch: the old value's size bytes). */
shoal_status_t shoal_ofi_helpers_to(const cpu_set_t *cpus, int *moved);
/* A request sent as a non-fetching one (answered in the background; t's quiet and fence wait for it, fb_out) in two
 * steps: claim its slot (p->m.id known: a staged put's chunk carries it), then post it from ep (the main endpoint or
 * t's) or unclaim it. *p stays for shoal_ofi_fb_answered: the chunk's place is reused once it is answered. */
shoal_status_t shoal_ofi_fb_claim(int kind, int space, int pe, size_t off, size_t size, uint64_t v, uint64_t c,
                                  shoal_ofi_fb_pending_t *p);
shoal_status_t shoal_ofi_fb_post(txep_t *t, shoal_ofi_fb_pending_t *p, struct fid_ep *ep);
/* As shoal_ofi_fb_post, but the request is in the bytes of one write from t's endpoint (len bytes at buf to raddr of
 * the region keyed key at p's PE, with remote CQ data data), which the target reads it from: one send, not two. */
shoal_status_t shoal_ofi_fb_post_write(txep_t *t, shoal_ofi_fb_pending_t *p, const void *buf, size_t len, uint64_t raddr,
                                       uint64_t key, uint64_t data);
void shoal_ofi_fb_unclaim(shoal_ofi_fb_pending_t *p);
/* p's request (shoal_ofi_fb_post) has its answer: its waiter was freed since (and maybe taken again). */
static inline bool shoal_ofi_fb_answered(const shoal_ofi_fb_pending_t *p) {
  return atomic_load_explicit(&p->w->state, memory_order_acquire) == 0 ||
         atomic_load_explicit(&p->w->gen, memory_order_acquire) != p->m.id >> 8;
}
shoal_status_t shoal_ofi_fb_request(txep_t *t, int kind, int space, int pe, size_t off, int op, size_t size, uint64_t v,
                                    uint64_t c, void *fetch);
shoal_status_t shoal_ofi_amo_common(txep_t *t, int space, int pe, size_t off, int op, int type, const void *operand,
                                    const void *compare, void *fetch);
shoal_status_t shoal_ofi_amo(void *ep, int space, int pe, size_t off, int op, int type, const void *operand,
                             const void *compare, void *fetch);
/* rma.c */
shoal_status_t shoal_ofi_put(void *h, int space, int pe, size_t off, const void *src, size_t n, bool nbi);
shoal_status_t shoal_ofi_get(void *h, int space, int pe, size_t off, void *dst, size_t n, bool nbi);
shoal_status_t shoal_ofi_signal(int space, int pe, size_t off, uint64_t v);
shoal_status_t shoal_ofi_dev_put(void *h, int pe, size_t off, const void *src, size_t n);
shoal_status_t shoal_ofi_dev_put_nbi(void *h, int pe, size_t off, const void *src, size_t n);
int shoal_ofi_dev_pending(void *h);
/* quiet and fence of the ops table: the deferred staged chunks of ep's thread sent first (rma.c), then as
 * shoal_ofi_quiet / shoal_ofi_fence. */
shoal_status_t shoal_ofi_quiet_staged(void *ep);
shoal_status_t shoal_ofi_quiet_before_signal(int pe);
shoal_status_t shoal_ofi_fence_staged(void *ep);
shoal_status_t shoal_ofi_dev_get(void *h, int pe, size_t off, void *dst, size_t n);
shoal_status_t shoal_ofi_dev_amo(void *h, int pe, size_t off, int op, size_t size, uint64_t v, uint64_t c,
                                 uint64_t *old);
shoal_status_t shoal_ofi_put_signal(int space, int pe, size_t off, const void *src, size_t n, int fspace, size_t foff,
                                    uint64_t v);

#endif
