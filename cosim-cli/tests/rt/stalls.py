"""Benchmark helper (docs/performance.md, "Real time"): where did the late steps of a paced run go?
Groups the steps of timing.csv later than 300 us into stalls and classifies each by the stepping
thread's counters and by independent wake-up probes (probe.py) running at the same time:
- machine-wide: a probe on some CPU woke up late by >= half as much at the same time (within
  2 ms): that CPU or the whole VM did not run (host preemption, steal), whatever cosim did;
- in the thread: else, page faults, an involuntary switch or > 100 us waiting for a CPU
  (run_delay) in the stepping thread's counters;
- unexplained: neither.
usage: stalls.py timing.csv [probe0.csv probe1.csv ...]"""
import csv, sys

rows = list(csv.DictReader(open(sys.argv[1])))
probes = []
for k, path in enumerate(sys.argv[2:]):
    for line in open(path):
        if not line.startswith("#"):
            t, late = map(float, line.split(","))
            probes.append((k, t, late * 1e-3))
late = [i for i, r in enumerate(rows) if float(r["lateness_s"]) > 3e-4]
groups = []
for i in late:
    if groups and i - groups[-1][-1] <= 20:
        groups[-1].append(i)
    else:
        groups.append([i])
kinds = {"in the thread": 0, "machine-wide": 0, "unexplained": 0}
for g in groups:
    r = rows[g[0]]
    lateness = max(float(rows[i]["lateness_s"]) for i in g)
    # When the late communication point was due: its wait ended `lateness` after the deadline.
    due = float(r["monotonic_s"]) - float(r["lateness_s"])
    thread = int(r["minflt"]) + int(r["majflt"]) + int(r["nivcsw"]) > 0 or float(r["run_delay_s"]) > 1e-4
    near = [(k, p) for k, t, p in probes if abs(t - due) < 2e-3 + p and p >= 0.5 * float(r["lateness_s"])]
    kind = "machine-wide" if near else "in the thread" if thread else "unexplained"
    kinds[kind] += 1
    cpus = ",".join(sorted({f"cpu{k} {p * 1e3:.1f} ms" for k, p in near}))
    print(
        f"step {r['step']:>6}: {len(g):2d} late steps, up to {lateness * 1e3:6.2f} ms; step {float(r['step_time_s']) * 1e6:4.0f} us, "
        f"run_delay {float(r['run_delay_s']) * 1e6:5.0f} us, faults {int(r['minflt']) + int(r['majflt'])}, "
        f"switches {r['nvcsw']}/{r['nivcsw']} (vol/invol): {kind}{' (probes: ' + cpus + ')' if cpus else ''}"
    )
print(f"{len(groups)} stalls: " + ", ".join(f"{v} {k}" for k, v in kinds.items()))
