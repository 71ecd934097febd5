"""B.FPATR RowMax / GroupMax auxiliary reductions over the raw accumulator.

Source: ADR-0085 decision 175 (reductions consume the raw accumulator before
PreQuant and activation; MaxAbsEn and RowMaxInit act on this stage) and
decision 181 (RowMaxOut ``M x 1`` and GroupMaxOut ``M x ceil(N/GroupN)`` keep
the accumulator type; fixed increasing-column order; flags OR-ed before the
commit).  Executable owners in pto-spec:

* ``TileProfileMatrixReductionStepWithFlags`` and
  ``MatrixReductionAbsoluteWithFlags`` (``asl/arch/profile/matrix-postprocess.asl``),
* the MAX step they call: ``TileReductionStepWithFlags`` with ``TileReduction_MAX``
  -> ``TileProfileBinaryWithFlags``; integers via ``TileIntegerMinMaxValue``
  (signed compare for S32, unsigned for U32); FP32 via
  ``HardwareNumericFloatingMinMax`` = ``HardwareNumericMinMaxSpecial``
  (``asl/arch/features/mx-formats.asl``) then the order key of
  ``HardwareNumericFloatingOrderKey`` (``asl/arch/features/minmax-profile.asl``),
* FP32 absolute value ``TileFixedUnaryValue(TileUnary_ABS)``
  (``asl/tile/model/execution/unary.asl``): clears the sign bit, keeps any NaN
  payload, raises nothing,
* the folds ``MatrixRowMaxResult`` and ``MatrixGroupMaxResult``
  (``asl/tile/model/execution/postprocess.asl``).

Fold summary (our words): a row (or group) starts from its first element; with
MaxAbsEn that element first goes through one step against itself; every later
column ``c`` (in increasing order) replaces the running value by
``step(running, x[c])``; for RowMax with RowMaxInit a last step uses the
RowMaxIn element as ``current`` and the row result as ``candidate``.

Why the fast engine may reduce without a column loop (argued from the ASL, and
checked against the reference fold in the tests):

* S32/U32: MAX is a plain signed/unsigned maximum (ties return equal bits) and
  raises nothing; MaxAbs maps each operand independently, and the running value
  is already non-negative after the first step, so only INT_MIN elements
  (and an INT_MIN RowMaxIn) raise OF.
* FP32: a step with exactly one NaN returns the other operand, with two NaNs
  the canonical quiet NaN 0x7FC00000; so NaN elements are skipped and the result
  is the key-maximum of the non-NaN elements (the ``+0``-unless-both-``-0``
  zero rule agrees with the key order, and the key map is a bijection, so a key
  tie means identical bits).  A group with no non-NaN element gives the
  canonical NaN when at least one step ran, else its single raw element.
  NV is raised iff some step saw a signalling NaN: any sNaN in a group that
  ran a step (size >= 2, or MaxAbsEn which runs the self-step).
"""

from __future__ import annotations

from typing import Any, List, NamedTuple, Optional, Tuple

import numpy as np

from .._util import as_bits, check_bool, check_engine, scalar_int, shaped
from ..errors import UsageError
from ..formats import TileDataType, parse_data_type
from ..tables import DESTINATIONS, NV, OF

__all__ = [
    "REDUCTION_TYPES",
    "CANONICAL_NAN_FP32",
    "ReductionTraceStep",
    "check_reduction_type",
    "reduction_step",
    "reduction_trace",
    "row_max",
    "group_max",
    "fold_groups",
    "combine_partials",
]

#: Accumulator types a B.FPATR reduction runs on (``BundleFPATRAccumulatorTypeLegal``).
REDUCTION_TYPES = (TileDataType.FP32, TileDataType.S32, TileDataType.U32)

_FP32 = DESTINATIONS[TileDataType.FP32]
#: FP32 canonical quiet NaN (``HardwareNumericCanonicalNaNResult`` for FP32; ptonum.tables).
CANONICAL_NAN_FP32: int = _FP32.canonical_nan or 0
_FP32_INF = _FP32.overflow_code(False, False)  # +Inf: also the mask of the exponent field

