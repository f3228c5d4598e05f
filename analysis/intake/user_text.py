"""User text as data in every output: names, titles, paths and values from a user's files go into text,
CSV, traces, error messages, plots and report pages, and must never act there.

- :func:`printable`: control characters (an escape sequence that clears the screen, retitles the terminal
  or plants a link; a carriage return that hides a line) and the bidi controls that reorder what is shown
  (U+202E …) are written as escapes (``\\x1b``, ``\\u202e``), as JSON output writes them; every text writer
  (a result's text, a trace, an error message, CSV, the report page) passes its output through it.
- :func:`csv_text`: CSV with every text cell spreadsheet-safe (:func:`spreadsheet_safe`) and printable: the one
  CSV writer of the program (:func:`result_csv` for a result: the CLI's ``--csv``, the app's download; a
  report's tables).
- :func:`elide`: a long value cut in the middle for a message.
"""
from __future__ import annotations

import re

#: The most characters of one user value a message shows (longer values keep their ends around "...").
SHOWN_CHARS = 60
#: The most characters of one error message (a net under the caps on names and titles).
MAX_MESSAGE_CHARS = 2000

_BIDI_AND_LINES = "\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
_ESCAPED = re.compile(f"[\x00-\x1f\x7f-\x9f{_BIDI_AND_LINES}]")
_ESCAPED_KEEPING_LINES = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI_AND_LINES}]")  # \t and \n kept

#: First characters that make a spreadsheet read a cell as a formula (or, tab and CR, hide one).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _escape(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text, keep_lines: bool = True) -> str:
    """``text`` with control and bidi characters escaped; line breaks and tabs kept when ``keep_lines``
    (the program's own multi-line text: names and titles hold no line break, see
    wargame_odds.analysis.intake.bounds)."""
    return (_ESCAPED_KEEPING_LINES if keep_lines else _ESCAPED).sub(_escape, str(text))


def elide(text, limit: int = SHOWN_CHARS) -> str:
    """``text`` cut to at most ``limit`` characters, keeping its start and end around "..."."""
    text = str(text)
    if len(text) <= limit:
        return text
    head = (limit - 3) // 2
    return f"{text[:head]}...{text[len(text) - (limit - 3 - head):]}"


def spreadsheet_safe(value):
    """A text cell a spreadsheet shows as text: a leading ``'`` before = + - @ tab or CR (the usual defence
    against CSV formula injection), control and bidi characters escaped; any other value unchanged."""
    if not isinstance(value, str):
        return value
    return printable("'" + value if value.startswith(FORMULA_STARTS) else value, keep_lines=False)


def csv_text(frame) -> str:
    """``frame`` (pandas) as CSV, every text cell and column name :func:`spreadsheet_safe`; numbers as they are."""
    from pandas.api.types import is_numeric_dtype

    safe = frame.rename(columns=spreadsheet_safe)
    for column in safe.columns:
        if not is_numeric_dtype(safe[column]):
            safe[column] = safe[column].map(spreadsheet_safe)
    return safe.to_csv(index=False)


def result_csv(result, distributions: bool = False, at_least: bool = False) -> str:
    """A result's table as CSV (:func:`csv_text`): its estimates, or every distribution, or every "at least N"
    table (a decision result has its estimates only)."""
    if distributions:
        return csv_text(result.distributions())
    if at_least:
        return csv_text(result.at_least_frame())
    return csv_text(result.table())
