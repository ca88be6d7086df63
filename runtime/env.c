/* env.c - every environment variable Shoal reads, declared in one table and parsed once at init (design 4). */
#include "shoal.h"
#include "topo.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

shoal_env_t shoal_env;

enum env_type { ENV_SIZE, ENV_BOOL, ENV_LONG, ENV_STR, ENV_ENUM };
typedef struct env_var {
  const char *name;
  enum env_type type;
  const char *def;     /* default, as text */
  size_t off;          /* field in shoal_env_t */
  size_t cap;          /* bytes, for strings */
  const char *accepts; /* ENV_ENUM: "a|b|c"; other types: description of accepted values */
  const char *help;
} env_var_t;

/* Sizes: at most SHOAL_ENV_SIZE_MAX (2^62 bytes = 4194304T). */
#define SIZE_ACCEPTS "bytes with optional k/K/m/M/g/G/t/T suffix, at most 4194304T"
#define F(field) offsetof(shoal_env_t, field), sizeof(((shoal_env_t *)0)->field)
static const env_var_t env_table[] = {
  {"SHMEM_SYMMETRIC_SIZE", ENV_SIZE, "512M", F(symmetric_size), SIZE_ACCEPTS,
   "bytes of symmetric heap per PE (SMA_SYMMETRIC_SIZE is read when this is not set)"},
  {"SHMEM_DEBUG", ENV_BOOL, "0", F(debug), "0/1/yes/no/true/false/on/off",
   "debug checks and messages (SMA_DEBUG is read when this is not set)"},
  {"SHMEM_INFO", ENV_BOOL, "0", F(info), "0/1/yes/no/true/false/on/off",
   "print the version and every variable at init (PE 0) (SMA_INFO is read when this is not set)"},
  {"SHMEM_VERSION", ENV_BOOL, "0", F(version), "0/1/yes/no/true/false/on/off",
   "print the library version at init (SMA_VERSION is read when this is not set)"},
  {"SHOAL_DEBUG_SUBSYS", ENV_STR, "all", F(debug_subsys), "comma list of boot,topo,heap,shm,ofi,gpu,coll,all",
   "subsystems whose debug output SHMEM_DEBUG shows"},
  {"SHOAL_SPIN", ENV_LONG, "-1", F(spin), "-1 (auto) or a count >= 1 (at most 2147483647)",
   "polls (rounded up to 32) before a waiting PE yields; auto: at once if a PE shares its CPU, else after 1 ms"},
  {"SHOAL_BIND", ENV_ENUM, "none", F(bind), "core|numa|none", "CPU binding (oshrun --bind-to sets it)"},
  {"SHOAL_TOPO", ENV_STR, "", F(topo_src), "path of an hwloc .xml file, or a synthetic description (< 256 chars)",
   "topology to use instead of this machine's (testing); unset: this machine's"},
  {"SHOAL_HEAP", ENV_ENUM, "host", F(heap_kind), "host|device", "where shmem_malloc allocates"},
  {"SHOAL_DEVICE_SYMMETRIC_SIZE", ENV_SIZE, "1G", F(device_symmetric_size), SIZE_ACCEPTS,
   "bytes of GPU symmetric heap per PE"},
  /* The algorithm families: the position of a name in accepts is its enum value (collectives/coll.h). */
  {"SHOAL_COLL_BARRIER_ALGO", ENV_ENUM, "auto", F(coll_algo[0]), "auto|dissemination|linear|hierarchical",
   "barrier algorithm of every barrier and sync (shmem_barrier_all and shmem_sync_all too; hierarchical: through "
   "each node's leader, on teams spanning nodes; auto takes it there)"},
  {"SHOAL_COLL_BCAST_ALGO", ENV_ENUM, "auto", F(coll_algo[1]), "auto|push|pull|tree|push-unsafe|staged|hierarchical",
   "broadcast algorithm (push-unsafe: push without waiting for each PE to enter the call, so it can overwrite a "
   "previous result a PE has not read yet: only with a barrier between calls; staged: teams, small sizes; "
   "hierarchical: through each node's leader, on teams spanning nodes, where auto takes it)"},
  {"SHOAL_COLL_FCOLLECT_ALGO", ENV_ENUM, "auto", F(coll_algo[2]), "auto|push|ring|rdbl|push-unsafe|hierarchical",
   "fcollect algorithm (push-unsafe: as for broadcast; hierarchical: through each node's leader, on teams spanning "
   "nodes; auto takes it there for blocks that cross in at most 3 rounds of the team's scratch)"},
  {"SHOAL_COLL_ALLTOALL_ALGO", ENV_ENUM, "auto", F(coll_algo[3]), "auto|push|pairwise|push-unsafe|hierarchical",
   "alltoall(s) algorithm (push-unsafe: as for broadcast; hierarchical: contiguous alltoall through each node's "
   "leader, on teams spanning nodes; auto takes it there for blocks that cross in at most 4 rounds of the team's "
   "scratch)"},
  {"SHOAL_COLL_REDUCE_ALGO", ENV_ENUM, "auto", F(coll_algo[4]), "auto|oneshot|rdbl|rsag|hierarchical|halving",
   "reduction algorithm (hierarchical: through each node's leader, on teams spanning nodes; auto takes it there; "
   "halving: recursive halving then doubling, power-of-two teams (others: rsag); auto takes it on teams whose members "
   "are all on other nodes from 256 KiB, 1 MiB at 2 PEs)"},
  {"SHOAL_COLL_COLLECT_ALGO", ENV_ENUM, "auto", F(coll_algo[5]), "auto|push|ring|rdbl", "collect algorithm"},
  {"SHOAL_COLL_STREAM_MIN", ENV_SIZE, "0", F(coll_stream_min),
   "0 (auto: half the last-level cache) or bytes with k/K/m/M/g/G/t/T suffix, at most 4194304T",
   "bytes a [f]collect or alltoall writes across the team from which its copies bypass the caches (non-temporal "
   "stores)"},
  {"SHOAL_COLL_VARIANT", ENV_ENUM, "hoisted", F(coll_variant), "hoisted|naive", "GPU collective kernel variant"},
  {"SHOAL_COLL_GPU_G", ENV_ENUM, "auto", F(coll_gpu_g), "auto|1|2|4|8",
   "GPU fcollect/alltoall: destinations stored together (auto: fcollect min(W, 8), alltoall 2)"},
  {"SHOAL_COLL_GPU_SMS", ENV_LONG, "-1", F(coll_gpu_sms),
   "-1 (auto: every multiprocessor) or a count >= 1 (at most 2147483647)",
   "GPU fcollect/alltoall: blocks of the persistent grid (COMM_SMS)"},
  {"SHOAL_COLL_GPU_TILE", ENV_SIZE, "0", F(coll_gpu_tile),
   "0 (auto) or bytes, a multiple of 16, with k/K/m/M suffix, at most 4194304T",
   "GPU fcollect/alltoall: bytes per tile"},
  {"SHOAL_COLL_GPU_SYNC", ENV_ENUM, "auto", F(coll_gpu_sync), "auto|device|host",
   "GPU fcollect/alltoall completion: device flags in the kernel, or host barrier (auto: device under MPS or one PE per GPU)"},
  {"SHOAL_GPU_HEAP_MAP", ENV_ENUM, "auto", F(gpu_heap_map), "auto|vmm|ipc",
   "how PEs map each other's device heap: vmm (CUDA VMM API, descriptors over Unix sockets) or ipc (cudaIpc/hipIpc "
   "handles); auto: vmm where the backend has it"},
  {"SHOAL_GPU_STAGE_ASYNC", ENV_BOOL, "1", F(gpu_stage_async), "0/1/yes/no/true/false/on/off",
   "far PEs' staged puts: this PE enqueues its copy into the device heap and answers once the copy is done, its "
   "progress going on meanwhile; the device proxy's nbi puts enqueue their copy out of GPU memory and send each chunk "
   "once it is done, serving the next requests meanwhile (0: both copies waited for, as before 2026-12-06)"},
  {"SHOAL_GPU_COPIER", ENV_BOOL, "1", F(gpu_copier), "0/1/yes/no/true/false/on/off",
   "staged copies to and from far PEs' device heaps (the device proxy's out of GPU memory, the transport's of far "
   "PEs' chunks into this PE's heap) enqueued and asked after by a thread of this PE's own, so that neither the "
   "proxy nor the transport's progress makes a GPU driver call per chunk (0: each does both itself, as before "
   "2026-12-06)"},
  {"SHOAL_PROXY_QUEUE_ENTRIES", ENV_LONG, "1024", F(proxy_queue_entries), "a power of two from 8 to 1048576",
   "entries (64 bytes each) of a PE's queue of device-initiated operations on PEs of other nodes, served by its "
   "host proxy thread; a kernel posting into a full queue waits for the proxy (docs/gpu.md, \"The proxy\")"},
  {"SHOAL_COLL_GPU_PIPE", ENV_ENUM, "auto", F(coll_gpu_pipe), "auto|on|off",
   "GPU fcollect/alltoall: issue the next loads before the stores (auto: on, except alltoall with G >= 4)"},
  {"SHOAL_COLL_GPU_SCOPE", ENV_ENUM, "auto", F(coll_gpu_scope), "auto|sys",
   "GPU fcollect/alltoall completion fences and flags (auto: device scope when every PE shares one GPU, else system)"},
  {"SHOAL_COLL_GPU_SMALL", ENV_ENUM, "auto", F(coll_gpu_small), "auto|off",
   "GPU fcollect/alltoall: a call of one block (16 KiB per PE and less by default) completes with one fence and no "
   "arrival counter; GPU reductions of W x bytes <= 32 KiB take one exchange (off: as a grid does, two exchanges)"},
  {"SHOAL_COLL_GPU_PDL", ENV_ENUM, "auto", F(coll_gpu_pdl), "auto|off",
   "GPU fcollect/alltoall: calls of at most 8 blocks are launched with programmatic dependent launch (CUDA, sm_90 and "
   "later), so that they start while the stream's previous kernel ends"},
  {"SHOAL_COLL_GPU_FAR", ENV_ENUM, "auto", F(coll_gpu_far), "auto|flat|hierarchical",
   "GPU fcollect, broadcast and reductions on teams with members on several nodes and two or more on one: through "
   "each node's leader, one copy per node between nodes (auto, hierarchical), or every member to every member "
   "(flat)"},
  {"SHOAL_OFI_PROVIDER", ENV_STR, "", F(ofi_provider), "a libfabric provider name as fi_info -l lists it (tcp, verbs, "
   "cxi, efa, ...), or empty", "provider of the ofi transport between nodes (empty: FI_PROVIDER, else libfabric's "
   "best, net before tcp;ofi_rxm); it needs FI_EP_RDM with FI_RMA, FI_ATOMIC and FI_MSG"},
  {"SHOAL_OFI_TIMEOUT", ENV_LONG, "30", F(ofi_timeout), "-1 (never) or seconds >= 1 (at most 2147483647)",
   "seconds a PE waiting on the ofi transport gives a peer of another node to answer a probe before it ends the "
   "job with one line naming the peer (a link down, a PE stopped or gone)"},
  {"SHOAL_OFI_STAGE_PROFILE", ENV_BOOL, "0", F(ofi_stage_profile), "0/1/yes/no/true/false/on/off",
   "measuring: each PE sums where its staged puts to far device heaps spend their time (per chunk: room in the ring, "
   "the copy out of GPU memory, the send, the answer; at the target the copy in) and prints it at shmem_finalize"},
  {"SHOAL_TRANSPORT", ENV_ENUM, "auto", F(transport), "auto|shm|ofi",
   "how a PE reaches the others: auto: shared memory within a node, ofi (libfabric) between nodes; shm: shared "
   "memory only (a job over several nodes stops at init); ofi: libfabric for every other PE, those of this node too "
   "(testing; the device heap stays on shared memory). The same on every PE"},
  {"SHOAL_NODE_PES", ENV_LONG, "-1", F(node_pes), "-1 (off) or a count >= 1 (at most 2147483647)",
   "testing: each run of this many consecutive PEs of a node acts as a node of its own (shared memory within it, "
   "the transport between), to try multi-node runs on one machine. The same on every PE"},
  {"SHOAL_NODE_MAP", ENV_ENUM, "block", F(node_map), "block|cyclic",
   "testing, with SHOAL_NODE_PES=k: block: ranks 0..k-1 make the first node, k..2k-1 the next, ...; cyclic: rank r "
   "is on node r mod ceil(PEs / k), as Open MPI's --map-by node deals them. The same on every PE"},
  {"SHOAL_BOOTSTRAP", ENV_ENUM, "auto", F(bootstrap), "auto|single",
   "auto: the launcher that started the process (oshrun, PMIx), else a 1-PE job, refused where another launcher's "
   "variables say it is one of several processes (srun without --mpi=pmix); single: a 1-PE job whatever the "
   "launcher's variables say (srun -n 4 ./app as four separate 1-PE jobs)"},
};
#undef F

