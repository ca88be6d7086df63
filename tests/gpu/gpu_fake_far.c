/* gpu_fake_far.c - host-initiated RMA and AMOs on the device heap of PEs of other nodes (issue 31, part 1), on the
 * fake backend (gpu_fake_backend.h: "device memory" is a memfd, so a PE can read its own directly), over ofi on
 * loopback with SHOAL_NODE_PES splitting the machine into nodes. A PE of another node has no mapping of a peer's
 * device heap (delta SHMEMX_DEVICE_DELTA_FAR): its puts, gets and AMOs go through the transport's staged path.
 * Checks: the peer table (near and far), puts and gets of 1 byte, odd sizes and 1 MiB + 3 (several staging chunks)
 * from and to host and device local buffers, nbi + quiet, strided iput/iget, p/g, every AMO on 4 and 8 bytes with
 * its values, a counter every PE adds to at once, put + quiet + flag, put + fence + flag, put_signal (set and add) to
 * a device flag, the _on_stream form, a private context's put/get/AMO. Modes (argv[1]) for bad input from PE 0 to
 * the last PE: bad_range (a device range past the heap's end), bad_nonsym (device memory outside the heap), bad_amo
 * (misaligned), bad_pe (out of range). Modes pipeline, pipeline-dc and pipeline-twomsg: staged puts in flight, with
 * targets that wait 50 ms before each chunk's copy (SHOAL_TL_OFI_FORCE_SLOW_DPUT), so that what is in flight is known
 * (pipeline() below); pipeline: each chunk's request in its write (one send a chunk, where remote CQ data works);
 * -dc: each request after its write's delivery; -twomsg: put_signal's CQ data off, each request right behind its
 * write. Mode
 * copy-async (3 PEs): a target's copy into its device heap ends only once the target has answered another PE (the
 * fake's copies end later, as a GPU's do), so it must go on serving others meanwhile (copy_async() below). Mode
 * copy-enqueue (3 PEs): the same where the backend's call that enqueues the copy is what waits (copy_enqueue()). */
#include "gpu_fake_backend.h"
#include "comm.h"
#include "shoal_config.h"

#include <sched.h>
#include <stdatomic.h>
#include <time.h>

static int fails, me, npes;

#define BIG (((size_t)1 << 20) + 3) /* more than one staged put chunk (a quarter slot: 1 MiB at most) */

/* The byte i of a pattern (src: the PE that wrote it, tag: the round). */
static unsigned char pat(size_t i, int src, unsigned tag) { return (unsigned char)(i * 7 + (size_t)src * 13 + tag); }
static void fill(unsigned char *b, size_t n, int src, unsigned tag) {
  for (size_t i = 0; i < n; i++) b[i] = pat(i, src, tag);
}
/* The first index where b differs from the pattern, or n. */
static size_t bad_at(const unsigned char *b, size_t n, int src, unsigned tag) {
  for (size_t i = 0; i < n; i++)
    if (b[i] != pat(i, src, tag)) return i;
  return n;
}

/* Waits (up to 20 s) for this PE's own device word to reach want: the fake device memory is host memory. */
static bool wait_word(volatile uint64_t *w, uint64_t want) {
  time_t end = time(NULL) + 20;
  while (__atomic_load_n(w, __ATOMIC_ACQUIRE) != want)
    if (time(NULL) > end) return false;
  return true;
}

/* Staged puts leave their chunks in flight (issue 31: the device put's bandwidth): a put returns once its source may
 * be reused, before its target copied it, and is complete there after quiet. 6 blocking puts of 900 KiB + 1 to next,
 * then 14 of 4099 bytes (half from host, half from device memory), the source overwritten after each returns: more
 * bytes than the bounce ring holds (a slot, 4 MiB at 2-3 PEs) and more chunks than may be in flight (16), so a place
 * is reused only once answered; then a get (it must see the puts before it), a quiet (nothing left in flight), and
 * next checks every byte. Targets wait 50 ms per chunk: no answer comes before the check after the first put. */
