/* transport_ofi.c - the libfabric transport (issue 12; docs/design/transport.md): one RDM endpoint with FI_RMA,
 * FI_ATOMIC and FI_MSG; the regions given to reg registered and their keys and bases exchanged at init, so that the
 * remote address of (space, pe, off) is one add: rbase[space][pe] + off.
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
 * target performs with __atomic builtins and answers. One route per type keeps AMOs on one object mutually atomic.
 *
 * Progress. With FI_PROGRESS_MANUAL data progress (tcp;ofi_rxm) nothing moves at a target that makes no libfabric
 * call, and a PE may be computing while peers put to it. So a thread waits on the receive CQ's fd, which also wakes
 * on the endpoint's sockets: it runs the provider's progress when bytes arrive and answers fallback AMOs, and uses
 * no CPU while the wire is idle. Every blocking call and every wait of the PE progresses the endpoint itself
 * (fi_cntr_read, fi_cq_read), and while the PE does, the thread stands back: it sleeps, looks again after
 * PT_HOLD_NS, doubling up to PT_HOLD_MAX_NS, and goes back to the fd once the PE has stopped polling. Two threads
 * driving one endpoint on one core (a bound PE) cost a wake-up and a lock hand-off per message: 1.5-3x the latency
 * of one on tcp loopback (docs/design/transport.md). OSSS-UCX backs its progress thread off in the same spirit. */
#include "transport.h"
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
                                     with 1024). 48 KiB; each PE has one blocking AMO in flight per thread */
#define NWAIT 64                  /* fallback AMOs in flight from one PE (one per thread) */
#define RESEND_NS 200000000L      /* a fallback request unanswered this long is sent again (the target answers a */
#define RESEND_MAX_NS 1600000000L /* request it saw again from its record), doubling up to this */
#define PT_HOLD_NS 200000L        /* the progress thread's first look again at whether the PE still polls ... */
#define PT_HOLD_MAX_NS 2000000L   /* ... doubling while it does, up to this: the longest a peer's operation waits
                                     for the thread after the PE stops polling (more often costs a bound PE 20-30%
                                     of its latency on tcp loopback: each look is a timer wake-up on its core) */

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
enum { MSG_REQ = 1, MSG_REP = 2 };
typedef struct amo_msg {
  uint8_t kind, op, size, space;
  int32_t pe; /* the requester */
  uint64_t off, operand, compare;
  uint64_t id; /* the requester's waiter: slot | generation << 8 */
  uint64_t token;
} amo_msg_t;
typedef struct waiter {
  _Atomic uint32_t state; /* 0 free, 3 being set up, 1 waiting, 4 being answered, 2 answered */
  _Atomic uint64_t gen; /* 56 bits travel in the id: never wraps in a job's life */
  int32_t status;
  uint64_t value;
} waiter_t;

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

/* What one issuing endpoint keeps: the main one (ofi.t0, which also receives) and one per context made with an
 * endpoint of its own (tl_ctx_create). Quiet and fence act on one of these: a context's operations only. */
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
  _Atomic uint8_t *dirty; /* [npes]: written since the last flush */
  _Atomic bool dirty_any;
  char flush_byte[SHOAL_CACHELINE];
  struct txep *prev, *next; /* context endpoints: on ofi.txs, for fini */
} txep_t;

static struct {
  bool up, flush, thread_on, fallback_ok, rx_main, hmem, mt, lazy_fence;
  int me, npes, wait_fd; /* wait_fd: the receive CQ's, or -1 */
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
  /* The last request carried out for each (requester, waiter slot), and its answer: a request sent again (its
   * answer or itself lost) is answered again without being carried out twice. Under exec_mu (the PE and its
   * progress thread both handle messages). */
  struct done { uint64_t id, value; uint8_t status; } *done; /* [npes * NWAIT] */
  pthread_mutex_t exec_mu;
  pthread_t thread;
  _Atomic bool stop;
  _Alignas(SHOAL_CACHELINE) _Atomic int64_t polled_ns; /* the PE's last progress call of its own (note_poll) */
  _Atomic uint64_t thread_progress, thread_holds;      /* the thread's, for shoal_tl_ofi_query */
} ofi;
static unsigned force_flags;
static void tx_progress_all(void);
static void close_fid(void *fidp);

/* ---- errors: one line naming the routine ---- */
static shoal_status_t fail(const char *routine, ssize_t ret) {
  shoal_warn("%s: %s", routine, fi_strerror((int)-ret));
  return SHOAL_ERR_IO;
}

/* An error completion: its libfabric reason and the provider's (fi_cq_strerror), with the routine it came from. */
static shoal_status_t report_cq_error(struct fid_cq *cq) {
  struct fi_cq_err_entry e = {0};
  char buf[256] = "";
  if (fi_cq_readerr(cq, &e, 0) < 1) {
    shoal_warn("fi_cntr_readerr: an operation failed (no error entry)");
    return SHOAL_ERR_IO;
  }
  const char *routine = e.flags & FI_ATOMIC ? "fi_atomic" : e.flags & FI_READ ? "fi_read"
                        : e.flags & FI_WRITE ? "fi_write" : e.flags & FI_RECV ? "fi_recv" : "fi_send";
  const char *prov = fi_cq_strerror(cq, e.prov_errno, e.err_data, buf, sizeof buf);
  shoal_warn("%s: %s%s%s", routine, fi_strerror(e.err), prov && *prov ? ": " : "", prov ? prov : "");
  return SHOAL_ERR_IO;
}

/* ---- the fallback AMO: the target's part ---- */
#define AMO_EXEC(T)                                                                                                   \
  static uint64_t exec_##T(T *p, int op, T v, T c) {                                                                   \
    switch (op) {                                                                                                      \
    case SHOAL_TL_AMO_FETCH: return __atomic_load_n(p, __ATOMIC_SEQ_CST);                                              \
    case SHOAL_TL_AMO_SET: __atomic_store_n(p, v, __ATOMIC_SEQ_CST); return 0;                                         \
    case SHOAL_TL_AMO_SWAP: return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST);                                        \
    case SHOAL_TL_AMO_CSWAP: __atomic_compare_exchange_n(p, &c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);         \
      return c;                                                                                                        \
    case SHOAL_TL_AMO_INC: case SHOAL_TL_AMO_FETCH_INC: return __atomic_fetch_add(p, 1, __ATOMIC_SEQ_CST);             \
    case SHOAL_TL_AMO_ADD: case SHOAL_TL_AMO_FETCH_ADD: return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);             \
    case SHOAL_TL_AMO_AND: case SHOAL_TL_AMO_FETCH_AND: return __atomic_fetch_and(p, v, __ATOMIC_SEQ_CST);             \
    case SHOAL_TL_AMO_OR: case SHOAL_TL_AMO_FETCH_OR: return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST);                \
    default: return __atomic_fetch_xor(p, v, __ATOMIC_SEQ_CST);                                                        \
    }                                                                                                                  \
  }
AMO_EXEC(uint32_t)
AMO_EXEC(uint64_t)

/* Sends from inside progress: retry with progress of the transmit side only (never the receive CQ: no recursion). */
static ssize_t send_msg(const amo_msg_t *m, int pe) {
  ssize_t r;
  while ((r = fi_inject(ofi.ep, m, sizeof *m, ofi.addr[pe])) == -FI_EAGAIN) fi_cntr_read(ofi.t0.wcntr);
  return r;
}

/* A message that is not one of the job's (wrong token, length or fields) or a receive that failed: counted, the
 * first one said in a line, and nothing else done (the caller reposts the buffer). */
static void drop(const char *why, size_t len) {
  atomic_fetch_add_explicit(&ofi.dropped, 1, memory_order_relaxed);
  if (!atomic_exchange(&ofi.dropped_said, true))
    shoal_warn("ofi: dropped a message of %zu bytes (%s): not from this job, or malformed; later ones are dropped "
               "and counted without a line (SHMEM_DEBUG=1 prints the count at finalize)", len, why);
}

static void handle_msg(const amo_msg_t *m, size_t len) {
  const char *bad = len != sizeof *m ? "wrong length" : m->token != ofi.token ? "wrong token"
                    : m->kind != MSG_REQ && m->kind != MSG_REP ? "unknown kind"
                    : m->kind == MSG_REQ && (m->pe < 0 || m->pe >= ofi.npes) ? "no such sender" : NULL;
  if (bad) {
    drop(bad, len);
    return;
  }
  if (m->kind == MSG_REQ) {
    amo_msg_t rep = {.kind = MSG_REP, .id = m->id, .token = ofi.rtoken[m->pe]};
    const region_t *r = m->space < SHOAL_SPACE_MAX ? &ofi.reg[m->space] : NULL;
    if ((m->id & 0xff) >= NWAIT) {
      drop("no such waiter", len);
      return;
    }
    struct done *d = &ofi.done[(size_t)m->pe * NWAIT + (m->id & 0xff)];
    pthread_mutex_lock(&ofi.exec_mu);
    int64_t age = (int64_t)((m->id >> 8) - (d->id >> 8)); /* under the lock: the other thread may handle a repeat */
    if (age < 0) { /* an older request sent again: its requester has its answer already */
      pthread_mutex_unlock(&ofi.exec_mu);
      return;
    }
    if (age == 0 && d->id == m->id) { /* sent again: the same answer, not done twice */
      rep.operand = d->value, rep.op = d->status;
    } else if (!r || !r->mr || r->gpu_kind || (m->size != 4 && m->size != 8) || m->op >= SHOAL_TL_AMO_NOPS ||
               m->off > r->len || m->size > r->len - m->off || m->off % m->size) {
      rep.op = 1; /* refused */
    } else {
      void *p = (char *)r->base + m->off;
      rep.operand = m->size == 4 ? exec_uint32_t(p, m->op, (uint32_t)m->operand, (uint32_t)m->compare)
                                 : exec_uint64_t(p, m->op, m->operand, m->compare);
    }
    d->id = m->id, d->value = rep.operand, d->status = rep.op;
    pthread_mutex_unlock(&ofi.exec_mu);
    ssize_t e = send_msg(&rep, m->pe);
    if (e) fail("fi_inject", e);
  } else if (m->kind == MSG_REP) {
    unsigned slot = (unsigned)(m->id & 0xff);
    if (slot >= NWAIT) return;
    waiter_t *w = &ofi.waiters[slot];
    /* A request sent again can be answered twice, and the PE or its progress thread may take either answer: claim
     * the slot (1 -> 4) and check its generation after the claim, so that a late answer never fills the slot's
     * next request. */
    uint32_t waiting = 1;
    if (!atomic_compare_exchange_strong(&w->state, &waiting, 4)) return;
    if (atomic_load(&w->gen) != m->id >> 8) {
      atomic_store_explicit(&w->state, 1, memory_order_release);
      return;
    }
    w->value = m->operand;
    w->status = m->op ? SHOAL_ERR_INVAL : SHOAL_OK;
    atomic_store_explicit(&w->state, 2, memory_order_release);
  }
}

