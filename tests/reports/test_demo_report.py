"""The demo report (`make demo`, reports/demo.toml) runs as few trials as its stated precision needs: its description
promises every chance over a point's trials within ±0.5 percentage points (the 95 % interval shown) and each
difference of the comparison within ±0.5 points, and every point's trial count keeps that promise whatever the
estimates turn out to be."""
import math
from pathlib import Path

from wargame_odds.analysis.output.estimates import wilson_half_width
from wargame_odds.analysis.reports import load_report

DEMO = Path(__file__).resolve().parents[2] / "reports" / "demo.toml"
PRECISION = 0.005  # ±0.5 percentage points
Z95 = 1.959963984540054


def test_the_description_states_the_precision_and_the_trials():
    description = load_report(DEMO).model.description
    assert "±0.5 percentage points" in description and "95 % interval" in description
    assert "40,000 trials" in description and "160,000 trials an option and opponent" in description


def test_every_point_runs_the_trials_its_precision_needs():
    report = load_report(DEMO)
    specs = report.all_points()
    assert {spec["cell"] for spec in specs} == {cell.name for cell in report.cells}
    for spec in specs:
        n = spec["trials"]
        if "compare" in spec:
            # A − B for two chances takes -1, 0 or 1: its variance is at most 1 a trial, however paired
            assert Z95 * math.sqrt(1 / n) <= PRECISION, spec["cell"]
        else:
            # the widest 95 % Wilson interval of n trials is at p = 1/2
            assert wilson_half_width(n // 2, n) <= PRECISION, (spec["cell"], spec["point"], n)
    # no more than that either: the largest count a scenario point needs is 1.96² / (4 · 0.005²) = 38,415
    assert max(spec["trials"] for spec in specs if "compare" not in spec) < 2 * 38_415
