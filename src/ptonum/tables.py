"""Tables both engines read: B.FPATR destination facts, HiF8 binades, kernel codes.

Everything here is data, derived once from the format descriptors of
:mod:`ptonum.datatypes` (plus the few reference-profile constants the
descriptors do not carry, each cited below); the reference encoders, the
numpy engine and the compiled kernels all read these tables instead of
writing a fact out again.  This module imports only :mod:`ptonum.datatypes`,
:mod:`ptonum.flags` and :mod:`ptonum.rounding` (the bottom layer), so every
layer (the kernels included) may import it.

* :data:`DESTINATIONS` -- one frozen :class:`Destination` per B.FPATR
  destination type: element width, carrier dtype, integer range, or precision,
  emin/emax, the codes of the largest finite value, infinity, -0 and the
  canonical NaN;
* :data:`HIF8_MBITS`, :data:`HIF8_BASE`, :data:`HIF8_PARFLIP` -- the HiF8
  per-binade encoding tables;
* :class:`PreQuantMode` and :data:`MODE_TABLE` -- one frozen :class:`ModeInfo`
  per assigned B.FPATR PreQuantMode (accumulator types, destination, parameter
  kind, offset width, fixed rounding, shift, Sat), built from the ASL predicate
  sets; re-exported by :mod:`ptonum.fpatr.attributes` (``fpatr.MODE_TABLE``);
* kernel configuration codes (:data:`KERNEL_DST`, :data:`KERNEL_ACC`,
  ``KIND_*``): the small integers the compiled kernels take for types and
  pipeline kinds.

Source: ADR-0085 D179/D180/D181 (destinations, special results, carriers);
pto-spec ``asl/arch/data-types/formats/*.asl`` (``<Format>NumericFormatDescriptor``),
``MatrixFloatingLargestFinite``, ``MatrixFloatingInfinity``,
``MatrixFloatingSignedZero`` (``asl/arch/profile/matrix-postprocess.asl``),
``TileIntegerMinimum``/``TileIntegerMaximum``, ``TileNumericCanonicalNaN``,
``HiF8FiniteDecomposition`` (``formats/hif8.asl``); the PreQuantMode predicate
sets of ``asl/block/attributes/B.FPATR.asl``.
"""

from __future__ import annotations

import dataclasses
import enum
import os
import types
from dataclasses import dataclass
from fractions import Fraction
from types import MappingProxyType
from typing import Any, Dict, FrozenSet, Mapping, NamedTuple, Optional, Tuple

import numpy as np

from ._util import bool_text, count_text
from .datatypes import CANONICAL_NANS, DESCRIPTORS, INTEGER_LAYOUTS, FormatKind, TileDataType
from .flags import DZ, NV, NX, OF, UF
from .rounding import RoundingMode

__all__ = [
    "NV", "DZ", "OF", "UF", "NX",
    "Destination",
    "DESTINATIONS",
    "E8M0",
    "INTEGER_DESTINATIONS",
    "FLOATING_DESTINATIONS",
    "ACCUMULATOR_TYPES",
    "HIF8_MBITS",
    "HIF8_BASE",
    "HIF8_PARFLIP",
    "HIF8_TABLE_EMIN",
    "HIF8_DML_EMIN",
    "HIF8_LARGEST",
    "HIF8_INFINITY",
    "HIF8_ZERO",
    "PreQuantMode",
    "ModeInfo",
    "MODE_TABLE",
    "ASSIGNED_PRE_QUANT_CODES",
    "KERNEL_DST",
    "KERNEL_ACC",
    "KIND_PASS",
    "KIND_SHIFT",
    "KIND_GENERAL",
    "TileKernelConfig",
    "TileDataType",
    "kernel_facts_stamp",
    "RoundingMode",
]

T = TileDataType


