/*
 * coll_gpu_emu.cpp - the GPU collective kernels run on the CPU (no GPU needed; runs in CI).
 *
 * coll_gpu_kernels.cuh compiled as C++ with SHOAL_COLL_GPU_EMULATE (see shoal/detail/gpu_port.cuh): each PE is a forked process,
 * the heaps are one shared mapping (same addresses in every process), a kernel's blocks run one after another and a
 * block's SHOAL_COLL_GPU_THREADS threads are threads. The kernels and the launch plan are the very code that nvcc and
 * hipcc build; what this checks is their indexing (tiles, chunks, tails, rotation, alltoall blocks, byte path, G
 * groups, generic W, broadcast from every root) and the completion protocol (block counter, epochs, release/acquire
 * flags, back-to-back calls, timeouts), for every variant against values computed from coll_gpu_testdata.h. It does
 * not check GPU memory ordering.
 *
 *   coll_gpu_emu -W n [--seed S]        exit 0: all passed, 1: a mismatch
 */
#include <barrier>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <thread>
#include <time.h>
#include <unistd.h>
#include <vector>

#include <shoal/detail/coll_gpu_kernels.cuh>
#include "coll_gpu_plan.h"
#include "coll_gpu_testdata.h"

thread_local shoal_emu_dim threadIdx, blockIdx;
shoal_emu_dim blockDim, gridDim;
char *shoal_emu_dyn_shared;
static std::barrier<> *emu_bar;
void __syncthreads(void) { emu_bar->arrive_and_wait(); }

using namespace shoal_cg;

