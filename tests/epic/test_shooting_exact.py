"""Exact values of the Epic shooting steps (docs/epic-turn.md §3), as fractions.

Every distribution comes from running the engine's own shooting functions under every dice sequence
they can consume (depth-first over scripted dice), so these check the engine code.  The expected
values are the worked values of the shooting rules (to-hit table, saves, single shots, a Sustained
Fire attack, barrages), each test naming its clause.
"""
from __future__ import annotations

from fractions import Fraction as F

import pytest

from wargame_odds.analysis.epic.reference import new_trial
from wargame_odds.analysis.epic.shooting import (
    AP, AT, MW, FireOrders, ShotHit, allocate, barrage_row, roll_to_hit, save_roll, shoot)

from epic_helpers import ScriptedRandom, build, exact_by_faces


def mean(distribution):
    return sum(k * p for k, p in distribution.items())


# -- scenarios built from plain dicts ----------------------------------------------------------------

def infantry(armour, **extra):
    return {"type": "INF", "armour": armour, "cc": 4, "ff": 4, **extra}


def gun(**values):
    return {"name": "gun", "range": 45, **values}


def attack(shooter_units: list[tuple[str, int]], target_units: list[tuple[str, int]], units: dict,
           shooter_bm=0, target_bm=0, shooter_rules=(), target_rules=(), target_broken=False):
    """A compiled two-formation scenario and a function running one attack with fresh state."""
    formations = [
        {"name": "Shooters", "side": "attacker", "initiative": 1, "blast_markers": shooter_bm,
         "army_rules": list(shooter_rules),
         "units": [{"unit": u, "count": n, "engaged": "bc"} for u, n in shooter_units]},
        {"name": "Target", "side": "defender", "initiative": 1, "blast_markers": target_bm,
         "broken": target_broken, "army_rules": list(target_rules),
         "units": [{"unit": u, "count": n, "engaged": "bc"} for u, n in target_units]},
    ]
    compiled = build(units, formations)
    profiles = compiled.scenario.units

    def weapons_of(unit):
        return profiles[unit.slot.name.split(" + ")[0]].weapons

    def run(rng, orders=FireOrders(), log=None):
        trial = new_trial(compiled, rng, log)
        shooters, target = trial.formations
        report = shoot(trial, shooters, target, weapons_of, orders)
        return trial, target, report

    return run


def kills_of(run, orders=FireOrders()):
    return lambda rng: run(rng, orders)[2].kills


# -- to hit (TP 1.9.5) ----------------------------------------------------------------------------

def p_hit(value, modifier):
    """The to-hit rule restated: a natural 1 misses; 7/8/9 = a 6 then 4+/5+/6; 10+ impossible."""
    need = value - modifier
    if need >= 10:
        return F(0)
    if need <= 6:
        return F(7 - max(need, 2), 6)
    return F(1, 6) * F(10 - need, 6)


@pytest.mark.parametrize("value", range(2, 7))
@pytest.mark.parametrize("modifier", [1, 0, -1, -2, -3])
def test_to_hit_table_tp_1_9_5(exact, value, modifier):
    """TP 1.9.5 and its box "Needing 7+ to Hit": P(hit) for every printed value and net modifier."""
    assert exact(lambda rng: roll_to_hit(rng, value, modifier)[0])[True] == p_hit(value, modifier)


def test_to_hit_worked_values_tp_1_9_5(exact):
    """TP 1.9.5: the worked corners: 2+ at +1 is 5/6 (a natural 1 misses), 6+ at −3 is 1/36,
    needing 7/8/9 is 1/12, 1/18, 1/36, and 10 cannot hit (no die rolled)."""
    def hit(v, m):
        return exact(lambda rng: roll_to_hit(rng, v, m)[0]).get(True, F(0))

    assert (hit(2, 1), hit(6, -3), hit(4, -3), hit(5, -3)) == (F(5, 6), F(1, 36), F(1, 12), F(1, 18))
    assert (hit(6, -1), hit(6, -2), hit(6, -3), hit(6, -4)) == (F(1, 12), F(1, 18), F(1, 36), 0)
    assert roll_to_hit(ScriptedRandom([]), 6, -4) == (False, [])


# -- saves (TP 1.9.6, 2.1.6, 2.1.11; TP-FAQ Allocate Hits & Make Saving Throws) -------------------

def save_probability(exact, armour, kind=AP, crossfire=False, sniper=False, special=(), cover_save=None,
                     lance=False, ignore_cover=False):
    """P(one hit of ``kind`` is saved), through :func:`save_roll` (shooters without weapons: no dice)."""
    run = attack([("s", 1)], [("t", 1)], {"s": infantry(4), "t": infantry(armour, special=list(special))})

    def once(rng):
        trial, target, _ = run(ScriptedRandom([]))
        unit = target.units[0]
        trial.rng = rng
        return save_roll(trial, unit, ShotHit(kind, sniper=sniper, lance=lance, ignore_cover=ignore_cover),
                         cover_save, crossfire)
    return exact(once).get(True, F(0))


