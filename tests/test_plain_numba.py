"""Issue 27 §4 "Numba, plainly": the kernels' extended Numba mode (kernels/link_only.py) has a switch back to plain
``numba.njit`` that gives the same numbers, a fallback to it on a Numba whose internals differ, and nothing of Numba
is replaced (issue 38 §7: cached kernels load as Numba loads them), no cache file removed when a module is merely
imported.

The Epic kernel's plain cold compile (48 s of CPU for the assault variant, 91 s for the turn variant, measured on
the quiet 2-core machine: docs/performance.md, "Plain mode's cold compile") is too slow for the suite:
``make check-plain-numba`` (scripts/check_plain_numba.py) compares every shipped kernel scenario, Epic included, in
both modes (docs/numba.md).
Here: GdB and T9A scenarios both ways, and helpers made by ``wargame_odds.kernels.jit.njit`` (the Epic kernel's) both
ways.
"""
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from wargame_odds.kernels.jit import EXTENDED_MODE_INTERNALS, missing_internals

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "analysis" / "scenarios"
#: Small runs of the GdB and T9A kernels, printed as JSON.
RUNS = [("gdb", SCENARIOS / "gdb" / "column_vs_line.toml", 4000),
        ("t9a", SCENARIOS / "t9a" / "flee_reaction.toml", 4000)]

#: Prints, one per line: the plain flag, whether Numba's functions are its own, the kind of the Epic block
#: function's dispatcher, then each run's JSON.
_REPORT = """
import json, sys
{before}
from wargame_odds import analysis
from wargame_odds.kernels.jit import EXTENDED_MODE_INTERNALS, _find
def numba_own():
    found = []
    for path in EXTENDED_MODE_INTERNALS:
        try:
            found.append(_find(path))
        except (ImportError, AttributeError):  # taken away by a test
            pass
    return bool(found) and all(f.__module__.startswith("numba.") for f in found)
own_after_import = numba_own()
results = [getattr(analysis, system).simulate(getattr(analysis, system).load(path), trials=trials, seed=11,
                                              progress=False).to_json() for system, path, trials in {runs!r}]
from wargame_odds.kernels import jit
from wargame_odds.kernels.epic import block
print(json.dumps([jit.PLAIN, own_after_import, numba_own(), type(block._run_block).__name__]))
for r in results:
    print(r)
"""


def _child(runs, plain: str = "0", before: str = "") -> subprocess.CompletedProcess:
    env = dict(os.environ, WARGAME_ODDS_PLAIN_NUMBA=plain)
    code = _REPORT.format(before=before, runs=[(s, str(p), n) for s, p, n in runs])
    child = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=900)
    assert child.returncode == 0, child.stderr[-3000:]
    return child


def test_plain_numba_gives_the_same_numbers_and_replaces_nothing():
    """§4: with WARGAME_ODDS_PLAIN_NUMBA=1 the Epic kernel's functions are plain numba.njit dispatchers, and a GdB and a
    T9A scenario give byte-identical JSON to the extended mode's; in neither mode is a function of Numba replaced
    (none of those the extended mode builds on, neither on import nor when the kernels run)."""
    extended, plain = _child(RUNS), _child(RUNS, plain="1")
    assert json.loads(extended.stdout.splitlines()[0]) == [False, True, True, "OneSignatureDispatcher"]
    assert json.loads(plain.stdout.splitlines()[0]) == [True, True, True, "CPUDispatcher"]
    assert plain.stdout.splitlines()[1:] == extended.stdout.splitlines()[1:]
    assert len(plain.stdout.splitlines()) == 1 + len(RUNS)
    assert "note:" not in plain.stderr  # asked for: no fallback note


def test_a_numba_without_an_internal_falls_back_to_plain_mode_with_one_note():
    """§4: a Numba lacking an internal the extended mode uses (here CompileResultCacheImpl, taken away before the
    program is imported) runs in plain mode by itself, says so once on stderr in one line naming what is
    missing, and gives the same numbers."""
    runs = RUNS + RUNS  # two runs of each: one note
    missing = "import numba.core.caching\ndel numba.core.caching.CompileResultCacheImpl"
    fallback, extended = _child(runs, before=missing), _child(runs)
    assert json.loads(fallback.stdout.splitlines()[0]) == [True, True, True, "CPUDispatcher"]
    assert fallback.stdout.splitlines()[1:] == extended.stdout.splitlines()[1:]
    notes = [line for line in fallback.stderr.splitlines() if line.startswith("note:")]
    assert len(notes) == 1, fallback.stderr
    assert "numba.core.caching:CompileResultCacheImpl" in notes[0] and "WARGAME_ODDS_PLAIN_NUMBA=1" in notes[0]


