#!/usr/bin/env bash
# gpu-tests.sh [BUILD_DIR] - run the GPU tests and the GPU benchmark on a machine with an NVIDIA GPU, from a build
# directory made elsewhere (meson setup BUILD_DIR; ninja -C BUILD_DIR). Every test program runs at 2, 3, 4 and 8 PEs
# sharing the GPU(s), under MPS when nvidia-cuda-mps-control is available (so that the PEs' kernels run at once;
# without it they time-slice: slower, still correct). Prints one line per run and a summary line
#   gpu-tests: P passed, F failed, S skipped of N runs
# with the device tests also run with every PE its own node over libfabric on lo at 2-4 PEs (issue 31;
# GPU_TESTS_FAR=0: not), then perf/bench_gpu at 2 PEs, and the shoal Python package with torch
# (python/tests/test_gpu_torch.py) at 2 and 3 PEs. Exit status: 0 when nothing failed. Nothing outside /tmp is written.
set -u
B=${1:-build-gpu}
OSHRUN=$B/runtime/oshrun
T=$B/tests/gpu
DEADLINE=${GPU_TESTS_DEADLINE:-380}   # seconds: no new run starts after this (the caller's limit is 420)
# GPU_TESTS_PES: the PE counts (default 2 3 4 8); GPU_TESTS_BENCH_TIMEOUT: bench_gpu's limit in seconds (default 150);
# GPU_TESTS_TIMEOUT: each run's limit in seconds (default 60)
PES=${GPU_TESTS_PES:-"2 3 4 8"}
start=$(date +%s)
pass=0 fail=0 skip=0 failed_runs=""

elapsed() { echo $(($(date +%s) - start)); }
echo "gpu-tests: $(date -u '+%Y-%m-%d %H:%M:%S UTC') on $(hostname), build $B"
nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version,memory.total,compute_mode --format=csv,noheader 2>&1 |
  sed 's/^/gpu-tests: GPU /'
[ -x "$OSHRUN" ] || { echo "gpu-tests: $OSHRUN missing: build first"; exit 2; }

# MPS: a control daemon of our own, in /tmp; stopped at the end.
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps CUDA_MPS_LOG_DIRECTORY=/tmp/mpslog
mps=no
if [ "${GPU_TESTS_MPS:-1}" = 0 ]; then
  mps="no (GPU_TESTS_MPS=0)" # the PEs' kernels time-slice: the run without MPS issue 31 asks for
elif command -v nvidia-cuda-mps-control >/dev/null 2>&1; then
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  [ -p "$CUDA_MPS_PIPE_DIRECTORY/control" ] && echo quit | nvidia-cuda-mps-control >/dev/null 2>&1 && sleep 1
  if nvidia-cuda-mps-control -d; then
    mps=yes
    trap 'echo quit | nvidia-cuda-mps-control >/dev/null 2>&1' EXIT
  fi
fi
# Probe: two PEs must find the GPU and map each other's heaps (IPC). If they cannot under MPS: without MPS.
probe() { "$OSHRUN" -n 2 --timeout 60 "$T/gpu_bad" >/tmp/gpu-tests-probe.log 2>&1; }
probe
prc=$?
if [ $prc -eq 77 ] && [ "$mps" = yes ]; then
  echo "gpu-tests: no GPU seen under MPS (probe rc 77): stopping MPS, running without it"
  echo quit | nvidia-cuda-mps-control >/dev/null 2>&1
  trap - EXIT
  mps="no (failed)"
  sleep 1
  probe
  prc=$?
fi
echo "gpu-tests: MPS: $mps; probe (gpu_bad -n 2): rc $prc"
[ $prc -ne 0 ] && sed 's/^/    | /' /tmp/gpu-tests-probe.log | tail -15