def p_save(value, worse=0, reroll=False, invulnerable=False):
    p = F(max(7 - value - worse, 0), 6) if value + worse < 7 else F(0)
    if reroll:
        p = 1 - (1 - p) ** 2
    if invulnerable:
        p = p + (1 - p) * F(1, 6)
    return p


@pytest.mark.parametrize("armour", range(2, 7))
def test_save_table_tp_1_9_6_2_1_6_2_1_11(exact, armour):
    """TP 1.9.6, 2.1.6, 2.1.11, 2.1.14, 1.11: plain, −1 (crossfire), −2 (crossfire and sniper,
    stacking), reinforced-armour re-roll, 6+ invulnerable, both; a save pushed to 7+ is no save."""
    got = [save_probability(exact, armour),
           save_probability(exact, armour, crossfire=True),
           save_probability(exact, armour, crossfire=True, sniper=True),
           save_probability(exact, armour, special=["reinforced-armour"]),
           save_probability(exact, armour, special=["invulnerable-save"]),
           save_probability(exact, armour, special=["reinforced-armour", "invulnerable-save"])]
    assert got == [p_save(armour), p_save(armour, 1), p_save(armour, 2), p_save(armour, reroll=True),
                   p_save(armour, invulnerable=True), p_save(armour, reroll=True, invulnerable=True)]


def test_save_table_worked_values():
    """Worked save values, rows 2+ and 6+: 35/36 and 11/36 with a re-roll, 211/216 and 91/216 with re-roll and
    invulnerable, 6+ at −1 is no save (TP 1.11 example: "impossible to save")."""
    assert (p_save(2, reroll=True), p_save(6, reroll=True)) == (F(35, 36), F(11, 36))
    with_invulnerable = (p_save(2, reroll=True, invulnerable=True), p_save(6, reroll=True, invulnerable=True))
    assert with_invulnerable == (F(211, 216), F(91, 216))
    assert p_save(6, 1) == 0


def test_macro_weapon_saves_tp_2_2_6(exact):
    """TP 2.2.6: no save against MW except reinforced armour, without its re-roll; an
    invulnerable save alone is 1/6; TK (TP 2.2.9) denies reinforced armour too."""
    assert save_probability(exact, 4, kind=MW) == 0
    assert save_probability(exact, 4, kind=MW, special=["reinforced-armour"]) == F(1, 2)
    assert save_probability(exact, 4, kind=MW, special=["invulnerable-save"]) == F(1, 6)
    assert save_probability(exact, 4, kind="TK", special=["reinforced-armour"]) == 0


def test_lance_and_ignore_cover_saves_tp_2_2_5_and_lance(exact):
    """TP-SR Eldar Technology: Lance hits allow no reinforced-armour re-roll; TP 2.2.5: Ignore
    Cover hits allow no cover save; TP 1.8.3: infantry use the better of armour and cover save."""
    assert save_probability(exact, 4, special=["reinforced-armour"], lance=True) == F(1, 2)
    assert save_probability(exact, 6, cover_save=4) == F(1, 2)
    assert save_probability(exact, 6, cover_save=4, ignore_cover=True) == F(1, 6)
    assert save_probability(exact, 6, cover_save=4, crossfire=True) == F(1, 3)  # TP-FAQ Crossfire: cover saves too


# -- one AP4+ shot at one 4+ stand (TP 1.9.5, 1.9.6, 1.11, 2.2.5) --------------------------------

SINGLE_SHOT_CASES = [  # (situation, orders, ignore cover, target armour, P(kill))
    ("open ground, Advance", FireOrders(), False, 4, F(1, 4)),
    ("in a building: −1 to hit, 4+ cover save", FireOrders(cover=True, cover_save=4), False, 4, F(1, 6)),
    ("touching an AV: −1 to hit, no cover save", FireOrders(cover=True), False, 4, F(1, 6)),
    ("open, Sustained Fire +1", FireOrders(modifier=1), False, 4, F(1, 3)),
    ("open, Double or Marshal −1", FireOrders(modifier=-1), False, 4, F(1, 6)),
    ("building, Sustained Fire", FireOrders(modifier=1, cover=True, cover_save=4), False, 4, F(1, 4)),
    ("open, crossfire", FireOrders(crossfire=True), False, 4, F(1, 3)),
    ("building, Ignore Cover weapon", FireOrders(cover=True, cover_save=4), True, 4, F(1, 4)),
    ("building, Double and crossfire", FireOrders(modifier=-1, cover=True, cover_save=4, crossfire=True), False, 4,
     F(1, 9)),
    ("Ork Boyz in the open", FireOrders(), False, 6, F(5, 12)),
    ("Ork Boyz in a building (4+ cover save)", FireOrders(cover=True, cover_save=4), False, 6, F(1, 6)),
]


@pytest.mark.parametrize("situation, orders, ignore_cover, armour, kill", SINGLE_SHOT_CASES,
                         ids=[c[0] for c in SINGLE_SHOT_CASES])
