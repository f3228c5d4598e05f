"""Shipped examples by name (issue 28 §2): `wargame-odds examples`, names wherever a file is read, and the public
`wargame_odds` import that a user's own `analysis/` folder cannot shadow."""
import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from wargame_odds.analysis.cli import main
from wargame_odds.analysis.intake.errors import UserError
from wargame_odds.analysis.intake.examples import examples, locate, shipped_path
from wargame_odds.analysis.intake.scenario import read_toml

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "analysis" / "scenarios"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_examples_lists_every_shipped_file_by_name_with_its_title():
    found = {e.name: e for e in examples()}
    files = {p.relative_to(SHIPPED).with_suffix("").as_posix() for p in SHIPPED.rglob("*.toml")}
    files |= {f"reports/{p.stem}" for p in (ROOT / "reports").glob("*.toml")}  # the top-level report definitions
    assert set(found) == files
    assert found["epic/assault_marines_vs_warband"].title == "Assault Marines jump an Ork warband"
    assert found["epic/assault_marines_vs_warband"].command == "wargame-odds epic epic/assault_marines_vs_warband"
    assert found["epic/turns/devastators_then_assault_marines"].kind == "turn"
    assert found["epic/decisions/marine_assault_meta"].command == "wargame-odds rank epic/decisions/marine_assault_meta"
    assert found["reports/demo"].kind == "report"
    assert all(e.title for e in found.values()), [e.name for e in found.values() if not e.title]
    out = run("examples")
    assert out.exit_code == 0
    assert all(name in out.output for name in files)
    assert "Assault Marines jump an Ork warband" in out.output
    listed = json.loads(run("examples", "--json").output)["examples"]
    assert {e["name"] for e in listed} == files


def test_a_name_stands_for_the_shipped_file_only_when_no_such_file_exists(tmp_path, monkeypatch):
    assert locate("epic/assault_marines_vs_warband") == SHIPPED / "epic" / "assault_marines_vs_warband.toml"
    assert shipped_path("epic/assault_marines_vs_warband.toml") == locate("epic/assault_marines_vs_warband")
    assert shipped_path("../epic/assault_marines_vs_warband") is None and shipped_path("epic/nothing") is None
    own = tmp_path / "epic" / "assault_marines_vs_warband"
    own.parent.mkdir()
    own.write_text('system = "epic"\ntitle = "mine"\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert read_toml("epic/assault_marines_vs_warband")[0]["title"] == "mine"  # the user's file wins
    with pytest.raises(UserError, match="file not found.*wargame-odds examples"):
        read_toml("epic/no_such_example")


def test_every_command_that_reads_a_file_takes_a_shipped_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # nothing of the checkout reachable by a relative path
    assert run("epic", "epic/assault_marines_vs_warband", "--trace", "--seed", 3).exit_code == 0
    gdb = run("gdb", "gdb/column_vs_line", "-n", 2000, "--json")
    assert gdb.exit_code == 0 and json.loads(gdb.stdout)["trials"] == 2000
    assert run("t9a", "t9a/three_chargers", "-n", 2000, "--json").exit_code == 0
    sweep = run("sweep", "t9a/single_charge_9in", "chargers[Swordsmen].distance", "7.0", "9.0", "-n", 2000, "--json")
    assert sweep.exit_code == 0, sweep.output
    threshold = run("threshold", "t9a/single_charge_9in", "chargers[Swordsmen].distance", "--values", "5:11",
                    "--quantity", "chargers[Swordsmen].arrives", "--at-least", 50, "-n", 2000, "--json")
    assert threshold.exit_code == 0, threshold.output
    missing = run("gdb", "gdb/no_such_example")
    assert missing.exit_code == 2 and "wargame-odds examples" in missing.stderr


def test_a_shipped_report_definition_writes_into_the_current_folder(tmp_path, monkeypatch):
    from wargame_odds.analysis.reports.definition import default_out, load_report

    monkeypatch.chdir(tmp_path)
    report = load_report("reports/demo")
    assert report.source == ROOT / "reports" / "demo.toml"
    assert default_out(report) == Path("reports") / "out" / "demo"


def test_wargame_odds_imports_the_installed_analysis_beside_a_users_own_folder(tmp_path):
    """A notebook project's own `analysis/` (and `kernels/`) folder in the working directory is what Python imports
    there under the name `analysis`; `import wargame_odds` gets this project's code, imports nothing named
    `analysis` or `kernels` (its sub-packages are wargame_odds.analysis and wargame_odds.kernels) and leaves those
    names free."""
    for name in ("analysis", "kernels"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(f"raise ImportError('the user\\'s own {name}')\n")
    shadowed = subprocess.run([sys.executable, "-c", "__import__('analysis')"], cwd=tmp_path, capture_output=True,
                              text=True)
    assert "the user's own" in shadowed.stderr  # the clash is real in this folder
    code = ("import wargame_odds as wo\n"
            "s = wo.epic.load('epic/assault_marines_vs_warband')\n"
            "print(s.title); print(wo.epic.__file__); print(wo.compare.__module__)\n"
            "import sys; print(sorted(m for m in sys.modules if m.split('.')[0] in ('analysis', 'kernels')))\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    title, module_file, compare_module, foreign = done.stdout.splitlines()
    assert title == "Assault Marines jump an Ork warband"
    assert Path(module_file).resolve().is_relative_to(ROOT / "analysis")
    assert compare_module == "wargame_odds.analysis.decisions.api"
    assert foreign == "[]"
