/*
 * coll_gpu_harness.cu - the GPU fcollect / alltoall / broadcast kernels (collectives/gpu/coll_gpu.h) on W PEs of one host, without
 * the runtime: W threads of one process (default) or W processes sharing their heaps by CUDA IPC (--procs, the way the
 * runtime's device heap is shared; run several processes on one GPU under MPS). See coll_gpu_world.h.
 *
 * Every case: each PE fills its source from coll_gpu_testdata.h (random from the run's seed), poisons its destination
 * with the bitwise complement of the expected bytes (so that a missing store always shows), host barrier, launches its
 * kernel and enqueues the copy of its destination back right behind it on its stream (with wait = 1 the copy starts as
 * soon as this PE's kernel completes, which checks that completion implies every peer's data has arrived; with
 * wait = 0: stream synchronize + host barrier first, the runtime's fallback), then compares every element and checks
 * its completion counter. Then a back-to-back sequence: six calls with no host synchronization between them.
 *
 *   coll_gpu_harness -W n [--procs] [--quick] [--seed S] [--max-bytes B] [--matrix FILE] [--dump DIR [--variant V]]
 * Exit: 0 all passed, 1 a mismatch or error, 77 no GPU.
 */
#include <time.h>

#include <algorithm>
#include <string>

#include "coll_gpu_testdata.h"
#include "coll_gpu_world.h"

namespace {

struct tcase {
  int op, variant, g, sms;
  size_t tile;
  int type;
  size_t nelem;
  int wait;
  size_t src_shift, dst_shift; /* misalign src / dst_off by these bytes (byte path) */
  int pipe = SHOAL_COLL_GPU_PIPE_AUTO;
  int root = 0; /* broadcast */
};

const char *op_name(int op) {
  return op == SHOAL_COLL_GPU_ALLTOALL ? "alltoall" : op == SHOAL_COLL_GPU_BCAST ? "broadcast" : "fcollect";
}
const char *var_name(int v) { return v == SHOAL_COLL_GPU_NAIVE ? "naive" : "hoisted"; }
size_t nbytes_of(const tcase &c) { return c.nelem * coll_types[c.type].size; }
size_t srcbytes_of(const tcase &c, int W) { return (c.op == SHOAL_COLL_GPU_ALLTOALL ? W : 1) * nbytes_of(c); }

std::string label_of(const tcase &c, int W) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s %s W=%d G=%d %s n=%zu wait=%d sms=%d tile=%zu shift=%zu/%zu pipe=%d root=%d",
           op_name(c.op), var_name(c.variant), W, c.g, coll_types[c.type].name, c.nelem, c.wait, c.sms, c.tile,
           c.src_shift, c.dst_shift, c.pipe, c.root);
  return buf;
}

struct opts {
  int W = 4, procs = 0, quick = 0;
  uint64_t seed = 0;
  size_t max_bytes = (size_t)256 << 20;
  const char *matrix = nullptr, *dump = nullptr;
  int dump_variant = SHOAL_COLL_GPU_HOISTED; /* --dump: the variant whose outputs are written */
};

