"""``compare`` of forces with turn plans, as ``rank`` and ``matrix`` take them (docs/decisions.md, "Turn plans"): each
option plays its plan against each opponent (its job by default: a shooting formation takes a Sustained Fire, TP
1.6.1); where a plan has no assault, both options are compared on the opponent broken or destroyed after the end
phase (TP 1.14), and the figure shows the "at least N" curves of what both have (the enemy's casualties and blast
markers) instead of the assault's."""
import json
import math
from importlib.resources import files
from pathlib import Path

import matplotlib
import pytest

import wargame_odds.analysis.epic as epic
from wargame_odds.analysis.decisions import compare
from wargame_odds.analysis.decisions.systems import SYSTEMS
from wargame_odds.analysis.epic.decisions_plans import Plan
from wargame_odds.analysis.intake.errors import UserError

from decisions_cli import one_error_line, run

matplotlib.use("Agg")
SCENARIOS = Path(str(files("wargame_odds.analysis").joinpath("scenarios")))
BASE = SCENARIOS / "epic" / "assault_marines_vs_warband.toml"
MARINES = "netea:space-marine-codex-astartes/"
DEVASTATORS, ASSAULT, TACTICAL = MARINES + "devastator", MARINES + "assault", MARINES + "tactical"
WARBAND, KOMMANDOS = "netea:ork-war-horde/warband", "netea:ork-war-horde/kommando-warhorde"
BROKEN = ("destroyed", "broken_after_end_phase")  # disjoint counts of a trial (TP 1.14: a broken unit may rally)
EPIC = SYSTEMS["epic"]


def _broken(result, enemy: str = "Warband"):
    return sum(result["formations", enemy, key].k for key in BROKEN)


def test_a_shooting_option_is_compared_by_its_job_on_the_enemy_broken_or_destroyed():
    """Devastators (their job: Sustained Fire) against Assault Marines (an assault): no assault to win for the
    first, so both are compared on the Warband broken or destroyed after the end phase, as counted in each option's
    own result; Option A's score agrees with an independent run of the same turn (5 sigma); the headline names
    each plan first."""
    result = compare(DEVASTATORS, ASSAULT, [WARBAND], base=BASE, trials=4096, seed=3)
    row = result.frame.iloc[0]
    assert result.meta["plans"] == {"Devastator": "Sustained Fire", "Assault": "assault"}
    assert result.meta["outcome"] == "breaks or destroys the enemy"
    assert result.meta["enemies"] == [["Warband", "Warband"]]
    for option, column in (("Devastator", "p_a"), ("Assault", "p_b")):
        assert row[column] == _broken(result.option_results[(option, 0)]) / result.trials
    turn = EPIC.matchup(EPIC.with_plan(EPIC.force(DEVASTATORS, "attacker"), Plan()), EPIC.force(WARBAND, "defender"),
                        epic.load(BASE))
    alone = epic.simulate(turn, trials=40_000, seed=11, progress=False)
    p = _broken(alone) / 40_000
    sigma = math.sqrt(row.p_a * (1 - row.p_a) / result.trials + p * (1 - p) / 40_000)
    assert 0 < p < 1 and abs(row.p_a - p) < 5 * sigma
    lines = result.headline()
    assert lines[0] == ("Options are scored by their plan (Devastator: Sustained Fire; Assault: assault), on the "
                        "chance that the enemy formation is broken or destroyed after the end phase (a plan without an "
                        "assault has none to win).")
    assert lines[1].startswith("Against Warband: Devastator breaks or destroys the enemy ")
    assert any(note.startswith("a plan without an assault has no assault to win") for note in result.notes)
    assert "enemy blast markers" in str(result) and "chance it breaks or destroys the enemy per 100 points" in str(
        result)


