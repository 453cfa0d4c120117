"""Issue 30: the Python surface as a hostile user tries it (ECCO runs, isolation, arguments)."""

import json
import os
import pathlib
import subprocess

import numpy as np
import pytest

import cosim
from conftest import COSIM, SCENARIOS, assert_bitwise_equal, cosim_run, read_csv


def oscillator_toml(tmp_path, fmu_dir, simulation="", tail=""):
    """oscillator-fd.toml with absolute FMU paths, extra [simulation] lines and tables."""
    text = (SCENARIOS / "oscillator-fd.toml").read_text()
    text = text.replace("../target/fmu/", str(pathlib.Path(fmu_dir).resolve()) + "/")
    text = text.replace("[simulation]\n", "[simulation]\n" + simulation, 1) + "\n" + tail
    path = tmp_path / "sys.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("rtol", ["1e-3", "10.0"])
def test_ecco_runs_reach_the_stop_time_as_the_cli(tmp_path, fmu_dir, rtol):
    # Item 1: Python ran (stop - start)/H0 steps (t = 9.928) or stepped past stop (loose rtol).
    system = oscillator_toml(tmp_path, fmu_dir, 'step_control = "ecco"\n', f"[simulation.ecco]\nrtol = {rtol}\n")
    header, rows = cosim_run(system, tmp_path / "cli")
    assert rows[-1, 0] == 10.0
    r = cosim.simulate(system)
    assert r.summary["status"] == "ok" and r.summary["time"] == 10.0
    assert_bitwise_equal(r, header, rows)
    with cosim.Execution(system) as e:
        e.run()
        assert e.time == 10.0
        assert_bitwise_equal(e.result(), header, rows)
    with cosim.Execution(system) as e:
        e.run_until(4.0)
        assert e.time == 4.0
        e.run_until(100.0)
        assert e.time == 10.0
        e.step(5)  # at the stop time: nothing more
        assert e.time == 10.0
        times = e.result()["time"]
        assert 4.0 in times and times[-1] == 10.0 and np.all(np.diff(times) > 0)


def test_ecco_with_an_output_interval_records_the_requested_times_and_the_last(tmp_path, fmu_dir):
    # Item 9: rows at irregular times, the final row dropped.
    system = oscillator_toml(tmp_path, fmu_dir, 'step_control = "ecco"\nrecord_every = 300\n')
    header, rows = cosim_run(system, tmp_path / "cli")
    expected = np.append(np.arange(0, 34) * 0.3, 10.0)
    np.testing.assert_allclose(rows[:, 0], expected, rtol=0, atol=1e-12)
    r = cosim.simulate(system)
    assert_bitwise_equal(r, header, rows)


@pytest.mark.parametrize("how", ["argument", "system file"])
def test_isolated_runs_from_python_do_not_run_the_working_directorys_worker(tmp_path, fmu_dir, how, monkeypatch):
    # Item 2: the interpreter was started as the worker (`python worker …`): a file `worker` in
    # the working directory was executed, and without one every isolated run failed.
    marker = tmp_path / "pwned"
    (tmp_path / "worker").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    fmu_dir = pathlib.Path(fmu_dir).resolve()
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("COSIM_WORKER_EXE", raising=False)
    if how == "argument":
        system, kwargs = oscillator_toml(tmp_path, fmu_dir), {"isolate": True}
    else:
        system, kwargs = oscillator_toml(tmp_path, fmu_dir, "isolate = true\n"), {}
    r = cosim.simulate(system, stop_time=0.5, **kwargs)
    assert not marker.exists()
    assert r.summary["status"] == "ok"
    plain = cosim.simulate(oscillator_toml(tmp_path, fmu_dir), stop_time=0.5)
    assert r.tobytes() == plain.tobytes()


def test_a_relative_worker_executable_is_refused(tmp_path, fmu_dir, monkeypatch):
    monkeypatch.setenv("COSIM_WORKER_EXE", "worker")
    with pytest.raises(cosim.CosimError, match="COSIM_WORKER_EXE.*not an absolute path"):
        cosim.simulate(oscillator_toml(tmp_path, fmu_dir), stop_time=0.1, isolate=True)