_NV = NV
_OF = OF
_INT_MIN = 0x80000000
_MASK32 = 0xFFFFFFFF


def check_reduction_type(acc_type: Any, name: str = "acc_type") -> TileDataType:
    """Resolve ``acc_type`` (member, code or name) and require FP32, S32 or U32.

    Raises :class:`UsageError` for anything else.

    Source: ADR-0085 D175; ``TileProfileMatrixReductionStepWithFlags`` (defined for FP32, S32 and
    U32 accumulators).
    """
    t = parse_data_type(acc_type, name)
    if t not in REDUCTION_TYPES:
        raise UsageError(
            f"{name} = {t.name}: B.FPATR reductions run on the accumulator type FP32, S32 or U32 "
            "(ADR-0085 D175, TileProfileMatrixReductionStepWithFlags)"
        )
    return t


# ---------------------------------------------------------------------------
# Reference engine: Python ints, one ASL function per helper
# ---------------------------------------------------------------------------


def _fp32_is_nan(v: int) -> bool:
    return (v & _FP32_INF) == _FP32_INF and (v & 0x007FFFFF) != 0


def _fp32_is_snan(v: int) -> bool:
    return _fp32_is_nan(v) and not (v & 0x00400000)


def _fp32_is_zero(v: int) -> bool:
    return (v & 0x7FFFFFFF) == 0


def _fp32_key(v: int) -> int:
    # HardwareNumericFloatingOrderKey: negative -> NOT(raw), else raw XOR sign.
    return (~v) & _MASK32 if v & 0x80000000 else v ^ 0x80000000


def _abs_ref(value: int, t: TileDataType) -> Tuple[int, int]:
    """MatrixReductionAbsoluteWithFlags on a 32-bit element (bits, flags)."""
    if t is TileDataType.U32:
        return value, 0
    if t is TileDataType.S32:
        if not value & 0x80000000:
            return value, 0
        if value == _INT_MIN:
            return 0x7FFFFFFF, _OF
        return (-value) & _MASK32, 0
    # FP32: TileFixedUnaryValue(ABS) clears the sign bit, never invalid.
    return value & 0x7FFFFFFF, 0


def _max_ref(left: int, right: int, t: TileDataType) -> Tuple[int, int]:
    """TileReductionStepWithFlags(TileReduction_MAX) on 32-bit elements (bits, flags)."""
    if t is TileDataType.U32:
        return (left if left >= right else right), 0
    if t is TileDataType.S32:
        ls = left - (1 << 32) if left & 0x80000000 else left
        rs = right - (1 << 32) if right & 0x80000000 else right
        return (left if ls >= rs else right), 0
    # FP32: HardwareNumericMinMaxSpecial, then the order key.
    ln, rn = _fp32_is_nan(left), _fp32_is_nan(right)
    flags = _NV if (_fp32_is_snan(left) or _fp32_is_snan(right)) else 0
    if ln and rn:
        return CANONICAL_NAN_FP32, flags
    if ln:
        return right, flags
    if rn:
        return left, flags
    if _fp32_is_zero(left) and _fp32_is_zero(right):
        if left == 0x80000000 and right == 0x80000000:
            return left, 0
        return 0, 0
    return (left if _fp32_key(left) >= _fp32_key(right) else right), 0


def _step_ref(current: int, candidate: int, t: TileDataType, max_abs: bool) -> Tuple[int, int]:
    """TileProfileMatrixReductionStepWithFlags on Python ints (bits, flags)."""
    flags = 0
    if max_abs:
        current, f1 = _abs_ref(current, t)
        candidate, f2 = _abs_ref(candidate, t)
        flags = f1 | f2
    result, f3 = _max_ref(current, candidate, t)
    return result, flags | f3


# ---------------------------------------------------------------------------
# Fast engine: numpy, element-wise
# ---------------------------------------------------------------------------


