"""FMI 3.0 FMUs through the Python bindings (issue 32): a system whose crane is the FMI 3.0 FMU of
target/fmu3/ gives the same bits as the same system with the FMI 2.0 crane (held inputs: FMI 3.0
has no input derivatives), and as `cosim run` of it."""

import pathlib

import numpy as np

import cosim
from conftest import SCENARIOS, assert_bitwise_equal, cosim_run


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
