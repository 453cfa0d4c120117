#!/usr/bin/env python3
"""FMPy's Model Exchange simulation of one FMU at several tolerances (`cosim bench --model-exchange`).

Usage::

    python bench_me_fmpy.py JSON

JSON: ``{"fmu": PATH, "start": T0, "stop": T1, "output_interval": H, "variables": [NAMES],
"tolerances": [RTOL, ...], "repeat": N, "start_values": {NAME: VALUE}}``.

For each relative tolerance: ``fmpy.simulate_fmu`` with ``fmi_type="ModelExchange"``,
``solver="CVode"`` (FMPy's default: BDF, dense Jacobian by finite differences, absolute tolerance
rtol × nominal, maximum step (stop − start) / 50), the output interval H, the given variables.
The FMU is extracted and its model description read once; each timed call (``time.perf_counter``)
instantiates, initializes, integrates, records and terminates, ``validate=False`` (the
description was read before). Prints one JSON object: ``{"ok": true, "version": ...,
"runs": [{"rtol": R, "seconds": [...], "time": [...], "values": {NAME: [...]}}]}`` (the values of
the last repetition; FMPy records a row at every output point and at every event), or
``{"ok": false, "error": ...}``.
"""

import json
import shutil
import sys
import tempfile
import time
import traceback


def main():
    spec = json.loads(sys.argv[1])
    try:
        import fmpy
        from fmpy import extract, read_model_description, simulate_fmu
    except Exception as e:  # noqa: BLE001 - reported, not raised
        print(json.dumps({"ok": False, "error": f"fmpy not importable: {e}"}))
        return
    tmp = tempfile.mkdtemp(prefix="cosim-bench-me-")
    try:
        unzipdir = extract(spec["fmu"], unzipdir=tmp)
        md = read_model_description(unzipdir)
        runs = []
        for rtol in spec["tolerances"]:
            seconds = []
            result = None
            for _ in range(max(1, int(spec["repeat"]))):
                t0 = time.perf_counter()
                result = simulate_fmu(
                    unzipdir,
                    validate=False,
                    model_description=md,
                    fmi_type="ModelExchange",
                    solver="CVode",
                    relative_tolerance=rtol,
                    start_time=spec["start"],
                    stop_time=spec["stop"],
                    output_interval=spec["output_interval"],
                    output=spec["variables"],
                    start_values=spec.get("start_values", {}),
                )
                seconds.append(time.perf_counter() - t0)
            runs.append(
                {
                    "rtol": rtol,
                    "seconds": seconds,
                    "time": [float(t) for t in result["time"]],
                    "values": {v: [float(x) for x in result[v]] for v in spec["variables"]},
                }
            )
        print(json.dumps({"ok": True, "version": fmpy.__version__, "runs": runs}))
    except Exception as e:  # noqa: BLE001 - reported, not raised
        print(json.dumps({"ok": False, "error": f"{type(e).__name__}: {e}", "trace": traceback.format_exc()}))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
