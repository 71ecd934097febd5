"""Tests for the ``ptonum formats`` and ``ptonum decode`` commands (click CliRunner).

Expected numbers come from the pto-spec ASL tests (HiF8 0x6e -> 2 * 2^14, 0x81 ->
-(2^-22); ``tests/asl/arch/data-types/formats/hif8/arch-bound-hif8-decomp-001.asl``),
the ASL descriptor functions, and ml_dtypes (E4M3 0x38 = 1.0, E2M1 0x7 = 6.0).
"""

from __future__ import annotations

import re
from decimal import Decimal, localcontext
from typing import List

import ml_dtypes
import numpy as np
import pytest
from click.testing import CliRunner, Result
from numpy.typing import DTypeLike

from ptonum.cli import main
from ptonum.formats import TileDataType


def run(args: List[str]) -> Result:
    return CliRunner().invoke(main, args)


def flat(text: str) -> str:
    """Output with rich's box characters removed and whitespace collapsed."""
    return " ".join(re.sub(r"[│╭╮╰╯─┃┏┓┗┛━┡┩╇┳┻╋┣┫]", " ", text).split())


def blocks(output: str) -> List[dict]:
    out = []
    for chunk in output.strip().split("\n\n"):
        lines = chunk.splitlines()
        fields = dict(line.strip().split(None, 1) for line in lines[1:])
        fields["header"] = lines[0]
        out.append(fields)
    return out


def test_formats_lists_every_floating_type_and_notes_integers() -> None:
    r = run(["formats"])
    assert r.exit_code == 0, r.output
    text = flat(r.output)
    for t in TileDataType:
        assert t.name in text
    assert "Integer types have no floating-format descriptor: S64, S32, S16, S8, S4X2, U64, U32, U16, U8, U4X2" in text
    rows = {line.split()[0]: line.split() for line in (flat(l) for l in r.output.splitlines()) if line}
    # ASL descriptor functions: carrier, lanes x lane bits, sign, exponent/fraction widths, bias, zero bits.
    assert rows["TF32"][:10] == ["TF32", "2", "fixed", "32", "1x32", "bit", "31", "8", "10", "127"]
    assert "low 13" in " ".join(rows["TF32"])
    assert rows["HiF8"][:10] == ["HiF8", "6", "HiF8", "8", "1x8", "bit", "7", "0..4", "1..3", "-"]
    assert rows["E3M2"][:12] == ["E3M2", "9", "fixed", "8", "1x6", "bit", "5", "3", "2", "3", "high", "2"]
    assert rows["E8M0"][:9] == ["E8M0", "13", "E8M0", "8", "1x8", "-", "8", "0", "127"]
    assert rows["E2M1X2"][4] == "2x4"
    assert rows["FP64"][-1] == "0x7ff8000000000000" and rows["E4M3"][-1] == "0x7f"


def test_formats_single_type_prints_every_descriptor_field() -> None:
    r = run(["formats", "hif8", "13", "S8"])
    assert r.exit_code == 0, r.output
    text = flat(r.output)
    for field, value in [("kind", "HIF8"), ("exponent_bits_max", "4"), ("exponent_bias_available", "false"),
                         ("has_signed_zero", "false"), ("has_signaling_nan", "false")]:
        assert f"{field} {value}" in text
    assert "E8M0 (code 13)" in text and "has_zero false" in text
    assert "S8 (code 19) is an integer type: it has no floating-format descriptor." in text


def _nan_bits(dtype: DTypeLike, bits: DTypeLike) -> str:
    """The NaN a library writes for ``dtype`` (numpy / ml_dtypes: their default quiet NaN), as hex."""
    return f"{int(np.array([np.nan]).astype(dtype).view(bits)[0]):#x}"


