/* Unit tests of the libfabric transport (runtime/transport/ofi/) over tcp;ofi_rxm on loopback: run with
 * FI_PROVIDER=tcp FI_TCP_IFACE=lo (meson sets both); exit 77 when libfabric has no tcp provider.
 *
 * 2, 3 and 4 forked processes play the PEs over a fake bootstrap (an all-gather through shared memory, as in
 * test_boot.c). Each registers a heap buffer and a "static data" buffer, then: blocking puts and gets of 1 B to
 * 4 MiB on a ring, every byte checked and the bytes around poisoned; put_nbi/get_nbi batches completed by quiet;
 * puts seen by a PE that makes no libfabric call (the progress thread); every AMO op on every type of spec 9.8 under
 * contention (sums, swap chains whose values must each come out once, compare_swap with one owner, CAS loops,
 * bitwise masks); fence ordering of data before a flag (put and AMO flags); contexts with endpoints of their own
 * (test_ctx); and fini leaves no descriptor or thread.
 * The AMO and ordering parts run twice: with the provider's native atomics, and with the message fallback and
 * delivery-complete writes forced. An idle PE must use no CPU (no spinning progress thread).
 *
 * `test_ofi bench` instead prints put/get/fetch_add latency and put bandwidth between 2 processes. */
#include "comm.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <rdma/fabric.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAXP 4
#define MIB ((size_t)1 << 20)
/* The heap buffer of each PE: [RMA target | GET source | AMO slots | fence area] */
#define RMA_OFF 0
#define RMA_LEN (4 * MIB + 4096)
#define GET_OFF (RMA_OFF + RMA_LEN)
#define GET_LEN (4 * MIB + 4096)
#define AMO_OFF (GET_OFF + GET_LEN)
#define AMO_LEN (64 * 1024)
#define FEN_OFF (AMO_OFF + AMO_LEN)
#define FEN_ROUNDS 24
#define FEN_BLOCK (64 * 1024)
#define FEN_LEN ((size_t)FEN_ROUNDS * FEN_BLOCK + 4096)
#define SIG_OFF (FEN_OFF + FEN_LEN)
#define SIG_LEN (8 * MIB) /* more than a loopback socket takes at once: still sending at the signal */
#define HEAP_LEN (SIG_OFF + SIG_LEN)
#define NAMO 40 /* AMOs of each kind per PE per type */

static const shoal_tl_ops_t *tl = &shoal_tl_ofi_ops;

/* ---- the fake bootstrap: an all-gather through a shared page, for forked PEs ---- */
typedef struct {
  _Atomic int arrived, gen;
  char slot[MAXP][1024];
  _Atomic int winners[SHOAL_TL_NTYPES];
  uint64_t swapped[SHOAL_TL_NTYPES][MAXP][NAMO]; /* old values each PE got from its swaps */
  char msg[MAXP][256];                            /* first failure of each PE */
  _Atomic int go;                                 /* test_remote_completion's round */
  _Atomic int phase;                              /* test_polling_target's */
} shared_t;
static shared_t *sh;
static int np;

static void sync_round(void) {
  int g = sh->gen;
  if (++sh->arrived == np) {
    sh->arrived = 0;
    sh->gen = g + 1;
  } else {
    while (sh->gen == g) usleep(50);
  }
}
static shoal_status_t fake_allgather(shoal_boot_t *b, const void *in, void *out, size_t len) {
  if (len > sizeof sh->slot[0]) return SHOAL_ERR_INVAL;
  memcpy(sh->slot[b->rank], in, len);
  sync_round();
  for (int p = 0; p < np; p++) memcpy((char *)out + (size_t)p * len, sh->slot[p], len);
  sync_round(); /* nobody writes the slots again before everyone has read them */
  return SHOAL_OK;
}
static shoal_status_t fake_barrier(shoal_boot_t *b) { return fake_allgather(b, "", (char[MAXP]){0}, 1); }
static shoal_status_t fake_init(shoal_boot_t *b) { return SHOAL_OK; }
static void fake_abort(shoal_boot_t *b, int status, const char *msg) {}
static void fake_fini(shoal_boot_t *b) {}
static const shoal_boot_ops_t fake_ops = {.size = sizeof(shoal_boot_ops_t), .name = "fake", .init = fake_init,
  .allgather = fake_allgather, .barrier = fake_barrier, .abort = fake_abort, .fini = fake_fini};

/* ---- a PE's checks: the first failure is kept as one line for the parent ---- */
static int me;
static shoal_boot_t boot;
static char *heap;
static char statics[64 * 1024];
static int fails;
#define CHECK(cond, ...)                                                                                               \
  do {                                                                                                                 \
    if (!(cond)) {                                                                                                     \
      if (!fails++) snprintf(sh->msg[me], sizeof sh->msg[me], __VA_ARGS__);                                           \
      fprintf(stderr, "PE %d: ", me), fprintf(stderr, __VA_ARGS__), fputc('\n', stderr);                              \
    }                                                                                                                  \
  } while (0)
#define OK(call) CHECK((call) == SHOAL_OK, "%s failed (line %d)", #call, __LINE__)
static void barrier(void) { fake_barrier(&boot); }

static unsigned char pat(int pe, size_t size, size_t i) {
  return (unsigned char)(pe * 31 + size * 7 + i * 13 + (i >> 8));
}

static int count_dir(const char *path) {
  DIR *d = opendir(path);
  int n = 0;
  for (struct dirent *e; d && (e = readdir(d));) n += e->d_name[0] != '.';
  if (d) closedir(d);
  return n;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}
static double cpu_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

/* ---- RMA ---- */
static const size_t sizes[] = {1, 2, 3, 7, 8, 63, 64, 65, 1000, 4096, 65537, MIB, MIB + 3, 4 * MIB};
#define NSIZES (sizeof sizes / sizeof *sizes)

