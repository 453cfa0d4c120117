"""FMI 3.0 FMUs through the Python bindings (issue 32): a system whose crane is the FMI 3.0 FMU of
target/fmu3/ gives the same bits as the same system with the FMI 2.0 crane (held inputs: FMI 3.0
has no input derivatives), and as `cosim run` of it."""

import pathlib

import numpy as np
import pytest

import cosim
from conftest import SCENARIOS, assert_bitwise_equal, build_cfmu3, cosim_run


def mixed_crane(tmp_path, fmu_dir, crane_dir):
    text = (SCENARIOS / "crane-pub3.toml").read_text()
    text = text.replace('"../target/fmu/multibody-crane.fmu"', '"%s"' % (crane_dir / "multibody-crane.fmu"))
    text = text.replace("../target/fmu", str(fmu_dir))
    path = tmp_path / ("crane-%s.toml" % crane_dir.name)
    path.write_text(text)
    return path


def test_a_system_with_a_fmi3_crane_equals_the_fmi2_system_bit_for_bit(tmp_path, fmu_dir):
    fmu3 = pathlib.Path(fmu_dir).parent / "fmu3"
    assert (fmu3 / "multibody-crane.fmu").exists(), f"no FMI 3.0 FMUs in {fmu3}: run cargo xtask fmus"
    v3 = mixed_crane(tmp_path, fmu_dir, fmu3)
    v2 = mixed_crane(tmp_path, fmu_dir, pathlib.Path(fmu_dir))
    a = cosim.simulate(v3, stop_time=1.0, extrapolation=0)
    b = cosim.simulate(v2, stop_time=1.0, extrapolation=0)
    assert a.summary["status"] == "ok"
    assert len(a) == 1001
    for name in a.dtype.names:
        assert np.array_equal(a[name].view(np.uint64), b[name].view(np.uint64)), name
    header, rows = cosim_run(v3, tmp_path / "run", "--stop-time", 1.0, "--extrapolation", 0)
    assert_bitwise_equal(a, header, rows)


def cfmu3(tmp_path):
    return build_cfmu3(tmp_path)


def test_binary_variables_are_connected_and_described_but_not_recorded_in_python(tmp_path):
    fmu = cfmu3(tmp_path)
    # The description as Python sees it: Binary start values in hexadecimal, mimeType, maxSize.
    variables = {v["name"]: v for v in cosim.info(fmu)["variables"]}
    assert (variables["bin_in"]["type"], variables["bin_in"]["start"]) == ("Binary", "0102")
    assert (variables["bin_in"]["mime_type"], variables["bin_in"]["max_size"]) == ("application/x-cfmu3", 8)
    assert variables["blob"]["start"] == "c0ffee"
    s = cosim.System(stop=1.0, step=0.1)
    s.instance("a", fmu, start={"bin_in": "0A0B"}).instance("b", fmu)
    s.connect("a.bin_out", "b.bin_in")
    # A Binary output is refused in Python results (they hold numbers), as a String is.
    with pytest.raises(cosim.CosimError, match=r"a.bin_out is a Binary: Python results hold numbers"):
        cosim.simulate(s, output=["a.x", "a.bin_out"])
    # The numeric outputs of a system with a Binary connection run as usual.
    r = cosim.simulate(s, output=["a.count", "b.count"])
    assert list(r["b.count"][-2:]) == [9.0, 10.0]
    with pytest.raises(cosim.CosimError, match=r'"0xZZ" is not a Binary value for bin_in'):
        cosim.simulate(s, output=["a.count"], start_values={"b.bin_in": "0xZZ"})


def test_64_bit_integers_and_strings_are_exact_through_connections_and_results(tmp_path):
    fmu = cfmu3(tmp_path)
    s = cosim.System(stop=1.0, step=0.1)
    s.instance("a", fmu, start={"big_in": 5_000_000_000, "label": "hello"}).instance("b", fmu)
    s.connect("a.big_echo", "b.big_in")
    s.connect("a.label_out", "b.label_in")
    r = cosim.simulate(s, output=["b.big_echo", "a.huge", "b.label_len"])
    # Int64 and UInt64 columns keep their integers (a float64 holds neither 2**63 + 1 nor, in
    # general, an Int64); the rest stays float64.
    assert (r["b.big_echo"].dtype, r["a.huge"].dtype, r["b.label_len"].dtype) == (np.int64, np.uint64, np.float64)
    # Every row, the start time's included, is written after its point's exchange (issue 47).
    assert list(r["b.big_echo"]) == [5_000_000_000] * 11
    assert {int(x) for x in r["a.huge"]} == {2**63 + 1}
    # b.label_in = a.label_out = "hello/": a String through a connection.
    assert list(r["b.label_len"]) == [6.0] * 11


def test_uint64_start_values_above_int64_are_exact(tmp_path):
    # Issue 43: a UInt64 start above 2**63 - 1, from System.instance(start=...) and from
    # start_values=..., reaches the FMU and results exactly (no float64, no Int64 overflow).
    fmu = cfmu3(tmp_path)
    s = cosim.System(stop=1.0, step=0.1)
    s.instance("a", fmu, start={"big": 2**64 - 1}).instance("b", fmu)
    r = cosim.simulate(s, output=["a.big", "b.big"], start_values={"b.big": 2**63 + 5})
    assert r["a.big"].dtype == np.uint64
    assert {int(x) for x in r["a.big"]} == {2**64 - 1}
    assert {int(x) for x in r["b.big"]} == {2**63 + 5}


def test_fmi3_model_exchange_runs_with_solver_statistics(fmu_dir):
    # Issue 52: an FMI 3.0 FMU run as Model Exchange (the master integrates it) gives the FMI 2.0
    # ME FMU's results, and the summary carries its solver's statistics; a Co-Simulation run none.
    fmu3 = pathlib.Path(fmu_dir).parent / "fmu3" / "hydraulics-lumped3-me.fmu"
    fmu2 = pathlib.Path(fmu_dir) / "hydraulics-lumped3-me.fmu"
    assert fmu3.exists(), f"{fmu3} missing: run cargo xtask fmus"
    runs = [
        cosim.simulate_fmu(str(f), fmi_type="ModelExchange", stop_time=0.05, start_values={"U_ref": 5.0})
        for f in (fmu3, fmu2)
    ]
    for r in runs:
        assert r.summary["status"] == "ok"
        solver = r.summary["instances"][0]["solver"]
        assert solver["steps"] > 0 and solver["rhs_evaluations"] > solver["steps"], solver
        assert solver["events"] == solver["time_events"] + solver["state_events"] + solver["step_events"]
    for name in runs[0].dtype.names:
        assert np.array_equal(runs[0][name], runs[1][name]), name
    cs = cosim.simulate_fmu(str(fmu3), stop_time=0.05)
    assert "solver" not in cs.summary["instances"][0]
