"""Helpers for the Epic reference-engine tests (imported by tests that need them directly, and offered
as fixtures by conftest.py).

* ``ScriptedRandom(values)``: a ``random.Random`` that returns the given dice (``randint``) and uniform
  draws (``random``) in order and raises :class:`OutOfDice` when the script runs out;
* ``exact_distribution(fn)``: the exact distribution of ``fn(rng)`` over every dice sequence it can
  consume (depth-first over scripted prefixes), as ``{result: Fraction}``;
* ``exact_by_faces(fn, faces)``: the same over D6 faces standing for classes of faces, the same classes
  for every die or each rule step's own (keyed by the engine function that rolls the die);
* ``build(units, formations, **top)``: a compiled scenario from plain dicts;
* ``compare_results(a, b)``: every leaf of two results compared at ``SIGMAS`` standard errors (two
  engines, or two stream layouts), returning the differences found.
"""
from __future__ import annotations

import math
import random
import sys
from fractions import Fraction

from scipy.stats import hypergeom, norm

from wargame_odds.analysis.epic.compile import compile_scenario
from wargame_odds.analysis.epic.model import EpicScenario
from wargame_odds.analysis.output.estimates import Distribution, Mean, Probability

SIGMAS = 5.0


#: Dice helpers between a rule step and ``randint``: :func:`rolling_step` looks past them.
DICE_HELPERS = frozenset({"randint", "random", "_next", "roll_d6", "roll_d3", "roll"})


class OutOfDice(Exception):
    """The scripted generator was asked for a value beyond its script."""

    def __init__(self, low: int, high: int, step: str = "?"):
        super().__init__(f"script exhausted: asked for randint({low}, {high}) in {step}")
        self.low, self.high, self.step = low, high, step


