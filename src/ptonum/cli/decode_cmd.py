"""``ptonum decode``: value class and exact finite decomposition of raw encodings.

Source: ADR-0085 decision 182; ASL ``TileNumericValueClass`` and
``TileNumericFiniteDecomposition`` (``asl/arch/data-types/numeric-formats.asl``,
``asl/arch/features/mx-formats.asl``, ``formats/*.asl``).
"""

from __future__ import annotations

from decimal import Context, Decimal
from fractions import Fraction
from typing import List, Optional, Tuple, Union

import rich_click as click

from .._util import int_text, is_digits
from ..errors import UsageError
from ._common import ASCII_INT, RMODE_HELP, decimal_in_format, errors_to_exit, parse_rmode
from ..formats import (TileDataType, ValueClass, carrier_bits, decompose, descriptor, lanes_per_carrier, parse_data_type,
                       value_class)

_MAX_EXACT_DECIMAL = 60  # characters; longer exact expansions are shown rounded


def parse_code(text: str) -> int:
    """Read a raw encoding written as ``0x..`` (hex), ``0b..`` (binary), ``0o..`` (octal) or decimal.

    ASCII digits only, no separators (:func:`ptonum._util.int_text`, the rule of every integer the
    command line reads).  Raises :class:`UsageError` naming the code otherwise (negative numbers included).
    """
    try:
        code = int_text(text)
    except ValueError:
        code = -1
    if code < 0:
        raise UsageError(
            f"CODE {text!r}: not a non-negative integer (write 0x.. hex, 0b.. binary, 0o.. octal or decimal, "
            "ASCII digits without separators)")
    return code


def _parse_type(text: str) -> TileDataType:
    raw = text.strip()
    return parse_data_type(int(raw) if is_digits(raw) else raw, "TYPE")


def _fraction_text(negative: bool, significand: int, exponent: int) -> str:
    """The exact value as ``n`` or ``n/d`` (``n/2^k`` when ``d`` would be very long)."""
    sign = "-" if negative else ""
    if significand == 0:
        return f"{sign}0"
    if exponent >= 0:
        value = significand << exponent
        text = str(value)
        return f"{sign}{text}" if len(text) <= 40 else f"{sign}{significand}*2^{exponent}"
    shift = min(-exponent, (significand & -significand).bit_length() - 1)
    n, k = significand >> shift, -exponent - shift
    if k == 0:
        return f"{sign}{n}"
    d = 1 << k
    return f"{sign}{n}/{d}" if len(str(d)) <= 30 else f"{sign}{n}/2^{k}"


def _decimal_text(negative: bool, significand: int, exponent: int) -> str:
    """The exact decimal expansion (finite for a dyadic value), or 17 significant digits marked ``≈``."""
    sign = "-" if negative else ""
    if significand == 0:
        return f"{sign}0"
    if exponent >= 0:
        exact = str(significand << exponent)
    else:
        k = -exponent
        digits = str(significand * 5 ** k).rjust(k + 1, "0")
        exact = (digits[:-k] + "." + digits[-k:]).rstrip("0").rstrip(".")
    if len(exact) <= _MAX_EXACT_DECIMAL:
        return sign + exact
    rounded = Context(prec=17).plus(Decimal(exact))  # Decimal holds the exact digits; round once
    return f"≈ {sign}{rounded:.16e}"


def _integer_value(dt: TileDataType, code: int, lane: int) -> int:
    """The exact integer of an integer Tile DataType's ``code`` (lane ``lane`` of an X2 carrier), two's
    complement for the signed types; in Python ints, so S64/U64 are exact too."""
    width = carrier_bits(dt) // lanes_per_carrier(dt)
    v = (code >> (lane * width)) & ((1 << width) - 1)
    return v - (1 << width) if dt.is_signed_integer and v >> (width - 1) else v


def _unavailable_sign(dt: TileDataType, code: int, lane: int) -> str:
    """The ``negative`` row of a value with no finite decomposition (Inf, NaN, invalid, integer types):
    what the encoding itself says, since the decomposition's own ``negative`` is just false there."""
    if dt.is_integer:
        return ("yes" if _integer_value(dt, code, lane) < 0 else "no") + " (integer value; no floating decomposition)"
    desc = descriptor(dt)
    if not desc.sign_bits:
        return f"no ({dt.name} has no sign bit; no finite decomposition)"
    bit = (code >> (lane * desc.lane_bits + desc.sign_bit)) & 1 if desc.lanes_per_carrier > 1 \
        else (code >> desc.sign_bit) & 1
    return f"{'yes' if bit else 'no'} (sign bit; no finite decomposition)"


#: what each flag means, for the --value rows
_FLAG_WORDS = (("NV", "invalid"), ("OF", "overflow"), ("UF", "underflow: tiny before rounding"),
               ("NX", "inexact"))


