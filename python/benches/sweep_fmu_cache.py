"""A 200-run cosim.sweep of oscillator-fd on one worker process, its FMUs loaded once per process
(the default) against loaded afresh for every run (COSIM_FMU_CACHE=0, the behaviour before the
cache): wall time of each, interleaved, the median ratio, and the two result frames compared
bit for bit.

    .venv/bin/python python/benches/sweep_fmu_cache.py [STOP_TIME ...]   (default 0.1 and 10 s)
"""

import os
import pathlib
import statistics
import sys
import time

import cosim

ROOT = pathlib.Path(__file__).resolve().parents[2]
FD = ROOT / "scenarios" / "oscillator-fd.toml"
PARAMS = {"m1.x0": [0.0005 * k for k in range(200)]}
REPEAT = 3


def sweep(stop, cache):
    if cache:
        os.environ.pop("COSIM_FMU_CACHE", None)
    else:
        os.environ["COSIM_FMU_CACHE"] = "0"
    t0 = time.perf_counter()
    df = cosim.sweep(FD, PARAMS, stop_time=stop, max_workers=1)
    return time.perf_counter() - t0, df


def main():
    stops = [float(a) for a in sys.argv[1:]] or [0.1, 10.0]
    print("| stop time (s) | runs | loaded per run (s) | loaded once (s) | speed-up (median of pairs) | results |")
    print("|---|---|---|---|---|---|")
    for stop in stops:
        fresh, cached, ratios, same = [], [], [], True
        for _ in range(REPEAT):
            tf, df_f = sweep(stop, cache=False)
            tc, df_c = sweep(stop, cache=True)
            fresh.append(tf)
            cached.append(tc)
            ratios.append(tf / tc)
            same = same and df_f.equals(df_c) and (df_c["error"] == "").all()
        print(
            f"| {stop} | {len(PARAMS['m1.x0'])} | {statistics.median(fresh):.3f} | {statistics.median(cached):.3f} "
            f"| {statistics.median(ratios):.2f}× | {'bit-identical' if same else 'DIFFER'} |"
        )


if __name__ == "__main__":
    main()
