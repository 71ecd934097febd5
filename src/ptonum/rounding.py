"""Rounding modes (B.DATR RMode) and exact rounding of real values to integers.

Source: pto-spec ``asl/arch/data-types/rounding.asl`` (``NumericRoundingMode``),
ADR-0047 (the meaning of each mode), ``asl/scalar/model/fsu/arithmetic.asl``
(``FloatingToInteger``) with the reference-profile override of
``FloatingRoundNearest`` (ties to even, ``asl/arch/profile/reference-profile.asl``),
and ``asl/arch/profile/matrix-quantization.asl`` (``MatrixRoundMagnitude``).
"""

from __future__ import annotations

import enum
import math
from fractions import Fraction
from typing import Union

import numpy as np

from ._util import scalar_int, unmasked
from .errors import UsageError

__all__ = [
    "RoundingMode",
    "parse_rounding_mode",
    "check_resolved_mode",
    "as_exact",
    "round_to_integer",
    "round_ratio",
    "round_magnitude",
    "round_magnitude_ratio",
    "magnitude_rounding_mode",
    "round_to_integer_array",
    "RNE", "RTZ", "RTM", "RTP", "RNA", "RTO", "RHB",
]


class RoundingMode(enum.IntEnum):
    """B.DATR RMode codes (``DecodeBundleRoundingSelection``).

    ``NONE`` (0) is resolved per operation (RNE for B.FPATR and TCVT to E8M0).
    ``RHB`` is nearest with exact ties to the numerically greater value.
    """

    NONE = 0
    RNE = 1  #: nearest, ties to even
    RTZ = 2  #: toward zero
    RTM = 3  #: toward minus infinity (RDN)
    RTP = 4  #: toward plus infinity (RUP)
    RNA = 5  #: nearest, ties away from zero
    RTO = 6  #: to odd: if inexact, the neighbour whose last retained bit is one
    RHB = 7  #: nearest, ties to the numerically greater value

    def resolved(self, default: "RoundingMode | None" = None) -> "RoundingMode":
        """``NONE`` becomes ``default`` (RNE unless given); other modes are unchanged."""
        if self is RoundingMode.NONE:
            return default if default is not None else RoundingMode.RNE
        return self


_ALIASES = {"RDN": RoundingMode.RTM, "RUP": RoundingMode.RTP, "RNONE": RoundingMode.NONE}

# Rounding-mode members as module constants, for the per-element steps of the reference engines
# (here, in encode and in tcvt): an Enum class-attribute lookup costs more than the integer work of
# a reference step (Python 3.11).  Module globals look up as fast as locals' neighbours.
RNE = RoundingMode.RNE
RTZ = RoundingMode.RTZ
RTM = RoundingMode.RTM
RTP = RoundingMode.RTP
RNA = RoundingMode.RNA
RTO = RoundingMode.RTO
RHB = RoundingMode.RHB

RoundingModeLike = Union[RoundingMode, int, str]


def parse_rounding_mode(value: RoundingModeLike, name: str = "rmode") -> RoundingMode:
    """Accept a :class:`RoundingMode`, its B.DATR code (0-7) or its name (any case).

    Raises :class:`UsageError` naming ``name`` and the value otherwise.

    Source: ADR-0047 (the modes); ``DecodeBundleRoundingSelection``
    (``asl/scalar/model/fsu/arithmetic.asl``).
    """
    if isinstance(value, RoundingMode):
        return value
    iv = scalar_int(value)
    if iv is not None:
        if 0 <= iv <= 7:
            return RoundingMode(iv)
        raise UsageError(f"{name} = {iv}: B.DATR RMode codes are 0-7")
    if isinstance(value, str):
        key = value.strip().upper()
        if key in RoundingMode.__members__:
            return RoundingMode[key]
        if key in _ALIASES:
            return _ALIASES[key]
        raise UsageError(
            f"{name} = {value!r}: expected one of {', '.join(RoundingMode.__members__)} (or RDN/RUP)"
        )
    raise UsageError(f"{name} = {value!r}: expected a rounding mode name or B.DATR RMode code 0-7")


# ---------------------------------------------------------------------------
# Exact rounding of real values to integers
# ---------------------------------------------------------------------------

ExactReal = Union[Fraction, int]


