"""Check vector files against the model (``ptonum check``).

A file is parsed with its schema (:mod:`ptonum.conformance.schema`), the model
is run on the rows in chunks (large vectorized calls for the fast engine,
smaller ones for the reference engine so a progress bar can move), and every
row whose bits or flags differ from the expected columns, every row the model
rejected and every malformed row is counted as a failure, with its file and
line.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from .._util import check_engine
from ..errors import UsageError
from .schema import Batch, ParsedFile, Schema, parse_file, parse_text, read_text_rows

__all__ = ["Failure", "FileReport", "check_parsed", "check_file", "select_rows", "select_among", "selected_rows",
           "check_seed", "mismatch_text", "CHUNK"]

#: rows per model call, by engine
CHUNK = {"fast": 1 << 18, "reference": 1 << 11}


@dataclass
class Failure:
    """One failing row: ``kind`` is ``mismatch``, ``error`` (the model raised) or ``malformed``; a tile
    case's is ``tile`` or ``malformed tile``."""

    path: str
    line: int
    kind: str
    message: str
    row: Optional[Dict[str, int]] = None
    got: Optional[Dict[str, int]] = None
    extra: Dict[str, str] = field(default_factory=dict)  #: the row's ``source``/``comment`` columns, if any

    @property
    def where(self) -> str:
        """``FILE:LINE`` of a CSV row; ``FILE: item N`` of a tile case (``line`` is its 0-based index in
        the JSON list), the form every tile-file message uses; ``FILE`` of a malformed tile case (its
        message begins ``item N.field``)."""
        if self.kind == "tile":
            return f"{self.path}: item {self.line}"
        if self.kind == "malformed tile":  # the message names the item and field (``item 3.case: ...``)
            return self.path
        return f"{self.path}:{self.line}"


@dataclass
class FileReport:
    """Counts for one file in one engine; ``failures`` keeps the first ``max_report``."""

    path: str
    op: str
    engine: str
    rows: int  #: data rows in the file
    checked: int  #: rows run through the model (after --limit/--sample)
    passed: int
    mismatched: int
    errors: int
    malformed: int
    failures: List[Failure] = field(default_factory=list)
    schema: Optional[Schema] = None

    @property
    def failed(self) -> int:
        return self.mismatched + self.errors + self.malformed

    @property
    def ok(self) -> bool:
        return self.failed == 0


def check_seed(seed: int, name: str = "seed") -> None:
    """:class:`UsageError` unless ``seed`` is a non-negative integer (what numpy's generators accept)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise UsageError(f"{name} = {seed!r}: expected a non-negative integer")
    if seed < 0:
        raise UsageError(f"{name} = {seed}: expected a non-negative integer (0 or more)")


def select_rows(n: int, limit: Optional[int] = None, sample: Optional[int] = None, seed: int = 0) -> np.ndarray:
    """Row indices to check: all, the first ``limit``, or ``sample`` rows drawn
    without replacement with ``seed`` (sorted, deterministic).

    Raises:
        UsageError: a negative ``limit``, ``sample`` or ``seed``.
    """
    idx = np.arange(n, dtype=np.int64)
    check_seed(seed)
    if sample is not None:
        if sample < 0:
            raise UsageError(f"sample = {sample}: expected a non-negative row count")
        if sample < n:
            rng = np.random.default_rng(seed)
            idx = np.sort(rng.choice(n, size=sample, replace=False))
    if limit is not None:
        if limit < 0:
            raise UsageError(f"limit = {limit}: expected a non-negative row count")
        idx = idx[:limit]
    return idx


def select_among(kept: Union[Sequence[int], np.ndarray], malformed: Sequence[int], limit: Optional[int] = None,
                 sample: Optional[int] = None, seed: int = 0) -> Tuple[np.ndarray, np.ndarray]:
    """The rows ``limit``/``sample`` select when a file's well-formed data rows are at the positions ``kept`` and
    its malformed ones at ``malformed`` (line numbers or item indices): :func:`select_rows` over all the data
    rows in file order, so ``--limit N`` takes the first N data rows, malformed or not, and ``--sample N``
    draws among all of them (the same rows as before when no row is malformed).  Returns the indices into
    ``kept`` and into ``malformed`` of the rows selected, each ascending.

    Raises:
        UsageError: a negative ``limit``, ``sample`` or ``seed``.
    """
    good = np.asarray(kept, dtype=np.int64).reshape(-1)
    bad = np.asarray(malformed, dtype=np.int64).reshape(-1)
    sel = select_rows(int(good.size + bad.size), limit, sample, seed)
    if not bad.size:
        return sel, np.zeros(0, dtype=np.int64)
    order = np.argsort(np.concatenate([good, bad]), kind="stable")  # position in file order -> row
    chosen = order[sel]
    return np.sort(chosen[chosen < good.size]), np.sort(chosen[chosen >= good.size] - good.size)


def selected_rows(parsed: ParsedFile, limit: Optional[int] = None, sample: Optional[int] = None,
                  seed: int = 0) -> ParsedFile:
    """``parsed`` with only the data rows ``limit``/``sample`` select (:func:`select_among`), well-formed and
    malformed; ``total`` stays the file's.  ``parsed`` itself when neither is given."""
    if limit is None and sample is None:
        return parsed
    good, bad = select_among(parsed.lines, [ln for ln, _ in parsed.bad], limit, sample, seed)
    return replace(parsed, rows=parsed.take(good), lines=parsed.lines[good],
                   bad=[parsed.bad[int(i)] for i in bad])


