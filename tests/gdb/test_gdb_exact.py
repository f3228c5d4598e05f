"""Exact values: the placeholder morale ladders (docs/gdb.md §2.3) as fractions, and further full
sequences enumerated exactly."""
from fractions import Fraction as F

import pytest
from gdb_helpers import assert_counts_match_exact, counts_of, exact, make, slot

import wargame_odds.analysis.gdb as gdb
from wargame_odds.analysis.gdb import reference as ref

# placeholder ladder (docs/gdb.md §2.3), charger 2D6 + mod: PASS, HALT, WAVER, RETREAT, ROUT
CHARGER_5_3 = {
    -3: ("1/6", "1/9", "5/36", "11/36", "5/18"),
    -2: ("5/18", "5/36", "1/6", "1/4", "1/6"),
    -1: ("5/12", "1/6", "5/36", "7/36", "1/12"),
    0: ("7/12", "5/36", "1/9", "5/36", "1/36"),
    1: ("13/18", "1/9", "1/12", "1/12", "0"),
    2: ("5/6", "1/12", "1/18", "1/36", "0"),
    3: ("11/12", "1/18", "1/36", "0", "0"),
}
# placeholder ladder (docs/gdb.md §2.3), defender 2D6 + mod: PASS, WAVER, RETREAT, ROUT
DEFENDER_5_3 = {
    -3: ("1/6", "1/4", "11/36", "5/18"),
    -2: ("5/18", "11/36", "1/4", "1/6"),
    -1: ("5/12", "11/36", "7/36", "1/12"),
    0: ("7/12", "1/4", "5/36", "1/36"),
    1: ("13/18", "7/36", "1/12", "0"),
    2: ("5/6", "5/36", "1/36", "0"),
    3: ("11/12", "1/12", "0", "0"),
}


@pytest.mark.parametrize("mod", sorted(CHARGER_5_3))
def test_charger_ladder_5_3(mod):
    """§5.3 charger ladder, §2.3 placeholder bands, §2.1 step 4: P(result) of 2D6 + mod, exactly."""
    model = make(tables={"tables.morale.quality.line": mod})
    got = slot(model, exact(model), "charger")
    assert list(got[:5]) == [F(x) for x in CHARGER_5_3[mod]]
    assert got[5] == 0                                     # never eliminated without fire


@pytest.mark.parametrize("mod", sorted(DEFENDER_5_3))
def test_defender_ladder_5_3(mod):
    """§5.3 defender ladder, Q-A2 (no HALT), §2.1 step 5: with the charger always passing."""
    model = make(charger={"quality": "guard"}, tables={"tables.morale.quality.guard": 20,
                                                       "tables.morale.quality.line": mod})
    got = slot(model, exact(model), "defender")
    assert list(got[:4]) == [F(x) for x in DEFENDER_5_3[mod]]
    assert got[4] == 0                                     # always tested: the charger always passed


def test_whole_sequence_5_3():
    """§5.3 whole sequence, charger +1 / defender 0 (§2.1 steps 4–5, §2.4 outcome classes)."""
    model = make(charger={"quality": "veteran"})           # veteran +1, line 0, no fire
    out = dict(zip(ref.OUTCOMES, slot(model, exact(model), "outcome")))
    assert out["stopped_by_HALT"] == F(1, 9)
    assert out["stopped_by_WAVER"] == F(1, 12)
    assert out["stopped_by_RETREAT"] == F(1, 12)
    assert out["stopped_by_ROUT"] == 0
    assert out["contact_steady"] == F(91, 216)
    assert out["contact_wavering"] == F(13, 72)
    assert out["gives_way_caught"] + out["gives_way_escaped"] == F(13, 108)
    assert sum(out.values()) == 1


def test_published_1d6_example_as_user_table():
    """§5.3 published 1D6 example (Paul & Jan) entered as a user table: dice and bands are data (§2.3)."""
    bands = [{"min": 3, "result": "PASS"}, {"min": 1, "max": 2, "result": "WAVER"}, {"max": 0, "result": "ROUT"}]
    expected = {-3: ("1/6", "1/3", "1/2"), -2: ("1/3", "1/3", "1/3"), -1: ("1/2", "1/3", "1/6"),
                0: ("2/3", "1/3", "0"), 1: ("5/6", "1/6", "0"), 2: ("1", "0", "0")}
    for mod, (p, w, r) in expected.items():
        model = make(tables={"tables.morale.dice": 1, "tables.morale.charger_bands": bands,
                             "tables.morale.quality.line": mod})
        got = dict(zip(ref.CHARGER_KEYS, slot(model, exact(model), "charger")))
        assert (got["PASS"], got["WAVER"], got["ROUT"]) == (F(p), F(w), F(r))


def _fire_cas(total, figures):
    """Hand-written placeholder fire table (§2.2): casualty % by total, rounded half up."""
    pct = 0 if total <= 5 else 5 if total <= 7 else 10 if total <= 9 else 15 if total <= 11 else 20
    return (figures * pct + 50) // 100


def _two_d6():
    return [(a + b, F(1, 36)) for a in range(1, 7) for b in range(1, 7)]


def _ladder(mod, bands):
    out = {}
    for s, p in _two_d6():
        t = s + mod
        r = next(res for lo, res in bands if t >= lo)
        out[r] = out.get(r, 0) + p
    return out


CH = [(7, "PASS"), (6, "HALT"), (5, "WAVER"), (3, "RETREAT"), (-99, "ROUT")]
DF = [(7, "PASS"), (5, "WAVER"), (3, "RETREAT"), (-99, "ROUT")]


