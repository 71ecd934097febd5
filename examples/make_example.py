#!/usr/bin/env python
"""Build ``src/ptonum/data/example.npz``: a real small model layer on a real dataset.

What it does, step by step (every step is deterministic; see ``EXAMPLE.md``):

1. Data: scikit-learn's bundled ``load_digits`` (no download; 1797 images of
   8x8 pixel counts 0..16, a copy of the test set of the UCI "Optical
   Recognition of Handwritten Digits" data).  Image i with i % 7 == 0 (the
   first 256 of them) forms the example batch (M = 256); the other 1541
   images train the model.  Inputs are centred pixels ``x = pixel - 8`` in
   -8..8 (exact in int8).
2. Model: a two-layer perceptron ``logits = relu((x/16) @ W1) @ W2``
   (64 -> 32 hidden -> 10 logits, no biases), trained by full-batch gradient
   descent with momentum from a fixed seed.  The trained weights are rounded to
   a grid of 2^-20 so that every later step is exact integer arithmetic and the
   result cannot depend on the BLAS summation order.
3. Float reference: the pre-activations and logits of the float model are
   computed exactly with int64 arithmetic and stored as float64.
4. int8 GEMMs (S32 accumulators, exact int64 matmul, checked to fit S32):
   hidden layer ``x (-8..8, exact in int8) @ w1_q`` with symmetric per-column
   int8 weights; logits layer ``h_q @ w2_q`` with the hidden activations
   quantized per-tensor (symmetric, calibrated on the training set) and
   per-tensor int8 weights.
5. FP32 GEMMs (FP32 accumulators): the same layers with float32 operands,
   accumulated in float32 one K step at a time (the order a matrix unit
   accumulates in; elementwise numpy ops, so bit-identical on every machine).
6. Scales for the representative post-processing modes, chosen from the data
   and rounded to 11 significant bits so each is an exact FP19 value and
   ``acc * scale`` is exact in float64.

Run ``python examples/make_example.py [OUT.npz]`` (default: the bundled file).
The npz is written with fixed zip timestamps, so the same inputs give the same
bytes; ``tests/test_example.py`` checks the rebuild reproduces every array.
"""

from __future__ import annotations

import io
import json
import sys
import zipfile
from pathlib import Path
from typing import Dict, Tuple

import numpy as np

M_EXAMPLE = 256  # rows of the example batch (the last 256 digits)
HIDDEN = 32
CLASSES = 10
SEED = 20240917
EPOCHS = 400
L2 = 1e-3
WEIGHT_GRID = 2.0**-20  # trained weights are rounded to multiples of this
DEFAULT_OUT = Path(__file__).resolve().parents[1] / "src" / "ptonum" / "data" / "example.npz"


def load_data() -> Tuple[np.ndarray, np.ndarray]:
    """Return (pixels int64 1797x64 in 0..16, labels int64) from scikit-learn's bundled copy."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    x = np.asarray(digits.data)
    xi = x.astype(np.int64)
    assert np.array_equal(xi, x) and xi.min() >= 0 and xi.max() <= 16
    return xi, np.asarray(digits.target, dtype=np.int64)


def train(x_train: np.ndarray, y_train: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Train ``relu((x/16) @ W1) @ W2`` with softmax cross-entropy; return float64 weights.

    Full-batch gradient descent with momentum, He-style uniform init from a
    fixed seed (``Generator.random`` only, whose stream numpy keeps stable).
    """
    rng = np.random.Generator(np.random.PCG64(SEED))
    k = x_train.shape[1]
    w1 = (rng.random((k, HIDDEN)) * 2.0 - 1.0) * np.sqrt(6.0 / k)
    w2 = (rng.random((HIDDEN, CLASSES)) * 2.0 - 1.0) * np.sqrt(6.0 / HIDDEN)
    xf = x_train.astype(np.float64) / 16.0
    onehot = np.eye(CLASSES)[y_train]
    v1 = np.zeros_like(w1)
    v2 = np.zeros_like(w2)
    lr, mom, l2 = 0.2, 0.9, L2
    n = xf.shape[0]
    for _ in range(EPOCHS):
        pre = xf @ w1
        h = np.maximum(pre, 0.0)
        logits = h @ w2
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(axis=1, keepdims=True)
        g_logits = (p - onehot) / n
        g2 = h.T @ g_logits + l2 * w2
        g_h = (g_logits @ w2.T) * (pre > 0)
        g1 = xf.T @ g_h + l2 * w1
        v1 = mom * v1 - lr * g1
        v2 = mom * v2 - lr * g2
        w1 += v1
        w2 += v2
    return w1, w2


