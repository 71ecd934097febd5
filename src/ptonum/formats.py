"""Tile DataTypes, format descriptors, value classes and exact decomposition.

The types and descriptors themselves are data declared in
:mod:`ptonum.datatypes` and re-exported here; this module adds the value
operations below.

This module answers, for every assigned Tile DataType, the questions the rest of
ptonum asks about a raw encoding:

* :func:`descriptor` -- the exact field layout and special-value capabilities of
  a floating or scale format (integer types have none);
* :func:`value_class` -- which of the eleven value classes an encoding is in
  (zero, subnormal, normal, infinity, quiet/signaling NaN, invalid encoding);
* :func:`decompose` -- the integer-only finite decomposition
  ``value = (-1)**negative * significand * 2**exponent``;
* :func:`exact_value` / :func:`to_float64` -- the value as a ``Fraction`` or an
  exact ``float64``.

Two engines give the same answers.  ``reference`` decodes element by element
with Python integers, following the ASL format functions branch by branch.
``fast`` is numpy: the 8- and 16-bit carriers (and each lane of the packed
``X2`` types) are decoded once into lookup tables that every later call gathers
from (with numba available, :func:`decompose` calls of at least
``PTONUM_KERNEL_MIN_ELEMENTS`` elements run one parallel pass of
``ptonum.kernels.decompose`` instead); 32- and 64-bit carriers are decoded with vectorized bit arithmetic.

Source: pto-spec ``asl/arch/data-types/tile-data-types.asl`` (codes),
``asl/arch/data-types/format-descriptor.asl`` and
``asl/arch/data-types/formats/*.asl`` (descriptors, value classes,
``TileNumericFiniteDecomposition``), ``asl/arch/data-types/numeric-formats.asl``,
``asl/arch/data-types/numeric-classification.asl`` and
``asl/arch/features/mx-formats.asl`` (``TileNumericValueClass``,
``TileNumericEncodingValid``); ADR-0085 decision 182.
"""

from __future__ import annotations

import threading
from fractions import Fraction
from typing import Any, Dict, NamedTuple, Optional, Tuple

import numpy as np

from . import engines
from ._util import as_bits, check_engine, native, shaped, unmasked
from .datatypes import (
    CANONICAL_NANS,
    DESCRIPTORS,
    INTEGER_LAYOUTS,
    UNAVAILABLE_DESCRIPTOR,
    DataTypeLike,
    FormatDescriptor,
    FormatKind,
    TileDataType,
    ValueClass,
    canonical_nan,
    carrier_bits,
    descriptor,
    lanes_per_carrier,
    parse_data_type,
)
from .errors import UsageError
from .tables import HIF8_INFINITY

__all__ = [
    "TileDataType",
    "DataTypeLike",
    "parse_data_type",
    "ValueClass",
    "FormatKind",
    "FormatDescriptor",
    "UNAVAILABLE_DESCRIPTOR",
    "DESCRIPTORS",
    "INTEGER_LAYOUTS",
    "CANONICAL_NANS",
    "Decomposition",
    "descriptor",
    "carrier_bits",
    "lanes_per_carrier",
    "canonical_nan",
    "hif8_dot_field",
    "value_class",
    "decompose",
    "exact_value",
    "to_float64",
]


def hif8_dot_field(encoding: int) -> Tuple[str, int, int]:
    """Decode the HiF8 dot field of one 8-bit encoding.

    Returns ``(dot, exponent_bits, fraction_bits)`` where ``dot`` is one of
    ``"Denormal", "D0", "D1", "D2", "D3", "D4"``.

    Source: ASL ``HiF8DecodeDotField`` (``formats/hif8.asl``).
    Raises :class:`UsageError` when ``encoding`` is not an 8-bit integer.
    """
    return _hif8_dot(int(as_bits("encoding", encoding, 8)))


# ---------------------------------------------------------------------------
# Argument checking shared by the public functions
# ---------------------------------------------------------------------------


