"""Issue 30 §2 progress and Cancel, §3 runs off the event loop: a run in a worker thread reports its trials,
stops when cancelled, gives the CLI's numbers for the same seed, and two runs at once both answer."""
from xml.etree import ElementTree

import pytest

pytest.importorskip("panel")

from wargame_odds.analysis import epic, gdb
from wargame_odds.analysis.run import runner  # noqa: E402
from wargame_odds.analysis.app import runs  # noqa: E402
from wargame_odds.analysis.app.render import figure, render  # noqa: E402
from wargame_odds.analysis.app.setups import example_setup  # noqa: E402

TRIALS = 20_000


@pytest.mark.parametrize("name", ["epic/assault_marines_vs_warband", "gdb/column_vs_line", "t9a/three_chargers"])
def test_a_run_in_a_worker_gives_the_numbers_of_simulate_and_reports_every_trial(name):
    setup = example_setup(name)
    progress = runs.Progress()
    result = runs.submit(lambda: runs.simulate(setup.system, setup.model(), trials=TRIALS, seed=7, precision=None),
                         progress).result(timeout=600)
    module = {"epic": epic, "gdb": gdb}.get(setup.system) or __import__("wargame_odds.analysis.t9a", fromlist=["t9a"])
    plain = module.simulate(setup.model(), trials=TRIALS, seed=7, progress=False)
    assert result.to_json() == plain.to_json()  # paced chunks, same dice
    assert progress.done == progress.total == TRIALS and progress.fraction == 1.0


def test_cancel_stops_a_run_after_its_current_chunk():
    setup = example_setup("epic/assault_marines_vs_warband")
    progress = runs.Progress()
    progress.cancel()
    with pytest.raises(runs.Cancelled):
        runs.submit(lambda: runs.simulate("epic", setup.model(), trials=TRIALS, seed=0, precision=None),
                    progress).result(timeout=600)
    assert progress.done == 0


def test_a_bar_that_is_cancelled_mid_run_raises_at_its_next_update():
    progress = runs.Progress()
    with progress.bar(10) as bar:
        bar.update(4)
        progress.cancel()
        with pytest.raises(runs.Cancelled):
            bar.update(4)
    assert progress.done == 4 and progress.fraction == 0.4


def test_the_sink_is_only_the_worker_threads_own():
    """A run outside the app (this thread) shows no app progress: the sink is a context variable."""
    assert runner.PROGRESS_SINK.get() is None
    progress = runs.Progress()
    runs.submit(lambda: runner.PROGRESS_SINK.get() is progress, progress).result(timeout=60)
    assert runner.PROGRESS_SINK.get() is None


def test_two_runs_at_once_both_answer():
    """§3: two pages running at once (GdB's kernel on Numba's threading layer, and Epic's) both get answers."""
    jobs = []
    for name in ("gdb/column_vs_line", "epic/assault_marines_vs_warband", "gdb/cavalry_vs_square"):
        setup = example_setup(name)
        progress = runs.Progress()
        model = setup.model()
        jobs.append(runs.submit(lambda s=setup, m=model: runs.simulate(s.system, m, trials=TRIALS, seed=1,
                                                                       precision=None), progress))
    assert [job.result(timeout=600).trials for job in jobs] == [TRIALS] * 3


@pytest.mark.filterwarnings("ignore:Glyph 7")  # the bell in the name, drawn as a missing glyph
def test_a_rendered_result_escapes_hostile_names(caplog):
    data = example_setup("gdb/column_vs_line").data
    data = dict(data, charger=dict(data["charger"], name="<img src=x onerror=alert(1)>$\\alpha$\x07"))
    from wargame_odds.analysis.app.setups import Setup

    setup = Setup("gdb", data)
    shown = render(runs.simulate("gdb", setup.model(), trials=2000, seed=0, precision=None))
    assert "<img" not in shown.html and "&lt;img src=x" in shown.html
    assert "$" not in shown.html and "&#36;&#92;alpha&#36;&#92;x07" in shown.html
    drawn = figure(shown.result)
    assert drawn.png.startswith(b"\x89PNG") and shown.csv.startswith("section,")
    ElementTree.fromstring(drawn.svg)  # issue 41 §2: the SVG download is well-formed XML, the bell escaped
    assert b"\\x07" in drawn.svg and b"\x07" not in drawn.svg
    assert not [r for r in caplog.records if r.name.startswith("matplotlib.mathtext")]  # drawn as text, not math


