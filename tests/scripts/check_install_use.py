#!/usr/bin/env python3
"""check_install_use.py MESON BUILDDIR PREFIX OUTDIR VERSION CUDA CC CXX - a user's own build against an install.

Installs BUILDDIR into OUTDIR/dest (DESTDIR) and builds a small program that puts a value into the next PE and
prints what it received, against that installed tree alone, the two ways other build systems use:
- pkg-config: `CC use.c $(pkg-config --define-variable=prefix=DEST+PREFIX --cflags --libs shoal)` with
  PKG_CONFIG_PATH at the installed pkgconfig folder (the documented relocation); --cflags must be Shoal's include
  directory alone (no PMIx, hwloc, libfabric or CUDA path), --libs carry -Wl,-rpath to the installed libdir, and
  --static --libs name no absolute path (a hard-coded libcudart_static.a was there);
- CMake: a CMakeLists.txt with find_package(shoal 0.1 REQUIRED) (CMAKE_PREFIX_PATH=DEST+PREFIX) and
  target_link_libraries(... shoal::shoal) builds use.c and use.cpp (C++: the shmem_p overload), use.c run as
  `cmake --install` puts it (CMake rewrites rpaths there), use.cpp from the build tree; shoal_VERSION must be
  VERSION, find_package(shoal 99) must fail (the version file), and COMPONENTS device must be found exactly when CUDA
  is "yes" (Shoal built with CUDA).
Each program runs under the installed oshrun at 2 PEs with LD_LIBRARY_PATH unset: each PE must print the value the
previous PE put (1000 + its rank) and the libshoal it loaded (from /proc/self/maps) must be the installed one.
Exit 77 when cmake or pkg-config is missing (scripts/install-deps.sh installs both).
"""
import glob
import os
import re
import shutil
import subprocess
import sys

USE_C = r'''/* use.c: what a user builds against an installed Shoal (check_install_use.py). */
#include <shmem.h>
#include <stdio.h>
#include <string.h>

/* The libshoal this process loaded, from its memory map (not from the loader's search rules). */
static void libshoal_path(char *out, size_t n) {
  char line[4096];
  FILE *f = fopen("/proc/self/maps", "r");
  snprintf(out, n, "none");
  while (f && fgets(line, sizeof line, f)) {
    char *p = strchr(line, '/');
    if (p && strstr(p, "/libshoal.so")) {
      p[strcspn(p, "\n")] = 0;
      snprintf(out, n, "%s", p);
      break;
    }
  }
  if (f) fclose(f);
}

int main(void) {
  static int got = -1;
  char lib[4096];
  shmem_init();
  int me = shmem_my_pe(), n = shmem_n_pes(), v = 1000 + me;
  PUT;
  shmem_barrier_all();
  libshoal_path(lib, sizeof lib);
  printf("use-" LANG ": PE %d of %d got %d, libshoal %s\n", me, n, got, lib);
  shmem_finalize();
  return 0;
}
'''

CMAKELISTS = '''cmake_minimum_required(VERSION 3.13)
project(shoal_use C CXX)
find_package(shoal 99 QUIET)
set(too_new "${shoal_FOUND}")
find_package(shoal QUIET COMPONENTS device)
set(device "${shoal_FOUND}")
find_package(shoal 0.1 REQUIRED)
message(STATUS "use: shoal_VERSION=${shoal_VERSION} shoal99=${too_new} device=${device}")
add_executable(use_c use.c)
target_link_libraries(use_c PRIVATE shoal::shoal)
add_executable(use_cxx use.cpp)
target_link_libraries(use_cxx PRIVATE shoal::shoal)
install(TARGETS use_c)
'''


def run(cmd, env=None, cwd=None, timeout=120):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout)
    print(f'$ {" ".join(cmd)}\n-> {r.returncode}\n{r.stdout[-3000:]}{r.stderr[-3000:]}')
    return r


