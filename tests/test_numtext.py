"""ptonum.numtext: a decimal is rounded once, from its exact value, to FP32/FP16/BF16/FP19.

Expected values: numpy/ml_dtypes conversions of values that are exact in the wider type (a single
correctly rounded step), and midpoints built by hand from adjacent encodings.
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptonum.errors import UsageError
from ptonum.numtext import BINARY_FORMATS, decimal_to_bits, round_to_format


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False, width=64))
def test_fp32_and_fp16_match_one_numpy_rounding_of_a_float64(x: float) -> None:
    with np.errstate(over="ignore"):
        f32 = int(np.array(x, np.float64).astype(np.float32).view(np.uint32))
        f16 = int(np.array(x, np.float64).astype(np.float16).view(np.uint16))
    assert round_to_format(Fraction(x) if x or str(x)[0] != "-" else -0.0, BINARY_FORMATS["FP32"])[0] == f32
    assert round_to_format(Fraction(x) if x or str(x)[0] != "-" else -0.0, BINARY_FORMATS["FP16"])[0] == f16


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False, width=32))
def test_bf16_matches_ml_dtypes_from_an_exact_float32(x: float) -> None:
    want = int(np.array(x, np.float32).astype(ml_dtypes.bfloat16).view(np.uint16))
    assert round_to_format(Fraction(x) if x or str(x)[0] != "-" else -0.0, BINARY_FORMATS["BF16"])[0] == want


@pytest.mark.parametrize("fmt, code", [("BF16", 0x3F80), ("BF16", 0x3F81), ("FP16", 0x3C00), ("FP16", 0x0001),
                                       ("FP32", 0x3F800000), ("FP32", 0x3F800001), ("FP19", 0x1FC00)])
def test_decimal_just_above_and_below_a_midpoint(fmt: str, code: int) -> None:
    f = BINARY_FORMATS[fmt]
    lo = _value(f, code)
    mid = (lo + _value(f, code + 1)) / 2
    with localcontext() as ctx:
        ctx.prec = 400  # exact: a dyadic fraction has a finite decimal expansion
        digits = Decimal(mid.numerator) / Decimal(mid.denominator)
        eps = Decimal("1e-60")
        above, below, low = str(digits + eps), str(digits - eps), str(Decimal(lo.numerator) / Decimal(lo.denominator))
    assert decimal_to_bits(above, fmt, "v") == (code + 1, False)
    assert decimal_to_bits(below, fmt, "v") == (code, False)
    assert decimal_to_bits(str(digits), fmt, "v") == (code + (code & 1), False)  # the tie goes to the even code
    assert decimal_to_bits(low, fmt, "v") == (code, True)


def _value(f, code: int) -> Fraction:
    e = (code >> f.fraction_bits) & ((1 << f.exponent_bits) - 1)
    m = code & ((1 << f.fraction_bits) - 1)
    bias = (1 << (f.exponent_bits - 1)) - 1
    if e == 0:
        return Fraction(m) * Fraction(2) ** (1 - bias - f.fraction_bits)
    return (1 + Fraction(m, 1 << f.fraction_bits)) * Fraction(2) ** (e - bias)


def test_issue_example_and_specials() -> None:
    # 1.0039063 lies just above the BF16 midpoint 1.00390625 between 0x3f80 and 0x3f81
    assert decimal_to_bits("1.0039063", "BF16", "v") == (0x3F81, False)
    assert decimal_to_bits("65520", "FP16", "v") == (0x7C00, False)  # overflow to infinity
    assert decimal_to_bits("-0", "FP32", "v") == (0x80000000, True)
    assert decimal_to_bits("-inf", "FP16", "v") == (0xFC00, True)
    assert decimal_to_bits("nan", "BF16", "v")[0] == 0x7FC0
    with pytest.raises(UsageError, match=r"--values\[2\] = '1\.2\.3': not a decimal number"):
        decimal_to_bits("1.2.3", "FP32", "--values[2]")


def test_tcvt_values_round_once() -> None:
    from click.testing import CliRunner

    from ptonum.cli import main

    r = CliRunner(env={"COLUMNS": "200"}).invoke(main, ["tcvt", "--to", "E8M0", "--values", "1.0039063",
                                                        "--src-type", "BF16", "--rmode", "RTP"])
    assert r.exit_code == 0, r.output
    row = next(ln for ln in r.output.splitlines() if "0x3f8" in ln)
    assert "0x3f81" in row and "0x80" in row and "NX" in row  # RTP of 1.0078125: 2**1
    # FP32: 16777217.000000001 is above the midpoint 2**24 + 1; a float64 read gives exactly 2**24 + 1 (a tie)
    r = CliRunner(env={"COLUMNS": "200"}).invoke(main, ["tcvt", "--to", "E8M0", "--values", "16777217.000000001",
                                                        "--src-type", "FP32"])
    assert "0x4b800001" in r.output, r.output


@pytest.mark.parametrize("text", ["1e400", "9.99e399", "1e401", "-3e450", "0.00001e405", "1e-400", "1e-401",
                                  "-7e-420", "123456e-406", "2.5e-324", "1e308", "1.8e308"])
def test_far_decimals_round_as_their_exact_value(text: str) -> None:
    """Text beyond 10**+-400 is not expanded (a stand-in of the same side is used); every format
    rounds it exactly as the decimal's own exact value (Fraction(text), an independent parse)."""
    for fmt in BINARY_FORMATS.values():
        assert decimal_to_bits(text, fmt, "x") == round_to_format(Fraction(text), fmt), (text, fmt.name)


