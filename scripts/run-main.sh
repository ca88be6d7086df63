#!/usr/bin/env bash
# The main job: install dependencies, build Shoal, and run the example application (2-D heat diffusion with halo
# exchange by put + barrier) on 4 PEs; it checks its grid against a 1-PE computation and prints PASSED or FAILED.
set -euo pipefail
cd "$(dirname "$0")/.."
step() { echo "run-main: $(date +%T) $*"; }
step "1/4 dependencies (scripts/install-deps.sh)"
bash scripts/install-deps.sh
export PATH="$PATH:/usr/local/cuda/bin"
if [ ! -f build/build.ninja ]; then
  step "2/4 configure (meson setup build)"
  meson setup build   # what it finds (compilers, hwloc, CUDA, HIP, libfabric, PMIx, pandoc) and the options
else
  step "2/4 configure: build/ exists"
fi
# ninja's own progress ([n/N] per step); on a terminal it rewrites one line, in a log it prints one line per step.
step "3/4 build (ninja -C build: the GPU kernels take the longest)"
ninja -C build
step "4/4 run: heat2d on 4 PEs"
./build/runtime/oshrun -n 4 --timeout 300 ./build/examples/heat2d -n 1024 -s 500
