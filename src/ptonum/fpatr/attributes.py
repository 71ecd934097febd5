"""The B.FPATR attribute word, the closed PreQuantMode table and field legality.

B.FPATR is the 32-bit block command that latches the matrix post-processing
descriptor of a CUBE Matrix block.  This module decodes and encodes that word,
re-exports the PreQuantMode table (:data:`ptonum.tables.MODE_TABLE`, built there
from the ASL predicate sets, never from code parity), and answers the legality questions the tile operation asks
before any effect: field combinations, B.DATR RMode/Sat, accumulator class.

Word layout (bit ranges ``[msb:lsb]``)::

    [31:26] PreQuantMode   [25:23] ReluMode     [22:19] GroupNCode
    [18] RowMaxEn  [17] GroupMaxEn  [16] RowMaxInit  [15] MaxAbsEn
    [14:12] Func = 2   [11] ElementWiseEn = 0   [10:9] Reserved = 0
    [8] TransB  [7] TransA   [6:4] Opc1 = 2   [3:1] Opcode = 1   [0] W = 1

The canonical "None" word is ``0x00002023``.

Error classes follow the spec's fault kinds: a word whose fixed bits do not
match does not decode as B.FPATR, and a reserved PreQuantMode, ReluMode,
GroupNCode or Reserved[10:9] value does not decode either -- both raise
:class:`~ptonum.errors.IllegalEncodingError` (``Fault_IllegalInstruction``).
Accepted encodings used illegally (inconsistent reduction enables, B.DATR
controls the mode does not allow, a wrong accumulator class) raise
:class:`~ptonum.errors.TileLegalityError` (``Fault_TileLegality``).  Bad
Python arguments raise :class:`~ptonum.errors.UsageError`.

Source: ADR-0085 decisions 174, 178, 179; pto-spec
``asl/block/attributes/B.FPATR.asl`` and ``MatrixFPATREffectiveControl`` in
``asl/arch/profile/matrix-postprocess.asl``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple, Union

import numpy as np

from .._util import is_digits, scalar_int
from ..errors import IllegalEncodingError, TileLegalityError, UsageError
from ..formats import TileDataType, parse_data_type
from ..rounding import RoundingMode, parse_rounding_mode
# the PreQuantMode table lives in the bottom layer (both engines read it); re-exported here
from ..tables import ASSIGNED_PRE_QUANT_CODES, MODE_TABLE, ModeInfo, PreQuantMode

__all__ = [
    "PreQuantMode",
    "ReluMode",
    "ModeInfo",
    "MODE_TABLE",
    "ASSIGNED_PRE_QUANT_CODES",
    "CANONICAL_NONE_WORD",
    "FIXED_MASK",
    "FIXED_MATCH",
    "GROUP_N_TABLE",
    "FPATRAttributes",
    "parse_pre_quant_mode",
    "parse_relu_mode",
    "mode_info",
    "group_n",
    "pre_quant_mode_legal",
    "relu_mode_legal",
    "group_n_code_legal",
    "fields_legal",
    "check_fields",
    "datr_fields_legal",
    "check_datr",
    "accumulator_type_legal",
    "check_accumulator_type",
    "output_type",
    "effective_control",
    "resolved_control",
    "check_datr_resolved",
]


# ---------------------------------------------------------------------------
# PreQuantMode and ReluMode


class ReluMode(enum.IntEnum):
    """B.FPATR ReluMode codes (4-7 are reserved).

    * ``NONE``  -- no activation;
    * ``RELU``  -- a negative accumulator selects the multiplier 0;
    * ``LRELU`` -- scalar LReLU/PReLU: a negative accumulator selects one FP19
      parameter from the dense B.IOR scalar stream;
    * ``PRELU`` -- vector PReLU: a negative accumulator selects the FP19
      parameter of its destination column from a 1 x N U64 tile.

    Source: ADR-0085 D176; ``BundleFPATRReluModeLegal``,
    ``BundleFPATRReluModeUsesScalarParameter``/``...VectorParameter``.
    """

    NONE = 0
    RELU = 1
    LRELU = 2
    PRELU = 3



# Names from the LinxISA TileOP-API header (a non-normative consumer of the
# spec) and the assembly spelling "None"; accepted as aliases on input only.
_PRE_QUANT_ALIASES: Dict[str, PreQuantMode] = {
    "NONE": PreQuantMode.NoQuant,
    "VREQS8PRE": PreQuantMode.VREQ8,
    "REQS8PRE": PreQuantMode.REQ8,
    "QF322S4PRE": PreQuantMode.REQ4,
    "VQF322S4PRE": PreQuantMode.VREQ4,
    "QF322S16PRE": PreQuantMode.DEQS16,
    "VQF322S16PRE": PreQuantMode.VDEQS16,
    "VQF322S8PRE": PreQuantMode.VQF322B8_PRE,
    "QF322S8PRE": PreQuantMode.QF322B8_PRE,
    "QF322HIF8PRE": PreQuantMode.QF322HIF8_PRE,
    "QF322FP8PRE": PreQuantMode.QF322FP8_PRE,
    "QF322F32PRE": PreQuantMode.QF322F32_PRE,
    "VQF322HIF8PRE": PreQuantMode.VQF322HIF8_PRE,
    "QF322F16PRE": PreQuantMode.QF322F16_PRE,
    "VQF322F16PRE": PreQuantMode.VQF322F16_PRE,
    "QF322BF16PRE": PreQuantMode.QF322BF16_PRE,
    "QS322BF16PRE": PreQuantMode.QS322BF16_PRE,
    "VQF322BF16PRE": PreQuantMode.VQF322BF16_PRE,
    "VQF322FP8PRE": PreQuantMode.VQF322FP8_PRE,
    "VQF322F32PRE": PreQuantMode.VQF322F32_PRE,
    "VQS322BF16PRE": PreQuantMode.VQS322BF16_PRE,
}
_PRE_QUANT_BY_NAME: Dict[str, PreQuantMode] = {m.name.upper(): m for m in PreQuantMode}

_RELU_ALIASES: Dict[str, ReluMode] = {
    "NONE": ReluMode.NONE,
    "RELU": ReluMode.RELU,
    "LRELU": ReluMode.LRELU,
    "SCALAR": ReluMode.LRELU,
    "PRELU": ReluMode.PRELU,
    "VECTOR": ReluMode.PRELU,
}

PreQuantModeLike = Union[PreQuantMode, int, str]
ReluModeLike = Union[ReluMode, int, str]


def _is_int(value: Any) -> bool:
    return scalar_int(value) is not None


def parse_pre_quant_mode(value: PreQuantModeLike, name: str = "pre_quant_mode") -> PreQuantMode:
    """Look a PreQuantMode up by member, code or name (case-insensitive).

    Names are the ADR-0085 D179 names (``REQ8``, ``qf322fp8_pre``...); the
    assembly spelling ``None`` and the TileOP-API spellings (``QF322S8Pre``...)
    are accepted as aliases.

    Raises :class:`IllegalEncodingError` for a reserved six-bit code (0-63
    but not assigned; ``Fault_IllegalInstruction``) and :class:`UsageError`
    for an unknown name, a code outside 0-63 or a non-int/str value.

    Source: ADR-0085 D179; ``BundleFPATRPreQuantModeLegal``.
    """
    if isinstance(value, PreQuantMode):
        return value
    if _is_int(value):
        iv = int(value)
        if iv < 0 or iv > 63:
            raise UsageError(f"{name} = {iv}: PreQuantMode is a six-bit field (0-63)")
        if iv not in ASSIGNED_PRE_QUANT_CODES:
            raise IllegalEncodingError(
                f"{name} = {iv}: reserved PreQuantMode code; assigned codes are 0-5, 12-13, "
                "16-20, 23-28, 32-39 (ADR-0085 D179, BundleFPATRPreQuantModeLegal)"
            )
        return PreQuantMode(iv)
    if isinstance(value, str):
        key = value.strip().upper()
        if key in _PRE_QUANT_BY_NAME:
            return _PRE_QUANT_BY_NAME[key]
        compact = key.replace("_", "")
        if compact in _PRE_QUANT_ALIASES:
            return _PRE_QUANT_ALIASES[compact]
        if is_digits(key):
            return parse_pre_quant_mode(int(key), name)
        raise UsageError(
            f"{name} = {value!r}: unknown PreQuantMode; expected a code or one of "
            f"{', '.join(m.name for m in PreQuantMode)}"
        )
    raise UsageError(f"{name} = {value!r}: expected a PreQuantMode name or code")


def parse_relu_mode(value: ReluModeLike, name: str = "relu_mode") -> ReluMode:
    """Look a ReluMode up by member, code (0-3) or name (``NONE``/``RELU``/``LRELU``/``PRELU``).

    Raises :class:`IllegalEncodingError` for the reserved codes 4-7 and
    :class:`UsageError` for an unknown name or a code outside 0-7.

    Source: ``BundleFPATRReluModeLegal``.
    """
    if isinstance(value, ReluMode):
        return value
    if _is_int(value):
        iv = int(value)
        if iv < 0 or iv > 7:
            raise UsageError(f"{name} = {iv}: ReluMode is a three-bit field (0-7)")
        if iv > 3:
            raise IllegalEncodingError(
                f"{name} = {iv}: reserved ReluMode code; assigned codes are 0 None, 1 ReLU, "
                "2 scalar LReLU/PReLU, 3 vector PReLU (ADR-0085 D176, BundleFPATRReluModeLegal)"
            )
        return ReluMode(iv)
    if isinstance(value, str):
        key = value.strip().upper()
        if key in _RELU_ALIASES:
            return _RELU_ALIASES[key]
        if is_digits(key):
            return parse_relu_mode(int(key), name)
        raise UsageError(f"{name} = {value!r}: unknown ReluMode; expected NONE, RELU, LRELU or PRELU")
    raise UsageError(f"{name} = {value!r}: expected a ReluMode name or code")


def mode_info(code: PreQuantModeLike) -> ModeInfo:
    """The :class:`ModeInfo` row of a PreQuantMode given by member, code or name.

    Raises :class:`IllegalEncodingError` for a reserved code and
    :class:`UsageError` for an unknown name.  Source: ADR-0085 D179.
    """
    return MODE_TABLE[int(parse_pre_quant_mode(code))]


# ---------------------------------------------------------------------------
# GroupN

#: GroupNCode -> GroupN (``BundleFPATRGroupN``); codes 10-15 are reserved.
GROUP_N_TABLE: Tuple[int, ...] = (0, 8, 16, 32, 48, 64, 80, 96, 112, 128)


def _check_group_n_code(code: Any, name: str = "group_n_code") -> int:
    if not _is_int(code):
        raise UsageError(f"{name} = {code!r}: expected an integer GroupNCode 0-9")
    iv = int(code)
    if iv < 0 or iv > 15:
        raise UsageError(f"{name} = {iv}: GroupNCode is a four-bit field (0-15)")
    if iv > 9:
        raise IllegalEncodingError(
            f"{name} = {iv}: reserved GroupNCode; codes 0-9 select GroupN 0, 8, 16, 32, 48, "
            "64, 80, 96, 112, 128 (BundleFPATRGroupNCodeLegal)"
        )
    return iv


def group_n(code: int) -> int:
    """GroupN (columns per GroupMax group) of a GroupNCode 0-9.

    Raises :class:`IllegalEncodingError` for the reserved codes 10-15 and
    :class:`UsageError` for a non-integer or a value outside 0-15.

    Source: ``BundleFPATRGroupN``.
    """
    return GROUP_N_TABLE[_check_group_n_code(code)]


# ---------------------------------------------------------------------------
# Word layout

CANONICAL_NONE_WORD = 0x00002023
#: bits that hold fixed discriminators and the Reserved field: Func[14:12],
#: ElementWiseEn[11], Reserved[10:9], Opc1[6:4], Opcode[3:1], W[0].
FIXED_MASK = 0x00007E7F
FIXED_MATCH = 0x00002023

_FIXED_FIELDS = (
    # name, lsb, width, required value
    ("Func", 12, 3, 2),
    ("ElementWiseEn", 11, 1, 0),
    ("Opc1", 4, 3, 2),
    ("Opcode", 1, 3, 1),
    ("W", 0, 1, 1),
)


def _as_bool(name: str, value: Any) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if _is_int(value) and int(value) in (0, 1):
        return bool(int(value))
    raise UsageError(f"{name} = {value!r}: expected a boolean (True/False or 0/1)")


@dataclass(frozen=True)
class FPATRAttributes:
    """A decoded B.FPATR descriptor (every field decodable; no cross-field check).

    Construct from a 32-bit word (:meth:`from_word`), from named fields
    (:meth:`from_fields`, names or codes), or directly.  Reserved
    PreQuantMode/ReluMode/GroupNCode values raise :class:`IllegalEncodingError`
    on construction.  Field combinations (RowMaxInit without RowMaxEn, ...)
    are *accepted encodings*; :func:`check_fields` rejects them, as the tile
    operation's preflight does.

    ``word`` re-encodes the descriptor; ``group_n`` is the GroupN column count.
    The default instance is the canonical ``B.FPATR None, None, 0, 0, 0, 0, 0,
    0, 0`` (word ``0x00002023``), which is also the state after bundle reset.

    Source: ADR-0085 D179; ``asl/block/attributes/B.FPATR.asl`` (encoding table).
    """

    pre_quant_mode: PreQuantMode = PreQuantMode.NoQuant
    relu_mode: ReluMode = ReluMode.NONE
    group_n_code: int = 0
    row_max_en: bool = False
    group_max_en: bool = False
    row_max_init: bool = False
    max_abs_en: bool = False
    trans_a: bool = False
    trans_b: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "pre_quant_mode", parse_pre_quant_mode(self.pre_quant_mode))
        object.__setattr__(self, "relu_mode", parse_relu_mode(self.relu_mode))
        object.__setattr__(self, "group_n_code", _check_group_n_code(self.group_n_code))
        for flag in ("row_max_en", "group_max_en", "row_max_init", "max_abs_en", "trans_a", "trans_b"):
            object.__setattr__(self, flag, _as_bool(flag, getattr(self, flag)))

    # -- derived --------------------------------------------------------
    @property
    def group_n(self) -> int:
        """GroupN column count (0 when GroupMax is off). Source: ``BundleFPATRGroupN``."""
        return GROUP_N_TABLE[self.group_n_code]

    @property
    def mode_info(self) -> ModeInfo:
        return MODE_TABLE[int(self.pre_quant_mode)]

    @property
    def word(self) -> int:
        """The 32-bit B.FPATR encoding of this descriptor."""
        w = FIXED_MATCH
        w |= int(self.pre_quant_mode) << 26
        w |= int(self.relu_mode) << 23
        w |= self.group_n_code << 19
        w |= int(self.row_max_en) << 18
        w |= int(self.group_max_en) << 17
        w |= int(self.row_max_init) << 16
        w |= int(self.max_abs_en) << 15
        w |= int(self.trans_b) << 8
        w |= int(self.trans_a) << 7
        return w

    def assembly(self) -> str:
        """Canonical assembly text, e.g. ``B.FPATR REQ8, RELU, 0, 0, 0, 0, 0, 0, 0``."""
        mode = "None" if self.pre_quant_mode == 0 else self.pre_quant_mode.name
        relu = "None" if self.relu_mode == 0 else self.relu_mode.name
        fields = [self.group_n_code, self.row_max_en, self.group_max_en, self.row_max_init,
                  self.max_abs_en, self.trans_a, self.trans_b]
        return f"B.FPATR {mode}, {relu}, " + ", ".join(str(int(f)) for f in fields)

    def __str__(self) -> str:
        return self.assembly()

    # -- constructors ---------------------------------------------------
    @classmethod
    def from_word(cls, word: Any) -> "FPATRAttributes":
        """Decode a 32-bit B.FPATR word.

        Raises:
            UsageError: ``word`` is not an integer in 0..2**32-1.
            IllegalEncodingError: a fixed discriminator (Func=2,
                ElementWiseEn=0, Opc1=2, Opcode=1, W=1) mismatches ("does not
                decode as B.FPATR"), Reserved[10:9] is nonzero, or
                PreQuantMode/ReluMode/GroupNCode is reserved.  The message
                names the field and its value.  A reserved value is never
                mapped to a default.

        Source: ADR-0085 D179; B.FPATR encoding (mask 0x00007e7f, match
        0x00002023) and ``BundleFPATRPreQuantModeLegal``,
        ``BundleFPATRReluModeLegal``, ``BundleFPATRGroupNCodeLegal``.
        """
        if not _is_int(word):
            raise UsageError(f"word = {word!r}: expected a 32-bit integer B.FPATR encoding")
        w = int(word)
        if w < 0 or w >> 32:
            raise UsageError(f"word = {w:#x}: a B.FPATR encoding is 32 bits")
        for fname, lsb, width, required in _FIXED_FIELDS:
            got = (w >> lsb) & ((1 << width) - 1)
            if got != required:
                raise IllegalEncodingError(
                    f"word = {w:#010x}: does not decode as B.FPATR: fixed field {fname}"
                    f"[{lsb + width - 1}:{lsb}] = {got}, must be {required}"
                    " (B.FPATR encoding mask 0x00007e7f match 0x00002023)"
                )
        reserved = (w >> 9) & 3
        if reserved:
            raise IllegalEncodingError(
                f"word = {w:#010x}: Reserved[10:9] = {reserved}, must be 0; every nonzero "
                "encoding is reserved (PTO-CUBE-SHARED-TRANSPOSE-001)"
            )
        pq = (w >> 26) & 0x3F
        if pq not in ASSIGNED_PRE_QUANT_CODES:
            raise IllegalEncodingError(
                f"word = {w:#010x}: PreQuantMode[31:26] = {pq} is reserved; assigned codes are "
                "0-5, 12-13, 16-20, 23-28, 32-39 (ADR-0085 D179, BundleFPATRPreQuantModeLegal)"
            )
        relu = (w >> 23) & 7
        if relu > 3:
            raise IllegalEncodingError(
                f"word = {w:#010x}: ReluMode[25:23] = {relu} is reserved; assigned codes are 0-3 "
                "(BundleFPATRReluModeLegal)"
            )
        gn = (w >> 19) & 0xF
        if gn > 9:
            raise IllegalEncodingError(
                f"word = {w:#010x}: GroupNCode[22:19] = {gn} is reserved; assigned codes are 0-9 "
                "(BundleFPATRGroupNCodeLegal)"
            )
        return cls(
            pre_quant_mode=PreQuantMode(pq),
            relu_mode=ReluMode(relu),
            group_n_code=gn,
            row_max_en=bool((w >> 18) & 1),
            group_max_en=bool((w >> 17) & 1),
            row_max_init=bool((w >> 16) & 1),
            max_abs_en=bool((w >> 15) & 1),
            trans_a=bool((w >> 7) & 1),
            trans_b=bool((w >> 8) & 1),
        )

    @classmethod
    def from_fields(
        cls,
        pre_quant_mode: PreQuantModeLike = 0,
        relu_mode: ReluModeLike = 0,
        group_n_code: Optional[int] = None,
        row_max_en: Any = False,
        group_max_en: Any = False,
        row_max_init: Any = False,
        max_abs_en: Any = False,
        trans_a: Any = False,
        trans_b: Any = False,
        *,
        group_n: Optional[int] = None,
    ) -> "FPATRAttributes":
        """Build a descriptor from named fields; modes by name or code.

        ``group_n`` (0, 8, 16, 32, 48, 64, 80, 96, 112, 128) may be given
        instead of ``group_n_code``.  No cross-field check is made (see
        :func:`check_fields`).

        Raises :class:`IllegalEncodingError` for reserved codes and
        :class:`UsageError` for bad arguments (unknown names, a GroupN that
        is not in the table, both ``group_n`` and ``group_n_code``).

        Source: ADR-0085 D179; the B.FPATR field list.
        """
        if group_n is not None:
            if group_n_code is not None:
                raise UsageError("give group_n or group_n_code, not both")
            if not _is_int(group_n) or int(group_n) not in GROUP_N_TABLE:
                raise UsageError(
                    f"group_n = {group_n!r}: expected one of {', '.join(map(str, GROUP_N_TABLE))}"
                )
            group_n_code = GROUP_N_TABLE.index(int(group_n))
        return cls(
            pre_quant_mode=parse_pre_quant_mode(pre_quant_mode),
            relu_mode=parse_relu_mode(relu_mode),
            group_n_code=0 if group_n_code is None else group_n_code,
            row_max_en=row_max_en,
            group_max_en=group_max_en,
            row_max_init=row_max_init,
            max_abs_en=max_abs_en,
            trans_a=trans_a,
            trans_b=trans_b,
        )


# ---------------------------------------------------------------------------
# Legality predicates (mirror the ASL; reserved codes give False)


def pre_quant_mode_legal(code: int) -> bool:
    """``BundleFPATRPreQuantModeLegal``: the six-bit code is assigned.

    Source: ADR-0085 D179; ``BundleFPATRPreQuantModeLegal``.
    """
    return _is_int(code) and int(code) in ASSIGNED_PRE_QUANT_CODES


def relu_mode_legal(code: int) -> bool:
    """``BundleFPATRReluModeLegal``: the three-bit code is 0-3.

    Source: ADR-0085 D176; ``BundleFPATRReluModeLegal``.
    """
    return _is_int(code) and 0 <= int(code) <= 3


def group_n_code_legal(code: int) -> bool:
    """``BundleFPATRGroupNCodeLegal``: the four-bit code is 0-9.

    Source: ADR-0085 D175/D181; ``BundleFPATRGroupNCodeLegal``.
    """
    return _is_int(code) and 0 <= int(code) <= 9


def _fields_violation(
    pre_quant: int, relu: int, group_n_code: int, row_max: bool,
    group_max: bool, row_init: bool, max_abs: bool,
) -> Optional[str]:
    if not pre_quant_mode_legal(pre_quant):
        return f"PreQuantMode {pre_quant} is reserved"
    if not relu_mode_legal(relu):
        return f"ReluMode {relu} is reserved"
    if not group_n_code_legal(group_n_code):
        return f"GroupNCode {group_n_code} is reserved"
    if row_init and not row_max:
        return "RowMaxInit requires RowMaxEn"
    if group_n_code != 0 and not group_max:
        return f"GroupNCode = {group_n_code} (nonzero) requires GroupMaxEn"
    if group_max and group_n_code == 0:
        return "GroupMaxEn requires a nonzero GroupNCode"
    if max_abs and not (row_max or group_max):
        return "MaxAbsEn requires RowMaxEn or GroupMaxEn"
    return None


def fields_legal(
    pre_quant_mode: int, relu_mode: int, group_n_code: int, row_max_en: bool,
    group_max_en: bool, row_max_init: bool, max_abs_en: bool,
) -> bool:
    """``BundleFPATRFieldsLegal`` on raw field values (reserved codes give False).

    Source: ADR-0085 D179; ``BundleFPATRFieldsLegal``.
    """
    return _fields_violation(
        int(pre_quant_mode), int(relu_mode), int(group_n_code), bool(row_max_en),
        bool(group_max_en), bool(row_max_init), bool(max_abs_en),
    ) is None


def check_fields(attrs: FPATRAttributes) -> None:
    """Reject inconsistent reduction enables of an accepted descriptor.

    Rules (``BundleFPATRFieldsLegal``): RowMaxInit requires RowMaxEn;
    GroupMaxEn requires a nonzero GroupNCode and a nonzero GroupNCode
    requires GroupMaxEn; MaxAbsEn requires RowMaxEn or GroupMaxEn.

    Raises :class:`TileLegalityError` naming the rule and the field values
    (``Fault_TileLegality``); :class:`UsageError` if ``attrs`` is not an
    :class:`FPATRAttributes`.

    Source: ADR-0085 D175/D181; ``BundleFPATRFieldsLegal``.
    """
    if not isinstance(attrs, FPATRAttributes):
        raise UsageError(f"attrs = {attrs!r}: expected an FPATRAttributes")
    why = _fields_violation(
        int(attrs.pre_quant_mode), int(attrs.relu_mode), attrs.group_n_code, attrs.row_max_en,
        attrs.group_max_en, attrs.row_max_init, attrs.max_abs_en,
    )
    if why is not None:
        mode = "NONE" if attrs.pre_quant_mode == 0 else attrs.pre_quant_mode.name
        relu = "NONE" if attrs.relu_mode == 0 else attrs.relu_mode.name
        fields = (f"PreQuantMode={mode} ReluMode={relu} GroupNCode={attrs.group_n_code} "
                  f"RowMaxEn={int(attrs.row_max_en)} GroupMaxEn={int(attrs.group_max_en)} "
                  f"RowMaxInit={int(attrs.row_max_init)} MaxAbsEn={int(attrs.max_abs_en)}")
        raise TileLegalityError(
            f"{why}: B.FPATR {attrs.word:#010x} has {fields} (ADR-0085 D175, BundleFPATRFieldsLegal)"
        )


def _rmode_code(rmode: Any) -> int:
    return int(parse_rounding_mode(rmode, "rmode"))


def _datr_violation(mode: int, rmode: int, sat: bool) -> Optional[str]:
    if mode not in ASSIGNED_PRE_QUANT_CODES:
        return f"PreQuantMode {mode} is reserved"
    rname = RoundingMode(rmode).name
    if mode == 0:
        if rmode != 0:
            return f"PreQuantMode 0 (NoQuant) requires B.DATR RMode=NONE, got {rname}"
        if sat:
            return "PreQuantMode 0 (NoQuant) requires B.DATR Sat=0"
        return None
    info = MODE_TABLE[mode]
    name = info.name
    if info.is_shift:
        if rmode != 0:
            return f"shift mode {mode} ({name}) requires B.DATR RMode=NONE, got {rname}"
        if sat:
            return (f"shift mode {mode} ({name}) requires B.DATR Sat=0 "
                    "(its S16 result is always saturated)")
        return None
    if info.fixed_rounding is not None and rmode != 0:
        fixed = info.fixed_rounding.name
        return (f"fixed-rounding mode {mode} ({name}, always {fixed}) requires "
                f"B.DATR RMode=NONE, got {rname}")
    return None


def datr_fields_legal(mode: Any, rmode: Any, sat: Any) -> bool:
    """``BundleFPATRDATRFieldsLegal``: may B.DATR carry ``rmode``/``sat`` with this mode?

    ``mode`` is a PreQuantMode member, code or name (a reserved code gives
    False, as the ASL); ``rmode`` is the B.DATR RMode code 0-7 or a
    :class:`RoundingMode` name; ``sat`` is a boolean.  Mode 0 and the shift
    modes require RMode=NONE and Sat=0; fixed-rounding modes require
    RMode=NONE; every other mode accepts any RMode and Sat.

    Raises :class:`UsageError` for an unreadable argument.
    Source: ADR-0085 D178; ``BundleFPATRDATRFieldsLegal``.
    """
    code = _mode_code_or_reserved(mode)
    return _datr_violation(code, _rmode_code(rmode), _as_bool("sat", sat)) is None


def check_datr(mode: Any, rmode: Any, sat: Any) -> None:
    """Raise :class:`TileLegalityError` when :func:`datr_fields_legal` is False.

    The message names the mode, the offending control and the rule
    (ADR-0085 D178, ``BundleFPATRDATRFieldsLegal``).

    Source: ADR-0085 D178; ``BundleFPATRDATRFieldsLegal``.
    """
    check_datr_resolved(_mode_code_or_reserved(mode), parse_rounding_mode(rmode, "rmode"), _as_bool("sat", sat))


def check_datr_resolved(mode: int, rmode: RoundingMode, sat: bool) -> None:
    """:func:`check_datr` on typed values (a mode code, a :class:`RoundingMode`, a ``bool``); no parsing.

    Source: ADR-0085 D178; ``BundleFPATRDATRFieldsLegal``.
    """
    why = _datr_violation(int(mode), int(rmode), sat)
    if why is not None:
        raise TileLegalityError(
            f"B.DATR RMode={rmode.name}, Sat={int(sat)}: {why} "
            "(ADR-0085 D178, BundleFPATRDATRFieldsLegal)"
        )


def _mode_code_or_reserved(mode: Any) -> int:
    """A mode code; reserved codes pass through (the predicates answer False)."""
    if _is_int(mode):
        iv = int(mode)
        if iv < 0 or iv > 63:
            raise UsageError(f"pre_quant_mode = {iv}: PreQuantMode is a six-bit field (0-63)")
        return iv
    return int(parse_pre_quant_mode(mode))


def accumulator_type_legal(mode: Any, acc_type: Any) -> bool:
    """``BundleFPATRAccumulatorTypeLegal``: does the mode accept this accumulator class?

    Mode 0 accepts FP32, S32 and U32; the S32 modes (2-5, 12, 13, 17-20,
    35, 39) accept S32 only; every other assigned mode accepts FP32 only; a
    reserved code accepts nothing.  ``acc_type`` is a TileDataType name or code.

    Source: ADR-0085 D179; ``BundleFPATRAccumulatorTypeLegal``.
    """
    code = _mode_code_or_reserved(mode)
    acc = parse_data_type(acc_type, "acc_type")
    if code not in ASSIGNED_PRE_QUANT_CODES:
        return False
    return acc in MODE_TABLE[code].accumulator_types


def check_accumulator_type(mode: Any, acc_type: Any) -> None:
    """Raise :class:`TileLegalityError` when the mode rejects the accumulator class.

    Source: ADR-0085 D179 ("a nonzero mode used with a different accumulator
    class MUST reject before ... effects"); ``BundleFPATRAccumulatorTypeLegal``.
    """
    code = _mode_code_or_reserved(mode)
    acc = parse_data_type(acc_type, "acc_type")
    if not accumulator_type_legal(code, acc):
        if code in ASSIGNED_PRE_QUANT_CODES:
            allowed = "/".join(t.name for t in MODE_TABLE[code].accumulator_types)
            what = f"PreQuantMode {code} ({PreQuantMode(code).name}) accepts only {allowed}"
        else:
            what = f"PreQuantMode {code} is reserved"
        raise TileLegalityError(
            f"acc_type = {acc.name}: {what} accumulators "
            "(ADR-0085 D179, BundleFPATRAccumulatorTypeLegal)"
        )


def output_type(mode: Any, acc_type: Any = None) -> TileDataType:
    """The destination Tile DataType of D for a mode.

    Mode 0 keeps the accumulator type (``acc_type``; FP32 when omitted, as
    ``BundleFPATROutputType`` answers for code 0); other modes use the table.
    The accumulator class is not checked here (see
    :func:`check_accumulator_type`).

    Raises :class:`IllegalEncodingError` for a reserved mode.
    Source: ADR-0085 D179; ``BundleFPATROutputType``, ``MatrixPostProcessResult``.
    """
    info = mode_info(mode)
    if info.code == 0:
        if acc_type is None:
            return TileDataType.FP32
        return parse_data_type(acc_type, "acc_type")
    assert info.destination is not None
    return info.destination


def effective_control(mode: Any, rmode: Any = "NONE", sat: Any = False) -> Tuple[RoundingMode, bool]:
    """The rounding mode and Sat the element conversion actually uses.

    B.DATR RMode NONE resolves to RNE for the matrix operation; modes 25 and
    28 then force RHB and the other fixed-rounding modes force RNE; Sat
    passes through.  Any ``rmode`` is accepted for any mode (legality is
    :func:`check_datr`'s job).

    Returns ``(RoundingMode, bool)`` with the mode never NONE.
    Raises :class:`IllegalEncodingError` (reserved mode) or :class:`UsageError`.
    Source: ``MatrixFPATREffectiveControl`` (matrix-postprocess.asl) and the
    matrix NONE->RNE resolution (``ResolveTileNumericExecutionControl``).
    """
    return resolved_control(mode_info(mode), parse_rounding_mode(rmode, "rmode"), _as_bool("sat", sat))


def resolved_control(info: ModeInfo, rmode: RoundingMode, sat: bool) -> Tuple[RoundingMode, bool]:
    """:func:`effective_control` on typed values (a mode-table row, a :class:`RoundingMode`, a ``bool``).

    Source: ``MatrixFPATREffectiveControl`` and the matrix NONE->RNE resolution.
    """
    if info.fixed_rounding is not None:
        return info.fixed_rounding, sat
    return rmode.resolved(RoundingMode.RNE), sat

