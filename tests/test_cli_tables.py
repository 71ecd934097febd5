"""The command line's tables never cut a number or a name, at any width (fresh-user finding: at narrow widths
rich shrank the no_wrap columns and cut their cells, 'FP6' for FP64, a bias of 1 for 1023, a count of 9 for
998, check's file column gone at 80 columns).

What is asserted: a table is read back from the printed text (``table_rows``): each data row's cells, split at
the box's vertical lines; a row that continues on further lines (a folded or wrapped free-text column) has its
pieces joined (folded text without a separator).  Every value cell must equal the expected value exactly, so
it was printed whole on one line; a free-text cell (a file name) must join back to the whole name; every
header must join back to its full text (it may wrap at its spaces, never inside a word).
"""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Sequence

import pytest
from click.testing import CliRunner

from conftest import vectors_dir
from ptonum.cli import main

if TYPE_CHECKING:
    import io

    from rich.console import Console
    from rich.table import Table

WIDTHS = (40, 60, 80, 200)


def _cells(line: str, bar: str) -> List[str]:
    return [c.strip() for c in line.split(bar)[1:-1]]


def table_rows(output: str, fold: Sequence[str] = ()) -> List[Dict[str, str]]:
    """The rows of the (first) heavy-headed rich table in ``output``, as {header: cell}; the columns named
    in ``fold`` may continue on the following lines (their pieces are joined without a separator, as folded
    text is; the other cells of a continuation line are empty)."""
    lines = output.splitlines()
    head_lines = [ln for ln in lines if ln.startswith("┃")]
    pieces = [_cells(ln, "┃") for ln in head_lines]
    headers = [" ".join(p[i] for p in pieces if p[i]) for i in range(len(pieces[0]))]
    rows: List[Dict[str, str]] = []
    for ln in lines:
        if not ln.startswith("│"):
            continue
        cells = _cells(ln, "│")
        assert len(cells) == len(headers), ln
        row = dict(zip(headers, cells))
        if rows and all(not v for k, v in row.items() if k not in fold):  # a continuation of the row above
            for k in fold:
                rows[-1][k] += row[k]
            continue
        rows.append(row)
    return rows


def _at_width(monkeypatch: pytest.MonkeyPatch, width: int) -> None:
    """The width of piped output (what the console gets when stdout is not a terminal)."""
    import ptonum.cli._common

    monkeypatch.setattr(ptonum.cli._common, "PIPE_WIDTH", width)


def _rows_at(monkeypatch: pytest.MonkeyPatch, width: int, args: List[str]) -> List[Dict[str, str]]:
    """The table rows ``ptonum ARGS`` prints piped at ``width`` columns (:func:`table_rows`); exit 0 asserted."""
    _at_width(monkeypatch, width)
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    return table_rows(r.stdout)


#: IEEE 754 binary64/32/16, bfloat16 and the OCP 8-bit formats: (type, carrier, exp bits, frac bits, bias)
FORMATS = [("FP64", "64", "11", "52", "1023"), ("FP32", "32", "8", "23", "127"), ("FP16", "16", "5", "10", "15"),
           ("BF16", "16", "8", "7", "127"), ("E4M3", "8", "4", "3", "7"), ("E5M2", "8", "5", "2", "15"),
           ("E8M0", "8", "8", "0", "127")]
FORMAT_HEADERS = ["type", "code", "kind", "carrier", "lanes", "sign", "exp bits", "frac bits", "bias",
                  "must-be-zero", "zero", "±0", "subnormal", "inf", "qNaN", "sNaN", "canonical NaN"]


@pytest.mark.parametrize("width", WIDTHS)
def test_formats_table_keeps_every_value_whole(monkeypatch: pytest.MonkeyPatch, width: int) -> None:
    rows = _rows_at(monkeypatch, width, ["formats"])
    assert list(rows[0]) == FORMAT_HEADERS
    by_type = {row["type"]: row for row in rows}
    assert list(by_type) == ["FP64", "FP32", "TF32", "HF32", "FP16", "BF16", "HiF8", "E4M3", "E5M2", "E3M2", "E2M3",
                             "E2M1X2", "E1M2X2", "E8M0", "HiF4X2"]
    for name, carrier, exp, frac, bias in FORMATS:
        row = by_type[name]
        assert (row["carrier"], row["exp bits"], row["frac bits"], row["bias"]) == (carrier, exp, frac, bias), row
    assert by_type["FP64"]["canonical NaN"] == "0x7ff8000000000000"  # the IEEE 754 binary64 default quiet NaN
    assert by_type["FP64"]["sign"] == "bit 63"


