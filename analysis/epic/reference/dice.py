"""Dice of the reference engine (mirrors ``kernels/epic/dice.py``): a D6 is ``rng.randint(1, 6)``, a D3
``rng.randint(1, 3)`` (TP 1.0.1); a trapped draw is ``rng.random()``
(:func:`wargame_odds.analysis.epic.reference.breaks.withdraw`).
"""
from __future__ import annotations

import random


def roll_d6(rng: random.Random) -> int:
    """One D6 (TP 1.0.1)."""
    return rng.randint(1, 6)


def roll_d3(rng: random.Random) -> int:
    """One D3 (TP 1.0.1)."""
    return rng.randint(1, 3)
