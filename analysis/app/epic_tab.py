"""The Epic tab: formations from the NetEA library or a shipped example, their blast markers, broken state,
cover and where each unit group stands after the charge, the rule switches, and a turn's activations."""
from __future__ import annotations

from functools import cache

import panel as pn

from .forms import Form, card
from .tabs import ScenarioTab
from .text import safe_html

FORMATION_FIELDS = ("name", "side", "role", "initiative", "blast_markers", "broken", "cover", "points", "overwatch")
ACTIVATION_FIELDS = ("formation", "action", "target", "retain", "on_fail", "crossfire", "overwatch_fire", "in_range",
                     "exposed", "cover", "cover_save")
NAME_LISTS = ("formation", "target", "overwatch_fire", "flak", "disengagement_flak")
ENGAGED = {"contact": "bc", "firefight": "ff", "out": "out"}  # base contact (TP 1.12.3), firefight, out


@cache
def library_choices() -> dict[str, str]:
    """Label ("Warband · Ork War Horde · 200 pts") → reference of every library formation the engine can build."""
    from ..library.formations import formation_status, formations
    from ..library.netea import army_lists

    armies = {a["id"]: a.get("name") or a["id"] for a in army_lists()}
    out = {}
    for ref, f in formations().items():
        if formation_status(f) == "ok":
            points = f"{f.points} pts" if f.points is not None else "points not listed"
            out[f"{f.name} · {armies.get(f.army_list, f.army_list)} · {points}"] = ref
    return out


def unit_label(ref) -> str:
    """A group's unit as a player reads it: the library unit's name, or the scenario's own unit key."""
    from ..library import PREFIX
    from ..library.netea import units

    if isinstance(ref, str) and ref.startswith(PREFIX) and ref[len(PREFIX):] in units():
        return units()[ref[len(PREFIX):]]["name"]
    return str(ref)


class EpicTab(ScenarioTab):
    system = "epic"
    title = "Epic"

    def __init__(self, page, setup):
        self.search = pn.widgets.TextInput(label="NetEA library: search by army or formation",
                                           placeholder="e.g. ork, warband, tactical, titan",
                                           sizing_mode="stretch_width")
        self.choice = pn.widgets.Select(options=self._matches(""), size=8, sizing_mode="stretch_width")
        self.search.param.watch(lambda event: self._filter(event.new), "value_input")
        self.add_side = pn.widgets.RadioButtonGroup(options=["attacker", "defender"], value="attacker")
        self.add = pn.widgets.Button(label="Add formation", color="primary")
        self.add.on_click(lambda event: self.add_library_formation(self.choice.value, self.add_side.value))
        self.clear = pn.widgets.Button(label="Start empty", color="light")
        self.clear.on_click(lambda event: self.start_empty())
        self.picker = pn.Column(self.search, self.choice, pn.Row(self.add_side, self.add, self.clear),
                                sizing_mode="stretch_width")
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
        return [label for label in library_choices() if all(w in label.lower() for w in words)]

    def _filter(self, text: str) -> None:
        matches = self._matches(text)
        self.choice.options = matches
        if self.choice.value not in matches:
            self.choice.value = matches[0] if matches else None

    # -- changes of shape --------------------------------------------------------------------------------
    def _names(self) -> list[str]:
        return [f.get("name") for f in self.draft.get(("formations",), []) if isinstance(f, dict)]

    def start_empty(self) -> None:
        self.draft.data = {"system": "epic", "title": "Epic assault", "formations": [], "units": {}}
        self.example = None
        self.rebuild()

    def add_library_formation(self, label: str, side: str) -> None:
        from ..library.formations import expand_formation

        ref = library_choices().get(label)
        if ref is None:
            self.page.say("NetEA library: pick a formation in the list first (type part of its name or army)")
            return
        entry = expand_formation({"library": ref}, "library")
        names, base, k = self._names(), entry["name"], 2
        while entry["name"] in names:
            entry["name"], k = f"{base} {k}", k + 1
        entry["side"] = side
        self.draft.data.setdefault("units", {})
        self.example = None
        self.draft.append(("formations",), entry)

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
        engaged = pn.widgets.Select(options=ENGAGED, value=group.get("engaged", "out"), width=105)
        engaged.param.watch(lambda event: self.draft.set(path + ("engaged",), event.new), "value")
        split = pn.widgets.Button(label="Split", color="light", width=55,
                                  description="Move one unit of this group into a group of its own")
        split.on_click(lambda event: self._split(i, j))
        remove = pn.widgets.Button(label="✕", color="light", width=40, description="Remove this group")
        remove.on_click(lambda event: self.draft.remove(path))
        return pn.Row(pn.pane.HTML(safe_html(text), width=100, margin=(12, 5, 0, 10)), count, engaged, split, remove)

    def _formation(self, i: int, formation: dict):
        from ..epic.model import Formation

        body = Form(self.draft).widgets(Formation, ("formations", i), only=FORMATION_FIELDS)
        body.append(pn.pane.HTML("<b>Units</b>: how many, and where each group is after the charge",
                                 margin=(10, 10, 0, 10)))
        body += [self._group_row(i, j, g) for j, g in enumerate(formation.get("units", [])) if isinstance(g, dict)]
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
        what = " ".join(str(activation.get(k, "")) for k in ("formation", "action", "target"))
        return card(f"{i + 1}. {what}", *body)

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
