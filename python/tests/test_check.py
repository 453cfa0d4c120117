"""cosim.check: the report of `cosim check` as data, equal to the CLI's JSON, made by the
package alone (its own checker and worker processes, no `cosim` executable)."""

import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import cosim
from conftest import COSIM, build_hostile_fmu


def test_check_returns_the_report_as_data_equal_to_the_cli(fmu_dir, tmp_path):
    fmu = fmu_dir / "testing-faulty.fmu"
    report = cosim.check(fmu, steps=5, cycles=20)
    assert not report["failed"]
    verdicts = {f["check"]: f["verdict"] for f in report["findings"]}
    assert verdicts["state"] == "PASS" and verdicts["run"] == "PASS", verdicts
    assert set(verdicts.values()) <= {"PASS", "SKIP"}, verdicts
    assert report["plan"]["steps"] == 5
    # The CLI's --json holds the same checks and verdicts, and so does cosim=PATH (the CLI run by cosim.check).
    out = tmp_path / "r.json"
    subprocess.run([str(COSIM), "check", str(fmu), "--steps", "5", "--cycles", "20", "--json", str(out)], check=True,
                   capture_output=True)
    cli = json.loads(out.read_text())
    by_cli = cosim.check(fmu, steps=5, cycles=20, cosim=COSIM)
    for other in (cli, by_cli):
        assert [(f["check"], f["verdict"]) for f in other["findings"]] == [
            (f["check"], f["verdict"]) for f in report["findings"]]
        assert other["plan"] == report["plan"]


def test_a_crashing_fmu_is_a_fail_finding_not_an_exception(fmu_dir):
    report = cosim.check(fmu_dir / "testing-faulty.fmu", start_values={"fault": "abort", "fault_time": 0.002},
                         steps=5, only=["run"])
    assert report["failed"]
    (run,) = report["findings"]
    assert run["verdict"] == "FAIL" and "SIGABRT" in run["evidence"], run


def test_bad_options_raise(fmu_dir):
    with pytest.raises(cosim.CosimError, match="no check"):
        cosim.check(fmu_dir / "testing-faulty.fmu", only=["nonsense"])
    with pytest.raises(cosim.CosimError, match="x0"):
        cosim.check(fmu_dir / "testing-faulty.fmu", start_values={"x0": "abc"})
    with pytest.raises(cosim.CosimError, match="timeout = -1: must be a positive number of seconds"):
        cosim.check(fmu_dir / "testing-faulty.fmu", timeout=-1)
    # A missing file is the description check's FAIL, as in `cosim check`.
    report = cosim.check(fmu_dir / "nosuch.fmu")
    assert report["failed"] and "No such file" in report["findings"][0]["evidence"], report["findings"][0]


def test_check_needs_nothing_but_the_installed_package(fmu_dir, tmp_path):
    # Issue 49 item 6: a `pip install`ed wheel runs cosim.check with no `cosim` executable
    # anywhere: PATH holds none, $COSIM_WORKER_EXE and $COSIM_BIN are unset, and the package
    # itself ships none (its files hold no executable named cosim).
    from importlib.metadata import files

    shipped = [str(f) for f in files("cosim") or [] if pathlib.PurePath(str(f)).name == "cosim"]
    assert shipped == [], shipped
    path = os.pathsep.join(p for p in ["/usr/bin", "/bin"] if not shutil.which("cosim", path=p))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COSIM_", "CARGO"))}
    env["PATH"] = path
    hostile = build_hostile_fmu(tmp_path, 17)  # kills its parent in fmi2Instantiate
    script = textwrap.dedent(f"""
        import os, shutil, cosim
        assert shutil.which("cosim") is None, shutil.which("cosim")
        r = cosim.check({str(fmu_dir / "testing-faulty.fmu")!r}, steps=5, cycles=20)
        verdicts = {{f["check"]: f["verdict"] for f in r["findings"]}}
        assert not r["failed"] and verdicts["run"] == "PASS" and verdicts["state"] == "PASS", verdicts
        r = cosim.check({str(fmu_dir / "testing-faulty.fmu")!r}, start_values={{"fault": "abort", "fault_time": 0.002}},
                        steps=5, only=["run"])
        assert r["failed"] and "SIGABRT" in r["findings"][0]["evidence"], r
        try:
            cosim.check({str(hostile)!r}, only=["load"])
        except cosim.CosimError as e:
            assert "signal 9" in str(e), e
        else:
            raise AssertionError("the checker should have died")
        print("ok", os.getpid())
    """)
    done = subprocess.run([sys.executable, "-I", "-c", script], env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0 and done.stdout.startswith("ok"), done.stderr + done.stdout


def _processes_naming(text):
    """The pids of processes whose command line contains `text`."""
    found = []
    for d in pathlib.Path("/proc").iterdir():
        try:
            if d.name.isdigit() and text.encode() in (d / "cmdline").read_bytes():
                found.append(int(d.name))
        except OSError:
            pass
    return found


def _hanging_check(tmp_path):
    """A Python process running cosim.check on an FMU whose fmi2DoStep never returns; returns it
    once the check's worker runs, and the FMU's path."""
    fmu = build_hostile_fmu(tmp_path, 1)
    script = textwrap.dedent(f"""
        import sys, cosim
        print("ready", flush=True)
        try:
            cosim.check({str(fmu)!r}, only=["run"], timeout=120)
        except KeyboardInterrupt:
            print("interrupted", flush=True)
            sys.exit(7)
    """)
    p = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, start_new_session=True)
    assert p.stdout.readline().strip() == "ready"
    deadline = time.monotonic() + 60
    while not any(b"check-worker" in pathlib.Path(f"/proc/{pid}/cmdline").read_bytes()
                  for pid in _processes_naming(str(fmu)) if pathlib.Path(f"/proc/{pid}").exists()):
        assert time.monotonic() < deadline, "the check's worker did not start"
        time.sleep(0.05)
    return p, fmu


def _gone(fmu, within=10):
    deadline = time.monotonic() + within
    while _processes_naming(str(fmu)):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_ctrl_c_stops_the_checker_and_its_worker(tmp_path):
    p, fmu = _hanging_check(tmp_path)
    t0 = time.monotonic()
    os.killpg(p.pid, signal.SIGINT)  # as Ctrl-C: Python and its checker (one process group)
    try:
        code = p.wait(timeout=20)
    finally:
        p.kill()
    took = time.monotonic() - t0
    assert code == 7, p.stdout.read()
    assert took < 5, took
    assert _gone(fmu), f"left behind: {_processes_naming(str(fmu))}"


def test_the_checker_stops_when_python_dies(tmp_path):
    p, fmu = _hanging_check(tmp_path)
    p.kill()
    p.wait()
    # The checker sees its parent gone, kills the worker and ends (not 120 s later).
    assert _gone(fmu), f"left behind: {_processes_naming(str(fmu))}"
