"""``njit`` for the Epic kernel, in one of two modes with the same results.

* **extended** (the default): :mod:`wargame_odds.kernels.link_only` compiles each helper once, for linking into its
callers
  only; it builds on Numba internals (:data:`EXTENDED_MODE_INTERNALS`): the Epic kernel's cold compile takes about
  a third of the CPU time and memory of plain Numba's.  Cached kernels load as Numba loads them.
* **plain**: ``numba.njit(cache=True)`` as Numba ships it, and nothing of Numba is replaced; a helper is compiled
  with Numba's options ``no_cpython_wrapper`` and ``no_cfunc_wrapper`` (as the extended mode compiles it: no code
  that lets Python call it, which only the entry points need).  Chosen by
  setting :data:`PLAIN_SWITCH` (``WARGAME_ODDS_PLAIN_NUMBA=1``), or by itself when the installed Numba lacks
  one of those internals (:data:`FALLBACK_REASON` says which; the program prints it once on stderr, see
  :func:`wargame_odds.analysis.run.numba_cache.prepare_kernels`).

The mode is fixed when this module is imported (before any kernel is defined); the numbers do not depend on
it (tests/test_plain_numba.py).
"""
import importlib
import inspect
import os

import numba

PLAIN_SWITCH = "WARGAME_ODDS_PLAIN_NUMBA"

#: The Numba internals the extended mode uses (kernels/link_only.py): each callable by "module:qualified name"
#: with the names its first parameters must have.
EXTENDED_MODE_INTERNALS = {
    # kernels/link_only.py: the one-signature dispatcher and its cache
    "numba.core.registry:CPUDispatcher.__init__": ("self", "py_func", "locals", "targetoptions", "pipeline_class"),
    "numba.core.registry:CPUDispatcher.get_call_template": ("self", "args", "kws"),
    "numba.core.registry:CPUDispatcher.enable_caching": ("self",),
    "numba.core.registry:CPUDispatcher.compile": ("self", "sig"),
    "numba.core.caching:FunctionCache.__init__": ("self", "py_func"),
    "numba.core.caching:FunctionCache._index_key": ("self", "sig", "codegen"),
    "numba.core.caching:CompileResultCacheImpl.reduce": ("self", "cres"),
    "numba.core.caching:CompileResultCacheImpl.rebuild": ("self", "target_context", "payload"),
    "numba.core.compiler:CompileResult._reduce": ("self",),
    "numba.core.compiler:CompileResult._rebuild": ("target_context", "libdata", "fndesc", "env", "signature",
                                                   "objectmode", "lifted", "typeann", "reload_init",
                                                   "referenced_envs"),
    "numba.core.cpu:CPUContext.get_executable": ("self", "library", "fndesc", "env"),
    # kernels/link_only.py: helpers' libraries linked into their callers only
    "numba.core.compiler:Compiler.__init__": ("self", "typingctx", "targetctx", "library"),
    "numba.core.compiler:Compiler.compile_extra": ("self", "func"),
    "numba.core.codegen:JITCodeLibrary.__init__": ("self", "codegen", "name"),
    "numba.core.codegen:JITCodeLibrary._finalize_dynamic_globals": ("self",),
    "numba.core.codegen:JITCodeLibrary._verify_declare_only_symbols": ("self",),
    "numba.core.codegen:JITCodeLibrary._ensure_finalized": ("self",),
    "numba.core.codegen:JITCodeLibrary.get_pointer_to_function": ("self", "name"),
    "numba.core.codegen:JITCodeLibrary._finalize_final_module": ("self",),
    "numba.core.codegen:JITCodeLibrary._optimize_final_module": ("self",),
    "numba.core.codegen:JITCodeLibrary._get_module_for_linking": ("self",),
    "numba.core.codegen:JITCodeLibrary.serialize_using_object_code": ("self",),
    "numba.core.codegen:JITCPUCodegen.set_env": ("self", "env_name", "env"),
}
#: Attributes of Numba's objects the extended mode reads or sets, by the constructor whose code assigns them.
EXTENDED_MODE_ATTRIBUTES = {
    "numba.core.codegen:CodeLibrary.__init__": ("_codegen",),
    "numba.core.codegen:CPUCodeLibrary.__init__": ("_shared_module", "_final_module"),
    "numba.core.compiler:CompilerBase.__init__": ("state", "library", "targetctx"),
    "numba.core.dispatcher:Dispatcher.__init__": ("_cache",),
    "numba.np.ufunc.parallel:_launch_threads": ("_is_initialized",),  # thread_count
    "numba.core.compiler:CompileResult": ("typing_context", "target_context", "entry_point", "typing_error",
                                          "type_annotation", "signature", "objectmode", "lifted", "fndesc",
                                          "library", "call_helper", "environment", "metadata", "reload_init",
                                          "referenced_envs"),
}


