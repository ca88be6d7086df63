/* shoal_info.c - shoal-info(1): what this Shoal was built with and what it finds on this node (ompi_info,
 * nvshmem-info). Read-only: it starts no job, binds nothing, opens no endpoint and allocates no GPU memory; every
 * answer comes from the tables the runtime itself uses (the environment table of env.c, topo.c's PE map, the GPU
 * backends' ops tables), so it cannot drift from what a job would do. Manual: docs/man/shoal-info.md. */
#include "shoal.h"
#include "topo.h"
#include "gpu.h"
#include "shoal_build_info.h" /* generated: runtime/build_info.py */

#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if SHOAL_HAVE_OFI
#include <rdma/fabric.h>
#endif

static bool parsable;

/* One fact: "section:key:value" with --parsable, else "  key: value" under a heading the caller printed. */
static void fact(const char *section, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fact(const char *section, const char *key, const char *fmt, ...) {
  char val[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(val, sizeof val, fmt, ap);
  va_end(ap);
  for (char *c = val; *c; c++)
    if (*c == '\n') *c = ' '; /* one line per fact, whatever a help text holds */
  if (parsable)
    printf("%s:%s:%s\n", section, key, val);
  else
    printf("  %-30s %s\n", key, val);
}
static void heading(const char *h) {
  if (!parsable) printf("%s\n", h);
}

static void versions(void) {
  heading("Shoal");
  fact("version", "shoal", "%s", SHOAL_VERSION_STRING);
  fact("version", "openshmem", "%d.%d", SHMEM_MAJOR_VERSION, SHMEM_MINOR_VERSION);
  fact("version", "vendor", "%s", SHMEM_VENDOR_STRING);
}

/* The build: meson features, then what oshmem_info also reports (compiler, flags, prefix) and the GPU architectures
 * the kernels were compiled for ("none" without that backend): a kernel image missing for a job's GPU shows here. */
static void build_options(void) {
  heading("Build options (meson features compiled in)");
  fact("build", "cuda", "%s", SHOAL_HAVE_CUDA ? "yes" : "no");
  fact("build", "hip", "%s", SHOAL_HAVE_HIP ? "yes" : "no");
  fact("build", "ofi", "%s", SHOAL_HAVE_OFI ? "yes" : "no");
  fact("build", "pmix", "%s", SHOAL_HAVE_PMIX ? "yes" : "no");
  fact("build", "compiler", "%s", SHOAL_BUILD_COMPILER);
  fact("build", "compiler_command", "%s", SHOAL_BUILD_COMPILER_COMMAND);
  fact("build", "cflags", "%s", SHOAL_BUILD_CFLAGS);
  fact("build", "buildtype", "%s", SHOAL_BUILD_BUILDTYPE);
  fact("build", "prefix", "%s", SHOAL_BUILD_PREFIX);
  fact("build", "cuda_arch", "%s", SHOAL_BUILD_CUDA_ARCH);
  fact("build", "cuda_ptx", "%s", SHOAL_BUILD_CUDA_PTX);
  fact("build", "cuda_test_arch", "%s", SHOAL_BUILD_CUDA_TEST_ARCH);
  fact("build", "hip_arch", "%s", SHOAL_BUILD_HIP_ARCH);
}

/* A backend compiled in: how many devices its runtime reports here, and each one's bus id and multiprocessors. */
static __attribute__((unused)) void gpu_backend(const char *name, const shoal_gpu_ops_t *ops) {
  char key[64];
  int n = 0;
  if (!ops || !ops->device_count || ops->device_count(&n)) n = 0;
  snprintf(key, sizeof key, "%s:devices", name);
  fact("gpu", key, "%d", n);
  for (int d = 0; d < n; d++) {
    char busid[SHOAL_TOPO_BUSID_LEN] = "?";
    int sms = 0;
    if (ops->device_busid) ops->device_busid(d, busid, sizeof busid);
    if (ops->sm_count) ops->sm_count(d, &sms);
    snprintf(key, sizeof key, "%s:%d", name, d);
    fact("gpu", key, "busid %s, %d multiprocessors", busid, sms);
  }
}

static void gpus(hwloc_topology_t t) {
  heading("GPUs (backends compiled in, and the node's GPUs as hwloc sees them)");
  fact("gpu", "backends", "none%s%s", SHOAL_HAVE_CUDA ? ",cuda" : "", SHOAL_HAVE_HIP ? ",hip" : "");
#if SHOAL_HAVE_CUDA
  gpu_backend("cuda", &shoal_gpu_cuda_ops);
#endif
#if SHOAL_HAVE_HIP
  gpu_backend("hip", &shoal_gpu_hip_ops);
#endif
  int n = t ? shoal_topo_gpus(t, NULL, 0) : 0;
  if (n < 0) n = 0;
  fact("gpu", "hwloc:count", "%d", n);
  shoal_topo_gpu_t *g = n ? calloc((size_t)n, sizeof *g) : NULL;
  if (g && shoal_topo_gpus(t, g, n) == n)
    for (int i = 0; i < n; i++) {
      char key[32];
      snprintf(key, sizeof key, "hwloc:%d", i);
      fact("gpu", key, "busid %s, vendor %#06x, device %#06x, NUMA %d", g[i].busid, g[i].vendor, g[i].device,
           g[i].numa);
    }
  free(g);
}

/* Transports: shm always (PEs of one node); ofi when compiled in, with the providers fi_getinfo lists for the
 * provider a job would ask for (SHOAL_OFI_PROVIDER, else FI_PROVIDER, else tcp: never a scan of every provider).
 * fi_getinfo only describes what is there: no fabric, domain or endpoint is opened. */
static void transports(void) {
  heading("Transports");
  fact("transport", "shm", "yes (PEs of one node map each other's heaps)");
#if SHOAL_HAVE_OFI
  const char *prov = shoal_env.ofi_provider[0] ? shoal_env.ofi_provider : getenv("FI_PROVIDER");
  if (!prov || !*prov) prov = "tcp";
  fact("transport", "ofi", "yes (libfabric %u.%u, provider asked: %s)", FI_MAJOR(fi_version()),
       FI_MINOR(fi_version()), prov);
  struct fi_info *h = fi_allocinfo(), *info = NULL;
  if (h) {
    h->fabric_attr->prov_name = strdup(prov);
    h->ep_attr->type = FI_EP_RDM;
    h->caps = FI_RMA | FI_ATOMIC | FI_MSG;
    h->mode = ~0ull;
    h->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT | FI_MR_LOCAL;
    if (fi_getinfo(FI_VERSION(1, 10), NULL, NULL, 0, h, &info)) info = NULL;
    fi_freeinfo(h);
  }
  int k = 0;
  for (struct fi_info *i = info; i; i = i->next) {
    bool dup = false; /* one line per provider, fabric and domain: fi_getinfo repeats them per protocol and mode */
    for (struct fi_info *j = info; j != i && !dup; j = j->next)
      dup = !strcmp(j->fabric_attr->prov_name, i->fabric_attr->prov_name) &&
            !strcmp(j->fabric_attr->name, i->fabric_attr->name) && !strcmp(j->domain_attr->name, i->domain_attr->name);
    if (dup) continue;
    char key[32];
    snprintf(key, sizeof key, "ofi:%d", k);
    fact("transport", key, "provider %s, fabric %s, domain %s", i->fabric_attr->prov_name, i->fabric_attr->name,
         i->domain_attr->name);
    k++;
  }
  fact("transport", "ofi:usable", "%s", info ? "yes" : "no (no FI_EP_RDM provider with FI_RMA, FI_ATOMIC and FI_MSG)");
  fi_freeinfo(info);
#else
  fact("transport", "ofi", "no (built without libfabric)");
#endif
}

static int cpus_available(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set)) return (int)sysconf(_SC_NPROCESSORS_ONLN);
  return CPU_COUNT(&set);
}