def _fp32_nan_np(v: np.ndarray) -> np.ndarray:
    return ((v & np.uint32(_FP32_INF)) == np.uint32(_FP32_INF)) & ((v & np.uint32(0x007FFFFF)) != 0)


def _fp32_snan_np(v: np.ndarray) -> np.ndarray:
    return _fp32_nan_np(v) & ((v & np.uint32(0x00400000)) == 0)


def _fp32_key_np(v: np.ndarray) -> np.ndarray:
    neg = (v & np.uint32(0x80000000)) != 0
    return np.where(neg, ~v, v ^ np.uint32(0x80000000))


def _fp32_unkey_np(k: np.ndarray) -> np.ndarray:
    # Inverse of the order key: keys >= 2^31 came from non-negative encodings.
    pos = (k & np.uint32(0x80000000)) != 0
    return np.where(pos, k ^ np.uint32(0x80000000), ~k)


def _abs_np(v: np.ndarray, t: TileDataType) -> Tuple[np.ndarray, np.ndarray]:
    if t is TileDataType.U32:
        return v, np.zeros(v.shape, np.uint8)
    if t is TileDataType.S32:
        neg = (v & np.uint32(0x80000000)) != 0
        mag = np.where(neg, (np.uint32(0) - v), v)  # uint32 wraps: INT_MIN -> INT_MIN
        is_min = v == np.uint32(_INT_MIN)
        mag = np.where(is_min, np.uint32(0x7FFFFFFF), mag)
        return mag.astype(np.uint32), np.where(is_min, np.uint8(_OF), np.uint8(0))
    return v & np.uint32(0x7FFFFFFF), np.zeros(v.shape, np.uint8)


def _max_np(left: np.ndarray, right: np.ndarray, t: TileDataType) -> Tuple[np.ndarray, np.ndarray]:
    if t is TileDataType.U32:
        return np.where(left >= right, left, right), np.zeros(left.shape, np.uint8)
    if t is TileDataType.S32:
        pick_left = left.view(np.int32) >= right.view(np.int32)
        return np.where(pick_left, left, right), np.zeros(left.shape, np.uint8)
    ln, rn = _fp32_nan_np(left), _fp32_nan_np(right)
    invalid = _fp32_snan_np(left) | _fp32_snan_np(right)
    lz = (left & np.uint32(0x7FFFFFFF)) == 0
    rz = (right & np.uint32(0x7FFFFFFF)) == 0
    ordinary = np.where(_fp32_key_np(left) >= _fp32_key_np(right), left, right)
    both_neg_zero = (left == np.uint32(0x80000000)) & (right == np.uint32(0x80000000))
    zero_res = np.where(both_neg_zero, left, np.uint32(0))
    res = np.where(lz & rz, zero_res, ordinary)
    res = np.where(rn, left, res)
    res = np.where(ln, right, res)
    res = np.where(ln & rn, np.uint32(CANONICAL_NAN_FP32), res)
    return res.astype(np.uint32), np.where(invalid, np.uint8(_NV), np.uint8(0))


def _step_np(current: np.ndarray, candidate: np.ndarray, t: TileDataType, max_abs: bool) -> Tuple[np.ndarray, np.ndarray]:
    flags = np.zeros(np.broadcast(current, candidate).shape, np.uint8)
    if max_abs:
        current, f1 = _abs_np(current, t)
        candidate, f2 = _abs_np(candidate, t)
        flags = flags | f1 | f2
    res, f3 = _max_np(current, candidate, t)
    return res, (flags | f3).astype(np.uint8)


def _steps(current: np.ndarray, candidate: np.ndarray, t: TileDataType, max_abs: bool,
           engine: str) -> Tuple[np.ndarray, np.ndarray]:
    """One step per element of two same-shape uint32 arrays, in the chosen engine."""
    if engine == "fast":
        return _step_np(current, candidate, t, max_abs)
    out = np.empty(current.shape, np.uint32)
    fl = np.empty(current.shape, np.uint8)
    for idx in np.ndindex(*current.shape):
        out[idx], fl[idx] = _step_ref(int(current[idx]), int(candidate[idx]), t, max_abs)
    return out, fl


