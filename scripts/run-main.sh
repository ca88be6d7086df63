#!/usr/bin/env bash
# The main job: install dependencies, build Shoal, and run the example application (2-D heat diffusion with halo
# exchange by put + barrier) on 4 PEs; it checks its grid against a 1-PE computation and prints PASSED or FAILED.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
export PATH="$PATH:/usr/local/cuda/bin"
[ -f build/build.ninja ] || meson setup build >/dev/null
ninja -C build >/dev/null
./build/runtime/oshrun -n 4 --timeout 300 ./build/examples/heat2d -n 1024 -s 500
