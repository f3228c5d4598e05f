"""Issue 12 §3: every plotted curve, read back from matplotlib's line data between the grid points,
gives the exact (or simulated) probability at that point, in percent."""
from __future__ import annotations

from pathlib import Path

import matplotlib
import numpy as np
import pytest
from matplotlib.cbook import STEP_LOOKUP_MAP

from wargame_odds.analysis import epic, gdb, t9a
from wargame_odds.analysis.decisions import compare, cumulative, rank
from wargame_odds.analysis.output.estimates import Distribution
from wargame_odds.analysis.output.labels import axis_label, group_label, sides_of
from wargame_odds.analysis.t9a.charge.exact import p_reach
from wargame_odds.analysis.t9a.charge.model import DICE, to_milli

matplotlib.use("Agg")
SCENARIOS = Path(__file__).resolve().parents[1] / "analysis" / "scenarios"


def read_curve(line, x: float) -> float:
    """The height of a drawn line at ``x`` (not a vertex abscissa): the path matplotlib draws,
    steps included, interpolated."""
    xs, ys = line.get_xdata(), line.get_ydata()
    style = line.get_drawstyle()
    if style != "default":
        xs, ys = STEP_LOOKUP_MAP[style](xs, ys)
    xs, ys = np.asarray(xs, float), np.asarray(ys, float)
    assert xs.min() < x < xs.max() and not np.isclose(xs, x).any(), (x, xs)
    return float(np.interp(x, xs, ys))


def test_t9a_charge_range_curve_steps_at_whole_inches():
    """charges.md §5.1: the charge succeeds when Advance Rate + roll (whole inches) ≥ distance, so
    at 13.2" an Advance Rate 8 swiftstride charger reaches with P(roll ≥ 5.2) = 89.35 %, not the
    94.9 % of 13"; read back at quarter and tenth inches between every step."""
    result = t9a.simulate(t9a.load(SCENARIOS / "t9a" / "swiftstride_cavalry.toml"), trials=4096, seed=0)
    figure = result.plot()
    (line,) = [ln for ln in figure.axes[0].lines if "(exact)" in ln.get_label()]
    assert read_curve(line, 13.2) == pytest.approx(89.35, abs=0.005)
    rule = DICE["swiftstride"]
    for distance in np.arange(0.3, 8 + rule.max_total + 1, 0.45):
        if abs(distance - round(distance)) < 1e-6:
            continue
        exact = p_reach(rule, to_milli(distance) - to_milli(8))
        assert read_curve(line, distance) == pytest.approx(float(exact * 100), abs=1e-9), distance


def _at_least_lines(figure) -> dict:
    """{(x-axis label, line label): line} of the "at least N" panels."""
    return {(ax.get_xlabel(), ln.get_label()): ln for ax in figure.axes[1:] for ln in ax.lines
            if ln.get_drawstyle() == "steps-pre"}


@pytest.mark.parametrize("system,scenario,engine", [
    ("epic", "assault_marines_vs_warband", "reference"),
    ("gdb", "column_vs_line", "kernel"),
    ("t9a", "three_chargers", "kernel"),
])
def test_at_least_curves_read_back_the_cumulative_tables(system, scenario, engine):
    """TP 1.14.1 / charges.md §2.2 / §3.2 (casualties, blast markers, losses, charge rolls): every formation's every
    "at least N" curve holds P(X ≥ N) on (N − 1, N] and 0 past the largest value seen; read at
    N − 0.5 and N − 0.2 it equals ``result.cumulative(...)``."""
    module = {"epic": epic, "gdb": gdb, "t9a": t9a}[system]
    result = module.simulate(module.load(SCENARIOS / system / f"{scenario}.toml"), trials=2000, seed=1, engine=engine)
    lines = _at_least_lines(result.plot(detail=True))
    sides = sides_of(result.to_dict())
    checked = []
    for path, leaf in result.leaves():
        if not isinstance(leaf, Distribution) or np.count_nonzero(leaf.counts) < 2 or \
                not np.array_equal(leaf.values, np.round(leaf.values)):  # 0.5" bins have no whole-number steps
            continue
        section, entity, quantity = path[0], "/".join(path[1:-1]), path[-1]
        line = lines[axis_label(system, quantity, entity), group_label(system, section, entity, sides)]
        table = result.cumulative(*path)
        for value, p in zip(table.value, table.p):
            assert read_curve(line, value - 0.5) == pytest.approx(p * 100), (path, value)
            assert read_curve(line, value - 0.2) == pytest.approx(p * 100), (path, value)
        assert read_curve(line, table.value.iloc[-1] + 0.5) == 0.0
        checked.append(path)
    assert len(lines) == len(checked)
    if system == "epic":
        assert {p[1] for p in checked if p[0] == "formations"} == set(result["formations"])
        assert {"casualties", "blast_markers_after_assault"} <= {p[-1] for p in checked}


