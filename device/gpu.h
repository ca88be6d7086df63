/* gpu.h - the GPU backends: one ops table per vendor (libfabric hmem_ops style), indexed by a kind enum and chosen at
 * init; the device symmetric heap (runtime/heap_gpu.c) is written once against the table. The "none" backend stands
 * for hosts without a GPU. Design notes: docs/gpu.md; modules: docs/design/modules.md.
 *
 * device/ is a leaf: this header and the backends depend on libc, the vendor headers and the public <shmemx.h> only
 * (never on runtime/ or collectives/: tests/scripts/check_device_leaf.py checks the includes and the objects'
 * undefined symbols). Messages go through the log hook below, which the runtime points at its logger. */
#ifndef SHOAL_GPU_H
#define SHOAL_GPU_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#pragma GCC visibility push(default)
#include <shmemx.h> /* shmemx_device_state_t (kernels_setup) */
#pragma GCC visibility pop
#include "shoal/status.h"

typedef enum { SHOAL_GPU_NONE = 0, SHOAL_GPU_CUDA, SHOAL_GPU_HIP, SHOAL_GPU_NKINDS } shoal_gpu_kind_t;

/* Set by shoal_gpu_init: the backend in use (SHOAL_GPU_NONE without a GPU). */
extern shoal_gpu_kind_t shoal_gpu_kind;

/* An IPC handle as the vendors define it (cudaIpcMemHandle_t, hipIpcMemHandle_t: 64 opaque bytes). */
typedef struct shoal_gpu_ipc { unsigned char bytes[64]; } shoal_gpu_ipc_t;

/* Host-side atomic operations on device memory (a one-thread kernel): fetch, set, swap, compare-swap, fetch-add and
 * the bitwise ones; sizes 4 and 8. The result (old value) is returned for every op. */
typedef enum {
  SHOAL_GPU_AMO_FETCH, SHOAL_GPU_AMO_SET, SHOAL_GPU_AMO_SWAP, SHOAL_GPU_AMO_CSWAP, SHOAL_GPU_AMO_ADD,
  SHOAL_GPU_AMO_AND, SHOAL_GPU_AMO_OR, SHOAL_GPU_AMO_XOR
} shoal_gpu_amo_op_t;

/* The ops table: X(name, (parameters)). Every slot returns a status (SHOAL_OK, SHOAL_ERR after reporting the failed
 * vendor call with its error string, SHOAL_ERR_NOSYS from the stub of an unimplemented slot). Streams and events are
 * the vendor handles as void * (NULL stream = the default stream). */
#define SHOAL_GPU_OPS(X)                                                                                              \
  X(device_count, (int *n))                             /* 0 devices or no driver: *n = 0, no message */              \
  X(device_by_busid, (const char *busid, int *dev))     /* "0000:1b:00.0" -> ordinal */                               \
  X(device_busid, (int dev, char *busid, size_t len))   /* ordinal -> bus id (lower case) */                          \
  X(set_device, (int dev))                                                                                             \
  X(sm_count, (int dev, int *n))                        /* multiprocessors (CUs on AMD) */                            \
  X(mem_alloc, (void **p, size_t n))                                                                                   \
  X(mem_free, (void *p))                                                                                               \
  X(ipc_get, (void *p, shoal_gpu_ipc_t *h))                                                                            \
  X(ipc_open, (const shoal_gpu_ipc_t *h, void **p))     /* another process's allocation, same or peer device */       \
  X(ipc_close, (void *p))                                                                                              \
  /* Memory shared through a file descriptor (CUDA: the driver's VMM API, cuMemCreate with a POSIX fd handle): peers   \
   * map it with share_open. n is rounded up inside to the backend's granularity, the same way in every call. */      \
  X(share_alloc, (void **p, size_t n, int *fd))         /* *fd: a new descriptor for peers (close it when sent) */    \
  X(share_open, (int fd, size_t n, void **p))           /* map a peer's share_alloc memory; fd may be closed after */ \
  X(share_close, (void *p, size_t n))                   /* unmap a share_open mapping */                              \
  X(share_free, (void *p, size_t n))                    /* release share_alloc memory (after every peer unmapped) */  \
  X(memcpy, (void *dst, const void *src, size_t n, void *stream))   /* any direction, enqueued on stream */          \
  X(memset, (void *p, int v, size_t n, void *stream))                                                                  \
  X(stream_create, (void **s))                          /* non-blocking: never waits for the default stream */        \
  X(stream_destroy, (void *s))                                                                                         \
  X(stream_sync, (void *s))                                                                                            \
  X(event_create, (void **e))                                                                                          \
  X(event_destroy, (void *e))                                                                                          \
  X(event_record, (void *e, void *stream))                                                                             \
  X(event_sync, (void *e))                                                                                             \
  X(event_elapsed, (void *start, void *end, float *ms))                                                                \
  X(device_sync, (void))                                                                                               \
  X(occupancy, (const void *func, int block_threads, size_t shmem, int *blocks_per_sm))                                \
  X(launch, (const void *func, const unsigned grid[3], const unsigned block[3], void **args, size_t shmem,            \
             void *stream))                             /* kernels compiled into libshoal (collectives) */            \
  X(kernels_setup, (const shmemx_device_state_t *st))   /* state of libshoal's own kernels */                         \
  X(barrier_on_stream, (void *stream))                  /* enqueue the device barrier over all PEs */                 \
  X(amo, (void *target, int op, size_t size, uint64_t value, uint64_t cmp, void *scratch, uint64_t *old,            \
          void *stream))                                /* scratch: 8 bytes of device memory */                       \
  /* Pinned host memory that kernels read and write (the proxy's queue, runtime/proxy.c): *host for the CPU, *dev the \
   * same bytes as kernels address them (mapped, portable; coherent on HIP). */                                        \
  X(host_alloc, (void **host, void **dev, size_t n))                                                                   \
  X(host_free, (void *host))                                                                                           \
  /* *on_device = 1 when p is GPU memory the CPU cannot load from (cudaMalloc'd, not managed or pinned host): what a \
   * transport without FI_HMEM must stage (runtime/comm.c); 0 for host memory of any kind, and unknown pointers. */  \
  X(ptr_device, (const void *p, int *on_device))                                                                      \
  /* Page-lock n bytes of host memory at p (page aligned) for the GPU's DMA, every device (portable): the transport's \
   * staging region, whose copies to and from the device heap are otherwise the runtime's pageable path. */          \
  X(host_register, (void *p, size_t n))                                                                                \
  X(host_unregister, (void *p))                                                                                        \
  /* Without waiting: *done 1 once the work recorded in e finished, 0 while it runs (the target's side of a staged    \
   * put answers when its copy is done, runtime/heap_gpu.c, without holding the transport's progress for it). */     \
  X(event_query, (void *e, int *done))

