"""Step-by-step explanations of one element (``ptonum explain``).

The traces themselves come from the model (``postprocess_element_trace`` in
:mod:`ptonum.fpatr.element`, ``reduction_trace`` in :mod:`ptonum.fpatr.reduction`,
``to_e8m0_trace`` in :mod:`ptonum.tcvt`); each returns ``(bits, flags, steps)``
where every step names the ASL function that owns it, says what happened and
which flags it raised.  This module only lays them out: one numbered line per
step with its ASL function, then the final encoding and each flag with the step
that raised it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .._util import is_digits, printable
from ..errors import UsageError
from ..flags import flag_names
from .schema import TILE_FILE, Schema, describe_content, parse_text, read_text, read_text_through

if TYPE_CHECKING:  # annotations only: the fpatr modules are imported where an element is explained
    from ..fpatr.params import ParamWordLike

__all__ = [
    "Explanation",
    "tile_rejection",
    "RowExplanation",
    "explain_row",
    "explain_tile",
    "explain_tile_case",
    "explain_postprocess",
    "explain_tcvt",
    "explain_reduction",
    "explain_request",
    "explain_row_text",
    "explain_file_line",
    "render",
]

#: what ``-`` (standard input) is read from, as ``ptonum check -`` reads it
STDIN = "/dev/stdin"

_FLAG_BITS = (("NV", 0x01), ("DZ", 0x02), ("OF", 0x04), ("UF", 0x08), ("NX", 0x10))


class Explanation:
    """A rendered trace: ``bits``/``flags`` are the model's result, ``steps``
    the model's trace records, ``title`` one line naming the operation."""

    def __init__(self, title: str, bits: int, flags: int, steps: Sequence[Any], digits: Optional[int] = None,
                 result_label: str = "result") -> None:
        self.title = title
        self.bits = int(bits)
        self.flags = int(flags)
        self.steps = list(steps)
        self.digits = digits
        self.result_label = result_label

    def text(self) -> str:
        return render(self)

    def __str__(self) -> str:
        return render(self)


def _step_fields(step: Any) -> Tuple[str, str, str, int]:
    """(name, asl, text, flags) of a trace record, whatever its field names."""
    if isinstance(step, dict):
        get = step.get
    else:
        def get(k: str, d: Any = None) -> Any:
            return getattr(step, k, d)
    name = get("name", None) or get("step", None) or get("stage", None) or ""
    asl = get("asl", None) or get("function", None) or ""
    text = get("text", None) or get("detail", None) or get("description", None) or ""
    flags = get("flags", 0) or 0
    if not (name or asl or text) and isinstance(step, (tuple, list)):
        parts = list(step) + ["", "", "", 0]
        name, asl, text, flags = parts[0], parts[1], parts[2], parts[3]
    return str(name), str(asl), str(text), int(flags)


def render(ex: Explanation) -> str:
    lines = [ex.title]
    raised_by: Dict[str, str] = {}
    width = max([len(_step_fields(s)[0]) for s in ex.steps] + [4])
    for n, s in enumerate(ex.steps, 1):
        name, asl, text, flags = _step_fields(s)
        tail = f"  [raises {flag_names(flags)}]" if flags else ""
        lines.append(f"{n:3d}. {name:<{width}}  {asl}: {text}{tail}")
        for fname, bit in _FLAG_BITS:
            if flags & bit and fname not in raised_by:
                raised_by[fname] = f"step {n} ({name}, {asl})"
    enc = f"0x{ex.bits:0{ex.digits}x}" if ex.digits else f"{ex.bits:#x}"
    lines.append(f"{ex.result_label}: {enc}   flags: 0x{ex.flags:02x} ({flag_names(ex.flags)})")
    for fname, bit in _FLAG_BITS:
        if ex.flags & bit:
            lines.append(f"  {fname}: raised by {raised_by.get(fname, 'no single step (combined result)')}")
    return "\n".join(lines)


def _unpack(res: Any) -> Tuple[int, int, List[Any]]:
    if isinstance(res, tuple) and len(res) == 3:
        return int(res[0]), int(res[1]), list(res[2])
    bits = getattr(res, "bits", None)
    flags = getattr(res, "flags", None)
    steps = getattr(res, "steps", None)
    if bits is None or flags is None or steps is None:
        raise UsageError(f"unexpected trace result {type(res).__name__}")
    return int(bits), int(flags), list(steps)


