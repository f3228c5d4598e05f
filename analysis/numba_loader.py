"""The extended mode's loading of cached kernels (see :mod:`kernels.jit`): without Numba's refresh of its whole CPU
target, without parsing the kernels' LLVM bitcode, with Numba's runtime module read back from the cache.

:func:`load_kernels_without_refresh` replaces four functions of Numba (its cache's ``load_overload``, the runtime
module's compile, the code generator's ``unserialize_library`` and the dispatcher's extension hook); each
replacement acts for the functions of ``kernels`` only and leaves any other function to Numba.  It is called
once a process, by :func:`analysis.numba_cache.prepare_kernels` before the first kernel call, and only in the
extended mode (never with ``WARGAME_ODDS_PLAIN_NUMBA=1`` or a Numba lacking the internals it uses).
"""
from __future__ import annotations

import contextlib
import hashlib
import struct
from pathlib import Path

from llvmlite import binding as llvm
from numba.core import codegen
from numba.core.caching import Cache
from numba.core.dispatcher import Dispatcher
from numba.core.runtime import nrtdynmod, rtsys

from kernels import cache_folder

from .atomic_file import write_atomic


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


def _runtime_library(ctx, _numba_compile=nrtdynmod.compile_nrt_functions):
    """``nrtdynmod.compile_nrt_functions``, which ``rtsys.initialize`` calls once a process to compile Numba's
    runtime module (atomic reference counts and memory helpers; about 35 ms of CPU, most of a warm run's first
    kernel call): its machine code read back from the kernels' cache folder (:func:`runtime_file`) as a cached
    kernel's is, or compiled as Numba does it and stored there.  (``ctx``: the target context, named as Numba names
    it, so that the replacement has Numba's parameters.)"""
    codegen_ = ctx.codegen()
    path = runtime_file(codegen_)
    state = _read_runtime(path) if path is not None else None
    library = _unserialize_kernel_library(codegen_, state) if state is not None else None
    if library is not None:
        return library
    if path is None:
        return _numba_compile(ctx)
    ir_module, library = nrtdynmod.create_nrt_module(ctx)
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


def load_kernels_without_refresh() -> None:
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
    points for Numba extensions (:func:`_init_extensions_unless_kernel`).  The Numba internals this relies on
    are in :data:`kernels.jit.EXTENDED_MODE_INTERNALS`, checked before the extended mode is chosen."""
    Cache.load_overload = _load_kernel_overload
    nrtdynmod.compile_nrt_functions = _runtime_library
    codegen.JITCPUCodegen.unserialize_library = _unserialize_library
    Dispatcher._compilation_chain_init_hook = _init_extensions_unless_kernel
