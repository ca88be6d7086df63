#!/usr/bin/env python3
"""check_install.py MESON BUILDDIR PREFIX LIBDIR OUTDIR OSHRUN PYTHON - the shoal package as `meson install` puts it.

Installs BUILDDIR into OUTDIR/dest (DESTDIR) and checks: shoal/__init__.py and shoal/_config.py are installed under
the prefix, in a directory PYTHON searches when it searches one under the prefix (Debian: lib/python3.X/dist-packages); _config.LIBSHOAL names PREFIX/LIBDIR/libshoal.so.0, the library's installed
path; the installed package, imported from there by a 1-PE job (SHOAL_LIB pointing at the DESTDIR copy, since PREFIX
itself holds no install), starts, allocates and reduces.
"""
import glob
import os
import shutil
import subprocess
import sys


def main():
    meson, build, prefix, libdir, outdir, oshrun, python = sys.argv[1:8]
    dest = os.path.join(os.path.abspath(outdir), 'dest')
    shutil.rmtree(dest, ignore_errors=True)
    r = subprocess.run([meson, 'install', '-C', build, '--no-rebuild', '--quiet'], capture_output=True, text=True,
                       env=dict(os.environ, DESTDIR=dest))
    if r.returncode:
        print(f'FAIL: meson install: {r.stdout[-2000:]}{r.stderr[-2000:]}')
        return 1
    inits = glob.glob(dest + prefix + '/lib*/**/shoal/__init__.py', recursive=True)
    if len(inits) != 1:
        print(f'FAIL: expected one installed shoal/__init__.py under {dest + prefix}, found {inits}')
        return 1
    pkg = os.path.dirname(inits[0])
    r = subprocess.run([python, '-c', 'import site; print("\\n".join(site.getsitepackages()))'], capture_output=True,
                       text=True)
    site_dirs = [d for d in r.stdout.split() if d.startswith(prefix.rstrip('/') + '/')]
    if site_dirs and os.path.dirname(pkg)[len(dest):] not in site_dirs:
        print(f'FAIL: installed into {os.path.dirname(pkg)[len(dest):]}, which {python} does not search '
              f'(its directories under {prefix}: {site_dirs})')
        return 1
    conf = os.path.join(pkg, '_config.py')
    ns = {}
    exec(open(conf).read(), ns)
    want = os.path.join(prefix, libdir, 'libshoal.so.0')
    if ns.get('LIBSHOAL') != want:
        print(f'FAIL: {conf}: LIBSHOAL = {ns.get("LIBSHOAL")!r}, expected {want!r}')
        return 1
    if not os.path.exists(dest + want):
        print(f'FAIL: {want} is not installed (looked for {dest + want})')
        return 1
    code = ('import shoal, numpy as np; shoal.init(); a = shoal.array((3,), "int32"); a[:] = [1, 2, 3]; '
            'shoal.reduce(shoal.TEAM_WORLD, a, a, "max"); print("installed shoal:", shoal.__file__, a.tolist())')
    env = dict(os.environ, PYTHONPATH=os.path.dirname(pkg), SHOAL_LIB=dest + want)
    r = subprocess.run([oshrun, '-n', '1', '--timeout', '60', python, '-c', code], capture_output=True, text=True,
                       env=env, cwd='/')
    out = r.stdout + r.stderr
    print(out.strip())
    if r.returncode == 0 and 'No module named \'numpy\'' in out:
        return 77
    if r.returncode or f'installed shoal: {inits[0]} [1, 2, 3]' not in out:
        print(f'FAIL: the installed package did not run from {pkg} (exit {r.returncode})')
        return 1
    print(f'ok: {pkg} with LIBSHOAL = {want}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
