"""The speed guard (benchmarks/guard.py, issue 39): its matrix and baseline agree, its verdicts follow its rule, and
its short form runs: a few shapes at a tiny scale through the real timing worker, each giving a figure and a ratio
to the baseline.  Speed is never a failure here: a shape slower than its baseline gives a warning."""
from __future__ import annotations

import json
import math
import sys
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import guard  # noqa: E402  (benchmarks/ is not a package)

#: Cheap shapes of three systems whose kernels the suite compiles anyway.
SHORT = ["assault plain", "t9a charge", "gdb charge"]


def test_every_shape_has_a_scenario_and_a_baseline():
    shapes = guard.load_shapes()
    names = [shape["name"] for shape in shapes]
    assert len(names) == len(set(names))
    baseline = json.loads(guard.BASELINE.read_text())
    assert set(baseline["shapes"]) == set(names)
    for shape in shapes:
        assert (ROOT / shape["scenario"]).is_file(), shape["scenario"]
        assert 0 < shape["small"] < shape["large"]
        assert shape["system"] in {"epic", "t9a", "gdb"}


def test_unknown_shape_is_one_line():
    with pytest.raises(SystemExit, match="unknown shape 'nope'"):
        guard.load_shapes(["nope"])


def test_a_shape_is_flagged_only_beyond_the_noise():
    figures = {"slower": [[0.80, 1.0], [0.85, 1.0], [0.82, 1.0]],  # every pair below 1, median 0.82: flagged
               "noisy": [[0.80, 1.0], [1.05, 1.0], [0.85, 1.0]],  # median 0.85 but one pair above 1: noise
               "within": [[0.95, 1.0], [0.93, 1.0], [0.97, 1.0]],  # within 10 %
               "faster": [[1.30, 1.0], [1.20, 1.0], [1.25, 1.0]],
               "ref cannot run it": [[1.0, None], [1.0, None], [1.0, None]]}
    rows, flagged = guard.summarise(figures, 0.10, None)
    assert flagged == ["slower"]
    by_name = {row["shape"]: row for row in rows}
    assert by_name["slower"]["ratio"] == pytest.approx(0.82)
    assert (by_name["noisy"]["low"], by_name["noisy"]["high"]) == pytest.approx((0.80, 1.05))
    assert "ratio" not in by_name["ref cannot run it"]
    assert "SLOWER" in guard.report(rows, flagged, ["new", "old"], 0.10)


def test_against_the_baseline_one_column():
    rows, flagged = guard.summarise({"a": [[0.5]], "b": [[2.0]]}, 0.10, {"a": 1.0, "b": 1.0})
    assert flagged == ["a"] and [row["ratio"] for row in rows] == [0.5, 2.0]


def test_bad_arguments_exit_2(capsys):
    assert guard.main(["--scale", "0"]) == 2
    assert "--scale" in capsys.readouterr().err


def test_short_form_runs_and_gives_ratios(tmp_path, capsys):
    """The matrix's short form: three shapes at 1/100 of their trials in a worker process of this checkout."""
    out = tmp_path / "guard.json"
    assert guard.main(["--scale", "0.01", "--json", str(out)] + [f"--shape={name}" for name in SHORT]) == 0
    result = json.loads(out.read_text())
    rows = {row["shape"]: row for row in result["rows"]}
    assert set(rows) == set(SHORT)
    for name in SHORT:
        figure = rows[name]["medians"][0]
        # trials per raw D6; no bound above: at 1/100 of the trials two timings can lie close on a loaded machine
        assert figure is not None and math.isfinite(figure) and figure > 0, (name, figure)
        assert rows[name]["ratio"] > 0
    printed = capsys.readouterr().out
    assert all(name in printed for name in SHORT)
    for name in result["flagged"]:  # a speed verdict at a tiny scale on a shared machine: a warning only
        warnings.warn(f"speed guard (short form): {name} below its baseline beyond the noise", stacklevel=1)


def test_a_compared_commit_is_kept_for_the_next_run_and_a_half_export_is_redone(tmp_path, monkeypatch):
    """``--ref`` exports the commit once into the kept folder (so its Numba cache serves the next comparison);
    a folder without its completion mark (an export cut short) is exported anew, and so is one with ``--fresh``."""
    monkeypatch.setattr(guard, "KEPT", tmp_path)
    folder = guard.kept_folder("HEAD", fresh=False)
    assert folder == tmp_path / guard.full_hash("HEAD")
    assert (folder / "tree" / "benchmarks" / "guard.py").is_file() and (folder / "complete").is_file()
    marker = folder / "tree" / "left-by-this-test"
    marker.touch()
    assert guard.kept_folder("HEAD", fresh=False) == folder and marker.exists()  # reused
    (folder / "complete").unlink()
    guard.kept_folder("HEAD", fresh=False)
    assert not marker.exists() and (folder / "complete").is_file()  # a half export is redone
    marker.touch()
    guard.kept_folder("HEAD", fresh=True)
    assert not marker.exists()


def test_an_unknown_commit_is_one_error_line():
    with pytest.raises(SystemExit, match="names no commit"):
        guard.full_hash("no-such-commit-here")
