"""The reference of the kernel's turn steps that the assault engine holds (mirrors ``kernels/epic/turn.py``;
TP 1.13.1, 2.1.8; spec §8): the regroup roll.  The rest of the turn's reference is ``analysis/epic/turn.py``.
"""
from __future__ import annotations

import random

from .dice import roll_d6


def regroup_roll(rng: random.Random, blast_markers: int, leaders: int = 0) -> int:
    """BMs removed by a regroup: highest of 2D6 + Leaders, at most those held (TP 1.13.1, 2.1.8; spec §8)."""
    return min(max(roll_d6(rng), roll_d6(rng)) + leaders, blast_markers)
