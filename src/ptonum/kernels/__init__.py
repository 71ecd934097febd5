"""Compiled kernels of the fast engine (numba), with a pure-numpy fallback.

The fast engine uses a numba kernel when numba imports, the environment
variable ``PTONUM_DISABLE_NUMBA`` is unset or off (``0``/``false``/``no``/``off``; see
:func:`ptonum.tables.numba_disabled`) and the call is large
enough to pay for the kernels' one-time compilation (``PTONUM_KERNEL_MIN_ELEMENTS``,
default 65536 elements; set it to 0 to use the kernels for every call);
otherwise it uses the numpy implementation in the owning module.  Both produce identical bits and
flags (the test suite runs the conformance vectors through each).

Robustness (every kernel call goes through :func:`launch`):

* **Cache.** A cached kernel is current when its module's source and the facts of
  :mod:`ptonum.tables` it may have frozen as constants (:func:`ptonum.tables.kernel_facts_stamp`)
  are unchanged.  Compiled kernels are looked up in ``PTONUM_CACHE_DIR``, ``NUMBA_CACHE_DIR``,
  ``__pycache__`` beside the kernel modules and numba's per-user cache directory, in that
  order, and new compilations are saved in the first of those that is writable
  (:func:`kernel_cache_dirs`).  With none writable (a read-only install run by a user
  without a home directory) the kernels are compiled in memory for the process, with one
  note on stderr.  A damaged cache file (truncated, unreadable pickle, or any changed byte:
  each data file carries the SHA-256 of its content, checked before its machine code is
  loaded) is discarded and the kernel recompiled, with one note.
* **fork.** A process forked after its parent started numba's GNU OpenMP threading layer
  cannot use that layer (the child would be terminated or hang); such a child runs the
  numpy path of the fast engine (same bits and flags), with one note.
* **Threads.** numba's ``workqueue`` threading layer (used when neither OpenMP nor TBB
  loads, or when ``NUMBA_THREADING_LAYER=workqueue``) aborts the process when two threads
  launch parallel kernels at once, so kernel launches are serialised under it.
* **Layouts.** Read-only and memory-mapped inputs are passed to the kernels as writeable
  aliases of the same memory (the kernels never write their inputs), so every input layout
  runs the specializations ``ptonum compile`` builds.

Nothing here has a spec counterpart: kernels are an implementation detail of
the ``fast`` engine, checked against the ``reference`` engine and the ASL
vectors.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import os
import sys
import tempfile
import threading
from typing import Any, Callable, Dict, List, Optional, Set, TypeVar

import numpy as np

from ..tables import DEFAULT_KERNEL_MIN_ELEMENTS, kernel_facts_stamp, kernel_min_elements, numba_disabled

__all__ = ["NUMBA_AVAILABLE", "DEFAULT_KERNEL_MIN_ELEMENTS", "kernel_min_elements", "numba_enabled", "njit",
           "numba_usable", "MAX_THREADS", "prange", "launch", "launch_ready", "kernel_array", "kernel_cache_warm", "kernel_cache_dir", "kernel_cache_dirs",
           "writable_cache_dir", "note", "entry_kernels", "publish_kernels", "compile_note", "target_has_feature",
           "HALF_LIBCALLS", "HALF_READY", "HALF_NOTE"]


F = TypeVar("F", bound=Callable[..., Any])

# GNU OpenMP threads spin at barriers by default; on a machine whose cores are shared
# with other processes that turns a 2-thread kernel 5x slower than 1 thread.  Passive
# waiting (set before numba starts its OpenMP pool; a user's own setting wins).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

_numba: Any
prange: Any
try:  # pragma: no cover - depends on the environment
    import numba as _numba

    NUMBA_AVAILABLE = True
    prange = _numba.prange
except Exception:  # pragma: no cover - numba missing or broken: numpy fallback
    _numba = None
    NUMBA_AVAILABLE = False
    prange = range  # the kernels are never called on large arrays without numba


def target_has_feature(name: str) -> bool:
    """Whether numba compiles for a CPU with the LLVM feature ``name`` (``"avx"``, ``"f16c"``,
    ``"avx512bw"``): the host's features, or ``NUMBA_CPU_FEATURES`` when ``NUMBA_CPU_NAME`` sets the
    target (``NUMBA_CPU_NAME=generic`` without ``NUMBA_CPU_FEATURES``: none of them).  False without numba.

    Source: no spec counterpart (code generation).
    """
    if _numba is None:
        return False
    from numba.core import config as _config

    if getattr(_config, "CPU_NAME", None):
        feats = getattr(_config, "CPU_FEATURES", None) or ""
    else:
        import llvmlite.binding as _llvm

        feats = _llvm.get_host_cpu_features().flatten()
    return f"+{name}" in feats.split(",")


#: The run-time routines LLVM calls for a binary16 <-> binary32 conversion on a target without F16C
#: (compiler-rt / libgcc names; on x86-64 the half value travels in an ``xmm`` register, GCC 12's ABI).
HALF_LIBCALLS = ("__extendhfsf2", "__truncsfhf2")


def _half_conversions_ready() -> bool:
    """Whether the kernels' binary16 conversions can be compiled and run: always on an F16C target
    (``vcvtps2ph``/``vcvtph2ps``); elsewhere (``NUMBA_CPU_NAME=generic``, a CPU without F16C) LLVM emits
    calls of :data:`HALF_LIBCALLS`, which numba's JIT resolves only from libraries loaded into its
    symbol table: libgcc_s (GCC 12 or later exports them) is loaded there permanently.  False when
    they still do not resolve -- then a kernel compile would end the process (LLVM: "Symbol not
    found: __extendhfsf2")."""
    if _numba is None or target_has_feature("f16c"):
        return True
    import ctypes.util

    import llvmlite.binding as _llvm

    if not all(_llvm.address_of_symbol(s) for s in HALF_LIBCALLS):
        for lib in (ctypes.util.find_library("gcc_s"), "libgcc_s.so.1"):
            if lib:
                try:
                    _llvm.load_library_permanently(lib)
                except RuntimeError:  # not found or not loadable: try the next name
                    continue
                break
    return all(_llvm.address_of_symbol(s) for s in HALF_LIBCALLS)


#: False when the numba target lacks F16C and no library provides :data:`HALF_LIBCALLS`: the fast engine
#: then runs its numpy path (same bits and flags) with one note (:data:`HALF_NOTE`).
HALF_READY: bool = _half_conversions_ready()


def host_l1d_bytes(base: str = "/sys/devices/system/cpu/cpu0/cache") -> int:
    """The size in bytes of the host's level-1 data cache (of its first CPU, from Linux's sysfs directory
    ``base``: the ``index*`` entry of level 1 and type Data or Unified, its ``size`` such as ``32K``), or 0
    where it cannot be read (another OS, a container without ``/sys``, an unknown size format).  The kernels
    read it once, at import, to choose a loop's blocking (:data:`ptonum.kernels.postprocess._S32_SEG`); it
    changes no result.

    Source: no spec counterpart (code generation).
    """
    def field(name: str, key: str) -> str:
        with open(os.path.join(base, name, key)) as f:
            return f.read().strip()

    try:
        names = sorted(os.listdir(base))
    except OSError:
        return 0
    for name in names:
        if not name.startswith("index"):
            continue
        try:
            level, kind, size = (field(name, key) for key in ("level", "type", "size"))
        except OSError:
            continue
        if level != "1" or kind not in ("Data", "Unified"):
            continue
        unit = {"K": 1 << 10, "M": 1 << 20}.get(size[-1:].upper(), 1)
        digits = size[:-1] if unit != 1 else size
        return int(digits) * unit if digits.isdigit() else 0
    return 0


#: the most threads a parallel kernel can use in this process (``NUMBA_NUM_THREADS``, fixed when numba starts;
#: ``numba.set_num_threads`` chooses up to this many per launch)
MAX_THREADS: int = int(_numba.config.NUMBA_NUM_THREADS) if _numba is not None else 1

_NOTED: Set[str] = set()
_NOTE_LOCK = threading.Lock()


def note(key: str, text: str) -> None:
    """Write ``ptonum: note: <text>`` as one line on stderr, once per process for each ``key``.

    A closed stderr is ignored.

    Source: no spec counterpart (diagnostics of the fast engine).
    """
    line = f"ptonum: note: {text}"
    with _NOTE_LOCK:
        if key in _NOTED:
            return
        _NOTED.add(key)
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed stderr must not break a computation
        pass


_COMPILE_NOTE: List[str] = []  # the innermost compile_note() text, if any


class compile_note:
    """Within the block, write ``ptonum: note: <text>`` as one line on stderr (once per process, as
    :func:`note` writes every note) just before a kernel
    compilation starts, i.e. when a call meets a kernel specialization that no cache directory holds.

    Exact by construction: the line is written from the kernel cache's miss, so it appears when that
    kernel will really compile (a new kernel, a new argument type, a changed kernel source), and
    never for kernels the call does not use or that load from the cache.  With no writable cache
    directory the no-cache note is written instead (the compilation is not kept).  The command
    line uses it around its large fast-engine calls; the library itself stays silent.

    Source: no spec counterpart (diagnostics of the fast engine).
    """

    def __init__(self, text: str) -> None:
        self.text = text

    def __enter__(self) -> "compile_note":
        _COMPILE_NOTE.append(self.text)
        return self

    def __exit__(self, *exc: object) -> None:
        _COMPILE_NOTE.pop()


def _say_compiling() -> None:
    """The active :class:`compile_note` line, once per process (a compilation is about to start)."""
    if _COMPILE_NOTE:
        note("compile", _COMPILE_NOTE[-1])


# ---------------------------------------------------------------------------
# fork: GNU OpenMP cannot run in a child forked after the parent started it

_FORKED_AFTER_OMP = False


def _after_fork_in_child() -> None:
    global _FORKED_AFTER_OMP, _NOTE_LOCK, _LAUNCH_LOCK
    # a lock another thread of the parent held at the fork stays held in the child: fresh ones
    _NOTE_LOCK = threading.Lock()
    _LAUNCH_LOCK = threading.Lock()
    try:
        from numba.np.ufunc import parallel as _par

        if _par._is_initialized and str(_par._threading_layer) == "omp":
            _FORKED_AFTER_OMP = True
    except Exception:  # pragma: no cover - numba internals moved: assume the worst only if inherited
        pass


if _numba is not None and hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)

