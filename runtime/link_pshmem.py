#!/usr/bin/env python3
"""link_pshmem.py OUT ARCHIVE LDSCRIPT OBJCOPY CC... - the one object both libshoal libraries are made of.

Links every object of ARCHIVE (compiled with shoal_pshmem_names.h: they define pshmem_X) into one relocatable object
with LDSCRIPT (shmem_X = pshmem_X; for every routine), then makes the shmem_ names weak, so that a profiling tool's
own shmem_X takes their place and calls pshmem_X, the implementation (spec 1.5 annex). A routine that <shmem.h>
declares and no source defines fails here ("undefined symbol pshmem_X referenced in expression").
"""
import os
import subprocess
import sys


def main():
    if len(sys.argv) < 6:
        print(__doc__)
        return 2
    out, archive, script, objcopy, cc = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
    tmp = out + '.tmp'
    for cmd in (cc + ['-r', '-nostdlib', '-o', tmp, '-Wl,--whole-archive', archive, '-Wl,--no-whole-archive', script],
                [objcopy, '--wildcard', '--weaken-symbol=shmem_*', tmp, out]):
        r = subprocess.run(cmd)
        if r.returncode:
            print('link_pshmem.py: failed: ' + ' '.join(cmd), file=sys.stderr)
            return 1
    os.unlink(tmp)
    return 0


if __name__ == '__main__':
    sys.exit(main())
