"""``ptonum compile`` and the cold-kernel-cache note of postprocess/compare/tcvt."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner

import ptonum.kernels as kernels
from ptonum.cli import main
from ptonum.cli.compile_cmd import COLD_NOTE

needs_numba = pytest.mark.skipif(not kernels.NUMBA_AVAILABLE, reason="numba not installed")


@needs_numba
@pytest.mark.parametrize("var", ["PTONUM_CACHE_DIR", "NUMBA_CACHE_DIR"])
def test_cache_dir_variable_comes_first(tmp_path, var):
    # a cold cache (every directory empty) is tested on a copied install in test_kernels.py
    env = {k: v for k, v in os.environ.items() if k not in ("PTONUM_CACHE_DIR", "NUMBA_CACHE_DIR")}
    env[var] = str(tmp_path)
    out = subprocess.run([sys.executable, "-c", "from ptonum.kernels import kernel_cache_dir as d, kernel_cache_dirs "
                          "as ds; print(d('tcvt'), ds()[0])"],
                         env=env, capture_output=True, text=True, check=True).stdout.split()
    assert out[0] == out[1] and out[0].startswith(str(tmp_path) + os.sep)


def test_unknown_module_is_cold():
    assert kernels.kernel_cache_warm("no_such_module") is False


@needs_numba
def test_compile_command_leaves_every_kernel_warm():
    r = CliRunner().invoke(main, ["compile"])
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert [ln.split()[0] for ln in lines[:3]] == ["postprocess", "tcvt", "decompose"]
    assert lines[3].startswith("all kernels ready in ") and "cache: " in lines[3]
    assert all(kernels.kernel_cache_warm(m) for m in ("postprocess", "tcvt", "decompose"))


def test_compile_without_numba_says_so(monkeypatch):
    monkeypatch.setenv("PTONUM_DISABLE_NUMBA", "1")
    r = CliRunner().invoke(main, ["compile"])
    assert r.exit_code == 0 and r.stdout.startswith("nothing to compile")


def test_compile_names_the_disabling_value(monkeypatch):
    """It said "PTONUM_DISABLE_NUMBA is set", also for a set value that leaves the kernels on elsewhere
    (``=0`` never reaches this line; ``=yes`` does): the line names the value that turned them off."""
    monkeypatch.setenv("PTONUM_DISABLE_NUMBA", "yes")
    r = CliRunner().invoke(main, ["compile"])
    kernels = pytest.importorskip("ptonum.kernels")
    why = ("numba is not installed" if not kernels.NUMBA_AVAILABLE
           else "PTONUM_DISABLE_NUMBA = 'yes' turns the kernels off")
    assert r.exit_code == 0 and r.stdout == f"nothing to compile: {why}; the fast engine uses numpy only\n", r.output


@pytest.fixture
def f32_file(tmp_path):
    p = tmp_path / "x.npy"
    np.save(p, np.array([1.0, 3.0, 0.25, 96.0], np.float32))
    return str(p)


@pytest.fixture
def armed(monkeypatch):
    """The texts the command arms :class:`ptonum.kernels.compile_note` with (nothing is written), with
    stderr taken for a terminal (the note is for a person watching; CliRunner's stderr is no terminal)."""
    import ptonum.cli.compile_cmd as compile_cmd

    monkeypatch.setattr(compile_cmd, "stderr_is_terminal", lambda: True)
    seen = []

    class Recorder(contextlib.nullcontext):
        def __init__(self, text):
            seen.append(text)
            super().__init__()

    monkeypatch.setattr(kernels, "compile_note", Recorder)
    return seen


@needs_numba
@pytest.mark.parametrize("min_elements,engine,noted", [
    ("0", "fast", True),         # kernels used: the note is armed for a compilation
    ("1000", "fast", False),     # below PTONUM_KERNEL_MIN_ELEMENTS: numpy path, nothing armed
    ("0", "reference", False),   # reference engine never compiles
])
def test_tcvt_arms_the_compile_note(monkeypatch, f32_file, armed, min_elements, engine, noted):
    monkeypatch.setenv("PTONUM_KERNEL_MIN_ELEMENTS", min_elements)
    r = CliRunner().invoke(main, ["tcvt", f32_file, "--engine", engine])
    assert r.exit_code == 0, r.output
    assert armed == ([COLD_NOTE] if noted else []) and r.stderr == ""
    assert "0x7f" in r.stdout  # 1.0 -> 2^0: E8M0 code 0x7f (bias 127, ADR-0085 D183)


@needs_numba
def test_the_compile_note_is_not_armed_when_stderr_is_no_terminal(monkeypatch, f32_file, armed):
    """A script or test capturing stderr (a pipe, a file, CliRunner) never gets the note: it was armed, and
    written, wherever stderr went."""
    import ptonum.cli.compile_cmd as compile_cmd

    monkeypatch.setenv("PTONUM_KERNEL_MIN_ELEMENTS", "0")
    monkeypatch.setattr(compile_cmd, "stderr_is_terminal", lambda: False)
    r = CliRunner().invoke(main, ["tcvt", f32_file])
    assert r.exit_code == 0, r.output
    assert armed == [] and r.stderr == "" and "0x7f" in r.stdout


@needs_numba
def test_check_arms_the_compile_note(monkeypatch, tmp_path, armed):
    """probe13 #11: ``ptonum check`` compiled kernels without the note the other commands print."""
    monkeypatch.setenv("PTONUM_KERNEL_MIN_ELEMENTS", "0")
    vec = tmp_path / "v.csv"
    vec.write_text("fp32_bits,expected_fp19\n0x3f800000,0x1fc00\n")
    r = CliRunner().invoke(main, ["check", str(vec)])
    assert r.exit_code == 0, r.output
    assert armed == [COLD_NOTE] and r.stderr == ""


@needs_numba
@pytest.mark.parametrize("cmd", ["postprocess", "compare", "postprocess-chunked"])
def test_tile_commands_arm_the_compile_note(monkeypatch, tmp_path, armed, cmd):
    """The chunked run (its chunks in this process's threads) arms it too (it did not: minutes of compiling
    in the first chunk with nothing on the screen)."""
    monkeypatch.setenv("PTONUM_KERNEL_MIN_ELEMENTS", "0")
    acc = tmp_path / "acc.npy"
    np.save(acc, np.arange(-8, 8, dtype=np.int32).reshape(2, 8))
    args = [cmd, str(acc), "--mode", "SHIFTS322S16", "--shift", "1", "--out-dir", str(tmp_path / "o")]
    if cmd == "postprocess-chunked":
        pytest.importorskip("dask.array")
        args = ["postprocess", "--chunks", "1x8"] + args[1:]
    if cmd == "compare":
        # D of SHIFTS322S16 with shift 1 is acc >> 1 (arithmetic), as S16 encodings
        np.save(tmp_path / "dev.npy", (np.arange(-8, 8, dtype=np.int32).reshape(2, 8) >> 1).astype(np.int16)
                .view(np.uint16))
        args = [a for a in args if a not in ("--out-dir", str(tmp_path / "o"))] + ["--device-d",
                                                                                   str(tmp_path / "dev.npy")]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    assert armed == [COLD_NOTE] and r.stderr == ""


# A kernel module of its own (its own cache entries): the note is written from the cache's miss
KERNEL_MODULE = """
from ptonum.kernels import njit


@njit
def add_kernel(x):
    return x + 1
"""

KERNEL_RUN = """
import sys
from ptonum import kernels
import {name} as mod
with kernels.compile_note("COMPILING"):
    for x in {args}:
        sys.stderr.write("call %r\\n" % (x,))
        mod.add_kernel(x)
"""


@needs_numba
def test_compile_note_exactly_when_a_kernel_compiles(tmp_path):
    # fresh processes over a fresh cache directory: the note appears before the first compilation only,
    # not for a specialization the cache holds, and again for a new argument type (a new compilation)
    (tmp_path / "pt_note_kernels.py").write_text(KERNEL_MODULE)
    env = {**os.environ, "PTONUM_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(tmp_path)}
    env.pop("NUMBA_CACHE_DIR", None)

    def run(args):
        code = KERNEL_RUN.format(name="pt_note_kernels", args=args)
        return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                              check=True).stderr

    # the note is a ptonum note like every other one (the prefix was missing until stop 13)
    assert run("[1, 2]") == "call 1\nptonum: note: COMPILING\ncall 2\n"
    assert run("[1, 2.5]") == "call 1\ncall 2.5\nptonum: note: COMPILING\n"


@needs_numba
def test_compile_note_without_writable_cache_dir_is_the_one_note(monkeypatch, tmp_path, capsys):
    (tmp_path / "pt_note_nocache.py").write_text(KERNEL_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(kernels, "_writable_dir", lambda path: False)
    monkeypatch.setattr(kernels, "_NOTED", set())
    import pt_note_nocache

    with kernels.compile_note(COLD_NOTE):
        assert pt_note_nocache.add_kernel(1) == 2
        assert pt_note_nocache.add_kernel(1.5) == 2.5
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("ptonum: note: no writable kernel cache directory (tried ")
    assert COLD_NOTE not in err  # "cached for later runs" would not be true
    assert "compiling a kernel now (several minutes), kept in this process only" in err  # probe13 #15


def test_compile_note_is_silent_outside_its_block(monkeypatch, capsys):
    monkeypatch.setattr(kernels, "_NOTED", set())
    with kernels.compile_note("inner"):
        pass
    kernels._say_compiling()  # a compilation outside any block: the library stays silent
    assert capsys.readouterr().err == ""


# The note through a real terminal: a fresh kernel of its own (fresh cache directory, compiled in about a second)
# run under the command line's warn_if_cold, with stderr a pseudo-terminal or a pipe
TTY_RUN = """
import sys
from ptonum.cli.compile_cmd import warn_if_cold
import pt_tty_kernels as mod
with warn_if_cold(1):
    value = mod.add_kernel(1)
print("result", value)
"""


@needs_numba
@pytest.mark.skipif(not hasattr(os, "openpty"), reason="no pseudo-terminals here")
@pytest.mark.parametrize("terminal", [True, False])
def test_compile_note_only_on_a_terminal(tmp_path, terminal):
    """On a terminal (a pty) the line appears once, just before the compilation; with stderr a pipe it never
    does (it did: scripts and tests capturing stderr got it).  stdout and the exit status are the same."""
    (tmp_path / "pt_tty_kernels.py").write_text(KERNEL_MODULE)
    env = {**os.environ, "PTONUM_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(tmp_path),
           "PTONUM_KERNEL_MIN_ELEMENTS": "0"}
    for var in ("NUMBA_CACHE_DIR", "PTONUM_DISABLE_NUMBA", "NUMBA_DISABLE_JIT"):
        env.pop(var, None)
    if terminal:
        master, slave = os.openpty()
        try:
            r = subprocess.run([sys.executable, "-c", TTY_RUN], env=env, stdout=subprocess.PIPE, stderr=slave,
                               text=True, timeout=300)
            os.close(slave)
            err = b""
            while True:
                try:
                    chunk = os.read(master, 4096)
                except OSError:  # EIO: the terminal's other side is closed and drained
                    break
                if not chunk:
                    break
                err += chunk
        finally:
            os.close(master)
        text = err.decode().replace("\r\n", "\n")
    else:
        r = subprocess.run([sys.executable, "-c", TTY_RUN], env=env, capture_output=True, text=True, timeout=300)
        text = r.stderr
    assert (r.returncode, r.stdout) == (0, "result 2\n")
    assert text == (f"ptonum: note: {COLD_NOTE}\n" if terminal else "")


# Kernels compiled on Dask workers: the client says so once, before any task (it said nothing: a cold-cache
# distributed run sat silent for minutes)


class _TwoWorkers:
    """A client stand-in whose ``run`` asks two 'workers' (this process) and records the calls."""

    def __init__(self) -> None:
        self.calls = 0

    def run(self, fn, *args, on_error="raise"):
        self.calls += 1
        return {"tcp://w1": fn(*args), "tcp://w2": fn(*args)}


@pytest.fixture
def cold_workers(monkeypatch):
    """Every kernel cache index reads as cold, stderr counts as a terminal, no note said yet."""
    import ptonum.cli.compile_cmd as compile_cmd

    monkeypatch.setattr(kernels, "kernel_cache_warm", lambda name: False)
    monkeypatch.setattr(compile_cmd, "stderr_is_terminal", lambda: True)
    monkeypatch.setattr(kernels, "_NOTED", set())
    monkeypatch.setenv("PTONUM_KERNEL_MIN_ELEMENTS", "0")
    monkeypatch.delenv("PTONUM_DISABLE_NUMBA", raising=False)
    # a worker of the threads cluster below is this process: the in-process note a tile it runs arms (which a
    # worker process never writes: its stderr is no terminal) is not the subject here
    monkeypatch.setattr(kernels, "compile_note", lambda text: contextlib.nullcontext())


@needs_numba
def test_workers_cold_note_once_from_the_client(cold_workers, monkeypatch, capsys):
    import ptonum.cli.compile_cmd as compile_cmd
    from ptonum.cli.compile_cmd import WORKERS_COLD_NOTE, compile_note_for

    client = _TwoWorkers()
    for _ in range(2):
        with compile_note_for(client, 16, "fast", ("postprocess",)):
            pass
    assert client.calls == 2
    assert capsys.readouterr().err == f"ptonum: note: {WORKERS_COLD_NOTE}\n"  # two workers, two runs: one line
    assert WORKERS_COLD_NOTE == ("the Dask workers are compiling the fast kernels once (several minutes; "
                                 "cached for later runs; `ptonum compile` where the workers run does it ahead of time)")
    monkeypatch.setattr(kernels, "_NOTED", set())
    with compile_note_for(client, 16, "reference", ("postprocess",)):  # the reference engine compiles nothing
        pass
    monkeypatch.setenv("PTONUM_KERNEL_MIN_ELEMENTS", "17")  # below it the workers take the numpy path
    with compile_note_for(client, 16, "fast", ("postprocess",)):
        pass
    monkeypatch.setenv("PTONUM_KERNEL_MIN_ELEMENTS", "0")
    monkeypatch.setattr(kernels, "kernel_cache_warm", lambda name: True)  # warm workers
    with compile_note_for(client, 16, "fast", ("postprocess",)):
        pass
    monkeypatch.setattr(kernels, "kernel_cache_warm", lambda name: False)
    monkeypatch.setattr(compile_cmd, "stderr_is_terminal", lambda: False)  # a script: never
    with compile_note_for(client, 16, "fast", ("postprocess",)):
        pass
    assert capsys.readouterr().err == "" and client.calls == 4  # asked below the minimum and when warm


@pytest.fixture
def threads_cluster():
    """A scheduler whose two workers are threads of this process (so the patches above reach them)."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0") as c:
        with distributed.Client(c):
            yield c.scheduler_address


@needs_numba
def test_a_batch_on_workers_says_the_workers_compile(cold_workers, threads_cluster, tmp_path, monkeypatch):
    """A batch of in-memory files on workers: sized from the .npy headers (and --shape of .bin files); a
    batch whose tiles are all below PTONUM_KERNEL_MIN_ELEMENTS, or .npz only, says nothing."""
    from ptonum.cli.compile_cmd import WORKERS_COLD_NOTE

    acc = np.arange(-16, 16, dtype=np.int32).reshape(4, 8)
    for name in ("a", "b"):
        np.save(tmp_path / f"{name}.npy", acc)
    np.savez(tmp_path / "c.npz", acc=acc)
    mode = ["--mode", "SHIFTS322S16", "--shift", "1", "--scheduler", threads_cluster]
    both = [tmp_path / "a.npy", tmp_path / "b.npy"]
    for files, minimum, said in (([tmp_path / "c.npz"], "0", False), (both, "33", False), (both, "32", True)):
        monkeypatch.setenv("PTONUM_KERNEL_MIN_ELEMENTS", minimum)
        out = tmp_path / f"o{minimum}{len(files)}"
        r = CliRunner().invoke(main, ["postprocess", *map(str, files), "--out-dir", str(out), *mode, "--no-progress"])
        assert r.exit_code == 0, r.output
        assert r.stderr == (f"ptonum: note: {WORKERS_COLD_NOTE}\n" if said else ""), (files, minimum)


@needs_numba
@pytest.mark.parametrize("cmd", ["postprocess-chunked", "sweep", "check"])
def test_distributed_runs_say_the_workers_compile(cold_workers, threads_cluster, tmp_path, cmd):
    zarr = pytest.importorskip("zarr")
    from ptonum.cli.compile_cmd import WORKERS_COLD_NOTE
    from ptonum.conformance.schema import builtin_vector_files

    if cmd == "check":  # TCVT vectors run the tcvt kernels; FP32->FP19 vectors no kernel: no line for them
        files = {p.name: str(p) for p in builtin_vector_files()}
        r = CliRunner().invoke(main, ["check", files["fp32_to_fp19.csv.gz"], "--scheduler", threads_cluster])
        assert (r.exit_code, r.stderr) == (0, ""), r.output
        # a kernel file between two files of operations without a kernel (the same file twice would be checked
        # once, with a note of its own)
        args = ["check", files["fp32_to_fp19.csv.gz"], files["tcvt_e8m0.csv.gz"], files["quant_param_legal.csv.gz"]]
    elif cmd == "sweep":
        args = ["sweep", "tcvt", "--src-type", "FP16", "--range", "0x3c00:0x3c40", "--partition-size", "16",
                "--state", str(tmp_path / "s")]
    else:
        z = zarr.open_array(str(tmp_path / "acc.zarr"), mode="w", shape=(4, 8), chunks=(2, 8), dtype=np.int32)
        z[:] = np.arange(-16, 16, dtype=np.int32).reshape(4, 8)
        args = ["postprocess", str(tmp_path / "acc.zarr"), "--mode", "SHIFTS322S16", "--shift", "1", "--out-dir",
                str(tmp_path / "o")]
    r = CliRunner().invoke(main, args + ["--scheduler", threads_cluster] + (["--no-progress"] if cmd != "check" else []))
    assert r.exit_code == 0, r.output
    assert r.stderr == f"ptonum: note: {WORKERS_COLD_NOTE}\n"


@needs_numba
def test_sweep_in_this_process_arms_the_compile_note(monkeypatch, tmp_path, armed):
    """A sweep without workers compiled its kernels without the note the other commands print."""
    monkeypatch.setenv("PTONUM_KERNEL_MIN_ELEMENTS", "0")
    r = CliRunner().invoke(main, ["sweep", "tcvt", "--src-type", "FP16", "--range", "0x3c00:0x3c10", "--state",
                                  str(tmp_path / "s")])
    assert r.exit_code == 0, r.output
    assert armed == [COLD_NOTE] and r.stderr == ""