HALF_NOTE = ("numba compiles for a CPU without F16C here (target {cpu}) and no loaded library provides "
             "the binary16 conversion routines it then calls (__extendhfsf2, __truncsfhf2: libgcc_s of GCC 12 or "
             "later), so the fast engine runs on numpy here (same bits and flags, slower); unset NUMBA_CPU_NAME "
             "or add NUMBA_CPU_FEATURES with +f16c (every x86-64 CPU since 2012 has it) for the compiled kernels")

FORK_NOTE = ("this process was forked after its parent ran numba's OpenMP threading layer, which is not "
             "fork-safe; the fast engine runs on numpy here (same bits and flags, slower); use the 'spawn' "
             "or 'forkserver' start method, or NUMBA_THREADING_LAYER=workqueue, to keep the compiled kernels")


def numba_enabled(size: Optional[int] = None) -> bool:
    """True when the fast engine should use the compiled kernels (checked at call time).

    ``size`` is the element count of the call; below :func:`kernel_min_elements` the numpy
    path is used (identical bits and flags).

    A process forked after its parent started numba's GNU OpenMP threading layer gets False
    for every size (with one note on stderr when a call would have used the kernels): the
    layer would terminate or hang it.  So does a process whose numba target cannot convert
    binary16 (:data:`HALF_READY` False: no F16C and no library with :data:`HALF_LIBCALLS`).

    Source: ADR-0085 D174 (engines agree bit for bit); no ASL counterpart (engine selection).
    """
    if not NUMBA_AVAILABLE or numba_disabled():
        return False
    if size is None:
        return not _FORKED_AFTER_OMP and HALF_READY
    return size >= kernel_min_elements() and numba_usable(size)


