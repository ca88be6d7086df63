/* gpu_fake_backend.h - the fake GPU backend of the tests without a GPU (gpu_fake.c, gpu_fake_far.c, gpu_proxy.c,
 * gpu_fake_coll_far.c): "device memory" is a memfd mapped by every PE of the node (IPC handle = pid and descriptor,
 * or the descriptor itself sent over the bootstrap's sockets: the share_* slots), copies are memcpy and AMOs host
 * atomics. Include it in one file of a test program and set shoal_gpu_test_backend = &fake before shmem_init. */
#ifndef GPU_FAKE_BACKEND_H
#define GPU_FAKE_BACKEND_H
#include "heap_gpu.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

typedef struct { int64_t pid, fd; uint64_t size; } fake_ipc_t;
#define MAXMAP 64
static struct { void *p; size_t n; int fd; } maps[MAXMAP];

static void track(void *p, size_t n, int fd) {
  for (int i = 0; i < MAXMAP; i++)
    if (!maps[i].p) {
      maps[i].p = p, maps[i].n = n, maps[i].fd = fd;
      return;
    }
}
static int find(void *p) {
  for (int i = 0; i < MAXMAP; i++)
    if (maps[i].p == p) return i;
  return -1;
}
/* FAKE_NO_GPU_PES: "all", or the one PE (its number) whose fake backend finds no device. */
static bool pe_listed(const char *var) {
  const char *v = getenv(var), *r = getenv("SHOAL_RANK");
  return v && (!strcmp(v, "all") || (r && !strcmp(v, r)));
}
static shoal_status_t f_count(int *n) { return *n = pe_listed("FAKE_NO_GPU_PES") ? 0 : 1, SHOAL_OK; }
static shoal_status_t f_busid(int dev, char *b, size_t len) { return snprintf(b, len, "0000:00:00.0"), SHOAL_OK; }
static shoal_status_t f_set(int dev) { return SHOAL_OK; }
static shoal_status_t f_sms(int dev, int *n) { return *n = 4, SHOAL_OK; }
static shoal_status_t f_alloc(void **p, size_t n) {
  int fd = memfd_create("fake-gpu", MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, (off_t)n)) return SHOAL_ERR;
  void *q = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (q == MAP_FAILED) return SHOAL_ERR;
  track(q, n, fd);
  *p = q;
  return SHOAL_OK;
}
static shoal_status_t f_free(void *p) {
  int i = find(p);
  if (i < 0) return SHOAL_ERR;
  munmap(p, maps[i].n);
  if (maps[i].fd >= 0) close(maps[i].fd);
  maps[i].p = NULL;
  return SHOAL_OK;
}
static int ipc_gets;
static shoal_status_t f_ipc_get(void *p, shoal_gpu_ipc_t *h) {
  ipc_gets++;
  int i = find(p);
  fake_ipc_t f = {getpid(), maps[i].fd, maps[i].n};
  memset(h, 0, sizeof *h);
  memcpy(h->bytes, &f, sizeof f);
  return SHOAL_OK;
}
static shoal_status_t f_ipc_open(const shoal_gpu_ipc_t *h, void **p) {
  fake_ipc_t f;
  char path[64];
  memcpy(&f, h->bytes, sizeof f);
  snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)f.pid, (int)f.fd);
  int fd = open(path, O_RDWR | O_CLOEXEC);
  void *q = fd < 0 ? MAP_FAILED : mmap(NULL, f.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (fd >= 0) close(fd);
  if (q == MAP_FAILED) return SHOAL_ERR;
  track(q, f.size, -1);
  *p = q;
  return SHOAL_OK;
}
static shoal_status_t f_ipc_close(void *p) { return f_free(p); }
static int share_allocs; /* share_alloc calls: the test checks which path heap_gpu.c took */
static shoal_status_t f_share_alloc(void **p, size_t n, int *fd) {
  if (getenv("FAKE_SHARE_ALLOC_FAIL")) return share_allocs++, SHOAL_ERR; /* as a driver without fd handles */
  if (f_alloc(p, n)) return SHOAL_ERR;
  *fd = dup(maps[find(*p)].fd);
  share_allocs++;
  if (*fd < 0) {
    f_free(*p);
    return SHOAL_ERR;
  }
  return SHOAL_OK;
}
static shoal_status_t f_share_open(int fd, size_t n, void **p) {
  void *q = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (q == MAP_FAILED) return SHOAL_ERR;
  track(q, n, -1);
  *p = q;
  return SHOAL_OK;
}
static shoal_status_t f_share_close(void *p, size_t n) { return f_free(p); }
static int mem_copies; /* memcpy calls (atomic: the progress threads copy too): a test sees staging by its count */
static shoal_status_t f_memcpy(void *d, const void *s, size_t n, void *st) {
  __atomic_fetch_add(&mem_copies, 1, __ATOMIC_RELAXED);
  return memcpy(d, s, n), SHOAL_OK;
}
/* "GPU memory": inside any allocation or mapping of this backend. Counted: a host RMA on a symmetric buffer must not
 * ask (on CUDA it is a driver call per put). */
