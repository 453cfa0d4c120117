#!/usr/bin/env python3
"""Time FMUs and coupled systems with third-party co-simulation tools (issue 6, `cosim bench`).

Peers (each optional; a missing or failing peer prints ``"ok": false`` and the script still exits 0):

* ``fmpy``              FMPy's low-level API (``fmpy.fmi2.FMU2Slave``): a plain Python loop of
                        doStep + getReal of all Real outputs (single), or a Jacobi loop with
                        zero-order hold (coupled).
* ``fmpy-simulate_fmu`` ``fmpy.simulate_fmu`` with output_interval = H (single only). The timed call
                        includes setupExperiment/initialization/terminate and result recording;
                        instantiation is excluded by passing a pre-instantiated ``fmu_instance``.
* ``libcosim``          ``libcosimpy`` (open-simulation-platform libcosim, C API through ctypes):
                        ``CosimExecution.from_step_size`` + local slaves + scalar real connections,
                        default ``fixed_step_algorithm``; stepped with ``execution.step(n)``.
* ``ecos``              ``ecospy`` (Ecos-platform ecos, C API through ctypes): ``EcosSimulationStructure``
                        + ``make_real_connection``, default ``fixed_step_algorithm``; ``sim.step(n)``.

Usage::

    python bench_peers.py single FMU --step H --stop T [--repeat N] [--tools fmpy,libcosim]
    python bench_peers.py coupled --system oscillator-fd [--step H] [--stop T] [--repeat N]

``--system`` is a scenario name (``<repo>/scenarios/NAME.toml``) or a path to a scenario TOML; step and
stop default to the scenario's ``[simulation]`` values. The coupled system takes instances, start values
and connections from the scenario; every peer runs it as Jacobi with zero-order hold, whatever the
scenario's algorithm/extrapolation.

Output: one JSON object per peer and line on stdout, e.g.
``{"tool": "fmpy", "mode": "single", "fmu": "...", "steps": 10000, "wall_s": 0.12, "us_per_step": 12.3,
"ok": true, ...}``. Only the stepping loop is timed (time.perf_counter), loading/instantiation/
initialization excluded (except for ``fmpy-simulate_fmu``, see above). With ``--repeat N`` every
repetition rebuilds the simulation; ``wall_s`` is the median, ``wall_s_min``/``wall_s_all`` are given too.
``final`` holds the values after the last step (single: all Real outputs; coupled: the scenario's
``[outputs]`` variables, or all connection sources).

Each peer runs in its own child process (``--no-isolate`` to run in-process), so a crash or a hang of a
native library turns into ``"ok": false`` for that peer only, and peers do not share thread pools.
Native libraries' chatter on fd 1 is redirected to stderr: stdout carries JSON only.
"""

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

SINGLE_TOOLS = ["fmpy", "fmpy-simulate_fmu", "libcosim", "ecos"]
COUPLED_TOOLS = ["fmpy", "libcosim", "ecos"]

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))

_JSON_OUT = None  # file object on the original stdout


def _claim_stdout():
    """Keep the original stdout for JSON; send everything else written to fd 1 to stderr."""
    global _JSON_OUT
    if _JSON_OUT is not None:
        return
    sys.stdout.flush()
    _JSON_OUT = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)


def emit(obj):
    _JSON_OUT.write(json.dumps(obj) + "\n")
    _JSON_OUT.flush()


def err_text(e):
    return f"{type(e).__name__}: {e}"


def n_steps(step, stop):
    n = int(round(stop / step))
    if n < 1 or not math.isclose(n * step, stop, rel_tol=1e-9, abs_tol=1e-12):
        raise ValueError(f"stop time {stop} is not a whole number of steps {step}")
    return n


def timing_fields(walls, steps):
    wall = statistics.median(walls)
    return {
        "steps": steps,
        "wall_s": wall,
        "us_per_step": wall / steps * 1e6,
        "wall_s_min": min(walls),
        "wall_s_all": walls,
        "repeat": len(walls),
    }


# --------------------------------------------------------------------------------------------------
# model description helpers (FMPy's parser is used by every peer to resolve names and start values)


