"""One FMU as FMPy runs it (issue 36): bare names, start_time, output_interval, cosim.info.

The reference is FMPy's own ``simulate_fmu`` on the same FMU (FMPy from PyPI, in .venv)."""

import numpy as np
import pytest

import cosim
from conftest import require

fmpy = require("fmpy")


@pytest.mark.parametrize(
    "name, start_values, output, kwargs",
    [
        ("oscillator-fd-m1", {"x0": 0.1, "damping": "case2"}, ["x", "v", "F"], {"stop_time": 2.0, "output_interval": 1e-3}),
        ("hydraulics-naya", {"kappa": 0.47, "integrator": "RK4"}, ["p1", "p2", "F"], {"stop_time": 0.5, "output_interval": 1e-3}),
        ("testing-faulty", {"x0": 2.5}, None, {"start_time": 1.0, "stop_time": 1.5, "output_interval": 1e-2}),
    ],
)
def test_simulate_fmu_equals_fmpy_bit_for_bit(fmu_dir, name, start_values, output, kwargs):
    fmu = str(fmu_dir / f"{name}.fmu")
    ours = cosim.simulate_fmu(fmu, start_values=start_values, output=output, **kwargs)
    # FMPy takes enumerations as their values.
    items = {v["name"]: {i["name"]: i["value"] for i in v["items"]} for v in cosim.info(fmu)["variables"] if v["type"] == "Enumeration"}
    theirs_start = {k: items[k][v] if k in items else v for k, v in start_values.items()}
    theirs = fmpy.simulate_fmu(fmu, start_values=theirs_start, output=output, **kwargs)
    # FMPy orders the columns as the model variables, cosim as asked
    assert sorted(ours.dtype.names) == sorted(theirs.dtype.names)
    assert len(ours) == len(theirs) > 10
    for col in theirs.dtype.names:
        assert np.array_equal(ours[col], theirs[col]), col


def test_bare_names_in_simulate_equal_the_dotted_ones(fmu_dir):
    fmu = fmu_dir / "oscillator-fd-m1.fmu"
    bare = cosim.simulate(fmu, stop_time=1.0, start_values={"x0": 0.2}, output=["x"])
    dotted = cosim.simulate(fmu, stop_time=1.0, start_values={"oscillator_fd_m1.x0": 0.2}, output=["oscillator_fd_m1.x"])
    assert bare.dtype.names == ("time", "oscillator_fd_m1.x")
    assert np.array_equal(bare["oscillator_fd_m1.x"], dotted["oscillator_fd_m1.x"])
    assert bare["oscillator_fd_m1.x"][0] == 0.2


def test_start_time_and_output_interval(fmu_dir):
    fmu = fmu_dir / "oscillator-fd-m1.fmu"
    r = cosim.simulate_fmu(fmu, start_time=2.0, stop_time=3.0, step_size=1e-3, output_interval=0.1, output=["x"])
    assert r.dtype.names == ("time", "x")
    assert r["time"][0] == 2.0 and len(r) == 11 and r["time"][-1] == pytest.approx(3.0)
    # the rows are every 100th step of the run at 1 ms
    every = cosim.simulate_fmu(fmu, start_time=2.0, stop_time=3.0, output_interval=1e-3, output=["x"])
    assert np.array_equal(r["x"], every["x"][::100])


def test_bad_names_and_options_say_what_would_work(fmu_dir):
    fmu = fmu_dir / "oscillator-fd-m1.fmu"
    with pytest.raises(cosim.CosimError, match=r'no variable "x00".*did you mean "x0"'):
        cosim.simulate_fmu(fmu, start_values={"x00": 0.1})
    with pytest.raises(cosim.CosimError, match=r"output-interval.*0.0015 s is not a whole multiple"):
        cosim.simulate_fmu(fmu, step_size=1e-3, output_interval=1.5e-3)
    with pytest.raises(ValueError, match="toleranceDefined"):
        cosim.simulate_fmu(fmu, relative_tolerance=1e-6)


def test_info_lists_variables_units_and_enumeration_items(fmu_dir):
    d = cosim.info(fmu_dir / "testing-faulty.fmu")
    assert d["instance"] == "testing_faulty"
    fault = next(v for v in d["variables"] if v["name"] == "fault")
    assert fault["type"] == "Enumeration" and fault["causality"] == "parameter"
    names = [i["name"] for i in fault["items"]]
    # every mode the testing FMU documents, each with its value
    for item in ["none", "warning", "discard", "error", "nan", "panic", "abort"]:
        assert item in names, names
    assert fault["start_item"] == "none"
    assert [e["name"] for e in d["enumerations"]] == [fault["declared_type"]]
    osc = cosim.info(fmu_dir / "oscillator-fd-m1.fmu")
    x0 = next(v for v in osc["variables"] if v["name"] == "x0")
    assert (x0["type"], x0["unit"], x0["causality"]) == ("Real", "m", "parameter")
    assert osc["default_experiment"]["stop_time"] > 0
    # the same as FMPy's reading of the model description
    md = fmpy.read_model_description(str(fmu_dir / "oscillator-fd-m1.fmu"))
    assert [v.name for v in md.modelVariables] == [v["name"] for v in osc["variables"]]
    assert [v.unit for v in md.modelVariables if v.type == "Real"] == [v["unit"] for v in osc["variables"] if v["type"] == "Real"]
    assert [v.causality for v in md.modelVariables] == [v["causality"] for v in osc["variables"]]


