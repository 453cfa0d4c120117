"""Python front end of the co-simulation master (FMI 2.0 and 3.0 Co-Simulation FMUs), in FMPy's style.

- :func:`simulate` runs a system (TOML file, SSP, one ``.fmu``, or a :class:`System` built in
  Python) and returns a NumPy structured array (``time`` + the recorded variables), the same
  numbers as ``cosim run``'s ``results.csv``;
- :class:`Execution` steps a system from Python (set inputs, step, read any variable);
- :func:`sweep` runs a parameter study on a local process pool or a Dask cluster;
- :func:`tune` runs ``cosim tune`` and returns ``tune.json`` as a dict;
- :func:`check` checks an FMU as ``cosim check`` does (behavioural FMI compliance, out of process)
  and returns the report.

Errors of the master raise :class:`CosimError` with the Rust message (an FMU call error names
the instance and the time). The GIL is released while stepping; Ctrl-C stops a run cleanly
(the instances are terminated) and raises ``KeyboardInterrupt``.
"""

from __future__ import annotations

import json
import os
import tempfile
import warnings

import numpy as np

from . import _cosim
from ._cosim import CosimError
from ._signals import stops_cleanly
from .system import System
from .sweep import sweep
from .fmu import fmu_log, info, qualify, simulate_fmu

try:
    from importlib.metadata import PackageNotFoundError, version as _version

    __version__ = _version("cosim")
except PackageNotFoundError:  # run from a source tree without the installed wheel
    __version__ = "0+unknown"

__all__ = [
    "__version__",
    "CosimError",
    "Execution",
    "Result",
    "System",
    "check",
    "fmu_log",
    "info",
    "simulate",
    "simulate_fmu",
    "sweep",
    "to_pandas",
    "tune",
]


def _unload_fmus():
    """Unloads the FMUs kept loaded between runs (their extraction folders removed)."""
    _cosim._fmu_cache_clear()


# The FMUs of simulate/Execution/sweep runs stay loaded for the next run of the same FMU (keyed by
# content; COSIM_FMU_CACHE=0 turns this off). Unloaded at interpreter exit, and at the exit of a
# multiprocessing worker (sweep's process pool), which skips atexit.
import atexit  # noqa: E402
import multiprocessing.util  # noqa: E402



class _Unloader:
    """Registers the unloading at the exit of this process and of every process forked from it
    (a forked multiprocessing worker starts with no finalizers)."""

    def register(self):
        multiprocessing.util.Finalize(None, _unload_fmus, exitpriority=10)


_unloader = _Unloader()
atexit.register(_unload_fmus)
_unloader.register()
multiprocessing.util.register_after_fork(_unloader, _Unloader.register)


class Result(np.ndarray):
    """A structured array (field ``time`` + one field per recorded variable) with the run's
    ``summary`` (dict: status, message, steps, time, wall_time_s, …), ``units`` (field → unit,
    from the model descriptions; fields without a unit are absent) and :meth:`to_pandas`."""

    summary: dict | None = None
    units: dict | None = None
    instance: str | None = None

    def __array_finalize__(self, obj):
        self.summary = getattr(obj, "summary", None)
        self.units = getattr(obj, "units", None)
        self.instance = getattr(obj, "instance", None)

    def __getitem__(self, key):
        # The one naming rule: a field is named as it is, instance-qualified (``VanDerPol.x0``)
        # or bare (``x0``) where one instance only has it.
        if isinstance(key, str) and self.dtype.names and key not in self.dtype.names:
            key = self.field(key)
        return super().__getitem__(key)

    def field(self, name: str) -> str:
        """The field ``name`` names: itself, ``instance.variable`` of a single-FMU result whose
        fields are bare, or a bare name one instance only has; ``KeyError`` naming the nearest
        fields otherwise."""
        names = self.dtype.names or ()
        if name in names:
            return name
        inst, dot, own = name.partition(".")
        if dot and self.instance == inst and own in names:
            return own
        owners = [n for n in names if n.endswith("." + name)]
        if len(owners) == 1:
            return owners[0]
        if owners:
            raise KeyError(
                f"{name!r} is a variable of several instances ({', '.join(owners)}): name it as instance.variable"
            )
        import difflib

        near = difflib.get_close_matches(name, names, n=3)
        hint = f"; did you mean {' or '.join(repr(n) for n in near)}?" if near else ""
        raise KeyError(f"no field {name!r} in the result{hint}")

    def to_pandas(self):
        """A pandas DataFrame with one column per field (``time`` first)."""
        return to_pandas(self)

    def plot(self, names=None, path=None, title=None):
        """A matplotlib figure of the fields ``names`` against time: titled, one panel per unit,
        the legend beside the data (:func:`cosim.plot.plot_result`); saved to ``path`` if given."""
        from .plot import plot_result

        return plot_result(self, names, path, title)


