"""ptonum check: every shared ASL vector file passes (fast engine; reference on a sample);
a flipped expected bit and malformed rows are reported with file:line and a non-zero exit."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any, Callable

import pytest
from click.testing import CliRunner

from conftest import vectors_dir
from ptonum.cli import main
from ptonum.conformance.check import check_file
from ptonum.conformance.schema import SCHEMAS, parse_file

FILES = sorted(SCHEMAS)


@pytest.mark.parametrize("op", FILES)
def test_shared_vectors_pass_fast(op: str) -> None:
    path = vectors_dir() / f"{op}.csv.gz"
    if not path.exists():
        pytest.fail(f"missing {path}")
    (rep,) = check_file(str(path), ("fast",))
    assert rep.op == op
    assert rep.malformed == 0 and rep.errors == 0
    assert rep.mismatched == 0, rep.failures[:3]
    assert rep.passed == rep.rows == rep.checked > 0
    if op == "tcvt_e8m0":
        assert rep.rows == 1916611


@pytest.mark.parametrize("op", FILES)
def test_shared_vectors_reference_sample(op: str) -> None:
    (rep,) = check_file(str(vectors_dir() / f"{op}.csv.gz"), ("reference",), sample=1500, seed=7)
    assert rep.checked == min(1500, rep.rows)
    assert rep.ok, rep.failures[:3]


def _copy_lines(tmp: Path, op: str, n: int) -> list[str]:
    with gzip.open(vectors_dir() / f"{op}.csv.gz", "rt") as fh:
        lines = [next(fh).rstrip("\r\n") for _ in range(n + 1)]
    return lines


def _with_source(rows: list[list[str]], where: int, trail: bool, source: Callable[[int], str],
                 comment: Callable[[int], str]) -> list[str]:
    """The lines of ``rows`` (split fields, header first) with a ``source`` column at field index ``where`` (-1: last)
    and, with ``trail``, a ``comment`` column after all; the data rows' fields are ``source(n)`` / ``comment(n)`` for
    file line n."""
    pos = len(rows[0]) if where == -1 else where
    out = []
    for n, r in enumerate(rows, start=1):
        r = r[:pos] + (["source"] if n == 1 else [source(n)]) + r[pos:]
        if trail:
            r = r + (["comment"] if n == 1 else [comment(n)])
        out.append(",".join(r))
    return out


def test_flipped_bit_reported_exactly(tmp_path: Path) -> None:
    lines = _copy_lines(tmp_path, "postprocess_element", 300)
    cols = lines[137].split(",")  # file line 138
    exp = int(cols[9], 16)
    cols[9] = f"0x{exp ^ 1:0{len(cols[9]) - 2}x}"
    lines[137] = ",".join(cols)
    path = tmp_path / "pp.csv.gz"
    with gzip.open(path, "wt") as fh:
        fh.write("\n".join(lines) + "\n")
    (rep,) = check_file(str(path))
    assert (rep.mismatched, rep.errors, rep.malformed) == (1, 0, 0)
    assert [f.line for f in rep.failures] == [138]
    r = CliRunner(env={"COLUMNS": "250"}).invoke(main, ["check", str(path)])
    assert r.exit_code == 1
    assert f"{path}:138: mismatch" in r.output
    assert "expected_bits" in r.output and "differs" in r.output
    assert f"ptonum explain --row {path}:138" in r.output.splitlines()  # the command line that traces the row
    assert "TileProfileMatrixPostProcessWithFlags" in r.output
    # the heading names the file and the engine as text (rich markup dropped "[fast]" and "[b]" paths)
    assert f"{path} [fast] postprocess_element: 1 failing row(s); first 1:" in r.output
    odd = tmp_path / "run[b]"
    odd.mkdir()
    (odd / "pp.csv.gz").write_bytes(path.read_bytes())
    r = CliRunner(env={"COLUMNS": "250"}).invoke(main, ["check", str(odd / "pp.csv.gz")])
    assert f"{odd / 'pp.csv.gz'} [fast] postprocess_element: 1 failing row(s)" in r.output
    assert f"{odd / 'pp.csv.gz'}:138: mismatch" in r.output
    assert f"ptonum explain --row '{odd / 'pp.csv.gz'}:138'" in r.output.splitlines()  # quoted for the shell


def test_explain_hint_is_a_command_line_that_traces_the_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The trace of the first mismatch was headed `explain FILE:LINE`, which is no command (`ptonum explain --row
    FILE:LINE` is): its first line is now that command, quoted for the shell, and running it prints the trace."""
    import shlex

    lines = _copy_lines(tmp_path, "postprocess_element", 300)
    cols = lines[137].split(",")  # file line 138
    cols[9] = f"0x{int(cols[9], 16) ^ 1:0{len(cols[9]) - 2}x}"
    lines[137] = ",".join(cols)
    (tmp_path / "run [1]").mkdir()
    (tmp_path / "run [1]" / "pp 1.csv").write_text("\n".join(lines) + "\n")
    monkeypatch.chdir(tmp_path)
    r = CliRunner(env={"COLUMNS": "80"}).invoke(main, ["check", "run [1]/pp 1.csv"])
    assert r.exit_code == 1, r.output
    out = r.stdout.splitlines()
    hint = "ptonum explain --row 'run [1]/pp 1.csv:138'"
    assert hint in out, r.stdout
    trace = out[out.index(hint) + 1:-1]  # up to the FAIL line
    args = shlex.split(hint)
    assert args[0] == "ptonum"
    e = CliRunner(env={"COLUMNS": "80"}).invoke(main, args[1:])
    assert e.exit_code == 1 and e.stdout.splitlines()[-1].startswith("MISMATCH: "), e.output
    assert e.stdout.splitlines() == ["run [1]/pp 1.csv:138", *trace, e.stdout.splitlines()[-1]]  # the same trace
    import os
    import subprocess
    import sys

    # standard input: the hint was 'ptonum explain --row FILE:138 (standard input, line 138: save it to a FILE
    # first)', though `explain --row -:138` reads standard input; it is that command, and it traces the row
    text = ("\n".join(lines) + "\n").encode()
    env = dict(os.environ, PTONUM_DISABLE_NUMBA="1", COLUMNS="80")
    p = subprocess.run([sys.executable, "-m", "ptonum", "check", "-"], input=text, env=env, capture_output=True,
                       timeout=300)
    out = p.stdout.decode().splitlines()
    hint = "ptonum explain --row -:138 (reads standard input: give it the same text again)"
    assert p.returncode == 1 and hint in out, p
    e = subprocess.run([sys.executable, "-m", *shlex.split(hint.split(" (")[0])], input=text, env=env,
                       capture_output=True, timeout=300)
    said = e.stdout.decode().splitlines()
    assert e.returncode == 1 and said == ["-:138", *trace, said[-1]] and said[-1].startswith("MISMATCH: "), e
    assert out[out.index(hint) + 1:out.index(hint) + 1 + len(trace)] == trace  # the trace check printed under it


def _permuted_copy(path: Path, op: str, n: int, order: "list[int]", flip_line: int = 0,
                   extras: bool = False) -> Path:
    """The first ``n`` rows of the shared ASL vector file ``op`` with its columns in ``order`` (indices into
    the file's own columns), written as gzip CSV; ``flip_line``: that file line's ``expected_*`` field (the
    last column of the file) gets its lowest bit flipped."""
    lines = _copy_lines(path, op, n)
    rows = [ln.split(",") for ln in lines]
    last = len(rows[0]) - 1
    if flip_line:
        v = rows[flip_line - 1][last]
        rows[flip_line - 1][last] = f"0x{int(v, 16) ^ 1:0{len(v) - 2}x}" if v.startswith("0x") else str(int(v) ^ 1)
    out = [[r[i] for i in order] for r in rows]
    if extras:
        out = [["source"] + out[0] + ["comment"]] + [[f"s{i}"] + r + [f"note {i}, with a comma"]
                                                     for i, r in enumerate(out[1:], start=2)]
    p = path / f"perm_{op}.csv.gz"
    with gzip.open(p, "wt") as fh:
        fh.write("\n".join(",".join(r) for r in out) + "\n")
    return p


@pytest.mark.parametrize("op", sorted(SCHEMAS))
def test_columns_in_another_order_are_read_by_their_header_names(tmp_path: Path, op: str) -> None:
    """A vector file whose header names its schema's columns in another order (here reversed, and the
    first two swapped) is read by name: the rows of the shared ASL vector file pass, the same count
    (was refused: "the columns are in another order"); a row whose expected value was changed fails,
    reported at its line, and `explain FILE:LINE` traces it; a leading source and a trailing comment
    column still go around the permuted columns."""
    ncols = len(SCHEMAS[op].names)
    for order in (list(reversed(range(ncols))), [1, 0] + list(range(2, ncols))):
        p = _permuted_copy(tmp_path, op, 400, order)
        assert parse_file(p).schema.op == op
        (rep,) = check_file(str(p))
        assert rep.ok and rep.passed == 400 and rep.malformed == 0, rep
        r = CliRunner().invoke(main, ["check", str(p)])
        assert r.exit_code == 0, r.output
    p = _permuted_copy(tmp_path, op, 400, list(reversed(range(ncols))), flip_line=138, extras=True)
    (rep,) = check_file(str(p))
    assert (rep.passed, rep.mismatched, rep.errors, rep.malformed) == (399, 1, 0, 0)
    assert [f.line for f in rep.failures] == [138]
    r = CliRunner(env={"COLUMNS": "250"}).invoke(main, ["check", str(p)])
    assert r.exit_code == 1 and f"{p}:138: mismatch" in r.output and "note 138, with a comma" in r.output
    r = CliRunner(env={"COLUMNS": "250"}).invoke(main, ["explain", "--row", f"{p}:138"])
    assert r.exit_code == 1, r.output


