#!/usr/bin/env python3
"""check_oshcc.py OSHCC OSHRUN SOURCE OUTDIR - the build-tree oshcc wrapper works.

`oshcc -show` prints a compile-and-link command with -I<include dir> and -lshoal; `oshcc -show -c` has no -lshoal;
`oshcc SOURCE -o OUTDIR/...` builds a program (also in two steps, -c then link) that runs under `oshrun -n 2` and
prints "hello from PE i of 2" on both PEs.
"""
import os
import re
import subprocess
import sys


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    print(f'$ {" ".join(cmd)}\n-> {r.returncode}\n{r.stdout}{r.stderr}')
    return r


def main():
    if len(sys.argv) != 5:
        print(__doc__)
        return 2
    oshcc, oshrun, src, outdir = sys.argv[1:]
    os.makedirs(outdir, exist_ok=True)
    problems = []
    show = run([oshcc, '-show', '-O2', src, '-o', 'x'])
    if show.returncode or '-lshoal' not in show.stdout.split() or not re.search(r'-I\S+include', show.stdout) \
            or src not in show.stdout:
        problems.append('oshcc -show does not print a command with the source, -I.../include and -lshoal')
    showc = run([oshcc, '-show', '-c', src])
    if showc.returncode or '-lshoal' in showc.stdout:
        problems.append('oshcc -show -c prints link flags')
    exe = os.path.join(outdir, 'hello_oshcc')
    obj = os.path.join(outdir, 'hello_oshcc2.o')
    exe2 = os.path.join(outdir, 'hello_oshcc2')
    for f in (exe, obj, exe2):
        if os.path.exists(f):
            os.unlink(f)
    if run([oshcc, '-O2', '-Wall', '-o', exe, src]).returncode or not os.access(exe, os.X_OK):
        problems.append('oshcc could not compile and link ' + src)
    if run([oshcc, '-c', '-o', obj, src]).returncode or run([oshcc, '-o', exe2, obj]).returncode:
        problems.append('oshcc -c, then oshcc to link, failed')
    for e in (exe, exe2):
        if not os.access(e, os.X_OK):
            continue
        r = run([oshrun, '-n', '2', '--timeout', '60', e])
        for i in range(2):
            if r.returncode or f'hello from PE {i} of 2' not in r.stdout:
                problems.append(f'{e} under oshrun -n 2: no "hello from PE {i} of 2" or non-zero status')
    for p in problems:
        print('FAIL: ' + p)
    print('PASS' if not problems else '')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