def explain_postprocess(acc_bits: int, *, pre_quant_mode: Any, relu_mode: Any, acc_type: Any,
                        quant_param: ParamWordLike = 0, relu_param: ParamWordLike = 0, rmode: Any = "NONE",
                        sat: Any = False) -> Explanation:
    """Trace one element of the B.FPATR post-process (``TileProfileMatrixPostProcessWithFlags``).

    ``pre_quant_mode`` and ``relu_mode`` are a member, a code or a name, as ``ptonum explain postprocess
    --mode/--relu`` read them (``"REQ8"``, ``3``, ``"0x03"``; ``"RELU"``, ``1``).  An unknown name or a code
    outside the field raises :class:`UsageError`, a reserved code :class:`IllegalEncodingError`, each naming
    the argument and the value.

    ``rmode`` (B.DATR RMode, name or code 0-7) defaults to ``"NONE"`` (code 0; NONE means RNE), the
    default of :func:`~ptonum.fpatr.postprocess_element_trace` and of ``ptonum explain postprocess --rmode``;
    the title names the mode as given (``rmode=NONE``).  ``sat`` (B.DATR Sat) defaults to False (wrap).
    """
    from ..fpatr.element import postprocess_element_trace
    from ..formats import parse_data_type
    from .compare import parse_mode, parse_relu  # the command line's readers of --mode/--relu

    pre_quant_mode = parse_mode(pre_quant_mode, "pre_quant_mode")
    relu_mode = parse_relu(relu_mode, "relu_mode")
    res = postprocess_element_trace(
        acc_bits, pre_quant_mode=pre_quant_mode, relu_mode=relu_mode, acc_type=acc_type,
        quant_param=quant_param, relu_param=relu_param, rmode=rmode, sat=sat,
    )
    bits, flags, steps = _unpack(res)
    digits = None
    try:
        from ..fpatr import output_type
        from .schema import dst_hex_digits

        dst = output_type(int(pre_quant_mode), parse_data_type(acc_type, "acc_type"))
        digits = dst_hex_digits(dst.name)
        label = f"destination {dst.name}"
    except Exception:  # pragma: no cover - only the label depends on it
        label = "destination"
    at = parse_data_type(acc_type, "acc_type")
    title = (f"postprocess_element: PreQuantMode={int(pre_quant_mode)} ReluMode={int(relu_mode)} "
             f"acc_type={at.name} acc=0x{int(acc_bits):08x} quant_param=0x{int(quant_param):016x} "
             f"relu_param=0x{int(relu_param):05x} rmode={_mode_name(rmode)} sat={int(bool(sat))}")
    return Explanation(title, bits, flags, steps, digits, label)


def tile_rejection(*, pre_quant_mode: Any, relu_mode: Any, acc_type: Any, quant_param: Optional[int] = None,
                   relu_param: Optional[int] = None, rmode: Any = "NONE", sat: Any = False) -> Optional[str]:
    """Why the B.FPATR tile operation would reject this element configuration, or None.

    Runs the tile operation's own preflight checks (ADR-0085 D175-D180): B.DATR
    RMode/Sat against the mode (:func:`ptonum.fpatr.attributes.check_datr`), the
    accumulator class (``check_accumulator_type``), the quantization word when the mode
    takes one (``check_quant_param``) and the activation word for ReluMode 2/3
    (``check_relu_param``).  The element function itself is defined for every such
    input, so ``ptonum explain`` still traces it and prints this reason as a note.
    Unreadable arguments raise :class:`UsageError` as usual.
    """
    from ..errors import IllegalEncodingError, TileLegalityError
    from ..formats import parse_data_type
    from ..fpatr import MODE_TABLE, parse_pre_quant_mode, parse_relu_mode
    from ..fpatr.attributes import check_accumulator_type, check_datr
    from ..fpatr.params import check_quant_param, check_relu_param

    mode = parse_pre_quant_mode(pre_quant_mode, "--mode")
    relu = int(parse_relu_mode(relu_mode, "--relu"))
    at = parse_data_type(acc_type, "--acc-type")
    info = MODE_TABLE[int(mode)]
    try:
        check_datr(mode, rmode, sat)
        check_accumulator_type(mode, at)
        if info.has_parameter and quant_param is not None:
            check_quant_param(mode, int(quant_param), "--quant-param")
        if relu in (2, 3) and relu_param is not None:
            check_relu_param(int(relu_param), "--relu-param")
    except (TileLegalityError, IllegalEncodingError) as exc:
        return " ".join(str(exc).split())
    return None


