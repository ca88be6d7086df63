#!/usr/bin/env python3
"""check_oshcc.py OSHCC OSHRUN SOURCE OUTDIR - the build-tree oshcc wrapper works, also as CC of a build system.

`oshcc -show` prints a compile-and-link command with -I<include dir> and -lshoal; `oshcc -show -c` has no -lshoal;
`--showme:compile` prints only the -I flags, `--showme:link` and `-showlibs` only the link flags, and a program built
from those two halves runs. `oshcc SOURCE -o OUTDIR/...` builds a program (also in two steps, -c then link) that runs
under `oshrun -n 2` and prints "hello from PE i of 2" on both PEs.

The build-system idioms that set CC to the wrapper must neither hang nor fail: `CC=oshcc oshcc ...` (CC is not read),
`SHOAL_CC=oshcc oshcc ...` (the wrapper itself: the configured compiler is used), a configure-style script that runs
`$CC conftest.c` with CC=oshcc exported, and, where cmake is installed, a CMake project configured with CC=oshcc.
SHOAL_CC names the compiler (checked with a flag that the source needs).
"""
import os
import re
import shutil
import signal
import subprocess
import sys

LIMIT = 60  # seconds: a wrapper that runs itself never finishes


def run(cmd, env=None, cwd=None, timeout=LIMIT):
    e = dict(os.environ)
    e.update(env or {})
    shown = ' '.join(f'{k}={v}' for k, v in (env or {}).items())
    # A session of its own: a wrapper that runs itself forever is killed with everything it started.
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=e, cwd=cwd,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        print(f'$ {shown} {" ".join(cmd)}\n-> still running after {timeout} s (killed)')
        return subprocess.CompletedProcess(cmd, 124, '', 'timeout')
    r = subprocess.CompletedProcess(cmd, p.returncode, out, err)
    print(f'$ {shown} {" ".join(cmd)}\n-> {r.returncode}\n{r.stdout}{r.stderr}')
    return r