def test_missing_internals_names_each_difference():
    """§4 'check for the internals you use': a callable that is missing, one whose parameters are named otherwise,
    a module that is not there, an attribute a constructor no longer sets; none missing on the installed Numba."""
    assert missing_internals() == []
    assert len(EXTENDED_MODE_INTERNALS) > 20
    callables = {"numba.core.caching:Cache.load_overload": ("self", "sig", "target_context"),
                 "numba.core.caching:Cache.no_such_method": ("self",),
                 "numba.core.caching:Cache._load_overload": ("self", "signature"),
                 "numba.no_such_module:f": ()}
    attributes = {"numba.core.caching:Cache.__init__": ("_py_func", "_no_such_attribute"),
                  "numba.core.compiler:CompileResult": ("fndesc", "no_such_field")}
    assert missing_internals(callables, attributes) == [
        "numba.core.caching:Cache.no_such_method", "numba.core.caching:Cache._load_overload(self, signature)",
        "numba.no_such_module:f", "numba.core.caching:Cache.__init__ (_no_such_attribute)",
        "numba.core.compiler:CompileResult (no_such_field)"]


def test_importing_the_program_replaces_nothing_and_deletes_no_cache_file(tmp_path):
    """§4: importing ``analysis``, ``wargame_odds.analysis.output.result`` (and the Epic, GdB and T9A modules) removes
    no stale cache file; preparing a kernel run (wargame_odds.analysis.run.numba_cache.prepare_kernels, which every run
    calls first) removes it; neither replaces a function of Numba (issue 38 §7)."""
    code = textwrap.dedent("""
        import json
        from pathlib import Path
        from numba.core import caching
        import wargame_odds.analysis, wargame_odds.analysis.output.result, wargame_odds.analysis.epic
        import wargame_odds.analysis.gdb, wargame_odds.analysis.t9a
        from wargame_odds.analysis.run.numba_cache import cache_folder, prepare_kernels
        folder = cache_folder()
        folder.mkdir(parents=True, exist_ok=True)
        stale = folder / "gdb.run_blocks-1.py311.nbi"
        stale.write_bytes(b"stale")
        import wargame_odds.analysis.run.runner, wargame_odds.analysis.decisions
        seen = [stale.exists(), caching.Cache.load_overload.__module__]
        prepare_kernels()
        print(json.dumps(seen + [stale.exists(), caching.Cache.load_overload.__module__]))
    """)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), WARGAME_ODDS_PLAIN_NUMBA="0")
    child = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert child.returncode == 0, child.stderr
    assert json.loads(child.stdout) == [True, "numba.core.caching", False, "numba.core.caching"]


@pytest.mark.parametrize("cache_class", ["ExtendedFunctionCache", "LinkOnlyCache"])
def test_the_modes_keep_apart_in_one_cache_folder(cache_class):
    """§4: the extended mode keys its cache entries (entry points and helpers) apart from plain Numba's
    (wargame_odds.kernels.link_only.CACHE_KEY_TAG), so that switching modes on one cache folder never loads the other
    mode's code."""
    from numba.core.caching import FunctionCache
    from numba.core.registry import cpu_target

    from wargame_odds.kernels import link_only

    def f(x):
        return x

    codegen = cpu_target.target_context.codegen()
    numba_key = FunctionCache(f)._index_key(("int64",), codegen)
    ours = getattr(link_only, cache_class)(f)._index_key(("int64",), codegen)
    assert ours == numba_key + (link_only.CACHE_KEY_TAG,)


_HELPERS = """
import json, sys
import numpy as np
import wargame_odds.kernels.jit
from wargame_odds.kernels.jit import njit

@njit(cache=True)
def roll(a, i, flag):
    return a[i] * 3 if flag else a[i] - 1

@njit(cache=True, from_python=True)
def entry(a):
    total = 0
    for i in range(a.size):
        total += roll(a, i, True) + roll(a, np.int32(i), i % 2 == 0)
    return total

print(json.dumps([wargame_odds.kernels.jit.PLAIN, type(entry).__name__, int(entry(np.arange(7, dtype=np.int64)))]))
"""


def test_the_kernels_njit_compiles_the_same_code_plainly(tmp_path):
    """§4: ``wargame_odds.kernels.jit.njit`` (the Epic kernel's decorator) in plain mode is ``numba.njit``: a helper
    called with literals, int32 and int64 and an entry point give what the extended mode's one-signature, link-only
    helpers give, each mode compiling into its own empty cache."""
    (tmp_path / "helpers_both_ways.py").write_text(_HELPERS)  # Numba caches functions of a file only
    said = []
    for plain in ("0", "1"):
        env = dict(os.environ, WARGAME_ODDS_PLAIN_NUMBA=plain, NUMBA_CACHE_DIR=str(tmp_path / plain),
                   PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT)]))
        child = subprocess.run([sys.executable, "-c", "import helpers_both_ways"], env=env, capture_output=True,
                               text=True, timeout=300)
        assert child.returncode == 0, child.stderr[-3000:]
        said.append(json.loads(child.stdout))
    expected = sum(3 * i + (3 * i if i % 2 == 0 else i - 1) for i in range(7))
    assert said == [[False, "OneSignatureDispatcher", expected], [True, "CPUDispatcher", expected]]