@dataclasses.dataclass(frozen=True)
class Destination:
    """The facts of one B.FPATR destination type, derived from its descriptor.

    Attributes:
        data_type: the Tile DataType.
        width: bits of one destination element (S4X2: 4).
        carrier: numpy dtype that holds one element's bits (``uint8`` for
            S4X2/S8/E4M3/HiF8, ``uint16`` for FP16/BF16/S16, ``uint32`` else).
        integer: True for S4X2/S8/S16/S32/U32.
        signed: integer types only: two's complement.
        minimum, maximum: integer types only: the value range.
        precision: floating only: significand bits including the hidden bit
            (HiF8: the largest, 4, at exponent 0).
        emin, emax: floating only: exponent of the smallest normal and of the
            largest finite binade (HiF8: -15 and 15).
        largest: floating only: codes of (+largest finite, -largest finite)
            (E8M0, unsigned: the same code twice).
        largest_value: floating only: the value of the largest finite code
            (FP16 65504, E4M3 448, HiF8 32768); E4M3 and HiF8 overflow above it.
        sign: floating only: the sign bit of a code (0x8000 for FP16); 0 for
            integers and for E8M0, which has no sign.
        infinity: floating only: codes of (+inf, -inf), or ``None`` (E4M3).
        negative_zero: code of -0, or ``None`` when the format has no signed
            zero (HiF8, integers).
        canonical_nan: the canonical quiet NaN code, or ``None`` (integers).

    Source: ADR-0085 D179/D180; ``<Format>NumericFormatDescriptor``,
    ``MatrixFloatingLargestFinite``/``Infinity``/``SignedZero``, ``TileNumericCanonicalNaN``,
    ``TileIntegerMinimum``/``Maximum``.
    """

    data_type: TileDataType
    width: int
    carrier: Any
    integer: bool
    signed: bool = False
    minimum: int = 0
    maximum: int = 0
    precision: int = 0
    emin: int = 0
    emax: int = 0
    largest: Tuple[int, int] = (0, 0)
    largest_value: Fraction = Fraction(0)
    sign: int = 0
    infinity: Optional[Tuple[int, int]] = None
    negative_zero: Optional[int] = None
    canonical_nan: Optional[int] = None

    @property
    def negative_zero_result(self) -> Optional[int]:
        """Floating only: the code ``MatrixFloatingSignedZero`` gives for a negative zero result
        (:attr:`negative_zero`; HiF8, with one zero, gives 0x00); ``None`` for integers."""
        if self.integer:
            return None
        return self.negative_zero if self.negative_zero is not None else HIF8_ZERO

    @property
    def mask(self) -> int:
        """All ``width`` bits set."""
        return (1 << self.width) - 1

    @property
    def minimum_code(self) -> int:
        """Integer types: the encoding of :attr:`minimum` at the element width."""
        return self.minimum & self.mask

    @property
    def maximum_code(self) -> int:
        """Integer types: the encoding of :attr:`maximum` at the element width."""
        return self.maximum & self.mask

    def overflow_code(self, sat: bool, negative: bool) -> int:
        """The code an overflowing finite value of this sign gets.

        Floating: the signed largest finite value with Sat, else the signed
        infinity (E4M3, without infinity: its canonical NaN).  Integer: the
        signed end of the range with Sat (without Sat integers wrap, so there
        is no single overflow code: raises ``ValueError``).

        Source: ADR-0085 D178; ``MatrixFloatingLargestFinite``, ``MatrixFloatingInfinity``.
        """
        if self.integer:
            if not sat:
                raise ValueError(f"{self.data_type.name}: integers wrap without Sat")
            return self.minimum_code if negative else self.maximum_code
        if sat:
            return self.largest[int(negative)]
        if self.infinity is None:
            assert self.canonical_nan is not None
            return self.canonical_nan
        return self.infinity[int(negative)]

    def special_value_result(self, value_class: str, sat: bool) -> Tuple[int, int]:
        """Fixed result and flags of an FP32 NaN/Inf source (``MatrixPostQuantSpecialValue``).

        ``value_class`` is ``"QuietNaN"``, ``"SignalingNaN"``, ``"PositiveInfinity"``
        or ``"NegativeInfinity"``.  Integer destinations: NaN -> 0 with Sat, else
        the minimum, NV; Inf -> minimum with NV when Sat=0, else the signed
        endpoint with OF|NX.  Floating destinations: NaN -> +0 with Sat, else
        the canonical quiet NaN, NV only for a signaling NaN; Inf -> the signed
        largest finite with OF|NX under Sat, else the signed infinity (E4M3: the
        canonical NaN with OF|NX) and no flag.

        Source: ADR-0085 D180; ``MatrixPostQuantSpecialValue``.
        """
        nan = value_class in ("QuietNaN", "SignalingNaN")
        negative = value_class == "NegativeInfinity"
        if self.integer:
            if nan:
                return (0 if sat else self.minimum_code), NV
            if not sat:
                return self.minimum_code, NV
            return self.overflow_code(True, negative), OF | NX
        if nan:
            assert self.canonical_nan is not None
            return (0 if sat else self.canonical_nan), (NV if value_class == "SignalingNaN" else 0)
        if sat:
            return self.largest[int(negative)], OF | NX
        return self.overflow_code(False, negative), (OF | NX if self.infinity is None else 0)


