"""Fault injection on every command that reads or writes files (issue 10, items 1-3).

* SIGINT / SIGTERM at many points of the ``postprocess``, ``tcvt`` and ``gen`` writes (and of the
  read-only ``check`` and ``compare``): exit 130 / 143, one line saying whether anything was written,
  the outputs all there or none of them, no temporary file.
* A full disk (ENOSPC injected into the staged writes) and a blocked output path (a directory where a
  file goes): exit 2, one line naming the destination, nothing written.
* ``.npy`` / ``.npz`` inputs whose header claims more data than the file holds, for every command that
  reads them: one line, exit 2, before anything is allocated.

The signals are real (``os.kill`` of this process from a trace hook, so they arrive between two
statements of the command's own code); two subprocess runs check the process exit status itself.
"""

from __future__ import annotations

import errno
import io
import os
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
import pytest
from click.testing import CliRunner

import ptonum.cli
import ptonum.cli._tile_args
import ptonum.cli.gen_cmd
import ptonum.cli.postprocess_cmd
import ptonum.cli.tcvt_cmd
import ptonum.conformance.schema
from ptonum.errors import UsageError
import ptonum.publish
from ptonum import publish
from ptonum.cli import main

#: where the injected signals land: the command modules and the publishing code
_WRITERS = {
    "postprocess": [ptonum.cli.postprocess_cmd.__file__, publish.__file__],
    "tcvt": [ptonum.cli.tcvt_cmd.__file__, publish.__file__],
    "gen": [ptonum.cli.gen_cmd.__file__, ptonum.conformance.schema.__file__, publish.__file__],
}

#: injection points per command and signal (spread evenly over every traced line)
POINTS = 16


def _run(args: Sequence[Any]) -> Any:
    return CliRunner().invoke(main, [str(a) for a in args])


def _with_signal_at(args: Sequence[Any], files: Sequence[str], k: int, sig: int) -> Tuple[Any, int]:
    """Run the command, sending ``sig`` to this process on the ``k``-th line executed in ``files``
    (``k = 0``: never); returns the result and the number of traced lines."""
    wanted = {os.path.realpath(f) for f in files}
    count = [0]

    def local(frame: Any, event: str, arg: Any) -> Any:
        if event == "line":
            count[0] += 1
            if count[0] == k:
                os.kill(os.getpid(), sig)
        return local

    seen: Dict[str, bool] = {}

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        code = frame.f_code
        name = code.co_filename
        if name not in seen:
            seen[name] = os.path.realpath(name) in wanted
        # published_count() is where the command reads its baseline; a signal in it is one just before it
        return local if seen[name] and code.co_name != "published_count" else None

    sys.settrace(tracer)
    try:
        result = _run(args)
    finally:
        sys.settrace(None)
    return result, count[0]


def _listing(d: Path) -> List[str]:
    return sorted(str(p.relative_to(d)) for p in d.rglob("*"))


@pytest.fixture
def acc_file(tmp_path: Path) -> Path:
    p = tmp_path / "acc.npy"
    np.save(p, np.arange(-48, 48, dtype=np.int32).reshape(6, 16) * 1000)
    return p


def _postprocess_args(acc: Path, out: Path) -> List[Any]:
    return ["postprocess", acc, "--mode", "REQ8", "--scale", "0.5", "--row-max", "--group-max", "--group-n", "8",
            "--bin", "--out-dir", out]


def _cases(tmp_path: Path, acc: Path) -> Dict[str, Tuple[List[Any], Path]]:
    """command -> (arguments, the directory its outputs go to)"""
    t = tmp_path / "t"
    return {
        "postprocess": (_postprocess_args(acc, tmp_path / "pp"), tmp_path / "pp"),
        "tcvt": (["tcvt", "--values", "1.5,0.75,3", "--out", t / "codes.npz"], t),
        "gen": (["gen", "tcvt_e8m0", "--count", "4", "--out", tmp_path / "g" / "v.csv.gz"], tmp_path / "g"),
    }


@pytest.mark.parametrize("command", ["postprocess", "tcvt", "gen"])
def test_signals_at_many_points_leave_all_or_nothing(tmp_path: Path, acc_file: Path, command: str) -> None:
    args, out = _cases(tmp_path, acc_file)[command]
    clean, total = _with_signal_at(args, _WRITERS[command], 0, signal.SIGINT)
    assert clean.exit_code == 0, clean.output
    full = _listing(out)
    assert full and not any(".tmp" in name for name in full)
    for i in range(POINTS):
        k = 1 + i * (total - 1) // (POINTS - 1)
        sig = signal.SIGINT if i % 2 == 0 else signal.SIGTERM
        shutil.rmtree(out, ignore_errors=True)
        r, _ = _with_signal_at(args, _WRITERS[command], k, sig)
        assert r.exit_code == (130 if sig == signal.SIGINT else 143), (k, r.output)
        now = _listing(out) if out.exists() else None
        assert now in (None, full), (k, now)  # the directory it made is gone again when nothing was written
        files_now = [] if now is None else now
        line = r.stderr.strip().splitlines()[-1]
        what = "interrupted by SIGINT" if sig == signal.SIGINT else "terminated by SIGTERM"
        assert line.startswith(f"ptonum {command}: {what}; "), line
        assert ("nothing was written" in line) == (files_now == []), (k, line, now)
        assert "Traceback" not in r.output
    assert publish.remove_temporaries() == []


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_read_only_commands_exit_130_143_not_1(tmp_path: Path, acc_file: Path, sig: int, code: int) -> None:
    """Issue 10 item 3: Ctrl-C during compare (or check) is not a mismatch (exit 1)."""
    dev = tmp_path / "dev.npy"
    np.save(dev, np.zeros((6, 16), np.uint8))
    vec = tmp_path / "v.csv"
    assert _run(["gen", "tcvt_e8m0", "--count", "3", "--out", vec]).exit_code == 0
    import ptonum.cli.check_cmd
    import ptonum.cli.compare_cmd

    for args, f in (
        (["compare", acc_file, "--mode", "REQ8", "--scale", "0.5", "--device-d", dev], ptonum.cli.compare_cmd.__file__),
        (["check", vec], ptonum.cli.check_cmd.__file__),
    ):
        r, total = _with_signal_at(args, [f], 2, sig)
        assert total >= 2
        assert r.exit_code == code, r.output
        assert r.stderr.strip().splitlines()[-1].endswith("; nothing was written"), r.stderr


@pytest.fixture
def compare_plot(tmp_path: Path, acc_file: Path, monkeypatch: Any) -> Tuple[List[Any], Path]:
    """``compare --plot`` (a mismatch, so exit 1 when all goes well); the figure is stubbed (what is
    under test is how the PNG is published, not how it is drawn)."""
    pytest.importorskip("matplotlib")
    import ptonum.cli._plot as plot

    monkeypatch.setattr(plot, "compare_figure", lambda report, title: None)
    monkeypatch.setattr(plot, "png_bytes", lambda fig: b"\x89PNG\r\n\x1a\n" + b"\0" * 4000)
    dev = tmp_path / "dev.npy"
    np.save(dev, np.zeros((6, 16), np.uint8))
    out = tmp_path / "plots"
    return ["compare", acc_file, "--mode", "REQ8", "--scale", "0.5", "--device-d", dev, "--plot",
            out / "map.png"], out