def main():
    if len(sys.argv) != 5:
        print(__doc__)
        return 2
    oshcc, oshrun, src, outdir = [os.path.abspath(a) for a in sys.argv[1:]]
    os.makedirs(outdir, exist_ok=True)
    problems = []

    def built(exe, what, r):
        if r.returncode == 124:
            problems.append(f'{what}: did not finish within {LIMIT} s (the wrapper runs itself?)')
        elif r.returncode or not os.access(exe, os.X_OK):
            problems.append(f'{what}: failed (status {r.returncode})')
        else:
            runs.append((exe, what))

    show = run([oshcc, '-show', '-O2', src, '-o', 'x'])
    if show.returncode or '-lshoal' not in show.stdout.split() or not re.search(r'-I\S+include', show.stdout) \
            or src not in show.stdout:
        problems.append('oshcc -show does not print a command with the source, -I.../include and -lshoal')
    showc = run([oshcc, '-show', '-c', src])
    if showc.returncode or '-lshoal' in showc.stdout:
        problems.append('oshcc -show -c prints link flags')
    comp = run([oshcc, '--showme:compile']).stdout.split()
    link = run([oshcc, '--showme:link']).stdout.split()
    libs = run([oshcc, '-showlibs']).stdout.split()
    cmd = run([oshcc, '--showme:command']).stdout.split()
    if not comp or not all(f.startswith('-I') for f in comp):
        problems.append(f'--showme:compile: expected only -I flags, got {comp}')
    if '-lshoal' not in link or any(f.startswith('-I') for f in link):
        problems.append(f'--showme:link: expected the link flags with -lshoal and no -I, got {link}')
    if libs != link:
        problems.append(f'-showlibs: expected the same flags as --showme:link {link}, got {libs}')
    if run([oshcc, '--showme:nonsense']).returncode != 1:
        problems.append('--showme:nonsense: expected status 1')

    runs = []
    for f in os.listdir(outdir):  # programs of an earlier run must not pass for this one's
        if os.path.isfile(os.path.join(outdir, f)):
            os.unlink(os.path.join(outdir, f))
    exe = os.path.join(outdir, 'hello_oshcc')
    built(exe, 'oshcc -O2 -Wall -o hello_oshcc', run([oshcc, '-O2', '-Wall', '-o', exe, src]))
    obj, exe2 = os.path.join(outdir, 'hello_oshcc2.o'), os.path.join(outdir, 'hello_oshcc2')
    if run([oshcc, '-c', '-o', obj, src]).returncode:
        problems.append('oshcc -c failed')
    else:
        built(exe2, 'oshcc -c, then oshcc to link', run([oshcc, '-o', exe2, obj]))
    if cmd and comp and link:
        obj3, exe3 = os.path.join(outdir, 'hello_halves.o'), os.path.join(outdir, 'hello_halves')
        if run(cmd + comp + ['-c', src, '-o', obj3]).returncode:
            problems.append('compiling with --showme:command and --showme:compile failed')
        else:
            built(exe3, 'linking with --showme:link', run(cmd + [obj3, '-o', exe3] + link))

    # The idioms of build systems: CC is the wrapper.
    exe4 = os.path.join(outdir, 'hello_cc_env')
    built(exe4, 'CC=oshcc oshcc', run([oshcc, src, '-o', exe4], env={'CC': oshcc}))
    exe5 = os.path.join(outdir, 'hello_shoal_cc_self')
    built(exe5, 'SHOAL_CC=oshcc oshcc', run([oshcc, src, '-o', exe5], env={'SHOAL_CC': oshcc, 'CC': oshcc}))
    exe6 = os.path.join(outdir, 'hello_cc_false')
    built(exe6, 'CC=false oshcc (CC is not read)', run([oshcc, src, '-o', exe6], env={'CC': 'false'}))
    # SHOAL_CC is the compiler: a source that needs its flag builds with it and not without it.
    marked = os.path.join(outdir, 'marked.c')
    with open(marked, 'w') as f:
        f.write('#ifndef SHOAL_TEST_MARK\n#error SHOAL_CC was not used\n#endif\n#include <shmem.h>\n'
                'int main(void) { return 0; }\n')
    real_cc = ' '.join(cmd) if cmd else 'cc'
    if run([oshcc, '-c', marked, '-o', marked + '.o'], env={'SHOAL_CC': real_cc + ' -DSHOAL_TEST_MARK=1'}).returncode:
        problems.append('SHOAL_CC="<cc> -DSHOAL_TEST_MARK=1": not used as the compiler')
    if run([oshcc, '-c', marked, '-o', marked + '.o'], env={'CC': real_cc + ' -DSHOAL_TEST_MARK=1'}).returncode == 0:
        problems.append('CC="<cc> -DSHOAL_TEST_MARK=1": used as the compiler (CC must not be read)')
    # A configure-style check: the script runs "$CC conftest.c" with CC=oshcc in its environment.
    conf = os.path.join(outdir, 'configure-like')
    os.makedirs(conf, exist_ok=True)
    with open(os.path.join(conf, 'configure'), 'w') as f:
        f.write('#!/bin/sh\nprintf "checking whether the C compiler works... "\n'
                'printf "#include <shmem.h>\\nint main(void) { shmem_init(); shmem_finalize(); return 0; }\\n" '
                '> conftest.c\n$CC $CFLAGS conftest.c -o conftest && ./conftest && echo yes || { echo no; exit 1; }\n'
                f'$CC $CFLAGS {src} -o hello\n')
    r = run(['sh', './configure'], env={'CC': oshcc, 'CFLAGS': '-O1'}, cwd=conf)
    if r.returncode == 124 or 'whether the C compiler works... yes' not in r.stdout:
        problems.append('configure-style check with CC=oshcc: expected "checking whether the C compiler works... yes"')
    else:
        built(os.path.join(conf, 'hello'), 'configure-style CC=oshcc', r)
    # CMake with CC=oshcc (it hung at "Detecting C compiler ABI info" when oshcc ran $CC).
    cmake = shutil.which('cmake')
    if not cmake:
        print('cmake not installed: the CMake part is skipped')
    else:
        proj, bld = os.path.join(outdir, 'cmake-src'), os.path.join(outdir, 'cmake-build')
        shutil.rmtree(bld, ignore_errors=True)
        os.makedirs(proj, exist_ok=True)
        with open(os.path.join(proj, 'CMakeLists.txt'), 'w') as f:
            f.write(f'cmake_minimum_required(VERSION 3.10)\nproject(shoal_cc C)\nadd_executable(hello {src})\n')
        r = run([cmake, '-S', proj, '-B', bld], env={'CC': oshcc}, timeout=120)
        if r.returncode or 'Detecting C compiler ABI info - done' not in r.stdout:
            problems.append('cmake with CC=oshcc: configuring failed or did not detect the compiler ABI')
        else:
            built(os.path.join(bld, 'hello'), 'cmake --build with CC=oshcc', run([cmake, '--build', bld]))

    for e, what in runs:
        r = run([oshrun, '-n', '2', '--timeout', '60', e])
        for i in range(2):
            if r.returncode or f'hello from PE {i} of 2' not in r.stdout:
                problems.append(f'{what}: under oshrun -n 2: no "hello from PE {i} of 2" or non-zero status')
    for p in problems:
        print('FAIL: ' + p)
    print('PASS' if not problems else '')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
