"""Widgets for the fields of a scenario's pydantic models, bounded as the models bound them.

A :class:`Draft` holds the data a tab edits (a scenario as TOML has it); a :class:`Form` makes one widget per
field of a model at a path in that data (a number input with the field's range, a choice of its literals,
a check box, cards for nested tables and lists of tables) and writes every change back to the draft, which
the tab then checks with the rule system's own validation.
"""
from __future__ import annotations

import copy
import tomllib
import types
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import annotated_types
import panel as pn
import tomli_w
from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from .text import safe_html, visible

SMALL_RANGE = 12  # an optional whole number with at most this many values is a choice; else a number box
WIDTH = 130  # of a field's widget (three to a row)


@cache
def templates() -> dict:
    """The data of a new list item or optional table, by ``SYSTEM.Model`` (``templates.toml``)."""
    return tomllib.loads(resources.files(__package__).joinpath("templates.toml").read_text("utf-8"))


@cache
def words() -> dict:
    """The choices in a player's words (``words.toml``): option words, what leaving a field out means, hints."""
    return tomllib.loads(resources.files(__package__).joinpath("words.toml").read_text("utf-8"))


def option_words(field: str, value) -> str:
    """A rule option as a player reads it: ``engaged = "bc"`` → "in base contact", an action as the rules name it
    ("Sustained Fire"), any other code with spaces for its underscores (``stand_and_shoot`` → "stand and shoot")."""
    if field == "action":
        from ..output.labels import action_name

        return action_name(value)
    table = words()["options"]
    text = table.get(field, {}).get(str(value)) or table["*"].get(str(value))
    return text or (value.replace("_", " ") if isinstance(value, str) else str(value))


def none_words(field: str) -> str:
    """The choice that leaves an optional field out, in words ("no cover", "the rules' default")."""
    return words()["none"].get(field, words()["none"]["*"])


def model_key(model: type[BaseModel]) -> str:
    """``t9a.Charger``: the rule system and the model's name."""
    return f"{model.__module__.removeprefix('wargame_odds.analysis.').split('.')[0]}.{model.__name__}"


@dataclass
class Spec:
    """What kind of widget edits a field, and its bounds."""

    kind: str  # bool, choice, int, float, text, multi, model, models, toml, skip
    optional: bool = False
    options: tuple = ()
    lo: float | None = None
    hi: float | None = None
    model: type | None = None
    default: Any = None


def _bounds(metadata) -> tuple[float | None, float | None]:
    lo = hi = None
    for m in metadata:
        if isinstance(m, (annotated_types.Ge, annotated_types.Gt)):
            lo = getattr(m, "ge", None) if isinstance(m, annotated_types.Ge) else m.gt
        elif isinstance(m, (annotated_types.Le, annotated_types.Lt)):
            hi = getattr(m, "le", None) if isinstance(m, annotated_types.Le) else m.lt
    return lo, hi


def _unwrap(annotation, metadata: list) -> Any:
    """``Annotated[int, Field(ge=1)]`` → int, its bounds added to ``metadata``."""
    while get_origin(annotation) is Annotated:
        args = get_args(annotation)
        for extra in args[1:]:
            metadata.extend(getattr(extra, "metadata", []) or [extra])
        annotation = args[0]
    return annotation


def field_spec(info) -> Spec:
    """The :class:`Spec` of a pydantic field."""
    metadata = list(info.metadata)
    annotation = _unwrap(info.annotation, metadata)
    default = None if info.default is PydanticUndefined else info.default
    args = get_args(annotation) if get_origin(annotation) in (Union, types.UnionType) else (annotation,)
    optional = type(None) in args
    core = [_unwrap(a, metadata) for a in args if a is not type(None)]
    lo, hi = _bounds(metadata)
    if len(core) != 1:
        return Spec("toml", optional, default=default)
    kind = core[0]
    if kind is bool:
        return Spec("bool", optional, default=default)
    if get_origin(kind) is Literal:
        return Spec("choice", optional, options=get_args(kind), default=default)
    if kind is int:
        return Spec("int", optional, lo=lo, hi=hi, default=default)
    if kind is float:
        return Spec("float", optional, lo=lo, hi=hi, default=default)
    if kind is str:
        return Spec("text", optional, default=default)
    if isinstance(kind, type) and issubclass(kind, BaseModel):
        return Spec("model", optional, model=kind, default=default)
    if get_origin(kind) is list:
        item = _unwrap(get_args(kind)[0], [])
        if isinstance(item, type) and issubclass(item, BaseModel):
            return Spec("models", optional, model=item, default=default)
        if get_origin(item) is Literal:
            return Spec("multi", optional, options=get_args(item), default=default)
        if item is str:
            return Spec("multi", optional, default=default)
    if get_origin(kind) is dict:
        return Spec("skip")
    return Spec("toml", optional, default=default)


