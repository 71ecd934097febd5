"""Compiled kernels of the fast engine (numba), with a pure-numpy fallback.

The fast engine uses a numba kernel when numba imports and the environment
variable ``PTONUM_DISABLE_NUMBA`` is unset or ``0``; otherwise it uses the
numpy implementation in the owning module.  Both produce identical bits and
flags (the test suite runs the conformance vectors through each).

Nothing here has a spec counterpart: kernels are an implementation detail of
the ``fast`` engine, checked against the ``reference`` engine and the ASL
vectors.
"""

from __future__ import annotations

import os
from typing import Any, Callable, TypeVar

__all__ = ["NUMBA_AVAILABLE", "numba_enabled", "njit"]

F = TypeVar("F", bound=Callable[..., Any])

_numba: Any
try:  # pragma: no cover - depends on the environment
    import numba as _numba

    NUMBA_AVAILABLE = True
except Exception:  # pragma: no cover - numba missing or broken: numpy fallback
    _numba = None
    NUMBA_AVAILABLE = False


def numba_enabled() -> bool:
    """True when the fast engine should use the compiled kernels (checked at call time)."""
    return NUMBA_AVAILABLE and os.environ.get("PTONUM_DISABLE_NUMBA", "0") in ("", "0")


def njit(*args: Any, **kwargs: Any) -> Any:
    """``numba.njit`` with caching on, or a no-op decorator when numba is missing.

    Without numba the decorated function stays plain Python; callers must check
    :func:`numba_enabled` and use their numpy path instead of calling it on
    large arrays.
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
