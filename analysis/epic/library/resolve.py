"""Scenario hook: fill in library units (``unit = "netea:boyz"``) and formations before validation."""
from __future__ import annotations

from . import PREFIX, group_refs


def _suggest(name: str) -> str:
    import difflib

    from .netea import units

    close = difflib.get_close_matches(name, list(units()), n=4, cutoff=0.5)
    shown = ", ".join(PREFIX + c for c in close) if close else f"{PREFIX}<id>"
    return f"{shown} (list them with: wargame-odds units search WORD)"


def library_profile(ref: str, where: str) -> dict:
    """The engine profile (as scenario data) of library unit ``ref``; ValueError naming ``where``."""
    from .netea import convert, units

    uid = ref[len(PREFIX):]
    if uid not in units():
        raise ValueError(f"{where}: unknown library unit {ref!r}; allowed: {_suggest(uid)}")
    conv = convert(uid)
    if not conv.ok:
        raise ValueError(f"{where}: library unit {ref!r} has rules the engine cannot model: "
                         f"{'; '.join(str(u) for u in conv.unsupported)}; allowed: library units without "
                         "them, or the unit's stats typed in [units]")
    return conv.profile.model_dump(exclude_none=True)


def _names_the_library(formations: list) -> bool:
    """Whether a formation is a library formation, names an army list, or has a ``netea:`` unit or character
    (scenario data that does not leaves the library unread)."""
    for entry in formations:
        if not isinstance(entry, dict):
            continue
        if "library" in entry or entry.get("army") is not None:
            return True
        groups = entry.get("units")
        if any(isinstance(ref, str) and ref.startswith(PREFIX)
               for group in (groups if isinstance(groups, list) else []) for _, ref in group_refs(group)):
            return True
    return False


def resolve_epic(data) -> tuple[object, list[str]]:
    """Epic scenario data with every ``netea:`` unit reference defined in ``units``, and notes.

    Library formations (``library = "netea:LIST/FORMATION"`` in a formation) are expanded first,
    then each formation's army rules and initiative are filled in from its army list or its
    library units (:func:`.armies.resolve_army`; the notes say what was inferred).  Units the
    scenario defines itself under the same name are left alone.
    """
    if not isinstance(data, dict) or not isinstance(data.get("formations"), list) \
            or not _names_the_library(data["formations"]):
        return data, []
    from .armies import resolve_army
    from .upgrades import expand_with_upgrades as expand_formation  # a library entry, with its upgrades

    data = dict(data)
    formations, notes = [], []
    for i, entry in enumerate(data["formations"]):
        if isinstance(entry, dict) and "library" in entry:
            entry = expand_formation(entry, f"formations[{i}]")
        entry, said = resolve_army(entry, f"formations[{i}]")
        formations.append(entry)
        notes += said
    data["formations"] = formations
    defined = data.get("units", {})
    if not isinstance(defined, dict):
        return data, notes
    added = {}
    for i, formation in enumerate(formations):
        groups = formation.get("units") if isinstance(formation, dict) else None
        for j, group in enumerate(groups if isinstance(groups, list) else []):
            for key, ref in group_refs(group):
                if isinstance(ref, str) and ref.startswith(PREFIX) and ref not in defined and ref not in added:
                    added[ref] = library_profile(ref, f"formations[{i}].units[{j}].{key}")
    if added:
        data["units"] = {**defined, **added}
    return data, notes
