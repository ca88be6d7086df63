/* rma.c - the libfabric transport: see ofi.h */
#include "ofi.h"

/* ---- RMA ---- */
static shoal_status_t write_dc(txep_t *t, const void *src, size_t n, int pe, uint64_t raddr, uint64_t key,
                               uint64_t flags) {
  struct iovec iov = {(void *)src, n};
  struct fi_rma_iov riov = {raddr, n, key};
  struct fi_msg_rma msg = {.msg_iov = &iov, .iov_count = 1, .addr = shoal_ofi.addr[pe], .rma_iov = &riov,
                           .rma_iov_count = 1};
  POST(t, "fi_writemsg", fi_writemsg(t->ep, &msg, flags | FI_DELIVERY_COMPLETE));
  return SHOAL_OK;
}

/* n (at most BOUNCE_SIG_MAX) bytes of src copied into t's bounce arena, at *b (ofi.h: a blocking write sent from
 * there returns without waiting for its local completion). */
static shoal_status_t bounce_copy(txep_t *t, const void *src, size_t n, const char **b) {
  shoal_status_t rc;
  if (SHOAL_UNLIKELY(!t->bounce) && !(t->bounce = malloc(BOUNCE_BYTES))) return SHOAL_ERR_NOMEM;
  if (t->bounce_pos + n > BOUNCE_BYTES) { /* full: every write of t done, so is every copy's read */
    if ((rc = WAIT_W(t))) return rc;
    t->bounce_pos = 0;
  }
  *b = t->bounce + t->bounce_pos;
  memcpy(t->bounce + t->bounce_pos, src, n);
  t->bounce_pos += (n + SHOAL_CACHELINE - 1) & ~(size_t)(SHOAL_CACHELINE - 1);
  return SHOAL_OK;
}

static shoal_status_t put_common(txep_t *t, int space, int pe, size_t off, const void *src, size_t n, bool nbi) {
  if (!n) return SHOAL_OK;
  uint64_t raddr = shoal_ofi.rbase[space][pe] + off, key = shoal_ofi.rkey[space][pe];
  shoal_status_t rc;
  if (SHOAL_UNLIKELY(t->fence_a) && (rc = shoal_ofi_fence_before(t, false, false))) return rc;
  if (n <= shoal_ofi.inject_size) { /* src is free on return: nothing to wait for, even when blocking */
    if (SHOAL_LIKELY(shoal_ofi.flush))
      POST(t, "fi_inject_write", fi_inject_write(t->ep, src, n, shoal_ofi.addr[pe], raddr, key));
    else if ((rc = write_dc(t, src, n, pe, raddr, key, FI_INJECT)))
      return rc;
    atomic_fetch_add_explicit(&t->w_issued, 1, memory_order_relaxed);
    mark_dirty(t, pe);
    return SHOAL_OK;
  }
  if (!nbi && n <= BOUNCE_PUT_MAX && shoal_ofi.bounce_ok) {
    const char *b;
    if ((rc = bounce_copy(t, src, n, &b))) return rc;
    POST(t, "fi_write", fi_write(t->ep, b, n, NULL, shoal_ofi.addr[pe], raddr, key, NULL));
    atomic_fetch_add_explicit(&t->w_issued, 1, memory_order_relaxed);
    mark_dirty(t, pe);
    return SHOAL_OK;
  }
  for (size_t done = 0; done < n;) {
    size_t len = n - done < shoal_ofi.max_msg ? n - done : shoal_ofi.max_msg;
    if (shoal_ofi.flush)
      POST(t, "fi_write",
           fi_write(t->ep, (const char *)src + done, len, NULL, shoal_ofi.addr[pe], raddr + done, key, NULL));
    else if ((rc = write_dc(t, (const char *)src + done, len, pe, raddr + done, key, 0)))
      return rc;
    atomic_fetch_add_explicit(&t->w_issued, 1, memory_order_relaxed);
    done += len;
  }
  mark_dirty(t, pe);
  if (nbi) t->wbuf_out = true;
  if (nbi) return SHOAL_OK;
  if ((rc = WAIT_W(t))) return rc;
  t->bounce_pos = 0; /* every write of t done: the copies' room too */
  return SHOAL_OK;
}

static shoal_status_t get_common(txep_t *t, int space, int pe, size_t off, void *dst, size_t n, bool nbi) {
  if (!n) return SHOAL_OK;
  uint64_t raddr = shoal_ofi.rbase[space][pe] + off, key = shoal_ofi.rkey[space][pe];
  shoal_status_t rc;
  if (SHOAL_UNLIKELY(!shoal_ofi.flush) && (rc = WAIT_W(t))) /* no RMA_RAW: a get must not pass the puts before it */
    return rc;
  for (size_t done = 0; done < n;) {
    size_t len = n - done < shoal_ofi.max_msg ? n - done : shoal_ofi.max_msg;
    POST(t, "fi_read", fi_read(t->ep, (char *)dst + done, len, NULL, shoal_ofi.addr[pe], raddr + done, key, NULL));
    atomic_fetch_add_explicit(&t->r_issued, 1, memory_order_relaxed);
    done += len;
  }
  return nbi ? SHOAL_OK : WAIT_R(t);
}

