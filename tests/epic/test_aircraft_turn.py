"""Aircraft ground attacks, flak, orbital bombardments and pin-point attacks in the reference turn
(epic-shooting §9, §4.3, §2; docs/epic-turn.md §9).  Exact values from every dice sequence of the
rule steps (the ``exact`` fixture), one reference run against them at 5σ, and the bad inputs."""
from __future__ import annotations

import json
import math
from fractions import Fraction as F

import pytest
from click.testing import CliRunner

import wargame_odds.analysis.epic as epic
from wargame_odds.analysis.cli import main
from wargame_odds.analysis.epic.aircraft import FlakReport, aircraft_action_test, flak
from wargame_odds.analysis.epic.turn import ActivationOutcome, Turn
from wargame_odds.analysis.epic.turn_model import FIRING_ACTIONS, Activation
from wargame_odds.analysis.epic.turn_result import compile_turn

UNITS = """
system = "epic"
[units.fighter]            # a fighter-bomber: it may jink
type = "AV"
armour = 6
aircraft = "fighter-bomber"
weapons = [{ name = "rockets", range = 30, ap = 4, at = 4 }]
[units.armoured-fighter]
type = "AV"
armour = 5
special = ["reinforced-armour"]
aircraft = "fighter"
weapons = [{ name = "cannon", range = 30, ap = 4 }]
[units.bomber]             # an aircraft war engine, no critical effect
type = "WE"
armour = 4
damage_capacity = 2
aircraft = "bomber"
weapons = [{ name = "bombs", range = 15, bp = 3 }]
[units.flak-tank]
type = "AV"
armour = 6
cc = 6
ff = 5
weapons = [{ name = "autocannon", range = 45, ap = 5, at = 6, aa = 5 }]
[units.rifleman]
type = "INF"
cc = 6
ff = 5
weapons = [{ name = "lasgun", range = 30, ap = 5 }]
[units.tactical]
type = "INF"
armour = 4
cc = 4
ff = 4
[units.walker]             # a Warhound-like war engine: DC 3, 2 void shields, 5+ reinforced armour
type = "WE"
armour = 5
cc = 4
ff = 4
damage_capacity = 3
void_shields = 2
special = ["reinforced-armour"]
[units.cruiser]
type = "AV"
spacecraft = true
weapons = [{ name = "orbital bombardment", range = "unlimited", bp = 3, macro_weapon = true },
           { name = "pin-point attack", range = "unlimited", mw = 2, titan_killer = "D3" }]
[end_phase]
rally = false
"""


def formation(name, side, unit, count, initiative=1, markers=0, extra=""):
    return (f'[[formations]]\nname = "{name}"\nside = "{side}"\ninitiative = {initiative}\n'
            f'blast_markers = {markers}\nunits = [{{ unit = "{unit}", count = {count} }}]\n{extra}')


def activation(formation_name, action, target, **keys):
    extra = "".join(f"{k} = {v}\n" for k, v in keys.items())
    return f'[[turn]]\nformation = "{formation_name}"\naction = "{action}"\ntarget = "{target}"\n{extra}'


def load(*parts):
    return epic.loads(UNITS + "".join(parts))


def exact_turn(exact, model, measure):
    """The exact distribution of ``measure(outcome, turn)`` over one whole turn."""
    c = compile_turn(model)

    def one(rng):
        turn = Turn(c.compiled, c.weapons, rng)
        outcomes = []
        for act in c.scenario.turn:
            outcome, _ = turn.activate(act)
            turn.note_movement(act, outcome)
            outcomes.append(outcome)
        for act, outcome in zip(c.scenario.turn, outcomes):
            if act.action == "ground_attack":
                turn.disengage(act, outcome)
        return measure(outcomes, turn)
    return exact(one)


# -- the aircraft action test (TP 4.2.7; epic-shooting §2) ----------------------------------------

