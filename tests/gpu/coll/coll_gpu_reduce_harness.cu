/*
 * coll_gpu_reduce_harness.cu - the GPU reduction kernels (collectives/gpu/coll_gpu_reduce.h) on W PEs of one host
 * without the runtime (coll_gpu_world.h: W processes sharing their heaps, --procs; or W threads), every (type, op) x
 * variant against coll_gpu_reduce_ref.h's host reference (integers exact; fp32/fp64/complex relative 1e-5 x W; fp16,
 * bf16 one ulp), from 1 element to --max-bytes per PE, misaligned (element path), in place, host or in-kernel
 * completion; then back-to-back calls without host synchronization (the device's epoch count checked).
 *
 *   coll_gpu_reduce_harness -W n [--procs] [--quick] [--seed S] [--max-bytes B] [--dump DIR [--variant V]]
 * --dump: only the sum of fp32 / fp16 / bf16 at 1, 1000, 65537 and 2^20 elements (case i: seed S + i), every PE's dest
 * written to DIR/allreduce_{fp32,fp16,bf16}_{n}_w{W}_pe{p}.bin for tests/gpu/coll/gloo_allreduce.py.
 * Exit: 0 all passed, 1 a mismatch or error, 77 no GPU.
 */
#include <time.h>

#include <algorithm>
#include <string>

#include "coll_gpu_reduce_ref.h"
#include "coll_gpu_world.h"

namespace {

struct tcase {
  int type, op, variant, sms;
  size_t tile, nelem;
  int wait, inplace;
  size_t shift;
};

std::string label_of(const tcase &c, int W) {
  char b[256];
  snprintf(b, sizeof b, "reduce %s %s %s W=%d n=%zu wait=%d sms=%d tile=%zu shift=%zu%s", shoal_red_op_name(c.op),
           shoal_red_type_name(c.type), c.variant == SHOAL_COLL_GPU_NAIVE ? "naive" : "hoisted", W, c.nelem, c.wait,
           c.sms, c.tile, c.shift, c.inplace ? " in-place" : "");
  return b;
}

const char *dump_name(int t) { return t == SHOAL_RT_F32 ? "fp32" : t == SHOAL_RT_F16 ? "fp16" : "bf16"; }

std::vector<tcase> make_cases(int W, bool quick, size_t big, const char *dump, int dump_variant) {
  std::vector<tcase> cs;
  if (dump) { /* the inputs of tests/gpu/coll/gloo_allreduce.py (same order) */
    for (int t : {SHOAL_RT_F32, SHOAL_RT_F16, SHOAL_RT_BF16})
      for (size_t n : {(size_t)1, (size_t)1000, (size_t)65537, (size_t)1 << 20})
        cs.push_back({t, SHOAL_RED_SUM, dump_variant, 0, 0, n, 1, 0, 0});
    return cs;
  }
  int k = 0;
  for (int t = 0; t < SHOAL_RT_NTYPES; t++)
    for (int op = 0; op < SHOAL_RED_NOPS; op++) {
      if (!shoal_red_supported(t, op)) continue;
      const size_t es = shoal_red_type_size(t), e = 16 / es ? 16 / es : 1;
      for (int var : {SHOAL_COLL_GPU_HOISTED, SHOAL_COLL_GPU_NAIVE}) {
        std::vector<size_t> ns = {1, e * W - 1, e * W * 4096 + 3, (size_t)100003};
        if (quick) ns = {1, (size_t)100003};
        for (size_t n : ns) {
          cs.push_back({t, op, var, 0, 0, n, (k % 4) != 3, k % 5 == 2, (k % 6 == 5) ? es : 0});
          k++;
        }
      }
    }
  /* large vectors: the all-reduce's sizes (sum, fp32 / fp16 / bf16), both variants; grids and tiles forced */
  for (int var : {SHOAL_COLL_GPU_HOISTED, SHOAL_COLL_GPU_NAIVE}) {
    for (int t : {SHOAL_RT_F32, SHOAL_RT_F16, SHOAL_RT_BF16})
      cs.push_back({t, SHOAL_RED_SUM, var, 0, 0, (quick ? ((size_t)4 << 20) : big) / shoal_red_type_size(t) + 5, 1, 0, 0});
    cs.push_back({SHOAL_RT_F32, SHOAL_RED_SUM, var, 1, 0, 1 << 18, 1, 0, 0});
    cs.push_back({SHOAL_RT_F32, SHOAL_RED_SUM, var, 7, 16, 4099 * 8, 1, 1, 0});
    cs.push_back({SHOAL_RT_I32, SHOAL_RED_MAX, var, 3, 1 << 20, (3 << 18) + 7, 0, 0, 0});
  }
  return cs;
}

/* Calls 6 .. 11 are small: the one exchange (hoisted) back to back, its scratch halves alternating, with two
 * two-exchange calls (naive) in between. */
const size_t NB2B = 12, B2B_N = 70000;
tcase b2b_case(size_t i) {
  if (i >= 6)
    return {(int)(i % 2 ? SHOAL_RT_F32 : SHOAL_RT_BF16), SHOAL_RED_SUM,
            i == 8 || i == 9 ? SHOAL_COLL_GPU_NAIVE : SHOAL_COLL_GPU_HOISTED, 0, 0, 300 + 37 * i, 1, 0, 0};
  return {(int)(i % 2 ? SHOAL_RT_F32 : SHOAL_RT_BF16), SHOAL_RED_SUM, (int)((i / 2) % 2), 0, 0, B2B_N - 977 * i, 1, 0, 0};
}

size_t bytes_of(const tcase &c) { return c.nelem * shoal_red_type_size(c.type); }

} // namespace