def read_md(path):
    """Minimal FMI 2.0 modelDescription.xml reader (stdlib only, so that a peer does not depend on
    FMPy being installed). Attribute names follow fmpy.model_description."""
    import xml.etree.ElementTree as ET
    import zipfile
    from types import SimpleNamespace as NS

    if os.path.isdir(path):
        root = ET.parse(os.path.join(path, "modelDescription.xml")).getroot()
    else:
        with zipfile.ZipFile(path) as z:
            root = ET.fromstring(z.read("modelDescription.xml"))
    if root.get("fmiVersion") != "2.0":
        raise ValueError(f"{path}: fmiVersion {root.get('fmiVersion')!r}, only 2.0 is supported")
    cs = root.find("CoSimulation")
    if cs is None:
        raise ValueError(f"{path}: no CoSimulation interface")
    types = {}
    for st in root.iterfind("TypeDefinitions/SimpleType"):
        enum = st.find("Enumeration")
        items = [NS(name=i.get("name"), value=i.get("value")) for i in enum.iterfind("Item")] if enum is not None else []
        types[st.get("name")] = NS(name=st.get("name"), items=items)
    variables = []
    for sv in root.iterfind("ModelVariables/ScalarVariable"):
        t = next(iter(sv))
        variables.append(NS(name=sv.get("name"), valueReference=int(sv.get("valueReference")),
                            causality=sv.get("causality", "local"),
                            variability=sv.get("variability", "continuous"), type=t.tag,
                            start=t.get("start"), declaredType=types.get(t.get("declaredType"))))
    return NS(modelName=root.get("modelName"), guid=root.get("guid"),
              coSimulation=NS(modelIdentifier=cs.get("modelIdentifier")), modelVariables=variables)


def variable(md, name):
    for v in md.modelVariables:
        if v.name == name:
            return v
    raise KeyError(f"{md.modelName}: no variable {name!r}")


def typed_start(md, name, value):
    """(variable, python value) with enumeration item names resolved to their integer values."""
    v = variable(md, name)
    if v.type == "Real":
        return v, float(value)
    if v.type in ("Integer", "Enumeration"):
        if isinstance(value, str):
            if v.type != "Enumeration" or v.declaredType is None:
                raise ValueError(f"{name}: string value {value!r} for a non-enumeration")
            for item in v.declaredType.items:
                if item.name == value:
                    return v, int(item.value)
            raise ValueError(f"{name}: no enumeration item {value!r}")
        return v, int(value)
    if v.type == "Boolean":
        return v, bool(value)
    if v.type == "String":
        return v, str(value)
    raise ValueError(f"{name}: unsupported type {v.type}")


def default_start(v):
    if v.start is None:
        return None
    try:
        if v.type == "Real":
            return float(v.start)
        if v.type in ("Integer", "Enumeration"):
            return int(v.start)
        if v.type == "Boolean":
            return v.start in (True, "true", "1", 1)
    except (TypeError, ValueError):
        return None
    return v.start


def real_outputs(md):
    return [v for v in md.modelVariables if v.causality == "output" and v.type == "Real"]


# --------------------------------------------------------------------------------------------------
# scenario


def load_system(system, step, stop):
    import tomllib

    path = system
    if not (system.endswith(".toml") or os.sep in system):
        path = os.path.join(REPO, "scenarios", system + ".toml")
    path = os.path.abspath(path)
    with open(path, "rb") as f:
        sc = tomllib.load(f)
    base = os.path.dirname(path)
    sim = sc.get("simulation", {})
    step = step if step is not None else float(sim["step"])
    stop = stop if stop is not None else float(sim["stop"])
    instances = []
    for name, inst in sc["instances"].items():
        fmu = os.path.normpath(os.path.join(base, inst["fmu"]))
        md = read_md(fmu)
        starts = []
        for var, value in (inst.get("start") or {}).items():
            v, val = typed_start(md, var, value)
            starts.append((v, val))
        instances.append({"name": name, "fmu": fmu, "md": md, "start": starts})
    index = {inst["name"]: i for i, inst in enumerate(instances)}

    def split(ref):
        inst, var = ref.split(".", 1)
        if inst not in index:
            raise KeyError(f"unknown instance in {ref!r}")
        return index[inst], var

    connections = []
    for c in sc.get("connections", []):
        si, sv = split(c["from"])
        di, dv = split(c["to"])
        svar = variable(instances[si]["md"], sv)
        dvar = variable(instances[di]["md"], dv)
        if svar.type != "Real" or dvar.type != "Real":
            raise ValueError(f"{c['from']} -> {c['to']}: only Real connections are supported")
        connections.append({"src": si, "svar": svar, "dst": di, "dvar": dvar,
                            "from": c["from"], "to": c["to"]})
    watch = (sc.get("outputs") or {}).get("variables") or []
    if not watch:
        watch = sorted({c["from"] for c in connections})
    watch = [(r,) + split(r) for r in watch]
    watch = [(r, i, variable(instances[i]["md"], v)) for r, i, v in watch]
    watch = [w for w in watch if w[2].type == "Real"]
    return {"name": os.path.splitext(os.path.basename(path))[0], "path": path, "step": step,
            "stop": stop, "algorithm": sim.get("algorithm"), "extrapolation": sim.get("extrapolation"),
            "instances": instances, "connections": connections, "watch": watch}


