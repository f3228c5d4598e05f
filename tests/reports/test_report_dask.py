"""Cells on a Dask LocalCluster: same numbers as a local run, whatever happens to the workers."""
import json
import os
import signal
import threading
import time

import dask
from click.testing import CliRunner

from wargame_odds.analysis.cli import main
from wargame_odds.analysis.reports import load_report
from wargame_odds.analysis.reports.build import point_file
from wargame_odds.analysis.reports.cells import run_point


def _stored(out, spec):
    return json.loads(point_file(out, spec).read_text())


def test_report_on_a_two_worker_cluster_equals_the_local_run(cluster, local_build, small_definition, tmp_path,
                                                             data_files):
    out = tmp_path / "dask"
    address = cluster.client.scheduler.address
    result = CliRunner().invoke(main, ["report", str(small_definition), "--out", str(out), "--scheduler", address])
    assert result.exit_code == 0, result.output
    for spec in load_report(small_definition).all_points():
        assert _stored(out, spec) == _stored(local_build, spec), spec["point"]
    assert data_files(out) == data_files(local_build)
    page = (out / "index.html").read_text()  # where it ran, in words: no executor repr on the page (issue 12 §2)
    assert "computed on a Dask cluster" in page and "DaskExecutor" not in page


def test_a_worker_killed_mid_cell_changes_no_number(cluster, local_build, small_definition):
    specs = load_report(small_definition).points["epic-reference-sweep"]  # about a second per point
    client = cluster.client
    results, errors = {}, []

    def consume():
        try:
            results.update(cluster.map(run_point, specs))
        except Exception as exc:  # reported by the assertion below
            errors.append(exc)

    thread = threading.Thread(target=consume)
    thread.start()
    deadline = time.monotonic() + 60
    victim = None
    while victim is None:
        assert time.monotonic() < deadline, "no worker ever started a cell"
        busy = [address for address, keys in client.processing().items() if keys]
        if busy:
            victim = busy[0]
        else:
            time.sleep(0.02)
    pid = client.run(os.getpid, workers=[victim])[victim]
    time.sleep(0.2)  # well inside the cell, which takes about a second
    assert client.processing()[victim], "the victim finished its cell before it could be killed"
    os.kill(pid, signal.SIGKILL)
    thread.join(timeout=120)
    assert not thread.is_alive() and not errors, errors
    assert sorted(results) == list(range(len(specs)))
    for i, spec in enumerate(specs):
        stored = _stored(local_build, spec)
        stored.pop("checksum")  # added when the point is stored, not by run_point
        assert results[i] == stored, spec["point"]
    try:
        os.kill(pid, 0)
        raise AssertionError("the worker was not killed")
    except ProcessLookupError:
        pass


def test_unreachable_scheduler_is_one_line_exit_2(small_definition, tmp_path):
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        result = CliRunner().invoke(main, ["report", str(small_definition), "--out", str(tmp_path / "x"),
                                           "--scheduler", "tcp://127.0.0.1:9"])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: --scheduler: cannot connect to tcp://127.0.0.1:9")
    assert result.stderr.count("\n") == 1
