#!/usr/bin/env python3
"""attack.py - another user on the node attacks a running job through oshrun's bootstrap.

  attack.py OSHRUN VICTIM NPES SCENARIO

As root, runs `OSHRUN -n NPES --timeout 60 VICTIM MODE TOKEN` (tests/multi/victim: every PE checks its values and
prints "victim PE <i> ok"; its last PE waits VICTIM_DELAY_MS = 1500 ms before shmem_init, so one rank is not connected
yet for a while), and at the same time runs this script again as the attacker, uid/gid 65534 with no groups
(setpriv --reuid=65534 --regid=65534 --clear-groups PYTHON attack.py --attacker SCENARIO ...).

The attacker attacks every listening abstract Unix socket whose name starts with "@shoal" that appeared after the job
started and belongs to the job (held by oshrun or one of its descendants; the job's own processes are the filter so
that other jobs on the node are left alone), as the driver sees them during the job's first DISCOVER_FOR seconds; the
driver (root, who can read the job's /proc/PID/fd) hands the names to the attacker on its stdin. Scenarios:
  none      no attacker (the control)
  silent    connect, send nothing, hold the connection until killed
  onebyte   connect, send one byte, hold
  idle64    open 64 connections, hold them all
  claim     send a well-formed HELLO of the bootstrap protocol of today (runtime/boot_proto.h) for rank NPES-1 before
            the real last PE connects, then follow that protocol as far as it goes: take part in the all-gathers,
            offering memfds of its own as the heap and the static data of "its" PE, and report all it receives
  fileheap  like claim, but the heap and static data offered are a file it may only read (opened O_RDONLY): a
            root-owned 0644 file the driver fills with a known pattern in a fresh temporary directory
Checks, run (a), mode run: oshrun exits 0 within JOB_LIMIT s; every PE printed "victim PE i ok"; the stranger received
none of the PEs' pids; no PE wrote into memory the stranger offered; for fileheap the file is unchanged (bytes, size,
mtime); no process of the job is left. Run (b), mode hang (PEs sleep after their checks): once every PE printed ok
(or after BROKEN_AFTER s), SIGINT to oshrun: it must exit within SIGINT_LIMIT s with status 130 (128 + SIGINT), and no
PE process may be left. Skipped (exit 77) unless root with setpriv. One line "FAIL: ..." per failed check, exit 1.
"""
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from procs import live_procs  # noqa: E402

SCENARIOS = ('none', 'silent', 'onebyte', 'idle64', 'claim', 'fileheap', 'flood')
NOBODY = 65534
DELAY_MS = 1500              # the last PE's delay before shmem_init
SYMMETRIC_SIZE = 2 << 20     # SHMEM_SYMMETRIC_SIZE given to the victim
INTERNAL_SIZE = 4 << 20      # SHOAL_INTERNAL_SIZE (runtime/shoal.h): the heap is user + internal
JOB_LIMIT = 30.0             # s: run (a) must end (status 0) within this
BROKEN_AFTER = 3.0           # s: run (b) sends SIGINT after every PE's ok, or after this long from the start
SIGINT_LIMIT = 1.0           # s: from SIGINT to oshrun's exit
PE_GONE_GRACE = 1.0          # s: the job's processes must be gone this long after oshrun exits
DISCOVER_FOR = 1.2           # s: sockets that appear this long after the start are attacked
FILE_SIZE = 64 * 1024        # the fileheap file
IDLE_CONNS = 64
MSG = struct.Struct('<IiqQ')  # shoal_boot_msg_t: type, rank, arg, len (24 bytes)
HELLO, ALLGATHER = 1, 2
GPU_HELLO_SIZE = 120         # sizeof(gpu_hello_t) in runtime/heap_gpu.c: the last all-gather of today's shmem_init


def log(*a):
    print(*a, flush=True)


# ---------------------------------------------------------------- /proc helpers (driver)

def shoal_listeners():
    """{inode: (name, sock_type)} of listening abstract Unix sockets named @shoal..., from /proc/net/unix."""
    out = {}
    try:
        with open('/proc/net/unix') as f:
            lines = f.read().splitlines()[1:]
    except OSError:
        return out
    for ln in lines:
        fld = ln.split(None, 7)
        if len(fld) < 8 or not fld[7].startswith('@shoal'):
            continue
        try:
            flags, typ, inode = int(fld[3], 16), int(fld[4], 16), int(fld[6])
        except ValueError:
            continue
        if flags & 0x10000:  # __SO_ACCEPTCON: a listening socket (accepted ones carry the same name)
            out[inode] = (fld[7], typ)
    return out


