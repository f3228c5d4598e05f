"""list-search on the Epic kernel: stories A (dry run) and B, identical JSON, bad input as one line (exit 2)."""
import json

import numpy as np
import pytest

from decisions_cli import one_error_line, run
from wargame_odds.analysis.decisions import api
from wargame_odds.analysis.decisions import list_search_core as ls

STORY_A = "epic/decisions/list_search_tournament"
STORY_B = "epic/decisions/list_search_two_choices"
OPPONENTS = [{"force": "netea:ork-war-horde/warband", "weight": 3},
             {"force": "netea:ork-war-horde/kommando-warhorde", "weight": 1}]


def without_run(text: str) -> dict:
    data = json.loads(text)
    data.pop("run")
    return data


def test_story_b_names_the_better_and_prints_the_guarantee():
    out = run("list-search", STORY_B, "--seed", 3)
    assert out.exit_code == 0, out.output
    assert "If one choice is at least 2 points better than every other, this search names it first at least " \
           "95 % of the time" in out.output
    assert "P(#1 is best)" not in out.output and "#1 − #2" in out.output
    data = json.loads(run("list-search", STORY_B, "--seed", 3, "--json").stdout)
    ranking = data["ranking"]
    assert [r["status"] for r in ranking][0] == "best" and len(ranking) == 2
    assert {r["candidate"] for r in ranking} == {"Tactical + Captain", "Assault + 2 Vindicators"}
    assert {r["points"] for r in ranking} == {325, 250}
    assert data["guarantee"]["met"] and data["race"]["naive_trials"] > 0
    assert set(ranking[0]) >= {"rank", "candidate", "formation", "upgrades", "points", "score", "ci95_lo", "ci95_hi",
                               "per_100_points", "behind_best", "behind_lo", "behind_hi", "status",
                               "trials_per_opponent"}


def test_same_seed_same_json_with_threads_and_reversed_candidates():
    a = without_run(run("list-search", STORY_B, "--seed", 5, "--json", "--threads", 1).stdout)
    b = without_run(run("list-search", STORY_B, "--seed", 5, "--json", "--threads", 2).stdout)
    assert a == b
    c = json.loads(ls.list_search(STORY_B, seed=5, reverse=True).to_json())
    c.pop("run")
    assert a == c


def test_budget_stop_prints_no_guarantee():
    data = json.loads(run("list-search", STORY_B, "--seed", 1, "--json", "--indifference", 0.01,
                          "--max-trials", 12_000).stdout)
    assert not data["guarantee"]["met"]
    assert data["guarantee"]["statement"].startswith("not resolved: 2 candidates within ")
    assert {r["status"] for r in data["ranking"]} == {"racing"}


def test_dry_run_of_story_a_counts_without_trials():
    out = run("list-search", STORY_A, "--dry-run", "--json")
    assert out.exit_code == 0, out.output
    plan = json.loads(out.stdout)
    assert 1000 < plan["candidates"] <= ls.MAX_CANDIDATES and plan["opponents"] == 6
    assert plan["per_formation"]["tactical"] > 100
    assert "Tactical + Captain + 2 Dreadnoughts + Hunter (500 pts)" in plan["names"]
    assert any("never assault" in n for n in plan["notes"])
    text = run("list-search", STORY_A, "--dry-run").output
    assert text.startswith(f"{plan['candidates']} candidates × 6 opponents")


def test_layout_slots_match_the_result_paths():
    system, base = api._matchup_system(None)
    d = ls.ListSearchDefinition.model_validate({"candidates": ["netea:space-marine-codex-astartes/assault"],
                                                "opponents": OPPONENTS})
    force = system.force(d.candidates[0], "attacker")
    opps = [system.force(o["force"], "defender") for o in OPPONENTS]
    for objective, paths in (("win", [("sides", "attacker_wins")]),
                             ("break", [("formations", "Warband", "broken_after_end_phase"),
                                        ("formations", "Warband", "destroyed")])):
        ev = ls.KernelEvaluator(system, [force], opps, ["attacker", "attacker"], base, 0, None, objective)
        job, slots = ev._job(0, 0)
        model = api._pair(system, "attacker", force, opps[0], base)
        probed = [api._slot(system, model, job, p, job.compiled.layout.size, "kernel") for p in paths]
        assert slots == probed


def test_break_objective_runs():
    res = ls.list_search({"candidates": ["netea:space-marine-codex-astartes/assault",
                                         "netea:space-marine-codex-astartes/terminator"],
                          "opponents": OPPONENTS, "objective": "break", "indifference": 3}, seed=2)
    assert res.guarantee["met"] and res.frame.status.iloc[0] == "best"
    assert 0 <= res.frame.score.iloc[0] <= 100 and np.isfinite(res.frame.ci95_lo.iloc[0])


