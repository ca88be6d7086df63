/*
 * shoal/shmem_device.cuh - the OpenSHMEM API inside kernels (CUDA with nvcc, HIP with hipcc: one source).
 *
 *   #include <shoal/shmem_device.cuh>      (includes <shmemx.h>)
 *   host: shmem_init();                                 nothing per translation unit
 *   kernel: shmem_my_pe(), shmem_int_p(dest, v, pe), shmemx_putmem_block(...), shmem_barrier_all(),
 *           shmem_team_my_pe(SHMEM_TEAM_WORLD), ...
 *
 * The names are the host API's (as NVSHMEM does): in device code they resolve to the inline definitions below, in
 * host code to libshoal. Symmetric addresses passed in device code must be on the device heap (shmem_malloc with
 * SHOAL_HEAP=device, or shmem_malloc_with_hints(size, SHMEMX_MALLOC_DEVICE)); a peer's instance is reached by
 * loads, stores and system-scope atomics through its IPC mapping: dest + delta[pe], with the peer table in
 * __constant__ memory. No relocatable device code is needed: the state is a static __constant__ of each translation
 * unit; every unit registers itself with the runtime from a static initializer and shmem_init copies the state to
 * all of them (shmemx_init_device_state() does it by hand, for a unit built with SHOAL_DEVICE_NO_AUTO_INIT). A
 * kernel of a unit without state (launched before shmem_init) stops with a message saying so.
 * Without a GPU: a process that includes this header cannot run its kernels, so shmem_init ends the job with one
 * line naming the cause (no GPU, no device heap, state not copied) and exit status 1. A program with a host path
 * that checks shmemx_gpu_available() defines SHOAL_DEVICE_OPTIONAL before this include, in every unit.
 *
 * Scopes: plain routines are per thread; shmemx_*_warp are called by every thread of a warp (warpSize lanes, 32 on
 * NVIDIA, 64 on AMD) and shmemx_*_block by every thread of a block, with the same arguments.
 * Ordering: puts and AMOs are stores/atomics that are complete once issued; shmem_fence and shmem_quiet are a
 * system-scope fence; waits are system-scope acquire loads. shmem_barrier_all/shmem_sync_all are collective over
 * every thread of every block of the kernel on every PE: launch such kernels with shmemx_collective_launch, which
 * refuses grids that cannot all be resident at once (several PEs may share a GPU: each gets its share).
 * Reference: docs/gpu.md.
 */
#ifndef SHOAL_SHMEM_DEVICE_CUH
#define SHOAL_SHMEM_DEVICE_CUH

#include <shoal/detail/gpu_port.cuh> /* vendor spellings, atomics, the address translation: not ABI */
#include <shoal/detail/proxy_queue.h> /* the queue to the host proxy (PEs of other nodes): not ABI */
#include <shmemx.h>
#include <stdio.h>
#include <string.h>

typedef SHOAL_GPU_API(Stream_t) shoal_d_stream_t; /* cudaStream_t or hipStream_t */

/* Spec names are host functions of libshoal too. hipcc (clang) overloads on __host__/__device__: the device
 * definitions are seen in both compilation passes. nvcc does not: they are defined in its device pass only (where
 * it turns the host declaration into a __host__ __device__ one, warning 20039, silenced here) and merely declared in
 * its host pass, where kernel bodies are not compiled. */
#if defined(__HIPCC__) || defined(__CUDA_ARCH__)
#define SHOAL_DAPI extern "C" __device__ inline
#define SHOAL_DBODY(...) __VA_ARGS__
#else
#define SHOAL_DAPI extern "C"
#define SHOAL_DBODY(...) ;
#endif
/* Shoal's own device routines (no host twin): defined in every pass. */
#define SHOAL_DX extern "C" __device__ inline
#define SHOAL_DI static __device__ __forceinline__

#if defined(__NVCC__)
#pragma nv_diagnostic push
#pragma nv_diag_suppress 20039
#endif

/* The state of this translation unit's kernels (one copy per unit: no device linking needed). */
static __constant__ shmemx_device_state_t shoal_dstate;
static __constant__ shmemx_coll_device_info_t shoal_dcoll; /* team slots of the device collectives (size 0: none) */
static int shoal_dstate_ready; /* host side: copied for this unit */

/* Copy this PE's device state to this unit's __constant__ memory on the PE's GPU. why: NULL (by hand, through
 * shmemx_init_device_state): failures are printed; else (the automatic fill at shmem_init) nothing is printed and the
 * cause goes into why[len], for the runtime's one line that ends the job. */
static inline int shoal_dstate_fill(char *why, size_t len) {
  shmemx_device_state_t st;
  if (shmemx_device_state_get(&st, sizeof st)) {
    if (!why)
      fprintf(stderr, "shoal: PE %d: shmemx_init_device_state: no device state (no GPU, or more than %d PEs)\n",
              shmem_my_pe(), SHMEMX_DEVICE_MAX_PES);
    else
      snprintf(why, len, "shmemx_device_state_get: no device state");
    return -1;
  }
  shmemx_coll_device_info_t ci; /* absent (HIP, no room): device collectives and team barriers stop with a message */
  if (shmemx_coll_device_info(&ci, sizeof ci)) memset(&ci, 0, sizeof ci);
  const char *step = SHOAL_GPU_VENDOR "SetDevice";
  int e = (int)SHOAL_GPU_API(SetDevice)(shmemx_gpu_device());
  if (e == (int)SHOAL_GPU_API(Success)) {
    step = SHOAL_GPU_VENDOR "MemcpyToSymbol";
    e = (int)SHOAL_GPU_MEMCPY_TO_SYMBOL(shoal_dstate, &st, sizeof st);
  }
  if (e == (int)SHOAL_GPU_API(Success)) e = (int)SHOAL_GPU_MEMCPY_TO_SYMBOL(shoal_dcoll, &ci, sizeof ci);
  if (e != (int)SHOAL_GPU_API(Success)) {
    const char *msg = SHOAL_GPU_API(GetErrorString)((SHOAL_GPU_API(Error_t))e);
    if (!why)
      fprintf(stderr, "shoal: PE %d: shmemx_init_device_state: this unit's device state: %s\n", shmem_my_pe(), msg);
    else
      snprintf(why, len, "%s: %s", step, msg);
    return -1;
  }
  shoal_dstate_ready = 1;
  return 0;
}

/* Copy this PE's device state (peer table, barrier flags, teams) to this translation unit's __constant__ memory
 * and make the PE's GPU current. Not needed: every unit that includes this header registers itself from a static
 * initializer (shmemx_device_unit_register) and shmem_init fills it. Calling it again (after shmem_init) is safe
 * and recopies. Returns 0, or -1 (message on stderr) without a GPU or when the copy fails. */
static inline int shmemx_init_device_state(void) { return shoal_dstate_fill(NULL, 0); }

#if !defined(SHOAL_DEVICE_NO_AUTO_INIT) /* libshoal's own kernels set their state themselves */
static int shoal_dstate_autofill(char *why, size_t len) { return shoal_dstate_fill(why, len); }
/* A static object, not __attribute__((constructor)): its initializer runs after the CUDA/HIP runtime registered this
 * unit's module (a unit in a library loaded after shmem_init is filled at once, so its symbol must be known).
 * Registering says "this process uses the device API": without a GPU or a device heap shmem_init ends the job with
 * one line naming the cause, unless the unit is built with SHOAL_DEVICE_OPTIONAL (defined before this include: its
 * program checks shmemx_gpu_available() and has a host path; docs/gpu.md, "Without a GPU"). */
#if defined(SHOAL_DEVICE_OPTIONAL)
#define SHOAL_D_UNIT_FLAGS SHMEMX_DEVICE_UNIT_OPTIONAL
#else
#define SHOAL_D_UNIT_FLAGS 0u
#endif
namespace {
struct shoal_dstate_registrar {
  shoal_dstate_registrar() { shmemx_device_unit_register(shoal_dstate_autofill, SHOAL_D_UNIT_FLAGS); }
};
shoal_dstate_registrar shoal_dstate_registrar_instance;
} // namespace
#endif

