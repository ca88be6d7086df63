#!/usr/bin/env python3
"""check_meson_summary.py BUILDDIR - the summary `meson setup` printed for BUILDDIR tells what the build does.

Reads the last summary in BUILDDIR/meson-logs/meson-log.txt (no new configure) and checks it against build.ninja and
meson-info: sections Backends (cuda, hip, ofi, pmix: each "yes (...)" or "no (reason)"), GPU architectures and Build
(C compiler, buildtype, tests, man pages, install prefix); CUDA yes exactly when libshoal's gpu_kernels.o is built,
and then its architectures and PTX are the -gencode targets of gpu_kernels.o and of the collectives' library objects,
and "CUDA tests" is the -arch of tests/gpu's programs; HIP's targets are the --offload-arch of
libshoal_hip_kernels.so; ofi yes exactly when runtime/transport/ofi/ is compiled; prefix and buildtype are meson's options.
"""
import json
import os
import re
import sys


def summary(log):
    text = open(log, errors='replace').read()
    start = text.rfind('\n  Backends\n')
    if start < 0:
        return None
    sections, cur = {}, None
    for line in text[start + 1:].splitlines():
        if re.fullmatch(r'  \S.*', line):
            cur = sections.setdefault(line.strip(), {})
        elif cur is not None and re.fullmatch(r'    \S.*', line):
            k, _, v = line.strip().partition(':')
            cur[k.strip()] = v.strip()
        elif line.strip() and not line.startswith(' '):
            break
    return sections


def ninja_commands(build_ninja):
    """{first output: command ('' for the compiler rules)} of every edge in build.ninja."""
    out, edge = {}, None
    for line in open(build_ninja, errors='replace'):
        if line.startswith('build '):
            edge = line[6:].split(':')[0].split()[0].replace('$ ', ' ')
            out[edge] = ''
        elif edge and line.startswith(' COMMAND = '):
            out[edge] = line[len(' COMMAND = '):].strip()
    return out


def main():
    bdir = sys.argv[1]
    problems = []
    s = summary(os.path.join(bdir, 'meson-logs', 'meson-log.txt'))
    if s is None:
        print('FAIL: no summary (section "Backends") in meson-logs/meson-log.txt')
        return 1
    for sec, keys in (('Backends', ('cuda', 'hip', 'ofi', 'pmix')), ('GPU architectures', ()),
                      ('Build', ('C compiler', 'buildtype', 'tests', 'man pages', 'install prefix'))):
        for k in keys:
            v = s.get(sec, {}).get(k, '')
            if not v or (sec == 'Backends' and not re.fullmatch(r'(yes|no) \(.+\)', v)):
                problems.append(f'{sec}: {k}: {v!r} (expected a value{", yes (...) or no (why)" if sec == "Backends" else ""})')
    back, gpu, build = s.get('Backends', {}), s.get('GPU architectures', {}), s.get('Build', {})
    cmds = ninja_commands(os.path.join(bdir, 'build.ninja'))
    lib = cmds.get('device/gpu_kernels.o')
    if back.get('cuda', '').startswith('yes') != bool(lib):
        problems.append(f'cuda: summary says {back.get("cuda")!r}, build.ninja {"has" if lib else "has no"} gpu_kernels.o')
    if lib:
        m = re.fullmatch(r'((?:sm_\w+, )*sm_\w+) \+ PTX (compute_\w+) \(.+\)', gpu.get('CUDA libshoal', ''))
        if not m:
            problems.append(f'CUDA libshoal: {gpu.get("CUDA libshoal")!r} is not "sm_.., sm_.. + PTX compute_.. (why)"')
        else:
            want = (m.group(1).split(', '), [m.group(2)])
            for target in ('device/gpu_kernels.o', 'collectives/gpu/coll_gpu_cuda_lib.o',
                           'collectives/gpu/coll_gpu_reduce_cuda_lib.o'):
                c = cmds.get(target, '')
                got = (re.findall(r'code=(sm_\w+)', c), re.findall(r'code=(compute_\w+)', c))
                if got != want:
                    problems.append(f'{target}: built for {got}, the summary says {want}')
        exe = cmds.get('tests/gpu/gpu_ring')
        t = gpu.get('CUDA tests', '').split(' ')[0]
        got = re.findall(r'-arch=(sm_\w+)', exe or '')
        if exe is not None and got != [t]:
            problems.append(f'tests/gpu/gpu_ring: built for {got}, the summary says {t!r}')
    hip = cmds.get('device/libshoal_hip_kernels.so')
    if ('kernels by hipcc' in back.get('hip', '')) != bool(hip):
        problems.append(f'hip: summary says {back.get("hip")!r}, build.ninja {"has" if hip else "has no"} the kernels')
    if hip:
        want = gpu.get('HIP', '').split(' (')[0].split(', ')
        got = re.findall(r'--offload-arch=(\S+)', hip)
        if got != want:
            problems.append(f'libshoal_hip_kernels.so: built for {got}, the summary says {want}')
    ofi = any(k.endswith('transport_ofi_init.c.o') for k in cmds)  # runtime/transport/ofi/init.c
    if back.get('ofi', '').startswith('yes') != ofi:
        problems.append(f'ofi: summary says {back.get("ofi")!r}, runtime/transport/ofi/ {"is" if ofi else "is not"} built')
    opts = {o['name']: o['value'] for o in json.load(open(os.path.join(bdir, 'meson-info', 'intro-buildoptions.json')))}
    for k, o in (('install prefix', 'prefix'), ('buildtype', 'buildtype')):
        if build.get(k) != opts.get(o):
            problems.append(f'{k}: summary says {build.get(k)!r}, meson option {o} is {opts.get(o)!r}')
    for p in problems:
        print('FAIL: ' + p)
    print('PASS' if not problems else f'{len(problems)} problems')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
