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
