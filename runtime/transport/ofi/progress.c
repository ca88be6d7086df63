/* progress.c - the libfabric transport: see ofi.h */
#include "ofi.h"

/* A put_signal's flag (rma.c): the target completion of its write, so the data is in place; store the value that
 * its CQ data carries (ofi.h, CQS_*), rebuilt from the cell's. The PE and the progress thread may read two entries
 * for one cell at once, and a plain signal may land beside them: the cell only grows (a compare-and-swap to the
 * larger). CQ data naming memory outside a registered region (no PE of this job sends it) is dropped. */
static void cq_signal(uint64_t d) {
  unsigned sp = (unsigned)(d >> 62);
  size_t off = (size_t)((d >> CQS_VAL_BITS) & (CQS_IDX_MAX - 1)) * sizeof d;
  if (sp == SHOAL_SPACE_STAGE) { /* no flag: a staged put's chunk with its request (rma.c stage_send) */
    shoal_ofi_stage_req(d & CQS_VAL_MASK, off);
    return;
  }
  /* host memory only: a flag in a device heap registered with the provider (FI_HMEM) is not the CPU's to swap */
  if (!shoal_ofi.reg[sp].base || !shoal_ofi.reg[sp].mr || shoal_ofi.reg[sp].gpu_kind ||
      off + sizeof d > shoal_ofi.reg[sp].len) {
    shoal_ofi_drop("remote CQ data naming no flag cell", sizeof d);
    return;
  }
  _Atomic uint64_t *c = (_Atomic uint64_t *)((char *)shoal_ofi.reg[sp].base + off);
  uint64_t cur = atomic_load_explicit(c, memory_order_relaxed);
  for (;;) { /* the signed distance from cur to the value, modulo 2^CQS_VAL_BITS */
    int64_t up = (int64_t)(((d & CQS_VAL_MASK) - cur) << (64 - CQS_VAL_BITS)) >> (64 - CQS_VAL_BITS);
    if (up <= 0 ||
        atomic_compare_exchange_weak_explicit(c, &cur, cur + (uint64_t)up, memory_order_release, memory_order_relaxed))
      return;
  }
}

/* Entries of the receive CQ: put_signal's flags, fallback requests and answers. Every buffer goes back to the
 * endpoint whatever it held (cleared first, so that a short message cannot replay the bytes of an earlier one).
 * Remote CQ data counts only on a remote write's entry, which needed the region's key: a message (FI_RECV) may
 * carry CQ data too, and anybody who can connect may send one (fi_senddata), so that data is dropped with its
 * message and the buffer posted again (ofiattack's senddata class: strangers set heap cells through it before). */
static void rx_handle(struct fi_cq_data_entry *e, ssize_t n) {
  for (ssize_t i = 0; i < n; i++) {
    const bool data = e[i].flags & FI_REMOTE_CQ_DATA;
    if (data && (e[i].flags & FI_REMOTE_WRITE) && !(e[i].flags & FI_RECV)) {
      cq_signal(e[i].data);
      continue;
    }
    amo_msg_t *buf = e[i].op_context, m;
    if (buf < shoal_ofi.rxbuf || buf >= shoal_ofi.rxbuf + NRECV) {
      if (data) shoal_ofi_drop("remote CQ data without a remote write", sizeof e[i].data);
      continue;
    }
    m = *buf;
    memset(buf, 0, sizeof *buf);
    ssize_t r = shoal_ofi_post_recv(buf);
    if (r) shoal_ofi_fail("fi_recv", r);
    if (data) /* no job's PE sends data with a message */
      shoal_ofi_drop("a message carrying remote CQ data", e[i].len);
    else
      shoal_ofi_handle_msg(&m, e[i].len);
  }
}

/* An error entry of the receive CQ: a message longer than a buffer (FI_ETRUNC), or one the provider could not take.
 * The buffer is posted again and the message dropped: a stranger's junk never costs the job a receive. */
