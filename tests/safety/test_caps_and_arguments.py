"""Caps on every list, checked before anything runs, and wrong input as one line (issue 33 §3, §4):
compare opponents and sweep values capped like matrix and threshold, opponent weights whose sum
overflows, --precision runs sized from the target, the Python API checked like the command line,
names given twice, NUL bytes in paths, and the smaller cases of §4."""
import json
import socket
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

import wargame_odds.analysis.epic as epic
import wargame_odds.analysis.gdb as gdb
import wargame_odds.analysis.t9a as t9a
from wargame_odds.analysis.run import runner
from wargame_odds.analysis.decisions import api
from wargame_odds.analysis.intake.errors import ArgumentError, UserError
from wargame_odds.analysis.reports import load_report

from safety_helpers import SCENARIOS, assert_one_line_error, run_cli

T9A = SCENARIOS / "t9a" / "single_charge_9in.toml"
AIRCRAFT = SCENARIOS / "epic" / "aircraft" / "thunderbolts_strafe_ork_warband.toml"
TURN = SCENARIOS / "epic" / "turns" / "ork_warband_shoots_then_assaults_guard.toml"
TACTICAL, WARBAND = "netea:space-marine-codex-astartes/tactical", "netea:ork-war-horde/warband"


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _compare(opponents: list[str], weights=None) -> str:
    lines = [f'option_a = "{TACTICAL}"', 'option_b = "netea:space-marine-codex-astartes/assault"']
    for i, force in enumerate(opponents):
        lines += ["[[opponents]]", f'force = "{force}"'] + ([f"weight = {weights[i]}"] if weights else [])
    return "\n".join(lines) + "\n"


# -- §3 caps ------------------------------------------------------------------------------------
def test_compare_opponents_and_sweep_values_are_capped_before_anything_runs(tmp_path):
    """101 opponents (compare file, report cell), 10,001 sweep values (command line), and the API's
    sweep, threshold, matrix, rank and compare with lists beyond their caps (range(10**8) included):
    one line each, at once, nothing simulated."""
    start = time.monotonic()
    code, _, err = run_cli("compare", _write(tmp_path / "c.toml", _compare([WARBAND] * 101)), "-n", "4096")
    assert_one_line_error(code, err, "opponents", "100")
    cell = (_compare([WARBAND] * 101).replace("[[opponents]]", "[[cells.opponents]]")
            .replace("option_a", '[[cells]]\nkind = "compare"\nname = "c"\noption_a', 1))
    with pytest.raises(UserError, match=r"opponents.*100"):
        load_report(_write(tmp_path / "r.toml", 'title = "r"\n' + cell))
    code, _, err = run_cli("sweep", T9A, "chargers[0].distance", *[str(1 + i / 1000) for i in range(10_001)])
    assert_one_line_error(code, err, "10,000")
    for call in (lambda: api.sweep(T9A, "chargers[0].distance", range(10**8), trials=4096),
                 lambda: api.threshold(T9A, "chargers[0].distance", range(10**8), at_least=0.5, trials=4096),
                 lambda: api.matrix([TACTICAL] * 101, [WARBAND], trials=4096),
                 lambda: api.rank([TACTICAL] * 101, [WARBAND], trials=4096),
                 lambda: api.compare(TACTICAL, TACTICAL, iter([WARBAND] * 10**6), trials=4096)):
        with pytest.raises(UserError, match=r"at most (100|10,000)"):
            call()
    assert time.monotonic() - start < 60


