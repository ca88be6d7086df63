#!/usr/bin/env python3
"""check_exports.py LIBRARY MAPFILE [STATIC_LIBRARY] - the shared library exports only the OpenSHMEM API (design 3).

Every dynamic symbol that LIBRARY defines must be shmem_*, pshmem_*, shmemx_*, SHMEM_* or one of the names the
version script MAPFILE lists in its global section (the deprecated spellings); anything else (shoal_* internals,
helpers) fails. The profiling interface (spec 1.5 annex): every shmem_X routine has a pshmem_X at the same address
and no pshmem_ name lacks its shmem_ one; the shmem_ names are weak, in LIBRARY and in STATIC_LIBRARY (so that a
tool's definitions replace them in a static link too); no string of the library's read-only data (its error
messages) names a pshmem_ routine: messages name the routine the program called.
"""
import fnmatch
import re
import subprocess
import sys


def main():
    if len(sys.argv) not in (3, 4):
        print(__doc__)
        return 2
    lib, mapfile = sys.argv[1:3]
    text = re.sub(r'/\*.*?\*/', '', open(mapfile).read(), flags=re.S)
    m = re.search(r'global\s*:(.*?)(local\s*:|\})', text, re.S)
    allowed = ['shmem_*', 'pshmem_*', 'shmemx_*', 'SHMEM_*']
    if m:
        allowed += [w.strip() for w in m.group(1).split(';') if w.strip() and w.strip() not in allowed]
    r = subprocess.run(['nm', '-D', '--defined-only', lib], capture_output=True, text=True)
    if r.returncode:
        print(f'FAIL: nm {lib}: {r.stderr}')
        return 1
    syms = [ln.split()[-1].split('@')[0] for ln in r.stdout.splitlines() if ln.strip()]
    bad = sorted(s for s in syms if not any(fnmatch.fnmatchcase(s, p) for p in allowed))
    api = [s for s in syms if s.startswith('shmem_')]
    print(f'{lib}: {len(syms)} defined dynamic symbols, {len(api)} shmem_*; allowed patterns: {" ".join(allowed)}')
    if len(api) < 100 or 'shmem_init' not in syms or 'shmem_putmem' not in syms:
        print('FAIL: the API itself is missing from the exports')
        return 1
    if bad:
        print(f'FAIL: {len(bad)} symbols outside the API are exported: {" ".join(bad[:40])}')
        return 1
    problems = profiling(lib, r.stdout, sys.argv[3] if len(sys.argv) == 4 else None)
    for p in problems:
        print('FAIL: ' + p)
    if problems:
        return 1
    print('PASS')
    return 0


def table(nm_out):
    """name -> (address, type letter) of nm's defined symbols."""
    t = {}
    for ln in nm_out.splitlines():
        f = ln.split()
        if len(f) == 3:
            t[f[2].split('@')[0]] = (f[0], f[1])
    return t


def profiling(lib, nm_dynamic, static):
    problems = []
    syms = table(nm_dynamic)
    api = sorted(s for s in syms if s.startswith('shmem_'))
    prof = sorted(s for s in syms if s.startswith('pshmem_'))
    print(f'profiling interface: {len(api)} shmem_ routines, {len(prof)} pshmem_ routines')
    missing = [s for s in api if 'p' + s not in syms]
    orphans = [s for s in prof if s[1:] not in syms]
    apart = [s for s in api if 'p' + s in syms and syms[s][0] != syms['p' + s][0]]
    strong = [s for s in api if syms[s][1] not in 'WV']
    if missing:
        problems.append(f'{len(missing)} shmem_ routines have no pshmem_ name: {" ".join(missing[:20])}')
    if orphans:
        problems.append(f'{len(orphans)} pshmem_ names have no shmem_ routine: {" ".join(orphans[:20])}')
    if apart:
        problems.append(f'{len(apart)} shmem_ routines are not their pshmem_ code: {" ".join(apart[:20])}')
    if strong:
        problems.append(f'{len(strong)} shmem_ routines are not weak in {lib}: {" ".join(strong[:20])}')
    if 'shmem_pcontrol' not in syms:
        problems.append('shmem_pcontrol is not exported')
    ro = subprocess.run(['readelf', '-p', '.rodata', lib], capture_output=True, text=True, errors='replace').stdout
    named = sorted(set(re.findall(r'pshmem_\w+', ro)))
    if named:
        problems.append(f'read-only strings name pshmem_ routines (messages must name shmem_ ones): {named[:10]}')
    if static:
        r = subprocess.run(['nm', '--defined-only', static], capture_output=True, text=True)
        st = table(r.stdout)
        strong = [s for s in st if s.startswith('shmem_') and st[s][1] not in 'WV']
        if r.returncode or not any(s.startswith('pshmem_') for s in st):
            problems.append(f'nm {static}: no pshmem_ routines')
        if strong:
            problems.append(f'{len(strong)} shmem_ routines are not weak in {static}: {" ".join(strong[:20])}')
    return problems


if __name__ == '__main__':
    sys.exit(main())
