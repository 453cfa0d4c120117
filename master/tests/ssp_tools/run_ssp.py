#!/usr/bin/env python3
"""Runs an SSP written by `cosim export-ssp` in a third-party tool, for cosim-cli/tests/ssp_interop.rs.

    run_ssp.py TOOL SSP --stop T --step H --outputs inst.var,... --csv OUT
               [--input inst.var=t0:v0,t1:v1,...]

TOOL:
  fmpy-validate  fmpy.ssp.ssd.read_ssd(SSP, validate=True) (the SSP 1.0 schemas FMPy ships)
  fmpy           fmpy.ssp.simulate_ssp(SSP, stop_time, step_size, parameter_set=<the SSP's .ssv>)
  fmpy-loop      FMPy's SSP building blocks (fmpy.ssp.simulation: read_ssd, instantiate_fmu with the
                 .ssv, do_step) in simulate_ssp's loop, with two differences simulate_ssp has no way
                 to express: connections start at the outputs' initial values (simulate_ssp starts
                 every connector at 0.0) and --input drives a component input by a time table
                 (simulate_ssp feeds only the system's own input connectors)
  libcosim       libcosimpy CosimExecution.from_ssp_file(SSP, H in ns); --input through an override
                 manipulator before each step
  ecos           ecospy EcosSimulation(ssp_path=SSP, step_size=H), init with the SSP's parameter set;
                 --input through set_real before each step
  omsimulator    OMSimulator's C API (libOMSimulator.so of the extracted tarball given by --oms
                 DIR, through ctypes): oms_importFile(SSP), oms_initialize, then oms_doStep per
                 step (its step: the SSD's oms:FixedStepMaster, --step must equal it); --input
                 through oms_setReal at each point before its row is read (held over the next
                 step); a failed step writes the rows so far. Its time is accumulated (t += H): the
                 rows are labelled k·H, and when the N-th step ends short of the stop time one
                 more oms_doStep takes the remainder (as OMSimulator's own simulate does), the
                 last row after it. Run in a scratch directory (it unpacks there).

Writes OUT: a CSV `time,<outputs>` with a row at t = 0 (where the tool can read it) and one after
every step, time = k·H. Prints the tool's version on stdout. Exit 1 with the error on stderr.
"""

import argparse
import csv
import math
import os
import shutil
import sys
import tempfile
import zipfile


def table(spec):
    name, pts = spec.split("=", 1)
    points = [tuple(float(x) for x in p.split(":")) for p in pts.split(",")]
    def value(t):
        v = points[0][1]
        for ti, vi in points:
            if ti <= t + 1e-12:
                v = vi
        return v
    return name, value


def write(path, outputs, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["time"] + outputs)
        for r in rows:
            w.writerow([repr(float(x)) for x in r])


def ssv_of(ssp):
    """The SSP's parameter set (FMPy's reader), or None."""
    from fmpy.ssp.ssd import read_ssv
    with zipfile.ZipFile(ssp) as z:
        names = [n for n in z.namelist() if n.endswith(".ssv")]
    if not names:
        return None
    return read_ssv(ssp, resource=names[0], validate=True)


def run_fmpy_validate(a):
    import fmpy
    from fmpy.ssp.ssd import read_ssd
    ssd = read_ssd(a.ssp, validate=True)
    ssv_of(a.ssp)  # the .ssv against its schema too
    print(f"fmpy {fmpy.__version__}: {ssd.name}, {len(ssd.system.elements)} components")


def run_fmpy(a):
    import fmpy
    from fmpy.ssp.simulation import simulate_ssp
    if a.input:
        raise SystemExit("simulate_ssp feeds only the system's own input connectors: use fmpy-loop for --input")
    r = simulate_ssp(a.ssp, stop_time=a.stop, step_size=a.step, parameter_set=ssv_of(a.ssp))
    # simulate_ssp's row k holds time t_k and the connector values after the step from t_k.
    rows = [[(k + 1) * a.step] + [float(r[o][k]) for o in a.outputs] for k in range(len(r))]
    write(a.csv, a.outputs, rows)
    print(f"fmpy {fmpy.__version__}")


def run_fmpy_loop(a):
    import fmpy
    from fmpy.ssp.ssd import read_ssd, find_components, get_connections
    from fmpy.ssp.simulation import instantiate_fmu, free_fmu, get_value, set_value
    from fmpy import extract
    ssd = read_ssd(a.ssp, validate=True)
    components = find_components(ssd.system)
    by_name = {c.name: c for c in components}
    connections = get_connections(ssd.system)
    unzipdir = extract(a.ssp)
    try:
        ps = ssv_of(a.ssp)
        for c in components:
            instantiate_fmu(c, unzipdir, 0.0, a.stop, ps)
        inputs = [table(s) for s in a.input]
        def exchange():
            for s, e in connections:
                set_value(e.parent, e.name, get_value(s.parent, s.name))
        def read():
            out = []
            for o in a.outputs:
                inst, var = o.split(".", 1)
                out.append(get_value(by_name[inst], var))
            return out
        exchange()
        rows = [[0.0] + read()]
        n = int(round(a.stop / a.step))
        for k in range(n):
            t = k * a.step
            for name, f in inputs:
                inst, var = name.split(".", 1)
                set_value(by_name[inst], var, f(t))
            for c in components:
                c.fmu.doStep(currentCommunicationPoint=t, communicationStepSize=a.step)
            exchange()
            rows.append([(k + 1) * a.step] + read())
        for c in components:
            free_fmu(c)
    finally:
        shutil.rmtree(unzipdir, ignore_errors=True)
    write(a.csv, a.outputs, rows)
    print(f"fmpy {fmpy.__version__}")


