"""Shared test helpers: where the ASL conformance vectors live and how to read them."""

from __future__ import annotations

import csv
import gzip
import os
from pathlib import Path
from typing import Dict, List, Tuple

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]


def vectors_dir() -> Path:
    """``../shared/vectors`` beside the checkout, or ``$PTONUM_VECTORS``."""
    env = os.environ.get("PTONUM_VECTORS")
    if env:
        return Path(env)
    return ROOT.parent / "shared" / "vectors"


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
