"""``ptonum compile`` and the cold-kernel-cache note of postprocess/compare/tcvt."""

from __future__ import annotations

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


@pytest.fixture
def f32_file(tmp_path):
    p = tmp_path / "x.npy"
    np.save(p, np.array([1.0, 3.0, 0.25, 96.0], np.float32))
    return str(p)


@needs_numba
@pytest.mark.parametrize("warm,min_elements,engine,noted", [
    (False, "0", "fast", True),        # kernels used, cache cold: the note
    (True, "0", "fast", False),        # warm: silent
    (False, "1000", "fast", False),    # below PTONUM_KERNEL_MIN_ELEMENTS: numpy path, silent
    (False, "0", "reference", False),  # reference engine never compiles
])
def test_tcvt_cold_cache_note(monkeypatch, f32_file, warm, min_elements, engine, noted):
    monkeypatch.setenv("PTONUM_KERNEL_MIN_ELEMENTS", min_elements)
    monkeypatch.setattr(kernels, "kernel_cache_warm", lambda name: warm)
    r = CliRunner().invoke(main, ["tcvt", f32_file, "--engine", engine])
    assert r.exit_code == 0, r.output
    assert (r.stderr == COLD_NOTE + "\n") is noted, r.stderr
    assert "0x7f" in r.stdout  # 1.0 -> 2^0: E8M0 code 0x7f (bias 127, ADR-0085 D183)


@needs_numba
@pytest.mark.parametrize("cmd", ["postprocess", "compare"])
def test_tile_commands_cold_cache_note(monkeypatch, tmp_path, cmd):
    monkeypatch.setenv("PTONUM_KERNEL_MIN_ELEMENTS", "0")
    seen = []
    monkeypatch.setattr(kernels, "kernel_cache_warm", lambda name: seen.append(name) or False)
    acc = tmp_path / "acc.npy"
    np.save(acc, np.arange(-8, 8, dtype=np.int32).reshape(2, 8))
    args = [cmd, str(acc), "--mode", "SHIFTS322S16", "--shift", "1", "--out-dir", str(tmp_path / "o")]
    if cmd == "compare":
        # D of SHIFTS322S16 with shift 1 is acc >> 1 (arithmetic), as S16 encodings
        np.save(tmp_path / "dev.npy", (np.arange(-8, 8, dtype=np.int32).reshape(2, 8) >> 1).astype(np.int16)
                .view(np.uint16))
        args = [a for a in args if a not in ("--out-dir", str(tmp_path / "o"))] + ["--device-d",
                                                                                   str(tmp_path / "dev.npy")]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    assert r.stderr.splitlines()[0] == COLD_NOTE and seen == ["postprocess"]


@needs_numba
def test_cold_note_without_writable_cache_dir_is_the_one_note(monkeypatch, capsys):
    from ptonum.cli.compile_cmd import warn_if_cold

    monkeypatch.setenv("PTONUM_KERNEL_MIN_ELEMENTS", "0")
    monkeypatch.setattr(kernels, "kernel_cache_warm", lambda name: False)
    monkeypatch.setattr(kernels, "writable_cache_dir", lambda: None)
    monkeypatch.setattr(kernels, "_NOTED", set())
    warn_if_cold("tcvt", 4)
    warn_if_cold("tcvt", 4)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("ptonum: note: no writable kernel cache directory (tried ")
    assert COLD_NOTE not in err  # "cached for later runs" would not be true
