#!/usr/bin/env python3
"""launcher.py - oshrun's behaviour on failures, and "nothing left behind".

  launcher.py OSHRUN PROGRAM NPES SCENARIO

PROGRAM is tests/multi/launcher (it prints "pid RANK PID" per PE, then behaves as its MODE says). Scenarios:
  ok           exit 0
  exit1        one PE calls exit(1): oshrun exits 1, the other PEs are stopped within 1 s of that PE's exit
  sigkill      one PE dies of SIGKILL: oshrun exits 137 (128 + 9) within 1 s, naming the PE and the signal
  global_exit  one PE calls shmem_global_exit(3): oshrun exits 3 within 1 s
  status       the last PE exits 5, PE 0 exits 7 later: oshrun exits 5 (the first non-zero status)
  timeout      every PE hangs; --timeout 2: oshrun exits 124 after about 2 s, naming every PE still running
  tag          --tag-output: every stdout/stderr line starts with "[PE n] " (partial last lines too)
  stdin        oshrun's stdin reaches PE 0 only; the other PEs read EOF at once
  kill_pe      kill -9 of one PE: oshrun exits 137 and stops the rest
  kill_oshrun  kill -9 of oshrun itself: every PE dies too (PR_SET_PDEATHSIG)
Every scenario also checks that nothing is left behind: no new entry in /dev/shm or in /tmp ($TMPDIR), and no process
of the run (oshrun or PE) alive afterwards. When it can, the script runs itself in a private mount namespace with empty
tmpfs mounts on /tmp and /dev/shm (unshare -m, or unshare -rm without root), so other work on the machine cannot
disturb the listings; otherwise it compares listings of the real directories.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from procs import live_procs  # noqa: E402

KILL_GRACE = 1.0     # s: PEs must be gone this long after oshrun exits (or is killed)
STOP_LIMIT = 1.0     # s: from a failing PE's last line to oshrun's exit
WATCH_DIRS = ['/dev/shm', '/tmp']


def listing():
    out = set()
    for d in WATCH_DIRS + ([os.environ['TMPDIR']] if os.environ.get('TMPDIR') else []):
        try:
            out |= {os.path.join(d, e) for e in os.listdir(d)}
        except OSError:
            pass
    return out


class Run:
    """oshrun under Popen with both streams read by threads, each line time-stamped."""

    def __init__(self, argv, stdin_text=None):
        self.t0 = time.monotonic()
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.lines = {'out': [], 'err': []}
        self.cond = threading.Condition()
        self.threads = [threading.Thread(target=self._read, args=(s, k), daemon=True)
                        for s, k in ((self.p.stdout, 'out'), (self.p.stderr, 'err'))]
        for t in self.threads:
            t.start()
        if stdin_text is not None:
            self.p.stdin.write(stdin_text.encode())
        self.p.stdin.close()

    def _read(self, stream, key):
        for raw in stream:
            with self.cond:
                self.lines[key].append((time.monotonic(), raw.decode(errors='replace').rstrip('\n')))
                self.cond.notify_all()

    def wait_lines(self, rx, count, timeout=30):
        """Waits until count stdout lines match rx; returns the matches."""
        end = time.monotonic() + timeout
        with self.cond:
            while True:
                got = [m for _, ln in self.lines['out'] for m in [re.search(rx, ln)] if m]
                if len(got) >= count or time.monotonic() > end or self.p.poll() is not None:
                    return got
                self.cond.wait(0.05)

    def finish(self, timeout=60):
        try:
            self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
        self.t_exit = time.monotonic()
        for t in self.threads:
            t.join(5)
        return self.p.returncode

    def text(self, key):
        return '\n'.join(ln for _, ln in self.lines[key])

    def when(self, rx):
        for t, ln in self.lines['out']:
            if re.search(rx, ln):
                return t
        return None


def scenario(oshrun, prog, n, name, token, problems):
    def expect(cond, msg):
        if not cond:
            problems.append(msg)

    mode = {'timeout': 'hang', 'kill_pe': 'sleep', 'kill_oshrun': 'sleep'}.get(name, name)
    opts = ['--timeout', '2'] if name == 'timeout' else ['--timeout', '20']
    if name == 'tag':
        opts.append('--tag-output')
    r = Run([oshrun, '-n', str(n)] + opts + [prog, mode, token],
            stdin_text='hello stdin\n' if name == 'stdin' else None)
    pids = {}
    if name in ('kill_pe', 'kill_oshrun'):
        for m in r.wait_lines(r'^pid (\d+) (\d+)$', n):
            pids[int(m.group(1))] = int(m.group(2))
        expect(len(pids) == n, f'only {len(pids)} of {n} PEs started')
        time.sleep(0.1)
        if name == 'kill_pe' and n - 1 in pids:
            t_kill = time.monotonic()
            os.kill(pids[n - 1], signal.SIGKILL)
        else:
            t_kill = time.monotonic()
            r.p.send_signal(signal.SIGKILL)
    st = r.finish()
    out, err = r.text('out'), r.text('err')
    for m in re.finditer(r'^pid (\d+) (\d+)$', out, re.M):
        pids[int(m.group(1))] = int(m.group(2))
    print(f'--- {name} at {n} PEs: exit status {st} after {r.t_exit - r.t0:.3f} s')
    print('stdout:\n' + out[-3000:] + '\nstderr:\n' + err[-3000:])

    def stopped_within(t_from, what):
        if t_from is None:
            problems.append(f'{what}: the failing PE never said "exiting"')
            return
        dt = r.t_exit - t_from
        print(f'{name}: oshrun exited {dt:.3f} s after {what}')
        expect(dt < STOP_LIMIT, f'{what}: oshrun took {dt:.3f} s (limit {STOP_LIMIT} s) to stop the job')

    if name == 'ok':
        expect(st == 0, f'exit status {st}, want 0')
        expect(sorted(pids) == list(range(n)), f'PEs that printed their pid: {sorted(pids)}')
    elif name == 'exit1':
        expect(st == 1, f'exit status {st}, want 1')
        stopped_within(r.when(r'^exiting$'), 'the PE called exit(1)')
        expect(re.search(rf'PE {n - 1} \(pid \d+\) exited with status 1', err), 'oshrun did not name the failed PE')
    elif name == 'sigkill':
        expect(st == 137, f'exit status {st}, want 137')
        stopped_within(r.when(r'^exiting$'), 'the PE killed itself')
        expect(re.search(rf'PE {n - 1} \(pid \d+\) was killed by signal 9', err), 'oshrun did not name PE and signal')
    elif name == 'global_exit':
        expect(st == 3, f'exit status {st}, want 3')
        stopped_within(r.when(r'^exiting$'), 'the PE called shmem_global_exit(3)')
    elif name == 'status':
        expect(st == 5, f'exit status {st}, want 5 (the first non-zero)')
    elif name == 'timeout':
        expect(st == 124, f'exit status {st}, want 124')
        running = ','.join(str(i) for i in range(n))
        expect(re.search(rf'^oshrun: timeout after 2 s;.*PEs still running: {running}$', err, re.M),
               f'no "timeout after 2 s ... PEs still running: {running}" line')
        expect(2.0 <= r.t_exit - r.t0 < 4.0, f'timeout took {r.t_exit - r.t0:.2f} s')
    elif name == 'tag':
        expect(st == 0, f'exit status {st}, want 0')
        for i in range(n):
            for key, rx in (('out', rf'^\[PE {i}\] out from PE {i}$'), ('out', rf'^\[PE {i}\] partial {i}$'),
                            ('out', rf'^\[PE {i}\] pid {i} \d+$'), ('err', rf'^\[PE {i}\] err from PE {i}$')):
                expect(re.search(rx, r.text(key), re.M), f'no {key} line matches {rx}')
        for key in ('out', 'err'):
            bad = [ln for _, ln in r.lines[key] if not re.match(r'^\[PE \d+\] ', ln) and not ln.startswith('oshrun:')]
            expect(not bad, f'untagged {key} lines: {bad[:3]}')
    elif name == 'stdin':
        expect(st == 0, f'exit status {st}, want 0')
        expect(re.search(r'^PE 0 read 12 bytes: hello stdin$', out, re.M), 'PE 0 did not read oshrun\'s stdin')
        for i in range(1, n):
            expect(re.search(rf'^PE {i} read 0 bytes: $', out, re.M), f'PE {i} did not read EOF')
    elif name == 'kill_pe':
        expect(st == 137, f'exit status {st}, want 137')
        dt = r.t_exit - t_kill
        print(f'kill_pe: oshrun exited {dt:.3f} s after the kill')
        expect(dt < STOP_LIMIT + 0.2, f'oshrun took {dt:.3f} s to stop the job after kill -9 of a PE')
    elif name == 'kill_oshrun':
        expect(st == -9, f'oshrun status {st}, want killed by SIGKILL')
    # Nothing left behind: no process of this run, PEs included.
    end = time.monotonic() + KILL_GRACE
    while live_procs(token) and time.monotonic() < end:
        time.sleep(0.02)
    left = live_procs(token)
    expect(not left, f'processes still alive {KILL_GRACE} s after oshrun ended: {left}')
    for pid in pids.values():
        try:
            with open(f'/proc/{pid}/stat') as f:
                state = f.read().rsplit(')', 1)[1].split()[0]
            expect(state in ('Z', 'X'), f'PE pid {pid} still alive (state {state})')
        except OSError:
            pass
    for pid in left:
        os.kill(pid, signal.SIGKILL)


def main():
    if len(sys.argv) != 5 and not (len(sys.argv) == 6 and sys.argv[1] == '--in-ns'):
        print(__doc__)
        return 2
    in_ns = sys.argv[1] == '--in-ns'
    oshrun, prog, n, name = sys.argv[-4:]
    n = int(n)
    if not in_ns and shutil.which('unshare'):
        # Private /tmp and /dev/shm: root mounts directly; others try a user namespace (unshare -r).
        ns = ['unshare', '-m'] + ([] if os.geteuid() == 0 else ['-r']) + ['--propagation', 'private']
        if subprocess.run(ns + ['true'], capture_output=True).returncode == 0:
            return subprocess.run(ns + [sys.executable, os.path.abspath(__file__), '--in-ns', oshrun, prog, str(n),
                                        name]).returncode
    private = set()
    if in_ns:
        # Do not hide the build (or this script) when they live under one of the directories.
        needed = [os.getcwd(), os.path.realpath(oshrun), os.path.realpath(prog), os.path.realpath(__file__)]
        for d in WATCH_DIRS:
            if any(p == d or p.startswith(d + '/') for p in needed):
                continue
            if subprocess.run(['mount', '-t', 'tmpfs', '-o', 'mode=1777', 'shoal-test', d]).returncode == 0:
                private.add(d)
        if '/tmp' in private:
            os.environ['TMPDIR'] = '/tmp'
    print(f'private empty mounts: {sorted(private) or "none"}; other directories are compared before/after')
    token = f'shoaltok{os.getpid()}x{time.monotonic_ns() % 1000000}'
    problems = []
    before = listing()
    scenario(oshrun, prog, n, name, token, problems)
    new = listing() - before
    end = time.monotonic() + 3  # outside a private mount other work's files come and go (compilers): keep what stays
    while any(os.path.dirname(p) not in private for p in new) and time.monotonic() < end:
        time.sleep(0.25)
        new = {p for p in new if os.path.dirname(p) in private or os.path.exists(p)}
    if new:
        problems.append(f'new entries left behind: {sorted(new)[:10]}')
    for p in problems:
        print('FAIL: ' + p)
    print('PASS' if not problems else f'{len(problems)} problem(s)')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
