"""The figure of one simulated scenario, shared by ``Result.plot()`` and the reports.

Top: every probability in percent with its 95 % error bar, under readable labels.  Below: one
panel per counted quantity (casualties, blast markers, rounds …) with an "at least N" curve for
every formation or unit that has it, each point with its 95 % error bar.  Curves are drawn as
the true step functions: P(X ≥ x) is constant on (N − 1, N] (matplotlib ``steps-pre`` at the whole
numbers), so reading a curve at any x gives the exact at-least probability of the data.
"""
from __future__ import annotations

import functools
import io
import math
import textwrap
import warnings
from pathlib import Path

import numpy as np

from .labels import axis_label, decisive_rows, group_label, readable_rows, report_at_least
from ..intake.user_text import printable

PANELS_PER_ROW = 3


def literal_text(figure_function):
    """Build a figure with matplotlib's math markup off (``text.parse_math``), so user text (titles, names,
    swept values) holding ``$…$`` is drawn as written, never parsed; every text of the figure, tick labels
    drawn later included, keeps the setting it was made with.  Every function that draws a figure wears it."""
    @functools.wraps(figure_function)
    def drawn_literally(*args, **kwargs):
        import matplotlib

        with matplotlib.rc_context({"text.parse_math": False}):
            return figure_function(*args, **kwargs)

    return drawn_literally


def save_figure(figure, target, **savefig) -> None:
    """``figure.savefig(target, **savefig)``; a character of user text that the fonts lack (a control
    character) is drawn as a blank box without a warning line on stderr, and an SVG writes control and bidi
    characters as their escapes (``\x07``, ``\u202e``, :func:`wargame_odds.analysis.intake.user_text.printable`), so
    that the file stays well-formed XML and no name reorders the text around it."""
    kind = savefig.get("format") or (Path(target).suffix.lstrip(".").lower() if isinstance(target, (str, Path))
                                     else "")
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Glyph .* missing from font", category=UserWarning)
        if kind != "svg":
            figure.savefig(target, **savefig)
            return
        drawn = io.BytesIO()
        figure.savefig(drawn, **{**savefig, "format": "svg"})
    text = printable(drawn.getvalue().decode("utf-8"))  # the file's own text is ASCII, line breaks and tabs
    if isinstance(target, (str, Path)):
        Path(target).write_text(text, encoding="utf-8")
    else:
        target.write(text.encode("utf-8"))


def detached_figure(**kwargs):
    """A figure pyplot does not hold, drawn on an Agg canvas: returned by a ``plot()`` method, a notebook cell
    shows it once, as the cell's value, instead of twice (once more for a figure pyplot still has open).  It is
    made by pyplot and closed at once, so that the backend is loaded (a notebook registers its figure display
    then); save it with ``savefig``."""
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = plt.figure(**kwargs)
    plt.close(fig)
    FigureCanvasAgg(fig)  # closing left the figure a bare canvas: draw it on Agg
    return fig


def at_least_curve(values, p):
    """Vertices of the ``steps-pre`` curve of P(X ≥ x) from P(X ≥ values[i]) = p[i] at whole,
    ascending ``values``: p[0] on (values[0] − 1, values[0]], 0 after the last value."""
    values = np.asarray(values, dtype=float)
    x = np.concatenate([[values[0] - 1], values, [values[-1] + 1]])
    p = np.asarray(p, dtype=float)
    return x, np.concatenate([[p[0]], p, [0.0]])


def _distribution_panels(system: str, at_least):
    """(axis label, [(section, entity, rows)]) of every whole-number distribution with more than
    one value, from its "at least N" rows."""
    panels: dict[str, list] = {}
    for (section, entity, quantity), rows in at_least.groupby(["section", "entity", "quantity"], sort=False):
        values, p = rows["value"].to_numpy(dtype=float), rows["p"].to_numpy(dtype=float)
        if np.unique(p[p > 0]).size < 2 or not np.all(values == np.round(values)):
            continue
        panels.setdefault(axis_label(system, quantity, entity), []).append((section, entity, rows))
    return list(panels.items())


