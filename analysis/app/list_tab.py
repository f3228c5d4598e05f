"""The List tab: which detachment should I take?  An army list of the NetEA library, a points cap and a meta of
library formations weighted by sliders, raced by ``wargame_odds.analysis.decisions.list_search`` (docs/list-search.md)
with the page's seed; its definition downloads as the TOML that ``wargame-odds list-search`` runs unchanged."""
from __future__ import annotations

import io
from functools import cache

import click
import panel as pn

from ..decisions.list_search_cli import COLUMNS, list_search_command
from ..decisions.list_search_core import ListSearchDefinition, list_search, plan
from ..intake.errors import UserError
from ..output.result import fold
from ..run.runner import PROGRESS_SINK
from ..intake.scenario import validate
from ..intake.user_text import csv_text
from .epic_tab import library_choices
from .render import Figures, Shown
from .tabs import EDITOR_WIDTH, ResultView, slug
from .text import safe_html

#: What one run of the page may start: at most this many candidates (the command allows 5,000, a server less) and
#: at most this many trials (the race's budget, checked by the command's own --max-trials type first).
MAX_CANDIDATES = 500
MAX_BUDGET = 2_000_000_000
DEFAULT_BUDGET = 50_000_000
MAX_WEIGHT = 10
DEFAULT_CAP = 300
DEFAULT_ARMY = "netea:space-marine-codex-astartes"
DEFAULT_META = ("netea:ork-war-horde/warband", "netea:ork-war-horde/kommando-warhorde")
SOURCE = "List tab"
#: The List tab's plans: label → (plan, action) of the definition (docs/decisions.md, "Turn plans").  A plan that may
#: shoot is scored on the enemy broken or destroyed after the end phase (a shooting turn has no assault to win).
PLANS = {"each detachment's job: a shooting formation shoots (Sustained Fire), any other assaults":
         ("job", "sustained_fire"),
         "every detachment assaults (one assault, every unit in base contact)": ("assault", "sustained_fire"),
         "every detachment shoots: Sustained Fire": ("shoot", "sustained_fire"),
         "every detachment shoots: Advance": ("shoot", "advance"),
         "every detachment shoots: Double": ("shoot", "double")}


def _cli_option(name: str) -> click.ParamType:
    """The type of the ``list-search`` command's option ``name`` (its bounds): the page checks what the CLI checks."""
    return next(p.type for p in list_search_command.params if p.name == name)


@cache
def army_choices() -> dict[str, str]:
    """Label ("Codex Astartes") → reference (``netea:space-marine-codex-astartes``) of every NetEA army list."""
    from ..epic.library.netea import army_lists, army_name

    lists = sorted(army_lists(), key=lambda a: army_name(a).lower())
    return {f"{army_name(a)} ({a['id']})": f"netea:{a['id']}" for a in lists}


@cache
def opponent_choices() -> dict[str, str]:
    """Label ("Ork War Horde: Warband (200 pts)") → reference of every library formation the engine can build (the
    Epic tab's list, army first: its "Warband · ..." labels stay the Epic tab's own)."""
    out = {}
    for label, ref in library_choices().items():
        name, army, points = (label.split(" · ") + ["", ""])[:3]
        out[f"{army}: {name} ({points})"] = ref
    return out


def _formation_name(label: str) -> str:
    """The formation's name in an opponent's label (the weight slider's name)."""
    return label.split(": ", 1)[-1].rsplit(" (", 1)[0]


def render_search(result) -> Shown:
    """A list search as the page shows it: its sentences (the guarantee among them), the ranking of the candidates
    the race did not drop and its notes, all user text escaped; the CSV of every candidate and the JSON."""
    frame = result.table()
    sentences = "".join(f"<li>{safe_html(s)}</li>" for s in result.sentences)
    rows = []
    for r in frame[frame.status != "dropped"].itertuples(index=False):
        score = "" if r.score != r.score else f"{r.score:.1f} %" + (
            "" if r.ci95_lo != r.ci95_lo else f" [{r.ci95_lo:.1f}, {r.ci95_hi:.1f}]")
        behind = "" if r.status == "best" or r.behind_best != r.behind_best else f"{r.behind_best:.2f}" + (
            "" if r.behind_lo != r.behind_lo else f" [{r.behind_lo:.2f}, {r.behind_hi:.2f}]")
        points = "" if r.points != r.points else f"{r.points:.0f}"
        plan = f"<td>{safe_html(r.plan)}</td>" if "plan" in frame else ""
        rows.append(f"<tr><td>{int(r.rank)}</td><td>{safe_html(r.candidate)}</td>{plan}<td>{points}</td>"
                    f"<td>{score}</td><td>{behind}</td><td>{safe_html(r.status)}</td></tr>")
    dropped = int((frame.status == "dropped").sum())
    notes = "".join(f"<p><i>note: {safe_html(n)}</i></p>" for n in result.notes)
    lead = f"<h3>{safe_html(result.title)}</h3><ul>{sentences}</ul>{notes}"
    plan = "<th>plan</th>" if "plan" in frame else ""
    table = fold(f"<table><tr><th>#</th><th>candidate</th>{plan}<th>points</th><th>meta score [95 % interval]</th>"
                 "<th>behind the best, percentage points [paired 95 % interval]</th><th>status</th></tr>"
                 + "".join(rows) + "</table>"
                 + (f"<p>{dropped} candidate{'s' if dropped != 1 else ''} dropped by the race (the CSV lists every "
                    "candidate).</p>" if dropped else ""))
    return Shown(html=lead, fold=table, csv=csv_text(frame[COLUMNS + ["plan"] if "plan" in frame else COLUMNS]),
                 json=result.to_json(),
                 trials=int(result.race["trials"]), result=result)


