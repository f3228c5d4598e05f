"""The app's tabs: one per rule system (an editor of its setup, its results) and the comparison."""
from __future__ import annotations

import copy
import io
import re

import panel as pn

from ..intake.errors import UserError
from . import runs
from .forms import Draft, Form
from .render import Figures, Shown, render
from .setups import CompareSetup, Setup, load_gdb_tables
from .text import safe_html, visible

EDITOR_WIDTH = 470
#: The longest name of a compared option (its box, the page address and every run check it).
MAX_LABEL_CHARS = 80
RESULT_CSS = """
table { border-collapse: collapse; font-size: 13px; }
td, th { border-bottom: 1px solid #ddd; padding: 2px 8px; text-align: left; }
summary { cursor: pointer; font-weight: bold; margin: 6px 0; }
"""


def slug(text: str) -> str:
    """A file name part from a title (user text): letters, digits and dashes only."""
    return re.sub(r"[^a-z0-9]+", "-", str(text).lower()).strip("-")[:60] or "setup"


class ResultView:
    """The last result of a tab: its verdict and notes, the figure, the full table behind a fold, and its CSV,
    JSON, PNG and SVG."""

    def __init__(self, name: str):
        self.shown: Shown | None = None
        self.name = name
        self.html = pn.pane.HTML("<p>Press <b>Run</b> to simulate this setup.</p>", disable_math=True,
                                 sizing_mode="stretch_width", stylesheets=[RESULT_CSS])
        self.figure = pn.pane.PNG(None, sizing_mode="stretch_width", visible=False)
        self.fold = pn.pane.HTML("", disable_math=True, sizing_mode="stretch_width", stylesheets=[RESULT_CSS])
        self.csv = pn.widgets.FileDownload(label="Results (CSV)", callback=lambda: self._file("csv"),
                                           filename=f"{name}.csv", visible=False, color="light")
        self.json = pn.widgets.FileDownload(label="Results (JSON)", callback=lambda: self._file("json"),
                                            filename=f"{name}.json", visible=False, color="light")
        self.figures: Figures | None = None
        self.png = pn.widgets.FileDownload(label="Figure (PNG)", callback=lambda: self._figure("png"),
                                           filename=f"{name}.png", visible=False, color="light")
        self.svg = pn.widgets.FileDownload(label="Figure (SVG)", callback=lambda: self._figure("svg"),
                                           filename=f"{name}.svg", visible=False, color="light")
        self.panel = pn.Column(pn.Row(self.csv, self.json, self.png, self.svg), self.html, self.figure, self.fold,
                               sizing_mode="stretch_width")

    def _file(self, kind: str) -> io.BytesIO:
        return io.BytesIO(getattr(self.shown, kind).encode("utf-8") if self.shown else b"")

    def _figure(self, kind: str) -> io.BytesIO:
        return io.BytesIO(getattr(self.figures, kind) if self.figures else b"")

    def show(self, shown: Shown, filename: str) -> None:
        self.shown, self.figures = shown, None
        self.html.object, self.fold.object = shown.html, shown.fold
        self.figure.visible = self.png.visible = self.svg.visible = False
        self.csv.filename, self.json.filename = f"{filename}.csv", f"{filename}.json"
        self.png.filename, self.svg.filename = f"{filename}.png", f"{filename}.svg"
        self.csv.visible = self.json.visible = True

    def show_figure(self, shown: Shown, figures: Figures) -> None:
        """The figure of ``shown`` (and its PNG and SVG downloads), unless a later result is on show by now."""
        if shown is self.shown:
            self.figures = figures
            self.figure.object = figures.png
            self.figure.visible = self.png.visible = self.svg.visible = True


