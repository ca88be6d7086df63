/*
 * coll_gpu_world.h - W PEs on the GPU(s) of one host for the collective harness and benchmark, without the runtime:
 *   threads mode: one process, W host threads, each PE with its own heap (cudaMalloc) and stream;
 *   procs mode:   W forked processes (each its own CUDA context: under MPS their kernels run concurrently), heaps
 *                 made with the driver's virtual memory management API (cuMemCreate, exported as a POSIX file
 *                 descriptor passed to the peers over abstract Unix sockets, cuMemImportFromShareableHandle + cuMemMap
 *                 in every peer), as the runtime's device heap is by default (SHOAL_GPU_HEAP_MAP=auto) and as NVSHMEM
 *                 maps its heap; driver entry points through cudaGetDriverEntryPointByVersion (no -lcuda).
 *                 CW_ALLOC=ipc (and HIP): cudaMalloc heaps exported with cudaIpcGetMemHandle and mapped with
 *                 cudaIpcOpenMemHandle (SHOAL_GPU_HEAP_MAP=ipc).
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
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <thread>
#include <vector>

#include "coll_gpu.h"
#include <shoal/detail/gpu_port.cuh>

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
/* flags at offset 0 of every heap, the one-exchange reductions' scratch (2 halves) at CW_LL_OFF; data from
 * CW_FLAG_AREA on (all of it zeroed at set-up) */
#define CW_LL_OFF 4096
#define CW_LL_HALF ((size_t)64 << 10) /* = SHOAL_COLL_GPU_LL_HALF, the runtime's */
#define CW_FLAG_AREA (CW_LL_OFF + 2 * CW_LL_HALF)

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
  bool vmm = false;  /* procs mode unless CW_ALLOC=ipc: heaps made and mapped with the driver's VMM API */
  size_t map_bytes = 0; /* vmm: mapped size (heap_bytes rounded up to the granularity) */
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

