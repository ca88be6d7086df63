#!/bin/bash
# Before/after of the collectives in the mixed placement: SHOAL_NODE_PES=k makes runs of k PEs act as nodes (shared
# memory inside, libfabric tcp on 127.0.0.1 between), so teams span "nodes" on one machine. Alternating launches of
# two builds, three rounds; CSV rows: round,build,np,k,test,bytes,usec (bench_coll's median of one launch).
# Usage: perf/mixed-before-after.sh AFTER_BUILD BEFORE_BUILD [OUT.csv]   (build directories with runtime/oshrun and
# perf/bench_coll; docs/design/transport.md "Through the nodes" came from this)
set -u
after=$1 before=$2 out=${3:-mixed-before-after.csv}
export FI_PROVIDER=tcp FI_TCP_IFACE=lo SHOAL_OFI_PROVIDER=tcp
echo "round,build,np,k,test,bytes,usec" > "$out"
for r in 1 2 3; do
  for cfg in "4 2" "6 3" "6 2"; do
    set -- $cfg
    for b in after before; do
      d=$after; [ $b = before ] && d=$before
      echo "round $r: $b, $1 PEs, $2 per node" >&2
      SHOAL_NODE_PES=$2 timeout 300 "$d/runtime/oshrun" -n "$1" --timeout 290 "$d/perf/bench_coll" \
        --only barrier_all,broadcast,sum_reduce --max-size 65536 --iters-scale 0.2 --csv --no-ref 2>/dev/null |
        grep -v -e '^#' -e '^test' | awk -F, -v r=$r -v b=$b -v np=$1 -v k=$2 '{print r","b","np","k","$1","$2","$3}' >> "$out"
    done
  done
done
