"""ptonum.npyfile: the one .npy/.npz header check, and every reader of the command line and of
ptonum.dask refusing a bad file with its one message."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any, List, Tuple

import numpy as np
import pytest
from click.testing import CliRunner

from ptonum.cli import main
from ptonum.dask import open_tile
from ptonum.errors import UsageError
from ptonum.npyfile import check_numpy_file


def _npy(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr)
    return buf.getvalue()


def _header_npy(header: str) -> bytes:
    """A version 1.0 .npy file with this header text (padded as numpy pads it) and 32 zero bytes."""
    text = header.encode("latin1")
    text += b" " * (63 - (10 + len(text)) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + len(text).to_bytes(2, "little") + text + b"\0" * 32


def _bad_files(tmp_path: Path) -> List[Tuple[Path, str]]:
    """(file, the message after ``NAME: FILE``) for a file of each kind of defect."""
    good = _npy(np.arange(16, dtype=np.int32).reshape(2, 8))
    cases = {
        "trail.npy": (good + b"\0" * 8,
                      ": not a valid .npy file (trailing data or lying header): the header claims 2x8 int32 "
                      "(64 bytes) but the file holds 72 bytes of data (8 bytes after the array)"),
        "short.npy": (good[:-8],
                      ": not a valid .npy file (truncated or lying header): the header claims 2x8 int32 "
                      "(64 bytes) but the file holds 56 bytes of data"),
        "text.npy": (b"1,2,3\n", ": not a valid .npy file (no NumPy header; 6 bytes)"),
        "obj.npy": (_npy(np.array([1, "a"], dtype=object)),
                    " holds Python objects (an object array); ptonum reads numeric arrays only"),
        # a header that is no literal: the reason in words, not the repr of a parser node ("<ast.Call
        # object at 0x7f...>", h-user stop 36)
        "call.npy": (_header_npy("{'descr': '<i4', 'fortran_order': False, 'shape': (2, 4), 'x': f(1), }"),
                     ": malformed .npy header (not a Python literal: a call, a name or an operator where numpy "
                     "writes a dict of literals)"),
    }
    out = []
    for name, (data, tail) in cases.items():
        (tmp_path / name).write_bytes(data)
        out.append((tmp_path / name, tail))
    return out


def test_check_numpy_file_names_the_option_the_file_and_both_sizes(tmp_path: Path) -> None:
    for path, tail in _bad_files(tmp_path):
        with pytest.raises(UsageError) as exc:
            check_numpy_file("--quant-tile", path)
        assert str(exc.value) == f"--quant-tile: {path}{tail}"
    ok = tmp_path / "ok.npy"
    ok.write_bytes(_npy(np.zeros((3, 4), np.uint8)))
    check_numpy_file("ACC", ok)  # a well-formed file passes


def test_every_reader_refuses_a_bad_npy_with_the_one_message(tmp_path: Path, monkeypatch: Any) -> None:
    """The command line's readers and ``ptonum.dask.open_tile`` (a chunked ACC) say the same; the
    chunked reader used to re-check only trailing bytes, with numpy's own words for the rest."""
    monkeypatch.chdir(tmp_path)
    files = _bad_files(tmp_path)
    for path, tail in files:
        r = CliRunner().invoke(main, ["postprocess", str(path), "--mode", "REQ8", "--scale", "0.5"])
        assert (r.exit_code, r.stdout, r.stderr) == (2, "", f"ptonum postprocess: error: ACC: {path}{tail}\n")
        r = CliRunner().invoke(main, ["tcvt", str(path)])
        assert (r.exit_code, r.stderr) == (2, f"ptonum tcvt: error: FILE: {path}{tail}\n")
    for path, tail in files:
        with pytest.raises(UsageError) as exc:
            open_tile(path)
        assert str(exc.value) == f"ACC: {path}{tail}"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p, _ in files)
