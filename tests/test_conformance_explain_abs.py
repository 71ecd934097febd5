"""``explain reduction --max-abs`` says what ABS did to each operand, not the type-wide rule."""

from __future__ import annotations

import pytest

from ptonum.conformance.explain import explain_reduction


def _abs_lines(cur, cand, acc_type):
    text = explain_reduction(cur, cand, acc_type=acc_type, max_abs=True).text()
    return [ln for ln in text.splitlines() if "MatrixReductionAbsoluteWithFlags:" in ln]


@pytest.mark.parametrize("cur,cand,acc_type,want_cur,want_cand", [
    (5, 7, "S32", "not negative, so unchanged", "not negative, so unchanged"),
    (0xFFFFFFFB, 0x80000000, "S32", "negative, so negated", "saturates to 0x7fffffff and raises OF"),
    (0xBF800000, 0x3F800000, "FP32", ": sign bit cleared", "sign bit already clear, so unchanged"),
    (0xFFC00001, 0x7F800000, "FP32", "sign bit cleared (NaN payload kept, no flag)", "already clear"),
    (5, 0xFFFFFFFF, "U32", "unchanged", "unchanged"),
])
def test_abs_steps_describe_their_operand(cur, cand, acc_type, want_cur, want_cand):
    lines = _abs_lines(cur, cand, acc_type)
    assert len(lines) == 2
    assert lines[0].endswith(want_cur.lstrip(": ")) and want_cur in lines[0], lines[0]
    assert lines[1].endswith(want_cand) or want_cand in lines[1], lines[1]
    for ln in lines:
        assert "negates a negative value" not in ln and "clears the sign bit (" not in ln


def test_positive_s32_operands_do_not_mention_int_min():
    assert not any("INT_MIN" in ln for ln in _abs_lines(5, 7, "S32"))


def test_int_min_still_raises_of_and_says_so():
    # ASL vectors reduction_step: S32, MaxAbsEn, INT_MIN operand -> 0x7fffffff with OF (ADR-0085 D175)
    e = explain_reduction(0xFFFFFFFB, 0x80000000, acc_type="S32", max_abs=True)
    assert "0x7fffffff" in e.text() and "[raises OF]" in e.text()
