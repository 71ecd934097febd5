"""``ptonum tcvt`` (ADR-0085 D183).

Expected codes come from the pto-spec ASL tests named below and the ASL vectors.
"""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import pytest
import numpy as np
from click.testing import CliRunner

from ptonum.cli import main
from ptonum.cli.tcvt_cmd import command


def run(*args: str) -> "object":
    return CliRunner().invoke(main, ["tcvt", *args])


def test_command_object_is_registered() -> None:
    assert command.name == "tcvt"
    assert "tcvt" in main.list_commands(None)
    assert main.load_all().commands["tcvt"] is command


def test_values_table_asl_rounding_003() -> None:
    """tile-bound-tcvt-e8m0-rounding-003.asl: BF16 1.5 -> 127 under RTM, 0.75 -> 126 under RTM."""
    r = run("--to", "E8M0", "--rmode", "RTM", "--src-type", "BF16", "--values", "1.5,0.75,0x3f80")
    assert r.exit_code == 0, r.output
    out = r.output
    assert "0x3fc0" in out and "0x7f" in out and "0x7e" in out
    assert "2^-1 = 0.5" in out and "2^0 = 1" in out
    assert "status flags (OR): NX (0x10)" in out


def test_values_special_004_and_out_file(tmp_path: Path) -> None:
    """tile-state-tcvt-e8m0-special-004.asl (FP32, RNE, Sat=1 rows) written to .npz."""
    out = tmp_path / "o.npz"
    r = run("--rmode", "RNE", "--sat", "--values", "0x00400000,0x00200000,0x7f000000,0x7f7fffff", "--out", str(out))
    assert r.exit_code == 0, r.output
    data = np.load(out)
    assert data["codes"].tolist() == [0x00, 0x00, 0xFE, 0xFE]
    assert data["flags"].tolist() == [0x00, 0x18, 0x00, 0x14]
    assert "UF|NX" in r.output and "OF|NX" in r.output


def test_npy_and_bin_inputs_and_summary(tmp_path: Path) -> None:
    """tile-exec-tcvt-e8m0-finite-002.asl values in every file form; large input gives a summary."""
    vals = np.array([1.0, 2.0, 0.5, 1.5], dtype=ml_dtypes.bfloat16)
    f1 = tmp_path / "v.npy"
    np.save(f1, vals)
    o1 = tmp_path / "c.npy"
    r = run(str(f1), "--out", str(o1))
    assert r.exit_code == 0, r.output
    assert np.load(o1).tolist() == [127, 128, 126, 128]
    f2 = tmp_path / "v.bin"
    vals.view(np.uint16).tofile(f2)
    r = run(str(f2), "--dtype", "uint16", "--src-type", "BF16", "--shape", "2,2", "--out", str(o1))
    assert r.exit_code == 0, r.output
    assert np.load(o1).tolist() == [[127, 128], [126, 128]]
    big = tmp_path / "big.bin"
    np.tile(vals.astype(np.float32), 1000).tofile(big)
    r = run(str(big), "--dtype", "float32", "--engine", "reference")
    assert r.exit_code == 0, r.output
    assert "4000 element(s)" in r.output and "summary" in r.output and "flag NX" in r.output
    assert "1000" in r.output  # 1000 inexact 1.5 values


def test_bad_inputs_exit_nonzero_one_line(tmp_path: Path) -> None:
    out = tmp_path / "never.npy"
    cases = [
        (["--values", "1.5", "--src-type", "FP64", "--out", str(out)], "FP64"),
        (["--values", "1.5", "--src-type", "E4M3"], "E4M3"),
        (["--values", "1.5", "--rmode", "RTX"], "rmode"),
        (["--values", "0x10000", "--src-type", "FP16"], "does not fit"),
        (["--values", "abc"], "not a number"),
        (["--to", "FP16", "--values", "1"], "E8M0"),
        ([], "exactly one input"),
        # a space-separated list: the second value is read as FILE (break stop 23: only "give exactly one input")
        (["--values", "1.5", "3"], "not both ('3' was read as FILE; --values takes one comma-separated list"),
        ([str(tmp_path / "missing.npy")], "no such file"),
    ]
    bad = tmp_path / "bad.npy"
    bad.write_bytes(b"not numpy")
    cases.append(([str(bad)], "not a valid .npy file"))
    odd = tmp_path / "odd.bin"
    odd.write_bytes(b"\x00\x01\x02")
    cases.append(([str(odd), "--dtype", "float32"], "whole number"))
    f64 = tmp_path / "f64.npy"
    np.save(f64, np.array([1.0]))
    cases.append(([str(f64)], "FP64"))
    raw = tmp_path / "raw.bin"
    np.zeros(4, np.uint16).tofile(raw)
    cases.append(([str(raw), "--dtype", "uint16"], "--src-type"))
    cases.append(([str(raw), "--dtype", "uint16", "--src-type", "FP16", "--shape", "3"], "--shape"))
    for args, needle in cases:
        r = CliRunner().invoke(main, ["tcvt", *args])
        assert r.exit_code == 2, (args, r.output)
        assert r.exception is None or isinstance(r.exception, SystemExit), args  # no traceback
        lines = [ln for ln in r.output.splitlines() if ln.strip()]
        assert len(lines) == 1 and lines[0].startswith("ptonum tcvt: error:"), (args, r.output)
        assert needle in lines[0], (args, lines[0])
        if args and not args[0].startswith("-") and needle in ("whole number", "FP64", "--src-type", "not a valid .npy file"):
            # about the file: FILE: PATH
            assert lines[0].startswith(f"ptonum tcvt: error: FILE: {args[0]}: "), lines[0]
    assert not out.exists()


