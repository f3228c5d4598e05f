"""Building a report: compute the missing points, store each as it finishes, then write the page.

Layout of ``reports/out/NAME/`` (or ``--out``)::

    cells/CELL/POINT.json     one finished point each, written atomically as it completes (both
                              names derived: a slug of the name plus a hash, never raw user text)
    tables/CELL.csv|.parquet  every table (estimate, ci95_lo, ci95_hi on every row)
    plots/CELL.png            every plot
    report.json               every number of the report, with the seed, trials and versions
    index.html                the page (the only file that carries a timestamp)

    .wargame-odds-report.json the manifest: every file the report wrote (only those are ever
                              replaced or deleted), and its staging folder
    .wargame-odds-report.lock held while a run writes the folder: a second run exits 2

A stored point is reused when its spec (scenario text, trials, seed, cell key, options) and the
package version and the code that makes the numbers are unchanged and its checksum (over its content and that spec's
hash) verifies, so a killed run started again computes only what is missing; a point that does not verify is
recomputed, with one line saying so.  The final files are built from the stored points only, in
a staging folder, and moved into place one by one with ``index.html`` last: a run killed while
writing them leaves the previous files intact, and an interrupted and an uninterrupted run write
the same bytes.  Every output path is checked before anything is computed, and a non-empty folder
without a manifest (not a report folder) is refused.
"""
from __future__ import annotations

import fcntl
import functools
import hashlib
import io
import json
import os
import re
import shutil
import sys
import textwrap
from contextlib import contextmanager
from datetime import datetime, timezone
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pandas as pd
from tqdm import tqdm

from ..run import gc_pause
from ..intake.errors import UserError
from ..intake.extras import EXTRAS, require
from ..output.headline import sentences, summary
from ..output.labels import (
    axis_label, estimate_text, field_words, group_label, names, percent, quantity_label, readable_rows, report_at_least,
    sides_of)
from ..output.plots import legend_below, literal_text, outcome_figure, save_figure
from ..output.result import finite_json
from ..intake.scenario import read_file, shown_path
from ..intake.user_text import csv_text, elide, printable
from ..output.atomic_file import write_atomic
from .cells import frame_from_json, run_point
from .definition import (CompareCell, ListSearchCell, MatrixCell, Report, ScenarioCell, default_out, load_report,
                         spec_hash)
from ..run.executor import LocalExecutor

VERSIONED = ("wargame-odds", "numpy", "numba", "pandas", "pyarrow", "matplotlib", "jinja2", "dask", "distributed")


def versions() -> dict[str, str]:
    """Python and the versions of the packages that make the numbers and the files."""
    out = {"python": sys.version.split()[0]}
    for name in VERSIONED:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "not installed"
    return out


MANIFEST = ".wargame-odds-report.json"
LOCK = ".wargame-odds-report.lock"
STAGING = ".wargame-odds-staging"


def derived_name(text: str) -> str:
    """A file name for user text: a short slug (letters, digits, _ = -) and 12 hex digits of its
    SHA-256, so no name can leave its folder and distinct texts never share a file."""
    slug = re.sub(r"[^A-Za-z0-9_=-]+", "_", text).strip("_")[:40] or "point"
    return f"{slug}-{hashlib.sha256(text.encode('utf-8')).hexdigest()[:12]}"


def point_file(out: Path, spec: dict) -> Path:
    """Where a point is stored in the output folder ``out``."""
    return out / "cells" / derived_name(spec["cell"]) / f"{derived_name(spec['point'])}.json"


def _checksum(data: dict, key: str) -> str:
    body = {k: v for k, v in data.items() if k != "checksum"}
    return hashlib.sha256(json.dumps({"key": key, "point": body}, sort_keys=True).encode("utf-8")).hexdigest()


def _sealed(data: dict, key: str) -> dict:
    """A point with its checksum over its content and its spec's hash ``key``."""
    return dict(data, checksum=_checksum(data, key))


def _stored(path: Path, key: str) -> dict | None:
    """The stored point at ``path`` if it verifies against spec hash ``key``, else None.  A point
    stored for another spec (the definition changed) is silently replaced; one that does not
    verify (edited, damaged, not a point at all) gets one line on stderr."""
    if not os.path.lexists(path):
        return None
    try:
        data = json.loads(read_file(path))
    except (UserError, ValueError):
        data = None
    if isinstance(data, dict) and data.get("spec_hash") == key and data.get("checksum") == _checksum(data, key):
        return data
    if not (isinstance(data, dict) and isinstance(data.get("spec_hash"), str) and data["spec_hash"] != key
            and data.get("checksum") == _checksum(data, data["spec_hash"])):
        print(f"note: {shown_path(path)}: stored point does not verify (edited or damaged); recomputing it",
              file=sys.stderr)
    return None