@pytest.mark.parametrize("where, trail", [(0, True), (1, False), (-1, False), (-1, True)])
def test_a_quoted_source_text_may_hold_commas(tmp_path: Path, where: int, trail: bool) -> None:
    """A quoted ``source`` field holding commas (``"gen, seed 3"``, as a spreadsheet writes such text) is that
    text, in any column, with or without a trailing comment: every row was "expected 3 columns ..., got 4", the
    file an error.  A schema column's quoted comma still makes its row malformed."""
    lines = _copy_lines(tmp_path, "fp32_to_fp19", 40)
    rows = [ln.split(",") for ln in lines]
    v = rows[20][1]  # file line 21
    rows[20][1] = f"0x{int(v, 16) ^ 1:0{len(v) - 2}x}"
    out = _with_source(rows, where, trail, lambda n: f'"gen, seed {n}, ""a"""', lambda n: f'"note {n}, two"')
    pos = len(rows[0]) if where == -1 else where
    bad = list(rows[5])
    bad[0] = '"0x3f80,0000"'
    out[5] = ",".join(bad[:pos] + ["s6"] + bad[pos:] + (["c6"] if trail else []))  # file line 6
    p = tmp_path / "quoted_source.csv"
    p.write_text("\n".join(out) + "\n")
    (rep,) = check_file(str(p), ("fast",))
    assert (rep.checked, rep.mismatched, rep.malformed) == (len(lines) - 2, 1, 1), rep
    assert sorted(f.line for f in rep.failures) == [6, 21]
    (f,) = [f for f in rep.failures if f.line == 21]
    assert f.row is not None  # a mismatch, not a malformed row
    assert f.extra == {"source": 'gen, seed 21, "a"', **({"comment": "note 21, two"} if trail else {})}
    r = CliRunner(env={"COLUMNS": "200"}).invoke(main, ["check", str(p), "--no-explain"])
    assert r.exit_code == 1 and 'source: gen, seed 21, "a"' in r.output, r.output


@pytest.mark.parametrize("header, differs", [
    ("word,legal,word", "word repeated"),
    ("legal,word,extra", "not in the schema extra"),
    ("legal", "missing word"),
])
def test_permuted_header_with_a_repeated_unknown_or_missing_column_is_refused(
        tmp_path: Path, header: str, differs: str) -> None:
    """Read by name, but a header naming a column twice, a column the schema does not have or missing one
    is still refused, naming the file, line 1 and the column; nothing is checked."""
    p = tmp_path / "relu_param_legal.csv"
    p.write_text(header + "\n" + ",".join(["0x0"] * len(header.split(","))) + "\n")
    r = CliRunner().invoke(main, ["check", str(p)])
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr.startswith(f"ptonum check: error: {p}:1: header {header!r} ")
    assert differs in r.stderr and r.stderr.count("\n") == 1


@pytest.mark.parametrize("flags", ["0x100", "0x20", "-1", "0x-1", "20"])
def test_corrupt_flags_field_is_a_malformed_row_naming_file_and_line(tmp_path: Path, flags: str) -> None:
    """A flags field outside the five flags (NV DZ OF UF NX) is never shown through flag_names as some
    other set of flags: check and explain --row name the file, the line and the field, exit 1/2, no traceback."""
    lines = _copy_lines(tmp_path, "reduction_step", 6)
    c = lines[3].split(",")
    c[-1] = flags  # line 4: expected_flags
    lines[3] = ",".join(c)
    path = tmp_path / "r.csv"
    path.write_text("\n".join(lines) + "\n")
    r = CliRunner(env={"COLUMNS": "250"}).invoke(main, ["check", str(path), "--engine", "both"])
    assert r.exit_code == 1, r.output
    assert f"{path}:4: malformed row: expected_flags: " in r.output and "Traceback" not in r.output
    assert "passed" in r.output  # one row, counted once (was 2):
    assert r.stdout.splitlines()[-1] == "FAIL: 1 malformed row(s); 5 row(s) checked in both engines"
    r = CliRunner().invoke(main, ["explain", "--row", f"{path}:4"])
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr.startswith(f"ptonum explain: error: {path}:4: malformed row: expected_flags: ")


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16", "utf-16-le", "utf-16-be"])
def test_text_as_spreadsheets_save_it_is_read(tmp_path: Path, encoding: str) -> None:
    """A vector CSV saved as UTF-8 with a byte-order mark or as UTF-16 ("Unicode text", with its BOM) is
    read as its text (was, UTF-16: 'binary data, not a vector file'); UTF-16 without a BOM is refused
    saying so.  Checked and explained with the same line numbers as the UTF-8 file."""
    lines = _copy_lines(tmp_path, "reduction_step", 12)
    path = tmp_path / "v.csv"
    text = "\r\n".join(lines) + "\r\n"
    if encoding in ("utf-16-le", "utf-16-be"):  # no BOM: cannot be told from binary data for sure
        path.write_bytes(text.encode(encoding))
        r = CliRunner().invoke(main, ["check", str(path)])
        assert r.exit_code == 2 and "UTF-16 text without a byte-order mark" in r.stderr, r.output
        return
    path.write_bytes(text.encode(encoding))
    r = CliRunner(env={"COLUMNS": "250"}).invoke(main, ["check", str(path)])
    assert r.exit_code == 0 and "PASS: 12 row(s) checked" in r.stdout, r.output
    r = CliRunner().invoke(main, ["explain", "--row", f"{path}:5"])
    assert r.exit_code == 0 and r.stdout.startswith(f"{path}:5\n") and "MATCH" in r.stdout, r.output


@pytest.mark.parametrize("encoding", ["utf-32", "utf-32-be"])
def test_utf32_text_is_refused_as_utf32(tmp_path: Path, encoding: str) -> None:
    """UTF-32 with its byte-order mark was called 'UTF-16 text without a byte-order mark' (its little-endian mark
    begins as UTF-16's): it is refused by its name, as check's --help says only UTF-8 and UTF-16 are read."""
    path = tmp_path / "v.csv"
    data = ("\n".join(_copy_lines(tmp_path, "reduction_step", 3)) + "\n").encode(encoding)
    path.write_bytes(data if encoding == "utf-32" else b"\x00\x00\xfe\xff" + data)
    want = f"{path}: UTF-32 text (by its byte-order mark); save it as UTF-8, or as UTF-16 with its mark"
    r = CliRunner().invoke(main, ["check", str(path)])
    assert (r.exit_code, r.stdout, r.stderr) == (2, "", f"ptonum check: error: {want}\n"), r.output
    r = CliRunner().invoke(main, ["explain", "--row", f"{path}:2"])
    assert (r.exit_code, r.stdout, r.stderr) == (2, "", f"ptonum explain: error: {want}\n"), r.output


def test_malformed_rows_reported_with_line(tmp_path: Path) -> None:
    lines = _copy_lines(tmp_path, "tcvt_e8m0", 20)
    lines[3] = lines[3] + ",extra"  # line 4: column count
    lines[5] = lines[5].replace("0x", "0xzz", 1)  # line 6: bad hex
    c = lines[8].split(",")
    c[2] = "RXX"  # line 9: unknown rounding mode
    lines[8] = ",".join(c)
    c = lines[10].split(",")
    c[0] = "FP99"  # line 11: unknown type
    lines[10] = ",".join(c)
    path = tmp_path / "t.csv"  # plain CSV accepted
    path.write_text("\n".join(lines) + "\n")
    parsed = parse_file(path)
    assert [ln for ln, _ in parsed.bad] == [4, 6, 9, 11]
    (rep,) = check_file(str(path))
    assert rep.malformed == 4 and rep.failed == 4 and rep.passed == 16
    r = CliRunner(env={"COLUMNS": "250"}).invoke(main, ["check", str(path)])
    assert r.exit_code == 1
    for ln in (4, 6, 9, 11):
        assert f"{path}:{ln}: malformed row" in r.output
    assert "Traceback" not in r.output


def test_check_cli_pass_and_both_engines() -> None:
    path = vectors_dir() / "relu_param_legal.csv.gz"
    r = CliRunner(env={"COLUMNS": "250"}).invoke(main, ["check", str(path), "--engine", "both", "--limit", "500"])
    assert r.exit_code == 0, r.output
    assert "PASS" in r.output and "reference" in r.output


def test_builtin_vectors_are_shipped_with_their_provenance() -> None:
    from ptonum.conformance.schema import builtin_vector_files, builtin_vectors_dir

    names = {p.name for p in builtin_vector_files()}
    assert names == {f"{op}.csv.gz" for op in FILES} | {"tiles.json.gz"}
    readme = (builtin_vectors_dir() / "README.md").read_text()
    assert "e599a3d3" in readme and ".aslref-version" in readme
    for name in names:  # the README describes every file
        assert f"`{name}`" in readme, name


def test_check_builtin_needs_no_path() -> None:
    r = CliRunner(env={"COLUMNS": "250"}).invoke(main, ["check", "--builtin", "--limit", "40"])
    assert r.exit_code == 0, r.output
    for op in FILES:
        assert f"{op}.csv.gz" in r.output
    assert "tiles.json.gz" in r.output and "PASS" in r.output


def test_unknown_header_is_one_line_error(tmp_path: Path) -> None:
    p = tmp_path / "x.csv"
    p.write_text("a,b\n1,2\n")
    r = CliRunner(env={"COLUMNS": "250"}).invoke(main, ["check", str(p)])
    assert r.exit_code == 2
    assert "matches no vector schema" in r.stderr and "Traceback" not in r.output
    assert r.stderr.startswith("ptonum check: error:") and r.stderr.count("\n") == 1


