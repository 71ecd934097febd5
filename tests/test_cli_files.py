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


def _exact_error(r, line):
    assert (r.exit_code, r.stdout) == (2, ""), r.output
    assert r.stderr == line + "\n"


def test_accumulator_and_dump_errors_name_the_file(tmp_path, monkeypatch):
    """A bad ACC or device dump (dtype, shape, element) is named by option and file (was: `acc:`/`ACC:`
    or the option alone)."""
    monkeypatch.chdir(tmp_path)
    np.save("f64.npy", np.zeros((2, 8)))
    np.save("t3.npy", np.zeros((2, 2, 8), np.int32))
    np.save("wide.npy", np.array([[1, 1 << 40]], np.int64))
    np.save("f32.npy", np.ones((2, 8), np.float32))
    np.save("acc.npy", np.ones((2, 8), np.int32))
    shift = ["--mode", "SHIFTS322S16", "--shift", "1"]
    cmd = "ptonum postprocess: error: "
    _exact_error(_run("postprocess", "f64.npy", *shift),
                 cmd + "ACC: f64.npy: dtype float64 is not an accumulator; pass float32 values (FP32), int32 (S32) "
                       "or raw 32-bit encodings with --acc-type")
    for f, dt in (("b.npy", np.bool_), ("c.npy", np.complex64)):  # not "raw encodings; give --acc-type"
        np.save(f, np.zeros((2, 8), dt))
        for more in ([], ["--acc-type", "U32"]):
            _exact_error(_run("postprocess", f, *shift, *more),
                         cmd + f"ACC: {f}: dtype {np.dtype(dt)} is not an accumulator; pass float32 values (FP32), "
                               "int32 (S32) or raw 32-bit encodings with --acc-type")
    _exact_error(_run("postprocess", "t3.npy", *shift),
                 cmd + "ACC: t3.npy: expected an M x N tile (M, N >= 1), got shape 2x2x8")
    np.save("e.npy", np.zeros((0, 32), np.int32))  # the same words and shape text (was "got shape (0, 32)")
    _exact_error(_run("postprocess", "e.npy", *shift),
                 cmd + "ACC: e.npy: expected an M x N tile (M, N >= 1), got shape 0x32")
    _exact_error(_run("postprocess", "wide.npy", *shift, "--acc-type", "S32"),
                 cmd + "ACC: wide.npy: acc[0, 1] = 1099511627776: does not fit S32")
    _exact_error(_run("postprocess", "f32.npy", *shift),
                 cmd + "ACC: f32.npy is FP32 (from its dtype float32): PreQuantMode 13 (SHIFTS322S16) accepts only "
                       "S32 accumulators (ADR-0085 D179, BundleFPATRAccumulatorTypeLegal)")
    cmp = "ptonum compare: error: "
    _exact_error(_run("compare", "acc.npy", *shift, "--device-d", "f64.npy"),
                 cmp + "--device-d: f64.npy: dtype float64 is not a S16 element (give raw bits or S16 values)")
    _exact_error(_run("compare", "acc.npy", *shift, "--device-d", "t3.npy"),
                 cmp + "--device-d: t3.npy: shape 2x2x8 does not match the model's D 2x8 (a .npy/.npz dump must "
                       "have exactly the model's shape; only a raw .bin dump is read in the model's shape)")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["acc.npy", "b.npy", "c.npy", "e.npy", "f32.npy", "f64.npy",
                                                          "t3.npy", "wide.npy"]


def test_empty_paths_are_named_empty(tmp_path, monkeypatch, facc):
    """An empty path is not the current directory (was: `--out = : is a directory`, and `--out-dir ''`
    wrote into the current directory)."""
    monkeypatch.chdir(tmp_path)
    for args, line in (
        (["tcvt", facc, "--out", ""], "ptonum tcvt: error: --out: the path is empty; give a file name"),
        (["tcvt", ""], "ptonum tcvt: error: FILE: the path is empty; give a file name"),
        (["postprocess", facc, "--mode", "F322F16", "--out-dir", ""],
         "ptonum postprocess: error: --out-dir: the path is empty; give a directory (. for the current one)"),
        (["postprocess", "", "--mode", "F322F16"],
         "ptonum postprocess: error: ACC: the path is empty; give a .npy, .npz or .bin file"),
        (["check", ""], "ptonum check: error: FILES: the path is empty; give a vector file"),
        (["explain", "--row", ":2"], "ptonum explain: error: --row = ':2': expected FILE:LINE (the file name is "
                                     "empty)"),
    ):
        _exact_error(_run(*args), line)
    assert [p.name for p in tmp_path.iterdir()] == ["facc.npy"]


