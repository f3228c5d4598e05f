"""Checks of the Python API's arguments (docs/limits.md, "The Python API"): each refuses a wrong type or value with
the project's :class:`~wargame_odds.analysis.intake.errors.ArgumentError`, naming the argument and what is allowed,
before anything runs, as the command line refuses a bad option.  Only the standard library and
:mod:`wargame_odds.analysis.intake.errors` are imported here, so that any module may use them.
"""
from __future__ import annotations

import numbers
import os
from collections.abc import Iterable
from itertools import islice

from .errors import ArgumentError

#: a file path, of an input file or an argument (wargame_odds.analysis.intake.scenario reads with it)
MAX_PATH_CHARS = 1024
MAX_NAME_CHARS = 80  # a name: in a definition file (wargame_odds.analysis.intake.bounds) or an argument
#: Characters that break a line: a name or title holding one would fake lines of every text output.
LINE_BREAKS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"


def check_flag(name: str, value, none_ok: bool = False) -> None:
    """``value`` is ``True`` or ``False`` (or ``None`` where ``none_ok``): a truthy text such as ``"no"`` is not a
    flag."""
    if not (isinstance(value, bool) or (none_ok and value is None)):
        raise ArgumentError(name, value, "True or False" + (" or None" if none_ok else ""))


def check_whole(name: str, value, low: int, high: int, none_ok: bool = False) -> None:
    """``value`` is a whole number (not a bool, not 2000.5) from ``low`` to ``high``."""
    if none_ok and value is None:
        return
    if isinstance(value, bool) or not _is_int(value) or not low <= value <= high:
        raise ArgumentError(name, value, f"a whole number from {low:,} to {high:,}" + (" or None" if none_ok else ""))


def check_path(name: str, value, none_ok: bool = False) -> None:
    """``value`` is a file or folder path: a ``str`` or ``os.PathLike`` of at most :data:`MAX_PATH_CHARS`
    characters without NUL bytes (never a number, which ``open`` would take for a file descriptor)."""
    if none_ok and value is None:
        return
    allowed = (f"a path (str or pathlib.Path) of 1 to {MAX_PATH_CHARS} characters without NUL bytes"
               + (", or None" if none_ok else ""))
    if not isinstance(value, (str, os.PathLike)):
        raise ArgumentError(name, value, allowed)
    text = os.fspath(value)
    if not isinstance(text, str) or not 0 < len(text) <= MAX_PATH_CHARS or "\x00" in text:
        raise ArgumentError(name, value, allowed)


def check_name(name: str, value, none_ok: bool = False, max_chars: int = MAX_NAME_CHARS) -> None:
    """``value`` is a name: text of 1 to ``max_chars`` characters on one line (as the names of definition files)."""
    if none_ok and value is None:
        return
    if not isinstance(value, str) or not 0 < len(value) <= max_chars or any(c in value for c in LINE_BREAKS):
        raise ArgumentError(name, value, f"a name of 1 to {max_chars} characters on one line"
                            + (", or None" if none_ok else ""))


def check_choice(name: str, value, allowed: tuple[str, ...], none_ok: bool = False) -> None:
    """``value`` is one of the texts ``allowed``."""
    if none_ok and value is None:
        return
    if not isinstance(value, str) or value not in allowed:
        raise ArgumentError(name, value, "one of " + ", ".join(allowed) + (", or None" if none_ok else ""))


def bounded_list(name: str, value, limit: int, what: str) -> list:
    """The items of ``value`` (a list, tuple or any other iterable but a text or a mapping), read no further than
    ``limit`` + 1 items, so that ``range(10**8)`` or an endless generator costs nothing; more than ``limit`` items
    are refused."""
    allowed = f"a list of at most {limit:,} {what}"
    if isinstance(value, (str, bytes, bytearray, dict)) or not isinstance(value, Iterable):
        raise ArgumentError(name, value, allowed)
    items = list(islice(value, limit + 1))
    if len(items) > limit:
        raise ArgumentError(name, f"more than {limit:,} {what}", allowed)
    return items


def check_instance(name: str, value, kinds: tuple[type, ...], allowed: str) -> None:
    """``value`` is an instance of one of ``kinds`` (``allowed`` says so in words)."""
    if not isinstance(value, kinds):
        raise ArgumentError(name, value, allowed)


def _is_int(value) -> bool:
    return isinstance(value, numbers.Integral)  # (numpy's integer scalars too)


def _is_real(value) -> bool:
    return isinstance(value, numbers.Real)