def test_one_formation_with_two_plans_is_told_apart_by_its_plans():
    """The question a player asks of one formation: shoot (Advance) or charge?  Both options are the Devastators,
    named by their plans; on the same dice against the same Warband."""
    result = compare(DEVASTATORS, DEVASTATORS, [WARBAND], base=BASE, trials=4096, seed=1,
                     plans=[{"plan": "shoot", "action": "advance"}, "assault"])
    assert (result.meta["option_a"], result.meta["option_b"]) == ("Devastator (Advance)", "Devastator (assault)")
    assert result.meta["plans"] == {"Devastator (Advance)": "Advance", "Devastator (assault)": "assault"}
    assert result.headline()[0].startswith("Options are scored by their plan (Devastator: Advance; Devastator: "
                                           "assault), on the chance that the enemy formation is broken or destroyed")
    row = result.frame.iloc[0]
    assert row.ci95_lo <= row.difference <= row.ci95_hi


def test_assault_jobs_compare_the_chance_to_win_with_the_same_numbers_as_before():
    """Two assault formations: their job is the assault, so the comparison is the chance to win it, with the very
    numbers of ``plans="assault"``, and no plan line (nothing differs from a plain comparison of assaults)."""
    by_job = compare(ASSAULT, TACTICAL, [WARBAND], base=BASE, trials=4096, seed=2)
    asked = compare(ASSAULT, TACTICAL, [WARBAND], base=BASE, trials=4096, seed=2, plans="assault")
    assert by_job.meta["outcome"] == "wins" and by_job.meta["quantity"] == "sides/attacker_wins"
    assert by_job.meta["plan_sentence"] is None and by_job.headline()[0].startswith("Against Warband: Assault wins")
    assert by_job.table().equals(asked.table())
    assert asked.headline()[0].endswith("on the chance to win the assault.")


def test_shoot_then_assault_joins_the_formation_named_by_then():
    """A formation acts once a turn (TP 1.6): the Devastators shoot, then the Assault Marines ``then`` names engage;
    both options fight an assault, so the chance to win it is compared."""
    result = compare(DEVASTATORS, ASSAULT, [WARBAND], base=BASE, trials=4096, seed=4,
                     plans=[{"plan": "shoot_then_assault", "then": ASSAULT}, "job"])
    assert result.meta["option_a"] == "Devastator + Assault"
    assert result.meta["plans"]["Devastator + Assault"] == "Sustained Fire, then assault"
    assert result.meta["outcome"] == "wins" and result.meta["enemies"] is None  # both plans fight an assault


@pytest.mark.parametrize("kwargs, needles", [
    ({"plans": "charge"}, ["option_a.plan", "unknown plan 'charge'", "job, assault, shoot, shoot_then_assault"]),
    ({"plans": ["job", {"plan": "shoot", "action": "march"}]}, ["option_b.plan", "'action'", "advance"]),
    ({"plans": ["job", "shoot"], "option_b": ASSAULT}, ["'Assault' has no ranged weapon", 'plan = "assault"']),
    ({"plans": "shoot_then_assault"}, ["option_a.then", "acts once a turn (TP 1.6)"]),
    ({"plans": {"plan": "shoot", "then": ASSAULT}}, ["option_a.then", "shoot_then_assault"]),
    ({"plans": ["job", "job", "job"]}, ["field 'plans'", "3 plans for 2 options"]),
    ({"plans": "shoot", "side": "defender"}, ["field 'plans'", "play the attacker"]),
])
def test_a_bad_plan_is_one_error_naming_its_option(kwargs, needles):
    arguments = {"option_a": DEVASTATORS, "option_b": DEVASTATORS} | kwargs
    with pytest.raises(UserError) as caught:
        compare(opponents=[WARBAND], base=BASE, trials=4096, **arguments)
    message = str(caught.value)
    assert "\n" not in message and all(n in message for n in needles), message


