"""Helpers for the Epic reference-engine tests, offered as fixtures.

* ``scripted(values)``: a ``random.Random`` that returns the given dice (``randint``) and uniform
  draws (``random``) in order and raises :class:`OutOfDice` when the script runs out;
* ``exact(fn)``: the exact distribution of ``fn(rng)`` over every dice sequence it can consume
  (depth-first over scripted prefixes), as ``{result: Fraction}``;
* ``compile_epic(units, formations, **top)``: a compiled scenario from plain dicts.
"""
from __future__ import annotations

import random
from fractions import Fraction

import pytest

from analysis.epic.compile import compile_scenario
from analysis.epic.model import EpicScenario


class OutOfDice(Exception):
    """The scripted generator was asked for a value beyond its script."""

    def __init__(self, low: int, high: int):
        super().__init__(f"script exhausted: asked for randint({low}, {high})")
        self.low, self.high = low, high


class ScriptedRandom(random.Random):
    def __init__(self, values):
        super().__init__(0)
        self.values = list(values)
        self.used = 0

    def _next(self, low, high):
        if self.used == len(self.values):
            raise OutOfDice(low, high)
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


def exact_distribution(fn) -> dict:
    """{fn(rng): probability} over all dice sequences ``fn`` can consume (dice only, no ``random()``)."""
    distribution: dict = {}
    stack = [((), Fraction(1))]
    while stack:
        prefix, p = stack.pop()
        try:
            result = fn(ScriptedRandom(prefix))
        except OutOfDice as need:
            faces = range(need.low, need.high + 1)
            stack += [(prefix + (v,), p / len(faces)) for v in faces]
            continue
        distribution[result] = distribution.get(result, 0) + p
    assert sum(distribution.values()) == 1
    return distribution


def build(units: dict, formations: list[dict], **top):
    data = {"system": "epic", "units": units, "formations": formations, **top}
    return compile_scenario(EpicScenario.model_validate(data))


@pytest.fixture
def scripted():
    return ScriptedRandom


@pytest.fixture
def exact():
    return exact_distribution


@pytest.fixture
def compile_epic():
    return build
