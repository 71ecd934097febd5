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

import re

__all__ = [
    "PtonumError",
    "IllegalEncodingError",
    "TileLegalityError",
    "UnsupportedConversionError",
    "UsageError",
    "short_numbers",
    "short_text",
    "LONG_DIGITS",
]

#: a number written with more digits than this is shown shortened in messages (:func:`short_numbers`)
LONG_DIGITS = 100
#: how many of its first and of its last digits a shortened number keeps
_KEPT = 20
_LONG_NUMBER = re.compile(r"(?<![0-9A-Za-z_])(0[xX])([0-9a-fA-F]{%d,})|(0[bB])([01]{%d,})|(0[oO])([0-7]{%d,})|([0-9]{%d,})"
                          % ((LONG_DIGITS + 1,) * 4))
_DIGIT_NAMES = {"x": "hex digits", "b": "binary digits", "o": "octal digits"}


def short_numbers(text: str) -> str:
    """``text`` with every number written with more than :data:`LONG_DIGITS` digits (a run of decimal
    digits, or ``0x``/``0b``/``0o`` and their digits) shortened to its first and last 20 digits and
    its length: ``77777777777777777777...77777777777777777777 (5000 digits)``,
    ``0x26cc3f...c0a30e6 (4236 hex digits)``.  A message then still says what and where, in one line
    rather than a screenful per number.  Shorter numbers are left as they are.

    Source: no ASL counterpart (message text).
    """
    def shorten(m: "re.Match[str]") -> str:
        prefix = m.group(1) or m.group(3) or m.group(5) or ""
        digits = m.group(2) or m.group(4) or m.group(6) or m.group(7)
        kind = _DIGIT_NAMES[prefix[1].lower()] if prefix else "digits"
        return f"{prefix}{digits[:_KEPT]}...{digits[-_KEPT:]} ({len(digits)} {kind})"

    return _LONG_NUMBER.sub(shorten, text)


#: a message about one field of a file (:func:`short_text`) longer than this many characters is shown cut
LONG_TEXT = 500


def short_text(text: str) -> str:
    """``text``, a message that quotes a field of a file (a malformed CSV row's or tile case's), with its numbers
    shortened (:func:`short_numbers`) and, when it is still longer than :data:`LONG_TEXT` characters (a field of
    megabytes of other text), its middle left out: its first 300 and last 150 characters around
    ``... (N characters left out) ...``.  The start names the field and the end says what is wrong with it, so
    the message still says what and where, in one line rather than megabytes.

    Source: no ASL counterpart (message text).
    """
    text = short_numbers(text)
    if len(text) <= LONG_TEXT:
        return text
    return f"{text[:300]}... ({len(text) - 450} characters left out) ...{text[-150:]}"


class PtonumError(ValueError):
    """Base class of every error ptonum raises on purpose.

    Its message never holds a number of more than :data:`LONG_DIGITS` digits in full (an argument of
    5000 digits echoed back): :func:`short_numbers` shortens it.
    """

    def __init__(self, *args: object) -> None:
        if args and isinstance(args[0], str) and len(args[0]) > LONG_DIGITS:
            args = (short_numbers(args[0]), *args[1:])
        super().__init__(*args)


class IllegalEncodingError(PtonumError):
    """A reserved field value (spec fault: ``Fault_IllegalInstruction``)."""


class TileLegalityError(PtonumError):
    """An accepted encoding used illegally (spec fault: ``Fault_TileLegality``)."""


class UnsupportedConversionError(TileLegalityError):
    """A conversion pair the profile rejects (e.g. TCVT to E8M0 from FP64)."""


class UsageError(PtonumError):
    """A bad argument or file: wrong type name, width, lane, dtype or shape."""
