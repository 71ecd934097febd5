"""ptonum explain: traces end in the pto-spec ASL tests' expected results."""

from __future__ import annotations

from click.testing import CliRunner

from conftest import vectors_dir
from ptonum.cli import main
from ptonum.conformance.explain import explain_postprocess, explain_reduction, explain_tcvt

RUN = CliRunner(env={"COLUMNS": "250"})


def test_pipeline_002_lrelu_fp16() -> None:
    # tests/asl/arch/profile/matrix-postprocess/arch-exec-matrix-postprocess-pipeline-002.asl:
    # mode 32, LReLU alpha = FP32ToFP19(0.75), input 0xBF000BB0 -> FP16 0xB601, flags NX.
    ex = explain_postprocess(0xBF000BB0, pre_quant_mode=32, relu_mode=2, acc_type="FP32",
                             quant_param=0x1FC00 << 13, relu_param=0x1FA00)
    assert (ex.bits, ex.flags) == (0xB601, 0x10)
    text = ex.text()
    assert text.splitlines()[-2] == "destination FP16: 0xb601   flags: 0x10 (NX)"
    assert "MatrixSelectedMultiplier" in text and "NX: raised by step" in text
    r = RUN.invoke(main, ["explain", "postprocess", "--mode", "32", "--relu", "2", "--acc-type", "FP32",
                          "--acc", "0xBF000BB0", "--relu-param", "0x1FA00"])
    assert r.exit_code == 0, r.output
    assert "destination FP16: 0xb601   flags: 0x10 (NX)" in r.output


def test_quant_002_req8_wrap() -> None:
    # tests/asl/block/attributes/B.FPATR/block-exec-b-fpatr-quant-002.asl: REQ8 S32 70, scale 2.0, offset 0:
    # Sat=0 -> 0x8C with OF|NX, Sat=1 -> 0x7F with OF|NX.
    ex = explain_postprocess(70, pre_quant_mode=3, relu_mode=0, acc_type="S32", quant_param=0x20000 << 13)
    assert (ex.bits, ex.flags) == (0x8C, 0x14)
    ex = explain_postprocess(70, pre_quant_mode=3, relu_mode=0, acc_type="S32", quant_param=0x20000 << 13, sat=True)
    assert (ex.bits, ex.flags) == (0x7F, 0x14)
    assert "destination S8: 0x7f" in ex.text() and "OF: raised by step" in ex.text()


def test_reduction_int_min_abs() -> None:
    # tests/asl/arch/profile/matrix-postprocess/arch-exec-matrix-postprocess-001.asl: MaxAbs INT_MIN vs INT_MIN -> 0x7FFFFFFF, OF.
    ex = explain_reduction(0x80000000, 0x80000000, acc_type="S32", max_abs=True)
    assert (ex.bits, ex.flags) == (0x7FFFFFFF, 0x04)
    r = RUN.invoke(main, ["explain", "reduction", "--acc-type", "S32", "--max-abs", "--current", "0x80000000",
                          "--candidate", "0x80000000"])
    assert r.exit_code == 0 and "S32 result: 0x7fffffff   flags: 0x04 (OF)" in r.output
    assert "MatrixReductionAbsoluteWithFlags" in r.output


def test_tcvt_bf16_rounding() -> None:
    # tests/asl/tile/.../TCVT tile-bound-tcvt-e8m0-rounding-003.asl: BF16 1.5 -> 128 (RNE), 127 (RTM); NX.
    assert (explain_tcvt(0x3FC0, src_type="BF16", rmode="RNE").bits, explain_tcvt(0x3FC0, src_type="BF16", rmode="RTM").bits) == (128, 127)
    r = RUN.invoke(main, ["explain", "tcvt", "--src-type", "BF16", "--bits", "0x3fc0", "--rmode", "RTM"])
    assert r.exit_code == 0 and "E8M0: 0x7f   flags: 0x10 (NX)" in r.output
    assert "ReferenceE8M0RoundExponent" in r.output