static void test_rma(void) {
  int right = (me + 1) % np, left = (me + np - 1) % np;
  unsigned char *src = malloc(4 * MIB + 16), *dst = malloc(4 * MIB + 16);
  for (size_t k = 0; k < NSIZES; k++) {
    size_t n = sizes[k], off = 5; /* an odd offset: nothing may assume alignment */
    for (size_t i = 0; i < n; i++) src[i] = pat(me, n, i);
    memset(heap + RMA_OFF, 0xee, n + 16);
    for (size_t i = 0; i < n + 16; i++) heap[GET_OFF + i] = (char)pat(me + 100, n, i);
    barrier();
    OK(tl->put(NULL, SHOAL_SPACE_HEAP, right, RMA_OFF + off, src, n, false));
    memset(src, 0, n); /* blocking put: src is ours again */
    memset(dst, 0xdd, n + 16);
    OK(tl->get(NULL, SHOAL_SPACE_HEAP, left, GET_OFF + off, dst + 1, n, false));
    size_t bad = n;
    for (size_t i = 0; i < n && bad == n; i++)
      if (dst[1 + i] != pat(left + 100, n, i + off)) bad = i;
    CHECK(bad == n && dst[0] == 0xdd && dst[n + 1] == 0xdd, "get of %zu bytes from PE %d: byte %zu wrong", n, left,
          bad);
    OK(tl->quiet(NULL));
    barrier();
    const unsigned char *h = (unsigned char *)heap + RMA_OFF;
    bad = n;
    for (size_t i = 0; i < n && bad == n; i++)
      if (h[off + i] != pat(left, n, i)) bad = i;
    CHECK(bad == n, "put of %zu bytes from PE %d: byte %zu is %#x, want %#x", n, left, bad, bad < n ? h[off + bad] : 0,
          bad < n ? pat(left, n, bad) : 0);
    CHECK(h[off - 1] == 0xee && h[off + n] == 0xee, "put of %zu bytes from PE %d wrote outside [%zu, %zu)", n, left,
          off, off + n);
    barrier();
  }
  /* static data: another space, another key */
  memset(statics, 0, sizeof statics);
  barrier();
  for (int i = 0; i < 100; i++) src[i] = (unsigned char)(me * 3 + i);
  OK(tl->put(NULL, SHOAL_SPACE_STATIC, right, 3, src, 100, false));
  OK(tl->quiet(NULL));
  barrier();
  bool same = true;
  for (int i = 0; i < 100; i++) same &= (unsigned char)statics[3 + i] == (unsigned char)(left * 3 + i);
  CHECK(same, "put into static data from PE %d", left);
  OK(tl->get(NULL, SHOAL_SPACE_STATIC, right, 3, dst, 100, false));
  CHECK(!memcmp(dst, src, 100), "get from static data of PE %d", right);
  /* No bad-call checks here: the slots trust their caller (comm.h: the entry points check pe and bounds once). */
  barrier();
  free(src);
  free(dst);
}

static void test_nbi(void) {
  int right = (me + 1) % np, left = (me + np - 1) % np;
  size_t total = 64 * 48 + 4 * 256 * 1024;
  unsigned char *src = malloc(total), *dst = malloc(64 * 1000 + 4 * 256 * 1024);
  for (size_t i = 0; i < total; i++) src[i] = pat(me, 77, i);
  memset(heap + RMA_OFF, 0, total);
  for (size_t i = 0; i < 64 * 1000 + 4 * 256 * 1024; i++) heap[GET_OFF + i] = (char)pat(me, 99, i);
  barrier();
  /* small ones (inject) and large ones, interleaved */
  size_t at = 0;
  for (int i = 0; i < 64; i++) {
    OK(tl->put(NULL, SHOAL_SPACE_HEAP, right, RMA_OFF + at, src + at, 48, true));
    at += 48;
    if (i % 16 == 0) {
      OK(tl->put(NULL, SHOAL_SPACE_HEAP, right, RMA_OFF + at, src + at, 256 * 1024, true));
      at += 256 * 1024;
    }
  }
  memset(dst, 0, 64 * 1000 + 4 * 256 * 1024);
  OK(tl->get(NULL, SHOAL_SPACE_HEAP, left, GET_OFF, dst, 4 * 256 * 1024, true));
  for (int i = 0; i < 64; i++)
    OK(tl->get(NULL, SHOAL_SPACE_HEAP, left, GET_OFF + 4 * 256 * 1024 + (size_t)i * 1000,
                   dst + 4 * 256 * 1024 + (size_t)i * 1000, 1000, true));
  OK(tl->quiet(NULL));
  size_t bad = SIZE_MAX;
  for (size_t i = 0; i < 64 * 1000 + 4 * 256 * 1024 && bad == SIZE_MAX; i++)
    if (dst[i] != pat(left, 99, i)) bad = i;
  CHECK(bad == SIZE_MAX, "get_nbi from PE %d: byte %zu wrong after quiet", left, bad);
  barrier();
  for (size_t i = 0; i < total && bad == SIZE_MAX; i++)
    if ((unsigned char)heap[RMA_OFF + i] != pat(left, 77, i)) bad = i;
  CHECK(bad == SIZE_MAX, "put_nbi from PE %d: byte %zu wrong after quiet", left, bad);
  barrier();
  free(src);
  free(dst);
}

/* PE 0 puts to every other PE, which only polls its own memory: the progress thread must move the data. */
static void test_passive_target(void) {
  volatile uint64_t *flag = (volatile uint64_t *)(heap + RMA_OFF);
  *flag = 0;
  memset(heap + RMA_OFF + 64, 0, MIB);
  barrier();
  if (me == 0) {
    char *big = malloc(MIB);
    memset(big, 0x3c, MIB);
    for (int p = 1; p < np; p++) OK(tl->put(NULL, SHOAL_SPACE_HEAP, p, RMA_OFF + 64, big, MIB, true));
    OK(tl->quiet(NULL)); /* the flush reads are answered by the targets' progress threads */
    uint64_t one = 0x5a5a;
    for (int p = 1; p < np; p++) OK(tl->put(NULL, SHOAL_SPACE_HEAP, p, RMA_OFF, &one, sizeof one, false));
    OK(tl->quiet(NULL));
    free(big);
  } else {
    double t0 = now();
    while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) != 0x5a5a && now() - t0 < 20) usleep(100);
    CHECK(*flag == 0x5a5a, "a PE that makes no libfabric call never saw PE 0's put (flag %#llx)",
          (unsigned long long)*flag);
    CHECK((unsigned char)heap[RMA_OFF + 64] == 0x3c && (unsigned char)heap[RMA_OFF + 64 + MIB - 1] == 0x3c,
          "the 1 MiB put before the flag is not complete");
  }
  barrier();
  /* idle: nothing on the wire, so the progress thread must sleep */
  double c0 = cpu_now(), t0 = now();
  usleep(400 * 1000);
  double used = cpu_now() - c0, wall = now() - t0;
  CHECK(used < 0.1 * wall, "an idle PE used %.0f ms of CPU in %.0f ms (a spinning thread?)", used * 1e3, wall * 1e3);
  barrier();
}

/* A PE that polls the endpoint itself (a wait) keeps its progress thread off the endpoint: 400 gets from PE 0 are
 * served by the PE's own progress calls while the thread sleeps and looks now and then. Once the PE stops polling
 * (computes), the thread serves PE 0's gets again, within its longest hold (2 ms; 1 s allowed for a loaded
 * machine). */
