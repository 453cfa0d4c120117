"""Paths of the workspace (set by `cargo xtask test`; defaults: this checkout's target/)."""

import os
import pathlib
import subprocess

import numpy as np
import pytest

ROOT = pathlib.Path(os.environ.get("COSIM_ROOT", pathlib.Path(__file__).resolve().parents[2]))
TARGET = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
COSIM = pathlib.Path(os.environ.get("COSIM_BIN", TARGET / "release" / "cosim"))
FMU_DIR = pathlib.Path(os.environ.get("FMU_DIR", TARGET / "fmu"))
SCENARIOS = ROOT / "scenarios"


def in_ci():
    """Whether the tests run under CI: $CI is `true` or `1` (.ci/run sets it)."""
    return os.environ.get("CI", "").lower() in ("true", "1")


def require(module, install=None):
    """The rule for a missing tool (the Rust tests' `missing_tool::skip_or_fail`): import and
    return `module`; when it is missing, fail under CI (CI=true) naming the package to install,
    else skip (pytest reports the skip). Replaces `pytest.importorskip`, which skips under CI too."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as e:
        install = install or f"pip install {module.split('.')[0]}"
        text = f"{module} is missing ({e}): {install} (`cargo xtask test` installs it into .venv)"
        if in_ci():
            pytest.fail(text + " (CI=true: a missing tool fails the test instead of skipping it)", pytrace=False)
        pytest.skip(text, allow_module_level=True)


@pytest.fixture(scope="session")
def root():
    return ROOT


@pytest.fixture(scope="session")
def fmu_dir():
    assert (FMU_DIR / "testing-faulty.fmu").exists(), f"no FMUs in {FMU_DIR}: run cargo xtask fmus"
    return FMU_DIR


def cosim_run(system, out_dir, *args):
    """`cosim run SYSTEM --out OUT ARGS…` → (header, rows as float64 array) of results.csv."""
    assert COSIM.exists(), f"no cosim binary at {COSIM}: cargo build --release -p cosim-cli --bin cosim"
    subprocess.run([str(COSIM), "run", str(system), "--out", str(out_dir), *map(str, args)], check=True,
                   capture_output=True)
    return read_csv(pathlib.Path(out_dir) / "results.csv")


def read_csv(path):
    """results.csv: floats are shortest round-trip text, so float() gives the exact double."""
    lines = pathlib.Path(path).read_text().splitlines()
    header = lines[0].split(",")
    rows = np.array([[float(x) for x in line.split(",")] for line in lines[1:]], dtype=np.float64)
    return header, rows


def assert_bitwise_equal(result, header, rows):
    """A structured array from cosim.simulate equals results.csv bit for bit."""
    assert list(result.dtype.names) == header
    assert len(result) == len(rows)
    for j, name in enumerate(header):
        a = np.ascontiguousarray(result[name], dtype=np.float64).view(np.uint64)
        b = np.ascontiguousarray(rows[:, j]).view(np.uint64)
        assert np.array_equal(a, b), f"{name} differs"


def build_cfmu3(directory):
    """The small C FMI 3.0 FMU of master/tests/cfmu3 (its C source and modelDescription.xml, the
    Rust tests' own), built with the system's cc into `directory`; returns the .fmu's path."""
    return build_c_fmu(directory, "cfmu3", "modelDescription.xml")


def build_c_fmu(directory, source, xml, cflags=(), replace=None):
    """The C FMI 3.0 FMU `master/tests/cfmu3/<source>.c` with the description `xml` of that folder
    (the Rust tests' own; `replace` maps texts of it to others), built with the system's cc into
    `directory/<source>.fmu`; returns its path."""
    import zipfile

    src = ROOT / "master" / "tests" / "cfmu3"
    so = directory / f"{source}.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-fvisibility=hidden", "-O1", "-w", *cflags, "-o", str(so),
                    str(src / f"{source}.c"), "-lm"], check=True)
    text = (src / xml).read_text()
    for a, b in (replace or {}).items():
        text = text.replace(a, b)
    fmu = directory / f"{source}.fmu"
    with zipfile.ZipFile(fmu, "w") as z:
        z.writestr("modelDescription.xml", text)
        z.write(so, f"binaries/x86_64-linux/{source}.so")
    return fmu


def build_hostile_fmu(directory, mode):
    """The misbehaving C FMU of cosim-cli/tests/hostile_runs/hostile.c with MODE `mode` (17: kills
    its parent in fmi2Instantiate), built with the system's cc into `directory`; returns the .fmu."""
    import zipfile

    directory = pathlib.Path(directory)
    so = directory / "hostile.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-o", str(so), f"-DMODE={mode}",
                    str(ROOT / "cosim-cli/tests/hostile_runs/hostile.c")], check=True)
    fmu = directory / "hostile.fmu"
    with zipfile.ZipFile(fmu, "w") as z:
        z.write(ROOT / "cosim-cli/tests/hostile_runs/hostile.xml", "modelDescription.xml")
        z.write(so, "binaries/linux64/hostile.so")
    return fmu