namespace {

const int EMU_SMS = 5; /* "multiprocessors" of the emulated GPU: the default grid */
int emu_sm_count(void) { return EMU_SMS; }

/* Launch: the grid's blocks one after another, each with NT threads. */
int emu_launch(const shoal_coll_gpu_args_t *a, char *err, size_t errlen) {
  plan pl;
  int rc = make_plan(a, &pl, err, errlen, emu_sm_count);
  if (rc || !a->nbytes) return rc;
  params p;
  p.peer_base = a->peer_base;
  p.src = (const char *)a->src;
  p.dst_off = a->dst_off;
  p.nbytes = a->nbytes;
  p.tile = pl.cfg.tile;
  p.flag_off = a->flag_off;
  p.timeout_ns = a->timeout_ns;
  p.after = a->wait ? a->after : 0;
  p.sync = a->sync;
  p.me = a->me;
  p.npes = a->npes;
  p.root = a->root;
  p.wait = a->wait && a->npes > 1;
  p.gpu_scope = pl.gpu_scope;
  p.small = pl.small;
  kernel_fn k = pick(a->op, a->cfg.variant, pl.wclass, pl.g, pl.vec, pl.pipe);
  std::vector<char> dyn(pl.shmem + 64);
  shoal_emu_dyn_shared = dyn.data();
  blockDim = {(unsigned)NT, 1, 1};
  gridDim = {pl.grid, 1, 1};
  std::barrier<> bar(NT);
  emu_bar = &bar;
  for (unsigned b = 0; b < pl.grid; b++) {
    std::vector<std::thread> th;
    for (int t = 0; t < NT; t++)
      th.emplace_back([=] {
        threadIdx = {(unsigned)t, 0, 0};
        blockIdx = {b, 0, 0};
        k(p);
      });
    for (auto &x : th) x.join();
  }
  return 0;
}

/* Shared between the PE processes. */
struct shared_state {
  unsigned bar_count, bar_gen; /* host barrier */
  unsigned long long failures[64], checked[64];
};
shared_state *sh;
int W, me;

void host_barrier(void) {
  const unsigned gen = __atomic_load_n(&sh->bar_gen, __ATOMIC_ACQUIRE);
  if (__atomic_add_fetch(&sh->bar_count, 1, __ATOMIC_ACQ_REL) == (unsigned)W) {
    __atomic_store_n(&sh->bar_count, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&sh->bar_gen, gen + 1, __ATOMIC_RELEASE);
  } else {
    while (__atomic_load_n(&sh->bar_gen, __ATOMIC_ACQUIRE) == gen) sched_yield();
  }
}

struct tcase {
  int op, variant, g, sms;
  size_t tile;
  int type;
  size_t nelem;
  int wait;
  size_t src_shift, dst_shift;
  int pipe = SHOAL_COLL_GPU_PIPE_AUTO;
  int root = 0; /* broadcast */
  int small = SHOAL_COLL_GPU_SMALL_AUTO;
  unsigned long long after = 0; /* args.after: as if the previous call had gone to another stream */
};
const char *op_name(int op) {
  return op == SHOAL_COLL_GPU_ALLTOALL ? "alltoall" : op == SHOAL_COLL_GPU_BCAST ? "broadcast" : "fcollect";
}

const size_t FLAG_AREA = 4096;
const int GUARD = 0xa5;
const size_t GUARD_BYTES = 256;
char **table;      /* shared: [W] heap bases */
char *heaps;       /* shared: W heaps of heap_bytes */
size_t heap_bytes;
shoal_coll_gpu_sync_t *syncs; /* shared: [W] */
std::vector<char> src_buf;    /* this PE's source (private) */

/* Expected destination of this PE: slot s holds PE s's block (fcollect) or block `me` of PE s's source (alltoall);
 * broadcast: the root's source, once. */
void expected(const tcase &c, uint64_t seed, std::vector<char> &exp) {
  const size_t es = coll_types[c.type].size, nb = c.nelem * es;
  if (c.op == SHOAL_COLL_GPU_BCAST) {
    exp.resize(nb);
    coll_fill(c.type, seed, c.root, 0, c.nelem, exp.data());
    return;
  }
  exp.resize((size_t)W * nb);
  for (int s = 0; s < W; s++)
    coll_fill(c.type, seed, s, c.op == SHOAL_COLL_GPU_ALLTOALL ? (uint64_t)me * c.nelem : 0, c.nelem, &exp[s * nb]);
}

/* Prepare this PE's source and poisoned destination at dst_off. */
void prepare(const tcase &c, uint64_t seed, size_t dst_off, std::vector<char> &exp) {
  const size_t es = coll_types[c.type].size;
  const size_t nsrc = (c.op == SHOAL_COLL_GPU_ALLTOALL ? W : 1) * c.nelem;
  src_buf.assign(nsrc * es + c.src_shift + 16, 0);
  coll_fill(c.type, seed, me, 0, nsrc, &src_buf[c.src_shift]);
  expected(c, seed, exp);
  char *dst = heaps + (size_t)me * heap_bytes + dst_off + c.dst_shift;
  for (size_t i = 0; i < exp.size(); i++) dst[i] = (char)~exp[i];
  memset(dst + exp.size(), GUARD, GUARD_BYTES); /* a store past this PE's destination region shows here */
}

int launch(const tcase &c, size_t dst_off, uint64_t timeout_ns) {
  shoal_coll_gpu_args_t a;
  memset(&a, 0, sizeof a);
  a.op = c.op;
  a.me = me;
  a.npes = W;
  a.peer_base = table;
  a.dst_off = dst_off + c.dst_shift;
  a.src = &src_buf[c.src_shift];
  a.nbytes = c.nelem * coll_types[c.type].size;
  a.flag_off = 0;
  a.sync = &syncs[me];
  a.wait = c.wait;
  a.timeout_ns = timeout_ns;
  a.root = c.root;
  a.cfg.variant = c.variant;
  a.cfg.group = c.g;
  a.cfg.sms = c.sms;
  a.cfg.tile = c.tile;
  a.cfg.pipe = c.pipe;
  a.cfg.small = c.small;
  a.after = c.after;
  char err[256];
  if (emu_launch(&a, err, sizeof err)) {
    fprintf(stderr, "emu: PE %d: %s\n", me, err);
    return -1;
  }
  return 0;
}

void label(const tcase &c, char *buf, size_t len) {
  snprintf(buf, len, "%s %s W=%d G=%d %s n=%zu wait=%d sms=%d tile=%zu shift=%zu/%zu pipe=%d root=%d small=%d",
           op_name(c.op), c.variant == SHOAL_COLL_GPU_NAIVE ? "naive" : "hoisted",
           W, c.g, coll_types[c.type].name, c.nelem, c.wait, c.sms, c.tile, c.src_shift, c.dst_shift, c.pipe, c.root,
           c.small);
}

/* Compare this PE's destination; returns the number of bad elements (first few printed). */
size_t check(const tcase &c, size_t dst_off, const std::vector<char> &exp) {
  const size_t es = coll_types[c.type].size;
  const char *got = heaps + (size_t)me * heap_bytes + dst_off + c.dst_shift;
  size_t bad = 0;
  for (size_t i = 0; i < exp.size(); i += es)
    if (memcmp(&exp[i], &got[i], es)) {
      if (bad++ < 3) {
        char l[200];
        label(c, l, sizeof l);
        fprintf(stderr, "  MISMATCH %s: PE %d slot %zu element %zu\n", l, me, i / es / c.nelem, (i / es) % c.nelem);
      }
    }
  for (size_t i = 0; i < GUARD_BYTES; i++)
    if ((unsigned char)got[exp.size() + i] != GUARD) {
      char l[200];
      label(c, l, sizeof l);
      fprintf(stderr, "  PAST THE END %s: PE %d byte %zu after its destination region\n", l, me, i);
      bad++;
      break;
    }
  const shoal_coll_gpu_sync_t &sy = syncs[me];
  if (sy.blocks) {
    fprintf(stderr, "  PE %d: block counter %#x after the call\n", me, sy.blocks);
    bad++;
  }
  return bad;
}

void run_pe(uint64_t seed) {
  alarm(600);
  std::vector<tcase> cases;
  const int ops[3] = {SHOAL_COLL_GPU_FCOLLECT, SHOAL_COLL_GPU_ALLTOALL, SHOAL_COLL_GPU_BCAST};
  const bool spec = W == 2 || W == 4 || W == 8;
  const size_t chunk = (size_t)NT * VPT * 16;
  int k = 0;
  for (int op : ops)
    for (int var : {SHOAL_COLL_GPU_HOISTED, SHOAL_COLL_GPU_NAIVE})
      for (int g : {1, 2, 4, 8}) {
        if (spec && g > W) continue;
        for (int t = 0; t < COLL_NTYPES; t++) {
          const size_t es = coll_types[t].size;
          for (size_t n : {(size_t)1, (size_t)3, chunk / es - 1, chunk / es + 16 / es, 3 * chunk / es + 1, (size_t)5000}) {
            const int wait = (k % 3) != 2;
            const size_t tile = (k % 4 == 0) ? 0 : (k % 4 == 1) ? 256 : (k % 4 == 2) ? 3 * chunk : 16;
            const int sms = (k % 5 == 0) ? 1 : (k % 5 == 1) ? 0 : 3;
            /* pipelining off and on, 4 cases each (so that both meet every tile choice) */
            const int pipe = ((k / 4) % 2) ? SHOAL_COLL_GPU_PIPE_ON : SHOAL_COLL_GPU_PIPE_OFF;
            cases.push_back({op, var, g, sms, tile, t, n, wait, 0, 0, pipe, k % W}); /* broadcast: every root */
            k++;
          }
        }
      }
  for (int op : ops)
    for (int var : {SHOAL_COLL_GPU_HOISTED, SHOAL_COLL_GPU_NAIVE}) {
      const int r = W - 1; /* broadcast: the last PE as root (others above) */
      cases.push_back({op, var, 0, 0, 0, COLL_BF16, 7777, 1, 2, 6, SHOAL_COLL_GPU_PIPE_AUTO, r}); /* misaligned: bytes */
      cases.push_back({op, var, 0, 2, 0, COLL_INT8, 1 << 12, 0, 1, 0, SHOAL_COLL_GPU_PIPE_AUTO, r}); /* src only */
      for (int pipe : {SHOAL_COLL_GPU_PIPE_OFF, SHOAL_COLL_GPU_PIPE_ON}) {
        cases.push_back({op, var, 0, 0, 0, COLL_FP32, 40000, 1, 0, 0, pipe, r});   /* many tiles per block */
        cases.push_back({op, var, 0, 3, 48, COLL_INT8, 40000, 1, 0, 0, pipe, r});  /* tiles shorter than a block */
        cases.push_back({op, var, 0, 2, 3 * chunk + 32, COLL_FP16, 3 * 40000 + 8, 1, 0, 0, pipe, r}); /* tails */
      }
    }
  size_t max_dst = 0;
  for (auto &c : cases)
    max_dst = std::max(max_dst, (size_t)W * c.nelem * coll_types[c.type].size + c.dst_shift + GUARD_BYTES);
  if (FLAG_AREA + max_dst > heap_bytes) {
    fprintf(stderr, "emu: heap too small\n");
    exit(1);
  }
  unsigned long long fails = 0, checked = 0, waits = 0;
  std::vector<char> exp;
  for (auto &c : cases) {
    const uint64_t s = seed + checked;
    prepare(c, s, FLAG_AREA, exp);
    host_barrier();
    if (launch(c, FLAG_AREA, 0)) exit(1);
    waits += c.wait && W > 1;
    if (!c.wait) host_barrier(); /* the host-side completion */
    size_t bad = check(c, FLAG_AREA, exp);
    if (bad) {
      char l[200];
      label(c, l, sizeof l);
      fprintf(stderr, "FAIL PE %d %s: %zu bad\n", me, l, bad);
    }
    fails += bad != 0;
    checked++;
    host_barrier(); /* nobody prepares the next case while a peer still checks */
  }
  /* Back-to-back: several calls without any host barrier between them, each into its own destination. */
  const size_t nb2b = 6, area = (size_t)W * 3000 * 4 + GUARD_BYTES; /* each region and its guard */
  std::vector<std::vector<char>> exps(nb2b), srcs(nb2b);
  std::vector<tcase> seq;
  for (size_t i = 0; i < nb2b; i++) {
    /* fcollect, alltoall, broadcast in turn; one-block calls (sms 1) with both completions, and grid calls, on the
     * same flags and epoch */
    seq.push_back({(int)(i % 3), (int)((i / 2) % 2), 0, (int)(i % 3), 0, (int)(i % COLL_NTYPES), 3000 - 97 * i, 1, 0, 0,
                   SHOAL_COLL_GPU_PIPE_AUTO, (int)(i % W),
                   (i / 3) % 2 ? SHOAL_COLL_GPU_SMALL_OFF : SHOAL_COLL_GPU_SMALL_AUTO});
    prepare(seq[i], seed + 1000 + i, FLAG_AREA + i * area, exps[i]);
    srcs[i] = src_buf;
  }
  host_barrier();
  for (size_t i = 0; i < nb2b; i++) {
    src_buf = srcs[i];
    if (i % 2) seq[i].after = waits; /* every earlier call counted: the completion's turn has come */
    if (launch(seq[i], FLAG_AREA + i * area, 0)) exit(1);
    waits += W > 1;
  }
  for (size_t i = 0; i < nb2b; i++) {
    size_t bad = check(seq[i], FLAG_AREA + i * area, exps[i]);
    if (bad) fprintf(stderr, "FAIL PE %d back-to-back call %zu: %zu bad\n", me, i, bad);
    fails += bad != 0;
    checked++;
  }
  if (W > 1 && syncs[me].epoch != waits) {
    fprintf(stderr, "FAIL PE %d: epoch %llu after %llu waiting calls\n", me, syncs[me].epoch, waits);
    fails++;
  }
  checked++;
  host_barrier();
  /* Timeout: the last PE stays away; every other PE must give up within the timeout and name it. */
  if (W > 1) {
    tcase c = {SHOAL_COLL_GPU_FCOLLECT, SHOAL_COLL_GPU_HOISTED, 0, 0, 0, COLL_FP32, 100, 1, 0, 0};
    prepare(c, seed, FLAG_AREA, exp);
    host_barrier();
    if (me != W - 1) {
      if (launch(c, FLAG_AREA, 200000000ull)) exit(1);
      const unsigned v = syncs[me].blocks;
      if (v != (SHOAL_COLL_GPU_TIMED_OUT | (unsigned)(W - 1))) {
        fprintf(stderr, "FAIL PE %d: after a timeout the counter is %#x, expected %#x\n", me, v,
                SHOAL_COLL_GPU_TIMED_OUT | (unsigned)(W - 1));
        fails++;
      }
    }
    checked++;
  }
  sh->failures[me] = fails;
  sh->checked[me] = checked;
}

} // namespace