def round_to_grid(w: np.ndarray) -> np.ndarray:
    """Round to a multiple of WEIGHT_GRID (half-even); the result is exact in float32."""
    out = np.rint(w / WEIGHT_GRID) * WEIGHT_GRID
    assert np.array_equal(out.astype(np.float32).astype(np.float64), out)
    return out.astype(np.float32)


def round_sig(x: np.ndarray | float, bits: int = 11) -> np.ndarray:
    """Round positive values to ``bits`` significant bits (half-even): exact FP19 values.

    This chooses parameters that FP19 represents exactly; it is data preparation,
    not the model's FP32-to-FP19 conversion.
    """
    arr = np.asarray(x, dtype=np.float64)
    assert np.all(arr > 0) and np.all(np.isfinite(arr))
    m, e = np.frexp(arr)
    out = np.ldexp(np.rint(np.ldexp(m, bits)), e - bits)
    assert np.all((out >= 2.0**-126) & (out < 2.0**128))
    return out


def round_sig_down(x: np.ndarray | float, bits: int = 11) -> np.ndarray:
    """Like :func:`round_sig` but toward zero (a scale that never exceeds ``x``)."""
    arr = np.asarray(x, dtype=np.float64)
    m, e = np.frexp(arr)
    return np.ldexp(np.floor(np.ldexp(m, bits)), e - bits)