def check_resolved_mode(mode: object, name: str = "rmode") -> RoundingMode:
    """Return ``mode`` as a resolved :class:`RoundingMode` (RNE..RHB).

    Internal numeric functions receive an already-resolved mode; ``NONE`` (and
    anything that is not a rounding mode) raises :class:`UsageError`.

    Source: ADR-0085 D178; ``MatrixFPATREffectiveControl`` (NONE resolved before rounding).
    """
    m = parse_rounding_mode(mode, name)  # type: ignore[arg-type,unused-ignore]
    if m is RoundingMode.NONE:
        raise UsageError(
            f"{name} = NONE: the operation default must be resolved before rounding "
            "(B.FPATR and TCVT to E8M0 resolve NONE to RNE; ADR-0085 D178, MatrixFPATREffectiveControl)"
        )
    return m


def as_exact(value: object, name: str = "value") -> Fraction:
    """An exact real as a :class:`fractions.Fraction`.

    Accepts ``int`` / numpy integers, :class:`fractions.Fraction` and finite
    ``float`` / numpy floats (taken exactly: every finite binary64 value is a
    dyadic rational).

    Raises :class:`UsageError` naming ``name`` and the value for a boolean, a
    NaN/Inf (a NaN/Inf source never reaches rounding or encoding: B.FPATR
    gives it a fixed result first, ``MatrixPostQuantSpecialValue``) or anything
    else.

    Source: ADR-0085 D177/D178 (the real values ``FloatingToInteger`` and
    ``MatrixEncodeReal`` take; ``asl/arch/profile/matrix-postprocess.asl``).
    """
    if type(value) is Fraction:  # the common case inside the reference engine, checked first
        return value
    if isinstance(value, (bool, np.bool_)):
        raise UsageError(f"{name} = {value!r}: expected an exact real (int or Fraction), got a boolean")
    if isinstance(value, (int, np.integer)):
        return Fraction(int(value))
    if isinstance(value, Fraction):
        return value
    if isinstance(value, (float, np.floating)):
        f = float(value)
        if not math.isfinite(f):
            raise UsageError(
                f"{name} = {f!r}: expected a finite real value "
                "(NaN/Inf sources are handled before rounding, by MatrixPostQuantSpecialValue)"
            )
        return Fraction(f)
    raise UsageError(f"{name} = {value!r}: expected an exact real (int, Fraction or finite float)")


def round_to_integer(value: ExactReal, mode: RoundingMode) -> int:
    """Round an exact real to an integer under ``mode``, on the *signed* value.

    RNE: nearest, ties to even (the reference-profile ``FloatingRoundNearest``);
    RTP: ceiling; RTM: floor; RTZ: truncation; RNA: nearest, ties away from
    zero; RTO: the value itself when it is an integer, else whichever of
    floor/floor+1 is odd; RHB: nearest, ties to floor+1 (toward +inf).

    ``value``: ``int``, :class:`fractions.Fraction` or a finite ``float`` (taken
    exactly).  Returns a Python ``int`` (unbounded).

    Raises :class:`UsageError` for ``mode`` NONE (unresolved) or a bad value.

    Source: ADR-0047 (mode meanings, applied by ADR-0085 D178);
    ``FloatingToInteger`` (``asl/scalar/model/fsu/arithmetic.asl``) with the
    ``FloatingRoundNearest`` override of ``asl/arch/profile/reference-profile.asl``.
    """
    m = check_resolved_mode(mode)
    if type(value) is int:
        return value  # an integer rounds to itself in every mode
    v = as_exact(value)
    return round_ratio(v.numerator, v.denominator, m)


def round_ratio(num: int, den: int, mode: RoundingMode) -> int:
    """:func:`round_to_integer` of the exact real ``num / den`` (Python ints, ``den > 0``).

    The reference engines' per-element form: the real travels as two integers (not
    necessarily in lowest terms; every value B.FPATR forms is dyadic, so ``den`` is a power
    of two) and ``mode`` must already be a resolved :class:`RoundingMode` -- nothing is
    checked here.  Exact integer arithmetic: the floor and the remainder of the division
    decide everything; the fraction part ``rem / den`` is compared with one half as
    ``2 * rem`` against ``den``.

    Source: ``FloatingToInteger`` (``asl/scalar/model/fsu/arithmetic.asl``) with the
    ``FloatingRoundNearest`` override of ``asl/arch/profile/reference-profile.asl``.
    """
    lower, rem = divmod(num, den)  # floor(v), and v - floor(v) = rem / den with 0 <= rem < den
    if rem == 0:
        return lower  # an integer: every mode returns it
    if mode is RTM:
        return lower
    if mode is RTP:
        return lower + 1
    if mode is RTZ:
        return lower if num > 0 else lower + 1
    if mode is RTO:
        return lower if lower % 2 != 0 else lower + 1
    twice = 2 * rem  # the fraction part compared with one half: 2*rem against den
    if twice < den:
        return lower
    if twice > den:
        return lower + 1
    # an exact tie
    if mode is RNE:
        return lower if lower % 2 == 0 else lower + 1
    if mode is RNA:
        return lower if num < 0 else lower + 1
    return lower + 1  # RHB: the numerically greater candidate


