"""Report definitions: ``reports/NAME.toml`` read, validated and expanded into cell specs.

A report lists *cells*; each cell is computed as one or more *points*: a ``scenario`` cell has one
point, a ``sweep`` cell one per grid point, a ``matrix`` cell one per matchup (one simulation
each), a ``compare`` cell one point (the whole ``wargame_odds.analysis.decisions.compare``).  A point spec is a
plain dict holding everything needed to compute it anywhere (the scenario as TOML text, or the
forces; the trials, the seed and the stream key), so points run independently, in any order, on
any worker.

Random streams: a scenario cell runs with ``cell=(cell_key(name),)``, point ``k`` of a sweep
(grid combinations in row-major order) with ``cell=(cell_key(name), k)`` and matchup ``(i, j)``
of a matrix with ``cell=(cell_key(name), i, j)`` -- the conventions of ``wargame_odds.analysis.decisions``'s
``sweep`` and ``matrix`` called with ``cell=(cell_key(name),)`` -- and a comparison is
``wargame_odds.analysis.decisions.compare(..., cell=(cell_key(name),))``, where ``cell_key`` is the first 63
bits of the SHA-256 of the cell's name.  The numbers therefore depend only on the seed, the name
and the grid, never on the order of the cells or on which worker ran them.
"""
from __future__ import annotations

import hashlib
import inspect
import itertools
import json
import math
import os
import re
from pathlib import Path
from typing import Annotated, Literal, Union

from pydantic import Field, field_validator

from ..intake.bounds import MAX_FORCES, Description, FilePath, Seed, Title
from ..intake import fieldpath
from ..decisions.definitions import CompareFields
from ..run import runner
from ..intake.errors import ArgumentError, UserError
from ..intake.examples import is_shipped, locate, scenario_names, shipped_path
from ..intake.scenario import StrictModel, read_file, read_toml, validate

Scalar = Union[bool, int, float, str]
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_-]*$"
RESERVED_OPTIONS = {"scenario", "trials", "seed", "cell", "progress"}


def cell_key(name: str) -> int:
    """The stable integer that keys a cell's random streams (first 63 bits of SHA-256)."""
    from ..intake.arguments import check_instance

    check_instance("name", name, (str,), "a cell name (text)")
    return int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:8], "big") >> 1


MAX_CELLS = 100
MAX_POINTS_PER_CELL = 10_000  # grid combinations of a sweep, matchups of a matrix
Trials = Annotated[int, Field(gt=0, le=runner.MAX_TRIALS)]


class _Cell(StrictModel):
    name: Annotated[str, Field(pattern=NAME_PATTERN, max_length=64)]
    title: Title | None = None
    trials: Trials | None = None
    options: dict[str, Scalar] = {}


class _ScenarioBased(_Cell):
    scenario: FilePath


class ScenarioCell(_ScenarioBased):
    """One scenario, simulated once."""

    kind: Literal["scenario"]


class SweepCell(_ScenarioBased):
    """One scenario simulated at every point of a grid of field values (cartesian product)."""

    kind: Literal["sweep"]
    grid: dict[str, list[Scalar]]

    @field_validator("grid")
    @classmethod
    def _grid(cls, grid):
        if not grid:
            raise ValueError("the grid is empty; allowed: at least one field with a list of values")
        for name, values in grid.items():
            if not values:
                raise ValueError(f"{name}: no values to sweep; allowed: a non-empty list")
            kinds = {"number" if type(v) in (int, float) else type(v).__name__ for v in values}
            if len(kinds) > 1:
                raise ValueError(f"{name}: mixed value types {sorted(kinds)}; allowed: values of one type")
            if len(set(values)) < len(values):
                raise ValueError(f"{name}: repeated values; allowed: distinct values")
        if math.prod(len(values) for values in grid.values()) > MAX_POINTS_PER_CELL:
            raise ValueError(f"the grid has {math.prod(len(v) for v in grid.values())} points; "
                             f"allowed: at most {MAX_POINTS_PER_CELL}")
        return grid


class MatrixCell(_Cell):
    """Every attacker against every defender (``wargame_odds.analysis.decisions.matrix``): forces are library
    formations ``netea:LIST/FORMATION`` or force files; ``base`` is a scenario whose rules apply."""

    kind: Literal["matrix"]
    attackers: Annotated[list[FilePath], Field(min_length=1, max_length=MAX_FORCES)]
    defenders: Annotated[list[FilePath], Field(min_length=1, max_length=MAX_FORCES)]
    base: FilePath | None = None


