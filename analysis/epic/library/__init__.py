"""The NetEA unit library (Tournament Pack data, ISC licence): units, weapons, army lists and formations."""

PREFIX = "netea:"  # how a scenario names a library unit, formation or army list


def group_refs(group) -> list[tuple[str, object]]:
    """(key, value) of a formation group's unit and of each of its characters (``unit``, ``characters[k]``);
    none for a group that is not a table.  A wrong shape is left for validation to name."""
    if not isinstance(group, dict):
        return []
    characters = group.get("characters")
    return [("unit", group.get("unit"))] + [(f"characters[{k}]", c)
                                            for k, c in enumerate(characters if isinstance(characters, list) else [])]
