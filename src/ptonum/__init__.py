"""ptonum: a bit-exact, fast Python model of the PTO ISA numeric post-processing
(B.FPATR) and tile data-type operations that ADR-0085 makes architectural.

The normative owner of every rule is the executable ASL of PTO-ISA/pto-spec
(commit e599a3d3); each function names the ASL function it implements.
"""

from __future__ import annotations

from .errors import (
    IllegalEncodingError,
    PtonumError,
    TileLegalityError,
    UnsupportedConversionError,
    UsageError,
)
from .flags import NumericFlags, StatusRegister
from .formats import TileDataType
from .rounding import RoundingMode

__version__ = "0.1.0"

#: submodules reachable as attributes after a plain ``import ptonum`` (loaded on first use)
_SUBMODULES = ("formats", "fp19", "rounding", "encode", "tcvt", "fpatr", "flags", "errors", "conformance", "example")


def __getattr__(name: str) -> object:
    if name in _SUBMODULES:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'ptonum' has no attribute {name!r}")

__all__ = [
    "PtonumError",
    "IllegalEncodingError",
    "TileLegalityError",
    "UnsupportedConversionError",
    "UsageError",
    "NumericFlags",
    "StatusRegister",
    "TileDataType",
    "RoundingMode",
    "__version__",
]
