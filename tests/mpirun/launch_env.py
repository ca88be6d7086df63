#!/usr/bin/env python3
"""launch_env.py - a Shoal program started without any launcher, but with one variable of another launcher's.

  launch_env.py HAVE_PMIX NPES_PROGRAM VAR VALUE [NAME=VAL...]

Runs NPES_PROGRAM (tests/mpirun/npes) directly, in an environment stripped of every launcher's variables (PMIX_*,
SHOAL_*, OMPI_*, ORTE_*, OPAL_*, PRTE_*, PMI_*, SLURM_*, MPI_LOCALNRANKS, HYDRA_*, SHMEM_*) except VAR=VALUE and the
NAME=VAL given (a task number such as SLURM_PROCID=2, SLURM_JOB_ID, SHOAL_BOOTSTRAP=single).
  VALUE > 1: the program must fail within 10 s (a non-zero exit, not a signal), print nothing on stdout, and print on
    stderr exactly two lines, both naming the process's task number as its PE (the launcher's rank variable, else 0,
    never "PE 0" from every task): one that says VAR=VALUE makes this one of VALUE processes without a bootstrap (its
    exact text, which names the lack of PMIx when HAVE_PMIX is 0), then shmem_init's fatal "bootstrap failed" line.
  VALUE 1, or SHOAL_BOOTSTRAP=single: the program runs as a 1-PE job ("npes 1" passes: "npes: OK: one job of 1
    PEs"), exits 0, nothing on stderr.
"""
import os
import re
import subprocess
import sys
import time

STRIP_PREFIXES = ('PMIX_', 'SHOAL_', 'OMPI_', 'ORTE_', 'OPAL_', 'PRTE_', 'PMI_', 'SLURM_', 'HYDRA_', 'SHMEM_')
STRIP_NAMES = ('MPI_LOCALNRANKS', 'PMI_RANK', 'PMI_FD')
LIMIT = 10.0


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    have_pmix, prog, var, value = sys.argv[1] == '1', sys.argv[2], sys.argv[3], int(sys.argv[4])
    extra = dict(a.split('=', 1) for a in sys.argv[5:])
    env = {k: v for k, v in os.environ.items() if not k.startswith(STRIP_PREFIXES) and k not in STRIP_NAMES}
    env[var] = str(value)
    env.update(extra)
    rank_var = {'SLURM_NTASKS': 'SLURM_PROCID', 'SLURM_STEP_NUM_TASKS': 'SLURM_PROCID', 'PMI_SIZE': 'PMI_RANK',
                'OMPI_COMM_WORLD_SIZE': 'OMPI_COMM_WORLD_RANK'}.get(var)
    pe = int(extra.get(rank_var, 0))
    single = extra.get('SHOAL_BOOTSTRAP') == 'single'
    shown = ' '.join(sys.argv[5:] + [f'{var}={value}'])
    cmd = [prog, '1' if single else str(value)]  # npes N: checks it is one job of N PEs
    t0 = time.monotonic()
    try:
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=LIMIT + 20, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        print(f'FAIL: {cmd} with {var}={value} did not finish within {LIMIT + 20} s')
        return 1
    dt = time.monotonic() - t0
    print(f'command: {shown} {" ".join(cmd)} (launcher variables removed)\nexit status {r.returncode} after '
          f'{dt:.2f} s\n--- stdout ---\n{r.stdout}--- stderr ---\n{r.stderr}---')
    out, err = r.stdout.splitlines(), r.stderr.splitlines()
    problems = []
    if dt > LIMIT:
        problems.append(f'took {dt:.2f} s, limit {LIMIT} s')
    if value > 1 and not single:
        first = (f'shoal: PE {pe}: shmem_init: {var}={value} says this is one of {value} processes, but no bootstrap '
                 f'reaches them (no oshrun, no PMIx server{"" if have_pmix else "; this Shoal was built without PMIx"})'
                 f': run it with oshrun, mpirun, prterun or srun --mpi=pmix (docs/launching.md; SHOAL_BOOTSTRAP=single '
                 f'runs each as a 1-PE job)')
        fatal = f'shoal: PE {pe}: shmem_init: bootstrap failed (the line above says why)'
        if r.returncode <= 0:
            problems.append(f'exit status {r.returncode}, expected a non-zero exit (not a signal)')
        starts = [ln for ln in err if re.match(f'^shoal: PE {pe}: shmem_init: {re.escape(var)}={value} says this is one '
                                               f'of {value} processes', ln)]
        if len(starts) != 1:
            problems.append(f'{len(starts)} stderr lines start with "shoal: PE {pe}: shmem_init: {var}={value} says this '
                            f'is one of {value} processes", expected exactly 1')
        if err != [first, fatal]:
            problems.append(f'stderr is {err!r},\n  expected exactly {[first, fatal]!r}')
        if out:
            problems.append(f'stdout is {out!r}, expected nothing (the program must not get past shmem_init)')
    else:
        if r.returncode != 0:
            problems.append(f'exit status {r.returncode}, expected 0')
        want = ['npes: PE 0 of 1, local 0 of 1', 'npes: OK: one job of 1 PEs']
        if out != want:
            problems.append(f'stdout is {out!r}, expected {want!r}')
        if err:
            problems.append(f'stderr is {err!r}, expected nothing')
    for p in problems:
        print('FAIL: ' + p)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
