"""The extended mode of :mod:`wargame_odds.kernels.jit`: one compiled specialisation per helper, linked into its callers
only.

Numba compiles a jitted function called from another one for the argument types of each call site, and a
constant argument is typed as its value (``Literal[int](1)``, ``Literal[bool](True)``), int32 apart from
int64: the Epic kernel's helpers were compiled 61 times for 22 functions, each compile typing the helper
again and running LLVM on its own module before the caller's module ran it once more.  A function made by
this module's ``njit`` is compiled for its callers' argument types with literal values dropped and signed
integer scalars widened to int64 (the call site converts, as for any Numba call), so in practice once: the
values it computes are the same, and LLVM still inlines it where that pays.

A helper is compiled without the wrappers that let Python call it (the CPython and C wrappers unbox every
argument: code Numba lowers, optimises and generates for each helper, and that LLVM finds unused); only
the functions made with ``from_python=True`` (the kernels' entry points) have them, and calling another one
from Python raises TypeError.

Nor does LLVM generate a helper's own machine code, nor optimise its module beyond Numba's function passes: a
jitted caller links the helper's LLVM module (with those of the helpers it calls) into its own, and only an entry
point's library runs LLVM's module optimisation (inlining, loop vectorisation) and generates machine code, once,
over the whole; the helper's own copy would never run.  Optimising each helper's module with all it links, as
Numba does, optimised the deepest helpers once for every level above them: a third of the Epic kernel's assault
variant's cold compile, half of its turn variant's.  A helper's library (:class:`LinkOnlyLibrary`) is kept for
linking only, and cached as the bitcode of that module (:class:`LinkOnlyCache`).

Every entry this mode writes to Numba's cache is keyed apart from plain Numba's (:class:`ExtendedFunctionCache`),
so that a plain-mode run (``WARGAME_ODDS_PLAIN_NUMBA=1``) never loads code this mode compiled, nor this mode
a plain one's, from the same cache folder.  These classes build on Numba internals listed in
:data:`wargame_odds.kernels.jit.EXTENDED_MODE_INTERNALS`; this module is imported only where they are all present.
"""
from llvmlite import binding as llvm
from numba.core import compiler, types
from numba.core.caching import CompileResultCacheImpl, FunctionCache
from numba.core.codegen import JITCodeLibrary
from numba.core.registry import CPUDispatcher

#: Added to the key of every cache entry of this mode (:class:`ExtendedFunctionCache`).
CACHE_KEY_TAG = "wargame-odds extended numba mode 2"


def _widened(arg_type: types.Type) -> types.Type:
    arg_type = types.unliteral(arg_type)
    return types.int64 if isinstance(arg_type, types.Integer) and arg_type.signed else arg_type


class ExtendedFunctionCache(FunctionCache):
    """Numba's function cache, its entries keyed with :data:`CACHE_KEY_TAG` besides Numba's own key."""

    def _index_key(self, sig, codegen):
        return super()._index_key(sig, codegen) + (CACHE_KEY_TAG,)


class OneSignatureDispatcher(CPUDispatcher):
    """A CPU dispatcher that jitted callers reach through the widened argument types (see the module)."""

    def get_call_template(self, args, kws):
        return super().get_call_template(tuple(_widened(a) for a in args), {k: _widened(v) for k, v in kws.items()})

    def enable_caching(self):
        self._cache = ExtendedFunctionCache(self.py_func)


class LinkOnlyLibrary(JITCodeLibrary):
    """A helper's code library: its LLVM module, optimised as Numba does it, only ever linked into its callers'
    libraries; LLVM generates no machine code for it (see the module).  ``bitcode``: the module read back from
    the cache, parsed only when a caller compiled later links it."""

    def __init__(self, codegen, name, bitcode: bytes | None = None):
        super().__init__(codegen, name)
        self._bitcode = bitcode
        self._finalized = bitcode is not None

    def _finalize_final_module(self):
        """Numba's checks of the optimised module, without adding it to the JIT engine (no machine code)."""
        self._finalize_dynamic_globals()
        self._verify_declare_only_symbols()
        self._finalized = True

    def _optimize_final_module(self):
        """Nothing: the module is linked into its callers unoptimised beyond Numba's function passes, and the entry
        point's library optimises the whole once (see the module)."""

    def _get_module_for_linking(self):
        if self._shared_module is None and self._bitcode is not None:
            self._shared_module = llvm.parse_bitcode(self._bitcode)
        return super()._get_module_for_linking()

    def get_pointer_to_function(self, name):
        """0: nothing of this library is in the JIT engine (Numba gives its dispatcher a null entry point,
        which :class:`HelperDispatcher` never calls)."""
        self._ensure_finalized()
        return 0

    @property
    def codegen(self):
        """Numba's codegen, but with nothing to set by ``set_env`` (which writes the address of the function's
        environment into its machine code; the helpers use none)."""
        return _CodegenWithoutMachineCode(self._codegen)

    def serialize_using_object_code(self):
        """What the cache keeps of it: the bitcode of its module for linking (it has no object code)."""
        return self.name, "link-only", self._get_module_for_linking().as_bitcode()


