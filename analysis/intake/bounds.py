"""Bounded numbers for every input model: the one place where the limits of scenario, table and
report fields live (README.md, "Limits and safety", lists them).

Each type carries its range, so a value outside it gives the usual one-line error naming the file,
the field and the range; ``inf`` and ``nan`` are refused for every float by
:class:`wargame_odds.analysis.intake.scenario.StrictModel`, and integers beyond 2**53 before any model sees them.
The ranges keep memory and time bounded (histograms are sized by blast markers and unit counts,
loops by extra attacks, distances and times) while leaving every real table-top value inside.
"""
from __future__ import annotations

import math
from typing import Annotated

from pydantic import AfterValidator, BeforeValidator, Field

# MAX_NAME_CHARS, 80: a name (formation, unit group, charger, target, support, option label, weapon), one value for
# files and the API's arguments; LINE_BREAKS: what a name or title may not hold.
from .arguments import LINE_BREAKS, MAX_NAME_CHARS
from .run_limits import MAX_SEED, SEED_RANGE

MAX_BLAST_MARKERS = 100  # Epic: a formation's histograms grow with its blast markers
MAX_EXTRA_ATTACKS = 10  # Epic: extra attacks of one weapon line (TP 2.2.3)
MAX_SPEED_CM = 200  # Epic: unit speed
MAX_POINTS = 100_000  # Epic: a formation's points
MAX_MODIFIER = 100  # GdB tables: a die modifier or a quality value
MAX_TABLE_TOTAL = 1000  # GdB tables: a band edge (modified dice total)
MAX_DISTANCE = 1000.0  # GdB: distances, moves and ranges (table units)
MAX_TURNS = 10.0  # GdB: a time in turns
MAX_STRENGTH = 500  # GdB: figures of a unit (also casualties this phase)
MAX_TITLE_CHARS = 200  # a title: scenario, report, report cell
MAX_DESCRIPTION_CHARS = 10_000  # a report's description
MAX_TEXT_CHARS = 1024  # any other text of an input file (paths, references, options): as long as a path may be
MAX_FORCES = 100  # forces of a matrix side, options of a ranking, opponents of a ranking or a comparison
MAX_VALUES = 10_000  # values of a sweep or a threshold search (and grid points of a report cell)

BlastMarkers = Annotated[int, Field(ge=0, le=MAX_BLAST_MARKERS)]
ExtraAttackCount = Annotated[int, Field(ge=1, le=MAX_EXTRA_ATTACKS)]
Speed = Annotated[int, Field(ge=0, le=MAX_SPEED_CM)]
Points = Annotated[int, Field(ge=0, le=MAX_POINTS)]
Modifier = Annotated[int, Field(ge=-MAX_MODIFIER, le=MAX_MODIFIER)]
TableTotal = Annotated[int, Field(ge=-MAX_TABLE_TOTAL, le=MAX_TABLE_TOTAL)]
Percent = Annotated[int, Field(ge=0, le=100)]
Distance = Annotated[float, Field(gt=0, le=MAX_DISTANCE)]  # strictly positive
Move = Annotated[float, Field(ge=0, le=MAX_DISTANCE)]
Turns = Annotated[float, Field(ge=0, le=MAX_TURNS)]
Strength = Annotated[int, Field(ge=1, le=MAX_STRENGTH)]
Casualties = Annotated[int, Field(ge=0, le=MAX_STRENGTH)]
RangeScale = Annotated[int, Field(ge=0, le=1000)]  # GdB: a range band's casualty scale, in percent


def _one_line(text: str) -> str:
    """Names and titles are one line: a line break in one would fake lines of every text output."""
    if any(c in text for c in LINE_BREAKS):
        raise ValueError("a line break in a name or title; allowed: one line of text")
    return text


Name = Annotated[str, Field(min_length=1, max_length=MAX_NAME_CHARS), AfterValidator(_one_line)]
Title = Annotated[str, Field(max_length=MAX_TITLE_CHARS), AfterValidator(_one_line)]
Description = Annotated[str, Field(max_length=MAX_DESCRIPTION_CHARS)]


def _no_nul(text: str) -> str:
    if "\x00" in text:
        raise ValueError("a NUL byte in a path; allowed: a file path without NUL bytes")
    return text


#: A file a definition refers to (a scenario, a force file, a base): not empty, no NUL byte.
FilePath = Annotated[str, Field(min_length=1, max_length=MAX_TEXT_CHARS), AfterValidator(_no_nul)]


def _distinct(names: list) -> list:
    twice = next((n for i, n in enumerate(names) if n in names[:i]), None)
    if twice is not None:
        raise ValueError(f"{twice!r} is named twice; allowed: each name once")
    return names


#: A list of names where each may appear once (``flak = ["Flakwagonz", "Flakwagonz"]`` would fire it twice).
distinct = AfterValidator(_distinct)


def as_probability(value):
    """A probability as a player types it: 0 to 1 as a fraction, above 1 (up to 100) as a percentage, so 60 and
    0.6 are both 60 %.  Anything else is returned unchanged, for the caller's own check to refuse."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and 1 < value <= 100:
        return value / 100
    return value


def as_precision(value):
    """A precision (a 95 % half-width) as typed: below 1 as a fraction (0.005), from 1 up in percentage points
    (1 is ±1 point, 0.01)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and 1 <= value <= 50:
        return value / 100
    return value


def _probability_key(value):
    value = as_probability(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 1:
        raise ValueError(f"got {value}; allowed: a probability from 0 to 1, or a percentage from 1 to 100")
    return value


def _seed(value: int) -> int:
    if not 0 <= value <= MAX_SEED:
        raise ValueError(f"{value} is out of range; allowed: a whole number from {SEED_RANGE}")
    return value


#: A seed in a definition file, in the one range (and wording) of the command line and the API.
Seed = Annotated[int, AfterValidator(_seed)]

#: A probability key of a scenario: 0.6 or 60 (a percentage) alike.
ProbabilityKey = Annotated[float, BeforeValidator(_probability_key), Field(ge=0, le=1)]
