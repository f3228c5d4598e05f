"""The shared machinery: intervals, runner reproducibility, result shape, scenario reading."""
import json
from pathlib import Path

import numpy as np
import pytest
from numba import njit, prange
from scipy.stats import binomtest

from wargame_odds.analysis.intake.errors import UserError
from wargame_odds.analysis.output.estimates import Z95, Distribution, Probability, wilson_interval
from wargame_odds.analysis.run.numba_cache import DEPENDENT, STAMP, cache_folder, drop_stale_cache, sources_digest
from wargame_odds.analysis.output.result import Result
from wargame_odds.analysis.run.runner import RunInfo, run, stream_key
from wargame_odds.analysis.intake.scenario import parse_toml, read_toml
from wargame_odds.kernels.rng import BLOCK_TRIALS, d6, d6_reg, die, seed_stream, uniform


@njit(cache=True, parallel=True)
def _faces_kernel(key0, key1, first_block, n_trials):
    """Histogram of one D6 (slots 1..6), a D3 (slots 7..9) and P(uniform < 0.25) (slot 10)."""
    n_blocks = (n_trials + BLOCK_TRIALS - 1) // BLOCK_TRIALS
    part = np.zeros((n_blocks, 11), np.int64)
    for b in prange(n_blocks):
        state = np.empty(4, np.uint64)
        seed_stream(state, key0, key1, first_block + b)
        for _ in range(min(BLOCK_TRIALS, n_trials - b * BLOCK_TRIALS)):
            part[b, d6(state)] += 1
            part[b, 6 + die(state, 3)] += 1
            part[b, 10] += uniform(state) < 0.25
    return part.sum(axis=0)


@njit(cache=True)
def _dice_both_forms(state, n):
    """``n`` D6 from a state array (``d6``), then ``n`` from the state it left, held in local words (``d6_reg``);
    the dice and the final state."""
    dice = np.empty(2 * n, np.int64)
    for i in range(n):
        dice[i] = d6(state)
    s0, s1, s2, s3 = state[0], state[1], state[2], state[3]
    for i in range(n, 2 * n):
        dice[i], s0, s1, s2, s3 = d6_reg(s0, s1, s2, s3)
    return dice, np.array([s0, s1, s2, s3], np.uint64)


def _python_d6(state: list[int]) -> int:
    """xoshiro256** and Lemire's exact D6, written out in plain Python integers (the naive version)."""
    mask = (1 << 64) - 1

    def rotl(x, k):
        return ((x << k) | (x >> (64 - k))) & mask

    while True:
        s0, s1, s2, s3 = state
        word = rotl(s1 * 5 & mask, 7) * 9 & mask
        t = s1 << 17 & mask
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        state[:] = [s0, s1, s2, rotl(s3, 45)]
        m = (word >> 32) * 6
        if m & 0xFFFFFFFF >= 4:
            return (m >> 32) + 1


def test_kernel_dice_match_a_plain_python_generator():
    """The kernels' D6, from a state array (``wargame_odds.kernels.rng.d6``) and from state held in local words
    (``d6_reg``, the GdB kernel's form), is xoshiro256** with Lemire's exact rejection, die for die and state
    for state, as a plain-Python version of both computes it."""
    start = [0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB, 0x2545F4914F6CDD1D]
    dice, final = _dice_both_forms(np.array(start, np.uint64), 5000)
    state = list(start)
    assert dice.tolist() == [_python_d6(state) for _ in range(10_000)]
    assert final.tolist() == state
    assert sorted(set(dice.tolist())) == [1, 2, 3, 4, 5, 6]


class FacesJob:
    def run_chunk(self, key0, key1, first_block, n_trials):
        return _faces_kernel(np.uint64(key0), np.uint64(key1), first_block, n_trials)

    def precision_successes(self, counts):
        return counts[1:7]


def test_wilson_interval_matches_scipy():
    for k, n in [(0, 10), (3, 10), (10, 10), (505, 1296), (1, 1_000_000)]:
        expected = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
        lo, hi = wilson_interval(k, n)
        assert lo == pytest.approx(expected.low, abs=1e-12)
        assert hi == pytest.approx(expected.high, abs=1e-12)


