/*
 * shoal/detail/gpu_port.cuh - NOT ABI: may change in any release, with no notice; programs include
 * <shoal/shmem_device.cuh> or <shoal/shmem_coll_device.cuh>, never this file.
 *
 * The vendor differences of all of Shoal's GPU code, written once, so that one source builds with nvcc (CUDA) and with
 * hipcc (HIP, AMD): the device API (<shoal/shmem_device.cuh>), the collective kernels (coll_gpu_kernels.cuh,
 * coll_gpu_reduce.cuh) and their launchers, libshoal's own kernels (device/gpu_kernels.cu).
 *   Host runtime names: SHOAL_GPU_API(Malloc) is cudaMalloc or hipMalloc, and so on for every name the two runtimes
 *   share after their prefix; the few others have a macro each (SHOAL_GPU_MEMCPY_TO_SYMBOL, SHOAL_GPU_ATTR_SM_COUNT,
 *   SHOAL_GPU_HOST_ALLOC / _FREE, SHOAL_GPU_VENDOR).
 *   Device side (shoal_port::): release stores, acquire loads and relaxed stores at system and device scope, a release
 *   add, the one-exchange record, a nanosecond clock, a short sleep; SHOAL_GPU_SYNCWARP, SHOAL_GPU_TRAP; dynamic
 *   shared memory; and the one address translation (shoal_port::peer), for the device API's dest + delta and the
 *   collectives' base + offset alike. No warp size is assumed anywhere.
 *
 * A third target, SHOAL_COLL_GPU_EMULATE, compiles the same kernels as plain C++ for a CPU emulation in which one
 * process is one PE and runs its blocks one after the other, a block's threads being threads (tests/gpu/coll/
 * coll_gpu_emu.cpp: the kernels' indexing and completion protocol checked without a GPU, in CI).
 */
#ifndef SHOAL_DETAIL_GPU_PORT_CUH
#define SHOAL_DETAIL_GPU_PORT_CUH

