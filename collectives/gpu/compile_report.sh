#!/bin/sh
# compile_report.sh REPORT COMPILER ARGS... - run a GPU compiler and keep what it prints on stderr (the resource report
# of nvcc -Xptxas -v or hipcc -Rpass-analysis=kernel-resource-usage) in REPORT; on failure show it and fail.
report=$1
shift
"$@" 2>"$report"
rc=$?
if [ $rc -ne 0 ]; then cat "$report" >&2; fi
exit $rc