def test_compare_plot_signals_and_full_disk(compare_plot: Tuple[List[Any], Path], monkeypatch: Any) -> None:
    """compare's output (--plot) is published whole or not at all, like every writer's."""
    args, out = compare_plot
    import ptonum.cli.compare_cmd

    files = [ptonum.cli.compare_cmd.__file__, publish.__file__]
    clean, total = _with_signal_at(args, files, 0, signal.SIGINT)
    assert clean.exit_code == 1 and _listing(out) == ["map.png"], clean.output
    for k in (total // 2, total - 8, total - 2):
        shutil.rmtree(out)
        r, _ = _with_signal_at(args, files, k, signal.SIGTERM)
        assert r.exit_code == 143, (k, r.output)
        now = _listing(out) if out.exists() else None
        assert now in (None, ["map.png"]), now
        assert ("nothing was written" in r.stderr) == (now is None), r.stderr
        if now:
            assert (out / "map.png").stat().st_size == 4008
        else:
            out.mkdir()
    shutil.rmtree(out)
    monkeypatch.setattr(publish, "open", _FullDisk(1000), raising=False)
    r = _run(args)
    assert r.exit_code == 2 and r.stderr.endswith(f"cannot write {out / 'map.png'}: No space left on device\n")
    assert _listing(out) == []


def test_sweep_interrupted_keeps_whole_records_only(tmp_path: Path) -> None:
    """A sweep's state is a journal: every partition record (and sweep.json) is whole, none is cut
    or left as a temporary, and --resume finishes the sweep."""
    pytest.importorskip("dask")
    import json

    import ptonum.dask.sweep

    args = ["sweep", "tcvt", "--src-type", "FP16", "--range", "0x7b00:0x7c00", "--partition-size", "64", "--json"]
    files = [ptonum.dask.sweep.__file__, publish.__file__]
    clean, total = _with_signal_at(args + ["--state", tmp_path / "clean"], files, 0, signal.SIGINT)
    assert clean.exit_code == 0, clean.output
    for i, k in enumerate((total // 7, total // 2, total - total // 5)):
        state = tmp_path / f"s{i}"
        sig = (signal.SIGINT, signal.SIGTERM)[i % 2]
        r, _ = _with_signal_at(args + ["--state", state], files, k, sig)
        assert r.exit_code == (130, 143)[i % 2], (k, r.output)
        names = _listing(state) if state.exists() else []
        assert not any(n.startswith(".") for n in names), names
        for n in names:
            json.loads((state / n).read_text())  # whole
        assert ("nothing was written" in r.stderr) == (names == []), (names, r.stderr)
        assert r.stderr.startswith(f"ptonum sweep tcvt: {'interrupted' if i % 2 == 0 else 'terminated'} by "), r.stderr
        if names:
            again = _run(args + ["--state", state, "--resume"])
            assert again.exit_code == 0 and json.loads(again.stdout)["inputs"] == json.loads(clean.stdout)["inputs"]


_DRIVER = """
import os, signal, sys
import ptonum.publish as p
sig = getattr(signal, sys.argv[1])
real = p.Publication.commit
def commit(self):
    os.kill(os.getpid(), sig)  # arrives while the command is about to publish
    return real(self)
p.Publication.commit = commit
from ptonum.cli import main
main(sys.argv[2:], prog_name="ptonum")
"""


def test_process_exit_status(tmp_path: Path, acc_file: Path) -> None:
    """The real process: SIGTERM while publishing, exit status 143 (SIGINT's 130 is the same path)."""
    sig, code = "SIGTERM", 143
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-c", _DRIVER, sig, *map(str, _postprocess_args(acc_file, out))],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == code, proc.stderr
    assert proc.stderr.strip().splitlines()[-1].endswith("nothing was written"), proc.stderr
    assert not out.exists() or _listing(out) == []


@pytest.mark.parametrize("args, code", [(["postprocess", "missing.npy", "--mode", "REQ8"], 2),
                                         (["modes", "NOPE"], 2), (["decode", "FP16", "0x3c00"], 0),
                                         (["--no-such-option"], 2)])
def test_exit_status_with_stderr_closed(tmp_path: Path, args: List[str], code: int) -> None:
    """A command started with its standard error closed (`2>&-`) still exits with its status: 2 for an
    error (was 1, the status of a mismatch, since writing the error line to the missing stderr failed)."""
    proc = subprocess.run([sys.executable, "-m", "ptonum", *args], stdout=subprocess.PIPE, cwd=tmp_path,
                          preexec_fn=lambda: os.close(2), timeout=120)
    assert proc.returncode == code, proc.stdout


@pytest.mark.parametrize("args", [["modes"], ["decode", "FP16", "0x3c00"], ["postprocess", "acc.npy", "--mode", "REQ8",
                                                                         "--scale", "0.5", "--out-dir", "o"],
                                  ["--help"]])
def test_stdout_closed_is_an_error(tmp_path: Path, args: List[str]) -> None:
    """A command started with standard output closed (`>&-`) says so on stderr and exits 2 before any
    work (was: printed nothing, ran, and exited 0, as if its output had been shown)."""
    np.save(tmp_path / "acc.npy", np.arange(32, dtype=np.int32).reshape(2, 16))
    proc = subprocess.run([sys.executable, "-m", "ptonum", *args], stderr=subprocess.PIPE, cwd=tmp_path,
                          preexec_fn=lambda: os.close(1), timeout=120, text=True)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and "error: standard output is closed" in proc.stderr, proc.stderr
    assert sorted(os.listdir(tmp_path)) == ["acc.npy"]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("args", [["--version"], ["--help"], ["decode", "--help"], ["modes"], ["formats"],
                                  ["decode", "FP16", "0x3c00"], ["tcvt", "--values", "1.5"],
                                  ["postprocess", "acc.npy", "--mode", "REQ8", "--scale", "0.5", "--out-dir", "o"]])
def test_stdout_on_a_full_device_is_named(tmp_path: Path, args: List[str]) -> None:
    """Standard output on a full device (`> /dev/full`, a full disk under a redirection): one line naming
    standard output, exit 2, and what was already published (postprocess writes its outputs whole before
    the summary).  Was 'error: No space left on device' with nothing saying which file, and for --help /
    --version 'internal error: OSError ... please report it'."""
    np.save(tmp_path / "acc.npy", np.arange(32, dtype=np.int32).reshape(2, 16))
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "ptonum", *args], stdout=full, stderr=subprocess.PIPE,
                              cwd=tmp_path, timeout=120, text=True)
    assert proc.returncode == 2, proc.stderr
    (line,) = proc.stderr.splitlines()
    assert ": error: cannot write standard output: No space left on device" in line, line
    if args[0] == "postprocess":
        assert line.endswith("; its outputs were already written in full: o/acc.d.npy, o/acc.flags.json"), line
        assert sorted(os.listdir(tmp_path / "o")) == ["acc.d.npy", "acc.flags.json"]
    else:
        assert sorted(os.listdir(tmp_path)) == ["acc.npy"]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("args, stdout_full, env, status, outputs", [
    (["postprocess", "--no-such-option"], False, {}, 2, []),
    (["postprocess", "acc.npy", "--attributes", "0xffffffff"], False, {}, 2, []),  # a rejected attribute word
    (["postprocess", "acc.npy", "--mode", "REQ8", "--relu", "LRELU", "--scale", "0.5"], False, {}, 2, []),
    (["check", "missing.csv"], False, {}, 2, []),
    ([], False, {}, 2, []),  # a missing command: the help on stderr
    (["modes"], True, {}, 2, []),  # stdout full as well: the line saying so cannot be shown either
    (["gen", "fp32_to_fp19", "--count", "3", "--out", "g.csv"], False, {}, 0, ["g.csv"]),  # 'wrote ...' line
    (["postprocess", "acc.npy", "--mode", "REQ8", "--scale", "0.5", "--out-dir", "o"], False, {}, 0,
     ["o/acc.d.npy", "o/acc.flags.json"]),
    (["modes"], False, {"PTONUM_DISABLE_NUMBA": "maybe"}, 0, []),  # the note on the setting
], ids=["unknown option", "rejected attributes", "missing parameter", "missing file", "no command",
        "stdout full too", "gen summary line", "postprocess summary line", "environment note"])
def test_stderr_on_a_full_device_keeps_the_exit_status(tmp_path: Path, args: List[str], stdout_full: bool,
                                                       env: Dict[str, str], status: int,
                                                       outputs: List[str]) -> None:
    """Standard error on a full device (`2> /dev/full`): the one-line error cannot be shown, yet the exit
    status is the documented one (2 for an error), and a command whose note or summary line on stderr
    cannot be written still runs and ends as it would (0, its outputs written).  Was 1 in every case but
    the postprocess run (its summary goes to stdout): the failed write of the error line, note or summary
    raised past the command, and Python ended the process with its status for an uncaught exception (the
    note on the environment, written before the command, even kept `modes` from running)."""
    np.save(tmp_path / "acc.npy", np.arange(32, dtype=np.int32).reshape(2, 16))
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "ptonum", *args], stdout=full if stdout_full else subprocess.PIPE,
                              stderr=full, cwd=tmp_path, timeout=120, text=True, env={**os.environ, **env})
    assert proc.returncode == status, (args, proc.returncode)
    if args[:1] == ["modes"] and not stdout_full:
        assert "VREQ8" in proc.stdout  # the command ran
    written = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    assert written == sorted(["acc.npy", *outputs])


# ---------------------------------------------------------------------------
# Signals during start-up (before the command's own handler exists)

#: runs the ``ptonum`` entry point (what the console script calls) with a ``sys.meta_path`` hook that
#: sends the signal on the k-th module import after the entry module was loaded (k = 0: never) and
#: prints, on exit, how many imports came before the command's own SIGTERM handler took over
_STARTUP_DRIVER = """
import atexit, os, signal, sys
import ptonum.__main__ as entry
k, sig = int(sys.argv[1]), getattr(signal, sys.argv[2])
seen = [0, 0]
class KillAt:
    def find_spec(self, name, path=None, target=None):
        seen[0] += 1
        if not seen[1] and getattr(signal.getsignal(signal.SIGTERM), "__module__", "") == "ptonum.publish":
            seen[1] = seen[0]
        if seen[0] == k:
            os.kill(os.getpid(), sig)
        return None
sys.meta_path.insert(0, KillAt())
atexit.register(lambda: sys.stdout.write(f"imports {seen[0]} before-handler {seen[1] - 1}\\n"))
sys.argv = ["ptonum", *sys.argv[3:]]
entry.main()
"""


def _startup_run(k: int, sig: str, args: Sequence[Any]) -> "subprocess.CompletedProcess[str]":
    return subprocess.run([sys.executable, "-c", _STARTUP_DRIVER, str(k), sig, *map(str, args)],
                          capture_output=True, text=True, timeout=300)


def test_signal_during_start_up(tmp_path: Path, acc_file: Path) -> None:
    """SIGTERM (or SIGINT) while ``ptonum`` imports click, numpy and the command: exit 143 (130) and one
    line saying nothing was written, as during a run -- not the default action (killed, -15; or a
    KeyboardInterrupt traceback) -- and nothing on disk.  Spread over the imports before the command's
    own handler takes over, plus one just after it."""
    out = tmp_path / "out"
    args = _postprocess_args(acc_file, out)
    clean = _startup_run(0, "SIGTERM", args)
    assert clean.returncode == 0, clean.stderr
    before_handler = int(clean.stdout.split()[-1])
    assert before_handler > 20, clean.stdout  # click, the model modules, ...: the window being tested
    shutil.rmtree(out)
    points = sorted({1, *np.linspace(2, before_handler, 3).astype(int).tolist(), before_handler + 1})
    for i, k in enumerate(points):
        sig, code, what = (("SIGINT", 130, "interrupted by SIGINT") if i % 3 == 1 else
                           ("SIGTERM", 143, "terminated by SIGTERM"))
        proc = _startup_run(k, sig, args)
        assert proc.returncode == code, (k, sig, proc.returncode, proc.stderr)
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("ptonum") and \
            lines[0].endswith(f"{what}; nothing was written"), (k, proc.stderr)
        assert not out.exists(), (k, _listing(out))
        assert _listing(tmp_path) == ["acc.npy"], (k, _listing(tmp_path))