/* On h, a context's endpoint (shoal_ofi_ctx_create), or NULL for the default context's. */
shoal_status_t shoal_ofi_put(void *h, int space, int pe, size_t off, const void *src, size_t n, bool nbi) {
  txep_t *t = h ? h : &shoal_ofi.t0;
  MT_ISSUE(t, put_common(t, space, pe, off, src, n, nbi));
}
shoal_status_t shoal_ofi_get(void *h, int space, int pe, size_t off, void *dst, size_t n, bool nbi) {
  txep_t *t = h ? h : &shoal_ofi.t0;
  MT_ISSUE(t, get_common(t, space, pe, off, dst, n, nbi));
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
  if (SHOAL_UNLIKELY(off % sizeof v)) {
    shoal_warn("shoal_tl_ofi_signal: offset %zu on pe %d is not 8-byte aligned", off, pe);
    return SHOAL_ERR_INVAL;
  }
  shoal_status_t rc;
  txep_t *t = &shoal_ofi.t0;
  if (SHOAL_UNLIKELY(!shoal_ofi.lazy_fence || sizeof v > shoal_ofi.inject_size)) {
    if ((rc = shoal_ofi_quiet_common(t))) return rc;
    return shoal_ofi_amo_common(t, space, pe, off, SHOAL_TL_AMO_SET, SHOAL_TL_UINT64, &v, NULL, NULL);
  }
  /* Non-fetching fallback AMOs return before they are performed: their answers first (a round trip, only when some
   * are in flight), as an AMO of the fallback was complete at return before issue 29. */
  if (SHOAL_UNLIKELY(atomic_load_explicit(&t->fb_out, memory_order_relaxed)) && (rc = shoal_ofi_fb_drain(t))) return rc;
  if (t->amo_out || t->wbuf_out) { /* writes are locally complete once counted: AMOs delivered, sources free */
    if ((rc = WAIT_W(t))) return rc;
    t->amo_out = t->fence_a = t->wbuf_out = false;
  }
  POST(t, "fi_inject_write", fi_inject_write(t->ep, &v, sizeof v, shoal_ofi.addr[pe], shoal_ofi.rbase[space][pe] + off,
                                             shoal_ofi.rkey[space][pe]));
  atomic_fetch_add_explicit(&t->w_issued, 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&t->w_sig, 1, memory_order_relaxed); /* a flag write: quiet need not wait for it alone */
  return SHOAL_OK;
}
shoal_status_t shoal_ofi_signal(int space, int pe, size_t off, uint64_t v) {
  MT_ISSUE(&shoal_ofi.t0, signal_common(space, pe, off, v));
}

/* ---- the device heap of another node, staged through host memory (ofi.h MSG_DPUT; docs/gpu.md) ---- */
/* The staged requests travel as messages, with no order against RMA or native AMOs: a pending fence is a quiet. */
static shoal_status_t stage_fence(txep_t *t) {
  return SHOAL_UNLIKELY(t->fence_w || t->fence_a) ? shoal_ofi_fence_before(t, true, true) : SHOAL_OK;
}

/* n bytes of this PE's bounce at soff into its slot at pe at the same offset (soff + n at most a slot), posted.
 * Where the chunk's request goes right behind it (stage_saw) a plain write, as a put's: the target reads the bytes
 * only after that request, and the requester reuses them only after its answer. Otherwise the next WAIT_W(t) has
 * them delivered (FI_DELIVERY_COMPLETE: in pe's memory once counted), which the request then waits for. Measured on
 * an H100 (session 29, a kernel's nbi puts of 64 KiB): the chunk's write and request took 36 us of the proxy's time
 * with delivery-complete writes, 23 us with plain ones (a host put of 64 KiB: 15-20 us). */
static shoal_status_t stage_write(txep_t *t, const char *bounce, size_t n, int pe, size_t soff) {
  uint64_t raddr = shoal_ofi.rbase[SHOAL_SPACE_STAGE][pe] + (uint64_t)shoal_ofi.me * shoal_ofi.stage_slot + soff;
  const uint64_t key = shoal_ofi.rkey[SHOAL_SPACE_STAGE][pe];
  for (size_t done = 0, len; done < n; done += len) {
    len = n - done < shoal_ofi.max_msg ? n - done : shoal_ofi.max_msg;
    shoal_status_t rc = SHOAL_OK;
    if (shoal_ofi.stage_saw)
      POST(t, "fi_write", fi_write(t->ep, bounce + done, len, NULL, shoal_ofi.addr[pe], raddr + done, key, NULL));
    else
      rc = write_dc(t, bounce + done, len, pe, raddr + done, key, 0);
    if (rc) return rc;
    atomic_fetch_add_explicit(&t->w_issued, 1, memory_order_relaxed);
  }
  return SHOAL_OK;
}