@pytest.mark.parametrize("markers, passes", [(0, F(5, 6)), (1, F(2, 3)), (2, F(1, 2)), (4, F(1, 6)), (5, F(0))])
def test_aircraft_action_test_minus_one_per_blast_marker_tp_4_2_7(exact, markers, passes):
    """TP 4.2.7: the aircraft action test takes −1 per BM (not the usual −1 for any), then every BM
    is removed, pass or fail; a failure (Stand Down) places no BM (TP-FAQ Blast Markers)."""
    model = load(formation("Wing", "attacker", "fighter", 1, initiative=2, markers=markers),
                 formation("Guard", "defender", "rifleman", 3), activation("Wing", "ground_attack", "Guard"))
    c = compile_turn(model)
    act = model.turn[0]

    def test(rng):
        turn = Turn(c.compiled, c.weapons, rng)
        wing = turn.by_name["Wing"]
        passed = aircraft_action_test(turn.trial, wing, act)
        return passed, wing.blast_markers
    result = exact(test)
    assert result.get((True, 0), 0) == passes and result.get((False, 0), 0) == 1 - passes


def test_failed_aircraft_test_stands_down_without_a_blast_marker_tp_4_2_7(exact):
    """TP 4.2.7, TP-FAQ Blast Markers: after a failed test the aircraft Stand Down: no flak, no attack,
    and no BM (their 3 BMs are gone as well)."""
    model = load(formation("Wing", "attacker", "fighter", 1, initiative=2, markers=3),
                 formation("Guard", "defender", "rifleman", 3), formation("Flak", "defender", "flak-tank", 1),
                 activation("Wing", "ground_attack", "Guard", flak='["Flak"]'))
    dist = exact_turn(exact, model, lambda o, t: (o[0].test_passed, o[0].attack is not None,
                                                  t.by_name["Wing"].blast_markers if not o[0].test_passed else -1))
    assert dist[(False, False, 0)] == F(2, 3)  # D6 − 3 ≥ 2 only on a 5 or 6


# -- flak (TP 4.2.3, 4.2.4; epic-shooting §9, §13 Q19) -------------------------------------------------

@pytest.mark.parametrize("unit, jink, lost", [
    ("fighter", False, F(1, 3) * F(5, 6)),           # AA5+, armour 6+
    ("fighter", True, F(1, 3) * F(1, 2)),            # AA5+, jink 4+ instead
    ("armoured-fighter", False, F(1, 3) * F(4, 9)),  # armour 5+ re-rolled (reinforced armour)
    ("armoured-fighter", True, F(1, 3) * F(1, 2)),   # a jink is not re-rolled (§13 Q19)
])
def test_flak_to_hit_and_armour_or_jink_save_tp_4_2_3(exact, unit, jink, lost):
    """TP 4.2.3, 4.2.4, 4.2.7: one AA5+ shot at one aircraft: hit 1/3, then its armour save (reinforced
    armour re-rolls) or a 4+ jink save with no re-roll; BMs on the aircraft = 1 (coming under flak) + 1
    per aircraft lost."""
    model = load(formation("Wing", "attacker", unit, 1), formation("Flak", "defender", "flak-tank", 1),
                 formation("Guard", "defender", "rifleman", 1), activation("Wing", "ground_attack", "Guard"))
    c = compile_turn(model)

    def test(rng):
        turn = Turn(c.compiled, c.weapons, rng)
        report = FlakReport()
        flak(turn.trial, turn.by_name["Wing"], [(turn.by_name["Flak"], 0)], turn.weapons_of, jink, report)
        return report.aircraft_lost, turn.by_name["Wing"].blast_markers
    assert exact(test) == {(1, 2): lost, (0, 1): 1 - lost}


def test_flak_on_an_aircraft_war_engine_uses_the_war_engine_steps_tp_3_2_2(exact):
    """TP 3.2.2, 4.2.4, 4.2.7: two AA5+ shots at an AC/WE (DC 2, 4+ armour): each shot does 1 damage
    with 1/3 × 1/2 = 1/6; each damage point is +1 BM, and at DC 0 it is lost (one aircraft)."""
    model = load(formation("Wing", "attacker", "bomber", 1), formation("Flak", "defender", "flak-tank", 2),
                 formation("Guard", "defender", "rifleman", 1), activation("Wing", "ground_attack", "Guard"))
    c = compile_turn(model)

    def test(rng):
        turn = Turn(c.compiled, c.weapons, rng)
        report = FlakReport()
        flak(turn.trial, turn.by_name["Wing"], [(turn.by_name["Flak"], 0)], turn.weapons_of, False, report)
        bomber = turn.by_name["Wing"].units[0]
        damage = bomber.slot.damage_capacity - bomber.damage_left
        return damage, report.aircraft_lost, turn.by_name["Wing"].blast_markers
    assert exact(test) == {(0, 0, 1): F(25, 36), (1, 0, 2): F(10, 36), (2, 1, 3): F(1, 36)}


