/* Node topology through hwloc: GPU discovery by PCI bus id and the local PE -> GPU / NUMA / CPU set mapping.
 *
 * Mapping policy (docs/design/topology.md), for local PE r of the node's local_size PEs:
 *  - GPU: the node's G GPUs sorted by PCI bus id; PE r gets GPU r mod G. PEs may outnumber GPUs and then share
 *    one (fully supported). G == 0: gpu = -1.
 *  - NUMA node: the GPU's nearest NUMA node (the NUMA node of the GPU's first non-I/O ancestor). Without GPUs, or
 *    when the GPU's locality is unknown, PEs are spread round robin over the NUMA nodes: node r mod N. A machine
 *    without NUMA objects counts as one node covering the machine.
 *  - CPU set: SHOAL_BIND_NUMA = that node's cpuset; SHOAL_BIND_CORE = one core (all its PUs): the PEs placed on
 *    one NUMA node take its cores in logical order, by rank, wrapping around (then sharing) when they outnumber
 *    them; SHOAL_BIND_NONE = the whole machine's cpuset. A NUMA node without CPUs stands for the whole machine.
 * The map depends only on (topology, r, bind), so every PE computes it alone and all agree. */
#include "topo.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TOPO_VENDOR_NVIDIA 0x10de
#define TOPO_VENDOR_AMD 0x1002

int shoal_topo_load(hwloc_topology_t *out, const char *src)
{
    hwloc_topology_t t;
    size_t n = src ? strlen(src) : 0;

    if (!out)
        return SHOAL_ERR_INVAL;
    if (hwloc_topology_init(&t) < 0)
        return SHOAL_ERR_NOMEM;
    /* hwloc drops every I/O object by default; GPUs are found among the PCI devices. */
    if (hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT) < 0)
        goto fail;
    /* GPUs are found as PCI devices: hwloc's GPU backends would initialize the vendors' runtimes instead, in oshrun
     * too (an MPS client with threads of its own, which took oshrun's SIGCHLD) and in every PE (slow). */
    static const char *const gpu_backends[] = { "cuda", "nvml", "opencl", "rsmi", "levelzero", "gl" };
    for (size_t i = 0; i < sizeof(gpu_backends) / sizeof(gpu_backends[0]); i++)
        hwloc_topology_set_components(t, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, gpu_backends[i]);
    if (src && n >= 4 && strcmp(src + n - 4, ".xml") == 0) {
        if (hwloc_topology_set_xml(t, src) < 0)
            goto fail;
    } else if (src && hwloc_topology_set_synthetic(t, src) < 0) {
        goto fail;
    }
    if (hwloc_topology_load(t) < 0)
        goto fail;
    *out = t;
    return SHOAL_OK;
fail:
    hwloc_topology_destroy(t);
    return SHOAL_ERR;
}

int shoal_topo_load_env(hwloc_topology_t *out, const char *src, char *msg, size_t len)
{
    size_t n = src ? strlen(src) : 0;
    int rc;

    if (src && !n) {
        snprintf(msg, len, "SHOAL_TOPO=\"\" is not valid: expected %s (unset it for this machine's topology)",
                 SHOAL_TOPO_ACCEPTS);
        return SHOAL_ERR_INVAL;
    }
    rc = shoal_topo_load(out, src);
    if (rc == SHOAL_OK)
        return rc;
    if (!src)
        snprintf(msg, len, "cannot read this machine's topology (hwloc)");
    else if (n >= 4 && strcmp(src + n - 4, ".xml") == 0 && access(src, R_OK) != 0)
        snprintf(msg, len, "SHOAL_TOPO=\"%s\" is not valid: cannot read %s: %s", src, src, strerror(errno));
    else if (n >= 4 && strcmp(src + n - 4, ".xml") == 0)
        snprintf(msg, len, "SHOAL_TOPO=\"%s\" is not valid: hwloc cannot load it as an XML topology", src);
    else
        snprintf(msg, len, "SHOAL_TOPO=\"%s\" is not valid: expected %s (hwloc rejects this description)", src,
                 SHOAL_TOPO_ACCEPTS);
    return rc;
}

