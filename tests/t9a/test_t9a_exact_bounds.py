"""The exact calculators of The 9th Age are bounded (issue 40 §3; docs/t9a.md, "Where the exact fight stops";
docs/limits.md): ``exact_combat`` refuses in one line what it cannot compute in bounded time, its arithmetic
neither overflows nor loses mass on large units, and ``charge_table`` reads no more of its inputs than its cap."""
import math
import time
from fractions import Fraction as F
from importlib.resources import files
from pathlib import Path

import pytest

import wargame_odds.analysis.t9a as t9a
from wargame_odds.analysis.intake.errors import ArgumentError, UserError
from wargame_odds.analysis.t9a.combat.exact import (
    MAX_EXACT_FIGHT_WORK, MAX_FIGHT_WORK, _unsaved, binomial, fight, fight_work)
from wargame_odds.analysis.t9a.charge.exact import MAX_TABLE_VALUES

from combat_cases import CASES, SPEARMEN, combat_model

SCENARIOS = Path(str(files("wargame_odds.analysis").joinpath("scenarios"))) / "t9a"
PART = {"name": "p", "attacks": 10, "offensive_skill": 10, "strength": 10, "armour_penetration": 10,
        "multiple_wounds": "4D6+10", "impact_hits": "4D6+10", "stomp_attacks": "4D6+10"}
#: The documented maxima: 1,000 models of 20 HP a side, 8 parts of 10 attacks each, 20 rounds.
LARGEST = dict(SPEARMEN, models=1000, width=1000, hp=20, attacks=[dict(PART, name=f"p{i}") for i in range(8)])


@pytest.mark.parametrize("units, rounds", [((LARGEST, LARGEST), 20),
                                           ((dict(SPEARMEN, models=200, hp=5), dict(SPEARMEN, models=200, hp=5)), 5)],
                         ids=["documented-maxima", "200-models-5-hp-5-rounds"])
@pytest.mark.parametrize("exact", [False, True])
def test_a_fight_too_large_for_the_exact_path_is_refused_at_once_in_one_line(units, rounds, exact):
    """At the documented maxima the fight raised OverflowError; 200 models of 5 HP for 5 rounds ran past 120 s.
    Both are refused before any step, in one line naming the limit and the way out (simulate)."""
    model = combat_model(charger_unit=units[0], target_unit=units[1], combat={"rounds": rounds})
    start = time.monotonic()
    with pytest.raises(ArgumentError) as refused:
        t9a.exact_combat(model, exact=exact)
    assert time.monotonic() - start < 5
    message = str(refused.value)
    limit = MAX_EXACT_FIGHT_WORK if exact else MAX_FIGHT_WORK
    assert len(message.splitlines()) == 1 and f"at most {limit:,} steps" in message
    assert "simulate()" in message and "docs/t9a.md" in message


def test_the_shipped_and_tested_fights_are_within_the_exact_path():
    """Every close combat the engines are checked against, and the shipped ones, stay inside both limits."""
    for name, keywords in CASES.items():
        assert fight_work(combat_model(**keywords).combat) <= MAX_EXACT_FIGHT_WORK, name
    for path in ("knights_charge_spear_block.toml", "ogres_charge_halberds.toml"):
        scenario = t9a.load(SCENARIOS / path)
        assert fight_work(scenario.combat) <= MAX_EXACT_FIGHT_WORK, path


def test_a_thousand_attacks_and_more_have_a_finite_binomial():
    """The float binomial of 5,000 attacks overflowed (comb(n, k) as a float); through logarithms it is finite and
    sums to 1, and it still equals the exact one on small n."""
    row = binomial(5000, 0.3)
    assert all(math.isfinite(x) for x in row) and math.fsum(row) == pytest.approx(1, abs=1e-9)
    assert max(range(5001), key=row.__getitem__) == 1500
    for n, p in ((7, F(5, 27)), (20, F(1, 3))):
        assert binomial(n, float(p)) == pytest.approx([float(x) for x in binomial(n, p)], rel=1e-12, abs=1e-300)
    assert binomial(4, 0.0) == [1.0, 0, 0, 0, 0] and binomial(4, 1.0) == [0, 0, 0, 0, 1.0]


def test_wounds_beyond_the_targets_hp_are_folded_into_it_exactly():
    """min(Binomial(n, p), cap): the tail beyond the HP the target has is one value, exactly its mass."""
    n, p, cap = 30, F(2, 7), 6
    folded = _unsaved(n, p, cap)
    full = dict(enumerate(binomial(n, p)))
    assert sum(folded.values()) == 1 and max(folded) == cap
    assert folded[cap] == sum(q for k, q in full.items() if k >= cap)
    assert all(folded[k] == full[k] for k in range(cap))


@pytest.mark.parametrize("case", ["beasts_vs_halberds", "stubborn_halberds_vs_beasts"])
def test_folding_losses_beyond_the_hp_changes_no_probability(case, monkeypatch):
    """The fight with HP losses folded at the target's HP is, in fractions, exactly the fight without folding
    (Multiple Wounds D3, Impact Hits and Stomp included)."""
    from wargame_odds.analysis.t9a.combat import exact as combat_exact

    combat = combat_model(**CASES[case]).combat
    folded = fight(combat, exact=True)
    add, unsaved = combat_exact._add, combat_exact._unsaved
    monkeypatch.setattr(combat_exact, "_add", lambda a, b, cap=None: add(a, b))
    monkeypatch.setattr(combat_exact, "_unsaved", lambda n, p, cap=None: unsaved(n, p))
    combat_exact._step_damage.cache_clear()
    try:
        unfolded = fight(combat, exact=True)
    finally:
        combat_exact._step_damage.cache_clear()
    assert folded == unfolded


@pytest.mark.parametrize("exact", ["no", 1, None])
def test_exact_is_a_flag(exact):
    """``exact="no"`` was truthy, and gave fractions."""
    with pytest.raises(ArgumentError, match="exact must be True or False"):
        t9a.exact_combat(combat_model(), exact=exact)


@pytest.mark.parametrize("values", [range(10**8), range(MAX_TABLE_VALUES + 1), iter(range(10**12))],
                         ids=["range-1e8", "1001-values", "endless"])
def test_charge_table_refuses_more_than_its_cap_before_reading_it(values):
    """``range(10**8)`` was read whole (MemoryError) and 1,001 values were accepted; now more than 1,000 values are
    refused after reading 1,001 of them."""
    start = time.monotonic()
    with pytest.raises(UserError, match=f"more than {MAX_TABLE_VALUES:,} values"):
        t9a.charge_table(values, [5])
    assert time.monotonic() - start < 5


def test_charge_table_takes_exactly_its_cap_and_refuses_a_text_or_a_number():
    assert len(t9a.charge_table([k / 10 for k in range(MAX_TABLE_VALUES)], [5])) == MAX_TABLE_VALUES
    for wrong in ("6,8", 6, None):
        with pytest.raises(UserError, match="a list of numbers"):
            t9a.charge_table(wrong, [5])
    with pytest.raises(UserError, match="dice"):
        t9a.charge_table([6], [5], dice=["2d6"] * 9)