def _carrier(width: int) -> Any:
    return np.dtype(np.uint8 if width <= 8 else np.uint16 if width <= 16 else np.uint32)


def _integer(t: TileDataType) -> Destination:
    _, lane_bits, _, signed = INTEGER_LAYOUTS[t]
    lo, hi = (-(1 << (lane_bits - 1)), (1 << (lane_bits - 1)) - 1) if signed else (0, (1 << lane_bits) - 1)
    return Destination(t, lane_bits, _carrier(lane_bits), True, signed, lo, hi)


def _binary(t: TileDataType) -> Destination:
    """An IEEE-style sign/exponent/fraction destination, from its descriptor alone."""
    d = DESCRIPTORS[t]
    e, f, bias = d.exponent_bits_max, d.fraction_bits_max, d.exponent_bias
    sign = (1 << d.sign_bit) if d.sign_bits else 0
    top = (1 << e) - 1  # the all-ones exponent field
    if d.has_infinity:  # the all-ones exponent holds infinities and NaNs
        largest = ((top - 1) << f) | ((1 << f) - 1)
        inf: Optional[Tuple[int, int]] = (top << f, sign | (top << f))
    elif d.has_quiet_nan:  # only the all-ones code is NaN (E4M3, E8M0): the code below it
        largest, inf = ((top << f) | ((1 << f) - 1)) - 1, None
    else:
        largest, inf = (top << f) | ((1 << f) - 1), None
    emax_field, largest_fraction = largest >> f, largest & ((1 << f) - 1)
    largest_value = Fraction((1 << f) | largest_fraction) * Fraction(2) ** (emax_field - bias - f)
    return Destination(
        t, d.lane_bits, _carrier(d.lane_bits), False, precision=f + 1,
        emin=(1 if d.has_subnormal else 0) - bias, emax=emax_field - bias,
        largest=(largest, sign | largest), largest_value=largest_value, sign=sign, infinity=inf,
        negative_zero=sign if d.has_signed_zero else None, canonical_nan=CANONICAL_NANS.get(t),
    )


# HiF8 has no bias or fixed fields (tapered dot-field layout): its extreme codes are
# reference-profile constants, checked against the decoder in tests/test_tables.py.
#: HiF8 codes of (+largest finite = 2^15, -largest finite).
HIF8_LARGEST = (0x6E, 0xEE)
#: HiF8 codes of (+inf, -inf).
HIF8_INFINITY = (0x6F, 0xEF)
#: HiF8 has one zero, 0x00; a -0 result is written as this code.
HIF8_ZERO = 0x00


def _hif8() -> Destination:
    d = DESCRIPTORS[T.HiF8]
    assert d.kind is FormatKind.HIF8 and not d.has_signed_zero
    return Destination(T.HiF8, d.lane_bits, _carrier(d.lane_bits), False, precision=d.fraction_bits_max + 1,
                       emin=-15, emax=15, largest=HIF8_LARGEST, largest_value=Fraction(2) ** 15,
                       sign=1 << d.sign_bit,
                       infinity=HIF8_INFINITY,
                       negative_zero=None, canonical_nan=CANONICAL_NANS[T.HiF8])


INTEGER_DESTINATIONS: Tuple[TileDataType, ...] = (T.S4X2, T.S8, T.S16, T.S32, T.U32)
FLOATING_DESTINATIONS: Tuple[TileDataType, ...] = (T.FP32, T.FP16, T.BF16, T.E4M3, T.HiF8)
#: Accumulator (and RowMax/GroupMax) types of B.FPATR (``BundleFPATRAccumulatorTypeLegal``).
ACCUMULATOR_TYPES: Tuple[TileDataType, ...] = (T.FP32, T.S32, T.U32)