class ScenarioTab:
    """The editor of one rule system's setup, its run and its results.  The draft is checked after every
    change by the rule system's validation; the last valid setup is what runs, saves and goes in the URL."""

    system = ""
    title = ""
    #: Fields whose change redraws the editor (other widgets list their values: formation names).
    REDRAW = ("name", "side", "action")

    def __init__(self, page, setup: Setup):
        self.page = page
        self.valid = setup
        self.error: UserError | None = None  # what is wrong with the draft, if anything
        self.example: str | None = None
        self.draft = Draft(setup.data, self._changed, self._reshaped)
        self.editor = pn.Column(sizing_mode="stretch_width")
        self.results = ResultView(self.system)
        self.download = pn.widgets.FileDownload(label="Download setup (TOML)", callback=self._toml,
                                                filename=f"{self.system}.toml", color="primary")
        self.panel = pn.Row(pn.Column(self.download, pn.Row(*self.actions()), self.editor, width=EDITOR_WIDTH),
                            self.results.panel, sizing_mode="stretch_width")
        self.rebuild()

    def actions(self) -> list:
        """Buttons beside the setup's download."""
        return []

    @property
    def source(self) -> str:
        return f"{self.title} setup"

    def _toml(self) -> io.BytesIO:
        return io.BytesIO(self.valid.toml().encode("utf-8"))

    def load(self, setup: Setup, example: str | None = None) -> None:
        """Show ``setup`` (valid: it comes from :func:`~.setups.parse_setup`)."""
        self.draft.data = copy.deepcopy(setup.data)
        self.example = example
        self.rebuild()

    def rebuild(self) -> None:
        self.editor.objects = self.build()
        self._check(redraw=False)

    def _reshaped(self) -> None:
        """A list item added, removed or moved (an activation, a unit group): no longer the example it opened as,
        so the address and the copied link hold the edited setup (they named the example: a shared link opened
        the setup as it was before the edit)."""
        self.example = None
        self.rebuild()

    def _changed(self, path: tuple) -> None:
        self.example = None
        self._check(redraw=bool(path) and path[-1] in self.REDRAW)

    def _check(self, redraw: bool) -> None:
        try:
            setup = self.make_setup(copy.deepcopy(self.draft.data))
            setup.model(self.source)
        except UserError as exc:
            self.error = exc
        else:
            self.valid, self.error = setup, None
            self.download.filename = f"{slug(setup.data.get('title', self.system))}.toml"
        self.page.tab_changed(self)
        if redraw:
            self.editor.objects = self.build()

    def make_setup(self, data: dict) -> Setup:
        return Setup(self.system, data)

    @property
    def problem(self) -> str | None:
        """The message the page shows for this tab (None: the draft is valid)."""
        return None if self.error is None else str(self.error)

    def build(self) -> list:
        raise NotImplementedError

    def work(self, trials: int, seed: int, precision: float | None):
        """What a run does in its worker thread (the setup is checked here, on the event loop)."""
        if self.error is not None:
            raise self.error
        system, model = self.system, self.valid.model(self.source)
        return lambda: render(runs.simulate(system, model, trials=trials, seed=seed, precision=precision))

    def show(self, shown: Shown) -> None:
        self.results.show(shown, slug(self.valid.data.get("title", self.system)))

    def show_figure(self, shown: Shown, figures: Figures) -> None:
        self.results.show_figure(shown, figures)


#: What the GdB tab says of the rule tables it runs on.
SHIPPED_TABLES = ("<p><b>Rule tables: the shipped PLACEHOLDERS</b>, not General de Brigade's numbers. Make yours: "
                  "<code>wargame-odds gdb-tables template &gt; my_tables.toml</code> writes a file to fill in from "
                  "your rulebook (docs/gdb.md, “Filling in the rule tables”); <code>wargame-odds gdb-tables check "
                  "my_tables.toml</code> checks it; then load it here.</p>")


