#!/usr/bin/env python3
"""check_device_leaf.py - device/ is a leaf (docs/design/modules.md): it calls nothing in runtime/ or collectives/.

  check_device_leaf.py --root SRC [--objects FILE...]

Two checks, each listing every offence on stderr (exit 1 when any):
  includes: no file of device/ includes a header of runtime/ or collectives/ (an #include whose name resolves there
            through the library's include path: runtime/, collectives/, collectives/gpu/).
  symbols:  the objects built from device/ (the C backends' objects, the nvcc kernels object, the hipcc kernels
            library) leave no symbol of libshoal undefined (shoal_*, shmem*, pshmem_*) that they do not define among
            themselves: such a symbol can only come from runtime/ or collectives/.
"""
import argparse
import os
import re
import subprocess
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)
OURS = re.compile(r'^_*(shoal_|shmem|pshmem_)')
FORBIDDEN_DIRS = ['runtime', 'collectives', os.path.join('collectives', 'gpu')]


def check_includes(root):
    bad = []
    ddir = os.path.join(root, 'device')
    for name in sorted(os.listdir(ddir)):
        if not name.endswith(('.c', '.h', '.cu', '.cuh')):
            continue
        text = open(os.path.join(ddir, name), encoding='utf-8').read()
        for m in INCLUDE.finditer(text):
            inc = m.group(1)
            if os.path.exists(os.path.join(ddir, inc)):
                continue  # device/'s own header
            for d in FORBIDDEN_DIRS:
                if os.path.exists(os.path.join(root, d, inc)):
                    line = text.count('\n', 0, m.start()) + 1
                    bad.append('device/%s:%d: includes %s (%s/%s)' % (name, line, inc, d, inc))
    return bad


def nm(path, *flags):
    dyn = ['-D'] if path.endswith('.so') else []
    out = subprocess.run(['nm', *dyn, *flags, path], check=True, capture_output=True, text=True).stdout
    syms = []  # (name, archive member or file)
    member = os.path.basename(path)
    for line in out.splitlines():
        if line.endswith(':'):  # an archive member
            member = line[:-1]
            continue
        parts = line.split()
        if parts:
            syms.append((parts[-1].split('@')[0], member))  # versioned names of a .so: hipLaunchKernel@hip_4.2
    return syms


def check_symbols(objects):
    defined, undefined = set(), {}
    for o in objects:
        defined.update(s for s, _ in nm(o, '--defined-only'))
        for s, member in nm(o, '-u'):
            where = member if member == os.path.basename(o) else '%s (%s)' % (member, os.path.basename(o))
            undefined.setdefault(s, []).append(where)
    return ['undefined %s (not defined in device/) in %s' % (s, ', '.join(undefined[s]))
            for s in sorted(undefined) if OURS.match(s) and s not in defined]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--root', required=True)
    ap.add_argument('--objects', nargs='*', default=[])
    a = ap.parse_args()
    bad = check_includes(a.root) + check_symbols(a.objects)
    for b in bad:
        print(b, file=sys.stderr)
    print('device/ leaf check: includes of device/ and symbols of %d object(s): %s' % (len(a.objects),
           'ok' if not bad else '%d offence(s)' % len(bad)))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
