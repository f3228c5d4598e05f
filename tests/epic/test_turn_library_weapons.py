"""Library units bring their NetEA ranged weapons into turn scenarios (issue 15 §1; epic-shooting §1.1).

The converter maps each ranged weapon mode to a ``weapons`` line of the turn format (docs/epic-turn.md
§1): to-hit values, shots, barrage points and abilities.  Exact values come from the shooting code run
under every dice sequence (``exact_distribution``), with the library profiles as they convert.
"""
from __future__ import annotations

import textwrap
from fractions import Fraction as F

import pytest

import wargame_odds.analysis.epic as epic
from wargame_odds.analysis.epic.reference import new_trial
from wargame_odds.analysis.epic.shooting import FireOrders, barrage, roll_amount, shoot
from wargame_odds.analysis.epic.library.netea import RANGED_KINDS, _mode_groups, convert, units, weapons

from epic_helpers import build, exact_distribution

ALL_UNITS = sorted(units())


def lines(unit_id):
    return [w.model_dump(exclude_defaults=True) for w in convert(unit_id).profile.weapons]


def test_ranged_modes_become_weapon_lines_epic_shooting_1_1():
    """epic-shooting §1.1: range, AP/AT values and the mount count (Devastators: 2 missile launchers,
    the issue's own hand-written line); a Leman Russ's three weapons, one line each."""
    assert lines("devastator") == [{"name": "Missile Launcher", "count": 2, "range": 45, "ap": 5, "at": 6}]
    assert lines("leman-russ") == [{"name": "Battle Cannon", "range": 75, "ap": 4, "at": 4},
                                   {"name": "Lascannon", "range": 45, "at": 5},
                                   {"name": "Heavy Bolter", "count": 2, "range": 30, "ap": 5}]


def test_abilities_shots_and_barrage_points_epic_shooting_1_1():
    """epic-shooting §1.1: shots (``4×``), MW values with titan killer dice (TP 2.2.9), lance
    (TP-SR Eldar Technology), slow firing (TP 2.2.8), ignore cover (TP 2.2.5), AA values (TP 2.2.1),
    dice shots and barrage points, and a macro-weapon barrage (TP 1.9.8, 2.2.6)."""
    warhound = lines("warhound-class-titan")
    assert warhound == [{"name": "Plasma Blastgun", "shots": 2, "range": 45, "mw": 2, "slow_firing": True},
                        {"name": "Vulcan Mega-Bolter", "shots": 4, "range": 45, "ap": 3, "at": 5}]
    assert lines("shadowsword")[0] == {"name": "Volcano Cannon", "range": 90, "mw": 2, "titan_killer": "D3"}
    assert lines("fire-prism") == [{"name": "Prism Cannon", "range": 60, "ap": 4, "at": 2, "lance": True}]
    assert lines("mega-lobba") == [{"name": "Mega-Lobba", "range": 60, "bp": "D3+3"}]
    assert lines("landa")[0] == {"name": "Gun Turrets", "shots": "D6+3", "range": 15, "ap": 5, "aa": 6}
    assert lines("gargant") == [{"name": "Gaze of Mork", "range": 30, "mw": 4, "titan_killer": True},
                                {"name": "Soopagun", "count": 2, "range": 60, "bp": 2, "macro_weapon": True}]
    assert lines("hammerhead")[0] == {"name": "Smart Missile System", "range": 30, "ap": 5, "ignore_cover": True}


def test_conversion_notes_say_what_a_line_leaves_out():
    """What the turn format cannot hold is a note, never silent: a chosen alternative mode (TP-FAQ Unit
    Datasheets), a guided missile (TP-SR Tau Technology), one weapon per two units (TP-FAQ Imperial
    Guard Forces), a macro-weapon rule on an AT line."""
    assert "Cobra D-Cannon: alternative ranged modes, the first (30cm 3BP) is used" in convert("cobra").notes
    assert any(n.startswith("Seeker Missiles: guided missile") for n in convert("hammerhead").notes)
    assert any(n.startswith("One unit in every two has an Autocannon.") for n in convert("infantry").notes)
    assert any("macro-weapon rule of its AT3+ line is not modelled" in n for n in convert("war-hawk").notes)


@pytest.mark.parametrize("unit_id", ALL_UNITS)
def test_every_ranged_mode_has_a_line(unit_id):
    """epic-shooting §1.1: each mount with a ranged mode gives one line per mode that fires on its own
    ("and" modes each a line, "or" alternatives one line), with the mount's count; a spacecraft one
    line per orbital bombardment or pin-point attack (§4.3)."""
    conv = convert(unit_id)
    if conv.profile is None:
        return
    expected = []
    for mount in units()[unit_id]["weapons"]:
        weapon = weapons()[mount["weapon_id"]]
        if conv.profile.spacecraft:  # TP 4.3.3, 4.3.4: orbital bombardments and pin-point attacks, "0–1" counts 1
            expected += [(weapon["name"], 1 if mount["multiplier_raw"] else int(mount["multiplier"]))
                         for m in weapon["modes"] if ("bp" in m["parsed"] or "mw" in m["parsed"])
                         and not m["parsed"].get("guided_missile")]
            continue
        count = int(mount["multiplier_min"] if mount["multiplier_raw"] is not None else mount["multiplier"])
        groups = [g for g in _mode_groups(weapon) if any(m["range_kind"] in RANGED_KINDS for m in g)]
        expected += [(weapon["name"], count)] * len(groups) if count else []
    assert [(w.name, w.count) for w in conv.profile.weapons] == expected


