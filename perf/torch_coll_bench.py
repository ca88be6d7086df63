#!/usr/bin/env python3
"""torch_coll_bench.py - NCCL's all-gather and all-to-all through torch.distributed, timed as perf/bench_gpu_coll.cu
times Shoal's kernels, with rows in its CSV format (impl nccl), so that one CSV holds both.

    python3 perf/torch_coll_bench.py -W N [--min 4K] [--max 1G] [--factor 4] [--csv FILE] [--label TEXT]
                                     [--backend nccl|gloo] [--ops fcollect,alltoall,allreduce]

--ops allreduce: the float32 sum all_reduce of n bytes per PE (bench_gpu_coll --op allreduce's sizes and columns:
size = n, busbw = algbw 2 (W-1)/W, moved = 2 W n / time). --backend gloo: the ranks may share one GPU (CUDA tensors,
which gloo stages through host memory); times are host wall clock around the calls and a device synchronize (gloo
runs on its own streams), impl "torch-gloo".

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
import time

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
    if args.backend == 'nccl':
        dist.init_process_group('nccl', init_method='file://' + initfile, rank=rank, world_size=W, device_id=dev)
    else:
        dist.init_process_group('gloo', init_method='file://' + initfile, rank=rank, world_size=W)
    gloo = args.backend == 'gloo'
    impl = 'torch-gloo' if gloo else 'nccl'
    fsrc = None
    total = torch.cuda.get_device_properties(dev).total_memory
    cap = args.max
    while cap > args.min and 3.0 * W * cap > 0.6 * total:
        cap //= 2
    src = torch.full((W * cap,), 0x5a, dtype=torch.uint8, device=dev)
    dst = torch.empty(W * cap, dtype=torch.uint8, device=dev)
    t = torch.zeros(1, dtype=torch.float64, device=dev)
    for op in args.ops.split(','):
        n = args.min
        if op == 'allreduce':
            fsrc = torch.zeros(cap // 4 + 1, dtype=torch.float32, device=dev)
        while n <= cap:
            def call():
                if op == 'fcollect':
                    dist.all_gather_into_tensor(dst[:W * n], src[:n])
                elif op == 'alltoall':
                    dist.all_to_all_single(dst[:W * n], src[:W * n])
                else:
                    dist.all_reduce(fsrc[:n // 4])
            for _ in range(3):
                call()
            torch.cuda.synchronize()
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

            def timed(k):  # ms per call
                if gloo:
                    torch.cuda.synchronize()
                    h0 = time.perf_counter()
                    for _ in range(k):
                        call()
                    torch.cuda.synchronize()
                    return (time.perf_counter() - h0) * 1e3 / k
                e0.record()
                for _ in range(k):
                    call()
                e1.record()
                e1.synchronize()
                return e0.elapsed_time(e1) / k
            t[0] = timed(3)
            dist.all_reduce(t, op=dist.ReduceOp.MAX)  # every rank takes the same N
            iters = max(5, min(500, int(20.0 / max(t.item(), 1e-3))))
            dist.barrier()
            torch.cuda.synchronize()
            t[0] = timed(iters) * 1e3  # us
            dist.all_reduce(t, op=dist.ReduceOp.MAX)
            us = t.item()
            if rank == 0:
                size = n if op == 'allreduce' else W * n
                algbw = size / (us * 1e3)
                busbw = algbw * (2.0 if op == 'allreduce' else 1.0) * (W - 1) / W
                moved = (2.0 * W * W * n if op == 'alltoall' else 2.0 * W * n if op == 'allreduce'
                         else W * n + W * W * n) / (us * 1e3)
                call_name = {'fcollect': 'all_gather_into_tensor', 'alltoall': 'all_to_all_single'}.get(op, 'all_reduce')
                rows.append(f'{impl},procs,{op},{W},-,0,0,0,{n},{size},{us:.2f},{algbw:.2f},'
                            f'{busbw:.2f},{moved:.2f},{call_name},{args.label}')
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
    ap.add_argument('--backend', choices=('nccl', 'gloo'), default='nccl')
    ap.add_argument('--ops', default='fcollect,alltoall')
    args = ap.parse_args()
    os.environ.setdefault('NCCL_NVLS_ENABLE', '0')
    os.environ.setdefault('GLOO_SOCKET_IFNAME', 'lo')  # gloo's TCP stays on loopback (never eth0)
    if args.factor <= 1 or args.min < 16:
        ap.error('--factor must be > 1 and --min at least 16 bytes')
    if any(o not in ('fcollect', 'alltoall', 'allreduce') for o in args.ops.split(',')):
        ap.error('--ops: fcollect, alltoall, allreduce')
    if args.backend == 'nccl' and args.W > torch.cuda.device_count():
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
    print(f'torch_coll_bench W={args.W} {args.backend} (torch {torch.__version__}, NCCL '
          f'{".".join(map(str, torch.cuda.nccl.version()))}): {len(rows)} rows')
    return 0


if __name__ == '__main__':
    sys.exit(main())
