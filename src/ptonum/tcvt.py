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

* ``reference`` -- one Python-int evaluation per element that follows the ASL
  step by step (the same code produces :func:`to_e8m0_trace`).
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
from itertools import chain, repeat
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

import numpy as np

from . import engines
from ._util import as_array, as_bits, check_bool, check_engine, native
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

# Rounding-mode members as module constants (see ptonum.rounding): the reference steps run per element.
from .rounding import RHB as _RHB, RNA as _RNA, RNE as _RNE, RTM as _RTM, RTO as _RTO, RTP as _RTP, RTZ as _RTZ  # noqa: E402


# --------------------------------------------------------------------------- arguments


def _check_source_type(src_type: Any) -> TileDataType:
    dt = parse_data_type(src_type, "src_type")
    if dt not in _LAYOUTS:
        raise UnsupportedConversionError(
            f"src_type = {dt.name}: TCVT to E8M0 accepts only FP16, BF16 and FP32 sources; "
            f"{dt.name} -> E8M0 is rejected before any destination effect "
            "(ADR-0085 D183, HardwareTCVTE8M0SourceTypeSupported)"
        )
    return dt


def _check_mode(rmode: Any) -> RoundingMode:
    return parse_rounding_mode(rmode, "rmode").resolved(RoundingMode.RNE)


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


_NO_E8M0_VALUE = frozenset(("QuietNaN", "SignalingNaN", "PositiveZero", "NegativeZero",
                            "NegativeInfinity", "NegativeNormal", "NegativeSubnormal"))
#: Finite value-class labels by (sign, 0 zero / 1 subnormal / 2 normal).
_FINITE_CLASS = (("PositiveZero", "PositiveSubnormal", "PositiveNormal"),
                 ("NegativeZero", "NegativeSubnormal", "NegativeNormal"))


class _Fields(NamedTuple):
    """A source format's field positions as plain ints, computed once per format (the
    reference steps read them per element; ``asl/arch/data-types/formats``)."""

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


_FIELDS: Dict[TileDataType, _Fields] = {
    t: _Fields(lay.name, lay.width, lay.width - 1, lay.fraction_bits, lay.exponent_max,
               (1 << lay.fraction_bits) - 1, 1 << (lay.fraction_bits - 1), 1 << lay.fraction_bits,
               lay.subnormal_exponent, lay.bias + lay.fraction_bits)
    for t, lay in _LAYOUTS.items()
}


def _value_class(bits: int, fmt: _Fields) -> str:
    """``TileNumericValueClass`` (``ClassifyFP16``/``ClassifyBF16``/``ClassifyFP32``) of one
    encoding, as its CamelCase label: an all-ones exponent field is an infinity (fraction
    0) or a NaN (quiet when the fraction's top bit is set); a zero exponent field is a zero
    or a subnormal; anything else is normal."""
    sign = bits >> fmt.sign_shift
    efield = (bits >> fmt.fraction_bits) & fmt.exponent_ones
    frac = bits & fmt.fraction_mask
    if efield == fmt.exponent_ones:
        if frac == 0:
            return "NegativeInfinity" if sign else "PositiveInfinity"
        return "QuietNaN" if frac & fmt.quiet_bit else "SignalingNaN"
    return _FINITE_CLASS[sign][2 if efield else (1 if frac else 0)]


def _finite_decomposition(bits: int, fmt: _Fields) -> Tuple[int, int]:
    """``FP16FiniteDecomposition`` / ``BF16...`` / ``FP32...`` of a finite encoding's magnitude:
    ``(significand, exponent)`` with value ``significand * 2^exponent`` -- the fraction at
    the subnormal exponent when the exponent field is 0, else the fraction with its hidden
    one at ``field - bias - fraction_bits``."""
    efield = (bits >> fmt.fraction_bits) & fmt.exponent_ones
    frac = bits & fmt.fraction_mask
    if efield == 0:
        return frac, fmt.subnormal_exponent
    return frac | fmt.hidden_bit, efield - fmt.normal_offset


