"""Odd vector files given to ``ptonum check`` and ``ptonum explain --row``: a double quote a line does not close
(a quoted line break among them), CR-only line ends, a header line far too long for any schema, and UTF-8 text
(in the ``source``/``comment`` columns, in a schema column, and bytes that are not UTF-8)."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any, Generator

import pytest
from click.testing import CliRunner

from conftest import vectors_dir
from ptonum.cli import main
from ptonum.conformance import schema as schema_mod
from ptonum.conformance.check import check_file
from ptonum.conformance.schema import HEADER_MAX_BYTES, parse_file, parse_text


def _run(*args: str) -> Any:
    return CliRunner(env={"COLUMNS": "250"}).invoke(main, list(args))


def _lines(op: str, n: int) -> list[str]:
    """The header and first ``n`` rows of a shipped vector file, without their line ends."""
    with gzip.open(vectors_dir() / f"{op}.csv.gz", "rt", newline="") as fh:
        return [next(fh).rstrip("\r\n") for _ in range(n + 1)]


# -- a double quote the line does not close ------------------------------------------------------------------

_QUOTE = ("opens a double quote that the line does not close (a quoted field cannot hold a line break: each row is "
          'one line; a quote inside a quoted field is written "")')

ROW = "0x0000000000000000,1"


@pytest.mark.parametrize("text, where", [
    ("word,legal,comment\n" + ROW + ',"a\nb"\n' + ROW + ",ok\n", "2: field 3 (comment)"),  # a quoted line break
    ("word,legal,comment\r\n" + ROW + ',"a\r\nb"\r\n', "2: field 3 (comment)"),  # the same, CR LF
    ("word,legal,comment\n" + ROW + ',"abc\n' + ROW + ",ok\n", "2: field 3 (comment)"),  # never closed
    ('word,legal\n"0x0000000000000000,1\n' + ROW + "\n", "2: field 1 (word)"),  # the quote took the whole line
    ('word,legal\n\n' + ROW + '\n"0x0",1\n0x0,"1\n', "5: field 2 (legal)"),  # after a blank line
    ('word,"legal\n' + ROW + "\n", "1: field 2"),  # in the header: no column name to give
])
@pytest.mark.parametrize("command", ["check", "explain"])
def test_a_quote_the_line_does_not_close_is_one_error_naming_file_line_and_field(
        tmp_path: Path, text: str, where: str, command: str) -> None:
    """Before, the rest of the line was read into the field (a row passed, or its continuation line was "expected 2
    columns (word,legal), got 1"); now one error line, exit 2, nothing on stdout."""
    p = tmp_path / "q.csv"
    p.write_bytes(text.encode())
    r = _run("check", str(p)) if command == "check" else _run("explain", "--row", f"{p}:2")
    assert (r.exit_code, r.stdout) == (2, ""), r.output
    assert r.stderr == f"ptonum {command}: error: {p}:{where} {_QUOTE}\n"


def test_explain_names_the_file_line_of_an_open_quote_past_the_lines_it_skips(tmp_path: Path) -> None:
    """explain --row reads the header and that line only (the lines between counted): the error names the
    file's line, not the line's place in the text read."""
    p = tmp_path / "late.csv"
    p.write_text("word,legal,comment\n" + (ROW + ",x\n") * 5000 + ROW + ',"c\nd"\n')
    r = _run("explain", "--row", f"{p}:5002")
    assert (r.exit_code, r.stdout) == (2, ""), r.output
    assert r.stderr == f"ptonum explain: error: {p}:5002: field 3 (comment) {_QUOTE}\n"
    r = _run("explain", "--row", f"{p}:5001")  # the lines before it are read as before
    assert r.exit_code == 0 and r.stdout.startswith(f"{p}:5001 (comment: x)\n"), r.output


def test_text_after_a_closing_quote_is_still_read_as_before(tmp_path: Path) -> None:
    """Only a quote left open is refused: ``"note" more`` stays the comment ``note more`` (and a quote after that
    text is a character of it, as :mod:`csv` reads it)."""
    p = tmp_path / "after.csv"
    p.write_text('word,legal,comment\n' + ROW + ',"note" more\n' + ROW + ',"note" m"ore\n')
    parsed = parse_file(p)
    assert parsed.bad == [] and parsed.extras == {2: {"comment": "note more"}, 3: {"comment": 'note m"ore'}}


# -- CR-only line ends ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("op", ["relu_param_legal", "postprocess_element"])
def test_cr_only_line_ends_read_as_the_lf_file(tmp_path: Path, op: str) -> None:
    """A shipped vector file with its line ends made CR alone (classic Mac OS text) reads as the LF file: the
    same rows, line numbers and results (before, its whole text was one header line matching no schema); the CR LF
    file too."""
    lines = _lines(op, 3000)
    lf = tmp_path / f"{op}.lf.csv"
    lf.write_bytes(("\n".join(lines) + "\n").encode())
    plain = parse_file(lf)
    assert plain.bad == [] and plain.total == 3000
    for end in ("\r", "\r\n"):
        p = tmp_path / f"{op}.{len(end)}.csv"
        p.write_bytes((end.join(lines) + end).encode())
        got = parse_file(p)
        assert got.schema is plain.schema and got.bad == [] and got.total == plain.total
        assert (got.lines == plain.lines).all()
        for name in plain.rows:
            assert (got.rows[name] == plain.rows[name]).all(), name
        (rep,) = check_file(str(p))
        assert (rep.rows, rep.passed, rep.failed) == (3000, 3000, 0)
        (rep,) = check_file(str(p), limit=10)
        assert (rep.rows, rep.passed, rep.failed) == (3000, 10, 0)
        r = _run("explain", "--row", f"{p}:1500")
        want = _run("explain", "--row", f"{lf}:1500")
        assert (r.exit_code, want.exit_code) == (0, 0), r.output
        assert r.stdout == want.stdout.replace(str(lf), str(p))
        r = _run("check", str(p))
        assert r.exit_code == 0 and "PASS: 3000 row(s) checked" in r.stdout, r.output


def test_cr_only_mismatch_names_its_line(tmp_path: Path) -> None:
    lines = _lines("relu_param_legal", 20)
    word, legal = lines[9].split(",")
    lines[9] = f"{word},{1 - int(legal)}"  # file line 10
    p = tmp_path / "cr.csv"
    p.write_bytes(("\r".join(lines) + "\r").encode())
    (rep,) = check_file(str(p))
    assert rep.mismatched == 1 and [f.line for f in rep.failures] == [10]


@pytest.mark.parametrize("comment", [False, True])
def test_a_lone_cr_in_lf_text_is_a_malformed_row_not_lost_in_a_comment(tmp_path: Path, comment: bool) -> None:
    """Mixed line ends: CR LF lines, then rows ended by a lone CR.  With a trailing comment column the rows that ran
    together vanished into one row's comment (the file's 19 rows checked as 3, all passing); the line holding a
    lone CR is now one malformed row naming the CR, with or without a comment column."""
    lines = _lines("relu_param_legal", 20)  # header + 19 rows
    if comment:
        lines = [lines[0] + ",comment"] + [ln + ",note" for ln in lines[1:]]
    text = "\r\n".join(lines[:3]) + "\r\n" + "\r".join(lines[3:]) + "\r\n"  # lines 1-3 CR LF, then lone CRs
    p = tmp_path / "mixed.csv"
    p.write_bytes(text.encode())
    (rep,) = check_file(str(p))
    assert (rep.rows, rep.checked, rep.malformed) == (3, 2, 1)
    (bad,) = [f for f in rep.failures if f.kind == "malformed"]
    assert bad.line == 4 and bad.message.startswith("holds a CR that ends no line"), bad


# -- a header line far too long ------------------------------------------------------------------------------

def _long_header(p: Path, n: int, gz: bool = False) -> None:
    data = b"word,legal," + b"x" * n + b"\n" + ROW.encode() + b"\n"
    p.write_bytes(gzip.compress(data) if gz else data)


def _long_text(p: Path, shown: str = "word,legal,xxxxxxxxxxxxxxxxxxxxxxxxxxxxx") -> str:
    return (f"{p}:1: header line longer than {HEADER_MAX_BYTES} bytes (it begins '{shown}...'): not a vector "
            "file's header, which names a schema's columns (such as word,legal) on one line")


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("args", [("check",), ("check", "--limit", "1"), ("explain", "--row")])
def test_a_header_line_too_long_is_refused_by_its_first_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              gz: bool, args: tuple[str, ...]) -> None:
    """A first line of 8 MB: before, every schema's header was compared with it (minutes for 30 MB) and the error
    repeated it; now it is refused after HEADER_MAX_BYTES of it, the file not read whole (nor decompressed), and
    the message shows its first 40 characters."""
    p = tmp_path / ("long.csv.gz" if gz else "long.csv")
    _long_header(p, 8 << 20, gz)
    taken = []
    chunks = schema_mod._text_chunks

    def counted(*a: Any) -> Generator[bytes, None, None]:
        for piece in chunks(*a):
            taken.append(len(piece))
            yield piece

    monkeypatch.setattr(schema_mod, "_text_chunks", counted)
    monkeypatch.setattr(Path, "read_bytes", lambda self: pytest.fail("the file was read whole"))
    r = _run(*args, f"{p}:2" if args[0] == "explain" else str(p))
    assert (r.exit_code, r.stdout) == (2, ""), r.output
    assert r.stderr == f"ptonum {args[0]}: error: {_long_text(p)}\n"
    assert sum(taken) <= 2 << 20  # the text read as a stream: a chunk or two, not the 8 MB line


