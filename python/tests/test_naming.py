"""The one naming rule (issue 49 item 3): a variable named bare where unambiguous or
instance-qualified, on every Python front end; and the package's version, and a sweep whose every
run fails raising."""

import pytest

import cosim
from conftest import SCENARIOS


def test_simulate_fmu_takes_and_answers_both_names(fmu_dir):
    fmu = fmu_dir / "testing-faulty.fmu"
    bare = cosim.simulate_fmu(fmu, start_values={"x0": 2.0}, output=["y"])
    qual = cosim.simulate_fmu(fmu, start_values={"testing_faulty.x0": 2.0}, output=["testing_faulty.y"])
    assert bare.dtype.names == qual.dtype.names == ("time", "y")  # FMPy's bare fields
    assert bare.tobytes() == qual.tobytes()
    assert (bare["testing_faulty.y"] == bare["y"]).all() and bare["y"][-1] == 2.0
    # simulate of the same FMU: qualified fields, read bare too
    r = cosim.simulate(fmu, start_values={"x0": 2.0})
    assert r.dtype.names == ("time", "testing_faulty.y")
    assert (r["y"] == bare["y"]).all()
    with pytest.raises(KeyError, match="did you mean 'y'"):
        bare["yy"]


def test_execution_value_and_set_take_bare_names_where_unambiguous():
    with cosim.Execution(SCENARIOS / "crane-pub3.toml", stop_time=0.01) as ex:
        ex.step()
        assert ex.value("p1") == ex.value("hyd.p1")
        # mech and hyd both have "s": a bare "s" names no one
        with pytest.raises(cosim.CosimError, match=r"several instances \(.*mech\.s.*hyd\.s|several instances \(.*hyd\.s.*mech\.s"):
            ex.value("s")
        with pytest.raises(cosim.CosimError, match='did you mean "hyd.p1"'):
            ex.value("hyd.p11")
    r = cosim.simulate(SCENARIOS / "crane-pub3.toml", stop_time=0.01)
    assert r["p1"][0] == r["hyd.p1"][0]
    # among the result's fields "s" is only mech's (hyd.s, an input, is not recorded)
    assert r["s"][0] == r["mech.s"][0]
    two = cosim.simulate(SCENARIOS / "bench-trivial-pair.toml", stop_time=0.01)
    with pytest.raises(KeyError, match=r"several instances \(a\.y, b\.y\)"):
        two["y"]


def test_execution_set_takes_bare_and_qualified_names_alike(fmu_dir):
    # the controller u = -y of test_simulate, once with bare names, once qualified: the same run
    ys = []
    for u, y in (("u", "y"), ("testing_faulty.u", "testing_faulty.y")):
        with cosim.Execution(fmu_dir / "testing-faulty.fmu", record=False) as ex:
            ex.initialize()
            for _ in range(10):
                ex.set(u, -ex.value(y))
                ex.step()
            ys.append(ex.value(y))
    assert ys[0] == ys[1] == pytest.approx((1 - 1e-3) ** 10, rel=1e-9)
    with cosim.Execution(SCENARIOS / "bench-trivial-pair.toml", stop_time=0.01) as ex:
        with pytest.raises(cosim.CosimError, match=r"several instances"):
            ex.set("u", 1.0)  # a.u and b.u
        with pytest.raises(cosim.CosimError, match='did you mean "a.u"'):
            ex.set("a.uu", 1.0)


def test_version_is_the_installed_wheels():
    from importlib.metadata import version

    assert cosim.__version__ == version("cosim") and cosim.__version__[0].isdigit()


def _bad_reduce(result, summary):
    raise ValueError("reducer broke")


def test_a_sweep_where_no_run_gives_a_result_raises_with_the_first_error():
    with pytest.raises(cosim.CosimError, match="no run of the sweep gave a result \\(2 runs\\).*reducer broke"):
        cosim.sweep(SCENARIOS / "bench-trivial-pair.toml", {"a.x0": [1.0, 2.0]}, reduce=_bad_reduce, stop_time=0.01)
    # the case: a lambda reducer, which the process pool cannot pickle
    with pytest.raises(cosim.CosimError, match="no run of the sweep gave a result \\(2 runs\\).*pickle"):
        cosim.sweep(SCENARIOS / "bench-trivial-pair.toml", {"a.x0": [1.0, 2.0]}, reduce=lambda r, s: 1.0,
                    stop_time=0.01)
    # every run failing in its FMU is a result (a stability map is made of them): rows, no exception
    df = cosim.sweep(
        SCENARIOS / "bench-trivial-pair.toml",
        [{"a.fault": "error", "a.fault_time": 0.002}, {"a.fault": "error", "a.fault_time": 0.004}],
        stop_time=0.01,
    )
    assert list(df["status"]) == ["failed", "failed"] and all("fmi2DoStep" in e for e in df["error"])
    # one run fails, the other not: a row each, no exception
    df = cosim.sweep(SCENARIOS / "bench-trivial-pair.toml", [{"a.x0": 1.0}, {"nosuch.x0": 1.0}], stop_time=0.01)
    assert list(df["error"] == "") == [True, False] and "nosuch" in df["error"][1]
