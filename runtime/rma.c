/* rma.c - put/get in every typed, sized and byte form (spec 9.5). To a PE of this node a put is a copy into the
 * peer's heap mapping found with one add (shoal_xlate), and blocking and nbi forms both complete before returning.
 * A PE reached through the transport between nodes fails the inline range check (its heap_lim is 0) and goes
 * through the comm layer (comm.c): the nbi forms are then non-blocking, complete at quiet. */
#include "xlate.h"
#if defined(__x86_64__)
#include <emmintrin.h>
#endif
#include "amo.h" /* shoal_in_static */
#include "ctx.h" /* shoal_ctx_pe: team contexts take team PE numbers */
#include "comm.h"

/* PEs of other nodes, and spaces that cannot be addressed by load/store (GPU memory): their put/get, or fatal. */
static void put_slow(const char *routine, void *dest, const void *src, size_t n, int pe, bool nbi, void *tx) {
  if (!n) return; /* zero length: a valid no-op, even when dest is not symmetric */
  size_t off;
  shoal_space_t *s = shoal_space_find(dest, n, &off);
  if (!s) shoal_xlate_slow(dest, n, pe, routine, "dest"); /* fatal, with the reason */
  if (shoal_space_far(s, pe)) {
    shoal_comm_put(routine, tx, pe, s, off, dest, src, n, nbi); /* pe checked by the entry point, bounds by find */
    return;
  }
  if (s->delta && !s->device) {
    memcpy((char *)dest + s->delta[pe], src, n);
    return;
  }
  if (!s->put) shoal_fatal(routine, "dest %p: %s has no put path", dest, s->name);
  if (s->put(s, pe, off, src, n)) shoal_fatal(routine, "put of %zu bytes to PE %d failed", n, pe);
}

static void get_slow(const char *routine, void *dest, const void *src, size_t n, int pe, bool nbi, void *tx) {
  if (!n) return;
  size_t off;
  shoal_space_t *s = shoal_space_find(src, n, &off);
  if (!s) shoal_xlate_slow(src, n, pe, routine, "source");
  if (shoal_space_far(s, pe)) {
    shoal_comm_get(routine, tx, pe, s, off, src, dest, n, nbi);
    return;
  }
  if (s->delta && !s->device) {
    memcpy(dest, (const char *)src + s->delta[pe], n);
    return;
  }
  if (!s->get) shoal_fatal(routine, "source %p: %s has no get path", src, s->name);
  if (s->get(s, pe, off, dest, n)) shoal_fatal(routine, "get of %zu bytes from PE %d failed", n, pe);
}

/* [p, p + n) in the host heap, and pe's heap mapped here (heap_lim[pe] is 0 for a PE of another node). */
static inline bool in_host_heap(const void *p, size_t n, int pe) {
  uintptr_t off = (uintptr_t)p - (uintptr_t)shoal_g.heap_base;
  size_t lim = shoal_g.heap_lim[pe];
  return off < lim && n <= lim - off;
}

/* The local buffer is tested for NULL on the fast path in place of the length: one branch, as before. A zero length
 * (a valid no-op, even with NULL pointers) is caught here or in put_slow/get_slow, as a 0-byte copy where dest and
 * source are valid. */
static _Noreturn __attribute__((noinline, cold)) void rma_null(const char *routine, const char *arg, size_t n) {
  shoal_fatal(routine, "%s is NULL with %zu bytes to transfer", arg, n);
}
#define RMA_CHECK_LOCAL(routine, arg, buf, n)                                                                         \
  do {                                                                                                                 \
    if (SHOAL_UNLIKELY(!(buf))) {                                                                                      \
      if (!(n)) return;                                                                                                \
      rma_null(routine, arg, n);                                                                                       \
    }                                                                                                                  \
  } while (0)

/* nbi is a constant at every call, and tx (a context's endpoint between nodes, NULL for the default context) is
 * only passed on: both only reach the slow path. */
