"""Destination encoders: an exact real value -> (destination bits, numeric flags).

These are the final step of the B.FPATR element post-process (ADR-0085 D177,
D178): the activated (and offset) value, an exact real, is rounded once with
the effective rounding mode and encoded in the destination type, with the
overflow/underflow/inexact flags the reference profile defines.

Two engines produce identical bits and flags:

* ``reference`` -- :func:`encode_reference` and
  :func:`round_and_saturate_signed_reference` (checked, any int / Fraction /
  float) over :func:`encode_ratio` and :func:`round_and_saturate_signed_ratio`
  (the exact real as two Python ints ``num / den``, arguments already
  checked): one element at a time, following the ASL functions step by step
  (including the 256-code candidate search for the FP8 destinations, on
  Fractions).
* ``fast`` -- :func:`encode_fast` and :func:`round_and_saturate_signed_fast`:
  numpy, vectorized over float64 inputs.  The floating destinations are
  rounded with integer arithmetic on the binary64 bit pattern (sign, biased
  exponent, 53-bit significand), so every finite float64 input is handled
  exactly; FP8 candidates are computed arithmetically per binade (HiF8 with
  its exponent-dependent mantissa width), not by searching.

Destination bits are the element at its own width (S8 -116 -> 0x8c, S16 at
16 bits, an S4X2 element in the low nibble, FP32/S32/U32 at 32 bits).  Flags
use NV=0x01 DZ=0x02 OF=0x04 UF=0x08 NX=0x10 (:mod:`ptonum.flags`).

Source: pto-spec ``asl/arch/profile/matrix-postprocess.asl``
(``MatrixEncodeReal``), ``asl/arch/profile/matrix-quantization.asl``
(``ReferenceMatrixIntegerEncoding``, ``MatrixRoundAndSaturateSigned``,
``ReferenceBinary16Encoding``, ``MatrixRoundMagnitude``) and
``asl/arch/profile/reference-quantization.asl``
(``ReferenceFP32FiniteEncoding``, ``ReferenceFP8Encoding``,
``ReferenceFP8FiniteValue``, ``ReferenceMatrixFloatingEncoding``).
"""

from __future__ import annotations

import bisect
import functools
from fractions import Fraction
from typing import Any, Callable, Dict, List, Tuple, Union

import numpy as np

from ._util import Engine, as_array, check_bool, check_engine, shaped, unmasked
from .errors import UsageError
from . import engines, tables
from .formats import TileDataType, parse_data_type
from .rounding import (
    RoundingMode,
    as_exact,
    check_resolved_mode,
    parse_rounding_mode,
    round_magnitude_ratio,
    round_ratio,
    round_to_integer_array,
)

__all__ = [
    "DESTINATIONS",
    "INTEGER_DESTINATIONS",
    "FLOATING_DESTINATIONS",
    "destination_width",
    "encode",
    "encode_reference",
    "encode_ratio",
    "encode_fast",
    "encode_array",
    "round_and_saturate_signed_reference",
    "round_and_saturate_signed_ratio",
    "round_and_saturate_signed_fast",
    "round_and_saturate_signed_array",
]

T = TileDataType

_FACTS = tables.DESTINATIONS

#: Integer destinations: (minimum, maximum, width in bits) -- from ptonum.tables.
_INT_RANGE: Dict[TileDataType, Tuple[int, int, int]] = {
    t: (_FACTS[t].minimum, _FACTS[t].maximum, _FACTS[t].width) for t in tables.INTEGER_DESTINATIONS
}

#: IEEE-like binary destinations: (precision p incl. hidden bit, minimum normal exponent,
#: maximum exponent, bit width, maximum-finite code, infinity code) -- from ptonum.tables.
_BINARY: Dict[TileDataType, Tuple[int, int, int, int, int, int]] = {
    t: (_FACTS[t].precision, _FACTS[t].emin, _FACTS[t].emax, _FACTS[t].width, _FACTS[t].largest[0],
        _FACTS[t].overflow_code(False, False))
    for t in (T.FP32, T.FP16, T.BF16)
}

INTEGER_DESTINATIONS: Tuple[TileDataType, ...] = tables.INTEGER_DESTINATIONS
FLOATING_DESTINATIONS: Tuple[TileDataType, ...] = tables.FLOATING_DESTINATIONS
#: Every B.FPATR destination type the encoders accept.
DESTINATIONS: Tuple[TileDataType, ...] = INTEGER_DESTINATIONS + FLOATING_DESTINATIONS

_WIDTH: Dict[TileDataType, int] = {t: d.width for t, d in _FACTS.items()}
_BITS_DTYPE: Dict[int, Any] = {d.width: d.carrier.type for d in _FACTS.values()}

_OF_NX = tables.OF | tables.NX
_UF_NX = tables.UF | tables.NX
_NX = tables.NX
_OF = tables.OF
_UF_SHIFT, _NX_SHIFT = tables.UF.bit_length() - 1, tables.NX.bit_length() - 1  # flag bit positions
_FP32_INF = _FACTS[T.FP32].overflow_code(False, False)
_FP32_SIGN = _FACTS[T.FP32].sign

ExactReal = Union[Fraction, int]

# Rounding-mode members as module constants (see ptonum.rounding): the reference steps run per element.
from .rounding import RNA as _RNA, RNE as _RNE, RTM as _RTM, RTO as _RTO, RTP as _RTP, RTZ as _RTZ  # noqa: E402
_T_FP32 = T.FP32


def _check_destination(dst_type: object, name: str = "dst_type") -> TileDataType:
    dt = parse_data_type(dst_type, name)  # type: ignore[arg-type]
    if dt not in _WIDTH:
        raise UsageError(
            f"{name} = {dt.name}: not a B.FPATR destination type; supported destinations are "
            f"{', '.join(d.name for d in DESTINATIONS)} (ADR-0085 D179, BundleFPATROutputType)"
        )
    return dt


