#!/usr/bin/env python3
"""lost.py - a PE lost (SIGKILL) or a shmem_global_exit(5) under mpirun: the whole job ends, fast, with nothing left.

  lost.py MPIRUN_SH LOST_PROGRAM NPES sigkill|global_exit

Runs 'MPIRUN_SH NPES LOST_PROGRAM MODE TOKEN' (TOKEN is unique to this run, so its processes can be found in
/proc/PID/cmdline). The last PE dies of SIGKILL, or calls shmem_global_exit(5), after a barrier; the other PEs wait in
shmem_barrier_all, which can never complete. Checks:
  - mpirun exits within 15 s (its --timeout is 80 s: a hang would take that long);
  - sigkill: exit status non-zero, and mpirun's stderr names the rank and the signal ("mpirun noticed that process
    rank N-1 ... exited on signal 9"); global_exit: exit status 5 (Open MPI 4.1's mpirun returns PMIx_Abort's status);
  - stdout has "lost: PE i of N ready" for every PE and the last PE's "lost: PE N-1: SIGKILL|global_exit 5", and no
    PE says it got past the barrier;
  - within 2 s of mpirun's exit no process whose command line holds TOKEN is alive (no PE, no orted, no mpirun).
Exits 77 (skip) when MPIRUN_SH --probe does.
"""
import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'scripts'))
from procs import live_procs as _live  # noqa: E402


def live_procs(token):
    return _live(token, with_cmd=True)

LIMIT = 15.0
GRACE = 2.0


def main():
    if len(sys.argv) != 5 or sys.argv[4] not in ('sigkill', 'global_exit'):
        sys.exit(__doc__)
    wrapper, prog, n, mode = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    r = subprocess.run([wrapper, '--probe'], capture_output=True, text=True)
    if r.returncode == 77:
        print((r.stdout + r.stderr).strip())
        return 77
    token = f'shoal-lost-{os.getpid()}-{time.monotonic_ns()}'
    cmd = [wrapper, str(n), prog, mode, token]
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    problems = []
    try:
        out, err = p.communicate(timeout=LIMIT)
    except subprocess.TimeoutExpired:
        problems.append(f'mpirun did not exit within {LIMIT} s')
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
    dt = time.monotonic() - t0
    deadline = time.monotonic() + GRACE
    left = live_procs(token)
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = live_procs(token)
    print(f'command: {" ".join(cmd)}\nexit status {p.returncode} after {dt:.2f} s\n--- stdout ---\n{out}'
          f'--- stderr ---\n{err}---')
    lines = out.splitlines()
    if mode == 'sigkill':
        if p.returncode == 0:
            problems.append('exit status 0, expected non-zero')
        rx = rf'^mpirun noticed that process rank {n - 1} with PID \d+ on node \S+ exited on signal 9 \(Killed\)\.$'
        if not any(re.search(rx, ln) for ln in err.splitlines()):
            problems.append(f'no stderr line matches {rx!r}')
    elif p.returncode != 5:
        problems.append(f'exit status {p.returncode}, expected 5 (shmem_global_exit(5))')
    want = [f'lost: PE {i} of {n} ready' for i in range(n)]
    want.append(f'lost: PE {n - 1}: ' + ('SIGKILL' if mode == 'sigkill' else 'global_exit 5'))
    for w in want:
        if lines.count(w) != 1:
            problems.append(f'stdout has {lines.count(w)} lines {w!r}, expected 1')
    bad = [ln for ln in lines if 'barrier completed' in ln]
    if bad:
        problems.append(f'a PE got past the barrier that cannot complete: {bad[0]!r}')
    if left:
        problems.append(f'{len(left)} processes of the run still alive {GRACE} s after mpirun exited: {left}')
        for pid, _ in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    for pr in problems:
        print('FAIL: ' + pr)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
