"""``ptonum explain`` options: --attributes WORD, --acc as a value (signed S32 decimal, exact FP32
decimal), tcvt --value (a decimal rounded once).  Expected encodings are two's complement and
numpy float32/ml_dtypes views, not ptonum's."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from click.testing import CliRunner

from ptonum.cli import main
from ptonum.fpatr.attributes import FPATRAttributes

RUN = CliRunner(env={"COLUMNS": "200"})
QP = "0x3c000000"  # FP19 2**-7 at [31:13]


def _explain(*args: str):
    return RUN.invoke(main, ["explain", "postprocess", *args])


def test_attributes_word_and_signed_s32_decimal_give_the_same_trace_as_mode_and_bits() -> None:
    word = FPATRAttributes.from_fields("VREQ8", "RELU", row_max_en=True).word  # RowMax: no effect on one element
    a = _explain("--attributes", hex(word), "--acc-type", "S32", "--acc", "-153043", "--quant-param", QP)
    bits = int(np.array(-153043, np.int32).view(np.uint32))
    b = _explain("--mode", "VREQ8", "--relu", "RELU", "--acc-type", "S32", "--acc", hex(bits), "--quant-param", QP)
    assert a.exit_code == 0 and b.exit_code == 0, a.output + b.output
    assert a.output == b.output
    assert f"acc={bits:#010x}" in a.output and "= -153043" in a.output and "ReluMode=1" in a.output


@pytest.mark.parametrize("args, needle", [
    (["--attributes", "0x08002023", "--mode", "REQ8", "--acc", "1"], "--attributes and --mode both give the mode"),
    (["--acc", "1"], "give --mode NAME (and --relu) or --attributes WORD"),
    (["--mode", "REQ8", "--acc", "2147483648"], "--acc = 2147483648: does not fit S32 (-2147483648 .. 2147483647)"),
    (["--mode", "REQ8", "--acc", "1.5"], "--acc = '1.5': expected an integer"),
])
def test_explain_refusals(args, needle) -> None:
    r = _explain("--acc-type", "S32", *args)
    assert r.exit_code == 2 and needle in r.stderr, r.output


def test_fp32_decimal_is_exact_or_refused_with_the_nearest() -> None:
    r = _explain("--mode", "F322F16", "--acc-type", "FP32", "--acc", "-2.5")
    assert r.exit_code == 0 and "acc=0xc0200000" in r.output, r.output
    want = int(np.array(0.1, np.float32).view(np.uint32))  # 0x3dcccccd
    r = _explain("--mode", "F322F16", "--acc-type", "FP32", "--acc", "0.1")
    assert r.exit_code == 2
    assert f"--acc = 0.1: not an FP32 value; the nearest FP32" in r.stderr and f"give --acc {want:#010x}" in r.stderr
    r = _explain("--mode", "F322F16", "--acc-type", "FP32", "--acc", repr(float(np.float32(0.1))))  # as printed
    assert r.exit_code == 0 and f"acc={want:#010x}" in r.output, r.output
    # 16777217.000000001 is above the FP32 midpoint 2**24 + 1: the nearest is 16777218 (a binary64 read ties down)
    r = _explain("--mode", "F322F16", "--acc-type", "FP32", "--acc", "16777217.000000001")
    assert "give --acc 0x4b800001" in r.stderr, r.stderr


def test_explain_tcvt_value_is_rounded_once() -> None:
    want = 0x3F81  # 1.0039063 is above the BF16 midpoint 1.00390625 of 0x3f80 / 0x3f81
    assert int(np.array(1.0078125, ml_dtypes.bfloat16).view(np.uint16)) == want
    r = RUN.invoke(main, ["explain", "tcvt", "--src-type", "BF16", "--value", "1.0039063", "--rmode", "RTP"])
    assert r.exit_code == 0, r.output
    assert "--value 1.0039063 is BF16 0x3f81" in r.output and "src=0x3f81" in r.output
    r = RUN.invoke(main, ["explain", "tcvt", "--src-type", "BF16", "--value", "1", "--bits", "0x3f80"])
    assert r.exit_code == 2 and "one of them" in r.stderr


@pytest.mark.parametrize("text, src, flags", [
    # 65520 = 65504 + 16: at FP16's midpoint to 2^16, ties to even go to +inf (OF|NX); 2^-25 = half of FP16's
    # smallest subnormal 2^-24: a tie to even 0, tiny (UF|NX); 1e50 is above 2^128 - 2^103 (FP32 overflow,
    # OF|NX); 0.1 is no dyadic fraction (NX) -- exact Fraction facts, asserted below
    ("65520", "FP16", "OF|NX"), ("2.98023223876953125e-08", "FP16", "UF|NX"), ("1e50", "FP32", "OF|NX"),
    ("0.1", "BF16", "NX"),
])
def test_explain_tcvt_value_shows_the_flags_of_its_rounding(text: str, src: str, flags: str) -> None:
    """explain tcvt --value said 'rounded once' without the flags of that rounding (tcvt --values and
    decode --value show them)."""
    from fractions import Fraction

    assert Fraction(65520) == Fraction(65504) + 16 and Fraction("2.98023223876953125e-08") == Fraction(1, 2 ** 25)
    assert Fraction(10) ** 50 >= Fraction(2) ** 128 - Fraction(2) ** 103
    r = RUN.invoke(main, ["explain", "tcvt", "--src-type", src, "--value", text])
    assert r.exit_code == 0, r.output
    assert f"(rounded once from the decimal, nearest even; flags {flags}, not TCVT flags)" in r.stdout.splitlines()[0]


@pytest.mark.parametrize("src", ["E4M3", "FP64", "S32"])
def test_explain_tcvt_value_of_an_unsupported_source_is_refused_as_bits_is(src: str) -> None:
    """--value of a source TCVT to E8M0 does not take said 'takes FP32, FP16 or BF16' for E4M3, and for FP64
    read the decimal first; now the model's own D183 refusal, as --bits and tcvt --values give."""
    want = (f"--src-type = {src}: TCVT to E8M0 accepts only FP16, BF16 and FP32 sources; {src} -> E8M0 is rejected "
            "before any destination effect (ADR-0085 D183, HardwareTCVTE8M0SourceTypeSupported)")
    for given in (["--value", "1"], ["--value", "not-a-number"], ["--bits", "0x1"]):
        r = RUN.invoke(main, ["explain", "tcvt", "--src-type", src, *given])
        assert (r.exit_code, r.stdout, r.stderr) == (2, "", f"ptonum explain tcvt: error: {want}\n"), (given, r.output)


