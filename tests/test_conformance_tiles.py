"""``ptonum check`` on whole-tile files (tiles.json.gz): the shared file passes in both
engines; a changed expected bit, changed flags, a committed case turned into a rejected
one (and back) and malformed items are each reported by item, with exit 1 or 2."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any, Dict, List

from click.testing import CliRunner

from conftest import vectors_dir
from ptonum.cli import main
from ptonum.conformance.tiles import check_tiles, read_tiles

SHARED = vectors_dir() / "tiles.json.gz"


def _items() -> List[Dict[str, Any]]:
    with gzip.open(SHARED, "rt") as fh:
        return json.load(fh)


def _write(tmp_path: Path, items: List[Dict[str, Any]], name: str = "t.json") -> str:
    p = tmp_path / name
    p.write_text(json.dumps(items))
    return str(p)


def test_shared_tiles_pass_both_engines() -> None:
    cases = read_tiles(str(SHARED))
    assert len(cases) == 96
    assert sum(c.expected is None for c in cases) == 15
    for engine in ("fast", "reference"):
        rep = check_tiles(cases, str(SHARED), engine)
        assert rep.ok and rep.passed == 96, rep.failures[:3]


def test_cli_check_shared_tiles() -> None:
    r = CliRunner().invoke(main, ["check", str(SHARED), "--engine", "both"])
    assert r.exit_code == 0, r.output
    assert "PASS: 192" in r.output


def test_cli_check_limit_and_sample_apply_to_tile_cases() -> None:
    """--limit / --sample choose tile cases as they choose CSV rows (they were ignored for tile files)."""
    for opts, n in ((["--limit", "3"], 3), (["--sample", "5", "--seed", "1"], 5)):
        r = CliRunner().invoke(main, ["check", str(SHARED), *opts])
        assert r.exit_code == 0 and f"PASS: {n} row(s) checked" in r.output, r.output
    cases = read_tiles(str(SHARED))
    rep = check_tiles(cases, str(SHARED), "fast", select=[2, 90])
    assert (rep.rows, rep.checked, rep.passed) == (96, 2, 2)


def _first(items: List[Dict[str, Any]], legal: bool) -> int:
    for i, it in enumerate(items):
        e = it["expected"]
        if ("error" not in e and e["sources_legal"]) == legal:
            return i
    raise AssertionError("no such item")


def test_flipped_bit_flags_and_legality_are_mismatches(tmp_path: Path) -> None:
    items = _items()
    i = _first(items, True)
    d0 = items[i]["expected"]["d"][0][0]
    items[i]["expected"]["d"][0][0] = hex(int(d0, 16) ^ 1)
    j = _first(items[i + 1 :], True) + i + 1
    items[j]["expected"]["flags"] = hex(int(items[j]["expected"]["flags"], 16) ^ 0x10)
    k = _first(items, False)
    items[k]["expected"] = {k2: v for k2, v in items[k]["expected"].items() if k2 != "error"}
    items[k]["expected"]["sources_legal"] = True
    items[k]["expected"].setdefault("dst_type", "FP16")
    items[k]["expected"].setdefault("d", [["0x0"] * len(items[k]["case"]["acc"][0])] * len(items[k]["case"]["acc"]))
    items[k]["expected"].setdefault("flags", "0x00")
    path = _write(tmp_path, items)
    r = CliRunner().invoke(main, ["check", path])
    assert r.exit_code == 1, r.output
    assert f"  {path}: item {i}: tile: " in r.output and "D: 1 element(s) differ, first [0, 0]" in r.output
    assert f"  {path}: item {j}: tile: " in r.output and "flags" in r.output
    assert f"  {path}: item {k}: tile: " in r.output and "rejected, but the ASL commits it" in r.output
    assert "FAIL: 3 failing row(s)" in r.output


def test_accepting_a_rejected_case_is_a_mismatch(tmp_path: Path) -> None:
    items = _items()
    i = _first(items, True)
    items[i]["expected"]["sources_legal"] = False
    r = CliRunner().invoke(main, ["check", _write(tmp_path, items[i : i + 1])])
    assert r.exit_code == 1 and "committed, but the ASL rejects" in r.output


def test_malformed_tile_file_is_one_line_exit_2(tmp_path: Path) -> None:
    items = _items()[:2]
    items[1]["case"]["acc"][0][0] = "12"
    path = _write(tmp_path, items)
    r = CliRunner().invoke(main, ["check", path])
    assert r.exit_code == 2
    assert r.stderr == (f"ptonum check: error: {path}: item 1.case.acc[0][0] = '12': expected a 0x-prefixed hex "
                        "string\n")
    (tmp_path / "bad.json").write_text("[{\"case\": ")
    r = CliRunner().invoke(main, ["check", str(tmp_path / "bad.json")])
    assert r.exit_code == 2 and "not a JSON tile list" in r.output and "Traceback" not in r.output