shoal_status_t shoal_env_parse_size(const char *s, size_t *out) {
  while (isspace((unsigned char)*s)) s++;
  if (!isdigit((unsigned char)*s)) return SHOAL_ERR_INVAL; /* no sign, no empty */
  errno = 0;
  char *end;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno == ERANGE) return SHOAL_ERR_INVAL;
  unsigned shift = 0;
  switch (*end) {
  case 'k': case 'K': shift = 10; end++; break;
  case 'm': case 'M': shift = 20; end++; break;
  case 'g': case 'G': shift = 30; end++; break;
  case 't': case 'T': shift = 40; end++; break;
  default: break;
  }
  if (*end == 'b' || *end == 'B') end++;
  if (*end != '\0') return SHOAL_ERR_INVAL;
  if (shift && v > (SIZE_MAX >> shift)) return SHOAL_ERR_INVAL;
  *out = (size_t)(v << shift);
  return SHOAL_OK;
}

shoal_status_t shoal_env_parse_bool(const char *s, bool *out) {
  static const char *yes[] = {"1", "y", "yes", "true", "on"}, *no[] = {"0", "n", "no", "false", "off", ""};
  for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
    if (!strcasecmp(s, yes[i])) return *out = true, SHOAL_OK;
  for (size_t i = 0; i < sizeof no / sizeof *no; i++)
    if (!strcasecmp(s, no[i])) return *out = false, SHOAL_OK;
  return SHOAL_ERR_INVAL;
}