class Decomposition(NamedTuple):
    """``TileNumericFiniteDecomposition`` of an array of encodings.

    ``available`` (bool), ``negative`` (bool), ``significand`` (uint64) and
    ``exponent`` (int64), each with the shape of the encodings.  For an
    available element the exact value is
    ``(-1)**negative * significand * 2**exponent``; a zero has significand 0
    and exponent 0; an unavailable element has every field zero/false.
    The fast engine may return the fields as strided views of one gathered
    block (they are ordinary arrays; copy them if you need contiguity).
    """

    available: np.ndarray
    negative: np.ndarray
    significand: np.ndarray
    exponent: np.ndarray


def _check_lane(dt: TileDataType, lane: Any) -> int:
    if isinstance(lane, (bool, np.bool_)) or not isinstance(lane, (int, np.integer)):
        raise UsageError(f"lane = {lane!r}: expected an integer lane index")
    n = lanes_per_carrier(dt)
    ln = int(lane)
    if not 0 <= ln < n:
        allowed = "lanes 0 (low nibble) and 1 (high nibble)" if n == 2 else "only lane 0"
        raise UsageError(f"lane = {ln}: {dt.name} has {allowed}")
    return ln


def _encodings(dt: TileDataType, encoding: Any, name: str = "encoding") -> np.ndarray:
    """Validate raw encodings against the carrier width of ``dt``.

    Integer numpy arrays pass with at most one ``max()``/``min()`` check and no
    copy; anything else goes through :func:`ptonum._util.as_bits` (which also
    produces the error naming the first offending element).
    """
    width = carrier_bits(dt)
    if isinstance(encoding, np.ndarray):
        encoding = native(unmasked(name, encoding))
    if isinstance(encoding, np.ndarray) and encoding.dtype.kind in "ui" and encoding.size:
        kind, bits = encoding.dtype.kind, encoding.dtype.itemsize * 8
        if kind == "u" and bits <= width:
            return encoding
        if kind == "u" or int(encoding.min()) >= 0:
            if int(encoding.max()) >> width == 0:
                return encoding
    try:
        return as_bits(name, encoding, width)
    except UsageError as exc:
        raise UsageError(f"{exc} (the {dt.name} carrier is {width} bits)") from None


def _prepare(data_type: DataTypeLike, encoding: Any, lane: Any) -> Tuple[TileDataType, np.ndarray, int]:
    dt = parse_data_type(data_type, "data_type")
    ln = _check_lane(dt, lane)
    return dt, _encodings(dt, encoding), ln


# ---------------------------------------------------------------------------
# Reference engine: one Python int at a time, branch by branch as in the ASL
# ---------------------------------------------------------------------------

_Decomp = Tuple[bool, bool, int, int]
_UNAVAILABLE: _Decomp = (False, False, 0, 0)


def _ref_encoding_valid(dt: TileDataType, carrier: int) -> bool:
    """``TileNumericEncodingValid``: TF32/HF32 low bits and E3M2/E2M3 high bits must be zero."""
    d = DESCRIPTORS.get(dt)
    if d is None:
        return True
    if d.required_low_zero_bits and carrier & ((1 << d.required_low_zero_bits) - 1):
        return False
    if d.required_high_zero_bits and carrier >> d.lane_bits:
        return False
    return True


def _lane_value(dt: TileDataType, carrier: int, lane: int) -> int:
    if lanes_per_carrier(dt) == 2:
        return (carrier >> (4 * lane)) & 0xF
    return carrier


def _ref_fixed_fields(d: FormatDescriptor, value: int) -> Tuple[int, int, bool]:
    fb, eb = d.fraction_bits_min, d.exponent_bits_min
    lo = d.required_low_zero_bits
    exponent = (value >> (lo + fb)) & ((1 << eb) - 1)
    fraction = (value >> lo) & ((1 << fb) - 1)
    negative = (value >> d.sign_bit) & 1 == 1
    return exponent, fraction, negative