def destination_width(dst_type: object) -> int:
    """Width in bits of one destination element (S4X2 -> 4, S8/E4M3/HiF8 -> 8, ...).

    Raises :class:`UsageError` for a type that is not a B.FPATR destination.

    Source: ADR-0085 D179/D181; ``BundleFPATROutputType`` (the destination) and
    ``TileElementBits`` (its width).
    """
    return _WIDTH[_check_destination(dst_type)]


# ---------------------------------------------------------------------------
# Reference engine (exact, per element, mirrors the ASL)
#
# An exact real travels as two Python ints, ``num / den`` with ``den > 0`` (not
# necessarily in lowest terms).  Every value B.FPATR forms -- an FP32 or S32 source
# times an FP19 scale, plus an integer offset -- is dyadic, so ``den`` is a power of
# two there; any rational works (``encode_reference`` takes Fractions).  Scaling by
# 2^k is a shift of one of the two, and rounding is one ``divmod``: no Fraction is
# built per element.
# ---------------------------------------------------------------------------

def _times_pow2(num: int, den: int, k: int) -> Tuple[int, int]:
    """The exact real ``num / den * 2^k``, as a ``(num, den)`` pair (``ReferencePowerOfTwo``)."""
    return (num << k, den) if k >= 0 else (num, den << -k)


def _normalize(num: int, den: int) -> int:
    """The exponent the ASL's halving/doubling loops reach for the positive real ``num / den``.

    Unbounded, it is the ``e`` with ``2^e <= num/den < 2^(e+1)`` (the bit lengths give
    it to within one, one integer comparison settles it); like the ASL loop counters it
    is bounded to -149..128, and beyond those bounds the normalized value
    ``num / den / 2^e`` stays outside [1, 2).
    """
    e = num.bit_length() - den.bit_length()
    # 2^e > num/den, compared on integers: then the exponent is one lower
    if (num << -e if e < 0 else num) < (den << e if e > 0 else den):
        e -= 1
    return -149 if e < -149 else 128 if e > 128 else e


@functools.lru_cache(maxsize=None)
def _pow2(e: int) -> Fraction:
    """2^e as a Fraction, built once per exponent (the FP8 candidate values)."""
    return Fraction(1 << e) if e >= 0 else Fraction(1, 1 << -e)


def _integer_reference(num: int, den: int, dst: TileDataType, mode: RoundingMode,
                       sat: bool) -> Tuple[int, int]:
    """``ReferenceMatrixIntegerEncoding`` of ``num / den``: (bits at the element width, flags)."""
    lo, hi, width = _INT_RANGE[dst]
    rounded = round_ratio(num, den, mode)
    overflow = rounded < lo or rounded > hi
    selected = rounded
    if sat and overflow:
        selected = lo if selected < lo else hi
    if overflow:
        flags = _OF_NX
    elif rounded * den != num:  # Real(rounded) != value
        flags = _NX
    else:
        flags = 0
    return selected & ((1 << width) - 1), flags


def _fp32_reference(num: int, den: int, mode: RoundingMode) -> Tuple[int, int]:
    """``ReferenceFP32FiniteEncoding`` of ``num / den`` (no Sat: that is the caller's step)."""
    if num == 0:
        return 0, 0
    negative = num < 0
    exponent = _normalize(-num if negative else num, den)
    sign = 0x80000000 if negative else 0
    if exponent > 127:
        return sign + _FP32_INF, _OF_NX
    if exponent < -126:
        s_num, s_den = _times_pow2(num, den, 149)  # value / 2^-149
        rounded = round_ratio(s_num, s_den, mode)
        magnitude = abs(rounded)
        if magnitude == 0:
            return sign, _UF_NX
        return sign + magnitude, (0 if rounded * s_den == s_num else _UF_NX)
    # the signed normalized value times 2^23
    s_num, s_den = _times_pow2(num, den, 23 - exponent)
    rounded = round_ratio(s_num, s_den, mode)
    magnitude = abs(rounded)
    encoded_exponent = exponent + 127
    if magnitude == 0x1000000:
        magnitude = 0x800000
        encoded_exponent += 1
    if encoded_exponent >= 255:
        return sign + _FP32_INF, _OF_NX
    return (sign + encoded_exponent * 0x800000 + magnitude - 0x800000,
            0 if rounded * s_den == s_num else _NX)


#: FP16/BF16 constants of ``ReferenceBinary16Encoding``, from ptonum.tables: (fraction
#: scale, bias, maximum exponent, minimum exponent, minimum subnormal exponent).
_BINARY16: Dict[TileDataType, Tuple[int, int, int, int, int]] = {
    t: (1 << (_FACTS[t].precision - 1), 1 - _FACTS[t].emin, _FACTS[t].emax, _FACTS[t].emin,
        _FACTS[t].emin - (_FACTS[t].precision - 1))
    for t in (T.FP16, T.BF16)
}
#: the Sat (largest finite) and no-Sat (infinity) overflow codes of FP16/BF16
_BINARY16_OVERFLOW: Dict[Tuple[TileDataType, bool], int] = {
    (t, s): _FACTS[t].overflow_code(s, False) for t in (T.FP16, T.BF16) for s in (False, True)
}


def _binary16_reference(num: int, den: int, dst: TileDataType, mode: RoundingMode,
                        sat: bool) -> Tuple[int, int]:
    """``ReferenceBinary16Encoding`` of ``num / den`` for FP16 or BF16."""
    if num == 0:
        return 0, 0
    negative = num < 0
    magnitude = -num if negative else num
    exponent = _normalize(magnitude, den)
    fraction_scale, bias, max_exponent, min_exponent, min_subnormal_exponent = _BINARY16[dst]
    sign = 0x8000 if negative else 0
    if exponent > max_exponent:
        return sign + _BINARY16_OVERFLOW[dst, sat], _OF_NX
    if exponent < min_exponent:
        s_num, s_den = _times_pow2(magnitude, den, -min_subnormal_exponent)  # |value| / 2^min_sub
        rounded = round_magnitude_ratio(s_num, s_den, mode, negative)
        flags = 0 if rounded * s_den == s_num else _UF_NX
        if rounded >= fraction_scale:
            return sign + fraction_scale, flags
        return sign + max(rounded, 0), flags
    # the normalized magnitude times the fraction scale: |value| / 2^exponent * 2^fraction_bits
    s_num, s_den = _times_pow2(magnitude, den, fraction_scale.bit_length() - 1 - exponent)
    rounded = round_magnitude_ratio(s_num, s_den, mode, negative)
    encoded_exponent = exponent + bias
    if rounded == 2 * fraction_scale:
        rounded = fraction_scale
        encoded_exponent += 1
    if encoded_exponent >= 2 * bias + 1:
        return sign + _BINARY16_OVERFLOW[dst, sat], _OF_NX
    # (after a carry ``rounded`` no longer equals ``scaled``: a carry is always inexact)
    return (sign + encoded_exponent * fraction_scale + rounded - fraction_scale,
            0 if rounded * s_den == s_num else _NX)