shoal_status_t shoal_env_parse_long(const char *s, long *out) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end) return SHOAL_ERR_INVAL;
  *out = v;
  return SHOAL_OK;
}

static bool enum_ok(const char *accepts, const char *v) {
  size_t n = strlen(v);
  for (const char *p = accepts; *p;) {
    size_t m = strcspn(p, "|");
    if (m == n && !strncmp(p, v, n)) return true;
    p += m + (p[m] == '|');
  }
  return false;
}

static shoal_status_t parse_one(const env_var_t *v, const char *val, shoal_env_t *env) {
  char *field = (char *)env + v->off;
  switch (v->type) {
  case ENV_SIZE: {
    size_t x;
    if (shoal_env_parse_size(val, &x) || x > SHOAL_ENV_SIZE_MAX) return SHOAL_ERR_INVAL;
    memcpy(field, &x, sizeof x);
    return SHOAL_OK;
  }
  case ENV_BOOL: return shoal_env_parse_bool(val, (bool *)field);
  case ENV_LONG: {
    long x;
    if (shoal_env_parse_long(val, &x) || x == 0 || x < -1 || x > INT_MAX) return SHOAL_ERR_INVAL;
    *(long *)field = x;
    return SHOAL_OK;
  }
  case ENV_ENUM:
    if (!enum_ok(v->accepts, val)) return SHOAL_ERR_INVAL;
    /* fall through */
  case ENV_STR:
    if (strlen(val) >= v->cap) return SHOAL_ERR_INVAL;
    strcpy(field, val);
    return SHOAL_OK;
  }
  return SHOAL_ERR_INVAL;
}