static ssize_t post_recv(amo_msg_t *buf) {
  ssize_t r;
  while ((r = fi_recv(ofi.ep, buf, sizeof *buf, NULL, FI_ADDR_UNSPEC, buf)) == -FI_EAGAIN) fi_cntr_read(ofi.t0.wcntr);
  return r;
}

/* Entries of the receive CQ: fallback requests and answers. Every buffer goes back to the endpoint whatever it
 * held (cleared first, so that a short message cannot replay the bytes of an earlier one). */
static void rx_handle(struct fi_cq_msg_entry *e, ssize_t n) {
  for (ssize_t i = 0; i < n; i++) {
    amo_msg_t *buf = e[i].op_context, m;
    if (buf < ofi.rxbuf || buf >= ofi.rxbuf + NRECV) continue;
    m = *buf;
    memset(buf, 0, sizeof *buf);
    ssize_t r = post_recv(buf);
    if (r) fail("fi_recv", r);
    handle_msg(&m, e[i].len);
  }
}

/* An error entry of the receive CQ: a message longer than a buffer (FI_ETRUNC), or one the provider could not take.
 * The buffer is posted again and the message dropped: a stranger's junk never costs the job a receive. */
static void rx_error(void) {
  struct fi_cq_err_entry e = {0};
  if (fi_cq_readerr(ofi.rxcq, &e, 0) < 1) return;
  amo_msg_t *buf = e.op_context;
  if (e.err == FI_ECANCELED) return; /* fini closing the endpoint */
  if (buf >= ofi.rxbuf && buf < ofi.rxbuf + NRECV) {
    memset(buf, 0, sizeof *buf);
    ssize_t r = post_recv(buf);
    if (r) fail("fi_recv", r);
  }
  drop(fi_strerror(e.err), e.olen ? e.len + e.olen : e.len);
}

static void rx_poll(void) {
  struct fi_cq_msg_entry e[8];
  ssize_t n = fi_cq_read(ofi.rxcq, e, 8);
  if (n > 0)
    rx_handle(e, n);
  else if (n == -FI_EAVAIL)
    rx_error();
}

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
/* The PE's own progress calls note the time, for the thread to see that the PE polls. */
static inline void note_poll(void) { atomic_store_explicit(&ofi.polled_ns, now_ns(), memory_order_relaxed); }
static bool pe_polls(long within) {
  return now_ns() - atomic_load_explicit(&ofi.polled_ns, memory_order_relaxed) < within;
}

/* ---- the watch: a peer that stops answering ends the job (SHOAL_OFI_TIMEOUT, docs/design/trust.md) ----
 * A PE that waits on the wire (a blocking call, or a wait on its own memory: a barrier, shmem_wait_until) reads one
 * byte of every PE it reaches through this transport, at most once every timeout/4, on an endpoint of the watch's
 * own (opened at the first round, so that its completions say which peer answered). A round that a peer leaves
 * unanswered for the timeout, while this PE kept waiting, ends the job with one line naming the peer: nothing
 * else notices a link that went down or a PE that was stopped (the provider's TCP retries take a quarter of an hour,
 * and a flag that never arrives is just a wait). A PE that stops waiting for a quarter of the timeout starts the
 * round's clock again when it waits next: a round is judged on a stretch of waiting only. Costs a clock read per poll of a wait, one read per peer every timeout/4 while waiting. */
static struct {
  pthread_mutex_t mu;
  int64_t timeout_ns, next_ns, last_ns, round_ns, done_ns;
  int out;              /* probes of the round not answered yet; -1: the watch is off (no endpoint) */
  uint8_t *pending;     /* [npes] */
  struct fi_context *ctx; /* [npes]: a probe's context names its peer */
  struct fid_ep *ep;
  struct fid_cq *cq;
  char byte[SHOAL_CACHELINE];
  /* Receives on the watch's endpoint. No PE of the job sends there, but it listens as every endpoint does and a
   * stranger can: net with no receive posted on one endpoint held back the job's own messages under a flood
   * (ofiattack-net-netns-np3 lost a fallback request for good in 3 of 21 runs; 0 of 12 without this endpoint). Each
   * look of the watch drains them, drops what came and posts them again. */
  amo_msg_t rx[64];
} wt = {.mu = PTHREAD_MUTEX_INITIALIZER};
#define WT_NRX (sizeof wt.rx / sizeof wt.rx[0])

static bool watch_rx(void *ctx) { return ctx >= (void *)wt.rx && ctx < (void *)(wt.rx + WT_NRX); }
static void watch_repost(amo_msg_t *b) {
  memset(b, 0, sizeof *b);
  fi_recv(wt.ep, b, sizeof *b, NULL, FI_ADDR_UNSPEC, b); /* -FI_EAGAIN: one buffer fewer, until the next */
}

static void watch_fatal(int pe, const char *cause) {
  signal(SIGALRM, SIG_DFL);
  alarm(10); /* an abort that cannot reach the launcher (the link is down) must not keep this PE alive */
  shoal_fatal("ofi", "PE %d did not answer for %.1f s (%s; SHOAL_OFI_TIMEOUT=%lld): ending the job", pe,
              (double)(now_ns() - wt.round_ns) / 1e9, cause, (long long)(wt.timeout_ns / 1000000000));
}

static int watch_open(void) {
  struct fi_cq_attr a = {.format = FI_CQ_FORMAT_CONTEXT, .wait_obj = FI_WAIT_NONE};
  int ret;
  if ((ret = fi_cq_open(ofi.domain, &a, &wt.cq, NULL)) || (ret = fi_endpoint(ofi.domain, ofi.info, &wt.ep, NULL)) ||
      (ret = fi_ep_bind(wt.ep, &ofi.av->fid, 0)) || (ret = fi_ep_bind(wt.ep, &wt.cq->fid, FI_TRANSMIT | FI_RECV)) ||
      (ret = fi_enable(wt.ep))) {
    shoal_warn("ofi: the watch's endpoint: %s: a peer that stops answering is not noticed", fi_strerror(-ret));
    return -1;
  }
  for (size_t i = 0; i < WT_NRX; i++) watch_repost(&wt.rx[i]);
  return 0;
}

static bool watched(int p) { return p != ofi.me && shoal_g.tl_of && shoal_g.tl_of[p] == &shoal_tl_ofi_ops; }

/* pending[p]: 1 a probe to post (a full transmit queue, as towards a link that is down, is tried again at the
 * next look and counts as unanswered meanwhile), 2 posted. */
static void watch_post(void) {
  for (int p = 0; p < ofi.npes; p++) {
    if (wt.pending[p] != 1) continue;
    int s = 0;
    while (s < SHOAL_SPACE_MAX && !ofi.rlen[s][p]) s++;
    ssize_t r = fi_read(wt.ep, &wt.byte[p % SHOAL_CACHELINE], 1, NULL, ofi.addr[p], ofi.rbase[s][p], ofi.rkey[s][p],
                        &wt.ctx[p]);
    if (r == -FI_EAGAIN) break;
    if (r) watch_fatal(p, fi_strerror((int)-r));
    wt.pending[p] = 2;
  }
}

/* The next WATCH_PEERS far PEs in ring order, not all of them: each probe keeps a connection of the watch's own
 * open, and a stopped PE has watchers on every side (the PEs before it), one of which waits soon enough in a job
 * that cannot go on without it. */
#define WATCH_PEERS 8
static void watch_round(int64_t now) {
  for (int q = 1, n = 0; q < ofi.npes && n < WATCH_PEERS; q++) {
    int p = (ofi.me + q) % ofi.npes, s = 0;
    while (s < SHOAL_SPACE_MAX && !ofi.rlen[s][p]) s++;
    if (watched(p) && s < SHOAL_SPACE_MAX) wt.pending[p] = 1, wt.out++, n++;
  }
  wt.round_ns = now;
  watch_post();
}

static void watch_drain(void) {
  struct fi_cq_entry e[16];
  ssize_t n;
  while ((n = fi_cq_read(wt.cq, e, 16)) > 0)
    for (ssize_t i = 0; i < n; i++) {
      if (watch_rx(e[i].op_context)) {
        drop("sent to the watch's endpoint", 0);
        watch_repost(e[i].op_context);
        continue;
      }
      int p = (int)((struct fi_context *)e[i].op_context - wt.ctx);
      if (p >= 0 && p < ofi.npes && wt.pending[p] == 2) wt.pending[p] = 0, wt.out--;
    }
  if (n == -FI_EAVAIL) {
    struct fi_cq_err_entry err = {0};
    if (fi_cq_readerr(wt.cq, &err, 0) == 1) {
      if (watch_rx(err.op_context)) { /* a stranger's junk (too long, say): dropped, the buffer posted again */
        drop(fi_strerror(err.err), err.len + err.olen);
        if (err.err != FI_ECANCELED) watch_repost(err.op_context);
        return;
      }
      int p = (int)((struct fi_context *)err.op_context - wt.ctx);
      if (p >= 0 && p < ofi.npes) watch_fatal(p, fi_strerror(err.err)); /* refused, reset: gone */
    }
  }
}

/* Called by every poll of a wait on the wire; cheap until the next look is due. */
static void watch(void) {
  if (SHOAL_LIKELY(!wt.timeout_ns)) return;
  int64_t now = now_ns();
  if (SHOAL_LIKELY(now < wt.next_ns) || pthread_mutex_trylock(&wt.mu)) return;
  int64_t quarter = wt.timeout_ns / 4, step = quarter < 50000000 ? quarter : 50000000;
  /* Not waiting for a while (a quarter: a loaded node may keep a waiting PE off its CPU for tenths of a second): the
   * answers may wait for this PE's own progress, so the round starts over from now. */
  if (now - wt.last_ns > quarter) wt.round_ns = now;
  wt.last_ns = now;
  wt.next_ns = now + step;
  if (wt.out < 0 || (!wt.ep && watch_open())) {
    wt.out = -1, wt.timeout_ns = 0;
  } else {
    if (wt.out) watch_post();
    watch_drain(); /* probes' answers, and what strangers sent to this endpoint */
    if (wt.out && now - wt.round_ns > wt.timeout_ns) {
      int p = 0;
      while (p < ofi.npes && !wt.pending[p]) p++;
      watch_fatal(p, "link down, or the PE is stopped or gone");
    }
    if (!wt.out && now - wt.round_ns >= quarter) watch_round(now);
  }
  pthread_mutex_unlock(&wt.mu);
}

static shoal_status_t watch_init(void) {
  long t = shoal_env.ofi_timeout;
  wt.pending = calloc((size_t)ofi.npes, 1);
  wt.ctx = calloc((size_t)ofi.npes, sizeof *wt.ctx);
  if (!wt.pending || !wt.ctx) return SHOAL_ERR_NOMEM;
  wt.out = 0;
  wt.timeout_ns = t > 0 ? (int64_t)t * 1000000000 : 0;
  wt.next_ns = wt.last_ns = wt.round_ns = now_ns();
  return SHOAL_OK;
}