static void rx_error(void) {
  struct fi_cq_err_entry e = {0};
  if (fi_cq_readerr(shoal_ofi.rxcq, &e, 0) < 1) return;
  amo_msg_t *buf = e.op_context;
  if (e.err == FI_ECANCELED) return; /* fini closing the endpoint */
  if (buf >= shoal_ofi.rxbuf && buf < shoal_ofi.rxbuf + NRECV) {
    memset(buf, 0, sizeof *buf);
    ssize_t r = shoal_ofi_post_recv(buf);
    if (r) shoal_ofi_fail("fi_recv", r);
  }
  shoal_ofi_drop(fi_strerror(e.err), e.olen ? e.len + e.olen : e.len);
}

void shoal_ofi_rx_poll(void) {
  struct fi_cq_data_entry e[8];
  shoal_ofi_copies_reap();
  ssize_t n = fi_cq_read(shoal_ofi.rxcq, e, 8);
  if (n > 0)
    rx_handle(e, n);
  else if (n == -FI_EAVAIL)
    rx_error();
}

/* ---- the watch: a peer that stops answering ends the job (SHOAL_OFI_TIMEOUT, docs/design/trust.md) ----
 * A PE that waits on the wire (a blocking call, or a wait on its own memory: a barrier, shmem_wait_until) reads one
 * byte of every PE it reaches through this transport, at most once every timeout/4, on an endpoint of the
 * watch's own (opened when the first round is due, so that its completions say which peer answered). A round that a
 * peer leaves unanswered for the timeout, while this PE kept waiting, ends the job with one line naming the peer:
 * nothing else notices a link that went down or a PE that was stopped (the provider's TCP retries take a quarter of an
 * hour, and a flag that never arrives is just a wait). A PE that stops waiting for a quarter of the timeout starts the
 * round's clock again when it waits next: a round is judged on a stretch of waiting only. Costs a clock read per poll
 * of a wait, one read per peer every timeout/4 while waiting. */
static struct {
  pthread_mutex_t mu;
  int64_t timeout_ns, next_ns, last_ns, round_ns, done_ns;
  int out;              /* probes of the round not answered yet; -1: the watch is off (no endpoint) */
  uint8_t *pending;     /* [npes] */
  struct fi_context *ctx; /* [npes]: a probe's context names its peer */
  struct fid_ep *ep;
  struct fid_cq *cq;
  char byte[SHOAL_CACHELINE];
  /* Receives on the watch's endpoint. No PE of the job sends there, but it listens as every endpoint does and
   * a stranger can: net with no receive posted on one endpoint held back the job's own messages under a flood
   * (ofiattack-net-netns-np3 lost a fallback request for good in 3 of 21 runs; 0 of 12 without this endpoint). Each
   * look of the watch drains them, drops what came and posts them again. */
  amo_msg_t rx[64];
} wt = {.mu = PTHREAD_MUTEX_INITIALIZER};
/* The watch's timeout (SHOAL_OFI_TIMEOUT, ns; 0: off), for the fallback AMO's own wait. */
int64_t shoal_ofi_watch_timeout_ns(void) { return wt.timeout_ns; }
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
  if ((ret = fi_cq_open(shoal_ofi.domain, &a, &wt.cq, NULL)) ||
      (ret = fi_endpoint(shoal_ofi.domain, shoal_ofi.info, &wt.ep, NULL)) ||
      (ret = fi_ep_bind(wt.ep, &shoal_ofi.av->fid, 0)) ||
      (ret = fi_ep_bind(wt.ep, &wt.cq->fid, FI_TRANSMIT | FI_RECV)) || (ret = fi_enable(wt.ep))) {
    shoal_warn("ofi: the watch's endpoint: %s: a peer that stops answering is not noticed",
               fi_strerror(-ret));
    return -1;
  }
  for (size_t i = 0; i < WT_NRX; i++) watch_repost(&wt.rx[i]);
  return 0;
}

