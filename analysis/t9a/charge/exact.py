"""Exact charge-roll probabilities by full enumeration of the dice (docs/t9a.md §4–§5).

Used by :func:`wargame_odds.analysis.t9a.charge_table` and the P(success)-against-distance curves; values are
:class:`fractions.Fraction`.
"""
from __future__ import annotations

from fractions import Fraction
from collections.abc import Iterable
from functools import lru_cache
from itertools import islice, product
from typing import TYPE_CHECKING

import numpy as np

from ...intake.errors import UserError
from ...intake.user_text import elide

from .model import DICE, MAX_ADVANCE_RATE, MAX_INCHES, MILLI, DiceRule, to_milli

if TYPE_CHECKING:
    import pandas as pd

MAX_TABLE_VALUES = 1000  # distances or Advance Rates of one charge table (t9a-table and charge_table alike)


@lru_cache(maxsize=None)
def outcomes(rule: DiceRule) -> dict[tuple[int, int], Fraction]:
    """P(kept total, highest die) for one charge roll (§3.2, §3.8)."""
    p = Fraction(1, 6 ** rule.n)
    out: dict[tuple[int, int], Fraction] = {}
    for dice in product(range(1, 7), repeat=rule.n):
        kept = sum(sorted(dice, reverse=True)[:rule.keep])
        key = (max(kept, rule.floor) + rule.add, max(dice))
        out[key] = out.get(key, Fraction(0)) + p
    return out


def p_reach(rule: DiceRule, needed_milli: int) -> Fraction:
    """P(roll * 1" >= needed), needed = distance - Advance Rate in milli-inches (§5.1)."""
    return sum((p for (t, _), p in outcomes(rule).items() if t * MILLI >= needed_milli), Fraction(0))


def failed_move_given_fail(rule: DiceRule, needed_milli: int) -> dict[int, Fraction]:
    """Distribution of the failed-move dice value given a failed roll (§3.4.1, §5.2): the highest
    real die, or the fixed move of the beta rule; spacing not applied."""
    fail = {}
    for (t, h), p in outcomes(rule).items():
        if t * MILLI < needed_milli:
            move = rule.fixed_fail_move if rule.fixed_fail_move is not None else h
            fail[move] = fail.get(move, Fraction(0)) + p
    total = sum(fail.values(), Fraction(0))
    return {m: q / total for m, q in sorted(fail.items())} if total else {}


def check_values(values, source: str, field: str, limit: float) -> list[float]:
    """``values`` (any iterable, read no further than :data:`MAX_TABLE_VALUES` + 1 items) as floats, at most
    :data:`MAX_TABLE_VALUES` of them, each a finite number from 0 to ``limit`` (the scenario bounds), else one
    UserError."""
    allowed = f"at most {MAX_TABLE_VALUES:,} numbers from 0 to {limit:g}"
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise UserError(source, field, f"got {elide(repr(values))}", f"a list of numbers ({allowed})")
    values = list(islice(values, MAX_TABLE_VALUES + 1))
    if len(values) > MAX_TABLE_VALUES:
        raise UserError(source, field, f"more than {MAX_TABLE_VALUES:,} values", allowed)
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) \
                or not 0 <= v <= limit:  # (nan fails both comparisons)
            raise UserError(source, field, f"got {v!r}", f"numbers from 0 to {limit:g}")
    return [float(v) for v in values]


def charge_table(distances, advance_rates, dice="2d6") -> pd.DataFrame:
    """P(charge roll reaches) for every distance x Advance Rate (x dice variant), exact.

    The probability is exact (``method = "exact"``), so its 95 % interval is the point itself.
    ``mean_failed_move`` is E[dice value of the failed move | failure] (NaN when it cannot fail).
    """
    variants = [dice] if isinstance(dice, str) else list(islice(dice, len(DICE) + 1)) if isinstance(dice, Iterable) \
        else [dice]
    if len(variants) > len(DICE) or not variants:
        raise UserError("charge_table", "dice", f"{len(variants)} dice variants",
                        f"1 to {len(DICE)} of {', '.join(DICE)}")
    for v in variants:
        if not isinstance(v, str) or v not in DICE:
            raise UserError("charge_table", "dice", f"unknown dice variant {v!r}", ", ".join(DICE))
    distances = check_values(distances, "charge_table", "distances", MAX_INCHES)
    advance_rates = check_values(advance_rates, "charge_table", "advance_rates", MAX_ADVANCE_RATE)
    rows = []
    for v in variants:
        rule = DICE[v]
        for a in advance_rates:
            for d in distances:
                need = to_milli(d) - to_milli(a)
                p = p_reach(rule, need)
                fm = failed_move_given_fail(rule, need)
                mean = float(sum((m * q for m, q in fm.items()), Fraction(0))) if fm else np.nan
                rows.append({"dice": v, "advance_rate": a, "distance": d, "needed": need / MILLI,
                             "p_success": float(p), "fraction": str(p), "ci95_lo": float(p),
                             "ci95_hi": float(p), "mean_failed_move": mean, "method": "exact"})
    import pandas as pd  # only for this table: a run does not import pandas

    return pd.DataFrame(rows)