VECTOR_FILE = "a vector file (CSV text whose header names a schema's columns, or a JSON list of tile cases)"


def test_check_says_what_a_non_vector_file_is(tmp_path: Path) -> None:
    """An .npy array or a JSON object is named as such (was: its first bytes shown as a CSV header
    "matching no schema")."""
    import numpy as np

    np.save(tmp_path / "a.npy", np.arange(4, dtype=np.int32))
    (tmp_path / "o.json").write_text('{"a": 1}')
    (tmp_path / "z.bin").write_bytes(b"\x01\x00\x02")
    for name, what in (("a.npy", "an .npy array"), ("o.json", "a JSON object"), ("z.bin", "binary data")):
        r = CliRunner().invoke(main, ["check", str(tmp_path / name)])
        assert (r.exit_code, r.stdout) == (2, ""), r.output
        assert r.stderr == f"ptonum check: error: {tmp_path / name}: {what}, not {VECTOR_FILE}\n"


# ---------------------------------------------------------------------------
# New-user defects (regressions)


def _small(tmp_path: Path, n: int = 30, name: str = "t.csv") -> Path:
    p = tmp_path / name
    p.write_text("\n".join(_copy_lines(tmp_path, "tcvt_e8m0", n)) + "\n")
    return p


@pytest.mark.parametrize("opt", ["--limit", "--sample"])
def test_negative_limit_or_sample_is_a_usage_error(tmp_path: Path, opt: str) -> None:
    r = CliRunner().invoke(main, ["check", str(_small(tmp_path)), opt, "-1"])
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert "-1" in r.stderr


@pytest.mark.parametrize("args", [["--limit", "0"], ["--sample", "0"], ["HEADER_ONLY"]])
def test_nothing_checked_is_not_a_pass(tmp_path: Path, args: list) -> None:
    p = _small(tmp_path)
    if args == ["HEADER_ONLY"]:
        p.write_text(p.read_text().splitlines()[0] + "\n")
        args = []
    r = CliRunner().invoke(main, ["check", str(p), *args])
    assert r.exit_code == 2, r.output
    assert "no rows checked" in r.stderr and "PASS" not in r.output


@pytest.mark.parametrize("engine", ["fast", "both"])
@pytest.mark.parametrize("args", [["HEADER_ONLY"], ["--limit", "0"], ["--sample", "0"]])
def test_nothing_checked_prints_no_table(tmp_path: Path, args: list, engine: str) -> None:
    """A header-only file (or --limit 0, --sample 0) printed its error line and also a results table with a
    0-row entry on stdout; an error comes with no result: its one line (for all engines: it printed one per
    engine), nothing on stdout, exit 2."""
    p = _small(tmp_path)
    why = {"--limit": "--limit 0", "--sample": "--sample 0"}.get(args[0], "the file has no data rows")
    if args == ["HEADER_ONLY"]:
        p.write_text("src_type,src_bits,rmode,sat,expected_bits,expected_flags\n")
        args = []
    r = CliRunner().invoke(main, ["check", str(p), "--engine", engine, *args])
    engines = ["fast", "reference"] if engine == "both" else [engine]
    assert (r.exit_code, r.stdout) == (2, ""), r.output
    assert r.stderr == f"ptonum check: error: {p} [{', '.join(engines)}]: no rows checked ({why})\n"


def test_header_only_file_beside_a_good_one_has_no_table_row(tmp_path: Path, monkeypatch) -> None:
    """Beside a file that was checked, the header-only file is its error line only: the table lists the
    checked file alone (was: also a 0-row entry for the header-only file)."""
    _small(tmp_path, 30, "good.csv")
    monkeypatch.chdir(tmp_path)  # the table shows the path as given
    good, empty = Path("good.csv"), Path("header_only.csv")
    empty.write_text(good.read_text().splitlines()[0] + "\n")
    r = CliRunner().invoke(main, ["check", str(good), str(empty)])
    assert r.exit_code == 2, r.output
    assert r.stderr == f"ptonum check: error: {empty} [fast]: no rows checked (the file has no data rows)\n"
    assert "good.csv" in r.stdout and "header_only" not in r.stdout
    rows = [line for line in r.stdout.splitlines() if line.startswith("│")]
    assert [line.split("│")[1:-1] for line in rows] == [[" good.csv ", " tcvt_e8m0 ", " fast   ", "   30 ",
                                                           "      30 ", "     30 ", "      0 ", "         0 "]]


def test_utf8_bom_before_header_is_accepted(tmp_path: Path) -> None:
    p = _small(tmp_path)
    p.write_bytes(b"\xef\xbb\xbf" + p.read_bytes())
    r = CliRunner().invoke(main, ["check", str(p)])
    assert r.exit_code == 0, r.output
    assert "PASS" in r.stdout


def test_piped_table_is_not_elided(tmp_path: Path, monkeypatch) -> None:
    p = _small(tmp_path, 1234, "a_rather_long_vector_file_name_for_the_table_tcvt_e8m0_part_0001.csv")
    monkeypatch.chdir(tmp_path)  # the table shows the path as given: the name alone, on one line at 200 columns
    r = CliRunner(env={"COLUMNS": None}).invoke(main, ["check", p.name])  # not a TTY, no COLUMNS
    assert r.exit_code == 0, r.output
    assert "…" not in r.stdout
    assert p.name in r.stdout and r.stdout.count("1234") >= 3


def test_directory_and_missing_file_are_one_line_errors(tmp_path: Path) -> None:
    r = CliRunner().invoke(main, ["check", str(tmp_path)])
    assert r.exit_code == 2 and "is a directory" in r.stderr and r.stderr.count("\n") == 1
    r = CliRunner().invoke(main, ["check", str(tmp_path / "nope.csv")])
    assert r.exit_code == 2 and "nope.csv" in r.stderr and r.stderr.count("\n") == 1


@pytest.mark.parametrize("lead, trail", [(True, True), (True, False), (False, True)])
def test_extra_source_and_comment_columns_are_ignored_and_shown(tmp_path: Path, lead: bool, trail: bool) -> None:
    lines = _copy_lines(tmp_path, "fp32_to_fp19", 40)
    header, rows = lines[0], lines[1:]
    i = 20
    fields = rows[i].split(",")
    fields[1] = f"{int(fields[1], 16) ^ 1:#07x}"  # a wrong expected FP19 encoding (ASL row, one bit flipped)
    rows[i] = ",".join(fields)

    def wrap(n: int, text: str) -> str:
        return (f"asl-run-{n}," if lead else "") + text + (f",\"row {n}, from the ASL\"" if trail else "")

    out = [("source," if lead else "") + header + (",comment" if trail else "")]
    out += [wrap(n, r) for n, r in enumerate(rows)]
    path = tmp_path / "fp32_to_fp19.csv"
    path.write_text("\n".join(out) + "\n")
    (rep,) = check_file(str(path), ("fast",))
    assert (rep.checked, rep.mismatched, rep.malformed) == (len(rows), 1, 0)
    f = rep.failures[0]
    assert f.line == i + 2
    assert f.extra == {**({"source": f"asl-run-{i}"} if lead else {}),
                       **({"comment": f"row {i}, from the ASL"} if trail else {})}
    r = CliRunner(env={"COLUMNS": "200"}).invoke(main, ["check", str(path), "--no-explain"])
    assert r.exit_code == 1, r.output
    shown = ", ".join(f"{k}: {v}" for k, v in f.extra.items())
    assert shown in r.output
    r = CliRunner(env={"COLUMNS": "200"}).invoke(main, ["explain", "--row", f"{path}:{i + 2}"])
    assert r.exit_code == 1 and f"{path}:{i + 2} ({shown})" in r.output, r.output


def test_redirected_check_prints_no_blank_line_before_its_table(tmp_path: Path, monkeypatch) -> None:
    """With stdout not a terminal no progress bar is drawn (rich left a blank line where it was)."""
    import ptonum.cli.check_cmd

    monkeypatch.setattr(ptonum.cli.check_cmd, "PROGRESS_ROWS", 5)  # the 30-row file would show a bar
    r = CliRunner().invoke(main, ["check", str(_small(tmp_path)), str(_small(tmp_path, 40, "u.csv"))])
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[0].strip() == "ptonum check" and "" not in lines, r.stdout


# ---------------------------------------------------------------------------
# h-probe findings (regressions)


@pytest.mark.parametrize("engine", ["fast", "both"])
def test_every_row_malformed_is_nothing_checked(tmp_path: Path, engine: str) -> None:
    """A file none of whose rows can be read has no row checked: an error, as README and --help say of a file
    with nothing checked (exit 2, one line naming the file and its first malformed line, no table row).  Was
    (h-probe, then a fresh-user check): exit 1 with a table row of 0 checked and a FAIL line; before that,
    exit 2 with "no row selected"."""
    p = tmp_path / "t.csv"
    header = _copy_lines(tmp_path, "tcvt_e8m0", 1)[0]
    p.write_text(header + "\nzz,1\n0x3f800000\n")
    r = CliRunner(env={"COLUMNS": "250"}).invoke(main, ["check", str(p), "--engine", engine])
    engines = "fast, reference" if engine == "both" else "fast"
    assert (r.exit_code, r.stdout) == (2, ""), r.output
    assert r.stderr == (f"ptonum check: error: {p} [{engines}]: no rows checked (every data row is malformed, 2 data "
                        f"row(s); first {p}:2: expected 6 columns ({header}), got 2)\n")
    p.write_text(header + "\nFP32,0x3f800000,RNE,0,0x7f,0xzz\n")  # the only row: its flags are not hex
    r = CliRunner(env={"COLUMNS": "250"}).invoke(main, ["check", str(p), "--engine", engine])
    assert (r.exit_code, r.stdout) == (2, ""), r.output
    assert r.stderr.count("\n") == 1 and r.stderr.startswith(
        f"ptonum check: error: {p} [{engines}]: no rows checked (every data row is malformed, 1 data row(s); "
        f"first {p}:2: expected_flags: "), r.stderr