def _structured(names, data) -> np.ndarray:
    """The rows as a structured array: ``names`` are (name, NumPy type) pairs, each field 8 bytes
    (``<f8``, or ``<i8``/``<u8`` for a column of 64-bit integers, which stay exact)."""
    flat = np.frombuffer(data, dtype=np.float64)
    dtype = np.dtype([(n, np.dtype(t)) for n, t in names])
    if flat.size == 0:
        return np.zeros(0, dtype=dtype)
    return flat.reshape(-1, len(names)).view(dtype).reshape(-1)


def _names(output):
    """``output`` as a list of names: one name given as a string is that name, not its
    characters (issue 30: ``output="m1.x"`` was split into ``["m", "1", ".", "x"]``)."""
    if output is None:
        return None
    if isinstance(output, (str, bytes, os.PathLike)):
        return [os.fsdecode(output) if not isinstance(output, str) else output]
    return list(output)


def _system_arg(system):
    if isinstance(system, System):
        return system.spec()
    if isinstance(system, os.PathLike):
        return os.fspath(system)
    return system


def _warn_unconverged(summary):
    """Iterative coupling that left steps unconverged says so (as ``cosim run`` does)."""
    it = (summary or {}).get("iterations") or {}
    if it.get("unconverged_steps", 0) > 0:
        warnings.warn(
            f"{it['unconverged_steps']} of {summary.get('steps')} communication steps did not converge within "
            f"iterations = {it.get('limit')} (iteration_tolerance = {it.get('tolerance')}); their values are "
            "those of the last pass",
            RuntimeWarning,
            stacklevel=3,
        )


def _result(names, data, summary_json) -> Result:
    r = _structured(names, data).view(Result)
    r.summary = json.loads(summary_json)
    r.units = dict(r.summary.get("units", {}))
    _warn_unconverged(r.summary)
    return r


@stops_cleanly
def simulate(
    system,
    stop_time: float | None = None,
    step: float | None = None,
    start_values: dict | None = None,
    output: list[str] | None = None,
    *,
    fmus: dict | None = None,
    extrapolation: int | None = None,
    check: bool = True,
    **settings,
) -> Result:
    """Runs ``system`` to its stop time and returns the recorded values.

    ``system``: a TOML system file, an SSP package/description, an ``.fmu`` (one instance named
    after its model identifier, start/stop/step from its DefaultExperiment, as ``cosim run X.fmu``;
    recognized by content, not by extension) or a :class:`System`.
    ``stop_time``, ``step`` and every other keyword argument named like a ``[simulation]``
    setting (``algorithm``, ``parallel``, ``isolate``, ``step_control``, ``ecco={...}``,
    ``energy_correction``, …: :data:`System.SETTINGS`) override the system's settings like
    ``cosim run``'s options (an unknown one raises ``TypeError``); ``extrapolation`` sets the
    order of every connection; ``start_values`` maps
    ``"instance.variable"`` to a value (bool, int, float, or str for an enumeration item; a
    list, tuple or NumPy array for a whole FMI 3.0 array, row-major, nested lists row by row);
    ``output`` lists the recorded variables (default: the system's); ``fmus`` maps instance
    names to other FMU files. A failed run raises :class:`CosimError` unless ``check=False``
    (then the result holds the rows up to the failure and ``result.summary`` says why).
    For one FMU, ``start_values`` and ``output`` may use its bare variable names (``"x0"``), as
    ``cosim run X.fmu`` does; :func:`simulate_fmu` also names the columns that way.
    """
    start_values, output = qualify(system, start_values, _names(output))
    names, data, summary = _cosim._simulate(
        _system_arg(system),
        stop_time=stop_time,
        step=step,
        start_values=dict(start_values or {}),
        output=_names(output),
        fmus=dict(fmus) if fmus else None,
        extrapolation=extrapolation,
        check=check,
        **settings,
    )
    return _result(names, data, summary)


