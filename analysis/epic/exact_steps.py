"""Epic steps with a handful of outcomes, computed exactly with fractions (``docs/epic-engine.md`` §8).

- the end-phase rally (TP 1.14.1, 2.1.8, 2.1.15, TP-SR Mob Rule / They Shall Know No Fear);
- the action test (TP 1.6.2, 1.6.3, 2.1.15; TP-FAQ The Action Test);
- the assault result roll (TP 1.12.7): each side's highest of 2D6 plus its modifiers.

The regroup roll is :mod:`wargame_odds.analysis.epic.regroup`.  Every die is enumerated, so each probability is a
fraction and its 95 % interval is the value itself.
"""
from __future__ import annotations

from fractions import Fraction
from itertools import product

import numpy as np

from ..intake.bounds import MAX_BLAST_MARKERS
from ..intake.errors import ArgumentError
from ..output.estimates import ExactDistribution, ExactProbability
from ..output.result import Result
from ..run.runner import RunInfo

D6 = range(1, 7)
TWO_D6 = list(product(D6, repeat=2))
MOB_RULE_STEPS = ((10, 2), (5, 1))  # TP-SR Mob Rule: +2 with more than 10 units, +1 with more than 5
MAX_UNITS = 1000  # a formation's units (war engines count their damage capacity)
MAX_MODIFIER = 100


def whole_number(name: str, value, low: int, high: int) -> int:
    """``value`` as an int if it is a whole number from ``low`` to ``high``; else an ArgumentError."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not low <= value <= high:
        raise ArgumentError(name, value, f"a whole number from {low} to {high}")
    return int(value)


def switch(name: str, value) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise ArgumentError(name, value, "True or False")
    return bool(value)


def exact_result(system: str, title: str, tree: dict, meta: dict, outcomes: int, dice: str) -> Result:
    """A result whose estimates are exact: ``outcomes`` equally likely rolls of ``dice``."""
    info = RunInfo(trials=outcomes, seed=0, extra={"method": "exact"})
    return Result(system=system, title=title, info=info, tree=tree, meta=meta | {"method": "exact"},
                  notes=[f"exact: every probability is enumerated over the {outcomes} rolls of {dice}, so each "
                         "interval is the value itself"])


def d6_test(target: int, modifier: int, reroll: bool = False, natural_one_fails: bool = False) -> Fraction:
    """P(D6 + modifier ≥ target); a natural 1 passes unless ``natural_one_fails`` (TP 1.6.2, TP-FAQ The
    Action Test; §9.9 switch); with ``reroll`` a failed test is rolled once more (TP 2.1.15, 2.1 Re-rolls)."""
    single = Fraction(sum(r + modifier >= target and not (natural_one_fails and r == 1) for r in D6), 6)
    return 1 - (1 - single) ** 2 if reroll else single


# -- rally (end phase) -----------------------------------------------------------------------------

def rally_modifier(broken: bool, enemy_within_30cm: bool, mob_rule: bool, units: int) -> int:
    """−2 broken, −1 enemy within 30 cm, Mob Rule +1 (> 5 units) / +2 (> 10) (TP 1.14.1, TP-SR Mob Rule)."""
    modifier = -2 * broken - enemy_within_30cm
    if mob_rule:
        modifier += next((bonus for more_than, bonus in MOB_RULE_STEPS if units > more_than), 0)
    return modifier


def markers_after_pass(blast_markers: int, broken: bool, units: int, leaders: int, tsknf: bool) -> int:
    """BMs held after a passed rally (TP 1.14.1, 2.1.8, TP-SR TSKNF): unbroken, remove half rounded up;
    broken, take BMs = units and remove half rounded up (TSKNF: keep BMs = units); then 1 more per
    Leader (TSKNF: 2); never below 0."""
    per_leader = 2 if tsknf else 1
    if broken:
        kept = units if tsknf else units // 2
    else:
        kept = blast_markers - (blast_markers + 1) // 2
    return max(kept - per_leader * leaders, 0)


def exact_rally(initiative: int, blast_markers: int = 0, broken: bool = False, units: int = 1, leaders: int = 0,
                enemy_within_30cm: bool = False, army_rules=(), supreme_commander_reroll: bool = False,
                natural_one_fails: bool = False) -> Result:
    """P(pass), P(still broken) and the BMs held after one end-phase rally test, exact."""
    from typing import get_args

    from .model import ArmyRule

    initiative = whole_number("initiative", initiative, 1, 6)
    blast_markers = whole_number("blast_markers", blast_markers, 0, MAX_BLAST_MARKERS)
    units = whole_number("units", units, 1, MAX_UNITS)
    leaders = whole_number("leaders", leaders, 0, MAX_UNITS)
    broken, enemy_within_30cm, reroll, natural_one_fails = (
        switch(n, v) for n, v in (("broken", broken), ("enemy_within_30cm", enemy_within_30cm),
                                  ("supreme_commander_reroll", supreme_commander_reroll),
                                  ("natural_one_fails", natural_one_fails)))
    allowed_rules = get_args(ArmyRule)
    if not isinstance(army_rules, (list, tuple)) or len(army_rules) > len(allowed_rules) \
            or not all(isinstance(rule, str) and rule in allowed_rules for rule in army_rules):
        raise ArgumentError("army_rules", army_rules, f"a list of {', '.join(allowed_rules)}")
    tsknf, mob_rule = "they-shall-know-no-fear" in army_rules, "mob-rule" in army_rules
    modifier = rally_modifier(broken, enemy_within_30cm, mob_rule, units)
    passes = d6_test(initiative, modifier, reroll, natural_one_fails)
    after_pass = markers_after_pass(blast_markers, broken, units, leaders, tsknf)
    after_fail = 0 if broken else blast_markers  # a broken formation holds none: it withdraws again
    held: dict[int, Fraction] = {}
    for markers, p in ((after_pass, passes), (after_fail, 1 - passes)):
        held[markers] = held.get(markers, Fraction(0)) + p
    markers_dist = ExactDistribution({k: p for k, p in held.items() if p} or {after_fail: Fraction(1)})
    tree = {"rally": {"passes": ExactProbability.of(passes),
                      "broken_after": ExactProbability.of(1 - passes if broken else Fraction(0)),
                      "blast_markers_after_mean": markers_dist.mean(),
                      "blast_markers_after": markers_dist}}
    state = "broken" if broken else f"{blast_markers} blast marker(s)"
    title = f"Rally on {initiative}+ ({state}, {units} unit(s), modifier {modifier:+d})"
    meta = {"initiative": initiative, "blast_markers": blast_markers, "broken": broken, "units": units,
            "leaders": leaders, "enemy_within_30cm": enemy_within_30cm, "army_rules": list(army_rules),
            "supreme_commander_reroll": reroll, "natural_one_fails": natural_one_fails, "modifier": modifier}
    return exact_result("epic-rally", title, tree, meta, 36 if reroll else 6,
                        "two D6 (the test and its re-roll)" if reroll else "a D6")


# -- action test -----------------------------------------------------------------------------------

def exact_action_test(initiative: int, blast_markers: int = 0, retain: bool = False, modifier: int = 0,
                      supreme_commander_reroll: bool = False) -> Result:
    """P(pass) of one action test: D6 ≥ initiative, −1 with any BM, −1 when retaining the initiative,
    plus an army-list ``modifier``; a 1 is not an automatic failure (TP 1.6.2, 1.6.3, 2.1.15)."""
    initiative = whole_number("initiative", initiative, 1, 6)
    blast_markers = whole_number("blast_markers", blast_markers, 0, MAX_BLAST_MARKERS)
    modifier = whole_number("modifier", modifier, -MAX_MODIFIER, MAX_MODIFIER)
    retain, reroll = switch("retain", retain), switch("supreme_commander_reroll", supreme_commander_reroll)
    total = modifier - (blast_markers > 0) - retain
    passes = d6_test(initiative, total, reroll)
    tree = {"action_test": {"passes": ExactProbability.of(passes)}}
    title = f"Action test on {initiative}+ (modifier {total:+d})"
    meta = {"initiative": initiative, "blast_markers": blast_markers, "retain": retain, "modifier": total,
            "supreme_commander_reroll": reroll}
    return exact_result("epic-action-test", title, tree, meta, 36 if reroll else 6,
                        "two D6 (the test and its re-roll)" if reroll else "a D6")


# -- the assault result roll -----------------------------------------------------------------------

def result_margins(attacker_modifier: int, defender_modifier: int, result_dice: str = "highest"
                   ) -> dict[int, Fraction]:
    """{attacker score − defender score: exact probability}; each score is the highest of 2D6 (switch
    "sum": their sum, §9.1) plus the side's modifiers (TP 1.12.7)."""
    keep = max if result_dice == "highest" else sum
    margins: dict[int, Fraction] = {}
    for a, d in product(TWO_D6, repeat=2):
        m = keep(a) + attacker_modifier - keep(d) - defender_modifier
        margins[m] = margins.get(m, Fraction(0)) + Fraction(1, len(TWO_D6) ** 2)
    return margins


