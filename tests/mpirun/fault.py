#!/usr/bin/env python3
"""fault.py - a fault between nodes, or a PE lost, while PEs wait on the wire: the job must end, soon, with one line
that says why, and nothing of it may be left on any host.

  fault.py NETNS_SH OSHRUN FAULT_PROGRAM linkdown|kill|stop|lodown|segv

FAULT_PROGRAM is tests/mpirun/fault (fault.c): every PE prints "fault: PE i of n running (pid P)" once it has done a
round of traffic with every other; the strike comes when every PE has. Each run gets a TOKEN, unique to it, in the
PEs' command lines (a process search in /proc finds them). SHOAL_OFI_TIMEOUT is 3 unless the environment sets it.

  linkdown  two hosts (NETNS_SH: network namespaces A and B joined by a veth pair, mpirun in A), 1+1 PEs in mode
            'wait' (every PE waits on its own memory, nothing in flight), then 2+1 PEs in mode 'loop' (ring puts,
            atomics, gets, barriers); strike: 'ip -n B link set shoal0 down'.
  kill      two hosts, 2+1 PEs, mode loop; strike: SIGKILL to the PE of host B.
  stop      two hosts, 2+1 PEs, mode loop; strike: SIGSTOP to the PE of host B. The line must name that PE.
  lodown    one host, a network namespace of this test's own (ip netns add; lo up), 'ip netns exec NS oshrun -n 3'
            with SHOAL_TRANSPORT=ofi FI_PROVIDER=net FI_NET_IFACE=lo (every PE through libfabric); strike:
            'ip -n NS link set lo down' (the namespace's lo, never this machine's).
  segv      oshrun -n 2, mode segv (the last PE writes through a null pointer), once with SHOAL_TRANSPORT=ofi (tcp on
            lo) and once on shared memory, each in a fresh empty directory, without IPATH_NO_BACKTRACE or
            HFI_NO_BACKTRACE in the environment.

Checks, linkdown/kill/stop/lodown:
  - the launcher (mpirun, or oshrun) exits within LIMIT = 20 s of the strike, with a non-zero status;
  - linkdown, stop, lodown: at least one line matches '^shoal: PE [0-9]+: .*PE [0-9]+ did not answer for' (stop:
    every such line names the stopped PE); every run: at most one line '^shoal: PE i:' per PE i;
  - within GRACE = 3 s of the launcher's exit, no process is left in the job's namespaces (ip netns pids) nor, after
    the namespaces are removed, any process whose command line holds TOKEN;
  - no /dev/shm/shoal* entry appeared.
Checks, segv: oshrun exits within 20 s with status 139 and says 'PE 1 (pid P) was killed by signal 11 (Segmentation
fault)', not 'exited with status'; no file appeared in the run's directory (libinfinipath's crash handler writes
'PROG.80s-PID,HOST.btr' there).
Whatever is left when a check fails is killed (SIGKILL) and the namespaces removed. Exits 0 when every check passed, 1
otherwise, 77 (a skip) where namespaces cannot be made, without root, or without mpirun/PMIx (NETNS_SH --probe).
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'scripts'))
from procs import live_procs  # noqa: E402

LIMIT = 20.0    # seconds from the strike to the launcher's exit
GRACE = 3.0     # seconds from the launcher's exit to the last process of the job gone
STARTUP = 40.0  # seconds for every PE to say it runs
DID_NOT_ANSWER = re.compile(r'^shoal: PE [0-9]+: .*PE ([0-9]+) did not answer for')
SHOAL_LINE = re.compile(r'^shoal: PE ([0-9]+):')
RUNNING = re.compile(r'^fault: PE ([0-9]+) of ([0-9]+) running \(pid ([0-9]+)\)$')


class Job:
    """A launcher whose stdout and stderr lines are collected as they come, with their times."""

    def __init__(self, cmd, env, cwd=None):
        self.cmd = cmd
        self.t0 = time.monotonic()
        self.p = subprocess.Popen(cmd, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, errors='replace', start_new_session=True)
        self.lines = {'stdout': [], 'stderr': []}
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self._read, args=(s,), daemon=True) for s in ('stdout', 'stderr')]
        for t in self.threads:
            t.start()

    def _read(self, name):
        for ln in getattr(self.p, name):
            with self.lock:
                self.lines[name].append((time.monotonic(), ln.rstrip('\n')))

    def text(self, name):
        with self.lock:
            return [ln for _, ln in self.lines[name]]

    def running(self):
        """{pe: pid} of the PEs that said they run, and the job size they gave (0 before any)."""
        pes, n = {}, 0
        for ln in self.text('stdout'):
            m = RUNNING.match(ln)
            if m:
                pes[int(m.group(1))] = int(m.group(3))
                n = int(m.group(2))
        return pes, n

    def wait_running(self, n, limit):
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline and self.p.poll() is None:
            pes, _ = self.running()
            if len(pes) == n:
                return pes
            time.sleep(0.05)
        pes, _ = self.running()
        return pes if len(pes) == n else None

    def finish(self):
        for t in self.threads:
            t.join(5)

    def report(self, t_strike):
        base = t_strike if t_strike is not None else self.t0
        print(f'command: {" ".join(self.cmd)}')
        with self.lock:
            for name in ('stdout', 'stderr'):
                print(f'--- {name} (seconds from the {"strike" if t_strike is not None else "start"}) ---')
                for t, ln in self.lines[name]:
                    print(f'{t - base:+7.2f} {ln}')
        print('---')


def netns_pids(ns):
    r = subprocess.run(['ip', 'netns', 'pids', ns], capture_output=True, text=True)
    return [int(x) for x in r.stdout.split()] if r.returncode == 0 else []


def describe(pids):
    out = []
    for pid in pids:
        try:
            with open(f'/proc/{pid}/cmdline', 'rb') as f:
                cmd = f.read().replace(b'\0', b' ').decode(errors='replace').strip()
            with open(f'/proc/{pid}/stat') as f:
                state = f.read().rsplit(')', 1)[1].split()[0]
        except OSError:
            continue
        out.append(f'{pid} [{state}] {cmd[:160]}')
    return out


def kill_pids(pids):
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def wait_gone(find, limit):
    """find() until it returns nothing or limit seconds have passed; what it last returned."""
    deadline = time.monotonic() + limit
    left = find()
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = find()
    return left


def shm_entries():
    try:
        return {e for e in os.listdir('/dev/shm') if e.startswith('shoal')}
    except OSError:
        return set()


def check_lines(job, problems, need_line, stopped_pe=None):
    err = job.text('stderr') + job.text('stdout')
    hits = [ln for ln in err if DID_NOT_ANSWER.match(ln)]
    if need_line and not hits:
        problems.append(f'no line matches {DID_NOT_ANSWER.pattern!r}')
    if stopped_pe is not None:
        for ln in hits:
            if int(DID_NOT_ANSWER.match(ln).group(1)) != stopped_pe:
                problems.append(f'a line names another PE than the stopped PE {stopped_pe}: {ln!r}')
    per_pe = {}
    for ln in err:
        m = SHOAL_LINE.match(ln)
        if m:
            per_pe[int(m.group(1))] = per_pe.get(int(m.group(1)), 0) + 1
    for pe, c in sorted(per_pe.items()):
        if c > 1:
            problems.append(f'PE {pe} printed {c} lines "shoal: PE {pe}: ...", expected at most 1')
    past = [ln for ln in job.text('stdout') if 'past the end' in ln or ' done after ' in ln]
    if past:
        problems.append(f'a PE went on as if nothing happened: {past[0]!r}')


def job_procs(token, netns_sh):
    """pids of the processes whose command line holds token, but for netns.sh itself (it has TOKEN among its
    arguments, and so has its subshell that waits for mpirun): the PEs, mpirun, and whatever else took them."""
    return [p for p, c in live_procs(token, with_cmd=True) if netns_sh not in c]


def run_netns(netns_sh, prog, layout, mode, strike, problems):
    """One job over two hosts; strike is linkdown|kill|stop."""
    na, nb = layout
    n = na + nb
    label = f'{strike} {na}+{nb} ({mode})'
    print(f'===== {label}')
    token = f'shoal-fault-{os.getpid()}-{time.monotonic_ns()}'
    pause = tempfile.mkdtemp(prefix='shoal-fault-')
    env = dict(os.environ, NETNS_PAUSE_DIR=pause, MPIRUN_SH_TIMEOUT='100')
    shm_before = shm_entries()
    job = Job([netns_sh, f'{na},{nb}', prog, mode, '60', token], env)
    t_strike = None
    mine = []
    names = None
    stopped = None
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not os.path.exists(os.path.join(pause, 'names')) and job.p.poll() is None:
            time.sleep(0.05)
        try:
            with open(os.path.join(pause, 'names')) as f:
                names = f.read().split()
        except OSError:
            problems.append(f'{label}: {netns_sh} did not name its namespaces (exit status {job.p.poll()})')
            return
        pes = job.wait_running(n, STARTUP)
        if pes is None:
            problems.append(f'{label}: not every PE said it runs within {STARTUP} s: {sorted(job.running()[0])}')
            return
        far = n - 1  # ranks 0..na-1 on host A, na..n-1 on host B
        t_strike = time.monotonic()
        if strike == 'linkdown':
            r = subprocess.run(['ip', '-n', names[1], 'link', 'set', 'shoal0', 'down'], capture_output=True, text=True)
            if r.returncode:
                problems.append(f'{label}: ip link set shoal0 down failed: {r.stderr.strip()}')
                return
            print(f'strike: ip -n {names[1]} link set shoal0 down')
        else:
            sig = signal.SIGKILL if strike == 'kill' else signal.SIGSTOP
            os.kill(pes[far], sig)
            stopped = far
            print(f'strike: {sig.name} to PE {far} (pid {pes[far]}) on host B')
        status_file = os.path.join(pause, 'status')
        deadline = t_strike + LIMIT
        while time.monotonic() < deadline and not os.path.exists(status_file):
            time.sleep(0.05)
        if not os.path.exists(status_file):
            problems.append(f'{label}: mpirun did not exit within {LIMIT:.0f} s of the strike')
            for ns in names:
                left = describe(netns_pids(ns))
                print(f'alive in {ns} {LIMIT:.0f} s after the strike: {len(left)} processes')
                for d in left:
                    print(f'  {d}')
            return
        dt = time.monotonic() - t_strike
        with open(status_file) as f:
            rc = int(f.read().strip() or -1)
        print(f'mpirun exited with status {rc}, {dt:.2f} s after the strike')
        if rc == 0:
            problems.append(f'{label}: mpirun exited 0, expected non-zero')
        for ns in names:
            left = wait_gone(lambda: netns_pids(ns), GRACE)
            if left:
                problems.append(f'{label}: {len(left)} processes left in namespace {ns} {GRACE:.0f} s after mpirun '
                                f'exited: {describe(left)}')
        check_lines(job, problems, strike != 'kill', stopped if strike == 'stop' else None)
    finally:
        # whatever is left: kill it (SIGKILL reaches stopped processes too), then let netns.sh remove the namespaces
        if names:
            for ns in names:
                mine += netns_pids(ns)
        kill_pids(mine + job_procs(token, netns_sh))
        open(os.path.join(pause, 'go'), 'w').close()
        try:
            job.p.wait(15)
        except subprocess.TimeoutExpired:
            problems.append(f'{label}: {netns_sh} did not end after mpirun')
            os.killpg(job.p.pid, signal.SIGTERM)
            job.p.wait()
        job.finish()
        if t_strike is not None:
            left = wait_gone(lambda: job_procs(token, netns_sh), 1.0)
            if left:
                problems.append(f'{label}: processes of the job alive after its namespaces were removed'
                                f'{" (and SIGKILL)" if mine else ""}: {describe(left)}')
            kill_pids(left)
        new_shm = shm_entries() - shm_before
        if new_shm:
            problems.append(f'{label}: /dev/shm entries appeared: {sorted(new_shm)}')
        job.report(t_strike)
        shutil.rmtree(pause, ignore_errors=True)


def run_lodown(oshrun, prog, problems):
    label = 'lodown oshrun -n 3 (SHOAL_TRANSPORT=ofi, net on lo)'
    print(f'===== {label}')
    ns = f'shoalL{os.getpid()}'
    r = subprocess.run(['ip', 'netns', 'add', ns], capture_output=True, text=True)
    if r.returncode:
        return f'cannot create a network namespace here: {r.stderr.strip()}'
    token = f'shoal-fault-{os.getpid()}-{time.monotonic_ns()}'
    shm_before = shm_entries()
    job = None
    t_strike = None
    try:
        subprocess.run(['ip', '-n', ns, 'link', 'set', 'lo', 'up'], check=True)
        env = dict(os.environ, SHOAL_TRANSPORT='ofi', FI_PROVIDER='net', FI_NET_IFACE='lo')
        env.pop('SHOAL_OFI_PROVIDER', None)
        job = Job(['ip', 'netns', 'exec', ns, oshrun, '-n', '3', '--timeout', '100', prog, 'loop', '60', token], env)
        pes = job.wait_running(3, STARTUP)
        if pes is None:
            problems.append(f'{label}: not every PE said it runs within {STARTUP} s: {sorted(job.running()[0])}')
            return None
        t_strike = time.monotonic()
        subprocess.run(['ip', '-n', ns, 'link', 'set', 'lo', 'down'], check=True)
        print(f'strike: ip -n {ns} link set lo down')
        try:
            job.p.wait(max(0.1, t_strike + LIMIT - time.monotonic()))
        except subprocess.TimeoutExpired:
            problems.append(f'{label}: oshrun did not exit within {LIMIT:.0f} s of the strike')
            left = describe(netns_pids(ns))
            print(f'alive in {ns} {LIMIT:.0f} s after the strike: {len(left)} processes')
            for d in left:
                print(f'  {d}')
            return None
        print(f'oshrun exited with status {job.p.returncode}, {time.monotonic() - t_strike:.2f} s after the strike')
        if job.p.returncode == 0:
            problems.append(f'{label}: oshrun exited 0, expected non-zero')
        left = wait_gone(lambda: netns_pids(ns), GRACE)
        if left:
            problems.append(f'{label}: {len(left)} processes left in namespace {ns} {GRACE:.0f} s after oshrun '
                            f'exited: {describe(left)}')
        left = live_procs(token, with_cmd=True)
        if left:
            problems.append(f'{label}: processes of the job alive after oshrun exited: {left}')
        check_lines(job, problems, True)
    finally:
        kill_pids(netns_pids(ns) + [p for p, _ in live_procs(token, with_cmd=True)])
        if job:
            try:
                job.p.wait(10)
            except subprocess.TimeoutExpired:
                job.p.kill()
                job.p.wait()
            job.finish()
        subprocess.run(['ip', 'netns', 'del', ns], capture_output=True)
        new_shm = shm_entries() - shm_before
        if new_shm:
            problems.append(f'{label}: /dev/shm entries appeared: {sorted(new_shm)}')
        if job:
            job.report(t_strike)
    return None


def run_segv(oshrun, prog, transport, problems):
    label = f'segv oshrun -n 2 ({transport})'
    print(f'===== {label}')
    env = dict(os.environ)
    for v in ('IPATH_NO_BACKTRACE', 'HFI_NO_BACKTRACE', 'SHOAL_TRANSPORT', 'SHOAL_NODE_PES'):
        env.pop(v, None)
    if transport == 'ofi':
        env.update(SHOAL_TRANSPORT='ofi', FI_PROVIDER='tcp', FI_TCP_IFACE='lo', SHOAL_OFI_PROVIDER='tcp')
    token = f'shoal-fault-{os.getpid()}-{time.monotonic_ns()}'
    d = tempfile.mkdtemp(prefix='shoal-segv-')
    job = Job([os.path.abspath(oshrun), '-n', '2', '--timeout', '30', os.path.abspath(prog), 'segv', '0', token], env, cwd=d)
    try:
        job.p.wait(LIMIT)
    except subprocess.TimeoutExpired:
        problems.append(f'{label}: oshrun did not exit within {LIMIT:.0f} s')
        job.p.kill()
        job.p.wait()
    job.finish()
    kill_pids([p for p, _ in live_procs(token, with_cmd=True)])
    print(f'oshrun exited with status {job.p.returncode} after {time.monotonic() - job.t0:.2f} s')
    err = job.text('stderr')
    rx = r'^oshrun: PE 1 \(pid [0-9]+\) was killed by signal 11 \(Segmentation fault\); stopping the job$'
    if not any(re.match(rx, ln) for ln in err):
        problems.append(f'{label}: no stderr line matches {rx!r}')
    if job.p.returncode != 139:
        problems.append(f'{label}: exit status {job.p.returncode}, expected 139 (128 + SIGSEGV)')
    files = sorted(os.listdir(d))
    if files:
        problems.append(f'{label}: files appeared in the run\'s directory: {files}')
        for f in files:
            try:
                with open(os.path.join(d, f), errors='replace') as fh:
                    print(f'--- {f} ---\n{fh.read()[:1500]}')
            except OSError:
                pass
    job.report(None)
    shutil.rmtree(d, ignore_errors=True)


def main():
    if len(sys.argv) != 5 or sys.argv[4] not in ('linkdown', 'kill', 'stop', 'lodown', 'segv'):
        sys.exit(__doc__)
    (netns_sh, oshrun, prog), scenario = (os.path.abspath(a) for a in sys.argv[1:4]), sys.argv[4]
    # meson's timeout (SIGTERM): leave through the cleanups (kill the job, remove the namespaces)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit('fault.py: terminated (SIGTERM)'))
    os.environ.setdefault('SHOAL_OFI_TIMEOUT', '3')
    print(f'SHOAL_OFI_TIMEOUT={os.environ["SHOAL_OFI_TIMEOUT"]}')
    problems = []
    if scenario == 'segv':
        for transport in ('ofi', 'shm'):
            run_segv(oshrun, prog, transport, problems)
    elif scenario == 'lodown':
        if os.getuid() != 0 or not shutil.which('ip'):
            print('fault.py: skipped: network namespaces need root and the ip command')
            return 77
        why = run_lodown(oshrun, prog, problems)
        if why:
            print(f'fault.py: skipped: {why}')
            return 77
    else:
        r = subprocess.run([netns_sh, '--probe'], capture_output=True, text=True)
        if r.returncode == 77:
            print((r.stdout + r.stderr).strip())
            return 77
        if r.returncode:
            print(f'FAIL: {netns_sh} --probe exited {r.returncode}: {(r.stdout + r.stderr).strip()}')
            return 1
        if scenario == 'linkdown':
            run_netns(netns_sh, prog, (1, 1), 'wait', 'linkdown', problems)
            run_netns(netns_sh, prog, (2, 1), 'loop', 'linkdown', problems)
        else:
            run_netns(netns_sh, prog, (2, 1), 'loop', scenario, problems)
    for pr in problems:
        print('FAIL: ' + pr)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