static inline __attribute__((always_inline)) void rma_put_(const char *routine, void *dest, const void *src,
                                                           size_t n, int pe, bool nbi, void *tx) {
  SHOAL_CHECK_INIT(routine);
  SHOAL_CHECK_PE(routine, pe);
  RMA_CHECK_LOCAL(routine, "source", src, n);
  if (SHOAL_LIKELY(in_host_heap(dest, n, pe)))
    memcpy((char *)dest + shoal_g.heap_delta[pe], src, n);
  else if (shoal_in_static_pe(dest, n, 1, pe))
    memcpy((char *)dest + shoal_g.space[SHOAL_SPACE_STATIC].delta[pe], src, n);
  else
    put_slow(routine, dest, src, n, pe, nbi, tx);
}

static inline __attribute__((always_inline)) void rma_get_(const char *routine, void *dest, const void *src,
                                                           size_t n, int pe, bool nbi, void *tx) {
  SHOAL_CHECK_INIT(routine);
  SHOAL_CHECK_PE(routine, pe);
  RMA_CHECK_LOCAL(routine, "dest", dest, n);
  if (SHOAL_LIKELY(in_host_heap(src, n, pe)))
    memcpy(dest, (const char *)src + shoal_g.heap_delta[pe], n);
  else if (shoal_in_static_pe(src, n, 1, pe))
    memcpy(dest, (const char *)src + shoal_g.space[SHOAL_SPACE_STATIC].delta[pe], n);
  else
    get_slow(routine, dest, src, n, pe, nbi, tx);
}
#define rma_put(routine, dest, src, n, pe) rma_put_(routine, dest, src, n, pe, false, NULL)
#define rma_get(routine, dest, src, n, pe) rma_get_(routine, dest, src, n, pe, false, NULL)
#define rma_put_nbi(routine, dest, src, n, pe) rma_put_(routine, dest, src, n, pe, true, NULL)
#define rma_get_nbi(routine, dest, src, n, pe) rma_get_(routine, dest, src, n, pe, true, NULL)
/* The shmem_ctx_ forms: the context's endpoint between nodes. */
#define rma_put_tx(tx, routine, dest, src, n, pe) rma_put_(routine, dest, src, n, pe, false, tx)
#define rma_get_tx(tx, routine, dest, src, n, pe) rma_get_(routine, dest, src, n, pe, false, tx)
#define rma_put_nbi_tx(tx, routine, dest, src, n, pe) rma_put_(routine, dest, src, n, pe, true, tx)
#define rma_get_nbi_tx(tx, routine, dest, src, n, pe) rma_get_(routine, dest, src, n, pe, true, tx)

void shoal_rma_put(const char *routine, void *dest, const void *src, size_t nbytes, int pe) {
  rma_put(routine, dest, src, nbytes, pe);
}
void shoal_rma_get(const char *routine, void *dest, const void *src, size_t nbytes, int pe) {
  rma_get(routine, dest, src, nbytes, pe);
}
void shoal_rma_put_nbi(const char *routine, void *dest, const void *src, size_t nbytes, int pe) {
  rma_put_nbi(routine, dest, src, nbytes, pe);
}
void shoal_rma_put_tx(const char *routine, void *tx, void *dest, const void *src, size_t nbytes, int pe, bool nbi) {
  rma_put_(routine, dest, src, nbytes, pe, nbi, tx);
}

static inline size_t nbytes_of(const char *routine, size_t nelems, size_t size) {
  if (SHOAL_UNLIKELY(nelems > SIZE_MAX / size))
    shoal_fatal(routine, "nelems %zu of %zu-byte elements overflows", nelems, size);
  return nelems * size;
}