std::vector<tcase> make_cases(const opts &o, size_t big) {
  std::vector<tcase> cases;
  const int W = o.W;
  const int ops[3] = {SHOAL_COLL_GPU_FCOLLECT, SHOAL_COLL_GPU_ALLTOALL, SHOAL_COLL_GPU_BCAST};
  const int vars[2] = {SHOAL_COLL_GPU_HOISTED, SHOAL_COLL_GPU_NAIVE};
  const bool spec = W == 2 || W == 4 || W == 8;
  if (o.dump) { /* the inputs of the torch.distributed comparison (tests/gpu/coll/gloo_compare.py) */
    for (int op : {SHOAL_COLL_GPU_FCOLLECT, SHOAL_COLL_GPU_ALLTOALL})
      for (int t = 0; t < COLL_NTYPES; t++)
        for (size_t n : {(size_t)1, (size_t)1000, (size_t)65537, (size_t)1 << 20})
          cases.push_back({op, o.dump_variant, 0, 0, 0, t, n, 1, 0, 0});
    return cases;
  }
  int k = 0;
  for (int op : ops)
    for (int var : vars)
      for (int g : {1, 2, 4, 8}) {
        if (spec && g > W) continue;
        for (int t = 0; t < COLL_NTYPES; t++) {
          const size_t es = coll_types[t].size;
          /* 1 element; odd counts (byte path where not 16-byte multiples); around multiples of a 4 KiB tile */
          std::vector<size_t> ns = {1, 3, 4096 / es - 1, 4096 / es + 1, 3 * 4096 / es + 16 / es, 100003};
          if (o.quick) ns = {1, 3 * 4096 / es + 16 / es, 100003};
          for (size_t n : ns) {
            const int wait = (k % 3) != 2;
            /* pipelining off and on in turn; with 3 sizes (--quick) or 6 per type, each gets both */
            const int pipe = (k++ % 2) ? SHOAL_COLL_GPU_PIPE_ON : SHOAL_COLL_GPU_PIPE_OFF;
            cases.push_back({op, var, g, 0, (size_t)((n % 2) ? 0 : 4096), t, n, wait, 0, 0, pipe, k % W}); /* roots */
          }
        }
      }
  for (int op : ops)
    for (int var : vars) {
      const int r = W - 1, A = SHOAL_COLL_GPU_PIPE_AUTO; /* broadcast root: the last PE */
      for (int pipe : {SHOAL_COLL_GPU_PIPE_OFF, SHOAL_COLL_GPU_PIPE_ON}) {
        cases.push_back({op, var, 0, 1, 0, COLL_FP32, 50000, 1, 0, 0, pipe, r});               /* one block */
        cases.push_back({op, var, 0, 7, 16, COLL_FP16, 4099 * 8, 1, 0, 0, pipe, r});           /* 16-byte tiles */
        cases.push_back({op, var, 0, 3, 1 << 20, COLL_INT8, (3 << 20) + 48, 0, 0, 0, pipe, r}); /* many chunks */
      }
      cases.push_back({op, var, 0, 0, 0, COLL_BF16, 77777, 1, 2, 6, A, r});               /* misaligned: byte path */
      cases.push_back({op, var, 0, 0, 0, COLL_INT8, 1 << 16, 1, 1, 0, A, r});
      if (!o.quick) cases.push_back({op, var, 0, 0, 0, COLL_FP32, (big + 48) / 4, 1, 0, 0, A, r}); /* large */
      cases.push_back({op, var, 0, 0, 0, COLL_FP16, ((size_t)1 << 20) + 1, 1, 0, 0, A, r});      /* large bytes */
    }
  return cases;
}

const size_t NB2B = 6, B2B_N = 70000;
tcase b2b_case(size_t i) {
  return {(int)(i % 2), (int)((i / 2) % 2), 0, 0, 0, (int)(i % COLL_NTYPES), B2B_N - 977 * i, 1, 0, 0};
}

struct pe_bufs {
  char *src = nullptr;  /* device: sources (one region per back-to-back call) */
  char *back = nullptr; /* pinned host: readback */
  size_t src_bytes = 0, back_bytes = 0;
};

/* This PE's expected destination: slot s holds PE s's block (fcollect) or block `me` of PE s's source (alltoall). */
void expected(const tcase &c, int W, int me, uint64_t seed, std::vector<char> &exp) {
  const size_t nb = nbytes_of(c);
  if (c.op == SHOAL_COLL_GPU_BCAST) { /* the root's source, once */
    exp.resize(nb);
    coll_fill(c.type, seed, c.root, 0, c.nelem, exp.data());
    return;
  }
  exp.resize((size_t)W * nb);
  for (int s = 0; s < W; s++)
    coll_fill(c.type, seed, s, c.op == SHOAL_COLL_GPU_ALLTOALL ? (uint64_t)me * c.nelem : 0, c.nelem, &exp[s * nb]);
}

/* Source upload and poisoned destination (synchronous). */
void prepare(cw_pe &pe, const tcase &c, uint64_t seed, size_t dst_off, char *src_dev, std::vector<char> &exp) {
  const size_t es = coll_types[c.type].size;
  const size_t nsrc = srcbytes_of(c, pe.W) / es;
  std::vector<char> src(nsrc * es);
  coll_fill(c.type, seed, pe.me, 0, nsrc, src.data());
  CK(API(Memcpy)(src_dev + c.src_shift, src.data(), src.size(), API(MemcpyHostToDevice)));
  expected(c, pe.W, pe.me, seed, exp);
  std::vector<char> poison(exp.size());
  for (size_t i = 0; i < exp.size(); i++) poison[i] = (char)~exp[i];
  CK(API(Memcpy)(pe.heap + dst_off + c.dst_shift, poison.data(), poison.size(), API(MemcpyHostToDevice)));
  /* A pageable cudaMemcpy may return before its DMA has landed, and the kernel runs on a non-blocking stream (no
   * implicit ordering with the legacy stream): wait for the uploads here, before the barrier that lets peers store. */
  CK(API(DeviceSynchronize)());
}

