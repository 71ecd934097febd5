"""TCVT to E8M0: round the base-two exponent of a positive FP16/BF16/FP32 value.

Source: ADR-0085 decision 183 and pto-spec ``asl/arch/profile/e8m0-conversion.asl``
(``HardwareTCVTE8M0SourceTypeSupported``, ``ReferenceFloatToE8M0``,
``ReferenceE8M0RoundExponent``, ``ReferenceE8M0HighestSetBit``), with the source
value classes and exact decompositions of ``asl/arch/data-types/formats/{fp16,bf16,fp32}.asl``
(``ClassifyFP16``/``FP16FiniteDecomposition`` and the BF16/FP32 twins) and the E8M0
format of ``asl/arch/data-types/formats/e8m0.asl`` (code ``c`` is ``2^(c-127)``,
``0xFF`` is NaN).

The rule in our words.  A source that is a zero, negative (including -Inf), or a
NaN gives ``0xFF`` and NV.  +Inf follows the overflow rule.  A positive finite
value is ``sig * 2^exp`` exactly; its floor exponent is ``F = exp + h`` where ``h``
is the index of the highest set bit of ``sig``.  ``F < -127`` underflows
(Sat ? ``0x00`` : ``0xFF``, UF|NX); ``F == 127`` with a value that is not exactly
``2^127`` overflows (Sat ? ``0xFE`` : ``0xFF``, OF|NX) whatever the rounding mode.
An exact power of two gives ``F + 127`` with no flag.  Otherwise the result is one
of the two exponents ``F`` and ``F + 1`` chosen in the exponent domain:
RTM -> F, RTP -> F+1, RTZ -> the one nearer exponent 0, RTO -> the odd one, and the
nearest modes RNE/RNA/RHB compare the value with the geometric midpoint
``2^(F+1/2)`` using integers only (``sig^2`` against ``2^(2h+1)``); an exact tie is
impossible (an integer square is never an odd power of two) but the tie rules
are still modelled as the ASL states them.  The code is the exponent + 127 with NX.

Two engines give identical bits and flags:

* ``reference`` -- the ASL step by step: each ASL function is one function, written
  once over values that are either one Python int (one encoding) or an int64 numpy
  array (one element per encoding; the ASL's branches become masks, the outcomes'
  codes and flags are selected through them at the end).  Calls of fewer than
  ``_REFERENCE_ARRAY_MIN`` (40) elements run the steps one int at a time, larger ones
  once on the whole array (no code shared with the fast engine).
  :func:`to_e8m0_trace` runs the steps on one int and narrates them.
* ``fast`` -- numpy, or the compiled numba kernel (``ptonum.kernels.tcvt``) for calls of
  ``PTONUM_KERNEL_MIN_ELEMENTS`` elements or more (same bits and flags).  FP16/BF16 sources use a 65536-entry table per
  (source, RMode, Sat) built by a vectorized evaluation of the rule; FP32
  sources use a 65536-entry table indexed by the high 16 bits, and the few
  elements whose high half does not decide the result (exactness or the sqrt(2)
  midpoint falls inside that bucket) are settled by an integer threshold on the
  low 16 bits.  Small FP32 inputs use the vectorized rule directly.
  With numba available (and ``PTONUM_DISABLE_NUMBA`` unset), calls of at least
  ``PTONUM_KERNEL_MIN_ELEMENTS`` (default 65536) elements run ``ptonum.kernels.tcvt`` instead: tables on the sign+exponent field filled from
  the same vectorized rule, one parallel pass; the numpy paths above are the fallback.
"""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

import numpy as np

from . import engines
from ._util import as_array, as_bits, check_bool, check_engine, native, remembered, shaped, unmasked
from .errors import UnsupportedConversionError, UsageError
from .flags import NV, NX, OF, UF, flag_names
from .formats import TileDataType, parse_data_type
from .rounding import RoundingMode, parse_rounding_mode
from . import tables

__all__ = [
    "SUPPORTED_SOURCES",
    "TraceStep",
    "to_e8m0",
    "to_e8m0_trace",
    "to_e8m0_values",
    "e8m0_scale",
    "flag_summary",
]


#: TCVT source types accepted for an E8M0 destination (``HardwareTCVTE8M0SourceTypeSupported``).
SUPPORTED_SOURCES: Tuple[TileDataType, ...] = (TileDataType.FP16, TileDataType.BF16, TileDataType.FP32)


@dataclass(frozen=True)
class _Layout:
    """Bit layout of a binary IEEE-style source (``asl/arch/data-types/formats``)."""

    name: str
    width: int
    exponent_bits: int
    fraction_bits: int
    bias: int

    @property
    def exponent_max(self) -> int:
        return (1 << self.exponent_bits) - 1

    @property
    def subnormal_exponent(self) -> int:
        """Exponent of the unit of a subnormal significand (1 - bias - fraction_bits)."""
        return 1 - self.bias - self.fraction_bits


_LAYOUTS: Dict[TileDataType, _Layout] = {
    TileDataType.FP16: _Layout("FP16", 16, 5, 10, 15),
    TileDataType.BF16: _Layout("BF16", 16, 8, 7, 127),
    TileDataType.FP32: _Layout("FP32", 32, 8, 23, 127),
}

_NEAREST = (RoundingMode.RNE, RoundingMode.RNA, RoundingMode.RHB)

_E8M0 = tables.E8M0  # the E8M0 destination facts (largest 0xFE, NaN 0xFF)
_E8M0_NAN: int = _E8M0.canonical_nan or 0
_E8M0_SMALLEST = 0x00  # 2^-127: E8M0 has no zero; Sat clamps an underflow here

# Rounding-mode members as module constants (see ptonum.rounding).
from .rounding import RHB as _RHB, RNA as _RNA, RNE as _RNE, RTM as _RTM, RTO as _RTO, RTP as _RTP, RTZ as _RTZ  # noqa: E402


# --------------------------------------------------------------------------- arguments


