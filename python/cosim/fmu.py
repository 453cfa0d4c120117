"""One FMU the way FMPy runs it: :func:`info` (``fmpy.read_model_description`` / ``fmpy info``)
and :func:`simulate_fmu` (``fmpy.simulate_fmu``): bare variable names, ``start_time``,
``output_interval``; the experiment and every check are those of ``cosim run X.fmu``."""

from __future__ import annotations

import json
import os
import zipfile

from . import _cosim
from ._signals import stops_cleanly


def info(fmu) -> dict:
    """The model description of ``fmu`` (FMI 2.0 or 3.0) as a dict.

    Keys: ``model_name``, ``fmi_version``, ``guid``, ``description``, ``generation_tool``,
    ``model_identifier``, ``instance`` (the instance name ``cosim run X.fmu`` and
    :func:`cosim.simulate` give it), ``default_experiment`` (``start_time``, ``stop_time``,
    ``step_size``, ``tolerance``; ``None`` without one), ``variables`` and ``enumerations``.
    Each variable is a dict: ``name``, ``value_reference``, ``type`` (Real, Integer, Boolean,
    String, Enumeration, Binary), ``causality``, ``variability``, ``initial``, ``declared_type``,
    ``description``, ``unit`` (Real: its own or its declared type's), ``start``, ``min``,
    ``max``, ``nominal``; an Enumeration also ``items`` (``name``, ``value``, ``description``)
    and ``start_item`` (the item name of its start); an FMI 3.0 Binary (``type`` Binary) its
    ``start`` in hexadecimal, ``mime_type`` and ``max_size``. ``enumerations``: each enumeration type
    with its ``items``.
    """
    return json.loads(_cosim._info(os.fspath(fmu)))


def _is_fmu(system) -> bool:
    if not isinstance(system, (str, os.PathLike)):
        return False
    path = os.fspath(system)
    try:
        with zipfile.ZipFile(path) as z:
            return "modelDescription.xml" in z.namelist()
    except (OSError, zipfile.BadZipFile):
        return False


def qualify(system, start_values, output):
    """For a single FMU, bare variable names (``"x0"``, as ``cosim run X.fmu --start-value x0=…``)
    in ``start_values`` and ``output`` become ``instance.variable``; names already written that
    way, and every other kind of system, are left as they are."""
    if not _is_fmu(system) or not (start_values or output):
        return start_values, output
    desc = info(system)
    names = {v["name"] for v in desc["variables"]}
    inst = desc["instance"]

    # A whole FMI 3.0 array is named without its index: its elements are ``name[1]``, ….
    arrays = {n.split("[", 1)[0] for n in names if n.endswith("]") and "[" in n}

    def q(name):
        return f"{inst}.{name}" if name in names or name in arrays else name

    # Anything else than a dict of names / a list of names is left for simulate's own errors.
    if isinstance(start_values, dict):
        start_values = {q(k) if isinstance(k, str) else k: v for k, v in start_values.items()}
    if isinstance(output, (list, tuple)):
        output = [q(n) if isinstance(n, str) else n for n in output]
    return start_values, output


