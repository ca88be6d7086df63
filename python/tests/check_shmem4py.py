#!/usr/bin/env python3
"""check_shmem4py.py - shmem4py (the OpenSHMEM binding for Python) builds and runs against Shoal unchanged.

    check_shmem4py.py features OSHCC OUTDIR
        Offline, always: <shmem.h> says which optional OpenSHMEM 1.5 features Shoal has in the words a binding tests
        (include/shoal/shmem_bindings.h). A source that, as such a binding does, defines a stand-in for every
        feature whose macro is missing must compile with -Werror against Shoal's headers (no stand-in is compiled,
        so none collides with Shoal's declarations), and must fail with SHOAL_NO_BINDING_FEATURES defined (what
        shmem4py met before: every stand-in is a second definition of a routine <shmem.h> declares).
    check_shmem4py.py fetch OSHCC OSHRUN PYTHON OUTDIR
        Takes shmem4py's source release from SHMEM4PY_SDIST (a .tar.gz or an unpacked tree) or, only where
        SHOAL_TEST_NETWORK=1 allows the test to leave this machine, fetches it with pip (short timeouts); neither: exit
        77, skipped (tests keep their traffic on loopback unless told otherwise). Builds it with OSHCC=OSHCC and no
        change, and runs some of its own tests (test_rma, test_amo, test_coll, test_reduce, test_team, test_info)
        under OSHRUN -n 2, which must all pass.
"""
import glob
import os
import shutil
import subprocess
import sys
import tarfile

# feature macro -> a routine (or type) of <shmem.h> that a binding's stand-in for the missing feature would define
FEATURES = {
    'shmem_malloc_with_hints': 'shmem_malloc_with_hints', 'shmem_team_t': 'shmem_team_my_pe',
    'shmem_amo_nbi': 'shmem_int_atomic_fetch_add_nbi', 'shmem_put_signal': 'shmem_putmem_signal',
    'shmem_signal_fetch': 'shmem_signal_fetch', 'shmem_signal_wait_until': 'shmem_signal_wait_until',
    'shmem_broadcast': 'shmem_int_broadcast', 'shmem_collect': 'shmem_int_collect',
    'shmem_fcollect': 'shmem_int_fcollect', 'shmem_alltoall': 'shmem_int_alltoall',
    'shmem_alltoalls': 'shmem_int_alltoalls', 'shmem_TYPENAME_alltoalls': 'shmem_long_alltoalls',
    'shmem_broadcastmem': 'shmem_broadcastmem', 'shmem_collectmem': 'shmem_collectmem',
    'shmem_fcollectmem': 'shmem_fcollectmem', 'shmem_alltoallmem': 'shmem_alltoallmem',
    'shmem_alltoallsmem': 'shmem_alltoallsmem', 'shmem_reduce': 'shmem_int_sum_reduce',
    'shmem_OP_reduce': 'shmem_long_max_reduce', 'shmem_wait_test_many': 'shmem_int_wait_until_any',
    'shmem_pcontrol': 'shmem_pcontrol',
}


def run(cmd, timeout, **kw):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
        return r.returncode, r.stdout + r.stderr
    except subprocess.TimeoutExpired as e:
        return 124, f'timed out after {timeout} s: {(e.stdout or b"")[-2000:]!r}'


def features(oshcc, outdir):
    os.makedirs(outdir, exist_ok=True)
    src = os.path.join(outdir, 'standins.c')
    with open(src, 'w') as f:
        f.write('#include <shmem.h>\n#include <string.h>\n')
        f.write('#ifndef PySHMEM_HAVE_SHMEM_CTX_INVALID\n#define SHMEM_CTX_INVALID ((shmem_ctx_t)1)\n#endif\n')
        for macro, routine in FEATURES.items():
            f.write(f'#ifndef PySHMEM_HAVE_{macro}\nstatic int {routine}(void) {{ return -1; }}\n#endif\n')
        f.write('int main(void) { return strcmp(SHMEM_VENDOR_STRING, "Shoal") != 0; }\n')
    obj = os.path.join(outdir, 'standins.o')
    rc, out = run([oshcc, '-Werror', '-c', src, '-o', obj], 60)
    if rc:
        print(f'FAIL: a binding\'s stand-ins for missing features collide with <shmem.h>:\n{out[-3000:]}')
        return 1
    print('ok: no feature macro missing: a binding compiles no stand-in (-Werror)')
    rc, out = run([oshcc, '-Werror', '-DSHOAL_NO_BINDING_FEATURES', '-c', src, '-o', obj], 60)
    if rc == 0:
        print('FAIL: with SHOAL_NO_BINDING_FEATURES the stand-ins compiled: the check cannot fail')
        return 1
    n = out.count('error:')
    print(f'ok: with SHOAL_NO_BINDING_FEATURES the stand-ins collide with Shoal\'s declarations ({n} errors), as '
          'shmem4py met before')
    return 0


