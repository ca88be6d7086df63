#!/usr/bin/env bash
# gpu-coll-tests.sh - the GPU collective kernels (issue 6) on the device machine, in one call (about 7 minutes).
#
#   scripts/gpu-coll-tests.sh --bundle BUILD     here: copy what the device run needs from BUILD (a meson build dir
#                                                with nvcc) into BUILD/gpu-coll-bundle (a few MiB, to carry)
#   scripts/gpu-coll-tests.sh BUNDLE             there: run everything, results under $OUT (default /tmp/gpu-coll-out)
#   scripts/gpu-coll-tests.sh --quick BUNDLE     there: the short run (~150 s): MPS, harness (processes W = 2, 4;
#                                                threads W = 3), runtime test at 2 and 4 PEs, a small benchmark, NVSHMEM W = 2
#   scripts/gpu-coll-tests.sh --reduce BUNDLE    there: the reductions (issue 16, ~5 min): reduce harness (processes)
#                                                at W = 2, 3, 4, 8, the API test (host-blocking, on-stream, block forms)
#                                                at 2, 3, 4 PEs, the sum all-reduce against torch.distributed (gloo) at
#                                                W = 2, 4, 8 (fp32, fp16, bf16), the all-reduce benchmark at 4 PEs (4 KiB
#                                                .. 256 MiB per PE, naive and hoisted, with the cudaMemcpy ceiling of the
#                                                same run) and NVSHMEM's nvshmemx_float_sum_reduce_on_stream on the same PEs
#   scripts/gpu-coll-tests.sh --tune BUNDLE      there: W = 4 tuning run (~5 min): quick harness at W = 4, 5, 8, then
#                                                the benchmark's side-by-side comparisons (pipelining, completion
#                                                scope, naive / hoisted, interleaved and repeated) and G x COMM_SMS x
#                                                tile sweeps
#   scripts/gpu-coll-tests.sh --plot CSV PNG [W [LABEL]]
#                                                here: latency and bus bandwidth against size from the benchmark's
#                                                CSV (scripts/plot.py, matplotlib; default W 4, every label)
#
# $OUT receives two files only: summary.txt (a line per step; in --quick mode also the first failure lines and the
# benchmark's figures) and logs.tar.gz (every log, CSV and the environment). Steps, each with its own time limit inside
# an overall budget (GPU_COLL_BUDGET seconds, default 440, --quick 150), each with its log and a line in summary.txt: machine info; MPS start (several processes on one GPU run their kernels
# concurrently only under MPS); the harness with W processes sharing their heaps by CUDA IPC at W = 2, 4, 8 (every
# variant, fp32/fp16/bf16/int8, 1 element to 256 MiB per PE) and with W threads at W = 3, 4; the torch.distributed
# (gloo) comparison at W = 2, 4, 8; the benchmark (nccl-tests figures, every variant, G and COMM_SMS, the cudaMemcpy
# ceiling) at W = 2, 4, 8; NVSHMEM's on-stream fcollect/alltoall on the same PEs when nvcc and the nvidia-nvshmem-cu13
# headers are there; the multi-PE runtime tests when the bundle has them. NVLink multicast stays off; the GPU is never
# reset.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)

if [ "${1:-}" = "--bundle" ]; then
  build=${2:?usage: $0 --bundle BUILD}
  b=$build/gpu-coll-bundle
  rm -rf "$b" && mkdir -p "$b/bin"
  for f in tests/gpu/coll/coll_gpu_harness tests/gpu/coll/coll_gpu_plan tests/gpu/coll/coll_gpu_shmem perf/bench_gpu_coll \
           perf/bench_gpu_floor \
           collectives/gpu/coll_gpu_cuda.resources.txt tests/gpu/coll/coll_gpu_reduce_harness \
           tests/gpu/coll/coll_gpu_reduce_shmem collectives/gpu/coll_gpu_reduce_cuda.resources.txt; do
    [ -e "$build/$f" ] && cp "$build/$f" "$b/bin/"
  done
  if [ -e "$build/tests/gpu/coll/coll_gpu_shmem" ]; then   # the runtime, for the multi-PE tests through oshrun
    mkdir -p "$b/lib" && cp "$build/runtime/oshrun" "$b/bin/"
    cp -P "$build"/runtime/libshoal.so "$build"/runtime/libshoal.so.0 "$build"/runtime/libshoal.so.0.1.0 "$b/lib/"
    mkdir -p "$b/lib/fallback"
    # what libshoal and oshrun need beyond libc (hwloc, PMIx and its libevent, munge, udev), used only if missing there
    for p in $(ldd "$build/runtime/libshoal.so" "$build/runtime/oshrun" | awk '$3 ~ /^\// {print $3}' | sort -u); do
      case $(basename "$p") in libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*) ;; *) cp -L "$p" "$b/lib/fallback/" ;; esac
    done
  fi
  # the GPU tests (scripts/gpu-tests.sh), in the build tree's layout, for --multi
  if [ -x "$build/tests/gpu/gpu_ring" ]; then
    mkdir -p "$b/gt/runtime" "$b/gt/tests/gpu" "$b/gt/perf"
    cp "$build/runtime/oshrun" "$b/gt/runtime/"
    cp -P "$build"/runtime/libshoal.so "$build"/runtime/libshoal.so.0 "$build"/runtime/libshoal.so.0.1.0 "$b/gt/runtime/"
    # every program there (a fixed list missed gpu_nocheck and gpu_pdl_*, added later: gpu-tests.sh failed with 127)
    find "$build/tests/gpu" -maxdepth 1 -type f -executable -exec cp {} "$b/gt/tests/gpu/" \;
    mkdir -p "$b/gt/examples"
    [ -x "$build/examples/porting_ring" ] && cp "$build/examples/porting_ring" "$b/gt/examples/"
    [ -x "$build/perf/bench_gpu" ] && cp "$build/perf/bench_gpu" "$b/gt/perf/"
    [ -x "$build/perf/bench_gpu_api" ] && cp "$build/perf/bench_gpu_api" "$b/gt/perf/"
    [ -x "$build/perf/bench_gpu_far" ] && cp "$build/perf/bench_gpu_far" "$b/gt/perf/"
  fi
  du -sh "$b"
  exit 0