def _parse_source_type(src_type: Any) -> TileDataType:
    dt = parse_data_type(src_type, "src_type")
    if dt not in _LAYOUTS:
        raise UnsupportedConversionError(
            f"src_type = {dt.name}: TCVT to E8M0 accepts only FP16, BF16 and FP32 sources; "
            f"{dt.name} -> E8M0 is rejected before any destination effect "
            "(ADR-0085 D183, HardwareTCVTE8M0SourceTypeSupported)"
        )
    return dt


# A reference call of one element costs a few microseconds, as much as parsing its arguments
# did; the parsed ``src_type`` and ``rmode`` are therefore remembered per spelling (``typed``:
# ``1`` and ``True`` are separate entries; a rejected value is never stored, so it raises every
# time; an unhashable value, e.g. a 0-d array, is parsed every time).
_check_source_type = remembered(_parse_source_type, 64)
#: the B.DATR RMode as given (``NONE`` kept)
_parse_mode = remembered(parse_rounding_mode, 64)


def _check_mode(rmode: Any) -> RoundingMode:
    return _parse_mode(rmode).resolved(RoundingMode.RNE)


# --------------------------------------------------------------------------- reference


@dataclass(frozen=True)
class TraceStep:
    """One step of a traced TCVT-to-E8M0 evaluation.

    ``step`` names the step, ``asl`` the ASL function that owns it, ``text`` is a
    one-line human explanation and ``flags`` the 5-bit flags this step raises.
    """

    step: str
    asl: str
    text: str
    flags: int = 0

    @property
    def flag_text(self) -> str:
        return flag_names(self.flags)


#: ``NumericValueClass`` labels by class code: a code is ``2 * kind + sign`` for the finite
#: kinds (zero, subnormal, normal) and the infinities, then the two NaNs.
_CLASS_LABELS = ("PositiveZero", "NegativeZero", "PositiveSubnormal", "NegativeSubnormal",
                 "PositiveNormal", "NegativeNormal", "PositiveInfinity", "NegativeInfinity",
                 "QuietNaN", "SignalingNaN")
_CLASS_CODE = {label: code for code, label in enumerate(_CLASS_LABELS)}
_INF_KIND = 3  # 2 * 3 + sign: the infinities
_QUIET_NAN, _SIGNALING_NAN = _CLASS_CODE["QuietNaN"], _CLASS_CODE["SignalingNaN"]
_POSITIVE_INFINITY = _CLASS_CODE["PositiveInfinity"]


class _Fields(NamedTuple):
    """A source format's field positions as plain ints, computed once per format
    (``asl/arch/data-types/formats``)."""

    name: str
    width: int
    sign_shift: int  # the sign bit's position
    fraction_bits: int
    exponent_ones: int  # the all-ones exponent field (infinities and NaNs)
    fraction_mask: int
    quiet_bit: int  # a NaN's quiet bit: the fraction's top bit
    hidden_bit: int  # the implicit one of a normal significand
    subnormal_exponent: int  # exponent of a subnormal significand's unit: 1 - bias - fraction_bits
    normal_offset: int  # a normal's exponent is its field minus bias + fraction_bits
    one: int  # the encoding of 1.0 (exponent field = bias, fraction 0)


_FIELDS: Dict[TileDataType, _Fields] = {
    t: _Fields(lay.name, lay.width, lay.width - 1, lay.fraction_bits, lay.exponent_max,
               (1 << lay.fraction_bits) - 1, 1 << (lay.fraction_bits - 1), 1 << lay.fraction_bits,
               lay.subnormal_exponent, lay.bias + lay.fraction_bits, lay.bias << lay.fraction_bits)
    for t, lay in _LAYOUTS.items()
}

# The reference steps below are written once and run on two kinds of value:
#
# * a plain Python ``int`` -- one source encoding; calls of fewer than
#   ``_REFERENCE_ARRAY_MIN`` elements loop over their elements this way, and
#   :func:`to_e8m0_trace` narrates such a run;
# * an int64 numpy array -- one element per source encoding, every element at once.
#
# A step uses only what both kinds share -- the operators ``+ - * % >> << & |`` and the
# comparisons, whose results are a Python ``bool`` or a bool array -- and the small helpers
# below for the rest: the ASL's ``if`` as a value (:func:`_where`), "some/every element"
# (:func:`_any`, :func:`_all`), negation (:func:`_not`; ``~`` on a Python bool is an integer) and
# per-class tables (:class:`_ClassTable`).  On one int each helper is the plain Python
# expression, so an element runs through the ASL's steps as scalar code does; on arrays the
# ASL's branches become masks (every intermediate here is below 2^50, exact in int64).
#
# Cost model (issue 13): on small arrays a numpy operation costs about a microsecond whatever
# its length, so an array call costs the ~85 operations of the steps however few its
# elements; one element through the same steps on Python ints costs about as much as ~2 of
# them.  Hence the per-element loop below ``_REFERENCE_ARRAY_MIN`` elements.  For arrays
# the steps avoid operations that do not change a result: no subsetting of the elements that
# reach a step (an element that left ``ReferenceFloatToE8M0`` early carries a harmless stand-in
# through the later steps and its outcome, decided earlier, is written last), and the ASL
# branches that ordinary data never reaches (infinities and NaNs in ``Classify*``, the exact
# midpoint tie) are evaluated only when some element reaches them.

#: An int64 numpy array (one element per source encoding) or one Python int (a bool for a mask).
_Ints = Any


def _where(mask: _Ints, a: _Ints, b: _Ints) -> _Ints:
    """``a`` where ``mask`` holds, else ``b``: the ASL's ``if`` as a value (a conditional
    expression on a Python bool, ``np.where`` on a bool array)."""
    if type(mask) is bool:
        return a if mask else b
    return np.where(mask, a, b)


def _any(mask: _Ints) -> bool:
    """Whether ``mask`` holds for some element (the Python bool itself for one element)."""
    return mask if type(mask) is bool else bool(mask.any())