class CompareCell(_Cell, CompareFields):
    """Option A against option B facing weighted opponents (``wargame_odds.analysis.decisions.compare``):
    forces as in a matrix cell; ``options`` are compare's (paired, method, engine, threads, chunk_trials)."""

    kind: Literal["compare"]


class ListSearchCell(StrictModel):
    """A list search (``wargame_odds.analysis.decisions.list_search``): ``definition`` names a list-search definition (a
    shipped one or a file relative to the report) and any other key of a list-search definition is given, or
    overrides it, in the cell itself (held in ``search``); ``top`` and ``max_trials`` are the command's options."""

    kind: Literal["list-search"]
    name: Annotated[str, Field(pattern=NAME_PATTERN, max_length=64)]
    title: Title | None = None
    definition: FilePath | None = None
    top: Annotated[int, Field(ge=1, le=100)] = 5
    max_trials: Annotated[int, Field(ge=1, le=10**12)] | None = None
    search: dict = {}

    @property
    def options(self) -> dict:
        """No simulation options: the race chooses its trials (the definition's keys are in ``search``)."""
        return {}


#: The keys of a list-search cell that are the cell's own; every other key is the list-search definition's.
LIST_SEARCH_CELL_KEYS = ("kind", "name", "title", "definition", "top", "max_trials")

CELL_KINDS = {"scenario": ScenarioCell, "sweep": SweepCell, "matrix": MatrixCell, "compare": CompareCell,
              "list-search": ListSearchCell}


class ReportModel(StrictModel):
    title: Title
    description: Description = ""
    seed: Seed = 0
    trials: Trials = 100_000
    cells: Annotated[list[dict], Field(min_length=1, max_length=MAX_CELLS)]


def _cell(data: dict, index: int, source: str):
    """Validate one ``[[cells]]`` table by its ``kind``; errors name ``cells[index].FIELD``."""
    kind = data.get("kind")
    if not isinstance(kind, str) or kind not in CELL_KINDS:
        raise UserError(source, f"cells[{index}].kind", f"unknown cell kind {kind!r}" if kind else
                        "required key is missing", ", ".join(CELL_KINDS))
    if kind == "list-search":
        data = {**{k: v for k, v in data.items() if k in LIST_SEARCH_CELL_KEYS},
                "search": {k: v for k, v in data.items() if k not in LIST_SEARCH_CELL_KEYS}}
    try:
        return validate(CELL_KINDS[kind], data, source)
    except UserError as exc:
        raise UserError(source, f"cells[{index}]" + (f".{exc.field}" if exc.field else ""), exc.problem,
                        exc.allowed) from None


class Report:
    """A validated report: its model, where it lives and the points of every cell."""

    def __init__(self, model: ReportModel, cells: list, source: Path, points: dict[str, list[dict]]):
        self.model = model
        self.cells = cells
        self.source = source
        self.points = points

    @property
    def name(self) -> str:
        return self.source.stem

    def all_points(self) -> list[dict]:
        return [p for cell in self.cells for p in self.points[cell.name]]


# -- TOML text (scenarios are shipped to workers as text) --------------------------------------
def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(str(k))} = {_toml_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"cannot write {type(value).__name__} as TOML")


def to_toml(data: dict) -> str:
    """TOML text for a parsed TOML document (every top-level key on one line)."""
    return "".join(f"{json.dumps(str(k))} = {_toml_value(v)}\n" for k, v in data.items())


# -- field paths: the grammar of wargame_odds.analysis.intake.fieldpath ---------------------------------------
def split_field(field: str) -> list:
    """``formations[Warband].units[0].count`` → its parts; ``ValueError`` when malformed."""
    return fieldpath.parse(field)


def set_field(data: dict, field: str, value) -> None:
    """Set ``field`` in parsed TOML ``data`` (missing tables on the way are created); raises
    ``KeyError`` naming the first part that does not exist."""
    fieldpath.set_in(data, field, value, create=True)


# -- scenarios ---------------------------------------------------------------------------------
def shipped_scenarios() -> list[str]:
    """Names of the scenarios shipped with the package, as ``SYSTEM/NAME``
    (:mod:`wargame_odds.analysis.intake.examples`)."""
    return scenario_names()


