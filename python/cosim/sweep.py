"""Parameter sweeps: every parameter set a full run, reduced to one row of a pandas DataFrame,
on a local process pool or a Dask cluster (``dask.distributed``)."""

from __future__ import annotations

import concurrent.futures
import hashlib
import itertools
import math
import os
import tempfile

from ._signals import stops_cleanly

__all__ = ["sweep", "parameter_sets", "default_reduce"]


def parameter_sets(parameters) -> list[dict]:
    """``{"inst.var": [values], ...}`` → the Cartesian product as a list of dicts (the last key
    varies fastest), or a list of dicts as given."""
    if isinstance(parameters, dict):
        keys = list(parameters)
        return [dict(zip(keys, combo)) for combo in itertools.product(*(list(parameters[k]) for k in keys))]
    return [dict(p) for p in parameters]


def default_reduce(result, summary) -> dict:
    """Summary status, steps and time reached, and the final value of every recorded variable."""
    row = {"status": summary["status"], "steps": summary["steps"], "time": summary["time"]}
    for name in result.dtype.names[1:]:
        row[name] = float(result[name][-1]) if len(result) else math.nan
    return row


def _materialize(blobs: dict) -> dict:
    """FMU bytes shipped by Dask → files in this worker's temp dir (written once per host)."""
    out = {}
    base = os.path.join(tempfile.gettempdir(), "cosim-fmus")
    os.makedirs(base, exist_ok=True)
    for inst, (digest, data) in blobs.items():
        path = os.path.join(base, f"{digest}.fmu")
        if not os.path.exists(path):
            tmp = f"{path}.{os.getpid()}.part"
            with open(tmp, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        out[inst] = path
    return out


def _run_one(index, system, values, options, reduce, blobs=None):
    """One run of the sweep; never raises: a failure is the row's ``error``."""
    from . import simulate

    try:
        opts = dict(options)
        if blobs:
            opts["fmus"] = _materialize(blobs)
        result = simulate(system, start_values=values, check=False, **opts)
        summary = result.summary
        error = "" if summary["status"] == "ok" else summary["message"]
        row = (reduce or default_reduce)(result, summary)
    except Exception as e:  # noqa: BLE001 - a failed run is a row, not a crashed sweep
        row, error = {"status": "error"}, f"{type(e).__name__}: {e}"
    return index, row, error


def _stop(pool):
    """Cancels the pool's pending runs and terminates its worker processes."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for p in processes:
        if p.is_alive():
            p.terminate()
    for p in processes:
        p.join(5)


def _portable(system):
    """The system as picklable data with absolute paths (workers may run elsewhere)."""
    from .system import System

    if isinstance(system, System):
        spec = system.spec()
        for inst in spec["instances"].values():
            inst["fmu"] = os.path.abspath(inst["fmu"])
        return spec
    if isinstance(system, dict):
        return system
    return os.path.abspath(os.fspath(system))


@stops_cleanly
def sweep(
    system,
    parameters,
    reduce=None,
    client=None,
    *,
    max_workers: int | None = None,
    ship_fmus: bool = False,
    **options,
):
    """Runs ``system`` once per parameter set and returns a pandas DataFrame, one row per set in
    parameter order: the parameters, ``error`` ("" when the run succeeded) and the columns of
    ``reduce(result, summary) -> dict`` (default :func:`default_reduce`: status, steps, time and
    the final value of every recorded variable).

    ``parameters``: ``{"inst.var": [values], ...}`` (Cartesian product) or a list of dicts of
    start values. ``options`` go to :func:`cosim.simulate` (stop_time, step, output, …).

    ``client=None``: a local ``concurrent.futures.ProcessPoolExecutor`` (``max_workers``,
    default all cores). ``client=dask.distributed.Client(...)``: one task per run, gathered as
    they finish. The FMUs are read by path (shared filesystem: the system's paths are made
    absolute) unless ``ship_fmus=True``: then each FMU file is broadcast once to every worker
    (``client.scatter(..., broadcast=True)``) and written once per worker host into its temp
    directory. ``reduce`` must be picklable (a module-level function; with the local pool,
    functions of ``__main__``/Jupyter work too since the pool forks). A run that fails (an FMU
    error, a bad parameter name, an exception in ``reduce``, a lost worker) is a row with its
    error; the other runs complete. A run that fails in its FMUs is a result (a row with status
    ``failed``: a stability map is made of them). When no run gives a result at all — every row
    an exception of the sweep's machinery, say a ``reduce`` that raises or cannot be pickled, or a
    parameter name no run knows — :class:`cosim.CosimError` is raised with the first error.
    """
    import pandas as pd

    sets = parameter_sets(parameters)
    target = _portable(system)
    rows: list = [None] * len(sets)
    errors: list = [""] * len(sets)
    if client is None:
        workers = max_workers or os.cpu_count() or 1
        pool = concurrent.futures.ProcessPoolExecutor(max_workers=min(workers, max(len(sets), 1)))
        try:
            futures = {pool.submit(_run_one, i, target, values, options, reduce): i for i, values in enumerate(sets)}
            for fut in concurrent.futures.as_completed(futures):
                i = futures[fut]
                try:
                    _, rows[i], errors[i] = fut.result()
                except Exception as e:  # noqa: BLE001 - e.g. a worker process killed by a crashing FMU
                    rows[i], errors[i] = {"status": "error"}, f"{type(e).__name__}: {e}"
        except BaseException:
            # Ctrl-C (KeyboardInterrupt) or another error: the runs not started are cancelled and
            # the workers stopped now; the pool's context manager would wait for every run.
            _stop(pool)
            raise
        pool.shutdown()
    else:
        from dask.distributed import as_completed

        blobs = None
        if ship_fmus:
            from . import _cosim

            blobs = {}
            for inst, path in _cosim._fmu_paths(target):
                with open(path, "rb") as f:
                    data = f.read()
                digest = hashlib.sha256(data).hexdigest()[:32]
                blobs[inst] = (digest, client.scatter(data, broadcast=True, hash=False))
        token = hashlib.sha256(os.urandom(16)).hexdigest()[:12]
        futures = {}
        for i, values in enumerate(sets):
            fut = client.submit(
                _run_one, i, target, values, options, reduce, blobs, key=f"cosim-run-{token}-{i}", pure=False
            )
            futures[fut.key] = (i, fut)
        for fut in as_completed([f for _, f in futures.values()]):
            i = futures[fut.key][0]
            try:
                _, rows[i], errors[i] = fut.result()
            except Exception as e:  # noqa: BLE001 - a lost worker, a task that could not run
                rows[i], errors[i] = {"status": "error"}, f"{type(e).__name__}: {e}"
            fut.release()
    if sets and all(error and (row or {}).get("status") == "error" for row, error in zip(rows, errors)):
        from ._cosim import CosimError

        raise CosimError(f"no run of the sweep gave a result ({len(sets)} runs); the first, {dict(sets[0])}: {errors[0]}")
    records = []
    for values, row, error in zip(sets, rows, errors):
        rec = dict(values)
        rec["error"] = error
        rec.update(row or {})
        records.append(rec)
    return pd.DataFrame.from_records(records)
