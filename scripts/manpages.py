#!/usr/bin/env python3
"""manpages.py - the manual: docs/man/*.md turned into man pages, and the check that it covers the API.

  manpages.py build PANDOC OUTDIR PAGE.md...
      OUTDIR/manN/<page>.N for every page (pandoc's man writer; N from the title line '# name(N)'), and for every
      other name the page's NAME or SYNOPSIS section gives, OUTDIR/manN/<name>.N holding '.so manN/<page>.N' (man's
      include: `man shmem_int_put` shows the family page). A name two pages give links to the first page that has it
      in its NAME section, else to the first (sorted) page; the device API page (shmem_device) never takes a name a
      host page has.
  manpages.py check LIBSHOAL.so CC INCDIR... -- PAGE.md...
      fails (one line per problem) when an exported symbol (nm -D, pshmem_* aside: pshmem(3) covers them) or a
      name the device header declares (include/shoal/shmem_device.cuh) is named by no page's SYNOPSIS (device names:
      by shmem_device's), when a SYNOPSIS names a shmem_/shmemx_/pshmem_/SHMEM_ identifier that is neither exported
      nor a macro, type or device routine of the headers, an environment variable or a page (a typo, or a routine
      that was removed), or when a variable of runtime/env.c's table is missing from shoal-env.md.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

TITLE = re.compile(r'^# ([A-Za-z0-9_.+-]+)\((\d)\)\s*$')
# Routine-like names; placeholders (shmem_TYPENAME_put, shmem_putSIZE) carry upper case and are skipped.
NAME_RE = re.compile(r'(?<![A-Za-z0-9_])(?:shmemx?|pshmem)_[A-Za-z0-9_]*|(?<![A-Za-z0-9_])SHMEMX?_[A-Z0-9_]+')
OLD_NAMES = {'start_pes', '_my_pe', '_num_pes', 'my_pe', 'num_pes', 'shmalloc', 'shfree', 'shmemalign', 'shrealloc',
             'globalexit'}
DEVICE_PAGE = 'shmem_device'


def sections(path):
    """(title, section number, {SECTION NAME: text})."""
    lines = open(path, encoding='utf-8').read().split('\n')
    m = TITLE.match(lines[0]) if lines else None
    if not m:
        raise SystemExit(f'{path}:1: expected a first line "# name(N)"')
    secs, cur = {}, None
    for line in lines[1:]:
        if line.startswith('## '):
            cur = line[3:].strip().upper()
            secs[cur] = ''
        elif cur:
            secs[cur] += line + '\n'
    return m.group(1), m.group(2), secs


def names_in(text):
    out = []
    for n in NAME_RE.findall(text):
        if n.startswith(('shmem', 'pshmem')) and any(c.isupper() for c in n):
            continue  # a placeholder
        out.append(n.rstrip('_'))
    out += [w for w in re.findall(r'(?<![A-Za-z0-9_])_?[a-z][a-z_]*', text) if w in OLD_NAMES]
    return out


def tool_names(text):
    """The first words of the NAME line(s): 'oshc++, oshCC, oshcxx - ...' gives the three."""
    head = text.strip().split(' - ')[0]
    return [w.strip('`* ') for w in head.split(',') if w.strip('`* ')]


def build(pandoc, outdir, pages):
    pages = sorted(pages, key=lambda p: (os.path.basename(p)[:-3] == DEVICE_PAGE, os.path.basename(p)))
    parsed = [(p,) + sections(p) for p in pages]
    owner = {(sec, title): title for _, title, sec, _ in parsed}  # (section, name) -> page title; a page owns itself
    for strong in (True, False):
        for path, title, sec, secs in parsed:
            text = secs.get('NAME', '') if strong else secs.get('NAME', '') + secs.get('SYNOPSIS', '')
            names = names_in(text) + (tool_names(secs.get('NAME', '')) if sec in ('1', '7') else [])
            for n in names:
                if (sec, n) not in owner and not (strong and title == DEVICE_PAGE and n.startswith('shmem_')):
                    owner[(sec, n)] = title

    def one(item):
        path, title, sec, _ = item
        d = os.path.join(outdir, 'man' + sec)
        r = subprocess.run([pandoc, '-s', '-f', 'markdown', '-t', 'man', '--shift-heading-level-by=-1',
                            '-M', f'title={title}', '-M', f'section={sec}', '-M', 'header=Shoal Manual',
                            '-M', 'footer=Shoal', path, '-o', os.path.join(d, f'{title}.{sec}')],
                           capture_output=True, text=True)
        return r.returncode, f'{path}: pandoc: {r.stderr.strip()}'

    shutil.rmtree(outdir, ignore_errors=True)  # no link of a name a page no longer gives survives
    for _, _, sec, _ in parsed:
        os.makedirs(os.path.join(outdir, 'man' + sec), exist_ok=True)
    with ThreadPoolExecutor(4) as ex:
        for rc, msg in ex.map(one, parsed):
            if rc:
                print(msg, file=sys.stderr)
                return 1
    links = 0
    for (sec, n), title in sorted(owner.items()):
        if n == title:
            continue
        with open(os.path.join(outdir, 'man' + sec, f'{n}.{sec}'), 'w') as f:
            f.write(f'.so man{sec}/{title}.{sec}\n')
        links += 1
    os.utime(outdir)  # the target's stamp for ninja
    print(f'manpages: {len(parsed)} pages, {links} names linked to them')
    return 0


def device_names(cc, incdirs):
    """Routines the device header declares: preprocessed as a device pass (__CUDA_ARCH__) with empty vendor and
    Shoal headers, so that only its own declarations remain: '__device__ inline T name(' and 'static inline T name('."""
    hdr = next((os.path.join(d, 'shoal', 'shmem_device.cuh') for d in incdirs
                if os.path.isfile(os.path.join(d, 'shoal', 'shmem_device.cuh'))), None)
    if not hdr:
        return set()
    with tempfile.TemporaryDirectory() as stub:
        for h in ('cuda_runtime.h', 'shmemx.h', 'shmem.h', 'stdio.h', 'string.h', 'stdint.h', 'stddef.h', 'sched.h',
                  'unistd.h', 'time.h'):
            open(os.path.join(stub, h), 'w').close()
        # shoal/detail/ (the not-ABI tier the header includes) is read for real: its spellings make the declarations.
        r = subprocess.run(cc + ['-E', '-P', '-x', 'c++', '-nostdinc', '-D__CUDA_ARCH__=900', '-D__NVCC__',
                                 '-I', stub, '-I', os.path.dirname(os.path.dirname(hdr)), hdr],
                           capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(f'manpages: preprocessing {hdr} failed: {r.stderr.strip()[:500]}')
    decl = re.compile(r'(?:__device__\s+(?:__forceinline__\s+|inline\s+)|static\s+inline\s+)[\w\s\*]*?'
                      r'\b((?:shmemx?)_\w+)\s*\(')
    return set(decl.findall(r.stdout))


def check(lib, cc, incdirs, pages):
    nm = subprocess.run(['nm', '-D', '--defined-only', lib], capture_output=True, text=True, check=True).stdout
    exported = {l.split()[-1] for l in nm.splitlines() if l.split()}
    src = ''.join(f'#include <{h}>\n' for h in ('shmem.h', 'shmemx.h'))
    r = subprocess.run(cc + ['-E', '-dM', '-x', 'c', '-'] + [f'-I{d}' for d in incdirs], input=src,
                       capture_output=True, text=True, check=True)
    macros = {l.split()[1].split('(')[0] for l in r.stdout.splitlines() if l.startswith('#define ')}
    r = subprocess.run(cc + ['-E', '-P', '-x', 'c', '-'] + [f'-I{d}' for d in incdirs], input=src,
                       capture_output=True, text=True, check=True)
    types = set(re.findall(r'\b(shmemx?_\w+_t)\b', r.stdout))
    device = device_names(cc, incdirs)
    env_c = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'runtime', 'env.c')
    env_vars = set(re.findall(r'^\s*\{"((?:SHMEM|SHOAL)_[A-Z0-9_]+)", ENV_', open(env_c).read(), re.M))
    titles = {sections(p)[0] for p in pages}
    known = exported | macros | device | types | env_vars | titles
    problems, in_synopsis, in_device_page = [], set(), set()
    for p in pages:
        title, sec, secs = sections(p)
        for s in ('NAME', 'SYNOPSIS', 'DESCRIPTION'):
            if s not in secs:
                problems.append(f'{p}: no {s} section')
        names = names_in(secs.get('NAME', '') + secs.get('SYNOPSIS', ''))
        (in_device_page if title == DEVICE_PAGE else in_synopsis).update(names)  # a host name needs a host page
        for n in sorted(set(names)):
            if n not in known and not n.startswith('pshmem_'):
                problems.append(f'{p}: SYNOPSIS names {n}, which is no exported symbol, macro or device routine')
    for s in sorted(exported - in_synopsis):
        if not s.startswith('pshmem_'):
            problems.append(f'{s}: exported by {os.path.basename(lib)} but named in no host page\'s SYNOPSIS')
    for s in sorted(device - in_device_page):
        problems.append(f'{s}: declared in shoal/shmem_device.cuh but not in {DEVICE_PAGE}.md\'s SYNOPSIS')
    env_page = [p for p in pages if sections(p)[0] == 'shoal-env']
    if env_page:
        text = open(env_page[0], encoding='utf-8').read()
        problems += [f'{v}: read by runtime/env.c but not in shoal-env.md' for v in sorted(env_vars)
                     if not re.search(r'(?<![A-Z0-9_])' + v + r'(?![A-Z0-9_])', text)]
    for line in problems:
        print('FAIL: ' + line)
    print(f'manpages: {len(pages)} pages; {len(exported)} exported symbols, {len(device)} device routines, '
          f'{len(problems)} problems')
    return 1 if problems else 0


def main(argv):
    if len(argv) >= 4 and argv[1] == 'build':
        return build(argv[2], argv[3], argv[4:])
    if len(argv) >= 5 and argv[1] == 'check' and '--' in argv:
        i = argv.index('--')
        return check(argv[2], argv[3].split(), argv[4:i], argv[i + 1:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv))
