/* proxy.h - the host proxy of device-initiated operations on far PEs (runtime/proxy.c; docs/gpu.md, "The proxy"): one
 * thread per PE that serves the queue of include/shoal/detail/proxy_queue.h through the host RMA/AMO paths. */
#ifndef SHOAL_PROXY_H
#define SHOAL_PROXY_H
#include "shoal.h"

#include <shoal/detail/proxy_queue.h>

/* At init, once the device heap is up (api/init.c, before the device-API units are filled): when the device state
 * has a PE reached only through the proxy (delta SHMEMX_DEVICE_DELTA_FAR), make the queue, start the thread and put
 * the queue's device address into the state. Nothing otherwise. Fatal (one line naming routine) on failure. */
void shoal_proxy_init(const char *routine);
/* Make the queue (SHOAL_PROXY_QUEUE_ENTRIES entries) and start the thread, whatever the state says (tests: a CPU
 * thread stands in for the kernel). Idempotent. SHOAL_ERR_NOMEM / SHOAL_ERR when memory or the thread cannot be had. */
shoal_status_t shoal_proxy_start(const char *routine);
/* The queue as producers address it (the device address with a GPU, the host one without), or NULL when not started. */
shoal_proxy_queue_t *shoal_proxy_queue(void);
/* Requests served so far (tests). */
uint64_t shoal_proxy_served(void);
/* The thread's CPU affinity (tests: off the PE's core where shoal_topo_helper_cpus has CPUs); -1 when not running. */
int shoal_proxy_affinity(cpu_set_t *set);
/* The transport threads moved onto the proxy's CPUs with it (comm.h helpers_to: ofi's progress thread), for tests. */
int shoal_proxy_helpers_moved(void);
/* Transport fences the proxy issued for FENCE requests so far (tests: a provider that delivers in order cannot show a
 * missing fence by the data alone). */
uint64_t shoal_proxy_fences(void);
/* Complete the device-initiated operations posted so far: the thread serves them and quiets its context, and this
 * returns after. exact: every ticket taken so far (the counter read from GPU memory: the on-stream quiet and barrier,
 * after their stream's kernels finished); else those posted and visible now, in ticket order from the head
 * (shmem_quiet: three loads when nothing is pending; a kernel that keeps posting does not hold it longer). No-op when
 * the proxy does not run, or on its own thread. Fatal (one line naming routine) when the counter cannot be read. */
void shoal_proxy_drain(const char *routine, bool exact);
/* True while the thread runs: shmem_quiet drains the proxy then (device-initiated operations are this PE's too). */
extern bool shoal_proxy_on;
/* At finalize, before contexts and transport go: wait for this PE's kernels, serve what is posted, complete it (quiet),
 * join the thread, free the queue. No-op when not started. */
void shoal_proxy_fini(void);

#endif
