"""Numba's on-disk cache of the ``kernels`` package: kept honest, and announced when it is cold.

Where the cache lives is fixed by ``kernels/__init__.py`` (one folder for every entry point).

Numba stamps each cached function with the hash of its *own* source file only, so a change to a
jitted helper in another module (say ``kernels/rng.py``, inlined into every kernel) would leave the
callers' cached machine code in use: stale numbers with no error.  :func:`drop_stale_kernel_caches`
(run when :mod:`analysis.runner` is imported, before any kernel is called) keeps a digest of all
``kernels/*.py`` next to the cache files and removes the cached functions of ``kernels/`` (and, in a
source checkout, of the jitted test and benchmark helpers built on ``kernels.rng``) when it changes.
"""
from __future__ import annotations

import contextlib
import hashlib
import inspect
import os
import struct
import sys
from pathlib import Path

from llvmlite import binding as llvm
from numba.core import codegen, event, types
from numba.core.dispatcher import Dispatcher
from numba.core.caching import Cache, InTreeCacheLocator, UserProvidedCacheLocator, UserWideCacheLocator
from numba.core.runtime import nrtdynmod, rtsys

import kernels

from .atomic_file import write_atomic

KERNELS = Path(kernels.__file__).resolve().parent
CHECKOUT = KERNELS.parent if (KERNELS.parent / "pyproject.toml").is_file() else None
#: Folders whose cached functions inline code from ``kernels/``.
DEPENDENT = (KERNELS,) + ((CHECKOUT / "tests", CHECKOUT / "benchmarks") if CHECKOUT else ())
STAMP = "kernels-sources.sha256"


