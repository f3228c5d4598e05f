"""The rules corrections of issue 11 §1 in the reference engine, one test per clause (exact fractions
or scripted dice).  The kernel is checked against the reference on scenarios combining them in
``test_kernel.py`` (``rule_corrections`` scenarios)."""
from fractions import Fraction as F

import pytest

from wargame_odds.analysis.epic.compile import ATTACKER, DEFENDER
from wargame_odds.analysis.epic.reference import (
    MACRO_WEAPON, ORDINARY, TITAN_KILLER, Hit, blast_marker_counts, extra_hits, loser_breaks, new_trial, rally,
    resolve_hits, roll_assault_attacks, result_modifiers, save_throw)

from test_reference import duel, formation

WAR_ENGINE = {"type": "WE", "armour": 5, "cc": 4, "ff": 4, "damage_capacity": 3}


# -- item 3: the reinforced-armour re-roll of a cover save uses the armour value ----------------------

def test_reinforced_armour_rerolls_a_failed_cover_save_on_its_armour(compile_epic, exact, scripted):
    """TP-FAQ Reinforced Armour, TP 2.1.11 (rules reference §6): defending infantry with armour 5+,
    cover 3+ and Reinforced Armour saves on 3+ and re-rolls a failure on 5+: 2/3 + 1/3 · 1/3 = 7/9."""
    compiled = duel(compile_epic, defender={"type": "INF", "armour": 5, "cc": 4,
                                            "special": ["reinforced-armour"]}, d_fields={"cover": 3})
    defender = compiled.units[1]
    saved = exact(lambda rng: save_throw(rng, defender, Hit(ORDINARY, False)))
    assert saved[True] == F(7, 9)
    rng = scripted([2, 4])  # the cover save fails; a 4 is no armour save
    assert save_throw(rng, defender, Hit(ORDINARY, False)) is False and rng.exhausted


def test_reinforced_armour_sniper_reroll_is_on_armour_minus_one(compile_epic, exact):
    """TP-FAQ Reinforced Armour, TP 2.1.14: a sniper hit worsens both the cover save and the armour
    re-roll by 1: 1/2 + 1/2 · 1/6 = 7/12."""
    compiled = duel(compile_epic, defender={"type": "INF", "armour": 5, "cc": 4,
                                            "special": ["reinforced-armour"]}, d_fields={"cover": 3})
    saved = exact(lambda rng: save_throw(rng, compiled.units[1], Hit(ORDINARY, True)))
    assert saved[True] == F(7, 12)


# -- item 4: a formation with no living unit holds no blast markers -----------------------------------

def test_wiped_out_intermingled_formation_adds_no_markers(compile_epic):
    """TP 1.12.10 (the markers *on* the intermingled formations), rules reference §2.6 "held now": a
    partner with 3 BMs and no living unit adds none, so the surviving defender has "no BMs" (+1) and
    the attacker, with 1 BM, gets no "enemy has more BMs"."""
    compiled = duel(compile_epic, a_fields={"blast_markers": 1},
                    extra_formations=[formation("D2", "defender", [("d", 2, "bc")], blast_markers=3)])
    trial = new_trial(compiled, None)
    for unit in trial.formations[2].units:
        unit.alive = False
    assert blast_marker_counts(trial, DEFENDER) == (0, 0)
    assert (1, "no BMs") in result_modifiers(trial, DEFENDER)
    assert not any("enemy has more BMs" in why for _, why in result_modifiers(trial, 1 - DEFENDER))


def test_wiped_out_broken_formation_counts_no_units_as_markers(compile_epic):
    """TP 1.12.10, 1.13.4: a broken partner counts BMs = its units, so 0 once none is left."""
    compiled = duel(compile_epic, extra_formations=[formation("D2", "defender", [("d", 2, "bc")], broken=True)])
    trial = new_trial(compiled, None)
    assert blast_marker_counts(trial, DEFENDER) == (2, 2)
    for unit in trial.formations[2].units:
        unit.alive = False
    assert blast_marker_counts(trial, DEFENDER) == (0, 0)


# -- item 2: a broken war-engine formation that rallies counts its starting DC --------------------------