fi

if [ "${1:-}" = "--plot" ]; then # matplotlib (scripts/plot.py): latency and bus bandwidth, log-log
  /usr/bin/python3 "$here/scripts/plot.py" "${2:?usage: $0 --plot CSV PNG [W [LABEL]]}" "${3:?usage: $0 --plot CSV PNG}" \
    "${4:-4}" ${5:+"$5"}
  exit $?
fi

quick=0 multi=0 tune=0 reduce=0
if [ "${1:-}" = "--reduce" ]; then
  reduce=1
  shift
elif [ "${1:-}" = "--tune" ]; then
  tune=1
  shift
elif [ "${1:-}" = "--quick" ]; then # the short run: ~150 s, the steps that show what is broken
  quick=1
  shift
elif [ "${1:-}" = "--multi" ]; then # every visible GPU (issue 7): one PE per GPU and two PEs per GPU
  multi=1
  shift
fi
B=$(cd "${1:?usage: $0 [--quick|--multi|--tune] BUNDLE | --bundle BUILD | --plot CSV PNG}" && pwd)
# libraries this machine may lack (the runtime's PMIx, libevent, munge, hwloc): the bundle's copies, as a last resort
if [ -e "$B/lib/libshoal.so" ] && ldd "$B/lib/libshoal.so" | grep -q 'not found'; then
  export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$B/lib/fallback
fi
OUT=${OUT:-/tmp/gpu-coll-out}
mkdir -p "$OUT"
# Every log goes to one directory, packed at the end as $OUT/logs.tar.gz (the device tool returns only a few files):
# $OUT holds summary.txt and logs.tar.gz, nothing else.
LOG=$(mktemp -d /tmp/gpu-coll-logs.XXXXXX)
pack() { cp "$OUT/summary.txt" "$LOG/" 2>/dev/null; tar -C "$LOG" -czf "$OUT/logs.tar.gz" . 2>/dev/null; }
trap pack EXIT
budget=${GPU_COLL_BUDGET:-440}
((quick)) && budget=${GPU_COLL_BUDGET:-150}
t_start=$(date +%s)
left() { echo $((budget - ($(date +%s) - t_start))); }
summary=$OUT/summary.txt
H=$B/bin/coll_gpu_harness
BENCH=$B/bin/bench_gpu_coll
seed=$(date +%s)
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }
# finish: the first failure lines of every correctness log and the benchmark's figures into the summary; MPS off
finish() {
  local pat='MISMATCH|TIMEOUT|FAIL|DIFF|rror|calls counted|did not finish' f n
  for f in "$LOG"/harness-*.log "$LOG"/shmem-*.log "$LOG"/gloo-*.log "$LOG"/reduce-*.log "$LOG"/nccl-*.log "$LOG"/nvshmem-*.log; do
    [ -e "$f" ] || continue
    n=$(grep -cE "$pat" "$f")
    ((n)) || continue
    { echo "--- $(basename "$f"): $n failure lines; the first:"; grep -E "$pat|bad \(first|re-armed" "$f" | head -12; } >>"$summary"
  done
  [ -e "$CSV" ] && { echo "--- bench.csv"; cut -d, -f1,3,4,5,9,11,13,14,16 "$CSV" | grep -v ',sweep$'; } >>"$summary"
  mps_stop
  note "total $(($(date +%s) - t_start))s"
}

