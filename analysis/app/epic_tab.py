"""The Epic tab: formations from the NetEA library or a shipped example, their blast markers, broken state,
cover and where each unit group stands after the charge, the rule switches, and a turn's activations."""
from __future__ import annotations

from functools import cache

import panel as pn

from ..epic.library import PREFIX
from . import unit_editor
from .forms import Form, card, option_words
from .tabs import ScenarioTab
from .text import safe_html, visible
from .unit_editor import ENGAGEMENTS, PROFILE_FIELDS, ROLLS, TRANSPORT_NOTE, EditError

FORMATION_FIELDS = ("name", "side", "role", "initiative", "blast_markers", "broken", "cover", "points", "overwatch")
#: A new setup's title, and the same once it has a turn (the title follows the setup).
NEW_TITLE, NEW_TURN_TITLE = "Epic assault", "Epic turn"
ACTIVATION_FIELDS = ("formation", "action", "target", "retain", "on_fail", "crossfire", "overwatch_fire", "in_range",
                     "exposed", "cover", "cover_save")
NAME_LISTS = ("formation", "target", "overwatch_fire", "flak", "disengagement_flak")
NO_ROLL = "–"  # a profile field's choice for "no such attack" (or no armour save)


@cache
def library_choices() -> dict[str, str]:
    """Label ("Warband · Ork War Horde · 200 pts") → reference of every library formation the engine can build."""
    from ..epic.library.formations import formation_status, formations
    from ..epic.library.netea import army_lists, army_name

    armies = {a["id"]: army_name(a) for a in army_lists()}
    out = {}
    for ref, f in formations().items():
        if formation_status(f) == "ok":
            points = f"{f.points} pts" if f.points is not None else "points not listed"
            out[f"{f.name} · {armies.get(f.army_list, f.army_list)} · {points}"] = ref
    return out


@cache
def picker_choices() -> dict[str, str]:
    """Label → reference of every library formation the Epic tab builds: the buildable ones, those with an
    optional transport ("· plus transport") and the choice rows ("· pick 8 of 3 kinds")."""
    from ..epic.library.netea import army_lists, army_name

    armies = {a["id"]: army_name(a) for a in army_lists()}
    out = {}
    for ref, pick in unit_editor.library_picks().items():
        points = f"{pick.points} pts" if pick.points is not None else "points not listed"
        extra = ""
        if pick.choice is not None:
            low, high = pick.choice.low, pick.choice.high
            extra += f" · pick {low if low == high else f'{low}-{high}'} of {len(pick.choice.allowed)} kinds"
        if pick.alternatives:
            extra += f" · {len(pick.alternatives)} choice{'s' if len(pick.alternatives) > 1 else ''}"
        if pick.transport:
            extra += " · plus transport"
        out[f"{pick.name} · {armies.get(pick.army_list, pick.army_list)} · {points}{extra}"] = ref
    return out


def unit_label(ref) -> str:
    """A group's unit as a player reads it: the library unit's name, or the scenario's own unit key."""
    return unit_editor.unit_name(ref)