def test_one_ap4_shot_at_one_stand_tp_1_9_5_1_9_6(exact, situation, orders, ignore_cover, armour, kill):
    """Worked single-shot values (TP 1.9.5, 1.9.6, 1.8.3, 1.11, 2.2.5): P(kill) of one AP4+ shot, through the whole
    attack."""
    run = attack([("s", 1)], [("t", 1)], {"s": infantry(4, weapons=[gun(ap=4, ignore_cover=ignore_cover)]),
                                          "t": infantry(armour)})
    assert exact(kills_of(run, orders))[1] == kill


def test_tp_1_9_7_example_missile_shot_at_boyz(exact):
    """TP 1.9.7 example: an AP5+ missile shot (Advance) at an Ork Boy kills with 5/18."""
    run = attack([("s", 1)], [("t", 1)], {"s": infantry(4, weapons=[gun(ap=5, at=6)]), "t": infantry(6)})
    assert exact(kills_of(run))[1] == F(5, 18)


# -- a Sustained Fire attack (TP 1.9.2–1.9.7) ------------------------------------------------------

# each die split at its own threshold only: to hit 4+ (AP5+ at +1): {1,2,3} miss, {4,5,6} hit; save 5+:
# {1,...,4} fail, {5,6} save (the same values as the classes {1,2,3}, {4}, {5,6} for every die, far fewer runs)
SF_FACES = {"roll_to_hit": {1: F(1, 2), 4: F(1, 2)}, "save_roll": {1: F(2, 3), 5: F(1, 3)}}
SF_UNITS = {"s": infantry(4, weapons=[gun(ap=5)]), "t": infantry(5)}


def sustained_fire(shooter_bm=0, target_bm=0):
    run = attack([("s", 6)], [("t", 4)], SF_UNITS, shooter_bm=shooter_bm, target_bm=target_bm)

    def outcome(rng):
        trial, target, report = run(rng, FireOrders(modifier=1))
        return report.hits, report.kills, report.blast_markers_placed, report.target_broke
    return exact_by_faces(outcome, SF_FACES)


def marginal(distribution, index):
    out: dict = {}
    for key, p in distribution.items():
        out[key[index]] = out.get(key[index], 0) + p
    return out


def test_sustained_fire_attack_kills_and_blast_markers_tp_1_9():
    """Worked Sustained Fire attack (TP 1.9.3–1.9.7): 6 AP5+ shots on Sustained Fire at 4 stands saving on 5+: hits
    Bin(6, 1/2); kills 64/729, 773/2916, 329/972, 677/2916, 223/2916 (mean 35/18); BMs = 1 + kills
    (mean 53/18); broken (alive) 416/729."""
    d = sustained_fire()
    assert marginal(d, 0) == {0: F(1, 64), 1: F(3, 32), 2: F(15, 64), 3: F(5, 16), 4: F(15, 64), 5: F(3, 32),
                              6: F(1, 64)}
    assert marginal(d, 1) == {0: F(64, 729), 1: F(773, 2916), 2: F(329, 972), 3: F(677, 2916), 4: F(223, 2916)}
    assert mean(marginal(d, 1)) == F(35, 18)
    assert all(bms == 1 + kills for (_, kills, bms, _) in d)
    assert mean(marginal(d, 2)) == F(53, 18)
    assert marginal(d, 3)[True] == F(416, 729)


def test_sustained_fire_target_holding_a_marker_tp_1_9_7():
    """TP 1.9.7, 1.13.2: the same target already holding 1 BM breaks with 2437/2916."""
    assert marginal(sustained_fire(target_bm=1), 3)[True] == F(2437, 2916)


def test_sustained_fire_suppressed_shooter_tp_1_9_2():
    """TP 1.9.2: the shooters holding 1 BM lose one die: E[kills] 119/72, broken 971/1944."""
    d = sustained_fire(shooter_bm=1)
    assert mean(marginal(d, 1)) == F(119, 72)
    assert marginal(d, 3)[True] == F(971, 1944)


# -- suppression (TP 1.9.2; TP-SR They Shall Know No Fear) ---------------------------------------------------

@pytest.mark.parametrize("markers, rules, firing", [(0, (), 4), (1, (), 3), (3, (), 1), (5, (), 0),
                                                    (1, ("they-shall-know-no-fear",), 4),
                                                    (3, ("they-shall-know-no-fear",), 3),
                                                    (4, ("they-shall-know-no-fear",), 2)])
def test_suppression_back_units_first_tsknf_two_each_tp_1_9_2(markers, rules, firing):
    """TP 1.9.2, TP-SR TSKNF: each BM stops one unit (a Marine unit: 2 BMs, leftovers ignored),
    from the back; the front units fire (every die a 6 here: one die per firing shot)."""
    run = attack([("s", 4)], [("t", 8)], {"s": infantry(4, weapons=[gun(ap=2)]), "t": infantry(6)},
                 shooter_bm=markers, shooter_rules=rules)
    lines = []
    if firing == 0:
        trial, target, report = run(ScriptedRandom([]), log=lines.append)
        assert not report.fired and target.blast_markers == 0  # TP-FAQ Place Blast Marker: no fire, no BM
        return
    trial, target, report = run(ScriptedRandom([6] * firing + [1] * firing), log=lines.append)
    fired = [line for line in lines if "gun" in line and "Shooters: s" in line]
    assert [line.split(" gun")[0].rsplit(" ", 1)[1] for line in fired] == [str(i) for i in range(1, firing + 1)]
    assert report.hits == firing