#: the console script pip writes for ``[project.scripts] ptonum = "ptonum.__main__:main"``, verbatim
_CONSOLE_SCRIPT = """import re
import sys
from ptonum.__main__ import main
if __name__ == '__main__':
    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])
    sys.exit(main())
"""

#: runs the console script (argv[3]) with a trace hook that sends the signal at the k-th line executed at
#: the top level of the script or of ptonum/__main__.py once the entry module has taken SIGINT over
#: (k = 0: never), or at the first line the script executes after its import of the entry module; prints
#: on exit how many such lines there were
_IMPORT_DRIVER = """
import atexit, os, runpy, signal, sys
k, sig, script = int(sys.argv[1]), getattr(signal, sys.argv[2]), sys.argv[3]
entry = os.path.join("ptonum", "__main__.py")
seen = [0]
def local(frame, event, arg):
    if event != "line" or frame.f_code.co_name != "<module>":
        return local
    in_script = frame.f_code.co_filename == script
    if (in_script and frame.f_lineno > 3) or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        seen[0] += 1
        if seen[0] == k:
            os.kill(os.getpid(), sig)
    return local
def tracer(frame, event, arg):
    name = frame.f_code.co_filename
    return local if name == script or name.endswith(entry) else None
atexit.register(lambda: sys.stdout.write(f"points {seen[0]}\\n"))
sys.argv = [script, *sys.argv[4:]]
sys.settrace(tracer)
runpy.run_path(script, run_name="__main__")
"""


def test_signal_while_the_entry_point_is_imported(tmp_path: Path, acc_file: Path) -> None:
    """try14 #3: Ctrl-C (or SIGTERM) while the console script imports ``ptonum.__main__``, or between that
    import and its call of ``main()``, printed a KeyboardInterrupt traceback; now, at every line from the
    instant the entry module took the signals over (its first statements), the one line and 130 / 143,
    nothing written."""
    script = tmp_path / "ptonum-script"
    script.write_text(_CONSOLE_SCRIPT)
    out = tmp_path / "out"
    args = _postprocess_args(acc_file, out)

    def run(k: int, sig: str) -> "subprocess.CompletedProcess[str]":
        return subprocess.run([sys.executable, "-c", _IMPORT_DRIVER, str(k), sig, str(script), *map(str, args)],
                              capture_output=True, text=True, timeout=300)

    clean = run(0, "SIGINT")
    assert clean.returncode == 0 and clean.stderr == "", clean.stderr
    points = int(clean.stdout.split()[-1])
    shutil.rmtree(out)
    for k in range(1, points + 1):
        sig, code, what = (("SIGINT", 130, "interrupted by SIGINT") if k % 2 else
                           ("SIGTERM", 143, "terminated by SIGTERM"))
        proc = run(k, sig)
        assert (proc.returncode, proc.stderr) == (code, f"ptonum postprocess: {what}; nothing was written\n"), \
            (k, proc.returncode, proc.stderr)
        assert not out.exists(), (k, _listing(out))
    assert points >= 10, clean.stdout  # the entry module's body after the take-over, the script's last lines


def test_signal_while_publish_is_half_imported(monkeypatch: pytest.MonkeyPatch) -> None:
    """A signal in start-up that arrives while ``ptonum.publish`` itself is being imported (in
    ``sys.modules``, its ``raise_for_signal`` not defined yet) is the KeyboardInterrupt / SIGTERM of
    start-up, answered with the one line and 130 / 143; it was an AttributeError traceback ("partially
    initialized module 'ptonum.publish' has no attribute 'raise_for_signal'") and exit status 1 (h-user,
    stop 36: a Ctrl-C 0.2 s after ``ptonum postprocess`` started, about one time in ten)."""
    import types

    import ptonum.__main__ as entry

    monkeypatch.setattr(entry, "_phase", entry._STARTING)
    monkeypatch.setitem(sys.modules, "ptonum.publish", types.ModuleType("ptonum.publish"))
    with pytest.raises(KeyboardInterrupt):
        entry._on_signal(signal.SIGINT, None)
    with pytest.raises(entry._StartupTerminated):
        entry._on_signal(signal.SIGTERM, None)


_SET_NAME_DRIVER = """
import os, signal, sys, types
import ptonum.__main__ as entry
SIG = getattr(signal, sys.argv[1])
class Descriptor:
    def __set_name__(self, owner, name):
        os.kill(os.getpid(), SIG)  # the start-up handler raises in here
        sum(range(1000))
def main():
    class Formatter:  # as rich-click's RichHelpFormatter with its cached_property, created on import
        highlighter = Descriptor()
cli = types.ModuleType("ptonum.cli")
cli.main = main
sys.modules["ptonum.cli"] = cli
sys.argv = ["ptonum", "postprocess", "acc.npy"]
entry.main()
"""


@pytest.mark.parametrize("sig,code,what", [("SIGINT", 130, "interrupted by SIGINT"),
                                           ("SIGTERM", 143, "terminated by SIGTERM")])
def test_signal_in_a_set_name_during_start_up(sig: str, code: int, what: str) -> None:
    """A start-up signal raised inside a descriptor's ``__set_name__`` (which Python 3.11 wraps in
    ``RuntimeError: Error calling __set_name__ on 'cached_property' instance 'highlighter' in
    'RichHelpFormatter'``) is answered as any start-up signal: one line, 130 / 143; it was that
    RuntimeError's traceback and exit status 1 (h-user, stop 36, a Ctrl-C 0.22 s after start)."""
    proc = subprocess.run([sys.executable, "-c", _SET_NAME_DRIVER, sig], capture_output=True, text=True,
                          timeout=120)
    assert (proc.returncode, proc.stderr) == (code, f"ptonum postprocess: {what}; nothing was written\n")


def test_entry_point_knows_the_command_names() -> None:
    """The one line of a signal answered before the command line is imported names the command as the
    command line would (``ptonum explain tcvt: interrupted ...``): the entry module's list of commands
    is the command line's."""
    import ptonum.__main__ as entry

    group = ptonum.cli.main.load_all()
    assert set(entry._COMMANDS) == set(group.commands)
    for name, subs in entry._COMMANDS.items():
        assert set(subs) == set(getattr(group.commands[name], "commands", {})), name
    for argv in (["postprocess", "acc.npy", "--mode", "REQ8"], ["explain", "tcvt", "--src-type", "FP16"],
                 ["sweep", "postprocess", "--mode", "REQ8"], ["--version"], ["nope", "postprocess"], []):
        assert entry._command_named(argv) == ptonum.cli.command_from_argv(argv), argv


