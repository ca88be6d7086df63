/*
 * coll_gpu_reduce_emu.cpp - the GPU reduction kernels (shoal/detail/coll_gpu_reduce.cuh) run on the CPU, in CI, the
 * way coll_gpu_emu.cpp runs the fcollect / alltoall ones: SHOAL_COLL_GPU_EMULATE, one forked process per PE, the heaps
 * one shared mapping, a kernel's blocks one after another, a block's threads as threads. Every (type, op) of the
 * kernels, both variants, W classes, tails, the element path (misaligned offsets), in place, tiles and grids, host or
 * in-kernel completion, against coll_gpu_reduce_ref.h's reference; then back-to-back calls without host barriers
 * (the two epochs per call counted on the "device") and a timeout naming the PE that stays away.
 *
 *   coll_gpu_reduce_emu -W n [--seed S]        exit 0: all passed, 1: a mismatch
 */
#include <barrier>
#include <functional>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <thread>
#include <time.h>
#include <unistd.h>
#include <vector>

#include <shoal/detail/coll_gpu_reduce.cuh> /* before the reference header: with the kernel selection */
#include "coll_gpu_reduce_plan.h"
#include "coll_gpu_reduce_ref.h"

thread_local shoal_emu_dim threadIdx, blockIdx;
shoal_emu_dim blockDim, gridDim;
char *shoal_emu_dyn_shared;
unsigned shoal_emu_ll_lag_us;
static std::barrier<> *emu_bar;
void __syncthreads(void) { emu_bar->arrive_and_wait(); }

using namespace shoal_cr;

