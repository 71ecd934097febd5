"""ptonum compare: injected differences are reported exactly (positions, counts, histogram, exit code)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from click.testing import CliRunner

from ptonum.cli import main
from ptonum.conformance.compare import compare_arrays, distance
from ptonum.formats import TileDataType

RUN = CliRunner(env={"COLUMNS": "250"})


def _model_d(acc: np.ndarray, tmp: Path) -> np.ndarray:
    from ptonum.fpatr.tile import postprocess

    res = postprocess(acc, attributes={"pre_quant_mode": "REQ8", "row_max_en": True}, quant_param=0x1FC00 << 13)
    return res.d_bits.copy(), res.row_max_bits.copy()


def test_compare_injected_int(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    acc = rng.integers(-100, 100, size=(6, 10)).astype(np.int32)
    np.save(tmp_path / "acc.npy", acc)
    d, rmax = _model_d(acc, tmp_path)
    np.save(tmp_path / "same.npy", d)
    r = RUN.invoke(main, ["compare", str(tmp_path / "acc.npy"), "--mode", "REQ8", "--quant-param",
                          hex(0x1FC00 << 13), "--device-d", str(tmp_path / "same.npy")])
    assert r.exit_code == 0, r.output
    assert "MATCH" in r.output
    bad = d.copy()
    bad[0, 3] = (int(bad[0, 3]) + 1) & 0xFF
    bad[2, 9] = (int(bad[2, 9]) - 5) & 0xFF
    bad[5, 0] = (int(bad[5, 0]) + 2) & 0xFF
    np.save(tmp_path / "dev.npy", bad)
    r = RUN.invoke(main, ["compare", str(tmp_path / "acc.npy"), "--mode", "REQ8", "--quant-param",
                          hex(0x1FC00 << 13), "--device-d", str(tmp_path / "dev.npy")])
    assert r.exit_code == 1
    assert "first 3 of 3 mismatches" in r.output
    for pos, dist in (("[0, 3]", 1), ("[2, 9]", 5), ("[5, 0]", 2)):
        assert f"D{pos}:" in r.output and f"distance {dist}" in r.output.split(f"D{pos}:")[1].splitlines()[0]
    assert "histogram (integer difference): 1: 1, 2: 1, 5-8: 1" in r.output
    assert "explain D[0, 3]" in r.output


def test_compare_rowmax_dump(tmp_path: Path) -> None:
    acc = np.arange(24, dtype=np.int32).reshape(4, 6) - 10
    np.save(tmp_path / "acc.npy", acc)
    d, rmax = _model_d(acc, tmp_path)
    np.save(tmp_path / "d.npy", d)
    bad = rmax.copy()
    bad[2, 0] ^= 1
    np.save(tmp_path / "rm.npy", bad)
    r = RUN.invoke(main, ["compare", str(tmp_path / "acc.npy"), "--mode", "REQ8", "--row-max",
                          "--quant-param", hex(0x1FC00 << 13), "--device-d", str(tmp_path / "d.npy"),
                          "--device-row-max", str(tmp_path / "rm.npy")])
    assert r.exit_code == 1
    assert "RowMaxOut[2, 0]" in r.output and "first 1 of 1 mismatches" in r.output


def test_ulp_distance_and_class_mismatch() -> None:
    # FP16: 0x3c00 (1.0) vs 0x3c03 -> 3 ulps; 0x0001 vs 0x8001 -> 2 ulps across zero; NaN vs finite is a class mismatch
    model = np.array([0x3C00, 0x0001, 0x7E00, 0x8000], dtype=np.uint64)
    dev = np.array([0x3C03, 0x8001, 0x3C00, 0x0000], dtype=np.uint64)
    d, cls = distance(TileDataType.FP16, model, dev)
    assert d.tolist()[:2] == [3, 2] and cls.tolist() == [False, False, True, False] and d[3] == 0
    rep = compare_arrays("D", TileDataType.FP16, model, dev)
    assert rep.mismatches == 4 and rep.class_mismatches == 1
    assert rep.hist == [("2", 1), ("3-4", 1)]
    # HiF8 (code order is not value order): 0x08 = 1.0, 0x10 = 2.0 differ by 8 finite values (1.0 .. 1.875, 2.0)
    d, _ = distance(TileDataType.HiF8, np.array([0x08], np.uint64), np.array([0x10], np.uint64))
    assert d.tolist() == [8]