static const char *pipe_mode = "";
static void pipeline(unsigned char *dloc, int next, int prev) {
  enum { N = 20 };
  const size_t big = ((size_t)900 << 10) + 1;
  size_t at[N + 1] = {0};
  for (unsigned i = 0; i < N; i++) at[i + 1] = at[i] + (i < 6 ? big : 4099);
  unsigned char *buf = shmem_malloc_with_hints(at[N], SHMEMX_MALLOC_DEVICE), *h = malloc(big), *g = malloc(big);
  CHECK(buf && h && g, "pipeline allocations");
  if (!buf || !h || !g) return;
  memset(buf, 0xee, at[N]);
  shmem_barrier_all();
  shoal_tl_ofi_info_t info;
  /* A small put after a larger one goes on in the ring: it does not go back to the start, where the larger one is
   * still unanswered, and wait for it (the ring's early wrap: only onto free places). So the ring reaches past both
   * chunks' places (the wrap to the start left it at the 64 KiB chunk's place, its tag and request: under 65536 +
   * 2048 bytes), and both still fly after the second, but with delivery-complete writes: there the second write's
   * delivery waits for the target's slowed handler, which may answer the first chunk meanwhile. */
  fill(h, 65536, me, 90);
  shmem_putmem(buf, h, 65536, next);
  fill(h, 2048, me, 91);
  shmem_putmem(buf + 65536, h, 2048, next);
  shoal_tl_ofi_query(&info);
  if (strcmp(pipe_mode, "pipeline-dc"))
    CHECK(info.stage_unanswered >= 2, "a small staged put waited for the larger one before it (%u chunks in flight)",
          info.stage_unanswered);
  CHECK(info.stage_reach >= 65536 + 2048, "a small staged put went back to the start of the ring behind a "
        "larger one (the ring reaches %zu bytes)", info.stage_reach);
  shmem_quiet();
  shmem_barrier_all();
  for (unsigned i = 0; i < N; i++) {
    unsigned char *src = i % 2 ? dloc : h;
    const size_t sz = at[i + 1] - at[i];
    fill(src, sz, me, 100 + i);
    shmem_putmem(buf + at[i], src, sz, next);
    memset(src, 0x5a, sz); /* reusable on return */
    if (i == 0) {
      shoal_tl_ofi_query(&info);
      CHECK(info.stage_unanswered >= 1, "a staged put waited for its target's copy (%u chunks in flight after it)",
            info.stage_unanswered);
    }
  }
  shmem_getmem(g, buf + at[N - 1], 4099, next);
  CHECK(bad_at(g, 4099, me, 100 + N - 1) == 4099, "a get after puts to the same PE missed them (byte %zu)",
        bad_at(g, 4099, me, 100 + N - 1));
  shmem_quiet();
  shoal_tl_ofi_query(&info);
  CHECK(info.stage_unanswered == 0, "%u staged put chunks in flight after quiet", info.stage_unanswered);
  /* one send a chunk where remote CQ data works (the request in the chunk's write); else a request each */
  if (info.cq_signal)
    CHECK(info.stage_msgs == 0, "%llu staged put chunks sent their request as a message of its own",
          (unsigned long long)info.stage_msgs);
  else
    CHECK(info.stage_msgs >= N, "%llu staged put chunks' requests as messages, want %u or more (no remote CQ data)",
          (unsigned long long)info.stage_msgs, (unsigned)N);
  /* shmemx_quiet_on_stream completes the stream form's far puts too (they go on the default context) */
  fill(h, 4099, me, 99);
  shmemx_putmem_on_stream(buf, h, 4099, next, NULL);
  shmemx_quiet_on_stream(NULL);
  shoal_tl_ofi_query(&info);
  CHECK(info.stage_unanswered == 0, "%u staged put chunks in flight after shmemx_quiet_on_stream",
        info.stage_unanswered);
  shmem_barrier_all();
  shoal_tl_ofi_query(&info);
  /* as prev's target: every chunk's request taken from its write (a resend, a message, would also finish it) */
  if (info.cq_signal)
    CHECK(info.stage_cq_reqs >= N + 1 && !info.dropped, "%llu staged requests taken from their writes (want %u or "
          "more), %llu messages dropped", (unsigned long long)info.stage_cq_reqs, (unsigned)N + 1,
          (unsigned long long)info.dropped);
  if (info.stage_early) /* correct (resent), only slow: the provider's send overtook its write */
    printf("gpu_fake_far: PE %d: %llu chunk requests came before their bytes\n", me,
           (unsigned long long)info.stage_early);
  CHECK(bad_at(buf, 4099, prev, 99) == 4099, "putmem_on_stream + quiet_on_stream from PE %d", prev);
  for (unsigned i = 1; i < N; i++) {
    const size_t sz = at[i + 1] - at[i], b = bad_at(buf + at[i], sz, prev, 100 + i);
    CHECK(b == sz, "pipelined put %u from PE %d: byte %zu of %zu is %#x", i, prev, b, sz, buf[at[i] + (b < sz ? b : 0)]);
  }
  shmem_barrier_all();
  shmem_free(buf);
  free(h), free(g);
}

/* copy-async: a backend whose copy into device memory, once slow_copies is set, ends only when PE 2's fetch_add has
 * reached this PE (x != 0), or after COPY_GIVE_UP_NS (the bytes move at once; the stream, its events and its
 * synchronize say when it ended). So the copy ends only if this PE answers others while it runs: no clock decides the
 * result, a target that waits for its copy inside its message handling waits COPY_GIVE_UP_NS and fails. */
#define COPY_GIVE_UP_NS 10000000000ll
static int64_t mono_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}
static bool slow_copies;
static long x, copy_started, copy_done; /* symmetric: PE 2 reads copy_started, PE 0 copy_done, on PE 1 */
static _Atomic int64_t copy_since;        /* when the slow copy began; 0: none pending */
static _Atomic bool copy_gave_up;
static bool slow_enqueue;
static long cy_up; /* symmetric: PE 1's copier runs */
static shoal_status_t s_memcpy(void *d, const void *s, size_t n, void *st) {
  int on = 0;
  f_ptr_device(d, &on);
  if (slow_enqueue && on) { /* copy-enqueue: the call itself returns only once PE 2's fetch_add has come */
    slow_enqueue = false;
    const int64_t t0 = mono_ns();
    __atomic_store_n(&copy_started, 1, __ATOMIC_SEQ_CST);
    while (!__atomic_load_n(&x, __ATOMIC_SEQ_CST) && mono_ns() - t0 < COPY_GIVE_UP_NS) sched_yield();
    if (!__atomic_load_n(&x, __ATOMIC_SEQ_CST)) atomic_store(&copy_gave_up, true);
    shoal_status_t r = f_memcpy(d, s, n, st);
    __atomic_store_n(&copy_done, 1, __ATOMIC_SEQ_CST);
    return r;
  }
  shoal_status_t r = f_memcpy(d, s, n, st);
  if (slow_copies && on) {
    atomic_store(&copy_since, mono_ns());
    __atomic_add_fetch(&copy_started, 1, __ATOMIC_SEQ_CST);
  }
  return r;
}
/* the copy's end, seen by whoever asks first: copy_done is stored before any answer that follows it */
static bool copy_over(void) {
  int64_t t0 = atomic_load(&copy_since);
  if (!t0) return true;
  bool fed = __atomic_load_n(&x, __ATOMIC_SEQ_CST) != 0;
  if (!fed && mono_ns() - t0 < COPY_GIVE_UP_NS) return false;
  if (!fed) atomic_store(&copy_gave_up, true);
  __atomic_store_n(&copy_done, 1, __ATOMIC_SEQ_CST);
  atomic_store(&copy_since, 0);
  return true;
}
static shoal_status_t s_stream_sync(void *st) {
  (void)st;
  while (!copy_over()) sched_yield();
  return SHOAL_OK;
}
static shoal_status_t s_event_create(void **e) { return (*e = calloc(1, sizeof(int64_t))) ? SHOAL_OK : SHOAL_ERR_NOMEM; }
static shoal_status_t s_event_destroy(void *e) { return free(e), SHOAL_OK; }
static shoal_status_t s_event_record(void *e, void *st) { return *(int64_t *)e = atomic_load(&copy_since), SHOAL_OK; }
static shoal_status_t s_event_sync(void *e) {
  while (*(int64_t *)e && !copy_over()) sched_yield();
  return SHOAL_OK;
}
static shoal_status_t s_event_query(void *e, int *done) { return *done = !*(int64_t *)e || copy_over(), SHOAL_OK; }
static shoal_gpu_ops_t slow;