namespace {

const int EMU_SMS = 5;
int emu_sm_count(void) { return EMU_SMS; }

/* A grid of `grid` blocks of `threads` threads, one block after another. */
void run_grid(unsigned grid, unsigned threads, size_t shmem, const std::function<void()> &body) {
  std::vector<char> dyn(shmem + 64);
  shoal_emu_dyn_shared = dyn.data();
  blockDim = {threads, 1, 1};
  gridDim = {grid, 1, 1};
  std::barrier<> bar(threads);
  emu_bar = &bar;
  for (unsigned b = 0; b < grid; b++) {
    std::vector<std::thread> th;
    for (unsigned t = 0; t < threads; t++)
      th.emplace_back([&, b, t] {
        threadIdx = {t, 0, 0};
        blockIdx = {b, 0, 0};
        body();
      });
    for (auto &x : th) x.join();
  }
}

int last_epochs, last_ll; /* of the last emu_launch: epochs it took, whether it was the one-exchange kernel */
bool force_two;           /* launches with SHOAL_COLL_GPU_SMALL off: the two-exchange path at every size */
unsigned long long ll_calls;

/* shoal_coll_gpu_reduce_launch's body on the emulated GPU. */
int emu_launch(const shoal_coll_gpu_red_args_t *a, char *err, size_t errlen) {
  rplan pl;
  int rc = make_red_plan(a, &pl, err, errlen, emu_sm_count);
  if (rc || !a->nelems) return rc;
  rparams p;
  memset(&p, 0, sizeof p);
  p.c.peer_base = a->peer_base;
  p.c.dst_off = a->dst_off;
  p.c.nbytes = a->nelems * shoal_red_type_size(a->type);
  p.c.tile = pl.tile;
  p.c.flag_off = a->flag_off;
  p.c.timeout_ns = a->timeout_ns;
  p.c.sync = a->sync;
  p.c.me = a->me;
  p.c.npes = a->npes;
  p.c.wait = a->wait && a->npes > 1;
  p.c.gpu_scope = pl.gpu_scope;
  p.src_off = a->src_off;
  p.nelems = a->nelems;
  p.ll_off = a->ll_off;
  p.ll_half = a->ll_half;
  p.entry = p.c.wait && !pl.entry_kernel && !pl.ll;
  last_epochs = !p.c.wait ? 0 : pl.ll ? 1 : 2;
  last_ll = pl.ll;
  if (pl.entry_kernel) run_grid(1, 8, 0, [&] { red_entry_kernel<0>(p.c); });
  rkernel_fn k = rpick(a->type, a->op, pl.ll ? VAR_LL : a->cfg.variant, pl.wclass, pl.vec);
  run_grid(pl.grid, NT, pl.shmem, [&] { k(p); });
  return 0;
}

struct shared_state {
  unsigned bar_count, bar_gen;
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
  int type, op, variant, sms;
  size_t tile, nelem;
  int wait, inplace;
  size_t shift; /* bytes added to src and dst offsets (a multiple of the element size; not 16: the element path) */
};

/* heap: flags | one-exchange scratch (2 halves: calls of W x 2 x bytes <= LL_HALF take it) | data */
const size_t LL_OFF = 4096, LL_HALF = 16384, FLAG_AREA = LL_OFF + 2 * LL_HALF, REGION = 1 << 20, GUARD_BYTES = 64;
const int GUARD = 0x5a;
char **table;
char *heaps;
size_t heap_bytes;
shoal_coll_gpu_sync_t *syncs;

size_t src_off_of(const tcase &c, size_t base) { return base + c.shift; }
size_t dst_off_of(const tcase &c, size_t base) { return c.inplace ? base + c.shift : base + REGION + c.shift; }

void label(const tcase &c, char *buf, size_t len) {
  snprintf(buf, len, "reduce %s %s %s W=%d n=%zu wait=%d sms=%d tile=%zu shift=%zu%s", shoal_red_op_name(c.op),
           shoal_red_type_name(c.type), c.variant == SHOAL_COLL_GPU_NAIVE ? "naive" : "hoisted", W, c.nelem, c.wait,
           c.sms, c.tile, c.shift, c.inplace ? " in-place" : "");
}

void prepare(const tcase &c, uint64_t seed, size_t base, std::vector<char> &exp) {
  const size_t es = shoal_red_type_size(c.type), nb = c.nelem * es;
  char *h = heaps + (size_t)me * heap_bytes;
  red_fill(c.type, c.op, seed, me, 0, c.nelem, h + src_off_of(c, base));
  exp.resize(nb);
  red_reference(c.type, c.op, W, seed, c.nelem, exp.data());
  if (!c.inplace)
    for (size_t i = 0; i < nb; i++) h[dst_off_of(c, base) + i] = (char)~exp[i];
  memset(h + dst_off_of(c, base) + nb, GUARD, GUARD_BYTES);
}

int launch(const tcase &c, size_t base, uint64_t timeout_ns) {
  shoal_coll_gpu_red_args_t a;
  memset(&a, 0, sizeof a);
  a.op = c.op;
  a.type = c.type;
  a.me = me;
  a.npes = W;
  a.peer_base = table;
  a.src_off = src_off_of(c, base);
  a.dst_off = dst_off_of(c, base);
  a.nelems = c.nelem;
  a.flag_off = 0;
  a.sync = &syncs[me];
  a.wait = c.wait;
  a.timeout_ns = timeout_ns;
  a.cfg.variant = c.variant;
  a.cfg.sms = c.sms;
  a.cfg.tile = c.tile;
  a.ll_off = LL_OFF;
  a.ll_half = LL_HALF;
  if (force_two) a.cfg.small = SHOAL_COLL_GPU_SMALL_OFF;
  char err[256];
  if (emu_launch(&a, err, sizeof err)) {
    fprintf(stderr, "emu: PE %d: %s\n", me, err);
    return -1;
  }
  return 0;
}

size_t check(const tcase &c, size_t base, const std::vector<char> &exp) {
  const size_t es = shoal_red_type_size(c.type);
  const char *got = heaps + (size_t)me * heap_bytes + dst_off_of(c, base);
  char l[200];
  label(c, l, sizeof l);
  size_t bad = red_compare(c.type, W, exp.data(), got, c.nelem, l, me);
  for (size_t i = 0; i < GUARD_BYTES; i++)
    if ((unsigned char)got[c.nelem * es + i] != GUARD) {
      fprintf(stderr, "  PAST THE END %s: PE %d byte %zu after dest\n", l, me, i);
      bad++;
      break;
    }
  if (syncs[me].blocks) {
    fprintf(stderr, "  %s: PE %d: block counter %#x after the call\n", l, me, syncs[me].blocks);
    bad++;
  }
  return bad;
}

/* A one-exchange reduction into D, then a fcollect into D (a fcollect stores into its peers without an entry
 * exchange): PE 0 stores its reduction result late, and the others, done with the reduction as soon as they have
 * PE 0's records, must not store their fcollect blocks into PE 0's D before that. The runtime (coll_gpu_shmem.c) runs
 * an entry exchange between the two (shoal_coll_gpu_entry_launch), as here. 1: a failure. */
unsigned long long ll_then_fcollect(uint64_t seed, unsigned long long &epochs) {
  const size_t m = 64; /* fcollect bytes per PE; the reduction's dest is the fcollect's W x m */
  tcase c = {SHOAL_RT_U32, SHOAL_RED_SUM, SHOAL_COLL_GPU_HOISTED, 0, 0, (size_t)W * m / 4, 1, 0, 0};
  std::vector<char> exp;
  prepare(c, seed + 77, FLAG_AREA, exp);
  char *h = heaps + (size_t)me * heap_bytes;
  const size_t s_off = FLAG_AREA + 2 * REGION; /* the fcollect's source */
  for (size_t i = 0; i < m; i++) h[s_off + i] = (char)(me * 31 + i);
  host_barrier();
  shoal_emu_ll_lag_us = me == 0 ? 20000 : 0;
  if (launch(c, FLAG_AREA, 5000000000ull)) exit(1);
  shoal_emu_ll_lag_us = 0;
  unsigned long long bad = !last_ll;
  epochs += last_epochs;
  shoal_cg::params p;
  memset(&p, 0, sizeof p);
  p.peer_base = table;
  p.sync = &syncs[me];
  p.me = me;
  p.npes = W;
  p.wait = 1;
  p.small = 1;
  p.timeout_ns = 5000000000ull;
  run_grid(1, 8, 0, [&] { red_entry_kernel<0>(p); });
  epochs++;
  p.src = h + s_off;
  p.dst_off = dst_off_of(c, FLAG_AREA);
  p.nbytes = m;
  p.tile = m;
  run_grid(1, NT, (size_t)W * sizeof(char *), [&] {
    shoal_cg::coll_kernel<shoal_cg::OP_FCOLLECT, shoal_cg::VAR_HOISTED, 0, 1, unsigned char, 0>(p);
  });
  epochs++;
  for (int q = 0; q < W; q++)
    for (size_t i = 0; i < m; i++)
      if (h[p.dst_off + (size_t)q * m + i] != (char)(q * 31 + i)) {
        if (!bad) fprintf(stderr, "FAIL PE %d: fcollect after a one-exchange call: block of PE %d byte %zu\n", me, q, i);
        bad = 1;
      }
  if (syncs[me].blocks || syncs[me].epoch != epochs) {
    fprintf(stderr, "FAIL PE %d: fcollect after a one-exchange call: counter %#x, epoch %llu of %llu\n", me,
            syncs[me].blocks, syncs[me].epoch, epochs);
    bad = 1;
  }
  return bad;
}

void run_pe(uint64_t seed) {
  alarm(900);
  std::vector<tcase> cases;
  int k = 0;
  for (int t = 0; t < SHOAL_RT_NTYPES; t++)
    for (int op = 0; op < SHOAL_RED_NOPS; op++) {
      if (!shoal_red_supported(t, op)) continue;
      const size_t es = shoal_red_type_size(t), e = 16 / es ? 16 / es : 1;
      for (int var : {SHOAL_COLL_GPU_HOISTED, SHOAL_COLL_GPU_NAIVE}) {
        /* 1 element; just under a vector per PE; a tail past the last vector; several tiles and blocks */
        for (size_t n : {(size_t)1, e * W - 1, e * W * 37 + e - 1, (size_t)3000 + 3 * (es < 16)}) {
          const int wait = (k % 4) != 3;
          const size_t tile = (k % 3 == 0) ? 0 : (k % 3 == 1) ? 16 : 256;
          const int sms = (k % 5 == 0) ? 1 : (k % 5 == 1) ? 0 : 3;
          const int inplace = k % 7 == 2;
          const size_t shift = (k % 6 == 5) ? es : 0; /* misaligned: the element path */
          cases.push_back({t, op, var, sms, tile, n, wait, inplace, shift});
          k++;
        }
      }
    }
  unsigned long long fails = 0, checked = 0, epochs = 0;
  std::vector<char> exp;
  for (auto &c : cases) {
    const uint64_t s = seed + checked;
    prepare(c, s, FLAG_AREA, exp);
    host_barrier();
    if (launch(c, FLAG_AREA, 0)) exit(1);
    epochs += W > 1 ? last_epochs : 0;
    ll_calls += last_ll;
    if (!c.wait) host_barrier();
    size_t bad = check(c, FLAG_AREA, exp);
    if (bad) {
      char l[200];
      label(c, l, sizeof l);
      fprintf(stderr, "FAIL PE %d %s: %zu bad\n", me, l, bad);
    }
    fails += bad != 0;
    checked++;
    host_barrier();
  }
  /* Back-to-back: the entry exchange alone keeps a fast PE from overwriting a source a peer still reads (each call
   * in place on the previous call's output would show it) and from storing into a dest still being checked. */
  /* Calls 5 .. 10 are small (one exchange): the scratch halves alternate, and a fast PE's records of call i + 2 must
   * not land in a half a slow PE still reads for call i; calls 8 and 9 mix in the two-exchange path (naive). */
  const size_t nb2b = 11, area = 2 * REGION + 4096;
  std::vector<std::vector<char>> exps(nb2b);
  std::vector<tcase> seq;
  for (size_t i = 0; i < nb2b; i++) {
    if (i < 5)
      seq.push_back({(int)(i % 2 ? SHOAL_RT_F32 : SHOAL_RT_U32), SHOAL_RED_SUM, (int)(i % 2), (int)(i % 3), 0,
                     2000 - 97 * i, 1, 0, 0});
    else
      seq.push_back({(int)(i % 2 ? SHOAL_RT_F32 : SHOAL_RT_U16), i % 3 ? SHOAL_RED_SUM : SHOAL_RED_MAX,
                     i == 8 || i == 9 ? SHOAL_COLL_GPU_NAIVE : SHOAL_COLL_GPU_HOISTED, 0, 0, 40 + 13 * i, 1,
                     (int)(i % 2), 0});
    prepare(seq[i], seed + 1000 + i, FLAG_AREA + i * area, exps[i]);
  }
  host_barrier();
  unsigned long long b2b_ll = 0;
  for (size_t i = 0; i < nb2b; i++) {
    /* PE 0 reads late: the others run ahead into the next call's writes (a wait past 5 s is a failure) */
    shoal_emu_ll_lag_us = me == 0 && i >= 5 ? 3000 : 0;
    if (launch(seq[i], FLAG_AREA + i * area, 5000000000ull)) exit(1);
    epochs += W > 1 ? last_epochs : 0;
    b2b_ll += last_ll;
  }
  shoal_emu_ll_lag_us = 0;
  if (W > 1 && W <= 8 && b2b_ll != 4) { /* (larger W: fewer of these calls fit the scratch) */
    fprintf(stderr, "FAIL PE %d: %llu of the back-to-back calls took the one exchange, expected 4\n", me, b2b_ll);
    fails++;
  }
  if (W > 1 && !ll_calls) {
    fprintf(stderr, "FAIL PE %d: no case took the one exchange\n", me);
    fails++;
  }
  for (size_t i = 0; i < nb2b; i++) {
    size_t bad = check(seq[i], FLAG_AREA + i * area, exps[i]);
    if (bad) fprintf(stderr, "FAIL PE %d back-to-back call %zu: %zu bad\n", me, i, bad);
    fails += bad != 0;
    checked++;
  }
  if (W > 1 && syncs[me].epoch != epochs) {
    fprintf(stderr, "FAIL PE %d: epoch %llu after calls worth %llu\n", me, syncs[me].epoch, epochs);
    fails++;
  }
  checked++;
  host_barrier();
  if (W > 1 && W <= 8) { /* a one-exchange call, then a fcollect into the same dest, as the runtime runs them */
    fails += ll_then_fcollect(seed, epochs);
    checked++;
  }
  host_barrier();
  /* The last PE stays away: the others give up, in the one exchange's polling and then (SHOAL_COLL_GPU_SMALL off) in
   * the two-exchange path's entry, and name it. */
  for (int two = 0; two < 2 && W > 1; two++) {
    tcase c = {SHOAL_RT_F32, SHOAL_RED_SUM, SHOAL_COLL_GPU_HOISTED, 1, 0, 100, 1, 0, 0};
    prepare(c, seed, FLAG_AREA, exp);
    syncs[me].blocks = 0;
    host_barrier();
    if (me != W - 1) {
      force_two = two;
      if (launch(c, FLAG_AREA, 200000000ull)) exit(1);
      force_two = false;
      const unsigned v = syncs[me].blocks;
      if (v != (SHOAL_COLL_GPU_TIMED_OUT | (unsigned)(W - 1)) || last_ll == two) {
        fprintf(stderr, "FAIL PE %d: after a timeout (%s) the counter is %#x, expected %#x\n", me,
                two ? "two exchanges" : "one exchange", v, SHOAL_COLL_GPU_TIMED_OUT | (unsigned)(W - 1));
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
  heap_bytes = FLAG_AREA + 11 * (2 * REGION + 4096) + 4096;
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
  printf("coll_gpu_reduce_emu: W=%d threads/block=%d seed=%llu\n", W, NT, (unsigned long long)seed);
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
  printf("coll_gpu_reduce_emu W=%d: %llu passed, %llu failed%s\n", W, checked - fails, fails,
         bad_exit ? " (a PE process died)" : "");
  return fails || bad_exit ? 1 : 0;
}