# The canonical NaN of each floating/scale type, not from ptonum: the IEEE and OCP types' default NaN from numpy
# and ml_dtypes; TF32, HF32 and HiF8 from ../shared/reference/formats.md (pto-spec tf32.asl, hf32.asl: "Canonical
# NaN 0x7FC00000"; HiF8: "NaN: 1 0000 000 = 0x80. It is the only NaN"); '-' for the types with no NaN at all
# (formats.md: E3M2, E2M3, E2M1, E1M2/HiFloat4 "no Inf/NaN").
CANONICAL_NAN = {
    "FP64": _nan_bits(np.float64, np.uint64), "FP32": _nan_bits(np.float32, np.uint32),
    "TF32": "0x7fc00000", "HF32": "0x7fc00000",
    "FP16": _nan_bits(np.float16, np.uint16), "BF16": _nan_bits(ml_dtypes.bfloat16, np.uint16),
    "HiF8": "0x80",
    "E4M3": _nan_bits(ml_dtypes.float8_e4m3fn, np.uint8), "E5M2": _nan_bits(ml_dtypes.float8_e5m2, np.uint8),
    "E3M2": "-", "E2M3": "-", "E2M1X2": "-", "E1M2X2": "-",
    "E8M0": _nan_bits(ml_dtypes.float8_e8m0fnu, np.uint8),
    "HiF4X2": "-",
}


def test_canonical_nan_expectations_are_the_libraries_bits() -> None:
    """The independent values are what they should be (a library change would show here first)."""
    assert [CANONICAL_NAN[t] for t in ("FP64", "FP32", "FP16", "BF16", "E4M3", "E5M2", "E8M0")] == [
        "0x7ff8000000000000", "0x7fc00000", "0x7e00", "0x7fc0", "0x7f", "0x7e", "0xff"]
    assert sorted(CANONICAL_NAN) == sorted(t.name for t in TileDataType if t.is_floating)


@pytest.mark.parametrize("name", list(CANONICAL_NAN))
def test_formats_type_shows_its_canonical_nan_as_the_summary_does(name: str) -> None:
    """Fresh-user finding: ``ptonum formats FP16`` had no canonical NaN (only the summary row had one): every
    type's field table now ends with it, the same text as its summary cell, '-' for a type without NaN."""
    r = run(["formats", name])
    assert r.exit_code == 0, r.output
    lines = [[c.strip() for c in line.split("│")[1:-1]] for line in r.output.splitlines() if line.startswith("│")]
    assert lines[-1] == ["canonical NaN", CANONICAL_NAN[name]], r.output
    assert [cells[0] for cells in lines[:-1]] == [
        "available", "kind", "carrier_bits", "lane_bits", "lanes_per_carrier", "sign_bits", "sign_bit",
        "exponent_bits_min", "exponent_bits_max", "fraction_bits_min", "fraction_bits_max",
        "exponent_bias_available", "exponent_bias", "required_low_zero_bits", "required_high_zero_bits",
        "has_zero", "has_signed_zero", "has_subnormal", "has_infinity", "has_quiet_nan", "has_signaling_nan"]
    has_nan = dict(lines)["has_quiet_nan"] == "true"
    assert has_nan == (CANONICAL_NAN[name] != "-")
    summary = run(["formats"])
    row = next(line for line in summary.output.splitlines() if line.startswith(f"│ {name} "))
    assert row.split("│")[-2].strip() == CANONICAL_NAN[name]


def test_formats_several_types_are_separated_by_a_blank_line() -> None:
    """Each type's table or integer note is one block: a blank line between them (they ran together)."""
    r = run(["formats", "FP16", "S8", "E8M0"])
    assert r.exit_code == 0, r.output
    chunks = r.output.strip("\n").split("\n\n")
    assert [c.splitlines()[0].strip() for c in chunks] == [
        "FP16 (code 4)", "S8 (code 19) is an integer type: it has no floating-format descriptor.", "E8M0 (code 13)"]
    assert chunks[0].splitlines()[-1].startswith("└") and chunks[2].splitlines()[-1].startswith("└")


def test_formats_unknown_type_is_a_usage_error() -> None:
    r = run(["formats", "FP8"])
    assert r.exit_code == 2
    assert "TYPE = 'FP8': unknown Tile DataType" in flat(r.output)
    assert "Traceback" not in r.output


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_decode_hif8_matches_asl_test(engine: str) -> None:
    r = run(["decode", "HiF8", "0x6e", "0x81", "0x80", "0xEF", "--engine", engine])
    assert r.exit_code == 0, r.output
    b = blocks(r.output)
    assert [x["header"] for x in b] == ["HiF8 0x6e", "HiF8 0x81", "HiF8 0x80", "HiF8 0xef"]
    assert (b[0]["class"], b[0]["available"], b[0]["negative"]) == ("PositiveNormal", "yes", "no")
    assert (b[0]["significand"], b[0]["exponent"], b[0]["value"], b[0]["decimal"]) == ("0x2 (2)", "14", "32768", "32768")
    assert (b[1]["class"], b[1]["negative"], b[1]["significand"], b[1]["exponent"]) == (
        "NegativeSubnormal", "yes", "0x1 (1)", "-22")
    assert b[1]["value"] == "-1/4194304" and b[1]["decimal"] == "-0.0000002384185791015625"
    assert (b[2]["class"], b[2]["available"], b[2]["value"]) == ("QuietNaN", "no", "NaN")
    assert (b[3]["class"], b[3]["value"]) == ("NegativeInfinity", "-inf")


