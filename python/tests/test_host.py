#!/usr/bin/env python3
"""The shoal Python package on the host heap, run under oshrun at 1, 2 and 3 PEs (python/meson.build's tests).

Asserts values against numpy: put/get around the ring, fcollect, alltoall, sum/prod/min/max reductions (in place
too, on TEAM_WORLD and TEAM_SHARED), the base table (peer_ptrs, get_peer_array: a peer's values read by load), the
DLPack capsule's layout (consumed by numpy.from_dlpack through a host-device subclass) and the exceptions raised
for bad arguments. Exits 77 without numpy; prints one line per failed check and exits 1 if any failed.
`test_host.py uncaught OSHRUN` (python-uncaught) runs this file at 2 PEs with PE 1 raising an uncaught exception and
checks that oshrun ends the job at once with PE 1's status instead of hanging until its --timeout.
"""
import subprocess
import sys
import time

try:
    import numpy as np
except ImportError:
    print('python-host: numpy is missing (Debian: python3-numpy): skipped')
    sys.exit(77)

import shoal

failures = []
checks = [0]


def check(cond, what):
    checks[0] += 1
    if not cond:
        failures.append(what)
        print(f'python-host: PE {shoal.my_pe()}: FAILED: {what}', flush=True)


def raises(exc, text, fn, *args, **kw):
    """fn(*args) raises exc whose message contains text."""
    try:
        fn(*args, **kw)
    except exc as e:
        check(text in str(e), f'{fn.__name__}: message {str(e)!r} lacks {text!r}')
        return
    except Exception as e:  # noqa: BLE001 - a wrong exception type is a failure, reported
        check(False, f'{fn.__name__}: raised {type(e).__name__}({e}), expected {exc.__name__} with {text!r}')
        return
    check(False, f'{fn.__name__}: raised nothing, expected {exc.__name__} with {text!r}')