def run_libcosim(a):
    from importlib.metadata import version
    from libcosimpy.CosimExecution import CosimExecution
    from libcosimpy.CosimManipulator import CosimManipulator
    from libcosimpy.CosimObserver import CosimObserver
    from libcosimpy.CosimLogging import CosimLogLevel, log_output_level
    log_output_level(CosimLogLevel.ERROR)
    h_ns = int(round(a.step * 1e9))
    tmp = tempfile.mkdtemp()
    try:
        # libcosim reads an unpacked SSP (a folder with SystemStructure.ssd).
        with zipfile.ZipFile(a.ssp) as z:
            z.extractall(tmp)
        ex = CosimExecution.from_ssp_file(tmp, h_ns)
        index = {i.name.decode(): i.index for i in ex.slave_infos()}
        vrs = {name: {v.name.decode(): v.reference for v in ex.slave_variables(i)} for name, i in index.items()}
        obs = CosimObserver.create_last_value()
        ex.add_observer(obs)
        over = CosimManipulator.create_override()
        ex.add_manipulator(over)
        inputs = [table(s) for s in a.input]
        def read():
            out = []
            for o in a.outputs:
                inst, var = o.split(".", 1)
                out.append(obs.last_real_values(index[inst], [vrs[inst][var]])[0])
            return out
        n = int(round(a.stop / a.step))
        rows = []
        for k in range(n):
            t = k * a.step
            for name, f in inputs:
                inst, var = name.split(".", 1)
                over.slave_real_values(index[inst], [vrs[inst][var]], [f(t)])
            if not ex.step(1):
                from libcosimpy._internal import get_last_error_message
                raise RuntimeError(f"libcosim step from t = {t}: {get_last_error_message()}")
            if k == 0:
                pass  # libcosim initializes inside its first step: no row at t = 0
            rows.append([(k + 1) * a.step] + read())
        st = ex.status()
        if st.current_time != n * h_ns:
            raise RuntimeError(f"libcosim ended at {st.current_time} ns, expected {n * h_ns}")
        del over, obs, ex
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    write(a.csv, a.outputs, rows)
    print(f"libcosimpy {version('libcosimpy')}")


def run_ecos(a):
    from ecospy import EcosLib, EcosSimulation
    EcosLib.set_log_level("err")
    sim = EcosSimulation(step_size=a.step, ssp_path=os.path.abspath(a.ssp))
    ps = ssv_of(a.ssp)
    if not sim.init(0.0, ps.name if ps is not None else None):
        raise RuntimeError("ecos init failed: " + str(EcosLib.get_last_error()))
    inputs = [table(s) for s in a.input]
    ident = lambda o: "::".join(o.split(".", 1))
    read = lambda: [sim.get_real(ident(o)) for o in a.outputs]
    rows = [[0.0] + read()]
    n = int(round(a.stop / a.step))
    for k in range(n):
        t = k * a.step
        for name, f in inputs:
            sim.set_real(ident(name), f(t))
        sim.step(1)
        rows.append([(k + 1) * a.step] + read())
    t_end = sim.get_time()
    if not math.isclose(t_end, n * a.step, rel_tol=1e-9):
        raise RuntimeError(f"ecos ended at t = {t_end}, expected {n * a.step}")
    sim.terminate()
    sim.free()
    write(a.csv, a.outputs, rows)
    print(f"ecospy {EcosLib.version()}")


