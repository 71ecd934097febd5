"""Tile DataTypes, format descriptors, value classes and exact decomposition.

Source: pto-spec ``asl/arch/data-types/tile-data-types.asl`` (codes),
``asl/arch/data-types/format-descriptor.asl`` and
``asl/arch/data-types/formats/*.asl`` (descriptors, value classes,
``TileNumericFiniteDecomposition``); ADR-0085 decision 182.
"""

from __future__ import annotations

import enum
from typing import Union

from .errors import UsageError

__all__ = ["TileDataType", "parse_data_type"]


class TileDataType(enum.IntEnum):
    """B.DATR DataType codes (``TileDataTypeFromEncoding``)."""

    FP64 = 0
    FP32 = 1
    TF32 = 2
    HF32 = 3
    FP16 = 4
    BF16 = 5
    HiF8 = 6
    E4M3 = 7
    E5M2 = 8
    E3M2 = 9
    E2M3 = 10
    E2M1X2 = 11
    E1M2X2 = 12
    E8M0 = 13
    HiF4X2 = 14
    S64 = 16
    S32 = 17
    S16 = 18
    S8 = 19
    S4X2 = 20
    U64 = 24
    U32 = 25
    U16 = 26
    U8 = 27
    U4X2 = 28

    @property
    def is_integer(self) -> bool:
        return self.value >= 16

    @property
    def is_floating(self) -> bool:
        return self.value < 16

    @property
    def is_signed_integer(self) -> bool:
        return 16 <= self.value <= 20


_BY_NAME = {m.name.upper(): m for m in TileDataType}

DataTypeLike = Union[TileDataType, int, str]


def parse_data_type(value: DataTypeLike, name: str = "data_type") -> TileDataType:
    """Look a Tile DataType up by member, B.DATR code or name (case-insensitive).

    Raises :class:`UsageError` naming ``name`` and the value when it is not an
    assigned DataType (codes 15, 21-23, 29-31 are reserved or DTYPE_NONE).
    """
    if isinstance(value, TileDataType):
        return value
    if isinstance(value, bool):
        raise UsageError(f"{name} = {value!r}: expected a Tile DataType name or code")
    if isinstance(value, int) or (hasattr(value, "dtype") and getattr(value, "dtype").kind in "iu"):
        iv = int(value)  # type: ignore[arg-type]
        try:
            return TileDataType(iv)
        except ValueError:
            raise UsageError(
                f"{name} = {iv}: not an assigned Tile DataType code (0-14, 16-20, 24-28)"
            ) from None
    if isinstance(value, str):
        key = value.strip().upper()
        if key in _BY_NAME:
            return _BY_NAME[key]
        raise UsageError(
            f"{name} = {value!r}: unknown Tile DataType; expected one of {', '.join(m.name for m in TileDataType)}"
        )
    raise UsageError(f"{name} = {value!r}: expected a Tile DataType name or code")
