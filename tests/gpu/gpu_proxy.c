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
 *   gpu_proxy defer   nbi puts from the fake device heap to far device heaps leave their copy out of GPU memory
 *                     enqueued (issue 31): the proxy serves the next request while it runs (defer() below)
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

/* ---- defer: the fake with events, whose copies out of device memory end late ---- */
/* A causal copy (slow_out, 64 KiB out of device memory): it ends once the proxy has served the request after the
 * one that made it (served >= want), or gives up after GIVE_UP_NS, so only a proxy that goes on while the copy runs
 * sees it end: the one that waited for its copy inside the request gives up, and the test fails. Counted copies
 * (lag_out): their events read "not done" three times first, so chunks wait in the queue for their copies. */
#define GIVE_UP_NS 10000000000ll
static bool slow_out;
static _Atomic bool slow_enqueue; /* a copy out of 65544 bytes blocks in its enqueue (the driver call) the same way */
static _Atomic bool enqueue_gave_up;
static int lag_out;                   /* "not done" answers each copy out of device memory gives first */
static _Thread_local bool copied_out; /* this thread's last copy was out of device memory */
static _Atomic int64_t copy_since; /* the causal copy's start; 0: none pending */
static _Atomic uint64_t copy_want;
static _Atomic bool copy_gave_up;
static _Atomic int lagged; /* "not done" answers given */
static int64_t mono_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}
static bool copy_over(void) {
  int64_t t0 = atomic_load(&copy_since);
  if (!t0) return true;
  if (shoal_proxy_served() < atomic_load(&copy_want)) {
    if (mono_ns() - t0 < GIVE_UP_NS) return false;
    atomic_store(&copy_gave_up, true);
  }
  atomic_store(&copy_since, 0);
  return true;
}
static shoal_status_t d_memcpy(void *d, const void *s, size_t n, void *st) {
  int sdev = 0, ddev = 0;
  f_ptr_device(s, &sdev), f_ptr_device(d, &ddev);
  copied_out = sdev && !ddev; /* the event recorded next (same thread, under the heap's lock) is this copy's */
  /* copy_want set by defer() before it posts the request (the copy may be started later than the request's service:
   * the copier's thread, heap_gpu.c) */
  if (slow_out && sdev && !ddev && n == 65536) atomic_store(&copy_since, mono_ns());
  if (atomic_load(&slow_enqueue) && sdev && !ddev && n == 65544) { /* the call itself, until the next is served */
    const int64_t t0 = mono_ns();
    while (shoal_proxy_served() < atomic_load(&copy_want))
      if (mono_ns() - t0 > GIVE_UP_NS) {
        atomic_store(&enqueue_gave_up, true);
        break;
      }
    atomic_store(&slow_enqueue, false);
  }
  return f_memcpy(d, s, n, st);
}
static shoal_status_t d_stream_sync(void *st) {
  while (!copy_over()) sched_yield();
  return SHOAL_OK;
}
typedef struct { int64_t since; int lag; } d_event_t;
static shoal_status_t d_event_create(void **e) { return (*e = calloc(1, sizeof(d_event_t))) ? SHOAL_OK : SHOAL_ERR_NOMEM; }
static shoal_status_t d_event_destroy(void *e) { return free(e), SHOAL_OK; }
static shoal_status_t d_event_record(void *e, void *st) {
  d_event_t *v = e;
  v->since = atomic_load(&copy_since), v->lag = copied_out ? lag_out : 0; /* not the target's copies in */
  return SHOAL_OK;
}
static shoal_status_t d_event_sync(void *e) {
  while (((d_event_t *)e)->since && !copy_over()) sched_yield();
  return SHOAL_OK;
}
static shoal_status_t d_event_query(void *e, int *done) {
  d_event_t *v = e;
  if (v->lag > 0) {
    v->lag--, atomic_fetch_add(&lagged, 1);
    return *done = 0, SHOAL_OK;
  }
  return *done = !v->since || copy_over(), SHOAL_OK;
}
static shoal_gpu_ops_t with_events;

/* PE me to next (every PE its own node). (1) A 64 KiB nbi put whose copy out of device memory ends only once the
 * request after it was served, then a G of next's word: answered while the copy runs. (2) 24 rounds of an nbi put
 * (odd sizes, some past one chunk) each from its own source, every third with a blocking put too, a fence, then a p
 * of the round to next's host heap: next sees each round's bytes once it sees the round's flag. (3b) An nbi put of
 * 4.5 MiB (five chunks) whose copies end late, while the PE's own thread puts to next's device heap (it waits for the
 * proxy's chunks). (3) An nbi put then a get of the same bytes: the get sees them. (4) quiet, then the barrier: every
 * byte there. Only copies out of device memory lag (lagged counts them), not the target's copies in. */
