"""Option-parsing errors (click's UsageError family) are one line on stderr with exit status 2,
like every other ptonum error (README, ``ptonum --help``); a group run without its command is a usage
error too (its help on stderr, exit status 2); ``--help`` and ``--version`` exit 0."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from ptonum.cli import main

# (argv, command named in the error line, a fragment of click's message)
CASES = [
    (["postprocess", "acc.npy", "--mode", "SHIFTS322S16", "--shift", "17"], "postprocess",
     "17 is not in the range 1<=x<=16"),
    (["postprocess", "acc.npy", "--engine", "slow"], "postprocess", "'slow' is not one of"),
    (["postprocess", "acc.npy", "--offset", "1.5"], "postprocess", "'1.5' is not a valid integer"),
    (["postprocess", "--bogus"], "postprocess", "No such option '--bogus'"),
    (["gen", "foo", "--count", "3"], "gen", "Invalid value for 'OP': 'foo' is not one of"),
    (["gen", "postprocess_element", "--count", "0"], "gen", "0 is not in the range x>=1"),
    (["check"], "check", "give vector FILES, or --builtin"),
    # standard input can be read once (a file redirected to it was read, and counted, twice)
    (["check", "-", "x.csv", "-"], "check", "FILES: '-' (standard input) is given 2 times; it can be read once"),
    (["tcvt", "--rmode"], "tcvt", "Option '--rmode' requires an argument"),
    (["explain", "reduction", "--bogus"], "explain reduction", "No such option '--bogus'"),
    (["explain", "nope"], "explain", "No such command 'nope'"),
    # integers are ASCII digits (click's int read '\u0663' as 3 and '1_0' as 10)
    (["postprocess", "acc.npy", "--mode", "SHIFTS322S16", "--shift", "\u0663"], "postprocess",
     "Invalid value for '--shift': '\u0663' is not a valid integer (ASCII digits 0-9, optional sign)."),
    (["postprocess", "acc.npy", "--offset", "1_0"], "postprocess",
     "Invalid value for '--offset': '1_0' is not a valid integer (ASCII digits 0-9, optional sign)."),
    (["check", "x.csv", "--limit", "\u0663"], "check",
     "Invalid value for '--limit': '\u0663' is not a valid integer (ASCII digits 0-9, optional sign)."),
]


@pytest.mark.parametrize("argv,cmd,fragment", CASES, ids=[" ".join(c[0]) for c in CASES])
def test_usage_error_is_one_line_on_stderr(argv, cmd, fragment):
    r = CliRunner().invoke(main, argv)
    assert r.exit_code == 2, r.output
    assert r.stdout == ""
    assert r.stderr.count("\n") == 1, r.stderr
    line = r.stderr.rstrip("\n")
    assert line.startswith(f"ptonum {cmd}: error: "), line
    assert fragment in line, line
    assert line.endswith(f"(see 'ptonum {cmd} --help')"), line
    assert "╭" not in r.stderr and "Usage:" not in r.stderr


def test_unknown_command_names_the_top_level():
    r = CliRunner().invoke(main, ["nosuchcmd"])
    assert r.exit_code == 2
    assert r.stderr == "ptonum: error: No such command 'nosuchcmd'. (see 'ptonum --help')\n"


def test_misspelt_command_suggests_the_command_in_a_fresh_process():
    """Commands are imported only when run or listed (start-up time); a misspelt one is still matched
    against every command, loaded or not (a fresh process: nothing loaded yet)."""
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-c", "from ptonum.cli import main; main()", "postproces", "x.npy"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == ("ptonum: error: No such command 'postproces'. Did you mean 'postprocess'? "
                        "(see 'ptonum --help')\n")


def test_negative_decode_code_is_a_bad_code_not_an_option():
    r = CliRunner().invoke(main, ["decode", "E8M0", "-1"])
    assert r.exit_code == 2 and r.stderr.count("\n") == 1
    assert r.stderr.startswith("ptonum decode: error: CODE '-1': not a non-negative integer")


@pytest.mark.parametrize("argv", [[], ["explain"], ["sweep"]], ids=["ptonum", "ptonum explain", "ptonum sweep"])
def test_bare_group_is_a_usage_error_with_its_help_on_stderr(argv):
    """A new user's report: bare ``ptonum`` and ``ptonum explain`` printed the help and exited 0 (and bare
    ``ptonum sweep`` printed it on stdout with status 2): a missing command is a usage error like a missing
    argument, status 2, nothing on stdout; the help it writes to stderr is the one ``--help`` prints."""
    r = CliRunner().invoke(main, argv, prog_name="ptonum")
    assert r.exit_code == 2, r.output
    assert r.stdout == ""
    helped = CliRunner().invoke(main, [*argv, "--help"], prog_name="ptonum")
    assert helped.exit_code == 0 and helped.stderr == ""
    assert r.stderr == helped.stdout
    assert f"Usage: {' '.join(['ptonum', *argv])} [OPTIONS] " in r.stderr


def test_usage_line_says_a_command_is_required():
    """``ptonum`` and ``ptonum sweep`` need a command (``COMMAND``); ``ptonum explain`` runs without one
    when given ``--row`` (``[COMMAND]``)."""
    def usage_line(name: str) -> str:
        helped = CliRunner().invoke(main, [*name.split()[1:], "--help"], prog_name="ptonum")
        return next(ln.strip() for ln in helped.stdout.splitlines() if "Usage:" in ln)

    usage = {name: usage_line(name) for name in ("ptonum", "ptonum sweep", "ptonum explain")}
    assert usage == {"ptonum": "Usage: ptonum [OPTIONS] COMMAND [ARGS]...",
                     "ptonum sweep": "Usage: ptonum sweep [OPTIONS] COMMAND [ARGS]...",
                     "ptonum explain": "Usage: ptonum explain [OPTIONS] [COMMAND] [ARGS]..."}


@pytest.mark.parametrize("argv", [["--help"], ["-h"], ["postprocess", "--help"], ["explain", "--help"],
                                  ["explain", "reduction", "--help"], ["gen", "--help"], ["check", "--help"],
                                  ["decode", "--help"], ["tcvt", "--help"], ["compare", "--help"], ["sweep", "--help"],
                                  ["--version"]])
def test_help_and_version_exit_zero(argv):
    r = CliRunner().invoke(main, argv)
    assert r.exit_code == 0, r.output
    assert r.stdout and r.stderr == ""


HELP_COMMANDS = [[], ["postprocess"], ["compare"], ["tcvt"], ["decode"], ["gen"], ["check"], ["explain"],
                 ["explain", "postprocess"], ["explain", "tcvt"], ["explain", "reduction"], ["formats"], ["compile"]]


@pytest.mark.parametrize("cmd", HELP_COMMANDS, ids=[" ".join(c) or "ptonum" for c in HELP_COMMANDS])
def test_help_fits_80_columns_without_cut_text(cmd):
    r = CliRunner().invoke(main, [*cmd, "--help"], env={"COLUMNS": "80"})
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert max(len(ln) for ln in lines) <= 80
    assert not [ln for ln in lines if "…" in ln], [ln for ln in lines if "…" in ln]


def _help(cmd, columns):
    r = CliRunner(env={"COLUMNS": columns}).invoke(main, [*cmd, "--help"])
    assert r.exit_code == 0 and r.stderr == "", r.output
    return r.stdout


@pytest.mark.parametrize("cmd", [[], ["check"], ["explain", "reduction"]], ids=["ptonum", "check", "explain reduction"])
def test_help_width_is_kept_sane_whatever_columns_says(cmd):
    """rich-click read COLUMNS itself: COLUMNS=0 printed no help at all, COLUMNS=100000 padded every line to
    100,000 columns, COLUMNS=1 cut every word.  Help is COLUMNS wide within 40..200 columns; a COLUMNS that is not
    a positive integer is ignored (80 columns when no terminal says otherwise)."""
    default = _help(cmd, None)
    assert max(len(ln) for ln in default.splitlines()) == 80 and "Usage: " in default
    for ignored in ("0", "", "abc", "-100", "1_00"):
        assert _help(cmd, ignored) == default, ignored
    assert _help(cmd, "80") == default
    for columns, width in (("100000", 200), ("201", 200), ("200", 200), ("120", 120), ("75", 75), ("74", 74),
                           ("73", 74), ("40", 74), ("1", 74)):
        text = _help(cmd, columns)
        assert max(len(ln) for ln in text.splitlines()) == width, columns
        assert text == _help(cmd, str(width)), columns


def _every_command(cmd=None, path=()):
    """The argv of every command's help: the group, each subcommand, each subcommand of a subgroup."""
    import click as _click

    cmd = main if cmd is None else cmd
    yield list(path)
    if isinstance(cmd, _click.Group):
        if hasattr(cmd, "load_all"):
            cmd.load_all()
        ctx = _click.Context(cmd)
        for name in cmd.list_commands(ctx):
            yield from _every_command(cmd.get_command(ctx, name), (*path, name))