def test_a_header_line_too_long_from_a_pipe() -> None:
    """Standard input cannot be looked at before it is read: it is read, and the line still neither compared with
    the schemas nor repeated; its first characters are shown escaped."""
    import os
    import subprocess
    import sys

    data = b"\n\n" + b"\x1b[31m,\xff" * (1 << 20) + b"\n"
    r = subprocess.run([sys.executable, "-m", "ptonum", "check", "-"], input=data, capture_output=True,
                       env={**os.environ, "PTONUM_DISABLE_NUMBA": "1"}, timeout=120)
    assert (r.returncode, r.stdout) == (2, b""), r.stderr
    shown = "\\x1b[31m,\\xff" * 5 + "\\x1b[31m"
    assert r.stderr.decode() == "ptonum check: error: " + _long_text(Path("-"), shown).replace("-:1:", "-:3:") + "\n"


def test_a_header_line_just_short_enough_is_compared_and_its_names_cut(tmp_path: Path) -> None:
    """A header under HEADER_MAX_BYTES is compared as before, the names not in the schema cut to 40 characters
    and 8 of them listed (before, every one in full)."""
    p = tmp_path / "wide.csv"
    p.write_text("word,legal," + "y" * 3000 + "," + ",".join(f"c{i}" for i in range(100)) + "\n" + ROW + "\n")
    r = _run("check", str(p))
    assert (r.exit_code, r.stdout) == (2, ""), r.output
    assert ("(word,legal): not in the schema " + "y" * 40 + "...,c0,c1,c2,c3,c4,c5,c6 and 93 more (only a source "
            "column") in r.stderr
    assert len(r.stderr) < 700


