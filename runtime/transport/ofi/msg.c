/* msg.c - the libfabric transport: the fallback AMO's messages as they arrive; see ofi.h */
#include "ofi.h"

/* ---- the fallback AMO: the target's part (the arithmetic: shoal_amo_host, comm.h) ---- */

/* Sends from inside progress: retry with progress of the transmit side only (never the receive CQ: no recursion). */
ssize_t shoal_ofi_send_msg(const amo_msg_t *m, int pe) {
  ssize_t r;
  while ((r = fi_inject(shoal_ofi.ep, m, sizeof *m, shoal_ofi.addr[pe])) == -FI_EAGAIN)
    fi_cntr_read(shoal_ofi.t0.wcntr);
  return r;
}

/* A request's work, on this PE's memory, once its fields are known to come from a member of the job: the AMO on a
 * registered host region, or on the device heap (shoal_comm_dev_amo), or a staged copy between the requester's slot
 * of the staging region and the device heap (shoal_comm_dev_copy), each checked against its region's bounds (the
 * device heap's by heap_gpu.c). Returns the status for the answer (0 done, 1 refused), or 2: a staged put's chunk whose
 * bytes have not all arrived (its tag is not there), to be left unanswered, or PENDING: a staged put's chunk whose
 * copy into the device heap is enqueued as *ev (its answer waits for the copy: shoal_ofi_copies_reap); *value the
 * old value. */
enum { PENDING = 3 };
static uint8_t exec_req(const amo_msg_t *m, uint64_t *value, int *ev) {
  const region_t *r = m->space < SHOAL_SPACE_MAX ? &shoal_ofi.reg[m->space] : NULL;
  *value = 0;
  if (m->kind == MSG_DPUT && m->size) { /* a put's size (1-8) bytes carried in compare (rma.c stage_rma) */
    uint64_t data = m->compare;
    if (m->space != SHOAL_SPACE_DEVICE || m->size > sizeof data || m->operand != m->size) return 1;
    return shoal_comm_dev_copy(m->off, &data, m->size, true) ? 1 : 0;
  }
  if (m->kind == MSG_DPUT || m->kind == MSG_DGET) {
    const region_t *st = &shoal_ofi.reg[SHOAL_SPACE_STAGE];
    size_t slot = shoal_ofi.stage_slot;
    /* compare: the offset in the sender's slot (a staged put's chunk, with its tag after it; 0 for a get) */
    const uint64_t need = m->kind == MSG_DPUT ? STAGE_TAG_AT(m->operand) + sizeof(uint64_t) : m->operand;
    if (m->space != SHOAL_SPACE_DEVICE || !st->mr || !slot || m->compare > slot || m->operand > slot ||
        need > slot - m->compare || (m->kind == MSG_DGET && m->compare) || (size_t)m->pe * slot > st->len - slot)
      return 1;
    char *buf = (char *)st->base + (size_t)m->pe * slot + m->compare;
    if (m->kind == MSG_DPUT) {
      uint64_t tag;
      memcpy(&tag, buf + STAGE_TAG_AT(m->operand), sizeof tag);
      if (tag != (m->id ^ shoal_ofi.token)) return 2; /* its bytes are not all here yet: the request again, later */
      atomic_thread_fence(memory_order_acquire);      /* the bytes before the tag, as the provider placed them */
    }
    if (SHOAL_UNLIKELY(shoal_ofi.slow_dput) && m->kind == MSG_DPUT) nanosleep(&(struct timespec){0, 50000000}, NULL);
    /* the requester reuses the slot's bytes only after the answer: after the copy; the ring of pending answers
     * (pend) has SHOAL_COMM_DEV_COPIES places, whichever pool (the heap's or the copier's) holds the copies */
    const int64_t tc = prof_now();
    if (m->kind == MSG_DGET || shoal_ofi.pend_n >= SHOAL_COMM_DEV_COPIES) {
      uint8_t res = shoal_comm_dev_copy(m->off, buf, m->operand, m->kind == MSG_DPUT) ? 1 : 0;
      prof_add(SP_T_SYNC, tc);
      return res;
    }
    uint8_t res = shoal_comm_dev_copy_start(m->off, buf, m->operand, ev) ? 1 : *ev >= 0 ? PENDING : 0;
    prof_add(SP_T_COPY_START, tc);
    return res;
  }
  if (m->space == SHOAL_SPACE_DEVICE)
    return shoal_comm_dev_amo(m->off, m->op, m->size, m->operand, m->compare, value) ? 1 : 0;
  if (!r || !r->mr || r->gpu_kind || m->space == SHOAL_SPACE_STAGE || (m->size != 4 && m->size != 8) || m->op >= SHOAL_TL_AMO_NOPS ||
      m->off > r->len || m->size > r->len - m->off || m->off % m->size)
    return 1;
  *value = shoal_amo_host((char *)r->base + m->off, m->op, m->size, m->operand, m->compare);
  return 0;
}

