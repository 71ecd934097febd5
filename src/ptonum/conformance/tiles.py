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
import re
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from .._util import check_engine, int_text
from ..errors import PtonumError, UsageError, short_text
from ..flags import StatusRegister, flag_names
from ..formats import TileDataType, carrier_bits
from ..fpatr import postprocess
from ..fpatr.attributes import GROUP_N_TABLE, mode_info
from ..rounding import RoundingMode
from .check import Failure, FileReport, select_among
from .schema import read_text

__all__ = ["TileCase", "parse_tiles", "parse_tile_items", "read_tiles", "is_tiles_file", "check_tiles", "compare_case",
           "TILES_OP"]

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


def _hex_rows(where: str, rows: Any, width: int, cols: Optional[int] = None,
              nrows: Optional[int] = None, usual: Optional[int] = None) -> np.ndarray:
    if not isinstance(rows, list) or not rows or not all(isinstance(r, list) and r for r in rows):
        raise UsageError(f"{where}: expected a non-empty list of non-empty rows")
    if nrows is not None and len(rows) != nrows:
        raise UsageError(f"{where}: {len(rows)} rows, expected {nrows}")
    if cols is None:  # the common row length: a short or long row is blamed, not its neighbour
        lengths = [len(r) for r in rows]
        # most frequent; on a tie the length the other fields give (``usual``), then the first row's
        n = max(set(lengths), key=lambda k: (lengths.count(k), k == usual, -lengths.index(k)))
        odd = next((i for i, k in enumerate(lengths) if k != n), None)
        if odd is not None:
            raise UsageError(f"{where}: rows of different lengths: row {odd} has {lengths[odd]} elements, "
                             f"row {lengths.index(n)} has {n}")
    else:
        n = cols
    out = np.empty((len(rows), n), np.uint64)
    for i, row in enumerate(rows):
        if len(row) != n:
            raise UsageError(f"{where}[{i}]: {len(row)} elements, expected {n}")
        for j, text in enumerate(row):
            out[i, j] = _hex(f"{where}[{i}][{j}]", text, width)
    return out


def _shape_claims(case: Dict[str, Any], exp: Any) -> Tuple[List[Tuple[str, int]], List[Tuple[str, int]]]:
    """The row counts and row lengths the fields other than ``case.acc`` give for the tile (each a
    (field name, count) pair; a field that is not a list, or a ragged one, gives nothing)."""
    rows: List[Tuple[str, int]] = []
    cols: List[Tuple[str, int]] = []
    exp = exp if isinstance(exp, dict) else {}
    d = exp.get("d")
    if isinstance(d, list) and d and all(isinstance(r, list) for r in d):
        rows.append(("expected.d", len(d)))
        if len({len(r) for r in d}) == 1:
            cols.append(("expected.d", len(d[0])))
    for name, obj, key in (("case.row_max_in", case, "row_max_in"), ("expected.row_max_out", exp, "row_max_out"),
                           ("expected.group_max_out", exp, "group_max_out")):
        if isinstance(obj.get(key), list) and obj[key]:
            rows.append((name, len(obj[key])))
    for key in ("quant_param", "relu_param"):
        if isinstance(case.get(key), list) and case[key]:
            cols.append((f"case.{key}", len(case[key])))
    return rows, cols


def _check_acc_shape(c: str, case: Dict[str, Any], exp: Any) -> Optional[int]:
    """Blame ``case.acc`` when it is the field out of step: its row count or row length differs from
    what every other field agrees on (with one other field only, both are named: either may be the
    damaged one).  Returns the row length the other fields agree on (None if they do not), for the
    ragged-row message of :func:`_hex_rows`.  Fields that disagree among themselves are left to their
    own checks."""
    acc = case.get("acc")
    if not isinstance(acc, list) or not acc or not all(isinstance(r, list) and r for r in acc):
        return None  # _hex_rows says so
    rows, cols = _shape_claims(case, exp)
    usual = cols[0][1] if cols and len({k for _, k in cols}) == 1 else None
    lengths = {len(r) for r in acc}
    for what, claims, mine in (("rows", rows, len(acc)), ("elements a row", cols, lengths.pop() if len(lengths) == 1
                                                          else None)):
        if mine is None or not claims or len({k for _, k in claims}) != 1 or claims[0][1] == mine:
            continue
        names = [name for name, _ in claims]
        other = claims[0][1]
        if len(names) == 1:
            raise UsageError(f"{c}.acc: {mine} {what}, but {names[0]} has {other} (one of the two is damaged)")
        raise UsageError(f"{c}.acc: {mine} {what}, but {', '.join(names[:-1])} and {names[-1]} have {other}")
    return usual


