/* boot.c - which bootstrap runs this PE, and the contract's entry points over it (shoal.h).
 *
 * In order: oshrun's variables (SHOAL_BOOT_ADDR) -> boot_oshrun.c; a PMIx launcher's (PMIX_NAMESPACE, PMIX_RANK:
 * mpirun, prterun, srun --mpi=pmix) -> boot_pmix.c; neither -> a 1-PE job, unless another launcher's variables say
 * that this process is one of several (then one line and a failure, not a silent 1-PE job). A program started from
 * inside a PE inherits that PE's launcher variables: SHOAL_PE_JOB, which every PE sets to its job's name, tells it
 * they are not its own, and it runs as a 1-PE job of its own. SHOAL_BOOTSTRAP=single makes any process a 1-PE job. */
#include "shoal.h"
#include "boot_proto.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Another launcher's process count, when it says there are several processes and gives us no bootstrap; *task is
 * this process's number there (its rank variable), or 0 when it has none. SLURM_STEP_NUM_TASKS: srun without
 * -n sets no SLURM_NTASKS in some setups, but always this. */
static const char *other_launcher(long *n, long *task) {
  static const char *const vars[][2] = {{"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"}, {"PMI_SIZE", "PMI_RANK"},
                                        {"SLURM_NTASKS", "SLURM_PROCID"}, {"SLURM_STEP_NUM_TASKS", "SLURM_PROCID"},
                                        {"PMIX_SIZE", "PMIX_RANK"}, {"MPI_LOCALNRANKS", "MPI_LOCALRANKID"}};
  for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
    const char *s = getenv(vars[i][0]), *r = getenv(vars[i][1]);
    if (s && !shoal_env_parse_long(s, n) && *n > 1) {
      if (!r || shoal_env_parse_long(r, task) || *task < 0 || *task >= *n) *task = 0;
      return vars[i][0];
    }
  }
  return NULL;
}

static shoal_status_t singleton(shoal_boot_t *b) {
  b->rank = 0, b->size = 1, b->local_rank = 0, b->local_size = 1, b->machine_size = 1;
  b->local = calloc(1, sizeof *b->local);
  b->pids = calloc(1, sizeof *b->pids);
  if (!b->local || !b->pids) return SHOAL_ERR_NOMEM;
  b->pids[0] = getpid();
  return SHOAL_OK;
}

/* SHOAL_NODE_PES=k (testing): keep of this node's PEs those of this PE's run of k consecutive ranks, so that one
 * machine plays several nodes: the node socket, the shared heaps and SHMEM_TEAM_SHARED then cover the run only,
 * and the other PEs are reached as on other nodes. SHOAL_NODE_MAP=cyclic deals ranks to ceil(size / k) nodes round
 * robin instead (a node's PEs are not consecutive, as with mpirun --map-by node). */
static void node_split(shoal_boot_t *b, long k, bool cyclic) {
  int nodes = (int)((b->size + k - 1) / k); /* cyclic (SHOAL_NODE_MAP): rank r on node r mod nodes */
#define GROUP(r) (cyclic ? (r) % nodes : (r) / (int)k)
  int g = GROUP(b->rank), n = 0;
  for (int i = 0; i < b->local_size; i++)
    if (GROUP(b->local[i]) == g) {
      if (b->local[i] == b->rank) b->local_rank = n;
      b->local[n++] = b->local[i];
    }
  b->local_size = n;
#undef GROUP
}

/* shoal_fatal's way to stop the job (log.c's hook): through the launcher while shoal_g.boot is up, nothing before
 * shoal_boot_init or after shoal_boot_fini (no ops), as shoal_boot_abort does. */
static void log_abort(int status) { shoal_boot_abort(&shoal_g.boot, status); }

