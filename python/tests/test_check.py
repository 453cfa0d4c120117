"""cosim.check: the report of `cosim check` as data, equal to the CLI's JSON."""

import json
import subprocess

import pytest

import cosim
from conftest import COSIM


def test_check_returns_the_report_as_data_equal_to_the_cli(fmu_dir, tmp_path):
    fmu = fmu_dir / "testing-faulty.fmu"
    report = cosim.check(fmu, steps=5, cycles=20, cosim=COSIM)
    assert not report["failed"]
    verdicts = {f["check"]: f["verdict"] for f in report["findings"]}
    assert verdicts["state"] == "PASS" and verdicts["run"] == "PASS", verdicts
    assert set(verdicts.values()) <= {"PASS", "SKIP"}, verdicts
    assert report["plan"]["steps"] == 5
    # The CLI's --json holds the same checks and verdicts.
    out = tmp_path / "r.json"
    subprocess.run([str(COSIM), "check", str(fmu), "--steps", "5", "--cycles", "20", "--json", str(out)], check=True,
                   capture_output=True)
    cli = json.loads(out.read_text())
    assert [(f["check"], f["verdict"]) for f in cli["findings"]] == [(f["check"], f["verdict"]) for f in report["findings"]]


def test_a_crashing_fmu_is_a_fail_finding_not_an_exception(fmu_dir):
    report = cosim.check(fmu_dir / "testing-faulty.fmu", start_values={"fault": "abort", "fault_time": 0.002},
                         steps=5, only=["run"], cosim=COSIM)
    assert report["failed"]
    (run,) = report["findings"]
    assert run["verdict"] == "FAIL" and "SIGABRT" in run["evidence"], run


def test_bad_options_raise(fmu_dir):
    with pytest.raises(cosim.CosimError, match="no check"):
        cosim.check(fmu_dir / "testing-faulty.fmu", only=["nonsense"], cosim=COSIM)
    with pytest.raises(cosim.CosimError, match="x0"):
        cosim.check(fmu_dir / "testing-faulty.fmu", start_values={"x0": "abc"}, cosim=COSIM)