/* Launch func (a __global__ function that may call shmem_barrier_all / shmem_sync_all) with cudaLaunchKernel
 * arguments, after checking that the grid can be resident at once on this PE's share of the GPU:
 * occupancy (blocks per SM) x SMs / PEs sharing the GPU. Returns 0, or -1 with a message on stderr (grid too large,
 * no GPU, launch failure). */
static inline int shmemx_collective_launch(const void *func, dim3 grid, dim3 block, void **args, size_t shmem,
                                           shoal_d_stream_t stream) {
  if (!shoal_dstate_ready && shmemx_init_device_state()) return -1;
  shmemx_device_state_t st;
  shmemx_device_state_get(&st, sizeof st);
  int dev = 0, sms = 0, per_sm = 0, threads = (int)(block.x * block.y * block.z);
  int e = (int)SHOAL_GPU_API(GetDevice)(&dev);
  if (e == (int)SHOAL_GPU_API(Success)) e = (int)SHOAL_GPU_API(DeviceGetAttribute)(&sms, SHOAL_GPU_ATTR_SM_COUNT, dev);
  if (e == (int)SHOAL_GPU_API(Success))
    e = (int)SHOAL_GPU_API(OccupancyMaxActiveBlocksPerMultiprocessor)(&per_sm, func, threads, shmem);
  if (e != (int)SHOAL_GPU_API(Success)) {
    fprintf(stderr, "shoal: PE %d: shmemx_collective_launch: %s\n", st.my_pe,
            SHOAL_GPU_API(GetErrorString)((SHOAL_GPU_API(Error_t))e));
    return -1;
  }
  long limit = (long)per_sm * sms / (st.pes_per_gpu < 1 ? 1 : st.pes_per_gpu);
  unsigned long blocks = (unsigned long)grid.x * grid.y * grid.z;
  if (blocks > (unsigned long)limit) {
    char line[300]; /* one write: lines of several PEs do not interleave */
    snprintf(line, sizeof line, "shoal: PE %d: shmemx_collective_launch: grid of %lu blocks of %d threads cannot be "
             "co-resident: at most %ld (%d per SM x %d SMs / %d PEs on this GPU)\n", st.my_pe, blocks, threads, limit,
             per_sm, sms, (int)st.pes_per_gpu);
    fputs(line, stderr);
    return -1;
  }
  e = (int)SHOAL_GPU_API(LaunchKernel)(func, grid, block, args, shmem, stream);
  if (e != (int)SHOAL_GPU_API(Success)) {
    fprintf(stderr, "shoal: PE %d: shmemx_collective_launch: %s\n", st.my_pe,
            SHOAL_GPU_API(GetErrorString)((SHOAL_GPU_API(Error_t))e));
    return -1;
  }
  return 0;
}

/* ---- internals ---- */
/* A kernel of a unit whose state was never copied (launched before shmem_init, or a unit built with
 * SHOAL_DEVICE_NO_AUTO_INIT that skipped shmemx_init_device_state) would address PE 0 of 0 PEs: it stops instead. */
static __device__ __noinline__ void shoal_d_unset(void) {
  printf("shoal: PE ?: device API: this kernel's translation unit has no device state: launch it after shmem_init, "
         "or call shmemx_init_device_state() after shmem_init in that unit\n");
  SHOAL_GPU_TRAP();
}
/* The state, checked: n_pes is 0 only in a unit never filled (one uniform, predicted branch on a constant load). */
SHOAL_DI const shmemx_device_state_t &shoal_d_st() {
  if (__builtin_expect(shoal_dstate.n_pes == 0, 0)) shoal_d_unset();
  return shoal_dstate;
}
/* p's instance on pe, as mapped in this process: the port's one translation (dest + delta[pe]). */
template <typename T> SHOAL_DI T *shoal_d_peer(const T *p, int pe) {
  return SHOAL_GPU_PEER(T, p, shoal_d_st().delta[pe]);
}
SHOAL_DI unsigned shoal_d_tid() { return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); }
SHOAL_DI unsigned shoal_d_nthreads() { return blockDim.x * blockDim.y * blockDim.z; }

/* ---- the proxy route (issue 31; docs/gpu.md, "The proxy") ----
 * A PE whose peer table entry is SHMEMX_DEVICE_DELTA_FAR (another node: no load/store mapping) is reached through
 * this PE's host proxy: the request goes into the queue of <shoal/detail/proxy_queue.h>, the proxy thread serves it
 * over the transport. One branch per call on the table entry (a constant load, hoisted out of loops by the compiler
 * where pe does not change). Blocking forms (put, get, g, fetching AMOs, put_signal) wait for the proxy's answer; _nbi
 * forms, p and non-fetching AMOs do not (shmem_quiet completes them). */
SHOAL_DI bool shoal_d_far(int pe) { return __builtin_expect(shoal_d_st().delta[pe] == SHMEMX_DEVICE_DELTA_FAR, 0); }
/* Post one request (op, fields as in shoal_proxy_entry_t) on queue q, which the caller knows exists, and, with
 * SHOAL_PROXY_F_WAIT, wait for its answer, which is returned (G, AMO: the old value). No check, no stop: for the
 * posters inside loops, whose state is already checked. */
SHOAL_DI uint64_t shoal_d_proxy_q(shoal_proxy_queue_t *q, int op, int aop, int flags, int pe, const void *target,
                                  const void *local, uint64_t bytes, uint64_t value, uint64_t cmp, const uint64_t *sig,
                                  int sig_op) {
  shoal_proxy_entry_t e;
  e.seq = 0;
  e.op = (uint8_t)op;
  e.aop = (uint8_t)aop;
  e.sig_op = (uint8_t)sig_op;
  e.flags = (uint8_t)flags;
  e.pe = pe;
  e.target = (uint64_t)(uintptr_t)target;
  e.local = (uint64_t)(uintptr_t)local;
  e.bytes = bytes;
  e.value = value;
  e.cmp = cmp;
  e.sig = (uint64_t)(uintptr_t)sig;
  return shoal_proxy_call(q, &e);
}
/* The same on this PE's queue. A far PE and no queue cannot happen (the runtime puts the queue into every state with
 * a far PE); should it, the kernel stops with one line. Inline, the line without arguments: a call's ABI kept more
 * registers live in the near path (nvcc 13, sm_90: a loop of shmem_long_p 27 registers inline, 42 with a call), and
 * a call or a printf argument gave the kernels an 8-byte stack frame. */
SHOAL_DI uint64_t shoal_d_proxy(int op, int aop, int flags, int pe, const void *target, const void *local,
                                uint64_t bytes, uint64_t value, uint64_t cmp, const uint64_t *sig, int sig_op) {
  shoal_proxy_queue_t *q = (shoal_proxy_queue_t *)shoal_dstate.proxy_queue;
  if (__builtin_expect(!q, 0)) {
    printf("shoal: PE ?: device API: a PE of another node is addressed and this PE has no proxy queue\n");
    SHOAL_GPU_TRAP();
  }
  return shoal_d_proxy_q(q, op, aop, flags, pe, target, local, bytes, value, cmp, sig, sig_op);
}

/* Copy n bytes: this thread takes words rank, rank + size, ... (four in flight), with the widest word that the
 * relative alignment of dst and src allows, bytes for the unaligned head and tail. */
template <typename W> SHOAL_DI void shoal_d_copy_w(W *d, const W *s, size_t nw, size_t rank, size_t size) {
  size_t i = rank;
  for (; i + 3 * size < nw; i += 4 * size) {
    W a = s[i], b = s[i + size], c = s[i + 2 * size], e = s[i + 3 * size];
    d[i] = a;
    d[i + size] = b;
    d[i + 2 * size] = c;
    d[i + 3 * size] = e;
  }
  for (; i < nw; i += size) d[i] = s[i];
}
template <typename W> SHOAL_DI void shoal_d_copy_a(char *d, const char *s, size_t n, size_t rank, size_t size) {
  size_t head = (sizeof(W) - ((uintptr_t)d & (sizeof(W) - 1))) & (sizeof(W) - 1);
  if (head > n) head = n;
  for (size_t j = rank; j < head; j += size) d[j] = s[j];
  d += head, s += head, n -= head;
  size_t nw = n / sizeof(W);
  shoal_d_copy_w((W *)d, (const W *)s, nw, rank, size);
  for (size_t j = nw * sizeof(W) + rank; j < n; j += size) d[j] = s[j];
}
SHOAL_DI void shoal_d_copy(void *dst, const void *src, size_t n, unsigned rank, unsigned size) {
  char *d = (char *)dst;
  const char *s = (const char *)src;
  uintptr_t mis = (uintptr_t)d ^ (uintptr_t)s;
  if (!(mis & 15))
    shoal_d_copy_a<uint4>(d, s, n, rank, size);
  else if (!(mis & 7))
    shoal_d_copy_a<uint2>(d, s, n, rank, size);
  else if (!(mis & 3))
    shoal_d_copy_a<unsigned>(d, s, n, rank, size);
  else
    for (size_t j = rank; j < n; j += size) d[j] = s[j];
}
SHOAL_DI unsigned shoal_d_lane() { return shoal_d_tid() % warpSize; }

