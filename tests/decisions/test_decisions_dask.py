"""Sweeps, matrices and rankings on a Dask cluster: the same numbers as in this process."""
import json

import dask
from click.testing import CliRunner

from wargame_odds.analysis.cli import main
from wargame_odds.analysis.decisions import rank, sweep

SCENARIO = "analysis/scenarios/epic/assault_marines_vs_warband.toml"
EXAMPLES = "analysis/scenarios/epic/decisions"
T9A = "analysis/scenarios/t9a/single_charge_9in.toml"


def test_sweep_on_a_two_worker_cluster_equals_the_local_run_cell_for_cell(cluster):
    for scenario, field, values in ((SCENARIO, "formations[2].blast_markers", [0, 1, 2, 3]),
                                    (T9A, "chargers[0].distance", [7.0, 9.0, 11.0])):
        local = sweep(scenario, field, values, trials=3 * 4096 + 5, seed=4, cell=(9,))
        remote = sweep(scenario, field, values, trials=3 * 4096 + 5, seed=4, cell=(9,), executor=cluster)
        assert len(remote.cells) == len(values)
        for mine, theirs in zip(local.cells, remote.cells):
            assert json.loads(mine.to_json()) == json.loads(theirs.to_json())
        assert remote.table().equals(local.table())


def test_rank_and_cli_matrix_on_the_cluster_equal_local_runs(cluster):
    meta = {"netea:ork-war-horde/warband": 3, "netea:ork-war-horde/kommando-warhorde": 1}
    options = ["netea:space-marine-codex-astartes/assault", "netea:space-marine-codex-astartes/tactical"]
    local = rank(options, meta, trials=4096, seed=2)
    remote = rank(options, meta, trials=4096, seed=2, executor=cluster)
    assert remote.table().equals(local.table()) and remote.cells.equals(local.cells)
    args = ["matrix", f"{EXAMPLES}/marines_vs_orks_matrix.toml", "-n", "4096", "--json"]
    here = CliRunner().invoke(main, args)
    there = CliRunner().invoke(main, args + ["--scheduler", cluster.client.scheduler.address])
    assert here.exit_code == there.exit_code == 0, there.output
    assert json.loads(there.stdout) == json.loads(here.stdout)


def test_unreachable_scheduler_is_one_line_exit_2():
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        for args in (["sweep", SCENARIO, "formations[2].blast_markers", "0", "1"],
                     ["rank", f"{EXAMPLES}/marine_assault_meta.toml"],
                     ["matrix", f"{EXAMPLES}/marines_vs_orks_matrix.toml"]):
            result = CliRunner().invoke(main, args + ["--scheduler", "tcp://127.0.0.1:9"])
            assert result.exit_code == 2, result.output
            assert result.stderr.startswith("error: --scheduler: cannot connect to tcp://127.0.0.1:9")
            assert result.stderr.count("\n") == 1 and result.stdout == ""
