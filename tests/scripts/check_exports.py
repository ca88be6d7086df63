#!/usr/bin/env python3
"""check_exports.py LIBRARY MAPFILE - the shared library exports only the OpenSHMEM API (design 3).

Every dynamic symbol that LIBRARY defines must be shmem_*, shmemx_*, SHMEM_* or one of the names the version script
MAPFILE lists in its global section (the deprecated spellings); anything else (shoal_* internals, helpers) fails.
"""
import fnmatch
import re
import subprocess
import sys


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    lib, mapfile = sys.argv[1:]
    text = re.sub(r'/\*.*?\*/', '', open(mapfile).read(), flags=re.S)
    m = re.search(r'global\s*:(.*?)(local\s*:|\})', text, re.S)
    allowed = ['shmem_*', 'shmemx_*', 'SHMEM_*']
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
    print('PASS')
    return 0


if __name__ == '__main__':
    sys.exit(main())
