"""`cosim tune --dask SCHEDULER` on a LocalCluster: the same tune.csv rows and tune.json as the
threaded sweep, and a resumed sweep sends only the unfinished sequences."""

import os
import subprocess
import sys

import pytest

from conftest import COSIM, FMU_DIR, SCENARIOS, require

distributed = require("dask.distributed", "pip install 'dask[distributed]'")

# The double oscillator's free response, three extrapolation orders: three sequences.
ARGS = ["--extrapolation", "0,1,2", "--h-max", "0.1"]


@pytest.fixture(scope="module")
def cluster():
    c = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    yield c
    c.close()


def system(tmp_path):
    text = (SCENARIOS / "oscillator-tune.toml").read_text().replace("../target/fmu", str(FMU_DIR))
    path = tmp_path / "oscillator-tune.toml"
    path.write_text(text)
    return path


def tune(path, out, *extra):
    assert COSIM.exists(), f"no cosim binary at {COSIM}"
    env = dict(os.environ, COSIM_PYTHON=sys.executable)
    p = subprocess.run([str(COSIM), "tune", str(path), "--out", str(out), *ARGS, *extra], env=env,
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return p


def rows(out):
    lines = (out / "tune.csv").read_text().splitlines()
    return lines[0], sorted(lines[1:])


def test_dask_tune_equals_threaded_tune(cluster, tmp_path):
    path = system(tmp_path)
    threaded = tune(path, tmp_path / "threads", "--jobs", "2")
    dask = tune(path, tmp_path / "dask", "--dask", cluster.scheduler_address)
    assert dask.stdout == threaded.stdout
    assert rows(tmp_path / "dask") == rows(tmp_path / "threads")
    assert len(rows(tmp_path / "dask")[1]) > 3
    assert (tmp_path / "dask" / "tune.json").read_text() == (tmp_path / "threads" / "tune.json").read_text()
    assert (tmp_path / "dask" / "recommended.toml").read_text() == (tmp_path / "threads" / "recommended.toml").read_text()


def test_resumed_dask_tune_reuses_rows(cluster, tmp_path):
    path = system(tmp_path)
    out = tmp_path / "out"
    tune(path, out, "--jobs", "1")
    header, full = rows(out)
    # Drop the last sequence's rows (config "m = 2"): only it runs again, on the cluster.
    kept = [r for r in (out / "tune.csv").read_text().splitlines()[1:] if ",m = 2," not in r]
    assert len(kept) < len(full)
    (out / "tune.csv").write_text("\n".join([header, *kept]) + "\n")
    p = tune(path, out, "--dask", cluster.scheduler_address)
    assert f"({len(kept)} reused)" in p.stderr
    assert rows(out) == (header, full)


def test_unreachable_python_is_named(tmp_path):
    path = system(tmp_path)
    env = dict(os.environ, COSIM_PYTHON=str(tmp_path / "no-python"))
    p = subprocess.run([str(COSIM), "tune", str(path), "--out", str(tmp_path / "out"), *ARGS, "--dask",
                        "tcp://127.0.0.1:1"], env=env, capture_output=True, text=True)
    assert p.returncode != 0
    assert "COSIM_PYTHON" in p.stderr
