#!/usr/bin/env bash
# sanitize.sh [BUILD_DIR] - build Shoal with AddressSanitizer and UndefinedBehaviorSanitizer (no CUDA/HIP: the
# sanitizers do not cover device code) and run every test under them; any report stops the test that made it
# (halt_on_error), so it fails. Leak checking is off: PEs end with _exit on purpose in the failure tests.
# The oshcc, oshcxx and mpp-headers tests are left out (and oshrun-sigthief, whose LD_PRELOAD comes before the ASan
# runtime): a program that the build-tree wrappers link against a
# sanitized libshoal lacks the sanitizer runtime. So are the Python tests (python-*, shmem4py): python3 is no
# sanitized program, and a sanitized libshoal cannot be loaded into it.
# About 10 minutes on 2 cores. Exit status: meson test's.
set -uo pipefail
cd "$(dirname "$0")/.."
b=${1:-build-sanitize}
if [ -f "$b/build.ninja" ]; then
  meson setup --reconfigure "$b" >/dev/null
else
  meson setup "$b" -Db_sanitize=address,undefined -Db_lundef=false -Dcuda=disabled -Dhip=disabled >/dev/null
fi || exit 1
ninja -C "$b" || exit 1
export ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
wrapped='oshcc|oshcxx|mpp-headers|oshrun-sigthief|python-.*|shmem4py'
tests=$(meson test -C "$b" --list 2>/dev/null | grep '^shoal:' | sed 's/^shoal:[^ ]* \/ //' | grep -vxE "$wrapped")
# shellcheck disable=SC2086
meson test -C "$b" --num-processes 2 --timeout-multiplier 4 --print-errorlogs $tests
