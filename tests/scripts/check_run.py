#!/usr/bin/env python3
"""check_run.py - run a command and check its exit status and output (used by the multi-PE tests).

  check_run.py [--status N|nonzero] [--stdout RE]... [--stderr RE]... [--no-stdout RE]... [--no-stderr RE]...
               [--count-stdout N RE]... [--count-stderr N RE]... [--stdin TEXT | --stdin-socket] [--env VAR=VALUE]...
               [--unset VAR]... [--max-seconds S]
               -- command [args...]

--stdout/--stderr RE: some line of that stream matches RE (Python re, searched per line; anchor with ^ and $).
--no-stdout/--no-stderr RE: no line matches.  --count-stdout/--count-stderr N RE: exactly N lines match.
--env VAR=VALUE: set VAR (an empty VALUE sets it empty); --unset VAR: remove it from the command's environment.
--status: the exit status, a number or 'nonzero' (default 0).  --max-seconds: the command's wall time limit.
--stdin-socket: stdin is a Unix socket, and nothing may be written into it (a runtime that mistakes fd 0 for its
bootstrap socket would send its messages there).
On any mismatch prints what was expected and what came out, and exits 1.
"""
import argparse
import os
import socket
import re
import subprocess
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--status', default='0')
    ap.add_argument('--stdout', action='append', default=[])
    ap.add_argument('--stderr', action='append', default=[])
    ap.add_argument('--no-stdout', action='append', default=[])
    ap.add_argument('--no-stderr', action='append', default=[])
    ap.add_argument('--count-stdout', nargs=2, action='append', default=[], metavar=('N', 'RE'))
    ap.add_argument('--count-stderr', nargs=2, action='append', default=[], metavar=('N', 'RE'))
    ap.add_argument('--unset', action='append', default=[])
    ap.add_argument('--stdin', default=None)
    ap.add_argument('--stdin-socket', action='store_true')
    ap.add_argument('--env', action='append', default=[])
    ap.add_argument('--max-seconds', type=float, default=None)
    ap.add_argument('--pass-skip', action='store_true', help='exit 77 (a skip) when the command does')
    ap.add_argument('cmd', nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == '--' else a.cmd
    if not cmd:
        ap.error('no command')
    env = dict(os.environ)
    for kv in a.env:
        k, _, v = kv.partition('=')
        env[k] = v
    for k in a.unset:
        env.pop(k, None)
    t0 = time.monotonic()
    sock = socket.socketpair() if a.stdin_socket else None
    io = {'stdin': sock[1]} if sock else {'input': (a.stdin or '').encode()}
    try:
        r = subprocess.run(cmd, env=env, capture_output=True, timeout=(a.max_seconds or 300) + 30, **io)
    except subprocess.TimeoutExpired:
        print(f'FAIL: {cmd} did not finish within {(a.max_seconds or 300) + 30} s')
        return 1
    dt = time.monotonic() - t0
    out, err = r.stdout.decode(errors='replace'), r.stderr.decode(errors='replace')
    if a.pass_skip and r.returncode == 77:
        print(out[-4000:] + err[-4000:], end='')
        return 77
    problems = []
    if a.status == 'nonzero':
        if r.returncode == 0:
            problems.append('exit status 0, expected non-zero')
    elif r.returncode != int(a.status):
        problems.append(f'exit status {r.returncode}, expected {a.status}')
    for name, text, want, unwanted in (('stdout', out, a.stdout, a.no_stdout), ('stderr', err, a.stderr, a.no_stderr)):
        lines = text.splitlines()
        for rx in want:
            if not any(re.search(rx, ln) for ln in lines):
                problems.append(f'no {name} line matches {rx!r}')
        for rx in unwanted:
            bad = [ln for ln in lines if re.search(rx, ln)]
            if bad:
                problems.append(f'{name} line {bad[0]!r} matches the unwanted {rx!r}')
    for name, text, counts in (('stdout', out, a.count_stdout), ('stderr', err, a.count_stderr)):
        for n, rx in counts:
            got = sum(1 for ln in text.splitlines() if re.search(rx, ln))
            if got != int(n):
                problems.append(f'{got} {name} lines match {rx!r}, expected {n}')
    if sock:
        sock[1].close()
        sock[0].setblocking(False)
        try:
            got = sock[0].recv(4096)
        except BlockingIOError:
            got = b''
        if got:
            problems.append(f'{len(got)} bytes were written into stdin (a socket): {got[:32]!r}')
    if a.max_seconds is not None and dt > a.max_seconds:
        problems.append(f'took {dt:.2f} s, limit {a.max_seconds} s')
    print(f'command: {" ".join(cmd)}\nexit status {r.returncode} after {dt:.2f} s')
    print('--- stdout ---\n' + out[-4000:] + '--- stderr ---\n' + err[-4000:] + '---')
    for p in problems:
        print('FAIL: ' + p)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
