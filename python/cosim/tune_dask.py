"""Driver of ``cosim tune --dask SCHEDULER``: runs (test, configuration) sequences of a tune
sweep as tasks on a Dask cluster and prints one JSON line per finished sequence on stdout, in
completion order: ``{"rows": [...], "limit": {...}}`` (the worker's text, unchanged), or
``{"job": [t, c], "error": "..."}`` for a sequence that failed. ``cosim tune`` reads these lines
and stores and reports them as its local threads' results.

    python -m cosim.tune_dask --scheduler ADDR --system PATH --args JSON --jobs JSON

``--args``: the command-line adjustments of the sweep (``master::tune::TuneArgs`` as JSON);
``--jobs``: ``[[t, c], ...]``, the sequences still to run. The system file is read by every
worker by its (absolute) path: a shared filesystem, as :func:`cosim.sweep` without ship_fmus.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys

__all__ = ["run_sequence", "main"]


def run_sequence(system: str, args: str, t: int, c: int) -> str:
    """One sequence on a worker: the JSON line of its rows and limit."""
    from . import _cosim

    return _cosim._tune_sequence(system, args, t, c)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m cosim.tune_dask", description=__doc__.split("\n\n")[0])
    p.add_argument("--scheduler", required=True, help="Dask scheduler address (tcp://host:8786)")
    p.add_argument("--system", required=True, help="the system file")
    p.add_argument("--args", default="{}", help="TuneArgs as JSON")
    p.add_argument("--jobs", required=True, help="[[test, config], ...] as JSON")
    a = p.parse_args(argv)
    try:
        from dask.distributed import Client, as_completed
    except ImportError as e:
        print(f"cosim.tune_dask needs dask.distributed ({e}): pip install \"dask[distributed]\"", file=sys.stderr)
        return 2
    jobs = [tuple(j) for j in json.loads(a.jobs)]
    system = os.path.abspath(a.system)
    token = hashlib.sha256(os.urandom(16)).hexdigest()[:12]
    with Client(a.scheduler) as client:
        futures = []
        for t, c in jobs:
            fut = client.submit(run_sequence, system, a.args, t, c, key=f"cosim-tune-{token}-{t}-{c}", pure=False)
            futures.append((fut, (t, c)))
        job_of = {fut.key: job for fut, job in futures}
        for fut in as_completed([f for f, _ in futures]):
            try:
                line = fut.result()
            except Exception as e:  # noqa: BLE001 - a failed sequence is a line, not a crashed driver
                line = json.dumps({"job": list(job_of[fut.key]), "error": f"{type(e).__name__}: {e}"})
            print(line, flush=True)
            fut.release()
    return 0


if __name__ == "__main__":
    sys.exit(main())