static shoal_status_t bad_value(char *err, size_t errlen, const char *name, const char *val, const char *accepts) {
  snprintf(err, errlen, "%s=\"%s\" is not valid: expected %s", name, val, accepts);
  return SHOAL_ERR_INVAL;
}

#define NVARS (sizeof env_table / sizeof env_table[0])

void shoal_env_defaults(shoal_env_t *env) {
  memset(env, 0, sizeof *env);
  for (size_t i = 0; i < NVARS; i++) parse_one(&env_table[i], env_table[i].def, env);
}

shoal_status_t shoal_env_load(shoal_env_t *env, char *err, size_t errlen) {
  shoal_env_t e;
  memset(&e, 0, sizeof e);
  char from[NVARS][40]; /* the name each value came from ("": the default) */
  for (size_t i = 0; i < NVARS; i++) {
    const env_var_t *v = &env_table[i];
    from[i][0] = 0;
    if (parse_one(v, v->def, &e)) return SHOAL_ERR; /* a bad default is a bug */
    const char *val = getenv(v->name), *name = v->name;
    /* The specification's variables (SHMEM_*) have deprecated SMA_* spellings that SOS and OSHMEM still read: used
     * only when the SHMEM_ one is not set, and noted under SHMEM_DEBUG. */
    char alias[40] = "";
    if (!strncmp(v->name, "SHMEM_", 6)) snprintf(alias, sizeof alias, "SMA_%s", v->name + 6);
    const char *old = alias[0] ? getenv(alias) : NULL;
    if (old)
      snprintf(e.aliases + strlen(e.aliases), sizeof e.aliases - strlen(e.aliases), "%s%s %s", *e.aliases ? "; " : "",
               alias, val ? "ignored: its SHMEM_ name is set" : "read (deprecated spelling)");
    if (!val && old) val = old, name = alias;
    if (val && parse_one(v, val, &e)) return bad_value(err, errlen, name, val, v->accepts);
    if (val) snprintf(from[i], sizeof from[i], "%s", name);
  }
  /* Checks that one value's syntax cannot express. The table's first entry is SHMEM_SYMMETRIC_SIZE. */
  if (e.symmetric_size == 0)
    return bad_value(err, errlen, from[0], getenv(from[0]), "a size of at least 1 byte");
  unsigned mask;
  if (shoal_log_parse_subsys(e.debug_subsys, &mask, NULL, NULL))
    return bad_value(err, errlen, "SHOAL_DEBUG_SUBSYS", e.debug_subsys,
                     "a comma list of boot,topo,heap,shm,ofi,gpu,coll,all");
  if (e.coll_gpu_tile % 16)
    return bad_value(err, errlen, "SHOAL_COLL_GPU_TILE", getenv("SHOAL_COLL_GPU_TILE"),
                     "0 (auto) or a multiple of 16 bytes");
  const long pq = e.proxy_queue_entries;
  if (pq < 8 || pq > 1048576 || (pq & (pq - 1)))
    return bad_value(err, errlen, "SHOAL_PROXY_QUEUE_ENTRIES", getenv("SHOAL_PROXY_QUEUE_ENTRIES"),
                     "a power of two from 8 to 1048576");
  const char *topo = getenv("SHOAL_TOPO");
  if (topo && !*topo) /* the file or description itself is read (and refused) by topology setup at init */
    return bad_value(err, errlen, "SHOAL_TOPO", topo, SHOAL_TOPO_ACCEPTS " (unset it for this machine's topology)");
  *env = e;
  return SHOAL_OK;
}