/* Strided transfer: element i goes from src + i*sst*size to dest + i*dst*size (strides in elements, >= 1). */
static void rma_strided_(const char *routine, bool put, void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst,
                         size_t nelems, size_t size, int pe, void *tx) {
  SHOAL_CHECK_INIT(routine);
  SHOAL_CHECK_PE(routine, pe);
  if (!nelems) return;
  if (put ? !src : !dest)
    shoal_fatal(routine, "%s is NULL with %zu elements to transfer", put ? "source" : "dest", nelems);
  if (dst < 1) shoal_fatal(routine, "dst stride %td must be >= 1", dst);
  if (sst < 1) shoal_fatal(routine, "sst stride %td must be >= 1", sst);
  size_t span_d, span_s;
  if (__builtin_mul_overflow((size_t)dst, nelems - 1, &span_d) || __builtin_add_overflow(span_d, 1, &span_d) ||
      __builtin_mul_overflow(span_d, size, &span_d) || __builtin_mul_overflow((size_t)sst, nelems - 1, &span_s) ||
      __builtin_add_overflow(span_s, 1, &span_s) || __builtin_mul_overflow(span_s, size, &span_s))
    shoal_fatal(routine, "nelems %zu with strides %td/%td overflows", nelems, dst, sst);
  const void *sym = put ? dest : src;
  size_t span = put ? span_d : span_s;
  char *remote = shoal_xlate(sym, span, pe, routine, put ? "dest" : "source");
  if (!remote) { /* no load/store path: element by element through the space or the transport */
    for (size_t i = 0; i < nelems; i++) {
      char *d = (char *)dest + i * (size_t)dst * size;
      const char *s = (const char *)src + i * (size_t)sst * size;
      if (put)
        put_slow(routine, d, s, size, pe, false, tx);
      else
        get_slow(routine, d, s, size, pe, false, tx);
    }
    return;
  }
  if (put)
    shoal_copy_strided(remote, src, nelems, size, dst, sst);
  else
    shoal_copy_strided(dest, remote, nelems, size, dst, sst);
}

#define rma_strided(...) rma_strided_(__VA_ARGS__, NULL)
#define rma_strided_tx(tx, ...) rma_strided_(__VA_ARGS__, tx)

void shoal_copy_strided(void *dest, const void *src, size_t nelems, size_t size, ptrdiff_t dst, ptrdiff_t sst) {
  char *d = dest;
  const char *s = src;
  if (dst == 1 && sst == 1) {
    memcpy(d, s, nelems * size);
    return;
  }
  size_t ds = (size_t)dst * size, ss = (size_t)sst * size;
  switch (size) { /* fixed-size copies compile to single moves */
  case 1: for (size_t i = 0; i < nelems; i++) memcpy(d + i * ds, s + i * ss, 1); break;
  case 2: for (size_t i = 0; i < nelems; i++) memcpy(d + i * ds, s + i * ss, 2); break;
  case 4: for (size_t i = 0; i < nelems; i++) memcpy(d + i * ds, s + i * ss, 4); break;
  case 8: for (size_t i = 0; i < nelems; i++) memcpy(d + i * ds, s + i * ss, 8); break;
  case 16: for (size_t i = 0; i < nelems; i++) memcpy(d + i * ds, s + i * ss, 16); break;
  default: for (size_t i = 0; i < nelems; i++) memcpy(d + i * ds, s + i * ss, size); break;
  }
}

/* ---- byte forms ---- */
#define SHOAL_DEF_MEM(OP, FN)                                                                                         \
  void shmem_##OP(void *dest, const void *source, size_t nelems, int pe) {                                            \
    FN("shmem_" #OP, dest, source, nelems, pe);                                                                       \
  }                                                                                                                    \
  void shmem_ctx_##OP(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe) {                       \
    SHOAL_CHECK_CTX("shmem_ctx_" #OP, ctx);                                                                           \
    FN##_tx(ctx->tl, "shmem_ctx_" #OP, dest, source, nelems, shoal_ctx_pe("shmem_ctx_" #OP, ctx, pe));                                                                   \
  }
SHOAL_DEF_MEM(putmem, rma_put)
SHOAL_DEF_MEM(putmem_nbi, rma_put_nbi)
SHOAL_DEF_MEM(getmem, rma_get)
SHOAL_DEF_MEM(getmem_nbi, rma_get_nbi)