static void defer(int next, int prev) {
  enum { R = 24, U = 70001 };
  unsigned char *d = sym_alloc((size_t)(R + 2) * U), *s = sym_alloc((size_t)(R + 2) * U), *back = sym_alloc(U);
  uint64_t *word = shmem_malloc(2 * sizeof(uint64_t)); /* host heap: [0] the round flag, [1] the G's value */
  const size_t BIGN = ((size_t)9 << 19) + 3;
  unsigned char *dbig = sym_alloc(BIGN), *sbig = sym_alloc(BIGN), *hd = sym_alloc(4099);
  CHECK(word != NULL, "allocation");
  if (!word) return;
  for (size_t i = 0; i < BIGN; i++) sbig[i] = (unsigned char)(i * 7 + (size_t)me);
  memset(dbig, 0, BIGN);
  word[0] = 0, word[1] = 1000 + (uint64_t)me;
  memset(d, 0, (size_t)(R + 2) * U);
  for (size_t i = 0; i < (size_t)(R + 2) * U; i++) s[i] = (unsigned char)(i * 11 + (size_t)me * 3);
  shmem_barrier_all();

  slow_out = true;
  atomic_store(&copy_want, shoal_proxy_served() + 2); /* the put's request, then the one after it served */
  req(SHOAL_PROXY_PUT, 0, SHOAL_PROXY_F_NBI, next, d, s, 65536, 0, 0);
  uint64_t g = req(SHOAL_PROXY_G, 0, SHOAL_PROXY_F_WAIT, next, &word[1], NULL, 8, 0, 0);
  CHECK(g == 1000 + (uint64_t)next, "G of PE %d's word: %llu", next, (unsigned long long)g);
  quiet();
  slow_out = false;
  CHECK(!atomic_load(&copy_gave_up), "the proxy did not serve the next request while an nbi put's copy out of GPU "
        "memory ran (the copy gave up waiting after %lld s)", GIVE_UP_NS / 1000000000);
  /* (1b) the same with a copy whose enqueue itself (the driver's call) lasts until the next request is served: the
   * copier's thread makes that call, not the proxy's (SHOAL_GPU_COPIER; the first copy above found the events
   * pollable, so this one goes through it). Not where it does not run: SHOAL_GPU_COPIER=0, or a proxy on one CPU
   * (2 PEs bound to the 2 CPUs of CI's machine) */
  if (shoal_gpu_copier_up()) {
    atomic_store(&copy_want, shoal_proxy_served() + 2);
    atomic_store(&slow_enqueue, true);
    req(SHOAL_PROXY_PUT, 0, SHOAL_PROXY_F_NBI, next, back, s, 65544, 0, 0); /* next's back: not checked */
    g = req(SHOAL_PROXY_G, 0, SHOAL_PROXY_F_WAIT, next, &word[1], NULL, 8, 0, 0);
    CHECK(g == 1000 + (uint64_t)next, "G of PE %d's word: %llu", next, (unsigned long long)g);
    quiet();
    CHECK(!atomic_load(&enqueue_gave_up), "the proxy did not serve the next request while an nbi put's copy out of "
          "GPU memory was being enqueued (the enqueue gave up after %lld s)", GIVE_UP_NS / 1000000000);
    if (me == 0) printf("gpu_proxy: the copier thread enqueued a copy while the proxy served the next request\n");
  }

  lag_out = 3;
  for (int r = 0; r < R; r++) {
    const size_t at = (size_t)(r + 1) * U, n = r % 4 == 3 ? U : 65536 + (size_t)r * 13;
    req(SHOAL_PROXY_PUT, 0, SHOAL_PROXY_F_NBI, next, d + at, s + at, n, 0, 0);
    if (r % 3 == 2 && n < U) req(SHOAL_PROXY_PUT, 0, 0, next, d + at + n, s + at + n, 4096, 0, 0);
    fence();
    req(SHOAL_PROXY_P, 0, 0, next, &word[0], NULL, 8, (uint64_t)r + 1, 0);
  }
  /* as next: each round's bytes there once its flag is */
  size_t badn = 0;
  for (int r = 0; r < R; r++) {
    const size_t at = (size_t)(r + 1) * U, n = r % 4 == 3 ? U : 65536 + (size_t)r * 13;
    const int64_t t0 = mono_ns();
    while (__atomic_load_n(&word[0], __ATOMIC_ACQUIRE) < (uint64_t)r + 1 && mono_ns() - t0 < GIVE_UP_NS)
      sched_yield();
    for (size_t i = 0; i < n; i++) badn += d[at + i] != (unsigned char)((at + i) * 11 + (size_t)prev * 3);
    CHECK(!badn, "round %d: flag %llu, %zu of %zu bytes from PE %d not there", r,
          (unsigned long long)__atomic_load_n(&word[0], __ATOMIC_ACQUIRE), badn, n, prev);
    if (badn) break;
  }
  /* (3b) a put of 4.5 MiB + 3 (five chunks: the ring wraps, places reused once answered) whose copies end late,
   * while this PE's own thread puts to next's device heap too: it waits until the proxy has sent its chunks */
  lag_out = 100000; /* tens of ms of queries: still unsent when this thread's put comes, once the proxy served it */
  req(SHOAL_PROXY_PUT, 0, SHOAL_PROXY_F_NBI, next, dbig, sbig, BIGN, 0, 0);
  while (shoal_proxy_served() < __atomic_load_n(&posted, __ATOMIC_RELAXED)) sched_yield();
  unsigned char hb[4099];
  for (size_t i = 0; i < sizeof hb; i++) hb[i] = (unsigned char)(i * 5 + (size_t)me);
  shmem_putmem(hd, hb, sizeof hb, next);
  lag_out = 3;
  const size_t last = (size_t)(R + 1) * U;
  req(SHOAL_PROXY_PUT, 0, SHOAL_PROXY_F_NBI, next, d + last, s + last, U, 0, 0);
  req(SHOAL_PROXY_GET, 0, SHOAL_PROXY_F_WAIT, next, d + last, back, U, 0, 0);
  badn = 0;
  for (size_t i = 0; i < U; i++) badn += back[i] != s[last + i];
  CHECK(!badn, "a get after an nbi put of the same bytes: %zu of %d bytes differ", badn, U);
  quiet();
  CHECK(atomic_load(&lagged) > 0, "no copy out of device memory was left pending");
  lag_out = 0;
  shmem_barrier_all();
  badn = 0;
  for (size_t i = 0; i < BIGN; i++) badn += dbig[i] != (unsigned char)(i * 7 + (size_t)prev);
  for (size_t i = 0; i < sizeof hb; i++) badn += hd[i] != (unsigned char)(i * 5 + (size_t)prev);
  CHECK(!badn, "the 4.5 MiB put and the PE's own put meanwhile: %zu bytes wrong", badn);
  badn = 0;
  for (size_t i = 0; i < (size_t)(R + 2) * U; i++) {
    const size_t r = i / U, o = i % U;
    const bool put = r == 0 ? o < 65536 : r <= R ? o < (r % 4 == 0 ? (size_t)U : 65536 + (r - 1) * 13) ||
                                                    ((r - 1) % 3 == 2 && r % 4 != 0 && o < 65536 + (r - 1) * 13 + 4096) : true;
    badn += d[i] != (put ? (unsigned char)(i * 11 + (size_t)prev * 3) : 0);
  }
  CHECK(!badn, "after quiet and the barrier: %zu of %zu bytes wrong", badn, (size_t)(R + 2) * U);
  shmem_barrier_all();
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
  const bool defer_mode = !strcmp(mode, "defer");
  device_mode = !strcmp(mode, "device") || defer_mode;
  if (!strcmp(mode, "backpressure")) setenv("SHOAL_PROXY_QUEUE_ENTRIES", "8", 1);
  if (device_mode) {
    setenv("SHOAL_DEVICE_SYMMETRIC_SIZE", defer_mode ? "32M" : "16M", 1);
    shoal_gpu_test_backend = &fake;
  }
  if (defer_mode) {
    with_events = fake;
    with_events.memcpy = d_memcpy, with_events.stream_sync = d_stream_sync;
    with_events.event_create = d_event_create, with_events.event_destroy = d_event_destroy;
    with_events.event_record = d_event_record, with_events.event_sync = d_event_sync;
    with_events.event_query = d_event_query;
    shoal_gpu_test_backend = &with_events;
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
  if (defer_mode) {
    CHECK(far, "defer wants every PE its own node (SHOAL_NODE_PES=1 over ofi)");
    if (far) defer(next, prev);
    if (me == 0) printf("gpu_proxy: defer %s with %d PEs\n", fails ? "FAIL" : "PASS", npes);
    shmem_finalize();
    return fails ? 1 : 0;
  }

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