class Execution(_cosim.Execution):
    """A system being stepped from Python (a controller, reinforcement learning, …).

    ``Execution(system, stop_time=None, step=None, start_values=None, output=None, record=True,
    fmus=None, extrapolation=None, **settings)`` with ``system`` and the settings as for
    :func:`simulate`. Methods: ``initialize()``, ``step(n=1)``, ``run_until(t)``,
    ``run()``, ``value("inst.var")``, ``set("inst.var", x)`` (Real), ``recorded()`` (dict of the
    recorded variables now), :meth:`result` (everything recorded so far), :meth:`finish`
    (terminates the instances, returns the summary dict). Properties: ``time``, ``steps``,
    ``start_time``, ``stop_time``, ``step_size``, ``labels``, ``finished``. Also a context
    manager (finishes on exit).
    """

    def __new__(cls, system, *args, **kwargs):
        args = list(args)
        if len(args) >= 4:  # stop_time, step, start_values, output, …
            args[3] = _names(args[3])
        if "output" in kwargs:
            kwargs["output"] = _names(kwargs["output"])
        # One FMU: bare variable names, as in simulate (start_values and output: 3rd and 4th).
        for i, key in ((2, "start_values"), (3, "output")):
            given = args[i] if len(args) > i else kwargs.get(key)
            if given is not None:
                sv, out = qualify(system, given if i == 2 else None, given if i == 3 else None)
                if len(args) > i:
                    args[i] = sv if i == 2 else out
                else:
                    kwargs[key] = sv if i == 2 else out
        return super().__new__(cls, _system_arg(system), *args, **kwargs)

    def result(self) -> Result:
        """The recorded rows so far (the summary is set once finished)."""
        names, data = self._rows()
        r = _structured(names, data).view(Result)
        r.summary = getattr(self, "_summary", None)
        return r

    def finish(self) -> dict:
        """Terminates the instances (idempotent) and returns the summary."""
        self._summary = json.loads(self._finish())
        _warn_unconverged(self._summary)
        return self._summary

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.finish()
        return False


def to_pandas(result):
    """A structured array (from :func:`simulate`) as a pandas DataFrame (needs pandas)."""
    import pandas as pd

    return pd.DataFrame({name: np.asarray(result[name]) for name in result.dtype.names})


def tune(
    system,
    out_dir=None,
    *,
    jobs: int = 0,
    h_ini: float | None = None,
    h_inc: float | None = None,
    h_max: float | None = None,
    verify: str | None = None,
) -> dict:
    """``cosim tune`` on a system file with a ``[tune]`` table: sweeps, reports, verifies (with
    ``verify``: ``"system"`` or a cycle file) and writes ``tune.csv``, ``tune.json`` and
    ``recommended.toml`` into ``out_dir`` (default: a temporary directory, removed afterwards).
    Returns ``tune.json``'s content as a dict."""
    if out_dir is None:
        with tempfile.TemporaryDirectory(prefix="cosim-tune-") as d:
            return tune(system, d, jobs=jobs, h_ini=h_ini, h_inc=h_inc, h_max=h_max, verify=verify)
    text = _cosim._tune(os.fspath(system), os.fspath(out_dir), jobs, h_ini, h_inc, h_max, verify)
    return json.loads(text)


