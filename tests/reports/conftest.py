"""Shared fixtures: one small report covering every system, built once locally."""
from pathlib import Path

import pytest

from wargame_odds.analysis.reports import build, load_report

SMALL_REPORT = """
title = "Small test report"
seed = 11
trials = 20000

[[cells]]
kind = "sweep"
name = "epic-reference-sweep"
scenario = "epic/assault_marines_vs_warband"
trials = 4096
options = { engine = "reference" }
grid = { "formations[Warband].blast_markers" = [0, 1, 3] }

[[cells]]
kind = "scenario"
name = "epic-terminators"
scenario = "epic/terminators_vs_guard_in_cover"

[[cells]]
kind = "scenario"
name = "gdb-square"
scenario = "gdb/cavalry_vs_square"

[[cells]]
kind = "sweep"
name = "t9a-distance"
scenario = "t9a/single_charge_9in"
grid = { "chargers[Swordsmen].distance" = [7.0, 9.0], "rules.dice" = ["2d6", "swiftstride"] }

[[cells]]
kind = "matrix"
name = "epic-matrix"
base = "epic/assault_marines_vs_warband"
attackers = ["netea:space-marine-codex-astartes/tactical"]
defenders = ["netea:ork-war-horde/warband", "netea:ork-war-horde/kommando-warhorde"]

[[cells]]
kind = "compare"
name = "epic-compare"
base = "epic/assault_marines_vs_warband"
trials = 122880                     # 30 batches of 4096 trials, the fewest batch means runs
option_a = "netea:space-marine-codex-astartes/assault"
option_b = "netea:space-marine-codex-astartes/tactical"
opponents = [{ force = "netea:ork-war-horde/warband", weight = 3 }, { force = "netea:ork-war-horde/kommando-warhorde" }]
"""


def _data_files(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file() and p.name != "index.html" and not p.name.startswith(".")}


@pytest.fixture(scope="session")
def data_files():
    """Every file of a built report except index.html (the one file with a timestamp), as bytes."""
    return _data_files


@pytest.fixture(scope="session")
def small_definition(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("definition") / "small.toml"
    path.write_text(SMALL_REPORT, encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def local_build(small_definition, tmp_path_factory) -> Path:
    """The small report built uninterrupted in this process; returns its output folder."""
    out = tmp_path_factory.mktemp("local") / "small"
    build(load_report(small_definition), out=out, progress=False)
    return out

