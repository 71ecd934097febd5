"""Rounding modes (B.DATR RMode) and exact rounding of real values to integers.

Source: pto-spec ``asl/arch/data-types/rounding.asl`` (``NumericRoundingMode``),
ADR-0047 (the meaning of each mode), ``asl/scalar/model/fsu/arithmetic.asl``
(``FloatingToInteger``) with the reference-profile override of
``FloatingRoundNearest`` (ties to even, ``asl/arch/profile/reference-profile.asl``),
and ``asl/arch/profile/matrix-quantization.asl`` (``MatrixRoundMagnitude``).
"""

from __future__ import annotations

import enum
from typing import Union

from .errors import UsageError

__all__ = ["RoundingMode", "parse_rounding_mode"]


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

RoundingModeLike = Union[RoundingMode, int, str]


def parse_rounding_mode(value: RoundingModeLike, name: str = "rmode") -> RoundingMode:
    """Accept a :class:`RoundingMode`, its B.DATR code (0-7) or its name (any case).

    Raises :class:`UsageError` naming ``name`` and the value otherwise.
    """
    if isinstance(value, RoundingMode):
        return value
    if isinstance(value, bool):
        raise UsageError(f"{name} = {value!r}: expected a rounding mode name or B.DATR RMode code 0-7")
    if isinstance(value, int) or (hasattr(value, "dtype") and getattr(value, "dtype").kind in "iu"):
        iv = int(value)  # type: ignore[arg-type]
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