_DEST: Dict[TileDataType, Destination] = {t: _integer(t) for t in INTEGER_DESTINATIONS}
_DEST.update({t: _binary(t) for t in (T.FP32, T.FP16, T.BF16, T.E4M3)})
_DEST[T.HiF8] = _hif8()
#: Every B.FPATR destination type -> its :class:`Destination` (read-only).
DESTINATIONS: Mapping[TileDataType, Destination] = types.MappingProxyType(_DEST)
#: The destination of TCVT to E8M0 (no sign, no zero, no infinity; NaN 0xFF), derived the same way.
E8M0: Destination = _binary(T.E8M0)


# ---------------------------------------------------------------------------
# HiF8 per-binade tables, indexed by (exponent + 23) for exponents -23..17
# (-23 stands for every value below 2^-22; 16 and 17 only occur for overflowing
# inputs, whose codes are replaced).  Source: ``HiF8FiniteDecomposition``.

#: exponent of index 0 of the per-binade tables (index = exponent - HIF8_TABLE_EMIN); every
#: value below 2^HIF8_DML_EMIN is taken in this row.
HIF8_TABLE_EMIN = -23
#: exponent of HiF8's smallest magnitude, the denormal 2^-22 (code 0x01).
HIF8_DML_EMIN = -22
_HIF8_E = np.arange(HIF8_TABLE_EMIN, 18)
#: mantissa bits of the binade (0 in the denormal range below 2^-15).
HIF8_MBITS = np.array([0 if e < -15 else (3 if abs(e) <= 3 else 2 if abs(e) <= 7 else 1)
                       for e in _HIF8_E], dtype=np.uint64)


def _hif8_body(e: int) -> int:
    """HiF8 code (bits 6:0) of 2^e (mantissa zero)."""
    if HIF8_DML_EMIN <= e <= -16:
        return 23 + e
    a = abs(e)
    neg = e < 0
    if a == 0:
        return 8
    if a == 1:
        return 16 + (8 if neg else 0)
    if a <= 3:
        return 32 + ((2 if neg else 0) + (a - 2)) * 8
    if a <= 7:
        return 64 + ((4 if neg else 0) + (a - 4)) * 4
    if a <= 15:
        return 96 + ((8 if neg else 0) + (a - 8)) * 2
    return 0x6F  # 2^16: never reached (overflow is judged first)


#: code (bits 6:0) of 2^e with a zero mantissa.
HIF8_BASE = np.array([0 if e < HIF8_DML_EMIN else _hif8_body(int(e)) for e in _HIF8_E], dtype=np.uint8)
#: parity flip so that (k ^ flip) & 1 is the parity of the lower candidate's code.
HIF8_PARFLIP = np.array([(((23 + e) & 1) ^ 1) if -22 <= e <= -16 else 0 for e in _HIF8_E],
                        dtype=np.uint64)
for _a in (HIF8_MBITS, HIF8_BASE, HIF8_PARFLIP):
    _a.flags.writeable = False


# ---------------------------------------------------------------------------
# PreQuantMode: the closed set of assigned codes (ADR-0085 D179); every other six-bit value is reserved.


class PreQuantMode(enum.IntEnum):
    """The assigned B.FPATR PreQuantMode codes with their ADR-0085 D179 names.

    Every other six-bit value is reserved and does not decode.

    Source: ADR-0085 D179; ``BundleFPATRPreQuantModeLegal``.
    """

    NoQuant = 0
    F322F16 = 1
    VREQ8 = 2
    REQ8 = 3
    VDEQF16 = 4
    DEQF16 = 5
    VSHIFTS322S16 = 12
    SHIFTS322S16 = 13
    F322BF16 = 16
    REQ4 = 17
    VREQ4 = 18
    DEQS16 = 19
    VDEQS16 = 20
    VQF322B8_PRE = 23
    QF322B8_PRE = 24
    QF322HIF8_PRE = 25
    QF322FP8_PRE = 26
    QF322F32_PRE = 27
    VQF322HIF8_PRE = 28
    QF322F16_PRE = 32
    VQF322F16_PRE = 33
    QF322BF16_PRE = 34
    QS322BF16_PRE = 35
    VQF322BF16_PRE = 36
    VQF322FP8_PRE = 37
    VQF322F32_PRE = 38
    VQS322BF16_PRE = 39

    @property
    def info(self) -> "ModeInfo":
        """This mode's row of :data:`MODE_TABLE`."""
        return MODE_TABLE[int(self)]


