"""Fuzzing the Python argument parsing (issue 30): random, hostile arguments to ``simulate``,
``Execution`` and its methods, and ``System``. Property: every refusal is an ordinary Python
exception (``CosimError``, ``TypeError``, ``ValueError``, ``OverflowError``, ``KeyError``) — never
a Rust panic (``PanicException``), a crash or a hang (a 60 s alarm per case).

Deterministic: ``FUZZ_SEED`` (default 30), ``FUZZ_CASES`` cases (default 60, a few seconds;
``cargo xtask fuzz`` runs more)."""

import math
import os
import pathlib
import random
import signal

import pytest

import cosim
from conftest import SCENARIOS

CASES = int(os.environ.get("FUZZ_CASES", "60"))
SEED = int(os.environ.get("FUZZ_SEED", "30"))
EXPECTED = (cosim.CosimError, TypeError, ValueError, OverflowError, KeyError)

ANY = [
    None, 0, -1, 1, 2**64, -(2**63) - 1, 1.5, math.nan, math.inf, -math.inf, 1e308, True, "", "m1.x", "m1.nope",
    "\x00", "a.b.c", "../../../etc/passwd", "/dev/zero", b"bytes", [], [None], ["m1.x", "m1.x"], {}, {"m1.x0": math.nan},
    {"nope": 1}, {"m2.x0": "case1"}, {"m1.damping": "case9"}, object(), ("m1.x",), {"m1": "/dev/null"},
]
STOP = [None, 0, -1.0, math.nan, math.inf, 1e308, 0.01, 0.05, 1e17, "1", 2**70]
STEP = [None, 1e-3, 2e-3, 0, -1e-3, math.nan, math.inf, 1e-12, 1e308, "x", 3e-3, 2**70]
ALGORITHM = [None, "jacobi", "gauss-seidel", "GAUSS", "", 3, math.nan]
PARALLEL = [None, "auto", "on", "off", "yes", 1]
EXTRAPOLATION = [None, 0, 1, 4, 5, -1, 2**64, 1.5, "2"]
STEPS = [0, 1, 5, -1, 2**64, 2**63, math.nan, "1", None]
TIMES = [0.0, 0.01, -1.0, math.nan, math.inf, -math.inf, 1e308, "0.1", None]


# Pacing settings (issue 33) are left out: `real_time = 1e-12` is a run that waits 5e10 s for its
# first deadline by design, not a hang. `cosim run` ends such a wait on SIGINT at once
# (cosim-cli/tests/realtime.rs); from Python signals are seen between steps only, so the alarm could
# not end it (case 4250 of FUZZ_SEED=30 hung `cargo xtask fuzz` after issue 33 added the settings).
UNPACED_SETTINGS = [k for k in cosim.System.SETTINGS if k not in ("real_time", "max_lateness", "real_time_priority")]


def _alarm(signum, frame):
    raise TimeoutError("a case took more than 60 s (a hang)")


@pytest.fixture
def alarm():
    old = signal.signal(signal.SIGALRM, _alarm)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


def _kwargs(rng):
    kw = {}
    pools = {
        "stop_time": STOP, "step": STEP, "start_values": ANY, "output": ANY, "fmus": ANY,
        "algorithm": ALGORITHM, "extrapolation": EXTRAPOLATION, "parallel": PARALLEL, "isolate": [None, False, True, 2],
    }
    for k in rng.sample(sorted(pools), rng.randint(0, 4)):
        kw[k] = rng.choice(pools[k])
    # Short runs: at most 0.05 s of the oscillator unless the stop time is itself hostile.
    kw.setdefault("stop_time", 0.05)
    if isinstance(kw["stop_time"], (int, float)) and 0.06 < kw["stop_time"] < 1e6:
        kw["stop_time"] = 0.05
    return kw


def _system(rng, fmu_dir):
    if rng.random() < 0.6:
        return str(SCENARIOS / "oscillator-fd.toml")
    s = cosim.System()
    try:
        s.settings(**{k: rng.choice(STEP + STOP + ALGORITHM) for k in rng.sample(UNPACED_SETTINGS, 2)})
        s.settings(stop=0.05, step=1e-3)
        for name in ("m1", "m2"):
            fmu = fmu_dir / f"oscillator-fd-{name}.fmu" if rng.random() < 0.8 else rng.choice(ANY)
            s.instance(name if rng.random() < 0.9 else rng.choice(ANY), fmu, start=rng.choice([None, {}, rng.choice(ANY)]))
        for a, b in (("m2.x", "m1.xi"), ("m2.v", "m1.xi_dot"), ("m1.F", "m2.F")):
            if rng.random() < 0.9:
                s.connect(a, b, gain=rng.choice([None, 1.0, math.inf, "2"]), extrapolation=rng.choice(EXTRAPOLATION))
            else:
                s.connect(rng.choice(ANY), rng.choice(ANY))
        if rng.random() < 0.5:
            s.bond(rng.choice(["c", "", None]), ("m1", "F", "xi_dot", rng.choice([-1.0, 0.0, math.nan])), ("m2", "F", "v", 1.0))
        if rng.random() < 0.3:
            s.input(rng.choice(["m1.xi", "m9.u", ""]), rng.choice([[0.0], [], [math.nan], "t"]), rng.choice([[1.0], [], None]))
        if rng.random() < 0.3:
            s.outputs(rng.choice(ANY))
    except EXPECTED:
        pass
    return s


def test_hostile_python_arguments_raise_ordinary_exceptions(fmu_dir, alarm):
    rng = random.Random(SEED)
    outcomes = {"ran": 0, "refused": 0}
    for case in range(CASES):
        system = _system(rng, pathlib.Path(fmu_dir))
        kw = _kwargs(rng)
        signal.alarm(60)
        try:
            if rng.random() < 0.5:
                cosim.simulate(system, **{k: v for k, v in kw.items() if k != "isolate" or v is not True})
            else:
                with cosim.Execution(system, **{k: v for k, v in kw.items() if k not in ("isolate",)}) as e:
                    for _ in range(rng.randint(1, 4)):
                        what = rng.randrange(5)
                        if what == 0:
                            e.step(rng.choice(STEPS))
                        elif what == 1:
                            e.run_until(rng.choice(TIMES))
                        elif what == 2:
                            e.value(rng.choice(ANY))
                        elif what == 3:
                            e.set(rng.choice(["m1.xi", "m1.x", "m2.k2", rng.choice(ANY)]), rng.choice(TIMES))
                        else:
                            e.recorded()
                    e.result()
            outcomes["ran"] += 1
        except EXPECTED:
            outcomes["refused"] += 1
        except BaseException as exc:  # noqa: BLE001 - the property: nothing else
            pytest.fail(f"case {case} (FUZZ_SEED={SEED}): {type(exc).__name__}: {exc}\nsystem={system!r} kwargs={kw!r}")
        finally:
            signal.alarm(0)
    print(f"python arguments: {outcomes}")
    assert CASES < 20 or (outcomes["ran"] > CASES // 20 and outcomes["refused"] > CASES // 20), outcomes
