#!/usr/bin/env python3
"""check_gpu_arch.py GPU_ARCH_PY OUTDIR - the GPU architectures meson picks (device/gpu_arch.py), with a fake nvcc and
nvidia-smi written to OUTDIR, so without a GPU, a CUDA toolkit or a new meson setup.

- gpu_cuda_arch=auto: the GPUs nvidia-smi lists (9.0 -> sm_90; 8.0, 9.0, 9.0 -> sm_80,sm_90 and tests for sm_80),
  else the default list sm_80,sm_90,sm_100 (no nvidia-smi, "No devices were found" with exit 6, a hanging one is not
  waited for here: not tested), cut to what nvcc lists (an nvcc listing sm_75 sm_80 sm_86: sm_80), and the default
  list with a warning when this machine's GPU is one nvcc cannot build;
- an explicit list is taken sorted (sm_100,sm_90 -> sm_90,sm_100), spaces dropped, sm_90a accepted; a list without
  sm_90 or newer (sm_80) gives a warning (H100/H200 would run its PTX without the sm_90 code);
- bad values stop with one line naming the option and the value: sm90, compute_90, an empty entry, sm_70 where nvcc
  cannot build it (the line lists what it can), a list for gpu_cuda_test_arch, a twice-named architecture;
- gpu_hip_arch: gfx90a,gfx942:xnack- accepted; gfx and sm_90 refused.
"""
import os
import subprocess
import sys

NVCC13 = 'sm_75 sm_80 sm_86 sm_87 sm_88 sm_89 sm_90 sm_100 sm_110 sm_103 sm_120 sm_121'


def script(path, body):
    with open(path, 'w') as f:
        f.write('#!/bin/sh\n' + body + '\n')
    os.chmod(path, 0o755)
    return path


def main():
    gpu_arch, outdir = sys.argv[1:3]
    os.makedirs(outdir, exist_ok=True)
    nvcc13 = script(os.path.join(outdir, 'nvcc13'), f'[ "$1" = --list-gpu-code ] && echo "{NVCC13}"')
    nvcc11 = script(os.path.join(outdir, 'nvcc11'), '[ "$1" = --list-gpu-code ] && printf "sm_75\\nsm_80\\nsm_86\\n"')
    def smi(name, body):
        return script(os.path.join(outdir, 'nvidia-smi-' + name), body)
    h200 = smi('h200', 'echo 9.0')
    mixed = smi('mixed', 'printf "9.0\\n8.0\\n9.0\\n"')
    nogpu = smi('nogpu', 'echo "No devices were found"; exit 6')
    blackwell = smi('b200', 'echo 12.0')
    problems = []

    def run(*args):
        r = subprocess.run([sys.executable, gpu_arch] + list(args), capture_output=True, text=True, timeout=60)
        return r.returncode, r.stdout

    def want(args, expect):
        rc, out = run('cuda', *args)
        got = dict(l.split('=', 1) for l in out.splitlines() if '=' in l)
        for k, v in expect.items():
            ok = (v in got.get(k, '')) if k in ('why', 'warning') else got.get(k) == v
            if rc or not ok:
                problems.append(f'cuda {args[1:]}: expected {k}={v!r}, got exit {rc}: {out.strip()!r}')
        if 'warning' not in expect and 'warning' in got:
            problems.append(f'cuda {args[1:]}: unexpected warning {got["warning"]!r}')

    def refuse(args, line):
        rc, out = run(*args)
        if rc != 1 or out.strip() != line:
            problems.append(f'{args[1:]}: expected exit 1 and the one line {line!r}, got {rc}: {out.strip()!r}')

    default = {'archs': 'sm_80,sm_90,sm_100', 'test': 'sm_90', 'why': 'no GPU seen by nvidia-smi'}
    want([nvcc13, 'auto', 'auto', h200], {'archs': 'sm_90', 'test': 'sm_90', 'why': 'GPUs of this machine'})
    want([nvcc13, 'auto', 'auto', mixed], {'archs': 'sm_80,sm_90', 'test': 'sm_80'})
    want([nvcc13, 'auto', 'auto', ''], default)
    want([nvcc13, 'auto', 'auto', nogpu], default)
    want([nvcc11, 'auto', 'auto', ''], {'archs': 'sm_80', 'test': 'sm_90'})
    want([nvcc11, 'auto', 'auto', blackwell], {'archs': 'sm_80', 'warning': "this machine's GPUs (sm_120) are not"})
    want([nvcc13, 'auto', 'sm_100', h200], {'archs': 'sm_90', 'test': 'sm_100'})
    want([nvcc13, 'sm_100, sm_90', 'auto', ''], {'archs': 'sm_90,sm_100', 'test': 'sm_90', 'why': 'gpu_cuda_arch'})
    want([nvcc13, 'sm_90a', 'auto', h200], {'archs': 'sm_90a', 'test': 'sm_90'})
    want([nvcc13, 'sm_80', 'auto', ''], {'archs': 'sm_80', 'warning': 'H100/H200 and newer GPUs would run the sm_80 PTX'})
    bad = 'is not an architecture sm_NN (expected auto or a list such as sm_80,sm_90)'
    refuse(['cuda', nvcc13, 'sm90', 'auto', ''], f'gpu_cuda_arch: "sm90" {bad}')
    refuse(['cuda', nvcc13, 'compute_90', 'auto', ''], f'gpu_cuda_arch: "compute_90" {bad}')
    refuse(['cuda', nvcc13, 'sm_80,', 'auto', ''],
           'gpu_cuda_arch: "sm_80," has an empty entry (expected auto or a list such as sm_80,sm_90)')
    refuse(['cuda', nvcc13, 'sm_70', 'auto', ''],
           f'gpu_cuda_arch: sm_70 is not one that {nvcc13} can build; it can build: {NVCC13.replace(" ", ", ")}')
    refuse(['cuda', nvcc13, 'auto', 'sm_80,sm_90', ''], f'gpu_cuda_test_arch: "sm_80,sm_90" {bad}')
    refuse(['cuda', nvcc13, 'sm_90,sm_90', 'auto', ''], 'gpu_cuda_arch: "sm_90,sm_90" names an architecture twice')
    rc, out = run('hip', 'gfx90a,gfx942:xnack-')
    if rc or out.strip() != 'archs=gfx90a,gfx942:xnack-':
        problems.append(f'hip gfx90a,gfx942:xnack-: got exit {rc}: {out.strip()!r}')
    for a in ('gfx', 'sm_90'):
        refuse(['hip', a], f'gpu_hip_arch: "{a}" is not a gfx target (expected a list such as gfx90a or gfx90a,gfx942)')
    for p in problems:
        print('FAIL: ' + p)
    print('PASS' if not problems else f'{len(problems)} problems')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
