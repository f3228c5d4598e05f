"""Reports never endanger files (issue 13 §1): derived point names, a manifest of the files a
report wrote, refusal of a folder that is not a report's, checksums on stored points, a lock on
the output folder, and every output path and cell option checked before anything is computed."""
import fcntl
import importlib
import json
from pathlib import Path

import pytest

from wargame_odds.analysis.intake.errors import UserError
from wargame_odds.analysis.reports import build, load_report
from wargame_odds.analysis.reports.build import LOCK, MANIFEST, point_file

from safety_helpers import SCENARIOS as SCENARIOS_DIR, assert_one_line_error, run_cli, tree as _tree

TWO_CELLS = """
title = "safety"
seed = 3
trials = 4096

[[cells]]
kind = "scenario"
name = "charge"
scenario = "t9a/single_charge_9in"

[[cells]]
kind = "sweep"
name = "names"
scenario = "t9a/single_charge_9in"
grid = { "title" = ["/../../../pwned", "..", "a/b"] }
"""


def _definition(tmp_path: Path, text: str = TWO_CELLS) -> Path:
    path = tmp_path / "def" / "safety.toml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    return path


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_stored_point_names_are_derived_and_stay_inside_the_output_folder(tmp_path):
    """Traversal: hostile cell and point names never leave ``out/cells`` and never repeat raw text."""
    out = tmp_path / "out"
    for cell, point in (("../../x", "/../../x/pwned"), ("a", ".."), ("a", "."), ("a", "b" * 5000)):
        path = point_file(out, {"cell": cell, "point": point})
        assert path.resolve().parent.parent == (out / "cells").resolve()
        assert ".." not in path.name and "/" not in path.relative_to(out / "cells").parent.name
        assert len(path.name) < 80
    assert point_file(out, {"cell": "a", "point": "x/y"}) != point_file(out, {"cell": "a", "point": "x_y"})
    definition = _definition(tmp_path)
    outside = set(tmp_path.iterdir())
    build(load_report(definition), out=out, progress=False)
    assert set(tmp_path.iterdir()) == outside | {out} and not list(tmp_path.rglob("pwned*"))


def test_out_onto_a_users_folder_is_refused_and_nothing_is_deleted(tmp_path):
    """Deletion: a non-empty folder that is not a report folder is refused; every file stays."""
    out = tmp_path / "mine"
    for rel in ("notes.txt", "tables/keep.csv", "plots/keep.png", ".staging-keep/x", "tables/sub/y"):
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text(rel)
    before = _files(out)
    code, _, err = run_cli("report", _definition(tmp_path), "--out", out)
    assert_one_line_error(code, err, str(out), "not a report folder")
    assert _files(out) == before


def test_a_rebuild_replaces_only_files_the_report_wrote(tmp_path):
    """Deletion: files of a dropped cell go, a user's file and folder in tables/ stay."""
    out = tmp_path / "out"
    build(load_report(_definition(tmp_path)), out=out, progress=False)
    (out / "tables" / "mine.csv").write_text("mine")
    (out / "tables" / "sub").mkdir()
    one_cell = TWO_CELLS[:TWO_CELLS.index("[[cells]]\nkind = \"sweep\"")]
    build(load_report(_definition(tmp_path, one_cell)), out=out, progress=False)
    assert (out / "tables" / "mine.csv").read_text() == "mine" and (out / "tables" / "sub").is_dir()
    assert not (out / "tables" / "names.csv").exists() and not (out / "plots" / "names.png").exists()
    assert (out / "tables" / "charge.csv").exists()
    assert "tables/charge.csv" in json.loads((out / MANIFEST).read_text())["files"]


def test_a_point_that_does_not_verify_is_recomputed_with_one_line(tmp_path, capsys):
    """Checksum: an edited point, or one replaced by null, [] or a bare hash, is recomputed."""
    definition = _definition(tmp_path)
    out = tmp_path / "out"
    build(load_report(definition), out=out, progress=False)
    reference = (out / "report.json").read_bytes()
    report = load_report(definition)
    specs = report.all_points()
    first = point_file(out, specs[0])
    edited = json.loads(first.read_text())
    edited["trials"] += 1  # still valid JSON, still the right spec hash
    first.write_text(json.dumps(edited))
    for spec, junk in zip(specs[1:], ("null", "[]", json.dumps(edited["spec_hash"]))):
        point_file(out, spec).write_text(junk)
    capsys.readouterr()
    build(report, out=out, progress=False)
    notes = [line for line in capsys.readouterr().err.splitlines() if "does not verify" in line]
    assert len(notes) == 4
    assert (out / "report.json").read_bytes() == reference