void launch(cw_pe &pe, const tcase &c, size_t dst_off, const char *src_dev) {
  shoal_coll_gpu_args_t a = cw_args(pe, c.op, dst_off + c.dst_shift, src_dev + c.src_shift, nbytes_of(c), c.wait);
  a.timeout_ns = 20000000000ull;
  a.root = c.root;
  a.cfg.variant = c.variant;
  a.cfg.group = c.g;
  a.cfg.sms = c.sms;
  a.cfg.tile = c.tile;
  a.cfg.pipe = c.pipe;
  char err[256];
  if (shoal_coll_gpu_launch(&a, pe.s, err, sizeof err)) {
    fprintf(stderr, "harness: PE %d: %s\n", pe.me, err);
    exit(1);
  }
}

void readback(cw_pe &pe, const tcase &c, size_t dst_off, char *host) {
  CK(API(MemcpyAsync)(host, pe.heap + dst_off + c.dst_shift, (size_t)pe.W * nbytes_of(c), API(MemcpyDeviceToHost), pe.s));
}

/* Compare (first mismatches printed) and check the completion state; returns the number of bad elements. */
size_t check(cw_pe &pe, const tcase &c, const std::vector<char> &exp, const char *got, unsigned long long epochs) {
  const size_t es = coll_types[c.type].size;
  size_t bad = 0;
  if (memcmp(exp.data(), got, exp.size())) {
    const std::string l = label_of(c, pe.W);
    for (size_t i = 0; i < exp.size(); i += es)
      if (memcmp(&exp[i], &got[i], es) && bad++ < 4) {
        unsigned e = 0, g = 0;
        memcpy(&e, &exp[i], es);
        memcpy(&g, &got[i], es);
        fprintf(stderr, "  MISMATCH %s: PE %d slot %zu (from PE %zu) element %zu, byte offset %zu of dest: expected "
                "0x%0*x got 0x%0*x%s\n", l.c_str(), pe.me, i / es / c.nelem, i / es / c.nelem, (i / es) % c.nelem,
                i, (int)es * 2, e, (int)es * 2, g, (unsigned char)got[i] == (unsigned char)~exp[i] ? " (poison: not written)" : "");
      }
    if (bad) { /* where the bad elements are: per slot, count and first / last element */
      const size_t W = c.op == SHOAL_COLL_GPU_BCAST ? 1 : (size_t)pe.W;
      for (size_t s = 0; s < W; s++) {
        size_t cnt = 0, first = 0, last = 0, poison = 0;
        for (size_t k = 0; k < c.nelem; k++) {
          const size_t i = (s * c.nelem + k) * es;
          if (memcmp(&exp[i], &got[i], es)) {
            if (!cnt++) first = k;
            last = k;
            poison += (unsigned char)got[i] == (unsigned char)~exp[i];
          }
        }
        if (cnt)
          fprintf(stderr, "    PE %d slot %zu: %zu of %zu elements bad (first %zu, last %zu; %zu still poison)\n", pe.me, s,
                  cnt, c.nelem, first, last, poison);
      }
    }
  }
  shoal_coll_gpu_sync_t sy;
  CK(API(Memcpy)(&sy, pe.sync, sizeof sy, API(MemcpyDeviceToHost)));
  if (sy.blocks & SHOAL_COLL_GPU_TIMED_OUT) {
    fprintf(stderr, "  TIMEOUT %s: PE %d waited in vain for PE %u\n", label_of(c, pe.W).c_str(), pe.me,
            sy.blocks & ~SHOAL_COLL_GPU_TIMED_OUT);
    bad++;
  } else if (sy.blocks) {
    fprintf(stderr, "  PE %d: completion counter %u after the call\n", pe.me, sy.blocks);
    bad++;
  }
  if (pe.W > 1 && sy.epoch != epochs) {
    fprintf(stderr, "  PE %d: %llu calls counted on the device, %llu made\n", pe.me, sy.epoch, epochs);
    bad++;
  }
  return bad;
}

double now_s() {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

} // namespace