# --------------------------------------------------------------------------------------------------
# FMPy


def fmpy_version():
    import fmpy

    return fmpy.__version__


def fmpy_instantiate(unzipdir, md, name):
    from fmpy.fmi2 import FMU2Slave

    fmu = FMU2Slave(guid=md.guid, unzipDirectory=unzipdir,
                    modelIdentifier=md.coSimulation.modelIdentifier, instanceName=name)
    fmu.instantiate()
    return fmu


def fmpy_set(fmu, v, value):
    vr = [v.valueReference]
    if v.type == "Real":
        fmu.setReal(vr, [value])
    elif v.type in ("Integer", "Enumeration"):
        fmu.setInteger(vr, [value])
    elif v.type == "Boolean":
        fmu.setBoolean(vr, [value])
    else:
        fmu.setString(vr, [value])


def run_fmpy_single(fmu_path, step, stop, repeat):
    from fmpy import extract

    md = read_md(fmu_path)
    outs = real_outputs(md)
    vrs = [v.valueReference for v in outs]
    n = n_steps(step, stop)
    unzipdir = extract(fmu_path)
    walls = []
    try:
        for _ in range(repeat):
            fmu = fmpy_instantiate(unzipdir, md, "m")
            fmu.setupExperiment(startTime=0.0, stopTime=stop)
            fmu.enterInitializationMode()
            fmu.exitInitializationMode()
            do_step, get_real = fmu.doStep, fmu.getReal
            t0 = time.perf_counter()
            for k in range(n):
                do_step(k * step, step)
                y = get_real(vrs)
            walls.append(time.perf_counter() - t0)
            final = dict(zip([v.name for v in outs], y))
            fmu.terminate()
            fmu.freeInstance()
    finally:
        shutil.rmtree(unzipdir, ignore_errors=True)
    return {"version": fmpy_version(), "api": "fmpy.fmi2.FMU2Slave doStep+getReal(all Real outputs)",
            **timing_fields(walls, n), "final": final}


def run_fmpy_simulate_fmu(fmu_path, step, stop, repeat):
    from fmpy import extract, simulate_fmu
    from fmpy.model_description import read_model_description

    md = read_model_description(fmu_path, validate=False)
    names = [v.name for v in real_outputs(md)]
    n = n_steps(step, stop)
    unzipdir = extract(fmu_path)
    walls = []
    try:
        for _ in range(repeat):
            fmu = fmpy_instantiate(unzipdir, md, "m")
            t0 = time.perf_counter()
            res = simulate_fmu(unzipdir, validate=False, start_time=0.0, stop_time=stop,
                               output_interval=step, output=names, model_description=md,
                               fmu_instance=fmu, fmi_type="CoSimulation")
            walls.append(time.perf_counter() - t0)
            fmu.freeInstance()
    finally:
        shutil.rmtree(unzipdir, ignore_errors=True)
    if len(res) != n + 1:
        raise RuntimeError(f"simulate_fmu returned {len(res)} rows, expected {n + 1}")
    final = {name: float(res[name][-1]) for name in names}
    return {"version": fmpy_version(), "api": "fmpy.simulate_fmu(output_interval=H, fmu_instance=...)",
            **timing_fields(walls, n), "final": final,
            "note": "timed call includes setupExperiment/initialization/terminate and recording of all "
                    "Real outputs every step; instantiation excluded"}


