"""Every public function, every argument, attacked (issue 10 items 10/11 and its hypothesis suite).

For each public entry point a legal baseline call is declared once (:data:`CALLS`).  Hypothesis
replaces one argument with something malformed -- a wrong type, an array where a scalar goes,
an array-valued enumeration, a huge integer, NaN -- or with the same array in the other byte
order.  Required of every call:

* it returns, or raises a :class:`ptonum.PtonumError` -- never another exception;
* a byte-swapped array gives exactly the result of the native-order array;
* no input array is modified, and a ``status`` register changes only by the result's flags
  (not at all when the call raises).

Expected results of the byte-order cases come from the baseline call on the native array
(normalising the input is the requirement), so no value here comes from ptonum's own output
for the numbers themselves; those are checked against the ASL vectors elsewhere.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from typing import Any, Callable, Dict, List, Tuple

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ptonum import StatusRegister, encode, formats, fp19, rounding, tcvt
from ptonum.errors import PtonumError, UsageError
from ptonum.fpatr import attributes, element, params, reduction, tile

SCALE_ONE = 0x1FC00 << 13  # FP19(1.0) at [31:13]
ALPHA_HALF = 0x1F800  # FP19(0.5)

#: name -> (function, baseline keyword arguments).  Each baseline is a legal call.
CALLS: Dict[str, Tuple[Callable[..., Any], Dict[str, Any]]] = {
    "formats.parse_data_type": (formats.parse_data_type, dict(value="E4M3")),
    "formats.descriptor": (formats.descriptor, dict(data_type="HiF8")),
    "formats.carrier_bits": (formats.carrier_bits, dict(data_type="S4X2")),
    "formats.canonical_nan": (formats.canonical_nan, dict(data_type="BF16")),
    "formats.value_class": (formats.value_class, dict(
        data_type="FP16", encoding=np.array([0x3C00, 0x7C00, 0x8000], np.uint16), lane=0, engine="fast")),
    "formats.decompose": (formats.decompose, dict(
        data_type="E4M3", encoding=np.array([0x38, 0x7F, 0x81], np.uint8), lane=0, engine="fast")),
    "formats.to_float64": (formats.to_float64, dict(data_type="BF16", encoding=np.array([0x3F80, 0xFF80], np.uint16))),
    "formats.exact_value": (formats.exact_value, dict(data_type="FP32", encoding=0x3FC00000)),
    "fp19.from_fp32": (fp19.from_fp32, dict(bits32=np.array([0x3F800000, 0xC0490FDB], np.uint32), engine="fast")),
    "fp19.to_float64": (fp19.to_float64, dict(bits19=np.array([0x1FC00, 0x5FC01], np.uint32))),
    "fp19.scale_legal": (fp19.scale_legal, dict(bits19=np.array([0x1FC00, 0x0], np.uint32), engine="fast")),
    "rounding.parse_rounding_mode": (rounding.parse_rounding_mode, dict(value="RTO", name="rmode")),
    "rounding.round_to_integer": (rounding.round_to_integer, dict(value=Fraction(5, 2), mode=rounding.RoundingMode.RNE)),
    "rounding.round_to_integer_array": (rounding.round_to_integer_array, dict(
        values=np.array([2.5, -3.5, 7.0]), mode=rounding.RoundingMode.RNA)),
    "encode.encode": (encode.encode, dict(values=np.array([1.5, -2.25, 1e6]), dst_type="FP16", rmode="RTP",
                                          sat=True, engine="fast")),
    "encode.encode_reference": (encode.encode_reference, dict(value=Fraction(7, 3), dst_type="S8", rmode="RNE",
                                                              sat=True)),
    "encode.destination_width": (encode.destination_width, dict(dst_type="S4X2")),
    "tcvt.to_e8m0": (tcvt.to_e8m0, dict(src_bits=np.array([0x3C00, 0x4200], np.uint16), src_type="FP16",
                                        rmode="RTP", sat=False, engine="fast")),
    "tcvt.to_e8m0_values": (tcvt.to_e8m0_values, dict(values=np.array([1.5, 3.0e-3], np.float32), rmode="RNE",
                                                      sat=False)),
    "tcvt.e8m0_scale": (tcvt.e8m0_scale, dict(codes=np.array([127, 0, 255], np.uint8))),
    "attributes.mode_info": (attributes.mode_info, dict(code="REQ8")),
    "attributes.group_n": (attributes.group_n, dict(code=3)),
    "attributes.FPATRAttributes.from_word": (attributes.FPATRAttributes.from_word, dict(word=0x0C002023)),
    "attributes.FPATRAttributes.from_fields": (attributes.FPATRAttributes.from_fields, dict(
        pre_quant_mode=3, relu_mode=1, row_max_en=1)),
    "attributes.check_datr": (attributes.check_datr, dict(mode=3, rmode="RTZ", sat=True)),
    "attributes.output_type": (attributes.output_type, dict(mode=0, acc_type="S32")),
    "attributes.effective_control": (attributes.effective_control, dict(mode=25, rmode="NONE", sat=True)),
    "attributes.check_accumulator_type": (attributes.check_accumulator_type, dict(mode=3, acc_type="S32")),
    "params.quant_param_legal": (params.quant_param_legal, dict(pre_quant_mode=3, word=np.array([SCALE_ONE, 0],
                                                                                                 np.uint64))),
    "params.check_quant_param": (params.check_quant_param, dict(pre_quant_mode=3, word=SCALE_ONE)),
    "params.relu_param_legal": (params.relu_param_legal, dict(word=np.array([ALPHA_HALF], np.uint64))),
    "element.postprocess_element": (element.postprocess_element, dict(
        acc_bits=np.array([[5, 0xFFFFFFFD], [1000, 7]], np.uint32), pre_quant_mode=3, relu_mode=2,
        acc_type="S32", quant_param=SCALE_ONE, relu_param=ALPHA_HALF, rmode="RNE", sat=True, engine="fast")),
    "element.destination_dtype": (element.destination_dtype, dict(dst_type="HiF8")),
    "reduction.reduction_step": (reduction.reduction_step, dict(
        current=np.array([0x3F800000, 0x7FA00000], np.uint32), candidate=np.array([0xBF800000, 1], np.uint32),
        acc_type="FP32", max_abs=True, engine="fast")),
    "reduction.row_max": (reduction.row_max, dict(acc_bits=np.array([[1, 0x80000000, 3]], np.uint32),
                                                  acc_type="S32", max_abs=True,
                                                  row_max_in=np.array([[7]], np.uint32), engine="fast")),
    "reduction.group_max": (reduction.group_max, dict(acc_bits=np.array([[1, 9, 4, 2]], np.uint32),
                                                      acc_type="U32", max_abs=False, group_n=3, engine="fast")),
    "tile.postprocess": (tile.postprocess, dict(
        acc=np.array([[1.5, -2.0, 65504.0], [np.inf, -0.0, 3.0e-8]], np.float32), acc_type=None,
        attributes=dict(pre_quant_mode=1, relu_mode=3, row_max_en=1, row_max_init=1, group_max_en=1,
                        group_n_code=1, max_abs_en=1),
        rmode="NONE", sat=True, relu_tile=np.full(3, ALPHA_HALF, np.uint64),
        row_max_in=np.array([[0.5], [-7.0]], np.float32), status=StatusRegister(0x02), engine="fast")),
    "tile.postprocess S32": (tile.postprocess, dict(
        acc=np.array([[-50, 7, 2**31 - 1]], np.int32), acc_type="S32",
        attributes=dict(pre_quant_mode=2, row_max_en=1), rmode="RTO", sat=True,
        quant_tile=np.array([SCALE_ONE, SCALE_ONE | (3 << 37), SCALE_ONE], np.uint64),
        status=StatusRegister(0), engine="reference")),
    "tile.preflight_shape": (tile.preflight_shape, dict(shape=(2, 3), dtype="int32", acc_type="S32",
                                                        attributes=dict(pre_quant_mode=3), rmode="RNE",
                                                        sat=False, quant_param=SCALE_ONE)),
    "tile.accumulator_bits": (tile.accumulator_bits, dict(acc=np.array([[-1, 2]], np.int64), acc_type="S32")),
}

_garbage_scalar = st.one_of(
    st.none(), st.booleans(),
    st.integers(-(2**70), 2**70), st.sampled_from([2**63, 2**64, -(2**63) - 1, 2**200, -1]),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=6),
    st.sampled_from(["fast", "reference", "RNE", "S32", "FP32", "NONE", "", "nope", "0x10"]),
    st.just(object()), st.just({"a": 1}), st.just(Fraction(1, 3)), st.just(1 + 2j),
)
_garbage_array = st.one_of(
    st.just(np.array([1, 2])), st.just(np.array(["fast", "fast"])), st.just(np.array(["fast"])),
    st.just(np.array([[1.5]])), st.just(np.array(2**40, np.int64)), st.just(np.array([], np.uint32)),
    st.just(np.array([np.nan], np.float32)), st.just(np.array([[1, 2], [3, 4]], np.int64)),
    st.just(np.array([-5, 3], np.int64)), st.just(np.array([2**63], np.uint64)), st.just(np.zeros((2, 0, 3))),
    st.just(np.array(["RNE"], object)), st.just(np.array([None, 1], object)), st.just(np.array(1, np.int8)),
    st.lists(st.integers(-(2**66), 2**66), max_size=4), st.lists(st.lists(st.integers(0, 300), max_size=3),
                                                                max_size=3),
)


def _swapped(a: np.ndarray) -> np.ndarray:
    return a.astype(a.dtype.newbyteorder("S"))


def _snapshot(kw: Dict[str, Any]) -> Dict[str, Any]:
    return {k: (v.dtype, v.shape, v.tobytes()) for k, v in kw.items() if isinstance(v, np.ndarray)}


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    if isinstance(a, tile.PostprocessResult):
        return all(_same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    if isinstance(a, (tuple, list)) and type(a) is type(b):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        return all(_same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    return bool(a == b)


def _call(fn: Callable[..., Any], kw: Dict[str, Any]) -> Tuple[Any, Any]:
    """Call; return (result, None) or (None, the PtonumError); another exception fails the test."""
    status = kw.get("status")
    before = int(status) if isinstance(status, StatusRegister) else None
    arrays = _snapshot(kw)
    try:
        out = fn(**kw)
        err = None
    except PtonumError as exc:
        out, err = None, exc
    except Exception as exc:  # pragma: no cover - the failure this suite exists to find
        raise AssertionError(f"{fn.__qualname__}({kw!r}) raised {type(exc).__name__}: {exc}") from exc
    assert _snapshot(kw) == arrays, "an input array was modified"
    if before is not None:
        expected = before if err is not None else before | out.flags
        assert int(status) == expected, "status changed by more than the result flags"
    return out, err


def _fresh(kw: Dict[str, Any]) -> Dict[str, Any]:
    """A copy of the baseline arguments with a new status register (same starting bits)."""
    return {k: (StatusRegister(int(v)) if isinstance(v, StatusRegister) else v) for k, v in kw.items()}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_baseline_calls_are_legal(name: str) -> None:
    fn, kw = CALLS[name]
    out, err = _call(fn, _fresh(kw))
    assert err is None, f"{name}: the baseline call must be legal ({err})"


@pytest.mark.parametrize("name", sorted(n for n, (_, kw) in CALLS.items()
                                        if any(isinstance(v, np.ndarray) and v.dtype.itemsize > 1
                                               for v in kw.values())))
def test_byte_swapped_arrays_give_the_native_result(name: str) -> None:
    fn, kw = CALLS[name]
    want, _ = _call(fn, _fresh(kw))
    for key, value in kw.items():
        if isinstance(value, np.ndarray) and value.dtype.itemsize > 1:
            swapped = _fresh(kw)
            swapped[key] = _swapped(value)
            got, err = _call(fn, swapped)
            assert err is None, f"{name}: {key} in the other byte order was refused: {err}"
            assert _same(got, want), f"{name}: {key} in the other byte order changed the result"


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_malformed_arguments_give_a_result_or_a_ptonum_error(data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(sorted(CALLS)))
    fn, base = CALLS[name]
    kw = _fresh(base)
    key = data.draw(st.sampled_from(sorted(kw)))
    kw[key] = data.draw(st.one_of(_garbage_scalar, _garbage_array))
    _call(fn, kw)


# ------------------------------------------------------------- the issue's own inputs, one by one


def test_big_endian_float32_accumulator() -> None:
    acc = np.array([[1.5, -2.0], [3.0, 1e-3]], np.float32)
    want = tile.postprocess(acc, attributes=dict(pre_quant_mode=1, row_max_en=1))
    got = tile.postprocess(acc.astype(">f4"), attributes=dict(pre_quant_mode=1, row_max_en=1))
    assert _same(got.d_bits, want.d_bits) and _same(got.row_max_bits, want.row_max_bits)


def test_big_endian_int32_and_wide_signed_s32_accumulators() -> None:
    acc = np.array([[-50, 7], [2**31 - 1, -(2**31)]], np.int32)
    kw = dict(acc_type="S32", attributes=dict(pre_quant_mode=0, row_max_en=1, max_abs_en=1))
    want = tile.postprocess(acc, **kw)
    for form in (acc.astype(">i4"), acc.astype(np.int64), acc.astype(">i8"), acc.astype(np.int64).tolist()):
        got = tile.postprocess(form, **kw)
        assert _same(got.d_bits, want.d_bits) and got.flags == want.flags
    with pytest.raises(UsageError, match=r"acc\[0, 0\] = -2147483649: below the S32 minimum"):
        tile.postprocess(np.array([[-(2**31) - 1]], np.int64), **kw)
    with pytest.raises(UsageError, match="never negative"):
        tile.postprocess(np.array([[-1]], np.int64), acc_type="U32", attributes=dict(pre_quant_mode=0))
    row_in = tile.postprocess(acc, row_max_in=np.array([[-3], [4]], np.int64),
                              acc_type="S32", attributes=dict(pre_quant_mode=0, row_max_en=1, row_max_init=1))
    assert row_in.row_max.tolist() == [[7], [2**31 - 1]]


def test_big_endian_tcvt_inputs() -> None:
    v = np.array([1.5, 3.0e-3, -7.0], np.float32)
    want = tcvt.to_e8m0_values(v, rmode="RTP")
    got = tcvt.to_e8m0_values(v.astype(">f4"), rmode="RTP")
    assert _same(got, want)
    bits = np.array([0x3C00, 0x4200], np.uint16)
    assert _same(tcvt.to_e8m0(bits.astype(">u2"), src_type="FP16"), tcvt.to_e8m0(bits, src_type="FP16"))
    b16 = np.array([1.5, 2.0], ml_dtypes.bfloat16)
    assert _same(tcvt.to_e8m0_values(b16), tcvt.to_e8m0_values(b16.astype(np.float32)))


@pytest.mark.parametrize("call", [
    lambda: tile.postprocess(np.ones((1, 2), np.float32), attributes=0x2023, rmode=np.array([1, 2])),
    lambda: tile.postprocess(np.ones((1, 2), np.uint32), attributes=0x2023, acc_type=np.array([17, 17])),
    lambda: tcvt.to_e8m0(np.array([0x3C00], np.uint16), src_type=np.array([4, 4])),
    lambda: formats.value_class(np.array([4, 5]), 0x3C00),
    lambda: encode.encode(np.array([1.0]), np.array(["FP16", "FP16"])),
    lambda: tile.postprocess(np.ones((1, 2), np.float32), attributes=0x2023, engine=np.array(["fast", "fast"])),
    lambda: tile.postprocess(np.ones((1, 2), np.float32), attributes=0x2023, engine=np.array(["fast"])),
    lambda: element.postprocess_element(1, pre_quant_mode=np.array([0, 0]), acc_type="FP32"),
])
def test_array_valued_enumerations_are_usage_errors(call: Callable[[], Any]) -> None:
    with pytest.raises(UsageError, match=r"^(rmode|acc_type|src_type|data_type|dst_type|engine|pre_quant_mode) ="):
        call()


def test_group_n_wider_than_the_tile_is_one_group() -> None:
    acc = np.array([[1, 9, 4]], np.uint32)
    bits, _ = reduction.group_max(acc, acc_type="U32", max_abs=False, group_n=2**63)
    assert bits.tolist() == [[9]]
    with pytest.raises(UsageError, match="group_n"):
        reduction.group_max(acc, acc_type="U32", max_abs=False, group_n=np.array([2, 2]))


def test_baselines_cover_every_tile_entry_point() -> None:
    names: List[str] = [n for n in tile.__all__ if callable(getattr(tile, n)) and n[0].islower()]
    covered = {fn.__name__ for fn, _ in CALLS.values()}
    assert {"postprocess", "preflight_shape", "accumulator_bits"} <= covered
    assert set(names) >= {"preflight", "compute", "commit"}


_ARRAY_ARGS = sorted((n, k, e) for n, (_, kw) in CALLS.items() for k, v in kw.items()
                     if isinstance(v, np.ndarray) and v.size
                     for e in (("fast", "reference") if "engine" in kw else ("fast",)))


@pytest.mark.parametrize("name,key,engine", _ARRAY_ARGS)
def test_masked_arrays_are_refused_naming_the_argument_unless_nothing_is_masked(name: str, key: str,
                                                                                engine: str) -> None:
    """A numpy masked array says some elements are not data; ptonum computes on every element, so a
    masked element is refused (UsageError naming the argument and the element), never computed on
    silently.  A masked array with nothing masked is its data: same result as the plain array."""
    fn, kw = CALLS[name]
    kw = {**kw, **({"engine": engine} if "engine" in kw else {})}
    want, _ = _call(fn, _fresh(kw))
    value = kw[key]
    mask = np.zeros(value.shape, bool)
    mask.flat[value.size - 1] = True
    masked = _fresh(kw)
    masked[key] = np.ma.masked_array(value, mask=mask)
    got, err = _call(fn, masked)
    assert isinstance(err, UsageError), f"{name}: masked {key} was not refused (got {got!r})"
    where = ", ".join(map(str, np.unravel_index(value.size - 1, value.shape))) if value.ndim else ""
    assert f"{key}[{where}]" in str(err) and "masked" in str(err), str(err)
    clean = _fresh(kw)
    clean[key] = np.ma.masked_array(value, mask=np.zeros(value.shape, bool))
    got, err = _call(fn, clean)
    assert err is None and _same(got, want), f"{name}: {key} with nothing masked changed the result ({err})"


def test_dir_lists_the_lazily_loaded_public_names() -> None:
    """``dir()`` (IPython/Jupyter tab completion) lists every name of ``__all__`` of ptonum and ptonum.dask
    before any is used, though they load on first use (break stop 23: dir(ptonum.dask) listed none)."""
    import subprocess
    import sys

    code = ("import ptonum, ptonum.dask; missing = [n for m in (ptonum, ptonum.dask) for n in m.__all__ "
            "if n not in dir(m)]; print(missing)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