# ---------------------------------------------------------------------------
# New-user defects (regressions)


def _one_line_error(r, *needles: str) -> str:
    assert r.exit_code == 2, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit)
    assert r.stdout == "" and r.stderr.count("\n") == 1 and r.stderr.startswith("ptonum tcvt: error:"), r.stderr
    for n in needles:
        assert n in r.stderr, (n, r.stderr)
    return r.stderr


def test_narrow_integer_array_for_wider_source_is_refused(tmp_path: Path) -> None:
    for dt, src in ((np.uint16, "FP32"), (np.int16, "FP32"), (np.uint8, "FP16"), (np.uint8, "BF16")):
        p = tmp_path / f"{np.dtype(dt).name}_{src}.npy"
        np.save(p, np.array([0x3F, 0x40], dt))
        _one_line_error(run(str(p), "--src-type", src), np.dtype(dt).name, src)


def test_wide_integer_codes_for_a_16_bit_source_name_the_file_and_element(tmp_path: Path) -> None:
    # was "src_bits[0] = 0x3f800000: does not fit in 16 bits": neither the file nor --src-type named
    p = tmp_path / "codes.npy"
    np.save(p, np.array([[0x3C00, 0x4000], [0x3F800000, 0x3C00]], np.uint32))
    _one_line_error(run(str(p), "--src-type", "FP16"), f"FILE: {p}[1, 0] = 0x3f800000", "16-bit FP16 encoding",
                    "--src-type FP16")
    np.save(p, np.array([0x3C00, 0x4000], np.uint32))  # uint32 codes that fit 16 bits are read as they are
    r = run(str(p), "--src-type", "FP16")
    assert r.exit_code == 0, r.output


def test_empty_inputs_and_empty_value_items(tmp_path: Path) -> None:
    (tmp_path / "e.bin").write_bytes(b"")
    _one_line_error(run(str(tmp_path / "e.bin"), "--dtype", "float32"), "no elements")
    np.save(tmp_path / "e.npy", np.zeros(0, np.float32))
    _one_line_error(run(str(tmp_path / "e.npy")), "no elements")
    _one_line_error(run("--values", "1.5,,2"), "--values[1] is empty")


def test_out_in_missing_directory_is_created_and_directory_input_is_one_line(tmp_path: Path) -> None:
    out = tmp_path / "new" / "dir" / "codes.npy"
    r = run("--src-type", "BF16", "--values", "0x3fc0,0x3f40", "--out", str(out))
    assert r.exit_code == 0, r.output
    # ASL vectors tcvt_e8m0.csv.gz: BF16,0x3fc0,RNE,0 -> 0x80 and BF16,0x3f40,RNE,0 -> 0x7f
    assert np.load(out).tolist() == [0x80, 0x7F]
    _one_line_error(run(str(tmp_path)), "is a directory")
    _one_line_error(run("--values", "1", "--out", str(tmp_path)), "is a directory")


def test_rmode_codes_and_aliases() -> None:
    """ASL vectors tcvt_e8m0.csv.gz: BF16,0x3fc0,RTM,0 -> 0x7f (RTM is code 3, alias RDN)."""
    for given in ("3", "RDN", "RTM"):
        r = run("--rmode", given, "--src-type", "BF16", "--values", "0x3fc0")
        assert r.exit_code == 0, r.output
        assert "0x7f" in r.stdout and "RMode RTM" in r.stdout


