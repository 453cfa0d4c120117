"""What an input file costs a run (issue 44): scenarios/crane-pub3.toml driven by its J1
operator cycle repeated over STOP seconds, the cycle given three ways — the inline `[[inputs]]`
table (the reference), a CSV file of 10^4 rows and one of 10^6 rows (`[[inputs]] file`,
`interpolation = "hold"`, the same values at every communication point, so results.csv must be
byte-identical). Each variant is run REPEATS times, interleaved; CPU time (user + system, and
each apart) and wall time of the whole process (the file's validating pass included) and its max
RSS (getrusage of the child, os.wait4). "vs inline" is the median of the repeats' ratios, each
against the inline run of the same repeat (the machine's speed drifts between repeats). On a
shared machine the CPU time is the steadier measure; the system time is mostly the kernel copying
the file's pages (twice: the validating pass and the run).
Prints the machine's load (`uptime`) first: the machine may be shared.

    python3 python/benches/input_file.py [--cosim target/release/cosim] [--repeats 5] [--stop 1000]

Only the standard library; `cosim` is the release binary (`cargo build --release -p cosim-cli`).
"""

import argparse
import bisect
import os
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
CYCLE_T = [0.0, 0.5, 8.0, 9.5, 12.5, 14.0, 18.5, 19.0, 19.8]
CYCLE_V = [0.0, 10.0, 0.0, -10.0, 0.0, -10.0, 0.0, 10.0, 0.0]
PERIOD = 20.0


def cycle(stop):
    """The J1 cycle repeated every 20 s up to `stop`: (times, values) of the step table."""
    times, values = [], []
    k = 0
    while k * PERIOD < stop:
        for t, v in zip(CYCLE_T, CYCLE_V):
            times.append(round(k * PERIOD + t, 6))
            values.append(v)
        k += 1
    return times, values


def write_file(path, rows, stop, times, values):
    """`rows` rows sampled evenly over [0, stop) (times k·stop/rows, on the communication grid,
    written as the nearest double of the decimal), each the step table's value there."""
    with open(path, "w") as f:
        f.write("time,hyd.U_ref\n")
        for k in range(rows):
            t = round(stop * k / rows, 9)
            f.write(f"{t!r},{values[bisect.bisect_right(times, t) - 1]!r}\n")


def run(cosim, system, out):
    t0 = time.perf_counter()
    p = subprocess.Popen([cosim, "run", str(system), "--out", str(out)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    err = p.stderr.read().decode()
    p.stderr.close()
    if status != 0:
        raise SystemExit(f"{system}: cosim failed:\n{err}")
    return wall, usage.ru_utime, usage.ru_stime, usage.ru_maxrss  # KiB on Linux


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cosim", default=str(ROOT / "target/release/cosim"))
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--stop", type=float, default=1000.0)
    a = ap.parse_args()
    base = (ROOT / "scenarios/crane-pub3.toml").read_text().replace('"../target/', f'"{ROOT}/target/')
    base = base.replace("stop = 20.0", f"stop = {a.stop!r}\nrecord_every = 100")
    times, values = cycle(a.stop)
    table = re.compile(r'\[\[inputs\]\]\nto = "hyd.U_ref"\ntimes = \[[^\]]*\]\nvalues = \[[^\]]*\]\n')
    assert table.search(base), "crane-pub3.toml's [[inputs]] table not found"
    with tempfile.TemporaryDirectory(prefix="cosim-bench-input-") as tmp:
        tmp = pathlib.Path(tmp)
        variants = [("inline table", None)]
        inline = f'[[inputs]]\nto = "hyd.U_ref"\ntimes = {times!r}\nvalues = {values!r}\n'
        (tmp / "inline.toml").write_text(table.sub(lambda _: inline, base))
        for rows in (10**4, 10**6):
            write_file(tmp / f"u{rows}.csv", rows, a.stop, times, values)
            entry = f'[[inputs]]\nfile = "u{rows}.csv"\ninterpolation = "hold"\n'
            (tmp / f"file{rows}.toml").write_text(table.sub(lambda _: entry, base))
            variants.append((f"file, {rows:.0e} rows".replace("e+0", "e"), rows))
        systems = [tmp / ("inline.toml" if r is None else f"file{r}.toml") for _, r in variants]
        load_before = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
        walls = [[] for _ in variants]
        cpus = [[] for _ in variants]
        users = [[] for _ in variants]
        systems_cpu = [[] for _ in variants]
        rss = [[] for _ in variants]
        for k in range(a.repeats):
            order = list(range(len(variants)))
            order = order[k % len(order):] + order[:k % len(order)]  # rotate: no variant always first
            for i in order:
                w, u, sy, m = run(a.cosim, systems[i], tmp / f"out{i}")
                walls[i].append(w)
                cpus[i].append(u + sy)
                users[i].append(u)
                systems_cpu[i].append(sy)
                rss[i].append(m)
        same = [(tmp / f"out{i}/results.csv").read_bytes() == (tmp / "out0/results.csv").read_bytes()
                for i in range(len(variants))]
        sizes = {r: (tmp / f"u{r}.csv").stat().st_size for _, r in variants if r}
    steps = round(a.stop / 1e-3)
    print(f"uptime before: {load_before}")
    print(f"uptime after:  {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")
    print(f"crane-pub3, J1 cycle repeated to {a.stop:g} s, H = 1 ms ({steps} steps), record_every = 100; "
          f"{a.repeats} repeats interleaved; cosim = {a.cosim}\n")
    print("| inputs | file size | CPU median (s) | CPU vs inline | user median (s) | user vs inline | system median (s) "
          "| system − inline (s) | wall median (s) | wall vs inline | max RSS (MiB) | results.csv |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    med = statistics.median

    def vs(xs, refs):
        """The median of the repeats' ratios (each against the inline run of the same repeat)."""
        return f"{100 * (med(x / r for x, r in zip(xs, refs)) - 1):+.1f} %"

    for (name, rows), w, c, u, sy, m, eq in zip(variants, walls, cpus, users, systems_cpu, rss, same):
        size = f"{sizes[rows] / 2**20:.1f} MiB" if rows else "-"
        print(f"| {name} | {size} | {med(c):.3f} | {vs(c, cpus[0])} | {med(u):.3f} | {vs(u, users[0])} | "
              f"{med(sy):.3f} | {med(sy) - med(systems_cpu[0]):+.3f} | {med(w):.3f} | {vs(w, walls[0])} | "
              f"{max(m) / 1024:.1f} | {'identical' if eq else 'DIFFERS'} |")
    return 0 if all(same) else 1


if __name__ == "__main__":
    sys.exit(main())