def test_entry_point_takes_over_before_heavy_imports() -> None:
    """The window before the start-up handler exists is the interpreter's start-up plus the entry module
    and the package ``__init__``: importing them loads none of click, numpy or the command line."""
    code = ("import sys, ptonum.__main__; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'click', 'rich_click', 'typing') "
            "or m.startswith('ptonum.')))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert proc.stdout.strip() == "['ptonum.__main__']"
    import ptonum.__main__ as entry

    assert (entry._EXIT_SIGTERM, entry._EXIT_SIGINT) == (publish.EXIT_SIGTERM, publish.EXIT_SIGINT)


# ---------------------------------------------------------------------------
# A full disk, a blocked output path


class _FullDisk:
    """``open`` for ptonum.publish whose files accept ``room`` bytes in all, then raise ENOSPC."""

    def __init__(self, room: int) -> None:
        self.room = room

    def __call__(self, path: Any, mode: str = "r", **kw: Any) -> Any:
        fh = open(path, mode, **kw)
        if "w" not in mode:
            return fh
        disk = self

        class F(io.RawIOBase):
            def write(self, data: Any) -> int:
                n = len(memoryview(data).cast("B"))
                if n > disk.room:
                    raise OSError(errno.ENOSPC, "No space left on device")
                disk.room -= n
                return fh.write(data)

            def writable(self) -> bool:
                return True

            def seekable(self) -> bool:
                return False

            def tell(self) -> int:
                return fh.tell()

            def close(self) -> None:
                fh.close()
                super().close()

        return F()


@pytest.mark.parametrize("command", ["postprocess", "tcvt", "gen"])
@pytest.mark.parametrize("fraction", [0, 0.5])
def test_full_disk_publishes_nothing(tmp_path: Path, acc_file: Path, monkeypatch: Any, command: str,
                                     fraction: float) -> None:
    """The disk fills up at the first byte, or halfway through the outputs."""
    args, out = _cases(tmp_path, acc_file)[command]
    assert _run(args).exit_code == 0
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    shutil.rmtree(out)
    monkeypatch.setattr(publish, "open", _FullDisk(int(size * fraction)), raising=False)
    r = _run(args)
    assert r.exit_code == 2, r.output
    assert r.stderr.count("\n") == 1 and f"ptonum {command}: error: cannot write {out}" in r.stderr, r.stderr
    assert "No space left on device" in r.stderr and ".tmp" not in r.stderr
    assert not out.exists()  # not even the directory made for the outputs


def test_blocked_output_path_publishes_nothing(tmp_path: Path, acc_file: Path) -> None:
    """Issue 10 item 1 as reported: a folder where STEM.flags.json goes."""
    out = tmp_path / "out"
    (out / "acc.flags.json").mkdir(parents=True)
    r = _run(_postprocess_args(acc_file, out))
    assert r.exit_code == 2, r.output
    assert r.stderr == f"ptonum postprocess: error: cannot write {out / 'acc.flags.json'}: it is a directory\n"
    assert _listing(out) == ["acc.flags.json"]


@pytest.mark.parametrize("command", ["tcvt", "gen"])
def test_blocked_single_output(tmp_path: Path, acc_file: Path, command: str) -> None:
    args, _ = _cases(tmp_path, acc_file)[command]
    dest = Path(args[-1])
    dest.mkdir(parents=True)
    r = _run(args)
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and str(dest) in r.stderr, r.stderr
    assert _listing(dest.parent) == [dest.name]


def _state(d: Path) -> Dict[str, Tuple[int, bytes]]:
    return {str(p.relative_to(d)): (p.stat().st_mode & 0o7777, p.read_bytes()) for p in sorted(d.rglob("*"))
            if p.is_file()}


@pytest.mark.parametrize("command", ["postprocess", "tcvt", "gen"])
def test_write_protected_output_is_refused_before_any_work(tmp_path: Path, acc_file: Path, monkeypatch: Any,
                                                           command: str) -> None:
    """A file the user made read-only (chmod 444: a golden output kept on purpose) is never replaced by a
    rename (which the folder's permission would allow, even to root): the run is refused before any work,
    naming it; nothing is written and the file keeps its bytes and its mode.  Was: replaced, mode 0644."""
    args, out = _cases(tmp_path, acc_file)[command]
    assert _run(args).exit_code == 0
    victim = out / "acc.d.npy" if command == "postprocess" else Path(args[-1])
    victim.chmod(0o444)
    before = _state(out)
    import ptonum.fpatr.tile

    def no_work(*a: Any, **k: Any) -> Any:
        raise AssertionError("work started")

    for mod, name in ((ptonum.fpatr.tile, "postprocess"), (ptonum.fpatr.tile, "compute"),
                      (ptonum.cli.tcvt_cmd, "to_e8m0"), (ptonum.cli.gen_cmd, "write_vectors")):
        monkeypatch.setattr(mod, name, no_work)
    r = _run(args)
    assert r.exit_code == 2, r.output
    assert r.stderr.count("\n") == 1 and str(victim) in r.stderr and "write-protected (mode 0444)" in r.stderr, r.stderr
    assert "Traceback" not in r.output
    assert _state(out) == before


@pytest.mark.parametrize("command", ["postprocess", "tcvt", "gen"])
@pytest.mark.parametrize("kind", ["fifo", "link to /dev/null"])
def test_output_that_is_a_device_or_pipe_is_refused_not_replaced(tmp_path: Path, acc_file: Path, command: str,
                                                                 kind: str) -> None:
    """Publishing renames a complete file into place; over a named pipe, or a symbolic link to a device,
    that replaced the pipe or link with a regular file (as root, `--out /dev/null` would have replaced the
    device node itself).  Refused before any work, naming it; the pipe/link stays as it was."""
    args, out = _cases(tmp_path, acc_file)[command]
    victim = out / "acc.d.npy" if command == "postprocess" else Path(args[-1])
    victim.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(victim)
        what = "a named pipe (FIFO)"
    else:
        victim.symlink_to("/dev/null")
        what = "a symbolic link to a character device"
    r = _run(args)
    assert r.exit_code == 2, r.output
    assert r.stderr.count("\n") == 1 and str(victim) in r.stderr and f"is {what}" in r.stderr, r.stderr
    assert _listing(out) == [victim.name]
    assert victim.is_fifo() if kind == "fifo" else os.readlink(victim) == "/dev/null"


@pytest.mark.parametrize("victim", ["acc.row_max.npy", "acc.group_max.bin", "acc.d_packed.npy"])
@pytest.mark.parametrize("kind", ["fifo", "write-protected"])
def test_field_outputs_are_checked_before_any_work(tmp_path: Path, acc_file: Path, monkeypatch: Any,
                                                   victim: str, kind: str) -> None:
    """RowMaxOut, GroupMaxOut and the packed S4X2 D are outputs of the run as much as STEM.d.npy: a pipe
    or a write-protected file where one goes is refused before any work (was: only after the computation,
    when publishing)."""
    out = tmp_path / "pp"
    args = _postprocess_args(acc_file, out)
    if victim == "acc.d_packed.npy":
        args[args.index("REQ8")] = "REQ4"
    out.mkdir()
    dest = out / victim
    if kind == "fifo":
        os.mkfifo(dest)
        what = "a named pipe (FIFO)"
    else:
        dest.write_bytes(b"golden")
        dest.chmod(0o444)
        what = "write-protected (mode 0444)"
    import ptonum.fpatr.tile

    def no_work(*a: Any, **k: Any) -> Any:
        raise AssertionError("work started")

    monkeypatch.setattr(ptonum.fpatr.tile, "postprocess", no_work)
    r = _run(args)
    assert r.exit_code == 2, r.output
    assert r.stderr.count("\n") == 1 and str(dest) in r.stderr and what in r.stderr, r.stderr
    assert _listing(out) == [victim]
    assert dest.is_fifo() if kind == "fifo" else dest.read_bytes() == b"golden"


def test_publication_never_replaces_or_removes_a_write_protected_file(tmp_path: Path) -> None:
    keep = tmp_path / "keep.bin"
    keep.write_bytes(b"golden")
    keep.chmod(0o444)
    with pytest.raises(publish.PublishError, match=rf"cannot write {keep}: it is write-protected \(mode 0444\)"):
        with publish.Publication() as pub:
            pub.write_bytes(tmp_path / "other.bin", b"x")
            pub.write_bytes(keep, b"new")
    with pytest.raises(publish.PublishError, match=rf"cannot remove {keep}: it is write-protected \(mode 0444\)"):
        with publish.Publication() as pub:
            pub.write_bytes(tmp_path / "other.bin", b"x")
            pub.remove(keep)
    assert _listing(tmp_path) == ["keep.bin"] and keep.read_bytes() == b"golden"
    assert keep.stat().st_mode & 0o777 == 0o444
    keep.chmod(0o644)  # writable by its owner: replaced as before
    with publish.Publication() as pub:
        pub.write_bytes(keep, b"new")
    assert keep.read_bytes() == b"new"


# ---------------------------------------------------------------------------
# Lying .npy / .npz headers


def _lying_npy(shape: Tuple[int, ...] = (1 << 20, 1 << 20), descr: str = "<i4") -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": descr, "fortran_order": False, "shape": shape})
    return buf.getvalue() + b"\0" * 16


def _lying_npz(path: Path, member: str, data: bytes, compress: int = zipfile.ZIP_STORED) -> Path:
    with zipfile.ZipFile(path, "w", compress) as zf:
        zf.writestr(member, data)
    return path


def _lying_zip_size(path: Path) -> Path:
    """An npz whose central directory claims a huge uncompressed member (the .npy inside is honest)."""
    good = io.BytesIO()
    np.save(good, np.zeros((2, 2), np.int32))
    _lying_npz(path, "acc.npy", good.getvalue(), zipfile.ZIP_DEFLATED)
    raw = bytearray(path.read_bytes())
    cd = raw.rfind(b"PK\x01\x02")
    raw[cd + 24:cd + 28] = (0x7FFFFFFF).to_bytes(4, "little")  # uncompressed size in the central directory
    path.write_bytes(bytes(raw))
    return path


def _reader_cases(tmp_path: Path, acc: Path) -> List[Tuple[str, List[Any]]]:
    big = tmp_path / "big.npy"
    big.write_bytes(_lying_npy())
    v3 = tmp_path / "v3.npy"
    hdr = _lying_npy()
    text = hdr[10:10 + int.from_bytes(hdr[8:10], "little")]
    v3.write_bytes(hdr[:6] + b"\x03\x00" + len(text).to_bytes(4, "little") + text + b"\0" * 16)
    member = _lying_npz(tmp_path / "member.npz", "acc.npy", _lying_npy())
    zipsize = _lying_zip_size(tmp_path / "zipsize.npz")
    qt = tmp_path / "qt.npy"
    qt.write_bytes(_lying_npy((1, 1 << 40), "<u8"))
    dev = tmp_path / "dev.npy"
    np.save(dev, np.zeros((6, 16), np.uint8))
    op = ["--mode", "REQ8", "--scale", "0.5"]
    return [
        ("ACC", ["postprocess", big, *op]),
        ("ACC", ["postprocess", v3, *op]),
        ("ACC", ["postprocess", member, *op]),
        ("ACC", ["postprocess", zipsize, *op]),
        ("--quant-tile", ["postprocess", acc, "--mode", "VREQ8", "--quant-tile", qt]),
        ("--row-max-in", ["postprocess", acc, *op, "--row-max", "--row-max-init", "--row-max-in", big]),
        ("ACC", ["compare", big, *op, "--device-d", dev]),
        ("--device-d", ["compare", acc, *op, "--device-d", f"{member}:acc"]),
        ("FILE", ["tcvt", big]),
    ]


def test_lying_headers_are_one_line_before_any_allocation(tmp_path: Path, acc_file: Path, monkeypatch: Any) -> None:
    """Issue 10 item 2: a header claiming 2^20 x 2^20 int32 in a tiny file (and the same as an npz
    member, or an npz whose directory lies about the member's size)."""
    monkeypatch.chdir(tmp_path)
    for option, args in _reader_cases(tmp_path, acc_file):
        r = _run(args)
        assert r.exit_code == 2, (args, r.output)
        assert r.stderr.count("\n") == 1, r.stderr
        assert r.stderr.startswith(f"ptonum {args[0]}: error: {option}: "), r.stderr
        assert "claims" in r.stderr and "Traceback" not in r.output, r.stderr
    assert _listing(tmp_path) == sorted(["acc.npy", "big.npy", "v3.npy", "member.npz", "zipsize.npz", "qt.npy",
                                         "dev.npy"])


def test_npy_with_more_data_than_its_header_claims_is_refused(tmp_path: Path, acc_file: Path,
                                                             monkeypatch: Any) -> None:
    """A .npy holding bytes after the array its header describes (numpy's np.load ignores them) is refused,
    naming the file and both sizes; as an npz member too, and when opened chunked (``ptonum.dask``)."""
    monkeypatch.chdir(tmp_path)
    good = io.BytesIO()
    np.save(good, np.arange(16, dtype=np.int32).reshape(2, 8))
    data = good.getvalue() + b"\0" * 8  # 64 bytes of int32 claimed, 72 held
    trail = tmp_path / "trail.npy"
    trail.write_bytes(data)
    member = _lying_npz(tmp_path / "trail.npz", "acc.npy", data)
    claim = "the header claims 2x8 int32 (64 bytes) but the file holds 72 bytes of data (8 bytes after the array)"
    for option, args, where in (("ACC", ["postprocess", trail, "--mode", "REQ8", "--scale", "0.5"], trail),
                                ("ACC", ["postprocess", member, "--mode", "REQ8", "--scale", "0.5"],
                                 f"{member} member acc.npy"),
                                ("FILE", ["tcvt", trail], trail)):
        r = _run(args)
        assert (r.exit_code, r.stdout) == (2, ""), r.output
        assert r.stderr == (f"ptonum {args[0]}: error: {option}: {where}: not a valid .npy file (trailing data or "
                            f"lying header): {claim}\n")
    assert _listing(tmp_path) == ["acc.npy", "trail.npy", "trail.npz"]
    pytest.importorskip("dask")
    from ptonum.dask import open_tile

    with pytest.raises(UsageError) as exc:
        open_tile(trail)
    assert str(exc.value) == f"ACC: {trail}: not a valid .npy file (trailing data or lying header): {claim}"


@pytest.mark.parametrize("body, reason", [
    (b"\n" * (64 << 20), "decompresses to more than"),  # 64 MiB of blank lines in 64 KiB of gzip
    (b"x\n" * (2 << 20), "need about"),  # 4 MiB of malformed lines: each keeps its message
])
def test_gzip_bomb_is_refused_before_it_is_expanded(tmp_path: Path, monkeypatch: Any, body: bytes,
                                                    reason: str) -> None:
    """A small vector/tile file that expands beyond what the machine can parse is one line, exit 2, before the
    memory is taken (was: RSS grew to all 24 GiB and the OOM killer ended ptonum with no message).  The
    machine is made small (256 MiB available) so the files stay small."""
    import gzip

    monkeypatch.setattr(ptonum.conformance.schema, "_available_memory", lambda: 256 << 20)
    header = b"src_type,src_bits,rmode,sat,expected_bits,expected_flags\n"
    for name in ("tcvt.csv.gz", "tiles.json.gz"):
        (tmp_path / name).write_bytes(gzip.compress(header + body, compresslevel=1))
        r = _run(["check", str(tmp_path / name)])
        assert r.exit_code == 2, r.output
        assert r.stderr.count("\n") == 1 and reason in r.stderr, r.stderr
        assert r.stderr.startswith(f"ptonum check: error: {tmp_path / name}: "), r.stderr
    # within the budget the same machine parses the file as before
    ok = tmp_path / "ok.csv.gz"
    ok.write_bytes(gzip.compress(header + b"FP32,0x3f800000,RNE,0,0x7f,0x00\n"))
    r = _run(["check", str(ok)])
    assert r.exit_code == 0, r.output


@pytest.mark.parametrize("name", ["blank.csv", "blank.csv.gz"])
def test_blank_lines_cost_their_bytes_not_a_malformed_rows_memory(tmp_path: Path, monkeypatch: Any,
                                                                   name: str) -> None:
    """50 MB of blank lines was refused as needing about 33.5 GiB: each line was priced as a malformed row (720
    bytes), though a blank line holds no row; it parses in about 1.3 GiB (26 bytes a byte).  The machine is made
    small (64 MiB available): 2 MiB of blank lines around a row, priced 1.4 GiB before, are checked; 3 MiB (78 MB
    at 26 a byte) are still refused, and so are 100000 malformed lines among 1 MiB of blank ones (the message counts
    the lines that are not blank)."""
    import gzip

    monkeypatch.setattr(ptonum.conformance.schema, "_available_memory", lambda: 64 << 20)
    header = b"src_type,src_bits,rmode,sat,expected_bits,expected_flags\n"
    row = b"FP32,0x3f800000,RNE,0,0x7f,0x00\n"

    def write(body: bytes) -> Path:
        p = tmp_path / name
        p.write_bytes(gzip.compress(body, compresslevel=1) if name.endswith(".gz") else body)
        return p

    p = write(header + b"\n" * (1 << 20) + row + b"\n" * (1 << 20))
    r = _run(["check", p])
    assert r.exit_code == 0 and "PASS: 1 row(s) checked" in r.stdout, r.output
    bad = b"x\n" * 100_000  # malformed rows among the blank lines: 720 bytes each, 72 MB
    p = write(header + b"\n" * (1 << 20) + bad)
    r = _run(["check", p])
    assert (r.exit_code, r.stdout) == (2, ""), r.output
    assert r.stderr == (f"ptonum check: error: {p}: {len(header + bad) + (1 << 20)} bytes of text in "
                        f"{(1 << 20) + 100_001} lines (100001 not blank) need about 0.1 GiB of memory to parse; "
                        "0.1 GiB is available (a file is read whole: split it)\n"), r.stderr
    p = write(header + row + b"\n" * (3 << 20))  # 3 MiB of text: 78 MB at 26 bytes a byte
    r = _run(["check", p])
    assert (r.exit_code, r.stdout) == (2, "") and r.stderr.count("\n") == 1, r.output
    assert r.stderr.startswith(f"ptonum check: error: {p}: ") and "memory" in r.stderr, r.stderr


def test_internal_error_is_one_line(monkeypatch: Any) -> None:
    """No traceback reaches a user from any command: a defect is still one line, exit 2."""
    def boom(*a: Any, **k: Any) -> None:
        raise RuntimeError("unexpected")

    monkeypatch.setattr(ptonum.cli.tcvt_cmd, "to_e8m0", boom)
    r = _run(["tcvt", "--values", "1"])
    assert r.exit_code == 2
    assert r.stderr == ("ptonum tcvt: error: internal error: RuntimeError: unexpected (please report it; "
                        "PTONUM_TRACEBACK=1 shows the traceback)\n")


_SHUTDOWN_DRIVER = """
import atexit, os, signal, sys, time
import ptonum.__main__ as entry
import ptonum.publish as p
sig, when = getattr(signal, sys.argv[1]), sys.argv[2]
def late(kill=os.kill, pid=os.getpid(), sleep=time.sleep):  # the command ended, its outputs are published
    kill(pid, sig)
    sleep(2)
class Finalized:  # its __del__ runs when the interpreter clears the modules, after it gave up its handlers
    def __del__(self):
        late()
if when == "exit-callback":  # an exit callback of the command's libraries (registered during the run)
    real = p.Publication.commit
    def commit(self):
        done = real(self)
        atexit.register(late)
        return done
    p.Publication.commit = commit
elif when == "last-exit-callback":  # registered before the command: runs after every one of its own
    atexit.register(late)
else:
    finalized = Finalized()
sys.argv = ["ptonum", *sys.argv[3:]]
entry.main()
"""


@pytest.mark.parametrize("sig, code, what", [("SIGINT", 130, "interrupted by SIGINT"),
                                             ("SIGTERM", 143, "terminated by SIGTERM")])
def test_signal_after_the_command_ended_is_reported(tmp_path: Path, acc_file: Path, sig: str, code: int,
                                                    what: str) -> None:
    """probe13 #16: a signal while the interpreter shuts down (after the summary) killed the process with
    nothing said (status -2 / -15); now the one line (the outputs were written in full) and 130 / 143."""
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-c", _SHUTDOWN_DRIVER, sig, "exit-callback",
                           *map(str, _postprocess_args(acc_file, out))],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == code, (proc.returncode, proc.stderr)
    assert proc.stdout.rstrip().splitlines()[-1].startswith("wrote "), proc.stdout
    assert proc.stderr.startswith(f"ptonum postprocess: {what}; ") and proc.stderr.count("\n") == 1, proc.stderr
    assert "already written in full" in proc.stderr and "acc.flags.json" in proc.stderr, proc.stderr


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("when", ["last-exit-callback", "finalizing"])
def test_signal_as_the_process_ends_gives_the_command_result(tmp_path: Path, acc_file: Path, sig: str,
                                                             when: str) -> None:
    """try14 #2: a signal in the last instant of the process -- after the last exit callback, or while
    the interpreter finalizes (it has reset the handlers: the default action killed the process, status
    130 with no line) -- is ignored: the command's own status and output, stderr empty."""
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-c", _SHUTDOWN_DRIVER, sig, when,
                           *map(str, _postprocess_args(acc_file, out))],
                          capture_output=True, text=True, timeout=300)
    assert (proc.returncode, proc.stderr) == (0, ""), (proc.returncode, proc.stderr)
    assert proc.stdout.rstrip().splitlines()[-1].startswith("wrote "), proc.stdout
    names = _listing(out)
    assert "acc.flags.json" in names and not any(n.startswith(".") for n in names), names


