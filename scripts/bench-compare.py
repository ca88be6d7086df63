#!/usr/bin/env python3
"""Run one perf/ benchmark against Shoal and Open MPI's OSHMEM side by side, in one run, alternating.

  scripts/bench-compare.py perf/bench_rma.c [-n PES] [--rounds R] [--build build] [-- bench args]

Both binaries come from the same source (standard OpenSHMEM API only). Each is run R times, alternating
(Shoal, OSHMEM, Shoal, ...), with --csv; a benchmark prints rows "test,bytes,usec,...". For every row the median usec
over the rounds is reported, with ratio = OSHMEM usec / Shoal usec (> 1: Shoal is faster). OSHMEM runs on shared
memory only (UCX_TLS=self,sm, btl self,vader, oob over lo): see perf/README.md.
"""
import argparse, csv, io, os, statistics, subprocess, sys

OSHMEM_RUN = ["oshrun", "--allow-run-as-root", "--oversubscribe", "--mca", "osc", "^rdma", "--mca", "btl",
              "self,vader", "--mca", "oob_tcp_if_include", "lo", "-x", "UCX_TLS=self,sm"]


def run_csv(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=600).stdout
    lines = [l for l in out.splitlines() if "," in l and not l.startswith("#")]
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    head, body = rows[0], rows[1:]
    return {(r[0], r[1]): float(r[2]) for r in body if len(r) > 2 and r[2] not in ("", "-")}, [(r[0], r[1]) for r in body]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("source")
    ap.add_argument("-n", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--build", default="build")
    argv = sys.argv[1:]
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    a = ap.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    name = os.path.splitext(os.path.basename(a.source))[0]
    shoal_bin = os.path.join(a.build, "perf", name)
    osh_bin = os.path.join(a.build, "perf", name + "-oshmem")
    subprocess.run(["oshcc", "-O2", a.source, "-o", osh_bin, "-lm"], check=True)
    runs = {"shoal": [], "oshmem": []}
    order = None
    for _ in range(a.rounds):
        r, order = run_csv([os.path.join(a.build, "runtime", "oshrun"), "-n", str(a.n), shoal_bin, "--csv"] + extra)
        runs["shoal"].append(r)
        r, _ = run_csv(OSHMEM_RUN + ["-np", str(a.n), osh_bin, "--csv"] + extra)
        runs["oshmem"].append(r)
    print(f"| {name} ({a.n} PEs) | bytes | Shoal µs | OSHMEM µs | OSHMEM/Shoal |")
    print("|---|---:|---:|---:|---:|")
    for key in order:
        s = [r[key] for r in runs["shoal"] if key in r]
        o = [r[key] for r in runs["oshmem"] if key in r]
        if not s:
            continue
        ms = statistics.median(s)
        mo = statistics.median(o) if o else None
        ratio = f"{mo / ms:.2f}" if mo and ms > 0 else "-"
        print(f"| {key[0]} | {key[1]} | {ms:.3f} | {mo:.3f} | {ratio} |" if mo else f"| {key[0]} | {key[1]} | {ms:.3f} | - | - |")


if __name__ == "__main__":
    sys.exit(main())
