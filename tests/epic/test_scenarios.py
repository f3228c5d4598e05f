"""Epic scenario files: the issue's example loads unchanged; bad files give one clear line."""
import random
from importlib.resources import files
from pathlib import Path

import pytest
from click.testing import CliRunner

import wargame_odds.analysis.epic as epic
from wargame_odds.analysis.cli import main
from wargame_odds.analysis.epic.compile import BC, DEFENDER, FF, OUT, compile_scenario
from wargame_odds.analysis.epic.reference import run_trial

SCENARIOS = Path(str(files("wargame_odds.analysis").joinpath("scenarios", "epic")))
EXAMPLE = SCENARIOS / "assault_marines_vs_warband.toml"

GOOD = """
system = "epic"
[units.marine]
type = "INF"
armour = 4
cc = 4
ff = 4
[units.titan]
type = "WE"
armour = 4
cc = 2
ff = 3
damage_capacity = 8
special = ["fearless", "reinforced-armour"]
[units.chaplain]
type = "CH"
special = ["inspiring", "invulnerable-save", "leader"]
extra_attacks = [{ count = 1, range = "bc", macro_weapon = true }]
[[formations]]
name = "Marines"
side = "attacker"
initiative = 1
units = [{ unit = "marine", count = 4, engaged = "bc", characters = ["chaplain"] }]
[[formations]]
name = "Titan"
side = "defender"
initiative = 1
units = [{ unit = "titan", count = 1, engaged = "bc" }]
"""


def test_every_shipped_scenario_loads_and_compiles():
    paths = sorted(SCENARIOS.glob("*.toml"))
    assert EXAMPLE in paths and len(paths) >= 3
    for path in paths:
        compiled = compile_scenario(epic.load(path))
        assert compiled.units and compiled.layout.size > 0


def test_issue_example_expands_in_allocation_order():
    """§9.6: units in base contact first, then within 15 cm, then not engaged; nearest first."""
    compiled = compile_scenario(epic.load(EXAMPLE))
    defenders = [u for u in compiled.units if u.side == DEFENDER]
    assert [u.engaged for u in defenders] == [BC] * 7 + [FF] * 3 + [OUT] * 2
    assert [u.name for u in defenders[:7]] == ["boyz"] * 6 + ["nobz"]
    assert defenders[6].leader and len(defenders[6].extra) == 1
    warband = compiled.formations[2]
    assert warband.mob_rule and warband.blast_markers == 2 and warband.size == 12
    assert compiled.formations[0].tsknf and compiled.formations[1].role == 1  # support


def test_characters_attach_to_the_first_unit_and_war_engines_count_their_dc():
    """TP 2.1.1 (characters add rules and weapons to the host), TP 3.3.3 (a WE counts its DC)."""
    compiled = compile_scenario(epic.loads(GOOD))
    marines = [u for u in compiled.units if u.formation == 0]
    assert marines[0].name == "marine + chaplain"
    assert marines[0].inspiring and marines[0].invulnerable and marines[0].leader
    assert marines[0].extra[0].macro_weapon and not any(m.inspiring for m in marines[1:])
    titan = compiled.formations[1]
    assert titan.size == 8 and compiled.units[titan.units[0]].reinforced_armour


def _cli(tmp_path, text):
    path = tmp_path / "scenario.toml"
    path.write_text(text)
    result = CliRunner().invoke(main, ["epic", str(path), "--trials", "1000"])
    return result, str(path)


BAD_CASES = {
    "unknown unit": (GOOD.replace('unit = "titan"', 'unit = "gargant"'),
                     "formations[1].units[0].unit", "chaplain, marine, titan"),
    "armour 7": (GOOD.replace("armour = 4\ncc = 4", "armour = 7\ncc = 4"), "units.marine.armour", "<= 6"),
    "missing side": (GOOD.replace('side = "defender"\n', ""), "formations[1].side", None),
    "negative count": (GOOD.replace('unit = "titan", count = 1', 'unit = "titan", count = -1'),
                       "formations[1].units[0].count", ">= 1"),
    "unknown key": (GOOD.replace("initiative = 1\nunits = [{ unit = \"titan\"",
                                 "initiative = 1\ncolour = \"red\"\nunits = [{ unit = \"titan\""),
                    "formations[1].colour", "name, side, role, initiative"),
    "wrong type": (GOOD.replace('unit = "marine", count = 4', 'unit = "marine", count = "four"'),
                   "formations[0].units[0].count", None),
    "no engaged defender": (GOOD.replace('unit = "titan", count = 1, engaged = "bc"',
                                         'unit = "titan", count = 1, engaged = "out"'),
                            "formations", None),
    "bad engagement": (GOOD.replace('engaged = "bc", characters', 'engaged = "contact", characters'),
                       "formations[0].units[0].engaged", "'bc', 'ff' or 'out'"),
    "unknown special rule": (GOOD.replace('"fearless", "reinforced-armour"', '"fearless", "void-shields-6"'),
                             "units.titan.special", "fearless"),
    "war engine without DC": (GOOD.replace("damage_capacity = 8\n", ""), "units.titan", None),
    "invalid TOML": (GOOD.replace("initiative = 1\nunits = [{ unit = \"titan\"",
                                  "initiative = \nunits = [{ unit = \"titan\""), None, None),
}


@pytest.mark.parametrize("case", sorted(BAD_CASES))
def test_bad_scenarios_give_one_clear_line_and_exit_2(tmp_path, case):
    text, field, allowed = BAD_CASES[case]
    result, path = _cli(tmp_path, text)
    assert result.exit_code == 2, result.output
    message = result.stderr.strip()
    assert "\n" not in message and "Traceback" not in result.output + result.stderr
    assert message.startswith(f"error: {path}: ")
    if field is None:
        assert "invalid TOML" in message
    else:
        assert f"field '{field}'" in message
    if allowed:
        assert "(allowed: " in message and allowed in message
    assert result.stdout == ""


def test_missing_file_is_a_clear_error(tmp_path):
    result = CliRunner().invoke(main, ["epic", str(tmp_path / "nope.toml")])
    assert result.exit_code == 2 and "file not found" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("path", sorted(SCENARIOS.glob("*.toml")), ids=lambda p: p.stem)
def test_three_states_add_up_for_every_formation_of_every_shipped_scenario(path):
    """Issue 11 §2: after the assault and after the end phase every formation is destroyed, broken
    (alive) or unbroken, counts adding up to the trials exactly (kernel); in every reference trial a
    destroyed formation is neither broken nor holding BMs."""
    scenario = epic.load(path)
    result = epic.simulate(scenario, trials=20_000, seed=4)
    for name in result["formations"]:
        for point, destroyed in (("after_assault", "destroyed_after_assault"), ("after_end_phase", "destroyed")):
            states = [result["formations", name, key].k for key in (destroyed, f"broken_{point}", f"unbroken_{point}")]
            assert sum(states) == result.trials and min(states) >= 0, (name, point, states)
    compiled = compile_scenario(scenario)
    rng = random.Random(4)
    for _ in range(300):
        for slot, f in zip(compiled.formations, run_trial(compiled, rng).formations):
            if f.casualties_assault == len(slot.units):
                assert (f.broken_after_assault, f.blast_markers_after_assault) == (False, 0)
            if f.destroyed:
                assert (f.broken_after_end_phase, f.blast_markers_after_end_phase) == (False, 0)