@pytest.mark.parametrize("width", WIDTHS)
def test_formats_field_table_keeps_every_value_whole(monkeypatch: pytest.MonkeyPatch, width: int) -> None:
    rows = {row["field (NumericFormatDescriptor)"]: row["value"]
            for row in _rows_at(monkeypatch, width, ["formats", "FP64"])}
    assert (rows["kind"], rows["carrier_bits"], rows["exponent_bias"], rows["fraction_bits_max"]) == \
        ("FIXED_BINARY", "64", "1023", "52")


@pytest.mark.parametrize("width", WIDTHS)
def test_modes_table_keeps_every_value_whole(monkeypatch: pytest.MonkeyPatch, width: int) -> None:
    from ptonum.fpatr.attributes import MODE_TABLE

    rows = _rows_at(monkeypatch, width, ["modes"])
    assert list(rows[0]) == ["code", "name", "acc", "D", "param", "offset", "rounding", "shift", "Sat"]
    assert [row["name"] for row in rows] == [MODE_TABLE[c].name for c in sorted(MODE_TABLE)]
    by_name = {row["name"]: row for row in rows}
    # ADR-0085 D179: mode 0 keeps any accumulator; REQ8 (3) S32 -> S8, a scalar FP19 scale and an S9 offset
    assert by_name["NoQuant"] == {"code": "0", "name": "NoQuant", "acc": "FP32/S32/U32", "D": "= acc", "param": "none",
                                  "offset": "-", "rounding": "-", "shift": "-", "Sat": "-"}
    assert by_name["REQ8"] == {"code": "3", "name": "REQ8", "acc": "S32", "D": "S8", "param": "scalar",
                               "offset": "S9", "rounding": "RMode", "shift": "-", "Sat": "clamp/wrap"}
    assert by_name["VSHIFTS322S16"]["code"] == "12" and by_name["VSHIFTS322S16"]["shift"] == "yes"


def _raw_cells_at(monkeypatch: pytest.MonkeyPatch, width: int, args: List[str], header: str) -> List[str]:
    """The cells of the column ``header`` of the table ``ptonum ARGS`` prints piped at ``width`` columns, as printed:
    with their padding and the spaces that justify them (exit 0 asserted)."""
    _at_width(monkeypatch, width)
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    heads = [_cells(ln, "┃") for ln in lines if ln.startswith("┃")]
    index = [" ".join(h[i] for h in heads if h[i]) for i in range(len(heads[0]))].index(header)
    return [ln.split("│")[1:-1][index] for ln in lines if ln.startswith("│")]


@pytest.mark.parametrize("width", (80, 200))
@pytest.mark.parametrize("args, header", [
    (["modes"], "code"), (["formats"], "code"), (["formats"], "carrier"), (["formats"], "exp bits"),
    (["formats"], "frac bits"), (["formats"], "bias")], ids=lambda v: "-".join(v) if isinstance(v, list) else v)
def test_number_columns_are_right_aligned(monkeypatch: pytest.MonkeyPatch, width: int, args: List[str],
                                          header: str) -> None:
    """Fresh-user finding: the code column was right-aligned in ``ptonum modes`` and left-aligned in ``ptonum
    formats``; every number column of both is right-aligned now (a one-space pad on each side)."""
    cells = _raw_cells_at(monkeypatch, width, args, header)
    assert any(len(c.strip()) + 2 < len(c) for c in cells)  # some cell is narrower than its column
    for cell in cells:
        assert cell == cell.strip().rjust(len(cell) - 1) + " ", (header, cells)


@pytest.mark.parametrize("width", (80, 200))
def test_canonical_nan_column_is_left_aligned(monkeypatch: pytest.MonkeyPatch, width: int) -> None:
    """The canonical NaN is a bit pattern of 2 to 16 hex digits: left-aligned, so its 0x and its top (sign and
    exponent) digits line up from FP64's 0x7ff8000000000000 to E4M3's 0x7f."""
    cells = _raw_cells_at(monkeypatch, width, ["formats"], "canonical NaN")
    assert [c.strip() for c in cells[:2]] == ["0x7ff8000000000000", "0x7fc00000"]
    for cell in cells:
        assert cell == " " + cell.strip().ljust(len(cell) - 1), cells