def _hex_list(where: str, items: Any, width: int, count: int) -> np.ndarray:
    if not isinstance(items, list):
        raise UsageError(f"{where}: expected a list of {count} hex words")
    if len(items) != count:
        raise UsageError(f"{where}: {len(items)} words, expected {count}")
    return _hex_rows(where, [items], width, count)[0]


#: ``expected.fault`` of a case that commits: the ASL's value for a run without a fault
NO_FAULT = "Fault_None"
#: the fields of an item, of its ``case`` and of its ``expected`` (vectors/README.md); any other is refused.
#: ``expected.mathematical_sources`` and ``expected.fault`` are further ASL outputs the shared file
#: carries; they are type-checked, and a committing case's fault must be :data:`NO_FAULT` (a commit is a
#: run without a fault); ``mathematical_sources`` is not compared (the model has no counterpart).
_ITEM_FIELDS = ("case", "expected", "source")
_CASE_FIELDS = ("acc_type", "acc", "pre_quant_mode", "relu_mode", "quant_param", "relu_param", "rmode", "sat",
                "row_max_en", "row_max_init", "row_max_in", "group_max_en", "group_n", "max_abs_en")
_EXPECTED_FIELDS = ("dst_type", "d", "row_max_out", "group_max_out", "flags", "sources_legal",
                    "mathematical_sources", "fault")
_ACC_TYPES = ("FP32", "S32", "U32")
_DST_TYPES = tuple(t.name for t in TileDataType)
_RMODES = tuple(m.name for m in RoundingMode)


def _fields(where: str, obj: Dict[str, Any], allowed: Tuple[str, ...], required: Tuple[str, ...]) -> None:
    """Refuse a field not in ``allowed`` (a misspelt one would otherwise be ignored) and a missing required one."""
    for key in obj:
        if key not in allowed:
            raise UsageError(f"{where}: unknown field {key!r} (expected {', '.join(allowed)})")
    for key in required:
        if key not in obj:
            raise UsageError(f"{where}: missing field {key!r}")


def _flag(where: str, value: Any) -> bool:
    """A boolean field: JSON true/false or the integers 0/1 (never a string, a float or another number)."""
    if isinstance(value, bool):
        return value
    if type(value) is int and value in (0, 1):
        return bool(value)
    raise UsageError(f"{where} = {json.dumps(value)}: expected 0/1 or true/false")


def _integer(where: str, value: Any, lo: int, hi: int) -> int:
    """An integer field in ``lo..hi`` (a JSON integer: not a boolean, a float or a string)."""
    if type(value) is not int or not lo <= value <= hi:
        raise UsageError(f"{where} = {json.dumps(value)}: expected an integer {lo}..{hi}")
    return value