def test_parse_text_refuses_a_long_header_without_comparing_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(schema_mod, "closest_schema", lambda cols: pytest.fail("compared"))
    with pytest.raises(schema_mod.UsageError) as exc:
        parse_text(b"\r\r" + b"a" * (HEADER_MAX_BYTES + 1), "x.csv")
    assert str(exc.value) == _long_text(Path("x.csv"), "a" * 40).replace("x.csv:1:", "x.csv:3:")
    monkeypatch.undo()  # a header of HEADER_MAX_BYTES is read (and matches no schema)
    with pytest.raises(schema_mod.UsageError, match="matches no vector schema"):
        parse_text(b"a" * HEADER_MAX_BYTES + b"\n", "x.csv")


# -- UTF-8 text ----------------------------------------------------------------------------------------------

def test_utf8_source_and_comment_show_as_themselves(tmp_path: Path) -> None:
    """Before, each byte of a non-ASCII character showed as U+FFFD ("ASL-caf\ufffd\ufffd")."""
    p = tmp_path / "u8.csv"
    p.write_bytes("source,word,legal,comment\nASL-café,0x0000000000000000,0,\"naïve — 日本, ok\"\n".encode())
    r = _run("check", str(p))
    assert r.exit_code == 1, r.output
    assert "\n      source: ASL-café, comment: naïve — 日本, ok\n" in r.stdout
    r = _run("explain", "--row", f"{p}:2")  # (exit 1: the row's legal is wrong)
    assert r.exit_code == 1 and r.stdout.startswith(f"{p}:2 (source: ASL-café, comment: naïve — 日本, ok)\n"), r.output


