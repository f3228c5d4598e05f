"""Automaton and Automata units shot at in a turn (TP-SR Automaton, Automata; epic-shooting §3.9): their
deaths place no blast markers, on both engines, exactly."""
import pytest

from wargame_odds.analysis import epic

ROBOTS = """
system = "epic"
title = "Guns at a big robot formation"
[units.gun]
type = "INF"
armour = 5
cc = 5
ff = 5
weapons = [{ name = "gun", count = 3, range = 30, ap = 3 }]
[units.robot]
type = "INF"
armour = 6
cc = 4
ff = 4
special = SPECIAL
[[formations]]
name = "Guns"
side = "attacker"
initiative = 1
units = [{ unit = "gun", count = 4 }]
[[formations]]
name = "Robots"
side = "defender"
initiative = 1
units = [{ unit = "robot", count = 30 }]
[[turn]]
formation = "Guns"
action = "sustained_fire"
target = "Robots"
"""


@pytest.mark.parametrize("engine, trials", [("kernel", 20_000), ("reference", 1_000)])
@pytest.mark.parametrize("special", ["automaton", "automata"])
def test_deaths_of_automata_place_no_blast_markers(engine, trials, special):
    """TP-SR Automaton / Automata (epic-shooting §3.9): 12 shots at 2+ (Sustained Fire) kill several robots in
    every trial, yet the only BM placed is the one for coming under fire (TP 1.9.4); the initiative-1 action
    test always passes and 30 units never break on 1 BM.  Without the rule every kill adds one (the control)."""
    result = epic.simulate(epic.loads(ROBOTS.replace("SPECIAL", f'["{special}"]')), trials=trials, seed=5,
                           engine=engine).to_dict()
    attack = result["turn"]["1"]
    assert attack["kills_mean"] > 5
    after = attack["target_blast_markers_after"]
    assert [v for v, p in zip(after["values"], after["p"]) if p > 0] == [1], after  # exactly 1 BM in every trial
    control = epic.simulate(epic.loads(ROBOTS.replace("SPECIAL", "[]")), trials=trials, seed=5,
                            engine=engine).to_dict()["turn"]["1"]
    assert control["blast_markers_placed_mean"] > 5