int main(int argc, char **argv) {
  opts o;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a == "-W" && i + 1 < argc) o.W = atoi(argv[++i]);
    else if (a == "--procs") o.procs = 1;
    else if (a == "--quick") o.quick = 1;
    else if (a == "--seed" && i + 1 < argc) o.seed = strtoull(argv[++i], nullptr, 0);
    else if (a == "--max-bytes" && i + 1 < argc) o.max_bytes = cw_parse_size(argv[++i]);
    else if (a == "--matrix" && i + 1 < argc) o.matrix = argv[++i];
    else if (a == "--dump" && i + 1 < argc) o.dump = argv[++i];
    else if (a == "--variant" && i + 1 < argc) {
      std::string v = argv[++i];
      if (v != "naive" && v != "hoisted") {
        fprintf(stderr, "harness: --variant %s: expected naive or hoisted\n", v.c_str());
        return 2;
      }
      o.dump_variant = v == "naive" ? SHOAL_COLL_GPU_NAIVE : SHOAL_COLL_GPU_HOISTED;
    } else {
      fprintf(stderr, "usage: %s -W n [--procs] [--quick] [--seed S] [--max-bytes B] [--matrix FILE] [--dump DIR [--variant V]]\n",
              argv[0]);
      return 2;
    }
  }
  if (o.W < 1 || o.W > CW_MAX_PES) {
    fprintf(stderr, "harness: -W %d out of range [1, %d]\n", o.W, CW_MAX_PES);
    return 2;
  }
  /* Threads mode: PEs of one context whose kernels wait for each other. With CUDA's lazy module loading a launch may
   * need a context synchronization to load its kernel, which cannot finish while a peer's kernel waits for this one
   * (the CUDA guide's "Lazy Loading: concurrent execution" hazard): load every kernel at context creation instead. */
  setenv("CUDA_MODULE_LOADING", "EAGER", 0);
  if (cw_gpu_count() < 1) {
    printf("coll_gpu_harness: no GPU: skipped\n");
    return 77;
  }
  if (!o.seed) o.seed = (uint64_t)time(nullptr) ^ ((uint64_t)getpid() << 20);
  const int W = o.W;
  printf("coll_gpu_harness: W=%d %s seed=%llu\n", W, o.procs ? "processes" : "threads", (unsigned long long)o.seed);
  fflush(stdout);

  /* Largest per-PE block (--max-bytes): bounded so that a case (W x W blocks, about five host copies of each PE's
   * share) stays within a few tens of GiB of host memory. */
  size_t big = std::min(o.max_bytes, ((size_t)16 << 30) / ((size_t)W * W)) & ~(size_t)4095;
  const std::vector<tcase> cases = make_cases(o, big);
  size_t max_dst = 0, max_src = 0;
  for (auto &c : cases) {
    max_dst = std::max(max_dst, (size_t)W * nbytes_of(c) + c.dst_shift);
    max_src = std::max(max_src, srcbytes_of(c, W) + c.src_shift);
  }
  const size_t b2b_area = (size_t)W * B2B_N * 4 + 64, b2b_src = (size_t)W * B2B_N * 4 + 64;
  max_dst = std::max(max_dst, NB2B * b2b_area);
  max_src = std::max(max_src, NB2B * b2b_src);
  const size_t nres = cases.size() + NB2B;

  cw_shared *sh = nullptr;
  int died = cw_run(W, o.procs, nres * CW_MAX_PES * sizeof(unsigned long long), [&](cw_pe &pe) {
    unsigned long long *res = (unsigned long long *)pe.sh->extra; /* [case][pe]: bad elements, ~0 = not run */
    for (size_t ci = 0; ci < nres; ci++) res[ci * CW_MAX_PES + pe.me] = ~0ull; /* not run (yet) */
    cw_setup(pe, CW_FLAG_AREA + max_dst + 64);
    pe_bufs b;
    CK(API(Malloc)((void **)&b.src, max_src + 64));
    CK(SHOAL_GPU_HOST_ALLOC((void **)&b.back, max_dst + 64));
    unsigned long long epochs = 0;
    std::vector<char> exp;
    double t_case = now_s();
    for (size_t ci = 0; ci < cases.size(); ci++) {
      const tcase &c = cases[ci];
      const uint64_t seed = o.seed + ci;
      prepare(pe, c, seed, CW_FLAG_AREA, b.src, exp);
      cw_barrier(pe); /* every destination poisoned before anyone stores */
      launch(pe, c, CW_FLAG_AREA, b.src);
      epochs += c.wait && W > 1;
      if (!c.wait) { /* the host-side completion: own kernel done, then a host barrier */
        CK(API(StreamSynchronize)(pe.s));
        cw_barrier(pe);
      }
      readback(pe, c, CW_FLAG_AREA, b.back);
      CK(API(StreamSynchronize)(pe.s));
      res[ci * CW_MAX_PES + pe.me] = check(pe, c, exp, b.back, epochs);
      if (o.dump) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s_%s_%zu_w%d_pe%d.bin", o.dump, op_name(c.op), coll_types[c.type].name,
                 c.nelem, W, pe.me);
        FILE *f = fopen(path, "wb");
        if (!f || fwrite(b.back, 1, exp.size(), f) != exp.size()) {
          fprintf(stderr, "harness: %s: %s\n", path, strerror(errno));
          exit(1);
        }
        fclose(f);
      }
      cw_barrier(pe); /* nobody prepares the next case while a peer still reads this one */
      bool any = false;
      for (int q = 0; q < W; q++) any = any || res[ci * CW_MAX_PES + q];
      if (any) { /* a failed call (a timeout leaves TIMED_OUT in sync->blocks, epochs diverge): re-arm every PE's flags
                  * and completion state, so that one failure does not fail every later case */
        CK(API(DeviceSynchronize)());
        CK(API(Memset)(pe.heap, 0, CW_FLAG_AREA));
        CK(API(Memset)(pe.sync, 0, sizeof(shoal_coll_gpu_sync_t)));
        CK(API(DeviceSynchronize)());
        epochs = 0;
        if (pe.me == 0) fprintf(stderr, "  (case %zu failed: flags and epochs re-armed)\n", ci);
        cw_barrier(pe);
      }
      const double t1 = now_s();
      if (pe.me == 0 && t1 - t_case > 2.0)
        fprintf(stderr, "  SLOW case %zu %s: %.1f s\n", ci, label_of(c, W).c_str(), t1 - t_case);
      t_case = t1;
    }
    if (!o.dump) { /* back-to-back: no host synchronization between the calls */
      std::vector<std::vector<char>> exps(NB2B);
      for (size_t i = 0; i < NB2B; i++)
        prepare(pe, b2b_case(i), o.seed + 1000 + i, CW_FLAG_AREA + i * b2b_area, b.src + i * b2b_src, exps[i]);
      cw_barrier(pe);
      for (size_t i = 0; i < NB2B; i++) {
        launch(pe, b2b_case(i), CW_FLAG_AREA + i * b2b_area, b.src + i * b2b_src);
        readback(pe, b2b_case(i), CW_FLAG_AREA + i * b2b_area, b.back + i * b2b_area);
      }
      epochs += W > 1 ? NB2B : 0;
      CK(API(StreamSynchronize)(pe.s));
      for (size_t i = 0; i < NB2B; i++)
        res[(cases.size() + i) * CW_MAX_PES + pe.me] = check(pe, b2b_case(i), exps[i], b.back + i * b2b_area, epochs);
    }
    CK(SHOAL_GPU_HOST_FREE(b.back));
    CK(API(Free)(b.src));
    cw_teardown(pe);
  }, &sh);

  unsigned long long *res = (unsigned long long *)sh->extra;
  FILE *mf = o.matrix ? fopen(o.matrix, "a") : nullptr;
  size_t passed = 0, failed = 0;
  for (size_t ci = 0; ci < nres; ci++) {
    if (o.dump && ci >= cases.size()) break;
    const tcase c = ci < cases.size() ? cases[ci] : b2b_case(ci - cases.size());
    unsigned long long bad = 0;
    std::string per;
    for (int p = 0; p < W; p++) {
      const unsigned long long r = res[ci * CW_MAX_PES + p];
      if (r) per += " PE" + std::to_string(p) + (r == ~0ull ? ":not-run" : ":" + std::to_string(r));
      bad += r == ~0ull ? 1 : r;
    }
    const std::string l = (ci < cases.size() ? "" : "back-to-back ") + label_of(c, W);
    if (bad) fprintf(stderr, "FAIL case %zu %s: %llu bad (%s)\n", ci, l.c_str(), bad, per.c_str() + 1);
    bad ? failed++ : passed++;
    if (mf)
      fprintf(mf, "%s,%s,%s,%d,%d,%s,%zu,%d,%d,%s\n", o.procs ? "procs" : "threads", op_name(c.op), var_name(c.variant),
              W, c.g, coll_types[c.type].name, c.nelem, c.wait, c.pipe, bad ? "FAIL" : "ok");
  }
  if (mf) fclose(mf);
  if (died) {
    fprintf(stderr, "harness: %d PE(s) did not finish\n", died);
    failed++;
  }
  printf("coll_gpu_harness W=%d %s: %zu passed, %zu failed\n", W, o.procs ? "processes" : "threads", passed, failed);
  return failed ? 1 : 0;
}