# run NAME EXPECT(pass|fail|fail-device) [VAR=VAL...] -- PES PROGRAM [ARGS]: one oshrun job, output kept in
# /tmp/gpu-tests.
mkdir -p /tmp/gpu-tests
run() {
  local name=$1 expect=$2
  shift 2
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  local n=$1
  shift
  if [ "$(elapsed)" -ge "$DEADLINE" ]; then
    echo "gpu-tests: SKIP $name -n $n (deadline)"
    skip=$((skip + 1))
    return
  fi
  local log=/tmp/gpu-tests/$name-$n.log t0 rc ms verdict tmo=${GPU_TESTS_TIMEOUT:-60}
  # no run outlives the deadline by more than 35 s (the caller's limit is 40 s past it): the summary line must print
  [ "$tmo" -gt $((DEADLINE + 35 - $(elapsed))) ] && tmo=$((DEADLINE + 35 - $(elapsed)))
  t0=$(date +%s%N)
  env ${envs[@]+"${envs[@]}"} "$OSHRUN" -n "$n" --timeout "$tmo" "$@" >"$log" 2>&1
  rc=$?
  ms=$((($(date +%s%N) - t0) / 1000000))
  if [ "$expect" = fail-device ]; then
    # a kernel stopped by the device API: non-zero exit and its one-line message (printed by the device, PE ?)
    if [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $rc -ne 77 ] &&
       grep -q "^shoal: PE ?: device API: this kernel's translation unit has no device state: .*shmemx_init_device_state()" \
         "$log"; then
      verdict=PASS
    elif [ $rc -eq 77 ]; then verdict=SKIP
    else verdict=FAIL; fi
  elif [ "$expect" = fail ]; then
    # must stop the job with a one-line "shoal: PE n: routine: ..." message, not crash or hang
    if [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $rc -ne 77 ] && grep -q '^shoal: PE [0-9]*: ' "$log"; then verdict=PASS
    elif [ $rc -eq 77 ]; then verdict=SKIP
    else verdict=FAIL; fi
  else
    case $rc in 0) verdict=PASS ;; 77) verdict=SKIP ;; *) verdict=FAIL ;; esac
  fi
  case $verdict in
    PASS) pass=$((pass + 1)) ;;
    SKIP) skip=$((skip + 1)) ;;
    FAIL) fail=$((fail + 1)); failed_runs="$failed_runs $name-$n" ;;
  esac
  printf 'gpu-tests: %s %-22s -n %d  rc %3d  %6d ms  %s\n' "$verdict" "$name" "$n" "$rc" "$ms" \
    "$(grep -h -m1 -E 'PASS|FAIL|SKIP|shoal: PE' "$log" | cut -c1-110)"
  if [ $verdict = FAIL ]; then sed 's/^/    | /' "$log" | tail -15; fi
}

export SHOAL_DEVICE_SYMMETRIC_SIZE=256M
src_dir=$(cd "$(dirname "$0")/.." && pwd)
# GPU_TESTS_ONLY=far: only sections 3b (every PE its own node) and 3c (nodes of two PEs)
near=1; [ "${GPU_TESTS_ONLY:-}" = far ] && near=0
if [ $near = 1 ]; then
# 1. a first look at 2 PEs with the runtime's own report (backend, device, heap)
run gpu_host pass SHMEM_INFO=1 SHMEM_DEBUG=1 SHOAL_DEBUG_SUBSYS=gpu -- 2 "$T/gpu_host"
grep -h -E '^shoal(\[| )' /tmp/gpu-tests/gpu_host-2.log | grep -v '^shoal: PE' | head -8 | sed 's/^/    | /'

# 2. the benchmark (2 PEs on one GPU)
bench() {
  echo "gpu-tests: bench_gpu (oshrun -n 2, SHOAL_DEVICE_SYMMETRIC_SIZE=1G)"
  local bt=${GPU_TESTS_BENCH_TIMEOUT:-150}
  SHOAL_DEVICE_SYMMETRIC_SIZE=1G timeout "$bt" "$OSHRUN" -n 2 --timeout $((bt - 10)) "$B/perf/bench_gpu" 2>&1 |
    tee /tmp/gpu-tests/bench_gpu.log
}
[ -x "$B/perf/bench_gpu" ] && bench

# 2b. the shoal Python package with torch (python/tests/test_gpu_torch.py; skipped without torch): device arrays as
# tensors through DLPack and __cuda_array_interface__, the peers' base table, fcollect/alltoall/all-reduce on a torch
# stream against torch.distributed (gloo on 127.0.0.1) at 2 and 3 PEs
for n in 2 3; do
  run python-torch pass PYTHONPATH="$src_dir/python" SHOAL_LIB="$(cd "$B" && pwd)/runtime/libshoal.so" \
    MASTER_ADDR=127.0.0.1 MASTER_PORT=$((29400 + n)) -- "$n" python3 "$src_dir/python/tests/test_gpu_torch.py"
done

# 3. every test at every PE count
for n in $PES; do
  for t in gpu_ring gpu_typed gpu_amo gpu_signal gpu_barrier gpu_host gpu_bad gpu_units gpu_bcast; do
    run $t pass -- "$n" "$T/$t"
  done
  # device team queries, and the block collectives with SHMEM_TEAM_WORLD (every PE's kernel at once: MPS)
  forms=; [ "$mps" = yes ] && forms=forms
  run gpu_teams pass -- "$n" "$T/gpu_teams" $forms
  # the block collectives and the team barriers on WORLD, SHARED and a split team (issue 16)
  run gpu_dcoll pass -- "$n" "$T/gpu_dcoll" $forms
  run porting_ring pass -- "$n" "$B/examples/porting_ring"
  run gpu_host-heap-device pass SHOAL_HEAP=device -- "$n" "$T/gpu_host"
  run gpu_host_amo pass -- "$n" "$T/gpu_host_amo"
  run gpu_nocheck pass -- "$n" "$T/gpu_nocheck" # a device-API program that checks nothing: right values, exit 0
