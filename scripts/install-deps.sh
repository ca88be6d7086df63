#!/usr/bin/env bash
# Install what Shoal needs to build and test on Debian 12 (run as root). Idempotent: quick when all is present.
#   required: meson, ninja, pkg-config, a C compiler, hwloc, Check
#   optional, used when present: libfabric and PMIx (multi-node), hipcc (HIP backend, compiled in CI),
#   Open MPI's OSHMEM (perf/compare), pandoc (man pages from docs/man/*.md; skipped without it),
#   python3-matplotlib (scripts/plot.py, perf/compare), iproute2 and util-linux (suite netns: two network namespaces
#   as two hosts), cmake (test install-use: a user's find_package(shoal)), python3-numpy (the shoal Python package's
#   tests), python3-cffi, python3-setuptools and python3-pip (building shmem4py against Shoal where a copy of it is
#   at hand). nvcc is not a Debian package: the CUDA
#   backend is built when nvcc is found on PATH or in /usr/local/cuda/bin.
set -euo pipefail
pkgs=(gcc g++ make meson ninja-build pkg-config python3 libhwloc-dev hwloc check
      libfabric-dev libpmix-dev hipcc libamdhip64-dev openmpi-bin libopenmpi-dev procps
      pandoc python3-matplotlib iproute2 util-linux cmake python3-numpy python3-cffi python3-setuptools python3-pip)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "install-deps: all dependencies present"
