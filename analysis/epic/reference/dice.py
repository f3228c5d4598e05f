"""Dice of the reference engine (mirrors ``kernels/epic/dice.py``): a D6 is ``rng.choice(D6)``, a D3
``rng.choice(D3)`` (TP 1.0.1); a trapped draw is ``rng.random()``
(:func:`wargame_odds.analysis.epic.reference.breaks.withdraw`).  ``choice`` of a tuple of n faces draws the same
number as ``rng.randint(1, n)`` (both take ``_randbelow(n)``) through fewer calls: the dice are the reference's most
frequent call.
"""
from __future__ import annotations

import random

D6 = (1, 2, 3, 4, 5, 6)
D3 = (1, 2, 3)


def roll_d6(rng: random.Random) -> int:
    """One D6 (TP 1.0.1)."""
    return rng.choice(D6)


def roll_d3(rng: random.Random) -> int:
    """One D3 (TP 1.0.1)."""
    return rng.choice(D3)