def numba_usable(size: Optional[int] = None) -> bool:
    """:func:`numba_enabled` without reading the environment (for a caller that just did,
    :func:`ptonum.tables.kernel_size`): True when numba imported and this process is not a child
    forked after its parent started GNU OpenMP (then one note on stderr, for a sized call).

    Source: no spec counterpart (engine configuration).
    """
    if not NUMBA_AVAILABLE:
        return False
    if _FORKED_AFTER_OMP:
        if size is not None:
            note("fork", FORK_NOTE)
        return False
    if not HALF_READY:
        if size is not None:
            note("half", HALF_NOTE.format(cpu=os.environ.get("NUMBA_CPU_NAME") or "host"))
        return False
    if size is not None and _compiles_uncached():
        note("nocache", NUMPY_NOTE.format(dirs=", ".join(kernel_cache_dirs())))
        return False
    return True


_UNCACHED: Dict[tuple, bool] = {}


def _holds_index(path: str) -> bool:
    """Does directory ``path`` hold a kernel cache index (``*.nbi``)?  False when it cannot be read."""
    try:
        return any(name.endswith(".nbi") for name in os.listdir(path))
    except OSError:
        return False


#: the environment variables :func:`kernel_cache_dirs` depends on
_CACHE_ENV = ("PTONUM_CACHE_DIR", "NUMBA_CACHE_DIR", "XDG_CACHE_HOME", "HOME")


