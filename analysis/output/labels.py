"""Readable names for the result tree's keys (``analysis/labels.toml``) and the readable table.

The JSON and the tidy ``table()`` keep the keys; everything a player reads (text output, HTML,
reports, plots) goes through :func:`quantity_label`, :func:`group_label` and :func:`readable_rows`.
"""
from __future__ import annotations

import math
import numbers
import tomllib
from functools import lru_cache
from importlib.resources import files

from ..intake.arguments import check_choice, check_flag, check_instance
from ..intake.errors import ArgumentError


@lru_cache(maxsize=None)
def _labels() -> dict:
    return tomllib.loads(files("wargame_odds.analysis").joinpath("labels.toml").read_text(encoding="utf-8"))


def _system(system: str) -> dict:
    check_instance("system", system, (str,), "a rule system's name: epic, gdb or t9a")
    return _labels().get(system, {})


def _texts(**named) -> None:
    """Each argument is text (a key of the result tree, a path or a name)."""
    for name, value in named.items():
        check_instance(name, value, (str,), "text")


def _sides(sides) -> None:
    check_instance("sides", sides, (dict, type(None)), "None or {formation name: side}")


def _numbers(**named) -> None:
    """Each argument is a number or None (NaN and None show as n/a)."""
    for name, value in named.items():
        check_instance(name, value, (numbers.Real, type(None)), "a number or None")


def _rows(rows, keys: tuple[str, ...]) -> list:
    """Rows as the readers here take them: a list of dicts holding ``keys``."""
    if not isinstance(rows, (list, tuple)) or not all(isinstance(r, dict) and all(k in r for k in keys) for r in rows):
        raise ArgumentError("rows", rows, f"a list of dicts with the keys {', '.join(keys)}")
    return rows


def quantity_label(system: str, quantity: str) -> str:
    """``broken_after_end_phase`` → "broken after the end phase"."""
    _texts(quantity=quantity)
    return _system(system).get("quantities", {}).get(quantity, str(quantity).replace("_", " "))


def action_name(action: str) -> str:
    """An Epic turn's action as the rules name it: ``sustained_fire`` → "Sustained Fire" (``[epic.actions]``)."""
    _texts(action=action)
    return _system("epic").get("actions", {}).get(action, str(action).replace("_", " "))


def axis_label(system: str, quantity: str, entity: str = "") -> str:
    """The player's name for a distribution's values (casualties, blast markers, inches …): the
    ``[SYSTEM.axes]`` entry "ENTITY.QUANTITY", else "QUANTITY", else the quantity's label."""
    _texts(quantity=quantity, entity=entity)
    axes = _system(system).get("axes", {})
    return axes.get(f"{entity}.{quantity}", axes.get(quantity, quantity_label(system, quantity)))


def group_label(system: str, section: str, entity: str, sides: dict | None = None) -> str:
    """The heading a row belongs under: "Warband (defender)", "Knights (charger)", "Both sides"."""
    _texts(section=section, entity=entity)
    _sides(sides)
    readable_entity = str(entity).replace("_", " ").replace("/", " · ")
    if sides and entity in sides:
        return f"{entity} ({sides[entity]})"
    template = _system(system).get("sections", {}).get(section)
    if template is None:
        text = str(section).replace("_", " ")
        return f"{text}: {readable_entity}" if entity else text[:1].upper() + text[1:]
    if "{entity}" in template:
        return template.format(entity=readable_entity)
    return f"{template}: {readable_entity}" if entity else template


def names(what: str) -> dict[str, str]:
    """Rule systems (``"systems"``) or report cell kinds (``"kinds"``) in words."""
    check_choice("what", what, ("systems", "kinds"))
    return _labels()["names"][what]


def report_at_least(system: str) -> list[str]:
    """The "SECTION.QUANTITY" distributions whose "at least N" table a report shows."""
    return _system(system).get("report_at_least", [])


