"""``ptonum modes``: the PreQuantMode table (ADR-0085 D179) on the command line."""

from __future__ import annotations

import re
from typing import List

from click.testing import CliRunner

from ptonum.cli import main


def _rows(output: str) -> List[List[str]]:
    rows = []
    for line in output.splitlines():
        cells = [c.strip() for c in re.split(r"[│┃]", line)[1:-1]]
        if cells and cells[0].isdigit():
            rows.append(cells)
    return rows


def test_modes_lists_the_27_assigned_modes_with_their_columns() -> None:
    res = CliRunner().invoke(main, ["modes"])
    assert res.exit_code == 0, res.output
    rows = _rows(res.output)
    assert [int(r[0]) for r in rows] == [0, 1, 2, 3, 4, 5, 12, 13, 16, 17, 18, 19, 20, 23, 24, 25, 26, 27, 28,
                                         32, 33, 34, 35, 36, 37, 38, 39]
    by_name = {r[1]: r for r in rows}
    # code, name, acc, D, param, offset, rounding, shift, Sat (ADR-0085 D179 table)
    assert by_name["VREQ8"] == ["2", "VREQ8", "S32", "S8", "vector", "S9", "RMode", "-", "clamp/wrap"]
    assert by_name["REQ4"] == ["17", "REQ4", "S32", "S4X2", "scalar", "S5", "RMode", "-", "clamp/wrap"]
    assert by_name["DEQS16"][5] == "S17"
    assert by_name["QF322HIF8_PRE"][3:7] == ["HiF8", "scalar", "-", "RHB"]
    assert by_name["F322F16"][2:7] == ["FP32", "FP16", "none", "-", "RNE"]
    assert by_name["SHIFTS322S16"][7:] == ["yes", "-"]
    assert by_name["NoQuant"][2:4] == ["FP32/S32/U32", "= acc"]


def test_modes_selected_rows_and_unknown_name() -> None:
    res = CliRunner().invoke(main, ["modes", "VREQ8", "0x19"])
    assert res.exit_code == 0, res.output
    assert [r[1] for r in _rows(res.output)] == ["VREQ8", "QF322HIF8_PRE"]
    same = CliRunner().invoke(main, ["modes", "3", "REQ8", "0x19", "VREQ8", "25"])
    assert same.exit_code == 0, same.output
    assert [r[1] for r in _rows(same.output)] == ["REQ8", "QF322HIF8_PRE", "VREQ8"]  # each mode once
    bad = CliRunner().invoke(main, ["modes", "REQ9"])
    assert bad.exit_code == 2
    assert "ptonum modes: error: MODE = 'REQ9': unknown PreQuantMode" in bad.output
