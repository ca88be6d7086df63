/* boot_pmix.c - the bootstrap of a PE started by a PMIx launcher (Open MPI's mpirun, prterun, srun --mpi=pmix):
 * rank, size and the node's ranks from the job's PMIx data; all-gathers as PMIx_Put + Commit + Fence (collecting
 * the data) + one PMIx_Get per PE; barriers as a plain Fence; PMIx_Abort for shmem_global_exit and fatal errors. */
#include "shoal.h"

#include <stdlib.h>

#if SHOAL_HAVE_PMIX
#include <pmix.h>

static pmix_proc_t me_proc;
static unsigned ag_seq; /* all-gather number: each one has keys of its own */

static shoal_status_t get_u32(const pmix_proc_t *p, const char *key, uint32_t *out) {
  pmix_value_t *v = NULL;
  if (PMIx_Get(p, key, NULL, 0, &v) != PMIX_SUCCESS || !v) return SHOAL_ERR;
  shoal_status_t rc = SHOAL_OK;
  switch (v->type) {
  case PMIX_UINT32: *out = v->data.uint32; break;
  case PMIX_UINT16: *out = v->data.uint16; break;
  case PMIX_INT: *out = (uint32_t)v->data.integer; break;
  case PMIX_PROC_RANK: *out = v->data.rank; break;
  default: rc = SHOAL_ERR;
  }
  PMIX_VALUE_RELEASE(v);
  return rc;
}

static shoal_status_t pmix_boot_init(shoal_boot_t *b) {
  pmix_status_t s = PMIx_Init(&me_proc, NULL, 0);
  if (s != PMIX_SUCCESS) {
    shoal_warn("shmem_init: PMIx_Init failed (%s): the PMIx launcher (PMIX_NAMESPACE=%s) cannot be reached",
               PMIx_Error_string(s), getenv("PMIX_NAMESPACE"));
    return SHOAL_ERR_IO;
  }
  pmix_proc_t job;
  PMIX_LOAD_PROCID(&job, me_proc.nspace, PMIX_RANK_WILDCARD);
  uint32_t size = 0, lsize = 0, lrank = 0;
  pmix_value_t *peers = NULL;
  if (get_u32(&job, PMIX_JOB_SIZE, &size) || get_u32(&job, PMIX_LOCAL_SIZE, &lsize) ||
      get_u32(&me_proc, PMIX_LOCAL_RANK, &lrank) || PMIx_Get(&job, PMIX_LOCAL_PEERS, NULL, 0, &peers) != PMIX_SUCCESS ||
      !peers || peers->type != PMIX_STRING || size < 1 || size > 1 << 24 || me_proc.rank >= size || lsize < 1 ||
      lsize > size || lrank >= lsize) {
    shoal_warn("shmem_init: PMIx gave no usable job size, local size, local rank or local peers");
    if (peers) PMIX_VALUE_RELEASE(peers);
    PMIx_Finalize(NULL, 0);
    return SHOAL_ERR_IO;
  }
  b->rank = (int)me_proc.rank, b->size = (int)size, b->local_rank = (int)lrank, b->local_size = (int)lsize;
  b->local = calloc(lsize, sizeof *b->local);
  /* "0,1,2": the node's ranks, ascending as the contract says */
  int k = 0;
  const char *c = peers->data.string;
  while (b->local && *c && k < (int)lsize) {
    char *end;
    long r = strtol(c, &end, 10);
    if (end == c || r < 0 || r >= (long)size) break;
    b->local[k++] = (int)r;
    c = *end == ',' ? end + 1 : end;
  }
  PMIX_VALUE_RELEASE(peers);
  for (int i = 1; i < k; i++) /* insertion sort: a handful of ranks */
    for (int j = i; j > 0 && b->local[j - 1] > b->local[j]; j--) {
      int t = b->local[j];
      b->local[j] = b->local[j - 1], b->local[j - 1] = t;
    }
  if (!b->local || k != (int)lsize || b->local[lrank] != b->rank) {
    shoal_warn("shmem_init: PMIx's local peers do not match its local size %u and local rank %u", lsize, lrank);
    free(b->local);
    b->local = NULL;
    PMIx_Finalize(NULL, 0);
    return SHOAL_ERR_IO;
  }
  return SHOAL_OK;
}

