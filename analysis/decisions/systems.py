"""What the decision tools need from a rule system: each system's
:class:`~wargame_odds.analysis.intake.systems.Decisions` adapter, found through the registry
(:mod:`wargame_odds.analysis.intake.systems`), never by the system's name.

An adapter loads scenarios, sets a field given as a field path (:mod:`.fieldpath`: ``rules.result_dice``,
``formations[Warband].blast_markers``, ``charger.distance``), simulates, and exposes its runner job and result
builder (for trial-by-trial pairing).  Matchups (``matrix``, ``compare``, ``rank``) need its ``force`` and
``matchup``, which combine an attacking and a defending :class:`Force`.
"""
from __future__ import annotations

from collections.abc import Mapping

from ..intake import systems
from ..intake.systems import Decisions as System
from ..intake.systems import Force

__all__ = ["SYSTEMS", "System", "Force", "system_of"]


class _Adapters(Mapping):
    """The registered systems' decision adapters by name (``SYSTEMS["epic"]``), each looked up when asked for."""

    def __getitem__(self, name: str) -> System:
        if name not in systems.names():
            raise KeyError(name)
        return systems.get(name).decisions

    def __iter__(self):
        return iter(systems.names())

    def __len__(self) -> int:
        return len(systems.names())


SYSTEMS = _Adapters()


def system_of(scenario) -> System:
    """The adapter for a loaded model or a scenario path (by its ``system`` key)."""
    return systems.of(scenario).decisions
