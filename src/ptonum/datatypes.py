"""Tile DataTypes and their format descriptors: the data every other module reads.

The bottom of the numeric stack (it imports only :mod:`ptonum.errors`): the
B.DATR DataType codes, the eleven value classes, and one frozen
:class:`FormatDescriptor` per floating/scale type, declared once from the ASL
``<Format>NumericFormatDescriptor`` functions.  Every other fact about a
format (largest finite code, infinities, emin, carrier dtype, ...) is derived
from these records (:mod:`ptonum.tables`), never written again.
:mod:`ptonum.formats` re-exports everything here and adds the value
operations (value class, decomposition, exact value).

Source: pto-spec ``asl/arch/data-types/tile-data-types.asl`` (codes),
``asl/arch/data-types/format-descriptor.asl`` and
``asl/arch/data-types/formats/*.asl`` (descriptors), ``TileNumericCanonicalNaN``.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Dict, Optional, Tuple, Union

from ._util import scalar_int
from .errors import UsageError

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
    "descriptor",
    "carrier_bits",
    "lanes_per_carrier",
    "canonical_nan",
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
    iv = scalar_int(value)
    if iv is not None:
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
DESCRIPTORS: Dict[TileDataType, FormatDescriptor] = {
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
INTEGER_LAYOUTS: Dict[TileDataType, Tuple[int, int, int, bool]] = {
    _T.S64: (64, 64, 1, True), _T.S32: (32, 32, 1, True), _T.S16: (16, 16, 1, True),
    _T.S8: (8, 8, 1, True), _T.S4X2: (8, 4, 2, True),
    _T.U64: (64, 64, 1, False), _T.U32: (32, 32, 1, False), _T.U16: (16, 16, 1, False),
    _T.U8: (8, 8, 1, False), _T.U4X2: (8, 4, 2, False),
}

# TileNumericCanonicalNaN: the types that have a canonical NaN encoding.
CANONICAL_NANS: Dict[TileDataType, int] = {
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
    return DESCRIPTORS.get(dt, UNAVAILABLE_DESCRIPTOR)


def carrier_bits(data_type: DataTypeLike) -> int:
    """Width in bits of one stored carrier of ``data_type`` (a byte for ``X2`` types).

    Raises :class:`UsageError` for an unknown type.

    Source: ADR-0085 D182; the ``NumericFormatDescriptor`` of the type (carrier width) and
    ``TileElementBits``.
    """
    dt = parse_data_type(data_type, "data_type")
    if dt in INTEGER_LAYOUTS:
        return INTEGER_LAYOUTS[dt][0]
    return DESCRIPTORS[dt].carrier_bits


def lanes_per_carrier(data_type: DataTypeLike) -> int:
    """Logical lanes per carrier: 2 for the packed ``X2`` types, else 1.

    Source: ADR-0085 D182; the ``NumericFormatDescriptor`` of the type (lanes) and
    ``TilePackedLaneIndex``.
    """
    dt = parse_data_type(data_type, "data_type")
    if dt in INTEGER_LAYOUTS:
        return INTEGER_LAYOUTS[dt][2]
    return DESCRIPTORS[dt].lanes_per_carrier


def canonical_nan(data_type: DataTypeLike) -> Optional[int]:
    """The canonical NaN encoding of ``data_type``, or ``None`` when it has none.

    Source: ASL ``TileNumericCanonicalNaN`` (and ``<Format>CanonicalNaN``).
    """
    dt = parse_data_type(data_type, "data_type")
    return CANONICAL_NANS.get(dt)