/* PCI display-class functions that are compute GPUs; AMD Instinct boards report 0x0380 (MI100/MI200) or 0x1200
 * (MI300), NVIDIA data-centre boards 0x0302. The vendor test drops BMC VGA chips (ASPEED 0x1a03, Matrox). */
static int topo_is_gpu(const struct hwloc_pcidev_attr_s *p)
{
    if (p->vendor_id != TOPO_VENDOR_NVIDIA && p->vendor_id != TOPO_VENDOR_AMD)
        return 0;
    return p->class_id == 0x0300 || p->class_id == 0x0302 || p->class_id == 0x0380 || p->class_id == 0x1200;
}

/* Logical index of the NUMA node holding obj's first non-I/O ancestor, -1 when that ancestor spans several nodes
 * (e.g. a device attached to the Machine of a 2-socket node: hwloc does not know where it is). */
static int topo_obj_numa(hwloc_topology_t t, hwloc_obj_t obj)
{
    hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(t, obj), node;

    if (!anc || !anc->nodeset || hwloc_bitmap_weight(anc->nodeset) != 1)
        return -1;
    node = hwloc_get_numanode_obj_by_os_index(t, (unsigned)hwloc_bitmap_first(anc->nodeset));
    return node ? (int)node->logical_index : -1;
}

typedef struct topo_gpu_key {
    uint64_t key; /* domain:bus:dev.func as one sortable number */
    shoal_topo_gpu_t gpu;
} topo_gpu_key_t;

static int topo_gpu_key_cmp(const void *a, const void *b)
{
    uint64_t x = ((const topo_gpu_key_t *)a)->key, y = ((const topo_gpu_key_t *)b)->key;

    return (x > y) - (x < y);
}

int shoal_topo_gpus(hwloc_topology_t t, shoal_topo_gpu_t *gpus, int max)
{
    hwloc_obj_t o = NULL;
    topo_gpu_key_t *all;
    int n = 0, i = 0;

    if (!t || max < 0 || (max > 0 && !gpus))
        return SHOAL_ERR_INVAL;
    while ((o = hwloc_get_next_pcidev(t, o)))
        n += topo_is_gpu(&o->attr->pcidev);
    if (n == 0)
        return 0;
    all = calloc((size_t)n, sizeof(*all));
    if (!all)
        return SHOAL_ERR_NOMEM;
    while ((o = hwloc_get_next_pcidev(t, o))) {
        const struct hwloc_pcidev_attr_s *p = &o->attr->pcidev;

        if (!topo_is_gpu(p))
            continue;
        all[i].key = (uint64_t)p->domain << 24 | (uint64_t)p->bus << 16 | (uint64_t)p->dev << 8 | p->func;
        snprintf(all[i].gpu.busid, sizeof(all[i].gpu.busid), "%04x:%02x:%02x.%x", (unsigned)p->domain,
                 (unsigned)p->bus, (unsigned)p->dev, (unsigned)p->func);
        all[i].gpu.vendor = p->vendor_id;
        all[i].gpu.device = p->device_id;
        all[i].gpu.class_id = p->class_id;
        all[i].gpu.numa = topo_obj_numa(t, o);
        i++;
    }
    qsort(all, (size_t)n, sizeof(*all), topo_gpu_key_cmp);
    for (i = 0; i < n && i < max; i++)
        gpus[i] = all[i].gpu;
    free(all);
    return n;
}

/* The NUMA node count, at least 1 (no NUMA objects = one node). */
static int topo_numa_count(hwloc_topology_t t)
{
    int n = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);

    return n > 0 ? n : 1;
}

/* CPUs of NUMA node idx; the whole machine for a missing or CPU-less node (HBM/CXL memory-only nodes). */
static hwloc_const_cpuset_t topo_numa_cpuset(hwloc_topology_t t, int idx)
{
    hwloc_obj_t node = hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, (unsigned)idx);

    if (node && node->cpuset && !hwloc_bitmap_iszero(node->cpuset))
        return node->cpuset;
    return hwloc_topology_get_topology_cpuset(t);
}