class ListTab:
    """An army list, a points cap and a weighted meta; Run races every detachment up to the cap (the page's seed,
    its Cancel and progress: trials spent of the budget)."""

    system = "list"
    title = "List"

    def __init__(self, page):
        self.page = page
        self.example: str | None = None
        self.problem: str | None = None
        armies = army_choices()
        self.army = pn.widgets.Select(label="Army list (NetEA library)", options=list(armies),
                                      value=next(k for k, v in armies.items() if v == DEFAULT_ARMY),
                                      sizing_mode="stretch_width")
        self.cap = pn.widgets.IntInput(label="Points cap", value=DEFAULT_CAP, start=1,
                                       end=100_000, step=25, width=220)
        self.indifference = pn.widgets.FloatInput(label="Indifference (percentage points)", value=2.0, start=0.1,
                                                  end=50.0, step=0.5, width=220)
        self.plan = pn.widgets.Select(label="Turn plan (what each detachment does with its turn)", options=list(PLANS),
                                      value=next(iter(PLANS)), sizing_mode="stretch_width")
        self.budget = pn.widgets.IntInput(label="Trials budget (the race stops there, then without a guarantee)",
                                          value=DEFAULT_BUDGET, start=1, end=MAX_BUDGET, step=1_000_000,
                                          sizing_mode="stretch_width")
        labels = {v: k for k, v in opponent_choices().items()}
        self.meta = pn.widgets.MultiChoice(label="Meta: opponent formations (NetEA library)",
                                           options=list(opponent_choices()),
                                           value=[labels[ref] for ref in DEFAULT_META if ref in labels],
                                           max_items=100, sizing_mode="stretch_width")
        self.weights: dict[str, pn.widgets.IntSlider] = {}
        self.sliders = pn.Column(sizing_mode="stretch_width")
        self.count = pn.pane.HTML("", disable_math=True)
        self.download = pn.widgets.FileDownload(label="Download list search (TOML)", callback=self._toml,
                                                filename="list-search.toml", color="primary")
        for widget in (self.army, self.cap, self.indifference, self.budget, self.plan):
            widget.param.watch(lambda event: self._edited(), "value")
        self.meta.param.watch(lambda event: self._meta_changed(), "value")
        self.results = ResultView("list-search")
        self.results.html.object = "<p>Press <b>Run</b> to race every detachment up to the cap against the meta.</p>"
        explain = pn.pane.HTML(
            "<p>Which detachment should I take? Every legal detachment of the army list up to the points cap (with "
            "its upgrades) meets every formation of the meta on the same dice; the race drops the clearly worse "
            "and names the best with a guarantee (docs/list-search.md). The race decides its trials: the Trials box "
            "above is not used, the budget here bounds them; the seed is the page's.</p>"
            "<p>Each detachment plays its turn plan against each opponent: by default its job (a shooting formation "
            "such as Devastators takes a Sustained Fire at the opponent, any other assaults it). A plan that may "
            "shoot scores the chance that the opponent is broken or destroyed after the end phase (a shooting turn "
            "has no assault to win); every detachment assaulting scores the chance to win the assault. The ranking "
            "says which plan each detachment played.</p>", disable_math=True)
        self.panel = pn.Row(pn.Column(explain, self.army, pn.Row(self.cap, self.indifference), self.plan, self.meta,
                                      self.sliders, self.budget, self.count, self.download, width=EDITOR_WIDTH),
                            self.results.panel, sizing_mode="stretch_width")
        self._meta_changed()

    # -- the definition -----------------------------------------------------------------------------------
    def _meta_changed(self) -> None:
        """One weight slider per opponent of the meta (kept for opponents that stay)."""
        chosen = list(self.meta.value or [])
        self.weights = {label: self.weights.get(label) or self._slider(label) for label in chosen}
        self.sliders.objects = list(self.weights.values())
        self._edited()

    def _slider(self, label: str) -> pn.widgets.IntSlider:
        slider = pn.widgets.IntSlider(label=f"weight of {_formation_name(label)}", start=1, end=MAX_WEIGHT, value=1,
                                      sizing_mode="stretch_width")
        slider.param.watch(lambda event: self._edited(), "value")
        return slider

    def definition(self) -> dict:
        """The list-search definition the page shows (not checked: :meth:`checked` does)."""
        army = army_choices().get(self.army.value)
        cap = self.cap.value
        opponents = [{"force": opponent_choices()[label], "weight": int(slider.value)}
                     for label, slider in self.weights.items() if label in opponent_choices()]
        name = str(self.army.value or "").rsplit(" (", 1)[0]
        plan, action = PLANS.get(self.plan.value, next(iter(PLANS.values())))
        return {"system": "epic", "title": f"{name} detachments up to {cap} points against a meta of {len(opponents)}",
                "army": army, "max_points": cap, "objective": "win" if plan == "assault" else "break",
                "plan": plan, "action": action, "side": "attacker",
                "indifference": self.indifference.value, "confidence": 95.0, "opponents": opponents}

    def checked(self) -> tuple[dict, dict]:
        """The definition and its plan (candidates, matchups), checked as ``wargame-odds list-search`` checks a
        file, then against what the page lets a player start; one :class:`UserError` otherwise."""
        data = self.definition()
        if data["army"] is None:
            raise UserError(SOURCE, "army", "no army list chosen", "an army list of the NetEA library")
        if not data["opponents"]:
            raise UserError(SOURCE, "opponents", "the meta is empty", "at least one opponent formation")
        for key, value in (("max_points", data["max_points"]), ("indifference", data["indifference"])):
            if value is None:
                raise UserError(SOURCE, key, "no value", "a number")
        planned = plan(validate(ListSearchDefinition, data, SOURCE), SOURCE)
        if planned["candidates"] > MAX_CANDIDATES:
            raise UserError(SOURCE, "max_points", f"{planned['candidates']} candidates",
                            f"at most {MAX_CANDIDATES} on this page: a lower points cap (the command line takes more)")
        return data, planned

    def budget_trials(self) -> int:
        """The budget, checked by the command's ``--max-trials`` type, then against :data:`MAX_BUDGET`."""
        try:
            budget = _cli_option("max_trials").convert(self.budget.value, None, None)
        except click.BadParameter:
            raise UserError(SOURCE, "budget", f"got {self.budget.value!r}", "a whole number of trials") from None
        if budget > MAX_BUDGET:
            raise UserError(SOURCE, "budget", f"{budget:,} trials", f"at most {MAX_BUDGET:,} on this page")
        return budget

    def toml(self) -> str:
        """The definition as a file ``wargame-odds list-search`` runs unchanged."""
        from ..reports.definition import to_toml

        data, _ = self.checked()
        return ("# wargame-odds list-search THIS_FILE --seed SEED --max-trials BUDGET\n"
                "# (the List tab of the web app wrote it; docs/list-search.md)\n" + to_toml(data))

    def _toml(self) -> io.BytesIO:
        try:
            return io.BytesIO(self.toml().encode("utf-8"))
        except UserError:
            return io.BytesIO(b"")

    def _edited(self) -> None:
        try:
            data, planned = self.checked()
        except UserError as exc:
            self.problem = str(exc)
            self.count.object = ""
        else:
            self.problem = None
            self.count.object = (f"<p>{planned['candidates']:,} candidate{'s' if planned['candidates'] != 1 else ''} "
                                 f"× {planned['opponents']} opponent{'s' if planned['opponents'] != 1 else ''} = "
                                 f"{planned['matchups']:,} matchups</p>")
            self.download.filename = f"{slug(data['title'])}.toml"
        self.page.tab_changed(self)

    # -- running --------------------------------------------------------------------------------------------
    def work(self, trials: int, seed: int, precision: float | None):
        """The race of the checked definition with the page's seed and the tab's budget (``trials`` is the page's
        Trials box, not used: the race decides its trials)."""
        if precision is not None:
            raise UserError(SOURCE, "precision", "a list search decides its own trials", "leave precision empty")
        data, _ = self.checked()
        budget = self.budget_trials()

        def race():
            progress = PROGRESS_SINK.get()
            if progress is not None:
                progress.bar(budget)
            return render_search(list_search(data, seed=seed, max_trials=budget, source=SOURCE))

        return race

    def show(self, shown: Shown) -> None:
        self.results.show(shown, "list-search")

    def show_figure(self, shown: Shown, figures: Figures) -> None:
        self.results.show_figure(shown, figures)


__all__ = ["ListTab", "render_search", "army_choices"]
