"""The Epic kernel's memory-access intrinsics (``kernels/epic/access.py``) against plain Python and NumPy: ``_min`` /
``_max`` as ``a if a < b else b`` over signed and unsigned integers of every width and literals, ``_cell`` as
``table[row, col]``, ``_at`` reading an int32 element as int64 (issue 39 §5: plain Numba compiles a helper once per
argument type, so the kernel's reads give one integer type).  Exact, over enumerated values."""
import itertools

import numpy as np
import pytest
from numba import njit, typeof

from wargame_odds.kernels.epic.access import _at, _cell, _max, _min

VALUES = [-(2**40), -7, -1, 0, 1, 6, 2**40]


def _returns(dispatcher, *args) -> tuple[str, ...]:
    """The names of the types ``dispatcher`` compiled for ``args`` returns (a tuple)."""
    return tuple(t.name for t in dispatcher.overloads[tuple(typeof(a) for a in args)].signature.return_type)


@njit(cache=True)
def _min_max(a, b):
    return _min(a, b), _max(a, b)


@njit(cache=True)
def _with_literals(a, b):
    return _min(a, 3), _max(-2, b)


@pytest.mark.parametrize("ta, tb", [(np.int64, np.int64), (np.int32, np.int64), (np.int64, np.int32),
                                    (np.int32, np.int32), (np.uint64, np.uint64)])
def test_min_max_are_the_lesser_and_greater_of_two_integers(ta, tb):
    """``_min(a, b)`` / ``_max(a, b)``: Python's min / max of the two values, of the type Numba gives
    ``a if a < b else b``: int32 for two int32, int64 for int32 with int64 (or with an int literal), uint64 for two
    uint64."""
    signed = ta is not np.uint64
    both = "int32" if ta is tb is np.int32 else "int64" if signed else "uint64"
    info = [np.iinfo(ta), np.iinfo(tb)]
    for a, b in itertools.product(VALUES, VALUES):
        if not all(i.min <= v <= i.max for i, v in zip(info, (a, b))):
            continue
        got = _min_max(ta(a), tb(b))
        assert [int(v) for v in got] == [min(a, b), max(a, b)]
        assert _returns(_min_max, ta(a), tb(b)) == (both, both)
        if signed:
            assert [int(v) for v in _with_literals(ta(a), tb(b))] == [min(a, 3), max(-2, b)]


@njit(cache=True)
def _read(table, flat, row, col):
    return _cell(table, row, table.shape[1], col), _at(flat, row * table.shape[1] + col)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint64])
def test_cell_and_at_read_an_element_a_narrow_signed_one_as_int64(dtype):
    """``_cell(table, row, cols, col)`` is ``table[row, col]`` and ``_at`` the same element of the flat view; an
    element of an int32 array comes back as int64 (the lane rows), one of a uint64 array as uint64."""
    table = (np.arange(24, dtype=np.int64).reshape(4, 6) * (-1 if dtype is np.int32 else 3)).astype(dtype)
    for row, col in itertools.product(range(4), range(6)):
        cell, at = _read(table, table.ravel(), row, col)
        assert int(cell) == int(at) == int(table[row, col])
    assert _returns(_read, table, table.ravel(), 0, 0) == ("uint64" if dtype is np.uint64 else "int64",) * 2
