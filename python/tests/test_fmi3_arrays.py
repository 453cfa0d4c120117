"""Whole FMI 3.0 arrays as start values from Python (issue 32): a list, tuple or NumPy array
gives every element (row-major), in ``cosim.simulate`` and ``cosim.simulate_fmu``, bit for bit
as ``cosim run X.fmu --start-value ain=[2,3]``. The FMU is the C test FMU of
cosim-cli/tests/fmi3_cfmu.rs (``ain``: Float64 input of shape [2]; ``aout = 10 ain``;
``x' = u + ain[1] - 0.5``), built here with the system's ``cc`` from its source and description."""

import numpy as np
import pytest

import cosim
from conftest import assert_bitwise_equal, build_cfmu3, cosim_run


@pytest.fixture(scope="module")
def cfmu3(tmp_path_factory):
    return build_cfmu3(tmp_path_factory.mktemp("cfmu3"))


OUT = ["x", "aout[1]", "aout[2]"]


@pytest.mark.parametrize("ain", [[2.0, 3.0], (2, 3), np.array([2.0, 3.0]), [[2.0], [3.0]]])
def test_a_whole_array_start_value_sets_every_element(tmp_path, cfmu3, ain):
    r = cosim.simulate(cfmu3, start_values={"ain": ain, "u": 1.0}, output=OUT)
    assert r.summary["status"] == "ok"
    # aout = 10 ain; x' = u + ain[1] - 0.5 = 2.5 from x = 0 (explicit Euler, exact for a constant rate).
    assert (r["cfmu3.aout[1]"][-1], r["cfmu3.aout[2]"][-1]) == (20.0, 30.0)
    assert abs(r["cfmu3.x"][-1] - 2.5) < 1e-12
    header, rows = cosim_run(cfmu3, tmp_path / "run", "--start-value", "ain=[2,3]", "--start-value", "u=1",
                             "--output-variables", ",".join(OUT))
    assert_bitwise_equal(r, header, rows)
    f = cosim.simulate_fmu(cfmu3, start_values={"ain": ain, "u": 1.0}, output=OUT)
    for name in OUT:
        assert np.array_equal(f[name].view(np.uint64), r["cfmu3." + name].view(np.uint64)), name


def test_a_whole_array_of_the_wrong_size_or_a_mapping_is_refused(cfmu3):
    with pytest.raises(Exception, match=r"ain has shape \[2\] \(2 elements\) but 1 start values were given"):
        cosim.simulate(cfmu3, start_values={"ain": [1.0]})
    with pytest.raises(Exception, match=r"ain has shape \[2\] \(2 elements\) but 3 values were given"):
        cosim.simulate_fmu(cfmu3, start_values={"ain": [1.0, 2.0, 3.0]})
    with pytest.raises(TypeError, match="not a bool, int, float, str or a list of them"):
        cosim.simulate(cfmu3, start_values={"ain": {"a": 1}})
