"""Shared helpers of the T9A tests: paths, exact dice with icepool, 5-sigma comparisons."""
import math
from fractions import Fraction
from pathlib import Path

import icepool

from wargame_odds.analysis.output.estimates import Distribution, Mean, Probability

SCENARIOS = Path(__file__).resolve().parents[2] / "analysis" / "scenarios" / "t9a"
SIGMA = 5.0


def pool(dice: str):
    """icepool die of the kept charge-roll total, built independently of wargame_odds.analysis.t9a.charge.exact."""
    if dice == "2d6":
        return 2 @ icepool.d6
    if dice == "swiftstride":
        return icepool.d6.highest(3, 2)
    if dice == "champion_floor":
        return (2 @ icepool.d6).map(lambda t: max(t, 4))
    if dice == "beta_d6_plus_4":
        return icepool.d6 + 4
    raise ValueError(dice)


def prob(die, pred) -> Fraction:
    """Exact P(pred(outcome)) of an icepool die."""
    den = die.denominator()
    return Fraction(sum(q for o, q in die.items() if pred(o)), den)


def assert_p_near(est: Probability, exact, label=""):
    """Estimate within 5 binomial standard errors of an exact probability."""
    p = float(exact)
    if p in (0.0, 1.0):
        assert est.k == round(p * est.n), (label, est.k, est.n, p)
        return
    se = math.sqrt(p * (1 - p) / est.n)
    assert abs(est.p - p) <= SIGMA * se, f"{label}: {est.p} vs exact {p} (5 se = {SIGMA * se})"


def assert_same_p(k1, n1, k2, n2, label=""):
    """Two binomial estimates agree within 5 standard errors of their difference."""
    if k1 == 0 and k2 == 0 or k1 == n1 and k2 == n2:
        return
    p = (k1 + k2) / (n1 + n2)
    se = math.sqrt(p * (1 - p) * (1 / n1 + 1 / n2))
    assert abs(k1 / n1 - k2 / n2) <= SIGMA * se, f"{label}: {k1}/{n1} vs {k2}/{n2}"


def assert_same_mean(a: Mean, b: Mean, label=""):
    if a.n == 0 or b.n == 0:        # how often each side had data is compared as a probability
        return
    if a.sd == 0 and b.sd == 0:
        assert a.value == b.value, label
        return
    se = math.sqrt(a.sd ** 2 / a.n + b.sd ** 2 / b.n)
    assert abs(a.value - b.value) <= SIGMA * se, f"{label}: {a.value} vs {b.value}"


def assert_results_agree(r1, r2):
    """Every probability, mean and distribution bin of two results within 5 sigma."""
    leaves2 = dict(r2.leaves())
    checked = 0
    for path, a in r1.leaves():
        b = leaves2[path]
        label = "/".join(path)
        if isinstance(a, Probability):
            assert_same_p(a.k, a.n, b.k, b.n, label)
        elif isinstance(a, Mean):
            assert_same_mean(a, b, label)
        elif isinstance(a, Distribution):      # bins aligned by value (offsets may differ)
            for v in range(min(a.offset, b.offset), max(a.offset + len(a.counts), b.offset + len(b.counts))):
                ka = int(a.counts[v - a.offset]) if 0 <= v - a.offset < len(a.counts) else 0
                kb = int(b.counts[v - b.offset]) if 0 <= v - b.offset < len(b.counts) else 0
                assert_same_p(ka, max(a.n, 1), kb, max(b.n, 1), f"{label}[{v}]")
        checked += 1
    return checked