# ---------------------------------------------------------------------------
# Public step
# ---------------------------------------------------------------------------


def reduction_step(
    current: Any,
    candidate: Any,
    *,
    acc_type: Any,
    max_abs: Any,
    engine: str = "fast",
) -> Tuple[np.ndarray, np.ndarray]:
    """One RowMax/GroupMax step: ``max(current, candidate)``, abs-ing both first if ``max_abs``.

    ``current`` and ``candidate`` are raw 32-bit accumulator encodings (ints or
    integer arrays, broadcast together).  ``acc_type`` is FP32, S32 or U32
    (member, code or name).  ABS: U32 unchanged; S32 two's-complement negate
    with INT_MIN -> 0x7FFFFFFF and OF (0x04) only; FP32 sign bit cleared (NaN
    payload kept, no flag).  MAX: S32 signed, U32 unsigned, FP32 with one NaN
    -> the other operand, two NaNs -> 0x7FC00000, NV if either operand is a
    signalling NaN, ``+0`` for mixed zeros, otherwise the larger value (equal
    keys keep ``current``).

    Returns ``(bits, flags)``: ``uint32`` bits and ``uint8`` 5-bit flags of the
    broadcast shape (0-d for scalar inputs).

    Raises :class:`UsageError` for encodings wider than 32 bits, a non-boolean
    ``max_abs``, an unknown engine or an accumulator type other than FP32/S32/U32.

    Source: ADR-0085 D175; ``TileProfileMatrixReductionStepWithFlags`` with
    ``MatrixReductionAbsoluteWithFlags`` and ``TileReductionStepWithFlags``
    (``TileReduction_MAX``).
    """
    eng = check_engine(engine)
    t = check_reduction_type(acc_type)
    mabs = check_bool("max_abs", max_abs)
    cur = as_bits("current", current, 32)
    cand = as_bits("candidate", candidate, 32)
    try:
        shape = np.broadcast(cur, cand).shape
    except ValueError:
        raise UsageError(
            f"current shape {cur.shape} and candidate shape {cand.shape} do not broadcast"
        ) from None
    cur32 = np.broadcast_to(cur, shape).astype(np.uint32)
    cand32 = np.broadcast_to(cand, shape).astype(np.uint32)
    return shaped(shape, *_steps(cur32, cand32, t, mabs, eng))  # type: ignore[return-value]


class ReductionTraceStep(NamedTuple):
    """One stage of a reduction step, for ``ptonum explain``."""

    name: str  #: short stage name ("abs current", "max", ...)
    asl: str  #: the ASL function that owns the stage
    text: str  #: what happened, in words
    flags: int  #: flags raised by this stage


def _describe(v: int, t: TileDataType) -> str:
    if t is TileDataType.U32:
        return f"{v:#010x} (U32 {v})"
    if t is TileDataType.S32:
        s = v - (1 << 32) if v & 0x80000000 else v
        return f"{v:#010x} (S32 {s})"
    if _fp32_is_nan(v):
        return f"{v:#010x} ({'sNaN' if _fp32_is_snan(v) else 'qNaN'})"
    f = float(np.array(v, np.uint32).view(np.float32))
    return f"{v:#010x} (FP32 {f!r})"


def _abs_what_happened(v: int, t: TileDataType) -> str:
    """What ``MatrixReductionAbsoluteWithFlags`` does to this 32-bit operand (trace text)."""
    negative = bool(v >> 31)
    if t is TileDataType.S32:
        if v == 0x80000000:
            return "INT_MIN has no S32 magnitude: saturates to 0x7fffffff and raises OF"
        return "negative, so negated" if negative else "not negative, so unchanged"
    if t is TileDataType.FP32:
        if not negative:
            return "sign bit already clear, so unchanged"
        return "sign bit cleared (NaN payload kept, no flag)" if _fp32_is_nan(v) else "sign bit cleared"
    return "U32 is unsigned: unchanged"