/* n bytes (at most a slot) of this PE's slot at pe, which pe filled before answering, into the bounce. */
static shoal_status_t stage_read(txep_t *t, char *bounce, size_t n, int pe) {
  uint64_t raddr = shoal_ofi.rbase[SHOAL_SPACE_STAGE][pe] + (uint64_t)shoal_ofi.me * shoal_ofi.stage_slot;
  for (size_t done = 0, len; done < n; done += len) {
    len = n - done < shoal_ofi.max_msg ? n - done : shoal_ofi.max_msg;
    POST(t, "fi_read", fi_read(t->ep, bounce + done, len, NULL, shoal_ofi.addr[pe], raddr + done,
                               shoal_ofi.rkey[SHOAL_SPACE_STAGE][pe], NULL));
    atomic_fetch_add_explicit(&t->r_issued, 1, memory_order_relaxed);
  }
  return WAIT_R(t);
}

/* ---- staged put chunks in flight (ofi.h stage_q; under stage_mu) ---- */
/* Send chunk f, its bytes in the bounce: its tag after them, the write of both to the same place of this PE's slot
 * at its target, then its MSG_DPUT (from t's endpoint right behind the write where the provider orders a send after a
 * write, else from the main one once the write is delivered). With f->wd (put_signal's remote CQ data works here,
 * cq_signal) the request itself follows the tag, and one fi_writedata carries all three, its CQ data naming the
 * request's place (ofi.h CQS_*): one send a chunk, where the request as a message of its own was a second send here
 * and a second receive and handling at the target. (A resend still goes as a message: its target finds the tag.)
 * On failure its claim is given up (f reads answered). */
static shoal_status_t stage_send_(txep_t *t, struct stage_fly *f);
static shoal_status_t stage_send(txep_t *t, struct stage_fly *f) {
  const int64_t t0 = prof_now();
  f->p.w->sent_ns = t0; /* before the send: its answer may come at once (answer: from the send's start) */
  shoal_status_t rc = stage_send_(t, f);
  prof_add(SP_SEND, t0);
  if (rc) f->p.w->sent_ns = 0;
  return rc;
}
static shoal_status_t stage_send_(txep_t *t, struct stage_fly *f) {
  char *bounce = (char *)shoal_ofi.reg[SHOAL_SPACE_STAGE].base + (size_t)shoal_ofi.me * shoal_ofi.stage_slot;
  const int pe = f->p.pe;
  const uint64_t tag = f->p.m.id ^ shoal_ofi.rtoken[pe]; /* the target's secret in it: no old bytes match */
  if (f->wd) {
    const size_t at = f->off + f->len - sizeof(amo_msg_t); /* the request's place; the tag just before it */
    memcpy(bounce + at - sizeof tag, &tag, sizeof tag);
    memcpy(bounce + at, &f->p.m, sizeof f->p.m);
    const uint64_t data = (uint64_t)SHOAL_SPACE_STAGE << 62 | (uint64_t)(at / sizeof tag) << CQS_VAL_BITS |
                          (uint64_t)shoal_ofi.me;
    return shoal_ofi_fb_post_write(t, &f->p, bounce + f->off, f->len,
                                   shoal_ofi.rbase[SHOAL_SPACE_STAGE][pe] +
                                       (uint64_t)shoal_ofi.me * shoal_ofi.stage_slot + f->off,
                                   shoal_ofi.rkey[SHOAL_SPACE_STAGE][pe], data);
  }
  memcpy(bounce + f->off + f->len - sizeof tag, &tag, sizeof tag);
  shoal_status_t rc = stage_write(t, bounce + f->off, f->len, pe, f->off);
  if (!rc && !shoal_ofi.stage_saw) rc = WAIT_W(t);
  if (rc) {
    shoal_ofi_fb_unclaim(&f->p);
    return rc;
  }
  atomic_fetch_add_explicit(&shoal_ofi.stage_msgs, 1, memory_order_relaxed);
  return shoal_ofi_fb_post(t, &f->p, shoal_ofi.stage_saw ? t->ep : shoal_ofi.ep); /* frees the claim on failure */
}

/* Send the unposted chunks (the queue's last stage_unposted, all t's) in order, those whose copy out of GPU memory
 * is done; the first need of them whatever it takes (their copies waited for: a GPU's copy ends by itself). The
 * copies end in order (one stream), so the newest one is asked first: done, the older ones are too, unasked (each
 * question is a driver call, 1.4-2.9 us on an H100). A failure is kept in stage_err for t's next quiet or fence (the
 * nbi put that made the chunk has returned). */
