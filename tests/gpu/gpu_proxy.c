/* gpu_proxy.c - the device proxy (runtime/proxy.c, issue 31) without a GPU: host threads stand in for the kernel and
 * post through the producer code kernels run (include/shoal/detail/proxy_queue.h); the PE's proxy thread serves them
 * through the host paths. Checked: puts and gets of odd sizes (and past the 1 MiB bounce buffer), p/g of 1-8 bytes,
 * every AMO op at 4 and 8 bytes, concurrent fetch-adds from several producers (distinct old values, exact total),
 * put_signal seen by a wait on the target, fence ordering, quiet completion, back-pressure (a queue of 8 entries, 4
 * producers), and bad requests (pe out of range, a non-symmetric address, an unknown op, a corrupted slot: one line,
 * exit status 1).
 *   gpu_proxy host    targets on the host symmetric heap (any layout: SHOAL_NODE_PES=1 over ofi puts every peer on
 *                     another node, the proxy's case)
 *   gpu_proxy device  targets on the device heap of the fake GPU, local buffers on it too (staging); over several
 *                     nodes (SHOAL_NODE_PES=1) the proxy must have been started by shmem_init and named in the
 *                     device state (skipped, exit 77, where the device heap does not span the nodes)
 *   gpu_proxy bad_pe | bad_addr | bad_op | bad_seq   PE 0 posts one bad request */
#include "heap_gpu.h"
#include "proxy.h"
#include "gpu_fake_backend.h"

#include <pthread.h>

static int fails, me, npes;

static shoal_proxy_queue_t *Q;
static bool device_mode;
static uint64_t posted; /* atomic: requests posted (the proxy's served count must match) */

/* One request through the shared producer code; the answer's value for SHOAL_PROXY_F_WAIT. */
static uint64_t req(int op, int aop, int flags, int pe, const void *target, const void *local, uint64_t bytes,
                    uint64_t value, uint64_t cmp) {
  shoal_proxy_entry_t e = {.op = (uint8_t)op, .aop = (uint8_t)aop, .flags = (uint8_t)flags, .pe = pe,
                           .target = (uintptr_t)target, .local = (uintptr_t)local, .bytes = bytes, .value = value,
                           .cmp = cmp};
  __atomic_fetch_add(&posted, 1, __ATOMIC_RELAXED);
  return shoal_proxy_call(Q, &e);
}
static void put_signal(int pe, void *dest, const void *src, size_t n, uint64_t *sig, uint64_t v, int sig_op, int fl) {
  shoal_proxy_entry_t e = {.op = SHOAL_PROXY_PUT_SIGNAL, .sig_op = (uint8_t)sig_op, .flags = (uint8_t)fl, .pe = pe,
                           .target = (uintptr_t)dest, .local = (uintptr_t)src, .bytes = n, .value = v,
                           .sig = (uintptr_t)sig};
  __atomic_fetch_add(&posted, 1, __ATOMIC_RELAXED);
  shoal_proxy_call(Q, &e);
}
static void quiet(void) { req(SHOAL_PROXY_QUIET, 0, SHOAL_PROXY_F_WAIT, 0, NULL, NULL, 0, 0, 0); }
static void fence(void) { req(SHOAL_PROXY_FENCE, 0, 0, 0, NULL, NULL, 0, 0, 0); }

/* Symmetric memory of the mode: the device heap (fake GPU) or the host heap. */
static void *sym_alloc(size_t n) {
  void *p = device_mode ? shmem_malloc_with_hints(n, SHMEMX_MALLOC_DEVICE) : shmem_malloc(n);
  if (!p) {
    fprintf(stderr, "PE %d: cannot allocate %zu symmetric bytes\n", me, n);
    exit(2);
  }
  return p;
}
static uint64_t load64(const uint64_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }

/* ---- concurrent producers ---- */
#define NT 4
#define K 200
static uint64_t *ctr, *ctr_nf; /* symmetric: fetch-add counter, non-fetching add counter */
static uint64_t olds[NT][K];
static void *producer(void *arg) {
  const int t = (int)(intptr_t)arg, to = (me + 1) % npes;
  for (int i = 0; i < K; i++) {
    olds[t][i] = req(SHOAL_PROXY_AMO, SHOAL_PROXY_AMO_ADD, SHOAL_PROXY_F_WAIT, to, ctr, NULL, 8, 1, 0);
    req(SHOAL_PROXY_AMO, SHOAL_PROXY_AMO_ADD, 0, to, ctr_nf, NULL, 8, 3, 0); /* no wait: producers run ahead */
  }
  return NULL;
}
static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static void bad(const char *mode) {
  if (me == 0) {
    char priv[8];
    if (!strcmp(mode, "bad_pe")) req(SHOAL_PROXY_P, 0, 0, npes, ctr, NULL, 8, 1, 0);
    if (!strcmp(mode, "bad_addr")) req(SHOAL_PROXY_PUT, 0, 0, npes - 1, priv, priv, 8, 0, 0);
    if (!strcmp(mode, "bad_op")) req(77, 0, 0, npes - 1, ctr, NULL, 8, 0, 0);
    if (!strcmp(mode, "bad_inline")) req(SHOAL_PROXY_PUT, 0, SHOAL_PROXY_F_INLINE, npes - 1, ctr, ctr, 9, 0, 0);
    if (!strcmp(mode, "bad_seq")) { /* the next slot overwritten (ring: the producer's address is the host's here) */
      shoal_proxy_entry_t *s = Q->ring + (Q->tail & Q->mask);
      __atomic_store_n(&s->seq, 12345, __ATOMIC_RELEASE);
    }
    quiet();
    fprintf(stderr, "gpu_proxy: mode %s was not refused\n", mode);
    exit(1);
  }
  shmem_barrier_all(); /* PE 0's line ends the job first */
  exit(1);
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "host";
  device_mode = !strcmp(mode, "device");
  if (!strcmp(mode, "backpressure")) setenv("SHOAL_PROXY_QUEUE_ENTRIES", "8", 1);
  if (device_mode) {
    setenv("SHOAL_DEVICE_SYMMETRIC_SIZE", "16M", 1);
    shoal_gpu_test_backend = &fake;
  }
  shmem_init();
  me = shmem_my_pe();
  npes = shmem_n_pes();
  const int next = (me + 1) % npes, prev = (me + npes - 1) % npes;
  if (device_mode && !shmemx_gpu_available()) {
    /* PEs on several nodes (SHOAL_NODE_PES): the fake device heap spans them only once the host paths reach far
     * device heaps (issue 31 part 1); until then the run is skipped */
    if (me == 0) printf("gpu_proxy: device: skipped: no device heap across the nodes of this run\n");
    shmem_finalize();
    return 77;
  }
  /* the proxy runs from shmem_init exactly when the device state has a PE of another node, and the state names its
   * queue; otherwise the test starts it */
  shmemx_device_state_t st;
  bool far = false;
  if (device_mode && shmemx_device_state_get(&st, sizeof st) == 0)
    for (int p = 0; p < npes; p++) far = far || st.delta[p] == SHMEMX_DEVICE_DELTA_FAR;
  CHECK((shoal_proxy_queue() != NULL) == far, "the proxy %s with%s a far device PE", far ? "does not run" : "runs",
        far ? "" : "out");
  CHECK(!far || st.proxy_queue == (void *)shoal_proxy_queue(), "the device state's queue %p, the proxy's %p",
        st.proxy_queue, (void *)shoal_proxy_queue());
  CHECK(shoal_proxy_start("gpu_proxy") == SHOAL_OK && (Q = shoal_proxy_queue()) != NULL, "proxy start");
  /* The thread runs off the PE's core where the node has CPUs no PE is bound to (the PE's thread may spin there, a
   * GPU runtime's synchronize, and each request would wait for a time slice): its set is the helpers' set. */
  cpu_set_t want, got, mine;
  if (!shoal_topo_helper_cpus(&want)) {
    CHECK(shoal_proxy_affinity(&got) == 0 && CPU_EQUAL(&got, &want), "the proxy is not on the helper CPUs (%d CPUs)",
          CPU_COUNT(&got));
    CPU_ZERO(&mine);
    sched_getaffinity(0, sizeof mine, &mine);
    cpu_set_t both;
    CPU_AND(&both, &got, &mine);
    CHECK(CPU_COUNT(&both) == 0, "the proxy shares %d CPUs with its PE's thread", CPU_COUNT(&both));
    /* over ofi (net: manual progress) the transport's progress thread answers far PEs' requests: it moves too */
    const char *tl = getenv("SHOAL_TRANSPORT");
    CHECK(!(tl && !strcmp(tl, "ofi")) || shoal_proxy_helpers_moved() == 1, "%d transport threads moved with the proxy",
          shoal_proxy_helpers_moved());
  }
  ctr = sym_alloc(64);
  ctr_nf = ctr + 1;
  if (!strncmp(mode, "bad_", 4)) bad(mode);

  /* puts of odd sizes, blocking and nbi, into next's buffer; the last one past the bounce buffer (chunks) */
  static const size_t sizes[] = {1, 3, 7, 13, 4099, ((size_t)1 << 20) + 77};
  const size_t ns = sizeof sizes / sizeof sizes[0], big = sizes[ns - 1];
  size_t total = 0;
  for (size_t i = 0; i < ns; i++) total += sizes[i];
  unsigned char *dst = sym_alloc(total), *src = device_mode ? sym_alloc(total) : malloc(total);
  unsigned char *out = device_mode ? sym_alloc(total) : malloc(total);
  memset(dst, 0, total);
  for (size_t i = 0; i < total; i++) src[i] = (unsigned char)(i * 13 + me);
  shmem_barrier_all();
  for (size_t i = 0, off = 0; i < ns; off += sizes[i], i++)
    req(SHOAL_PROXY_PUT, 0, i % 2 ? SHOAL_PROXY_F_WAIT : SHOAL_PROXY_F_NBI, next, dst + off, src + off, sizes[i], 0, 0);
  quiet();
  shmem_barrier_all();
  size_t badn = 0;
  for (size_t i = 0; i < total; i++) badn += dst[i] != (unsigned char)(i * 13 + prev);
  CHECK(!badn, "puts of odd sizes from PE %d: %zu wrong bytes of %zu", prev, badn, total);
  /* puts of 1-8 bytes carried in the request (SHOAL_PROXY_F_INLINE: a kernel's small puts): the proxy sends value,
   * never the bytes at local (here a poison the kernel may already have overwritten) */
  {
    unsigned char *idst = sym_alloc(64);
    static const unsigned char poison[8] = {0xEE, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE};
    memset(idst, 0, 64);
    shmem_barrier_all();
    for (int k = 1; k <= 8; k++) {
      uint64_t v = 0;
      for (int i = 0; i < k; i++) ((unsigned char *)&v)[i] = (unsigned char)(16 * k + i + me);
      req(SHOAL_PROXY_PUT, 0, SHOAL_PROXY_F_INLINE | (k % 2 ? SHOAL_PROXY_F_NBI : 0), next, idst + 8 * (k - 1), poison,
          (uint64_t)k, v, 0);
    }
    quiet();
    shmem_barrier_all();
    int ibad = 0;
    for (int k = 1; k <= 8; k++)
      for (int i = 0; i < 8; i++) ibad += idst[8 * (k - 1) + i] != (i < k ? (unsigned char)(16 * k + i + prev) : 0);
    CHECK(!ibad, "puts carried in the request from PE %d: %d wrong bytes of 64", prev, ibad);
    shmem_barrier_all();
    shmem_free(idst);
  }
  /* gets of odd sizes from next (its dst holds me's pattern), into local memory */
  memset(out, 0, total);
  for (size_t i = 0, off = 0; i < ns; off += sizes[i], i++)
    req(SHOAL_PROXY_GET, 0, i % 2 ? SHOAL_PROXY_F_NBI : SHOAL_PROXY_F_WAIT, next, dst + off, out + off, sizes[i], 0,
        0);
  quiet(); /* the nbi ones complete here */
  badn = 0;
  for (size_t i = 0; i < total; i++) badn += out[i] != (unsigned char)(i * 13 + me);
  CHECK(!badn, "gets of odd sizes from PE %d: %zu wrong bytes", next, badn);
  shmem_barrier_all();

  /* p and g of 1, 2, 4, 8 bytes */
  uint64_t *pg = sym_alloc(4 * 8);
  memset(pg, 0, 32);
  shmem_barrier_all();
  for (int k = 0; k < 4; k++) {
    const uint64_t v = 0x1122334455667788ull + (uint64_t)me * 0x0101010101010101ull;
    req(SHOAL_PROXY_P, 0, 0, next, &pg[k], NULL, (uint64_t)1 << k, v, 0);
  }
  quiet();
  shmem_barrier_all();
  for (int k = 0; k < 4; k++) {
    const size_t sz = (size_t)1 << k;
    const uint64_t want = (0x1122334455667788ull + (uint64_t)prev * 0x0101010101010101ull) &
                          (sz == 8 ? ~0ull : (1ull << 8 * sz) - 1);
    CHECK(pg[k] == want, "p of %zu bytes from PE %d: %#llx, expected %#llx", sz, prev, (unsigned long long)pg[k],
          (unsigned long long)want);
    const uint64_t got = req(SHOAL_PROXY_G, 0, SHOAL_PROXY_F_WAIT, next, &pg[k], NULL, sz, 0, 0);
    const uint64_t wg = (0x1122334455667788ull + (uint64_t)me * 0x0101010101010101ull) &
                        (sz == 8 ? ~0ull : (1ull << 8 * sz) - 1);
    CHECK(got == wg, "g of %zu bytes from PE %d: %#llx, expected %#llx", sz, next, (unsigned long long)got,
          (unsigned long long)wg);
  }
  shmem_barrier_all();

  /* every AMO op, 4 and 8 bytes, on next's words (only this PE touches them) */
  uint64_t *w = sym_alloc(4 * 8);
  memset(w, 0, 32);
  shmem_barrier_all();
  for (int sz = 4; sz <= 8; sz += 4) {
    void *a = sz == 4 ? (void *)&w[0] : (void *)&w[1];
    const uint64_t m = sz == 4 ? 0xffffffffull : ~0ull, W = SHOAL_PROXY_F_WAIT;
    const uint64_t big_v = 0xF0F0F0F0A5A5A5A5ull & m;
#define AMO(aop, fl, v, c) req(SHOAL_PROXY_AMO, SHOAL_PROXY_AMO_##aop, fl, next, a, NULL, sz, v, c)
    AMO(SET, 0, big_v, 0);
    CHECK(AMO(FETCH, W, 0, 0) == big_v, "%d-byte set/fetch", sz);
    CHECK(AMO(SWAP, W, 5, 0) == big_v, "%d-byte swap", sz);
    CHECK(AMO(CSWAP, W, 9, 5) == 5, "%d-byte compare_swap (match)", sz);
    CHECK(AMO(CSWAP, W, 1, 5) == 9, "%d-byte compare_swap (no match)", sz);
    CHECK(AMO(ADD, W, m, 0) == 9, "%d-byte fetch_add", sz); /* + (-1) */
    AMO(ADD, 0, 2, 0);
    CHECK(AMO(FETCH, W, 0, 0) == 10, "%d-byte add (-1, +2)", sz);
    CHECK(AMO(AND, W, 0xC, 0) == 10, "%d-byte fetch_and", sz); /* 8 */
    AMO(OR, 0, 0x3, 0);                                           /* 11 */
    CHECK(AMO(XOR, W, 0xFF, 0) == 11, "%d-byte fetch_xor", sz);  /* 0xF4 */
    AMO(AND, 0, 0x74, 0);                                         /* 0x74 */
    AMO(XOR, 0, 0x1, 0);                                          /* 0x75 */
    CHECK(AMO(OR, W, m & ~0xFFull, 0) == 0x75, "%d-byte fetch_or", sz);
    CHECK(AMO(FETCH, W, 0, 0) == (m & ~0xFFull) + 0x75, "%d-byte or", sz);
#undef AMO
  }
  CHECK(w[2] == 0 && w[3] == 0, "AMOs spilled");
  shmem_barrier_all();

  /* several producers at once: fetch-adds (distinct old values, exact total) and non-fetching adds */
  *ctr = *ctr_nf = 0;
  shmem_barrier_all();
  const uint64_t posted0 = __atomic_load_n(&posted, __ATOMIC_RELAXED);
  pthread_t th[NT];
  for (int t = 0; t < NT; t++) pthread_create(&th[t], NULL, producer, (void *)(intptr_t)t);
  for (int t = 0; t < NT; t++) pthread_join(th[t], NULL);
  quiet();
  CHECK(posted - posted0 == 2 * NT * K + 1, "posted %llu", (unsigned long long)(posted - posted0));
  shmem_barrier_all();
  CHECK(load64(ctr) == NT * K, "concurrent fetch_add total from PE %d: %llu, expected %d", prev,
        (unsigned long long)load64(ctr), NT * K);
  CHECK(load64(ctr_nf) == 3 * NT * K, "concurrent add total: %llu, expected %d", (unsigned long long)load64(ctr_nf),
        3 * NT * K);
  qsort(&olds[0][0], NT * K, sizeof(uint64_t), cmp_u64);
  int dup = 0;
  for (int i = 0; i < NT * K; i++) dup += (&olds[0][0])[i] != (uint64_t)i;
  CHECK(!dup, "fetch_add old values not 0..%d once each (%d off)", NT * K - 1, dup);
  shmem_barrier_all();

  /* put_signal: data then signal, seen by a wait on the target; rounds alternate SET and ADD */
  uint64_t *sig = sym_alloc(64);
  *sig = 0;
  shmem_barrier_all();
  for (int r = 1; r <= 3; r++) {
    for (size_t i = 0; i < big; i++) src[i] = (unsigned char)(i * 7 + r + me);
    put_signal(next, dst, src, r == 2 ? 5 : big, sig, r == 3 ? 1 : (uint64_t)r, r == 3 ? SHMEM_SIGNAL_ADD : SHMEM_SIGNAL_SET,
               r == 1 ? SHOAL_PROXY_F_WAIT : SHOAL_PROXY_F_NBI);
    if (device_mode)
      while (load64(sig) < (uint64_t)r) sched_yield();
    else
      shmem_signal_wait_until(sig, SHMEM_CMP_GE, (uint64_t)r);
    const size_t n = r == 2 ? 5 : big;
    badn = 0;
    for (size_t i = 0; i < n; i++) badn += dst[i] != (unsigned char)(i * 7 + r + prev);
    CHECK(!badn, "put_signal round %d: %zu of %zu bytes not there when the signal was", r, badn, n);
    shmem_barrier_all();
  }

  /* fence: data, fence, flag; the target sees the flag only after the data */
  uint64_t *fd = sym_alloc(2 * 8);
  fd[0] = fd[1] = 0;
  shmem_barrier_all();
  const uint64_t fences0 = shoal_proxy_fences();
  for (uint64_t r = 1; r <= 20; r++) {
    req(SHOAL_PROXY_PUT, 0, SHOAL_PROXY_F_NBI, next, dst, src, 4099, 0, 0);
    req(SHOAL_PROXY_P, 0, 0, next, &fd[0], NULL, 8, r, 0);
    fence();
    req(SHOAL_PROXY_P, 0, 0, next, &fd[1], NULL, 8, r, 0);
    while (load64(&fd[1]) < r) {
      if (!device_mode) shmem_uint64_wait_until(&fd[1], SHMEM_CMP_GE, r);
      else sched_yield();
    }
    CHECK(load64(&fd[0]) >= r, "fence round %llu: flag seen before the data (%llu)", (unsigned long long)r,
          (unsigned long long)load64(&fd[0]));
  }
  quiet();
  /* ordered delivery on this provider hides a missing fence from the data: the proxy must have issued one per round */
  CHECK(shoal_proxy_fences() - fences0 == 20, "%llu transport fences for 20 FENCE requests",
        (unsigned long long)(shoal_proxy_fences() - fences0));
  shmem_barrier_all();

  /* quiet: once it returns, nbi puts are visible at the target (read back by this PE's host path) */
  for (size_t i = 0; i < big; i++) src[i] = (unsigned char)(i * 3 + me);
  req(SHOAL_PROXY_PUT, 0, SHOAL_PROXY_F_NBI, next, dst, src, big, 0, 0);
  quiet();
  unsigned char *chk = malloc(big);
  shmem_getmem(chk, dst, big, next);
  badn = 0;
  for (size_t i = 0; i < big; i++) badn += chk[i] != (unsigned char)(i * 3 + me);
  CHECK(!badn, "after quiet: %zu of %zu bytes not at PE %d", badn, big, next);
  free(chk);
  shmem_barrier_all();

  /* The host's shmem_quiet (so its barrier: a kernel's puts, a device synchronize, the host barrier, as NVSHMEM
   * programs do) completes what was posted; so does shmemx_quiet_on_stream, by the ticket counter, where the device
   * heap has far PEs. Without the drain these return at once, long before the proxy has served 64 puts. */
  for (int round = 0; round < (device_mode && far ? 2 : 1); round++) {
    enum { NP = 64, PB = 4096 };
    for (int i = 0; i < NP; i++) {
      for (int j = 0; j < PB; j++) src[i * PB + j] = (unsigned char)(i + j * 5 + round * 3 + me);
      req(SHOAL_PROXY_PUT, 0, SHOAL_PROXY_F_NBI, next, dst + i * PB, src + i * PB, PB, 0, 0);
    }
    if (round == 0) shmem_quiet();
    else shmemx_quiet_on_stream(NULL);
    CHECK(shoal_proxy_served() == __atomic_load_n(&posted, __ATOMIC_RELAXED), "%s: served %llu of %llu posted",
          round ? "shmemx_quiet_on_stream" : "shmem_quiet", (unsigned long long)shoal_proxy_served(),
          (unsigned long long)posted);
    shmem_barrier_all();
    badn = 0;
    for (int i = 0; i < NP * PB; i++) badn += dst[i] != (unsigned char)(i / PB + i % PB * 5 + round * 3 + prev);
    CHECK(!badn, "%s then the barrier: %zu of %d bytes not there", round ? "shmemx_quiet_on_stream" : "shmem_quiet",
          badn, NP * PB);
    shmem_barrier_all();
  }

  CHECK(shoal_proxy_served() == __atomic_load_n(&posted, __ATOMIC_RELAXED), "served %llu of %llu posted",
        (unsigned long long)shoal_proxy_served(), (unsigned long long)posted);
  if (me == 0)
    printf("gpu_proxy: %s %s with %d PEs (queue of %ld entries)\n", mode, fails ? "FAIL" : "PASS", npes,
           shoal_env.proxy_queue_entries);
  shmem_finalize();
  return fails ? 1 : 0;
}
