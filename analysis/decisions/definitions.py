"""The fields of a comparison, shared by the ``compare`` definition file and a report's compare cell."""
from __future__ import annotations

from typing import Callable, Literal

from pydantic import Field

from ..intake.bounds import MAX_FORCES, FilePath
from ..intake.scenario import StrictModel


class Opponent(StrictModel):
    force: FilePath
    weight: float = 1.0


class CompareFields(StrictModel):
    """Option A against option B, facing weighted opponents (forces as in docs/decisions.md)."""

    base: FilePath | None = None  # a scenario whose [rules] and [end_phase] apply
    side: Literal["attacker", "defender"] = "attacker"
    option_a: FilePath
    option_b: FilePath
    opponents: list[Opponent] = Field(min_length=1, max_length=MAX_FORCES)

    def arguments(self, resolve: Callable[[str], str]) -> dict:
        """Keyword arguments of :func:`wargame_odds.analysis.decisions.compare`, file paths passed through
        ``resolve``."""
        return {"option_a": resolve(self.option_a), "option_b": resolve(self.option_b),
                "opponents": [resolve(o.force) for o in self.opponents],
                "weights": [o.weight for o in self.opponents],
                "base": resolve(self.base) if self.base else None, "side": self.side}