#define COPY_FAILED (-2) /* f->copy: its copy reported an error (its event is free again) */
static shoal_status_t stage_post(txep_t *t, unsigned need) {
  shoal_status_t rc = SHOAL_OK;
  bool all = false; /* every unposted chunk's copy is done */
  if (shoal_ofi.stage_unposted > 1) {
    struct stage_fly *nf = &shoal_ofi.stage_q[(shoal_ofi.stage_head + shoal_ofi.stage_n - 1) % STAGE_INFLIGHT];
    bool done = false;
    if (nf->copy >= 0) {
      if (shoal_comm_dev_memcpy_done(nf->copy, &done)) nf->copy = COPY_FAILED;
      else if (done) nf->copy = -1, all = true;
    }
  }
  for (unsigned spins = 0; shoal_ofi.stage_unposted;) {
    struct stage_fly *f =
      &shoal_ofi.stage_q[(shoal_ofi.stage_head + shoal_ofi.stage_n - shoal_ofi.stage_unposted) % STAGE_INFLIGHT];
    bool done = true;
    if (all && f->copy >= 0) f->copy = shoal_comm_dev_memcpy_release(f->copy) ? COPY_FAILED : -1;
    shoal_status_t r = f->copy == COPY_FAILED ? SHOAL_ERR
                       : f->copy >= 0     ? shoal_comm_dev_memcpy_done(f->copy, &done)
                                          : SHOAL_OK;
    if (!done) {
      if (!need) break;
      if (++spins % 64 == 0) sched_yield();
      else SHOAL_CPU_RELAX();
      continue;
    }
    f->copy = -1;
    prof_add(SP_COPY_WAIT, f->t_ns);
    if (r) {
      shoal_warn("shoal_tl_ofi_dev_put: copy of %zu bytes out of GPU memory failed", f->len - sizeof(uint64_t));
      shoal_ofi_fb_unclaim(&f->p);
    } else {
      r = stage_send(t, f);
    }
    if (r && !rc) rc = r;
    shoal_ofi.stage_unposted--;
    if (need) need--;
  }
  if (!shoal_ofi.stage_unposted) atomic_store(&shoal_ofi.stage_owner, NULL);
  if (rc) atomic_store(&shoal_ofi.stage_err_ep, t), atomic_store(&shoal_ofi.stage_err, (int)rc);
  return rc;
}

/* The oldest one answered: waits as the fallback's waits do (answers, resends, the watch's timeout: never a hang);
 * unposted (every chunk then is), it is sent first, by its owner: a caller of another endpoint finds none (stage_rma). */
static void stage_retire(void) {
  const struct stage_fly *f = &shoal_ofi.stage_q[shoal_ofi.stage_head];
  if (shoal_ofi.stage_unposted == shoal_ofi.stage_n) stage_post(atomic_load(&shoal_ofi.stage_owner), 1);
  shoal_wait_t ws = {0};
  for (unsigned spins = 0; !shoal_ofi_fb_answered(&f->p); spins++) {
    shoal_ofi_fb_step(&ws, spins);
    if (f->t != &shoal_ofi.t0) fi_cntr_read(f->t->wcntr); /* the endpoint it went on: a provider's progress there */
  }
  shoal_ofi.stage_head = (shoal_ofi.stage_head + 1) % STAGE_INFLIGHT;
  shoal_ofi.stage_n--;
}

/* Whether [pos, pos + len) holds no unanswered chunk now (no wait). */
static bool stage_free_now(size_t pos, size_t len) {
  for (unsigned i = 0; i < shoal_ofi.stage_n; i++) {
    const struct stage_fly *f = &shoal_ofi.stage_q[(shoal_ofi.stage_head + i) % STAGE_INFLIGHT];
    if (f->off < pos + len && pos < f->off + f->len && !shoal_ofi_fb_answered(&f->p)) return false;
  }
  return true;
}

/* [pos, pos + len) of the bounce (and of the slots at targets) free: every chunk in flight there answered, and a
 * place in the queue. */
static void stage_room(size_t pos, size_t len) {
  for (;;) {
    while (shoal_ofi.stage_n && shoal_ofi_fb_answered(&shoal_ofi.stage_q[shoal_ofi.stage_head].p)) stage_retire();
    if (shoal_ofi.stage_n < STAGE_INFLIGHT && stage_free_now(pos, len)) return;
    stage_retire();
  }
}