def _all(mask: _Ints) -> bool:
    """Whether ``mask`` holds for every element (the Python bool itself for one element)."""
    return mask if type(mask) is bool else bool(mask.all())


def _not(mask: _Ints) -> _Ints:
    """The negation of ``mask`` (``not`` on a Python bool, where ``~`` would give an int)."""
    return (not mask) if type(mask) is bool else ~mask


def _within(x: _Ints, low: int, high: int) -> bool:
    """Whether every element of ``x`` lies in ``[low, high]`` (for the ASL's range asserts)."""
    if type(x) is int:
        return low <= x <= high
    return x.size == 0 or (low <= x.min() and x.max() <= high)


class _ClassTable:
    """A constant per-class-code bool table: indexed by one class code (an int) it gives a
    Python bool, by an int64 array of codes a bool array."""

    def __init__(self, values: List[bool]) -> None:
        self._items = tuple(values)
        self._array = np.array(values, dtype=bool)

    def __getitem__(self, code: _Ints) -> _Ints:
        return self._items[code] if type(code) is int else self._array[code]


#: E8M0 code of an overflow (and of +Inf) by Sat: the NaN 0xFF, or with Sat the largest finite 0xFE
_OVERFLOW_CODE = (_E8M0.overflow_code(False, False), _E8M0.overflow_code(True, False))

#: by class code: the classes ``ReferenceFloatToE8M0`` sends to 0xFF with NV (NaNs, zeros,
#: -Inf, negative finite values)
_NO_E8M0_VALUE = _ClassTable([label in ("QuietNaN", "SignalingNaN", "PositiveZero", "NegativeZero",
                                        "NegativeInfinity", "NegativeNormal", "NegativeSubnormal")
                              for label in _CLASS_LABELS])


def _split_fields(value: _Ints, fmt: _Fields) -> Tuple[_Ints, _Ints, _Ints]:
    """The sign bit, the exponent field and the fraction field of each encoding (the
    ``value[15]``, ``value[14:10]``, ``value[9:0]`` slices of ``ClassifyFP16`` and its
    BF16/FP32 twins).  ``value`` holds encodings in ``[0, 2^width)``, so the sign bit is
    ``value`` shifted down by ``width - 1``."""
    return (value >> fmt.sign_shift, (value >> fmt.fraction_bits) & fmt.exponent_ones,
            value & fmt.fraction_mask)


def _classify(value: _Ints, fmt: _Fields) -> _Ints:
    """``TileNumericValueClass`` (``ClassifyFP16`` / ``ClassifyBF16`` / ``ClassifyFP32``) of each
    encoding, as class codes indexing ``_CLASS_LABELS``: an all-ones exponent field is an
    infinity (fraction 0, signed) or a NaN (quiet when the fraction's top bit is set); otherwise
    ``NumericValueClassFromFiniteSign``: zero (exponent and fraction 0), subnormal (exponent 0)
    or normal, signed."""
    sign, efield, frac = _split_fields(value, fmt)
    finite_kind = _where(efield == 0, frac != 0, 2)  # 0 zero, 1 subnormal, 2 normal
    cls = 2 * finite_kind + sign
    special = efield == fmt.exponent_ones
    if _any(special):  # the all-ones exponent field: infinities and NaNs
        nan = _where((frac & fmt.quiet_bit) != 0, _QUIET_NAN, _SIGNALING_NAN)
        cls = _where(special, _where(frac == 0, 2 * _INF_KIND + sign, nan), cls)
    return cls


def _finite_decomposition(value: _Ints, fmt: _Fields) -> Tuple[_Ints, _Ints, _Ints, _Ints]:
    """``FP16FiniteDecomposition`` / ``BF16...`` / ``FP32FiniteDecomposition`` of each encoding:
    ``(available, negative, significand, exponent)`` with magnitude ``significand *
    2^exponent``.  An all-ones exponent field is not available (significand 0, exponent 0); a
    zero is ``(0, 0)``; a subnormal is its fraction at the subnormal exponent
    (``1 - bias - fraction_bits``); a normal is the fraction with its hidden one at
    ``field - bias - fraction_bits``."""
    sign, efield, frac = _split_fields(value, fmt)
    available = efield != fmt.exponent_ones
    negative = sign == 1
    subnormal = efield == 0
    significand = _where(subnormal, frac, frac | fmt.hidden_bit)
    exponent = _where(subnormal, fmt.subnormal_exponent, efield - fmt.normal_offset)
    if _any(subnormal):  # a zero is (0, 0)
        exponent = _where(subnormal & (frac == 0), 0, exponent)
    if not _all(available):  # an all-ones exponent field: (FALSE, FALSE, 0, 0)
        negative = negative & available
        significand = _where(available, significand, 0)
        exponent = _where(available, exponent, 0)
    return available, negative, significand, exponent


def _highest_set_bit(significand: _Ints) -> _Ints:
    """``ReferenceE8M0HighestSetBit``: the index of each significand's most significant one
    (every significand in ``(0, 2^53)``; FP16/BF16/FP32 significands have at most 24 bits).
    The ASL scans the bit positions; one int gives the index by ``int.bit_length``, an array
    by converting each significand to binary64, which holds it exactly: the biased exponent
    field of that encoding (bits 62..52, bias 1023) is the position of its top one."""
    if type(significand) is int:
        assert significand > 0
        return significand.bit_length() - 1
    assert significand.size == 0 or significand.min() > 0
    return (significand.astype(np.float64).view(np.int64) >> 52) - 1023


