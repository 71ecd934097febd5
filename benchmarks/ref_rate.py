#!/usr/bin/env python3
"""Per-element cost of the reference engine (microseconds an element), one JSON line.

Run by ``benchmarks/bench.py`` twice in the same session: once against the
working tree and once with ``--src DIR`` pointing at an exported older ptonum
(``git archive <rev> src``), so the two rates are measured side by side on the
same inputs.  Usable alone::

    python benchmarks/ref_rate.py [--n 2000] [--repeat 3] [--src /tmp/ptonum-0.1.0/src]

The inputs are typical data: S32 accumulators uniform in +-2^20 with per-column
scale words (VREQ8) or one word (REQ8), FP32 accumulators ``N(0, 1) * 50``
(QF322FP8_PRE, QF322HIF8_PRE, F322BF16, F322F16) and ``N(0, 1) * 4`` FP32 /
FP16 / BF16 encodings for TCVT to E8M0.  Only the public API is used
(``fpatr.postprocess_element(..., engine="reference")``, ``tcvt.to_e8m0(...,
engine="reference")``), so any ptonum version with that API can be measured.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from typing import Any, Callable, Dict, List, Optional


def cases(n: int) -> Dict[str, Callable[[], Any]]:
    import numpy as np

    from ptonum import fpatr, tcvt

    rng = np.random.default_rng(2026)
    cols = 64
    rows = max(1, n // cols)
    acc = rng.integers(-(1 << 20), 1 << 20, size=(rows, cols), dtype=np.int32).view(np.uint32)
    scales = (rng.uniform(0.5, 2.0, size=cols) * 2.0 ** -12).astype(np.float32)
    offsets = rng.integers(-20, 20, size=cols)

    def word(mode: str, s: float, o: int = 0) -> int:
        q = fpatr.quant_param(float(s), int(o), mode=mode, rounding="rne") if mode.endswith("REQ8") \
            else fpatr.quant_param(float(s), mode=mode)
        return int(getattr(q, "word", q))

    vwords = np.array([word("VREQ8", s, o) for s, o in zip(scales, offsets)], dtype=np.uint64)[None, :]
    rword = word("REQ8", 2.0 ** -12, 3)
    x = (rng.standard_normal(rows * cols) * 50).astype(np.float32).view(np.uint32).reshape(rows, cols)
    t = (rng.standard_normal(rows * cols) * 4).astype(np.float32)
    t32 = t.view(np.uint32)
    t16 = t.astype(np.float16).view(np.uint16)
    tb16 = (t32 >> np.uint32(16)).astype(np.uint16)
    e4 = word("QF322FP8_PRE", 1.0)
    h8 = word("QF322HIF8_PRE", 1.0)

    def pp(mode: str, a: Any, qp: Any, acc_type: str, relu: str = "NONE") -> Callable[[], Any]:
        return lambda: fpatr.postprocess_element(a, pre_quant_mode=mode, relu_mode=relu, acc_type=acc_type,
                                                 quant_param=qp, engine="reference")

    def e8(bits: Any, src: str) -> Callable[[], Any]:
        return lambda: tcvt.to_e8m0(bits, src_type=src, rmode="RNE", engine="reference")

    return {
        "VREQ8 S32->S8 per-column + ReLU": pp("VREQ8", acc, vwords, "S32", "RELU"),
        "REQ8 S32->S8": pp("REQ8", acc, rword, "S32"),
        "QF322FP8_PRE FP32->E4M3": pp("QF322FP8_PRE", x, e4, "FP32"),
        "QF322HIF8_PRE FP32->HiF8": pp("QF322HIF8_PRE", x, h8, "FP32"),
        "F322BF16 FP32->BF16": pp("F322BF16", x, 1, "FP32"),
        "F322F16 FP32->FP16": pp("F322F16", x, 1, "FP32"),
        "TCVT FP32->E8M0": e8(t32, "FP32"),
        "TCVT FP16->E8M0": e8(t16, "FP16"),
        "TCVT BF16->E8M0": e8(tb16, "BF16"),
    }, rows * cols  # type: ignore[return-value]


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=2048, help="elements per case (rounded to 64 columns)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--src", default="", help="import ptonum from this directory (an exported old version)")
    ap.add_argument("--only", default="", help="comma-separated case names")
    args = ap.parse_args(argv)
    if args.src:
        sys.path.insert(0, args.src)
    import ptonum

    if args.src and not ptonum.__file__.startswith(args.src):  # pragma: no cover - environment check
        print(json.dumps({"error": f"imported {ptonum.__file__}, not from {args.src}"}))
        return 1
    table, n = cases(args.n)
    only = {s.strip() for s in args.only.split(",") if s.strip()}
    out: Dict[str, Any] = {"ptonum": getattr(ptonum, "__version__", "?"), "file": ptonum.__file__, "n": n,
                           "us_per_element": {}}
    for name, fn in table.items():
        if only and name not in only:
            continue
        best = float("inf")
        for _ in range(args.repeat):
            gc.collect()
            t0 = time.process_time()
            fn()
            best = min(best, time.process_time() - t0)
        out["us_per_element"][name] = 1e6 * best / n
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