def test_flak_suppressed_and_no_flak_from_broken_or_marching_formations_tp_4_2_4(exact):
    """TP 4.2.4: a formation that marched this turn, or a broken one, fires no flak and places no BM;
    suppression applies to flak (of two flak tanks with 1 BM, the rear one is suppressed: one AA5+ shot)."""
    model = load(formation("Wing", "attacker", "fighter", 1),
                 formation("Flak", "defender", "flak-tank", 2, markers=1),
                 formation("Guard", "defender", "rifleman", 1),
                 activation("Flak", "march", "Guard").replace('target = "Guard"\n', ""),
                 activation("Wing", "ground_attack", "Guard", flak='["Flak"]'))
    # the flak formation marched: no flak at all
    dist = exact_turn(exact, model, lambda o, t: (o[1].flak.hits, t.by_name["Wing"].blast_markers))
    assert dist == {(0, 0): 1}
    model = load(formation("Wing", "attacker", "fighter", 1),
                 formation("Flak", "defender", "flak-tank", 2, extra="broken = true\n"),
                 formation("Guard", "defender", "rifleman", 1),
                 activation("Wing", "ground_attack", "Guard", flak='["Flak"]'))
    dist = exact_turn(exact, model, lambda o, t: (o[0].flak.hits, t.by_name["Wing"].blast_markers))
    assert dist == {(0, 0): 1}
    model = load(formation("Wing", "attacker", "fighter", 1),
                 formation("Flak", "defender", "flak-tank", 2, markers=1),
                 formation("Guard", "defender", "rifleman", 1),
                 activation("Wing", "ground_attack", "Guard", flak='["Flak"]'))
    c = compile_turn(model)

    def test(rng):
        turn = Turn(c.compiled, c.weapons, rng)
        report = FlakReport()
        flak(turn.trial, turn.by_name["Wing"], [(turn.by_name["Flak"], 0)], turn.weapons_of, False, report)
        return report.hits
    assert exact(test) == {1: F(1, 3), 0: F(2, 3)}  # one of the two tanks suppressed: one AA5+ shot


# -- the ground attack (TP 4.1.1, 4.2.2; epic-shooting §9) ----------------------------------------

GROUND_ATTACK = (formation("Wing", "attacker", "fighter", 1), formation("Flak", "defender", "flak-tank", 1),
                 formation("Guard", "defender", "rifleman", 3),
                 activation("Wing", "ground_attack", "Guard", flak='["Flak"]'))
# flak: lost 5/18 (AA5+, armour 6+); the survivor, with 1 or more BMs, is not suppressed: AP4+ at
# infantry with no save
KILLS = F(13, 18) * F(1, 2)


def test_small_ground_attack_after_flak_no_suppression_tp_4_1_1(exact):
    """TP 4.1.1, 4.2.2, 4.2.4: the aircraft lost to the approach flak do not attack; the survivor fires
    although flak left it with BMs (aircraft are never suppressed): kills 13/36, lost 5/18."""
    dist = exact_turn(exact, load(*GROUND_ATTACK),
                      lambda o, t: (o[0].flak.aircraft_lost, o[0].attack.kills if o[0].attack else 0))
    assert dist == {(1, 0): F(5, 18), (0, 1): KILLS, (0, 0): F(13, 18) - KILLS}


def test_jinking_at_the_approach_forfeits_the_attack_tp_4_2_3(exact):
    """TP 4.2.3, TP-FAQ Anti-Aircraft Attacks: aircraft that jink against the approach flak save on 4+
    and forfeit their attack."""
    parts = GROUND_ATTACK[:3] + (activation("Wing", "ground_attack", "Guard", flak='["Flak"]', jink="true"),)
    dist = exact_turn(exact, load(*parts), lambda o, t: (o[0].flak.aircraft_lost, o[0].attack is None))
    assert dist == {(1, True): F(1, 6), (0, True): F(5, 6)}