def test_broken_war_engine_formation_rallies_to_half_its_starting_dc(compile_epic, scripted):
    """TP 3.0 (a WE is worth its starting DC in units), TP 1.14.1, rules reference §5: a broken
    formation of a DC-3 war engine and one infantry unit (size 4) rallies to ⌊4/2⌋ = 2 BMs."""
    compiled = duel(compile_epic, extra_units={"we": WAR_ENGINE},
                    d_groups=[("we", 1, "bc"), ("d", 1, "bc")], d_fields={"broken": True, "initiative": 1})
    rng = scripted([6])
    trial = new_trial(compiled, rng)
    assert rally(trial, trial.formations[1]) is True and rng.exhausted
    assert (trial.formations[1].broken, trial.formations[1].blast_markers) == (False, 2)


def test_broken_tsknf_war_engine_formation_rallies_to_its_starting_dc(compile_epic, scripted):
    """TP 3.0, TP-SR TSKNF: a TSKNF broken formation keeps BMs = its size, a WE counting its starting DC."""
    compiled = duel(compile_epic, extra_units={"we": WAR_ENGINE}, d_groups=[("we", 1, "bc")],
                    d_fields={"broken": True, "initiative": 1, "army_rules": ["they-shall-know-no-fear"]})
    trial = new_trial(compiled, scripted([6]))
    trial.formations[1].units[0].damage_left = 1  # damage does not change its worth
    assert rally(trial, trial.formations[1]) is True
    assert trial.formations[1].blast_markers == 3


# -- item 5: extra hits on a damaged war engine -------------------------------------------------------

def test_extra_hits_beyond_a_damaged_war_engines_remaining_dc_are_lost(compile_epic):
    """Rules reference §2.10, §9.6, TP 1.12.7 ("as you would hits inflicted in the assault"): when a
    damaged DC-3 war engine with 1 DC left comes first, it takes a block of 3 hits; 2 are lost and
    the unit behind it is not touched; a 4th hit reaches it."""
    compiled = duel(compile_epic, extra_units={"we": WAR_ENGINE}, d_groups=[("we", 1, "bc"), ("d", 1, "bc")])
    for hits, alive in ((3, [False, True]), (4, [False, False])):
        trial = new_trial(compiled, None)
        we, d = trial.formations[1].units
        we.damage_left = 1
        extra_hits(trial, DEFENDER, hits)
        assert [we.alive, d.alive] == alive, hits


# -- item 8: Supreme Commander re-rolls are the army's, one per SC per turn, never a re-roll's re-roll ---

SC_UNITS = {"sc": {"type": "INF", "armour": 4, "cc": 4, "special": ["supreme-commander"]}}


def test_supreme_commander_reroll_serves_another_formation_of_the_army(compile_epic, exact):
    """TP 2.1.15 (one re-roll per SC per turn for the army): a formation without an SC, 3+ at −1
    (p = 1/2), re-rolls a failure on the SC of another formation of its side: 3/4."""
    compiled = duel(compile_epic, extra_units=SC_UNITS, d_groups=[("sc", 1, "bc")],
                    extra_formations=[formation("D2", "defender", [("d", 2, "out")], initiative=3,
                                                blast_markers=2)])

    def rally_d2(rng):
        trial = new_trial(compiled, rng)
        return rally(trial, trial.formations[2])

    assert exact(rally_d2)[True] == F(3, 4)


def test_two_supreme_commanders_never_reroll_a_reroll(compile_epic, exact):
    """TP 2.1 Re-rolls (no die re-rolled twice), TP 2.1.15: with two SCs a broken 3+ formation (p =
    1/3) passes 1 − (2/3)² = 5/9, not 1 − (2/3)³; the second re-roll is left for another formation."""
    compiled = duel(compile_epic, extra_units=SC_UNITS, d_groups=[("sc", 2, "bc")],
                    d_fields={"broken": True, "initiative": 3, "enemy_within_30cm": False})

    def rally_d(rng):
        trial = new_trial(compiled, rng)
        passed = rally(trial, trial.formations[1])
        return passed, trial.sc_rerolls[DEFENDER]

    outcomes = exact(rally_d)
    assert outcomes[(True, 2)] + outcomes[(True, 1)] == F(5, 9)
    assert outcomes[(False, 1)] == F(4, 9)


