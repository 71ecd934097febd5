"""File handling of the CLI: tcvt --out writes exactly OUT; broken .npy/.npz inputs are named as such."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from ptonum.cli import main


def _run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _one_line(r, start, fragment):
    assert r.exit_code == 2, r.output
    assert r.stderr.count("\n") == 1 and r.stderr.startswith(start) and fragment in r.stderr, r.stderr


@pytest.fixture
def facc(tmp_path):
    p = tmp_path / "facc.npy"
    np.save(p, np.array([1.0, 2.0, 0.5, 1.5], np.float32))
    return p


def test_tcvt_out_with_another_suffix_is_refused_before_writing(tmp_path, facc):
    out = tmp_path / "out" / "y.txt"
    r = _run("tcvt", facc, "--out", out)
    _one_line(r, "ptonum tcvt: error: --out = ", "give a .npy file name")
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


@pytest.mark.parametrize("name", ["codes.NPY", "codes.npy", "codes[b].npy"])  # [b]: text, not rich markup
def test_tcvt_out_is_the_path_written_and_reported(tmp_path, facc, name):
    out = tmp_path / name
    r = _run("tcvt", facc, "--out", out)
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["facc.npy", name])
    # ml_dtypes: float8_e8m0fnu of 1, 2, 0.5 are 0x7f, 0x80, 0x7e; 1.5 rounds (RNE) to 2 -> 0x80
    assert np.load(out).tolist() == [0x7F, 0x80, 0x7E, 0x80]
    assert f"codes written to {out}" in " ".join(r.stdout.split())


@pytest.mark.parametrize("suffix", [".npy", ".npz"])
def test_garbage_numpy_file_is_not_a_valid_file(tmp_path, suffix):
    bad = tmp_path / f"bad{suffix}"
    bad.write_bytes(b"abcde")
    r = _run("postprocess", bad, "--mode", "REQ8", "--scale", "1", "--out-dir", tmp_path / "o")
    _one_line(r, "ptonum postprocess: error: ACC: ", f"{bad}: not a valid {suffix} file")
    assert "pickle" not in r.stderr
    if suffix == ".npy":
        r = _run("tcvt", bad)
        _one_line(r, "ptonum tcvt: error: FILE: ", f"{bad}: not a valid .npy file")
        assert "pickle" not in r.stderr


def test_truncated_and_object_npy(tmp_path):
    whole = tmp_path / "whole.npy"
    np.save(whole, np.arange(100, dtype=np.float32))
    cut = tmp_path / "cut.npy"
    cut.write_bytes(whole.read_bytes()[:150])
    _one_line(_run("tcvt", cut), "ptonum tcvt: error: FILE: ", f"{cut}: not a valid .npy file")
    obj = tmp_path / "obj.npy"
    np.save(obj, np.array([1, "a"], dtype=object), allow_pickle=True)
    _one_line(_run("tcvt", obj), "ptonum tcvt: error: FILE: ", "holds Python objects")
