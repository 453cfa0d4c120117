"""Benchmark helper (docs/performance.md, "Real time", "Timer wake-ups on this machine"): a thread that never
sleeps. On CPU N under SCHED_FIFO 45 (when permitted) it reads CLOCK_MONOTONIC in a loop for SECONDS and prints
every gap longer than 0.5 ms: a gap means the CPU did not run this thread (the VM was stopped, or the kernel's
real-time throttling took it: 50 ms in every second by default). Run beside probe.py: if probe.py's sleeping
thread wakes late while this one sees no gap, the CPU was running and only the timer wake-up was late.
usage: spin.py CPU SECONDS"""
import os, sys, time

cpu, secs = int(sys.argv[1]), float(sys.argv[2])
os.sched_setaffinity(0, {cpu})
try:
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(45))
    fifo = True
except PermissionError:
    fifo = False
now = time.monotonic
t = now()
end = t + secs
gaps = []
while t < end:
    u = now()
    if u - t > 5e-4:
        gaps.append((t, (u - t) * 1e3))
    t = u
print(f"SCHED_FIFO: {fifo}; gaps longer than 0.5 ms: {len(gaps)}")
for at, ms in gaps:
    print(f"{at:.4f},{ms:.2f}")