# -- the output folder: manifest, lock and checks, all before anything is computed -------------
#: The files a report writes, relative to its folder (cell names follow the definition's NAME_PATTERN): the only
#: entries a manifest may list, so the only files a run ever replaces or deletes.
REPORT_FILE = re.compile(r"(?:report\.json|index\.html|" + re.escape(LOCK) + r"|tables/[A-Za-z0-9][A-Za-z0-9_-]{0,99}"
                         r"\.(?:csv|parquet)|plots/[A-Za-z0-9][A-Za-z0-9_-]{0,99}\.png)")
#: The folders a report writes into: a link in their place is refused (it would lead the files elsewhere).
SUB_FOLDERS = ("cells", "tables", "plots")


def _inside(out: Path, path: Path) -> bool:
    """Whether ``path``, every link on the way followed, lies inside the output folder ``out``."""
    return path.resolve().is_relative_to(out.resolve())


def _contained(out: Path, path: Path) -> Path:
    """``path``, checked to lie inside ``out`` (links followed) before the report writes or deletes it."""
    if not _inside(out, path):
        _refuse(path, "leads outside the output folder (through a link)", "files inside the output folder only")
    return path


#: The largest manifest read (one a report writes lists a few files per cell) and its deepest nesting (it is
#: an object holding a list of texts: 2).
MAX_MANIFEST_BYTES = 1024 * 1024
MAX_MANIFEST_DEPTH = 4
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def _json_depth(text: str) -> int:
    """How deeply arrays and objects nest in JSON ``text`` (brackets inside strings not counted), without
    parsing it (a deep text would exhaust the parser's recursion)."""
    depth = deepest = 0
    for char in _JSON_STRING.sub('""', text):
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def _unreadable_manifest(path: Path, problem: str):
    raise UserError(shown_path(path), None, f"{problem}; nothing was computed, written or deleted",
                    "the manifest a report wrote: remove the folder's manifest only if the folder holds nothing "
                    "of yours, or choose another --out")


def _manifest(out: Path) -> dict | None:
    """The manifest of the report folder ``out``, or None when there is none.  One that cannot be read (too
    large, nested too deeply, not JSON, not a manifest) is refused with one line.  An entry is trusted only
    when it is a file a report writes (:data:`REPORT_FILE`: relative, no ``..``) and lies inside ``out``; any
    other is refused with one line, before anything is written or deleted."""
    path = out / MANIFEST
    if not os.path.lexists(path):
        return None
    try:
        text = read_file(path)
    except UserError as exc:
        _unreadable_manifest(path, f"manifest cannot be read ({exc.problem})")
    if len(text) > MAX_MANIFEST_BYTES:
        _unreadable_manifest(path, f"manifest is {len(text)} characters long (at most {MAX_MANIFEST_BYTES})")
    if _json_depth(text) > MAX_MANIFEST_DEPTH:
        _unreadable_manifest(path, f"manifest nested more than {MAX_MANIFEST_DEPTH} levels deep")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        _unreadable_manifest(path, "manifest is not JSON")
    if not (isinstance(data, dict) and isinstance(data.get("files"), list)
            and all(isinstance(f, str) for f in data["files"])):
        _unreadable_manifest(path, 'manifest is not {"files": [...]} of file names')
    for i, rel in enumerate(data["files"]):
        if not (REPORT_FILE.fullmatch(rel) and _inside(out, out / rel)):
            raise UserError(shown_path(out / MANIFEST), f"files[{i}]",
                            f"lists {elide(rel)!r}, not a file this report writes inside its folder; "
                            "nothing was computed, written or deleted",
                            "report.json, index.html, tables/NAME.csv or .parquet, plots/NAME.png; "
                            "remove the entry, or choose another --out")
    return data


def _write_manifest(out: Path, files) -> None:
    write_atomic(out / MANIFEST, json.dumps({"files": sorted(set(files)), "staging": STAGING},
                                            indent=1).encode("utf-8"))