#if defined(SHOAL_COLL_GPU_EMULATE)
#include <sched.h>
#include <unistd.h>
#include <stdint.h>
#include <time.h>
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#define __launch_bounds__(...)
#define __shared__ static /* one block at a time per process (= per PE) */
struct shoal_emu_dim { unsigned x, y, z; };
extern thread_local shoal_emu_dim threadIdx, blockIdx;
extern shoal_emu_dim blockDim, gridDim;
struct alignas(16) uint4 { unsigned x, y, z, w; };
void __syncthreads(void);
inline void __threadfence_system(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline unsigned atomicAdd(unsigned *p, unsigned v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
inline unsigned atomicExch(unsigned *p, unsigned v) { return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST); }
extern char *shoal_emu_dyn_shared; /* the launch's dynamic shared memory */
extern unsigned shoal_emu_ll_lag_us; /* the test's lag of thread 0 between a one-exchange call's writes and reads */
#define SHOAL_DYN_SHARED(type, name) type *name = (type *)shoal_emu_dyn_shared
namespace shoal_port {
inline void st_release_sys(unsigned long long *p, unsigned long long v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
inline unsigned long long ld_acquire_sys(const unsigned long long *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
inline void st_release_gpu(unsigned long long *p, unsigned long long v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
inline unsigned long long ld_acquire_gpu(const unsigned long long *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
inline void st_relaxed_sys(unsigned long long *p, unsigned long long v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
inline void st_relaxed_gpu(unsigned long long *p, unsigned long long v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
inline unsigned long long clock_ns() {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
}
inline void pause() { sched_yield(); }
inline void st_rec(unsigned long long *p, unsigned long long a, unsigned long long b) {
  __atomic_store_n(p, a, __ATOMIC_RELAXED);
  __atomic_store_n(p + 1, b, __ATOMIC_RELAXED);
}
inline void ld_rec(const unsigned long long *p, unsigned long long &a, unsigned long long &b) {
  a = __atomic_load_n(p, __ATOMIC_RELAXED);
  b = __atomic_load_n(p + 1, __ATOMIC_RELAXED);
}
} // namespace shoal_port
#else
#define SHOAL_DYN_SHARED(type, name) extern __shared__ type name[]
#endif

#if defined(SHOAL_COLL_GPU_EMULATE)
#elif defined(__HIPCC__) || defined(__HIP_PLATFORM_AMD__)
#include <hip/hip_runtime.h>
#define SHOAL_GPU_API(name) hip##name
#define SHOAL_GPU_ATTR_SM_COUNT hipDeviceAttributeMultiprocessorCount
#define SHOAL_GPU_VENDOR "hip"
#define SHOAL_GPU_HOST_ALLOC(p, n) hipHostMalloc(p, n, 0) /* pinned host memory */
#define SHOAL_GPU_HOST_FREE(p) hipHostFree(p)
#define SHOAL_GPU_MEMCPY_TO_SYMBOL(sym, src, n) hipMemcpyToSymbol(HIP_SYMBOL(sym), src, n, 0, hipMemcpyHostToDevice)
#define SHOAL_GPU_SYNCWARP() __builtin_amdgcn_wave_barrier()
#define SHOAL_GPU_TRAP() __builtin_trap()
#else
#include <cuda_runtime.h>
#define SHOAL_GPU_API(name) cuda##name
#define SHOAL_GPU_ATTR_SM_COUNT cudaDevAttrMultiProcessorCount
#define SHOAL_GPU_VENDOR "cuda"
#define SHOAL_GPU_HOST_ALLOC(p, n) cudaMallocHost(p, n)
#define SHOAL_GPU_HOST_FREE(p) cudaFreeHost(p)
#define SHOAL_GPU_MEMCPY_TO_SYMBOL(sym, src, n) cudaMemcpyToSymbol(sym, src, n, 0, cudaMemcpyHostToDevice)
#define SHOAL_GPU_SYNCWARP() __syncwarp()
#define SHOAL_GPU_TRAP() __trap()
#endif

#if defined(__CUDACC__) || defined(__HIPCC__)
namespace shoal_port {

/* Store v to *p with release semantics at system scope: every store this thread made (or observed, e.g. through a
 * preceding __threadfence_system and a barrier) is visible to a thread anywhere that acquires *p and sees v. */
__device__ __forceinline__ void st_release_sys(unsigned long long *p, unsigned long long v) {
#if defined(__HIP_DEVICE_COMPILE__)
  __hip_atomic_store(p, v, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_SYSTEM);
#elif defined(__CUDA_ARCH__)
  asm volatile("st.release.sys.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
#else
  (void)p, (void)v;
#endif
}

/* Load *p with acquire semantics at system scope. */
__device__ __forceinline__ unsigned long long ld_acquire_sys(const unsigned long long *p) {
#if defined(__HIP_DEVICE_COMPILE__)
  return __hip_atomic_load(p, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_SYSTEM);
#elif defined(__CUDA_ARCH__)
  unsigned long long v;
  asm volatile("ld.acquire.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
#else
  (void)p;
  return 0;
#endif
}
/* The same for a 4-byte word (the device API's waits and fetches on 4-byte types). */
__device__ __forceinline__ unsigned ld_acquire_sys(const unsigned *p) {
#if defined(__HIP_DEVICE_COMPILE__)
  return __hip_atomic_load(p, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_SYSTEM);
#elif defined(__CUDA_ARCH__)
  unsigned v;
  asm volatile("ld.acquire.sys.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
#else
  (void)p;
  return 0;
#endif
}

/* Add v to *p with release semantics at system scope, no value returned (the device API's signal add: the data before
 * the signal, no full fence). */
__device__ __forceinline__ void add_release_sys(unsigned long long *p, unsigned long long v) {
#if defined(__HIP_DEVICE_COMPILE__)
  __hip_atomic_fetch_add(p, v, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_SYSTEM);
#elif defined(__CUDA_ARCH__)
  asm volatile("red.release.sys.add.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
#else
  (void)p, (void)v;
#endif
}

/* The same at device scope: enough when the flag's writer and reader run on one GPU (PEs sharing it, e.g. under MPS:
 * one device, one L2, whatever the process). */
__device__ __forceinline__ void st_release_gpu(unsigned long long *p, unsigned long long v) {
#if defined(__HIP_DEVICE_COMPILE__)
  __hip_atomic_store(p, v, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_AGENT);
#elif defined(__CUDA_ARCH__)
  asm volatile("st.release.gpu.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
#else
  (void)p, (void)v;
#endif
}
__device__ __forceinline__ unsigned long long ld_acquire_gpu(const unsigned long long *p) {
#if defined(__HIP_DEVICE_COMPILE__)
  return __hip_atomic_load(p, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_AGENT);
#elif defined(__CUDA_ARCH__)
  unsigned long long v;
  asm volatile("ld.acquire.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
#else
  (void)p;
  return 0;
#endif
}

/* Relaxed stores at system / device scope: after a fence by the same thread they publish what the fence ordered (the
 * PTX release pattern), so one fence serves several flags. */
__device__ __forceinline__ void st_relaxed_sys(unsigned long long *p, unsigned long long v) {
#if defined(__HIP_DEVICE_COMPILE__)
  __hip_atomic_store(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);
#elif defined(__CUDA_ARCH__)
  asm volatile("st.relaxed.sys.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
#else
  (void)p, (void)v;
#endif
}
__device__ __forceinline__ void st_relaxed_gpu(unsigned long long *p, unsigned long long v) {
#if defined(__HIP_DEVICE_COMPILE__)
  __hip_atomic_store(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
#elif defined(__CUDA_ARCH__)
  asm volatile("st.relaxed.gpu.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
#else
  (void)p, (void)v;
#endif
}

/* A one-exchange record (coll_gpu_reduce.h): two 8-byte words, each carrying its own tag, stored and loaded as one
 * 16-byte access where the ISA has it. Each word is single-copy atomic; the pair need not be (the reader checks both
 * tags). Volatile (relaxed, system scope, no L1 on the reader's side): the tag in the word orders its data. */
__device__ __forceinline__ void st_rec(unsigned long long *p, unsigned long long a, unsigned long long b) {
#if defined(__HIP_DEVICE_COMPILE__)
  __hip_atomic_store(p, a, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);
  __hip_atomic_store(p + 1, b, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);
#elif defined(__CUDA_ARCH__)
  asm volatile("st.volatile.global.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(a), "l"(b) : "memory");
#else
  (void)p, (void)a, (void)b;
#endif
}
__device__ __forceinline__ void ld_rec(const unsigned long long *p, unsigned long long &a, unsigned long long &b) {
#if defined(__HIP_DEVICE_COMPILE__)
  a = __hip_atomic_load(p, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);
  b = __hip_atomic_load(p + 1, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);
#elif defined(__CUDA_ARCH__)
  asm volatile("ld.volatile.global.v2.u64 {%0, %1}, [%2];" : "=l"(a), "=l"(b) : "l"(p) : "memory");
#else
  (void)p;
  a = b = 0;
#endif
}

/* Nanoseconds from a clock that all multiprocessors share. */
__device__ __forceinline__ unsigned long long clock_ns() {
#if defined(__HIP_DEVICE_COMPILE__)
  return __builtin_amdgcn_s_memrealtime() * 10ull; /* 100 MHz on gfx9 */
#elif defined(__CUDA_ARCH__)
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
#else
  return 0;
#endif
}

/* Back off briefly while polling a flag. */
__device__ __forceinline__ void pause() {
#if defined(__HIP_DEVICE_COMPILE__)
  __builtin_amdgcn_s_sleep(2);
#elif defined(__CUDA_ARCH__)
  __nanosleep(64);
#endif
}

} // namespace shoal_port
#endif

/* The one address translation of the GPU code: base plus a byte distance, as a T *. The device API's symmetric address
 * on a PE is dest + delta[pe] (that PE's heap as mapped here, less this PE's heap base); the collectives' is
 * peer_base[pe] + an offset in the heap. Both are this one add: one helper, so that the two cannot drift apart (no
 * check here: the callers check what they must, once). A macro, because the device API's copy loops around a call
 * of even a forced-inline function were scheduled differently by nvcc 13 (k_put: 8 more SASS instructions); the
 * expression itself is the add written out, the same code. shoal_port::peer: the same, typed from base. */
#define SHOAL_GPU_PEER(T, base, off) ((T *)((char *)(base) + (off)))
namespace shoal_port {
template <typename T, typename O> __host__ __device__ __forceinline__ T *peer(const T *base, O off) {
  return SHOAL_GPU_PEER(T, base, off);
}
} // namespace shoal_port
#endif
