"""``compare`` on Epic turn scenarios (issue 15 §3): two whole scenarios, paired by common random
numbers, on the Numba kernel or the reference engine (docs/epic-turn.md; docs/decisions.md)."""
import json
import math
from importlib.resources import files
from pathlib import Path

import pytest

import wargame_odds.analysis.epic as epic
from wargame_odds.analysis.decisions import compare
from wargame_odds.analysis.decisions.systems import SYSTEMS
from wargame_odds.analysis.intake.errors import UserError

SCENARIOS = Path(str(files("wargame_odds.analysis").joinpath("scenarios")))
SHOOT_FIRST = SCENARIOS / "epic" / "turns" / "devastators_then_assault_marines.toml"
ENGAGE_NOW = SCENARIOS / "epic" / "turns" / "assault_marines_engage_now.toml"


def test_paired_comparison_of_a_turn_scenario_with_itself_is_exactly_zero():
    """Common random numbers: trial t of both options draws the same dice, so identical turns agree."""
    result = compare(SHOOT_FIRST, SHOOT_FIRST, trials=400, seed=3)
    row = result.table().iloc[0]
    assert row.p_a == row.p_b and row.difference == 0
    assert row.ci95_lo <= 0 <= row.ci95_hi


def test_turn_trial_streams_depend_only_on_the_trial_index():
    """What batch means needs of a turn job: a trial's dice do not depend on its chunk, and two
    identical turn scenarios on the same trial streams give identical counts."""
    model = epic.load(ENGAGE_NOW)
    job = SYSTEMS["epic"].job(model, "reference", trial_streams=True)
    whole = job.run_chunk(5, 6, 0, 4096 + 3)
    assert (whole == job.run_chunk(5, 6, 0, 4096) + job.run_chunk(5, 6, 1, 3)).all()
    assert (whole != SYSTEMS["epic"].job(model, "reference").run_chunk(5, 6, 0, 4096 + 3)).any()


def test_turn_comparison_runs_on_the_kernel_as_exact_pairs():
    """Turn scenarios run on the Numba kernel (docs/epic-turn.md), here as exact pairs, as asked (the default is
    below); each option's P(attacker wins) agrees with an independent reference-engine simulate() of
    that scenario within 5 sigma."""
    trials = 1500
    result = compare(SHOOT_FIRST, ENGAGE_NOW, trials=trials, seed=7, labels=("shoot first", "engage now"),
                     method="exact-pairs")
    assert result.meta["engine"] == "kernel" and result.meta["method"] == "exact-pairs"
    assert result.meta["method_reason"].startswith(("Paired by exact pairs, as asked; pairing gain measured here",
                                                    "Paired by exact pairs, as asked; pairing did not help here"))
    assert result.meta["option_a"] == "shoot first" and result.meta["option_b"] == "engage now"
    row = result.table().iloc[0]
    assert row.opponent == "Warband" and result.trials == trials
    for path, p in ((SHOOT_FIRST, row.p_a), (ENGAGE_NOW, row.p_b)):
        single = epic.simulate(path, trials=trials, seed=99, engine="reference")["sides", "attacker_wins"].p
        assert abs(p - single) < 5 * math.sqrt(2 * single * (1 - single) / trials)
    for lo, est, hi in ((row.p_a_lo, row.p_a, row.p_a_hi), (row.ci95_lo, row.difference, row.ci95_hi)):
        assert lo < est < hi
    assert row.difference == pytest.approx(row.p_a - row.p_b)


def test_shooting_first_raises_the_assault_win_chance():
    """TP 1.9.4 / 1.12.7: the Devastators' Sustained Fire puts blast markers (and kills) on the Boyz
    before the assault, and blast markers count against them in the result; fixed seed, the paired
    interval lies above zero."""
    row = compare(SHOOT_FIRST, ENGAGE_NOW, trials=1500, seed=7, method="exact-pairs").table().iloc[0]
    assert row.ci95_lo > 0


def test_the_default_method_is_the_narrowest_interval_per_second_on_the_engine():
    """Issue 28 §4: both methods pair trial t of A with trial t of B, so the cost of a trial decides: batch means on
    the kernel, exact pairs on the reference engine; the result says which and why in one line (the headline's
    last), with the pairing gain the run measured."""
    from wargame_odds.analysis.decisions.api import default_method
    from wargame_odds.analysis.output.headline import decision_sentences

    kernel = compare(SHOOT_FIRST, ENGAGE_NOW, trials=4096, seed=7)
    assert kernel.meta["method"] == "batch-means" and kernel.trials == 122_880
    assert kernel.meta["method_reason"].startswith("Paired by batch means, because on the kernel")
    ratio = kernel.table().variance_ratio.iloc[0]
    said = f"pairing gain measured here: {ratio:.2f} ×" if ratio > 1 else \
        f"pairing did not help here (the options' results are unrelated: measured gain {ratio:.2f} ×"
    assert said in kernel.meta["method_reason"]
    assert "95 % interval" in kernel.meta["method_reason"]
    assert decision_sentences(kernel)[-1] == kernel.meta["method_reason"]
    assert default_method("reference")[0] == "exact-pairs"
    reference = compare(ENGAGE_NOW, ENGAGE_NOW, trials=64, seed=7, engine="reference")
    assert reference.meta["method"] == "exact-pairs" and reference.trials == 64
    assert "on the reference engine a trial costs the same either way" in reference.meta["method_reason"]


def test_scenario_comparison_bad_input_is_one_clear_error():
    with pytest.raises(UserError, match="labels"):
        compare(SHOOT_FIRST, ENGAGE_NOW, trials=10, labels=("only one",))
    with pytest.raises(UserError, match="no base, weights or plans"):
        compare(SHOOT_FIRST, ENGAGE_NOW, trials=10, base=SHOOT_FIRST)
    with pytest.raises(UserError, match="field 'plans'.*no base, weights or plans.*holds its plan as its activations"):
        compare(SHOOT_FIRST, ENGAGE_NOW, trials=10, plans="shoot")
    with pytest.raises(UserError, match="Epic scenarios"):
        compare(SHOOT_FIRST, SCENARIOS / "gdb" / "column_vs_line.toml", trials=10)


def test_cli_compares_two_turn_scenarios_named_in_a_definition(tmp_path):
    """`wargame-odds compare` with a definition that names two scenario files and no opponents (the
    shipped shoot-first-or-engage-now example); a missing scenario file is one error line, exit 2."""
    from click.testing import CliRunner

    from wargame_odds.analysis.cli import main

    example = SCENARIOS / "epic" / "decisions" / "shoot_first_or_engage_now.toml"
    out = CliRunner().invoke(main, ["compare", str(example), "-n", "200", "--json"])
    data = json.loads(out.stdout)
    assert out.exit_code == 0 and data["engine"] == "kernel" and data["method"] == "batch-means"
    assert [r["opponent"] for r in data["rows"]] == ["Warband"]
    assert not any("reference engine" in note for note in data["notes"])
    definition = tmp_path / "c.toml"
    definition.write_text('option_a = "missing.toml"\noption_b = "missing.toml"\n')
    out = CliRunner().invoke(main, ["compare", str(definition), "-n", "10"])
    lines = out.output.strip().splitlines()
    assert out.exit_code == 2 and len(lines) == 1 and lines[0].startswith("error: ") and "missing.toml" in lines[0]