/* PE 0 puts 64 KiB of pattern tag into PE 1's device heap (host source, so PE 0 copies nothing) while PE 1's copy
 * waits (how: the caller's backend flags) until PE 2's fetch_add, sent once the copy has begun, has reached PE 1.
 * PE 0's quiet must find the copy made (copy_done); PE 1 must have answered PE 2 meanwhile (stage names the step
 * that waited, for the message) and have every byte. */
static void gated_put(unsigned char *buf, unsigned char *h, unsigned tag, const char *stage) {
  if (me == 0) {
    fill(h, 65536, 0, tag);
    shmem_putmem(buf, h, 65536, 1);
    shmem_quiet();
    CHECK(shmem_long_atomic_fetch(&copy_done, 1) == 1, "the put's quiet returned before the target's copy was done");
  } else if (me == 2) {
    while (shmem_long_atomic_fetch(&copy_started, 1) == 0) sched_yield();
    CHECK(shmem_long_atomic_fetch_add(&x, 1, 1) == 0, "fetch_add's old value");
  }
  shmem_barrier_all();
  if (me == 1) {
    CHECK(!atomic_load(&copy_gave_up), "PE 1 did not answer PE 2's fetch_add while its device copy %s (it gave up "
          "waiting after %lld s)", stage, COPY_GIVE_UP_NS / 1000000000);
    CHECK(bad_at(buf, 65536, 0, tag) == 65536, "PE 0's put: byte %zu", bad_at(buf, 65536, 0, tag));
    CHECK(x == 1, "x %ld", x);
  }
  shmem_barrier_all();
}

/* PE 0 puts 64 KiB into PE 1's device heap (host source, so PE 0 copies nothing). Once PE 1's copy has begun, PE 2
 * does a fetch_add on PE 1's host heap (x), which PE 1 must answer while its copy runs: the copy ends only then.
 * PE 0's quiet must wait for the copy's end (copy_done, read after it). Then PE 1 checks every byte. */
static void copy_async(unsigned char *buf) {
  unsigned char *h = malloc(65536);
  CHECK(h != NULL, "allocation");
  if (!h) return;
  if (me == 1) slow_copies = true;
  shmem_barrier_all();
  gated_put(buf, h, 7, "ran");
  /* Copies found done together are answered together (MSG_REPN): PE 0 puts JOIN chunks, whose copies all end once
   * PE 2's fetch_add has come after they all began; the answers went fewer to a message than one each. Two rounds:
   * the copier's thread marks them done one by one, and the target may look between two. */
  enum { JOIN = 4 };
  unsigned char *hj = malloc((size_t)JOIN * 65536);
  CHECK(hj != NULL, "allocation");
  uint64_t joined0 = 0;
  if (me == 1) {
    shoal_tl_ofi_info_t info;
    shoal_tl_ofi_query(&info);
    joined0 = info.answers_joined;
  }
  for (unsigned round = 0; round < 2; round++) {
    if (me == 1) x = 0, copy_started = 0, copy_done = 0;
    shmem_barrier_all();
    if (me == 0 && hj) {
      for (unsigned c = 0; c < JOIN; c++) {
        fill(hj + (size_t)c * 65536, 65536, 0, 20 + round * JOIN + c);
        shmem_putmem_nbi(buf + (size_t)c * 65536, hj + (size_t)c * 65536, 65536, 1);
      }
      shmem_quiet();
    } else if (me == 2) {
      while (shmem_long_atomic_fetch(&copy_started, 1) < JOIN) sched_yield();
      CHECK(shmem_long_atomic_fetch_add(&x, 1, 1) == 0, "fetch_add's old value (round %u)", round);
    }
    shmem_barrier_all();
    if (me == 1)
      for (unsigned c = 0; c < JOIN; c++)
        CHECK(bad_at(buf + (size_t)c * 65536, 65536, 0, 20 + round * JOIN + c) == 65536, "round %u, put %u: byte %zu",
              round, c, bad_at(buf + (size_t)c * 65536, 65536, 0, 20 + round * JOIN + c));
  }
  if (me == 1) {
    shoal_tl_ofi_info_t info;
    shoal_tl_ofi_query(&info);
    CHECK(!atomic_load(&copy_gave_up), "a copy gave up waiting for PE 2's fetch_add");
    CHECK(info.answers_joined - joined0 >= 2, "%llu of %u answers went several to a message (want 2 or more)",
          (unsigned long long)(info.answers_joined - joined0), 2 * JOIN);
    slow_copies = false;
  }
  shmem_barrier_all();
  free(h), free(hj);
}