# -- allocation (TP 1.9.6; TP-FAQ Allocate Hits & Make Saving Throws) --------------------------------------

def units_for(kinds: list[str]):
    types = {"INF": infantry(4), "LV": {"type": "LV", "armour": 5, "cc": 6, "ff": 5},
             "AV": {"type": "AV", "armour": 4, "cc": 6, "ff": 5}}
    compiled = build({k: v for k, v in types.items()}, [
        {"name": "A", "side": "attacker", "initiative": 1, "units": [{"unit": "INF", "count": 1, "engaged": "bc"}]},
        {"name": "T", "side": "defender", "initiative": 1,
         "units": [{"unit": k, "count": 1, "engaged": "bc"} for k in kinds]}])
    return new_trial(compiled, ScriptedRandom([])).formations[1].units


def test_allocation_front_to_back_one_each_before_seconds_tp_1_9_6():
    """TP 1.9.6: no unit takes a second hit before every eligible unit has one; AP hits skip AVs."""
    units = units_for(["INF", "AV", "INF", "INF"])
    pairs = allocate([ShotHit(AP)] * 5, units)
    assert [units.index(u) for _, u in pairs] == [0, 2, 3, 0, 2]


def test_light_vehicle_with_infantry_takes_at_first_faq():
    """TP-FAQ Allocate Hits & Make Saving Throws: with infantry, light vehicles take AT hits before
    AP hits, so that no hit is wasted (reading, docs/epic-turn.md §3.7)."""
    units = units_for(["LV", "INF"])
    pairs = allocate([ShotHit(AP), ShotHit(AT)], units)
    assert {(h.kind, units.index(u)) for h, u in pairs} == {(AT, 0), (AP, 1)}


def test_light_vehicle_with_armour_takes_ap_first_faq():
    """TP-FAQ Allocate Hits & Make Saving Throws: with armoured vehicles, light vehicles take AP
    hits before AT hits (reading, docs/epic-turn.md §3.7)."""
    units = units_for(["LV", "AV"])
    pairs = allocate([ShotHit(AT), ShotHit(AP)], units)
    assert {(h.kind, units.index(u)) for h, u in pairs} == {(AP, 0), (AT, 1)}


def test_macro_weapon_hits_after_normal_hits_tp_2_2_6(exact):
    """TP 1.9.6, 2.2.6: MW hits are allocated among the survivors of the normal hits, in a new
    round-robin.  One AP2+ and one MW2+ shot at 2 no-save stands: both die when both hit."""
    run = attack([("s", 1)], [("t", 2)], {"s": infantry(4, weapons=[gun(ap=2), gun(mw=2)]),
                                          "t": {"type": "INF", "cc": 6, "ff": 6}})
    d = exact(kills_of(run))
    assert d == {0: F(1, 36), 1: F(10, 36), 2: F(25, 36)}


# -- blast markers (TP 1.9.4, 1.11, 2.1.22, 2.2.2) -----------------------------------------------------------

def markers_placed(exact, weapon, target_special=(), orders=FireOrders(), count=2):
    run = attack([("s", 1)], [("t", count)], {"s": infantry(4, weapons=[weapon]),
                                              "t": {"type": "INF", "cc": 6, "ff": 6, "special": list(target_special)}})
    return exact(lambda rng: run(rng, orders)[2].blast_markers_placed)


def test_blast_markers_under_fire_and_per_kill_tp_1_9_4(exact):
    """TP 1.9.4: +1 for coming under fire, even with no hit, +1 per kill (AP4+ at no-save stands)."""
    assert markers_placed(exact, gun(ap=4)) == {1: F(1, 2), 2: F(1, 2)}


def test_crossfire_first_kill_doubles_tp_1_11(exact):
    """TP 1.11: in a crossfire the first casualty places 2 BMs, later ones 1."""
    assert markers_placed(exact, gun(ap=4, count=2), orders=FireOrders(crossfire=True)) == \
        {1: F(1, 4), 3: F(1, 2), 4: F(1, 4)}


def test_disrupt_one_marker_per_hit_saved_or_not_tp_2_2_2(exact):
    """TP 2.2.2: a disrupt hit places a BM whether saved or not, and its kill no second one."""
    run = attack([("s", 1)], [("t", 2)], {"s": infantry(4, weapons=[gun(ap=4, disrupt=True)]), "t": infantry(4)})
    assert exact(lambda rng: run(rng)[2].blast_markers_placed) == {1: F(1, 2), 2: F(1, 2)}


