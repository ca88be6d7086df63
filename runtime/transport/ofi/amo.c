/* amo.c - the libfabric transport: see ofi.h */
#include "ofi.h"

/* ---- AMOs ---- */
/* A fetching fallback AMO to pe waits first for the non-fetching ones in flight to pe: the provider delivers one
 * peer's messages in order, but a lost request overtaken by a later one would not be (an inc then a fetch of the
 * same object must see the inc, as natively: FI_ORDER_ATOMIC_RAW). Nothing to scan while none is in flight. */
static void fb_wait_pe(int pe) {
  shoal_wait_t ws = {0};
  for (unsigned spins = 0; atomic_load_explicit(&shoal_ofi.fb_async, memory_order_acquire); spins++) {
    bool busy = false;
    for (int i = 0; i < NWAIT && !busy; i++)
      busy = atomic_load_explicit(&shoal_ofi.waiters[i].async, memory_order_acquire) && shoal_ofi.waiters[i].pe == pe;
    if (!busy) return;
    shoal_ofi_fb_step(&ws, spins);
  }
}

/* What a request of kind does, for lines: the AMO's name, or the staged copy's. */
static const char *req_name(int kind, int op) {
  return kind == MSG_DPUT ? "staged put" : kind == MSG_DGET ? "staged get" : amo_ops[op].name;
}

/* The message fallback's requester side (the target's: msg.c); also the staged path's requests (kind MSG_DPUT,
 * MSG_DGET, and MSG_REQ on the device heap: rma.c), which wait for their answer as a fetching AMO. A fetching AMO
 * waits in its slot for the answer. A
 * non-fetching one returns once its request is sent (fire and forget, as a native fi_atomic with FI_INJECT): its
 * slot keeps the request and t, the endpoint it was issued on, whose fb_out counts it until the answer frees the
 * slot; quiet and fence on t wait for them (shoal_ofi_fb_drain), and the waits send them again and time them out
 * (shoal_ofi_fb_tend). At most fb_cap of them are in flight from a PE: the next waits for an answer. */
/* Claim a waiter slot for a request (state 3: no answer may claim it yet; async: a place among the fb_cap in flight
 * too) and make its message in p->m, with its id: not sent yet (fb_send). */
static shoal_status_t fb_claim(int kind, int space, int pe, size_t off, int op, size_t size, uint64_t v, uint64_t c,
                               bool async, shoal_ofi_fb_pending_t *p) {
  if (!shoal_ofi.fallback_ok) {
    shoal_warn("fi_atomic: %s has no native %s on this type and no room for the message fallback (inject_size %zu)",
               shoal_ofi.info->fabric_attr->prov_name, req_name(kind, op), shoal_ofi.inject_size);
    return SHOAL_ERR_NOSYS;
  }
  shoal_wait_t ws = {0};
  if (async) {
    for (unsigned spins = 0;; spins++) { /* a place among the fb_cap in flight: drains through progress */
      int n = atomic_load(&shoal_ofi.fb_async);
      if (n < shoal_ofi.fb_cap && atomic_compare_exchange_weak(&shoal_ofi.fb_async, &n, n + 1)) break;
      shoal_ofi_progress_once();
      if (n >= shoal_ofi.fb_cap) wait_backoff(&ws, spins);
    }
  } else {
    fb_wait_pe(pe);
  }
  waiter_t *w = NULL;
  for (unsigned i = 0, spins = 0;; i = (i + 1) % NWAIT) {
    uint32_t free_ = 0;
    if (atomic_compare_exchange_weak(&shoal_ofi.waiters[i].state, &free_, 3)) { /* 3: no answer may claim it yet */
      w = &shoal_ofi.waiters[i];
      break;
    }
    if (i == NWAIT - 1) { /* all taken (other threads' AMOs): they drain through progress */
      shoal_ofi_progress_once();
      wait_backoff(&ws, spins++);
    }
  }
  uint64_t gen = (atomic_load(&w->gen) + 1) & ((1ull << 56) - 1);
  atomic_store(&w->gen, gen ? gen : 1); /* generation 0 is that of a target's empty record */
  amo_msg_t m = {.kind = (uint8_t)kind, .op = (uint8_t)op, .size = (uint8_t)size, .space = (uint8_t)space, .pe = shoal_ofi.me,
                 .off = off, .operand = v, .compare = c,
                 .id = (uint64_t)(w - shoal_ofi.waiters) | atomic_load(&w->gen) << 8, .token = shoal_ofi.rtoken[pe]};
  *p = (shoal_ofi_fb_pending_t){.w = w, .m = m, .pe = pe};
  return SHOAL_OK;
}