def test_explain_row_matches_vector() -> None:
    path = vectors_dir() / "postprocess_element.csv.gz"
    r = RUN.invoke(main, ["explain", "--row", f"{path}:40000"])
    assert r.exit_code == 0, r.output
    lines = r.output.strip().splitlines()
    exp = lines[-2]
    assert exp.startswith("expected (vector): expected_bits=0x8000")
    assert lines[-1].startswith("MATCH")
    assert any(ln.startswith("destination FP16: 0x8000   flags: 0x18") for ln in lines)
    r = RUN.invoke(main, ["explain", "--row", f"{vectors_dir() / 'decomposition.csv.gz'}:4"])
    assert r.exit_code == 0 and "exponent=-21" in r.output


def test_explain_bad_row_is_usage_error() -> None:
    r = RUN.invoke(main, ["explain", "--row", f"{vectors_dir() / 'relu_param_legal.csv.gz'}:1"])
    assert r.exit_code == 2 and "no data row" in r.output and "Traceback" not in r.output


# ---------------------------------------------------------------------------
# New-user defects (regressions)


def test_explain_row_mismatch_exits_1(tmp_path) -> None:
    import gzip

    with gzip.open(vectors_dir() / "tcvt_e8m0.csv.gz", "rt") as fh:
        lines = [next(fh).rstrip("\n") for _ in range(6)]
    cols = lines[3].split(",")  # file line 4
    cols[4] = f"0x{int(cols[4], 16) ^ 1:02x}"
    lines[3] = ",".join(cols)
    p = tmp_path / "t.csv"
    p.write_text("\n".join(lines) + "\n")
    r = RUN.invoke(main, ["explain", "--row", f"{p}:4"])
    assert r.exit_code == 1, r.output
    assert r.output.strip().splitlines()[-1].startswith("MISMATCH") and "expected_bits" in r.output
    r = RUN.invoke(main, ["explain", "--row", f"{p}:5"])
    assert r.exit_code == 0 and r.output.strip().splitlines()[-1].startswith("MATCH")


_REQ8 = ["explain", "postprocess", "--mode", "REQ8", "--acc-type", "S32", "--acc", "70"]


def test_explain_notes_configurations_the_tile_operation_rejects() -> None:
    cases = [
        (_REQ8 + ["--quant-param", "0xBF800000"], "negative"),  # FP19ScaleLegal
        (_REQ8 + ["--quant-param", "0x3F800001"], "[12:0]"),  # BundleFPATRQuantParameterWordLegal
        (_REQ8 + ["--relu", "LRELU", "--quant-param", hex(0x1FC00 << 13), "--relu-param", "0x5fc00"], "activation"),
        (["explain", "postprocess", "--mode", "F322F16", "--acc-type", "FP32", "--acc", "0x3f800000", "--rmode", "RTZ"],
         "RMode=NONE"),  # BundleFPATRDATRFieldsLegal: fixed-rounding mode
        (["explain", "postprocess", "--mode", "13", "--acc-type", "S32", "--acc", "0x10", "--sat"], "Sat=0"),
    ]
    for args, needle in cases:
        r = RUN.invoke(main, args)
        assert r.exit_code == 0, (args, r.output)
        first = r.output.splitlines()[0]
        assert first.startswith("note: the B.FPATR tile operation rejects this configuration:"), (args, first)
        assert needle in first, (args, first)
        assert "postprocess_element:" in r.output
    r = RUN.invoke(main, _REQ8 + ["--quant-param", hex(0x20000 << 13)])
    assert r.exit_code == 0 and "note:" not in r.output


