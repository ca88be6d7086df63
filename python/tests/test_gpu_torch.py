#!/usr/bin/env python3
"""The shoal Python package's device heap with torch, run under oshrun at 2 and 3 PEs by scripts/gpu-tests.sh.

    PYTHONPATH=python SHOAL_LIB=BUILD/runtime/libshoal.so oshrun -n 2 python3 python/tests/test_gpu_torch.py

Checks: device arrays as torch tensors through DLPack (torch.from_dlpack) and __cuda_array_interface__
(torch.as_tensor), both at the array's address; peers' arrays through the base table (get_peer_array, peer_ptrs)
read by torch; fcollect, alltoall and all-reduce (sum, min, max; prod for float32 and int32) of float32, float16,
bfloat16, int32 and int64 on a torch.cuda.Stream, checked against torch.distributed (gloo, env:// with
MASTER_ADDR=127.0.0.1, rank = PE number) on the same inputs: every value exact (the inputs are small integers, exact
in every type). Exits 77 without torch, CUDA or the device heap; prints one line per failed check and exits 1.
"""
import os
import sys


def skip(why):
    print(f'python-gpu: {why}: skipped', flush=True)
    sys.exit(77)


try:
    import numpy as np
    import torch
    import torch.distributed as dist
except ImportError as e:
    skip(f'no torch or numpy ({e})')
if not torch.cuda.is_available():
    skip('torch sees no GPU')

import shoal  # noqa: E402

failures = []
checks = [0]


def check(cond, what):
    checks[0] += 1
    if not cond:
        failures.append(what)
        print(f'python-gpu: PE {shoal.my_pe()}: FAILED: {what}', flush=True)


def inputs(pe, count, salt, dtype):
    """PE pe's input: small integers in [-15, 15], exact in every type and in every sum/min/max of 3 of them."""
    k = (np.arange(count, dtype=np.int64) * 7 + pe * 13 + salt * 5) % 31 - 15
    return torch.from_numpy(k).to(dtype)


def gather_all(t):
    """torch.distributed's all_gather (gloo, CPU) of t: one tensor per rank."""
    out = [torch.empty_like(t) for _ in range(dist.get_world_size())]
    dist.all_gather(out, t)
    return out