static bool watched(int p) { return p != shoal_ofi.me && shoal_g.tl_of && shoal_g.tl_of[p] == shoal_ofi.self; }

/* pending[p]: 1 a probe to post (a full transmit queue, as towards a link that is down, is tried again at the
 * next look and counts as unanswered meanwhile), 2 posted. */
static void watch_post(void) {
  for (int p = 0; p < shoal_ofi.npes; p++) {
    if (wt.pending[p] != 1) continue;
    int s = 0;
    while (s < SHOAL_SPACE_MAX && !shoal_ofi.rlen[s][p]) s++;
    ssize_t r = fi_read(wt.ep, &wt.byte[p % SHOAL_CACHELINE], 1, NULL, shoal_ofi.addr[p], shoal_ofi.rbase[s][p],
                        shoal_ofi.rkey[s][p], &wt.ctx[p]);
    if (r == -FI_EAGAIN) break;
    if (r) watch_fatal(p, fi_strerror((int)-r));
    wt.pending[p] = 2;
  }
}

/* The next WATCH_PEERS far PEs in ring order, not all of them: each probe keeps a connection of the watch's
 * own open, and a stopped PE has watchers on every side (the PEs before it), one of which waits soon enough in a job
 * that cannot go on without it. */
#define WATCH_PEERS 8
static void watch_round(int64_t now) {
  for (int q = 1, n = 0; q < shoal_ofi.npes && n < WATCH_PEERS; q++) {
    int p = (shoal_ofi.me + q) % shoal_ofi.npes, s = 0;
    while (s < SHOAL_SPACE_MAX && !shoal_ofi.rlen[s][p]) s++;
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
        shoal_ofi_drop("sent to the watch's endpoint", 0);
        watch_repost(e[i].op_context);
        continue;
      }
      int p = (int)((struct fi_context *)e[i].op_context - wt.ctx);
      if (p >= 0 && p < shoal_ofi.npes && wt.pending[p] == 2) wt.pending[p] = 0, wt.out--;
    }
  if (n == -FI_EAVAIL) {
    struct fi_cq_err_entry err = {0};
    if (fi_cq_readerr(wt.cq, &err, 0) == 1) {
      if (watch_rx(err.op_context)) { /* a stranger's junk (too long, say): dropped, the buffer posted again */
        shoal_ofi_drop(fi_strerror(err.err), err.len + err.olen);
        if (err.err != FI_ECANCELED) watch_repost(err.op_context);
        return;
      }
      int p = (int)((struct fi_context *)err.op_context - wt.ctx);
      if (p >= 0 && p < shoal_ofi.npes) watch_fatal(p, fi_strerror(err.err)); /* refused, reset: gone */
    }
  }
}

/* Called by every poll of a wait on the wire; cheap until the next look is due. */
void shoal_ofi_watch(void) {
  if (SHOAL_LIKELY(!wt.timeout_ns)) return;
  int64_t now = now_ns();
  if (SHOAL_LIKELY(now < wt.next_ns) || pthread_mutex_trylock(&wt.mu)) return;
  int64_t quarter = wt.timeout_ns / 4, step = quarter < 50000000 ? quarter : 50000000;
  /* Not waiting for a while (a quarter: a loaded node may keep a waiting PE off its CPU for tenths of a second): the
   * answers may wait for this PE's own progress, so the round starts over from now. */
  if (now - wt.last_ns > quarter) wt.round_ns = now;
  wt.last_ns = now;
  wt.next_ns = now + step;
  /* The endpoint opens when the first round is due, not at the first wait: init's own barrier would open it in every
   * PE, and on tcp;ofi_rxm an endpoint's fi_enable fills buffer pools (0.2-0.3 s of init at 2 PEs, 0.6 s at 8 on 2
   * CPUs; issue 29). Until then there is no endpoint, so nothing for a stranger to send to either. */
  bool due = !wt.out && now - wt.round_ns >= quarter;
  if (wt.out < 0 || (!wt.ep && due && watch_open())) {
    wt.out = -1, wt.timeout_ns = 0;
  } else if (wt.ep) {
    if (wt.out) watch_post();
    watch_drain(); /* probes' answers, and what strangers sent to this endpoint */
    if (wt.out && now - wt.round_ns > wt.timeout_ns) {
      int p = 0;
      while (p < shoal_ofi.npes && !wt.pending[p]) p++;
      watch_fatal(p, "link down, or the PE is stopped or gone");
    }
    if (!wt.out && now - wt.round_ns >= quarter) watch_round(now);
  }
  pthread_mutex_unlock(&wt.mu);
}

