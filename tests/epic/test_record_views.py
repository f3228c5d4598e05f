"""The Epic kernel's record views (NamedTuples built in jitted code, where they are built by position): every
positional argument of a constructor call is the field of that name, so that a field added, removed or moved in
``kernels/epic/layout.py`` or ``turn_layout.py`` cannot shift the arrays a step reads (issue 39 §3)."""
import ast
from pathlib import Path

import pytest

from wargame_odds.kernels.epic import layout, turn_layout

KERNEL = Path(__file__).resolve().parents[2] / "kernels" / "epic"

RECORDS = {name: cls for module in (layout, turn_layout) for name, cls in vars(module).items()
           if isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields")}

# Arguments that are not an attribute or variable of the field's name: (record, field) -> the argument's source.
DERIVED = {
    ("Fight", "turn"): "tb.rules[R_TURN] != 0",
    ("Fight", "broken0"): "st.per_form[FR_BROKEN0]",
    ("ShotScratch", "rows"): "scr[o:o + PL_ROWS * L]",
    ("Run", "n_trials"): "min(BLOCK_TRIALS, blocks.n_trials - b * BLOCK_TRIALS)",
    ("Run", "first_trial"): "(blocks.first_block + b) * BLOCK_TRIALS",
}


def _calls():
    """(module, line, record, the call) for every call of a record view in the kernel."""
    for path in sorted(KERNEL.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in RECORDS:
                yield path.name, node.lineno, node.func.id, node


def _named(argument: ast.expr) -> str | None:
    """The name an argument carries: ``x`` or ``a.b.x`` -> ``x``."""
    if isinstance(argument, ast.Name):
        return argument.id
    if isinstance(argument, ast.Attribute):
        return argument.attr
    return None


def test_the_records_are_found():
    assert {"Fight", "Damage", "WeHits", "ShotScratch", "Shot", "Aim"} <= {record for *_, record, _ in _calls()}


@pytest.mark.parametrize("module, line, record, call", list(_calls()),
                         ids=lambda v: str(v) if isinstance(v, (str, int)) else "")
def test_positional_arguments_are_the_fields_of_their_names(module, line, record, call):
    fields = RECORDS[record]._fields
    assert len(call.args) + len(call.keywords) == len(fields), f"{module}:{line} {record}: one argument per field"
    for field, argument in zip(fields, call.args):
        expected = DERIVED.get((record, field))
        got = ast.unparse(argument)
        if expected is not None:
            assert got == expected, f"{module}:{line} {record}.{field} = {got}"
        else:
            assert _named(argument) == field, f"{module}:{line} {record}.{field} = {got}"
    for keyword in call.keywords:
        assert keyword.arg in fields, f"{module}:{line} {record}: no field {keyword.arg}"