#define SHOAL_GPU_OPS_FIELD(name, params) shoal_status_t(*name) params;
typedef struct shoal_gpu_ops {
  size_t size;       /* sizeof(shoal_gpu_ops_t): first, so that a table built against another layout is refused */
  const char *name;  /* "cuda", "hip", "none" */
  SHOAL_GPU_OPS(SHOAL_GPU_OPS_FIELD)
} shoal_gpu_ops_t;
#undef SHOAL_GPU_OPS_FIELD

/* The backends compiled in, by kind (NULL when not built); each fills only the slots it implements. */
extern const shoal_gpu_ops_t shoal_gpu_none_ops;
extern const shoal_gpu_ops_t shoal_gpu_cuda_ops;
extern const shoal_gpu_ops_t shoal_gpu_hip_ops;
/* Tests: a backend used instead of the real ones when set before shmem_init (tests/gpu/gpu_fake.c). */
extern const shoal_gpu_ops_t *shoal_gpu_test_backend;
/* Whether shoal_gpu_select has a backend other than none to try (one built in, or the test backend): without one no
 * PE can have a device heap, and the transports leave out what only device memory needs. */
bool shoal_gpu_backend_built(void);
/* The table in use: a copy of the chosen backend with every NULL slot pointing at a SHOAL_ERR_NOSYS stub. */
extern shoal_gpu_ops_t shoal_gpu_ops;
/* Copy src into dst and point every NULL slot at its stub. SHOAL_ERR_INVAL when src->size differs. */
shoal_status_t shoal_gpu_ops_fill(shoal_gpu_ops_t *dst, const shoal_gpu_ops_t *src);

/* Pick the backend: the test backend when set, else the first compiled-in one that finds a device. On return
 * shoal_gpu_ops is filled (the none backend when nothing was found) and shoal_gpu_kind names it; *ndev is the
 * device count (0 with none); tried lists the names of the backends asked ("" when none is built). */
void shoal_gpu_select(int *ndev, char *tried, size_t len);
/* Why shoal_gpu_select found no device, for the one line that ends a device-API program without a GPU: per backend
 * asked, "name: reason" ("cuda: cudaGetDeviceCount: no CUDA-capable device is detected", "cuda: 0 devices"), joined
 * by "; "; "" when a device was found or no backend is built. Backends write their reason into shoal_gpu_count_why
 * from device_count (cleared before each call). */
extern char shoal_gpu_select_why[256];
extern char shoal_gpu_count_why[160];

/* ---- messages: the backends report failed vendor calls here, never on stderr themselves ----
 * The runtime sets the hook before the first backend call (runtime/heap_gpu.c: shoal_warn for WARN, the gpu debug
 * subsystem for DEBUG) and the most verbose level it wants; with no hook the backends are silent. */
enum { SHOAL_GPU_LOG_WARN = 1, SHOAL_GPU_LOG_DEBUG = 2 };
extern void (*shoal_gpu_log_hook)(int level, const char *line);
extern int shoal_gpu_log_level; /* messages above this level are not even formatted */
void shoal_gpu_logf(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define SHOAL_GPU_DEBUG(...)                                                                                          \
  do {                                                                                                                 \
    if (SHOAL_UNLIKELY(shoal_gpu_log_level >= SHOAL_GPU_LOG_DEBUG)) shoal_gpu_logf(SHOAL_GPU_LOG_DEBUG, __VA_ARGS__);  \
  } while (0)

/* ---- pure helpers (unit-tested) ---- */
/* Blocks of one kernel that may run at once on one PE's share of its GPU: blocks_per_sm * sms / pes_per_gpu (a
 * collective kernel spins on its peers, so every PE's grid must be resident together); pes_per_gpu < 1 counts as 1. */
long shoal_gpu_coresident_limit(int blocks_per_sm, int sms, int pes_per_gpu);
/* Number of entries of busids[n][len] equal to busids[me] (PEs sharing PE me's GPU), >= 1. */
int shoal_gpu_count_sharing(const char *busids, size_t len, int n, int me);

#endif