shoal_status_t shoal_ofi_watch_init(void) {
  long t = shoal_env.ofi_timeout;
  wt.pending = calloc((size_t)shoal_ofi.npes, 1);
  wt.ctx = calloc((size_t)shoal_ofi.npes, sizeof *wt.ctx);
  if (!wt.pending || !wt.ctx) return SHOAL_ERR_NOMEM;
  wt.out = 0;
  wt.timeout_ns = t > 0 ? (int64_t)t * 1000000000 : 0;
  wt.next_ns = wt.last_ns = wt.round_ns = now_ns();
  return SHOAL_OK;
}

void shoal_ofi_watch_fini(void) {
  shoal_ofi_close_fid(&wt.ep);
  shoal_ofi_close_fid(&wt.cq);
  free(wt.pending);
  free(wt.ctx);
  wt.pending = NULL, wt.ctx = NULL;
  wt.timeout_ns = 0, wt.out = 0;
}

/* A context's endpoint moves only when called (manual progress): a PE's waits (shoal_ofi_progress) and the progress
 * thread drive every one, or a context's nbi data queued behind a full socket would wait for that context's next call
 * (a flag after it, waited for by a peer, never arriving). Any thread may: the domain is FI_THREAD_SAFE. */
void shoal_ofi_tx_progress_all(void) {
  if (pthread_mutex_trylock(&shoal_ofi_txs_mu)) return; /* one driver at a time is enough */
  for (txep_t *t = shoal_ofi.txs.next; t && t != &shoal_ofi.txs; t = t->next) fi_cntr_read(t->wcntr);
  pthread_mutex_unlock(&shoal_ofi_txs_mu);
}

/* note_issue's progress call (ofi.h): the main endpoint's, and the contexts' endpoints', which the thread drives
 * while it does not stand back (a context's nbi data queued behind a full socket waits for it). note_issue skips a PE
 * with a device heap: a peer's staged chunk costs its target a copy into that heap, which the thread does beside the
 * PE's issuing (on a CPU of its own where the node has one: proxy.c), not inside it (gpu_fake_far's copies, slowed
 * to 50 ms, then ran inside a PE's puts). The flag is only a guard against re-entry: nothing a progress call runs
 * issues through MT_ISSUE, and the progress thread, which sets it for good when it starts, issues nothing through it
 * either. */
static _Thread_local bool issue_polling;
void shoal_ofi_issue_poll(void) {
  if (issue_polling) return;
  issue_polling = true;
  shoal_ofi_progress_once();
  if (atomic_load_explicit(&shoal_ofi.ntx, memory_order_relaxed)) shoal_ofi_tx_progress_all();
  issue_polling = false;
}

