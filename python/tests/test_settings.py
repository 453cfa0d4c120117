"""The Python front end of the one settings type (``master::system::Settings``): every setting,
built from the type itself (so a new one is covered with no list here), reaches the master from
``cosim.System(**settings)`` exactly as from a system file; ``simulate(**settings)`` sets any of
them like ``cosim run --set``; an unknown key is refused with its name."""

import subprocess
import tomllib

import pytest

import cosim
from cosim import _cosim
from conftest import COSIM, SCENARIOS, assert_bitwise_equal, cosim_run


def test_every_setting_from_a_python_dict_is_the_same_settings_as_from_toml(tmp_path):
    keys, every_text = _cosim._setting_keys()
    every = tomllib.loads(every_text)
    assert sorted(every) == sorted(keys)
    assert isinstance(every["ecco"], dict) and len(every["ecco"]) == 9
    s = cosim.System(**every)
    # What the master reads from the dict, as TOML: the same settings as the TOML text.
    assert tomllib.loads(_cosim._settings(s.spec()["simulation"])) == every
    # And as `cosim run --print-settings` prints for a file that gives them.
    (tmp_path / "sys.toml").write_text(
        "[simulation]\n" + every_text.split("[ecco]")[0] + "[simulation.ecco]" + every_text.split("[ecco]")[1]
        + '[instances.a]\nfmu = "a.fmu"\n'
    )
    printed = subprocess.run([str(COSIM), "run", str(tmp_path / "sys.toml"), "--print-settings"], check=True,
                             capture_output=True, text=True).stdout
    assert tomllib.loads(printed)["simulation"] == every


def test_an_unknown_setting_is_refused_with_its_name():
    with pytest.raises(TypeError, match="'stepp'"):
        cosim.System(stop=1.0, stepp=1e-3)
    with pytest.raises(TypeError, match="iteratons"):
        cosim.simulate(SCENARIOS / "oscillator-fd.toml", stop_time=0.1, iteratons=3)
    with pytest.raises(cosim.CosimError, match="ecco.rtl|rtl"):
        cosim.simulate(SCENARIOS / "oscillator-fd.toml", stop_time=0.1, ecco={"rtl": 1.0})
    with pytest.raises(cosim.CosimError, match="step_control"):
        cosim.simulate(SCENARIOS / "oscillator-fd.toml", stop_time=0.1, step_control="sometimes")


def test_simulate_sets_any_setting_like_cosim_run_set(tmp_path):
    """Settings the old keyword list could not reach (step_control, ecco, energy_correction)."""
    scenario = SCENARIOS / "crane-pub3.toml"
    header, rows = cosim_run(scenario, tmp_path, "--stop-time", 2.0, "--set", "step_control=ecco",
                             "--set", "ecco.rtol=1e-3", "--set", "energy_correction=true")
    result = cosim.simulate(scenario, stop_time=2.0, step_control="ecco", ecco={"rtol": 1e-3},
                            energy_correction=True)
    assert_bitwise_equal(result, header, rows)
    fixed = cosim.simulate(scenario, stop_time=2.0)
    assert len(fixed) != len(result) or fixed.tobytes() != result.tobytes()
