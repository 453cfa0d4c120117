"""Benchmark helper (docs/performance.md, "Real time"): a cyclictest-like wake-up probe, independent
of cosim. On CPU N under SCHED_FIFO 40 (below cosim's 50, when permitted) it sleeps to absolute 1 ms deadlines for
SECONDS and writes every wake-up later than 300 us as `monotonic_s,late_ms` (CLOCK_MONOTONIC, the
clock of timing.csv's monotonic_s). usage: probe.py CPU SECONDS OUT.csv"""
import os, sys, time

cpu, secs, out = int(sys.argv[1]), float(sys.argv[2]), open(sys.argv[3], "w")
os.sched_setaffinity(0, {cpu})
try:
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(40))
except PermissionError:
    print("probe: SCHED_FIFO not permitted; normal scheduling", file=sys.stderr)
t = time.monotonic()
end = t + secs
n = 0
while t < end:
    t += 0.001
    d = t - time.monotonic()
    if d > 0:
        time.sleep(d)
    late = time.monotonic() - t
    n += 1
    if late > 3e-4:
        out.write(f"{t:.6f},{late * 1e3:.3f}\n")
        if late > 0.001:
            t = time.monotonic()  # start again after a stall (no burst of catch-up wake-ups)
out.write(f"# {n} wake-ups\n")