def run_fmpy_coupled(sysd, repeat):
    from fmpy import extract

    step, stop = sysd["step"], sysd["stop"]
    n = n_steps(step, stop)
    insts = sysd["instances"]
    conns = sysd["connections"]
    # per source instance: the output VRs read each step (one batched getReal per instance)
    src_vrs = [[] for _ in insts]
    src_pos = {}
    for c in conns:
        key = (c["src"], c["svar"].valueReference)
        if key not in src_pos:
            src_pos[key] = len(src_vrs[c["src"]])
            src_vrs[c["src"]].append(c["svar"].valueReference)
    # per destination instance: input VRs and where their values come from (one batched setReal)
    dst = {}
    for c in conns:
        vrs, srcs = dst.setdefault(c["dst"], ([], []))
        vrs.append(c["dvar"].valueReference)
        srcs.append((c["src"], src_pos[(c["src"], c["svar"].valueReference)]))
    dst = sorted(dst.items())
    readers = [i for i, vrs in enumerate(src_vrs) if vrs]

    unzipdirs = [extract(inst["fmu"]) for inst in insts]
    walls = []
    try:
        for _ in range(repeat):
            fmus = [fmpy_instantiate(d, inst["md"], inst["name"]) for d, inst in zip(unzipdirs, insts)]
            for fmu, inst in zip(fmus, insts):
                for v, val in inst["start"]:
                    fmpy_set(fmu, v, val)
                fmu.setupExperiment(startTime=0.0, stopTime=stop)
                fmu.enterInitializationMode()

            def exchange():
                outs = [None] * len(fmus)
                for i in readers:
                    outs[i] = fmus[i].getReal(src_vrs[i])
                for d, (vrs, srcs) in dst:
                    fmus[d].setReal(vrs, [outs[i][j] for i, j in srcs])

            # propagate initial values like libcosim/ecos: N Jacobi sweeps in initialization mode
            for _ in range(len(fmus)):
                exchange()
            for fmu in fmus:
                fmu.exitInitializationMode()
            exchange()

            steppers = [f.doStep for f in fmus]
            getters = [(i, fmus[i].getReal, src_vrs[i]) for i in readers]
            setters = [(fmus[d].setReal, vrs, srcs) for d, (vrs, srcs) in dst]
            outs = [None] * len(fmus)
            t0 = time.perf_counter()
            for k in range(n):
                t = k * step
                for do_step in steppers:
                    do_step(t, step)
                for i, get_real, vrs in getters:
                    outs[i] = get_real(vrs)
                for set_real, vrs, srcs in setters:
                    set_real(vrs, [outs[i][j] for i, j in srcs])
            walls.append(time.perf_counter() - t0)
            final = {ref: fmus[i].getReal([v.valueReference])[0] for ref, i, v in sysd["watch"]}
            for fmu in fmus:
                fmu.terminate()
                fmu.freeInstance()
    finally:
        for d in unzipdirs:
            shutil.rmtree(d, ignore_errors=True)
    return {"version": fmpy_version(),
            "api": "fmpy.fmi2.FMU2Slave, Python Jacobi loop (doStep all; getReal outputs; setReal inputs)",
            **timing_fields(walls, n), "final": final}


# --------------------------------------------------------------------------------------------------
# libcosim (libcosimpy)


def libcosim_version():
    from importlib.metadata import version

    return version("libcosimpy")


def libcosim_setup():
    from libcosimpy.CosimLogging import CosimLogLevel, log_output_level

    log_output_level(CosimLogLevel.ERROR)


def libcosim_ns(seconds):
    return int(round(seconds * 1e9))


def libcosim_vrs(ex, idx):
    return {v.name.decode(): v.reference for v in ex.slave_variables(idx)}


def libcosim_run(ex, n, step_ns, watch_fn):
    """Step n times: step 1 (contains libcosim's lazy initialization) untimed, steps 2..n-1 timed,
    then a last-value observer is attached and the last step taken untimed so that the observer
    holds the final values without costing anything inside the timed loop."""
    from libcosimpy.CosimObserver import CosimObserver

    if n < 3:
        raise ValueError("libcosim run needs at least 3 steps")
    if not ex.step(1):
        raise RuntimeError("cosim_execution_step (initialization step) failed: " + libcosim_err())
    t0 = time.perf_counter()
    ok = ex.step(n - 2)
    wall = time.perf_counter() - t0
    if not ok:
        raise RuntimeError("cosim_execution_step failed: " + libcosim_err())
    obs = CosimObserver.create_last_value()
    if not ex.add_observer(obs):
        raise RuntimeError("add_observer failed: " + libcosim_err())
    if not ex.step(1):
        raise RuntimeError("cosim_execution_step (last step) failed: " + libcosim_err())
    st = ex.status()
    expected = n * step_ns
    if st.current_time != expected:
        raise RuntimeError(f"libcosim ended at t = {st.current_time} ns, expected {expected} ns")
    final = watch_fn(obs)
    return wall, final, obs


