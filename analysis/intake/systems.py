"""The rule systems, behind one protocol and one registry (docs/api.md, "The System protocol").

A rule system is one folder (``analysis/epic/``, ``analysis/gdb/``, ``analysis/t9a/``) that implements
:class:`System` once, as the object ``SYSTEM`` of its package, and is named here by one registration line.  The
command line, the decisions, the reports and the headlines find a system through :func:`get` (or :func:`of`, for a
scenario), never by its name in their own code.

A registration is lazy: :func:`register` of a name, its package and its one-line help costs no import, so
``wargame-odds --help`` lists every system without loading one; :func:`get` imports the package on first use.  A
system object may also be registered directly (``register(ToySystem())``, as the contract test does).

This module imports nothing heavy: the command line reads it before every command.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from .errors import ArgumentError, UserError

__all__ = ["names", "get", "all", "of"]  # what ``wo.systems`` offers a notebook; register() is for a system's author


class System:
    """What a rule system implements once; the defaults are what a system without the part does.

    - ``name``, ``title`` (one line, the command's help), ``scenario_type`` (its loaded scenario's class);
    - :meth:`load` / :meth:`loads` → a scenario (:meth:`scenarios`: its shipped ones, by name);
    - :meth:`simulate` → a result with ``table()``, ``plot()``, ``to_json()``, ``text()`` and ``_repr_html_()``;
      :meth:`trace` → one trial of the reference engine, in words (user text escaped:
      :func:`wargame_odds.analysis.intake.user_text.printable`);
    - :meth:`headline` / :meth:`summary` → the sentences of a result's ``to_dict()``
    (:mod:`wargame_odds.analysis.output.headline`);
    - :attr:`decisions` → the decision tools' adapter (:class:`Decisions`: field paths, runner jobs, and the
      ``force`` / ``matchup`` of matrices, comparisons and rankings where the system has them);
    - :attr:`bounds` → its own caps on scenario values (docs/limits.md);
    - :attr:`cli_commands` → its commands beyond ``wargame-odds NAME SCENARIO`` (click commands; each also named,
      with its help, in its registration, so that ``--help`` needs no import).
    """

    name: str = ""
    title: str = ""
    scenario_type: type = object
    bounds: dict = {}
    cli_commands: list = []

    def load(self, path):
        """Read and validate a scenario file (or a shipped scenario's name)."""
        raise NotImplementedError

    def loads(self, text: str, source: str = "<string>"):
        """Validate a scenario given as TOML text (``source`` names it in error messages)."""
        raise NotImplementedError

    def simulate(self, scenario, *, trials: int, seed: int = 0, threads: int | None = None,
                 precision: float | None = None, engine: str = "kernel", cell: tuple = (), **run):
        """Simulate ``scenario`` (loaded, or a path); ``run``: the runner's other options (``max_trials``,
        ``chunk_trials``, ``progress``)."""
        raise NotImplementedError

    def trace(self, scenario, *, seed: int = 0) -> str:
        """One trial of the reference engine, every roll and decision with its clause."""
        raise NotImplementedError

    def scenarios(self) -> list[str]:
        """Its shipped scenarios, by name (``wo.examples()``; any of them goes to :meth:`load`)."""
        from .examples import examples

        return [e.name for e in examples() if e.kind == self.name]

    def engine_for(self, scenario, engine: str) -> tuple[str, str | None]:
        """The engine a run of ``scenario`` takes when ``engine`` is asked for, and why when it is another."""
        return engine, None

    def headline(self, data: dict, table=None) -> list[str]:
        """The plain sentences of a result's ``to_dict()`` (``table``: its rows, for intervals of means)."""
        return []

    def summary(self, data: dict) -> list[str]:
        """The one or two sentences that answer "who wins" (one point of a sweep or a matrix)."""
        return []

    def decision_notes(self, result) -> list[str]:
        """What a player must know before acting on a decision result (matrix, ranking) of this system."""
        return []

    @cached_property
    def decisions(self) -> Decisions:
        """The decision tools' adapter (one per system); the default sets fields of a pydantic scenario and has no
        matchups."""
        return Decisions(self)

    def __repr__(self) -> str:
        return f"<rule system {self.name!r}: {self.title}>"


@dataclass
class Force:
    """One side's contribution to a matchup: its formations and the profiles they use."""

    name: str
    data: dict  # system-specific scenario fragment (Epic: "units" and "formations")
    source: str = "<force>"


class Decisions:
    """What the decision tools (matrix, sweep, threshold, compare, rank) need from a rule system: load a scenario,
    set a field given as a field path (``rules.result_dice``, ``formations[Warband].blast_markers``,
    ``charger.distance``), simulate, and its runner job and result builder (for trial-by-trial pairing).  Matchups
    (``matrix``, ``compare``, ``rank``) need :meth:`force` and :meth:`matchup`."""

    def __init__(self, system: System):
        self.system = system

    @property
    def name(self) -> str:
        return self.system.name

    @property
    def model_type(self):
        return self.system.scenario_type

    def load(self, scenario, source: str | None = None):
        """(model, source name) from a path or an already loaded model."""
        from .scenario import shown_path

        if isinstance(scenario, (str, Path)):
            return self.system.load(scenario), shown_path(scenario)
        return scenario, source or "<scenario>"

    def data(self, model) -> dict:
        return model.model_dump()

    def validate(self, data: dict, source: str):
        from .scenario import validate

        return validate(self.model_type, data, source)

    def with_value(self, model, source: str, path: str, value):
        from .fieldpath import with_value

        return self.validate(with_value(self.data(model), path, value, source), source)

    def simulate(self, model, **kwargs):
        return self.system.simulate(model, **kwargs)

    # -- matchups -------------------------------------------------------------------------------
    def force(self, spec, role: str) -> Force:
        with_matchups = [n for n in names() if n != self.name and _has_matchups(n)]
        raise UserError(str(spec), None, f"{self.name} has no matchups (matrix, compare and rank)",
                        ", ".join(with_matchups) or None)

    def matchup(self, attacker: Force, defender: Force, base):
        raise NotImplementedError

    def win_path(self, role: str) -> tuple:
        return ("sides", f"{role}_wins")

    def points(self, model, force_role: str) -> int | None:
        return None

    # -- runner access (trial-by-trial pairing) --------------------------------------------------
    def job(self, model, engine: str, trial_streams: bool = False):
        """The runner job; ``trial_streams``: trial ``t``'s dice depend only on (seed, cell, t)."""
        raise NotImplementedError

    def build(self, model, job, counts, info, engine: str):
        raise NotImplementedError


def _has_matchups(name: str) -> bool:
    return type(get(name).decisions).matchup is not Decisions.matchup


# -- the registry ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Registration:
    """A system registered by name: the package whose ``SYSTEM`` implements it, its one-line help and its own
    commands (name → one-line help), all known without importing the package."""

    name: str
    package: str
    title: str
    commands: dict = field(default_factory=dict)


_REGISTERED: dict[str, Registration | System] = {}


def register(system: System | str, package: str | None = None, title: str | None = None,
             commands: dict | None = None) -> None:
    """Register a rule system: ``register("epic", "wargame_odds.analysis.epic", "Epic Armageddon …")`` (lazy: the
    package's ``SYSTEM`` is imported by :func:`get`), or a :class:`System` object itself."""
    if isinstance(system, str):
        if not (package and title):
            raise ArgumentError("package", package, "the package holding SYSTEM, and a one-line title")
        entry = Registration(system, package, title, dict(commands or {}))
    elif isinstance(system, System) and system.name:
        entry = system
    else:
        raise ArgumentError("system", system, "a System object with a name, or a name with its package and title")
    if entry.name in _REGISTERED:
        raise ArgumentError("system", entry.name, "a name not registered yet")
    _REGISTERED[entry.name] = entry


def unregister(name: str) -> None:
    """Remove a registered system (a test's own system, when the test ends)."""
    _REGISTERED.pop(name, None)


def names() -> tuple[str, ...]:
    """The registered systems' names, in the order of registration."""
    return tuple(_REGISTERED)


def title(name: str) -> str:
    """A registered system's one-line help, without importing it."""
    return _entry(name).title


def package(name: str):
    """What ``wo.NAME`` gives: a registered system's package (``wargame_odds.analysis.epic``, with its exact calculators
    and everything else it exports), or the system object itself when it was registered as one."""
    entry = _entry(name)
    return importlib.import_module(entry.package) if isinstance(entry, Registration) else entry


def commands() -> dict[str, tuple[str, str]]:
    """Every registered system's own commands: command name → (its package, its one-line help); no import."""
    return {command: (entry.package, help_text) for entry in _REGISTERED.values()
            if isinstance(entry, Registration) for command, help_text in entry.commands.items()}


def get(name: str) -> System:
    """The registered system ``name`` (its package imported on first use)."""
    entry = _entry(name)
    if isinstance(entry, Registration):
        return importlib.import_module(entry.package).SYSTEM
    return entry


def all() -> list[System]:  # noqa: A001 -- the registry's own word, as in get / all
    """Every registered system (each imported)."""
    return [get(name) for name in _REGISTERED]


def of(scenario) -> System:
    """The system of a loaded scenario (by its class) or of a scenario file (by its ``system`` key)."""
    if isinstance(scenario, (str, Path)):
        from .scenario import read_toml

        data, source = read_toml(scenario)
        name = data.get("system")
        if name in _REGISTERED:
            return get(name)
        raise UserError(source, "system", f"unknown system {name!r}", ", ".join(_REGISTERED))
    module = type(scenario).__module__
    for name, entry in _REGISTERED.items():
        if isinstance(entry, Registration) and not (module + ".").startswith(entry.package + "."):
            continue  # another package's class: that system is not imported to ask
        system = get(name)
        if system.scenario_type is not object and isinstance(scenario, system.scenario_type):
            return system
    raise ArgumentError("scenario", scenario, "a scenario file path (str or pathlib.Path) or a loaded scenario")


def _entry(name: str) -> Registration | System:
    if isinstance(name, str) and name in _REGISTERED:
        return _REGISTERED[name]
    raise ArgumentError("system", name, f"a registered rule system: {', '.join(_REGISTERED)}")


# -- the systems this package ships: one line each -------------------------------------------------

register("epic", "wargame_odds.analysis.epic",
         "Epic Armageddon (NetEA) assaults, from the charge to the end-phase rally, and whole turns ([[turn]]).")
register("gdb", "wargame_odds.analysis.gdb", "General de Brigade charge sequence.",
         {"gdb-tables": "General de Brigade rule-table files: a template to fill in, and a check."})
register("t9a", "wargame_odds.analysis.t9a",
         "The 9th Age charges: ranges, failed charges, reactions, several chargers.",
         {"t9a-table": "Exact P(charge range reaches) for T9A distances x Advance Rates (full dice enumeration)."})