def check_parsed(
    parsed: ParsedFile,
    engine: str = "fast",
    *,
    limit: Optional[int] = None,
    sample: Optional[int] = None,
    seed: int = 0,
    max_report: int = 10,
    progress: Optional[Callable[[int], None]] = None,
) -> FileReport:
    """Run the model on the rows of ``parsed`` and compare (one engine).

    With ``limit`` or ``sample`` only the data rows they select (:func:`select_among`) are checked and
    counted, the malformed ones among them included; ``rows`` of the report is the file's total."""
    check_engine(engine)
    parsed = selected_rows(parsed, limit, sample, seed)
    schema = parsed.schema
    failures: List[Failure] = []
    for line, msg in parsed.bad:
        if len(failures) < max_report:
            failures.append(Failure(parsed.path, line, "malformed", msg))
    sel = np.arange(len(parsed), dtype=np.int64)
    chunk = CHUNK[engine]
    mismatched = 0
    errors = 0
    pending: List[Failure] = []
    for start in range(0, sel.size, chunk):
        idx = sel[start : start + chunk]
        batch: Batch = parsed.take(idx)
        res = schema.run(batch, engine)
        bad = schema.mismatch(batch, res.got)
        err_idx = np.array(sorted(res.errors), dtype=np.int64)
        if err_idx.size:
            bad[err_idx] = False
        errors += int(err_idx.size)
        mismatched += int(np.count_nonzero(bad))
        for i in np.flatnonzero(bad)[: max_report].tolist() + err_idx[:max_report].tolist():
            row = schema.row_dict(batch, i)
            got = {c.name: int(res.got[c.name][i]) for c in schema.outputs}
            if i in res.errors:
                pending.append(Failure(parsed.path, int(parsed.lines[idx[i]]), "error", res.errors[i], row, None))
            else:
                pending.append(Failure(parsed.path, int(parsed.lines[idx[i]]), "mismatch", mismatch_text(schema, row, got), row, got))
        if progress is not None:
            progress(int(idx.size))
    pending.sort(key=lambda f: f.line)
    failures = sorted(failures + pending, key=lambda f: f.line)[:max_report]
    for f in failures:
        f.extra = parsed.extras.get(f.line, {})
    return FileReport(
        path=parsed.path,
        op=schema.op,
        engine=engine,
        rows=parsed.total,
        checked=int(sel.size),
        passed=int(sel.size) - mismatched - errors,
        mismatched=mismatched,
        errors=errors,
        malformed=len(parsed.bad),
        failures=failures,
        schema=schema,
    )


def mismatch_text(schema: Schema, row: Dict[str, int], got: Dict[str, int]) -> str:
    """One line per output column: expected and got values, ``<-- differs`` where they differ.

    Source: no spec counterpart (report text).
    """
    parts = []
    for c in schema.outputs:
        exp = schema.describe_value(c, row[c.name], row)
        g = schema.describe_value(c, got[c.name], row)
        mark = "" if row[c.name] == got[c.name] else "  <-- differs"
        parts.append(f"{c.name}: expected {exp}, got {g}{mark}")
    return "; ".join(parts)


def check_file(
    path: str,
    engines: Sequence[str] = ("fast",),
    *,
    limit: Optional[int] = None,
    sample: Optional[int] = None,
    seed: int = 0,
    max_report: int = 10,
    progress: Optional[Callable[[int], None]] = None,
) -> List[FileReport]:
    """Parse ``path`` once and check it in each engine; one report per engine.

    Raises :class:`UsageError` when the file cannot be read or its header
    matches no schema.
    """
    if limit is not None and sample is None and limit >= 0:  # the first rows read, the others only counted
        text, more = read_text_rows(path, limit)
        parsed = parse_text(text, str(path))
        parsed = replace(parsed, total=parsed.total + more)
    else:
        parsed = parse_file(path)
    return [
        check_parsed(parsed, e, limit=limit, sample=sample, seed=seed, max_report=max_report, progress=progress)
        for e in engines
    ]
