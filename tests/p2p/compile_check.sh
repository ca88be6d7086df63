#!/bin/sh
# compile_check.sh ok|fail SOURCE CASE INCLUDE_DIR COMPILER...
# Compiles SOURCE with -DCASE=CASE as C11. "ok": must compile. "fail": must fail with a _Generic type error (so that
# a typo or a missing header cannot pass for the expected rejection).
expect=$1 src=$2 case=$3 inc=$4
shift 4
err=$("$@" -std=c11 -Wall -Werror -fsyntax-only -I"$inc" -DCASE="$case" "$src" 2>&1)
rc=$?
if [ "$expect" = ok ]; then
  if [ "$rc" -ne 0 ]; then echo "FAIL: case $case does not compile:"; echo "$err"; exit 1; fi
  echo "ok: case $case compiles"
  exit 0
fi
if [ "$rc" -eq 0 ]; then echo "FAIL: case $case compiled; a type outside the table must be rejected"; exit 1; fi
if ! printf '%s\n' "$err" | grep -Eq "_Generic|generic association"; then
  echo "FAIL: case $case failed, but not with a _Generic type error:"; echo "$err"; exit 1
fi
echo "ok: case $case rejected: $(printf '%s\n' "$err" | grep -E "_Generic|generic association" | head -1)"
