"""Issue 28 §5: plots a player would share.  Each plot kind is rendered and read back from the figure objects (not
pixels): axes in the player's words, whole-number ticks for counts, titles inside the figure, every outcome in the
legend, labels and legends that do not overlap, markers inside the frame."""
from __future__ import annotations

import re

import matplotlib
import pytest

from wargame_odds import analysis
from wargame_odds.analysis.decisions import compare, rank

matplotlib.use("Agg")
BASE = "epic/assault_marines_vs_warband"
SNAKE = re.compile(r"\b[a-z]+_[a-z_]+\b|\w\[\w+\]")  # a key or a field path, not words


def _draw(fig):
    fig.canvas.draw()
    return fig.canvas.get_renderer()


def _text_inside_figure(fig, text) -> bool:
    box = text.get_window_extent(_draw(fig))
    frame = fig.bbox
    return not text.get_text() or (box.x0 >= frame.x0 - 1 and box.x1 <= frame.x1 + 1)


def _titles(fig) -> list:
    return [t for t in [fig._suptitle, *(ax.title for ax in fig.axes)] if t is not None and t.get_text()]


def _tick_values(ax, axis="x") -> list[str]:
    return [t.get_text() for t in (ax.get_xticklabels() if axis == "x" else ax.get_yticklabels()) if t.get_text()]


def _overlap(a, b) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def _check_common(fig, words_only=()):
    """Every title fits the figure; the given axes have an x label, and their labels are words, not keys or paths
    (a y axis of named rows, or one shared with the panel beside it, has none)."""
    assert all(_text_inside_figure(fig, t) for t in _titles(fig)), [t.get_text() for t in _titles(fig)]
    for ax in words_only:
        assert ax.get_xlabel()
        for label in (ax.get_xlabel(), ax.get_ylabel()):
            assert not SNAKE.search(label), label


def test_a_turn_sweep_names_every_outcome_and_counts_with_whole_ticks():
    """A sweep of the Warband's blast markers over a turn: the legend holds every side-level outcome, no assault
    included, named after the formations; the x axis says "Warband: blast markers" and ticks each swept count;
    the legend sits under the x label, clear of it."""
    sweep = analysis.sweep("epic/turns/devastators_then_assault_marines", "formations[Warband].blast_markers",
                           [0, 1, 2, 3], trials=4096, seed=1)
    fig = sweep.plot()
    (ax,) = fig.axes
    _check_common(fig, [ax])
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend[0] == "Assault Detachment (attacker) wins" and legend[1] == "Warband (defender) wins"
    assert any(t.startswith("no assault") for t in legend) and len(legend) == 6
    assert ax.get_xlabel() == "Warband: blast markers" and _tick_values(ax) == ["0", "1", "2", "3"]
    renderer = _draw(fig)
    assert not _overlap(ax.get_legend().get_window_extent(renderer), ax.xaxis.get_tightbbox(renderer))


def test_the_threshold_plot_rings_the_answer_in_the_players_words():
    result = analysis.threshold(BASE, "formations[Warband].blast_markers", range(0, 6), quantity="sides.defender_wins",
                                at_least=60, trials=4096, seed=1)
    fig = result.plot()
    (ax,) = fig.axes
    _check_common(fig, [ax])
    assert ax.get_xlabel() == "Warband: blast markers" and _tick_values(ax) == [str(v) for v in range(6)]
    assert "Warband (defender) wins" in ax.get_ylabel()
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "target: at least 60 %" in legend and any(t.startswith("answer: 0 (largest") for t in legend)
    assert ax.yaxis.get_major_formatter().format_pct(50, 100) == "50%"


def test_rank_labels_never_overlap_and_the_options_share_their_curves():
    result = rank(["netea:space-marine-codex-astartes/assault", "netea:space-marine-codex-astartes/tactical",
                   "netea:space-marine-codex-astartes/terminator"],
                  [("netea:ork-war-horde/warband", 2), ("netea:ork-war-horde/kommando-warhorde", 1)], base=BASE,
                  trials=4096, seed=5)
    fig = result.plot()
    score, per_points, *curves = fig.axes
    _check_common(fig, [score, per_points, *curves])
    renderer = _draw(fig)
    labels = [ax.xaxis.label.get_window_extent(renderer) for ax in (score, per_points)]
    assert not _overlap(*labels)
    assert [ax.get_title().split(" against ")[1].split(":")[0] for ax in curves] == ["Warband", "Kommando Warhorde"]
    legend = {t.get_text() for t in fig.legends[0].get_texts()}
    assert legend == {f"{o}: units {w}" for o in ("Terminator", "Tactical", "Assault") for w in ("killed", "lost")}
    for ax in curves:
        assert ax.get_xlabel() == "units lost"
        assert all(float(v.replace("−", "-")).is_integer() for v in _tick_values(ax))
        assert not _overlap(fig.legends[0].get_window_extent(renderer), ax.xaxis.get_tightbbox(renderer))


def test_compare_with_one_opponent_keeps_its_markers_inside_the_frame():
    result = compare("netea:space-marine-codex-astartes/assault", "netea:space-marine-codex-astartes/tactical",
                     ["netea:ork-war-horde/warband"], base=BASE, trials=4096, seed=2)
    fig = result.plot()
    left, right, curves = fig.axes
    _check_common(fig, [left, right, curves])
    for ax in (left, right):
        (y0, y1), (x0, x1) = ax.get_ylim(), ax.get_xlim()
        for container in ax.containers:
            for x, y in container.lines[0].get_xydata():
                assert y0 < y < y1 and x0 < x < x1
    assert {t.get_text() for t in fig.legends[0].get_texts()} == {
        f"{o}: units {w}" for o in ("Assault", "Tactical") for w in ("killed", "lost")}


def test_the_matrix_and_a_single_result_plot_in_percent_with_fitting_titles():
    matrix = analysis.matrix(["netea:space-marine-codex-astartes/assault"], ["netea:ork-war-horde/warband"],
                             base=BASE, trials=4096, seed=1)
    fig = matrix.plot()
    _check_common(fig, [fig.axes[0]])
    assert fig.axes[1].get_ylabel().endswith("(%)") and fig.axes[1].get_ylim()[1] == pytest.approx(100)
    single = analysis.gdb.simulate(analysis.gdb.load("gdb/column_vs_line"), trials=4096, seed=1).plot()
    _check_common(single)
    for ax in single.axes[1:]:
        assert all(float(v.replace("−", "-")).is_integer() for v in _tick_values(ax))


def test_the_report_sweep_legend_is_clear_of_the_labels():
    from wargame_odds.analysis.reports.build import sweep_plot

    sweep = analysis.sweep("t9a/single_charge_9in", "chargers[Swordsmen].distance", [7.0, 9.0, 11.0], trials=4096)
    fig = sweep_plot(sweep.table(), ["value"], "A sweep", "t9a", {})
    renderer = _draw(fig)
    for ax in fig.axes:
        legend = ax.get_legend().get_window_extent(renderer)
        assert not _overlap(legend, ax.xaxis.get_tightbbox(renderer))
    _check_common(fig)
