"""cosim.sweep on the local process pool and on a Dask LocalCluster, against `cosim run`."""

import pathlib

import numpy as np
import pytest

import cosim
from conftest import FMU_DIR, SCENARIOS, cosim_run, require

pd = require("pandas")
distributed = require("dask.distributed", "pip install 'dask[distributed]'")

PAIR = SCENARIOS / "bench-trivial-pair.toml"
X0 = [0.5 + 0.25 * k for k in range(8)]
PARAMETERS = {"a.x0": X0, "b.x0": [-x for x in X0]}  # 8 × 8 = 64 runs
STOP = 0.5


@pytest.fixture(scope="module")
def local_sweep():
    return cosim.sweep(PAIR, PARAMETERS, stop_time=STOP, max_workers=2)


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def test_local_sweep_is_the_cartesian_product_in_order(local_sweep):
    df = local_sweep
    assert len(df) == 64
    assert list(df.columns[:3]) == ["a.x0", "b.x0", "error"]
    assert (df["a.x0"].to_numpy() == np.repeat(X0, 8)).all()
    assert (df["b.x0"].to_numpy() == np.tile([-x for x in X0], 8)).all()
    assert (df["status"] == "ok").all() and (df["error"] == "").all()
    assert (df["steps"] == 500).all()


def test_dask_sweep_equals_local_pool(local_sweep, client):
    df = cosim.sweep(PAIR, PARAMETERS, client=client, stop_time=STOP)
    pd.testing.assert_frame_equal(df, local_sweep, check_exact=True)
    shipped = cosim.sweep(PAIR, PARAMETERS, client=client, stop_time=STOP, ship_fmus=True)
    pd.testing.assert_frame_equal(shipped, local_sweep, check_exact=True)


def test_sweep_equals_64_cosim_runs(local_sweep, tmp_path):
    text = PAIR.read_text()
    fmu = str(FMU_DIR / "testing-faulty.fmu")
    for i, row in local_sweep.iterrows():
        toml = text.replace('fmu = "../target/fmu/testing-faulty.fmu"', f"fmu = {fmu!r}\nstart = {{ x0 = {row['a.x0']!r} }}", 1)
        toml = toml.replace('fmu = "../target/fmu/testing-faulty.fmu"', f"fmu = {fmu!r}\nstart = {{ x0 = {row['b.x0']!r} }}", 1)
        path = tmp_path / f"run{i}.toml"
        path.write_text(toml)
        header, rows = cosim_run(path, tmp_path / f"out{i}", "--stop-time", STOP)
        for j, name in enumerate(header[1:], start=1):
            assert row[name] == rows[-1, j], (i, name)
        assert row["time"] == rows[-1, 0]


def reduce_max_abs(result, summary):
    return {"status": summary["status"], "max_abs_a": float(np.max(np.abs(result["a.y"])))}


def test_failing_parameter_set_is_a_row_with_its_error(client):
    sets = [
        {"a.x0": 1.0},
        {"a.x0": 2.0, "a.fault": "error", "a.fault_time": 0.25},
        {"a.x0": 3.0},
        {"nosuch.x0": 1.0},
    ]
    for c in (None, client):
        df = cosim.sweep(PAIR, sets, reduce=reduce_max_abs, client=c, stop_time=STOP)
        assert list(df["status"]) == ["ok", "failed", "ok", "error"]
        assert df["error"][0] == "" and df["error"][2] == ""
        assert "a: fmi2DoStep at t = 0.25" in df["error"][1]
        assert "nosuch" in df["error"][3]
        assert df["max_abs_a"][2] > df["max_abs_a"][0] > 0


def test_sweep_of_a_python_system(fmu_dir):
    s = cosim.System(stop=0.2, step=1e-3)
    s.instance("a", pathlib.Path(fmu_dir) / "testing-faulty.fmu")
    s.input("a.u", [0.0], [1.0])
    df = cosim.sweep(s, {"a.x0": [0.0, 1.0]}, max_workers=2)
    assert list(df["a.y"]) == pytest.approx([0.2, 1.2])
