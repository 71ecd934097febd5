"""ptonum.dask.sweep: partitions, records on disk, resume after an interruption, mismatch reports.

The engines' agreement itself is checked against the ASL vectors elsewhere; here the expected
counts come from the sweep definition (codes x 7 rounding modes x 2 Sat), the expected
mismatches from a deliberately broken fast engine, and resumed totals from an uninterrupted run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, List

import numpy as np
import pytest

import ptonum.tcvt
from ptonum.dask.sweep import open_state, parse_range, postprocess_sweep, run_sweep, tcvt_sweep
from ptonum.errors import TileLegalityError, UnsupportedConversionError, UsageError


def test_fp16_sweep_size_and_description() -> None:
    sw = tcvt_sweep("FP16")
    assert sw.inputs == 65536 * 7 * 2 == 917504
    assert "917,504 inputs" in sw.describe()
    assert sw.partitions() == [(0, 65536)]  # 2^18 codes per partition by default: one
    fp32 = tcvt_sweep("FP32")
    assert fp32.hi == 1 << 32 and len(fp32.partitions()) == 1 << 14
    assert len(postprocess_sweep(pre_quant_mode="F322F16", acc_type="FP32").partitions()) == 1 << 15


def test_sweep_records_and_resumes(tmp_path: Path) -> None:
    sw = tcvt_sweep("BF16", lo=0x3f00, hi=0x3f00 + 640, partition=128)
    calls: List[int] = []

    def interrupt(done: int, total: int) -> None:
        calls.append(done)
        if len(calls) == 3:  # two partitions recorded, then Ctrl-C
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_sweep(sw, state_dir=tmp_path / "s", progress=interrupt)
    parts = sorted((tmp_path / "s").glob("part-*.json"))
    assert len(parts) == 2
    with pytest.raises(UsageError, match="--resume"):
        run_sweep(sw, state_dir=tmp_path / "s")
    rep = run_sweep(sw, state_dir=tmp_path / "s", resume=True)
    assert (rep.partitions_resumed, rep.partitions_run) == (2, 3) and rep.complete
    whole = run_sweep(sw, state_dir=tmp_path / "w")
    assert (rep.inputs, rep.mismatches) == (whole.inputs, whole.mismatches) == (640 * 14, 0)
    again = run_sweep(sw, state_dir=tmp_path / "s", resume=True)
    assert again.partitions_run == 0 and again.partitions_resumed == 5
    other = tcvt_sweep("BF16", lo=0, hi=640, partition=128)
    with pytest.raises(UsageError, match="holds another sweep: lo 0x3f00 .recorded. vs 0x0 .asked.; hi 0x4180 .recorded. vs 0x280 .asked.;"):
        run_sweep(other, state_dir=tmp_path / "s", resume=True)
    (tmp_path / "s" / parts[0].name).write_text("{broken")  # a damaged record runs again
    assert run_sweep(sw, state_dir=tmp_path / "s", resume=True).partitions_run == 1


def test_mismatches_are_counted_and_reported(tmp_path: Path, monkeypatch) -> None:
    real = ptonum.tcvt.to_e8m0

    def broken(bits: Any, **kw: Any) -> Any:
        codes, flags = real(bits, **kw)
        if kw.get("engine") == "fast" and kw.get("rmode") == "RTZ" and kw.get("sat"):
            codes = np.where(np.asarray(bits) == 0x3c01, codes ^ np.uint8(1), codes)
        return codes, flags

    monkeypatch.setattr(ptonum.tcvt, "to_e8m0", broken)
    rep = run_sweep(tcvt_sweep("FP16", lo=0x3c00, hi=0x3c40, partition=16), state_dir=tmp_path / "s")
    assert rep.mismatches == 1
    (m,) = rep.first
    assert (m["code"], m["rmode"], m["sat"]) == (0x3c01, "RTZ", True)
    assert m["fast"][0] ^ m["reference"][0] == 1
    rec = [json.loads(p.read_text()) for p in sorted((tmp_path / "s").glob("part-*.json"))]
    assert [r["mismatches"] for r in rec] == [1, 0, 0, 0]


def test_postprocess_sweep_checked_like_the_tile_operation(tmp_path: Path) -> None:
    with pytest.raises(TileLegalityError):
        postprocess_sweep(pre_quant_mode="REQ8", acc_type="S32")  # parameter missing
    with pytest.raises(TileLegalityError):
        postprocess_sweep(pre_quant_mode="NoQuant", acc_type="S32", rmode="RTZ")
    with pytest.raises(UnsupportedConversionError):
        tcvt_sweep("E4M3")
    from ptonum import fpatr

    sw = postprocess_sweep(pre_quant_mode="VQF322B8_PRE", relu_mode="LRELU", acc_type="FP32",
                           quant_param=int(fpatr.quant_param(0.5, 3, mode="VQF322B8_PRE")),
                           relu_param=int(fpatr.relu_param(0.25)), lo=0x3f000000, hi=0x3f000000 + 2048,
                           partition=1024)
    rep = run_sweep(sw, state_dir=tmp_path / "p")
    assert (rep.inputs, rep.mismatches, rep.partitions_run) == (2048, 0, 2)


@pytest.mark.parametrize("text, width, expected", [
    (None, 16, (0, 65536)), ("0x10:0x20", 16, (16, 32)), (":0x100", 32, (0, 256)), ("5:", 16, (5, 65536)),
])
def test_parse_range(text: Any, width: int, expected: Any) -> None:
    assert parse_range(text, width) == expected


@pytest.mark.parametrize("text", ["5", "0x20:0x10", "0:0x10001", "a:b"])
def test_parse_range_errors(text: str) -> None:
    with pytest.raises(UsageError, match="--range"):
        parse_range(text, 16)


def test_cli_resume_of_another_sweep_or_of_no_sweep_says_what(tmp_path: Path) -> None:
    """try14 #9: the refusal names what differs (was: the sweep the user asked for, "tcvt, BF16"), and
    --resume of a state directory holding no sweep is refused (was: a fresh sweep started silently)."""
    from click.testing import CliRunner

    from ptonum.cli import main

    state = str(tmp_path / "s1")
    base = ["sweep", "tcvt", "--src-type", "BF16", "--state", state]
    r = CliRunner().invoke(main, base + ["--range", "0x3f00:0x3f10"])
    assert r.exit_code == 0, r.output
    for extra, what in ((["--range", "0x3f00:0x3f20"], "hi 0x3f10 (recorded) vs 0x3f20 (asked)"),
                        (["--range", "0x3f00:0x3f10", "--partition-size", "7"], "partition 262144 (recorded) vs 7 (asked)")):
        r = CliRunner().invoke(main, base + extra + ["--resume"])
        assert (r.exit_code, r.stdout) == (2, ""), r.output
        assert r.stderr == (f"ptonum sweep tcvt: error: --state = {state}: holds another sweep: {what}; give the same "
                            "options to resume it, or choose another --state\n")
    r = CliRunner().invoke(main, ["sweep", "tcvt", "--src-type", "FP16", "--state", state, "--range", "0x3f00:0x3f10",
                                  "--resume"])
    assert r.exit_code == 2 and "config.src_type 'BF16' (recorded) vs 'FP16' (asked)" in r.stderr
    missing = tmp_path / "s1x"
    r = CliRunner().invoke(main, ["sweep", "tcvt", "--src-type", "BF16", "--state", str(missing), "--range",
                                  "0x3f00:0x3f10", "--resume"])
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr.startswith(f"ptonum sweep tcvt: error: --resume: --state = {missing} holds no sweep to resume")
    assert not missing.exists()
    r = CliRunner().invoke(main, base + ["--range", "0x3f00:0x3f10", "--resume"])
    assert r.exit_code == 0 and "1 resumed" in r.stdout


def test_cli_default_state_is_per_user_not_the_current_directory(tmp_path: Path, monkeypatch) -> None:
    """Without --state the record goes to $XDG_STATE_HOME/ptonum/sweeps/OP-HASH (~/.local/state when unset),
    said on the second line, so the current directory is not littered and --resume finds it from
    anywhere (was: ./ptonum-sweep-OP-HASH); a state directory of that old name in the current directory
    is still resumed."""
    from click.testing import CliRunner

    from ptonum.cli import main

    work, other = tmp_path / "work", tmp_path / "other"
    work.mkdir()
    other.mkdir()
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    monkeypatch.chdir(work)
    args = ["sweep", "tcvt", "--src-type", "BF16", "--range", "0x3f00:0x3f10"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    assert list(work.iterdir()) == []
    (state,) = (home / ".local" / "state" / "ptonum" / "sweeps").iterdir()
    assert state.name.startswith("tcvt-") and (state / "sweep.json").is_file()
    assert f"state in {state}" in r.stdout.replace("\n", "")
    monkeypatch.chdir(other)
    r = CliRunner().invoke(main, args + ["--resume"])
    assert r.exit_code == 0 and "1 resumed" in r.stdout, r.output
    xdg = tmp_path / "xdg"
    monkeypatch.setenv("XDG_STATE_HOME", str(xdg))
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0 and (xdg / "ptonum" / "sweeps" / state.name / "sweep.json").is_file()
    old = work / f"ptonum-sweep-{state.name}"  # left by an earlier ptonum: resumed there
    state.rename(old)
    monkeypatch.chdir(work)
    monkeypatch.delenv("XDG_STATE_HOME")
    r = CliRunner().invoke(main, args + ["--resume"])
    assert r.exit_code == 0 and "1 resumed" in r.stdout and f"state in {old.name}" in r.stdout, r.output


def test_cli_unwritable_state_is_refused_before_any_output(tmp_path: Path, monkeypatch) -> None:
    """A --state (or default state) directory that cannot be created is refused before the sweep prints
    anything, naming the directory that is not writable (was: the header, then 'cannot create'); the
    default says it is one and how to choose another."""
    from click.testing import CliRunner

    from ptonum.cli import main

    args = ["sweep", "tcvt", "--src-type", "BF16", "--range", "0x3f00:0x3f10"]
    blocked = tmp_path / "file"
    blocked.write_text("x")  # a file where a directory would go: refused as root too
    r = CliRunner().invoke(main, args + ["--state", str(blocked / "s")])
    assert (r.exit_code, r.stdout) == (2, ""), r.output
    assert r.stderr == f"ptonum sweep tcvt: error: --state = {blocked / 's'}: {blocked} is not a directory\n"
    monkeypatch.setenv("XDG_STATE_HOME", str(blocked))
    r = CliRunner().invoke(main, args)
    assert (r.exit_code, r.stdout) == (2, ""), r.output
    assert r.stderr.startswith(f"ptonum sweep tcvt: error: --state (not given; the default state directory) = "
                               f"{blocked}/ptonum/sweeps/tcvt-") and r.stderr.endswith(
        f": {blocked} is not a directory; give --state DIR\n"), r.stderr


def test_cli_state_directory_of_other_files_or_write_protected_is_refused(tmp_path: Path) -> None:
    """break-findings: `sweep tcvt --state DIR` wrote sweep.json and part-*.json into any existing directory,
    one holding unrelated files and a write-protected one (as root).  Now refused before any output, nothing
    written, the files left alone; an empty directory is still used."""
    import os

    from click.testing import CliRunner

    from ptonum.cli import main

    args = ["sweep", "tcvt", "--src-type", "BF16", "--range", "0x3f00:0x3f10"]
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("hi")
    r = CliRunner().invoke(main, args + ["--state", str(mine)])
    assert (r.exit_code, r.stdout) == (2, ""), r.output
    assert r.stderr == (f"ptonum sweep tcvt: error: --state = {mine}: holds notes.txt and no sweep.json: not a "
                        "sweep's state directory; a sweep records its state in a directory of its own: give a new "
                        "or empty --state DIR\n")
    assert sorted(os.listdir(mine)) == ["notes.txt"]
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        r = CliRunner().invoke(main, args + ["--state", str(ro)])
        assert (r.exit_code, r.stdout) == (2, ""), r.output
        assert r.stderr == (f"ptonum sweep tcvt: error: --state = {ro}: is a write-protected directory (mode 0555); "
                            "make it writable (chmod u+w) or choose another --state\n")
        assert os.listdir(ro) == []
    finally:
        ro.chmod(0o755)
    empty = tmp_path / "empty"
    empty.mkdir()
    r = CliRunner().invoke(main, args + ["--state", str(empty)])
    assert r.exit_code == 0, r.output
    assert "sweep.json" in os.listdir(empty)


def test_state_is_checked_once_by_open_state_and_run_from_it(tmp_path: Path) -> None:
    """Review debt (c) of stop 21: the command line checked the state directory, then run_sweep checked it
    again.  Now open_state is the one check (it writes nothing); run_sweep(state=...) runs from what it
    found, and run_sweep(state_dir=...) makes the same check for API users.  A library caller of another
    sweep is told what differs, as the command line was (was: 'holds a different sweep (tcvt, ...)')."""
    import os

    sw = tcvt_sweep("BF16", lo=0x3f00, hi=0x3f40, partition=32)
    st = open_state(sw, tmp_path / "s")
    assert (st.recorded, st.done, (tmp_path / "s").exists()) == (False, {}, False)
    (tmp_path / "s").mkdir()
    assert os.listdir(tmp_path / "s") == []
    rep = run_sweep(sw, state=open_state(sw, tmp_path / "s"))
    assert (rep.partitions_run, rep.inputs, rep.mismatches) == (2, 0x40 * 14, 0)
    assert sorted(os.listdir(tmp_path / "s")) == ["part-000003f00-000003f20.json", "part-000003f20-000003f40.json",
                                                  "sweep.json"]
    again = open_state(sw, tmp_path / "s", resume=True)
    assert again.recorded and sorted(again.done) == [(0x3f00, 0x3f20), (0x3f20, 0x3f40)]
    assert run_sweep(sw, state=again).partitions_resumed == 2
    with pytest.raises(UsageError, match="2 partition.s. already recorded; pass --resume"):
        open_state(sw, tmp_path / "s")
    other = tcvt_sweep("BF16", lo=0x3f00, hi=0x3f40, partition=16)
    with pytest.raises(UsageError) as exc:
        run_sweep(other, state_dir=tmp_path / "s", resume=True)
    assert str(exc.value) == (f"--state = {tmp_path / 's'}: holds another sweep: partition 32 (recorded) vs 16 "
                              "(asked); give the same options to resume it, or choose another --state")
    with pytest.raises(UsageError, match="not both"):
        run_sweep(other, state=again)


def test_cli_recorded_partitions_without_resume_refused_before_any_output(tmp_path: Path) -> None:
    """A second `sweep` on the same --state without --resume was refused only after the header had been
    printed (and a cluster started, with --workers): open_state now refuses it first."""
    from click.testing import CliRunner

    from ptonum.cli import main

    state = tmp_path / "s"
    args = ["sweep", "tcvt", "--src-type", "BF16", "--range", "0x3f00:0x3f10", "--state", str(state)]
    assert CliRunner().invoke(main, args).exit_code == 0
    r = CliRunner().invoke(main, args)
    assert (r.exit_code, r.stdout) == (2, ""), r.output
    assert r.stderr == (f"ptonum sweep tcvt: error: --state = {state}: 1 partition(s) already recorded; pass "
                        "--resume to continue the sweep, or choose another --state\n")