#: The assigned PreQuantMode codes (every other six-bit value is reserved).
ASSIGNED_PRE_QUANT_CODES: FrozenSet[int] = frozenset(int(m) for m in PreQuantMode)


# ---------------------------------------------------------------------------
# The PreQuantMode table, as data from the ASL predicate sets (B.FPATR.asl).

# BundleFPATRModeUsesVectorParameter
_VECTOR_PARAMETER = frozenset({2, 4, 12, 18, 20, 23, 28, 33, 36, 37, 38, 39})
# BundleFPATRModeUsesScalarParameter
_SCALAR_PARAMETER = frozenset({3, 5, 13, 17, 19, 24, 25, 26, 27, 32, 34, 35})
# BundleFPATRModeUsesS32Accumulator
_S32_ACCUMULATOR = frozenset({2, 3, 4, 5, 12, 13, 17, 18, 19, 20, 35, 39})
# BundleFPATRModeOffsetWidth
_OFFSET_WIDTH = {17: 5, 18: 5, 2: 9, 3: 9, 23: 9, 24: 9, 19: 17, 20: 17}
# BundleFPATRModeIsShift
_SHIFT = frozenset({12, 13})
# BundleFPATRModeFixedRounding, with the MatrixFPATREffectiveControl override
_FIXED_ROUNDING = frozenset({1, 16, 25, 26, 28, 32, 33, 34, 36, 37})
_FIXED_RHB = frozenset({25, 28})
# BundleFPATROutputType (code 0 keeps the accumulator type)
_OUTPUT_TYPE = {
    1: TileDataType.FP16, 4: TileDataType.FP16, 5: TileDataType.FP16,
    32: TileDataType.FP16, 33: TileDataType.FP16,
    2: TileDataType.S8, 3: TileDataType.S8, 23: TileDataType.S8, 24: TileDataType.S8,
    12: TileDataType.S16, 13: TileDataType.S16, 19: TileDataType.S16, 20: TileDataType.S16,
    16: TileDataType.BF16, 34: TileDataType.BF16, 35: TileDataType.BF16,
    36: TileDataType.BF16, 39: TileDataType.BF16,
    17: TileDataType.S4X2, 18: TileDataType.S4X2,
    25: TileDataType.HiF8, 28: TileDataType.HiF8,
    26: TileDataType.E4M3, 37: TileDataType.E4M3,
    27: TileDataType.FP32, 38: TileDataType.FP32,
}

_ACC_ALL = (TileDataType.FP32, TileDataType.S32, TileDataType.U32)


@dataclass(frozen=True)
class ModeInfo:
    """One row of the closed PreQuantMode table.

    Attributes:
        code: the six-bit PreQuantMode code.
        name: the ADR-0085 D179 name.
        accumulator_types: the accumulator classes the mode accepts
            (``BundleFPATRAccumulatorTypeLegal``).
        destination: the destination Tile DataType, or ``None`` for mode 0,
            whose destination is the accumulator type (``BundleFPATROutputType``).
        parameter: ``"none"``, ``"scalar"`` (one word from B.IOR) or
            ``"vector"`` (one word per destination column from a 1 x N U64 tile).
        offset_width: 0, or 5/9/17 -- the signed offset field and the S5/S9/S17
            intermediate (``BundleFPATRModeOffsetWidth``).
        fixed_rounding: the rounding the mode forces (``RNE``, or ``RHB`` for
            25/28), or ``None`` when B.DATR RMode is programmable
            (``BundleFPATRModeFixedRounding``, ``MatrixFPATREffectiveControl``).
        is_shift: the S32-to-S16 arithmetic-shift modes 12/13.
        sat_programmable: B.DATR Sat selects clamp/wrap
            (``BundleFPATRModeFinalSatProgrammable``).

    Source: ADR-0085 D179; ``asl/block/attributes/B.FPATR.asl``.
    """

    code: int
    name: str
    accumulator_types: Tuple[TileDataType, ...]
    destination: Optional[TileDataType]
    parameter: str
    offset_width: int
    fixed_rounding: Optional[RoundingMode]
    is_shift: bool
    sat_programmable: bool

    @property
    def mode(self) -> PreQuantMode:
        return PreQuantMode(self.code)

    @property
    def has_parameter(self) -> bool:
        return self.parameter != "none"

    @property
    def uses_s32_accumulator(self) -> bool:
        return self.code in _S32_ACCUMULATOR

    @property
    def rmode_programmable(self) -> bool:
        """B.DATR RMode may be other than NONE (``BundleFPATRDATRFieldsLegal``)."""
        return self.code != 0 and not self.is_shift and self.fixed_rounding is None


