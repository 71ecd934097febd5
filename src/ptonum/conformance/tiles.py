"""Whole-tile vector files (``tiles.json.gz``): parse, run and compare.

A tile file is a JSON list (gzip or plain); each item holds a ``case`` (the
accumulator tile, B.FPATR fields, parameters, B.DATR RMode/Sat, RowMaxIn), the
``expected`` commit (D, RowMaxOut, GroupMaxOut, sticky flags, or that the
operation never commits) and a ``source`` label.  The layout is the one of
the shared ASL vectors (``vectors/README.md``): hex strings, D at the
destination width (an S4X2 element as its nibble).

``check_tiles`` runs every case through :func:`ptonum.fpatr.postprocess` in one
engine and reports, per case, whether the committed outputs and flags equal
the expected ones bit for bit, and that a case the ASL never commits
(``sources_legal`` false, or an ``error``) is rejected with a
:class:`~ptonum.errors.PtonumError` before any effect (the status register
is unchanged).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

import numpy as np

from .._util import check_engine, int_text
from ..errors import PtonumError, UsageError
from ..flags import StatusRegister, flag_names
from ..fpatr import postprocess
from .check import Failure, FileReport
from .schema import read_text

__all__ = ["TileCase", "parse_tiles", "read_tiles", "is_tiles_file", "check_tiles", "TILES_OP"]

#: operation name shown in reports
TILES_OP = "tiles"


@dataclass(frozen=True)
class TileCase:
    """One parsed item: the keyword arguments of ``fpatr.postprocess`` and the expected commit.

    ``expected`` is ``None`` when the ASL never commits the case (the tile
    operation must reject it); otherwise a dict with ``dst_type`` (name),
    ``d`` (M x N uint64), ``row_max_out`` (M x 1 uint64 or None),
    ``group_max_out`` (M x G uint64 or None) and ``flags`` (int).
    """

    index: int
    source: str
    kwargs: Dict[str, Any]
    expected: Optional[Dict[str, Any]]

    def describe(self) -> str:
        kw = self.kwargs
        a = kw["attributes"]
        m, n = kw["acc"].shape
        parts = [f"{m}x{n} {kw['acc_type']}", f"PreQuantMode {a['pre_quant_mode']}", f"ReluMode {a['relu_mode']}",
                 f"rmode {kw['rmode']}", f"sat {int(kw['sat'])}"]
        for key in ("row_max_en", "row_max_init", "group_max_en", "max_abs_en"):
            if a.get(key):
                parts.append(key)
        if "group_n" in a:
            parts.append(f"GroupN {a['group_n']}")
        return ", ".join(parts)


def is_tiles_file(raw: bytes) -> bool:
    """True when the (decompressed) bytes look like a JSON tile list rather than CSV."""
    return raw.lstrip()[:1] == b"["


def _hex(where: str, text: Any, width: int) -> int:
    if not isinstance(text, str) or not text.lower().startswith("0x"):
        raise UsageError(f"{where} = {text!r}: expected a 0x-prefixed hex string")
    try:
        value = int_text(text)
    except ValueError:
        raise UsageError(f"{where} = {text!r}: not a hex number") from None
    if value >> width:
        raise UsageError(f"{where} = {text}: wider than {width} bits")
    return value


def _hex_rows(where: str, rows: Any, width: int, cols: Optional[int] = None) -> np.ndarray:
    if not isinstance(rows, list) or not rows or not all(isinstance(r, list) and r for r in rows):
        raise UsageError(f"{where}: expected a non-empty list of non-empty rows")
    n = len(rows[0]) if cols is None else cols
    out = np.empty((len(rows), n), np.uint64)
    for i, row in enumerate(rows):
        if len(row) != n:
            raise UsageError(f"{where}[{i}]: {len(row)} elements, expected {n}")
        for j, text in enumerate(row):
            out[i, j] = _hex(f"{where}[{i}][{j}]", text, width)
    return out


def _hex_list(where: str, items: Any, width: int, count: int) -> np.ndarray:
    if not isinstance(items, list):
        raise UsageError(f"{where}: expected a list of {count} hex words")
    return _hex_rows(where, [items], width, count)[0]


def _parse_case(where: str, index: int, item: Any) -> TileCase:
    if not isinstance(item, dict) or not isinstance(item.get("case"), dict) or not isinstance(item.get("expected"), dict):
        raise UsageError(f"{where}: expected an object with 'case' and 'expected'")
    case, exp = item["case"], item["expected"]
    try:
        acc = _hex_rows(f"{where}.case.acc", case["acc"], 32).astype(np.uint32)
        m, n = acc.shape
        kwargs: Dict[str, Any] = {"acc": acc, "acc_type": case["acc_type"], "rmode": case["rmode"],
                                  "sat": bool(case["sat"])}
        attrs: Dict[str, Any] = {k: case[k] for k in ("pre_quant_mode", "relu_mode")}
        for k in ("row_max_en", "group_max_en", "row_max_init", "max_abs_en"):
            attrs[k] = bool(case.get(k, 0))
        if "group_n" in case:
            attrs["group_n"] = case["group_n"]
        kwargs["attributes"] = attrs
        for key, tile in (("quant_param", "quant_tile"), ("relu_param", "relu_tile")):
            if key in case:
                if isinstance(case[key], list):
                    kwargs[tile] = _hex_list(f"{where}.case.{key}", case[key], 64, n).reshape(1, n)
                else:
                    kwargs[key] = _hex(f"{where}.case.{key}", case[key], 64)
        if "row_max_in" in case:
            kwargs["row_max_in"] = _hex_list(f"{where}.case.row_max_in", case["row_max_in"], 32, m).astype(
                np.uint32).reshape(m, 1)
        expected: Optional[Dict[str, Any]] = None
        if "error" not in exp and exp.get("sources_legal", True):
            expected = {
                "dst_type": exp["dst_type"],
                "d": _hex_rows(f"{where}.expected.d", exp["d"], 32, n),
                "row_max_out": None if "row_max_out" not in exp else
                _hex_list(f"{where}.expected.row_max_out", exp["row_max_out"], 32, m).reshape(m, 1),
                "group_max_out": None if "group_max_out" not in exp else
                _hex_rows(f"{where}.expected.group_max_out", exp["group_max_out"], 32),
                "flags": _hex(f"{where}.expected.flags", exp["flags"], 5),
            }
    except KeyError as exc:
        raise UsageError(f"{where}: missing field {exc.args[0]!r}") from None
    return TileCase(index=index, source=str(item.get("source", f"item {index}")), kwargs=kwargs, expected=expected)


def parse_tiles(raw: bytes, path: str = "<tiles>") -> List[TileCase]:
    """Parse the bytes of a tile file (already decompressed).

    Raises :class:`UsageError` naming the item and field for anything malformed.
    """
    try:
        items = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise UsageError(f"{path}: not a JSON tile list ({exc})") from None
    if not isinstance(items, list):
        raise UsageError(f"{path}: expected a JSON list of tile cases")
    return [_parse_case(f"{path}: item {i}", i, it) for i, it in enumerate(items)]


def _compare(case: TileCase, engine: str) -> Tuple[bool, str]:
    """Run one case; ``(passed, message)``."""
    status = StatusRegister()
    kw = dict(case.kwargs)
    acc = kw.pop("acc")
    exp = case.expected
    try:
        r = postprocess(acc, status=status, engine=engine, **kw)
    except PtonumError as exc:
        if exp is None:
            return (int(status) == 0, "rejected as the ASL does" if int(status) == 0 else
                    f"rejected, but the status register changed to {int(status):#04x}")
        return False, f"rejected, but the ASL commits it: {exc}"
    if exp is None:
        return False, "committed, but the ASL rejects this case before any effect"
    problems: List[str] = []
    if r.dst_type.name != exp["dst_type"]:
        problems.append(f"destination {r.dst_type.name}, expected {exp['dst_type']}")
    for name, got, want in (("D", r.d_bits, exp["d"]), ("RowMaxOut", r.row_max_bits, exp["row_max_out"]),
                            ("GroupMaxOut", r.group_max_bits, exp["group_max_out"])):
        if want is None or got is None:
            if (want is None) != (got is None):
                problems.append(f"{name} {'missing' if got is None else 'present'}, expected "
                                f"{'none' if want is None else 'one'}")
            continue
        g = np.asarray(got).astype(np.uint64)
        if g.shape != want.shape:
            problems.append(f"{name} shape {g.shape}, expected {want.shape}")
            continue
        bad = np.argwhere(g != want)
        if bad.size:
            i, j = (int(v) for v in bad[0])
            problems.append(f"{name}: {len(bad)} element(s) differ, first [{i}, {j}]: "
                            f"expected {int(want[i, j]):#x}, got {int(g[i, j]):#x}")
    if r.flags != exp["flags"]:
        problems.append(f"flags {r.flags:#04x} ({flag_names(r.flags)}), expected {exp['flags']:#04x} "
                        f"({flag_names(exp['flags'])})")
    return (not problems, "; ".join(problems))


def check_tiles(
    cases: List[TileCase],
    path: str,
    engine: str = "fast",
    *,
    max_report: int = 10,
    progress: Optional[Callable[[int], None]] = None,
    select: Optional[Iterable[int]] = None,
) -> FileReport:
    """Run every case (or the cases at the indices ``select``, as ``check.select_rows`` gives them for
    ``--limit``/``--sample``) through ``fpatr.postprocess`` in ``engine`` and compare.

    A case counts as a mismatch when any output, the destination type or the
    flags differ, when a case the ASL commits is rejected, or when a case the
    ASL never commits is accepted (or changes the status register). Failures
    carry the item index as their ``line``.

    Source: ADR-0085 D181; ``CommitMatrixResult`` and
    ``BundleMatrixPostProcessSourcesLegal``.
    """
    check_engine(engine)
    failures: List[Failure] = []
    mismatched = 0
    chosen = cases if select is None else [cases[int(i)] for i in select]
    for case in chosen:
        ok, message = _compare(case, engine)
        if not ok:
            mismatched += 1
            if len(failures) < max_report:
                failures.append(Failure(path, case.index, "tile", f"{case.source} ({case.describe()}): {message}"))
        if progress is not None:
            progress(1)
    return FileReport(path=path, op=TILES_OP, engine=engine, rows=len(cases), checked=len(chosen),
                      passed=len(chosen) - mismatched, mismatched=mismatched, errors=0, malformed=0,
                      failures=failures, schema=None)


def read_tiles(path: str) -> List[TileCase]:
    """Read and parse a tile file (gzip or plain JSON). Raises :class:`UsageError`."""
    return parse_tiles(read_text(path), path)