def reduction_trace(current: int, candidate: int, *, acc_type: Any, max_abs: Any) -> Tuple[int, int, List[ReductionTraceStep]]:
    """Explain one reduction step on two scalar 32-bit encodings.

    Returns ``(bits, flags, steps)``; ``bits``/``flags`` equal
    :func:`reduction_step` (``engine="reference"``), ``steps`` lists each stage
    (ABS of each operand when ``max_abs``, then MAX) as :class:`ReductionTraceStep`.

    Raises :class:`UsageError` like :func:`reduction_step`.

    Source: ADR-0085 D175; ``TileProfileMatrixReductionStepWithFlags``.
    """
    t = check_reduction_type(acc_type)
    mabs = check_bool("max_abs", max_abs)
    cur = int(as_bits("current", current, 32))
    cand = int(as_bits("candidate", candidate, 32))
    steps: List[ReductionTraceStep] = []
    flags = 0
    if mabs:
        for label, v in (("current", cur), ("candidate", cand)):
            a, f = _abs_ref(v, t)
            steps.append(ReductionTraceStep(f"abs {label}", "MatrixReductionAbsoluteWithFlags",
                                   f"{_describe(v, t)} -> {_describe(a, t)}: {_abs_what_happened(v, t)}", f))
            flags |= f
            if label == "current":
                cur = a
            else:
                cand = a
    res, f = _max_ref(cur, cand, t)
    if t is TileDataType.FP32:
        ln, rn = _fp32_is_nan(cur), _fp32_is_nan(cand)
        if ln and rn:
            why = "both operands are NaN: canonical quiet NaN"
        elif ln or rn:
            why = "one operand is NaN: the other operand is selected"
        elif _fp32_is_zero(cur) and _fp32_is_zero(cand):
            why = "both zeros: +0 unless both are -0"
        else:
            why = "ordered by the FP32 order key; equal keeps current"
        if f:
            why += "; a signalling NaN operand raises NV"
        asl = "HardwareNumericFloatingMinMax"
    elif t is TileDataType.S32:
        why, asl = "signed comparison; equal keeps current", "TileIntegerMinMaxValue"
    else:
        why, asl = "unsigned comparison; equal keeps current", "TileIntegerMinMaxValue"
    steps.append(ReductionTraceStep("max", asl, f"max({_describe(cur, t)}, {_describe(cand, t)}) = {_describe(res, t)}: {why}", f))
    flags |= f
    return res, flags, steps


# ---------------------------------------------------------------------------
# Folds
# ---------------------------------------------------------------------------


def _as_matrix(name: str, value: Any) -> np.ndarray:
    arr = as_bits(name, value, 32)
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
        raise UsageError(f"{name}: expected a 2-D M x N array with M, N >= 1, got shape {arr.shape}")
    return arr.astype(np.uint32)


def _group_starts(n: int, group: int, first: int) -> np.ndarray:
    """First column of each group: 0, then ``first``, ``first + group``, ... below ``n``."""
    return np.concatenate([[0], np.arange(first, n, group)]).astype(np.intp)