static void watch_fini(void) {
  close_fid(&wt.ep);
  close_fid(&wt.cq);
  free(wt.pending);
  free(wt.ctx);
  wt.pending = NULL, wt.ctx = NULL;
  wt.timeout_ns = 0, wt.out = 0;
}

/* While the PE polls the endpoint itself (it did within PT_HOLD_NS: a fixed window, so that a PE making only short
 * calls now and then does not keep the thread away), the thread sleeps a hold and looks again; otherwise it waits
 * on the sockets. It polls the CQ's fd itself: fi_cq_sread would run the provider's progress at every byte that
 * arrives, whoever else polls, until a receive completes. A provider whose CQ has no fd, or whose fabric cannot
 * fi_trywait, gets fi_cq_sread with a timeout of a millisecond instead. */
static void *progress_main(void *arg) {
  struct fi_cq_msg_entry e[8];
  struct fid *cq = &ofi.rxcq->fid;
  long hold = PT_HOLD_NS;
  int fd = ofi.wait_fd;
  (void)arg;
  while (!atomic_load(&ofi.stop)) {
    if (pe_polls(PT_HOLD_NS)) {
      struct timespec ts = {0, hold};
      nanosleep(&ts, NULL);
      atomic_fetch_add_explicit(&ofi.thread_holds, 1, memory_order_relaxed);
      hold = hold * 2 < PT_HOLD_MAX_NS ? hold * 2 : PT_HOLD_MAX_NS;
      continue;
    }
    hold = PT_HOLD_NS;
    atomic_fetch_add_explicit(&ofi.thread_progress, 1, memory_order_relaxed);
    if (atomic_load_explicit(&ofi.ntx, memory_order_relaxed)) tx_progress_all(); /* contexts' endpoints too */
    ssize_t n;
    if (fd >= 0) {
      n = fi_cq_read(ofi.rxcq, e, 8); /* the provider's progress, once */
      int tw = n == -FI_EAGAIN ? fi_trywait(ofi.fabric, &cq, 1) : -FI_EAGAIN;
      if (tw == FI_SUCCESS && !atomic_load(&ofi.stop)) { /* stop again: trywait may have eaten fini's signal */
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        poll(&pfd, 1, 1000); /* fini signals the CQ; the timeout is only a second look at stop */
        continue;            /* bytes came: the PE may be polling for them itself */
      }
      if (tw != FI_SUCCESS && tw != -FI_EAGAIN) fd = -1; /* no trywait here: never spin, use fi_cq_sread */
    } else {
      n = fi_cq_sread(ofi.rxcq, e, 8, NULL, PT_HOLD_NS / 1000000 + 1);
    }
    if (n > 0)
      rx_handle(e, n);
    else if (n == -FI_EAVAIL && !atomic_load(&ofi.stop))
      rx_error();
  }
  return NULL;
}

/* ---- waiting ---- */
/* While a call waits for the wire: the counters' reads run the provider's progress; where fallback AMOs can come,
 * this PE also answers their requests here (two PEs may wait for each other's answer, and the thread stands back
 * while the PE polls). */
static void progress_once(void) {
  watch();
  if (ofi.thread_on) note_poll();
  if (ofi.rx_main) rx_poll(); /* fi_cq_read runs the provider's progress too */
  else fi_cntr_read(ofi.t0.wcntr);
}

/* Waits for the wire back off as every wait of the runtime does (shoal_wait_backoff: at once where PEs share a CPU,
 * after 1 ms otherwise): each poll here is a progress call (a syscall on tcp, ~1 us), so a step after the first
 * poll and every WAIT_POLLS. A fixed 4096 polls before the first yield held a CPU shared by 2 PEs for 4-8 ms per
 * wait (4-PE collectives over ofi on 2 cores: 5-6 ms per 8 B alltoall, 0.8 ms with this). */
#define WAIT_POLLS 4
static inline void wait_backoff(shoal_wait_t *w, unsigned spins) {
  if (spins % WAIT_POLLS == 0) shoal_wait_backoff(w); /* the caller's polls progress */
}

/* Until every operation counted on c (issued: how many) completed; an operation that failed is reported once. */
static shoal_status_t wait_cntr(txep_t *t, struct fid_cntr *c, _Atomic uint64_t *issued, _Atomic uint64_t *errs) {
  uint64_t want = atomic_load(issued);
  shoal_status_t rc = SHOAL_OK;
  shoal_wait_t w = {0};
  for (unsigned spins = 0;; spins++) {
    uint64_t ok = fi_cntr_read(c), bad = fi_cntr_readerr(c), seen = atomic_load(errs);
    if (bad > seen && atomic_compare_exchange_strong(errs, &seen, bad)) rc = report_cq_error(t->txcq);
    if (ok + bad >= want) return rc;
    if (ofi.thread_on) note_poll();
    if (spins % WAIT_POLLS == 0) {
      watch();
      if (ofi.rx_main) rx_poll(); /* answers to peers: a second progress call */
      else if (t != &ofi.t0) fi_cntr_read(ofi.t0.wcntr); /* peers' RMA on this PE: the thread stands back */
    }
    wait_backoff(&w, spins);
  }
}
#define WAIT_W(t) wait_cntr(t, (t)->wcntr, &(t)->w_issued, &(t)->w_err)
#define WAIT_R(t) wait_cntr(t, (t)->rcntr, &(t)->r_issued, &(t)->r_err)

/* Post an operation on t; -FI_EAGAIN (a full transmit queue) retries after progress, backing off as a wait. */
#define POST(t, routine, call)                                                                                         \
  do {                                                                                                                 \
    ssize_t r_;                                                                                                        \
    shoal_wait_t w_ = {0};                                                                                             \
    for (unsigned s_ = 0; (r_ = (call)) == -FI_EAGAIN; s_++) {                                                         \
      progress_once();                                                                                                 \
      if ((t) != &ofi.t0) fi_cntr_read((t)->wcntr); /* a context's own endpoint: its progress */                     \
      wait_backoff(&w_, s_);                                                                                           \
    }                                                                                                                  \
    if (SHOAL_UNLIKELY(r_)) return fail(routine, r_);                                                                 \
  } while (0)

static inline bool bad_target(int space, int pe, size_t off, size_t n) {
  return SHOAL_UNLIKELY((unsigned)space >= SHOAL_SPACE_MAX || (unsigned)pe >= (unsigned)ofi.npes || !ofi.up ||
                        off > ofi.rlen[space][pe] || n > ofi.rlen[space][pe] - off);
}
static shoal_status_t bad_call(const char *routine, int space, int pe, size_t off, size_t n) {
  if (!ofi.up) shoal_warn("%s: the ofi transport is not initialized", routine);
  else if ((unsigned)space >= SHOAL_SPACE_MAX || (unsigned)pe >= (unsigned)ofi.npes)
    shoal_warn("%s: space %d or pe %d out of range", routine, space, pe);
  else if (!ofi.rlen[space][pe])
    shoal_warn("%s: space %d is not registered on pe %d%s", routine, space, pe,
               ofi.reg[space].gpu_kind && !ofi.hmem ? " (no FI_HMEM in the provider)" : "");
  else
    shoal_warn("%s: [%zu, %zu + %zu) is past the end of space %d (%" PRIu64 " bytes) on pe %d", routine, off, off, n,
               space, ofi.rlen[space][pe], pe);
  return ofi.up && (unsigned)space < SHOAL_SPACE_MAX && (unsigned)pe < (unsigned)ofi.npes && !ofi.rlen[space][pe]
             ? SHOAL_ERR_NOSYS
             : SHOAL_ERR_INVAL;
}

static inline void mark_dirty(txep_t *t, int pe) {
  if (ofi.flush && !atomic_load_explicit(&t->dirty[pe], memory_order_relaxed)) {
    atomic_store(&t->dirty[pe], 1);
    atomic_store(&t->dirty_any, true);
  }
}

static shoal_status_t fence_before(txep_t *t, bool amo, bool fallback);
static shoal_status_t quiet_common(txep_t *t);

/* ---- RMA ---- */
static shoal_status_t write_dc(txep_t *t, const void *src, size_t n, int pe, uint64_t raddr, uint64_t key,
                               uint64_t flags) {
  struct iovec iov = {(void *)src, n};
  struct fi_rma_iov riov = {raddr, n, key};
  struct fi_msg_rma msg = {.msg_iov = &iov, .iov_count = 1, .addr = ofi.addr[pe], .rma_iov = &riov,
                           .rma_iov_count = 1};
  POST(t, "fi_writemsg", fi_writemsg(t->ep, &msg, flags | FI_DELIVERY_COMPLETE));
  return SHOAL_OK;
}

static shoal_status_t put_common(txep_t *t, int space, int pe, size_t off, const void *src, size_t n, bool nbi) {
  if (bad_target(space, pe, off, n))
    return bad_call(nbi ? "shoal_tl_ofi_put_nbi" : "shoal_tl_ofi_put", space, pe, off, n);
  if (!n) return SHOAL_OK;
  uint64_t raddr = ofi.rbase[space][pe] + off, key = ofi.rkey[space][pe];
  shoal_status_t rc;
  if (SHOAL_UNLIKELY(t->fence_a) && (rc = fence_before(t, false, false))) return rc;
  if (n <= ofi.inject_size) { /* src is free on return: nothing to wait for, even when blocking */
    if (SHOAL_LIKELY(ofi.flush))
      POST(t, "fi_inject_write", fi_inject_write(t->ep, src, n, ofi.addr[pe], raddr, key));
    else if ((rc = write_dc(t, src, n, pe, raddr, key, FI_INJECT)))
      return rc;
    atomic_fetch_add_explicit(&t->w_issued, 1, memory_order_relaxed);
    mark_dirty(t, pe);
    return SHOAL_OK;
  }
  for (size_t done = 0; done < n;) {
    size_t len = n - done < ofi.max_msg ? n - done : ofi.max_msg;
    if (ofi.flush)
      POST(t, "fi_write", fi_write(t->ep, (const char *)src + done, len, NULL, ofi.addr[pe], raddr + done, key, NULL));
    else if ((rc = write_dc(t, (const char *)src + done, len, pe, raddr + done, key, 0)))
      return rc;
    atomic_fetch_add_explicit(&t->w_issued, 1, memory_order_relaxed);
    done += len;
  }
  mark_dirty(t, pe);
  if (nbi) t->wbuf_out = true;
  return nbi ? SHOAL_OK : WAIT_W(t);
}

