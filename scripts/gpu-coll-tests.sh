#!/usr/bin/env bash
# gpu-coll-tests.sh - the GPU collective kernels (issue 6) on the device machine, in one call (about 7 minutes).
#
#   scripts/gpu-coll-tests.sh --bundle BUILD     here: copy what the device run needs from BUILD (a meson build dir
#                                                with nvcc) into BUILD/gpu-coll-bundle (a few MiB, to carry)
#   scripts/gpu-coll-tests.sh BUNDLE             there: run everything, results under $OUT (default /tmp/gpu-coll-out)
#   scripts/gpu-coll-tests.sh --quick BUNDLE     there: the short run (~150 s): MPS, harness (processes W = 2, 4;
#                                                threads W = 3), runtime test at 2 and 4 PEs, a small benchmark, NVSHMEM W = 2
#   scripts/gpu-coll-tests.sh --plot CSV SVG     here: bandwidth plot (GB/s against size) from the benchmark's CSV
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
           collectives/gpu/coll_gpu_cuda.resources.txt; do
    [ -e "$build/$f" ] && cp "$build/$f" "$b/bin/"
  done
  if [ -e "$build/tests/gpu/coll/coll_gpu_shmem" ]; then   # the runtime, for the multi-PE tests through oshrun
    mkdir -p "$b/lib" && cp "$build/runtime/oshrun" "$b/bin/"
    cp -P "$build"/runtime/libshoal.so "$build"/runtime/libshoal.so.0 "$build"/runtime/libshoal.so.0.1.0 "$b/lib/"
    mkdir -p "$b/lib/fallback"
    for l in libhwloc.so.15 libudev.so.1; do   # what libshoal and oshrun need beyond libc, used only if missing there
      p=$(ldconfig -p | awk -v l="$l" '$1 == l && /x86-64/ {print $NF; exit}')
      [ -n "$p" ] && cp -L "$p" "$b/lib/fallback/"
    done
  fi
  du -sh "$b"
  exit 0
fi

if [ "${1:-}" = "--plot" ]; then
  python3 - "${2:?usage: $0 --plot CSV SVG}" "${3:?usage: $0 --plot CSV SVG}" <<'PY'
import csv, math, sys
from collections import defaultdict
rows = list(csv.DictReader(open(sys.argv[1])))
lines = defaultdict(list)
for r in rows:
    if r['impl'] == 'memcpy':
        lines['cudaMemcpy D2D (ceiling)'].append((int(r['bytes_per_pe']), float(r['moved_GBs'])))
    elif r['impl'] in ('shoal', 'nvshmem') and r['W'] == '4' and r.get('label', '') in ('', 'default'):
        name = f"{r['impl']} {r['op']} {r['variant']}".replace(' -', '')
        lines[name].append((int(r['bytes_per_pe']), float(r['moved_GBs'])))
W, H, L, B, T, R = 900, 520, 70, 50, 30, 260
xs = [x for pts in lines.values() for x, _ in pts]
ys = [y for pts in lines.values() for _, y in pts]
if not xs: sys.exit('no data')
x0, x1 = math.log2(min(xs)), math.log2(max(xs))
y1 = max(ys) * 1.05
X = lambda x: L + (math.log2(x) - x0) / max(x1 - x0, 1) * (W - L - R)
Y = lambda y: H - B - y / y1 * (H - B - T)
colors = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf']
o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
     f'<rect width="{W}" height="{H}" fill="white"/>',
     f'<text x="{L}" y="18" font-size="14">Bytes read + written per second, 4 PEs on one GPU (GB/s) against bytes per PE</text>']
for i in range(6):
    y = y1 * i / 5
    o.append(f'<line x1="{L}" y1="{Y(y):.1f}" x2="{W - R}" y2="{Y(y):.1f}" stroke="#ddd"/>')
    o.append(f'<text x="{L - 6}" y="{Y(y) + 4:.1f}" text-anchor="end">{y:.0f}</text>')
for e in range(int(x0), int(x1) + 1, 2):
    lab = f'{2**e // 2**30} GiB' if e >= 30 else f'{2**e // 2**20} MiB' if e >= 20 else f'{2**e // 2**10} KiB'
    o.append(f'<line x1="{X(2**e):.1f}" y1="{H - B}" x2="{X(2**e):.1f}" y2="{T}" stroke="#eee"/>')
    o.append(f'<text x="{X(2**e):.1f}" y="{H - B + 16}" text-anchor="middle">{lab}</text>')
for i, (name, pts) in enumerate(sorted(lines.items())):
    pts.sort()
    c = colors[i % len(colors)]
    d = ' '.join(f'{X(x):.1f},{Y(y):.1f}' for x, y in pts)
    o.append(f'<polyline points="{d}" fill="none" stroke="{c}" stroke-width="2"/>')
    o.append(f'<text x="{W - R + 10}" y="{T + 16 * i + 10}" fill="{c}">{name}</text>')
o.append('</svg>')
open(sys.argv[2], 'w').write('\n'.join(o) + '\n')
PY
  exit $?
fi

quick=0
if [ "${1:-}" = "--quick" ]; then # the short run: ~150 s, the steps that show what is broken
  quick=1
  shift
fi
B=$(cd "${1:?usage: $0 [--quick] BUNDLE | --bundle BUILD | --plot CSV SVG}" && pwd)
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