def descendants(root):
    """root and every live descendant of it."""
    kids = {}
    for p in os.listdir('/proc'):
        if not p.isdigit():
            continue
        try:
            with open(f'/proc/{p}/stat') as f:
                rest = f.read().rsplit(')', 1)[1].split()
        except (OSError, IndexError):
            continue
        kids.setdefault(int(rest[1]), []).append(int(p))
    seen, todo = {root}, [root]
    while todo:
        for c in kids.get(todo.pop(), []):
            if c not in seen:
                seen.add(c)
                todo.append(c)
    return seen


def socket_inodes(pids):
    out = set()
    for p in pids:
        try:
            fds = os.listdir(f'/proc/{p}/fd')
        except OSError:
            continue
        for fd in fds:
            try:
                m = re.match(r'socket:\[(\d+)\]$', os.readlink(f'/proc/{p}/fd/{fd}'))
            except OSError:
                continue
            if m:
                out.add(int(m.group(1)))
    return out


def describe_status(st):
    if st is None:
        return 'still running'
    if st < 0:
        try:
            name = signal.Signals(-st).name
        except ValueError:
            name = '?'
        return f'killed by signal {-st} ({name})'
    return f'status {st}'


class Proc:
    """A child under Popen, its output lines read by threads and kept."""

    def __init__(self, argv, env=None, stdin=subprocess.DEVNULL, merge=False):
        self.t0 = time.monotonic()
        self.p = subprocess.Popen(argv, env=env, stdin=stdin, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT if merge else subprocess.PIPE)
        self.pid = self.p.pid
        self.lines = {'out': [], 'err': []}
        self.lock = threading.Lock()
        streams = [(self.p.stdout, 'out')] + ([] if merge else [(self.p.stderr, 'err')])
        self.threads = [threading.Thread(target=self._read, args=s, daemon=True) for s in streams]
        for t in self.threads:
            t.start()
        self.t_exit = None

    def _read(self, stream, key):
        for raw in stream:
            with self.lock:
                self.lines[key].append(raw.decode(errors='replace').rstrip('\n'))

    def poll(self):
        st = self.p.poll()
        if st is not None and self.t_exit is None:
            self.t_exit = time.monotonic()
        return st

    def text(self, key):
        with self.lock:
            return list(self.lines[key])

    def kill(self):
        if self.poll() is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.p.wait()
        self.poll()
        for t in self.threads:
            t.join(2)


# ---------------------------------------------------------------- driver

def fill_pattern(n):
    return bytes(((i * 37) ^ (i >> 8) ^ 0xa5) & 0xff for i in range(n))


def attacker_python(script):
    """A python that uid 65534 can run (meson's may live under /root), or None."""
    cands = []
    for c in (sys.executable, '/usr/bin/python3', shutil.which('python3')):
        if c and c not in cands:
            cands.append(c)
    for c in cands:
        r = subprocess.run(['setpriv', f'--reuid={NOBODY}', f'--regid={NOBODY}', '--clear-groups', c, '-c',
                            f'open({script!r}).close()'], capture_output=True)
        if r.returncode == 0:
            return c
    return None