int main(int argc, char **argv) {
  uint64_t seed = (uint64_t)time(nullptr);
  W = 4;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-W") && i + 1 < argc) W = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--seed") && i + 1 < argc) seed = strtoull(argv[++i], nullptr, 0);
    else {
      fprintf(stderr, "usage: %s -W n [--seed S]\n", argv[0]);
      return 2;
    }
  }
  if (W < 1 || W > 64) {
    fprintf(stderr, "emu: -W %d out of range [1, 64]\n", W);
    return 2;
  }
  heap_bytes = FLAG_AREA + (size_t)W * 200000 + (size_t)W * 6 * (3000 * 4 + 64) * W;
  heap_bytes = (heap_bytes + 4095) & ~(size_t)4095;
  const size_t total = sizeof(shared_state) + 4096 + W * sizeof(char *) + W * sizeof(shoal_coll_gpu_sync_t) + 4096 +
                       (size_t)W * heap_bytes;
  char *m = (char *)mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) {
    perror("mmap");
    return 1;
  }
  memset(m, 0, total);
  sh = (shared_state *)m;
  table = (char **)(m + ((sizeof(shared_state) + 4095) & ~(size_t)4095));
  syncs = (shoal_coll_gpu_sync_t *)(table + W);
  heaps = (char *)((((uintptr_t)(syncs + W)) + 4095) & ~(uintptr_t)4095);
  for (int p = 0; p < W; p++) table[p] = heaps + (size_t)p * heap_bytes;
  printf("coll_gpu_emu: W=%d threads/block=%d seed=%llu\n", W, NT, (unsigned long long)seed);
  fflush(stdout);
  std::vector<pid_t> pids;
  for (int p = 0; p < W; p++) {
    pid_t pid = fork();
    if (pid == 0) {
      me = p;
      run_pe(seed);
      _exit(0);
    }
    pids.push_back(pid);
  }
  int bad_exit = 0;
  for (pid_t pid : pids) {
    int st;
    waitpid(pid, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st)) bad_exit++;
  }
  unsigned long long fails = 0, checked = 0;
  for (int p = 0; p < W; p++) fails += sh->failures[p], checked += sh->checked[p];
  printf("coll_gpu_emu W=%d: %llu passed, %llu failed%s\n", W, checked - fails, fails,
         bad_exit ? " (a PE process died)" : "");
  return fails || bad_exit ? 1 : 0;
}