SHOAL_DI bool shoal_d_leader_warp() { return shoal_d_lane() == 0; }
SHOAL_DI bool shoal_d_leader_block() { return shoal_d_tid() == 0; }

/* Scoped copies: thread (rank 0 of 1), warp (lane of warpSize), block (thread of the block). */
SHOAL_DI void shoal_d_copy_thread(void *d, const void *s, size_t n) { shoal_d_copy(d, s, n, 0, 1); }
SHOAL_DI void shoal_d_copy_warp(void *d, const void *s, size_t n) {
  shoal_d_copy(d, s, n, shoal_d_lane(), warpSize);
  SHOAL_GPU_SYNCWARP();
}
SHOAL_DI void shoal_d_copy_block(void *d, const void *s, size_t n) {
  shoal_d_copy(d, s, n, shoal_d_tid(), shoal_d_nthreads());
  __syncthreads();
}

/* System-scope acquire loads (flags written by other PEs' kernels or GPUs) of any T: the port's loads of a 4- or
 * 8-byte word, whose bits are T's; other sizes, a volatile load and a fence. */
template <typename T> SHOAL_DI T shoal_d_load_acquire(const T *p) {
  if (sizeof(T) == 8) {
    const unsigned long long v = shoal_port::ld_acquire_sys((const unsigned long long *)p);
    T r;
    memcpy(&r, &v, sizeof r);
    return r;
  }
  if (sizeof(T) == 4) {
    const unsigned v = shoal_port::ld_acquire_sys((const unsigned *)p);
    T r;
    memcpy(&r, &v, sizeof r);
    return r;
  }
  T v = *(const volatile T *)p;
  __threadfence_system();
  return v;
}

/* The unsigned word of T's size, for atomics of every type of that size. */
template <int S> struct shoal_d_word;
template <> struct shoal_d_word<4> { typedef unsigned int t; };
template <> struct shoal_d_word<8> { typedef unsigned long long int t; };
template <typename U, typename T> SHOAL_DI U shoal_d_cast(T v) {
  U u;
  memcpy(&u, &v, sizeof u);
  return u;
}

enum { SHOAL_D_FETCH, SHOAL_D_SET, SHOAL_D_SWAP, SHOAL_D_CSWAP, SHOAL_D_ADD, SHOAL_D_AND, SHOAL_D_OR, SHOAL_D_XOR };
static_assert((int)SHOAL_D_XOR == (int)SHOAL_PROXY_AMO_XOR && (int)SHOAL_D_ADD == (int)SHOAL_PROXY_AMO_ADD,
              "device AMO ops and proxy AMO ops in one order");
/* op on the word at p (already a peer address); returns the old value (SET: unspecified). */
template <typename U> SHOAL_DI U shoal_d_amo_word(U *p, int op, U v, U c) {
  switch (op) {
  case SHOAL_D_FETCH: return shoal_d_load_acquire(p);
  case SHOAL_D_SET: return atomicExch_system(p, v);
  case SHOAL_D_SWAP: return atomicExch_system(p, v);
  case SHOAL_D_CSWAP: return atomicCAS_system(p, c, v);
  case SHOAL_D_ADD: return atomicAdd_system(p, v);
  case SHOAL_D_AND: return atomicAnd_system(p, v);
  case SHOAL_D_OR: return atomicOr_system(p, v);
  default: return atomicXor_system(p, v);
  }
}
template <typename T> SHOAL_DI T shoal_d_amo(T *dest, int op, T value, T cond, int pe) {
  typedef typename shoal_d_word<sizeof(T)>::t U;
  if (shoal_d_far(pe)) /* the proxy route (below): the old value comes back */
    return shoal_d_cast<T>((U)shoal_d_proxy(SHOAL_PROXY_AMO, op, SHOAL_PROXY_F_WAIT, pe, dest, 0, sizeof(T),
                                            (uint64_t)shoal_d_cast<U>(value), (uint64_t)shoal_d_cast<U>(cond), 0, 0));
  U r = shoal_d_amo_word<U>((U *)shoal_d_peer(dest, pe), op, shoal_d_cast<U>(value), shoal_d_cast<U>(cond));
  return shoal_d_cast<T>(r);
}
/* The non-fetching forms (set, add, inc, and, or, xor): as shoal_d_amo, but through the proxy without waiting. */
template <typename T> SHOAL_DI void shoal_d_amo_nf(T *dest, int op, T value, int pe) {
  typedef typename shoal_d_word<sizeof(T)>::t U;
  if (shoal_d_far(pe))
    shoal_d_proxy(SHOAL_PROXY_AMO, op, 0, pe, dest, 0, sizeof(T), (uint64_t)shoal_d_cast<U>(value), 0, 0, 0);
  else
    shoal_d_amo_word<U>((U *)shoal_d_peer(dest, pe), op, shoal_d_cast<U>(value), (U)0);
}

/* System-scope release store / add of a 64-bit word: every store this thread made (or saw through __syncthreads /
 * __syncwarp) is visible before the new value is. The port's, for the device API's uint64_t words. */
SHOAL_DI void shoal_d_store_release(uint64_t *p, uint64_t v) {
  shoal_port::st_release_sys((unsigned long long *)p, v);
}
SHOAL_DI void shoal_d_add_release(uint64_t *p, uint64_t v) { shoal_port::add_release_sys((unsigned long long *)p, v); }

/* The signal after the data (spec put_signal): release order, no full fence. */
SHOAL_DI void shoal_d_signal(uint64_t *sig_addr, uint64_t signal, int sig_op, int pe) {
  uint64_t *p = shoal_d_peer(sig_addr, pe);
  if (sig_op == SHMEM_SIGNAL_ADD)
    shoal_d_add_release(p, signal);
  else
    shoal_d_store_release(p, signal);
}

SHOAL_DI bool shoal_d_leader_thread() { return true; }
SHOAL_DI void shoal_d_sync_thread() {}
SHOAL_DI void shoal_d_sync_warp() { SHOAL_GPU_SYNCWARP(); }
SHOAL_DI void shoal_d_sync_block() { __syncthreads(); }
/* Put, get and put_signal of n bytes for scope SC (thread, warp, block): the copy (and the signal) through the peer
 * mapping, or, for a far PE, one request that the scope's leader posts between two syncs of the scope (its threads'
 * stores to the source are then visible to the proxy; a blocking get's data is there for all of them after). */
