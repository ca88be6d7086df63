#!/usr/bin/env python3
"""check_gpu_toolchain.py MESON BUILDDIR PREFIX OUTDIR NVCC CUOBJDUMP ARCHS SOURCE TESTARCH - a CUDA user's toolchain
(issues 14 and 32).

Installs BUILDDIR into OUTDIR/dest (DESTDIR) and, against that installed tree alone (the wrappers' PREFIX paths
pointed at DESTDIR + PREFIX, pkg-config's by --define-variable=prefix), checks:
- bin/oshnvcc is installed; its --showme:link is in nvcc's spelling (-Xlinker, no -Wl,), and so is oshcc's when
  SHOAL_CC=nvcc;
- SOURCE (a .cu calling the device API, no per-unit setup call) builds with oshnvcc, with SHOAL_CC=nvcc oshcc, in two
  steps (oshnvcc -c, then oshnvcc to link), with nvcc $(pkg-config --cflags --libs shoal-cuda) (Shoal's include
  directory alone, an rpath in nvcc's spelling), and with CMake: find_package(shoal REQUIRED COMPONENTS device),
  target_link_libraries(... shoal::device), project(... CUDA), CUDA_ARCHITECTURES of TESTARCH (sm_NN; when cmake is
  installed); each program runs without LD_LIBRARY_PATH (exit 0 with PASS lines on a GPU, 77 with a SKIP line
  without one);
- the usage comment at the top of the installed shoal/shmem_coll_device.cuh (its shmemx_*_block(SHMEM_TEAM_WORLD,
  ...) lines) compiles in a kernel, as written;
- libshoal.so holds a device ELF for every architecture of ARCHS (comma-separated: what meson built for), checked with
  CUOBJDUMP --list-elf, or, where cuobjdump is not installed (CUOBJDUMP is "none"), by reading the fatbinaries of its
  .nv_fatbin section here: each one (one per .cu compiled into the library) must hold every architecture.
"""
import glob
import os
import re
import shutil
import subprocess
import sys


def run(cmd, env=None, timeout=300):
    e = {k: v for k, v in os.environ.items() if k != 'LD_LIBRARY_PATH'}  # programs find libshoal by their rpath
    e.update(env or {})
    shown = ' '.join(f'{k}={v}' for k, v in (env or {}).items() if k != 'PATH')  # PATH: nvcc's folder first
    r = subprocess.run(cmd, capture_output=True, text=True, env=e, timeout=timeout)
    print(f'$ {shown} {" ".join(cmd)}\n-> {r.returncode}\n{r.stdout[-3000:]}{r.stderr[-3000:]}')
    return r


def fatbin_archs(lib, tmp):
    """Per fatbinary in lib's .nv_fatbin section: the set of sm_NN of its device ELF entries (kind 2)."""
    import struct
    raw = os.path.join(tmp, 'nv_fatbin.bin')
    if run(['objcopy', '-O', 'binary', '--only-section=.nv_fatbin', lib, raw]).returncode:
        return []
    with open(raw, 'rb') as f:
        d = f.read()
    found, off = [], 0
    while off + 16 <= len(d):
        magic, _, hsize, fsize = struct.unpack_from('<IHHQ', d, off)
        if magic != 0xBA55ED50:  # fatbinaries are 8-byte aligned in the section
            off += 8
            continue
        archs, e = set(), off + hsize
        while e + 32 <= off + hsize + fsize:
            kind, _, ehsize, size = struct.unpack_from('<HHIQ', d, e)
            if kind == 2:
                archs.add('sm_%d' % struct.unpack_from('<I', d, e + 28)[0])
            e += ehsize + size
        found.append(archs)
        off += hsize + fsize
    return found


def relocated(path, prefix, root, out):
    """A copy of the installed wrapper at path whose PREFIX paths are under root (DESTDIR + PREFIX)."""
    with open(path) as f:
        text = f.read()
    text = re.sub(r'(incdirs|libdir)="' + re.escape(prefix), lambda m: m.group(0)[:-len(prefix)] + root, text)
    with open(out, 'w') as f:
        f.write(text)
    os.chmod(out, 0o755)
    return out