def libcosim_err():
    from libcosimpy._internal import get_last_error_message

    try:
        return get_last_error_message()
    except Exception as e:  # noqa: BLE001
        return err_text(e)


def libcosim_set_start(ex, idx, vrs, v, val, inst_name):
    if v.type == "Enumeration":
        if val == default_start(v):
            return f"{inst_name}.{v.name}: enumeration not supported by libcosim (ignored); value equals the FMU's start"
        raise RuntimeError(f"libcosim ignores FMI 2.0 Enumeration variables; cannot set "
                           f"{inst_name}.{v.name} = {val}")
    vr = vrs[v.name]
    fn = {"Real": ex.real_initial_value, "Integer": ex.integer_initial_value,
          "Boolean": ex.boolean_initial_value, "String": ex.string_initial_value}[v.type]
    if not fn(idx, vr, val):
        raise RuntimeError(f"set initial value {inst_name}.{v.name}: {libcosim_err()}")
    return None


def run_libcosim_single(fmu_path, step, stop, repeat):
    from libcosimpy.CosimExecution import CosimExecution
    from libcosimpy.CosimSlave import CosimLocalSlave

    libcosim_setup()
    md = read_md(fmu_path)
    outs = real_outputs(md)
    n = n_steps(step, stop)
    walls = []
    for _ in range(repeat):
        ex = CosimExecution.from_step_size(libcosim_ns(step))
        slave = CosimLocalSlave(fmu_path=os.path.abspath(fmu_path), instance_name="m")
        idx = ex.add_local_slave(slave)
        if idx < 0:
            raise RuntimeError("add_local_slave failed: " + libcosim_err())
        vrs = libcosim_vrs(ex, idx)
        out_vrs = [vrs[v.name] for v in outs]

        def watch(obs):
            return dict(zip([v.name for v in outs], obs.last_real_values(idx, out_vrs)))

        wall, final, obs = libcosim_run(ex, n, libcosim_ns(step), watch)
        walls.append(wall)
        del obs, ex, slave
    return {"version": libcosim_version(),
            "api": "CosimExecution.from_step_size + CosimLocalSlave, execution.step(n)",
            **timing_fields(walls, n - 2), "final": final,
            "note": "default fixed_step_algorithm; no observer during the timed steps (libcosim then "
                    "reads no outputs); step 1 (lazy initialization) and the last step untimed"}


def run_libcosim_coupled(sysd, repeat):
    from libcosimpy.CosimExecution import CosimExecution
    from libcosimpy.CosimSlave import CosimLocalSlave

    libcosim_setup()
    step, stop = sysd["step"], sysd["stop"]
    n = n_steps(step, stop)
    walls = []
    for _ in range(repeat):
        notes = []
        ex = CosimExecution.from_step_size(libcosim_ns(step))
        slaves, idxs, vrmaps = [], [], []
        for inst in sysd["instances"]:
            s = CosimLocalSlave(fmu_path=inst["fmu"], instance_name=inst["name"])
            idx = ex.add_local_slave(s)
            if idx < 0:
                raise RuntimeError(f"add_local_slave {inst['name']}: {libcosim_err()}")
            slaves.append(s)
            idxs.append(idx)
            vrmaps.append(libcosim_vrs(ex, idx))
        for inst, idx, vrs in zip(sysd["instances"], idxs, vrmaps):
            for v, val in inst["start"]:
                note = libcosim_set_start(ex, idx, vrs, v, val, inst["name"])
                if note:
                    notes.append(note)
        for c in sysd["connections"]:
            rc = ex.connect_real_variables(idxs[c["src"]], vrmaps[c["src"]][c["svar"].name],
                                           idxs[c["dst"]], vrmaps[c["dst"]][c["dvar"].name])
            if rc != 0:
                raise RuntimeError(f"connect {c['from']} -> {c['to']}: {libcosim_err()}")

        def watch(obs):
            return {ref: obs.last_real_values(idxs[i], [vrmaps[i][v.name]])[0]
                    for ref, i, v in sysd["watch"]}

        wall, final, obs = libcosim_run(ex, n, libcosim_ns(step), watch)
        walls.append(wall)
        del obs, ex, slaves
    out = {"version": libcosim_version(),
           "api": "CosimExecution.from_step_size + CosimLocalSlave + connect_real_variables, execution.step(n)",
           **timing_fields(walls, n - 2), "final": final,
           "note": "default fixed_step_algorithm (Jacobi, ZOH; slaves stepped on a thread pool of "
                   "hardware_concurrency-1 workers); step 1 (lazy initialization) and the last step untimed"}
    if notes:
        out["warnings"] = notes
    return out


