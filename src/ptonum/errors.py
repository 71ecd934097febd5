"""The typed errors ptonum raises on purpose.

Every error is a :class:`PtonumError`, itself a :class:`ValueError`, so a
caller can catch one class.  The subclasses mirror the fault kinds of the PTO
ISA that ADR-0085 relies on:

* :class:`IllegalEncodingError` -- a decode-reserved field value (reserved
  PreQuantMode, ReluMode or GroupNCode); the spec raises
  ``Fault_IllegalInstruction``.
* :class:`TileLegalityError` -- an accepted encoding used illegally: field
  combinations, B.DATR RMode/Sat not allowed for the mode, wrong accumulator
  class, illegal parameter words, shapes; the spec raises
  ``Fault_TileLegality``.  :class:`UnsupportedConversionError` is the TCVT
  source/destination pair rejection.
* :class:`UsageError` -- a problem with the Python call or a file: unknown type
  name, a code wider than its type, a lane out of range, a wrong dtype, an
  unreadable file.  It has no spec counterpart.

Each error is raised before any output is produced or any status register is
changed.
"""

from __future__ import annotations

__all__ = [
    "PtonumError",
    "IllegalEncodingError",
    "TileLegalityError",
    "UnsupportedConversionError",
    "UsageError",
]


class PtonumError(ValueError):
    """Base class of every error ptonum raises on purpose."""


class IllegalEncodingError(PtonumError):
    """A reserved field value (spec fault: ``Fault_IllegalInstruction``)."""


class TileLegalityError(PtonumError):
    """An accepted encoding used illegally (spec fault: ``Fault_TileLegality``)."""


class UnsupportedConversionError(TileLegalityError):
    """A conversion pair the profile rejects (e.g. TCVT to E8M0 from FP64)."""


class UsageError(PtonumError):
    """A bad argument or file: wrong type name, width, lane, dtype or shape."""