def test_units_on_the_result_and_in_summary_json(fmu_dir, tmp_path):
    from conftest import COSIM, SCENARIOS
    import json
    import subprocess

    r = cosim.simulate(SCENARIOS / "crane-pub3.toml", stop_time=0.1)
    assert r.units == {"time": "s", "mech.s": "m", "mech.s_dot": "m/s", "hyd.p1": "Pa", "hyd.p2": "Pa",
                       "hyd.p3": "Pa", "hyd.U": "V", "hyd.F": "N"}
    # the same as each variable's unit in its FMU's model description
    for col, unit in r.units.items():
        if col != "time":
            inst, var = col.split(".")
            fmu = {"mech": "multibody-crane", "hyd": "hydraulics-lumped3"}[inst]
            md = fmpy.read_model_description(str(fmu_dir / f"{fmu}.fmu"))
            v = next(v for v in md.modelVariables if v.name == var)
            assert (v.unit or (v.declaredType.unit if v.declaredType else None)) == unit, col
    subprocess.run([str(COSIM), "run", str(SCENARIOS / "crane-pub3.toml"), "--stop-time", "0.1", "--out", str(tmp_path)],
                   check=True, capture_output=True)
    assert json.loads((tmp_path / "summary.json").read_text())["units"] == r.units
    single = cosim.simulate_fmu(fmu_dir / "oscillator-fd-m1.fmu", stop_time=0.1, output=["x", "v", "F"])
    assert single.units == {"time": "s", "x": "m", "v": "m/s", "F": "N"}
    assert single[["x", "v"]].units == single.units  # kept through views


def test_cosim_run_mat_is_read_by_scipy_with_the_csv_numbers(tmp_path):
    """results.mat (`cosim run --mat`, the Dymola/OpenModelica dsres layout) read by scipy's
    independent MATLAB v4 reader: names, units and every number equal results.csv."""
    from conftest import COSIM, SCENARIOS, read_csv
    import subprocess

    scipy_io = require("scipy.io", "pip install scipy")
    subprocess.run([str(COSIM), "run", str(SCENARIOS / "crane-pub3.toml"), "--stop-time", "1", "--out", str(tmp_path), "--mat"],
                   check=True, capture_output=True)
    header, rows = read_csv(tmp_path / "results.csv")
    m = scipy_io.loadmat(str(tmp_path / "results.mat"), chars_as_strings=False)
    assert ["".join(r).strip() for r in m["Aclass"]] == ["Atrajectory", "1.1", "", "binTrans"]
    assert ["".join(c).strip() for c in m["name"].T] == header
    units = ["".join(c).strip() for c in m["description"].T]
    assert units[:4] == ["[s]", "[m]", "[m/s]", "[Pa]"]
    assert m["dataInfo"][:, 0].tolist() == [0, 1, 0, -1] and m["dataInfo"][:, 3].tolist() == [2, 4, 0, -1]
    assert m["data_1"].tolist() == [[0.0, 1.0]]
    assert np.array_equal(m["data_2"].T, rows)
    # FMPy's and libcosim's --output-file gets a pointer to --out
    bad = subprocess.run([str(COSIM), "run", str(SCENARIOS / "crane-pub3.toml"), "--output-file", "r.csv"],
                         capture_output=True, text=True)
    assert bad.returncode != 0 and "use --out DIR" in bad.stderr