#define SHOAL_D_ROUTES(SC)                                                                                            \
  SHOAL_DI void shoal_d_put_##SC(void *dest, const void *src, size_t n, int pe, bool nbi) {                           \
    if (shoal_d_far(pe)) {                                                                                             \
      shoal_d_sync_##SC();                                                                                             \
      if (shoal_d_leader_##SC() && n && n <= 8) { /* the bytes in the request: no wait, no staging copy */           \
        uint64_t u = 0;                                                                                                \
        for (size_t i = 0; i < n; i++) ((char *)&u)[i] = ((const char *)src)[i];                                     \
        shoal_d_proxy(SHOAL_PROXY_PUT, 0, SHOAL_PROXY_F_INLINE | (nbi ? SHOAL_PROXY_F_NBI : 0u), pe, dest, src, n, u, \
                      0, 0, 0);                                                                                        \
      } else if (shoal_d_leader_##SC()) {                                                                              \
        __threadfence_system();                                                                                        \
        shoal_d_proxy(SHOAL_PROXY_PUT, 0, nbi ? SHOAL_PROXY_F_NBI : SHOAL_PROXY_F_WAIT, pe, dest, src, n, 0, 0, 0, 0); \
      }                                                                                                                \
      shoal_d_sync_##SC();                                                                                             \
    } else {                                                                                                           \
      shoal_d_copy_##SC(shoal_d_peer((char *)dest, pe), src, n);                                                       \
    }                                                                                                                  \
  }                                                                                                                    \
  SHOAL_DI void shoal_d_get_##SC(void *dest, const void *src, size_t n, int pe, bool nbi) {                           \
    if (shoal_d_far(pe)) {                                                                                             \
      shoal_d_sync_##SC();                                                                                             \
      if (shoal_d_leader_##SC())                                                                                       \
        shoal_d_proxy(SHOAL_PROXY_GET, 0, nbi ? SHOAL_PROXY_F_NBI : SHOAL_PROXY_F_WAIT, pe, src, dest, n, 0, 0, 0, 0); \
      shoal_d_sync_##SC();                                                                                             \
    } else {                                                                                                           \
      shoal_d_copy_##SC(dest, shoal_d_peer((const char *)src, pe), n);                                                 \
    }                                                                                                                  \
  }                                                                                                                    \
  SHOAL_DI void shoal_d_put_signal_##SC(void *dest, const void *src, size_t n, uint64_t *sig_addr, uint64_t signal,   \
                                        int sig_op, int pe, bool nbi) {                                                \
    if (shoal_d_far(pe)) {                                                                                             \
      shoal_d_sync_##SC();                                                                                             \
      if (shoal_d_leader_##SC()) {                                                                                     \
        __threadfence_system();                                                                                        \
        shoal_d_proxy(SHOAL_PROXY_PUT_SIGNAL, 0, nbi ? SHOAL_PROXY_F_NBI : SHOAL_PROXY_F_WAIT, pe, dest, src, n,       \
                      signal, 0, sig_addr, sig_op);                                                                    \
      }                                                                                                                \
      shoal_d_sync_##SC();                                                                                             \
    } else {                                                                                                           \
      shoal_d_copy_##SC(shoal_d_peer((char *)dest, pe), src, n);                                                       \
      if (shoal_d_leader_##SC()) shoal_d_signal(sig_addr, signal, sig_op, pe);                                         \
    }                                                                                                                  \
  }
SHOAL_D_ROUTES(thread)
SHOAL_D_ROUTES(warp)
SHOAL_D_ROUTES(block)
/* p and g of one element (1, 2, 4 or 8 bytes): a store or load through the mapping, or the proxy (p does not wait). */
template <typename T> SHOAL_DI void shoal_d_p(T *dest, T v, int pe) {
  if (shoal_d_far(pe)) {
    uint64_t u = 0;
    memcpy(&u, &v, sizeof v);
    shoal_d_proxy(SHOAL_PROXY_P, 0, 0, pe, dest, 0, sizeof(T), u, 0, 0, 0);
  } else {
    *shoal_d_peer(dest, pe) = v;
  }
}
template <typename T> SHOAL_DI T shoal_d_g(const T *source, int pe) {
  if (shoal_d_far(pe)) {
    const uint64_t u = shoal_d_proxy(SHOAL_PROXY_G, 0, SHOAL_PROXY_F_WAIT, pe, source, 0, sizeof(T), 0, 0, 0, 0);
    T v;
    memcpy(&v, &u, sizeof v);
    return v;
  }
  return *shoal_d_peer(source, pe);
}

template <typename T> SHOAL_DI bool shoal_d_cmp(T a, int cmp, T b) {
  switch (cmp) {
  case SHMEM_CMP_EQ: return a == b;
  case SHMEM_CMP_NE: return a != b;
  case SHMEM_CMP_GT: return a > b;
  case SHMEM_CMP_LE: return a <= b;
  case SHMEM_CMP_LT: return a < b;
  default: return a >= b;
  }
}
template <typename T> SHOAL_DI T shoal_d_wait(const T *ivar, int cmp, T value) {
  T v;
  while (!shoal_d_cmp(v = shoal_d_load_acquire(ivar), cmp, value)) {
  }
  return v;
}

/* Every block of this PE's grid meets (sense by generation count; all blocks must be resident). */
SHOAL_DI void shoal_d_grid_sync() {
  unsigned nb = gridDim.x * gridDim.y * gridDim.z;
  __syncthreads();
  if (nb > 1 && shoal_d_tid() == 0) {
    unsigned *count = shoal_d_st().grid_bar, *gen = shoal_d_st().grid_bar + 1;
    unsigned g = *(volatile unsigned *)gen;
    __threadfence();
    if (atomicAdd(count, 1u) == nb - 1) {
      *(volatile unsigned *)count = 0;
      __threadfence();
      atomicAdd(gen, 1u);
    } else {
      while (*(volatile unsigned *)gen == g) {
      }
    }
    __threadfence();
  }
  __syncthreads();
}

/* One thread of each PE: dissemination over the device barrier flags; flags hold the barrier count, so nothing is
 * reset and a fast PE's next barrier cannot be taken for this one. */
SHOAL_DI void shoal_d_pe_barrier() {
  int n = shoal_d_st().n_pes, me = shoal_d_st().my_pe;
  volatile uint64_t *ep = shoal_d_st().bar_epoch;
  uint64_t e = *ep + 1;
  *ep = e;
  __threadfence_system();
  /* PEs of other nodes (issue 31): this PE's requests complete first, for a sync as for a barrier (those its threads
   * posted before the caller's grid sync or __syncthreads, which the proxy serves before this): a sync's flags reach
   * a PE through other PEs, and only the quiet orders this PE's proxied requests before them (shoal_d_team_barrier).
   * A round's flag to such a PE is an 8-byte p through the proxy (the flag only grows: a put of e is the store of e).
   * (A proxy exists only when some PE is far: one node posts nothing.) */
  const bool via = shoal_d_st().proxy_queue != 0;
  if (via) shoal_d_proxy(SHOAL_PROXY_QUIET, 0, SHOAL_PROXY_F_WAIT, 0, 0, 0, 0, 0, 0, 0, 0);
  for (int k = 0, d = 1; d < n; k++, d <<= 1) {
    int to = me + d >= n ? me + d - n : me + d;
    uint64_t *mine = shoal_d_st().bar_flags + k * 16;
    if (via && shoal_d_far(to)) shoal_d_proxy(SHOAL_PROXY_P, 0, 0, to, mine, 0, 8, e, 0, 0, 0);
    else shoal_d_store_release(shoal_d_peer(mine, to), e);
    while (shoal_d_load_acquire(mine) < e) {
    }
  }
}

/* ---- setup queries ---- */
SHOAL_DAPI int shmem_my_pe(void) SHOAL_DBODY({ return shoal_d_st().my_pe; })
SHOAL_DAPI int shmem_n_pes(void) SHOAL_DBODY({ return shoal_d_st().n_pes; })
SHOAL_DAPI int shmem_pe_accessible(int pe) SHOAL_DBODY({ return pe >= 0 && pe < shoal_d_st().n_pes; })
SHOAL_DAPI int shmem_addr_accessible(const void *addr, int pe) SHOAL_DBODY({
  return pe >= 0 && pe < shoal_d_st().n_pes &&
         (uintptr_t)addr - (uintptr_t)shoal_d_st().heap_base < shoal_d_st().heap_size;
})
/* A pointer to dest's instance on pe for loads and stores in this kernel, or NULL if dest is not on the device
 * heap or pe is out of range. */
SHOAL_DAPI void *shmem_ptr(const void *dest, int pe) SHOAL_DBODY({
  return shmem_addr_accessible(dest, pe) && !shoal_d_far(pe) ? (void *)shoal_d_peer((const char *)dest, pe) : (void *)0;
})

/* ---- teams (spec 9.4) ----
 * Handles are values: SHMEM_TEAM_WORLD, SHMEM_TEAM_SHARED and any team made on the host may be passed to a kernel
 * (as shmem_team_t arguments) and used there. The two predefined names are host variables of libshoal, which device
 * code cannot read: from here on they name functions that return the variable on the host and this unit's copy of
 * its value in device code. A team's members come from a device table that the runtime updates at every split and
 * destroy (a team split on the host is seen by kernels launched after the split returns). */
static __host__ __device__ inline shmem_team_t shoal_team_world_(void) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  return shoal_d_st().team_world;
#else
  return SHMEM_TEAM_WORLD;
#endif
}
static __host__ __device__ inline shmem_team_t shoal_team_shared_(void) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  return shoal_d_st().team_shared;
#else
  return SHMEM_TEAM_SHARED;