def _mode_name(rmode: Any) -> str:
    from ..rounding import parse_rounding_mode

    return parse_rounding_mode(rmode).name


def explain_tcvt(src_bits: int, *, src_type: Any, rmode: Any = "NONE", sat: Any = False) -> Explanation:
    """Trace one TCVT-to-E8M0 conversion (``ReferenceFloatToE8M0``)."""
    from ..tcvt import to_e8m0_trace
    from ..formats import parse_data_type

    bits, flags, steps = _unpack(to_e8m0_trace(src_bits, src_type=src_type, rmode=rmode, sat=sat))
    st = parse_data_type(src_type, "src_type")
    title = f"tcvt to E8M0: src_type={st.name} src=0x{int(src_bits):x} rmode={_mode_name(rmode)} sat={int(bool(sat))}"
    return Explanation(title, bits, flags, steps, 2, "E8M0")


def explain_reduction(current: int, candidate: int, *, acc_type: Any, max_abs: Any = False) -> Explanation:
    """Trace one reduction step (``TileProfileMatrixReductionStepWithFlags``)."""
    from ..fpatr.reduction import reduction_trace
    from ..formats import parse_data_type

    bits, flags, steps = _unpack(reduction_trace(current, candidate, acc_type=acc_type, max_abs=max_abs))
    at = parse_data_type(acc_type, "acc_type")
    title = (f"reduction_step: acc_type={at.name} max_abs={int(bool(max_abs))} "
             f"current=0x{int(current):08x} candidate=0x{int(candidate):08x}")
    return Explanation(title, bits, flags, steps, 8, f"{at.name} result")


def explain_request(op: str, kwargs: Dict[str, Any]) -> Explanation:
    """Dispatch a schema's explain request (``postprocess``/``tcvt``/``reduction``)."""
    kw = dict(kwargs)
    if op == "postprocess":
        return explain_postprocess(kw.pop("acc_bits"), **kw)
    if op == "tcvt":
        return explain_tcvt(kw.pop("src_bits"), **kw)
    if op == "reduction":
        return explain_reduction(kw.pop("current"), kw.pop("candidate"), **kw)
    raise UsageError(f"explain: no trace for operation {op!r}")


def explain_row_text(schema: Schema, row: Dict[str, int]) -> str:
    """The explanation of one parsed row, with the row's expected columns appended."""
    req = schema.explain_request(row)
    exp = "  ".join(f"{c.name}={schema.describe_value(c, row[c.name], row)}" for c in schema.outputs if c.name in row)
    if req is None:
        return _plain_row(schema, row) + (f"\nexpected (vector): {exp}" if exp else "")
    text = explain_request(*req).text()
    return text + (f"\nexpected (vector): {exp}" if exp else "")


def _plain_row(schema: Schema, row: Dict[str, int]) -> str:
    """Operations without a trace function: inputs and the reference engine's outputs."""
    batch = {k: np.array([v], dtype=np.uint64 if k not in ("exponent",) else np.int64) for k, v in row.items()}
    res = schema.run(batch, "reference")
    lines = [f"{schema.op} ({schema.asl}): {schema.describe_inputs(row)}"]
    if res.errors:
        lines.append(f"model: {res.errors[0]}")
    else:
        got = {k: int(v[0]) for k, v in res.got.items()}
        lines.append("model (reference): " + "  ".join(
            f"{c.name}={schema.describe_value(c, got[c.name], {**row, **got})}" for c in schema.outputs))
        if schema.op in _LEGALITY_OPS:
            lines.append(_legality_line(schema.op, row, bool(got["legal"])))
    return "\n".join(lines)


