/* init.c - the runtime's part of shmem_init/finalize (shoal_rt_init, _end, _fini: api/init.c wires them with the layers
 * above), the host symmetric heap (one memfd per PE, mapped by every PE of the node), the cached peer bases and
 * deltas, and the setup queries (spec 9.2). */
#include "xlate.h"
#include "ctx.h"
#include "transport.h"
#include "topo.h"
#include <hwloc/glibc-sched.h>
#include "heap_gpu.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

struct shoal_ctx shoal_ctx_default_obj = {.magic = SHOAL_CTX_MAGIC};
shmem_ctx_t SHMEM_CTX_DEFAULT = &shoal_ctx_default_obj;

static void init_fail(const char *routine, const char *fmt, const char *arg) {
  char msg[600];
  snprintf(msg, sizeof msg, fmt, arg);
  shoal_fatal(routine, "%s", msg);
}

void *shoal_internal_alloc(size_t bytes, size_t align) {
  size_t off = (shoal_g.internal_used + align - 1) & ~(align - 1);
  if (off + bytes > SHOAL_INTERNAL_SIZE) shoal_fatal("shoal_internal_alloc", "internal symmetric area exhausted");
  shoal_g.internal_used = off + bytes;
  return shoal_g.heap_base + off;
}

/* A heap this PE cannot have: one line naming the variable that sized it (SHMEM_SYMMETRIC_SIZE, its SMA_
 * spelling, or the default). */
_Noreturn static void heap_size_fail(const char *routine, int n, size_t total, const char *why) {
  const char *name = getenv("SHMEM_SYMMETRIC_SIZE") ? "SHMEM_SYMMETRIC_SIZE"
                     : getenv("SMA_SYMMETRIC_SIZE") ? "SMA_SYMMETRIC_SIZE"
                                                    : NULL;
  char what[200];
  snprintf(what, sizeof what, "%d PE%s x %zu bytes + 1 GiB of alignment: %s", n, n > 1 ? "s" : "", total, why);
  if (!name)
    shoal_fatal(routine, "SHMEM_SYMMETRIC_SIZE is not set and its default is too large here: the heaps do not fit "
                "this process's address space (%s)", what);
  shoal_fatal(routine, "%s=\"%s\" is not valid: expected a size whose heaps fit this process's address space (%s)",
              name, getenv(name), what);
}

/* CPUs in a list such as "0-3,8,10-11" (sysfs and cgroup format); 0 when it does not parse. */
static long cpu_list_count(const char *s) {
  long n = 0;
  while (*s && *s != '\n') {
    char *end;
    long a = strtol(s, &end, 10), b = a;
    if (end == s || a < 0) return 0;
    if (*end == '-') {
      s = end + 1;
      b = strtol(s, &end, 10);
      if (end == s || b < a) return 0;
    }
    n += b - a + 1;
    s = *end == ',' ? end + 1 : end;
  }
  return n;
}

/* CPUs this node gives the job: those online, or fewer where this process's cgroup cpuset (a container, a batch
 * job's allocation: cgroup v2, or v1's cpuset hierarchy) allows fewer. Not the affinity mask: binding narrows it to
 * one CPU per PE, and a pinned PE would count its node as crowded while its peers did not. */
static long node_cpus(void) {
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  FILE *f = fopen("/proc/self/cgroup", "r");
  if (!f) return online;
  char line[512], path[640], list[4096];
  long best = online;
  while (fgets(line, sizeof line, f)) { /* "0::/path" (v2) or "N:cpuset:/path" (v1) */
    line[strcspn(line, "\n")] = 0;
    const char *p = NULL, *file = NULL;
    if (!strncmp(line, "0::", 3)) {
      p = line + 3, file = "/sys/fs/cgroup%s/cpuset.cpus.effective";
    } else {
      char *c = strchr(line, ':');
      if (c && !strncmp(c + 1, "cpuset:", 7)) p = c + 8, file = "/sys/fs/cgroup/cpuset%s/cpuset.effective_cpus";
    }
    if (!p) continue;
    snprintf(path, sizeof path, file, strcmp(p, "/") ? p : "");
    FILE *g = fopen(path, "r");
    if (!g) continue;
    long n = fgets(list, sizeof list, g) ? cpu_list_count(list) : 0;
    fclose(g);
    if (n > 0 && n < best) best = n;
  }
  fclose(f);
  return best;
}

