/* state.c - the libfabric transport: shoal_ofi, and the helpers every file here uses (errors, drops); see ofi.h */
#include "ofi.h"

struct shoal_ofi_state shoal_ofi;
/* Guards shoal_ofi.txs, the context endpoints' list (ctx.c links and unlinks, progress.c drives them); outside
 * shoal_ofi, which fini clears. */
pthread_mutex_t shoal_ofi_txs_mu = PTHREAD_MUTEX_INITIALIZER;

/* ---- errors: one line naming the routine ---- */
shoal_status_t shoal_ofi_fail(const char *routine, ssize_t ret) {
  shoal_warn("%s: %s", routine, fi_strerror((int)-ret));
  return SHOAL_ERR_IO;
}

/* An error completion: its libfabric reason and the provider's (fi_cq_strerror), with the routine it came from. */
shoal_status_t shoal_ofi_report_cq_error(struct fid_cq *cq) {
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

shoal_status_t shoal_ofi_bad_call(const char *routine, int space, int pe, size_t off, size_t n) {
  if (!shoal_ofi.up) shoal_warn("%s: the ofi transport is not initialized", routine);
  else if ((unsigned)space >= SHOAL_SPACE_MAX || (unsigned)pe >= (unsigned)shoal_ofi.npes)
    shoal_warn("%s: space %d or pe %d out of range", routine, space, pe);
  else if (!shoal_ofi.rlen[space][pe])
    shoal_warn("%s: space %d is not registered on pe %d%s", routine, space, pe,
               shoal_ofi.reg[space].gpu_kind && !shoal_ofi.hmem ? " (no FI_HMEM in the provider)" : "");
  else
    shoal_warn("%s: [%zu, %zu + %zu) is past the end of space %d (%" PRIu64 " bytes) on pe %d", routine, off, off, n,
               space, shoal_ofi.rlen[space][pe], pe);
  return shoal_ofi.up && (unsigned)space < SHOAL_SPACE_MAX && (unsigned)pe < (unsigned)shoal_ofi.npes &&
                 !shoal_ofi.rlen[space][pe]
             ? SHOAL_ERR_NOSYS
             : SHOAL_ERR_INVAL;
}

void shoal_ofi_close_fid(void *fidp) {
  struct fid **f = fidp;
  if (*f) fi_close(*f);
  *f = NULL;
}

/* A message that is not one of the job's (wrong token, length or fields) or a receive that failed: counted, the
 * first one said in a line, and nothing else done (the caller reposts the buffer). */
void shoal_ofi_drop(const char *why, size_t len) {
  atomic_fetch_add_explicit(&shoal_ofi.dropped, 1, memory_order_relaxed);
  if (!atomic_exchange(&shoal_ofi.dropped_said, true))
    shoal_warn("ofi: dropped a message of %zu bytes (%s): not from this job, or malformed; later ones are dropped "
               "and counted without a line (SHMEM_DEBUG=1 prints the count at finalize)", len, why);
}

ssize_t shoal_ofi_post_recv(amo_msg_t *buf) {
  ssize_t r;
  while ((r = fi_recv(shoal_ofi.ep, buf, sizeof *buf, NULL, FI_ADDR_UNSPEC, buf)) == -FI_EAGAIN)
    fi_cntr_read(shoal_ofi.t0.wcntr);
  return r;
}