def _rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def test_repeated_runs_do_not_grow_the_process(tmp_path, fmu_dir):
    # Item 14: each run loads the FMUs again, and each load/unload leaked the FMU library's
    # description table: a process grew by ≈ 65 MB per 1000 oscillator-fd runs (20 MB per 300).
    # 120 runs of 10 ms each: before ≈ 8 MB, now ≈ 0.
    system = oscillator_toml(tmp_path, fmu_dir)
    for _ in range(10):
        cosim.simulate(system, stop_time=0.01)
    before = _rss()
    for _ in range(120):
        cosim.simulate(system, stop_time=0.01)
    grown = _rss() - before
    assert grown < 1.5e6, f"RSS grew by {grown / 1e6:.2f} MB over 120 runs"


def test_unconverged_iterative_coupling_warns(tmp_path, fmu_dir):
    # Item 12: nothing was said when the passes ran out.
    system = oscillator_toml(tmp_path, fmu_dir, "iterations = 2\niteration_tolerance = 1e-300\n")
    with pytest.warns(RuntimeWarning, match="50 of 50 communication steps did not converge"):
        r = cosim.simulate(system, stop_time=0.05)
    assert r.summary["iterations"]["unconverged_steps"] == 50


def test_ctrl_c_stops_a_local_sweep_at_once(tmp_path, fmu_dir):
    # Item 15: Ctrl-C during cosim.sweep on the local pool: the runs kept completing and
    # KeyboardInterrupt came only after the whole sweep. Here 4 runs of 1e8 steps (minutes each)
    # on 2 workers; SIGINT after the first seconds must end the sweep and its workers.
    system = oscillator_toml(tmp_path, fmu_dir)
    script = tmp_path / "sweep.py"
    script.write_text(
        "import os, signal, sys\n"
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "import cosim\n"
        "print(os.getpid(), flush=True)\n"
        "try:\n"
        f"    cosim.sweep({str(system)!r}, {{'m2.k2': [1000.0, 1100.0, 1200.0, 1300.0]}}, max_workers=2, stop_time=1e5)\n"
        "except KeyboardInterrupt:\n"
        "    print('KeyboardInterrupt', flush=True)\n"
        "    sys.exit(130)\n"
    )
    import signal
    import sys
    import time

    p = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        p.stdout.readline()
        time.sleep(3)
        kids = subprocess.run(["pgrep", "-P", str(p.pid)], capture_output=True, text=True).stdout.split()
        assert len(kids) >= 2, "the pool's workers run"
        p.send_signal(signal.SIGINT)
        out, _ = p.communicate(timeout=60)
    finally:
        p.kill()
    assert p.returncode == 130 and "KeyboardInterrupt" in out
    for k in kids:
        assert not pathlib.Path(f"/proc/{k}").exists() or "zombie" in pathlib.Path(f"/proc/{k}/status").read_text()


def test_one_output_name_given_as_a_string_is_one_column(tmp_path, fmu_dir):
    # Item 17: output="m1.x" was split into the characters "m", "1", ".", "x".
    system = oscillator_toml(tmp_path, fmu_dir)
    r = cosim.simulate(system, stop_time=0.01, output="m1.x")
    assert r.dtype.names == ("time", "m1.x")
    with cosim.Execution(system, stop_time=0.01, output="m2.v") as e:
        assert e.labels == ["m2.v"]
    with cosim.Execution(system, 0.01, None, None, "m2.x") as e:
        assert e.labels == ["m2.x"]
    with pytest.raises(cosim.CosimError, match=r"m1.x is listed twice"):
        cosim.simulate(system, stop_time=0.01, output=["m1.x", "m1.v", "m1.x"])


def test_values_before_initialization_are_refused_clearly(tmp_path, fmu_dir):
    # Found by the argument fuzzer: value() before initialize() reached the FMU, which answered
    # "fmi2GetReal: illegal call sequence".
    with cosim.Execution(oscillator_toml(tmp_path, fmu_dir), stop_time=0.01) as e:
        with pytest.raises(cosim.CosimError, match="before the execution is initialized"):
            e.value("m1.x")
        e.initialize()
        assert e.value("m1.x") == 0.0
