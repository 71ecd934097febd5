"""Tile DataTypes, format descriptors, value classes and exact decomposition.

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

import dataclasses
import enum
import threading
from fractions import Fraction
from typing import Any, Dict, NamedTuple, Optional, Tuple, Union

import numpy as np

from ._util import as_bits, check_engine
from .errors import UsageError

__all__ = [
    "TileDataType",
    "parse_data_type",
    "ValueClass",
    "FormatKind",
    "FormatDescriptor",
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


class TileDataType(enum.IntEnum):
    """B.DATR DataType codes (``TileDataTypeFromEncoding``)."""

    FP64 = 0
    FP32 = 1
    TF32 = 2
    HF32 = 3
    FP16 = 4
    BF16 = 5
    HiF8 = 6
    E4M3 = 7
    E5M2 = 8
    E3M2 = 9
    E2M3 = 10
    E2M1X2 = 11
    E1M2X2 = 12
    E8M0 = 13
    HiF4X2 = 14
    S64 = 16
    S32 = 17
    S16 = 18
    S8 = 19
    S4X2 = 20
    U64 = 24
    U32 = 25
    U16 = 26
    U8 = 27
    U4X2 = 28

    @property
    def is_integer(self) -> bool:
        return self.value >= 16

    @property
    def is_floating(self) -> bool:
        return self.value < 16

    @property
    def is_signed_integer(self) -> bool:
        return 16 <= self.value <= 20


_BY_NAME = {m.name.upper(): m for m in TileDataType}

DataTypeLike = Union[TileDataType, int, str]


def parse_data_type(value: DataTypeLike, name: str = "data_type") -> TileDataType:
    """Look a Tile DataType up by member, B.DATR code or name (case-insensitive).

    Raises :class:`UsageError` naming ``name`` and the value when it is not an
    assigned DataType (codes 15, 21-23, 29-31 are reserved or DTYPE_NONE).

    Source: ADR-0085 D182; ``TileDataTypeFromEncoding``
    (``asl/arch/data-types/tile-data-types.asl``).
    """
    if isinstance(value, TileDataType):
        return value
    if isinstance(value, bool):
        raise UsageError(f"{name} = {value!r}: expected a Tile DataType name or code")
    if isinstance(value, int) or (hasattr(value, "dtype") and getattr(value, "dtype").kind in "iu"):
        iv = int(value)
        try:
            return TileDataType(iv)
        except ValueError:
            raise UsageError(
                f"{name} = {iv}: not an assigned Tile DataType code (0-14, 16-20, 24-28)"
            ) from None
    if isinstance(value, str):
        key = value.strip().upper()
        if key in _BY_NAME:
            return _BY_NAME[key]
        raise UsageError(
            f"{name} = {value!r}: unknown Tile DataType; expected one of {', '.join(m.name for m in TileDataType)}"
        )
    raise UsageError(f"{name} = {value!r}: expected a Tile DataType name or code")


# ---------------------------------------------------------------------------
# Value classes and descriptors
# ---------------------------------------------------------------------------


class ValueClass(enum.IntEnum):
    """The value class of one encoding (ASL ``NumericValueClass``, same order)."""

    INVALID_ENCODING = 0
    POSITIVE_ZERO = 1
    NEGATIVE_ZERO = 2
    POSITIVE_SUBNORMAL = 3
    NEGATIVE_SUBNORMAL = 4
    POSITIVE_NORMAL = 5
    NEGATIVE_NORMAL = 6
    POSITIVE_INFINITY = 7
    NEGATIVE_INFINITY = 8
    QUIET_NAN = 9
    SIGNALING_NAN = 10

    @property
    def label(self) -> str:
        """CamelCase name as the ASL spells it, e.g. ``PositiveSubnormal``."""
        if self is ValueClass.QUIET_NAN:
            return "QuietNaN"
        if self is ValueClass.SIGNALING_NAN:
            return "SignalingNaN"
        return "".join(part.capitalize() for part in self.name.split("_"))

    @property
    def is_nan(self) -> bool:
        """``NumericValueClassIsNaN``."""
        return self in (ValueClass.QUIET_NAN, ValueClass.SIGNALING_NAN)

    @property
    def is_infinity(self) -> bool:
        """``NumericValueClassIsInfinity``."""
        return self in (ValueClass.POSITIVE_INFINITY, ValueClass.NEGATIVE_INFINITY)

    @property
    def is_zero(self) -> bool:
        """``NumericValueClassIsZero``."""
        return self in (ValueClass.POSITIVE_ZERO, ValueClass.NEGATIVE_ZERO)

    @property
    def is_subnormal(self) -> bool:
        """``NumericValueClassIsSubnormal``."""
        return self in (ValueClass.POSITIVE_SUBNORMAL, ValueClass.NEGATIVE_SUBNORMAL)


class FormatKind(enum.IntEnum):
    """How a format's fields are laid out (ASL ``NumericFormatKind``, same order)."""

    UNAVAILABLE = 0
    FIXED_BINARY = 1
    HIF8 = 2
    E8M0 = 3