# -- item 9: a withdrawing broken war engine takes 1 damage per enemy unit within 15 cm ------------------

def test_withdrawing_war_engine_takes_a_damage_per_enemy_unit_within_15cm(compile_epic, scripted):
    """Rules reference §2.7, TP 3.2.4: a DC-3 war engine whose formation breaks and withdraws with 2
    enemy units within 15 cm takes 2 damage, no save, and survives with 1 DC, whatever ``trapped`` (which
    still decides the infantry: draw 0.5 < 1.0 kills it)."""
    compiled = duel(compile_epic, extra_units={"we": WAR_ENGINE}, d_groups=[("we", 1, "bc"), ("d", 1, "bc")],
                    d_fields={"trapped": 1.0, "withdrawal_enemies_within_15cm": 2})
    rng = scripted([0.5])
    trial = new_trial(compiled, rng)
    loser_breaks(trial, trial.formations[1])
    assert rng.exhausted
    we, d = trial.formations[1].units
    assert (we.alive, we.damage_left, d.alive) == (True, 1, False)


def test_war_engine_withdrawing_again_after_a_failed_rally_takes_the_damage_again(compile_epic, scripted):
    """Rules reference §2.7, §5 (a broken formation that fails its rally withdraws again), TP 3.2.4:
    a DC-3 war engine with 2 DC left and 2 enemy units within 15 cm is destroyed."""
    compiled = duel(compile_epic, extra_units={"we": WAR_ENGINE}, d_groups=[("we", 1, "bc")],
                    d_fields={"broken": True, "initiative": 6, "withdrawal_enemies_within_15cm": 2})
    rng = scripted([1])
    trial = new_trial(compiled, rng)
    trial.formations[1].units[0].damage_left = 2
    assert rally(trial, trial.formations[1]) is False and rng.exhausted
    assert not trial.formations[1].units[0].alive


# -- item 1: macro-weapon and titan-killer hits are a second (and third) allocation ---------------------

def _volley_casualties(compiled, hits):
    def run(rng):
        trial = new_trial(compiled, rng)
        resolve_hits(trial, ATTACKER, hits)
        return sum(not u.alive for u in trial.formations[1].units), trial.kills[ATTACKER]
    return run


def test_macro_weapon_hits_are_allocated_to_the_survivors_of_the_ordinary_hits(compile_epic, exact):
    """TP 1.9.6, 2.2.6, rules reference §2.3: one ordinary and one macro-weapon hit on a formation of
    a 4+ infantry unit (nearest) and a 4+ Reinforced Armour vehicle.  The ordinary hit is saved first
    (1/2); the MW hit then goes to the nearest survivor: the infantry (no save) if it lived, else the
    vehicle (RA save 4+).  Casualties: 1 with 3/4, 2 with 1/4 (one shared round-robin would give
    0: 1/4, 1: 1/2, 2: 1/4)."""
    compiled = duel(compile_epic, extra_units={"tank": {"type": "AV", "armour": 4, "cc": 4,
                                                        "special": ["reinforced-armour"]}},
                    d_groups=[("d", 1, "bc"), ("tank", 1, "bc")])
    hits = [Hit(MACRO_WEAPON, False), Hit(ORDINARY, False)]
    assert exact(_volley_casualties(compiled, hits)) == {(1, 1): F(3, 4), (2, 2): F(1, 4)}


def test_titan_killer_hits_come_after_the_macro_weapon_hits(compile_epic, exact):
    """TP 2.2.6, 2.2.9, rules reference §2.3: adding a titan-killer hit, allocated last to the nearest
    survivor with no armour save even with Reinforced Armour, kills both units whatever the dice."""
    compiled = duel(compile_epic, extra_units={"tank": {"type": "AV", "armour": 4, "cc": 4,
                                                        "special": ["reinforced-armour"]}},
                    d_groups=[("d", 1, "bc"), ("tank", 1, "bc")])
    hits = [Hit(TITAN_KILLER, False), Hit(MACRO_WEAPON, False), Hit(ORDINARY, False)]
    assert exact(_volley_casualties(compiled, hits)) == {(2, 2): F(1)}