def decisive_rows(system: str, table, sides: dict | None = None, engaged: dict | None = None) -> list[dict]:
    """The few chances that decide a scenario (``decisive`` in labels.toml), as rows a player reads (``group``,
    ``quantity``, ``text``, ``estimate``, ``ci95_lo``, ``ci95_hi``), in the order labels.toml lists them.
    ``sides`` names every Epic formation's side; ``engaged`` (:func:`sides_of` with ``engaged_only``) the
    formations in the fight: the sides' "wins" name them, and only their formation rows are shown."""
    _system(system)
    _sides(sides)
    check_instance("engaged", engaged, (dict, type(None)), "None or {formation name: side}")
    records = _rows(table.to_dict(orient="records") if hasattr(table, "to_dict") else table,
                    ("section", "entity", "quantity", "kind", "estimate", "ci95_lo", "ci95_hi"))
    rows = []
    for spec in _system(system).get("decisive", []):
        parts = spec["key"].split(".")
        section, quantity, entity = parts[0], parts[-1], parts[1] if len(parts) == 3 else None
        for r in records:
            if r["section"] != section or r["quantity"] != quantity or r.get("kind") != "probability" \
                    or (entity is not None and r["entity"] != entity):
                continue
            estimate, lo, hi = r["estimate"], r["ci95_lo"], r["ci95_hi"]
            label = spec.get("label") or quantity_label(system, quantity)
            if "complement" in spec:
                estimate, lo, hi, label = 1 - estimate, 1 - hi, 1 - lo, spec["complement"]
                if estimate == 0:
                    continue
            if section == "formations" and engaged is not None and r["entity"] not in engaged:
                continue
            group = group_label(system, section, r["entity"], sides)
            if section == "sides" and engaged:
                side = quantity.split("_")[0]
                fighting = [name for name, s in engaged.items() if s == side]
                group = f"{' and '.join(fighting)} ({side})" if fighting else group
            rows.append({"group": group, "quantity": label, "text": estimate_text("probability", estimate, lo, hi),
                         "estimate": estimate, "ci95_lo": lo, "ci95_hi": hi})
    return rows


def percent(p: float, lo: float, hi: float, unit: str = "%") -> str:
    """"65.1 % [64.9, 65.3]": one decimal, two when the interval is narrower than 0.3 points
    (``unit="percentage points"`` for a difference of two probabilities)."""
    _numbers(p=p, lo=lo, hi=hi)
    _texts(unit=unit)
    if any(v is None or v != v for v in (p, lo, hi)):
        return "n/a"
    digits = 1 if hi - lo >= 0.003 else 2
    return f"{100 * p:.{digits}f} {unit} [{100 * lo:.{digits}f}, {100 * hi:.{digits}f}]"


def number(value: float, lo: float, hi: float) -> str:
    """A mean with its interval: "3.11 [3.09, 3.13]"."""
    _numbers(value=value, lo=lo, hi=hi)
    if any(v is None or (isinstance(v, float) and math.isnan(v)) for v in (value, lo, hi)):
        return "n/a"
    return f"{value:.2f} [{lo:.2f}, {hi:.2f}]"


def estimate_text(kind: str, estimate: float, lo: float, hi: float) -> str:
    check_choice("kind", kind, ("probability", "mean"))
    return percent(estimate, lo, hi) if kind == "probability" else number(estimate, lo, hi)


def readable_rows(system: str, table, sides: dict | None = None) -> list[dict]:
    """The tidy table (a DataFrame or its rows as dicts) as rows a player reads: ``group``,
    ``quantity`` (readable), ``kind``, ``estimate`` (text with its interval) and the numbers.  Keys
    that always repeat another key's number (``same_as`` in labels.toml) are shown once, on that
    key's row."""
    _system(system)
    _sides(sides)
    records = _rows(table.to_dict(orient="records") if hasattr(table, "to_dict") else table,
                    ("section", "entity", "quantity", "kind", "estimate", "ci95_lo", "ci95_hi"))
    same_as = _system(system).get("same_as", {})
    folded: dict[tuple, list[str]] = {}
    for r in records:
        if r["quantity"] in same_as:
            folded.setdefault((r["section"], r["entity"], same_as[r["quantity"]]), []).append(
                quantity_label(system, r["quantity"]))
    rows = []
    for r in records:
        if r["quantity"] in same_as:
            continue
        label = quantity_label(system, r["quantity"])
        also = folded.get((r["section"], r["entity"], r["quantity"]))
        if also:
            label += f" (then: {'; '.join(also)})"
        rows.append({"group": group_label(system, r["section"], r["entity"], sides), "quantity": label,
                     "kind": r["kind"], "text": estimate_text(r["kind"], r["estimate"], r["ci95_lo"], r["ci95_hi"]),
                     "estimate": r["estimate"], "ci95_lo": r["ci95_lo"], "ci95_hi": r["ci95_hi"]})
    return rows