def test_expendable_deaths_place_no_marker_tp_2_1_22(exact):
    """TP 2.1.22: an Expendable death places no BM, unless the whole formation is Expendable."""
    run = attack([("s", 1)], [("t", 1), ("e", 1)], {"s": infantry(4, weapons=[gun(ap=2, count=2)]),
                                                    "t": {"type": "INF", "cc": 6, "ff": 6},
                                                    "e": {"type": "INF", "cc": 6, "ff": 6, "special": ["expendable"]}})
    d = exact(lambda rng: (lambda r: (r.kills, r.blast_markers_placed))(run(rng)[2]))
    assert d == {(0, 1): F(1, 36), (1, 2): F(10, 36), (2, 2): F(25, 36)}
    assert markers_placed(exact, gun(ap=2), target_special=["expendable"], count=1) == {1: F(1, 6), 2: F(5, 6)}


# -- break check and broken targets (TP 1.9.7, 1.13.2, 1.13.4) -------------------------------------------------

def test_break_check_only_after_the_whole_attack_tp_1_9_7():
    """TP 1.9.7: the target is checked once, after every weapon fired: 2 stands holding 1 BM take
    the under-fire BM (2 ≥ 2, but no check before the dice), then lose a stand: broken."""
    run = attack([("s", 1)], [("t", 2)], {"s": infantry(4, weapons=[gun(ap=2), gun(ap=2)]),
                                          "t": {"type": "INF", "cc": 6, "ff": 6}}, target_bm=1)
    lines = []
    trial, target, report = run(ScriptedRandom([2, 1]), log=lines.append)
    assert report.kills == 1 and report.target_broke and target.broken and target.blast_markers == 0
    assert sum("TP 1.9.7" in line for line in lines) == 1


def test_broken_target_takes_no_save_hits_instead_of_markers_tp_1_13_4(exact):
    """TP 1.13.4: a broken target's would-be BMs are hits with no save, front to back, and the
    deaths they cause place nothing: an AP6+ shot (a 6 hits) at 3 broken 2+ stands kills 1 by
    the under-fire hit, and the shot's own kill (1/6 × 1/6) adds a second."""
    run = attack([("s", 1)], [("t", 3)], {"s": infantry(4, weapons=[gun(ap=6)]), "t": infantry(2)},
                 target_broken=True)
    d = exact(lambda rng: (lambda r: (r.kills, r.blast_markers_placed))(run(rng)[2]))
    assert d == {(1, 0): F(35, 36), (3, 0): F(1, 36)}


def test_broken_tsknf_target_needs_two_markers_per_hit_tp_sr_tsknf(exact):
    """TP-SR TSKNF: a broken Marine formation takes one no-save hit per 2 would-be BMs."""
    run = attack([("s", 1)], [("t", 3)], {"s": infantry(4, weapons=[gun(ap=6)]), "t": infantry(2)},
                 target_broken=True, target_rules=["they-shall-know-no-fear"])
    d = exact(kills_of(run))
    assert d == {0: F(35, 36), 2: F(1, 36)}


# -- barrages (TP 1.9.8) ----------------------------------------------------------------------------

def test_barrage_table_tp_1_9_8():
    """TP 1.9.8: BP → templates, extra BMs, AP, AT, from the data file; above 18 BP the last row."""
    rows = {bp: (r.templates, r.extra_blast_markers, r.ap, r.at) for bp in range(1, 20) for r in [barrage_row(bp)]}
    assert rows[1] == (1, 0, 6, 6) and rows[2] == (1, 0, 5, 6) and rows[3] == (1, 0, 4, 5)
    assert rows[4] == rows[5] == (2, 0, 4, 5) and rows[6] == rows[7] == (2, 1, 4, 5)
    assert rows[8] == rows[9] == (3, 1, 4, 5) and rows[10] == rows[12] == (3, 2, 4, 5)
    assert rows[13] == rows[15] == (3, 3, 4, 5) and rows[16] == rows[18] == rows[19] == (3, 4, 4, 5)


BARRAGE_CASES = [  # (situation, target profile, orders, faces, kills distribution 0..4)
    ("4 Tactical stands (4+)", infantry(4), FireOrders(), {1: F(1, 2), 4: F(1, 2)},
     [F(81, 256), F(27, 64), F(27, 128), F(3, 64), F(1, 256)]),
    ("indirect on Sustained Fire (+1)", infantry(4), FireOrders(modifier=1), {1: F(1, 3), 3: F(1, 6), 4: F(1, 2)},
     [F(16, 81), F(32, 81), F(8, 27), F(8, 81), F(1, 81)]),
    ("4 Ork Boyz (6+)", infantry(6), FireOrders(), {1: F(1, 2), 4: F(1, 3), 6: F(1, 6)},
     [F(2401, 20736), F(1715, 5184), F(1225, 3456), F(875, 5184), F(625, 20736)]),
    ("4 Imperial Guard stands (no save)", {"type": "INF", "cc": 6, "ff": 5}, FireOrders(), {1: F(1, 2), 4: F(1, 2)},
     [F(1, 16), F(1, 4), F(3, 8), F(1, 4), F(1, 16)]),
]