#endif
}
#define SHMEM_TEAM_WORLD shoal_team_world_()
#define SHMEM_TEAM_SHARED shoal_team_shared_()
/* Index of team's entry in the device team table (a live team or not), or -1 for anything that is no team handle. */
SHOAL_DI int shoal_d_team_index(shmem_team_t team) {
  const shmemx_device_state_t &s = shoal_d_st();
  uint64_t off = (uint64_t)(uintptr_t)team - s.team_pool;
  if (!team || off % s.team_stride || off / s.team_stride >= s.team_count) return -1;
  return (int)(off / s.team_stride);
}
/* team's entry {world start, world stride, size, my rank}, or NULL for SHMEM_TEAM_INVALID, a destroyed team, or
 * anything that is no team handle of this PE. */
SHOAL_DI const int32_t *shoal_d_team(shmem_team_t team) {
  const int i = shoal_d_team_index(team);
  if (i < 0) return (const int32_t *)0;
  const int32_t *e = shoal_d_st().teams + i * 4;
  return e[2] ? e : (const int32_t *)0;
}
/* A team as the device collectives see it: its slot's state (collectives/gpu/coll_gpu_shmem.c's layout). The
 * lookup other block-scoped collectives use: shoal_d_cteam_of(team, "routine"). */
struct shoal_d_cteam {
  char *const *base; /* [npes] members' device heap bases in this process, by team rank */
  uint64_t flag_off; /* offset in every member's heap of the slot's device-form flags [npes] (by sender rank) */
  uint64_t bar_off;  /* offset in every member's heap of the slot's barrier flags [SHMEMX_DEVICE_BAR_ROUNDS] */
  void *sync;        /* this PE's completion state of the slot's device forms (a shoal_coll_gpu_sync_t) */
  uint64_t *bar_epoch; /* this PE's barrier count on the slot */
  int me, npes, slot;
  int start, stride; /* member r is world PE start + r stride */
  char *scratch;     /* some PE on another node: this PE's scratch of the slot (scratch_bytes), else NULL */
  size_t scratch_bytes;
};
/* World PE of c's member r, whether it is on another node (its base NULL: reached through the proxy only), and a
 * pointer to p's instance on it (a member of this node). Unchecked reads of the state: c came from a checked one. */
SHOAL_DI int shoal_d_cteam_pe(const shoal_d_cteam &c, int r) { return c.start + r * c.stride; }
SHOAL_DI bool shoal_d_cteam_far(const shoal_d_cteam &c, int r) {
  return shoal_dstate.proxy_queue != 0 && shoal_dstate.delta[shoal_d_cteam_pe(c, r)] == SHMEMX_DEVICE_DELTA_FAR;
}
template <typename T> SHOAL_DI T *shoal_d_cteam_peer(const shoal_d_cteam &c, const T *p, int r) {
  return SHOAL_GPU_PEER(T, p, shoal_dstate.delta[shoal_d_cteam_pe(c, r)]);
}
/* Every thread of the calling block: does c have a member on another node? Thread 0 looks (once a PE has a proxy
 * queue), the block shares its answer: one uniform branch for the block scope's syncs that follow. */
SHOAL_DI bool shoal_d_cteam_any_far_block(const shoal_d_cteam &c) {
  __shared__ int far;
  if (!shoal_dstate.proxy_queue) return false;
  if (threadIdx.x == 0) {
    far = 0;
    for (int r = 0; r < c.npes && !far; r++) far = shoal_d_cteam_far(c, r);
  }
  __syncthreads();
  return far != 0;
}
/* true and c filled for a live team of this PE, false for SHMEM_TEAM_INVALID, a destroyed team, or no GPU
 * collectives in this unit's state. */
SHOAL_DI bool shoal_d_cteam_get(shmem_team_t team, shoal_d_cteam &c) {
  const shmemx_coll_device_info_t &ci = shoal_dcoll;
  const int32_t *e = shoal_d_team(team);
  if (!e || !ci.size) return false;
  const int slot = ci.team_slot[shoal_d_team_index(team)];
  if (slot < 0 || (uint32_t)slot >= ci.slots) return false;
  const size_t n = (size_t)shoal_dstate.n_pes;
  c.base = ci.table + (size_t)slot * n;
  c.flag_off = ci.flag_off + (size_t)slot * n * 8;
  c.bar_off = ci.bar_off + (size_t)slot * SHMEMX_DEVICE_BAR_ROUNDS * 8;
  c.sync = (char *)ci.sync + (size_t)slot * ci.sync_size;
  c.bar_epoch = ci.bar_epoch + slot;
  c.me = e[3];
  c.npes = e[2];
  c.slot = slot;
  c.start = e[0];
  c.stride = e[1];
  c.scratch = ci.scratch_bytes ? shoal_dstate.heap_base + ci.scratch_off + (size_t)slot * ci.scratch_bytes : nullptr;
  c.scratch_bytes = ci.scratch_bytes;
  return true;
}
static __device__ __noinline__ void shoal_d_bad_team(const char *routine, shmem_team_t team, int have_coll) {
  if (have_coll)
    printf("shoal: PE %d: %s: team %p is SHMEM_TEAM_INVALID, destroyed, or no team of this PE\n", shoal_dstate.my_pe,
           routine, (void *)team);
  else
    printf("shoal: PE %d: %s: team: this unit has no state for the device collectives (HIP, or no room for them in "
           "the device heap: use the host or _on_stream forms)\n", shoal_dstate.my_pe, routine);
  SHOAL_GPU_TRAP();
}
/* team's slot state, or stop the kernel with one line naming routine and the team. */
SHOAL_DI shoal_d_cteam shoal_d_cteam_of(shmem_team_t team, const char *routine) {
  shoal_d_cteam c;
  if (__builtin_expect(!shoal_d_cteam_get(team, c), 0)) shoal_d_bad_team(routine, team, shoal_dcoll.size != 0);
  return c;
}
/* shoal_d_team_barrier's modes: SHOAL_D_BAR_SYNC (the user's sync), SHOAL_D_BAR_QUIET (a barrier),
 * SHOAL_D_BAR_ARRIVE (a collective's own step where this PE has no request in flight that a member must see:
 * arrival and this thread's stores only; an unwaited FENCE, as every form posted before session 34, keeps this
 * barrier's flag puts behind the last one's to the same word, which "the count only grows" relies on). */
enum { SHOAL_D_BAR_SYNC, SHOAL_D_BAR_QUIET, SHOAL_D_BAR_ARRIVE };
/* One thread of each member of c: dissemination over the slot's barrier flags, which hold the slot's barrier count
 * (nothing is reset between barriers; the slot's flags and count start from zero at the team's creation). Orders this
 * thread's earlier stores (and those it saw through __syncthreads / __syncwarp) before every member's return.
 * Members on other nodes (issue 31): first a QUIET through the proxy, waited for: a barrier's completion of this PE's
 * requests, and also a sync's when some member is far (otherwise, and for ARRIVE, an unwaited FENCE). A sync's flags
 * reach a member along a chain of other members (dissemination), and nothing orders this PE's proxied requests
 * before another member's flag: without the quiet a member could leave the sync before this PE's shmem_p to it
 * landed, which a near member's store cannot do (session 33, gpu_dcoll with two nodes of two PEs). So a p or put
 * before a sync is seen after it wherever the members are (the spec asks that only of stores; a kernel that works on
 * one node keeps working across nodes). A round's flag to a far member is an 8-byte p through the proxy (the count
 * only grows: a put of e is its store), as shoal_d_pe_barrier's. */
