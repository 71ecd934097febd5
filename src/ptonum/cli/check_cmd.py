"""``ptonum check``: verify conformance vector files against the model."""

from __future__ import annotations

import os
import shlex
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import rich_click as click
from rich.markup import escape
from rich.progress import Progress
from rich.table import Table

from ..conformance.check import FileReport, check_parsed, select_among
from ..conformance.schema import parse_text, read_text, read_text_rows
from ..conformance.tiles import check_tiles, is_tiles_file, parse_tile_items
from ..errors import PtonumError
from .._util import char_shown, printable
from ._common import (AsciiIntRange, EXIT_ERROR, EXIT_MISMATCH, cli_message, error_line, errors_to_exit,
                      file_numbers, out_console, out_of_memory_text, print_path_table, progress_columns, table_fits)
from ._scale_out import client_for, placement_options

#: files with more rows than this show a progress bar
PROGRESS_ROWS = 50_000


@click.command("check")
@click.argument("files", nargs=-1, required=False)
@click.option("--builtin", is_flag=True,
              help="Check every ASL conformance vector file shipped with ptonum (its CSV files and tiles.json.gz), "
                   "besides any FILES given.")
@click.option("--engine", type=click.Choice(["fast", "reference", "both"]), default="fast", show_default=True,
              help="Model engine to check: fast (numpy, compiled numba kernels for large files), reference "
                   "(per-element model), both = each file in both engines.")
@click.option("--max-report", type=AsciiIntRange(min=0), default=5, show_default=True,
              help="Failures listed per file and engine (0: only their counts).")
@click.option("--limit", type=AsciiIntRange(min=0), default=None,
              help="Check only the first N data rows of each file (a malformed row among them counts as one; the "
                   "rows after them are neither checked nor reported; not with --sample).")
@click.option("--sample", type=AsciiIntRange(min=0), default=None,
              help="Check N data rows of each file drawn at random among all of them, malformed or not (only the "
                   "rows drawn are checked and reported; with --seed; not with --limit).")
@click.option("--seed", type=AsciiIntRange(min=0), default=None,
              help="Seed for --sample (a non-negative integer; only with --sample, which uses 0 when --seed is "
                   "not given).")
