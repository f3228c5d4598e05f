"""What a run did (:class:`RunInfo`), which the results carry: a plain record of the output layer, so that a result
module needs nothing of the run layer (the runner, which imports Numba, fills it in)."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class RunInfo:
    """What a run did: the numbers needed to reproduce it."""

    trials: int
    seed: int
    cell: tuple = ()
    precision: float | None = None
    precision_reached: bool | None = None
    achieved_half_width: float | None = None
    chunks: int = 0
    extra: dict = field(default_factory=dict)