def _flags_text(flags: int) -> str:
    """``OF|NX (overflow, inexact)``, or ``- (exact)`` for no flag."""
    from ..flags import flag_names

    names = flag_names(flags)
    if names == "-":
        return "- (none: exact)"
    return f"{names} ({', '.join(word for name, word in _FLAG_WORDS if name in names.split('|'))})"


def _encode_decimal(dt: TileDataType, text: str, name: str, rmode: str, sat: bool,
                    lane: int) -> Tuple[int, List[Tuple[str, str]]]:
    """The encoding of the decimal ``text`` in ``dt`` and the rows saying how it was made: the rounding
    mode and Sat bit used and the exception flags of the conversion.

    A B.FPATR destination type (FP32, FP16, BF16, E4M3, HiF8, S4X2, S8, S16, S32, U32) takes the
    exact value through the library's one encoder, :func:`ptonum.encode.encode_reference`
    (``MatrixEncodeReal``: overflow, tininess before rounding, Sat), with ``rmode``/``sat``; ``inf``
    and ``nan`` take the fixed results of an FP32 Inf/quiet NaN source (``MatrixPostQuantSpecialValue``;
    NV only for a signaling NaN, which a decimal cannot spell) and ``-0`` the destination's negative
    zero (``MatrixFloatingSignedZero``).  FP64 is rounded once to nearest even
    (:func:`ptonum.numtext.round_to_format`, IEEE 754 decimal conversion), flags judged the same way.
    Raises :class:`UsageError` for another type (E8M0: the conversion to it is TCVT) or a bad decimal.

    Source: ADR-0085 D177/D178/D180; IEEE 754-2019 5.12.2 (FP64).
    """
    from ..encode import DESTINATIONS, encode_reference
    from ..numtext import parse_real
    from ..tables import DESTINATIONS as FACTS

    if dt.name == "E8M0":
        raise UsageError(f"{name}: E8M0 takes codes; a value reaches E8M0 by TCVT from FP16/BF16/FP32, with its "
                         "flags: ptonum tcvt --to E8M0 --values DECIMAL [--src-type T] [--rmode R] [--sat]")
    if dt not in DESTINATIONS and dt.name != "FP64":
        raise UsageError(f"{name}: {dt.name} takes codes; decimals are encoded in FP64 or a B.FPATR destination "
                         f"type ({', '.join(t.name for t in DESTINATIONS)})")
    if dt.name == "FP64":
        bits, _, flags = decimal_in_format(text, "FP64", name)  # a bad decimal is named before a bad --rmode
        if parse_rmode(rmode, "--rmode").resolved().name != "RNE" or sat:
            raise UsageError(f"{name}: FP64 is not a B.FPATR destination; a decimal is rounded to it to nearest "
                             "even only (no --rmode other than RNE/NONE, no --sat)")
        return bits, [("rounding", "RNE (decimal to FP64, IEEE 754)"), ("flags", _flags_text(flags))]
    value: Union[Fraction, float] = parse_real(text, name)
    mode = parse_rmode(rmode, "--rmode").resolved()
    facts = FACTS[dt]
    how = f"{mode.name}, Sat={int(sat)}"
    special: Optional[str] = None
    if isinstance(value, float):
        if value != value:
            special = "QuietNaN"
        elif value in (float("inf"), float("-inf")):
            special = "PositiveInfinity" if value > 0 else "NegativeInfinity"
    if special is not None:
        bits, flags = facts.special_value_result(special, sat)
        how += f" (fixed result of an FP32 {special} source, MatrixPostQuantSpecialValue)"
    elif isinstance(value, float) and facts.negative_zero_result is not None:  # -0.0: a signed zero
        bits, flags = facts.negative_zero_result, 0
        how += " (negative zero, MatrixFloatingSignedZero)"
    else:
        bits, flags = encode_reference(Fraction(value), dt, mode, sat)
        how += " (B.FPATR encoding, MatrixEncodeReal)"
    if dt.name.endswith("X2"):
        bits <<= lane * (carrier_bits(dt) // lanes_per_carrier(dt))
    return bits, [("rounding", how), ("flags", _flags_text(flags))]


def _describe(dt: TileDataType, code: int, lane: int, engine: str) -> List[Tuple[str, str]]:
    cls = ValueClass(int(value_class(dt, code, lane, engine=engine)))
    d = decompose(dt, code, lane, engine=engine)
    available, negative = bool(d.available), bool(d.negative)
    significand, exponent = int(d.significand), int(d.exponent)
    rows = [
        ("class", cls.label),
        ("available", "yes" if available else "no"),
        ("negative", ("yes" if negative else "no") if available else _unavailable_sign(dt, code, lane)),
        ("significand", f"{significand:#x} ({significand})"),
        ("exponent", str(exponent)),
    ]
    if available:
        rows.append(("value", _fraction_text(negative, significand, exponent)))
        rows.append(("decimal", _decimal_text(negative, significand, exponent)))
    elif dt.is_integer:
        rows.append(("value", "no floating-format decomposition (integer type)"))
        rows.append(("integer", str(_integer_value(dt, code, lane))))
    elif cls.is_infinity:
        rows.append(("value", "-inf" if cls is ValueClass.NEGATIVE_INFINITY else "+inf"))
    elif cls.is_nan:
        rows.append(("value", "NaN"))
    else:
        rows.append(("value", "invalid encoding (required zero carrier bits are set)"))
    return rows


@click.command("decode", context_settings={"ignore_unknown_options": True})  # CODE -1: a bad code, not an option
@click.argument("type_name", metavar="TYPE")
@click.argument("codes", nargs=-1, required=False, metavar="CODE...")
@click.option("--value", "decimals", multiple=True, metavar="DECIMAL",
              help="Decode the encoding of a decimal instead of a CODE (repeatable): its exact value is rounded "
                   "once to TYPE, a B.FPATR destination (FP32, FP16, BF16, E4M3, HiF8, S4X2, S8, S16, S32, U32; "
                   "with --rmode/--sat) or FP64 (nearest even), and the rounding used and the conversion's "
                   "flags (NV OF UF NX) are shown.")
@click.option("--rmode", default=None, metavar="RMODE",
              help=RMODE_HELP + " For --value; NONE (the default) resolves to RNE.")
@click.option("--sat", is_flag=True, help="For --value: Sat=1, an overflow gives the largest finite value.")
@click.option("--lane", type=ASCII_INT, default=0, show_default=True,
              help="Lane of a packed X2 carrier: 0 = low nibble, 1 = high nibble.")
@click.option("--engine", type=click.Choice(["fast", "reference"]), default="fast", show_default=True,
              help="Decoder: numpy lookup tables/bit arithmetic, or the step-by-step reference.")
def command(type_name: str, codes: Tuple[str, ...], decimals: Tuple[str, ...], rmode: Optional[str], sat: bool,
            lane: int, engine: str) -> None:
    """Decode raw encodings of a Tile DataType.

    For each CODE (hex `0x..`, binary `0b..`, octal `0o..` or decimal), print its
    value class, the exact finite decomposition (available, negative,
    significand, exponent, with value = (-1)^negative * significand *
    2^exponent), and the exact value as a fraction and a decimal.

    **Examples**: three codes; the encoding a decimal rounds to (once, nearest even); the same with
    the rounding mode, Sat and the flags of the conversion (here OF|NX):

    ```
    ptonum decode HiF8 0x6e 0x81 0x80
    ptonum decode BF16 --value 1.0039063
    ptonum decode E4M3 --value 1e10 --sat
    ```

    A bad TYPE, CODE or lane is one line on stderr and exit status 2.
    """
    with errors_to_exit("decode"):
        dt = _parse_type(type_name)
        if not codes and not decimals:
            raise UsageError("give CODE... or --value DECIMAL")
        values = [parse_code(c) for c in codes]
        notes = [""] * len(values)
        if not decimals and (rmode is not None or sat):
            raise UsageError("--rmode and --sat apply to --value only (a CODE is decoded as it is)")
        extra: List[List[Tuple[str, str]]] = [[] for _ in values]
        for i, text in enumerate(decimals):
            bits, rows = _encode_decimal(dt, text, f"--value[{i}]" if len(decimals) > 1 else "--value",
                                         "NONE" if rmode is None else rmode, sat, lane)
            values.append(bits)
            extra.append(rows)
            notes.append(f" (--value {text.strip()})")
        described = []
        for i, (v, note) in enumerate(zip(values, notes)):
            try:
                described.append((v, note, extra[i] + _describe(dt, v, lane, engine)))
            except UsageError as exc:  # the model names its argument `encoding`: here it is a CODE
                msg = str(exc)
                if not msg.startswith("encoding = "):
                    raise
                shown, _, why = msg[len("encoding = "):].partition(": ")
                if i < len(codes) and codes[i].strip().lower() != shown.lower():  # as written: 65536 (0x10000)
                    shown = f"{codes[i].strip()} ({shown})"
                raise UsageError(f"CODE {shown}: {why}" if why else f"CODE {shown}") from None
    for n, (value, note, rows) in enumerate(described):
        if n:
            click.echo("")
        lane_note = f", lane {lane}" if dt.name.endswith("X2") else ""
        click.echo(f"{dt.name} {value:#x}{lane_note}{note}")
        for key, shown in rows:
            click.echo(f"  {key:<12} {shown}")