@click.option("--no-explain", is_flag=True, help="Do not print the explain trace of the first mismatch.")
@placement_options
def command(files: Tuple[str, ...], builtin: bool, engine: str, max_report: int, limit: Optional[int], sample: Optional[int],
            seed: Optional[int], no_explain: bool, workers: Optional[int], scheduler: Optional[str]) -> None:
    """Check vector files (gzip or plain CSV, schema from the header, columns in any order and read by
    their header names; or a JSON list of
    whole tiles such as tiles.json.gz) against the model; `-` reads standard input (once).

    A file given more than once (by any spelling or link: `a.csv ./a.csv`) is checked once, with a note on
    stderr. `--limit` and `--sample` are alternatives: giving both is a usage error. They select among all the data
    rows of a file, malformed or not; a row they do not select is neither checked nor counted (a malformed one
    outside them makes no failure). `--seed` needs `--sample`:
    giving it without `--sample` is a usage error.

    Prints a table of pass/fail counts per file (its path as given, whole; `--builtin`'s files by name) and
    engine (a file with no row checked is an error line instead, never a 0-row entry: no table when no file has
    a result); when the paths make the table wider than the terminal, the table numbers the files (`#`) and
    lists their paths under it, one a line. Then the first
    failures with file:line, inputs, expected vs got bits and flags (with `--engine both`, failures that are the
    same in both engines listed once, under `[both engines]`), and the explain trace of
    the first mismatch (its first line is the `ptonum explain --row FILE:LINE` command that prints it again; for a
    tile case `ptonum explain --tile FILE:INDEX`, with the trace of its first differing element). A path's control
    characters (a newline, the ESC of an escape sequence) are shown as escapes (`\\n`, `\\x1b`).
    The text is UTF-8 (ASCII), with or without a byte-order mark, or UTF-16 with its byte-order mark (a
    spreadsheet's "Unicode text"); UTF-16 without the mark is not read. Two extra
    columns are accepted: a `source` label (in any position) and a trailing `comment` (which may
    contain commas); they are not checked and are shown with each failing row. Fields in double
    quotes (`"0x3f800000","1"`, as spreadsheet tools write them) are read as their text.

    Exit status: 0 every checked row passed; 1 a row failed (mismatch, model error
    or malformed row; a malformed tile case likewise, the other cases still checked); 2 an error: a file is missing or unreadable, its header matches
    no schema, or no row was checked at all (header-only file, `--limit 0`, `--sample 0`, every row selected malformed).
    Errors are one line each on stderr (one per file for all engines when no row was checked), in the order of
    FILES, after the results; a file in error has no row in the table, and the last line totals the files
    that were checked: PASS when every file was checked and passed, ERROR when those checked passed but a file
    is in error, FAIL when a row failed (with the file errors counted). A run with both a failing row and a file
    in error exits 2 (the error wins over the mismatch's 1). The FAIL line counts failing rows (mismatch or model error) and malformed rows
    apart, as the table does, and counts a row once with `--engine both` (`in both engines`, or each engine's
    count when they differ), then the rows checked as PASS gives them (`FAIL: 1 failing row(s), 1 malformed
    row(s); 29 row(s) checked`). Blank lines before the header are skipped (line numbers count them).

    `--builtin` adds the ASL conformance vectors shipped inside the package (pto-spec e599a3d3,
    computed by ASLRef; their README lies beside them in `ptonum/data/vectors`), so no path is needed.

    `--workers N` (a local cluster) or `--scheduler ADDRESS` (an existing Dask scheduler) split each
    vector file into row blocks checked in parallel; the report is the same as a serial run's.
    """
    given = len(files)  # the FILES given; the ones after them are --builtin's (shown by name in the table)
    if builtin:
        from ..conformance.schema import builtin_vector_files

        with errors_to_exit("check"):
            files = tuple(files) + tuple(str(p) for p in builtin_vector_files())
    if not files:
        raise click.UsageError("give vector FILES, or --builtin for the shipped ASL vectors")
    if files.count("-") > 1:  # a second read of standard input finds it used up (a pipe) or reads it again (a file)
        raise click.UsageError(f"FILES: '-' (standard input) is given {files.count('-')} times; it can be read once")
    if limit is not None and sample is not None:  # the rows checked would be neither the first N nor N at random
        raise click.UsageError(f"--limit {limit} and --sample {sample}: give one of them (--limit N checks the first "
                               "N rows of each file, --sample N draws N rows of each file at random)")
    if sample is None and seed is not None:
        # without --sample no row is drawn at random: the seed would change nothing, silently
        raise click.UsageError(f"--seed {seed} without --sample: --seed seeds the random draw of --sample N (give "
                               "--sample N, or leave --seed out)")
    files, given = _once(files, given)
    console = out_console()
    with errors_to_exit("check"), client_for("check", scheduler, workers) as client:
        _check_files(console, files, engine, max_report, limit, sample, 0 if seed is None else seed, no_explain,
                     client, given)


#: the kernel modules (ptonum.kernels.*) a vector file's operation runs on the fast engine; the other operations
#: run on numpy only
KERNELS_OF_OP = {"postprocess_element": ("postprocess",), "tcvt_e8m0": ("tcvt",), "decomposition": ("decompose",)}


def _file_key(path: str) -> Tuple[Any, ...]:
    """What names the file ``path`` whatever its spelling: its device and inode (``a.csv``, ``./a.csv``, a link to
    it), else (a missing or unreadable file) its resolved path."""
    try:
        st = os.stat(path)
        return ("inode", st.st_dev, st.st_ino)
    except (OSError, ValueError):
        return ("path", os.path.realpath(path))


def _once(files: Tuple[str, ...], given: int) -> Tuple[Tuple[str, ...], int]:
    """``files`` with each file once (the first of its spellings kept: a FILE given before ``--builtin``'s), and
    how many of them are FILES as given; a note on stderr for each one left out.  Standard input (``-``, given once
    at most) and empty paths (each an error) are kept as they are."""
    kept: List[str] = []
    first: Dict[Tuple[Any, ...], str] = {}
    left_given = 0
    for k, path in enumerate(files):
        if path != "-" and path.strip():
            key = _file_key(path)
            if key in first:
                same = "given again" if first[key] == path else f"the same file as {first[key]}"
                sys.stderr.write(f"ptonum check: note: {cli_message(path, translate=False)}: {same}; checked "
                                 "once\n")
                continue
            first[key] = path
        kept.append(path)
        left_given += k < given
    return tuple(kept), left_given