NAME = "a_rather_long_vector_file_name_for_the_table_tcvt_e8m0_part_0001.csv"


def _check_lines(tmp_path: Path, name: str = NAME, rows: int = 998) -> Path:
    """A tcvt_e8m0 vector file ``name`` of the shared vectors' header and first ``rows`` rows."""
    with gzip.open(vectors_dir() / "tcvt_e8m0.csv.gz", "rt") as fh:
        lines = [next(fh).rstrip("\r\n") for _ in range(rows + 1)]
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("width", WIDTHS)
def test_check_table_keeps_counts_whole_and_the_file_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          width: int) -> None:
    """The file's path is never folded (fresh-user finding: at 80 columns it was cut into 5-character pieces, and
    the table was still 90 columns wide): in the table when the table fits, else the table numbers the files and
    each path is a line of its own under it, whole, so it can be copied."""
    _check_lines(tmp_path)
    monkeypatch.chdir(tmp_path)
    path = NAME  # 69 characters: the table is 137 wide with it
    _at_width(monkeypatch, width)
    r = CliRunner().invoke(main, ["check", path, "--engine", "both"])
    assert r.exit_code == 0, r.output
    rows = table_rows(r.stdout)
    lines = r.stdout.splitlines()
    counts = {"operation": "tcvt_e8m0", "checked": "998", "passed": "998", "failed": "0", "malformed": "0"}
    if width == 200:  # fits with the path in it
        assert rows == [{"file": path, **counts, "engine": engine, "rows": "998"} for engine in ("fast", "reference")]
    else:  # the path under the table; rows left out (= checked)
        assert rows == [{"#": "1", **counts, "engine": engine} for engine in ("fast", "reference")]
        assert lines[lines.index(next(ln for ln in lines if ln.startswith("└"))) + 1:] == [
            f"1  {path}", "PASS: 998 row(s) checked in both engines"], r.stdout
    table = [ln for ln in lines if ln[:1] in "┏┃┡│└"]
    if width >= 80:  # not wider than the console
        assert max(len(ln) for ln in table) <= width, r.stdout


@pytest.mark.parametrize("width", WIDTHS)
def test_print_table_folds_free_text_and_never_cuts_a_value(width: int) -> None:
    """The rule itself, on a rich Console of each width: value columns whole on one line, the free-text column
    folded (a word longer than the fold width) or wrapped at its spaces, never cropped."""
    import io

    from rich.console import Console
    from rich.table import Table

    from ptonum.cli._common import print_table

    table = Table(title="t")
    for col in ("file", "elements", "match", "mismatch", "NaN/Inf class", "outputs / error"):
        table.add_column(col, no_wrap=True)
    message = "error: the ACC tile 128x256 S32 does not match --shape 64x64 (give the shape of the file)"
    table.add_row(NAME, "1048576", "1048575", "[red]1[/red]", "0", message)
    buf = io.StringIO()
    print_table(Console(file=buf, width=width, highlight=False), table, fold=("file", "outputs / error"))
    text = buf.getvalue()
    (row,) = table_rows(text, fold=("file", "outputs / error"))
    assert (row["file"], row["elements"], row["match"], row["mismatch"], row["NaN/Inf class"]) == \
        (NAME, "1048576", "1048575", "1", "0"), text
    # every character of the message, in order (wrapped at spaces or folded)
    assert row["outputs / error"].replace(" ", "") == message.replace(" ", ""), text


# ---------------------------------------------------------------------------
# COLUMNS sets the width of piped output (the tables no longer cut anything at a narrow width)

_INTEGER_NOTE = ("Integer types have no floating-format descriptor: S64, S32, S16, S8, S4X2, U64, U32, U16, U8, "
                 "U4X2.")


