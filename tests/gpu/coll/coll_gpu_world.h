/*
 * coll_gpu_world.h - W PEs on the GPU(s) of one host for the collective harness and benchmark, without the runtime:
 *   threads mode: one process, W host threads, each PE with its own heap (cudaMalloc) and stream;
 *   procs mode:   W forked processes (each its own CUDA context: under MPS their kernels run concurrently), heaps
 *                 exported with cudaIpcGetMemHandle and mapped by every peer with cudaIpcOpenMemHandle, as the runtime's
 *                 device heap is.
 * Every PE gets the table of peer heap bases in its own address space (device memory), a zeroed flag area at offset 0
 * of its heap, a zeroed shoal_coll_gpu_sync_t and a stream. cw_barrier is a host barrier over the PEs (shared memory).
 */
#ifndef SHOAL_COLL_GPU_WORLD_H
#define SHOAL_COLL_GPU_WORLD_H
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <thread>
#include <vector>

#include "coll_gpu.h"
#include "coll_gpu_port.h"

#define API SHOAL_GPU_API
#define CK(call)                                                                                                       \
  do {                                                                                                                 \
    API(Error_t) e_ = (call);                                                                                          \
    if (e_ != API(Success)) {                                                                                          \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, API(GetErrorString)(e_));                   \
      exit(1);                                                                                                         \
    }                                                                                                                  \
  } while (0)

#define CW_MAX_PES 64
#define CW_FLAG_AREA 4096 /* flags at offset 0 of every heap; data from here on */

struct cw_shared {
  unsigned bar_count, bar_gen;
  int ndev;
  char ipc[CW_MAX_PES][64]; /* procs mode: IPC handle of each heap (the vendors' handles are 64 bytes) */
  char *ptr[CW_MAX_PES];    /* threads mode: heap pointers */
  char extra[];             /* the caller's shared bytes (results) */
};

struct cw_pe {
  int me = 0, W = 0, procs = 0;
  cw_shared *sh = nullptr;
  char *heap = nullptr;
  size_t heap_bytes = 0;
  std::vector<char *> bases; /* host copy of the table */
  char **table = nullptr;    /* device [W] */
  shoal_coll_gpu_sync_t *sync = nullptr;
  API(Stream_t) s;
};

static inline void cw_barrier(cw_pe &pe) {
  cw_shared *sh = pe.sh;
  const unsigned gen = __atomic_load_n(&sh->bar_gen, __ATOMIC_ACQUIRE);
  if (__atomic_add_fetch(&sh->bar_count, 1, __ATOMIC_ACQ_REL) == (unsigned)pe.W) {
    __atomic_store_n(&sh->bar_count, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&sh->bar_gen, gen + 1, __ATOMIC_RELEASE);
  } else {
    while (__atomic_load_n(&sh->bar_gen, __ATOMIC_ACQUIRE) == gen) sched_yield();
  }
}

/* Allocate and exchange this PE's heap (collective over the PEs). */
static inline void cw_setup(cw_pe &pe, size_t heap_bytes) {
  int ndev = 0;
  CK(API(GetDeviceCount)(&ndev));
  CK(API(SetDevice)(pe.me % ndev));
  if (pe.me == 0)
    fprintf(stderr, "cw_setup: %d PE(s) as %s on %d GPU(s); MPS (driver's answer, -1 unknown): %d\n", pe.W,
            pe.procs ? "processes" : "threads", ndev, shoal_coll_gpu_mps_enabled());
  pe.heap_bytes = heap_bytes;
  CK(API(Malloc)((void **)&pe.heap, heap_bytes));
  CK(API(Memset)(pe.heap, 0, CW_FLAG_AREA));
  CK(API(Malloc)((void **)&pe.sync, sizeof(shoal_coll_gpu_sync_t)));
  CK(API(Memset)(pe.sync, 0, sizeof(shoal_coll_gpu_sync_t)));
  CK(API(StreamCreateWithFlags)(&pe.s, API(StreamNonBlocking)));
  if (pe.procs) {
    API(IpcMemHandle_t) h;
    CK(API(IpcGetMemHandle)(&h, pe.heap));
    memcpy(pe.sh->ipc[pe.me], &h, sizeof h);
  } else {
    pe.sh->ptr[pe.me] = pe.heap;
  }
  CK(API(DeviceSynchronize)());
  cw_barrier(pe);
  pe.bases.assign(pe.W, nullptr);
  for (int q = 0; q < pe.W; q++) {
    if (q == pe.me || !pe.procs) {
      pe.bases[q] = q == pe.me ? pe.heap : pe.sh->ptr[q];
      continue;
    }
    API(IpcMemHandle_t) h;
    memcpy(&h, pe.sh->ipc[q], sizeof h);
    void *p = nullptr;
    CK(API(IpcOpenMemHandle)(&p, h, API(IpcMemLazyEnablePeerAccess)));
    pe.bases[q] = (char *)p;
  }
  CK(API(Malloc)((void **)&pe.table, pe.W * sizeof(char *)));
  CK(API(Memcpy)(pe.table, pe.bases.data(), pe.W * sizeof(char *), API(MemcpyHostToDevice)));
  cw_barrier(pe);
}

