#!/usr/bin/env python3
"""check_install.py MESON BUILDDIR PREFIX OUTDIR CC [CXX] - what `meson install` puts in place for users.

Installs BUILDDIR into OUTDIR/dest (DESTDIR) and checks: bin/oshcc and bin/oshc++ are executable, bin/oshCC and
bin/oshcxx are links to oshc++; the installed wrappers' --showme:compile names PREFIX's include directory; lib/ holds
libshoal.so and libshoal.a; include/ holds pshmem.h, mpp/shmem.h, mpp/shmemx.h and shoal/shmem_cxx.h, and a source
including <pshmem.h>, <mpp/shmem.h> and <mpp/shmemx.h> compiles against the installed headers alone (with CC, and
with CXX when given: the C++ overloads too); bin/shoal-info is installed; with CHECK_INSTALL_MAN=1, `man -M
PREFIX/share/man` shows Shoal's pages for shmem_int_put, shmem_put, oshrun, shoal-info, shoal-env.
"""
import glob
import os
import shutil
import subprocess
import sys


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    print(f'$ {" ".join(cmd)}\n-> {r.returncode}\n{r.stdout[-2000:]}{r.stderr[-2000:]}')
    return r


def main():
    if len(sys.argv) not in (6, 7):
        print(__doc__)
        return 2
    meson, build, prefix, outdir = sys.argv[1:5]
    compilers = sys.argv[5:]
    dest = os.path.join(os.path.abspath(outdir), 'dest')
    shutil.rmtree(dest, ignore_errors=True)
    problems = []
    env = dict(os.environ, DESTDIR=dest)
    if run([meson, 'install', '-C', build, '--no-rebuild', '--quiet'], env=env).returncode:
        print('FAIL: meson install failed')
        return 1
    root = dest + prefix
    b, inc = os.path.join(root, 'bin'), os.path.join(root, 'include')
    for w in ('oshcc', 'oshc++'):
        path = os.path.join(b, w)
        if not os.access(path, os.X_OK):
            problems.append(f'bin/{w} is not installed or not executable')
            continue
        flags = run([path, '--showme:compile']).stdout.split()
        if flags != ['-I' + os.path.join(prefix, 'include')]:
            problems.append(f'bin/{w} --showme:compile: expected -I{prefix}/include, got {flags}')
    for alias in ('oshCC', 'oshcxx'):
        path = os.path.join(b, alias)
        if not os.path.islink(path) or os.readlink(path) != 'oshc++':
            problems.append(f'bin/{alias}: expected a link to oshc++')
    libs = [os.path.basename(p) for p in glob.glob(os.path.join(root, 'lib*', '**', 'libshoal.*'), recursive=True)]
    for want in ('libshoal.so', 'libshoal.a'):
        if want not in libs:
            problems.append(f'{want} is not installed (found {libs})')
    for h in ('shmem.h', 'shmemx.h', 'pshmem.h', 'mpp/shmem.h', 'mpp/shmemx.h', 'shoal/shmem_cxx.h'):
        if not os.path.isfile(os.path.join(inc, h)):
            problems.append(f'include/{h} is not installed')
    src = os.path.join(outdir, 'installed_headers.c')
    with open(src, 'w') as f:
        f.write('#include <pshmem.h>\n#include <mpp/shmem.h>\n#include <mpp/shmemx.h>\n'
                'int main(void) {\n  static long x;\n  pshmem_init();\n  shmem_pcontrol(1);\n'
                '  pshmem_long_p(&x, 1, 0);\n  shmem_long_p(&x, 2, shmemx_local_pe());\n  return 0;\n}\n')
    for i, c in enumerate(compilers):
        lang = ['-x', 'c++', '-std=c++11'] if i == 1 else ['-std=c11']
        if run(c.split() + lang + ['-Wall', '-Werror', '-fsyntax-only', '-I' + inc, src]).returncode:
            problems.append(f'{c}: a source including <pshmem.h> and <mpp/...> does not compile against {inc}')
    if len(compilers) == 2:
        cxx = os.path.join(outdir, 'installed_overloads.cpp')
        with open(cxx, 'w') as f:
            f.write('#include <shmem.h>\nint main() {\n  static long x;\n  shmem_p(&x, 1L, 0);\n'
                    '  return (int)shmem_atomic_fetch_add(&x, 1L, 0);\n}\n')
        flags = ['-std=c++11', '-Wall', '-Werror', '-fsyntax-only', '-I' + inc]
        if run(compilers[1].split() + flags + [cxx]).returncode:
            problems.append('the installed <shmem.h> does not give the C++ overloads shmem_p, shmem_atomic_fetch_add')
    if not os.access(os.path.join(b, 'shoal-info'), os.X_OK):
        problems.append('bin/shoal-info is not installed or not executable')
    # The manual (when the build had pandoc: CHECK_INSTALL_MAN=1): man finds Shoal's pages under the prefix.
    if os.environ.get('CHECK_INSTALL_MAN') == '1':
        mandir = os.path.join(root, 'share', 'man')
        for name, want in (('shmem_int_put', 'shmem_put'), ('shmem_put', 'shmem_put'), ('oshrun', 'oshrun'),
                           ('shoal-info', 'shoal-info'), ('shoal-env', 'shoal-env'), ('shmem_int_atomic_fetch_add',
                                                                                       'shmem_atomic')):
            r = run(['man', '-M', mandir, '-P', 'cat', name], env=dict(os.environ, MANWIDTH='100', MAN_KEEP_FORMATTING='0'))
            head = r.stdout.lstrip().split('\n', 1)[0].replace('\u2010', '-')
            if r.returncode or want.upper() not in head.upper() or 'Shoal' not in r.stdout:
                problems.append(f'man -M {mandir} {name}: expected Shoal\'s {want} page, got {r.returncode} {head!r}')
    for p in problems:
        print('FAIL: ' + p)
    print('PASS' if not problems else '')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
