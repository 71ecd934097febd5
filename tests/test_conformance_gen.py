"""ptonum gen: generated files round-trip through ptonum check in both engines, are
byte-identical for a seed, and contain every boundary class (counted independently
of the model from the inputs alone)."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from ptonum.cli import main
from ptonum.conformance.check import check_file
from ptonum.conformance.gen import Filters, boundary_count, generate
from ptonum.conformance.schema import SCHEMAS

RUN = CliRunner(env={"COLUMNS": "250"})

SMALL = {
    "postprocess_element": ["--mode", "3", "--mode", "24", "--mode", "32", "--mode", "27", "--mode", "0", "--mode", "13"],
    "reduction_step": [],
    "tcvt_e8m0": [],
    "decomposition": ["--data-type", "E4M3", "--data-type", "FP32", "--data-type", "S8"],
    "fp32_to_fp19": [],
    "quant_param_legal": [],
    "relu_param_legal": [],
}


@pytest.mark.parametrize("op", sorted(SCHEMAS))
def test_gen_then_check_round_trips(op: str, tmp_path: Path) -> None:
    out = tmp_path / f"{op}.csv.gz"
    flt = Filters.parse(**_filters(SMALL[op]))
    n = boundary_count(op, flt) + 300
    r = RUN.invoke(main, ["gen", op, "--count", str(n), "--seed", "5", "--out", str(out), *SMALL[op]])
    assert r.exit_code == 0, r.output
    reps = check_file(str(out), ("fast", "reference"))
    for rep in reps:
        assert rep.rows == n and rep.ok, rep.failures[:2]
    again = tmp_path / "again.csv.gz"
    RUN.invoke(main, ["gen", op, "--count", str(n), "--seed", "5", "--out", str(again), *SMALL[op]])
    assert out.read_bytes() == again.read_bytes()
    other = tmp_path / "other.csv.gz"
    RUN.invoke(main, ["gen", op, "--count", str(n), "--seed", "6", "--out", str(other), *SMALL[op]])
    assert out.read_bytes() != other.read_bytes()


def _filters(args: list) -> dict:
    d: dict = {}
    for k, v in zip(args[::2], args[1::2]):
        d.setdefault(k.lstrip("-").replace("-", "_"), []).append(v)
    return d


def _fp32_value(b: int) -> Fraction:
    s, e, f = b >> 31, (b >> 23) & 0xFF, b & 0x7FFFFF
    v = Fraction(f, 1 << 149) if e == 0 else Fraction((1 << 23) | f, 1) * Fraction(2) ** (e - 150)
    return -v if s else v


def _fp19_value(b: int) -> Fraction:
    e, f = (b >> 10) & 0xFF, b & 0x3FF
    return Fraction((1 << 10) | f) * Fraction(2) ** (e - 137)


def test_boundary_classes_postprocess() -> None:
    flt = Filters.parse(mode=["3", "24", "32", "27", "17", "19", "13", "0"])
    n = boundary_count("postprocess_element", flt)
    _, b = generate("postprocess_element", n, 0, flt)
    acc = b["acc_bits"].astype(np.int64)
    mode = b["pre_quant_mode"]
    fp = np.isin(mode, [24, 32, 27]) | ((mode == 0) & (b["acc_type"] == 1))
    exp_all = (acc >> 23) & 0xFF
    frac = acc & 0x7FFFFF
    qnan = fp & (exp_all == 0xFF) & (frac >= 0x400000)
    snan = fp & (exp_all == 0xFF) & (frac != 0) & (frac < 0x400000)
    inf = fp & (exp_all == 0xFF) & (frac == 0)
    sub = fp & (exp_all == 0) & (frac != 0)
    for m in (24, 32, 27):
        for cls in (qnan, snan, inf, sub):
            for s in (0, 1):
                for neg in (0, 1):
                    assert np.count_nonzero(cls & (mode == m) & (b["sat"] == s) & ((acc >> 31) == neg)) > 0
        assert np.count_nonzero((mode == m) & (acc == 0x80000000)) > 0  # -0
    # exact ties (value exactly halfway between integers) for every rounding mode, S32 and FP32 -> S8
    for m, to_val in ((24, _fp32_value), (3, lambda x: Fraction(x - (1 << 32) if x >> 31 else x))):
        rows = np.flatnonzero((mode == m) & (b["relu_mode"] == 0))
        ties = {r: 0 for r in range(1, 8)}
        for i in rows:
            scale = _fp19_value(int(b["quant_param"][i] >> 13) & 0x7FFFF)
            v = to_val(int(acc[i])) * scale
            if v.denominator == 2:
                ties[int(b["rmode"][i])] += 1
        assert all(c > 0 for c in ties.values()), ties
    # offsets at both extremes (S9 for modes 3/24, S5 for 17, S17 for 19), both Sat values
    for m, w in ((3, 9), (24, 9), (17, 5), (19, 17)):
        raw = (b["quant_param"][mode == m] >> 37).astype(np.int64) & ((1 << w) - 1)
        off = np.where(raw >= 1 << (w - 1), raw - (1 << w), raw)
        assert off.min() == -(1 << (w - 1)) and off.max() == (1 << (w - 1)) - 1
        assert set(b["sat"][mode == m].tolist()) == {0, 1}
    # every scale class: min normal, max normal, 1, a non-power of two
    scales = set(((b["quant_param"][np.isin(mode, [3, 24, 27, 32])] >> 13) & 0x7FFFF).tolist())
    assert {0x00400, 0x3FBFF, 0x1FC00, 0x1FE00} <= scales
    # activation parameters: +0, min and max normal on the LReLU/PReLU path
    alphas = set((b["relu_param"][np.isin(b["relu_mode"], [2, 3])] & 0x7FFFF).tolist())
    assert {0x0, 0x00400, 0x3FBFF} <= alphas
    # shift mode: every shift code
    assert set(((b["quant_param"][mode == 13] >> 32) & 0xF).tolist()) == set(range(16))


def test_only_legal_parameter_words() -> None:
    from ptonum.fpatr import quant_param_legal, relu_param_legal

    _, b = generate("postprocess_element", 4000, 3)
    for m in np.unique(b["pre_quant_mode"]).tolist():
        sel = b["pre_quant_mode"] == m
        if m in (0, 1, 16):
            assert np.all(b["quant_param"][sel] == 0)
        else:
            assert np.all(quant_param_legal(m, b["quant_param"][sel]))
    assert np.all(relu_param_legal(b["relu_param"]))


def test_boundary_classes_tcvt() -> None:
    _, b = generate("tcvt_e8m0", boundary_count("tcvt_e8m0"), 0)
    fp32 = b["src_type"] == 1
    bits = b["src_bits"]
    for pat in (0x00400000, 0x003FFFFF, 0x7F000000, 0x7F7FFFFF, 0x7F800000, 0x7FC00000, 0x7F800001, 0x80000000, 0):
        for r in range(1, 8):
            for s in (0, 1):
                assert np.count_nonzero(fp32 & (bits == pat) & (b["rmode"] == r) & (b["sat"] == s)) >= 1


def test_gen_bad_filter_is_one_line_error() -> None:
    r = RUN.invoke(main, ["gen", "postprocess_element", "--count", "5", "--mode", "7"])
    assert r.exit_code == 2 and "Traceback" not in r.output


def test_gen_creates_output_directories_and_validates_count(tmp_path) -> None:
    out = tmp_path / "new" / "dir" / "t.csv"
    r = CliRunner().invoke(main, ["gen", "tcvt_e8m0", "--count", "5", "--rmode", "3", "--out", str(out)])
    assert r.exit_code == 0, r.output
    lines = out.read_text().splitlines()
    assert lines[0] == "src_type,src_bits,rmode,sat,expected_bits,expected_flags" and len(lines) == 6
    assert all(ln.split(",")[2] == "RTM" for ln in lines[1:])
    r = CliRunner().invoke(main, ["gen", "tcvt_e8m0", "--count", "-1"])
    assert r.exit_code == 2 and "Traceback" not in r.output
    r = CliRunner().invoke(main, ["gen", "tcvt_e8m0", "--count", "5", "--out", str(tmp_path)])
    assert r.exit_code == 2 and r.stderr.startswith("ptonum gen: error:") and "is a directory" in r.stderr


_TAKES = {  # operation -> the filters its generator uses (the gen --help table)
    "postprocess_element": {"--mode", "--relu", "--rmode", "--sat", "--acc-type"},
    "reduction_step": {"--acc-type"},
    "tcvt_e8m0": {"--src-type", "--rmode", "--sat"},
    "decomposition": {"--data-type"},
    "fp32_to_fp19": set(),
    "quant_param_legal": {"--mode"},
    "relu_param_legal": set(),
}
_VALUE = {"--mode": "REQ8", "--relu": "RELU", "--rmode": "RNE", "--sat": "1", "--acc-type": "S32",
          "--src-type": "FP16", "--data-type": "E4M3"}


@pytest.mark.parametrize("op", sorted(_TAKES))
def test_gen_refuses_filters_that_do_not_apply(op: str, tmp_path) -> None:
    from click.testing import CliRunner

    from ptonum.cli import main

    for opt, value in _VALUE.items():
        r = CliRunner().invoke(main, ["gen", op, "--count", "2", opt, value, "--out", str(tmp_path / "v.csv")])
        if opt in _TAKES[op]:
            assert r.exit_code == 0, (opt, r.output)
        else:
            assert r.exit_code == 2, (opt, r.output)
            assert f"{opt} does not apply to {op}" in r.stderr
    help_text = CliRunner().invoke(main, ["gen", "--help"]).output
    line = next(ln for ln in help_text.splitlines() if f"{op}:" in ln)
    assert all(o in line for o in _TAKES[op]) and (_TAKES[op] or "no filter" in line)


def test_gen_out_dash_is_stdout_and_check_dash_reads_stdin(tmp_path) -> None:
    """try14 #18: `gen --out -` wrote a file named "-"; `check -` read it instead of standard input."""
    import subprocess
    import sys

    gen = subprocess.run([sys.executable, "-m", "ptonum", "gen", "tcvt_e8m0", "--count", "5", "--out", "-"],
                         cwd=tmp_path, capture_output=True, timeout=300)
    assert gen.returncode == 0, gen.stderr
    assert gen.stdout.startswith(b"src_type,src_bits,rmode,sat,expected_bits,expected_flags\n")
    assert gen.stdout.count(b"\n") == 6 and not (tmp_path / "-").exists()
    chk = subprocess.run([sys.executable, "-m", "ptonum", "check", "-"], input=gen.stdout, cwd=tmp_path,
                         capture_output=True, timeout=300)
    assert chk.returncode == 0, chk.stderr
    assert b"PASS: 5 row(s) checked" in chk.stdout