def test_dice_are_uniform_within_5_sigma():
    counts, info = run(FacesJob(), trials=600_000, seed=11)
    n = info.trials
    for face in range(1, 7):
        assert abs(counts[face] - n / 6) <= 5 * np.sqrt(n * (1 / 6) * (5 / 6))
    for face in range(7, 10):
        assert abs(counts[face] - n / 3) <= 5 * np.sqrt(n * (1 / 3) * (2 / 3))
    assert abs(counts[10] - n / 4) <= 5 * np.sqrt(n * 0.25 * 0.75)


def test_same_seed_same_counts_for_any_chunk_size_and_thread_count():
    reference, _ = run(FacesJob(), trials=50_000, seed=5)
    for chunk, threads in [(BLOCK_TRIALS, 1), (3 * BLOCK_TRIALS, 2), (10 ** 6, 1), (5000, 2)]:
        counts, _ = run(FacesJob(), trials=50_000, seed=5, chunk_trials=chunk, threads=threads)
        assert np.array_equal(counts, reference)
    other, _ = run(FacesJob(), trials=50_000, seed=6)
    assert not np.array_equal(other, reference)


def test_cells_get_independent_streams():
    assert stream_key(1, (0,)) != stream_key(1, (1,)) != stream_key(1)
    a, _ = run(FacesJob(), trials=20_000, seed=1, cell=(3,))
    b, _ = run(FacesJob(), trials=20_000, seed=1, cell=(3,))
    c, _ = run(FacesJob(), trials=20_000, seed=1, cell=(4,))
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_precision_stops_when_every_half_width_is_small_enough():
    counts, info = run(FacesJob(), seed=2, precision=0.002, chunk_trials=BLOCK_TRIALS * 16)
    assert info.precision_reached
    assert info.achieved_half_width <= 0.002
    assert info.trials == counts[1:7].sum()
    # one chunk fewer would not have been enough (n ~ 1.96^2 * p(1-p) / eps^2 ~ 133k)
    assert info.trials >= 1.96 ** 2 * (1 / 6) * (5 / 6) / 0.002 ** 2 - BLOCK_TRIALS * 16
    capped, info = run(FacesJob(), seed=2, precision=1e-4, max_trials=BLOCK_TRIALS * 4)
    assert not info.precision_reached and info.trials == BLOCK_TRIALS * 4


def _toy_result():
    tree = {"sides": {"win": Probability(30, 100)},
            "units": {"alpha": {"lost": Distribution([10, 60, 30])}}}
    return Result(system="toy", title="Toy", info=RunInfo(trials=100, seed=4), tree=tree, notes=["a note"])


def test_result_table_json_and_cumulative():
    result = _toy_result()
    table = result.table()
    assert list(table.quantity) == ["win"]
    row = table.iloc[0]
    assert row.estimate == 0.3 and row.ci95_lo < 0.3 < row.ci95_hi
    data = json.loads(result.to_json())
    assert data["system"] == "toy" and data["trials"] == 100 and data["seed"] == 4
    assert data["sides"]["win"]["ci95"] == list(Probability(30, 100).ci95)
    assert data["units"]["alpha"]["lost"]["mean"] == pytest.approx(1.2)
    lost = result["units", "alpha", "lost"].mean()
    assert data["units"]["alpha"]["lost"]["mean_ci95"] == pytest.approx(list(lost.ci95))
    at_least = result.cumulative("units", "alpha", "lost")
    assert list(at_least.p) == pytest.approx([1.0, 0.9, 0.3])
    at_most = result.cumulative("units", "alpha", "lost", kind="at_most")
    assert list(at_most.p) == pytest.approx([0.1, 0.7, 1.0])
    assert "a note" in str(result) and "<table" in result._repr_html_()
    assert result.plot() is not None