/* The heap: a sealed memfd per PE, mapped by every PE of the node (descriptors from shoal_boot_fd_allgather). */
static shoal_status_t heap_init(const char *routine) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  size_t user = (shoal_env.symmetric_size + page - 1) & ~(page - 1); /* no wrap: the size is <= SHOAL_ENV_SIZE_MAX */
  size_t total = SHOAL_INTERNAL_SIZE + user;
  int n = shoal_g.npes, mode = shoal_env_choice("SHOAL_TRANSPORT"); /* 0 auto, 1 shm, 2 ofi */
  if (shoal_g.boot.local_size != n && mode == 1) {
    shoal_warn("%s: %d of the job's %d PEs are on other nodes, and SHOAL_TRANSPORT=shm reaches PEs of one node only: "
               "unset it (auto: ofi between nodes), or run every PE on one node", routine, n - shoal_g.boot.local_size,
               n);
    return SHOAL_ERR_NOSYS;
  }
  int mapped = mode == 2 ? 1 : shoal_g.boot.local_size; /* heaps mapped here: this node's, or only our own */
  /* Every PE maps every local heap: refuse a size whose mappings do not fit this address space now, with the
   * variable's name, rather than fail at one of the mappings below. */
  size_t need;
  if (__builtin_mul_overflow(total, (size_t)mapped, &need) || __builtin_add_overflow(need, SHOAL_HEAP_MAX_ALIGN, &need))
    heap_size_fail(routine, mapped, total, "more than 2^64 bytes");
  void *probe = mmap(NULL, need, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (probe == MAP_FAILED) heap_size_fail(routine, mapped, total, strerror(errno));
  munmap(probe, need);
  int fd = shoal_memfd_create("shoal-heap", total);
  if (fd < 0) {
    shoal_warn("%s: cannot create the %zu-byte symmetric heap: %s", routine, total, strerror(errno));
    return SHOAL_ERR_NOMEM;
  }
  /* Place the heap so that the user heap starts on a SHOAL_HEAP_MAX_ALIGN boundary on every PE: an aligned offset is
   * then an aligned address everywhere (shmem_align). Reserve room to slide, map at the aligned spot, trim. */
  size_t slack = SHOAL_HEAP_MAX_ALIGN;
  char *res = mmap(NULL, total + slack, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  char *base = res == MAP_FAILED ? MAP_FAILED
               : (char *)((((uintptr_t)res + SHOAL_INTERNAL_SIZE + slack - 1) & ~(uintptr_t)(slack - 1)) -
                          SHOAL_INTERNAL_SIZE);
  if (base != MAP_FAILED &&
      mmap(base, total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE | MAP_FIXED, fd, 0) == MAP_FAILED) {
    munmap(res, total + slack);
    base = MAP_FAILED;
  }
  if (base == MAP_FAILED) {
    shoal_warn("%s: cannot map the %zu-byte symmetric heap: %s", routine, total, strerror(errno));
    close(fd);
    return SHOAL_ERR_NOMEM;
  }
  if (base > res) munmap(res, (size_t)(base - res));
  munmap(base + total, (size_t)(res + slack - base)); /* base < res + slack: the tail is never empty */
  /* Every PE's heap size and transport choice: they must agree (the transport's set-up is collective). And whether
   * its node is crowded, which the collectives must see alike (shoal_g.crowded). */
  uint64_t(*sizes)[3] = calloc((size_t)n, sizeof *sizes);
  shoal_g.peer_heap = calloc((size_t)n, sizeof(char *));
  shoal_g.heap_delta = calloc((size_t)n, sizeof(ptrdiff_t));
  shoal_g.heap_lim = calloc((size_t)n, sizeof(size_t));
  if (!sizes || !shoal_g.peer_heap || !shoal_g.heap_delta || !shoal_g.heap_lim ||
      shoal_boot_allgather(&shoal_g.boot,
                           (uint64_t[3]){total, (uint64_t)mode, shoal_g.boot.machine_size > node_cpus()},
                           sizes, sizeof *sizes))
    return SHOAL_ERR_NOMEM;
  shoal_g.crowded = false;
  for (int p = 0; p < n; p++) {
    shoal_g.crowded |= sizes[p][2] != 0;
    if (sizes[p][1] != (uint64_t)mode) {
      static const char *const names[] = {"auto", "shm", "ofi"};
      shoal_fatal(routine, "SHOAL_TRANSPORT differs between PEs (PE %d: %s, PE %d: %s): set it the same for every PE",
                  shoal_g.me, names[mode], p, names[sizes[p][1] % 3]);
    }
    if (sizes[p][0] != total) {
      char arg[200];
      snprintf(arg, sizeof arg, "SHMEM_SYMMETRIC_SIZE differs between PEs (PE %d: %zu bytes of heap, PE %d: %zu)",
               shoal_g.me, total, p, (size_t)sizes[p][0]);
      init_fail(routine, "%s", arg);
    }
  }
  free(sizes);
  char why[200];
  if (mode != 2 && shoal_memfd_share(fd, total, shoal_g.peer_heap, why, sizeof why)) {
    shoal_warn("%s: cannot map a peer's symmetric heap: %s", routine, why);
    close(fd);
    return SHOAL_ERR_IO;
  }
  close(fd);
  shoal_g.peer_heap[shoal_g.me] = base;
  for (int p = 0; p < n; p++)
    if (shoal_g.peer_heap[p]) shoal_g.heap_delta[p] = shoal_g.peer_heap[p] - base, shoal_g.heap_lim[p] = total;
  shoal_g.heap_fd = -1;
  shoal_g.heap_base = base;
  shoal_g.heap_size = total;
  shoal_g.user_base = base + SHOAL_INTERNAL_SIZE;
  shoal_g.internal_used = 0;
  shoal_g.sync = shoal_internal_alloc(sizeof(shoal_sync_area_t), SHOAL_CACHELINE);
  shoal_space_t *s = &shoal_g.space[SHOAL_SPACE_HEAP];
  *s = (shoal_space_t){.name = "host heap", .base = (uintptr_t)base, .size = total, .delta = shoal_g.heap_delta,
                       .lim = shoal_g.heap_lim};
  if (shoal_g.nspaces < 1) shoal_g.nspaces = 1;
  if (shoal_alloc_init(&shoal_g.alloc, user)) return SHOAL_ERR_NOMEM;
  SHOAL_DEBUG(SHOAL_SUB_HEAP, "heap %p, %zu bytes (%zu user), %d of %d heaps mapped", (void *)base, total, user,
              mode == 2 ? 1 : shoal_g.boot.local_size, n);
  return SHOAL_OK;
}

static void heap_fini(void) {
  for (int p = 0; p < shoal_g.npes; p++)
    if (shoal_g.peer_heap && shoal_g.peer_heap[p]) munmap(shoal_g.peer_heap[p], shoal_g.heap_size);
  shoal_alloc_fini(&shoal_g.alloc);
  free(shoal_g.peer_heap);
  free(shoal_g.heap_delta);
  free(shoal_g.heap_lim);
  shoal_g.peer_heap = NULL;
  shoal_g.heap_delta = NULL;
  shoal_g.heap_lim = NULL;
  shoal_g.heap_base = NULL;
  shoal_g.heap_size = 0;
}

/* Topology: this PE's GPU and CPU set from the pure mapping (oshrun applied the binding already). Loaded only when
 * something asks for it: hwloc's discovery (PCI config space included) costs ~60 ms of CPU per PE, which made init
 * grow with the PEs sharing a node (issue 29), and only a PE with GPUs (heap_gpu.c's pick_device) or the topo debug
 * line uses the map. A SHOAL_TOPO the user set is still read at init, so that a bad one stops there. */
static char pe_gpu_busid[16];
static cpu_set_t helper_cpus; /* shoal_topo_spare_cpus for this PE, as the kernel takes it */
static bool helper_cpus_ok;   /* a non-empty set of them */
static bool topo_done;
static const char *topo_routine = "shmem_init";
static void topo_load(void) {
  hwloc_topology_t t;
  shoal_bind_t b = SHOAL_BIND_NONE;
  char msg[512];
  topo_done = true;
  shoal_topo_parse_bind(shoal_env.bind, &b);
  if (shoal_topo_load_env(&t, shoal_env.topo_src[0] ? shoal_env.topo_src : NULL, msg, sizeof msg)) {
    if (shoal_env.topo_src[0]) shoal_fatal(topo_routine, "%s", msg); /* a value the user gave (an empty one: env.c) */
    shoal_warn("%s: cannot read the node topology (hwloc); running without GPU mapping", topo_routine);
    return;
  }
  shoal_topo_map_t m;
  if (!shoal_topo_map_pe(t, shoal_g.boot.local_rank, shoal_g.boot.local_size, b, &m)) {
    snprintf(pe_gpu_busid, sizeof pe_gpu_busid, "%s", m.gpu >= 0 ? m.gpu_busid : "");
    if (shoal_log_mask & SHOAL_SUB_TOPO) {
      char line[512];
      shoal_topo_format_map(t, shoal_g.me, &m, line, sizeof line);
      SHOAL_DEBUG(SHOAL_SUB_TOPO, "%s", line);
    }
    /* never this PE's own CPUs, whatever bound it (SHOAL_NODE_PES splits a machine the launcher bound as one) */
    hwloc_bitmap_t cur = hwloc_bitmap_alloc();
    if (cur && hwloc_get_cpubind(t, cur, HWLOC_CPUBIND_PROCESS)) hwloc_bitmap_zero(cur);
    hwloc_bitmap_t spare = shoal_topo_spare_cpus(t, shoal_g.boot.local_size, b, m.numa, cur);
    hwloc_bitmap_free(cur);
    CPU_ZERO(&helper_cpus);
    helper_cpus_ok = spare && !hwloc_bitmap_iszero(spare) &&
                     !hwloc_cpuset_to_glibc_sched_affinity(t, spare, &helper_cpus, sizeof helper_cpus) &&
                     CPU_COUNT(&helper_cpus) > 0;
    hwloc_bitmap_free(spare);
    hwloc_bitmap_free(m.cpuset);
  }
  hwloc_topology_destroy(t);
}

int shoal_topo_helper_cpus(cpu_set_t *set) {
  if (!topo_done) topo_load();
  if (!helper_cpus_ok) return -1;
  *set = helper_cpus;
  return 0;
}

int shoal_topo_gpu_busid(char *busid, size_t len) {
  if (!topo_done) topo_load();
  snprintf(busid, len, "%s", pe_gpu_busid);
  return pe_gpu_busid[0] ? 0 : -1;
}

static void topo_init(const char *routine) {
  topo_routine = routine;
  topo_done = false, pe_gpu_busid[0] = 0, helper_cpus_ok = false;
  if (shoal_env.topo_src[0] || (shoal_log_mask & SHOAL_SUB_TOPO)) topo_load();
}

/* Module hooks, each in its own file. */
shoal_status_t shoal_static_init(void);
void shoal_static_fini(void);

/* Environment, log, bootstrap, the warnings of PE 0, heap, static data, transports, topology: in this order (each
 * step needs the ones before; the transports' set-up is collective). Fatal, naming routine, where a step fails. */
void shoal_rt_init(const char *routine, int requested) {
  char err[512];
  if (shoal_env_load(&shoal_env, err, sizeof err)) shoal_fatal(routine, "%s", err);
  unsigned mask = 0;
  shoal_log_parse_subsys(shoal_env.debug_subsys, &mask, NULL, NULL);
  shoal_log_mask = shoal_env.debug ? mask : 0;
  if (shoal_boot_init(&shoal_g.boot)) shoal_fatal(routine, "bootstrap failed (the line above says why)");
  shoal_init_mark("environment, bootstrap");
  shoal_g.me = shoal_g.boot.rank;
  if (shoal_g.me == 0) { /* once per job, as UCX warns of unused variables */
    char unknown[1024];
    int nu = shoal_env_unknown(unknown, sizeof unknown);
    if (nu)
      shoal_warn("%s: ignoring unknown environment variable%s %s (SHMEM_INFO=1 lists the ones Shoal reads)", routine,
                 nu > 1 ? "s" : "", unknown);
    if (shoal_env.debug && shoal_env.aliases[0]) shoal_warn("%s: %s", routine, shoal_env.aliases);
  }
  shoal_g.npes = shoal_g.boot.size;
  shoal_g.thread_level = requested;
  shoal_g.spin = shoal_env.spin;
  shoal_wait_init(shoal_g.boot.machine_size > node_cpus()); /* not the affinity: bound PEs see one CPU each */
  if (heap_init(routine)) shoal_fatal(routine, "cannot set up the symmetric heap");
  shoal_init_mark("heap");
  if (shoal_static_init()) shoal_fatal(routine, "cannot set up symmetric static data");
  shoal_init_mark("static data");
  if (shoal_comm_setup(routine)) shoal_fatal(routine, "cannot reach every PE (the line above says why)");
  shoal_init_mark("transports");
  topo_init(routine);
  shoal_init_mark("topology");
  shoal_g.state = 1; /* the layers set up after this may call RMA */
}

/* The node socket closes only now: the device heap's set-up (after shoal_rt_init) still exchanges descriptors. */
void shoal_rt_init_end(void) {
  shoal_boot_node_close(&shoal_g.boot); /* every descriptor is exchanged: nobody may connect any more */
  if (shoal_g.me == 0 && (shoal_env.info || shoal_env.version)) {
    if (shoal_env.info)
      shoal_env_print(&shoal_env, stdout);
    else
      printf("Shoal %s, OpenSHMEM %d.%d\n", SHOAL_VERSION_STRING, SHMEM_MAJOR_VERSION, SHMEM_MINOR_VERSION);
    fflush(stdout);
  }
}

void shmem_query_thread(int *provided) {
  SHOAL_CHECK_INIT("shmem_query_thread");
  if (!provided) shoal_fatal("shmem_query_thread", "provided is NULL");
  *provided = shoal_g.thread_level;
}

/* The reverse of shoal_rt_init, once the layers above are gone: transports (collective), bootstrap, static data,
 * heap. */
void shoal_rt_fini(void) {
  shoal_comm_teardown();
  shoal_boot_fini(&shoal_g.boot);
  shoal_static_fini();
  heap_fini();
  shoal_g.state = 2;
}

void shmem_global_exit(int status) {
  fflush(stdout);
  fflush(stderr);
  shoal_boot_abort(&shoal_g.boot, status);
  _exit(status);
}

int shmem_my_pe(void) {
  SHOAL_CHECK_INIT("shmem_my_pe");
  return shoal_g.me;
}

int shmem_n_pes(void) {
  SHOAL_CHECK_INIT("shmem_n_pes");
  return shoal_g.npes;
}

int shmemx_local_pe(void) {
  SHOAL_CHECK_INIT("shmemx_local_pe");
  return shoal_g.boot.local_rank;
}

int shmemx_local_n_pes(void) {
  SHOAL_CHECK_INIT("shmemx_local_n_pes");
  return shoal_g.boot.local_size;
}

int shmem_pe_accessible(int pe) { return shoal_g.state == 1 && pe >= 0 && pe < shoal_g.npes; }

int shmem_addr_accessible(const void *addr, int pe) {
  return shmem_pe_accessible(pe) && shoal_space_find(addr, 1, NULL) != NULL;
}

void *shmem_ptr(const void *dest, int pe) {
  SHOAL_CHECK_INIT("shmem_ptr");
  if (!shmem_pe_accessible(pe)) return NULL;
  size_t off;
  shoal_space_t *s = shoal_space_find(dest, 1, &off);
  if (!s || !s->delta || s->device || shoal_space_far(s, pe)) return NULL;
  return (char *)dest + s->delta[pe];
}

void shmem_info_get_version(int *major, int *minor) {
  if (major) *major = SHMEM_MAJOR_VERSION;
  if (minor) *minor = SHMEM_MINOR_VERSION;
}

void shmem_info_get_name(char *name) {
  if (name) snprintf(name, SHMEM_MAX_NAME_LEN, "%s", SHMEM_VENDOR_STRING);
}

_Noreturn void shoal_ctx_invalid(const char *routine, shmem_ctx_t ctx) {
  shoal_fatal(routine, "ctx %p is not a valid context (destroyed, or never created)", (void *)ctx);
}