int main(int argc, char **argv) {
  int W = 4, procs = 0, quick = 0, dump_variant = SHOAL_COLL_GPU_HOISTED;
  const char *dump = nullptr;
  uint64_t seed = 0;
  size_t max_bytes = (size_t)256 << 20;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a == "-W" && i + 1 < argc) W = atoi(argv[++i]);
    else if (a == "--procs") procs = 1;
    else if (a == "--quick") quick = 1;
    else if (a == "--seed" && i + 1 < argc) seed = strtoull(argv[++i], nullptr, 0);
    else if (a == "--max-bytes" && i + 1 < argc) max_bytes = cw_parse_size(argv[++i]);
    else if (a == "--dump" && i + 1 < argc) dump = argv[++i];
    else if (a == "--variant" && i + 1 < argc) dump_variant = std::string(argv[++i]) == "naive" ? SHOAL_COLL_GPU_NAIVE : SHOAL_COLL_GPU_HOISTED;
    else {
      fprintf(stderr, "usage: %s -W n [--procs] [--quick] [--seed S] [--max-bytes B]\n", argv[0]);
      return 2;
    }
  }
  if (W < 1 || W > CW_MAX_PES) {
    fprintf(stderr, "reduce harness: -W %d out of range [1, %d]\n", W, CW_MAX_PES);
    return 2;
  }
  setenv("CUDA_MODULE_LOADING", "EAGER", 0);
  if (cw_gpu_count() < 1) {
    printf("coll_gpu_reduce_harness: no GPU: skipped\n");
    return 77;
  }
  if (!seed) seed = (uint64_t)time(nullptr) ^ ((uint64_t)getpid() << 20);
  printf("coll_gpu_reduce_harness: W=%d %s seed=%llu\n", W, procs ? "processes" : "threads", (unsigned long long)seed);
  fflush(stdout);
  const size_t big = std::min(max_bytes, ((size_t)8 << 30) / (size_t)W) & ~(size_t)4095;
  const std::vector<tcase> cases = make_cases(W, quick, big, dump, dump_variant);
  size_t region = NB2B * 0;
  for (auto &c : cases) region = std::max(region, bytes_of(c) + c.shift + 64);
  region = std::max(region, B2B_N * 4 + 64);
  region = (region + 4095) & ~(size_t)4095;
  const size_t nres = cases.size() + NB2B;
  /* heap: flags | src region | dst region, and NB2B (src, dst) pairs for the back-to-back calls */
  const size_t b2b_pair = 2 * (((B2B_N * 4 + 64) + 4095) & ~(size_t)4095);
  const size_t heap = CW_FLAG_AREA + 2 * region + NB2B * b2b_pair;
  cw_shared *sh = nullptr;
  int died = cw_run(W, procs, nres * CW_MAX_PES * sizeof(unsigned long long), [&](cw_pe &pe) {
    unsigned long long *res = (unsigned long long *)pe.sh->extra;
    for (size_t ci = 0; ci < nres; ci++) res[ci * CW_MAX_PES + pe.me] = ~0ull;
    cw_setup(pe, heap);
    char *host = nullptr;
    CK(SHOAL_GPU_HOST_ALLOC((void **)&host, region));
    std::vector<char> src, exp;
    unsigned long long epochs = 0, ll_calls = 0;
    auto run_case = [&](const tcase &c, size_t src_off, size_t dst_off, uint64_t s, bool sync_prep) {
      src.resize(bytes_of(c));
      red_fill(c.type, c.op, s, pe.me, 0, c.nelem, src.data());
      CK(API(Memcpy)(pe.heap + src_off, src.data(), src.size(), API(MemcpyHostToDevice)));
      if (dst_off != src_off) CK(API(Memset)(pe.heap + dst_off, 0xa5, bytes_of(c)));
      if (sync_prep) CK(API(DeviceSynchronize)());
    };
    auto launch = [&](const tcase &c, size_t src_off, size_t dst_off) -> int { /* the epochs the call takes */
      shoal_coll_gpu_args_t g = cw_args(pe, 0, 0, nullptr, 0, c.wait);
      shoal_coll_gpu_red_args_t a;
      memset(&a, 0, sizeof a);
      a.op = c.op;
      a.type = c.type;
      a.me = pe.me;
      a.npes = W;
      a.peer_base = pe.table;
      a.src_off = src_off;
      a.dst_off = dst_off;
      a.nelems = c.nelem;
      a.flag_off = 0;
      a.sync = pe.sync;
      a.wait = c.wait;
      a.one_gpu = g.one_gpu;
      a.timeout_ns = 20000000000ull;
      a.cfg = g.cfg; /* CW_SMALL=off: the two-exchange path for every call */
      a.cfg.variant = c.variant;
      a.cfg.sms = c.sms;
      a.cfg.tile = c.tile;
      a.ll_off = CW_LL_OFF;
      a.ll_half = CW_LL_HALF;
      char err[256];
      if (shoal_coll_gpu_reduce_launch(&a, pe.s, err, sizeof err)) {
        fprintf(stderr, "reduce harness: PE %d: %s\n", pe.me, err);
        exit(1);
      }
      const int ep = shoal_coll_gpu_reduce_epochs(&a);
      ll_calls += ep == 1;
      return ep;
    };
    auto check = [&](const tcase &c, size_t dst_off, uint64_t s, const char *prefix) -> unsigned long long {
      exp.resize(bytes_of(c));
      red_reference(c.type, c.op, W, s, c.nelem, exp.data());
      CK(API(Memcpy)(host, pe.heap + dst_off, bytes_of(c), API(MemcpyDeviceToHost)));
      const std::string l = prefix + label_of(c, W);
      unsigned long long bad = red_compare(c.type, W, exp.data(), host, c.nelem, l.c_str(), pe.me);
      shoal_coll_gpu_sync_t sy;
      CK(API(Memcpy)(&sy, pe.sync, sizeof sy, API(MemcpyDeviceToHost)));
      if (sy.blocks) {
        fprintf(stderr, "  %s: PE %d: completion counter %#x after the call%s\n", l.c_str(), pe.me, sy.blocks,
                sy.blocks & SHOAL_COLL_GPU_TIMED_OUT ? " (TIMEOUT)" : "");
        bad++;
      }
      if (W > 1 && sy.epoch != epochs) {
        fprintf(stderr, "  %s: PE %d: %llu epochs counted on the device, %llu expected\n", l.c_str(), pe.me, sy.epoch,
                epochs);
        bad++;
      }
      return bad;
    };
    for (size_t ci = 0; ci < cases.size(); ci++) {
      const tcase &c = cases[ci];
      const size_t so = CW_FLAG_AREA + c.shift, dof = c.inplace ? so : CW_FLAG_AREA + region + c.shift;
      run_case(c, so, dof, seed + ci, true);
      cw_barrier(pe);
      epochs += launch(c, so, dof);
      CK(API(StreamSynchronize)(pe.s));
      if (!c.wait) cw_barrier(pe);
      res[ci * CW_MAX_PES + pe.me] = check(c, dof, seed + ci, "");
      if (dump) {
        char path[512];
        snprintf(path, sizeof path, "%s/allreduce_%s_%zu_w%d_pe%d.bin", dump, dump_name(c.type), c.nelem, W, pe.me);
        FILE *f = fopen(path, "wb");
        if (!f || fwrite(host, 1, bytes_of(c), f) != bytes_of(c)) {
          fprintf(stderr, "reduce harness: %s: %s\n", path, strerror(errno));
          exit(1);
        }
        fclose(f);
      }
      cw_barrier(pe);
      bool any = false;
      for (int q = 0; q < W; q++) any = any || res[ci * CW_MAX_PES + q];
      if (any) { /* re-arm flags and epochs so that one failure does not fail every later case */
        CK(API(DeviceSynchronize)());
        CK(API(Memset)(pe.heap, 0, CW_FLAG_AREA));
        CK(API(Memset)(pe.sync, 0, sizeof(shoal_coll_gpu_sync_t)));
        CK(API(DeviceSynchronize)());
        epochs = 0;
        cw_barrier(pe);
      }
    }
    /* back-to-back */
    if (dump) {
      CK(SHOAL_GPU_HOST_FREE(host));
      cw_teardown(pe);
      for (size_t i = 0; i < NB2B; i++) res[(cases.size() + i) * CW_MAX_PES + pe.me] = 0;
      return;
    }
    const size_t b0 = CW_FLAG_AREA + 2 * region;
    for (size_t i = 0; i < NB2B; i++) run_case(b2b_case(i), b0 + i * b2b_pair, b0 + i * b2b_pair + b2b_pair / 2, seed + 1000 + i, false);
    CK(API(DeviceSynchronize)());
    cw_barrier(pe);
    for (size_t i = 0; i < NB2B; i++) epochs += launch(b2b_case(i), b0 + i * b2b_pair, b0 + i * b2b_pair + b2b_pair / 2);
    CK(API(StreamSynchronize)(pe.s));
    for (size_t i = 0; i < NB2B; i++)
      res[(cases.size() + i) * CW_MAX_PES + pe.me] = check(b2b_case(i), b0 + i * b2b_pair + b2b_pair / 2, seed + 1000 + i,
                                                           "back-to-back ");
    const char *small = getenv("CW_SMALL");
    if (W > 1 && !(small && !strcmp(small, "off")) && !ll_calls) {
      fprintf(stderr, "  PE %d: no call took the one exchange\n", pe.me);
      res[(cases.size() + NB2B - 1) * CW_MAX_PES + pe.me]++;
    }
    if (pe.me == 0) printf("  PE 0: %llu calls took the one exchange\n", ll_calls);
    CK(SHOAL_GPU_HOST_FREE(host));
    cw_teardown(pe);
  }, &sh);
  unsigned long long *res = (unsigned long long *)sh->extra;
  size_t passed = 0, failed = 0;
  for (size_t ci = 0; ci < nres; ci++) {
    unsigned long long bad = 0;
    for (int p = 0; p < W; p++) bad += res[ci * CW_MAX_PES + p] == ~0ull ? 1 : res[ci * CW_MAX_PES + p];
    const tcase c = ci < cases.size() ? cases[ci] : b2b_case(ci - cases.size());
    if (bad) fprintf(stderr, "FAIL case %zu %s: %llu bad\n", ci, label_of(c, W).c_str(), bad);
    bad ? failed++ : passed++;
  }
  if (died) {
    fprintf(stderr, "reduce harness: %d PE(s) did not finish\n", died);
    failed++;
  }
  printf("coll_gpu_reduce_harness W=%d %s: %zu passed, %zu failed\n", W, procs ? "processes" : "threads", passed, failed);
  return failed ? 1 : 0;
}