def gemm_fp32_sequential(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """float32 GEMM accumulated one K step at a time: ``acc = fl(acc + fl(a[:,k] * b[k,:]))``."""
    a32 = np.asarray(a, dtype=np.float32)
    b32 = np.asarray(b, dtype=np.float32)
    acc = np.zeros((a32.shape[0], b32.shape[1]), dtype=np.float32)
    for k in range(a32.shape[1]):
        acc = acc + a32[:, k : k + 1] * b32[k : k + 1, :]
    return acc


def gemm_s32(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Exact integer GEMM in int64, checked to fit S32, returned as int32."""
    acc = np.asarray(a, dtype=np.int64) @ np.asarray(b, dtype=np.int64)
    assert acc.min() >= -(2**31) and acc.max() < 2**31, "accumulator does not fit S32"
    return acc.astype(np.int32)


def derive(x: np.ndarray, labels: np.ndarray, x_train: np.ndarray, y_train: np.ndarray,
           w1: np.ndarray, w2: np.ndarray) -> Dict[str, np.ndarray]:
    """Everything after training: exact references, int8 and FP32 GEMMs, mode scales.

    ``w1``/``w2`` are float32 weights on the 2^-20 grid; all arithmetic here is
    exact or correctly rounded elementwise, so it is identical on every machine.
    """
    grid = round(1 / WEIGHT_GRID)  # 2^20
    w1i = np.rint(w1.astype(np.float64) * grid).astype(np.int64)
    w2i = np.rint(w2.astype(np.float64) * grid).astype(np.int64)

    def float_model(xx: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        # pre = (x/16) @ W1 = (x @ w1i) * 2^-24 ; logits = relu(pre) @ W2 = (h_i @ w2i) * 2^-44
        pre_i = xx.astype(np.int64) @ w1i
        h_i = np.maximum(pre_i, 0)
        log_i = h_i @ w2i
        assert np.abs(log_i).max() < 2**62 and np.abs(pre_i).max() < 2**53
        pre = np.ldexp(pre_i.astype(np.float64), -24)
        logits = np.ldexp(log_i.astype(np.float64), -44)  # int64 -> float64 rounds once (RNE)
        return pre, logits

    hidden_ref, logits_ref = float_model(x)
    train_pre, train_logits = float_model(x_train)

    # int8 hidden layer: x (-8..8) is exact in int8 with scale 1/16; weights per column.
    w1f = w1.astype(np.float64)
    s_w1 = np.abs(w1f).max(axis=0) / 127.0
    w1_q = np.clip(np.rint(w1f / s_w1), -127, 127).astype(np.int8)
    x_q = x.astype(np.int8)
    acc_hidden_s32 = gemm_s32(x_q, w1_q)

    # Hidden activations: per-tensor symmetric int8, calibrated on the training set.
    s_h = float(np.maximum(train_pre, 0.0).max()) / 127.0
    h = np.maximum(hidden_ref, 0.0)
    h_q = np.clip(np.rint(h / s_h), 0, 127).astype(np.int8)
    w2f = w2.astype(np.float64)
    s_w2 = float(np.abs(w2f).max()) / 127.0
    w2_q = np.clip(np.rint(w2f / s_w2), -127, 127).astype(np.int8)
    acc_logits_s32 = gemm_s32(h_q, w2_q)

    # FP32 accumulators of the same layers (float model operands).
    acc_hidden_fp32 = gemm_fp32_sequential(x.astype(np.float32) / np.float32(16.0), w1)
    acc_logits_fp32 = gemm_fp32_sequential(h.astype(np.float32), w2)

    # ---- scales of the representative modes (exact FP19 values) -------------
    hid_real_per_acc = s_w1 / 16.0  # real pre-activation per S32 accumulator unit, per column
    # VREQ8 (+ReLU): requantize the hidden layer to the int8 activation grid s_h.
    vreq8_scale = round_sig(hid_real_per_acc / s_h)
    # REQ8 (scalar, asymmetric): map this batch's range of acc*s onto -128..127.
    a = acc_hidden_s32.astype(np.float64)
    req8_scale = float(round_sig_down(255.0 / (a.max() - a.min())))
    req8_offset = int(np.clip(np.rint(-128.0 - a.min() * req8_scale), -256, 255))
    # REQ4 (+ReLU, scalar): nonnegative activations onto 0..15, offset -8 -> -8..7.
    req4_scale = float(round_sig_down(15.0 / np.maximum(a, 0).max()))
    req4_offset = -8
    # VDEQS16 (per column): dequantize onto a 2^-11 fixed-point S16 grid.
    vdeqs16_scale = round_sig(hid_real_per_acc * 2.0**11)
    vdeqs16_offset = 0
    # DEQF16 / QS322BF16_PRE (scalar): dequantize logits to real units.
    deq_logits_scale = float(round_sig(s_h * s_w2))
    # QF322FP8_PRE: put the largest |logit| just under E4M3's 448.
    l32 = acc_logits_fp32.astype(np.float64)
    fp8_scale = float(round_sig_down(448.0 / np.abs(l32).max()))
    # QF322HIF8_PRE: put the typical |logit| (RMS) at 1, where HiF8 is most precise.
    hif8_scale = float(round_sig(1.0 / np.sqrt(np.mean(l32 * l32))))
    # VQF322B8_PRE (+ReLU, per column): per-channel int8 activations of the hidden layer.
    hf = acc_hidden_fp32.astype(np.float64)
    colmax = np.maximum(hf, 0).max(axis=0)
    colmax = np.where(colmax > 0, colmax, np.abs(hf).max())  # dead ReLU units: any scale works
    vqb8_scale = round_sig_down(127.0 / colmax)
    vqb8_offset = 0
    # QF322FP8_PRE on the hidden layer with GroupMax/MaxAbs: |max| under 448.
    fp8_hidden_scale = float(round_sig_down(448.0 / np.abs(hf).max()))

    pred = np.argmax(logits_ref, axis=1)
    meta = {
        "dataset": "scikit-learn load_digits (UCI Optical Recognition of Handwritten Digits, test set copy)",
        "train_rows": int(x_train.shape[0]),
        "example_rows": int(x.shape[0]),
        "float_model_accuracy_on_example": float(np.mean(pred == labels)),
        "float_model_accuracy_on_train": float(np.mean(np.argmax(train_logits, axis=1) == y_train)),
        "example_rows_rule": "load_digits index i with i % 7 == 0, first 256",
        "inputs": "x = pixel - 8 (int8, -8..8); model input x/16",
        "l2": L2,
        "seed": SEED,
        "epochs": EPOCHS,
        "weight_grid": "2^-20",
    }
    return {
        "x_q": x_q,
        "labels": labels.astype(np.int8),
        "w1": w1,
        "w2": w2,
        "w1_q": w1_q,
        "w2_q": w2_q,
        "s_w1": s_w1,
        "s_w2": np.float64(s_w2),
        "s_h": np.float64(s_h),
        "h_q": h_q,
        "hidden_ref": hidden_ref,
        "logits_ref": logits_ref,
        "acc_hidden_s32": acc_hidden_s32,
        "acc_logits_s32": acc_logits_s32,
        "acc_hidden_fp32": acc_hidden_fp32,
        "acc_logits_fp32": acc_logits_fp32,
        "scale_vreq8": vreq8_scale,
        "scale_req8": np.float64(req8_scale),
        "offset_req8": np.int64(req8_offset),
        "scale_req4": np.float64(req4_scale),
        "offset_req4": np.int64(req4_offset),
        "scale_vdeqs16": vdeqs16_scale,
        "offset_vdeqs16": np.int64(vdeqs16_offset),
        "scale_deq_logits": np.float64(deq_logits_scale),
        "scale_fp8_logits": np.float64(fp8_scale),
        "scale_hif8_logits": np.float64(hif8_scale),
        "scale_vqb8_hidden": vqb8_scale,
        "offset_vqb8_hidden": np.int64(vqb8_offset),
        "scale_fp8_hidden": np.float64(fp8_hidden_scale),
        "meta": np.array(json.dumps(meta, sort_keys=True)),
    }


def build() -> Dict[str, np.ndarray]:
    """Load the data, train, and derive every array of the example (deterministic)."""
    pixels, y_all = load_data()
    x_all = pixels - 8  # centred inputs, -8..8
    example_rows = np.flatnonzero(np.arange(x_all.shape[0]) % 7 == 0)[:M_EXAMPLE]
    train_rows = np.setdiff1d(np.arange(x_all.shape[0]), example_rows)
    x_train, y_train = x_all[train_rows], y_all[train_rows]
    x, y = x_all[example_rows], y_all[example_rows]
    w1, w2 = train(x_train, y_train)
    return derive(x, y, x_train, y_train, round_to_grid(w1), round_to_grid(w2))


def write_npz(path: Path, arrays: Dict[str, np.ndarray]) -> None:
    """Write an ``np.load``-readable npz with fixed zip timestamps (same arrays -> same bytes)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for key in sorted(arrays):
            buf = io.BytesIO()
            np.lib.format.write_array(buf, np.asarray(arrays[key]), allow_pickle=False)
            info = zipfile.ZipInfo(key + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, buf.getvalue(), compresslevel=9)
    tmp.replace(path)


def main(argv: list[str]) -> int:
    out = Path(argv[1]) if len(argv) > 1 else DEFAULT_OUT
    arrays = build()
    write_npz(out, arrays)
    meta = json.loads(str(arrays["meta"]))
    print(f"wrote {out} ({out.stat().st_size} bytes); float model accuracy on the example batch "
          f"{meta['float_model_accuracy_on_example']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