def _quoted(lines: list[str]) -> str:
    """The lines as a spreadsheet tool writes them: every field in double quotes (csv.QUOTE_ALL)."""
    import csv
    import io

    buf = io.StringIO()
    csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\r\n").writerows(ln.split(",") for ln in lines)
    return buf.getvalue()


@pytest.mark.parametrize("op", ["postprocess_element", "tcvt_e8m0", "decomposition"])
def test_quoted_csv_reads_as_the_unquoted_file(tmp_path: Path, op: str) -> None:
    lines = _copy_lines(tmp_path, op, 400)
    plain = parse_file(_write(tmp_path / f"plain_{op}.csv", "\n".join(lines) + "\n"))
    text = _quoted(lines)
    assert text.startswith('"') and '","' in text
    quoted = parse_file(_write(tmp_path / f"quoted_{op}.csv", text))
    assert quoted.schema is plain.schema and quoted.bad == plain.bad == []
    assert quoted.total == plain.total == 400
    assert (quoted.lines == plain.lines).all()
    for name in plain.rows:
        assert (quoted.rows[name] == plain.rows[name]).all(), name
    (rep,) = check_file(str(tmp_path / f"quoted_{op}.csv"))
    assert rep.ok and rep.passed == 400


def test_quoted_lines_mixed_with_plain_ones_and_a_quoted_comment(tmp_path: Path) -> None:
    """Only lines holding a quote are unquoted; a quoted trailing comment keeps its commas."""
    lines = _copy_lines(tmp_path, "fp32_to_fp19", 3)
    text = ('"fp32_bits","expected_fp19",comment\n' + lines[1] + ",plain\n"
            + _quoted([lines[2]]).rstrip("\r\n") + ',"a, ""quoted"" note"\n' + lines[3] + ',x\n')
    parsed = parse_file(_write(tmp_path / "mixed.csv", text))
    assert parsed.bad == [] and parsed.total == 3
    assert parsed.extras[3] == {"comment": 'a, "quoted" note'}
    assert [f"0x{v:08x}" for v in parsed.rows["fp32_bits"]] == [ln.split(",")[0].lower() for ln in lines[1:]]


@pytest.mark.parametrize("op", ["fp32_to_fp19", "tcvt_e8m0"])
@pytest.mark.parametrize("where, trail", [(0, True), (1, True), (-1, True), (-1, False), (2, False)])
def test_source_column_anywhere(tmp_path: Path, op: str, where: int, trail: bool) -> None:
    """The source column may stand anywhere (the schema's columns are read by name in any order; it
    was refused unless first): rows of the shared ASL vector file with a flipped expected value fail
    at their line only, the source (and comment) shown with the failure, the others pass."""
    lines = _copy_lines(tmp_path, op, 60)
    rows = [ln.split(",") for ln in lines]
    last = len(rows[0]) - 1
    v = rows[30][last]  # file line 31
    rows[30][last] = f"0x{int(v, 16) ^ 1:0{len(v) - 2}x}" if v.startswith("0x") else str(int(v) ^ 1)
    out = _with_source(rows, where, trail, lambda n: f"run-{n}", lambda n: f"note {n}, with a comma")
    p = tmp_path / f"src_{op}.csv"
    p.write_text("\n".join(out) + "\n")
    (rep,) = check_file(str(p), ("fast",))
    assert (rep.checked, rep.mismatched, rep.malformed) == (len(lines) - 1, 1, 0), rep
    f = rep.failures[0]
    assert f.line == 31
    assert f.extra == {"source": "run-31", **({"comment": "note 31, with a comma"} if trail else {})}
    r = CliRunner(env={"COLUMNS": "200"}).invoke(main, ["check", str(p), "--no-explain"])
    assert r.exit_code == 1 and "source: run-31" in r.output, r.output


@pytest.mark.parametrize("header, differs", [
    ("source,fp32_bits,source,expected_fp19", "source repeated"),
    ("fp32_bits,source,expected_fp19,source", "source repeated"),
    ("fp32_bits,comment,expected_fp19", "comment is not the last column (it takes the rest of the line)"),
    ("fp32_bits,source,expected_fp19,expected_fp19", "expected_fp19 repeated"),
    ("source,fp32_bits", "missing expected_fp19"),
    ("fp32_bits,source,expected_fp19,note", "not in the schema note"),
])
def test_source_anywhere_still_refuses_bad_headers(tmp_path: Path, header: str, differs: str) -> None:
    p = tmp_path / "fp32_to_fp19.csv"
    p.write_text(header + "\n0x3f800000,0x1,2,3\n")
    r = CliRunner().invoke(main, ["check", str(p)])
    assert r.exit_code == 2, r.output
    (line,) = r.stderr.strip().splitlines()
    assert line.startswith(f"ptonum check: error: {p}:1: header ") and differs in line, line


def _write(p: Path, text: str) -> str:
    p.write_text(text)
    return str(p)


@pytest.mark.parametrize("header, closest, differs", [
    ("fp32bits,expected_fp19", "fp32_to_fp19 (fp32_bits,expected_fp19)", "missing fp32_bits; not in the schema fp32bits (only a source column, anywhere, and a trailing comment column may be added)"),
    ("fp32_bits,expected_fp19,fp32_bits", "fp32_to_fp19 (fp32_bits,expected_fp19)", "fp32_bits repeated"),
    ("expected_fp19,fp32_bits,expected_fp19", "fp32_to_fp19 (fp32_bits,expected_fp19)", "expected_fp19 repeated"),
    ("src_type,src_bits,rmode,sat,expected_bits,expected_flag",
     "tcvt_e8m0 (src_type,src_bits,rmode,sat,expected_bits,expected_flags)",
     "missing expected_flags; not in the schema expected_flag (only a source column, anywhere, and a trailing comment "
     "column may be added)"),
    ("FP32_BITS,Expected_FP19", "fp32_to_fp19 (fp32_bits,expected_fp19)", "column names are lower-case"),
    ("Expected_FP19,FP32_BITS", "fp32_to_fp19 (fp32_bits,expected_fp19)", "column names are lower-case"),
    ("fp32_bits,note,expected_fp19", "fp32_to_fp19 (fp32_bits,expected_fp19)",
     "not in the schema note (only a source column, anywhere, and a trailing comment column may be added)"),
    # a spreadsheet's upper-case names or ';' / tab separators once named fp32_to_fp19 as the closest schema
    ("SRC_TYPE,SRC_BITS,RMODE,SAT,EXPECTED_BITS,EXPECTED_FLAGS",
     "tcvt_e8m0 (src_type,src_bits,rmode,sat,expected_bits,expected_flags)", "column names are lower-case"),
    ("src_type;src_bits;rmode;sat;expected_bits;expected_flags",
     "tcvt_e8m0 (src_type,src_bits,rmode,sat,expected_bits,expected_flags)",
     "the fields are separated by ';', not by commas (ptonum reads comma-separated values)"),
    ("fp32_bits\texpected_fp19", "fp32_to_fp19 (fp32_bits,expected_fp19)",
     "the fields are separated by '\\t', not by commas (ptonum reads comma-separated values)"),
    ("src_type;src_bits;rmode;sat;expected_bits", "tcvt_e8m0 (src_type,src_bits,rmode,sat,expected_bits,expected_flags)",
     "the fields are separated by ';', not by commas (ptonum reads comma-separated values); missing expected_flags"),
])
def test_unmatched_header_names_the_closest_schema_and_the_differing_columns(
        tmp_path: Path, header: str, closest: str, differs: str) -> None:
    p = tmp_path / "x.csv"
    p.write_text(header + "\n1,2\n")
    r = CliRunner().invoke(main, ["check", str(p)])
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr.startswith(f"ptonum check: error: {p}:1: header {header!r} matches no vector schema; "
                               f"the closest is {closest}: {differs} (schemas: ")
    assert r.stderr.count("\n") == 1


def test_header_not_matching_the_schema_its_name_gives_says_which_columns_differ(tmp_path: Path) -> None:
    p = tmp_path / "fp32_to_fp19.csv"
    p.write_text("fp32_bits,expected\n0x0,0x0\n")
    r = CliRunner().invoke(main, ["check", str(p)])
    assert r.exit_code == 2
    assert r.stderr == (f"ptonum check: error: {p}:1: header 'fp32_bits,expected' does not match the fp32_to_fp19 "
                        "schema (fp32_bits,expected_fp19): missing expected_fp19; not in the schema expected (only a "
                        "source column, anywhere, and a trailing comment column may be added)\n")


@pytest.mark.parametrize("seed", ["-1", "-99999999999999999999999"])
@pytest.mark.parametrize("cmd", ["check", "gen"])
def test_negative_seed_is_a_usage_error(tmp_path: Path, seed: str, cmd: str) -> None:
    """Was: an internal error (numpy's ValueError from default_rng)."""
    out = tmp_path / "g.csv"
    args = (["check", str(_small(tmp_path, 60)), "--sample", "5"] if cmd == "check"
            else ["gen", "fp32_to_fp19", "--count", "3", "--out", str(out)])
    r = CliRunner().invoke(main, [*args, "--seed", seed])
    assert r.exit_code == 2 and r.stdout == "", r.output
    assert r.stderr.startswith(f"ptonum {cmd}: error: Invalid value for '--seed': {seed} is not in the range x>=0.")
    assert "internal error" not in r.stderr and not out.exists()