@dataclasses.dataclass(frozen=True)
class FormatDescriptor:
    """Exact layout of one floating or scale format (ASL ``NumericFormatDescriptor``).

    The fields and their meaning are those of the ASL record: carrier and lane
    widths in bits, lanes per carrier, sign field width and position, the
    smallest and largest exponent and fraction field widths (they differ only for
    HiF8's tapered fields), the exponent bias (when the format has one), the
    carrier bits that must be zero (TF32/HF32 low bits, E3M2/E2M3 high bits),
    and which special-value classes exist.
    """

    available: bool
    kind: FormatKind
    carrier_bits: int
    lane_bits: int
    lanes_per_carrier: int
    sign_bits: int
    sign_bit: int
    exponent_bits_min: int
    exponent_bits_max: int
    fraction_bits_min: int
    fraction_bits_max: int
    exponent_bias_available: bool
    exponent_bias: int
    required_low_zero_bits: int
    required_high_zero_bits: int
    has_zero: bool
    has_signed_zero: bool
    has_subnormal: bool
    has_infinity: bool
    has_quiet_nan: bool
    has_signaling_nan: bool


#: ``UnavailableNumericFormatDescriptor``: every width zero, every capability false.
UNAVAILABLE_DESCRIPTOR = FormatDescriptor(
    available=False, kind=FormatKind.UNAVAILABLE, carrier_bits=0, lane_bits=0,
    lanes_per_carrier=0, sign_bits=0, sign_bit=0, exponent_bits_min=0,
    exponent_bits_max=0, fraction_bits_min=0, fraction_bits_max=0,
    exponent_bias_available=False, exponent_bias=0, required_low_zero_bits=0,
    required_high_zero_bits=0, has_zero=False, has_signed_zero=False,
    has_subnormal=False, has_infinity=False, has_quiet_nan=False,
    has_signaling_nan=False,
)


def _fixed(carrier: int, lane: int, lanes: int, exp_bits: int, frac_bits: int, bias: int,
           *, low_zero: int = 0, high_zero: int = 0, subnormal: bool = True,
           infinity: bool = True, quiet_nan: bool = True,
           signaling_nan: bool = True) -> FormatDescriptor:
    """A sign/exponent/fraction descriptor; the sign is the lane's top bit."""
    return FormatDescriptor(
        available=True, kind=FormatKind.FIXED_BINARY, carrier_bits=carrier,
        lane_bits=lane, lanes_per_carrier=lanes, sign_bits=1, sign_bit=lane - 1,
        exponent_bits_min=exp_bits, exponent_bits_max=exp_bits,
        fraction_bits_min=frac_bits, fraction_bits_max=frac_bits,
        exponent_bias_available=True, exponent_bias=bias,
        required_low_zero_bits=low_zero, required_high_zero_bits=high_zero,
        has_zero=True, has_signed_zero=True, has_subnormal=subnormal,
        has_infinity=infinity, has_quiet_nan=quiet_nan, has_signaling_nan=signaling_nan,
    )


