"""Shared test helpers: where the ASL conformance vectors live and how to read them."""

from __future__ import annotations

import csv
import gzip
import os
from pathlib import Path
from typing import Dict, List

import pytest

ROOT = Path(__file__).resolve().parents[1]


def vectors_dir() -> Path:
    """``../shared/vectors`` beside the checkout, or ``$PTONUM_VECTORS``."""
    env = os.environ.get("PTONUM_VECTORS")
    if env:
        return Path(env)
    return ROOT.parent / "shared" / "vectors"


def load_vectors(name: str) -> List[Dict[str, str]]:
    """Read every row of ``<vectors>/<name>.csv.gz`` as a dict of strings.

    Fails (never skips) when the file is missing: the vectors are the oracle.
    """
    path = vectors_dir() / f"{name}.csv.gz"
    if not path.exists():
        pytest.fail(f"conformance vector file missing: {path}")
    with gzip.open(path, "rt", newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.fixture(scope="session")
def vectors():
    cache: Dict[str, List[Dict[str, str]]] = {}

    def get(name: str) -> List[Dict[str, str]]:
        if name not in cache:
            cache[name] = load_vectors(name)
        return cache[name]

    return get