#if !defined(__HIPCC__) && !defined(__HIP_PLATFORM_AMD__)
#define CW_HAVE_VMM 1
#include <cuda.h>
struct cw_vmm_fns {
  decltype(&cuMemCreate) create;
  decltype(&cuMemGetAllocationGranularity) gran;
  decltype(&cuMemExportToShareableHandle) exp;
  decltype(&cuMemImportFromShareableHandle) imp;
  decltype(&cuMemAddressReserve) reserve;
  decltype(&cuMemMap) map;
  decltype(&cuMemSetAccess) access;
  decltype(&cuMemUnmap) unmap;
  decltype(&cuMemRelease) release;
  decltype(&cuMemAddressFree) addr_free;
};
static inline cw_vmm_fns cw_vmm(void) {
  cw_vmm_fns f;
  auto get = [](const char *name, void **fn) {
    cudaDriverEntryPointQueryResult q;
    if (cudaGetDriverEntryPointByVersion(name, fn, CUDART_VERSION, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess) {
      fprintf(stderr, "cw: driver entry point %s not found\n", name);
      exit(1);
    }
  };
  get("cuMemCreate", (void **)&f.create);
  get("cuMemGetAllocationGranularity", (void **)&f.gran);
  get("cuMemExportToShareableHandle", (void **)&f.exp);
  get("cuMemImportFromShareableHandle", (void **)&f.imp);
  get("cuMemAddressReserve", (void **)&f.reserve);
  get("cuMemMap", (void **)&f.map);
  get("cuMemSetAccess", (void **)&f.access);
  get("cuMemUnmap", (void **)&f.unmap);
  get("cuMemRelease", (void **)&f.release);
  get("cuMemAddressFree", (void **)&f.addr_free);
  return f;
}
#define CU_CK(call)                                                                                                    \
  do {                                                                                                                 \
    CUresult r_ = (call);                                                                                              \
    if (r_ != CUDA_SUCCESS) {                                                                                          \
      fprintf(stderr, "%s:%d: %s failed: CUresult %d\n", __FILE__, __LINE__, #call, (int)r_);                          \
      exit(1);                                                                                                         \
    }                                                                                                                  \
  } while (0)
/* Map handle h (size bytes) at a new address with read-write access for device dev. */
static inline char *cw_vmm_map(const cw_vmm_fns &f, CUmemGenericAllocationHandle h, size_t size, int dev) {
  CUdeviceptr a = 0;
  CU_CK(f.reserve(&a, size, 0, 0, 0));
  CU_CK(f.map(a, size, 0, h, 0));
  CUmemAccessDesc d;
  memset(&d, 0, sizeof d);
  d.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  d.location.id = dev;
  d.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CU_CK(f.access(a, size, &d, 1));
  return (char *)a;
}
/* Abstract Unix socket of PE q of this job (the PEs are children of one process). */
static inline socklen_t cw_sock_addr(int q, struct sockaddr_un *a) {
  memset(a, 0, sizeof *a);
  a->sun_family = AF_UNIX;
  const int l = snprintf(a->sun_path + 1, sizeof a->sun_path - 1, "shoal-cw-%d-%d", (int)getppid(), q);
  return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + l);
}
/* Send fd to every peer and receive theirs (fds[q]; fds[me] = fd). Datagrams with SCM_RIGHTS; sock bound before a
 * barrier, so every peer's socket exists when the sends start. Non-blocking: a datagram queue holds about 10 messages
 * (net.unix.max_dgram_qlen), so with many PEs blocking sends before any receive would deadlock. */
static inline void cw_swap_fds(cw_pe &pe, int sock, int fd, std::vector<int> &fds) {
  fds.assign(pe.W, -1);
  fds[pe.me] = fd;
  std::vector<bool> sent(pe.W, false);
  sent[pe.me] = true;
  int left = pe.W - 1, got = 0;
  const time_t deadline = time(nullptr) + 60;
  while (left || got < pe.W - 1) {
    for (int q = 0; q < pe.W; q++) {
      if (sent[q]) continue;
      struct sockaddr_un a;
      const socklen_t al = cw_sock_addr(q, &a);
      int me = pe.me;
      struct iovec iov = {&me, sizeof me};
      char ctl[CMSG_SPACE(sizeof(int))];
      memset(ctl, 0, sizeof ctl);
      struct msghdr m;
      memset(&m, 0, sizeof m);
      m.msg_name = &a, m.msg_namelen = al, m.msg_iov = &iov, m.msg_iovlen = 1, m.msg_control = ctl;
      m.msg_controllen = sizeof ctl;
      struct cmsghdr *c = CMSG_FIRSTHDR(&m);
      c->cmsg_level = SOL_SOCKET, c->cmsg_type = SCM_RIGHTS, c->cmsg_len = CMSG_LEN(sizeof(int));
      memcpy(CMSG_DATA(c), &fd, sizeof fd);
      if (sendmsg(sock, &m, MSG_DONTWAIT) >= 0) {
        sent[q] = true;
        left--;
      } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        fprintf(stderr, "cw: PE %d: sendmsg to PE %d: %s\n", pe.me, q, strerror(errno));
        exit(1);
      }
    }
    for (;;) {
      int from = -1;
      struct iovec iov = {&from, sizeof from};
      char ctl[CMSG_SPACE(sizeof(int))];
      struct msghdr m;
      memset(&m, 0, sizeof m);
      m.msg_iov = &iov, m.msg_iovlen = 1, m.msg_control = ctl, m.msg_controllen = sizeof ctl;
      if (recvmsg(sock, &m, MSG_DONTWAIT) < 0) break;
      struct cmsghdr *c = CMSG_FIRSTHDR(&m);
      if (!c || c->cmsg_type != SCM_RIGHTS || from < 0 || from >= pe.W || fds[from] >= 0) {
        fprintf(stderr, "cw: PE %d: a bad message on the descriptor socket\n", pe.me);
        exit(1);
      }
      memcpy(&fds[from], CMSG_DATA(c), sizeof(int));
      got++;
    }
    if (left || got < pe.W - 1) {
      if (time(nullptr) > deadline) {
        fprintf(stderr, "cw: PE %d: descriptor exchange did not finish in 60 s\n", pe.me);
        exit(1);
      }
      usleep(200);
    }
  }
}
#endif