/* Copies finish in order (one stream), so the oldest first; trylock: a busy exec_mu means another thread is in
 * progress, whose next poll reaps. Answers go after the lock, as handle_msg's. */
void shoal_ofi_copies_reap(void) {
  if (SHOAL_LIKELY(!atomic_load_explicit(&shoal_ofi.pend_out, memory_order_acquire))) return;
  if (pthread_mutex_trylock(&shoal_ofi.exec_mu)) return;
  amo_msg_t rep[SHOAL_COMM_DEV_COPIES];
  int to[SHOAL_COMM_DEV_COPIES], nrep = 0;
  while (shoal_ofi.pend_n) {
    struct pend_copy *p = &shoal_ofi.pend[shoal_ofi.pend_head];
    bool done;
    uint8_t st = shoal_comm_dev_copy_done(p->slot, &done) ? 1 : 0;
    if (!done) break;
    struct done *d = &shoal_ofi.done[(size_t)p->pe * NWAIT + (p->id & 0xff)];
    prof_add(SP_T_COPY, p->t_ns);
    if (d->id == p->id) d->status = st;
    rep[nrep] = (amo_msg_t){.kind = MSG_REP, .id = p->id, .token = shoal_ofi.rtoken[p->pe], .op = st};
    to[nrep++] = p->pe;
    shoal_ofi.pend_head = (shoal_ofi.pend_head + 1) % SHOAL_COMM_DEV_COPIES;
    shoal_ofi.pend_n--;
  }
  atomic_store_explicit(&shoal_ofi.pend_out, shoal_ofi.pend_n, memory_order_release);
  pthread_mutex_unlock(&shoal_ofi.exec_mu);
  /* Answers to one requester with one status go up to REPN_MAX in a message: a send costs the progress thread as
   * much as a chunk's copy did to enqueue (7 us against 4.2 on an H100, session 31), and copies found done together
   * are those of chunks that came together. */
  for (int i = 0; i < nrep; i++) {
    if (!rep[i].kind) continue;
    uint64_t ids[REPN_MAX] = {rep[i].id};
    unsigned n = 1;
    for (int j = i + 1; j < nrep && n < REPN_MAX; j++)
      if (rep[j].kind && to[j] == to[i] && rep[j].op == rep[i].op) ids[n++] = rep[j].id, rep[j].kind = 0;
    if (n > 1) {
      atomic_fetch_add_explicit(&shoal_ofi.answers_joined, n, memory_order_relaxed);
      rep[i] = (amo_msg_t){.kind = MSG_REPN, .op = rep[i].op, .size = (uint8_t)n, .id = ids[0], .off = ids[1],
                           .operand = ids[2], .compare = n > 3 ? ids[3] : 0, .token = rep[i].token};
    }
    ssize_t e = shoal_ofi_send_msg(&rep[i], to[i]);
    if (e) shoal_ofi_fail("fi_inject", e);
  }
}

void shoal_ofi_stage_req(uint64_t from, size_t off) {
  const region_t *st = &shoal_ofi.reg[SHOAL_SPACE_STAGE];
  const size_t slot = shoal_ofi.stage_slot;
  amo_msg_t m;
  if (!st->mr || !slot || from >= (uint64_t)shoal_ofi.npes || slot < sizeof m || off > slot - sizeof m ||
      (size_t)from * slot > st->len - slot) {
    shoal_ofi_drop("remote CQ data naming no staged request", sizeof from);
    return;
  }
  memcpy(&m, (char *)st->base + (size_t)from * slot + off, sizeof m);
  if (m.kind != MSG_DPUT || m.pe != (int32_t)from) { /* the sender's own slot names the sender */
    shoal_ofi_drop("a staged request of another sender", sizeof m);
    return;
  }
  atomic_fetch_add_explicit(&shoal_ofi.stage_cq_reqs, 1, memory_order_relaxed);
  shoal_ofi_handle_msg(&m, sizeof m);
}

