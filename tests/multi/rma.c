/* rma.c - every RMA routine of spec 9.5 on a ring (PE i writes to / reads from PE i+1): the 24 typed families (put,
 * get, p, g, iput, iget, put_nbi, get_nbi, each also with SHMEM_CTX_DEFAULT, and the C11 generic forms), put8..put128
 * and putmem/getmem (blocking, nbi, ctx, strided), into the symmetric heap and into static (global) variables. Every
 * element of the destination is checked, including the poisoned gaps of strided transfers and the element after the
 * end. Odd sizes and odd byte offsets; zero-length transfers with NULL pointers are no-ops. */
#include "test_common.h"

#define NMAX 1001                       /* elements */
#define BUF (64 * 1024)                 /* bytes per region: (3 * NMAX + 3) * 16 fits */
#define NREG 32                         /* destination regions: every form of one round writes its own */
#define BIG ((size_t)(1 << 20) + 3)     /* one large putmem/getmem */
#define DS 3                            /* dst stride of the strided forms (elements) */
#define SS 2                            /* source stride */

static const size_t sizes[] = {1, 37, NMAX};
/* Sizes tried: all, or 1 and 37 elements where some PE is reached over the network (every p/g a round trip; the
 * chunked paths get test_big's 1 MiB). The same on every PE: each has a peer it cannot map, or none has. */
static size_t NSIZES = sizeof sizes / sizeof sizes[0];

static int me, npes, left, right;
static unsigned char *h_dst, *h_src, *priv;            /* symmetric heap, and private memory (get targets) */
static _Alignas(64) unsigned char s_dst[NREG * BUF], s_src[BUF]; /* static data: symmetric too */

enum form {
  F_PUT, F_CTX_PUT, F_PUT_NBI, F_CTX_PUT_NBI, F_P, F_CTX_P, F_IPUT, F_CTX_IPUT,
  F_GEN_PUT, F_GEN_CTX_PUT, F_GEN_PUT_NBI, F_GEN_CTX_PUT_NBI, F_GEN_P, F_GEN_CTX_P, F_GEN_IPUT, F_GEN_CTX_IPUT,
  F_GET, /* gets from here on */
  F_CTX_GET, F_GET_NBI, F_CTX_GET_NBI, F_G, F_CTX_G, F_IGET, F_CTX_IGET,
  F_GEN_GET, F_GEN_CTX_GET, F_GEN_GET_NBI, F_GEN_CTX_GET_NBI, F_GEN_G, F_GEN_CTX_G, F_GEN_IGET, F_GEN_CTX_IGET,
  F_COUNT
};
_Static_assert(F_COUNT <= NREG, "a region per form");
static const char *form_name[F_COUNT] = {
  "put", "ctx_put", "put_nbi", "ctx_put_nbi", "p", "ctx_p", "iput", "ctx_iput",
  "generic put", "generic ctx put", "generic put_nbi", "generic ctx put_nbi", "generic p", "generic ctx p",
  "generic iput", "generic ctx iput",
  "get", "ctx_get", "get_nbi", "ctx_get_nbi", "g", "ctx_g", "iget", "ctx_iget",
  "generic get", "generic ctx get", "generic get_nbi", "generic ctx get_nbi", "generic g", "generic ctx g",
  "generic iget", "generic ctx iget"};
static int is_strided(int f) {
  return f == F_IPUT || f == F_CTX_IPUT || f == F_GEN_IPUT || f == F_GEN_CTX_IPUT || f == F_IGET || f == F_CTX_IGET ||
         f == F_GEN_IGET || f == F_GEN_CTX_IGET;
}

/* One typed family: every form, every size, heap and static destinations. Each form writes its own region, so one
 * round (poison, barrier, all forms, barrier, check) covers them all. */
