"""Tests for ptonum.fpatr.attributes: the B.FPATR word, the mode table and field legality.

Expected values come from the pto-spec ASL tests under
``tests/asl/block/attributes/B.FPATR/`` (each named in its test) and from the
ADR-0085 D179 table (transcribed below as data).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptonum.errors import IllegalEncodingError, PtonumError, TileLegalityError, UsageError
from ptonum.formats import TileDataType as T
from ptonum.fpatr.attributes import (
    CANONICAL_NONE_WORD,
    MODE_TABLE,
    FPATRAttributes,
    PreQuantMode,
    ReluMode,
    accumulator_type_legal,
    check_accumulator_type,
    check_datr,
    check_fields,
    datr_fields_legal,
    effective_control,
    fields_legal,
    group_n,
    group_n_code_legal,
    mode_info,
    output_type,
    parse_pre_quant_mode,
    parse_relu_mode,
    pre_quant_mode_legal,
    relu_mode_legal,
)
from ptonum.rounding import RoundingMode as R

# ADR-0085 D179 table: code, name, accumulator, destination (None = unchanged), parameter
ADR_D179 = [
    (0, "NoQuant", "FP32/S32/U32", None, "none"),
    (1, "F322F16", "FP32", "FP16", "none"),
    (2, "VREQ8", "S32", "S8", "vector"),
    (3, "REQ8", "S32", "S8", "scalar"),
    (4, "VDEQF16", "S32", "FP16", "vector"),
    (5, "DEQF16", "S32", "FP16", "scalar"),
    (12, "VSHIFTS322S16", "S32", "S16", "vector"),
    (13, "SHIFTS322S16", "S32", "S16", "scalar"),
    (16, "F322BF16", "FP32", "BF16", "none"),
    (17, "REQ4", "S32", "S4X2", "scalar"),
    (18, "VREQ4", "S32", "S4X2", "vector"),
    (19, "DEQS16", "S32", "S16", "scalar"),
    (20, "VDEQS16", "S32", "S16", "vector"),
    (23, "VQF322B8_PRE", "FP32", "S8", "vector"),
    (24, "QF322B8_PRE", "FP32", "S8", "scalar"),
    (25, "QF322HIF8_PRE", "FP32", "HiF8", "scalar"),
    (26, "QF322FP8_PRE", "FP32", "E4M3", "scalar"),
    (27, "QF322F32_PRE", "FP32", "FP32", "scalar"),
    (28, "VQF322HIF8_PRE", "FP32", "HiF8", "vector"),
    (32, "QF322F16_PRE", "FP32", "FP16", "scalar"),
    (33, "VQF322F16_PRE", "FP32", "FP16", "vector"),
    (34, "QF322BF16_PRE", "FP32", "BF16", "scalar"),
    (35, "QS322BF16_PRE", "S32", "BF16", "scalar"),
    (36, "VQF322BF16_PRE", "FP32", "BF16", "vector"),
    (37, "VQF322FP8_PRE", "FP32", "E4M3", "vector"),
    (38, "VQF322F32_PRE", "FP32", "FP32", "vector"),
    (39, "VQS322BF16_PRE", "S32", "BF16", "vector"),
]
# ADR-0085 D179 "signed 5/9/17-bit offset" column
ADR_OFFSETS = {2: 9, 3: 9, 17: 5, 18: 5, 19: 17, 20: 17, 23: 9, 24: 9}


def _w(mode: int = 0, relu: int = 0, gn: int = 0, rm: int = 0, gm: int = 0, ri: int = 0,
       ma: int = 0, ta: int = 0, tb: int = 0) -> int:
    """A B.FPATR word from fields (bit positions from the B.FPATR encoding table)."""
    return (0x2023 | mode << 26 | relu << 23 | gn << 19 | rm << 18 | gm << 17 | ri << 16
            | ma << 15 | tb << 8 | ta << 7)


# ---------------------------------------------------------------- mode table


def test_mode_table_matches_adr_d179() -> None:
    assert sorted(MODE_TABLE) == [row[0] for row in ADR_D179]
    for code, name, acc, dst, param in ADR_D179:
        info = MODE_TABLE[code]
        assert info.name == name == PreQuantMode(code).name
        assert [t.name for t in info.accumulator_types] == acc.split("/")
        assert (info.destination.name if info.destination else None) == dst
        assert info.parameter == param
        assert info.offset_width == ADR_OFFSETS.get(code, 0)
        assert info.is_shift == (code in (12, 13))


def test_mode_lookup_by_name_case_insensitive_and_code() -> None:
    assert parse_pre_quant_mode("req8") is PreQuantMode.REQ8
    assert parse_pre_quant_mode("Qf322Hif8_Pre") is PreQuantMode.QF322HIF8_PRE
    assert parse_pre_quant_mode(39) is PreQuantMode.VQS322BF16_PRE
    assert parse_pre_quant_mode("None") is PreQuantMode.NoQuant
    assert mode_info("VREQ4").code == 18
    assert parse_relu_mode("lrelu") is ReluMode.LRELU and parse_relu_mode(3) is ReluMode.PRELU
    with pytest.raises(UsageError):
        parse_pre_quant_mode("REQ9")
    with pytest.raises(UsageError):
        parse_pre_quant_mode(64)
    with pytest.raises(IllegalEncodingError, match="reserved PreQuantMode"):
        parse_pre_quant_mode(6)
    with pytest.raises(IllegalEncodingError, match="reserved ReluMode"):
        parse_relu_mode(4)


# ------------------------------------------- block-bound-b-fpatr-mode-table-001.asl


def test_asl_block_bound_b_fpatr_mode_table_001() -> None:
    assert pre_quant_mode_legal(0) and pre_quant_mode_legal(0b100111)
    assert not pre_quant_mode_legal(0b001110)
    assert relu_mode_legal(0b011) and not relu_mode_legal(0b100)
    for code, n in enumerate([0, 8, 16, 32, 48, 64, 80, 96, 112, 128]):
        assert group_n(code) == n
    assert not fields_legal(0, 0, 1, False, False, False, False)
    assert not fields_legal(0, 0, 0, False, False, True, False)
    assert not fields_legal(0, 0, 0, False, False, False, True)
    assert fields_legal(0, 0, 0, True, False, False, True)
    assert fields_legal(0, 0, 0, False, False, False, False)
    assert fields_legal(0, 0, 1, False, True, False, True)
    assert fields_legal(0, 0, 1, True, True, False, True)
    assert not fields_legal(0, 0, 0, False, True, False, False)
    assert not fields_legal(0, 0, 1, False, False, True, False)
    assert datr_fields_legal(0, 0, False)
    assert not datr_fields_legal(0, 1, False)
    assert not datr_fields_legal(1, 0b110, True)
    assert datr_fields_legal(12, 0, False)
    assert not datr_fields_legal(12, 0, True)
    assert not datr_fields_legal(12, 1, False)
    assert not datr_fields_legal(13, 2, True)
    assert datr_fields_legal(1, 0, False)
    assert not datr_fields_legal(1, 7, True)
    assert datr_fields_legal(3, 7, True)
    assert output_type(0b010001) is T.S4X2
    assert output_type(0b011010) is T.E4M3
    for code in (0, 1, 2, 3, 4, 5, 12, 13, 16, 17, 18, 19, 20, 23, 24, 25, 26, 27, 28,
                 32, 33, 34, 35, 36, 37, 38, 39):
        assert pre_quant_mode_legal(code)
    vector = {2, 4, 12, 18, 20, 23, 28, 33, 36, 37, 38, 39}
    scalar = {3, 5, 13, 17, 19, 24, 25, 26, 27, 32, 34, 35}
    for code in (0, 1, 16):
        assert MODE_TABLE[code].parameter == "none"
    for code in vector:
        assert MODE_TABLE[code].parameter == "vector"
    for code in scalar:
        assert MODE_TABLE[code].parameter == "scalar"
    # ReLU parameter routing: 2 = scalar, 3 = vector
    assert ReluMode(2) is ReluMode.LRELU and ReluMode(3) is ReluMode.PRELU
    expected_out = {0: T.FP32, 1: T.FP16, 2: T.S8, 3: T.S8, 4: T.FP16, 5: T.FP16, 12: T.S16,
                    13: T.S16, 16: T.BF16, 17: T.S4X2, 18: T.S4X2, 19: T.S16, 20: T.S16,
                    23: T.S8, 24: T.S8, 25: T.HiF8, 26: T.E4M3, 27: T.FP32, 28: T.HiF8,
                    32: T.FP16, 33: T.FP16, 34: T.BF16, 35: T.BF16, 36: T.BF16, 37: T.E4M3,
                    38: T.FP32, 39: T.BF16}
    for code, dt in expected_out.items():
        assert output_type(code) is dt
    # (BundleGroupMaxColumns belongs to the tile operation, tested with it.)


def test_mode0_output_type_keeps_accumulator() -> None:
    for acc in (T.FP32, T.S32, T.U32):
        assert output_type(0, acc) is acc


# --------------------------------------------------------- decode tests


def test_asl_block_decode_b_fpatr_canonical_001() -> None:
    a = FPATRAttributes.from_word(0x0000000000002023)
    assert a == FPATRAttributes()
    assert a.word == CANONICAL_NONE_WORD == 0x2023
    assert a.pre_quant_mode is PreQuantMode.NoQuant and a.relu_mode is ReluMode.NONE
    assert a.group_n == 0


def test_asl_block_decode_b_fpatr_transpose_011() -> None:
    for controls in range(4):
        word = 0x2023 | (controls << 7)
        a = FPATRAttributes.from_word(word)
        assert a.trans_a == (controls % 2 == 1)
        assert a.trans_b == (controls >= 2)
        assert a.word == word


def test_asl_block_exec_b_fpatr_zero_mask_order_001() -> None:
    # The B.FPATR part of the test: 0x00002023 latches (decodes) successfully.
    # (B.IOT/B.IOS zero-mask no-ops are bundle dispatch, outside ptonum.)
    assert FPATRAttributes.from_word(0x00002023).word == 0x00002023


def test_asl_block_state_b_fpatr_reset_clear_001() -> None:
    # After reset every field is zero/false: the default descriptor.
    a = FPATRAttributes()
    assert (int(a.pre_quant_mode), int(a.relu_mode), a.group_n_code) == (0, 0, 0)
    assert not any([a.row_max_en, a.group_max_en, a.row_max_init, a.max_abs_en, a.trans_a, a.trans_b])
    full = FPATRAttributes.from_fields(3, 2, 1, 1, 1, 1, 1, 1, 1)
    assert full.word == _w(3, 2, 1, 1, 1, 1, 1, 1, 1)


@pytest.mark.parametrize("test_file", [
    "block-fault-b-fpatr-duplicate-001.asl",
    "block-fault-b-fpatr-nonmatrix-001.asl",
    "block-fault-b-fpatr-placement-001.asl",
])
def test_asl_bundle_control_tests_use_a_decodable_word(test_file: str) -> None:
    # These ASL tests check bundle sequencing (Fault_BundleControl), which
    # ptonum does not model; the word they execute must decode as B.FPATR.
    a = FPATRAttributes.from_word(0x00002023)
    assert a == FPATRAttributes() and test_file


@pytest.mark.parametrize("test_file,codes", [
    ("block-fault-b-fpatr-pq06-11-001.asl", range(6, 12)),
    ("block-fault-b-fpatr-pq14-15-001.asl", range(14, 16)),
    ("block-fault-b-fpatr-pq21-22-001.asl", range(21, 23)),
    ("block-fault-b-fpatr-pq29-31-001.asl", range(29, 32)),
    ("block-fault-b-fpatr-pq40-47-001.asl", range(40, 48)),
    ("block-fault-b-fpatr-pq48-55-001.asl", range(48, 56)),
    ("block-fault-b-fpatr-pq56-63-001.asl", range(56, 64)),
])
def test_asl_reserved_pre_quant_modes(test_file: str, codes: range) -> None:
    for code in codes:
        with pytest.raises(IllegalEncodingError, match=rf"PreQuantMode\[31:26\] = {code} is reserved"):
            FPATRAttributes.from_word(0x2023 | code << 26)
        with pytest.raises(IllegalEncodingError):
            FPATRAttributes.from_fields(pre_quant_mode=code)


def test_asl_block_fault_b_fpatr_relu_rsvd_001() -> None:
    for code in range(4, 8):
        with pytest.raises(IllegalEncodingError, match=rf"ReluMode\[25:23\] = {code} is reserved"):
            FPATRAttributes.from_word(0x2023 | code << 23)


def test_asl_block_fault_b_fpatr_group_rsvd_001() -> None:
    for code in range(10, 16):
        with pytest.raises(IllegalEncodingError, match=rf"GroupNCode\[22:19\] = {code} is reserved"):
            FPATRAttributes.from_word(0x2023 | code << 19)
        with pytest.raises(IllegalEncodingError):
            group_n(code)
        assert not group_n_code_legal(code)


def test_asl_block_fault_b_fpatr_transpose_rsvd_012() -> None:
    for bit in (9, 10):
        with pytest.raises(IllegalEncodingError, match=r"Reserved\[10:9\]"):
            FPATRAttributes.from_word(0x2023 | 1 << bit)


@pytest.mark.parametrize("bit,field", [
    (12, "Func"), (13, "Func"), (14, "Func"), (11, "ElementWiseEn"), (4, "Opc1"), (5, "Opc1"),
    (6, "Opc1"), (1, "Opcode"), (2, "Opcode"), (3, "Opcode"), (0, "W"),
])
def test_fixed_field_mismatch_does_not_decode(bit: int, field: str) -> None:
    with pytest.raises(IllegalEncodingError, match=rf"does not decode as B\.FPATR: fixed field {field}"):
        FPATRAttributes.from_word(0x2023 ^ (1 << bit))


def test_from_word_rejects_non_words() -> None:
    for bad in (-1, 1 << 32, 2.0, "0x2023", True):
        with pytest.raises(UsageError):
            FPATRAttributes.from_word(bad)


def test_from_fields_names_and_codes_round_trip() -> None:
    a = FPATRAttributes.from_fields("VREQ8", "prelu", group_n=32, row_max_en=True, group_max_en=True,
                                    max_abs_en=1, trans_a=True)
    assert a.word == _w(2, 3, 3, 1, 1, 0, 1, 1, 0)
    assert FPATRAttributes.from_word(a.word) == a
    assert a.group_n == 32 and a.group_n_code == 3
    assert a.assembly() == "B.FPATR VREQ8, PRELU, 3, 1, 1, 0, 1, 1, 0"
    with pytest.raises(UsageError):
        FPATRAttributes.from_fields(group_n=10)
    with pytest.raises(UsageError):
        FPATRAttributes.from_fields(group_n=8, group_n_code=1)
    with pytest.raises(UsageError):
        FPATRAttributes.from_fields(row_max_en=2)


# A uniform 32-bit word matches the 13 fixed bits (mask 0x7e7f) about once in 8,192 draws, so half the
# draws keep the fixed fields and randomize only the variable ones (reserved codes included).
_WORDS = st.one_of(st.integers(0, 0xFFFFFFFF),
                   st.integers(0, 0xFFFFFFFF).map(lambda b: (b & ~0x7E7F) | 0x2023))


@settings(max_examples=400, deadline=None)
@given(_WORDS)
def test_random_words_decode_or_raise_ptonum_error(word: int) -> None:
    try:
        a = FPATRAttributes.from_word(word)
    except PtonumError:
        # a rejected word breaks a fixed field or has a reserved value
        pq, relu, gn = word >> 26, (word >> 23) & 7, (word >> 19) & 15
        assert ((word & 0x7E7F) != 0x2023 or pq not in MODE_TABLE or relu > 3 or gn > 9)
        return
    assert a.word == word
    try:
        check_fields(a)
    except TileLegalityError:
        assert not fields_legal(a.pre_quant_mode, a.relu_mode, a.group_n_code, a.row_max_en,
                                a.group_max_en, a.row_max_init, a.max_abs_en)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 0xFFFFFFFF))
def test_decodable_words_round_trip(bits: int) -> None:
    word = (bits & ~0x7E7F) | 0x2023
    pq, relu, gn = word >> 26, (word >> 23) & 7, (word >> 19) & 15
    if pq in MODE_TABLE and relu <= 3 and gn <= 9:
        assert FPATRAttributes.from_word(word).word == word


# --------------------------------------------------------- field legality


@pytest.mark.parametrize("fields,rule", [
    (dict(row_max_init=True), "RowMaxInit requires RowMaxEn"),
    (dict(group_n_code=2), "requires GroupMaxEn"),
    (dict(group_max_en=True), "GroupMaxEn requires a nonzero GroupNCode"),
    (dict(max_abs_en=True), "MaxAbsEn requires RowMaxEn or GroupMaxEn"),
])
def test_check_fields_rules(fields: dict, rule: str) -> None:
    a = FPATRAttributes.from_fields(**fields)
    with pytest.raises(TileLegalityError, match=rule):
        check_fields(a)
    assert "BundleFPATRFieldsLegal" in _msg(check_fields, a)


def test_check_fields_accepts_legal_combinations() -> None:
    for a in (FPATRAttributes(),
              FPATRAttributes.from_fields(row_max_en=True, row_max_init=True, max_abs_en=True),
              FPATRAttributes.from_fields(group_max_en=True, group_n_code=9, max_abs_en=True)):
        check_fields(a)


def _msg(fn, *args) -> str:  # type: ignore[no-untyped-def]
    try:
        fn(*args)
    except PtonumError as exc:
        return str(exc)
    raise AssertionError("no error")


# -------------------------------------------- block-fault-b-fpatr-controls-010.asl


def test_asl_block_fault_b_fpatr_controls_010_predicates() -> None:
    for code in (0b000001, 0b010000, 0b011001, 0b011010, 0b100000, 0b100001, 0b100010,
                 0b100100, 0b100101):
        assert MODE_TABLE[code].fixed_rounding is not None
    for code in (0b000011, 0b010011, 0b100011):
        assert MODE_TABLE[code].fixed_rounding is None
    for code in (0b000011, 0b010001, 0b010011, 0b011001):
        assert MODE_TABLE[code].sat_programmable
    for code in (0b001100, 0b001101):
        assert not MODE_TABLE[code].sat_programmable
    assert datr_fields_legal(0b000001, 0, False)
    assert datr_fields_legal(0b000001, 0, True)
    assert not datr_fields_legal(0b000001, 0b001, False)
    assert not datr_fields_legal(0b011010, 0b101, True)
    assert datr_fields_legal(0b000011, 0b001, False)
    assert datr_fields_legal(0b010011, 0b101, True)
    assert datr_fields_legal(0b001100, 0, False)
    assert not datr_fields_legal(0b001100, 0, True)
    assert not datr_fields_legal(0b001101, 0b001, False)


@pytest.mark.parametrize("mode,rmode,sat,rule", [
    (0, "RNE", False, r"PreQuantMode 0 \(NoQuant\) requires B.DATR RMode=NONE"),
    (0, "NONE", True, r"PreQuantMode 0 \(NoQuant\) requires B.DATR Sat=0"),
    (12, "RTZ", False, r"shift mode 12 .* requires B.DATR RMode=NONE"),
    (13, "NONE", True, r"shift mode 13 .* requires B.DATR Sat=0"),
    (25, "RHB", False, r"fixed-rounding mode 25 .*always RHB"),
    (1, "RNE", True, r"fixed-rounding mode 1 .*always RNE"),
    (37, 3, False, r"fixed-rounding mode 37"),
])
def test_check_datr_rules(mode: int, rmode: object, sat: bool, rule: str) -> None:
    with pytest.raises(TileLegalityError, match=rule):
        check_datr(mode, rmode, sat)


def test_check_datr_accepts_programmable_modes() -> None:
    for code, info in MODE_TABLE.items():
        if info.rmode_programmable:
            for r in range(8):
                check_datr(code, r, True)
        check_datr(code, "NONE", False)


def test_datr_reserved_mode_is_not_legal() -> None:
    assert not datr_fields_legal(6, 0, False)


# -------------------------------------------- block-fault-b-fpatr-input-type-002.asl


def test_asl_block_fault_b_fpatr_input_type_002() -> None:
    assert accumulator_type_legal(0, T.FP32)
    assert accumulator_type_legal(0, T.S32)
    assert accumulator_type_legal(0, T.U32)
    assert accumulator_type_legal(0b000011, T.S32)
    assert not accumulator_type_legal(0b000011, T.FP32)
    assert accumulator_type_legal(0b011000, T.FP32)
    assert not accumulator_type_legal(0b011000, T.S32)
    assert not accumulator_type_legal(0b011000, T.U32)
    assert not accumulator_type_legal(0b100111, T.U32)
    s32 = {2, 3, 4, 5, 12, 13, 17, 18, 19, 20, 35, 39}
    for raw in range(64):
        if not pre_quant_mode_legal(raw):
            assert not accumulator_type_legal(raw, T.FP32)
            continue
        if raw == 0:
            continue
        yes, no = (T.S32, T.FP32) if raw in s32 else (T.FP32, T.S32)
        assert accumulator_type_legal(raw, yes)
        assert not accumulator_type_legal(raw, no)
        assert not accumulator_type_legal(raw, T.U32)
        with pytest.raises(TileLegalityError, match="BundleFPATRAccumulatorTypeLegal"):
            check_accumulator_type(raw, no)
        with pytest.raises(TileLegalityError):
            check_accumulator_type(raw, T.U32)
        check_accumulator_type(raw, yes)


# ----------------------------------------------------------- effective control


def test_effective_control() -> None:
    assert effective_control(3, "NONE", False) == (R.RNE, False)
    assert effective_control(3, "RTZ", True) == (R.RTZ, True)
    assert effective_control(25, "RTZ", True) == (R.RHB, True)
    assert effective_control(28, "NONE", False) == (R.RHB, False)
    for code in (1, 16, 26, 32, 33, 34, 36, 37):
        assert effective_control(code, "RTP", False) == (R.RNE, False)
    assert effective_control(27, 6, False) == (R.RTO, False)