@literal_text
def outcome_figure(system: str, table, at_least, title: str, notes=(), sides: dict | None = None, lead=None,
                   engaged: dict | None = None, detail: bool = False):
    """The figure of one scenario: first the few chances that decide it (``decisive`` in labels.toml), large, each
    with its 95 % interval and its number written beside it; below, the "at least N" curves a report shows
    (casualties, blast markers …), each legend under its panel, clear of the curves.  ``detail``: every
    probability (a dot and its interval each) and every distribution's curves instead.

    ``table`` is a result's ``table()``, ``at_least`` its "at least N" rows (``section, entity, quantity, value,
    p, ci95_lo, ci95_hi``; :meth:`wargame_odds.analysis.output.result.Result.at_least_frame`); ``sides`` every Epic
    formation's side, ``engaged`` those in the fight (:func:`wargame_odds.analysis.output.labels.sides_of`);
    ``lead(ax)``, if given, draws a full-width panel above them (the T9A charge-range curves)."""
    rows = [] if detail else decisive_rows(system, table, sides, engaged)
    detail = detail or not rows  # a system without deciding chances (labels.toml) shows them all
    if detail:
        rows = [r for r in readable_rows(system, table, sides) if r["kind"] == "probability"]
        panels = _distribution_panels(system, at_least)
        top = max(2.6, 0.24 * len(rows) + 1.2)
    else:
        shown = set(report_at_least(system))
        panels = _distribution_panels(system, at_least[[f"{s}.{q}" in shown for s, q in
                                                        zip(at_least["section"], at_least["quantity"])]])
        top = max(2.2, 0.42 * len(rows) + 1.0)
    n_rows = math.ceil(len(panels) / PANELS_PER_ROW)
    heights = ([4.2] if lead else []) + ([top] if rows or not (lead or n_rows) else []) + \
        ([3.9 * n_rows] if n_rows else [])
    fig = detached_figure(figsize=(13, sum(heights) + 0.8), layout="constrained")
    parts = list(np.atleast_1d(fig.subfigures(len(heights), 1, height_ratios=heights)))  # each aligns its own axes
    if lead:
        lead(parts.pop(0).add_subplot())
    colours = {group_label(system, "formations", name, sides): f"C{i % 10}" for i, name in enumerate(sides or {})}
    if rows:
        (_all_chances if detail else _decisive_chances)(parts.pop(0).add_subplot(), rows, colours)
    grid = parts[0].add_gridspec(n_rows, PANELS_PER_ROW) if n_rows else None
    for k, (axis, curves) in enumerate(panels):
        _at_least_panel(parts[0].add_subplot(grid[k // PANELS_PER_ROW, k % PANELS_PER_ROW]), system, axis, curves,
                        sides, colours)
    width = int(fig.get_figwidth() * 9)
    fig.suptitle("\n".join([textwrap.fill(title, width)] + [textwrap.fill(f"note: {n}", int(width * 1.25))
                                                             for n in notes]), fontsize=11)
    return fig


def _decisive_chances(ax, rows: list[dict], colours: dict) -> None:
    """The deciding chances as bars in percent, the 95 % interval as a whisker, "58.0 % [57.9, 58.1]" beside
    each, the labels at a size a player reads; a formation's colour is the same in every panel."""
    from matplotlib.ticker import PercentFormatter

    y = np.arange(len(rows))[::-1]
    est = np.array([r["estimate"] for r in rows]) * 100
    lo = np.array([r["ci95_lo"] for r in rows]) * 100
    hi = np.array([r["ci95_hi"] for r in rows]) * 100
    groups = list(dict.fromkeys(r["group"] for r in rows))
    ax.barh(y, est, color=[colours.get(r["group"], f"C{groups.index(r['group']) % 10}") for r in rows], alpha=0.75,
            height=0.6)
    ax.errorbar(est, y, xerr=np.clip([est - lo, hi - est], 0, None), fmt="none", ecolor="black", capsize=4)
    for yi, h, r in zip(y, hi, rows):
        ax.text(min(h, 100) + 1, yi, r["text"], va="center", fontsize=10)
    ax.set_yticks(y, [f"{r['group']}: {r['quantity']}" for r in rows], fontsize=10)
    ax.set_xlim(0, 125)
    ax.set_xticks(range(0, 101, 20))
    ax.xaxis.set_major_formatter(PercentFormatter())
    ax.set_xlabel("chance (bar: estimate; black whisker: 95 % interval)", fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    ax.set_title("What decides it", fontsize=11, loc="left")


def _all_chances(ax, rows: list[dict], colours: dict) -> None:
    """Every probability: a dot and its 95 % interval per row, coloured by group."""
    from matplotlib.ticker import PercentFormatter

    y = np.arange(len(rows))[::-1]
    groups = list(dict.fromkeys(r["group"] for r in rows))
    for i, group in enumerate(groups):
        mine = [j for j, r in enumerate(rows) if r["group"] == group]
        est = np.array([rows[j]["estimate"] for j in mine]) * 100
        lo = np.array([rows[j]["ci95_lo"] for j in mine]) * 100
        hi = np.array([rows[j]["ci95_hi"] for j in mine]) * 100
        ax.errorbar(est, y[mine], xerr=np.clip([est - lo, hi - est], 0, None), fmt="o", capsize=3,
                    color=colours.get(group, f"C{i % 10}"), label=group)
    ax.set_yticks(y, [f"{r['group']}: {r['quantity']}" for r in rows], fontsize=7)
    ax.set_xlim(-2, 102)
    ax.xaxis.set_major_formatter(PercentFormatter())
    ax.set_xlabel("probability (dot: estimate; bar: 95 % interval, hidden by the dot when narrower)")
    ax.grid(axis="x", alpha=0.3)


def _at_least_panel(ax, system: str, axis: str, curves, sides, colours: dict) -> None:
    """One "at least N" panel: a step curve per formation or unit, 95 % error bars, the legend under the axes."""
    from matplotlib.ticker import MaxNLocator, PercentFormatter

    for i, (section, entity, rows_q) in enumerate(curves):
        values, p, lo, hi = (rows_q[c].to_numpy(dtype=float) for c in ("value", "p", "ci95_lo", "ci95_hi"))
        label = group_label(system, section, entity, sides)
        colour = colours.get(label, f"C{i % 10}")
        x, yv = at_least_curve(values, p)
        ax.plot(x, yv * 100, drawstyle="steps-pre", color=colour, label=label)
        ax.errorbar(values, p * 100, yerr=np.clip([p - lo, hi - p], 0, None) * 100, fmt="none",
                    capsize=2, color=colour, alpha=0.7)
    ax.set_xlim(left=min(rows_q["value"].min() for _, _, rows_q in curves) - 0.5)
    ax.set_xlabel(axis)
    ax.set_ylabel("chance of at least this many")
    ax.yaxis.set_major_formatter(PercentFormatter())
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylim(-2, 102)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=1, frameon=False)
    ax.set_title(textwrap.fill(f'"at least N": {axis}', 45), fontsize=9)


# -- helpers shared by the decision plots (wargame_odds.analysis.decisions.results)
# -----------------------------------------------
def wrap_for(fig, text: str, fontsize: float = 10, share: float = 1.0) -> str:
    """``text`` wrapped to the width of ``fig`` (``share`` of it) at ``fontsize``, so that a title fits."""
    chars = max(20, int(fig.get_figwidth() * share * 72 / (0.55 * fontsize)))
    return "\n".join(textwrap.fill(part, chars) for part in str(text).split("\n"))


def value_ticks(ax, values, axis: str = "x") -> np.ndarray:
    """Positions for ``values`` on ``axis``: the values themselves when they are numbers (a tick at each when there
    are few, else whole-number ticks for whole numbers), else 0, 1, 2 … labelled with the values."""
    from matplotlib.ticker import MaxNLocator

    target = ax.xaxis if axis == "x" else ax.yaxis
    numeric = all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) for v in values)
    if not numeric:
        positions = np.arange(len(values))
        (ax.set_xticks if axis == "x" else ax.set_yticks)(positions, [str(v) for v in values])
        return positions
    positions = np.asarray(values, dtype=float)
    whole = all(float(v).is_integer() for v in values)
    if len(values) <= 12:
        (ax.set_xticks if axis == "x" else ax.set_yticks)(positions, [f"{v:g}" for v in positions])
    else:
        target.set_major_locator(MaxNLocator(integer=whole))
    return positions