def _issue_scenario_by_hand(with_rifles=True):
    """The issue's scenario derived by hand from the §2.3 placeholder numbers (not the engine).

    52nd Foot: elite +1, at column +1; 20 figures in line fire 100 % at short range (4).
    Rifles: elite +1, at column +1; 8 skirmishers fire 100 % at short range (6).
    2e Legere: veteran +1, general +1, -1 per casualty (Q-A10); 52nd: elite +1 (defender)."""
    cas = {}
    rifles = _two_d6() if with_rifles else [(None, F(1))]
    for t1, p1 in _two_d6():
        for t2, p2 in rifles:
            c = _fire_cas(t1 + 2, 20) + (_fire_cas(t2 + 2, 8) if t2 is not None else 0)
            cas[c] = cas.get(c, 0) + p1 * p2
    charger, outcome = {}, {}
    d = _ladder(1, DF)
    for c, pc in cas.items():
        for r, pr in _ladder(2 - c, CH).items():
            charger[r] = charger.get(r, 0) + pc * pr
    outcome["contact_steady"] = charger["PASS"] * d["PASS"]
    outcome["contact_wavering"] = charger["PASS"] * d["WAVER"]
    outcome["gives_way_escaped"] = charger["PASS"] * (d["RETREAT"] + d.get("ROUT", 0))
    return cas, charger, outcome


def test_issue_scenario_without_rifles_exact():
    """§2.1 steps 1–5, §2.2 closing fire, Q-A10: engine enumeration = hand derivation, exactly."""
    model = gdb.load("analysis/scenarios/gdb/column_vs_line.toml")
    model = model.replace(supports=[])
    cas, charger, outcome = _issue_scenario_by_hand(with_rifles=False)
    probs = exact(model)
    got_cas = slot(model, probs, "casualties")
    assert {i: p for i, p in enumerate(got_cas) if p} == cas
    got = dict(zip(ref.CHARGER_KEYS, slot(model, probs, "charger")))
    assert {k: v for k, v in got.items() if v} == {k: v for k, v in charger.items() if v}
    out = dict(zip(ref.OUTCOMES, slot(model, probs, "outcome")))
    for k, v in outcome.items():
        assert out[k] == v, k


def test_issue_scenario_kernel_against_hand_exact():
    """Issue §1 scenario with both firers (§2.2, Q-A6): kernel within 5σ of the hand-derived values."""
    from gdb_helpers import assert_binomial

    model = gdb.load("analysis/scenarios/gdb/column_vs_line.toml")
    n = 400_000
    res = gdb.simulate(model, trials=n, seed=11)
    cas, charger, outcome = _issue_scenario_by_hand()
    casualties = res["casualties", "charger", "distribution"].counts
    for c in range(25):
        assert_binomial(casualties[c] if c < len(casualties) else 0, n, cas.get(c, 0), f"cas {c}")
    for r in ref.CHARGER_RESULTS:
        assert_binomial(res["charger", r].k, n, charger.get(r, 0), r)
    for k, v in outcome.items():
        assert_binomial(res["outcomes", k].k, n, v, k)


EXACT_SCENARIOS = {
    "cavalry_vs_square": lambda: gdb.load("analysis/scenarios/gdb/cavalry_vs_square.toml"),
    "forming_square": lambda: gdb.load("analysis/scenarios/gdb/cavalry_vs_forming_square.toml"),
    "countercharge_rear": lambda: make(charger={"arm": "cavalry", "charge_move": 18, "distance": 14,
                                                "position": "rear", "formed": False},
                                       target={"arm": "cavalry", "reaction": "countercharge"},
                                       rules={"flank_bonus_timing": "at_declaration"}),
    "flank_one_supporter_caught": lambda: make(
        charger={"arm": "cavalry", "charge_move": 18, "distance": 12, "position": "flank",
                 "friends_behind": [3.0, 7.0, 12.0], "general_attached": True},
        target={"reaction": "fire", "in_cover": True, "casualties_this_phase": 2},
        supports=[{"arm": "artillery", "quality": "guard", "formation": "line", "strength": 8, "range": 7}]),
    "flank_turned_to_face": lambda: make(charger={"position": "flank", "quality": "elite"},
                                         target={"reaction": "turn_to_face", "quality": "second_line"}),
    "percent_losses_skirmish": lambda: make(
        charger={"formation": "skirmish", "strength": 16, "distance": 5},
        target={"reaction": "fire", "quality": "guard", "formed": False},
        tables={"tables.morale.casualties.unit": "percent", "tables.morale.casualties.step": 10}),
}


@pytest.mark.parametrize("name", sorted(EXACT_SCENARIOS))
def test_kernel_against_exact_enumeration(name):
    """§2.1–§2.4 full sequences (Q-A3..Q-A8, Q-A10): kernel counts within 5σ of exact enumeration."""
    model = EXACT_SCENARIOS[name]()
    probs = exact(model)
    assert sum(slot(model, probs, "charger")) == 1
    n = 300_000
    res = gdb.simulate(model, trials=n, seed=5)
    assert_counts_match_exact(model, counts_of(res, model), n, probs)


def test_double_six_event_q_a9():
    """Q-A9: no automatic result on a double six, but the event is counted: exactly 1/36 per test."""
    model = make(charger={"quality": "veteran"})
    probs = exact(model)
    assert slot(model, probs, "charger_double_six")[0] == F(1, 36)
    assert slot(model, probs, "defender_double_six")[0] == F(1, 36) * F(13, 18)