# step NAME LIMIT CMD...: run CMD with a time limit (cut to the budget left), output in $LOG/NAME.log
# GPU_COLL_FROM=NAME: skip the steps before the one called NAME (the tail of a run cut by the budget, in a second
# call; the NVSHMEM build always runs).
from=${GPU_COLL_FROM:-}
step() {
  local name=$1 limit=$2
  shift 2
  if [ -n "$from" ] && [ "$name" != "$from" ] && [ "${name#nvshmem-build}" = "$name" ]; then
    note "SKIP $name (before $from)"
    return 0
  fi
  [ "$name" = "$from" ] && from=
  local l
  l=$(left)
  if ((l < 15)); then
    note "SKIP $name (budget spent)"
    return 0
  fi
  ((limit > l - 10)) && limit=$((l - 10))
  local t0=$(date +%s)
  timeout --kill-after=5 "$limit" "$@" >"$LOG/$name.log" 2>&1
  local rc=$?
  local tail1
  tail1=$(grep -E 'passed|failed|skipped' "$LOG/$name.log" | tail -1)
  note "$( ((rc == 0)) && echo OK || echo "FAIL(rc=$rc)") $name $(($(date +%s) - t0))s ${tail1}"
  if ((rc == 124 || rc == 137)) && [ "$mps" = yes ]; then # a client killed under MPS can leave the server refusing
    mps_stop                                                # new clients (cudaErrorDevicesUnavailable): restart it
    mkdir -p "$CUDA_MPS_PIPE_DIRECTORY"
    nvidia-cuda-mps-control -d >>"$LOG/mps.log" 2>&1 && sleep 1 || { mps="no (restart failed)"; df=0; }
    note "  (MPS restarted after the timeout: $mps)"
  fi
  return 0
}

{
  echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo "host: $(uname -a)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv 2>&1
  nvidia-smi topo -m 2>&1 | head -5
  echo "nvcc: $(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null || echo none)"
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)' 2>&1 | tail -1
  python3 -c 'import nvidia.nvshmem as m; print("nvshmem pip:", list(m.__path__)[0])' 2>&1 | tail -1
  echo "seed: $seed"
} >"$LOG/env.txt" 2>&1
cat "$LOG/env.txt"

# MPS: several PEs (processes) on one GPU run their kernels concurrently only under MPS. A daemon of our own in /tmp
# (one left from an earlier run is stopped first). It is judged by trivial checks only (the daemon starts and answers
# its control pipe; nvidia-smi's view is logged), never by the code under test.
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps CUDA_MPS_LOG_DIRECTORY=/tmp/mpslog
mps_stop() { # quit the daemon and remove its pipe directory (a stale control pipe would look like a running MPS)
  local d=${CUDA_MPS_PIPE_DIRECTORY:-/tmp/mps}
  [ -p "$d/control" ] && echo quit | CUDA_MPS_PIPE_DIRECTORY=$d timeout 10 nvidia-cuda-mps-control >/dev/null 2>&1 && sleep 1
  rm -rf "$d"
}
mps=no
mps_start() {
  mps=no
  export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps
  if command -v nvidia-cuda-mps-control >/dev/null 2>&1; then
    mps_stop
    mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
    if nvidia-cuda-mps-control -d >>"$LOG/mps.log" 2>&1; then
      sleep 1
      if echo get_server_list | timeout 10 nvidia-cuda-mps-control >>"$LOG/mps.log" 2>&1; then mps=yes
      else mps="no (daemon started but does not answer: see mps.log)"; mps_stop; fi
    else
      mps="no (nvidia-cuda-mps-control -d failed: see mps.log)"
      rm -rf "$CUDA_MPS_PIPE_DIRECTORY"
    fi
    nvidia-smi -q 2>&1 | grep -i -A1 mps >>"$LOG/mps.log"
  else
    mps="no (no nvidia-cuda-mps-control)"
  fi
  note "MPS: $mps"
  [ "$mps" = yes ] || unset CUDA_MPS_PIPE_DIRECTORY
}
# The full run on one GPU: first the runtime's GPU tests (device put/get/AMO/signal, barrier, host RMA into device
# memory, bad input; the device heap mapped by every PE), which run their own MPS daemon, so before ours.
if ((!multi && !quick && !tune && !reduce)) && [ -x "$B/gt/runtime/oshrun" ]; then
  step gpu-tests 150 env GPU_TESTS_PES="2 3 4" GPU_TESTS_DEADLINE=120 GPU_TESTS_BENCH_TIMEOUT=20 \
    bash "$here/scripts/gpu-tests.sh" "$B/gt"
  grep -E '^gpu-tests: (FAIL|[0-9]+ passed)|^gpu-tests: MPS' "$LOG/gpu-tests.log" >>"$summary"
fi
((multi)) || mps_start
export NVSHMEM_DISABLE_NVLS=1 # no NVLink multicast