/* The map oshrun -n npes would give on this node: its default binding (a core each when the PEs fit in the CPUs
 * this process may use, else none) unless bind names one; the same shoal_topo_map_pe the runtime calls. */
static int pe_map(hwloc_topology_t t, int npes, const char *bind) {
  shoal_bind_t b;
  if (!bind) bind = npes <= cpus_available() && !getenv("SHOAL_TOPO") ? "core" : "none";
  shoal_topo_parse_bind(bind, &b);
  heading("PE map of a job on this node (oshrun -n N --bind-to B; GPU: round robin over the nearest)");
  fact("map", "npes", "%d", npes);
  fact("map", "bind", "%s", bind);
  for (int pe = 0; pe < npes; pe++) {
    shoal_topo_map_t m;
    if (shoal_topo_map_pe(t, pe, npes, b, &m)) {
      fprintf(stderr, "shoal-info: --map %d: no PE map for PE %d on this topology\n", npes, pe);
      return 1;
    }
    char cpus[256], key[32];
    hwloc_bitmap_list_snprintf(cpus, sizeof cpus, m.cpuset);
    snprintf(key, sizeof key, "pe:%d", pe);
    if (parsable) {
      printf("map:%s:core:%d\nmap:%s:cpus:%s\nmap:%s:numa:%d\nmap:%s:gpu:%s\n", key, m.core, key, cpus, key, m.numa,
             key, m.gpu < 0 ? "none" : m.gpu_busid);
    } else {
      char line[512];
      shoal_topo_format_map(t, pe, &m, line, sizeof line);
      printf("  %s; OS CPUs %s\n", line, cpus);
    }
    hwloc_bitmap_free(m.cpuset);
  }
  return 0;
}

