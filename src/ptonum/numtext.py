"""Numbers written as text: a decimal is rounded once, exactly, from its decimal value.

Reading ``1.0039063`` as a Python float first and converting that float to BF16 rounds twice
(decimal -> binary64 -> BF16) and can land on the other side of a BF16 midpoint.  Here the text
becomes an exact :class:`fractions.Fraction` and is rounded once to the target binary format,
round to nearest, ties to even (IEEE 754 roundTiesToEven, the rounding of a decimal conversion;
overflow goes to infinity).

Formats: FP64 (11/52), FP32 (8/23), TF32/HF32 are not offered, FP16 (5/10), BF16 (8/7) and FP19
(8/10, the B.FPATR scale format of ``fp19.asl``).

Source: ADR-0085 D182 (the format descriptors of FP32, FP16, BF16; ``formats/*.asl``) and D177
(FP19, ``fp19.asl``); the rounding is IEEE 754-2019 5.12.2 (conversion from a decimal string).
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from typing import Dict, NamedTuple, Optional, Tuple, Union

from ._util import digits_int
from .errors import UsageError

__all__ = ["BinaryFormat", "BINARY_FORMATS", "parse_real", "round_to_format", "decimal_to_bits", "is_decimal_text",
           "names_value"]


class BinaryFormat(NamedTuple):
    """An IEEE-style binary format: exponent and fraction widths (bias 2**(e-1) - 1, Inf/NaN at the top
    exponent), and the canonical quiet NaN encoding used for the text ``nan``."""

    name: str
    exponent_bits: int
    fraction_bits: int
    quiet_nan: int

    @property
    def width(self) -> int:
        return 1 + self.exponent_bits + self.fraction_bits


#: the formats a decimal may be rounded to, by name
BINARY_FORMATS: Dict[str, BinaryFormat] = {
    "FP64": BinaryFormat("FP64", 11, 52, 0x7FF8000000000000),
    "FP32": BinaryFormat("FP32", 8, 23, 0x7FC00000),
    "FP16": BinaryFormat("FP16", 5, 10, 0x7E00),
    "BF16": BinaryFormat("BF16", 8, 7, 0x7FC0),
    # FP19's NaN is the one FP32ToFP19 gives every FP32 NaN (``fp19.CANONICAL_NAN``; sign bit 18 clear)
    "FP19": BinaryFormat("FP19", 8, 10, 0x3FF00),
}

#: the decimal grammar: ASCII digits, an optional sign, point and exponent; no digit separators (``1_000``)
#: and no other scripts' digits (``'٣'``), which Python's own ``float``/``Fraction`` would read
_NUMBER = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?", re.ASCII)
_SPECIAL = re.compile(r"([+-]?)(inf|infinity|nan)", re.IGNORECASE | re.ASCII)


def is_decimal_text(text: str) -> bool:
    """True for a decimal number (``-1.5``, ``2e-3``, ``.25``, ``7``) or ``inf``/``nan`` text."""
    t = text.strip()
    return bool(_NUMBER.fullmatch(t) or _SPECIAL.fullmatch(t))


def parse_real(text: str, name: str) -> Union[Fraction, float]:
    """The exact value of a decimal (a :class:`Fraction`; ``-0`` as the float ``-0.0``), or ``±inf``/``nan``
    as floats.  The grammar: ``[+-]`` digits ``[.digits]`` ``[e[+-]digits]`` (or ``.digits``) in ASCII
    digits 0-9, and ``inf``/``infinity``/``nan`` in any case, surrounding blanks ignored.  Raises
    :class:`UsageError` naming ``name`` for anything else (digit separators ``1_000``, other scripts'
    digits ``'٣'``, hex floats)."""
    t = text.strip()
    sp = _SPECIAL.fullmatch(t)
    if sp:
        kind = sp.group(2).lower()
        if kind == "nan":  # the sign is kept (-nan: the format's NaN with its sign bit set)
            return -math.nan if sp.group(1) == "-" else math.nan
        return float("-inf") if sp.group(1) == "-" else float("inf")
    if not _NUMBER.fullmatch(t):
        raise UsageError(f"{name} = {text!r}: not a decimal number: write ASCII digits 0-9 with an optional sign, "
                         "point and exponent, no digit separators (e.g. 1.5, -2e-3, .25, 1000), or inf/nan")
    far = _far_magnitude(t)
    if far is not None:
        return far
    mantissa, _, exp_text = t.lstrip("+-").lower().partition("e")
    whole, _, frac = mantissa.partition(".")
    digits = (whole + frac).lstrip("0")
    if not digits:  # zero, whatever its exponent
        return -0.0 if t.startswith("-") else Fraction(0)
    # not far: the exponent is small (see _far_magnitude); Fraction(t) would refuse > 4300 digits
    exp10 = _exponent(exp_text) - len(frac)
    v = Fraction(digits_int(digits) * 10 ** max(exp10, 0), 10 ** max(-exp10, 0))
    return -v if t.startswith("-") else v


#: decimal orders of magnitude beyond which every supported format (FP64 included) rounds to
#: infinity (above) or to zero (below), whatever the digits
_FAR_ABOVE, _FAR_BELOW = 400, -400


def _exponent(text: str) -> int:
    """The decimal exponent written after ``e`` (0 when there is none), capped at +-10**18 (an
    exponent of more digits is far beyond every format either way; ``int`` would refuse more than
    4300 digits)."""
    magnitude = text.lstrip("+-").lstrip("0")
    value = 10 ** 18 if len(magnitude) > 18 else int(magnitude or "0")
    return -value if text.startswith("-") else value


def _far_magnitude(t: str) -> Optional[Fraction]:
    """For a decimal whose magnitude is below 10**-400 or at least 10**400, a stand-in of the same
    sign and side (``±10**±400``) that every format in :data:`BINARY_FORMATS` rounds exactly as the
    decimal itself (to zero or infinity, inexact), so that text such as ``1e99999999`` is never
    expanded into a huge integer; ``None`` for anything else (including zero)."""
    negative = t.startswith("-")
    body = t.lstrip("+-")
    mantissa, _, exp_text = body.lower().partition("e")
    exp10 = _exponent(exp_text)
    whole, _, frac = mantissa.partition(".")
    digits = (whole + frac).lstrip("0")
    if not digits:
        return None
    # the value is 0.DIGITS x 10**order, DIGITS starting with a nonzero digit
    order = exp10 + len(whole.lstrip("0")) if whole.lstrip("0") else exp10 - (len(frac) - len(frac.lstrip("0")))
    if order > _FAR_ABOVE:
        value = Fraction(10) ** _FAR_ABOVE
    elif order < _FAR_BELOW:
        value = Fraction(1, 10 ** -_FAR_BELOW)
    else:
        return None
    return -value if negative else value


def round_to_format(value: Union[Fraction, float], fmt: BinaryFormat) -> Tuple[int, bool]:
    """``value`` rounded once to ``fmt`` (nearest, ties to even; overflow to infinity): (encoding, exact).

    ``value`` is an exact :class:`Fraction` (or int), or a float ``±inf``/``nan``/``-0.0``.
    """
    e_bits, f_bits = fmt.exponent_bits, fmt.fraction_bits
    sign_bit = 1 << (e_bits + f_bits)
    inf = ((1 << e_bits) - 1) << f_bits
    if isinstance(value, float):
        if value != value:
            return fmt.quiet_nan | (sign_bit if math.copysign(1.0, value) < 0 else 0), True
        if value in (float("inf"), float("-inf")):
            return (sign_bit if value < 0 else 0) | inf, True
        value = Fraction(value)
        if value == 0:
            return sign_bit, True  # -0.0 (a +0.0 float never reaches here from parse_real)
    v = Fraction(value)
    sign = sign_bit if v < 0 else 0
    a = abs(v)
    if a == 0:
        return sign, True
    bias = (1 << (e_bits - 1)) - 1
    emin = 1 - bias
    e = a.numerator.bit_length() - a.denominator.bit_length()  # 2**e <= a < 2**(e+2)
    if Fraction(2) ** e > a:
        e -= 1
    elif Fraction(2) ** (e + 1) <= a:
        e += 1
    e = max(e, emin)
    scaled = a / Fraction(2) ** (e - f_bits)  # significand in units of the quantum
    n = scaled.numerator // scaled.denominator
    rem = scaled - n
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and n % 2 == 1):
        n += 1
    exact = rem == 0
    if n >= 1 << (f_bits + 1):  # carry into the next binade
        n >>= 1
        e += 1
    if n < 1 << f_bits:  # subnormal (e == emin) or zero after rounding
        return sign | n, exact
    biased = e + bias
    if biased >= (1 << e_bits) - 1:
        return sign | inf, False
    return sign | (biased << f_bits) | (n - (1 << f_bits)), exact


def decimal_to_bits(text: str, fmt: Union[str, BinaryFormat], name: str) -> Tuple[int, bool]:
    """A decimal (or ``inf``/``nan``) written as text, rounded once to ``fmt``: (encoding, exact).

    Raises :class:`UsageError` naming ``name`` for text that is not a number or an unknown format.
    """
    f = _format(fmt)
    return round_to_format(parse_real(text, name), f)


def _format(fmt: Union[str, BinaryFormat, object]) -> BinaryFormat:
    if isinstance(fmt, BinaryFormat):
        return fmt
    key: Optional[str] = getattr(fmt, "name", None) if not isinstance(fmt, str) else fmt
    if key is None or key.upper() not in BINARY_FORMATS:
        raise UsageError(f"format {fmt!r}: decimals are rounded to {', '.join(BINARY_FORMATS)} only")
    return BINARY_FORMATS[key.upper()]


def names_value(decimal: Fraction, value: float) -> bool:
    """Does ``decimal`` name the binary ``value`` exactly: equal to it, or equal to the way Python
    prints it (the shortest decimal that reads back as that binary64, e.g. ``0.0011072158813476562``
    for 0.00110721588134765625)?  A value copied from ptonum's or numpy's output is then accepted
    where an exact value is required."""
    if value != value or value in (float("inf"), float("-inf")):
        return False
    return Fraction(value) == decimal or Fraction(repr(float(value))) == decimal