def test_cumulative_plot_steps_at_whole_numbers():
    """The decisions' cumulative plot: P(X ≥ x) holds P(X ≥ N) on (N − 1, N] and P(X ≤ x) holds
    P(X ≤ N) on [N, N + 1) — read at N − 0.3 and N + 0.3 (charges.md §2.2 charger casualties)."""
    result = gdb.simulate(gdb.load(SCENARIOS / "gdb" / "column_vs_line.toml"), trials=4000, seed=2)
    cum = cumulative(result)
    for direction, offset in (("at_least", -0.3), ("at_most", 0.3)):
        figure = cum.plot("distribution", entity="charger", direction=direction)
        (line,) = figure.axes[0].lines
        table = result.cumulative("casualties", "charger", "distribution", kind=direction)
        inner = table.iloc[1:] if direction == "at_least" else table.iloc[:-1]
        for v, p in zip(inner.value, inner.p):
            assert read_curve(line, v + offset) == pytest.approx(p * 100), (direction, v)


def test_probability_panel_shows_percent_with_intervals():
    """Every plotted probability is in percent, with its 95 % interval as an error bar."""
    result = gdb.simulate(gdb.load(SCENARIOS / "gdb" / "column_vs_line.toml"), trials=4000, seed=2)
    ax = result.plot(detail=True).axes[0]
    assert "probability" in ax.get_xlabel() and ax.get_xlim()[1] > 100
    contact = result["summary", "contact"]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    y = ax.get_yticks()[labels.index("Summary: contact (charge goes in)")]
    points = np.concatenate([ln.get_xydata() for ln in ax.lines if ln.get_marker() == "o"])
    (x,) = points[points[:, 1] == y][:, 0]
    assert x == pytest.approx(contact.p * 100)


def _errorbars(ax) -> dict:
    """{(legend label, y): (x, lo, hi)} of every ``errorbar`` point on ``ax``: the marker read from
    its line, the interval from its horizontal bar."""
    out = {}
    for container in ax.containers:
        line, _, (bars,) = container.lines
        for (x, y), segment in zip(line.get_xydata(), bars.get_segments()):
            assert segment[0][1] == segment[1][1] == y
            out[container.get_label(), round(float(y), 6)] = (float(x), float(segment[0][0]), float(segment[1][0]))
    return out


def test_compare_plot_reads_back_both_chances_and_the_difference_in_percent():
    """TP 1.12.7 (who wins) for two options against a weighted meta: the left panel shows each option's
    chance to win in percent with its 95 % interval, the right one the difference in percentage
    points with its paired and independent-runs intervals — each read back equal to the table."""
    result = compare("netea:space-marine-codex-astartes/assault", "netea:space-marine-codex-astartes/tactical",
                     ["netea:ork-war-horde/warband", "netea:ork-war-horde/kommando-warhorde"],
                     base=str(SCENARIOS / "epic" / "assault_marines_vs_warband.toml"), trials=600, seed=4,
                     engine="reference", method="exact-pairs")
    left, right = result.plot().axes[:2]
    t = result.table()
    y = np.arange(len(t))[::-1]
    a, b = result.meta["option_a"], result.meta["option_b"]
    wins, differences = _errorbars(left), _errorbars(right)
    for row, yi in zip(t.itertuples(index=False), y):
        for name, shift, col in ((a, 0.12, "p_a"), (b, -0.12, "p_b")):
            got = wins[f"{name} wins", round(yi + shift, 6)]
            assert got == pytest.approx([100 * getattr(row, c) for c in (col, f"{col}_lo", f"{col}_hi")])
        got = differences["paired 95 % interval", round(yi + 0.12, 6)]
        assert got == pytest.approx([100 * row.difference, 100 * row.ci95_lo, 100 * row.ci95_hi])
        got = differences["independent runs, same trials", round(yi - 0.12, 6)]
        independent = [row.difference, row.independent_ci95_lo, row.independent_ci95_hi]
        assert got == pytest.approx([100 * v for v in independent])
    assert "percentage points" in right.get_xlabel() and "95 % interval" in left.get_xlabel()
    assert left.xaxis.get_major_formatter().format_pct(50, 100) == "50%"


def test_rank_plot_reads_back_scores_in_percent():
    """TP 1.12.7 against a weighted meta: each option's score and chance to win per 100 points are
    plotted in percent with their 95 % intervals, equal to the table."""
    result = rank(["netea:space-marine-codex-astartes/assault", "netea:space-marine-codex-astartes/tactical"],
                  [("netea:ork-war-horde/warband", 2), ("netea:ork-war-horde/kommando-warhorde", 1)],
                  base=str(SCENARIOS / "epic" / "assault_marines_vs_warband.toml"), trials=500, seed=5,
                  engine="reference")
    score, per_points = result.plot().axes[:2]
    t = result.table()
    y = np.arange(len(t))[::-1]
    for ax, cols in ((score, ("score", "ci95_lo", "ci95_hi")),
                     (per_points, ("per_100_points", "per_100_points_lo", "per_100_points_hi"))):
        (bars,) = {label for label, _ in _errorbars(ax)}
        shown = _errorbars(ax)
        for row, yi in zip(t.itertuples(index=False), y):
            assert shown[bars, round(float(yi), 6)] == pytest.approx([100 * getattr(row, c) for c in cols])
        assert "95 % interval" in " ".join(ax.get_xlabel().split())
    assert score.get_xlim() == (-2, 102) and "chance to win" in " ".join(score.get_xlabel().split())
