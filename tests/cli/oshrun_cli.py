#!/usr/bin/env python3
"""oshrun_cli.py - oshrun's command line end to end: each form starts the right job, each refusal is one line.

  oshrun_cli.py OSHRUN PROBE CASE

PROBE is tests/cli/probe (prints "PE i of n local j of m cpus K var V" per PE). Cases: see CASES below. A case
checks the exit status, the PEs that ran (count, numbering) and what oshrun printed; the hand-off cases put a fake
mpirun first on PATH, which prints the command line it got (no other machine is ever contacted).
"""
import os
import re
import subprocess
import sys
import tempfile

OSHRUN, PROBE, CASE = sys.argv[1], sys.argv[2], sys.argv[3]
NCPU = len(os.sched_getaffinity(0))
failures = []


def run(args, env=None, path_prepend=None, timeout=60):
    e = dict(os.environ)
    e.update(env or {})
    if path_prepend is not None:
        e['PATH'] = path_prepend + ':' + e.get('PATH', '')
    r = subprocess.run([OSHRUN] + args, env=e, capture_output=True, text=True, timeout=timeout)
    return r.returncode, r.stdout, r.stderr


def pes(out):
    return [tuple(int(x) for x in m.groups()[:5]) + (m.group(6),)
            for m in re.finditer(r'^PE (\d+) of (\d+) local (\d+) of (\d+) cpus (-?\d+) var (\S+)$', out, re.M)]


def expect(cond, what):
    if not cond:
        failures.append(what)


def job(args, n, **kw):
    """A launch that must succeed with n PEs numbered 0..n-1; returns the PE lines."""
    rc, out, err = run(args + [PROBE] + kw.pop('prog_args', []), **kw)
    p = pes(out)
    expect(rc == 0, f'{args}: exit status {rc}, stderr {err!r}')
    expect(sorted(x[0] for x in p) == list(range(n)) and all(x[1] == n and x[3] == n for x in p),
           f'{args}: expected PEs 0..{n - 1} of {n}, got {p} (stderr {err!r})')
    return p


def refused(args, rx, status=2, **kw):
    rc, out, err = run(args, **kw)
    lines = [l for l in err.splitlines() if l.strip()]
    expect(rc == status, f'{args}: exit status {rc}, want {status}')
    expect(lines and re.search(rx, lines[0]), f'{args}: first stderr line {lines[:1]} does not match {rx!r}')
    expect(not pes(out), f'{args}: PEs ran: {out!r}')


fake_dir = tempfile.mkdtemp(prefix='shoal-cli-')
with open(os.path.join(fake_dir, 'mpirun'), 'w') as f:
    f.write('#!/bin/sh\necho "fake-mpirun $*"\n')
os.chmod(os.path.join(fake_dir, 'mpirun'), 0o755)
hostfile = os.path.join(fake_dir, 'hosts')
with open(hostfile, 'w') as f:
    f.write('# this machine only\nlocalhost slots=3\n')
otherfile = os.path.join(fake_dir, 'other')
with open(otherfile, 'w') as f:
    f.write('localhost slots=2\nnode-b.invalid slots=2\n')

if CASE == 'counts':
    for args, n in [(['-n', '3'], 3), (['-n3'], 3), (['-n=2'], 2), (['-np', '2'], 2), (['-np=2'], 2),
                    (['--np', '2'], 2), (['--np=4'], 4), (['-N', '2'], 2), (['-N2'], 2), (['--npernode', '3'], 3),
                    ([], 1), (['--', ], 1)]:
        job(args, n)
    # the program's own options are never oshrun's
    p = job(['-n', '2'], 2, prog_args=['-n', '5'])
