#!/usr/bin/env python3
"""check_cxx.py OSHCXX OSHRUN SOURCE REJECT_SOURCE OUTDIR NPES... - oshc++ and shmem.h's C++ overloads.

The build-tree oshc++ and its aliases oshCC and oshcxx (links beside it) show one command with -lshoal; CXX=oshc++
and SHOAL_CXX=oshCC (the wrapper itself under another name) neither hang nor fail. SOURCE (a C++ program using the
generic names) is compiled with oshc++ -std=c++11 -Wall -Wextra -Werror, and run under oshrun at each PE count, where
it must print "cxx_generic: PE 0: N checks passed". Where cmake is installed, a CMake C++ project with CXX=oshc++
builds it too. REJECT_SOURCE (tests/p2p/generic_reject.c) compiled as C++: case 0 compiles, every other case (a type
outside the routine's table) fails with "no matching function", as the C11 forms fail with a _Generic error.
"""
import os
import re
import shutil
import signal
import subprocess
import sys

LIMIT = 120


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
    out = r.stdout + r.stderr
    print(f'$ {shown} {" ".join(cmd)}\n-> {r.returncode}\n{out[:3000]}')
    return r


def main():
    if len(sys.argv) < 7:
        print(__doc__)
        return 2
    oshcxx, oshrun, src, reject, outdir = [os.path.abspath(a) for a in sys.argv[1:6]]
    npes = sys.argv[6:]
    os.makedirs(outdir, exist_ok=True)
    problems, exes = [], []
    show = run([oshcxx, '-show', 'x.cpp']).stdout.strip()
    if '-lshoal' not in show.split() or 'x.cpp' not in show.split():
        problems.append(f'oshc++ -show: expected a command with x.cpp and -lshoal, got "{show}"')
    for alias in ('oshCC', 'oshcxx'):
        a = os.path.join(os.path.dirname(oshcxx), alias)
        got = run([a, '-show', 'x.cpp']).stdout.strip() if os.access(a, os.X_OK) else None
        if got != show:
            problems.append(f'{alias}: expected the command of oshc++ ("{show}"), got "{got}"')

    flags = ['-std=c++11', '-O1', '-Wall', '-Wextra', '-Werror']
    for name, env in (('cxx_generic', {}), ('cxx_generic_cxx_env', {'CXX': oshcxx}),
                      ('cxx_generic_self', {'SHOAL_CXX': os.path.join(os.path.dirname(oshcxx), 'oshCC')})):
        exe = os.path.join(outdir, name)
        if os.path.exists(exe):
            os.unlink(exe)
        r = run([oshcxx] + flags + [src, '-o', exe], env=env)
        if r.returncode == 124:
            problems.append(f'{name}: oshc++ with {env} did not finish (the wrapper runs itself?)')
        elif r.returncode:
            problems.append(f'{name}: oshc++ {" ".join(flags)} {os.path.basename(src)} with {env} failed')
        else:
            exes.append(exe)
    cmake = shutil.which('cmake')
    if not cmake:
        print('cmake not installed: the CMake part is skipped')
    else:
        proj, bld = os.path.join(outdir, 'cmake-src'), os.path.join(outdir, 'cmake-build')
        shutil.rmtree(bld, ignore_errors=True)
        os.makedirs(proj, exist_ok=True)
        with open(os.path.join(proj, 'CMakeLists.txt'), 'w') as f:
            f.write(f'cmake_minimum_required(VERSION 3.10)\nproject(shoal_cxx CXX)\nset(CMAKE_CXX_STANDARD 11)\n'
                    f'add_executable(cxx_generic {src})\n')
        if run([cmake, '-S', proj, '-B', bld], env={'CXX': oshcxx}).returncode or \
                run([cmake, '--build', bld]).returncode:
            problems.append('cmake with CXX=oshc++: configuring or building failed')
        else:
            exes.append(os.path.join(bld, 'cxx_generic'))

    for exe in exes:
        for n in npes:
            r = run([oshrun, '-n', n, '--timeout', '60', exe])
            if r.returncode or not re.search(r'^cxx_generic: PE 0: [0-9]+ checks passed$', r.stdout, re.M) \
                    or f'generic names as C++ overloads on {n} PEs' not in r.stdout:
                problems.append(f'{exe} under oshrun -n {n}: status {r.returncode}, no "checks passed"')

    cases = sorted({int(c) for c in re.findall(r'#elif CASE == ([0-9]+)', open(reject).read())} | {0})
    for c in cases:
        r = run([oshcxx, '-x', 'c++', '-std=c++11', '-Wall', '-Werror', '-fsyntax-only', f'-DCASE={c}', reject])
        if c == 0 and r.returncode:
            problems.append('generic_reject.c case 0 (the control) does not compile as C++')
        elif c and (r.returncode == 0 or 'no matching function' not in r.stderr):
            problems.append(f'generic_reject.c case {c} as C++: expected an error "no matching function"')
    for p in problems:
        print('FAIL: ' + p)
    print('PASS' if not problems else '')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