def exact_assault_result(attacker_modifier: int = 0, defender_modifier: int = 0,
                         result_dice: str = "highest") -> Result:
    """P(attacker wins), P(tie), P(defender wins), P(attacker wins | no tie) and the margin of one
    result roll (TP 1.12.7): the loser takes extra hits equal to the margin; a tie means another round."""
    attacker_modifier = whole_number("attacker_modifier", attacker_modifier, -MAX_MODIFIER, MAX_MODIFIER)
    defender_modifier = whole_number("defender_modifier", defender_modifier, -MAX_MODIFIER, MAX_MODIFIER)
    if result_dice not in ("highest", "sum"):
        raise ArgumentError("result_dice", result_dice, "'highest' (TP 1.12.7) or 'sum'")
    margins = result_margins(attacker_modifier, defender_modifier, result_dice)
    win = sum((p for m, p in margins.items() if m > 0), Fraction(0))
    lose = sum((p for m, p in margins.items() if m < 0), Fraction(0))
    margin_dist = ExactDistribution(margins)
    tree = {"result": {"attacker_wins": ExactProbability.of(win),
                       "tie": ExactProbability.of(1 - win - lose),
                       "defender_wins": ExactProbability.of(lose),
                       "attacker_wins_if_decided": ExactProbability.of(win / (win + lose)),  # a tie is never certain
                       "margin_mean": margin_dist.mean(),
                       "margin": margin_dist}}
    title = f"Assault result roll: attacker {attacker_modifier:+d}, defender {defender_modifier:+d}"
    meta = {"attacker_modifier": attacker_modifier, "defender_modifier": defender_modifier,
            "result_dice": result_dice}
    return exact_result("epic-assault-result", title, tree, meta, len(TWO_D6) ** 2, "2D6 a side")