/* ---- sized forms: put8 .. put128 (sizes in bits) ---- */
#define SHOAL_DEF_SIZED_OP(S, OP, FN)                                                                                 \
  void shmem_##OP##S(void *dest, const void *source, size_t nelems, int pe) {                                         \
    FN("shmem_" #OP #S, dest, source, nbytes_of("shmem_" #OP #S, nelems, S / 8), pe);                                 \
  }                                                                                                                    \
  void shmem_ctx_##OP##S(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe) {                    \
    SHOAL_CHECK_CTX("shmem_ctx_" #OP #S, ctx);                                                                        \
    FN##_tx(ctx->tl, "shmem_ctx_" #OP #S, dest, source, nbytes_of("shmem_ctx_" #OP #S, nelems, S / 8), shoal_ctx_pe("shmem_ctx_" #OP #S, ctx, pe));                         \
  }                                                                                                                    \
  void shmem_##OP##S##_nbi(void *dest, const void *source, size_t nelems, int pe) {                                   \
    FN##_nbi("shmem_" #OP #S "_nbi", dest, source, nbytes_of("shmem_" #OP #S "_nbi", nelems, S / 8), pe);                   \
  }                                                                                                                    \
  void shmem_ctx_##OP##S##_nbi(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe) {              \
    SHOAL_CHECK_CTX("shmem_ctx_" #OP #S "_nbi", ctx);                                                                 \
    FN##_nbi_tx(ctx->tl, "shmem_ctx_" #OP #S "_nbi", dest, source, nbytes_of("shmem_ctx_" #OP #S "_nbi", nelems, S / 8), shoal_ctx_pe("shmem_ctx_" #OP #S "_nbi", ctx, pe));           \
  }
