#!/usr/bin/python3
"""plot.py CSV PNG [W [LABEL]] - latency and bus bandwidth against size from a GPU collective benchmark's CSV.

The CSV is bench_gpu_coll's (perf/results-*.csv: impl, op, W, variant, bytes_per_pe, time_us, busbw_GBs, label, ...).
Two panels, both log-log with markers: time per call (us) and bus bandwidth as nccl-tests defines it (GB/s), one line
per implementation, operation and variant at W PEs (default 4) and LABEL (default: every row); dashed lines are the earlier automatic choices ('-before' variants).
Every plot in docs/img is drawn by this script: the command is under each figure.
"""
import csv
import sys
from collections import defaultdict

import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402


def size_label(x, _pos):
    for unit, shift in (('GiB', 30), ('MiB', 20), ('KiB', 10)):
        if x >= 1 << shift:
            return f'{x / (1 << shift):g} {unit}'
    return f'{x:g} B'


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    src, out = argv[1], argv[2]
    w = argv[3] if len(argv) > 3 else '4'
    label = argv[4] if len(argv) > 4 else None
    lines = defaultdict(list)
    for r in csv.DictReader(open(src)):
        if r['W'] != w or r['impl'] not in ('shoal', 'nvshmem', 'nccl') or (label and r.get('label', '') not in ('', label)):
            continue
        name = f"{r['impl']} {r['op']} {r['variant']}".replace(' -', '')
        lines[name].append((int(r['bytes_per_pe']), float(r['time_us']), float(r['busbw_GBs'])))
    if not lines:
        print(f'plot.py: no rows with W={w} in {src}', file=sys.stderr)
        return 1
    fig, (lat, bw) = plt.subplots(1, 2, figsize=(13, 5.2))
    markers = 'os^vD<>phx*+'
    for i, (name, pts) in enumerate(sorted(lines.items())):
        pts.sort()
        xs = [p[0] for p in pts]
        style = dict(marker=markers[i % len(markers)], markersize=4, linewidth=1.4,
                     linestyle='--' if '-before' in name else '-', label=name)
        lat.plot(xs, [p[1] for p in pts], **style)
        bw.plot(xs, [p[2] for p in pts], **style)
    for ax, title, unit in ((lat, 'Latency', 'time per call (us)'), (bw, 'Bus bandwidth', 'bus bandwidth (GB/s)')):
        ax.set_xscale('log', base=2)
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(size_label))
        ax.set_yscale('log')
        ax.set_xlabel('bytes per PE')
        ax.set_ylabel(unit)
        ax.set_title(f'{title}, {w} PEs' + (f' ({label})' if label else ''))
        ax.grid(True, which='major', alpha=0.4)
        ax.grid(True, which='minor', alpha=0.12)
    handles, labels = bw.get_legend_handles_labels()
    fig.legend(handles, labels, loc='center right', fontsize=8, frameon=True)
    fig.tight_layout(rect=(0, 0, 0.8, 1))
    fig.savefig(out, dpi=110)
    print(f'plot.py: {out}: {len(lines)} lines')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