EVERY_COMMAND = list(_every_command())


def test_every_command_is_listed():
    names = {" ".join(c) for c in EVERY_COMMAND}
    assert {"", "check", "compare", "sweep", "sweep postprocess", "explain tcvt"} <= names and len(names) >= 15


@pytest.mark.parametrize("cmd", EVERY_COMMAND, ids=[" ".join(c) or "ptonum" for c in EVERY_COMMAND])
def test_help_is_never_cut_at_the_narrowest_width(cmd):
    """rich-click's panels cut option names (`--max-rep…` in check's help at 40 columns, `--scale-roundi…` in
    compare's at 60) and long words (sweep's default state path at 80): help is at least HELP_MIN_WIDTH (74)
    wide, the narrowest at which no command's help has a "…"."""
    from ptonum.cli._common import HELP_MIN_WIDTH

    assert HELP_MIN_WIDTH == 74
    for columns in ("1", "40", str(HELP_MIN_WIDTH)):
        text = _help(cmd, columns)
        assert "\u2026" not in text, (columns, [ln for ln in text.splitlines() if "\u2026" in ln])
        assert max(len(ln) for ln in text.splitlines()) == HELP_MIN_WIDTH, columns


def test_usage_error_help_on_stderr_has_a_sane_width():
    """A group run without its command prints its help on stderr: at COLUMNS=0 that was an empty line."""
    for columns in ("0", "100000"):
        r = CliRunner(env={"COLUMNS": columns}).invoke(main, ["explain"])
        assert r.exit_code == 2 and r.stdout == "", r.output
        lines = r.stderr.splitlines()
        assert " explain [OPTIONS]" in r.stderr and max(len(ln) for ln in lines) == (80 if columns == "0" else 200)