def _round_exponent(significand: _Ints, exponent: _Ints, mode: RoundingMode,
                    trace: Optional[List[TraceStep]] = None) -> Tuple[_Ints, _Ints]:
    """``ReferenceE8M0RoundExponent``: ``(rounded exponent, exact)`` of each ``significand *
    2^exponent``.  An exact power of two keeps its floor exponent ``F``; otherwise RTM takes
    ``F``, RTP ``F+1``, RTZ the one nearer exponent 0, RTO the odd one, and RNE/RNA/RHB
    compare ``significand^2`` with ``2^(2h+1)`` (the value against the midpoint
    ``2^(F+1/2)``), with the ASL's tie rules (even exponent / away from exponent 0 / greater)
    for equality.  ``trace`` (one Python int) receives the narrated step."""
    highest = _highest_set_bit(significand)
    floor_e = exponent + highest
    assert _within(floor_e, -149, 127)
    exact = significand == (1 << highest)
    ceil_e = floor_e + 1
    square = boundary = None
    tie_why = ""
    if mode is _RTM:
        rounded, why = floor_e, ("toward minus infinity takes F",) * 2
    elif mode is _RTP:
        rounded, why = ceil_e, ("toward plus infinity takes F+1",) * 2
    elif mode is _RTZ:
        below_zero = floor_e < 0
        rounded = _where(below_zero, ceil_e, floor_e)
        why = ("toward exponent 0: F >= 0 so F", "toward exponent 0: F < 0 so F+1")
        pick = below_zero
    elif mode is _RTO:
        odd = floor_e % 2 != 0
        rounded = _where(odd, floor_e, ceil_e)
        why = ("to odd: F is even so F+1", "to odd: F is odd")
        pick = odd
    else:
        # nearest modes: the value against the midpoint 2^(F+1/2), on integers
        assert _within(highest, 0, 30)  # square and boundary stay below 2^62
        square = significand * significand
        boundary = 1 << (2 * highest + 1)
        rounded = _where(square < boundary, floor_e, ceil_e)  # below: F; above: F+1
        tied = square == boundary
        # An exact tie is unreachable for an integer significand (an integer square is never an
        # odd power of two); the ASL's tie rules are modelled as stated for any element that
        # reaches them.
        if mode is _RNE:
            tie_why = "tie, even exponent"
            if _any(tied):
                rounded = _where(tied, _where(floor_e % 2 == 0, floor_e, ceil_e), rounded)
        elif mode is _RNA:
            tie_why = "tie, away from exponent 0"
            if _any(tied):
                rounded = _where(tied, _where(floor_e < 0, floor_e, ceil_e), rounded)
        else:
            assert mode is _RHB
            tie_why = "tie, greater"  # the tie takes F+1, as above
    rounded = _where(exact, floor_e, rounded)
    if trace is not None:
        if exact:
            trace.append(TraceStep("rounding", "ReferenceE8M0RoundExponent",
                                   f"exact power of two: result exponent {floor_e}"))
        else:
            if square is not None and boundary is not None:
                text = "below, so F" if square < boundary else "above, so F+1" if square > boundary else tie_why
                text = f"sig^2 = {square} vs 2^{2 * highest + 1} = {boundary} (midpoint 2^(F+1/2)): {text}"
            elif mode is _RTZ or mode is _RTO:
                text = why[int(pick)]
            else:
                text = why[0]
            cand = f"candidates F={floor_e} (2^{floor_e}) and F+1={floor_e + 1} (2^{floor_e + 1})"
            trace.append(TraceStep("rounding", "ReferenceE8M0RoundExponent",
                                   f"{mode.name}: {cand}; {text} -> exponent {rounded}", NX))
    return rounded, exact