def _build_mode_table() -> Mapping[int, ModeInfo]:
    table: Dict[int, ModeInfo] = {}
    for mode in PreQuantMode:
        code = int(mode)
        if code == 0:
            acc: Tuple[TileDataType, ...] = _ACC_ALL
        elif code in _S32_ACCUMULATOR:
            acc = (TileDataType.S32,)
        else:
            acc = (TileDataType.FP32,)
        if code in _VECTOR_PARAMETER:
            parameter = "vector"
        elif code in _SCALAR_PARAMETER:
            parameter = "scalar"
        else:
            parameter = "none"
        if code in _FIXED_RHB:
            fixed: Optional[RoundingMode] = RoundingMode.RHB
        elif code in _FIXED_ROUNDING:
            fixed = RoundingMode.RNE
        else:
            fixed = None
        table[code] = ModeInfo(
            code=code,
            name=mode.name,
            accumulator_types=acc,
            destination=_OUTPUT_TYPE.get(code),
            parameter=parameter,
            offset_width=_OFFSET_WIDTH.get(code, 0),
            fixed_rounding=fixed,
            is_shift=code in _SHIFT,
            sat_programmable=code != 0 and code not in _SHIFT,
        )
    return MappingProxyType(table)


#: code -> :class:`ModeInfo` for every assigned PreQuantMode (read-only).
MODE_TABLE: Mapping[int, ModeInfo] = _build_mode_table()


# ---------------------------------------------------------------------------
# Kernel configuration codes (small ints the compiled kernels take as arguments)

#: destination type -> kernel destination code.
KERNEL_DST: Mapping[TileDataType, int] = types.MappingProxyType({
    T.S4X2: 0, T.S8: 1, T.S16: 2, T.S32: 3, T.U32: 4,
    T.FP32: 5, T.FP16: 6, T.BF16: 7, T.E4M3: 8, T.HiF8: 9,
})
#: accumulator (source / reduction) type -> kernel code.
KERNEL_ACC: Mapping[TileDataType, int] = types.MappingProxyType({T.FP32: 0, T.S32: 1, T.U32: 2})
#: element pipeline kinds: raw pass-through (mode 0, no activation), shift (modes 12/13), general.
KIND_PASS, KIND_SHIFT, KIND_GENERAL = 0, 1, 2


class TileKernelConfig(NamedTuple):
    """Everything the fused post-process kernel needs to know about a configuration, as plain data.

    Built by the model (:func:`ptonum.fpatr.element.element_config` ->
    ``ElementConfig.kernel``) from the mode table and :data:`DESTINATIONS`;
    the kernel reads nothing else.

    Attributes:
        kind: :data:`KIND_PASS`, :data:`KIND_SHIFT` or :data:`KIND_GENERAL`.
        dst: the destination Tile DataType; ``dst_code`` its :data:`KERNEL_DST` code.
        src_code: :data:`KERNEL_ACC` code of the element source (mode 0: the
            accumulator type; S32 modes: S32; else FP32).
        relu: ReluMode code 0-3.
        rmode: the resolved rounding mode code 1-7 (never NONE).
        sat: the Sat the conversion uses.
        offset_width: 0, 5, 9 or 17 (S5/S9/S17 offset modes).
        has_parameter: the mode reads a quantization word.
        special: the 8 ints (code, flags) of the FP32 QuietNaN, SignalingNaN,
            +Inf and -Inf results (``MatrixPostQuantSpecialValue``), zeros when unused.
        negative_zero: the code of a -0 result, -1 for integer destinations.

    Source: ADR-0085 D176-D180; ``TileProfileMatrixPostProcessWithFlags``.
    """

    kind: int
    dst: TileDataType
    dst_code: int
    src_code: int
    relu: int
    rmode: int
    sat: bool
    offset_width: int
    has_parameter: bool
    special: Tuple[int, ...]
    negative_zero: int