def _check_files(console: Any, files: Tuple[str, ...], engine: str, max_report: int, limit: Optional[int],
                 sample: Optional[int], seed: int, no_explain: bool, client: Any, given: Optional[int] = None) -> None:
    """Check ``files``; the first ``given`` of them (all when None) are FILES as given on the command line, shown
    in the table as given (two files of the same name in different folders stay apart), the rest are
    ``--builtin``'s, shown by their names."""
    if given is None:
        given = len(files)
    def check_rows(parsed: Any, eng: str, **kw: Any) -> FileReport:
        if client is None:
            from .compile_cmd import warn_if_cold

            with warn_if_cold(len(parsed), eng):  # the note just before a kernel this file uses compiles
                return check_parsed(parsed, eng, **kw)
        from ..dask.check import check_parsed_blocks
        from .compile_cmd import compile_note_for

        def note(rows: int) -> None:  # the workers' kernels this file's operation runs, when one compiles
            compile_note_for(client, rows, eng, KERNELS_OF_OP.get(parsed.schema.op, ()))

        return check_parsed_blocks(parsed, eng, client=client, before_blocks=note, **kw)

    errors: List[Tuple[int, str]] = []  # (position of the file among FILES, message): printed in that order

    def error(msg: str) -> None:
        # the file's path in the message (as given, or as read_text and parse_text name it) with its control
        # characters as escapes: error_line would fold a newline of it into a space, a different name
        shown = printable(path)
        errors.append((k, msg.replace(path, shown) if shown != path else msg))
    engines = ["fast", "reference"] if engine == "both" else [engine]
    reports: List[FileReport] = []
    position: Dict[int, int] = {}  # id of a report -> position of its file among FILES
    tile_cases: Dict[int, List[Any]] = {}  # position of a tile file among FILES -> its well-formed cases
    for k, path in enumerate(files):
        if not path.strip():
            error("FILES: the path is empty; give a vector file")
            continue
        source = path
        if path == "-":  # the Unix convention: standard input (plain CSV or gzip, or a tile list)
            source = "/dev/stdin"
        if Path(source).is_dir():
            error(f"{path}: is a directory, not a vector file")
            continue
        try:
            more = 0  # the data rows after the text read (--limit: its rows are read, the others only counted)
            if limit is not None:
                raw, more = read_text_rows(source, limit, name=path)
            else:
                raw = read_text(source, name=path)  # "-" in every message, as parse errors and reports say
            if is_tiles_file(raw):  # whole tiles (tiles.json.gz): every case through the tile operation
                cases, bad = parse_tile_items(raw, path)  # a malformed item is counted, as a malformed row is
                tile_cases[k] = cases  # the first failing case is explained from them
                for eng in engines:
                    reports.append(check_tiles(cases, path, eng, max_report=max_report, malformed=bad, limit=limit,
                                               sample=sample, seed=seed))
                    position[id(reports[-1])] = k
                continue
            parsed = parse_text(raw, path)
            if more:  # the file's data rows, as when it is read whole
                parsed = replace(parsed, total=parsed.total + more)
        except PtonumError as exc:
            error(str(exc))
            continue
        except MemoryError:  # the file is named; the next files are still checked
            raw = b""
            error(out_of_memory_text(path))
            continue
        # the well-formed rows --limit/--sample select (the malformed ones among all data rows, in file order)
        n = int(select_among(parsed.lines, [ln for ln, _ in parsed.bad], limit, sample, seed)[0].size)
        for eng in engines:
            try:
                if n > PROGRESS_ROWS and console.is_terminal:  # redirected: no bar (it left a blank line)
                    # the label is the path and engine as text (progress_columns), not markup
                    with Progress(*progress_columns(), console=console, transient=True) as prog:
                        task = prog.add_task(f"{printable(path)} [{eng}]", total=n)
                        rep = check_rows(parsed, eng, limit=limit, sample=sample, seed=seed, max_report=max_report,
                                         progress=lambda k: prog.advance(task, k))
                else:
                    rep = check_rows(parsed, eng, limit=limit, sample=sample, seed=seed, max_report=max_report)
            except PtonumError as exc:
                error(f"{path} [{eng}]: {exc}")
                continue
            except ImportError as exc:
                error(f"{path} [{eng}]: model function not available ({exc})")
                continue
            except MemoryError:
                error(out_of_memory_text(f"{path} [{eng}]"))
                continue
            reports.append(rep)
            position[id(rep)] = k

    # a file with no row checked (header only, --limit 0, --sample 0, every row malformed) is an error: its one
    # line (one for all engines), no (0-row) result in the table
    said: "set[int]" = set()
    for r in reports:
        at = position[id(r)]
        if _nothing_checked(r) and at not in said:
            said.add(at)
            shown = ", ".join(q.engine for q in reports if position[id(q)] == at and _nothing_checked(q))
            errors.append((at, printable(f"{r.path} [{shown}]: {_nothing_checked_text(r, limit, sample)}")))
    reports = [r for r in reports if not _nothing_checked(r)]
    file_of = [position[id(r)] for r in reports]  # each report's file: its position among FILES
    # the path as given, as failures say it; --builtin's files by name
    _print_results(console, reports,
                   [str(r.path) if at < given else Path(r.path).name for r, at in zip(reports, file_of)], file_of)

    explained = False
    done: "set[int]" = set()  # reports whose failures are already listed (with the same list of the other engine)
    for n, r in enumerate(reports):
        if r.ok or n in done:
            continue
        # --engine both: the other engine's report of this file, when its failures are the same (one list for both)
        twins = [m for m, q in enumerate(reports) if m > n and file_of[m] == file_of[n] and not q.ok
                 and _same_failures(r, q)]
        done.update(twins)
        same = [reports[m] for m in twins]
        label = "both engines" if same else r.engine  # the list below holds for both: said once, not twice
        listed = f"; first {len(r.failures)}:" if r.failures else ""
        # the file name and the "[fast]" engine label are text, not rich markup (both were dropped); the path's
        # control characters are shown as escapes (printable), as in every line below
        console.print(f"[bold red]{escape(printable(str(r.path)))}[/bold red] {escape(f'[{label}]')} {r.op}: "
                      f"{_failing_text([r])}{listed}", highlight=False, soft_wrap=True)
        for f in r.failures:
            if f.kind in ("malformed", "tile", "malformed tile"):
                what = "malformed row" if f.kind == "malformed" else f.kind
                console.print(printable(f"  {f.where}: {what}: {f.message}"), highlight=False, soft_wrap=True,
                              markup=False)
                _print_extra(console, f)
                continue
            assert r.schema is not None and f.row is not None
            console.print(printable(f"  {f.where}: {f.kind}: {r.schema.describe_inputs(f.row)}"), highlight=False,
                          soft_wrap=True, markup=False)
            console.print(printable(f"      {f.message}"), highlight=False, soft_wrap=True, markup=False)
            _print_extra(console, f)
        if not no_explain and not explained:
            first = next((f for f in r.failures if f.kind in ("mismatch", "tile")
                          and (f.row is not None or f.kind == "tile")), None)
            if first is not None:
                command_text, text = _explain_first(r, first, tile_cases.get(file_of[n], []))
                console.print(f"[bold]{escape(command_text)}[/bold]", highlight=False, soft_wrap=True)
                console.print(text, highlight=False, markup=False, soft_wrap=True)
                explained = True

    for _, msg in sorted(errors, key=lambda e: e[0]):  # in the order of FILES (stable within a file)
        sys.stderr.write(error_line("check", msg, translate=False) + "\n")
    failed = sum(r.failed for r in reports)
    # the totals of the files that were checked, also when others are in error (the exit status says 2); the
    # line starts with PASS only when every file was checked and passed (a grep for PASS is not fooled by a
    # file in error): ERROR when the checked files passed but another is in error, FAIL when a row failed
    # (FAIL: the failures, then the rows checked and the file errors as PASS and ERROR give them)
    also = f", {len(errors)} file error(s)" if errors else ""
    if failed:
        console.print(f"[red]FAIL[/red]: {_failing_text(reports, file_of)}; "
                      f"{_count_text(reports, file_of, 'checked', 'row(s) checked')}{also}", soft_wrap=True)
    elif reports:
        verdict = "[red]ERROR[/red]" if errors else "[green]PASS[/green]"
        console.print(f"{verdict}: {_count_text(reports, file_of, 'checked', 'row(s) checked')}{also}", soft_wrap=True)
    if errors:
        sys.exit(EXIT_ERROR)
    if failed:
        sys.exit(EXIT_MISMATCH)


