#!/usr/bin/env python3
"""check_device_api.py - a device-API program that checks nothing (tests/gpu/gpu_nocheck.cu) must not run where its
kernels cannot (issue 32, item 4): shmem_init ends the job with one line per PE naming the cause.

  check_device_api.py --cause RE [--skip-cause RE] [--env VAR=VALUE]... -- oshrun -n N ... gpu_nocheck

Passes when the job exits non-zero, the program printed nothing, and stderr holds 1 to N lines, every one
  shoal: PE <p>: shmem_init: this program uses the device API (<shoal/shmem_device.cuh>) but <cause>: ending the job
with <cause> matching --cause. Exit 77 (skipped) when the kernels could run (a GPU: the program's values are checked
first), or when every line names --skip-cause instead (the no-GPU cause, for a test of a cause that needs a GPU).
"""
import argparse
import os
import re
import subprocess
import sys

LINE = (r'^shoal: PE (\d+): shmem_init: this program uses the device API \(<shoal/shmem_device\.cuh>\) but (.*): '
        r'ending the job$')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--cause', required=True)
    ap.add_argument('--skip-cause', default=None)
    ap.add_argument('--env', action='append', default=[])
    ap.add_argument('cmd', nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == '--' else a.cmd
    npes = int(cmd[cmd.index('-n') + 1])
    env = dict(os.environ)
    for kv in a.env:
        k, _, v = kv.partition('=')
        env[k] = v
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    # oshrun's own report of the first PE that ended ("oshrun: PE 0 (pid N) exited with status 1; stopping the job")
    # is the launcher's line, not the program's: it comes when oshrun stops the others before they said theirs.
    oshrun_line = r'^oshrun: PE \d+ \(pid \d+\) exited with status \d+; stopping the job$'
    out = r.stdout.splitlines()
    err = [l for l in r.stderr.splitlines() if l.strip() and not re.match(oshrun_line, l)]
    shown = f'exit status {r.returncode}\n--- stdout\n{r.stdout}--- stderr\n{r.stderr}'
    got = [re.match(r'^gpu_nocheck: PE (\d+): got (-?\d+) \(expected (-?\d+)\)$', l) for l in out]
    if r.returncode == 0 and got and all(got):
        if len(got) == npes and all(m.group(2) == m.group(3) for m in got):
            print('SKIP: the kernels ran (a GPU): values right on every PE; the no-GPU path is not exercised here')
            return 77
        print(f'FAIL: the program ran and exited 0 with wrong or missing values\n{shown}')
        return 1
    causes = [re.match(LINE, l) for l in err]
    if a.skip_cause and err and all(causes) and all(re.fullmatch(a.skip_cause, m.group(2)) for m in causes):
        print(f'SKIP: every PE stopped for another cause ({causes[0].group(2)})')
        return 77
    bad = []
    if r.returncode == 0:
        bad.append('exit status 0 (want non-zero)')
    if r.returncode in (124, 137):
        bad.append('the job ran past its time limit')
    if out:
        bad.append('the program printed (it must stop in shmem_init)')
    if not 1 <= len(err) <= npes:
        bad.append(f'{len(err)} lines on stderr (want 1 to {npes}, one per PE at most)')
    for l, m in zip(err, causes):
        if not m:
            bad.append(f'a line that is not the device-API line: {l!r}')
        elif not re.fullmatch(a.cause, m.group(2)) or int(m.group(1)) >= npes:
            bad.append(f'the cause {m.group(2)!r} (PE {m.group(1)}) does not match {a.cause!r}')
    if len({m.group(1) for m in causes if m}) != len([m for m in causes if m]):
        bad.append('a PE printed the line twice')
    if bad:
        print('FAIL: ' + '; '.join(bad) + '\n' + shown)
        return 1
    print(f'PASS: {len(err)} line(s): {err[0]}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