def main():
    if len(sys.argv) != 9:
        print(__doc__)
        return 2
    meson, build, prefix, outdir, version, cuda, cc, cxx = sys.argv[1:9]
    cmake, pkgconfig = shutil.which('cmake'), shutil.which('pkg-config')
    if not cmake or not pkgconfig:
        print(f'SKIP: cmake ({cmake}) and pkg-config ({pkgconfig}) are needed (scripts/install-deps.sh)')
        return 77
    outdir = os.path.abspath(outdir)
    dest = os.path.join(outdir, 'dest')
    shutil.rmtree(outdir, ignore_errors=True)
    os.makedirs(outdir)
    if run([meson, 'install', '-C', build, '--no-rebuild', '--quiet'], env=dict(os.environ, DESTDIR=dest)).returncode:
        print('FAIL: meson install failed')
        return 1
    root = dest + prefix
    problems = []
    libso = glob.glob(os.path.join(root, 'lib*', '**', 'libshoal.so'), recursive=True)
    pcs = glob.glob(os.path.join(root, '**', 'pkgconfig', 'shoal.pc'), recursive=True)
    oshrun = os.path.join(root, 'bin', 'oshrun')
    if not libso or not pcs or not os.access(oshrun, os.X_OK):
        print(f'FAIL: the install lacks libshoal.so ({libso}), shoal.pc ({pcs}) or bin/oshrun')
        return 1
    libdir = os.path.realpath(os.path.dirname(libso[0]))
    # No LD_LIBRARY_PATH anywhere: the programs must find libshoal by their rpath alone.
    env = {k: v for k, v in os.environ.items() if k not in ('LD_LIBRARY_PATH', 'PKG_CONFIG_SYSROOT_DIR')}
    srcdir = os.path.join(outdir, 'src')
    os.makedirs(srcdir)
    with open(os.path.join(srcdir, 'use.c'), 'w') as f:
        f.write(USE_C.replace('PUT', 'shmem_int_put(&got, &v, 1, (me + 1) % n)').replace('LANG', '"c"'))
    with open(os.path.join(srcdir, 'use.cpp'), 'w') as f:
        f.write(USE_C.replace('PUT', 'shmem_p(&got, v, (me + 1) % n)').replace('LANG', '"cxx"'))
    with open(os.path.join(srcdir, 'CMakeLists.txt'), 'w') as f:
        f.write(CMAKELISTS)

    # (a) pkg-config, relocated to the DESTDIR tree by --define-variable=prefix (as docs/porting.md says).
    pc_env = dict(env, PKG_CONFIG_PATH=os.path.dirname(pcs[0]))
    pc = [pkgconfig, '--define-variable=prefix=' + root]
    cflags = run(pc + ['--cflags', 'shoal'], env=pc_env).stdout.split()
    if cflags != ['-I' + os.path.join(root, 'include')]:
        problems.append(f'pkg-config --cflags shoal: expected only -I{root}/include, got {cflags}')
    libs = run(pc + ['--libs', 'shoal'], env=pc_env).stdout.split()
    if '-lshoal' not in libs or not any(a.startswith('-Wl,-rpath,') and os.path.realpath(a[11:]) == libdir
                                        for a in libs):
        problems.append(f'pkg-config --libs shoal: expected -lshoal and -Wl,-rpath,{libdir}, got {libs}')
    static = run(pc + ['--static', '--libs', 'shoal'], env=pc_env).stdout.split()
    odd = [a for a in static if a.endswith('.a') or (a.startswith('/') or a.startswith('-L/')) and root not in a]
    if odd:
        problems.append(f'pkg-config --static --libs shoal names absolute paths outside Shoal\'s: {odd}')
    exes = []
    exe = os.path.join(outdir, 'use_pkgconfig')
    if run(cc.split() + ['-std=c11', '-Wall', '-Werror', os.path.join(srcdir, 'use.c'), '-o', exe] + cflags + libs,
           env=env).returncode:
        problems.append(f'{cc} use.c $(pkg-config --cflags --libs shoal) does not build')
    else:
        exes.append(('c', 'pkg-config', exe))

    # (b) CMake: find_package(shoal) from CMAKE_PREFIX_PATH, targets shoal::shoal.
    bdir = os.path.join(outdir, 'cmake-build')
    gen = ['-G', 'Ninja'] if shutil.which('ninja') else []
    r = run([cmake, '-S', srcdir, '-B', bdir] + gen +
            ['-DCMAKE_PREFIX_PATH=' + root, '-DCMAKE_C_COMPILER=' + cc.split()[0],
             '-DCMAKE_CXX_COMPILER=' + cxx.split()[0]], env=env)
    m = re.search(r'use: shoal_VERSION=(\S*) shoal99=(\S*) device=(\S*)', r.stdout)
    if r.returncode or not m:
        problems.append('cmake: find_package(shoal 0.1 REQUIRED) failed')
    else:
        if m.group(1) != version:
            problems.append(f'find_package(shoal): shoal_VERSION is {m.group(1)!r}, expected {version}')
        if m.group(2) not in ('0', 'FALSE'):
            problems.append(f'find_package(shoal 99) found this {version} (shoal_FOUND={m.group(2)})')
        want_dev = cuda == 'yes'
        if (m.group(3) in ('1', 'TRUE')) != want_dev:
            problems.append(f'find_package(shoal COMPONENTS device): shoal_FOUND={m.group(3)}, expected '
                            f'{"found" if want_dev else "not found"} (CUDA {cuda})')
        appdir = os.path.join(outdir, 'app-install')
        if run([cmake, '--build', bdir], env=env, timeout=300).returncode:
            problems.append('cmake --build: use.c and use.cpp with shoal::shoal do not build')
        elif run([cmake, '--install', bdir, '--prefix', appdir], env=env).returncode:
            problems.append('cmake --install of the user\'s project failed')
        else:  # use_c as `cmake --install` left it (CMake rewrites the rpath there), use_cxx from the build tree
            exes += [('c', 'CMake (installed)', os.path.join(appdir, 'bin', 'use_c')),
                     ('cxx', 'CMake', os.path.join(bdir, 'use_cxx'))]

    for lang, how, exe in exes:
        r = run([oshrun, '-n', '2', '--timeout', '60', exe], env=env)
        got = {int(pe): (int(v), os.path.realpath(lib)) for pe, v, lib in
               re.findall(r'^use-' + lang + r': PE (\d) of 2 got (-?\d+), libshoal (\S+)$', r.stdout, re.M)}
        want = {pe: (1000 + (pe + 1) % 2, os.path.realpath(os.path.join(libdir, 'libshoal.so'))) for pe in (0, 1)}
        if r.returncode or got != want:
            problems.append(f'{how} {os.path.basename(exe)} under oshrun -n 2 without LD_LIBRARY_PATH: exit '
                            f'{r.returncode}, got {got}, expected {want}')
    for p in problems:
        print('FAIL: ' + p)
    print('PASS' if not problems else '')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
