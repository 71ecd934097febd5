#!/usr/bin/env python3
"""ptonum speed and memory benchmark: ptonum and each anchor, same process, same data.

Run:  python benchmarks/bench.py            (full size, 16M elements, ~2-4 minutes)
      python benchmarks/bench.py --quick    (1M elements, a smoke run)

Prints one table: throughput of ptonum and of its anchor (Melem/s, best of
--repeat runs), the ratio ptonum/anchor, and the target from issue 6 /
the design notes.  Nothing here is a pass/fail test.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import sys
import time
import tracemalloc
from typing import Callable, List, Optional, Tuple

import numpy as np


def best_time(fn: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def fp19_word(scale: float) -> int:
    from ptonum import fp19

    bits = int(np.array(scale, dtype=np.float32).view(np.uint32))
    return int(fp19.from_fp32(bits))


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="1M elements instead of 16M")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", default="", help="comma-separated case names to run")
    args = ap.parse_args(argv)

    import ml_dtypes

    import ptonum
    from ptonum import fpatr, formats, tcvt

    side = 1024 if args.quick else 4096
    n = side * side
    rng = np.random.default_rng(2026)
    rows: List[Tuple[str, str, float, float, str]] = []
    only = {s.strip() for s in args.only.split(",") if s.strip()}

    def want(name: str) -> bool:
        return not only or name in only

    def record(name: str, anchor: str, t_ours: float, t_anchor: float, target: str) -> None:
        rows.append((name, anchor, n / t_ours / 1e6, n / t_anchor / 1e6, target))
        print(f"  {name}: ptonum {n / t_ours / 1e6:8.1f} Melem/s, anchor {n / t_anchor / 1e6:8.1f} Melem/s, "
              f"ratio {t_anchor / t_ours:5.2f}x (target {target})", flush=True)

    # --- VREQ8 S32 -> S8, per-column scale and offset, ReLU, RowMax -------------------
    if want("vreq8"):
        acc = rng.integers(-(1 << 20), 1 << 20, size=(side, side), dtype=np.int32)
        scales = (rng.uniform(0.5, 2.0, size=side) * 2.0 ** -12).astype(np.float32)
        offsets = rng.integers(-20, 20, size=side)
        words = np.array([fpatr.quant_param(float(s), int(o), mode="VREQ8", rounding="rne").word
                          if hasattr(fpatr.quant_param(float(s), int(o), mode="VREQ8", rounding="rne"), "word")
                          else int(fpatr.quant_param(float(s), int(o), mode="VREQ8", rounding="rne"))
                          for s, o in zip(scales, offsets)], dtype=np.uint64)
        attrs = fpatr.FPATRAttributes.from_fields(pre_quant_mode="VREQ8", relu_mode="RELU", row_max_en=True)
        sc64 = scales.astype(np.float64)
        off64 = offsets.astype(np.float64)

        def ours() -> object:
            return fpatr.postprocess(acc, acc_type="S32", attributes=attrs, quant_tile=words, sat=True)

        def anchor() -> object:
            return np.clip(np.rint(acc * sc64) + off64, -128, 127).astype(np.int8)

        print("vreq8 ...", flush=True)
        record("VREQ8 S32->S8 + ReLU + RowMax (tile op)", "numpy clip(rint(acc*scale)+off)",
               best_time(ours, args.repeat), best_time(anchor, args.repeat), ">= 1.0x")
        del acc

    x = (rng.standard_normal(n) * 4).astype(np.float32)
    xbits = x.view(np.uint32).reshape(side, side)

    # --- QF322FP8_PRE FP32 -> E4M3 ----------------------------------------------------
    if want("e4m3"):
        attrs = fpatr.FPATRAttributes.from_fields(pre_quant_mode="QF322FP8_PRE")
        qp = fpatr.quant_param(1.0, mode="QF322FP8_PRE")
        qp = getattr(qp, "word", qp)
        print("e4m3 ...", flush=True)
        record("QF322FP8_PRE FP32->E4M3 (tile op)", "ml_dtypes astype(float8_e4m3fn)",
               best_time(lambda: fpatr.postprocess(xbits, acc_type="FP32", attributes=attrs, quant_param=qp), args.repeat),
               best_time(lambda: x.astype(ml_dtypes.float8_e4m3fn), args.repeat), ">= 1.0x")

    # --- QF322HIF8_PRE FP32 -> HiF8 ---------------------------------------------------
    if want("hif8"):
        try:
            import en_dtypes

            attrs = fpatr.FPATRAttributes.from_fields(pre_quant_mode="QF322HIF8_PRE")
            qp = fpatr.quant_param(1.0, mode="QF322HIF8_PRE")
            qp = getattr(qp, "word", qp)
            print("hif8 ...", flush=True)
            record("QF322HIF8_PRE FP32->HiF8 (tile op)", "en_dtypes astype(hifloat8)",
                   best_time(lambda: fpatr.postprocess(xbits, acc_type="FP32", attributes=attrs, quant_param=qp), args.repeat),
                   best_time(lambda: x.astype(en_dtypes.hifloat8), args.repeat), ">= 1.0x")
        except ImportError:
            print("  en_dtypes not installed: HiF8 anchor skipped")

    # --- F322F16 on wide-range data ---------------------------------------------------
    if want("f16"):
        wide = (rng.choice([-1.0, 1.0], size=n) * 2.0 ** rng.uniform(-30, 20, size=n)).astype(np.float32)
        wbits = wide.view(np.uint32).reshape(side, side)
        attrs = fpatr.FPATRAttributes.from_fields(pre_quant_mode="F322F16")
        print("f16 ...", flush=True)
        with np.errstate(over="ignore"):
            record("F322F16 FP32->FP16 wide range (tile op)", "numpy astype(float16)",
                   best_time(lambda: fpatr.postprocess(wbits, acc_type="FP32", attributes=attrs), args.repeat),
                   best_time(lambda: wide.astype(np.float16), args.repeat), ">= 1.0x")
        del wide, wbits

    # --- F322BF16 ---------------------------------------------------------------------
    if want("bf16"):
        attrs = fpatr.FPATRAttributes.from_fields(pre_quant_mode="F322BF16")
        print("bf16 ...", flush=True)
        record("F322BF16 FP32->BF16 (tile op)", "ml_dtypes astype(bfloat16)",
               best_time(lambda: fpatr.postprocess(xbits, acc_type="FP32", attributes=attrs), args.repeat),
               best_time(lambda: x.astype(ml_dtypes.bfloat16), args.repeat), ">= 0.5x")

    # --- TCVT FP32 -> E8M0 -------------------------------------------------------------
    if want("e8m0"):
        pos = np.abs(x) + np.float32(1e-3)
        pbits = pos.view(np.uint32)
        print("e8m0 ...", flush=True)
        record("TCVT FP32->E8M0 (to_e8m0)", "ml_dtypes astype(float8_e8m0fnu)",
               best_time(lambda: tcvt.to_e8m0(pbits, src_type="FP32", rmode="RNE"), args.repeat),
               best_time(lambda: pos.astype(ml_dtypes.float8_e8m0fnu), args.repeat), ">= 1.0x")

    # --- decompose an 8-bit and a 16-bit type -----------------------------------------
    if want("decompose"):
        c8 = rng.integers(0, 256, size=n, dtype=np.uint8)
        c16 = rng.integers(0, 65536, size=n, dtype=np.uint16)
        lut8 = rng.integers(0, 1 << 20, size=256).astype(np.int64)
        lut16 = rng.integers(0, 1 << 20, size=65536).astype(np.int64)
        formats.decompose("E4M3", c8[:16])
        formats.decompose("FP16", c16[:16])
        print("decompose ...", flush=True)
        # The anchor is one plain LUT gather per output array (4 arrays: available, negative,
        # significand, exponent), the least a table-driven decode can do.
        record("decompose E4M3 (8-bit)", "numpy 256-entry LUT x4 arrays",
               best_time(lambda: formats.decompose("E4M3", c8), args.repeat),
               best_time(lambda: [lut8[c8] for _ in range(4)], args.repeat), ">= 0.8x")
        record("decompose FP16 (16-bit)", "numpy 65536-entry LUT x4 arrays",
               best_time(lambda: formats.decompose("FP16", c16), args.repeat),
               best_time(lambda: [lut16[c16] for _ in range(4)], args.repeat), ">= 0.8x")

    # --- peak memory of postprocess on side x side ------------------------------------
    mem_line = ""
    if want("memory"):
        acc = rng.integers(-(1 << 20), 1 << 20, size=(side, side), dtype=np.int32)
        qp = fpatr.quant_param(2.0 ** -12, 3, mode="REQ8")
        qp = getattr(qp, "word", qp)
        attrs = fpatr.FPATRAttributes.from_fields(pre_quant_mode="REQ8", relu_mode="RELU", row_max_en=True)
        gc.collect()
        tracemalloc.start()
        res = fpatr.postprocess(acc, acc_type="S32", attributes=attrs, quant_param=qp)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        out_bytes = res.d_bits.nbytes + (res.row_max_bits.nbytes if res.row_max_bits is not None else 0)
        base = acc.nbytes + out_bytes
        # the input already existed before tracing started: peak counts only new allocations
        ratio = (acc.nbytes + peak) / base
        mem_line = (f"peak memory of postprocess REQ8+ReLU+RowMax on {side}x{side}: input {acc.nbytes / 2**20:.0f} MiB + "
                    f"new allocations peak {peak / 2**20:.0f} MiB = {ratio:.2f}x (input + outputs = {base / 2**20:.0f} MiB); target <= 2x")
        print("  " + mem_line, flush=True)

    print()
    print(f"ptonum {ptonum.__version__}, numpy {np.__version__}, ml_dtypes {ml_dtypes.__version__}, "
          f"Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} cores, n = {n} elements")
    print()
    print("| operation | anchor | ptonum Melem/s | anchor Melem/s | ratio | target |")
    print("| --- | --- | ---: | ---: | ---: | --- |")
    for name, anchor, ours_t, anchor_t, target in rows:
        print(f"| {name} | {anchor} | {ours_t:.1f} | {anchor_t:.1f} | {ours_t / anchor_t:.2f}x | {target} |")
    if mem_line:
        print()
        print(mem_line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