/* Send p's claimed request from ep (the main endpoint, or t's own: the staged put's chunk follows its write there),
 * issued on t; or, with wd, as the bytes of wd's write from t's endpoint (shoal_ofi_fb_post_write). On failure the
 * slot is freed. */
struct fb_write { const void *buf; size_t len; uint64_t raddr, key, data; };
static shoal_status_t fb_send(txep_t *t, shoal_ofi_fb_pending_t *p, bool async, struct fid_ep *ep,
                              const struct fb_write *wd) {
  waiter_t *w = p->w;
  const int pe = p->pe;
  if (async) {
    int64_t now = now_ns();
    w->m = p->m, w->pe = pe, w->owner = t;
    w->t0 = w->last = now, w->rto = RESEND_NS, w->resend = now + RESEND_NS;
    atomic_store(&w->async, true);
    atomic_fetch_add(&t->fb_out, 1); /* before state 1: the answer may come at once */
  }
  atomic_store_explicit(&w->state, 1, memory_order_release);
  ssize_t r;
  /* A full transmit queue (behind a dead link, say): progress and the watch while it drains. */
  while ((r = wd ? fi_writedata(t->ep, wd->buf, wd->len, NULL, wd->data, shoal_ofi.addr[pe], wd->raddr, wd->key, NULL)
                 : fi_inject(ep, &p->m, sizeof p->m, shoal_ofi.addr[pe])) == -FI_EAGAIN) {
    shoal_ofi_progress_once();
    if (wd || ep != shoal_ofi.ep) fi_cntr_read(t->wcntr); /* a context's own endpoint: its progress */
  }
  if (!r && wd) atomic_fetch_add_explicit(&t->w_issued, 1, memory_order_relaxed);
  if (r) {
    uint32_t waiting = 1; /* nothing sent, nothing to answer it; only a resend's look (5) may hold it a moment */
    while (!atomic_compare_exchange_weak(&w->state, &waiting, 3)) waiting = 1;
    if (async) {
      atomic_store(&w->async, false);
      atomic_fetch_sub(&t->fb_out, 1);
      atomic_fetch_sub(&shoal_ofi.fb_async, 1);
    }
    atomic_store(&w->state, 0);
    return shoal_ofi_fail(wd ? "fi_writedata" : "fi_inject", r);
  }
  return SHOAL_OK;
}

/* Send a request; an answered one (not async) leaves its slot and message in *p for fb_finish. */
static shoal_status_t fb_start(txep_t *t, int kind, int space, int pe, size_t off, int op, size_t size, uint64_t v,
                               uint64_t c, bool async, shoal_ofi_fb_pending_t *p) {
  shoal_status_t rc = fb_claim(kind, space, pe, off, op, size, v, c, async, p);
  return rc ? rc : fb_send(t, p, async, shoal_ofi.ep, NULL);
}