/* While the PE polls the endpoint itself (it did within PT_HOLD_NS: a fixed window, so that a PE making only short
 * calls now and then does not keep the thread away), the thread sleeps a hold and looks again; otherwise it waits
 * on the sockets. It polls the CQ's fd itself: fi_cq_sread would run the provider's progress at every byte that
 * arrives, whoever else polls, until a receive completes. A provider whose CQ has no fd, or whose fabric cannot
 * fi_trywait, gets fi_cq_sread with a timeout of a millisecond instead.
 * On net (wait_fd_sticks), a wake that finds no entry takes one fi_cq_sread of a millisecond: libfabric 1.17's net
 * signals its CQ's fd with a byte at every entry that only the CQ's own wait reads back (its fi_trywait does not), so
 * once one entry had come (a put_signal's flag, a fallback request) the fd stayed readable and the thread spun
 * whenever its PE was not polling: a CPU per PE (tests/p2p/idle_thread.c; over net 4 PEs on 2 CPUs small fcollects
 * took twice as long). */
void *shoal_ofi_progress_main(void *arg) {
  struct fi_cq_data_entry e[8];
  struct fid *cq = &shoal_ofi.rxcq->fid;
  long hold = PT_HOLD_NS;
  int fd = shoal_ofi.wait_fd;
  bool woke = false; /* the last poll of fd found it readable */
  (void)arg;
  issue_polling = true; /* never a progress call of note_issue's here (the thread issues nothing through MT_ISSUE) */
  while (!atomic_load(&shoal_ofi.stop)) {
    if (pe_polls(PT_HOLD_NS)) {
      struct timespec ts = {0, hold};
      nanosleep(&ts, NULL);
      atomic_fetch_add_explicit(&shoal_ofi.thread_holds, 1, memory_order_relaxed);
      hold = hold * 2 < PT_HOLD_MAX_NS ? hold * 2 : PT_HOLD_MAX_NS;
      continue;
    }
    hold = PT_HOLD_NS;
    atomic_fetch_add_explicit(&shoal_ofi.thread_progress, 1, memory_order_relaxed);
    if (atomic_load_explicit(&shoal_ofi.ntx, memory_order_relaxed))
      shoal_ofi_tx_progress_all(); /* contexts' endpoints too */
    shoal_ofi_copies_reap();
    /* staged copies running (a few us each): look again at once rather than sleep on the fd */
    bool copies = atomic_load_explicit(&shoal_ofi.pend_out, memory_order_relaxed);
    ssize_t n;
    if (fd >= 0) {
      n = fi_cq_read(shoal_ofi.rxcq, e, 8); /* the provider's progress, once */
      if (n == -FI_EAGAIN && woke && shoal_ofi.wait_fd_sticks && !copies)
        n = fi_cq_sread(shoal_ofi.rxcq, e, 8, NULL, 1);
      woke = false;
      int tw = n == -FI_EAGAIN ? fi_trywait(shoal_ofi.fabric, &cq, 1) : -FI_EAGAIN;
      if (tw == FI_SUCCESS && !atomic_load(&shoal_ofi.stop)) { /* stop again: trywait may have eaten fini's signal */
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        woke = poll(&pfd, 1, copies ? 0 : 1000) > 0; /* fini signals the CQ; the timeout is only a look at stop */
        if (copies && !woke) nanosleep(&(struct timespec){0, 20000}, NULL); /* a copy takes microseconds */
        continue;            /* bytes came: the PE may be polling for them itself */
      }
      if (tw != FI_SUCCESS && tw != -FI_EAGAIN) fd = -1; /* no trywait here: never spin, use fi_cq_sread */
    } else {
      n = copies ? fi_cq_read(shoal_ofi.rxcq, e, 8) : fi_cq_sread(shoal_ofi.rxcq, e, 8, NULL, PT_HOLD_NS / 1000000 + 1);
    }
    if (n > 0)
      rx_handle(e, n);
    else if (n == -FI_EAVAIL && !atomic_load(&shoal_ofi.stop))
      rx_error();
  }
  return NULL;
}

/* ---- waiting ---- */
/* ---- non-fetching fallback AMOs in flight (amo.c) ----
 * Their callers have returned, so the waits look after them: every FB_LOOK_NS at most (force: now), a request
 * unanswered past its resend time is sent again (same id: the target answers it from its record, never does it
 * twice), and one unanswered for SHOAL_OFI_TIMEOUT of waiting ends the job, as a fetching AMO's own wait does. The
 * slot is claimed (1 -> 5) while it is read, so that its answer cannot free it meanwhile. */