def test_text_an_ascii_terminal_cannot_hold_is_escaped_not_an_internal_error(tmp_path: Path) -> None:
    """Before, check under PYTHONIOENCODING=ascii ended with "internal error: UnicodeEncodeError" (exit 2) at the
    first failing row with non-ASCII source/comment text; explain printed it."""
    import os
    import subprocess
    import sys

    p = tmp_path / "u8.csv"
    p.write_bytes("source,word,legal,comment\nASL-café,0x0000000000000000,0,naïve \u2014\n".encode())
    ascii_env = dict(os.environ, PYTHONIOENCODING="ascii", PTONUM_DISABLE_NUMBA="1")
    c_env = {k: v for k, v in ascii_env.items() if k not in ("PYTHONIOENCODING", "LANG", "LC_CTYPE")}
    c_env.update(LC_ALL="C", PYTHONUTF8="0")  # the C locale: ASCII with surrogateescape (also crashed)
    for env, cmd in ((ascii_env, ["check", str(p)]), (ascii_env, ["explain", "--row", f"{p}:2"]),
                     (c_env, ["check", str(p)])):
        r = subprocess.run([sys.executable, "-m", "ptonum", *cmd], capture_output=True, env=env)
        assert r.returncode == 1, (cmd, r.stderr)  # the row's legal is wrong: a mismatch, not an error
        assert b"internal error" not in r.stderr and r.stderr == b"", (cmd, r.stderr)
        if cmd[0] == "check":  # (explain writes through click, which encodes the text as UTF-8 bytes itself)
            assert b"source: ASL-caf\\xe9, comment: na\\xefve \\u2014" in r.stdout, r.stdout
        else:
            assert "(source: ASL-café, comment: naïve \u2014)".encode() in r.stdout, r.stdout


@pytest.mark.parametrize("name, said", [
    ("h.csv", "matches no vector schema; the closest is relu_param_legal (word,legal)"),
    ("relu_param_legal.csv", "does not match the relu_param_legal schema (word,legal)"),  # the schema by its name
])
@pytest.mark.parametrize("command", ["check", "explain"])
def test_a_header_byte_that_is_not_utf8_is_escaped_once(tmp_path: Path, name: str, said: str, command: str) -> None:
    """The header was shown by repr of its text, in which the byte was already the escape \\xff: 'word\\\\xff,legal'
    (escaped twice), while the column list of the same line said word\\xff."""
    p = tmp_path / name
    p.write_bytes(b"word\xff,legal\n" + ROW.encode() + b"\n")
    r = _run("check", str(p)) if command == "check" else _run("explain", "--row", f"{p}:2")
    assert (r.exit_code, r.stdout) == (2, ""), r.output
    assert r.stderr.startswith(f"ptonum {command}: error: {p}:1: header 'word\\xff,legal' {said}: missing word; "
                               "not in the schema word\\xff (only a source column"), r.stderr