# ---------------------------------------------------------------------------
# engine selection: from how many elements the fast engine uses the compiled kernels

#: calls with fewer elements use numpy: the first kernel call of a process with a cold
#: numba cache compiles for tens of seconds, which a small call should never pay
DEFAULT_KERNEL_MIN_ELEMENTS = 1 << 16


def kernel_min_elements() -> int:
    """The element count from which the fast engine uses the kernels (``PTONUM_KERNEL_MIN_ELEMENTS``).

    Source: ADR-0085 D174 (engines agree bit for bit); no ASL counterpart (engine selection).
    """
    text = os.environ.get("PTONUM_KERNEL_MIN_ELEMENTS", "")
    try:
        return count_text(text) if text.strip() else DEFAULT_KERNEL_MIN_ELEMENTS
    except ValueError:  # the command line says so (cli: environment_notes)
        return DEFAULT_KERNEL_MIN_ELEMENTS


def kernel_size(size: int) -> bool:
    """True when a fast-engine call of ``size`` elements may use the compiled kernels: at least
    :func:`kernel_min_elements` elements and ``PTONUM_DISABLE_NUMBA`` unset.  Asked before
    :mod:`ptonum.kernels` is imported, so a smaller call never imports numba (start-up time); the
    final answer is ``ptonum.kernels.numba_enabled(size)``.

    Source: ADR-0085 D174 (engines agree bit for bit); no ASL counterpart (engine selection).
    """
    return size > 0 and size >= kernel_min_elements() and not numba_disabled()


def numba_disabled() -> bool:
    """True when ``PTONUM_DISABLE_NUMBA`` asks for the numpy path: ``1``/``true``/``yes``/``on``
    (any case, blanks around ignored).  Unset, empty, ``0``/``false``/``no``/``off`` and anything
    unreadable (``maybe``) keep the default, the compiled kernels (the command line notes an
    unreadable value: cli ``environment_notes``).  The one place the variable is read
    (:func:`kernel_size`, ``ptonum.kernels.numba_enabled``).

    Source: ADR-0085 D174 (engines agree bit for bit); no ASL counterpart (engine selection).
    """
    try:
        return bool_text(os.environ.get("PTONUM_DISABLE_NUMBA", ""))
    except ValueError:  # the command line says so (cli: environment_notes)
        return False


def kernel_facts_stamp() -> str:
    """A digest of every fact above that a compiled kernel may freeze as a constant.

    numba compiles a module-level value a kernel reads (a code, a flag bit, a HiF8 table)
    into the machine code, and its cache judges freshness by the kernel module's source
    only; :mod:`ptonum.kernels` adds this digest to the cache stamp, so a change to a table
    here (or to a descriptor it is derived from) recompiles the kernels instead of loading
    code with the old constants.

    Source: no spec counterpart (compilation helper).
    """
    global _STAMP
    if _STAMP is None:
        import hashlib  # here, not at import: only the compiled kernels need it (CLI start-up)

        h = hashlib.sha256()
        for t, d in sorted({**DESTINATIONS, T.E8M0: E8M0}.items()):
            h.update(repr((t.name, dataclasses.astuple(d)[1:], d.negative_zero_result)).encode())
        for table in (HIF8_MBITS, HIF8_BASE, HIF8_PARFLIP):
            h.update(table.tobytes())
        h.update(repr((sorted((t.name, c) for t, c in KERNEL_DST.items()),
                       sorted((t.name, c) for t, c in KERNEL_ACC.items()),
                       KIND_PASS, KIND_SHIFT, KIND_GENERAL, NV, DZ, OF, UF, NX,
                       sorted((m.name, int(m)) for m in RoundingMode))).encode())
        _STAMP = h.hexdigest()
    return _STAMP


_STAMP: Optional[str] = None