#: the table's columns after the file's, and which of them hold counts (right-aligned)
RESULT_COLUMNS = ("operation", "engine", "rows", "checked", "passed", "failed", "malformed")
COUNT_COLUMNS = ("rows", "checked", "passed", "failed", "malformed")


def _print_results(console: Any, reports: Sequence[FileReport], paths: Sequence[str], files: Sequence[int]) -> None:
    """The table of results: a row per file and engine, the file's path (``paths``) whole on one line, never folded
    (it is copied into other commands).  When that table is wider than the console, the paths move out of it: the
    table's first column is the file's number (``#``), each file's path whole on a line of its own under it, and the
    ``rows`` column is left out when it equals ``checked`` in every row (no --limit or --sample cut a file).  When
    that table is still too wide, ``rows`` moves to each file's line under it (``1  998 row(s)  PATH``).  A table
    that still does not fit is printed wider than the console, never cut (:func:`print_path_table`).  ``files``
    tells the rows of one file apart (its position among FILES)."""
    if not reports:
        return

    def table_of(first: str, cells: Sequence[str], columns: Sequence[str]) -> Table:
        table = Table(title="ptonum check")
        table.add_column(first, justify="right" if first == "#" else "left")
        for col in columns:
            table.add_column(col, justify="right" if col in COUNT_COLUMNS else "left")
        for cell, r in zip(cells, reports):
            style = "green" if r.ok else "red"
            values = {"operation": r.op, "engine": r.engine, "rows": str(r.rows), "checked": str(r.checked),
                      "passed": f"[{style}]{r.passed}[/{style}]",
                      "failed": f"[{style}]{r.mismatched + r.errors}[/{style}]", "malformed": str(r.malformed)}
            table.add_row(cell, *(values[col] for col in columns))
        return table

    # numbered (the paths under the table): the rows column only when it says something checked does not; when the
    # table still does not fit, each file's rows go to its line under the table (``1  998 row(s)  PATH``)
    narrow = [c for c in RESULT_COLUMNS if c != "rows" or any(r.rows != r.checked for r in reports)]
    number = file_numbers(files)
    numbered = [str(number[at]) for at in files]
    labels: Optional[List[str]] = None
    if "rows" in narrow and not table_fits(console, table_of("#", numbered, narrow)):
        narrow.remove("rows")
        labels = [f"{r.rows} row(s)" for r in reports]
    print_path_table(console, lambda first, cells: table_of(first, cells, narrow if first == "#" else RESULT_COLUMNS),
                     paths, files, labels=labels)