static shoal_status_t get_common(txep_t *t, int space, int pe, size_t off, void *dst, size_t n, bool nbi) {
  if (bad_target(space, pe, off, n))
    return bad_call(nbi ? "shoal_tl_ofi_get_nbi" : "shoal_tl_ofi_get", space, pe, off, n);
  if (!n) return SHOAL_OK;
  uint64_t raddr = ofi.rbase[space][pe] + off, key = ofi.rkey[space][pe];
  shoal_status_t rc;
  if (SHOAL_UNLIKELY(!ofi.flush) && (rc = WAIT_W(t))) /* no RMA_RAW: a get must not pass the puts before it */
    return rc;
  for (size_t done = 0; done < n;) {
    size_t len = n - done < ofi.max_msg ? n - done : ofi.max_msg;
    POST(t, "fi_read", fi_read(t->ep, (char *)dst + done, len, NULL, ofi.addr[pe], raddr + done, key, NULL));
    atomic_fetch_add_explicit(&t->r_issued, 1, memory_order_relaxed);
    done += len;
  }
  return nbi ? SHOAL_OK : WAIT_R(t);
}

/* SHMEM_THREAD_MULTIPLE: one thread at a time issues and waits on an endpoint (t->lock; a private context's is
 * its thread's alone). The counters count every thread's operations, so "every operation issued so far is
 * complete" is a wait for this thread's own only while no other thread issues on that endpoint. */
#define MT(t, call)                                                                                                    \
  do {                                                                                                                 \
    if (SHOAL_LIKELY(!(t)->lock)) return call;                                                                         \
    pthread_mutex_lock(&(t)->mu);                                                                                      \
    shoal_status_t rc_ = call;                                                                                         \
    pthread_mutex_unlock(&(t)->mu);                                                                                    \
    return rc_;                                                                                                        \
  } while (0)

/* On tx, a context's endpoint (tl_ctx_create), or NULL for the default context's; the default slots are these. */
static shoal_status_t tl_put_ctx(void *h, int space, int pe, size_t off, const void *src, size_t n, bool nbi) {
  txep_t *t = h ? h : &ofi.t0;
  MT(t, put_common(t, space, pe, off, src, n, nbi));
}
static shoal_status_t tl_get_ctx(void *h, int space, int pe, size_t off, void *dst, size_t n, bool nbi) {
  txep_t *t = h ? h : &ofi.t0;
  MT(t, get_common(t, space, pe, off, dst, n, nbi));
}
static shoal_status_t tl_put(int space, int pe, size_t off, const void *src, size_t n) {
  return tl_put_ctx(NULL, space, pe, off, src, n, false);
}
static shoal_status_t tl_put_nbi(int space, int pe, size_t off, const void *src, size_t n) {
  return tl_put_ctx(NULL, space, pe, off, src, n, true);
}
static shoal_status_t tl_get(int space, int pe, size_t off, void *dst, size_t n) {
  return tl_get_ctx(NULL, space, pe, off, dst, n, false);
}
static shoal_status_t tl_get_nbi(int space, int pe, size_t off, void *dst, size_t n) {
  return tl_get_ctx(NULL, space, pe, off, dst, n, true);
}

/* ---- AMOs ---- */
static shoal_status_t amo_fallback(int space, int pe, size_t off, int op, size_t size, uint64_t v, uint64_t c,
                                   void *fetch) {
  if (!ofi.fallback_ok) {
    shoal_warn("fi_atomic: %s has no native %s on this type and no room for the message fallback (inject_size %zu)",
               ofi.info->fabric_attr->prov_name, amo_ops[op].name, ofi.inject_size);
    return SHOAL_ERR_NOSYS;
  }
  waiter_t *w = NULL;
  for (unsigned i = 0;; i = (i + 1) % NWAIT) {
    uint32_t free_ = 0;
    if (atomic_compare_exchange_weak(&ofi.waiters[i].state, &free_, 3)) { /* 3: no answer may claim it yet */
      w = &ofi.waiters[i];
      break;
    }
    if (i == NWAIT - 1) progress_once();
  }
  uint64_t gen = (atomic_load(&w->gen) + 1) & ((1ull << 56) - 1);
  atomic_store(&w->gen, gen ? gen : 1); /* generation 0 is that of a target's empty record */
  atomic_store_explicit(&w->state, 1, memory_order_release);
  amo_msg_t m = {.kind = MSG_REQ, .op = (uint8_t)op, .size = (uint8_t)size, .space = (uint8_t)space, .pe = ofi.me,
                 .off = off, .operand = v, .compare = c,
                 .id = (uint64_t)(w - ofi.waiters) | atomic_load(&w->gen) << 8, .token = ofi.rtoken[pe]};
  ssize_t r;
  /* A full transmit queue (behind a dead link, say): progress and the watch while it drains. */
  while ((r = fi_inject(ofi.ep, &m, sizeof m, ofi.addr[pe])) == -FI_EAGAIN) progress_once();
  if (r) {
    atomic_store(&w->state, 0);
    return fail("fi_inject", r);
  }
  /* Answers land in the receive CQ, which the progress thread reads too: poll it here rather than wait for that
   * thread's wake-up (whoever reads the answer fills w). */
  shoal_wait_t ws = {0};
  int64_t t0 = now_ns(), last = t0, resend = t0 + RESEND_NS, rto = RESEND_NS;
  for (unsigned spins = 0; atomic_load_explicit(&w->state, memory_order_acquire) != 2; spins++) {
    if (ofi.thread_on) note_poll();
    if (spins % WAIT_POLLS == 0) {
      watch();
      int64_t now = now_ns();
      if (now - last > wt.timeout_ns / 4) t0 += now - last; /* this PE was stopped (a suspended job): not the peer */
      last = now;
      if (now > resend) { /* the request or its answer may be lost (net: none posted): again, same id */
        while ((r = fi_inject(ofi.ep, &m, sizeof m, ofi.addr[pe])) == -FI_EAGAIN) progress_once();
        if (r) {
          atomic_store(&w->state, 0);
          return fail("fi_inject", r);
        }
        rto = rto * 2 < RESEND_MAX_NS ? rto * 2 : RESEND_MAX_NS;
        resend = now + rto;
      }
      /* Unanswered for the timeout, resends and all (a dead link, or messages lost again and again): a line and the
       * end of the job, as the watch's, not a silent hang. */
      if (wt.timeout_ns && now - t0 > wt.timeout_ns)
        shoal_fatal("ofi", "PE %d did not answer for %.1f s (a %s request of the message fallback: link down, the PE "
                    "stopped or gone, or the message lost; SHOAL_OFI_TIMEOUT=%lld): ending the job", pe,
                    (double)(now - t0) / 1e9, amo_ops[op].name, (long long)(wt.timeout_ns / 1000000000));
    }
    rx_poll();
    wait_backoff(&ws, spins);
  }
  shoal_status_t rc = w->status;
  uint64_t old = w->value;
  atomic_store_explicit(&w->state, 0, memory_order_release);
  if (rc) {
    shoal_warn("fi_atomic: pe %d refused the %s at offset %zu of space %d", pe, amo_ops[op].name, off, space);
    return rc;
  }
  if (fetch) memcpy(fetch, &old, size); /* little-endian: the low bytes */
  return SHOAL_OK;
}

static shoal_status_t amo_common(txep_t *t, int space, int pe, size_t off, int op, int type, const void *operand,
                                 const void *compare, void *fetch) {
  if (SHOAL_UNLIKELY((unsigned)op >= SHOAL_TL_AMO_NOPS || (unsigned)type >= SHOAL_TL_NTYPES ||
                     !(amo_ops[op].cls & amo_types[type].cls))) {
    shoal_warn("shoal_tl_ofi_amo: op %d on type %d is no AMO of spec 9.8", op, type);
    return SHOAL_ERR_INVAL;
  }
  size_t size = amo_types[type].size;
  int kind = amo_ops[op].kind;
  bool needs_operand = op != SHOAL_TL_AMO_FETCH && op != SHOAL_TL_AMO_INC && op != SHOAL_TL_AMO_FETCH_INC;
  if (bad_target(space, pe, off, size)) return bad_call("shoal_tl_ofi_amo", space, pe, off, size);
  if (SHOAL_UNLIKELY((needs_operand && !operand) || (kind == K_CMP && !compare) || (kind != K_WRITE && !fetch) ||
                     off % size)) {
    shoal_warn("shoal_tl_ofi_amo: %s of %s at offset %zu: %s", amo_ops[op].name, amo_types[type].name, off,
               off % size ? "misaligned" : "operand, compare or fetch missing");
    return SHOAL_ERR_INVAL;
  }
  uint64_t v = 0, c = 0;
  if (op == SHOAL_TL_AMO_INC || op == SHOAL_TL_AMO_FETCH_INC) v = 1; /* little-endian: 1 in the low bytes */
  else if (needs_operand) memcpy(&v, operand, size);
  if (kind == K_CMP) memcpy(&c, compare, size);
  shoal_status_t rc;
  if (SHOAL_UNLIKELY(t->fence_w || t->fence_a) && (rc = fence_before(t, true, !ofi.native[type]))) return rc;
  if (!ofi.native[type]) return amo_fallback(space, pe, off, op, size, v, c, fetch);

  uint64_t raddr = ofi.rbase[space][pe] + off, key = ofi.rkey[space][pe];
  enum fi_datatype dt = amo_types[type].dt;
  if (kind == K_WRITE) {
    struct fi_ioc iov = {&v, 1};
    struct fi_rma_ioc riov = {raddr, 1, key};
    struct fi_msg_atomic msg = {.msg_iov = &iov, .iov_count = 1, .addr = ofi.addr[pe], .rma_iov = &riov,
                                .rma_iov_count = 1, .datatype = dt, .op = amo_ops[op].op};
    POST(t, "fi_atomic", fi_atomicmsg(t->ep, &msg, FI_INJECT | FI_DELIVERY_COMPLETE));
    atomic_fetch_add_explicit(&t->w_issued, 1, memory_order_relaxed);
    t->amo_out = true;
    return SHOAL_OK;
  }
  uint64_t old = 0;
  if (kind == K_FETCH)
    POST(t, "fi_fetch_atomic", fi_fetch_atomic(t->ep, &v, 1, NULL, &old, NULL, ofi.addr[pe], raddr, key, dt,
                                               amo_ops[op].op, NULL));
  else
    POST(t, "fi_compare_atomic", fi_compare_atomic(t->ep, &v, 1, NULL, &c, NULL, &old, NULL, ofi.addr[pe], raddr,
                                                   key, dt, FI_CSWAP, NULL));
  atomic_fetch_add_explicit(&t->r_issued, 1, memory_order_relaxed);
  rc = WAIT_R(t);
  if (!rc) memcpy(fetch, &old, size);
  return rc;
}

static shoal_status_t tl_amo(int space, int pe, size_t off, int op, int type, const void *operand,
                             const void *compare, void *fetch) {
  MT(&ofi.t0, amo_common(&ofi.t0, space, pe, off, op, type, operand, compare, fetch));
}

/* A flag store after what this PE issued to pe. Where writes are ordered (lazy_fence: RMA_WAW, and RMA_RAW so that
 * puts need no delivery completion), an inject write behind the puts, once this PE's earlier non-fetching AMOs
 * completed (no order between AMOs and RMA) and its nbi writes left their sources (a collective reuses its buffers
 * once it signalled: a local completion, no round trip). One message and no answer, where an AMO after a fence cost
 * a quiet's flush read and rxm's answer. Its 8 bytes land in the receiver's copy from the socket, which writes in
 * ascending address order: a poller sees the old value, the new low bytes with the old high ones (below the new
 * value, for flags that only grow), or the new value. Not marked dirty: quiet owes the application's operations,
 * not the runtime's flags. Otherwise a quiet, then the AMO. */
