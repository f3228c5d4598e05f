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
package version are unchanged and its checksum (over its content and that spec's hash) verifies,
so a killed run started again computes only what is missing; a point that does not verify is
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
from contextlib import contextmanager
from datetime import datetime, timezone
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pandas as pd
from tqdm import tqdm

from ..errors import UserError
from ..result import finite_json
from ..scenario import read_file, shown_path
from .cells import frame_from_json, run_point, write_atomic
from .definition import CompareCell, MatrixCell, Report, ScenarioCell, load_report, spec_hash
from .executor import LocalExecutor

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
def _manifest(out: Path) -> dict | None:
    try:
        data = json.loads(read_file(out / MANIFEST))
    except (UserError, ValueError):
        return None
    if not (isinstance(data, dict) and isinstance(data.get("files"), list)
            and all(isinstance(f, str) for f in data["files"])):
        return None
    return data


def _write_manifest(out: Path, files) -> None:
    write_atomic(out / MANIFEST, json.dumps({"files": sorted(set(files)), "staging": STAGING},
                                            indent=1).encode("utf-8"))


def output_paths(report: Report) -> list[str]:
    """Every file (relative to the output folder) a report writes besides its stored points."""
    paths = ["report.json", "index.html"]
    for cell in report.cells:
        stems = [cell.name] if isinstance(cell, CompareCell) else [cell.name, f"{cell.name}-distributions"]
        paths += [f"tables/{stem}.{ext}" for stem in stems for ext in ("csv", "parquet")]
        paths.append(f"plots/{cell.name}.png")
    return paths


def _refuse(path: Path, problem: str, allowed: str | None = None):
    raise UserError(shown_path(path), None, problem + "; nothing was computed or written", allowed)


def _check_outputs(report: Report, out: Path, manifest: dict) -> None:
    """Every path the run will write must be free or a regular file this report wrote."""
    ours = set(manifest["files"])
    for folder in ("cells", "tables", "plots"):
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
        legacy = out.is_dir() and _manifest(out) is None and _legacy_report_folder(out)
        if out.is_dir() and _manifest(out) is None and any(out.iterdir()) and not legacy:
            _refuse(out, f"folder is not empty and is not a report folder (no {MANIFEST})",
                    "a new folder, an empty one or a report's folder")
        out.mkdir(parents=True, exist_ok=True)
        lock = open(out / LOCK, "a")
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
        if tmp.is_file():
            tmp.unlink()
    done, todo = {}, []
    for spec in specs:
        data = _stored(point_file(out, spec), spec_hash(spec))
        if data is None:
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
            write_atomic(point_file(out, spec), json.dumps(data, sort_keys=True).encode("utf-8"))
            done[spec["cell"], spec["point"]] = data
            bars[spec["cell"]].update(1)
            overall.update(1)
    finally:
        for bar in [*bars.values(), overall]:
            bar.close()
    return done


# -- tables and plots --------------------------------------------------------------------------
def _cell_frames(report: Report, cell, done: dict) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """A cell's table and its distributions (None for a comparison, which has none)."""
    if isinstance(cell, CompareCell):
        return frame_from_json(done[cell.name, "comparison"]["table"]), None
    frames, dists = [], []
    for spec in report.points[cell.name]:
        data = done[cell.name, spec["point"]]
        table, dist = frame_from_json(data["table"]), frame_from_json(data["distributions"])
        if not isinstance(cell, ScenarioCell):
            for frame in (table, dist):
                frame.insert(0, "point", [spec["point"]] * len(frame))
                for j, (field, value) in enumerate(spec["overrides"].items()):
                    frame.insert(j + 1, field, [value] * len(frame))
        frames.append(table)
        dists.append(dist)
    return pd.concat(frames, ignore_index=True), pd.concat(dists, ignore_index=True)


def _label(row) -> str:
    return f"{row.entity}: {row.quantity}" if row.entity else str(row.quantity)


def scenario_plot(table: pd.DataFrame, dists: pd.DataFrame, title: str, max_distributions: int = 3):
    """Every probability with its 95 % error bar, and the first distributions as bar charts."""
    import matplotlib.pyplot as plt

    probs = table[table["kind"] == "probability"].reset_index(drop=True)
    spread = dists[dists["p"] < 1].groupby(["section", "entity", "quantity"], sort=False).size()
    names = list(spread[spread > 1].index)[:max_distributions]
    fig, axes = plt.subplots(1, 1 + len(names), figsize=(6.5 + 3.4 * len(names), max(3.2, 0.26 * len(probs) + 1.4)),
                             squeeze=False, gridspec_kw={"width_ratios": [2] + [1] * len(names)})
    ax = axes[0, 0]
    y = list(range(len(probs)))[::-1]
    ax.errorbar(probs["estimate"], y, xerr=[(probs["estimate"] - probs["ci95_lo"]).clip(lower=0),
                                            (probs["ci95_hi"] - probs["estimate"]).clip(lower=0)],
                fmt="o", capsize=3)
    ax.set_yticks(y, [f"{r.section} · {_label(r)}" for r in probs.itertuples()], fontsize=7)
    ax.set_xlim(-0.02, 1.02)
    ax.set_xlabel("probability (95 % interval)")
    ax.grid(axis="x", alpha=0.3)
    for ax, (section, entity, quantity) in zip(axes[0, 1:], names):
        d = dists[(dists["section"] == section) & (dists["entity"] == entity) & (dists["quantity"] == quantity)]
        ax.bar(d["value"], d["p"], yerr=[(d["p"] - d["ci95_lo"]).clip(lower=0), (d["ci95_hi"] - d["p"]).clip(lower=0)],
               capsize=2, alpha=0.8, width=0.8 * (d["value"].diff().min() if len(d) > 1 else 1))
        ax.set_title(f"{section} · {entity + ': ' if entity else ''}{quantity}", fontsize=8)
        ax.set_ylabel("probability (95 % interval)")
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return fig


def sweep_plot(table: pd.DataFrame, fields: list[str], title: str, max_sections: int = 3, max_lines: int = 8):
    """Line plots of every probability against the first swept field, with 95 % interval bands."""
    import matplotlib.pyplot as plt

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
            label = " ".join(str(k) for k in key if k != "")
            ax.plot(x, line["estimate"], marker="o", label=label)
            ax.fill_between(x, line["ci95_lo"], line["ci95_hi"], alpha=0.2)
        if not numeric:
            ax.set_xticks(range(len(xs)), [str(x) for x in xs])
        ax.set_xlabel(x_field)
        ax.set_ylabel("probability (95 % band)")
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(section, fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, frameon=False)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return fig


def matrix_plot(table: pd.DataFrame, title: str):
    """Heatmap of P(attacker wins) over attackers × defenders, each square with its 95 % interval."""
    import matplotlib.pyplot as plt

    rows = table[(table["section"] == "sides") & (table["quantity"] == "attacker_wins")]
    attackers, defenders = list(dict.fromkeys(rows["attacker"])), list(dict.fromkeys(rows["defender"]))
    grid = rows.pivot(index="attacker", columns="defender", values="estimate").loc[attackers, defenders]
    fig, ax = plt.subplots(figsize=(1.9 * len(defenders) + 2.6, 0.8 * len(attackers) + 1.8))
    image = ax.imshow(grid.to_numpy(dtype=float), vmin=0, vmax=1, cmap="RdYlGn", aspect="auto")
    for r in rows.itertuples(index=False):
        ax.text(defenders.index(r.defender), attackers.index(r.attacker),
                f"{r.estimate:.3f}\n[{r.ci95_lo:.3f}, {r.ci95_hi:.3f}]", ha="center", va="center", fontsize=8)
    short = [str(f).rsplit("/", 1)[-1].removesuffix(".toml") for f in defenders]
    ax.set_xticks(range(len(defenders)), short, rotation=20, ha="right")
    ax.set_yticks(range(len(attackers)), [str(f).rsplit("/", 1)[-1].removesuffix(".toml") for f in attackers])
    ax.set_xlabel("defender")
    ax.set_ylabel("attacker")
    fig.colorbar(image, ax=ax, label="P(attacker wins), 95 % interval in brackets")
    ax.set_title(title, fontsize=11)
    fig.tight_layout()
    return fig


def compare_plot(table: pd.DataFrame, result: dict, title: str):
    """The comparison's forest plot (paired and independent 95 % intervals) from its stored data."""
    from ..decisions.results import CompareResult

    meta = {k: result[k] for k in ("option_a", "option_b", "paired")}
    return CompareResult(option_results={}, system=result["system"], trials=result["trials"], seed=result["seed"],
                         frame=table, title=title, meta=meta).plot()


def _png_bytes(figure) -> bytes:
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=90, metadata={"Software": None})
    plt.close(figure)
    return buffer.getvalue()