# step NAME LIMIT CMD...: run CMD with a time limit (cut to the budget left), output in $LOG/NAME.log
step() {
  local name=$1 limit=$2
  shift 2
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
if command -v nvidia-cuda-mps-control >/dev/null 2>&1; then
  mps_stop
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  if nvidia-cuda-mps-control -d >"$LOG/mps.log" 2>&1; then
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
  ldconfig -p | grep -q 'libhwloc.so.15 ' || export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$B/lib/fallback
fi
df=0
[ "$mps" = yes ] && df=1
shmem_run() { # shmem_run N VARIANT [TIMEOUT MAXBYTES]: the runtime's multi-PE test (device forms too under MPS)
  local to=${3:-55} mb=${4:-$((256 << 20))}
  step "shmem-np$1-$2" $((to + 5)) env SHOAL_COLL_VARIANT="$2" SHOAL_TEST_DEVICE_FORMS=$df \
    SHOAL_DEVICE_SYMMETRIC_SIZE=4G SHMEM_DEBUG=1 SHOAL_DEBUG_SUBSYS=coll,gpu "$B/bin/oshrun" -n "$1" --timeout "$to" "$B/bin/coll_gpu_shmem" \
    --max-bytes "$mb"
}
gloo_run() { # gloo_run W: the harness's outputs against torch.distributed (gloo) on the same inputs
  mkdir -p "/tmp/gpu-coll-dump-$1"
  step "gloo-dump-w$1" 40 "$H" -W "$1" --procs --seed "$seed" --dump "/tmp/gpu-coll-dump-$1"
  step "gloo-w$1" 60 python3 "$here/tests/gpu/coll/gloo_compare.py" -W "$1" --dump "/tmp/gpu-coll-dump-$1" \
    --seed "$seed" --out "$LOG/gloo.csv"
}
nvshmem_built=0
nvshmem_build() { # NVSHMEM 3.x's on-stream collectives on the same PEs, when nvcc and its headers are here
  if [ -z "$NVCC" ] || [ -z "$NVSHMEM_HOME" ] || [ ! -e "$NVSHMEM_HOME/include/nvshmem.h" ]; then
    note "SKIP nvshmem (nvcc: ${NVCC:-none}; nvidia-nvshmem headers: ${NVSHMEM_HOME:-none})"
    return
  fi
  ls -R "$NVSHMEM_HOME" | head -80 >"$LOG/nvshmem-files.txt"
  local lib=$NVSHMEM_HOME/lib
  [ -e "$lib/libnvshmem_host.so" ] || ln -sf "$(ls "$lib"/libnvshmem_host.so.* | head -1)" /tmp/libnvshmem_host.so
  local nv=("$NVCC" -std=c++17 -O2 -arch=sm_90 -rdc=true -DSHOAL_BENCH_NVSHMEM -I"$here/collectives/gpu"
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
  for f in "$LOG"/harness-*.log "$LOG"/shmem-*.log "$LOG"/nvshmem-*.log; do # first failures, into the summary
    [ -e "$f" ] || continue
    n=$(grep -cE 'MISMATCH|TIMEOUT|FAIL|rror|calls counted|did not finish' "$f")
    ((n)) || continue
    { echo "--- $(basename "$f"): $n failure lines; the first:"; grep -E 'MISMATCH|TIMEOUT|FAIL|rror|calls counted|did not finish|bad \(first|SLOW|re-armed|cw_setup' "$f" | head -14; } >>"$summary"
  done
  [ -e "$CSV" ] && { echo "--- bench.csv"; cut -d, -f1,3,5,9,11,12,14,16 "$CSV"; } >>"$summary"
  mps_stop
  note "total $(($(date +%s) - t_start))s"
  exit 0
fi

step plan 20 "$B/bin/coll_gpu_plan"
step harness-procs-w4 100 "$H" -W 4 --procs --seed "$seed" --max-bytes 256M --matrix "$LOG/matrix.csv"
step harness-procs-w2 80 "$H" -W 2 --procs --seed "$seed" --max-bytes 256M --matrix "$LOG/matrix.csv"
step harness-procs-w8 120 "$H" -W 8 --procs --seed "$seed" --max-bytes 128M --matrix "$LOG/matrix.csv"
if [ $have_shmem = 1 ]; then shmem_run 4 hoisted; shmem_run 4 naive; shmem_run 2 hoisted; shmem_run 8 hoisted; fi
step bench-w4 100 "$BENCH" -W 4 --procs --ceiling --min 4K --max 1G --factor 4 --csv "$CSV" --label default
gloo_run 4
nvshmem_build
nvshmem_run 4
step bench-w4-sweep 80 "$BENCH" -W 4 --procs --g 1,2,4 --sms 132,66,33 --min 64K --max 64M --factor 16 --csv "$CSV" \
  --label sweep
step bench-w2 40 "$BENCH" -W 2 --procs --min 4K --max 1G --factor 4 --csv "$CSV" --label default
step bench-w8 50 "$BENCH" -W 8 --procs --min 4K --max 1G --factor 4 --csv "$CSV" --label default
gloo_run 2
gloo_run 8
nvshmem_run 2
nvshmem_run 8
step bench-w4-hostsync 30 "$BENCH" -W 4 --procs --sync host --min 4K --max 64M --factor 16 --csv "$CSV" --label hostsync
step bench-w4-threads 30 "$BENCH" -W 4 --min 4K --max 64M --factor 16 --csv "$CSV" --label threads
step harness-threads-w3 40 "$H" -W 3 --quick --seed "$seed" --matrix "$LOG/matrix.csv"
if [ $have_shmem = 1 ]; then shmem_run 3 hoisted; shmem_run 8 naive; shmem_run 2 naive; fi

mps_stop
note "total $(($(date +%s) - t_start))s"
