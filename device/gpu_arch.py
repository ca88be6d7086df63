#!/usr/bin/env python3
"""gpu_arch.py - the GPU architectures meson builds for (device/meson.build; docs/gpu.md, "Choosing GPU architectures").

  gpu_arch.py cuda NVCC GPU_CUDA_ARCH GPU_CUDA_TEST_ARCH NVIDIA_SMI
  gpu_arch.py hip GPU_HIP_ARCH

cuda: prints key=value lines: archs (libshoal's kernels, oldest first, comma-separated), why (where that list came
from), test (the one architecture of the test programs), and warning when there is something to say (a GPU here that
nvcc cannot build; a list without sm_90 or newer: docs/gpu.md says why). NVIDIA_SMI is
nvidia-smi's path, or '' where meson did not find it. GPU_CUDA_ARCH 'auto' is the compute capability of every GPU
nvidia-smi lists, where this nvcc can build them all, else the default list (sm_80, sm_90, sm_100: those this nvcc
lists in --list-gpu-code); an explicit list is taken as given. GPU_CUDA_TEST_ARCH 'auto' is the oldest of the GPUs
seen, else sm_90. hip: prints archs (the gfx targets, one --offload-arch each).
A bad value exits 1 with one line naming the option and the value (meson stops with it), before any compiler runs.
In a separate script so that tests/scripts/check_gpu_arch.py can run it with a fake nvcc and nvidia-smi in a second.
"""
import re
import subprocess
import sys

DEFAULT = ['sm_80', 'sm_90', 'sm_100']
ARCH = re.compile(r'sm_(\d+)([af]?)')


def key(arch):
    m = ARCH.fullmatch(arch)
    return (int(m.group(1)), m.group(2))


def run(cmd):
    """stdout of cmd, or None when it cannot run, fails or hangs (a driver in a bad state must not stop meson)."""
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return r.stdout if r.returncode == 0 else None


def fail(msg):
    print(msg)
    sys.exit(1)


def check(option, arch, codes, nvcc):
    """arch as given to option: sm_NN (sm_90a, sm_100f: the arch-specific forms), one that this nvcc can build."""
    m = ARCH.fullmatch(arch)
    if not m:
        fail(f'{option}: "{arch}" is not an architecture sm_NN (expected auto or a list such as sm_80,sm_90)')
    if codes and 'sm_' + m.group(1) not in codes:
        fail(f'{option}: {arch} is not one that {nvcc} can build; it can build: {", ".join(codes)}')


def cuda(nvcc, arch_opt, test_opt, smi):
    out = run([nvcc, '--list-gpu-code'])  # empty before CUDA 11.1 (no such option): every sm_NN is then taken
    codes = [c for c in (out or '').split() if ARCH.fullmatch(c)]
    seen = set()
    smi_out = run([smi, '--query-gpu=compute_cap', '--format=csv,noheader']) if smi else None
    for line in (smi_out or '').splitlines():
        m = re.fullmatch(r'\s*(\d+)\.(\d+)\s*', line)  # "9.0" -> sm_90; "No devices were found" is no GPU
        if m:
            seen.add(f'sm_{m.group(1)}{m.group(2)}')
    seen = sorted(seen, key=key)
    warning = ''
    if arch_opt.strip() == 'auto':
        unknown = [a for a in seen if codes and a not in codes]
        if seen and not unknown:
            archs, why = seen, 'auto: the GPUs of this machine (nvidia-smi)'
        else:
            archs = [a for a in DEFAULT if not codes or a in codes] or ['sm_90']
            why = 'auto: no GPU seen by nvidia-smi here, the default list'
            if unknown:
                why = f'auto: this machine\'s {", ".join(unknown)} unknown to nvcc, the default list'
                warning = (f'gpu_cuda_arch=auto: this machine\'s GPUs ({", ".join(unknown)}) are not among what {nvcc} '
                           f'can build; building {", ".join(archs)} (the PTX of the newest runs by JIT on newer GPUs)')
    else:
        archs, why = [a.strip() for a in arch_opt.split(',')], 'gpu_cuda_arch'
        if '' in archs:
            fail(f'gpu_cuda_arch: "{arch_opt}" has an empty entry (expected auto or a list such as sm_80,sm_90)')
        for a in archs:
            check('gpu_cuda_arch', a, codes, nvcc)
        if len(set(archs)) != len(archs):
            fail(f'gpu_cuda_arch: "{arch_opt}" names an architecture twice')
        archs = sorted(archs, key=key)
        if key(archs[-1])[0] < 90:  # a newer GPU JIT-compiles the newest PTX, built without the __CUDA_ARCH__ >= 900 code
            warning = (f'gpu_cuda_arch={arch_opt}: H100/H200 and newer GPUs would run the {archs[-1]} PTX, JIT-compiled '
                       f'at load and without the collectives\' sm_90 code (programmatic dependent launch: slower small '
                       f'calls); add sm_90 if jobs run there')
    test = test_opt.strip()
    if test == 'auto':
        test = seen[0] if seen and (not codes or seen[0] in codes) else 'sm_90'
    else:
        check('gpu_cuda_test_arch', test, codes, nvcc)
    print(f'archs={",".join(archs)}\nwhy={why}\ntest={test}')
    if warning:
        print(f'warning={warning}')


def hip(arch_opt):
    archs = [a.strip() for a in arch_opt.split(',')]
    if len(set(archs)) != len(archs):
        fail(f'gpu_hip_arch: "{arch_opt}" names a target twice')
    for a in archs:
        if not re.fullmatch(r'gfx[0-9a-f]+(:[a-z+-]+)*', a):
            fail(f'gpu_hip_arch: "{a}" is not a gfx target (expected a list such as gfx90a or gfx90a,gfx942)')
    print(f'archs={",".join(archs)}')


if __name__ == '__main__':
    if len(sys.argv) == 6 and sys.argv[1] == 'cuda':
        cuda(*sys.argv[2:])
    elif len(sys.argv) == 3 and sys.argv[1] == 'hip':
        hip(sys.argv[2])
    else:
        fail(__doc__.split('\n\n')[1])