def test_opponent_weights_whose_sum_overflows_are_normalised_safely():
    """Two opponents of weight 1e308: equal weights, no overflow warning (a meta of 0 % before)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _, weights = api.meta_weights([WARBAND, TACTICAL], [1e308, 1e308], "meta")
        assert weights.tolist() == [0.5, 0.5]
        _, weights = api.meta_weights([WARBAND, TACTICAL], [1.7e308, 0.0], "meta")
        assert weights.tolist() == [1.0, 0.0]
    assert api.meta_weights([WARBAND, TACTICAL], [3, 1], "meta")[1].tolist() == [0.75, 0.25]


class _CoinJob:
    """A job of fair coins (one count slot: heads), recording the size of every chunk it runs."""

    def __init__(self, seconds_per_trial: float = 0.0):
        self.chunks = []
        self.seconds_per_trial = seconds_per_trial

    def run_chunk(self, key0, key1, first_block, n_trials):
        self.chunks.append(n_trials)
        time.sleep(n_trials * self.seconds_per_trial)
        blocks = range(first_block, first_block + -(-n_trials // runner.BLOCK_TRIALS))
        heads = sum(np.random.default_rng([key0, key1, b]).binomial(runner.BLOCK_TRIALS, 0.5) for b in blocks)
        return np.array([heads], np.int64)  # the same counts however the blocks are chunked

    def precision_successes(self, counts):
        return counts[:1]


def test_a_precision_run_is_sized_from_its_target_not_a_million_trial_chunk():
    """--precision 0.05 needs a few hundred trials: the run stops after one block of 4,096 trials
    (the first chunk was 2**20 trials: 17 minutes on the reference engine); the stopping points
    depend on the target only, so a slow engine with its progress bar (chunks paced by its measured
    speed) runs the same trials as a fast one without."""
    fast = _CoinJob()
    counts, info = runner.run(fast, precision=0.05, progress=False)
    assert info.trials == runner.BLOCK_TRIALS and fast.chunks == [runner.BLOCK_TRIALS] and info.precision_reached
    slow, fast = _CoinJob(seconds_per_trial=1e-5), _CoinJob()  # at most 100,000 trials a second
    counts_slow, info_slow = runner.run(slow, precision=0.005, progress=True)
    counts_fast, info_fast = runner.run(fast, precision=0.005, progress=False)
    assert (info_slow.trials, counts_slow.tolist()) == (info_fast.trials, counts_fast.tolist())
    assert info_fast.trials == 16 * runner.BLOCK_TRIALS and fast.chunks == [4096, 4096, 8192, 16384, 32768]
    assert len(slow.chunks) > len(fast.chunks)  # a chunk of about 0.25 s: 25,000 trials at most


# -- §4 wrong input --------------------------------------------------------------------------------
@pytest.mark.parametrize("scenario,field,old,new", [
    (AIRCRAFT, "flak", 'flak = ["Flakwagonz"]', 'flak = ["Flakwagonz", "Flakwagonz"]'),
    (AIRCRAFT, "disengagement_flak", 'flak = ["Flakwagonz"]',
     'flak = ["Flakwagonz"]\ndisengagement_flak = ["Flakwagonz", "Flakwagonz"]'),
    (TURN, "overwatch_fire", 'overwatch_fire = ["Heavy Weapons"]',
     'overwatch_fire = ["Heavy Weapons", "Heavy Weapons"]'),
])
def test_a_formation_named_twice_in_flak_or_overwatch_fire_is_refused(tmp_path, scenario, field, old, new):
    """flak = ["Flakwagonz", "Flakwagonz"] fired that flak twice; overwatch_fire dropped the repeat."""
    text = scenario.read_text()
    assert old in text
    path = _write(tmp_path / "twice.toml", text.replace(old, new))
    code, _, err = run_cli("epic", path, "-n", "4096")
    assert_one_line_error(code, err, field, "named twice")


def test_a_nul_byte_in_a_path_gives_one_line(tmp_path):
    """A NUL byte in a path inside a definition, a report cell or given to load()."""
    bad = "x\\u0000y.toml"
    code, _, err = run_cli("compare", _write(tmp_path / "c.toml", _compare([WARBAND]).replace(TACTICAL, bad)))
    assert_one_line_error(code, err, "option_a", "NUL")
    report = _write(tmp_path / "r.toml", f'title = "r"\n[[cells]]\nkind = "scenario"\nname = "a"\nscenario = "{bad}"\n')
    code, _, err = run_cli("report", report)
    assert_one_line_error(code, err, "scenario", "NUL")
    with pytest.raises(UserError, match="NUL"):
        t9a.load(tmp_path / "x\0y.toml")


def test_threshold_values_and_quantity_are_checked(tmp_path):
    """--values nan:1 and 1,,3; a --quantity naming a distribution."""
    for values in ("nan:1", "1,,3", "1:inf"):
        code, _, err = run_cli("threshold", T9A, "chargers[0].distance", "--values", values, "--at-least", "0.5")
        assert_one_line_error(code, err, "--values")
    code, _, err = run_cli("threshold", T9A, "chargers[0].distance", "--values", "7,9", "--at-least", "0.5",
                           "--quantity", "chargers[Swordsmen].failed_move", "-n", "4096")
    assert_one_line_error(code, err, "quantity", "not a probability")


def test_force_and_matrix_definitions_are_checked(tmp_path):
    """A force file whose formation name is a list; a matrix whose base is ""."""
    force = (SCENARIOS / "epic" / "decisions" / "jump_pack_captain.toml").read_text()
    head, sep, tail = force.partition('[[formations]]\nname = "Assault + Captain"')
    _write(tmp_path / "force.toml", head + '[[formations]]\nname = ["a"]' + tail)
    matrix = _write(tmp_path / "m.toml", f'attackers = ["force.toml"]\ndefenders = ["{WARBAND}"]\n')
    code, _, err = run_cli("matrix", matrix, "-n", "4096")
    assert_one_line_error(code, err, "force.toml", "name")
    empty_base = _write(tmp_path / "b.toml", f'attackers = ["{TACTICAL}"]\ndefenders = ["{WARBAND}"]\nbase = ""\n')
    code, _, err = run_cli("matrix", empty_base, "-n", "4096")
    assert_one_line_error(code, err, "base")
    cell = (f'title = "r"\n[[cells]]\nkind = "matrix"\nname = "m"\nbase = ""\n'
            f'attackers = ["{TACTICAL}"]\ndefenders = ["{WARBAND}"]\n')
    with pytest.raises(UserError, match="base"):
        load_report(_write(tmp_path / "r.toml", cell))


def test_an_error_in_a_referenced_file_names_the_referencing_key(tmp_path):
    """option_a = "" is the definition's folder: the message names option_a, not only the folder."""
    code, _, err = run_cli("compare", _write(tmp_path / "c.toml", _compare([WARBAND]).replace(TACTICAL, "")))
    assert_one_line_error(code, err, "option_a")
    missing = _write(tmp_path / "d.toml", _compare([WARBAND]).replace(TACTICAL, "missing.toml"))
    code, _, err = run_cli("compare", missing)
    assert_one_line_error(code, err, "option_a", "missing.toml", "file not found")


