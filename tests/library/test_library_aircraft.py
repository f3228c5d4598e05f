"""Library aircraft and spacecraft in turn scenarios (issue 14 §3; docs/library.md, docs/epic-turn.md §9):
every AC, AC/WE (without CC/FF) and SC datasheet converts and flies a small ground attack, orbital
bombardment or pin-point attack on the reference engine."""
from __future__ import annotations

from pathlib import Path

import pytest

import wargame_odds.analysis.epic as epic
from wargame_odds.analysis.epic.library.formations import formations
from wargame_odds.analysis.epic.library.netea import convert, units

FLIERS = sorted(uid for uid, u in units().items()
                if u["type"] in ("AC", "SC") or (u["type"] == "AC/WE" and u["cc"] is None and u["ff"] is None))

TARGETS = """
system = "epic"
[units.tank]               # a small war engine, for pin-point attacks (TP 4.3.4)
type = "WE"
armour = 5
cc = 5
ff = 5
damage_capacity = 2
[end_phase]
rally = false
[[formations]]
name = "Fliers"
side = "attacker"
initiative = 2
army_rules = []
units = [{ unit = "netea:UNIT", count = 2 }]
[[formations]]
name = "Mob"
side = "defender"
initiative = 3
army_rules = []
units = [{ unit = "netea:boyz", count = 4 }, { unit = "tank", count = 1 }]
[[formations]]
name = "Flak"
side = "defender"
initiative = 2
army_rules = []
units = [{ unit = "netea:hydra", count = 2 }]
[[formations]]
name = "More flak"
side = "defender"
initiative = 2
army_rules = []
units = [{ unit = "netea:hydra", count = 1 }]
"""


def test_the_39_fliers_convert_ok_issue_14():
    """Issue 14 §3: the 17 AC, 6 AC/WE without CC or FF and 16 SC units are "ok", as aircraft (with
    their move class) or spacecraft, never assaulted (TP 4.1.1, 4.3)."""
    assert len(FLIERS) == 39
    for uid in FLIERS:
        conv = convert(uid)
        assert conv.ok, (uid, conv.summary())
        assert (conv.profile.aircraft is not None) != conv.profile.spacecraft, uid
        if conv.profile.aircraft:
            assert conv.profile.aircraft == units()[uid]["move_class"].lower()


@pytest.mark.parametrize("uid", FLIERS)
def test_every_flier_runs_a_small_turn_on_the_reference_engine(uid):
    """TP 4.2, 4.3.3, 4.3.4: each library flier in a small turn (ground attack through approach and
    disengagement flak; or an orbital bombardment, or a pin-point attack at the war engine), 20 trials;
    its turn entry is reported with every probability's interval."""
    profile = convert(uid).profile
    if profile.aircraft:
        turn = ('[[turn]]\nformation = "Fliers"\naction = "ground_attack"\ntarget = "Mob"\nflak = ["Flak"]\n'
                'disengagement_flak = ["More flak"]\n')
    else:
        action = "orbital_bombardment" if any(w.bp is not None for w in profile.weapons) else "pin_point"
        turn = f'[[turn]]\nformation = "Fliers"\naction = "{action}"\ntarget = "Mob"\n'
    result = epic.simulate(epic.loads(TARGETS.replace("UNIT", uid) + turn), trials=20, seed=1, engine="reference")
    entry = result["turn", "1"]
    assert entry["acted"].k == 20
    assert 0 <= entry["kills_mean"].value <= 5
    if profile.aircraft:
        lost = entry["aircraft_lost_mean"]
        assert 0 <= lost.value <= 2 and lost.ci95[0] <= lost.value <= lost.ci95[1]


def test_library_aircraft_formation_is_out_of_any_assault():
    """TP 4.1.1: a library formation of aircraft (``library = ...``) expands with every group out of
    the assault, and flies a ground attack."""
    ref = "netea:chaos-space-marine-black-legion/harbinger"
    before_fliers = TARGETS.split("[[formations]]\nname = \"Fliers\"")[0]
    after_fliers = TARGETS.split('units = [{ unit = "netea:UNIT", count = 2 }]\n')[1]
    text = before_fliers + after_fliers
    text += f'[[formations]]\nlibrary = "{ref}"\nside = "attacker"\ninitiative = 2\n'
    name = formations()[ref].name
    model = epic.loads(text + f'[[turn]]\nformation = "{name}"\naction = "ground_attack"\ntarget = "Mob"\n')
    assert all(g.engaged == "out" for f in model.formations if f.name == name for g in f.units)
    result = epic.simulate(model, trials=20, seed=1, engine="reference")
    assert result["turn", "1", "acted"].k == 20


def test_shipped_aircraft_scenario_loads_and_runs():
    """The example turn scenario with library aircraft and a spacecraft (docs/epic-turn.md §5)."""
    path = Path(epic.__file__).parents[1] / "scenarios" / "epic" / "aircraft" / "thunderbolts_strafe_ork_warband.toml"
    result = epic.simulate(epic.load(path), trials=50, seed=2, engine="reference")
    assert [result["turn", k, "action"] for k in ("1", "2", "3")] == ["ground_attack", "orbital_bombardment", "engage"]
    assert result["turn", "1", "flak_hits_mean"].value > 0