def _scenario_path(report_dir: Path, ref: str) -> Path | None:
    path = report_dir / ref
    if os.path.isfile(path):  # False for a path too long, a folder or a FIFO: reported below
        return path
    return shipped_path(ref)


def _system_module(system, source: str):
    """The registered rule system a scenario names (:mod:`wargame_odds.analysis.intake.systems`; a UserError if there is
    none)."""
    from ..intake import systems

    if system not in systems.names():
        raise UserError(source, "system", f"unknown system {system!r}", ", ".join(systems.names()))
    return systems.get(system)


def _check_options(fn, options: dict, source: str, field: str, taken=()) -> None:
    """Every key of ``options`` must be a keyword of ``fn`` other than the reserved and ``taken`` ones,
    with a value the runner accepts (checked here, before any cell runs)."""
    accepted = [p for p in inspect.signature(fn).parameters if p not in RESERVED_OPTIONS | set(taken)]
    for key, value in options.items():
        if key not in accepted:
            raise UserError(source, f"{field}.{key}", "unknown simulation option", ", ".join(accepted))
        try:
            runner.check_argument(key, value)
        except ArgumentError as exc:
            raise UserError(source, f"{field}.{key}", f"got {value!r}", exc.allowed) from None


def _label(field: str) -> str:
    last = split_field(field)[-1]
    return last if isinstance(last, str) else field


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.=-]+", "_", text)[:60]


def _matchup_inputs(cell, where: str, forces: list[tuple[str, str, str]], report_dir: Path, source: str):
    """Check the forces ``(field, role, spec)`` and the base of a matchup cell before anything runs.

    Returns (system, base path or None, resolve: force spec → path or library name, input file hashes).
    """
    from ..decisions.systems import SYSTEMS, system_of

    def resolve(spec: str) -> str:
        return spec if spec.startswith("netea:") else str(report_dir / spec)

    base = None
    if cell.base is not None:
        path = _scenario_path(report_dir, cell.base)
        if path is None:
            raise UserError(source, f"{where}.base", f"no scenario {cell.base!r}",
                            "a .toml path relative to the report file, or a shipped scenario")
        base = str(path)
    system = system_of(base) if base else SYSTEMS["epic"]
    for field, role, spec in forces:
        try:
            system.force(resolve(spec), role)
        except UserError as exc:
            raise UserError(source, f"{where}.{field}", exc.problem, exc.allowed) from None
    files = [base] if base else []
    files += [resolve(spec) for _, _, spec in forces if not spec.startswith("netea:")]
    inputs = {f: hashlib.sha256(read_file(f).encode("utf-8")).hexdigest() for f in files}  # edits recompute the cell
    return system, base, resolve, inputs


def _expand_matrix(cell: MatrixCell, where: str, report: ReportModel, report_dir: Path, source: str) -> list[dict]:
    forces = [(f"{role}[{n}]", role[:-1], spec) for role in ("attackers", "defenders")
              for n, spec in enumerate(getattr(cell, role))]
    system, base, resolve, inputs = _matchup_inputs(cell, where, forces, report_dir, source)
    _check_options(system.system.simulate, cell.options, source, f"{where}.options")
    key = cell_key(cell.name)
    points = []
    for i, a in enumerate(cell.attackers):
        for j, d in enumerate(cell.defenders):
            matchup = {"attacker": resolve(a), "defender": resolve(d), "base": base}
            points.append({"report": report.title, "cell": cell.name, "system": system.name,
                           "source": base or "", "trials": cell.trials or report.trials, "seed": report.seed,
                           "options": dict(cell.options), "point": f"{i:02d}-{j:02d}-{_slug(a)}-vs-{_slug(d)}",
                           "stream": [key, i, j], "overrides": {"attacker": a, "defender": d},
                           "matchup": matchup, "inputs": inputs})
    return points