@pytest.mark.parametrize("cmd", ["postprocess", "tcvt"])
def test_shape_help_uses_m_x_n_form(cmd):
    r = CliRunner().invoke(main, [cmd, "--help"], env={"COLUMNS": "200"})
    shape_line = next(ln for ln in r.stdout.splitlines() if ln.lstrip("│ ").startswith("--shape "))
    assert "M x N, e.g." in shape_line or "M x N of" in shape_line
    assert "64,128." not in shape_line


@pytest.mark.parametrize("opts,start", [
    (["--group-max"], "--group-max needs --group-n"),
    (["--row-max-init"], "--row-max-init needs --row-max"),
    (["--max-abs"], "--max-abs needs --row-max or --group-max"),
    (["--group-n", "16"], "--group-n needs --group-max"),
])
def test_field_combination_error_names_the_options(tmp_path, opts, start):
    import numpy as np

    acc = tmp_path / "acc.npy"
    np.save(acc, np.zeros((8, 16), np.int32))
    r = CliRunner().invoke(main, ["postprocess", str(acc), "--mode", "REQ8", "--scale", "0.5", *opts,
                                  "--out-dir", str(tmp_path)])
    assert r.exit_code == 2 and r.stderr.count("\n") == 1, r.output
    line = r.stderr.strip()
    assert line.startswith(f"ptonum postprocess: error: {start}"), line
    assert "GroupMaxEn=" in line and "B.FPATR REQ8," not in line  # fields by name, never a bare tuple
    assert not (tmp_path / "acc.d.npy").exists()


