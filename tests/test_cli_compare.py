"""``ptonum compare`` from the command line: device dumps as the device writes them (packed S4X2,
signed values that must fit), flags by name, decoded mismatches with the largest errors, the
mismatch picture (``--plot``), and memory against ``postprocess``.

Expected values: device dumps are the model's D with injected differences; decoded values come
from numpy/ml_dtypes views of the encodings, not from ptonum.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from ptonum.cli import main
from ptonum.conformance.compare import compare_arrays
from ptonum.formats import TileDataType
from ptonum.fpatr.tile import postprocess

RUN = CliRunner(env={"COLUMNS": "250"})
QP8 = (0x1E000 << 13)  # FP19 2**-7, offset 0 (ADR-0085 D180 layout)
QP4 = (((127 - 12) << 10) << 13)  # FP19 2**-12 for REQ4


@pytest.fixture()
def acc(tmp_path: Path) -> np.ndarray:
    a = np.random.default_rng(5).integers(-30000, 30000, (16, 33)).astype(np.int32)  # odd N for S4X2
    np.save(tmp_path / "acc.npy", a)
    return a


def _cmp(tmp_path: Path, mode: str, qp: int, dev: Path, *extra: str):
    return RUN.invoke(main, ["compare", str(tmp_path / "acc.npy"), "--mode", mode, "--quant-param", hex(qp),
                             "--sat", "--device-d", str(dev), *extra])


def test_signed_dump_values_must_fit_the_destination(acc, tmp_path: Path) -> None:
    d = postprocess(acc, attributes={"pre_quant_mode": "REQ8"}, quant_param=QP8, sat=True).d_bits
    vals = d.view(np.int8).astype(np.int32)
    np.save(tmp_path / "ok.npy", vals)
    assert _cmp(tmp_path, "REQ8", QP8, tmp_path / "ok.npy").exit_code == 0
    vals[2, 7] = -1000  # -1000 & 0xff = 0x18: must not be read as 24
    np.save(tmp_path / "bad.npy", vals)
    r = _cmp(tmp_path, "REQ8", QP8, tmp_path / "bad.npy")
    assert r.exit_code == 2, r.output
    assert f"--device-d: {tmp_path / 'bad.npy'}[2, 7] = -1000: does not fit the 8-bit S8 element (-128 .. 127)" \
        in r.stderr
    vals[2, 7] = 128
    np.save(tmp_path / "bad.npy", vals)
    assert f"--device-d: {tmp_path / 'bad.npy'}[2, 7] = 128: does not fit" in _cmp(tmp_path, "REQ8", QP8,
                                                                              tmp_path / "bad.npy").stderr


def test_packed_s4x2_dump_by_size_or_option(acc, tmp_path: Path) -> None:
    res = postprocess(acc, attributes={"pre_quant_mode": "REQ4"}, quant_param=QP4, sat=True)
    nib = res.d_bits & 0x0F
    padded = np.concatenate([nib, np.zeros((16, 1), np.uint8)], axis=1)
    packed = (padded[:, 0::2] | (padded[:, 1::2] << 4)).astype(np.uint8)  # even column in the low nibble
    packed.tofile(tmp_path / "d_packed.bin")
    np.save(tmp_path / "d_packed.npy", packed)
    for dev, extra in (("d_packed.bin", ()), ("d_packed.npy", ()), ("d_packed.bin", ("--packed",))):
        r = _cmp(tmp_path, "REQ4", QP4, tmp_path / dev, *extra)
        assert r.exit_code == 0 and "MATCH" in r.stdout, (dev, r.output)
    bad = packed.copy()
    bad[3, 4] ^= 0x10  # element [3, 9] (high nibble of byte 4)
    bad.tofile(tmp_path / "bad.bin")
    r = _cmp(tmp_path, "REQ4", QP4, tmp_path / "bad.bin")
    assert r.exit_code == 1 and "D[3, 9]:" in r.stdout, r.output
    pad = packed.copy()
    pad[0, 16] |= 0x10  # N = 33 is odd: the last high nibble is padding
    pad.tofile(tmp_path / "pad.bin")
    assert "nonzero padding nibble" in _cmp(tmp_path, "REQ4", QP4, tmp_path / "pad.bin").stderr
    r = _cmp(tmp_path, "REQ8", QP8, tmp_path / "d_packed.bin", "--packed")
    assert r.exit_code == 2 and "--packed: D is S8" in r.stderr


@pytest.mark.parametrize("text, ok", [("OF|NX", True), ("nx,of", True), ("0x14", True), ("20", True),
                                      ("NX", False), ("-", False), ("OF|XX", None)])
def test_device_flags_by_name(acc, tmp_path: Path, text: str, ok) -> None:
    res = postprocess(acc, attributes={"pre_quant_mode": "REQ8"}, quant_param=QP8, sat=True)
    assert int(res.flags) == 0x14  # clamps (OF) and rounds (NX): the model's own flags are the reference here
    np.save(tmp_path / "d.npy", res.d_bits)
    r = _cmp(tmp_path, "REQ8", QP8, tmp_path / "d.npy", "--device-flags", text)
    if ok is None:
        assert r.exit_code == 2 and "'XX' is not a flag" in r.stderr
    else:
        assert r.exit_code == (0 if ok else 1), r.output


def test_mismatches_show_decoded_values_and_largest_errors() -> None:
    model = np.array([[0x5685, 0x3C00, 0x0000, 0x4000]], np.uint16)
    dev = np.array([[0xD685, 0x3C01, 0x0001, 0x4000]], np.uint16)
    rep = compare_arrays("D", TileDataType.FP16, model, dev)
    mv, dv = model.view(np.float16).astype(np.float64), dev.view(np.float16).astype(np.float64)
    assert [(m.model_value, m.device_value) for m in rep.first] == [
        (format(mv[0, j], ".9g"), format(dv[0, j], ".9g")) for j in range(3)]
    assert rep.first[0].model_value == "104.3125" and rep.first[0].device_value == "-104.3125"
    err = np.abs(dv - mv)
    assert rep.max_abs_error == err.max() and rep.max_abs_position == (0, 0)
    assert rep.max_rel_error == 2.0 and rep.max_rel_position == (0, 0)  # model 0 is left out of the relative error
    s8 = compare_arrays("D", TileDataType.S8, np.array([5], np.uint8), np.array([0xFB], np.uint8))
    assert (s8.first[0].model_value, s8.first[0].device_value, s8.max_abs_error) == ("5", "-5", 10.0)


def test_cli_mismatch_line_and_summary(acc, tmp_path: Path) -> None:
    d = postprocess(acc, attributes={"pre_quant_mode": "REQ8"}, quant_param=QP8, sat=True).d_bits.copy()
    want = int(d[1, 2].view(np.int8))
    d[1, 2] = np.uint8((want - 3) & 0xFF) if want > -125 else np.uint8(want + 3)
    got = int(d[1, 2].view(np.int8))
    np.save(tmp_path / "dev.npy", d)
    r = _cmp(tmp_path, "REQ8", QP8, tmp_path / "dev.npy")
    assert r.exit_code == 1
    line = f"D[1, 2]: model {want & 0xFF:#x} = {want}, device {got & 0xFF:#x} = {got}, distance 3"
    assert line in r.stdout, r.stdout
    assert "largest absolute error 3 at D[1, 2]" in r.stdout
    # the explain command printed for the mismatch reproduces the model's encoding
    again = next(ln for ln in r.stdout.splitlines() if ln.strip().startswith("again: ptonum explain"))
    assert f"--acc {int(acc[1, 2])} " in again
    r2 = RUN.invoke(main, again.split("ptonum", 1)[1].split())
    assert r2.exit_code == 0, r2.output
    assert f"destination S8: {want & 0xFF:#04x}" in r2.output


def test_plot_shows_a_bad_column(acc, tmp_path: Path) -> None:
    import matplotlib.image

    d = postprocess(acc, attributes={"pre_quant_mode": "REQ8"}, quant_param=QP8, sat=True).d_bits.copy()
    d[:, 13] ^= 0x01  # a layout bug: one column wrong in every row
    d[4, 2] ^= 0x40
    np.save(tmp_path / "dev.npy", d)
    png = tmp_path / "plots" / "cmp.png"
    r = _cmp(tmp_path, "REQ8", QP8, tmp_path / "dev.npy", "--plot", str(png))
    assert r.exit_code == 1, r.output
    img = matplotlib.image.imread(png)
    assert img.ndim == 3 and img.shape[0] > 500 and img.shape[1] > 500
    assert not list(png.parent.glob(".*.tmp"))

    from ptonum.cli._plot import compare_figure, mismatch_counts

    rep = compare_arrays("D", TileDataType.S8, postprocess(
        acc, attributes={"pre_quant_mode": "REQ8"}, quant_param=QP8, sat=True).d_bits, d)
    rows, cols = mismatch_counts(rep)
    assert int(np.argmax(cols)) == 13 and cols[13] == 16 and cols.sum() == 17
    fig = compare_figure(rep, "t")
    top = next(ax for ax in fig.axes if ax.get_ylabel() == "per column")
    heights = top.patches[0].get_data().values  # the drawn column-count strip
    assert len(heights) == 33 and int(np.argmax(heights)) == 13 and heights[13] == 16
    right = next(ax for ax in fig.axes if ax.get_xlabel() == "per row")
    assert right.patches[0].get_data().values[4] == 2


def test_plot_colour_bar_of_a_single_distance(acc) -> None:
    """Every mismatch 1 apart: the colour bar is one colour labelled 1 (it spanned 1 .. 2); with
    distances 1 and 64 it spans exactly 1 .. 64."""
    from ptonum.cli._plot import compare_figure

    model = postprocess(acc, attributes={"pre_quant_mode": "REQ8"}, quant_param=QP8, sat=True).d_bits
    one = model.copy()
    one[:, 13] = (one[:, 13].view(np.int8) ^ 1).view(np.uint8)  # each differs by exactly 1
    want = np.abs(one.view(np.int8).astype(int) - model.view(np.int8).astype(int))
    assert set(want[want > 0].tolist()) == {1}  # the injected distances, independent of ptonum
    fig = compare_figure(compare_arrays("D", TileDataType.S8, model, one), "t")
    bar = next(ax for ax in fig.axes if ax.get_ylabel().startswith("distance"))
    assert [t.get_text() for t in bar.get_yticklabels()] == ["1"]
    lo, hi = bar.get_ylim()
    assert lo < 1 < hi and hi - lo <= 1.0
    two = one.copy()
    two[0, 0] = np.uint8((int(model[0, 0].view(np.int8)) + (64 if int(model[0, 0].view(np.int8)) < 0 else -64)) & 0xFF)
    fig = compare_figure(compare_arrays("D", TileDataType.S8, model, two), "t")
    im = next(ax for ax in fig.axes if ax.get_xlabel().startswith("column")).images[0]
    assert (im.norm.vmin, im.norm.vmax) == (1.0, 64.0)


def test_plot_refusals_write_nothing(acc, tmp_path: Path) -> None:
    d = postprocess(acc, attributes={"pre_quant_mode": "REQ8"}, quant_param=QP8, sat=True).d_bits
    np.save(tmp_path / "dev.npy", d)
    r = _cmp(tmp_path, "REQ8", QP8, tmp_path / "dev.npy", "--plot", str(tmp_path / "x.pdf"))
    assert r.exit_code == 2 and "--plot = " in r.stderr and "give a .png file name" in r.stderr
    assert not (tmp_path / "x.pdf").exists()


def test_matplotlib_is_imported_only_when_plotting(acc, tmp_path: Path) -> None:
    d = postprocess(acc, attributes={"pre_quant_mode": "REQ8"}, quant_param=QP8, sat=True).d_bits
    np.save(tmp_path / "dev.npy", d)
    code = ("import sys\nfrom ptonum.cli import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
            "print('matplotlib' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, "compare", str(tmp_path / "acc.npy"), "--mode", "REQ8",
                          "--quant-param", hex(QP8), "--sat", "--device-d", str(tmp_path / "dev.npy")],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip().endswith("False"), out.stdout


def test_compare_peak_memory_is_within_postprocess(tmp_path: Path) -> None:
    """Issue 10 item 13 (4096x4096 S8 with 50 mismatches; the ratio is measured on 512x512 here, numpy
    buffers traced by tracemalloc): compare's peak stays within 1.5x postprocess's on the same tile."""
    rng = np.random.default_rng(2)
    a = rng.integers(-30000, 30000, (512, 512)).astype(np.int32)
    np.save(tmp_path / "acc.npy", a)
    d = postprocess(a, attributes={"pre_quant_mode": "REQ8"}, quant_param=QP8, sat=True).d_bits.copy()
    d.reshape(-1)[rng.choice(d.size, 50, replace=False)] ^= 0x01
    np.save(tmp_path / "dev.npy", d)
    del a, d

    def peak(args) -> int:
        tracemalloc.start()
        try:
            r = RUN.invoke(main, args)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
            assert r.exit_code in (0, 1), r.output

    common = [str(tmp_path / "acc.npy"), "--mode", "REQ8", "--quant-param", hex(QP8), "--sat"]
    p = peak(["postprocess", *common, "--out-dir", str(tmp_path / "out")])
    c = peak(["compare", *common, "--device-d", str(tmp_path / "dev.npy"), "--explain", "0"])
    assert c <= 1.5 * p, (c, p)


def test_plot_naming_an_input_is_refused_before_any_effect(tmp_path: Path, monkeypatch) -> None:
    """``--plot`` that is one of the inputs (a raw ACC named .png here) is refused naming both."""
    monkeypatch.chdir(tmp_path)
    a = np.arange(12, dtype=np.int32)
    a.tofile("acc.png")
    np.save("dev.npy", np.zeros((3, 4), dtype=np.uint8))
    r = CliRunner().invoke(main, ["compare", "acc.png", "--dtype", "int32", "--shape", "3x4", "--mode", "REQ8",
                                  "--scale", "1", "--device-d", "dev.npy", "--plot", "./acc.png"])
    assert (r.exit_code, r.stdout) == (2, ""), r.output
    assert r.stderr == ("ptonum compare: error: --plot = ./acc.png: is the input ACC = acc.png; writing it would "
                        "replace the input (give another output name)\n")
    assert (tmp_path / "acc.png").read_bytes() == a.tobytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["acc.png", "dev.npy"]


def test_compare_of_one_tile_runs_on_numpy_below_the_one_shot_threshold(tmp_path: Path, monkeypatch) -> None:
    """As postprocess: one tile in one process takes the numpy path below ONE_SHOT_KERNEL_MIN_ELEMENTS (the
    kernels' start-up costs more than numpy needs) unless PTONUM_KERNEL_MIN_ELEMENTS is set; the verdict is
    the same (50 flipped elements found either way)."""
    from ptonum import engines
    from ptonum.cli._common import ONE_SHOT_KERNEL_MIN_ELEMENTS

    rng = np.random.default_rng(2)
    a = rng.integers(-30000, 30000, (512, 512)).astype(np.int32)
    assert 65536 <= a.size < ONE_SHOT_KERNEL_MIN_ELEMENTS
    np.save(tmp_path / "acc.npy", a)
    d = postprocess(a, attributes={"pre_quant_mode": "REQ8"}, quant_param=QP8, sat=True).d_bits.copy()
    d.reshape(-1)[rng.choice(d.size, 50, replace=False)] ^= 0x01
    np.save(tmp_path / "dev.npy", d)
    calls = []
    real = engines.run_tile
    monkeypatch.setattr(engines, "run_tile", lambda *a, **k: calls.append(1) or real(*a, **k))
    monkeypatch.delenv("PTONUM_KERNEL_MIN_ELEMENTS", raising=False)
    monkeypatch.delenv("PTONUM_DISABLE_NUMBA", raising=False)
    args = ["compare", str(tmp_path / "acc.npy"), "--mode", "REQ8", "--quant-param", hex(QP8), "--sat",
            "--device-d", str(tmp_path / "dev.npy")]
    r = RUN.invoke(main, args)
    assert r.exit_code == 1 and "50 " in r.stdout, r.output
    assert calls == [] and "PTONUM_KERNEL_MIN_ELEMENTS" not in os.environ
    monkeypatch.setenv("PTONUM_KERNEL_MIN_ELEMENTS", "65536")
    r2 = RUN.invoke(main, args)
    assert r2.exit_code == 1 and calls, r2.output
    assert r2.stdout == r.stdout