def test_read_toml_reports_bad_files(tmp_path):
    with pytest.raises(UserError, match="file not found"):
        read_toml(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("system = \n")
    with pytest.raises(UserError, match=r"bad.toml: invalid TOML"):
        read_toml(bad)
    assert parse_toml('system = "epic"\n') == {"system": "epic"}


def test_wilson_bounds_are_exact_at_the_edges():
    """0 successes give a lower bound of exactly 0, n successes an upper bound of exactly 1."""
    for n in (1, 1000, 20_000, 1_000_000):
        lo, hi = wilson_interval(0, n)
        assert lo == 0.0 and hi > 0
        lo, hi = wilson_interval(n, n)
        assert hi == 1.0 and lo < 1


def test_mean_interval_of_a_count_never_reaches_below_its_least_value():
    """999 trials with 0 and one with 3: the normal-theory interval would reach below 0; it is cut at
    the distribution's least value, and the upper end is unchanged."""
    dist = Distribution([999, 0, 0, 1])
    mean = dist.mean()
    half = Z95 * mean.sd / np.sqrt(1000)
    assert mean.value - half < 0
    assert mean.ci95 == (0, pytest.approx(mean.value + half))
    assert Distribution([999, 0, 0, 1], offset=-2).mean().ci95[0] == -2


def test_json_writes_null_for_quantities_without_data():
    """A mean or distribution over zero trials is NaN in Python and null in strict JSON."""
    tree = {"charger": {"failed_move": Distribution([0, 0], n=0), "win": Probability(5, 10)}}
    result = Result(system="toy", title="Toy", info=RunInfo(trials=10, seed=0), tree=tree)
    data = json.loads(result.to_json())
    assert data["charger"]["failed_move"]["mean"] is None
    assert data["charger"]["failed_move"]["mean_ci95"] is None
    assert data["charger"]["failed_move"]["p"] == [None]


def test_json_gives_every_mean_its_interval():
    """A mean leaf ``NAME`` is written with ``NAME_ci95``, the interval the table shows (null without data)."""
    mean = Distribution([2, 5, 3]).mean()
    tree = {"units": {"alpha": {"lost_mean": mean, "gone_mean": Distribution([0], n=0).mean()}}}
    data = json.loads(Result(system="toy", title="Toy", info=RunInfo(trials=10, seed=0), tree=tree).to_json())
    alpha = data["units"]["alpha"]
    assert alpha["lost_mean"] == pytest.approx(1.1)
    assert alpha["lost_mean_ci95"] == pytest.approx(list(mean.ci95))
    assert alpha["lost_mean_ci95"][0] < 1.1 < alpha["lost_mean_ci95"][1]
    assert alpha["gone_mean"] is None and alpha["gone_mean_ci95"] is None


def test_stale_kernel_cache_is_dropped_when_any_kernel_source_changes(tmp_path):
    """Numba stamps a cached function with its own file only; a change to a helper module the kernels
    inline (kernels/rng.py) must still drop every cached kernel of the package, and nothing else."""
    sources, cache = tmp_path / "kernels", tmp_path / "cache"
    sources.mkdir()
    cache.mkdir()
    (sources / "rng.py").write_text("A = 1\n")
    (sources / "epic.py").write_text("B = 2\n")

    def fill():
        for name in ("epic.kernel-10.py311.nbi", "epic.kernel-10.py311.1.nbc", "rng.d6-3.py311.nbi"):
            (cache / name).write_bytes(b"x")

    fill()
    (cache / "other.f-1.py311.nbi").write_bytes(b"x")  # another package's cache in the same folder
    assert drop_stale_cache(sources, sources_digest(sources), cache) == 3  # no digest yet: trust nothing
    assert sorted(p.name for p in cache.iterdir()) == ["kernels-sources.sha256", "other.f-1.py311.nbi"]
    fill()
    assert drop_stale_cache(sources, sources_digest(sources), cache) == 0  # sources unchanged: kept
    (sources / "rng.py").write_text("A = 3\n")  # only the helper module changed
    assert drop_stale_cache(sources, sources_digest(sources), cache) == 3
    assert (cache / STAMP).read_text() == sources_digest(sources)


def test_kernel_cache_folders_are_numbas_own():
    """The folders checked are the ones Numba caches in (NUMBA_CACHE_DIR or __pycache__): the kernels'
    and, in a checkout, those of the jitted test and benchmark helpers built on wargame_odds.kernels.rng."""
    from wargame_odds.kernels import epic, rng
    from wargame_odds.kernels.epic import block

    assert cache_folder() == Path(rng.seed_stream._cache._impl.locator.get_cache_path())
    assert cache_folder(Path(epic.__file__).parent) == Path(block._run_block._cache._impl.locator.get_cache_path())
    assert cache_folder(Path(__file__).parent) == Path(_faces_kernel._cache._impl.locator.get_cache_path())
    assert Path(__file__).parent in DEPENDENT
    jitted_test_folders = {path.parent for path in Path(__file__).parent.rglob("test_*.py")
                           if "cache=True" in path.read_text() or "kernel_function" in path.read_text()}
    assert jitted_test_folders <= set(DEPENDENT), jitted_test_folders - set(DEPENDENT)