# Steps in order of importance (the budget cuts the tail): correctness (harness, runtime tests), the main
# benchmark, gloo, NVSHMEM, then the sweeps and the other PE counts.
CSV=$LOG/bench.csv
NVCC=$(command -v nvcc || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; } || true)
NVSHMEM_HOME=$(python3 -c 'import nvidia.nvshmem as m; print(list(m.__path__)[0])' 2>/dev/null || true)
have_shmem=0
if [ -x "$B/bin/coll_gpu_shmem" ] && [ -x "$B/bin/oshrun" ]; then
  have_shmem=1
  export LD_LIBRARY_PATH=$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
df=0
[ "$mps" = yes ] && df=1
shmem_run() { # shmem_run N VARIANT [TIMEOUT MAXBYTES]: the runtime's multi-PE test (device forms too under MPS)
  # (64 MiB and 90 s: on the 2-GPU machine, whose host memory grows on first touch, 4 PEs at 256 MiB took over 55 s)
  local to=${3:-90} mb=${4:-$((64 << 20))}
  step "shmem-np$1-$2" $((to + 5)) env SHOAL_COLL_VARIANT="$2" SHOAL_TEST_DEVICE_FORMS=$df SHOAL_TEST_TRACE=1 \
    SHOAL_DEVICE_SYMMETRIC_SIZE=4G SHMEM_DEBUG=1 SHOAL_DEBUG_SUBSYS=coll,gpu "$B/bin/oshrun" -n "$1" --timeout "$to" "$B/bin/coll_gpu_shmem" \
    --max-bytes "$mb"
}
torch_cmp() { # torch_cmp BACKEND W VARIANT: the harness's outputs against torch.distributed on the same inputs
  local d=/tmp/gpu-coll-dump-$1-$2-$3
  mkdir -p "$d"
  step "$1-dump-w$2-$3" 40 "$H" -W "$2" --procs --seed "$seed" --dump "$d" --variant "$3"
  step "$1-w$2-$3" 90 python3 "$here/tests/gpu/coll/gloo_compare.py" -W "$2" --backend "$1" --dump "$d" \
    --seed "$seed" --out "$LOG/torch-compare.csv"
}
gloo_run() { torch_cmp gloo "$1" "${2:-hoisted}"; }
nvshmem_built=0
nvshmem_build() { # NVSHMEM 3.x's on-stream collectives on the same PEs, when nvcc and its headers are here
  if [ -x /tmp/bench_nvshmem ]; then nvshmem_built=1; return; fi # built by an earlier run on this machine
  if [ -z "$NVCC" ] || [ -z "$NVSHMEM_HOME" ] || [ ! -e "$NVSHMEM_HOME/include/nvshmem.h" ]; then
    note "SKIP nvshmem (nvcc: ${NVCC:-none}; nvidia-nvshmem headers: ${NVSHMEM_HOME:-none})"
    return
  fi
  ls -R "$NVSHMEM_HOME" | head -80 >"$LOG/nvshmem-files.txt"
  local lib=$NVSHMEM_HOME/lib
  [ -e "$lib/libnvshmem_host.so" ] || ln -sf "$(ls "$lib"/libnvshmem_host.so.* | head -1)" /tmp/libnvshmem_host.so
  local nv=("$NVCC" -std=c++17 -O2 -arch=sm_90 -rdc=true -DSHOAL_BENCH_NVSHMEM -I"$here/include" -I"$here/collectives/gpu"
    -I"$here/tests/gpu/coll" -I"$NVSHMEM_HOME/include" "$here/perf/bench_gpu_coll.cu" -o /tmp/bench_nvshmem
    -L"$lib" -L/tmp -lnvshmem_host -lnvshmem_device -Xlinker -rpath="$lib")
  step nvshmem-build 90 "${nv[@]}"
  [ -x /tmp/bench_nvshmem ] || step nvshmem-build-lcuda 90 "${nv[@]}" -lcuda
  [ -x /tmp/bench_nvshmem ] && nvshmem_built=1
}
nvshmem_run() { # nvshmem_run W (full MPG mode: MPS, UID bootstrap over lo, no NVLS)
  [ $nvshmem_built = 1 ] || return 0
  step "nvshmem-w$1" 60 env NVSHMEM_IGNORE_CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=1 NVSHMEM_BOOTSTRAP=UID \
    NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME=lo NVSHMEM_DISABLE_NVLS=1 NVSHMEM_SYMMETRIC_SIZE=$((2 * $1 / 4 + 2))G \
    /tmp/bench_nvshmem -W "$1" --min 4K --max 256M --factor 4 --csv "$CSV" --label default
}

