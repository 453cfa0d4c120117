"""A co-simulation system put together in Python: the same content as a TOML system file
(instances, start values, connections, time tables, bonds, outputs, settings). It is handed
to the master's ``SystemBuilder`` when run, so every check and message is the TOML reader's.
Plain data: a ``System`` pickles (for process pools and Dask)."""

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
    (the master's one settings type, ``master::system::Settings``; :data:`SETTINGS` lists them):
    start, stop, step, algorithm ("jacobi" | "gauss-seidel"), order, extrapolation, parallel,
    exchange, record_every, isolate, worker_timeout, max_residual_energy, iterations,
    iteration_tolerance, step_control ("fixed" | "ecco"), ecco (a dict: rtol, atol, …),
    energy_correction, energy_correction_law, energy_correction_gain, energy_correction_flow.
    An unknown key raises ``TypeError``; a bad value ``CosimError`` naming the key when run.
    Relative FMU paths are taken relative to the current directory when run.
    """

    #: The setting keys, from the master's settings type.
    SETTINGS = tuple(_cosim._setting_keys()[0])

    def __init__(self, **settings):
        self._settings: dict = {}
        self._instances: dict = {}
        self._connections: list = []
        self._inputs: list = []
        self._bonds: list = []
        self._outputs: list | None = None
        self.settings(**settings)

    def settings(self, **settings) -> "System":
        for k, v in settings.items():
            if k not in self.SETTINGS:
                raise TypeError(f"unknown setting {k!r} (one of {', '.join(self.SETTINGS)})")
            self._settings[k] = v
        return self

    def instance(self, name: str, fmu, start: dict | None = None, step: float | None = None) -> "System":
        """Adds (or replaces) an instance of the FMU file ``fmu``; ``start`` maps variable names to
        start values; ``step``: own step of a multirate instance."""
        self._instances[name] = {"name": name, "fmu": os.fspath(fmu), "start": dict(start or {}), "step": step}
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
    ) -> "System":
        """``target = gain · source + offset``; ``extrapolation``: an order 0-4, or
        ``{"i2": ["inst.der1", ...]}`` (Taylor from derivative outputs)."""
        self._connections.append(
            {"from": source, "to": target, "gain": gain, "offset": offset, "extrapolation": extrapolation}
        )
        return self

    def input(self, target: str, times, values, linear: bool = False) -> "System":
        """Drives input ``target`` from a time table (steps, or linear interpolation)."""
        self._inputs.append(
            {"to": target, "times": [float(t) for t in times], "values": [float(v) for v in values], "linear": linear}
        )
        return self

    BOND_SETTINGS = ("energy_correction", "energy_correction_law", "energy_correction_gain", "energy_correction_flow")

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

    def spec(self) -> dict:
        """The plain-data description handed to the master."""
        return {
            "settings": dict(self._settings),
            "instances": [dict(i, start=dict(i["start"])) for i in self._instances.values()],
            "connections": [dict(c) for c in self._connections],
            "inputs": [dict(i) for i in self._inputs],
            "bonds": [dict(b) for b in self._bonds],
            "outputs": list(self._outputs) if self._outputs is not None else None,
        }

    def __repr__(self) -> str:
        return (
            f"System({len(self._instances)} instances, {len(self._connections)} connections, "
            f"{len(self._bonds)} bonds, settings={self._settings})"
        )
