#!/usr/bin/env python3
"""run_check.py - tests/scripts/check_run.py for runs through mpirun.sh, with meson's skip passed on.

  run_check.py MPIRUN_SH [check_run.py options] -- MPIRUN_SH N PROG ARGS...

First asks 'MPIRUN_SH --probe': when that exits 77 (no mpirun on PATH, not Open MPI's, Shoal without PMIx) prints its
one-line reason and exits 77, so meson reports a skip instead of a failure. Otherwise runs check_run.py with the
remaining arguments and exits with its status.
"""
import os
import subprocess
import sys

CHECK_RUN = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'scripts', 'check_run.py')


def probe(wrapper):
    """None when a run can happen, else the skip reason (the wrapper's line)."""
    r = subprocess.run([wrapper, '--probe'], capture_output=True, text=True)
    if r.returncode == 77:
        return (r.stdout + r.stderr).strip() or 'mpirun.sh: skipped'
    if r.returncode != 0:
        sys.exit(f'FAIL: {wrapper} --probe exited {r.returncode}: {(r.stdout + r.stderr).strip()}')
    return None


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    reason = probe(sys.argv[1])
    if reason:
        print(reason)
        return 77
    return subprocess.run([sys.executable, CHECK_RUN] + sys.argv[2:]).returncode


if __name__ == '__main__':
    sys.exit(main())
