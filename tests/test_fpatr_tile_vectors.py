"""Every whole tile of ``tiles.json.gz`` (the ASL's own ``CommitMatrixResult`` path)
through ``fpatr.postprocess`` in both engines and through both fast implementations
(numpy and the compiled kernels): D, RowMaxOut, GroupMaxOut and the sticky flags, bit
for bit; a case the ASL never commits is rejected before any effect."""

from __future__ import annotations

from typing import Dict, List

import numpy as np
import pytest

import ptonum
from ptonum import fpatr
from ptonum.errors import PtonumError

from conftest import load_tile_cases, tile_case_expected, tile_case_kwargs, tile_case_rejected

CASES: List[Dict[str, object]] = load_tile_cases()
IDS = [str(item["source"]) for item in CASES]


def _run(item: Dict[str, object], engine: str, status: ptonum.StatusRegister) -> fpatr.PostprocessResult:
    kw = tile_case_kwargs(item["case"])  # type: ignore[arg-type]
    return fpatr.postprocess(kw.pop("acc"), engine=engine, status=status, **kw)  # type: ignore[arg-type]


def _check(item: Dict[str, object], engine: str) -> None:
    status = ptonum.StatusRegister(0x01)  # a sticky NV from an earlier operation
    if tile_case_rejected(item):
        with pytest.raises(PtonumError):
            _run(item, engine, status)
        assert int(status) == 0x01
        return
    exp = tile_case_expected(item)
    r = _run(item, engine, status)
    assert r.dst_type.name == exp["dst_type"]
    assert np.array_equal(np.asarray(r.d_bits).astype(np.uint64), exp["d"])
    if exp["row_max_out"] is None:
        assert r.row_max_bits is None
    else:
        assert np.array_equal(np.asarray(r.row_max_bits).astype(np.uint64), exp["row_max_out"])
    if exp["group_max_out"] is None:
        assert r.group_max_bits is None
    else:
        assert np.array_equal(np.asarray(r.group_max_bits).astype(np.uint64), exp["group_max_out"])
    assert r.flags == exp["flags"]
    assert int(status) == exp["flags"] | 0x01


@pytest.mark.parametrize("item", CASES, ids=IDS)
def test_tile_reference(item: Dict[str, object]) -> None:
    _check(item, "reference")


@pytest.mark.parametrize("item", CASES, ids=IDS)
def test_tile_fast_numpy(item: Dict[str, object], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PTONUM_DISABLE_NUMBA", "1")
    _check(item, "fast")


@pytest.mark.parametrize("item", CASES, ids=IDS)
def test_tile_fast_kernels(item: Dict[str, object], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PTONUM_KERNEL_MIN_ELEMENTS", "1")
    _check(item, "fast")


def test_tile_kernels_into_recycled_output_buffers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Outputs cut from recycled buffers (every size here, the threshold lowered to 0): each case runs
    once to release a buffer, the released buffers are filled with garbage, and the second run must
    still give the ASL's bits (every element is written; nothing stale shows through)."""
    from ptonum.fpatr import tile

    monkeypatch.setenv("PTONUM_KERNEL_MIN_ELEMENTS", "1")
    monkeypatch.setattr(tile, "OUTPUT_POOL_MIN_BYTES", 0)
    tile.release_output_buffers()
    used = 0
    for item in CASES:
        if tile_case_rejected(item):
            continue
        _run(item, "fast", ptonum.StatusRegister())  # its result is dropped: the buffer is released
        for buf in tile._OUTPUTS._free:
            buf.raw.fill(0xA5)
        _check(item, "fast")
        used += 1
    assert used > 0 and tile._OUTPUTS._free  # the buffers did go round
    tile.release_output_buffers()
    assert not tile._OUTPUTS._free


def test_cases_cover_every_destination_and_rejection() -> None:
    dsts = {tile_case_expected(i)["dst_type"] for i in CASES if not tile_case_rejected(i)}
    assert dsts == {"FP16", "BF16", "FP32", "E4M3", "HiF8", "S8", "S16", "S4X2", "S32", "U32"}
    assert sum(tile_case_rejected(i) for i in CASES) == 15