if ((multi)); then # issue 7 (docs/multi-gpu.md): every visible GPU, one and two PEs per GPU
  ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
  note "GPUs: $ngpu ($(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | sort | uniq -c | xargs))"
  if ((ngpu < 2)); then
    note "SKIP multi (fewer than 2 GPUs)"
    exit 0
  fi
  nvidia-smi topo -m >"$LOG/topo-m.txt" 2>&1
  nvidia-smi --query-gpu=index,pci.bus_id --format=csv,noheader >"$LOG/gpu-busids.txt" 2>&1
  { echo "--- nvidia-smi topo -m"; sed 's/\x1b\[[0-9;]*m//g' "$LOG/topo-m.txt" | head -$((ngpu + 12)); } >>"$summary"
  # 1. the GPU tests (device put/get/AMO/signal, device barrier, host RMA into device memory, bad input): one PE per
  #    GPU and two per GPU; they run their own MPS daemon, so before ours
  if [ -x "$B/gt/runtime/oshrun" ]; then
    step gpu-tests 110 env GPU_TESTS_PES="$ngpu $((2 * ngpu))" GPU_TESTS_DEADLINE=90 \
      GPU_TESTS_BENCH_TIMEOUT=30 bash "$here/scripts/gpu-tests.sh" "$B/gt"
    grep -E '^gpu-tests: (FAIL|[0-9]+ passed)|^gpu-tests: MPS' "$LOG/gpu-tests.log" >>"$summary"
    grep -E 'putmem|cudaMemcpy|round trip|GB/s' "$LOG/gpu-tests.log" | head -12 >>"$summary"
  fi
  mps_start
  df=0
  [ "$mps" = yes ] && df=1
  # 2. PE -> GPU mapping: oshrun's hwloc report and the GPU each PE's runtime opened, against nvidia-smi topo -m
  for n in $ngpu $((2 * ngpu)); do
    step "map-np$n" 30 env SHMEM_DEBUG=1 SHOAL_DEBUG_SUBSYS=gpu "$B/bin/oshrun" -n $n --report-bindings \
      --bind-to core --timeout 25 "$B/gt/tests/gpu/gpu_host"
    python3 - "$LOG/map-np$n.log" "$LOG/topo-m.txt" "$LOG/gpu-busids.txt" "$n" "$ngpu" >>"$summary" 2>&1 <<'PY'
import re, sys
log, topo, ids, n, ngpu = open(sys.argv[1]).read(), open(sys.argv[2]).read(), open(sys.argv[3]).read(), int(sys.argv[4]), int(sys.argv[5])
norm = lambda b: b.strip().lower()[-12:]
idx = {norm(l.split(',')[1]): int(l.split(',')[0]) for l in ids.strip().splitlines() if ',' in l}
numa = {}
for l in re.sub(r'\x1b\[[0-9;]*m', '', topo).splitlines():       # nvidia-smi topo -m: GPUi ... NUMA Affinity column
    f = l.split()
    if f and re.fullmatch(r'GPU\d+', f[0]):
        nums = [x for x in f[1:] if re.fullmatch(r'\d+|N/A', x)]
        numa[int(f[0][3:])] = (nums[-2] if len(nums) >= 2 and nums[-1] == 'N/A' else nums[-1]) if nums else '?'
rep = {int(m.group(1)): (m.group(2), m.group(3)) for m in re.finditer(r'oshrun: PE (\d+): \S+ \S+ \(NUMA (-?\d+)\), GPU (\S+)', log)}
rep = {p: (nm, bus) for p, (nm, bus) in rep.items()}
used = re.findall(r'GPU (\S+) \(device (\d+)\) from the topology map', log)
bad = []
per = {}
for p, (nm, bus) in sorted(rep.items()):
    g = idx.get(norm(bus), -1)
    per.setdefault(g, []).append(p)
    if g < 0: bad.append(f'PE {p}: bus id {bus} not in nvidia-smi')
    elif numa.get(g, '?') not in ('?', 'N/A', nm): bad.append(f'PE {p}: NUMA {nm}, nvidia-smi says GPU{g} is on NUMA {numa[g]}')