def test_reduction_operands_as_values() -> None:
    a = RUN.invoke(main, ["explain", "reduction", "--acc-type", "S32", "--current", "-5", "--candidate", "3"])
    b = RUN.invoke(main, ["explain", "reduction", "--acc-type", "S32", "--current", "0xfffffffb", "--candidate", "0x3"])
    assert a.exit_code == 0 and a.output == b.output, a.output
    r = RUN.invoke(main, ["explain", "reduction", "--acc-type", "FP32", "--current", "-1.5", "--candidate", "0.1"])
    assert r.exit_code == 2 and "--candidate = 0.1: not an FP32 value" in r.stderr


def test_explain_postprocess_infers_the_only_accumulator_type_and_takes_scale() -> None:
    """probe13 #27: REQ8 admits only S32, yet --acc-type was required; --scale/--offset were missing."""
    from click.testing import CliRunner

    from ptonum.cli import main
    from ptonum.fpatr.params import quant_param

    word = quant_param(0.5, 3, mode="REQ8")
    base = ["explain", "postprocess", "--mode", "REQ8", "--acc", "-153043"]
    a = CliRunner().invoke(main, [*base, "--quant-param", hex(word)])
    b = CliRunner().invoke(main, [*base, "--scale", "0.5", "--offset", "3"])
    c = CliRunner().invoke(main, [*base, "--acc-type", "S32", "--quant-param", hex(word)])
    assert a.exit_code == b.exit_code == c.exit_code == 0, (a.output, b.output)
    assert a.stdout == b.stdout == c.stdout and "acc_type=S32" in a.stdout
    r = CliRunner().invoke(main, ["explain", "postprocess", "--mode", "NoQuant", "--acc", "1"])
    assert (r.exit_code, r.stderr) == (2, "ptonum explain postprocess: error: give --acc-type: PreQuantMode 0 admits "
                                          "FP32 or S32 or U32 accumulators\n")


def test_explain_postprocess_takes_alpha_as_postprocess_does() -> None:
    """break stop 23: postprocess takes --alpha DECIMAL for LReLU/PReLU, explain only the raw FP19 --relu-param
    word, so tracing an LReLU element of a run meant building the word by hand.  0.25 = 2^-2 is the FP19 word
    with biased exponent 125 (8 bits, bias 127) and a zero 10-bit mantissa: 125 << 10 (ADR-0085 FP19)."""
    from click.testing import CliRunner

    from ptonum.cli import main

    base = ["explain", "postprocess", "--mode", "REQ8", "--relu", "LRELU", "--acc", "-153043", "--scale", "0.5"]
    a = CliRunner().invoke(main, [*base, "--alpha", "0.25"])
    b = CliRunner().invoke(main, [*base, "--relu-param", hex(125 << 10)])
    z = CliRunner().invoke(main, [*base, "--relu-param", "0"])
    assert a.exit_code == b.exit_code == z.exit_code == 0, (a.output, b.output)
    assert a.stdout == b.stdout and a.stdout != z.stdout
    r = CliRunner().invoke(main, [*base, "--alpha", "0.25", "--relu-param", "0x1f400"])
    assert (r.exit_code, r.stderr) == (2, "ptonum explain postprocess: error: --alpha and --relu-param both give the "
                                          "activation parameter; give one\n")
    r = CliRunner().invoke(main, [*base, "--alpha", "0.1"])  # not an FP19 value: refused as postprocess refuses it
    assert r.exit_code == 2 and r.stderr.startswith("ptonum explain postprocess: error: --alpha") and "0.1" in r.stderr
    # ... naming --scale-rounding rne, which explain now takes too (it named an option explain did not have):
    # 0.1 rounds to FP19 0x1ee66 (the refusal names it), the same trace as that word given raw
    assert "give --scale-rounding rne" in r.stderr and "0x1ee66" in r.stderr
    c = CliRunner().invoke(main, [*base, "--alpha", "0.1", "--scale-rounding", "rne"])
    d = CliRunner().invoke(main, [*base, "--relu-param", "0x1ee66"])
    assert c.exit_code == d.exit_code == 0 and c.stdout == d.stdout, (c.output, d.output)