def test_result_plot_has_title_units_and_a_legend_beside_the_data(fmu_dir, tmp_path):
    from conftest import SCENARIOS

    require("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    r = cosim.simulate(SCENARIOS / "crane-pub3.toml", stop_time=2.0)
    fig = r.plot(["mech.s", "hyd.p1", "hyd.p3"], path=tmp_path / "crane.png")
    assert (tmp_path / "crane.png").read_bytes()[1:4] == b"PNG"
    assert fig._suptitle.get_text() == "result, H = 0.001 s, ok"
    axes = fig.get_axes()
    assert [a.get_ylabel() for a in axes] == ["mech.s (m)", "value (Pa)"]
    assert axes[-1].get_xlabel() == "time (s)"
    fig.canvas.draw()
    for ax in axes:
        legend = ax.get_legend()
        assert legend is not None
        # the legend lies right of the data, not over it
        assert legend.get_window_extent().x0 >= ax.get_window_extent().x1
    assert [t.get_text() for t in axes[1].get_legend().get_texts()] == ["hyd.p1", "hyd.p3"]
    # p3 drawn over p1, thinner: both visible where they coincide
    lw = [line.get_linewidth() for line in axes[1].get_lines()]
    assert lw[0] > lw[1]
    with pytest.raises(KeyError, match="no field 'hyd.p4'"):
        r.plot(["hyd.p4"])


def test_fmu_warnings_can_be_muted_and_are_counted(fmu_dir, tmp_path):
    """The testing FMU warns in every step from fault_time on (fault = warning): printed by
    default, not with fmu_log("none") / --fmu-log none, counted in the summary either way."""
    import subprocess
    import sys
    from conftest import COSIM

    fmu = fmu_dir / "testing-faulty.fmu"
    script = (
        "import cosim, sys\n"
        "if sys.argv[1] != 'default': cosim.fmu_log(sys.argv[1])\n"
        f"r = cosim.simulate_fmu({str(fmu)!r}, stop_time=1.0, output_interval=0.01, "
        "start_values={'fault': 'warning', 'fault_time': 0.5})\n"
        "print(r.summary['instances'][0]['fmu_warnings'])\n"
    )
    runs = {level: subprocess.run([sys.executable, "-c", script, level], capture_output=True, text=True)
            for level in ["default", "none", "error", "all"]}
    counts = {level: int(r.stdout.strip()) for level, r in runs.items()}
    assert counts["default"] >= 50 and len(set(counts.values())) == 1, counts
    assert runs["default"].stderr.count("[testing_faulty]") >= counts["default"], runs["default"].stderr[-500:]
    assert "[testing_faulty]" not in runs["none"].stderr and "[testing_faulty]" not in runs["error"].stderr
    with pytest.raises(ValueError, match="not one of"):
        cosim.fmu_log("quiet")
    # the command line: --fmu-log none, the same count in summary.json
    import json
    cli = subprocess.run([str(COSIM), "run", str(fmu), "--stop-time", "1", "--step", "0.01", "--start-value", "fault=warning",
                          "--start-value", "fault_time=0.5", "--fmu-log", "none", "--out", str(tmp_path)],
                         capture_output=True, text=True)
    assert cli.returncode == 0, cli.stderr
    assert "[testing_faulty]" not in cli.stderr
    assert json.loads((tmp_path / "summary.json").read_text())["instances"][0]["fmu_warnings"] == counts["default"]


def test_execution_takes_bare_names_for_one_fmu(fmu_dir):
    fmu = fmu_dir / "oscillator-fd-m1.fmu"
    with cosim.Execution(fmu, 1.0, None, {"x0": 0.3}, ["x"]) as ex:
        ex.initialize()
        assert ex.value("oscillator_fd_m1.x") == 0.3
    with cosim.Execution(fmu, stop_time=1.0, start_values={"x0": 0.4}, output=["x"]) as ex:
        ex.initialize()
        assert ex.labels == ["oscillator_fd_m1.x"] and ex.value("oscillator_fd_m1.x") == 0.4


def test_input_as_fmpy_takes_it(fmu_dir):
    """``input=`` (issue 44): FMPy's structured array — piecewise constant with jumps (repeated
    times) on the grid — gives FMPy's states; a DataFrame of the same rows the same result."""
    fmu = str(fmu_dir / "oscillator-fd-m1.fmu")
    dtype = [("time", float), ("xi", float), ("xi_dot", float)]
    rows = [(0, 0, 0), (0.25, 0, 0), (0.25, 0.01, 0), (0.5, 0.01, 0), (0.5, -0.02, 0.5), (1, -0.02, 0.5)]
    signals = np.array(rows, dtype=dtype)
    h = 2.0**-10
    ours = cosim.simulate_fmu(fmu, stop_time=1.0, output_interval=h, output=["x", "v"], input=signals)
    theirs = fmpy.simulate_fmu(fmu, stop_time=1.0, output_interval=h, output=["x", "v"], input=signals)
    assert len(ours) == len(theirs) == 1025
    for col in ("x", "v"):
        assert np.max(np.abs(ours[col] - theirs[col])) <= 1e-12, col
    still = cosim.simulate_fmu(fmu, stop_time=1.0, output_interval=h, output=["x", "v"])
    assert not np.array_equal(ours["x"], still["x"]), "the input acted"
    pandas = require("pandas")
    frame = pandas.DataFrame(rows, columns=["time", "xi", "xi_dot"])
    again = cosim.simulate_fmu(fmu, stop_time=1.0, output_interval=h, output=["x", "v"], input=frame)
    assert np.array_equal(again["x"], ours["x"])
