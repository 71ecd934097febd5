"""Numeric status flags and the sticky status register.

Source: ADR-0038 decision 1 (``CORE_STATE[36:32]`` holds NV, DZ, OF, UF and NX
from low to high) and pto-spec ``asl/arch/state/numeric-status.asl``
(``RecordNumericStatusFlags`` ORs new flags into the old value and never clears
them).  ADR-0085 D181: B.FPATR records all element and reduction flags once,
at the atomic commit.
"""

from __future__ import annotations

import enum
from typing import Iterable, Union

import numpy as np

__all__ = ["NumericFlags", "StatusRegister", "flag_names", "NV", "DZ", "OF", "UF", "NX"]

#: The flag bits as plain ints (numba folds module-level ints; every module and kernel reads these).
NV, DZ, OF, UF, NX = 0x01, 0x02, 0x04, 0x08, 0x10


class NumericFlags(enum.IntFlag):
    """The five numeric exception flags, in ``CORE_STATE[36:32]`` bit order."""

    NONE = 0
    NV = NV  #: invalid operation
    DZ = DZ  #: divide by zero (never raised by ADR-0085 operations)
    OF = OF  #: overflow
    UF = UF  #: underflow
    NX = NX  #: inexact

    def __str__(self) -> str:
        return flag_names(int(self))


_ORDER = (("NV", NV), ("DZ", DZ), ("OF", OF), ("UF", UF), ("NX", NX))


def flag_names(flags: int) -> str:
    """Return ``"NV|OF|NX"``-style text for a 5-bit flag value (``"-"`` if none).

    ``flags``: an integer 0..0x1f (int, numpy integer, :class:`NumericFlags`).  Raises
    :class:`~ptonum.errors.UsageError` for anything else -- a value with bits above NX or a negative
    one is not shown as some other set of flags.

    Source: ADR-0038 decision 1 (NV, DZ, OF, UF, NX from bit 0 up); ``RecordNumericStatusFlags``.
    """
    if isinstance(flags, (bool, np.bool_)) or not isinstance(flags, (int, np.integer)):
        from .errors import UsageError

        raise UsageError(f"flags = {flags!r}: expected an integer 0..0x1f (NV=0x01 DZ=0x02 OF=0x04 UF=0x08 NX=0x10)")
    if flags < 0 or flags > 0x1F:
        from .errors import UsageError

        raise UsageError(f"flags = {int(flags):#x}: numeric flags are 5 bits (0..0x1f: NV=0x01 DZ=0x02 OF=0x04 "
                         "UF=0x08 NX=0x10)")
    names = [name for name, bit in _ORDER if flags & bit]
    return "|".join(names) if names else "-"


FlagsLike = Union[int, NumericFlags, "np.ndarray", Iterable[int]]


class StatusRegister:
    """A sticky 5-bit numeric status register.

    Operations OR their flags in (:meth:`record`); nothing but :meth:`reset`
    clears a bit.  ``int(status)`` gives the five bits; ``status.flags`` the
    same value as :class:`NumericFlags`.

    Source: ``RecordNumericStatusFlags`` (pto-spec
    ``asl/arch/state/numeric-status.asl``).
    """

    __slots__ = ("_bits",)

    def __init__(self, initial: int = 0) -> None:
        from .errors import UsageError

        if isinstance(initial, bool) or not isinstance(initial, (int, np.integer)):
            raise UsageError(f"initial = {initial!r}: a status register starts from an integer 0..0x1f")
        value = int(initial)
        if value < 0 or value > 0x1F:
            raise UsageError(f"initial = {initial!r}: a status register holds 5 bits (0..0x1f)")
        self._bits = value

    def record(self, flags: FlagsLike) -> None:
        """OR ``flags`` (an int, NumericFlags or an array of flag bytes) into the register."""
        from .errors import UsageError

        if isinstance(flags, bool):
            raise UsageError(f"flags = {flags!r}: expected 5-bit flag values, got a boolean")
        if isinstance(flags, (int, np.integer, NumericFlags)):
            value = int(flags)
        else:
            arr = np.asarray(flags)
            if arr.size and arr.dtype.kind not in "iu":
                raise UsageError(f"flags: expected integer flag values, got dtype {arr.dtype}")
            value = int(np.bitwise_or.reduce(arr.astype(np.int64), axis=None)) if arr.size else 0
        if value < 0 or value > 0x1F:
            raise UsageError(f"flags = {value:#x}: numeric flags are 5 bits (0..0x1f)")
        self._bits |= value

    def reset(self) -> None:
        """Clear every flag (an explicit act; operations never clear flags)."""
        self._bits = 0

    @property
    def flags(self) -> NumericFlags:
        return NumericFlags(self._bits)

    def __int__(self) -> int:
        return self._bits

    def __index__(self) -> int:
        return self._bits

    def __eq__(self, other: object) -> bool:
        if isinstance(other, StatusRegister):
            return self._bits == other._bits
        if isinstance(other, int):
            return self._bits == int(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._bits)

    def __repr__(self) -> str:
        return f"StatusRegister(0x{self._bits:02x} {flag_names(self._bits)})"
