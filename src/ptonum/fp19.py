"""FP19, the B.FPATR scale and activation-parameter carrier.

FP19 has one sign bit (bit 18), an 8-bit exponent with bias 127 (bits 17..10)
and a 10-bit fraction (bits 9..0): FP32's exponent range with an 11-bit
significand.  It has signed zeros, gradual subnormals (``fraction * 2**-136``),
infinities and quiet/signaling NaNs (quiet when fraction bit 9 is set).  B.FPATR
accepts only positive normal scales and positive-zero-or-normal activation
parameters.

Two engines give the same bits: ``reference`` works one element at a time with
Python integers, following the ASL branch by branch; ``fast`` is numpy only.

Source: pto-spec ``asl/arch/data-types/fp19.asl`` (``FP19ValueClass``,
``FP19FiniteValue``, ``FP19ScaleLegal``, ``FP19ActivationParameterLegal``,
``FP32ToFP19``); ADR-0085 decision 180.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, List

import numpy as np

from ._util import as_bits, check_engine, unmasked
from .errors import UsageError
from .formats import ValueClass

__all__ = [
    "CANONICAL_NAN",
    "value_class",
    "finite_value",
    "to_float64",
    "from_fp32",
    "to_fp32_bits",
    "from_float",
    "scale_legal",
    "activation_legal",
]

#: The FP19 NaN that ``FP32ToFP19`` produces for every FP32 NaN.
CANONICAL_NAN = 0x3FF00
_POS_INF = 0x3FC00
_U64 = np.uint64
_VC = ValueClass


# ---------------------------------------------------------------------------
# Reference engine (Python ints, as the ASL reads)
# ---------------------------------------------------------------------------


def _ref_class(value: int) -> ValueClass:
    """``FP19ValueClass`` for one 19-bit encoding."""
    exponent = (value >> 10) & 0xFF
    fraction = value & 0x3FF
    negative = value >> 18 == 1
    if exponent == 0xFF:
        if fraction == 0:
            return _VC.NEGATIVE_INFINITY if negative else _VC.POSITIVE_INFINITY
        return _VC.QUIET_NAN if fraction >> 9 else _VC.SIGNALING_NAN
    if exponent == 0:
        if fraction == 0:
            return _VC.NEGATIVE_ZERO if negative else _VC.POSITIVE_ZERO
        return _VC.NEGATIVE_SUBNORMAL if negative else _VC.POSITIVE_SUBNORMAL
    return _VC.NEGATIVE_NORMAL if negative else _VC.POSITIVE_NORMAL


def _ref_from_fp32(source: int) -> int:
    """``FP32ToFP19`` for one 32-bit encoding."""
    if (source >> 23) & 0xFF == 0xFF and source & 0x7FFFFF:  # ClassifyFP32 says NaN
        return CANONICAL_NAN
    exponent = (source >> 23) & 0xFF
    fraction = (source >> 13) & 0x3FF
    discarded = source & 0x1FFF
    halfway = 0x1000
    if discarded > halfway or (discarded == halfway and fraction % 2 == 1):
        fraction += 1
        if fraction == 0x400:
            fraction = 0
            if exponent < 255:
                exponent += 1
    return ((source >> 31) << 18) | (exponent << 10) | fraction


# ---------------------------------------------------------------------------
# Fast engine (numpy)
# ---------------------------------------------------------------------------


def _np_class(v: np.ndarray) -> np.ndarray:
    e = (v >> _U64(10)) & _U64(0xFF)
    f = v & _U64(0x3FF)
    s = (v >> _U64(18)).astype(np.uint8)
    out = np.where(e == 0, np.where(f == 0, np.uint8(_VC.POSITIVE_ZERO), np.uint8(_VC.POSITIVE_SUBNORMAL)),
                   np.uint8(_VC.POSITIVE_NORMAL)) + s
    nan = np.where(f >> _U64(9) == 1, np.uint8(_VC.QUIET_NAN), np.uint8(_VC.SIGNALING_NAN))
    special = np.where(f == 0, np.uint8(_VC.POSITIVE_INFINITY) + s, nan)
    return np.asarray(np.where(e == 0xFF, special, out), np.uint8)


def _np_from_fp32(b: np.ndarray) -> np.ndarray:
    nan = (((b >> _U64(23)) & _U64(0xFF)) == 0xFF) & ((b & _U64(0x7FFFFF)) != 0)
    magnitude = (b >> _U64(13)) & _U64(0x3FFFF)  # exponent and fraction fields, side by side
    discarded = b & _U64(0x1FFF)
    up = (discarded > 0x1000) | ((discarded == 0x1000) & ((magnitude & _U64(1)) == 1))
    # A fraction carry moves into the exponent field; 254/0x3ff rounds up to infinity.
    rounded = magnitude + up.astype(_U64)
    out = ((b >> _U64(31)) << _U64(18)) | rounded
    return np.where(nan, _U64(CANONICAL_NAN), out).astype(np.uint32)


def _bits19(value: Any, name: str = "bits19") -> np.ndarray:
    return as_bits(name, value, 19)


# ---------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------


def value_class(bits19: Any, *, engine: str = "fast") -> np.ndarray:
    """Value class of FP19 encodings, as ``uint8`` :class:`ptonum.formats.ValueClass` codes.

    ``bits19``: int, sequence or integer array of 19-bit encodings; the result
    has its shape.

    Source: ADR-0085 decision 180; ASL ``FP19ValueClass``.
    Raises :class:`UsageError` when an element does not fit in 19 bits, the
    dtype is not integer, or the engine is unknown.
    """
    eng = check_engine(engine)
    v = _bits19(bits19)
    if eng == "reference":
        return np.array([int(_ref_class(x)) for x in v.ravel().tolist()], np.uint8).reshape(v.shape)
    return _np_class(v)


def finite_value(bits19: Any) -> Fraction:
    """Exact value of one finite FP19 encoding as a ``Fraction``.

    Subnormals are ``fraction * 2**-136``; normals ``(1 + fraction/1024) *
    2**(exponent-127)``; both zeros give ``Fraction(0)``.

    Source: ADR-0085 decision 180; ASL ``FP19FiniteValue``.
    Raises :class:`UsageError` for an array, a value wider than 19 bits, or an
    infinity/NaN (the ASL function asserts a finite operand).
    """
    v = _bits19(bits19)
    if v.ndim != 0:
        raise UsageError(f"bits19: finite_value takes one encoding, got an array of shape {v.shape}")
    x = int(v)
    exponent, fraction = (x >> 10) & 0xFF, x & 0x3FF
    if exponent == 0xFF:
        raise UsageError(f"bits19 = {x:#07x}: infinity or NaN has no finite value (FP19FiniteValue)")
    if exponent == 0:
        magnitude = Fraction(fraction, 1 << 136)
    else:
        magnitude = (1 + Fraction(fraction, 1024)) * Fraction(2) ** (exponent - 127)
    return -magnitude if x >> 18 else magnitude


def to_float64(bits19: Any) -> np.ndarray:
    """Decode FP19 encodings to ``float64`` (exact; ``±inf`` and ``nan`` for specials).

    Every finite FP19 value is a float64 value, so the result is exact; a
    negative zero is ``-0.0``.  Returns an array with the shape of ``bits19``.

    Source: ADR-0085 decision 180; ASL ``FP19FiniteValue`` / ``FP19ValueClass``.
    Raises :class:`UsageError` when an element does not fit in 19 bits.
    """
    v = _bits19(bits19)
    e = ((v >> _U64(10)) & _U64(0xFF)).astype(np.int64)
    f = (v & _U64(0x3FF)).astype(np.float64)
    mag = np.where(e == 0, np.ldexp(f, -136), np.ldexp(f + 1024.0, (e - 137).astype(np.int32)))
    mag = np.where(e == 0xFF, np.where(f == 0, np.inf, np.nan), mag)
    return np.asarray(np.where((v >> _U64(18)) == 1, -mag, mag))


def to_fp32_bits(bits19: Any) -> np.ndarray:
    """Widen FP19 encodings to FP32 encodings (exact, ``uint32``).

    The sign and exponent carry over and the fraction gains 13 zero bits, so
    every value (subnormals included, as the exponent ranges match), infinity
    and NaN payload is preserved; ``FP32ToFP19`` of the result gives the input
    back for every non-NaN encoding.

    Source: ADR-0085 decision 180 (FP19 layout, ``asl/arch/data-types/fp19.asl``).
    Raises :class:`UsageError` when an element does not fit in 19 bits.
    """
    v = _bits19(bits19)
    return np.asarray((((v >> _U64(18)) << _U64(31)) | ((v & _U64(0x3FFFF)) << _U64(13))).astype(np.uint32))


def from_fp32(bits32: Any, *, engine: str = "fast") -> np.ndarray:
    """Convert FP32 encodings to FP19 (``uint32`` holding 19-bit encodings).

    Rounds the 13 dropped fraction bits to nearest, ties to even; a fraction
    carry increments the exponent (the largest finite values round to
    infinity).  Infinities and zeros keep their sign; every NaN becomes the
    canonical ``0x3FF00``.

    Source: ADR-0085 decision 180; ASL ``FP32ToFP19``.
    Raises :class:`UsageError` when an element does not fit in 32 bits, the
    dtype is not integer, or the engine is unknown.
    """
    eng = check_engine(engine)
    b = as_bits("bits32", bits32, 32)
    if eng == "reference":
        return np.array([_ref_from_fp32(x) for x in b.ravel().tolist()], np.uint32).reshape(b.shape)
    return np.asarray(_np_from_fp32(b))


def scale_legal(bits19: Any, *, engine: str = "fast") -> np.ndarray:
    """Whether each FP19 encoding is a legal B.FPATR quantization scale (positive normal).

    Source: ADR-0085 decision 180; ASL ``FP19ScaleLegal``.
    Raises :class:`UsageError` as :func:`value_class`.
    """
    return np.asarray(value_class(bits19, engine=engine) == _VC.POSITIVE_NORMAL)


def activation_legal(bits19: Any, *, engine: str = "fast") -> np.ndarray:
    """Whether each FP19 encoding is a legal activation parameter (+0 or positive normal).

    Source: ADR-0085 decision 180; ASL ``FP19ActivationParameterLegal``.
    Raises :class:`UsageError` as :func:`value_class`.
    """
    cls = value_class(bits19, engine=engine)
    return np.asarray((cls == _VC.POSITIVE_ZERO) | (cls == _VC.POSITIVE_NORMAL))


def _float_array(x: Any) -> np.ndarray:
    if isinstance(x, (bool, np.bool_)):
        raise UsageError(f"x = {x!r}: expected a real number, got a boolean")
    x = unmasked("x", x)
    try:
        arr = np.asarray(x)
    except Exception as exc:  # pragma: no cover - numpy raises many types here
        raise UsageError(f"x: cannot be read as a number array ({exc})") from None
    if arr.dtype.kind == "f":
        return arr.astype(np.float64)
    if arr.dtype.kind in "iu" or arr.dtype == object:
        try:
            ints: List[int] = [int(v) for v in arr.ravel()]
            floats = [float(v) for v in arr.ravel()]
        except (TypeError, ValueError, OverflowError):
            raise UsageError(f"x: expected real numbers, got dtype {arr.dtype}") from None
        for i, (iv, fv, raw) in enumerate(zip(ints, floats, arr.ravel())):
            if isinstance(raw, (bool, np.bool_)) or iv != fv or (arr.dtype == object and not isinstance(raw, (int, float, np.integer, np.floating))):
                where = f"[{', '.join(map(str, np.unravel_index(i, arr.shape)))}]" if arr.ndim else ""
                shown = int(raw) if isinstance(raw, (int, np.integer)) and not isinstance(raw, (bool, np.bool_)) else raw
                raise UsageError(f"x{where} = {shown!r}: expected a real number exactly representable in float64")
        return np.array(floats, np.float64).reshape(arr.shape)
    raise UsageError(f"x: expected real numbers, got dtype {arr.dtype}")


def from_float(x: Any, *, rounding: str = "rne") -> np.ndarray:
    """Encode real numbers as FP19 (``uint32`` holding 19-bit encodings).

    ``x``: a float, int, or array of them (float16/32/64 or integers exactly
    representable in float64).  ``rounding="rne"`` rounds to nearest, ties to
    even, in one step from the exact input (overflow gives ``±inf``, as in
    ``FP32ToFP19``); ``rounding="exact"`` instead raises when some element is
    not exactly an FP19 value.  Infinities keep their sign; NaN becomes the
    canonical ``0x3FF00``; ``-0.0`` gives ``0x40000``.

    Source: ADR-0085 decision 180 (FP19 layout and values, ``fp19.asl``); the
    rounding is that of ``FP32ToFP19`` applied to the exact input.
    Raises :class:`UsageError` for an unknown ``rounding``, a non-numeric
    input, or (``exact``) an element naming its index and value that FP19
    cannot represent.
    """
    if not isinstance(rounding, str) or rounding.lower() not in ("rne", "exact"):
        raise UsageError(f"rounding = {rounding!r}: expected 'rne' or 'exact'")
    a = _float_array(x)
    sign = np.signbit(a)
    nan = np.isnan(a)
    inf = np.isinf(a)
    m = np.where(nan | inf, 0.0, np.abs(a))
    _, e2 = np.frexp(m)
    top = e2.astype(np.int64) - 1  # floor(log2(m)) for m > 0
    normal = m >= 2.0 ** -126
    quantum = np.where(normal, top - 10, -136)
    n = np.rint(np.ldexp(m, (-quantum).astype(np.int32)))  # exact scaling, RNE to an integer
    n_int = n.astype(np.int64)
    overflow = normal & (top > 127)
    bits = np.where(normal, ((top + 126) << 10) + n_int, n_int)
    bits = np.where(overflow | inf | (bits > _POS_INF), _POS_INF, bits)
    bits = bits | (sign.astype(np.int64) << 18)
    bits = np.where(nan, CANONICAL_NAN, bits)
    if rounding.lower() == "exact":
        exact = nan | inf | ((np.ldexp(n, quantum.astype(np.int32)) == m) & ~overflow & ((bits & _POS_INF) != _POS_INF))
        if not np.all(exact):
            idx = tuple(int(i) for i in np.argwhere(~exact)[0]) if a.ndim else ()
            where = f"[{', '.join(map(str, idx))}]" if a.ndim else ""
            val = float(a[idx]) if a.ndim else float(a)
            raise UsageError(f"x{where} = {val!r}: not exactly representable in FP19 (rounding='exact')")
    return np.asarray(bits.astype(np.uint32))