#: the legality files: a row names a parameter word and whether the ASL accepts it (``legal``)
_LEGALITY_OPS = ("quant_param_legal", "relu_param_legal")


def _legality_line(op: str, row: Dict[str, int], legal: bool) -> str:
    """Why the model accepts or rejects a legality row's word, and whether the vector says the same.

    The reason is the typed error (:class:`~ptonum.errors.TileLegalityError` or, for a reserved
    PreQuantMode, :class:`~ptonum.errors.IllegalEncodingError`) the tile operation raises for the word:
    :func:`ptonum.fpatr.params.check_quant_param` / ``check_relu_param``, the rule of
    ``BundleFPATRQuantParameterWordLegal`` / ``BundleFPATRReluParameterWordLegal`` (ADR-0085 D180)."""
    from ..errors import PtonumError
    from ..fpatr.params import check_quant_param, check_relu_param

    why = None
    try:
        if op == "quant_param_legal":
            check_quant_param(int(row["pre_quant_mode"]), int(row["word"]), "word")
        else:
            check_relu_param(int(row["word"]), "word")
    except PtonumError as exc:
        why = " ".join(str(exc).split())
    verdict = "rejected" if not legal else "accepted"
    agrees = "as the vector expects" if legal == bool(row.get("legal", legal)) else (
        f"but the vector expects it {'accepted (legal=1)' if row.get('legal') else 'rejected (legal=0)'}")
    if not legal:
        return f"model: the word is {verdict}, {agrees}: {why or 'the legality function answers 0'}"
    return f"model: the word is {verdict} (no rule rejects it), {agrees}" + (f"; but the tile operation's check "
                                                                            f"says: {why}" if why else "")


class RowExplanation:
    """``explain --row``: the text, and whether the model (reference engine) agrees with the row.

    ``status`` is ``"match"``, ``"mismatch"`` (bits or flags differ) or ``"error"`` (the
    model raised for the row's inputs).
    """

    def __init__(self, text: str, status: str, detail: str = "") -> None:
        self.text = text
        self.status = status
        self.detail = detail

    @property
    def ok(self) -> bool:
        return self.status == "match"

    def __str__(self) -> str:
        return self.text


def explain_file_line(spec: str) -> str:
    """Explain row ``FILE:LINE`` of a vector file (LINE is the 1-based line number)."""
    return explain_row(spec).text