# ---------------------------------------------------------------------------
# Out of memory in a batch: the one line names the file (h-probe finding; injected MemoryError)


def _vector_copy(tmp_path: Path, name: str) -> Path:
    import gzip

    from conftest import vectors_dir

    with gzip.open(vectors_dir() / "fp32_to_fp19.csv.gz", "rt") as fh:
        lines = [next(fh) for _ in range(20)]
    p = tmp_path / name
    p.write_text("".join(lines))
    return p


@pytest.mark.parametrize("where", ["parse", "check"])
def test_check_out_of_memory_names_the_file_and_checks_the_others(tmp_path: Path, monkeypatch, where: str) -> None:
    import ptonum.cli.check_cmd as check_cmd

    big, small = _vector_copy(tmp_path, "big.csv"), _vector_copy(tmp_path, "small.csv")
    name = "parse_text" if where == "parse" else "check_parsed"
    real = getattr(check_cmd, name)

    def fake(parsed: Any, *args: Any, **kw: Any) -> Any:
        if str(big) in (str(getattr(parsed, "path", "")), str(args[0]) if args else ""):
            raise MemoryError()
        return real(parsed, *args, **kw)
    monkeypatch.setattr(check_cmd, name, fake)
    r = CliRunner().invoke(main, ["check", str(big), str(small)])
    assert r.exit_code == 2, r.output
    tag = "" if where == "parse" else " [fast]"
    assert r.stderr == (f"ptonum check: error: {big}{tag}: out of memory reading or computing this file (it needs "
                        "more memory than is available)\n")
    assert "small.csv" in r.stdout and "Traceback" not in r.output


