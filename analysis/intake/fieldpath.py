"""Field paths: one grammar for the command line, the Python API and report definitions.

::

    path     = key { "." key | "[" selector "]" }
    key      = one or more characters other than  . [ ]
    selector = a whole number (list index; negative counts from the end)
             | a name (the list item whose ``name`` is that text)

``formations[Warband].blast_markers`` and ``formations[1].blast_markers`` name the same field when
Warband is the second formation; ``rules.result_dice``, ``charger.distance``,
``formations[0].units[0].count`` and ``tables.morale.charger_mods.general_attached`` are paths too.
"""
from __future__ import annotations

import copy
import re

from .errors import ArgumentError, UserError

_PART = re.compile(r"(\.?)([^.\[\]]+)|\[([^\]]+)\]")
_INDEX = re.compile(r"-?\d+")
EXAMPLES = "formations[Warband].blast_markers, formations[1].units[0].count or rules.result_dice"


class ByName(str):
    """A bracketed selector that is not a number: the list item whose ``name`` is this text."""


class MissingField(KeyError):
    """A path part that is not in the data; ``allowed`` says what is there."""

    def __init__(self, part: str, allowed: str):
        super().__init__(part)
        self.allowed = allowed


def parse(path: str) -> list[str | int | ByName]:
    """``"formations[Warband].units[0].count"`` → ``["formations", ByName("Warband"), "units", 0, "count"]``;
    ``ValueError`` when ``path`` does not follow the grammar."""
    parts: list[str | int | ByName] = []
    pos = 0
    for match in _PART.finditer(path):
        dot, key, selector = match.groups()
        if match.start() != pos or (key is not None and bool(dot) != bool(parts)) or (selector and not parts):
            raise ValueError(f"not a field path: {path!r}")
        if key is not None:
            parts.append(key)
        else:
            text = selector.strip()
            parts.append(int(text) if _INDEX.fullmatch(text) else ByName(text))
        pos = match.end()
    if pos != len(path) or not parts:
        raise ValueError(f"not a field path: {path!r}")
    return parts


def _shown(parts) -> str:
    return "".join(f"[{p}]" if isinstance(p, (int, ByName)) else f".{p}" for p in parts).lstrip(".")


def _step(node, part, here: str, create: bool, more: bool):
    """The child of ``node`` that ``part`` selects (``create``: a missing table on the way is added)."""
    if isinstance(part, int):
        if isinstance(node, list) and -len(node) <= part < len(node):
            return node[part]
        raise MissingField(f"[{part}]", f"indexes 0..{len(node) - 1} of {here}" if isinstance(node, list) and node
                           else f"{here} is not a list")
    if isinstance(part, ByName):
        names = [item.get("name") for item in node if isinstance(item, dict)] if isinstance(node, list) else []
        if names.count(part) == 1:
            return node[names.index(part)]
        raise MissingField(f"[{part}]", f"names in {here}: " + ", ".join(map(str, names)) if names
                           else f"{here} has no named items")
    if isinstance(node, dict):
        if part not in node and create and more:
            node[part] = {}
        if part in node:
            return node[part]
        raise MissingField(part, f"keys of {here or 'the scenario'}: " + ", ".join(sorted(map(str, node))))
    raise MissingField(part, f"{here} has no keys")


def set_in(data: dict, path: str, value, *, create: bool = False) -> None:
    """Set ``path`` in ``data`` in place.  ``create``: missing tables on the way and a missing last
    key are added (the scenario's validation then judges them); otherwise every part must exist.
    Raises ``ValueError`` (not a path) or :class:`MissingField`."""
    parts = parse(path)
    node = data
    for i, part in enumerate(parts[:-1]):
        node = _step(node, part, _shown(parts[:i]), create, more=True)
    last = parts[-1]
    if isinstance(last, str) and not isinstance(last, ByName) and isinstance(node, dict) and create:
        node[last] = value
        return
    _step(node, last, _shown(parts[:-1]), create=False, more=False)  # must exist
    if isinstance(last, ByName):
        node[[item.get("name") for item in node].index(last)] = value
    else:
        node[last] = value


def with_value(data: dict, path: str, value, source: str, *, create: bool = False) -> dict:
    """A copy of ``data`` with ``path`` set to ``value``; one :class:`UserError` naming ``source``
    and the path when it is malformed or names no field (a path that is no text: :class:`ArgumentError`)."""
    if not isinstance(path, str):
        raise ArgumentError("path", path, f"a field path (text), e.g. {EXAMPLES}")
    data = copy.deepcopy(data)
    try:
        set_in(data, path, value, create=create)
    except ValueError:
        raise UserError(source, path, "not a field path", f"dotted keys with [index] or [name], e.g. {EXAMPLES}") \
            from None
    except MissingField as exc:
        raise UserError(source, path, f"no such field in the scenario ({exc.args[0]} is missing)", exc.allowed) \
            from None
    return data