/* Variables of our prefixes that are no entry of the table but are read by name: the launchers' (oshrun sets them
 * for every PE), the compiler wrappers' (oshcc, oshc++, oshnvcc read SHOAL_CC, SHOAL_CXX, SHOAL_NVCC, as Open MPI's
 * read OMPI_CC, and export SHOAL_WRAPPER_ACTIVE), and those of Shoal's own test programs (tests/gpu, tests/unit). */
static const char *const env_other[] = {"SHOAL_BOOT_ADDR", "SHOAL_BOOT_SECRET", "SHOAL_RANK", "SHOAL_SIZE",
                                        "SHOAL_LOCAL_RANK", "SHOAL_LOCAL_SIZE", "SHOAL_PE_JOB", "SHOAL_CC",
                                        "SHOAL_CXX", "SHOAL_NVCC", "SHOAL_WRAPPER_ACTIVE", "SHOAL_TEST_TRACE",
                                        "SHOAL_TEST_DEVICE_FORMS", "SHOAL_FIXTURES_DIR",
                                        "SHOAL_LIB" /* the shoal Python package: which libshoal to load */};

/* Edit distance of a and b (insertions, deletions, substitutions), or 99 when either is longer than 63. */
static int edit_distance(const char *a, size_t na, const char *b) {
  size_t nb = strlen(b);
  int row[64];
  if (na > 63 || nb > 63) return 99;
  for (size_t j = 0; j <= nb; j++) row[j] = (int)j;
  for (size_t i = 1; i <= na; i++) {
    int diag = row[0];
    row[0] = (int)i;
    for (size_t j = 1; j <= nb; j++) {
      int up = row[j], best = diag + (a[i - 1] != b[j - 1]);
      if (up + 1 < best) best = up + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      diag = up;
      row[j] = best;
    }
  }
  return row[nb];
}