def _acc(tmp_path: Path, name: str) -> Path:
    p = tmp_path / name
    np.save(p, np.arange(8, dtype=np.int32).reshape(2, 4))
    return p


@pytest.mark.parametrize("batch", [False, True])
def test_postprocess_out_of_memory_names_the_file(tmp_path: Path, monkeypatch, batch: bool) -> None:
    import ptonum.cli.postprocess_cmd as pp

    a, b = _acc(tmp_path, "a.npy"), _acc(tmp_path, "b.npy")
    real = pp.build_tile_call

    def fake(acc: str, **kw: Any) -> Any:
        if str(acc).endswith("a.npy"):
            raise MemoryError()
        return real(acc, **kw)
    monkeypatch.setattr(pp, "build_tile_call", fake)
    out = tmp_path / "out"
    files = [str(a), str(b)] if batch else [str(a)]
    r = CliRunner().invoke(main, ["postprocess", *files, "--mode", "REQ8", "--scale", "1", "--out-dir", str(out)])
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith(f"ptonum postprocess: error: {a}: out of memory reading or computing this file")
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.output
    written = sorted(p.name for p in out.iterdir()) if out.exists() else []
    assert written == (["b.d.npy", "b.flags.json"] if batch else [])


def test_tcvt_out_of_memory_names_the_file(tmp_path: Path, monkeypatch) -> None:
    import ptonum.cli.tcvt_cmd as tc

    p = tmp_path / "x.npy"
    np.save(p, np.ones(4, dtype=np.float32))

    def fake(*args: Any, **kw: Any) -> Any:
        raise MemoryError()
    monkeypatch.setattr(tc, "to_e8m0", fake)
    r = CliRunner().invoke(main, ["tcvt", str(p), "--out", str(tmp_path / "c.npy")])
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr == (f"ptonum tcvt: error: {p}: out of memory reading or computing this file (it needs more "
                        "memory than is available)\n")
    assert not (tmp_path / "c.npy").exists()


# ---------------------------------------------------------------------------
# stdout into a pipe its reader closed (`ptonum check ... | head`): status 141, silently (try14 #1)


@pytest.mark.parametrize("args", [["decode", "FP16", "0x3c00", "0x7c00"], ["formats"], ["postprocess", "ACC", "--mode",
                                  "REQ8", "--scale", "1", "--out-dir", "OUT"], ["check", "VECTORS"]])
def test_closed_stdout_pipe_exits_141_not_the_mismatch_status(tmp_path: Path, args: List[str]) -> None:
    """Was: status 1 (rich's and click's broken-pipe exit), which check/compare use for "a mismatch was found"."""
    acc = tmp_path / "acc.npy"
    np.save(acc, np.arange(8, dtype=np.int32).reshape(2, 4))
    vectors = _vector_copy(tmp_path, "v.csv")
    args = [{"ACC": str(acc), "OUT": str(tmp_path / "o"), "VECTORS": str(vectors)}.get(a, a) for a in args]
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first byte
    try:
        r = subprocess.run([sys.executable, "-m", "ptonum", *args], stdout=write, stderr=subprocess.PIPE,
                           timeout=300)
    finally:
        os.close(write)
    assert (r.returncode, r.stderr) == (141, b"")


def _waiting_for_a_lock(pid: int) -> bool:
    """Whether process ``pid`` is blocked on a file lock (a ``->`` line of /proc/locks names it)."""
    with open("/proc/locks", encoding="ascii") as fh:
        return any("->" in line and f" {pid} " in line for line in fh)


@pytest.mark.skipif(not os.path.exists("/proc/locks"), reason="needs Linux /proc/locks")
@pytest.mark.parametrize("chunked", [False, True])
def test_concurrent_runs_into_one_out_dir_publish_one_after_the_other(tmp_path: Path, acc_file: Path,
                                                                     chunked: bool) -> None:
    """Two runs of the same STEM into one --out-dir once interleaved their renames (a stress run left
    acc.flags.json of one run beside acc.d.bin / acc.row_max.bin of another, or refused the other's
    files; a chunked run and an in-memory one left acc.zarr beside acc.d.npy); publishing now holds the
    out dir's lock, so a run waits while another process holds it."""
    import fcntl

    if chunked:
        pytest.importorskip("dask")
    out = tmp_path / "out"
    out.mkdir()
    held = os.open(out, os.O_RDONLY)
    fcntl.flock(held, fcntl.LOCK_EX)  # what a run that is publishing there holds
    try:
        env = dict(os.environ, PTONUM_DISABLE_NUMBA="1")
        args = _postprocess_args(acc_file, out)
        if chunked:
            args = [a for a in args if a != "--bin"] + ["--chunks", "3x16"]
        proc = subprocess.Popen([sys.executable, "-m", "ptonum", *map(str, args)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        while proc.poll() is None and not _waiting_for_a_lock(proc.pid):
            time.sleep(0.02)
        assert proc.poll() is None, f"published without the out dir's lock: {proc.communicate()}"
        assert _listing(out) == []
    finally:
        os.close(held)
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr
    assert ("acc.zarr" if chunked else "acc.d.bin") in _listing(out)


# ---------------------------------------------------------------------------
# numba's threading layer cannot be loaded


@pytest.mark.parametrize("layer", ["bogus", "tbb"])
def test_threading_layer_that_cannot_load_runs_on_numpy_with_a_note(tmp_path: Path, layer: str) -> None:
    """NUMBA_THREADING_LAYER naming a layer numba does not know, or one whose library is missing (TBB here;
    'safe' needs it too): a large call runs on the numpy path with one note naming the variable, the same
    bits as the reference engine, exit 0.  Was: 'internal error: ValueError: The threading layer requested
    'bogus' is unknown to Numba' / 'No threading layer could be loaded', exit 2, nothing written."""
    try:
        import tbb  # type: ignore[import-not-found]  # noqa: F401
        if layer == "tbb":
            pytest.skip("TBB is installed here: the layer loads")
    except ImportError:
        pass
    acc = (np.arange(300 * 300, dtype=np.int64) * 7919 % (1 << 32) - (1 << 31)).astype(np.int32).reshape(300, 300)
    np.save(tmp_path / "acc.npy", acc)
    env = dict(os.environ, NUMBA_THREADING_LAYER=layer, PTONUM_KERNEL_MIN_ELEMENTS="1024")
    env.pop("PTONUM_DISABLE_NUMBA", None)
    args = ["postprocess", "acc.npy", "--mode", "REQ8", "--scale", "0.5", "--row-max", "--out-dir", "out"]
    proc = subprocess.run([sys.executable, "-m", "ptonum", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          cwd=tmp_path, env=env, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    notes = [line for line in proc.stderr.splitlines() if "NUMBA_THREADING_LAYER" in line]
    assert len(notes) == 1 and notes[0].startswith("ptonum: note: ") and repr(layer) in notes[0], proc.stderr
    assert "runs on numpy" in notes[0] and "internal error" not in proc.stderr
    from ptonum import fpatr

    ref = fpatr.postprocess(acc, attributes={"pre_quant_mode": "REQ8", "row_max_en": True},
                            quant_param=int(fpatr.quant_param(0.5, 0, mode="REQ8")), engine="reference")
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "acc.d.npy"), ref.d_bits.view(np.int8))
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "acc.row_max.npy").view(np.uint32), ref.row_max_bits)


def test_compile_with_a_threading_layer_that_cannot_load_is_one_line_and_keeps_the_cache(tmp_path: Path) -> None:
    """`ptonum compile` under NUMBA_THREADING_LAYER=bogus: one line naming the variable, exit 2, and no
    cached kernel discarded.  Was: each cached kernel's load failed with numba's ValueError, was taken for
    a damaged file and deleted ('damaged kernel cache file ... discarded'), then 'internal error:
    ValueError: The threading layer requested 'bogus' is unknown to Numba'."""
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "postprocess._tile_kernel-1.py311.nbi").write_bytes(b"index")  # stands for a cached kernel
    env = dict(os.environ, NUMBA_THREADING_LAYER="bogus", PTONUM_CACHE_DIR=str(cache))
    env.pop("PTONUM_DISABLE_NUMBA", None)
    proc = subprocess.run([sys.executable, "-m", "ptonum", "compile"], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, cwd=tmp_path, env=env, text=True, timeout=600)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("ptonum compile: error: NUMBA_THREADING_LAYER = 'bogus': numba cannot load "
                                  "that threading layer ("), proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stdout == ""
    assert [p.name for p in cache.iterdir()] == ["postprocess._tile_kernel-1.py311.nbi"]


