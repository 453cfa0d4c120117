"""Overhead of cosim.simulate against `cosim run` on bench-trivial-pair (1e5 steps by default):
best wall time of N repetitions each, whole process for `cosim run` (what a user waits for),
the call for simulate (the interpreter is already up).

    python python/benches/overhead.py [--steps 100000] [--repeat 5] [--cosim target/release/cosim]
"""

import argparse
import json
import os
import pathlib
import subprocess
import tempfile
import time

import cosim

ROOT = pathlib.Path(__file__).resolve().parents[2]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=100_000)
    p.add_argument("--repeat", type=int, default=5)
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    p.add_argument("--cosim", default=str(target / "release" / "cosim"))
    a = p.parse_args()
    system = ROOT / "scenarios" / "bench-trivial-pair.toml"
    stop = a.steps * 1e-3
    runs, sims, run_loops, sim_loops = [], [], [], []
    with tempfile.TemporaryDirectory() as out:
        for _ in range(a.repeat):
            t = time.perf_counter()
            subprocess.run([a.cosim, "run", str(system), "--stop-time", str(stop), "--out", out], check=True,
                           capture_output=True)
            runs.append(time.perf_counter() - t)
            run_loops.append(json.loads((pathlib.Path(out) / "summary.json").read_text())["wall_time_s"])
            t = time.perf_counter()
            r = cosim.simulate(system, stop_time=stop)
            sims.append(time.perf_counter() - t)
            sim_loops.append(r.summary["wall_time_s"])
    assert len(r) == a.steps + 1
    best_run, best_sim = min(runs), min(sims)
    print(f"bench-trivial-pair, {a.steps} steps, best of {a.repeat}:")
    print(f"  cosim run (process, results.csv): {best_run * 1e3:8.1f} ms")
    print(f"  cosim.simulate (in memory):       {best_sim * 1e3:8.1f} ms  ({(best_sim / best_run - 1) * 100:+.1f} %)")
    loop_run, loop_sim = min(run_loops), min(sim_loops)
    print("run loop only (summary wall_time_s, initialization to the last step):")
    print(f"  cosim run:      {loop_run * 1e3:8.1f} ms")
    print(f"  cosim.simulate: {loop_sim * 1e3:8.1f} ms  ({(loop_sim / loop_run - 1) * 100:+.1f} %)")


if __name__ == "__main__":
    main()
