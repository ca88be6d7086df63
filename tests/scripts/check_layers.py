#!/usr/bin/env python3
"""check_layers.py - each layer calls and includes only the layers below it (docs/design/modules.md).

  check_layers.py --root SRC [--build BUILD] [--objroot DIR] [--objects FILE...]

Layers, top to bottom: api/ > collectives/ (collectives/gpu/ too) > runtime/ (runtime/transport/*/ too) > device/ >
include/ (the installed headers: everyone's, and they include no layer). A folder that does not exist is an empty
layer. Three checks, each listing every offence on stderr, one line each (exit 1 when any):
  includes:  no file of a layer includes a header that resolves into a higher layer's folder (the name looked up as
             the compiler does: the including file's folder, then the library's include path, read from the build's
             compile_commands.json, then any folder of a layer).
  symbols:   no object of a layer leaves undefined a shoal_*, shmem* or pshmem_* symbol that an object of a higher
             layer defines. Objects: plain files (layer: their folder under DIR, default BUILD, which mirrors the
             source tree), archives
             (every member; meson's members of a target's objects folder are named after their source, ".._" for a
             step up: ".._collectives_coll_core.c.o" of runtime/libshoal_objs.a.p is collectives/coll_core.c) and
             shared libraries (dynamic symbols).
  installed: with --build, every header meson installs into the include folder is in a tier: the public API
             (shmem.h, shmemx.h, pshmem.h, mpp/, shoal/shmem_*.h), the device API (shoal/shmem_*device.cuh) or
             shoal/detail/ (what the device API's inline code needs; each such file says at its top that it is not ABI).
             Internal headers are never installed.
"""
import argparse
import fnmatch
import json
import os
import re
import shlex
import subprocess
import sys

LAYERS = ['include', 'device', 'runtime', 'collectives', 'api']  # bottom to top
RANK = {name: i for i, name in enumerate(LAYERS)}
SOURCES = ('.c', '.h', '.cu', '.cuh', '.cpp', '.hpp', '.cc')
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)
OURS = re.compile(r'^_*(shoal_|shmem|pshmem_)')
TIERS = ['shmem.h', 'shmemx.h', 'pshmem.h', 'mpp/*.h', 'shoal/shmem_*.h',  # public API
         'shoal/shmem_*device.cuh',  # device API
         'shoal/detail/*']  # what the device API's inline code needs, no ABI promise
NOT_ABI = re.compile(r'not\s+ABI', re.I)


def layer_of(root, path):
    """The layer of a file or folder of the source tree (None outside every layer)."""
    rel = os.path.relpath(os.path.realpath(path), os.path.realpath(root))
    top = rel.split(os.sep)[0]
    return top if top in RANK else None


def include_path(root, build):
    """The library's include folders inside the source tree, in the compiler's order (the build's commands)."""
    dirs = []
    cc = os.path.join(build, 'compile_commands.json') if build else None
    if cc and os.path.exists(cc):
        for e in json.load(open(cc, encoding='utf-8')):
            args = e.get('arguments') or shlex.split(e.get('command', ''))
            for i, a in enumerate(args):
                if a.startswith('-I') and len(a) > 2:
                    d = a[2:]
                elif a == '-I' and i + 1 < len(args):
                    d = args[i + 1]
                else:
                    continue
                d = os.path.normpath(os.path.join(e.get('directory', build), d))
                if layer_of(root, d) and d not in dirs:
                    dirs.append(d)
    for d in ['include', 'runtime', 'device', 'collectives', os.path.join('collectives', 'gpu'), '.']:
        d = os.path.normpath(os.path.join(root, d))
        if d not in dirs:
            dirs.append(d)
    return dirs


def layer_files(root):
    for name in LAYERS:
        top = os.path.join(root, name)
        for d, subdirs, files in os.walk(top):
            subdirs.sort()
            for f in sorted(files):
                if f.endswith(SOURCES):
                    yield name, os.path.join(d, f)


def check_includes(root, build):
    path = include_path(root, build)
    every = sorted({os.path.dirname(f) for _, f in layer_files(root)})  # last resort: any folder of a layer
    bad = []
    for layer, f in layer_files(root):
        text = open(f, encoding='utf-8', errors='replace').read()
        for m in INCLUDE.finditer(text):
            inc = m.group(1)
            for d in [os.path.dirname(f)] + path + every:
                target = os.path.normpath(os.path.join(d, inc))
                if os.path.isfile(target):
                    break
            else:
                continue  # a system or generated header
            to = layer_of(root, target)
            if to and RANK[to] > RANK[layer]:
                line = text.count('\n', 0, m.start()) + 1
                bad.append('%s:%d: includes %s (%s, layer %s above %s)' % (
                    os.path.relpath(f, root), line, inc, os.path.relpath(target, root), to, layer))
    return bad


