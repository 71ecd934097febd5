"""ptonum.kernels: the compiled fast engine never hangs, crashes or recompiles behind the user's back.

Fault injection (issue 10, items 4-9): a fork pool after a kernel call, threads under numba's
``workqueue`` threading layer, a read-only install run by ``nobody`` with ``HOME=/nonexistent``,
a shared ``PTONUM_CACHE_DIR`` filled by ``ptonum compile``, truncated cache files, read-only and
memory-mapped inputs, a Fortran-ordered accumulator.

Compiling the kernels costs tens of seconds, so every subprocess here reuses the compilations of
the test session (``ptonum compile`` in-process first, then copies of its cache files); only the
small decompose kernels are ever compiled in a subprocess.  Expected bits come from the same call
on the numpy path (``PTONUM_DISABLE_NUMBA=1``), which the ASL vector tests check row by row.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import io
import os
import pickle
import pickletools
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
import textwrap
import tracemalloc
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional

import numpy as np
import pytest
from click.testing import CliRunner

import ptonum
import ptonum.kernels as kernels
from ptonum import formats, fpatr, tcvt
from ptonum.cli import main
from ptonum.encode import encode
from ptonum.fpatr.tile import BLOCK_ELEMENTS

PKG = Path(ptonum.__file__).resolve().parent
NOTE = "ptonum: note: "


def test_numba_is_installed() -> None:
    assert kernels.NUMBA_AVAILABLE  # a missing numba would make every check below vacuous


@pytest.fixture(scope="module")
def compiled() -> Iterator[str]:
    """Every specialization ``ptonum compile`` builds, compiled or loaded in this process; yields the
    directory they are cached in (shared with the subprocesses below)."""
    r = CliRunner().invoke(main, ["compile"])
    assert r.exit_code == 0, r.output
    cache = kernels.kernel_cache_dir("postprocess")
    assert cache is not None and glob.glob(os.path.join(cache, "*.nbc"))
    yield cache


def _run(code: str, env: Optional[Dict[str, str]] = None, user: Optional[str] = None,
         timeout: float = 300, script: Optional[Path] = None) -> subprocess.CompletedProcess:
    """Run ``code`` (or the file ``script``) in a fresh interpreter, as ``user`` through setpriv when
    this process is root."""
    cmd = [sys.executable, str(script)] if script is not None else [sys.executable, "-c", textwrap.dedent(code)]
    if user is not None and os.geteuid() == 0:
        pw = pwd.getpwnam(user)
        cmd = ["setpriv", f"--reuid={pw.pw_uid}", f"--regid={pw.pw_gid}", "--clear-groups"] + cmd
    full = dict(os.environ)
    for var in ("PTONUM_CACHE_DIR", "PTONUM_DISABLE_NUMBA", "PTONUM_KERNEL_MIN_ELEMENTS", "NUMBA_THREADING_LAYER"):
        full.pop(var, None)
    full.update(env or {})
    return subprocess.run(cmd, env=full, capture_output=True, text=True, timeout=timeout, cwd="/")


def _notes(stderr: str) -> List[str]:
    return [ln for ln in stderr.splitlines() if ln.startswith(NOTE)]


# ---------------------------------------------------------------- item 4: fork after a kernel call


FORK_SCRIPT = """
import multiprocessing as mp, numpy as np, sys
from ptonum import fpatr
import numba

def run(seed):
    acc = np.random.default_rng(seed).integers(-2**31, 2**31, (256, 256), dtype=np.int64).astype(np.int32)
    r = fpatr.postprocess(acc, attributes={"pre_quant_mode": "REQ8", "row_max_en": True},
                          quant_param=fpatr.quant_param(0.03125, 3, mode="REQ8"))
    return r.d_bits.tobytes() + r.row_max_bits.tobytes() + bytes([r.flags])

if __name__ == "__main__":
    parent = [run(s) for s in range(3)]          # the compiled path: numba starts its threading layer
    layer = numba.threading_layer()
    for method in ("fork", "spawn"):
        with mp.get_context(method).Pool(2 if method == "fork" else 1) as pool:
            got = pool.map_async(run, range(3)).get(timeout=150)
        assert got == parent, method
    print(layer, "ok")