def test_explain_rmode_codes() -> None:
    # tile-bound-tcvt-e8m0-rounding-003.asl: BF16 1.5 -> 127 under RTM (B.DATR RMode code 3, alias RDN)
    for given in ("3", "RDN"):
        r = RUN.invoke(main, ["explain", "tcvt", "--src-type", "BF16", "--bits", "0x3fc0", "--rmode", given])
        assert r.exit_code == 0, r.output
        assert "E8M0: 0x7f   flags: 0x10 (NX)" in r.output and "rmode=RTM" in r.output
    # block-exec-b-fpatr-quant-002.asl: REQ8 70 x 2.0 -> 0x8C (exact, so every RMode gives it)
    r = RUN.invoke(main, _REQ8 + ["--quant-param", hex(0x20000 << 13), "--rmode", "2"])
    assert r.exit_code == 0 and "destination S8: 0x8c" in r.output and "rmode=RTZ" in r.output


def test_explain_errors_are_one_line_on_stderr() -> None:
    # named by the subcommand, as click's option errors are (was: `ptonum explain: error:` for these)
    for args, sub in ((["postprocess", "--mode", "99", "--acc-type", "S32", "--acc", "1"], "postprocess"),
                      (["tcvt", "--bits", "0x3f80", "--src-type", "BF16", "--rmode", "RXX"], "tcvt"),
                      (["reduction", "--acc-type", "S32", "--current", "1", "--candidate", "x"], "reduction")):
        r = RUN.invoke(main, ["explain", *args])
        assert r.exit_code == 2 and r.stdout == "" and r.stderr.startswith(f"ptonum explain {sub}: error: --")
        assert r.stderr.count("\n") == 1


def test_explain_row_of_a_tile_file_or_an_npy_says_what_the_file_is(tmp_path) -> None:
    """A tile case is a whole tile, not one element: --row refuses a tile file by name (was: its JSON shown
    as a CSV header "matching no schema"); an .npy likewise."""
    import numpy as np

    tiles = vectors_dir() / "tiles.json.gz"
    r = RUN.invoke(main, ["explain", "--row", f"{tiles}:2"])
    assert (r.exit_code, r.stdout) == (2, ""), r.output
    assert r.stderr == (f"ptonum explain: error: {tiles} is a tile file (a JSON list of tile cases); --row takes a "
                        f"line of a CSV vector file (`ptonum explain --tile {tiles}:INDEX` explains one of its cases, "
                        f"`ptonum check {tiles}` runs them)\n")
    np.save(tmp_path / "a.npy", np.arange(4, dtype=np.int32))
    r = RUN.invoke(main, ["explain", "--row", f"{tmp_path / 'a.npy'}:2"])
    assert r.stderr == (f"ptonum explain: error: {tmp_path / 'a.npy'} is an .npy array; --row takes a line of a CSV "
                        "vector file\n")


