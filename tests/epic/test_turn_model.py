"""The ``[[turn]]`` scenario format (docs/epic-turn.md §1): the issue's example loads unchanged;
each bad activation gives one clear line naming its field, exit status 2."""
from __future__ import annotations

from importlib.resources import files
from pathlib import Path

import pytest
from click.testing import CliRunner

import wargame_odds.analysis.epic as epic
from wargame_odds.analysis.cli import main

TURNS = Path(str(files("wargame_odds.analysis").joinpath("scenarios", "epic", "turns")))
EXAMPLE = TURNS / "devastators_then_assault_marines.toml"
TEXT = EXAMPLE.read_text()


def test_issue_example_loads_unchanged():
    """Issue 15 §1: weapons on units, two activations, units without ``engaged`` stay out."""
    scenario = epic.load(EXAMPLE)
    assert [(a.formation, a.action, a.target) for a in scenario.turn] == [
        ("Devastators", "sustained_fire", "Warband"), ("Assault Detachment", "engage", "Warband")]
    first = scenario.turn[0]
    assert (first.in_range, first.exposed, first.cover, first.hold) == (4, 12, False, "shoot")
    assert scenario.turn[1].hold == "move"  # TP 1.6.1: a failed engage holds and moves by default
    weapon = scenario.units["devastator"].weapons[0]
    assert (weapon.count, weapon.shots, weapon.range, weapon.ap, weapon.at) == (2, 1, 45, 5, 6)
    assert scenario.formations[0].units[0].engaged == "out"


def test_assault_scenarios_still_need_engagement_states(tmp_path):
    """Without ``[[turn]]`` a unit group's ``engaged`` stays required (assault scenarios unchanged)."""
    text = TEXT.split("[[turn]]")[0].replace(', engaged = "bc"', "").replace(', engaged = "ff"', "")
    result, path = _cli(tmp_path, text)
    assert result.exit_code == 2 and "engaged" in result.stderr


def _cli(tmp_path, text):
    path = tmp_path / "turn.toml"
    path.write_text(text)
    return CliRunner().invoke(main, ["epic", str(path), "--trials", "100"]), str(path)


ACTIVATION_1 = TEXT.split("[[turn]]\n")[1].split("\nin_range")[0]  # the first activation's first three lines
ACTIVATION_2 = 'formation = "Assault Detachment"\naction = "engage"\ntarget = "Warband"'

BAD_TURNS = {  # case: (replace, with, field, words of the problem)
    "unknown formation (TP 1.6)": (ACTIVATION_1, ACTIVATION_1.replace('"Devastators"', '"Havocs"'),
                                   "turn[0].formation", "unknown formation 'Havocs'"),
    "unknown target (TP 1.9.1)": (ACTIVATION_1, ACTIVATION_1.replace('target = "Warband"', 'target = "Horde"'),
                                  "turn[0].target", "unknown formation 'Horde'"),
    "target on the same side (TP 1.9.1)": (ACTIVATION_1, ACTIVATION_1.replace('"Warband"', '"Assault Detachment"'),
                                           "turn[0].target", "attacker side"),
    "an action the formation cannot take (TP 1.6.1)": (
        ACTIVATION_2, ACTIVATION_2.replace('"engage"', '"sustained_fire"'), "turn[1].action", "no weapon"),
    "a broken formation asked to act (TP 1.13)": (
        'initiative = 1\narmy_rules = ["they-shall-know-no-fear"]\nunits = [{ unit = "devastator"',
        'initiative = 1\nbroken = true\narmy_rules = ["they-shall-know-no-fear"]\nunits = [{ unit = "devastator"',
        "turn[0].formation", "is broken"),
    "acting twice (TP 1.6)": (ACTIVATION_2, ACTIVATION_1, "turn[1].formation", "already acted"),
    "no target for a shooting action": (ACTIVATION_1, ACTIVATION_1.replace('\ntarget = "Warband"', ""),
                                        "turn[0].target", "needs a target"),
    "overwatch fire from a formation not on overwatch (TP 1.10)": (
        ACTIVATION_2, ACTIVATION_2 + '\noverwatch_fire = ["Warband"]', "turn[1].overwatch_fire[0]", "not an enemy"),
    "retaining the initiative first (TP 1.6.3)": (ACTIVATION_1, ACTIVATION_1 + "\nretain = true", "turn[0].retain",
                                                  "previous activation"),
    "unknown action": (ACTIVATION_1, ACTIVATION_1.replace('"sustained_fire" ', '"snipe" '), "turn[0].action", None),
    "unknown activation key": (ACTIVATION_1, ACTIVATION_1 + "\nrange = 30", "turn[0].range", None),
    "a declaration at a formation without war engines (TP 3.2.1)": (
        ACTIVATION_1, ACTIVATION_1 + '\ndeclare_at = "war_engines"', "turn[0].declare_at", "has no war engines"),
    "a declaration by an activation that does not shoot (TP 3.2.1)": (
        ACTIVATION_2, ACTIVATION_2 + '\ndeclare_at = "others"', "turn[1].declare_at", "only an activation that shoots"),
    "an unknown declaration": (ACTIVATION_1, ACTIVATION_1 + '\ndeclare_at = "titans"', "turn[0].declare_at",
                               "war_engines"),
    "a weapon without a to-hit value": ('weapons = [{ name = "big shoota", range = 30, ap = 6, at = 6 }]',
                                        'weapons = [{ name = "big shoota", range = 30 }]', "units.boyz.weapons[0]",
                                        "at least one of ap, at, aa, mw or bp"),
}


@pytest.mark.parametrize("case", sorted(BAD_TURNS))
def test_bad_turns_give_one_clear_line_and_exit_2(tmp_path, case):
    old, new, field, words = BAD_TURNS[case]
    assert old in TEXT
    result, path = _cli(tmp_path, TEXT.replace(old, new, 1))
    assert result.exit_code == 2, result.output
    message = result.stderr.strip()
    assert "\n" not in message and "Traceback" not in result.output + result.stderr
    assert message.startswith(f"error: {path}: ") and f"field '{field}'" in message, message
    if words:
        assert words in message, message
    assert result.stdout == ""


@pytest.mark.parametrize("rule", ["holofield", "knight-shield"])
def test_target_whose_save_shooting_lacks_is_refused(tmp_path, rule):
    """docs/epic-turn.md §1: holofield and knight-shield saves are modelled in assaults only, so a turn
    shooting at such a unit is one clear error naming the field (TP-SR Eldar, Knight Technology)."""
    text = TEXT.replace('[units.boyz]\ntype = "INF"\narmour = 6',
                        f'[units.boyz]\ntype = "WE"\ndamage_capacity = 3\nspecial = ["{rule}"]\narmour = 6')
    result, _ = _cli(tmp_path, text)
    assert result.exit_code == 2 and "turn[0].target" in result.stderr and rule in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