def magnitude_rounding_mode(mode: RoundingMode, negative: bool) -> RoundingMode:
    """The mode to apply to ``|value|`` so that it rounds like ``mode`` on the signed value.

    RTP and RTM swap for negative values; every other mode is unchanged (RHB on
    a negative magnitude is handled by :func:`round_magnitude`).

    Source: ``MatrixMagnitudeRoundingMode`` (``asl/arch/profile/matrix-quantization.asl``).
    """
    return _magnitude_mode(check_resolved_mode(mode), bool(negative))


def _magnitude_mode(mode: RoundingMode, negative: bool) -> RoundingMode:
    """``MatrixMagnitudeRoundingMode`` on a resolved mode (unchecked)."""
    if negative:
        if mode is RTP:
            return RTM
        if mode is RTM:
            return RTP
    return mode


def round_magnitude(value: ExactReal, mode: RoundingMode, negative: bool) -> int:
    """Round a non-negative magnitude ``value`` of a real whose sign is ``negative``.

    Equivalent to rounding the signed value and taking the magnitude: RTP/RTM
    swap for negative values, and RHB on a negative value sends an exact
    halfway magnitude *down* (the numerically greater signed candidate).

    Raises :class:`UsageError` for ``mode`` NONE or a bad value.

    Source: ADR-0085 D178; ``MatrixRoundMagnitude`` and
    ``MatrixMagnitudeRoundingMode`` (``asl/arch/profile/matrix-quantization.asl``).
    """
    m = check_resolved_mode(mode)
    v = as_exact(value)
    return round_magnitude_ratio(v.numerator, v.denominator, m, bool(negative))


def round_magnitude_ratio(num: int, den: int, mode: RoundingMode, negative: bool) -> int:
    """:func:`round_magnitude` of the exact magnitude ``num / den`` (Python ints, ``den > 0``).

    Unchecked per-element form, as :func:`round_ratio`: ``mode`` is a resolved
    :class:`RoundingMode`.

    Source: ``MatrixRoundMagnitude`` and ``MatrixMagnitudeRoundingMode``
    (``asl/arch/profile/matrix-quantization.asl``).
    """
    if negative and mode is RHB:  # an exact halfway magnitude goes down: the greater signed candidate
        lower, rem = divmod(num, den)
        return lower if 2 * rem <= den else lower + 1
    return round_ratio(num, den, _magnitude_mode(mode, negative))


def round_to_integer_array(values: "np.ndarray", mode: RoundingMode) -> "np.ndarray":
    """Vectorized :func:`round_to_integer` on float64 values.

    ``values``: array-like of finite float64 (any shape).  Returns a float64
    array of the same shape holding the rounded integers; exact for every
    finite float64 input (integers at or beyond 2^52 are returned unchanged).
    The RNE case uses ``np.rint`` (IEEE round-half-even, exact); the other
    modes use floor and an exact fraction comparison (``v - floor(v)`` is
    exact in binary64).  NaN/inf propagate unchanged.

    Raises :class:`UsageError` for ``mode`` NONE.

    Source: ``FloatingToInteger`` (see :func:`round_to_integer`).
    """
    m = check_resolved_mode(mode)
    values = unmasked("values", values)
    try:
        v = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise UsageError(f"values: expected real float64 values ({exc})") from None
    if m is RoundingMode.RNE:
        return np.rint(v)
    if m is RoundingMode.RTM:
        return np.floor(v)
    if m is RoundingMode.RTP:
        return np.ceil(v)
    if m is RoundingMode.RTZ:
        return np.trunc(v)
    lower = np.floor(v)
    frac = v - lower
    if m is RoundingMode.RNA:
        up = (frac > 0.5) | ((frac == 0.5) & (v > 0))
    elif m is RoundingMode.RHB:
        up = frac >= 0.5
    else:  # RTO
        with np.errstate(invalid="ignore"):  # fmod(inf) for non-finite inputs
            up = (frac != 0) & (np.fmod(lower, 2.0) == 0)
    return lower + up
