/*
 * bench_gpu_coll.cu - GPU all-gather (fcollect) and all-to-all bandwidth, as nccl-tests reports it, for the kernels of
 * collectives/gpu (every variant, G and COMM_SMS) on W PEs of one host, with the device-to-device cudaMemcpy ceiling
 * measured in the same run; built with -DSHOAL_BENCH_NVSHMEM against NVSHMEM it measures NVSHMEM's
 * nvshmemx_char_{fcollect,alltoall}_on_stream on the same PEs instead.
 *
 *   bench_gpu_coll -W n [--procs] [--op fcollect|alltoall|both] [--variants naive,hoisted] [--g 0,1,2,4,8]
 *                  [--sms 0,66] [--tile 0,32K] [--pipe 0,1,2] [--scope 0,1] [--small 0,1] [--pdl 0,1] [--rtlaunch 0,1] [--repeat R] [--min SIZE] [--max SIZE]
 *                  [--factor F] [--sync device|host] [--ceiling] [--before] [--csv FILE] [--label TEXT]
 *
 * PEs: W threads of one process (default) or W processes sharing their heaps by CUDA IPC (--procs; several processes
 * on one GPU need MPS to run their kernels concurrently). Sizes are bytes per PE block (nbytes: what each PE
 * contributes to an all-gather, or sends to each peer in an all-to-all), from --min to --max (default 4 KiB to 1 GiB,
 * capped so that the buffers fit in 75% of the GPU), times --factor (default 4).
 * Reported, per nccl-tests (PERFORMANCE.md): size = W * nbytes (the all-gather output, the all-to-all send buffer),
 * time = per call (max over PEs of the mean of N back-to-back calls), algbw = size / time, busbw = algbw * (W-1) / W;
 * and moved = bytes read + written by all PEs / time (fcollect: W n + W^2 n; alltoall: 2 W^2 n), the figure to set
 * against the copy ceiling (cudaMemcpy device to device: 2 S / time).
 * --op allreduce (or all: the three): the float sum all-reduce (coll_gpu_reduce.h; NVSHMEM: nvshmemx_float_sum_reduce_
 * on_stream), n = bytes per PE (the vector, n / 4 floats), reported as nccl-tests' all_reduce_perf: size = n, algbw =
 * n / time, busbw = algbw * 2 (W-1) / W; moved = 2 W n / time (every PE's source read once and its dest written once).
 * G = 0, sms = 0, tile = 0, pipe = 0 (1 off, 2 on), scope = 0 (1: system scope) and small = 0 (1: a one-block call
 * completes as a grid does, the completion before 2026-12-01; allreduce: 1 = two exchanges at every size; the CSV's
 * small column says what ran: 1 = the one-block completion, or the all-reduce's one exchange), pdl = 0 (1: no programmatic dependent launch) and
 * rtlaunch = 0 (1: the runtime's launch, not the driver's cuLaunchKernelEx) mean the launcher's automatic choice.
 * --repeat R: every configuration of a size is measured R times, the configurations interleaved (A B A B ...), and the
 * median is reported with the smallest and largest (columns reps, min_us, max_us): side-by-side comparisons on a
 * shared, noisy GPU. --before: every configuration also runs, interleaved with it, with the automatic choices of the
 * 2026-11-29 afternoon runs (tile nbytes / COMM_SMS within 512 B .. 32 KiB, no pipelining, system-scope completion),
 * reported as variant "naive-before" / "hoisted-before". --sync host: kernels without the in-kernel wait, then stream
 * synchronize + host barrier per call (the launcher's fallback when the PEs' kernels cannot run concurrently).
 */
#include <math.h>
#include <time.h>

#include <algorithm>
#include <string>

#include "coll_gpu_reduce.h"
#include "coll_gpu_world.h"
#ifdef SHOAL_BENCH_NVSHMEM
#include <nvshmem.h>
#include <nvshmemx.h>
#endif