def main():
    shoal.init()
    if not shoal.gpu_available():
        skip('shoal has no device heap (shmemx_gpu_available() is 0)')
    me, n = shoal.my_pe(), shoal.n_pes()
    dev = shoal.gpu_device()
    torch.cuda.set_device(dev)
    os.environ.setdefault('MASTER_ADDR', '127.0.0.1')
    os.environ.setdefault('MASTER_PORT', str(29400 + n))
    dist.init_process_group('gloo', init_method='env://', rank=me, world_size=n)
    W = shoal.TEAM_WORLD

    # ---- DLPack and __cuda_array_interface__: the same memory, seen by torch ----
    d = shoal.zeros((1000,), 'float32', device='cuda')
    t = torch.from_dlpack(d)
    check(t.is_cuda and t.device.index == dev and t.data_ptr() == d.ptr and tuple(t.shape) == (1000,)
          and t.dtype == torch.float32, f'from_dlpack: {t.device} 0x{t.data_ptr():x} {tuple(t.shape)} {t.dtype}, '
          f'array at 0x{d.ptr:x} on cuda:{dev}')
    t2 = torch.as_tensor(d, device='cuda')
    check(t2.data_ptr() == d.ptr and t2.dtype == torch.float32, f'as_tensor: 0x{t2.data_ptr():x} vs 0x{d.ptr:x}')
    check(float(t2.sum()) == 0.0, 'zeros(device=cuda): not all zero')
    t.fill_(me + 1)
    torch.cuda.synchronize()
    check(float(t2.sum()) == 1000.0 * (me + 1), 'a write through from_dlpack is seen through as_tensor')
    th = shoal.tensor((4, 3), 'bfloat16')
    check(th.dtype == torch.bfloat16 and tuple(th.shape) == (4, 3) and th.is_cuda, f'shoal.tensor: {th.dtype}')
    shoal.barrier_all()

    # ---- the base table: every peer's instance read by torch ----
    ptrs = shoal.peer_ptrs(d)
    check(len(ptrs) == n and ptrs[me] == d.ptr, f'peer_ptrs: {[hex(p) for p in ptrs]}, own 0x{d.ptr:x}')
    # Nodes of k PEs (SHOAL_NODE_PES; in runs of k unless SHOAL_NODE_MAP=cyclic deals them round robin): only this
    # PE's node is mapped. With no such setting every PE is on this node and every peer must be mapped.
    k = int(os.environ.get('SHOAL_NODE_PES', '0') or 0)
    nodes = (n + k - 1) // k if k > 0 else 1
    node = (lambda p: p % nodes) if os.environ.get('SHOAL_NODE_MAP') == 'cyclic' else (lambda p: p // k if k else 0)
    check(all(bool(ptrs[p]) == (node(p) == node(me)) for p in range(n)),
          f'peer_ptrs (nodes of {k or n} PEs): {[hex(p) for p in ptrs]}')
    for p in range(n):
        if node(p) != node(me):  # another node's (SHOAL_NODE_PES): no mapping here, and the call says so
            try:
                shoal.get_peer_array(d, p)
                check(False, f'get_peer_array(d, {p}) of another node\'s PE returned')
            except ValueError:
                pass
            continue
        pt = torch.as_tensor(shoal.get_peer_array(d, p), device='cuda')
        check(bool(torch.all(pt == p + 1)), f'get_peer_array(d, {p}): expected {p + 1} everywhere, '
              f'got {pt[:4].tolist()}...')
    shoal.barrier_all()

    s = torch.cuda.Stream()
    types = [torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int64]
    tname = {torch.float32: 'float32', torch.float16: 'float16', torch.bfloat16: 'bfloat16', torch.int32: 'int32',
             torch.int64: 'int64'}
    for count in (1, 1000, 65537):
        for dt in types:
            name = f'{tname[dt]} x {count}'
            # ---- fcollect on stream s ----
            src = shoal.array((count,), tname[dt], 'cuda')
            dst = shoal.array((n * count,), tname[dt], 'cuda')
            mine = inputs(me, count, 1, dt)
            with torch.cuda.stream(s):
                torch.from_dlpack(src).copy_(mine.cuda(), non_blocking=False)
            shoal.fcollect(W, dst, src, stream=s)
            named = dst._stream if dt == torch.bfloat16 else dst.__cuda_array_interface__.get('stream')  # no CAI
            check(named == s.cuda_stream, f'fcollect {name}: the array names stream {named}, not {s.cuda_stream}')
            s.synchronize()
            want = torch.cat(gather_all(mine))
            got = torch.from_dlpack(dst).cpu()
            check(torch.equal(got, want), f'fcollect {name}: differs from dist.all_gather at '
                  f'{(got != want).nonzero()[:3].flatten().tolist()}')
            shoal.free(dst)
            shoal.free(src)

            # ---- alltoall on stream s: block j to PE j ----
            src = shoal.array((n * count,), tname[dt], 'cuda')
            dst = shoal.zeros((n * count,), tname[dt], 'cuda')
            mine = torch.cat([inputs(me * n + j, count, 2, dt) for j in range(n)])
            with torch.cuda.stream(s):
                torch.from_dlpack(src).copy_(mine.cuda())
            shoal.alltoall(W, dst, src, stream=s)
            s.synchronize()
            every = gather_all(mine)
            want = torch.cat([every[j][me * count:(me + 1) * count] for j in range(n)])
            got = torch.as_tensor(dst, device='cuda').cpu() if dt != torch.bfloat16 else torch.from_dlpack(dst).cpu()
            check(torch.equal(got, want), f'alltoall {name}: differs from the all_gather-derived blocks at '
                  f'{(got != want).nonzero()[:3].flatten().tolist()}')
            shoal.free(dst)
            shoal.free(src)

            # ---- all-reduce on stream s, against dist.all_reduce (gloo) on the same inputs ----
            ops = [('sum', dist.ReduceOp.SUM), ('min', dist.ReduceOp.MIN), ('max', dist.ReduceOp.MAX)]
            if dt in (torch.float32, torch.int32):
                ops.append(('prod', dist.ReduceOp.PRODUCT))
            for op, rop in ops:
                src = shoal.array((count,), tname[dt], 'cuda')
                dst = shoal.array((count,), tname[dt], 'cuda')
                mine = inputs(me, count, 3, dt)
                if op == 'prod':
                    mine = (mine.to(torch.int64) % 3 + 1).to(dt)   # 1..3: exact products
                with torch.cuda.stream(s):
                    torch.from_dlpack(src).copy_(mine.cuda())
                shoal.reduce(W, dst, src, op, stream=s)
                s.synchronize()
                want = mine.to(torch.float64 if dt.is_floating_point else torch.int64).clone()
                dist.all_reduce(want, op=rop)
                got = torch.from_dlpack(dst).cpu()
                check(torch.equal(got, want.to(dt)), f'reduce {op} {name}: differs from dist.all_reduce at '
                      f'{(got != want.to(dt)).nonzero()[:3].flatten().tolist()}')
                shoal.free(dst)
                shoal.free(src)

    # in place, on the default stream (stream=None on device arrays: the legacy default stream)
    x = shoal.array((4096,), 'float32', 'cuda')
    tx = torch.from_dlpack(x)
    tx.copy_(inputs(me, 4096, 4, torch.float32).cuda())
    torch.cuda.synchronize()
    shoal.allreduce(W, x, x, 'sum')
    torch.cuda.synchronize()
    want = inputs(me, 4096, 4, torch.float32).clone()
    dist.all_reduce(want)
    check(torch.equal(tx.cpu(), want), 'allreduce in place on the default stream differs from dist.all_reduce')

    # DLPack across streams: an array last written on stream s, consumed on another stream (the producer waits)
    y = shoal.array((8,), 'int32', 'cuda')
    y2 = shoal.array((8 * n,), 'int32', 'cuda')
    with torch.cuda.stream(s):
        torch.from_dlpack(y).fill_(me)
    shoal.fcollect(W, y2, y, stream=s)
    other = torch.cuda.Stream()
    with torch.cuda.stream(other):
        ty2 = torch.from_dlpack(y2)      # __dlpack__(stream=other): waits for s
        vals = ty2.cpu()
    check(torch.equal(vals, torch.arange(n, dtype=torch.int32).repeat_interleave(8)),
          f'from_dlpack on another stream: {vals.tolist()}')

    # errors
    h = shoal.zeros((4,), 'float32')
    try:
        shoal.reduce(W, h, x, 'sum')
        check(False, 'reduce with a host dst and a device src raised nothing')
    except ValueError as e:
        check('shoal.reduce: dst: on the host heap, src on the cuda heap' in str(e), f'mixed heaps: {e}')

    shoal.barrier_all()
    dist.destroy_process_group()
    shoal.finalize()
    if failures:
        print(f'python-gpu: PE {me}: FAIL: {len(failures)} of {checks[0]} checks failed', flush=True)
        return 1
    print(f'python-gpu: PE {me}: PASS: {checks[0]} checks passed (torch {torch.__version__}, {n} PEs)', flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
