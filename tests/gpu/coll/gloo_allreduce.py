#!/usr/bin/env python3
"""gloo_allreduce.py - the GPU sum all-reduce (fp32, fp16, bf16) against torch.distributed all_reduce on the same inputs.

    coll_gpu_reduce_harness -W n --procs --dump DIR --seed S        (DIR/allreduce_{type}_{n}_w{W}_pe{p}.bin)
    python3 gloo_allreduce.py -W n --dump DIR --seed S --out RESULT.csv [--backend gloo|nccl]

Each of W processes builds PE p's input of case ci (seed S + ci; order: type fp32, fp16, bf16, then n 1, 1000, 65537,
2^20) as tests/gpu/coll/coll_gpu_reduce_ref.h does for sum (splitmix64, k = h % 255 - 127, value k / 2 in the type), runs
dist.all_reduce(SUM) (gloo: CPU tensors; nccl: one rank per GPU), and compares with PE p's dest after the Shoal kernel
and with the exact sum (float64). Tolerance per element (printed): |shoal - torch| <= (W - 1) * u * S and
|shoal - exact| <= u * S / 2 + tiny, where S is the sum of |x_p| over the PEs and u the type's unit roundoff times 2
(fp32 2^-23, fp16 2^-10, bf16 2^-7): torch rounds every pairwise step to the type, Shoal accumulates in float and rounds
once. With these inputs fp32 and fp16 sums are exact (multiples of 0.5 below 2^10 x W), so they must match bit for bit.
Exit 0 when all pass.
"""
import argparse
import os
import sys
import tempfile

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

TYPES = {'fp32': (torch.float32, 2.0 ** -23), 'fp16': (torch.float16, 2.0 ** -10), 'bf16': (torch.bfloat16, 2.0 ** -7)}
SIZES = [1, 1000, 65537, 1 << 20]


def splitmix64(x):
    with np.errstate(over='ignore'):
        x = x + np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


def values(seed, pe, count):
    idx = np.arange(count, dtype=np.uint64)
    h = splitmix64(np.uint64(seed) ^ (np.uint64(pe) << np.uint64(40)) ^ idx)
    return ((h % np.uint64(255)).astype(np.int64) - 127).astype(np.float64) * 0.5


def worker(rank, W, initfile, args, results):
    dev = torch.device('cpu')
    if args.backend == 'nccl':
        dev = torch.device('cuda', rank % torch.cuda.device_count())
        torch.cuda.set_device(dev)
    dist.init_process_group(args.backend, init_method='file://' + initfile, rank=rank, world_size=W)
    rows = []
    ci = -1
    for tname, (dt, u) in TYPES.items():
        for n in SIZES:
            ci += 1
            seed = args.seed + ci
            path = os.path.join(args.dump, f'allreduce_{tname}_{n}_w{W}_pe{rank}.bin')
            vals = [values(seed, p, n) for p in range(W)]
            exact = np.sum(vals, axis=0)
            S = np.sum(np.abs(vals), axis=0)
            t = torch.from_numpy(vals[rank].astype(np.float32)).to(dt).to(dev)
            dist.all_reduce(t, op=dist.ReduceOp.SUM)
            torch_v = t.cpu().to(torch.float64).numpy()
            if not os.path.exists(path):
                rows.append((args.backend, tname, n, W, rank, 'missing', 'missing', 0.0, 0.0))
                continue
            raw = np.frombuffer(open(path, 'rb').read(), dtype=np.float32 if tname == 'fp32' else np.uint16)
            if tname == 'fp32':
                shoal_v = raw.astype(np.float64)
            elif tname == 'fp16':
                shoal_v = raw.view(np.float16).astype(np.float64)
            else:
                shoal_v = (raw.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
            d_torch = np.abs(shoal_v - torch_v)
            d_exact = np.abs(shoal_v - exact)
            ok_t = bool(np.all(d_torch <= (W - 1) * u * S + 1e-30))
            ok_e = bool(np.all(d_exact <= u * S / 2 + 1e-30))
            rows.append((args.backend, tname, n, W, rank, 'ok' if ok_t else 'DIFF', 'ok' if ok_e else 'DIFF',
                         float(d_torch.max()), float(d_exact.max())))
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
    bad = [r for r in rows if r[5] != 'ok' or r[6] != 'ok']
    new = not os.path.exists(args.out)
    with open(args.out, 'a') as f:
        if new:
            f.write('backend,type,nelem,W,pe,shoal_vs_torch,shoal_vs_exact,max_diff_torch,max_diff_exact\n')
        for r in rows:
            f.write(','.join(str(x) for x in r) + '\n')
    print(f'gloo_allreduce W={args.W} backend {args.backend} (torch {torch.__version__}): {len(rows) - len(bad)} passed, '
          f'{len(bad)} failed; tolerance |shoal-torch| <= (W-1) u S, |shoal-exact| <= u S / 2 (u: fp32 2^-23, '
          f'fp16 2^-10, bf16 2^-7; S = sum of |x|)')
    for tname in TYPES:
        m = max((r[7] for r in rows if r[1] == tname), default=0.0)
        print(f'  {tname}: largest |shoal - torch| {m:g}')
    for r in bad[:10]:
        print('  DIFF', r)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