def run_omsimulator(a):
    import ctypes
    import re
    lib = ctypes.CDLL(os.path.join(a.oms, "lib", "x86_64-linux-gnu", "libOMSimulator.so"))
    c_str = ctypes.c_char_p
    lib.oms_getVersion.restype = c_str
    lib.oms_importFile.argtypes = [c_str, ctypes.POINTER(c_str)]
    lib.oms_getReal.argtypes = [c_str, ctypes.POINTER(ctypes.c_double)]
    lib.oms_setReal.argtypes = [c_str, ctypes.c_double]
    lib.oms_getTime.argtypes = [c_str, ctypes.POINTER(ctypes.c_double)]
    lib.oms_setStopTime.argtypes = [c_str, ctypes.c_double]
    lib.oms_setResultFile.argtypes = [c_str, c_str, ctypes.c_int]
    for f in ["oms_setTempDirectory", "oms_instantiate", "oms_initialize",
              "oms_doStep", "oms_terminate", "oms_delete"]:
        getattr(lib, f).argtypes = [c_str]
    with zipfile.ZipFile(a.ssp) as z:
        ssd = z.read("SystemStructure.ssd").decode()
    system = re.search(r"<ssd:System\s[^>]*name=\"([^\"]+)\"", ssd).group(1)
    step = re.search(r"stepSize=\"([^\"]+)\"", ssd)
    if step is None or float(step.group(1)) != a.step:
        raise SystemExit(f"the SSD's oms:FixedStepMaster stepSize is {step and step.group(1)}, not --step {a.step}")
    ssp, out, cwd = os.path.abspath(a.ssp), os.path.abspath(a.csv), os.getcwd()
    work = tempfile.mkdtemp()
    ok = lambda status, what: status == 0 or (_ for _ in ()).throw(RuntimeError(f"OMSimulator: {what} failed"))
    try:
        # It unpacks into its working directory (oms_importFile takes the path from there).
        os.chdir(work)
        lib.oms_setTempDirectory(work.encode())
        cref = c_str()
        ok(lib.oms_importFile(ssp.encode(), ctypes.byref(cref)), f"oms_importFile({ssp})")
        model = cref.value
        ok(lib.oms_setStopTime(model, a.stop), "oms_setStopTime")
        ok(lib.oms_setResultFile(model, os.path.join(work, "r.mat").encode(), 1), "oms_setResultFile")
        ok(lib.oms_instantiate(model), "oms_instantiate")
        inputs = [table(s) for s in a.input]
        name = lambda o: model + b"." + system.encode() + b"." + o.encode()
        for var, f in inputs:
            ok(lib.oms_setReal(name(var), f(0.0)), f"oms_setReal({var})")
        ok(lib.oms_initialize(model), "oms_initialize")
        x, k_int = ctypes.c_double(), ctypes.c_int()
        lib.oms_getVariableType.argtypes = [c_str, ctypes.POINTER(ctypes.c_int)]
        lib.oms_getInteger.argtypes = [c_str, ctypes.POINTER(ctypes.c_int)]
        # oms_signal_type_real = 0; Integer and Enumeration columns through oms_getInteger.
        kinds = []
        for o in a.outputs:
            ok(lib.oms_getVariableType(name(o), ctypes.byref(k_int)), f"oms_getVariableType({o})")
            kinds.append(k_int.value)
        def read():
            out = []
            for o, kind in zip(a.outputs, kinds):
                if kind == 0:
                    ok(lib.oms_getReal(name(o), ctypes.byref(x)), f"oms_getReal({o})")
                    out.append(x.value)
                else:
                    ok(lib.oms_getInteger(name(o), ctypes.byref(k_int)), f"oms_getInteger({o})")
                    out.append(float(k_int.value))
            return out
        rows = [[0.0] + read()]
        n = int(round(a.stop / a.step))
        for k in range(n):
            if lib.oms_doStep(model) != 0:
                # The rows so far are written: a failure is compared with cosim's (same step).
                write(out, a.outputs, rows)
                raise RuntimeError(f"OMSimulator: oms_doStep from t = {k * a.step} failed")
            # The time tables' values at the point reached, set before its row is read (as
            # cosim sets a point's inputs before its row) and held over the next step.
            for var, f in inputs:
                ok(lib.oms_setReal(name(var), f((k + 1) * a.step)), f"oms_setReal({var})")
            rows.append([(k + 1) * a.step] + read())
        ok(lib.oms_getTime(model, ctypes.byref(x)), "oms_getTime")
        if x.value < a.stop:
            # Its float time ended short of the stop time: the remainder step, as its simulate takes it.
            ok(lib.oms_doStep(model), f"oms_doStep of the remainder {a.stop - x.value:e} s from t = {x.value!r}")
            rows[-1] = [n * a.step] + read()
        ok(lib.oms_getTime(model, ctypes.byref(x)), "oms_getTime")
        if not math.isclose(x.value, a.stop, rel_tol=1e-12):
            raise RuntimeError(f"OMSimulator ended at t = {x.value!r}, expected {a.stop}")
        lib.oms_terminate(model)
        lib.oms_delete(model)
    finally:
        os.chdir(cwd)
        shutil.rmtree(work, ignore_errors=True)
    write(out, a.outputs, rows)
    print(f"OMSimulator {lib.oms_getVersion().decode()}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("tool", choices=["fmpy-validate", "fmpy", "fmpy-loop", "libcosim", "ecos", "omsimulator"])
    p.add_argument("ssp")
    p.add_argument("--stop", type=float)
    p.add_argument("--step", type=float)
    p.add_argument("--outputs", type=lambda s: s.split(","), default=[])
    p.add_argument("--csv")
    p.add_argument("--input", action="append", default=[])
    p.add_argument("--oms", help="omsimulator: the folder the OMSimulator tarball was extracted into")
    a = p.parse_args()
    {"fmpy-validate": run_fmpy_validate, "fmpy": run_fmpy, "fmpy-loop": run_fmpy_loop,
     "libcosim": run_libcosim, "ecos": run_ecos, "omsimulator": run_omsimulator}[a.tool](a)


if __name__ == "__main__":
    main()
