"""Issue 41 §3: a library formation puts every unit in base contact unless the player says how many are
(`base_contact = N`: the first N ground units in base contact, the rest within 15 cm, TP 1.12.3-1.12.5), and the
answer's "Assumed:" line says which it is."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from wargame_odds.analysis import epic

SCENARIO = """system = "epic"
title = "Assault Marines against a library warband"
[[formations]]
library = "netea:space-marine-codex-astartes/assault"
side = "attacker"
[[formations]]
library = "netea:ork-war-horde/warband"
side = "defender"
{extra}
"""
WARGAME_ODDS = shutil.which("wargame-odds", path=str(Path(sys.executable).parent))


def _run(tmp_path, extra: str, *args):
    path = tmp_path / "s.toml"
    path.write_text(SCENARIO.format(extra=extra), encoding="utf-8")
    return subprocess.run([WARGAME_ODDS, "epic", str(path), "--trials", "4096", *args],
                          capture_output=True, text=True)


def test_base_contact_splits_the_units_in_list_order(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(SCENARIO.format(extra="base_contact = 7"), encoding="utf-8")
    warband = next(f for f in epic.load(str(path)).formations if f.name == "Warband")
    placed = [(g.unit, g.count, g.engaged) for g in warband.units]
    assert sum(c for _, c, e in placed if e == "bc") == 7
    assert sum(c for _, c, e in placed if e == "ff") == sum(c for _, c, _ in placed) - 7


def test_the_answer_states_the_contact_it_assumed(tmp_path):
    everyone = _run(tmp_path, "")
    seven = _run(tmp_path, "base_contact = 7")
    assert everyone.returncode == seven.returncode == 0, everyone.stderr + seven.stderr
    assert "Warband 10 of 10 units in base contact" in everyone.stdout
    assert "Warband 7 of 10 units in base contact, 3 within 15 cm" in seven.stdout


@pytest.mark.parametrize("bad", ["-1", "11", "2.5", "true", '"3"', 'base_contact = 3\nengaged = "ff"'])
def test_a_bad_base_contact_is_one_line(tmp_path, bad):
    extra = bad if bad.startswith("base_contact") else f"base_contact = {bad}"
    done = _run(tmp_path, extra)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "base_contact" in done.stderr, done.stderr


def test_base_contact_and_engaged_apply_to_a_formation_with_upgrades():
    """The upgrades' units (here two Land Raiders) are placed like the core's, in the list's order."""
    from wargame_odds.analysis.epic.library.upgrades import expand_with_upgrades

    entry = {"library": "netea:space-marine-codex-astartes/tactical", "upgrades": {"Land Raiders": 2}}
    split = expand_with_upgrades({**entry, "base_contact": 7}, "formations[0]")["units"]
    assert [(g["unit"], g["count"], g["engaged"]) for g in split] == [
        ("netea:tactical", 6, "bc"), ("netea:land-raider", 1, "bc"), ("netea:land-raider", 1, "ff")]
    shooting = expand_with_upgrades({**entry, "engaged": "ff"}, "formations[0]")["units"]
    assert {g["engaged"] for g in shooting} == {"ff"}
    with pytest.raises(ValueError, match="base_contact"):
        expand_with_upgrades({**entry, "base_contact": 9}, "formations[0]")