def output_paths(report: Report) -> list[str]:
    """Every file (relative to the output folder) a report writes besides its stored points."""
    paths = ["report.json", "index.html"]
    for cell in report.cells:
        whole = isinstance(cell, (CompareCell, ListSearchCell))  # one table, no distributions
        stems = [cell.name] if whole else [cell.name, f"{cell.name}-distributions"]
        paths += [f"tables/{stem}.{ext}" for stem in stems for ext in ("csv", "parquet")]
        paths.append(f"plots/{cell.name}.png")
    return paths


def _refuse(path: Path, problem: str, allowed: str | None = None):
    raise UserError(shown_path(path), None, problem + "; nothing was computed or written", allowed)


def _refuse_links(out: Path, paths) -> None:
    """Refuse a link in place of a folder the report writes into (or of its lock file)."""
    for path in paths:
        if path.is_symlink():
            _refuse(path, "is a link (it would lead the report's files outside its folder)",
                    "a real folder or file inside the output folder: remove the link")


def _check_outputs(report: Report, out: Path, manifest: dict) -> None:
    """Every path the run will write must be free or a regular file this report wrote."""
    ours = set(manifest["files"])
    _refuse_links(out, [out / folder for folder in SUB_FOLDERS]
                  + sorted({point_file(out, spec).parent for spec in report.all_points()}))
    for folder in SUB_FOLDERS:
        if os.path.lexists(out / folder) and not (out / folder).is_dir():
            _refuse(out / folder, "exists and is not a folder", "a folder the report writes into")
    for rel in output_paths(report):
        path = out / rel
        if os.path.lexists(path) and (rel not in ours or path.is_symlink() or not path.is_file()):
            _refuse(path, "exists and was not written by this report", "remove it, or choose another --out")
    for spec in report.all_points():
        path = point_file(out, spec)
        if os.path.lexists(path) and (path.is_symlink() or not path.is_file()):
            _refuse(path, "exists and is not a stored point", "remove it, or choose another --out")


def _legacy_report_folder(out: Path) -> bool:
    """A folder an older version wrote (before manifests): a page, report.json and stored points,
    and nothing else at its top level."""
    names = {p.name for p in out.iterdir()}
    return {"index.html", "report.json", "cells"} <= names and all(
        n in {"index.html", "report.json", "cells", "tables", "plots", LOCK} or n.startswith(".staging-")
        for n in names)


@contextmanager
def output_folder(report: Report, out: Path):
    """Hold the output folder of ``report`` for one run: refuse a folder that is not a report
    folder, take its lock (a second run exits 2) and check every output path; all before anything
    is computed."""
    try:
        if os.path.lexists(out) and not out.is_dir():
            _refuse(out, "exists and is not a folder", "a new folder, an empty one or a report's folder")
        found = _manifest(out) if out.is_dir() else None
        legacy = out.is_dir() and found is None and _legacy_report_folder(out)
        if out.is_dir() and found is None and any(out.iterdir()) and not legacy:
            _refuse(out, f"folder is not empty and is not a report folder (no {MANIFEST})",
                    "a new folder, an empty one or a report's folder")
        _refuse_links(out, [out / LOCK, *(out / folder for folder in SUB_FOLDERS)])
        out.mkdir(parents=True, exist_ok=True)
        lock = os.fdopen(os.open(out / LOCK, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o644), "a")
    except OSError as exc:
        _refuse(out, f"cannot write to the output folder ({exc.strerror})", "a writable folder")
    with lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            _refuse(out, "another run is writing this report folder", "wait for it to finish, or another --out")
        manifest = _manifest(out)
        if manifest is None:  # a new folder, or one an older version wrote: adopt only its report's paths
            _write_manifest(out, [LOCK] + ([rel for rel in output_paths(report) if (out / rel).is_file()]
                                           if legacy else []))
            manifest = _manifest(out)
        _check_outputs(report, out, manifest)
        yield manifest