def _highest_set_bit(sig: int) -> int:
    """``ReferenceE8M0HighestSetBit``: index of the most significant one (sig > 0)."""
    assert sig > 0
    return sig.bit_length() - 1


def _round_exponent(sig: int, exponent: int, mode: RoundingMode,
                    trace: Optional[List[TraceStep]] = None) -> Tuple[int, bool]:
    """``ReferenceE8M0RoundExponent``: (rounded exponent, exact) of ``sig * 2^exponent``."""
    h = _highest_set_bit(sig)
    floor_e = exponent + h
    if sig == 1 << h:  # an exact power of two
        if trace is not None:
            trace.append(TraceStep("rounding", "ReferenceE8M0RoundExponent",
                                   f"exact power of two: result exponent {floor_e}"))
        return floor_e, True
    ceil_e = floor_e + 1
    if mode is _RTM:
        result, why = floor_e, "toward minus infinity takes F"
    elif mode is _RTP:
        result, why = ceil_e, "toward plus infinity takes F+1"
    elif mode is _RTZ:
        if floor_e < 0:
            result, why = ceil_e, "toward exponent 0: F < 0 so F+1"
        else:
            result, why = floor_e, "toward exponent 0: F >= 0 so F"
    elif mode is _RTO:
        if floor_e % 2 != 0:
            result, why = floor_e, "to odd: F is odd"
        else:
            result, why = ceil_e, "to odd: F is even so F+1"
    else:
        # nearest modes: compare the value with the midpoint 2^(F+1/2) on integers,
        # sig^2 against 2^(2h+1)
        square = sig * sig
        boundary = 1 << (2 * h + 1)
        if square < boundary:
            result, why = floor_e, "below, so F"
        elif square > boundary:
            result, why = ceil_e, "above, so F+1"
        elif mode is _RNE:  # unreachable for integer sig; kept as the ASL states it
            result, why = (floor_e if floor_e % 2 == 0 else ceil_e), "tie, even exponent"
        elif mode is _RNA:
            result, why = (floor_e if floor_e < 0 else ceil_e), "tie, away from exponent 0"
        else:
            assert mode is _RHB
            result, why = ceil_e, "tie, greater"
        if trace is not None:
            why = f"sig^2 = {square} vs 2^{2 * h + 1} = {boundary} (midpoint 2^(F+1/2)): {why}"
    if trace is not None:
        cand = f"candidates F={floor_e} (2^{floor_e}) and F+1={ceil_e} (2^{ceil_e})"
        trace.append(TraceStep("rounding", "ReferenceE8M0RoundExponent",
                               f"{mode.name}: {cand}; {why} -> exponent {result}", NX))
    return result, False


_INVALID_RESULT = (_E8M0_NAN, NV)