def test_macro_weapon_hits_start_again_from_the_nearest_survivor(compile_epic, exact):
    """TP 1.9.6, 2.2.6: after 2 ordinary hits on two 4+ infantry units (nearest first), a MW hit goes
    to the nearest survivor, not to the third unit the shared round-robin would have reached (where
    it always killed it): the third unit dies only if both in front died, 1/4."""
    compiled = duel(compile_epic, extra_units={"far": {"type": "INF", "armour": 6, "cc": 4}},
                    d_groups=[("d", 2, "bc"), ("far", 1, "ff")])

    def far_alive(rng):
        trial = new_trial(compiled, rng)
        resolve_hits(trial, ATTACKER, [Hit(ORDINARY, False)] * 2 + [Hit(MACRO_WEAPON, False)])
        return trial.formations[1].units[2].alive

    assert exact(far_alive) == {True: F(1) - F(1, 4), False: F(1, 4)}


# -- item 7: skimmers and support craft force a firefight ---------------------------------------------

SKIMMERS = {"falcon": {"type": "AV", "armour": 4, "cc": 6, "ff": 3, "special": ["skimmer"]},
            "kopta": {"type": "LV", "armour": 5, "cc": 3, "ff": 5, "special": ["support-craft"]},
            "vyper": {"type": "LV", "armour": 5, "cc": 4, "ff": 4, "special": ["skimmer"]}}


def _main_hits(compiled, side, dice, scripted):
    rng = scripted(dice)
    hits = len(roll_assault_attacks(new_trial(compiled, rng), side, first_strike=False))
    assert rng.exhausted
    return hits


def test_enemy_of_a_firefighting_skimmer_uses_ff(compile_epic, scripted):
    """TP 2.1.13, rules reference §6: a skimmer in contact choosing FF (3+ beats its CC 6+) makes the
    enemy unit in contact use FF too: the defender (CC 2+, FF 6+) misses on a 5."""
    compiled = duel(compile_epic, defender={"type": "INF", "armour": 4, "cc": 2, "ff": 6},
                    extra_units=SKIMMERS, a_groups=[("falcon", 1, "bc")])
    assert _main_hits(compiled, DEFENDER, [5], scripted) == 0
    assert _main_hits(compiled, ATTACKER, [3], scripted) == 1


def test_support_craft_always_fights_at_ff(compile_epic, scripted):
    """TP 2.1.20: a support craft in contact attacks at FF (5+) even though its CC (3+) is better,
    and its enemy in contact uses FF as well."""
    compiled = duel(compile_epic, defender={"type": "INF", "armour": 4, "cc": 2, "ff": 6},
                    extra_units=SKIMMERS, a_groups=[("kopta", 1, "bc")])
    assert _main_hits(compiled, ATTACKER, [4], scripted) == 0
    assert _main_hits(compiled, DEFENDER, [5], scripted) == 0


def test_skimmer_without_a_better_ff_and_other_contacts_keep_close_combat(compile_epic, scripted):
    """TP 2.1.13 (the choice is the skimmer's: with FF no better than CC it fights in contact) and
    §9.13 (without a map, the enemy uses FF only when every unit it could be in contact with fights
    at FF): beside a skimmer with CC = FF, the defender keeps CC 2+ and hits on a 2."""
    compiled = duel(compile_epic, defender={"type": "INF", "armour": 4, "cc": 2, "ff": 6},
                    extra_units=SKIMMERS, a_groups=[("falcon", 1, "bc"), ("vyper", 1, "bc")])
    assert _main_hits(compiled, DEFENDER, [2], scripted) == 1


# -- item 6: a war engine's close-combat and firefight dice ---------------------------------------------

SPLIT_DEFENDERS = {"near": {"type": "INF", "cc": 4, "ff": 4}, "far": {"type": "INF", "cc": 4, "ff": 4}}
TWO_DC_ENGINE = {"type": "WE", "armour": 5, "cc": 4, "ff": 4, "damage_capacity": 2}


