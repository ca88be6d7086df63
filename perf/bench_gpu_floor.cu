/*
 * bench_gpu_floor.cu - where the time of a small GPU collective goes (issue 16, part 3; docs/gpu-collectives.md
 * "The small-message floor"), on W processes sharing one GPU under MPS (the harness's procs mode, as bench_gpu_coll
 * --procs).
 *
 *   bench_gpu_floor -W n [--bytes 4K] [--repeat R] [--csv FILE] [--label TEXT]
 *
 * Per call, back-to-back on each PE's stream (time per call: max over PEs of the mean of N calls between two events,
 * the median of R interleaved measurements, as bench_gpu_coll), for:
 *   empty            an empty kernel of one block of 512 threads: the launch floor of a stream under MPS
 *   fcollect-data    the fcollect kernel without its completion (wait = 0): launch + data
 *   fcollect         the whole call (the launcher's automatic choices), and alltoall
 *   fcollect-graph   the same calls captured in a CUDA graph (32 per graph), per call: without the host launch
 *   fcollect-small-off the whole call with the grid's completion (counter, fences per signal), as before 2026-12-01;
 *                    fcollect-traced-gridcompletion: the traced kernel with it (rows segment-gridcompletion)
 *   fcollect-pdl-off the whole call without programmatic dependent launch; fcollect-traced-pdl: the traced kernel
 *                    launched with it (rows segment-pdl)
 *   fcollect-graphset the traced kernel launched as a one-node graph whose parameters are set before each launch
 *   empty-graph      32 empty kernels per CUDA graph; empty-32: an empty kernel of 32 threads; empty-graph1: a graph
 *                    of one empty kernel per call; empty-culaunch: the driver's cuLaunchKernel instead of <<<>>>
 *   fcollect-traced  the fcollect kernel compiled here with SHOAL_COLL_GPU_TRACE: %globaltimer stamps per call at
 *                    entry, data stored, arrival counted (fences), signals sent, every peer's signal seen; the rows
 *                    "segment" give their medians over calls and PEs, with the gap from one call's end to the next
 *                    call's entry on the same PE and the skew of the PEs' entries (last - first) per call.
 * CSV: impl,W,bytes,case,time_us,min_us,max_us,label,host_us (host_us: the host's time per launch call).
 */
#include <math.h>
#include <time.h>

#include <algorithm>
#include <string>

#include "coll_gpu_world.h"
#define SHOAL_COLL_GPU_TRACE 1
#define shoal_cg shoal_cg_trace /* a copy of the kernels under another name: no clash with libshoal's */
#include <shoal/detail/coll_gpu_kernels.cuh>
#include "coll_gpu_launch.h"
#undef shoal_cg
using namespace shoal_cg_trace;