#define DEF_TYPE_TEST(T, N)                                                                                           \
  static void test_##N(void) {                                                                                        \
    for (int sp = 0; sp < 2; sp++) {                                                                                  \
      T *src = (T *)(sp ? s_src : h_src);                                                                             \
      memset(src, 0, BUF);                                                                                            \
      for (size_t i = 0; i < BUF / sizeof(T); i++) src[i] = (T)test_pat(me, i, sizeof(T));                          \
      for (size_t si = 0; si < NSIZES; si++) {                                                                        \
        size_t n = sizes[si], span = DS * n + 3;                                                                      \
        for (int f = 0; f < F_COUNT; f++) {                                                                           \
          memset((sp ? s_dst : h_dst) + f * BUF, POISON, span * sizeof(T));                                           \
          memset(priv + f * BUF, POISON, span * sizeof(T));                                                           \
        }                                                                                                             \
        shmem_barrier_all(); /* nobody writes into a buffer before its owner poisoned it */                           \
        for (int f = 0; f < F_COUNT; f++) {                                                                           \
          T *dst = (T *)((sp ? s_dst : h_dst) + f * BUF), *loc = (T *)(priv + f * BUF);                               \
          switch (f) {                                                                                                \
          case F_PUT: shmem_##N##_put(dst, src, n, right); break;                                                     \
          case F_CTX_PUT: shmem_ctx_##N##_put(SHMEM_CTX_DEFAULT, dst, src, n, right); break;                          \
          case F_PUT_NBI: shmem_##N##_put_nbi(dst, src, n, right); shmem_quiet(); break;                              \
          case F_CTX_PUT_NBI:                                                                                         \
            shmem_ctx_##N##_put_nbi(SHMEM_CTX_DEFAULT, dst, src, n, right);                                           \
            shmem_ctx_quiet(SHMEM_CTX_DEFAULT);                                                                       \
            break;                                                                                                    \
          case F_P: for (size_t i = 0; i < n; i++) shmem_##N##_p(&dst[i], src[i], right); break;                      \
          case F_CTX_P:                                                                                               \
            for (size_t i = 0; i < n; i++) shmem_ctx_##N##_p(SHMEM_CTX_DEFAULT, &dst[i], src[i], right);              \
            break;                                                                                                    \
          case F_IPUT: shmem_##N##_iput(dst, src, DS, SS, n, right); break;                                           \
          case F_CTX_IPUT: shmem_ctx_##N##_iput(SHMEM_CTX_DEFAULT, dst, src, DS, SS, n, right); break;                \
          case F_GEN_PUT: shmem_put(dst, src, n, right); break;                                                       \
          case F_GEN_CTX_PUT: shmem_put(SHMEM_CTX_DEFAULT, dst, src, n, right); break;                                \
          case F_GEN_PUT_NBI: shmem_put_nbi(dst, src, n, right); shmem_quiet(); break;                                \
          case F_GEN_CTX_PUT_NBI: shmem_put_nbi(SHMEM_CTX_DEFAULT, dst, src, n, right); shmem_quiet(); break;         \
          case F_GEN_P: for (size_t i = 0; i < n; i++) shmem_p(&dst[i], src[i], right); break;                        \
          case F_GEN_CTX_P: for (size_t i = 0; i < n; i++) shmem_p(SHMEM_CTX_DEFAULT, &dst[i], src[i], right); break; \
          case F_GEN_IPUT: shmem_iput(dst, src, DS, SS, n, right); break;                                             \
          case F_GEN_CTX_IPUT: shmem_iput(SHMEM_CTX_DEFAULT, dst, src, DS, SS, n, right); break;                      \
          case F_GET: shmem_##N##_get(loc, src, n, right); break;                                                     \
          case F_CTX_GET: shmem_ctx_##N##_get(SHMEM_CTX_DEFAULT, loc, src, n, right); break;                          \
          case F_GET_NBI: shmem_##N##_get_nbi(loc, src, n, right); shmem_quiet(); break;                              \
          case F_CTX_GET_NBI:                                                                                         \
            shmem_ctx_##N##_get_nbi(SHMEM_CTX_DEFAULT, loc, src, n, right);                                           \
            shmem_ctx_quiet(SHMEM_CTX_DEFAULT);                                                                       \
            break;                                                                                                    \
          case F_G: for (size_t i = 0; i < n; i++) loc[i] = shmem_##N##_g(&src[i], right); break;                     \
          case F_CTX_G:                                                                                               \
            for (size_t i = 0; i < n; i++) loc[i] = shmem_ctx_##N##_g(SHMEM_CTX_DEFAULT, &src[i], right);             \
            break;                                                                                                    \
          case F_IGET: shmem_##N##_iget(loc, src, DS, SS, n, right); break;                                           \
          case F_CTX_IGET: shmem_ctx_##N##_iget(SHMEM_CTX_DEFAULT, loc, src, DS, SS, n, right); break;                \
          case F_GEN_GET: shmem_get(loc, src, n, right); break;                                                       \
          case F_GEN_CTX_GET: shmem_get(SHMEM_CTX_DEFAULT, loc, src, n, right); break;                                \
          case F_GEN_GET_NBI: shmem_get_nbi(loc, src, n, right); shmem_quiet(); break;                                \
          case F_GEN_CTX_GET_NBI: shmem_get_nbi(SHMEM_CTX_DEFAULT, loc, src, n, right); shmem_quiet(); break;         \
          case F_GEN_G: for (size_t i = 0; i < n; i++) loc[i] = shmem_g(&src[i], right); break;                       \
          case F_GEN_CTX_G: for (size_t i = 0; i < n; i++) loc[i] = shmem_g(SHMEM_CTX_DEFAULT, &src[i], right); break;\
          case F_GEN_IGET: shmem_iget(loc, src, DS, SS, n, right); break;                                             \
          case F_GEN_CTX_IGET: shmem_iget(SHMEM_CTX_DEFAULT, loc, src, DS, SS, n, right); break;                      \
          }                                                                                                           \
        }                                                                                                             \
        shmem_barrier_all(); /* every put has landed */                                                               \
        for (int f = 0; f < F_COUNT; f++) {                                                                           \
          const T *out = (const T *)(f >= F_GET ? priv + f * BUF : (sp ? s_dst : h_dst) + f * BUF);                   \
          int from = f >= F_GET ? right : left, st = is_strided(f);                                                   \
          for (size_t j = 0; j < (st ? span : n + 3); j++) {                                                          \
            if (st ? (j % DS == 0 && j / DS < n) : j < n) {                                                           \
              T want = (T)test_pat(from, st ? j / DS * SS : j, sizeof(T));                                            \
              CHECK(out[j] == want, "%s %s n=%zu (%s): element %zu differs", #N, form_name[f], n,                     \
                    sp ? "static" : "heap", j);                                                                       \
            } else {                                                                                                  \
              CHECK(all_poison(&out[j], sizeof(T)), "%s %s n=%zu (%s): element %zu written", #N, form_name[f], n,    \
                    sp ? "static" : "heap", j);                                                                       \
            }                                                                                                         \
          }                                                                                                           \
        }                                                                                                             \
      }                                                                                                               \
    }                                                                                                                 \
  }