_T = TileDataType
_NO_SPECIALS = dict(infinity=False, quiet_nan=False, signaling_nan=False)

# One entry per ``<Format>NumericFormatDescriptor`` in asl/arch/data-types/formats/.
_DESCRIPTORS: Dict[TileDataType, FormatDescriptor] = {
    _T.FP64: _fixed(64, 64, 1, 11, 52, 1023),
    _T.FP32: _fixed(32, 32, 1, 8, 23, 127),
    _T.TF32: _fixed(32, 32, 1, 8, 10, 127, low_zero=13),
    _T.HF32: _fixed(32, 32, 1, 8, 11, 127, low_zero=12),
    _T.FP16: _fixed(16, 16, 1, 5, 10, 15),
    _T.BF16: _fixed(16, 16, 1, 8, 7, 127),
    _T.HiF8: FormatDescriptor(
        available=True, kind=FormatKind.HIF8, carrier_bits=8, lane_bits=8,
        lanes_per_carrier=1, sign_bits=1, sign_bit=7, exponent_bits_min=0,
        exponent_bits_max=4, fraction_bits_min=1, fraction_bits_max=3,
        exponent_bias_available=False, exponent_bias=0, required_low_zero_bits=0,
        required_high_zero_bits=0, has_zero=True, has_signed_zero=False,
        has_subnormal=True, has_infinity=True, has_quiet_nan=True,
        has_signaling_nan=False,
    ),
    _T.E4M3: _fixed(8, 8, 1, 4, 3, 7, infinity=False, signaling_nan=False),
    _T.E5M2: _fixed(8, 8, 1, 5, 2, 15),
    _T.E3M2: _fixed(8, 6, 1, 3, 2, 3, high_zero=2, **_NO_SPECIALS),
    _T.E2M3: _fixed(8, 6, 1, 2, 3, 1, high_zero=2, **_NO_SPECIALS),
    _T.E2M1X2: _fixed(8, 4, 2, 2, 1, 1, subnormal=False, **_NO_SPECIALS),
    _T.E1M2X2: _fixed(8, 4, 2, 1, 2, 1, subnormal=False, **_NO_SPECIALS),
    _T.E8M0: FormatDescriptor(
        available=True, kind=FormatKind.E8M0, carrier_bits=8, lane_bits=8,
        lanes_per_carrier=1, sign_bits=0, sign_bit=0, exponent_bits_min=8,
        exponent_bits_max=8, fraction_bits_min=0, fraction_bits_max=0,
        exponent_bias_available=True, exponent_bias=127, required_low_zero_bits=0,
        required_high_zero_bits=0, has_zero=False, has_signed_zero=False,
        has_subnormal=False, has_infinity=False, has_quiet_nan=True,
        has_signaling_nan=False,
    ),
    _T.HiF4X2: _fixed(8, 4, 2, 1, 2, 1, subnormal=False, **_NO_SPECIALS),
}

# Integer types: (carrier bits, lane bits, lanes per carrier, signed).
_INTEGERS: Dict[TileDataType, Tuple[int, int, int, bool]] = {
    _T.S64: (64, 64, 1, True), _T.S32: (32, 32, 1, True), _T.S16: (16, 16, 1, True),
    _T.S8: (8, 8, 1, True), _T.S4X2: (8, 4, 2, True),
    _T.U64: (64, 64, 1, False), _T.U32: (32, 32, 1, False), _T.U16: (16, 16, 1, False),
    _T.U8: (8, 8, 1, False), _T.U4X2: (8, 4, 2, False),
}