def fetch(oshcc, oshrun, python, outdir):
    shutil.rmtree(outdir, ignore_errors=True)
    os.makedirs(outdir)
    for mod in ('cffi', 'numpy', 'setuptools', 'pip'):
        rc, _ = run([python, '-c', f'import {mod}'], 30)
        if rc:
            print(f'shmem4py: python module {mod} is missing (scripts/install-deps.sh installs it): skipped')
            return 77
    given = os.environ.get('SHMEM4PY_SDIST', '')
    if given and os.path.isdir(given):
        top = os.path.join(outdir, 'shmem4py-src')
        shutil.copytree(given, top)
        print(f'shmem4py: source tree {given}')
    else:
        if given:
            sdists = [given]
        elif os.environ.get('SHOAL_TEST_NETWORK') == '1':
            rc, out = run([python, '-m', 'pip', 'download', '--no-deps', '--no-binary', ':all:',
                           '--no-build-isolation', '--timeout', '10', '--retries', '0', '-d', outdir, 'shmem4py'], 90)
            sdists = glob.glob(os.path.join(outdir, 'shmem4py-*.tar.gz'))
            if rc or not sdists:
                last = [line for line in out.strip().splitlines() if line.strip()][-1:] or ['(no output)']
                print(f'shmem4py: cannot fetch the source release (no network?): {last[0][:200]}: skipped')
                return 77
        else:
            print('shmem4py: no copy at hand (SHMEM4PY_SDIST=path of its source release, or SHOAL_TEST_NETWORK=1 to '
                  'let pip fetch it): skipped')
            return 77
        with tarfile.open(sdists[0]) as t:
            t.extractall(outdir)
        top = [d for d in glob.glob(os.path.join(outdir, 'shmem4py-*')) if os.path.isdir(d)][0]
        print(f'shmem4py: source release {os.path.basename(sdists[0])}')
    site = os.path.join(outdir, 'site')
    env = dict(os.environ, OSHCC=oshcc)
    rc, out = run([python, '-m', 'pip', 'install', '--no-build-isolation', '--no-deps', '--no-index', '--target',
                   site, top], 600, env=env)
    if rc:
        print(f'FAIL: shmem4py did not build against Shoal (OSHCC={oshcc}):\n{out[-4000:]}')
        return 1
    print('shmem4py: built unchanged with OSHCC=oshcc')
    tests = [t for t in ('test_rma', 'test_amo', 'test_coll', 'test_reduce', 'test_team', 'test_info')
             if os.path.exists(os.path.join(top, 'test', t + '.py'))]
    env = dict(os.environ, PYTHONPATH=site)
    rc, out = run([oshrun, '-n', '2', '--timeout', '240', python, '-m', 'unittest'] + tests, 270,
                  env=env, cwd=os.path.join(top, 'test'))
    print(out[-3000:])
    vendor = run([oshrun, '-n', '1', python, '-c', 'from shmem4py import shmem; print(shmem.VENDOR_STRING)'], 60,
                 env=env)[1]
    if rc or 'OK' not in out:
        print(f'FAIL: shmem4py\'s tests {", ".join(tests)} at 2 PEs: exit {rc}')
        return 1
    if 'Shoal' not in vendor:
        print(f'FAIL: shmem4py names the vendor {vendor.strip()!r}, expected Shoal')
        return 1
    print(f'ok: shmem4py {", ".join(tests)} passed at 2 PEs, vendor Shoal')
    return 0


def main():
    if len(sys.argv) == 4 and sys.argv[1] == 'features':
        return features(sys.argv[2], sys.argv[3])
    if len(sys.argv) == 6 and sys.argv[1] == 'fetch':
        return fetch(*sys.argv[2:6])
    print(__doc__)
    return 2


if __name__ == '__main__':
    sys.exit(main())