def _compiles_uncached() -> bool:
    """True when no kernel cache directory is writable and none holds a compiled kernel (no ``*.nbi``
    index): every kernel a call used would compile in memory, for minutes, in every process (memoised
    per list of directories).  A False answer is also memoised per value of the variables in
    :data:`_CACHE_ENV`, so a large call does not work out the directory list again (about 15 us, and
    5-10 times that right after a large kernel has flushed the caches)."""
    env = ("env",) + tuple(os.environ.get(v) for v in _CACHE_ENV)
    if _UNCACHED.get(env) is False:
        return False
    dirs = tuple(kernel_cache_dirs())
    known = _UNCACHED.get(dirs)
    if known is None:
        known = not any(_writable_dir(d) for d in dirs) and not any(_holds_index(d) for d in dirs)
        _UNCACHED[dirs] = known
    if not known:
        _UNCACHED[env] = False
    return known


def njit(*args: Any, **kwargs: Any) -> Any:
    """``numba.njit`` with ptonum's kernel cache on (:func:`kernel_cache_dirs`), or a no-op
    decorator when numba is missing.

    Without numba the decorated function stays plain Python; callers must check
    :func:`numba_enabled` and use their numpy path instead of calling it on
    large arrays.

    Source: no spec counterpart (compilation helper).
    """
    cache = bool(kwargs.pop("cache", True))
    kwargs.setdefault("nogil", True)
    if _numba is None:
        if args and callable(args[0]) and len(args) == 1 and not kwargs.get("_forced"):
            return args[0]

        def deco(fn: F) -> F:
            return fn

        return deco

    def attach(dispatcher: Any) -> Any:
        if cache:
            dispatcher._cache = _KernelCache(dispatcher.py_func)
        return dispatcher

    if args and callable(args[0]) and len(args) == 1:
        return attach(_numba.njit(args[0], **kwargs))
    numba_deco = _numba.njit(*args, **kwargs)
    return lambda fn: attach(numba_deco(fn))


# ---------------------------------------------------------------------------
# Kernel launches: one entry point for every compiled call

_LAUNCH_LOCK = threading.Lock()


_LAYER_CONCURRENT = False  # set once the chosen threading layer is known to take concurrent launches


def _launches_need_lock() -> bool:
    """True unless numba's threading layer is known to accept concurrent launches (OpenMP, TBB).

    Before the first parallel launch of the process the layer is not chosen yet: lock then too.
    Once a layer is chosen it stays for the process, so a known-concurrent answer is kept.
    """
    global _LAYER_CONCURRENT
    if _LAYER_CONCURRENT:
        return False
    try:
        from numba.np.ufunc import parallel as _par

        if not _par._is_initialized:
            return True
        if str(_par._threading_layer) in ("omp", "tbb"):
            _LAYER_CONCURRENT = True
            return False
        return True
    except Exception:  # pragma: no cover - numba internals moved: serialise, always safe
        return True


class _Alias:
    """Holder of an ``__array_interface__`` (and of the array it describes, kept alive)."""

    __slots__ = ("__array_interface__", "_keep")

    def __init__(self, iface: Dict[str, Any], keep: np.ndarray) -> None:
        self.__array_interface__ = iface
        self._keep = keep