def _fp8_finite_value(dst: TileDataType, code: int) -> Fraction:
    """Exact value of a finite FP8 code (``ReferenceFP8FiniteValue``)."""
    negative = bool(code & 0x80)
    if dst is T.E4M3:
        exponent = (code >> 3) & 0xF
        fraction = code & 0x7
        if exponent == 0:
            magnitude = fraction * _pow2(-9)
        else:
            magnitude = (1 + Fraction(fraction, 8)) * _pow2(exponent - 7)
    else:
        body = code & 0x7F
        if body <= 7:
            magnitude = Fraction(0) if body == 0 else _pow2(body - 23)
        elif body <= 15:
            magnitude = 1 + Fraction(body - 8, 8)
        elif body <= 31:
            e = -1 if code & 0x8 else 1
            magnitude = (1 + Fraction(code & 7, 8)) * _pow2(e)
        elif body <= 63:
            ecode = (code >> 3) & 3
            absolute = 2 + ((code >> 3) & 1)
            e = absolute if ecode < 2 else -absolute
            magnitude = (1 + Fraction(code & 7, 8)) * _pow2(e)
        elif body <= 95:
            ecode = (code >> 2) & 7
            absolute = 4 + ((code >> 2) & 3)
            e = absolute if ecode < 4 else -absolute
            magnitude = (1 + Fraction(code & 3, 4)) * _pow2(e)
        else:
            ecode = (code >> 1) & 0xF
            absolute = 8 + ((code >> 1) & 7)
            e = absolute if ecode < 8 else -absolute
            magnitude = (1 + Fraction(code & 1, 2)) * _pow2(e)
    return -magnitude if negative else magnitude


def _fp8_is_finite_code(dst: TileDataType, code: int) -> bool:
    """Not NaN and not infinity (``ClassifyE4M3`` / ``ClassifyHiF8``); every 8-bit code is valid.
    (The NaNs are the canonical NaN with either sign bit: E4M3 0x7F/0xFF, HiF8 0x80.)"""
    facts = _FACTS[dst]
    assert facts.canonical_nan is not None
    return code not in (facts.canonical_nan, facts.canonical_nan | facts.sign) + (facts.infinity or ())


_FP8_VALUES: Dict[TileDataType, List[Tuple[int, Fraction]]] = {
    d: [(c, _fp8_finite_value(d, c)) for c in range(256) if _fp8_is_finite_code(d, c)]
    for d in (T.E4M3, T.HiF8)
}
#: Every finite FP8 value is an integer number of units of 2^-unit (the smallest subnormal:
#: E4M3 2^-9, HiF8 2^-22); the search below compares integers on that grid.
_FP8_UNIT: Dict[TileDataType, int] = {
    d: max(v.denominator for _, v in cands).bit_length() - 1 for d, cands in _FP8_VALUES.items()
}
#: The largest finite value (ptonum.tables) in those units: above it E4M3 and HiF8 overflow.
_FP8_LARGEST: Dict[TileDataType, int] = {
    d: int(_FACTS[d].largest_value * (1 << unit)) for d, unit in _FP8_UNIT.items()
}
#: The finite codes with their values in those units, in code order (the ASL scan's order).
_FP8_CANDIDATES: Dict[TileDataType, List[Tuple[int, int]]] = {
    d: [(c, int(v * (1 << _FP8_UNIT[d]))) for c, v in cands] for d, cands in _FP8_VALUES.items()
}
#: The finite codes grouped by value, values ascending: (sorted distinct values, for each
#: value its codes in code order).  Computed once; used to visit only the codes that can
#: win the candidate search (see _fp8_search_codes).
_FP8_BY_VALUE: Dict[TileDataType, Tuple[List[int], List[List[Tuple[int, int]]]]] = {}
for _d, _cands in _FP8_CANDIDATES.items():
    _groups: Dict[int, List[Tuple[int, int]]] = {}
    for _c, _k in _cands:
        _groups.setdefault(_k, []).append((_c, _k))
    _vals = sorted(_groups)
    _FP8_BY_VALUE[_d] = (_vals, [_groups[_k] for _k in _vals])


def _fp8_search_codes(dst: TileDataType, num: int, den: int) -> List[Tuple[int, int]]:
    """The candidates the ASL search can select for ``v = num / den``, in code order, as
    ``(code, value in units)``.

    ``ReferenceFP8Encoding`` scans every finite code.  Whatever the mode, the code it keeps
    has the largest value <= v or the smallest value >= v (nearest modes pick one of the
    two; RTP/RTM/RTZ/RTO's first search the one on their side), and among codes of equal
    value the scan's "better" tests are strict, so the first in code order is kept.  The
    scan restricted to the codes of those one or two values, in code order, keeps the same
    code; it is what we run (bisect on the values sorted once)."""
    vals, groups = _FP8_BY_VALUE[dst]
    q, r = divmod(num << _FP8_UNIT[dst], den)  # v in units: q + r/den, 0 <= r < den
    i = bisect.bisect_left(vals, q if r == 0 else q + 1)  # the first value >= v
    picked = groups[i - 1] if i > 0 else []
    if i < len(vals):
        picked = picked + groups[i]  # vals[i] >= v: equal to v, or the neighbour above
    return sorted(picked)


