"""``ptonum check`` across Dask workers: a large vector file split into row blocks.

The rows to check (after ``limit``/``sample``; the malformed rows they select go with
the first block) are cut into consecutive blocks; each block is one task running
:func:`ptonum.conformance.check.check_parsed` on its rows; the reports are merged:
counts add up, and the first ``max_report`` failures by line are kept.  Each block
keeps its first failures of each kind in line order, so the merged list equals the
serial one.

No spec counterpart (execution placement of the conformance check).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, List, Optional

import numpy as np

from ..conformance.check import FileReport, check_parsed, selected_rows
from ..conformance.schema import ParsedFile

__all__ = ["check_parsed_blocks", "BLOCK_ROWS"]

#: rows per task, by engine (the reference engine is ~100x slower per row)
BLOCK_ROWS = {"fast": 1 << 18, "reference": 1 << 12}


def _block(parsed: ParsedFile, idx: Any, first: bool) -> ParsedFile:
    """The rows ``idx`` of ``parsed`` as a file of their own (malformed rows go with the first block)."""
    lines = parsed.lines[idx]
    extras = {int(ln): parsed.extras[int(ln)] for ln in lines.tolist() if int(ln) in parsed.extras} if parsed.extras else {}
    if first:
        extras.update({ln: parsed.extras[ln] for ln, _ in parsed.bad if ln in parsed.extras})
    return replace(parsed, rows=parsed.take(idx), lines=lines, bad=list(parsed.bad) if first else [], extras=extras)


def check_parsed_blocks(parsed: ParsedFile, engine: str = "fast", *, client: Any, limit: Optional[int] = None,
                        sample: Optional[int] = None, seed: int = 0, max_report: int = 10,
                        block_rows: Optional[int] = None, progress: Optional[Callable[[int], None]] = None,
                        before_blocks: Optional[Callable[[int], None]] = None) -> FileReport:
    """:func:`ptonum.conformance.check.check_parsed` with the rows split into blocks run on ``client``.

    ``client``: a ``distributed.Client``, or ``None`` to run the blocks here one after the other.
    ``progress(rows)`` is called with each finished block's row count, ``before_blocks(rows)`` once with
    the rows of the largest block before any block runs (the command line's compile note).  Returns the merged
    :class:`FileReport`, equal to the serial one (counts and the first ``max_report`` failures).
    """
    parsed = selected_rows(parsed, limit, sample, seed)  # the rows --limit/--sample select, malformed ones too
    sel = np.arange(len(parsed), dtype=np.int64)
    size = block_rows or BLOCK_ROWS.get(engine, 1 << 12)
    if client is not None:  # at least a few blocks per worker
        workers = max(1, len(client.scheduler_info().get("workers", {})))
        size = max(1, min(size, -(-sel.size // (4 * workers))))
    starts = list(range(0, int(sel.size), size)) or [0]
    blocks = [_block(parsed, sel[s:s + size], k == 0) for k, s in enumerate(starts)]
    if before_blocks is not None:
        before_blocks(min(size, int(sel.size)))
    reports: List[FileReport] = []
    if client is None:
        for b in blocks:
            reports.append(check_parsed(b, engine, max_report=max_report))
            if progress is not None:
                progress(len(b))
    else:
        from distributed import as_completed

        # Straight to the workers, not through the task graph.  hash=False: each call gets keys of
        # its own; with content-hashed keys a second call (the other engine of --engine both)
        # scattered the same keys while the first call's references were being released, and
        # the scheduler could forget the data its tasks needed ('computation on lost data').
        data = client.scatter(blocks, hash=False)
        futures = [client.submit(check_parsed, d, engine, max_report=max_report, pure=False) for d in data]
        try:
            done = {}
            for fut in as_completed(futures):
                done[fut.key] = fut.result()
                if progress is not None:
                    progress(int(done[fut.key].checked))
            reports = [done[f.key] for f in futures]
        except BaseException:
            client.cancel([f for f in futures if not f.done()])
            raise
    failures = sorted((f for r in reports for f in r.failures), key=lambda f: f.line)[:max_report]
    return FileReport(path=parsed.path, op=parsed.schema.op, engine=engine, rows=parsed.total,
                      checked=sum(r.checked for r in reports), passed=sum(r.passed for r in reports),
                      mismatched=sum(r.mismatched for r in reports), errors=sum(r.errors for r in reports),
                      malformed=len(parsed.bad), failures=failures, schema=parsed.schema)