def test_cover_minus_one_only_for_a_target_in_cover_tp_4_2_2(exact):
    """TP 4.2.2, TP-FAQ Aircraft Attacks: the −1 applies to a target in cover (``cover = true``): the
    AP4+ shot hits on 5+; the unsaved hit still kills (no save)."""
    parts = (formation("Wing", "attacker", "fighter", 1), formation("Guard", "defender", "rifleman", 3),
             activation("Wing", "ground_attack", "Guard", cover="true"))
    dist = exact_turn(exact, load(*parts), lambda o, t: o[0].attack.kills)
    assert dist == {1: F(1, 3), 0: F(2, 3)}


def test_disengagement_flak_at_minus_one_after_a_move_tp_4_2_4(exact):
    """TP 4.2.4, TP-FAQ The End Phase: in the end phase the aircraft disengage through the flak of
    formations that did not fire at their approach, −1 to hit for a formation that moved this turn
    (AA5+ → 6+); a fighter-bomber jinks then (4+ beats its 6+ armour; reading, the attack is made):
    lost 1/6 × 1/2 = 1/12."""
    parts = (formation("Wing", "attacker", "fighter", 1), formation("Flak", "defender", "flak-tank", 1),
             formation("Guard", "defender", "tactical", 3),
             activation("Wing", "ground_attack", "Guard", disengagement_flak='["Flak"]'))
    c = compile_turn(load(*parts))
    act = c.scenario.turn[0]

    def test(rng):
        turn = Turn(c.compiled, c.weapons, rng)
        turn.moved.add("Flak")  # as after an Advance earlier in the turn (note_movement)
        outcome, _ = turn.activate(act)  # initiative 1: the test always passes; no approach flak
        turn.disengage(act, outcome)
        return outcome.flak.aircraft_lost
    assert exact(test) == {1: F(1, 12), 0: F(11, 12)}


@pytest.mark.parametrize("action, held, moved, marched", [
    ("advance", False, True, False), ("double", False, True, False), ("march", False, True, True),
    ("sustained_fire", False, False, False), ("overwatch", False, False, False),
    ("sustained_fire", True, False, False), ("march", True, True, False)])
def test_moves_and_marches_are_noted_for_flak_tp_4_2_4(action, held, moved, marched):
    """TP 1.6.1, 4.2.4 (reading, docs/epic-turn.md §9): Advance, Double, March and a Hold that moves
    (a failed March) are moves, −1 to end-phase flak; a March that passed its test bars flak."""
    c = compile_turn(load(formation("Wing", "attacker", "fighter", 1), formation("Guard", "defender", "rifleman", 3),
                          formation("Flak", "defender", "flak-tank", 1), activation("Wing", "ground_attack", "Guard")))
    turn = Turn(c.compiled, c.weapons, None)
    act = Activation(formation="Flak", action=action, target="Wing" if action in FIRING_ACTIONS else None)
    turn.note_movement(act, ActivationOutcome(acted=True, test_passed=not held))
    assert ("Flak" in turn.moved, "Flak" in turn.marched) == (moved, marched)


# -- spacecraft (TP 4.3.3, 4.3.4; epic-shooting §4.3, §12.7, §12.9) --------------------------------

def test_pin_point_attack_at_a_two_shield_war_engine_epic_shooting_12_9(exact):
    """TP 4.3.4, 2.2.9, 3.2.5; epic-shooting §12.9: one pin-point attack (MW2+, TK D3) at a war engine
    with both void shields up: P(hit) = 5/6, P(at least 1 damage) = 5/6 × 1/3 = 5/18 (3 damage past 2
    shields); titan-killer damage allows no save but invulnerable; 1 BM under fire + 1 per point."""
    parts = (formation("Fleet", "attacker", "cruiser", 1), formation("Titan", "defender", "walker", 1),
             activation("Fleet", "pin_point", "Titan"))
    dist = exact_turn(exact, load(*parts),
                      lambda o, t: (3 - t.by_name["Titan"].units[0].damage_left, o[0].attack.blast_markers_placed))
    assert dist == {(1, 2): F(5, 18), (0, 1): F(13, 18)}


