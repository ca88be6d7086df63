#!/bin/sh
# compile_check.sh ok|fail SOURCE CASE INCLUDE_DIR COMPILER...
# Compiles SOURCE with -DCASE=CASE as C11. "ok": must compile. "fail": must fail with a _Generic type error (so that
# a typo or a missing header cannot pass for the expected rejection).
# Environment: COMPILE_STD replaces -std=c11 (e.g. "-std=c99", or "-x c++ -std=c++11" for a C++ compiler);
# COMPILE_ERROR_RE replaces the expected error (an extended regular expression).
expect=$1 src=$2 case=$3 inc=$4
shift 4
std=${COMPILE_STD:--std=c11}
want=${COMPILE_ERROR_RE:-_Generic|generic association}
# shellcheck disable=SC2086 # std is a list of flags
err=$("$@" $std -Wall -Werror -fsyntax-only -I"$inc" -DCASE="$case" "$src" 2>&1)
rc=$?
if [ "$expect" = ok ]; then
  if [ "$rc" -ne 0 ]; then echo "FAIL: case $case does not compile:"; echo "$err"; exit 1; fi
  echo "ok: case $case compiles"
  exit 0
fi
if [ "$rc" -eq 0 ]; then echo "FAIL: case $case compiled; it must be rejected"; exit 1; fi
if ! printf '%s\n' "$err" | grep -Eq "$want"; then
  echo "FAIL: case $case failed, but not with the expected error /$want/:"; echo "$err"; exit 1
fi
echo "ok: case $case rejected: $(printf '%s\n' "$err" | grep -E "$want" | head -1)"
