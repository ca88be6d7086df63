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
/* Transport fences the proxy issued for FENCE requests so far (tests: a provider that delivers in order cannot show a
 * missing fence by the data alone). */
uint64_t shoal_proxy_fences(void);
/* At finalize, before contexts and transport go: wait for this PE's kernels, serve what is posted, complete it (quiet),
 * join the thread, free the queue. No-op when not started. */
void shoal_proxy_fini(void);

#endif