static void test_polling_target(void) {
  enum { NGET = 400 };
  shoal_tl_ofi_info_t a, b;
  atomic_store(&sh->phase, 0);
  barrier();
  if (me == 0) {
    uint64_t v = 0;
    for (int i = 0; i < NGET; i++)
      for (int p = 1; p < np; p++) OK(tl->get(NULL, SHOAL_SPACE_HEAP, p, GET_OFF, &v, sizeof v, false));
    atomic_store(&sh->phase, 1); /* the targets stop polling */
    while (atomic_load(&sh->phase) != np) usleep(100);
    double t0 = now();
    for (int p = 1; p < np; p++) OK(tl->get(NULL, SHOAL_SPACE_HEAP, p, GET_OFF, &v, sizeof v, false));
    double dt = now() - t0;
    CHECK(dt < 1.0, "gets from %d PEs that stopped polling took %.0f ms (their progress threads stayed off?)", np - 1,
          dt * 1e3);
    atomic_store(&sh->phase, -1);
  } else {
    shoal_tl_ofi_query(&a);
    while (atomic_load(&sh->phase) == 0) tl->progress();
    shoal_tl_ofi_query(&b);
    /* It stood back, or never woke (the PE read the bytes first, so its poll saw nothing). Where PEs and their
     * threads outnumber the CPUs, the thread wakes mostly while the kernel has its PE off the CPU, and then serves
     * rightly: checked only where they fit, printed always. */
    if (2 * np <= sysconf(_SC_NPROCESSORS_ONLN)) /* PEs and threads fit: else the thread runs while its PE waits */
      CHECK(b.thread_holds > a.thread_holds || b.thread_progress == a.thread_progress,
            "while this PE polled, its progress thread never stood back (%llu progress calls of its own for %d gets)",
            (unsigned long long)(b.thread_progress - a.thread_progress), NGET);
    if (me == 1)
      fprintf(stderr, "%d PEs: while PE 1 polled, its thread made %llu progress calls and %llu holds for %d gets\n",
              np, (unsigned long long)(b.thread_progress - a.thread_progress),
              (unsigned long long)(b.thread_holds - a.thread_holds), NGET);
    atomic_fetch_add(&sh->phase, 1);
    while (atomic_load(&sh->phase) != -1) usleep(200); /* no libfabric call: only the thread can serve */
    shoal_tl_ofi_query(&a);
    CHECK(a.thread_progress > b.thread_progress, "the thread served nothing after this PE stopped polling");
  }
  barrier();
}

/* Every sched_yield of the transport (linked in statically) comes through here, and is counted. */
static _Atomic long yields;
int sched_yield(void) {
  atomic_fetch_add(&yields, 1);
  return (int)syscall(SYS_sched_yield);
}

/* A transport wait backs off as the runtime's waits do: where PEs share CPUs (shoal_wait_init(true), as init sets
 * when the node's PEs outnumber its CPUs) it yields at its first step, so that the PE it waits for can run. (A fixed
 * 4096 polls before the first yield held a shared CPU for milliseconds: a get completed without ever yielding.)
 * The target progresses every 300 us, so that every get waits: with the target polling flat out, a get whose
 * initiator was descheduled right after posting it found its answer at the first poll (no wait, no yield), and on a
 * loaded machine (CI) that was most of them. 300 us is ~300 polls of a wait, far below the 4096 of the old code. */
static void test_wait_yields(void) {
  enum { NGET = 100 };
  atomic_store(&sh->phase, 0);
  barrier();
  if (me == 0) {
    uint64_t v = 0;
    shoal_wait_init(true);
    long y0 = atomic_load(&yields);
    for (int i = 0; i < NGET; i++) OK(tl->get(NULL, SHOAL_SPACE_HEAP, 1, GET_OFF, &v, sizeof v, false));
    long y = atomic_load(&yields) - y0;
    shoal_wait_init(false);
    atomic_store(&sh->phase, 1);
    CHECK(y >= NGET / 2, "%d gets waited with PEs sharing CPUs and yielded %ld times (want one or more per get)",
          NGET, y);
  } else if (me == 1) {
    while (atomic_load(&sh->phase) == 0) {
      tl->progress();
      usleep(300);
    }
  }
  barrier();
}

/* quiet means complete at the target: once PE 0's quiet returns (told through shared memory, no barrier's delay),
 * each target must see the last byte of every put (inject-sized, large, and nbi) and of the AMO. */
static void test_remote_completion(void) {
  static const size_t ns[] = {8, 64, 65536, 4 * MIB};
  char *src = malloc(4 * MIB);
  for (int round = 1; round <= 12; round++) { /* 1-8 puts alone (an AMO's answer would flush them), 9-12 AMOs too */
    size_t n = ns[round % 4];
    bool amo = round > 8;
    memset(heap + RMA_OFF, 0, n);
    *(volatile int64_t *)(heap + AMO_OFF) = 0;
    barrier();
    if (me == 0) {
      memset(src, round, n);
      for (int p = 1; p < np; p++) {
        if (round % 2)
          OK(tl->put(NULL, SHOAL_SPACE_HEAP, p, RMA_OFF, src, n, false));
        else
          OK(tl->put(NULL, SHOAL_SPACE_HEAP, p, RMA_OFF, src, n, true));
        if (amo)
          OK(tl->amo(NULL, SHOAL_SPACE_HEAP, p, AMO_OFF, SHOAL_TL_AMO_ADD, SHOAL_TL_INT64, &(int64_t){round}, NULL,
                     NULL));
      }
      OK(tl->quiet(NULL));
      atomic_store(&sh->go, round);
    } else {
      while (atomic_load(&sh->go) != round) SHOAL_CPU_RELAX();
      CHECK(heap[RMA_OFF] == round && heap[RMA_OFF + n - 1] == round, "%s of %zu bytes from PE 0 not complete after "
            "its quiet returned: first byte %d, last %d, want %d", round % 2 ? "put" : "put_nbi", n, heap[RMA_OFF],
            heap[RMA_OFF + n - 1], round);
      CHECK(!amo || *(volatile int64_t *)(heap + AMO_OFF) == round,
            "add from PE 0 not complete after its quiet returned");
    }
    barrier();
  }
  free(src);
}

/* ---- AMOs: every op the spec has on a type, on PE 0's slots, by every PE at once ---- */
static size_t slot(int t, int k) { return AMO_OFF + ((size_t)t * 8 + (size_t)k) * 64; }

/* Extended ops (every type): set then fetch on the right neighbour; a swap chain on PE 0's slot 1 (starts at -1), in
 * which every value swapped in must come out exactly once (as some PE's old value or as the final one). */