done
fi # near
# 3b. every PE its own node (issue 31): device heaps of other nodes through the ofi transport (staged host RMA and
# AMOs), the device API's far PEs through the proxy, GPU collectives host-driven; libfabric's net provider on lo.
# GPU_TESTS_FAR=0 skips it; GPU_TESTS_FAR_PES: its PE counts (default 2 3 4); GPU_TESTS_FAR_LIST: its programs.
if [ "${GPU_TESTS_FAR:-1}" != 0 ]; then
  ftmo=${GPU_TESTS_TIMEOUT:-60}; [ "$mps" != yes ] && ftmo=${GPU_TESTS_TIMEOUT:-150}
  for n in ${GPU_TESTS_FAR_PES:-2 3 4}; do
    for t in ${GPU_TESTS_FAR_LIST:-gpu_ring gpu_typed gpu_amo gpu_signal gpu_barrier gpu_host gpu_bcast gpu_host_amo porting_ring gpu_dcoll}; do
      prog=$T/$t; [ $t = porting_ring ] && prog=$B/examples/porting_ring
      # gpu_amo's compare_swap loop: about THREADS^2 x ROUNDS / 2 attempts, each a proxy round trip here (tens of us):
      # its one-node shape (512 threads, 8 rounds) is a million of them; 64 threads, 4 rounds here
      args=; [ $t = gpu_amo ] && args="2 32 4"
      # Without MPS the PEs time-slice the GPU, and a far request whose target is a kernel or copy of the other PE
      # waits for that PE's slice (gpu.md: gpu_ring 144 s, gpu_amo 68 s, gpu_typed 47 s at 2 PEs on an H100, 1-4 s
      # under MPS). There the two longest run smaller shapes, every value still checked, and each run gets 150 s.
      if [ "$mps" != yes ]; then
        [ $t = gpu_amo ] && args="1 32 2"
        [ $t = gpu_ring ] && args=quick
      fi
      # gpu_dcoll: block collectives, reductions and team barriers in kernels, far members through the proxy (MPS)
      [ $t = gpu_dcoll ] && { [ "$mps" = yes ] && args=forms || continue; }
      GPU_TESTS_TIMEOUT=$ftmo run $t-far pass SHOAL_NODE_PES=1 SHOAL_TRANSPORT=ofi FI_PROVIDER=net FI_NET_IFACE=lo FI_TCP_IFACE=lo -- "$n" "$prog" $args
    done
    # the collectives (fcollect, alltoall, all-reduce on a torch stream) against torch.distributed (gloo) across nodes
    GPU_TESTS_TIMEOUT=$ftmo run python-torch-far pass SHOAL_NODE_PES=1 SHOAL_TRANSPORT=ofi FI_PROVIDER=net FI_NET_IFACE=lo FI_TCP_IFACE=lo \
      PYTHONPATH="$src_dir/python" SHOAL_LIB="$(cd "$B" && pwd)/runtime/libshoal.so" MASTER_ADDR=127.0.0.1 \
      MASTER_PORT=$((29410 + n)) -- "$n" python3 "$src_dir/python/tests/test_gpu_torch.py"
  done
  # 3c. nodes of two PEs (SHOAL_NODE_PES=2: shared memory and IPC inside a node, net between): the GPU collectives
  # through each node's leader (SHOAL_COLL_GPU_FAR), 4 PEs (2 + 2) and 5 (2 + 2 + 1); GPU_TESTS_MIXED_PES
  for n in ${GPU_TESTS_MIXED_PES:-4 5}; do
    for t in gpu_bcast gpu_dcoll gpu_ring gpu_signal python-torch; do
      prog=$T/$t args= extra=()
      [ $t = gpu_dcoll ] && { [ "$mps" = yes ] && args=forms || continue; }
      [ $t = python-torch ] && prog=python3 args="$src_dir/python/tests/test_gpu_torch.py" \
        extra=(PYTHONPATH="$src_dir/python" SHOAL_LIB="$(cd "$B" && pwd)/runtime/libshoal.so" MASTER_ADDR=127.0.0.1 \
               MASTER_PORT=$((29420 + n)))
      [ $t = gpu_ring ] && [ "$mps" != yes ] && args=quick
      GPU_TESTS_TIMEOUT=$ftmo run $t-mixed pass SHOAL_NODE_PES=2 FI_PROVIDER=net FI_NET_IFACE=lo \
        FI_TCP_IFACE=lo ${extra[@]+"${extra[@]}"} -- "$n" "$prog" ${args:+"$args"}
    done
  done