/* A put (put true: from buf) or get (into buf) of n bytes at off of pe's device heap. A put of at most 8 bytes: in
 * the request itself. A larger put, in chunks (STAGE_CHUNK_MAX, a quarter slot at most): each chunk copied into the
 * bounce (buf may be device memory; the bounce, this PE's own slot, is a ring), its tag (its request's id) after it,
 * both written to the same place of this PE's slot at pe, then MSG_DPUT ("copy it into your device heap") sent as a
 * non-fetching request (stage_send). pe copies a chunk only with its tag there (a request resent from the main
 * endpoint may overtake its write). The copy of the next chunk overlaps the network's transfer of this one, and pe's
 * copies and answers overlap both, across calls too; a place of the ring is reused once its chunk is answered. So a
 * put returns once buf may be reused, complete at pe after t's quiet or fence (the spec's put, blocking or not, is
 * complete at the target only after a quiet). defer (the device proxy's nbi put, dev_put_nbi): a chunk's copy out of
 * GPU memory is only enqueued and the chunk sent by a later call of t's (stage_post: the next staged call, t's
 * dev_pending, quiet or fence), so the proxy serves the next requests while the GPU copies (issue 31: the copy and
 * its synchronize, 8 us a 64 KiB chunk on an H100, had come before every chunk's write); buf then stays unchanged
 * until t's quiet. Get, a slot at a time, after every chunk in flight: MSG_DGET and its answer (pe copied the chunk
 * into the slot; a fetching request waits for the non-fetching ones in flight to pe), the slot read into the
 * bounce, then copied to buf; complete on return. One staged call of this PE at a time. */