def main():
    raises(shoal.ShoalError, 'shoal.my_pe: called before shoal.init()', shoal.my_pe)
    shoal.init()
    shoal.init()  # idempotent
    me, n = shoal.my_pe(), shoal.n_pes()
    want_n = int(sys.argv[1]) if len(sys.argv) > 1 else n
    check(n == want_n, f'n_pes() = {n}, expected {want_n}')
    check(0 <= me < n, f'my_pe() = {me} out of [0, {n})')
    check(shoal.team_n_pes(shoal.TEAM_WORLD) == n and shoal.team_my_pe(shoal.TEAM_WORLD) == me,
          'TEAM_WORLD numbering')
    check(shoal.team_n_pes(shoal.TEAM_SHARED) == n, 'TEAM_SHARED holds every PE on one node')
    nxt, prv = (me + 1) % n, (me - 1) % n

    # ---- put / get around the ring ----
    a = shoal.zeros((8,), 'int64')
    check(isinstance(a, np.ndarray) and a.dtype == np.int64 and a.shape == (8,), 'zeros: an int64 numpy array')
    shoal.put(a, np.arange(8, dtype=np.int64) + 100 * me, nxt)
    shoal.barrier_all()
    check(np.array_equal(a, np.arange(8) + 100 * prv), f'put around the ring: got {a}, expected PE {prv}\'s values')
    b = np.zeros(8, dtype=np.int64)
    shoal.get(b, a, nxt)
    check(np.array_equal(b, np.arange(8) + 100 * me), f'get from the next PE: got {b}')
    part = np.zeros(3, dtype=np.int64)
    shoal.get(part, a, prv)          # dest shorter than source: its first bytes
    check(np.array_equal(part, np.arange(3) + 100 * ((prv - 1) % n)), f'get of a prefix: got {part}')
    shoal.barrier_all()              # every PE's gets are done before a changes
    shoal.put(a, b'\x07' * 8, me)    # bytes as source: 8 bytes into element 0
    check(a[0] == 0x0707070707070707 and a[1] == 1 + 100 * prv, f'put of bytes: got {a[:2]}')
    shoal.barrier_all()

    # ---- the base table: every peer's instance mapped here (one node) ----
    ptrs = shoal.peer_ptrs(a)
    check(len(ptrs) == n and ptrs[me] == a.__array_interface__['data'][0], f'peer_ptrs: {ptrs}')
    check(all(ptrs), 'peer_ptrs: every PE of one node is mapped')
    for p in range(n):
        pa = shoal.get_peer_array(a, p)
        want = np.arange(8) + 100 * ((p - 1) % n)
        want[0] = 0x0707070707070707
        check(np.array_equal(pa, want), f'get_peer_array(a, {p}): got {pa}, expected {want}')
    shoal.barrier_all()

    # ---- fcollect ----
    src = shoal.array((3,), 'float64')
    src[:] = me + 0.5 * np.arange(3)
    dst = shoal.zeros((n, 3), 'float64')
    shoal.fcollect(shoal.TEAM_WORLD, dst, src)
    want = np.array([[p + 0.5 * i for i in range(3)] for p in range(n)])
    check(np.array_equal(dst, want), f'fcollect: got {dst.tolist()}, expected {want.tolist()}')

    # ---- alltoall: block j of src goes to member j, into block me ----
    s2 = shoal.array((n, 2), 'int32')
    for j in range(n):
        s2[j] = [me * 10 + j, -(me * 10 + j)]
    d2 = shoal.zeros((n, 2), 'int32')
    shoal.alltoall(shoal.TEAM_WORLD, d2, s2)
    want = np.array([[j * 10 + me, -(j * 10 + me)] for j in range(n)], dtype=np.int32)
    check(np.array_equal(d2, want), f'alltoall: got {d2.tolist()}, expected {want.tolist()}')

    # ---- reductions against numpy over every PE's values ----
    def values(p, dt):
        return ((p + 1) * np.arange(1, 6) - p).astype(dt)
    for dt in ('int64', 'int32', 'float64', 'float32', 'uint16'):
        for op, f in (('sum', np.sum), ('prod', np.prod), ('min', np.min), ('max', np.max)):
            x = shoal.array((5,), dt)
            x[:] = values(me, dt)
            y = shoal.zeros((5,), dt)
            team = shoal.TEAM_SHARED if op == 'max' else shoal.TEAM_WORLD
            shoal.reduce(team, y, x, op)
            want = f(np.stack([values(p, dt) for p in range(n)]), axis=0).astype(dt)
            ok = np.allclose(y, want) if dt.startswith('float') else np.array_equal(y, want)
            check(ok, f'reduce {dt} {op}: got {y.tolist()}, expected {want.tolist()}')
            shoal.free(y)
            shoal.free(x)
    z = shoal.array((4,), 'float64')
    z[:] = me + 1.0
    shoal.allreduce(shoal.TEAM_WORLD, z, z, 'sum')  # in place
    check(np.array_equal(z, np.full(4, n * (n + 1) / 2)), f'allreduce in place: got {z}')

    # ---- DLPack capsule, consumed by numpy (a host-device view; the layout is the CUDA one's) ----
    class HostDL(shoal.DeviceArray):
        def __dlpack_device__(self):
            return (1, 0)  # kDLCPU
    hv = HostDL(z.__array_interface__['data'][0], (2, 2), 'float64', owner=False)
    live = len(shoal._dl_live)
    got = np.from_dlpack(hv)
    check(got.shape == (2, 2) and np.array_equal(got.ravel(), z), f'numpy.from_dlpack: got {got}')
    del got
    check(len(shoal._dl_live) == live, 'DLPack deleter ran once the consumer let go')
    cap = hv.__dlpack__()
    del cap                                  # never consumed: the capsule's destructor releases it
    check(len(shoal._dl_live) == live, 'an unconsumed capsule is released')
    cai = hv.__cuda_array_interface__
    check(cai['version'] == 3 and cai['typestr'] == '<f8' and cai['shape'] == (2, 2) and 'stream' not in cai,
          f'__cuda_array_interface__: {cai}')
    bf = HostDL(z.__array_interface__['data'][0], (2,), 'bfloat16', owner=False)
    check(not hasattr(bf, '__cuda_array_interface__'), 'bfloat16: hasattr(__cuda_array_interface__) is False')
    raises(AttributeError, 'bfloat16 has no __cuda_array_interface__ type: use DLPack', getattr, bf,
           '__cuda_array_interface__')

    # __dlpack__(stream): for CUDA, None is the legacy default stream (as 1); only -1 skips the wait for the stream
    # the data was written on (the wait itself is recorded here instead of made: no GPU)
    synced, real_sync = [], shoal._cuda_stream_sync
    shoal._cuda_stream_sync = synced.append
    try:
        for written, consumer, want in ((5, None, [5]), (5, 1, [5]), (5, 5, []), (5, -1, []), (0, None, []),
                                        (0, 2, []), (0, 7, [0])):
            synced.clear()
            hv._stream = written
            hv.__dlpack__(stream=consumer)
            check(synced == want, f'__dlpack__(stream={consumer}) of data written on stream {written}: waited for '
                                  f'{synced}, expected {want}')
    finally:
        shoal._cuda_stream_sync = real_sync
        hv._stream = None
    check(len(shoal._dl_live) == live, 'the capsules of the stream checks are released')

    # put from a numpy scalar: np.asarray copies it into a temporary that must outlive shmem_putmem. The wrapper
    # allocates small numpy arrays (which reuse any just-freed buffer of that size) before the real shmem_putmem.
    real_lib = shoal._lib

    class ReuseFreed:
        def __getattr__(self, name):
            return getattr(real_lib, name)

        def shmem_putmem(self, d, s, nbytes, pe):
            junk = [np.full(1, -1, dtype=np.int64) for _ in range(64)]
            real_lib.shmem_putmem(d, s, nbytes, pe)
            del junk
    sc = shoal.zeros((2,), 'int64')
    shoal._lib = ReuseFreed()
    try:
        shoal.put(sc, np.int64(0x1234), me)
    finally:
        shoal._lib = real_lib
    check(sc[0] == 0x1234, f'put of np.int64(0x1234): got {sc[0]:#x} (the temporary copy was freed before the put)')

    # ---- errors: a clear exception naming the routine and the argument ----
    raises(ValueError, 'shoal.put: dest: not a symmetric array', shoal.put, np.zeros(8), np.zeros(8), nxt)
    raises(ValueError, f'shoal.put: pe: {n} out of range [0, {n})', shoal.put, a, b, n)
    raises(ValueError, 'shoal.put: source: 128 bytes do not fit in dest (64 bytes)', shoal.put, a,
           np.zeros(16, dtype=np.int64), nxt)
    raises(ValueError, 'shoal.get: source: not a symmetric array', shoal.get, b, np.zeros(8), nxt)
    # get into immutable memory: a clear error, never a write into a bytes object or a read-only view
    raises(ValueError, 'shoal.get: dest: a read-only bytes: pass a writable buffer', shoal.get, bytes(8), a, nxt)
    raises(ValueError, 'shoal.get: dest: a read-only memoryview', shoal.get, memoryview(bytearray(8)).toreadonly(),
           a, nxt)
    raises(ValueError, 'shoal.get: dest: a read-only int64', shoal.get, np.int64(0), a, nxt)
    ro = np.zeros(2, dtype=np.int64)
    ro.flags.writeable = False
    raises(ValueError, 'shoal.get: dest: a read-only ndarray', shoal.get, ro, a, nxt)
    wb = bytearray(8)
    shoal.get(memoryview(wb), a, me)
    check(wb == a[:1].tobytes(), f'get into a writable memoryview: got {bytes(wb)!r}')
    big = shoal.zeros((n + 1, 3), 'float64')
    raises(ValueError, f'shoal.fcollect: dst: {24 * (n + 1)} bytes, expected {n} x 24', shoal.fcollect,
           shoal.TEAM_WORLD, big, src)
    raises(ValueError, 'shoal.fcollect: dst: overlaps src', shoal.fcollect, shoal.TEAM_WORLD, big, big[:1])
    raises(ValueError, 'shoal.alltoall: dst: overlaps src', shoal.alltoall, shoal.TEAM_WORLD, d2, d2)
    raises(TypeError, 'shoal.fcollect: dst: dtype int64 differs from src\'s float64', shoal.fcollect,
           shoal.TEAM_WORLD, a, src)
    raises(ValueError, 'shoal.reduce: op: \'avg\' is not one of', shoal.reduce, shoal.TEAM_WORLD, z, z, 'avg')
    raises(TypeError, 'shoal.reduce: team:', shoal.reduce, 'world', z, z)
    flags = shoal.zeros((4,), 'bool')
    raises(TypeError, 'shoal.reduce: src: dtype bool has no sum reduction', shoal.reduce, shoal.TEAM_WORLD, flags,
           flags)
    raises(TypeError, 'shoal.array: dtype: \'complex256\' is not supported', shoal.array, 4, 'complex256')
    raises(ValueError, 'shoal.array: device: \'tpu\'', shoal.array, 4, 'int32', 'tpu')
    if not shoal.gpu_available():
        raises(ValueError, 'shoal.array: device=\'cuda\': this PE has no GPU', shoal.array, 4, 'int32', 'cuda')
    raises(TypeError, 'shoal.put: dest: expected a numpy array', shoal.put, 'abc', b, nxt)
    raises(TypeError, 'shoal.put: stream: expected a cudaStream_t', shoal.put, a, b, nxt, stream='s')
    shoal.free(flags)
    raises(ValueError, 'shoal.free: array: 0x', shoal.free, flags)              # freed twice
    raises(ValueError, 'shoal.reduce: dst: not a symmetric array', shoal.reduce, shoal.TEAM_WORLD, flags, flags)

    shoal.barrier_all()
    shoal.finalize()
    shoal.finalize()  # idempotent
    raises(shoal.ShoalError, 'shoal.barrier_all: called after shoal.finalize()', shoal.barrier_all)
    raises(shoal.ShoalError, 'shoal.init: called after shoal.finalize', shoal.init)
    if failures:
        print(f'python-host: PE {me}: {len(failures)} of {checks[0]} checks failed', flush=True)
        return 1
    print(f'python-host: PE {me}: {checks[0]} checks passed', flush=True)
    return 0


