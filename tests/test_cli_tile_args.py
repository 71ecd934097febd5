"""Per-channel parameters given as numbers (``--scale-tile``, ``--offset-tile``, ``--alpha-tile``) for
``ptonum postprocess`` and ``ptonum compare`` (cli/_tile_args.py).

Expected words are assembled by hand from the field layout of ADR-0085 D180 (FP19 scale at [31:13],
S9 offset at [45:37], FP19 alpha at [18:0]); D is then the model's for those words.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from ptonum.cli import main
from ptonum.fpatr.tile import postprocess


def _fp19_of_power_of_two(k: int) -> int:
    return (127 + k) << 10  # sign 0, biased exponent, fraction 0


def _invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture()
def acc(tmp_path: Path) -> np.ndarray:
    a = np.random.default_rng(11).integers(-20000, 20000, (3, 8)).astype(np.int32)
    np.save(tmp_path / "acc.npy", a)
    return a


def test_scale_and_offset_tiles_become_the_per_column_words(acc, tmp_path: Path) -> None:
    ks = [-6, -7, -8, -9, -6, -7, -8, -9]
    offs = [-4, -3, -2, -1, 0, 1, 2, 255]
    np.save(tmp_path / "s.npy", np.array([2.0 ** k for k in ks], np.float32))          # N floats
    np.save(tmp_path / "o.npy", np.array(offs, np.int16).reshape(1, -1))             # 1 x N integers
    res = _invoke("postprocess", tmp_path / "acc.npy", "--mode", "VREQ8", "--relu", "PRELU", "--scale-tile",
                  tmp_path / "s.npy", "--offset-tile", tmp_path / "o.npy", "--alpha-tile", tmp_path / "s.npy", "--sat", "--out-dir", tmp_path / "out")
    assert res.exit_code == 0, res.output
    words = np.array([[(_fp19_of_power_of_two(k) << 13) | ((o & 0x1FF) << 37) for k, o in zip(ks, offs)]],
                     np.uint64)
    alphas = np.array([[_fp19_of_power_of_two(k) for k in ks]], np.uint64)
    want = postprocess(acc, attributes={"pre_quant_mode": "VREQ8", "relu_mode": "PRELU"}, quant_tile=words,
                       relu_tile=alphas, sat=True)
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "acc.d.npy"), want.d_bits)


def test_scale_tile_rounding_and_refusals(acc, tmp_path: Path) -> None:
    np.save(tmp_path / "s.npy", np.array([[0.5, 0.1, 0.25, 0.5, 0.5, 0.5, 0.5, 0.5]]))  # float64
    out = tmp_path / "out"
    res = _invoke("postprocess", tmp_path / "acc.npy", "--mode", "VREQ8", "--scale-tile", tmp_path / "s.npy",
                  "--out-dir", out)
    assert res.exit_code == 2
    assert "--scale-tile[1] = 0.1 is not exactly representable in FP19" in res.output
    assert "give --scale-rounding rne to accept it" in res.output
    assert not out.exists()
    res = _invoke("postprocess", tmp_path / "acc.npy", "--mode", "VREQ8", "--scale-tile", tmp_path / "s.npy",
                  "--scale-rounding", "rne", "--out-dir", out)
    assert res.exit_code == 0, res.output
    # 0.1 -> FP32 0x3dcccccd (RNE) -> FP19: bits [31:13] = 0x1ee66, discarded 0x0ccd < 0x1000: no carry
    fp19_01 = 0x3DCCCCCD >> 13
    words = np.full((1, 8), (_fp19_of_power_of_two(-1) << 13), np.uint64)
    words[0, 1] = fp19_01 << 13
    words[0, 2] = _fp19_of_power_of_two(-2) << 13
    want = postprocess(acc, attributes={"pre_quant_mode": "VREQ8"}, quant_tile=words)
    np.testing.assert_array_equal(np.load(out / "acc.d.npy"), want.d_bits)


@pytest.mark.parametrize("args, needle", [
    (["--mode", "REQ8", "--scale-tile", "s.npy"], "--scale-tile: PreQuantMode REQ8 (3) takes a scalar parameter"),
    (["--mode", "VREQ8", "--quant-tile", "s.npy"], "--quant-tile: s.npy holds float32 numbers, not U64 parameter "
                                                   "words; give the numbers with --scale-tile FILE"),
    (["--mode", "VREQ8", "--scale", "0.5", "--offset-tile", "o.npy"], "--offset-tile goes with --scale-tile"),
    (["--mode", "VREQ8", "--scale-tile", "s.npy", "--offset-tile", "s.npy"], "--offset-tile: dtype float32"),
    (["--mode", "VREQ8", "--scale-tile", "short.npy"], "--scale-tile: shape 1x4; expected N or 1 x N with N = 8"),
    (["--mode", "VREQ8", "--scale-tile", "s.npy", "--offset-tile", "o_big.npy"], "--offset-tile[7] = 256"),
    # a uint64 2**64 - 1 once was cast to int64 -1 and accepted as that offset
    (["--mode", "VREQ8", "--scale-tile", "s.npy", "--offset-tile", "o_u64.npy"],
     "--offset-tile[7] = 18446744073709551615: VREQ8 has S9 range"),
    (["--mode", "VREQ8", "--scale", "0.5", "--offset", "18446744073709551615"],
     "--offset = 18446744073709551615: VREQ8 has S9 range"),
    (["--mode", "VREQ8", "--scale", "0.5", "--relu", "LRELU", "--alpha-tile", "s.npy"],
     "--alpha-tile: ReluMode LRELU (2) takes a scalar parameter"),
    (["--mode", "VREQ8", "--scale", "0.5", "--relu", "PRELU", "--alpha-tile", "neg.npy"], "--alpha-tile[0] = -0.5"),
    (["--mode", "VSHIFTS322S16", "--scale-tile", "s.npy"], "--scale-tile: PreQuantMode VSHIFTS322S16 (12) is a shift"),
])
def test_per_channel_refusals_name_the_option(acc, tmp_path: Path, monkeypatch, args, needle) -> None:
    monkeypatch.chdir(tmp_path)
    np.save("s.npy", np.full(8, 0.5, np.float32))
    np.save("short.npy", np.full((1, 4), 0.5, np.float32))
    np.save("neg.npy", np.full(8, -0.5, np.float32))
    np.save("o.npy", np.zeros(8, np.int32))
    np.save("o_big.npy", np.array([0] * 7 + [256], np.int32))
    np.save("o_u64.npy", np.array([0] * 7 + [2**64 - 1], np.uint64))
    res = _invoke("postprocess", "acc.npy", *args, "--out-dir", "out")
    assert res.exit_code == 2, res.output
    assert needle in " ".join(res.output.split()), res.output
    assert not Path("out").exists()


def test_compare_takes_the_scale_tile(acc, tmp_path: Path) -> None:
    np.save(tmp_path / "s.npy", np.full(8, 2.0 ** -7, np.float32))
    words = np.full((1, 8), _fp19_of_power_of_two(-7) << 13, np.uint64)
    want = postprocess(acc, attributes={"pre_quant_mode": "VREQ8"}, quant_tile=words)
    np.save(tmp_path / "dev.npy", want.d_bits)
    res = _invoke("compare", tmp_path / "acc.npy", "--mode", "VREQ8", "--scale-tile", tmp_path / "s.npy",
                  "--device-d", tmp_path / "dev.npy")
    assert res.exit_code == 0, res.output
    assert "MATCH" in res.output


def test_scale_text_is_rounded_once(acc, tmp_path: Path) -> None:
    """--scale is read as a decimal: 1 + 2**-11 + 2**-24 + 1e-40 goes to FP32 0x3f801001 once (a binary64
    read ties to 0x3f801000), then FP32ToFP19 rounds up to 0x1fc01 (issue 10 item 14)."""
    from decimal import Decimal, localcontext

    with localcontext() as ctx:
        ctx.prec = 100
        text = str(Decimal(1) + Decimal(2) ** -11 + Decimal(2) ** -24 + Decimal("1e-40"))
    res = _invoke("postprocess", tmp_path / "acc.npy", "--mode", "DEQF16", "--scale", text, "--scale-rounding", "rne",
                  "--out-dir", tmp_path / "out")
    assert res.exit_code == 0, res.output
    want = postprocess(acc, attributes={"pre_quant_mode": "DEQF16"}, quant_param=0x1FC01 << 13)
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "acc.d.npy"), want.d_bits)