def _fp8_nearest_better(target: int, cand: int, cand_code: int,
                        best: int, best_code: int, mode: RoundingMode) -> bool:
    """``ReferenceNearestFP8CandidateBetter`` (values as integers on one common scale)."""
    cd = abs(cand - target)
    bd = abs(best - target)
    if cd != bd:
        return cd < bd
    if mode is _RNE:
        return cand_code % 2 == 0 and best_code % 2 != 0
    if mode is _RNA:
        return abs(cand) > abs(best)
    if mode is _RTO:  # pragma: no cover - RTO uses the directed search
        return cand_code % 2 != 0 and best_code % 2 == 0
    return cand > best


def _fp8_reference(num: int, den: int, dst: TileDataType, mode: RoundingMode, sat: bool) -> Tuple[int, int]:
    """``ReferenceFP8Encoding`` of ``num / den`` for E4M3 or HiF8.

    Exact integer arithmetic: every value is compared on one scale, ``den * 2^unit`` (the
    target ``v`` is ``num << unit``, a candidate of ``k`` units is ``k * den``)."""
    if num == 0:
        return 0, 0
    unit = _FP8_UNIT[dst]
    v = num << unit
    negative = num < 0
    magnitude = -v if negative else v
    facts = _FACTS[dst]
    if magnitude > _FP8_LARGEST[dst] * den:  # 448 (E4M3), 32768 (HiF8)
        # Sat: the signed largest finite; else the signed infinity (E4M3, without one: its NaN)
        return facts.overflow_code(sat, negative), _OF_NX
    best_set = False
    best_code = 0
    best_value = 0
    toward_zero = mode in (_RTZ, _RTO)
    for code, k in _fp8_search_codes(dst, num, den):
        cand = k * den
        if mode is _RTP:
            eligible = cand >= v
        elif mode is _RTM:
            eligible = cand <= v
        elif toward_zero:
            eligible = (v <= cand <= 0) if negative else (0 <= cand <= v)
        else:
            eligible = True
        if not eligible:
            continue
        if not best_set:
            better = True
        elif mode is _RTP:
            better = cand < best_value
        elif mode is _RTM:
            better = cand > best_value
        elif toward_zero:
            better = cand < best_value if negative else cand > best_value
        else:
            better = _fp8_nearest_better(v, cand, code, best_value, best_code, mode)
        if better:
            best_set, best_code, best_value = True, code, cand
    assert best_set
    if mode is _RTO and best_value != v and best_code % 2 == 0:
        odd_set = False
        odd_code, odd_value = best_code, best_value
        for code, k in _FP8_CANDIDATES[dst]:
            if code % 2 != 1:
                continue
            cand = k * den
            away = cand < best_value if negative else cand > best_value
            if away and (not odd_set or (cand > odd_value if negative else cand < odd_value)):
                odd_set, odd_code, odd_value = True, code, cand
        if odd_set:
            best_code, best_value = odd_code, odd_value
    min_normal = den << (unit + facts.emin)  # 2^emin on the same scale
    inexact = best_value != v
    if inexact and magnitude < min_normal:
        return best_code, _UF_NX
    return best_code, (_NX if inexact else 0)


def encode_reference(value: Union[ExactReal, float], dst_type: object, rmode: object, sat: object) -> Tuple[int, int]:
    """Encode one exact real value in a B.FPATR destination type (reference engine).

    ``value``: ``int``, :class:`fractions.Fraction` or a finite ``float`` (taken
    exactly).  ``dst_type``: one of S4X2, S8, S16, S32, U32, FP32, FP16, BF16,
    E4M3, HiF8 (name, code or :class:`TileDataType`).  ``rmode``: a resolved
    rounding mode (RNE RTZ RTM RTP RNA RTO RHB; NONE is rejected).  ``sat``:
    the B.DATR Sat bit.

    Returns ``(bits, flags)``: Python ints, ``bits`` at the destination width
    (S4X2 -> low nibble), ``flags`` the 5-bit NV/DZ/OF/UF/NX value.

    Rules: integers round with the mode, overflow gives OF|NX and clamps
    (Sat=1) or wraps modulo 2^N (Sat=0); FP32/FP16/BF16 judge overflow on the
    exponent before rounding and again after a rounding carry (Inf, or max
    finite when Sat=1), set UF|NX whenever a result below the minimum normal
    is inexact, and keep the sign of tiny negatives that round to zero; E4M3
    and HiF8 overflow when |value| exceeds 448 / 32768 (before rounding) and
    otherwise pick the best of their finite codes (ties: RNE even code, RNA
    larger magnitude, RHB numerically greater; RTO odd code), with UF when
    inexact and |value| is below the minimum normal.  A zero value encodes
    as +0 (0x0).

    Raises :class:`UsageError` for an unknown or non-destination type, an
    unresolved or unknown rounding mode, a non-boolean ``sat`` or a
    non-finite/non-real value.

    Source: ADR-0085 D177/D178; ``MatrixEncodeReal`` with
    ``ReferenceMatrixIntegerEncoding``, ``ReferenceFP32FiniteEncoding``,
    ``ReferenceBinary16Encoding``, ``ReferenceFP8Encoding`` and the Sat rule
    of ``ReferenceMatrixFloatingEncoding``.
    """
    return _encode_exact(value, _check_destination(dst_type), check_resolved_mode(rmode), check_bool("sat", sat))


def _encode_exact(value: object, dst: TileDataType, mode: RoundingMode, sat: bool) -> Tuple[int, int]:
    """:func:`encode_ratio` of one value taken exactly (``as_exact`` checks the value itself)."""
    if type(value) is int:  # a Python int is already exact
        return encode_ratio(value, 1, dst, mode, sat)
    v = as_exact(value)
    return encode_ratio(v.numerator, v.denominator, dst, mode, sat)


