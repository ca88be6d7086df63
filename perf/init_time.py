#!/usr/bin/python3
"""perf/init_time.py - shmem_init time over the network (loopback): Shoal against Open MPI's OSHMEM (issue 29).

  perf/init_time.py [--build build] [--baseline BUILD] [--pes 2,8,16] [--rounds 3] [--providers net,tcp]
                    [--no-oshmem] [--timeout 300]

Runs perf/bench_init (each PE times its own shmem_init; the slowest is reported) at each PE count, for Shoal with
SHOAL_TRANSPORT=ofi on lo (FI_PROVIDER net, and tcp;ofi_rxm for 'tcp'), for a baseline build of Shoal if given
(before/after), and for OSHMEM (/usr/bin/oshcc, oshrun --oversubscribe, UCX_TLS=tcp,self on lo, btl self,tcp on lo:
perf/compare's net placement). The implementations take turns within each round (the order reversed every other
round). Prints a markdown table of medians: the slowest PE's shmem_init, the whole job's wall time (oshrun from
start to exit) and its CPU time (user + system of every process of the job: steadier than times on a shared
machine), and the growth of init per PE between the smallest and the largest count. Cheap: rounds x counts x
implementations short jobs (about two minutes with the defaults on 2 CPUs). Separate from perf/compare, whose runs
are long: init time is one number per job.
"""
import argparse, os, re, resource, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHOAL_ENV = {"SHOAL_TRANSPORT": "ofi", "FI_TCP_IFACE": "lo", "FI_NET_IFACE": "lo"}
PROVIDERS = {"net": "net", "tcp": "tcp;ofi_rxm"}
OSHMEM_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "OMPI_MCA_osc": "ucx",
              "UCX_TLS": "tcp,self", "UCX_NET_DEVICES": "lo", "OMPI_MCA_btl": "self,tcp",
              "OMPI_MCA_btl_tcp_if_include": "lo", "OMPI_MCA_oob_tcp_if_include": "lo",
              "SMA_SYMMETRIC_SIZE": "512M", "OMPI_MCA_rmaps_base_oversubscribe": "1"}
OSHMEM_X = ["-x", "UCX_TLS", "-x", "UCX_NET_DEVICES", "-x", "SMA_SYMMETRIC_SIZE"]
LINE = re.compile(r"init (\d+) PEs: max ([0-9.]+) ms")


def impls(args, tmp):
    out = []  # (label, command prefix, env, exe)
    builds = [("Shoal", args.build)] + ([("Shoal-before", args.baseline)] if args.baseline else [])
    for label, b in builds:
        b = os.path.abspath(b)
        subprocess.run(["ninja", "-C", b, "perf/bench_init", "runtime/oshrun"], check=True, stdout=subprocess.DEVNULL)
        for p in args.providers.split(","):
            env = dict(SHOAL_ENV, FI_PROVIDER=PROVIDERS[p])
            out.append((f"{label} ({PROVIDERS[p]})", [os.path.join(b, "runtime/oshrun"), "--timeout",
                                                      str(args.timeout), "-n"], env,
                        os.path.join(b, "perf/bench_init")))
    if not args.no_oshmem and os.path.exists("/usr/bin/oshcc"):
        exe = os.path.join(tmp, "bench_init_oshmem")
        subprocess.run(["/usr/bin/oshcc", "-O2", os.path.join(ROOT, "perf/bench_init.c"), "-o", exe], check=True)
        out.append(("OSHMEM (UCX tcp)", ["/usr/bin/oshrun", "--oversubscribe"] + OSHMEM_X + ["-np"], OSHMEM_ENV, exe))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--baseline")
    ap.add_argument("--pes", default="2,8,16")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--providers", default="net,tcp")
    ap.add_argument("--no-oshmem", action="store_true")
    ap.add_argument("--timeout", type=int, default=300)
    args = ap.parse_args()
    counts = [int(x) for x in args.pes.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        imps = impls(args, tmp)
        res = {}  # (label, npes) -> ([init ms], [wall s])
        for rnd in range(args.rounds):
            for n in counts:
                for label, pre, env, exe in (imps if rnd % 2 == 0 else list(reversed(imps))):
                    t0, r0 = time.monotonic(), resource.getrusage(resource.RUSAGE_CHILDREN)
                    p = subprocess.run(pre + [str(n), exe], env=dict(os.environ, **env), capture_output=True,
                                       text=True, timeout=args.timeout + 30)
                    wall, r1 = time.monotonic() - t0, resource.getrusage(resource.RUSAGE_CHILDREN)
                    cpu = (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)  # the job's processes, reaped
                    m = LINE.search(p.stdout)
                    if p.returncode or not m:
                        print(f"# {label} {n} PEs: exit {p.returncode}: {(p.stdout + p.stderr).strip()[-300:]}",
                              file=sys.stderr)
                        continue
                    r = res.setdefault((label, n), ([], [], []))
                    r[0].append(float(m.group(2)))
                    r[1].append(wall)
                    r[2].append(cpu)
                    print(f"# round {rnd} {label} {n} PEs: init {m.group(2)} ms, wall {wall:.2f} s, cpu {cpu:.2f} s",
                          file=sys.stderr)
    lo, hi = counts[0], counts[-1]
    head = " | ".join(f"{n} PEs: init ms / wall s / CPU s" for n in counts)
    print(f"| implementation | {head} | init growth per PE ({lo} to {hi}) |")
    print("|---" * (len(counts) + 2) + "|")
    for label, *_ in imps:
        cells, med = [], {}
        for n in counts:
            r = res.get((label, n))
            if not r:
                cells.append("failed")
                continue
            med[n] = statistics.median(r[0])
            cells.append(f"{med[n]:.0f} / {statistics.median(r[1]):.2f} / {statistics.median(r[2]):.2f}")
        slope = f"{(med[hi] - med[lo]) / (hi - lo):.0f} ms" if lo in med and hi in med and hi > lo else "-"
        print(f"| {label} | " + " | ".join(cells) + f" | {slope} |")
    print(f"\n{args.rounds} rounds, medians; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"{os.cpu_count()} CPUs, load average before the table {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