def _expand_compare(cell: CompareCell, where: str, report: ReportModel, report_dir: Path, source: str) -> list[dict]:
    from ..decisions import api

    opp_role = "defender" if cell.side == "attacker" else "attacker"
    forces = [("option_a", cell.side, cell.option_a), ("option_b", cell.side, cell.option_b)]
    forces += [(f"opponents[{n}].force", opp_role, o.force) for n, o in enumerate(cell.opponents)]
    system, base, resolve, inputs = _matchup_inputs(cell, where, forces, report_dir, source)
    _check_options(api.compare, cell.options, source, f"{where}.options",
                   taken={*CompareFields.model_fields, "weights", "source"})
    arguments = dict(cell.arguments(resolve), base=base)  # base: a path or a shipped scenario
    try:
        api.meta_weights(arguments["opponents"], arguments["weights"], source)
    except UserError as exc:
        raise UserError(source, f"{where}.{exc.field}", exc.problem, exc.allowed) from None
    return [{"report": report.title, "cell": cell.name, "system": system.name, "source": base or "",
             "trials": cell.trials or report.trials, "seed": report.seed, "options": dict(cell.options),
             "point": "comparison", "stream": [cell_key(cell.name)], "overrides": {}, "compare": arguments,
             "inputs": inputs}]


def _absolute(data: dict, folder: Path) -> dict:
    """A list-search definition's file references (hand-written candidates, opponents' forces, base) made
    absolute against ``folder``, the definition's own; library names and shipped scenarios stay as written."""
    def fix(ref):
        if not isinstance(ref, str) or ref.startswith("netea:"):
            return ref
        path = folder / ref
        return str(path.resolve()) if os.path.isfile(path) else ref

    out = dict(data)
    if isinstance(out.get("candidates"), list):
        out["candidates"] = [fix(c) for c in out["candidates"]]
    if isinstance(out.get("opponents"), list):
        out["opponents"] = [dict(o, force=fix(o.get("force"))) if isinstance(o, dict) else o
                            for o in out["opponents"]]
    if "base" in out:
        out["base"] = fix(out["base"])
    return out


def _expand_list_search(cell: ListSearchCell, where: str, report: ReportModel, report_dir: Path,
                        source: str) -> list[dict]:
    """One point: the whole list search, its definition merged (the named file, then the cell's own keys) and
    checked here (keys, candidates, opponents' forces, the bounds the command applies) before any cell runs."""
    from ..decisions.list_search_core import ListSearchDefinition, plan
    from ..decisions.systems import SYSTEMS

    data, inputs = {}, {}
    if cell.definition is not None:
        path = _scenario_path(report_dir, cell.definition)
        if path is None:
            raise UserError(source, f"{where}.definition", f"no list-search definition {cell.definition!r}",
                            "a .toml path relative to the report file, or a shipped one such as "
                            "epic/decisions/list_search_two_choices")
        found, _ = read_toml(path)
        data = _absolute(found, path.parent)
        inputs[str(path)] = hashlib.sha256(read_file(path).encode("utf-8")).hexdigest()
    data.update(_absolute(cell.search, report_dir))
    try:
        defn = validate(ListSearchDefinition, data, source)
        forces = [(f"candidates[{n}]", defn.side, c) for n, c in enumerate(defn.candidates or [])]
        forces += [(f"opponents[{n}].force", "defender" if (o.as_ or defn.side) == "attacker" else "attacker",
                    o.force) for n, o in enumerate(defn.opponents)]
        for field, role, spec in forces:
            try:
                SYSTEMS["epic"].force(spec, role)
            except UserError as exc:
                raise UserError(source, field, exc.problem, exc.allowed) from None
        planned = plan(defn, source)
    except UserError as exc:
        allowed = exc.allowed
        if exc.problem == "unknown key" and allowed:
            allowed = ", ".join(k for k in LIST_SEARCH_CELL_KEYS if k != "kind") + ", " + allowed
        raise UserError(source, f"{where}" + (f".{exc.field}" if exc.field else ""), exc.problem, allowed) from None
    files = [c for c in defn.candidates or [] if isinstance(c, str) and not c.startswith("netea:")]
    files += [o.force for o in defn.opponents if isinstance(o.force, str) and not o.force.startswith("netea:")]
    inputs.update({f: hashlib.sha256(read_file(f).encode("utf-8")).hexdigest() for f in files})
    title = cell.title or defn.title or f"{planned['candidates']} candidates against a meta of {planned['opponents']}"
    return [{"report": report.title, "cell": cell.name, "system": "epic", "source": str(cell.definition or ""),
             "trials": None, "seed": report.seed, "options": {}, "point": "search", "stream": [cell_key(cell.name)],
             "overrides": {}, "list_search": dict(data, title=title), "top": cell.top, "max_trials": cell.max_trials,
             "inputs": inputs}]