def test_explain_postprocess_takes_modes_by_name_as_the_command_line_does() -> None:
    """explain_postprocess(pre_quant_mode="REQ8") raised a plain ValueError (int("REQ8") for the title):
    every PreQuantMode name of the closed table (and a ReluMode name) now gives the trace of its code, as
    ``ptonum explain postprocess --mode NAME`` does; an unknown name or code is a typed error naming the
    argument and the value."""
    import pytest

    from ptonum.cli.explain_cmd import _default_qp
    from ptonum.errors import IllegalEncodingError, UsageError
    from ptonum.fpatr import MODE_TABLE, PreQuantMode

    # quant-002 above, by name: REQ8 S32 70, scale 2.0, Sat=1 -> 0x7F with OF|NX
    ex = explain_postprocess(70, pre_quant_mode="REQ8", relu_mode="NONE", acc_type="S32",
                             quant_param=0x20000 << 13, rmode="NONE", sat=True)
    assert (ex.bits, ex.flags) == (0x7F, 0x14)
    assert ex.title.startswith("postprocess_element: PreQuantMode=3 ReluMode=0 ") and "destination S8: 0x7f" in ex.text()
    by_code = explain_postprocess(70, pre_quant_mode=3, relu_mode=0, acc_type="S32", quant_param=0x20000 << 13,
                                  rmode="NONE", sat=True)
    assert ex.text() == by_code.text()
    r = RUN.invoke(main, ["explain", "postprocess", "--mode", "REQ8", "--relu", "NONE", "--acc-type", "S32",
                          "--acc", "70", "--quant-param", hex(0x20000 << 13), "--sat"])
    assert r.exit_code == 0, r.output
    assert ex.text() in r.output
    for code, info in MODE_TABLE.items():
        name = PreQuantMode(code).name
        kw = dict(relu_mode=1, acc_type=info.accumulator_types[0].name, quant_param=_default_qp(code))
        want = explain_postprocess(0x40, pre_quant_mode=code, **kw).text()
        for spelling in (name, name.lower(), f" {name} ", hex(code), str(code)):
            assert explain_postprocess(0x40, pre_quant_mode=spelling, **kw).text() == want, spelling
        assert explain_postprocess(0x40, pre_quant_mode=code, **dict(kw, relu_mode="RELU")).text() == want
    with pytest.raises(UsageError, match=r"^pre_quant_mode = 'REQ9': unknown PreQuantMode"):
        explain_postprocess(70, pre_quant_mode="REQ9", relu_mode=0, acc_type="S32")
    with pytest.raises(UsageError, match=r"^pre_quant_mode = 64: PreQuantMode is a six-bit field"):
        explain_postprocess(70, pre_quant_mode=64, relu_mode=0, acc_type="S32")
    with pytest.raises(IllegalEncodingError, match=r"^pre_quant_mode = 6: reserved PreQuantMode code"):
        explain_postprocess(70, pre_quant_mode="6", relu_mode=0, acc_type="S32")
    with pytest.raises(UsageError, match=r"^relu_mode = 'RELU6': unknown ReluMode"):
        explain_postprocess(70, pre_quant_mode="REQ8", relu_mode="RELU6", acc_type="S32")


def test_explain_postprocess_default_rmode_is_the_command_lines() -> None:
    """explain_postprocess defaulted rmode to "RNE" while ``ptonum explain postprocess`` (and
    postprocess_element/postprocess_element_trace) default it to "NONE": the same call gave the title
    ``rmode=RNE`` through the function and ``rmode=NONE`` through the command line.  Both now default to
    NONE (B.DATR RMode code 0), the element API's documented default."""
    import inspect

    from ptonum.fpatr import postprocess_element_trace

    assert inspect.signature(postprocess_element_trace).parameters["rmode"].default == "NONE"
    # block-exec-b-fpatr-quant-002.asl: REQ8 S32 70, scale 2.0, offset 0, Sat=0 -> 0x8C with OF|NX
    ex = explain_postprocess(70, pre_quant_mode=3, relu_mode=0, acc_type="S32", quant_param=0x20000 << 13)
    assert (ex.bits, ex.flags) == (0x8C, 0x14)
    title = ex.text().splitlines()[0]
    assert title.endswith(" rmode=NONE sat=0"), title
    r = RUN.invoke(main, ["explain", "postprocess", "--mode", "3", "--relu", "0", "--acc-type", "S32",
                          "--acc", "70", "--quant-param", hex(0x20000 << 13)])
    assert r.exit_code == 0, r.output
    assert r.output.splitlines()[0] == title
    assert r.output.rstrip("\n") == ex.text().rstrip("\n")


def _vector_lines(op: str, n: int) -> "list[str]":
    """The header and first ``n`` data rows of a shipped vector file."""
    import gzip

    with gzip.open(vectors_dir() / f"{op}.csv.gz", "rt") as fh:
        return [next(fh).rstrip("\r\n") for _ in range(n + 1)]


def _explain_row(path, line: int):
    r = RUN.invoke(main, ["explain", "--row", f"{path}:{line}"])
    return r.exit_code, r.output.replace(str(path), "FILE")


