"""Epic Armageddon's caps on scenario values (README.md, "Limits and safety"): they bound memory and time (histograms
grow with blast markers, loops with extra attacks) and leave every real table-top value inside."""
from __future__ import annotations

from typing import Annotated

from pydantic import Field

MAX_BLAST_MARKERS = 100  # Epic: a formation's histograms grow with its blast markers
MAX_EXTRA_ATTACKS = 10  # Epic: extra attacks of one weapon line (TP 2.2.3)
MAX_SPEED_CM = 200  # Epic: unit speed
MAX_POINTS = 100_000  # Epic: a formation's points

BlastMarkers = Annotated[int, Field(ge=0, le=MAX_BLAST_MARKERS)]
ExtraAttackCount = Annotated[int, Field(ge=1, le=MAX_EXTRA_ATTACKS)]
Speed = Annotated[int, Field(ge=0, le=MAX_SPEED_CM)]
Points = Annotated[int, Field(ge=0, le=MAX_POINTS)]