def _fold_groups_fast(x: np.ndarray, group: int, t: TileDataType, max_abs: bool,
                      first: int) -> Tuple[np.ndarray, np.ndarray]:
    """Vectorized MatrixGroupMaxResult fold over ``x`` (M x N uint32) in groups of ``group`` columns."""
    m, n = x.shape
    starts = _group_starts(n, group, first)
    sizes = np.diff(np.append(starts, n))  # (G,)
    if t is TileDataType.FP32:
        v = x & np.uint32(0x7FFFFFFF) if max_abs else x
        nan = _fp32_nan_np(v)
        keys = np.where(nan, np.uint32(0), _fp32_key_np(v))
        kmax = np.maximum.reduceat(keys, starts, axis=1)
        del keys
        any_num = np.logical_or.reduceat(~nan, starts, axis=1)
        snan = nan & ((v & np.uint32(0x00400000)) == 0)
        any_snan = np.logical_or.reduceat(snan, starts, axis=1)
        del nan, snan
        stepped = (sizes >= 2) | max_abs  # (G,) whether at least one step ran
        leading = x[:, starts]
        all_nan_res = np.where(stepped, np.uint32(CANONICAL_NAN_FP32), leading)
        res = np.where(any_num, _fp32_unkey_np(kmax), all_nan_res).astype(np.uint32)
        flags = np.where(any_snan & stepped, np.uint8(_NV), np.uint8(0))
        return res, flags.astype(np.uint8)
    if max_abs:
        v, f = _abs_np(x, t)
        flags = np.bitwise_or.reduceat(f, starts, axis=1).astype(np.uint8)
        del f
    else:
        v = x
        flags = np.zeros((m, starts.size), np.uint8)
    if t is TileDataType.S32:
        res = np.maximum.reduceat(v.view(np.int32), starts, axis=1).view(np.uint32)
    else:
        res = np.maximum.reduceat(v, starts, axis=1)
    return res.astype(np.uint32), flags


def _fold_groups_ref(x: np.ndarray, group: int, t: TileDataType, max_abs: bool,
                     first: int) -> Tuple[np.ndarray, np.ndarray]:
    """MatrixGroupMaxResult step by step (Python ints)."""
    m, n = x.shape
    bounds = [int(c) for c in _group_starts(n, group, first)] + [n]
    ng = len(bounds) - 1
    res = np.zeros((m, ng), np.uint32)
    fl = np.zeros((m, ng), np.uint8)
    for r in range(m):
        for g in range(ng):
            start, stop = bounds[g], bounds[g + 1]
            value = int(x[r, start])
            flags = 0
            if max_abs:
                value, f = _step_ref(value, value, t, True)
                flags |= f
            for c in range(start + 1, stop):
                value, f = _step_ref(value, int(x[r, c]), t, max_abs)
                flags |= f
            res[r, g] = value
            fl[r, g] = flags
    return res, fl


def fold_groups(x: np.ndarray, group: int, t: TileDataType, max_abs: bool, engine: str,
                first: Optional[int] = None) -> Tuple[np.ndarray, np.ndarray]:
    """Fold a validated ``uint32`` M x N block in groups of ``group`` columns (typed, no checks).

    ``first`` (default ``group``) is the width of the first group, for a block
    that starts inside a group of the whole tile: groups are then columns
    ``[0, first)``, ``[first, first + group)``, ...  Returns ``(bits, flags)``,
    ``uint32`` and ``uint8`` of shape M x G.  No argument checking;
    :func:`row_max` / :func:`group_max` and the tile operation validate first.

    Source: ADR-0085 D175/D181; ``MatrixRowMaxResult`` / ``MatrixGroupMaxResult``.
    """
    f = group if first is None else first
    if engine == "fast":
        return _fold_groups_fast(x, group, t, max_abs, f)
    return _fold_groups_ref(x, group, t, max_abs, f)


def combine_partials(current: np.ndarray, candidate: np.ndarray, t: TileDataType, max_abs: bool,
                     engine: str) -> Tuple[np.ndarray, np.ndarray]:
    """Join two partial folds of the same row/group: one reduction step per element (typed, no checks).

    ``current`` is the fold of the columns on the left, ``candidate`` the fold
    of the columns that follow (same-shape ``uint32`` arrays).  Folding
    columns ``A`` then ``B`` in increasing order equals ``step(fold(A),
    fold(B))`` with the flags OR-ed: MAX on S32/U32 is a plain maximum; on FP32
    NaNs are skipped (two NaNs give the canonical NaN) and NV comes from the
    step that met the signalling NaN in either order; under MaxAbsEn both
    partials are already absolute values, so the joining step raises nothing
    more (tested against the whole fold in ``tests/test_fpatr_tile.py``).
    RowMaxIn joins the same way, as ``current`` of the last step.

    Returns ``(bits uint32, flags uint8)`` of the same shape.
    Source: ADR-0085 D175/D181; ``TileProfileMatrixReductionStepWithFlags``,
    ``MatrixRowMaxResult``, ``MatrixGroupMaxResult``.
    """
    return _steps(current, candidate, t, max_abs, engine)