def test_library_seed_checks() -> None:
    from ptonum.conformance.check import select_rows
    from ptonum.conformance.gen import generate_inputs
    from ptonum.errors import UsageError

    with pytest.raises(UsageError, match=r"seed = -1: expected a non-negative integer"):
        select_rows(10, sample=3, seed=-1)
    with pytest.raises(UsageError, match=r"seed = -1: expected a non-negative integer"):
        generate_inputs("fp32_to_fp19", 3, seed=-1)
    assert select_rows(10, sample=3, seed=2**70).size == 3


def test_gen_count_beyond_memory_is_refused_before_work(tmp_path: Path) -> None:
    """Was: rows generated until the machine ran out of memory."""
    out = tmp_path / "g.csv"
    r = CliRunner().invoke(main, ["gen", "fp32_to_fp19", "--count", "99999999999999999999999", "--out", str(out)])
    assert r.exit_code == 2 and not out.exists()
    assert r.stderr.startswith("ptonum gen: error: count = 99999999999999999999999: ") and "available" in r.stderr


@pytest.mark.parametrize("data, reason", [
    (b"\x1f\x8b\x08", "not a readable gzip file"),  # damaged gzip
    (b"a,b\n1,2\n", "header 'a,b' matches no vector schema"),
    (b"", "empty file"),
])
def test_standard_input_is_named_dash_in_every_error(tmp_path: Path, data: bytes, reason: str) -> None:
    """`check -` named standard input `/dev/stdin` in its gzip (and other read) errors but `-` in its parse
    errors and reports; every message now names it `-`, as the command line writes it."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, PTONUM_DISABLE_NUMBA="1")
    r = subprocess.run([sys.executable, "-m", "ptonum", "check", "-"], input=data, cwd=tmp_path, env=env,
                       capture_output=True, timeout=300)
    err = r.stderr.decode()
    assert r.returncode == 2, err
    assert err.count("\n") == 1 and reason in err, err
    assert err.startswith("ptonum check: error: -:") and "/dev/stdin" not in err, err


_GZ_TEXT = b"src_type,src_bits,rmode,sat,expected_bits,expected_flags\n" + b"FP32,0x3f800000,RNE,0,0x7f,0x00\n" * 50
_GZ = gzip.compress(_GZ_TEXT, mtime=0)


@pytest.mark.parametrize("data", [
    b"\x1f", b"\x1f\x8b", b"\x1f\x8b\x08", b"\x1f\x8b\x08\x00",  # cut inside the magic / the header
    _GZ[:10],  # the whole 10-byte header, no data
    _GZ[:len(_GZ) // 2],  # cut in the deflate data
    _GZ[:-4], _GZ[:-1],  # cut in the CRC-32 / length trailer
    _GZ + _GZ[:1], _GZ + _GZ[:12],  # a second member cut in its magic / its data
], ids=["1f", "1f8b", "1f8b08", "1f8b0800", "header", "half", "trailer-4", "trailer-1", "member2-1f",
        "member2-12"])
def test_gzip_cut_short_in_its_magic_is_a_truncated_gzip(tmp_path: Path, data: bytes) -> None:
    """A file holding only 0x1f (the first byte of the gzip magic 1f 8b) was read as CSV text and refused as
    a header matching no schema; like any gzip file cut short it is one line, exit 2, saying the gzip data is
    unreadable, and the library raises UsageError for it.  Every gzip file cut short -- in its magic, header,
    data or trailer, or in a later member -- is now told truncated by one rule (was: only 1f was; the others
    said 'Compressed file ended before the end-of-stream marker was reached' or 'Not a gzipped file (b'\\x1f')')."""
    from ptonum.conformance.schema import read_text
    from ptonum.errors import UsageError

    path = tmp_path / "v.csv.gz"
    path.write_bytes(data)
    n = len(data)
    message = (f"{path}: not a readable gzip file (truncated: the file ends after {n} byte{'' if n == 1 else 's'}, "
               "inside its gzip data)")
    r = CliRunner().invoke(main, ["check", str(path)])
    assert (r.exit_code, r.stdout) == (2, ""), r.output
    assert r.stderr == f"ptonum check: error: {message}\n"
    for read in (parse_file, read_text):
        with pytest.raises(UsageError) as exc:
            read(str(path))
        assert str(exc.value) == message


def test_whole_gzip_members_and_zero_padding_read_as_before(tmp_path: Path) -> None:
    """Two members are one text and zero bytes after a member are padding (as gzip and GzipFile read them)."""
    from ptonum.conformance.schema import read_text

    path = tmp_path / "v.csv.gz"
    path.write_bytes(_GZ + b"\x00\x00" + gzip.compress(b"FP32,0x3f800000,RNE,0,0x7f,0x00\n"))
    assert read_text(str(path)) == _GZ_TEXT + b"FP32,0x3f800000,RNE,0,0x7f,0x00\n"
    r = CliRunner().invoke(main, ["check", str(path)])
    assert r.exit_code == 0 and "PASS: 51 row(s) checked" in r.stdout, r.output


@pytest.mark.parametrize("data, reason", [
    (b"\x1f\x8b\x07" + _GZ[3:], "damaged: unknown compression method"),
    (_GZ[:-8] + b"\x00\x00\x00\x00" + _GZ[-4:], "damaged: incorrect data check"),  # CRC-32 wrong
    (_GZ + b"junk", "damaged in gzip member 2: incorrect header check"),  # data after the member is no member
])
def test_damaged_gzip_is_not_called_truncated(tmp_path: Path, data: bytes, reason: str) -> None:
    from ptonum.conformance.schema import read_text
    from ptonum.errors import UsageError

    path = tmp_path / "v.csv.gz"
    path.write_bytes(data)
    r = CliRunner().invoke(main, ["check", str(path)])
    assert (r.exit_code, r.stdout) == (2, ""), r.output
    assert r.stderr == f"ptonum check: error: {path}: not a readable gzip file ({reason})\n"
    with pytest.raises(UsageError) as exc:
        read_text(str(path))
    assert str(exc.value) == f"{path}: not a readable gzip file ({reason})"


@pytest.mark.parametrize("first", [b"\x1f", b"A"])
def test_text_starting_with_1f_then_another_byte_is_not_gzip(tmp_path: Path, first: bytes) -> None:
    """0x1f followed by anything but 0x8b is no gzip magic: the file gets the error of any text file whose
    header matches no schema (the same line as with 'A' in place of 0x1f), never a gzip error."""
    path = tmp_path / "v.csv"
    path.write_bytes(first + b"\x8c,b\n1,2\n")
    r = CliRunner().invoke(main, ["check", str(path)])
    assert (r.exit_code, r.stdout) == (2, ""), r.output
    assert r.stderr.count("\n") == 1 and "gzip" not in r.stderr, r.stderr
    assert r.stderr.startswith(f"ptonum check: error: {path}:1: header "), r.stderr


# ---------------------------------------------------------------------------
# fresh-user findings (h-cli4)


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_blank_lines_before_the_header_are_skipped(tmp_path: Path, newline: str) -> None:
    """Blank lines before the CSV header were read as its header (refused: 'matches no vector schema'); they are
    skipped, and line numbers still count them, as an editor numbers the lines."""
    lines = _copy_lines(tmp_path, "tcvt_e8m0", 20)
    p = tmp_path / "t.csv"
    p.write_bytes((newline + " " + newline + "\t" + newline + newline.join(lines) + newline).encode())
    r = CliRunner(env={"COLUMNS": "250"}).invoke(main, ["check", str(p)])
    assert (r.exit_code, r.stderr) == (0, ""), r.output
    assert "PASS: 20 row(s) checked" in r.stdout
    lines[5] = lines[5].replace("0x", "0xzz", 1)  # data row 5: the header is on line 4, so this is line 9
    p.write_bytes((newline + " " + newline + "\t" + newline + newline.join(lines) + newline).encode())
    r = CliRunner(env={"COLUMNS": "250"}).invoke(main, ["check", str(p)])
    assert r.exit_code == 1, r.output
    assert f"  {p}:9: malformed row: src_bits: " in r.stdout
    r = CliRunner().invoke(main, ["explain", "--row", f"{p}:10"])  # the next row, by the same numbering
    assert r.exit_code == 0 and r.stdout.startswith(f"{p}:10\n") and "MATCH" in r.stdout, r.output
    p.write_text("\n\nsrc_type,nonsense\n")
    r = CliRunner().invoke(main, ["check", str(p)])
    assert r.exit_code == 2 and r.stderr.startswith(f"ptonum check: error: {p}:3: header 'src_type,nonsense' "), \
        r.stderr


def _one_mismatch_one_malformed(tmp_path: Path, name: str = "mm.csv") -> Path:
    """30 ASL rows of tcvt_e8m0 with an expected code flipped in data row 3 (line 4) and a bad hex field in
    data row 7 (line 8)."""
    lines = _copy_lines(tmp_path, "tcvt_e8m0", 30)
    c = lines[3].split(",")
    c[4] = f"{int(c[4], 16) ^ 1:#04x}"
    lines[3] = ",".join(c)
    lines[7] = lines[7].replace("0x", "0xzz", 1)
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n")
    return p


@pytest.mark.parametrize("engine", ["fast", "both"])
def test_fail_line_counts_malformed_rows_apart_as_the_table_does(tmp_path: Path, engine: str) -> None:
    """The table says failed 1, malformed 1; the FAIL line and the file's heading said '2 failing row(s)' (a
    malformed row counted as failing); they count the two apart, as the table does."""
    p = _one_mismatch_one_malformed(tmp_path)
    r = CliRunner(env={"COLUMNS": "250"}).invoke(main, ["check", str(p), "--engine", engine, "--no-explain"])
    assert r.exit_code == 1, r.output
    engines = ["fast", "reference"] if engine == "both" else ["fast"]
    rows = [[c.strip() for c in ln.split("│")[1:-1]] for ln in r.stdout.splitlines() if ln.startswith("│")]
    assert rows == [[str(p), "tcvt_e8m0", e, "30", "29", "28", "1", "1"] for e in engines]
    both = "" if engine == "fast" else " in both engines"
    # both engines fail the same rows alike: one list, said to hold for both (it was listed once per engine)
    label = "fast" if engine == "fast" else "both engines"
    assert f"{p} [{label}] tcvt_e8m0: 1 failing row(s), 1 malformed row(s); first 2:" in r.stdout
    assert r.stdout.count(f"{p}:4: mismatch") == 1
    # each row counted once (it was "2 failing row(s) (fast 1, reference 1), 2 ..."); then the rows checked
    assert r.stdout.splitlines()[-1] == f"FAIL: 1 failing row(s){both}, 1 malformed row(s); 29 row(s) checked{both}"


@pytest.mark.parametrize("engine", ["fast", "both"])
def test_errors_come_in_the_order_of_the_files_with_the_totals_of_the_checked_ones(tmp_path: Path,
                                                                                    engine: str) -> None:
    """Error lines came in the order they were found (unreadable files while reading, files with nothing checked
    at the end) and a call with an error printed no PASS line: now one line per file in error, in the order of
    FILES, and the totals of the files that were checked, with the exit status of an error (2)."""
    good = _small(tmp_path, 30, "good.csv")
    header_only = tmp_path / "header_only.csv"
    header_only.write_text(good.read_text().splitlines()[0] + "\n")
    missing = tmp_path / "missing.csv"
    engines = "fast, reference" if engine == "both" else "fast"
    r = CliRunner(env={"COLUMNS": "250"}).invoke(
        main, ["check", str(header_only), str(good), str(missing), "--engine", engine])
    assert r.exit_code == 2, r.output
    assert r.stderr.splitlines() == [
        f"ptonum check: error: {header_only} [{engines}]: no rows checked (the file has no data rows)",
        f"ptonum check: error: {missing}: cannot read vector file (No such file or directory)"]
    checked = "30 row(s) checked" + ("" if engine == "fast" else " in both engines")  # a row counted once
    assert r.stdout.splitlines()[-1] == f"ERROR: {checked}, 2 file error(s)"  # was PASS: ..., 2 file error(s)
    assert "header_only" not in r.stdout and "missing" not in r.stdout
    # a failing file beside them: the FAIL line with the errors counted, still exit 2
    bad = _one_mismatch_one_malformed(tmp_path)
    r = CliRunner(env={"COLUMNS": "250"}).invoke(
        main, ["check", str(missing), str(bad), str(header_only), "--engine", engine, "--no-explain"])
    assert r.exit_code == 2, r.output
    assert [ln.split(": error: ")[1].split(" ")[0] for ln in r.stderr.splitlines()] == [f"{missing}:", str(header_only)]
    assert r.stdout.splitlines()[-1].startswith("FAIL: ") and r.stdout.splitlines()[-1].endswith(", 2 file error(s)")


def test_summary_never_says_pass_when_a_file_is_in_error(tmp_path: Path) -> None:
    """`ptonum check good.csv header_only.csv` ended with `PASS: 5 row(s) checked, 1 file error(s)` and exit 2: a
    grep for PASS read it as a pass.  The line starts with ERROR when the checked files passed but a file is in
    error, and with PASS only when none is; FAIL still comes first when a row failed (exit 2 all the same)."""
    good = _small(tmp_path, 5, "good.csv")
    header_only = tmp_path / "header_only.csv"
    header_only.write_text(good.read_text().splitlines()[0] + "\n")
    r = CliRunner(env={"COLUMNS": "250"}).invoke(main, ["check", str(good), str(header_only)])
    assert r.exit_code == 2, r.output
    assert "PASS" not in r.stdout
    assert r.stdout.splitlines()[-1] == "ERROR: 5 row(s) checked, 1 file error(s)"
    r = CliRunner(env={"COLUMNS": "250"}).invoke(main, ["check", str(good)])
    assert r.exit_code == 0 and r.stdout.splitlines()[-1] == "PASS: 5 row(s) checked", r.output
    bad = _one_mismatch_one_malformed(tmp_path)
    r = CliRunner(env={"COLUMNS": "250"}).invoke(main, ["check", str(bad), str(header_only), "--no-explain"])
    assert r.exit_code == 2, r.output  # the file error (2) wins over the mismatch (1)
    assert r.stdout.splitlines()[-1] == "FAIL: 1 failing row(s), 1 malformed row(s); 29 row(s) checked, 1 file error(s)"


def test_table_shows_each_file_as_given_so_same_named_files_stay_apart(tmp_path: Path, monkeypatch) -> None:
    """`ptonum check d1/v.csv d2/v.csv` showed two table rows both labelled `v.csv` (the failure lines show the
    path): the table shows each file as given on the command line; --builtin's files keep their names."""
    for d in ("d1", "d2"):
        (tmp_path / d).mkdir()
        _small(tmp_path / d, 7 if d == "d1" else 9, "v.csv")
    monkeypatch.chdir(tmp_path)
    r = CliRunner(env={"COLUMNS": "250"}).invoke(main, ["check", "d1/v.csv", "d2/v.csv", "--engine", "both"])
    assert r.exit_code == 0, r.output
    rows = [[c.strip() for c in ln.split("│")[1:-1]] for ln in r.stdout.splitlines() if ln.startswith("│")]
    assert [(row[0], row[2], row[4]) for row in rows] == [("d1/v.csv", "fast", "7"), ("d1/v.csv", "reference", "7"),
                                                         ("d2/v.csv", "fast", "9"), ("d2/v.csv", "reference", "9")]
    r = CliRunner(env={"COLUMNS": "250"}).invoke(main, ["check", "d1/v.csv", "--builtin", "--limit", "3"])
    assert r.exit_code == 0, r.output
    names = [ln.split("│")[1].strip() for ln in r.stdout.splitlines() if ln.startswith("│")]
    assert names[0] == "d1/v.csv" and len(names) > 1 and all("/" not in n for n in names[1:]), names