def test_npz_key_given_twice_differently_is_refused(tmp_path, monkeypatch):
    """``FILE.npz:x --key y`` used y without a word: two names for the array are refused, one is fine."""
    monkeypatch.chdir(tmp_path)
    a = np.arange(16, dtype=np.int32).reshape(2, 8)
    np.savez("m.npz", x=a, y=a)
    args = ["--mode", "REQ8", "--scale", "1", "--out-dir", "o"]
    _exact_error(_run("postprocess", "m.npz:x", "--key", "y", *args),
                 "ptonum postprocess: error: ACC: m.npz:x names the array 'x' and --key names 'y'; give one")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.npz"]
    np.ones(16, np.int32).tofile("f.bin")  # a key of a raw file was dropped (and named the outputs f.k.*)
    _exact_error(_run("postprocess", "f.bin", "--dtype", "int32", "--shape", "2x8", "--key", "k", *args),
                 "ptonum postprocess: error: ACC: f.bin is a raw .bin file; a key applies only to .npz")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.bin", "m.npz"]
    r = _run("postprocess", "m.npz:x", "--key", "x", *args)
    assert r.exit_code == 0 and sorted(p.name for p in (tmp_path / "o").iterdir()) == ["m.x.d.npy", "m.x.flags.json"]


def test_inputs_that_are_not_regular_files_say_what_they_are(tmp_path, monkeypatch):
    """A FIFO or device was 'file not found' (and tcvt read on); symbolic links that lead nowhere say so."""
    import os

    monkeypatch.chdir(tmp_path)
    os.mkfifo("fifo.npy")
    os.symlink("loop.npy", "loop.npy")
    os.symlink("missing.npy", "dangling.npy")
    op = ["--mode", "REQ8", "--scale", "1"]
    for path, what in (("fifo.npy", "is a named pipe (FIFO), not a file"), ("/dev/null", "is a character device, not a file"),
                       ("loop.npy", "is a symbolic link loop"), ("dangling.npy", "is a symbolic link to a missing file")):
        _exact_error(_run("postprocess", path, *op), f"ptonum postprocess: error: ACC: {path} {what}")
        _exact_error(_run("tcvt", path, "--dtype", "float32"), f"ptonum tcvt: error: FILE: {path} {what}")
    _exact_error(_run("postprocess", "nope.npy", *op), "ptonum postprocess: error: ACC: no such file: nope.npy")
    assert sorted(os.listdir(".")) == ["dangling.npy", "fifo.npy", "loop.npy"]


def _zip(path, members):
    import zipfile

    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    return str(path)


def _npy_bytes(arr):
    import io

    buf = io.BytesIO()
    np.save(buf, arr)
    return buf.getvalue()