SHOAL_DI void shoal_d_team_barrier(const shoal_d_cteam &c, int mode = SHOAL_D_BAR_SYNC) {
  const int n = c.npes, me = c.me;
  shoal_proxy_queue_t *const q = (shoal_proxy_queue_t *)shoal_dstate.proxy_queue;
  const bool via = q != 0;
  bool complete = via && mode == SHOAL_D_BAR_QUIET;
  for (int r = 0; via && mode == SHOAL_D_BAR_SYNC && !complete && n > 1 && r < n; r++)
    complete = shoal_d_cteam_far(c, r);
  if (complete) shoal_d_proxy_q(q, SHOAL_PROXY_QUIET, 0, SHOAL_PROXY_F_WAIT, 0, 0, 0, 0, 0, 0, 0, 0);
  else if (via && n > 1) shoal_d_proxy_q(q, SHOAL_PROXY_FENCE, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
  if (n <= 1) return;
  volatile uint64_t *ep = c.bar_epoch;
  const uint64_t e = *ep + 1;
  *ep = e;
  uint64_t *mine = (uint64_t *)shoal_port::peer(c.base[me], c.bar_off);
  for (int k = 0, d = 1; d < n; k++, d <<= 1) {
    const int to = me + d >= n ? me + d - n : me + d;
    if (via && shoal_d_cteam_far(c, to))
      shoal_d_proxy_q(q, SHOAL_PROXY_P, 0, 0, shoal_d_cteam_pe(c, to), mine + k, 0, 8, e, 0, 0, 0);
    else
      shoal_d_store_release((uint64_t *)shoal_port::peer(c.base[to], c.bar_off) + k, e);
    while (shoal_d_load_acquire(mine + k) < e) {
    }
  }
}
/* This PE's number in team, or -1 for SHMEM_TEAM_INVALID (or a destroyed team). */
SHOAL_DAPI int shmem_team_my_pe(shmem_team_t team) SHOAL_DBODY({
  const int32_t *e = shoal_d_team(team);
  return e ? e[3] : -1;
})
/* The number of PEs of team, or -1 for SHMEM_TEAM_INVALID (or a destroyed team). */
SHOAL_DAPI int shmem_team_n_pes(shmem_team_t team) SHOAL_DBODY({
  const int32_t *e = shoal_d_team(team);
  return e ? e[2] : -1;
})
/* src_pe of src_team as numbered in dest_team, or -1 (not a member, src_pe out of range, an invalid team). */
SHOAL_DAPI int shmem_team_translate_pe(shmem_team_t src_team, int src_pe, shmem_team_t dest_team) SHOAL_DBODY({
  const int32_t *s = shoal_d_team(src_team), *d = shoal_d_team(dest_team);
  if (!s || !d || src_pe < 0 || src_pe >= s[2]) return -1;
  int w = s[0] + src_pe * s[1], r = w - d[0];
  if (r < 0 || r % d[1]) return -1;
  r /= d[1];
  return r < d[2] ? r : -1;
})

/* ---- ordering ---- */
/* With a proxy (some PE is on another node) a fence also orders the proxy's requests (a FENCE request) and a quiet
 * also waits until the proxy completed every request posted before it (a QUIET request, answered). */
SHOAL_DAPI void shmem_fence(void) SHOAL_DBODY({
  __threadfence_system();
  if (shoal_d_st().proxy_queue) shoal_d_proxy(SHOAL_PROXY_FENCE, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
})
SHOAL_DAPI void shmem_quiet(void) SHOAL_DBODY({
  __threadfence_system();
  if (shoal_d_st().proxy_queue) shoal_d_proxy(SHOAL_PROXY_QUIET, 0, SHOAL_PROXY_F_WAIT, 0, 0, 0, 0, 0, 0, 0, 0);
})

/* ---- RMA: bytes ---- */
SHOAL_DAPI void shmem_putmem(void *dest, const void *source, size_t nelems, int pe)
    SHOAL_DBODY({ shoal_d_put_thread(dest, source, nelems, pe, false); })
SHOAL_DAPI void shmem_putmem_nbi(void *dest, const void *source, size_t nelems, int pe)
    SHOAL_DBODY({ shoal_d_put_thread(dest, source, nelems, pe, true); })
SHOAL_DAPI void shmem_getmem(void *dest, const void *source, size_t nelems, int pe)
    SHOAL_DBODY({ shoal_d_get_thread(dest, source, nelems, pe, false); })
SHOAL_DAPI void shmem_getmem_nbi(void *dest, const void *source, size_t nelems, int pe)
    SHOAL_DBODY({ shoal_d_get_thread(dest, source, nelems, pe, true); })

#define SHOAL_D_SCOPED_MEM(SC)                                                                                        \
  SHOAL_DX void shmemx_putmem_##SC(void *dest, const void *source, size_t nelems, int pe) {                           \
    shoal_d_put_##SC(dest, source, nelems, pe, false);                                                                 \
  }                                                                                                                    \
  SHOAL_DX void shmemx_putmem_nbi_##SC(void *dest, const void *source, size_t nelems, int pe) {                       \
    shoal_d_put_##SC(dest, source, nelems, pe, true);                                                                  \
  }                                                                                                                    \
  SHOAL_DX void shmemx_getmem_##SC(void *dest, const void *source, size_t nelems, int pe) {                           \
    shoal_d_get_##SC(dest, source, nelems, pe, false);                                                                 \
  }                                                                                                                    \
  SHOAL_DX void shmemx_getmem_nbi_##SC(void *dest, const void *source, size_t nelems, int pe) {                       \
    shoal_d_get_##SC(dest, source, nelems, pe, true);                                                                  \
  }                                                                                                                    \
  SHOAL_DX void shmemx_putmem_signal_##SC(void *dest, const void *source, size_t nelems, uint64_t *sig_addr,          \
                                          uint64_t signal, int sig_op, int pe) {                                      \
    shoal_d_put_signal_##SC(dest, source, nelems, sig_addr, signal, sig_op, pe, false);                               \
  }
SHOAL_D_SCOPED_MEM(warp)
SHOAL_D_SCOPED_MEM(block)

/* ---- RMA: typed (every standard RMA type but long double) ---- */
#define SHOAL_D_RMA_TYPES(X)                                                                                          \
  X(float, float) X(double, double) X(char, char) X(signed char, schar) X(short, short) X(int, int) X(long, long)    \
  X(long long, longlong) X(unsigned char, uchar) X(unsigned short, ushort) X(unsigned int, uint)                      \
  X(unsigned long, ulong) X(unsigned long long, ulonglong) X(int8_t, int8) X(int16_t, int16) X(int32_t, int32)       \
  X(int64_t, int64) X(uint8_t, uint8) X(uint16_t, uint16) X(uint32_t, uint32) X(uint64_t, uint64) X(size_t, size)    \
  X(ptrdiff_t, ptrdiff)