void shoal_ofi_fb_tend(bool force) {
  if (SHOAL_LIKELY(!atomic_load_explicit(&shoal_ofi.fb_async, memory_order_relaxed))) return;
  int64_t now = now_ns(), to = shoal_ofi_watch_timeout_ns();
  if (!force && now < atomic_load_explicit(&shoal_ofi.fb_next_ns, memory_order_relaxed)) return;
  if (pthread_mutex_trylock(&shoal_ofi.fb_mu)) return;
  atomic_store_explicit(&shoal_ofi.fb_next_ns, now + FB_LOOK_NS, memory_order_relaxed);
  for (int i = 0; i < NWAIT; i++) {
    waiter_t *w = &shoal_ofi.waiters[i];
    uint32_t waiting = 1;
    if (!atomic_load_explicit(&w->async, memory_order_relaxed) ||
        !atomic_compare_exchange_strong(&w->state, &waiting, 5))
      continue;
    if (atomic_load(&w->async)) { /* still: the slot may have gone to a fetching AMO since the first look */
      if (to && now - w->last > to / 4) w->t0 += now - w->last; /* this PE did not wait meanwhile: not the peer */
      w->last = now;
      if (now > w->resend) { /* the request or its answer may be lost (net: no receive posted) */
        ssize_t r = shoal_ofi_send_msg(&w->m, w->pe);
        if (r) shoal_ofi_fail("fi_inject", r); /* tried again at the next resend; the timeout ends it */
        w->rto = w->rto * 2 < RESEND_MAX_NS ? w->rto * 2 : RESEND_MAX_NS;
        w->resend = now + w->rto;
      }
      if (to && now - w->t0 > to)
        shoal_fatal("ofi", "PE %d did not answer for %.1f s (a %s request of the message fallback: link down, the PE "
                    "stopped or gone, or the message lost; SHOAL_OFI_TIMEOUT=%lld): ending the job", w->pe,
                    (double)(now - w->t0) / 1e9, w->m.kind == MSG_DPUT ? "staged put" : amo_ops[w->m.op].name,
                    (long long)(to / 1000000000));
    }
    atomic_store_explicit(&w->state, 1, memory_order_release);
  }
  pthread_mutex_unlock(&shoal_ofi.fb_mu);
}

/* While a call waits for the wire: the counters' reads run the provider's progress; where fallback AMOs can come,
 * this PE also answers their requests here (two PEs may wait for each other's answer, and the thread stands back
 * while the PE polls). */
void shoal_ofi_progress_once(void) {
  shoal_ofi_watch();
  shoal_ofi_fb_tend(false);
  if (shoal_ofi.thread_on) note_poll();
  if (shoal_ofi.rx_main) shoal_ofi_rx_poll(); /* fi_cq_read runs the provider's progress too */
  else shoal_ofi_copies_reap(), fi_cntr_read(shoal_ofi.t0.wcntr);
}

/* Until every operation counted on c (issued: how many) completed; an operation that failed is reported once. done:
 * the largest count of operations other than flag writes (issued less sigs, NULL: none) seen complete, so that a
 * wait with nothing issued since but the runtime's flag writes returns without reading the counter: each read is a
 * provider progress call, and no caller needs a flag write's own completion (its 8 bytes are injected; a barrier's
 * peer waits for it). 2 PEs over net: an empty quiet took 5.3 us, and shmem_barrier_all's quiet always followed the
 * previous barrier's signal. One thread at a time issues and waits on an endpoint (MT), so issued and sigs are read
 * together; counts only grow, so done stays true. */
