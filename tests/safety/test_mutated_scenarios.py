"""Property test (issue 13 §3): any mutation of a shipped example scenario of any system -- a key
deleted, a value of the wrong type, an extreme number, inf or nan, an unknown key, garbage bytes --
ends with exit status 0 or 2, no traceback, at most 3 lines on stderr, in bounded time and memory.

Fixed seed (``derandomize``) and a bounded example count, run in-process through click's runner;
a valid mutation runs 4096 kernel trials.
"""
import math
import resource
import time
import tomllib

from click.testing import CliRunner
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from wargame_odds.analysis.cli import main
from wargame_odds.analysis.reports.definition import to_toml

from safety_helpers import SCENARIOS, toml_parent as _parent, toml_paths as _paths

EXAMPLES = sorted(p for system in ("epic", "gdb", "t9a") for p in (SCENARIOS / system).glob("*.toml"))
EXTREMES = [0, -1, 2**31, -(2**31), 10**9, 10**30, 1e308, -1e308, 1e-300, math.inf, -math.inf, math.nan]
WRONG_TYPES = ["", "x" * 300, True, [], [1, "a"], {}, {"k": 1}, 1.5, 7]
MAX_SECONDS = 60  # one example, on a busy machine
MAX_RSS_KIB = 4 * 1024 * 1024


@st.composite
def mutated(draw):
    """(system, file bytes) for one mutation of one shipped example."""
    source = draw(st.sampled_from(EXAMPLES))
    data = tomllib.loads(source.read_text())
    kind = draw(st.sampled_from(["delete", "wrong_type", "extreme", "unknown_key", "garbage"]))
    if kind == "garbage":
        text = source.read_bytes()
        at = draw(st.integers(0, len(text)))
        return source.parent.name, text[:at] + draw(st.binary(min_size=1, max_size=40)) + text[at:]
    paths = list(_paths(data))
    path, value = draw(st.sampled_from(paths))
    parent = _parent(data, path)
    if kind == "delete":
        del parent[path[-1]]
    elif kind == "wrong_type":
        parent[path[-1]] = draw(st.sampled_from(WRONG_TYPES))
    elif kind == "extreme":
        numeric = [(p, v) for p, v in paths if isinstance(v, (int, float)) and not isinstance(v, bool)]
        path, _ = draw(st.sampled_from(numeric or [(path, value)]))
        _parent(data, path)[path[-1]] = draw(st.sampled_from(EXTREMES))
    else:
        tables = [(p, v) for p, v in paths if isinstance(v, dict)] or [((), data)]
        _, table = draw(st.sampled_from(tables))
        key = draw(st.sampled_from(["zz_unknown", "count", "name", "x" * 250]))
        table[key] = draw(st.sampled_from(EXTREMES + WRONG_TYPES))
    return source.parent.name, to_toml(data).encode("utf-8")


@settings(max_examples=150, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(case=mutated())
def test_any_mutated_example_exits_0_or_2_with_at_most_3_lines(tmp_path_factory, case):
    system, content = case
    path = tmp_path_factory.mktemp("mutated") / "scenario.toml"
    path.write_bytes(content)
    args = [system, str(path), "--seed", "1", "--trials", "4096", "--json"]
    start = time.monotonic()
    result = CliRunner().invoke(main, args)
    took = time.monotonic() - start
    event(f"{system} exit {result.exit_code}")
    detail = f"{args}\n{content[:2000]!r}\n{result.stderr}"
    assert result.exception is None or isinstance(result.exception, SystemExit), detail
    assert result.exit_code in (0, 2), detail
    assert "Traceback" not in result.stderr and len(result.stderr.splitlines()) <= 3, detail
    assert took < MAX_SECONDS, detail
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss < MAX_RSS_KIB, detail