@pytest.mark.parametrize("cmd", [["formats"], ["modes"], ["formats", "FP64"]])
def test_piped_output_honours_a_positive_columns(monkeypatch: pytest.MonkeyPatch, cmd: List[str]) -> None:
    """Output that is not a terminal was printed 200 columns wide whatever COLUMNS said; a positive integer
    COLUMNS now sets the width (as on a terminal): the same output as a console of that width.  Unset, empty,
    0 or not a decimal integer: ignored, 200 columns."""
    default = CliRunner(env={"COLUMNS": None}).invoke(main, cmd)
    assert default.exit_code == 0, default.output
    for ignored in ("", "0", "00", "abc", "-80", " 80", "8_0", "\u0668\u0660"):  # Arabic-Indic 80
        r = CliRunner(env={"COLUMNS": ignored}).invoke(main, cmd)
        assert (r.exit_code, r.stdout) == (0, default.stdout), ignored
    assert CliRunner(env={"COLUMNS": "200"}).invoke(main, cmd).stdout == default.stdout
    for width in (40, 60, 80, 120):
        r = CliRunner(env={"COLUMNS": str(width)}).invoke(main, cmd)
        _at_width(monkeypatch, width)
        at = CliRunner(env={"COLUMNS": None}).invoke(main, cmd)
        assert (r.exit_code, r.stdout) == (0, at.stdout), width
    if cmd == ["formats"]:  # the sentence is one line at 200 and wraps at 80
        assert _INTEGER_NOTE in default.stdout.splitlines()
        narrow = CliRunner(env={"COLUMNS": "80"}).invoke(main, cmd).stdout.splitlines()
        assert narrow[-2:] == ["Integer types have no floating-format descriptor: S64, S32, S16, S8, S4X2, U64, ",
                               "U32, U16, U8, U4X2."]


def test_piped_check_at_columns_80_keeps_each_path_whole_and_fits(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """COLUMNS=80: the paths stay in the table while it fits (short names); else the table numbers the files, keeps
    ``rows`` when --limit makes it differ from ``checked``, and lists each path whole under it."""
    short = [_check_lines(tmp_path, f"v{k}.csv", 20 + k) for k in range(2)]
    _check_lines(tmp_path)
    monkeypatch.chdir(tmp_path)
    r = CliRunner(env={"COLUMNS": "80"}).invoke(main, ["check", "v0.csv", "v1.csv"])
    assert r.exit_code == 0, r.output
    assert max(len(ln) for ln in r.stdout.splitlines()) <= 80, r.stdout
    assert table_rows(r.stdout) == [
        {"file": p.name, "operation": "tcvt_e8m0", "engine": "fast", "rows": n, "checked": n, "passed": n,
         "failed": "0", "malformed": "0"} for p, n in zip(short, ("20", "21"))]
    wide = CliRunner(env={"COLUMNS": None}).invoke(main, ["check", NAME, "v1.csv", "--limit", "21"])
    r = CliRunner(env={"COLUMNS": "80"}).invoke(main, ["check", NAME, "v1.csv", "--limit", "21"])
    assert (wide.exit_code, r.exit_code) == (0, 0), r.output
    assert table_rows(wide.stdout) == [
        {"file": NAME, "operation": "tcvt_e8m0", "engine": "fast", "rows": "998", "checked": "21", "passed": "21",
         "failed": "0", "malformed": "0"},
        {"file": "v1.csv", "operation": "tcvt_e8m0", "engine": "fast", "rows": "21", "checked": "21", "passed": "21",
         "failed": "0", "malformed": "0"}]
    assert table_rows(r.stdout) == [{"#": str(k + 1), **{c: v for c, v in row.items() if c != "file"}}
                                    for k, row in enumerate(table_rows(wide.stdout))]
    assert r.stdout.splitlines()[-3:] == [f"1  {NAME}", "2  v1.csv", "PASS: 42 row(s) checked"]
    assert max(len(ln) for ln in r.stdout.splitlines()) <= 80, r.stdout


def _postprocess_lines(tmp_path: Path, name: str, rows: int, malformed: Sequence[int] = ()) -> Path:
    """A postprocess_element vector file ``name`` of the shared vectors' header and first ``rows`` rows, the data
    rows ``malformed`` (from 0) made malformed (a bad hex field)."""
    with gzip.open(vectors_dir() / "postprocess_element.csv.gz", "rt") as fh:
        lines = [next(fh).rstrip("\r\n") for _ in range(rows + 1)]
    for k in malformed:
        lines[k + 1] = lines[k + 1].replace("0x", "0xzz", 1)
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("args, rows, checked, malformed", [
    (["--limit", "10"], "12", "9", "1"),  # data rows 0-9: row 2 (line 4) is malformed, row 11 is not selected
    ([], "12", "10", "2"),  # malformed rows alone make rows differ from checked
])
def test_check_table_with_rows_apart_fits_80_columns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list,
                                                     rows: str, checked: str, malformed: str) -> None:
    """`COLUMNS=80 ptonum check FILE --limit N` (or a file with a malformed row) printed an 83-column table or
    wider: the numbered table kept the rows column (rows differ from checked).  When the numbered table does not
    fit, each file's rows go to its line under the table (``1  12 row(s)  PATH``): no line is wider than 80 and
    every count is printed."""
    _postprocess_lines(tmp_path, "p.csv", 12, malformed=(2, 11))
    monkeypatch.chdir(tmp_path)
    r = CliRunner(env={"COLUMNS": "80"}).invoke(main, ["check", "p.csv", "--engine", "both", "--no-explain", *args])
    assert r.exit_code == 1 and r.stderr == "", r.output
    out = r.stdout.splitlines()
    assert max(len(ln) for ln in out) <= 80, r.stdout
    assert table_rows(r.stdout) == [
        {"#": "1", "operation": "postprocess_element", "engine": e, "checked": checked, "passed": checked,
         "failed": "0", "malformed": malformed} for e in ("fast", "reference")]
    assert f"1  {rows} row(s)  p.csv" in out
    wide = CliRunner(env={"COLUMNS": "200"}).invoke(main, ["check", "p.csv", "--engine", "both", "--no-explain", *args])
    assert [row["rows"] for row in table_rows(wide.stdout)] == [rows, rows]  # the same count, in the table
    assert "row(s)  p.csv" not in wide.stdout


