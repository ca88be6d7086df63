/* env.c - every environment variable Shoal reads, declared in one table and parsed once at init (design 4). */
#include "shoal.h"

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

#define F(field) offsetof(shoal_env_t, field), sizeof(((shoal_env_t *)0)->field)
static const env_var_t env_table[] = {
  {"SHMEM_SYMMETRIC_SIZE", ENV_SIZE, "512M", F(symmetric_size), "bytes with optional k/K/m/M/g/G/t/T suffix",
   "bytes of symmetric heap per PE"},
  {"SHMEM_DEBUG", ENV_BOOL, "0", F(debug), "0/1/yes/no/true/false/on/off", "debug checks and messages"},
  {"SHMEM_INFO", ENV_BOOL, "0", F(info), "0/1/yes/no/true/false/on/off",
   "print the version and every variable at init (PE 0)"},
  {"SHMEM_VERSION", ENV_BOOL, "0", F(version), "0/1/yes/no/true/false/on/off", "print the library version at init"},
  {"SHOAL_DEBUG_SUBSYS", ENV_STR, "all", F(debug_subsys), "comma list of boot,topo,heap,shm,ofi,gpu,coll,all",
   "subsystems whose debug output SHMEM_DEBUG shows"},
  {"SHOAL_SPIN", ENV_LONG, "-1", F(spin), "-1 (auto) or a count >= 1",
   "polls before a waiting PE yields the CPU; auto: 64 when PEs outnumber cores, else 16384"},
  {"SHOAL_BIND", ENV_ENUM, "none", F(bind), "core|numa|none", "CPU binding (oshrun --bind-to sets it)"},
  {"SHOAL_TOPO", ENV_STR, "", F(topo_src), "path of an hwloc .xml file, or a synthetic description",
   "topology to use instead of this machine's (testing)"},
  {"SHOAL_HEAP", ENV_ENUM, "host", F(heap_kind), "host|device", "where shmem_malloc allocates"},
  {"SHOAL_DEVICE_SYMMETRIC_SIZE", ENV_SIZE, "1G", F(device_symmetric_size),
   "bytes with optional k/K/m/M/g/G/t/T suffix", "bytes of GPU symmetric heap per PE"},
  {"SHOAL_COLL_BARRIER_ALGO", ENV_STR, "auto", F(coll_algo[0]), "auto|dissemination|linear", "barrier algorithm"},
  {"SHOAL_COLL_BCAST_ALGO", ENV_STR, "auto", F(coll_algo[1]), "auto|push|pull|tree", "broadcast algorithm"},
  {"SHOAL_COLL_FCOLLECT_ALGO", ENV_STR, "auto", F(coll_algo[2]), "auto|push|ring|rdbl", "fcollect algorithm"},
  {"SHOAL_COLL_ALLTOALL_ALGO", ENV_STR, "auto", F(coll_algo[3]), "auto|push|pairwise", "alltoall algorithm"},
  {"SHOAL_COLL_REDUCE_ALGO", ENV_STR, "auto", F(coll_algo[4]), "auto|oneshot|rdbl|rsag", "reduction algorithm"},
  {"SHOAL_COLL_COLLECT_ALGO", ENV_STR, "auto", F(coll_algo[5]), "auto|push|ring|rdbl", "collect algorithm"},
  {"SHOAL_COLL_VARIANT", ENV_ENUM, "hoisted", F(coll_variant), "hoisted|naive", "GPU collective kernel variant"},
  {"SHOAL_COLL_GPU_G", ENV_ENUM, "auto", F(coll_gpu_g), "auto|1|2|4|8",
   "GPU fcollect/alltoall: destinations stored together (auto: fcollect min(W, 8), alltoall 2)"},
  {"SHOAL_COLL_GPU_SMS", ENV_LONG, "-1", F(coll_gpu_sms), "-1 (auto: every multiprocessor) or a count >= 1",
   "GPU fcollect/alltoall: blocks of the persistent grid (COMM_SMS)"},
  {"SHOAL_COLL_GPU_TILE", ENV_SIZE, "0", F(coll_gpu_tile), "0 (auto) or bytes, a multiple of 16, with k/K/m/M suffix",
   "GPU fcollect/alltoall: bytes per tile"},
  {"SHOAL_COLL_GPU_SYNC", ENV_ENUM, "auto", F(coll_gpu_sync), "auto|device|host",
   "GPU fcollect/alltoall completion: device flags in the kernel, or host barrier (auto: device under MPS or one PE per GPU)"},
  {"SHOAL_GPU_HEAP_MAP", ENV_ENUM, "auto", F(gpu_heap_map), "auto|vmm|ipc",
   "how PEs map each other's device heap: vmm (CUDA VMM API, descriptors over Unix sockets) or ipc (cudaIpc/hipIpc "
   "handles); auto: vmm where the backend has it"},
  {"SHOAL_COLL_GPU_PIPE", ENV_ENUM, "auto", F(coll_gpu_pipe), "auto|on|off",
   "GPU fcollect/alltoall: issue the next loads before the stores (auto: on, except alltoall with G >= 4)"},
  {"SHOAL_COLL_GPU_SCOPE", ENV_ENUM, "auto", F(coll_gpu_scope), "auto|sys",
   "GPU fcollect/alltoall completion fences and flags (auto: device scope when every PE shares one GPU, else system)"},
  {"SHOAL_OFI_PROVIDER", ENV_STR, "", F(ofi_provider), "a libfabric provider name as fi_info -l lists it (tcp, verbs, "
   "cxi, efa, ...), or empty", "provider of the ofi transport between nodes (empty: FI_PROVIDER, else libfabric's "
   "best); it needs FI_EP_RDM with FI_RMA, FI_ATOMIC and FI_MSG"},
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
    if (shoal_env_parse_size(val, &x)) return SHOAL_ERR_INVAL;
    memcpy(field, &x, sizeof x);
    return SHOAL_OK;
  }
  case ENV_BOOL: return shoal_env_parse_bool(val, (bool *)field);
  case ENV_LONG: {
    long x;
    if (shoal_env_parse_long(val, &x) || x == 0 || x < -1) return SHOAL_ERR_INVAL;
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

shoal_status_t shoal_env_load(shoal_env_t *env, char *err, size_t errlen) {
  shoal_env_t e;
  memset(&e, 0, sizeof e);
  for (size_t i = 0; i < sizeof env_table / sizeof env_table[0]; i++) {
    const env_var_t *v = &env_table[i];
    if (parse_one(v, v->def, &e)) return SHOAL_ERR; /* a bad default is a bug */
    const char *val = getenv(v->name);
    if (val && parse_one(v, val, &e)) {
      snprintf(err, errlen, "%s=\"%s\" is not valid: expected %s", v->name, val, v->accepts);
      return SHOAL_ERR_INVAL;
    }
  }
  if (e.symmetric_size == 0) {
    snprintf(err, errlen, "SHMEM_SYMMETRIC_SIZE=\"%s\" is not valid: expected a size of at least 1 byte",
             getenv("SHMEM_SYMMETRIC_SIZE"));
    return SHOAL_ERR_INVAL;
  }
  unsigned mask;
  if (shoal_log_parse_subsys(e.debug_subsys, &mask, NULL, NULL)) {
    snprintf(err, errlen, "SHOAL_DEBUG_SUBSYS=\"%s\" is not valid: expected a comma list of "
             "boot,topo,heap,shm,ofi,gpu,coll,all", e.debug_subsys);
    return SHOAL_ERR_INVAL;
  }
  *env = e;
  return SHOAL_OK;
}

void shoal_env_print(const shoal_env_t *env, FILE *out) {
  fprintf(out, "Shoal %s, OpenSHMEM %d.%d\nEnvironment variables (name = value: help):\n", SHOAL_VERSION_STRING,
          SHMEM_MAJOR_VERSION, SHMEM_MINOR_VERSION);
  for (size_t i = 0; i < sizeof env_table / sizeof env_table[0]; i++) {
    const env_var_t *v = &env_table[i];
    const char *field = (const char *)env + v->off;
    char val[300];
    switch (v->type) {
    case ENV_SIZE: snprintf(val, sizeof val, "%zu", *(const size_t *)field); break;
    case ENV_BOOL: snprintf(val, sizeof val, "%d", *(const bool *)field); break;
    case ENV_LONG: snprintf(val, sizeof val, "%ld", *(const long *)field); break;
    default: snprintf(val, sizeof val, "%s", field); break;
    }
    fprintf(out, "  %-28s = %-12s : %s (%s; default %s)\n", v->name, val, v->help, v->accepts, v->def);
  }
}