def test_t9a_table_bounds():
    """Advance Rates and distances within the scenario bounds; charge_table([nan]) is the project's one-line error."""
    for args in (["--advance-rates", "1e300", "--distances", "4"], ["--advance-rates", "4", "--distances", "1e300"],
                 ["--advance-rates", "-1", "--distances", "4"]):
        code, _, err = run_cli("t9a-table", *args, "--json")
        assert_one_line_error(code, err, args[0] if "e300" in args[1] or args[1] == "-1" else args[2])
    for distances, rates in (([float("nan")], [4]), ([4], [1e300]), ([4], [float("inf")])):
        with pytest.raises(UserError, match="charge_table"):
            t9a.charge_table(distances, rates)


@pytest.mark.parametrize("call", [
    lambda: t9a.trace(t9a.load(T9A), seed=-1), lambda: t9a.trace(t9a.load(T9A), seed=1.5),
    lambda: gdb.trace(gdb.load(SCENARIOS / "gdb" / "cavalry_vs_square.toml"), seed=-1),
    lambda: t9a.simulate(None, trials=4096), lambda: t9a.load(None), lambda: epic.load(None), lambda: gdb.load(3),
    lambda: t9a.loads(None), lambda: t9a.simulate(t9a.load(T9A), trials=4096, cell=("a",)),
    lambda: t9a.simulate(t9a.load(T9A), trials=4096, cell=(-1,)),
    lambda: t9a.simulate(t9a.load(T9A), trials=4096, cell=(1.5,)),
    lambda: t9a.simulate(t9a.load(T9A), trials=4096, cell="a"),
], ids=["trace-seed-negative", "trace-seed-float", "gdb-trace-seed", "simulate-None", "load-None", "epic-load-None",
        "load-int", "loads-None", "cell-text", "cell-negative", "cell-float", "cell-str"])
def test_api_entry_points_check_their_arguments_like_simulate(call):
    """trace, simulate, load and loads refuse a bad seed, scenario or cell with the project's ArgumentError
    (not numpy's ValueError, a bare TypeError, or reading file descriptor 3)."""
    with pytest.raises(ArgumentError):
        call()


def test_a_utf8_byte_order_mark_is_accepted(tmp_path):
    path = tmp_path / "bom.toml"
    path.write_bytes(b"\xef\xbb\xbf" + T9A.read_bytes())
    assert t9a.load(path).title == t9a.load(T9A).title


@pytest.mark.parametrize("flag", [["--json"], ["--csv"], ["--precision", "0.05"], ["--distributions"], ["--at-least"],
                                  ["--threads", "2"], ["--trials", "10"], ["--plot", "x.png"]])
def test_trace_refuses_the_flags_it_would_ignore(tmp_path, flag):
    if flag[0] == "--plot":
        flag = ["--plot", tmp_path / "x.png"]
    code, out, err = run_cli("t9a", T9A, "--trace", *flag)
    assert_one_line_error(code, err, "--trace", str(flag[0]))
    assert out == ""


def test_a_scheduler_where_nothing_listens_fails_in_a_few_seconds():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # free: nothing listens there once closed
    start = time.monotonic()
    code, _, err = run_cli("sweep", T9A, "chargers[0].distance", "7", "--scheduler", f"tcp://127.0.0.1:{port}")
    assert_one_line_error(code, err, "--scheduler", "cannot connect")
    assert time.monotonic() - start < 15


def test_report_and_command_line_seeds_share_one_range(tmp_path):
    """The largest seed a report definition can hold is the largest the command line and the API take:
    2**53 - 1, the largest whole number TOML, JSON and a browser all hold exactly."""
    top = runner.MAX_SEED
    assert top == 2**53 - 1
    definition = (f'title = "r"\nseed = {top}\ntrials = 4096\n'
                  '[[cells]]\nkind = "scenario"\nname = "a"\nscenario = "t9a/single_charge_9in"\n')
    assert load_report(_write(tmp_path / "r.toml", definition)).model.seed == top
    code, _, err = run_cli("t9a", T9A, "-n", "4096", "--seed", str(top + 1))
    assert_one_line_error(code, err, "--seed")
    with pytest.raises(ArgumentError):
        t9a.simulate(t9a.load(T9A), trials=4096, seed=top + 1)
    assert json.loads(run_cli("t9a", T9A, "-n", "4096", "--seed", str(top), "--json")[1])["seed"] == top