SHOAL_RMA_TYPES(DEF_TYPE_TEST)

/* ---- sized (put8 .. put128) and byte (putmem) forms: checked byte by byte ---- */
typedef void (*rma_fn)(void *, const void *, size_t, int);
typedef void (*rma_ctx_fn)(shmem_ctx_t, void *, const void *, size_t, int);
typedef void (*rma_str_fn)(void *, const void *, ptrdiff_t, ptrdiff_t, size_t, int);
typedef void (*rma_ctx_str_fn)(shmem_ctx_t, void *, const void *, ptrdiff_t, ptrdiff_t, size_t, int);
typedef struct {
  const char *name;
  size_t es; /* element bytes */
  rma_fn put, put_nbi, get, get_nbi;
  rma_ctx_fn ctx_put, ctx_put_nbi, ctx_get, ctx_get_nbi;
  rma_str_fn iput, iget;
  rma_ctx_str_fn ctx_iput, ctx_iget;
} sized_t;
#define SIZED_ENTRY(S)                                                                                                \
  {"put" #S, S / 8, shmem_put##S, shmem_put##S##_nbi, shmem_get##S, shmem_get##S##_nbi, shmem_ctx_put##S,            \
   shmem_ctx_put##S##_nbi, shmem_ctx_get##S, shmem_ctx_get##S##_nbi, shmem_iput##S, shmem_iget##S, shmem_ctx_iput##S, \
   shmem_ctx_iget##S},
static const sized_t sized[] = {
  SHOAL_RMA_SIZES(SIZED_ENTRY)
  {"putmem", 1, shmem_putmem, shmem_putmem_nbi, shmem_getmem, shmem_getmem_nbi, shmem_ctx_putmem,
   shmem_ctx_putmem_nbi, shmem_ctx_getmem, shmem_ctx_getmem_nbi, NULL, NULL, NULL, NULL},
};
enum { S_PUT, S_PUT_NBI, S_CTX_PUT, S_CTX_PUT_NBI, S_IPUT, S_CTX_IPUT, S_GET, S_GET_NBI, S_CTX_GET, S_CTX_GET_NBI,
       S_IGET, S_CTX_IGET, S_COUNT };
static const char *sform_name[S_COUNT] = {"put", "put_nbi", "ctx put", "ctx put_nbi", "iput", "ctx iput",
                                          "get", "get_nbi", "ctx get", "ctx get_nbi", "iget", "ctx iget"};

static bool sized_strided(int f) { return f == S_IPUT || f == S_CTX_IPUT || f == S_IGET || f == S_CTX_IGET; }

/* One round for table entry z: n elements at byte offsets doff (dest) and soff (source), every form into its own
 * region; then every byte of each region [0, doff + span) is checked. */
static void sized_round(const sized_t *z, unsigned char *dstb, unsigned char *srcb, size_t n, size_t doff, size_t soff,
                        const char *where) {
  size_t es = z->es;
  for (int f = 0; f < S_COUNT; f++) {
    memset(dstb + f * BUF, POISON, BUF);
    memset(priv + f * BUF, POISON, BUF);
  }
  shmem_barrier_all();
  shmem_ctx_t c = SHMEM_CTX_DEFAULT;
  for (int f = 0; f < S_COUNT; f++) {
    if (sized_strided(f) && !z->iput) continue;
    void *d = (f >= S_GET ? priv : dstb) + f * BUF + doff;
    const void *s = srcb + soff;
    switch (f) {
    case S_PUT: z->put(d, s, n, right); break;
    case S_PUT_NBI: z->put_nbi(d, s, n, right); shmem_quiet(); break;
    case S_CTX_PUT: z->ctx_put(c, d, s, n, right); break;
    case S_CTX_PUT_NBI: z->ctx_put_nbi(c, d, s, n, right); shmem_ctx_quiet(c); break;
    case S_IPUT: z->iput(d, s, DS, SS, n, right); break;
    case S_CTX_IPUT: z->ctx_iput(c, d, s, DS, SS, n, right); break;
    case S_GET: z->get(d, s, n, right); break;
    case S_GET_NBI: z->get_nbi(d, s, n, right); shmem_quiet(); break;
    case S_CTX_GET: z->ctx_get(c, d, s, n, right); break;
    case S_CTX_GET_NBI: z->ctx_get_nbi(c, d, s, n, right); shmem_ctx_quiet(c); break;
    case S_IGET: z->iget(d, s, DS, SS, n, right); break;
    case S_CTX_IGET: z->ctx_iget(c, d, s, DS, SS, n, right); break;
    }
  }
  shmem_barrier_all();
  for (int f = 0; f < S_COUNT; f++) {
    bool get = f >= S_GET, st = sized_strided(f);
    if (st && !z->iput) continue;
    const unsigned char *out = (get ? priv : dstb) + f * BUF;
    size_t span = ((st ? DS * n : n) + 3) * es;
    int from = get ? right : left;
    long bad = 0, first = -1;
    for (size_t b = 0; b < doff + span; b++) {
      size_t r = b - doff, j = r / es, k = r % es;
      bool written = b >= doff && (st ? (j % DS == 0 && j / DS < n) : j < n);
      int want = written ? test_pat_byte(from, soff + (st ? j / DS * SS : j) * es + k, 7) : POISON;
      if (out[b] != want && !bad++) first = (long)b;
    }
    CHECK(!bad, "%s %s n=%zu doff=%zu soff=%zu (%s): %ld bytes differ, first at %ld", z->name, sform_name[f], n, doff,
          soff, where, bad, first);
  }
}

static void test_sized(void) {
  for (int sp = 0; sp < 2; sp++) {
    unsigned char *dstb = sp ? s_dst : h_dst, *srcb = sp ? s_src : h_src;
    for (size_t b = 0; b < BUF; b++) srcb[b] = test_pat_byte(me, b, 7);
    for (size_t zi = 0; zi < sizeof sized / sizeof *sized; zi++) {
      const sized_t *z = &sized[zi];
      for (size_t si = 0; si < NSIZES; si++) {
        size_t n = sizes[si];
        if ((DS * n + 3) * z->es + 8 > BUF) n = (BUF - 8) / z->es / DS - 3;
        sized_round(z, dstb, srcb, n, 0, 0, sp ? "static" : "heap");
        if (z->es == 1) sized_round(z, dstb, srcb, n, 1, 3, sp ? "static" : "heap"); /* odd addresses */
      }
    }
  }
}

/* One large transfer each way (1 MiB + 3 bytes, odd offsets). */
static void test_big(void) {
  unsigned char *d = shmem_malloc(BIG + 8), *s = shmem_malloc(BIG + 8), *p = malloc(BIG + 8);
  CHECK(d && s && p, "allocation of the big buffers failed");
  if (!d || !s || !p) return;
  for (size_t b = 0; b < BIG + 8; b++) s[b] = test_pat_byte(me, b, 9);
  memset(d, POISON, BIG + 8);
  memset(p, POISON, BIG + 8);
  shmem_barrier_all();
  shmem_putmem(d + 1, s + 3, BIG, right);
  shmem_getmem(p + 5, s + 1, BIG, right);
  shmem_barrier_all();
  long bad = 0;
  for (size_t b = 0; b < BIG + 8; b++) {
    bad += d[b] != (b >= 1 && b < BIG + 1 ? test_pat_byte(left, b - 1 + 3, 9) : POISON);
    bad += p[b] != (b >= 5 && b < BIG + 5 ? test_pat_byte(right, b - 5 + 1, 9) : POISON);
  }
  CHECK(!bad, "1 MiB putmem/getmem: %ld bytes differ", bad);
  shmem_free(d);
  shmem_free(s);
  free(p);
}

/* Zero elements: nothing happens, whatever the pointers (NULL included). */
#define ZERO_TYPED(T, N)                                                                                              \
  shmem_##N##_put(NULL, NULL, 0, right);                                                                              \
  shmem_##N##_get(NULL, NULL, 0, right);                                                                              \
  shmem_##N##_put_nbi(NULL, NULL, 0, right);                                                                          \
  shmem_##N##_get_nbi(NULL, NULL, 0, right);                                                                          \
  shmem_##N##_iput(NULL, NULL, 1, 1, 0, right);                                                                       \
  shmem_##N##_iget(NULL, NULL, 1, 1, 0, right);                                                                       \
  shmem_ctx_##N##_put(SHMEM_CTX_DEFAULT, NULL, NULL, 0, right);                                                       \
  shmem_ctx_##N##_get(SHMEM_CTX_DEFAULT, NULL, NULL, 0, right);                                                       \
  shmem_ctx_##N##_iput(SHMEM_CTX_DEFAULT, NULL, NULL, 1, 1, 0, right);                                                \
  shmem_ctx_##N##_iget(SHMEM_CTX_DEFAULT, NULL, NULL, 1, 1, 0, right);                                                \
  shmem_##N##_put((T *)h_dst, (T *)h_src, 0, right);                                                                  \
  shmem_##N##_get((T *)priv, (T *)h_src, 0, right);
#define ZERO_SIZED(S)                                                                                                 \
  shmem_put##S(NULL, NULL, 0, right);                                                                                 \
  shmem_get##S(NULL, NULL, 0, right);                                                                                 \
  shmem_put##S##_nbi(NULL, NULL, 0, right);                                                                           \
  shmem_get##S##_nbi(NULL, NULL, 0, right);                                                                           \
  shmem_iput##S(NULL, NULL, 1, 1, 0, right);                                                                          \
  shmem_iget##S(NULL, NULL, 1, 1, 0, right);                                                                          \
  shmem_ctx_put##S(SHMEM_CTX_DEFAULT, NULL, NULL, 0, right);
static void test_zero(void) {
  memset(h_dst, POISON, BUF);
  memset(priv, POISON, BUF);
  shmem_barrier_all();
  SHOAL_RMA_TYPES(ZERO_TYPED)
  SHOAL_RMA_SIZES(ZERO_SIZED)
  shmem_putmem(NULL, NULL, 0, right);
  shmem_getmem(NULL, NULL, 0, right);
  shmem_putmem_nbi(NULL, NULL, 0, right);
  shmem_getmem_nbi(NULL, NULL, 0, right);
  shmem_ctx_putmem(SHMEM_CTX_DEFAULT, NULL, NULL, 0, right);
  shmem_ctx_getmem(SHMEM_CTX_DEFAULT, NULL, NULL, 0, right);
  shmem_put((int *)NULL, (int *)NULL, 0, right);
  shmem_get((long *)NULL, (long *)NULL, 0, right);
  /* One pointer NULL or not symmetric, the other valid: still nothing (the length is tested after the pointers). */
  shmem_putmem(h_dst, NULL, 0, right);
  shmem_putmem(NULL, priv, 0, right);
  shmem_putmem(priv, h_src, 0, right);
  shmem_getmem(NULL, h_src, 0, right);
  shmem_getmem(priv, NULL, 0, right);
  shmem_getmem(priv, priv, 0, right);
  shmem_long_put_nbi((long *)h_dst, NULL, 0, right);
  shmem_long_get_nbi(NULL, (long *)h_src, 0, right);
  shmem_quiet();
  shmem_barrier_all();
  CHECK(all_poison(h_dst, BUF) && all_poison(priv, BUF), "a zero-length transfer wrote something");
}

int main(void) {
  test_name = "rma";
  shmem_init();
  me = shmem_my_pe();
  npes = shmem_n_pes();
  right = (me + 1) % npes;
  left = (me + npes - 1) % npes;
  h_dst = shmem_malloc(NREG * BUF);
  h_src = shmem_malloc(BUF);
  priv = malloc(NREG * BUF);
  if (!h_dst || !h_src || !priv) {
    fprintf(stderr, "rma: PE %d: allocation failed\n", me);
    shmem_global_exit(1);
  }
  CHECK(shmem_addr_accessible(s_dst, right) == 1, "static s_dst is not accessible on PE %d", right);
  for (int p = 0; p < npes; p++)
    if (!shmem_ptr(h_src, p)) NSIZES = 2;
#define CALL_TYPE_TEST(T, N) test_##N();
  SHOAL_RMA_TYPES(CALL_TYPE_TEST)
  test_zero();
  test_sized();
  test_big();
  shmem_free(h_dst);
  shmem_free(h_src);
  free(priv);
  return test_finish();
}