class GdbTab(ScenarioTab):
    """The General de Brigade charge, on the shipped placeholder tables or on a player's own table file, loaded
    here and checked as the CLI checks one (:func:`~.setups.load_gdb_tables`); the setup then names that file
    (``tables = "my_tables.toml"``), so its TOML runs in the CLI with the file beside it."""

    system = "gdb"
    title = "GdB charge"

    def __init__(self, page, setup: Setup):
        self.loaded: dict = {}  # file name -> the player's rule tables loaded on this page
        self.tables_line = pn.pane.HTML(SHIPPED_TABLES, disable_math=True, sizing_mode="stretch_width")
        self.tables_upload = pn.widgets.FileInput(label="Your rule tables (TOML)", accept=".toml", multiple=False)
        self.tables_upload.param.watch(lambda *events: self.open_tables(), ["value", "filename"])
        self.shipped = pn.widgets.Button(label="Use the shipped tables", color="light")
        self.shipped.on_click(lambda event: self.use_tables(None))
        super().__init__(page, setup)

    def actions(self) -> list:
        return [pn.Column(self.tables_line, pn.Row(self.tables_upload, self.shipped), sizing_mode="stretch_width")]

    def make_setup(self, data: dict) -> Setup:
        return Setup(self.system, data, self.loaded.get(data.get("tables")))

    def open_tables(self) -> None:
        """Load the uploaded rule tables (one message when they are not valid) and run the setup on them."""
        from ..intake.scenario import shown_path

        data, name = self.tables_upload.value, self.tables_upload.filename
        if data is None and not name:
            return
        name = shown_path(visible(name or "tables.toml"))
        try:
            tables = load_gdb_tables(data, name)
        except UserError as exc:
            self.page.say(str(exc))
            return
        self.loaded[name] = tables
        self.use_tables(name)

    def use_tables(self, name: str | None) -> None:
        """Run the setup on the loaded tables ``name`` (None: the shipped ones); the setup's ``tables`` names them."""
        if name is None:
            self.draft.data.pop("tables", None)
            self.tables_line.object = SHIPPED_TABLES
        else:
            self.draft.data["tables"] = name
            placeholder = self.loaded[name].placeholder
            kind = "PLACEHOLDER values (placeholder = true)" if placeholder else "your rulebook values"
            self.tables_line.object = (f"<p><b>Rule tables: {safe_html(name)}</b>, {kind}. The setup's TOML names this "
                                       "file: keep it beside the TOML to run it with the CLI.</p>")
        self._changed(("tables",))

    def load(self, setup: Setup, example: str | None = None) -> None:
        if setup.tables is not None:
            self.loaded[setup.data["tables"]] = setup.tables
        super().load(setup, example)
        name = setup.data.get("tables", "default")
        if name == "default":
            self.tables_line.object = SHIPPED_TABLES

    def build(self):
        from ..gdb.model import Scenario

        return Form(self.draft).widgets(Scenario, skip=("system", "tables", "scale"))


class T9aTab(ScenarioTab):
    system = "t9a"
    title = "T9A charge"

    def _choices(self, model, name):
        from ..t9a.charge.model import Placement, Target

        if (model, name) in ((Placement, "chargers"), (Target, "shoot_at")):
            return [c.get("name") for c in self.draft.get(("chargers",), []) if isinstance(c, dict)]
        return None

    def build(self):
        from ..t9a.charge.model import Scenario

        return Form(self.draft, self._choices).widgets(Scenario, skip=("system",))