def explain_row(spec: str) -> RowExplanation:
    """Explain row ``FILE:LINE`` and compare the model (reference engine) with its expected columns.

    ``FILE`` ``-`` is standard input, read whole (as ``ptonum check -`` reads it).  The text ends with
    ``MATCH: ...`` or ``MISMATCH: ...``.  Raises :class:`UsageError` for
    a bad spec, an unreadable file, a file that is not a CSV vector file (a tile file, whose cases
    are whole tiles, included), a malformed row or a line that holds no data row.
    """
    from .check import mismatch_text

    path, sep, line_s = spec.rpartition(":")
    if not sep or not is_digits(line_s) or not path.strip():
        raise UsageError(f"--row = {spec!r}: expected FILE:LINE" + (" (the file name is empty)" if sep and is_digits(line_s)
                                                                   else ""))
    line = int(line_s)
    name = printable(path)  # the path in messages: its control characters as escapes (a newline kept visible)
    if path == "-":  # standard input, as `ptonum check -` reads it: read once, whole (it cannot be read again)
        raw, whole, dropped = read_text(STDIN, name=name), True, 0
    else:
        # the header and this line: the file read no further
        raw, whole, dropped = read_text_through(path, line, name=name)
    what = describe_content(raw)
    if what is not None:  # a tile case is a whole tile, not one element: no line of it to explain
        raise UsageError(f"{name} is {what}; --row takes a line of a CSV vector file" + (
            f" (`ptonum explain --tile {name}:INDEX` explains one of its cases, `ptonum check {name}` runs them)"
            if what == TILE_FILE else ""))
    parsed = parse_text(raw, name, dropped=dropped)  # the file's line numbers, the lines left out counted
    for ln, msg in parsed.bad:
        if ln == line:
            raise UsageError(f"{name}:{line}: malformed row: {msg}")
    hit = np.flatnonzero(parsed.lines == line)
    if hit.size == 0 and not whole:  # the message counts the file's data rows: the whole file is read for them
        parsed = parse_text(read_text(path, name=name), name)
    if hit.size == 0:
        lines = [int(parsed.lines.min()), int(parsed.lines.max())] if parsed.lines.size else []
        lines += [ln for ln, _ in parsed.bad]  # (malformed rows are data rows too)
        where = f", lines {min(lines)}..{max(lines)}" if lines else ""
        raise UsageError(f"{name}:{line}: no data row at this line (file has {parsed.total} data rows{where})")
    schema = parsed.schema
    row = schema.row_dict(parsed.rows, int(hit[0]))
    extra = parsed.extras.get(line, {})  # a source label / comment column, when the file has them
    # the path as given and the file's own text, their control characters shown as escapes (one line, inert)
    where = printable(f"{path}:{line}" + (" (" + ", ".join(f"{k}: {v}" for k, v in extra.items()) + ")"
                                          if extra else ""))
    text = f"{where}\n" + explain_row_text(schema, row)
    batch = parsed.take(hit[:1])
    res = schema.run(batch, "reference")
    if res.errors:
        detail = res.errors[0]
        return RowExplanation(text + f"\nMISMATCH: the model rejects the row's inputs: {detail}", "error", detail)
    bad = schema.mismatch(batch, res.got)
    if bool(np.any(bad)):
        got = {c.name: int(res.got[c.name][0]) for c in schema.outputs}
        detail = mismatch_text(schema, row, got)
        return RowExplanation(text + f"\nMISMATCH: the model (reference engine) contradicts the row: {detail}",
                              "mismatch", detail)
    return RowExplanation(text + "\nMATCH: the model (reference engine) gives the row's expected values", "match")


def explain_tile(spec: str, element: Optional[Tuple[int, int]] = None) -> RowExplanation:
    """Explain item ``FILE:INDEX`` of a tile file (``tiles.json.gz``; INDEX is the 0-based item index that
    ``ptonum check`` reports as ``item N``) and compare the model (reference engine) with its expected commit.

    ``FILE`` ``-`` is standard input, read whole.  The text is the case, then the element trace of
    :func:`explain_tile_case`, and ends with ``MATCH: ...`` or ``MISMATCH: ...``.  Raises :class:`UsageError`
    for a bad spec, an unreadable file, a file that is not a tile file, an index outside the list, a
    malformed item, or an ``element`` outside the tile.
    Source: ``CommitMatrixResult`` (ADR-0085 D181), as :func:`ptonum.conformance.tiles.check_tiles` runs it.
    """
    from .tiles import is_tiles_file, parse_tile_items

    path, sep, index_s = spec.rpartition(":")
    if not sep or not is_digits(index_s) or not path.strip():
        raise UsageError(f"--tile = {spec!r}: expected FILE:INDEX (the item number `ptonum check` reports)"
                         + (" (the file name is empty)" if sep and is_digits(index_s) else ""))
    index = int(index_s)
    name = printable(path)  # the path in messages: its control characters as escapes (a newline kept visible)
    raw = read_text(STDIN if path == "-" else path, name=name)
    if not is_tiles_file(raw):
        what = describe_content(raw) or "not a tile file (a JSON list of tile cases)"
        raise UsageError(f"{name} is {what}; --tile takes an item of a tile file (a CSV vector file's rows: "
                         "`ptonum explain --row FILE:LINE`)")
    cases, bad = parse_tile_items(raw, name)
    for i, msg in bad:
        if i == index:
            raise UsageError(f"{name}: malformed tile case: {msg}")
    hit = [c for c in cases if c.index == index]
    if not hit:
        total = len(cases) + len(bad)
        raise UsageError(f"{name}: item {index}: no such item (the file has {total} items, "
                         + (f"0..{total - 1})" if total else "none)"))
    res = explain_tile_case(hit[0], element)
    text = printable(f"{path}: item {index} (source: {hit[0].source})") + "\n" + res.text
    if res.ok:
        said = ("rejects the case before any effect, as the ASL does" if hit[0].expected is None
                else "gives the case's expected outputs")
        return RowExplanation(text + f"\nMATCH: the model (reference engine) {said}", "match")
    return RowExplanation(text + f"\nMISMATCH: the model (reference engine) contradicts the case: {res.detail}",
                          res.status, res.detail)