def label(name: str) -> str:
    return name.replace("_", " ")


MISSING = object()


def card(title: str, *objects, collapsed: bool = False):
    """A card whose title is user text shown as data."""
    header = pn.pane.HTML(f"<b>{safe_html(title)}</b>", margin=(0, 5))
    return pn.Card(*objects, header=header, collapsed=collapsed, sizing_mode="stretch_width")


class Draft:
    """The data a tab edits.  ``changed(path)`` runs after every change of a value, ``rebuilt()`` after a
    change of shape (a list item added or removed), which redraws the form."""

    def __init__(self, data: dict, changed, rebuilt):
        self.data = copy.deepcopy(data)
        self._changed = changed
        self._rebuilt = rebuilt

    def get(self, path: tuple, default=MISSING):
        node = self.data
        for key in path:
            try:
                node = node[key]
            except (KeyError, IndexError, TypeError):
                return default
        return node

    def _parent(self, path: tuple, create: bool = True):
        node = self.data
        for key in path[:-1]:
            if isinstance(node, dict) and key not in node and create:
                node[key] = {}
            node = node[key]
        return node

    def set(self, path: tuple, value) -> None:
        """Set the value at ``path``; None leaves the key out (TOML has no null)."""
        parent = self._parent(path)
        if value is None:
            if isinstance(parent, dict):
                parent.pop(path[-1], None)
        else:
            parent[path[-1]] = value
        self._changed(path)

    def append(self, path: tuple, item) -> None:
        items = self.get(path, None)
        if items is None:
            self._parent(path)[path[-1]] = items = []
        items.append(copy.deepcopy(item))
        self._rebuilt()

    def put(self, path: tuple, table: dict) -> None:
        """Add an optional table (its template) and redraw the form."""
        self._parent(path)[path[-1]] = copy.deepcopy(table)
        self._rebuilt()

    def remove(self, path: tuple) -> None:
        parent = self._parent(path, create=False)
        if isinstance(parent, list):
            del parent[path[-1]]
        else:
            parent.pop(path[-1], None)
        self._rebuilt()

    def move_up(self, path: tuple) -> None:
        parent, i = self._parent(path, create=False), path[-1]
        if i > 0:
            parent[i - 1], parent[i] = parent[i], parent[i - 1]
            self._rebuilt()


def _toml_literal(value) -> str:
    return tomli_w.dumps({"v": value})[4:].strip() if value is not None else ""