def compute(report: Report, out: Path, executor=None, progress: bool | None = None) -> dict:
    """Every point of ``report``: stored ones read back, missing ones computed and stored as they
    finish.  Returns ``{(cell, point): data}``."""
    executor = executor or LocalExecutor()
    if progress is None:
        progress = sys.stderr.isatty()
    specs = report.all_points()
    for tmp in (out / "cells").glob("*/.*.json.*.tmp"):  # left by a run killed while writing a point
        if tmp.is_file() and not tmp.is_symlink():
            _contained(out, tmp).unlink()
    done, todo = {}, []
    for spec in specs:
        data = _stored(point_file(out, spec), spec_hash(spec))
        simulation = "compare" not in spec and "list_search" not in spec
        if data is None or (simulation and "at_least" not in data):  # stored before "at least N" rows
            todo.append(spec)
        else:
            done[spec["cell"], spec["point"]] = data
    names = [cell.name for cell in report.cells]
    width = max(len(n) for n in names)
    overall = tqdm(total=len(specs), initial=len(specs) - len(todo), desc=f"{'report':<{width}}", unit="cell",
                   file=sys.stderr, disable=not progress, position=0)
    bars = {}
    for i, name in enumerate(names):
        total = len(report.points[name])
        bars[name] = tqdm(total=total, initial=sum((name, p["point"]) in done for p in report.points[name]),
                          desc=f"{name:<{width}}", unit="point", file=sys.stderr, disable=not progress,
                          position=i + 1)
    local = isinstance(executor, LocalExecutor)
    fn = functools.partial(run_point, progress=progress) if local else run_point
    try:
        for i, data in executor.map(fn, todo):
            spec = todo[i]
            data = _sealed(data, spec_hash(spec))
            write_atomic(_contained(out, point_file(out, spec)), json.dumps(data, sort_keys=True).encode("utf-8"))
            done[spec["cell"], spec["point"]] = data
            bars[spec["cell"]].update(1)
            overall.update(1)
    finally:
        for bar in [*bars.values(), overall]:
            bar.close()
    return done


# -- tables and plots --------------------------------------------------------------------------
def _cell_frames(report: Report, cell, done: dict):
    """A cell's table, its distributions and their "at least N" rows (None, None for a comparison)."""
    if isinstance(cell, CompareCell):
        return frame_from_json(done[cell.name, "comparison"]["table"]), None, None
    if isinstance(cell, ListSearchCell):
        return frame_from_json(done[cell.name, "search"]["table"]), None, None
    frames = {"table": [], "distributions": [], "at_least": []}
    for spec in report.points[cell.name]:
        data = done[cell.name, spec["point"]]
        for name, parts in frames.items():
            frame = frame_from_json(data[name])
            if not isinstance(cell, ScenarioCell):
                frame.insert(0, "point", [spec["point"]] * len(frame))
                for j, (field, value) in enumerate(spec["overrides"].items()):
                    frame.insert(j + 1, field, [value] * len(frame))
            parts.append(frame)
    return tuple(pd.concat(parts, ignore_index=True) for parts in frames.values())


@literal_text
def sweep_plot(table: pd.DataFrame, fields: list[str], title: str, system: str, sides: dict,
               max_sections: int = 3, max_lines: int = 8):
    """Every probability (percent) against the first swept field, with 95 % interval bands."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import PercentFormatter

    probs = table[table["kind"] == "probability"]
    sections = list(dict.fromkeys(probs["section"]))[:max_sections]
    fig, axes = plt.subplots(1, len(sections), figsize=(5.6 * len(sections), 5.4), squeeze=False)
    x_field, others = fields[0], fields[1:]
    xs = list(dict.fromkeys(table[x_field]))
    numeric = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in xs)
    for ax, section in zip(axes[0], sections):
        rows = probs[probs["section"] == section]
        keys = list(dict.fromkeys(zip(rows["entity"], rows["quantity"], *(rows[f] for f in others))))
        for key in keys[:max_lines]:
            mask = (rows["entity"] == key[0]) & (rows["quantity"] == key[1])
            for f, v in zip(others, key[2:]):
                mask &= rows[f] == v
            line = rows[mask]
            x = line[x_field] if numeric else [xs.index(v) for v in line[x_field]]
            label = " ".join([quantity_label(system, key[1]),
                              *(f"{field_words(f)} = {v}" for f, v in zip(others, key[2:]))])
            if key[0]:
                label = f"{group_label(system, section, key[0], sides)}: {label}"
            ax.plot(x, line["estimate"] * 100, marker="o", label=label)
            ax.fill_between(x, line["ci95_lo"] * 100, line["ci95_hi"] * 100, alpha=0.2)
        if not numeric:
            ax.set_xticks(range(len(xs)), [str(x) for x in xs])
        elif len(xs) <= 12:
            ax.set_xticks(xs, [f"{x:g}" for x in xs])
        ax.set_xlabel(field_words(x_field))
        ax.set_ylabel("chance (band: 95 % interval)")
        ax.yaxis.set_major_formatter(PercentFormatter())
        ax.set_ylim(-2, 102)
        ax.set_title(group_label(system, section, ""), fontsize=10)
        ax.grid(alpha=0.3)
        legend_below(ax)
    fig.suptitle(textwrap.fill(title, 110), fontsize=11)
    fig.tight_layout()
    return fig


def _short(force: str) -> str:
    """A force's name on the page: the file or library formation, without folders and suffix."""
    return str(force).rsplit("/", 1)[-1].removesuffix(".toml").replace("-", " ")