def test_the_server_runs_at_most_max_runs_and_refuses_more_at_once():
    """Issue 40 §1: a run beyond the cap is refused at once (one message), never queued behind long runs."""
    import threading

    release = threading.Event()
    progresses = [runs.Progress() for _ in range(runs.MAX_RUNS)]
    jobs = [runs.submit(lambda: release.wait(600), p) for p in progresses]
    try:
        with pytest.raises(runs.Busy, match=f"{runs.MAX_RUNS} runs are going on already"):
            runs.submit(lambda: None, runs.Progress())
    finally:
        release.set()
    assert all(job.result(timeout=60) for job in jobs)
    assert runs.submit(lambda: 7, runs.Progress()).result(timeout=60) == 7  # the slots came back


def test_numba_runs_take_turns_chunk_by_chunk():
    """A long GdB run holds the Numba lock only for one chunk at a time: a short GdB run started while it runs
    answers long before it ends."""
    setup = example_setup("gdb/column_vs_line")
    model = setup.model()
    long_progress = runs.Progress()
    long_run = runs.submit(lambda: runs.simulate("gdb", model, trials=10**9, seed=0, precision=None), long_progress)
    try:
        while long_progress.done == 0:  # the long run has run a chunk (compiled): wait for that state
            assert not long_run.done(), long_run.exception()
            threading_wait(0.05)
        short = runs.submit(lambda: runs.simulate("gdb", model, trials=TRIALS, seed=0, precision=None),
                            runs.Progress())
        assert short.result(timeout=300).trials == TRIALS
        assert not long_run.done()
    finally:
        long_progress.cancel()
    with pytest.raises(runs.Cancelled):
        long_run.result(timeout=300)


def test_a_run_waiting_for_the_lock_stops_waiting_when_cancelled():
    import threading

    lock = runs.FairLock()
    holder = runs.Progress()
    lock.acquire(holder)
    waiting = runs.Progress()
    failed = []
    thread = threading.Thread(target=lambda: failed.append(_cancelled(lambda: lock.acquire(waiting))))
    thread.start()
    waiting.cancel()
    thread.join(timeout=30)
    assert failed == [True] and not thread.is_alive()
    lock.release()
    lock.acquire(runs.Progress())  # free again
    lock.release()


def _cancelled(fn) -> bool:
    try:
        fn()
    except runs.Cancelled:
        return True
    return False


def threading_wait(seconds: float) -> None:
    """One polling step (the loop around it waits for a state)."""
    import threading

    threading.Event().wait(seconds)


def test_a_page_whose_session_ends_cancels_its_run():
    from wargame_odds.analysis.app.page import Page

    page = Page({"example": "gdb/column_vs_line"}, in_notebook=True)
    page.running = runs.Progress()
    page.session_ended(None)
    assert page.running.cancelled and page.closed


def test_the_apps_csv_is_the_clis_csv_spreadsheet_safe(tmp_path):
    """Issue 40 §1: one CSV writer: the app's "Results (CSV)" is what ``--csv`` prints for the same run, with a
    formula-like name quoted and its control and bidi characters escaped."""
    from click.testing import CliRunner

    from wargame_odds.analysis.app.setups import Setup
    from wargame_odds.analysis.cli import main

    data = example_setup("epic/assault_marines_vs_warband").data
    data["formations"][2]["name"] = '=HYPERLINK("http://evil","x")\x07\u202e'
    setup = Setup("epic", data)
    path = tmp_path / "hostile.toml"
    path.write_text(setup.toml(), encoding="utf-8")
    shown = render(runs.simulate("epic", setup.model(), trials=2000, seed=3, precision=None))
    cli = CliRunner().invoke(main, ["epic", str(path), "-n", "2000", "--seed", "3", "--csv"])
    assert cli.exit_code == 0, cli.stderr
    assert shown.csv == cli.stdout
    assert ',"\'=HYPERLINK(""http://evil"",""x"")\\x07\\u202e",' in shown.csv
    assert "\x07" not in shown.csv and "\u202e" not in shown.csv and ",=HYPERLINK" not in shown.csv