namespace {

struct opts {
  int W = 4, procs = 0, ceiling = 0, host_sync = 0, before = 0;
  std::vector<int> ops = {SHOAL_COLL_GPU_FCOLLECT, SHOAL_COLL_GPU_ALLTOALL};
  std::vector<int> variants = {SHOAL_COLL_GPU_NAIVE, SHOAL_COLL_GPU_HOISTED};
  std::vector<int> gs = {0}, sms = {0}, pipes = {0}, scopes = {0}, smalls = {0}, pdls = {0}, rtls = {0};
  std::vector<size_t> tiles = {0};
  int repeat = 1;
  size_t min = 4096, max = (size_t)1 << 30;
  double factor = 4;
  const char *csv = nullptr, *label = "";
};

std::vector<int> parse_list(const char *s) {
  std::vector<int> v;
  for (const char *p = s; *p;) {
    v.push_back(atoi(p));
    p += strcspn(p, ",");
    if (*p) p++;
  }
  return v;
}

/* Shared results: per PE, the time of the last measurement; PE 0 publishes the iteration count. */
struct shared_res {
  double ms[CW_MAX_PES];
  int iters;
  size_t cap;
};

double now_ms() {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

std::vector<size_t> parse_sizes(const char *s) {
  std::vector<size_t> v;
  for (const char *p = s; *p;) {
    char item[64];
    const size_t l = strcspn(p, ",");
    snprintf(item, sizeof item, "%.*s", (int)(l < 63 ? l : 63), p);
    v.push_back(cw_parse_size(item));
    p += l;
    if (*p) p++;
  }
  return v;
}

enum { OP_ALLREDUCE = 2 }; /* --op allreduce: the float sum all-reduce */

struct extra {
  int pipe = 0, scope = 0, reps = 1, small = 0, pdl = 0, rtl = 0;
  double min_us = 0, max_us = 0;
};

void emit(const opts &o, FILE *f, const char *impl, const char *op, int W, const char *variant, int g, int sms,
          size_t tile, size_t n, double us, const char *kernel, extra x = extra()) {
  const bool ar = !strcmp(op, "allreduce");
  const double size = ar ? (double)n : (double)W * n;
  const double algbw = size / (us * 1e3); /* GB/s */
  const double busbw = algbw * (ar ? 2.0 : 1.0) * (W - 1) / W;
  const double moved = (ar ? 2.0 * W * n : !strcmp(op, "alltoall") ? 2.0 * W * W * n : (double)W * n + (double)W * W * n) /
                       (us * 1e3);
  if (x.reps <= 1) x.min_us = x.max_us = us;
  char line[640];
  snprintf(line, sizeof line, "%s,%s,%s,%d,%s,%d,%d,%zu,%zu,%.0f,%.2f,%.2f,%.2f,%.2f,%s,%s,%d,%d,%d,%.2f,%.2f,%d,%d,%d", impl,
           o.procs ? "procs" : "threads", op, W, variant, g, sms, tile, n, size, us, algbw, busbw, moved, kernel, o.label,
           x.pipe, x.scope, x.reps, x.min_us, x.max_us, x.small, x.pdl, x.rtl);
  printf("%s\n", line);
  if (f) fprintf(f, "%s\n", line);
}

const char *CSV_HEADER = "impl,mode,op,W,variant,G,sms,tile,bytes_per_pe,size,time_us,algbw_GBs,busbw_GBs,moved_GBs,"
                         "kernel,label,pipe,scope,reps,min_us,max_us,small,pdl,rtlaunch";

/* Time calls of `call` (one collective on this PE's stream): warm up, let PE 0 choose N so that a measurement takes
 * about 20 ms (5 to 500 calls), then N back-to-back calls between two events. Returns the max over PEs in us. */
template <class F> double measure(cw_pe &pe, shared_res *r, F call, bool host_sync) {
  API(Event_t) e0, e1;
  CK(API(EventCreate)(&e0));
  CK(API(EventCreate)(&e1));
  auto one = [&] {
    call();
    if (host_sync) {
      CK(API(StreamSynchronize)(pe.s));
      cw_barrier(pe);
    }
  };
  cw_barrier(pe);
  const double t0 = now_ms();
  for (int i = 0; i < 3; i++) one();
  CK(API(StreamSynchronize)(pe.s));
  const double warm = (now_ms() - t0) / 3;
  cw_barrier(pe);
  if (pe.me == 0) r->iters = std::max(5, std::min(500, (int)(20.0 / std::max(warm, 1e-3))));
  cw_barrier(pe);
  const int iters = r->iters;
  CK(API(EventRecord)(e0, pe.s));
  for (int i = 0; i < iters; i++) one();
  CK(API(EventRecord)(e1, pe.s));
  CK(API(EventSynchronize)(e1));
  float ms = 0;
  CK(API(EventElapsedTime)(&ms, e0, e1));
  r->ms[pe.me] = ms / iters;
  cw_barrier(pe);
  double mx = 0;
  for (int p = 0; p < pe.W; p++) mx = std::max(mx, r->ms[p]);
  cw_barrier(pe);
  CK(API(EventDestroy)(e0));
  CK(API(EventDestroy)(e1));
  return mx * 1e3;
}

} // namespace

int main(int argc, char **argv) {
  opts o;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : "";
    if (a == "-W" && *v) o.W = atoi(argv[++i]);
    else if (a == "--procs") o.procs = 1;
    else if (a == "--ceiling") o.ceiling = 1;
    else if (a == "--before") o.before = 1;
    else if (a == "--op" && *v) {
      std::string s = argv[++i];
      o.ops = s == "fcollect" ? std::vector<int>{0} : s == "alltoall" ? std::vector<int>{1}
            : s == "allreduce" ? std::vector<int>{OP_ALLREDUCE} : s == "all" ? std::vector<int>{0, 1, OP_ALLREDUCE}
                               : std::vector<int>{0, 1};
    } else if (a == "--variants" && *v) {
      std::string s = argv[++i];
      o.variants.clear();
      if (s.find("naive") != std::string::npos) o.variants.push_back(SHOAL_COLL_GPU_NAIVE);
      if (s.find("hoisted") != std::string::npos) o.variants.push_back(SHOAL_COLL_GPU_HOISTED);
    } else if (a == "--g" && *v) o.gs = parse_list(argv[++i]);
    else if (a == "--sms" && *v) o.sms = parse_list(argv[++i]);
    else if (a == "--tile" && *v) o.tiles = parse_sizes(argv[++i]);
    else if (a == "--pipe" && *v) o.pipes = parse_list(argv[++i]);
    else if (a == "--scope" && *v) o.scopes = parse_list(argv[++i]);
    else if (a == "--small" && *v) o.smalls = parse_list(argv[++i]);
    else if (a == "--pdl" && *v) o.pdls = parse_list(argv[++i]);
    else if (a == "--rtlaunch" && *v) o.rtls = parse_list(argv[++i]);
    else if (a == "--repeat" && *v) o.repeat = atoi(argv[++i]);
    else if (a == "--min" && *v) o.min = cw_parse_size(argv[++i]);
    else if (a == "--max" && *v) o.max = cw_parse_size(argv[++i]);
    else if (a == "--factor" && *v) o.factor = atof(argv[++i]);
    else if (a == "--sync" && *v) o.host_sync = std::string(argv[++i]) == "host";
    else if (a == "--csv" && *v) o.csv = argv[++i];
    else if (a == "--label" && *v) o.label = argv[++i];
    else {
      fprintf(stderr, "bench_gpu_coll: bad argument '%s' (see the comment at the top of perf/bench_gpu_coll.cu)\n",
              argv[i]);
      return 2;
    }
  }
#ifdef SHOAL_BENCH_NVSHMEM
  o.procs = 1; /* NVSHMEM: one process per PE */
#endif
  if (o.W < 1 || o.W > CW_MAX_PES || o.factor <= 1 || o.min < 16 || o.max < o.min || o.repeat < 1 || o.repeat > 99) {
    fprintf(stderr, "bench_gpu_coll: bad -W, --factor, --min, --max or --repeat\n");
    return 2;
  }
  /* Threads mode: PEs of one context whose kernels wait for each other. With CUDA's lazy module loading a launch may
   * need a context synchronization to load its kernel, which cannot finish while a peer's kernel waits for this one
   * (the CUDA guide's "Lazy Loading: concurrent execution" hazard): load every kernel at context creation instead. */
  setenv("CUDA_MODULE_LOADING", "EAGER", 0);
  if (cw_gpu_count() < 1) {
    printf("bench_gpu_coll: no GPU: skipped\n");
    return 77;
  }
  FILE *csv = nullptr;
  if (o.csv) {
    const bool fresh = access(o.csv, F_OK) != 0;
    csv = fopen(o.csv, "a");
    if (!csv) {
      fprintf(stderr, "bench_gpu_coll: %s: %s\n", o.csv, strerror(errno));
      return 1;
    }
    if (fresh) fprintf(csv, "%s\n", CSV_HEADER);
    fflush(csv);
  }
  printf("%s\n", CSV_HEADER);
  fflush(stdout);
  const int W = o.W;
  cw_shared *sh = nullptr;
  int died = cw_run(W, o.procs, sizeof(shared_res), [&](cw_pe &pe) {
    shared_res *r = (shared_res *)pe.sh->extra;
    int ndev = 0;
    CK(API(GetDeviceCount)(&ndev));
    CK(API(SetDevice)(pe.me % ndev));
    /* Largest block: the buffers (W^2 n for the destinations and as much for alltoall sources) within 75% of the
     * GPU's memory, shared by the PEs that share it. */
    size_t free_b = 0, total_b = 0;
    CK(API(MemGetInfo)(&free_b, &total_b));
    const int per_gpu = (W + ndev - 1) / ndev;
    size_t cap = o.max;
    while (cap > o.min && 2.0 * W * cap * per_gpu > 0.75 * (double)total_b) cap /= 2;
    if (pe.me == 0) r->cap = cap;
    char *src = nullptr, *dst_base = nullptr;
#ifdef SHOAL_BENCH_NVSHMEM
    static_assert(sizeof(nvshmemx_uniqueid_t) <= sizeof(pe.sh->ipc), "uid does not fit");
    nvshmemx_uniqueid_t uid = NVSHMEMX_UNIQUEID_INITIALIZER;
    if (pe.me == 0) {
      nvshmemx_get_uniqueid(&uid);
      memcpy(pe.sh->ipc, &uid, sizeof uid);
    }
    cw_barrier(pe);
    memcpy(&uid, pe.sh->ipc, sizeof uid);
    nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
    nvshmemx_set_attr_uniqueid_args(pe.me, W, &uid, &attr);
    if (nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr)) {
      fprintf(stderr, "bench_gpu_coll: PE %d: nvshmemx_init_attr failed\n", pe.me);
      exit(1);
    }
    CK(API(StreamCreateWithFlags)(&pe.s, API(StreamNonBlocking)));
    dst_base = (char *)nvshmem_malloc((size_t)W * cap);
    src = (char *)nvshmem_malloc((size_t)W * cap);
    if (!dst_base || !src) {
      fprintf(stderr, "bench_gpu_coll: PE %d: nvshmem_malloc of %zu bytes failed\n", pe.me, 2 * W * cap);
      exit(1);
    }
#else
    cw_setup(pe, CW_FLAG_AREA + (size_t)W * cap);
    dst_base = pe.heap + CW_FLAG_AREA;
    CK(API(Malloc)((void **)&src, (size_t)W * cap));
#endif
    CK(API(Memset)(src, 0x5a, (size_t)W * cap));
    CK(API(DeviceSynchronize)());
    for (int op : o.ops)
      for (size_t n = o.min; n <= cap; n = (size_t)std::llround(n * o.factor) & ~(size_t)15) {
        const char *opn = op == OP_ALLREDUCE ? "allreduce" : op == SHOAL_COLL_GPU_ALLTOALL ? "alltoall" : "fcollect";
#ifdef SHOAL_BENCH_NVSHMEM
        (void)dst_base;
        double us = measure(pe, r, [&] {
          if (op == OP_ALLREDUCE)
            nvshmemx_float_sum_reduce_on_stream(NVSHMEM_TEAM_WORLD, (float *)dst_base, (const float *)src, n / 4, pe.s);
          else if (op == SHOAL_COLL_GPU_ALLTOALL)
            nvshmemx_char_alltoall_on_stream(NVSHMEM_TEAM_WORLD, dst_base, src, n, pe.s);
          else
            nvshmemx_char_fcollect_on_stream(NVSHMEM_TEAM_WORLD, dst_base, src, n, pe.s);
        }, false);
        if (pe.me == 0)
          emit(o, csv, "nvshmem", opn, W, "-", 0, 0, 0, n, us,
               op == OP_ALLREDUCE ? "nvshmemx_float_sum_reduce_on_stream" : "nvshmemx_char_*_on_stream");
#else
        if (op == OP_ALLREDUCE) { /* source and dest in the heap (peers read the source): [flags | src n | dst n] */
          if (2 * n > (size_t)W * cap) continue;
          shoal_coll_gpu_args_t g = cw_args(pe, 0, 0, src, 0, !o.host_sync);
          std::vector<shoal_coll_gpu_red_args_t> rc;
          std::vector<std::vector<double>> rus;
          for (int var : o.variants)
            for (int sms : o.sms)
              for (size_t tile : o.tiles)
                for (int small : o.smalls) { /* small 1: the two-exchange path at every size */
                shoal_coll_gpu_red_args_t a;
                memset(&a, 0, sizeof a);
                a.op = SHOAL_RED_SUM;
                a.type = SHOAL_RT_F32;
                a.me = pe.me;
                a.npes = W;
                a.peer_base = pe.table;
                a.src_off = CW_FLAG_AREA;
                a.dst_off = CW_FLAG_AREA + n;
                a.nelems = n / 4;
                a.sync = pe.sync;
                a.wait = !o.host_sync;
                a.one_gpu = g.one_gpu;
                a.cfg = g.cfg; /* CW_SMALL=off / CW_PDL=off */
                a.ll_off = CW_LL_OFF;
                a.ll_half = CW_LL_HALF;
                a.cfg.variant = var;
                a.cfg.sms = sms;
                a.cfg.tile = tile;
                if (small) a.cfg.small = SHOAL_COLL_GPU_SMALL_OFF;
                rc.push_back(a);
                rus.emplace_back();
              }
          for (int rep = 0; rep < o.repeat; rep++)
            for (size_t i = 0; i < rc.size(); i++) {
              rus[i].push_back(measure(pe, r, [&] {
                char err[256];
                if (o.host_sync) cw_barrier(pe); /* the host-side entry */
                if (shoal_coll_gpu_reduce_launch(&rc[i], pe.s, err, sizeof err)) {
                  fprintf(stderr, "bench_gpu_coll: PE %d: %s\n", pe.me, err);
                  exit(1);
                }
              }, o.host_sync));
              shoal_coll_gpu_sync_t sy;
              CK(API(Memcpy)(&sy, pe.sync, sizeof sy, API(MemcpyDeviceToHost)));
              if (sy.blocks) {
                fprintf(stderr, "bench_gpu_coll: PE %d: completion state %#x after allreduce\n", pe.me, sy.blocks);
                exit(1);
              }
            }
          if (pe.me == 0)
            for (size_t i = 0; i < rc.size(); i++) {
              char k[64];
              shoal_coll_gpu_reduce_kernel_name(&rc[i], k, sizeof k);
              std::vector<double> &u = rus[i];
              std::sort(u.begin(), u.end());
              extra x;
              x.reps = (int)u.size();
              x.min_us = u.front();
              x.max_us = u.back();
              x.small = shoal_coll_gpu_reduce_epochs(&rc[i]) == 1; /* 1: the one-exchange kernel ran */
              const size_t m = u.size();
              const double med = m % 2 ? u[m / 2] : (u[m / 2 - 1] + u[m / 2]) / 2;
              emit(o, csv, "shoal", opn, W, rc[i].cfg.variant == SHOAL_COLL_GPU_NAIVE ? "naive" : "hoisted", 0,
                   rc[i].cfg.sms, rc[i].cfg.tile, n, med, k, x);
            }
          if (csv) fflush(csv);
          fflush(stdout);
          continue;
        }
        struct conf {
          shoal_coll_gpu_args_t a;
          std::vector<double> us;
          bool before;
        };
        std::vector<conf> confs;
        for (int var : o.variants)
          for (int g : o.gs)
            for (int sms : o.sms)
              for (size_t tile : o.tiles)
                for (int pipe : o.pipes)
                  for (int scope : o.scopes)
                  for (int small : o.smalls)
                  for (int pdl : o.pdls)
                  for (int rtl : o.rtls) {
                    conf c;
                    c.a = cw_args(pe, op, CW_FLAG_AREA, src, n, !o.host_sync);
                    c.a.cfg.variant = var;
                    c.a.cfg.group = g;
                    c.a.cfg.sms = sms;
                    c.a.cfg.tile = tile;
                    c.a.cfg.pipe = pipe;
                    c.a.cfg.scope = scope;
                    c.a.cfg.small = small;
                    c.a.cfg.pdl = pdl;
                    c.a.cfg.rt_launch = rtl;
                    c.before = false;
                    confs.push_back(c);
                    if (o.before) { /* the earlier automatic choices */
                      shoal_coll_gpu_cfg_t eff;
                      shoal_coll_gpu_resolve(&c.a, &eff);
                      size_t t = (n + eff.sms - 1) / eff.sms;
                      t = std::min<size_t>(32768, std::max<size_t>(512, (t + 15) & ~(size_t)15));
                      c.a.cfg.group = 0;
                      c.a.cfg.sms = 0;
                      c.a.cfg.tile = t;
                      c.a.cfg.pipe = SHOAL_COLL_GPU_PIPE_OFF;
                      c.a.cfg.scope = SHOAL_COLL_GPU_SCOPE_SYS;
                      c.before = true;
                      confs.push_back(c);
                    }
                  }
        for (int rep = 0; rep < o.repeat; rep++)
          for (conf &c : confs) {
            c.us.push_back(measure(pe, r, [&] {
              char err[256];
              if (shoal_coll_gpu_launch(&c.a, pe.s, err, sizeof err)) {
                fprintf(stderr, "bench_gpu_coll: PE %d: %s\n", pe.me, err);
                exit(1);
              }
            }, o.host_sync));
            shoal_coll_gpu_sync_t sy;
            CK(API(Memcpy)(&sy, pe.sync, sizeof sy, API(MemcpyDeviceToHost)));
            if (sy.blocks) {
              fprintf(stderr, "bench_gpu_coll: PE %d: completion state %#x after %s\n", pe.me, sy.blocks, opn);
              exit(1);
            }
          }
        if (pe.me == 0)
          for (conf &c : confs) {
            shoal_coll_gpu_cfg_t eff;
            shoal_coll_gpu_resolve(&c.a, &eff);
            char k[64];
            shoal_coll_gpu_kernel_name(&c.a, k, sizeof k);
            std::sort(c.us.begin(), c.us.end());
            extra x;
            x.pipe = eff.pipe;
            x.scope = c.a.cfg.scope ? 1 : 0;
            x.small = eff.small == SHOAL_COLL_GPU_SMALL_ON;
            x.pdl = eff.pdl == SHOAL_COLL_GPU_PDL_ON;
            x.rtl = c.a.cfg.rt_launch;
            x.reps = (int)c.us.size();
            x.min_us = c.us.front();
            x.max_us = c.us.back();
            const size_t m = c.us.size();
            const double med = m % 2 ? c.us[m / 2] : (c.us[m / 2 - 1] + c.us[m / 2]) / 2;
            std::string vn = c.a.cfg.variant == SHOAL_COLL_GPU_NAIVE ? "naive" : "hoisted";
            if (c.before) vn += "-before";
            emit(o, csv, "shoal", opn, W, vn.c_str(), eff.group, eff.sms, eff.tile, n, med, k, x);
          }
#endif
        if (csv) fflush(csv);
        fflush(stdout);
      }
    /* The copy ceiling: one PE, cudaMemcpy device to device within its buffers (after every PE is idle). */
    cw_barrier(pe);
    if (o.ceiling && pe.me == 0) {
      const size_t room = (size_t)W * cap / 2;
      API(Event_t) e0, e1;
      CK(API(EventCreate)(&e0));
      CK(API(EventCreate)(&e1));
      for (size_t s = o.min; s <= room; s = (size_t)std::llround(s * o.factor) & ~(size_t)15)
        for (int kind = 0; kind < 3; kind++) { /* the copy (read + write); a memset (write only: fcollect's traffic
                                                  is W writes to one read); the copy into PE 1's heap through this
                                                  process's mapping of it (CUDA IPC with --procs) */
          char *to = dst_base + room;
#ifdef SHOAL_BENCH_NVSHMEM
          if (kind == 2) continue;
#else
          if (kind == 2 && W < 2) continue;
          if (kind == 2) to = pe.bases[1] + CW_FLAG_AREA + room;
#endif
          float ms = 0;
          int iters = 3;
          for (int round = 0; round < 2; round++) { /* a short run to size the measured one (~20 ms) */
            CK(API(EventRecord)(e0, pe.s));
            for (int i = 0; i < iters; i++) {
              if (kind != 1) CK(API(MemcpyAsync)(to, dst_base, s, API(MemcpyDeviceToDevice), pe.s));
              else CK(API(MemsetAsync)(to, i & 0xff, s, pe.s));
            }
            CK(API(EventRecord)(e1, pe.s));
            CK(API(EventSynchronize)(e1));
            CK(API(EventElapsedTime)(&ms, e0, e1));
            if (round == 0) iters = std::max(5, std::min(500, (int)(20.0 / std::max(ms / iters, 1e-3f))));
          }
          const double us = 1e3 * ms / iters;
          const double moved = (kind != 1 ? 2.0 : 1.0) * s / (us * 1e3);
          char line[320];
          snprintf(line, sizeof line, "%s,%s,d2d,1,-,0,0,0,%zu,%zu,%.2f,%.2f,%.2f,%.2f,%s,%s,0,0,1,%.2f,%.2f",
                   kind == 0 ? "memcpy" : kind == 1 ? "memset" : "memcpy-peer", o.procs ? "procs" : "threads", s, s, us,
                   s / (us * 1e3), 0.0, moved, kind == 1 ? "cudaMemsetAsync" : "cudaMemcpyAsync", o.label, us, us);
          printf("%s\n", line);
          if (csv) fprintf(csv, "%s\n", line);
        }
      CK(API(EventDestroy)(e0));
      CK(API(EventDestroy)(e1));
      if (csv) fflush(csv); /* a PE process ends with _exit: unflushed rows would be lost */
    }
    cw_barrier(pe);
#ifdef SHOAL_BENCH_NVSHMEM
    nvshmem_free(src);
    nvshmem_free(dst_base);
    nvshmem_finalize();
#else
    CK(API(Free)(src));
    cw_teardown(pe);
#endif
  }, &sh);
  if (csv) fclose(csv);
  return died ? 1 : 0;
}