if len(rep) != n: bad.append(f'{len(rep)} report lines for {n} PEs')
if rep and sorted(len(v) for v in per.values()) != [n // ngpu] * ngpu: bad.append(f'PEs per GPU {dict(per)}: not balanced')
if len(used) != n: bad.append(f'{len(used)} PEs said which GPU they opened (SHMEM_DEBUG), expected {n}')
elif sorted(norm(b) for b, _ in used) != sorted(norm(b) for _, b in rep.values()): bad.append('the GPUs opened differ from the report')
print(f"{'OK' if not bad else 'FAIL'} map-check n={n}: PEs per GPU index {dict(sorted(per.items()))}, "
      f"opened {len(used)}; " + ('; '.join(bad) if bad else 'hwloc report, opened GPUs and nvidia-smi topo -m agree'))
PY
    grep '^oshrun: PE' "$LOG/map-np$n.log" >>"$summary"
  done
  # 3. the kernels: harness (processes; peer heaps by IPC across GPUs), then the runtime test through oshrun
  step harness-procs-w$ngpu 60 "$H" -W $ngpu --procs --seed "$seed" --max-bytes 256M --matrix "$LOG/matrix-multi.csv"
  step harness-procs-w$((2 * ngpu)) 40 "$H" -W $((2 * ngpu)) --procs --quick --seed "$seed" --matrix "$LOG/matrix-multi.csv"
  if [ $have_shmem = 1 ]; then shmem_run $ngpu hoisted 60; shmem_run $((2 * ngpu)) hoisted 60 $((16 << 20)); fi
  # 4. against NCCL (torch.distributed) on the same inputs, one rank per GPU
  torch_cmp nccl $ngpu hoisted
  torch_cmp nccl $ngpu naive
  # 5. benchmarks in one run: Shoal (naive, hoisted), NCCL, NVSHMEM; one PE per GPU, then two per GPU (Shoal only)
  step bench-multi-w$ngpu 70 "$BENCH" -W $ngpu --procs --min 4K --max 1G --factor 4 --csv "$CSV" --label multi
  step nccl-bench-w$ngpu 80 python3 "$here/perf/torch_coll_bench.py" -W $ngpu --min 4K --max 1G --factor 4 \
    --csv "$CSV" --label multi
  nvshmem_build
  if [ $nvshmem_built = 1 ]; then
    step "nvshmem-multi-w$ngpu" 60 env NVSHMEM_IGNORE_CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=1 NVSHMEM_BOOTSTRAP=UID \
      NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME=lo NVSHMEM_DISABLE_NVLS=1 NVSHMEM_SYMMETRIC_SIZE=$((4 * ngpu + 2))G \
      /tmp/bench_nvshmem -W $ngpu --min 4K --max 1G --factor 4 --csv "$CSV" --label multi
  fi
  step bench-multi-w$((2 * ngpu)) 40 "$BENCH" -W $((2 * ngpu)) --procs --min 4K --max 256M --factor 16 --csv "$CSV" \
    --label multi2
  finish
  exit 0
fi

if ((reduce)); then # issue 16: the reductions and the sum all-reduce
  RH=$B/bin/coll_gpu_reduce_harness
  step reduce-harness-procs-w4 90 "$RH" -W 4 --procs --seed "$seed" --max-bytes 256M
  step reduce-harness-procs-w2 60 "$RH" -W 2 --procs --quick --seed "$seed"
  step reduce-harness-procs-w3 60 "$RH" -W 3 --procs --quick --seed "$seed"
  step reduce-harness-procs-w8 80 "$RH" -W 8 --procs --quick --seed "$seed"
  if [ -x "$B/bin/coll_gpu_reduce_shmem" ] && [ $have_shmem = 1 ]; then
    for n in 2 3 4; do
      step "reduce-shmem-np$n" 60 env SHOAL_TEST_DEVICE_FORMS=$df SHOAL_DEVICE_SYMMETRIC_SIZE=2G \
        "$B/bin/oshrun" -n $n --timeout 55 "$B/bin/coll_gpu_reduce_shmem" --max-bytes $((16 << 20))
    done
  fi
  for w in 4 2 8; do # torch.distributed all_reduce (gloo) on the same inputs: fp32, fp16, bf16
    d=/tmp/gpu-coll-dump-allreduce-w$w
    mkdir -p "$d"
    step "reduce-dump-w$w" 40 "$RH" -W $w --procs --seed "$seed" --dump "$d"
    step "gloo-allreduce-w$w" 90 python3 "$here/tests/gpu/coll/gloo_allreduce.py" -W $w --dump "$d" --seed "$seed" \
      --out "$LOG/torch-allreduce.csv"
  done
  # the all-reduce at 4 PEs, naive and hoisted interleaved (median of 3), and the copy ceiling of the same run
  step bench-allreduce-w4 150 "$BENCH" -W 4 --procs --op allreduce --ceiling --repeat 3 --min 4K --max 256M --factor 4 \
    --csv "$CSV" --label allreduce
  nvshmem_build
  if [ $nvshmem_built = 1 ]; then
    step nvshmem-allreduce-w4 60 env NVSHMEM_IGNORE_CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=1 NVSHMEM_BOOTSTRAP=UID \
      NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME=lo NVSHMEM_DISABLE_NVLS=1 NVSHMEM_SYMMETRIC_SIZE=3G \
      /tmp/bench_nvshmem -W 4 --op allreduce --min 4K --max 256M --factor 4 --csv "$CSV" --label allreduce
  fi
  step bench-fcollect-w4-small 30 "$BENCH" -W 4 --procs --op fcollect --variants hoisted --min 4K --max 64K --factor 4 \
    --csv "$CSV" --label allreduce # the 4 KiB target: at most the fcollect's time, same run
  # small calls: the one exchange against two (--small 1), beside the fcollect and alltoall of the same run, 5 rounds
  step bench-small-w4 60 "$BENCH" -W 4 --procs --op all --variants hoisted --small 0,1 --repeat 5 --min 4K \
    --max 64K --factor 4 --csv "$CSV" --label small
  # torch.distributed's all_reduce (gloo: the ranks share the GPU) on the same sizes, the table's torch column
  step torch-gloo-allreduce-w4 120 python3 "$here/perf/torch_coll_bench.py" -W 4 --backend gloo --ops allreduce \
    --min 4K --max 64M --factor 4 --csv "$CSV" --label allreduce
  finish
  exit 0
fi

if ((tune)); then
  if [ "${GPU_COLL_TUNE:-1}" = 1 ]; then # first round (2026-11-29 21:45 UTC, docs/gpu-collectives.md)
    step harness-procs-w4 40 "$H" -W 4 --procs --quick --seed "$seed" --matrix "$LOG/matrix.csv"
    step harness-procs-w5 40 "$H" -W 5 --procs --quick --seed "$seed" --matrix "$LOG/matrix.csv"
    step harness-procs-w8 50 "$H" -W 8 --procs --quick --seed "$seed" --matrix "$LOG/matrix.csv"
    # side by side, interleaved, median of 3: pipelining off / on x completion scope auto (device) / system
    step bench-w4-ab 90 "$BENCH" -W 4 --procs --ceiling --variants hoisted --pipe 1,2 --scope 0,1 --repeat 3 \
      --min 4K --max 1G --factor 4 --csv "$CSV" --label ab
    # G x COMM_SMS x tile at 1 MiB .. 1 GiB, and grid / tile for small calls
    step bench-w4-sweep 80 "$BENCH" -W 4 --procs --variants hoisted --g 1,2,4 --sms 0,66 --tile 0,128K,1M \
      --min 1M --max 1G --factor 4 --csv "$CSV" --label sweep
    step bench-w4-small 40 "$BENCH" -W 4 --procs --variants hoisted --sms 0,1,4,16 --tile 0,4K,16K \
      --min 4K --max 1M --factor 4 --csv "$CSV" --label small
    # before / after: naive and hoisted, with and without pipelining, interleaved, median of 5
    step bench-w4-nh 120 "$BENCH" -W 4 --procs --variants naive,hoisted --pipe 1,2 --repeat 5 \
      --min 4K --max 1G --factor 4 --csv "$CSV" --label nh
  elif [ "${GPU_COLL_TUNE}" = 3 ]; then # third round: peer heaps mapped by cudaIpc against the driver VMM API (CW_ALLOC=vmm)
    step harness-procs-w4-vmm 40 env CW_ALLOC=vmm "$H" -W 4 --procs --quick --seed "$seed"
    for r in 1 2; do
      step bench-w4-ipc$r 60 env CW_ALLOC=ipc "$BENCH" -W 4 --procs --ceiling --variants hoisted --min 16M --max 1G --factor 4 \
        --csv "$CSV" --label ipc
      step bench-w4-vmm$r 60 env CW_ALLOC=vmm "$BENCH" -W 4 --procs --ceiling --variants hoisted --min 16M --max 1G \
        --factor 4 --csv "$CSV" --label vmm
    done
    step bench-w8-ipc 50 env CW_ALLOC=ipc "$BENCH" -W 8 --procs --variants hoisted --min 64M --max 512M --factor 2 --csv "$CSV" --label ipc
    step bench-w8-vmm 50 env CW_ALLOC=vmm "$BENCH" -W 8 --procs --variants hoisted --min 64M --max 512M --factor 2 \
      --csv "$CSV" --label vmm
  else # second round: grid x tile x pipelining x G for the automatic choices; where fcollect's large calls lose
    step bench-w4-small2 90 "$BENCH" -W 4 --procs --variants hoisted --sms 16,33,66,132 --tile 4K,8K,16K,32K \
      --pipe 1,2 --min 64K --max 4M --factor 4 --csv "$CSV" --label small2
    step bench-w4-large2 150 "$BENCH" -W 4 --procs --ceiling --variants hoisted --g 0,1 --sms 66,132 \
      --tile 32K,128K,512K,2M,8M --pipe 1,2 --min 16M --max 1G --factor 4 --csv "$CSV" --label large2
    step bench-w1 30 "$BENCH" -W 1 --procs --variants hoisted --tile 32K,2M --pipe 1,2 --min 64M --max 1G --factor 4 \
      --csv "$CSV" --label w1
    step bench-w2 30 "$BENCH" -W 2 --procs --ceiling --variants hoisted --tile 32K,2M --pipe 1,2 --min 64M --max 1G \
      --factor 4 --csv "$CSV" --label w2
    step bench-w4-threads 40 "$BENCH" -W 4 --variants hoisted --tile 32K,2M --pipe 1,2 --min 64M --max 1G --factor 4 \
      --csv "$CSV" --label threads
  fi
  finish
  exit 0
fi

if ((quick)); then
  step harness-procs-w2 25 "$H" -W 2 --procs --quick --seed "$seed" --matrix "$LOG/matrix.csv"
  step harness-procs-w4 30 "$H" -W 4 --procs --quick --seed "$seed" --matrix "$LOG/matrix.csv"
  step harness-threads-w3 30 "$H" -W 3 --quick --seed "$seed" --matrix "$LOG/matrix.csv"
  if [ $have_shmem = 1 ]; then shmem_run 2 hoisted 40 $((16 << 20)); shmem_run 4 hoisted 40 $((16 << 20)); fi
  step bench-w4 25 "$BENCH" -W 4 --procs --ceiling --min 4K --max 256M --factor 16 --csv "$CSV" --label default
  step bench-w4-hostsync 10 "$BENCH" -W 4 --procs --sync host --min 4K --max 16M --factor 64 --csv "$CSV" --label hostsync
  # GPU_COLL_QUICK_FULL=1: the full harness at W = 4 too (every size up to 256 MiB per PE)
  [ "${GPU_COLL_QUICK_FULL:-0}" = 1 ] && step harness-procs-w4-full 60 "$H" -W 4 --procs --seed "$seed" --max-bytes 256M
  nvshmem_build
  nvshmem_run 2
  # Without MPS (the processes' kernels time-slice): the harness's in-kernel waits must still complete (slowly), and
  # the runtime's automatic choice must take the host completion.
  if [ "$mps" = yes ]; then
    mps_stop
    unset CUDA_MPS_PIPE_DIRECTORY
    mps=no df=0
    step harness-procs-w4-nomps 30 "$H" -W 4 --procs --quick --seed "$seed"
    [ $have_shmem = 1 ] && shmem_run 2 naive 30 $((16 << 20))
    step bench-w4-nomps 20 "$BENCH" -W 4 --procs --min 4K --max 16M --factor 64 --csv "$CSV" --label nomps
    step bench-w4-nomps-hostsync 15 "$BENCH" -W 4 --procs --sync host --min 4K --max 16M --factor 64 --csv "$CSV" \
      --label nomps-hostsync
  fi
  finish
  exit 0
fi

# (order: correctness at every W and against gloo, the main benchmark, NVSHMEM at 4 PEs, then the rest; the budget
# cuts the tail. The threads mode of the harness is left out: it hangs, see docs/gpu-collectives.md.)
step plan 20 "$B/bin/coll_gpu_plan"
step harness-procs-w4 100 "$H" -W 4 --procs --seed "$seed" --max-bytes 256M --matrix "$LOG/matrix.csv"
step harness-procs-w8 120 "$H" -W 8 --procs --seed "$seed" --max-bytes 128M --matrix "$LOG/matrix.csv"
[ $have_shmem = 1 ] && shmem_run 4 hoisted 60 $((16 << 20))
step bench-w4 150 "$BENCH" -W 4 --procs --ceiling --before --repeat 3 --min 4K --max 1G --factor 4 --csv "$CSV" \
  --label default
nvshmem_build
nvshmem_run 4
# the peer heaps mapped by cudaIpc handles instead of the VMM API (SHOAL_GPU_HEAP_MAP=ipc), same settings
step bench-w4-ipc 80 env CW_ALLOC=ipc "$BENCH" -W 4 --procs --ceiling --variants hoisted --before --repeat 2 \
  --min 4K --max 1G --factor 4 --csv "$CSV" --label ipc
gloo_run 4
gloo_run 8
gloo_run 4 naive
gloo_run 2
step harness-procs-w2 80 "$H" -W 2 --procs --seed "$seed" --max-bytes 256M --matrix "$LOG/matrix.csv"
step harness-procs-w5 60 "$H" -W 5 --procs --quick --seed "$seed" --matrix "$LOG/matrix.csv"
if [ $have_shmem = 1 ]; then shmem_run 8 hoisted 60 $((16 << 20)); shmem_run 4 naive 60 $((16 << 20)); fi
step bench-w8 50 "$BENCH" -W 8 --procs --min 4K --max 1G --factor 4 --csv "$CSV" --label default
step bench-w2 40 "$BENCH" -W 2 --procs --min 4K --max 1G --factor 4 --csv "$CSV" --label default
nvshmem_run 8
nvshmem_run 2
step bench-w4-hostsync 30 "$BENCH" -W 4 --procs --sync host --min 4K --max 64M --factor 16 --csv "$CSV" --label hostsync
if [ $have_shmem = 1 ]; then shmem_run 3 hoisted 60 $((16 << 20)); shmem_run 2 hoisted 60 $((16 << 20)); fi
finish
