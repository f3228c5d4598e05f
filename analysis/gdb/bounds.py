"""General de Brigade's caps on scenario and rule-table values (README.md, "Limits and safety"): distances, times and
unit strengths bounded, every real table-top value inside."""
from __future__ import annotations

from typing import Annotated

from pydantic import Field

MAX_MODIFIER = 100  # GdB tables: a die modifier or a quality value
MAX_TABLE_TOTAL = 1000  # GdB tables: a band edge (modified dice total)
MAX_DISTANCE = 1000.0  # GdB: distances, moves and ranges (table units)
MAX_TURNS = 10.0  # GdB: a time in turns
MAX_STRENGTH = 500  # GdB: figures of a unit (also casualties this phase)

Modifier = Annotated[int, Field(ge=-MAX_MODIFIER, le=MAX_MODIFIER)]
TableTotal = Annotated[int, Field(ge=-MAX_TABLE_TOTAL, le=MAX_TABLE_TOTAL)]
Percent = Annotated[int, Field(ge=0, le=100)]
Distance = Annotated[float, Field(gt=0, le=MAX_DISTANCE)]  # strictly positive
Move = Annotated[float, Field(ge=0, le=MAX_DISTANCE)]
Turns = Annotated[float, Field(ge=0, le=MAX_TURNS)]
Strength = Annotated[int, Field(ge=1, le=MAX_STRENGTH)]
Casualties = Annotated[int, Field(ge=0, le=MAX_STRENGTH)]
RangeScale = Annotated[int, Field(ge=0, le=1000)]  # GdB: a range band's casualty scale, in percent