def kernel_array(a: np.ndarray) -> np.ndarray:
    """``a`` as the array type the compiled specializations take: a base-class, native-order, aligned,
    writeable-flagged ndarray over the same memory when possible.

    A read-only array (``writeable=False``, ``np.load(..., mmap_mode="r")``, a broadcast view) is
    aliased, not copied: the kernels never write their inputs, and numba would otherwise compile a
    read-only specialization (tens of seconds) that ``ptonum compile`` does not build.

    Source: no spec counterpart (kernel dispatch).
    """
    if type(a) is not np.ndarray:
        a = np.asarray(a)
    flags = a.flags
    if flags.writeable and flags.aligned and a.dtype.isnative:  # the usual case: as is
        return a
    if not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))
    if not a.flags.aligned:
        a = np.array(a, order="K")
    if a.flags.writeable:
        return a
    if a.size == 0:
        return np.empty(a.shape, a.dtype)
    iface = dict(a.__array_interface__)
    iface["data"] = (iface["data"][0], False)
    return np.asarray(_Alias(iface, a))


def launch(kernel: Any, *args: Any) -> Any:
    """Call the compiled ``kernel`` on ``args``: array arguments normalised (:func:`kernel_array`)
    and, under a threading layer that is not thread-safe (numba's ``workqueue``), one launch at a time.

    Output arrays must be writeable, C-contiguous and native (the drivers allocate them), so they are
    passed through unchanged and the kernel writes into the caller's memory.

    Source: no spec counterpart (kernel dispatch).
    """
    return launch_ready(kernel, *(kernel_array(a) if isinstance(a, np.ndarray) else a for a in args))


def launch_ready(kernel: Any, *args: Any) -> Any:
    """:func:`launch` for arguments already in kernel form: every array argument is either the result
    of :func:`kernel_array` or an array the driver made itself (C-contiguous, native, writeable).

    Saves the per-argument checks of a kernel with many parameter arrays (the tile kernel).

    Source: no spec counterpart (kernel dispatch).
    """
    if _launches_need_lock():
        with _LAUNCH_LOCK:
            return kernel(*args)
    return kernel(*args)


# ---------------------------------------------------------------------------
# The kernel cache

_WRITABLE: Dict[str, bool] = {}


def _writable_dir(path: str) -> bool:
    """True when ``path`` exists or can be created and a file can be written in it (memoised)."""
    known = _WRITABLE.get(path)
    if known is None:
        try:
            os.makedirs(path, exist_ok=True)
            tempfile.TemporaryFile(dir=path).close()
            known = True
        except OSError:
            known = False
        _WRITABLE[path] = known
    return known


def _subpath(py_file: str) -> str:
    """numba's per-source-directory subfolder name of a shared cache directory."""
    if _numba is None:
        return "ptonum"
    from numba.core.caching import _CacheLocator

    return str(_CacheLocator.get_suitable_cache_subpath(py_file))


def _non_directory_on(path: str) -> Optional[str]:
    """``path`` or the nearest existing ancestor of it when that is not a directory (a file such as
    ``/dev/null`` under ``/dev/null/x``: nothing can be looked up or created there), else None."""
    probe = path
    while True:
        if os.path.lexists(probe):
            return None if os.path.isdir(probe) else probe
        parent = os.path.dirname(probe)
        if parent == probe:
            return None
        probe = parent


def _candidate_dirs(py_file: str) -> List[str]:
    """Where ``py_file``'s kernels are looked up, in order (see :func:`kernel_cache_dirs`)."""
    dirs: List[str] = []
    for var in ("PTONUM_CACHE_DIR", "NUMBA_CACHE_DIR"):
        root = os.environ.get(var, "").strip()
        if root:
            base = os.path.abspath(os.path.expanduser(root))
            blocker = _non_directory_on(base)
            if blocker is not None:  # a setting to mend, not a damaged cache
                where = "" if blocker == base else f" ({blocker} is not one)"
                note(f"cache-var-{var}", f"{var} = {root} is not a directory{where}; the compiled kernels are "
                                         "looked up in the other places (see `ptonum compile --help`)")
                continue
            dirs.append(os.path.join(base, _subpath(py_file)))
    dirs.append(os.path.join(os.path.dirname(os.path.abspath(py_file)), "__pycache__"))
    try:
        from numba.misc.appdirs import AppDirs

        home_cache = AppDirs(appname="numba", appauthor=False).user_cache_dir
        # ~/.cache/numba only under a home directory that exists (XDG_CACHE_HOME, when set, is the user's word):
        # a HOME that is not there (HOME=/nonexistent of a daemon account, a CI container) is no home directory,
        # and creating it would compile every kernel for minutes, silently, into a directory made at /
        xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
        home_there = bool(xdg and os.path.isabs(xdg)) or os.path.isdir(os.path.expanduser("~"))
        if home_cache and os.path.isabs(home_cache) and home_there:
            dirs.append(os.path.join(home_cache, _subpath(py_file)))
    except Exception:  # pragma: no cover - no usable home: the other places only
        pass
    out: List[str] = []
    for d in dirs:
        if d not in out:
            out.append(d)
    return out


