"""Memory access and bit primitives of the Epic kernel: one-load reads and writes of a flat array (``_at``,
``_put``, ``_cell``), popcount and lowest set bit of a unit mask, and ``_min`` / ``_max``.

``_at`` and ``_put`` check their index like ``a[i]`` when the function is compiled with bounds checking
(``NUMBA_BOUNDSCHECK=1``: ``make check-bounds``), and not otherwise.

Builtin min / max compile to calls (which spill every register): ``_min`` / ``_max`` are a compare and a select
instead.  They and ``_cell`` are intrinsics, not jitted functions: plain Numba compiles a jitted function
once per set of argument types its call sites pass (a constant typed as its value, int32 apart from int64), and
these three are called with every kind of integer; an intrinsic is code generated at the call site.  No small
helper uses Numba's IR-level ``inline="always"``: it made Numba type every helper again at each call site (~170 s
CPU and 1.6 GB for a cold compile, against ~100 s and 0.5 GB); only the few functions called from one place are
inlined, in plain mode (``inlined_function``).
"""
import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

from ..jit import PLAIN, njit

#: The decorator of the kernel's functions: cached, and compiled without reference counting (no function of the
#: kernel allocates: every array it touches is a view the driver made).
kernel_function = njit(cache=True, _nrt=False)

#: The decorator of a kernel function called from one place that calls others.  In plain mode Numba inlines its IR
#: into its caller (``inline="always"``), so that it has no compiled library of its own: plain Numba optimises each
#: library with all it links and generates machine code for the whole again, so every level of the call tree above
#: the shooting and the assault cost those again, a third of the turn variant's plain cold compile
#: (docs/performance.md, "Plain mode's cold compile").  In the extended mode it is a helper like the others (linked,
#: optimised once): inlined, its caller's analyses took longer than the levels saved (the turn variant 55 -> 68 s).
inlined_function = njit(cache=True, _nrt=False, inline="always") if PLAIN else kernel_function

_ZERO = np.uint64(0)

#: 0, 1 and -1 as np.int64 values (``ANY``: "every kind" or "every formation" to the unit-set counts), True and False
#: as np.bool_ values: the constants kernel functions pass to helpers.  Plain Numba types an int or bool constant as
#: its literal value and compiles the helper once per value; these are typed int64 and bool, so a helper compiles
#: once (docs/performance.md, "Plain mode's cold compile").
INT0, INT1, ANY = np.int64(0), np.int64(1), np.int64(-1)
TRUE, FALSE = np.True_, np.False_


@intrinsic
def _popcount(typingctx, x):
    """Set bits of a uint64 (LLVM ctpop), as int64."""
    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])
    return types.int64(types.uint64), codegen


@intrinsic
def _lowest_bit(typingctx, x):
    """Index of the lowest set bit of a non-zero uint64 (LLVM cttz), as int64."""
    def codegen(context, builder, signature, args):
        return builder.cttz(args[0], ir.Constant(ir.IntType(1), 1))
    return types.int64(types.uint64), codegen


def _element(context, builder, signature, args):
    """(the array, the flat index) of ``_at`` / ``_put``; under bounds checking (``context.enable_boundscheck``:
    the function's ``boundscheck`` option or ``NUMBA_BOUNDSCHECK``) an index outside ``0 <= i < a.size`` raises
    IndexError, as ``a[i]`` does."""
    return _checked(context, builder, signature.args[0], args[0],
                    context.cast(builder, args[1], signature.args[1], types.intp))


def _checked(context, builder, array_type, array, idx):
    """(the array, ``idx``), ``idx`` checked under bounds checking (:func:`_element`)."""
    ary = context.make_array(array_type)(context, builder, array)
    if context.enable_boundscheck:
        cgutils.do_boundscheck(context, builder, idx, ary.nitems, 0)
    return ary, idx


@intrinsic
def _at(typingctx, a, i):
    """``a.flat[i]`` of a C-contiguous integer array, for ``0 <= i < a.size``: one load, without the
    negative-index wraparound and shape reads of ``a[...]`` (which, for the ~40 arrays of the block
    function, cost registers and stack reloads).  An element of a narrower signed integer array (the int32 lane
    rows) is read as int64, the type Numba computes any integer arithmetic in, so the helpers it is passed to are
    compiled for int64 only (the module's docstring)."""
    def codegen(context, builder, signature, args):
        return _load(context, builder, signature.args[0], *_element(context, builder, signature, args))
    return _read_type(a.dtype)(a, i), codegen


@intrinsic
def _cell(typingctx, a, row, cols, col):
    """``a[row, col]`` of a C-contiguous table of ``cols`` columns: ``a.flat[row * cols + col]``, one load (as
    ``_at``), without the index wraparound and the shape and stride reads of ``a[row, col]``."""
    def codegen(context, builder, signature, args):
        row, cols, col = (context.cast(builder, v, t, types.intp) for v, t in zip(args[1:], signature.args[1:]))
        return _load(context, builder, signature.args[0],
                     *_checked(context, builder, signature.args[0], args[0], builder.add(builder.mul(row, cols), col)))
    return _read_type(a.dtype)(a, row, cols, col), codegen


def _read_type(dtype):
    """The type ``_at`` / ``_cell`` read an element of ``dtype`` as: int64 for a narrower signed integer."""
    return types.int64 if isinstance(dtype, types.Integer) and dtype.signed and dtype.bitwidth < 64 else dtype


def _load(context, builder, array_type, ary, idx):
    """The element ``idx`` of ``ary`` (an array of ``array_type``), as :func:`_read_type` has it."""
    value = builder.load(builder.gep(ary.data, [idx], inbounds=True))
    return context.cast(builder, value, array_type.dtype, _read_type(array_type.dtype))


@intrinsic
def _put(typingctx, a, i, v):
    """``a.flat[i] = v`` (as ``_at``)."""
    def codegen(context, builder, signature, args):
        ary, idx = _element(context, builder, signature, args)
        val = context.cast(builder, args[2], signature.args[2], signature.args[0].dtype)
        builder.store(val, builder.gep(ary.data, [idx], inbounds=True))
        return context.get_dummy_value()
    return types.none(a, i, v), codegen


def _integer_pair(typingctx, a, b):
    """The type both integers ``a``, ``b`` compare and return in (as Numba's ``a if a < b else b`` has it), or None
    (not two integers of one signedness: no signature)."""
    a, b = types.unliteral(a), types.unliteral(b)
    if not (isinstance(a, types.Integer) and isinstance(b, types.Integer)):
        return None
    both = typingctx.unify_types(a, b)
    return both if isinstance(both, types.Integer) else None


def _select(less_wins):
    """Code of ``a if a < b else b`` (``less_wins``) or ``a if a > b else b``, both converted to the result type."""
    def codegen(context, builder, signature, args):
        to = signature.return_type
        a, b = (context.cast(builder, v, t, to) for v, t in zip(args, signature.args))
        compare = builder.icmp_signed if to.signed else builder.icmp_unsigned
        return builder.select(compare("<" if less_wins else ">", a, b), a, b)
    return codegen


@intrinsic
def _min(typingctx, a, b):
    """The lesser of two integers."""
    both = _integer_pair(typingctx, a, b)
    return None if both is None else (both(a, b), _select(less_wins=True))


@intrinsic
def _max(typingctx, a, b):
    """The greater of two integers."""
    both = _integer_pair(typingctx, a, b)
    return None if both is None else (both(a, b), _select(less_wins=False))


@kernel_function
def _bump(a, i, v):
    """``a.flat[i] += v``."""
    _put(a, i, _at(a, i) + v)
