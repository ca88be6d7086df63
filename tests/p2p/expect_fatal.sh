#!/bin/sh
# expect_fatal.sh OSHRUN NPES PROGRAM MODE REGEX
# Runs PROGRAM MODE on NPES PEs; passes if the job fails (not by timeout) and stderr has exactly one line matching
# REGEX (a one-line "shoal: PE n: routine: ..." message).
oshrun=$1 npes=$2 prog=$3 mode=$4 regex=$5
err=$("$oshrun" -n "$npes" --timeout 60 "$prog" "$mode" 2>&1 >/dev/null)
rc=$?
if [ "$rc" -eq 0 ]; then echo "FAIL: $mode: the job succeeded; expected a fatal error"; echo "$err"; exit 1; fi
if [ "$rc" -eq 124 ]; then echo "FAIL: $mode: timed out"; echo "$err"; exit 1; fi
n=$(printf '%s\n' "$err" | grep -Ec -- "$regex")
if [ "$n" -ne 1 ]; then
  echo "FAIL: $mode: exit $rc, but $n stderr lines match /$regex/:"; printf '%s\n' "$err"; exit 1
fi
echo "ok: $mode: exit $rc: $(printf '%s\n' "$err" | grep -E -- "$regex")"