def test_unicode_line_separators_in_fields_and_header_are_shown_as_escapes(tmp_path: Path) -> None:
    """U+2028, U+2029 (line and paragraph separators) and NEL U+0085 end a line in some terminals and editors, and
    str.strip/str.split take them for blanks: a source or comment field lost them at its ends ('source: s' for
    '<U+2028>s<U+2029>'), and an error line turned a header column's into a space ('not in the schema x y').
    Each is shown as its escape, as a control character is."""
    p = tmp_path / "sep.csv"
    p.write_text("source,word,legal,comment\n\u2028s\u2029," + ROW[:-1] + "0,c\u2028d\u0085\n", encoding="utf-8")
    shown = "source: \\u2028s\\u2029, comment: c\\u2028d\\x85"
    r = _run("check", str(p))
    assert r.exit_code == 1 and f"\n      {shown}\n" in r.stdout, r.output
    r = _run("explain", "--row", f"{p}:2")
    assert r.exit_code == 1 and r.stdout.startswith(f"{p}:2 ({shown})\n"), r.output
    h = tmp_path / "seph.csv"
    h.write_text("word,legal,x\u2028y\n" + ROW + ",2\n", encoding="utf-8")
    r = _run("check", str(h))
    assert (r.exit_code, r.stdout) == (2, ""), r.output
    assert r.stderr.startswith(f"ptonum check: error: {h}:1: header 'word,legal,x\\u2028y' matches no vector "
                               "schema; the closest is relu_param_legal (word,legal): not in the schema x\\u2028y "
                               "(only"), r.stderr
    for out in (r.output, _run("check", str(p)).output, _run("explain", "--row", f"{p}:2").output):
        assert not any(c in out for c in "\u2028\u2029\u0085"), out


def test_the_output_error_handler_writes_a_file_name_byte_back_and_escapes_other_text() -> None:
    """The error handler of standard output and error (a C locale, PYTHONIOENCODING=ascii): a byte of a file name
    that is not text (U+DCFF under PEP 383) is written as that byte, as ``surrogateescape`` writes it; a character
    the encoding cannot hold as its escape."""
    import ptonum.cli

    ptonum.cli._text_that_always_encodes()  # registers the handler (the test's captured streams are left alone)
    assert "a\udcff\u00e9\u2014.csv".encode("ascii", "ptonum.escape") == b"a\xff\\xe9\\u2014.csv"


def test_bytes_that_are_not_utf8_show_escaped(tmp_path: Path) -> None:
    p = tmp_path / "bad8.csv"
    p.write_bytes(b"source,word,legal,comment\nab\xff,0x0000000000000000,0,bad \xc3 byte\x1b[0m\n")
    r = _run("explain", "--row", f"{p}:2")
    assert r.exit_code == 1 and r.stdout.startswith(  # (1: the row's legal is wrong)
        f"{p}:2 (source: ab\\xff, comment: bad \\xc3 byte\\x1b[0m)\n"), r.output


@pytest.mark.parametrize("field, shown, what", [
    ("0x00000000000é0000", "0x00000000000é0000", "the character U+00E9 'é'"),
    ("0x１0", "0x１0", "the character U+FF11 '１'"),  # int() would read a fullwidth digit
    ("0x10\u00a0", "0x10\\xa0", "the character U+00A0"),  # int() would strip a no-break space
    ("0x1\udcff", "0x1\\xff", "the byte 0xff, which is not UTF-8 text"),
])
def test_a_schema_column_holding_other_than_ascii_is_a_malformed_row_naming_it(
        tmp_path: Path, field: str, shown: str, what: str) -> None:
    p = tmp_path / "core.csv"
    p.write_bytes(f"word,legal\n{field},1\n{ROW}\n".encode("utf-8", "surrogateescape"))
    parsed = parse_file(p)
    assert parsed.bad == [(2, f"word: '{shown}' holds {what} (the schema's columns are ASCII text)")]
    r = _run("explain", "--row", f"{p}:2")
    assert (r.exit_code, r.stdout) == (2, ""), r.output
    assert r.stderr == (f"ptonum explain: error: {p}:2: malformed row: word: '{shown}' holds {what} (the schema's "
                        "columns are ASCII text)\n")


def test_a_name_column_does_not_read_a_letter_whose_upper_case_is_ascii(tmp_path: Path) -> None:
    """'ſ32'.upper() is 'S32': the row is malformed, not an S32 row."""
    lines = _lines("postprocess_element", 2)
    cols = lines[1].split(",")
    cols[2] = "ſ32"
    p = tmp_path / "pp.csv"
    p.write_bytes(("\n".join([lines[0], ",".join(cols), lines[2]]) + "\n").encode())
    parsed = parse_file(p)
    assert parsed.bad == [(2, "acc_type: 'ſ32' holds the character U+017F 'ſ' (the schema's columns are ASCII text)")]
    assert parsed.total == 2