static shoal_status_t stage_rma(txep_t *t, int pe, size_t off, char *buf, size_t n, bool put, bool defer) {
  size_t slot = shoal_ofi.stage_slot;
  const region_t *st = &shoal_ofi.reg[SHOAL_SPACE_STAGE];
  if (!st->mr || !slot || !shoal_ofi.rlen[SHOAL_SPACE_STAGE][pe]) {
    shoal_warn("shoal_tl_ofi_dev_%s: no staging region towards PE %d", put ? "put" : "get", pe);
    return SHOAL_ERR_NOSYS;
  }
  shoal_status_t rc = stage_fence(t);
  if (put && n && n <= sizeof(uint64_t)) { /* the bytes ride in the request (its size field says how many): one round
                                        * trip, no write to the slot (a kernel's p and small puts, 8 B put + quiet) */
    uint64_t data = 0;
    if (rc) return rc;
    if (shoal_comm_dev_memcpy(&data, buf, n)) {
      shoal_warn("shoal_tl_ofi_dev_put: copy of %zu bytes from the source failed", n);
      return SHOAL_ERR;
    }
    return shoal_ofi_fb_request(t, MSG_DPUT, SHOAL_SPACE_DEVICE, pe, off, 0, n, n, data, NULL);
  }
  char *bounce = (char *)st->base + (size_t)shoal_ofi.me * slot;
  pthread_mutex_lock(&shoal_ofi.stage_mu);
  /* another endpoint's chunks still unsent: only its thread may send them (the proxy's, which keeps at it); told
   * that someone waits, it sends them all and defers no more until no one does */
  if (shoal_ofi.stage_unposted && atomic_load(&shoal_ofi.stage_owner) != t) {
    atomic_fetch_add(&shoal_ofi.stage_waiters, 1);
    while (shoal_ofi.stage_unposted && atomic_load(&shoal_ofi.stage_owner) != t) {
      pthread_mutex_unlock(&shoal_ofi.stage_mu);
      shoal_ofi_progress_once();
      sched_yield();
      pthread_mutex_lock(&shoal_ofi.stage_mu);
    }
    atomic_fetch_sub(&shoal_ofi.stage_waiters, 1);
  }
  /* not while another thread waits (above), and never with every place of the fallback's fb_cap held unsent (below) */
  defer = defer && shoal_ofi.fb_cap >= 2 && !atomic_load(&shoal_ofi.stage_waiters);
  if (shoal_ofi.stage_unposted) { /* t's own: in order before this call's chunks, or behind them when deferred too */
    shoal_status_t r = stage_post(t, defer && put ? 0 : shoal_ofi.stage_unposted);
    if (!rc) rc = r;
  }
  if (put) {
    /* a place holds the chunk and its tag; a quarter slot at most, so four fit the ring (slots: whole pages) */
    const size_t chunk = (slot / 4 < STAGE_CHUNK_MAX ? slot / 4 : STAGE_CHUNK_MAX) - 2 * sizeof(uint64_t);
    /* equal chunks (8-byte multiples, at most chunk): 1 MiB went as 1 MiB - 16 bytes and then 16 bytes, the second a
     * whole chunk's round of copies and messages for nothing */
    const size_t nch = (n + chunk - 1) / chunk, even = ((n + nch - 1) / nch + 7) & ~(size_t)7;
    size_t pos = shoal_ofi.stage_pos;
    for (size_t done = 0, len; !rc && done < n; done += len) {
      len = n - done < even ? n - done : even;
      /* the request in the write too where remote CQ data can say so, and the whole fits one message */
      const bool wd = shoal_ofi.cq_signal && STAGE_TAG_AT(len) + sizeof(uint64_t) + sizeof(amo_msg_t) <= shoal_ofi.max_msg;
      const size_t span = STAGE_TAG_AT(len) + sizeof(uint64_t) + (wd ? sizeof(amo_msg_t) : 0);
      /* At most STAGE_INFLIGHT chunks fly, so past that many places of this size the ring only walks cold memory
       * (the GPU's copy writes each chunk anew, the target's socket too): back to the start there, where it is free
       * already (a small put after a large one does not wait for the large one's answers). H100, session 37: 64 KiB
       * puts took 30 us in the 4 MiB slot's ring, 22 us in a 1 MiB one. */
      if (pos + span > slot || (pos + span > STAGE_INFLIGHT * span && stage_free_now(0, span))) pos = 0;
      const int64_t tr = prof_now();
      stage_room(pos, span);
      prof_add(SP_ROOM, tr);
      if (pos + span > shoal_ofi.stage_reach) shoal_ofi.stage_reach = pos + span;
      /* The claim below waits for a place among the fallback's fb_cap in flight, which unsent chunks never free; so
       * do the claims of this thread's next non-fetching AMOs (amo.c), which send nothing of ours meanwhile: at
       * most fb_cap - 1 unsent, one place always left to requests that are sent and will be answered. */
      while (shoal_ofi.stage_unposted && shoal_ofi.stage_unposted + 2 > (unsigned)shoal_ofi.fb_cap) stage_post(t, 1);
      struct stage_fly *f = &shoal_ofi.stage_q[(shoal_ofi.stage_head + shoal_ofi.stage_n) % STAGE_INFLIGHT];
      if ((rc = shoal_ofi_fb_claim(MSG_DPUT, SHOAL_SPACE_DEVICE, pe, off + done, 0, len, pos, &f->p))) break;
      f->off = pos, f->len = span, f->t = t, f->copy = -1, f->wd = wd, f->t_ns = 0;
      const int64_t tc = prof_now();
      rc = defer ? shoal_comm_dev_memcpy_start(bounce + pos, buf + done, len, &f->copy)
                 : shoal_comm_dev_memcpy(bounce + pos, buf + done, len);
      prof_add(defer ? SP_COPY_START : SP_COPY_SYNC, tc);
      if (defer && f->copy >= 0) f->t_ns = prof_now();
      if (rc) {
        shoal_warn("shoal_tl_ofi_dev_put: copy of %zu bytes through the bounce buffer failed", len);
        shoal_ofi_fb_unclaim(&f->p);
        break;
      }
      if (defer && (f->copy >= 0 || shoal_ofi.stage_unposted)) { /* sent by stage_post, after the older ones */
        shoal_ofi.stage_unposted++;
        atomic_store(&shoal_ofi.stage_owner, t);
      } else if ((rc = stage_send(t, f))) {
        break;
      }
      shoal_ofi.stage_n++;
      pos += span;
    }
    shoal_ofi.stage_pos = pos;
    pthread_mutex_unlock(&shoal_ofi.stage_mu);
    return rc;
  }
  stage_room(0, slot);
  for (size_t done = 0, len; !rc && done < n; done += len) {
    len = n - done < slot ? n - done : slot;
    rc = shoal_ofi_fb_request(t, MSG_DGET, SHOAL_SPACE_DEVICE, pe, off + done, 0, 0, len, 0, NULL);
    if (!rc) rc = stage_read(t, bounce, len, pe);
    if (!rc && shoal_comm_dev_memcpy(buf + done, bounce, len)) rc = SHOAL_ERR;
    if (rc == SHOAL_ERR) shoal_warn("shoal_tl_ofi_dev_get: copy of %zu bytes through the bounce buffer failed", len);
  }
  pthread_mutex_unlock(&shoal_ofi.stage_mu);
  return rc;
}

/* t's deferred chunks sent, every one (their copies waited for), and a failure of one of them since t's last quiet
 * or fence. Cheap when t has none. */
static shoal_status_t stage_flush(txep_t *t) {
  if (SHOAL_LIKELY(atomic_load_explicit(&shoal_ofi.stage_owner, memory_order_relaxed) != t &&
                   atomic_load_explicit(&shoal_ofi.stage_err_ep, memory_order_relaxed) != t))
    return SHOAL_OK;
  pthread_mutex_lock(&shoal_ofi.stage_mu);
  if (atomic_load(&shoal_ofi.stage_owner) == t) stage_post(t, shoal_ofi.stage_unposted);
  shoal_status_t rc = SHOAL_OK;
  if (atomic_load(&shoal_ofi.stage_err_ep) == t) {
    rc = (shoal_status_t)atomic_exchange(&shoal_ofi.stage_err, 0);
    atomic_store(&shoal_ofi.stage_err_ep, NULL);
  }
  pthread_mutex_unlock(&shoal_ofi.stage_mu);
  return rc;
}

