"""ptonum postprocess beyond one process: Zarr/.npy chunk by chunk into OUT_DIR/STEM.zarr, batches, placement.

Expected values come from the single-process tile operation on the whole tile
(``fpatr.postprocess``, itself checked against the ASL in test_fpatr_tile.py and
test_dask_tile.py).  The cluster tests use one module LocalCluster through
``--scheduler ADDRESS``; one run starts its own with ``--workers 2``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, List

import numpy as np
import pytest
from click.testing import CliRunner

from ptonum import fpatr
from ptonum.cli import main

zarr = pytest.importorskip("zarr")

MODE = ["--mode", "REQ8", "--scale", "0.5", "--offset", "-3", "--row-max", "--group-max", "--group-n", "16",
        "--max-abs", "--sat"]
CALL = dict(attributes={"pre_quant_mode": "REQ8", "row_max_en": True, "group_max_en": True, "group_n": 16,
                        "max_abs_en": True},
            quant_param=int(fpatr.quant_param(0.5, -3, mode="REQ8")), sat=True)


@pytest.fixture(scope="module")
def scheduler():
    from ptonum.dask import open_client

    with open_client(workers=2) as client:
        yield client.scheduler.address


def _acc(m: int = 60, n: int = 100, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    acc = rng.integers(-2**31, 2**31, size=(m, n), dtype=np.int64).astype(np.int32)
    acc[0, :4] = [-2**31, 2**31 - 1, 0, -1]
    return acc


def _zarr(path: Path, acc: np.ndarray, chunks: Any) -> None:
    z = zarr.open_array(str(path), mode="w", shape=acc.shape, chunks=chunks, dtype=acc.dtype)
    z[:] = acc


def _run(args: List[str]) -> Any:
    return CliRunner().invoke(main, args)


def _check_group(path: Path, acc: np.ndarray) -> None:
    ref = fpatr.postprocess(acc, **CALL)
    g = zarr.open_group(str(path), mode="r")
    np.testing.assert_array_equal(g["d"][:], ref.d_bits)
    np.testing.assert_array_equal(g["row_max"][:], ref.row_max_bits)
    np.testing.assert_array_equal(g["group_max"][:], ref.group_max_bits)
    assert g.attrs["flags"] == ref.flags and g.attrs["dst_type"] == "S8"


def test_zarr_to_zarr_on_a_scheduler(scheduler: str, tmp_path: Path) -> None:
    acc = _acc()
    _zarr(tmp_path / "acc.zarr", acc, (16, 24))
    r = _run(["postprocess", str(tmp_path / "acc.zarr"), *MODE, "--out-dir", str(tmp_path / "out"),
              "--scheduler", scheduler])
    assert r.exit_code == 0, r.output
    assert "wrote" in r.output and "acc.zarr" in r.output and "flags" in r.output
    _check_group(tmp_path / "out" / "acc.zarr", acc)
    assert os.listdir(tmp_path / "out") == ["acc.zarr"]
    # its own chunks by default; --chunks rechunks
    r = _run(["postprocess", str(tmp_path / "acc.zarr"), *MODE, "--out-dir", str(tmp_path / "out2"),
              "--chunks", "7x33", "--scheduler", scheduler])
    assert r.exit_code == 0, r.output
    _check_group(tmp_path / "out2" / "acc.zarr", acc)
    assert zarr.open_group(str(tmp_path / "out2" / "acc.zarr"), mode="r")["d"].chunks == (7, 33)


def test_npy_memory_mapped_chunks_in_this_process(tmp_path: Path) -> None:
    acc = _acc(45, 77, seed=2)
    np.save(tmp_path / "t.npy", acc)
    r = _run(["postprocess", str(tmp_path / "t.npy"), *MODE, "--chunks", "10x20", "--out-dir", str(tmp_path)])
    assert r.exit_code == 0, r.output
    _check_group(tmp_path / "t.zarr", acc)


def test_chunked_and_in_memory_runs_of_a_stem_replace_each_other(tmp_path: Path) -> None:
    """A chunked run (STEM.zarr) takes away an in-memory run's STEM.*.npy/.bin/flags.json and the
    other way round: the stem's outputs in OUT_DIR are always one run's."""
    acc = _acc(6, 40, seed=3)
    np.save(tmp_path / "t.npy", acc)
    out = tmp_path / "out"
    r = _run(["postprocess", str(tmp_path / "t.npy"), *MODE, "--bin", "--out-dir", str(out)])
    assert r.exit_code == 0, r.output
    r = _run(["postprocess", str(tmp_path / "t.npy"), *MODE, "--chunks", "3x20", "--out-dir", str(out)])
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in out.iterdir()) == ["t.zarr"]
    assert "removed an earlier run's outputs of t: " in r.output
    _check_group(out / "t.zarr", acc)
    r = _run(["postprocess", str(tmp_path / "t.npy"), *MODE, "--out-dir", str(out)])
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in out.iterdir()) == ["t.d.npy", "t.flags.json", "t.group_max.npy", "t.row_max.npy"]


@pytest.mark.parametrize("protect", ["tree", "top", "one chunk file"])
def test_write_protected_zarr_output_is_refused_before_any_work(tmp_path: Path, protect: str) -> None:
    """An earlier run's OUT_DIR/STEM.zarr made read-only (chmod -R a-w, chmod a-w on the directory, or one
    chunk file) is never replaced or removed, root included: the chunked run that would replace it and
    the in-memory run that would take it away are refused before any work, naming it, exit 2, the tree
    byte for byte as it was.  Was: replaced as if writable (as root) or half removed."""
    acc = _acc(6, 40, seed=5)
    np.save(tmp_path / "t.npy", acc)
    out = tmp_path / "out"
    r = _run(["postprocess", str(tmp_path / "t.npy"), *MODE, "--chunks", "3x20", "--out-dir", str(out)])
    assert r.exit_code == 0, r.output
    tree = out / "t.zarr"
    before = {p.relative_to(tree): p.read_bytes() for p in tree.rglob("*") if p.is_file()}
    victims = ([tree] + sorted(tree.rglob("*")) if protect == "tree" else [tree] if protect == "top"
               else [next(p for p in sorted(tree.rglob("*")) if p.is_file() and p.parent.name == "0")])
    for p in victims:
        p.chmod(p.stat().st_mode & ~0o222)
    try:
        for extra in (["--chunks", "3x20"], []):
            r = CliRunner().invoke(main, ["postprocess", str(tmp_path / "t.npy"), *MODE,
                                          *extra, "--out-dir", str(out)])
            assert r.exit_code == 2, r.output
            assert f"cannot write {tree}" in r.output or f"cannot remove {tree}" in r.output, r.output
            assert "write-protected" in r.output and r.output.count("\n") == 1, r.output
            assert sorted(p.name for p in out.iterdir()) == ["t.zarr"]
            assert {p.relative_to(tree): p.read_bytes() for p in tree.rglob("*") if p.is_file()} == before
    finally:
        for p in victims:
            p.chmod(p.stat().st_mode | 0o200)
    _check_group(tree, acc)
    r = _run(["postprocess", str(tmp_path / "t.npy"), *MODE, "--chunks", "3x20", "--out-dir", str(out)])
    assert r.exit_code == 0, r.output  # writable again: replaced as before


def test_flags_json_and_zarr_attributes_describe_a_run_alike(tmp_path: Path) -> None:
    """The in-memory run's STEM.flags.json and a chunked run's Zarr attributes say the same things the
    same way: the rounding mode the conversion used (REQ8 with B.DATR RMode NONE: RNE, the given
    NONE under "datr"), the flags as "OF|NX"."""
    import json

    acc = _acc(6, 40, seed=4)
    np.save(tmp_path / "t.npy", acc)
    args = ["postprocess", str(tmp_path / "t.npy"), "--mode", "REQ8", "--scale", "0.5", "--row-max"]
    r = _run(args + ["--out-dir", str(tmp_path / "a")])
    assert r.exit_code == 0 and "RMode=NONE (RNE used), Sat=0" in r.output, r.output
    r = _run(args + ["--chunks", "3x20", "--out-dir", str(tmp_path / "b")])
    assert r.exit_code == 0 and "RMode=NONE (RNE used), Sat=0" in r.output, r.output
    doc = json.loads((tmp_path / "a" / "t.flags.json").read_text())
    attrs = dict(zarr.open_group(str(tmp_path / "b" / "t.zarr"), mode="r").attrs)
    want = fpatr.postprocess(acc, attributes={"pre_quant_mode": "REQ8", "row_max_en": True},
                             quant_param=int(fpatr.quant_param(0.5, mode="REQ8")))
    assert doc["flags"] == want.flags and doc["flag_names"] == want.flag_names and "|" in doc["flag_names"]
    assert doc["rmode"] == "RNE" and doc["rmode_code"] == 1 and doc["datr"] == {"RMode": "NONE", "RModeCode": 0,
                                                                               "Sat": 0}
    assert set(doc) - set(attrs) == {"shapes", "files", "source_key", "acc_sha256"} and set(attrs) <= set(doc)
    assert doc["source"] == attrs["source"] == str(tmp_path / "t.npy")  # both name the ACC file alike
    assert {k: v for k, v in doc.items() if k in attrs} == {k: v for k, v in attrs.items() if k in doc}


def test_batch_table_names_paths_as_they_are_and_the_removed_outputs(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.chdir(tmp_path)  # short relative paths: whole in the table's cells
    d = Path("run[b]")  # "[b]" is rich markup for bold unless escaped
    d.mkdir()
    for name in ("x", "y"):
        np.save(d / f"{name}.npy", _acc(2, 8, 1))
    args = ["postprocess", str(d / "x.npy"), str(d / "y.npy"), "--mode", "REQ8", "--scale", "1", "--no-progress",
            "--out-dir", str(d / "out")]
    assert _run(args + ["--row-max"]).exit_code == 0
    r = _run(args)
    assert r.exit_code == 0, r.output
    assert "run[b]/x.npy" in r.output and "run[b]/out/x.d.npy" in r.output
    assert r.output.count("(removed") == 2 and "x.row_max.npy)" in r.output and "y.row_max.npy)" in r.output
    assert not (d / "out" / "x.row_max.npy").exists() and not (d / "out" / "y.row_max.npy").exists()


def test_failed_chunk_leaves_nothing(tmp_path: Path) -> None:
    acc = np.arange(20 * 30, dtype=np.uint64).reshape(20, 30)
    acc[19, 29] = 1 << 40  # not a 32-bit encoding: found when the last chunk runs
    _zarr(tmp_path / "raw.zarr", acc, (5, 10))
    r = _run(["postprocess", str(tmp_path / "raw.zarr"), "--acc-type", "U32", "--mode", "NoQuant", "--row-max",
              "--out-dir", str(tmp_path / "out")])
    assert r.exit_code == 2
    assert "does not fit in 32 bits" in r.output and "Traceback" not in r.output
    assert not (tmp_path / "out").exists() or os.listdir(tmp_path / "out") == []


def test_batch_summary_failures_and_fail_fast(tmp_path: Path) -> None:
    a, b = _acc(8, 40, 3), _acc(5, 33, 4)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "c.npy", b)
    (tmp_path / "b.npy").write_bytes(b"not numpy")
    out = tmp_path / "out"
    r = _run(["postprocess", str(tmp_path / "*.npy"), *MODE, "--out-dir", str(out)])
    assert r.exit_code == 2
    assert "3 file(s)" in r.output and "2 done, 1 failed" in r.output
    assert r.output.count("not a valid .npy file") >= 1
    for stem, arr in (("a", a), ("c", b)):
        ref = fpatr.postprocess(arr, **CALL)
        np.testing.assert_array_equal(np.load(out / f"{stem}.d.npy"), ref.d_bits)
        np.testing.assert_array_equal(np.load(out / f"{stem}.group_max.npy"), ref.group_max_bits)
    assert not list(out.glob("b.*"))
    out2 = tmp_path / "out2"
    r = _run(["postprocess", str(tmp_path / "b.npy"), str(tmp_path / "a.npy"), *MODE, "--out-dir", str(out2),
              "--fail-fast"])
    assert r.exit_code == 2 and "1 not run (--fail-fast)" in r.output
    assert not out2.exists() or not list(out2.iterdir())


def test_workers_option_starts_a_local_cluster(tmp_path: Path) -> None:
    acc = _acc(6, 20, 9)
    np.save(tmp_path / "w.npy", acc)
    r = _run(["postprocess", str(tmp_path / "w.npy"), *MODE, "--out-dir", str(tmp_path / "out"), "--workers", "1"])
    assert r.exit_code == 0, r.output
    assert "wrote" in r.output  # the single-file summary, printed from the worker's run
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "w.d.npy"), fpatr.postprocess(acc, **CALL).d_bits)


def test_batch_inputs_with_the_same_output_name_are_refused(tmp_path: Path) -> None:
    for d in ("x", "y"):
        (tmp_path / d).mkdir()
        np.save(tmp_path / d / "acc.npy", _acc(4, 8, 1))
    out = tmp_path / "out"
    r = _run(["postprocess", str(tmp_path / "x" / "acc.npy"), str(tmp_path / "y" / "acc.npy"), *MODE,
              "--out-dir", str(out)])
    assert r.exit_code == 2 and "would both write acc.*" in r.output
    assert not out.exists()  # refused before any work: nothing written, not even the folder


def test_batch_on_workers(scheduler: str, tmp_path: Path) -> None:
    accs = [_acc(6, 20 + k, 10 + k) for k in range(3)]
    for k, arr in enumerate(accs):
        np.save(tmp_path / f"t{k}.npy", arr)
    _zarr(tmp_path / "z.zarr", accs[0], (4, 8))
    r = _run(["postprocess", str(tmp_path / "t0.npy"), str(tmp_path / "t1.npy"), str(tmp_path / "t2.npy"),
              str(tmp_path / "z.zarr"), *MODE, "--out-dir", str(tmp_path / "out"), "--scheduler", scheduler])
    assert r.exit_code == 0, r.output
    assert "4 done, 0 failed" in r.output
    for k, arr in enumerate(accs):
        np.testing.assert_array_equal(np.load(tmp_path / "out" / f"t{k}.d.npy"), fpatr.postprocess(arr, **CALL).d_bits)
    _check_group(tmp_path / "out" / "z.zarr", accs[0])


@pytest.mark.parametrize("args, message", [
    (["--chunks", "12"], "--chunks = '12': expected ROWSxCOLUMNS"),
    (["--workers", "2", "--scheduler", "tcp://127.0.0.1:1"], "--scheduler and --workers both"),
    (["--bin"], "--bin: a chunked run writes a Zarr group"),
])
def test_option_errors_are_one_line(tmp_path: Path, args: List[str], message: str) -> None:
    _zarr(tmp_path / "acc.zarr", _acc(4, 8), (2, 4))
    r = _run(["postprocess", str(tmp_path / "acc.zarr"), *MODE, "--out-dir", str(tmp_path / "o"), *args])
    assert r.exit_code == 2
    assert message in r.output and "Traceback" not in r.output
    assert not (tmp_path / "o").exists() or not list((tmp_path / "o").iterdir())


def test_scale_out_options_need_an_input() -> None:
    r = _run(["postprocess", "--workers", "2"])
    assert r.exit_code == 2 and "--workers needs an ACC input file" in r.output


# ---------------------------------------------------------------------------
# ptonum check and ptonum sweep on the workers


def _vector_file(tmp_path: Path) -> Path:
    """3000 ASL tcvt_e8m0 rows with two expected values broken and one malformed row."""
    import gzip

    from conftest import vectors_dir

    with gzip.open(vectors_dir() / "tcvt_e8m0.csv.gz", "rt") as fh:
        lines = [next(fh) for _ in range(3001)]
    for k in (1200, 2900):
        cols = lines[k].rstrip("\n").split(",")
        cols[4] = f"{int(cols[4], 16) ^ 1:#04x}"
        lines[k] = ",".join(cols) + "\n"
    lines[2500] = "FP16,0xZZ,RNE,0\n"
    path = tmp_path / "v.csv"
    path.write_text("".join(lines))
    return path


def test_check_on_workers_equals_serial(scheduler: str, tmp_path: Path) -> None:
    path = _vector_file(tmp_path)
    serial = _run(["check", str(path), "--engine", "both", "--max-report", "3"])
    split = _run(["check", str(path), "--engine", "both", "--max-report", "3", "--scheduler", scheduler])
    assert serial.exit_code == split.exit_code == 1
    # the same failures in both engines: one list for both (it was one per engine)
    assert serial.output.count("[both engines] tcvt_e8m0: 2 failing row(s), 1 malformed row(s); first 3:") == 1
    assert split.output == serial.output
    assert "v.csv:1201" in serial.output and "v.csv:2501" in serial.output


def test_sweep_on_workers_equals_this_process(scheduler: str, tmp_path: Path) -> None:
    args = ["sweep", "tcvt", "--src-type", "FP16", "--range", "0x7b00:0x7d00", "--partition-size", "64", "--json"]
    here = _run(args + ["--state", str(tmp_path / "a")])
    there = _run(args + ["--state", str(tmp_path / "b"), "--scheduler", scheduler])
    assert here.exit_code == there.exit_code == 0, there.output
    import json

    a, b = json.loads(here.output), json.loads(there.output)
    assert a["inputs"] == b["inputs"] == 512 * 14 and a["mismatches"] == b["mismatches"] == 0
    assert b["partitions_run"] == 8 and len(list((tmp_path / "b").glob("part-*.json"))) == 8
    again = _run(args + ["--state", str(tmp_path / "b"), "--scheduler", scheduler, "--resume"])
    assert json.loads(again.output)["partitions_resumed"] == 8


def test_files_named_like_outputs_that_ptonum_did_not_write_are_never_removed(tmp_path: Path) -> None:
    """probe13 #1 (data loss): the user's own STEM.zarr (e.g. the Zarr copy of the tile) and a STEM.d_packed.bin
    beside STEM.npy were deleted as 'an earlier run's outputs'; only what an earlier ptonum run wrote goes
    (its flags.json 'files', a Zarr group with producer ptonum), and a chunked run does not replace a
    foreign STEM.zarr."""
    acc = _acc(6, 40, seed=4)
    np.save(tmp_path / "x.npy", acc)
    (tmp_path / "x.zarr" / "sub").mkdir(parents=True)
    (tmp_path / "x.zarr" / "sub" / "data.txt").write_text("precious")
    (tmp_path / "x.d_packed.bin").write_bytes(b"mine")
    (tmp_path / "x.flags.json").write_text('{"files": ["x.zarr", "x.d_packed.bin"]}')  # not a ptonum record
    r = _run(["postprocess", str(tmp_path / "x.npy"), *MODE, "--out-dir", str(tmp_path)])
    # the foreign x.flags.json is not replaced either (try14 #12): the run is refused, nothing touched
    assert (r.exit_code, r.stdout) == (2, ""), r.output
    assert r.stderr.startswith(f"ptonum postprocess: error: --out-dir: {tmp_path / 'x.flags.json'} exists and no "
                               "ptonum run recorded writing it")
    assert (tmp_path / "x.flags.json").read_text() == '{"files": ["x.zarr", "x.d_packed.bin"]}'
    (tmp_path / "x.flags.json").unlink()
    r = _run(["postprocess", str(tmp_path / "x.npy"), *MODE, "--out-dir", str(tmp_path)])
    assert r.exit_code == 0 and "removed" not in r.output, r.output
    assert (tmp_path / "x.zarr" / "sub" / "data.txt").read_text() == "precious"
    assert (tmp_path / "x.d_packed.bin").read_bytes() == b"mine"
    r = _run(["postprocess", str(tmp_path / "x.npy"), *MODE, "--chunks", "3x20", "--out-dir", str(tmp_path)])
    assert (r.exit_code, r.stdout) == (2, ""), r.output
    assert r.stderr == (f"ptonum postprocess: error: --out-dir: {tmp_path / 'x.zarr'} exists and is not a ptonum output "
                        "(its attributes do not say producer ptonum); move it or choose another --out-dir\n")
    assert (tmp_path / "x.zarr" / "sub" / "data.txt").read_text() == "precious"


def test_batch_refuses_a_missing_input_before_any_work(tmp_path: Path) -> None:
    """probe13 #24: a mistyped path in a batch was found when its turn came, after other outputs were
    written; now it is refused before the first file runs (bad contents still fail in the batch)."""
    np.save(tmp_path / "a.npy", _acc(4, 8, 1))
    out = tmp_path / "out"
    r = _run(["postprocess", str(tmp_path / "a.npy"), str(tmp_path / "missing.npy"), *MODE, "--out-dir", str(out)])
    assert (r.exit_code, r.stdout) == (2, ""), r.output
    assert r.stderr == f"ptonum postprocess: error: ACC: no such file: {tmp_path / 'missing.npy'}\n"
    assert not out.exists()


def _sigint_disposition() -> str:
    import signal

    h = signal.getsignal(signal.SIGINT)
    return "ignored" if h == signal.SIG_IGN else "default" if h == signal.SIG_DFL else "handled"


def test_local_workers_ignore_sigint_and_the_parent_keeps_its_handler() -> None:
    """try14 #10: the terminal's Ctrl-C reaches the whole process group; the local workers ignore it (the
    parent shuts the cluster down and prints the one line) instead of each printing a traceback."""
    import signal

    from ptonum.cli._scale_out import client_for

    before = signal.getsignal(signal.SIGINT)
    with client_for("check", None, 1) as client:
        assert signal.getsignal(signal.SIGINT) is before
        assert set(client.run(_sigint_disposition).values()) == {"ignored"}
    assert signal.getsignal(signal.SIGINT) is before


def _sigint_blocked() -> bool:
    import signal

    return signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, [])


def test_local_workers_start_with_sigint_blocked_and_the_parent_takes_it() -> None:
    """try14 #10 (left part): the workers' preload ignores SIGINT only once a worker is up, so a Ctrl-C in
    the cluster's start printed the tracebacks of workers still importing.  They now inherit a blocked
    SIGINT from their first instruction (the mask survives fork and exec); this thread's mask is as
    before once the cluster is up, so this process still takes Ctrl-C."""
    import signal

    from ptonum.cli._scale_out import client_for

    assert not _sigint_blocked()
    with client_for("check", None, 1) as client:
        assert not _sigint_blocked()
        assert set(client.run(_sigint_blocked).values()) == {True}
    assert not _sigint_blocked()


#: runs ``ptonum`` (argv[2:]) and sends SIGINT to each worker process as it is spawned -- to the worker
#: only (argv[1] == "worker") or, like a terminal's Ctrl-C, to the worker and this process ("group");
#: prints the workers' process ids on exit
_SPAWN_DRIVER = """
import atexit, os, signal, sys
import ptonum.__main__ as entry
import multiprocessing.util as util
who, real, pids = sys.argv[1], util.spawnv_passfds, []
def spawn(path, args, passfds):
    pid = real(path, args, passfds)
    if any("spawn_main" in str(a) for a in args):  # a worker (not multiprocessing's resource tracker)
        pids.append(pid)
        os.kill(pid, signal.SIGKILL if who == "kill" else signal.SIGINT)
        if who == "group":
            os.kill(os.getpid(), signal.SIGINT)
    return pid
