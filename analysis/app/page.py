"""The page: the example picker and upload, one message line, the run controls, and the tabs.

Its address encodes what it shows: ``?example=epic/assault_marines_vs_warband`` opens a shipped example,
``?tab=epic&setup=...`` a setup edited on the page (:func:`~.setups.encode_setup`); ``trials``, ``seed`` and
``precision`` set the run.  An address never starts a run: the player presses Run (``&run=1``, which older
addresses carry, only says so on the page).  Every value of the address is checked as the command line checks
it; a bad one is one message and the rest opens as usual.
"""
from __future__ import annotations

import asyncio
import logging
import time
from functools import cache
from urllib.parse import parse_qs, urlencode, urlsplit

import click
import panel as pn

from ..intake.errors import ArgumentError, UserError
from ..intake.examples import examples
from ..cli import PrecisionValue
from ..intake.run_limits import MAX_SEED, MAX_TRIALS
from ..intake.scenario import MAX_FILE_BYTES, shown_path
from . import runs
from .address import Address
from .epic_tab import EpicTab
from .examples import example_names
from .list_tab import ListTab
from .location import DEFAULT_PORT, QUERY_KEYS, address_of
from .setups import (MAX_URL_CHARS, CompareSetup, Setup, decode_setup, encode_setup, example_setup, parse_setup,
                     uploaded_text)
from .render import figure
from .tabs import MAX_LABEL_CHARS, CompareTab, GdbTab, T9aTab
from .text import safe_html, visible

log = logging.getLogger("wargame_odds.app")

DEFAULT_EXAMPLES = {"epic": "epic/assault_marines_vs_warband", "gdb": "gdb/column_vs_line",
                    "t9a": "t9a/stand_and_shoot"}
DEFAULT_TRIALS = 100_000
MAX_PAGE_SEED = min(MAX_SEED, 2**53 - 1)  # the largest whole number a browser holds exactly
TAB_KEYS = ("epic", "compare", "gdb", "t9a", "list")
#: The most characters of one address value shown or parsed as a number (the largest allowed has 11 digits).
MAX_NUMBER_CHARS = 40
#: What the page says when its address asks for a run (``run=1``): it never starts one.
PRESS_RUN = "the address opened this setup: press Run to simulate it"
#: The longest text "Paste setup" reads: a comparison's link (two setups) with room to spare; a scenario's TOML
#: is capped by the file size cap as an upload is.
MAX_PASTE_CHARS = max(2 * MAX_URL_CHARS + 4096, MAX_FILE_BYTES)
PASTED = "the pasted setup"
#: Copies the setup link into the clipboard where the browser allows it (the box shows it anyway).
COPY_JS = """
if (navigator.clipboard) { navigator.clipboard.writeText(box.value).catch(() => {}); }
"""
CSS = """
.wo-error { background: #fde8e8; border: 1px solid #c0392b; color: #7b1d12; padding: 6px 10px; border-radius: 4px; }
"""


#: What the example box shows when the active tab holds no shipped example as it was opened (edited, pasted, uploaded).
OWN_SETUP = "your own setup"


@cache
def example_choices() -> dict[str, str]:
    """The example box's entries, title → name: first :data:`OWN_SETUP` (no example), then every example the app
    opens by its title (a title two examples share is followed by the name)."""
    titles = {e.name: e.title.strip() or e.name for e in examples()}
    names = openable_examples()
    shown = [titles.get(n, n) for n in names]
    return {OWN_SETUP: "", **{t if shown.count(t) == 1 else f"{t} ({n})": n for t, n in zip(shown, names)}}


@cache
def openable_examples() -> tuple[str, ...]:
    """The shipped examples the app opens: scenarios, and comparisons of two shipped scenarios."""
    out = []
    for name in example_names():
        try:
            example_setup(name)
        except UserError:
            continue
        out.append(name)
    return tuple(out)