def sources_digest(folder: Path = KERNELS) -> str:
    """SHA-256 over the names and contents of the package's ``*.py`` files."""
    digest = hashlib.sha256()
    for path in sorted(folder.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def cache_folder(folder: Path = KERNELS) -> Path | None:
    """Where Numba caches the functions of ``folder``'s modules (its own choice of locator), or None."""
    module = next(iter(sorted(folder.glob("*.py"))), None)  # Numba's folder depends only on the module's folder
    if module is None:
        return None
    for locator in (UserProvidedCacheLocator, InTreeCacheLocator, UserWideCacheLocator):
        found = locator.from_function(cache_folder, str(module))
        if found is not None:
            return Path(found.get_cache_path())
    return None


def drop_stale_kernel_caches() -> int:
    """:func:`drop_stale_cache` for every folder of :data:`DEPENDENT`; returns how many files went."""
    digest = sources_digest()
    return sum(drop_stale_cache(folder, digest) for folder in DEPENDENT if folder.is_dir())


def drop_stale_cache(folder: Path, digest: str, cache: Path | None = None) -> int:
    """Remove the cached functions of ``folder``'s modules unless ``cache`` holds ``digest`` (the kernels'
    sources they were built from); returns how many files went.  A missing or unwritable cache is left
    alone."""
    cache = cache if cache is not None else cache_folder(folder)
    if cache is None or not cache.is_dir():
        return 0
    stamp = cache / STAMP
    try:
        if stamp.read_text() == digest:
            return 0
    except OSError:
        pass
    modules = {path.stem for path in folder.glob("*.py")}
    removed = 0
    for path in cache.iterdir():
        if path.suffix in (".nbi", ".nbc") and path.name.split(".", 1)[0] in modules:
            try:
                path.unlink()
                removed += 1
            except FileNotFoundError:  # another process got there first
                pass
    with contextlib.suppress(OSError):  # a cache folder that cannot be written is left alone
        write_atomic(stamp, digest.encode())
    return removed


def elf_defined_symbols(object_code: bytes) -> set[str] | None:
    """The names of the symbols a little-endian ELF64 object file defines (its symbol table, less undefined,
    section and file entries), or None for another object format."""
    if object_code[:6] != b"\x7fELF\x02\x01":
        return None
    (section_headers,) = struct.unpack_from("<Q", object_code, 0x28)
    header_size, count = struct.unpack_from("<HH", object_code, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", object_code, section_headers + i * header_size)
                for i in range(count)]
    names = set()
    for _, kind, _, _, offset, size, strings_section, _, _, entry_size in sections:
        if kind != 2:  # SHT_SYMTAB
            continue
        strings = sections[strings_section][4]
        for entry in range(offset + entry_size, offset + size, entry_size):  # entry 0 is the null symbol
            name, info, _, section = struct.unpack_from("<IBBH", object_code, entry)
            if section == 0 or info & 0xF in (3, 4):  # SHN_UNDEF; STT_SECTION, STT_FILE
                continue
            start = strings + name
            names.add(object_code[start:object_code.index(b"\0", start)].decode())
    return names


class CachedKernelLibrary(codegen.JITCodeLibrary):
    """A kernel's machine code read back from the cache, whose LLVM bitcode (kept for inlining into a caller
    compiled later) is parsed only when such a caller links it."""

    def __init__(self, codegen_, name, shared_bitcode: bytes):
        super().__init__(codegen_, name)
        self._shared_bitcode = shared_bitcode

    def _get_module_for_linking(self):
        if self._shared_module is None:
            self._shared_module = llvm.parse_bitcode(self._shared_bitcode)
        return self._shared_module


def _unserialize_kernel_library(codegen_, state):
    """Numba's ``JITCodeLibrary._unserialize`` for a library cached as object code, without parsing its bitcode:
    the symbols it defines (which Numba takes from the parsed bitcode) are read from the object file's
    symbol table, the same names (a test compares the two for each cached kernel).  None where that cannot
    be done (another object format or library kind): Numba's own path is taken."""
    name, kind, data = state
    defined = getattr(getattr(codegen_, "_engine", None), "_defined_symbols", None)
    if kind != "object" or getattr(codegen_, "_library_class", None) is not codegen.JITCodeLibrary \
            or not isinstance(defined, set):
        return None
    object_code, shared_bitcode = data
    symbols = elf_defined_symbols(object_code)
    if symbols is None:
        return None
    library = CachedKernelLibrary(codegen_, name, shared_bitcode)
    library.enable_object_caching()
    library._set_compiled_object(object_code)
    library._finalize_final_module()
    defined |= symbols
    return library


RUNTIME_MAGIC = b"wargame-odds numba runtime 1\n"
MAX_RUNTIME_BYTES = 4 << 20  # the runtime's object code and bitcode are about 40 kB: a larger file is not ours


def runtime_file(codegen_) -> Path | None:
    """Where the machine code of Numba's runtime module is cached (in the kernels' cache folder), keyed by
    the Numba and llvmlite versions and the code generator's target (triple, CPU, features); None without
    a cache folder."""
    import llvmlite
    import numba

    folder = cache_folder()
    if folder is None:
        return None
    key = hashlib.sha256(repr((numba.__version__, llvmlite.__version__, codegen_.magic_tuple())).encode())
    return folder / f"numba-runtime-{key.hexdigest()[:16]}.nbo"


def _read_runtime(path: Path) -> tuple | None:
    """The serialized runtime library stored at ``path``, or None if there is none or it is not whole."""
    try:
        if path.stat().st_size > MAX_RUNTIME_BYTES:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    head = len(RUNTIME_MAGIC)
    if not data.startswith(RUNTIME_MAGIC) or len(data) < head + 40:
        return None
    digest, body = data[head:head + 32], data[head + 32:]
    if hashlib.sha256(body).digest() != digest:
        return None
    (object_size,) = struct.unpack_from("<Q", body, 0)
    object_code, bitcode = body[8:8 + object_size], body[8 + object_size:]
    return ("nrt", "object", (object_code, bitcode)) if len(object_code) == object_size else None


def _write_runtime(path: Path, state: tuple) -> None:
    """Store a serialized runtime library at ``path``, whole with its SHA-256 or not at all (an unwritable cache is
    left alone)."""
    _, _, (object_code, bitcode) = state
    body = struct.pack("<Q", len(object_code)) + object_code + bitcode
    with contextlib.suppress(OSError):
        write_atomic(path, RUNTIME_MAGIC + hashlib.sha256(body).digest() + body)


def _runtime_library(target_context, _numba_compile=nrtdynmod.compile_nrt_functions):
    """``nrtdynmod.compile_nrt_functions``, which ``rtsys.initialize`` calls once a process to compile Numba's
    runtime module (atomic reference counts and memory helpers; about 35 ms of CPU, most of a warm run's first
    kernel call): its machine code read back from the kernels' cache folder (:func:`runtime_file`) as a cached
    kernel's is, or compiled as Numba does it and stored there."""
    codegen_ = target_context.codegen()
    path = runtime_file(codegen_)
    state = _read_runtime(path) if path is not None else None
    library = _unserialize_kernel_library(codegen_, state) if state is not None else None
    if library is not None:
        return library
    if path is None:
        return _numba_compile(target_context)
    ir_module, library = nrtdynmod.create_nrt_module(target_context)
    library.add_ir_module(ir_module)
    library.enable_object_caching()
    library.finalize()
    _write_runtime(path, library.serialize_using_object_code())
    return library


_loading_kernel = False  # set while a function of ``kernels`` is read from the cache (under Numba's compiler lock)


def _unserialize_library(self, serialized, _numba_unserialize=codegen.JITCPUCodegen.unserialize_library):
    """``JITCPUCodegen.unserialize_library``: a kernel's cached library through
    :func:`_unserialize_kernel_library`, any other as Numba does it."""
    library = _unserialize_kernel_library(self, serialized) if _loading_kernel else None
    return library if library is not None else _numba_unserialize(self, serialized)


def _load_kernel_overload(self, sig, target_context, _numba_load=Cache.load_overload):
    """``Cache.load_overload`` for the functions of ``kernels``: only the runtime is initialised before the
    machine code is read back, and its bitcode is not parsed (see :func:`load_kernels_without_refresh`);
    other functions load as Numba does it."""
    global _loading_kernel
    if not getattr(self._py_func, "__module__", "").startswith("kernels."):
        return _numba_load(self, sig, target_context)
    rtsys.initialize(target_context)
    with self._guard_against_spurious_io_errors():
        _loading_kernel = True
        try:
            return self._load_overload(sig, target_context)
        finally:
            _loading_kernel = False


def _init_extensions_unless_kernel(self, _numba_hook=Dispatcher._compilation_chain_init_hook):
    """``Dispatcher._compilation_chain_init_hook`` (which loads Numba's third-party extensions before a call is
    typed, from the installed packages' entry points): not for a function of ``kernels``, which takes arrays and
    numbers only and uses no extension; a kernel that misses the cache still loads them, when Numba's pipeline
    refreshes its target before compiling."""
    if not getattr(self.py_func, "__module__", "").startswith("kernels."):
        _numba_hook(self)


def load_kernels_without_refresh() -> bool:
    """Load the cached kernels of ``kernels`` without Numba's refresh of its whole CPU target, and without
    parsing their LLVM bitcode.

    Before it loads a cached function, Numba imports and installs every implementation registry it has
    (arrays, linear algebra, which imports ``scipy.linalg``, random numbers, typed containers …): about
    0.7 s of CPU, most of a warm run, though reading machine code back needs only the runtime (NRT)
    initialised.  The kernels' cached functions load after ``rtsys.initialize`` alone; a cache miss
    still compiles through Numba's pipeline, which refreshes first, and any other function (a user's
    own, in the same notebook) loads exactly as Numba does it.  Numba also parses each cached library's
    bitcode (0.6 MB for the Epic kernel's entry points, about 0.07 s of CPU) to learn the symbols it
    defines and to have it ready for linking into a caller; the kernels' libraries take those symbols from
    their object code and parse the bitcode only if a caller compiled later links them
    (:class:`CachedKernelLibrary`).  Nor does a kernel's first call read every installed package's entry
    points for Numba extensions (:func:`_init_extensions_unless_kernel`).  Returns whether the shortcut is
    in use (not with a Numba whose cache, dispatcher or code library lacks the methods it relies on)."""
    needed = {Cache: ("load_overload", "_load_overload", "_guard_against_spurious_io_errors"),
              Dispatcher: ("_compilation_chain_init_hook",),
              codegen.JITCodeLibrary: ("enable_object_caching", "_set_compiled_object", "_finalize_final_module",
                                       "_get_module_for_linking", "serialize_using_object_code"),
              codegen.JITCPUCodegen: ("unserialize_library", "magic_tuple"),
              nrtdynmod: ("compile_nrt_functions", "create_nrt_module")}
    if not all(hasattr(owner, name) for owner, names in needed.items() for name in names):
        return False
    Cache.load_overload = _load_kernel_overload
    nrtdynmod.compile_nrt_functions = _runtime_library
    codegen.JITCPUCodegen.unserialize_library = _unserialize_library
    Dispatcher._compilation_chain_init_hook = _init_extensions_unless_kernel
    return True


#: What a cold compile of each kernel module costs on a 2-core machine (``make bench`` measures Epic's).
KERNEL_COMPILES = {
    "kernels.epic": ("the Epic Armageddon kernel", "about a minute"),
    "kernels.gdb": ("the General de Brigade kernel", "about 15 s"),
    "kernels.t9a": ("The 9th Age kernel", "about 15 s"),
    "kernels.t9a_combat": ("The 9th Age close-combat kernel", "about 30 s"),
}
#: The Epic block function's turn variant (``kernels.epic._run_block`` given turn tables), which a turn
#: scenario compiles on its first run even when the assault variant is in the cache.
EPIC_TURN_COMPILE = ("the Epic Armageddon kernel for turns", "about a minute and a half")


def announced_compile(dispatcher, args=()) -> tuple[str, str] | None:
    """(what, how long) of a compile of ``dispatcher`` for the argument types ``args``, for the notice, or
    None for a function outside the kernels."""
    func = getattr(dispatcher, "py_func", None)
    module = getattr(func, "__module__", "")
    if module == "kernels.epic_turn":
        return EPIC_TURN_COMPILE
    if module == "kernels.epic" and func.__name__ == "_run_block" and args:
        turn = list(inspect.signature(func).parameters).index("turn")
        if not isinstance(args[turn], types.NoneType):
            return EPIC_TURN_COMPILE
    return KERNEL_COMPILES.get(module)


class CompileNotice(event.Listener):
    """Prints one line on stderr when a kernel of :data:`KERNEL_COMPILES`, or the Epic kernel's turn variant,
    starts compiling (:func:`announced_compile`; Numba fires ``numba:compile`` only on a cache miss), then
    stays silent."""

    def __init__(self, stream=None):
        self.stream = stream if stream is not None else sys.stderr
        self.printed = False

    def on_start(self, ev):
        announced = None if self.printed else announced_compile(ev.data.get("dispatcher"), ev.data.get("args", ()))
        if announced is None:
            return
        what, duration = announced
        print(f"compiling {what}, once ({duration}; later runs load it from the "
              f"cache in {os.environ.get('NUMBA_CACHE_DIR', 'the Numba cache')})…", file=self.stream, flush=True)
        self.printed = True

    def on_end(self, ev):
        pass


_ACTIVE_NOTICES: list[CompileNotice] = []  # the notice of the outermost compile_notice block, if any


@contextlib.contextmanager
def compile_notice(stream=None):
    """Within the block, the first cold compile of a kernel is announced by :class:`CompileNotice`.
    A block inside another (each run of a threshold search or a sweep) uses the outer block's notice,
    so one compile is announced once."""
    if _ACTIVE_NOTICES:
        yield _ACTIVE_NOTICES[-1]
        return
    with event.install_listener("numba:compile", CompileNotice(stream)) as listener:
        _ACTIVE_NOTICES.append(listener)
        try:
            yield listener
        finally:
            _ACTIVE_NOTICES.pop()