# TileNumericCanonicalNaN: the types that have a canonical NaN encoding.
_CANONICAL_NAN: Dict[TileDataType, int] = {
    _T.FP64: 0x7FF8000000000000, _T.FP32: 0x7FC00000, _T.TF32: 0x7FC00000,
    _T.HF32: 0x7FC00000, _T.FP16: 0x7E00, _T.BF16: 0x7FC0, _T.HiF8: 0x80,
    _T.E4M3: 0x7F, _T.E5M2: 0x7E, _T.E8M0: 0xFF,
}


def descriptor(data_type: DataTypeLike) -> FormatDescriptor:
    """The format descriptor of ``data_type`` (a :class:`TileDataType`, code or name).

    Floating and scale types return their exact descriptor; integer types return
    the unavailable descriptor (``available=False``, kind ``UNAVAILABLE``, every
    width zero).

    Source: ADR-0085 decision 182; ASL ``TileNumericFormatDescriptor`` and the
    ``<Format>NumericFormatDescriptor`` functions, ``UnavailableNumericFormatDescriptor``.

    Raises :class:`UsageError` for an unknown type name or code.
    """
    dt = parse_data_type(data_type, "data_type")
    return _DESCRIPTORS.get(dt, UNAVAILABLE_DESCRIPTOR)


def carrier_bits(data_type: DataTypeLike) -> int:
    """Width in bits of one stored carrier of ``data_type`` (a byte for ``X2`` types).

    Raises :class:`UsageError` for an unknown type.

    Source: ADR-0085 D182; the ``NumericFormatDescriptor`` of the type (carrier width) and
    ``TileElementBits``.
    """
    dt = parse_data_type(data_type, "data_type")
    if dt in _INTEGERS:
        return _INTEGERS[dt][0]
    return _DESCRIPTORS[dt].carrier_bits


def lanes_per_carrier(data_type: DataTypeLike) -> int:
    """Logical lanes per carrier: 2 for the packed ``X2`` types, else 1.

    Source: ADR-0085 D182; the ``NumericFormatDescriptor`` of the type (lanes) and
    ``TilePackedLaneIndex``.
    """
    dt = parse_data_type(data_type, "data_type")
    if dt in _INTEGERS:
        return _INTEGERS[dt][2]
    return _DESCRIPTORS[dt].lanes_per_carrier


def canonical_nan(data_type: DataTypeLike) -> Optional[int]:
    """The canonical NaN encoding of ``data_type``, or ``None`` when it has none.

    Source: ASL ``TileNumericCanonicalNaN`` (and ``<Format>CanonicalNaN``).
    """
    dt = parse_data_type(data_type, "data_type")
    return _CANONICAL_NAN.get(dt)


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
    d = _DESCRIPTORS.get(dt)
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
    if value in (0x80, 0x6F, 0xEF):  # NaN, +Inf, -Inf
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
    d = _DESCRIPTORS.get(dt)
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


def _from_finite_sign(negative: bool, zero: bool, subnormal: bool) -> ValueClass:
    """``NumericValueClassFromFiniteSign``."""
    if zero:
        return _VC.NEGATIVE_ZERO if negative else _VC.POSITIVE_ZERO
    if subnormal:
        return _VC.NEGATIVE_SUBNORMAL if negative else _VC.POSITIVE_SUBNORMAL
    return _VC.NEGATIVE_NORMAL if negative else _VC.POSITIVE_NORMAL