def text_table(rows: list[dict]) -> str:
    """Rows under their group headings, estimates aligned."""
    _rows(rows, ("group", "quantity", "text"))
    if not rows:
        return ""
    width = max(len(r["quantity"]) for r in rows) + 2
    lines, group = [], None
    for r in rows:
        if r["group"] != group:
            group = r["group"]
            lines.append(group)
        lines.append(f"  {r['quantity']:<{width}}{r['text']}")
    return "\n".join(lines)


def sides_of(data: dict, engaged_only: bool = False) -> dict[str, str]:
    """{formation name: "attacker" | "defender"} from a result's ``to_dict()`` (Epic; else empty); ``engaged_only``:
    the formations that fight in the assault (role ``engaged``), whose side a "wins" is about."""
    check_instance("data", data, (dict,), "a result's to_dict()")
    check_flag("engaged_only", engaged_only)
    formations = data.get("formations", {})
    return {name: f["side"] for name, f in formations.items() if isinstance(f, dict) and "side" in f
            and (not engaged_only or f.get("role", "engaged") == "engaged")}


def html_table(rows: list[dict]) -> str:
    """Rows under their group headings as an HTML table (notebooks)."""
    _rows(rows, ("group", "quantity", "text"))
    import html

    out, group = ["<table><tr><th>quantity</th><th>estimate [95 % interval]</th></tr>"], None
    for r in rows:
        if r["group"] != group:
            group = r["group"]
            out.append(f'<tr><th colspan="2" style="text-align:left">{html.escape(group)}</th></tr>')
        out.append(f"<tr><td>{html.escape(r['quantity'])}</td><td>{html.escape(r['text'])}</td></tr>")
    return "".join(out) + "</table>"


#: Scenario keys that hold a list of named items: the item's name stands for ``KEY[NAME]`` in words.
_LISTS = ("formations", "units", "chargers", "turn", "cells")


def field_words(path: str, data: dict | None = None) -> str:
    """A scenario field path in a player's words: ``formations[Warband].blast_markers`` → "Warband: blast markers",
    ``rules.result_dice`` → "rules: result dice", ``charger.distance`` → "charger: distance".  An index names its
    item when ``data`` (the scenario as a dict) gives it a name (``formations[2]`` → "Warband")."""
    from ..intake.fieldpath import ByName, parse

    _texts(path=path)
    check_instance("data", data, (dict, type(None)), "None or the scenario as a dict")
    try:
        parts = parse(path)
    except ValueError:
        return str(path)
    where, node = [], data
    for i, part in enumerate(parts[:-1]):
        after = parts[i + 1]
        if isinstance(part, (int, ByName)):
            name = str(part)
            if isinstance(node, list) and isinstance(part, int) and -len(node) <= part < len(node):
                item = node[part]
                name = str(item.get("name") or item.get("unit") or f"#{part + 1}") if isinstance(item, dict) \
                    else f"#{part + 1}"
            elif isinstance(part, int):
                name = f"#{part + 1}"
            where.append(name)
        elif not (part in _LISTS and isinstance(after, (int, ByName))):
            where.append(part.replace("_", " "))
        node = _child(node, part)
    last = parts[-1]
    words = str(last).replace("_", " ") if not isinstance(last, int) else f"#{last + 1}"
    return f"{' · '.join(where)}: {words}" if where else words


def _child(node, part):
    from ..intake.fieldpath import ByName

    if isinstance(node, dict) and not isinstance(part, (int, ByName)):
        return node.get(part)
    if isinstance(node, list):
        if isinstance(part, int):
            return node[part] if -len(node) <= part < len(node) else None
        return next((item for item in node if isinstance(item, dict) and item.get("name") == part), None)
    return None


def result_words(system: str, path: str, sides: dict | None = None) -> str:
    """A result path in a player's words: ``sides.attacker_wins`` → "Assault Detachment (attacker) wins" (with
    ``sides``, {formation: side}, from the result), ``formations[Warband].destroyed`` → "Warband: destroyed"."""
    from ..intake.fieldpath import parse

    _system(system)
    _texts(path=path)
    _sides(sides)
    try:
        parts = [str(p) for p in parse(path)]
    except ValueError:
        return str(path)
    label = quantity_label(system, parts[-1])
    if len(parts) == 2 and parts[0] == "sides" and sides:
        for side in ("attacker", "defender"):
            if label.startswith(side + " "):
                names = [name for name, s in sides.items() if s == side]
                if names:
                    return f"{' and '.join(names)} ({side}){label[len(side):]}"
        return label
    return f"{' · '.join(parts[1:-1])}: {label}" if len(parts) > 2 else label