def encode_ratio(num: int, den: int, dst: TileDataType, mode: RoundingMode, sat: bool) -> Tuple[int, int]:
    """:func:`encode_reference` of the exact real ``num / den``, on checked arguments.

    The per-element entry of the reference engines: ``num``/``den`` are Python ints
    (``den > 0``, not necessarily in lowest terms), ``dst`` a B.FPATR destination
    :class:`TileDataType`, ``mode`` a resolved :class:`RoundingMode` (not NONE) and
    ``sat`` a bool -- nothing is parsed or checked here (the caller did it once).
    Returns ``(bits, flags)`` as :func:`encode_reference`.

    Source: ADR-0085 D177/D178; ``MatrixEncodeReal`` and ``ReferenceMatrixFloatingEncoding``.
    """
    if dst in _INT_RANGE:
        return _integer_reference(num, den, dst, mode, sat)
    if dst is _T_FP32:
        bits, flags = _fp32_reference(num, den, mode)
        if sat and flags & _OF:
            bits = _FACTS[_T_FP32].overflow_code(True, bits >= _FP32_SIGN)
        return bits, flags
    if dst in _BINARY16:
        return _binary16_reference(num, den, dst, mode, sat)
    return _fp8_reference(num, den, dst, mode, sat)


_SIGNED_RANGE = {5: (-16, 15), 9: (-256, 255), 17: (-65536, 65535)}


def _check_width(width: object) -> int:
    if isinstance(width, bool) or not isinstance(width, (int, np.integer)) or int(width) not in _SIGNED_RANGE:
        raise UsageError(
            f"width = {width!r}: PreQuant intermediates are S5, S9 or S17 (width 5, 9 or 17; "
            "ADR-0085 D177, MatrixRoundAndSaturateSigned)"
        )
    return int(width)


def round_and_saturate_signed_reference(value: Union[ExactReal, float], width: int, rmode: object) -> Tuple[int, int]:
    """Round an exact real and saturate it to a signed ``width``-bit intermediate.

    ``width`` is 5, 9 or 17 (ranges -16..15, -256..255, -65536..65535 -- note
    S9 and S17 use the full two's-complement range).  Always saturates.
    Returns ``(integer, flags)``: flags OF|NX (0x14) when the rounded value was
    clamped, else NX (0x10) when inexact, else 0.

    Raises :class:`UsageError` for another width, rmode NONE or a bad value.

    Source: ADR-0085 D177; ``MatrixRoundAndSaturateSigned``
    (``asl/arch/profile/matrix-quantization.asl``).
    """
    w = _check_width(width)
    mode = check_resolved_mode(rmode)
    if type(value) is int:
        return round_and_saturate_signed_ratio(value, 1, w, mode)
    v = as_exact(value)
    return round_and_saturate_signed_ratio(v.numerator, v.denominator, w, mode)


def round_and_saturate_signed_ratio(num: int, den: int, width: int, mode: RoundingMode) -> Tuple[int, int]:
    """:func:`round_and_saturate_signed_reference` of ``num / den``, on checked arguments.

    Per-element entry of the reference engine: Python ints (``den > 0``), ``width``
    5, 9 or 17, ``mode`` a resolved :class:`RoundingMode`; nothing is checked here.

    Source: ADR-0085 D177; ``MatrixRoundAndSaturateSigned``.
    """
    lo, hi = _SIGNED_RANGE[width]
    rounded = round_ratio(num, den, mode)
    overflow = rounded < lo or rounded > hi
    selected = lo if rounded < lo else hi if rounded > hi else rounded
    flags = _OF_NX if overflow else (_NX if rounded * den != num else 0)
    return selected, flags


# ---------------------------------------------------------------------------
# Fast engine (numpy, vectorized)
# ---------------------------------------------------------------------------

_U64 = np.uint64
#: binary64 bits of the largest finite value of E4M3 (448) and HiF8 (32768): above it they overflow
_LARGEST_BITS: Dict[TileDataType, int] = {
    t: int(np.array(float(_FACTS[t].largest_value), np.float64).view(np.uint64)) for t in (T.E4M3, T.HiF8)}
_MANT_MASK = _U64((1 << 52) - 1)
_ABS_MASK = _U64((1 << 63) - 1)
_HIDDEN = _U64(1 << 52)


def _as_float64(values: Any, name: str = "values") -> np.ndarray:
    """Validate the fast-engine input: a real array exactly representable in float64."""
    arr = as_array(name, values)
    if arr.dtype == np.float64:
        return np.ascontiguousarray(arr)
    if arr.dtype.kind == "f":
        return arr.astype(np.float64)
    if arr.dtype.kind in "iu":
        out = arr.astype(np.float64)
        if arr.size and arr.dtype.itemsize == 8:
            back = np.where(np.abs(out) < 2.0 ** 63, out, 0).astype(arr.dtype)
            bad = (back != np.where(np.abs(out) < 2.0 ** 63, arr, 0)) | (np.abs(out) >= 2.0 ** 63)
            if np.any(bad):
                idx = tuple(int(i) for i in np.argwhere(bad)[0])
                raise UsageError(
                    f"{name}[{', '.join(map(str, idx))}] = {int(arr[idx])}: not exactly representable "
                    "in float64; use engine='reference' with Python ints"
                )
        return out
    if arr.dtype == object:
        raise UsageError(
            f"{name}: dtype object (ints/Fractions) needs engine='reference'; the fast engine takes float64 arrays"
        )
    raise UsageError(f"{name}: expected a real (float64) array, got dtype {arr.dtype}")


class _NonFinite(Exception):
    """Raised inside a chunk kernel; the driver reports the element with its full index."""


def _check_finite_chunk(v: np.ndarray) -> None:
    if not np.all(np.isfinite(v)):
        raise _NonFinite


def _raise_nonfinite(v: np.ndarray, name: str = "values") -> None:
    bad = ~np.isfinite(v)
    if np.any(bad):
        idx = tuple(int(i) for i in np.argwhere(bad)[0]) if v.ndim else ()
        raise UsageError(
            f"{name}[{', '.join(map(str, idx))}] = {float(v[idx])!r}: the destination encoders take "
            "finite real values (NaN/Inf sources are handled by MatrixPostQuantSpecialValue)"
        )