def _start_value_text(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


@stops_cleanly
def check(
    fmu,
    stop_time: float | None = None,
    step: float | None = None,
    start_values: dict | None = None,
    *,
    steps: int | None = None,
    timeout: float = 60.0,
    cycles: int = 1000,
    repeat: int | None = None,
    only: list[str] | None = None,
    cosim=None,
) -> dict:
    """Checks the FMU ``fmu`` as ``cosim check`` does and returns the report as a dict:
    ``fmu``, ``model_name``, ``plan`` (the experiment) and ``findings``, one dict per check with
    ``check``, ``family``, ``title``, ``section`` (FMI 2.0), ``verdict`` (``"PASS"``, ``"WARN"``,
    ``"FAIL"`` or ``"SKIP"``), ``evidence`` and ``seconds``; ``failed`` is True when a check failed.

    ``start_values`` maps variable names to values (as ``--start-value``); ``steps`` limits the
    number of communication steps; ``timeout`` (s) is per check; ``repeat`` is the number of runs
    of a check that races (``--repeat``, default 10); ``only`` lists check ids. A crash or hang of
    the FMU is a FAIL finding, never an exception; options the FMU cannot take raise
    :class:`CosimError`.

    Nothing but this package is needed: the checker runs out of process in this package's own
    code (this interpreter loading the package's extension module, as the workers of isolated
    runs do), and so does every check, each in its own worker process. The FMU's code never
    runs in this interpreter, and an FMU that kills its parent (``kill(getppid())``) ends the
    checker's process, not Python (:class:`CosimError`: no report). With ``cosim=PATH`` the
    executable ``PATH check … --json`` runs instead. Ctrl-C stops the checker (the running check
    is killed) and raises ``KeyboardInterrupt``. ``cosim check`` is not a sandbox (docs/check.md).
    """
    import signal
    import subprocess

    with tempfile.TemporaryDirectory(prefix="cosim-check-") as tmp:
        path = os.path.join(tmp, "report.json")
        starts = [f"{k}={_start_value_text(v)}" for k, v in (start_values or {}).items()]
        if cosim is not None:
            args = [os.fspath(cosim), "check", os.fspath(fmu), "--timeout", repr(float(timeout)),
                    "--cycles", str(int(cycles))]
            for s in starts:
                args += ["--start-value", s]
            for flag, v in (("--stop-time", stop_time), ("--step", step)):
                if v is not None:
                    args += [flag, repr(float(v))]
            for flag, v in (("--steps", steps), ("--repeat", repeat)):
                if v is not None:
                    args += [flag, str(int(v))]
            if only:
                args += ["--only", ",".join(only)]
            args += ["--json", path]
        else:
            options = {"start_values": starts, "timeout": float(timeout), "cycles": int(cycles), "only": list(only or [])}
            for k, v in (("stop_time", stop_time), ("step", step)):
                if v is not None:
                    options[k] = float(v)
            for k, v in (("steps", steps), ("repeat", repeat)):
                if v is not None:
                    options[k] = int(v)
            args = [*_cosim._checker_command(), json.dumps(options), os.fspath(fmu), path]
        # Its own session: a terminal's Ctrl-C or hangup reaches Python, which passes it on once.
        with subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, start_new_session=True) as p:
            try:
                _, err = p.communicate()
            except KeyboardInterrupt as e:
                # Ctrl-C, or SIGHUP/SIGTERM (stops_cleanly): the checker kills the running check,
                # writes its report and removes its extraction folder; then the interrupt goes on.
                p.send_signal(getattr(e, "signum", signal.SIGINT))
                try:
                    p.communicate(timeout=30)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.communicate()
                raise
        if not os.path.exists(path):
            code = p.returncode
            lines = err.strip().splitlines()
            first = next((i for i, line in enumerate(lines) if line.startswith("error: ")), None)
            if code == 1 and first is not None:  # the checker's error (and what follows it)
                raise CosimError("\n".join(lines[first:]).removeprefix("error: "))
            how = f"signal {-code}" if code < 0 else f"exit code {code}"
            tail = f": {err.strip()[-2000:]}" if err.strip() else ""
            raise CosimError(f"the checker process ended ({how}) without a report{tail}")
        with open(path) as f:
            text = f.read()
    report = json.loads(text)
    report["failed"] = any(f["verdict"] == "FAIL" for f in report["findings"])
    return report
