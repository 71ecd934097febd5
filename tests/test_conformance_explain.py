"""ptonum explain: traces end in the pto-spec ASL tests' expected results."""

from __future__ import annotations

from click.testing import CliRunner

from conftest import vectors_dir
from ptonum.cli import main
from ptonum.conformance.explain import explain_postprocess, explain_reduction, explain_tcvt

RUN = CliRunner(env={"COLUMNS": "250"})


def test_pipeline_002_lrelu_fp16() -> None:
    # tests/asl/arch/profile/matrix-postprocess/arch-exec-matrix-postprocess-pipeline-002.asl:
    # mode 32, LReLU alpha = FP32ToFP19(0.75), input 0xBF000BB0 -> FP16 0xB601, flags NX.
    ex = explain_postprocess(0xBF000BB0, pre_quant_mode=32, relu_mode=2, acc_type="FP32",
                             quant_param=0x1FC00 << 13, relu_param=0x1FA00)
    assert (ex.bits, ex.flags) == (0xB601, 0x10)
    text = ex.text()
    assert text.splitlines()[-2] == "destination FP16: 0xb601   flags: 0x10 (NX)"
    assert "MatrixSelectedMultiplier" in text and "NX: raised by step" in text
    r = RUN.invoke(main, ["explain", "postprocess", "--mode", "32", "--relu", "2", "--acc-type", "FP32",
                          "--acc", "0xBF000BB0", "--relu-param", "0x1FA00"])
    assert r.exit_code == 0, r.output
    assert "destination FP16: 0xb601   flags: 0x10 (NX)" in r.output


def test_quant_002_req8_wrap() -> None:
    # tests/asl/block/attributes/B.FPATR/block-exec-b-fpatr-quant-002.asl: REQ8 S32 70, scale 2.0, offset 0:
    # Sat=0 -> 0x8C with OF|NX, Sat=1 -> 0x7F with OF|NX.
    ex = explain_postprocess(70, pre_quant_mode=3, relu_mode=0, acc_type="S32", quant_param=0x20000 << 13)
    assert (ex.bits, ex.flags) == (0x8C, 0x14)
    ex = explain_postprocess(70, pre_quant_mode=3, relu_mode=0, acc_type="S32", quant_param=0x20000 << 13, sat=True)
    assert (ex.bits, ex.flags) == (0x7F, 0x14)
    assert "destination S8: 0x7f" in ex.text() and "OF: raised by step" in ex.text()


def test_reduction_int_min_abs() -> None:
    # tests/asl/arch/profile/matrix-postprocess/arch-exec-matrix-postprocess-001.asl: MaxAbs INT_MIN vs INT_MIN -> 0x7FFFFFFF, OF.
    ex = explain_reduction(0x80000000, 0x80000000, acc_type="S32", max_abs=True)
    assert (ex.bits, ex.flags) == (0x7FFFFFFF, 0x04)
    r = RUN.invoke(main, ["explain", "reduction", "--acc-type", "S32", "--max-abs", "--current", "0x80000000",
                          "--candidate", "0x80000000"])
    assert r.exit_code == 0 and "S32 result: 0x7fffffff   flags: 0x04 (OF)" in r.output
    assert "MatrixReductionAbsoluteWithFlags" in r.output


def test_tcvt_bf16_rounding() -> None:
    # tests/asl/tile/.../TCVT tile-bound-tcvt-e8m0-rounding-003.asl: BF16 1.5 -> 128 (RNE), 127 (RTM); NX.
    assert (explain_tcvt(0x3FC0, src_type="BF16", rmode="RNE").bits, explain_tcvt(0x3FC0, src_type="BF16", rmode="RTM").bits) == (128, 127)
    r = RUN.invoke(main, ["explain", "tcvt", "--src-type", "BF16", "--bits", "0x3fc0", "--rmode", "RTM"])
    assert r.exit_code == 0 and "E8M0: 0x7f   flags: 0x10 (NX)" in r.output
    assert "ReferenceE8M0RoundExponent" in r.output


def test_explain_row_matches_vector() -> None:
    path = vectors_dir() / "postprocess_element.csv.gz"
    r = RUN.invoke(main, ["explain", "--row", f"{path}:40000"])
    assert r.exit_code == 0, r.output
    lines = r.output.strip().splitlines()
    exp = lines[-1]
    assert exp.startswith("expected (vector): expected_bits=0x8000")
    assert any(ln.startswith("destination FP16: 0x8000   flags: 0x18") for ln in lines)
    r = RUN.invoke(main, ["explain", "--row", f"{vectors_dir() / 'decomposition.csv.gz'}:4"])
    assert r.exit_code == 0 and "exponent=-21" in r.output


def test_explain_bad_row_is_usage_error() -> None:
    r = RUN.invoke(main, ["explain", "--row", f"{vectors_dir() / 'relu_param_legal.csv.gz'}:1"])
    assert r.exit_code == 2 and "no data row" in r.output and "Traceback" not in r.output