def member_layer(archive_dir, member, build):
    """The layer of an archive member: a path (a thin archive's, as nm prints it: from the working folder) or a meson
    object name (".._x_y.c.o")."""
    if os.sep in member:
        d = os.path.dirname(os.path.abspath(member))
    else:
        d = archive_dir
    if os.path.basename(d).endswith('.p'):  # a target's objects folder: the target's folder, then the name's ups
        d = os.path.dirname(d)
    name = os.path.basename(member)
    while name.startswith('.._'):
        d, name = os.path.dirname(d), name[3:]
    rel = os.path.relpath(d, build)
    if rel == '.':  # at the top of the tree: the name begins with its folder
        return next((l for l in LAYERS if name.startswith(l + '_')), None)
    top = rel.split(os.sep)[0]
    return top if top in RANK else None


def nm(path, *flags):
    dyn = ['-D'] if re.search(r'\.so(\.|$)', path) else []
    out = subprocess.run(['nm', *dyn, *flags, path], check=True, capture_output=True, text=True).stdout
    syms, member = [], None  # (name, archive member or None)
    for line in out.splitlines():
        if line.endswith(':'):
            member = line[:-1]
            continue
        parts = line.split()
        if parts:
            syms.append((parts[-1].split('@')[0], member))
    return syms


def check_symbols(objects, build):
    defined = {}  # symbol -> {(layer, object)}
    undefined = []  # (layer, object, symbol)
    for o in objects:
        odir = os.path.dirname(os.path.abspath(o))
        is_archive = o.endswith('.a')

        def where(member):
            if is_archive and member:
                return member_layer(odir, member, build), os.path.relpath(
                    os.path.abspath(member), build) if os.sep in member else member
            return member_layer(odir, os.path.basename(o), build), os.path.relpath(os.path.abspath(o), build)
        for s, member in nm(o, '--defined-only'):
            if OURS.match(s):
                defined.setdefault(s, set()).add(where(member))
        for s, member in nm(o, '-u'):
            if OURS.match(s):
                layer, obj = where(member)
                undefined.append((layer, obj, s))
    bad = []
    for layer, obj, s in sorted(set(undefined), key=lambda u: (u[1], u[2])):
        if layer is None:
            continue
        above = sorted({'%s (%s)' % (o, l) for l, o in defined.get(s, ()) if l and RANK[l] > RANK[layer]})
        if above:
            bad.append('%s (%s): undefined %s, defined above in %s' % (obj, layer, s, ', '.join(above)))
    return bad


def check_installed(build):
    info = os.path.join(build, 'meson-info')
    installed = json.load(open(os.path.join(info, 'intro-installed.json'), encoding='utf-8'))
    opts = {o['name']: o['value'] for o in json.load(open(os.path.join(info, 'intro-buildoptions.json'),
                                                          encoding='utf-8'))}
    incdir = os.path.join(opts['prefix'], opts['includedir'])
    bad = []
    for src, dest in sorted(installed.items(), key=lambda kv: kv[1]):
        rel = os.path.relpath(dest, incdir)
        if rel.startswith('..'):
            continue  # not a header
        if not any(fnmatch.fnmatchcase(rel, t) for t in TIERS):
            bad.append('installed %s (from %s): an internal header, in no tier' % (rel, src))
        elif rel.startswith('shoal/detail/') and os.path.isfile(src):
            head = open(src, encoding='utf-8', errors='replace').read(600)
            if not NOT_ABI.search(head):
                bad.append('installed %s (from %s): says nowhere at its top that it is not ABI' % (rel, src))
    return bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--root', required=True)
    ap.add_argument('--build')
    ap.add_argument('--objroot', help='the folder that mirrors the source tree for objects (default: BUILD)')
    ap.add_argument('--objects', nargs='*', default=[])
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    build = os.path.abspath(a.build) if a.build else None
    bad = check_includes(root, build)
    bad += check_symbols(a.objects, os.path.abspath(a.objroot) if a.objroot else build or root)
    if build:
        bad += check_installed(build)
    for b in bad:
        print(b, file=sys.stderr)
    print('layers %s: includes, symbols of %d object(s)%s: %s' % (
        ' > '.join(reversed(LAYERS)), len(a.objects), ', installed headers' if build else '',
        'ok' if not bad else '%d offence(s)' % len(bad)))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
