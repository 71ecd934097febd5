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

import os
from typing import Any, Callable, Optional, TypeVar

__all__ = ["NUMBA_AVAILABLE", "DEFAULT_KERNEL_MIN_ELEMENTS", "kernel_min_elements", "numba_enabled", "njit",
           "prange"]

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