static void environment(const shoal_env_t *env) {
  heading("Environment variables (name: current value [default]; accepted values; help)");
  shoal_env_row_t r;
  for (size_t i = 0; !shoal_env_row(env, i, &r); i++) {
    if (parsable) {
      printf("env:%s:type:%s\nenv:%s:default:%s\nenv:%s:value:%s\nenv:%s:set:%s\n", r.name, r.type, r.name, r.def,
             r.name, r.value, r.name, r.set ? "yes" : "no");
      fact("env", r.name, "accepts:%s", r.accepts); /* fact() folds any newline of the texts */
      fact("env", r.name, "help:%s", r.help);
    } else {
      printf("  %s: %s [default %s]%s\n      %s; %s\n", r.name, r.value, r.def, r.set ? " (set)" : "", r.accepts,
             r.help);
    }
  }
}

static int usage(FILE *f, int rc) {
  fprintf(f, "usage: shoal-info [--parsable] [--map N [--bind-to core|numa|none]] [--env]\n"
             "  --parsable       key:value lines (section:key:value), as ompi_info --parsable\n"
             "  --map N          the PE -> core/NUMA/GPU map of an N-PE job on this node (N in [1, 4096])\n"
             "  --bind-to B      the binding policy of that map (default: oshrun's)\n"
             "  --env            only the environment variables\n"
             "  -V, --version    the version; -h, --help: this text\n");
  return rc;
}

int main(int argc, char **argv) {
  int npes = 0;
  const char *bind = NULL;
  bool env_only = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--parsable")) {
      parsable = true;
    } else if (!strcmp(a, "--env")) {
      env_only = true;
    } else if (!strcmp(a, "--map") || !strcmp(a, "--bind-to")) {
      if (i + 1 == argc) {
        fprintf(stderr, "shoal-info: option '%s' needs an argument\n", a);
        return 2;
      }
      const char *v = argv[++i];
      if (!strcmp(a, "--bind-to")) {
        shoal_bind_t b;
        if (shoal_topo_parse_bind(v, &b)) {
          fprintf(stderr, "shoal-info: --bind-to %s: expected core, numa or none\n", v);
          return 2;
        }
        bind = v;
        continue;
      }
      long n;
      if (shoal_env_parse_long(v, &n) || n < 1 || n > 4096) {
        fprintf(stderr, "shoal-info: --map %s: expected a PE count in [1, 4096]\n", v);
        return 2;
      }
      npes = (int)n;
    } else if (!strcmp(a, "-V") || !strcmp(a, "--version")) {
      printf("shoal-info (Shoal) %s, OpenSHMEM %d.%d\n", SHOAL_VERSION_STRING, SHMEM_MAJOR_VERSION,
             SHMEM_MINOR_VERSION);
      return 0;
    } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      return usage(stdout, 0);
    } else {
      fprintf(stderr, "shoal-info: unknown option '%s'\n", a);
      return usage(stderr, 2);
    }
  }
  if (bind && !npes) {
    fprintf(stderr, "shoal-info: --bind-to needs --map N\n");
    return 2;
  }
  /* The values a job would run with; a bad one is reported as init would, and the defaults are shown. */
  char err[512];
  shoal_env_t env;
  if (shoal_env_load(&env, err, sizeof err)) {
    fprintf(stderr, "shoal-info: %s (shmem_init would stop here; showing the defaults)\n", err);
    shoal_env_defaults(&env);
  }
  shoal_env = env;
  if (env_only) {
    environment(&env);
    return 0;
  }
  char msg[512];
  hwloc_topology_t t = NULL;
  if (shoal_topo_load_env(&t, getenv("SHOAL_TOPO"), msg, sizeof msg)) {
    fprintf(stderr, "shoal-info: %s\n", msg);
    t = NULL;
  }
  versions();
  build_options();
  transports();
  gpus(t);
  int rc = 0;
  if (npes) {
    if (!t) {
      fprintf(stderr, "shoal-info: --map %d: no topology to map on\n", npes);
      rc = 1;
    } else {
      rc = pe_map(t, npes, bind);
    }
  }
  environment(&env);
  if (t) hwloc_topology_destroy(t);
  return rc;
}
