"""Issue 41 §3: the main figure of a result is read at a glance: first the few chances that decide it (labels.toml
`decisive`), each bar the JSON's estimate with its 95 % interval written beside it; then the "at least N" curves a
report shows, each legend under its panel (never over a curve); a formation keeps its colour in every panel; and
`result.plot()` leaves no figure with pyplot, so a notebook cell shows it once, not twice."""
from __future__ import annotations

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest

from wargame_odds import analysis
from wargame_odds.analysis.output.labels import percent

matplotlib.use("Agg")


def _bar_patches(ax) -> dict:
    """{y tick label: bar} of the deciding-chances panel."""
    labels = {round(float(y), 6): t.get_text() for y, t in zip(ax.get_yticks(), ax.get_yticklabels())}
    return {labels[round(float(p.get_y() + p.get_height() / 2), 6)]: p for p in ax.patches}


def _bars(ax) -> dict[str, float]:
    """{y tick label: bar length} of the deciding-chances panel."""
    return {label: p.get_width() for label, p in _bar_patches(ax).items()}


@pytest.fixture(scope="module")
def assault():
    return analysis.epic.simulate(analysis.epic.load("epic/assault_marines_vs_warband"), trials=20_000, seed=3)


def test_the_deciding_chances_are_the_jsons(assault):
    """TP 1.12.7 (who wins), TP 1.14.1 (broken or destroyed after the end phase): each bar is the JSON's number."""
    data = assault.to_dict()
    fig = assault.plot()
    ax = fig.axes[0]
    bars = _bars(ax)
    unbroken = data["formations"]["Warband"]["unbroken_after_end_phase"]
    expected = {"Assault Detachment (attacker): wins the assault": data["sides"]["attacker_wins"]["p"],
                "Warband (defender): wins the assault": data["sides"]["defender_wins"]["p"],
                "Warband (defender): broken or destroyed after the end phase": 1 - unbroken["p"],
                "Warband (defender): destroyed": data["formations"]["Warband"]["destroyed"]["p"]}
    for label, p in expected.items():
        assert bars[label] == pytest.approx(100 * p)
    assert not any("Tactical" in label for label in bars)  # a supporting formation is not what decides it
    texts = [t.get_text() for t in ax.texts]
    node = data["sides"]["attacker_wins"]
    assert percent(node["p"], *node["ci95"]) in texts
    assert min(t.get_fontsize() for t in ax.get_yticklabels()) >= 10


def test_no_legend_sits_over_a_curve_and_colours_follow_the_formation(assault):
    fig = assault.plot()
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    colours = {}
    for ax in fig.axes[1:]:
        legend = ax.get_legend()
        assert legend is not None
        assert legend.get_window_extent(renderer).y1 <= ax.get_window_extent(renderer).y0  # under the axes
        for line in ax.lines:
            if line.get_drawstyle() == "steps-pre":
                colours.setdefault(line.get_label(), set()).add(matplotlib.colors.to_hex(line.get_color()))
    assert colours and all(len(c) == 1 for c in colours.values())
    bar_colours = {label.split(":")[0]: matplotlib.colors.to_hex(p.get_facecolor()[:3])
                   for label, p in _bar_patches(fig.axes[0]).items()}
    for name, colour in bar_colours.items():
        if name in colours:
            assert colours[name] == {colour}


def test_a_plot_is_shown_once_in_a_notebook(assault):
    before = set(plt.get_fignums())
    assault.plot()
    assault.plot(detail=True)
    assert set(plt.get_fignums()) == before  # nothing left for the inline backend to show a second time


@pytest.mark.parametrize("system, name", [("gdb", "gdb/column_vs_line"), ("t9a", "t9a/three_chargers")])
def test_every_system_leads_with_its_deciding_chances(system, name):
    module = getattr(analysis, system)
    result = module.simulate(module.load(name), trials=4096, seed=1)
    fig = result.plot()
    panel = next(ax for ax in fig.axes if ax.get_title(loc="left") == "What decides it")
    assert len(panel.patches) >= 3 and all(0 <= p.get_width() <= 100 for p in panel.patches)
    widths = sorted(p.get_width() for p in panel.patches)
    table = result.table()
    chances = sorted(100 * table[table["kind"] == "probability"]["estimate"].to_numpy())
    assert all(np.isclose(chances, w).any() for w in widths)


def test_every_decision_plot_is_shown_once_in_a_notebook():
    """Matrix, sweep, compare, rank and cumulative plots, and the T9A combat figure, leave no figure with pyplot."""
    before = set(plt.get_fignums())
    base = "epic/assault_marines_vs_warband"
    analysis.matrix(["netea:space-marine-codex-astartes/assault"], ["netea:ork-war-horde/warband"], base=base,
                    trials=4096, seed=1).plot()
    analysis.sweep(base, "formations[Warband].blast_markers", [0, 1], trials=4096).plot()
    analysis.rank(["netea:space-marine-codex-astartes/assault", "netea:space-marine-codex-astartes/tactical"],
                  ["netea:ork-war-horde/warband"], base=base, trials=4096).plot()
    combat = analysis.t9a.simulate(analysis.t9a.load("t9a/knights_charge_spear_block"), trials=4096, seed=1)
    combat.plot()
    analysis.cumulative(combat).plot("hp_lost_a", entity="given_contact")
    assert set(plt.get_fignums()) == before


def test_a_negative_saving_is_said_in_words():
    from wargame_odds.analysis.decisions.results import _saving_words

    assert _saving_words(-46_108) == "none: pairing did not help here (the options' results are unrelated)"
    assert _saving_words(1234.4) == "1,234"


def test_a_decisions_notebook_view_shows_bidi_and_control_characters_escaped():
    """Issue 40 §1: U+202E (and BEL) from a name reach no notebook view raw (Result's did; decisions' did not)."""
    name = "evil\u202ename\x07"
    force = {"name": name, "units": {"u": {"type": "INF", "armour": 5, "cc": 4}},
             "formations": [{"name": name, "initiative": 1, "units": [{"unit": "u", "count": 1, "engaged": "bc"}]}]}
    page = analysis.rank([force, "netea:space-marine-codex-astartes/tactical"], ["netea:ork-war-horde/warband"],
                         trials=4096)._repr_html_()
    assert "\u202e" not in page and "\x07" not in page and "evil" in page


def test_an_svg_plot_of_a_hostile_name_is_well_formed_xml(tmp_path):
    """`--plot FILE.svg` (and the app's SVG download): a control character of a name is written as its escape."""
    from xml.etree import ElementTree

    from click.testing import CliRunner

    from wargame_odds.analysis.cli import main

    name = "bell\x07 =HYPERLINK(1)"
    scenario = tmp_path / "s.toml"
    scenario.write_text('system = "epic"\n[units.u]\ntype = "INF"\narmour = 5\ncc = 4\n'
                        f'[[formations]]\nname = "{name}"\nside = "attacker"\ninitiative = 1\n'
                        'units = [{ unit = "u", count = 2, engaged = "bc" }]\n'
                        '[[formations]]\nname = "them"\nside = "defender"\ninitiative = 1\n'
                        'units = [{ unit = "u", count = 2, engaged = "bc" }]\n'.replace("\x07", "\\u0007"),
                        encoding="utf-8")
    out = CliRunner().invoke(main, ["epic", str(scenario), "--trials", "4096", "--plot", str(tmp_path / "p.svg")])
    assert out.exit_code == 0, out.output
    svg = (tmp_path / "p.svg").read_bytes()
    ElementTree.fromstring(svg)
    assert b"\x07" not in svg