def _ref_class(dt: TileDataType, carrier: int, lane: int) -> ValueClass:
    """``TileNumericValueClass`` for one carrier and lane."""
    if dt in _INTEGERS:  # ClassifySignedInteger / ClassifyUnsignedInteger
        _, lane_bits, _, signed = _INTEGERS[dt]
        v = _lane_value(dt, carrier, lane)
        if v == 0:
            return _VC.POSITIVE_ZERO
        if signed and (v >> (lane_bits - 1)) & 1:
            return _VC.NEGATIVE_NORMAL
        return _VC.POSITIVE_NORMAL
    if not _ref_encoding_valid(dt, carrier):
        return _VC.INVALID_ENCODING
    d = _DESCRIPTORS[dt]
    if d.kind is FormatKind.HIF8:  # ClassifyHiF8
        if carrier == 0x80:
            return _VC.QUIET_NAN
        if carrier == 0x6F:
            return _VC.POSITIVE_INFINITY
        if carrier == 0xEF:
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
    d = _DESCRIPTORS.get(dt)
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
    avail = (v != _U64(0x80)) & (v != _U64(0x6F)) & (v != _U64(0xEF))
    keep = avail & (sig != 0)
    neg = (v >> _U64(7)).astype(bool) & avail
    return Decomposition(avail, neg, np.where(avail, sig, _U64(0)), np.where(keep, exp, np.int64(0)))


def _np_class(dt: TileDataType, v: np.ndarray, lane: int) -> np.ndarray:
    """Vectorized ``TileNumericValueClass`` on uint64 carriers -> uint8 codes."""
    if dt in _INTEGERS:
        _, lane_bits, _, signed = _INTEGERS[dt]
        value = _np_lane(dt, v, lane)
        out = np.full(v.shape, _VC.POSITIVE_NORMAL, np.uint8)
        if signed:
            out[((value >> _U64(lane_bits - 1)) & _U64(1)) == 1] = _VC.NEGATIVE_NORMAL
        out[value == 0] = _VC.POSITIVE_ZERO
        return out
    d = _DESCRIPTORS[dt]
    if d.kind is FormatKind.E8M0:
        return np.where(v == _U64(0xFF), np.uint8(_VC.QUIET_NAN), np.uint8(_VC.POSITIVE_NORMAL))
    if d.kind is FormatKind.HIF8:
        s = (v >> _U64(7)).astype(np.uint8)
        out = np.where((v & _U64(0x7F)) <= 7, np.uint8(_VC.POSITIVE_SUBNORMAL) + s,
                       np.uint8(_VC.POSITIVE_NORMAL) + s).astype(np.uint8)
        out[v == 0] = _VC.POSITIVE_ZERO
        out[v == 0x80] = _VC.QUIET_NAN
        out[v == 0x6F] = _VC.POSITIVE_INFINITY
        out[v == 0xEF] = _VC.NEGATIVE_INFINITY
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
    return dt in _DESCRIPTORS and _DESCRIPTORS[dt].carrier_bits <= 16


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
    ``encoding``; an available element's value is
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
        from .kernels import numba_enabled  # deferred: importing numba costs ~0.2 s

        # numba kernel (``ptonum.kernels.decompose``) from ``PTONUM_KERNEL_MIN_ELEMENTS`` elements on
        if codes.size and numba_enabled(codes.size):
            from .kernels import decompose as _kd

            return Decomposition(*_kd.decompose_codes(codes, (dt, ln), _DESCRIPTORS[dt], table.se[:, 0],
                                                      table.se[:, 1], table.flags[:, 0], table.flags[:, 1]))
        idx = _index(codes)
        se = np.take(table.se, idx, axis=0)
        fl = np.take(table.flags, idx, axis=0)
        return Decomposition(fl[..., 0], fl[..., 1], se[..., 0].view(_U64), se[..., 1])
    return _np_decompose(dt, codes.astype(_U64, copy=False), ln)


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
    """
    dt, codes, ln = _prepare(data_type, encoding, lane)
    if _uses_lut(dt):
        return np.asarray(np.take(_lut(dt, ln).f64, _index(codes)))
    if dt in _INTEGERS:
        carrier, lane_bits, _, signed = _INTEGERS[dt]
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
    valid = _np_valid(_DESCRIPTORS[dt], codes.astype(_U64, copy=False))
    if valid is not None:
        out = np.where(valid, out, np.nan)
    return np.asarray(out)