def _explain_first(r: FileReport, first: Any, cases: Sequence[Any]) -> Tuple[str, str]:
    """The command that explains the failure ``first`` of ``r`` (a row: ``ptonum explain --row FILE:LINE``; a tile
    case: ``ptonum explain --tile FILE:INDEX``) and the text it prints before its MATCH/MISMATCH line."""
    from ..conformance.explain import explain_row_text, explain_tile_case

    try:
        if first.kind == "tile":
            case = next(c for c in cases if c.index == first.line)
            text = explain_tile_case(case).text
        else:
            assert r.schema is not None
            text = explain_row_text(r.schema, first.row or {})
    except (PtonumError, ImportError, StopIteration) as exc:
        text = f"(no trace: {exc})"
    return _explain_command(first.path, first.line, "--tile" if first.kind == "tile" else "--row"), text


def _same_failures(a: FileReport, b: FileReport) -> bool:
    """The two engines' reports of one file list the same failures (the same rows, kinds and messages, so the
    same got values) and the same counts: one list says them for both."""
    def key(r: FileReport) -> Tuple[Any, ...]:
        return (r.mismatched, r.errors, r.malformed,
                [(f.line, f.kind, f.message, f.where) for f in r.failures])

    return key(a) == key(b)


def _explain_command(path: str, line: int, option: str = "--row") -> str:
    """The command line that traces row ``line`` of the vector file ``path`` (``ptonum explain --row PATH:LINE``),
    or with ``option`` ``--tile`` its tile case number ``line`` (``ptonum explain --tile PATH:INDEX``), quoted for
    a POSIX shell when the path needs it (a path with control characters in the ``$'...'`` quoting of bash and
    zsh, its escapes as :func:`~ptonum._util.printable` writes them); for standard input (``-``, read once)
    ``ptonum explain --row -:LINE``, which reads standard input too, with a note that it needs the same text
    again."""
    if path == "-":
        return f"ptonum explain {option} -:{line} (reads standard input: give it the same text again)"
    return f"ptonum explain {option} {_shell_word(f'{path}:{line}')}"


