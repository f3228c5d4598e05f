"""Building a report: files, intervals, resume after a kill, reproducibility."""
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

from wargame_odds.analysis.output.labels import percent
from wargame_odds.analysis.reports import build, load_report
from wargame_odds.analysis.reports.build import point_file


def test_every_table_has_csv_and_parquet_with_intervals(local_build, small_definition):
    report = load_report(small_definition)
    for cell in report.cells:
        tables = [(cell.name, "difference"), (cell.name, "p_a"), (cell.name, "p_b")] if cell.kind == "compare" else \
            [(cell.name, "estimate"), (f"{cell.name}-distributions", "p")]
        for stem, estimate in tables:
            csv = pd.read_csv(local_build / "tables" / f"{stem}.csv", keep_default_na=False)
            parquet = pd.read_parquet(local_build / "tables" / f"{stem}.parquet")
            assert len(csv) == len(parquet) > 0
            assert {estimate, "ci95_lo", "ci95_hi"} <= set(parquet.columns)
            lo, hi = ("ci95_lo", "ci95_hi") if estimate in ("estimate", "p", "difference") else \
                (f"{estimate}_lo", f"{estimate}_hi")
            assert (parquet[lo] <= parquet[estimate] + 1e-12).all()
            assert (parquet[estimate] <= parquet[hi] + 1e-12).all()
            assert list(csv.columns) == list(parquet.columns)
        assert (local_build / "plots" / f"{cell.name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    sweep = pd.read_parquet(local_build / "tables" / "t9a-distance.parquet")
    assert sorted(set(zip(sweep["chargers[Swordsmen].distance"], sweep["rules.dice"]))) == [
        (7.0, "2d6"), (7.0, "swiftstride"), (9.0, "2d6"), (9.0, "swiftstride")]


def test_report_json_and_page_carry_seed_trials_and_versions(local_build):
    facts = json.loads((local_build / "report.json").read_text())
    assert facts["seed"] == 11
    assert facts["total_trials"] == 3 * 4096 + 2 * 20000 + 4 * 20000 + 2 * 20000 + 2 * 2 * 122880
    assert {"python", "wargame-odds", "numpy", "numba", "dask"} <= set(facts["versions"])
    page = (local_build / "index.html").read_text()
    assert "seed <b>11</b>" in page and "663,808 trials in all" in page
    assert facts["versions"]["numba"] in page
    first = facts["cells"][1]["points"][0]["result"]["sides"]["attacker_wins"]
    assert percent(first["p"], *first["ci95"]) in page


def test_stored_cells_equal_direct_simulation(local_build):
    """A report cell is the system's own simulate() with the seed and the documented streams."""
    import wargame_odds.analysis.epic as epic
    from wargame_odds.analysis.reports import cell_key

    direct = epic.simulate(epic.load("analysis/scenarios/epic/terminators_vs_guard_in_cover.toml"),
                           trials=20000, seed=11, cell=(cell_key("epic-terminators"),))
    stored = pd.read_parquet(local_build / "tables" / "epic-terminators.parquet")
    pd.testing.assert_frame_equal(stored, direct.table(), check_exact=True)
    import wargame_odds.analysis.t9a as t9a

    # grid point 2 (distance 9.0, 2d6) is the shipped scenario unchanged
    point = t9a.simulate(t9a.load("analysis/scenarios/t9a/single_charge_9in.toml"), trials=20000, seed=11,
                         cell=(cell_key("t9a-distance"), 2))
    sweep = pd.read_parquet(local_build / "tables" / "t9a-distance.parquet")
    sweep = sweep[sweep["point"] == "002-distance=9.0-dice=2d6"].iloc[:, 3:].reset_index(drop=True)
    pd.testing.assert_frame_equal(sweep, point.table(), check_exact=True)


def test_matrix_cells_equal_analysis_decisions_matrix(local_build):
    from wargame_odds.analysis import decisions
    from wargame_odds.analysis.reports import cell_key

    matrix = decisions.matrix(["netea:space-marine-codex-astartes/tactical"],
                              ["netea:ork-war-horde/warband", "netea:ork-war-horde/kommando-warhorde"],
                              base="analysis/scenarios/epic/assault_marines_vs_warband.toml", trials=20000, seed=11,
                              cell=(cell_key("epic-matrix"),))
    stored = pd.read_parquet(local_build / "tables" / "epic-matrix.parquet")
    for j in range(2):
        cell = stored[stored["point"].str.startswith(f"00-{j:02d}-")].iloc[:, 3:].reset_index(drop=True)
        pd.testing.assert_frame_equal(cell, matrix.cells[(0, j)].table(), check_exact=True)


def test_compare_cell_equals_analysis_decisions_compare(local_build):
    from wargame_odds.analysis import decisions
    from wargame_odds.analysis.reports import cell_key

    direct = decisions.compare("netea:space-marine-codex-astartes/assault",
                               "netea:space-marine-codex-astartes/tactical",
                               ["netea:ork-war-horde/warband", "netea:ork-war-horde/kommando-warhorde"], weights=[3, 1],
                               base="analysis/scenarios/epic/assault_marines_vs_warband.toml", trials=122880, seed=11,
                               cell=(cell_key("epic-compare"),))
    stored = pd.read_parquet(local_build / "tables" / "epic-compare.parquet")
    pd.testing.assert_frame_equal(stored, direct.table(), check_exact=True)
    assert not (local_build / "tables" / "epic-compare-distributions.csv").exists()
    page = (local_build / "index.html").read_text()
    meta = direct.table().iloc[-1]
    assert meta.opponent == "meta (weighted)"
    for est, lo, hi in ((meta.difference, meta.ci95_lo, meta.ci95_hi), (meta.p_a, meta.p_a_lo, meta.p_a_hi),
                        (meta.difference, meta.independent_ci95_lo, meta.independent_ci95_hi)):
        assert percent(est, lo, hi) in page
    assert '<img src="plots/epic-compare.png"' in page


def test_killed_run_resumes_to_the_same_files(local_build, small_definition, tmp_path, data_files):
    """A run killed mid-way and started again keeps its stored cells and ends with every data file
    byte-identical to the uninterrupted build: every cell of the new folder is computed afresh, in the
    killed process or the resumed one, so this also shows that the same seed reproduces every file
    (it replaces a separate full rebuild, which repeated a whole report build)."""
    out = tmp_path / "killed"
    command = [sys.executable, "-c", "from wargame_odds.analysis.cli import main; main()", "report",
               str(small_definition),
               "--out", str(out)]
    total = len(load_report(small_definition).all_points())
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while not list(out.glob("cells/*/*.json")):
        assert proc.poll() is None, proc.stderr.read().decode()
        assert time.monotonic() < deadline
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    stored = list(out.glob("cells/*/*.json"))
    assert 1 <= len(stored) < total, "the run was not interrupted mid-way"
    assert not (out / "index.html").exists()
    before = {p: p.read_bytes() for p in stored}
    proc = subprocess.run(command, capture_output=True, timeout=180)
    assert proc.returncode == 0, proc.stderr.decode()
    assert all(p.read_bytes() == data for p, data in before.items()), "a stored cell was recomputed"
    assert data_files(out) == data_files(local_build)
    assert (out / "index.html").exists()


def test_a_report_with_every_point_stored_writes_its_output_with_the_collector_on(local_build, small_definition,
                                                                                  tmp_path):
    """Run as the program, the collector is paused at start-up until the first chunk of trials
    (wargame_odds.analysis.run.gc_pause); a report whose points are all stored runs none, so it turns the collector back
    on as it starts writing its tables and plots (which build cyclic garbage)."""
    import gc
    import shutil

    from wargame_odds.analysis.run import gc_pause

    out = tmp_path / "stored"
    shutil.copytree(local_build, out)
    gc_pause.pause()
    try:
        build(load_report(small_definition), out=out, progress=False)
        assert gc.isenabled()
    finally:
        gc_pause.resume()
        gc.unfreeze()
        gc.enable()


def test_a_changed_cell_is_recomputed_and_the_others_reused(local_build, small_definition, tmp_path):
    import shutil

    out = tmp_path / "changed"
    shutil.copytree(local_build, out)
    changed = tmp_path / "small.toml"
    text = small_definition.read_text()
    changed.write_text(text.replace('scenario = "gdb/cavalry_vs_square"\n',
                                    'scenario = "gdb/cavalry_vs_square"\ntrials = 8192\n'))
    before = {p.relative_to(out): p.read_bytes() for p in out.glob("cells/*/*.json")}
    build(load_report(changed), out=out, progress=False)
    after = {p.relative_to(out): p.read_bytes() for p in out.glob("cells/*/*.json")}
    square = point_file(Path(), {"cell": "gdb-square", "point": "result"})
    assert {p for p in before if before[p] != after[p]} == {square}
    assert json.loads(after[square])["trials"] == 8192


def test_a_stored_point_is_not_reused_after_the_code_changes(tmp_path, monkeypatch):
    """docs/reports.md "Resuming": a point's fingerprint covers the code and rule data that make the
    numbers, so numbers stored by an older engine under the same package version are recomputed:
    the digest changes with any file of analysis/ or kernels/, and the fingerprint with the digest."""
    from wargame_odds.analysis.output import result
    from wargame_odds.analysis.reports.definition import spec_hash

    for package in ("analysis", "kernels"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "rules.py").write_text("P = 1\n")
    before = result.code_digest.__wrapped__(tmp_path)
    (tmp_path / "kernels" / "rules.py").write_text("P = 2\n")
    assert result.code_digest.__wrapped__(tmp_path) != before
    spec = {"cell": "gdb-square", "point": "result", "trials": 4096}
    stored = spec_hash(spec)
    monkeypatch.setattr(result, "code_digest", lambda: "another engine")
    assert spec_hash(spec) != stored