def legend_below(ax, fontsize: float = 7, ncol: int = 2):
    """A legend under ``ax``, clear of its tick labels and x label: placed from where those are drawn, in points,
    so a later ``tight_layout`` keeps it clear."""
    fig = ax.figure
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    below = ax.get_window_extent(renderer).y0 - ax.xaxis.get_tightbbox(renderer).y0  # pixels under the axes
    pad = (below * 72 / fig.dpi + 4) / fontsize  # in the legend's font sizes
    return ax.legend(fontsize=fontsize, loc="upper center", bbox_to_anchor=(0.5, 0), ncol=ncol, frameon=False,
                     borderaxespad=pad)


def casualty_curves(ax, curves, title: str):
    """"At least N" step curves of units lost on one axes, for several options: ``curves`` holds
    (label, distribution, colour, dashed) tuples (a :class:`~wargame_odds.analysis.output.estimates.Distribution` each);
    the legend is the figure's (:func:`curves_legend`), shared by the panels."""
    from matplotlib.ticker import MaxNLocator, PercentFormatter

    for label, dist, colour, dashed in curves:
        values, p, lo, hi = dist.at_least()
        x, y = at_least_curve(values, p)
        ax.plot(x, y * 100, drawstyle="steps-pre", color=colour, ls="--" if dashed else "-", label=label)
        ax.errorbar(values, p * 100, yerr=np.clip([p - lo, hi - p], 0, None) * 100, fmt="none", capsize=2,
                    color=colour, alpha=0.6)
    ax.set_xlabel("units lost")
    ax.set_ylabel("chance of at least N")
    ax.yaxis.set_major_formatter(PercentFormatter())
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylim(-2, 102)
    ax.set_xlim(left=min(d.values[0] for _, d, _, _ in curves) - 0.5)
    ax.grid(alpha=0.3)
    ax.set_title(wrap_for(ax.figure, title, 9, share=0.3), fontsize=9)


def curves_legend(fig, ax, columns: int = 4) -> float:
    """One legend for the "at least N" panels, under the figure; returns the share of the figure's height it takes
    (for ``tight_layout(rect=...)``)."""
    handles, labels = ax.get_legend_handles_labels()
    columns = min(columns, len(labels))
    fig.legend(handles, labels, loc="lower center", ncol=columns, fontsize=8, frameon=False)
    return (0.3 + 0.22 * math.ceil(len(labels) / columns)) / fig.get_figheight()