/* Allocate and exchange this PE's heap (collective over the PEs). */
static inline void cw_setup(cw_pe &pe, size_t heap_bytes) {
  int ndev = 0;
  CK(API(GetDeviceCount)(&ndev));
  CK(API(SetDevice)(pe.me % ndev));
  if (pe.me == 0)
    fprintf(stderr, "cw_setup: %d PE(s) as %s on %d GPU(s); MPS (driver's answer, -1 unknown): %d\n", pe.W,
            pe.procs ? "processes" : "threads", ndev, shoal_coll_gpu_mps_enabled());
  pe.heap_bytes = heap_bytes;
  const char *alloc = getenv("CW_ALLOC");
  pe.vmm = pe.procs && !(alloc && !strcmp(alloc, "ipc"));
#ifndef CW_HAVE_VMM
  pe.vmm = false;
#endif
#ifdef CW_HAVE_VMM
  cw_vmm_fns vf;
  CUmemGenericAllocationHandle vh = 0;
  CUmemAllocationProp vp;
  int sock = -1;
  if (pe.vmm) {
    CK(cudaFree(0)); /* the primary context, current */
    vf = cw_vmm();
    memset(&vp, 0, sizeof vp);
    vp.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    vp.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    vp.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    vp.location.id = pe.me % ndev;
    size_t g = 0;
    CU_CK(vf.gran(&g, &vp, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
    pe.map_bytes = (heap_bytes + g - 1) / g * g;
    CU_CK(vf.create(&vh, pe.map_bytes, &vp, 0));
    pe.heap = cw_vmm_map(vf, vh, pe.map_bytes, pe.me % ndev);
    sock = socket(AF_UNIX, SOCK_DGRAM, 0);
    struct sockaddr_un a;
    const socklen_t al = cw_sock_addr(pe.me, &a);
    if (sock < 0 || bind(sock, (struct sockaddr *)&a, al) < 0) {
      fprintf(stderr, "cw: PE %d: socket: %s\n", pe.me, strerror(errno));
      exit(1);
    }
  } else
#endif
    CK(API(Malloc)((void **)&pe.heap, heap_bytes));
  CK(API(Memset)(pe.heap, 0, CW_FLAG_AREA));
  CK(API(Malloc)((void **)&pe.sync, sizeof(shoal_coll_gpu_sync_t)));
  CK(API(Memset)(pe.sync, 0, sizeof(shoal_coll_gpu_sync_t)));
  CK(API(StreamCreateWithFlags)(&pe.s, API(StreamNonBlocking)));
  if (pe.vmm) {
    /* the handle travels as a file descriptor below */
  } else if (pe.procs) {
    API(IpcMemHandle_t) h;
    CK(API(IpcGetMemHandle)(&h, pe.heap));
    memcpy(pe.sh->ipc[pe.me], &h, sizeof h);
  } else {
    pe.sh->ptr[pe.me] = pe.heap;
  }
  CK(API(DeviceSynchronize)());
  cw_barrier(pe);
  pe.bases.assign(pe.W, nullptr);
#ifdef CW_HAVE_VMM
  if (pe.vmm) {
    int fd = -1;
    CU_CK(vf.exp(&fd, vh, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    std::vector<int> fds;
    cw_swap_fds(pe, sock, fd, fds);
    close(sock);
    for (int q = 0; q < pe.W; q++) {
      if (q == pe.me) {
        pe.bases[q] = pe.heap;
        continue;
      }
      CUmemGenericAllocationHandle ih = 0;
      CU_CK(vf.imp(&ih, (void *)(uintptr_t)fds[q], CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
      pe.bases[q] = cw_vmm_map(vf, ih, pe.map_bytes, pe.me % ndev); /* every PE maps the same size */
      CU_CK(vf.release(ih)); /* the mapping keeps the memory */
      close(fds[q]);
    }
    close(fd);
    CU_CK(vf.release(vh));
  }
#endif
  for (int q = 0; q < pe.W && !pe.vmm; q++) {
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
    if (pe.procs && q != pe.me) {
#ifdef CW_HAVE_VMM
      if (pe.vmm) {
        cw_vmm_fns f = cw_vmm();
        CU_CK(f.unmap((CUdeviceptr)pe.bases[q], pe.map_bytes));
        CU_CK(f.addr_free((CUdeviceptr)pe.bases[q], pe.map_bytes));
        continue;
      }
#endif
      CK(API(IpcCloseMemHandle)(pe.bases[q]));
    }
  cw_barrier(pe);
  CK(API(Free)(pe.table));
  CK(API(Free)(pe.sync));
#ifdef CW_HAVE_VMM
  if (pe.vmm) {
    cw_vmm_fns f = cw_vmm();
    CU_CK(f.unmap((CUdeviceptr)pe.heap, pe.map_bytes));
    CU_CK(f.addr_free((CUdeviceptr)pe.heap, pe.map_bytes));
  } else
#endif
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
  /* CW_PDL=off / CW_SMALL=off: the launcher's small-call choices off (side-by-side checks and benchmarks) */
  const char *pdl = getenv("CW_PDL"), *small = getenv("CW_SMALL");
  if (pdl && !strcmp(pdl, "off")) a.cfg.pdl = SHOAL_COLL_GPU_PDL_OFF;
  if (small && !strcmp(small, "off")) a.cfg.small = SHOAL_COLL_GPU_SMALL_OFF;
  const char *rtl = getenv("CW_RTLAUNCH"); /* 1: the runtime's launch instead of the driver's */
  if (rtl && *rtl == '1') a.cfg.rt_launch = 1;
  return a;
}
#endif
