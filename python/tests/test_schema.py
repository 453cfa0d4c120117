"""The Python front end of the one system schema (``master::system::SystemFile``): the system with
every key of the schema (master/tests/every-key.toml, which master/tests/schema.rs checks covers
every key and reads as TOML and through the SSP round trip) built with ``cosim.System`` is the same
system as the file, key by key and resolved; an unknown key is refused with its name."""

import pathlib
import tomllib

import pytest

import cosim
from cosim import _cosim
from conftest import FMU_DIR, ROOT

EVERY_KEY = ROOT / "master" / "tests" / "every-key.toml"


def every_key(tmp_path):
    text = EVERY_KEY.read_text().replace("{fmus}", str(FMU_DIR))
    path = tmp_path / "every.toml"
    path.write_text(text)
    (tmp_path / "every-key-input.csv").write_text("t,force\n0,0\n0.25,1\n0.25,2\n")
    return path, tomllib.loads(text)


def build(t, folder=None) -> cosim.System:
    """The file's tables through cosim.System's methods."""
    s = cosim.System(**t["simulation"])
    for name, i in t["instances"].items():
        s.instance(name, i["fmu"], start=i.get("start"), step=i.get("step"), me_group=i.get("me_group"))
    for c in t["connections"]:
        s.connect(c["from"], c["to"], gain=c.get("gain"), offset=c.get("offset"),
                  extrapolation=c.get("extrapolation"), derivatives=c.get("derivatives"))
    for i in t["inputs"]:
        if "file" in i:
            # Python has no system file: a relative input file is taken from the working folder.
            s.input(**{**i, "file": str((folder or pathlib.Path(".")) / i["file"])})
        else:
            s.input(i["to"], i["times"], i["values"], interpolation=i.get("interpolation"))
    for b in t["bonds"]:
        own = {k: v for k, v in b.items() if k not in ("name", "ports")}
        s.bond(b["name"], b["ports"][0], b["ports"][1], **own)
    s.outputs(t["outputs"]["variables"])
    s.live(**t["live"])
    s.tune(**t["tune"])
    return s


def test_every_schema_key_from_python_is_the_same_system_as_from_toml(tmp_path):
    path, t = every_key(tmp_path)
    from_file = _cosim._describe(str(path))
    s = build(t, path.parent)
    assert _cosim._describe(s.spec()) == from_file
    # A plain dict of the file's tables is the same system too (its relative input file, like
    # cosim.System's, is taken from the working folder: given here from the file's folder).
    inputs = [{**i, "file": str(path.parent / i["file"])} if "file" in i else i for i in t["inputs"]]
    assert _cosim._describe({**t, "inputs": inputs}) == from_file


def test_the_documented_sugar_is_the_toml_keys(tmp_path):
    """``input(..., linear=True)`` and ``connect(..., extrapolation={"i2": [...]})`` (docs/python.md)
    give the system file's ``interpolation = "linear"`` and ``extrapolation = "I2"`` with
    ``derivatives``."""
    path, t = every_key(tmp_path)
    s = build(t, path.parent)
    sugar = build(t, path.parent)
    sugar._inputs.clear()
    for i in t["inputs"]:
        if "file" in i:
            sugar.input(**{**i, "file": str(path.parent / i["file"])})
        else:
            sugar.input(i["to"], i["times"], i["values"], linear=i.get("interpolation") == "linear")
    sugar._connections.clear()
    for c in t["connections"]:
        e = c.get("extrapolation")
        if e == "I2":
            e = {"i2": c["derivatives"]}
        sugar.connect(c["from"], c["to"], gain=c.get("gain"), offset=c.get("offset"), extrapolation=e)
    assert _cosim._describe(sugar.spec()) == _cosim._describe(s.spec())
    assert sugar.spec()["inputs"][0]["interpolation"] == "linear"
    assert sugar.spec()["connections"][0]["derivatives"] == t["connections"][0]["derivatives"]


@pytest.mark.parametrize("table, key", [
    ("simulation", "stepp"),
    ("instances", "fmuu"),
    ("connections", "gian"),
    ("inputs", "interpolaton"),
    ("bonds", "energy_corection"),
    ("live", "port"),
    ("outputs", "variable"),
    (None, "simulations"),
])
def test_an_unknown_key_is_refused_with_its_name(tmp_path, table, key):
    _, t = every_key(tmp_path)
    if table is None:
        t[key] = {}
    elif table == "instances":
        t["instances"]["m2"][key] = 1
    elif isinstance(t[table], list):
        t[table][0][key] = 1
    else:
        t[table][key] = 1
    with pytest.raises(cosim.CosimError, match=f"unknown field `{key}`"):
        _cosim._describe(t)
    with pytest.raises(cosim.CosimError, match=f"unknown field `{key}`"):
        cosim.simulate(t, stop_time=0.01)


def test_a_bond_setting_is_checked_when_given():
    s = cosim.System()
    with pytest.raises(TypeError, match="energy_corection"):
        s.bond("b", ("a", "F", "v"), ("c", "F", "v"), energy_corection=True)
    assert set(cosim.System.BOND_SETTINGS) <= set(cosim.System.SETTINGS)