#: Elements per block: the kernels' temporaries stay cache-resident.
_CHUNK = 1 << 15


def _chunked(v: np.ndarray, bits_dtype: Any,
             kernel: Callable[[np.ndarray], Tuple[np.ndarray, np.ndarray]]) -> Tuple[np.ndarray, np.ndarray]:
    """Run a vectorized kernel block by block over a flattened view of ``v``.

    Each block is a whole-array numpy computation (no per-element loop); blocks
    only bound the size of the temporaries.  A non-finite element is reported
    with its index in ``v``.
    """
    flat = v.reshape(-1)
    n = flat.size
    try:
        if n <= _CHUNK:
            b, f = kernel(flat)
            return b.astype(bits_dtype, copy=False).reshape(v.shape), f.reshape(v.shape)
        out_b = np.empty(n, dtype=bits_dtype)
        out_f = np.empty(n, dtype=np.uint8)
        for start in range(0, n, _CHUNK):
            stop = min(start + _CHUNK, n)
            out_b[start:stop], out_f[start:stop] = kernel(flat[start:stop])
    except _NonFinite:
        _raise_nonfinite(v)
        raise  # pragma: no cover - _raise_nonfinite always raises here
    return out_b.reshape(v.shape), out_f.reshape(v.shape)


def _round_up(mode: RoundingMode, rem: np.ndarray, half: Any, neg: np.ndarray,
              lowpar: Any) -> np.ndarray:
    """Whether the magnitude rounds up from the lower candidate (bool array).

    ``rem``/``half``: discarded part and half a quantum (same integer units);
    ``lowpar``: parity (0/1) of the lower candidate's code.
    """
    if mode is RoundingMode.RTZ:
        return np.zeros(rem.shape, dtype=bool)
    if mode is RoundingMode.RNE:
        return (rem > half) | ((rem == half) & (lowpar != 0))
    if mode is RoundingMode.RNA:
        return rem >= half
    if mode is RoundingMode.RHB:
        return (rem > half) | ((rem == half) & ~neg)
    inexact = rem != 0
    if mode is RoundingMode.RTP:
        return inexact & ~neg
    if mode is RoundingMode.RTM:
        return inexact & neg
    # RTO: the odd one of lower/upper when inexact
    return inexact & (lowpar == 0)


def _binary_fast(v: np.ndarray, dst: TileDataType, mode: RoundingMode, sat: bool) -> Tuple[np.ndarray, np.ndarray]:
    """FP32/FP16/BF16 and E4M3 (p=4) rounding on the binary64 bit pattern."""
    if dst is T.E4M3:
        p, emin, width = _FACTS[dst].precision, _FACTS[dst].emin, _FACTS[dst].width
    else:
        p, emin, _emax, width, _maxc, _infc = _BINARY[dst]
    b = v.view(_U64)
    a = b & _ABS_MASK
    neg = b > _ABS_MASK
    big_e = a >> _U64(52)  # biased binary64 exponent
    emin_b = emin + 1023
    s0 = 53 - p  # bits dropped for a normal result
    # extra shift below the destination's minimum normal (clamped so the shift stays < 64)
    extra = np.minimum(np.maximum(np.int64(emin_b) - np.maximum(big_e, _U64(1)).astype(np.int64), 0), 55 - s0)
    shift = (extra + s0).astype(_U64)
    sig = (a & _MANT_MASK) | np.where(big_e > 0, _HIDDEN, _U64(0))
    k = sig >> shift
    rem = sig & ((_U64(1) << shift) - _U64(1))
    half = (_U64(1) << shift) >> _U64(1)
    up = _round_up(mode, rem, half, neg, k & _U64(1))
    n = k + up
    base = (np.maximum(big_e, _U64(emin_b)) - _U64(emin_b)) << _U64(p - 1)
    code = base + n
    inexact = rem != 0
    tiny = big_e < _U64(emin_b)
    flags = np.where(inexact, np.uint8(_NX), np.uint8(0))
    flags |= (inexact & tiny).astype(np.uint8) << np.uint8(_UF_SHIFT)
    if dst is T.E4M3:
        overflow = a > _U64(_LARGEST_BITS[dst])  # |v| > 448
        sign = (neg & (n != 0)).astype(np.uint8) << np.uint8(width - 1)
        bits = code.astype(np.uint8) | sign
        ovf_bits = np.where(neg, np.uint8(_FACTS[dst].overflow_code(sat, True)),
                            np.uint8(_FACTS[dst].overflow_code(sat, False)))
    else:
        _, _, _, _, maxc, infc = _BINARY[dst]
        overflow = code >= _U64(infc)
        bits_dtype = _BITS_DTYPE[width]
        sign_bit = (neg & (a != 0)).astype(bits_dtype) << bits_dtype(width - 1)
        bits = np.minimum(code, _U64(infc)).astype(bits_dtype) | sign_bit
        ovf_bits = sign_bit | bits_dtype(maxc if sat else infc)
    if np.any(overflow):
        _check_finite_chunk(v)
        bits = np.where(overflow, ovf_bits, bits)
        flags = np.where(overflow, np.uint8(_OF_NX), flags)
    return bits, flags


_NATIVE = {t: (ftype, _FACTS[t].carrier.type, _FACTS[t].mask >> 1, _FACTS[t].overflow_code(False, False),
               _FACTS[t].largest[0], (_FACTS[t].emin + 1023) << 52)  # binary64 bits of 2^emin
           for t, ftype in ((T.FP16, np.float16), (T.FP32, np.float32))}