def row_max(
    acc_bits: Any,
    *,
    acc_type: Any,
    max_abs: Any,
    row_max_in: Optional[Any] = None,
    engine: str = "fast",
) -> Tuple[np.ndarray, np.ndarray]:
    """RowMaxOut of a raw accumulator tile.

    ``acc_bits``: M x N raw 32-bit accumulator encodings (integer array).
    ``row_max_in``: optional RowMaxIn, M x 1 (or length M) raw encodings of the
    same type; when given, each row ends with one more step whose ``current``
    is the RowMaxIn element and whose ``candidate`` is the row result
    (RowMaxInit=1).

    Returns ``(bits, flags)``: ``uint32`` M x 1 results and ``uint8`` M x 1
    per-row flags (the OR of every step of that row).

    Raises :class:`UsageError` for a non-2-D or empty tile, a RowMaxIn of the
    wrong shape, encodings wider than 32 bits, a bad ``acc_type``/``engine``/``max_abs``.

    Source: ADR-0085 D175/D181; ``MatrixRowMaxResult`` with
    ``TileProfileMatrixReductionStepWithFlags``.
    """
    eng = check_engine(engine)
    t = check_reduction_type(acc_type)
    mabs = check_bool("max_abs", max_abs)
    x = _as_matrix("acc_bits", acc_bits)
    m, n = x.shape
    init: Optional[np.ndarray] = None
    if row_max_in is not None:
        ri = as_bits("row_max_in", row_max_in, 32)
        if ri.shape not in ((m, 1), (m,)):
            raise UsageError(f"row_max_in: expected shape ({m}, 1) for an accumulator of {m} rows, got {ri.shape}")
        init = ri.reshape(m, 1).astype(np.uint32)
    res, fl = fold_groups(x, n, t, mabs, eng)
    if init is not None:
        res, f2 = _steps(init, res, t, mabs, eng)
        fl = fl | f2
    return res.astype(np.uint32), fl.astype(np.uint8)


def group_max(
    acc_bits: Any,
    *,
    acc_type: Any,
    max_abs: Any,
    group_n: int,
    engine: str = "fast",
) -> Tuple[np.ndarray, np.ndarray]:
    """GroupMaxOut of a raw accumulator tile.

    ``acc_bits``: M x N raw 32-bit accumulator encodings.  ``group_n``: the
    GroupN value in columns (8, 16, 32, ... 128 for GroupNCode 1..9; any
    positive int is accepted).  Group ``g`` covers columns
    ``g*group_n .. min((g+1)*group_n, N) - 1``; the last group may be partial.

    Returns ``(bits, flags)``: ``uint32`` and ``uint8`` arrays of shape
    M x ceil(N / group_n).

    Raises :class:`UsageError` for a non-2-D or empty tile, a ``group_n`` that is
    not a positive int, encodings wider than 32 bits, bad ``acc_type``/``engine``/``max_abs``.

    Source: ADR-0085 D175/D181; ``MatrixGroupMaxResult`` with
    ``TileProfileMatrixReductionStepWithFlags``.
    """
    eng = check_engine(engine)
    t = check_reduction_type(acc_type)
    mabs = check_bool("max_abs", max_abs)
    g = scalar_int(group_n)
    if g is None or g < 1:
        raise UsageError(f"group_n = {group_n!r}: expected a positive number of columns (GroupN)")
    x = _as_matrix("acc_bits", acc_bits)
    return fold_groups(x, min(g, x.shape[1]), t, mabs, eng)  # a group wider than the tile is the whole row