shoal_status_t shoal_boot_init(shoal_boot_t *b) {
  shoal_log_abort_hook = log_abort;
  shoal_boot_t nb = {.fd = -1, .node_listen = -1, .node_fd = -1};
  if (!strcmp(shoal_env.bootstrap, "single")) {
    shoal_status_t rc = singleton(&nb);
    if (rc) return rc;
    SHOAL_DEBUG(SHOAL_SUB_BOOT, "SHOAL_BOOTSTRAP=single: running as a 1-PE job");
    *b = nb;
    return SHOAL_OK;
  }
  const char *addr = getenv(SHOAL_BOOT_ENV_ADDR), *ns = getenv("PMIX_NAMESPACE"), *job = getenv(SHOAL_BOOT_ENV_JOB);
  if (addr)
    snprintf(nb.job, sizeof nb.job, "oshrun:%s", addr);
  else if (ns && getenv("PMIX_RANK"))
    snprintf(nb.job, sizeof nb.job, "pmix:%s", ns);
  if (nb.job[0] && job && !strcmp(job, nb.job)) {
    SHOAL_DEBUG(SHOAL_SUB_BOOT, "started from inside a PE of job %s: running as a 1-PE job of its own", job);
    nb.job[0] = 0;
    addr = ns = NULL;
  }
  shoal_status_t rc;
  if (addr) {
    nb.ops = &shoal_boot_oshrun_ops;
  } else if (nb.job[0]) {
    nb.ops = &shoal_boot_pmix_ops;
  } else {
    long n = 0, task = 0;
    const char *var = job ? NULL : other_launcher(&n, &task);
    if (var) {
      /* Every task of an `srun -n 4` says this: its line names its task (the log's PE number), not "PE 0" 4 times. */
      b->rank = (int)task, b->size = (int)n;
      shoal_warn("shmem_init: %s=%ld says this is one of %ld processes, but no bootstrap reaches them (no oshrun, "
                 "no PMIx server%s): run it with oshrun, mpirun, prterun or srun --mpi=pmix (docs/launching.md; "
                 "SHOAL_BOOTSTRAP=single runs each as a 1-PE job)", var, n, n,
                 SHOAL_HAVE_PMIX ? "" : "; this Shoal was built without PMIx");
      return SHOAL_ERR_INVAL;
    }
    if ((rc = singleton(&nb))) return rc;
    SHOAL_DEBUG(SHOAL_SUB_BOOT, "no launcher: running as a 1-PE job");
    *b = nb;
    return SHOAL_OK;
  }
  if ((rc = nb.ops->init(&nb))) return rc;
  nb.machine_size = nb.local_size; /* simulated nodes still share this machine's CPUs */
  if (shoal_env.node_pes > 0) node_split(&nb, shoal_env.node_pes, !strcmp(shoal_env.node_map, "cyclic"));
  if ((rc = shoal_boot_node_init(&nb))) {
    nb.ops->fini(&nb);
    free(nb.local);
    free(nb.pids);
    return rc;
  }
  /* What a program started from this PE will see (see above). */
  setenv(SHOAL_BOOT_ENV_JOB, nb.job, 1);
  *b = nb;
  SHOAL_DEBUG(SHOAL_SUB_BOOT, "%s: rank %d of %d (local %d of %d)", b->ops->name, b->rank, b->size, b->local_rank,
              b->local_size);
  return SHOAL_OK;
}

shoal_status_t shoal_boot_allgather(shoal_boot_t *b, const void *in, void *out, size_t len) {
  if (len > SHOAL_BOOT_MAX_LEN) return SHOAL_ERR_INVAL;
  if (!b->ops) {
    if (len) memmove(out, in, len);
    return SHOAL_OK;
  }
  return b->ops->allgather(b, in, out, len);
}

shoal_status_t shoal_boot_barrier(shoal_boot_t *b) { return b->ops ? b->ops->barrier(b) : SHOAL_OK; }

void shoal_boot_abort(shoal_boot_t *b, int status) {
  if (b->ops) b->ops->abort(b, status, "shoal: the job is stopped (shmem_global_exit or a fatal error)");
}

void shoal_boot_fini(shoal_boot_t *b) {
  shoal_boot_node_close(b);
  if (b->ops) b->ops->fini(b);
  b->ops = NULL;
  free(b->local);
  free(b->pids);
  b->local = NULL;
  b->pids = NULL;
}