def _expand(cell, index: int, report: ReportModel, report_dir: Path, source: str) -> list[dict]:
    where = f"cells[{index}]"
    if isinstance(cell, ListSearchCell):
        return _expand_list_search(cell, where, report, report_dir, source)
    if isinstance(cell, MatrixCell):
        return _expand_matrix(cell, where, report, report_dir, source)
    if isinstance(cell, CompareCell):
        return _expand_compare(cell, where, report, report_dir, source)
    path = _scenario_path(report_dir, cell.scenario)
    if path is None:
        raise UserError(source, f"{where}.scenario", f"no scenario {cell.scenario!r}",
                        "a .toml path relative to the report file, or a shipped scenario: "
                        + ", ".join(shipped_scenarios()))
    data, scenario_source = read_toml(path)
    module = _system_module(data.get("system"), scenario_source)
    module.load(path)  # the scenario's own mistakes are reported against its own file
    _check_options(module.simulate, cell.options, source, f"{where}.options")
    base = {"report": report.title, "cell": cell.name, "system": data["system"],
            "source": str(path), "trials": cell.trials or report.trials, "seed": report.seed,
            "options": dict(cell.options)}
    key = cell_key(cell.name)
    if isinstance(cell, ScenarioCell):
        return [dict(base, point="result", stream=[key], overrides={},
                     scenario_text=read_file(path))]
    points = []
    fields = list(cell.grid)
    for field in fields:
        try:
            split_field(field)
        except ValueError:
            raise UserError(source, f"{where}.grid", f"malformed field path {field!r}",
                            "a path such as formations[Warband].blast_markers or rules.max_rounds") from None
    for n, combo in enumerate(itertools.product(*(cell.grid[f] for f in fields))):
        varied = json.loads(json.dumps(data))
        overrides = dict(zip(fields, combo))
        for field, value in overrides.items():
            try:
                set_field(varied, field, value)
            except KeyError as exc:
                raise UserError(source, f"{where}.grid.{field}",
                                f"{cell.scenario} has no field {field!r} ({exc.args[0]} is missing)",
                                "a path into the scenario such as formations[NAME].blast_markers") from None
        text = to_toml(varied)
        try:
            module.loads(text, scenario_source)
        except UserError as exc:
            one = repr(fields[0]) if len(fields) == 1 else None
            if exc.problem == "unknown key":
                problem = f"{cell.scenario} has no field {one or repr(exc.field)} to sweep"
            else:
                problem = f"{cell.scenario} with {overrides}: field {exc.field!r}: {exc.problem}"
            raise UserError(source, f"{where}.grid" + (f".{fields[0]}" if one else ""), problem, exc.allowed) from None
        point = f"{n:03d}-" + "-".join(f"{_label(f)}={_slug(str(v))}" for f, v in overrides.items())
        points.append(dict(base, point=point, stream=[key, n], overrides=overrides, scenario_text=text))
    return points


def load_report(path: str | Path) -> Report:
    """Read and validate a report definition (a file, or a shipped one by name: ``reports/demo``) and every
    scenario it names (one UserError if not)."""
    from ..intake.arguments import check_instance

    check_instance("path", path, (str, os.PathLike), "a report definition's path (str or pathlib.Path)")
    path = Path(locate(path))
    data, source = read_toml(path)
    model = validate(ReportModel, data, source)
    cells = [_cell(c, i, source) for i, c in enumerate(model.cells)]
    names = [c.name for c in cells]
    for i, name in enumerate(names):
        if name in names[:i]:
            raise UserError(source, f"cells[{i}].name", f"two cells are named {name!r}", "distinct names")
    points = {c.name: _expand(c, i, model, path.parent, source) for i, c in enumerate(cells)}
    return Report(model, cells, path, points)


def default_out(report: Report) -> Path:
    """Where a report goes without ``--out``: ``out/NAME`` beside its definition, or ``reports/out/NAME`` in the
    current folder for a shipped definition (the package's own folder is not the user's)."""
    if is_shipped(report.source):
        return Path("reports") / "out" / report.name
    return report.source.parent / "out" / report.name


def spec_hash(spec: dict) -> str:
    """Fingerprint of a point spec, the package version and its code (``result.code_digest``): a stored
    point is reused only if equal."""
    from ..output.result import code_digest, package_version

    text = json.dumps({"spec": spec, "version": package_version(), "code": code_digest()}, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


__all__ = ["ListSearchCell", "Report", "ReportModel", "load_report", "default_out", "cell_key", "spec_hash",
           "set_field", "to_toml", "shipped_scenarios"]
