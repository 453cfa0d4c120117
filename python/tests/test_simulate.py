"""cosim.simulate / cosim.Execution against `cosim run`, errors, Ctrl-C."""

import json
import os
import re
import signal
import subprocess
import threading
import time

import numpy as np
import pytest

import cosim
from conftest import COSIM, SCENARIOS, assert_bitwise_equal, cosim_run, require


def test_crane_pub3_equals_cosim_run_bit_for_bit(tmp_path):
    header, rows = cosim_run(SCENARIOS / "crane-pub3.toml", tmp_path, "--stop-time", 4.0)
    result = cosim.simulate(SCENARIOS / "crane-pub3.toml", stop_time=4.0)
    assert result.summary["status"] == "ok"
    assert_bitwise_equal(result, header, rows)


def test_oscillator_fd_equals_cosim_run_bit_for_bit(tmp_path):
    header, rows = cosim_run(SCENARIOS / "oscillator-fd.toml", tmp_path)
    result = cosim.simulate(str(SCENARIOS / "oscillator-fd.toml"))
    assert len(result) == 10001
    assert_bitwise_equal(result, header, rows)


def oscillator_system(fmu_dir, **bond):
    s = cosim.System(stop=10.0, step=1e-3, algorithm="jacobi", extrapolation=1)
    s.instance("m1", fmu_dir / "oscillator-fd-m1.fmu", start={"damping": "case1"})
    s.instance("m2", fmu_dir / "oscillator-fd-m2.fmu", start={"damping": "case1"})
    s.connect("m2.x", "m1.xi").connect("m2.v", "m1.xi_dot").connect("m1.F", "m2.F")
    s.bond("coupling", ("m1", "F", "xi_dot", -1.0), ("m2", "F", "v", 1.0), **bond)
    s.outputs(["m1.x", "m1.v", "m2.x", "m2.v", "m1.F"])
    return s


def test_system_built_in_python_equals_the_toml_file(fmu_dir):
    a = cosim.simulate(oscillator_system(fmu_dir), stop_time=2.0)
    b = cosim.simulate(SCENARIOS / "oscillator-fd.toml", stop_time=2.0)
    assert a.dtype == b.dtype
    assert a.tobytes() == b.tobytes()


def test_energy_correction_settings_equal_the_toml_file(fmu_dir, tmp_path):
    # The per-input law on the bond, with its own gain, from Python and from a system file.
    own = dict(energy_correction=True, energy_correction_law="input", energy_correction_gain=0.8)
    s = oscillator_system(fmu_dir, **own).settings(energy_correction_law="bond", energy_correction_flow=0.5)
    text = (SCENARIOS / "oscillator-fd.toml").read_text().replace("../target/fmu", str(fmu_dir))
    text = text.replace("[simulation]\n", "[simulation]\nenergy_correction_law = \"bond\"\nenergy_correction_flow = 0.5\n")
    text = text.replace('name = "coupling"\n', 'name = "coupling"\nenergy_correction = true\n'
                        'energy_correction_law = "input"\nenergy_correction_gain = 0.8\n')
    (tmp_path / "sys.toml").write_text(text)
    a = cosim.simulate(s, stop_time=2.0)
    b = cosim.simulate(tmp_path / "sys.toml", stop_time=2.0)
    plain = cosim.simulate(oscillator_system(fmu_dir), stop_time=2.0)
    assert a.tobytes() == b.tobytes()
    assert a.tobytes() != plain.tobytes()
    with pytest.raises(TypeError):
        oscillator_system(fmu_dir).bond("x", ("m1", "F", "xi_dot"), ("m2", "F", "v"), energy_correction_lw="input")
    bad = oscillator_system(fmu_dir).settings(energy_correction=True, energy_correction_law="per-input")
    with pytest.raises(cosim.CosimError, match="energy_correction_law"):
        cosim.simulate(bad, stop_time=0.1)