def _native_rne_fast(v: np.ndarray, dst: TileDataType, sat: bool) -> Tuple[np.ndarray, np.ndarray]:
    """FP16/FP32 under RNE: numpy's float64 -> float16/float32 casts round once, to
    nearest-even, with gradual underflow -- the ASL result except for the sign of an
    exact zero and the Sat rule, fixed here; flags come from the exact round trip.

    (Under RNE the ASL's overflow-before-rounding coincides with IEEE overflow:
    every value with an exponent above the maximum also rounds to infinity.)
    """
    ftype, utype, absmask, infc, maxc, min_normal_bits = _NATIVE[dst]
    with np.errstate(over="ignore", invalid="ignore"):
        r = v.astype(ftype)
    bits = r.view(utype)
    inexact = r.astype(np.float64) != v
    tiny = (v.view(_U64) & _ABS_MASK) < _U64(min_normal_bits)
    flags = inexact.astype(np.uint8) << np.uint8(_NX_SHIFT)
    flags |= (inexact & tiny).astype(np.uint8) << np.uint8(_UF_SHIFT)
    bits = np.where(v == 0.0, utype(0), bits)  # an exact zero has no sign
    overflow = (bits & utype(absmask)) >= utype(infc)
    if np.any(overflow):
        _check_finite_chunk(v)
        if sat:
            bits = np.where(overflow, (bits & ~utype(absmask)) | utype(maxc), bits)
        flags = np.where(overflow, np.uint8(_OF_NX), flags)
    return bits, flags


# HiF8 per-binade tables (ptonum.tables), indexed by (exponent + 23) for exponents -23..17.
_HIF8_MBITS = tables.HIF8_MBITS
_HIF8_BASE = tables.HIF8_BASE
_HIF8_PARFLIP = tables.HIF8_PARFLIP


def _hif8_fast(v: np.ndarray, mode: RoundingMode, sat: bool) -> Tuple[np.ndarray, np.ndarray]:
    b = v.view(_U64)
    a = b & _ABS_MASK
    neg = b > _ABS_MASK
    big_e = a >> _U64(52)
    # exponent clamped to the table range; values below 2^-22 share the 2^-22 quantum
    ecl = np.clip(big_e.astype(np.int64) - 1023, -23, 16)
    idx = ecl + 23
    mb = _HIF8_MBITS[idx]
    # quantum exponent: e - mb (e >= -22), or -22 below 2^-22; shift = quantum - lsb exponent
    lsb_e = np.maximum(big_e, _U64(1)).astype(np.int64) - 1075
    q_e = np.maximum(ecl, -22) - mb.astype(np.int64)
    shift = np.clip(q_e - lsb_e, 0, 55).astype(_U64)  # < 0 only for overflowing inputs
    sig = (a & _MANT_MASK) | np.where(big_e > 0, _HIDDEN, _U64(0))
    k = sig >> shift
    rem = sig & ((_U64(1) << shift) - _U64(1))
    half = (_U64(1) << shift) >> _U64(1)
    up = _round_up(mode, rem, half, neg, (k ^ _HIF8_PARFLIP[idx]) & _U64(1))
    n = k + up
    carry = n >> (mb + _U64(1))
    e_res = np.maximum(ecl, -22) + carry.astype(np.int64)
    mant = n & ((_U64(1) << mb) - _U64(1))
    body = np.where(n == 0, np.uint8(0), _HIF8_BASE.take(e_res + 23, mode="clip") + mant.astype(np.uint8))
    bits = body | ((neg & (n != 0)).astype(np.uint8) << np.uint8(7))
    inexact = rem != 0
    flags = np.where(inexact, np.uint8(_NX), np.uint8(0))
    flags |= (inexact & (big_e < _U64(1023 + _FACTS[T.HiF8].emin))).astype(np.uint8) << np.uint8(_UF_SHIFT)
    overflow = a > _U64(_LARGEST_BITS[T.HiF8])  # |v| > 32768
    if np.any(overflow):
        _check_finite_chunk(v)
        ovf = np.where(neg, np.uint8(_FACTS[T.HiF8].overflow_code(sat, True)),
                       np.uint8(_FACTS[T.HiF8].overflow_code(sat, False)))
        bits = np.where(overflow, ovf, bits)
        flags = np.where(overflow, np.uint8(_OF_NX), flags)
    return bits, flags


def _integer_fast(v: np.ndarray, dst: TileDataType, mode: RoundingMode, sat: bool) -> Tuple[np.ndarray, np.ndarray]:
    lo, hi, width = _INT_RANGE[dst]
    r = round_to_integer_array(v, mode)
    overflow = ~((r >= lo) & (r <= hi))  # NaN counts as out of range (then rejected)
    flags = np.where(r != v, np.uint8(_NX), np.uint8(0))
    mask = (1 << width) - 1
    bits_dtype = _BITS_DTYPE[width]
    if np.any(overflow):
        _check_finite_chunk(v)
        flags = np.where(overflow, np.uint8(_OF_NX), flags)
        if sat:
            r = np.clip(r, lo, hi)
        else:
            # wrap modulo 2^N: fmod is exact, and the residue fits in int64
            r = np.where(overflow, np.fmod(r, float(1 << 32)), r)
    ints = r.astype(np.int64)
    bits = (ints & mask).astype(bits_dtype)
    return bits, flags


def encode_fast(values: Any, dst_type: object, rmode: object, sat: object) -> Tuple[np.ndarray, np.ndarray]:
    """Vectorized :func:`encode_reference` over float64 values (fast engine).

    ``values``: array-like of finite float64 values, each taken as the exact
    real it represents (any shape; integer arrays are accepted when exactly
    representable).  Returns ``(bits, flags)`` arrays of the input's shape:
    ``bits`` uint8 (S4X2 nibble, S8, E4M3, HiF8), uint16 (S16, FP16, BF16) or
    uint32 (S32, U32, FP32); ``flags`` uint8.  Bits and flags are identical
    to :func:`encode_reference` for every finite float64 input.

    Raises :class:`UsageError` for a bad destination, rmode NONE, a
    non-boolean ``sat``, a non-real dtype or a NaN/Inf element (naming its index).

    Source: ADR-0085 D177/D178; ``MatrixEncodeReal`` (see :func:`encode_reference`).
    """
    dst = _check_destination(dst_type)
    mode = check_resolved_mode(rmode)
    s = check_bool("sat", sat)
    v = _as_float64(values)
    return shaped(np.shape(values) if v.size == 1 else v.shape, *encode_array(v, dst, mode, s))  # type: ignore[return-value]


