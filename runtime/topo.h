/* Node topology (hwloc): the node's GPUs by PCI bus id, and the pure local PE -> GPU / NUMA node / CPU set map.
 * Policy and fixtures: docs/design/topology.md. */
#ifndef SHOAL_TOPO_H
#define SHOAL_TOPO_H

#include <stddef.h>
#include <hwloc.h>

#ifndef SHOAL_OK
#define SHOAL_OK 0
#define SHOAL_ERR (-1)
#define SHOAL_ERR_NOMEM (-2)
#define SHOAL_ERR_INVAL (-3)
#endif

/* Size of a PCI bus id string "dddd:bb:dd.f" with its NUL (a 5-hex-digit domain, as VMD uses, still fits). */
#define SHOAL_TOPO_BUSID_LEN 16

typedef enum { SHOAL_BIND_NONE = 0, SHOAL_BIND_CORE, SHOAL_BIND_NUMA } shoal_bind_t;

typedef struct shoal_topo_gpu {
    char busid[SHOAL_TOPO_BUSID_LEN];     /* "0000:1b:00.0", lower-case hex */
    unsigned vendor;                      /* 0x10de NVIDIA, 0x1002 AMD */
    unsigned device;                      /* PCI device id, e.g. 0x2330 H100 SXM5 */
    unsigned class_id;                    /* PCI class: 0x0300, 0x0302, 0x0380 or 0x1200 */
    int numa;                             /* logical index of nearest NUMA node, -1 unknown */
} shoal_topo_gpu_t;

typedef struct shoal_topo_map {
    int gpu;                              /* index into the GPU list sorted by bus id, -1 = no GPU */
    char gpu_busid[SHOAL_TOPO_BUSID_LEN]; /* that GPU's bus id, "" when gpu == -1 */
    int numa;                             /* NUMA node logical index (>= 0 from shoal_topo_map_pe) or -1 */
    int core;                             /* logical index of the chosen core (SHOAL_BIND_CORE), else -1 */
    shoal_bind_t bind;                    /* the policy the map was made for */
    hwloc_bitmap_t cpuset;                /* caller frees (hwloc_bitmap_free); whole machine for SHOAL_BIND_NONE */
} shoal_topo_map_t;

/* Load and return the topology in *out (destroy with hwloc_topology_destroy). src NULL = this machine, a path ending
 * in ".xml" = hwloc XML file, anything else = an hwloc synthetic description ("pack:2 core:8 pu:2"). PCI devices are
 * kept (important ones) in all three cases. Errors: SHOAL_ERR_NOMEM, SHOAL_ERR (hwloc refused the source). */
int shoal_topo_load(hwloc_topology_t *out, const char *src);

/* What SHOAL_TOPO accepts, for the messages that refuse a value. */
#define SHOAL_TOPO_ACCEPTS "the path of an hwloc .xml file, or a synthetic description such as \"pack:2 core:4 pu:1\""

/* shoal_topo_load of SHOAL_TOPO's value src (NULL: unset, this machine). On failure msg gets one line without a
 * prefix: 'SHOAL_TOPO="<src>" is not valid: <why>' (an empty value, a file that cannot be read or parsed, a
 * description hwloc rejects), or, for this machine, that hwloc cannot read it. Errors as shoal_topo_load's, and
 * SHOAL_ERR_INVAL for an empty src. */
int shoal_topo_load_env(hwloc_topology_t *out, const char *src, char *msg, size_t len);

/* The node's GPUs: PCI class 0x0300 VGA, 0x0302 3D, 0x0380 display (AMD MI100/MI200) or 0x1200 processing
 * accelerator (AMD MI300), vendor NVIDIA 0x10de or AMD 0x1002, sorted by (domain, bus, device, function).
 * Fills at most max entries of gpus (may be NULL when max is 0) and returns the total count, >= 0, which may exceed
 * max. Errors: SHOAL_ERR_INVAL (t NULL, max < 0, gpus NULL with max > 0), SHOAL_ERR_NOMEM. */
int shoal_topo_gpus(hwloc_topology_t t, shoal_topo_gpu_t *gpus, int max);

/* The pure mapping of local PE local_rank in [0, local_size) to a GPU, a NUMA node and a CPU set (policy in topo.c).
 * Deterministic: the same topology and arguments give the same map; no binding, no logging. On success *out is
 * filled and out->cpuset is a new bitmap the caller frees. Errors: SHOAL_ERR_INVAL (bad rank, size or bind),
 * SHOAL_ERR_NOMEM, SHOAL_ERR (topology without PUs). */
int shoal_topo_map_pe(hwloc_topology_t t, int local_rank, int local_size, shoal_bind_t bind, shoal_topo_map_t *out);

/* Parse a binding policy name: "core", "numa" or "none" (exact, lower case). Errors: SHOAL_ERR_INVAL. */
int shoal_topo_parse_bind(const char *s, shoal_bind_t *out);

/* The CPUs for a PE's helper threads (the device proxy, runtime/proxy.c): the topology's allowed CPUs that none of the
 * node's local_size PEs is bound to under bind (shoal_topo_map_pe of each local rank) and not in exclude (NULL: none;
 * the PE's actual binding), narrowed to NUMA node numa's when that leaves any. Empty with SHOAL_BIND_NONE (threads keep what they inherit) or when the PEs take every CPU.
 * A helper on its PE's core shares it with the PE's thread, which may spin without yielding (a GPU runtime's
 * synchronize): each request then waits for the scheduler's time slice, milliseconds. Caller frees; NULL: no memory
 * or bad arguments. */
hwloc_bitmap_t shoal_topo_spare_cpus(hwloc_topology_t t, int local_size, shoal_bind_t bind, int numa,
                                     hwloc_const_bitmap_t exclude);

/* Bind the calling process (all its threads) to map->cpuset; a no-op for SHOAL_BIND_NONE. Errors: SHOAL_ERR_INVAL
 * (bad args, or t is an XML/synthetic topology, not this machine: hwloc would silently not bind), SHOAL_ERR (the OS
 * refused; errno is kept). */
int shoal_topo_bind_self(hwloc_topology_t t, const shoal_topo_map_t *map);

/* Format a one-line report into buf (always NUL-terminated when len > 0):
 *   "PE 3: cores 0-3 (NUMA 0), GPU 0000:1b:00.0"   or   "PE 3: cores 0-15 (NUMA 0), GPU none"
 * cores are logical core indices with any PU in map->cpuset. Errors: SHOAL_ERR_INVAL (bad args, or buf too short:
 * the output is then truncated). */
int shoal_topo_format_map(hwloc_topology_t t, int pe, const shoal_topo_map_t *map, char *buf, size_t len);

#endif