def test_numba_disable_jit_runs_on_numpy_with_a_note(tmp_path: Path) -> None:
    """NUMBA_DISABLE_JIT=1 (numba's debugging switch: njit returns the plain Python function): a large
    postprocess and TCVT run on the numpy path with one note naming the variable, the reference engine's
    bits, exit 0; `ptonum compile` says there is nothing to compile, exit 0.  Was: 'internal error:
    AttributeError: 'function' object has no attribute 'py_func'' (exit 2), and a raw AttributeError
    traceback from ptonum.tcvt.to_e8m0 in Python."""
    acc = (np.arange(300 * 300, dtype=np.int64) * 7919 % (1 << 32) - (1 << 31)).astype(np.int32).reshape(300, 300)
    np.save(tmp_path / "acc.npy", acc)
    env = dict(os.environ, NUMBA_DISABLE_JIT="1", PTONUM_KERNEL_MIN_ELEMENTS="1024")
    env.pop("PTONUM_DISABLE_NUMBA", None)

    def run(*args: str) -> Any:
        return subprocess.run([sys.executable, "-m", "ptonum", *args], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, cwd=tmp_path, env=env, text=True, timeout=600)

    proc = run("postprocess", "acc.npy", "--mode", "REQ8", "--scale", "0.5", "--row-max", "--out-dir", "out")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("ptonum: note: NUMBA_DISABLE_JIT is set"), \
        proc.stderr
    from ptonum import fpatr, tcvt

    ref = fpatr.postprocess(acc, attributes={"pre_quant_mode": "REQ8", "row_max_en": True},
                            quant_param=int(fpatr.quant_param(0.5, 0, mode="REQ8")), engine="reference")
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "acc.d.npy"), ref.d_bits.view(np.int8))
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "acc.row_max.npy").view(np.uint32), ref.row_max_bits)
    bits = (np.arange(1 << 16, dtype=np.uint32) * 65537).astype(np.uint32)
    np.save(tmp_path / "t.npy", bits)
    proc = run("tcvt", "t.npy", "--src-type", "FP32", "--out", "codes.npy")
    assert proc.returncode == 0, proc.stderr
    assert "internal error" not in proc.stderr
    codes, _ = tcvt.to_e8m0(bits, src_type="FP32", engine="reference")
    np.testing.assert_array_equal(np.load(tmp_path / "codes.npy"), codes)
    proc = run("compile")
    assert (proc.returncode, proc.stderr) == (0, ""), proc.stderr
    assert proc.stdout.startswith("nothing to compile: NUMBA_DISABLE_JIT is set"), proc.stdout