def test_export_candidates_writes_force_files(tmp_path):
    out = run("list-search", STORY_B, "--export-candidates", tmp_path / "forces")
    assert out.exit_code == 0, out.output
    files = sorted((tmp_path / "forces").glob("*.toml"))
    assert len(files) == 2
    rank_def = tmp_path / "rank.toml"
    rank_def.write_text("options = [" + ", ".join(f'"{f}"' for f in files) + "]\n"
                        "[[opponents]]\nforce = \"netea:ork-war-horde/warband\"\n", encoding="utf-8")
    out = run("rank", rank_def, "-n", 512, "--json")
    assert out.exit_code == 0, out.output


@pytest.mark.parametrize("change, needles", [
    ({"indifference": 0}, ("indifference", "positive")),
    ({"indifference": -1}, ("indifference",)),
    ({"confidence": 50}, ("confidence", "between 50 and 100")),
    ({"confidence": 100}, ("confidence",)),
    ({"opponents": [{"force": "netea:ork-war-horde/warband", "weight": 0}]}, ("weight", "positive")),
    ({"opponents": [{"force": "netea:ork-war-horde/warband", "weight": -2}]}, ("weight",)),
    ({"opponents": [{"force": "netea:ork-war-horde/warband", "weight": "inf"}]}, ("weight",)),
    ({"army": "netea:nope", "candidates": None}, ("unknown army list",)),
    ({"army": "netea:space-marine-codex-astartes", "formations": ["Nope"], "candidates": None},
     ("formations: unknown",)),
    ({"army": "netea:space-marine-codex-astartes", "upgrades": ["Nope"], "candidates": None},
     ("upgrades: unknown",)),
    ({"army": "netea:space-marine-codex-astartes", "max_points": 100, "candidates": None}, ("no candidate left",)),
])
def test_bad_input_is_one_line(tmp_path, change, needles):
    data = {"candidates": ["netea:space-marine-codex-astartes/assault"], "opponents": OPPONENTS} | change
    data = {k: v for k, v in data.items() if v is not None}
    path = tmp_path / "d.toml"
    path.write_text(_toml(data), encoding="utf-8")
    one_error_line(run("list-search", path), *needles)


def test_caps_on_candidates_and_matchups(tmp_path, monkeypatch):
    monkeypatch.setattr(ls, "MAX_CANDIDATES", 100)
    path = tmp_path / "d.toml"
    path.write_text(_toml({"army": "netea:space-marine-codex-astartes", "max_points": 600, "caps": {"Razorbacks": 3},
                           "opponents": OPPONENTS}), encoding="utf-8")
    one_error_line(run("list-search", path, "--dry-run"), "candidates", "at most 100", "max_points")
    monkeypatch.setattr(ls, "MAX_CANDIDATES", 5000)
    monkeypatch.setattr(ls, "MAX_MATCHUPS", 1000)
    one_error_line(run("list-search", path, "--dry-run"), "matchups")


def _toml(data: dict) -> str:
    from wargame_odds.analysis.reports.definition import to_toml

    opps = data.pop("opponents")
    text = to_toml({k: (float(v) if v == "inf" else v) for k, v in data.items()})
    for o in opps:
        w = o["weight"]
        text += f"[[opponents]]\nforce = \"{o['force']}\"\nweight = {'inf' if w == 'inf' else w}\n"
    return text


def test_pareto_reweight_plot_and_the_candidate_table():
    res = ls.list_search({"candidates": ["netea:space-marine-codex-astartes/assault",
                                         "netea:space-marine-codex-astartes/terminator",
                                         "netea:space-marine-codex-astartes/tactical"],
                          "opponents": OPPONENTS}, seed=4)
    front = res.pareto()
    assert list(front.points) == sorted(front.points) and front.score.is_monotonic_increasing
    f = res.frame
    for r in f.itertuples():  # nothing off the front beats a front member on both counts
        assert not ((f.points <= r.points) & (f.score > r.score)).any() or r.candidate not in set(front.candidate)
    assert json.loads(res.to_json())["pareto"] == list(front.candidate)
    same = res.reweight([3, 1])  # the race's own weights: the confirmed scores come back (from the same counts)
    best = f[f.status == "best"].candidate.iloc[0]
    assert same.frame.set_index("candidate").score[best] == pytest.approx(f.set_index("candidate").score[best])
    assert not same.guarantee["met"]
    other = res.reweight({o: w for o, w in zip(res.opponents, [1, 9])})
    assert list(other.frame["rank"]) == [1, 2, 3]
    with pytest.raises(Exception, match="positive finite"):
        res.reweight([1, 0])
    fig = res.plot()
    assert len(fig.axes) == 2
    table = ls.enumerate_detachments("netea:space-marine-codex-astartes", max_points=300,
                                     formations=["Assault", "Tactical"])
    assert list(table.columns) == ["candidate", "formation", "upgrades", "points"]
    assert (table.points <= 300).all() and "Assault + Captain (225 pts)" in set(table.candidate)


