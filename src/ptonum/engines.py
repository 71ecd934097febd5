"""The one engine-dispatch point: which implementation runs a call, and the only importer of the kernels.

Every numeric operation has a ``reference`` implementation (Python ints and
Fractions, the ASL step by step) and a ``fast`` one; the fast engine runs
either numpy code in the owning module or a compiled numba kernel
(``ptonum.kernels.*``).  :func:`select` makes that choice, the same way for
every operation; the wrappers below are the only way into the kernel modules
(each imports its kernel module on first use, so ``import ptonum`` does not
import numba).  The kernels themselves import only :mod:`ptonum.kernels`
(configuration) and :mod:`ptonum.tables`; whatever else they need (mode facts,
decoded parameters, the owning module's rule) arrives as arguments.

``ptonum.kernels`` (package) reads the environment: ``PTONUM_DISABLE_NUMBA``,
``PTONUM_KERNEL_MIN_ELEMENTS`` (the smallest call that uses a kernel) and the
cache location; this module only asks it.

Source: ADR-0085 D174 (two engines, one result); no ASL counterpart.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable, Dict, Literal, Optional, Tuple

import numpy as np

from . import tables
from ._util import Engine

__all__ = [
    "Path",
    "PATHS",
    "select",
    "kernels_available",
    "run_tile",
    "encode_values",
    "reduction_step_values",
    "to_e8m0_kernel",
    "decompose_codes",
    "compile_postprocess",
    "threading_layer_problem",
    "JIT_TEXT",
]

Path = Literal["reference", "numpy", "numba"]
#: The three implementations a call can run on.
PATHS: Tuple[str, ...] = ("reference", "numpy", "numba")


def select(engine: Engine, size: int) -> Path:
    """The implementation a call of ``size`` elements runs on under ``engine`` (already checked).

    ``"reference"`` for the reference engine; for the fast engine ``"numba"``
    when the kernels are enabled for that many elements
    (:func:`ptonum.kernels.numba_enabled`), else ``"numpy"``.

    Source: ADR-0085 D174; no ASL counterpart.
    """
    if engine == "reference":
        return "reference"
    if not tables.kernel_size(size):  # a small call never imports numba (start-up time)
        return "numpy"
    # the environment was read just now (size and PTONUM_DISABLE_NUMBA); left: numba imports, no fork
    return "numba" if (_kernel_module("").numba_usable(size) and not _jit_disabled(note=True)
                       and _threading_layer_loads()) else "numpy"


JIT_TEXT = ("NUMBA_DISABLE_JIT is set: numba compiles nothing (its decorators return the plain Python "
            "functions), so the fast engine runs on numpy here (same bits and flags); unset it for the compiled "
            "kernels")


def _jit_disabled(note: bool = False) -> bool:
    """True when numba's ``NUMBA_DISABLE_JIT`` is on (read by numba when imported): the kernels cannot be
    built, so the fast engine takes the numpy path; with ``note``, one note on stderr (once per process).
    Call only with numba importable.

    Source: no spec counterpart (engine configuration).
    """
    try:
        import numba

        off = bool(getattr(numba.config, "DISABLE_JIT", False))
    except Exception:  # pragma: no cover - numba's configuration moved: as before
        return False
    if off and note:
        _kernel_module("").note("nojit", JIT_TEXT)
    return off


#: None until asked; then why numba's threading layer does not load ("" when it loads; chosen once per process)
_THREADS_WHY: Optional[str] = None

THREADS_TEXT = ("NUMBA_THREADING_LAYER = {layer!r}: numba cannot load that threading layer ({why}); unset it or "
                "choose one that loads (omp, workqueue, or tbb with TBB installed)")


def threading_layer_problem() -> Optional[str]:
    """None when numba's threading layer loads (the one ``NUMBA_THREADING_LAYER`` names, or numba's own
    choice), else why not, as one line naming the variable (an unknown name, or TBB/OpenMP not installed:
    numba's ValueError, which every kernel launch, and every cached kernel's load, would raise).  Asked
    once per process: numba reads the variable when it is imported and starts the layer once.  Call only
    with numba importable.

    Source: no spec counterpart (engine configuration).
    """
    global _THREADS_WHY
    if _THREADS_WHY is None:
        try:
            import numba
            from numba.np.ufunc import parallel as _par

            if not _par._is_initialized:
                _par._launch_threads()  # what the first parallel launch does; idempotent, under numba's lock
            _THREADS_WHY = ""
        except ValueError as exc:  # numba: "... is unknown to Numba" / "No threading layer could be loaded"
            why = " ".join(str(exc).split())
            layer = str(getattr(getattr(numba, "config", None), "THREADING_LAYER", "default"))
            _THREADS_WHY = THREADS_TEXT.format(layer=layer, why=why[:160])
        except Exception:  # pragma: no cover - numba internals moved: the launch itself decides, as before
            _THREADS_WHY = ""
    return _THREADS_WHY or None


def _threading_layer_loads() -> bool:
    """True when numba's threading layer loads (:func:`threading_layer_problem`); else one note on stderr
    and False: the fast engine runs on numpy, same bits and flags."""
    why = threading_layer_problem()
    if why is None:
        return True
    _kernel_module("").note("threads", why.replace("; unset it", "; the fast engine runs on numpy here (same "
                                                  "bits and flags, slower); unset it"))
    return False


_KERNEL_MODULES: Dict[str, Any] = {}


def _kernel_module(name: str) -> Any:
    """``ptonum.kernels`` (``name`` empty) or ``ptonum.kernels.<name>``, imported on first use (importing
    numba costs ~0.2 s, seconds on a loaded machine) and then kept: a call pays no import statement."""
    mod = _KERNEL_MODULES.get(name)
    if mod is None:
        mod = importlib.import_module(f"{__package__}.kernels" + (f".{name}" if name else ""))
        _KERNEL_MODULES[name] = mod
    return mod


def kernels_available() -> bool:
    """True when numba imports, ``PTONUM_DISABLE_NUMBA`` is unset and ``NUMBA_DISABLE_JIT`` is not on (any
    size).

    Source: no spec counterpart (engine configuration).
    """
    from . import kernels

    return bool(kernels.numba_enabled(None)) and not _jit_disabled()


def run_tile(acc: np.ndarray, **kw: Any) -> int:
    """The fused B.FPATR element pipeline and folds (``ptonum.kernels.postprocess.run_tile``).

    Arguments are those of the kernel (flat buffers and a
    :class:`ptonum.tables.TileKernelConfig`); returns the OR of all flags.
    Source: ADR-0085 D175-D181; ``TileProfileMatrixPostProcessWithFlags``.
    """
    return int(_kernel_module("postprocess").run_tile(acc, **kw))


def encode_values(v: np.ndarray, dst_code: int, mode: int, sat: bool) -> Tuple[np.ndarray, np.ndarray, int]:
    """Kernel form of ``ptonum.encode.encode_fast`` (``ptonum.kernels.postprocess.encode_values``).

    Source: ADR-0085 D177/D178; ``MatrixEncodeReal``.
    """
    from .kernels import postprocess

    return postprocess.encode_values(v, dst_code, mode, sat)


def reduction_step_values(cur: np.ndarray, cand: np.ndarray, acc_code: int, max_abs: bool
                          ) -> Tuple[np.ndarray, np.ndarray]:
    """Kernel form of one reduction step over flat ``uint32`` arrays.

    Source: ADR-0085 D175; ``TileProfileMatrixReductionStepWithFlags``.
    """
    from .kernels import postprocess

    return postprocess.reduction_step_values(cur, cand, acc_code, max_abs)


def to_e8m0_kernel(bits: np.ndarray, layout: Any, mode: Any, sat: bool, rule: Callable[..., Any]
                   ) -> Tuple[np.ndarray, np.ndarray]:
    """TCVT to E8M0 through ``ptonum.kernels.tcvt`` (tables filled from the owning module's ``rule``).

    Source: ADR-0085 D183; ``TCVTToE8M0``.
    """
    from .kernels import tcvt

    return tcvt.to_e8m0_kernel(bits, layout, mode, sat, rule)


def decompose_codes(codes: np.ndarray, key: Any, desc: Any, *columns: np.ndarray) -> Tuple[np.ndarray, ...]:
    """Finite decomposition of 8/16-bit codes through ``ptonum.kernels.decompose``.

    Source: ADR-0085 D182; ``TileNumericFiniteDecomposition``.
    """
    from .kernels import decompose

    return tuple(decompose.decompose_codes(codes, key, desc, *columns))


def compile_postprocess() -> Optional[float]:
    """Compile (or load) every post-process kernel specialization; seconds taken.

    Source: no spec counterpart (compilation helper).
    """
    from .kernels import postprocess

    return postprocess.compile_all()