@literal_text
def matrix_plot(table: pd.DataFrame, title: str):
    """Heatmap of P(attacker wins) over attackers × defenders, each square with its 95 % interval."""
    import matplotlib.pyplot as plt

    rows = table[(table["section"] == "sides") & (table["quantity"] == "attacker_wins")]
    attackers, defenders = list(dict.fromkeys(rows["attacker"])), list(dict.fromkeys(rows["defender"]))
    grid = rows.pivot(index="attacker", columns="defender", values="estimate").loc[attackers, defenders]
    fig, ax = plt.subplots(figsize=(1.9 * len(defenders) + 2.6, 0.8 * len(attackers) + 1.8))
    image = ax.imshow(grid.to_numpy(dtype=float) * 100, vmin=0, vmax=100, cmap="RdYlGn", aspect="auto")
    for r in rows.itertuples(index=False):
        ax.text(defenders.index(r.defender), attackers.index(r.attacker),
                percent(r.estimate, r.ci95_lo, r.ci95_hi).replace(" [", "\n["), ha="center", va="center", fontsize=8)
    ax.set_xticks(range(len(defenders)), [_short(f) for f in defenders], rotation=20, ha="right")
    ax.set_yticks(range(len(attackers)), [_short(f) for f in attackers])
    ax.set_xlabel("defender")
    ax.set_ylabel("attacker")
    fig.colorbar(image, ax=ax, label="chance the attacker wins (%), 95 % interval in brackets")
    ax.set_title(textwrap.fill(title, 60), fontsize=11)
    fig.tight_layout()
    return fig


def compare_plot(table: pd.DataFrame, result: dict, title: str):
    """The comparison's forest plot (paired and independent 95 % intervals) from its stored data."""
    from ..decisions.results import CompareResult

    meta = {k: result[k] for k in ("option_a", "option_b", "paired")}
    return CompareResult(option_results={}, system=result["system"], trials=result["trials"], seed=result["seed"],
                         frame=table, title=title, meta=meta).plot()


@literal_text
def list_search_plot(table: pd.DataFrame, data: dict, title: str):
    """The list search's plot (points against meta score with intervals; candidates racing against trials spent)
    from its stored data."""
    from ..decisions.list_search_core import ListSearchResult

    result = data["result"]
    return ListSearchResult(title=title, frame=table, guarantee=result["guarantee"], race=result["race"],
                            enumeration=result["enumeration"], run={},
                            history=[tuple(h) for h in data["history"]]).plot()


def _interval(value: float, lo: float, hi: float, digits: int) -> str:
    """``value [lo, hi]`` in the list search's units (percent, percentage points); blank where not measured."""
    if value != value:
        return ""
    text = f"{value:.{digits}f}"
    return text if lo != lo else f"{text} [{lo:.{digits}f}, {hi:.{digits}f}]"


def _list_search_rows(table: pd.DataFrame, top: int) -> list[dict]:
    """The ranking as the page shows it: every candidate not dropped by the race (at most ``top`` + the ones
    within the indifference zone), the score and the gap to the best with their 95 % intervals."""
    shown = table[table.status != "dropped"].head(max(top, int((table.status != "dropped").sum())))
    return [{"rank": int(r.rank), "candidate": r.candidate, "points": "" if r.points != r.points else f"{r.points:.0f}",
             "score": _interval(r.score, r.ci95_lo, r.ci95_hi, 1),
             "behind": "" if r.status == "best" else _interval(r.behind_best, r.behind_lo, r.behind_hi, 2),
             "status": r.status} for r in shown.itertuples(index=False)]


def _png_bytes(figure) -> bytes:
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    save_figure(figure, buffer, format="png", dpi=90, metadata={"Software": None})
    plt.close(figure)
    return buffer.getvalue()