#define AMO_EXT(T, TT)                                                                                                 \
  static void amo_ext_##TT(void) {                                                                                     \
    const int t = TT;                                                                                                  \
    T old, mine = (T)(me + 10);                                                                                        \
    if (me == 0) memset(heap + slot(t, 0), 0, 8 * 64), *(T *)(heap + slot(t, 1)) = (T)-1;                              \
    barrier();                                                                                                         \
    OK(tl->amo(NULL, SHOAL_SPACE_HEAP, (me + 1) % np, slot(t, 2), SHOAL_TL_AMO_SET, t, &mine, NULL, NULL));            \
    OK(tl->quiet(NULL));                                                                                               \
    barrier();                                                                                                         \
    old = 0;                                                                                                           \
    OK(tl->amo(NULL, SHOAL_SPACE_HEAP, (me + 1) % np, slot(t, 2), SHOAL_TL_AMO_FETCH, t, NULL, NULL, &old));           \
    CHECK(old == mine, "%s fetch after set on PE %d: %g, want %g", #T, (me + 1) % np, (double)old, (double)mine);      \
    for (int i = 0; i < NAMO; i++) {                                                                                   \
      T v = (T)(me * 1000 + i);                                                                                        \
      OK(tl->amo(NULL, SHOAL_SPACE_HEAP, 0, slot(t, 1), SHOAL_TL_AMO_SWAP, t, &v, NULL, &old));                        \
      sh->swapped[t][me][i] = old == (T)-1 ? MAXP * 1000 : (uint64_t)(int64_t)old;                                    \
    }                                                                                                                  \
    OK(tl->quiet(NULL));                                                                                               \
    barrier();                                                                                                         \
    if (me == 0) {                                                                                                     \
      static uint8_t seen[MAXP * 1000 + 1];                                                                            \
      memset(seen, 0, sizeof seen);                                                                                    \
      T final = *(T *)(heap + slot(t, 1));                                                                             \
      int bad = 0;                                                                                                     \
      for (int p = 0; p <= np; p++)                                                                                    \
        for (int i = 0; i < (p < np ? NAMO : 1); i++) {                                                                \
          uint64_t v = p < np ? sh->swapped[t][p][i] : final == (T)-1 ? MAXP * 1000 : (uint64_t)(int64_t)final;       \
          if (v > MAXP * 1000 || seen[v]++) bad++;                                                                     \
        }                                                                                                              \
      CHECK(!bad && seen[MAXP * 1000] == 1, "%s swap chain of %d PEs: %d values lost or seen twice", #T, np, bad);    \
    }                                                                                                                  \
    barrier();                                                                                                         \
  }

/* Standard ops: add me+1, inc, fetch_add me+1, fetch_inc, NAMO times each by every PE on PE 0's slot 0 (the sum is
 * known, the old values of one PE must rise); one compare_swap per PE on slot 3 (exactly one owner); a compare_swap
 * loop of NAMO increments per PE on slot 4. */
#define AMO_STD(T, TT)                                                                                                 \
  static void amo_std_##TT(void) {                                                                                     \
    const int t = TT;                                                                                                  \
    T old, prev = 0, one = (T)(me + 1), zero = 0;                                                                      \
    bool rising = true;                                                                                                \
    for (int i = 0; i < NAMO; i++) {                                                                                   \
      OK(tl->amo(NULL, SHOAL_SPACE_HEAP, 0, slot(t, 0), SHOAL_TL_AMO_ADD, t, &one, NULL, NULL));                       \
      OK(tl->amo(NULL, SHOAL_SPACE_HEAP, 0, slot(t, 0), SHOAL_TL_AMO_INC, t, NULL, NULL, NULL));                       \
      OK(tl->amo(NULL, SHOAL_SPACE_HEAP, 0, slot(t, 0), SHOAL_TL_AMO_FETCH_ADD, t, &one, NULL, &old));                 \
      rising &= i == 0 || old > prev;                                                                                  \
      prev = old;                                                                                                      \
      OK(tl->amo(NULL, SHOAL_SPACE_HEAP, 0, slot(t, 0), SHOAL_TL_AMO_FETCH_INC, t, NULL, NULL, &old));                 \
      rising &= old > prev;                                                                                            \
      prev = old;                                                                                                      \
    }                                                                                                                  \
    CHECK(rising, "%s fetch_add/fetch_inc on PE 0: old values of one PE not rising", #T);                              \
    T want = (T)(me + 1);                                                                                              \
    OK(tl->amo(NULL, SHOAL_SPACE_HEAP, 0, slot(t, 3), SHOAL_TL_AMO_CSWAP, t, &want, &zero, &old));                     \
    if (old == 0)                                                                                                      \
      sh->winners[t]++;                                                                                                \
    else                                                                                                               \
      CHECK(old >= 1 && old <= (T)np, "%s compare_swap lost to %lld", #T, (long long)old);                             \
    for (int i = 0; i < NAMO; i++) {                                                                                   \
      T cur = 0, next, got = 0;                                                                                        \
      OK(tl->amo(NULL, SHOAL_SPACE_HEAP, 0, slot(t, 4), SHOAL_TL_AMO_FETCH, t, NULL, NULL, &cur));                     \
      for (int tries = 0; tries < 100000; tries++, cur = got) {                                                        \
        next = (T)(cur + 1);                                                                                           \
        if (tl->amo(NULL, SHOAL_SPACE_HEAP, 0, slot(t, 4), SHOAL_TL_AMO_CSWAP, t, &next, &cur, &got) || got == cur)    \
          break;                                                                                                       \
      }                                                                                                                \
    }                                                                                                                  \
    OK(tl->quiet(NULL));                                                                                               \
    barrier();                                                                                                         \
    if (me == 0) {                                                                                                     \
      T sum = *(T *)(heap + slot(t, 0)), total = 0;                                                                    \
      for (int p = 0; p < np; p++)                                                                                     \
        total += (T)(NAMO * (2 * (p + 1) + 2));                                                                        \
      CHECK(sum == total, "%s add/inc/fetch_add/fetch_inc by %d PEs: %lld, want %lld", #T, np, (long long)sum,         \
            (long long)total);                                                                                         \
      T owner = *(T *)(heap + slot(t, 3)), loops = *(T *)(heap + slot(t, 4));                                          \
      CHECK(sh->winners[t] == 1 && owner >= 1 && owner <= (T)np, "%s compare_swap: %d owners, slot holds %lld", #T,    \
            (int)sh->winners[t], (long long)owner);                                                                    \
      CHECK(loops == (T)(np * NAMO), "%s compare_swap loop: %lld, want %d", #T, (long long)loops, np * NAMO);          \
    }                                                                                                                  \
    barrier();                                                                                                         \
  }

/* Bitwise ops on PE 0's slot 5: or bit me, fetch_or bit me+8, xor bit me+16 twice, fetch_xor bit me+24, and ~bit me,
 * fetch_and ~0 (fences between the ops whose order matters). */
#define AMO_BIT(T, TT)                                                                                                 \
  static void amo_bit_##TT(void) {                                                                                     \
    const int t = TT;                                                                                                  \
    T old, b0 = (T)1 << me, b8 = (T)1 << (me + 8), b16 = (T)1 << (me + 16), b24 = (T)1 << (me + 24), nb0 = (T)~b0,     \
           ones = (T)~(T)0;                                                                                            \
    OK(tl->amo(NULL, SHOAL_SPACE_HEAP, 0, slot(t, 5), SHOAL_TL_AMO_OR, t, &b0, NULL, NULL));                           \
    OK(tl->fence(NULL));                                                                                               \
    OK(tl->amo(NULL, SHOAL_SPACE_HEAP, 0, slot(t, 5), SHOAL_TL_AMO_FETCH_OR, t, &b8, NULL, &old));                     \
    CHECK(!(old & b8) && (old & b0), "%s fetch_or: old %#llx has bit %d set or bit %d clear", #T,                      \
          (unsigned long long)old, me + 8, me);                                                                        \
    OK(tl->amo(NULL, SHOAL_SPACE_HEAP, 0, slot(t, 5), SHOAL_TL_AMO_XOR, t, &b16, NULL, NULL));                         \
    OK(tl->amo(NULL, SHOAL_SPACE_HEAP, 0, slot(t, 5), SHOAL_TL_AMO_XOR, t, &b16, NULL, NULL));                         \
    OK(tl->amo(NULL, SHOAL_SPACE_HEAP, 0, slot(t, 5), SHOAL_TL_AMO_FETCH_XOR, t, &b24, NULL, &old));                   \
    CHECK(!(old & b24), "%s fetch_xor: old %#llx has bit %d set", #T, (unsigned long long)old, me + 24);              \
    OK(tl->amo(NULL, SHOAL_SPACE_HEAP, 0, slot(t, 5), SHOAL_TL_AMO_AND, t, &nb0, NULL, NULL));                         \
    OK(tl->fence(NULL));                                                                                               \
    OK(tl->amo(NULL, SHOAL_SPACE_HEAP, 0, slot(t, 5), SHOAL_TL_AMO_FETCH_AND, t, &ones, NULL, &old));                  \
    CHECK(!(old & b0) && (old & b8) && (old & b24), "%s fetch_and: old %#llx, want bit %d clear, %d and %d set", #T,   \
          (unsigned long long)old, me, me + 8, me + 24);                                                               \
    OK(tl->quiet(NULL));                                                                                               \
    barrier();                                                                                                         \
    if (me == 0) {                                                                                                     \
      T bits = *(T *)(heap + slot(t, 5)), want = 0;                                                                    \
      for (int p = 0; p < np; p++) want |= (T)1 << (p + 8) | (T)1 << (p + 24);                                         \
      CHECK(bits == want, "%s and/or/xor by %d PEs: %#llx, want %#llx", #T, np, (unsigned long long)bits,              \
            (unsigned long long)want);                                                                                 \
    }                                                                                                                  \
    barrier();                                                                                                         \
  }
#define EXT_ONLY(T, TT) AMO_EXT(T, TT) static void amo_##TT(void) { amo_ext_##TT(); }
#define STD(T, TT) AMO_EXT(T, TT) AMO_STD(T, TT) static void amo_##TT(void) { amo_ext_##TT(), amo_std_##TT(); }
#define BIT(T, TT)                                                                                                     \
  AMO_EXT(T, TT) AMO_STD(T, TT) AMO_BIT(T, TT)                                                                         \
  static void amo_##TT(void) { amo_ext_##TT(), amo_std_##TT(), amo_bit_##TT(); }
STD(int, SHOAL_TL_INT)
STD(long, SHOAL_TL_LONG)
STD(long long, SHOAL_TL_LONGLONG)
BIT(unsigned int, SHOAL_TL_UINT)
BIT(unsigned long, SHOAL_TL_ULONG)
BIT(unsigned long long, SHOAL_TL_ULONGLONG)
BIT(int32_t, SHOAL_TL_INT32)
BIT(int64_t, SHOAL_TL_INT64)
BIT(uint32_t, SHOAL_TL_UINT32)
BIT(uint64_t, SHOAL_TL_UINT64)
STD(size_t, SHOAL_TL_SIZE)
STD(ptrdiff_t, SHOAL_TL_PTRDIFF)
EXT_ONLY(float, SHOAL_TL_FLOAT)
EXT_ONLY(double, SHOAL_TL_DOUBLE)

static void test_amo(void) {
  memset(sh->winners, 0, sizeof sh->winners);
  barrier();
  amo_SHOAL_TL_INT(), amo_SHOAL_TL_LONG(), amo_SHOAL_TL_LONGLONG(), amo_SHOAL_TL_UINT(), amo_SHOAL_TL_ULONG();
  amo_SHOAL_TL_ULONGLONG(), amo_SHOAL_TL_INT32(), amo_SHOAL_TL_INT64(), amo_SHOAL_TL_UINT32();
  amo_SHOAL_TL_UINT64(), amo_SHOAL_TL_SIZE(), amo_SHOAL_TL_PTRDIFF(), amo_SHOAL_TL_FLOAT(), amo_SHOAL_TL_DOUBLE();
  /* a pairing the spec does not have, and a misaligned object: refused */
  double d = 1;
  CHECK(tl->amo(NULL, SHOAL_SPACE_HEAP, 0, slot(0, 6), SHOAL_TL_AMO_ADD, SHOAL_TL_DOUBLE, &d, NULL, NULL) ==
            SHOAL_ERR_INVAL,
        "add on double accepted");
  CHECK(tl->amo(NULL, SHOAL_SPACE_HEAP, 0, slot(0, 6) + 2, SHOAL_TL_AMO_SET, SHOAL_TL_INT, &(int){1}, NULL, NULL) ==
            SHOAL_ERR_INVAL, "misaligned set accepted");
  barrier();
}

/* Data, fence, flag: a PE that sees round r's flag must see round r's data (large puts, small puts, AMO flags). */
static void test_fence(void) {
  int right = (me + 1) % np;
  volatile int64_t *flag = (volatile int64_t *)(heap + FEN_OFF);
  memset(heap + FEN_OFF, 0, FEN_LEN);
  barrier();
  char *src = malloc(FEN_BLOCK);
  for (int r = 1; r <= FEN_ROUNDS; r++) {
    size_t n = r % 2 ? FEN_BLOCK : 100;
    memset(src, r, n);
    /* an AMO, fence, then the data: the data (and so the flag) is seen only after the AMO */
    OK(tl->amo(NULL, SHOAL_SPACE_HEAP, right, FEN_OFF + 8, SHOAL_TL_AMO_ADD, SHOAL_TL_INT64, &(int64_t){r}, NULL,
               NULL));
    OK(tl->fence(NULL));
    OK(tl->put(NULL, SHOAL_SPACE_HEAP, right, FEN_OFF + 4096 + (size_t)(r - 1) * FEN_BLOCK, src, n, false));
    OK(tl->fence(NULL));
    int64_t v = r;
    if (r % 3)
      OK(tl->put(NULL, SHOAL_SPACE_HEAP, right, FEN_OFF, &v, sizeof v, false));
    else
      OK(tl->amo(NULL, SHOAL_SPACE_HEAP, right, FEN_OFF, SHOAL_TL_AMO_SET, SHOAL_TL_INT64, &v, NULL, NULL));
    /* our own flag, from the left neighbour */
    double t0 = now();
    while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) < r && now() - t0 < 20) sched_yield();
    const char *d = heap + FEN_OFF + 4096 + (size_t)(r - 1) * FEN_BLOCK;
    size_t want = r % 2 ? FEN_BLOCK : 100;
    CHECK(*flag >= r && d[0] == r && d[want - 1] == r, "fence: round %d flag %lld seen before its data (%d, %d)", r,
          (long long)*flag, d[0], d[want - 1]);
    int64_t sum = *(volatile int64_t *)(heap + FEN_OFF + 8);
    CHECK(sum >= (int64_t)r * (r + 1) / 2, "fence: round %d data seen before the add before it (sum %lld, want %d)",
          r, (long long)sum, r * (r + 1) / 2);
  }
  OK(tl->quiet(NULL));
  barrier();
  free(src);
}

/* The runtime's flag signal: an AMO and an nbi put, then the signal, with no fence: a PE that sees the flag sees the
 * data and the sum, and the put's source is free once the signal returns (it is overwritten at once). Where writes
 * are ordered (the first life) it issues no read: no flush, no round trip. */
static void test_signal(void) {
  int right = (me + 1) % np;
  volatile int64_t *flag = (volatile int64_t *)(heap + FEN_OFF);
  memset(heap + FEN_OFF, 0, FEN_LEN + SIG_LEN);
  OK(tl->quiet(NULL));
  barrier();
  shoal_tl_ofi_info_t a, b;
  shoal_tl_ofi_query(&a);
  char *src = malloc(SIG_LEN);
  int64_t added = 0;
  for (int r = 1; r <= FEN_ROUNDS; r++) {
    /* every fourth round SIG_LEN bytes into one shared block (a later round may overwrite it: values only grow) */
    bool big = r % 4 == 0;
    size_t n = big ? SIG_LEN : r % 2 ? FEN_BLOCK : 100;
    size_t at = big ? SIG_OFF : FEN_OFF + 4096 + (size_t)(r - 1) * FEN_BLOCK;
    memset(src, r, n);
    if (!big) { /* (an AMO before makes the signal wait for every write: not in the rounds that test the sources) */
      OK(tl->amo(NULL, SHOAL_SPACE_HEAP, right, FEN_OFF + 8, SHOAL_TL_AMO_ADD, SHOAL_TL_INT64, &(int64_t){r}, NULL,
                 NULL));
      added += r;
    }
    OK(tl->put(NULL, SHOAL_SPACE_HEAP, right, at, src, n, true));
    OK(tl->signal(SHOAL_SPACE_HEAP, right, FEN_OFF, (uint64_t)r));
    memset(src, 0xEE, n); /* a collective reuses its buffer once it signalled */
    double t0 = now();
    while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) < r && now() - t0 < 20) tl->progress();
    const unsigned char *d = (const unsigned char *)heap + at;
    bool ok = *flag >= r;
    for (size_t i = 0; i < n && ok; i += i + 4096 < n ? 4096 : (n - i > 1 ? n - i - 1 : 1))
      ok = d[i] >= r && d[i] <= FEN_ROUNDS;
    CHECK(ok, "signal: round %d (%zu bytes): flag %lld seen before its data (or the source's later bytes, 0xee)", r,
          n, (long long)*flag);
    int64_t sum = *(volatile int64_t *)(heap + FEN_OFF + 8);
    CHECK(sum >= added, "signal: round %d flag seen before the add before it (sum %lld, want %lld)", r, (long long)sum,
          (long long)added);
  }
  shoal_tl_ofi_query(&b);
  if (a.ordered_signal)
    CHECK(b.reads == a.reads, "signal: %llu reads issued by %d signals after puts (want none: writes are ordered)",
          (unsigned long long)(b.reads - a.reads), FEN_ROUNDS);
  CHECK(tl->signal(SHOAL_SPACE_HEAP, right, FEN_OFF + 4, 1) == SHOAL_ERR_INVAL, "a misaligned signal accepted");
  OK(tl->quiet(NULL));
  barrier();
  free(src);
}