def _choice(where: str, value: Any, choices: Tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise UsageError(f"{where} = {json.dumps(value)}: expected one of {', '.join(choices)}")
    return value


def _presence(where: str, given: bool, needed: bool, why: str) -> None:
    """A field written exactly where it is read: ``why`` says what reads it (or takes none)."""
    if given and not needed:
        raise UsageError(f"{where}: given, but {why}")
    if needed and not given:
        raise UsageError(f"{where}: missing, but {why}")


def _parse_case(where: str, index: int, item: Any) -> TileCase:
    """One item, every field validated (type, range, presence, shape): :class:`UsageError` naming the
    item and field otherwise, so a damaged file is a malformed file, never a pass or a model failure."""
    if not isinstance(item, dict):
        raise UsageError(f"{where}: expected an object with 'case', 'expected' and 'source'")
    _fields(where, item, _ITEM_FIELDS, _ITEM_FIELDS)
    case, exp = item["case"], item["expected"]
    for key, obj in (("case", case), ("expected", exp)):
        if not isinstance(obj, dict):
            raise UsageError(f"{where}.{key}: expected an object, got {json.dumps(obj)[:40]}")
    if not isinstance(item["source"], str):
        raise UsageError(f"{where}.source = {json.dumps(item['source'])[:40]}: expected a string")
    c = f"{where}.case"
    _fields(c, case, _CASE_FIELDS, ("acc_type", "acc", "pre_quant_mode", "relu_mode", "rmode", "sat",
                                    "row_max_en", "group_max_en", "max_abs_en"))
    usual = _check_acc_shape(c, case, exp)
    acc = _hex_rows(f"{c}.acc", case["acc"], 32, usual=usual).astype(np.uint32)
    m, n = acc.shape
    mode = _integer(f"{c}.pre_quant_mode", case["pre_quant_mode"], 0, 63)
    relu = _integer(f"{c}.relu_mode", case["relu_mode"], 0, 7)
    attrs: Dict[str, Any] = {"pre_quant_mode": mode, "relu_mode": relu}
    for key in ("row_max_en", "group_max_en", "max_abs_en"):
        attrs[key] = _flag(f"{c}.{key}", case[key])
    # RowMaxInit and GroupN may be left out where they are not read (the shared file does so): 0 then
    if attrs["row_max_en"] and "row_max_init" not in case:
        raise UsageError(f"{c}: missing field 'row_max_init' (row_max_en = 1 reads it)")
    attrs["row_max_init"] = _flag(f"{c}.row_max_init", case["row_max_init"]) if "row_max_init" in case else False
    if attrs["group_max_en"] and "group_n" not in case:
        raise UsageError(f"{c}: missing field 'group_n' (group_max_en = 1 reads it)")
    if "group_n" in case:
        attrs["group_n"] = _integer(f"{c}.group_n", case["group_n"], 0, GROUP_N_TABLE[-1])
        if attrs["group_n"] not in GROUP_N_TABLE:
            raise UsageError(f"{c}.group_n = {attrs['group_n']}: expected one of "
                             f"{', '.join(map(str, GROUP_N_TABLE))}")
    kwargs: Dict[str, Any] = {"acc": acc, "acc_type": _choice(f"{c}.acc_type", case["acc_type"], _ACC_TYPES),
                              "rmode": _choice(f"{c}.rmode", case["rmode"], _RMODES),
                              "sat": _flag(f"{c}.sat", case["sat"]), "attributes": attrs}
    try:
        parameter: Optional[str] = mode_info(mode).parameter
    except PtonumError:  # a reserved code: the tile operation must refuse it (checked against `expected`)
        parameter = None
    for key, tile, kind in (("quant_param", "quant_tile", parameter),
                            ("relu_param", "relu_tile", {2: "scalar", 3: "vector"}.get(relu, "none"))):
        why = f"PreQuantMode {mode}" if key == "quant_param" else f"ReluMode {relu}"
        if kind is not None:
            _presence(f"{c}.{key}", key in case, kind != "none",
                      f"{why} takes {'none' if kind == 'none' else 'a ' + kind + ' parameter'}")
        if key not in case:
            continue
        value = case[key]
        if kind == "vector" or (kind is None and isinstance(value, list)):
            if not isinstance(value, list):
                raise UsageError(f"{c}.{key}: {why} takes a list of {n} hex words")
            kwargs[tile] = _hex_list(f"{c}.{key}", value, 64, n).reshape(1, n)
        else:
            kwargs[key] = _hex(f"{c}.{key}", value, 64)
    _presence(f"{c}.row_max_in", "row_max_in" in case, attrs["row_max_init"],
              f"row_max_init = {int(attrs['row_max_init'])} (RowMaxIn is read only when it is 1)")
    if "row_max_in" in case:
        kwargs["row_max_in"] = _hex_list(f"{c}.row_max_in", case["row_max_in"], 32, m).astype(
            np.uint32).reshape(m, 1)

    e = f"{where}.expected"
    if "error" in exp:
        _fields(e, exp, ("error",), ("error",))
        if not isinstance(exp["error"], str):
            raise UsageError(f"{e}.error = {json.dumps(exp['error'])[:40]}: expected a string")
        return TileCase(index=index, source=item["source"], kwargs=kwargs, expected=None)
    _fields(e, exp, _EXPECTED_FIELDS, ("dst_type", "d", "flags", "sources_legal"))
    legal = _flag(f"{e}.sources_legal", exp["sources_legal"])
    if "mathematical_sources" in exp:
        _integer(f"{e}.mathematical_sources", exp["mathematical_sources"], 0, 1 << 16)
    if "fault" in exp and not isinstance(exp["fault"], str):
        raise UsageError(f"{e}.fault = {json.dumps(exp['fault'])[:40]}: expected a string")
    if legal and exp.get("fault", NO_FAULT) != NO_FAULT:  # a commit is a run without a fault
        raise UsageError(f"{e}.fault = {json.dumps(exp['fault'])[:40]}: a case that commits (sources_legal 1) "
                         f"has {NO_FAULT}; ptonum models no fault of a committed tile")
    for key, enable in (("row_max_out", "row_max_en"), ("group_max_out", "group_max_en")):
        _presence(f"{e}.{key}", key in exp, attrs[enable],
                  f"case.{enable} = {int(attrs[enable])} (the output exists only when it is 1)")
    group_n = attrs.get("group_n", 0)
    expected: Dict[str, Any] = {
        "dst_type": _choice(f"{e}.dst_type", exp["dst_type"], _DST_TYPES),
        "d": _hex_rows(f"{e}.d", exp["d"], 32, n, m),
        "row_max_out": None if "row_max_out" not in exp else
        _hex_list(f"{e}.row_max_out", exp["row_max_out"], 32, m).reshape(m, 1),
        "group_max_out": None if "group_max_out" not in exp else
        _hex_rows(f"{e}.group_max_out", exp["group_max_out"], 32, -(-n // group_n) if group_n else None, m),
        "flags": _hex(f"{e}.flags", exp["flags"], 5),
    }
    return TileCase(index=index, source=item["source"], kwargs=kwargs, expected=expected if legal else None)


class _DuplicateField(Exception):
    pass


def _no_duplicates(pairs: List[Tuple[str, Any]]) -> Dict[str, Any]:
    """A JSON object whose keys are all different (``json`` keeps the last of a repeated key silently)."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: Dict[str, int] = {}
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateField(key)
            seen[key] = 1
    return out


#: the most digits Python's ``int()`` (and so ``json.loads``) converts from decimal text (its default
#: ``sys.get_int_max_str_digits()``)
_JSON_INTEGER_DIGITS = 4300

#: a JSON integer with more digits than :data:`_JSON_INTEGER_DIGITS`
_LONG_JSON_INTEGER = re.compile(rb"(?<![0-9A-Za-z_.+])-?[0-9]{%d,}(?![0-9.eE])" % (_JSON_INTEGER_DIGITS + 1))


def _json_items(raw: bytes, path: str) -> List[Any]:
    """The JSON list of a tile file; :class:`UsageError` for a file that is not one."""
    try:
        items = json.loads(raw.decode("utf-8"), object_pairs_hook=_no_duplicates)
    except _DuplicateField as exc:
        raise UsageError(f"{path}: field {exc.args[0]!r} given twice in one JSON object") from None
    except (UnicodeDecodeError, ValueError) as exc:
        long_number = _LONG_JSON_INTEGER.search(raw) if "integer string conversion" in str(exc) else None
        if long_number is not None:  # Python's message told to call sys.set_int_max_str_digits() and not where
            line = raw.count(b"\n", 0, long_number.start()) + 1
            column = long_number.start() - (raw.rfind(b"\n", 0, long_number.start()) + 1) + 1
            raise UsageError(f"{path}: not a JSON tile list (line {line}, column {column}: a number of "
                             f"{len(long_number.group().lstrip(b'-'))} digits, more than the "
                             f"{_JSON_INTEGER_DIGITS} a JSON integer is read with; no tile field holds one)") from None
        raise UsageError(f"{path}: not a JSON tile list ({exc})") from None
    except RecursionError:  # arrays or objects nested thousands deep: no tile file's shape
        raise UsageError(f"{path}: not a JSON tile list (its arrays or objects are nested too deeply to read)") from None
    if not isinstance(items, list):
        raise UsageError(f"{path}: expected a JSON list of tile cases")
    return items


def parse_tiles(raw: bytes, path: str = "<tiles>") -> List[TileCase]:
    """Parse the bytes of a tile file (already decompressed).

    Raises :class:`UsageError` naming the item and field for anything malformed.
    """
    cases, bad = parse_tile_items(raw, path)
    if bad:
        raise UsageError(f"{path}: {bad[0][1]}")
    return cases


def parse_tile_items(raw: bytes, path: str = "<tiles>") -> Tuple[List[TileCase], List[Tuple[int, str]]]:
    """Parse the bytes of a tile file (already decompressed), keeping the well-formed items apart from
    the malformed ones, as a CSV file's malformed rows are kept apart (``ptonum check`` counts them).

    Returns ``(cases, bad)``: ``bad`` holds ``(index, message)`` of each malformed item, the message
    naming the item and field after ``FILE:`` (``item 3.case: missing field 'acc'``).  Raises
    :class:`UsageError` only for the whole file: not JSON, not a list, a field given twice.
    """
    items = _json_items(raw, path)
    cases: List[TileCase] = []
    bad: List[Tuple[int, str]] = []
    for i, it in enumerate(items):
        where = f"{path}: item {i}"
        try:
            cases.append(_parse_case(where, i, it))
        except UsageError as exc:
            text = str(exc)
            text = text[len(path) + 2:] if text.startswith(f"{path}: ") else text
            bad.append((i, short_text(text)))  # a field of megabytes: not all of it in the message
    return cases, bad


def compare_case(case: TileCase, engine: str) -> Tuple[bool, str]:
    """Run one case through ``fpatr.postprocess`` in ``engine`` and compare it with its expected commit:
    ``(passed, message)``, the message saying what differs (or that it was rejected as the ASL does).
    Model errors of a case the ASL commits are part of the message, never raised."""
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
        problems.append(f"destination: expected {exp['dst_type']}, got {r.dst_type.name}")
    d_digits = -(-carrier_bits(exp["dst_type"]) // 4)  # hex digits of a D word, as the file writes them
    for name, got, want, digits in (("D", r.d_bits, exp["d"], d_digits),
                                    ("RowMaxOut", r.row_max_bits, exp["row_max_out"], 8),
                                    ("GroupMaxOut", r.group_max_bits, exp["group_max_out"], 8)):
        if want is None or got is None:
            if (want is None) != (got is None):
                problems.append(f"{name}: expected {'none' if want is None else 'one'}, got "
                                f"{'none' if got is None else 'one'}")
            continue
        g = np.asarray(got).astype(np.uint64)
        if g.shape != want.shape:
            problems.append(f"{name} shape: expected {want.shape}, got {g.shape}")
            continue
        bad = np.argwhere(g != want)
        if bad.size:
            i, j = (int(v) for v in bad[0])
            problems.append(f"{name}: {len(bad)} element(s) differ, first [{i}, {j}]: "
                            f"expected 0x{int(want[i, j]):0{digits}x}, got 0x{int(g[i, j]):0{digits}x}")
    if r.flags != exp["flags"]:
        problems.append(f"flags: expected {exp['flags']:#04x} ({flag_names(exp['flags'])}), got {r.flags:#04x} "
                        f"({flag_names(r.flags)})")
    return (not problems, "; ".join(problems))


def check_tiles(
    cases: List[TileCase],
    path: str,
    engine: str = "fast",
    *,
    max_report: int = 10,
    progress: Optional[Callable[[int], None]] = None,
    select: Optional[Iterable[int]] = None,
    malformed: Sequence[Tuple[int, str]] = (),
    limit: Optional[int] = None,
    sample: Optional[int] = None,
    seed: int = 0,
) -> FileReport:
    """Run every case (or the cases at the indices ``select``; or the items ``limit``/``sample`` select among
    all the file's items, malformed ones included, as ``check.select_among`` does for ``--limit``/``--sample``:
    then only the malformed items selected are counted) through ``fpatr.postprocess`` in ``engine`` and compare.

    A case counts as a mismatch when any output, the destination type or the
    flags differ, when a case the ASL commits is rejected, or when a case the
    ASL never commits is accepted (or changes the status register). The
    malformed items of the file (``malformed``, as :func:`parse_tile_items` returns
    them) are counted and reported as ``malformed tile`` failures. Failures
    carry the item index as their ``line``.

    Source: ADR-0085 D181; ``CommitMatrixResult`` and
    ``BundleMatrixPostProcessSourcesLegal``.
    """
    check_engine(engine)
    rows = len(cases) + len(malformed)
    if limit is not None or sample is not None:
        if select is not None:
            raise UsageError("give select, or limit/sample, not both")
        good, bad = select_among([c.index for c in cases], [i for i, _ in malformed], limit, sample, seed)
        select = good.tolist()
        malformed = [malformed[int(i)] for i in bad]
    failures: List[Failure] = []
    mismatched = 0
    chosen = cases if select is None else [cases[int(i)] for i in select]
    for case in chosen:
        ok, message = compare_case(case, engine)
        if not ok:
            mismatched += 1
            if len(failures) < max_report:
                failures.append(Failure(path, case.index, "tile", f"{case.source} ({case.describe()}): {message}"))
        if progress is not None:
            progress(1)
    failures += [Failure(path, index, "malformed tile", message) for index, message in malformed[:max_report]]
    failures = sorted(failures, key=lambda f: f.line)[:max_report]
    return FileReport(path=path, op=TILES_OP, engine=engine, rows=rows, checked=len(chosen),
                      passed=len(chosen) - mismatched, mismatched=mismatched, errors=0, malformed=len(malformed),
                      failures=failures, schema=None)


def read_tiles(path: str) -> List[TileCase]:
    """Read and parse a tile file (gzip or plain JSON). Raises :class:`UsageError`."""
    return parse_tiles(read_text(path), path)