def _ref_fixed_decompose(d: FormatDescriptor, value: int) -> _Decomp:
    """``<Format>FiniteDecomposition`` for the sign/exponent/fraction formats."""
    fb, eb = d.fraction_bits_min, d.exponent_bits_min
    exponent, fraction, negative = _ref_fixed_fields(d, value)
    all_ones = (1 << eb) - 1
    if d.has_infinity and exponent == all_ones:  # IEEE-style infinity / NaN
        return _UNAVAILABLE
    if (not d.has_infinity and d.has_quiet_nan and exponent == all_ones
            and fraction == (1 << fb) - 1):  # E4M3: S.1111.111 is NaN
        return _UNAVAILABLE
    if exponent == 0:
        if fraction == 0:
            return (True, negative, 0, 0)
        return (True, negative, fraction, 1 - d.exponent_bias - fb)
    return (True, negative, (1 << fb) + fraction, exponent - (d.exponent_bias + fb))


def _ref_hif8_decompose(value: int) -> _Decomp:
    """``HiF8FiniteDecomposition``: tapered dot field, sign-magnitude exponent."""
    if value in (_HIF8_NAN, _HIF8_PINF, _HIF8_NINF):
        return _UNAVAILABLE
    dot, _, _ = _hif8_dot(value)
    negative = value >> 7 == 1
    if dot == "Denormal":
        mantissa = value & 0x7
        if mantissa == 0:
            return (True, False, 0, 0)
        return (True, negative, 1, mantissa - 23)
    if dot == "D0":
        return (True, negative, 8 + (value & 0x7), -3)
    if dot == "D1":
        actual = -1 if (value >> 3) & 1 else 1
        return (True, negative, 8 + (value & 0x7), actual - 3)
    if dot == "D2":
        magnitude = 2 + ((value >> 3) & 1)
        actual = -magnitude if (value >> 4) & 1 else magnitude
        return (True, negative, 8 + (value & 0x7), actual - 3)
    if dot == "D3":
        magnitude = 4 + ((value >> 2) & 0x3)
        actual = -magnitude if (value >> 4) & 1 else magnitude
        return (True, negative, 4 + (value & 0x3), actual - 2)
    magnitude = 8 + ((value >> 1) & 0x7)
    actual = -magnitude if (value >> 4) & 1 else magnitude
    return (True, negative, 2 + (value & 0x1), actual - 1)


def _ref_decompose(dt: TileDataType, carrier: int, lane: int) -> _Decomp:
    """``TileNumericFiniteDecomposition`` for one carrier and lane."""
    d = DESCRIPTORS.get(dt)
    if d is None:  # integer types have no floating decomposition
        return _UNAVAILABLE
    if d.kind is FormatKind.HIF8:
        return _ref_hif8_decompose(carrier)
    if d.kind is FormatKind.E8M0:
        if carrier == 0xFF:
            return _UNAVAILABLE
        return (True, False, 1, carrier - 127)
    if not _ref_encoding_valid(dt, carrier):
        return _UNAVAILABLE
    return _ref_fixed_decompose(d, _lane_value(dt, carrier, lane))


_VC = ValueClass
# HiF8's special codes (ClassifyHiF8): its NaN and (+Inf, -Inf), from ptonum.datatypes / ptonum.tables
_HIF8_NAN = CANONICAL_NANS[TileDataType.HiF8]
_HIF8_PINF, _HIF8_NINF = HIF8_INFINITY


def _from_finite_sign(negative: bool, zero: bool, subnormal: bool) -> ValueClass:
    """``NumericValueClassFromFiniteSign``."""
    if zero:
        return _VC.NEGATIVE_ZERO if negative else _VC.POSITIVE_ZERO
    if subnormal:
        return _VC.NEGATIVE_SUBNORMAL if negative else _VC.POSITIVE_SUBNORMAL
    return _VC.NEGATIVE_NORMAL if negative else _VC.POSITIVE_NORMAL


