#!/usr/bin/env python3
"""check_shoal_info.py SHOAL_INFO ENV_C VERSION CUDA HIP OFI PMIX PREFIX CC FLAGS BUILDTYPE CUDA_ARCH CUDA_TEST_ARCH
HIP_ARCH - shoal-info's facts, checked against their sources.

--parsable: every line is section:key:value; version:shoal is VERSION and version:openshmem 1.5; build:cuda/hip/ofi/
pmix are the meson configuration's (yes/no as given); build:prefix is PREFIX, build:compiler_command is CC (meson's
compiler command) and build:compiler "ID VERSION" with VERSION on the first line of `CC --version`; build:cflags holds
each of FLAGS (-std, -O, -g and c_args, as meson sets them) and no file names or include paths; build:buildtype is BUILDTYPE;
build:cuda_arch, cuda_test_arch and hip_arch are meson's lists ("none" without the backend), build:cuda_ptx the
newest architecture's compute_NN; the same values appear in the human output; every variable of runtime/env.c's table has its type, default
(the table's text), value, set, accepts and help rows, and SHOAL_SPIN=7 in the environment shows value 7, set yes;
--map N (N = 3 and N = the CPUs this process may use) gives N PE rows whose OS CPUs lie in that set (distinct ones
with --bind-to core when N fits); bad options give one line and exit 2.
"""
import os
import re
import subprocess
import sys


def run(args, env=None):
    return subprocess.run(args, capture_output=True, text=True, env=dict(os.environ, **(env or {})))


def cpulist(s):
    out = set()
    for part in s.split(','):
        a, _, b = part.partition('-')
        out.update(range(int(a), int(b or a) + 1))
    return out


