#!/usr/bin/env python3
"""ptonum on Dask: the out-of-core check and the scale-out benchmark (not part of the test suite).

Run:  python benchmarks/scale_out.py memory      a ~768 MiB int32 Zarr tile, Zarr -> Zarr on 2 local
                                                 workers limited to 700 MiB each; reports whether any
                                                 worker was restarted and checks every output bit against
                                                 the single-process engine (row block by row block)
      python benchmarks/scale_out.py bench       throughput on a Zarr tile with 1 and 2 local workers vs the
                                                 single-process fast engine; scheduling overhead per chunk;
                                                 the reference engine's per-core rate in a sweep; a projected
                                                 2^32-input sweep against the number of cores
Options: --rows/--cols (memory tile, default 16384 x 12288 = 768 MiB), --dir (scratch, default a temp dir).

Exit status of `memory`: 0 when no worker was restarted and every bit matched, 1 otherwise.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from typing import Any, Dict, List

import numpy as np

from ptonum import fpatr
from ptonum import dask as pdask

CALL: Dict[str, Any] = dict(
    attributes={"pre_quant_mode": "REQ8", "relu_mode": "RELU", "row_max_en": True, "group_max_en": True,
                "group_n": 32, "max_abs_en": True},
    quant_param=int(fpatr.quant_param(2.0 ** -20, -3, mode="REQ8")), sat=True)


def _make_zarr(path: str, m: int, n: int, chunks: Any, seed: int = 0) -> None:
    import zarr

    z = zarr.open_array(path, mode="w", shape=(m, n), chunks=chunks, dtype=np.int32)
    rng = np.random.default_rng(seed)
    for r0 in range(0, m, chunks[0]):
        r1 = min(m, r0 + chunks[0])
        z[r0:r1] = rng.integers(-2**31, 2**31, size=(r1 - r0, n), dtype=np.int64).astype(np.int32)


def _worker_ids(client: Any) -> Dict[str, int]:
    return client.run(os.getpid)


def memory(args: argparse.Namespace) -> int:
    import zarr

    m, n = args.rows, args.cols
    scratch = args.dir or tempfile.mkdtemp(prefix="ptonum-scale-")
    src, dst = os.path.join(scratch, "acc.zarr"), os.path.join(scratch, "out.zarr")
    chunks = (2048, 2048)
    print(f"tile {m} x {n} int32 = {m * n * 4 / 2**20:.0f} MiB, chunks {chunks[0]} x {chunks[1]} "
          f"({m * n * 4 / 2**20 / (chunks[0] * chunks[1] * 4 / 2**20):.0f} chunks), scratch {scratch}", flush=True)
    t0 = time.perf_counter()
    _make_zarr(src, m, n, chunks)
    print(f"wrote the input in {time.perf_counter() - t0:.1f} s", flush=True)
    with pdask.open_client(workers=2, memory_limit="700MiB") as client:
        before = _worker_ids(client)
        limits = {w: info["memory_limit"] for w, info in client.scheduler_info()["workers"].items()}
        print("workers:", ", ".join(f"{w} limit {v / 2**20:.0f} MiB" for w, v in limits.items()), flush=True)
        t0 = time.perf_counter()
        acc = pdask.open_tile(src)
        flags = pdask.postprocess(acc, **CALL).to_zarr(dst, client=client)
        took = time.perf_counter() - t0
        after = _worker_ids(client)
        peak = client.run(lambda: __import__("resource").getrusage(__import__("resource").RUSAGE_SELF).ru_maxrss)
    restarted = before != after
    print(f"Zarr -> Zarr in {took:.1f} s ({m * n / took / 1e6:.1f} Melem/s), flags {flags:#04x}; worker pids "
          f"before {sorted(before.values())} after {sorted(after.values())}: "
          f"{'A WORKER WAS RESTARTED' if restarted else 'no worker restarted'}; "
          f"peak RSS per worker {', '.join(f'{v / 1024:.0f} MiB' for v in peak.values())}", flush=True)
    g = zarr.open_group(dst, mode="r")
    src_z = zarr.open_array(src, mode="r")
    mismatched = 0
    step = 1024
    ref_flags = 0
    for r0 in range(0, m, step):  # full-width row blocks: RowMax/GroupMax are final for these rows
        block = src_z[r0:r0 + step]
        ref = fpatr.postprocess(block, **CALL)
        ref_flags |= ref.flags
        mismatched += int(np.count_nonzero(g["d"][r0:r0 + step] != ref.d_bits))
        mismatched += int(np.count_nonzero(g["row_max"][r0:r0 + step] != ref.row_max_bits))
        mismatched += int(np.count_nonzero(g["group_max"][r0:r0 + step] != ref.group_max_bits))
    same_flags = ref_flags == flags == g.attrs["flags"]
    print(f"checked every output element against the single-process engine: {mismatched} mismatches, "
          f"flags {'equal' if same_flags else 'DIFFER'}", flush=True)
    if not args.dir:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0 if (not restarted and mismatched == 0 and same_flags) else 1


def bench(args: argparse.Namespace) -> int:
    import zarr

    from ptonum.dask.sweep import postprocess_sweep, run_partition, tcvt_sweep

    scratch = args.dir or tempfile.mkdtemp(prefix="ptonum-bench-")
    m = n = 4096
    src = os.path.join(scratch, "acc.zarr")
    chunks = (1024, 4096)
    _make_zarr(src, m, n, chunks)
    arr = zarr.open_array(src, mode="r")[:]
    rows: List[str] = []
    fpatr.postprocess(arr[:64], **CALL)  # compile/load the kernels first
    t0 = time.perf_counter()
    fpatr.postprocess(arr, **CALL)
    single = m * n / (time.perf_counter() - t0) / 1e6
    rows.append(f"| single process, fast engine, in memory (no Zarr) | {single:.1f} | 1.00 |")
    t0 = time.perf_counter()
    pdask.postprocess(pdask.open_tile(src), **CALL).to_zarr(os.path.join(scratch, "o0.zarr"))
    here = m * n / (time.perf_counter() - t0) / 1e6
    rows.append(f"| this process (no client), Zarr -> Zarr, {chunks[0]}x{chunks[1]} chunks | {here:.1f} | "
                f"{here / single:.2f} |")
    for w in (1, 2):
        with pdask.open_client(workers=w) as client:
            client.run(lambda: fpatr.postprocess(np.zeros((64, 4096), np.int32), **CALL))  # warm the kernels
            t0 = time.perf_counter()
            pdask.postprocess(pdask.open_tile(src), **CALL).to_zarr(os.path.join(scratch, f"o{w}.zarr"), client=client)
            rate = m * n / (time.perf_counter() - t0) / 1e6
            rows.append(f"| LocalCluster, {w} worker(s), Zarr -> Zarr | {rate:.1f} | {rate / single:.2f} |")
            if w == 2:
                small = np.zeros((64, 64 * 64), np.int32)
                import dask.array as da

                x = da.from_array(small, chunks=(64, 64))  # 64 chunks of 4096 elements
                t0 = time.perf_counter()
                pdask.postprocess(x, **CALL).compute(client=client)
                per_chunk = (time.perf_counter() - t0) / (64 + 1) * 1e3
    print("| run | Melem/s | vs single process |\n| --- | --- | --- |")
    print("\n".join(rows))
    print(f"\nscheduling overhead per chunk (2 workers, 64 chunks of 64x64 + 1 join): {per_chunk:.1f} ms")
    sw = tcvt_sweep("FP16", partition=4096)
    t0 = time.perf_counter()
    r = run_partition(sw, 0x3c00, 0x3c00 + 4096)
    tcvt_rate = r["inputs"] / (time.perf_counter() - t0)
    ps = postprocess_sweep(pre_quant_mode="REQ8", acc_type="S32", quant_param=CALL["quant_param"], sat=True)
    t0 = time.perf_counter()
    r = run_partition(ps, 0, 8192)
    pp_rate = r["inputs"] / (time.perf_counter() - t0)
    print(f"reference engine in a sweep (both engines per input, one core): TCVT {tcvt_rate:,.0f} inputs/s, "
          f"B.FPATR element {pp_rate:,.0f} inputs/s")
    print("\nprojected 2^32-input sweep (linear in cores; partitions are independent):")
    print("| cores | TCVT FP32 one (rmode, Sat) | B.FPATR element, one configuration |\n| --- | --- | --- |")
    for cores in (2, 64, 512, 4096):
        def fmt(rate: float) -> str:
            s = 2**32 / (rate * cores)
            return f"{s / 3600:.1f} h" if s < 172800 else f"{s / 86400:.1f} days"
        print(f"| {cores} | {fmt(tcvt_rate)} | {fmt(pp_rate)} |")
    if not args.dir:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["memory", "bench"])
    ap.add_argument("--rows", type=int, default=16384)
    ap.add_argument("--cols", type=int, default=12288)
    ap.add_argument("--dir", default=None)
    args = ap.parse_args()
    return memory(args) if args.what == "memory" else bench(args)


if __name__ == "__main__":
    sys.exit(main())