def uncaught_pe():
    """One PE of python-uncaught's job: PE 1 raises, PE 0 waits for a put that never comes."""
    shoal.init()
    flag = shoal.zeros((1,), 'int64')
    if shoal.my_pe() == 1:
        raise RuntimeError('python-uncaught: PE 1 fails on purpose')
    end = time.time() + 60
    while flag[0] == 0 and time.time() < end:   # oshrun stops this PE once PE 1 has exited
        time.sleep(0.01)
    return 3


def uncaught(oshrun):
    """Without the excepthook PE 1 would wait in shmem_finalize's barrier at exit, PE 0 in its loop: a hang until
    --timeout (status 124 after 30 s)."""
    t0 = time.time()
    p = subprocess.run([oshrun, '-n', '2', '--timeout', '30', sys.executable, __file__, 'uncaught-pe'],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=90)
    took = time.time() - t0
    print(p.stdout, end='')
    ok = (p.returncode == 1 and took < 10 and 'PE 1 fails on purpose' in p.stdout
          and 'exited with status 1' in p.stdout)
    print(f'python-uncaught: oshrun exited with status {p.returncode} after {took:.1f} s '
          f'({"as expected" if ok else "FAILED: expected status 1 within 10 s, and the traceback"})', flush=True)
    return 0 if ok else 1


if __name__ == '__main__':
    if sys.argv[1:2] == ['uncaught']:
        sys.exit(uncaught(sys.argv[2]))
    if sys.argv[1:2] == ['uncaught-pe']:
        sys.exit(uncaught_pe())
    sys.exit(main())