def kernel_cache_dirs() -> List[str]:
    """The directories the compiled kernels are looked up in, in order: ``$PTONUM_CACHE_DIR/<sub>``,
    ``$NUMBA_CACHE_DIR/<sub>`` (each when set), ``__pycache__`` beside the kernel modules, numba's
    per-user cache directory ``<sub>`` (``~/.cache/numba``); ``<sub>`` names the install.  New
    compilations are saved in the first writable one (:func:`writable_cache_dir`).

    Source: no spec counterpart (compilation helper).
    """
    return _candidate_dirs(os.path.join(os.path.dirname(os.path.abspath(__file__)), "postprocess.py"))


def writable_cache_dir() -> Optional[str]:
    """The first of :func:`kernel_cache_dirs` a new compilation can be saved in, or None.

    Source: no spec counterpart (compilation helper).
    """
    return next((d for d in kernel_cache_dirs() if _writable_dir(d)), None)


NO_CACHE_NOTE = ("no writable kernel cache directory (tried {dirs}); compiling a kernel now (several "
                 "minutes), kept in this process only, so every run pays it again; set PTONUM_CACHE_DIR to a "
                 "writable directory, or run `ptonum compile` once with write access to one of them "
                 "(PTONUM_DISABLE_NUMBA=1 runs on numpy instead: same bits)")
NUMPY_NOTE = ("no writable kernel cache directory and no compiled kernels in any (tried {dirs}): compiling "
              "them would take minutes in every process, so the fast engine runs on numpy here (same bits and "
              "flags); set PTONUM_CACHE_DIR to a writable directory, or run `ptonum compile` once with write "
              "access to one of them, for the compiled kernels")
DAMAGED_NOTE = "damaged kernel cache file {path} ({why}) discarded; recompiling"
#: The first bytes of a kernel cache data file, then the SHA-256 digest of the rest (numba's pickled
#: compile result, machine code included).  numba itself loads a data file's code unchecked: one
#: flipped bit in it crashed the process or published wrong flags (break 2026-12-03).  Part of the
#: index stamp too, so data files of another format read as stale (recompiled), not as damaged.
CACHE_DATA_MAGIC = b"ptonum kernel cache, sha256\n"


def sealed(payload: bytes) -> bytes:
    """``payload`` (a pickled compile result) with :data:`CACHE_DATA_MAGIC` and its SHA-256 digest in front.

    Source: no spec counterpart (cache integrity).
    """
    return CACHE_DATA_MAGIC + hashlib.sha256(payload).digest() + payload


def unsealed(blob: bytes) -> bytes:
    """The payload of a :func:`sealed` data file; ValueError when the header is missing or the digest does
    not match the content (a changed, truncated or foreign file).

    Source: no spec counterpart (cache integrity).
    """
    head = len(CACHE_DATA_MAGIC)
    if not blob.startswith(CACHE_DATA_MAGIC) or len(blob) < head + 32:
        raise ValueError("no ptonum checksum header")
    payload = blob[head + 32:]
    if hashlib.sha256(payload).digest() != blob[head:head + 32]:
        raise ValueError("SHA-256 mismatch: changed since it was written")
    return payload


def _discard(path: str, exc: BaseException) -> None:
    why = f"{type(exc).__name__}: {exc}".strip().rstrip(":")
    if len(why) > 80:
        why = why[:77] + "..."
    note("damaged", DAMAGED_NOTE.format(path=path, why=why))
    try:
        os.unlink(path)
    except OSError:
        pass