def _ref_class(dt: TileDataType, carrier: int, lane: int) -> ValueClass:
    """``TileNumericValueClass`` for one carrier and lane."""
    if dt in INTEGER_LAYOUTS:  # ClassifySignedInteger / ClassifyUnsignedInteger
        _, lane_bits, _, signed = INTEGER_LAYOUTS[dt]
        v = _lane_value(dt, carrier, lane)
        if v == 0:
            return _VC.POSITIVE_ZERO
        if signed and (v >> (lane_bits - 1)) & 1:
            return _VC.NEGATIVE_NORMAL
        return _VC.POSITIVE_NORMAL
    if not _ref_encoding_valid(dt, carrier):
        return _VC.INVALID_ENCODING
    d = DESCRIPTORS[dt]
    if d.kind is FormatKind.HIF8:  # ClassifyHiF8
        if carrier == _HIF8_NAN:
            return _VC.QUIET_NAN
        if carrier == _HIF8_PINF:
            return _VC.POSITIVE_INFINITY
        if carrier == _HIF8_NINF:
            return _VC.NEGATIVE_INFINITY
        if carrier == 0:
            return _VC.POSITIVE_ZERO
        return _from_finite_sign(carrier >> 7 == 1, False, carrier & 0x7F <= 7)
    if d.kind is FormatKind.E8M0:  # ClassifyE8M0
        return _VC.QUIET_NAN if carrier == 0xFF else _VC.POSITIVE_NORMAL
    value = _lane_value(dt, carrier, lane)
    exponent, fraction, negative = _ref_fixed_fields(d, value)
    fb, all_ones = d.fraction_bits_min, (1 << d.exponent_bits_min) - 1
    if d.has_infinity and exponent == all_ones:
        if fraction == 0:
            return _VC.NEGATIVE_INFINITY if negative else _VC.POSITIVE_INFINITY
        return _VC.QUIET_NAN if (fraction >> (fb - 1)) & 1 else _VC.SIGNALING_NAN
    if (not d.has_infinity and d.has_quiet_nan and exponent == all_ones
            and fraction == (1 << fb) - 1):
        return _VC.QUIET_NAN
    return _from_finite_sign(negative, exponent == 0 and fraction == 0,
                             d.has_subnormal and exponent == 0 and fraction != 0)


def _hif8_dot(v: int) -> Tuple[str, int, int]:
    """``HiF8DecodeDotField`` of one unchecked 8-bit encoding (see :func:`hif8_dot_field`)."""
    top4 = (v >> 3) & 0xF
    if top4 == 0b0000:
        return ("Denormal", 0, 3)
    if top4 == 0b0001:
        return ("D0", 0, 3)
    if (v >> 4) & 0x7 == 0b001:
        return ("D1", 1, 3)
    top2 = (v >> 5) & 0x3
    if top2 == 0b01:
        return ("D2", 2, 3)
    if top2 == 0b10:
        return ("D3", 3, 2)
    return ("D4", 4, 1)


# ---------------------------------------------------------------------------
# Fast engine: numpy bit arithmetic, and lookup tables for <= 16-bit carriers
# ---------------------------------------------------------------------------

_U64 = np.uint64


def _np_lane(dt: TileDataType, v: np.ndarray, lane: int) -> np.ndarray:
    if lanes_per_carrier(dt) == 2:
        return (v >> _U64(4 * lane)) & _U64(0xF)
    return v


def _np_valid(d: FormatDescriptor, v: np.ndarray) -> Optional[np.ndarray]:
    """Validity mask (``TileNumericEncodingValid``), or None when every encoding is valid."""
    if d.required_low_zero_bits:
        return (v & _U64((1 << d.required_low_zero_bits) - 1)) == 0
    if d.required_high_zero_bits:
        return (v >> _U64(d.lane_bits)) == 0
    return None