static shoal_status_t signal_common(int space, int pe, size_t off, uint64_t v) {
  if (bad_target(space, pe, off, sizeof v)) return bad_call("shoal_tl_ofi_signal", space, pe, off, sizeof v);
  if (SHOAL_UNLIKELY(off % sizeof v)) {
    shoal_warn("shoal_tl_ofi_signal: offset %zu on pe %d is not 8-byte aligned", off, pe);
    return SHOAL_ERR_INVAL;
  }
  shoal_status_t rc;
  txep_t *t = &ofi.t0;
  if (SHOAL_UNLIKELY(!ofi.lazy_fence || sizeof v > ofi.inject_size)) {
    if ((rc = quiet_common(t))) return rc;
    return amo_common(t, space, pe, off, SHOAL_TL_AMO_SET, SHOAL_TL_UINT64, &v, NULL, NULL);
  }
  if (t->amo_out || t->wbuf_out) { /* writes are locally complete once counted: AMOs delivered, sources free */
    if ((rc = WAIT_W(t))) return rc;
    t->amo_out = t->fence_a = t->wbuf_out = false;
  }
  POST(t, "fi_inject_write", fi_inject_write(t->ep, &v, sizeof v, ofi.addr[pe], ofi.rbase[space][pe] + off,
                                             ofi.rkey[space][pe]));
  atomic_fetch_add_explicit(&t->w_issued, 1, memory_order_relaxed);
  return SHOAL_OK;
}
static shoal_status_t tl_signal(int space, int pe, size_t off, uint64_t v) {
  MT(&ofi.t0, signal_common(space, pe, off, v));
}

/* ---- completion ---- */
static shoal_status_t quiet_common(txep_t *t) {
  if (SHOAL_UNLIKELY(!ofi.up)) return bad_call("shoal_tl_ofi_quiet", 0, 0, 0, 0);
  if (ofi.flush && atomic_exchange(&t->dirty_any, false)) {
    for (int p = 0; p < ofi.npes; p++) {
      if (!atomic_load_explicit(&t->dirty[p], memory_order_relaxed) || !atomic_exchange(&t->dirty[p], 0)) continue;
      int s = 0;
      while (s < SHOAL_SPACE_MAX && !ofi.rlen[s][p]) s++;
      POST(t, "fi_read", fi_read(t->ep, &t->flush_byte[p % SHOAL_CACHELINE], 1, NULL, ofi.addr[p], ofi.rbase[s][p],
                                 ofi.rkey[s][p], NULL));
      atomic_fetch_add_explicit(&t->r_issued, 1, memory_order_relaxed);
    }
  }
  shoal_status_t rw = WAIT_W(t), rr = WAIT_R(t);
  if (!rw && !rr) t->amo_out = t->fence_w = t->fence_a = t->wbuf_out = false;
  return rw ? rw : rr;
}

/* A pending fence, before an operation of the kind that it must follow: a put follows the puts before the fence on
 * its own (FI_ORDER_RMA_WAW) but the AMOs only once they completed; an AMO follows the AMOs (FI_ORDER_ATOMIC_WAW and
 * _RAW) but the puts only after a quiet's flush. The fallback's messages have no order against either. */
static shoal_status_t fence_before(txep_t *t, bool amo, bool fallback) {
  if (amo && (t->fence_w || (fallback && t->fence_a))) return quiet_common(t);
  if (!amo && t->fence_a) {
    shoal_status_t rc = WAIT_W(t);
    if (!rc) t->fence_a = t->amo_out = t->wbuf_out = false;
    return rc;
  }
  return SHOAL_OK;
}

static shoal_status_t tl_quiet(void) { MT(&ofi.t0, quiet_common(&ofi.t0)); }
/* A counter read runs the provider's progress (rxm/tcp: one epoll_wait(0) over the endpoint's sockets). */
static void tl_progress(void) {
  if (SHOAL_LIKELY(ofi.up)) {
    progress_once();
    if (SHOAL_UNLIKELY(atomic_load_explicit(&ofi.ntx, memory_order_relaxed))) tx_progress_all();
  }
}
/* The provider orders neither RMA against AMOs nor AMOs against the reads of a flush (rxm performs an AMO after the
 * RMA behind it on the wire), but it orders puts among themselves and AMOs among themselves. So where it says so
 * (lazy_fence), a fence only notes what was issued before it, and the next put or AMO waits for what it must
 * follow (fence_before): a put, fence, put (a ping-pong's data and flag) costs no round trip. Otherwise, and
 * without RMA_RAW, fence is a quiet; either costs nothing when nothing is outstanding. */
static shoal_status_t fence_common(txep_t *t) {
  if (!ofi.lazy_fence) return quiet_common(t);
  if (SHOAL_UNLIKELY(!ofi.up)) return bad_call("shoal_tl_ofi_fence", 0, 0, 0, 0);
  if (atomic_load_explicit(&t->dirty_any, memory_order_relaxed)) t->fence_w = true;
  if (t->amo_out) t->fence_a = true;
  return SHOAL_OK;
}
static shoal_status_t tl_fence(void) { MT(&ofi.t0, fence_common(&ofi.t0)); }

/* ---- registration, init, fini ---- */
static shoal_status_t tl_reg(int space, void *base, size_t len, int gpu_kind, int gpu_dev) {
  if ((unsigned)space >= SHOAL_SPACE_MAX || ofi.up || ofi.reg[space].base || !base || !len) {
    shoal_warn("shoal_tl_ofi_reg: space %d: %s", space,
               (unsigned)space >= SHOAL_SPACE_MAX ? "out of range" : ofi.up ? "called after init"
               : ofi.reg[space].base ? "already registered" : "no memory");
    return SHOAL_ERR_INVAL;
  }
  ofi.reg[space] = (region_t){.base = base, .len = len, .gpu_kind = gpu_kind, .gpu_dev = gpu_dev};
  return SHOAL_OK;
}

#define MR_MODES (FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT)
#define MR_ANY (MR_MODES | FI_MR_LOCAL | FI_MR_RAW | FI_MR_MMU_NOTIFY | FI_MR_RMA_EVENT | FI_MR_HMEM)

/* Hints of increasing strictness: the first level that finds nothing names what is missing. */
enum { H_ANY, H_RDM, H_RMA, H_ATOMIC, H_MSG, H_THREAD, H_MR, H_HMEM, H_RAW, H_FULL };
static struct fi_info *hints_at(int level, const char *prov) {
  struct fi_info *h = fi_allocinfo();
  if (!h) return NULL;
  if (prov && *prov) h->fabric_attr->prov_name = strdup(prov);
  h->mode = level >= H_MR ? 0 : ~0ull;
  h->domain_attr->mr_mode = level >= H_MR ? MR_MODES : MR_ANY;
  if (level >= H_RDM) h->ep_attr->type = FI_EP_RDM;
  if (level >= H_RMA) h->caps |= FI_RMA;
  if (level >= H_ATOMIC) h->caps |= FI_ATOMIC;
  if (level >= H_MSG) h->caps |= FI_MSG;
  if (level >= H_THREAD) h->domain_attr->threading = FI_THREAD_SAFE;
  if (level == H_HMEM || level == H_FULL) {
    h->caps |= FI_HMEM;
    h->domain_attr->mr_mode |= FI_MR_HMEM;
  }
  if (level >= H_RAW) h->tx_attr->msg_order = FI_ORDER_RMA_RAW;
  return h;
}
static const char *const level_names[] = {
  [H_RDM] = "FI_EP_RDM", [H_RMA] = "FI_RMA", [H_ATOMIC] = "FI_ATOMIC", [H_MSG] = "FI_MSG",
  [H_THREAD] = "FI_THREAD_SAFE", [H_MR] = "memory registration without FI_MR_LOCAL (mr_mode within "
  "FI_MR_VIRT_ADDR|FI_MR_ALLOCATED|FI_MR_PROV_KEY|FI_MR_ENDPOINT) and no mode bits"};

static struct fi_info *getinfo(int level, const char *prov) {
  struct fi_info *h = hints_at(level, prov), *info = NULL;
  if (!h) return NULL;
  if (fi_getinfo(OFI_API, NULL, NULL, 0, h, &info)) info = NULL;
  fi_freeinfo(h);
  return info;
}

/* No usable provider: every provider libfabric offers (FI_PROVIDER applies), and the first capability that none of
 * those of the name asked for (if any) has. */
static void explain_no_provider(const char *prov, const char *from) {
  char found[512] = "", missing[320];
  size_t used = 0;
  struct fi_info *all = getinfo(H_ANY, NULL);
  for (struct fi_info *i = all; i; i = i->next) {
    const char *n = i->fabric_attr->prov_name;
    bool dup = false;
    for (struct fi_info *j = all; j != i && !dup; j = j->next) dup = !strcmp(j->fabric_attr->prov_name, n);
    if (!dup && used < sizeof found)
      used += (size_t)snprintf(found + used, sizeof found - used, "%s%s", used ? ", " : "", n);
  }
  fi_freeinfo(all);
  int level = H_ANY;
  for (; level <= H_MR; level++) {
    struct fi_info *i = getinfo(level, prov);
    fi_freeinfo(i);
    if (!i) break;
  }
  if (level == H_ANY)
    snprintf(missing, sizeof missing, "a provider named %s", prov ? prov : "(any)");
  else if (level <= H_MR)
    snprintf(missing, sizeof missing, "%s", level_names[level]); /* the levels before it were found */
  else
    snprintf(missing, sizeof missing, "the combination of FI_EP_RDM, FI_RMA, FI_ATOMIC, FI_MSG and FI_THREAD_SAFE");
  char asked[96] = "";
  if (prov && *prov) snprintf(asked, sizeof asked, " (%s=%s)", from, prov);
  shoal_warn("fi_getinfo: no usable provider%s: found %s; missing %s", asked, used ? found : "none", missing);
}

/* A step of init failed after fi_getinfo chose a provider (one that claims what Shoal asks for, e.g. udp;ofi_rxd
 * refusing a counter): name the provider and who chose it, so that the line says what to change. */
static const char *chosen_by = "libfabric's choice"; /* set by tl_init */
static shoal_status_t open_fail(const char *routine, int ret) {
  shoal_warn("%s: %s (provider %s, %s; shoal-info lists the others)", routine, fi_strerror(-ret),
             ofi.info ? ofi.info->fabric_attr->prov_name : "none", chosen_by);
  return SHOAL_ERR_IO;
}

static void close_fid(void *fidp) {
  struct fid **f = fidp;
  if (*f) fi_close(*f);
  *f = NULL;
}

static void tl_fini(void);
static void tx_close(txep_t *t);

