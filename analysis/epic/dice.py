"""Dice expressions of the scenario keys: ``"D3"``, ``"D3+3"``, ``"D6+6"``, ``"2D3"`` or a plain number.

Used for power fields rolled once per trial (TP-SR Power Fields) and titan-killer damage
(TP 2.2.9, 3.2.5).  Grammar ``[N]D{3,6}[+K]``; a whole number is a fixed value.  A D3 is a D6 read
1-2 → 1, 3-4 → 2, 5-6 → 3 (TP 1.0.1).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

DICE_GRAMMAR = "a whole number or a dice expression [N]D3 / [N]D6 with an optional +K (e.g. \"D3\", \"D3+3\", \"D6+1\")"
_PATTERN = re.compile(r"^\s*(\d*)\s*[dD]\s*(3|6)\s*(?:\+\s*(\d+))?\s*$")
MAX_DICE, MAX_PLUS = 4, 20


@dataclass(frozen=True)
class Dice:
    """``count`` dice of ``sides`` (3 or 6) plus ``plus``; ``count = 0`` is the fixed value ``plus``."""

    count: int
    sides: int
    plus: int

    @property
    def fixed(self) -> bool:
        return self.count == 0

    @property
    def maximum(self) -> int:
        return self.count * self.sides + self.plus

    def roll(self, rng) -> int:
        """Roll it with the engine's dice: D6 = ``rng.randint(1, 6)``, D3 = ``rng.randint(1, 3)``."""
        return sum(rng.randint(1, self.sides) for _ in range(self.count)) + self.plus

    def __str__(self) -> str:
        if self.fixed:
            return str(self.plus)
        return f"{self.count if self.count > 1 else ''}D{self.sides}{f'+{self.plus}' if self.plus else ''}"


def parse_dice(value: int | str) -> Dice:
    """``3`` → fixed 3; ``"D3+3"`` → Dice(1, 3, 3).  Raises ValueError naming the grammar."""
    if isinstance(value, bool):
        raise ValueError(f"expected {DICE_GRAMMAR}, got {value!r}")
    if isinstance(value, int):
        if not 0 <= value <= MAX_PLUS:
            raise ValueError(f"expected a whole number from 0 to {MAX_PLUS} or a dice expression, got {value}")
        return Dice(0, 6, value)
    match = _PATTERN.match(str(value))
    if not match:
        raise ValueError(f"expected {DICE_GRAMMAR}, got {value!r}")
    count = int(match.group(1) or 1)
    plus = int(match.group(3) or 0)
    if not 1 <= count <= MAX_DICE or plus > MAX_PLUS:
        raise ValueError(f"expected 1 to {MAX_DICE} dice and +0 to +{MAX_PLUS}, got {value!r}")
    return Dice(count, int(match.group(2)), plus)