#define SHOAL_DEF_SIZED(S)                                                                                            \
  SHOAL_DEF_SIZED_OP(S, put, rma_put)                                                                                 \
  SHOAL_DEF_SIZED_OP(S, get, rma_get)                                                                                 \
  void shmem_iput##S(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe) {           \
    rma_strided("shmem_iput" #S, true, dest, source, dst, sst, nelems, S / 8, pe);                                    \
  }                                                                                                                    \
  void shmem_ctx_iput##S(shmem_ctx_t ctx, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,               \
                         size_t nelems, int pe) {                                                                     \
    SHOAL_CHECK_CTX("shmem_ctx_iput" #S, ctx);                                                                        \
    rma_strided_tx(ctx->tl, "shmem_ctx_iput" #S, true, dest, source, dst, sst, nelems, S / 8, shoal_ctx_pe("shmem_ctx_iput" #S, ctx, pe));                                \
  }                                                                                                                    \
  void shmem_iget##S(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe) {           \
    rma_strided("shmem_iget" #S, false, dest, source, dst, sst, nelems, S / 8, pe);                                   \
  }                                                                                                                    \
  void shmem_ctx_iget##S(shmem_ctx_t ctx, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,               \
                         size_t nelems, int pe) {                                                                     \
    SHOAL_CHECK_CTX("shmem_ctx_iget" #S, ctx);                                                                        \
    rma_strided_tx(ctx->tl, "shmem_ctx_iget" #S, false, dest, source, dst, sst, nelems, S / 8, shoal_ctx_pe("shmem_ctx_iget" #S, ctx, pe));                               \
  }
SHOAL_RMA_SIZES(SHOAL_DEF_SIZED)

/* ---- typed forms ---- */
#define SHOAL_DEF_TYPED_OP(T, N, OP, FN)                                                                              \
  void shmem_##N##_##OP(T *dest, const T *source, size_t nelems, int pe) {                                            \
    FN("shmem_" #N "_" #OP, dest, source, nbytes_of("shmem_" #N "_" #OP, nelems, sizeof(T)), pe);                     \
  }                                                                                                                    \
  void shmem_ctx_##N##_##OP(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems, int pe) {                       \
    SHOAL_CHECK_CTX("shmem_ctx_" #N "_" #OP, ctx);                                                                    \
    FN##_tx(ctx->tl, "shmem_ctx_" #N "_" #OP, dest, source, nbytes_of("shmem_ctx_" #N "_" #OP, nelems, sizeof(T)), shoal_ctx_pe("shmem_ctx_" #N "_" #OP, ctx, pe));             \
  }
#define SHOAL_DEF_TYPED(T, N)                                                                                         \
  SHOAL_DEF_TYPED_OP(T, N, put, rma_put)                                                                              \
  SHOAL_DEF_TYPED_OP(T, N, put_nbi, rma_put_nbi)                                                                      \
  SHOAL_DEF_TYPED_OP(T, N, get, rma_get)                                                                              \
  SHOAL_DEF_TYPED_OP(T, N, get_nbi, rma_get_nbi)                                                                      \
  void shmem_##N##_p(T *dest, T value, int pe) { rma_put("shmem_" #N "_p", dest, &value, sizeof(T), pe); }            \
  void shmem_ctx_##N##_p(shmem_ctx_t ctx, T *dest, T value, int pe) {                                                 \
    SHOAL_CHECK_CTX("shmem_ctx_" #N "_p", ctx);                                                                       \
    rma_put_tx(ctx->tl, "shmem_ctx_" #N "_p", dest, &value, sizeof(T), shoal_ctx_pe("shmem_ctx_" #N "_p", ctx, pe));                                                       \
  }                                                                                                                    \
  T shmem_##N##_g(const T *source, int pe) {                                                                          \
    T v;                                                                                                               \
    rma_get("shmem_" #N "_g", &v, source, sizeof(T), pe);                                                             \
    return v;                                                                                                          \
  }                                                                                                                    \
  T shmem_ctx_##N##_g(shmem_ctx_t ctx, const T *source, int pe) {                                                     \
    T v;                                                                                                               \
    SHOAL_CHECK_CTX("shmem_ctx_" #N "_g", ctx);                                                                       \
    rma_get_tx(ctx->tl, "shmem_ctx_" #N "_g", &v, source, sizeof(T), shoal_ctx_pe("shmem_ctx_" #N "_g", ctx, pe));                                                         \
    return v;                                                                                                          \
  }                                                                                                                    \
  void shmem_##N##_iput(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe) {              \
    rma_strided("shmem_" #N "_iput", true, dest, source, dst, sst, nelems, sizeof(T), pe);                            \
  }                                                                                                                    \
  void shmem_ctx_##N##_iput(shmem_ctx_t ctx, T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,   \
                            int pe) {                                                                                 \
    SHOAL_CHECK_CTX("shmem_ctx_" #N "_iput", ctx);                                                                    \
    rma_strided_tx(ctx->tl, "shmem_ctx_" #N "_iput", true, dest, source, dst, sst, nelems, sizeof(T), shoal_ctx_pe("shmem_ctx_" #N "_iput", ctx, pe));                        \
  }                                                                                                                    \
  void shmem_##N##_iget(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe) {              \
    rma_strided("shmem_" #N "_iget", false, dest, source, dst, sst, nelems, sizeof(T), pe);                           \
  }                                                                                                                    \
  void shmem_ctx_##N##_iget(shmem_ctx_t ctx, T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,   \
                            int pe) {                                                                                 \
    SHOAL_CHECK_CTX("shmem_ctx_" #N "_iget", ctx);                                                                    \
    rma_strided_tx(ctx->tl, "shmem_ctx_" #N "_iget", false, dest, source, dst, sst, nelems, sizeof(T), shoal_ctx_pe("shmem_ctx_" #N "_iget", ctx, pe));                       \
  }
SHOAL_RMA_TYPES(SHOAL_DEF_TYPED)

void shoal_copy_stream(void *dest, const void *src, size_t n) {
#if defined(__x86_64__)
  char *d = dest;
  const char *s = src;
  size_t head = (16 - ((uintptr_t)d & 15)) & 15; /* stores need 16-byte alignment; loads may be unaligned */
  if (head > n) head = n;
  memcpy(d, s, head);
  d += head, s += head, n -= head;
  for (; n >= 64; n -= 64, d += 64, s += 64) {
    __m128i a = _mm_loadu_si128((const __m128i *)s), b = _mm_loadu_si128((const __m128i *)(s + 16));
    __m128i c = _mm_loadu_si128((const __m128i *)(s + 32)), e = _mm_loadu_si128((const __m128i *)(s + 48));
    _mm_stream_si128((__m128i *)d, a);
    _mm_stream_si128((__m128i *)(d + 16), b);
    _mm_stream_si128((__m128i *)(d + 32), c);
    _mm_stream_si128((__m128i *)(d + 48), e);
  }
  memcpy(d, s, n);
  _mm_sfence();
#else
  memcpy(dest, src, n);
#endif
}
