#!/usr/bin/env python3
"""ptonum speed and memory benchmark: ptonum and each anchor, same process, same data.

Run:  python benchmarks/bench.py            (full size, 16M elements; with the kernels compiled a few minutes
                                             on an idle 2-core machine -- the tile rows alone about a minute --
                                             but a first run with an empty numba cache compiles the kernels
                                             first; `ptonum compile` does that ahead of time: about 11 min on
                                             2 idle cores, 2026-12-02, several times that under load)
      python benchmarks/bench.py --quick    (1M elements, a smoke run)
      python benchmarks/bench.py --only tile-instructions
                                            (instructions per element of every tile operation and
                                             RowMax+GroupMax variant, counted by Valgrind's callgrind:
                                             load-independent; ~1.5 min; only when named)

Prints one table: throughput of ptonum and of its anchor (Melem/s, best of
--repeat runs), the ratio ptonum/anchor, and the target from issue 6 /
the design notes; for the tile operations also the ratio to the memory floor
(median of --rounds rounds that each time the operation next to numpy copyto, each side's
best of --inner back-to-back calls a round, with the lowest-highest round and the load average), and the
cost of RowMax+GroupMax (median of --red-rounds such rounds, the call with them next to the call without).  Each
such round starts with a two-thread probe (ThreadProbe: a spin loop in two threads at once over its time in one,
about 1.0 when each thread has a core, 2.0 when the virtual machine runs them on one core's worth); the rows
also give the median probe and the median over the rounds probed at <= 1.3, next to the all-rounds median that
is judged against the target.  Nothing here is a
pass/fail test.  A tile row under 0.7 of the floor always comes with its profile, whatever --only names: the
one-thread compute cost of its call (the tile profile), the instructions per element of its plain call
(callgrind, when Valgrind is installed) and one line saying why it misses (compute-bound or not).
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import sys
import time
import tracemalloc
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np


def best_time(fn: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def best_pair(ours: Callable[[], object], anchor: Callable[[], object], repeat: int) -> Tuple[float, float]:
    """Best-of-``repeat`` times of two calls, interleaved (ours, anchor, ours, ...) so that a
    change in machine load during the run hits both sides alike."""
    t_ours, t_anchor = float("inf"), float("inf")
    for _ in range(repeat):
        t_ours = min(t_ours, best_time(ours, 1))
        t_anchor = min(t_anchor, best_time(anchor, 1))
    return t_ours, t_anchor


def paired_rounds(first: Callable[[], object], second: Callable[[], object], rounds: int, inner: int = 1,
                  probe: Optional["ThreadProbe"] = None, probes: Optional[List[float]] = None
                  ) -> Tuple[List[float], List[float]]:
    """Wall times of ``first`` and ``second`` measured next to each other in each of ``rounds`` rounds
    (order alternating, so neither always runs in the other's wake); the i-th entries of the two
    lists are one round.  A ratio taken per round compares two runs under the same machine load.
    With ``inner`` > 1 a round's time for each side is the best of ``inner`` back-to-back calls:
    on a shared (virtual) machine the noise is one-sided -- a call is delayed when a thread loses
    its core, never sped up -- so the best of a few calls estimates the call's own cost and a single
    preempted call no longer decides a round.  With ``probe``, each round starts with its
    :meth:`ThreadProbe.ratio`, appended to ``probes`` (when it gives one)."""
    t1: List[float] = []
    t2: List[float] = []
    for k in range(rounds):
        if probe is not None and probes is not None:
            r = probe.ratio()
            if r is not None:
                probes.append(r)
        for which in ((0, 1) if k % 2 == 0 else (1, 0)):
            (t1 if which == 0 else t2).append(best_time(first if which == 0 else second, inner))
    return t1, t2


class ThreadProbe:
    """Whether the machine ran two threads side by side just now: a fixed spin loop (no memory) timed inside each of
    two threads started together, the slower thread's time over the same loop's best time on the calling thread
    alone (timed at each probe; the best so far, so that one slow single run does not hide a slow pair).
    About 1.0 when each thread had a core to itself; up to 2.0 when the two took turns on one core's worth of
    time -- as on the shared 2-vCPU machine of stops 44-50, whose host at times ran the guest's two vCPUs at one
    core's throughput for seconds to minutes (docs/performance.md, "Issue 13 at stop 48" and "at stop 50").  Each
    thread times its own loop, so a thread's start-up and wake-up latency is not counted; a spin loop touches no
    memory, so the ratio does not move with the memory traffic of the operation next to it.  ``None`` from
    :meth:`ratio` without numba (the loop is compiled, and releases the GIL)."""

    #: iterations of the spin loop: about 0.8 ms on the Zen 3 of stop 50
    SPIN = 4_000_000

    def __init__(self) -> None:
        self._spin: Optional[Callable[[int], object]] = None
        try:
            import numba
        except ImportError:  # pragma: no cover - the tile rows then ran on numpy
            return

        @numba.njit(nogil=True)
        def spin(n: int) -> int:
            s = np.uint32(1)
            for i in range(n):
                s = np.uint32(s * np.uint32(1664525) + np.uint32(i))
            return s

        spin(10)
        self._spin = spin
        self._one = float("inf")

    def _timed(self, start: Any, out: List[float], k: int) -> None:
        assert self._spin is not None
        start.wait()
        t0 = time.perf_counter()
        self._spin(self.SPIN)
        out[k] = time.perf_counter() - t0

    def ratio(self) -> Optional[float]:
        if self._spin is None:
            return None
        import threading

        t0 = time.perf_counter()
        self._spin(self.SPIN)
        self._one = min(self._one, time.perf_counter() - t0)
        start = threading.Barrier(2)
        out = [0.0, 0.0]
        threads = [threading.Thread(target=self._timed, args=(start, out, k)) for k in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return max(out) / self._one


#: a round whose probe (:class:`ThreadProbe`) is at most this had two threads' worth of machine
PROBE_PARALLEL = 1.3


#: the tables' note on their two probe columns
PROBE_LEGEND = ("probe: the median of the rounds' two-thread probes (about 1.0: each of two threads had a core; up to "
                "2.0: the two shared one core's worth); two-core rounds: how many rounds probed at <= "
                f"{PROBE_PARALLEL}, and the median {{what}} over them (only the all-rounds median is judged)")


def probe_split(probes: List[float], values: List[float]) -> Tuple[float, int, int, float]:
    """A comparison's rounds split by their probe (:class:`ThreadProbe`): (median probe, rounds probed, rounds
    whose probe is at most :data:`PROBE_PARALLEL`, the median of ``values`` -- one a round -- over those rounds).
    NaN / 0 where there is nothing to take (no probe, or no such round)."""
    if len(probes) != len(values) or not probes:
        return float("nan"), 0, 0, float("nan")
    par = [v for p, v in zip(probes, values) if p <= PROBE_PARALLEL]
    return median(probes), len(probes), len(par), (median(par) if par else float("nan"))


def probe_text(par: Tuple[float, int, int, float], fmt: str) -> str:
    """The probe's clause of a comparison's line: ``; two-thread probe 1.04, 39 of 41 rounds <= 1.3: 0.82``."""
    pmed, nprobed, npar, vpar = par
    if not nprobed:
        return ""
    tail = f": {format(vpar, fmt)}" if npar else ""
    return (f"; two-thread probe {pmed:.2f}, {npar} of {nprobed} rounds <= {PROBE_PARALLEL}{tail}")


def warm_up(fn: Callable[[], object], seconds: float) -> None:
    """Call ``fn`` until ``seconds`` have passed (at least twice): thread pool started, pages of the
    recycled outputs faulted in, clocks up -- so the first timed row is not the one paying for them."""
    t_end = time.perf_counter() + seconds
    fn()
    fn()
    while time.perf_counter() < t_end:
        fn()


def median(values: List[float]) -> float:
    v = sorted(values)
    k = len(v) // 2
    return v[k] if len(v) % 2 else 0.5 * (v[k - 1] + v[k])


def peak_mib(fn: Callable[[], object]) -> float:
    """Peak of new allocations (MiB, numpy buffers included) during one call, results included."""
    gc.collect()
    tracemalloc.start()
    try:
        res = fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    del res
    return peak / 2**20


def target_met(ratio: float, target: str) -> str:
    t = target.replace(" ", "")
    if t.startswith(">=") and t.endswith("x"):
        return "yes" if ratio >= float(t[2:-1]) else "NO"
    return "-"


def margin(ratio: float, target: float = 0.7) -> str:
    """``ratio - target`` and the same in % of the target: ``+0.05 (+7%)``, ``-0.09 (-13%)``."""
    return f"{ratio - target:+.2f} ({100 * (ratio / target - 1):+.0f}%)"


def machine_lines() -> List[str]:
    """CPU model, cores, memory and library versions, for the report header."""
    import importlib.metadata as md

    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = ""
    try:
        with open("/proc/meminfo") as fh:
            kb = int(fh.readline().split()[1])
        mem = f", {kb / 2**20:.1f} GiB memory"
    except (OSError, ValueError, IndexError):
        pass
    vers = []
    for pkg in ("ptonum", "numpy", "numba", "ml_dtypes", "en_dtypes"):
        try:
            vers.append(f"{pkg} {md.version(pkg)}")
        except md.PackageNotFoundError:
            vers.append(f"{pkg} (not installed)")
    try:
        from ptonum.kernels import numba_enabled

        kern = "numba kernels on" if numba_enabled() else "numba kernels OFF (numpy fallback)"
    except ImportError:
        kern = "no ptonum.kernels"
    threads = ""
    try:
        import numba

        threads = f", {numba.get_num_threads()} numba threads ({numba.threading_layer() if numba.get_num_threads() else '-'})"
    except Exception:
        pass
    return [f"machine: {model}, {os.cpu_count()} cores{mem}, load average {os.getloadavg()[0]:.2f} at start",
            f"Python {platform.python_version()} ({platform.machine()}), " + ", ".join(vers),
            f"{kern}{threads}"]


def decompose_profile(n: int, repeat: int, rng: np.random.Generator) -> List[str]:
    """Split decompose calls (FP16: arithmetic kernel; E4M3: table kernel) into first-touch page
    faults and the kernel's own pass, and the one-gather anchor the same way (ms, best of ``repeat``)."""
    from ptonum import formats
    from ptonum.kernels import numba_enabled

    if not numba_enabled():
        return ["numba kernels off: no kernel profile"]
    import numba

    from ptonum.kernels import decompose as kd

    def ms(fn: Callable[[], object]) -> str:
        """Best wall time and best process CPU time (all threads) of ``repeat`` runs, in ms."""
        wall, cpu = float("inf"), float("inf")
        for _ in range(repeat):
            gc.collect()
            w0, c0 = time.perf_counter(), time.process_time()
            fn()
            wall, cpu = min(wall, time.perf_counter() - w0), min(cpu, time.process_time() - c0)
        return f"{1e3 * wall:.1f} (cpu {1e3 * cpu:.1f})"

    def touch(nbytes: int) -> None:
        buf = np.empty(nbytes, np.uint8)
        buf[::4096] = 0  # one write per 4 KiB page: the page-fault (kernel zeroing) cost alone

    threads = numba.get_num_threads()
    lines: List[str] = []
    for tname, codes in (("FP16", rng.integers(0, 65536, size=n, dtype=np.uint16)),
                         ("E4M3", rng.integers(0, 256, size=n, dtype=np.uint8))):
        dt = formats.TileDataType[tname]
        formats.decompose(tname, codes[:4096])
        lut = formats._lut(dt, 0)
        cols = (lut.se[:, 0], lut.se[:, 1], lut.flags[:, 0], lut.flags[:, 1])
        ieee = kd._ieee_params((dt, 0), formats.descriptor(dt), *cols)
        outs = kd._outputs(n)
        plain = (np.empty(n, bool), np.empty(n, bool), np.empty(n, np.uint64), np.empty(n, np.int64))
        if ieee is not None:
            kind = "field-arithmetic kernel"
            run = lambda o: kd._kernel_ieee(codes, ieee[0], ieee[1], ieee[2], *o)  # noqa: E731
        else:
            kind = "packed-table kernel"
            table = kd.packed_table((dt, 0), *cols)
            run = lambda o: kd._kernel(codes, table, *o)  # noqa: E731
        run(outs)
        run(plain)  # fault both sets of outputs in once
        lines.append(f"{tname} ({kind}): public call, fresh outputs, {threads} threads: "
                     f"{ms(lambda: formats.decompose(tname, codes))}")
        for t in sorted({1, threads}):
            numba.set_num_threads(t)
            try:
                if t == 1:
                    lines.append(f"{tname}: public call, fresh outputs, 1 thread: "
                                 f"{ms(lambda: formats.decompose(tname, codes))}")
                lines.append(f"{tname}: kernel pass only (outputs already faulted in), {t} thread(s): "
                             f"{ms(lambda: run(outs))}")
                lines.append(f"{tname}: (same pass into numpy-default 16-byte-aligned outputs, {t} thread(s): "
                             f"{ms(lambda: run(plain))})")
            finally:
                numba.set_num_threads(threads)
        lut_one = lut.se[:, 1].copy()
        lines.append(f"{tname}: anchor lut[codes] (int64), fresh output: {ms(lambda: lut_one[codes])}")
        del outs, plain
    lines.append(f"page faults of 18 B/elem fresh outputs ({18 * n / 2**20:.0f} MiB, 1 thread touching): "
                 f"{ms(lambda: touch(18 * n))}")
    lines.append(f"page faults of the anchor's 8 B/elem ({8 * n / 2**20:.0f} MiB): {ms(lambda: touch(8 * n))}")
    fill = [np.ones(n, bool), np.ones(n, bool), np.ones(n, np.uint64), np.ones(n, np.int64)]
    lines.append(f"memset-speed reference: fill 18 B/elem of faulted-in memory: "
                 f"{ms(lambda: [a.fill(1) for a in fill])}")
    return lines


