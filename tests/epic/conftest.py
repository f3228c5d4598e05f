"""Fixtures for the Epic reference-engine tests (the helpers are in epic_helpers.py):

* ``scripted(values)``: a ``random.Random`` that returns the given dice in order;
* ``exact(fn)``: the exact distribution of ``fn(rng)`` over every dice sequence it can consume;
* ``compile_epic(units, formations, **top)``: a compiled scenario from plain dicts.
"""
from __future__ import annotations

import pytest
from epic_helpers import ScriptedRandom, build, exact_distribution


@pytest.fixture
def scripted():
    return ScriptedRandom


@pytest.fixture
def exact():
    return exact_distribution


@pytest.fixture
def compile_epic():
    return build