def test_both_engines_count_a_row_once_and_say_when_the_engines_differ(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """`--engine both` totalled each row once per engine (`PASS: 60 row(s) checked (fast 30, reference 30)` for 30
    rows): a row is counted once, `in both engines` when the engines agree, else each engine's count."""
    good = _small(tmp_path, 30, "good.csv")
    r = CliRunner(env={"COLUMNS": "250"}).invoke(main, ["check", str(good), "--engine", "both"])
    assert r.exit_code == 0 and r.stdout.splitlines()[-1] == "PASS: 30 row(s) checked in both engines", r.output
    bad = _one_mismatch_one_malformed(tmp_path)
    import ptonum.cli.check_cmd as check_cmd

    model = check_cmd.check_parsed

    def reference_fails_one_more(parsed: Any, eng: str, **kw: Any) -> Any:  # the engines disagree on a row
        rep = model(parsed, eng, **kw)
        if eng == "reference":
            rep.passed, rep.mismatched = rep.passed - 1, rep.mismatched + 1
        return rep
    monkeypatch.setattr(check_cmd, "check_parsed", reference_fails_one_more)
    r = CliRunner(env={"COLUMNS": "250"}).invoke(main, ["check", str(bad), str(good), "--engine", "both",
                                                        "--no-explain"])
    assert r.exit_code == 1, r.output
    assert r.stdout.splitlines()[-1] == ("FAIL: 1 failing row(s) in fast, 3 in reference, 1 malformed row(s); "
                                         "59 row(s) checked in both engines")


def test_a_file_given_twice_is_checked_once_with_a_note(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`check a.csv ./a.csv` checked the file twice (two table rows, twice the rows in the total): each file is
    checked once, whatever its spelling or link, the first spelling kept, and a note says so."""
    _small(tmp_path, 30, "a.csv")
    (tmp_path / "link.csv").symlink_to("a.csv")
    monkeypatch.chdir(tmp_path)
    r = CliRunner(env={"COLUMNS": "250"}).invoke(main, ["check", "a.csv", "./a.csv", "link.csv", "a.csv",
                                                        "missing.csv", "./missing.csv"])
    assert r.exit_code == 2, r.output
    assert r.stderr.splitlines() == [
        "ptonum check: note: ./a.csv: the same file as a.csv; checked once",
        "ptonum check: note: link.csv: the same file as a.csv; checked once",
        "ptonum check: note: a.csv: given again; checked once",
        "ptonum check: note: ./missing.csv: the same file as missing.csv; checked once",
        "ptonum check: error: missing.csv: cannot read vector file (No such file or directory)"]
    rows = [[c.strip() for c in ln.split("│")[1:-1]] for ln in r.stdout.splitlines() if ln.startswith("│")]
    assert rows == [["a.csv", "tcvt_e8m0", "fast", "30", "30", "30", "0", "0"]]
    assert r.stdout.splitlines()[-1] == "ERROR: 30 row(s) checked, 1 file error(s)"


def test_limit_with_sample_is_a_usage_error(tmp_path: Path) -> None:
    """`--sample 10 --limit 5` drew 10 rows of the whole file and checked the first 5 of them (and `--limit 100
    --sample 10` sampled the whole file, not its first 100 rows): the two are alternatives, refused together
    before anything is read."""
    p = _one_mismatch_one_malformed(tmp_path)
    for args in (["--sample", "10", "--limit", "5"], ["--limit", "100", "--sample", "10"]):
        r = CliRunner().invoke(main, ["check", str(p), *args])
        limit, sample = (args[3], args[1]) if args[0] == "--sample" else (args[1], args[3])
        assert (r.exit_code, r.stdout, r.stderr) == (
            2, "", f"ptonum check: error: --limit {limit} and --sample {sample}: give one of them (--limit N checks "
            "the first N rows of each file, --sample N draws N rows of each file at random) "
            "(see 'ptonum check --help')\n"), r.output


def test_max_report_0_prints_the_counts_only(tmp_path: Path) -> None:
    """`--max-report 0` headed an empty list with `first 0:`; it now prints each file's counts alone."""
    p = _one_mismatch_one_malformed(tmp_path)
    r = CliRunner(env={"COLUMNS": "250"}).invoke(main, ["check", str(p), "--max-report", "0"])
    assert r.exit_code == 1, r.output
    out = r.stdout.splitlines()
    assert out[out.index(next(ln for ln in out if ln.startswith("└"))) + 1:] == [
        f"{p} [fast] tcvt_e8m0: 1 failing row(s), 1 malformed row(s)",
        "FAIL: 1 failing row(s), 1 malformed row(s); 29 row(s) checked"]


def test_help_says_which_encodings_are_read(tmp_path: Path) -> None:
    """The help named only the UTF-8 byte-order mark; UTF-16 with its mark is read too (and without it refused),
    as test_text_as_spreadsheets_save_it_is_read checks."""
    r = CliRunner(env={"COLUMNS": "120"}).invoke(main, ["check", "--help"])
    assert r.exit_code == 0, r.output
    text = " ".join(r.stdout.replace("│", " ").split())
    assert ("The text is UTF-8 (ASCII), with or without a byte-order mark, or UTF-16 with its byte-order mark (a "
            "spreadsheet's \"Unicode text\"); UTF-16 without the mark is not read.") in text, text
    assert "A file given more than once (by any spelling or link: a.csv ./a.csv) is checked once" in text
    assert "--limit and --sample are alternatives: giving both is a usage error." in text


@pytest.mark.parametrize("name", ["t[red].csv", "t[x]{0}.csv"])
def test_progress_bar_label_is_the_path_as_text(tmp_path: Path, monkeypatch, name: str) -> None:
    """The progress bar of a large file is labelled with its path and engine as they are.  Was: the label was read
    as rich markup (``[red]`` styled the rest and vanished, the ``[fast]`` engine label vanished too) and as a
    format string (a ``{0}`` in the path raised an internal error)."""
    import io

    from rich.console import Console
    from rich.progress import Progress

    import ptonum.cli.check_cmd

    bars: list = []

    class Recorded(Progress):
        def __init__(self, *args: Any, **kw: Any) -> None:
            super().__init__(*args, **kw)
            bars.append(self)

    monkeypatch.setattr(ptonum.cli.check_cmd, "PROGRESS_ROWS", 5)  # the 30-row file shows a bar
    monkeypatch.setattr(ptonum.cli.check_cmd, "Progress", Recorded)
    screen = io.StringIO()
    monkeypatch.setattr(ptonum.cli.check_cmd, "out_console",
                        lambda: Console(file=screen, force_terminal=True, width=250))
    p = _small(tmp_path, 30, name)
    r = CliRunner().invoke(main, ["check", str(p), "--engine", "both"])
    assert r.exit_code == 0, (r.output, screen.getvalue())
    labels = [str(bar.columns[0].render(task)) for bar in bars for task in bar.tasks]
    assert labels == [f"{p} [fast]", f"{p} [reference]"]


@pytest.mark.parametrize("seed", ["0", "7"])
def test_seed_without_sample_is_a_usage_error(tmp_path: Path, seed: str) -> None:
    """`--seed N` seeds the random draw of `--sample`; without `--sample` it changed nothing, silently (every row,
    or the first `--limit` rows, were checked whatever the seed).  Now refused before anything is read."""
    p = _one_mismatch_one_malformed(tmp_path)
    for args in (["--seed", seed], ["--limit", "5", "--seed", seed]):
        r = CliRunner().invoke(main, ["check", str(p), *args])
        assert (r.exit_code, r.stdout, r.stderr) == (
            2, "", f"ptonum check: error: --seed {seed} without --sample: --seed seeds the random draw of "
            "--sample N (give --sample N, or leave --seed out) (see 'ptonum check --help')\n"), r.output
    r = CliRunner(env={"COLUMNS": "250"}).invoke(main, ["check", str(p), "--sample", "2", "--seed", seed,
                                                         "--no-explain"])
    assert r.exit_code in (0, 1), r.output


def test_help_says_seed_needs_sample() -> None:
    r = CliRunner(env={"COLUMNS": "120"}).invoke(main, ["check", "--help"])
    assert r.exit_code == 0, r.output
    text = " ".join(r.stdout.replace("│", " ").split())
    assert "--seed needs --sample: giving it without --sample is a usage error." in text, text
    # no '[default: 0]': `--seed 0` alone is a usage error; the help says what --sample uses without --seed
    assert ("--seed INTEGER RANGE [x>=0] Seed for --sample (a non-negative integer; only with --sample, which uses 0 "
            "when --seed is not given). --no-explain ") in text, text


def test_sample_without_seed_draws_as_seed_0(tmp_path: Path) -> None:
    p = _malformed_at_the_end(tmp_path)
    runs = [CliRunner(env={"COLUMNS": "200"}).invoke(main, ["check", str(p), "--sample", "3", *seed])
            for seed in ([], ["--seed", "0"])]
    assert runs[0].exit_code == runs[1].exit_code == 1  # seed 0 draws data row 9, malformed
    assert runs[0].stdout == runs[1].stdout and "tail.csv:11: malformed row" in runs[0].stdout


def _malformed_at_the_end(tmp_path: Path) -> Path:
    """10 ASL rows of tcvt_e8m0 (lines 2-11); the last two (lines 10 and 11, data rows 8 and 9 from 0) malformed."""
    lines = _copy_lines(tmp_path, "tcvt_e8m0", 10)
    for k in (9, 10):
        lines[k] = lines[k].replace("0x", "0xzz", 1)
    p = tmp_path / "tail.csv"
    p.write_text("\n".join(lines) + "\n")
    return p


@pytest.mark.parametrize("args, last", [
    (["--limit", "2"], "PASS: 2 row(s) checked"),
    (["--sample", "3", "--seed", "1"], "PASS: 3 row(s) checked"),  # draws data rows 3, 4, 7
    (["--limit", "9"], "FAIL: 1 malformed row(s); 8 row(s) checked"),  # data rows 0-8: line 10 among them, not 11
    (["--sample", "3", "--seed", "0"], "FAIL: 1 malformed row(s); 2 row(s) checked"),  # draws rows 5, 6, 9 (line 11)
])
def test_limit_and_sample_judge_only_the_rows_they_select(tmp_path: Path, args: list, last: str) -> None:
    """`check FILE --limit 2` on a file whose malformed rows lie after the first two rows said `FAIL: 2 malformed
    row(s)`, named lines outside the window and exited 1: --limit and --sample select among all the data rows,
    malformed or not, and only the rows selected are checked, counted and reported."""
    p = _malformed_at_the_end(tmp_path)
    r = CliRunner(env={"COLUMNS": "200"}).invoke(main, ["check", str(p), "--no-explain", *args])
    assert r.stderr == ""
    out = r.stdout.splitlines()
    assert out[-1] == last, r.stdout
    if last.startswith("PASS"):
        assert r.exit_code == 0 and "malformed row:" not in r.stdout
    else:
        line = 10 if args[0] == "--limit" else 11
        assert r.exit_code == 1
        assert [ln for ln in out if "malformed row:" in ln] == [f"  {p}:{line}: malformed row: src_bits: bad hex "
                                                                "'0xzz0000'"]


def test_selection_of_only_malformed_rows_says_so(tmp_path: Path) -> None:
    """When every row --limit selects is malformed (others are not), nothing is checked; the error says that of
    the rows selected, not of the file."""
    lines = _copy_lines(tmp_path, "tcvt_e8m0", 10)
    for k in (1, 2):
        lines[k] = lines[k].replace("0x", "0xzz", 1)
    p = tmp_path / "head.csv"
    p.write_text("\n".join(lines) + "\n")
    r = CliRunner().invoke(main, ["check", str(p), "--limit", "2"])
    assert (r.exit_code, r.stdout) == (2, ""), r.output
    assert r.stderr == (f"ptonum check: error: {p} [fast]: no rows checked (the 2 data row(s) --limit 2 selects are "
                        f"malformed; first {p}:2: src_bits: bad hex '0xzz0000')\n")
    assert CliRunner().invoke(main, ["check", str(p), "--limit", "3"]).exit_code == 1  # data row 2 checked


def test_library_selection_counts_malformed_rows_in_file_order(tmp_path: Path) -> None:
    from ptonum.conformance.check import check_parsed, select_among
    from ptonum.dask.check import check_parsed_blocks

    parsed = parse_file(_malformed_at_the_end(tmp_path))
    assert [ln for ln, _ in parsed.bad] == [10, 11] and len(parsed) == 8
    good, bad = select_among(parsed.lines, [10, 11], limit=9)
    assert (good.tolist(), bad.tolist()) == (list(range(8)), [0])
    good, bad = select_among(parsed.lines, [10, 11], sample=3, seed=0)
    assert (good.tolist(), bad.tolist()) == ([5, 6], [1])
    for kw, checked, lines in (({"limit": 9}, 8, [10]), ({"sample": 3, "seed": 0}, 2, [11]), ({"limit": 2}, 2, []),
                               ({}, 8, [10, 11])):
        rep = check_parsed(parsed, "fast", **kw)
        assert (rep.rows, rep.checked, rep.passed, rep.malformed) == (10, checked, checked, len(lines)), kw
        assert [(f.line, f.kind) for f in rep.failures] == [(ln, "malformed") for ln in lines], kw
        blocks = check_parsed_blocks(parsed, "fast", client=None, block_rows=3, **kw)  # the Dask path, serially
        assert (blocks.rows, blocks.checked, blocks.passed, blocks.malformed) == (10, checked, checked, len(lines)), kw
        assert [(f.line, f.kind) for f in blocks.failures] == [(ln, "malformed") for ln in lines], kw


def test_limit_parses_only_the_rows_it_checks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`check --limit N` parses only the header and the first N data rows (the rows after them are counted, not
    parsed: seconds and a gigabyte for the shipped tcvt_e8m0 vectors before); its report is the one the whole file
    gave: the table's `rows` is the file's count of data rows, as without --limit."""
    import ptonum.cli.check_cmd as check_cmd
    import ptonum.conformance.check as check_mod
    from ptonum.conformance.schema import parse_text

    lines = _copy_lines(tmp_path, "decomposition", 20000)
    lines.insert(3000, "")  # a blank line (no data row) and a malformed one among the rows not checked
    lines[4000] = lines[4000].replace(",", ";")
    path = tmp_path / "d.csv.gz"
    path.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode(), mtime=0))
    run = CliRunner(env={"COLUMNS": "250"})
    whole = run.invoke(main, ["check", str(path)])
    assert whole.exit_code == 1 and "1 malformed row(s); 19999 row(s) checked" in whole.output, whole.output
    assert "│ 20000 │   19999 │" in whole.output, whole.output  # rows: every data row, malformed or not
    parsed_rows: list = []

    def counting(raw: bytes, *a: Any, **k: Any) -> Any:
        parsed = parse_text(raw, *a, **k)
        parsed_rows.append(parsed.total)
        return parsed

    monkeypatch.setattr(check_cmd, "parse_text", counting)
    monkeypatch.setattr(check_mod, "parse_text", counting)
    for n in (1, 10, 2998, 2999):
        parsed_rows.clear()
        r = run.invoke(main, ["check", "--limit", str(n), str(path)])
        assert r.exit_code == 0 and f"PASS: {n} row(s) checked" in r.output, r.output
        assert f"│ 20000 │ {n:>7} │" in r.output, r.output  # the file's data rows, counted
        assert parsed_rows == [n], parsed_rows  # only the rows checked were parsed
        parsed_rows.clear()
        (rep,) = check_file(str(path), limit=n)
        assert (rep.rows, rep.checked, rep.passed, rep.malformed) == (20000, n, n, 0)
        assert parsed_rows == [n], parsed_rows
    r = run.invoke(main, ["check", "--limit", "3999", str(path)])  # the malformed row is data row 3999
    assert r.exit_code == 1 and "1 malformed row(s); 3998 row(s) checked" in r.output, r.output
    assert f"{path}:4001: malformed row" in r.output, r.output


def test_fail_line_is_one_line_in_a_narrow_terminal_and_unchanged_in_a_wide_one(tmp_path: Path) -> None:
    """At COLUMNS=40 the FAIL line was folded by rich at a space ('FAIL: 1 failing row(s), 1 malformed row(s);
    29 row(s) ' with a trailing space, then 'checked' alone): it is one line the terminal wraps, the same line as
    at COLUMNS=200 (a script that reads the last line, or greps FAIL, gets it whole)."""
    p = _one_mismatch_one_malformed(tmp_path)
    want = "FAIL: 1 failing row(s), 1 malformed row(s); 29 row(s) checked"
    for cols in ("40", "200"):
        r = CliRunner(env={"COLUMNS": cols}).invoke(main, ["check", str(p), "--no-explain"])
        assert r.exit_code == 1, r.output
        assert r.stdout.splitlines()[-1] == want, (cols, r.stdout)
        assert "\nchecked\n" not in r.stdout and f"{p} [fast] tcvt_e8m0: 1 failing row(s), 1 malformed row(s); " \
               "first 2:\n" in r.stdout
    r = CliRunner(env={"COLUMNS": "40"}).invoke(main, ["check", str(p), "--no-explain", "--engine", "both"])
    assert r.stdout.splitlines()[-1] == ("FAIL: 1 failing row(s) in both engines, 1 malformed row(s); 29 row(s) "
                                         "checked in both engines")


def _named_copy(tmp_path: Path, name: str) -> Path:
    """30 tcvt_e8m0 rows, line 4's expected code flipped, in a file named ``name``."""
    lines = _copy_lines(tmp_path, "tcvt_e8m0", 30)
    c = lines[3].split(",")
    c[4] = f"{int(c[4], 16) ^ 1:#04x}"
    lines[3] = ",".join(c)
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n")
    return p


def test_check_shows_control_characters_of_a_file_name_as_escapes(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A file named 'a<ESC>[31mred.csv' recoloured the terminal (its ESC printed raw in the table, the failure
    lines and the explain command); one named 'nl<LF>x.csv' split the table row and every failure line in two.
    Each is shown with its escapes (\\x1b, \\n), the explain command in $'...' quoting that names the file
    again; printable non-ASCII (é) stays as it is."""
    import subprocess

    monkeypatch.chdir(tmp_path)
    for name, shown in (("a\x1b[31mred.csv", "a\\x1b[31mred.csv"), ("nl\nx.csv", "nl\\nx.csv"),
                        ("é\u202e.csv", "é\\u202e.csv")):
        _named_copy(tmp_path, name)
        r = CliRunner(env={"COLUMNS": "200"}).invoke(main, ["check", name])
        assert r.exit_code == 1, r.output
        for bad in ("\x1b", "\u202e"):
            assert bad not in r.stdout
        assert f"│ {shown} " in r.stdout  # the table's file cell, one row
        assert f"{shown} [fast] tcvt_e8m0: 1 failing row(s); first 1:\n  {shown}:4: mismatch: " in r.stdout
        command = next(ln for ln in r.stdout.splitlines() if ln.startswith("ptonum explain --row "))
        assert command == f"ptonum explain --row $'{shown}:4'"
        # the quoted word names the file (bash reads $'...' as the name with its control characters)
        word = command[len("ptonum explain --row "):]
        said = subprocess.run(["bash", "-c", f"printf %s {word}"], capture_output=True, text=True).stdout
        assert said == f"{name}:4"
        r = CliRunner(env={"COLUMNS": "200"}).invoke(main, ["check", name + ".missing"])
        assert r.exit_code == 2 and f"error: {shown}.missing: " in r.stderr
    _named_copy(tmp_path, "é.csv")  # printable: as it is, quoted as before
    r = CliRunner(env={"COLUMNS": "200"}).invoke(main, ["check", "é.csv"])
    assert "ptonum explain --row 'é.csv:4'\n" in r.stdout and "é.csv [fast] tcvt_e8m0" in r.stdout


def test_check_shows_a_file_name_byte_that_is_not_text_as_the_byte(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A file name byte that is not UTF-8 (0xff; Python holds it as U+DCFF) was shown as '\\udcff', and the explain
    command $'bad\\udcff.csv:4' named another file when pasted (bash writes U+DCFF as UTF-8 bytes).  It is shown as
    \\xff, and $'...' gives the byte back."""
    import subprocess

    monkeypatch.chdir(tmp_path)
    name = "bad\udcff.csv"  # the bytes b"bad\xff.csv"
    _named_copy(tmp_path, name)
    r = CliRunner(env={"COLUMNS": "200"}).invoke(main, ["check", name])
    assert r.exit_code == 1, r.output
    assert "\\udc" not in r.stdout and "│ bad\\xff.csv " in r.stdout
    command = next(ln for ln in r.stdout.splitlines() if ln.startswith("ptonum explain --row "))
    assert command == "ptonum explain --row $'bad\\xff.csv:4'"
    said = subprocess.run(["bash", "-c", f"printf %s {command[len('ptonum explain --row '):]}"],
                          capture_output=True).stdout
    assert said == b"bad\xff.csv:4"


def test_check_both_engines_list_the_same_failures_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--engine both` printed the same failure list twice (under [fast], then [reference]); one list says it
    holds for both engines.  Lists that differ (here a reference message made different) stay apart."""
    from dataclasses import replace as dc_replace

    import ptonum.cli.check_cmd as check_cmd

    p = _named_copy(tmp_path, "t.csv")
    r = CliRunner(env={"COLUMNS": "200"}).invoke(main, ["check", str(p), "--engine", "both"])
    assert r.exit_code == 1, r.output
    assert f"{p} [both engines] tcvt_e8m0: 1 failing row(s); first 1:\n" in r.stdout
    assert r.stdout.count(f"{p}:4: mismatch") == 1 and "[fast]" not in r.stdout and "[reference]" not in r.stdout
    assert r.stdout.count(f"ptonum explain --row {p}:4\n") == 1

    real = check_cmd.check_parsed

    def differing(parsed: Any, eng: str, **kw: Any) -> Any:
        rep = real(parsed, eng, **kw)
        if eng == "reference":
            rep.failures[0] = dc_replace(rep.failures[0], message=rep.failures[0].message + " (reference)")
        return rep

    monkeypatch.setattr(check_cmd, "check_parsed", differing)
    r = CliRunner(env={"COLUMNS": "200"}).invoke(main, ["check", str(p), "--engine", "both"])
    assert f"{p} [fast] tcvt_e8m0: 1 failing row(s); first 1:\n" in r.stdout
    assert f"{p} [reference] tcvt_e8m0: 1 failing row(s); first 1:\n" in r.stdout
    assert r.stdout.count(f"{p}:4: mismatch") == 2 and "[both engines]" not in r.stdout