#define SHOAL_D_DEF_RMA(T, N)                                                                                         \
  SHOAL_DAPI void shmem_##N##_put(T *dest, const T *source, size_t nelems, int pe)                                    \
      SHOAL_DBODY({ shoal_d_put_thread(dest, source, nelems * sizeof(T), pe, false); })                               \
  SHOAL_DAPI void shmem_##N##_put_nbi(T *dest, const T *source, size_t nelems, int pe)                                \
      SHOAL_DBODY({ shoal_d_put_thread(dest, source, nelems * sizeof(T), pe, true); })                                \
  SHOAL_DAPI void shmem_##N##_get(T *dest, const T *source, size_t nelems, int pe)                                    \
      SHOAL_DBODY({ shoal_d_get_thread(dest, source, nelems * sizeof(T), pe, false); })                               \
  SHOAL_DAPI void shmem_##N##_get_nbi(T *dest, const T *source, size_t nelems, int pe)                                \
      SHOAL_DBODY({ shoal_d_get_thread(dest, source, nelems * sizeof(T), pe, true); })                                \
  SHOAL_DAPI void shmem_##N##_p(T *dest, T value, int pe) SHOAL_DBODY({ shoal_d_p(dest, value, pe); })                \
  SHOAL_DAPI T shmem_##N##_g(const T *source, int pe) SHOAL_DBODY({ return shoal_d_g(source, pe); })                  \
  SHOAL_DAPI void shmem_##N##_put_signal(T *dest, const T *source, size_t nelems, uint64_t *sig_addr,                 \
                                         uint64_t signal, int sig_op, int pe) SHOAL_DBODY({                           \
    shoal_d_put_signal_thread(dest, source, nelems * sizeof(T), sig_addr, signal, sig_op, pe, false);                 \
  })                                                                                                                   \
  SHOAL_DAPI void shmem_##N##_put_signal_nbi(T *dest, const T *source, size_t nelems, uint64_t *sig_addr,             \
                                             uint64_t signal, int sig_op, int pe) SHOAL_DBODY({                       \
    shoal_d_put_signal_thread(dest, source, nelems * sizeof(T), sig_addr, signal, sig_op, pe, true);                  \
  })                                                                                                                   \
  SHOAL_DX void shmemx_##N##_put_warp(T *dest, const T *source, size_t nelems, int pe) {                              \
    shoal_d_put_warp(dest, source, nelems * sizeof(T), pe, false);                                                     \
  }                                                                                                                    \
  SHOAL_DX void shmemx_##N##_put_block(T *dest, const T *source, size_t nelems, int pe) {                             \
    shoal_d_put_block(dest, source, nelems * sizeof(T), pe, false);                                                    \
  }                                                                                                                    \
  SHOAL_DX void shmemx_##N##_get_warp(T *dest, const T *source, size_t nelems, int pe) {                              \
    shoal_d_get_warp(dest, source, nelems * sizeof(T), pe, false);                                                     \
  }                                                                                                                    \
  SHOAL_DX void shmemx_##N##_get_block(T *dest, const T *source, size_t nelems, int pe) {                             \
    shoal_d_get_block(dest, source, nelems * sizeof(T), pe, false);                                                    \
  }
SHOAL_D_RMA_TYPES(SHOAL_D_DEF_RMA)

/* ---- signals (spec 9.8) ---- */
SHOAL_DAPI void shmem_putmem_signal(void *dest, const void *source, size_t nelems, uint64_t *sig_addr, uint64_t signal,
                                    int sig_op, int pe) SHOAL_DBODY({
  shoal_d_put_signal_thread(dest, source, nelems, sig_addr, signal, sig_op, pe, false);
})
SHOAL_DAPI void shmem_putmem_signal_nbi(void *dest, const void *source, size_t nelems, uint64_t *sig_addr,
                                        uint64_t signal, int sig_op, int pe) SHOAL_DBODY({
  shoal_d_put_signal_thread(dest, source, nelems, sig_addr, signal, sig_op, pe, true);
})
SHOAL_DAPI uint64_t shmem_signal_fetch(const uint64_t *sig_addr) SHOAL_DBODY({
  return shoal_d_load_acquire(sig_addr);
})
SHOAL_DAPI uint64_t shmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t cmp_value) SHOAL_DBODY({
  return shoal_d_wait(sig_addr, cmp, cmp_value);
})

/* ---- AMOs (spec 9.7): standard types, extended (+ float, double: fetch, set, swap), bitwise ---- */
#define SHOAL_D_AMO_STD_TYPES(X)                                                                                      \
  X(int, int) X(long, long) X(long long, longlong) X(unsigned int, uint) X(unsigned long, ulong)                      \
  X(unsigned long long, ulonglong) X(int32_t, int32) X(int64_t, int64) X(uint32_t, uint32) X(uint64_t, uint64)       \
  X(size_t, size) X(ptrdiff_t, ptrdiff)
#define SHOAL_D_AMO_EXT_TYPES(X) SHOAL_D_AMO_STD_TYPES(X) X(float, float) X(double, double)
#define SHOAL_D_AMO_BIT_TYPES(X)                                                                                      \
  X(unsigned int, uint) X(unsigned long, ulong) X(unsigned long long, ulonglong) X(int32_t, int32) X(int64_t, int64) \
  X(uint32_t, uint32) X(uint64_t, uint64)

#define SHOAL_D_DEF_AMO_EXT(T, N)                                                                                     \
  SHOAL_DAPI T shmem_##N##_atomic_fetch(const T *source, int pe)                                                      \
      SHOAL_DBODY({ return shoal_d_amo((T *)source, SHOAL_D_FETCH, (T)0, (T)0, pe); })                                \
  SHOAL_DAPI void shmem_##N##_atomic_set(T *dest, T value, int pe)                                                    \
      SHOAL_DBODY({ shoal_d_amo_nf(dest, SHOAL_D_SET, value, pe); })                                                  \
  SHOAL_DAPI T shmem_##N##_atomic_swap(T *dest, T value, int pe)                                                      \
      SHOAL_DBODY({ return shoal_d_amo(dest, SHOAL_D_SWAP, value, (T)0, pe); })
#define SHOAL_D_DEF_AMO_STD(T, N)                                                                                     \
  SHOAL_DAPI T shmem_##N##_atomic_compare_swap(T *dest, T cond, T value, int pe)                                      \
      SHOAL_DBODY({ return shoal_d_amo(dest, SHOAL_D_CSWAP, value, cond, pe); })                                      \
  SHOAL_DAPI T shmem_##N##_atomic_fetch_add(T *dest, T value, int pe)                                                 \
      SHOAL_DBODY({ return shoal_d_amo(dest, SHOAL_D_ADD, value, (T)0, pe); })                                        \
  SHOAL_DAPI void shmem_##N##_atomic_add(T *dest, T value, int pe)                                                    \
      SHOAL_DBODY({ shoal_d_amo_nf(dest, SHOAL_D_ADD, value, pe); })                                                  \
  SHOAL_DAPI T shmem_##N##_atomic_fetch_inc(T *dest, int pe)                                                          \
      SHOAL_DBODY({ return shoal_d_amo(dest, SHOAL_D_ADD, (T)1, (T)0, pe); })                                         \
  SHOAL_DAPI void shmem_##N##_atomic_inc(T *dest, int pe)                                                             \
      SHOAL_DBODY({ shoal_d_amo_nf(dest, SHOAL_D_ADD, (T)1, pe); })
#define SHOAL_D_DEF_AMO_BIT(T, N)                                                                                     \
  SHOAL_DAPI T shmem_##N##_atomic_fetch_and(T *dest, T value, int pe)                                                 \
      SHOAL_DBODY({ return shoal_d_amo(dest, SHOAL_D_AND, value, (T)0, pe); })                                        \
  SHOAL_DAPI void shmem_##N##_atomic_and(T *dest, T value, int pe)                                                    \
      SHOAL_DBODY({ shoal_d_amo_nf(dest, SHOAL_D_AND, value, pe); })                                                  \
  SHOAL_DAPI T shmem_##N##_atomic_fetch_or(T *dest, T value, int pe)                                                  \
      SHOAL_DBODY({ return shoal_d_amo(dest, SHOAL_D_OR, value, (T)0, pe); })                                         \
  SHOAL_DAPI void shmem_##N##_atomic_or(T *dest, T value, int pe)                                                     \
      SHOAL_DBODY({ shoal_d_amo_nf(dest, SHOAL_D_OR, value, pe); })                                                   \
  SHOAL_DAPI T shmem_##N##_atomic_fetch_xor(T *dest, T value, int pe)                                                 \
      SHOAL_DBODY({ return shoal_d_amo(dest, SHOAL_D_XOR, value, (T)0, pe); })                                        \
  SHOAL_DAPI void shmem_##N##_atomic_xor(T *dest, T value, int pe)                                                    \
      SHOAL_DBODY({ shoal_d_amo_nf(dest, SHOAL_D_XOR, value, pe); })
#define SHOAL_D_DEF_AMO_EXT_NBI(T, N)                                                                                 \
  SHOAL_DAPI void shmem_##N##_atomic_fetch_nbi(T *fetch, const T *source, int pe)                                      \
      SHOAL_DBODY({ *fetch = shoal_d_amo((T *)source, SHOAL_D_FETCH, (T)0, (T)0, pe); })                              \
  SHOAL_DAPI void shmem_##N##_atomic_swap_nbi(T *fetch, T *dest, T value, int pe)                                      \
      SHOAL_DBODY({ *fetch = shoal_d_amo(dest, SHOAL_D_SWAP, value, (T)0, pe); })