/* Wait for the answer of p's request (resending it, timing it out), free its slot; fetch gets the old value. */
static shoal_status_t fb_finish(shoal_ofi_fb_pending_t *p, void *fetch) {
  waiter_t *w = p->w;
  const amo_msg_t m = p->m;
  const int pe = p->pe, kind = m.kind, op = m.op, space = m.space;
  const size_t off = m.off, size = m.size;
  ssize_t r;
  shoal_wait_t ws = {0};
  /* Answers land in the receive CQ, which the progress thread reads too: poll it here rather than wait for that
   * thread's wake-up (whoever reads the answer fills w). */
  int64_t t0 = now_ns(), last = t0, resend = t0 + RESEND_NS, rto = RESEND_NS;
  for (unsigned spins = 0; atomic_load_explicit(&w->state, memory_order_acquire) != 2; spins++) {
    if (shoal_ofi.thread_on) note_poll();
    if (spins % WAIT_POLLS == 0) {
      shoal_ofi_watch();
      int64_t now = now_ns();
      if (now - last > shoal_ofi_watch_timeout_ns() / 4)
        t0 += now - last; /* this PE was stopped (a suspended job): not the peer */
      last = now;
      if (now > resend) { /* the request or its answer may be lost (net: none posted): again, same id */
        while ((r = fi_inject(shoal_ofi.ep, &m, sizeof m, shoal_ofi.addr[pe])) == -FI_EAGAIN) shoal_ofi_progress_once();
        if (r) {
          atomic_store(&w->state, 0);
          return shoal_ofi_fail("fi_inject", r);
        }
        rto = rto * 2 < RESEND_MAX_NS ? rto * 2 : RESEND_MAX_NS;
        resend = now + rto;
      }
      /* Unanswered for the timeout, resends and all (a dead link, or messages lost again and again): a line and the
       * end of the job, as the watch's, not a silent hang. */
      if (shoal_ofi_watch_timeout_ns() && now - t0 > shoal_ofi_watch_timeout_ns())
        shoal_fatal("ofi", "PE %d did not answer for %.1f s (a %s request of the message fallback: link down, the PE "
                    "stopped or gone, or the message lost; SHOAL_OFI_TIMEOUT=%lld): ending the job", pe,
                    (double)(now - t0) / 1e9, req_name(kind, op), (long long)(shoal_ofi_watch_timeout_ns() / 1000000000));
    }
    shoal_ofi_rx_poll();
    wait_backoff(&ws, spins);
  }
  shoal_status_t rc = w->status;
  uint64_t old = w->value;
  atomic_store_explicit(&w->state, 0, memory_order_release);
  if (rc) {
    shoal_warn("fi_atomic: pe %d refused the %s at offset %zu of space %d", pe, req_name(kind, op), off, space);
    return rc;
  }
  if (fetch) memcpy(fetch, &old, size); /* little-endian: the low bytes */
  return SHOAL_OK;
}

shoal_status_t shoal_ofi_fb_claim(int kind, int space, int pe, size_t off, size_t size, uint64_t v, uint64_t c,
                                  shoal_ofi_fb_pending_t *p) {
  return fb_claim(kind, space, pe, off, 0, size, v, c, true, p);
}
shoal_status_t shoal_ofi_fb_post(txep_t *t, shoal_ofi_fb_pending_t *p, struct fid_ep *ep) {
  return fb_send(t, p, true, ep, NULL);
}
shoal_status_t shoal_ofi_fb_post_write(txep_t *t, shoal_ofi_fb_pending_t *p, const void *buf, size_t len, uint64_t raddr,
                                       uint64_t key, uint64_t data) {
  const struct fb_write wd = {buf, len, raddr, key, data};
  return fb_send(t, p, true, t->ep, &wd);
}
void shoal_ofi_fb_unclaim(shoal_ofi_fb_pending_t *p) {
  atomic_fetch_sub(&shoal_ofi.fb_async, 1);
  atomic_store(&p->w->state, 0);
}

shoal_status_t shoal_ofi_fb_request(txep_t *t, int kind, int space, int pe, size_t off, int op, size_t size, uint64_t v,
                                    uint64_t c, void *fetch) {
  const bool async = kind == MSG_REQ && amo_ops[op].kind == K_WRITE;
  shoal_ofi_fb_pending_t p;
  shoal_status_t rc = fb_start(t, kind, space, pe, off, op, size, v, c, async, &p);
  return rc || async ? rc : fb_finish(&p, fetch);
}