def _text(value) -> str:
    """A start value as ``cosim run``'s ``--start-value NAME=VALUE`` text (typed by the model
    description there)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    if hasattr(value, "tolist") and not isinstance(value, (int, str)):
        value = value.tolist()  # a NumPy array (or scalar)
    if isinstance(value, (list, tuple)):
        # A whole array: ``name=[v1,v2,…]`` (nested lists row by row).
        return "[" + ",".join(_text(v) for v in value) + "]"
    return str(value)


@stops_cleanly
def simulate_fmu(
    filename,
    start_time: float | None = None,
    stop_time: float | None = None,
    step_size: float | None = None,
    output_interval: float | None = None,
    relative_tolerance: float | None = None,
    start_values: dict | None = None,
    output=None,
    *,
    fmi_type: str | None = None,
    solver: str | None = None,
    input=None,
    check: bool = True,
):
    """Simulates one FMU as ``fmpy.simulate_fmu`` does and returns a structured
    array with ``time`` and one field per recorded variable, named as in the FMU (``x``, not
    ``instance.x``), with ``.summary`` and ``.units`` (keyed the same way) like :func:`cosim.simulate`.

    The experiment is ``cosim run X.fmu``'s: the FMU's DefaultExperiment unless given, else
    start 0, stop start + 1 s and FMPy's automatic step. ``output_interval`` alone is the
    communication step, as in FMPy (which ignores ``step_size`` for Co-Simulation FMUs): the same
    ``output_interval`` gives FMPy's numbers bit for bit. With ``step_size`` too, the FMU is
    stepped at ``step_size`` and a row is kept every ``output_interval`` (a whole multiple).
    Without either, the DefaultExperiment's stepSize is the step and every step a row (FMPy
    doubles it until at most 1000 steps remain). ``start_values`` maps variable names to
    values (bool, int, float, or str for an enumeration item; a list, tuple or NumPy array for
    a whole FMI 3.0 array, row-major); ``output`` lists the recorded
    variables (default: every output). ``input`` drives inputs as FMPy's does: a structured
    array whose first field is the time and whose other fields are named by the FMU's inputs,
    or a pandas DataFrame (a ``time`` column, else its index, is the time); Real inputs linear
    between the rows, Integer/Boolean/Enumeration held, a repeated time a jump (the same as
    ``cosim run X.fmu --input-file``, docs/system-description.md "Input files").

    ``fmi_type`` as FMPy's: ``"CoSimulation"`` (default where the FMU has it) or
    ``"ModelExchange"`` (cosim integrates the FMU, docs/model-exchange.md); ``solver``
    (``"CVode"`` or ``"bdf"``, ``"euler"``, ``"rk4"``) and ``relative_tolerance`` set the ME
    integrator. ``relative_tolerance`` is refused for Co-Simulation: cosim calls
    ``fmi2SetupExperiment`` without a tolerance (``toleranceDefined = false``).
    """
    from . import _names, _result

    me = fmi_type is not None and fmi_type.lower() in ("modelexchange", "me", "model-exchange")
    if relative_tolerance is not None and not me:
        raise ValueError(
            f"relative_tolerance = {relative_tolerance!r}: cosim calls fmi2SetupExperiment with "
            "toleranceDefined = false, so a tolerance would not reach a Co-Simulation FMU; leave it "
            "None (or run the FMU as Model Exchange: fmi_type='ModelExchange')"
        )
    settings = {}
    if fmi_type is not None:
        settings["interface"] = fmi_type
    if solver is not None:
        settings["solver"] = solver
    if relative_tolerance is not None:
        settings["relative_tolerance"] = float(relative_tolerance)
    if step_size is None and output_interval is not None:
        # FMPy steps a Co-Simulation FMU at its output interval (it ignores step_size there).
        step_size, output_interval = output_interval, None
    texts = [f"{k}={_text(v)}" for k, v in (start_values or {}).items()]
    with _input_csv(input) as input_file:
        inst, names, data, summary = _simulate(filename, start_time, stop_time, step_size, output_interval,
                                               texts, output, check, input_file, settings)
    prefix = inst + "."
    def strip(n):
        return n[len(prefix):] if n.startswith(prefix) else n

    r = _result([(strip(n), t) for n, t in names], data, summary)
    r.units = {strip(k): u for k, u in r.units.items()}
    r.instance = inst  # result["VanDerPol.x0"] reads the field "x0" (the one naming rule)
    return r


def _simulate(filename, start_time, stop_time, step_size, output_interval, texts, output, check, input_file, settings):
    from . import _names

    return _cosim._simulate_fmu(
        os.fspath(filename),
        start_time=start_time,
        stop_time=stop_time,
        step_size=step_size,
        output_interval=output_interval,
        start_values=texts,
        output=_names(output),
        check=check,
        settings=settings or None,
        input_file=input_file,
    )


class _input_csv:
    """``input`` (a structured array or a DataFrame) as a temporary CSV file for the run (the
    same reader as ``--input-file``; numbers written exactly, ``%.17g``)."""

    def __init__(self, data):
        self.data, self.path = data, None

    def __enter__(self):
        if self.data is None:
            return None
        import tempfile
        import numpy as np

        d = self.data
        if hasattr(d, "to_records"):  # a DataFrame: a "time" column, else the index
            d = d.to_records(index="time" not in d.columns)
        names = d.dtype.names
        if not names or len(names) < 2:
            raise ValueError("input: a structured array (or DataFrame) with a time field and one field per input")
        cols = np.column_stack([np.asarray(d[n], dtype=float) for n in names])
        f = tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False)
        with f:
            f.write(",".join('"' + n.replace('"', '""') + '"' for n in names) + "\n")
            np.savetxt(f, cols, delimiter=",", fmt="%.17g")
        self.path = f.name
        return self.path

    def __exit__(self, *exc):
        if self.path:
            os.unlink(self.path)
        return False


LOG_LEVELS = ("all", "warning", "error", "none")

# A level set before this process started (a sweep worker of a process that called fmu_log).
if os.environ.get("COSIM_LOG", "").lower() in LOG_LEVELS:
    _cosim._set_fmu_log(os.environ["COSIM_LOG"].lower())


def fmu_log(level: str) -> str | None:
    """Which FMU messages are printed on stderr from now on (in this process and the workers it
    starts, sweeps included): ``"all"``, ``"warning"`` (the default), ``"error"`` or ``"none"``,
    as ``cosim run --fmu-log``. Warnings are counted whatever the level:
    ``result.summary["instances"][i]["fmu_warnings"]``. Returns the previous level (``None``:
    the default). The level is the one of this process's log sink, which the master takes when
    it creates an instance; ``$COSIM_LOG`` carries it to the Python processes this one starts
    (a sweep's workers read it when they import ``cosim``)."""
    if level not in LOG_LEVELS:
        raise ValueError(f"fmu_log: {level!r} is not one of {', '.join(LOG_LEVELS)}")
    previous = os.environ.get("COSIM_LOG")
    os.environ["COSIM_LOG"] = level
    _cosim._set_fmu_log(level)
    return previous