def _shell_word(text: str) -> str:
    """``text`` as one shell word: :func:`shlex.quote` when it is printable; else bash/zsh ``$'...'`` with each
    control character as its escape (``$'a\\x1b[31mred.csv:3'``), so the command shows no raw control character
    and still names the file when pasted."""
    if text.isprintable():
        return shlex.quote(text)
    return "$'" + "".join("\\\\" if c == "\\" else "\\'" if c == "'" else char_shown(c) for c in text) + "'"


def _nothing_checked(r: FileReport) -> bool:
    """No row of the report was checked (a header-only file, --limit 0, --sample 0, or every row malformed): an
    error (``no rows checked``), not a result."""
    return r.checked == 0


def _nothing_checked_text(r: FileReport, limit: Optional[int], sample: Optional[int]) -> str:
    """Why no row of ``r`` was checked; for a file whose rows are all malformed, where the first one is."""
    if r.malformed:
        first = next((f for f in r.failures if f.kind in ("malformed", "malformed tile")), None)
        where = f"; first {first.where}: {first.message}" if first is not None else ""
        what = "data row(s)" if r.schema is not None else "tile case(s)"
        if r.malformed < r.rows:  # --limit/--sample selected only malformed rows; the file has others
            chosen = f"--limit {limit}" if limit is not None else f"--sample {sample}"
            return f"no rows checked (the {r.malformed} {what} {chosen} selects are malformed{where})"
        return f"no rows checked (every {what[:-3]} is malformed, {r.malformed} {what}{where})"
    why = ("the file has no data rows" if r.rows == 0 else
           "--limit 0" if limit == 0 else "--sample 0" if sample == 0 else "no row selected")
    return f"no rows checked ({why})"


def _failing_text(reports: Sequence[FileReport], files: Optional[Sequence[int]] = None) -> str:
    """``2 failing row(s), 1 malformed row(s)``: the table's failed (mismatch or model error) and malformed
    counts, only the nonzero ones, a row counted once however many engines checked it (:func:`_count_text`; a
    malformed row is never run, so its count is the file's).  ``files`` tells the reports of one file apart (all
    one file when None)."""
    at = list(files) if files is not None else [0] * len(reports)
    parts = []
    if any(r.mismatched + r.errors for r in reports):
        parts.append(_count_text(reports, at, "failing", "failing row(s)"))
    malformed = sum(max(r.malformed for r, k in zip(reports, at) if k == f) for f in dict.fromkeys(at))
    if malformed:
        parts.append(f"{malformed} malformed row(s)")
    return ", ".join(parts)


def _count_text(reports: Sequence[FileReport], files: Sequence[int], attr: str, noun: str) -> str:
    """``30 row(s) checked``: the count ``attr`` of the reports (``failing``: mismatches and model errors), each
    row counted once.  With both engines: ``30 row(s) checked in both engines`` when the engines gave every file
    the same count, else each engine's (``2 failing row(s) in fast, 0 in reference``).  ``files`` gives each
    report's file (its position among FILES)."""
    def count(r: FileReport) -> int:
        return int(r.mismatched + r.errors if attr == "failing" else getattr(r, attr))

    by: Dict[str, int] = {}
    of_file: Dict[int, Dict[str, int]] = {}
    for r, at in zip(reports, files):
        by[r.engine] = by.get(r.engine, 0) + count(r)
        of_file.setdefault(at, {})[r.engine] = count(r)
    engines = list(by)
    if len(engines) == 1:
        return f"{by[engines[0]]} {noun}"
    if all(len(c) == len(engines) and len(set(c.values())) == 1 for c in of_file.values()):
        return f"{by[engines[0]]} {noun} in both engines"  # (the two: fast and reference)
    return f"{by[engines[0]]} {noun} in {engines[0]}, " + ", ".join(f"{by[e]} in {e}" for e in engines[1:])


def _print_extra(console: Any, f: Any) -> None:
    """The failing row's extra columns (``source``, ``comment``), when the file has them."""
    extra = getattr(f, "extra", None)
    if extra:
        console.print(printable("      " + ", ".join(f"{k}: {v}" for k, v in extra.items())), highlight=False,
                      soft_wrap=True, markup=False)