#define SHOAL_D_DEF_AMO_STD_NBI(T, N)                                                                                 \
  SHOAL_DAPI void shmem_##N##_atomic_compare_swap_nbi(T *fetch, T *dest, T cond, T value, int pe)                      \
      SHOAL_DBODY({ *fetch = shoal_d_amo(dest, SHOAL_D_CSWAP, value, cond, pe); })                                    \
  SHOAL_DAPI void shmem_##N##_atomic_fetch_inc_nbi(T *fetch, T *dest, int pe)                                          \
      SHOAL_DBODY({ *fetch = shoal_d_amo(dest, SHOAL_D_ADD, (T)1, (T)0, pe); })                                       \
  SHOAL_DAPI void shmem_##N##_atomic_fetch_add_nbi(T *fetch, T *dest, T value, int pe)                                 \
      SHOAL_DBODY({ *fetch = shoal_d_amo(dest, SHOAL_D_ADD, value, (T)0, pe); })
#define SHOAL_D_DEF_AMO_BIT_NBI(T, N)                                                                                 \
  SHOAL_DAPI void shmem_##N##_atomic_fetch_and_nbi(T *fetch, T *dest, T value, int pe)                                 \
      SHOAL_DBODY({ *fetch = shoal_d_amo(dest, SHOAL_D_AND, value, (T)0, pe); })                                      \
  SHOAL_DAPI void shmem_##N##_atomic_fetch_or_nbi(T *fetch, T *dest, T value, int pe)                                  \
      SHOAL_DBODY({ *fetch = shoal_d_amo(dest, SHOAL_D_OR, value, (T)0, pe); })                                       \
  SHOAL_DAPI void shmem_##N##_atomic_fetch_xor_nbi(T *fetch, T *dest, T value, int pe)                                 \
      SHOAL_DBODY({ *fetch = shoal_d_amo(dest, SHOAL_D_XOR, value, (T)0, pe); })
SHOAL_D_AMO_EXT_TYPES(SHOAL_D_DEF_AMO_EXT)
SHOAL_D_AMO_EXT_TYPES(SHOAL_D_DEF_AMO_EXT_NBI)
SHOAL_D_AMO_STD_TYPES(SHOAL_D_DEF_AMO_STD_NBI)
SHOAL_D_AMO_BIT_TYPES(SHOAL_D_DEF_AMO_BIT_NBI)
SHOAL_D_AMO_STD_TYPES(SHOAL_D_DEF_AMO_STD)
SHOAL_D_AMO_BIT_TYPES(SHOAL_D_DEF_AMO_BIT)

/* ---- point-to-point synchronization (spec 9.10): ivars are this PE's symmetric variables ---- */
#define SHOAL_D_P2P_TYPES(X)                                                                                          \
  X(short, short) X(int, int) X(long, long) X(long long, longlong) X(unsigned short, ushort) X(unsigned int, uint)   \
  X(unsigned long, ulong) X(unsigned long long, ulonglong) X(int32_t, int32) X(int64_t, int64) X(uint32_t, uint32)   \
  X(uint64_t, uint64) X(size_t, size) X(ptrdiff_t, ptrdiff)
#define SHOAL_D_DEF_P2P(T, N)                                                                                         \
  SHOAL_DAPI void shmem_##N##_wait_until(T *ivar, int cmp, T cmp_value)                                               \
      SHOAL_DBODY({ shoal_d_wait(ivar, cmp, cmp_value); })                                                            \
  SHOAL_DAPI int shmem_##N##_test(T *ivar, int cmp, T cmp_value)                                                      \
      SHOAL_DBODY({ return shoal_d_cmp(shoal_d_load_acquire(ivar), cmp, cmp_value); })
SHOAL_D_P2P_TYPES(SHOAL_D_DEF_P2P)

/* ---- barriers over all PEs: every thread of every block of the kernel calls them (spec 9.9: barrier = quiet + sync)
 * With a PE on another node, shmem_sync_all also completes this PE's requests posted before it, as shmem_team_sync
 * does on such a team (shoal_d_team_barrier says why). ---- */
SHOAL_DAPI void shmem_barrier_all(void) SHOAL_DBODY({
  __threadfence_system(); /* quiet */
  shoal_d_grid_sync();
  if (shoal_d_tid() == 0 && blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0) shoal_d_pe_barrier();
  shoal_d_grid_sync();
})
SHOAL_DAPI void shmem_sync_all(void) SHOAL_DBODY({
  shoal_d_grid_sync();
  if (shoal_d_tid() == 0 && blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0) shoal_d_pe_barrier();
  shoal_d_grid_sync();
})
/* Barrier over all PEs by one block of each PE's kernel (the others do not take part). */
SHOAL_DX void shmemx_barrier_all_block(void) {
  __threadfence_system();
  __syncthreads();
  if (shoal_d_tid() == 0) shoal_d_pe_barrier();
  __syncthreads();
}

/* ---- barriers over a team (any team: SHMEM_TEAM_WORLD, SHMEM_TEAM_SHARED, split teams; NVSHMEM's nvshmem_team_sync,
 * nvshmemx_team_sync_block/_warp, nvshmem_barrier, nvshmemx_barrier_block/_warp) ----
 * Collective over team: on every member, the same scope calls it once per call, with the same team; members are
 * numbered as on the host. sync: no member returns before every member arrived; barrier: also every store and AMO
 * this PE's calling threads issued before it is complete and visible to every PE (quiet, then sync). On a team with
 * a member on another node a sync completes this PE's requests posted before its calling scope's leader reaches it
 * too (a p before it is seen after it, as on one node; shoal_d_team_barrier says why). The thread
 * forms are called by ONE thread of each member, _warp by every thread of one warp, _block by every thread of one
 * block. The members' calling kernels must run at the same time (one PE per GPU, or MPS). Per team, the calls of one
 * member must not overlap (one scope at a time). SHMEM_TEAM_INVALID or a destroyed team stops the kernel with one line
 * naming the routine and the team. Flags and count live in the team's slot, set up when the team is created. */
SHOAL_DAPI int shmem_team_sync(shmem_team_t team) SHOAL_DBODY({
  shoal_d_team_barrier(shoal_d_cteam_of(team, "shmem_team_sync"));
  return 0;
})
SHOAL_DX void shmemx_team_sync_warp(shmem_team_t team) {
  const shoal_d_cteam c = shoal_d_cteam_of(team, "shmemx_team_sync_warp");
  SHOAL_GPU_SYNCWARP();
  if (shoal_d_leader_warp()) shoal_d_team_barrier(c);
  SHOAL_GPU_SYNCWARP();
}
SHOAL_DX void shmemx_team_sync_block(shmem_team_t team) {
  const shoal_d_cteam c = shoal_d_cteam_of(team, "shmemx_team_sync_block");
  __syncthreads();
  if (shoal_d_leader_block()) shoal_d_team_barrier(c);
  __syncthreads();
}
SHOAL_DX void shmemx_barrier(shmem_team_t team) {
  const shoal_d_cteam c = shoal_d_cteam_of(team, "shmemx_barrier");
  __threadfence_system(); /* quiet */
  shoal_d_team_barrier(c, SHOAL_D_BAR_QUIET);
}
SHOAL_DX void shmemx_barrier_warp(shmem_team_t team) {
  const shoal_d_cteam c = shoal_d_cteam_of(team, "shmemx_barrier_warp");
  __threadfence_system();
  SHOAL_GPU_SYNCWARP();
  if (shoal_d_leader_warp()) shoal_d_team_barrier(c, SHOAL_D_BAR_QUIET);
  SHOAL_GPU_SYNCWARP();
}
SHOAL_DX void shmemx_barrier_block(shmem_team_t team) {
  const shoal_d_cteam c = shoal_d_cteam_of(team, "shmemx_barrier_block");
  __threadfence_system();
  __syncthreads();
  if (shoal_d_leader_block()) shoal_d_team_barrier(c, SHOAL_D_BAR_QUIET);
  __syncthreads();
}

#if defined(__NVCC__)
#pragma nv_diagnostic pop
#endif

#endif
