/* ctx.c - the libfabric transport: see ofi.h */
#include "ofi.h"

/* ---- contexts: an endpoint each (spec 9.4; SOS gives each context a transmit context of its own) ----
 * It only issues: it shares the domain, the address vector and the memory keys (registered on the domain; a provider
 * with FI_MR_ENDPOINT binds them to the main endpoint, which is the only one that is ever a target) and has its own
 * transmit CQ and counters, so that its quiet waits for its own operations and a private context takes no lock.
 * Fallback AMOs still go through the main endpoint (their answers land there); a non-fetching one counts in flight on
 * the context's txep (fb_out), so that the context's quiet and fence wait for the ones issued on it, not others. */
void shoal_ofi_tx_close(txep_t *t) {
  pthread_mutex_lock(&shoal_ofi_txs_mu);
  if (t->next) {
    t->prev->next = t->next, t->next->prev = t->prev;
    atomic_fetch_sub(&shoal_ofi.ntx, 1);
  }
  pthread_mutex_unlock(&shoal_ofi_txs_mu);
  shoal_ofi_close_fid(&t->ep);
  shoal_ofi_close_fid(&t->wcntr);
  shoal_ofi_close_fid(&t->rcntr);
  shoal_ofi_close_fid(&t->txcq);
  free((void *)t->dirty);
  free(t->bounce);
  pthread_mutex_destroy(&t->mu);
  free(t);
}

/* The flush reads alone (a full quiet here would take the default context's errors, reported once, from its next
 * quiet). Under t0's lock, as quiet_before_signal reads ntx: a barrier either saw this endpoint or left carried set. */
static shoal_status_t flush_carried(txep_t *t) {
  if (!atomic_load_explicit(&t->carried, memory_order_relaxed)) return SHOAL_OK;
  shoal_status_t rc = shoal_ofi_flush_post(t);
  if (!rc) rc = WAIT_R(t);
  if (!rc) atomic_store_explicit(&t->carried, false, memory_order_relaxed);
  return rc;
}
static shoal_status_t t0_flush_carried(void) {
  txep_t *t = &shoal_ofi.t0;
  MT(t, flush_carried(t));
}

shoal_status_t shoal_ofi_ctx_create(bool shared, void **out) {
  *out = NULL;
  if (SHOAL_UNLIKELY(!shoal_ofi.up)) return shoal_ofi_bad_call("shoal_tl_ofi_ctx_create", 0, 0, 0, 0);
  txep_t *t = calloc(1, sizeof *t);
  if (!t) return SHOAL_ERR_NOMEM;
  pthread_mutex_init(&t->mu, NULL);
  t->lock = shoal_ofi.mt && shared;
  int ret = 0;
  const char *what = "calloc";
  struct fi_cq_attr txa = {.format = FI_CQ_FORMAT_CONTEXT, .wait_obj = FI_WAIT_NONE};
  struct fi_cntr_attr ca = {.events = FI_CNTR_EVENTS_COMP, .wait_obj = FI_WAIT_NONE};
  if (!(t->dirty = calloc((size_t)shoal_ofi.npes, sizeof *t->dirty))) goto fail;
  if ((ret = fi_cq_open(shoal_ofi.domain, &txa, &t->txcq, NULL)) ||
      (ret = fi_cntr_open(shoal_ofi.domain, &ca, &t->wcntr, NULL)) ||
      (ret = fi_cntr_open(shoal_ofi.domain, &ca, &t->rcntr, NULL))) {
    what = t->txcq ? "fi_cntr_open" : "fi_cq_open";
    goto fail;
  }
  what = "fi_endpoint";
  if ((ret = fi_endpoint(shoal_ofi.domain, shoal_ofi.info, &t->ep, NULL))) goto fail;
  what = "fi_ep_bind";
  if ((ret = fi_ep_bind(t->ep, &shoal_ofi.av->fid, 0)) ||
      /* receive side too: rxm refuses an endpoint without one; nothing is posted there, nothing arrives */
      (ret = fi_ep_bind(t->ep, &t->txcq->fid, FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION)) ||
      (ret = fi_ep_bind(t->ep, &t->wcntr->fid, FI_WRITE)) || (ret = fi_ep_bind(t->ep, &t->rcntr->fid, FI_READ)))
    goto fail;
  what = "fi_enable";
  if ((ret = fi_enable(t->ep))) goto fail;
  pthread_mutex_lock(&shoal_ofi_txs_mu);
  if (!shoal_ofi.txs.next) shoal_ofi.txs.next = shoal_ofi.txs.prev = &shoal_ofi.txs;
  t->next = &shoal_ofi.txs, t->prev = shoal_ofi.txs.prev;
  shoal_ofi.txs.prev->next = t, shoal_ofi.txs.prev = t;
  atomic_fetch_add(&shoal_ofi.ntx, 1);
  pthread_mutex_unlock(&shoal_ofi_txs_mu);
  *out = t;
  /* A two-PE barrier may have left the default endpoint's puts fenced, not flushed (rma.c, quiet_before_signal):
   * this endpoint's gets could overtake them, so they complete first. ntx is raised before this look, so a later
   * barrier quiets fully. A failed flush is a quiet's failure: fatal, as shoal_comm_quiet's. */
  if (t0_flush_carried())
    shoal_fatal("shmem_ctx_create", "the flush of the default context's puts through ofi failed (the line above says "
                "why)");
  return SHOAL_OK;
fail:
  /* Not fatal: the context shares the main endpoint instead (correct, only not separate). */
  SHOAL_DEBUG(SHOAL_SUB_OFI, "%s: %s: the context shares the main endpoint", what,
              ret ? fi_strerror(-ret) : "no memory");
  shoal_ofi_tx_close(t);
  return ret ? SHOAL_ERR_IO : SHOAL_ERR_NOMEM;
}

void shoal_ofi_ctx_destroy(void *h) {
  txep_t *t = h;
  if (!t) return;
  /* shmem_ctx_destroy quiets first; this only drains what a failure left (the failure had its line) */
  if (shoal_ofi.up && shoal_ofi_quiet_common(t))
    shoal_warn("shoal_tl_ofi_ctx_destroy: the context's operations did not complete");
  shoal_ofi_tx_close(t);
}