namespace {

constexpr int NCALL = 256; /* traced calls kept per PE */
struct shared_res {
  double ms[CW_MAX_PES], host[CW_MAX_PES];
  int iters;
  unsigned long long tr[CW_MAX_PES][NCALL][SHOAL_COLL_GPU_TRACE_N];
};

__global__ void empty_kernel() {}

double now_ms() {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* As bench_gpu_coll's measure(): warm up, PE 0 picks N (about 20 ms, 16 .. NCALL calls), N calls between events. */
template <class F> double measure(cw_pe &pe, shared_res *r, F call, int fixed = 0, double *host_us = nullptr) {
  API(Event_t) e0, e1;
  CK(API(EventCreate)(&e0));
  CK(API(EventCreate)(&e1));
  cw_barrier(pe);
  const double t0 = now_ms();
  for (int i = 0; i < 3; i++) call();
  CK(API(StreamSynchronize)(pe.s));
  const double warm = (now_ms() - t0) / 3;
  cw_barrier(pe);
  if (pe.me == 0) r->iters = fixed ? fixed : std::max(16, std::min(NCALL, (int)(20.0 / std::max(warm, 1e-3))));
  cw_barrier(pe);
  const int iters = r->iters;
  CK(API(EventRecord)(e0, pe.s));
  const double h0 = now_ms();
  for (int i = 0; i < iters; i++) call();
  r->host[pe.me] = (now_ms() - h0) / iters * 1e3; /* us per call spent launching */
  CK(API(EventRecord)(e1, pe.s));
  CK(API(EventSynchronize)(e1));
  float ms = 0;
  CK(API(EventElapsedTime)(&ms, e0, e1));
  r->ms[pe.me] = ms / iters;
  cw_barrier(pe);
  double mx = 0, hmx = 0;
  for (int p = 0; p < pe.W; p++) mx = std::max(mx, r->ms[p]), hmx = std::max(hmx, r->host[p]);
  if (host_us) *host_us = hmx;
  cw_barrier(pe);
  CK(API(EventDestroy)(e0));
  CK(API(EventDestroy)(e1));
  return mx * 1e3;
}

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

} // namespace

int main(int argc, char **argv) {
  int W = 4, repeat = 5;
  size_t bytes = 4096;
  const char *csvp = nullptr, *label = "";
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : "";
    if (a == "-W" && *v) W = atoi(argv[++i]);
    else if (a == "--bytes" && *v) bytes = cw_parse_size(argv[++i]);
    else if (a == "--repeat" && *v) repeat = atoi(argv[++i]);
    else if (a == "--csv" && *v) csvp = argv[++i];
    else if (a == "--label" && *v) label = argv[++i];
    else {
      fprintf(stderr, "bench_gpu_floor: bad argument '%s' (see the comment at the top of perf/bench_gpu_floor.cu)\n",
              argv[i]);
      return 2;
    }
  }
  if (W < 1 || W > CW_MAX_PES || bytes < 16 || bytes % 16 || repeat < 1 || repeat > 99) {
    fprintf(stderr, "bench_gpu_floor: -W 1..%d, --bytes a multiple of 16, --repeat 1..99\n", CW_MAX_PES);
    return 2;
  }
  setenv("CUDA_MODULE_LOADING", "EAGER", 0);
  if (cw_gpu_count() < 1) {
    printf("bench_gpu_floor: no GPU: skipped\n");
    return 77;
  }
  FILE *csv = csvp ? fopen(csvp, "a") : nullptr;
  const char *hdr = "impl,W,bytes,case,time_us,min_us,max_us,label,host_us";
  printf("%s\n", hdr);
  if (csv && ftell(csv) == 0) fprintf(csv, "%s\n", hdr);
  cw_shared *sh = nullptr;
  const int died = cw_run(W, true, sizeof(shared_res), [&](cw_pe &pe) {
    shared_res *r = (shared_res *)pe.sh->extra;
    cw_setup(pe, CW_FLAG_AREA + (size_t)W * bytes * 2);
    char *src = nullptr;
    unsigned long long *trace = nullptr;
    CK(API(Malloc)((void **)&src, (size_t)W * bytes));
    CK(API(Memset)(src, 0x5a, (size_t)W * bytes));
    CK(API(Malloc)((void **)&trace, sizeof r->tr[0]));
    const size_t dst = CW_FLAG_AREA;
    char err[256];
    auto coll = [&](int op, int wait) {
      shoal_coll_gpu_args_t a = cw_args(pe, op, dst, src, bytes, wait);
      if (shoal_coll_gpu_launch(&a, pe.s, err, sizeof err)) {
        fprintf(stderr, "bench_gpu_floor: PE %d: %s\n", pe.me, err);
        exit(1);
      }
    };
    /* The traced copy: the kernel the launcher picks for this size (hoisted, 16-byte vectors, G = min(W, 8) for
     * fcollect, no pipelining), instantiated here for W = 4 and the generic W. */
    shoal_coll_gpu_args_t ta = cw_args(pe, SHOAL_COLL_GPU_FCOLLECT, dst, src, bytes, 1);
    shoal_coll_gpu_cfg_t eff;
    const int grid = shoal_coll_gpu_resolve(&ta, &eff);
    shoal_cg_trace::params tp;
    memset(&tp, 0, sizeof tp);
    tp.peer_base = pe.table;
    tp.src = src;
    tp.dst_off = dst;
    tp.nbytes = bytes;
    tp.tile = eff.tile;
    tp.flag_off = 0;
    tp.sync = pe.sync;
    tp.me = pe.me;
    tp.npes = W;
    tp.wait = 1;
    tp.gpu_scope = ta.one_gpu;
    tp.trace = trace;

    void (*tk)(params) = W == 4 ? coll_kernel<OP_FCOLLECT, VAR_HOISTED, 4, 4, uint4, 0>
                                : coll_kernel<OP_FCOLLECT, VAR_HOISTED, 0, 4, uint4, 0>;
    const size_t tshm = W == 4 ? 0 : (size_t)W * sizeof(char *);
    bool tpdl = false;
    auto traced = [&] { /* the runtime's launch (as before the driver's was used), with or without dependent launch */
      char err[256];
      if (shoal_gl::launch(tk, grid, (unsigned)NT, tshm, pe.s, tpdl, tp, true, err, sizeof err, "bench_gpu_floor")) {
        fprintf(stderr, "%s\n", err);
        exit(1);
      }
    };
    /* One graph of one kernel node whose parameters are replaced before every launch (a host launch through
     * cudaGraphLaunch, which costs less host time than <<<>>> here). */
    API(Graph_t) gs;
    API(GraphExec_t) gsexec;
    API(GraphNode_t) gsnode;
    CK(API(StreamBeginCapture)(pe.s, API(StreamCaptureModeThreadLocal)));
    tp.small = grid == 1;
    traced();
    CK(API(StreamEndCapture)(pe.s, &gs));
    size_t nn = 1;
    CK(API(GraphGetNodes)(gs, &gsnode, &nn));
    CK(API(GraphInstantiate)(&gsexec, gs, 0));
    auto graphset = [&] {
      void *args[] = {&tp};
      API(KernelNodeParams) kp;
      memset(&kp, 0, sizeof kp);
      kp.func = (void *)tk;
      kp.gridDim = dim3(grid);
      kp.blockDim = dim3(NT);
      kp.sharedMemBytes = (unsigned)tshm;
      kp.kernelParams = args;
      CK(API(GraphExecKernelNodeSetParams)(gsexec, gsnode, &kp));
      CK(API(GraphLaunch)(gsexec, pe.s));
    };
    /* Graphs of 32 calls. The epoch lives on the device, so a replayed graph stays correct. */
    API(Graph_t) graph;
    API(GraphExec_t) gexec;
    CK(API(StreamBeginCapture)(pe.s, API(StreamCaptureModeThreadLocal)));
    for (int i = 0; i < 32; i++) coll(SHOAL_COLL_GPU_FCOLLECT, 1);
    CK(API(StreamEndCapture)(pe.s, &graph));
    CK(API(GraphInstantiate)(&gexec, graph, 0));
    API(Graph_t) egraph;
    API(GraphExec_t) eexec;
    CK(API(StreamBeginCapture)(pe.s, API(StreamCaptureModeThreadLocal)));
    for (int i = 0; i < 32; i++) empty_kernel<<<1, NT, 0, pe.s>>>();
    CK(API(StreamEndCapture)(pe.s, &egraph));
    CK(API(GraphInstantiate)(&eexec, egraph, 0));
    API(Graph_t) g1;
    API(GraphExec_t) g1exec;
    CK(API(StreamBeginCapture)(pe.s, API(StreamCaptureModeThreadLocal)));
    empty_kernel<<<1, NT, 0, pe.s>>>();
    CK(API(StreamEndCapture)(pe.s, &g1));
    CK(API(GraphInstantiate)(&g1exec, g1, 0));
    typedef int (*cu_launch_t)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *,
                               void **, void **);
    cu_launch_t cu_launch = nullptr;
    void *cufn = nullptr;
    {
      cudaDriverEntryPointQueryResult q;
      CK(cudaGetDriverEntryPointByVersion("cuLaunchKernel", (void **)&cu_launch, CUDART_VERSION, cudaEnableDefault, &q));
      CK(cudaGetFuncBySymbol((cudaFunction_t *)&cufn, (const void *)empty_kernel));
    }
    const char *names[] = {"empty", "fcollect-data", "fcollect", "alltoall", "fcollect-graph", "fcollect-traced",
                           "empty-graph", "empty-32", "empty-graph1", "empty-culaunch",
                           "fcollect-traced-gridcompletion", "fcollect-small-off", "fcollect-graphset",
                           "fcollect-pdl-off", "fcollect-traced-pdl"};
    const int ncase = 15;
    std::vector<std::vector<double>> us(ncase), hus(ncase);
    std::vector<std::vector<double>> seg[3] = {std::vector<std::vector<double>>(7), std::vector<std::vector<double>>(7),
                                              std::vector<std::vector<double>>(7)};
    for (int rep = 0; rep < repeat; rep++)
      for (int c = 0; c < ncase; c++) {
        double t = 0, h = 0;
        switch (c) {
        case 0: t = measure(pe, r, [&] { empty_kernel<<<1, NT, 0, pe.s>>>(); }, 0, &h); break;
        case 1: /* data only: a host barrier per measurement keeps the PEs from running apart */
          t = measure(pe, r, [&] { coll(SHOAL_COLL_GPU_FCOLLECT, 0); }, 0, &h);
          break;
        case 2: t = measure(pe, r, [&] { coll(SHOAL_COLL_GPU_FCOLLECT, 1); }, 0, &h); break;
        case 3: t = measure(pe, r, [&] { coll(SHOAL_COLL_GPU_ALLTOALL, 1); }, 0, &h); break;
        case 4:
          t = measure(pe, r, [&] { CK(API(GraphLaunch)(gexec, pe.s)); }, 8, &h) / 32;
          h /= 32;
          break;
        case 6:
          t = measure(pe, r, [&] { CK(API(GraphLaunch)(eexec, pe.s)); }, 8, &h) / 32;
          h /= 32;
          break;
        case 7: t = measure(pe, r, [&] { empty_kernel<<<1, 32, 0, pe.s>>>(); }, 0, &h); break;
        case 8: t = measure(pe, r, [&] { CK(API(GraphLaunch)(g1exec, pe.s)); }, 0, &h); break;
        case 9:
          t = measure(pe, r, [&] {
            if (cu_launch(cufn, 1, 1, 1, NT, 1, 1, 0, pe.s, nullptr, nullptr)) {
              fprintf(stderr, "bench_gpu_floor: cuLaunchKernel failed\n");
              exit(1);
            }
          }, 0, &h);
          break;
        case 11: t = measure(pe, r, [&] {
            shoal_coll_gpu_args_t a = cw_args(pe, SHOAL_COLL_GPU_FCOLLECT, dst, src, bytes, 1);
            a.cfg.small = SHOAL_COLL_GPU_SMALL_OFF;
            if (shoal_coll_gpu_launch(&a, pe.s, err, sizeof err)) exit(1);
          }, 0, &h);
          break;
        case 13: t = measure(pe, r, [&] {
            shoal_coll_gpu_args_t a = cw_args(pe, SHOAL_COLL_GPU_FCOLLECT, dst, src, bytes, 1);
            a.cfg.pdl = SHOAL_COLL_GPU_PDL_OFF;
            if (shoal_coll_gpu_launch(&a, pe.s, err, sizeof err)) exit(1);
          }, 0, &h);
          break;
        case 5:
        case 10:
        case 12:
        case 14: {
          tpdl = c == 14;
          tp.pdl = tpdl;
          tp.small = c != 10 && grid == 1;
          std::vector<std::vector<double>> &sg = seg[c == 10 ? 1 : c == 14 ? 2 : 0];
          /* the stamps are indexed by the call's epoch: start each measurement from a known one */
          shoal_coll_gpu_sync_t s0;
          CK(API(Memcpy)(&s0, pe.sync, sizeof s0, API(MemcpyDeviceToHost)));
          cw_barrier(pe);
          const unsigned long long e0 = s0.epoch;
          tp.trace = trace - (size_t)e0 * SHOAL_COLL_GPU_TRACE_N; /* call e0 + k lands in row k */
          const int fixed = NCALL - 8;                           /* 3 warm-up calls + fixed, within NCALL rows */
          t = c == 12 ? measure(pe, r, graphset, fixed, &h) : measure(pe, r, traced, fixed, &h);
          if (c == 12) {
            cw_barrier(pe);
            break;
          }
          CK(API(DeviceSynchronize)());
          CK(API(Memcpy)(r->tr[pe.me], trace, sizeof r->tr[0], API(MemcpyDeviceToHost)));
          cw_barrier(pe);
          if (pe.me == 0) {
            for (int k = 4; k < 3 + fixed - 1; k++) { /* the measured calls, not the first and last */
              unsigned long long emin = ~0ull, emax = 0, smax = 0;
              for (int q = 0; q < W; q++) {
                const unsigned long long *x = r->tr[q][k];
                sg[0].push_back((x[TR_DATA] - x[TR_ENTRY]) / 1e3);
                sg[1].push_back((x[TR_ARRIVE] - x[TR_DATA]) / 1e3);
                sg[2].push_back((x[TR_SIGNALED] - x[TR_ARRIVE]) / 1e3);
                sg[3].push_back((x[TR_DONE] - x[TR_SIGNALED]) / 1e3);
                sg[4].push_back((r->tr[q][k + 1][TR_ENTRY] - x[TR_DONE]) / 1e3);
                emin = std::min(emin, x[TR_ENTRY]);
                emax = std::max(emax, x[TR_ENTRY]);
                smax = std::max(smax, x[TR_SIGNALED]);
              }
              sg[5].push_back((emax - emin) / 1e3);
              for (int q = 0; q < W; q++) /* from the last PE's signal to this PE's seeing it */
                sg[6].push_back(((long long)r->tr[q][k][TR_DONE] - (long long)smax) / 1e3);
            }
          }
          cw_barrier(pe);
          break;
        }
        }
        us[c].push_back(t);
        hus[c].push_back(h);
      }
    if (pe.me == 0) {
      for (int c = 0; c < ncase; c++) {
        char line[256];
        snprintf(line, sizeof line, "shoal,%d,%zu,%s,%.2f,%.2f,%.2f,%s,%.2f", W, bytes, names[c], median(us[c]),
                 *std::min_element(us[c].begin(), us[c].end()), *std::max_element(us[c].begin(), us[c].end()), label,
                 median(hus[c]));
        printf("%s\n", line);
        if (csv) fprintf(csv, "%s\n", line);
      }
      const char *sn[] = {"data", "arrive(fences)", "signal", "wait", "gap-to-next-entry", "entry-skew",
                          "last-signal-to-done"};
      for (int k = 0; k < 21; k++) {
        std::vector<double> &v = seg[k / 7][k % 7];
        char name[96];
        snprintf(name, sizeof name, "segment%s:%s", k / 7 == 1 ? "-gridcompletion" : k / 7 == 2 ? "-pdl" : "",
                 sn[k % 7]);
        std::sort(v.begin(), v.end());
        char line[256];
        snprintf(line, sizeof line, "shoal,%d,%zu,%s,%.2f,%.2f,%.2f,%s,", W, bytes, name, median(v),
                 v.empty() ? NAN : v[v.size() / 10], v.empty() ? NAN : v[v.size() * 9 / 10], label);
        printf("%s\n", line); /* for segments: median, 10th and 90th percentile */
        if (csv) fprintf(csv, "%s\n", line);
      }
      fflush(stdout);
    }
    cw_barrier(pe);
    CK(API(GraphExecDestroy)(gexec));
    CK(API(GraphExecDestroy)(eexec));
    CK(API(GraphExecDestroy)(g1exec));
    CK(API(GraphExecDestroy)(gsexec));
    CK(API(GraphDestroy)(gs));
    CK(API(GraphDestroy)(g1));
    CK(API(GraphDestroy)(egraph));
    CK(API(GraphDestroy)(graph));
    CK(API(Free)(src));
    CK(API(Free)(trace));
    cw_teardown(pe);
  }, &sh);
  if (csv) fclose(csv);
  return died ? 1 : 0;
}
