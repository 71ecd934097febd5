"""``ptonum postprocess``: the bundled-example report, file input/output plumbing, rejections.

The file tests are consistency tests of the CLI plumbing: the files it writes
must equal what :func:`ptonum.fpatr.postprocess` returns for the same inputs
(the model itself is tested against the ASL vectors elsewhere).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from ptonum.cli import main
from ptonum.example import RUNS, load_example
from ptonum.fpatr.attributes import FPATRAttributes
from ptonum.fpatr.params import quant_param, relu_param
from ptonum.fpatr.tile import postprocess


@pytest.fixture(scope="module")
def ex():
    return load_example()


def _invoke(args):
    runner = CliRunner()
    return runner.invoke(main, ["postprocess", *map(str, args)], catch_exceptions=False)


def test_default_run_prints_every_representative_mode(ex):
    res = _invoke([])
    assert res.exit_code == 0, res.output
    out = res.stdout
    for run in RUNS:
        assert run.mode in out, run.mode
    for word in ("S32->S8", "S32->S4X2", "S32->S16", "S32->FP16", "S32->BF16", "FP32->FP16", "FP32->BF16",
                 "FP32->E4M3", "FP32->HiF8", "RowMax", "GroupMax/8", "MaxAbs", "SQNR", "max|err|", "top-1",
                 "256x32", "256x10", "256x4", "NX"):
        assert word in out, word


def test_help_has_examples():
    res = _invoke(["--help"])
    assert res.exit_code == 0
    assert "Examples" in res.stdout and "--attributes" in res.stdout and "--quant-tile" in res.stdout


def test_npy_input_with_attribute_word_and_quant_tile(ex, tmp_path):
    acc = ex["acc_hidden_s32"]
    np.save(tmp_path / "acc.npy", acc)
    words = np.array([int(quant_param(float(s), 0, mode="VREQ8")) for s in ex["scale_vreq8"]], np.uint64)
    np.save(tmp_path / "q.npy", words.reshape(1, -1))
    attrs = FPATRAttributes.from_fields("VREQ8", "RELU", row_max_en=True)
    out = tmp_path / "out"
    res = _invoke([tmp_path / "acc.npy", "--attributes", hex(attrs.word), "--quant-tile", tmp_path / "q.npy",
                   "--rmode", "RNE", "--sat", "--out-dir", out])
    assert res.exit_code == 0, res.output
    want = postprocess(acc, attributes=attrs, quant_tile=words.reshape(1, -1), rmode="RNE", sat=True)
    d = np.load(out / "acc.d.npy")
    assert d.dtype == np.uint8 and np.array_equal(d, want.d_bits)
    assert np.array_equal(np.load(out / "acc.row_max.npy"), want.row_max_bits)
    assert "S8" in res.stdout and want.flag_names in res.stdout and "RowMaxOut" in res.stdout


def test_bin_input_and_bin_outputs_s4x2(ex, tmp_path):
    acc = ex["acc_hidden_s32"]
    acc.view(np.uint32).astype("<u4").tofile(tmp_path / "acc.bin")
    out = tmp_path / "o"
    res = _invoke([tmp_path / "acc.bin", "--dtype", "uint32", "--shape", "256x32", "--acc-type", "S32",
                   "--mode", "REQ4", "--relu", "RELU", "--scale", float(ex["scale_req4"]), "--offset", -8,
                   "--sat", "--bin", "--out-dir", out])
    assert res.exit_code == 0, res.output
    want = postprocess(acc.view(np.uint32), acc_type="S32", attributes={"pre_quant_mode": "REQ4", "relu_mode": "RELU"},
                       quant_param=int(quant_param(float(ex["scale_req4"]), -8, mode="REQ4")), sat=True)
    assert np.array_equal(np.load(out / "acc.d.npy"), want.d_bits)
    assert np.array_equal(np.fromfile(out / "acc.d.bin", dtype=np.uint8).reshape(256, 32), want.d_bits)
    packed = want.s4x2_packed()
    assert np.array_equal(np.load(out / "acc.d_packed.npy"), packed)
    assert (out / "acc.d_packed.bin").read_bytes() == packed.tobytes()
    assert "S4X2" in res.stdout


def test_npz_key_fp32_groupmax_and_progress(ex, tmp_path):
    np.savez(tmp_path / "tiles.npz", hidden=ex["acc_hidden_fp32"], logits=ex["acc_logits_fp32"])
    out = tmp_path / "o"
    scale = float(ex["scale_fp8_hidden"])
    res = _invoke([tmp_path / "tiles.npz", "--key", "hidden", "--mode", "QF322FP8_PRE", "--scale", scale,
                   "--group-n", 8, "--group-max", "--row-max", "--max-abs", "--progress", "--out-dir", out,
                   "--bin"])
    assert res.exit_code == 0, res.output
    want = postprocess(ex["acc_hidden_fp32"], attributes={"pre_quant_mode": "QF322FP8_PRE", "group_n": 8,
                                                         "group_max_en": True, "row_max_en": True, "max_abs_en": True},
                       quant_param=int(quant_param(scale, mode="QF322FP8_PRE")))
    assert np.array_equal(np.load(out / "tiles.hidden.d.npy"), want.d_bits)
    assert np.array_equal(np.load(out / "tiles.hidden.group_max.npy"), want.group_max_bits)
    assert np.array_equal(np.fromfile(out / "tiles.hidden.group_max.bin", "<u4").reshape(256, 4), want.group_max_bits)
    assert np.array_equal(np.load(out / "tiles.hidden.row_max.npy"), want.row_max_bits)
    assert want.flag_names in res.stdout and "GroupMaxOut" in res.stdout


def test_vector_mode_scale_broadcast_and_scalar_alpha(ex, tmp_path):
    acc = ex["acc_logits_fp32"]
    np.save(tmp_path / "a.npy", acc)
    out = tmp_path / "o"
    res = _invoke([tmp_path / "a.npy", "--mode", "VQF322B8_PRE", "--relu", "LRELU", "--alpha", 0.125,
                   "--scale", 8, "--offset", 3, "--rmode", "RTZ", "--out-dir", out])
    assert res.exit_code == 0, res.output
    qw = int(quant_param(8.0, 3, mode="VQF322B8_PRE"))
    want = postprocess(acc, attributes={"pre_quant_mode": "VQF322B8_PRE", "relu_mode": "LRELU"},
                       quant_tile=np.full((1, 10), qw, np.uint64), relu_param=int(relu_param(0.125)), rmode="RTZ")
    assert np.array_equal(np.load(out / "a.d.npy"), want.d_bits)


# ---------------------------------------------------------------------------
# Rejections: exit status != 0, one line naming the reason, no output file


def _assert_rejected(res, out: Path, *needles: str) -> None:
    assert res.exit_code == 2, res.output
    err = res.stderr.strip()
    assert err.count("\n") == 0, err
    assert err.startswith("ptonum postprocess: error:"), err
    assert "Traceback" not in res.output
    for n in needles:
        assert n in err, (n, err)
    assert not out.exists() or not any(out.iterdir())


@pytest.fixture()
def acc_file(ex, tmp_path):
    p = tmp_path / "acc.npy"
    np.save(p, ex["acc_hidden_s32"])
    return p


def test_reject_reserved_mode_word(acc_file, tmp_path):
    out = tmp_path / "o"
    res = _invoke([acc_file, "--attributes", "0xfc002023", "--out-dir", out])
    _assert_rejected(res, out, "PreQuantMode", "63", "reserved")


def test_reject_illegal_field_combination(acc_file, tmp_path):
    out = tmp_path / "o"
    res = _invoke([acc_file, "--mode", "REQ8", "--scale", 0.5, "--max-abs", "--out-dir", out])
    _assert_rejected(res, out, "MaxAbs")


def test_reject_wrong_accumulator_class(tmp_path, ex):
    p = tmp_path / "f.npy"
    np.save(p, ex["acc_hidden_fp32"])
    out = tmp_path / "o"
    res = _invoke([p, "--mode", "REQ8", "--scale", 0.5, "--out-dir", out])
    _assert_rejected(res, out, "REQ8")


def test_reject_bad_quant_param_word(acc_file, tmp_path):
    out = tmp_path / "o"
    res = _invoke([acc_file, "--mode", "REQ8", "--quant-param", "0x1", "--out-dir", out])
    _assert_rejected(res, out, "--quant-param", "[12:0]")


def test_reject_subnormal_scale_in_tile(acc_file, tmp_path):
    words = np.full((1, 32), int(quant_param(0.5, mode="VREQ8")), np.uint64)
    words[0, 17] = 0x1 << 13  # FP19 subnormal scale
    np.save(tmp_path / "q.npy", words)
    out = tmp_path / "o"
    res = _invoke([acc_file, "--mode", "VREQ8", "--quant-tile", tmp_path / "q.npy", "--out-dir", out])
    _assert_rejected(res, out, "17")


def test_reject_inexact_scale_with_hint(acc_file, tmp_path):
    out = tmp_path / "o"
    res = _invoke([acc_file, "--mode", "REQ8", "--scale", 0.1, "--out-dir", out])
    _assert_rejected(res, out, "--scale-rounding rne")


def test_reject_wrong_quant_tile_shape(acc_file, tmp_path):
    np.save(tmp_path / "q.npy", np.full((1, 31), int(quant_param(0.5, mode="VREQ8")), np.uint64))
    out = tmp_path / "o"
    res = _invoke([acc_file, "--mode", "VREQ8", "--quant-tile", tmp_path / "q.npy", "--out-dir", out])
    _assert_rejected(res, out, "1 x 32")


def test_reject_bin_size_mismatch(ex, tmp_path):
    ex["acc_hidden_s32"].tofile(tmp_path / "a.bin")
    out = tmp_path / "o"
    res = _invoke([tmp_path / "a.bin", "--dtype", "int32", "--shape", "256x31", "--mode", "REQ8", "--scale", 0.5,
                   "--out-dir", out])
    _assert_rejected(res, out, "bytes")


def test_reject_missing_file(tmp_path):
    out = tmp_path / "o"
    res = _invoke([tmp_path / "nope.npy", "--mode", "REQ8", "--scale", 0.5, "--out-dir", out])
    _assert_rejected(res, out, "no such file", "nope.npy")


def test_reject_missing_parameter_and_options_without_input(acc_file, tmp_path):
    out = tmp_path / "o"
    res = _invoke([acc_file, "--mode", "REQ8", "--out-dir", out])
    _assert_rejected(res, out, "--quant-param", "--scale")
    res = _invoke(["--mode", "REQ8"])
    assert res.exit_code == 2 and "needs an ACC" in res.stderr


def test_rejection_leaves_existing_outputs_untouched(ex, acc_file, tmp_path):
    out = tmp_path / "o"
    ok = _invoke([acc_file, "--mode", "REQ8", "--scale", 0.5, "--sat", "--out-dir", out])
    assert ok.exit_code == 0, ok.output
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    bad = _invoke([acc_file, "--mode", "REQ8", "--scale", 0.5, "--rmode", "RXX", "--out-dir", out])
    assert bad.exit_code == 2 and bad.stderr.count("\n") == 1
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_row_max_init_bin_and_prelu_tile(ex, tmp_path):
    acc = ex["acc_hidden_s32"]
    np.save(tmp_path / "a.npy", acc)
    rmi = np.arange(-128, 128, dtype=np.int32).reshape(256, 1) * 100
    rmi.astype("<i4").tofile(tmp_path / "rmi.bin")
    alphas = np.array([int(relu_param(0.0 if c % 2 else 2.0**-(c % 5))) for c in range(32)], np.uint64)
    alphas.astype("<u8").tofile(tmp_path / "alpha.bin")
    out = tmp_path / "o"
    res = _invoke([tmp_path / "a.npy", "--mode", "VDEQS16", "--relu", "PRELU", "--relu-tile", tmp_path / "alpha.bin",
                   "--scale", 0.25, "--offset", -5, "--row-max", "--row-max-init", "--max-abs",
                   "--row-max-in", tmp_path / "rmi.bin", "--rmode", "RNA", "--out-dir", out])
    assert res.exit_code == 0, res.output
    want = postprocess(acc, attributes={"pre_quant_mode": "VDEQS16", "relu_mode": "PRELU", "row_max_en": True,
                                        "row_max_init": True, "max_abs_en": True},
                       quant_tile=np.full((1, 32), int(quant_param(0.25, -5, mode="VDEQS16")), np.uint64),
                       relu_tile=alphas.reshape(1, 32), row_max_in=rmi, rmode="RNA")
    assert np.array_equal(np.load(out / "a.d.npy"), want.d_bits)
    assert np.array_equal(np.load(out / "a.row_max.npy"), want.row_max_bits)


# ---------------------------------------------------------------------------
# New-user defects (regressions)


def test_rmode_codes_and_aliases_print_canonical_name(acc_file, tmp_path):
    # B.DATR RMode 3 = RTM (rounding.asl NumericRoundingMode); RDN is its alias
    want = postprocess(np.load(acc_file), attributes={"pre_quant_mode": "REQ8"},
                       quant_param=int(quant_param(0.5, mode="REQ8")), rmode="RTM")
    for k, given in enumerate(("3", "RDN", "rtm")):
        out = tmp_path / f"o{k}"
        res = _invoke([acc_file, "--mode", "REQ8", "--scale", 0.5, "--rmode", given, "--out-dir", out])
        assert res.exit_code == 0, res.output
        assert "RMode=RTM" in res.stdout and "RDN" not in res.stdout
        assert np.array_equal(np.load(out / "acc.d.npy"), want.d_bits)
    res = _invoke([acc_file, "--mode", "REQ8", "--scale", 0.5, "--rmode", "8", "--out-dir", tmp_path / "x"])
    _assert_rejected(res, tmp_path / "x", "--rmode", "0-7")
    assert "RDN" in _invoke(["--help"]).stdout


def test_outputs_follow_umask_and_missing_dirs_are_created(acc_file, tmp_path):
    import os

    old = os.umask(0o022)
    try:
        out = tmp_path / "a" / "b"
        res = _invoke([acc_file, "--mode", "REQ8", "--scale", 0.5, "--bin", "--out-dir", out])
    finally:
        os.umask(old)
    assert res.exit_code == 0, res.output
    files = sorted(out.iterdir())
    assert files and all((p.stat().st_mode & 0o777) == 0o644 for p in files), [oct(p.stat().st_mode) for p in files]


def test_out_dir_that_is_a_file_is_one_line(acc_file, tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    res = _invoke([acc_file, "--mode", "REQ8", "--scale", 0.5, "--out-dir", f])
    assert res.exit_code == 2 and res.stderr.count("\n") == 1 and "not a directory" in res.stderr, res.output


def test_shape_with_npy_is_rejected(acc_file, tmp_path):
    out = tmp_path / "o"
    res = _invoke([acc_file, "--mode", "REQ8", "--scale", 0.5, "--shape", "256x32", "--out-dir", out])
    _assert_rejected(res, out, "--dtype/--shape describe a raw .bin ACC file")


def test_directory_and_big_endian_acc(ex, tmp_path):
    out = tmp_path / "o"
    res = _invoke([tmp_path, "--mode", "REQ8", "--scale", 0.5, "--out-dir", out])
    _assert_rejected(res, out, "is a directory")
    acc = ex["acc_hidden_s32"]
    np.save(tmp_path / "be.npy", acc.astype(">i4"))
    res = _invoke([tmp_path / "be.npy", "--mode", "REQ8", "--scale", 0.5, "--out-dir", out])
    assert res.exit_code == 0, res.output
    want = postprocess(acc, attributes={"pre_quant_mode": "REQ8"}, quant_param=int(quant_param(0.5, mode="REQ8")))
    assert np.array_equal(np.load(out / "be.d.npy"), want.d_bits)


def test_scale_messages_name_options_and_suggest_rne_only_when_it_works(acc_file, tmp_path):
    out = tmp_path / "o"
    for scale in (1e-40, 1e39):  # rne gives an FP19 subnormal / infinity: no suggestion
        res = _invoke([acc_file, "--mode", "REQ8", "--scale", scale, "--out-dir", out])
        _assert_rejected(res, out, "--scale", "positive normal")
        assert "rne" not in res.stderr and "rounding=" not in res.stderr
    res = _invoke([acc_file, "--mode", "REQ8", "--scale", 0.1, "--out-dir", out])
    _assert_rejected(res, out, "--scale-rounding rne")
    assert "rounding='rne'" not in res.stderr
    res = _invoke([acc_file, "--mode", "REQ8", "--scale", 0.5, "--offset", 1000, "--out-dir", out])
    _assert_rejected(res, out, "--offset")
    res = _invoke([acc_file, "--mode", "REQ8", "--quant-param", "0xBF800000", "--out-dir", out])
    _assert_rejected(res, out, "--quant-param =")
    assert "quant_param" not in res.stderr


def test_quant_tile_for_scalar_mode_and_relu_tile_for_lrelu(acc_file, tmp_path):
    np.save(tmp_path / "q.npy", np.full((1, 32), int(quant_param(0.5, mode="VREQ8")), np.uint64))
    out = tmp_path / "o"
    res = _invoke([acc_file, "--mode", "REQ8", "--quant-tile", tmp_path / "q.npy", "--out-dir", out])
    _assert_rejected(res, out, "PreQuantMode REQ8", "scalar parameter", "--scale/--quant-param, not --quant-tile")
    res = _invoke([acc_file, "--mode", "REQ8", "--scale", 0.5, "--relu", "LRELU", "--relu-tile", tmp_path / "q.npy",
                   "--out-dir", out])
    _assert_rejected(res, out, "--alpha/--relu-param, not --relu-tile")


def test_shift_option_builds_the_shift_word(acc_file, tmp_path):
    from ptonum.fpatr.params import shift_param_word

    acc = np.load(acc_file)
    out = tmp_path / "o"
    res = _invoke([acc_file, "--mode", "13", "--scale", 1, "--out-dir", out])
    _assert_rejected(res, out, "--shift N")
    res = _invoke([acc_file, "--mode", "SHIFTS322S16", "--shift", 4, "--out-dir", out])
    assert res.exit_code == 0, res.output
    want = postprocess(acc, attributes={"pre_quant_mode": 13}, quant_param=shift_param_word(shift=4))
    assert np.array_equal(np.load(out / "acc.d.npy"), want.d_bits)
    res = _invoke([acc_file, "--mode", "12", "--shift", 16, "--out-dir", out])
    assert res.exit_code == 0, res.output
    want = postprocess(acc, attributes={"pre_quant_mode": 12},
                       quant_tile=np.full((1, 32), shift_param_word(shift=16), np.uint64))
    assert np.array_equal(np.load(out / "acc.d.npy"), want.d_bits)
    assert _invoke([acc_file, "--mode", "12", "--shift", 17]).exit_code == 2


def test_flags_json_labelled_summary_integer_ranges_and_npz_naming(ex, tmp_path):
    import json

    acc = ex["acc_hidden_s32"]
    np.savez(tmp_path / "z.npz", acc=acc, other=acc)
    for spec, extra in ((f"{tmp_path / 'z.npz'}:acc", []), (str(tmp_path / "z.npz"), ["--key", "acc"])):
        out = tmp_path / ("o1" if extra else "o2")
        res = _invoke([spec, *extra, "--mode", "VREQ8", "--relu", "RELU", "--row-max", "--group-max", "--group-n", 16,
                       "--scale", 0.5, "--rmode", "RDN", "--sat", "--out-dir", out])
        assert res.exit_code == 0, res.output
        assert sorted(p.name for p in out.iterdir()) == ["z.acc.d.npy", "z.acc.flags.json", "z.acc.group_max.npy",
                                                         "z.acc.row_max.npy"]
        want = postprocess(acc, attributes={"pre_quant_mode": "VREQ8", "relu_mode": "RELU", "row_max_en": True,
                                            "group_max_en": True, "group_n": 16},
                           quant_tile=np.full((1, 32), int(quant_param(0.5, mode="VREQ8")), np.uint64),
                           rmode="RTM", sat=True)
        doc = json.loads((out / "z.acc.flags.json").read_text())
        assert doc["flags"] == want.flags and doc["flag_names"] == want.flag_names  # "OF|NX", as printed
        assert doc["fpatr_word"] == f"{want_word(want):#010x}"
        assert doc["fpatr"]["PreQuantMode"] == "VREQ8" and doc["fpatr"]["RowMaxEn"] == 1 and doc["fpatr"]["GroupN"] == 16
        assert doc["rmode"] == "RTM" and doc["sat"] == 1 and doc["dst_type"] == "S8" and doc["acc_type"] == "S32"
        assert doc["datr"] == {"RMode": "RTM", "RModeCode": 3, "Sat": 1}
        assert doc["shapes"]["d"] == [256, 32] and doc["shapes"]["group_max"] == [256, 2]
        assert doc["source"] == os.path.abspath(tmp_path / "z.npz") and doc["source_key"] == "acc"
        assert "PreQuantMode=VREQ8 ReluMode=RELU GroupN=16 RowMaxEn=1 GroupMaxEn=1" in res.stdout
        rm = np.asarray(want.row_max)
        assert f"values {int(rm.min())} .. {int(rm.max())}" in res.stdout


@pytest.mark.parametrize("order", ["C", "F"])
def test_flags_json_names_the_acc_it_was_computed_from(tmp_path, monkeypatch, order):
    """STEM.flags.json says which ACC gave it: the file's absolute path and the SHA-256 of its values as
    little-endian 4-byte words row by row, the same for a big-endian or column-major file of the same values
    (break-findings stop 22: six runs into one folder left no trace of which input won)."""
    import hashlib
    import json

    rng = np.random.default_rng(7)
    acc = rng.integers(-2**31, 2**31, size=(40, 24), dtype=np.int64).astype(np.int32)
    want = hashlib.sha256(acc.astype("<i4").tobytes(order="C")).hexdigest()
    monkeypatch.chdir(tmp_path)
    docs = []
    for name, arr in (("le.npy", acc), ("be.npy", acc.astype(">i4"))):
        np.save(tmp_path / name, np.asarray(arr, order=order))
        res = _invoke([name, "--mode", "REQ8", "--scale", 0.5, "--out-dir", "o"])  # a relative path, as typed
        assert res.exit_code == 0, res.output
        docs.append(json.loads((tmp_path / "o" / f"{name[:-4]}.flags.json").read_text()))
    assert [d["source"] for d in docs] == [str(tmp_path / "le.npy"), str(tmp_path / "be.npy")]
    assert [d["source_key"] for d in docs] == [None, None]
    assert [d["acc_sha256"] for d in docs] == [want, want]
    other = acc.copy()
    other[39, 23] ^= 1  # one bit of one element
    np.save(tmp_path / "le.npy", other)
    assert _invoke(["le.npy", "--mode", "REQ8", "--scale", 0.5, "--out-dir", "o"]).exit_code == 0
    doc = json.loads((tmp_path / "o" / "le.flags.json").read_text())
    assert doc["acc_sha256"] == hashlib.sha256(other.astype("<i4").tobytes()).hexdigest() != want


def want_word(res) -> int:
    return FPATRAttributes.from_fields("VREQ8", "RELU", group_n=16, row_max_en=True, group_max_en=True).word


@pytest.mark.parametrize("width", [80, 100])
def test_example_report_fits_the_terminal(width):
    import io

    from rich.console import Console

    from ptonum.cli.postprocess_cmd import _run_example

    buf = io.StringIO()
    _run_example(Console(file=buf, width=width, highlight=False, force_terminal=False), "fast")
    text = buf.getvalue()
    lines = text.splitlines()
    assert max(len(ln.rstrip()) for ln in lines) <= width
    assert "…" not in text
    # every header, number and note is whole (nothing folded across lines)
    for word in ("top-1 %", "max|err|", "SQNR dB", "GroupMaxOut", "RowMaxOut", "100.0/98.0", "FP32->E4M3",
                 "QS322BF16_PRE", "GroupMax/8"):
        assert word in text, word
    for run in RUNS:
        assert any(ln.strip().endswith(f"{run.mode}: {run.note}") for ln in lines), run.note


def test_small_tile_imports_no_heavy_library(tmp_path: Path) -> None:
    """Start-up (issue 11 item 11): `ptonum postprocess` on an 8x16 tile, which prints no table,
    loads only its own command: neither numba (the kernels serve large calls only) nor rich (tables,
    progress bars and help only), matplotlib, dask, distributed, zarr, nor another command's module
    or the conformance/example packages.  Structural, not timed: the modules in ``sys.modules`` at
    exit (``-X importtime`` misses modules loaded with importlib.import_module, as the commands are)."""
    import json
    import os
    import subprocess
    import sys

    acc = tmp_path / "acc.npy"
    np.save(acc, (np.arange(128, dtype=np.int32).reshape(8, 16) - 64) * 1000)
    env = {k: v for k, v in os.environ.items() if k not in ("PTONUM_KERNEL_MIN_ELEMENTS", "PTONUM_DISABLE_NUMBA")}
    dump = tmp_path / "modules.json"
    probe = ("import atexit, json, sys\n"
             f"atexit.register(lambda: open({str(dump)!r}, 'w').write(json.dumps(sorted(sys.modules))))\n"
             "from ptonum.cli import main\nmain()\n")
    r = subprocess.run([sys.executable, "-c", probe, "postprocess", str(acc), "--mode", "REQ8", "--scale", "0.0078125",
                        "--out-dir", str(tmp_path)], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert (tmp_path / "acc.d.npy").exists() and "flags 0x14 OF|NX" in r.stdout
    loaded = set(json.loads(dump.read_text()))
    assert {"numpy", "ptonum.cli.postprocess_cmd", "ptonum.fpatr.tile"} <= loaded  # the list is real
    for heavy in ("numba", "llvmlite", "rich", "matplotlib", "dask", "distributed", "zarr", "sklearn",
                  "ptonum.kernels.postprocess", "ptonum.conformance", "ptonum.example",
                  "zipfile", "shutil", "lzma"):  # (these load compression libraries; hashlib, ~4 ms, is
        # loaded for STEM.flags.json's acc_sha256: a golden record names the ACC it was computed from)
        assert not any(m == heavy or m.startswith(heavy + ".") for m in loaded), heavy
    commands = {m for m in loaded if m.startswith("ptonum.cli.") and m.endswith("_cmd")}
    assert commands <= {"ptonum.cli.postprocess_cmd", "ptonum.cli.compile_cmd"}, commands
    # and no other large library slipped in: a bare `import numpy` loads ~170 modules, this run ~280
    # (rich alone would add ~70)
    base = subprocess.run([sys.executable, "-c", "import json, sys, numpy; print(json.dumps(sorted(sys.modules)))"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert len(loaded - set(json.loads(base.stdout))) <= 160, sorted(loaded - set(json.loads(base.stdout)))


def test_rerun_removes_the_earlier_outputs_of_the_stem(tmp_path: Path) -> None:
    """OUT_DIR never mixes two runs of one STEM: a run without --row-max/--bin takes away the
    STEM.row_max.npy and .bin files of an earlier run (in the same commit as its own outputs) and
    says so; files of other stems and the input stay."""
    import json

    acc = tmp_path / "acc.npy"
    np.save(acc, (np.arange(128, dtype=np.int32).reshape(8, 16) - 64) * 1000)
    out = tmp_path / "out"
    out.mkdir()
    (out / "other.row_max.npy").write_bytes(b"not ours")
    (out / "acc.notes.txt").write_text("the user's")
    base = ["postprocess", str(acc), "--mode", "REQ8", "--scale", "0.0078125", "--out-dir", str(out)]
    r = CliRunner().invoke(main, base + ["--row-max", "--bin"])
    assert r.exit_code == 0, r.output
    assert {"acc.row_max.npy", "acc.row_max.bin", "acc.d.bin"} <= {p.name for p in out.iterdir()}
    r = CliRunner().invoke(main, base)
    assert r.exit_code == 0, r.output
    ours = sorted(p.name for p in out.iterdir() if p.name.startswith("acc."))
    assert ours == ["acc.d.npy", "acc.flags.json", "acc.notes.txt"]
    assert json.loads((out / "acc.flags.json").read_text())["files"] == ["acc.d.npy", "acc.flags.json"]
    assert (f"removed an earlier run's outputs of acc: {out / 'acc.d.bin'}, {out / 'acc.row_max.npy'}, "
            f"{out / 'acc.row_max.bin'}") in r.output
    assert (out / "other.row_max.npy").read_bytes() == b"not ours"
    # a rejected run removes nothing
    CliRunner().invoke(main, base + ["--row-max"])
    r = CliRunner().invoke(main, base + ["--shift", "3"])
    assert r.exit_code == 2
    assert (out / "acc.row_max.npy").exists()


def test_an_input_among_the_stems_outputs_is_refused_before_any_work(tmp_path: Path) -> None:
    acc = tmp_path / "acc.npy"
    np.save(acc, np.arange(8, dtype=np.int32).reshape(2, 4))
    words = tmp_path / "acc.row_max.npy"  # named like an output of stem acc in the same folder
    np.save(words, np.full((1, 4), quant_param(1.0, 0, mode="VREQ8"), dtype=np.uint64))
    r = CliRunner().invoke(main, ["postprocess", str(acc), "--mode", "VREQ8", "--quant-tile", str(words),
                                  "--out-dir", str(tmp_path)])
    assert r.exit_code == 2
    assert r.stderr.startswith(f"ptonum postprocess: error: --out-dir: {words} is an input of this run")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["acc.npy", "acc.row_max.npy"]


def test_summary_prints_paths_as_they_are(tmp_path: Path) -> None:
    """The summary is plain text: an --out-dir with brackets is printed whole (rich markup read
    `o[b]x` as a bold tag and printed `ox/acc.d.npy`)."""
    acc = tmp_path / "acc.npy"
    np.save(acc, np.arange(8, dtype=np.int32).reshape(2, 4))
    out = tmp_path / "o[b]x"
    r = CliRunner().invoke(main, ["postprocess", str(acc), "--mode", "REQ8", "--scale", "1", "--out-dir", str(out)])
    assert r.exit_code == 0, r.output
    assert f"wrote {out / 'acc.d.npy'}, {out / 'acc.flags.json'}" in r.output
    assert (out / "acc.d.npy").exists()


def test_summary_head_is_bold_on_a_terminal_only() -> None:
    import io

    from ptonum.cli._common import TextOut

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    tty, pipe = Terminal(), io.StringIO()
    for f in (tty, pipe):
        TextOut(f).print(" rest [x]", head="PreQuantMode=REQ8")
    assert tty.getvalue() == "\x1b[1mPreQuantMode=REQ8\x1b[0m rest [x]\n"
    assert pipe.getvalue() == "PreQuantMode=REQ8 rest [x]\n"


@pytest.mark.parametrize("cmd", ["postprocess", "compare"])
def test_engine_help_names_the_compiled_kernels(cmd: str) -> None:
    r = CliRunner(env={"COLUMNS": "200"}).invoke(main, [cmd, "--help"])
    assert r.exit_code == 0 and "compiled numba kernels" in " ".join(r.output.split())


def test_redirected_stderr_gets_no_progress_line(tmp_path, monkeypatch):
    """The default progress bar is drawn only on a terminal: redirected, rich left a blank line on stderr."""
    import ptonum.cli.postprocess_cmd

    monkeypatch.setattr(ptonum.cli.postprocess_cmd, "PROGRESS_ELEMENTS", 4)  # a 2 x 8 tile would show a bar
    acc = tmp_path / "acc.npy"
    np.save(acc, np.arange(-8, 8, dtype=np.int32).reshape(2, 8))
    r = CliRunner().invoke(main, ["postprocess", str(acc), "--mode", "SHIFTS322S16", "--shift", "1",
                                  "--out-dir", str(tmp_path)])
    assert r.exit_code == 0, r.output
    assert r.stderr == ""


def test_explicit_progress_on_a_redirected_stderr_writes_plain_lines(tmp_path):
    """``--progress`` with stderr in a file or pipe: plain ``ptonum: progress:`` lines, each tenth of the
    work at most once, ending at 100% (rich's transient bar left only a blank line there)."""
    import re

    acc = tmp_path / "acc.npy"
    np.save(acc, np.arange(-256, 256, dtype=np.int32).reshape(64, 8))
    r = CliRunner().invoke(main, ["postprocess", str(acc), "--mode", "SHIFTS322S16", "--shift", "1",
                                  "--out-dir", str(tmp_path), "--progress", "--engine", "reference"])
    assert r.exit_code == 0, r.output
    lines = r.stderr.splitlines()
    assert lines and all(re.fullmatch(r"ptonum: progress: post-processing rows (\d+)/64 \((\d+)%\), \d+\.\d s", x)
                         for x in lines), r.stderr
    assert lines[-1].startswith("ptonum: progress: post-processing rows 64/64 (100%), ")
    tenths = [int(re.search(r"\((\d+)%\)", x).group(1)) // 10 for x in lines]
    assert tenths == sorted(set(tenths)) and "\x1b" not in r.stderr and "\r" not in r.stderr


def test_flags_json_records_the_parameter_words(tmp_path):
    """probe13 #21: two runs with different --quant-param wrote byte-identical STEM.flags.json; the record
    now holds the words of the call (scalar words, and the 1 x N words of a vector mode)."""
    import json

    acc = tmp_path / "acc.npy"
    np.save(acc, np.arange(16, dtype=np.int32).reshape(2, 8))
    docs = []
    for word in ("0x40000000", "0x3f800000"):
        r = CliRunner().invoke(main, ["postprocess", str(acc), "--mode", "REQ8", "--quant-param", word,
                                      "--out-dir", str(tmp_path / word)])
        assert r.exit_code == 0, r.output
        docs.append(json.loads((tmp_path / word / "acc.flags.json").read_text()))
    assert [d["parameters"] for d in docs] == [{"quant_param": "0x0000000040000000"},
                                               {"quant_param": "0x000000003f800000"}]
    r = CliRunner().invoke(main, ["postprocess", str(acc), "--mode", "VREQ8", "--scale", "0.5", "--relu", "PRELU",
                                  "--alpha", "0.25", "--out-dir", str(tmp_path / "v")])
    assert r.exit_code == 0, r.output
    params = json.loads((tmp_path / "v" / "acc.flags.json").read_text())["parameters"]
    assert params == {"quant_tile": [f"{quant_param(0.5, 0, mode='VREQ8'):#018x}"] * 8,
                      "relu_tile": [f"{relu_param(0.25):#018x}"] * 8}


def test_file_names_with_control_characters_print_escaped(tmp_path):
    """probe13 #25: an input named 'new\\nline.npy' split the summary's 'wrote' line in three."""
    acc = tmp_path / "new\nline.npy"
    np.save(acc, np.arange(16, dtype=np.int32).reshape(2, 8))
    r = CliRunner().invoke(main, ["postprocess", str(acc), "--mode", "REQ8", "--scale", "1", "--out-dir",
                                  str(tmp_path / "o")])
    assert r.exit_code == 0, r.output
    last = r.stdout.splitlines()[-1]
    assert last == f"wrote {tmp_path / 'o'}/new\\nline.d.npy, {tmp_path / 'o'}/new\\nline.flags.json", last
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == ["new\nline.d.npy", "new\nline.flags.json"]


def test_an_input_hard_linked_to_an_output_is_refused(tmp_path: Path) -> None:
    """An input that is a STEM output by a hard link (another name of the same file) is refused too."""
    acc = tmp_path / "acc.npy"
    np.save(acc, np.arange(8, dtype=np.int32).reshape(2, 4))
    out = tmp_path / "out"
    out.mkdir()
    words = tmp_path / "words.npy"
    np.save(words, np.full((1, 4), quant_param(1.0, 0, mode="VREQ8"), dtype=np.uint64))
    (out / "acc.row_max.npy").hardlink_to(words)
    r = CliRunner().invoke(main, ["postprocess", str(acc), "--mode", "VREQ8", "--quant-tile", str(words),
                                  "--row-max", "--out-dir", str(out)])
    assert r.exit_code == 2
    assert r.stderr.startswith(f"ptonum postprocess: error: --out-dir: {out / 'acc.row_max.npy'} is an input of this run")
    assert sorted(p.name for p in out.iterdir()) == ["acc.row_max.npy"]


def test_one_tile_runs_on_numpy_below_the_one_shot_threshold(tmp_path, monkeypatch):
    """One tile in one process (break 2026-12-02: a 2048 x 2048 REQ8 `ptonum postprocess` took 2.5-3.2 s with the
    kernels, 0.6-0.9 s on numpy -- numba's import, set-up and the cached kernel's load, paid by every run): below
    ONE_SHOT_KERNEL_MIN_ELEMENTS the command takes the numpy path unless PTONUM_KERNEL_MIN_ELEMENTS says
    otherwise, and the variable is as before afterwards.  The same bits either way (the outputs equal the
    library call's)."""
    from ptonum import engines
    from ptonum.cli._common import ONE_SHOT_KERNEL_MIN_ELEMENTS

    rng = np.random.default_rng(3)
    acc = rng.integers(-2**20, 2**20, size=(256, 1024), dtype=np.int32)  # 262144 >= 65536, the library's threshold
    assert acc.size < ONE_SHOT_KERNEL_MIN_ELEMENTS
    np.save(tmp_path / "acc.npy", acc)
    calls = []
    real = engines.run_tile

    def spy(*a, **k):
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(engines, "run_tile", spy)
    monkeypatch.delenv("PTONUM_KERNEL_MIN_ELEMENTS", raising=False)
    monkeypatch.delenv("PTONUM_DISABLE_NUMBA", raising=False)
    res = _invoke([tmp_path / "acc.npy", "--mode", "REQ8", "--scale", "0.5", "--out-dir", tmp_path / "a"])
    assert res.exit_code == 0, res.output
    assert calls == [] and "PTONUM_KERNEL_MIN_ELEMENTS" not in os.environ
    expect = postprocess(acc, attributes={"pre_quant_mode": "REQ8"}, quant_param=int(quant_param(0.5, mode="REQ8")))
    assert np.array_equal(np.load(tmp_path / "a" / "acc.d.npy"), expect.d_bits)
    monkeypatch.setenv("PTONUM_KERNEL_MIN_ELEMENTS", "65536")  # the user's choice stands
    res = _invoke([tmp_path / "acc.npy", "--mode", "REQ8", "--scale", "0.5", "--out-dir", tmp_path / "b"])
    assert res.exit_code == 0, res.output
    assert calls and os.environ["PTONUM_KERNEL_MIN_ELEMENTS"] == "65536"
    assert np.array_equal(np.load(tmp_path / "b" / "acc.d.npy"), expect.d_bits)


def test_terminal_bar_waits_for_the_first_rows(monkeypatch):
    """On a terminal the bar is drawn only once rows are done: a first call that compiles the kernels
    for minutes (its compile note on stderr) showed a bar sitting at 0/N that looked like a hang.
    The bar still ends up drawn for work that makes progress, and is stopped when the block ends."""
    import ptonum.cli._common as common
    from rich.progress import Progress

    started: list = []
    stopped: list = []
    monkeypatch.setattr(common, "stderr_is_terminal", lambda: True)
    monkeypatch.setattr(Progress, "start", lambda self: started.append(self))
    monkeypatch.setattr(Progress, "stop", lambda self: stopped.append(self))
    with common.progress_report("rows", True, 8) as cb:
        assert cb is not None
        cb(0)                      # the call has begun, nothing done yet (e.g. compiling)
        assert started == []
        cb(3)
        assert len(started) == 1
        (task,) = started[0].tasks
        assert (task.completed, task.total) == (3, 8)
        cb(8)
        assert (task.completed, task.total) == (8, 8) and len(started) == 1
    assert stopped == started
    with common.progress_report("rows", True, 8) as cb:
        cb(0)
    assert len(started) == 1 and len(stopped) == 1  # never shown, never stopped


def test_terminal_bar_label_is_text(monkeypatch):
    """The bar's label (``postprocess --chunks``: the ACC file's name) is shown as it is.  Was: read as rich markup (a
    ``[red]`` in a file name styled the rest and vanished) and as a format string (a ``{0}`` raised an internal
    error when the bar was drawn)."""
    import ptonum.cli._common as common
    from rich.progress import Progress

    started: list = []
    monkeypatch.setattr(common, "stderr_is_terminal", lambda: True)
    monkeypatch.setattr(Progress, "start", lambda self: started.append(self))
    monkeypatch.setattr(Progress, "stop", lambda self: None)
    for label in ("a[red]b.npy: chunks", "a[x]{0}.npy: chunks"):
        with common.progress_report(label, True, 8) as cb:
            assert cb is not None
            cb(3)
        (task,) = started[-1].tasks
        assert str(started[-1].columns[0].render(task)) == label
