"""``result.plot()``: a quick look at a result with matplotlib (``pip install matplotlib``), by the
rules of ``cosim plot``: a title, one panel per unit with the unit on its y axis, time (s) on x,
the legend beside the data (never over it), later curves thinner over earlier ones so that
coinciding curves stay visible."""

from __future__ import annotations


def plot_result(result, names=None, path=None, title=None):
    """Plots the fields ``names`` (default: every one but ``time``) of ``result`` against time and
    returns the matplotlib Figure; with ``path`` also saves it (PNG, SVG, … by extension).

    Panels are grouped by ``result.units``; a field without a unit goes to a panel "(no unit)".
    ``title`` defaults to the summary's status and step.
    """
    import matplotlib.pyplot as plt

    fields = [n for n in result.dtype.names if n != "time"] if names is None else list(names)
    units = getattr(result, "units", None) or {}
    if hasattr(result, "field"):
        fields = [result.field(n) for n in fields]  # the one naming rule: bare or qualified
    for n in fields:
        if n not in result.dtype.names:
            raise KeyError(f"no field {n!r} in the result (fields: {', '.join(result.dtype.names)})")
    groups: dict = {}
    for n in fields:
        groups.setdefault(units.get(n), []).append(n)
    fig, axes = plt.subplots(len(groups), 1, sharex=True, squeeze=False, figsize=(10, 1.2 + 2.6 * len(groups)),
                             layout="constrained")
    summary = getattr(result, "summary", None) or {}
    if title is None:
        parts = ["result"]
        if "step_size" in summary:
            parts.append(f"H = {summary['step_size']:g} s")
        if "status" in summary:
            parts.append(summary["status"])
        title = ", ".join(parts)
    fig.suptitle(title)
    for ax, (unit, group) in zip(axes[:, 0], groups.items()):
        k = len(group)
        for i, n in enumerate(group):
            ax.plot(result["time"], result[n], label=n, linewidth=1.5 + 2.0 * (k - 1 - i))
        what = group[0] if k == 1 else "value"
        ax.set_ylabel(f"{what} ({unit})" if unit else f"{what} (no unit)")
        ax.grid(True, alpha=0.3)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    axes[-1, 0].set_xlabel(f"time ({units.get('time', 's')})")
    if path is not None:
        fig.savefig(path)
    return fig