/* Contexts with endpoints of their own (spec 9.4): puts, gets, AMOs and a fenced flag on two context endpoints
 * (one shared, one private) arrive and read right; none of them is counted on the default endpoint (its write and
 * read counts stay as they were); the count of open context endpoints follows create and destroy; a third is left
 * open for fini to close (run_life's fd count). */
static void test_ctx(void) {
  int right = (me + 1) % np, left = (me + np - 1) % np;
  void *a = NULL, *b = NULL, *c = NULL;
  OK(tl->ctx_create(true, &a));
  OK(tl->ctx_create(false, &b));
  CHECK(a && b && a != b, "ctx_create: handles %p, %p", a, b);
  if (!a || !b) return;
  shoal_tl_ofi_info_t i0, i1;
  shoal_tl_ofi_query(&i0);
  CHECK(i0.ctx_endpoints == 2, "%d context endpoints open, want 2", i0.ctx_endpoints);
  size_t big = 256 * 1024, total = 64 * 40 + big;
  unsigned char *src = malloc(total), *dst = malloc(big);
  for (size_t i = 0; i < total; i++) src[i] = pat(me, 55, i);
  memset(heap + RMA_OFF, 0, total + 8);
  for (size_t i = 0; i < big; i++) heap[GET_OFF + i] = (char)pat(me, 66, i);
  *(volatile int64_t *)(heap + FEN_OFF + 16) = 0;
  barrier();
  /* a: small (inject) puts and one large, then fence and a flag; b: a get and a fetch_add */
  for (int k = 0; k < 64; k++)
    OK(tl->put(a, SHOAL_SPACE_HEAP, right, RMA_OFF + (size_t)k * 40, src + k * 40, 40, true));
  OK(tl->put(a, SHOAL_SPACE_HEAP, right, RMA_OFF + 64 * 40, src + 64 * 40, big, true));
  OK(tl->fence(a));
  int64_t one = 1, old = -1;
  OK(tl->put(a, SHOAL_SPACE_HEAP, right, RMA_OFF + total, &one, sizeof one, false));
  memset(dst, 0, big);
  OK(tl->get(b, SHOAL_SPACE_HEAP, left, GET_OFF, dst, big, false));
  OK(tl->amo(b, SHOAL_SPACE_HEAP, 0, FEN_OFF + 16, SHOAL_TL_AMO_FETCH_ADD, SHOAL_TL_INT64, &(int64_t){me + 1},
                 NULL, &old));
  CHECK(old >= 0 && old <= (int64_t)np * (np + 1) / 2 - (me + 1), "ctx fetch_add: old value %lld", (long long)old);
  shoal_tl_ofi_query(&i1);
  CHECK(i1.writes == i0.writes && i1.reads == i0.reads,
        "context operations counted on the default endpoint: writes %llu -> %llu, reads %llu -> %llu",
        (unsigned long long)i0.writes, (unsigned long long)i1.writes, (unsigned long long)i0.reads,
        (unsigned long long)i1.reads);
  size_t bad = SIZE_MAX;
  for (size_t i = 0; i < big && bad == SIZE_MAX; i++)
    if (dst[i] != pat(left, 66, i)) bad = i;
  CHECK(bad == SIZE_MAX, "ctx get from PE %d: byte %zu wrong", left, bad);
  /* the flag from the left neighbour: the data before it (fence on a) */
  volatile int64_t *flag = (volatile int64_t *)(heap + RMA_OFF + total);
  double t0 = now();
  while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) != 1 && now() - t0 < 20) tl->progress();
  for (size_t i = 0; i < total && bad == SIZE_MAX; i++)
    if ((unsigned char)heap[RMA_OFF + i] != pat(left, 55, i)) bad = i;
  CHECK(*flag == 1 && bad == SIZE_MAX, "ctx fence: flag %lld, byte %zu of the data before it wrong", (long long)*flag,
        bad);
  OK(tl->quiet(a));
  OK(tl->quiet(b));
  barrier();
  if (me == 0)
    CHECK(*(volatile int64_t *)(heap + FEN_OFF + 16) == (int64_t)np * (np + 1) / 2, "ctx fetch_add: sum %lld, want %d",
          (long long)*(volatile int64_t *)(heap + FEN_OFF + 16), np * (np + 1) / 2);
  tl->ctx_destroy(a);
  tl->ctx_destroy(b);
  OK(tl->ctx_create(true, &c)); /* left for fini */
  shoal_tl_ofi_query(&i1);
  CHECK(i1.ctx_endpoints == 1, "%d context endpoints open after two destroys and a create, want 1", i1.ctx_endpoints);
  barrier();
  free(src);
  free(dst);
}