/* Atomics: per type, native when fi_query_atomic accepts every op the spec has on it. */
static void query_atomics(void) {
  for (int t = 0; t < SHOAL_TL_NTYPES; t++) {
    bool all = !(force_flags & SHOAL_TL_OFI_FORCE_MSG_AMO);
    for (int o = 0; o < SHOAL_TL_AMO_NOPS && all; o++) {
      if (!(amo_ops[o].cls & amo_types[t].cls)) continue;
      struct fi_atomic_attr a;
      uint64_t flags = amo_ops[o].kind == K_FETCH ? FI_FETCH_ATOMIC : amo_ops[o].kind == K_CMP ? FI_COMPARE_ATOMIC : 0;
      if (fi_query_atomic(ofi.domain, amo_types[t].dt, amo_ops[o].op, &a, flags) || a.count < 1) {
        all = false;
        SHOAL_DEBUG(SHOAL_SUB_OFI, "%s: no native %s on %s: message fallback for every op on it",
                    ofi.info->fabric_attr->prov_name, amo_ops[o].name, amo_types[t].name);
      }
    }
    ofi.native[t] = all;
  }
}

/* libfabric's tcp providers take another interface without a word when their variable names none they can use
 * (seen: FI_TCP_IFACE=nosuch0 -> eth0; net with only FI_TCP_IFACE set -> eth0, so a job's traffic goes over the
 * wrong network): refuse instead, naming the interfaces there are. tcp reads FI_TCP_IFACE, net (the rewrite, named
 * tcp again from libfabric 1.18) FI_NET_IFACE, and takes FI_TCP_IFACE's interface here when only that is set, as
 * the user asked for that interface. Each names its domain after the interface it took. */
static bool iface_refused(const struct fi_info *info) {
  const char *pn = info->fabric_attr->prov_name, *var = NULL, *want = NULL, *got = info->domain_attr->name;
  if (!strncmp(pn, "tcp", 3)) var = "FI_TCP_IFACE";
  else if (!strncmp(pn, "net", 3)) var = getenv("FI_NET_IFACE") && *getenv("FI_NET_IFACE") ? "FI_NET_IFACE"
                                                                                               : "FI_TCP_IFACE";
  if (var) want = getenv(var);
  const char *base = var && !strncmp(pn, "net", 3) ? "net" : "tcp"; /* tcp;ofi_rxm: tcp's interface */
  if (!want || !*want || (got && !strcmp(got, want))) return false;
  char list[256] = "";
  struct if_nameindex *ni = if_nameindex();
  for (struct if_nameindex *i = ni; i && i->if_name; i++) {
    size_t l = strlen(list);
    snprintf(list + l, sizeof list - l, "%s%s", l ? ", " : "", i->if_name);
  }
  if (ni) if_freenameindex(ni);
  if (strcmp(var, !strncmp(pn, "net", 3) ? "FI_NET_IFACE" : "FI_TCP_IFACE"))
    shoal_warn("fi_getinfo: %s=%s is not read by libfabric's %s provider, which would take %s instead: set "
               "FI_NET_IFACE to one of this machine's interfaces (%s)", var, want, base, got ? got : "another", list);
  else
    shoal_warn("fi_getinfo: %s=%s %s, and libfabric's %s provider would take %s instead: name one of this machine's "
               "interfaces (%s)", var, want, if_nametoindex(want) ? "has no address the provider can use"
               : "names no network interface here", base, got ? got : "another", list);
  return true;
}

/* With no provider named, libfabric 1.17 offers tcp;ofi_rxm first and its rewrite, net, after it: net does RDM,
 * RMA and atomics itself, one socket call each way, where rxm over tcp adds a progress pipe and more polls (a get or
 * fetch_add 13-14 us against 15-29, docs/design/transport.md). Take net on the same fabric and interface when it is
 * there; from libfabric 1.18 the rewrite is the tcp provider and comes first anyway. Returns the entry to use (an
 * element of list). */
static struct fi_info *prefer_net(struct fi_info *list) {
  if (strcmp(list->fabric_attr->prov_name, "tcp;ofi_rxm") && strcmp(list->fabric_attr->prov_name, "tcp")) return list;
  for (struct fi_info *i = list->next; i; i = i->next)
    if (!strcmp(i->fabric_attr->prov_name, "net") && i->fabric_attr->name && list->fabric_attr->name &&
        !strcmp(i->fabric_attr->name, list->fabric_attr->name) && i->domain_attr->name && list->domain_attr->name &&
        !strcmp(i->domain_attr->name, list->domain_attr->name))
      return i;
  return list;
}

/* n random words of the kernel's (getrandom), each nonzero and of at most bytes bytes (a provider's mr_key_size),
 * and distinct from one another. */
static int random_words(uint64_t *out, int n, size_t bytes) {
  uint64_t mask = bytes >= 8 ? ~0ull : bytes ? (1ull << (8 * bytes)) - 1 : 0;
  if (!mask) {
    for (int i = 0; i < n; i++) out[i] = (uint64_t)i + 1; /* no key room: the provider's keys are what they are */
    return 0;
  }
  for (int i = 0; i < n; i++) {
    bool again;
    do {
      if (getrandom(&out[i], sizeof out[i], 0) != (ssize_t)sizeof out[i]) {
        shoal_warn("getrandom: %s: no random memory keys for the ofi transport", strerror(errno));
        return -1;
      }
      out[i] &= mask;
      again = !out[i];
      for (int j = 0; j < i && !again; j++) again = out[j] == out[i];
    } while (again);
  }
  return 0;
}