class _CodegenWithoutMachineCode:
    """A codegen whose ``set_env`` does nothing, for a :class:`LinkOnlyLibrary`."""

    def __init__(self, codegen):
        self._codegen = codegen

    def __getattr__(self, name):
        return getattr(self._codegen, name)

    def set_env(self, env_name, env):
        pass


class LinkOnlyCompiler(compiler.Compiler):
    """Numba's compiler pipeline, lowering into a :class:`LinkOnlyLibrary`."""

    def compile_extra(self, func):
        if self.state.library is None:
            self.state.library = LinkOnlyLibrary(self.state.targetctx.codegen(), func.__qualname__)
        return super().compile_extra(func)


class LinkOnlyCacheImpl(CompileResultCacheImpl):
    """Numba's caching of a compile result, for a helper's :class:`LinkOnlyLibrary`."""

    def reduce(self, cres):
        """Numba's record without the environments to restore: those of a library in the JIT engine only (a
        caller's machine code holds the helper's code and restores them itself)."""
        return cres._reduce()[:-1] + ((),)

    def rebuild(self, target_context, payload):
        """``CompileResult._rebuild`` with the library read back as a :class:`LinkOnlyLibrary`; None (a cache miss:
        Numba compiles the helper and replaces the entry) for an entry written otherwise, by an older version."""
        (name, kind, bitcode), fndesc, env, signature, objectmode, lifted, typeann, reload_init, _ = payload
        if kind != "link-only":
            return None
        for init in reload_init:
            init()
        library = LinkOnlyLibrary(target_context.codegen(), name, bitcode)
        return compiler.CompileResult(
            target_context=target_context, typing_context=target_context.typing_context, library=library,
            environment=env, entry_point=target_context.get_executable(library, fndesc, env), fndesc=fndesc,
            type_annotation=typeann, signature=signature, objectmode=objectmode, lifted=lifted, typing_error=None,
            call_helper=None, metadata=None, reload_init=reload_init, referenced_envs=())


class LinkOnlyCache(ExtendedFunctionCache):
    """This mode's function cache for helpers (:class:`LinkOnlyCacheImpl`)."""
    _impl_class = LinkOnlyCacheImpl


class HelperDispatcher(OneSignatureDispatcher):
    """A :class:`OneSignatureDispatcher` compiled without the wrappers for calls from Python, into a
    :class:`LinkOnlyLibrary` (see the module)."""

    def __call__(self, *args, **kwargs):
        raise TypeError(f"{self.py_func.__module__}.{self.py_func.__qualname__} is called from jitted code only "
                        "(wargame_odds.kernels.jit.njit without from_python=True, extended mode)")

    def enable_caching(self):
        self._cache = LinkOnlyCache(self.py_func)

    def compile(self, sig):
        """Numba's compile, with the on-disk cache enabled first for a helper made with ``cache=True`` (a run that
        loads its entry points from the cache never compiles a helper, and so never sets up its cache)."""
        if self._cache_on_first_compile:
            self._cache_on_first_compile = False
            self.enable_caching()
        return super().compile(sig)


def njit(cache: bool = False, from_python: bool = False, **options):
    """:func:`wargame_odds.kernels.jit.njit` in this mode: ``numba.njit(cache=..., **options)`` making an
    :class:`OneSignatureDispatcher`: with ``from_python`` one that Python calls too, otherwise a
    :class:`HelperDispatcher`."""
    def wrap(func):
        if from_python:
            dispatcher = OneSignatureDispatcher(py_func=func, locals={},
                                                targetoptions=dict(options, nopython=True, boundscheck=None))
        else:
            dispatcher = HelperDispatcher(py_func=func, locals={},
                                          targetoptions=dict(options, nopython=True, boundscheck=None,
                                                             no_cpython_wrapper=True, no_cfunc_wrapper=True),
                                          pipeline_class=LinkOnlyCompiler)
        if cache and from_python:
            dispatcher.enable_caching()
        elif not from_python:
            dispatcher._cache_on_first_compile = cache
        return dispatcher
    return wrap

