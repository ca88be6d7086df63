#!/bin/sh
# report.sh REPORT COMMAND... - run a GPU compiler and keep its diagnostics (nvcc -Xptxas -v register/spill lines,
# hipcc -Rpass-analysis=kernel-resource-usage remarks) in REPORT in the build directory. They are shown on failure.
report=$1
shift
"$@" 2>"$report.tmp"
rc=$?
[ $rc -ne 0 ] && cat "$report.tmp" >&2
mv -f "$report.tmp" "$report"
exit $rc
