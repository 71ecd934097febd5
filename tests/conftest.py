"""Shared test helpers: where the ASL conformance vectors live and how to read them."""

from __future__ import annotations

import csv
import gzip
import os
import signal
from pathlib import Path
from typing import Dict, List, Tuple

import numpy as np
import pytest


def pytest_configure(config: pytest.Config) -> None:
    """The fault tests send real SIGINTs and expect Python's KeyboardInterrupt.  A shell that starts
    a command in the background without job control (``cmd &``, ``nohup``) hands it SIGINT *ignored*,
    and Python then keeps it ignored, so those signals would vanish; give SIGINT its usual Python
    handler (the state of an interactive run) so the suite means the same wherever it is started.
    Subprocesses started by the tests inherit the default action, as from a terminal."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


ROOT = Path(__file__).resolve().parents[1]


def vectors_dir() -> Path:
    """The ASL vectors shipped in the package (``src/ptonum/data/vectors``), or ``$PTONUM_VECTORS``."""
    env = os.environ.get("PTONUM_VECTORS")
    if env:
        return Path(env)
    from ptonum.conformance.schema import builtin_vectors_dir

    return builtin_vectors_dir()


def _vector_path(name: str) -> Path:
    path = vectors_dir() / f"{name}.csv.gz"
    if not path.exists():
        pytest.fail(f"conformance vector file missing: {path}")
    return path


def load_vectors(name: str) -> List[Dict[str, str]]:
    """Read every row of ``<vectors>/<name>.csv.gz`` as a dict of strings.

    Fails (never skips) when the file is missing: the vectors are the oracle.
    """
    with gzip.open(_vector_path(name), "rt", newline="") as fh:
        return list(csv.DictReader(fh))


def read_vector_tokens(name: str, columns: int) -> Tuple[bytes, np.ndarray]:
    """``<vectors>/<name>.csv.gz`` as ``(header line, rows x columns array of byte tokens)``.

    The fast way to read a large file whole (no per-row Python); fails when it is missing.
    """
    with gzip.open(_vector_path(name), "rb") as fh:
        data = fh.read()
    header, _, body = data.partition(b"\n")
    tok = np.array(body.replace(b",", b"\n").split(), dtype="S20").reshape(-1, columns)
    return header.strip(), tok


def hex_column(col: np.ndarray) -> np.ndarray:
    """Vectorized parse of ``0x``-prefixed hex byte tokens (up to 8 digits) -> uint64."""
    b = np.ascontiguousarray(col, dtype="S10").view(np.uint8).reshape(-1, 10).astype(np.int64)
    nib = np.full(256, -1, np.int64)
    for i, ch in enumerate(b"0123456789abcdef"):
        nib[ch] = i
    for i, ch in enumerate(b"ABCDEF"):
        nib[ch] = 10 + i
    assert np.all(b[:, 0] == ord("0")) and np.all(b[:, 1] == ord("x"))
    val = np.zeros(len(b), np.int64)
    for j in range(2, 10):
        c = b[:, j]
        live = c != 0
        assert np.all(nib[c[live]] >= 0)
        val = np.where(live, val * 16 + nib[c], val)
    return val.astype(np.uint64)


TcvtGroups = Dict[Tuple[str, str, int], Tuple[np.ndarray, np.ndarray, np.ndarray]]


@pytest.fixture(scope="session")
def tcvt_vector_groups() -> TcvtGroups:
    """``tcvt_e8m0.csv.gz`` split by (src_type, rmode, sat) -> (src_bits uint64,
    expected_bits uint8, expected_flags uint8); every row, read once per session."""
    header, tok = read_vector_tokens("tcvt_e8m0", 6)
    assert header == b"src_type,src_bits,rmode,sat,expected_bits,expected_flags"
    src, rm, sat = tok[:, 0], tok[:, 2], tok[:, 3].astype(np.int64)
    bits = hex_column(tok[:, 1])
    eb, ef = hex_column(tok[:, 4]).astype(np.uint8), hex_column(tok[:, 5]).astype(np.uint8)
    out: TcvtGroups = {}
    for s in np.unique(src):
        for m in np.unique(rm):
            for sv in (0, 1):
                sel = (src == s) & (rm == m) & (sat == sv)
                if np.any(sel):
                    out[(s.decode(), m.decode(), sv)] = (bits[sel], eb[sel], ef[sel])
    assert sum(len(v[0]) for v in out.values()) == len(tok) == 1916611
    return out


@pytest.fixture(scope="session")
def vectors():
    cache: Dict[str, List[Dict[str, str]]] = {}

    def get(name: str) -> List[Dict[str, str]]:
        if name not in cache:
            cache[name] = load_vectors(name)
        return cache[name]

    return get


# --------------------------------------------------------------------------
# Whole tiles through the ASL's own commit path (tiles.json.gz)


def load_tile_cases() -> List[Dict[str, object]]:
    """Every item of ``<vectors>/tiles.json.gz`` (``case``, ``expected``, ``source``).

    Fails (never skips) when the file is missing.
    """
    import json

    path = vectors_dir() / "tiles.json.gz"
    if not path.exists():
        pytest.fail(f"conformance vector file missing: {path}")
    with gzip.open(path, "rt") as fh:
        items = json.load(fh)
    assert isinstance(items, list) and len(items) == 96
    return items


def _hex_array(rows: object, dtype: type) -> np.ndarray:
    return np.array([[int(x, 16) for x in row] for row in rows], dtype=dtype)  # type: ignore[union-attr]


def tile_case_kwargs(case: Dict[str, object]) -> Dict[str, object]:
    """The keyword arguments of ``fpatr.postprocess`` for one ``case`` of tiles.json.gz.

    The accumulator is the raw 32-bit encodings (uint32) with ``acc_type``; a scalar
    parameter (one hex string) goes to ``quant_param``/``relu_param``, a list of N
    words to ``quant_tile``/``relu_tile`` (1 x N uint64); RowMaxIn is M x 1 uint32.
    """
    kw: Dict[str, object] = {
        "acc": _hex_array(case["acc"], np.uint32),
        "acc_type": case["acc_type"],
        "rmode": case["rmode"],
        "sat": bool(case["sat"]),
    }
    fields: Dict[str, object] = {
        "pre_quant_mode": case["pre_quant_mode"],
        "relu_mode": case["relu_mode"],
        "row_max_en": bool(case["row_max_en"]),
        "group_max_en": bool(case["group_max_en"]),
        "row_max_init": bool(case.get("row_max_init", 0)),
        "max_abs_en": bool(case["max_abs_en"]),
    }
    if "group_n" in case:
        fields["group_n"] = case["group_n"]
    kw["attributes"] = fields
    for key, scalar, tile in (("quant_param", "quant_param", "quant_tile"), ("relu_param", "relu_param", "relu_tile")):
        if key in case:
            value = case[key]
            if isinstance(value, str):
                kw[scalar] = int(value, 16)
            else:
                kw[tile] = _hex_array([value], np.uint64)
    if "row_max_in" in case:
        kw["row_max_in"] = np.array([[int(x, 16)] for x in case["row_max_in"]], dtype=np.uint32)  # type: ignore[union-attr]
    return kw


def tile_case_rejected(item: Dict[str, object]) -> bool:
    """True when the ASL never commits this case (``sources_legal`` false or an ``error``)."""
    expected = item["expected"]
    assert isinstance(expected, dict)
    return "error" in expected or not expected["sources_legal"]


def tile_case_expected(item: Dict[str, object]) -> Dict[str, object]:
    """The committed outputs of a legal case: ``dst_type``, ``d`` (M x N uint64 at the
    destination width, an S4X2 element as its nibble), ``row_max_out`` (M x 1 uint64 or
    None), ``group_max_out`` (M x G uint64 or None) and ``flags`` (int)."""
    e = item["expected"]
    assert isinstance(e, dict)
    return {
        "dst_type": e["dst_type"],
        "d": _hex_array(e["d"], np.uint64),
        "row_max_out": None if "row_max_out" not in e else np.array([[int(x, 16)] for x in e["row_max_out"]], np.uint64),
        "group_max_out": None if "group_max_out" not in e else _hex_array(e["group_max_out"], np.uint64),
        "flags": int(e["flags"], 16),
    }