class Form:
    """Widgets editing ``draft`` at paths.  ``choices(model, field)`` may give the allowed values of a text
    field (formation names), which then gets a choice instead of a text box."""

    def __init__(self, draft: Draft, choices=None):
        self.draft = draft
        self.choices = choices or (lambda model, name: None)

    def widgets(self, model: type[BaseModel], path: tuple = (), only=None, skip=()) -> list:
        """The model's fields at ``path``: the single values three to a row, then the tables and lists."""
        names = [n for n in (only or model.model_fields) if n not in skip]
        fields, tables = [], []
        for name in names:
            widget = self.widget(model, name, path + (name,))
            if widget is not None:
                (tables if isinstance(widget, (pn.Card, pn.Column)) else fields).append(widget)
        return ([pn.GridBox(*fields, ncols=3)] if fields else []) + tables

    def widget(self, model, name: str, path: tuple):
        spec = field_spec(model.model_fields[name])
        value = self.draft.get(path, MISSING)
        shown = spec.default if value is MISSING else value
        listed = self.choices(model, name)
        if listed is not None and spec.kind in ("text", "multi"):
            spec = Spec("choice" if spec.kind == "text" else "multi", spec.optional, options=tuple(listed),
                        default=spec.default)
        if listed is not None and spec.kind == "choice":
            return self._choice(spec, label(name), path, shown, rule_options=False)
        make = getattr(self, f"_{spec.kind}")
        return make(spec, label(name), path, shown)

    def _watch(self, widget, path: tuple, convert=lambda v: v):
        def changed(event):
            self.draft.set(path, convert(event.new))

        widget.param.watch(changed, "value")
        return widget

    def _bool(self, spec, name, path, value):
        return self._watch(pn.widgets.Checkbox(label=name, value=bool(value), width=WIDTH, align="end"), path)

    def _choice(self, spec, name, path, value, rule_options: bool = True):
        """A drop-down; a rule's options in a player's words (:func:`option_words`), names (user text) as data."""
        values = {visible(o): o for o in spec.options}  # the option text is a name (user text) shown as data
        if rule_options:
            worded = {option_words(path[-1], o): o for o in spec.options}
            if len(worded) == len(values):  # two codes in the same words: the codes themselves
                values = worded
        if spec.optional:
            values = {none_words(path[-1]): None, **values}
        if value not in values.values():
            values[visible(value)] = value  # a value the draft holds (its check names the problem)
        shown = next(text for text, v in values.items() if v == value and type(v) is type(value))
        select = pn.widgets.Select(label=name, options=list(values), value=shown, width=WIDTH)
        return self._watch(select, path, values.get)

    def _int(self, spec, name, path, value):
        if spec.optional and spec.lo is not None and spec.hi is not None and spec.hi - spec.lo < SMALL_RANGE:
            return self._choice(Spec("choice", True, options=tuple(range(int(spec.lo), int(spec.hi) + 1))),
                                name, path, value)
        box = pn.widgets.IntInput(label=name, value=value, start=spec.lo, end=spec.hi, width=WIDTH)
        return self._watch(box, path)

    def _float(self, spec, name, path, value):
        box = pn.widgets.FloatInput(label=name, value=None if value is None else float(value), start=spec.lo,
                                    end=spec.hi, step=0.5, width=WIDTH)
        return self._watch(box, path)

    def _text(self, spec, name, path, value):
        box = pn.widgets.TextInput(label=name, value="" if value is None else str(value), max_length=200,
                                  width=3 * WIDTH if path[-1] == "title" else WIDTH)
        return self._watch(box, path, lambda v: v if v or not spec.optional else None)

    def _multi(self, spec, name, path, value):
        """A multiple choice; its labels are escaped (the browser's choice list reads them as HTML)."""
        value = list(value or [])
        options = {safe_html(o): o for o in dict.fromkeys([*spec.options, *value])}
        return self._watch(pn.widgets.MultiChoice(label=name, options=options, value=value, width=WIDTH), path)

    def _toml(self, spec, name, path, value):
        hint = words()["hints"].get(path[-1], f"{name} (as in the scenario file)")
        box = pn.widgets.TextInput(label=hint, value=_toml_literal(value), max_length=2000, width=WIDTH)

        def changed(event):
            if not event.new.strip():
                self.draft.set(path, None)
                return
            try:
                parsed = tomllib.loads(f"v = {event.new}")["v"]
            except tomllib.TOMLDecodeError:
                parsed = event.new  # a bare word: the field's check says what is allowed
            self.draft.set(path, parsed)

        box.param.watch(changed, "value")
        return box

    def _skip(self, spec, name, path, value):
        return None

    def _model(self, spec, name, path, value):
        if value is None:
            if not spec.optional:
                value = {}
            else:
                add = pn.widgets.Button(label=f"Add {name}", color="light")
                add.on_click(lambda event: self.draft.put(path, templates().get(model_key(spec.model), {})))
                return add
        body = self.widgets(spec.model, path)
        if spec.optional:
            remove = pn.widgets.Button(label=f"Remove {name}", color="light")
            remove.on_click(lambda event: self.draft.remove(path))
            body.append(remove)
        return card(name, *body)

    def _models(self, spec, name, path, value):
        cards = []
        for i, item in enumerate(value or []):
            title = f"{name} {i + 1}" + (f": {item['name']}" if isinstance(item, dict) and item.get("name") else "")
            remove = pn.widgets.Button(label="Remove", color="light")
            remove.on_click(lambda event, where=path + (i,): self.draft.remove(where))
            cards.append(card(title, *self.widgets(spec.model, path + (i,)), remove))
        add = pn.widgets.Button(label=f"Add to {name}", color="light")
        add.on_click(lambda event: self.draft.append(path, templates().get(model_key(spec.model), {})))
        return pn.Column(*cards, add, sizing_mode="stretch_width")
