"""The decision commands: outputs, and bad input as one clear line with exit status 2."""
import json

import pytest

from decisions_cli import one_error_line, run

SCENARIO = "analysis/scenarios/epic/assault_marines_vs_warband.toml"
EXAMPLES = "analysis/scenarios/epic/decisions"


def test_example_definitions_run_with_json_and_csv():
    out = run("matrix", f"{EXAMPLES}/marines_vs_orks_matrix.toml", "-n", 4096, "--json")
    data = json.loads(out.stdout)
    pairs = {(r["attacker"], r["defender"]) for r in data["rows"]}
    assert out.exit_code == 0 and data["kind"] == "matrix" and len(pairs) == 12
    for method in ("batch-means", "exact-pairs"):
        out = run("compare", f"{EXAMPLES}/assault_or_tactical.toml", "-n", 300, "--csv", "--method", method)
        assert out.exit_code == 0 and out.output.splitlines()[0].startswith("opponent,weight,p_a")
        assert out.output.splitlines()[-1].startswith("meta (weighted)")
    out = run("rank", f"{EXAMPLES}/marine_assault_meta.toml", "-n", 4096)
    assert out.exit_code == 0 and "chance per 100 points" in out.output
    out = run("sweep", SCENARIO, "rules.result_dice", '"highest"', '"sum"', "-n", 4096, "--json")
    assert out.exit_code == 0 and json.loads(out.stdout)["values"] == ["highest", "sum"]


def test_unknown_library_unit(tmp_path):
    force = tmp_path / "force.toml"
    force.write_text('[[formations]]\nname = "X"\ninitiative = 1\n'
                     'units = [{ unit = "netea:spacemarine", count = 2, engaged = "bc" }]\n')
    definition = tmp_path / "m.toml"
    definition.write_text('attackers = ["force.toml"]\ndefenders = ["netea:ork-war-horde/warband"]\n')
    one_error_line(run("matrix", definition, "-n", 100), "force.toml", "formations[0].units[0].unit",
                   "unknown library unit 'netea:spacemarine'", "allowed: ")
    definition.write_text('attackers = ["netea:ork-war-horde/warbandd"]\ndefenders = ["netea:ork-war-horde/warband"]\n')
    one_error_line(run("matrix", definition, "-n", 100), "formations[0].library", "netea:ork-war-horde/warband")


def test_sweep_over_a_missing_field():
    one_error_line(run("sweep", SCENARIO, "formations[2].bast_markers", 1, 2), SCENARIO,
                   "'formations[2].bast_markers'", "no such field", "blast_markers")
    one_error_line(run("sweep", SCENARIO, "formations[9].name", '"x"'), "indexes 0..2 of formations")
    one_error_line(run("sweep", SCENARIO, "formations[0].initiative", 9), "formations[0].initiative", "<= 6")


def test_empty_grids(tmp_path):
    one_error_line(run("sweep", SCENARIO, "formations[0].blast_markers"), SCENARIO, "empty grid",
                   "allowed: one or more values")
    definition = tmp_path / "m.toml"
    definition.write_text('attackers = []\ndefenders = ["netea:ork-war-horde/warband"]\n')
    one_error_line(run("matrix", definition), str(definition), "'attackers'", "empty grid")


@pytest.mark.parametrize("weights", [(0, 0), (1, -1)])
def test_weights_must_sum_to_a_positive_number(tmp_path, weights):
    definition = tmp_path / "meta.toml"
    definition.write_text('options = ["netea:space-marine-codex-astartes/assault"]\n' + "".join(
        f'[[opponents]]\nforce = "netea:ork-war-horde/warband"\nweight = {w}\n' for w in weights))
    one_error_line(run("rank", definition), str(definition), "'opponents.weight'", "positive sum")
    definition.write_text(definition.read_text().replace(
        'options = ["netea:space-marine-codex-astartes/assault"]',
        'option_a = "netea:space-marine-codex-astartes/assault"\n'
        'option_b = "netea:space-marine-codex-astartes/tactical"'))
    one_error_line(run("compare", definition), str(definition), "'opponents.weight'", "positive sum")
    definition.write_text(definition.read_text() + "x = 1\n")
    one_error_line(run("compare", definition), str(definition), "unknown key")
