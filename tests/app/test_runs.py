"""Issue 30 §2 progress and Cancel, §3 runs off the event loop: a run in a worker thread reports its trials,
stops when cancelled, gives the CLI's numbers for the same seed, and two runs at once both answer."""
import pytest

pytest.importorskip("panel")

from analysis import epic, gdb, runner  # noqa: E402
from analysis.app import runs  # noqa: E402
from analysis.app.render import figure, render  # noqa: E402
from analysis.app.setups import example_setup  # noqa: E402

TRIALS = 20_000


@pytest.mark.parametrize("name", ["epic/assault_marines_vs_warband", "gdb/column_vs_line", "t9a/three_chargers"])
def test_a_run_in_a_worker_gives_the_numbers_of_simulate_and_reports_every_trial(name):
    setup = example_setup(name)
    progress = runs.Progress()
    result = runs.submit(lambda: runs.simulate(setup.system, setup.model(), trials=TRIALS, seed=7, precision=None),
                         progress).result(timeout=600)
    module = {"epic": epic, "gdb": gdb}.get(setup.system) or __import__("analysis.t9a", fromlist=["t9a"])
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
    from analysis.app.setups import Setup

    setup = Setup("gdb", data)
    shown = render(runs.simulate("gdb", setup.model(), trials=2000, seed=0, precision=None))
    assert "<img" not in shown.html and "&lt;img src=x" in shown.html
    assert "$" not in shown.html and "&#36;&#92;alpha&#36;&#92;x07" in shown.html
    assert figure(shown.result).startswith(b"\x89PNG") and shown.csv.startswith("section,")
    assert not [r for r in caplog.records if r.name.startswith("matplotlib.mathtext")]  # drawn as text, not math