util.spawnv_passfds = spawn
atexit.register(lambda: print("workers", *pids))
sys.argv = ["ptonum", *sys.argv[2:]]
entry.main()
"""


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] == "Z"  # a zombie: ended, not yet reaped
    except FileNotFoundError:
        return True


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc for the worker processes")
@pytest.mark.parametrize("who", ["worker", "group"])
def test_ctrl_c_as_a_worker_starts(tmp_path: Path, who: str) -> None:
    """A Ctrl-C that reaches a worker process while it starts: the run goes on undisturbed ("worker": it
    died, or printed the traceback of its interrupted imports); with this process interrupted too
    ("group", a terminal's Ctrl-C): one line, 130, and no worker process left."""
    import subprocess
    import sys
    import time

    path = _vector_file(tmp_path)
    proc = subprocess.run([sys.executable, "-c", _SPAWN_DRIVER, who, "check", str(path), "--workers", "1",
                           "--engine", "reference", "--max-report", "0"],
                          capture_output=True, text=True, timeout=300)
    pids = [int(p) for p in proc.stdout.rstrip().splitlines()[-1].split()[1:]]
    assert pids, proc.stdout
    if who == "worker":
        assert proc.returncode == 1 and "2 failing row(s), 1 malformed row(s)" in proc.stdout, \
            (proc.returncode, proc.stderr)
        assert proc.stderr == "", proc.stderr
    else:
        assert (proc.returncode, proc.stderr) == (130, "ptonum check: interrupted by SIGINT; nothing was written\n"), \
            (proc.returncode, proc.stderr)
    deadline = time.monotonic() + 30  # (not a timing claim: the workers end as the cluster shuts down)
    while not all(_gone(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert all(_gone(p) for p in pids), pids


def test_a_worker_that_dies_as_it_starts_is_one_line(tmp_path: Path) -> None:
    """A worker process killed while it starts (here SIGKILL; the OOM killer, a crash) was an internal
    error (``RuntimeError: Nanny failed to start``); now one line naming --workers, exit 2."""
    import subprocess
    import sys

    path = _vector_file(tmp_path)
    proc = subprocess.run([sys.executable, "-c", _SPAWN_DRIVER, "kill", "check", str(path), "--workers", "1",
                           "--engine", "reference"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, (proc.returncode, proc.stderr)
    assert proc.stderr.startswith("ptonum check: error: --workers 1: the local cluster did not start ("), proc.stderr
    assert "internal error" not in proc.stderr, proc.stderr


@pytest.mark.parametrize("name, args", [("acc.d_packed.bin", ["--mode", "REQ4", "--scale", "0.0078125", "--bin"]),
                                        ("acc.d.npy", ["--mode", "REQ8", "--scale", "1"])])
def test_a_file_named_like_an_output_that_ptonum_did_not_write_is_never_replaced(tmp_path: Path, monkeypatch,
                                                                                  name: str, args: List[str]) -> None:
    """try14 #12 (data loss, then a false MATCH): a device dump saved as acc.d_packed.bin (the README's compare
    example) or acc.d.npy beside acc.npy was replaced by the model's output without a word."""
    monkeypatch.chdir(tmp_path)
    np.save("acc.npy", _acc(8, 16, seed=5))
    (tmp_path / name).write_bytes(b"device dump")
    r = _run(["postprocess", "acc.npy", *args])
    assert (r.exit_code, r.stdout) == (2, ""), r.output
    assert r.stderr == (f"ptonum postprocess: error: --out-dir: {name} exists and no ptonum run recorded writing it "
                        "(no acc.flags.json lists it); this run would replace it: move it or choose another --out-dir\n")
    assert (tmp_path / name).read_bytes() == b"device dump"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["acc.npy", name])
    (tmp_path / name).unlink()
    assert _run(["postprocess", "acc.npy", *args]).exit_code == 0
    r = _run(["postprocess", "acc.npy", *args])  # an earlier run's own outputs are replaced as before
    assert r.exit_code == 0, r.output


def test_a_ctrl_c_swallowed_by_a_gc_callback_is_delivered_again() -> None:
    """try14 #11: the KeyboardInterrupt of one Ctrl-C was raised inside distributed's GC callback and
    swallowed ("Exception ignored in: ... GCDiagnosis"); the run then waited forever.  Now the signal is
    sent again and the interrupt reaches the run."""
    import gc
    import time

    from ptonum.cli._scale_out import client_for

    raised = []

    def callback(phase: str, info: Any) -> None:
        if not raised:
            raised.append(phase)
            raise KeyboardInterrupt  # as the signal handler does when Ctrl-C lands in a GC callback

    with client_for("check", None, 1):
        gc.callbacks.append(callback)
        try:
            with pytest.raises(KeyboardInterrupt):
                gc.collect()  # swallowed here: Python reports it as unraisable
                for _ in range(400):  # the interrupt arrives again (a bounded wait, not a timing assertion)
                    time.sleep(0.025)
        finally:
            gc.callbacks.remove(callback)
    assert raised


def test_huge_workers_and_chunks_are_usage_errors(tmp_path: Path) -> None:
    """--workers 100000 started (tried to start) 100000 processes; --chunks beyond int64 was an internal error."""
    from ptonum.cli._scale_out import max_local_workers

    np.save(tmp_path / "a.npy", _acc(4, 8, 1))
    n = max_local_workers() + 1
    r = _run(["check", str(tmp_path / "a.npy"), "--workers", str(n)])
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr.startswith(f"ptonum check: error: Invalid value for '--workers': '{n}': at most {n - 1} local "
                               "worker processes on this machine")
    big = "99999999999999999999999x1"
    r = _run(["postprocess", str(tmp_path / "a.npy"), *MODE, "--chunks", big, "--out-dir", str(tmp_path / "o")])
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr == (f"ptonum postprocess: error: --chunks = {big}: chunk rows and columns must be at most "
                        "9223372036854775807 (2^63 - 1); a chunk larger than the tile is cut to the tile\n")
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("where", ["here", "scheduler"])
@pytest.mark.parametrize("damage", ["truncated", "garbled"])
def test_damaged_zarr_chunk_is_one_line_naming_the_store(tmp_path: Path, damage: str, where: str,
                                                         request: Any) -> None:
    """Was: `internal error: RuntimeError: Zstd decompression error: invalid input data (please report it ...)`
    for a chunk file cut short; now a usage error naming ACC, the rows/columns and the Zarr chunk (the
    error ptonum.dask.open_tile raises, in this process and from a worker), exit 2, nothing written."""
    acc = _acc()
    _zarr(tmp_path / "a.zarr", acc, (30, 50))
    chunk = next(p for p in sorted((tmp_path / "a.zarr").rglob("*")) if p.is_file() and p.name.isdigit())
    data = chunk.read_bytes()
    chunk.write_bytes(data[:10] if damage == "truncated" else data[:8] + bytes(b ^ 0x5A for b in data[8:]))
    out = tmp_path / "out"
    at = ["--scheduler", request.getfixturevalue("scheduler")] if where == "scheduler" else []
    r = _run(["postprocess", str(tmp_path / "a.zarr"), "--mode", "REQ8", "--scale", "0.5", "--out-dir", str(out), *at])
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith(f"ptonum postprocess: error: ACC: {tmp_path / 'a.zarr'}: a chunk cannot be read (rows ")
    assert ", Zarr chunk (" in r.stderr and "damaged or cut short" in r.stderr
    assert r.stderr.count("\n") == 1 and "internal error" not in r.stderr
    assert not out.exists() or list(out.iterdir()) == []


@pytest.mark.parametrize("args", [
    ["check", "{vec}", "--workers", "2"],
    ["check", "{vec}", "--scheduler", "tcp://127.0.0.1:1"],
    ["postprocess", "{acc}", "--mode", "REQ8", "--scale", "0.5", "--out-dir", "{out}", "--workers", "2"],
    ["postprocess", "{acc}", "--mode", "REQ8", "--scale", "0.5", "--out-dir", "{out}", "--workers", "2",
     "--chunks", "16x64"],
    ["sweep", "tcvt", "--src-type", "FP16", "--range", "0x3c00:0x3d00", "--workers", "2", "--state", "{out}"],
])
def test_workers_or_scheduler_without_the_dask_extra_name_the_extra(tmp_path: Path, monkeypatch: Any,
                                                                     args: List[str]) -> None:
    """--workers/--scheduler (check, postprocess, sweep) on an installation without the dask extra (pip install . of a fresh clone):
    one line naming the extra to install, exit 2, nothing written; it was 'internal error:
    ModuleNotFoundError: No module named 'dask'' (client_for imported dask before checking)."""
    import sys

    vec = tmp_path / "v.csv"
    vec.write_text("fp32_bits,expected_fp19\n0x3f800000,0x1fc00\n")
    acc = tmp_path / "acc.npy"
    np.save(acc, _acc())
    for name in ("dask", "dask.array", "distributed", "zarr"):
        monkeypatch.setitem(sys.modules, name, None)  # import raises ImportError, as when not installed
    r = CliRunner().invoke(main, [a.format(vec=vec, acc=acc, out=tmp_path / "out") for a in args])
    assert r.exit_code == 2 and r.stdout == "", r.output
    assert r.stderr.endswith(": error: scale-out needs dask, dask.array, distributed, zarr: install the extra with "
                             "pip install 'ptonum[dask]'\n"), r.stderr
    assert not (tmp_path / "out").exists()


#: the ``ptonum`` entry point in a process where ``import dask`` (and distributed) fails as when the dask
#: extra is not installed; zarr stays importable (installed on its own)
_NO_DASK = """
import importlib.abc, sys

class NoDask(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("dask", "distributed"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, NoDask())
from ptonum.cli import main
sys.argv[0] = "ptonum"
main()
"""


@pytest.mark.parametrize("clash", ["input_is_output", "same_stem"])
def test_zarr_input_without_dask_names_the_missing_extra_before_an_output_clash(tmp_path: Path, clash: str) -> None:
    """A Zarr ACC on an installation without dask, with outputs that would also clash (the output STEM.zarr
    is the input store; two inputs writing the same STEM): the missing extra is reported (the thing to fix
    before anything can run), not the clash, which came first; exit 2, stdout empty, nothing written."""
    import subprocess
    import sys

    acc = _acc(8, 16)
    _zarr(tmp_path / "acc.zarr", acc, (4, 16))
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    if clash == "input_is_output":
        args = ["acc.zarr", "--out-dir", "."]
    else:
        (tmp_path / "b").mkdir()
        _zarr(tmp_path / "b" / "acc.zarr", acc, (4, 16))
        before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
        args = ["acc.zarr", "b/acc.zarr", "--out-dir", "out"]
    r = subprocess.run([sys.executable, "-c", _NO_DASK, "postprocess", *args, "--mode", "REQ8", "--scale", "0.5"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert (r.returncode, r.stdout) == (2, ""), r
    assert r.stderr == ("ptonum postprocess: error: scale-out needs dask, dask.array, distributed: install the extra "
                        "with pip install 'ptonum[dask]'\n"), r.stderr
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before


def test_a_missing_zarr_input_without_dask_is_named_as_missing(tmp_path: Path) -> None:
    """ACC nothere.zarr on an installation without dask: the path that does not exist is the thing to fix
    (break stop 23: 'scale-out needs dask ...', and after installing it, 'no such file')."""
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-c", _NO_DASK, "postprocess", "nothere.zarr", "--mode", "REQ8", "--scale",
                        "0.5", "--out-dir", "out"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert (r.returncode, r.stdout) == (2, ""), r
    assert r.stderr.startswith("ptonum postprocess: error: ACC") and "nothere.zarr" in r.stderr, r.stderr
    assert "no such file" in r.stderr and "dask" not in r.stderr, r.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("fmt", [2, 3])
def test_zarr_acc_missing_a_chunk_file_is_refused_unless_allowed(tmp_path: Path, scheduler, fmt: int) -> None:
    """break-findings: a Zarr ACC with a chunk FILE deleted ran with rc 0, that block read as the fill value
    (zeros), no word: a store copied in part was a silent wrong answer.  Now refused (exit 2, naming the count
    and the chunks with their rows and columns, nothing written), in-process and on a cluster; with
    --allow-missing-chunks it runs as before (the block as zeros) with one note naming them.  Zarr v2 and v3
    layouts.  Expected: the chunk grid by hand (60x100 in 16x32 chunks: chunk (1, 2) is rows 16:32,
    columns 64:96), D from the whole-tile operation on the input with that block zeroed."""
    acc = _acc()
    src = tmp_path / "a.zarr"
    z = zarr.create_array(str(src), shape=acc.shape, chunks=(16, 32), dtype=acc.dtype, zarr_format=fmt)
    z[:] = acc
    chunk = src / ("1.2" if fmt == 2 else "c/1/2")
    assert chunk.is_file()
    chunk.unlink()
    out = tmp_path / "out"
    for extra in ([], ["--scheduler", scheduler]):
        r = _run(["postprocess", str(src), *MODE, "--out-dir", str(out), *extra])
        assert (r.exit_code, r.stdout) == (2, ""), r.output
        assert r.stderr == (f"ptonum postprocess: error: ACC: {src}: 1 of 16 chunk files is missing (Zarr chunk "
                            "(1, 2): rows 16:32, columns 64:96); Zarr reads a missing chunk as the fill value (0): "
                            "zarr-python 3 leaves out chunks that hold only the fill value by default "
                            "(write_empty_chunks=False): for a store written so, give --allow-missing-chunks "
                            "(open_tile(..., allow_missing_chunks=True)); otherwise a chunk file was lost (a store "
                            "copied in part?)\n")
        assert not out.exists()
    from ptonum.dask import open_tile
    from ptonum.errors import UsageError

    with pytest.raises(UsageError, match=r"1 of 16 chunk files is missing \(Zarr chunk \(1, 2\)"):
        open_tile(src)
    zeroed = acc.copy()
    zeroed[16:32, 64:96] = 0
    np.testing.assert_array_equal(open_tile(src, allow_missing_chunks=True).compute(), zeroed)
    r = _run(["postprocess", str(src), *MODE, "--out-dir", str(out), "--allow-missing-chunks"])
    assert r.exit_code == 0, r.output
    assert r.stderr == (f"ptonum postprocess: note: ACC: {src}: 1 of 16 chunk files is missing (Zarr chunk (1, 2): "
                        "rows 16:32, columns 64:96); Zarr reads a missing chunk as the fill value (0) "
                        "(--allow-missing-chunks)\n")
    _check_group(out / "a.zarr", zeroed)
    np.save(tmp_path / "x.npy", acc)
    r = _run(["postprocess", str(tmp_path / "x.npy"), *MODE, "--out-dir", str(tmp_path / "o2"),
              "--allow-missing-chunks"])
    assert r.exit_code == 2 and r.stderr.endswith("--allow-missing-chunks applies to a Zarr ACC, not "
                                                  f"{tmp_path / 'x.npy'}\n"), r.output


def test_chunked_summary_gives_the_shapes_the_in_memory_summary_gives(tmp_path: Path) -> None:
    """break stop 23: a chunked run's summary printed only D's shape and the flags; it now has the in-memory
    summary's D, RowMaxOut and GroupMaxOut lines without their value ranges (which would read every output
    chunk back); GroupN 16 over 100 columns: a ragged last group, 7 groups."""
    acc = _acc()
    np.save(tmp_path / "acc.npy", acc)
    _zarr(tmp_path / "acc.zarr", acc, (16, 64))
    here = _run(["postprocess", str(tmp_path / "acc.npy"), *MODE, "--out-dir", str(tmp_path / "a")])
    chunked = _run(["postprocess", str(tmp_path / "acc.zarr"), *MODE, "--out-dir", str(tmp_path / "b")])
    assert here.exit_code == chunked.exit_code == 0, (here.output, chunked.output)

    def lines(text: str) -> List[str]:
        keep = ("D ", "RowMaxOut", "GroupMaxOut", "flags")
        return [ln.split(", values")[0] for ln in text.splitlines() if ln.startswith(keep)]

    assert lines(chunked.stdout) == lines(here.stdout)
    assert "GroupMaxOut 60x7 S32 (GroupN 16)" in lines(chunked.stdout)


@pytest.mark.parametrize("columns", ["80", "200"])
def test_batch_table_keeps_each_acc_path_whole(tmp_path: Path, monkeypatch: Any, columns: str) -> None:
    """The batch table's ACC paths are copied into other commands: whole on one line, as check shows its vector
    files'.  In the table while it fits; else the table numbers the files and the paths follow it, one a line.  Was:
    at 80 columns the file column was folded to 19 characters a line (`a_rather_long_direc`, `tory_name_...`)."""
    monkeypatch.chdir(tmp_path)
    d = Path("a_rather_long_directory_name_for_the_accumulators")
    d.mkdir()
    for name in ("first_tile", "second[x]"):  # "[x]": a path's brackets are text
        np.save(d / f"{name}.npy", np.arange(16, dtype=np.int32).reshape(2, 8))
    r = CliRunner(env={"COLUMNS": columns}).invoke(main, [
        "postprocess", str(d / "first_tile.npy"), str(d / "second[x].npy"), "--mode", "REQ8", "--scale", "1",
        "--no-progress", "--out-dir", "o"])
    assert r.exit_code == 0, r.output
    lines = [ln.rstrip() for ln in r.stdout.splitlines()]
    if columns == "200":
        assert lines[4:6] == [
            "│ a_rather_long_directory_name_for_the_accumulators/first_tile.npy │ ok     │ 2x8 S32 │ S8 │ 0x00 - │ "
            "o/first_tile.d.npy, o/first_tile.flags.json │",
            "│ a_rather_long_directory_name_for_the_accumulators/second[x].npy  │ ok     │ 2x8 S32 │ S8 │ 0x00 - │ "
            "o/second[x].d.npy, o/second[x].flags.json   │"], r.stdout
        assert len(lines) == 8 and lines[-1] == "PASS: 2 done, 0 failed", r.stdout
        return
    assert lines == [
        "                       ptonum postprocess: 2 of 2 file(s)",
        "┏━━━┳━━━━━━━━┳━━━━━━━━━┳━━━━┳━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓",
        "┃ # ┃ status ┃ ACC     ┃ D  ┃ flags  ┃ outputs / error                         ┃",
        "┡━━━╇━━━━━━━━╇━━━━━━━━━╇━━━━╇━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┩",
        "│ 1 │ ok     │ 2x8 S32 │ S8 │ 0x00 - │ o/first_tile.d.npy,                     │",
        "│   │        │         │    │        │ o/first_tile.flags.json                 │",
        "│ 2 │ ok     │ 2x8 S32 │ S8 │ 0x00 - │ o/second[x].d.npy,                      │",
        "│   │        │         │    │        │ o/second[x].flags.json                  │",
        "└───┴────────┴─────────┴────┴────────┴─────────────────────────────────────────┘",
        "1  a_rather_long_directory_name_for_the_accumulators/first_tile.npy",
        "2  a_rather_long_directory_name_for_the_accumulators/second[x].npy",
        "PASS: 2 done, 0 failed"], r.stdout