def test_console_width_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    """COLUMNS wins when it is a positive integer, on a terminal or not; otherwise 200 off a terminal, and on a
    terminal rich measures it (None) -- or, when COLUMNS is set to something ignored (rich would take '0' as a
    width of 0 and print nothing), the terminal's size is measured here."""
    from ptonum.cli import _common

    monkeypatch.setattr(_common, "terminal_width", lambda stderr=False: 132)
    monkeypatch.delenv("COLUMNS", raising=False)
    assert (_common.console_width(False), _common.console_width(True)) == (200, None)
    for text, off, on in (("100", 100, 100), ("1", 1, 1), ("0", 200, 132), ("abc", 200, 132), ("", 200, 132)):
        monkeypatch.setenv("COLUMNS", text)
        assert (_common.columns_env(), _common.console_width(False), _common.console_width(True)) == \
            (off if off != 200 else None, off, on), text


# ---------------------------------------------------------------------------
# print_table sizes a table with rich's public API only (it read rich's private Table._extra_width and
# Table._get_padding_width, which any rich release may remove: every table would have become a traceback)

def _table_kinds() -> Dict[str, Dict[str, Any]]:
    """The Table settings the commands use (the default heavy-headed box: check, compare, formats, modes, tcvt;
    box.SIMPLE_HEAD without edge padding: postprocess) and other edges, separators and paddings."""
    from rich import box

    return {
        "default": {},
        "simple_head_no_pad_edge": {"box": box.SIMPLE_HEAD, "pad_edge": False, "padding": (0, 1, 0, 0)},
        "no_box": {"box": None},
        "no_edge": {"show_edge": False},
        "no_pad_edge": {"padding": (0, 1), "pad_edge": False},
        # collapse_padding with pad_edge=False: with pad_edge=True rich (14.3 and later) measures the first column without
        # its left padding but renders it with it (rich's Table._get_padding_width vs Table._render), so a table
        # laid out at fixed widths loses 2 columns of its first cell -- print_table did so with the private
        # members too; no command uses collapse_padding
        "ascii_collapse_padding": {"box": box.ASCII, "collapse_padding": True, "padding": (0, 2), "pad_edge": False},
        "no_box_no_padding": {"box": None, "padding": 0},
        "minimal_uneven_padding": {"box": box.MINIMAL, "show_edge": False, "padding": (0, 3, 0, 1),
                                   "pad_edge": False},
        "square_no_edge_no_pad_edge": {"box": box.SQUARE, "show_edge": False, "pad_edge": False},
    }


def _value_table(kind: Dict[str, Any], fold: bool = False) -> Table:
    """Columns of values wider than their one-word headers (and a free-text column when ``fold``)."""
    from rich.table import Table

    table = Table(**kind)
    values = ["1048576", "FP64", "0x3ff0000000000000", "-1022", "yes"]
    for i in range(len(values)):
        table.add_column(f"c{i}", no_wrap=True)
    if fold:
        table.add_column("text")
        values = values + [" ".join(["word"] * 40)]
    table.add_row(*values)
    table.add_row(*[v[:2] for v in values])
    return table