# -- exact values with library profiles ------------------------------------------------------------

LIBRARY_ATTACK = {
    "formations": [
        {"name": "Devastators", "side": "attacker", "initiative": 1,
         "units": [{"unit": "netea:devastator", "count": 1, "engaged": "bc"}]},
        {"name": "Boyz", "side": "defender", "initiative": 1,
         "units": [{"unit": "netea:boyz", "count": 3, "engaged": "bc"}]},
    ],
}


def library_attack(orders: FireOrders):
    from wargame_odds.analysis.epic.library.resolve import resolve_epic

    data, _ = resolve_epic({"system": "epic", **LIBRARY_ATTACK})
    compiled = build(data["units"], data["formations"])
    profiles = compiled.scenario.units

    def run(rng):
        trial = new_trial(compiled, rng)
        shooters, target = trial.formations
        report = shoot(trial, shooters, target, lambda u: profiles[u.slot.name].weapons, orders)
        return report.kills

    return run


def test_library_devastator_sustained_fire_at_boyz_tp_1_9_5_1_9_6():
    """TP 1.9.5, 1.9.6: one library Devastator on Sustained Fire (+1) fires its 2 missile launchers
    AP5+ (hit on 4+) at library Boyz (6+ save): each shot kills with 1/2 × 5/6 = 5/12, one hit per
    unit, so kills ~ Bin(2, 5/12)."""
    kills = exact_distribution(library_attack(FireOrders(modifier=1)))
    assert kills == {0: F(49, 144), 1: F(70, 144), 2: F(25, 144)}


def test_dice_shots_and_barrage_points_roll_per_weapon_tp_1_9_8():
    """TP 1.9.8 ("roll dice BP per weapon") and DATA shots such as ``D6+3×``: each value is rolled when
    the weapon fires; a Mega-Lobba's D3+3 BP is 4, 5 or 6, so its barrage gets the 6–7 row's extra
    blast marker with probability 1/3 (TP 1.9.8 table, §12.6)."""
    compiled = build({"g": {"type": "INF", "armour": 4, "cc": 4, "ff": 4}}, [
        {"name": "A", "side": "attacker", "initiative": 1, "units": [{"unit": "g", "count": 1, "engaged": "bc"}]},
        {"name": "B", "side": "defender", "initiative": 1, "units": [{"unit": "g", "count": 1, "engaged": "bc"}]}])

    def trial(rng):
        return new_trial(compiled, rng)

    shots = exact_distribution(lambda rng: roll_amount(trial(rng), "D6+3", "shots"))
    assert shots == {k: F(1, 6) for k in range(4, 10)}
    barrage_points = exact_distribution(lambda rng: roll_amount(trial(rng), "2D3+3", "BP"))
    assert barrage_points == {5: F(1, 9), 6: F(2, 9), 7: F(3, 9), 8: F(2, 9), 9: F(1, 9)}
    lobba = convert("mega-lobba").profile.weapons

    def extra(rng):
        t = trial(rng)
        return barrage(t, t.formations[0].living, lambda u: lobba, t.formations[1].living, FireOrders())[1]

    assert exact_distribution(extra) == {0: F(2, 3), 1: F(1, 3)}


LIBRARY_TURN = """\
system = "epic"
title = "Library Devastators shoot library Boyz"

[[formations]]
name = "Devastators"
side = "attacker"
initiative = 1
units = [{ unit = "netea:devastator", count = 4 }]

[[formations]]
name = "Boyz"
side = "defender"
initiative = 3
units = [{ unit = "netea:boyz", count = 8 }]

[[turn]]
formation = "Devastators"
action = "sustained_fire"
target = "Boyz"
"""


def test_library_turn_scenario_runs_tp_1_9(tmp_path):
    """TP 1.6.2, 1.9.5, 1.9.6: a turn scenario of library units only runs; initiative 1 passes its
    test always, its 8 missile-launcher shots (one per Boy) kill Bin(8, 5/12): mean 10/3, checked at
    5 standard errors."""
    path = tmp_path / "library_turn.toml"
    path.write_text(textwrap.dedent(LIBRARY_TURN))
    trials = 3000
    result = epic.simulate(str(path), trials=trials, seed=7, engine="reference").to_dict()
    entry = result["turn"]["1"]
    assert entry["action_test_passed"]["p"] == 1
    sigma = (8 * F(5, 12) * F(7, 12)) ** 0.5 / trials ** 0.5
    assert abs(entry["kills_mean"] - 10 / 3) < 5 * float(sigma)