def _write_plot(staging: Path, plot: str, draw) -> str | None:
    """Write the figure ``draw()`` makes to ``staging/plot``; returns ``plot``, or None with one line on
    stderr when it cannot be drawn (the page and the tables never wait on a plot)."""
    try:
        png = _png_bytes(draw())
    except Exception as exc:  # noqa: BLE001 -- any failure of matplotlib: the report goes on without this plot
        print(f"note: {plot}: cannot draw the plot ({exc.__class__.__name__}: {elide(' '.join(str(exc).split()))}); "
              "the page and tables are written without it", file=sys.stderr)
        return None
    (staging / plot).write_bytes(png)
    return plot


def parquet_available() -> bool:
    """Whether the ``[parquet]`` extra (pyarrow) can be imported: without it a report writes its CSV tables,
    plots and page, and says in one line that the Parquet tables need the extra."""
    try:
        require("parquet", "report")
    except UserError:
        return False
    return True


def _write_table(staging: Path, stem: str, frame: pd.DataFrame, parquet: bool = True) -> list[str]:
    """The table as CSV (the one CSV writer, :func:`~wargame_odds.analysis.intake.user_text.csv_text`) and, with the
    extra, Parquet."""
    csv = f"tables/{stem}.csv"
    (staging / csv).write_text(csv_text(frame), encoding="utf-8")
    if not parquet:
        return [csv]
    frame.to_parquet(staging / f"tables/{stem}.parquet", index=False, engine="pyarrow")
    return [csv, f"tables/{stem}.parquet"]


def _point_label(spec: dict) -> str:
    return ", ".join(f"{field_words(f)} = {_short(v) if isinstance(v, str) else v}"
                     for f, v in spec["overrides"].items())


FOLD_COLUMNS = 4  # grid points per table: a wider grid folds into several tables


def _sweep_pivot(system: str, table: pd.DataFrame, specs: list[dict], sides: dict) -> list[dict]:
    """Readable rows × grid points of "estimate [95 % interval]" texts, folded into tables of at
    most FOLD_COLUMNS grid points each."""
    points = [s["point"] for s in specs]
    labels = [_point_label(s) for s in specs]
    rows: dict[tuple, dict] = {}
    for r in table.itertuples(index=False):
        key = (r.section, r.entity, r.quantity)
        rows.setdefault(key, {})[r.point] = estimate_text(r.kind, r.estimate, r.ci95_lo, r.ci95_hi)
    readable = [{"group": group_label(system, k[0], k[1], sides), "quantity": quantity_label(system, k[2]),
                 "values": [v.get(p, "") for p in points]} for k, v in rows.items()]
    return [{"columns": labels[start:start + FOLD_COLUMNS],
             "rows": [dict(r, values=r["values"][start:start + FOLD_COLUMNS]) for r in readable]}
            for start in range(0, len(points), FOLD_COLUMNS)]


def _at_least_tables(system: str, at_least: pd.DataFrame, sides: dict) -> list[dict]:
    """The report's "at least N" tables (``report_at_least`` in labels.toml: casualties, blast
    markers …): one per quantity, a row per N and a column per formation or unit."""
    wanted = report_at_least(system)
    tables = []
    for (section, quantity), rows in at_least.groupby(["section", "quantity"], sort=False):
        if f"{section}.{quantity}" not in wanted:
            continue
        entities = list(dict.fromkeys(rows["entity"]))
        values = sorted(set(rows["value"]))
        cells = {(r.entity, r.value): percent(r.p, r.ci95_lo, r.ci95_hi) for r in rows.itertuples(index=False)}
        tables.append({"title": f'"At least N": {axis_label(system, quantity, entities[0])}',
                       "columns": [group_label(system, section, e, sides) for e in entities],
                       "rows": [{"value": f"{v:g}", "cells": [cells.get((e, v), "0 %") for e in entities]}
                                for v in values]})
    return tables


def _headlines(cell, specs: list[dict], done: dict, table: pd.DataFrame) -> tuple[list[str], list[dict]]:
    """The sentences that lead a cell: the full headline of a scenario (of a turn scenario: the turn
    step by step), the "who wins" sentences of every point of a sweep or matrix, the meta row of a
    comparison."""
    if isinstance(cell, ListSearchCell):
        return list(done[cell.name, "search"]["result"]["sentences"]), []
    if isinstance(cell, CompareCell):
        result = done[cell.name, "comparison"]["result"]
        meta = table.iloc[-1]
        return [f"Option A ({_short(result['option_a'])}) wins: {percent(meta.p_a, meta.p_a_lo, meta.p_a_hi)}",
                f"Option B ({_short(result['option_b'])}) wins: {percent(meta.p_b, meta.p_b_lo, meta.p_b_hi)}",
                f"A − B, {meta.opponent}: {percent(meta.difference, meta.ci95_lo, meta.ci95_hi)}"], []
    results = [done[cell.name, s["point"]]["result"] for s in specs]
    if isinstance(cell, ScenarioCell):  # an Epic turn step by step, with its means' intervals from the table
        return sentences(results[0], table), []
    return [], [{"label": _point_label(s), "sentences": summary(r)} for s, r in zip(specs, results)]