static shoal_status_t fence(void) {
  bool collect = true;
  pmix_info_t info;
  PMIX_INFO_CONSTRUCT(&info);
  PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
  pmix_status_t s = PMIx_Fence(NULL, 0, &info, 1);
  PMIX_INFO_DESTRUCT(&info);
  return s == PMIX_SUCCESS ? SHOAL_OK : SHOAL_ERR_IO;
}

static shoal_status_t pmix_allgather(shoal_boot_t *b, const void *in, void *out, size_t len) {
  if (!len) return PMIx_Fence(NULL, 0, NULL, 0) == PMIX_SUCCESS ? SHOAL_OK : SHOAL_ERR_IO;
  char key[PMIX_MAX_KEYLEN + 1];
  snprintf(key, sizeof key, "shoal.ag.%u", ag_seq++);
  pmix_value_t v;
  PMIX_VALUE_CONSTRUCT(&v);
  v.type = PMIX_BYTE_OBJECT;
  v.data.bo.bytes = (char *)in;
  v.data.bo.size = len;
  if (PMIx_Put(PMIX_GLOBAL, key, &v) != PMIX_SUCCESS || PMIx_Commit() != PMIX_SUCCESS || fence()) return SHOAL_ERR_IO;
  for (int p = 0; p < b->size; p++) {
    char *dst = (char *)out + (size_t)p * len;
    if (p == b->rank) {
      memmove(dst, in, len);
      continue;
    }
    pmix_proc_t q;
    pmix_value_t *got = NULL;
    PMIX_LOAD_PROCID(&q, me_proc.nspace, (pmix_rank_t)p);
    pmix_status_t s = PMIx_Get(&q, key, NULL, 0, &got);
    bool ok = s == PMIX_SUCCESS && got && got->type == PMIX_BYTE_OBJECT && got->data.bo.size == len;
    if (ok) memcpy(dst, got->data.bo.bytes, len);
    if (got) PMIX_VALUE_RELEASE(got);
    if (!ok) {
      shoal_warn("shmem_init: PMIx all-gather: no %zu-byte contribution from PE %d (%s)", len, p,
                 PMIx_Error_string(s));
      return SHOAL_ERR_IO;
    }
  }
  return SHOAL_OK;
}

static shoal_status_t pmix_barrier(shoal_boot_t *b) {
  return PMIx_Fence(NULL, 0, NULL, 0) == PMIX_SUCCESS ? SHOAL_OK : SHOAL_ERR_IO;
}

static void pmix_abort(shoal_boot_t *b, int status, const char *msg) { PMIx_Abort(status, msg, NULL, 0); }

static void pmix_fini(shoal_boot_t *b) { PMIx_Finalize(NULL, 0); }

#else /* built without PMIx: say so instead of running as 1 PE */
static shoal_status_t pmix_boot_init(shoal_boot_t *b) {
  shoal_warn("shmem_init: started by a PMIx launcher (PMIX_NAMESPACE=%s), but this Shoal was built without PMIx "
             "(install libpmix-dev and rebuild with meson -Dpmix=enabled), or use oshrun", getenv("PMIX_NAMESPACE"));
  return SHOAL_ERR_NOSYS;
}
static shoal_status_t pmix_allgather(shoal_boot_t *b, const void *in, void *out, size_t len) { return SHOAL_ERR_NOSYS; }
static shoal_status_t pmix_barrier(shoal_boot_t *b) { return SHOAL_ERR_NOSYS; }
static void pmix_abort(shoal_boot_t *b, int status, const char *msg) {}
static void pmix_fini(shoal_boot_t *b) {}
#endif

const shoal_boot_ops_t shoal_boot_pmix_ops = {
  .size = sizeof(shoal_boot_ops_t), .name = "pmix", .init = pmix_boot_init, .allgather = pmix_allgather,
  .barrier = pmix_barrier, .abort = pmix_abort, .fini = pmix_fini,
};