def rolling_step() -> str:
    """The name of the engine function that asks for the die being rolled (``roll_to_hit``,
    ``save_roll``, ...): the nearest caller that is not a dice helper."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_name in DICE_HELPERS:
        frame = frame.f_back
    return frame.f_code.co_name if frame is not None else "?"


class ScriptedRandom(random.Random):
    def __init__(self, values):
        super().__init__(0)
        self.values = list(values)
        self.used = 0

    def _next(self, low, high):
        if self.used == len(self.values):
            raise OutOfDice(low, high, rolling_step())
        value = self.values[self.used]
        self.used += 1
        return value

    def randint(self, a, b):
        value = self._next(a, b)
        assert isinstance(value, int) and a <= value <= b, f"scripted {value!r} is not a randint({a}, {b})"
        return value

    def random(self):
        value = self._next(0, 0)
        assert isinstance(value, float), f"scripted {value!r} is not a uniform draw"
        return value

    @property
    def exhausted(self) -> bool:
        return self.used == len(self.values)


class _PathRandom(random.Random):
    """Follows a prefix of dice, then takes the lowest face of each further die, noting its range."""

    def __init__(self, prefix):
        super().__init__(0)
        self.prefix, self.taken, self.ranges = prefix, [], []

    def randint(self, a, b):
        value = self.prefix[len(self.taken)] if len(self.taken) < len(self.prefix) else a
        self.taken.append(value)
        self.ranges.append((a, b))
        return value

    def random(self):
        raise AssertionError("exact distributions cover dice only, no uniform draws")


def exact_distribution(fn) -> dict:
    """{fn(rng): probability} over all dice sequences ``fn`` can consume (dice only, no ``random()``):
    depth first, each sequence run once (the dice beyond a prefix take their lowest face, and the
    other faces become new prefixes)."""
    distribution: dict = {}
    stack = [()]
    while stack:
        prefix = stack.pop()
        rng = _PathRandom(prefix)
        result = fn(rng)
        for i in range(len(prefix), len(rng.taken)):
            low, high = rng.ranges[i]
            stack += [tuple(rng.taken[:i]) + (v,) for v in range(low + 1, high + 1)]
        p = Fraction(1)
        for low, high in rng.ranges:
            p /= high - low + 1
        distribution[result] = distribution.get(result, 0) + p
    assert sum(distribution.values()) == 1
    return distribution


def build(units: dict, formations: list[dict], **top):
    data = {"system": "epic", "units": units, "formations": formations, **top}
    return compile_scenario(EpicScenario.model_validate(data))


#: The two-sided tail of ``SIGMAS`` standard normal deviations: the level of every count comparison.
ALPHA = 2 * norm.sf(SIGMAS)


def _check_counts(where, k1, n1, k2, n2, failures):
    """Two binomial counts (``k1`` of ``n1`` trials, ``k2`` of ``n2``) by Fisher's exact test: given their
    total, ``k2`` is hypergeometric when the two rates are equal; two-sided p-value (twice the smaller
    tail) against :data:`ALPHA`.  Where the counts are large this is the two-sample z-test at ``SIGMAS``;
    where they are a handful (a rare distribution value) the normal approximation would call chance a
    failure (2 of 1 M against 1 of 12,000 reads as 5.1σ by z, and has a two-sided p of about 0.07)."""
    total = k1 + k2
    if total == 0:
        return
    population = n1 + n2
    p_value = min(1.0, 2 * min(hypergeom.cdf(k2, population, total, n2), hypergeom.sf(k2 - 1, population, total, n2)))
    if p_value < ALPHA:
        failures.append(f"{where}: {k1}/{n1} = {k1 / n1:.5f} v {k2}/{n2} = {k2 / n2:.5f} "
                        f"({norm.isf(p_value / 2):.1f} sigma, exact p = {p_value:.2g})")


def _check_mean(where, m1: Mean, m2: Mean, failures):
    if m1.n == 0 or m2.n == 0:
        if m1.n != m2.n:
            failures.append(f"{where}: a mean over {m1.n} v {m2.n} trials")
        return
    se = math.sqrt(m1.sd ** 2 / m1.n + m2.sd ** 2 / m2.n)
    diff = abs(m1.value - m2.value)
    if diff > SIGMAS * se + 1e-12:
        failures.append(f"{where}: mean {m1.value:.5f} v {m2.value:.5f} ({diff / se if se else math.inf:.1f} sigma)")


def compare_results(kernel, reference, distribution_values: bool = True) -> list[str]:
    """Every leaf of two results: probabilities and (if ``distribution_values``) every distribution
    value by Fisher's exact test at the two-sided level of 5σ, means (of the distributions too) by
    Welch's standard error at 5σ.  Returns the failures."""
    failures = []
    ref_leaves = dict(reference.leaves())
    kernel_leaves = dict(kernel.leaves())
    if set(ref_leaves) != set(kernel_leaves):
        return [f"different quantities: {sorted(set(ref_leaves) ^ set(kernel_leaves))}"]
    n1, n2 = kernel.trials, reference.trials
    for path, leaf in kernel_leaves.items():
        other = ref_leaves[path]
        where = "/".join(path)
        if isinstance(leaf, Probability):
            _check_counts(where, leaf.k, n1, other.k, n2, failures)
        elif isinstance(leaf, Mean):
            _check_mean(where, leaf, other, failures)
        elif isinstance(leaf, Distribution):
            a = dict(zip(leaf.values.tolist(), leaf.counts.tolist()))
            b = dict(zip(other.values.tolist(), other.counts.tolist()))
            for v in sorted(set(a) | set(b)) if distribution_values else ():
                _check_counts(f"{where}[{v}]", a.get(v, 0), n1, b.get(v, 0), n2, failures)
            _check_mean(where + " (mean)", leaf.mean(), other.mean(), failures)
        else:
            raise TypeError(f"{where}: unexpected leaf {leaf!r}")
    return failures


def exact_by_faces(fn, faces: dict) -> dict:
    """Like the ``exact`` fixture, but each D6 takes only the representative ``faces`` (a face
    standing for a class of faces with the class's probability).  Valid only when every threshold
    the dice meet lies on a class boundary; each caller says why its classes are exact.

    ``faces`` may instead map rule steps (the engine function rolling the die, see :func:`rolling_step`)
    to their own classes, so that each die is split only at its own threshold (a to-hit roll at 4+ in two
    classes, a save at 5+ in two others, rather than both in the three classes 1–3, 4, 5–6); a die rolled
    by a step without classes fails the enumeration."""
    by_step = all(isinstance(key, str) for key in faces)
    for classes in faces.values() if by_step else (faces,):
        assert sum(classes.values()) == 1
    distribution: dict = {}
    stack = [((), Fraction(1))]
    while stack:
        prefix, p = stack.pop()
        try:
            result = fn(ScriptedRandom(prefix))
        except OutOfDice as need:
            assert (need.low, need.high) == (1, 6)
            assert not by_step or need.step in faces, f"a die rolled by {need.step}, which has no face classes"
            classes = faces[need.step] if by_step else faces
            stack += [(prefix + (face,), p * w) for face, w in classes.items()]
            continue
        distribution[result] = distribution.get(result, 0) + p
    assert sum(distribution.values()) == 1
    return distribution