def explain_tile_case(case: Any, element: Optional[Tuple[int, int]] = None) -> RowExplanation:
    """One tile case (a :class:`~ptonum.conformance.tiles.TileCase`): its configuration, the trace of one
    element of D (``element`` ``(i, j)``; by default the first element whose D differs from the expected
    one, else ``[0, 0]``; none by default for a case the ASL never commits) by :func:`explain_postprocess`
    with that element's accumulator and parameter words, its expected D, and the whole case's comparison
    (``status`` ``match`` or ``mismatch``, ``detail`` what differs, as ``ptonum check`` says it).  A case the
    tile operation rejects says why (the model's typed error).  Raises :class:`UsageError` for an ``element``
    outside the tile.  Source: ``CommitMatrixResult`` and ``TileProfileMatrixPostProcessWithFlags``
    (ADR-0085 D181)."""
    from ..errors import PtonumError
    from ..flags import StatusRegister
    from ..fpatr import postprocess
    from .schema import dst_hex_digits
    from .tiles import compare_case

    kw = dict(case.kwargs)
    acc = kw.pop("acc")
    m, n = acc.shape
    lines = [f"tile: {case.describe()}"]
    got = None
    try:
        got = postprocess(acc, status=StatusRegister(), engine="reference", **kw)
    except PtonumError as exc:
        lines.append(f"model: the tile operation rejects the case: {' '.join(str(exc).split())}")
    exp = case.expected
    if exp is None:
        lines.append("expected (vector): rejected before any effect (the ASL never commits this case)")
    if element is None and exp is None:  # no D to compare: the element function's result is not the tile's
        ok, detail = compare_case(case, "reference")
        lines.append("no element trace: the case never commits (--element I,J traces one element anyway)")
        return RowExplanation(_printable_lines("\n".join(lines)), "match" if ok else "mismatch", "" if ok else detail)
    if element is None:
        element = (0, 0)
        if got is not None and exp is not None and np.shape(got.d_bits) == exp["d"].shape:
            diff = np.argwhere(np.asarray(got.d_bits).astype(np.uint64) != exp["d"])
            if diff.size:
                element = (int(diff[0][0]), int(diff[0][1]))
    i, j = element
    if not (0 <= i < m and 0 <= j < n):
        raise UsageError(f"--element {i},{j}: outside the {m}x{n} tile (rows 0..{m - 1}, columns 0..{n - 1})")
    attrs = kw["attributes"]
    qt, rt = kw.get("quant_tile"), kw.get("relu_tile")
    qp = int(qt[0, j]) if qt is not None else int(kw.get("quant_param", 0))
    rp = int(rt[0, j]) if rt is not None else int(kw.get("relu_param", 0))
    try:
        trace = explain_postprocess(int(acc[i, j]), pre_quant_mode=attrs["pre_quant_mode"],
                                    relu_mode=attrs["relu_mode"], acc_type=kw["acc_type"], quant_param=qp,
                                    relu_param=rp, rmode=kw["rmode"], sat=kw["sat"]).text()
        lines.append(f"D[{i}, {j}]: {trace}")
    except PtonumError as exc:
        lines.append(f"D[{i}, {j}]: no element trace ({' '.join(str(exc).split())})")
    if exp is not None:
        lines.append(f"expected (vector): D[{i}, {j}]=0x{int(exp['d'][i, j]):0{dst_hex_digits(exp['dst_type'])}x} "
                     f"{exp['dst_type']}, tile flags 0x{exp['flags']:02x} ({flag_names(exp['flags'])})")
    ok, detail = compare_case(case, "reference")
    return RowExplanation(_printable_lines("\n".join(lines)), "match" if ok else "mismatch", "" if ok else detail)


def _printable_lines(text: str) -> str:
    """``text`` with each of its lines through :func:`~ptonum._util.printable` (the newlines kept)."""
    return "\n".join(printable(line) for line in text.split("\n"))
