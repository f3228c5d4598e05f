"""Why neighbouring values of a field give exactly the same chance (``threshold``'s plateaus).

Every value of a threshold search runs on common random numbers: trial ``t`` draws the same dice at every
value.  A run of neighbouring values with the very same count of trials reaching the quantity is a plateau.
Its explanation is derived, never written per scenario: from the rules where the model shows which step the
field enters (Epic blast markers before an assault: the result roll's blast-marker modifiers, TP 1.12.7), else
the fact the counts prove.
"""
from __future__ import annotations

import random

from ..intake.fieldpath import ByName, parse

#: Side-level outcomes of an Epic assault: decided by the result roll, so the blast markers a formation starts
#: with reach them only through the result roll's modifiers (break tests come after the winner is known).
_EPIC_WINNER_QUANTITIES = {"attacker_wins", "defender_wins", "no_winner", "unresolved", "decided_without_roll",
                           "no_assault"}


def plateaus(points: list[dict]) -> list[tuple[int, int]]:
    """Index ranges ``(i, j)``, ``j > i``, of neighbouring points (sorted by value) with exactly the same estimate."""
    runs, start = [], 0
    for k in range(1, len(points) + 1):
        if k == len(points) or points[k]["p"] != points[start]["p"]:
            if k - 1 > start:
                runs.append((start, k - 1))
            start = k
    return runs


def explain(system: str, field: str, quantity: tuple, models: list, results: list, values: list,
            words: str) -> str:
    """One line: why ``values`` (a plateau of ``field``, called ``words``) give the same chance of ``quantity``."""
    first, last = values[0], values[-1]
    why = _epic_blast_markers(system, field, quantity, models, words, first, last)
    if why:
        return why
    k, n = results[0][quantity].k, results[0][quantity].n
    text = (f"The chance does not change from {first} to {last} ({words}): with common random numbers every trial "
            f"rolls the same dice at each of these values, and exactly {k:,} of {n:,} trials reach it at each")
    same = all(r.rows() == results[0].rows() for r in results[1:])
    return text + ("; every other reported count is identical too, so in these trials the value changes no outcome."
                   if same else ".")


def _epic_blast_markers(system, field, quantity, models, words, first, last) -> str | None:
    """Epic, an assault scenario, ``formations[X].blast_markers`` and a side-level outcome: the blast markers a
    formation starts with enter the winner only through the result roll's modifiers (TP 1.12.7: +1 to a side with
    none, +1 to the side with fewer); when these are the same at every value of the plateau, say so."""
    parts = parse(field)
    if (system != "epic" or len(parts) != 3 or parts[0] != "formations" or parts[2] != "blast_markers"
            or quantity[0] != "sides" or quantity[-1] not in _EPIC_WINNER_QUANTITIES
            or any(m.turn for m in models)):
        return None
    from ..epic.compile import compile_scenario
    from ..epic.reference import blast_marker_counts, new_trial

    modifiers, counted = [], []
    for model in models:
        trial = new_trial(compile_scenario(model), random.Random(0))
        counts = [blast_marker_counts(trial, side) for side in (0, 1)]
        modifiers.append(tuple((raw == 0, counts[1 - side][1] > mine) for side, (raw, mine) in enumerate(counts)))
        counted.append([mine for _, mine in counts])
    if len(set(modifiers)) != 1:
        return None
    formation = models[0].formations[_index(parts[1], models[0])]
    if formation.broken:
        return (f"The chance does not change from {first} to {last} ({words}): {formation.name} is broken, and a "
                f"broken formation holds no blast markers (TP 1.13.2), so this key changes nothing.")
    sides = ("attacker", "defender")
    shown = [_span([c[side] for c in counted]) for side in (0, 1)]
    given = []
    for side, (none, fewer) in enumerate(modifiers[0]):
        if none:
            given.append(f"+1 to the {sides[side]}, who has none")
        if fewer:
            given.append(f"+1 to the {sides[side]}, whose side has fewer ({shown[side]} against {shown[1 - side]})")
    return (f"The chance does not change from {first} to {last} ({words}): the blast markers a formation starts "
            f"with reach the winner only through the result roll's blast-marker modifiers (TP 1.12.7; break tests "
            f"come after the winner is known), and these are the same at each of these values: "
            f"{'; '.join(given) or 'none to either side'}.")


def _span(values: list[int]) -> str:
    return str(values[0]) if min(values) == max(values) else f"{min(values)} to {max(values)}"


def _index(selector, model) -> int:
    if isinstance(selector, ByName):
        return [f.name for f in model.formations].index(selector)
    return int(selector)