def test_the_cli_takes_a_plan_per_option_and_names_it(tmp_path):
    definition = tmp_path / "plans.toml"
    definition.write_text(f'system = "epic"\n'
                          f'option_a = {{ force = "{DEVASTATORS}", plan = "shoot", action = "double" }}\n'
                          f'option_b = "{ASSAULT}"\n[[opponents]]\nforce = "{WARBAND}"\n')
    out = run("compare", definition, "-n", "4096", "--json")
    assert out.exit_code == 0, out.output
    meta = json.loads(out.output)
    assert meta["plans"] == {"Devastator": "Double", "Assault": "assault"}
    assert meta["outcome"] == "breaks or destroys the enemy"
    text = run("compare", definition, "-n", "4096")
    assert text.exit_code == 0 and text.output.startswith("Options are scored by their plan (Devastator: Double; ")
    shipped = run("compare", "epic/decisions/devastators_shoot_or_charge", "-n", "4096", "--json")
    assert shipped.exit_code == 0, shipped.output
    assert json.loads(shipped.output)["plans"] == {"Devastator (Sustained Fire)": "Sustained Fire",
                                                   "Devastator (assault)": "assault"}
    bad = tmp_path / "bad.toml"
    bad.write_text(definition.read_text().replace('"double"', '"march"'))
    one_error_line(run("compare", bad), "bad.toml", "option_a")
    bad.write_text(definition.read_text().replace('plan = "shoot"', 'plan = "charge"'))
    one_error_line(run("compare", bad), "bad.toml", "option_a")


def _overlap(a, b) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


@pytest.mark.parametrize("opponents", [[WARBAND], [WARBAND, KOMMANDOS]])
def test_the_figure_of_a_turn_without_an_assault_has_at_least_n_curves_of_what_both_have(opponents):
    """Under the chances, per opponent: the "at least N" curves of the enemy's units killed and of its blast markers
    after the end phase, one colour per option, in percent with a 95 % error bar at every N, read from each option's
    own result; the legend (one entry per option) sits under every panel, clear of its labels, and no title or label
    runs into another or out of the figure (tests/test_plots_for_players.py's conventions)."""
    result = compare(DEVASTATORS, ASSAULT, opponents, base=BASE, trials=4096, seed=5)
    fig = result.plot()
    left, right, *panels = fig.axes
    assert len(panels) == 2 * len(opponents)
    enemies = ["Warband", "Kommando Warhorde"][:len(opponents)]
    titles = [ax.get_title().replace("\n", " ") for ax in panels]
    assert titles == [t for e in enemies for t in (f'"At least N": {e} units killed',
                                                    f'"At least N": blast markers on {e} after the end phase')]
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    legend = fig.legends[0]
    assert [t.get_text() for t in legend.get_texts()] == ["Devastator", "Assault"]
    for k, ax in enumerate(panels):
        j, quantity = divmod(k, 2)
        assert ax.get_xlabel() == ("units killed", "blast markers")[quantity]
        assert ax.yaxis.get_major_formatter().format_pct(50, 100) == "50%" and ax.get_ylim() == (-2, 102)
        for option, bars in zip(("Devastator", "Assault"), ax.containers):
            dist = result.option_results[(option, j)]["formations"][enemies[j]][
                ("casualties", "blast_markers_after_end_phase")[quantity]]
            values, p, lo, hi = dist.at_least()
            (curve,) = [line for line in ax.lines if line.get_label() == option]
            assert all(any(math.isclose(c, 100 * x) for c in curve.get_ydata()) for x in p)
            segments = bars.lines[2][0].get_segments()  # the 95 % interval at every N, in percent
            assert [s[0][0] for s in segments] == list(values)
            assert [s[0][1] for s in segments] == pytest.approx(lo * 100)
            assert [s[1][1] for s in segments] == pytest.approx(hi * 100)
        assert legend.get_window_extent(renderer).y1 <= ax.xaxis.get_tightbbox(renderer).y0
    for ax, beside in zip(panels, panels[1:]):  # tick labels, y label and title of each panel clear of the next
        assert not _overlap(ax.get_tightbbox(renderer), beside.get_tightbbox(renderer))
    texts = [t for ax in panels for t in (ax.title, ax.xaxis.label)] + [fig._suptitle]
    boxes = [t.get_window_extent(renderer) for t in texts]
    for i, box in enumerate(boxes):
        assert fig.bbox.x0 - 1 <= box.x0 and box.x1 <= fig.bbox.x1 + 1, texts[i].get_text()
        assert not any(_overlap(box, other) for other in boxes[i + 1:]), texts[i].get_text()