/* NUMA node of local PE r given the sorted GPU list (policy above). */
static int topo_pe_numa(const shoal_topo_gpu_t *gpus, int ngpus, int nnuma, int r)
{
    if (ngpus > 0 && gpus[r % ngpus].numa >= 0)
        return gpus[r % ngpus].numa;
    return r % nnuma;
}

/* Cores, or PUs where the topology has no Core objects: the unit SHOAL_BIND_CORE binds to. */
static hwloc_obj_type_t topo_core_type(hwloc_topology_t t)
{
    return hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
}

/* The k-th (mod count) core inside set, in logical order; NULL if set holds no whole core. */
static hwloc_obj_t topo_nth_core(hwloc_topology_t t, hwloc_const_cpuset_t set, int k)
{
    hwloc_obj_type_t type = topo_core_type(t);
    int n = hwloc_get_nbobjs_inside_cpuset_by_type(t, set, type);

    return n > 0 ? hwloc_get_obj_inside_cpuset_by_type(t, set, type, (unsigned)(k % n)) : NULL;
}

int shoal_topo_map_pe(hwloc_topology_t t, int local_rank, int local_size, shoal_bind_t bind, shoal_topo_map_t *out)
{
    shoal_topo_gpu_t *gpus = NULL;
    shoal_topo_map_t m = { .gpu = -1, .numa = -1, .core = -1, .bind = bind };
    hwloc_const_cpuset_t set;
    hwloc_obj_t core;
    int ngpus, nnuma, slot = 0, rc;

    if (!t || !out || local_size <= 0 || local_rank < 0 || local_rank >= local_size ||
        (bind != SHOAL_BIND_NONE && bind != SHOAL_BIND_CORE && bind != SHOAL_BIND_NUMA))
        return SHOAL_ERR_INVAL;
    ngpus = shoal_topo_gpus(t, NULL, 0);
    if (ngpus < 0)
        return ngpus;
    if (ngpus > 0) {
        gpus = calloc((size_t)ngpus, sizeof(*gpus));
        if (!gpus)
            return SHOAL_ERR_NOMEM;
        rc = shoal_topo_gpus(t, gpus, ngpus);
        if (rc < 0)
            goto out;
        m.gpu = local_rank % ngpus;
        memcpy(m.gpu_busid, gpus[m.gpu].busid, sizeof(m.gpu_busid));
    }
    nnuma = topo_numa_count(t);
    m.numa = topo_pe_numa(gpus, ngpus, nnuma, local_rank);
    /* Rank of this PE among the PEs of its NUMA node: picks its core. */
    for (int j = 0; j < local_rank; j++)
        slot += topo_pe_numa(gpus, ngpus, nnuma, j) == m.numa;

    switch (bind) {
    case SHOAL_BIND_NONE:
        set = hwloc_topology_get_topology_cpuset(t);
        break;
    case SHOAL_BIND_NUMA:
        set = topo_numa_cpuset(t, m.numa);
        break;
    default:
        core = topo_nth_core(t, topo_numa_cpuset(t, m.numa), slot);
        if (!core) {
            rc = SHOAL_ERR;
            goto out;
        }
        m.core = (int)core->logical_index;
        set = core->cpuset;
        break;
    }
    m.cpuset = hwloc_bitmap_dup(set);
    if (!m.cpuset) {
        rc = SHOAL_ERR_NOMEM;
        goto out;
    }
    *out = m;
    rc = SHOAL_OK;
out:
    free(gpus);
    return rc;
}