shoal_status_t shoal_ofi_wait_cntr(txep_t *t, struct fid_cntr *c, _Atomic uint64_t *issued, _Atomic uint64_t *errs,
                                   _Atomic uint64_t *done, _Atomic uint64_t *sigs) {
  uint64_t s = sigs ? atomic_load(sigs) : 0, want = atomic_load(issued);
  if (want - s <= atomic_load_explicit(done, memory_order_acquire)) return SHOAL_OK;
  atomic_fetch_add_explicit(&t->cntr_waits, 1, memory_order_relaxed);
  shoal_status_t rc = SHOAL_OK;
  shoal_wait_t w = {0};
  for (unsigned spins = 0;; spins++) {
    uint64_t ok = fi_cntr_read(c), bad = fi_cntr_readerr(c), seen = atomic_load(errs);
    if (bad > seen && atomic_compare_exchange_strong(errs, &seen, bad)) rc = shoal_ofi_report_cq_error(t->txcq);
    if (ok + bad >= want) {
      uint64_t d = atomic_load_explicit(done, memory_order_relaxed);
      while (d < want - s && !atomic_compare_exchange_weak_explicit(done, &d, want - s, memory_order_release,
                                                                    memory_order_relaxed)) {
      }
      return rc;
    }
    if (shoal_ofi.thread_on) note_poll();
    if (spins % WAIT_POLLS == 0) {
      shoal_ofi_watch();
      shoal_ofi_fb_tend(false);
      if (shoal_ofi.rx_main) shoal_ofi_rx_poll(); /* answers to peers: a second progress call */
      else if (t != &shoal_ofi.t0) fi_cntr_read(shoal_ofi.t0.wcntr); /* peers' RMA on this PE: the thread stands back */
    }
    wait_backoff(&w, spins);
  }
}

/* ---- completion ---- */
/* Until every non-fetching fallback AMO issued on t was answered (performed at its target); one refused is
 * reported here, its line said when the answer came. The answers come to the receive CQ, polled here. */
void shoal_ofi_fb_step(shoal_wait_t *ws, unsigned spins) {
  if (shoal_ofi.thread_on) note_poll();
  if (spins % WAIT_POLLS == 0) {
    shoal_ofi_watch();
    shoal_ofi_fb_tend(false);
  }
  shoal_ofi_rx_poll();
  wait_backoff(ws, spins);
}

shoal_status_t shoal_ofi_fb_drain(txep_t *t) {
  shoal_wait_t ws = {0};
  for (unsigned spins = 0; atomic_load_explicit(&t->fb_out, memory_order_acquire); spins++) {
    shoal_ofi_fb_step(&ws, spins);
    if (t != &shoal_ofi.t0) fi_cntr_read(t->wcntr); /* its own endpoint's progress: staged chunks' writes and sends */
  }
  if (SHOAL_UNLIKELY(atomic_load(&t->fb_err))) {
    atomic_store(&t->fb_err, 0);
    return SHOAL_ERR_INVAL;
  }
  return SHOAL_OK;
}

/* The flush reads: one byte from every PE written on t since its last flush (RMA_RAW: each completes once the writes
 * before it are in place there), posted; WAIT_R(t) waits for them. */
shoal_status_t shoal_ofi_flush_post(txep_t *t) {
  if (shoal_ofi.flush && atomic_exchange(&t->dirty_any, false)) {
    for (int p = 0; p < shoal_ofi.npes; p++) {
      if (!atomic_load_explicit(&t->dirty[p], memory_order_relaxed) || !atomic_exchange(&t->dirty[p], 0)) continue;
      int s = 0;
      while (s < SHOAL_SPACE_MAX && !shoal_ofi.rlen[s][p]) s++;
      POST(t, "fi_read",
           fi_read(t->ep, &t->flush_byte[p % SHOAL_CACHELINE], 1, NULL, shoal_ofi.addr[p], shoal_ofi.rbase[s][p],
                   shoal_ofi.rkey[s][p], NULL));
      atomic_fetch_add_explicit(&t->r_issued, 1, memory_order_relaxed);
    }
  }
  return SHOAL_OK;
}