def test_digit_separators_are_refused_in_every_integer_the_command_line_reads(tmp_path, monkeypatch):
    """One rule for integers (``_util.int_text``: ASCII digits, no separators): integer options already
    refused ``1_0``; integer words, codes, shapes, list items and vector-file numbers read it as ten."""
    import gzip

    import numpy as np

    monkeypatch.chdir(tmp_path)
    np.save("acc.npy", np.ones((2, 8), np.int32))
    np.ones(16, np.int32).tofile("acc.bin")
    with gzip.open("v.csv.gz", "wt") as fh:
        fh.write("fp32_bits,expected_fp19\n0x00000000,0x00000\n0x3f80_0000,0x1fc00\n")
    op = ["--mode", "REQ8", "--scale", "0.5"]
    cases = [
        (["postprocess", "acc.npy", "--mode", "REQ8", "--quant-param", "1_000"],
         "--quant-param = '1_000': expected an integer word (ASCII decimal digits, or 0x/0o/0b and their digits; no separators)"),
        (["postprocess", "acc.npy", "--attributes", "0x0800_2023"],
         "--attributes = '0x0800_2023': expected an integer word"),
        (["postprocess", "acc.bin", "--dtype", "int32", "--shape", "2x1_6", *op], "--shape = '2x1_6': expected M x N"),
        (["postprocess", "acc.npy", "--chunks", "1_0x8", *op], "--chunks = '1_0x8': expected ROWSxCOLUMNS"),
        (["postprocess", "acc.npy", "--workers", "1_0", *op], "'1_0' is not a number of workers"),
        (["decode", "E4M3", "0b0_0111_000"], "CODE '0b0_0111_000': not a non-negative integer"),
        (["tcvt", "--src-type", "FP32", "--values", "0x3f80_0000"], "--values[0] = '0x3f80_0000': not a hex encoding"),
        (["explain", "postprocess", "--attributes", "0x08002023", "--acc-type", "S32", "--acc", "1_000",
          "--quant-param", "0x3c000000"], "--acc = '1_000': expected an integer"),
        (["explain", "postprocess", "--attributes", "0x0800_2023", "--acc-type", "S32", "--acc", "1"],
         "--attributes = '0x0800_2023': expected an integer"),
        (["compare", "acc.npy", *op, "--device-d", "acc.npy", "--device-flags", "1_6"], "--device-flags"),
    ]
    for argv, fragment in cases:
        r = CliRunner().invoke(main, argv)
        assert (r.exit_code, r.stdout) == (2, ""), (argv, r.output)
        assert r.stderr.count("\n") == 1 and fragment in r.stderr, (argv, r.stderr)
    r = CliRunner().invoke(main, ["check", "v.csv.gz"])
    assert r.exit_code == 1 and "v.csv.gz:3" in r.stdout and "'0x3f80_0000'" in r.stdout, r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["acc.bin", "acc.npy", "v.csv.gz"]


