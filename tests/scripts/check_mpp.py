#!/usr/bin/env python3
"""check_mpp.py OSHRUN SOURCE OUTDIR WRAPPER... - <mpp/shmem.h> and <mpp/shmemx.h> work (issue 13 item 7).

Each WRAPPER (the build-tree oshcc; oshc++, which compiles SOURCE as C++) compiles SOURCE, a program that includes
only the mpp/ headers, with -Wall -Werror; the result runs under oshrun -n 2 and every PE prints "mpp: PE i of 2: ok".
"""
import os
import subprocess
import sys


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    print(f'$ {" ".join(cmd)}\n-> {r.returncode}\n{r.stdout}{r.stderr}')
    return r


def main():
    if len(sys.argv) < 5:
        print(__doc__)
        return 2
    oshrun, src, outdir = [os.path.abspath(a) for a in sys.argv[1:4]]
    os.makedirs(outdir, exist_ok=True)
    problems = []
    for w in sys.argv[4:]:
        name = os.path.basename(w)
        exe = os.path.join(outdir, 'mpp_' + name.replace('+', 'x'))
        if os.path.exists(exe):
            os.unlink(exe)
        lang = ['-x', 'c++'] if '++' in name else []
        if run([w, '-Wall', '-Werror'] + lang + [src, '-o', exe]).returncode:
            problems.append(f'{name}: {os.path.basename(src)} with <mpp/shmem.h> and <mpp/shmemx.h> does not compile')
            continue
        r = run([oshrun, '-n', '2', '--timeout', '60', exe])
        for i in range(2):
            if r.returncode or f'mpp: PE {i} of 2: ok' not in r.stdout:
                problems.append(f'{name}: under oshrun -n 2: no "mpp: PE {i} of 2: ok" or status {r.returncode}')
    for p in problems:
        print('FAIL: ' + p)
    print('PASS' if not problems else '')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