def _write_table(staging: Path, stem: str, frame: pd.DataFrame) -> list[str]:
    csv = f"tables/{stem}.csv"
    parquet = f"tables/{stem}.parquet"
    (staging / csv).write_text(frame.to_csv(index=False), encoding="utf-8")
    frame.to_parquet(staging / parquet, index=False, engine="pyarrow")
    return [csv, parquet]


def _sweep_pivot(table: pd.DataFrame, fields: list[str]) -> tuple[list[str], list[dict]]:
    """Rows (section, entity, quantity) × columns (grid points) of "estimate [lo, hi]" cells."""
    points = list(dict.fromkeys(table["point"]))
    labels = []
    for p in points:
        first = table[table["point"] == p].iloc[0]
        labels.append(", ".join(f"{f.rsplit('.', 1)[-1]}={first[f]}" for f in fields))
    rows = {}
    for r in table.itertuples(index=False):
        key = (r.section, r.entity, r.quantity, r.kind)
        rows.setdefault(key, {})[r.point] = (r.estimate, r.ci95_lo, r.ci95_hi)
    out = [{"section": k[0], "entity": k[1], "quantity": k[2], "kind": k[3],
            "values": [v.get(p) for p in points]} for k, v in rows.items()]
    return labels, out


def render(report: Report, done: dict, out: Path, manifest: dict, executor_name: str = "local") -> Path:
    """Write tables, plots, report.json and index.html from the stored points; returns index.html.

    Runs inside :func:`output_folder` (``manifest`` is what it returned): only files the manifest
    lists are replaced or deleted."""
    import jinja2
    import matplotlib

    matplotlib.use("Agg")
    staging = out / STAGING
    if staging.is_dir() and not staging.is_symlink():  # left by a killed run (a name the report reserves)
        shutil.rmtree(staging)
    elif os.path.lexists(staging):
        staging.unlink()
    staging.mkdir()
    (staging / "tables").mkdir()
    (staging / "plots").mkdir()
    model = report.model
    sections, cells_json = [], []
    for cell in report.cells:
        specs = report.points[cell.name]
        table, dists = _cell_frames(report, cell, done)
        files = _write_table(staging, cell.name, table)
        if dists is not None:
            files += _write_table(staging, f"{cell.name}-distributions", dists)
        first = done[cell.name, specs[0]["point"]]
        grid = None
        if isinstance(cell, (CompareCell, MatrixCell)):
            scenario = f"matchups on the rules of {cell.base}" if cell.base else "matchups on default rules"
        if isinstance(cell, CompareCell):
            title = cell.title or first["result"]["title"]
            png = _png_bytes(compare_plot(table, first["result"], title))
        elif isinstance(cell, MatrixCell):
            title = cell.title or f"{len(cell.attackers)} × {len(cell.defenders)} matchups"
            grid = {"attacker": cell.attackers, "defender": cell.defenders}
            png = _png_bytes(matrix_plot(table, title))
        else:
            title = cell.title or first["result"].get("title", cell.name)
            grid, scenario = getattr(cell, "grid", None), cell.scenario
            figure = scenario_plot(table, dists, title) if grid is None else sweep_plot(table, list(grid), title)
            png = _png_bytes(figure)
        plot = f"plots/{cell.name}.png"
        (staging / plot).write_bytes(png)
        trials = sum(done[cell.name, s["point"]]["trials"] for s in specs)
        section = {"name": cell.name, "kind": cell.kind, "title": title, "scenario": scenario,
                   "system": specs[0]["system"], "trials_per_point": specs[0]["trials"], "trials": trials,
                   "points": len(specs), "cell_key": specs[0]["stream"][0], "options": cell.options,
                   "plot": plot, "files": files, "notes": first["result"].get("notes", []),
                   "distributions": [] if dists is None else dists.to_dict("records")}
        if isinstance(cell, CompareCell):
            result = first["result"]
            section.update({k: result[k] for k in ("option_a", "option_b", "paired", "method", "batches")},
                           opponents=len(cell.opponents), trials_per_option=result["trials"])
        if grid is None:
            section["rows"] = table.to_dict("records")
        else:
            section["grid"] = grid
            section["columns"], section["pivot"] = _sweep_pivot(table, list(grid))
        sections.append(section)
        cells_json.append({"name": cell.name, "kind": cell.kind, "title": title, "scenario": scenario,
                           "cell_key": specs[0]["stream"][0],
                           "points": [{"point": s["point"], "stream": s["stream"], "overrides": s["overrides"],
                                       "result": done[cell.name, s["point"]]["result"]} for s in specs]})
    facts = {"title": model.title, "seed": model.seed, "trials": model.trials,
             "total_trials": sum(s["trials"] for s in sections), "versions": versions()}
    (staging / "report.json").write_text(
        json.dumps(finite_json(dict(facts, cells=cells_json)), indent=1, sort_keys=True, allow_nan=False), encoding="utf-8")
    env = jinja2.Environment(loader=jinja2.PackageLoader("analysis.reports", "templates"),
                             autoescape=True, undefined=jinja2.StrictUndefined)
    env.filters["ci"] = _format_estimate
    page = env.get_template("report.html.j2").render(
        report=facts, description=model.description, sections=sections, source=str(report.source),
        executor=executor_name, generated=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))
    (staging / "index.html").write_text(page, encoding="utf-8")
    produced = sorted(p.relative_to(staging).as_posix() for p in staging.rglob("*") if p.is_file())
    previous = set(manifest["files"])
    _write_manifest(out, previous | set(produced))  # listed before they land: a killed run's files stay ours
    for rel in produced:
        if rel != "index.html":
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            (staging / rel).replace(out / rel)
    for rel in sorted(previous - set(produced) - {LOCK}):  # files of cells no longer in the report
        stale = out / rel
        if stale.is_file() and not stale.is_symlink():
            stale.unlink()
    _write_manifest(out, [*produced, LOCK])
    (staging / "index.html").replace(out / "index.html")
    shutil.rmtree(staging)
    return out / "index.html"


def _format_estimate(row, digits: int = 4) -> str:
    """"estimate [lo, hi]" from a (estimate, lo, hi) triple or a table row."""
    if row is None:
        return ""
    if isinstance(row, dict):
        row = (row["estimate"], row["ci95_lo"], row["ci95_hi"])
    est, lo, hi = row
    if any(v != v for v in row):  # NaN: nothing to estimate
        return "n/a"
    return f"{est:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]"


def build(report: Report | str | Path, out: str | Path | None = None, executor=None,
          progress: bool | None = None) -> Path:
    """Compute (or resume) and write a report; returns the path of its ``index.html``."""
    if not isinstance(report, Report):
        report = load_report(report)
    out = Path(out) if out is not None else report.source.parent / "out" / report.name
    with output_folder(report, out) as manifest:
        done = compute(report, out, executor=executor, progress=progress)
        return render(report, done, out, manifest, executor_name=repr(executor or LocalExecutor()))