static inline void cw_teardown(cw_pe &pe) {
  CK(API(DeviceSynchronize)());
  cw_barrier(pe); /* no peer still writes into our heap */
  for (int q = 0; q < pe.W; q++)
    if (pe.procs && q != pe.me) CK(API(IpcCloseMemHandle)(pe.bases[q]));
  cw_barrier(pe);
  CK(API(Free)(pe.table));
  CK(API(Free)(pe.sync));
  CK(API(Free)(pe.heap));
  CK(API(StreamDestroy)(pe.s));
}

/* Number of GPUs, asked in a child process so that the caller may still fork PEs that use CUDA (-1: no driver). */
static inline int cw_gpu_count(void) {
  pid_t pid = fork();
  if (pid == 0) {
    int n = 0;
    if (API(GetDeviceCount)(&n) != API(Success)) n = 0;
    _exit(n > 100 ? 100 : n);
  }
  int st = 0;
  if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st)) return 0;
  return WEXITSTATUS(st);
}

/* "64M", "4K", "1G", "4096": bytes (k/m/g binary, either case). */
static inline size_t cw_parse_size(const char *s) {
  char *end;
  double v = strtod(s, &end);
  switch (*end) {
  case 'k': case 'K': v *= 1024; break;
  case 'm': case 'M': v *= 1048576; break;
  case 'g': case 'G': v *= 1073741824.0; break;
  default: break;
  }
  return (size_t)v;
}

/* Run fn(pe) on W PEs (threads or processes); extra bytes of shared memory follow cw_shared. Returns the number of PEs
 * that failed to finish (a process that died or exited non-zero). */
static inline int cw_run(int W, bool procs, size_t extra, const std::function<void(cw_pe &)> &fn, cw_shared **shp) {
  const size_t bytes = sizeof(cw_shared) + extra;
  cw_shared *sh = (cw_shared *)mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (sh == MAP_FAILED) {
    perror("mmap");
    exit(1);
  }
  memset(sh, 0, bytes);
  *shp = sh;
  int bad = 0;
  if (procs) {
    std::vector<pid_t> pids;
    for (int p = 0; p < W; p++) {
      pid_t pid = fork();
      if (pid == 0) {
        cw_pe pe;
        pe.me = p, pe.W = W, pe.procs = 1, pe.sh = sh;
        fn(pe);
        fflush(stdout);
        fflush(stderr);
        _exit(0);
      }
      pids.push_back(pid);
    }
    for (size_t left = pids.size(); left; left--) { /* a PE that fails stops the others (they would wait for it) */
      int st = 0;
      pid_t pid = wait(&st);
      if (pid < 0) break;
      if (!WIFEXITED(st) || WEXITSTATUS(st)) {
        bad++;
        for (pid_t q : pids)
          if (q != pid) kill(q, SIGKILL);
      }
    }
  } else {
    std::vector<std::thread> th;
    for (int p = 0; p < W; p++)
      th.emplace_back([=, &fn] {
        cw_pe pe;
        pe.me = p, pe.W = W, pe.procs = 0, pe.sh = sh;
        fn(pe);
      });
    for (auto &t : th) t.join();
  }
  return bad;
}

/* Fill a shoal_coll_gpu_args_t for this PE. */
static inline shoal_coll_gpu_args_t cw_args(cw_pe &pe, int op, size_t dst_off, const void *src, size_t nbytes, int wait) {
  shoal_coll_gpu_args_t a;
  memset(&a, 0, sizeof a);
  a.op = op;
  a.me = pe.me;
  a.npes = pe.W;
  a.peer_base = pe.table;
  a.dst_off = dst_off;
  a.src = src;
  a.nbytes = nbytes;
  a.flag_off = 0;
  a.sync = pe.sync;
  a.wait = wait;
  int ndev = 0; /* PE i runs on device i % ndev: one GPU for all when there is one */
  a.one_gpu = API(GetDeviceCount)(&ndev) == API(Success) && (ndev == 1 || pe.W == 1);
  return a;
}
#endif