def test_orbital_bombardment_on_a_small_formation_epic_shooting_12_7(exact):
    """TP 4.3.3, 1.9.8; epic-shooting §12.7: a 3 BP macro-weapon orbital bombardment (one 12 cm template,
    which by default covers all 4 Tacticals; a 7.5 cm one covers 3) hits each on 4+ and kills it (no
    save against a macro-weapon): kills 1/16, 1/4, 3/8, 1/4, 1/16; BMs = 1 + kills, no crossfire."""
    parts = (formation("Fleet", "attacker", "cruiser", 1), formation("Marines", "defender", "tactical", 4),
             activation("Fleet", "orbital_bombardment", "Marines"))
    dist = exact_turn(exact, load(*parts), lambda o, t: (o[0].attack.kills, o[0].attack.blast_markers_placed
                                                         if not o[0].attack.target_broke else -1))
    kills = {}
    for (k, _), p in dist.items():
        kills[k] = kills.get(k, 0) + p
    assert kills == {0: F(1, 16), 1: F(1, 4), 2: F(3, 8), 3: F(1, 4), 4: F(1, 16)}
    assert all(bm in (1 + k, -1) for k, bm in dist)


def test_reference_turn_matches_the_exact_ground_attack_at_5_sigma():
    """TP 4.2: the whole turn on the reference engine (fixed seed) against the exact values: kills
    13/36 and aircraft lost 5/18 within 5 standard errors."""
    result = epic.simulate(load(*GROUND_ATTACK), trials=4000, seed=7, engine="reference")
    entry = result["turn", "1"]
    for key, exact_mean in (("kills_mean", KILLS), ("aircraft_lost_mean", F(5, 18))):
        mean = entry[key]
        p = float(exact_mean)
        assert abs(mean.value - p) <= 5 * math.sqrt(p * (1 - p) / 4000), key


def test_reference_pin_point_matches_the_exact_value_at_5_sigma():
    """TP 4.3.4; epic-shooting §12.9: on the reference engine (fixed seed) the pin-point attack at the
    two-shield war engine places 1 + 5/18 BMs on average (1 under fire, 1 for the damage point)."""
    parts = (formation("Fleet", "attacker", "cruiser", 1), formation("Titan", "defender", "walker", 1),
             activation("Fleet", "pin_point", "Titan"))
    result = epic.simulate(load(*parts), trials=3000, seed=11, engine="reference")
    p = 5 / 18
    mean = result["turn", "1", "blast_markers_placed_mean"].value
    assert abs(mean - (1 + p)) <= 5 * math.sqrt(p * (1 - p) / 3000)


# -- bad input: one line, exit 2 ------------------------------------------------------------------

def one_error_line(result, *needles):
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in result.output, result.output
    for needle in needles:
        assert needle in lines[0], lines[0]


