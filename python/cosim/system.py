"""A co-simulation system put together in Python: the same content as a TOML system file
(instances, start values, connections, time tables, bonds, outputs, settings, live, tune).
:meth:`System.spec` is the system file's tables as dicts, with the TOML keys; the master
deserializes it into its one system schema (``master::system::SystemFile``, as a system file),
so every key, check and message is the TOML reader's. Plain data: a ``System`` pickles (for
process pools and Dask)."""

from __future__ import annotations

import os

from . import _cosim


class System:
    """A system built in code.

    >>> s = System(stop=10.0, step=1e-3, extrapolation=1)
    >>> s.instance("m1", "target/fmu/oscillator-fd-m1.fmu", start={"damping": "case1"})
    >>> s.instance("m2", "target/fmu/oscillator-fd-m2.fmu", start={"damping": "case1"})
    >>> s.connect("m2.x", "m1.xi"); s.connect("m2.v", "m1.xi_dot"); s.connect("m1.F", "m2.F")
    >>> s.bond("coupling", ("m1", "F", "xi_dot", -1.0), ("m2", "F", "v", 1.0))
    >>> s.outputs(["m1.x", "m2.x"])

    Settings (keyword arguments or :meth:`settings`): every key of a system file's ``[simulation]``
    (the master's one settings type, ``master::system::Settings``; :data:`SETTINGS` lists them).
    An unknown key raises ``TypeError``; a bad value ``CosimError`` naming the key when run. The
    other tables: :meth:`instance`, :meth:`connect`, :meth:`input`, :meth:`bond`, :meth:`outputs`,
    :meth:`live`, :meth:`tune`; :meth:`spec` is the whole system file as dicts (TOML keys).
    Relative FMU paths are taken relative to the current directory when run.
    """

    #: The setting keys, from the master's settings type.
    SETTINGS = tuple(_cosim._setting_keys()[0])

    #: A bond's own settings (the keys of ``[[bonds]]`` beside name and ports), from the master.
    BOND_SETTINGS = tuple(_cosim._bond_setting_keys())

    def __init__(self, **settings):
        self._settings: dict = {}
        self._instances: dict = {}
        self._connections: list = []
        self._inputs: list = []
        self._bonds: list = []
        self._outputs: list | None = None
        self._live: dict | None = None
        self._tune: dict | None = None
        self.settings(**settings)

    def settings(self, **settings) -> "System":
        for k, v in settings.items():
            if k not in self.SETTINGS:
                raise TypeError(f"unknown setting {k!r} (one of {', '.join(self.SETTINGS)})")
            self._settings[k] = v
        return self

    def instance(
        self, name: str, fmu, start: dict | None = None, step: float | None = None, me_group: str | None = None
    ) -> "System":
        """Adds (or replaces) an instance of the FMU file ``fmu``; ``start`` maps variable names to
        start values; ``step``: own step of a multirate instance; ``me_group``: the group of Model
        Exchange instances integrated as one ODE it belongs to (docs/model-exchange.md)."""
        self._instances[name] = {"fmu": os.fspath(fmu), "start": dict(start or {}), "step": step}
        if me_group is not None:
            self._instances[name]["me_group"] = me_group
        return self

    def start(self, dotted: str, value) -> "System":
        """A start value ``instance.variable``."""
        inst, var = dotted.split(".", 1)
        self._instances[inst]["start"][var] = value
        return self

    def connect(
        self,
        source: str,
        target: str,
        gain: float | None = None,
        offset: float | None = None,
        extrapolation=None,
        derivatives=None,
    ) -> "System":
        """``target = gain · source + offset``; ``extrapolation``: an order 0-4, or ``"I2"`` with
        ``derivatives=["inst.der1", ...]`` (Taylor from derivative outputs; also written
        ``extrapolation={"i2": [...]}``)."""
        if isinstance(extrapolation, dict) and "i2" in extrapolation:
            extrapolation, derivatives = "I2", list(extrapolation["i2"])
        self._connections.append(
            {
                "from": source,
                "to": target,
                "gain": gain,
                "offset": offset,
                "extrapolation": extrapolation,
                "derivatives": None if derivatives is None else list(derivatives),
            }
        )
        return self

    def input(
        self,
        target: str | None = None,
        times=None,
        values=None,
        linear: bool = False,
        interpolation: str | None = None,
        *,
        file=None,
        columns: dict | None = None,
        time: str | None = None,
        scale: float | None = None,
        offset: float | None = None,
    ) -> "System":
        """Drives input ``target`` from a time table: ``interpolation`` "step" (or "hold", the
        default) or "linear" (``linear=True`` is the same as ``interpolation="linear"``).

        Or from a CSV file (``file``, the ``[[inputs]] file`` of a system file): ``columns`` maps
        each driven input to its column (``{"hyd.U_ref": "U"}``; default: the columns named
        ``instance.variable``), ``time`` names the time column (default: the first), input =
        ``scale`` · column + ``offset``; Real inputs linear by default, others held."""
        if linear and interpolation not in (None, "linear"):
            raise ValueError(f"linear=True and interpolation={interpolation!r} contradict each other")
        interpolation = "linear" if linear else interpolation
        if file is not None:
            if target is not None or times is not None or values is not None:
                raise ValueError("an input from a file takes its inputs from `columns`, not target/times/values")
            entry = {"file": str(file), "columns": dict(columns or {}), "time": time, "scale": scale,
                     "offset": offset, "interpolation": interpolation}
            self._inputs.append({k: v for k, v in entry.items() if v is not None and v != {}})
            return self
        if target is None or times is None or values is None:
            raise TypeError("input() needs target, times and values (or file=...)")
        self._inputs.append(
            {
                "to": target,
                "times": [float(t) for t in times],
                "values": [float(v) for v in values],
                "interpolation": interpolation,
            }
        )
        return self

    def bond(self, name: str, a, b, **correction) -> "System":
        """A power bond; each port ``(instance, effort, flow[, sign])`` or a dict with those keys.
        Keyword arguments: this bond's own energy_correction, energy_correction_law ("input" |
        "bond"), energy_correction_gain, energy_correction_flow (over the system's settings)."""
        for k in correction:
            if k not in self.BOND_SETTINGS:
                raise TypeError(f"unknown bond setting {k!r} (one of {', '.join(self.BOND_SETTINGS)})")

        def port(p):
            if isinstance(p, dict):
                return dict(p)
            keys = ("instance", "effort", "flow", "sign")
            return dict(zip(keys, p))

        self._bonds.append({"name": name, "ports": [port(a), port(b)], **correction})
        return self

    def outputs(self, names) -> "System":
        """The recorded variables (default: every output of every instance)."""
        self._outputs = list(names)
        return self

    def live(self, **table) -> "System":
        """The ``[live]`` table: inputs and outputs served while the run goes (``cosim run``;
        keys as in a system file: inputs, outputs, addr, range, keys)."""
        self._live = dict(table)
        return self

    def tune(self, **table) -> "System":
        """The ``[tune]`` table (``cosim tune``; keys as in a system file)."""
        self._tune = dict(table)
        return self

    def spec(self) -> dict:
        """The system file's tables as plain data (TOML keys; ``None``: not given), handed to the
        master."""
        spec = {
            "simulation": dict(self._settings),
            "instances": {n: dict(i, start=dict(i["start"])) for n, i in self._instances.items()},
            "connections": [dict(c) for c in self._connections],
            "inputs": [dict(i) for i in self._inputs],
            "bonds": [dict(b) for b in self._bonds],
        }
        if self._outputs is not None:
            spec["outputs"] = {"variables": list(self._outputs)}
        if self._live is not None:
            spec["live"] = dict(self._live)
        if self._tune is not None:
            spec["tune"] = dict(self._tune)
        return spec

    def __repr__(self) -> str:
        return (
            f"System({len(self._instances)} instances, {len(self._connections)} connections, "
            f"{len(self._bonds)} bonds, settings={self._settings})"
        )