class EpicTab(ScenarioTab):
    system = "epic"
    title = "Epic"

    def __init__(self, page, setup):
        self.search = pn.widgets.TextInput(label="NetEA library: search by army or formation",
                                           placeholder="e.g. ork, warband, tactical, aspect, titan",
                                           sizing_mode="stretch_width")
        self.choice = pn.widgets.Select(options=self._matches(""), size=8, sizing_mode="stretch_width")
        self.search.param.watch(lambda event: self._filter(event.new), "value_input")
        self.choice.param.watch(lambda event: self._show_options(), "value")
        self.options = pn.Column(sizing_mode="stretch_width")  # the chosen formation's picks and transport
        self.picks: dict[str, pn.widgets.IntInput] = {}
        self.alternatives: list[pn.widgets.Select] = []  # one per part of the formation with several options
        self.transport = self.transport_count = None
        self.open_cards: set[tuple[int, str]] = set()  # (formation, "add" or a unit key): cards kept open on redraw
        self.add_side = pn.widgets.RadioButtonGroup(options=["attacker", "defender"], value="attacker")
        self.add = pn.widgets.Button(label="Add formation", color="primary")
        self.add.on_click(lambda event: self.add_library_formation(self.choice.value, self.add_side.value))
        self.clear = pn.widgets.Button(label="Start empty", color="light")
        self.clear.on_click(lambda event: self.start_empty())
        self.picker = pn.Column(self.search, self.choice, self.options,
                                pn.Row(self.add_side, self.add, self.clear), sizing_mode="stretch_width")
        self._show_options()
        super().__init__(page, setup)

    def actions(self) -> list:
        takes = [pn.widgets.Button(label=f"Compare: use as option {x}", color="light") for x in "AB"]
        for i, button in enumerate(takes):
            button.on_click(lambda event, i=i: self.page.tabs["compare"].take(i))
        return takes

    @staticmethod
    def _matches(text: str) -> list[str]:
        """The library formations whose label holds every word of ``text`` (any case)."""
        words = str(text).lower().split()
        return [label for label in picker_choices() if all(w in label.lower() for w in words)]

    def _filter(self, text: str) -> None:
        matches = self._matches(text)
        self.choice.options = matches
        if self.choice.value not in matches:
            self.choice.value = matches[0] if matches else None

    # -- changes of shape --------------------------------------------------------------------------------
    def _names(self) -> list[str]:
        return [f.get("name") for f in self.draft.get(("formations",), []) if isinstance(f, dict)]

    def start_empty(self) -> None:
        self.draft.data = {"system": "epic", "title": NEW_TITLE, "formations": [], "units": {}}
        self.example = None
        self.open_cards.clear()
        self.rebuild()

    def load(self, setup, example: str | None = None) -> None:
        self.open_cards.clear()
        super().load(setup, example)

    def _show_options(self) -> None:
        """The chosen library formation's choice row (a count of each allowed unit) and transport, if any."""
        pick = unit_editor.library_picks().get(picker_choices().get(self.choice.value))
        self.picks, self.transport, self.transport_count, shown = {}, None, None, []
        self.alternatives = [pn.widgets.Select(label=visible(part.text), options=[o.label for o in part.options],
                                               width=260) for part in (pick.alternatives if pick else ())]
        if self.alternatives:
            shown += [pn.pane.HTML("<b>Choose</b> one of each (as the army list prints it):", margin=(5, 10, 0, 10)),
                      pn.GridBox(*self.alternatives, ncols=3)]
            for box in self.alternatives:
                box.param.watch(lambda event: self._suggest_transports(pick), "value")
        if pick is not None and pick.choice is not None:
            low, high = pick.choice.low, pick.choice.high
            wanted = f"{low}" if low == high else f"{low} to {high}"
            shown.append(pn.pane.HTML(f"<b>Pick {wanted} units in all</b> of these ({safe_html(pick.name)}):",
                                      margin=(5, 10, 0, 10)))
            for k, uid in enumerate(pick.choice.allowed):
                self.picks[uid] = pn.widgets.IntInput(label=unit_label(PREFIX + uid), value=low if k == 0 else 0,
                                                      start=0, end=high, width=130)
            tally = pn.pane.HTML("", margin=(0, 10))

            def count(event=None):
                total = sum(box.value or 0 for box in self.picks.values())
                tally.object = f"picked {total} of {wanted}"

            for box in self.picks.values():
                box.param.watch(count, "value")
            count()
            shown += [pn.GridBox(*self.picks.values(), ncols=3), tally]
        if pick is not None and pick.notes:
            said = safe_html("; ".join(pick.notes).rstrip("."))
            shown.append(pn.pane.HTML(f"<small>The list also says: {said}.</small>", margin=(0, 10)))
        transports = unit_editor.transport_options(pick) if pick is not None else {}
        if transports:
            self.transport = pn.widgets.Select(label="Transport", options={"none": None, **transports}, width=200)
            self.transport_count = pn.widgets.IntInput(label="Transports", value=1, start=1, end=100, width=110)
            self.transport.param.watch(lambda event: self._suggest_transports(pick), "value")
            shown += [pn.Row(self.transport, self.transport_count),
                      pn.pane.HTML(f"<small>{safe_html(TRANSPORT_NOTE)}</small>", margin=(0, 10))]
        self.options.objects = shown

    def _suggest_transports(self, pick) -> None:
        """As many transports as carry the formation's infantry (a player may change it)."""
        if self.transport is not None and self.transport.value is not None:
            picked = {uid: box.value or 0 for uid, box in self.picks.items()}
            self.transport_count.value = unit_editor.transports_needed(pick, self.transport.value, picked,
                                                                       [box.value for box in self.alternatives])

    def add_library_formation(self, label: str, side: str) -> None:
        ref = picker_choices().get(label)
        if ref is None:
            self.page.say("NetEA library: pick a formation in the list first (type part of its name or army)")
            return
        picked = {uid: box.value or 0 for uid, box in self.picks.items()}
        transport = None
        if self.transport is not None and self.transport.value is not None:
            transport = (self.transport.value, self.transport_count.value)
        try:
            entry = unit_editor.formation_entry(ref, side, picked, transport,
                                                chosen=[box.value for box in self.alternatives])
        except (EditError, ValueError) as exc:
            self.page.say(f"NetEA library: {exc}")
            return
        names, base, k = self._names(), entry["name"], 2
        while entry["name"] in names:
            entry["name"], k = f"{base} {k}", k + 1
        self.draft.data.setdefault("units", {})
        self.example = None
        self.draft.append(("formations",), entry)

    def _edit(self, change, i: int, *args) -> None:
        """Apply a :mod:`.unit_editor` change to formation ``i`` of the draft and redraw, the card it came from
        still open (a profile's card under the unit's key now); one message for an edit it refuses."""
        try:
            key = change(self.draft.data, i, *args)
        except EditError as exc:
            self.page.say(str(exc))
            return
        if key is not None:
            self.open_cards.add((i, key))
        self.example = None
        self.rebuild()

    def _keep_open(self, widget, i: int, name: str):
        """A card that stays open (or closed) when the editor is redrawn."""
        widget.collapsed = (i, name) not in self.open_cards
        widget.param.watch(lambda event: (self.open_cards.discard if event.new else self.open_cards.add)((i, name)),
                           "collapsed")
        return widget

    def _split(self, i: int, j: int) -> None:
        groups = self.draft.get(("formations", i, "units"))
        group = groups[j]
        if group.get("count", 1) < 2:
            self.page.say(f"formations[{i}].units[{j}]: a group of one unit cannot be split")
            return
        group["count"] -= 1
        other = "ff" if group.get("engaged", "out") == "bc" else "out" if group.get("engaged") == "ff" else "bc"
        groups.insert(j + 1, {"unit": group["unit"], "count": 1, "engaged": other})
        self.example = None
        self.rebuild()

    def _add_activation(self) -> None:
        formations = [f for f in self.draft.get(("formations",), []) if isinstance(f, dict)]
        acted = {a.get("formation") for a in self.draft.get(("turn",), [])}
        actor = next((f for f in formations if f.get("name") not in acted), formations[0] if formations else {})
        enemy = next((f.get("name") for f in formations if f.get("side") != actor.get("side")), None)
        activation = {"formation": actor.get("name", ""), "action": "engage"}
        if enemy is not None:
            activation["target"] = enemy
        self.example = None
        if self.draft.get(("title",), None) == NEW_TITLE:  # the title follows the setup: a turn is not an assault
            self.draft.set(("title",), NEW_TURN_TITLE)
        self.draft.append(("turn",), activation)

    # -- the editor ---------------------------------------------------------------------------------------
    def _choices(self, model, name):
        from ..epic.turn_model import Activation

        return self._names() if model is Activation and name in NAME_LISTS else None

    def _group_row(self, i: int, j: int, group: dict):
        path = ("formations", i, "units", j)
        characters = [unit_label(c) for c in group.get("characters", [])]
        text = unit_label(group.get("unit")) + (f" with {', '.join(characters)}" if characters else "")
        count = pn.widgets.IntInput(value=group.get("count"), start=1, end=100, width=65)
        count.param.watch(lambda event: self.draft.set(path + ("count",), event.new), "value")
        engaged = pn.widgets.Select(options=ENGAGEMENTS, value=group.get("engaged", "out"), width=140)
        engaged.param.watch(lambda event: self.draft.set(path + ("engaged",), event.new), "value")
        split = pn.widgets.Button(label="Split", color="light", width=50,
                                  description="Move one unit of this group into a group of its own")
        split.on_click(lambda event: self._split(i, j))
        remove = pn.widgets.Button(label="✕", color="light", width=40, description="Remove this group")
        remove.on_click(lambda event: self.draft.remove(path))
        off = []
        for k, name in enumerate(characters):
            button = pn.widgets.Button(label=f"✕ {visible(name)}", color="light", width=120,
                                       description=f"Take {visible(name)} off this group")
            button.on_click(lambda event, k=k: self._edit(unit_editor.remove_character, i, j, k))
            off.append(button)
        # a FlexBox wraps the characters' buttons onto a second line on a narrow card instead of past its edge
        return pn.FlexBox(pn.pane.HTML(safe_html(text), width=80, margin=(12, 5, 0, 10)), count, engaged, split,
                          remove, *off, flex_wrap="wrap", sizing_mode="stretch_width")

    def _add_unit(self, i: int, formation: dict):
        """Add unit: search the library (the formation's army list's units when the box is empty), how many,
        where they are."""
        army = formation.get("army")
        search = pn.widgets.TextInput(label="Add unit: search the unit library", placeholder="e.g. rhino, boyz",
                                      sizing_mode="stretch_width")
        found = pn.widgets.Select(options=unit_editor.unit_options(self.draft.data, "", army), size=5,
                                  sizing_mode="stretch_width")

        def matches(event):
            found.options = unit_editor.unit_options(self.draft.data, event.new, army)

        search.param.watch(matches, "value_input")
        count = pn.widgets.IntInput(label="how many", value=1, start=1, end=100, width=90)
        engaged = pn.widgets.Select(label="where", options=ENGAGEMENTS, value="bc", width=140)
        add = pn.widgets.Button(label="Add unit", color="primary", align="end")
        add.on_click(lambda event: self._edit(unit_editor.add_group, i, found.value, count.value, engaged.value))
        groups = {f"{j + 1}. {visible(unit_label(g.get('unit')))}": j for j, g in enumerate(formation.get("units", []))
                  if isinstance(g, dict)}
        host = pn.widgets.Select(label="to group", options=groups, width=180)
        character = pn.widgets.Select(label="character", options=unit_editor.character_options(self.draft.data, army),
                                      width=220)
        attach = pn.widgets.Button(label="Add character", color="primary", align="end")
        attach.on_click(lambda event: self._edit(unit_editor.add_character, i, host.value, character.value))
        return self._keep_open(card("Add a unit to this formation", search, found, pn.Row(count, engaged, add),
                                    pn.pane.HTML("<b>A character</b> joins a group's first unit: its weapons and "
                                                 "abilities are added to that unit", margin=(5, 10, 0, 10)),
                                    pn.FlexBox(host, character, attach, flex_wrap="wrap", sizing_mode="stretch_width")),
                               i, "add")

    def _profile(self, i: int, key: str):
        """The fields of unit ``key``'s profile a player changes: armour, CC, FF and each weapon line's count."""
        profile = unit_editor.profile(self.draft.data, key) or {}
        rolls = {NO_ROLL: None, **{f"{r}+": r for r in ROLLS}}
        fields = []
        for field in PROFILE_FIELDS:
            box = pn.widgets.Select(label=field if field == "armour" else field.upper(), options=rolls,
                                    value=profile.get(field), width=80)
            box.param.watch(lambda event, field=field: self._edit(unit_editor.set_profile_value, i, key, field,
                                                                  event.new), "value")
            fields.append(box)
        for line, weapon in enumerate(profile.get("weapons", [])):
            box = pn.widgets.IntInput(label=f"{visible(str(weapon.get('name', 'weapon')))} ×",
                                      value=weapon.get("count", 1), start=1, end=20, width=120)
            box.param.watch(lambda event, line=line: self._edit(unit_editor.set_weapon_count, i, key, line,
                                                                event.new), "value")
            fields.append(box)
        if profile.get("type") == "WE":
            for field, (low, high) in unit_editor.WAR_ENGINE_FIELDS.items():
                box = pn.widgets.IntInput(label=field.replace("_", " "), value=profile.get(field, 0), start=low,
                                          end=high, width=120)
                box.param.watch(lambda event, field=field: self._edit(unit_editor.set_war_engine_value, i, key,
                                                                      field, event.new), "value")
                fields.append(box)
        toggles = []
        for words, rule in unit_editor.special_rules().items():
            box = pn.widgets.Checkbox(label=words, value=rule in profile.get("special", []), width=150)
            box.param.watch(lambda event, rule=rule: self._edit(unit_editor.set_special_rule, i, key, rule,
                                                                event.new), "value")
            toggles.append(box)
        body = [pn.GridBox(*fields, ncols=3), pn.pane.HTML("<b>Special rules</b>", margin=(5, 10, 0, 10)),
                pn.FlexBox(*toggles, flex_wrap="wrap", sizing_mode="stretch_width")]
        if unit_editor.is_transport(self.draft.data, key):
            body.append(pn.pane.HTML(f"<small>{safe_html(TRANSPORT_NOTE)}</small>", margin=(0, 10)))
        return self._keep_open(card(f"Profile: {unit_label(key)}", *body), i, key)

    def _formation(self, i: int, formation: dict):
        from ..epic.model import Formation

        body = Form(self.draft).widgets(Formation, ("formations", i), only=FORMATION_FIELDS)
        body.append(pn.pane.HTML("<b>Units</b>: how many, and where each group is after the charge",
                                 margin=(10, 10, 0, 10)))
        body += [self._group_row(i, j, g) for j, g in enumerate(formation.get("units", [])) if isinstance(g, dict)]
        body.append(self._add_unit(i, formation))
        body += [self._profile(i, key) for key in unit_editor.formation_units(formation)]
        remove = pn.widgets.Button(label="Remove formation", color="light")
        remove.on_click(lambda event: self.draft.remove(("formations", i)))
        body.append(remove)
        return card(f"{formation.get('name', '?')} ({formation.get('side', '?')})", *body, collapsed=i > 3)

    def _activation(self, i: int, activation: dict):
        from ..epic.turn_model import Activation

        body = Form(self.draft, self._choices).widgets(Activation, ("turn", i), only=ACTIVATION_FIELDS)
        up = pn.widgets.Button(label="Move up", color="light", disabled=i == 0)
        up.on_click(lambda event: self.draft.move_up(("turn", i)))
        remove = pn.widgets.Button(label="Remove", color="light")
        remove.on_click(lambda event: self.draft.remove(("turn", i)))
        body.append(pn.Row(up, remove))
        action = option_words("action", activation.get("action", ""))
        target = f" at {activation['target']}" if activation.get("target") else ""
        return card(f"{i + 1}. {activation.get('formation', '')}: {action}{target}", *body)

    def build(self):
        from ..epic.model import EndPhase, EpicScenario, Rules

        form = Form(self.draft)
        formations = [f for f in self.draft.get(("formations",), []) if isinstance(f, dict)]
        activations = [a for a in self.draft.get(("turn",), []) if isinstance(a, dict)]
        add_activation = pn.widgets.Button(label="Add activation", color="light")
        add_activation.on_click(lambda event: self._add_activation())
        return [
            self.picker,
            pn.Row(*form.widgets(EpicScenario, only=("title",))),
            *[self._formation(i, f) for i, f in enumerate(formations)],
            pn.pane.HTML("<b>Turn</b>: activations in order, ending with an engage (none: an assault as set up "
                         "above)", margin=(10, 10, 0, 10)),
            *[self._activation(i, a) for i, a in enumerate(activations)],
            add_activation,
            card("Rule switches", *form.widgets(Rules, ("rules",)), collapsed=True),
            card("End phase", *form.widgets(EndPhase, ("end_phase",)), collapsed=True),
        ]