class Page:
    """One browser tab's app (a Panel session, or a notebook cell)."""

    def __init__(self, query: dict[str, str] | None = None, in_notebook: bool = False, base_url: str | None = None):
        self.in_notebook = in_notebook
        self.base_url = base_url or address_of("127.0.0.1", DEFAULT_PORT)
        self.ready = False  # the tabs report their changes while they are built: the page listens once built
        self.running: runs.Progress | None = None
        self.message = pn.pane.HTML("", disable_math=True, sizing_mode="stretch_width", margin=(0, 10),
                                    stylesheets=[CSS])
        self.tabs = {"epic": EpicTab(self, example_setup(DEFAULT_EXAMPLES["epic"])),
                     "compare": CompareTab(self),
                     "gdb": GdbTab(self, example_setup(DEFAULT_EXAMPLES["gdb"])),
                     "t9a": T9aTab(self, example_setup(DEFAULT_EXAMPLES["t9a"])),
                     "list": ListTab(self)}
        for key, tab in self.tabs.items():
            tab.example = DEFAULT_EXAMPLES.get(key)
        self.tab_widget = pn.Tabs(*[(tab.title, tab.panel) for tab in self.tabs.values()], dynamic=False,
                                  sizing_mode="stretch_width")
        self.tab_widget.param.watch(lambda event: self.tab_changed(self.active), "active")
        self.example = pn.widgets.Select(label="Shipped example (what is loaded)", options=example_choices(),
                                         value="", width=380)
        self.showing_example = False  # the box is being set to what the active tab holds: open nothing
        self.example.param.watch(lambda event: event.new and not self.showing_example and self.open_example(event.new),
                                 "value")
        self.upload = pn.widgets.FileInput(label="Open a scenario file", accept=".toml", multiple=False)
        # an empty file changes the name only (its content reaches the server as no value)
        self.upload.param.watch(lambda *events: self.open_upload(), ["value", "filename"])
        self.trials = pn.widgets.IntInput(label="Trials", value=DEFAULT_TRIALS, start=1, end=MAX_TRIALS, step=10_000,
                                          width=130)
        self.seed = pn.widgets.IntInput(label="Seed", value=0, start=0, end=MAX_PAGE_SEED, width=110)
        self.precision = pn.widgets.FloatInput(label="or precision (±, e.g. 0.005)", value=None, start=0, end=0.5,
                                               step=0.001, width=190)
        self.run_button = pn.widgets.Button(label="Run", color="success", width=90, align="end")
        self.run_button.on_click(self.run)
        self.cancel_button = pn.widgets.Button(label="Cancel", color="warning", width=90, disabled=True,
                                               align="end")
        self.cancel_button.on_click(lambda event: self.running and self.running.cancel())
        self.progress = pn.indicators.Progress(value=0, max=1000, width=220, align="center", visible=False)
        self.status = pn.pane.HTML("", disable_math=True, align="center")
        for widget in (self.trials, self.seed, self.precision):
            widget.param.watch(lambda event: self.remember(), "value")
        self.share = pn.widgets.TextInput(label="Setup link (any install opens it)", value="", width=330)
        self.copy = pn.widgets.Button(label="Copy setup", width=100, align="end")
        self.copy.js_on_click(args={"box": self.share}, code=COPY_JS)
        self.paste = pn.widgets.TextAreaInput(label="Paste setup (a link, or a scenario's TOML)", height=38,
                                              width=300, max_length=MAX_PASTE_CHARS,
                                              placeholder=f"{self.base_url}?tab=epic&setup=...")
        self.paste_button = pn.widgets.Button(label="Open pasted setup", width=140, align="end")
        self.paste_button.on_click(lambda event: self.open_pasted(self.paste.value_input or self.paste.value))
        header = pn.Row(pn.pane.HTML("<h2 style='margin:4px 0'>wargame-odds</h2>"), self.example, self.upload,
                        sizing_mode="stretch_width")
        sharing = pn.Row(self.share, self.copy, self.paste, self.paste_button, sizing_mode="stretch_width")
        controls = pn.Row(self.trials, self.seed, self.precision, self.run_button, self.cancel_button, self.progress,
                          self.status, sizing_mode="stretch_width")
        self.layout = pn.Column(header, self.message, sharing, controls, self.tab_widget, sizing_mode="stretch_width")
        self.closed = False  # the session ended (its tab closed): a run still going is cancelled
        self.address = Address(width=0, height=0, margin=0)  # writes the page's address (not in a notebook)
        if not in_notebook:
            self.layout.append(self.address)
            pn.state.on_session_destroyed(self.session_ended)
        self.ready = True
        self.apply_query(query or {})
        self.show_example(self.active)
        self.remember()

    # -- state ------------------------------------------------------------------------------------------
    @property
    def active(self):
        return list(self.tabs.values())[self.tab_widget.active]

    def select(self, key: str) -> None:
        self.tab_widget.active = TAB_KEYS.index(key)

    def say(self, text: str | None) -> None:
        """One message line (user text shown as data), or none."""
        self.message.object = f'<div class="wo-error">{safe_html(text)}</div>' if text else ""

    def tab_changed(self, tab) -> None:
        if not self.ready or tab is not self.active:
            return
        self.say(tab.problem)
        self.show_example(tab)
        self.remember()

    def show_example(self, tab) -> None:
        """The example box shows the example ``tab`` holds as it was opened, else :data:`OWN_SETUP`."""
        loaded = tab.example if tab.example in example_choices().values() else ""
        if self.example.value != loaded:
            self.showing_example = True
            try:
                self.example.value = loaded
            finally:
                self.showing_example = False

    def remember(self) -> None:
        """Put the active tab's setup and the run settings in the page address and the setup link."""
        if not self.ready:
            return
        tab, key = self.active, TAB_KEYS[self.tab_widget.active]
        query = {"tab": key}
        if tab.example:
            query = {"example": tab.example}
        elif isinstance(tab, ListTab):
            pass  # the address names the tab; its army, cap and meta stay on the page
        elif isinstance(tab, CompareTab):
            if tab.current() is not None:
                query |= {"a": encode_setup(tab.options[0]), "b": encode_setup(tab.options[1]),
                          "labels": "\x1f".join(tab.current().labels), "side": tab.side.value}
        else:
            query["setup"] = encode_setup(tab.valid)
        if self.trials.value != DEFAULT_TRIALS:
            query["trials"] = self.trials.value
        if self.seed.value:
            query["seed"] = self.seed.value
        if self.precision.value is not None:
            query["precision"] = self.precision.value
        search = "?" + urlencode(query)
        self.share.value = self.base_url + search
        if not self.in_notebook:
            self.address.search = search

    def session_ended(self, session_context) -> None:
        """The page's session ended (the tab was closed or lost its server): cancel its run."""
        self.closed = True
        if self.running is not None:
            self.running.cancel()

    # -- opening setups -----------------------------------------------------------------------------------
    def show_setup(self, setup: Setup | CompareSetup, example: str | None = None) -> None:
        key = "compare" if isinstance(setup, CompareSetup) else setup.system
        self.tabs[key].load(setup, example)
        self.select(key)
        self.tab_changed(self.tabs[key])

    def open_example(self, name: str) -> None:
        try:
            self.show_setup(example_setup(name), example=name)
        except UserError as exc:
            self.say(str(exc))
            self.show_example(self.active)

    def open_upload(self) -> None:
        data, name = self.upload.value, shown_path(visible(self.upload.filename or "upload"))
        if data is None and not self.upload.filename:
            return
        try:
            text = uploaded_text(data, name, "a scenario file (TOML) the app or the CLI wrote")
            self.show_setup(parse_setup(text, name, self.tabs["gdb"].loaded))
        except UserError as exc:
            self.say(str(exc))

    def open_pasted(self, text: str | None) -> None:
        """Open a pasted setup: a link the app copied (any host and port: its address part is read as a page
        address is, key by key) or a scenario's TOML (checked as an upload); anything else is one message."""
        text = (text or "").strip()
        try:
            if not text:
                raise UserError(PASTED, None, "nothing was pasted", "a setup link the app copied, or a scenario's TOML")
            if len(text) > MAX_PASTE_CHARS:
                raise UserError(PASTED, None, f"{len(text):,} characters", f"at most {MAX_PASTE_CHARS:,}")
            if not text.lower().startswith(("http://", "https://", "?")):
                self.show_setup(parse_setup(text, PASTED, self.tabs["gdb"].loaded))
                self.status.object = "opened the pasted setup"
                return
            try:
                pairs = parse_qs(urlsplit(text).query, keep_blank_values=True, max_num_fields=len(QUERY_KEYS) * 2)
            except ValueError:
                raise UserError(PASTED, None, "the link has more parts than any the app writes",
                                "a link the app's 'Copy setup' made") from None
            query = {key: values[0] for key, values in pairs.items() if key in QUERY_KEYS and values}
            if not {"example", "setup", "a"} & set(query):
                raise UserError(PASTED, None, "the link holds no setup",
                                "a link the app's 'Copy setup' made (its address has example=, setup= or a= and b=)")
        except UserError as exc:
            self.say(str(exc))
            return
        self.say(None)
        self.apply_query(query, f"{PASTED} (a link)")
        if not self.message.object:
            self.status.object = "opened the pasted setup"

    def apply_query(self, query: dict, source: str = "the page address") -> None:
        """Open what the page address names; a bad part is one message, the rest opens as usual.  The numbers
        are checked by the command line's own types (:func:`_address_number`); nothing here starts a run."""
        try:
            bad = next((key for key, value in query.items() if not isinstance(value, str)), None)
            if bad is not None:
                raise UserError(source, str(bad)[:MAX_NUMBER_CHARS],
                                f"got {elide_value(query[bad])}", "text, as a page address has it")
            for key, widget, kind, allowed in (
                    ("trials", self.trials, click.IntRange(1, MAX_TRIALS), f"a whole number from 1 to {MAX_TRIALS:,}"),
                    ("seed", self.seed, click.IntRange(0, MAX_PAGE_SEED),
                     f"a whole number from 0 to {MAX_PAGE_SEED:,}"),
                    ("precision", self.precision, PrecisionValue(),
                     "a 95 % half-width: a fraction below 0.5 (0.005), or percentage points from 1 to 50")):
                if key in query:
                    widget.value = _address_number(key, query[key], kind, allowed, source)
            if "example" in query:
                self.show_setup(example_setup(query["example"]), example=query["example"])
            elif query.get("tab") == "compare" and "a" in query and "b" in query:
                labels = tuple((query.get("labels") or "option A\x1foption B").split("\x1f", 2)[:2])
                if any(len(label) > MAX_LABEL_CHARS for label in labels):
                    raise UserError(source, "labels", "a name of an option is too long",
                                    f"at most {MAX_LABEL_CHARS} characters each")
                side = query.get("side", "attacker")
                self.show_setup(CompareSetup(decode_setup(query["a"], source), decode_setup(query["b"], source),
                                             labels if len(labels) == 2 else ("option A", "option B"),
                                             side if side in ("attacker", "defender") else "attacker"))
            elif "setup" in query:
                self.show_setup(decode_setup(query["setup"], source, self.tabs["gdb"].loaded))
            elif query.get("tab") in TAB_KEYS:
                self.select(query["tab"])
        except UserError as exc:
            self.say(str(exc))
            return
        if query.get("run") == "1":
            self.status.object = safe_html(PRESS_RUN)

    # -- running ------------------------------------------------------------------------------------------
    async def run(self, event=None) -> None:
        """Run the active tab's setup in a worker thread; the bar moves, Cancel stops it, a bad setup is one
        message."""
        if self.running is not None or self.closed:
            return
        tab = self.active
        try:
            work = tab.work(int(self.trials.value or 0) or DEFAULT_TRIALS, int(self.seed.value or 0),
                            self.precision.value)
        except UserError as exc:
            self.say(str(exc))
            return
        progress = runs.Progress()
        try:
            future = runs.submit(work, progress)
        except runs.Busy as exc:
            self.say(str(exc))
            return
        self.running = progress
        self.run_button.disabled, self.cancel_button.disabled = True, False
        self.progress.visible, self.progress.value = True, 0
        self.progress.active = self.precision.value is not None
        self.status.object = "running…"
        started = time.perf_counter()
        shown = None
        try:
            while not future.done():
                self.progress.value = int(1000 * progress.fraction)
                await asyncio.sleep(0.15)
            shown = future.result()
        except runs.Cancelled:
            self.status.object = "cancelled: the results shown are those of the last finished run"
        except (UserError, ArgumentError) as exc:
            self.say(str(exc))
            self.status.object = ""
        except Exception as exc:  # a bug: logged with its traceback, one line on the page
            log.exception("run failed")
            self.say(f"internal error ({type(exc).__name__}): {exc}; the server's log has the details")
            self.status.object = ""
        else:
            tab.show(shown)
            self.say(None)
            self.status.object = f"{shown.trials:,} trials in {time.perf_counter() - started:.1f} s"
        finally:
            self.running = None
            self.run_button.disabled, self.cancel_button.disabled = False, True
            self.progress.visible, self.progress.active = False, False
        if shown is not None and not self.closed:
            await self._draw(tab, shown)

    async def _draw(self, tab, shown) -> None:
        """The result's figure, drawn in a worker thread after the numbers are on show."""
        try:
            figures = await asyncio.wrap_future(runs.draw(lambda: figure(shown.result)))
        except Exception as exc:  # a bug: logged with its traceback, one line on the page
            log.exception("figure failed")
            self.say(f"internal error drawing the figure ({type(exc).__name__}): {exc}")
        else:
            tab.show_figure(shown, figures)


def elide_value(value) -> str:
    """An address value in a message: its repr, at most :data:`MAX_NUMBER_CHARS` characters of it."""
    text = repr(value)
    return text if len(text) <= MAX_NUMBER_CHARS else text[:MAX_NUMBER_CHARS - 3] + "..."


def _address_number(key: str, value: str, kind: click.ParamType, allowed: str, source: str = "the page address"):
    """The number ``value`` of address key ``key`` as the command line's type ``kind`` reads it (its bounds
    included); one :class:`UserError` saying what is ``allowed`` otherwise.  A text longer than
    :data:`MAX_NUMBER_CHARS` is refused before it is read as a number."""
    if len(value) <= MAX_NUMBER_CHARS:
        try:
            return kind.convert(value, None, None)
        except click.BadParameter:
            pass
    raise UserError(source, key, f"got {elide_value(value)}", allowed)