if _numba is not None:
    import pickle as _pickle

    from numba.core import caching as _caching

    class _DirLocator(_caching._SourceFileBackedLocatorMixin, _caching._CacheLocator):
        """A locator for one fixed directory (the source stamp is the file's content hash)."""

        def __init__(self, py_func: Any, py_file: str, path: str) -> None:
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            self._cache_path = path

        def get_cache_path(self) -> str:
            return self._cache_path

    class _Impl(_caching.CompileResultCacheImpl):
        """numba's compile-result (de)serialisation, without its locator search (which raises when
        no directory is writable)."""

        def __init__(self, py_func: Any, locator: Any) -> None:
            self._lineno = py_func.__code__.co_firstlineno
            self._locator = locator
            modname = os.path.splitext(os.path.basename(inspect.getfile(py_func)))[0]
            qualname = getattr(py_func, "__qualname__", py_func.__name__)
            self._filename_base = self.get_filename_base(f"{modname}.{qualname}", getattr(sys, "abiflags", ""))

    class _IndexFile(_caching.IndexDataCacheFile):
        """numba's index + data files of one directory; a damaged file is discarded, not raised.  Data files
        are :func:`sealed`: a load checks the digest before unpickling the machine code."""

        def _save_data(self, name: str, data: Any) -> None:
            with self._open_for_write(self._data_path(name)) as f:
                f.write(sealed(self._dump(data)))

        def _load_data(self, name: str) -> Any:
            with open(self._data_path(name), "rb") as f:
                blob = f.read()
            return _pickle.loads(unsealed(blob))

        def _load_index(self) -> Dict[Any, str]:
            try:
                return dict(super()._load_index())
            except OSError:  # the directory cannot be read (permissions, a file on the path): not damage
                return {}
            except Exception as exc:  # truncated or garbled pickle
                _discard(self._index_path, exc)
                return {}

        def load(self, key: Any) -> Any:
            name = self._load_index().get(key)
            if name is None:
                return None
            try:
                return self._load_data(name)
            except OSError:  # missing or unreadable (permissions, a file on the path): not damage
                return None
            except Exception as exc:
                _discard(self._data_path(name), exc)
                return None

    class _KernelCache(_caching.Cache):
        """A numba function cache over several directories (:func:`kernel_cache_dirs`): loads from the
        first that holds the overload, saves to the first writable one, and never raises for a
        directory it cannot use or a file it cannot read."""

        _impl_class: Any = _Impl

        def __init__(self, py_func: Any) -> None:
            self._name = repr(py_func)
            self._py_func = py_func
            py_file = inspect.getfile(py_func)
            locators = [_DirLocator(py_func, py_file, d) for d in _candidate_dirs(py_file)]
            self._impl = _Impl(py_func, locators[0])
            # the tables' digest too: a kernel freezes the module-level facts it reads from
            # ptonum.tables into its machine code, so new facts must not load old code
            stamp = (locators[0].get_source_stamp(), kernel_facts_stamp(), CACHE_DATA_MAGIC)
            self._files = [_IndexFile(cache_path=loc.get_cache_path(), filename_base=self._impl.filename_base,
                                      source_stamp=stamp) for loc in locators]
            self._cache_file = self._files[0]
            self._cache_path = locators[0].get_cache_path()
            self.enable()

        def save_dir_file(self) -> Any:
            """The index file of the first writable directory, or None."""
            return next((f for f in self._files if _writable_dir(f._cache_path)), None)

        def loaded_index_files(self) -> List[Any]:
            """The index files whose index is current and non-empty."""
            return [f for f in self._files if f._load_index()]

        def flush(self) -> None:
            target = self.save_dir_file()
            if target is not None:
                target.flush()

        def load_overload(self, sig: Any, target_context: Any) -> Any:
            if not self._enabled:
                return None
            target_context.refresh()
            key = self._index_key(sig, target_context.codegen())
            for f in self._files:
                data = f.load(key)
                if data is None:
                    continue
                try:
                    return self._checked(self._impl.rebuild(target_context, data), sig)
                except Exception as exc:
                    _discard(f._data_path(f._load_index().get(key, "")), exc)
            if self.save_dir_file() is None:  # say it before the compile, not after
                self._note_no_cache()
            else:
                _say_compiling()
            return None

        def _checked(self, cres: Any, sig: Any) -> Any:
            """``cres`` when it is this function's compilation for ``sig``; else ValueError (a data file that
            reads well but holds another kernel: copied or renamed over this one's)."""
            fn = getattr(cres, "fndesc", None)
            got = (getattr(fn, "modname", None), getattr(fn, "qualname", None), tuple(cres.signature.args))
            want = (self._py_func.__module__, self._py_func.__qualname__, tuple(sig))
            if got != want:
                raise ValueError(f"it holds {got[0]}.{got[1]}, not {want[0]}.{want[1]}, or other argument types")
            return cres

        def _note_no_cache(self) -> None:
            note("nocache", NO_CACHE_NOTE.format(dirs=", ".join(f._cache_path for f in self._files)))

        def save_overload(self, sig: Any, data: Any) -> None:
            if not self._enabled or not self._impl.check_cachable(data):
                return
            key = self._index_key(sig, data.codegen)
            payload = None
            for f in self._files:
                if not _writable_dir(f._cache_path):
                    continue
                try:
                    if payload is None:
                        payload = self._impl.reduce(data)
                    f.save(key, payload)
                    return
                except OSError:  # full disk, permissions changed: the next directory
                    _WRITABLE[f._cache_path] = False
                except Exception as exc:  # the compilation is in memory already: keep computing
                    note("unsaved", f"a compiled kernel could not be saved in {f._cache_path} "
                                    f"({type(exc).__name__}: {exc}); it lives in this process only")
                    return
            self._note_no_cache()


