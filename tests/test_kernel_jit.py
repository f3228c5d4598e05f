"""kernels/jit.py: helpers compiled for linking only (issue 12 §1, the cold compile of the Epic kernel)."""
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

MODULE = '''
import numpy as np
from wargame_odds.kernels.jit import njit

@njit(cache=True)
def inner(a, i):
    return a[i] * 3

@njit(cache=True)
def helper(a, i):
    return inner(a, i) + a[i + 1]

@njit(cache=True, from_python=True)
def first(a):
    return helper(a, 0)

@njit(cache=True, from_python=True)
def second(a):
    return helper(a, 1) - helper(a, 0)
'''


def _run(folder: Path, code: str) -> str:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(folder / "cache"),
               PYTHONPATH=os.pathsep.join([str(folder), str(ROOT)]))
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.split()


def test_helpers_have_no_machine_code_and_link_from_the_cache(tmp_path):
    """Issue 12 §1 (cold compile): a helper's library gets no machine code of its own, and its cache entry (the
    bitcode of its optimised module) serves a caller compiled later in another process: the caller links it,
    its callee's too, and computes what Python computes."""
    (tmp_path / "jitmod.py").write_text(MODULE)
    fresh = _run(tmp_path, """
        import numpy as np, jitmod
        from wargame_odds.kernels.link_only import LinkOnlyLibrary
        print(jitmod.first(np.array([5, 7, 11])))
        for f in (jitmod.helper, jitmod.inner):
            (cres,) = f.overloads.values()
            assert isinstance(cres.library, LinkOnlyLibrary) and cres.library.get_pointer_to_function("x") == 0
        print(len(jitmod.helper.stats.cache_hits))
    """)
    assert fresh == [str(5 * 3 + 7), "0"]
    later = _run(tmp_path, """
        import numpy as np, jitmod
        print(jitmod.second(np.array([5, 7, 11])))
        print(len(jitmod.helper.stats.cache_hits), len(jitmod.inner.stats.cache_hits))
    """)
    assert later == [str((7 * 3 + 11) - (5 * 3 + 7)), "1", "0"]


def test_a_helper_entry_cached_with_machine_code_is_a_cache_miss():
    """Issue 12 §1 (cold compile): a helper's cache entry written before helpers were link-only (Numba's
    object-code kind) is not read back as one: the helper is compiled again and its entry replaced."""
    from numba.core.registry import cpu_target

    from wargame_odds.kernels.link_only import LinkOnlyCacheImpl

    payload = (("helper", "object", (b"", b"")),) + (None,) * 7 + ((),)
    assert LinkOnlyCacheImpl.rebuild(object.__new__(LinkOnlyCacheImpl), cpu_target.target_context, payload) is None
