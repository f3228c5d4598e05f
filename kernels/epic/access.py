"""Memory access and bit primitives of the Epic kernel: one-load reads and writes of a flat array (``_at``,
``_put``), popcount and lowest set bit of a unit mask, and ``_min`` / ``_max``.

``_at`` and ``_put`` check their index like ``a[i]`` when the function is compiled with bounds checking
(``NUMBA_BOUNDSCHECK=1``: ``make check-bounds``), and not otherwise.

Builtin min / max compile to calls (which spill every register): these small functions are inlined by LLVM
instead.  No helper uses Numba's IR-level ``inline="always"``: it made Numba type every helper again at each
call site (~170 s CPU and 1.6 GB for a cold compile, against ~100 s and 0.5 GB).
"""
import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

from ..jit import njit

#: The decorator of the kernel's functions: cached, and compiled without reference counting (no function of the
#: kernel allocates: every array it touches is a view the driver made).
kernel_function = njit(cache=True, _nrt=False)

_ZERO = np.uint64(0)


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
    ary = context.make_array(signature.args[0])(context, builder, args[0])
    idx = context.cast(builder, args[1], signature.args[1], types.intp)
    if context.enable_boundscheck:
        cgutils.do_boundscheck(context, builder, idx, ary.nitems, 0)
    return ary, idx


@intrinsic
def _at(typingctx, a, i):
    """``a.flat[i]`` of a C-contiguous integer array, for ``0 <= i < a.size``: one load, without the
    negative-index wraparound and shape reads of ``a[...]`` (which, for the ~40 arrays of the block
    function, cost registers and stack reloads)."""
    def codegen(context, builder, signature, args):
        ary, idx = _element(context, builder, signature, args)
        return builder.load(builder.gep(ary.data, [idx], inbounds=True))
    return a.dtype(a, i), codegen


@intrinsic
def _put(typingctx, a, i, v):
    """``a.flat[i] = v`` (as ``_at``)."""
    def codegen(context, builder, signature, args):
        ary, idx = _element(context, builder, signature, args)
        val = context.cast(builder, args[2], signature.args[2], signature.args[0].dtype)
        builder.store(val, builder.gep(ary.data, [idx], inbounds=True))
        return context.get_dummy_value()
    return types.none(a, i, v), codegen


@kernel_function
def _min(a, b):
    return a if a < b else b


@kernel_function
def _max(a, b):
    return a if a > b else b


@kernel_function
def _bump(a, i, v):
    """``a.flat[i] += v``."""
    _put(a, i, _at(a, i) + v)