def _reference_float_to_e8m0(value: _Ints, fmt: _Fields, mode: RoundingMode, sat: bool,
                             trace: Optional[List[TraceStep]] = None) -> Tuple[_Ints, _Ints]:
    """``ReferenceFloatToE8M0`` of raw source encodings (one Python int, or a 1-D int64
    array): ``(codes, flags)`` of the same kind.  The ASL's branches, in the ASL's order: the
    value class (NaN, zero and negative sources -> 0xFF with NV; +Inf -> the overflow rule),
    then for the positive finite ones the exact decomposition, the floor exponent ``F`` and the
    exact-power test, the range checks (``F < -127`` underflow; ``F == 127`` not exactly
    ``2^127`` overflow) and ``ReferenceE8M0RoundExponent`` on the rest.  One element returns
    at the value class as the ASL does; in an array an element that leaves at a branch carries
    the encoding of 1.0 (at the value class) or the significand 1 at exponent 0 (at the range
    checks) through the later steps, so their ASL preconditions hold for every element, and
    each outcome's code and flags are then selected by its mask, the earliest branch last.
    ``trace`` (one Python int) receives the narrated steps."""
    t = trace
    cls = _classify(value, fmt)
    no_value = _NO_E8M0_VALUE[cls]
    positive_infinity = cls == _POSITIVE_INFINITY
    positive_finite = _not(no_value | positive_infinity)
    overflow_code = _OVERFLOW_CODE[sat]
    underflow_code = _E8M0_SMALLEST if sat else _E8M0_NAN
    if t is not None:
        label = _CLASS_LABELS[cls]
        t.append(TraceStep("value class", f"Classify{fmt.name}",
                           f"{fmt.name} 0x{value:0{fmt.width // 4}x}: sign={value >> fmt.sign_shift} "
                           f"exponent field={(value >> fmt.fraction_bits) & fmt.exponent_ones} "
                           f"fraction=0x{value & fmt.fraction_mask:x} -> {label}"))
        if no_value:
            t.append(TraceStep("invalid", "ReferenceFloatToE8M0",
                               f"{label}: zero, negative and NaN sources give the E8M0 NaN 0xff", NV))
        elif positive_infinity:
            t.append(TraceStep("overflow", "ReferenceFloatToE8M0",
                               f"+Inf follows the overflow rule: Sat={int(sat)} -> 0x{overflow_code:02x}",
                               OF | NX))
    all_positive_finite = _all(positive_finite)
    if not all_positive_finite:
        if not _any(positive_finite):  # no element reaches the decomposition
            return (_where(no_value, _E8M0_NAN, overflow_code), _where(no_value, NV, OF | NX))
        value = _where(positive_finite, value, fmt.one)
    available, negative, sig, exp = _finite_decomposition(value, fmt)
    assert _all(available) and not _any(negative)  # and every significand > 0 (checked next)
    highest = _highest_set_bit(sig)
    floor_e = exp + highest
    exact_power = sig == (1 << highest)
    under = floor_e < -127
    over = (floor_e == 127) & _not(exact_power)
    in_range = _not(under | over)
    if t is not None:
        t.append(TraceStep("decomposition", f"{fmt.name}FiniteDecomposition",
                           f"value = {sig} * 2^{exp} (significand 0x{sig:x})"))
        t.append(TraceStep("floor exponent", "ReferenceE8M0HighestSetBit",
                           f"highest set bit h={highest}; F = {exp} + {highest} = {floor_e}, "
                           f"so 2^{floor_e} <= value < 2^{floor_e + 1}"))
        t.append(TraceStep("exact power", "ReferenceFloatToE8M0",
                           f"significand {'==' if exact_power else '!='} 2^{highest}: "
                           f"{'an exact power of two' if exact_power else 'not a power of two'}"))
        if under:
            t.append(TraceStep("range", "ReferenceFloatToE8M0",
                               f"F = {floor_e} < -127: underflow, Sat={int(sat)} -> 0x{underflow_code:02x}",
                               UF | NX))
        elif over:
            t.append(TraceStep("range", "ReferenceFloatToE8M0",
                               f"F = 127 and not exactly 2^127: overflow in every mode, Sat={int(sat)} "
                               f"-> 0x{overflow_code:02x}", OF | NX))
        else:
            t.append(TraceStep("range", "ReferenceFloatToE8M0", f"-127 <= F = {floor_e} <= 127: in range"))
    all_in_range = _all(in_range)
    if not all_in_range and not _any(in_range):  # no element reaches the rounding
        codes = _where(under, underflow_code, overflow_code)
        flags = _where(under, UF | NX, OF | NX)
    else:
        if not all_in_range:
            sig, exp = _where(in_range, sig, 1), _where(in_range, exp, 0)
        rounded, exact = _round_exponent(sig, exp, mode, t)
        assert _within(rounded, -127, 127)
        codes = rounded + 127
        flags = _where(exact, 0, NX)
        if t is not None:
            t.append(TraceStep("result", "ReferenceFloatToE8M0",
                               f"code = {rounded} + 127 = {codes} (0x{codes:02x}) = 2^{rounded}", flags))
        if not all_in_range:
            codes = _where(under, underflow_code, _where(over, overflow_code, codes))
            flags = _where(under, UF | NX, _where(over, OF | NX, flags))
    if not all_positive_finite:
        if _any(positive_infinity):
            codes = _where(positive_infinity, overflow_code, codes)
            flags = _where(positive_infinity, OF | NX, flags)
        codes = _where(no_value, _E8M0_NAN, codes)
        flags = _where(no_value, NV, flags)
    return codes, flags


#: calls with fewer elements than this run the reference steps on one Python int at a time
#: (measured: one element through the steps on ints costs about 2 us, an array call about
#: 100 us whatever its length; see docs/performance.md, issue 13 after stop 10)
_REFERENCE_ARRAY_MIN = 40


def _reference(bits: np.ndarray, src: TileDataType, mode: RoundingMode, sat: bool) -> Tuple[np.ndarray, np.ndarray]:
    fmt = _FIELDS[src]
    if 0 < bits.size < _REFERENCE_ARRAY_MIN:
        if bits.ndim == 0:
            code, flag = _reference_float_to_e8m0(int(bits), fmt, mode, sat)
            return np.array(code, np.uint8), np.array(flag, np.uint8)
        codes, flags = zip(*[_reference_float_to_e8m0(v, fmt, mode, sat) for v in bits.reshape(-1).tolist()])
        return np.array(codes, np.uint8).reshape(bits.shape), np.array(flags, np.uint8).reshape(bits.shape)
    codes, flags = _reference_float_to_e8m0(bits.reshape(-1).astype(np.int64), fmt, mode, sat)
    return codes.astype(np.uint8).reshape(bits.shape), flags.astype(np.uint8).reshape(bits.shape)


# --------------------------------------------------------------------------- fast (vectorized rule)


def _fast_rule(bits: np.ndarray, lay: _Layout, mode: RoundingMode, sat: bool) -> Tuple[np.ndarray, np.ndarray]:
    """The whole rule vectorized over any integer array of raw encodings (no tables)."""
    u = bits.astype(np.int64)
    fb = lay.fraction_bits
    sign = (u >> (lay.width - 1)) & 1
    efield = (u >> fb) & lay.exponent_max
    frac = u & ((1 << fb) - 1)
    special = efield == lay.exponent_max
    subnormal = efield == 0
    invalid = (special & (frac != 0)) | (subnormal & (frac == 0)) | (sign == 1)
    pos_inf = special & (frac == 0) & (sign == 0)
    sig = np.where(subnormal, frac, frac | (1 << fb))
    exp = np.where(subnormal, lay.subnormal_exponent, efield - (lay.bias + fb))
    # highest set bit: fb for normals; frexp is exact on integers < 2^53 for subnormals
    h_sub = np.frexp(np.maximum(frac, 1).astype(np.float64))[1].astype(np.int64) - 1
    h = np.where(subnormal, h_sub, fb)
    floor_e = exp + h
    exact = sig == (np.int64(1) << h)
    ceil_e = floor_e + 1
    if mode is RoundingMode.RTM:
        rounded = floor_e
    elif mode is RoundingMode.RTP:
        rounded = ceil_e
    elif mode is RoundingMode.RTZ:
        rounded = np.where(floor_e < 0, ceil_e, floor_e)
    elif mode is RoundingMode.RTO:
        rounded = np.where(floor_e % 2 != 0, floor_e, ceil_e)
    else:
        square = sig * sig  # < 2^48
        boundary = np.int64(1) << (2 * h + 1)
        if mode is RoundingMode.RNE:
            tie = np.where(floor_e % 2 == 0, floor_e, ceil_e)
        elif mode is RoundingMode.RNA:
            tie = np.where(floor_e < 0, floor_e, ceil_e)
        else:
            tie = ceil_e
        rounded = np.where(square < boundary, floor_e, np.where(square > boundary, ceil_e, tie))
    rounded = np.where(exact, floor_e, rounded)
    codes = np.clip(rounded + 127, 0, 255)
    flags = np.where(exact, 0, NX)
    under = floor_e < -127
    over = pos_inf | ((floor_e == 127) & ~exact)
    codes = np.where(under, _E8M0_SMALLEST if sat else _E8M0_NAN, codes)
    flags = np.where(under, UF | NX, flags)
    codes = np.where(over, _E8M0.overflow_code(sat, False), codes)
    flags = np.where(over, OF | NX, flags)
    codes = np.where(invalid, _E8M0_NAN, codes)
    flags = np.where(invalid, NV, flags)
    return codes.astype(np.uint8), flags.astype(np.uint8)


