"""``ptonum check``: verify conformance vector files against the model."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional, Tuple

import rich_click as click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ..conformance.check import FileReport, check_parsed, select_rows
from ..conformance.schema import parse_file
from ..errors import PtonumError

#: files with more rows than this show a progress bar
PROGRESS_ROWS = 50_000


@click.command("check")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--engine", type=click.Choice(["fast", "reference", "both"]), default="fast", show_default=True,
              help="Model engine to check (both = each file in both engines).")
@click.option("--max-report", type=int, default=5, show_default=True, help="Failures listed per file and engine.")
@click.option("--limit", type=int, default=None, help="Check only the first N rows of each file.")
@click.option("--sample", type=int, default=None, help="Check N rows drawn at random (with --seed).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed for --sample.")
@click.option("--no-explain", is_flag=True, help="Do not print the explain trace of the first mismatch.")
def command(files: Tuple[str, ...], engine: str, max_report: int, limit: Optional[int], sample: Optional[int],
            seed: int, no_explain: bool) -> None:
    """Check vector files (gzip or plain CSV, schema from the header) against the model.

    Prints pass/fail counts per file and engine, the first failures with file:line,
    inputs, expected vs got bits and flags, and the explain trace of the first
    mismatch. Exits 1 on any failure (mismatch, model error or malformed row).
    """
    console = Console()
    engines = ["fast", "reference"] if engine == "both" else [engine]
    reports: List[FileReport] = []
    unreadable = 0
    for path in files:
        try:
            parsed = parse_file(path)
        except PtonumError as exc:
            console.print(f"[red]error[/red] {exc}", highlight=False)
            unreadable += 1
            continue
        for eng in engines:
            n = int(select_rows(len(parsed), limit, sample, seed).size)
            try:
                if n > PROGRESS_ROWS:
                    with Progress(TextColumn(f"{path} [{eng}]"), BarColumn(), MofNCompleteColumn(),
                                  TimeElapsedColumn(), console=console, transient=True) as prog:
                        task = prog.add_task("check", total=n)
                        rep = check_parsed(parsed, eng, limit=limit, sample=sample, seed=seed, max_report=max_report,
                                           progress=lambda k: prog.advance(task, k))
                else:
                    rep = check_parsed(parsed, eng, limit=limit, sample=sample, seed=seed, max_report=max_report)
            except PtonumError as exc:
                console.print(f"[red]error[/red] {path} [{eng}]: {exc}", highlight=False)
                unreadable += 1
                continue
            except ImportError as exc:
                console.print(f"[red]error[/red] {path} [{eng}]: model function not available ({exc})", highlight=False)
                unreadable += 1
                continue
            reports.append(rep)

    table = Table(title="ptonum check")
    for col in ("file", "operation", "engine", "rows", "checked", "passed", "failed", "malformed"):
        table.add_column(col, justify="right" if col not in ("file", "operation", "engine") else "left",
                         no_wrap=True, overflow="fold" if col == "file" else "ellipsis",
                         min_width=len(col) if col != "file" else None)
    for r in reports:
        style = "green" if r.ok else "red"
        table.add_row(Path(r.path).name, r.op, r.engine, str(r.rows), str(r.checked), f"[{style}]{r.passed}[/{style}]",
                      f"[{style}]{r.mismatched + r.errors}[/{style}]", str(r.malformed))
    console.print(table)

    explained = False
    for r in reports:
        if r.ok:
            continue
        console.print(f"[bold red]{r.path}[/bold red] [{r.engine}] {r.op}: {r.failed} failing row(s); first {len(r.failures)}:",
                      highlight=False)
        for f in r.failures:
            if f.kind == "malformed":
                console.print(f"  {f.where}: malformed row: {f.message}", highlight=False, soft_wrap=True)
                continue
            assert r.schema is not None and f.row is not None
            console.print(f"  {f.where}: {f.kind}: {r.schema.describe_inputs(f.row)}", highlight=False, soft_wrap=True)
            console.print(f"      {f.message}", highlight=False, soft_wrap=True)
        if not no_explain and not explained:
            first = next((f for f in r.failures if f.kind == "mismatch" and f.row is not None), None)
            if first is not None and r.schema is not None:
                from ..conformance.explain import explain_row_text

                try:
                    text = explain_row_text(r.schema, first.row or {})
                except (PtonumError, ImportError) as exc:
                    text = f"(no trace: {exc})"
                console.print(f"[bold]explain {first.where}[/bold]", highlight=False)
                console.print(text, highlight=False, markup=False, soft_wrap=True)
                explained = True

    failed = unreadable + sum(r.failed for r in reports)
    if failed:
        console.print(f"[red]FAIL[/red]: {failed} failure(s)")
        sys.exit(1)
    console.print("[green]PASS[/green]")