def run_once(label, oshrun, victim, n, scenario, mode, apy, tmpdir, problems):
    def fail(msg):
        problems.append(f'run {label} ({mode}): {msg}')

    token = f'shoalattack{os.getpid()}x{time.monotonic_ns() % 1000000}'
    path = None
    if scenario == 'fileheap':
        path = os.path.join(tmpdir, f'target-{label}')
        with open(path, 'wb') as f:
            f.write(fill_pattern(FILE_SIZE))
        os.chmod(path, 0o644)
        old = os.stat(path).st_mtime_ns - 2_000_000_000  # an mtime in the past: a write shows even at coarse clocks
        os.utime(path, ns=(old, old))
        st0 = os.stat(path)
    env = dict(os.environ, VICTIM_DELAY_MS=str(DELAY_MS), SHMEM_SYMMETRIC_SIZE=str(SYMMETRIC_SIZE))
    before = set(shoal_listeners())
    job = Proc([oshrun, '-n', str(n), '--timeout', '60', victim, mode, token], env=env)
    att = None
    if scenario != 'none':
        heap_total = (SYMMETRIC_SIZE + os.sysconf('SC_PAGE_SIZE') - 1) // os.sysconf('SC_PAGE_SIZE') * \
            os.sysconf('SC_PAGE_SIZE') + INTERNAL_SIZE
        argv = ['setpriv', f'--reuid={NOBODY}', f'--regid={NOBODY}', '--clear-groups', apy, STAGED['script'],
                '--attacker', scenario, str(n), str(heap_total), STAGED['victim'], path or '-']
        att = Proc(argv, stdin=subprocess.PIPE, merge=True)
    t0 = job.t0
    sent, pe_pids = set(), set()
    attacked = []
    ok_rx = re.compile(r'^victim PE (\d+) ok$')

    def oks():
        return {int(m.group(1)) for ln in job.text('out') for m in [ok_rx.match(ln)] if m}

    def step():
        """One round of watching: the job's processes, and new sockets for the attacker."""
        t = time.monotonic()
        if job.poll() is None:
            tree = descendants(job.pid)
            pe_pids.update(tree - {job.pid})
            if att and t - t0 < DISCOVER_FOR:
                inodes = socket_inodes(tree)
                for ino, (name, typ) in shoal_listeners().items():
                    if ino in before or ino not in inodes or name in sent:
                        continue
                    sent.add(name)
                    attacked.append(name)
                    try:
                        att.p.stdin.write(f'sock {typ} {name.encode().hex()}\n'.encode())
                        att.p.stdin.flush()
                    except OSError:
                        pass
        if att and t - t0 >= DISCOVER_FOR and not att.p.stdin.closed:
            try:
                att.p.stdin.close()
            except OSError:
                pass
        time.sleep(0.01)

    sigint_at = None
    if mode == 'run':
        while job.poll() is None and time.monotonic() - t0 < JOB_LIMIT:
            step()
        if job.poll() is None:
            fail(f'oshrun did not exit within {JOB_LIMIT:g} s (killed it)')
            job.kill()
        elif job.p.returncode != 0:
            fail(f'oshrun exited with {describe_status(job.p.returncode)} after {job.t_exit - t0:.2f} s (want status 0)')
        job.kill()  # reaps it and reads its output to the end (the last lines may still be in the pipe)
        missing = sorted(set(range(n)) - oks())
        if missing:
            fail(f'PEs {missing} did not print "victim PE i ok"')
    else:
        while job.poll() is None and len(oks() & set(range(n))) < n and time.monotonic() - t0 < BROKEN_AFTER:
            step()
        if job.poll() is not None:
            fail(f'oshrun exited with {describe_status(job.p.returncode)} after {job.t_exit - t0:.2f} s, before '
                 f'SIGINT was sent (every PE should still be running)')
        else:
            sigint_at = time.monotonic()
            os.kill(job.pid, signal.SIGINT)
            while job.poll() is None and time.monotonic() - sigint_at < SIGINT_LIMIT:
                time.sleep(0.005)
            if job.poll() is None:
                fail(f'oshrun did not exit within {SIGINT_LIMIT:g} s of SIGINT (killed it with SIGKILL)')
                job.kill()
            else:
                dt = job.t_exit - sigint_at
                if job.p.returncode != 130:
                    fail(f'oshrun exited {dt:.3f} s after SIGINT with {describe_status(job.p.returncode)} '
                         '(want status 130)')
    job.kill()  # reaps; a no-op when it has exited
    # Nothing of the job left: PEs (found as oshrun's descendants, and by the token in their command line).
    end = time.monotonic() + PE_GONE_GRACE

    def left():
        alive = set(live_procs(token))
        for p in pe_pids:
            try:
                with open(f'/proc/{p}/stat') as f:
                    if f.read().rsplit(')', 1)[1].split()[0] not in ('Z', 'X'):
                        alive.add(p)
            except (OSError, IndexError):
                pass
        return alive - {os.getpid()}
    while left() and time.monotonic() < end:
        time.sleep(0.02)
    rest = left()
    if rest:
        fail(f'processes of the job still alive {PE_GONE_GRACE:g} s after oshrun ended: {sorted(rest)}')
        for p in rest:
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
    if att:
        att.kill()
    # What the stranger got, and what it could make the job do.
    alines = att.text('out') if att else []
    if att and not attacked:  # an attack test that attacks nothing cannot fail: that is a failure of its own
        fail(f'no new @shoal listening socket of the job seen within {DISCOVER_FOR:g} s; nothing was attacked')
    for ln in alines:
        if 'attack failed:' in ln:
            fail(f'the attacker broke: {ln}')
    if scenario == 'flood' and attacked and not any('flooding with connections' in ln for ln in alines):
        fail('the flood did not start')
    received = b''.join(bytes.fromhex(m.group(1)) for ln in alines for m in [re.match(r'^recv \S+ ([0-9a-f]*)$', ln)]
                        if m)
    leaked = sorted(p for p in pe_pids if struct.pack('<q', p) in received or struct.pack('<i', p) in received)
    if leaked:
        fail(f'the stranger (uid {NOBODY}) received data naming the PEs (pids {leaked}) in the {len(received)} '
             'bytes it read from the job\'s socket')
    for ln in alines:
        if ln.startswith('written '):
            fail(f'the job wrote into memory the stranger offered as its PE\'s: {ln}')
    if path:
        st1 = os.stat(path)
        with open(path, 'rb') as f:
            data = f.read()
        want = fill_pattern(FILE_SIZE)
        if data != want:
            diff = [i for i in range(min(len(data), len(want))) if data[i] != want[i]]
            where = f'first at offset {diff[0]}, {len(diff)} bytes differ' if diff else ''
            fail(f'{path} (root-owned 0644, the stranger could only read it) was written: size {len(data)} (was '
                 f'{len(want)}) {where}; bytes 0..15 now {data[:16].hex()}')
        if st1.st_mtime_ns != st0.st_mtime_ns:
            fail(f'{path}: mtime changed ({st0.st_mtime_ns} -> {st1.st_mtime_ns})')
    # Diagnostics.
    log(f'--- run {label}: {scenario} at {n} PEs, mode {mode}: oshrun {describe_status(job.p.returncode)} after '
        f'{(job.t_exit or time.monotonic()) - t0:.3f} s' +
        (f' ({job.t_exit - sigint_at:.3f} s after SIGINT)' if sigint_at and job.t_exit else ''))
    log(f'attacked sockets: {attacked or "none"}; PE pids {sorted(pe_pids)}')
    for key in ('out', 'err'):
        txt = job.text(key)
        log(f'oshrun {key} ({len(txt)} lines):\n' + '\n'.join(txt[-30:]))
    if att:
        log(f'attacker output ({len(alines)} lines):\n' +
            '\n'.join(ln if len(ln) < 300 else ln[:300] + '...' for ln in alines[-40:]))