# --------------------------------------------------------------------------------------------------
# ecos (ecospy)


def ecos_version():
    from ecospy import EcosLib

    return str(EcosLib.version()).lstrip("v")


def ecos_set_start(ps, v, val, inst_name):
    ident = f"{inst_name}::{v.name}"
    if v.type == "Enumeration":
        if val == default_start(v):
            return f"{inst_name}.{v.name}: enumeration not supported by ecos (ignored); value equals the FMU's start"
        raise RuntimeError(f"ecos ignores FMI 2.0 Enumeration variables; cannot set {inst_name}.{v.name} = {val}")
    {"Real": ps.add_real, "Integer": ps.add_int, "Boolean": ps.add_bool, "String": ps.add_string}[v.type](ident, val)
    return None


def ecos_run(ss, step, n, has_params, watch):
    from ecospy import EcosSimulation

    sim = EcosSimulation(structure=ss, step_size=step)
    if not sim.init(0.0, "start" if has_params else None):
        raise RuntimeError("ecos init failed")
    t0 = time.perf_counter()
    t_end = sim.step(n)
    wall = time.perf_counter() - t0
    if not math.isclose(t_end, n * step, rel_tol=1e-9):
        raise RuntimeError(f"ecos ended at t = {t_end}, expected {n * step}")
    final = {ref: sim.get_real(ident) for ref, ident in watch}
    sim.terminate()
    sim.free()
    return wall, final


def run_ecos_single(fmu_path, step, stop, repeat):
    from ecospy import EcosLib, EcosSimulationStructure

    EcosLib.set_log_level("err")
    md = read_md(fmu_path)
    n = n_steps(step, stop)
    walls = []
    for _ in range(repeat):
        ss = EcosSimulationStructure()
        ss.add_model("m", os.path.abspath(fmu_path))
        wall, final = ecos_run(ss, step, n, False, [(v.name, f"m::{v.name}") for v in real_outputs(md)])
        ss.free()
        walls.append(wall)
    return {"version": ecos_version(), "api": "EcosSimulationStructure.add_model, EcosSimulation.step(n)",
            **timing_fields(walls, n), "final": final,
            "note": "default fixed_step_algorithm (parallel=true, std::execution::par/TBB)"}


def run_ecos_coupled(sysd, repeat):
    from ecospy import EcosLib, EcosSimulationStructure
    from ecospy.EcosParameterSet import EcosParameterSet

    EcosLib.set_log_level("err")
    step, stop = sysd["step"], sysd["stop"]
    n = n_steps(step, stop)
    insts = sysd["instances"]
    walls = []
    for _ in range(repeat):
        notes = []
        ss = EcosSimulationStructure()
        for inst in insts:
            ss.add_model(inst["name"], inst["fmu"])
        ps = EcosParameterSet()
        has_params = False
        for inst in insts:
            for v, val in inst["start"]:
                note = ecos_set_start(ps, v, val, inst["name"])
                if note:
                    notes.append(note)
                else:
                    has_params = True
        if has_params and not ss.add_parameter_set("start", ps):
            raise RuntimeError("add_parameter_set failed: " + EcosLib.get_last_error())
        for c in sysd["connections"]:
            ss.make_real_connection(f"{insts[c['src']]['name']}::{c['svar'].name}",
                                    f"{insts[c['dst']]['name']}::{c['dvar'].name}")
        watch = [(ref, f"{insts[i]['name']}::{v.name}") for ref, i, v in sysd["watch"]]
        wall, final = ecos_run(ss, step, n, has_params, watch)
        ps.free()
        ss.free()
        walls.append(wall)
    out = {"version": ecos_version(),
           "api": "EcosSimulationStructure.add_model + make_real_connection, EcosSimulation.step(n)",
           **timing_fields(walls, n), "final": final,
           "note": "default fixed_step_algorithm (Jacobi, ZOH; parallel=true, std::execution::par/TBB)"}
    if notes:
        out["warnings"] = notes
    return out


# --------------------------------------------------------------------------------------------------
# driver