def test_system_gain_offset_and_time_table(fmu_dir):
    s = cosim.System(stop=1.0, step=1e-3)
    f = fmu_dir / "testing-faulty.fmu"
    s.instance("a", f).instance("b", f, start={"x0": 0.0})
    s.connect("a.y", "b.u", gain=2.0, offset=1.0, extrapolation=0)
    s.input("a.u", [0.0, 0.5], [0.0, 1.0])
    r = cosim.simulate(s, output=["a.y", "b.y", "b.u"])
    # a: x' = 0 until 0.5, then 1 → a.y(1) = 1.5; b.u = 2·a.y + 1, in every row from the row's a.y
    # (a row is written after its point's exchange, the stop time's included: issue 47).
    assert r["a.y"][-1] == pytest.approx(1.5, abs=1e-9)
    assert r["b.u"][-1] == pytest.approx(2.0 * r["a.y"][-1] + 1.0, abs=1e-12)
    assert np.allclose(r["b.u"], 2.0 * r["a.y"] + 1.0, rtol=0, atol=1e-12)


def test_single_fmu_uses_its_default_experiment(fmu_dir):
    r = cosim.simulate(fmu_dir / "testing-faulty.fmu", start_values={"testing_faulty.x0": 2.0})
    assert r.dtype.names == ("time", "testing_faulty.y")
    assert len(r) == 1001 and r["time"][-1] == pytest.approx(1.0)
    assert np.all(r["testing_faulty.y"] == 2.0)


def test_fmu_error_raises_with_instance_and_time(fmu_dir):
    with pytest.raises(cosim.CosimError) as e:
        cosim.simulate(
            SCENARIOS / "bench-trivial-pair.toml",
            stop_time=1.0,
            start_values={"a.fault": "error", "a.fault_time": 0.25},
        )
    msg = str(e.value)
    assert re.search(r"(^|\W)a: fmi2DoStep at t = 0\.25", msg), msg
    assert "fault = error" in msg


def test_failed_run_without_check_keeps_the_rows(fmu_dir):
    r = cosim.simulate(
        SCENARIOS / "bench-trivial-pair.toml",
        stop_time=1.0,
        start_values={"b.fault": "nan", "b.fault_time": 0.5},
        check=False,
    )
    assert r.summary["status"] == "failed"
    assert r.summary["message"].startswith("b: fmi2DoStep at t = 0.5")
    assert r["time"][-1] == pytest.approx(0.5)


def test_bad_names_raise_cosim_error():
    with pytest.raises(cosim.CosimError, match="nosuch"):
        cosim.simulate(SCENARIOS / "oscillator-fd.toml", start_values={"nosuch.c": 1.0})
    with pytest.raises(cosim.CosimError, match='has no variable "nosuch"'):
        cosim.simulate(SCENARIOS / "oscillator-fd.toml", output=["m1.nosuch"])


def test_execution_steps_like_simulate():
    full = cosim.simulate(SCENARIOS / "oscillator-fd.toml", stop_time=1.0)
    with cosim.Execution(SCENARIOS / "oscillator-fd.toml", stop_time=1.0) as ex:
        assert ex.labels == list(full.dtype.names[1:])
        ex.step()
        assert ex.steps == 1 and ex.time == pytest.approx(1e-3)
        ex.step(99)
        assert ex.recorded()["m1.x"] == full["m1.x"][100]
        ex.run_until(0.5)
        assert ex.steps == 500
        assert ex.value("m2.x") == full["m2.x"][500]
        ex.run()
        assert ex.time == pytest.approx(1.0)
        part = ex.result()
        assert part.tobytes() == full.tobytes()
    assert ex.finished and ex.result().summary["status"] == "ok"
    with pytest.raises(cosim.CosimError, match="finished"):
        ex.step()


def test_execution_set_input_from_python(fmu_dir):
    ex = cosim.Execution(fmu_dir / "testing-faulty.fmu", record=False)
    ex.initialize()
    for _ in range(100):  # a "controller": u = -y
        ex.set("testing_faulty.u", -ex.value("testing_faulty.y"))
        ex.step()
    assert ex.value("testing_faulty.y") == pytest.approx((1 - 1e-3) ** 100, rel=1e-9)
    with pytest.raises(cosim.CosimError, match="testing_faulty.nosuch"):
        ex.value("testing_faulty.nosuch")
    summary = ex.finish()
    assert summary["status"] == "ok" and summary["steps"] == 100
    assert len(ex.result()) == 0