STAGED = {}  # the attacker's copies of this script and of the victim (driver)


def driver(argv):
    if len(argv) != 4 or argv[3] not in SCENARIOS:
        print(__doc__)
        return 2
    oshrun, victim, n, scenario = argv[0], argv[1], int(argv[2]), argv[3]
    if os.geteuid() != 0:
        log('SKIP: needs root (the job runs as root, the attacker as uid 65534)')
        return 77
    if not shutil.which('setpriv'):
        log('SKIP: setpriv (util-linux) is missing')
        return 77
    problems = []
    tmpdir = tempfile.mkdtemp(prefix='shoal-attack-')
    try:
        os.chmod(tmpdir, 0o755)  # the stranger must be able to open the files in it for reading
        # The attacker runs what it needs from here: the checkout may be in a folder uid 65534 cannot enter.
        here = os.path.dirname(os.path.abspath(__file__))
        for src, key in ((os.path.abspath(__file__), 'script'), (os.path.join(here, 'procs.py'), None),
                         (os.path.abspath(victim), 'victim'), (os.path.join(os.path.dirname(victim), 'flood'), None)):
            dst = os.path.join(tmpdir, os.path.basename(src))
            shutil.copy(src, dst)
            os.chmod(dst, 0o755)
            if key:
                STAGED[key] = dst
        apy = attacker_python(STAGED['script'])
        if not apy:
            log(f'SKIP: no python that uid {NOBODY} can run')
            return 77
        t_start = time.monotonic()
        run_once('a', oshrun, victim, n, scenario, 'run', apy, tmpdir, problems)
        run_once('b', oshrun, victim, n, scenario, 'hang', apy, tmpdir, problems)
        total = time.monotonic() - t_start
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
    for p in problems:
        log(f'FAIL: {scenario} np{n}: {p}')
    if problems:
        log(f'{len(problems)} problem(s) for attack {scenario} at {n} PEs ({total:.1f} s)')
        return 1
    log(f'PASS: attack {scenario} at {n} PEs: the job completed with its data intact, SIGINT ended it within '
        f'{SIGINT_LIMIT:g} s, nothing leaked or written ({total:.1f} s)')
    return 0


