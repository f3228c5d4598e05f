"""`wargame-odds gdb-tables template` / `check` (issue 12 §6): a commented tables file to fill in."""
import json
import tomllib
from pathlib import Path

from click.testing import CliRunner

from wargame_odds.analysis.cli import main
from wargame_odds.analysis.gdb.results import PLACEHOLDER_NOTE
from wargame_odds.analysis.gdb.tables import Tables, load_tables

ISSUE = Path("analysis/scenarios/gdb/column_vs_line.toml")


def _template(tmp_path) -> Path:
    out = CliRunner().invoke(main, ["gdb-tables", "template"])
    assert out.exit_code == 0, out.output
    path = tmp_path / "my_tables.toml"
    path.write_text(out.stdout)
    return path


def _table_keys(model: type, prefix: str = "") -> set[str]:
    """Every key of the table schema, as dotted paths (the tables every §2.2 / §2.3 step reads)."""
    keys = set()
    for name, field in model.model_fields.items():
        keys.add(prefix + name)
        inner = field.annotation
        if isinstance(inner, type) and hasattr(inner, "model_fields"):
            keys |= _table_keys(inner, f"{prefix}{name}.")
    return keys


def _data_keys(data: dict, prefix: str = "") -> set[str]:
    keys = set()
    for name, value in data.items():
        keys.add(prefix + name)
        if isinstance(value, dict) and name != "range_bands":
            keys |= _data_keys(value, f"{prefix}{name}.")
    return keys


def test_template_loads_back_as_the_shipped_tables(tmp_path):
    """§2.3 tables as data: the template is a valid tables file equal to the shipped tables, so it
    holds every table the sequence reads; it is marked placeholder until the user says otherwise."""
    path = _template(tmp_path)
    loaded, shipped = load_tables(str(path)), load_tables("default")
    assert loaded.model_dump(exclude={"source"}) == shipped.model_dump(exclude={"source"})
    assert loaded.placeholder
    schema = {k for k in _table_keys(Tables) if k != "source"}
    present = _data_keys(tomllib.loads(path.read_text()))
    assert schema <= present | {"name"}, schema - present


def test_template_explains_where_each_number_goes(tmp_path):
    """Every table section and every modifier line carries a comment; the header points into the
    repository (docs/gdb.md), never outside it."""
    text = _template(tmp_path).read_text()
    assert text.startswith("# General de Brigade rule tables: a template")
    assert "docs/gdb.md" in text and "placeholder = false" in text and "shared" not in text
    section = None
    for line in text.splitlines():
        if line.startswith("["):
            header = line.split("#")[0].strip()
            assert "#" in line or header.startswith("[["), line
            section = header if header.endswith("mods]") else None
        elif section and "=" in line:
            assert "#" in line, f"{section}: {line}"


def test_filled_template_runs_a_scenario_as_user_tables(tmp_path):
    """A filled-in template (placeholder = false) is used by a scenario and the placeholder note goes."""
    path = _template(tmp_path)
    path.write_text(path.read_text().replace("placeholder = true", "placeholder = false"))
    scenario = tmp_path / "s.toml"
    scenario.write_text(ISSUE.read_text().replace('tables = "default"', f'tables = "{path.name}"'))
    out = CliRunner().invoke(main, ["gdb", str(scenario), "--trials", "2000", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["tables"] == "user" and PLACEHOLDER_NOTE not in data["notes"]


def test_check_command(tmp_path):
    """`gdb-tables check`: valid file one line, exit 0; a gap in the charger's bands one error line, exit 2."""
    path = _template(tmp_path)
    out = CliRunner().invoke(main, ["gdb-tables", "check", str(path)])
    assert out.exit_code == 0 and "valid rule tables, PLACEHOLDER" in out.output
    path.write_text(path.read_text().replace("min = 7\nresult = \"PASS\"", "min = 8\nresult = \"PASS\"", 1))
    out = CliRunner().invoke(main, ["gdb-tables", "check", str(path)])
    lines = out.output.strip().splitlines()
    assert out.exit_code == 2 and len(lines) == 1
    assert "field 'morale.charger_bands'" in lines[0] and "totals 7..7 are not covered" in lines[0]


def test_placeholder_note_points_into_the_repository():
    assert "docs/gdb.md" in PLACEHOLDER_NOTE and "gdb-tables template" in PLACEHOLDER_NOTE
    assert "charges.md" not in PLACEHOLDER_NOTE and "shared" not in PLACEHOLDER_NOTE