shoal_status_t shoal_ofi_amo_common(txep_t *t, int space, int pe, size_t off, int op, int type, const void *operand,
                                 const void *compare, void *fetch) {
  if (SHOAL_UNLIKELY((unsigned)op >= SHOAL_TL_AMO_NOPS || (unsigned)type >= SHOAL_TL_NTYPES ||
                     !(amo_ops[op].cls & amo_types[type].cls))) {
    shoal_warn("shoal_tl_ofi_amo: op %d on type %d is no AMO of spec 9.8", op, type);
    return SHOAL_ERR_INVAL;
  }
  size_t size = amo_types[type].size;
  int kind = amo_ops[op].kind;
  bool needs_operand = op != SHOAL_TL_AMO_FETCH && op != SHOAL_TL_AMO_INC && op != SHOAL_TL_AMO_FETCH_INC;
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
  if (SHOAL_UNLIKELY(t->fence_w || t->fence_a)) {
    /* Fallback requests leave from the main endpoint, t0's: on t0 one follows the puts before it, and where the
     * provider places a send's message after the writes before it (saw) the target performs it after them. So the
     * fence costs no quiet's round trip (PRK stencil's put, fence, inc; issue 29), resends included. A context's
     * puts go on its own endpoint, which the request could overtake: the quiet stays. */
    if (!shoal_ofi.native[type] && shoal_ofi.saw && !t->fence_a && t->ep == shoal_ofi.ep)
      return shoal_ofi_fb_request(t, MSG_REQ, space, pe, off, op, size, v, c, fetch);
    if ((rc = shoal_ofi_fence_before(t, true, !shoal_ofi.native[type]))) return rc;
  }
  if (!shoal_ofi.native[type]) return shoal_ofi_fb_request(t, MSG_REQ, space, pe, off, op, size, v, c, fetch);

  uint64_t raddr = shoal_ofi.rbase[space][pe] + off, key = shoal_ofi.rkey[space][pe];
  enum fi_datatype dt = amo_types[type].dt;
  if (kind == K_WRITE) {
    struct fi_ioc iov = {&v, 1};
    struct fi_rma_ioc riov = {raddr, 1, key};
    struct fi_msg_atomic msg = {.msg_iov = &iov, .iov_count = 1, .addr = shoal_ofi.addr[pe], .rma_iov = &riov,
                                .rma_iov_count = 1, .datatype = dt, .op = amo_ops[op].op};
    POST(t, "fi_atomic", fi_atomicmsg(t->ep, &msg, FI_INJECT | FI_DELIVERY_COMPLETE));
    atomic_fetch_add_explicit(&t->w_issued, 1, memory_order_relaxed);
    t->amo_out = true;
    return SHOAL_OK;
  }
  uint64_t old = 0;
  if (kind == K_FETCH)
    POST(t, "fi_fetch_atomic", fi_fetch_atomic(t->ep, &v, 1, NULL, &old, NULL, shoal_ofi.addr[pe], raddr, key, dt,
                                               amo_ops[op].op, NULL));
  else
    POST(t, "fi_compare_atomic", fi_compare_atomic(t->ep, &v, 1, NULL, &c, NULL, &old, NULL, shoal_ofi.addr[pe], raddr,
                                                   key, dt, FI_CSWAP, NULL));
  atomic_fetch_add_explicit(&t->r_issued, 1, memory_order_relaxed);
  rc = WAIT_R(t);
  if (!rc) memcpy(fetch, &old, size);
  return rc;
}

/* On ep, a context's endpoint (shoal_ofi_ctx_create), or NULL for the default context's. */
shoal_status_t shoal_ofi_amo(void *ep, int space, int pe, size_t off, int op, int type, const void *operand,
                             const void *compare, void *fetch) {
  txep_t *t = ep ? ep : &shoal_ofi.t0;
  MT_ISSUE(t, shoal_ofi_amo_common(t, space, pe, off, op, type, operand, compare, fetch));
}
