#!/usr/bin/python3
"""perf/ab.py - two Shoal builds side by side (before/after a change that must not change speed), alternating launches.

  perf/ab.py AFTER_BUILD BEFORE_BUILD [--rounds R] [--placements bound,net] [--max-size BYTES] [--iters-scale F]
             [--csv OUT.csv] [--limit PCT] [--budget SECONDS] [--tests PLACEMENT:TEST,...]

Runs perf/bench_rma, bench_p2p and bench_coll of each build directory (meson builds them) under that build's
oshrun, in turn, the order swapped every round, every row once per round (these machines are shared and noisy: only a ratio measured side by
side means anything). Placements: bound (oshrun's default, a PE per core) and net (every PE its own node over
libfabric's net provider on lo). A cell is the median over the rounds of each launch's median; ratio = before usec /
after usec (> 1: after is faster). Prints the groups' geometric means and every row where after is slower than
--limit percent (default 3), and exits 0 (a report, not a test). --tests runs only the tests named (each
PLACEMENT:TEST, e.g. bound:get_lat,net:put_bw), to look again, with more rounds, at the rows a first run found slower.
"""
import argparse, csv, io, math, os, statistics, subprocess, sys, time

JOBS = [("bench_rma", 2, "put_lat,put_nbi_lat,get_lat,get_nbi_lat,put_bw,get_bw,put_bibw,msg_rate"),
        ("bench_rma", 2, "pingpong,put_signal"),
        ("bench_p2p", 2, "fetch_add_lat,compare_swap_lat,add_rate,inc_rate,fetch_add_contended,wait_until,signal,lock"),
        ("bench_coll", 2, "barrier_all,broadcast,fcollect,alltoall,sum_reduce"),
        ("bench_coll", 4, "barrier_all,broadcast,fcollect,alltoall,sum_reduce")]
NET_ENV = {"SHOAL_TRANSPORT": "ofi", "FI_TCP_IFACE": "lo", "FI_NET_IFACE": "lo", "FI_PROVIDER": "net",
           "SHOAL_OFI_PROVIDER": "net"}


def run(build, placement, bench, npes, only, args):
    env = dict(os.environ, SHMEM_SYMMETRIC_SIZE="512M")
    if placement == "net":
        env.update(NET_ENV)
    cmd = [os.path.join(build, "runtime/oshrun"), "-n", str(npes), "--timeout", str(args.timeout),
           os.path.join(build, "perf", bench), "--csv", "--only", only, "--max-size", str(args.max_size),
           "--iters-scale", str(args.iters_scale)] + (["--no-ref"] if bench == "bench_coll" else [])
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.timeout + 30)
        out, rc = p.stdout, p.returncode
    except subprocess.TimeoutExpired as e:
        out, rc = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or ""), 124
    lines = [l for l in out.splitlines() if "," in l and not l.startswith("#")]
    rows = list(csv.DictReader(io.StringIO("\n".join(lines)))) if lines else []
    if rc:
        print(f"# {os.path.basename(build)} {placement} {bench} {npes}: exit {rc}", file=sys.stderr)
    return [r for r in rows if r.get("usec") not in (None, "", "-")]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("after")
    ap.add_argument("before")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--placements", default="bound,net")
    ap.add_argument("--max-size", type=int, default=1 << 20)
    ap.add_argument("--iters-scale", type=float, default=0.5)
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--limit", type=float, default=3.0)
    ap.add_argument("--csv")
    ap.add_argument("--budget", type=float, default=0, help="seconds: no round starts that would end past it")
    ap.add_argument("--tests", default="", help="PLACEMENT:TEST,...: only these (default: every test)")
    args = ap.parse_args()
    builds = [("after", os.path.abspath(args.after)), ("before", os.path.abspath(args.before))]
    cells = {}  # (placement, bench, npes, test, bytes) -> {build: [usec per round]}
    raw = []
    t0 = time.time()
    rounds_done = 0
    for rnd in range(args.rounds):
        if rnd and args.budget and time.time() - t0 > args.budget * rnd / (rnd + 1):
            break  # the next round would not end within --budget (rounds take about the same time)
        for placement in args.placements.split(","):
            for bench, npes, only in JOBS:
                if args.tests:
                    only = ",".join(t for t in only.split(",") if f"{placement}:{t}" in args.tests.split(","))
                    if not only:
                        continue
                for name, b in (builds if rnd % 2 == 0 else builds[::-1]):
                    for r in run(b, placement, bench, npes, only, args):
                        key = (placement, bench, npes, r["test"], int(r["bytes"]))
                        cells.setdefault(key, {}).setdefault(name, []).append(float(r["usec"]))
                        raw.append([rnd, name, *key, r["usec"]])
        rounds_done += 1
        print(f"# round {rnd + 1} done at {time.time() - t0:.0f} s", file=sys.stderr, flush=True)
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["round", "build", "placement", "bench", "npes", "test", "bytes", "usec"])
            w.writerows(raw)
    groups, slow, n = {}, [], 0
    for key, v in sorted(cells.items()):
        if "after" not in v or "before" not in v:
            print(f"# missing in one build: {key}")
            continue
        a, b = statistics.median(v["after"]), statistics.median(v["before"])
        if a <= 0 or b <= 0:
            continue
        ratio = b / a
        n += 1
        groups.setdefault((key[0], key[3]), []).append(ratio)
        if ratio < 1 - args.limit / 100:
            slow.append((key, b, a, ratio))
    allr = [r for g in groups.values() for r in g]
    print(f"{n} rows, {rounds_done} rounds; ratio = before/after usec (> 1: after faster); "
          f"geometric mean of all rows {math.exp(statistics.fmean(map(math.log, allr))):.3f}")
    print("| placement | test | rows | geomean | min | max |")
    print("|---|---|---:|---:|---:|---:|")
    for (pl, t), g in sorted(groups.items()):
        print(f"| {pl} | {t} | {len(g)} | {math.exp(statistics.fmean(map(math.log, g))):.3f} | {min(g):.2f} | "
              f"{max(g):.2f} |")
    print(f"\nrows where after is slower by more than {args.limit:g}%: {len(slow)}")
    print("| placement | bench | PEs | test | bytes | before usec | after usec | ratio |")
    print("|---|---|---:|---|---:|---:|---:|---:|")
    for (pl, be, np_, t, by), b, a, r in slow:
        print(f"| {pl} | {be} | {np_} | {t} | {by} | {b:.3f} | {a:.3f} | {r:.3f} |")


if __name__ == "__main__":
    main()