/* copy-enqueue: as copy-async, but the backend's call that enqueues PE 1's copy into its device heap is what waits
 * for PE 2's fetch_add (a driver call that blocks, as cudaMemcpyAsync may behind the driver's lock). A target whose
 * transport thread enqueues its copies itself (under the lock that orders requests) serves nothing meanwhile and
 * fails after COPY_GIVE_UP_NS; through the copier's thread (SHOAL_GPU_COPIER) it answers PE 2 at once. Where PE 1's
 * copier cannot run (one CPU) the check is skipped with a line. */
static void copy_enqueue(unsigned char *buf) {
  unsigned char *h = malloc(65536);
  CHECK(h != NULL, "allocation");
  if (!h) return;
  if (me == 0) /* two puts: the first finds out whether the heap's events can be asked, the second takes the copier */
    for (unsigned r = 0; r < 2; r++) {
      fill(h, 65536, 0, 3 + r);
      shmem_putmem(buf, h, 65536, 1);
      shmem_quiet();
    }
  shmem_barrier_all();
  if (me == 1) {
    CHECK(bad_at(buf, 65536, 0, 4) == 65536, "PE 0's second put: byte %zu", bad_at(buf, 65536, 0, 4));
    cy_up = shoal_gpu_copier_up();
    slow_enqueue = cy_up;
  }
  shmem_barrier_all();
  if (!shmem_long_g(&cy_up, 1)) {
    if (me == 1) printf("gpu_fake_far: PE 1's copier does not run (one CPU): copy-enqueue not checked\n");
    free(h);
    return;
  }
  gated_put(buf, h, 8, "was being enqueued");
  free(h);
}

static void amo_ops32(uint32_t *obj, int pe) {
  /* slot obj (on pe) is this PE's alone: each value is known */
  shmem_uint32_atomic_set(obj, 5, pe);
  CHECK(shmem_uint32_atomic_fetch(obj, pe) == 5, "set/fetch");
  CHECK(shmem_uint32_atomic_swap(obj, 9, pe) == 5, "swap");
  CHECK(shmem_uint32_atomic_compare_swap(obj, 1, 2, pe) == 9, "cswap (fails)");
  CHECK(shmem_uint32_atomic_compare_swap(obj, 9, 0xfffffff0u, pe) == 9, "cswap");
  shmem_uint32_atomic_inc(obj, pe);
  CHECK(shmem_uint32_atomic_fetch_inc(obj, pe) == 0xfffffff1u, "fetch_inc");
  shmem_uint32_atomic_add(obj, 20, pe); /* wraps at 32 bits: 0xfffffff2 + 20 = 6 */
  CHECK(shmem_uint32_atomic_fetch_add(obj, 1, pe) == 6, "fetch_add wraps at 32 bits");
  shmem_uint32_atomic_and(obj, 0x6, pe);
  CHECK(shmem_uint32_atomic_fetch_and(obj, 0xff, pe) == 6, "and");
  shmem_uint32_atomic_or(obj, 0x30, pe);
  CHECK(shmem_uint32_atomic_fetch_or(obj, 0x100, pe) == 0x36, "or");
  shmem_uint32_atomic_xor(obj, 0x3, pe);
  CHECK(shmem_uint32_atomic_fetch_xor(obj, 0xf, pe) == 0x135, "xor");
  CHECK(shmem_uint32_atomic_fetch(obj, pe) == 0x13a, "final %#x", shmem_uint32_atomic_fetch(obj, pe));
  CHECK(shmem_int_atomic_fetch_add((int *)obj, -0x13b, pe) == 0x13a && shmem_int_atomic_fetch((int *)obj, pe) == -1,
        "int fetch_add");
}

static void amo_ops64(uint64_t *obj, int pe) {
  shmem_uint64_atomic_set(obj, 5, pe);
  CHECK(shmem_uint64_atomic_fetch(obj, pe) == 5, "set/fetch");
  CHECK(shmem_uint64_atomic_swap(obj, 9, pe) == 5, "swap");
  CHECK(shmem_uint64_atomic_compare_swap(obj, 1, 2, pe) == 9, "cswap (fails)");
  CHECK(shmem_uint64_atomic_compare_swap(obj, 9, 0xfffffffffull, pe) == 9, "cswap");
  shmem_uint64_atomic_inc(obj, pe);
  CHECK(shmem_uint64_atomic_fetch_inc(obj, pe) == 0x1000000000ull, "fetch_inc: 64 bits carried");
  shmem_uint64_atomic_add(obj, 1ull << 40, pe);
  CHECK(shmem_uint64_atomic_fetch_add(obj, 1, pe) == 0x11000000001ull, "fetch_add");
  shmem_uint64_atomic_and(obj, 0x10000000003ull, pe);
  CHECK(shmem_uint64_atomic_fetch_and(obj, ~0ull, pe) == 0x10000000002ull, "and");
  shmem_uint64_atomic_or(obj, 0x30, pe);
  CHECK(shmem_uint64_atomic_fetch_or(obj, 0x100, pe) == 0x10000000032ull, "or");
  shmem_uint64_atomic_xor(obj, 0x3, pe);
  CHECK(shmem_uint64_atomic_fetch_xor(obj, 0xf, pe) == 0x10000000131ull, "xor");
  CHECK(shmem_uint64_atomic_fetch(obj, pe) == 0x1000000013eull, "final");
  CHECK(shmem_long_atomic_fetch_add((long *)obj, -0x1000000013fl, pe) == 0x1000000013el &&
        shmem_long_atomic_fetch((long *)obj, pe) == -1, "long fetch_add");
}