def _find(path: str):
    module, _, name = path.partition(":")
    found = importlib.import_module(module)
    for part in name.split("."):
        found = getattr(found, part)
    return found


def missing_internals(callables: dict = EXTENDED_MODE_INTERNALS, attributes: dict = EXTENDED_MODE_ATTRIBUTES) \
        -> list[str]:
    """What the installed Numba lacks of the extended mode's internals: each callable missing or whose first
    parameters are named otherwise, each attribute its constructor no longer sets (a named tuple: no longer has
    as a field)."""
    missing = []
    for path, parameters in callables.items():
        try:
            names = tuple(inspect.signature(_find(path)).parameters)
        except (ImportError, AttributeError, TypeError, ValueError):
            missing.append(path)
            continue
        if names[:len(parameters)] != parameters:
            missing.append(f"{path}({', '.join(parameters)})")
    for path, names in attributes.items():
        try:
            owner = _find(path)
        except (ImportError, AttributeError):
            missing.append(path)
            continue
        has = set(getattr(owner, "_fields", ())) or set(getattr(getattr(owner, "__code__", None), "co_names", ()))
        missing += [f"{path} ({name})" for name in names if name not in has]
    return missing


def _choose_mode() -> tuple[bool, str | None]:
    """(plain, why the extended mode is not available) for this process."""
    if os.environ.get(PLAIN_SWITCH, "") not in ("", "0"):
        return True, None
    missing = missing_internals()
    if missing:
        return True, "; ".join(missing)
    try:
        importlib.import_module("wargame_odds.kernels.link_only")
    except (ImportError, AttributeError, TypeError) as error:
        return True, f"wargame_odds.kernels.link_only: {error}"
    return False, None


#: True in plain mode; FALLBACK_REASON: what the installed Numba lacks, when plain mode was not asked for.
PLAIN, FALLBACK_REASON = _choose_mode()


def njit(cache: bool = False, from_python: bool = False, **options):
    """``numba.njit(cache=..., **options)``, used as ``@njit(...)``.  A function without ``from_python`` is a helper
    that only jitted code calls: compiled without the wrappers that let Python call it (in plain mode too: about a
    fifth of its cold compile, mostly unboxing the record views' arrays), and in the extended mode
    (:func:`wargame_odds.kernels.link_only.njit`) once, for linking."""
    if PLAIN:
        if not from_python:
            options = dict(options, no_cpython_wrapper=True, no_cfunc_wrapper=True)
        return numba.njit(cache=cache, **options)
    from .link_only import njit as extended_njit

    return extended_njit(cache=cache, from_python=from_python, **options)


def thread_count() -> int:
    """Numba's thread count (``NUMBA_NUM_THREADS``, or what ``numba.set_num_threads`` set).  In the extended mode
    without starting Numba's thread pool, which ``numba.get_num_threads()`` does first (about 0.1 s): the Epic
    kernel runs its blocks on Python threads and needs only the number."""
    if PLAIN:
        return numba.get_num_threads()
    from numba.np.ufunc import parallel

    return numba.get_num_threads() if parallel._is_initialized else numba.config.NUMBA_NUM_THREADS