def _reference_one(bits: int, fmt: _Fields, mode: RoundingMode, sat: bool,
                   trace: Optional[List[TraceStep]] = None) -> Tuple[int, int]:
    """``ReferenceFloatToE8M0`` for one raw source encoding, optionally traced."""
    t = trace
    cls = _value_class(bits, fmt)
    if t is not None:
        t.append(TraceStep("value class", f"Classify{fmt.name}",
                           f"{fmt.name} 0x{bits:0{fmt.width // 4}x}: sign={bits >> fmt.sign_shift} "
                           f"exponent field={(bits >> fmt.fraction_bits) & fmt.exponent_ones} "
                           f"fraction=0x{bits & fmt.fraction_mask:x} -> {cls}"))
    if cls in _NO_E8M0_VALUE:
        if t is not None:
            t.append(TraceStep("invalid", "ReferenceFloatToE8M0",
                               f"{cls}: zero, negative and NaN sources give the E8M0 NaN 0xff", NV))
        return _INVALID_RESULT
    if cls == "PositiveInfinity":
        code = _E8M0.overflow_code(sat, False)
        if t is not None:
            t.append(TraceStep("overflow", "ReferenceFloatToE8M0",
                               f"+Inf follows the overflow rule: Sat={int(sat)} -> 0x{code:02x}", OF | NX))
        return code, OF | NX
    # Positive finite: the exact decomposition.
    sig, exp = _finite_decomposition(bits, fmt)
    h = _highest_set_bit(sig)
    floor_e = exp + h
    exact_power = sig == 1 << h
    if t is not None:
        t.append(TraceStep("decomposition", f"{fmt.name}FiniteDecomposition",
                           f"value = {sig} * 2^{exp} (significand 0x{sig:x})"))
        t.append(TraceStep("floor exponent", "ReferenceE8M0HighestSetBit",
                           f"highest set bit h={h}; F = {exp} + {h} = {floor_e}, so 2^{floor_e} <= value < 2^{floor_e + 1}"))
        t.append(TraceStep("exact power", "ReferenceFloatToE8M0",
                           f"significand {'==' if exact_power else '!='} 2^{h}: "
                           f"{'an exact power of two' if exact_power else 'not a power of two'}"))
    if floor_e < -127:
        code = _E8M0_SMALLEST if sat else _E8M0_NAN
        if t is not None:
            t.append(TraceStep("range", "ReferenceFloatToE8M0",
                               f"F = {floor_e} < -127: underflow, Sat={int(sat)} -> 0x{code:02x}", UF | NX))
        return code, UF | NX
    if floor_e == 127 and not exact_power:
        code = _E8M0.overflow_code(sat, False)
        if t is not None:
            t.append(TraceStep("range", "ReferenceFloatToE8M0",
                               f"F = 127 and not exactly 2^127: overflow in every mode, Sat={int(sat)} -> 0x{code:02x}",
                               OF | NX))
        return code, OF | NX
    if t is not None:
        t.append(TraceStep("range", "ReferenceFloatToE8M0", f"-127 <= F = {floor_e} <= 127: in range"))
    rounded, exact = _round_exponent(sig, exp, mode, t)
    assert -127 <= rounded <= 127
    code = rounded + 127
    flags = 0 if exact else NX
    if t is not None:
        t.append(TraceStep("result", "ReferenceFloatToE8M0",
                           f"code = {rounded} + 127 = {code} (0x{code:02x}) = 2^{rounded}", flags))
    return code, flags


def _reference(bits: np.ndarray, src: TileDataType, mode: RoundingMode, sat: bool) -> Tuple[np.ndarray, np.ndarray]:
    flat = bits.reshape(-1).tolist()
    n = len(flat)
    results = list(map(_reference_one, flat, repeat(_FIELDS[src], n), repeat(mode, n), repeat(sat, n)))
    # every code and flag value fits a byte: the (code, flags) pairs as two interleaved bytes
    pairs = np.frombuffer(bytes(chain.from_iterable(results)), dtype=np.uint8).reshape(-1, 2)
    return (np.ascontiguousarray(pairs[:, 0]).reshape(bits.shape),
            np.ascontiguousarray(pairs[:, 1]).reshape(bits.shape))


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
    if isinstance(src_bits, np.ndarray):
        src_bits = native(src_bits)
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
            elements on, same bits and flags) or ``"reference"`` (ASL step by step, Python ints).

    Returns:
        ``(codes, flags)``: two ``uint8`` arrays of ``src_bits``' shape (0-d for a
        scalar).  ``codes`` are E8M0 encodings (value ``2^(code-127)``, 0xFF NaN);
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
    bits = _source_bits(src_bits, lay.width)
    if eng == "reference":
        return _reference(np.asarray(bits), src, mode, satb)
    return _fast(np.asarray(bits), src, mode, satb)


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
                  f"source {lay.name}, RMode {parse_rounding_mode(rmode).name} -> {mode.name}, Sat={int(satb)}")
    ]
    code, flags = _reference_one(int(bits), _FIELDS[src], mode, satb, steps)
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
        ``(codes, flags)`` with the shape of ``values``; ``flags`` is ``uint8``.

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
    codes, flags = to_e8m0(bits, src_type=src, rmode=rmode, sat=sat, engine=engine)
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