# ---------------------------------------------------------------- attacker (uid 65534)

def elf_static_len(path):
    """Bytes of the victim's writable segment as runtime/static.c computes them (page-rounded, RELRO excluded)."""
    page = os.sysconf('SC_PAGE_SIZE')
    with open(path, 'rb') as f:
        data = f.read()
    if data[:4] != b'\x7fELF' or data[4] != 2:
        return 0
    phoff = struct.unpack_from('<Q', data, 0x20)[0]
    phentsize, phnum = struct.unpack_from('<HH', data, 0x36)
    lo = hi = None
    relro_hi = 0
    for i in range(phnum):
        p_type, p_flags, _, vaddr, _, _, memsz, _ = struct.unpack_from('<IIQQQQQQ', data, phoff + i * phentsize)
        if p_type == 1 and p_flags & 2 and memsz:
            lo = vaddr if lo is None else min(lo, vaddr)
            hi = vaddr + memsz if hi is None else max(hi, vaddr + memsz)
        elif p_type == 0x6474e552:  # PT_GNU_RELRO
            relro_hi = vaddr + memsz
    if lo is None:
        return 0
    lo &= ~(page - 1)
    if lo < relro_hi <= hi:
        lo = relro_hi & ~(page - 1)
    hi = (hi + page - 1) & ~(page - 1)
    return hi - lo