def tile_profile(side: int, repeat: int, only: Optional[Sequence[str]] = None) -> List[Tuple[str, float, float]]:
    """Per tile operation (named as its floor row): one-thread process time per element of the public call
    on L3-resident tiles (the loop's compute cost, little memory traffic), as the slope between a tile of 1M
    elements (256 x ``side`` at full size) and one of half its rows, so that the call's fixed cost (checks, outputs, threads: about 0.1
    ms) drops out; and the one-thread memory floor per element (copyto of the full ``side`` x ``side`` input
    scaled to the operation's bytes).  Process time counts only this process's CPU, so other load on the
    machine barely moves it.  ``only``: the floor rows to profile (default: all)."""
    from ptonum import fpatr
    from ptonum.kernels import numba_enabled

    if not numba_enabled():
        return []
    import numba

    rng = np.random.default_rng(5)
    rows_small = max(256, (1 << 20) // side)  # 1M elements (4 MiB of input): L3-resident, also for --quick's side
    acc = rng.integers(-(1 << 20), 1 << 20, size=(rows_small, side), dtype=np.int32)
    x = (rng.standard_normal(rows_small * side) * 50).astype(np.float32).view(np.uint32).reshape(rows_small, side)
    A = fpatr.FPATRAttributes.from_fields
    words = np.array([fpatr.quant_param(float(s), int(o), mode="VREQ8", rounding="rne")
                      for s, o in zip(rng.uniform(0.5, 2.0, size=side) * 2.0 ** -12,
                                      rng.integers(-20, 20, size=side))], dtype=np.uint64)
    rq = int(fpatr.quant_param(2.0 ** -12, 3, mode="REQ8"))

    def fp32(mode: str, scale: Optional[float] = None) -> Callable[[int], object]:
        kw: Dict[str, Any] = {} if scale is None else {"quant_param": int(fpatr.quant_param(scale, mode=mode))}
        return lambda r: fpatr.postprocess(x[:r], acc_type="FP32", attributes=A(pre_quant_mode=mode), **kw)

    cases: List[Tuple[str, Callable[[int], object], int]] = [
        ("VREQ8 S32->S8 + ReLU + RowMax (tile op)", lambda r: fpatr.postprocess(
            acc[:r], acc_type="S32", attributes=A(pre_quant_mode="VREQ8", relu_mode="RELU", row_max_en=True),
            quant_tile=words, sat=True), 1),
        ("VREQ8 S32->S8 + ReLU (tile op)", lambda r: fpatr.postprocess(
            acc[:r], acc_type="S32", attributes=A(pre_quant_mode="VREQ8", relu_mode="RELU"), quant_tile=words,
            sat=True), 1),
        ("REQ8 S32->S8 (tile op)", lambda r: fpatr.postprocess(acc[:r], acc_type="S32",
                                                               attributes=A(pre_quant_mode="REQ8"), quant_param=rq), 1),
        ("QF322FP8_PRE FP32->E4M3 (tile op)", fp32("QF322FP8_PRE", 1.0), 1),
        ("QF322FP8_PRE FP32->E4M3, scale 1.625 (tile op)", fp32("QF322FP8_PRE", 1.625), 1),
        ("QF322HIF8_PRE FP32->HiF8 (tile op)", fp32("QF322HIF8_PRE", 1.0), 1),
        ("QF322HIF8_PRE FP32->HiF8, scale 1.625 (tile op)", fp32("QF322HIF8_PRE", 1.625), 1),
        ("F322F16 FP32->FP16 typical data (tile op)", fp32("F322F16"), 2),
        ("F322BF16 FP32->BF16 (tile op)", fp32("F322BF16"), 2),
    ]
    if only is not None:
        cases = [c for c in cases if c[0] in only]
        if not cases:
            return []
    big = rng.integers(0, 1 << 32, size=(side, side), dtype=np.uint64).astype(np.uint32)
    big_dst = np.ones_like(big)

    def cpu(fn: Callable[[], object]) -> float:
        fn()
        best = float("inf")
        for _ in range(repeat):
            c0 = time.process_time()
            fn()
            best = min(best, time.process_time() - c0)
        return best

    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    half = rows_small // 2
    try:
        t_copy = cpu(lambda: np.copyto(big_dst, big)) / big.size  # 8 bytes an element
        out = []
        for name, fn, ob in cases:
            slope = (cpu(lambda: fn(rows_small)) - cpu(lambda: fn(half))) / ((rows_small - half) * side)
            out.append((name, 1e9 * slope, 1e9 * t_copy * (4 + ob) / 8))
    finally:
        numba.set_num_threads(threads)
    return out


def instr_key(floor_name: str) -> Tuple[str, str]:
    """The (operation, variant) of :func:`instruction_cases` that counts a floor row's call."""
    name = floor_name.replace(" (tile op)", "").replace(" typical data", "")
    if name.endswith(" + RowMax"):
        return name[:-len(" + RowMax")], "RowMax"
    return name, "plain"


def why_lines(floor_rows: List[Tuple[str, float, float, float, float, float, float, float, float, int, int, float]],
              n: int,
              threads: int, profile: Dict[str, Tuple[float, float]], instr: Dict[Tuple[str, str], float],
              kernels_on: bool = True) -> List[str]:
    """For each floor row under 0.7: where its time goes and why it misses, from the one-thread compute cost
    (:func:`tile_profile`) and the instructions per element (:func:`instruction_profile`) when measured."""
    out = []
    for name, t_op, t_floor, fr, moved, lo, hi, load, pmed, nprobed, npar, frpar in floor_rows:
        if fr >= 0.7:
            continue
        op_ns, floor_ns = 1e6 * t_op / n, 1e6 * t_floor / n
        need = floor_ns / 0.7  # the most ns/elem 0.7 of the floor allows
        parts = [f"{name}: {fr:.2f} of the floor: the call took {op_ns:.3f} ns/elem on {threads} threads; "
                 f"0.7 of the floor needs <= {need:.3f} ns/elem (floor {floor_ns:.3f})"]
        ipe = instr.get(instr_key(name))
        if ipe is not None and not kernels_on:
            parts.append(f"{ipe:.2f} instructions/elem (the numpy engine: numba kernels off)")
        elif ipe is not None:
            parts.append(f"{ipe:.2f} instructions/elem (" + ("a vectorized loop: one element at a time needs 10 or more"
                                                             if ipe < 10 else "as many as one element at a time")
                         + ")")
        prof = profile.get(name)
        if prof is None:
            parts.append("no compute profile (numba kernels off: the numpy engine ran)" if not kernels_on else
                         "no compute profile for this row")
        else:
            c_ns = prof[0]
            lower = c_ns / threads
            if lower > need:
                parts.append(f"compute-bound: one thread needs {c_ns:.3f} ns/elem with no memory traffic (an "
                             f"L3-resident tile), so {threads} threads need at least {lower:.3f}, more than the "
                             f"{need:.3f} allowed: the loop's work per element, not memory, sets the time")
            elif lower > 0.7 * op_ns:
                parts.append(f"mostly compute: one thread needs {c_ns:.3f} ns/elem with no memory traffic, "
                             f"{threads} threads at least {lower:.3f}, {100 * lower / op_ns:.0f}% of the call's time; "
                             "the rest is the DRAM stream and the call's fixed cost")
            else:
                parts.append(f"not compute: one thread needs only {c_ns:.3f} ns/elem with no memory traffic "
                             f"({threads} threads: {lower:.3f}); the time goes to the DRAM stream, the call's fixed cost "
                             f"(checks, outputs, the threads' start and join: about 0.1 ms a call, a large share of a "
                             f"--quick tile's) or other load (load average {load:.2f}; rounds {lo:.2f}-{hi:.2f})")
        if hi >= 0.7 and hi >= 1.3 * fr:
            parts.append(f"its best round reached {hi:.2f} of the floor, {hi / fr:.1f}x its median: the machine's "
                         "speed changed within the row's rounds (on the shared 2-vCPU machine of stop 48: "
                         "stretches of seconds in which two-thread calls take up to their one-thread time and "
                         "one thread's CPU time per element rises up to 1.8x, while the one-thread copyto keeps "
                         "its speed; docs/performance.md, \"Issue 13 at stop 48\"); a profile taken in such a "
                         "stretch is slowed the same way")
        if nprobed:
            if npar < nprobed:
                parts.append(f"the two-thread probe (a spin loop in two threads at once over its time in one) was "
                             f"above {PROBE_PARALLEL} in {nprobed - npar} of {nprobed} rounds (median {pmed:.2f}; 2.0: "
                             "the two threads took turns on one core's worth of time)"
                             + (f"; over the {npar} rounds with two cores' worth the median was {frpar:.2f} of the "
                                "floor" if npar else ""))
            else:
                parts.append(f"the two-thread probe saw two cores' worth in every round (median {pmed:.2f}): "
                             "the machine did not take a thread's core away")
        out.append("; ".join(parts))
    return out


#: the tile the instruction counts run on (rows x columns): 1M elements, so the call's fixed cost (the
#: Python side, about 0.3M instructions) adds about 0.3 instructions an element
INSTR_SHAPE = (256, 4096)
INSTR_CALLS = 2


def _callgrind_request() -> Callable[[int], int]:
    """A Valgrind client request from Python: the amd64 magic instruction sequence (valgrind.h's
    VALGRIND_DO_CLIENT_REQUEST_EXPR) in a function JIT-compiled by llvmlite (numba's own LLVM), so no C
    compiler or valgrind headers are needed.  Outside Valgrind the sequence is a no-op returning 0."""
    import ctypes

    import llvmlite.binding as llvm

    for init in ("initialize_native_target", "initialize_native_asmprinter", "initialize_native_asmparser"):
        getattr(llvm, init)()
    ir = r'''
define i64 @vg_request(i64* %args) {
  %r = call i64 asm sideeffect "rolq $$3, %rdi ; rolq $$13, %rdi ; rolq $$61, %rdi ; rolq $$51, %rdi ; xchgq %rbx, %rbx", "={dx},{ax},0,~{cc},~{memory},~{dirflag},~{fpsr},~{flags}"(i64* %args, i64 0)
  ret i64 %r
}
'''
    mod = llvm.parse_assembly(ir)
    mod.verify()
    engine = llvm.create_mcjit_compiler(mod, llvm.Target.from_default_triple().create_target_machine())
    engine.finalize_object()
    fn = ctypes.CFUNCTYPE(ctypes.c_uint64, ctypes.POINTER(ctypes.c_uint64))(engine.get_function_address("vg_request"))

    def request(code: int) -> int:
        words = (ctypes.c_uint64 * 6)(code, 0, 0, 0, 0, 0)
        return int(fn(words))
    request.keep = (engine, mod, fn)  # type: ignore[attr-defined]  # the JIT code lives as long as request
    return request


def instruction_cases(variants: List[Tuple[int, bool]], keys: Optional[Sequence[Tuple[str, str]]] = None
                      ) -> List[Tuple[str, str, Callable[[], object]]]:
    """(operation, variant, call) for the instruction counts: the tile rows' operations and data on an
    INSTR_SHAPE tile, each plain, with RowMax alone, and with RowMax+GroupMax at every ``variants`` entry;
    ``keys``: only these (operation, variant) pairs."""
    from ptonum import fpatr

    rows, side = INSTR_SHAPE
    rng = np.random.default_rng(13)
    acc = rng.integers(-(1 << 20), 1 << 20, size=(rows, side), dtype=np.int32)
    x = (rng.standard_normal(rows * side) * 50).astype(np.float32).view(np.uint32).reshape(rows, side)
    words = np.array([fpatr.quant_param(float(sc), int(o), mode="VREQ8", rounding="rne")
                      for sc, o in zip(rng.uniform(0.5, 2.0, size=side) * 2.0 ** -12,
                                       rng.integers(-20, 20, size=side))], dtype=np.uint64)
    A = fpatr.FPATRAttributes.from_fields
    ops: List[Tuple[str, Dict[str, Any], Callable[[Any], object]]] = [
        ("VREQ8 S32->S8 + ReLU", {"pre_quant_mode": "VREQ8", "relu_mode": "RELU"},
         lambda a: fpatr.postprocess(acc, acc_type="S32", attributes=a, quant_tile=words, sat=True)),
        ("REQ8 S32->S8", {"pre_quant_mode": "REQ8"},
         lambda a: fpatr.postprocess(acc, acc_type="S32", attributes=a,
                                     quant_param=int(fpatr.quant_param(2.0 ** -12, 3, mode="REQ8")))),
    ]
    for mode, label in (("QF322FP8_PRE", "FP32->E4M3"), ("QF322HIF8_PRE", "FP32->HiF8")):
        for scale in (1.0, 1.625):
            word = int(fpatr.quant_param(scale, mode=mode))
            ops.append((f"{mode} {label}" + (f", scale {scale:g}" if scale != 1.0 else ""), {"pre_quant_mode": mode},
                        lambda a, word=word: fpatr.postprocess(x, acc_type="FP32", attributes=a, quant_param=word)))
    for mode, label in (("F322F16", "FP32->FP16"), ("F322BF16", "FP32->BF16")):
        ops.append((f"{mode} {label}", {"pre_quant_mode": mode},
                    lambda a: fpatr.postprocess(x, acc_type="FP32", attributes=a)))
    cases: List[Tuple[str, str, Callable[[], object]]] = []
    for name, fields, call in ops:
        cases.append((name, "plain", lambda a=A(**fields), call=call: call(a)))
        cases.append((name, "RowMax", lambda a=A(**fields, row_max_en=True), call=call: call(a)))
        for gn, mabs in variants:
            a = A(**fields, row_max_en=True, group_max_en=True, group_n=gn, max_abs_en=mabs)
            cases.append((name, f"GroupN {gn}" + (" + MaxAbsEn" if mabs else ""), lambda a=a, call=call: call(a)))
    if keys is not None:
        cases = [c for c in cases if (c[0], c[1]) in keys]
    return cases


def instruction_child(out_dir: str, variants: List[Tuple[int, bool]],
                      keys: Optional[Sequence[Tuple[str, str]]] = None) -> int:
    """Under callgrind (started with --instr-atstart=no): each case warmed up, then INSTR_CALLS calls
    with instrumentation on between a zeroing and a dump of the counters; one manifest line per dump."""
    request = _callgrind_request()
    base = (ord("C") << 24) | (ord("T") << 16)  # VG_USERREQ_TOOL_BASE('C', 'T'): callgrind's requests
    dump, zero, start, stop = base + 0, base + 1, base + 4, base + 5
    with open(os.path.join(out_dir, "manifest.txt"), "w") as manifest:
        for name, label, call in instruction_cases(variants, keys):
            call()
            call()
            request(start)
            request(zero)
            for _ in range(INSTR_CALLS):
                call()
            request(dump)
            request(stop)
            manifest.write(f"{name}\t{label}\n")
            manifest.flush()
    return 0


def instruction_profile(variants: List[Tuple[int, bool]], keys: Optional[Sequence[Tuple[str, str]]] = None
                        ) -> Tuple[List[Tuple[str, str, float]], str]:
    """Instructions per element of each tile operation and variant (:func:`instruction_cases`; ``keys``: only
    these (operation, variant) pairs), counted by
    Valgrind's callgrind in a child process of this script (one numba thread, kernels forced, the numba
    target of this machine passed on so the kernel cache serves it); ([], why) when callgrind cannot run.
    Counts do not depend on the machine's load: they tell a change in the work from noise."""
    import glob
    import shutil
    import subprocess
    import tempfile

    valgrind = shutil.which("valgrind")
    if valgrind is None:
        return [], "valgrind not found (Debian: apt install valgrind)"
    import llvmlite.binding as llvm
    from numba.core import codegen, config as nconfig

    # Valgrind shows the program its own CPU: numba would detect another target under it and compile
    # every kernel afresh (slowly, instrumented).  This machine's target is passed on instead.
    env = dict(os.environ, NUMBA_NUM_THREADS="1", PTONUM_KERNEL_MIN_ELEMENTS="0")
    env.setdefault("NUMBA_CPU_NAME", getattr(nconfig, "CPU_NAME", None) or llvm.get_host_cpu_name())
    if "NUMBA_CPU_FEATURES" not in env:
        env["NUMBA_CPU_FEATURES"] = getattr(nconfig, "CPU_FEATURES", None) or codegen.get_host_cpu_features()
    groupn = ",".join(f"{g}+maxabs" if m else str(g) for g, m in variants)
    with tempfile.TemporaryDirectory(prefix="ptonum-callgrind-") as tmp:
        cmd = [valgrind, "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={tmp}/cg.%p",
               sys.executable, os.path.abspath(__file__), "--callgrind-child", tmp, "--groupn", groupn or ","]
        if keys is not None:
            cmd += ["--callgrind-keys", ";".join(f"{op}|{label}" for op, label in keys)]
        done = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if done.returncode != 0:
            return [], f"callgrind run failed (exit {done.returncode}): {done.stdout.strip().splitlines()[-1:]}"
        names = [line.rstrip("\n").split("\t") for line in open(os.path.join(tmp, "manifest.txt"))]
        dumps = sorted((f for f in glob.glob(os.path.join(tmp, "cg.*.*")) if f.rsplit(".", 1)[1].isdigit()),
                       key=lambda f: int(f.rsplit(".", 1)[1]))
        if len(dumps) != len(names):
            return [], f"callgrind wrote {len(dumps)} dumps for {len(names)} cases"
        per_elem = INSTR_CALLS * INSTR_SHAPE[0] * INSTR_SHAPE[1]
        out: List[Tuple[str, str, float]] = []
        for (name, label), path in zip(names, dumps):
            total = None
            for line in open(path):
                if line.startswith("totals:"):
                    total = int(line.split()[1])
            if total is None:
                return [], f"no totals line in {path}"
            out.append((name, label, total / per_elem))
    return out, ""


def reference_rates(rev: str, n: int, repeat: int) -> List[Tuple[str, float, float]]:
    """Reference-engine microseconds per element of this tree and of ``rev`` (exported with
    ``git archive`` into a temporary directory), each measured by benchmarks/ref_rate.py in a
    fresh process, alternating the two ``repeat`` times and keeping each case's best."""
    import json
    import subprocess
    import tempfile

    here = os.path.dirname(os.path.abspath(__file__))
    script = os.path.join(here, "ref_rate.py")
    root = os.path.dirname(here)
    best: dict = {"ours": {}, "base": {}}
    with tempfile.TemporaryDirectory(prefix="ptonum-baseline-") as tmp:
        arch = subprocess.run(["git", "-C", root, "archive", rev, "src"], capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=arch, check=True)
        for _ in range(max(1, repeat)):
            for side_name, extra in (("ours", []), ("base", ["--src", os.path.join(tmp, "src")])):
                res = subprocess.run([sys.executable, script, "--n", str(n), "--repeat", "2", *extra],
                                     capture_output=True, text=True, check=True)
                data = json.loads(res.stdout.strip().splitlines()[-1])
                for k, v in data["us_per_element"].items():
                    best[side_name][k] = min(best[side_name].get(k, float("inf")), v)
    rows = [(k, best["ours"][k], best["base"][k]) for k in best["ours"] if k in best["base"]]
    for k, o, b in rows:
        print(f"  {k}: {o:.2f} us/elem, {rev}: {b:.2f} us/elem, {b / o:.1f}x", flush=True)
    return rows


def fp19_word(scale: float) -> int:
    from ptonum import fp19

    bits = int(np.array(scale, dtype=np.float32).view(np.uint32))
    return int(fp19.from_fp32(bits))


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="1M elements instead of 16M")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=41,
                    help="rounds of the floor comparisons (each round: the two calls "
                         "next to each other; the median of the per-round ratios is reported; default "
                         "%(default)s from stop 48, 9 before: 9 rounds took about 0.5 s, so one of this "
                         "virtual machine's slow stretches, in which a two-thread call runs at up to its "
                         "one-thread time while the one-thread copyto does not slow, could hold every round; "
                         "41 take about 2 s, longer than the short stretches, not the ones of tens of seconds)")
    ap.add_argument("--red-rounds", type=int, default=41,
                    help="rounds of each RowMax+GroupMax on-vs-off comparison (default: %(default)s; a round's "
                         "cost spreads by +-20-30%% on this shared machine, so the median needs more rounds "
                         "than the floor's to settle within a few points; 9 until stop 36, 25 until stop 48: "
                         "25 rounds took about 1.3 s, and a slow stretch of the machine -- see --rounds -- "
                         "over most of them put one median at +27%% (its best calls +10%%, the same row +9..+14%% in "
                         "the other runs))")
    ap.add_argument("--inner", type=int, default=3,
                    help="calls per side and round in those comparisons; a round keeps each side's best "
                         "(default: %(default)s; 1 = one call, as before 2026-12-02 afternoon)")
    ap.add_argument("--only", default="", help="comma-separated case names to run")
    ap.add_argument("--groupn", default="128,128+maxabs,32,16,8",
                    help="RowMax+GroupMax variants measured against the plain call in every tile row that has "
                         "them: comma-separated GroupN values, '+maxabs' adds MaxAbsEn (default: %(default)s)")
    ap.add_argument("--baseline-rev", default="d850bfd",
                    help="git revision whose reference engine is measured side by side (default: 0.1.0)")
    ap.add_argument("--ref-n", type=int, default=2048, help="elements per reference-engine case")
    ap.add_argument("--callgrind-child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--callgrind-keys", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    for opt in ("repeat", "rounds", "red_rounds", "inner", "ref_n"):
        if getattr(args, opt) < 1:
            ap.error(f"--{opt.replace('_', '-')}: {getattr(args, opt)} is not a positive count")
    from ptonum.fpatr.attributes import GROUP_N_TABLE

    legal_gn = sorted(g for g in GROUP_N_TABLE if g)
    variants: List[Tuple[int, bool]] = []
    for item in args.groupn.split(","):
        item = item.strip().lower()
        if not item:
            continue
        gn_text, _, extra = item.partition("+")
        if not gn_text.isdigit() or extra not in ("", "maxabs"):
            ap.error(f"--groupn: {item!r} is not a GroupN value optionally followed by '+maxabs'")
        if int(gn_text) not in legal_gn:
            ap.error(f"--groupn: {gn_text} is not a GroupN of B.FPATR (one of {', '.join(map(str, legal_gn))})")
        variants.append((int(gn_text), extra == "maxabs"))
    known = {"vreq8", "e4m3", "hif8", "f16", "bf16", "e8m0", "decompose", "decompose-profile", "memory",
             "tile-profile", "tile-instructions", "reference"}
    unknown = sorted({s.strip() for s in args.only.split(",") if s.strip()} - known)
    if unknown:
        ap.error(f"--only: unknown case name(s) {', '.join(unknown)} (known: {', '.join(sorted(known))})")
    if args.callgrind_child is not None:  # this script re-run under callgrind by instruction_profile
        keys = None if args.callgrind_keys is None else [
            (op, label) for op, _, label in (k.partition("|") for k in args.callgrind_keys.split(";") if k)]
        return instruction_child(args.callgrind_child, variants, keys)

    import ml_dtypes

    import ptonum
    from ptonum import fpatr, formats, tcvt

    side = 1024 if args.quick else 4096
    n = side * side
    rng = np.random.default_rng(2026)
    rows: List[Tuple[str, str, float, float, str, str, str, str]] = []
    # name, op ms, floor ms, median ratio, bytes/elem, lowest and highest round's ratio, load average, then
    # probe_split's four: median probe, rounds probed, rounds with two threads' worth, their median ratio
    floor_rows: List[Tuple[str, float, float, float, float, float, float, float, float, int, int, float]] = []
    # name, variant, plain ms, with RowMax+GroupMax ms (medians), median cost, lowest and highest round's cost,
    # cost of the best calls (best with / best without - 1), load average at the start of the comparison,
    # probe_split's four
    red_rows: List[Tuple[str, str, float, float, float, float, float, float, float, float, int, int, float]] = []
    load_start = machine_lines()
    probe = ThreadProbe()
    only = {s.strip() for s in args.only.split(",") if s.strip()}

    def want(name: str) -> bool:
        return not only or name in only

    def record(name: str, anchor: str, t_ours: float, t_anchor: float, target: str,
               peak_ours: str = "-", peak_anchor: str = "-", floor: str = "-") -> None:
        rows.append((name, anchor, n / t_ours / 1e6, n / t_anchor / 1e6, target, peak_ours, peak_anchor, floor))
        print(f"  {name}: ptonum {n / t_ours / 1e6:8.1f} Melem/s, anchor {n / t_anchor / 1e6:8.1f} Melem/s, "
              f"ratio {t_anchor / t_ours:5.2f}x (target {target})", flush=True)

    def measure(name: str, anchor: str, ours_fn: Callable[[], object], anchor_fn: Callable[[], object],
                target: str) -> None:
        """Interleaved best-of timing plus the peak new memory of one call of each side."""
        t_ours, t_anchor = best_pair(ours_fn, anchor_fn, max(args.repeat, 5))
        record(name, anchor, t_ours, t_anchor, target,
               f"{peak_mib(ours_fn):.0f}", f"{peak_mib(anchor_fn):.0f}")

    def tile_row(name: str, anchor: str, ours_fn: Callable[[], object], anchor_fn: Callable[[], object],
                 target: str, src: np.ndarray, out_bytes: float,
                 reductions: Optional[Callable[[int, bool], Callable[[], object]]] = None) -> None:
        """A tile-operation row: ours vs anchor, and ours vs the memory floor -- numpy copyto of the
        input (already faulted-in destination) scaled from the 8 bytes an element copyto moves to the
        bytes the operation moves (4 read + out_bytes written).  The floor is measured next to the
        operation in each of --rounds rounds (order alternating), so a load change hits both; the
        row reports the median of the per-round ratios and their spread.  With ``reductions`` (given
        GroupN and MaxAbsEn, the same call with RowMax and GroupMax on) their cost too, by the same
        rounds, for every --groupn variant."""
        t_anchor = best_time(anchor_fn, args.repeat)
        dst = np.empty_like(src)
        np.copyto(dst, src)
        warm_up(ours_fn, 0.5)  # outputs recycled, parameter rows made, threads started
        load = os.getloadavg()[0]
        probes: List[float] = []
        t_ops, t_copies = paired_rounds(ours_fn, lambda: np.copyto(dst, src), args.rounds, args.inner,
                                        probe, probes)
        moved = src.itemsize + out_bytes
        scale = moved / (2 * src.itemsize)
        per_round = [c * scale / o for o, c in zip(t_ops, t_copies)]
        ratios = sorted(per_round)
        fr = median(ratios)
        t_op, t_floor = median(t_ops), median(t_copies) * scale
        par = probe_split(probes, per_round)
        floor_rows.append((name, 1e3 * t_op, 1e3 * t_floor, fr, moved, ratios[0], ratios[-1], load) + par)
        record(name, anchor, min(t_ops), t_anchor, target, floor=f"{fr:.2f}")
        print(f"    floor: op {1e3 * t_op:.1f} ms, floor {1e3 * t_floor:.1f} ms ({moved:g} B/elem) "
              f"-> {fr:.2f} of the floor (median of {len(ratios)} rounds, {ratios[0]:.2f}-{ratios[-1]:.2f}; "
              f"target >= 0.7, margin {margin(fr)}; load {load:.2f}){probe_text(par, '.2f')}", flush=True)
        for group_n, max_abs in (variants if reductions is not None else []):
            assert reductions is not None
            red_fn = reductions(group_n, max_abs)
            warm_up(red_fn, 0.2)
            red_load = os.getloadavg()[0]
            red_probes: List[float] = []
            t_plain, t_red = paired_rounds(ours_fn, red_fn, args.red_rounds, args.inner, probe, red_probes)
            per_cost = [r / p - 1 for p, r in zip(t_plain, t_red)]
            costs = sorted(per_cost)
            best_cost = min(t_red) / min(t_plain) - 1
            label = f"GroupN {group_n}" + (" + MaxAbsEn" if max_abs else "")
            rpar = probe_split(red_probes, per_cost)
            red_rows.append((name, label, 1e3 * median(t_plain), 1e3 * median(t_red), median(costs), costs[0],
                             costs[-1], best_cost, red_load) + rpar)
            print(f"    RowMax+GroupMax, {label}: {1e3 * median(t_plain):.1f} -> {1e3 * median(t_red):.1f} ms "
                  f"({100 * median(costs):+.0f}%, rounds {100 * costs[0]:+.0f}%..{100 * costs[-1]:+.0f}%, "
                  f"best calls {100 * best_cost:+.0f}%, target <= +15%; load {red_load:.2f})"
                  f"{probe_text(rpar, '+.0%')}", flush=True)
        del dst

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
        plain_attrs = fpatr.FPATRAttributes.from_fields(pre_quant_mode="VREQ8", relu_mode="RELU")

        def red_attrs(mode: str, group_n: int, max_abs: bool, **extra: Any) -> Any:
            return fpatr.FPATRAttributes.from_fields(pre_quant_mode=mode, row_max_en=True, group_max_en=True,
                                                     group_n=group_n, max_abs_en=max_abs, **extra)

        def vreq8_red(group_n: int, max_abs: bool) -> Callable[[], object]:
            a = red_attrs("VREQ8", group_n, max_abs, relu_mode="RELU")
            return lambda: fpatr.postprocess(acc, acc_type="S32", attributes=a, quant_tile=words, sat=True)

        def req8_red(group_n: int, max_abs: bool) -> Callable[[], object]:
            a = red_attrs("REQ8", group_n, max_abs)
            return lambda: fpatr.postprocess(acc, acc_type="S32", attributes=a, quant_param=rq)

        tile_row("VREQ8 S32->S8 + ReLU + RowMax (tile op)", "numpy clip(rint(acc*scale)+off)",
                 ours, anchor, ">= 1.0x", acc, 1 + 4 / side)
        tile_row("VREQ8 S32->S8 + ReLU (tile op)", "numpy clip(rint(acc*scale)+off)",
                 lambda: fpatr.postprocess(acc, acc_type="S32", attributes=plain_attrs, quant_tile=words, sat=True),
                 anchor, ">= 1.0x", acc, 1,
                 reductions=vreq8_red)
        rq = fpatr.quant_param(2.0 ** -12, 3, mode="REQ8")
        rq = getattr(rq, "word", rq)
        rq_attrs = fpatr.FPATRAttributes.from_fields(pre_quant_mode="REQ8")
        tile_row("REQ8 S32->S8 (tile op)", "numpy clip(rint(acc*scale)+off)",
                 lambda: fpatr.postprocess(acc, acc_type="S32", attributes=rq_attrs, quant_param=rq),
                 lambda: np.clip(np.rint(acc * (2.0 ** -12)) + 3.0, -128, 127).astype(np.int8), ">= 1.0x", acc, 1,
                 reductions=req8_red)
        del acc

    x = (rng.standard_normal(n) * 50).astype(np.float32)  # typical data (issue 13): N(0, 1) x 50
    xbits = x.view(np.uint32).reshape(side, side)

    def fp32_row(name: str, anchor: str, mode: str, anchor_fn: Callable[[], object], target: str,
                 out_bytes: int, qp: Optional[int] = None) -> None:
        kw: Dict[str, Any] = {} if qp is None else {"quant_param": qp}
        a_plain = fpatr.FPATRAttributes.from_fields(pre_quant_mode=mode)

        def reductions(group_n: int, max_abs: bool) -> Callable[[], object]:
            a_red = fpatr.FPATRAttributes.from_fields(pre_quant_mode=mode, row_max_en=True, group_max_en=True,
                                                      group_n=group_n, max_abs_en=max_abs)
            return lambda: fpatr.postprocess(xbits, acc_type="FP32", attributes=a_red, **kw)

        tile_row(name, anchor, lambda: fpatr.postprocess(xbits, acc_type="FP32", attributes=a_plain, **kw),
                 anchor_fn, target, xbits, out_bytes,
                 reductions=reductions)

    # --- QF322FP8_PRE FP32 -> E4M3 and QF322HIF8_PRE FP32 -> HiF8 ---------------------
    # A quantizing scale other than 1 takes the general lane (the exact product rounded to odd);
    # scale 1 with ReluMode NONE takes the unit lane, so both are reported.
    def fp8_rows(case: str, mode: str, label: str, anchor: str, dtype: Any) -> None:
        print(f"{case} ...", flush=True)
        for scale in (1.0, 1.625):
            word = fpatr.quant_param(scale, mode=mode)
            word = getattr(word, "word", word)
            if scale == 1.0:
                fp32_row(f"{mode} {label} (tile op)", anchor, mode, lambda: x.astype(dtype), ">= 1.0x", 1, word)
            else:
                def scaled(s: Any = np.float32(scale)) -> object:
                    return (x * s).astype(dtype)

                fp32_row(f"{mode} {label}, scale {scale:g} (tile op)", f"{anchor} of x*{scale:g}", mode, scaled,
                         ">= 1.0x", 1, word)

    if want("e4m3"):
        fp8_rows("e4m3", "QF322FP8_PRE", "FP32->E4M3", "ml_dtypes astype(float8_e4m3fn)", ml_dtypes.float8_e4m3fn)
    if want("hif8"):
        try:
            import en_dtypes
        except ImportError:
            print("  en_dtypes not installed: the HiF8 rows are skipped, ptonum's with their anchor (pip install "
                  "en-dtypes, or the package's [test] extra)")
        else:
            fp8_rows("hif8", "QF322HIF8_PRE", "FP32->HiF8", "en_dtypes astype(hifloat8)", en_dtypes.hifloat8)

    # --- F322F16 on wide-range data ---------------------------------------------------
    if want("f16"):
        wide = (rng.choice([-1.0, 1.0], size=n) * 2.0 ** rng.uniform(-30, 20, size=n)).astype(np.float32)
        wbits = wide.view(np.uint32).reshape(side, side)
        attrs = fpatr.FPATRAttributes.from_fields(pre_quant_mode="F322F16")
        print("f16 ...", flush=True)
        fp32_row("F322F16 FP32->FP16 typical data (tile op)", "numpy astype(float16)", "F322F16",
                 lambda: x.astype(np.float16), ">= 1.0x", 2)
        with np.errstate(over="ignore"):
            record("F322F16 FP32->FP16 wide range (tile op)", "numpy astype(float16)",
                   best_time(lambda: fpatr.postprocess(wbits, acc_type="FP32", attributes=attrs), args.repeat),
                   best_time(lambda: wide.astype(np.float16), args.repeat), ">= 1.0x")
        del wide, wbits

    # --- F322BF16 ---------------------------------------------------------------------
    if want("bf16"):
        attrs = fpatr.FPATRAttributes.from_fields(pre_quant_mode="F322BF16")
        print("bf16 ...", flush=True)
        fp32_row("F322BF16 FP32->BF16 (tile op)", "ml_dtypes astype(bfloat16)", "F322BF16",
                 lambda: x.astype(ml_dtypes.bfloat16), ">= 0.5x", 2)

    # --- TCVT FP32 -> E8M0: three realistic inputs -------------------------------------
    if want("e8m0"):
        e8_inputs = {
            "mixed sign": x,
            "positive": np.abs(x) + np.float32(1e-3),
            "powers of two": np.ldexp(np.float32(1.0), rng.integers(-126, 127, size=n)).astype(np.float32),
        }
        tcvt.to_e8m0_values(x[:4096], rmode="RNE")  # compile/load the kernel, build the tables
        print("e8m0 ...", flush=True)
        for label, vals in e8_inputs.items():
            vbits = vals.view(np.uint32)
            measure(f"TCVT FP32->E8M0 to_e8m0_values, {label}", "ml_dtypes astype(float8_e8m0fnu)",
                    lambda: tcvt.to_e8m0_values(vals, rmode="RNE"),
                    lambda: vals.astype(ml_dtypes.float8_e8m0fnu), ">= 1.0x")
            measure(f"TCVT FP32->E8M0 to_e8m0 (bits), {label}", "ml_dtypes astype(float8_e8m0fnu)",
                    lambda: tcvt.to_e8m0(vbits, src_type="FP32", rmode="RNE"),
                    lambda: vals.astype(ml_dtypes.float8_e8m0fnu), ">= 1.0x")
        del e8_inputs, vals, vbits

    # --- decompose 8-bit and 16-bit types -----------------------------------------------
    if want("decompose"):
        c8 = rng.integers(0, 256, size=n, dtype=np.uint8)
        c16 = rng.integers(0, 65536, size=n, dtype=np.uint16)
        print("decompose ...", flush=True)
        for tname, codes in (("E4M3", c8), ("HiF8", c8), ("FP16", c16), ("BF16", c16)):
            # Anchors: plain numpy LUT gathers with the real decomposition of every code.
            # (a) one gather from an int64 LUT -- a lower bound on any table decode of one array;
            # (b) four gathers from LUTs of the four output dtypes (bool, bool, uint64, int64) --
            #     what a plain LUT decode of the same four arrays costs.
            ref = formats.decompose(tname, np.arange(1 << formats.carrier_bits(tname)), engine="reference")
            lut_avail, lut_neg, lut_sig, lut_exp = (np.ascontiguousarray(a) for a in ref)
            lut_one = lut_exp.astype(np.int64)
            formats.decompose(tname, codes[:4096])  # compile/load the kernel, pack the table
            bits = formats.carrier_bits(tname)

            def four(codes: np.ndarray = codes) -> object:
                return lut_avail[codes], lut_neg[codes], lut_sig[codes], lut_exp[codes]

            measure(f"decompose {tname} ({bits}-bit)", "1 gather lut[codes] (int64 LUT)",
                    lambda: formats.decompose(tname, codes), lambda: lut_one[codes], ">= 0.8x")
            measure(f"decompose {tname} ({bits}-bit)", "4 gathers: bool, bool, uint64, int64 LUTs",
                    lambda: formats.decompose(tname, codes), four, ">= 0.8x")
        del c8, c16

    # --- where decompose's time goes (FP16 and E4M3, the same n) ----------------------
    profile_lines: List[str] = []
    if want("decompose-profile"):
        print("decompose profile ...", flush=True)
        profile_lines = decompose_profile(n, max(args.repeat, 5), rng)
        for line in profile_lines:
            print("  " + line, flush=True)

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

    # --- where the tile operation's time goes: 1-thread compute vs memory floor -------
    # (every tile row in a full run or with --only tile-profile; otherwise the rows under 0.7 of the floor, so
    # that a miss always comes with its profile)
    missed = [row[0] for row in floor_rows if row[3] < 0.7]
    profile_rows: List[Tuple[str, float, float]] = []
    if want("tile-profile") or missed:
        print("tile profile ..." if want("tile-profile") else
              f"tile profile of the {len(missed)} row(s) under 0.7 of the floor ...", flush=True)
        profile_rows = tile_profile(side, max(args.repeat, 5), None if want("tile-profile") else missed)
        if not profile_rows:
            print("  numba kernels off: no tile profile (it times the compiled kernels)", flush=True)
        for name, c_ns, f_ns in profile_rows:
            print(f"  {name}: compute {c_ns:.2f} ns/elem, floor {f_ns:.2f} ns/elem (1 thread)", flush=True)

    # --- instructions per element under callgrind (when asked for by name; the plain call of each row under
    # 0.7 of the floor otherwise) ---------------------------------------------------------------------------
    instr_rows: List[Tuple[str, str, float]] = []
    instr_why = ""
    if "tile-instructions" in only:
        print("tile instructions (callgrind, a few minutes) ...", flush=True)
        instr_rows, instr_why = instruction_profile(variants)
    elif missed:
        print(f"tile instructions of the {len(missed)} row(s) under 0.7 of the floor (callgrind, about a "
              "minute) ...", flush=True)
        instr_rows, instr_why = instruction_profile([], [instr_key(m) for m in missed])
    if instr_why:
        print(f"  tile instructions skipped: {instr_why}", flush=True)
    try:
        import numba
        threads = numba.get_num_threads()
    except ImportError:  # pragma: no cover - the tile rows then ran on numpy
        threads = 1
    from ptonum.kernels import numba_enabled

    kernels_on = numba_enabled()
    why = why_lines(floor_rows, n, threads, {name: (c, f) for name, c, f in profile_rows},
                    {(name, label): ipe for name, label, ipe in instr_rows}, kernels_on)

    # --- reference engine per element, this tree vs a baseline revision -----------------
    ref_rows: List[Tuple[str, float, float]] = []
    ref_base = args.baseline_rev
    ref_n = args.ref_n
    if want("reference"):
        print(f"reference engine vs {ref_base} ...", flush=True)
        ref_rows = reference_rates(args.baseline_rev, args.ref_n, args.repeat)

    print()
    for line in load_start:
        print(line)
    print(f"n = {n} elements per case; best of max(--repeat, 5) interleaved runs for the rows with a peak column, "
          f"best of the {args.rounds} floor rounds for ptonum in the tile rows (anchors: --repeat {args.repeat}); "
          f"load average {os.getloadavg()[0]:.2f} at the end")
    print()
    print("| operation | anchor | ptonum Melem/s | anchor Melem/s | ratio | target | met | of floor (>= 0.7) "
          "| ptonum peak MiB | anchor peak MiB |")
    print("| --- | --- | ---: | ---: | ---: | --- | --- | ---: | ---: | ---: |")
    for name, anchor_name, ours_t, anchor_t, target, p_ours, p_anchor, floor in rows:
        ratio = ours_t / anchor_t
        print(f"| {name} | {anchor_name} | {ours_t:.1f} | {anchor_t:.1f} | {ratio:.2f}x | {target} | "
              f"{target_met(ratio, target)} | {floor} | {p_ours} | {p_anchor} |")
    if floor_rows:
        print()
        print(f"memory floor (numpy copyto of the input, scaled to the bytes moved), measured next to the operation "
              f"in each of {args.rounds} rounds (a round: each side's best of {args.inner} back-to-back calls): median ms, median of the per-round ratios, lowest-highest round:")
        print("| operation | B/elem | op ms | floor ms | of floor | rounds min-max | met (>= 0.7) | margin to 0.7 "
              "| load | probe | two-core rounds: of floor |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: |")
        for name, t_op, t_floor, fr, moved, lo, hi, load, pmed, nprobed, npar, frpar in floor_rows:
            print(f"| {name} | {moved:.3g} | {t_op:.1f} | {t_floor:.1f} | {fr:.2f} | {lo:.2f}-{hi:.2f} "
                  f"| {'yes' if fr >= 0.7 else 'NO'} | {margin(fr)} | {load:.2f} "
                  f"| {f'{pmed:.2f}' if nprobed else '-'} | {f'{npar}/{nprobed}: {frpar:.2f}' if npar else '-'} |")
        print("margin: of floor - 0.7, and in % of 0.7; load: the 1-minute load average when the row started "
              "(other processes on this 2-core machine slow the 2-thread operation more than the 1-thread "
              "copyto, so a ratio measured at load >= 1 is low and its rounds spread)")
        if any(row[9] for row in floor_rows):
            print(PROBE_LEGEND.format(what="ratio"))
        if why:
            print()
            print("why the rows under 0.7 of the floor miss (one-thread compute cost from the tile profile, "
                  "instructions per element from callgrind):")
            for line in why:
                print(f"- {line}")
    if red_rows:
        print()
        print(f"RowMax + GroupMax on vs off, same call otherwise ({args.red_rounds} paired rounds per variant, "
              f"each side's best of {args.inner} back-to-back calls a round; "
              "median ms and median of the per-round costs (judged against the target); 'best calls': the "
              "fastest call with over the fastest without, for comparison; GroupMaxOut adds 4 B per GroupN "
              "elements to the bytes moved, e.g. +10% of an S32->S8 or FP32->FP8 call's at GroupN 8):")
        print("| operation | variant | without ms | with ms | cost | rounds min-max | best calls | met (<= +15%) "
              "| load | probe | two-core rounds: cost |")
        print("| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |")
        for name, label, t_plain, t_red, cost, lo, hi, best_cost, red_load, pmed, nprobed, npar, cpar in red_rows:
            print(f"| {name} | {label} | {t_plain:.1f} | {t_red:.1f} | {100 * cost:+.0f}% "
                  f"| {100 * lo:+.0f}%..{100 * hi:+.0f}% | {100 * best_cost:+.0f}% "
                  f"| {'yes' if cost <= 0.15 else 'NO'} | {red_load:.2f} "
                  f"| {f'{pmed:.2f}' if nprobed else '-'} | {f'{npar}/{nprobed}: {100 * cpar:+.0f}%' if npar else '-'} |")
        if any(row[10] for row in red_rows):
            print(PROBE_LEGEND.format(what="cost"))
    if profile_rows:
        print()
        print("where the time goes: one-thread CPU time per element (process time, insensitive to other load), "
              "compute on L3-resident tiles (the slope from half to all the rows of a 1M-element tile: the call's "
              "fixed cost left out) vs the memory floor per element on the full tile:")
        print("| operation | compute ns/elem (1 thread) | floor ns/elem (1 thread) | compute / floor | bound by |")
        print("| --- | ---: | ---: | ---: | --- |")
        for name, c_ns, f_ns in profile_rows:
            print(f"| {name} | {c_ns:.2f} | {f_ns:.2f} | {c_ns / f_ns:.2f} | "
                  f"{'compute (the loop, not memory, sets the time)' if c_ns > f_ns else 'memory'} |")
    if instr_rows:
        print()
        print(f"instructions per element (callgrind, "
              f"{'one numba thread, kernels forced' if kernels_on else 'the numpy engine: numba kernels off'}, "
              f"a {INSTR_SHAPE[0]}x"
              f"{INSTR_SHAPE[1]} tile of the tile rows' data, {INSTR_CALLS} calls; the public call's fixed cost "
              "included, about 0.3 an element): counts do not move with the machine's load, so a variant's "
              "extra instructions show what RowMax+GroupMax adds to the work; a loop that handles one element "
              "at a time needs 10 or more an element, the vectorized loops here 8-32 elements a step:")
        print("| operation | variant | instructions/elem | vs plain |")
        print("| --- | --- | ---: | ---: |")
        plain_of: Dict[str, float] = {}
        for name, label, ipe in instr_rows:
            if label == "plain":
                plain_of[name] = ipe
            base_ipe = plain_of.get(name)
            vs = "-" if label == "plain" or not base_ipe else f"{100 * (ipe / base_ipe - 1):+.0f}%"
            print(f"| {name} | {label} | {ipe:.2f} | {vs} |")
    if ref_rows:
        print()
        print(f"reference engine, microseconds per element (process time, best of {args.repeat} alternated runs, "
              f"{ref_n} elements of typical data; ptonum {ref_base} exported with git archive):")
        print(f"| operation | this tree us/elem | {ref_base} us/elem | speed-up | met (>= 5x) |")
        print("| --- | ---: | ---: | ---: | --- |")
        for name, ours_us, base_us in ref_rows:
            sp = base_us / ours_us
            print(f"| {name} | {ours_us:.2f} | {base_us:.2f} | {sp:.1f}x | {'yes' if sp >= 5 else 'NO'} |")
    if profile_lines:
        print()
        print("decompose profile (ms per call: best wall time, and best process CPU time summed over threads):")
        for line in profile_lines:
            print("  " + line)
    if mem_line:
        print()
        print(mem_line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