def _lines(render: Callable[[Console, io.StringIO], None]) -> List[str]:
    """The lines ``render`` writes to a 400-column console (or to its own console on the same buffer)."""
    import io

    from rich.console import Console

    buf = io.StringIO()
    render(Console(file=buf, width=400, highlight=False), buf)
    return buf.getvalue().splitlines()


@pytest.mark.parametrize("name", list(_table_kinds()))
def test_frame_width_is_what_rich_prints_around_the_cells(name: str) -> None:
    """frame_width equals the width rich's rendering of the table adds to its columns' widths: the table printed
    (by rich alone) with every column's width fixed, less those widths."""
    import io

    from rich.console import Console

    from ptonum.cli._common import frame_width

    kind = _table_kinds()[name]
    for widths in ([7, 4, 18, 5, 3], [1, 1, 1, 1, 1], [12, 30, 2, 9, 40]):
        table = _value_table(kind)
        assert frame_width(Console(width=80), table, widths) == frame_width(Console(width=20), table, widths)
        fixed = frame_width(Console(width=80), table, widths)
        assert [c.width for c in table.columns] == [None] * 5 and table.width is None  # left as they were
        for column, width in zip(table.columns, widths):
            column.width = width
        buf = io.StringIO()
        Console(file=buf, width=400, highlight=False).print(table)
        printed = {len(ln) for ln in buf.getvalue().splitlines()}
        assert printed == {sum(widths) + fixed}, (name, widths, buf.getvalue())


@pytest.mark.parametrize("name", list(_table_kinds()))
def test_print_table_too_wide_prints_the_table_as_rich_lays_it_out_unconstrained(name: str) -> None:
    """A table of values that cannot fit a 20-column console is printed whole, exactly as rich prints it on a
    console wide enough for it with each column as wide as its widest cell (no cell cut, no column widened): the
    width print_table gives it is its columns' widths plus the frame.  With rich >= 14.3 that is also how rich
    lays the table out unconstrained; before 14.3 rich counted the edge padding that ``pad_edge=False`` leaves
    out when it sized a column of fixed width, which prints one blank column more at each edge."""
    from importlib.metadata import version

    from ptonum.cli._common import print_table

    kind = _table_kinds()[name]

    def at_widest(console: Console, buf: io.StringIO) -> None:
        table = _value_table(kind)
        for column in table.columns:
            column.width = max(len(str(cell)) for cell in [column.header, *column.cells])  # ASCII: len is width
        console.print(table)

    fixed = _lines(at_widest)
    narrow = _lines(lambda console, buf: print_table(console.__class__(file=buf, width=20, highlight=False),
                                                     _value_table(kind)))
    assert narrow == fixed, (name, "\n".join(narrow), "\n".join(fixed))
    assert len({len(ln) for ln in narrow}) == 1 and len(narrow[0]) > 20
    rich_version = tuple(int(p) for p in version("rich").split(".")[:2] if p.isdigit())
    if kind.get("pad_edge", True) or rich_version >= (14, 3):
        natural = _lines(lambda console, buf: console.print(_value_table(kind)))
        assert narrow == natural, (name, "\n".join(narrow), "\n".join(natural))


@pytest.mark.parametrize("name", list(_table_kinds()))
@pytest.mark.parametrize("width", [70, 90])
def test_print_table_fits_a_table_with_free_text_to_the_console(name: str, width: int) -> None:
    """A table that fits once its free-text column wraps fills the console's width exactly: not cropped, not
    narrower (a blank right edge one column past the width is cropped by rich, nothing lost)."""
    import io

    from rich.console import Console

    from ptonum.cli._common import print_table

    buf = io.StringIO()
    print_table(Console(file=buf, width=width, highlight=False), _value_table(_table_kinds()[name], fold=True),
                fold=("text",))
    lines = buf.getvalue().splitlines()
    assert {len(ln) for ln in lines} == {width}, (name, buf.getvalue())
    joined = " ".join(ln for ln in lines)
    for value in ("1048576", "FP64", "0x3ff0000000000000", "-1022"):
        assert value in joined, (name, buf.getvalue())
    assert joined.count("word") == 40, (name, buf.getvalue())