elif CASE == 'options':
    rc, out, err = run(['--timeout=30', '-n', '2', '--tag-output', PROBE])
    expect(rc == 0 and len(re.findall(r'^\[PE [01]\] PE [01] of 2 ', out, re.M)) == 2, f'--tag-output: {out!r}')
    p = job(['-x', 'SHOAL_CLI_VAR=abc', '-n', '2'], 2, prog_args=['SHOAL_CLI_VAR'])
    expect(all(x[5] == 'abc' for x in p), f'-x VAR=VAL not seen by the PEs: {p}')
    p = job(['-xSHOAL_CLI_VAR=d=e', '-n', '1'], 1, prog_args=['SHOAL_CLI_VAR'])
    expect(p and p[0][5] == 'd=e', f'-xVAR=VAL: {p}')
    rc, out, err = run(['--report-bindings', '-n', '2', PROBE])
    expect(rc == 0 and len(re.findall(r'^oshrun: PE [01]: cores ', err, re.M)) == 2, f'--report-bindings: {err!r}')
    rc, out, err = run(['--version'])
    expect(rc == 0 and re.match(r'^oshrun \(Shoal\) \d+\.\d+\.\d+, OpenSHMEM 1\.5', out), f'--version: {out!r}')
    rc2, out2, _ = run(['-V'])
    expect(rc2 == 0 and out2 == out, '-V differs from --version')
    rc, out, err = run(['--help'])
    for opt in ['-n', '-N', '--host', '--hostfile', '--map-by', '--bind-to', '--oversubscribe', '-x', '--timeout',
                '--tag-output', '--report-bindings', '--version', '--help']:
        expect(rc == 0 and re.search(r'(^|[\s,])' + re.escape(opt) + r'\b', out), f'--help does not list {opt}')
elif CASE == 'refusals':
    refused(['--foo', PROBE], r"^oshrun: unknown option '--foo'$")
    refused(['-n', '0', PROBE], r'^oshrun: -n 0: expected a PE count in \[1, 4096\]$')
    refused(['-n', 'abc', PROBE], r'^oshrun: -n abc: expected a PE count')
    refused(['--timeout', 'x', PROBE], r'^oshrun: --timeout x: expected seconds > 0$')
    refused(['--bind-to', 'socket', PROBE], r'^oshrun: --bind-to socket: expected core, numa or none$')
    refused(['--map-by', 'ppr:2:node', PROBE], r'^oshrun: --map-by ppr:2:node: ')
    refused(['-n'], r"^oshrun: option '-n' needs an argument|^oshrun: .*-n")
    refused(['-n', '2'], r'^oshrun: no program given$')
    refused(['-x', 'A-B', PROBE], r'^oshrun: -x A-B: ')
    refused(['-n', '4', '-N', '2', PROBE], r'^oshrun: -n 4 with -N 2 needs 2 nodes')
    refused(['--host', 'localhost:2', '-n', '3', PROBE], r'^oshrun: -n 3, but the hosts given have 2 slots')
elif CASE == 'hosts':
    job(['--host', 'localhost:2'], 2)
    job(['--host', 'localhost,127.0.0.1'], 2)
    job(['-H', 'localhost:2', '-n', '3', '--oversubscribe'], 3)
    job(['--hostfile', hostfile], 3)
    job(['--machinefile=' + hostfile, '-n', '2'], 2)
    # another machine: handed to mpirun, as SOS's oshrun does (the fake one only prints its command line)
    rc, out, err = run(['--host', 'node-b.invalid:2', '-n', '4', '--bind-to', 'core', '-x', 'A=1', '--timeout', '2.5',
                        PROBE, 'arg'], path_prepend=fake_dir)
    want = f'fake-mpirun -np 4 --host node-b.invalid:2 --bind-to core -x A=1 --timeout 3 {PROBE} arg'
    expect(rc == 0 and out.strip() == want, f'hand-off: got {out.strip()!r} (rc {rc}, {err!r}), want {want!r}')
    rc, out, err = run(['--hostfile', otherfile, '-n', '4', PROBE], path_prepend=fake_dir)
    expect(rc == 0 and out.strip() == f'fake-mpirun -np 4 --hostfile {otherfile} {PROBE}', f'hostfile hand-off: {out!r}')
    # no mpirun on PATH: one line
    e = {'PATH': '/nonexistent'}
    refused(['--host', 'node-b.invalid', '-n', '2', PROBE], r'^oshrun: --host names another machine', env=e)