static shoal_status_t tl_init(shoal_boot_t *b) {
  if (ofi.up) {
    shoal_warn("shoal_tl_ofi_init: already initialized");
    return SHOAL_ERR_INVAL;
  }
  const char *prov = shoal_env.ofi_provider[0] ? shoal_env.ofi_provider : NULL;
  const char *from = prov ? "SHOAL_OFI_PROVIDER" : "FI_PROVIDER";
  static char chosen[96];
  const char *asked = prov ? prov : getenv("FI_PROVIDER");
  if (asked && *asked) snprintf(chosen, sizeof chosen, "from %s=%s", from, asked);
  else snprintf(chosen, sizeof chosen, "libfabric's choice");
  chosen_by = chosen;
  /* rxm's fi_enable fills its pool of receive buffers (FI_OFI_RXM_BUFFER_SIZE each, 16 KiB by default): a memset
   * of tens of MiB per PE, 0.8 s of init at 2 PEs on tcp;ofi_rxm and 2.4 s at 4 on 2 cores (perf: 70% of the
   * process in memset). Shoal sends rxm only 48-byte messages and 8-byte atomics (RMA goes to the core provider
   * without those buffers), so a smaller size unless the user set one; read at libfabric's first fi_getinfo. */
  setenv("FI_OFI_RXM_BUFFER_SIZE", "2048", 0);
  bool want_hmem = false;
  for (int s = 0; s < SHOAL_SPACE_MAX; s++) want_hmem |= ofi.reg[s].base && ofi.reg[s].gpu_kind;
  ofi.me = b->rank, ofi.npes = b->size;
  ofi.mt = shoal_g.thread_level == SHMEM_THREAD_MULTIPLE;
  struct fi_info *info = NULL;
  /* Best first: HMEM (if a device region waits) and RMA read-after-write ordering, then without each. */
  bool hmem_opts[2] = {want_hmem, false}, raw_opts[2] = {!(force_flags & SHOAL_TL_OFI_FORCE_DC), false};
  for (int h = want_hmem ? 0 : 1; h < 2 && !info; h++)
    for (int r = raw_opts[0] ? 0 : 1; r < 2 && !info; r++) {
      struct fi_info *hi = hints_at(hmem_opts[h] ? (raw_opts[r] ? H_FULL : H_HMEM) : (raw_opts[r] ? H_RAW : H_MR),
                                    prov);
      if (!hi) return SHOAL_ERR_NOMEM;
      if (fi_getinfo(OFI_API, NULL, NULL, 0, hi, &info)) info = NULL;
      fi_freeinfo(hi);
      if (info) ofi.hmem = hmem_opts[h], ofi.flush = raw_opts[r];
    }
  if (!info) {
    explain_no_provider(prov ? prov : getenv("FI_PROVIDER"), from);
    return SHOAL_ERR_NOSYS;
  }
  if (!(asked && *asked)) {
    struct fi_info *pick = prefer_net(info);
    if (pick != info) {
      struct fi_info *one = fi_dupinfo(pick);
      fi_freeinfo(info);
      if (!one) return SHOAL_ERR_NOMEM;
      info = one;
      snprintf(chosen, sizeof chosen, "net, preferred to tcp;ofi_rxm (libfabric's choice)");
    }
  }
  if (iface_refused(info)) {
    fi_freeinfo(info);
    return SHOAL_ERR_INVAL;
  }
  if (want_hmem && !ofi.hmem)
    shoal_warn("fi_getinfo: %s has no FI_HMEM: the device heap is not registered (the seam must not route device "
               "memory here)", info->fabric_attr->prov_name);
  ofi.info = info;
  uint64_t order = info->tx_attr->msg_order;
  ofi.lazy_fence = ofi.flush && (order & (FI_ORDER_RMA_WAW | FI_ORDER_WAW)) &&
                   (order & (FI_ORDER_ATOMIC_WAW | FI_ORDER_WAW)) && (order & (FI_ORDER_ATOMIC_RAW | FI_ORDER_RAW));
  SHOAL_DEBUG(SHOAL_SUB_OFI, "msg_order %#" PRIx64 ": fence %s", order,
              ofi.lazy_fence ? "noted, waited for by the next put or AMO" : "a quiet");
  SHOAL_DEBUG(SHOAL_SUB_OFI, "provider %s, fabric %s, domain %s; mr_mode %#x, data progress %s, inject %zu, %s",
              info->fabric_attr->prov_name, info->fabric_attr->name, info->domain_attr->name,
              info->domain_attr->mr_mode, info->domain_attr->data_progress == FI_PROGRESS_AUTO ? "auto" : "manual",
              info->tx_attr->inject_size, ofi.flush ? "RMA_RAW (flush read at quiet)" : "delivery complete writes");

  shoal_status_t rc = SHOAL_ERR_IO;
  int ret;
  wire_t *all = NULL;
  uint8_t *names = NULL;
  if ((ret = fi_fabric(info->fabric_attr, &ofi.fabric, NULL))) { rc = open_fail("fi_fabric", ret); goto fail; }
  if ((ret = fi_domain(ofi.fabric, info, &ofi.domain, NULL))) { rc = open_fail("fi_domain", ret); goto fail; }
  query_atomics();
  struct fi_av_attr ava = {.type = info->domain_attr->av_type, .count = (size_t)ofi.npes};
  if ((ret = fi_av_open(ofi.domain, &ava, &ofi.av, NULL))) { rc = open_fail("fi_av_open", ret); goto fail; }
  struct fi_cq_attr txa = {.format = FI_CQ_FORMAT_CONTEXT, .wait_obj = FI_WAIT_NONE};
  if ((ret = fi_cq_open(ofi.domain, &txa, &ofi.t0.txcq, NULL))) { rc = open_fail("fi_cq_open", ret); goto fail; }
  /* The receive CQ gets a wait object for the progress thread; a provider without one runs without that thread. */
  struct fi_cq_attr rxa = {.format = FI_CQ_FORMAT_MSG, .wait_obj = FI_WAIT_FD}; /* MSG: each message's length */
  bool can_wait = true;
  ofi.wait_fd = -1;
  if (fi_cq_open(ofi.domain, &rxa, &ofi.rxcq, NULL)) {
    rxa.wait_obj = FI_WAIT_UNSPEC;
    if (fi_cq_open(ofi.domain, &rxa, &ofi.rxcq, NULL)) {
      can_wait = false;
      rxa.wait_obj = FI_WAIT_NONE;
      if ((ret = fi_cq_open(ofi.domain, &rxa, &ofi.rxcq, NULL))) { rc = open_fail("fi_cq_open", ret); goto fail; }
    }
  } else if (fi_control(&ofi.rxcq->fid, FI_GETWAIT, &ofi.wait_fd)) {
    ofi.wait_fd = -1; /* fi_cq_sread still works */
  }
  struct fi_cntr_attr ca = {.events = FI_CNTR_EVENTS_COMP, .wait_obj = FI_WAIT_NONE};
  if ((ret = fi_cntr_open(ofi.domain, &ca, &ofi.t0.wcntr, NULL))) { rc = open_fail("fi_cntr_open", ret); goto fail; }
  if ((ret = fi_cntr_open(ofi.domain, &ca, &ofi.t0.rcntr, NULL))) { rc = open_fail("fi_cntr_open", ret); goto fail; }
  if ((ret = fi_endpoint(ofi.domain, info, &ofi.ep, NULL))) { rc = open_fail("fi_endpoint", ret); goto fail; }
  if ((ret = fi_ep_bind(ofi.ep, &ofi.av->fid, 0)) ||
      (ret = fi_ep_bind(ofi.ep, &ofi.t0.txcq->fid, FI_TRANSMIT | FI_SELECTIVE_COMPLETION)) ||
      (ret = fi_ep_bind(ofi.ep, &ofi.rxcq->fid, FI_RECV)) || (ret = fi_ep_bind(ofi.ep, &ofi.t0.wcntr->fid, FI_WRITE)) ||
      (ret = fi_ep_bind(ofi.ep, &ofi.t0.rcntr->fid, FI_READ))) {
    rc = open_fail("fi_ep_bind", ret);
    goto fail;
  }
  if ((ret = fi_enable(ofi.ep))) { rc = open_fail("fi_enable", ret); goto fail; }
  ofi.t0.ep = ofi.ep;
  ofi.t0.lock = ofi.mt;
  pthread_mutex_init(&ofi.t0.mu, NULL);

  wire_t w = {.addrlen = ADDR_MAX};
  snprintf(w.prov, sizeof w.prov, "%s", info->fabric_attr->prov_name);
  uint64_t mr_mode = (uint64_t)info->domain_attr->mr_mode;
  /* Secrets: the memory keys (where the provider takes ours: without FI_MR_PROV_KEY) and the message token, drawn
   * from the kernel's random source by each PE and told to the job's PEs only, through the bootstrap. An endpoint
   * that is not the job's would have to guess 64 bits for each (docs/design/trust.md). */
  uint64_t keys[SHOAL_SPACE_MAX];
  if (random_words(keys, SHOAL_SPACE_MAX, info->domain_attr->mr_key_size) ||
      random_words(&ofi.token, 1, sizeof ofi.token)) {
    rc = SHOAL_ERR_IO;
    goto fail;
  }
  w.token = ofi.token;
  for (int s = 0; s < SHOAL_SPACE_MAX; s++) {
    region_t *r = &ofi.reg[s];
    if (!r->base || (r->gpu_kind && !ofi.hmem)) continue;
    struct iovec iov = {r->base, r->len};
    struct fi_mr_attr ma = {.mr_iov = &iov, .iov_count = 1, .requested_key = keys[s],
                            .access = FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE, .iface = FI_HMEM_SYSTEM};
    if (r->gpu_kind == SHOAL_GPU_CUDA) ma.iface = FI_HMEM_CUDA, ma.device.cuda = r->gpu_dev;
    else if (r->gpu_kind == SHOAL_GPU_HIP) ma.iface = FI_HMEM_ROCR;
    if ((ret = fi_mr_regattr(ofi.domain, &ma, 0, &r->mr))) { rc = open_fail("fi_mr_regattr", ret); goto fail; }
    if ((mr_mode & FI_MR_ENDPOINT) && ((ret = fi_mr_bind(r->mr, &ofi.ep->fid, 0)) || (ret = fi_mr_enable(r->mr)))) {
      rc = open_fail("fi_mr_bind", ret);
      goto fail;
    }
    w.key[s] = fi_mr_key(r->mr);
    w.base[s] = (uintptr_t)r->base;
    w.len[s] = r->len;
  }
  size_t alen = ADDR_MAX;
  if ((ret = fi_getname(&ofi.ep->fid, w.addr, &alen))) { rc = open_fail("fi_getname", ret); goto fail; }
  w.addrlen = alen;

  /* Fallback AMOs: receives posted before the exchange, so that a peer's first request finds one. */
  ofi.inject_size = info->tx_attr->inject_size;
  ofi.max_msg = info->ep_attr->max_msg_size ? info->ep_attr->max_msg_size : SIZE_MAX;
  ofi.fallback_ok = ofi.inject_size >= sizeof(amo_msg_t);
  /* At most the receive queue's size (a provider with a smaller one would make post_recv retry for ever). */
  size_t nrecv = info->rx_attr && info->rx_attr->size && info->rx_attr->size < NRECV ? info->rx_attr->size : NRECV;
  for (size_t i = 0; i < nrecv && ofi.fallback_ok; i++)
    if ((ret = (int)post_recv(&ofi.rxbuf[i]))) { rc = open_fail("fi_recv", ret); goto fail; }

  all = malloc((size_t)ofi.npes * sizeof *all);
  ofi.addr = calloc((size_t)ofi.npes, sizeof *ofi.addr);
  ofi.t0.dirty = calloc((size_t)ofi.npes, sizeof *ofi.t0.dirty);
  ofi.rtoken = calloc((size_t)ofi.npes, sizeof *ofi.rtoken);
  ofi.done = calloc((size_t)ofi.npes * NWAIT, sizeof *ofi.done);
  pthread_mutex_init(&ofi.exec_mu, NULL);
  names = malloc((size_t)ofi.npes * alen);
  for (int s = 0; s < SHOAL_SPACE_MAX; s++) {
    ofi.rbase[s] = calloc((size_t)ofi.npes, sizeof(uint64_t));
    ofi.rkey[s] = calloc((size_t)ofi.npes, sizeof(uint64_t));
    ofi.rlen[s] = calloc((size_t)ofi.npes, sizeof(uint64_t));
    if (!ofi.rbase[s] || !ofi.rkey[s] || !ofi.rlen[s]) all = NULL;
  }
  if (!all || !ofi.addr || !ofi.t0.dirty || !names || !ofi.rtoken || !ofi.done) {
    rc = SHOAL_ERR_NOMEM;
    goto fail;
  }
  if ((rc = shoal_boot_allgather(b, &w, all, sizeof w))) {
    shoal_warn("shoal_tl_ofi_init: the bootstrap's allgather of endpoint names and keys failed");
    goto fail;
  }
  bool virt = mr_mode & FI_MR_VIRT_ADDR;
  for (int p = 0; p < ofi.npes; p++) {
    if (strncmp(all[p].prov, w.prov, sizeof w.prov)) {
      all[p].prov[sizeof all[p].prov - 1] = 0;
      shoal_warn("shoal_tl_ofi_init: pe %d runs libfabric provider %s, this PE %s (%s): name one with FI_PROVIDER "
                 "or SHOAL_OFI_PROVIDER on every node", p, all[p].prov, w.prov, chosen_by);
      rc = SHOAL_ERR_INVAL;
      goto fail;
    }
    if (all[p].addrlen != alen) {
      shoal_warn("shoal_tl_ofi_init: pe %d's endpoint name has %" PRIu64 " bytes, ours %zu: another provider?", p,
                 all[p].addrlen, alen);
      rc = SHOAL_ERR_INVAL;
      goto fail;
    }
    memcpy(names + (size_t)p * alen, all[p].addr, alen);
    ofi.rtoken[p] = all[p].token;
    for (int s = 0; s < SHOAL_SPACE_MAX; s++) {
      ofi.rbase[s][p] = virt ? all[p].base[s] : 0;
      ofi.rkey[s][p] = all[p].key[s];
      ofi.rlen[s][p] = all[p].len[s];
    }
  }
  if ((ret = fi_av_insert(ofi.av, names, (size_t)ofi.npes, ofi.addr, 0, NULL)) != ofi.npes) {
    rc = ret < 0 ? open_fail("fi_av_insert", ret) : SHOAL_ERR_IO;
    if (ret >= 0) shoal_warn("fi_av_insert: %d of %d endpoint names inserted", ret, ofi.npes);
    goto fail;
  }
  free(all), all = NULL;
  free(names), names = NULL;

  /* The thread: for a provider that moves data only when called, or when fallback AMOs need a target to answer. */
  int nnative = 0;
  for (int t = 0; t < SHOAL_TL_NTYPES; t++) nnative += ofi.native[t];
  /* Requests may come whenever the fallback can (a peer's provider may lack an op ours has): the PE's own polls
   * answer them, since the thread stands back while it polls. */
  ofi.rx_main = ofi.fallback_ok;
  if ((rc = watch_init())) goto fail;
  bool need = info->domain_attr->data_progress != FI_PROGRESS_AUTO || ofi.rx_main;
  if (need && !can_wait)
    shoal_warn("fi_cq_open: %s has no CQ wait object: progress only inside transport calls",
               info->fabric_attr->prov_name);
  ofi.up = true;
  if (need && can_wait) {
    sigset_t all_sigs, old;
    sigfillset(&all_sigs);
    pthread_sigmask(SIG_SETMASK, &all_sigs, &old); /* signals stay with the application's threads */
    atomic_store(&ofi.stop, false);
    ret = pthread_create(&ofi.thread, NULL, progress_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (ret) {
      shoal_warn("pthread_create: %s", strerror(ret));
      rc = SHOAL_ERR_IO;
      goto fail;
    }
    ofi.thread_on = true;
  }
  SHOAL_DEBUG(SHOAL_SUB_OFI, "up: %d PEs, %d of %d AMO types native, %s", ofi.npes, nnative, SHOAL_TL_NTYPES,
              ofi.thread_on ? "progress thread" : "no progress thread");
  return SHOAL_OK;
fail:
  free(all);
  free(names);
  region_t keep[SHOAL_SPACE_MAX];
  memcpy(keep, ofi.reg, sizeof keep);
  ofi.up = true; /* let fini take down what exists */
  tl_fini();
  for (int s = 0; s < SHOAL_SPACE_MAX; s++) ofi.reg[s] = keep[s], ofi.reg[s].mr = NULL; /* init may be tried again */
  return rc;
}

static void tl_fini(void) {
  if (!ofi.up) {
    memset(ofi.reg, 0, sizeof ofi.reg);
    return;
  }
  if (ofi.thread_on) {
    atomic_store(&ofi.stop, true);
    fi_cq_signal(ofi.rxcq);
    pthread_join(ofi.thread, NULL);
    ofi.thread_on = false;
  }
  watch_fini();
  if (atomic_load(&ofi.dropped))
    SHOAL_DEBUG(SHOAL_SUB_OFI, "%" PRIu64 " messages dropped (not from this job, or malformed)",
                (uint64_t)atomic_load(&ofi.dropped));
  /* Contexts the program never destroyed: their endpoints hold the domain open. */
  while (ofi.txs.next && ofi.txs.next != &ofi.txs) tx_close(ofi.txs.next);
  /* Endpoint first (it cancels the posted receives), then what it was bound to. */
  close_fid(&ofi.ep);
  for (int s = 0; s < SHOAL_SPACE_MAX; s++) close_fid(&ofi.reg[s].mr);
  close_fid(&ofi.av);
  close_fid(&ofi.t0.wcntr);
  close_fid(&ofi.t0.rcntr);
  close_fid(&ofi.t0.txcq);
  close_fid(&ofi.rxcq);
  close_fid(&ofi.domain);
  close_fid(&ofi.fabric);
  fi_freeinfo(ofi.info);
  free(ofi.addr);
  free((void *)ofi.t0.dirty);
  free(ofi.rtoken);
  free(ofi.done);
  for (int s = 0; s < SHOAL_SPACE_MAX; s++) free(ofi.rbase[s]), free(ofi.rkey[s]), free(ofi.rlen[s]);
  memset(&ofi, 0, sizeof ofi);
}

/* Debian's libfabric links the psm provider's libinfinipath, whose constructor takes SIGSEGV, SIGBUS, SIGILL,
 * SIGABRT, SIGINT and SIGTERM in every program that loads libshoal, shared-memory jobs too: it writes a .btr file
 * into the working directory and exits 1, so that a crash is reported as an exit status. Give those signals back
 * their default action when the handler is that library's (and only then: the program's own handlers come later,
 * from main). Runs after the constructors of libshoal's dependencies. */
__attribute__((constructor)) static void ofi_unhook_signals(void) {
  static const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGINT, SIGTERM, SIGQUIT};
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
    struct sigaction sa;
    Dl_info d;
    if (sigaction(sigs[i], NULL, &sa) || sa.sa_handler == SIG_DFL || sa.sa_handler == SIG_IGN) continue;
    void *fn = sa.sa_flags & SA_SIGINFO ? (void *)sa.sa_sigaction : (void *)sa.sa_handler;
    if (!dladdr(fn, &d) || !d.dli_fname) continue;
    const char *base = strrchr(d.dli_fname, '/');
    base = base ? base + 1 : d.dli_fname;
    if (!strncmp(base, "libinfinipath", 13) || !strncmp(base, "libpsm", 6)) signal(sigs[i], SIG_DFL);
  }
}