def test_out_naming_the_input_file_is_refused_before_any_effect(tmp_path: Path, monkeypatch) -> None:
    """``--out`` that is FILE, by any spelling or link, is refused naming both (was: the input silently
    replaced by its codes)."""
    monkeypatch.chdir(tmp_path)
    src = np.array([1.0, 2.0, 0.25], dtype=np.float32)  # E8M0 codes 127 + log2: 127, 128, 125
    np.save("accf.npy", src)
    (tmp_path / "link.npy").symlink_to("accf.npy")
    (tmp_path / "hard.npy").hardlink_to("accf.npy")
    before = sorted(p.name for p in tmp_path.iterdir())
    for file, out in (("accf.npy", "accf.npy"), ("accf.npy", "./accf.npy"), ("./accf.npy", str(tmp_path / "accf.npy")),
                      ("accf.npy", "link.npy"), ("link.npy", "accf.npy"), ("accf.npy", "hard.npy")):
        r = run("--to", "E8M0", file, "--out", out)
        assert (r.exit_code, r.stdout) == (2, ""), (file, out, r.output)
        assert r.stderr == (f"ptonum tcvt: error: --out = {out}: is the input FILE = {file}; writing it would replace "
                            "the input (give another output name)\n")
        assert sorted(p.name for p in tmp_path.iterdir()) == before
        assert (tmp_path / "link.npy").is_symlink()
        assert np.load("accf.npy").tobytes() == src.tobytes()
    r = run("--to", "E8M0", "accf.npy", "--out", "codes.npy")
    assert r.exit_code == 0 and np.load("codes.npy").tolist() == [127, 128, 125]


# ---------------------------------------------------------------------------
# --values: a decimal's own rounding to the source type shows its flags (as decode --value does).
# Expected flags: softfloatpy (Berkeley SoftFloat, tininess before rounding) converting the binary64 of
# a decimal that binary64 holds exactly (so its conversion is the one rounding), and exact Fraction
# reasoning for decimals binary64 cannot hold.