def test_explain_row_reads_the_file_no_further_than_its_line(tmp_path) -> None:
    """`explain --row FILE:LINE` reads the file only through that line: rows after it that are malformed, or a gzip
    file cut short after it, change nothing -- the output is the intact file's (it used to parse the whole file,
    seconds and a gigabyte for the shipped tcvt_e8m0 vectors, and refuse a file whose tail is damaged)."""
    import gzip

    lines = _vector_lines("decomposition", 20000)
    text = "\n".join(lines) + "\n"
    intact = tmp_path / "intact.csv"
    intact.write_text(text)
    bad_tail = tmp_path / "bad_tail.csv"  # every row after line 900 malformed
    bad_tail.write_text("\n".join(lines[:900] + [ln.replace(",", ";") for ln in lines[900:]]) + "\n")
    gz = gzip.compress(text.encode(), mtime=0)
    cut = tmp_path / "cut.csv.gz"  # the gzip data cut in the middle: the file is truncated
    cut.write_bytes(gz[: len(gz) // 2])
    tail_gz = tmp_path / "bad_tail.csv.gz"
    tail_gz.write_bytes(gzip.compress(bad_tail.read_bytes(), mtime=0))
    # the damaged files as they are today: check refuses the truncated one and counts the malformed rows
    c = RUN.invoke(main, ["check", str(cut)])
    assert c.exit_code == 2 and "truncated" in c.output, c.output
    for line in (2, 4, 450, 900):
        want = _explain_row(intact, line)
        assert want[0] == 0 and "MATCH: the model" in want[1], want
        for path in (bad_tail, tail_gz, cut):
            assert _explain_row(path, line) == want, (path, line)
    # a malformed line after the damage is still refused, naming it
    code, out = _explain_row(bad_tail, 901)
    assert code == 2 and "FILE:901: malformed row: expected 6 columns" in out, out


def test_explain_row_past_the_end_or_off_a_data_row_counts_the_whole_file(tmp_path) -> None:
    """The lines that hold no data row (the header, a blank line, a line past the end) still get the message that
    counts the file's data rows, as when the file was read whole; the line after a blank one is explained."""
    import gzip

    lines = _vector_lines("decomposition", 20000)
    blank = lines[:5000] + ["   "] + lines[5000:]  # line 5001 blank
    plain = tmp_path / "b.csv"
    plain.write_text("\n".join(blank) + "\n")
    gz = tmp_path / "b.csv.gz"
    gz.write_bytes(gzip.compress(plain.read_bytes(), mtime=0))
    for path in (plain, gz):
        for line in (0, 1, 5001, 20003, 30000):
            code, out = _explain_row(path, line)
            assert code == 2 and out.strip().endswith(
                f"FILE:{line}: no data row at this line (file has 20000 data rows, lines 2..20002)"), out
    intact = tmp_path / "intact.csv"
    intact.write_text("\n".join(lines) + "\n")
    for path in (plain, gz):
        for line in (5002, 20002):  # the intact file's lines 5001 and 20001, one line further on
            code, out = _explain_row(path, line)
            want = _explain_row(intact, line - 1)
            assert code == want[0] == 0 and out.splitlines()[0] == f"FILE:{line}", out
            assert out.splitlines()[1:] == want[1].splitlines()[1:]


def _gz_lines(name: str, n: int) -> list:
    import gzip

    with gzip.open(vectors_dir() / name, "rt") as fh:
        return [next(fh).rstrip("\r\n") for _ in range(n + 1)]


def test_explain_row_shows_control_characters_of_the_path_as_escapes(tmp_path, monkeypatch) -> None:
    """`explain --row 'a<ESC>[31mred.csv:3'` printed the path raw (on a terminal: recoloured; click dropped the ESC
    when piped, so it named 'ared.csv'); its errors folded a newline of the name into a space.  Both show the
    control characters as escapes."""
    monkeypatch.chdir(tmp_path)
    lines = _gz_lines("tcvt_e8m0.csv.gz", 5)
    for name, shown in (("a\x1b[31mred.csv", "a\\x1b[31mred.csv"), ("nl\nx.csv", "nl\\nx.csv")):
        (tmp_path / name).write_text("\n".join(lines) + "\n")
        r = RUN.invoke(main, ["explain", "--row", f"{name}:3"])
        assert r.exit_code == 0, r.output
        assert r.stdout.startswith(f"{shown}:3\ntcvt to E8M0: ")
        r = RUN.invoke(main, ["explain", "--row", f"{name}:99"])
        assert (r.exit_code, r.stdout) == (2, "")
        assert r.stderr == (f"ptonum explain: error: {shown}:99: no data row at this line (file has 5 data rows, "
                            "lines 2..6)\n")


def test_explain_row_of_a_legality_row_says_why_the_word_is_rejected(tmp_path) -> None:
    """A quant_param_legal / relu_param_legal row that expects the word rejected printed only 'legal=0': the
    explain now gives the model's typed error (the rule of BundleFPATR...WordLegal) and whether the vector says
    the same; a damaged row (legal flipped) says the model and the vector disagree, exit 1."""
    q = _gz_lines("quant_param_legal.csv.gz", 3)
    assert q[2] == "24,0x00401fe038800000,0"
    (tmp_path / "q.csv").write_text("\n".join(q) + "\n")
    r = RUN.invoke(main, ["explain", "--row", f"{tmp_path / 'q.csv'}:3"])
    assert r.exit_code == 0, r.output
    assert ("model: the word is rejected, as the vector expects: word = 0x00401fe038800000: bits [63:46] must be "
            "zero (the S9 offset [45:37] is the only field above bit 31) (ADR-0085 D180, "
            "BundleFPATRQuantParameterWordLegal)\nexpected (vector): legal=0\nMATCH: ") in r.stdout
    r = RUN.invoke(main, ["explain", "--row", f"{tmp_path / 'q.csv'}:2"])
    assert "model: the word is accepted (no rule rejects it), as the vector expects\n" in r.stdout
    q[2] = q[2][:-1] + "1"  # the vector now says legal
    (tmp_path / "q.csv").write_text("\n".join(q) + "\n")
    r = RUN.invoke(main, ["explain", "--row", f"{tmp_path / 'q.csv'}:3"])
    assert r.exit_code == 1, r.output
    assert ("model: the word is rejected, but the vector expects it accepted (legal=1): word = 0x00401fe038800000: "
            "bits [63:46] must be zero") in r.stdout
    rl = _gz_lines("relu_param_legal.csv.gz", 7)
    assert rl[7] == "0x8000000000000000,0"
    (tmp_path / "r.csv").write_text("\n".join(rl) + "\n")
    r = RUN.invoke(main, ["explain", "--row", f"{tmp_path / 'r.csv'}:8"])
    assert r.exit_code == 0, r.output
    assert "model: the word is rejected, as the vector expects: word = 0x8000000000000000: " in r.stdout
    assert "(ADR-0085 D180" in r.stdout


def test_explain_row_reads_standard_input_for_dash_as_check_does(tmp_path) -> None:
    """`ptonum explain --row -:4` said '-: cannot read vector file (No such file or directory)' while `ptonum check
    -` reads standard input: explain reads line 4 of standard input, with the trace a file gives."""
    lines = _gz_lines("tcvt_e8m0.csv.gz", 6)
    text = "\n".join(lines) + "\n"
    (tmp_path / "t.csv").write_text(text)
    r = _ptonum(["explain", "--row", "-:4"], text)
    f = RUN.invoke(main, ["explain", "--row", f"{tmp_path / 't.csv'}:4"])
    assert (r.returncode, r.stderr) == (0, ""), r.stderr
    assert r.stdout.startswith("-:4\ntcvt to E8M0: ") and r.stdout[3:] == f.stdout[len(f"{tmp_path / 't.csv'}:4"):]
    r = _ptonum(["explain", "--row", "-:40"], text)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == "ptonum explain: error: -:40: no data row at this line (file has 6 data rows, lines 2..7)\n"


def _ptonum(args: list, stdin: str):
    """``python -m ptonum ARGS`` with ``stdin`` as its standard input (read through /dev/stdin, which a CliRunner
    does not replace)."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "COLUMNS": "250", "PTONUM_DISABLE_NUMBA": "1"}
    return subprocess.run([sys.executable, "-m", "ptonum", *args], input=stdin, capture_output=True, text=True,
                          env=env, timeout=120)


def _tile_items() -> list:
    import gzip
    import json

    with gzip.open(vectors_dir() / "tiles.json.gz", "rt") as fh:
        return json.load(fh)


def test_explain_tile_traces_the_failing_element_of_a_tile_case(tmp_path) -> None:
    """A tile mismatch had no explain command (`explain --row` refuses a tile file): `ptonum explain --tile
    FILE:INDEX` shows the case, the trace of its first differing element of D with the expected value, and the
    whole case's MATCH/MISMATCH (exit 1 on a mismatch); `--element I,J` picks the element."""
    import json

    items = _tile_items()
    d = items[1]["expected"]["d"]
    assert d[0][1] == "0x7e00"
    d[0][1] = "0x7e01"
    path = tmp_path / "t.json"
    path.write_text(json.dumps(items))
    r = RUN.invoke(main, ["explain", "--tile", f"{path}:1"])
    assert r.exit_code == 1, r.output
    out = r.stdout.splitlines()
    assert out[:3] == [f"{path}: item 1 (source: random tile #1)",
                       "tile: 1x33 FP32, PreQuantMode 32, ReluMode 2, rmode NONE, sat 0, group_max_en, max_abs_en, "
                       "GroupN 16",
                       "D[0, 1]: postprocess_element: PreQuantMode=32 ReluMode=2 acc_type=FP32 acc=0xffc00001 "
                       "quant_param=0x000000003c000000 relu_param=0x20c00 rmode=NONE sat=0"]
    assert out[-3:] == ["destination FP16: 0x7e00   flags: 0x00 (-)",
                        "expected (vector): D[0, 1]=0x7e01 FP16, tile flags 0x1d (NV|OF|UF|NX)",
                        "MISMATCH: the model (reference engine) contradicts the case: D: 1 element(s) differ, first "
                        "[0, 1]: expected 0x7e01, got 0x7e00"]
    r = RUN.invoke(main, ["explain", "--tile", f"{path}:1", "--element", "0,2"])
    assert r.exit_code == 1 and "\nD[0, 2]: postprocess_element: " in r.stdout
    shared = vectors_dir() / "tiles.json.gz"
    r = RUN.invoke(main, ["explain", "--tile", f"{shared}:1"])
    assert r.exit_code == 0 and r.stdout.endswith("\nMATCH: the model (reference engine) gives the case's expected "
                                                  "outputs\n")
    assert "\nD[0, 0]: postprocess_element: " in r.stdout
    r = RUN.invoke(main, ["explain", "--tile", f"{shared}:52"])  # never commits: the reason, no element
    assert r.exit_code == 0, r.output
    assert ("model: the tile operation rejects the case: relu_param = 0x000000000005f800: FP19 activation parameter "
            "[18:0] = 0x5f800 is negative normal;") in r.stdout
    assert r.stdout.endswith("expected (vector): rejected before any effect (the ASL never commits this case)\n"
                             "no element trace: the case never commits (--element I,J traces one element anyway)\n"
                             "MATCH: the model (reference engine) rejects the case before any effect, as the ASL "
                             "does\n")
    r = _ptonum(["explain", "--tile", "-:1"], path.read_text())
    assert r.returncode == 1 and r.stdout.startswith("-: item 1 (source: random tile #1)\n"), r.stderr


def test_explain_tile_refusals(tmp_path) -> None:
    shared = vectors_dir() / "tiles.json.gz"
    csv = vectors_dir() / "tcvt_e8m0.csv.gz"
    for args, err in (
        (["--tile", f"{shared}:1", "--element", "1,0"], "--element 1,0: outside the 1x33 tile (rows 0..0, "
                                                         "columns 0..32)"),
        (["--tile", f"{shared}:1", "--element", "x"], "--element = 'x': expected I,J (two non-negative integers: "
                                                      "row, column)"),
        (["--tile", f"{shared}:96"], f"{shared}: item 96: no such item (the file has 96 items, 0..95)"),
        (["--tile", f"{shared}"], f"--tile = '{shared}': expected FILE:INDEX (the item number `ptonum check` "
                                  "reports)"),
        (["--tile", f"{csv}:2"], f"{csv} is not a tile file (a JSON list of tile cases); --tile takes an item of a "
                                 "tile file (a CSV vector file's rows: `ptonum explain --row FILE:LINE`)"),
    ):
        r = RUN.invoke(main, ["explain", *args])
        assert (r.exit_code, r.stdout) == (2, ""), (args, r.output)
        assert r.stderr == f"ptonum explain: error: {err}\n", args
    for args, err in ((["--row", f"{csv}:2", "--tile", f"{shared}:1"], "--row and --tile: give one of them"),
                      (["--row", f"{csv}:2", "--element", "0,0"], "--element goes with --tile FILE:INDEX"),
                      (["--element", "0,0"], "--element goes with --tile FILE:INDEX")):
        r = RUN.invoke(main, ["explain", *args])
        assert r.exit_code == 2 and err in r.stderr and "Traceback" not in r.output, (args, r.output)


def test_check_of_a_tile_mismatch_prints_its_explain_command_and_trace(tmp_path) -> None:
    """A failing tile case printed no explain command (a row prints `ptonum explain --row FILE:LINE` and its
    trace): it prints `ptonum explain --tile FILE:INDEX` and the element trace that command shows."""
    import json

    items = _tile_items()
    items[1]["expected"]["d"][0][1] = "0x7e01"
    path = tmp_path / "t.json"
    path.write_text(json.dumps(items))
    r = RUN.invoke(main, ["check", str(path)])
    assert r.exit_code == 1, r.output
    assert (f"\nptonum explain --tile {path}:1\ntile: 1x33 FP32, PreQuantMode 32, ReluMode 2, rmode NONE, sat 0, "
            "group_max_en, max_abs_en, GroupN 16\nD[0, 1]: postprocess_element: ") in r.stdout
    assert "\nexpected (vector): D[0, 1]=0x7e01 FP16, tile flags 0x1d (NV|OF|UF|NX)\nFAIL: 1 failing" in r.stdout
    assert "ptonum explain --tile" not in RUN.invoke(main, ["check", str(path), "--no-explain"]).stdout


def test_explain_row_shows_the_expected_value_of_a_row_with_a_damaged_dst_type_at_the_modes_width(tmp_path) -> None:
    """A postprocess row whose dst_type is not its mode's destination (S8 in an S16 row of the shipped file, line
    13634) showed its expected 16-bit value 0x0003 as the S8 value 0x03; it is shown at the mode's width (S16,
    0x0003), and the row is still the model's error naming the field (exit 1, as check counts it)."""
    header = ("pre_quant_mode,relu_mode,acc_type,dst_type,acc_bits,quant_param,relu_param,rmode,sat,expected_bits,"
              "expected_flags")
    row = "12,0,S32,S16,0x000001e8,0x0000000600000000,0x00000,RNE,0,0x0003,0x00"
    assert _gz_lines("postprocess_element.csv.gz", 13633)[-1] == row
    p = tmp_path / "pp.csv"
    p.write_text(header + "\n" + row + "\n")
    r = RUN.invoke(main, ["explain", "--row", f"{p}:2"])
    assert r.exit_code == 0 and "\nexpected (vector): expected_bits=0x0003  expected_flags=0x00 (-)\nMATCH: " in r.stdout
    p.write_text(header + "\n" + row.replace(",S16,", ",S8,") + "\n")
    r = RUN.invoke(main, ["explain", "--row", f"{p}:2"])
    assert r.exit_code == 1, r.output
    assert r.stdout.endswith("\ndestination S16: 0x0003   flags: 0x00 (-)\n"
                             "expected (vector): expected_bits=0x0003  expected_flags=0x00 (-)\n"
                             "MISMATCH: the model rejects the row's inputs: dst_type S8 but the model's output type "
                             "is S16\n"), r.stdout