/* op on the size-byte object at off of pe's device heap: a request of the message fallback on space
 * SHOAL_SPACE_DEVICE, which pe performs with its device atomic. Non-fetching ones return once sent (quiet and fence
 * wait for their answers, as the fallback's); fetching ones wait for the old value. */
static shoal_status_t stage_amo(txep_t *t, int pe, size_t off, int op, size_t size, uint64_t v, uint64_t c,
                                uint64_t *old) {
  if (SHOAL_UNLIKELY((unsigned)op >= SHOAL_TL_AMO_NOPS || (size != 4 && size != 8) || off % size)) {
    shoal_warn("shoal_tl_ofi_dev_amo: op %d of %zu bytes at offset %zu: no such AMO, or misaligned", op, size, off);
    return SHOAL_ERR_INVAL;
  }
  shoal_status_t rc = stage_fence(t);
  if (op == SHOAL_TL_AMO_INC || op == SHOAL_TL_AMO_FETCH_INC) v = 1;
  *old = 0;
  bool fetching = amo_ops[op].kind != K_WRITE;
  return rc ? rc : shoal_ofi_fb_request(t, MSG_REQ, SHOAL_SPACE_DEVICE, pe, off, op, size, v, c, fetching ? old : NULL);
}

/* The ops table's dev_* slots (comm.h), on h, a context's endpoint, or NULL for the default context's. */
shoal_status_t shoal_ofi_dev_put(void *h, int pe, size_t off, const void *src, size_t n) {
  txep_t *t = h ? h : &shoal_ofi.t0;
  MT(t, stage_rma(t, pe, off, (char *)src, n, true, false));
}
/* comm.h's dev_put_nbi: h must be a context's own endpoint, one thread's (the proxy's private context); the default
 * endpoint never defers (its threads have no loop that would send the chunks). */
shoal_status_t shoal_ofi_dev_put_nbi(void *h, int pe, size_t off, const void *src, size_t n) {
  txep_t *t = h ? h : &shoal_ofi.t0;
  MT(t, stage_rma(t, pe, off, (char *)src, n, true, t != &shoal_ofi.t0 && !t->lock));
}
shoal_status_t shoal_ofi_dev_get(void *h, int pe, size_t off, void *dst, size_t n) {
  txep_t *t = h ? h : &shoal_ofi.t0;
  MT(t, stage_rma(t, pe, off, dst, n, false, false));
}
int shoal_ofi_dev_pending(void *h) {
  txep_t *t = h ? h : &shoal_ofi.t0;
  if (SHOAL_LIKELY(atomic_load_explicit(&shoal_ofi.stage_owner, memory_order_relaxed) != t)) return 0;
  pthread_mutex_lock(&shoal_ofi.stage_mu);
  if (atomic_load(&shoal_ofi.stage_owner) == t)
    stage_post(t, atomic_load(&shoal_ofi.stage_waiters) ? shoal_ofi.stage_unposted : 0); /* someone waits: all */
  const int left = (int)shoal_ofi.stage_unposted;
  pthread_mutex_unlock(&shoal_ofi.stage_mu);
  return left;
}
shoal_status_t shoal_ofi_quiet_staged(void *ep) {
  shoal_status_t rc = stage_flush(ep ? ep : &shoal_ofi.t0), rq = shoal_ofi_quiet(ep);
  return rc ? rc : rq;
}
/* comm.h quiet_before_signal. Where a send and a write are processed after the bytes of every write before them on
 * their endpoint (saw), the caller's signal to pe (an inject write on t0, signal_common) lands behind this PE's puts
 * there, so those need no flush read's round trip: they stay dirty and fenced (carried), so that whatever could
 * still overtake them waits for their flush first: a native AMO (fence_w makes it quiet), a staged call (likewise,
 * stage_fence), the next full quiet, and a context endpoint made later (ctx.c). With a context endpoint open, a
 * plain quiet: its gets could pass them (ntx read under t0's lock, as ctx.c reads carried). */
