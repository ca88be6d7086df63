#!/usr/bin/env python3
"""gloo_compare.py - compare the GPU collective kernels' outputs with torch.distributed on the same inputs.

    coll_gpu_harness -W n --dump DIR --seed S        (writes DIR/{op}_{type}_{n}_w{W}_pe{p}.bin)
    python3 gloo_compare.py -W n --dump DIR --seed S --out RESULT.csv [--backend gloo|nccl]

gloo (default): CPU tensors. nccl: tensors on GPU rank % device_count (NCCL needs one rank per GPU: W <= GPUs), with
dist.all_gather_into_tensor and dist.all_to_all_single; NCCL_NVLS_ENABLE=0 is set (no NVLink multicast).
Each of W processes (init by file, no network) builds PE p's input for case ci (the harness's case index in dump mode; seed S + ci) exactly as
tests/gpu/coll/coll_gpu_testdata.h does (splitmix64, k = h % 255 - 127, stored as int8 k or float k/2), runs
dist.all_gather (fcollect) and dist.all_to_all_single (alltoall; scatter from every root where gloo lacks it), and
compares the result byte for byte with what PE p's destination held after the Shoal kernel. Exit 0 when all match.
"""
import argparse
import os
import sys
import tempfile

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

TYPES = {'fp32': torch.float32, 'fp16': torch.float16, 'bf16': torch.bfloat16, 'int8': torch.int8}
SIZES = [1, 1000, 65537, 1 << 20]
M64 = np.uint64(0xFFFFFFFFFFFFFFFF)


def splitmix64(x):
    with np.errstate(over='ignore'):
        x = x + np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


def inputs(seed, pe, count, tname):
    idx = np.arange(count, dtype=np.uint64)
    h = splitmix64(np.uint64(seed) ^ (np.uint64(pe) << np.uint64(40)) ^ idx)
    k = (h % np.uint64(255)).astype(np.int64) - 127
    if tname == 'int8':
        return torch.from_numpy(k.astype(np.int8))
    return torch.from_numpy((k.astype(np.float32) * 0.5)).to(TYPES[tname])


def tobytes(t):
    return t.contiguous().view(torch.uint8).numpy().tobytes()


def alltoall(out, inp, W, rank):
    try:
        dist.all_to_all_single(out, inp)
        return 'all_to_all_single'
    except (RuntimeError, NotImplementedError):
        chunks = list(inp.chunk(W))
        outs = list(out.chunk(W))
        for root in range(W):
            dist.scatter(outs[root], chunks if rank == root else None, src=root)
        return 'scatter from every root'


def worker(rank, W, initfile, args, results):
    dev = torch.device('cpu')
    if args.backend == 'nccl':
        dev = torch.device('cuda', rank % torch.cuda.device_count())
        torch.cuda.set_device(dev)
    dist.init_process_group(args.backend, init_method='file://' + initfile, rank=rank, world_size=W)
    rows = []
    ci = -1  # case index: the harness gives case ci the seed seed + ci (same loop order: op, type, size)
    for op in ('fcollect', 'alltoall'):
        for tname in TYPES:
            for n in SIZES:
                ci += 1
                seed = args.seed + ci
                path = os.path.join(args.dump, f'{op}_{tname}_{n}_w{W}_pe{rank}.bin')
                shoal = open(path, 'rb').read() if os.path.exists(path) else None
                count = n * (W if op == 'alltoall' else 1)
                inp = inputs(seed, rank, count, tname)
                note = ''
                if args.backend == 'nccl':
                    inp = inp.to(dev)
                    out = torch.empty(W * n, dtype=inp.dtype, device=dev)
                    if op == 'fcollect':
                        dist.all_gather_into_tensor(out, inp)
                        note = 'all_gather_into_tensor'
                    else:
                        dist.all_to_all_single(out, inp)
                        note = 'all_to_all_single'
                    torch.cuda.synchronize()
                    got = tobytes(out.cpu())
                elif op == 'fcollect':
                    outs = [torch.empty(n, dtype=inp.dtype) for _ in range(W)]
                    try:
                        dist.all_gather(outs, inp)
                        note = 'all_gather'
                    except (RuntimeError, NotImplementedError):
                        outs8 = [torch.empty(n * inp.element_size(), dtype=torch.uint8) for _ in range(W)]
                        dist.all_gather(outs8, inp.view(torch.uint8))
                        outs = outs8
                        note = 'all_gather on the bytes (dtype not supported by gloo)'
                    got = b''.join(tobytes(t) for t in outs)
                else:
                    out = torch.empty(count, dtype=inp.dtype)
                    try:
                        note = alltoall(out, inp, W, rank)
                    except (RuntimeError, NotImplementedError):
                        out = torch.empty(count * inp.element_size(), dtype=torch.uint8)
                        note = alltoall(out, inp.view(torch.uint8), W, rank) + ' on the bytes'
                    got = tobytes(out)
                # reference from the formula alone (what every peer's input must contribute)
                if op == 'fcollect':
                    ref = b''.join(tobytes(inputs(seed, s, n, tname)) for s in range(W))
                else:
                    ref = b''.join(tobytes(inputs(seed, s, W * n, tname)[rank * n:(rank + 1) * n]) for s in range(W))
                rows.append((args.backend, op, tname, n, W, rank, 'missing' if shoal is None else ('ok' if shoal == got else 'DIFF'),
                             'ok' if got == ref else 'DIFF', note))
    dist.destroy_process_group()
    results.extend(rows)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('-W', type=int, required=True)
    ap.add_argument('--dump', required=True)
    ap.add_argument('--seed', type=int, required=True)
    ap.add_argument('--out', required=True)
    ap.add_argument('--backend', choices=('gloo', 'nccl'), default='gloo')
    args = ap.parse_args()
    os.environ.setdefault('NCCL_NVLS_ENABLE', '0')
    with tempfile.TemporaryDirectory() as tmp:
        mgr = mp.Manager()
        results = mgr.list()
        mp.spawn(worker, args=(args.W, os.path.join(tmp, 'init'), args, results), nprocs=args.W, join=True)
        rows = sorted(results)
    bad = [r for r in rows if r[6] != 'ok' or r[7] != 'ok']
    new = not os.path.exists(args.out)
    with open(args.out, 'a') as f:
        if new:
            f.write('backend,op,type,nelem,W,pe,shoal_vs_torch,torch_vs_formula,torch_call\n')
        for r in rows:
            f.write(','.join(str(x) for x in r) + '\n')
    print(f'gloo_compare W={args.W} backend {args.backend} (torch {torch.__version__}): {len(rows) - len(bad)} passed, {len(bad)} failed')
    for r in bad[:10]:
        print('  DIFF', r)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