/* One whole life of the transport on one PE: init, every test, fini; fds and threads as before. */
static void run_life(unsigned force) {
  int fds0 = count_dir("/proc/self/fd"), threads0 = count_dir("/proc/self/task");
  shoal_tl_ofi_test_force(force);
  /* the second life names the provider through SHOAL_OFI_PROVIDER ("tcp": libfabric layers ofi_rxm on it) */
  snprintf(shoal_env.ofi_provider, sizeof shoal_env.ofi_provider, "%s", force ? "tcp" : "");
  OK(tl->reg(SHOAL_SPACE_HEAP, heap, HEAP_LEN, 0, 0));
  OK(tl->reg(SHOAL_SPACE_STATIC, statics, sizeof statics, 0, 0));
  CHECK(tl->reg(SHOAL_SPACE_HEAP, heap, HEAP_LEN, 0, 0) == SHOAL_ERR_INVAL, "a second reg of the heap accepted");
  shoal_status_t rc = tl->init(&boot);
  CHECK(rc == SHOAL_OK, "init: %d", rc);
  if (rc) return;
  shoal_tl_ofi_info_t info;
  shoal_tl_ofi_query(&info);
  CHECK(info.provider && !strcmp(info.provider, "tcp;ofi_rxm"), "provider %s, want tcp;ofi_rxm", info.provider);
  CHECK(info.native_types == (force & SHOAL_TL_OFI_FORCE_MSG_AMO ? 0 : SHOAL_TL_NTYPES), "%d native AMO types",
        info.native_types);
  CHECK(info.flush_read == !(force & SHOAL_TL_OFI_FORCE_DC), "flush read %d", info.flush_read);
  CHECK(info.progress_thread, "no progress thread on a manual-progress provider");
  if (me == 0 && force == 0)
    fprintf(stderr, "provider %s: virt_addr %d, inject %zu, flush read %d, %d native AMO types, progress thread %d\n",
            info.provider, info.virt_addr, info.inject_size, info.flush_read, info.native_types, info.progress_thread);
  test_rma();
  test_nbi();
  test_passive_target();
  test_polling_target();
  test_wait_yields();
  test_remote_completion();
  test_amo();
  test_fence();
  test_signal();
  test_ctx();
  barrier(); /* nobody reads our memory any more */
  tl->fini();
  int fds1 = count_dir("/proc/self/fd"), threads1 = count_dir("/proc/self/task");
  CHECK(fds1 == fds0 && threads1 == threads0, "after fini: %d fds (before init %d), %d threads (before %d)", fds1,
        fds0, threads1, threads0);
}