RUNNERS = {
    ("single", "fmpy"): run_fmpy_single,
    ("single", "fmpy-simulate_fmu"): run_fmpy_simulate_fmu,
    ("single", "libcosim"): run_libcosim_single,
    ("single", "ecos"): run_ecos_single,
    ("coupled", "fmpy"): run_fmpy_coupled,
    ("coupled", "libcosim"): run_libcosim_coupled,
    ("coupled", "ecos"): run_ecos_coupled,
}


def header(args):
    if args.mode == "single":
        return {"mode": "single", "fmu": os.path.abspath(args.fmu), "step": args.step, "stop": args.stop}
    return {"mode": "coupled", "system": args.system, "step": args.step, "stop": args.stop}


def run_in_process(args, tool):
    head = {"tool": tool, **header(args)}
    try:
        if args.mode == "single":
            res = RUNNERS[("single", tool)](args.fmu, args.step, args.stop, args.repeat)
        else:
            sysd = load_system(args.system, args.step, args.stop)
            head.update(step=sysd["step"], stop=sysd["stop"], system=sysd["name"])
            res = RUNNERS[("coupled", tool)](sysd, args.repeat)
        emit({**head, **res, "ok": True})
    except BaseException as e:  # noqa: BLE001 - report anything, including ImportError/SystemExit
        traceback.print_exc(file=sys.stderr)
        msg = err_text(e)
        if "libtbb" in msg:
            msg += " (ecospy's binary needs Intel TBB: apt-get install libtbb12)"
        emit({**head, "ok": False, "error": msg})


def run_isolated(args, tool, argv):
    head = {"tool": tool, **header(args)}
    cmd = [sys.executable, os.path.abspath(__file__)] + argv + ["--tools", tool, "--no-isolate"]
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=args.timeout)
    except subprocess.TimeoutExpired as e:
        sys.stderr.write((e.stderr or b"").decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or ""))
        emit({**head, "ok": False, "error": f"Timeout: no result after {args.timeout} s"})
        return
    sys.stderr.write(p.stderr)
    lines = [ln for ln in p.stdout.splitlines() if ln.strip().startswith("{")]
    if lines:
        for ln in lines:
            _JSON_OUT.write(ln + "\n")
        _JSON_OUT.flush()
        return
    tail = " | ".join(p.stderr.strip().splitlines()[-3:])
    why = f"signal {-p.returncode}" if p.returncode < 0 else f"exit code {p.returncode}"
    emit({**head, "ok": False, "error": f"Crash: child process died ({why}) without a result: {tail}"})


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    _claim_stdout()
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="mode", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--repeat", type=int, default=1, help="repetitions (median reported)")
    common.add_argument("--tools", help="comma-separated subset of the peers")
    common.add_argument("--no-isolate", action="store_true", help="run peers in this process")
    common.add_argument("--timeout", type=float, default=600.0, help="seconds per peer (isolated)")
    sp = sub.add_parser("single", parents=[common], help="one FMU alone, inputs at start values")
    sp.add_argument("fmu")
    sp.add_argument("--step", type=float, required=True)
    sp.add_argument("--stop", type=float, required=True)
    cp = sub.add_parser("coupled", parents=[common], help="a scenario's coupled system")
    cp.add_argument("--system", required=True, help="scenario name (scenarios/NAME.toml) or TOML path")
    cp.add_argument("--step", type=float)
    cp.add_argument("--stop", type=float)
    args = ap.parse_args(argv)
    if args.repeat < 1:
        ap.error("--repeat must be >= 1")

    known = SINGLE_TOOLS if args.mode == "single" else COUPLED_TOOLS
    tools = known if not args.tools else [t.strip() for t in args.tools.split(",") if t.strip()]
    for tool in tools:
        if tool not in known:
            emit({"tool": tool, **header(args), "ok": False,
                  "error": f"ValueError: unknown peer for mode {args.mode}; known: {', '.join(known)}"})
            continue
        if args.no_isolate:
            run_in_process(args, tool)
        else:
            child_argv = [a for a in argv]
            # drop a user-given --tools X / --tools=X; the child gets exactly one tool
            cleaned, skip = [], False
            for a in child_argv:
                if skip:
                    skip = False
                    continue
                if a == "--tools":
                    skip = True
                    continue
                if a.startswith("--tools="):
                    continue
                cleaned.append(a)
            run_isolated(args, tool, cleaned)
    return 0


if __name__ == "__main__":
    sys.exit(main())
