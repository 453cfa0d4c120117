"""FMUs loaded once per process (python/src/fmu_cache.rs): runs that reuse a loaded FMU give the
same numbers bit for bit as runs that load it afresh (COSIM_FMU_CACHE=0), in simulate and in a
sweep's worker processes; the cache is keyed by content, not path."""

import shutil

import pytest

import cosim
from cosim import _cosim
from conftest import FMU_DIR, SCENARIOS, require

FD = SCENARIOS / "oscillator-fd.toml"
X0 = [0.05, 0.1, 0.2]


def _run(x0, **kw):
    return cosim.simulate(FD, stop_time=1.0, start_values={"m1.x0": x0}, **kw)


def test_reused_fmus_give_the_same_results_bit_for_bit(monkeypatch, tmp_path):
    _cosim._fmu_cache_clear()
    monkeypatch.setenv("COSIM_FMU_CACHE", "0")
    fresh = [_run(x) for x in X0]
    assert _cosim._fmu_cache_len() == 0, "the opt-out keeps nothing loaded"
    monkeypatch.delenv("COSIM_FMU_CACHE")
    cached = [_run(x) for x in X0 + X0]
    assert _cosim._fmu_cache_len() == 2, "m1's and m2's FMUs, each loaded once"
    for a, b in zip(fresh + fresh, cached):
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes()
    # The same file at another path is the same FMU (keyed by content).
    copy = tmp_path / "copy-of-m1.fmu"
    shutil.copy(FMU_DIR / "oscillator-fd-m1.fmu", copy)
    again = _run(X0[0], fmus={"m1": str(copy)})
    assert _cosim._fmu_cache_len() == 2
    assert again.tobytes() == fresh[0].tobytes()
    # An Execution takes them from the cache too; clearing the cache while it runs unloads
    # nothing it uses.
    with cosim.Execution(FD, stop_time=1.0, start_values={"m1.x0": X0[1]}) as ex:
        assert _cosim._fmu_cache_len() == 2
        _cosim._fmu_cache_clear()
        ex.step(1000)
        assert ex.result().tobytes() == fresh[1].tobytes()
    assert _cosim._fmu_cache_len() == 0


def test_a_sweep_reusing_fmus_equals_one_loading_them_per_run(monkeypatch):
    pd = require("pandas")
    params = {"m1.x0": [0.01 * k for k in range(12)]}
    monkeypatch.setenv("COSIM_FMU_CACHE", "0")
    fresh = cosim.sweep(FD, params, stop_time=0.5, max_workers=2)
    monkeypatch.delenv("COSIM_FMU_CACHE")
    cached = cosim.sweep(FD, params, stop_time=0.5, max_workers=2)
    assert (cached["error"] == "").all()
    pd.testing.assert_frame_equal(cached, fresh, check_exact=True)


def test_a_file_rewritten_in_place_is_loaded_anew(tmp_path):
    """The key is remembered per file while the file is unchanged; any rewrite, even to the same
    size within a moment, gives it a new key (here: the zip comment changed, so the bytes)."""
    import zipfile

    _cosim._fmu_cache_clear()
    copy = tmp_path / "m1.fmu"
    shutil.copy(FMU_DIR / "oscillator-fd-m1.fmu", copy)
    first = _run(X0[0], fmus={"m1": str(copy)})
    assert _cosim._fmu_cache_len() == 2
    _run(X0[0], fmus={"m1": str(copy)})
    assert _cosim._fmu_cache_len() == 2, "unchanged: the loaded FMU is reused"
    for n, comment in enumerate([b"rewritten a", b"rewritten b"]):
        with zipfile.ZipFile(copy, "a") as z:
            z.comment = comment
        again = _run(X0[0], fmus={"m1": str(copy)})
        assert _cosim._fmu_cache_len() == 3 + n, f"rewrite {n + 1} (same size as before: {n == 1}) is a new FMU"
        assert again.tobytes() == first.tobytes()
    _cosim._fmu_cache_clear()