def _where(executor) -> str:
    """Where the cells were computed, in words (not the executor's repr)."""
    if executor is None or isinstance(executor, LocalExecutor):
        return "this computer"
    return "a Dask cluster"


def render(report: Report, done: dict, out: Path, manifest: dict, executor_name: str = "this computer",
           parquet: bool = True) -> Path:
    """Write tables, plots, report.json and index.html from the stored points; returns index.html.

    Runs inside :func:`output_folder` (``manifest`` is what it returned): only files the manifest
    lists are replaced or deleted; ``parquet``: whether the Parquet tables are written besides the CSV.
    The collector is on from here (:mod:`wargame_odds.analysis.run.gc_pause`): a report whose points were all stored
    runs no trials to turn it back on, and its plots build cyclic garbage."""
    gc_pause.resume()
    import jinja2
    import matplotlib

    matplotlib.use("Agg")
    staging = out / STAGING
    if staging.is_dir() and not staging.is_symlink():  # left by a killed run (a name the report reserves)
        shutil.rmtree(_contained(out, staging))
    elif os.path.lexists(staging):
        staging.unlink()  # the link itself, inside the folder
    staging.mkdir()
    (staging / "tables").mkdir()
    (staging / "plots").mkdir()
    model = report.model
    sections, cells_json = [], []
    for cell in report.cells:
        specs = report.points[cell.name]
        table, dists, at_least = _cell_frames(report, cell, done)
        files = _write_table(staging, cell.name, table, parquet)
        if dists is not None:
            files += _write_table(staging, f"{cell.name}-distributions", dists, parquet)
            files += _write_table(staging, f"{cell.name}-at-least", at_least, parquet)
        first = done[cell.name, specs[0]["point"]]
        system = specs[0]["system"]
        sides = {} if isinstance(cell, (CompareCell, ListSearchCell)) else sides_of(first["result"])
        grid = None
        if isinstance(cell, (CompareCell, MatrixCell)):
            scenario = f"matchups on the rules of {cell.base}" if cell.base else "matchups on default rules"
        if isinstance(cell, ListSearchCell):
            title = specs[0]["list_search"]["title"]
            enumeration = first["result"]["enumeration"]
            scenario = (f"{cell.definition or 'the cell'}: {enumeration['candidates']} candidates against a meta of "
                        f"{enumeration['opponents']}")
            draw = functools.partial(list_search_plot, table, first, title)
        elif isinstance(cell, CompareCell):
            title = cell.title or first["result"]["title"]
            draw = functools.partial(compare_plot, table, first["result"], title)
        elif isinstance(cell, MatrixCell):
            title = cell.title or f"{len(cell.attackers)} × {len(cell.defenders)} matchups"
            grid = {"attacker": cell.attackers, "defender": cell.defenders}
            draw = functools.partial(matrix_plot, table, title)
        else:
            title = cell.title or first["result"].get("title", cell.name)
            grid, scenario = getattr(cell, "grid", None), cell.scenario
            draw = (functools.partial(outcome_figure, system, table, at_least, title, sides=sides,
                                      engaged=sides_of(first["result"], engaged_only=True)) if grid is None
                    else functools.partial(sweep_plot, table, list(grid), title, system, sides))
        plot = _write_plot(staging, f"plots/{cell.name}.png", draw)
        trials = sum(done[cell.name, s["point"]]["trials"] for s in specs)
        headline, point_headlines = _headlines(cell, specs, done, table)
        section = {"name": cell.name, "kind": cell.kind, "title": title, "scenario": scenario,
                   "system": system, "trials_per_point": specs[0]["trials"], "trials": trials,
                   "points": len(specs), "options": cell.options, "headline": headline,
                   "point_headlines": point_headlines, "plot": plot, "files": files,
                   "notes": first["result"].get("notes", []),
                   "distributions": [] if dists is None else _readable_distributions(system, dists, specs, sides),
                   "at_least": ([] if at_least is None or grid is not None
                                else _at_least_tables(system, at_least, sides))}
        if isinstance(cell, CompareCell):
            result = first["result"]
            section.update({k: result[k] for k in ("option_a", "option_b", "paired", "method", "batches")},
                           opponents=len(cell.opponents), trials_per_option=result["trials"])
        if isinstance(cell, ListSearchCell):
            section["rows"] = _list_search_rows(table, cell.top)
            section["dropped"] = int((table.status == "dropped").sum())
        elif isinstance(cell, CompareCell):
            section["rows"] = table.to_dict("records")
        elif grid is None:
            section["rows"] = readable_rows(system, table, sides)
        else:
            section["grid"] = {field_words(f): [_short(v) if isinstance(v, str) else v for v in values]
                               for f, values in grid.items()}
            section["pivots"] = _sweep_pivot(system, table, specs, sides)
        sections.append(section)
        cells_json.append({"name": cell.name, "kind": cell.kind, "title": title, "scenario": scenario,
                           "cell_key": specs[0]["stream"][0],
                           "points": [{"point": s["point"], "stream": s["stream"], "overrides": s["overrides"],
                                       "result": done[cell.name, s["point"]]["result"]} for s in specs]})
    facts = {"title": model.title, "seed": model.seed, "trials": model.trials,
             "total_trials": sum(s["trials"] for s in sections), "versions": versions()}
    report_json = json.dumps(finite_json(dict(facts, cells=cells_json)), indent=1, sort_keys=True, allow_nan=False)
    (staging / "report.json").write_text(report_json, encoding="utf-8")
    env = jinja2.Environment(loader=jinja2.PackageLoader("wargame_odds.analysis.reports", "templates"),
                             autoescape=True, undefined=jinja2.StrictUndefined, finalize=printable)
    env.filters["percent"] = lambda triple: percent(*triple)
    page = env.get_template("report.html.j2").render(
        report=facts, description=model.description, sections=sections, source=str(report.source),
        kinds=names("kinds"), systems=names("systems"),
        executor=executor_name, generated=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))
    (staging / "index.html").write_text(page, encoding="utf-8")
    produced = sorted(p.relative_to(staging).as_posix() for p in staging.rglob("*") if p.is_file())
    previous = set(manifest["files"])
    _write_manifest(out, previous | set(produced))  # listed before they land: a killed run's files stay ours
    for rel in produced:
        if rel != "index.html":
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            (staging / rel).replace(_contained(out, out / rel))
    for rel in sorted(previous - set(produced) - {LOCK}):  # files of cells no longer in the report
        stale = out / rel
        if stale.is_file() and not stale.is_symlink():
            _contained(out, stale).unlink()
    _write_manifest(out, [*produced, LOCK])
    (staging / "index.html").replace(_contained(out, out / "index.html"))
    shutil.rmtree(staging)
    return out / "index.html"