def _np_fixed_parts(d: FormatDescriptor, value: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(exponent field, fraction field, sign bool, special mask) of fixed-binary lanes."""
    fb, eb, lo = d.fraction_bits_min, d.exponent_bits_min, d.required_low_zero_bits
    e = (value >> _U64(lo + fb)) & _U64((1 << eb) - 1)
    f = (value >> _U64(lo)) & _U64((1 << fb) - 1)
    s = ((value >> _U64(d.sign_bit)) & _U64(1)).astype(bool)
    if d.has_infinity:
        special = e == _U64((1 << eb) - 1)
    elif d.has_quiet_nan:
        special = (e == _U64((1 << eb) - 1)) & (f == _U64((1 << fb) - 1))
    else:
        special = np.zeros(value.shape, bool)
    return e, f, s, special


def _np_decompose(dt: TileDataType, v: np.ndarray, lane: int) -> Decomposition:
    """Vectorized ``TileNumericFiniteDecomposition`` on uint64 carriers."""
    d = DESCRIPTORS.get(dt)
    shape = v.shape
    if d is None:
        return Decomposition(np.zeros(shape, bool), np.zeros(shape, bool),
                             np.zeros(shape, _U64), np.zeros(shape, np.int64))
    if d.kind is FormatKind.E8M0:
        avail = v != _U64(0xFF)
        return Decomposition(avail, np.zeros(shape, bool), avail.astype(_U64),
                             np.where(avail, v.astype(np.int64) - 127, 0))
    if d.kind is FormatKind.HIF8:
        return _np_hif8_decompose(v)
    value = _np_lane(dt, v, lane)
    e, f, s, special = _np_fixed_parts(d, value)
    valid = _np_valid(d, v)
    avail = ~special if valid is None else (valid & ~special)
    fb = d.fraction_bits_min
    ezero = e == 0
    sig = np.where(ezero, f, f + _U64(1 << fb))
    exp = np.where(ezero, np.int64(1 - d.exponent_bias - fb),
                   e.astype(np.int64) - (d.exponent_bias + fb))
    keep = avail & (sig != 0)  # zeros and unavailable elements carry exponent 0
    return Decomposition(avail, s & avail, np.where(avail, sig, _U64(0)),
                         np.where(keep, exp, np.int64(0)))


def _np_hif8_decompose(v: np.ndarray) -> Decomposition:
    m3 = v & _U64(7)
    b3 = ((v >> _U64(3)) & _U64(1)).astype(bool)
    b4 = ((v >> _U64(4)) & _U64(1)).astype(bool)
    top4, top3, top2 = (v >> _U64(3)) & _U64(0xF), (v >> _U64(4)) & _U64(7), (v >> _U64(5)) & _U64(3)
    den, d0, d1 = top4 == 0, top4 == 1, top3 == 1
    d2, d3, d4 = top2 == 1, top2 == 2, top2 == 3
    sig = np.select([den, d3, d4], [(m3 != 0).astype(_U64), _U64(4) + (v & _U64(3)),
                                    _U64(2) + (v & _U64(1))], _U64(8) + m3)
    mag = np.select([d1, d2, d3, d4], [np.int64(1), 2 + b3.astype(np.int64),
                                       4 + ((v >> _U64(2)) & _U64(3)).astype(np.int64),
                                       8 + ((v >> _U64(1)) & _U64(7)).astype(np.int64)], np.int64(0))
    signed = np.where(d1, np.where(b3, -1, 1), np.where(b4, -mag, mag))
    exp = np.select([den, d0, d1 | d2, d3], [m3.astype(np.int64) - 23, np.int64(-3), signed - 3, signed - 2],
                    signed - 1)
    avail = (v != _U64(_HIF8_NAN)) & (v != _U64(_HIF8_PINF)) & (v != _U64(_HIF8_NINF))
    keep = avail & (sig != 0)
    neg = (v >> _U64(7)).astype(bool) & avail
    return Decomposition(avail, neg, np.where(avail, sig, _U64(0)), np.where(keep, exp, np.int64(0)))


def _np_class(dt: TileDataType, v: np.ndarray, lane: int) -> np.ndarray:
    """Vectorized ``TileNumericValueClass`` on uint64 carriers -> uint8 codes."""
    if dt in INTEGER_LAYOUTS:
        _, lane_bits, _, signed = INTEGER_LAYOUTS[dt]
        value = _np_lane(dt, v, lane)
        out = np.full(v.shape, _VC.POSITIVE_NORMAL, np.uint8)
        if signed:
            out[((value >> _U64(lane_bits - 1)) & _U64(1)) == 1] = _VC.NEGATIVE_NORMAL
        out[value == 0] = _VC.POSITIVE_ZERO
        return out
    d = DESCRIPTORS[dt]
    if d.kind is FormatKind.E8M0:
        return np.where(v == _U64(0xFF), np.uint8(_VC.QUIET_NAN), np.uint8(_VC.POSITIVE_NORMAL))
    if d.kind is FormatKind.HIF8:
        s = (v >> _U64(7)).astype(np.uint8)
        out = np.where((v & _U64(0x7F)) <= 7, np.uint8(_VC.POSITIVE_SUBNORMAL) + s,
                       np.uint8(_VC.POSITIVE_NORMAL) + s).astype(np.uint8)
        out[v == 0] = _VC.POSITIVE_ZERO
        out[v == _HIF8_NAN] = _VC.QUIET_NAN
        out[v == _HIF8_PINF] = _VC.POSITIVE_INFINITY
        out[v == _HIF8_NINF] = _VC.NEGATIVE_INFINITY
        return out
    value = _np_lane(dt, v, lane)
    e, f, s, special = _np_fixed_parts(d, value)
    s8 = s.astype(np.uint8)
    ezero = e == 0
    out = np.uint8(_VC.POSITIVE_NORMAL) + s8
    if d.has_subnormal:
        out = np.where(ezero & (f != 0), np.uint8(_VC.POSITIVE_SUBNORMAL) + s8, out)
    out = np.where(ezero & (f == 0), np.uint8(_VC.POSITIVE_ZERO) + s8, out).astype(np.uint8)
    if d.has_infinity:
        quiet = ((f >> _U64(d.fraction_bits_min - 1)) & _U64(1)) == 1
        nan_cls = np.where(quiet, np.uint8(_VC.QUIET_NAN), np.uint8(_VC.SIGNALING_NAN))
        out = np.where(special, np.where(f == 0, np.uint8(_VC.POSITIVE_INFINITY) + s8, nan_cls), out)
    elif d.has_quiet_nan:
        out = np.where(special, np.uint8(_VC.QUIET_NAN), out)
    valid = _np_valid(d, v)
    if valid is not None:
        out = np.where(valid, out, np.uint8(_VC.INVALID_ENCODING))
    return np.asarray(out, np.uint8)


def _np_float64(dec: Decomposition, cls: np.ndarray) -> np.ndarray:
    """Exact float64 values from a decomposition; specials from the value class."""
    mag = np.ldexp(dec.significand.astype(np.float64), dec.exponent.astype(np.int32))
    out = np.where(dec.negative, -mag, mag)
    out = np.where(cls == _VC.POSITIVE_INFINITY, np.inf, out)
    out = np.where(cls == _VC.NEGATIVE_INFINITY, -np.inf, out)
    return np.where(dec.available, out, np.where(
        (cls == _VC.POSITIVE_INFINITY) | (cls == _VC.NEGATIVE_INFINITY), out, np.nan))


class _Lut(NamedTuple):
    se: np.ndarray  # (N, 2) int64: significand bits, exponent
    flags: np.ndarray  # (N, 2) bool: available, negative
    cls: np.ndarray  # (N,) uint8
    f64: np.ndarray  # (N,) float64


_LUTS: Dict[Tuple[TileDataType, int], _Lut] = {}
_LUT_LOCK = threading.Lock()


def _lut(dt: TileDataType, lane: int) -> _Lut:
    """Decode every carrier of an 8/16-bit floating type once (numpy path) and cache it."""
    key = (dt, lane)
    table = _LUTS.get(key)
    if table is not None:
        return table
    with _LUT_LOCK:
        table = _LUTS.get(key)
        if table is None:
            codes = np.arange(1 << carrier_bits(dt), dtype=_U64)
            dec = _np_decompose(dt, codes, lane)
            cls = _np_class(dt, codes, lane)
            se = np.empty((codes.size, 2), np.int64)
            se[:, 0] = dec.significand.view(np.int64)
            se[:, 1] = dec.exponent
            flags = np.ascontiguousarray(np.stack([dec.available, dec.negative], axis=1))
            table = _Lut(se, flags, cls, _np_float64(dec, cls))
            for arr in table:
                arr.setflags(write=False)
            _LUTS[key] = table
    return table


def _uses_lut(dt: TileDataType) -> bool:
    return dt in DESCRIPTORS and DESCRIPTORS[dt].carrier_bits <= 16


def _index(codes: np.ndarray) -> np.ndarray:
    return codes if codes.dtype == np.intp else codes.astype(np.intp)


# ---------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------


def value_class(data_type: DataTypeLike, encoding: Any, lane: int = 0, *,
                engine: str = "fast") -> np.ndarray:
    """Value class of each encoding, as ``uint8`` :class:`ValueClass` codes.

    ``encoding``: int, sequence or integer array of raw carriers (each must fit
    in the type's carrier width; a byte for ``X2`` types).  ``lane`` selects the
    nibble of an ``X2`` carrier (0 = low nibble, 1 = high nibble); other types
    have only lane 0.  Returns an array with the shape of ``encoding``.

    TF32/HF32 carriers with nonzero required-low bits and E3M2/E2M3 carriers
    with nonzero high bits are ``INVALID_ENCODING``.  Integer types classify as
    zero/normal by sign, as the ASL does.

    Source: ADR-0085 decision 182; ASL ``TileNumericValueClass``,
    ``TileNumericEncodingValid`` and the ``Classify<Format>`` functions.

    Raises :class:`UsageError` for an unknown type, an encoding wider than the
    carrier, a non-integer dtype, a lane out of range or an unknown engine.
    """
    eng = check_engine(engine)
    dt, codes, ln = _prepare(data_type, encoding, lane)
    if eng == "reference":
        flat = [int(_ref_class(dt, c, ln)) for c in codes.ravel().tolist()]
        return np.array(flat, np.uint8).reshape(codes.shape)
    if _uses_lut(dt):
        return np.asarray(np.take(_lut(dt, ln).cls, _index(codes)))
    return _np_class(dt, codes.astype(_U64, copy=False), ln)


def decompose(data_type: DataTypeLike, encoding: Any, lane: int = 0, *,
              engine: str = "fast") -> Decomposition:
    """Exact finite decomposition of each encoding.

    Returns :class:`Decomposition` ``(available, negative, significand,
    exponent)`` arrays (bool, bool, uint64, int64) with the shape of
    ``encoding`` (0-d arrays for a scalar, in both engines); an available element's value is
    ``(-1)**negative * significand * 2**exponent`` (a zero keeps its sign in
    ``negative`` and has exponent 0).  Infinities, NaNs, invalid encodings and
    integer types are unavailable (all fields zero).  For ``X2`` types ``lane``
    selects the nibble (0 = low).

    Source: ADR-0085 decision 182; ASL ``TileNumericFiniteDecomposition`` and
    the ``<Format>FiniteDecomposition`` functions.

    Raises :class:`UsageError` for an unknown type, an encoding wider than the
    carrier, a non-integer dtype, a lane out of range or an unknown engine.
    """
    eng = check_engine(engine)
    dt, codes, ln = _prepare(data_type, encoding, lane)
    if eng == "reference":
        rows = [_ref_decompose(dt, c, ln) for c in codes.ravel().tolist()]
        shape = codes.shape
        return Decomposition(
            np.array([r[0] for r in rows], bool).reshape(shape),
            np.array([r[1] for r in rows], bool).reshape(shape),
            np.array([r[2] for r in rows], _U64).reshape(shape),
            np.array([r[3] for r in rows], np.int64).reshape(shape),
        )
    if _uses_lut(dt):
        table = _lut(dt, ln)
        # numba kernel (``ptonum.kernels.decompose``) from ``PTONUM_KERNEL_MIN_ELEMENTS`` elements on
        if engines.select("fast", codes.size) == "numba":
            return Decomposition(*shaped(codes.shape, *engines.decompose_codes(
                codes, (dt, ln), DESCRIPTORS[dt], table.se[:, 0], table.se[:, 1], table.flags[:, 0],
                table.flags[:, 1])))
        idx = _index(codes)
        se = np.take(table.se, idx, axis=0)
        fl = np.take(table.flags, idx, axis=0)
        return Decomposition(*shaped(codes.shape, fl[..., 0], fl[..., 1], se[..., 0].view(_U64), se[..., 1]))
    return Decomposition(*shaped(codes.shape, *_np_decompose(dt, codes.astype(_U64, copy=False), ln)))


def exact_value(data_type: DataTypeLike, encoding: Any, lane: int = 0) -> Optional[Fraction]:
    """Exact value of one encoding as a ``Fraction``, or ``None`` when unavailable.

    ``None`` for infinities, NaNs, invalid encodings and integer types.  Both
    zeros give ``Fraction(0)`` (use :func:`decompose` for the sign of a zero).

    Source: ADR-0085 decision 182; ASL ``TileNumericFiniteDecomposition``.

    Raises :class:`UsageError` for an unknown type, a non-scalar or too-wide
    encoding, or a lane out of range.
    """
    dt, codes, ln = _prepare(data_type, encoding, lane)
    if codes.ndim != 0:
        raise UsageError(f"encoding: exact_value takes one encoding, got an array of shape {codes.shape}")
    available, negative, significand, exponent = _ref_decompose(dt, int(codes), ln)
    if not available:
        return None
    magnitude = Fraction(significand) * (Fraction(2) ** exponent)
    return -magnitude if negative else magnitude


def to_float64(data_type: DataTypeLike, encoding: Any, lane: int = 0) -> np.ndarray:
    """Decode encodings to ``float64``, exactly for every finite value.

    Every finite value of every floating and scale type is a float64 value, so
    the result is exact; infinities become ``±inf``, NaNs and invalid encodings
    (TF32/HF32 low bits, E3M2/E2M3 high bits) become ``nan``, and a negative
    zero is ``-0.0``.  Integer types up to 32 bits give their integer value
    (two's complement for signed types, per lane for ``X2``).  Returns an array
    with the shape of ``encoding``.

    Source: ADR-0085 decision 182; ASL ``TileNumericFiniteDecomposition`` and
    ``TileNumericValueClass`` (specials).

    Raises :class:`UsageError` for an unknown type, a too-wide encoding, a
    non-integer dtype, a lane out of range, or S64/U64 (not exact in float64).
    A scalar encoding gives a 0-d array.
    """
    dt, codes, ln = _prepare(data_type, encoding, lane)
    return shaped(codes.shape, _to_float64(dt, codes, ln))[0]


def _to_float64(dt: TileDataType, codes: np.ndarray, ln: int) -> np.ndarray:
    """:func:`to_float64` on prepared arguments."""
    if _uses_lut(dt):
        return np.asarray(np.take(_lut(dt, ln).f64, _index(codes)))
    if dt in INTEGER_LAYOUTS:
        carrier, lane_bits, _, signed = INTEGER_LAYOUTS[dt]
        if lane_bits > 32:
            raise UsageError(f"data_type = {dt.name}: 64-bit integers are not exact in float64")
        value = _np_lane(dt, codes.astype(_U64, copy=False), ln).astype(np.int64)
        if signed:
            value = np.where(value >> (lane_bits - 1) == 1, value - (1 << lane_bits), value)
        return value.astype(np.float64)
    if dt is TileDataType.FP64:
        return np.array(codes.astype(_U64, copy=False).view(np.float64), copy=True)
    bits32 = codes.astype(np.uint32)
    with np.errstate(invalid="ignore"):  # signaling NaNs quieten when widened
        out = bits32.view(np.float32).astype(np.float64)
    valid = _np_valid(DESCRIPTORS[dt], codes.astype(_U64, copy=False))
    if valid is not None:
        out = np.where(valid, out, np.nan)
    return np.asarray(out)