int main(int argc, char **argv) {
  setenv("SHOAL_DEVICE_SYMMETRIC_SIZE", "16M", 1);
  /* The fake with events (copies end at once unless slow_copies): targets enqueue their staged copies and answer
   * them from their progress, as on a GPU; gpu_proxy's far runs keep the plain fake (copies waited for). */
  slow = fake;
  slow.memcpy = s_memcpy, slow.stream_sync = s_stream_sync, slow.event_create = s_event_create;
  slow.event_destroy = s_event_destroy, slow.event_record = s_event_record, slow.event_sync = s_event_sync;
  slow.event_query = s_event_query;
  shoal_gpu_test_backend = &slow;
  const char *mode = argc > 1 ? argv[1] : "";
  /* pipeline-dc: delivery-complete writes, so no lazy fence: each chunk's request waits for its write's delivery;
   * pipeline-twomsg: no remote CQ data, so each request goes as a message right behind its write */
  const bool pipe = !strncmp(mode, "pipeline", 8);
  if (pipe)
    shoal_tl_ofi_test_force(SHOAL_TL_OFI_FORCE_SLOW_DPUT | (strcmp(mode, "pipeline-dc") ? 0 : SHOAL_TL_OFI_FORCE_DC) |
                            (strcmp(mode, "pipeline-twomsg") ? 0 : SHOAL_TL_OFI_FORCE_NO_CQ_SIGNAL));
  shmem_init();
  me = shmem_my_pe(), npes = shmem_n_pes();
  int next = (me + 1) % npes, prev = (me + npes - 1) % npes;
  CHECK(shmemx_gpu_available() == 1, "the device heap is not up (near and far PEs have theirs)");
  if (!shmemx_gpu_available()) return 1;

  /* The peer table: another node's PE is SHMEMX_DEVICE_DELTA_FAR, in the host copy and the device one. */
  const char *np = getenv("SHOAL_NODE_PES");
  long k = np ? atol(np) : 0;
  shmemx_device_state_t st;
  CHECK(!shmemx_device_state_get(&st, sizeof st), "device state");
  int nfar = 0;
  for (int p = 0; p < npes; p++) {
    bool far = k > 0 && p / k != me / k;
    nfar += far;
    CHECK((st.delta[p] == SHMEMX_DEVICE_DELTA_FAR) == far, "PE %d: delta %lld, far %d", p, (long long)st.delta[p],
          far);
    CHECK(st.peer_delta[p] == st.delta[p], "PE %d: the device copy of the peer table differs", p);
  }
  /* The device forms' team slots (session 28): set up with far PEs too, where the kernels reach far members through
   * the proxy: WORLD's row of the table holds each near member's heap base and NULL for a far one, and each slot has
   * a scratch (the far in-kernel reductions'). Builds without the kernels (no nvcc) have no slots. */
  shmemx_coll_device_info_t ci;
  const int have_ci = shmemx_coll_device_info(&ci, sizeof ci) == 0;
  CHECK(have_ci || !SHOAL_HAVE_COLL_GPU, "shmemx_coll_device_info: no team slots");
  if (have_ci) {
    const int slot = ci.team_slot[0]; /* WORLD: the pool's first team */
    char *row[SHMEMX_DEVICE_MAX_PES];
    CHECK(slot >= 0 && (uint32_t)slot < ci.slots, "WORLD's slot %d", slot);
    f_memcpy(row, ci.table + (size_t)slot * npes, sizeof(char *) * (size_t)npes, NULL);
    for (int p = 0; p < npes; p++)
      CHECK(row[p] == (st.delta[p] == SHMEMX_DEVICE_DELTA_FAR ? NULL : st.heap_base + st.delta[p]),
            "WORLD's slot table[%d] %p", p, (void *)row[p]);
    CHECK(nfar ? ci.scratch_bytes >= 4096 && ci.scratch_off + ci.slots * ci.scratch_bytes <= st.heap_size
               : ci.scratch_bytes == 0, "scratch %llu bytes per slot at %llu (far PEs: %d)",
          (unsigned long long)ci.scratch_bytes, (unsigned long long)ci.scratch_off, nfar);
  }
  /* With far PEs the transport's staging region is page-locked for the GPU's copies (a whole number of 16 KiB
   * slots per PE), and unlocked by shmem_finalize (below). */
  CHECK(!nfar || (registered_at && registered >= (size_t)npes * (16 << 10) && registered % 4096 == 0),
        "staging region page-locked: %zu bytes at %p", registered, registered_at);
  CHECK(nfar || !registered_at, "a job without far PEs page-locked %zu bytes", registered);

  /* Symmetric device buffers: recv[src] takes PE src's puts; src holds this PE's pattern; misc the flags. */
  unsigned char *recv = shmem_malloc_with_hints(BIG * (size_t)npes, SHMEMX_MALLOC_DEVICE);
  unsigned char *dsrc = shmem_malloc_with_hints(BIG, SHMEMX_MALLOC_DEVICE);
  unsigned char *dloc = shmem_malloc_with_hints(BIG, SHMEMX_MALLOC_DEVICE); /* a device local buffer */
  uint64_t *flags = shmem_malloc_with_hints(8 * sizeof(uint64_t) * (size_t)npes, SHMEMX_MALLOC_DEVICE);
  uint64_t *cnt64 = shmem_malloc_with_hints(2 * sizeof(uint64_t), SHMEMX_MALLOC_DEVICE);
  uint32_t *cnt32 = (uint32_t *)(cnt64 + 1);
  uint64_t *obj64 = shmem_malloc_with_hints(sizeof(uint64_t) * (size_t)npes, SHMEMX_MALLOC_DEVICE);
  uint32_t *obj32 = shmem_malloc_with_hints(sizeof(uint32_t) * (size_t)npes, SHMEMX_MALLOC_DEVICE);
  int *ints = shmem_malloc_with_hints(sizeof(int) * 300, SHMEMX_MALLOC_DEVICE);
  unsigned char *host = malloc(BIG), *back = malloc(BIG);
  CHECK(recv && dsrc && dloc && flags && cnt64 && obj64 && obj32 && ints && host && back, "allocations");
  CHECK(shoal_gpu_heap_owns(recv) && shoal_gpu_heap_owns(flags), "device heap");

  if (!strcmp(mode, "copy-enqueue")) {
    CHECK(npes == 3 && k == 1, "copy-enqueue wants 3 PEs, each its own node (has %d, SHOAL_NODE_PES=%ld)", npes, k);
    if (npes == 3 && k == 1) copy_enqueue(recv);
    shmem_finalize();
    return fails ? 1 : 0;
  }
  if (!strcmp(mode, "copy-async")) {
    CHECK(npes == 3 && k == 1, "copy-async wants 3 PEs, each its own node (has %d, SHOAL_NODE_PES=%ld)", npes, k);
    if (npes == 3 && k == 1) copy_async(recv);
    shmem_finalize();
    return fails ? 1 : 0;
  }
  if (pipe) {
    pipe_mode = mode;
    pipeline(dloc, next, prev);
    shmem_finalize();
    return fails ? 1 : 0;
  }
  /* Bad input, from PE 0 to the last PE (another node): one line naming routine and argument, a nonzero exit. */
  if (*mode) {
    const shoal_space_t *ds = &shoal_g.space[SHOAL_SPACE_DEVICE];
    void *other = NULL; /* device memory of this PE outside the symmetric heap */
    CHECK(fake.mem_alloc(&other, 4096) == SHOAL_OK, "fake device allocation");
    if (me == 0 && !strcmp(mode, "bad_range")) /* starts in the device heap, runs past its end */
      shmem_putmem((char *)ds->base + ds->size - 8, host, 64, npes - 1);
    else if (me == 0 && !strcmp(mode, "bad_nonsym")) /* device memory, not symmetric */
      shmem_getmem(host, other, 64, npes - 1);
    else if (me == 0 && !strcmp(mode, "bad_amo")) /* a misaligned device address */
      shmem_uint64_atomic_add((uint64_t *)(recv + 4), 1, npes - 1);
    else if (me == 0 && !strcmp(mode, "bad_pe"))
      shmem_putmem(recv, host, 8, npes);
    shmem_barrier_all();
    shmem_finalize();
    return 0;
  }

  memset(flags, 0, 8 * sizeof(uint64_t) * (size_t)npes);
  memset(obj64, 0, sizeof(uint64_t) * (size_t)npes);
  memset(obj32, 0, sizeof(uint32_t) * (size_t)npes);
  *cnt64 = 0, *cnt32 = 0;
  fill(dsrc, BIG, me, 1);

  /* The staging ring's footprint: small puts reuse the first places of the ring, not its whole slot (4 MiB at 2-3
   * PEs), so the bytes stay in the caches. At most 16 chunks fly (STAGE_INFLIGHT), each place here 4099 bytes
   * rounded to 8, an 8-byte tag and the 48-byte request: 48 puts may reach 17 x 4160 bytes (16 places, and a 17th
   * while the first is unanswered; before: 48 x 4160, the ring walked on). The first staged puts of the job. Each to
   * a place of its own: puts to one address without a fence between them may land in any order (spec 9.11.1; a
   * chunk whose request came before its bytes is done at its resend, after later ones). */
  enum { NP = 48, SZ = 4099 };
  if (st.delta[next] == SHMEMX_DEVICE_DELTA_FAR) {
    for (unsigned i = 0; i < NP; i++) {
      fill(host, SZ, me, 200 + i);
      shmem_putmem(recv + (size_t)me * BIG + (size_t)i * SZ, host, SZ, next);
    }
    shmem_quiet();
    shoal_tl_ofi_info_t info;
    shoal_tl_ofi_query(&info);
    CHECK(info.stage_reach > 0 && info.stage_reach <= 17 * 4160, "%d puts of %d bytes used %zu bytes of the staging "
          "ring (want at most %d)", NP, SZ, info.stage_reach, 17 * 4160);
  }
  shmem_barrier_all();
  if (st.delta[prev] == SHMEMX_DEVICE_DELTA_FAR)
    for (unsigned i = 0; i < NP; i++)
      CHECK(bad_at(recv + (size_t)prev * BIG + (size_t)i * SZ, SZ, prev, 200 + i) == SZ,
            "small staged put %u of %d from PE %d", i, NP, prev);
  shmem_barrier_all();

  /* Puts to next from host and from device local buffers, then gets from next; sizes 1, odd, and several chunks. */
  static const size_t sizes[] = {1, 7, 4099, (256 << 10) + 3, BIG};
  unsigned tag = 10;
  for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
    size_t n = sizes[si];
    for (int from_dev = 0; from_dev < 2; from_dev++, tag++) {
      memset(recv + (size_t)prev * BIG, 0xee, BIG);
      shmem_barrier_all();
      unsigned char *src = from_dev ? dloc : host;
      fill(src, n, me, tag);
      if (si % 2) shmem_putmem(recv + (size_t)me * BIG, src, n, next);
      else {
        shmem_putmem_nbi(recv + (size_t)me * BIG, src, n, next);
        shmem_quiet();
      }
      memset(src, 0, n); /* blocking put: the source is reusable on return */
      shmem_barrier_all();
      size_t at = bad_at(recv + (size_t)prev * BIG, n, prev, tag);
      CHECK(at == n, "put of %zu bytes from a %s buffer from PE %d: byte %zu is %#x", n, from_dev ? "device" : "host",
            prev, at, recv[(size_t)prev * BIG + at]);
      CHECK(n == BIG || recv[(size_t)prev * BIG + n] == 0xee, "put of %zu bytes wrote past its end", n);
      unsigned char *dst = from_dev ? dloc : back;
      memset(dst, 0, n);
      shmem_getmem(dst, dsrc, n, next);
      at = bad_at(dst, n, next, 1);
      CHECK(at == n, "get of %zu bytes into a %s buffer from PE %d: byte %zu", n, from_dev ? "device" : "host", next,
            at);
    }
  }
  shmem_barrier_all();

  /* Strided and single-element forms. */
  int vals[100];
  for (int i = 0; i < 100; i++) vals[i] = me * 1000 + i;
  memset(ints, 0, sizeof(int) * 300);
  shmem_barrier_all();
  shmem_int_iput(ints, vals, 3, 1, 100, next);
  shmem_int_p(ints + 299, -me - 1, next);
  shmem_barrier_all();
  for (int i = 0; i < 100; i++)
    if (ints[3 * i] != prev * 1000 + i) {
      CHECK(0, "iput element %d: %d", i, ints[3 * i]);
      break;
    }
  CHECK(ints[1] == 0 && ints[299] == -prev - 1, "iput stride / int_p: %d %d", ints[1], ints[299]);
  int got[100];
  shmem_int_iget(got, ints, 1, 3, 100, next);
  for (int i = 0; i < 100; i++)
    if (got[i] != me * 1000 + i) {
      CHECK(0, "iget element %d: %d", i, got[i]);
      break;
    }
  CHECK(shmem_int_g(ints + 299, next) == -me - 1, "int_g");
  shmem_barrier_all();

  /* Every AMO on 4 and 8 bytes, on this PE's own object at next; then a counter on PE 0 that every PE adds to. */
  amo_ops32(obj32 + me, next);
  amo_ops64(obj64 + me, next);
  enum { K = 40 };
  uint64_t mx = 0;
  for (int i = 0; i < K; i++) {
    uint64_t o = shmem_uint64_atomic_fetch_add(cnt64, 1, 0);
    CHECK(o < (uint64_t)K * npes, "fetch_add returned %llu", (unsigned long long)o);
    mx = o > mx ? o : mx;
    shmem_uint32_atomic_add(cnt32, 3, 0);
  }
  shmem_quiet();
  shmem_barrier_all();
  if (me == 0) {
    CHECK(*cnt64 == (uint64_t)K * npes, "counter %llu, want %d", (unsigned long long)*cnt64, K * npes);
    CHECK(*cnt32 == 3u * K * npes, "counter32 %u, want %d", *cnt32, 3 * K * npes);
  }
  CHECK(obj32[prev] == 0xffffffffu && obj64[prev] == ~0ull, "AMO results at the target: %#x %#llx", obj32[prev],
        (unsigned long long)obj64[prev]);
  shmem_barrier_all();

  /* Ordering: put, quiet, flag put; put, fence, flag AMO; put_signal set and add. The target waits on its own device
   * flag (which its progress thread fills, the PE polling only memory), then checks the data. */
  uint64_t *fl = flags + 8 * (size_t)me;       /* my flags at next */
  uint64_t *pf = flags + 8 * (size_t)prev;     /* prev's flags here */
  unsigned char *rmine = recv + (size_t)me * BIG, *rprev = recv + (size_t)prev * BIG;
  for (int round = 0; round < 4; round++) {
    unsigned t = 40 + (unsigned)round;
    fill(dloc, BIG, me, t);
    uint64_t one = (uint64_t)round + 1;
    if (round == 0) {
      shmem_putmem(rmine, dloc, BIG, next);
      shmem_quiet();
      shmem_putmem(fl + 0, &one, sizeof one, next);
    } else if (round == 1) {
      shmem_putmem_nbi(rmine, dloc, BIG, next);
      shmem_fence();
      shmem_uint64_atomic_set(fl + 0, one, next);
    } else if (round == 2) {
      shmem_putmem_signal(rmine, dloc, BIG, fl + 1, 7, SHMEM_SIGNAL_SET, next);
    } else {
      shmem_putmem_signal_nbi(rmine, dloc, BIG, fl + 1, 5, SHMEM_SIGNAL_ADD, next);
      shmem_quiet();
    }
    volatile uint64_t *w = round < 2 ? pf + 0 : pf + 1;
    uint64_t want = round < 2 ? one : round == 2 ? 7 : 12;
    CHECK(wait_word(w, want), "round %d: flag %llu, want %llu", round, (unsigned long long)*w,
          (unsigned long long)want);
    size_t at = bad_at(rprev, BIG, prev, t);
    CHECK(at == BIG, "round %d: the flag came before the data (byte %zu)", round, at);
    shmem_barrier_all();
  }
  /* The host routines that take a device flag: shmem_signal_fetch is a local read, refused for device memory. */

  /* The stream forms to a far PE: the stream's work, then the host path. */
  fill(dloc, 4099, me, 77);
  shmemx_putmem_on_stream(rmine, dloc, 4099, next, NULL);
  shmemx_quiet_on_stream(NULL);
  shmem_barrier_all();
  CHECK(bad_at(rprev, 4099, prev, 77) == 4099, "putmem_on_stream");
  shmem_barrier_all(); /* checked before prev's next put lands */

  /* GPU memory as the local buffer with a far PE's host heap: the transport reads host memory only, so the bytes
   * are staged with the backend's copy. The fake GPU memory is host memory a provider could read, so the data alone
   * cannot show a missing staging: the copy count does (at least one per 1 MiB chunk). */
  {
    unsigned char *hh = shmem_malloc(BIG); /* the host heap */
    uint64_t *hflag = shmem_calloc(1, sizeof *hflag);
    const bool next_far = st.delta[next] == SHMEMX_DEVICE_DELTA_FAR;
    CHECK(hh && hflag, "host heap allocations");
    fill(dloc, BIG, me, 91);
    int c0 = __atomic_load_n(&mem_copies, __ATOMIC_RELAXED);
    shmem_putmem(hh, dloc, BIG, next);
    int copies = __atomic_load_n(&mem_copies, __ATOMIC_RELAXED) - c0;
    CHECK(!next_far || copies >= 2, "putmem from GPU memory to a far host heap: %d staging copies", copies);
    shmem_barrier_all();
    CHECK(bad_at(hh, BIG, prev, 91) == BIG, "putmem from GPU memory to a far host heap: byte %zu",
          bad_at(hh, BIG, prev, 91));
    memset(dloc, 0, BIG);
    c0 = __atomic_load_n(&mem_copies, __ATOMIC_RELAXED);
    shmem_getmem(dloc, hh, BIG, next); /* next's copy holds this PE's pattern */
    copies = __atomic_load_n(&mem_copies, __ATOMIC_RELAXED) - c0;
    CHECK(!next_far || copies >= 2, "getmem into GPU memory from a far host heap: %d staging copies", copies);
    CHECK(bad_at(dloc, BIG, me, 91) == BIG, "getmem into GPU memory: byte %zu", bad_at(dloc, BIG, me, 91));
    shmem_barrier_all();
    fill(dloc, 4099, me, 92);
    shmem_putmem_signal(hh, dloc, 4099, hflag, 9, SHMEM_SIGNAL_SET, next);
    shmem_signal_wait_until(hflag, SHMEM_CMP_EQ, 9);
    CHECK(bad_at(hh, 4099, prev, 92) == 4099, "putmem_signal from GPU memory to a far host heap");
    shmem_barrier_all();
    /* Symmetric host buffers (heap, static data) are known host memory: no backend query per operation. */
    {
      static uint64_t sword;
      unsigned char *hh2 = shmem_malloc(64);
      const int q0 = __atomic_load_n(&ptr_queries, __ATOMIC_RELAXED);
      shmem_putmem(hh2, hh, 64, next);
      shmem_getmem(hh, hh2, 64, next);
      shmem_uint64_put(&sword, (uint64_t *)hh, 1, next);
      shmem_uint64_get((uint64_t *)hh, &sword, 1, next);
      const int q = __atomic_load_n(&ptr_queries, __ATOMIC_RELAXED) - q0;
      CHECK(q == 0, "RMA between symmetric host buffers asked the backend %d times whether they are GPU memory", q);
      shmem_barrier_all();
      shmem_free(hh2);
    }
    shmem_free(hflag);
    shmem_free(hh);
  }

  /* A private context (its own endpoint; what a proxy thread would use): put, get, AMO on the device heap. */
  shmem_ctx_t cx;
  CHECK(!shmem_ctx_create(SHMEM_CTX_PRIVATE, &cx), "ctx_create");
  fill(host, 300000, me, 88);
  shmem_ctx_putmem(cx, rmine, host, 300000, next);
  shmem_ctx_uint64_atomic_add(cx, fl + 2, 3, next);
  shmem_ctx_quiet(cx);
  CHECK(shmem_ctx_uint64_atomic_fetch(cx, fl + 2, next) == 3, "ctx AMO");
  shmem_barrier_all();
  CHECK(bad_at(rprev, 300000, prev, 88) == 300000 && pf[2] == 3, "ctx put / add to a far device heap");
  memset(back, 0, 300000);
  shmem_ctx_getmem(cx, back, rmine, 300000, next);
  CHECK(bad_at(back, 300000, me, 88) == 300000, "ctx get");
  shmem_ctx_destroy(cx);
  shmem_barrier_all();

  shmem_free(recv), shmem_free(dsrc), shmem_free(dloc), shmem_free(flags), shmem_free(cnt64), shmem_free(obj64);
  shmem_free(obj32), shmem_free(ints);
  free(host), free(back);
  shmem_finalize();
  CHECK(!registered_at, "shmem_finalize left %zu bytes page-locked", registered);
  if (fails) return 1;
  if (me == 0) printf("gpu_fake_far: %d PEs, %d far from PE 0: ok\n", npes, nfar);
  return 0;
}