static shoal_status_t quiet_before_signal_common(txep_t *t, int pe) {
  bool keep = !atomic_load(&shoal_ofi.ntx) && atomic_exchange(&t->dirty[pe], 0);
  shoal_status_t rc = shoal_ofi_quiet_common(t);
  if (keep) {
    atomic_store(&t->dirty[pe], 1);
    atomic_store(&t->dirty_any, true);
    t->fence_w = true;
    atomic_store_explicit(&t->carried, true, memory_order_relaxed);
  }
  return rc;
}
static shoal_status_t quiet_before_signal_mt(txep_t *t, int pe) { MT(t, quiet_before_signal_common(t, pe)); }
shoal_status_t shoal_ofi_quiet_before_signal(int pe) {
  if (!shoal_ofi.saw || !shoal_ofi.lazy_fence || pe < 0 || pe >= shoal_ofi.npes || pe == shoal_ofi.me)
    return shoal_ofi_quiet_staged(NULL);
  shoal_status_t rs = stage_flush(&shoal_ofi.t0), rq = quiet_before_signal_mt(&shoal_ofi.t0, pe);
  return rs ? rs : rq;
}
shoal_status_t shoal_ofi_fence_staged(void *ep) {
  shoal_status_t rc = stage_flush(ep ? ep : &shoal_ofi.t0), rf = shoal_ofi_fence(ep);
  return rc ? rc : rf;
}
shoal_status_t shoal_ofi_dev_amo(void *h, int pe, size_t off, int op, size_t size, uint64_t v, uint64_t c,
                                 uint64_t *old) {
  txep_t *t = h ? h : &shoal_ofi.t0;
  MT(t, stage_amo(t, pe, off, op, size, v, c, old));
}

/* put_signal as one message (issue 29): an fi_writedata whose remote CQ data names the flag cell and carries the low
 * CQS_VAL_BITS of v; the target stores the flag when it reads that completion from its receive CQ (progress.c,
 * shoal_ofi_cq_signal), which libfabric reports only once the data is in place. Where a put and a signal were two
 * messages (two sends here, two receives and progress calls at the target), the collectives' per-peer step is one.
 * The same order as signal's: after this PE's earlier writes to pe (RMA_WAW), its non-fetching AMOs completed and
 * its nbi writes' sources free; src is free on return. Not marked dirty: the collective's receiver knows by the flag
 * that its data is there, so the next quiet owes it no flush. NOSYS (nothing sent): no cq_signal here, the cell's
 * offset does not fit the CQ data, or more than one message's worth; a flag in the staging region (its CQ data means
 * a staged put's request there). */
static shoal_status_t put_signal_common(int space, int pe, size_t off, const void *src, size_t n, int fspace,
                                        size_t foff, uint64_t v) {
  if (!shoal_ofi.cq_signal || (unsigned)fspace >= SHOAL_SPACE_STAGE || foff % sizeof v || foff / sizeof v >= CQS_IDX_MAX ||
      n > shoal_ofi.max_msg || !n)
    return SHOAL_ERR_NOSYS;
  txep_t *t = &shoal_ofi.t0;
  shoal_status_t rc;
  if (SHOAL_UNLIKELY(atomic_load_explicit(&t->fb_out, memory_order_relaxed)) && (rc = shoal_ofi_fb_drain(t))) return rc;
  if (t->amo_out || t->wbuf_out) {
    if ((rc = WAIT_W(t))) return rc;
    t->amo_out = t->fence_a = t->wbuf_out = false;
  }
  uint64_t raddr = shoal_ofi.rbase[space][pe] + off, key = shoal_ofi.rkey[space][pe];
  uint64_t data = (uint64_t)fspace << 62 | (uint64_t)(foff / sizeof v) << CQS_VAL_BITS | (v & CQS_VAL_MASK);
  if (n <= shoal_ofi.inject_size) {
    POST(t, "fi_inject_writedata", fi_inject_writedata(t->ep, src, n, data, shoal_ofi.addr[pe], raddr, key));
    atomic_fetch_add_explicit(&t->w_issued, 1, memory_order_relaxed);
    return SHOAL_OK;
  }
  if (n <= BOUNCE_SIG_MAX && shoal_ofi.bounce_ok) { /* copied, as a blocking put's: no wait for the write */
    const char *b;
    if ((rc = bounce_copy(t, src, n, &b))) return rc;
    POST(t, "fi_writedata", fi_writedata(t->ep, b, n, NULL, data, shoal_ofi.addr[pe], raddr, key, NULL));
    atomic_fetch_add_explicit(&t->w_issued, 1, memory_order_relaxed);
    return SHOAL_OK;
  }
  POST(t, "fi_writedata", fi_writedata(t->ep, src, n, NULL, data, shoal_ofi.addr[pe], raddr, key, NULL));
  atomic_fetch_add_explicit(&t->w_issued, 1, memory_order_relaxed);
  if ((rc = WAIT_W(t))) return rc;
  t->bounce_pos = 0;
  return SHOAL_OK;
}
shoal_status_t shoal_ofi_put_signal(int space, int pe, size_t off, const void *src, size_t n, int fspace, size_t foff,
                                    uint64_t v) {
  MT_ISSUE(&shoal_ofi.t0, put_signal_common(space, pe, off, src, n, fspace, foff, v));
}