def test_add_to_keeps_the_army_limits_and_prices_the_candidate_alone():
    data = json.loads(run("list-search", STORY_A, "--add-to", "Tactical + Supreme Commander", "--points-left", 150,
                          "--dry-run", "--json").stdout)
    assert data["candidates"] > 0 and not any("Supreme Commander" in n for n in data["names"])
    assert all(int(n.rsplit("(", 1)[1].split()[0]) <= 150 for n in data["names"])
    assert any("assaults beside Tactical + Supreme Commander (375 pts)" in n for n in data["notes"])
    one_error_line(run("list-search", STORY_A, "--add-to", "Tactical + Nope", "--points-left", 150, "--dry-run"),
                   "add_to", "'Nope' is no upgrade option of Tactical")
    one_error_line(run("list-search", STORY_A, "--add-to", "Tactical", "--dry-run"), "points_left")
    res = ls.list_search(STORY_A, seed=2, add_to="Tactical + Captain", points_left=150,
                         formations=["Assault", "Scout"])
    force = res.force(res.frame.candidate.iloc[0])
    assert [f["points"] for f in force["formations"]] == [325, res.frame.points.iloc[0]]
    best = res.frame.iloc[0]  # issue 37 §3: the paired gain of the addition over the detachment alone
    assert best.gain_lo < best.gain_over_base < best.gain_hi
    alone = res.enumeration["base_alone_score"]
    assert 0 <= alone <= 100 and res.enumeration["add_to"] == "Tactical + Captain"
    assert any(s.startswith(f"Added to Tactical + Captain: {best.candidate} gains ") for s in res.sentences)
    assert json.loads(res.to_json())["ranking"][0]["gain_over_base"] == pytest.approx(best.gain_over_base)


def test_pairing_on_the_kernel_shrinks_the_variance_of_close_candidates():
    """Two close candidates on the same dice (stream key without the candidate) against on their own dice."""
    system, base = api._matchup_system(None)
    forces = [ls._resolved(system.force({"formations": [{"library": "netea:space-marine-codex-astartes/tactical",
                                                          "upgrades": {"Commander": who}}]}, "attacker"), [])
              for who in ("Captain", "Chaplain")]
    opponent = ls._resolved(system.force("netea:ork-war-horde/warband", "defender"), [])
    ev = ls.KernelEvaluator(system, forces, [opponent], ["attacker"], base, 0, None)
    paired = [np.diff(ev(np.arange(2), (2, b), 128)[:, 0])[0] for b in range(60)]
    apart = [ev(np.array([1]), (2, b, 2), 128)[0, 0] - ev(np.array([0]), (2, b, 1), 128)[0, 0] for b in range(60)]
    assert np.var(apart, ddof=1) / np.var(paired, ddof=1) > 1.5


def test_csv_is_the_ranking_with_spreadsheet_safe_text(tmp_path):
    out = run("list-search", STORY_B, "--csv")
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert lines[0] == ",".join(["rank", "candidate", "formation", "upgrades", "points", "score", "ci95_lo", "ci95_hi",
                                 "per_100_points", "behind_best", "behind_lo", "behind_hi", "status",
                                 "trials_per_opponent"])
    assert len(lines) == 3
    forced = tmp_path / "f.toml"
    forced.write_text('[[candidates]]\nname = "=HYPERLINK(1)"\n[[candidates.formations]]\n'
                      'library = "netea:space-marine-codex-astartes/assault"\n[[opponents]]\n'
                      'force = "netea:ork-war-horde/warband"\n', encoding="utf-8")
    out = run("list-search", forced, "--csv")
    assert out.exit_code == 0, out.output
    assert "'=HYPERLINK(1)" in out.output


def test_caps_of_unbounded_upgrades_are_bounded(tmp_path):
    path = tmp_path / "d.toml"
    path.write_text(_toml({"army": "netea:space-marine-codex-astartes", "caps": {"Razorbacks": 1_000_000},
                           "opponents": OPPONENTS}), encoding="utf-8")
    one_error_line(run("list-search", path, "--dry-run"), "caps", "20")
