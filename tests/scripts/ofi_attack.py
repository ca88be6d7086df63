#!/usr/bin/env python3
"""ofi_attack.py - a stranger attacks a running job's libfabric endpoints (the transport between nodes).

  ofi_attack.py OSHRUN VICTIM ATTACKER NPES PROVIDER [netns]

PROVIDER: net (FI_PROVIDER=net FI_NET_IFACE=...) or tcp (tcp;ofi_rxm: FI_PROVIDER=tcp FI_TCP_IFACE=...
SHOAL_OFI_PROVIDER=tcp). As root, runs `OSHRUN -n NPES --timeout 240 VICTIM DONE 20` with SHOAL_TRANSPORT=ofi
(tests/multi/ofi_victim: AMOs, puts and gets between the PEs in rounds of at most 5 s until the file DONE appears,
then every value checked; "ofi_victim PE <i> ok"). Once every PE printed its "ready" line (its pid and the addresses
of its heap and static buffers), the driver (root) finds each PE's listening TCP sockets (its /proc/PID/fd socket
inodes in /proc/PID/net/tcp, state LISTEN: the PEs' own, nobody else's) and the buffers' offsets in their regions
(/proc/PID/maps: the layout is no secret, only the memory key may protect the memory), and runs the attacker
(tests/multi/ofi_attacker) as uid/gid 65534 without groups (setpriv) against those ports. When it is done, the
driver creates DONE.

Where: on 127.0.0.1 (interface lo), or with "netns" the job runs in a network namespace A made here, the attacker in
a namespace B, joined by a veth pair (shoal0 on each side, 10.213.K.1 and 10.213.K.2/24, as tests/mpirun/netns.sh),
attacking 10.213.K.1; both namespaces are removed on exit. No traffic goes anywhere else.

Checks: the attacker ran and reached every port; no read, write or atomic of the attacker completed without error
(ATTACK lines with ok 0, no HIT line); every PE printed "ofi_victim PE i ok" (its memory unchanged: forged fallback
requests, junk and oversize messages, the flood, messages carrying remote CQ data and raw bytes changed nothing and stalled no round); oshrun exited 0
within JOB_LIMIT s of DONE; no process of the job or the attacker is left. One line "FAIL: ..." per failed check and
exit 1; exit 77 (skip) unless root with setpriv (and, for netns, unless namespaces can be made).
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from procs import live_procs  # noqa: E402

NOBODY = 65534
READY_LIMIT = 15.0    # s: every PE ready within this
ATTACK_LIMIT = 150.0  # s: the attacker's own bound (every class bounds itself: ~1 s per port on net, ~12 s on
                      # tcp;ofi_rxm, whose refused tries cost a new endpoint each; more on a loaded machine)
JOB_LIMIT = 60.0      # s: from DONE to oshrun's exit (see ROUND_LIMIT)
GONE_GRACE = 2.0      # s: the job's processes must be gone this long after oshrun exits
ROUND_LIMIT = '60'    # s: a round of the victim. Under the flood on a loaded 2-core machine a round on net took
                      # over 5 s, and once over 15 s, now and then (cause not found: docs/design/trust.md); a lost
                      # receive buffer or message, the bugs this catches, hangs for good
RMA_CLASSES = ('read', 'write', 'atomic')


def log(*a):
    print(*a, flush=True)


def skip(why):
    log(f'ofi_attack.py: skipped: {why}')
    sys.exit(77)


def listen_ports(pid):
    """[(ip, port)] of the TCP sockets in LISTEN state that process pid holds (IPv4 and IPv6 tables of its netns)."""
    inodes = set()
    try:
        for fd in os.listdir(f'/proc/{pid}/fd'):
            try:
                m = re.match(r'socket:\[(\d+)\]', os.readlink(f'/proc/{pid}/fd/{fd}'))
            except OSError:
                continue
            if m:
                inodes.add(m.group(1))
    except OSError:
        return []
    out = []
    for table in ('tcp', 'tcp6'):
        try:
            with open(f'/proc/{pid}/net/{table}') as f:
                lines = f.read().splitlines()[1:]
        except OSError:
            continue
        for ln in lines:
            fld = ln.split()
            if len(fld) < 10 or fld[3] != '0A' or fld[9] not in inodes:
                continue
            addr, port = fld[1].split(':')
            if table == 'tcp':
                ip = '.'.join(str(b) for b in reversed(bytes.fromhex(addr)))
            else:
                ip = 'v6:' + addr
            out.append((ip, int(port, 16)))
    return out


def region_offset(pid, va, name):
    """Offset of address va in the memfd mapping named name (shoal-heap, shoal-static) of process pid."""
    with open(f'/proc/{pid}/maps') as f:
        for ln in f:
            fld = ln.split()
            if len(fld) < 6 or name not in ln:
                continue
            lo, hi = (int(x, 16) for x in fld[0].split('-'))
            if lo <= va < hi:
                return va - lo + int(fld[2], 16)
    return None


class NetNS:
    """Two namespaces joined by a veth pair; removed by close()."""

    def __init__(self):
        tag = os.getpid()
        self.a, self.b = f'shoalOA{tag}', f'shoalOB{tag}'
        self.k = tag % 250 + 1
        self.made = []

    def ip(self, *args):
        return subprocess.run(['ip'] + list(args), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)

    def make(self):
        tag = os.getpid()
        for ns in (self.a, self.b):
            r = self.ip('netns', 'add', ns)
            if r.returncode:
                return f'ip netns add: {r.stderr.strip()}'
            self.made.append(ns)
        r = self.ip('link', 'add', f'soa{tag}', 'type', 'veth', 'peer', 'name', f'sob{tag}')
        if r.returncode:
            return f'ip link add veth: {r.stderr.strip()}'
        for ns, dev, host in ((self.a, f'soa{tag}', 1), (self.b, f'sob{tag}', 2)):
            for cmd in (['link', 'set', dev, 'netns', ns], ['-n', ns, 'link', 'set', dev, 'name', 'shoal0'],
                        ['-n', ns, 'addr', 'add', f'10.213.{self.k}.{host}/24', 'dev', 'shoal0'],
                        ['-n', ns, 'link', 'set', 'shoal0', 'up'], ['-n', ns, 'link', 'set', 'lo', 'up']):
                r = self.ip(*cmd)
                if r.returncode:
                    return f'ip {" ".join(cmd)}: {r.stderr.strip()}'
        return None

    def close(self):
        for ns in self.made:
            self.ip('netns', 'del', ns)
        self.made = []


def main():
    if len(sys.argv) < 6 or sys.argv[5] not in ('net', 'tcp') or sys.argv[6:] not in ([], ['netns']):
        log('usage: ofi_attack.py OSHRUN VICTIM ATTACKER NPES net|tcp [netns]')
        return 2
    oshrun, victim, attacker, npes, prov = sys.argv[1:6]
    npes = int(npes)
    netns = sys.argv[6:] == ['netns']
    if os.geteuid() != 0:
        skip('needs root (the attacker runs as uid 65534)')
    if not shutil.which('setpriv'):
        skip('no setpriv')
    ns = None
    if netns:
        if not shutil.which('ip'):
            skip('no ip command')
        ns = NetNS()
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
        signal.signal(signal.SIGINT, lambda *_: sys.exit(130))
        why = ns.make()
        if why:
            ns.close()
            skip(f'cannot make network namespaces here ({why})')
    try:
        return run(oshrun, victim, attacker, npes, prov, ns)
    finally:
        if ns:
            ns.close()


def run(oshrun, victim, attacker, npes, prov, ns):
    iface = 'shoal0' if ns else 'lo'
    target_ip = f'10.213.{ns.k}.1' if ns else '127.0.0.1'
    var = 'FI_NET_IFACE' if prov == 'net' else 'FI_TCP_IFACE'
    penv = {'FI_PROVIDER': prov, var: iface}
    if prov == 'tcp':
        penv['SHOAL_OFI_PROVIDER'] = 'tcp'
    fails = []
    tmp = tempfile.mkdtemp(prefix='shoal-ofiattack-')
    os.chmod(tmp, 0o755)
    done = os.path.join(tmp, 'done')  # the token: in the command line of every PE of this job
    env = dict(os.environ, SHOAL_TRANSPORT='ofi', **penv)
    for k in ('SHOAL_NODE_PES',):
        env.pop(k, None)
    pre_a = ['ip', 'netns', 'exec', ns.a] if ns else []
    pre_b = ['ip', 'netns', 'exec', ns.b] if ns else []
    cmd = pre_a + [oshrun, '-n', str(npes), '--timeout', '240', victim, done, ROUND_LIMIT]
    log('victim:', ' '.join(f'{k}={v}' for k, v in penv.items()), 'SHOAL_TRANSPORT=ofi', ' '.join(cmd))
    t0 = time.monotonic()
    job = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           start_new_session=True)
    out, err = [], []

    def pump(stream, sink, tag):
        for ln in stream:
            sink.append(ln.rstrip('\n'))
            log(f'[{tag}] {ln.rstrip()}')
    threads = [threading.Thread(target=pump, args=(job.stdout, out, 'job'), daemon=True),
               threading.Thread(target=pump, args=(job.stderr, err, 'job stderr'), daemon=True)]
    for t in threads:
        t.start()
    ready = {}
    while time.monotonic() - t0 < READY_LIMIT and len(ready) < npes and job.poll() is None:
        for ln in list(out):
            m = re.match(r'ofi_victim PE (\d+) ready pid (\d+) heap (0x[0-9a-f]+) static (0x[0-9a-f]+)$', ln)
            if m:
                ready[int(m.group(1))] = (int(m.group(2)), int(m.group(3), 16), int(m.group(4), 16))
        time.sleep(0.05)
    att_out = ''
    if len(ready) < npes:
        fails.append(f'only {len(ready)} of {npes} PEs ready within {READY_LIMIT:.0f} s')
    else:
        ports, hoff, soff = [], set(), set()
        for pe in sorted(ready):
            pid, hva, sva = ready[pe]
            hoff.add(region_offset(pid, hva, 'shoal-heap'))
            soff.add(region_offset(pid, sva, 'shoal-static'))
            lp = listen_ports(pid)
            usable = [p for ip, p in lp if ip in ('0.0.0.0', target_ip)]
            log(f'PE {pe}: pid {pid}, listening {lp}')
            if not usable:
                fails.append(f'PE {pe} (pid {pid}) has no TCP socket listening on {target_ip}')
            ports += usable
        if len(hoff) != 1 or len(soff) != 1 or None in hoff | soff:
            fails.append(f'buffer offsets not found or not symmetric: heap {hoff}, static {soff}')
        elif ports:
            h, s = hoff.pop(), soff.pop()
            log(f'hints: heap buffer at offset {h:#x} of the heap, static buffer at {s:#x} of static data')
            aenv = {'PATH': os.environ.get('PATH', '/usr/bin:/bin'), var: iface}
            for k in ('OFI_ATTACKER_VERBOSE', 'FI_LOG_LEVEL'):  # for a person looking into a failure
                if k in os.environ:
                    aenv[k] = os.environ[k]
            acmd = pre_b + ['setpriv', f'--reuid={NOBODY}', f'--regid={NOBODY}', '--clear-groups', attacker, prov,
                            target_ip, str(npes), hex(h), hex(s)] + [str(p) for p in ports]
            log('attacker:', ' '.join(acmd))
            try:
                a = subprocess.run(acmd, env=aenv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                   timeout=ATTACK_LIMIT)
                att_out = a.stdout
                if a.returncode:
                    fails.append(f'the attacker could not run (status {a.returncode})')
            except subprocess.TimeoutExpired as e:
                att_out = e.stdout or ''
                att_out = att_out.decode(errors='replace') if isinstance(att_out, bytes) else att_out
                fails.append(f'the attacker ran past {ATTACK_LIMIT:.0f} s')
            for ln in att_out.splitlines():
                log(f'[attacker] {ln}')
            seen = set()
            for ln in att_out.splitlines():
                m = re.match(r'ATTACK (\w+) port (\d+): ok (\d+) err (\d+) timeout (\d+) refused (\d+)$', ln)
                if not m:
                    continue
                cls, port, ok = m.group(1), int(m.group(2)), int(m.group(3))
                seen.add((cls, port))
                if cls in RMA_CLASSES and ok:
                    fails.append(f'attacker: {ok} {cls} operation(s) on port {port} completed without error')
            for port in ports:
                for cls in RMA_CLASSES + ('forged', 'junk', 'oversize', 'flood', 'senddata', 'raw'):
                    if (cls, port) not in seen:
                        fails.append(f'attacker: no {cls} result for port {port}')
    t_done = time.monotonic()
    with open(done, 'w'):
        pass
    try:
        rc = job.wait(timeout=JOB_LIMIT)
    except subprocess.TimeoutExpired:
        fails.append(f'oshrun still running {JOB_LIMIT:.0f} s after the done file: killed')
        os.killpg(job.pid, signal.SIGKILL)
        rc = job.wait()
    for t in threads:
        t.join(timeout=2)
    log(f'oshrun status {rc} after {time.monotonic() - t_done:.1f} s from the done file')
    if rc != 0:
        fails.append(f'oshrun exited {rc}, not 0')
    for pe in range(npes):
        if not any(re.match(rf'ofi_victim PE {pe} ok', ln) for ln in out):
            fails.append(f'PE {pe} did not print ok')
    for ln in err:
        if ln.startswith('ofi_victim PE'):
            fails.append(f'victim: {ln}')
    deadline = time.monotonic() + GONE_GRACE
    while live_procs(done) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = live_procs(done, with_cmd=True)
    if left:
        fails.append(f'processes left: {left}')
        for pid, _ in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    shutil.rmtree(tmp, ignore_errors=True)
    for f in fails:
        log('FAIL:', f)
    log('PASS' if not fails else f'{len(fails)} check(s) failed')
    return 1 if fails else 0


if __name__ == '__main__':
    sys.exit(main())
