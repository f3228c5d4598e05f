"""list-search on a Dask cluster: each look's candidates as tasks, the same JSON as in this process."""
import json

from click.testing import CliRunner

from wargame_odds.analysis.cli import main
from wargame_odds.analysis.decisions import list_search_core as ls

DEFINITION = {"army": "netea:space-marine-codex-astartes", "max_points": 450,
              "formations": ["Assault", "Terminator"], "upgrades": ["Commander", "Vindicators", "Dreadnoughts"],
              "opponents": [{"force": "netea:ork-war-horde/warband", "weight": 3},
                            {"force": "netea:ork-war-horde/kommando-warhorde", "weight": 1}]}


def _json(result) -> dict:
    data = json.loads(result.to_json())
    data.pop("run")
    return data


def test_the_cluster_gives_the_local_json(cluster, monkeypatch):
    monkeypatch.setattr(ls.KernelEvaluator, "CHUNK", 8)  # 31 candidates: four tasks a look
    local = _json(ls.list_search(DEFINITION, seed=6))
    assert _json(ls.list_search(DEFINITION, seed=6, executor=cluster)) == local
    args = ["list-search", "epic/decisions/list_search_two_choices", "--seed", "3", "--json"]
    here = json.loads(CliRunner().invoke(main, args).stdout)
    there = CliRunner().invoke(main, args + ["--scheduler", cluster.client.scheduler.address])
    assert there.exit_code == 0, there.output
    theirs = json.loads(there.stdout)
    here.pop("run")
    theirs.pop("run")
    assert theirs == here
