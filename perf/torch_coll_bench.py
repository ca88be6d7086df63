#!/usr/bin/env python3
"""torch_coll_bench.py - NCCL's all-gather and all-to-all through torch.distributed, timed as perf/bench_gpu_coll.cu
times Shoal's kernels, with rows in its CSV format (impl nccl), so that one CSV holds both.

    python3 perf/torch_coll_bench.py -W N [--min 4K] [--max 1G] [--factor 4] [--csv FILE] [--label TEXT]

One process per GPU (NCCL refuses two ranks on one GPU), init by file (no network), NCCL_NVLS_ENABLE=0 (no NVLink
multicast, so NCCL uses the paths Shoal's kernels use). Per size n (bytes per PE block, as bench_gpu_coll): warm up,
choose N calls so that a measurement takes about 20 ms (5 to 500), time N back-to-back calls between two CUDA events;
time = max over ranks of the mean. size = W n, algbw = size / time, busbw = algbw (W-1)/W (nccl-tests' definitions);
moved = bytes read + written (fcollect W n + W^2 n, alltoall 2 W^2 n) / time.
"""
import argparse
import os
import sys
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

HEADER = 'impl,mode,op,W,variant,G,sms,tile,bytes_per_pe,size,time_us,algbw_GBs,busbw_GBs,moved_GBs,kernel,label'


def parse_size(s):
    m = {'k': 1 << 10, 'K': 1 << 10, 'm': 1 << 20, 'M': 1 << 20, 'g': 1 << 30, 'G': 1 << 30}
    return int(float(s[:-1]) * m[s[-1]]) if s[-1] in m else int(s)


def worker(rank, W, initfile, args, rows):
    dev = torch.device('cuda', rank % torch.cuda.device_count())
    torch.cuda.set_device(dev)
    dist.init_process_group('nccl', init_method='file://' + initfile, rank=rank, world_size=W, device_id=dev)
    total = torch.cuda.get_device_properties(dev).total_memory
    cap = args.max
    while cap > args.min and 3.0 * W * cap > 0.6 * total:
        cap //= 2
    src = torch.full((W * cap,), 0x5a, dtype=torch.uint8, device=dev)
    dst = torch.empty(W * cap, dtype=torch.uint8, device=dev)
    t = torch.zeros(1, dtype=torch.float64, device=dev)
    for op in ('fcollect', 'alltoall'):
        n = args.min
        while n <= cap:
            def call():
                if op == 'fcollect':
                    dist.all_gather_into_tensor(dst[:W * n], src[:n])
                else:
                    dist.all_to_all_single(dst[:W * n], src[:W * n])
            for _ in range(3):
                call()
            torch.cuda.synchronize()
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            for _ in range(3):
                call()
            e1.record()
            e1.synchronize()
            t[0] = e0.elapsed_time(e1) / 3
            dist.all_reduce(t, op=dist.ReduceOp.MAX)  # every rank takes the same N
            iters = max(5, min(500, int(20.0 / max(t.item(), 1e-3))))
            dist.barrier()
            torch.cuda.synchronize()
            e0.record()
            for _ in range(iters):
                call()
            e1.record()
            e1.synchronize()
            t[0] = e0.elapsed_time(e1) * 1e3 / iters  # us
            dist.all_reduce(t, op=dist.ReduceOp.MAX)
            us = t.item()
            if rank == 0:
                size = W * n
                algbw = size / (us * 1e3)
                moved = (2.0 * W * W * n if op == 'alltoall' else W * n + W * W * n) / (us * 1e3)
                call_name = 'all_gather_into_tensor' if op == 'fcollect' else 'all_to_all_single'
                rows.append(f'nccl,procs,{op},{W},-,0,0,0,{n},{size},{us:.2f},{algbw:.2f},'
                            f'{algbw * (W - 1) / W:.2f},{moved:.2f},{call_name},{args.label}')
                print(rows[-1], flush=True)
            n = max(n + 16, int(round(n * args.factor)) & ~15)
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('-W', type=int, required=True)
    ap.add_argument('--min', type=parse_size, default=4096)
    ap.add_argument('--max', type=parse_size, default=1 << 30)
    ap.add_argument('--factor', type=float, default=4)
    ap.add_argument('--csv')
    ap.add_argument('--label', default='default')
    args = ap.parse_args()
    os.environ.setdefault('NCCL_NVLS_ENABLE', '0')
    if args.factor <= 1 or args.min < 16:
        ap.error('--factor must be > 1 and --min at least 16 bytes')
    if args.W > torch.cuda.device_count():
        print(f'torch_coll_bench: W={args.W} needs {args.W} GPUs (NCCL: one rank per GPU), '
              f'{torch.cuda.device_count()} visible: skipped')
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        rows = mp.Manager().list()
        mp.spawn(worker, args=(args.W, os.path.join(tmp, 'init'), args, rows), nprocs=args.W, join=True)
        rows = list(rows)
    if args.csv:
        new = not os.path.exists(args.csv)
        with open(args.csv, 'a') as f:
            if new:
                f.write(HEADER + '\n')
            f.write(''.join(r + '\n' for r in rows))
    print(f'torch_coll_bench W={args.W} (torch {torch.__version__}, NCCL {".".join(map(str, torch.cuda.nccl.version()))}):'
          f' {len(rows)} rows')
    return 0


if __name__ == '__main__':
    sys.exit(main())