def _readable_distributions(system: str, dists: pd.DataFrame, specs: list[dict], sides: dict) -> list[dict]:
    points = {s["point"]: _point_label(s) for s in specs}
    return [{"point": points.get(r.get("point"), ""), "group": group_label(system, r["section"], r["entity"], sides),
             "quantity": axis_label(system, r["quantity"], r["entity"]), "value": f"{r['value']:g}",
             "p": percent(r["p"], r["ci95_lo"], r["ci95_hi"])} for r in dists.to_dict("records")]


def build(report: Report | str | Path, out: str | Path | None = None, executor=None,
          progress: bool | None = None) -> Path:
    """Compute (or resume) and write a report; returns the path of its ``index.html``.  Without the
    ``[parquet]`` extra the tables are CSV only, which one line on stderr says before anything runs."""
    from ..intake.arguments import check_flag, check_instance

    check_instance("report", report, (Report, str, os.PathLike), "a report definition: a path or a loaded Report")
    check_instance("out", out, (str, os.PathLike, type(None)), "an output folder (str or pathlib.Path) or None")
    check_flag("progress", progress, none_ok=True)
    if not isinstance(report, Report):
        report = load_report(report)
    parquet = parquet_available()
    if not parquet:
        module, what = EXTRAS["parquet"]
        print(f"note: CSV tables only: {what}, install the parquet extra: pip install 'wargame-odds[parquet]' "
              f"({module} is not installed)", file=sys.stderr)
    out = Path(out) if out is not None else default_out(report)
    with output_folder(report, out) as manifest:
        done = compute(report, out, executor=executor, progress=progress)
        return render(report, done, out, manifest, executor_name=_where(executor), parquet=parquet)