def test_a_second_run_on_a_locked_folder_exits_2(tmp_path):
    """Lock: while one run holds the output folder, another exits 2 with one line."""
    definition = _definition(tmp_path)
    out = tmp_path / "out"
    build(load_report(definition), out=out, progress=False)
    with open(out / LOCK, "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        code, _, err = run_cli("report", definition, "--out", out)
    assert_one_line_error(code, err, "another run is writing this report folder")


def test_output_paths_are_checked_before_anything_is_computed(tmp_path):
    """A folder where a table goes, or --out under a file: one line, and no point computed."""
    definition = _definition(tmp_path)
    out = tmp_path / "out"
    (out / "tables" / "charge.csv").mkdir(parents=True)
    (out / MANIFEST).write_text(json.dumps({"files": []}))
    code, _, err = run_cli("report", definition, "--out", out)
    assert_one_line_error(code, err, "charge.csv", "not written by this report")
    assert not (out / "cells").exists()
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    for bad in (blocker / "out", tmp_path / ("x" * 5000)):
        code, _, err = run_cli("report", definition, "--out", bad)
        assert_one_line_error(code, err, "cannot write to the output folder")


@pytest.mark.parametrize("options,field", [
    ("{ threads = 0 }", "options.threads"), ('{ engine = "fast" }', "options.engine"),
    ("{ precision = 60.0 }", "options.precision"), ("{ chunk_trials = 1.5 }", "options.chunk_trials"),
])
def test_cell_options_are_checked_when_the_definition_is_read(tmp_path, options, field):
    """A bad option value is reported by load_report, before any cell runs."""
    text = TWO_CELLS.replace('name = "charge"', f'name = "charge"\noptions = {options}')
    with pytest.raises(UserError, match=rf"cells\[0\]\.{field}"):
        load_report(_definition(tmp_path, text))


def test_a_bad_plot_path_is_refused_before_computing(tmp_path):
    """decisions --plot: a missing folder or an unknown suffix is a usage error, before the run."""
    scenario = Path("analysis/scenarios/t9a/single_charge_9in.toml")
    for plot in (tmp_path / "no" / "x.png", tmp_path / "x.txt", tmp_path / ("x" * 5000 + ".png"),
                 tmp_path / ("x" * 5000) / "a.png"):
        code, out, err = run_cli("sweep", scenario, "chargers[0].distance", "7", "--plot", plot, "-n", "4096")
        assert_one_line_error(code, err, "--plot")
        assert out == ""


def test_a_folder_an_older_version_wrote_is_adopted_but_only_for_its_report_paths(tmp_path):
    """Deletion: a pre-manifest report folder is rebuilt; files at paths the report does not
    write (a user's table) are kept and not adopted."""
    out = tmp_path / "old"
    for rel in ("index.html", "report.json", "cells/charge/result.json", "tables/charge.csv", "tables/mine.csv"):
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text(rel)
    build(load_report(_definition(tmp_path)), out=out, progress=False)
    assert (out / "tables" / "mine.csv").read_text() == "tables/mine.csv"
    assert (out / "tables" / "charge.csv").read_text() != "tables/charge.csv"
    assert "tables/mine.csv" not in json.loads((out / MANIFEST).read_text())["files"]


# -- issue 33 §1: a report folder never reaches outside itself -----------------------------------
@pytest.mark.parametrize("entry", ["ABSOLUTE", "tables/../../victim.txt", "../victim.txt", "./../victim.txt",
                                   "notes.txt", "cells", "tables/charge.csv/../../../victim.txt"])
def test_a_crafted_manifest_deletes_nothing(tmp_path, entry):
    """Deletion (issue 33 §1): a folder holding nothing but a manifest that lists a file outside it
    (absolute, through ``..``) or a file the report never writes: exit 2 with one line naming the
    entry; nothing inside or outside the folder is created, changed or deleted."""
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    out = tmp_path / "shared-report"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    (out / "cells").mkdir()
    entry = str(victim) if entry == "ABSOLUTE" else entry
    (out / MANIFEST).write_text(json.dumps({"files": ["report.json", entry]}))
    definition = _definition(tmp_path)
    before = _tree(tmp_path, definition.parent)
    code, _, err = run_cli("report", definition, "--out", out)
    assert_one_line_error(code, err, MANIFEST, "files[1]", entry[-12:])
    assert _tree(tmp_path, definition.parent) == before


@pytest.mark.parametrize("folder", ["plots", "tables", "cells", "cells/charge-"])
def test_a_linked_sub_folder_is_refused_and_nothing_lands_outside(tmp_path, folder):
    """Containment (issue 33 §1): plots/, tables/, cells/ or a cell's folder of points replaced by a
    link to another folder: exit 2 with one line naming it; nothing is written there."""
    definition = _definition(tmp_path)
    out = tmp_path / "out"
    build(load_report(definition), out=out, progress=False)
    if folder.endswith("-"):  # the cell's folder of stored points (a derived name)
        folder = next(p for p in (out / "cells").iterdir() if p.name.startswith(folder[6:])).relative_to(out)
    elsewhere = tmp_path / "elsewhere"
    (out / folder).rename(elsewhere)
    for stored in elsewhere.rglob("*.json"):
        stored.unlink()  # so that the points would be computed and written again
    (out / folder).symlink_to(elsewhere, target_is_directory=True)
    before = _tree(tmp_path, out)
    code, _, err = run_cli("report", definition, "--out", out)
    assert_one_line_error(code, err, str(folder), "link")
    assert _tree(tmp_path, out) == before


def test_a_linked_lock_file_creates_nothing_outside(tmp_path):
    """Containment (issue 33 §1): the lock file replaced by a link to a file that does not exist
    (a run would create it): exit 2 with one line; nothing is created outside the folder."""
    definition = _definition(tmp_path)
    out = tmp_path / "out"
    build(load_report(definition), out=out, progress=False)
    (out / LOCK).unlink()
    (out / LOCK).symlink_to(tmp_path / "planted")
    before = _tree(tmp_path, out)
    code, _, err = run_cli("report", definition, "--out", out)
    assert_one_line_error(code, err, LOCK, "link")
    assert _tree(tmp_path, out) == before


BAD_MATHTEXT = r"$\undefinedmacro{$"


def test_user_text_in_plots_is_drawn_literally(tmp_path):
    """Plot markup (issue 33 §1): a title and names holding ``$…$`` that is not valid mathtext are
    drawn as written: ``--plot`` of a scenario and of a sweep, and a report with such a cell title,
    write their plots (a report its page too)."""
    scenario = tmp_path / "dollars.toml"
    scenario.write_text((SCENARIOS_DIR / "t9a" / "single_charge_9in.toml").read_text()
                        .replace("Infantry charge at 9 inches", BAD_MATHTEXT.replace("\\", "\\\\"))
                        .replace('"Swordsmen"', '"$x^$"'))
    for args in (["t9a", scenario, "-n", "4096"], ["sweep", scenario, "chargers[0].distance", "7", "9", "-n", "4096"]):
        plot = tmp_path / f"{args[0]}.png"
        code, out, err = run_cli(*args, "--plot", plot)
        assert code == 0 and plot.stat().st_size > 0, err
    text = TWO_CELLS.replace('name = "charge"', f'name = "charge"\ntitle = \'{BAD_MATHTEXT}\'')
    out = tmp_path / "out"
    code, _, err = run_cli("report", _definition(tmp_path, text), "--out", out)
    assert code == 0, err
    assert (out / "plots" / "charge.png").is_file() and BAD_MATHTEXT in (out / "index.html").read_text()


def test_a_plot_that_cannot_be_drawn_never_blocks_the_tables_or_the_page(tmp_path, monkeypatch):
    """A plot that fails all the same (issue 33 §1): the report writes its tables and its page
    without that plot, with one line saying so; ``--plot`` prints the result, then one line, exit 2."""
    import wargame_odds.analysis.output.plots as plots

    # the module: the package exports a function of that name
    report_build = importlib.import_module("wargame_odds.analysis.reports.build")

    def broken(*args, **kwargs):
        raise ValueError("cannot draw this")

    monkeypatch.setattr(report_build, "outcome_figure", broken)
    monkeypatch.setattr(plots, "outcome_figure", broken)
    out = tmp_path / "out"
    code, _, err = run_cli("report", _definition(tmp_path, TWO_CELLS), "--out", out)
    assert code == 0, err
    assert [line for line in err.splitlines() if "charge.png" in line] == [
        "note: plots/charge.png: cannot draw the plot (ValueError: cannot draw this); the page and tables "
        "are written without it"]
    assert (out / "index.html").is_file() and (out / "tables" / "charge.csv").is_file()
    assert not (out / "plots" / "charge.png").exists() and (out / "plots" / "names.png").is_file()
    plot = tmp_path / "x.png"
    code, printed, err = run_cli("t9a", SCENARIOS_DIR / "t9a" / "single_charge_9in.toml", "-n", "4096", "--plot", plot)
    assert_one_line_error(code, err, "x.png", "cannot draw the plot")
    assert "Swordsmen" in printed and not plot.exists()