def test_mode_relu_attributes_and_sweep_words_are_named_by_option(tmp_path, monkeypatch):
    """The model's Python names (``pre_quant_mode``, ``relu_mode``, ``word``) become the options; sweep's
    raw words were an internal error, its --scale/--alpha read floats (``1_0``) and its FP19 refusal
    pointed to a --scale-rounding it did not have."""
    import numpy as np

    monkeypatch.chdir(tmp_path)
    np.save("a.npy", np.ones((2, 8), np.int32))
    pp = "ptonum postprocess: error: "
    sw = "ptonum sweep postprocess: error: "
    sweep = ["sweep", "postprocess", "--range", "0:16", "--state", "st"]
    cases = [
        (["postprocess", "a.npy", "--mode", "XX"], pp + "--mode = 'XX': unknown PreQuantMode"),
        (["postprocess", "a.npy", "--mode", "REQ8", "--relu", "XX", "--scale", "1"], pp + "--relu = 'XX': unknown ReluMode"),
        (["postprocess", "a.npy", "--attributes", "0xff000000"], pp + "--attributes = 0xff000000: does not decode"),
        (["postprocess", "a.npy", "--mode", "REQ8", "--scale", "1", "--group-n", "7", "--group-max"],
         pp + "--group-n = 7: expected one of 0, 8, 16,"),
        (["explain", "postprocess", "--attributes", "0xff000000", "--acc-type", "S32", "--acc", "1"],
         "ptonum explain postprocess: error: --attributes = 0xff000000: does not decode"),
        ([*sweep, "--mode", "REQ8", "--quant-param", "xyz"], sw + "--quant-param = 'xyz': expected an integer word"),
        ([*sweep, "--mode", "REQ8", "--relu", "LRELU", "--scale", "1", "--relu-param", "1_0"],
         sw + "--relu-param = '1_0': expected an integer word"),
        ([*sweep, "--mode", "REQ8", "--scale", "1_0"], sw + "--scale = '1_0': not a decimal number"),
        ([*sweep, "--mode", "XX", "--scale", "1"], sw + "--mode = 'XX': unknown PreQuantMode"),
        ([*sweep, "--mode", "REQ8", "--scale", "0.1"], sw + "--scale = 0.1 is not exactly representable in FP19"),
    ]
    for argv, start in cases:
        r = CliRunner().invoke(main, argv)
        assert (r.exit_code, r.stdout) == (2, ""), (argv, r.output)
        assert r.stderr.count("\n") == 1 and r.stderr.startswith(start), (argv, r.stderr)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.npy"]
    r = CliRunner().invoke(main, [*sweep, "--mode", "0x3", "--scale", "0.1", "--scale-rounding", "rne"])
    assert r.exit_code == 0 and "inputs 16, mismatches 0" in r.stdout, r.output


@pytest.mark.parametrize("kmin, pool", [("1_000", "lots"), ("-5", " -1")])
def test_unreadable_whole_number_settings_are_noted_once(monkeypatch, kmin, pool):
    """PTONUM_KERNEL_MIN_ELEMENTS / PTONUM_OUTPUT_POOL_MIB that are not whole numbers were dropped for
    their defaults without a word (and ``1_000`` was read as 1000); a negative one (h-user, stop 36: ``-5``)
    was taken as 0, every call on the kernels: one note each, the defaults, the run goes on."""
    from ptonum.fpatr.tile import _output_pool_bytes
    from ptonum.tables import kernel_min_elements

    r = CliRunner(env={"PTONUM_KERNEL_MIN_ELEMENTS": kmin, "PTONUM_OUTPUT_POOL_MIB": pool}).invoke(
        main, ["formats", "E4M3"])
    assert r.exit_code == 0, r.output
    assert r.stderr == (f"ptonum: note: PTONUM_KERNEL_MIN_ELEMENTS = {kmin!r} is not a whole number (ASCII digits 0-9); "
                        "the default 65536 is used\n"
                        f"ptonum: note: PTONUM_OUTPUT_POOL_MIB = {pool!r} is not a whole number (ASCII digits 0-9); "
                        "the default 128 is used\n")
    r = CliRunner(env={"PTONUM_KERNEL_MIN_ELEMENTS": " 4096 ", "PTONUM_OUTPUT_POOL_MIB": "0"}).invoke(
        main, ["formats", "E4M3"])
    assert r.exit_code == 0 and r.stderr == "", r.output
    monkeypatch.setenv("PTONUM_KERNEL_MIN_ELEMENTS", kmin)
    monkeypatch.setenv("PTONUM_OUTPUT_POOL_MIB", pool)
    assert (kernel_min_elements(), _output_pool_bytes()) == (65536, 128 << 20)  # the note's word: the defaults
    monkeypatch.setenv("PTONUM_KERNEL_MIN_ELEMENTS", "+0")
    monkeypatch.setenv("PTONUM_OUTPUT_POOL_MIB", "0")
    assert (kernel_min_elements(), _output_pool_bytes()) == (0, 0)