def _read_flags(*args: str) -> "list[str]":
    """The decimal->SRC flags column of a --values table, one entry per element."""
    r = CliRunner().invoke(main, ["tcvt", *args], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    head = next(ln for ln in lines if "source bits" in ln)
    cols = [c.strip() for c in head.split("┃")]
    at = next(i for i, c in enumerate(cols) if c.startswith("decimal->") and c.endswith(" flags"))
    return [[c.strip() for c in ln.split("│")][at] for ln in lines if ln.startswith("│")]


def _softfloat_flags(text: str, src: str) -> str:
    from fractions import Fraction

    import softfloatpy as sf

    assert Fraction(text) == Fraction(float(text))  # binary64 holds the decimal: one rounding below
    sf.set_rounding_mode(sf.RoundingMode.NEAR_EVEN)
    sf.set_tininess_mode(sf.TininessMode.BEFORE_ROUNDING)
    sf.set_exception_flags(0)
    x = sf.Float64.from_float(float(text))
    if src == "BF16":  # binary32 holds these too: f64->f32 is exact, then the one rounding to BF16
        y = sf.f64_to_f32(x)
        assert sf.get_exception_flags() == 0
        sf.f32_to_bf16(y)
    else:
        {"FP16": sf.f64_to_f16, "FP32": sf.f64_to_f32}[src](x)
    fl = sf.get_exception_flags()
    return "|".join(n for n, bit in (("OF", 4), ("UF", 2), ("NX", 1)) if fl & bit) or "-"


@pytest.mark.parametrize("text, src", [
    ("340282366920938463463374607431768211456", "FP32"),  # 2^128: overflows
    ("1.000000059604644775390625", "FP32"),                # 1 + 2^-24: a tie, to even 1.0
    ("7.00649232162408535461864791644958065640130970938257885878534141944895541342930300743319094181060791015625e-46",
     "FP32"),                                              # 2^-150: tiny, a tie, to even 0
    ("65520", "FP16"), ("65504", "FP16"),                  # overflows; the largest finite (exact)
    ("2.98023223876953125e-08", "FP16"),                   # 2^-25: tiny, to 0
    ("6.0975551605224609375e-05", "FP16"),                 # the largest subnormal: tiny but exact, no UF
    ("6.103515625e-05", "FP16"), ("1.5", "FP16"),          # the smallest normal; exact
    ("1.00390625", "BF16"), ("-1.00000011920928955078125", "BF16"),  # a tie, to even; -(1 + 2^-23): inexact
])
def test_values_show_the_decimal_rounding_flags_like_softfloat(text: str, src: str) -> None:
    assert _read_flags("--src-type", src, "--values", text) == [_softfloat_flags(text, src)]


_SOFTFLOAT_ROWS = [
    ("340282366920938463463374607431768211456", "FP32"), ("1.000000059604644775390625", "FP32"),
    ("65520", "FP16"), ("65504", "FP16"), ("2.98023223876953125e-08", "FP16"), ("6.0975551605224609375e-05", "FP16"),
    ("1.00390625", "BF16"), ("-1.00000011920928955078125", "BF16"),
]


@pytest.mark.parametrize("text, src", _SOFTFLOAT_ROWS)
def test_decimal_in_format_is_softfloats_one_rounding(text: str, src: str) -> None:
    """cli._common.decimal_in_format, the one reading of a decimal into a binary format with its flags
    (tcvt --values, explain tcvt --value, decode FP64 --value): softfloat's bits and flags."""
    import softfloatpy as sf

    from ptonum.cli._common import decimal_in_format
    from ptonum.flags import flag_names

    expected_flags = _softfloat_flags(text, src)
    x = sf.Float64.from_float(float(text))
    y = sf.f64_to_f32(x) if src == "BF16" else x
    res = {"FP16": sf.f64_to_f16, "FP32": sf.f64_to_f32, "BF16": sf.f32_to_bf16}[src](y)
    bits, exact, flags = decimal_in_format(text, src, "--value")
    assert bits == int.from_bytes(res.to_bytes(), "big")
    assert (flag_names(flags) or "-", exact) == (expected_flags, expected_flags == "-")


@pytest.mark.parametrize("text, bits, flags", [
    ("0.1", 0x3FB999999999999A, "NX"), ("1.5", 0x3FF8000000000000, "-"), ("1e400", 0x7FF0000000000000, "OF|NX"),
    ("-1e400", 0xFFF0000000000000, "OF|NX"), ("2.4703282292062327e-324", 0x0, "UF|NX"),  # below half 2^-1074: 0
    ("5e-324", 0x1, "UF|NX"), ("-0", 0x8000000000000000, "-"), ("inf", 0x7FF0000000000000, "-"),
])
def test_decimal_in_format_fp64_as_python_reads_it(text: str, bits: int, flags: str) -> None:
    """FP64: CPython's float() is the correctly rounded decimal conversion (nearest even)."""
    import struct

    from ptonum.cli._common import decimal_in_format
    from ptonum.flags import flag_names

    assert struct.unpack(">Q", struct.pack(">d", float(text)))[0] == bits
    got = decimal_in_format(text, "FP64", "--value")
    assert (got[0], flag_names(got[2]) or "-", got[1]) == (bits, flags, flags == "-")


def test_decimal_in_format_names_the_option_for_a_bad_decimal() -> None:
    from ptonum.cli._common import decimal_in_format
    from ptonum.errors import UsageError

    with pytest.raises(UsageError, match=r"^--values\[3\]"):
        decimal_in_format("1_000", "FP32", "--values[3]")


def test_values_decimal_flags_of_decimals_binary64_cannot_hold() -> None:
    """1e50 overflows FP32 (it is above 2^128 - 2^103, where RNE goes to infinity): OF|NX; 1e-50 is below
    2^-126 (tiny) and not a multiple of 2^-149: UF|NX; 0.1 is no dyadic fraction: NX; 0x encodings are not
    rounded.  The status line stays TCVT's own (an FP32 inf source: OF|NX; +0: NV)."""
    from fractions import Fraction

    assert Fraction(10) ** 50 >= Fraction(2) ** 128 - Fraction(2) ** 103
    assert Fraction(1, 10 ** 50) < Fraction(2) ** -126 and (Fraction(1, 10 ** 50) * 2 ** 149).denominator != 1
    assert _read_flags("--values", "1e50,1e-50,0.1,0x3f800000,inf") == ["OF|NX", "UF|NX", "NX", "(encoding)", "-"]
    r = run("--values", "1e50")
    assert "decimals read as FP32 (rounded once, nearest even, IEEE 754): flags OF|NX (0x14)" in r.stdout
    assert r.stdout.rstrip().endswith("status flags (OR): OF|NX (0x14)")
    r = run("--values", "1e-50,0x3f800000", "--max-rows", "0")  # the summary of a large input counts them
    assert "decimal->FP32 flag UF" in r.stdout and "flags UF|NX (0x18)" in r.stdout
    r = run("--values", "0x3f800000")  # no decimal: no column, no line
    assert "decimal" not in r.stdout