def test_decode_accepts_hex_binary_octal_decimal() -> None:
    r = run(["decode", "E4M3", "0x38", "0b00111000", "0o70", "56"])  # no digit separators (one rule)
    assert r.exit_code == 0, r.output
    b = blocks(r.output)
    assert len(b) == 4
    want = float(np.uint8(0x38).view(ml_dtypes.float8_e4m3fn))
    assert all(x["header"] == "E4M3 0x38" and x["value"] == "1" and Decimal(x["decimal"]) == Decimal(want)
               for x in b)


def test_decode_lane_and_integer_types() -> None:
    r = run(["decode", "E2M1X2", "0x7a", "--lane", "1"])
    assert r.exit_code == 0, r.output
    b = blocks(r.output)[0]
    assert b["header"] == "E2M1X2 0x7a, lane 1"
    assert Decimal(b["decimal"]) == Decimal(float(np.uint8(0x7).view(ml_dtypes.float4_e2m1fn)))
    r = run(["decode", "S8", "0x8c"])
    assert r.exit_code == 0, r.output
    b = blocks(r.output)[0]
    assert (b["class"], b["available"], b["integer"]) == ("NegativeNormal", "no", "-116")


def test_decode_long_values_are_rounded_and_marked() -> None:
    r = run(["decode", "FP64", "1", "0x3ff8000000000000"])
    assert r.exit_code == 0, r.output
    tiny, one_half = blocks(r.output)
    assert tiny["value"] == "1/2^1074"
    with localcontext() as ctx:
        ctx.prec = 17
        expected = +(Decimal(1) / (Decimal(2) ** 1074))
    assert tiny["decimal"] == f"≈ {expected:.16e}"
    assert one_half["value"] == "3/2" and one_half["decimal"] == "1.5"


def test_decode_invalid_encoding() -> None:
    r = run(["decode", "TF32", "0x3f800001"])
    assert r.exit_code == 0, r.output
    b = blocks(r.output)[0]
    assert b["class"] == "InvalidEncoding" and b["available"] == "no"


@pytest.mark.parametrize("args,message", [
    (["decode", "FP8", "1"], "TYPE = 'FP8': unknown Tile DataType"),
    (["decode", "E4M3", "0xzz"], "CODE '0xzz': not a non-negative integer"),
    (["decode", "E4M3", "0x100"], "CODE 0x100: does not fit in 8 bits"),
    (["decode", "FP16", "1", "--lane", "1"], "lane = 1: FP16 has only lane 0"),
    (["decode", "E1M2X2", "1", "--lane", "2"], "lane = 2: E1M2X2 has lanes 0"),
    (["decode", "FP16", "1", "--engine", "gpu"], "gpu"),
    (["decode", "FP16"], "give CODE... or --value DECIMAL"),
])
def test_decode_bad_input_is_a_one_message_usage_error(args: List[str], message: str) -> None:
    r = run(args)
    assert r.exit_code == 2, r.output
    assert message in flat(r.output)
    assert "Traceback" not in r.output
    assert isinstance(r.exception, SystemExit)


@pytest.mark.parametrize("args, prefix", [
    (["decode", "FP8", "1"], "ptonum decode: error: TYPE = 'FP8'"),
    (["decode", "E4M3", "0xzz"], "ptonum decode: error: CODE '0xzz'"),
    (["decode", "E4M3", "0x100"], "ptonum decode: error: CODE 0x100"),
    (["decode", "FP16", "1", "--lane", "1"], "ptonum decode: error: lane = 1"),
    (["formats", "FP8"], "ptonum formats: error: TYPE = 'FP8'"),
])
def test_model_errors_are_one_line_on_stderr(args: List[str], prefix: str) -> None:
    r = run(args)
    assert r.exit_code == 2, r.output
    assert r.stdout == "" and r.stderr.count("\n") == 1 and r.stderr.startswith(prefix), r.stderr