/* An answer to this PE's request id (status op, old value operand). */
static void take_answer(uint64_t id, uint8_t op, uint64_t operand) {
  unsigned slot = (unsigned)(id & 0xff);
  if (slot >= NWAIT) return;
  waiter_t *w = &shoal_ofi.waiters[slot];
  /* A request sent again can be answered twice, and the PE or its progress thread may take either answer: claim
   * the slot (1 -> 4) and check its generation after the claim, so that a late answer never fills the slot's
   * next request. */
  uint32_t waiting = 1;
  while (!atomic_compare_exchange_strong(&w->state, &waiting, 4)) {
    if (waiting != 5) return;
    waiting = 1; /* being sent again (shoal_ofi_fb_tend, never on a thread that handles messages): a moment */
    sched_yield();
  }
  if (atomic_load(&w->gen) != id >> 8) {
    atomic_store_explicit(&w->state, 1, memory_order_release);
    return;
  }
  if (w->async) { /* non-fetching: nobody waits in the slot; count it done on its endpoint and free it */
    txep_t *t = w->owner;
    if (w->m.kind == MSG_DPUT) prof_add(SP_ANSWER, w->sent_ns), w->sent_ns = 0;
    if (op) {
      shoal_warn("fi_atomic: pe %d refused the %s at offset %" PRIu64 " of space %d", w->pe,
                 w->m.kind == MSG_DPUT ? "staged put" : amo_ops[w->m.op].name, w->m.off, w->m.space);
      atomic_fetch_add(&t->fb_err, 1);
    }
    w->async = false;
    atomic_fetch_sub(&shoal_ofi.fb_async, 1);
    atomic_store_explicit(&w->state, 0, memory_order_release);
    atomic_fetch_sub_explicit(&t->fb_out, 1, memory_order_release); /* after the slot: a drained quiet sees it free */
    return;
  }
  w->value = operand;
  w->status = op ? SHOAL_ERR_INVAL : SHOAL_OK;
  atomic_store_explicit(&w->state, 2, memory_order_release);
}

void shoal_ofi_handle_msg(const amo_msg_t *m, size_t len) {
  bool req = len == sizeof *m && (m->kind == MSG_REQ || m->kind == MSG_DPUT || m->kind == MSG_DGET);
  const char *bad = len != sizeof *m ? "wrong length" : m->token != shoal_ofi.token ? "wrong token"
                    : !req && m->kind != MSG_REP && m->kind != MSG_REPN ? "unknown kind"
                    : m->kind == MSG_REPN && (m->size < 2 || m->size > REPN_MAX) ? "wrong count"
                    : req && (m->pe < 0 || m->pe >= shoal_ofi.npes) ? "no such sender" : NULL;
  if (bad) {
    shoal_ofi_drop(bad, len);
    return;
  }
  if (req) {
    amo_msg_t rep = {.kind = MSG_REP, .id = m->id, .token = shoal_ofi.rtoken[m->pe]};
    if ((m->id & 0xff) >= NWAIT) {
      shoal_ofi_drop("no such waiter", len);
      return;
    }
    struct done *d = &shoal_ofi.done[(size_t)m->pe * NWAIT + (m->id & 0xff)];
    pthread_mutex_lock(&shoal_ofi.exec_mu);
    int64_t age = (int64_t)((m->id >> 8) - (d->id >> 8)); /* under the lock: the other thread may handle a repeat */
    if (age < 0) { /* an older request sent again: its requester has its answer already */
      pthread_mutex_unlock(&shoal_ofi.exec_mu);
      return;
    }
    int slot = -1;
    if (age == 0 && d->id == m->id) { /* sent again: the same answer, not done twice */
      if (d->status == PENDING) { /* its copy still runs: answered when done */
        pthread_mutex_unlock(&shoal_ofi.exec_mu);
        return;
      }
      rep.operand = d->value, rep.op = d->status;
    } else {
      rep.op = exec_req(m, &rep.operand, &slot); /* 1: refused */
      if (rep.op == 2) { /* a staged put's chunk before its bytes: no answer, no record; its resend will find them */
        pthread_mutex_unlock(&shoal_ofi.exec_mu);
        atomic_fetch_add_explicit(&shoal_ofi.stage_early, 1, memory_order_relaxed);
        return;
      }
    }
    d->id = m->id, d->value = rep.operand, d->status = rep.op;
    if (rep.op == PENDING) { /* at most SHOAL_COMM_DEV_COPIES (the heap's events), so the ring has room */
      shoal_ofi.pend[(shoal_ofi.pend_head + shoal_ofi.pend_n++) % SHOAL_COMM_DEV_COPIES] =
          (struct pend_copy){m->pe, slot, m->id, prof_now()};
      atomic_store_explicit(&shoal_ofi.pend_out, shoal_ofi.pend_n, memory_order_release);
      bool wake = shoal_ofi.pend_n == 1 && shoal_ofi.thread_on && !pthread_equal(pthread_self(), shoal_ofi.thread);
      pthread_mutex_unlock(&shoal_ofi.exec_mu);
      /* the PE's own poll took it: the thread may be asleep on the CQ's fd, and the PE may stop polling now */
      if (wake) fi_cq_signal(shoal_ofi.rxcq);
      return;
    }
    pthread_mutex_unlock(&shoal_ofi.exec_mu);
    ssize_t e = shoal_ofi_send_msg(&rep, m->pe);
    if (e) shoal_ofi_fail("fi_inject", e);
  } else if (m->kind == MSG_REP) {
    take_answer(m->id, m->op, m->operand);
  } else { /* MSG_REPN: size answers of status op and no value, ids in id, off, operand, compare */
    const uint64_t ids[REPN_MAX] = {m->id, m->off, m->operand, m->compare};
    for (unsigned i = 0; i < m->size; i++) take_answer(ids[i], m->op, 0);
  }
}