"""


def test_fork_pool_after_kernel_call(compiled: str, tmp_path: Path) -> None:
    script = tmp_path / "fork_pool.py"  # a file: the spawn start method re-imports it in each worker
    script.write_text(FORK_SCRIPT)
    r = _run(FORK_SCRIPT, script=script)
    assert r.returncode == 0, r.stderr[-2000:]
    layer = r.stdout.split()[0]
    assert r.stdout.split()[1] == "ok"
    if layer == "omp":  # GNU OpenMP is not fork-safe: each forked child says it runs numpy, once
        notes = _notes(r.stderr)
        assert notes and all(n == NOTE + kernels.FORK_NOTE for n in notes) and len(notes) <= 2, r.stderr


# ---------------------------------------------------------------- item 7: threads under workqueue


THREADS_SCRIPT = """
import threading, numpy as np, numba
from ptonum import fpatr, tcvt

def run(seed):
    acc = np.random.default_rng(seed).integers(-2**31, 2**31, (256, 256), dtype=np.int64).astype(np.int32)
    r = fpatr.postprocess(acc, attributes={"pre_quant_mode": "REQ8", "relu_mode": "RELU", "row_max_en": True},
                          quant_param=fpatr.quant_param(0.03125, 3, mode="REQ8"))
    # TCVT from FP16 in a different RMode per thread: each first call also checks its new
    # kernel tables on all 65536 codes (one more kernel launch)
    c, f = tcvt.to_e8m0(np.arange(1 << 16, dtype=np.uint16), src_type="FP16", rmode=1 + seed % 7)
    return r.d_bits.tobytes() + r.row_max_bits.tobytes() + bytes([r.flags]) + c.tobytes() + f.tobytes()

got = [None] * 8
def worker(k):
    for j in range(k, 8, 4):
        got[j] = run(j)
threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
for t in threads: t.start()
for t in threads: t.join()
assert got == [run(j) for j in range(8)]
print(numba.threading_layer(), "ok")
"""


def test_threads_under_workqueue_layer(compiled: str) -> None:
    r = _run(THREADS_SCRIPT, env={"NUMBA_THREADING_LAYER": "workqueue"})
    assert r.returncode == 0, (r.returncode, r.stderr[-2000:])  # SIGABRT was -6
    assert r.stdout.split() == ["workqueue", "ok"]


# ---------------------------------------------------------------- items 5, 6: cache directories


def _copy_install(cache_from: Optional[str]) -> Path:
    """A copy of the installed package in a fresh directory every user can read (``site/ptonum``),
    with the session's kernel cache files when ``cache_from`` is given."""
    root = Path(tempfile.mkdtemp(prefix="ptonum-install-"))
    os.chmod(root, 0o755)
    shutil.copytree(PKG, root / "site" / "ptonum", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    if cache_from is not None:
        dest = root / "site" / "ptonum" / "kernels" / "__pycache__"
        dest.mkdir()
        for f in glob.glob(os.path.join(cache_from, "*.nb[ic]")):
            shutil.copy(f, dest)
    return root


def _read_only(path: Path) -> None:
    for p in [path, *path.rglob("*")]:
        mode = p.stat().st_mode
        os.chmod(p, (mode & ~0o222) | 0o444 | (0o111 if p.is_dir() else 0))


def _env(root: Path, **extra: str) -> Dict[str, str]:
    return {"PYTHONPATH": str(root / "site"), "HOME": "/nonexistent", "XDG_CACHE_HOME": "", **extra}


PROBE = """
import sys, numpy as np, ptonum
assert ptonum.__file__.startswith({site!r}), ptonum.__file__
from ptonum import formats, kernels
warm = kernels.kernel_cache_warm("decompose")
codes = np.arange(1 << 16, dtype=np.uint32).astype(np.uint8)      # E4M3 codes, the compiled path
a, ng, sg, ex = formats.decompose("E4M3", codes)
print(int(a.sum()), int(ng.sum()), int(sg.astype(np.int64).sum()), int(ex.sum()), warm)
"""

TILE_PROBE = """
import numpy as np, ptonum, ptonum.kernels as k
assert ptonum.__file__.startswith({site!r}), ptonum.__file__
from ptonum import fpatr, tcvt, formats
acc = np.arange(-(1 << 15), 1 << 15, dtype=np.int32).reshape(256, 256)
r = fpatr.postprocess(acc, attributes={{"pre_quant_mode": "REQ8", "row_max_en": True}},
                      quant_param=fpatr.quant_param(0.5, 1, mode="REQ8"))
c, f = tcvt.to_e8m0(np.arange(1 << 16, dtype=np.uint32) << 16, src_type="FP32")
a = formats.decompose("FP16", np.arange(1 << 16, dtype=np.uint16))[3]
misses = sum(len(d.stats.cache_misses) for m in ("postprocess", "tcvt", "decompose")
             for d in k.entry_kernels(m))
print(int(r.d_bits.astype(np.int64).sum()), int(r.row_max_bits.astype(np.int64).sum()), r.flags,
      int(c.astype(np.int64).sum()), int(a.sum()), misses)
"""


def _expected(code: str) -> List[str]:
    """What ``code`` prints when run here on the numpy path of the fast engine."""
    out = io.StringIO()
    with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(out):
        mp.setenv("PTONUM_DISABLE_NUMBA", "1")
        exec(textwrap.dedent(code.format(site=str(PKG.parent))), {})
    return out.getvalue().split()


@pytest.fixture(scope="module")
def install(compiled: str) -> Iterator[Path]:
    """A copied install (``site/ptonum``, no cache of its own) and ``shared``, the cache directory
    ``PTONUM_CACHE_DIR=shared ptonum compile`` filled, run by the install's owner: the kernels it
    loaded from the install's ``__pycache__`` (the session's compilations, copied there for the
    run and removed after) are copied into ``shared``."""
    root = _copy_install(None)
    inner = root / "site" / "ptonum" / "kernels" / "__pycache__"
    shutil.copytree(compiled, inner, ignore=shutil.ignore_patterns("*.tmp*"))
    shared = root / "shared"
    r = _run("from ptonum.cli import main; main(['compile'])", env=_env(root, PTONUM_CACHE_DIR=str(shared)))
    assert r.returncode == 0, r.stderr[-2000:]
    assert all(ln.endswith("(cached)") for ln in r.stdout.splitlines()[:3]), r.stdout
    assert r.stdout.splitlines()[-1].endswith("cache: " + str(shared / os.listdir(shared)[0]))
    shutil.rmtree(inner)
    try:
        yield root
    finally:
        _writable_again(root)
        shutil.rmtree(root)


def test_read_only_install_and_shared_cache_dir(install: Path) -> None:
    root, site = install, str(install / "site")
    _read_only(root / "site")
    try:
        # nothing cached, nothing writable: still computes (compiled in memory), one note
        want = _expected(PROBE)
        r = _run(PROBE.format(site=site), env=_env(root), user="nobody")
        assert r.returncode == 0, r.stderr[-2000:]
        assert r.stdout.split() == want[:-1] + ["False"]  # same bits; the cache was cold
        assert _notes(r.stderr) == [r.stderr.strip()] and "no writable kernel cache directory" in r.stderr

        # ptonum compile there: one line, exit 2, no traceback, nothing compiled
        r = _run("from ptonum.cli import main; main(['compile'])", env=_env(root), user="nobody")
        assert r.returncode == 2 and r.stdout == ""
        assert r.stderr.startswith("ptonum compile: error: no writable kernel cache directory")
        assert len(r.stderr.splitlines()) == 1

        # every user of the install with PTONUM_CACHE_DIR=shared (read access): no compile, no note
        want = _expected(TILE_PROBE)
        r = _run(TILE_PROBE.format(site=site), env=_env(root, PTONUM_CACHE_DIR=str(root / "shared")),
                 user="nobody")
        assert r.returncode == 0, r.stderr[-2000:]
        assert r.stderr == ""
        assert r.stdout.split() == want[:-1] + ["0"]  # same bits; 0 cache misses (nothing compiled)
    finally:
        _writable_again(root / "site")


def _writable_again(root: Path) -> None:
    for p in [root, *root.rglob("*")]:
        if not p.is_symlink():
            os.chmod(p, p.stat().st_mode | stat.S_IWUSR)


def _whole(path: str) -> bool:
    """A data file as written: the header, the SHA-256 of the rest (computed here), a whole pickle."""
    blob = Path(path).read_bytes()
    head = len(kernels.CACHE_DATA_MAGIC)
    payload = blob[head + 32:]
    if not blob.startswith(kernels.CACHE_DATA_MAGIC) or hashlib.sha256(payload).digest() != blob[head:head + 32]:
        return False
    try:
        return pickle.loads(payload) is not None
    except (pickle.UnpicklingError, EOFError):
        return False


def _flip_a_code_bit(path: str) -> None:
    """Flip one bit in the middle of the largest bytes object of a data file's pickle (the kernel's
    machine code): the pickle still loads; only the digest tells."""
    blob = bytearray(Path(path).read_bytes())
    head = len(kernels.CACHE_DATA_MAGIC) + 32
    largest = max((arg for _, arg, _ in pickletools.genops(bytes(blob[head:])) if isinstance(arg, bytes)), key=len)
    assert len(largest) > 256, len(largest)
    at = blob.index(largest, head) + len(largest) // 2
    blob[at] ^= 0x10
    Path(path).write_bytes(bytes(blob))
    pickle.loads(bytes(blob[head:]))  # still a whole pickle


def test_a_flipped_bit_in_cached_machine_code_is_discarded_and_rebuilt(install: Path) -> None:
    """break 2026-12-03 (a new user's fault test): one bit flipped in a cached kernel's machine code was
    loaded unchecked by numba -- segfaults, illegal instructions, a hang, and once wrong flags published by
    ``ptonum tcvt`` before the crash.  Each data file now carries its SHA-256: one damaged-file note
    naming the digest mismatch, the right bits, the file rebuilt."""
    root, site = install, str(install / "site")
    env = _env(root, PTONUM_CACHE_DIR=str(root / "shared"))
    targets = sorted(glob.glob(str(root / "shared" / "*" / "decompose.*.nbc")))
    assert targets and all(_whole(f) for f in targets)
    want = _expected(PROBE)
    for f in targets:
        _flip_a_code_bit(f)
    assert not any(_whole(f) for f in targets)
    r = _run(PROBE.format(site=site), env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split() == want[:-1] + ["True"]  # the index was whole, the data not
    assert _notes(r.stderr) == [r.stderr.strip()] and "damaged kernel cache file" in r.stderr
    assert "SHA-256 mismatch" in r.stderr, r.stderr
    assert any(_whole(f) for f in targets)


def test_sealed_data_round_trip_and_every_damage_is_refused() -> None:
    payload = pickle.dumps(("code", b"\x90" * 1000))
    blob = kernels.sealed(payload)
    assert blob[len(kernels.CACHE_DATA_MAGIC):len(kernels.CACHE_DATA_MAGIC) + 32] == hashlib.sha256(payload).digest()
    assert kernels.unsealed(blob) == payload
    for bad, why in ((blob[:-1], "SHA-256 mismatch"), (blob[:10], "no ptonum checksum header"),
                     (payload, "no ptonum checksum header"), (blob + b"\0", "SHA-256 mismatch")):
        with pytest.raises(ValueError, match=why):
            kernels.unsealed(bad)
    for i in range(len(kernels.CACHE_DATA_MAGIC), len(blob)):  # every single-bit change past the header
        flipped = bytearray(blob)
        flipped[i] ^= 1 << (i % 8)
        with pytest.raises(ValueError, match="SHA-256 mismatch"):
            kernels.unsealed(bytes(flipped))


def test_truncated_cache_is_discarded_and_rebuilt(install: Path) -> None:
    root, site = install, str(install / "site")
    env = _env(root, PTONUM_CACHE_DIR=str(root / "shared"))
    damaged = sorted(glob.glob(str(root / "shared" / "*" / "decompose.*.nbc")))
    assert damaged
    want = _expected(PROBE)

    for f in damaged:
        with open(f, "r+b") as fh:
            fh.truncate(os.path.getsize(f) // 3)

    # a large call: one note, the right bits, the file it used rebuilt
    r = _run(PROBE.format(site=site), env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split() == want[:-1] + ["True"]  # the index was whole, the data not
    assert _notes(r.stderr) == [r.stderr.strip()] and "damaged kernel cache file" in r.stderr
    assert any(_whole(f) for f in damaged)

    # ptonum compile: the same for the files the call did not need (still truncated)
    assert not all(_whole(f) for f in damaged)
    r = _run("from ptonum.cli import main; main(['compile'])", env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    assert _notes(r.stderr) == [r.stderr.strip()] and "damaged kernel cache file" in r.stderr
    assert all(_whole(f) for f in damaged)


def test_a_cache_file_holding_another_kernel_is_discarded_and_rebuilt(install: Path) -> None:
    """A data file that reads well but holds another kernel (break 2026-12-02: tcvt's files replaced by a
    decompose kernel's: "internal error: TypeError: _kernel expected 6 arguments, got 8" on every run until
    deleted by hand): one damaged-file note naming it and what it holds, the right bits, the file rebuilt."""
    root, site = install, str(install / "site")
    env = _env(root, PTONUM_CACHE_DIR=str(root / "shared"))
    targets = sorted(glob.glob(str(root / "shared" / "*" / "decompose.*.nbc")))
    foreign = sorted(glob.glob(str(root / "shared" / "*" / "tcvt.*.nbc")))
    assert targets and foreign
    want = _expected(PROBE)
    for f in targets:
        shutil.copyfile(foreign[0], f)
    r = _run(PROBE.format(site=site), env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split() == want[:-1] + ["True"]
    assert _notes(r.stderr) == [r.stderr.strip()] and "damaged kernel cache file" in r.stderr
    assert "it holds ptonum.kernels.tcvt." in r.stderr, r.stderr
    alien = Path(foreign[0]).read_bytes()
    assert any(os.path.exists(f) and Path(f).read_bytes() != alien for f in targets)  # the one it used, rebuilt


def test_damaged_index_reads_as_empty_and_is_removed(tmp_path: Path, capsys: Any) -> None:
    index = kernels._IndexFile(cache_path=str(tmp_path), filename_base="k.f-1.py311", source_stamp=b"s")
    Path(index._index_path).write_bytes(pickle.dumps(kernels._numba.__version__) + b"\x80\x05garbage")
    kernels._NOTED.discard("damaged")
    assert index._load_index() == {}
    assert not os.path.exists(index._index_path)
    assert capsys.readouterr().err.startswith(NOTE + "damaged kernel cache file " + index._index_path)


# ---------------------------------------------------------------- item 8: no new specialization


def _overloads() -> Dict[Any, int]:
    return {d: len(d.overloads) for m in ("postprocess", "tcvt", "decompose") for d in kernels.entry_kernels(m)}


def _read_only_copy(a: np.ndarray) -> np.ndarray:
    b = a.copy()
    b.flags.writeable = False
    return b


def test_no_input_layout_compiles_a_new_specialization(compiled: str, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    before = _overloads()
    monkeypatch.setenv("PTONUM_KERNEL_MIN_ELEMENTS", "0")
    rng = np.random.default_rng(8)
    acc = rng.integers(-2**31, 2**31, (64, 48), dtype=np.int64).astype(np.int32)
    np.save(tmp_path / "acc.npy", acc)
    mm = np.load(tmp_path / "acc.npy", mmap_mode="r")
    layouts = {"mmap": mm, "read-only": _read_only_copy(acc), "fortran": np.asfortranarray(acc),
               "strided": np.repeat(acc, 2, axis=1)[:, ::2], "broadcast": np.broadcast_to(acc[:1], acc.shape)}
    rmi = _read_only_copy(rng.integers(-100, 100, (64, 1), dtype=np.int64).astype(np.int32))
    qtile = _read_only_copy(np.full((1, 48), fpatr.quant_param(0.25, -3, mode="VREQ8"), np.uint64))
    calls = [
        dict(attributes={"pre_quant_mode": "REQ8", "row_max_en": True, "row_max_init": True, "group_max_en": True,
                         "group_n": 16}, quant_param=fpatr.quant_param(0.5, 1, mode="REQ8"), row_max_in=rmi),
        dict(attributes={"pre_quant_mode": "VREQ8", "relu_mode": "RELU"}, quant_tile=qtile),
        dict(attributes={"pre_quant_mode": "DEQF16"}, quant_param=fpatr.quant_param(0.5, mode="DEQF16")),
        dict(attributes={"pre_quant_mode": "SHIFTS322S16"}, quant_param=np.uint64(2) << np.uint64(32)),
    ]
    for name, a in layouts.items():
        for kw in calls:
            got = fpatr.postprocess(a, **kw)
            with monkeypatch.context() as mp:
                mp.setenv("PTONUM_DISABLE_NUMBA", "1")
                exp = fpatr.postprocess(np.array(a), **kw)
            assert np.array_equal(got.d_bits, exp.d_bits) and got.flags == exp.flags, name
    ro = _read_only_copy(acc.view(np.uint32))
    bits, fl = fpatr.postprocess_element(ro, pre_quant_mode="REQ8", relu_mode="NONE", acc_type="S32",
                                         quant_param=np.broadcast_to(np.uint64(fpatr.quant_param(0.5, 1, mode="REQ8")),
                                                                     acc.shape))
    fpatr.reduction_step(ro, ro[::-1].copy(), acc_type="S32", max_abs=True)
    tcvt.to_e8m0(_read_only_copy(acc.view(np.uint32)), src_type="FP32")
    tcvt.to_e8m0(_read_only_copy(acc.view(np.uint32)[:, :24].astype(np.uint16)), src_type="BF16")
    tcvt.to_e8m0_values(_read_only_copy(np.linspace(-3, 3, 512, dtype=np.float32)))
    formats.decompose("E4M3", _read_only_copy(np.arange(256, dtype=np.uint8)))
    formats.decompose("BF16", np.arange(256, dtype=np.uint8))  # 16-bit codes held in bytes
    formats.decompose("FP16", np.broadcast_to(np.arange(64, dtype=np.uint16), (8, 64)))
    encode(_read_only_copy(np.linspace(-3, 3, 512)), "FP16")
    assert _overloads() == before


# ---------------------------------------------------------------- item 9: no accumulator-sized copy


@pytest.mark.parametrize("layout", ["C", "F", "strided"])
def test_peak_memory_of_every_layout(compiled: str, layout: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PTONUM_KERNEL_MIN_ELEMENTS", "0")
    m = n = 2048  # 16 MiB of accumulators, 4 BLOCK_ELEMENTS
    base = np.arange(m * n * (2 if layout == "strided" else 1), dtype=np.int32)
    if layout == "C":
        acc = base.reshape(m, n)
    elif layout == "F":
        acc = np.asfortranarray(base.reshape(m, n))
    else:
        acc = base.reshape(m, 2 * n)[:, ::2]
    qp = fpatr.quant_param(0.5, 1, mode="REQ8")
    tracemalloc.start()
    try:
        r = fpatr.postprocess(acc, attributes={"pre_quant_mode": "REQ8", "row_max_en": True}, quant_param=qp)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    outputs = r.d_bits.nbytes + r.row_max_bits.nbytes
    # docs/performance.md: C order adds nothing to input + outputs; any other layout at most one
    # row block of accumulators (BLOCK_ELEMENTS x 4 bytes)
    extra = 0 if layout == "C" else 4 * BLOCK_ELEMENTS
    assert peak <= outputs + extra + (1 << 20), (layout, peak, outputs)
    for rows in (slice(0, 16), slice(m - 16, m)):  # same bits as the C-ordered numpy path
        with monkeypatch.context() as mp:
            mp.setenv("PTONUM_DISABLE_NUMBA", "1")
            exp = fpatr.postprocess(np.ascontiguousarray(acc[rows]), attributes={"pre_quant_mode": "REQ8",
                                    "row_max_en": True}, quant_param=qp)
        assert np.array_equal(r.d_bits[rows], exp.d_bits) and np.array_equal(r.row_max_bits[rows], exp.row_max_bits)


def test_no_writable_and_no_filled_cache_runs_on_numpy_with_a_note(tmp_path, monkeypatch, capsys) -> None:
    """probe13 #15: with no writable kernel cache and no compiled kernels anywhere, a large call compiled
    in memory for minutes in every process, after a note that did not say so; numpy gives the same bits in
    half a second.  Now: the numpy path and one note.  A read-only directory that holds compiled kernels
    (a shared install) still serves them."""
    from ptonum import engines

    empty, shared = tmp_path / "empty", tmp_path / "shared"
    empty.mkdir()
    shared.mkdir()
    (shared / "postprocess._kernel-1.py311.nbi").write_bytes(b"")
    monkeypatch.setattr(kernels, "_writable_dir", lambda path: False)
    monkeypatch.setattr(kernels, "_UNCACHED", {})
    monkeypatch.setattr(kernels, "_NOTED", set())
    monkeypatch.setattr(kernels, "kernel_cache_dirs", lambda: [str(empty)])
    assert engines.select("fast", 1 << 20) == "numpy"
    err = capsys.readouterr().err
    assert err == (f"ptonum: note: no writable kernel cache directory and no compiled kernels in any (tried {empty}): "
                   "compiling them would take minutes in every process, so the fast engine runs on numpy here (same "
                   "bits and flags); set PTONUM_CACHE_DIR to a writable directory, or run `ptonum compile` once with "
                   "write access to one of them, for the compiled kernels\n")
    monkeypatch.setattr(kernels, "kernel_cache_dirs", lambda: [str(empty), str(shared)])
    assert engines.select("fast", 1 << 20) == "numba"
    assert engines.select("fast", 16) == "numpy" and capsys.readouterr().err == ""


def test_cache_variable_naming_a_file_is_a_setting_note_not_a_damaged_cache(tmp_path: Path) -> None:
    """PTONUM_CACHE_DIR set to a regular file (try14 #15): one note naming the variable, the file is left
    alone and not among the lookup places, and nothing calls it a damaged cache file."""
    f = tmp_path / "cachefile.npy"
    f.write_bytes(b"user data")
    code = ("from ptonum.kernels import kernel_cache_dirs, writable_cache_dir; d = kernel_cache_dirs(); "
            "print(any(p.startswith(%r) for p in d), writable_cache_dir() is None or "
            "not writable_cache_dir().startswith(%r))" % (str(f), str(f)))
    env = {**os.environ, "PTONUM_CACHE_DIR": str(f)}
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["False", "True"]
    assert r.stderr.count("ptonum: note:") == 1 and f"PTONUM_CACHE_DIR = {f} is not a directory" in r.stderr
    assert "damaged" not in r.stderr
    assert f.read_bytes() == b"user data"


def test_cache_variable_under_a_file_is_a_setting_note_not_a_damaged_cache(tmp_path: Path) -> None:
    """NUMBA_CACHE_DIR=/dev/null/x (a path below a regular file; break-findings): every run printed
    'damaged kernel cache file .../x/... (NotADirectoryError ...) discarded; recompiling', although nothing
    was damaged or recompiled.  Expected: the not-a-directory note of the variable, once, and the place
    left out of the lookup list; the file is left alone."""
    f = tmp_path / "plainfile"
    f.write_bytes(b"user data")
    below = f / "x"
    code = ("from ptonum.kernels import kernel_cache_dirs, kernel_cache_warm; d = kernel_cache_dirs(); "
            "kernel_cache_warm('postprocess'); kernel_cache_warm('postprocess'); "
            "print(any(p.startswith(%r) for p in d))" % (str(f),))
    for var in ("NUMBA_CACHE_DIR", "PTONUM_CACHE_DIR"):
        env = {**os.environ, var: str(below)}
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        assert r.stdout.split() == ["False"], (var, r.stdout)
        assert "damaged" not in r.stderr, (var, r.stderr)
        assert r.stderr == (f"ptonum: note: {var} = {below} is not a directory ({f} is not one); the compiled "
                            "kernels are looked up in the other places (see `ptonum compile --help`)\n"), r.stderr
        assert f.read_bytes() == b"user data"


def test_a_home_that_does_not_exist_is_no_home_directory(tmp_path: Path) -> None:
    """break-findings (stop 22, MED): with HOME=/nonexistent (a daemon account, a CI container), the per-user
    cache ~/.cache/numba was a lookup and save place: the first writable check created /nonexistent/.cache/...
    and every kernel compiled there for minutes.  A HOME that does not exist is no home directory: not among
    the places, not created; XDG_CACHE_HOME, when set, still is one."""
    home = tmp_path / "nonexistent"
    code = ("from ptonum.kernels import kernel_cache_dirs, writable_cache_dir; d = kernel_cache_dirs(); "
            "writable_cache_dir(); print(any(p.startswith(%r) for p in d))" % (str(home),))
    env = {k: v for k, v in os.environ.items() if k not in ("PTONUM_CACHE_DIR", "NUMBA_CACHE_DIR", "XDG_CACHE_HOME")}
    env["HOME"] = str(home)
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert (r.returncode, r.stdout.split()) == (0, ["False"]), r.stderr
    assert not home.exists()
    env["XDG_CACHE_HOME"] = str(tmp_path / "xdg")
    r = subprocess.run([sys.executable, "-c", code.replace(repr(str(home)), repr(str(tmp_path / "xdg")))], env=env,
                       capture_output=True, text=True, timeout=120)
    assert (r.returncode, r.stdout.split()) == (0, ["True"]), r.stderr


# ---------------------------------------------------------------- a numba target without binary16 conversions


def test_half_conversions_missing_turn_the_kernels_off(monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """A numba target without F16C (``NUMBA_CPU_NAME=generic``, an old CPU) makes LLVM call the binary16
    conversion routines :data:`ptonum.kernels.HALF_LIBCALLS`; when no loaded library provides them a
    kernel compile would end the process ("Symbol not found: __extendhfsf2").  Then the kernels are off:
    the call runs on numpy (the same bits as the numpy path) with one note, and ``ptonum compile`` says why."""
    monkeypatch.setattr(kernels, "target_has_feature", lambda name: False)
    monkeypatch.setattr(kernels, "HALF_LIBCALLS", ("__ptonum_no_such_routine",))
    assert kernels._half_conversions_ready() is False
    monkeypatch.setattr(kernels, "HALF_READY", False)
    monkeypatch.setattr(kernels, "_NOTED", set())
    rng = np.random.default_rng(5)
    acc = (rng.standard_normal((256, 512)) * 50).astype(np.float32)
    attrs = {"pre_quant_mode": "F322F16", "group_max_en": True, "group_n": 8}
    assert not kernels.numba_enabled(acc.size) and not kernels.numba_enabled(None)
    got = fpatr.postprocess(acc, acc_type="FP32", attributes=attrs)
    notes = _notes(capsys.readouterr().err)
    assert notes == [NOTE + kernels.HALF_NOTE.format(cpu=os.environ.get("NUMBA_CPU_NAME") or "host")], notes
    monkeypatch.setenv("PTONUM_DISABLE_NUMBA", "1")
    want = fpatr.postprocess(acc, acc_type="FP32", attributes=attrs)
    assert np.array_equal(got.d_bits, want.d_bits) and got.flags == want.flags
    assert np.array_equal(got.group_max_bits, want.group_max_bits)
    monkeypatch.delenv("PTONUM_DISABLE_NUMBA")
    r = CliRunner().invoke(main, ["compile"])
    assert r.exit_code == 0 and "nothing to compile: numba's target has no F16C" in r.output, r.output


def _fake_cache_dir(root: Path, entries: List[tuple]) -> str:
    """A sysfs-like ``cpu0/cache`` directory: one ``indexN`` per (level, type, size)."""
    for k, (level, kind, size) in enumerate(entries):
        d = root / f"index{k}"
        d.mkdir(parents=True)
        (d / "level").write_text(f"{level}\n")
        (d / "type").write_text(f"{kind}\n")
        (d / "size").write_text(f"{size}\n")
    return str(root)


@pytest.mark.parametrize("entries, want", [
    # a 32 KiB L1d listed after a larger L1i (the type is what counts); a 48 KiB L1d listed first
    ([(1, "Instruction", "64K"), (1, "Data", "32K"), (2, "Unified", "1024K"), (3, "Unified", "32768K")], 32768),
    ([(1, "Data", "48K"), (1, "Instruction", "32K"), (2, "Unified", "1024K")], 49152),
    ([(1, "Unified", "64K")], 65536),
    ([(1, "Data", "1M")], 1 << 20),
    ([(1, "Data", "32768")], 32768),  # a size without a unit: bytes
    ([(1, "Instruction", "32K"), (2, "Unified", "1024K")], 0),  # no level-1 data cache listed
    ([(1, "Data", "large")], 0),  # a size that is not a number
])
def test_host_l1d_bytes_reads_the_level1_data_entry(tmp_path: Path, entries: List[tuple], want: int) -> None:
    from ptonum.kernels import host_l1d_bytes

    assert host_l1d_bytes(_fake_cache_dir(tmp_path / "cache", entries)) == want


def test_host_l1d_bytes_without_sysfs_is_zero(tmp_path: Path) -> None:
    from ptonum.kernels import host_l1d_bytes

    assert host_l1d_bytes(str(tmp_path / "absent")) == 0
    assert host_l1d_bytes(str(tmp_path)) == 0  # a directory without index entries


def test_s32_segments_follow_the_host_l1d() -> None:
    """VREQ8's per-column rows go in 1024-column segments only where a 48 KiB L1d keeps their parameter
    rows beside the stream (ptonum.kernels.postprocess._S32_SEG); no result depends on it."""
    from ptonum.kernels import host_l1d_bytes
    from ptonum.kernels import postprocess as P

    assert P._S32_SEG == (1024 if host_l1d_bytes() >= 48 * 1024 else 0)