fi
if [ $near = 1 ]; then
# the tests that race the most, again at the largest count
for i in 1 2 3; do
  for t in gpu_signal gpu_barrier gpu_amo; do run $t-again$i pass -- 8 "$T/$t"; done
done
run gpu_fake pass -- 3 "$T/gpu_fake"
# programmatic dependent launch only for code compiled with its wait: sm_90 code yes, compute_80 PTX on this GPU no
for t in gpu_pdl_sm90 gpu_pdl_ptx80; do
  if "$T/$t" >/tmp/gpu-tests/$t.log 2>&1; then pass=$((pass + 1)); echo "gpu-tests: ok   $t"
  else fail=$((fail + 1)); failed_runs="$failed_runs $t"; echo "gpu-tests: FAIL $t"; fi
  sed 's/^/    | /' /tmp/gpu-tests/$t.log | head -2
done
run gpu_bad-badfree fail -- 2 "$T/gpu_bad" badfree
run gpu_bad-badpe fail -- 2 "$T/gpu_bad" badpe
run gpu_bad-mixedcoll fail -- 2 "$T/gpu_bad" mixedcoll
# a block collective on SHMEM_TEAM_INVALID, a broadcast root out of range: the kernel stops with one line naming both
run gpu_dcoll-badteam fail -- 2 "$T/gpu_dcoll" badteam
run gpu_dcoll-badroot fail -- 2 "$T/gpu_dcoll" badroot
for m in "badteam:shmemx_fcollectmem_block: team .* is SHMEM_TEAM_INVALID" \
         "badroot:shmemx_broadcastmem_block: PE_root 2 out of range \[0, 2)"; do
  if [ -e "/tmp/gpu-tests/gpu_dcoll-${m%%:*}-2.log" ] &&
     ! grep -q "^shoal: PE [0-9]*: ${m#*:}" "/tmp/gpu-tests/gpu_dcoll-${m%%:*}-2.log"; then
    echo "gpu-tests: FAIL gpu_dcoll-${m%%:*}: no line matching '${m#*:}'"
    fail=$((fail + 1)); failed_runs="$failed_runs gpu_dcoll-${m%%:*}-message"
  fi
done
if grep -q '^shoal: PE [0-9]*: ' /tmp/gpu-tests/gpu_bad-mixedcoll-2.log 2>/dev/null &&
   ! grep -q '^shoal: PE [0-9]*: shmem_fcollectmem: .*source' /tmp/gpu-tests/gpu_bad-mixedcoll-2.log; then
  echo "gpu-tests: FAIL gpu_bad-mixedcoll: the message does not name shmem_fcollectmem and source"
  fail=$((fail + 1)); failed_runs="$failed_runs gpu_bad-mixedcoll-message"
fi
# a unit that never copied its device state: its kernel stops with the message naming shmemx_init_device_state
run gpu_units-noinit fail-device -- 2 "$T/gpu_units" noinit
grep -h 'device API: this kernel' /tmp/gpu-tests/gpu_units-noinit-2.log 2>/dev/null | head -1 | sed 's/^/    | /'
# a device-API program without a device heap: shmem_init ends the job with one line per PE naming the cause (issue 32)
run gpu_nocheck-noheap fail SHOAL_DEVICE_SYMMETRIC_SIZE=0 -- 2 "$T/gpu_nocheck"
if [ -e /tmp/gpu-tests/gpu_nocheck-noheap-2.log ] && ! grep -q '^shoal: PE [0-9]*: shmem_init: this program uses the device API (<shoal/shmem_device.cuh>) but SHOAL_DEVICE_SYMMETRIC_SIZE is 0' \
     /tmp/gpu-tests/gpu_nocheck-noheap-2.log 2>/dev/null || grep -q '^gpu_nocheck: PE' /tmp/gpu-tests/gpu_nocheck-noheap-2.log; then
  echo "gpu-tests: FAIL gpu_nocheck-noheap: no line naming SHOAL_DEVICE_SYMMETRIC_SIZE, or the program ran on"
  fail=$((fail + 1)); failed_runs="$failed_runs gpu_nocheck-noheap-message"
fi
grep -h '^shoal: PE' /tmp/gpu-tests/gpu_bad-badfree-2.log /tmp/gpu-tests/gpu_bad-badpe-2.log \
  /tmp/gpu-tests/gpu_bad-mixedcoll-2.log 2>/dev/null | head -3 | sed 's/^/    | /'
fi # near

total=$((pass + fail + skip))
echo "gpu-tests: $pass passed, $fail failed, $skip skipped of $total runs (MPS $mps, $(elapsed) s)${failed_runs:+; failed:$failed_runs}"
[ $fail -eq 0 ]
