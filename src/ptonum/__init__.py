"""ptonum: a bit-exact, fast Python model of the PTO ISA numeric post-processing
(B.FPATR) and tile data-type operations that ADR-0085 makes architectural.

The normative owner of every rule is the executable ASL of PTO-ISA/pto-spec
(commit e599a3d3); each function names the ASL function it implements.
"""

from __future__ import annotations

TYPE_CHECKING = False  # (not typing's: importing typing is itself a noticeable part of start-up)
if TYPE_CHECKING:  # loaded on first use (see __getattr__), so that ``import ptonum`` stays light
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

#: the top-level names and the submodule defining each, imported on first use: a plain
#: ``import ptonum`` imports neither numpy nor any submodule, so the ``ptonum`` command's entry
#: point (:mod:`ptonum.__main__`) takes SIGINT and SIGTERM over before anything heavy is loaded
_NAMES = {
    "PtonumError": "errors",
    "IllegalEncodingError": "errors",
    "TileLegalityError": "errors",
    "UnsupportedConversionError": "errors",
    "UsageError": "errors",
    "NumericFlags": "flags",
    "StatusRegister": "flags",
    "TileDataType": "formats",
    "RoundingMode": "rounding",
}


def __getattr__(name: str) -> object:
    import importlib

    if name in _NAMES:
        value = getattr(importlib.import_module(f"{__name__}.{_NAMES[name]}"), name)
        globals()[name] = value  # later lookups find it directly
        return value
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'ptonum' has no attribute {name!r}")


def __dir__() -> list:
    """The module's names with the lazily loaded ones (tab completion lists the public API)."""
    return sorted(set(globals()) | set(_NAMES) | set(_SUBMODULES))


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