elif CASE == 'binding':
    p = job(['-n', '1'], 1)
    if NCPU > 1:
        expect(p and p[0][4] < NCPU, f'default: 1 PE on {NCPU} CPUs should be bound, it has {p[0][4] if p else "?"}')
        n = min(NCPU, 2)
        p = job(['-n', str(n)], n)
        expect(all(x[4] < NCPU for x in p), f'default: {n} PEs fit in {NCPU} CPUs, should be bound: {p}')
    for args in (['--bind-to', 'none'], ['--oversubscribe'], ['--map-by', 'node'], ['-n', str(NCPU + 1)]):
        n = NCPU + 1 if '-n' in args else 1
        p = job(args if '-n' in args else args + ['-n', '1'], n)
        expect(all(x[4] == NCPU for x in p), f'{args}: should not be bound ({NCPU} CPUs): {p}')
    p = job(['--bind-to=core', '-n', '1'], 1)
    expect(p and (NCPU == 1 or p[0][4] < NCPU), f'--bind-to=core: not bound: {p}')
elif CASE == 'openmpi':
    # Open MPI oshrun habits: -c N is -np N; --allow-run-as-root is accepted without a word; --mca/--gmca KEY VALUE
    # reach the PEs as OMPI_MCA_KEY=VALUE with one note per key (the last value wins, as in Open MPI).
    rc, out, err = run(['-c', '2', PROBE])
    expect(rc == 0 and sorted(x[0] for x in pes(out)) == [0, 1] and all(x[1] == 2 for x in pes(out)),
           f'-c 2: {rc} {out!r} {err!r}')
    p = job(['-c3'], 3)
    rc, out, err = run(['--allow-run-as-root', '-np', '2', PROBE])
    expect(rc == 0 and len(pes(out)) == 2 and not err.strip(), f'--allow-run-as-root: {rc} {out!r} {err!r}')
    rc, out, err = run(['--mca', 'btl', 'self,vader', '-mca', 'pml', 'ucx', '--mca', 'btl', '^openib', '--gmca',
                        'spml', 'ucx', '-np', '2', PROBE, 'OMPI_MCA_btl'])
    p = pes(out)
    expect(rc == 0 and sorted(x[0] for x in p) == [0, 1] and all(x[5] == '^openib' for x in p),
           f'--mca: PEs {p} should be 2 with OMPI_MCA_btl=^openib (rc {rc}, {err!r})')
    notes = [l for l in err.splitlines() if l.strip()]
    want = [f'oshrun: --mca {k}: ignored, Shoal has no MCA parameters (the PEs get OMPI_MCA_{k})'
            for k in ('btl', 'pml', 'spml')]
    expect(notes == want, f'--mca notes: {notes!r}, want {want!r}')
    p = job(['--mca=pml', 'ucx', '-n', '1'], 1, prog_args=['OMPI_MCA_pml'])
    expect(p and p[0][5] == 'ucx', f'--mca=pml ucx: {p}')
    # the other habits of such scripts, all at once
    rc, out, err = run(['--oversubscribe', '--bind-to', 'none', '--map-by', 'core', '--report-bindings', '-x',
                        'SHOAL_CLI_VAR=z', '--allow-run-as-root', '-np', '2', PROBE, 'SHOAL_CLI_VAR'])
    p = pes(out)
    expect(rc == 0 and len(p) == 2 and all(x[5] == 'z' for x in p), f'combined options: {rc} {p} {err!r}')
    # another machine: mpirun gets them as they were given, and no note (mpirun knows them)
    rc, out, err = run(['--host', 'node-b.invalid', '-c', '2', '--allow-run-as-root', '--mca', 'plm_rsh_agent',
                        'ssh -x', PROBE], path_prepend=fake_dir)
    want = f'fake-mpirun -np 2 --host node-b.invalid --allow-run-as-root --mca plm_rsh_agent ssh -x {PROBE}'
    expect(rc == 0 and out.strip() == want and 'ignored' not in err,
           f'hand-off: {out.strip()!r} {err!r}, want {want!r}')
    refused(['--mca', '1btl', 'x', PROBE], r'^oshrun: --mca 1btl: expected an MCA parameter name')
    refused(['--mca', 'btl'], r'^oshrun: --mca btl: needs a value: --mca KEY VALUE$')
    refused(['-c', '0', PROBE], r'^oshrun: -c 0: expected a PE count in \[1, 4096\]$')
else:
    print(f'oshrun_cli.py: unknown case {CASE}')
    sys.exit(2)

for f in failures:
    print('FAIL:', f)
print(f'oshrun_cli {CASE}: {"ok" if not failures else str(len(failures)) + " failures"}')
sys.exit(1 if failures else 0)