def encode_array(v: np.ndarray, dst: TileDataType, mode: RoundingMode, sat: bool) -> Tuple[np.ndarray, np.ndarray]:
    """:func:`encode_fast` on checked arguments: the typed entry of the fast engine.

    ``v`` a C-contiguous float64 ndarray (any shape), ``dst`` a B.FPATR destination
    :class:`TileDataType`, ``mode`` a resolved :class:`RoundingMode` (not NONE) and
    ``sat`` a bool; nothing is parsed or checked here (the public caller did it once),
    except that a NaN/Inf element raises :class:`UsageError` naming its index.
    Returns ``(bits, flags)`` as :func:`encode_fast`.

    Source: ADR-0085 D177/D178; ``MatrixEncodeReal``.
    """
    if engines.select("fast", v.size) == "numba":  # compiled kernel; numpy below is the fallback
        kb, kf, bad = engines.encode_values(v, dst, int(mode), sat)
        if bad >= 0:
            _raise_nonfinite(v)
        return kb.reshape(v.shape), kf.reshape(v.shape)
    if dst in _INT_RANGE:
        return _chunked(v, _BITS_DTYPE[_WIDTH[dst]], lambda c: _integer_fast(c, dst, mode, sat))
    if dst is T.HiF8:
        return _chunked(v, np.uint8, lambda c: _hif8_fast(c, mode, sat))
    if dst in _NATIVE and mode is RoundingMode.RNE:
        return _chunked(v, _BITS_DTYPE[_WIDTH[dst]], lambda c: _native_rne_fast(c, dst, sat))
    return _chunked(v, _BITS_DTYPE[_WIDTH[dst]], lambda c: _binary_fast(c, dst, mode, sat))


def round_and_saturate_signed_fast(values: Any, width: int, rmode: object) -> Tuple[np.ndarray, np.ndarray]:
    """Vectorized :func:`round_and_saturate_signed_reference` over float64 values.

    Returns ``(int64 array, uint8 flags)`` with the input's shape.

    Raises :class:`UsageError` for another width, rmode NONE, a non-real dtype
    or a NaN/Inf element.

    Source: ADR-0085 D177; ``MatrixRoundAndSaturateSigned``.
    """
    return round_and_saturate_signed_array(_as_float64(values), _check_width(width), check_resolved_mode(rmode))


def round_and_saturate_signed_array(v: np.ndarray, width: int, mode: RoundingMode
                                    ) -> Tuple[np.ndarray, np.ndarray]:
    """:func:`round_and_saturate_signed_fast` on checked arguments: ``v`` a float64 ndarray,
    ``width`` 5, 9 or 17, ``mode`` a resolved :class:`RoundingMode`; nothing is checked here
    except that a NaN/Inf element raises :class:`UsageError`.

    Source: ADR-0085 D177; ``MatrixRoundAndSaturateSigned``.
    """
    lo, hi = _SIGNED_RANGE[width]

    def kernel(c: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        r = round_to_integer_array(c, mode)
        overflow = ~((r >= lo) & (r <= hi))  # NaN counts as out of range (then rejected)
        flags = np.where(r != c, np.uint8(_NX), np.uint8(0))
        if np.any(overflow):
            _check_finite_chunk(c)
            flags = np.where(overflow, np.uint8(_OF_NX), flags)
            r = np.clip(r, lo, hi)
        return r.astype(np.int64), flags

    return _chunked(v, np.int64, kernel)


def encode(values: Any, dst_type: object, *, rmode: object = "RNE", sat: object = False,
           engine: Engine = "fast") -> Tuple[np.ndarray, np.ndarray]:
    """Encode exact real values in a B.FPATR destination type.

    ``values``: for ``engine="fast"`` an array-like of finite float64 values
    (each the exact real it represents); for ``engine="reference"`` the same,
    or Python ints / :class:`fractions.Fraction` (a scalar or a sequence).
    ``rmode``: name or B.DATR code; NONE resolves to RNE (the B.FPATR
    default).  ``sat``: the B.DATR Sat bit.

    Returns ``(bits, flags)`` numpy arrays with the input's shape (0-d for a
    scalar): bits uint8/uint16/uint32 at the destination width, flags uint8.

    Raises :class:`UsageError` for an unknown or non-destination type (e.g.
    FP64, E5M2), an unknown rounding mode, a non-boolean ``sat``, an unknown
    engine or a non-finite value.

    Source: ADR-0085 D177/D178; ``MatrixEncodeReal``.
    """
    eng = check_engine(engine)
    dst = _check_destination(dst_type)
    mode = parse_rounding_mode(rmode).resolved()  # type: ignore[arg-type]
    s = check_bool("sat", sat)
    if eng == "fast":
        v = _as_float64(values)  # 1-D for a scalar (np.ascontiguousarray): the result takes the input's shape
        return shaped(np.shape(values) if v.size == 1 else v.shape, *encode_array(v, dst, mode, s))  # type: ignore[return-value]
    bits_dtype = _BITS_DTYPE[_WIDTH[dst]]
    if isinstance(values, (int, Fraction, float, np.integer, np.floating)) and not isinstance(values, bool):
        b, f = _encode_exact(values, dst, mode, s)
        return np.asarray(b, dtype=bits_dtype), np.asarray(f, dtype=np.uint8)
    arr = np.asarray(unmasked("values", values))
    if arr.dtype.kind not in "fiuO":
        raise UsageError(f"values: expected real values, got dtype {arr.dtype}")
    flat = arr.ravel()
    bits = np.empty(flat.shape, dtype=bits_dtype)
    flags = np.empty(flat.shape, dtype=np.uint8)
    for i, x in enumerate(flat.tolist()):
        try:
            bits[i], flags[i] = _encode_exact(x, dst, mode, s)
        except UsageError as exc:
            idx = np.unravel_index(i, arr.shape) if arr.ndim else ()
            raise UsageError(f"values[{', '.join(map(str, idx))}]: {exc}") from None
    return bits.reshape(arr.shape), flags.reshape(arr.shape)
