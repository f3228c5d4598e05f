"""Issue 39 §5 (plain-Numba cold compile of the turn variant): no function of the Epic kernel passes another jitted
function of the kernel a Python int or bool constant.  Plain Numba (``WARGAME_ODDS_PLAIN_NUMBA=1``) types such a
constant as its literal value (``Literal[int](0)``, ``Literal[bool](True)``) and compiles the callee once more for
each value; the kernel passes np.int64 / np.bool_ values instead (``access.INT0``, ``INT1``, ``ANY``, ``TRUE``,
``FALSE``, and its codes made with ``layout._int64s``).  Read from the sources, so it covers every call site, not only
those a scenario compiles; a variable that starts as a literal is not seen here (``make bench``'s cold compiles check
that each function compiled once: benchmarks/compile_cost.py)."""
import ast
import importlib
from pathlib import Path

import pytest
from numba.core.dispatcher import Dispatcher

KERNEL = Path(__file__).resolve().parents[2] / "kernels" / "epic"
MODULES = sorted(path.stem for path in KERNEL.glob("*.py") if path.stem != "__init__")


def _literal(arg: ast.expr, module, local: set[str]) -> str | None:
    """What makes ``arg`` a Python int or bool constant (its source), or None."""
    if isinstance(arg, ast.UnaryOp) and isinstance(arg.op, ast.USub):
        arg = arg.operand
    if isinstance(arg, ast.Constant) and type(arg.value) in (int, bool):
        return ast.unparse(arg)
    if isinstance(arg, ast.Name) and arg.id not in local and type(getattr(module, arg.id, None)) in (int, bool):
        return f"{arg.id} = {getattr(module, arg.id)!r}"
    return None


def _local_names(function: ast.FunctionDef) -> set[str]:
    names = {a.arg for a in function.args.args}
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


def literal_arguments(name: str) -> list[str]:
    """``file:line callee(argument)`` for each jitted function's call of a jitted function with a literal argument."""
    module = importlib.import_module(f"wargame_odds.kernels.epic.{name}")
    path = KERNEL / f"{name}.py"
    found = []
    for function in ast.walk(ast.parse(path.read_text())):
        if not (isinstance(function, ast.FunctionDef) and isinstance(getattr(module, function.name, None), Dispatcher)):
            continue
        local = _local_names(function)
        for call in ast.walk(function):
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
                    and isinstance(getattr(module, call.func.id, None), Dispatcher)):
                continue
            for arg in call.args + [k.value for k in call.keywords]:
                what = _literal(arg, module, local)
                if what is not None:
                    found.append(f"kernels/epic/{name}.py:{call.lineno} {call.func.id}({what})")
    return found


@pytest.mark.parametrize("name", MODULES)
def test_no_jitted_call_passes_a_literal_int_or_bool(name):
    """Issue 39 §5: every argument a kernel function passes to another is typed int64 / bool, not as its value."""
    assert literal_arguments(name) == []


def test_the_check_sees_a_literal_argument(tmp_path, monkeypatch):
    """The check finds a literal, a negative literal, a bool and a module's int constant, and not an np.int64 one."""
    (tmp_path / "literal_calls.py").write_text(
        "import numpy as np\nfrom numba import njit\nROW = 3\nROW64 = np.int64(3)\n\n"
        "@njit\ndef helper(a, b):\n    return a + b\n\n"
        "@njit\ndef caller(x):\n    y = 0\n    return helper(x, 1) + helper(x, -1) + helper(x, True) + helper(x, ROW) "
        "+ helper(x, ROW64) + helper(x, y)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("literal_calls")
    function = next(f for f in ast.walk(ast.parse((tmp_path / "literal_calls.py").read_text()))
                    if isinstance(f, ast.FunctionDef) and f.name == "caller")
    local = _local_names(function)
    calls = [c for c in ast.walk(function) if isinstance(c, ast.Call)]
    found = [_literal(c.args[1], module, local) for c in sorted(calls, key=lambda c: c.col_offset)]
    assert found == ["1", "1", "True", "ROW = 3", None, None]