static int run_pe(int rank) {
  me = rank;
  boot = (shoal_boot_t){.rank = rank, .size = np, .local_rank = rank, .local_size = np, .ops = &fake_ops, .fd = -1};
  shoal_g.boot.rank = rank, shoal_g.boot.size = np; /* "shoal: PE <rank>:" in messages */
  heap = aligned_alloc(4096, HEAP_LEN);
  if (!heap) return 2;
  run_life(0);
  if (!fails) run_life(SHOAL_TL_OFI_FORCE_MSG_AMO | SHOAL_TL_OFI_FORCE_DC);
  free(heap);
  return fails ? 1 : 0;
}

static void run_job(int n) {
  np = n;
  sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ck_assert_ptr_ne(sh, MAP_FAILED);
  memset(sh, 0, sizeof *sh);
  pid_t pid[MAXP];
  for (int r = 0; r < n; r++)
    if (!(pid[r] = fork())) {
      prctl(PR_SET_PDEATHSIG, SIGKILL); /* no PE outlives a test that Check killed */
      alarm(120);                       /* a hang fails with a message below */
      _exit(run_pe(r));
    }
  for (int r = 0; r < n; r++) {
    int st;
    ck_assert_int_eq(waitpid(pid[r], &st, 0), pid[r]);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%d PEs: PE %d %s %d: %s", n, r,
                  WIFEXITED(st) ? "exited" : "killed by signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st),
                  sh->msg[r][0] ? sh->msg[r] : "(no message: hung until the alarm after 120 s?)");
  }
  munmap(sh, sizeof *sh);
}

START_TEST(np2) { run_job(2); }
END_TEST
START_TEST(np3) { run_job(3); }
END_TEST
START_TEST(np4) { run_job(4); }
END_TEST

/* No provider of the name asked for: init fails with one line that lists what libfabric has. */
START_TEST(no_provider) {
  char path[] = "/tmp/shoal-test-ofi-XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  unlink(path);
  pid_t p = fork();
  if (!p) {
    dup2(fd, 2);
    snprintf(shoal_env.ofi_provider, sizeof shoal_env.ofi_provider, "nosuch");
    shoal_boot_t b = {.rank = 0, .size = 1, .local_size = 1, .fd = -1};
    shoal_g.boot.size = 1;
    char buf[64];
    if (tl->reg(SHOAL_SPACE_HEAP, buf, sizeof buf, 0, 0)) _exit(3);
    _exit(tl->init(&b) == SHOAL_ERR_NOSYS ? 0 : 4);
  }
  int st;
  ck_assert_int_eq(waitpid(p, &st, 0), p);
  char out[2048] = "";
  ck_assert_int_ge(pread(fd, out, sizeof out - 1, 0), 0);
  close(fd);
  ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "init with SHOAL_OFI_PROVIDER=nosuch: status %d; %s", st, out);
  ck_assert_msg(strstr(out, "shoal: PE 0: fi_getinfo: no usable provider (SHOAL_OFI_PROVIDER=nosuch): found ") == out,
                "message: %s", out);
  ck_assert_msg(strstr(out, "tcp") && strstr(out, "; missing a provider named nosuch\n"), "message: %s", out);
  ck_assert_msg(!strchr(out, '\n') || strchr(out, '\n')[1] == 0, "more than one line: %s", out);
}
END_TEST

/* One PE alone (it reaches itself through the provider too), with a "device" region: without FI_HMEM in the
 * provider, init warns in one line and goes on (the device space is left out; the comm layer never sends to it, and
 * the slots trust their caller, so nothing here calls on it). */