@pytest.mark.parametrize("text, needles", [
    (formation("Wing", "attacker", "rifleman", 2) + formation("Guard", "defender", "rifleman", 2)
     + activation("Wing", "ground_attack", "Guard"),
     ["turn[0].action", "needs a formation of aircraft", "allowed: advance"]),
    (formation("Wing", "attacker", "fighter", 2) + formation("Guard", "defender", "rifleman", 2)
     + activation("Wing", "advance", "Guard"), ["turn[0].action", "aircraft formation", "allowed: ground_attack"]),
    (formation("Wing", "defender", "fighter", 2) + '[[formations]]\nname = "Guard"\nside = "attacker"\ninitiative = 1\n'
     'units = [{ unit = "rifleman", count = 2, engaged = "bc" }]\n' + activation("Guard", "engage", "Wing"),
     ["turn[0].target", "never assaulted", "allowed: ground formations"]),
    (formation("Wing", "attacker", "fighter", 2).replace('count = 2 }', 'count = 2, engaged = "bc" }')
     + formation("Guard", "defender", "rifleman", 2) + activation("Wing", "ground_attack", "Guard"),
     ["formations[0].units[0].engaged", "never in an assault", 'allowed: "out"']),
    (formation("Wing", "attacker", "fighter", 2) + formation("Guard", "defender", "rifleman", 2)
     + activation("Wing", "ground_attack", "Guard", crossfire="true"), ["turn[0].crossfire", "allowed: false"]),
    (formation("Wing", "attacker", "fighter", 2) + formation("Guard", "defender", "rifleman", 2)
     + activation("Wing", "ground_attack", "Guard", flak='["Guard"]'),
     ["turn[0].flak[0]", "not an enemy ground formation with an AA weapon", "allowed: none"]),
    (formation("Wing", "attacker", "bomber", 1) + formation("Guard", "defender", "rifleman", 2)
     + activation("Wing", "ground_attack", "Guard", jink="true"), ["turn[0].jink", "bomber", "allowed: false"]),
    (formation("Fleet", "attacker", "cruiser", 1) + formation("Guard", "defender", "rifleman", 2)
     + activation("Fleet", "pin_point", "Guard"),
     ["turn[0].target", "has none", "allowed: formations with a war engine"]),
    (formation("Wing", "attacker", "fighter", 1) + formation("Flak", "defender", "flak-tank", 1)
     + formation("Guard", "defender", "rifleman", 2) + activation("Guard", "advance", "Wing"),
     ["turn[0].target", "only flak attacks aircraft"]),
    (formation("Wing", "attacker", "fighter", 1).replace("count = 1 }", 'count = 1, engaged = "out" }')
     + '[[formations]]\nname = "Guard"\nside = "defender"\n'
     'initiative = 1\nunits = [{ unit = "rifleman", count = 2, engaged = "bc" }]\n',
     ["formations[0]", "acts only in a turn scenario", "allowed: ground formations"]),
])
def test_bad_aircraft_input_is_one_line_exit_2(tmp_path, text, needles):
    """docs/epic-turn.md §9: ground_attack by a non-aircraft formation, another action for aircraft, an
    aircraft formation as an assault or shooting target, aircraft engaged, crossfire by aircraft (TP
    4.2.2), flak from a formation without AA, a jinking bomber (TP 4.2.3), a pin-point attack at a
    formation with no war engine (TP 4.3.4), aircraft in an assault scenario: one line naming file and
    field, exit 2."""
    path = tmp_path / "bad.toml"
    path.write_text(UNITS + text)
    result = CliRunner().invoke(main, ["epic", str(path), "-n", "10", "--engine", "reference"])
    one_error_line(result, str(path), *needles)


def test_aircraft_turn_runs_on_the_reference_engine_with_a_note(tmp_path, monkeypatch):
    """docs/epic-turn.md §7, §9: the Numba kernel does not run aircraft or spacecraft, so such a turn runs on
    the reference engine whatever the engine asked for: one note line on stderr before the run, the note in the
    result, and without --trials the reference engine's default trial count, not the kernel's million."""
    import wargame_odds.analysis.cli

    path = tmp_path / "air.toml"
    blocks = UNITS.split("[units.")  # without the war engines: only the aircraft keep it off the kernel
    without_war_engines = "[units.".join(b for b in blocks if not b.startswith(("bomber]", "walker]")))
    path.write_text(without_war_engines + "".join(GROUND_ATTACK))
    result = CliRunner().invoke(main, ["epic", str(path), "-n", "10", "--json"])
    assert result.exit_code == 0, result.output
    note = "the Numba kernel does not simulate ground_attack (aircraft and spacecraft) yet (turn[0].action)"
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("note: " + note), result.stderr
    data = json.loads(result.stdout)
    assert data["trials"] == 10 and any(n.endswith("reference engine: " + note) for n in data["notes"])
    assert epic.simulate(epic.load(path), trials=10).meta["engine"] == "reference"
    monkeypatch.setattr(wargame_odds.analysis.cli, "REFERENCE_DEFAULT_TRIALS", 12)
    assert json.loads(CliRunner().invoke(main, ["epic", str(path), "--json"]).stdout)["trials"] == 12


def test_kernel_refuses_a_formation_of_aircraft_that_does_not_act():
    """docs/epic-turn.md §9: a turn scenario holding aircraft runs on the reference engine only, even
    when they do not act (the kernel would rally their blast markers)."""
    from wargame_odds.analysis.epic.engine import turn_kernel_unsupported
    from wargame_odds.analysis.epic.turn_result import compile_turn

    model = load(formation("Guard", "attacker", "rifleman", 2), formation("Wing", "defender", "fighter", 1),
                 formation("Other", "defender", "rifleman", 2), activation("Guard", "advance", "Other"))
    assert turn_kernel_unsupported(compile_turn(model)) == ("formations[1]", "an aircraft formation")