def test_a_library_warning_with_a_traceback_in_it_is_one_line(tmp_path: Path) -> None:
    """NUMBA_NUM_THREADS=abc: numba warns when ptonum imports it, and its warning carries the text of a
    traceback (about ten lines on stderr).  The command now shows it as one note line naming the package
    and the variable, and runs as numba does (its default thread count), exit 0.  Was: numba's multi-line
    RuntimeWarning with 'Traceback (most recent call last):' in it."""
    acc = (np.arange(300 * 300, dtype=np.int64) * 7919 % (1 << 32) - (1 << 31)).astype(np.int32).reshape(300, 300)
    np.save(tmp_path / "acc.npy", acc)
    env = dict(os.environ, NUMBA_NUM_THREADS="abc", PTONUM_KERNEL_MIN_ELEMENTS="1024")
    env.pop("PTONUM_DISABLE_NUMBA", None)
    env.pop("PTONUM_TRACEBACK", None)
    proc = subprocess.run([sys.executable, "-m", "ptonum", "postprocess", "acc.npy", "--mode", "REQ8", "--scale",
                           "0.5", "--out-dir", "out"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          cwd=tmp_path, env=env, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if "NUMBA_NUM_THREADS" in line]
    assert lines == ["ptonum: note: numba: RuntimeWarning: Environment variable 'NUMBA_NUM_THREADS' is defined but "
                     "its associated value 'abc' could not be parsed. (ValueError: invalid literal for int() with "
                     "base 10: 'abc')"], proc.stderr


def test_write_protected_output_directory_is_refused_root_included(tmp_path, monkeypatch) -> None:
    """break-findings: as root, `postprocess --out-dir D` and `gen --out D/x.csv` wrote into a chmod 555 directory
    (its files chmod 444 were protected, the directory itself not), although the README promises write-protected
    outputs are kept 'root included'.  Now refused before any work, nothing written (a user other than root got
    'is not writable' already)."""
    import numpy as np
    from click.testing import CliRunner

    from ptonum.cli import main

    monkeypatch.chdir(tmp_path)
    np.save("a.npy", np.ones((2, 8), np.int32))
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    root = os.geteuid() == 0
    try:
        for argv, option, shown in ((["postprocess", "a.npy", "--mode", "REQ8", "--scale", "1", "--out-dir", "ro"],
                                     "--out-dir", "ro: "),
                                    (["postprocess", "a.npy", "--mode", "REQ8", "--scale", "1", "--out-dir", "ro/s"],
                                     "--out-dir", "ro/s: ro "),
                                    (["gen", "tcvt_e8m0", "--count", "10", "--seed", "1", "--src-type", "BF16",
                                      "--out", "ro/x.csv"], "--out", "ro/x.csv: ro ")):
            r = CliRunner().invoke(main, argv)
            assert (r.exit_code, r.stdout) == (2, ""), r.output
            if root:
                assert r.stderr.endswith(f"error: {option} = {shown}is a write-protected directory (mode 0555); "
                                         f"make it writable (chmod u+w) or choose another {option}\n"), r.stderr
            assert os.listdir(ro) == []
    finally:
        ro.chmod(0o755)


_SMALL_MACHINE_DRIVER = """
import sys
import ptonum.conformance.schema as schema
schema._available_memory = lambda: 256 << 20  # a parse budget of about 10 MB, so the stream stays small
from ptonum.cli import main
main(sys.argv[1:], prog_name="ptonum")
"""


@pytest.mark.parametrize("args", [["check", "-"], ["check", "--engine", "both", "-"], ["explain", "--row", "-:5"],
                                  ["explain", "--tile", "-:0"], ["check", "PIPE"], ["explain", "--tile", "PIPE:0"]])
def test_a_stream_longer_than_the_memory_budget_is_refused_while_it_is_read(tmp_path: Path, args: List[str]) -> None:
    """Standard input or a named pipe tells no size, and a file is read whole: a stream larger than the memory its
    parse may take (`yes | ptonum check -`, `ptonum check - < /dev/zero`) is refused, one line, exit 2, once that
    much has been read, the rest left unread.  Was: read without bound until the OOM killer ended ptonum (exit 137,
    no message; 23 GiB resident on a 24 GiB machine)."""
    import threading

    total = 64 << 20  # more than the ~10 MB budget of the driver's 256 MiB machine
    block = (b"x" * 1023 + b"\n") * 1024  # 1 MiB in long lines: the bytes, not the lines, exceed the budget
    written = [0]
    fifo = tmp_path / "stream.csv"
    os.mkfifo(fifo)
    args = [a.replace("PIPE", str(fifo)) for a in args]

    def feed(fh: Any) -> None:
        try:
            while written[0] < total:
                fh.write(block)
                written[0] += len(block)
        except (BrokenPipeError, ValueError, OSError):
            pass
        finally:
            try:
                fh.close()
            except OSError:
                pass

    out_file, err_file = tmp_path / "out", tmp_path / "err"
    with open(out_file, "wb") as out_fh, open(err_file, "wb") as err_fh:
        proc = subprocess.Popen([sys.executable, "-c", _SMALL_MACHINE_DRIVER, *args], stdin=subprocess.PIPE,
                                stdout=out_fh, stderr=err_fh, env={**os.environ, "PTONUM_DISABLE_NUMBA": "1"})
    assert proc.stdin is not None
    if "-" in args or any(a.startswith("-:") for a in args):
        feeder = threading.Thread(target=feed, args=(proc.stdin,), daemon=True)
    else:
        proc.stdin.close()
        feeder = threading.Thread(target=lambda: feed(open(fifo, "wb")), daemon=True)
    feeder.start()
    try:
        proc.wait(timeout=300)
    finally:
        proc.kill()
        feeder.join(timeout=60)
    out, text = out_file.read_bytes(), err_file.read_text()
    assert proc.returncode == 2, text
    assert text.count("\n") == 1 and "of text, and parsing that much needs more than the" in text, text
    assert "(it is read whole: split it)" in text and out == b"", text
    assert written[0] < total  # the rest of the stream was never read


@pytest.mark.parametrize("args", [["check", "-"], ["explain", "--row", "-:3"], ["explain", "--tile", "-:0"]])
def test_closed_stdin_is_named(args: List[str]) -> None:
    """`ptonum check - <&-`: was '-: cannot read vector file (No such file or directory)' (the /dev/stdin the
    command reads names no file when descriptor 0 is closed)."""
    proc = subprocess.run([sys.executable, "-m", "ptonum", *args], capture_output=False, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, preexec_fn=lambda: os.close(0), timeout=120, text=True,
                          env={**os.environ, "PTONUM_DISABLE_NUMBA": "1"})
    assert proc.returncode == 2 and proc.stdout == "", proc.stderr
    assert proc.stderr == (f"ptonum {args[0]}: error: -: standard input is closed (started with <&-): there is "
                           "nothing to read; redirect a file into it (< FILE) or give the file's name\n")


def test_a_field_of_megabytes_is_shown_cut_in_one_line(tmp_path: Path) -> None:
    """A malformed field of megabytes (a runaway cell) was quoted whole: `check` printed a 3,000,000-character
    'malformed row: rmode: unknown rounding mode 'QQQ...'' line (10 MB for a hex field of 10 million digits, 5 MB
    for a tile case's acc_type); `explain --tile` printed it as its error line.  Now the message keeps its start
    (file, line, column) and its end (what is wrong), numbers shortened as everywhere else."""
    import gzip
    import json

    header = ("pre_quant_mode,relu_mode,acc_type,dst_type,acc_bits,quant_param,relu_param,rmode,sat,expected_bits,"
              "expected_flags")
    good = "0,0,FP32,FP32,0x3f800000,0x0000000000000000,0x00000,RNE,0,0x3f800000,0x00"
    rows = [good,  # lines 2..5: a good row, then a hex, a named and a non-ASCII field of a million characters
            good.replace(",0x3f800000,0x0000000000000000", ",0x" + "f" * 1_000_000 + ",0x0000000000000000", 1),
            good.replace(",RNE,", "," + "Q" * 1_000_000 + ",", 1),
            good.replace(",RNE,", ",R" + "\u00e9" * 1_000_000 + ",", 1)]
    csv = tmp_path / "v.csv"
    csv.write_text(header + "\n" + "\n".join(rows) + "\n", encoding="utf-8")
    r = _run(["check", csv])
    assert r.exit_code == 1, r.output[:2000]
    lines = [ln for ln in r.output.splitlines() if "malformed row:" in ln]
    assert len(lines) == 3 and max(map(len, lines)) < 1000, [ln[:300] for ln in lines]
    assert lines[0].endswith("acc_bits: 0xffffffffffffffffffff...ffffffffffffffffffff (1000000 hex digits) does not "
                             "fit in 32 bits"), lines[0][:300]
    assert f"v.csv:4: malformed row: rmode: unknown rounding mode '{'Q' * 20}" in lines[1], lines[1][:300]
    assert " characters left out) ..." in lines[1] and lines[1].endswith(
        "QQQ' (expected one of RHB, RNA, RNE, RTM, RTO, RTP, RTZ)"), lines[1][-300:]
    assert lines[2].endswith("\u00e9' holds the character U+00E9 '\u00e9' (the schema's columns are ASCII text)")
    r = _run(["explain", "--row", f"{csv}:4"])
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and len(r.stderr) < 1000, r.stderr[:300]
    assert r.stderr.startswith(f"ptonum explain: error: {csv}:4: malformed row: rmode: unknown rounding mode 'QQQ")

    cases = json.loads(gzip.decompress((Path(ptonum.__file__).parent / "data" / "vectors" / "tiles.json.gz")
                                       .read_bytes()))[:2]
    cases[1]["case"]["acc_type"] = "X" * 1_000_000
    tiles = tmp_path / "t.json"
    tiles.write_text(json.dumps(cases), encoding="utf-8")
    r = _run(["check", tiles])
    assert r.exit_code == 1, r.output[:2000]
    (line,) = [ln for ln in r.output.splitlines() if "malformed tile:" in ln]
    assert len(line) < 1000 and line.startswith(f"  {tiles}: malformed tile: item 1.case.acc_type = \"XXXX"), line[:300]
    assert line.endswith('XXX": expected one of FP32, S32, U32'), line[-300:]
    r = _run(["explain", "--tile", f"{tiles}:1"])
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and len(r.stderr) < 1000, r.stderr[:300]
    assert r.stderr.endswith('XXX": expected one of FP32, S32, U32\n'), r.stderr[-300:]


@pytest.mark.parametrize("sign", ["", "-"])
def test_a_json_integer_too_long_to_read_is_located(tmp_path: Path, sign: str) -> None:
    """A tile file holding an integer of 5001 digits was refused as 'not a JSON tile list (Exceeds the limit (4300
    digits) for integer string conversion: value has 5001 digits; use sys.set_int_max_str_digits() to increase the
    limit)': advice for a Python program, not for the command's user, and no place.  Now the line and column."""
    text = ('[{"case": {"acc": [["0x' + "1" * 5000 + '"]], "pre_quant_mode": ' + sign + "7" * 5001
            + ', "sat": 0}, "expected": {}, "source": "s"}]')
    column = text.index(sign + "7" * 5001) + 1
    f = tmp_path / "t.json"
    f.write_text(text, encoding="ascii")
    expected = (f"{f}: not a JSON tile list (line 1, column {column}: a number of 5001 digits, more than the 4300 a "
                "JSON integer is read with; no tile field holds one)\n")
    for args in (["check", f], ["explain", "--tile", f"{f}:0"]):
        r = _run(args)
        assert (r.exit_code, r.stderr) == (2, f"ptonum {args[0]}: error: " + expected), r.stderr


@pytest.mark.parametrize("given, sub", [(["--row", "ROW"], ["tcvt", "--bits", "0x3f800000", "--src-type", "FP32"]),
                                        (["--tile", "TILE"], ["reduction", "--help"]),
                                        (["--tile", "TILE", "--element", "0,1"], ["tcvt", "--bits", "0x3f800000",
                                                                                  "--src-type", "FP32"])])
def test_explain_row_or_tile_with_a_subcommand_is_refused_not_ignored(tmp_path: Path, given: List[str],
                                                                       sub: List[str]) -> None:
    """`ptonum explain --row v.csv:2 tcvt ...` ran the tcvt trace alone and exited 0: the row (whose expected value
    the model contradicts, exit 1 on its own) was never read -- a silent pass.  Now a usage error, exit 2."""
    vec = tmp_path / "v.csv"
    vec.write_text("src_type,src_bits,rmode,sat,expected_bits,expected_flags\nFP32,0x3f800000,RNE,0,0x00,0x00\n")
    assert _run(["explain", "--row", f"{vec}:2"]).exit_code == 1  # the row alone: a mismatch
    args = [{"ROW": f"{vec}:2", "TILE": f"{vec}:0"}.get(a, a) for a in given]
    r = _run(["explain", *args, *sub])
    names = " and ".join(a for a in given if a.startswith("--"))
    assert (r.exit_code, r.stdout) == (2, ""), r.output
    assert r.stderr == (f"ptonum explain: error: {names} cannot go with `explain {sub[0]}`, which traces the element "
                        "its own options give: give one or the other (see 'ptonum explain --help')\n"), r.stderr


def test_a_lone_cr_in_a_row_with_a_quoted_field_is_a_malformed_row(tmp_path: Path) -> None:
    """A row holding a lone CR outside quotes (mixed line ends) and a double-quoted field (a quoted comment) made
    the whole file an 'internal error: Error: new-line character seen in unquoted field - do you need to open the
    file in universal-newline mode?' (csv refused the line a second time); `check` and `explain --row` of any of
    its lines.  That row is now malformed for its CR, as a row with a lone CR and no quote already was."""
    header = "src_type,src_bits,rmode,sat,expected_bits,expected_flags,comment"
    good = 'FP32,0x3f800000,RNE,0,0x7f,0x00,"one, two"'
    vec = tmp_path / "v.csv"
    vec.write_bytes(f"{header}\n{good}\n{good.replace(',RNE,', ',RNE' + chr(13) + ',')}\n{good}\n".encode())
    r = _run(["check", vec])
    assert r.exit_code == 1, r.output
    assert (f"  {vec}:3: malformed row: holds a CR that ends no line (a lone CR in text whose lines end in LF or CR "
            "LF: mixed line ends") in r.stdout, r.output
    assert r.stdout.rstrip().endswith("FAIL: 1 malformed row(s); 2 row(s) checked"), r.output
    r = _run(["explain", "--row", f"{vec}:3"])
    assert r.exit_code == 2 and r.stderr.startswith(f"ptonum explain: error: {vec}:3: malformed row: holds a CR"), r.stderr
    r = _run(["explain", "--row", f"{vec}:4"])
    assert r.exit_code == 0 and "MATCH: the model" in r.stdout, r.output


def test_a_decimal_field_too_wide_for_64_bits_is_out_of_range_not_a_non_integer(tmp_path: Path) -> None:
    """A decimal column holding an integer wider than 64 bits (`pre_quant_mode` 99999999999999999999, or one of
    6000 digits) was 'bad pre_quant_mode '99999999999999999999' (expected a decimal integer)': it is one; the
    int64 column could not hold it.  Now 'out of range 0..63', as 64 is."""
    header = ("pre_quant_mode,relu_mode,acc_type,dst_type,acc_bits,quant_param,relu_param,rmode,sat,expected_bits,"
              "expected_flags")
    good = "0,0,FP32,FP32,0x3f800000,0x0000000000000000,0x00000,RNE,0,0x3f800000,0x00"
    vec = tmp_path / "v.csv"
    vec.write_text("\n".join([header, good, "99999999999999999999" + good[1:], "-" + "7" * 6000 + good[1:],
                              "64" + good[1:]]) + "\n")
    r = _run(["check", vec])
    assert r.exit_code == 1, r.output
    lines = [ln.strip() for ln in r.stdout.splitlines() if "malformed row:" in ln]
    assert lines == [f"{vec}:3: malformed row: pre_quant_mode: pre_quant_mode = 99999999999999999999 out of range 0..63",
                     f"{vec}:4: malformed row: pre_quant_mode: pre_quant_mode = -{'7' * 20}...{'7' * 20} (6000 digits) "
                     "out of range 0..63",
                     f"{vec}:5: malformed row: pre_quant_mode: pre_quant_mode = 64 out of range 0..63"], lines


def test_a_repeated_header_line_is_named_as_such(tmp_path: Path) -> None:
    """`cat a.csv b.csv | ptonum check -` (or a header pasted twice): the second header line was reported as
    'malformed row: pre_quant_mode: bad pre_quant_mode 'pre_quant_mode' (expected a decimal integer)'.  Now the
    row says it is the header line again; it is still a malformed row (exit 1), the others are checked."""
    header = ("pre_quant_mode,relu_mode,acc_type,dst_type,acc_bits,quant_param,relu_param,rmode,sat,expected_bits,"
              "expected_flags")
    good = "0,0,FP32,FP32,0x3f800000,0x0000000000000000,0x00000,RNE,0,0x3f800000,0x00"
    vec = tmp_path / "v.csv"
    vec.write_text("\n".join([header, good, header.replace(",", " , "), good]) + "\n")
    message = ("malformed row: the header line again, not a data row (two vector files joined, as by `cat a.csv "
               "b.csv`? only a file's first line is its header)")
    r = _run(["check", vec])
    assert r.exit_code == 1, r.output
    assert f"  {vec}:3: {message}\n" in r.stdout and "FAIL: 1 malformed row(s); 2 row(s) checked" in r.stdout, r.output
    r = _run(["explain", "--row", f"{vec}:3"])
    assert (r.exit_code, r.stderr) == (2, f"ptonum explain: error: {vec}:3: {message}\n"), r.stderr