shoal_status_t shoal_ofi_quiet_common(txep_t *t) {
  if (SHOAL_UNLIKELY(!shoal_ofi.up)) return shoal_ofi_bad_call("shoal_tl_ofi_quiet", 0, 0, 0, 0);
  shoal_status_t rf = shoal_ofi_fb_drain(t), rp = shoal_ofi_flush_post(t);
  if (rp) return rp;
  shoal_status_t rw = WAIT_W(t), rr = WAIT_R(t);
  if (!rw && !rr) t->amo_out = t->fence_w = t->fence_a = t->wbuf_out = false;
  if (!rr) atomic_store_explicit(&t->carried, false, memory_order_relaxed);
  if (!rw) t->bounce_pos = 0;
  return rw ? rw : rr ? rr : rf;
}

/* A pending fence, before an operation of the kind that it must follow: a put follows the puts before the fence on
 * its own (FI_ORDER_RMA_WAW) but the AMOs only once they completed; an AMO follows the AMOs (FI_ORDER_ATOMIC_WAW and
 * _RAW) but the puts only after a quiet's flush. The fallback's messages have no order against either. */
shoal_status_t shoal_ofi_fence_before(txep_t *t, bool amo, bool fallback) {
  if (amo && (t->fence_w || (fallback && t->fence_a))) return shoal_ofi_quiet_common(t);
  if (!amo && t->fence_a) {
    shoal_status_t rc = WAIT_W(t);
    if (!rc) t->fence_a = t->amo_out = t->wbuf_out = false;
    return rc;
  }
  return SHOAL_OK;
}

/* quiet and fence of ep, a context's endpoint, or NULL for the default context's: that endpoint's operations only. */
shoal_status_t shoal_ofi_quiet(void *ep) {
  txep_t *t = ep ? ep : &shoal_ofi.t0;
  MT(t, shoal_ofi_quiet_common(t));
}
/* A counter read runs the provider's progress (rxm/tcp: one epoll_wait(0) over the endpoint's sockets). */
void shoal_ofi_progress(void) {
  if (SHOAL_LIKELY(shoal_ofi.up)) {
    shoal_ofi_progress_once();
    if (SHOAL_UNLIKELY(atomic_load_explicit(&shoal_ofi.ntx, memory_order_relaxed))) shoal_ofi_tx_progress_all();
  }
}
/* The provider orders neither RMA against AMOs nor AMOs against the reads of a flush (rxm performs an AMO after the
 * RMA behind it on the wire), but it orders puts among themselves and AMOs among themselves. So where it says so
 * (lazy_fence), a fence only notes what was issued before it, and the next put or AMO waits for what it must
 * follow (shoal_ofi_fence_before): a put, fence, put (a ping-pong's data and flag) costs no round trip. Otherwise, and
 * without RMA_RAW, fence is a quiet; either costs nothing when nothing is outstanding. */
shoal_status_t shoal_ofi_fence_common(txep_t *t) {
  if (!shoal_ofi.lazy_fence) return shoal_ofi_quiet_common(t);
  if (SHOAL_UNLIKELY(!shoal_ofi.up)) return shoal_ofi_bad_call("shoal_tl_ofi_fence", 0, 0, 0, 0);
  /* The fallback's messages have no order against puts or native AMOs, nor among themselves when one is lost and
   * sent again: the fence waits for their answers (a round trip, only when some are in flight). */
  shoal_status_t rc = shoal_ofi_fb_drain(t);
  if (rc) return rc;
  if (atomic_load_explicit(&t->dirty_any, memory_order_relaxed)) t->fence_w = true;
  if (t->amo_out) t->fence_a = true;
  return SHOAL_OK;
}
shoal_status_t shoal_ofi_fence(void *ep) {
  txep_t *t = ep ? ep : &shoal_ofi.t0;
  MT(t, shoal_ofi_fence_common(t));
}
