"""The bundled example (``ptonum/data/example.npz``) and its per-mode error report.

Oracles: the int8 GEMMs are recomputed here from the stored int8 operands with
exact int64 arithmetic; the whole file is rebuilt by ``examples/make_example.py``
and compared array by array and byte by byte; FP16/BF16/E4M3 destinations of
the example are compared with numpy and ml_dtypes conversions of the exact
product (independent libraries, RNE, no overflow in these data).
"""

from __future__ import annotations

import hashlib
import importlib.util
import math
import sys
from fractions import Fraction
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from ptonum.example import RUNS, exact_reference, load_example, run_arguments, run_report, sqnr_db
from ptonum.fpatr.tile import postprocess

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "src" / "ptonum" / "data" / "example.npz"


def _make_example_module():
    spec = importlib.util.spec_from_file_location("make_example", ROOT / "examples" / "make_example.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["make_example"] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def ex():
    return load_example()


def test_example_loads_with_documented_arrays(ex):
    assert DATA.stat().st_size < 1_000_000
    assert ex["x_q"].dtype == np.int8 and ex["x_q"].shape == (256, 64)
    assert ex["acc_hidden_s32"].dtype == np.int32 and ex["acc_hidden_s32"].shape == (256, 32)
    assert ex["acc_logits_s32"].dtype == np.int32 and ex["acc_logits_s32"].shape == (256, 10)
    assert ex["acc_hidden_fp32"].dtype == np.float32 and ex["acc_hidden_fp32"].shape == (256, 32)
    assert ex["acc_logits_fp32"].dtype == np.float32 and ex["acc_logits_fp32"].shape == (256, 10)
    assert ex["hidden_ref"].dtype == np.float64 and ex["logits_ref"].dtype == np.float64
    assert ex.meta["example_rows"] == 256
    assert int(ex["x_q"].min()) >= -8 and int(ex["x_q"].max()) <= 8
    for run in RUNS:
        assert run.acc_key in ex
        if run.scale_key:
            assert run.scale_key in ex


def test_example_inputs_are_the_digits_data(ex):
    from sklearn.datasets import load_digits

    d = load_digits()
    rows = np.flatnonzero(np.arange(d.data.shape[0]) % 7 == 0)[:256]
    assert np.array_equal(ex["x_q"].astype(np.int64), d.data[rows].astype(np.int64) - 8)
    assert np.array_equal(ex["labels"].astype(np.int64), d.target[rows])


def test_s32_accumulators_are_the_int8_gemm_of_the_stored_operands(ex):
    hid = ex["x_q"].astype(np.int64) @ ex["w1_q"].astype(np.int64)
    log = ex["h_q"].astype(np.int64) @ ex["w2_q"].astype(np.int64)
    assert np.array_equal(hid, ex["acc_hidden_s32"].astype(np.int64))
    assert np.array_equal(log, ex["acc_logits_s32"].astype(np.int64))
    for a in (hid, log):
        assert a.min() >= -(2**31) and a.max() < 2**31


def test_int8_operands_are_symmetric_quantizations_of_the_float_model(ex):
    w1 = ex["w1"].astype(np.float64)
    assert np.array_equal(ex["w1_q"], np.clip(np.rint(w1 / ex["s_w1"]), -127, 127).astype(np.int8))
    assert np.abs(ex["w1_q"]).max(axis=0).tolist() == [127] * 32  # per-column max uses the full range
    w2 = ex["w2"].astype(np.float64)
    assert np.array_equal(ex["w2_q"], np.clip(np.rint(w2 / float(ex["s_w2"])), -127, 127).astype(np.int8))
    h = np.maximum(ex["hidden_ref"], 0.0)
    assert np.array_equal(ex["h_q"], np.clip(np.rint(h / float(ex["s_h"])), 0, 127).astype(np.int8))


def test_float_reference_is_exact_integer_arithmetic(ex):
    # hidden_ref = (x/16) @ w1 with w1 on the 2^-20 grid: an exact integer sum times 2^-24.
    w1i = (ex["w1"].astype(np.float64) * 2.0**20).astype(np.int64)
    assert np.array_equal(w1i.astype(np.float64) * 2.0**-20, ex["w1"].astype(np.float64))
    pre = ex["x_q"].astype(np.int64) @ w1i
    assert np.array_equal(np.ldexp(pre.astype(np.float64), -24), ex["hidden_ref"])


def test_scales_are_exact_positive_normal_fp19_values(ex):
    for key in ex:
        if key.startswith("scale_"):
            s = np.asarray(ex[key], dtype=np.float64).ravel()
            m, _ = np.frexp(s)
            assert np.all(s >= 2.0**-126) and np.all(s < 2.0**128), key
            assert np.array_equal(np.ldexp(np.rint(np.ldexp(m, 11)), -11), m), key  # <= 11 significant bits


@pytest.mark.parametrize("run", RUNS, ids=[r.name for r in RUNS])
def test_exact_reference_is_exact_in_float64(ex, run):
    ref = exact_reference(run, ex)
    acc = ex[run.acc_key]
    scale = np.broadcast_to(np.asarray(ex[run.scale_key], np.float64) if run.scale_key else np.float64(1.0), acc.shape)
    off = int(ex[run.offset_key]) if run.offset_key else 0
    rows = range(0, acc.shape[0], 7)  # every 7th row: 37 rows, all columns
    for i in rows:
        for j in range(acc.shape[1]):
            a = Fraction(float(acc[i, j])) if run.acc_type == "FP32" else Fraction(int(acc[i, j]))
            if run.relu == "RELU" and a < 0:
                a = Fraction(0)
            assert Fraction(float(ref[i, j])) == a * Fraction(float(scale[i, j])) + off


def test_rebuild_reproduces_every_array_and_the_file_bytes(tmp_path):
    mk = _make_example_module()
    arrays = mk.build()
    with np.load(DATA, allow_pickle=False) as z:
        stored = {k: z[k] for k in z.files}
    assert sorted(arrays) == sorted(stored)
    for k, v in arrays.items():
        v = np.asarray(v)
        assert v.dtype == stored[k].dtype and v.shape == stored[k].shape, k
        assert v.tobytes() == stored[k].tobytes(), k
    out = tmp_path / "example.npz"
    mk.write_npz(out, arrays)
    assert hashlib.sha256(out.read_bytes()).hexdigest() == hashlib.sha256(DATA.read_bytes()).hexdigest()


def _result(run_name, ex):
    run = next(r for r in RUNS if r.name == run_name)
    kwargs = run_arguments(run, ex)
    return run, postprocess(kwargs.pop("acc"), **kwargs)


def test_f322f16_and_deqf16_match_numpy_float16(ex):
    run, res = _result("logits F322F16", ex)
    want = ex["acc_logits_fp32"].astype(np.float16)
    assert np.array_equal(res.d_bits, want.view(np.uint16))
    run, res = _result("logits DEQF16", ex)
    want = exact_reference(run, ex).astype(np.float16)  # float64 exact product -> float16, RNE
    assert np.array_equal(res.d_bits, want.view(np.uint16))


def test_f322bf16_matches_ml_dtypes(ex):
    run, res = _result("logits F322BF16", ex)
    want = ex["acc_logits_fp32"].astype(ml_dtypes.bfloat16)
    assert np.array_equal(res.d_bits, want.view(np.uint16))


def test_fp8_logits_match_ml_dtypes_on_the_exact_product(ex):
    run, res = _result("logits QF322FP8_PRE", ex)
    ref = exact_reference(run, ex)
    assert np.abs(ref).max() <= 448  # no overflow: Sat does not matter
    want = ref.astype(ml_dtypes.float8_e4m3fn)
    assert np.array_equal(res.d_bits, want.view(np.uint8))


def test_run_report_covers_every_run_with_finite_metrics(ex):
    reports = run_report(example=ex)
    assert [r.run.name for r in reports] == [r.name for r in RUNS]
    for rep in reports:
        assert rep.d_shape == ex[rep.run.acc_key].shape
        assert not math.isnan(rep.sqnr_db) and rep.sqnr_db > 20, rep.run.name
        assert rep.flags & 0x10  # rounding is inexact somewhere in every run
        assert (rep.top1_float is not None) == (rep.run.layer == "logits")
    by = {r.run.name: r for r in reports}
    assert by["hidden VREQ8+ReLU+RowMax"].row_max_shape == (256, 1)
    assert by["hidden FP8 GroupMax/MaxAbs"].group_max_shape == (256, 4)
    # integer destinations without saturation are within half a unit of the exact product
    for name in ("hidden VREQ8+ReLU+RowMax", "hidden REQ4+ReLU", "hidden VDEQS16"):
        assert by[name].max_abs_err <= 0.5


def test_reference_engine_agrees_on_one_run(ex):
    run = next(r for r in RUNS if r.name == "hidden REQ4+ReLU")
    kwargs = run_arguments(run, ex)
    acc = kwargs.pop("acc")[:16]
    fast = postprocess(acc, engine="fast", **kwargs)
    ref = postprocess(acc, engine="reference", **kwargs)
    assert np.array_equal(fast.d_bits, ref.d_bits) and fast.flags == ref.flags


def test_sqnr_db():
    assert sqnr_db(np.array([1.0, 2.0]), np.array([1.0, 2.0])) == float("inf")
    assert sqnr_db(np.array([3.0, 4.0]), np.array([3.0, 4.5])) == pytest.approx(10 * math.log10(25 / 0.25))