def test_to_pandas():
    pd = require("pandas")
    r = cosim.simulate(SCENARIOS / "oscillator-fd.toml", stop_time=0.1)
    df = r.to_pandas()
    assert isinstance(df, pd.DataFrame)
    assert list(df.columns) == list(r.dtype.names) and len(df) == 101
    assert (df["m1.x"].to_numpy() == r["m1.x"]).all()


def test_ctrl_c_stops_a_run_and_raises_keyboard_interrupt():
    # Python's own Ctrl-C handler, whatever this process inherited: a shell starts background
    # jobs with SIGINT ignored, and Python then installs no handler (the signal would be lost).
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    t0 = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            cosim.simulate(SCENARIOS / "bench-trivial-pair.toml", stop_time=1e5)  # 1e8 steps
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    assert time.monotonic() - t0 < 5.0
    # The process is fine afterwards.
    assert len(cosim.simulate(SCENARIOS / "bench-trivial-pair.toml", stop_time=0.01)) == 11


def test_tune_returns_tune_json(tmp_path):
    t = cosim.tune(SCENARIOS / "oscillator-tune.toml", tmp_path)
    assert t == json.loads((tmp_path / "tune.json").read_text())
    assert t["h_ini"] == 0.01 and t["runs"] > 0
    assert t["recommended"]["H"] == 0.07  # as `cosim tune` finds (docs/tune.md)
    # Without out_dir: a temporary directory.
    assert cosim.tune(SCENARIOS / "oscillator-tune.toml", h_max=0.02)["h_max"] == 0.02


def test_ssp_package_equals_cosim_run(tmp_path):
    ssp = tmp_path / "oscillator-fd.ssp"
    subprocess.run([str(COSIM), "export-ssp", str(SCENARIOS / "oscillator-fd.toml"), "--out", str(ssp)], check=True,
                   capture_output=True)
    header, rows = cosim_run(ssp, tmp_path / "out", "--stop-time", 1.0)
    assert_bitwise_equal(cosim.simulate(ssp, stop_time=1.0), header, rows)


def crane_a4(fmu_dir, **settings):
    """scenarios/crane-a4.toml built in Python (force coupling: the hydraulics' F feeds through)."""
    s = cosim.System(stop=3.0, step=1e-3, algorithm="jacobi", extrapolation=1, **settings)
    s.instance("hyd", fmu_dir / "hydraulics-naya.fmu", start={"F_static": 8829.0, "h": 1e-4})
    s.instance("mech", fmu_dir / "multibody-crane.fmu")
    s.connect("mech.s", "hyd.s").connect("mech.s_dot", "hyd.s_dot").connect("hyd.F", "mech.F")
    s.input("hyd.kappa", [0.0, 2.0, 6.0], [0.4543455895980512, 0.4443455895980512, 0.4643455895980512])
    s.bond("cylinder", ("mech", "F", "s_dot", 1.0), ("hyd", "F", "s_dot", -1.0))
    s.outputs(["mech.s", "mech.s_dot", "hyd.p1", "hyd.p2", "hyd.F", "hyd.kappa"])
    return s


def test_explicit_exchange_equals_cosim_run_with_the_flag(fmu_dir, tmp_path):
    header, rows = cosim_run(SCENARIOS / "crane-a4.toml", tmp_path, "--stop-time", 3.0, "--exchange", "explicit")
    explicit = cosim.simulate(crane_a4(fmu_dir, exchange="explicit"))
    assert_bitwise_equal(explicit, header, rows)
    # The default re-reads F after the hydraulics' inputs are set: other numbers.
    ordered = cosim.simulate(crane_a4(fmu_dir))
    assert ordered.tobytes() != explicit.tobytes()
    with pytest.raises(cosim.CosimError, match='exchange: unknown variant `implicit`; did you mean "explicit"'):
        cosim.simulate(crane_a4(fmu_dir, exchange="implicit"))