def entry_kernels(module_name: str) -> List[Any]:
    """The compiled entry points of ``ptonum.kernels.<module_name>``: module-level numba dispatchers
    whose name contains ``kernel`` (the helpers they call are compiled into them), or every dispatcher if none is.

    Source: no spec counterpart (compilation helper).
    """
    from numba.core.dispatcher import Dispatcher

    mod = importlib.import_module(f"{__name__}.{module_name}")
    found = [(k, v) for k, v in vars(mod).items() if isinstance(v, Dispatcher)]
    entries = [v for k, v in found if "kernel" in k]
    return entries or [v for _, v in found]


def kernel_cache_warm(module_name: str) -> bool:
    """True when one of :func:`kernel_cache_dirs` holds a current compilation of every entry kernel of
    ``ptonum.kernels.<module_name>`` (``postprocess``, ``tcvt``, ``decompose``).

    Cheap (reads the small ``*.nbi`` index files, no compilation) and conservative: a missing,
    empty, damaged or stale index (the kernel source changed since) counts as cold, and so does
    anything unexpected (numba missing, a numba version with another cache layout).  A warm answer
    can still meet a first call with a new argument type, which compiles that one specialization.

    Source: no spec counterpart (compilation helper).
    """
    if not NUMBA_AVAILABLE:
        return False
    try:
        entries = entry_kernels(module_name)
        return bool(entries) and all(bool(d._cache.loaded_index_files()) for d in entries)
    except Exception:  # private numba API: any surprise means "do not know", i.e. cold
        return False


def kernel_cache_dir(module_name: str) -> Optional[str]:
    """The directory new compilations of ``ptonum.kernels.<module_name>`` are saved in (the first
    writable of :func:`kernel_cache_dirs`); else the one its cached kernels load from; None when
    neither exists.

    Source: no spec counterpart (compilation helper).
    """
    if not NUMBA_AVAILABLE:
        return None
    try:
        entries = entry_kernels(module_name)
        if not entries:
            return None
        target = entries[0]._cache.save_dir_file()
        if target is None:
            loaded = entries[0]._cache.loaded_index_files()
            target = loaded[0] if loaded else None
        return None if target is None else str(target._cache_path)
    except Exception:
        return None


def publish_kernels(module_names: List[str]) -> int:
    """Copy every kernel specialization this process loaded from another cache directory (e.g.
    ``__pycache__`` beside a read-only install) into the writable one (:func:`writable_cache_dir`,
    e.g. ``PTONUM_CACHE_DIR``) when it lacks it; returns how many were copied.  (Kernels compiled
    in this process are saved there when compiled.)

    Source: no spec counterpart (compilation helper).
    """
    saved = 0
    for name in module_names:
        for disp in entry_kernels(name):
            cache = disp._cache
            target = cache.save_dir_file()
            if target is None:
                continue
            index = target._load_index()
            for sig, cres in list(disp.overloads.items()):
                key = cache._index_key(sig, cres.codegen)
                if key in index:
                    continue
                for f in cache._files:  # copy the serialised entry it was loaded from
                    entry: Optional[str] = f._load_index().get(key) if f is not target else None
                    if entry is not None:
                        try:
                            target.save(key, f._load_data(entry))
                            saved += 1
                        except Exception as exc:  # changed or unreadable since it was loaded
                            note("unsaved", f"kernel cache entry {f._data_path(entry)} not copied "
                                            f"({type(exc).__name__}: {exc})")
                        break
    return saved