# --------------------------------------------------------------------------- fast (tables)

_AMBIGUOUS = 0x8000  # marks a high-half bucket whose result needs the low 16 bits


@functools.lru_cache(maxsize=None)
def _table16(src: TileDataType, mode: RoundingMode, sat: bool) -> Tuple[np.ndarray, np.ndarray]:
    """(codes, flags) for all 65536 encodings of a 16-bit source."""
    lay = _LAYOUTS[src]
    c, f = _fast_rule(np.arange(1 << 16, dtype=np.int64), lay, mode, sat)
    c.setflags(write=False)
    f.setflags(write=False)
    return c, f


@functools.lru_cache(maxsize=None)
def _table32(mode: RoundingMode, sat: bool) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """FP32 tables indexed by the high 16 bits.

    Returns ``(packed_low, packed_high, threshold, ambiguous)``: ``packed_*`` are
    ``code | flags << 8`` for low halves below / at-or-above ``threshold``;
    ``packed_low`` of an undecided bucket also carries ``_AMBIGUOUS``.  In every
    bucket the result is a step function of the low 16 bits with at most one
    step (exactness at low == 0, the sqrt(2) midpoint, or the subnormal
    range edge); the step is found by a vectorized bisection on the rule.
    """
    lay = _LAYOUTS[TileDataType.FP32]
    hi = np.arange(1 << 16, dtype=np.int64) << 16

    def packed(lo: np.ndarray, base: np.ndarray = hi) -> np.ndarray:
        c, f = _fast_rule(base | lo, lay, mode, sat)
        return c.astype(np.int64) | (f.astype(np.int64) << 8)

    p0 = packed(np.zeros_like(hi))
    p1 = packed(np.full_like(hi, 0xFFFF))
    amb = np.flatnonzero(p0 != p1)
    base = hi[amb]
    lo_ok = np.zeros(amb.size, np.int64)  # result == p0 at lo_ok
    hi_ok = np.full(amb.size, 0xFFFF, np.int64)  # result == p1 at hi_ok
    want0 = p0[amb]
    while np.any(hi_ok - lo_ok > 1):
        mid = (lo_ok + hi_ok) // 2
        same = packed(mid, base) == want0
        lo_ok = np.where(same, mid, lo_ok)
        hi_ok = np.where(same, hi_ok, mid)
    thr = np.full(1 << 16, 0x10000, np.int64)
    thr[amb] = hi_ok
    # The one-step claim is checked: both sides of the step are constant.
    for probe in (lo_ok, np.maximum(lo_ok - 1, 0), lo_ok // 2):
        assert np.array_equal(packed(probe, base), want0)
    for probe in (hi_ok, np.minimum(hi_ok + 1, 0xFFFF), (hi_ok + 0xFFFF) // 2):
        assert np.array_equal(packed(probe, base), p1[amb])
    low = p0.astype(np.uint16)
    low[amb] |= _AMBIGUOUS
    out = (low, p1.astype(np.uint16), thr.astype(np.uint32), amb)
    for a in out:
        a.setflags(write=False)
    return out


@functools.lru_cache(maxsize=None)
def _table32_dense(mode: RoundingMode, sat: bool) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(low, high, threshold)`` without markers: result = high if low16 >= threshold else low.

    Decided buckets have threshold 0 and high == low.
    """
    low_t, high_t, thr_t, amb = _table32(mode, sat)
    low = low_t & np.uint16(0x7FFF)
    high = low.copy()
    high[amb] = high_t[amb]
    thr = np.zeros(1 << 16, np.uint16)
    thr[amb] = thr_t[amb]
    for a in (low, high, thr):
        a.setflags(write=False)
    return low, high, thr


_LITTLE = sys.byteorder == "little"


def _fast32_tables(u: np.ndarray, mode: RoundingMode, sat: bool) -> Tuple[np.ndarray, np.ndarray]:
    low_t, high_t, thr_t, _ = _table32(mode, sat)
    flat = np.ascontiguousarray(u, dtype=np.uint32).reshape(-1)
    halves = flat.view(np.uint16)
    hi16 = halves[1::2] if _LITTLE else halves[0::2]
    lo16 = halves[0::2] if _LITTLE else halves[1::2]
    sample = hi16[::61]
    if sample.size and np.count_nonzero(low_t[sample] >= _AMBIGUOUS) * 8 > sample.size:
        # Many undecided elements (e.g. exact powers of two): settle all densely.
        d_low, d_high, d_thr = _table32_dense(mode, sat)
        packed = np.where(lo16 >= d_thr[hi16], d_high[hi16], d_low[hi16])
    else:
        packed = low_t[hi16]
        idx = np.flatnonzero(packed >= _AMBIGUOUS)
        if idx.size:
            h = hi16[idx]
            packed[idx] = np.where(lo16[idx] >= thr_t[h], high_t[h], low_t[h] & 0x7FFF)
    codes = packed.astype(np.uint8)  # low byte (truncating cast)
    flags = (packed >> np.uint16(8)).astype(np.uint8)
    return codes.reshape(u.shape), flags.reshape(u.shape)


#: below this many elements the FP32 fast engine evaluates the rule directly
_FP32_TABLE_MIN = 1 << 15


def _fast(bits: np.ndarray, src: TileDataType, mode: RoundingMode, sat: bool) -> Tuple[np.ndarray, np.ndarray]:
    # numba kernel (``ptonum.kernels.tcvt``) from ``PTONUM_KERNEL_MIN_ELEMENTS`` elements on
    if engines.select("fast", bits.size) == "numba":
        return engines.to_e8m0_kernel(bits, _LAYOUTS[src], mode, sat, _fast_rule)
    if src is TileDataType.FP32:
        if bits.size < _FP32_TABLE_MIN:
            return _fast_rule(bits, _LAYOUTS[src], mode, sat)
        return _fast32_tables(bits, mode, sat)
    codes_t, flags_t = _table16(src, mode, sat)
    idx = bits if bits.dtype == np.uint16 else bits.astype(np.uint16)
    return codes_t[idx], flags_t[idx]


# --------------------------------------------------------------------------- public


def _source_bits(src_bits: Any, width: int) -> np.ndarray:
    """Validate raw encodings; native unsigned arrays that cannot be too wide skip the copy."""
    if type(src_bits) is int and 0 <= src_bits and not src_bits >> width:  # one encoding (the common small call)
        return np.array(src_bits, np.uint32 if width == 32 else np.uint16)
    if isinstance(src_bits, np.ndarray):
        src_bits = native(unmasked("src_bits", src_bits))
    if isinstance(src_bits, np.ndarray) and src_bits.dtype.kind in "iu" and src_bits.dtype.itemsize * 8 < width:
        raise UsageError(
            f"src_bits: a {src_bits.dtype} array cannot hold {width}-bit source encodings; "
            f"pass uint{width} bits (or float values through to_e8m0_values)"
        )
    if isinstance(src_bits, np.ndarray) and src_bits.dtype.kind == "u" and src_bits.dtype.itemsize * 8 <= width:
        return src_bits
    arr = as_bits("src_bits", src_bits, width)
    return arr.astype(np.uint32 if width == 32 else np.uint16)


def to_e8m0(src_bits: Any, *, src_type: Any, rmode: Any = "NONE", sat: Any = False,
            engine: str = "fast") -> Tuple[np.ndarray, np.ndarray]:
    """Convert raw FP16/BF16/FP32 encodings to E8M0 codes (TCVT with an E8M0 destination).

    Source: ADR-0085 decision 183; ASL ``ReferenceFloatToE8M0`` and
    ``ReferenceE8M0RoundExponent`` (``asl/arch/profile/e8m0-conversion.asl``),
    source legality ``HardwareTCVTE8M0SourceTypeSupported``.

    Args:
        src_bits: raw source encodings -- an int or an integer array of any shape;
            each element must fit the source width (16 or 32 bits).
        src_type: ``FP16``, ``BF16`` or ``FP32`` (TileDataType, name or B.DATR code).
        rmode: B.DATR RMode (name or code 0-7); ``NONE`` resolves to RNE.
        sat: Sat control; selects the clamped endpoints (0x00 / 0xFE) on underflow
            and overflow instead of 0xFF.
        engine: ``"fast"`` (numpy; compiled numba kernels from ``PTONUM_KERNEL_MIN_ELEMENTS``
            elements on, same bits and flags) or ``"reference"`` (ASL step by step, exact: Python
            ints one element at a time below 40 elements, int64 arrays above).

    Returns:
        ``(codes, flags)``: two ``uint8`` arrays (``np.ndarray``) of ``src_bits``' shape
        (0-d arrays for a scalar, in both engines).  ``codes`` are E8M0 encodings (value ``2^(code-127)``, 0xFF NaN);
        ``flags`` are per-element 5-bit NV/DZ/OF/UF/NX values.

    Raises:
        UnsupportedConversionError: ``src_type`` is an assigned Tile DataType other
            than FP16/BF16/FP32 (e.g. FP64, E4M3, S32, E8M0).
        UsageError: unknown type name, bad ``rmode``, ``sat`` or ``engine``, or an
            encoding wider than the source (element index and value named).
        Every check runs before any result is computed.
    """
    src = _check_source_type(src_type)
    mode = _check_mode(rmode)
    satb = check_bool("sat", sat)
    eng = check_engine(engine)
    lay = _LAYOUTS[src]
    bits = np.asarray(_source_bits(src_bits, lay.width))
    codes, flags = (_reference if eng == "reference" else _fast)(bits, src, mode, satb)
    return shaped(bits.shape, codes, flags)  # type: ignore[return-value]


def to_e8m0_trace(src_bits: int, *, src_type: Any, rmode: Any = "NONE",
                  sat: Any = False) -> Tuple[int, int, List[TraceStep]]:
    """Convert one encoding like :func:`to_e8m0` (reference engine) and explain each step.

    Source: ADR-0085 decision 183; ASL ``ReferenceFloatToE8M0``,
    ``ReferenceE8M0RoundExponent``, ``ReferenceE8M0HighestSetBit`` and the source
    format's ``Classify*`` / ``*FiniteDecomposition``.

    Returns ``(code, flags, steps)``: the E8M0 code (int), the 5-bit flags (int) and
    the list of :class:`TraceStep` records in evaluation order (value class,
    decomposition, floor exponent, exact-power test, range checks, rounding with
    both candidates -- and for RNE/RNA/RHB the integer comparison of ``sig^2``
    with ``2^(2h+1)`` -- and the final code).

    Raises the same errors as :func:`to_e8m0`; ``src_bits`` must be a single int.
    """
    src = _check_source_type(src_type)
    mode = _check_mode(rmode)
    satb = check_bool("sat", sat)
    lay = _LAYOUTS[src]
    bits = _source_bits(src_bits, lay.width)
    if np.ndim(bits) != 0:
        raise UsageError(f"src_bits: expected one encoding, got shape {np.shape(bits)}")
    steps: List[TraceStep] = [
        TraceStep("control", "ReferenceFloatToE8M0",
                  f"source {lay.name}, RMode {_parse_mode(rmode).name} -> {mode.name}, Sat={int(satb)}")
    ]
    code, flags = _reference_float_to_e8m0(int(bits), _FIELDS[src], mode, satb, steps)
    return code, flags, steps


def _dtype_source(dtype: np.dtype) -> Optional[TileDataType]:
    """Tile DataType a numpy dtype holds (None if it matches none)."""
    import ml_dtypes

    table = {
        np.dtype(np.float16): TileDataType.FP16,
        np.dtype(ml_dtypes.bfloat16): TileDataType.BF16,
        np.dtype(np.float32): TileDataType.FP32,
        np.dtype(np.float64): TileDataType.FP64,
        np.dtype(ml_dtypes.float8_e4m3fn): TileDataType.E4M3,
        np.dtype(ml_dtypes.float8_e5m2): TileDataType.E5M2,
        np.dtype(ml_dtypes.float8_e8m0fnu): TileDataType.E8M0,
        np.dtype(np.int64): TileDataType.S64,
        np.dtype(np.int32): TileDataType.S32,
        np.dtype(np.int16): TileDataType.S16,
        np.dtype(np.int8): TileDataType.S8,
        np.dtype(np.uint64): TileDataType.U64,
        np.dtype(np.uint32): TileDataType.U32,
        np.dtype(np.uint16): TileDataType.U16,
        np.dtype(np.uint8): TileDataType.U8,
    }
    return table.get(np.dtype(dtype))


def to_e8m0_values(values: Any, *, rmode: Any = "NONE", sat: Any = False, out: str = "uint8",
                   engine: str = "fast") -> Tuple[np.ndarray, np.ndarray]:
    """Convert a float16 / bfloat16 / float32 array to E8M0 scales (TCVT to E8M0).

    Source: ADR-0085 decision 183; ASL ``ReferenceFloatToE8M0`` (via :func:`to_e8m0`).

    The array's dtype decides the source type: ``float16`` -> FP16,
    ``ml_dtypes.bfloat16`` -> BF16, ``float32`` -> FP32.  The values are used
    bit for bit (no conversion happens first).

    Args:
        values: numpy array (any shape) or numpy scalar of one of those dtypes.
        rmode, sat, engine: as for :func:`to_e8m0`.
        out: ``"uint8"`` for raw codes or ``"e8m0"`` for an
            ``ml_dtypes.float8_e8m0fnu`` view of the same bytes.

    Returns:
        ``(codes, flags)`` arrays with the shape of ``values`` (0-d for a numpy scalar or a 0-d array);
        ``flags`` is ``uint8``.  Both engines return the same types.

    Raises:
        UnsupportedConversionError: the dtype holds another Tile DataType (float64,
            FP8 types, integers): those sources are rejected for E8M0.
        UsageError: any other dtype (e.g. Python objects, complex), bad ``out``,
            ``rmode``, ``sat`` or ``engine``.
    """
    import ml_dtypes

    if out not in ("uint8", "e8m0"):
        raise UsageError(f"out = {out!r}: expected 'uint8' or 'e8m0'")
    arr = as_array("values", values)
    src = _dtype_source(arr.dtype)
    if src is None:
        raise UsageError(
            f"values: dtype {arr.dtype} is not a Tile DataType; expected float16, bfloat16 or float32 "
            "(ADR-0085 D183)"
        )
    if src not in _LAYOUTS:
        raise UnsupportedConversionError(
            f"values: dtype {arr.dtype} holds {src.name}; TCVT to E8M0 accepts only FP16, BF16 and FP32 "
            "sources (ADR-0085 D183, HardwareTCVTE8M0SourceTypeSupported); convert to float32 first"
        )
    width = _LAYOUTS[src].width
    bits = np.ascontiguousarray(arr).view(np.uint32 if width == 32 else np.uint16)
    codes, flags = shaped(arr.shape, *to_e8m0(bits, src_type=src, rmode=rmode, sat=sat, engine=engine))
    if out == "e8m0":
        codes = codes.view(ml_dtypes.float8_e8m0fnu)
    return codes, flags


def e8m0_scale(codes: Any) -> np.ndarray:
    """Decode E8M0 codes to float64 scales: ``2^(code-127)``, NaN for 0xFF (exact).

    Source: ADR-0085 D182 and ``E8M0FiniteDecomposition`` / ``ClassifyE8M0``
    (``asl/arch/data-types/formats/e8m0.asl``).  Raises UsageError for codes
    wider than 8 bits.
    """
    c = as_bits("codes", codes, 8).astype(np.int64)
    scale = np.ldexp(1.0, c - 127)
    return np.where(c == _E8M0_NAN, np.nan, scale)


_FLAG_ORDER = (("NV", NV), ("DZ", 0x02), ("OF", OF), ("UF", UF), ("NX", NX))


def flag_summary(flags: Any) -> Dict[str, int]:
    """Count the elements that raised each flag.

    Returns ``{"NV": n, "DZ": n, "OF": n, "UF": n, "NX": n}`` (insertion order
    NV, DZ, OF, UF, NX) for a ``uint8`` flag array as returned by :func:`to_e8m0`.
    Raises UsageError for values wider than 5 bits.  Source: ADR-0038 flag bits.
    """
    f = as_bits("flags", flags, 5)
    return {name: int(np.count_nonzero(f & np.uint64(bit))) for name, bit in _FLAG_ORDER}