static int ptr_queries;
static shoal_status_t f_ptr_device(const void *p, int *on) {
  __atomic_fetch_add(&ptr_queries, 1, __ATOMIC_RELAXED);
  *on = 0;
  for (int i = 0; i < MAXMAP; i++)
    if (maps[i].p && (uintptr_t)p - (uintptr_t)maps[i].p < maps[i].n) *on = 1;
  return SHOAL_OK;
}
static shoal_status_t f_memset(void *p, int v, size_t n, void *st) { return memset(p, v, n), SHOAL_OK; }
static shoal_status_t f_stream_create(void **s) { return *s = (void *)1, SHOAL_OK; }
static shoal_status_t f_ok1(void *s) { return SHOAL_OK; }
static shoal_status_t f_ok0(void) { return SHOAL_OK; }
static int amo_calls;
static shoal_status_t f_amo(void *t, int op, size_t size, uint64_t v, uint64_t c, void *scratch, uint64_t *old,
                            void *stream) {
  amo_calls++;
  uint64_t r = 0;
#define F_AMO(T)                                                                                                      \
  do {                                                                                                                 \
    T *p = t, cc = (T)c;                                                                                               \
    switch (op) {                                                                                                      \
    case SHOAL_GPU_AMO_FETCH: r = __atomic_load_n(p, __ATOMIC_SEQ_CST); break;                                         \
    case SHOAL_GPU_AMO_SET:                                                                                            \
    case SHOAL_GPU_AMO_SWAP: r = __atomic_exchange_n(p, (T)v, __ATOMIC_SEQ_CST); break;                                \
    case SHOAL_GPU_AMO_CSWAP: __atomic_compare_exchange_n(p, &cc, (T)v, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);       \
      r = cc; break;                                                                                                   \
    case SHOAL_GPU_AMO_ADD: r = __atomic_fetch_add(p, (T)v, __ATOMIC_SEQ_CST); break;                                  \
    case SHOAL_GPU_AMO_AND: r = __atomic_fetch_and(p, (T)v, __ATOMIC_SEQ_CST); break;                                  \
    case SHOAL_GPU_AMO_OR: r = __atomic_fetch_or(p, (T)v, __ATOMIC_SEQ_CST); break;                                    \
    default: r = __atomic_fetch_xor(p, (T)v, __ATOMIC_SEQ_CST);                                                        \
    }                                                                                                                  \
  } while (0)
  if (size == 4) F_AMO(uint32_t); else F_AMO(uint64_t);
  *old = r;
  return SHOAL_OK;
}
/* Page-locking: the bytes registered and not yet unregistered (the staging region of a job with far PEs). */
static size_t registered;
static void *registered_at;
static shoal_status_t f_host_register(void *p, size_t n) {
  if (registered_at || (uintptr_t)p % 4096) return SHOAL_ERR_INVAL;
  registered_at = p, registered = n;
  return SHOAL_OK;
}
static shoal_status_t f_host_unregister(void *p) {
  if (p != registered_at) return SHOAL_ERR_INVAL;
  registered_at = NULL, registered = 0;
  return SHOAL_OK;
}
static const shoal_gpu_ops_t fake = {
  .size = sizeof(shoal_gpu_ops_t), .name = "fake", .device_count = f_count, .device_busid = f_busid,
  .set_device = f_set, .sm_count = f_sms, .mem_alloc = f_alloc, .mem_free = f_free, .ipc_get = f_ipc_get,
  .ipc_open = f_ipc_open, .ipc_close = f_ipc_close, .share_alloc = f_share_alloc, .share_open = f_share_open,
  .share_close = f_share_close, .share_free = f_share_close, .memcpy = f_memcpy, .memset = f_memset,
  .stream_create = f_stream_create, .stream_destroy = f_ok1, .stream_sync = f_ok1, .device_sync = f_ok0,
  .amo = f_amo, .ptr_device = f_ptr_device, .host_register = f_host_register, .host_unregister = f_host_unregister,
};
/* A test's check, shared by the programs that include this backend: counts into the program's `fails` and names its
 * `me` (both declared before the first use); prints the first 20 failures of a PE. */
#define CHECK(c, ...)                                                                                                 \
  do {                                                                                                                 \
    if (!(c) && fails++ < 20) {                                                                                        \
      fprintf(stderr, "PE %d: FAIL line %d: %s: ", me, __LINE__, #c);                                                  \
      fprintf(stderr, __VA_ARGS__);                                                                                    \
      fputc('\n', stderr);                                                                                             \
    }                                                                                                                  \
  } while (0)

#endif