@pytest.mark.parametrize("situation, target, orders, faces, kills", BARRAGE_CASES, ids=[c[0] for c in BARRAGE_CASES])
def test_three_bp_barrage_tp_1_9_8(situation, target, orders, faces, kills):
    """Worked barrage values, TP 1.9.8: a 3 BP barrage, one template over 4 units, one AP4+ roll per unit; each
    face class used is bounded by the thresholds met (hit 4+ or 3+, save 4+ or 6+)."""
    run = attack([("b", 1)], [("t", 4)], {"b": infantry(4, weapons=[gun(bp=3)]), "t": target})
    d = exact_by_faces(lambda rng: run(rng, FireOrders(templates_cover=4, modifier=orders.modifier))[2].kills, faces)
    assert [d.get(k, 0) for k in range(5)] == kills
    assert mean(d) == sum(k * p for k, p in enumerate(kills))


def test_barrage_on_armour_and_as_macro_weapon_tp_1_9_8_2_2_6(exact):
    """TP 1.9.8, 2.2.6: a Leman Russ (4+, reinforced armour) under a 3 BP barrage is hit on
    5+ (1/3) and killed with 1/12; a macro-weapon barrage kills a Tactical stand with 1/2."""
    russ = {"type": "AV", "armour": 4, "cc": 6, "ff": 5, "special": ["reinforced-armour"]}
    run = attack([("b", 1)], [("t", 1)], {"b": infantry(4, weapons=[gun(bp=3)]), "t": russ})
    assert exact(lambda rng: run(rng)[2].hits)[1] == F(1, 3)
    assert exact(kills_of(run))[1] == F(1, 12)
    run = attack([("b", 1)], [("t", 1)], {"b": infantry(4, weapons=[gun(bp=3, mw=4)]), "t": infantry(4)})
    assert exact(kills_of(run))[1] == F(1, 2)


def test_barrage_extra_markers_and_templates_tp_1_9_8(exact):
    """TP 1.9.8: six 1 BP guns make one 6 BP barrage: 2 templates (3 stands each by default) and
    +1 BM for the formation attacked; every IG stand is rolled once at AP4+."""
    run = attack([("b", 6)], [("t", 8)],
                 {"b": infantry(4, weapons=[gun(bp=1)]), "t": {"type": "INF", "cc": 6, "ff": 5}})
    d = exact_by_faces(lambda rng: (lambda r: (r.hits, r.blast_markers_placed - r.kills))(run(rng)[2]),
                       {1: F(1, 2), 4: F(1, 2)})
    assert marginal(d, 0) == {k: F([1, 6, 15, 20, 15, 6, 1][k], 64) for k in range(7)}
    assert set(marginal(d, 1)) == {2}  # 1 under fire + 1 extra, besides one per kill


# -- AP/AT choice, AT fire at infantry, snipers (TP 1.9.5, 1.9.6, 2.1.14; TP-FAQ Place Blast Marker, Sniper) ------

def test_ap_at_choice_per_weapon_tp_1_9_5(exact):
    """TP 1.9.5, TP-FAQ Roll To Hit: one type per weapon; "auto" picks the type that can land
    (AP at infantry, AT at armour); "ap"/"at" force it when the weapon has it."""
    units = {"s": infantry(4, weapons=[gun(ap=5, at=6)]), "i": infantry(4), "v": {"type": "AV", "armour": 4,
                                                                                     "cc": 6, "ff": 5}}
    at_infantry, at_armour = attack([("s", 1)], [("i", 2)], units), attack([("s", 1)], [("v", 2)], units)
    assert exact(kills_of(at_infantry))[1] == F(1, 3) * F(1, 2)  # AP5+, 4+ save
    assert exact(kills_of(at_armour))[1] == F(1, 6) * F(1, 2)  # AT6+, 4+ save
    assert exact(kills_of(at_infantry, FireOrders(ap_at="at"))) == {0: F(1)}  # forced AT: lost on infantry
    only_at = attack([("s", 1)], [("i", 2)], {**units, "s": infantry(4, weapons=[gun(at=4)])})
    assert exact(kills_of(only_at, FireOrders(ap_at="ap"))) == {0: F(1)}  # no AP value: it stays AT


# -- the default policies of docs/epic-turn.md §3.5: AP or AT, and the declaration at a mixed target ------

FORTRESS = {"type": "WE", "armour": 4, "cc": 4, "ff": 4, "damage_capacity": 3}  # a Battlefortress-like war engine


def harm_of(run, orders=FireOrders()):
    """(target units destroyed, damage on its war engines, BMs placed) of one attack."""
    def outcome(rng):
        _, target, report = run(rng, orders)
        damage = sum(u.slot.damage_capacity - u.damage_left for u in target.units if u.slot.type == "WE")
        return report.kills, damage, report.blast_markers_placed
    return outcome