def test_probe13_postprocess_option_refusals(tmp_path, monkeypatch):
    """probe13 #2, #4, #18, #19: --chunks on a raw .bin / .npz ran whole without a word; a 1-D --shape was a
    byte-count mismatch; --out-dir/--bin/--sat without ACC ran the example and wrote nothing; a vector
    mode's bad --quant-param was reported as a --quant-tile the user did not give."""
    import numpy as np

    monkeypatch.chdir(tmp_path)
    np.save("a.npy", np.ones((2, 8), np.int32))
    np.savez("m.npz", x=np.ones((2, 8), np.int32))
    np.ones(16, np.int32).tofile("f.bin")
    pp = "ptonum postprocess: error: "
    op = ["--mode", "REQ8", "--scale", "1"]
    cases = [
        (["f.bin", "--dtype", "int32", "--shape", "2x8", *op, "--chunks", "1x8"],
         pp + "--chunks applies to a .npy or Zarr ACC, not f.bin"),
        (["m.npz:x", *op, "--chunks", "1x8"], pp + "--chunks applies to a .npy or Zarr ACC, not m.npz:x"),
        (["f.bin", "--dtype", "int32", "--shape", "16", *op], pp + "--shape = '16': expected M x N"),
        (["--out-dir", "zz"], pp + "--out-dir needs an ACC input file"),
        (["--bin"], pp + "--bin needs an ACC input file"),
        (["--sat"], pp + "--sat needs an ACC input file"),
        (["a.npy", "--mode", "VDEQS16", "--quant-param", "0x3f800"],
         pp + "--quant-param = 0x000000000003f800: bits [12:0] must be zero"),
        (["a.npy", *op, "--relu", "PRELU", "--relu-param", "0x7ffff"], pp + "--relu-param = 0x000000000007ffff: "),
    ]
    for argv, start in cases:
        r = CliRunner().invoke(main, ["postprocess", *argv])
        assert (r.exit_code, r.stdout) == (2, ""), (argv, r.output)
        assert r.stderr.count("\n") == 1 and r.stderr.startswith(start), (argv, r.stderr)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.npy", "f.bin", "m.npz"]


def test_an_option_given_twice_is_refused(tmp_path, monkeypatch):
    """probe13 #17: ``--scale 1 --scale 2`` ran scale 2 without a word; options that collect values still may
    repeat (gen's filters)."""
    import numpy as np

    monkeypatch.chdir(tmp_path)
    np.save("a.npy", np.ones((2, 8), np.int32))
    for argv, line in (
        (["postprocess", "a.npy", "--mode", "REQ8", "--scale=1", "--scale", "2"],
         "ptonum postprocess: error: --scale given twice (--scale 1, --scale 2); give it once "
         "(see 'ptonum postprocess --help')"),
        (["postprocess", "a.npy", "--mode", "REQ8", "--scale", "1", "--progress", "--no-progress"],
         "ptonum postprocess: error: --progress given twice (--progress, --no-progress); give it once "
         "(see 'ptonum postprocess --help')"),
        (["explain", "reduction", "--acc-type", "S32", "--current", "1", "--current", "2", "--candidate", "3"],
         "ptonum explain reduction: error: --current given twice (--current 1, --current 2); give it once "
         "(see 'ptonum explain reduction --help')"),
    ):
        r = CliRunner().invoke(main, argv)
        assert (r.exit_code, r.stdout, r.stderr) == (2, "", line + "\n"), (argv, r.output)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.npy"]
    r = CliRunner().invoke(main, ["gen", "postprocess_element", "--count", "2", "--mode", "3", "--mode", "4"])
    assert r.exit_code == 0, r.output


#: a number of 5000 digits, as a user might paste or a script might build by mistake
_HUGE = "7" * 5000


