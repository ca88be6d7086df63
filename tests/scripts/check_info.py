#!/usr/bin/env python3
"""check_info.py ENV_C OSHRUN PROGRAM - SHMEM_INFO=1 prints every variable with its value and help.

The variable names come from the table in runtime/env.c (ENV_C). Under `oshrun -n 2` with SHMEM_INFO=1 (and a few
variables set to known values) PE 0, and only PE 0, prints the version line once and, for each variable, one line
"  NAME = VALUE : HELP (ACCEPTED; default DEFAULT)"; without SHMEM_INFO nothing of this is printed.
"""
import os
import re
import subprocess
import sys


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    env_c, oshrun, prog = sys.argv[1:]
    names = re.findall(r'^\s*\{"((?:SHMEM|SHOAL)_[A-Z_]+)",', open(env_c).read(), re.M)
    problems = []
    if len(names) < 4:
        problems.append(f'found only {names} in {env_c}')
    env = dict(os.environ, SHMEM_INFO='1', SHMEM_SYMMETRIC_SIZE='3M', SHOAL_SPIN='77')
    r = subprocess.run([oshrun, '-n', '2', '--timeout', '60', prog], env=env, capture_output=True, text=True)
    print(f'exit status {r.returncode}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr}')
    if r.returncode:
        problems.append(f'exit status {r.returncode}')
    if len(re.findall(r'^Shoal \S+, OpenSHMEM 1\.5$', r.stdout, re.M)) != 1:
        problems.append('the "Shoal <version>, OpenSHMEM 1.5" line is not printed exactly once')
    for name in names:
        lines = re.findall(rf'^\s+{name}\s+= (\S*)\s+: (.+)$', r.stdout, re.M)
        if len(lines) != 1:
            problems.append(f'{name}: {len(lines)} lines, want 1 "NAME = VALUE : HELP" line')
            continue
        value, help_ = lines[0]
        if len(help_) < 10 or 'default' not in help_:
            problems.append(f'{name}: help "{help_}" too short or without the default')
        if name in ('SHMEM_INFO', 'SHMEM_SYMMETRIC_SIZE', 'SHOAL_SPIN', 'SHMEM_DEBUG'):
            want = {'SHMEM_INFO': '1', 'SHMEM_SYMMETRIC_SIZE': str(3 << 20), 'SHOAL_SPIN': '77', 'SHMEM_DEBUG': '0'}
            if value != want[name]:
                problems.append(f'{name} shows value "{value}", want "{want[name]}"')
    env.pop('SHMEM_INFO')
    q = subprocess.run([oshrun, '-n', '2', '--timeout', '60', prog], env=env, capture_output=True, text=True)
    if q.returncode or any(n in q.stdout for n in names):
        problems.append('without SHMEM_INFO the variables are printed anyway (or the run failed)')
    for p in problems:
        print('FAIL: ' + p)
    print('PASS' if not problems else '')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