def _engine_against_near_and_far(compile_epic, defenders=(("near", 1, "bc"), ("far", 1, "ff")), **group):
    """A 2-DC war engine (CC 4+, FF 4+) in base contact with ``group`` keys (e.g. ``cc_dice``) against
    save-less infantry: "near" in base contact, "far" not."""
    engine = {"unit": "we", "count": 1, "engaged": "bc", **group}
    return compile_epic({"we": TWO_DC_ENGINE, **SPLIT_DEFENDERS}, [
        {**formation("A", "attacker", [("we", 1, "bc")]), "units": [engine]},
        formation("D", "defender", list(defenders))])


def _engine_volley(compiled):
    """The war engine's main dice, allocated and saved: which defenders are still alive."""
    def run(rng):
        trial = new_trial(compiled, rng)
        resolve_hits(trial, ATTACKER, roll_assault_attacks(trial, ATTACKER, first_strike=False))
        return tuple(u.alive for u in trial.formations[1].units)
    return run


def test_war_engine_cc_dice_hit_contacts_and_ff_dice_the_others(compile_epic, exact):
    """TP 3.1.2, rules reference §2.10: with ``cc_dice = 1`` a 2-DC war engine in base contact rolls
    1 die at CC, whose hit reaches only the unit in contact, and 1 at FF, whose hit reaches only the
    unit not in contact: each dies with 1/2, independently.  (One round-robin of both hits over both
    units gave the unit in contact 3/4 and the other 1/4.)"""
    compiled = _engine_against_near_and_far(compile_epic, cc_dice=1)
    quarter = F(1, 4)
    assert exact(_engine_volley(compiled)) == {(True, True): quarter, (True, False): quarter,
                                               (False, True): quarter, (False, False): quarter}


def test_war_engine_in_contact_uses_all_dice_at_cc_on_the_contacts_by_default(compile_epic, exact):
    """TP 3.1.2, rules reference §2.10: without ``cc_dice`` a war engine in base contact rolls all its
    dice at CC, and CC hits reach only units in base contact: the unit not in contact never dies, the
    one in contact dies with 1 − (1/2)² = 3/4 (one round-robin gave the other unit 1/4)."""
    compiled = _engine_against_near_and_far(compile_epic)
    assert exact(_engine_volley(compiled)) == {(False, True): F(3, 4), (True, True): F(1, 4)}


def test_war_engine_ff_hits_with_no_unit_out_of_contact_are_lost(compile_epic, exact):
    """TP 3.1.2: with ``cc_dice = 0`` in base contact every die is at FF and may only hit units not in
    base contact; with none there, the hits are lost (spec §2) and the unit in contact survives."""
    compiled = _engine_against_near_and_far(compile_epic, defenders=[("near", 1, "bc")], cc_dice=0)
    assert exact(_engine_volley(compiled)) == {(True,): F(1)}


def test_war_engine_not_in_contact_rolls_every_die_at_ff_on_any_unit(compile_epic, exact):
    """TP 3.1.2, TP-FAQ First Strike: a war engine with no enemy fighting in contact attacks at FF with
    all its dice, whatever ``cc_dice``, and its hits may reach every directly engaged unit: 2 FF 4+
    dice round-robin over two ``ff`` units from the nearest (1 hit: the first dies; 2: both).  Guards the
    reading; the old engine did the same."""
    compiled = _engine_against_near_and_far(compile_epic, defenders=[("near", 1, "ff"), ("far", 1, "ff")], cc_dice=2)
    assert exact(_engine_volley(compiled)) == {(True, True): F(1, 4), (False, True): F(1, 2),
                                               (False, False): F(1, 4)}


def test_cc_dice_only_for_a_war_engine_and_at_most_its_starting_dc(compile_epic):
    """TP 3.1.2: ``cc_dice`` splits a war engine's starting-DC dice: 0..DC, and only on a WE group."""
    for group, unit, message in (({"cc_dice": 3}, "we", "cc_dice: allowed 0 to 2"),
                                 ({"cc_dice": -1}, "we", "cc_dice"),
                                 ({"cc_dice": 1}, "near", "cc_dice: only a war engine")):
        with pytest.raises(ValueError, match=message):
            compile_epic({"we": TWO_DC_ENGINE, **SPLIT_DEFENDERS}, [
                {**formation("A", "attacker", []), "units": [{"unit": unit, "count": 1, "engaged": "bc", **group}]},
                formation("D", "defender", [("near", 1, "bc")])])
