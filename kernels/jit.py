"""``njit`` for the kernels' helpers: one compiled specialisation per function, whatever the call sites pass.

Numba compiles a jitted function called from another one for the argument types of each call site, and a
constant argument is typed as its value (``Literal[int](1)``, ``Literal[bool](True)``), int32 apart from
int64: the Epic kernel's helpers were compiled 61 times for 22 functions, each compile typing the helper
again and running LLVM on its own module before the caller's module ran it once more.  A function made by
this ``njit`` is compiled for its callers' argument types with literal values dropped and signed integer
scalars widened to int64 (the call site converts, as for any Numba call), so in practice once: the values
it computes are the same, and LLVM still inlines it where that pays.

A helper is compiled without the wrappers that let Python call it (the CPython and C wrappers unbox every
argument: code Numba lowers, optimises and generates for each helper, and that LLVM finds unused); only
the functions made with ``from_python=True`` (the kernels' entry points) have them, and calling another one
from Python raises TypeError.
"""
import numba
from numba.core import types
from numba.core.registry import CPUDispatcher
from numba.np.ufunc import parallel


def _widened(arg_type: types.Type) -> types.Type:
    arg_type = types.unliteral(arg_type)
    return types.int64 if isinstance(arg_type, types.Integer) and arg_type.signed else arg_type


class OneSignatureDispatcher(CPUDispatcher):
    """A CPU dispatcher that jitted callers reach through the widened argument types (see the module)."""

    def get_call_template(self, args, kws):
        return super().get_call_template(tuple(_widened(a) for a in args), {k: _widened(v) for k, v in kws.items()})


class HelperDispatcher(OneSignatureDispatcher):
    """A :class:`OneSignatureDispatcher` compiled without the wrappers for calls from Python (see the module)."""

    def __call__(self, *args, **kwargs):
        raise TypeError(f"{self.py_func.__module__}.{self.py_func.__qualname__} is called from jitted code only "
                        "(kernels.jit.njit without from_python=True)")

    def compile(self, sig):
        """Numba's compile, with the on-disk cache enabled first for a helper made with ``cache=True``."""
        if self._cache_on_first_compile:
            self._cache_on_first_compile = False
            self.enable_caching()
        return super().compile(sig)


def njit(cache: bool = False, from_python: bool = False, **options):
    """``numba.njit(cache=..., **options)`` (used as ``@njit(...)``) making an :class:`OneSignatureDispatcher`:
    with ``from_python`` one that Python calls too, otherwise a :class:`HelperDispatcher`."""
    def wrap(func):
        if from_python:
            dispatcher = OneSignatureDispatcher(py_func=func, locals={},
                                                targetoptions=dict(options, nopython=True, boundscheck=None))
        else:
            dispatcher = HelperDispatcher(py_func=func, locals={},
                                          targetoptions=dict(options, nopython=True, boundscheck=None,
                                                             no_cpython_wrapper=True, no_cfunc_wrapper=True))
        if cache and from_python:
            dispatcher.enable_caching()
        elif not from_python:
            dispatcher._cache_on_first_compile = cache
        return dispatcher
    return wrap


def thread_count() -> int:
    """Numba's thread count (``NUMBA_NUM_THREADS``, or what ``numba.set_num_threads`` set) without starting
    Numba's thread pool, which ``numba.get_num_threads()`` does first (about 0.1 s): the Epic kernel runs its
    blocks on Python threads and needs only the number."""
    return numba.get_num_threads() if parallel._is_initialized else numba.config.NUMBA_NUM_THREADS
