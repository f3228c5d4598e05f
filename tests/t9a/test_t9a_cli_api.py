"""Reproducibility, bad input through the CLI, the result API and the trace."""
import json

import numba
import pytest
from click.testing import CliRunner

import wargame_odds.analysis.t9a as t9a
from wargame_odds.analysis.cli import main
from wargame_odds.analysis.intake.errors import UserError
from t9a_helpers import SCENARIOS

ISSUE = SCENARIOS / "three_chargers.toml"


def counts(result):
    return [(path, getattr(leaf, "k", None), getattr(leaf, "value", None),
             list(getattr(leaf, "counts", []))) for path, leaf in result.leaves()]


def test_same_seed_same_numbers_any_threads_or_chunks():
    """Runner contract: the seed alone fixes the numbers (1 vs 2 Numba threads, set by the
    runner through numba.set_num_threads, and several chunk sizes)."""
    assert numba.config.NUMBA_NUM_THREADS >= 2
    model = t9a.load(ISSUE)
    base = t9a.simulate(model, trials=50_000, seed=4, threads=1, chunk_trials=4096)
    for threads, chunk in ((2, 4096), (2, None), (1, 12_288), (2, 40_000)):
        again = t9a.simulate(model, trials=50_000, seed=4, threads=threads, chunk_trials=chunk)
        assert counts(again) == counts(base), (threads, chunk)
    other = t9a.simulate(model, trials=50_000, seed=5)
    assert counts(other) != counts(base)


def test_reference_reproducible_by_seed():
    model = t9a.load(SCENARIOS / "flee_redirect_2022.toml")
    a = t9a.simulate(model, trials=5000, seed=2, engine="reference", chunk_trials=4096)
    b = t9a.simulate(model, trials=5000, seed=2, engine="reference")
    assert counts(a) == counts(b)
    assert t9a.trace(model, seed=3) == t9a.trace(model, seed=3)


def test_issue_scenario_json_shape():
    """Issue §4: JSON keys, 95 % intervals, exact means of failed move and gap."""
    r = t9a.simulate(t9a.load(ISSUE), trials=20_000, seed=0)
    d = json.loads(r.to_json())
    assert d["system"] == "t9a"
    knights = d["chargers"]["Knights"]
    assert set(knights["arrives"]) >= {"p", "ci95"}
    lo, hi = knights["arrives"]["ci95"]
    assert lo <= knights["arrives"]["p"] <= hi
    assert isinstance(knights["failed_move_mean"], float)
    assert isinstance(knights["gap_after_fail_mean"], float)
    assert abs(knights["failed_move_mean"] + knights["gap_after_fail_mean"] - 14.5) < 1e-9
    assert set(d["placements"]) == {"all three on the front", "knights and warriors",
                                    "knights and wolves, target turned", "knights alone", "(none)"}
    assert isinstance(d["models_in_contact_mean"], float)
    fm = knights["failed_move"]
    assert fm["bin_width"] == 0.5 and abs(sum(fm["p"]) - 1) < 1e-9


def test_result_api():
    r = t9a.simulate(t9a.load(ISSUE), trials=8192, seed=0)
    t = r.table()
    assert {"estimate", "ci95_lo", "ci95_hi"} <= set(t.columns) and len(t) > 20
    assert (t.ci95_lo <= t.estimate + 1e-12).all() and (t.estimate <= t.ci95_hi + 1e-12).all()
    assert not r.distributions().empty
    cum = r.cumulative("combat", "models_in_contact")
    assert cum.p.iloc[0] == 1.0
    assert "<table" in r._repr_html_()
    import matplotlib
    matplotlib.use("Agg")
    fig = r.plot()
    assert len(fig.axes[0].lines) >= 3


def test_precision_mode():
    r = t9a.simulate(t9a.load(SCENARIOS / "single_charge_9in.toml"), precision=0.01, seed=1)
    assert r.info.precision_reached and r.info.achieved_half_width <= 0.01


def test_trace_names_clauses():
    text = t9a.trace(t9a.load(SCENARIOS / "stand_and_shoot.toml"), seed=0)
    assert "Q-B7" in text and "§3.2" in text and "§3.3" in text
    text = t9a.trace(t9a.load(ISSUE), seed=0)
    assert "§3.7" in text and "§3.4" in text


def test_cli_runs_and_traces():
    runner = CliRunner()
    res = runner.invoke(main, ["t9a", str(ISSUE), "--trials", "8192", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["trials"] == 8192
    res = runner.invoke(main, ["t9a", str(SCENARIOS / "flee_reaction.toml"), "--trace"])
    assert res.exit_code == 0 and "Q-B8" in res.output
    res = runner.invoke(main, ["t9a-table", "--distances", "9,12", "--advance-rates", "4",
                               "--json"])
    assert res.exit_code == 0
    rows = json.loads(res.stdout)
    assert [r["fraction"] for r in rows] == ["5/6", "5/12"]


BAD = [
    ("negative distance", ISSUE, lambda s: s.replace("distance = 9.0", "distance = -2.0"),
     "chargers[1].distance", ">= 0"),
    ("unknown charger in placement", ISSUE,
     lambda s: s.replace('chargers = ["Knights"]', 'chargers = ["Knigths"]'),
     "placements[3].chargers[0]", "Knights, Warriors, Wolves"),
    ("unknown dice variant", ISSUE, lambda s: s.replace('dice = "swiftstride"', 'dice = "3d6"'),
     "chargers[2].dice", "'2d6'"),
    ("unknown rules dice", ISSUE, lambda s: s.replace('dice = "2d6"  ', 'dice = "d8"  '),
     "rules.dice", "'swiftstride'"),
    ("unknown placement order", ISSUE, lambda s: s.replace('"2.0"      #', '"2021"      #'),
     "rules.placement_order", "'2022'"),
    ("unknown reaction", ISSUE, lambda s: s.replace('reaction = "hold"', 'reaction = "charge"'),
     "target.reaction", "'flee'"),
    ("unknown key", ISSUE, lambda s: s.replace("free_distance = 20", "free_distanse = 20"),
     "chargers[0].free_distanse", None),
    ("stand and shoot without shooting", ISSUE,
     lambda s: s.replace('reaction = "hold"', 'reaction = "stand_and_shoot"'), "target.shooting",
     "shots"),
    ("duplicate charger", ISSUE, lambda s: s.replace('name = "Wolves"', 'name = "Knights"'),
     "chargers[2].name", "no other charger"),
]


@pytest.mark.parametrize("label,path,edit,field,allowed", BAD, ids=[b[0] for b in BAD])
def test_bad_input_one_line_exit_2(tmp_path, label, path, edit, field, allowed):
    """Bad input: one error line naming the file, the field and what is allowed; exit 2."""
    text = edit(path.read_text())
    assert text != path.read_text(), label
    bad = tmp_path / "bad.toml"
    bad.write_text(text)
    res = CliRunner().invoke(main, ["t9a", str(bad), "--trials", "4096"])
    assert res.exit_code == 2, res.output
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1, res.output
    assert "Traceback" not in res.output
    assert str(bad) in lines[0] and f"field '{field}'" in lines[0], lines[0]
    if allowed:
        assert "allowed:" in lines[0] and allowed in lines[0], lines[0]


def test_missing_file_exit_2(tmp_path):
    res = CliRunner().invoke(main, ["t9a", str(tmp_path / "nope.toml")])
    assert res.exit_code == 2 and "file not found" in res.output


def test_charge_table_bad_variant():
    with pytest.raises(UserError, match="unknown dice variant"):
        t9a.charge_table([9], [4], "3d6")