class CompareTab:
    """Two Epic setups side by side: each option taken from the Epic tab (or a shipped comparison), run with
    ``compare``: the paired difference in percentage points with its interval."""

    system = "compare"
    title = "Compare two options"

    def __init__(self, page, setup: CompareSetup | None = None):
        self.page = page
        self.options: list[Setup | None] = [None, None]
        self.example: str | None = None
        self.problem = None
        self.labels = [pn.widgets.TextInput(label=f"Name of option {x}", value=f"option {x}",
                                     max_length=MAX_LABEL_CHARS)
                       for x in "AB"]
        self.side = pn.widgets.Select(label="The options are the", options=["attacker", "defender"])
        self.takes = [pn.widgets.Button(label=f"Option {x} ← the Epic tab's setup", color="primary")
                      for x in "AB"]
        self.summaries = [pn.pane.HTML("<i>not set</i>", disable_math=True) for _ in "AB"]
        self.downloads = [pn.widgets.FileDownload(label=f"Download option {x} (TOML)", filename=f"option-{x}.toml",
                                                  callback=lambda i=i: self._toml(i), color="light")
                          for i, x in enumerate("AB")]
        for i, button in enumerate(self.takes):
            button.on_click(lambda event, i=i: self.take(i))
        for widget in (*self.labels, self.side):
            widget.param.watch(lambda event: self._edited(), "value")
        self.results = ResultView("compare")
        explain = pn.pane.HTML("<p>Set up option A in the Epic tab and take it here, change the Epic setup (another "
                               "formation, shoot first), take it as option B, and run: both options fight on the same "
                               "dice, trial by trial, and the difference comes with its 95 % interval.</p>",
                               disable_math=True)
        column = [explain]
        for i in range(2):
            column += [self.takes[i], self.labels[i], self.summaries[i], self.downloads[i]]
        self.panel = pn.Row(pn.Column(*column, self.side, width=EDITOR_WIDTH), self.results.panel,
                            sizing_mode="stretch_width")
        if setup is not None:
            self.load(setup)

    def _toml(self, i: int) -> io.BytesIO:
        option = self.options[i]
        return io.BytesIO(option.toml().encode("utf-8") if option else b"")

    def _edited(self) -> None:
        self.example = None
        self.page.tab_changed(self)

    def take(self, i: int) -> None:
        epic = self.page.tabs["epic"]
        if epic.problem:
            self.page.say(f"the Epic setup is not valid yet: {epic.problem}")
            return
        self.options[i] = epic.valid
        self._summarise(i)
        self.page.status.object = f"option {'AB'[i]} of the comparison is the Epic setup as it is now"
        self._edited()
        if None not in self.options:
            self.page.select("compare")

    def _summarise(self, i: int) -> None:
        option = self.options[i]
        formations = option.data.get("formations", [])
        lines = "".join(f"<li>{safe_html(f.get('name', '?'))} ({safe_html(f.get('side', '?'))})</li>"
                        for f in formations if isinstance(f, dict))
        turn = len(option.data.get("turn", []))
        self.summaries[i].object = (f"<p><b>{safe_html(option.data.get('title', ''))}</b>"
                                    + (f", a turn of {turn} activations" if turn else ", an assault")
                                    + f"</p><ul>{lines}</ul>")

    def load(self, setup: CompareSetup, example: str | None = None) -> None:
        self.options = [setup.option_a, setup.option_b]
        for i in range(2):
            self._summarise(i)
            self.labels[i].value = setup.labels[i]
        self.side.value = setup.side
        self.example = example

    def current(self) -> CompareSetup | None:
        if None in self.options:
            return None
        return CompareSetup(self.options[0], self.options[1], (self.labels[0].value, self.labels[1].value),
                            self.side.value)

    def work(self, trials: int, seed: int, precision: float | None):
        setup = self.current()
        if setup is None:
            raise UserError("compare", None, "set both options first", "press 'Option A ← the Epic tab's setup' "
                            "and 'Option B ← ...'")
        if precision is not None:
            raise UserError("compare", "precision", "a comparison runs a trial count", "leave precision empty")
        if not all(setup.labels) or setup.labels[0] == setup.labels[1]:
            raise UserError("compare", "labels", "the two options need two different names", "two names")
        if any(len(label) > MAX_LABEL_CHARS for label in setup.labels):
            raise UserError("compare", "labels", "a name of an option is too long",
                            f"at most {MAX_LABEL_CHARS} characters each")
        return lambda: render(runs.compare(setup, trials=trials, seed=seed))

    def show(self, shown: Shown) -> None:
        self.results.show(shown, "compare")

    def show_figure(self, shown: Shown, figures: Figures) -> None:
        self.results.show_figure(shown, figures)
