"""Compiled kernels of the fast engine (numba), with a pure-numpy fallback.

The fast engine uses a numba kernel when numba imports, the environment
variable ``PTONUM_DISABLE_NUMBA`` is unset or ``0`` and the call is large
enough to pay for the kernels' one-time compilation (``PTONUM_KERNEL_MIN_ELEMENTS``,
default 65536 elements; set it to 0 to use the kernels for every call);
otherwise it uses the numpy implementation in the owning module.  Both produce identical bits and
flags (the test suite runs the conformance vectors through each).

Nothing here has a spec counterpart: kernels are an implementation detail of
the ``fast`` engine, checked against the ``reference`` engine and the ASL
vectors.
"""

from __future__ import annotations

import importlib
import os
from typing import Any, Callable, List, Optional, TypeVar

__all__ = ["NUMBA_AVAILABLE", "DEFAULT_KERNEL_MIN_ELEMENTS", "kernel_min_elements", "numba_enabled", "njit",
           "prange", "kernel_cache_warm", "kernel_cache_dir"]

#: calls with fewer elements use numpy: the first kernel call of a process with a cold
#: numba cache compiles for tens of seconds, which a small call should never pay
DEFAULT_KERNEL_MIN_ELEMENTS = 1 << 16

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


def kernel_min_elements() -> int:
    """The element count from which the fast engine uses the kernels (``PTONUM_KERNEL_MIN_ELEMENTS``).

    Source: ADR-0085 D174 (engines agree bit for bit); no ASL counterpart (engine selection).
    """
    text = os.environ.get("PTONUM_KERNEL_MIN_ELEMENTS", "")
    try:
        return max(0, int(text)) if text.strip() else DEFAULT_KERNEL_MIN_ELEMENTS
    except ValueError:
        return DEFAULT_KERNEL_MIN_ELEMENTS


def numba_enabled(size: Optional[int] = None) -> bool:
    """True when the fast engine should use the compiled kernels (checked at call time).

    ``size`` is the element count of the call; below :func:`kernel_min_elements` the numpy
    path is used (identical bits and flags).

    Source: ADR-0085 D174 (engines agree bit for bit); no ASL counterpart (engine selection).
    """
    if not (NUMBA_AVAILABLE and os.environ.get("PTONUM_DISABLE_NUMBA", "0") in ("", "0")):
        return False
    return size is None or size >= kernel_min_elements()


def njit(*args: Any, **kwargs: Any) -> Any:
    """``numba.njit`` with caching on, or a no-op decorator when numba is missing.

    Without numba the decorated function stays plain Python; callers must check
    :func:`numba_enabled` and use their numpy path instead of calling it on
    large arrays.

    Source: no spec counterpart (compilation helper).
    """
    kwargs.setdefault("cache", True)
    kwargs.setdefault("nogil", True)
    if _numba is None:
        if args and callable(args[0]) and len(args) == 1 and not kwargs.get("_forced"):
            return args[0]

        def deco(fn: F) -> F:
            return fn

        return deco
    return _numba.njit(*args, **kwargs)


def _entry_dispatchers(module_name: str) -> List[Any]:
    """The compiled entry points of ``ptonum.kernels.<module_name>``: module-level numba dispatchers
    named ``*kernel`` (the helpers they call are compiled into them), or every dispatcher if none is."""
    from numba.core.dispatcher import Dispatcher

    mod = importlib.import_module(f"{__name__}.{module_name}")
    found = [(k, v) for k, v in vars(mod).items() if isinstance(v, Dispatcher)]
    entries = [v for k, v in found if k.endswith("kernel")]
    return entries or [v for _, v in found]


def kernel_cache_warm(module_name: str) -> bool:
    """True when numba's on-disk cache holds a current compilation of every entry kernel of
    ``ptonum.kernels.<module_name>`` (``postprocess``, ``tcvt``, ``decompose``).

    Cheap (reads the small ``*.nbi`` index files, no compilation) and conservative: a missing,
    empty or stale index (the kernel source changed since) counts as cold, and so does anything
    unexpected (numba missing, a numba version with another cache layout).  A warm answer can still
    meet a first call with a new argument type, which compiles that one specialization.

    Source: no spec counterpart (compilation helper).
    """
    if not NUMBA_AVAILABLE:
        return False
    try:
        entries = _entry_dispatchers(module_name)
        return bool(entries) and all(len(d._cache._cache_file._load_index()) > 0 for d in entries)
    except Exception:  # private numba API: any surprise means "do not know", i.e. cold
        return False


def kernel_cache_dir(module_name: str) -> Optional[str]:
    """The directory numba caches ``ptonum.kernels.<module_name>``'s compilations in
    (``__pycache__`` next to the module, or under ``NUMBA_CACHE_DIR``); None when unknown.

    Source: no spec counterpart (compilation helper).
    """
    if not NUMBA_AVAILABLE:
        return None
    try:
        entries = _entry_dispatchers(module_name)
        return str(entries[0]._cache._cache_path) if entries else None
    except Exception:
        return None
