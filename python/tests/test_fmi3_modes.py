"""FMI 3.0 structural parameters, event mode, Scheduled Execution and clocks from the `cosim` Python
package (issue 43 item 5), with the C test FMUs of master/tests/cfmu3 (the Rust tests' own sources
and descriptions) and a pythonfmu3 FMU built here, each checked against its closed form and, where
FMPy runs the FMU, against FMPy bit for bit."""

import math
import subprocess
import sys

import numpy as np
import pytest

import cosim
from conftest import build_c_fmu, require

HERE = __import__("pathlib").Path(__file__).resolve().parent


def test_structural_parameters_set_from_start_values_size_the_arrays(tmp_path):
    fmu = build_c_fmu(tmp_path, "statespace", "statespace.xml")
    r = cosim.simulate_fmu(fmu, start_values={"n": 4}, output_interval=0.1)
    # x' = -i x_i + u (u = 1, x0 = 1): x_i(t) = 1/i + (1 - 1/i) e^{-i t}, i = 1…4.
    assert [f"x[{i}]" for i in range(1, 5)] == [n for n in r.dtype.names if n.startswith("x[")]
    for i in range(1, 5):
        exact = 1 / i + (1 - 1 / i) * np.exp(-i * r["time"])
        assert np.max(np.abs(r[f"x[{i}]"] - exact)) < 1e-12, i
    # Out of the structural parameter's bounds (max 5): refused naming it.
    with pytest.raises(cosim.CosimError, match=r"\bn\b"):
        cosim.simulate_fmu(fmu, start_values={"n": 9})


def bounce_times():
    g, e = 9.81, 0.7
    t = math.sqrt(2 / g)
    v = g * t
    times = [t]
    while True:
        v *= e
        if v < 0.1:
            return times
        t += 2 * v / g
        times.append(t)


def test_event_mode_returns_early_at_each_bounce_as_fmpy_does(tmp_path):
    fmu = build_c_fmu(tmp_path, "events3", "events3.xml", replace={"{early}": "true"})
    r = cosim.simulate_fmu(fmu, stop_time=3.0, output_interval=0.1, output=["h", "v", "bounces", "bounce_time"])
    exact = bounce_times()
    assert r["bounces"][-1] == len(exact)
    for b, t in zip(r["bounces"], r["bounce_time"]):
        if b >= 1:
            assert abs(t - exact[int(b) - 1]) < 1e-9
    fmpy = require("fmpy")
    theirs = fmpy.simulate_fmu(str(fmu), stop_time=3.0, output_interval=0.1, use_event_mode=True,
                               early_return_allowed=True, output=["h", "v"])
    # FMPy also records a row before and after each event: compare at the grid times.
    for row in r:
        at = theirs[np.abs(theirs["time"] - row["time"]) < 1e-9][-1]
        assert (row["h"], row["v"]) == (at["h"], at["v"]), row["time"]


def test_scheduled_execution_activates_the_partitions_by_priority(tmp_path):
    fmu = build_c_fmu(tmp_path, "se3", "se3.xml")
    r = cosim.simulate_fmu(fmu, output=["n_fast", "n_slow", "wrong_order", "order"])
    assert list(r["n_fast"]) == list(range(1, 12))
    assert r["n_slow"][-1] == 6 and r["wrong_order"][-1] == 0
    assert r["order"][-1] == 1121


def test_clocks_and_a_clock_connection_from_python(tmp_path):
    fmu = build_c_fmu(tmp_path, "clocks3", "clocks3.xml")
    r = cosim.simulate_fmu(fmu, output=["n_tick", "n_cd", "order", "bad_access"])
    assert (r["n_tick"][-1], r["n_cd"][-1], r["order"][-1], r["bad_access"][-1]) == (5, 3, 124141, 0)
    s = cosim.System(stop=2.0, step=0.1)
    s.instance("a", fmu).instance("b", fmu)
    s.connect("a.every3", "b.trig")
    s.connect("a.y", "b.u")
    r = cosim.simulate(s, output=["b.n_trig", "b.got", "b.last_trig", "b.bad_access"])
    # a.every3 ticks at 0.5 and 1.25: b.trig activated at 0.5 and 1.3 with u = 3, then 6.
    assert (r["b.n_trig"][-1], r["b.got"][-1], r["b.bad_access"][-1]) == (2, 9.0, 0)
    assert abs(r["b.last_trig"][-1] - 1.3) < 1e-12
    with pytest.raises(cosim.CosimError, match=r"b\.tick is an input clock with intervalVariability=\"constant\""):
        t = cosim.System(stop=1.0, step=0.1)
        t.instance("a", fmu).instance("b", fmu)
        t.connect("a.every3", "b.tick")
        cosim.simulate(t)


def test_a_pythonfmu3_fmu_gives_fmpys_numbers_bit_for_bit(tmp_path):
    require("pythonfmu3")
    fmpy = require("fmpy")
    subprocess.run([sys.executable, "-m", "pythonfmu3", "build", "-f", str(HERE / "pythonfmu3" / "StateSpace2.py"),
                    "--dest", str(tmp_path)], check=True, capture_output=True)
    fmu = tmp_path / "StateSpace2.fmu"
    ours = cosim.simulate_fmu(fmu, stop_time=1.0, output_interval=0.1, output=["x1", "x2", "y"])
    theirs = fmpy.simulate_fmu(str(fmu), stop_time=1.0, output_interval=0.1, output=["x1", "x2", "y"])
    assert len(ours) == len(theirs) == 11
    for name in ("time", "x1", "x2", "y"):
        assert np.array_equal(ours[name].view(np.uint64), theirs[name].view(np.uint64)), name
    # The closed form: x_i(t) = (1 - e^{-i t}) / i.
    for i in (1, 2):
        assert np.max(np.abs(ours[f"x{i}"] - (1 - np.exp(-i * ours["time"])) / i)) < 1e-12