def main():
    exe, env_c, version = sys.argv[1:4]
    build = dict(zip(('cuda', 'hip', 'ofi', 'pmix'), sys.argv[4:8]))
    prefix, cc, flags, buildtype, cuda_arch, cuda_test_arch, hip_arch = sys.argv[8:15]
    problems = []
    r = run([exe, '--parsable', '--map', '3'], {'SHOAL_SPIN': '7', 'FI_PROVIDER': 'tcp', 'FI_TCP_IFACE': 'lo'})
    if r.returncode:
        problems.append(f'--parsable --map 3: exit {r.returncode}: {r.stderr.strip()}')
    facts = {}
    for line in r.stdout.splitlines():
        m = re.fullmatch(r'([a-z]+):([^:]+(?::[^:]+)*?):(.*)', line)
        if not m or not re.fullmatch(r'[a-z]+:[A-Za-z0-9_.;-]+(:[A-Za-z0-9_.;-]+)*:.*', line):
            problems.append(f'not a section:key:value line: {line!r}')
            continue
        sec, rest = line.split(':', 1)
        facts.setdefault(sec, []).append(rest)
    def value(sec, key):
        for rest in facts.get(sec, []):
            if rest.startswith(key + ':'):
                return rest[len(key) + 1:]
        return None
    want = {('version', 'shoal'): version, ('version', 'openshmem'): '1.5'}
    want.update({('build', k): v for k, v in build.items()})
    want.update({('build', 'prefix'): prefix, ('build', 'compiler_command'): cc, ('build', 'buildtype'): buildtype,
                 ('build', 'cuda_arch'): cuda_arch, ('build', 'cuda_test_arch'): cuda_test_arch,
                 ('build', 'hip_arch'): hip_arch,
                 ('build', 'cuda_ptx'): 'none' if cuda_arch == 'none' else 'compute_' + cuda_arch.split(',')[-1][3:]})
    compiler = value('build', 'compiler') or ''
    first = run(cc.split() + ['--version']).stdout.split('\n')[0]
    if not re.fullmatch(r'[a-z][a-z0-9_-]* \d+(\.\d+)+\S*', compiler) or compiler.split(' ')[1] not in first:
        problems.append(f'build:compiler: {compiler!r} is not "ID VERSION" with VERSION in {cc} --version: {first!r}')
    cflags = (value('build', 'cflags') or '').split()
    missing = [f for f in flags.split() if f not in cflags]
    if not cflags or missing or any(w.startswith(('-I', '-M', '-isystem')) or w in ('-o', '-c', '-include') or
                                    w.endswith(('.c', '.o', '.h')) for w in cflags):
        problems.append(f'build:cflags: {cflags} (expected each of {flags.split()}, and no file or include path)')
    human = run([exe]).stdout
    for key, v in [('compiler', compiler), ('prefix', prefix), ('cuda_arch', cuda_arch), ('hip_arch', hip_arch),
                   ('cflags', ' '.join(cflags))]:
        if not re.search(r'^  ' + key + r' +' + re.escape(v) + '$', human, re.M):
            problems.append(f'human output: no line "  {key} ... {v}"')
    for (sec, key), v in want.items():
        if value(sec, key) != v:
            problems.append(f'{sec}:{key}: expected {v!r}, got {value(sec, key)!r}')
    table = re.findall(r'^\s*\{"((?:SHMEM|SHOAL)_[A-Z_]+)", ENV_[A-Z]+, "([^"]*)"', open(env_c).read(), re.M)
    if len(table) < 20:
        problems.append(f'{env_c}: found only {len(table)} table rows')
    for name, default in table:
        for field in ('type', 'value', 'set', 'accepts', 'help'):
            if value('env', f'{name}:{field}') in ((None,) if field == 'value' else (None, '')):
                problems.append(f'env:{name}:{field} missing or empty')
        if value('env', f'{name}:default') != default:
            problems.append(f'env:{name}:default: expected {default!r} (env.c), got {value("env", name + ":default")!r}')
    if (value('env', 'SHOAL_SPIN:value'), value('env', 'SHOAL_SPIN:set')) != ('7', 'yes'):
        problems.append('SHOAL_SPIN=7: expected env:SHOAL_SPIN:value:7 and set:yes')
    if value('env', 'SHMEM_DEBUG:set') != 'no' and 'SHMEM_DEBUG' not in os.environ:
        problems.append('env:SHMEM_DEBUG:set: expected no')
    allowed = os.sched_getaffinity(0)
    for n, bind in ((3, None), (len(allowed), 'core')):
        args = [exe, '--parsable', '--map', str(n)] + (['--bind-to', bind] if bind else [])
        out = run(args).stdout.splitlines()
        rows = [l for l in out if re.fullmatch(r'map:pe:\d+:cpus:.*', l)]
        if len(rows) != n or value_of(out, 'map:npes') != str(n):
            problems.append(f'--map {n}: expected {n} PE rows, got {len(rows)}')
        sets = [cpulist(l.split(':', 4)[4]) for l in rows]
        for i, s in enumerate(sets):
            if not s or not s <= allowed:
                problems.append(f'--map {n}: PE {i} cpus {sorted(s)} not within this process\'s CPUs {sorted(allowed)}')
        if bind == 'core' and len({min(s) for s in sets if s}) != n:
            problems.append(f'--map {n} --bind-to core: PEs share a CPU: {sets}')
    for args, msg in ((['--map', '0'], "shoal-info: --map 0: expected a PE count in [1, 4096]"),
                      (['--map', '2', '--bind-to', 'socket'], "shoal-info: --bind-to socket: expected core, numa or none"),
                      (['--map'], "shoal-info: option '--map' needs an argument")):
        b = run([exe] + args)
        if b.returncode != 2 or b.stderr.strip() != msg or b.stdout:
            problems.append(f'{args}: expected exit 2 and the one line {msg!r}, got {b.returncode} {b.stderr!r}')
    bad = run([exe, '--env'], {'SHOAL_SPIN': 'x'})
    if 'shoal-info: SHOAL_SPIN="x" is not valid' not in bad.stderr or 'SHOAL_SPIN: -1 [default -1] (set)' not in bad.stdout:
        problems.append(f'SHOAL_SPIN=x: expected the bad value named and the defaults shown, got {bad.stderr!r}')
    for p in problems:
        print('FAIL: ' + p)
    print('PASS' if not problems else f'{len(problems)} problems')
    return 1 if problems else 0


def value_of(lines, key):
    for l in lines:
        if l.startswith(key + ':'):
            return l[len(key) + 1:]
    return None


if __name__ == '__main__':
    sys.exit(main())