def main():
    if len(sys.argv) != 10:
        print(__doc__)
        return 2
    meson, build, prefix, outdir, nvcc, cuobjdump, archs, source, test_arch = sys.argv[1:10]
    outdir = os.path.abspath(outdir)
    dest = os.path.join(outdir, 'dest')
    shutil.rmtree(dest, ignore_errors=True)
    os.makedirs(outdir, exist_ok=True)
    problems = []
    if run([meson, 'install', '-C', build, '--no-rebuild', '--quiet'], env={'DESTDIR': dest}).returncode:
        print('FAIL: meson install failed')
        return 1
    root = dest + prefix
    inc = os.path.join(root, 'include')
    libso = glob.glob(os.path.join(root, 'lib*', '**', 'libshoal.so'), recursive=True)
    if not libso:
        print('FAIL: libshoal.so is not installed')
        return 1
    libdir = os.path.dirname(libso[0])
    nvcc_dir = os.path.dirname(os.path.abspath(nvcc))
    env = {'PATH': nvcc_dir + os.pathsep + os.environ.get('PATH', '')}

    wrappers = {}
    for w in ('oshnvcc', 'oshcc'):
        path = os.path.join(root, 'bin', w)
        if not os.access(path, os.X_OK):
            problems.append(f'bin/{w} is not installed')
            continue
        wrappers[w] = relocated(path, prefix, root, os.path.join(outdir, w))
    if len(wrappers) < 2:
        for p in problems:
            print('FAIL: ' + p)
        return 1
    for name, cmd, e in (('oshnvcc', [wrappers['oshnvcc']], {}), ('SHOAL_CC=nvcc oshcc', [wrappers['oshcc']],
                                                                   {'SHOAL_CC': nvcc})):
        link = run(cmd + ['--showme:link'], env=dict(env, **e)).stdout.split()
        if '-Xlinker' not in link or any(a.startswith('-Wl,') for a in link) or '-lshoal' not in link:
            problems.append(f'{name} --showme:link: expected -L... -Xlinker -rpath=... -lshoal, got {link}')

    def check_program(exe, what, extra_env=None):
        r = run([exe], env=dict(env, **(extra_env or {})), timeout=120)
        if r.returncode == 77 and re.search(r'^gpu_user: SKIP: no GPU$', r.stdout, re.M):
            return
        if r.returncode == 0 and re.search(r'^gpu_user: PE 0: PASS', r.stdout, re.M):
            return
        problems.append(f'{what}: the program exited {r.returncode} without a PASS or SKIP line')

    builds = [
        ('oshnvcc', [wrappers['oshnvcc'], '-O2', source, '-o', os.path.join(outdir, 'user_oshnvcc')], {}),
        ('SHOAL_CC=nvcc oshcc', [wrappers['oshcc'], '-O2', source, '-o', os.path.join(outdir, 'user_oshcc')],
         {'SHOAL_CC': nvcc}),
    ]
    for what, cmd, e in builds:
        if run(cmd, env=dict(env, **e)).returncode:
            problems.append(f'{what} does not build {os.path.basename(source)}')
        else:
            check_program(cmd[-1], what)
    obj = os.path.join(outdir, 'user.o')
    two = os.path.join(outdir, 'user_two_steps')
    if run([wrappers['oshnvcc'], '-c', source, '-o', obj], env=env).returncode or \
       run([wrappers['oshnvcc'], obj, '-o', two], env=env).returncode:
        problems.append('oshnvcc -c then oshnvcc (link) does not build the program')
    else:
        check_program(two, 'oshnvcc in two steps')

    # pkg-config: shoal-cuda.pc (nvcc refuses shoal.pc's -Wl,-rpath), moved to the DESTDIR tree as docs/porting.md
    # says; the program must run by its rpath (no LD_LIBRARY_PATH).
    pcdirs = [os.path.dirname(p) for p in glob.glob(os.path.join(root, '**', 'shoal-cuda.pc'), recursive=True)]
    if not pcdirs:
        problems.append('shoal-cuda.pc is not installed')
    else:
        pc = ['pkg-config', '--define-variable=prefix=' + root]
        pc_env = dict(env, PKG_CONFIG_PATH=pcdirs[0])
        cflags = run(pc + ['--cflags', 'shoal-cuda'], env=pc_env).stdout.split()
        if cflags != ['-I' + inc]:
            problems.append(f'pkg-config --cflags shoal-cuda: expected only -I{inc}, got {cflags}')
        r = run(pc + ['--libs', 'shoal-cuda'], env=pc_env)
        flags = r.stdout.split()
        exe = os.path.join(outdir, 'user_pkgconfig')
        if r.returncode or '-lshoal' not in flags or '-Xlinker=-rpath=' + libdir not in flags:
            problems.append(f'pkg-config --libs shoal-cuda: expected -lshoal, -Xlinker=-rpath={libdir}: {flags}')
        elif run([nvcc, '-O2', source, '-o', exe] + cflags + flags, env=env).returncode:
            problems.append(f'nvcc does not accept the flags of pkg-config --cflags --libs shoal-cuda: {flags}')
        else:
            check_program(exe, 'nvcc with pkg-config flags')

    # CMake: a CUDA project with shoal::device, found under DESTDIR + PREFIX.
    cmake = shutil.which('cmake')
    if not cmake:
        print('no cmake: the CMake build with shoal::device is not checked (scripts/install-deps.sh installs it)')
    else:
        src = os.path.join(outdir, 'cmake-src')
        os.makedirs(src, exist_ok=True)
        shutil.copy(source, os.path.join(src, 'gpu_user.cu'))
        with open(os.path.join(src, 'CMakeLists.txt'), 'w') as f:
            f.write('cmake_minimum_required(VERSION 3.18)\nproject(gpu_user CUDA)\n'
                    'find_package(shoal REQUIRED COMPONENTS device)\nadd_executable(gpu_user gpu_user.cu)\n'
                    f'set_target_properties(gpu_user PROPERTIES CUDA_ARCHITECTURES {test_arch[3:]})\n'
                    'target_link_libraries(gpu_user PRIVATE shoal::device)\n')
        bdir = os.path.join(outdir, 'cmake-build')
        gen = ['-G', 'Ninja'] if shutil.which('ninja') else []
        if run([cmake, '-S', src, '-B', bdir] + gen + ['-DCMAKE_PREFIX_PATH=' + root,
                                                        '-DCMAKE_CUDA_COMPILER=' + nvcc], env=env).returncode:
            problems.append('cmake: a CUDA project with find_package(shoal REQUIRED COMPONENTS device) does not configure')
        elif run([cmake, '--build', bdir], env=env).returncode:
            problems.append('cmake --build: gpu_user.cu with shoal::device does not build')
        else:
            check_program(os.path.join(bdir, 'gpu_user'), 'CMake with shoal::device')

    # The installed collectives header's usage comment, as written.
    hdr = os.path.join(inc, 'shoal', 'shmem_coll_device.cuh')
    with open(hdr) as f:
        comment = f.read().split('*/', 1)[0]
    usage = [ln.lstrip(' *').strip() for ln in comment.splitlines()
             if re.search(r'shmemx_\w+_block\(SHMEM_TEAM_WORLD', ln)]
    if len(usage) < 2:
        problems.append(f'the usage comment of shoal/shmem_coll_device.cuh has no shmemx_*_block lines: {usage}')
    else:
        src = os.path.join(outdir, 'coll_usage.cu')
        with open(src, 'w') as f:
            f.write('#include <shoal/shmem_coll_device.cuh>\n'
                    '__global__ void k(void *dest, const void *source, size_t nelems) {\n  ' + '\n  '.join(usage) +
                    '\n}\n')
        if run([wrappers['oshnvcc'], '-c', src, '-o', os.path.join(outdir, 'coll_usage.o')], env=env).returncode:
            problems.append('the usage comment of shoal/shmem_coll_device.cuh does not compile: ' + ' '.join(usage))

    want = [a for a in archs.split(',') if a]
    if cuobjdump != 'none':
        r = run([cuobjdump, '--list-elf', libso[0]])
        per = [set(re.findall(r'\.(sm_\d+a?)\.cubin', r.stdout))]
    else:
        per = fatbin_archs(libso[0], outdir)
        print(f'fatbinaries of libshoal.so (no cuobjdump here): {[sorted(a) for a in per]}')
    if not per:
        problems.append('libshoal.so holds no device code')
    for i, have in enumerate(per):
        for a in want:
            if a not in have:
                problems.append(f'libshoal.so: fatbinary {i} has no device code for {a} (it has {sorted(have)})')
    for p in problems:
        print('FAIL: ' + p)
    print('PASS' if not problems else '')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