@pytest.mark.parametrize("argv, fragment", [
    (["postprocess", "acc.npy", "--mode", "REQ8", "--scale", "1" + _HUGE], "--scale = 1777"),
    (["postprocess", "acc.npy", "--mode", "REQ8", "--scale", "1", "--offset", _HUGE], "'--offset': '777"),
    (["postprocess", "acc.npy", "--attributes", _HUGE, "--scale", "1"], "--attributes = 777"),
    (["postprocess", "acc.npy", "--mode", "REQ8", "--quant-param", _HUGE], "--quant-param = 777"),
    (["tcvt", "--to", "E8M0", "--values", "0x" + _HUGE], "--values[0] = 0x777"),
    (["compare", "acc.npy", "--mode", "REQ8", "--scale", "1", "--device-d", "acc.npy", "--device-flags", _HUGE],
     "--device-flags = 777"),
    (["explain", "postprocess", "--attributes", "0x08002023", "--acc", _HUGE, "--scale", "1"], "--acc = 777"),
    (["explain", "postprocess", "--attributes", "0x08002023", "--acc", "-" + _HUGE, "--scale", "1"], "--acc = -777"),
    (["check", "x.csv", "--limit", _HUGE], "'--limit': '777"),
    (["sweep", "tcvt", "--src-type", "BF16", "--range", "0:" + _HUGE, "--state", "s"], "--range = '0:777"),
])
def test_a_huge_number_is_echoed_shortened(tmp_path, monkeypatch, argv, fragment):
    """A refusal of a 5000-digit argument was a screenful (the number in full; `explain --acc` was even an
    internal error: Python refuses to print an int of more than 4300 digits). Now one short line that
    still names the option and shows the number's first and last 20 digits and its length."""
    import numpy as np

    monkeypatch.chdir(tmp_path)
    np.save(tmp_path / "acc.npy", np.zeros((2, 4), np.int32))
    r = CliRunner().invoke(main, argv)
    assert r.exit_code == 2 and r.stdout == "", r.output
    line = r.stderr.rstrip("\n")
    assert r.stderr.count("\n") == 1 and len(line) < 400, line[:300]
    assert line.startswith("ptonum ") and ": error: " in line and "internal error" not in line, line
    assert fragment in line, line
    import re

    assert re.search(r"(?:^|[^0-9])[17]{20}\.\.\.7{20} \((?:5000 hex|5000|5001) digits\)", line), line


def test_illegal_attributes_word_is_not_worded_as_field_options(tmp_path, monkeypatch):
    """break-findings: `--attributes 0x0c00a023` (MaxAbsEn=1 without RowMaxEn/GroupMaxEn) said '--max-abs needs
    --row-max or --group-max', options the user did not give; `--attributes abc` said '0x-hex' only while
    0o/0b words are read.  Now the word leads the message; the field options keep their wording."""
    import numpy as np

    monkeypatch.chdir(tmp_path)
    np.save("a.npy", np.ones((2, 8), np.int32))
    pp = ["postprocess", "a.npy", "--scale", "1", "--out-dir", "o"]
    err = "ptonum postprocess: error: "
    for word, rule in (("0x0c00a023", "MaxAbsEn requires RowMaxEn or GroupMaxEn"),
                       ("0x0c012023", "RowMaxInit requires RowMaxEn")):
        r = CliRunner().invoke(main, [*pp, "--attributes", word])
        assert (r.exit_code, r.stdout) == (2, ""), r.output
        assert r.stderr.startswith(f"{err}--attributes = {word}: {rule}: B.FPATR {word} has "), r.stderr
        assert "needs --" not in r.stderr, r.stderr
    r = CliRunner().invoke(main, [*pp, "--mode", "REQ8", "--max-abs"])
    assert r.exit_code == 2 and r.stderr.startswith(f"{err}--max-abs needs --row-max or --group-max"), r.stderr
    r = CliRunner().invoke(main, [*pp, "--attributes", "abc"])
    assert r.stderr == (f"{err}--attributes = 'abc': expected an integer word (ASCII decimal digits, or 0x/0o/0b and "
                        "their digits; no separators)\n")
    r = CliRunner().invoke(main, [*pp, "--attributes", "0b1100000000000010000000100011"])  # 0x0c002023: REQ8
    assert r.exit_code == 0, r.output