hwloc_bitmap_t shoal_topo_spare_cpus(hwloc_topology_t t, int local_size, shoal_bind_t bind, int numa,
                                     hwloc_const_bitmap_t exclude)
{
    hwloc_bitmap_t used, spare, near;

    if (!t || local_size < 1)
        return NULL;
    spare = hwloc_bitmap_alloc();
    used = hwloc_bitmap_alloc();
    if (!spare || !used) {
        hwloc_bitmap_free(spare);
        hwloc_bitmap_free(used);
        return NULL;
    }
    if (bind == SHOAL_BIND_NONE) { /* nobody is bound: no set is better than the one threads inherit */
        hwloc_bitmap_free(used);
        return spare;
    }
    for (int r = 0; r < local_size; r++) {
        shoal_topo_map_t m;
        if (shoal_topo_map_pe(t, r, local_size, bind, &m) == SHOAL_OK) {
            hwloc_bitmap_or(used, used, m.cpuset);
            hwloc_bitmap_free(m.cpuset);
        }
    }
    hwloc_bitmap_andnot(spare, hwloc_topology_get_allowed_cpuset(t), used);
    if (exclude)
        hwloc_bitmap_andnot(spare, spare, exclude);
    hwloc_bitmap_free(used);
    /* the ones of the PE's NUMA node (its GPU's) when it has any */
    near = hwloc_bitmap_alloc();
    if (near && numa >= 0) {
        hwloc_bitmap_and(near, spare, topo_numa_cpuset(t, numa));
        if (!hwloc_bitmap_iszero(near))
            hwloc_bitmap_copy(spare, near);
    }
    hwloc_bitmap_free(near);
    return spare;
}

int shoal_topo_parse_bind(const char *s, shoal_bind_t *out)
{
    static const struct { const char *name; shoal_bind_t bind; } names[] = {
        { "none", SHOAL_BIND_NONE }, { "core", SHOAL_BIND_CORE }, { "numa", SHOAL_BIND_NUMA },
    };

    if (!s || !out)
        return SHOAL_ERR_INVAL;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (strcmp(s, names[i].name) == 0) {
            *out = names[i].bind;
            return SHOAL_OK;
        }
    }
    return SHOAL_ERR_INVAL;
}

int shoal_topo_bind_self(hwloc_topology_t t, const shoal_topo_map_t *map)
{
    if (!t || !map || (map->bind != SHOAL_BIND_NONE && !map->cpuset))
        return SHOAL_ERR_INVAL;
    if (map->bind == SHOAL_BIND_NONE)
        return SHOAL_OK;
    /* hwloc silently ignores binding through an XML or synthetic topology: refuse rather than pretend. */
    if (!hwloc_topology_is_thissystem(t))
        return SHOAL_ERR_INVAL;
    /* PROCESS: every thread, including any helper thread started before the binding. */
    return hwloc_set_cpubind(t, map->cpuset, HWLOC_CPUBIND_PROCESS) < 0 ? SHOAL_ERR : SHOAL_OK;
}

int shoal_topo_format_map(hwloc_topology_t t, int pe, const shoal_topo_map_t *map, char *buf, size_t len)
{
    hwloc_obj_type_t type;
    hwloc_bitmap_t cores;
    hwloc_obj_t o = NULL;
    char *list = NULL;
    int n, rc = SHOAL_ERR_NOMEM;

    if (!t || !map || !map->cpuset || !buf || len == 0)
        return SHOAL_ERR_INVAL;
    type = topo_core_type(t);
    cores = hwloc_bitmap_alloc();
    if (!cores)
        return SHOAL_ERR_NOMEM;
    while ((o = hwloc_get_next_obj_by_type(t, type, o)))
        if (hwloc_bitmap_intersects(o->cpuset, map->cpuset) && hwloc_bitmap_set(cores, o->logical_index) < 0)
            goto out;
    if (hwloc_bitmap_list_asprintf(&list, cores) < 0)
        goto out;
    n = snprintf(buf, len, "PE %d: %s %s (NUMA %d), GPU %s", pe, type == HWLOC_OBJ_CORE ? "cores" : "PUs",
                 *list ? list : "none", map->numa, map->gpu >= 0 ? map->gpu_busid : "none");
    rc = n >= 0 && (size_t)n < len ? SHOAL_OK : SHOAL_ERR_INVAL;
out:
    free(list);
    hwloc_bitmap_free(cores);
    return rc;
}