extern char **environ;

int shoal_env_unknown(char *buf, size_t len) {
  int count = 0;
  if (len) *buf = 0;
  for (char **ep = environ; ep && *ep; ep++) {
    const char *kv = *ep;
    size_t n = strcspn(kv, "=");
    if (strncmp(kv, "SHMEM_", 6) && strncmp(kv, "SHOAL_", 6)) continue;
    bool known = false;
    const char *near = NULL;
    int dist = n >= 16 ? 3 : 2; /* suggest a name at most 2 edits away (1 for short names: SHOAL_FOO is no typo) */
    for (size_t i = 0; i < NVARS && !known; i++) {
      known = strlen(env_table[i].name) == n && !strncmp(kv, env_table[i].name, n);
      int d = edit_distance(kv, n, env_table[i].name);
      if (d < dist) dist = d, near = env_table[i].name;
    }
    for (size_t i = 0; i < sizeof env_other / sizeof *env_other && !known; i++)
      known = strlen(env_other[i]) == n && !strncmp(kv, env_other[i], n);
    if (known) continue;
    size_t used = strlen(buf);
    if (near)
      snprintf(buf + used, len - used, "%s%.*s (did you mean %s?)", count ? ", " : "", (int)n, kv, near);
    else
      snprintf(buf + used, len - used, "%s%.*s", count ? ", " : "", (int)n, kv);
    count++;
  }
  return count;
}

int shoal_env_choice(const char *name) {
  for (size_t i = 0; i < NVARS; i++) {
    const env_var_t *v = &env_table[i];
    if (v->type != ENV_ENUM || strcmp(v->name, name)) continue;
    const char *val = (const char *)&shoal_env + v->off;
    size_t n = strlen(val);
    int k = 0;
    for (const char *p = v->accepts; *p; k++) {
      size_t m = strcspn(p, "|");
      if (m == n && !strncmp(p, val, n)) return k;
      p += m + (p[m] == '|');
    }
  }
  return -1;
}

static const char *const type_names[] = {[ENV_SIZE] = "size", [ENV_BOOL] = "bool", [ENV_LONG] = "integer",
                                         [ENV_STR] = "string", [ENV_ENUM] = "choice"};

int shoal_env_row(const shoal_env_t *env, size_t i, shoal_env_row_t *out) {
  if (i >= NVARS) return SHOAL_ERR_INVAL;
  const env_var_t *v = &env_table[i];
  const char *field = (const char *)env + v->off;
  *out = (shoal_env_row_t){.name = v->name, .type = type_names[v->type], .def = v->def, .accepts = v->accepts,
                           .help = v->help, .set = getenv(v->name)};
  switch (v->type) {
  case ENV_SIZE: snprintf(out->value, sizeof out->value, "%zu", *(const size_t *)field); break;
  case ENV_BOOL: snprintf(out->value, sizeof out->value, "%d", *(const bool *)field); break;
  case ENV_LONG: snprintf(out->value, sizeof out->value, "%ld", *(const long *)field); break;
  default: snprintf(out->value, sizeof out->value, "%s", field); break;
  }
  return SHOAL_OK;
}

void shoal_env_print(const shoal_env_t *env, FILE *out) {
  fprintf(out, "Shoal %s, OpenSHMEM %d.%d\nEnvironment variables (name = value: help):\n", SHOAL_VERSION_STRING,
          SHMEM_MAJOR_VERSION, SHMEM_MINOR_VERSION);
  shoal_env_row_t r;
  for (size_t i = 0; !shoal_env_row(env, i, &r); i++)
    fprintf(out, "  %-28s = %-12s : %s (%s; default %s)\n", r.name, r.value, r.help, r.accepts, r.def);
}