# PTONUM_DISABLE_NUMBA is read as an on/off word in one place (tables.numba_disabled). Before: any value
# other than "" or "0" disabled numba, so =false / =no / =maybe ran the numpy path without a word. Expected
# values are the documented spelling table (1/true/yes/on: numpy; 0/false/no/off/empty/unset: kernels;
# anything else: kernels and one note from the command line).
DISABLE_ON = ["1", "true", "TRUE", "Yes", "on", " on "]
DISABLE_OFF = ["", "0", "false", "False", "no", "NO", "off", " 0 "]
DISABLE_GARBAGE = ["maybe", "2", "enable", "y"]


@pytest.mark.parametrize("value", DISABLE_GARBAGE)
def test_unreadable_disable_numba_is_noted_once(value):
    r = CliRunner(env={"PTONUM_DISABLE_NUMBA": value}).invoke(main, ["formats", "E4M3"])
    assert r.exit_code == 0, r.output
    assert r.stderr == (f"ptonum: note: PTONUM_DISABLE_NUMBA = {value!r} is not an on/off word "
                        "(1/true/yes/on or 0/false/no/off, any case); the default is used "
                        "(the compiled kernels, numba on)\n")


@pytest.mark.parametrize("value", DISABLE_ON + DISABLE_OFF)
def test_readable_disable_numba_is_silent(value):
    r = CliRunner(env={"PTONUM_DISABLE_NUMBA": value}).invoke(main, ["formats", "E4M3"])
    assert r.exit_code == 0 and r.stderr == "", r.output


def test_control_characters_in_an_error_line_are_shown_not_sent(tmp_path, monkeypatch):
    """A file name holding ESC (or another control character) is written as \\x1b in the error line,
    never sent to the terminal, where it could recolour, erase or retitle the line (h-user stop 36);
    a newline still becomes a space (one line)."""
    monkeypatch.chdir(tmp_path)
    name = "acc\x1b[2K\rx\x7f.npy"
    (tmp_path / name).write_bytes(b"not numpy")
    r = CliRunner().invoke(main, ["postprocess", name, "--mode", "REQ8", "--scale", "0.5"])
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr == ("ptonum postprocess: error: ACC: acc\\x1b[2K x\\x7f.npy: not a valid .npy file "
                        "(no NumPy header; 9 bytes)\n"), repr(r.stderr)


def _command_of(path):
    """The click command ``ptonum PATH...`` runs."""
    import click as _click

    cmd = main.load_all()
    for name in path:
        cmd = cmd.get_command(_click.Context(cmd), name)
    return cmd


def _example_blocks(cmd):
    """The fenced example blocks of a command's docstring, each as its lines (as written, dedented)."""
    import inspect

    text = inspect.cleandoc(cmd.help or "")
    return [block.strip("\n").splitlines() for block in re.findall(r"^```\n(.*?)^```$", text, re.S | re.M)]


def test_the_commands_have_example_blocks():
    """The test below reads the examples from the docstrings: it checks the ones there are."""
    with_examples = {" ".join(c) for c in EVERY_COMMAND if _example_blocks(_command_of(c))}
    assert with_examples == {"compare", "decode", "explain postprocess", "gen", "postprocess", "sweep postprocess",
                             "sweep tcvt"}
    inline = [(c, ln) for c in EVERY_COMMAND for ln in (_command_of(c).help or "").splitlines()
              if ln.strip().startswith("Example")]
    assert inline == []  # an example in running text is rewrapped with it


@pytest.mark.parametrize("cmd", EVERY_COMMAND, ids=[" ".join(c) or "ptonum" for c in EVERY_COMMAND])
def test_help_examples_are_never_rewrapped(cmd):
    """At 80 columns `postprocess --help` printed `... --scale-tile scales.npy` and then `--offset-tile
    offsets.npy \\` on a line of its own (rich wraps a long line of a code block): pasted, the first line ran
    alone.  Every line of every example block is printed as written, the block's lines one after the other, at
    any width help takes (74 is the narrowest)."""
    blocks = _example_blocks(_command_of(cmd))
    for columns in ("74", "80", "200"):
        lines = [ln.rstrip() for ln in _help(cmd, columns).splitlines()]
        for block in blocks:
            shown = ["  " + ln for ln in block]
            starts = [k for k in range(len(lines)) if lines[k:k + len(shown)] == shown]
            assert len(starts) == 1, (columns, block, lines)