def test_npz_members_that_are_not_npy_arrays_are_named(tmp_path, monkeypatch):
    """try14 #13: an .npz holding a non-.npy member was an internal error (numpy returns its raw bytes)."""
    monkeypatch.chdir(tmp_path)
    np.save("acc.npy", np.arange(8, dtype=np.int32).reshape(2, 4))
    _zip("notnpy.npz", {"acc.txt": b"hello"})
    _zip("mixed.npz", {"acc.npy": _npy_bytes(np.arange(8, dtype=np.int32).reshape(2, 4)), "readme.txt": b"hi"})
    op = ["--mode", "REQ8", "--scale", "1", "--out-dir", "o"]
    _exact_error(_run("postprocess", "notnpy.npz", *op),
                 "ptonum postprocess: error: ACC: notnpy.npz holds no .npy array (members: acc.txt)")
    _exact_error(_run("postprocess", "mixed.npz:readme.txt", *op),
                 "ptonum postprocess: error: ACC: mixed.npz member readme.txt: not a .npy array (the arrays: acc)")
    _exact_error(_run("postprocess", "acc.npy", "--mode", "VREQ8", "--quant-tile", "notnpy.npz", "--out-dir", "o"),
                 "ptonum postprocess: error: --quant-tile: notnpy.npz holds no .npy array (members: acc.txt)")
    _exact_error(_run("compare", "acc.npy", "--mode", "REQ8", "--scale", "1", "--device-d", "notnpy.npz"),
                 "ptonum compare: error: --device-d: notnpy.npz holds no .npy array (members: acc.txt)")
    assert not (tmp_path / "o").exists()
    r = _run("postprocess", "mixed.npz", *op)  # the one array of a mixed archive needs no key
    assert r.exit_code == 0, r.output
    assert np.load("o/mixed.d.npy").tolist() == [[0, 1, 2, 3], [4, 5, 6, 7]]


def test_tcvt_reads_npz_and_refuses_other_files_as_raw(tmp_path, monkeypatch):
    """try14 #14: `tcvt FILE.npz --dtype float32` read the zip container's bytes as FP32 values (exit 0)."""
    monkeypatch.chdir(tmp_path)
    np.savez("fz.npz", x=np.array([1, 2, 4, 8], dtype=np.float32))
    np.savez("fz2.npz", x=np.array([1, 2], dtype=np.float32), y=np.array([0.5, 0.25], dtype=np.float32))
    np.array([1, 2], dtype=np.float32).tofile("v.dat")
    _exact_error(_run("tcvt", "fz.npz", "--dtype", "float32", "--out", "c.npy"),
                 "ptonum tcvt: error: --dtype applies to raw .bin files; a .npz file carries its own dtypes")
    _exact_error(_run("tcvt", "v.dat", "--dtype", "float32", "--out", "c.npy"),
                 "ptonum tcvt: error: FILE: v.dat: unknown file type .dat; expected .npy, .npz (FILE.npz:KEY for one "
                 "of several arrays) or a raw .bin with --dtype")
    _exact_error(_run("tcvt", "fz2.npz"), "ptonum tcvt: error: FILE: fz2.npz holds 2 arrays (x, y); choose one with "
                                          "FILE.npz:KEY")
    assert not (tmp_path / "c.npy").exists()
    r = _run("tcvt", "fz.npz", "--out", "c.npy")
    assert r.exit_code == 0, r.output
    assert np.load("c.npy").tolist() == [127, 128, 129, 130]  # E8M0 = 127 + log2
    r = _run("tcvt", "fz2.npz:y", "--out", "d.npy")
    assert r.exit_code == 0 and np.load("d.npy").tolist() == [126, 125]


def test_output_directories_that_are_dangling_or_looping_links_say_so_before_any_work(tmp_path, monkeypatch):
    """--out-dir / tcvt --out through a symbolic link that leads nowhere was 'cannot write
    dangling/acc.d.npy: dangling does not exist' after the whole computation; now refused first."""
    import os

    monkeypatch.chdir(tmp_path)
    np.save("acc.npy", np.arange(8, dtype=np.int32).reshape(2, 4))
    os.symlink("missing", "dangling")
    os.symlink("loop", "loop")
    op = ["--mode", "REQ8", "--scale", "1"]
    for path, what in (("dangling", "a symbolic link to a missing directory"), ("loop", "a symbolic link loop"),
                       ("dangling/sub", "a symbolic link to a missing directory")):
        link = path.split("/")[0]
        _exact_error(_run("postprocess", "acc.npy", *op, "--out-dir", path),
                     f"ptonum postprocess: error: --out-dir = {path}: {link} is {what}")
    _exact_error(_run("tcvt", "--values", "1.5", "--out", "dangling/c.npy"),
                 "ptonum tcvt: error: --out = dangling/c.npy: dangling is a symbolic link to a missing directory")
    assert sorted(os.listdir(".")) == ["acc.npy", "dangling", "loop"]