class Attacker:
    def __init__(self, scenario, npes, heap_total, victim, path):
        self.scenario, self.npes, self.heap_total, self.path = scenario, npes, heap_total, path
        self.victim = victim
        self.lock = threading.Lock()
        self.held = []
        try:
            self.static_len = elf_static_len(victim)
        except (OSError, struct.error) as e:
            self.static_len = 0
            self.say(f'cannot read {victim}: {e}')
        self.watched = []  # (what, fd, length) of memory offered as ours

    def say(self, msg):
        with self.lock:
            print(msg, flush=True)

    def connect(self, name, typ):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET if typ == 5 else socket.SOCK_STREAM)
        s.connect('\0' + name[1:])
        self.held.append(s)
        return s

    def recv_exact(self, s, name, n):
        buf = b''
        while len(buf) < n:
            try:
                b = s.recv(min(n - len(buf), 1 << 16))
            except OSError as e:
                self.say(f'{name}: recv: {e}')
                break
            if not b:
                self.say(f'{name}: closed by the job after {len(buf)} of {n} bytes')
                break
            self.say(f'recv {name} {b.hex()}')
            buf += b
        return buf

    def offer(self, what, length):
        """fd offered as our PE's memory: a memfd of ours (claim) or the read-only file (fileheap)."""
        if self.scenario == 'fileheap':
            fd = os.open(self.path, os.O_RDONLY)
            self.say(f'offering {what}: {self.path} opened O_RDONLY as fd {fd}, {length} bytes')
        else:
            fd = os.memfd_create(f'stranger-{what}', 0)
            os.ftruncate(fd, length)
            self.watched.append((what, fd, min(length, 1 << 20)))
            self.say(f'offering {what}: a memfd of ours, fd {fd}, {length} bytes')
        return fd

    def watch(self):
        seen = set()
        while True:
            for what, fd, length in list(self.watched):
                if what in seen:
                    continue
                data = os.pread(fd, length, 0)
                if data != bytes(len(data)):
                    off = next(i for i, c in enumerate(data) if c)
                    seen.add(what)
                    self.say(f'written {what} memfd at offset {off}: {data[off:off + 16].hex()}')
            time.sleep(0.02)

    def claim(self, name, typ):
        s = self.connect(name, typ)
        rank, pid = self.npes - 1, os.getpid()
        try:
            s.sendall(MSG.pack(HELLO, rank, pid, 0))
            self.say(f'{name}: HELLO sent for rank {rank} as pid {pid}')
            heap_fd = self.offer('heap', self.heap_total)
            static_fd = self.offer('static', self.static_len)
            # The all-gathers of today's shmem_init, in order: heap {pid, fd, size}, a barrier, static data
            # {pid, fd, len}, static agreement (int), the GPU hello (all zeros: no GPU here).
            steps = [('heap', struct.pack('<qqQ', pid, heap_fd, self.heap_total)), ('barrier', b''),
                     ('static', struct.pack('<qqQ', pid, static_fd, self.static_len)), ('static ok', struct.pack('<i', 1)),
                     ('gpu hello', bytes(GPU_HELLO_SIZE))]
            for what, payload in steps:
                s.sendall(MSG.pack(ALLGATHER, rank, 0, len(payload)) + payload)
                hdr = self.recv_exact(s, name, MSG.size)
                if len(hdr) < MSG.size:
                    return
                typ_, rank_, arg_, ln = MSG.unpack(hdr)
                body = self.recv_exact(s, name, min(ln, 1 << 24))
                self.say(f'{name}: {what} all-gather: reply type {typ_} len {ln}')
                if what in ('heap', 'static') and len(body) == ln and ln == 24 * self.npes:
                    for p in range(self.npes):
                        epid, efd, esz = struct.unpack_from('<qqQ', body, 24 * p)
                        self.say(f'{name}: PE {p}: pid {epid} fd {efd} size {esz}')
            self.say(f'{name}: took part in every all-gather of shmem_init')
            while self.recv_exact(s, name, 1 << 16):
                pass
        except OSError as e:
            self.say(f'{name}: {e}')

    def attack(self, name, typ):
        try:
            if self.scenario == 'silent':
                self.connect(name, typ)
                self.say(f'{name}: connected, silent')
            elif self.scenario == 'onebyte':
                s = self.connect(name, typ)
                s.send(b'\x01')
                self.say(f'{name}: connected, sent one byte')
            elif self.scenario == 'flood':  # connect and close in a loop, from a compiled flooder (python is too slow)
                flooder = os.path.join(os.path.dirname(self.victim), 'flood')
                bare = name[1:] if name.startswith('@') else name  # the abstract name, without /proc's '@'
                self.held.append(subprocess.Popen([flooder, bare, str(typ), '3']))
                self.say(f'{name}: flooding with connections')
            elif self.scenario == 'idle64':
                for i in range(IDLE_CONNS):
                    try:
                        self.connect(name, typ)
                    except OSError as e:
                        self.say(f'{name}: connection {i}: {e}')
                self.say(f'{name}: {len(self.held)} idle connections open')
            else:
                self.claim(name, typ)
        except OSError as e:
            self.say(f'{name}: {e}')
        except Exception as e:  # noqa: BLE001 - the driver fails the test on this line
            self.say(f'{name}: attack failed: {e!r}')

    def main(self):
        self.say(f'attacker uid {os.getuid()} gid {os.getgid()} pid {os.getpid()}: {self.scenario}, static data '
                 f'{self.static_len} bytes, heap {self.heap_total} bytes')
        threading.Thread(target=self.watch, daemon=True).start()
        for ln in sys.stdin:
            f = ln.split()
            if len(f) == 3 and f[0] == 'sock':
                name = bytes.fromhex(f[2]).decode(errors='replace')
                threading.Thread(target=self.attack, args=(name, int(f[1])), daemon=True).start()
        while True:  # hold everything until killed
            time.sleep(3600)


def main():
    if len(sys.argv) == 7 and sys.argv[1] == '--attacker':
        _, _, scenario, npes, heap_total, victim, path = sys.argv
        Attacker(scenario, int(npes), int(heap_total), victim, path).main()
        return 0
    return driver(sys.argv[1:])


if __name__ == '__main__':
    sys.exit(main())