@pytest.mark.parametrize("text", ["1e99999999", "-1e99999999", "1e-99999999", "-0.5e-999999999"])
def test_huge_exponents_answer_at_once(text: str) -> None:
    # Fraction(text) itself would build a number of ~10**8 digits: the expected values are the IEEE
    # rules (beyond every finite value -> signed infinity, inexact; below every subnormal -> signed zero)
    neg = text.startswith("-")
    big = "e-" not in text
    for fmt in BINARY_FORMATS.values():
        sign = 1 << (fmt.exponent_bits + fmt.fraction_bits)
        inf = ((1 << fmt.exponent_bits) - 1) << fmt.fraction_bits
        assert decimal_to_bits(text, fmt, "x") == ((sign if neg else 0) | (inf if big else 0), False)


def test_quant_param_text_beyond_binary64_is_a_usage_error() -> None:
    from ptonum.fpatr import quant_param

    from ptonum.errors import PtonumError

    for text in ("1e999", "1e99999999"):
        for rounding in ("exact", "rne"):  # refused as inexact, or (rne) as an infinite FP19 scale
            with pytest.raises(PtonumError, match="inf"):
                quant_param(text, 0, mode="REQ8", rounding=rounding)


def test_format_facts_agree_with_their_owners() -> None:
    """numtext keeps its own small table (it sits below datatypes); every width and NaN in it must be the
    one datatypes' descriptors, CANONICAL_NANS and fp19 give (FP19's NaN was once a negative NaN, 0x7FE00)."""
    from ptonum import fp19
    from ptonum.datatypes import CANONICAL_NANS, DESCRIPTORS, TileDataType

    for name, fmt in BINARY_FORMATS.items():
        if name == "FP19":
            assert (fmt.exponent_bits, fmt.fraction_bits, fmt.quiet_nan) == (8, 10, fp19.CANONICAL_NAN)
            assert fp19.value_class(fmt.quiet_nan) == fp19.value_class(fp19.from_fp32(0x7FC00000))
            continue
        dt = TileDataType[name]
        d = DESCRIPTORS[dt]
        assert (fmt.exponent_bits, fmt.fraction_bits, fmt.width) == (d.exponent_bits_max, d.fraction_bits_max,
                                                                     d.carrier_bits)
        assert fmt.quiet_nan == CANONICAL_NANS[dt]
    assert decimal_to_bits("nan", "FP19", "v")[0] == fp19.from_fp32(0x7FC00000)
    # the sign of a NaN is kept (it was dropped, and -nan read back as the positive NaN)
    for name, fmt in BINARY_FORMATS.items():
        sign = 1 << (fmt.width - 1)
        assert decimal_to_bits("-nan", name, "v") == (fmt.quiet_nan | sign, True), name
        assert decimal_to_bits("+NaN", name, "v") == (fmt.quiet_nan, True), name


@pytest.mark.parametrize("text", ["\u0663", "1_000", "1_0.5", "\uff11", "1e\u0663", "0x1p3", "\u0663.5", "inf\u0131"])
def test_only_the_ascii_decimal_grammar_is_a_number(text: str) -> None:
    """Arabic-Indic and fullwidth digits and digit separators are refused (Python's float/Fraction
    read them: float('\u0663') is 3.0, Fraction('1_000') is 1000)."""
    with pytest.raises(UsageError) as exc:
        decimal_to_bits(text, "FP16", "--value")
    assert str(exc.value) == (f"--value = {text!r}: not a decimal number: write ASCII digits 0-9 with an optional "
                              "sign, point and exponent, no digit separators (e.g. 1.5, -2e-3, .25, 1000), or inf/nan")
    # the grammar's own forms: 1000 = 0x63d0 in FP16 (numpy float16 agrees)
    assert int(np.float16(1000).view(np.uint16)) == 0x63D0
    for ok in ("1000", "+1e3", "1000.", "1.000e+3", " 1000 "):
        assert decimal_to_bits(ok, "FP16", "--value") == (0x63D0, True)


@pytest.mark.parametrize("text", ["1." + "0" * 5000, "-1." + "0" * 5000 + "1", "3." + "1" * 6000 + "e-3",
                                  "0." + "0" * 300 + "7" * 4500, "2" * 4400 + "e-4390", "1e" + "0" * 5000 + "3",
                                  "-0." + "0" * 5000])
def test_decimals_beyond_python_int_digit_limit_are_read_exactly(text: str) -> None:
    """More than 4300 digits (Python's int/Fraction refuse them) are read exactly: the value is that of
    the decimal module's exact parse (an independent reader), and every format rounds it once."""
    from ptonum.numtext import parse_real

    expected = Fraction(Decimal(text))
    value = parse_real(text, "x")
    assert value == expected
    if expected == 0:
        assert math.copysign(1.0, float(value)) == (-1.0 if text.startswith("-") else 1.0)
    for fmt in BINARY_FORMATS.values():
        assert decimal_to_bits(text, fmt, "x") == round_to_format(expected if expected or not text.startswith("-")
                                                                  else -0.0, fmt), (text[:20], fmt.name)


def test_long_decimal_options_on_the_command_line() -> None:
    """A --scale of 1 followed by 5000 zeros after the point is 1 (was an internal error)."""
    from click.testing import CliRunner

    from ptonum.cli import main

    one = "1." + "0" * 5000
    r = CliRunner().invoke(main, ["tcvt", "--to", "E8M0", "--values", one])
    assert r.exit_code == 0 and "0x3f800000" in r.output and "internal error" not in r.output, r.output[:400]
    r = CliRunner().invoke(main, ["decode", "FP32", "--value", one + "1"])
    assert r.exit_code == 0 and "0x3f800000" in r.output, r.output[:400]