START_TEST(one_pe_and_hmem) {
  char path[] = "/tmp/shoal-test-ofi-XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  unlink(path);
  pid_t p = fork();
  if (!p) {
    dup2(fd, 2);
    shoal_boot_t b = {.rank = 0, .size = 1, .local_size = 1, .fd = -1}; /* no ops: the allgather copies */
    shoal_g.boot.size = 1;
    static char h[65536], dev[4096];
    if (tl->reg(SHOAL_SPACE_HEAP, h, sizeof h, 0, 0) || tl->reg(SHOAL_SPACE_DEVICE, dev, sizeof dev, 1, 0)) _exit(3);
    if (tl->init(&b)) _exit(4);
    shoal_tl_ofi_info_t info;
    shoal_tl_ofi_query(&info);
    char src[300], dst[300];
    for (int i = 0; i < 300; i++) src[i] = (char)(i * 7);
    if (tl->put(NULL, SHOAL_SPACE_HEAP, 0, 1000, src, 300, false) || tl->quiet(NULL) || memcmp(h + 1000, src, 300))
      _exit(5);
    if (tl->get(NULL, SHOAL_SPACE_HEAP, 0, 1000, dst, 300, false) || memcmp(dst, src, 300)) _exit(6);
    uint64_t one = 5, old = 1;
    if (tl->amo(NULL, SHOAL_SPACE_HEAP, 0, 2048, SHOAL_TL_AMO_FETCH_ADD, SHOAL_TL_UINT64, &one, NULL, &old) || old ||
        *(uint64_t *)(h + 2048) != 5)
      _exit(7);
    tl->fini();
    _exit(info.hmem ? 9 : 0); /* 9: a provider with FI_HMEM took host memory for a GPU's */
  }
  int st;
  ck_assert_int_eq(waitpid(p, &st, 0), p);
  char out[2048] = "";
  ck_assert_int_ge(pread(fd, out, sizeof out - 1, 0), 0);
  close(fd);
  ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "one PE: status %d; %s", st, out);
  ck_assert_msg(strstr(out, "shoal: PE 0: fi_getinfo: tcp;ofi_rxm has no FI_HMEM: the device heap is not registered")
                == out, "message: %s", out);
}
END_TEST

/* ---- bench: 2 PEs, PE 0 drives, PE 1 idles in the fake barrier (its progress thread serves) ---- */
static int cmp_dbl(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
static void bench_pe(int rank, bool polling) {
  me = rank;
  boot = (shoal_boot_t){.rank = rank, .size = 2, .local_rank = rank, .local_size = 2, .ops = &fake_ops, .fd = -1};
  shoal_g.boot.rank = rank, shoal_g.boot.size = 2;
  size_t len = 16 * MIB;
  heap = aligned_alloc(4096, len);
  memset(heap, 0, len);
  if (tl->reg(SHOAL_SPACE_HEAP, heap, len, 0, 0) || tl->init(&boot)) _exit(1);
  if (rank == 0) {
    enum { REPS = 2000 };
    static double t[REPS];
    char buf[8] = {0};
    uint64_t old, one = 1;
    const char *names[] = {"put 8 B + quiet", "get 8 B", "fetch_add uint64", "put 8 B (blocking, no quiet)"};
    for (int k = 0; k < 4; k++) {
      for (int i = 0; i < REPS + 100; i++) {
        double t0 = now();
        if (k == 0) tl->put(NULL, SHOAL_SPACE_HEAP, 1, 0, buf, 8, false), tl->quiet(NULL);
        else if (k == 1) tl->get(NULL, SHOAL_SPACE_HEAP, 1, 0, buf, 8, false);
        else if (k == 2)
          tl->amo(NULL, SHOAL_SPACE_HEAP, 1, 64, SHOAL_TL_AMO_FETCH_ADD, SHOAL_TL_UINT64, &one, NULL, &old);
        else tl->put(NULL, SHOAL_SPACE_HEAP, 1, 0, buf, 8, false);
        if (i >= 100) t[i - 100] = now() - t0;
      }
      tl->quiet(NULL);
      qsort(t, REPS, sizeof *t, cmp_dbl);
      printf("%-30s median %7.2f us  p10 %7.2f us  p90 %7.2f us\n", names[k], t[REPS / 2] * 1e6, t[REPS / 10] * 1e6,
             t[REPS * 9 / 10] * 1e6);
    }
    char *src = malloc(8 * MIB);
    memset(src, 7, 8 * MIB);
    for (size_t n = 64; n <= 4 * MIB; n *= 4) {
      size_t iters = n <= 4096 ? 4000 : n <= 256 * 1024 ? 400 : 40;
      double best = 1e9;
      for (int rep = 0; rep < 3; rep++) {
        double t0 = now();
        for (size_t i = 0; i < iters; i++) tl->put(NULL, SHOAL_SPACE_HEAP, 1, (i % 2) * 8 * MIB, src, n, true);
        tl->quiet(NULL);
        double dt = now() - t0;
        if (dt < best) best = dt;
      }
      printf("put_nbi bandwidth %8zu B  %9.1f MB/s  (%zu puts, then quiet)\n", n, n * iters / best / 1e6, iters);
    }
    free(src);
    atomic_store(&sh->go, 1);
  } else if (polling) {
    while (!atomic_load(&sh->go)) tl->quiet(NULL); /* nothing outstanding: one progress call each */
  }
  barrier();
  tl->fini();
  fflush(stdout);
  _exit(0);
}
static int bench(bool polling) {
  np = 2;
  sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  memset(sh, 0, sizeof *sh);
  pid_t pid[2];
  for (int r = 0; r < 2; r++)
    if (!(pid[r] = fork())) bench_pe(r, polling);
  int st, bad = 0;
  for (int r = 0; r < 2; r++) waitpid(pid[r], &st, 0), bad |= !WIFEXITED(st) || WEXITSTATUS(st);
  return bad;
}

/* libfabric's tcp provider, asked in a child so that this process has no libfabric state before the forks. */
static bool have_tcp(void) {
  pid_t p = fork();
  if (!p) {
    struct fi_info *h = fi_allocinfo(), *info = NULL;
    h->ep_attr->type = FI_EP_RDM;
    h->caps = FI_RMA | FI_ATOMIC;
    h->fabric_attr->prov_name = strdup("tcp");
    int rc = fi_getinfo(FI_VERSION(1, 10), NULL, NULL, 0, h, &info);
    _exit(rc || !info ? 1 : 0);
  }
  int st;
  return waitpid(p, &st, 0) == p && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

int main(int argc, char **argv) {
  if (!have_tcp()) {
    fprintf(stderr, "test_ofi: libfabric has no tcp provider (FI_PROVIDER=tcp FI_TCP_IFACE=lo): skipped\n");
    return 77;
  }
  if (argc > 1 && !strcmp(argv[1], "bench")) {
    printf("PE 1 idle (its progress thread sleeps in fi_cq_sread):\n");
    fflush(stdout);
    int rc = bench(false);
    printf("PE 1 polling (calls the transport in a loop, as a PE waiting in the runtime would):\n");
    fflush(stdout);
    return rc | bench(true);
  }
  Suite *s = suite_create("ofi");
  TCase *tc = tcase_create("ofi");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, no_provider);
  tcase_add_test(tc, one_pe_and_hmem);
  tcase_add_test(tc, np2);
  tcase_add_test(tc, np3);
  tcase_add_test(tc, np4);
  suite_add_tcase(s, tc);
  SRunner *r = srunner_create(s);
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? 1 : 0;
}