def test_ap_at_choice_takes_the_larger_expected_kills_not_hits_policy_10_3(exact):
    """Default AP/AT policy (docs/epic-turn.md §3.5): AP4+/AT4+ at two 4+ infantry and a 6+ vehicle.  P(hit) ×
    units would say AP (1/2 × 2 > 1/2 × 1); expected kills say AT: AP 1/2 × 1/2 = 1/4 < AT 1/2 × 5/6 = 5/12.
    The vehicle dies with 5/12, the infantry never."""
    units = {"s": infantry(4, weapons=[gun(ap=4, at=4)]), "i": infantry(4), "v": {"type": "AV", "armour": 6,
                                                                                     "cc": 6, "ff": 5}}
    run = attack([("s", 1)], [("i", 2), ("v", 1)], units)

    def vehicle_dead(rng):
        _, target, _ = run(rng)
        return tuple(not u.alive for u in target.units)
    assert exact(vehicle_dead) == {(False, False, True): F(5, 12), (False, False, False): F(7, 12)}


def test_ap_at_tie_goes_to_ap_without_war_engines_policy_10_3(exact):
    """Default AP/AT policy, tie rule (docs/epic-turn.md §3.5): AP4+/AT4+ at a 4+ infantry stand and a 4+
    vehicle: 1/4 expected kills each, a tie, and the target has no war engine: AP, so only the infantry can die
    (1/2 × 1/2)."""
    units = {"s": infantry(4, weapons=[gun(ap=4, at=4)]), "i": infantry(4), "v": {"type": "AV", "armour": 4,
                                                                                     "cc": 6, "ff": 5}}
    run = attack([("s", 1)], [("v", 1), ("i", 1)], units)

    def dead(rng):
        _, target, _ = run(rng)
        return tuple(not u.alive for u in target.units)
    assert exact(dead) == {(False, True): F(1, 4), (False, False): F(3, 4)}


def test_ap_at_tie_goes_to_at_against_war_engines_tp_3_2_1_policy_10_3(exact):
    """Default AP/AT policy, tie rule, then the declaration (TP 3.2.1; docs/epic-turn.md §3.5): AP4+/AT4+ at a
    4+ infantry stand and a 4+ war engine (DC 3): AP 1/4 expected kills on the others, AT 1/4 expected damage on
    the war engines: a tie against a formation with a war engine goes to AT, declared at the war engines
    (1/4 ≥ 0 on the others): 1 damage with 1/4, the infantry untouched."""
    run = attack([("s", 1)], [("i", 1), ("w", 1)],
                 {"s": infantry(4, weapons=[gun(ap=4, at=4)]), "i": infantry(4), "w": FORTRESS})
    d = exact(harm_of(run))
    assert {(k, dmg) for k, dmg, _ in d} == {(0, 0), (0, 1)}
    assert sum(p for (k, dmg, _), p in d.items() if dmg == 1) == F(1, 4)


def test_we_declaration_tp_3_2_1_and_10_3_at_weapon_at_the_others_when_they_die_more(exact):
    """TP 3.2.1, default declaration (docs/epic-turn.md §3.5): one AT4+ shot at a war engine (4+, in front)
    and a 6+ vehicle: expected damage 1/2 × 1/2 = 1/4 < expected kills 1/2 × 5/6 = 5/12, so it is declared at
    the others and only the vehicle can die (5/12), though the war engine stands in front; forced at the war
    engines, the hit goes to it (1/4)."""
    units = {"s": infantry(4, weapons=[gun(at=4)]), "w": FORTRESS, "v": {"type": "AV", "armour": 6, "cc": 6,
                                                                           "ff": 5}}
    run = attack([("s", 1)], [("w", 1), ("v", 1)], units)
    auto = exact(harm_of(run))
    assert sum(p for (k, dmg, _), p in auto.items() if k == 1) == F(5, 12)
    assert all(dmg == 0 for _, dmg, _ in auto)
    forced = exact(harm_of(run, FireOrders(declare_at="war_engines")))
    assert sum(p for (k, dmg, _), p in forced.items() if dmg == 1) == F(1, 4)
    assert all(k == 0 for k, _, _ in forced)


@pytest.mark.parametrize("reinforced", [False, True])
def test_we_declaration_tp_3_2_1_and_10_3_macro_weapon_tie_at_the_war_engines(exact, reinforced):
    """TP 3.2.1, 2.2.6, default declaration (docs/epic-turn.md §3.5): one MW2+ shot at a war engine and two 6+
    Boyz.  Without reinforced armour the war engine has no save: 5/6 expected damage = 5/6 expected kills, at
    least as much, so the hit goes to the war engine (5/6); with reinforced armour it saves on 4+ (5/12 < 5/6),
    so a Boy dies with 5/6 and the war engine is never hurt."""
    engine = {**FORTRESS, "special": ["reinforced-armour"]} if reinforced else FORTRESS
    run = attack([("s", 1)], [("w", 1), ("b", 2)],
                 {"s": infantry(4, weapons=[gun(mw=2)]), "w": engine, "b": infantry(6)})
    d = exact(harm_of(run))
    hurt_engine = sum(p for (k, dmg, _), p in d.items() if dmg == 1)
    killed = sum(p for (k, dmg, _), p in d.items() if k == 1)
    assert (hurt_engine, killed) == ((0, F(5, 6)) if reinforced else (F(5, 6), 0))


