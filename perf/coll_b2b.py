#!/usr/bin/env python3
"""coll_b2b.py - the cost of the entry rule (issue 13 item 8): bench_coll with the collectives' old defaults
(SHOAL_COLL_{BCAST,FCOLLECT,ALLTOALL}_ALGO=push-unsafe: a fast PE may overwrite a dest that a slow PE still reads)
against the new ones (the default: no PE writes into another's dest before that PE has entered the call), in one
run: every round runs each (PE count, collective) under both settings, in alternating order, so that both see the
same machine. sum_reduce, whose code did not change, runs the same way as a control: its ratio shows the noise.

  coll_b2b.py [--oshrun PATH] [--bench PATH] [--npes 2,4] [--rounds 3] [--iters-scale 0.5] [--max-size BYTES]
              [--out FILE]

Broadcast is measured up to the old automatic choice's push limit (16 KiB, 64 KiB when PEs outnumber CPUs): above
it both settings run the same (unchanged) pull and tree algorithms. Prints, and writes to --out, the median usec per
call of each setting over the rounds and the median (min-max) of the per-round ratios new/old (> 1: slower now).
"""
import argparse
import csv
import io
import os
import statistics
import subprocess
import sys
import time

UNSAFE = {'SHOAL_COLL_BCAST_ALGO': 'push-unsafe', 'SHOAL_COLL_FCOLLECT_ALGO': 'push-unsafe',
          'SHOAL_COLL_ALLTOALL_ALGO': 'push-unsafe'}
COLLS = ['broadcast', 'fcollect', 'alltoall', 'sum_reduce']


def run(a, npes, coll, unsafe, max_size):
    env = {k: v for k, v in os.environ.items() if not k.startswith('SHOAL_COLL_')}
    if unsafe:
        env.update(UNSAFE)
    cmd = [a.oshrun, '-n', str(npes), '--timeout', '300', a.bench, '--only', coll, '--csv', '--iters-scale',
           str(a.iters_scale), '--max-size', str(max_size)]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if r.returncode:
        sys.exit(f'coll_b2b: {" ".join(cmd)} failed ({r.returncode}):\n{r.stderr}')
    rows = [ln for ln in r.stdout.splitlines() if ln and not ln.startswith('#')]
    return {int(row['bytes']): float(row['usec']) for row in csv.DictReader(io.StringIO('\n'.join(rows)))}


def main():
    ap = argparse.ArgumentParser()
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument('--oshrun', default=os.path.join(here, '..', 'build', 'runtime', 'oshrun'))
    ap.add_argument('--bench', default=os.path.join(here, '..', 'build', 'perf', 'bench_coll'))
    ap.add_argument('--npes', default='2,4')
    ap.add_argument('--rounds', type=int, default=3)
    ap.add_argument('--iters-scale', type=float, default=0.5)
    ap.add_argument('--max-size', type=int, default=1 << 20)
    ap.add_argument('--out', default=None)
    a = ap.parse_args()
    ncpu = len(os.sched_getaffinity(0))
    t = {}  # (npes, coll, bytes) -> {'old': [usec per round], 'new': [...]}
    t0 = time.time()
    for rnd in range(a.rounds):
        for npes in [int(x) for x in a.npes.split(',')]:
            for coll in COLLS:
                limit = a.max_size
                if coll == 'broadcast':
                    limit = min(limit, (16 << 10) * (4 if npes > ncpu else 1))
                elif coll == 'sum_reduce':
                    limit = min(limit, 64 << 10)
                order = [True, False] if (rnd + npes + COLLS.index(coll)) % 2 == 0 else [False, True]
                for unsafe in order:
                    for size, us in run(a, npes, coll, unsafe, limit).items():
                        t.setdefault((npes, coll, size), {'old': [], 'new': []})['old' if unsafe else 'new'].append(us)
                print(f'round {rnd + 1}/{a.rounds}: {npes} PEs {coll} done ({time.time() - t0:.0f} s)',
                      file=sys.stderr)
    out = io.StringIO()
    print(f'# perf/coll_b2b.py {" ".join(sys.argv[1:])}', file=out)
    print(f'# {time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}, {ncpu} CPUs, load average at the end '
          f'{os.getloadavg()[0]:.1f}; {a.rounds} rounds, both settings in each, alternating order', file=out)
    print('# old = SHOAL_COLL_{BCAST,FCOLLECT,ALLTOALL}_ALGO=push-unsafe (the defaults before issue 13); new = the '
          'defaults; usec = median per call over the rounds; new/old = median (min-max) of the per-round ratios',
          file=out)
    print(f'{"test":<11} {"PEs":>3} {"bytes":>8} {"old_usec":>10} {"new_usec":>10} {"new/old":>8} {"(min-max)":>13}',
          file=out)
    for (npes, coll, size), v in sorted(t.items(), key=lambda kv: (COLLS.index(kv[0][1]), kv[0][0], kv[0][2])):
        ratios = [n / o for n, o in zip(v['new'], v['old']) if o > 0]
        old, new = statistics.median(v['old']), statistics.median(v['new'])
        print(f'{coll:<11} {npes:>3} {size:>8} {old:>10.3f} {new:>10.3f} {statistics.median(ratios):>8.2f} '
              f'({min(ratios):5.2f}-{max(ratios):5.2f})', file=out)
    sys.stdout.write(out.getvalue())
    if a.out:
        with open(a.out, 'w') as f:
            f.write(out.getvalue())
    return 0


if __name__ == '__main__':
    sys.exit(main())