void shoal_tl_ofi_test_force(unsigned flags) { force_flags = flags; }

void shoal_tl_ofi_query(shoal_tl_ofi_info_t *out) {
  int n = 0;
  for (int t = 0; t < SHOAL_TL_NTYPES; t++) n += ofi.native[t];
  *out = (shoal_tl_ofi_info_t){.provider = ofi.info ? ofi.info->fabric_attr->prov_name : NULL,
                               .progress_thread = ofi.thread_on, .flush_read = ofi.flush,
                               .virt_addr = ofi.info && (ofi.info->domain_attr->mr_mode & FI_MR_VIRT_ADDR),
                               .hmem = ofi.hmem, .native_types = n, .inject_size = ofi.inject_size,
                               .thread_progress = atomic_load(&ofi.thread_progress),
                               .thread_holds = atomic_load(&ofi.thread_holds), .writes = atomic_load(&ofi.t0.w_issued),
                               .reads = atomic_load(&ofi.t0.r_issued), .ctx_endpoints = atomic_load(&ofi.ntx),
                               .ordered_signal = ofi.lazy_fence && ofi.inject_size >= sizeof(uint64_t),
                               .dropped = atomic_load(&ofi.dropped)};
}

/* ---- contexts: an endpoint each (spec 9.4; SOS gives each context a transmit context of its own) ----
 * It only issues: it shares the domain, the address vector and the memory keys (registered on the domain; a provider
 * with FI_MR_ENDPOINT binds them to the main endpoint, which is the only one that is ever a target) and has its own
 * transmit CQ and counters, so that its quiet waits for its own operations and a private context takes no lock.
 * Fallback AMOs still go through the main endpoint (their answers land there); fence_before orders them. */
static pthread_mutex_t txs_mu = PTHREAD_MUTEX_INITIALIZER;
/* A context's endpoint moves only when called (manual progress): a PE's waits (tl_progress) and the progress thread
 * drive every one, or a context's nbi data queued behind a full socket would wait for that context's next call
 * (a flag after it, waited for by a peer, never arriving). Any thread may: the domain is FI_THREAD_SAFE. */
static void tx_progress_all(void) {
  if (pthread_mutex_trylock(&txs_mu)) return; /* one driver at a time is enough */
  for (txep_t *t = ofi.txs.next; t && t != &ofi.txs; t = t->next) fi_cntr_read(t->wcntr);
  pthread_mutex_unlock(&txs_mu);
}
static void tx_close(txep_t *t) {
  pthread_mutex_lock(&txs_mu);
  if (t->next) {
    t->prev->next = t->next, t->next->prev = t->prev;
    atomic_fetch_sub(&ofi.ntx, 1);
  }
  pthread_mutex_unlock(&txs_mu);
  close_fid(&t->ep);
  close_fid(&t->wcntr);
  close_fid(&t->rcntr);
  close_fid(&t->txcq);
  free((void *)t->dirty);
  pthread_mutex_destroy(&t->mu);
  free(t);
}

static shoal_status_t tl_ctx_create(bool shared, void **out) {
  *out = NULL;
  if (SHOAL_UNLIKELY(!ofi.up)) return bad_call("shoal_tl_ofi_ctx_create", 0, 0, 0, 0);
  txep_t *t = calloc(1, sizeof *t);
  if (!t) return SHOAL_ERR_NOMEM;
  pthread_mutex_init(&t->mu, NULL);
  t->lock = ofi.mt && shared;
  int ret = 0;
  const char *what = "calloc";
  struct fi_cq_attr txa = {.format = FI_CQ_FORMAT_CONTEXT, .wait_obj = FI_WAIT_NONE};
  struct fi_cntr_attr ca = {.events = FI_CNTR_EVENTS_COMP, .wait_obj = FI_WAIT_NONE};
  if (!(t->dirty = calloc((size_t)ofi.npes, sizeof *t->dirty))) goto fail;
  if ((ret = fi_cq_open(ofi.domain, &txa, &t->txcq, NULL)) || (ret = fi_cntr_open(ofi.domain, &ca, &t->wcntr, NULL)) ||
      (ret = fi_cntr_open(ofi.domain, &ca, &t->rcntr, NULL))) {
    what = t->txcq ? "fi_cntr_open" : "fi_cq_open";
    goto fail;
  }
  what = "fi_endpoint";
  if ((ret = fi_endpoint(ofi.domain, ofi.info, &t->ep, NULL))) goto fail;
  what = "fi_ep_bind";
  if ((ret = fi_ep_bind(t->ep, &ofi.av->fid, 0)) ||
      /* receive side too: rxm refuses an endpoint without one; nothing is posted there, nothing arrives */
      (ret = fi_ep_bind(t->ep, &t->txcq->fid, FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION)) ||
      (ret = fi_ep_bind(t->ep, &t->wcntr->fid, FI_WRITE)) || (ret = fi_ep_bind(t->ep, &t->rcntr->fid, FI_READ)))
    goto fail;
  what = "fi_enable";
  if ((ret = fi_enable(t->ep))) goto fail;
  pthread_mutex_lock(&txs_mu);
  if (!ofi.txs.next) ofi.txs.next = ofi.txs.prev = &ofi.txs;
  t->next = &ofi.txs, t->prev = ofi.txs.prev;
  ofi.txs.prev->next = t, ofi.txs.prev = t;
  atomic_fetch_add(&ofi.ntx, 1);
  pthread_mutex_unlock(&txs_mu);
  *out = t;
  return SHOAL_OK;
fail:
  /* Not fatal: the context shares the main endpoint instead (correct, only not separate). */
  SHOAL_DEBUG(SHOAL_SUB_OFI, "%s: %s: the context shares the main endpoint", what,
              ret ? fi_strerror(-ret) : "no memory");
  tx_close(t);
  return ret ? SHOAL_ERR_IO : SHOAL_ERR_NOMEM;
}

static void tl_ctx_destroy(void *h) {
  txep_t *t = h;
  if (!t) return;
  /* shmem_ctx_destroy quiets first; this only drains what a failure left (the failure had its line) */
  if (ofi.up && quiet_common(t)) shoal_warn("shoal_tl_ofi_ctx_destroy: the context's operations did not complete");
  tx_close(t);
}
static shoal_status_t tl_amo_ctx(void *h, int space, int pe, size_t off, int op, int type, const void *operand,
                                 const void *compare, void *fetch) {
  txep_t *t = h ? h : &ofi.t0;
  MT(t, amo_common(t, space, pe, off, op, type, operand, compare, fetch));
}
static shoal_status_t tl_quiet_ctx(void *h) {
  txep_t *t = h ? h : &ofi.t0;
  MT(t, quiet_common(t));
}
static shoal_status_t tl_fence_ctx(void *h) {
  txep_t *t = h ? h : &ofi.t0;
  MT(t, fence_common(t));
}

const shoal_tl_ops_t shoal_tl_ofi_ops = {
  .size = sizeof(shoal_tl_ops_t), .name = "ofi", .init = tl_init, .reg = tl_reg, .put = tl_put, .get = tl_get,
  .put_nbi = tl_put_nbi, .get_nbi = tl_get_nbi, .amo = tl_amo, .signal = tl_signal, .quiet = tl_quiet,
  .fence = tl_fence, .progress = tl_progress, .fini = tl_fini, .ctx_create = tl_ctx_create,
  .ctx_destroy = tl_ctx_destroy, .put_ctx = tl_put_ctx, .get_ctx = tl_get_ctx, .amo_ctx = tl_amo_ctx,
  .quiet_ctx = tl_quiet_ctx, .fence_ctx = tl_fence_ctx,
};