def test_we_declaration_tp_3_2_1_and_10_3_counts_standing_void_shields(exact):
    """TP 3.2.1, TP-SR Imperial Void Shields, default declaration (docs/epic-turn.md §3.5): the same MW2+ shot at
    a war engine with 2 void shields up: its expected damage is max(5/6 − 2, 0) = 0 < 5/6 expected kills, so it
    goes at the Boyz (5/6) and no shield is touched."""
    run = attack([("s", 1)], [("w", 1), ("b", 2)],
                 {"s": infantry(4, weapons=[gun(mw=2)]), "w": {**FORTRESS, "void_shields": 2}, "b": infantry(6)})

    def outcome(rng):
        _, target, report = run(rng)
        return report.kills, target.units[0].void_shields
    assert exact(outcome) == {(1, 2): F(5, 6), (0, 2): F(1, 6)}


def test_we_declaration_tp_3_2_1_and_13_q10_ap_at_the_others_forced_declarations_lose_hits(exact):
    """TP 3.2.1, TP-FAQ Place Blast Marker, declaration per weapon before any dice (docs/epic-turn.md §3.5):
    an AP4+ weapon always goes at the others (a 6+ Boy dies with 1/2 × 5/6); declared at the war engines its
    hits are lost (AP cannot hurt a war engine), and an AT2+ weapon declared at the others (Boyz only) loses its
    hits: no kill, no damage, and the BM for coming under fire is still placed."""
    units = {"s": infantry(4, weapons=[gun(ap=4)]), "w": FORTRESS, "b": infantry(6)}
    run = attack([("s", 1)], [("w", 1), ("b", 1)], units)
    assert exact(harm_of(run))[(1, 0, 2)] == F(5, 12)
    assert exact(harm_of(run, FireOrders(declare_at="war_engines"))) == {(0, 0, 1): F(1)}
    at_gun = attack([("s", 1)], [("w", 1), ("b", 1)], {**units, "s": infantry(4, weapons=[gun(at=2)])})
    assert exact(harm_of(at_gun, FireOrders(declare_at="others"))) == {(0, 0, 1): F(1)}


def test_at_fire_at_infantry_places_only_the_under_fire_marker_faq(exact):
    """TP-FAQ Place Blast Marker, TP 1.9.6: AT-only fire at infantry cannot hurt it but still
    places the BM for coming under fire; its hits are lost."""
    run = attack([("s", 1)], [("t", 2)], {"s": infantry(4, weapons=[gun(at=2)]), "t": infantry(6)})
    assert exact(lambda rng: (lambda r: (r.kills, r.blast_markers_placed))(run(rng)[2])) == {(0, 1): F(1)}


def test_sniper_picks_the_leader_with_minus_one_save_tp_2_1_14(exact):
    """TP 2.1.14, TP-FAQ Sniper: a sniper hit goes to a unit the attacker picks (the Leader, second
    in line here) and saves at −1: a 4+ Leader saves on 5+, so an AP2+ sniper shot kills it with
    5/6 × 2/3 = 5/9 and never touches the front unit."""
    run = attack([("s", 1)], [("t", 1), ("boss", 1)],
                 {"s": infantry(4, weapons=[gun(ap=2, sniper=True)]), "t": infantry(4),
                  "boss": infantry(4, special=["leader"])})

    def victims(rng):
        trial, target, report = run(rng)
        return tuple(not u.alive for u in target.units)
    assert exact(victims) == {(False, True): F(5, 9), (False, False): F(4, 9)}


def test_barrage_and_direct_fire_one_under_fire_marker_reading_q4():
    """TP 1.9.4, 1.9.8, reading (docs/epic-turn.md §3.3): a formation firing a barrage and direct fire in one attack
    places one BM for coming under fire, not two (here nothing can hit: 6+ at −3 needs 9, 1/36).  Every die is a
    to-hit die needing a 6 (a 6, then a 6 for the 9), so the faces {1,...,5} and {6} decide each."""
    run = attack([("s", 1)], [("t", 3)], {"s": infantry(4, weapons=[gun(bp=1), gun(ap=6)]),
                                          "t": {"type": "INF", "cc": 6, "ff": 6}})
    d = exact_by_faces(lambda rng: (lambda r: (r.hits, r.blast_markers_placed - r.kills))(
        run(rng, FireOrders(modifier=-3))[2]), {"roll_to_hit": {1: F(5, 6), 6: F(1, 6)}})
    assert set(m for _, m in d) == {1}
    assert d[(0, 1)] == (1 - F(1, 36)) ** 4  # 3 units under the 1 BP template and 1 direct shot, all 9+


def test_light_vehicle_under_a_barrage_uses_the_ap_column_reading_q2(exact):
    """TP 1.9.8, reading (docs/epic-turn.md §3.6): a light vehicle under a 3 BP barrage is rolled on AP4+ (1/2),
    not AT5+ (1/3)."""
    run = attack([("b", 1)], [("t", 1)], {"b": infantry(4, weapons=[gun(bp=3)]),
                                          "t": {"type": "LV", "armour": 5, "cc": 6, "ff": 5}})
    assert exact(lambda rng: run(rng)[2].hits)[1] == F(1, 2)
