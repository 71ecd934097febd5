"""Vector generation (``ptonum gen``), TestFloat style.

Each operation gets boundary patterns first -- zeros, subnormal and normal
edges, infinities, quiet and signalling NaNs, saturation and wrap boundaries,
exact ties for every rounding mode, offset extremes, every scale class -- then
weighted random cases until ``count`` rows.  Inputs are built from bit layouts
(and, for B.FPATR parameter words, the model's own word builders so every word
is legal for its mode); the expected columns are computed by the model's
*reference* engine through the same schema ``ptonum check`` uses.  The same
seed and options give a byte-identical file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .._util import int_text
from ..errors import UsageError
from ..formats import TileDataType, parse_data_type
from ..rounding import RoundingMode, parse_rounding_mode
from .schema import Batch, Schema, schema_for, write_rows

__all__ = ["Filters", "boundary_count", "generate", "generate_inputs", "write_vectors", "FP32_SPECIALS", "SCALE_CLASSES"]

ALL_RMODES = tuple(m for m in RoundingMode if m is not RoundingMode.NONE)


@dataclass
class Filters:
    """Restrict generation (each empty tuple means "all")."""

    mode: Tuple[int, ...] = ()
    relu: Tuple[int, ...] = ()
    rmode: Tuple[int, ...] = ()
    sat: Tuple[int, ...] = ()
    acc_type: Tuple[int, ...] = ()
    src_type: Tuple[int, ...] = ()
    data_type: Tuple[int, ...] = ()

    @classmethod
    def parse(cls, *, mode: Sequence[str] = (), relu: Sequence[str] = (), rmode: Sequence[str] = (),
              sat: Sequence[str] = (), acc_type: Sequence[str] = (), src_type: Sequence[str] = (),
              data_type: Sequence[str] = ()) -> "Filters":
        from ..fpatr import parse_pre_quant_mode, parse_relu_mode

        def ints(vals: Sequence[str], fn, name: str) -> Tuple[int, ...]:  # type: ignore[no-untyped-def]
            out = []
            for v in vals:
                s = str(v).strip()
                out.append(int(fn(int_text(s) if _is_intlike(s) else s, name)))
            return tuple(out)

        sats = []
        for s in sat:
            if str(s).strip() not in ("0", "1"):
                raise UsageError(f"--sat = {s!r}: expected 0 or 1")
            sats.append(int(s))
        return cls(
            mode=ints(mode, parse_pre_quant_mode, "--mode"),
            relu=ints(relu, parse_relu_mode, "--relu"),
            rmode=ints(rmode, parse_rounding_mode, "--rmode"),
            sat=tuple(sats),
            acc_type=ints(acc_type, parse_data_type, "--acc-type"),
            src_type=ints(src_type, parse_data_type, "--src-type"),
            data_type=ints(data_type, parse_data_type, "--data-type"),
        )


    def given(self) -> List[str]:
        """The filter fields that are set (restrict something), in declaration order."""
        return [f for f in FILTER_FIELDS if getattr(self, f)]

    def check_applies(self, op: str) -> None:
        """Refuse filters that ``op`` does not use (they would be silently ignored).

        Raises :class:`UsageError` naming the option and the ones ``op`` takes."""
        allowed = APPLICABLE_FILTERS[op]
        for f in self.given():
            if f not in allowed:
                takes = (", ".join("--" + a.replace("_", "-") for a in allowed) if allowed else "no filter")
                raise UsageError(f"--{f.replace('_', '-')} does not apply to {op} (it takes {takes})")


#: the Filters fields, in the order of the gen options
FILTER_FIELDS: Tuple[str, ...] = ("mode", "relu", "rmode", "sat", "acc_type", "src_type", "data_type")

#: operation -> the filters its generator uses
APPLICABLE_FILTERS: Dict[str, Tuple[str, ...]] = {
    "postprocess_element": ("mode", "relu", "rmode", "sat", "acc_type"),
    "reduction_step": ("acc_type",),
    "tcvt_e8m0": ("src_type", "rmode", "sat"),
    "decomposition": ("data_type",),
    "fp32_to_fp19": (),
    "quant_param_legal": ("mode",),
    "relu_param_legal": (),
}


def _is_intlike(s: str) -> bool:
    try:
        int_text(s)
        return True
    except ValueError:
        return False


def _keep(values: Sequence[int], allowed: Tuple[int, ...]) -> List[int]:
    return [int(v) for v in values if not allowed or int(v) in allowed]


# --------------------------------------------------------------------------
# Bit patterns
# --------------------------------------------------------------------------

#: FP32 boundary encodings: zeros, subnormal and normal edges, infinities,
#: quiet and signalling NaNs of both signs, and a few ordinary values.
FP32_SPECIALS: Tuple[int, ...] = (
    0x00000000, 0x80000000,  # +-0
    0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF,  # subnormal edges
    0x00800000, 0x80800000, 0x7F7FFFFF, 0xFF7FFFFF,  # normal edges
    0x7F800000, 0xFF800000,  # +-Inf
    0x7FC00000, 0xFFC00001, 0x7FFFFFFF,  # quiet NaNs
    0x7F800001, 0xFFA00000, 0x7FBFFFFF,  # signalling NaNs
    0x3F800000, 0xBF800000, 0x3F000000, 0xBF400000,  # 1, -1, 0.5, -0.75
)
S32_SPECIALS: Tuple[int, ...] = (0, 1, 0xFFFFFFFF, 2, 0xFFFFFFFE, 0x7FFFFFFF, 0x80000000, 0x80000001,
                                 127, 128, 0xFFFFFF80, 0xFFFFFF7F)
U32_SPECIALS: Tuple[int, ...] = (0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF)

#: FP19 scale classes (positive normal): min normal, max normal, 1, 0.5, 2, 1.5, an arbitrary mantissa.
SCALE_CLASSES: Dict[str, int] = {
    "min_normal": 0x00400, "max_normal": 0x3FBFF, "one": 0x1FC00, "half": 0x1F800,
    "two": 0x20000, "one_and_half": 0x1FE00, "odd_mantissa": 0x1F955,
}
#: FP19 activation-parameter classes (+0 or positive normal).
ALPHA_CLASSES: Dict[str, int] = {
    "zero": 0x00000, "min_normal": 0x00400, "max_normal": 0x3FBFF, "three_quarters": 0x1FA00,
    "half": 0x1F800, "one": 0x1FC00,
}

_FP19_ONE = 0x1FC00
_FP19_HALF = 0x1F800
_FP19_ONE_HALF = 0x1FE00
_FP19_ALPHA = 0x1FA00  # 0.75


def _f32(x: float) -> int:
    return int(np.array(x, dtype=np.float32).view(np.uint32))


def _s32(v: int) -> int:
    return v & 0xFFFFFFFF


# --------------------------------------------------------------------------
# postprocess_element
# --------------------------------------------------------------------------


@dataclass
class _Rows:
    cols: Dict[str, List[int]] = field(default_factory=dict)

    def add(self, **kw: int) -> None:
        for k, v in kw.items():
            self.cols.setdefault(k, []).append(int(v))

    def __len__(self) -> int:
        return len(next(iter(self.cols.values()))) if self.cols else 0

    def arrays(self, names: Sequence[str], signed: Sequence[str] = ()) -> Batch:
        out: Batch = {}
        for n in names:
            vals = self.cols.get(n, [])
            out[n] = np.array(vals, dtype=np.int64 if n in signed else np.uint64)
        return out


def _tie_values(dst: TileDataType, acc: TileDataType) -> List[Tuple[int, int]]:
    """(acc_bits, scale FP19) pairs whose scaled value is an exact midpoint of the destination grid."""
    if acc is TileDataType.S32:
        if dst in (TileDataType.S8, TileDataType.S16, TileDataType.S4X2, TileDataType.S32):
            return [(_s32(v), _FP19_HALF) for v in (1, 3, 5, -1, -3, -5)]
        if dst is TileDataType.FP16:
            return [(_s32(v), _FP19_ONE) for v in (2049, 2051, -2049, -2051)]
        if dst is TileDataType.BF16:
            return [(_s32(v), _FP19_ONE) for v in (257, 259, -257, -259)]
        return []
    if dst in (TileDataType.S8, TileDataType.S16, TileDataType.S4X2, TileDataType.S32):
        return [(_f32(v), _FP19_ONE) for v in (0.5, 1.5, 2.5, -0.5, -1.5, -2.5)]
    if dst is TileDataType.FP16:
        return [(_f32(v), _FP19_ONE) for v in (1 + 2**-11, 1 + 3 * 2**-11, -(1 + 2**-11), -(1 + 3 * 2**-11))]
    if dst is TileDataType.BF16:
        return [(_f32(v), _FP19_ONE) for v in (1 + 2**-8, 1 + 3 * 2**-8, -(1 + 2**-8), -(1 + 3 * 2**-8))]
    if dst in (TileDataType.E4M3, TileDataType.HiF8):
        return [(_f32(v), _FP19_ONE) for v in (1 + 2**-4, 1 + 3 * 2**-4, -(1 + 2**-4), -(1 + 3 * 2**-4))]
    if dst is TileDataType.FP32:  # odd significand x 1.5: 1.5 ulp = a midpoint
        return [(b, _FP19_ONE_HALF) for b in (0x3F800001, 0x3F800003, 0xBF800001, 0xBF800003)]
    return []


def _sat_values(dst: TileDataType, acc: TileDataType, offset_width: int) -> List[int]:
    """Accumulator encodings at the intermediate and destination saturation/wrap edges (scale 1)."""
    edges: List[int] = []
    if offset_width:
        m = 1 << (offset_width - 1)
        edges += [m - 1, m, -m, -m - 1]
    lim = {TileDataType.S8: 128, TileDataType.S16: 32768, TileDataType.S4X2: 8}.get(dst)
    if lim:
        edges += [lim - 1, lim, -lim, -lim - 1]
    if acc is TileDataType.S32:
        out = [_s32(v) for v in edges]
        if dst is TileDataType.FP16:
            out += [65504, 65519, 65520, _s32(-65520)]
        if dst is TileDataType.BF16:
            out += [0x7FFFFFFF, 0x80000000]
        return out
    out = [_f32(float(v)) for v in edges]
    extra = {
        TileDataType.FP16: (65504.0, 65519.0, 65520.0, -65520.0, 2.0**-24, 2.0**-25, 3 * 2.0**-26, 2.0**-14 - 2.0**-25),
        TileDataType.BF16: (2.0**-133, 2.0**-134, 2.0**-126 - 2.0**-134),
        TileDataType.E4M3: (448.0, 449.0, 464.0, -464.0, 2.0**-9, 2.0**-10, 2.0**-6 - 2.0**-10),
        TileDataType.HiF8: (32768.0, 32769.0, -40000.0, 2.0**-22, 2.0**-23, 2.0**-15),
        TileDataType.FP32: (),
    }.get(dst, ())
    out += [_f32(v) for v in extra]
    if dst is TileDataType.FP32:
        out += [0x7F7FFFFF, 0xFF7FFFFF, 0x00000003, 0x80000003]
    return out


def _pp_inputs(count: Optional[int], rng: np.random.Generator, flt: Filters) -> Batch:
    from ..fpatr import MODE_TABLE, output_type, quant_param_word, relu_param_word, shift_param_word

    rows = _Rows()
    combos: List[Tuple[int, TileDataType, TileDataType, int, List[int], List[int]]] = []
    for code in sorted(MODE_TABLE):
        info = MODE_TABLE[code]
        if flt.mode and code not in flt.mode:
            continue
        for acc in info.accumulator_types:
            if flt.acc_type and int(acc) not in flt.acc_type:
                continue
            rmodes = [int(m) for m in ALL_RMODES] if info.rmode_programmable else [int(RoundingMode.RNE)]
            rmodes = _keep(rmodes, flt.rmode)
            sats = _keep([0, 1] if info.sat_programmable else [0], flt.sat)
            if not rmodes or not sats:
                continue
            combos.append((code, acc, output_type(code, acc), info.offset_width, rmodes, sats))
    relus_all = _keep([0, 1, 2, 3], flt.relu)
    if not combos or not relus_all:
        raise UsageError("gen postprocess_element: the filters select no legal (mode, acc_type, rmode, sat, relu)")

    def qword(code: int, scale: int, offset: int = 0, shift: Optional[int] = None) -> int:
        info = MODE_TABLE[code]
        if info.is_shift:
            return int(shift_param_word(0 if shift is None else shift))
        if not info.has_parameter:
            return 0
        return int(quant_param_word(scale, offset if info.offset_width else 0, mode=code))

    def rword(relu: int, alpha: int) -> int:
        return int(relu_param_word(alpha)) if relu in (2, 3) else 0

    k = 0  # cycling counter for the dimensions a case does not enumerate
    for code, acc, dst, ow, rmodes, sats in combos:
        info = MODE_TABLE[code]

        def emit(acc_bits: int, scale: int = _FP19_ONE, offset: int = 0, relu: Optional[int] = None,
                 rmode: Optional[int] = None, sat: Optional[int] = None, alpha: int = _FP19_ALPHA,
                 shift: Optional[int] = None) -> None:
            nonlocal k
            r = relus_all[k % len(relus_all)] if relu is None else relu
            m = rmodes[(k // len(relus_all)) % len(rmodes)] if rmode is None else rmode
            s = sats[(k // 3) % len(sats)] if sat is None else sat
            k += 1
            rows.add(pre_quant_mode=code, relu_mode=r, acc_type=int(acc), dst_type=int(dst), acc_bits=acc_bits,
                     quant_param=qword(code, scale, offset, shift), relu_param=rword(r, alpha), rmode=m, sat=s)

        specials = {TileDataType.FP32: FP32_SPECIALS, TileDataType.S32: S32_SPECIALS,
                    TileDataType.U32: U32_SPECIALS}[acc]
        # 1. special and edge inputs: every Sat value x every ReluMode
        for a in specials:
            for s in sats:
                for r in relus_all:
                    emit(a, relu=r, sat=s)
        if info.is_shift:
            # shift codes 0..15 at the S16 saturation edge
            for code4 in range(16):
                sh = code4 + 1
                for v in (32767 << sh, (32768 << sh) if sh < 16 else 0x7FFFFFFF, -(32768 << sh), -(32769 << sh)):
                    emit(_s32(max(min(v, 0x7FFFFFFF), -0x80000000)), shift=code4)
            continue
        # 2. exact ties, each rounding mode
        for a, sc in _tie_values(dst, acc):
            for m in rmodes:
                emit(a, scale=sc, rmode=m, relu=0 if (a >> 31) == 0 or acc is TileDataType.U32 else None)
        if code == 0:
            # mode 0 with an activation: the alpha product can tie too
            if acc is TileDataType.S32:
                for a in (_s32(-1), _s32(-3)):
                    emit(a, relu=2, alpha=_FP19_HALF)
            elif acc is TileDataType.FP32:
                for a in (0xBF800001, 0xBF800003):
                    emit(a, relu=2, alpha=_FP19_ALPHA)
            continue
        # 3. saturation / wrap edges with offset extremes, both Sat values
        offsets = [0]
        if ow:
            offsets = [-(1 << (ow - 1)), 0, (1 << (ow - 1)) - 1]
        for a in _sat_values(dst, acc, ow):
            for off in offsets:
                for s in sats:
                    emit(a, offset=off, sat=s, relu=0)
        if not info.has_parameter:
            continue
        # 4. every scale class
        probe = ([_s32(v) for v in (1, 100, -7, 0x7FFFFFFF)] if acc is TileDataType.S32
                 else [_f32(v) for v in (1.0, 100.0, -7.0)] + [0x7F7FFFFF, 0x00800000])
        for sc in SCALE_CLASSES.values():
            for a in probe:
                emit(a, scale=sc)
        # 5. activation-parameter classes on negative inputs
        neg = [_s32(-3), _s32(-1000)] if acc is TileDataType.S32 else [_f32(-3.0), 0xFF7FFFFF, 0x80000000, 0xFF800000]
        for al in ALPHA_CLASSES.values():
            for r in [x for x in (2, 3) if x in relus_all]:
                for a in neg:
                    emit(a, relu=r, alpha=al)

    boundary = len(rows)
    if count is None:
        return rows.arrays(list(rows.cols))
    if count < boundary:
        keep = np.sort(rng.choice(boundary, size=count, replace=False))
        arrays = rows.arrays(list(rows.cols))
        return {kk: v[keep] for kk, v in arrays.items()}
    # random cases
    n = count - boundary
    ci = rng.integers(0, len(combos), size=n)
    kind = rng.random(n)
    for j in range(n):
        code, acc, dst, ow, rmodes, sats = combos[int(ci[j])]
        info = MODE_TABLE[code]
        if acc is TileDataType.FP32:
            if kind[j] < 0.5:
                a = int(rng.integers(0, 1 << 32))
            else:  # exponents near the destination range
                a = (int(rng.integers(0, 2)) << 31) | (int(rng.integers(100, 160)) << 23) | int(rng.integers(0, 1 << 23))
        elif acc is TileDataType.S32:
            a = int(rng.integers(0, 1 << 32)) if kind[j] < 0.5 else _s32(int(rng.integers(-70000, 70000)))
        else:
            a = int(rng.integers(0, 1 << 32))
        e = int(rng.integers(100, 150)) if rng.random() < 0.8 else int(rng.integers(1, 255))
        scale = (e << 10) | int(rng.integers(0, 1024))
        off = int(rng.integers(-(1 << (ow - 1)), 1 << (ow - 1))) if ow else 0
        relu = relus_all[int(rng.integers(0, len(relus_all)))]
        alpha = 0 if rng.random() < 0.1 else (int(rng.integers(110, 135)) << 10) | int(rng.integers(0, 1024))
        rows.add(pre_quant_mode=code, relu_mode=relu, acc_type=int(acc), dst_type=int(dst), acc_bits=a,
                 quant_param=qword(code, scale, off, int(rng.integers(0, 16))),
                 relu_param=rword(relu, alpha), rmode=rmodes[int(rng.integers(0, len(rmodes)))],
                 sat=sats[int(rng.integers(0, len(sats)))])
    return rows.arrays(list(rows.cols))


# --------------------------------------------------------------------------
# Other operations
# --------------------------------------------------------------------------


def _finish(rows: _Rows, names: Sequence[str], count: Optional[int], rng: np.random.Generator,
            random_row: Callable[[_Rows], None], signed: Sequence[str] = ()) -> Batch:
    boundary = len(rows)
    if count is None:
        return rows.arrays(names, signed)
    if count < boundary:
        keep = np.sort(rng.choice(boundary, size=count, replace=False))
        arr = rows.arrays(names, signed)
        return {k: v[keep] for k, v in arr.items()}
    for _ in range(count - boundary):
        random_row(rows)
    return rows.arrays(names, signed)


def _reduction_inputs(count: Optional[int], rng: np.random.Generator, flt: Filters) -> Batch:
    rows = _Rows()
    types = _keep([int(TileDataType.FP32), int(TileDataType.S32), int(TileDataType.U32)], flt.acc_type)
    if not types:
        raise UsageError("gen reduction_step: --acc-type selects none of FP32, S32, U32")
    pats = {
        int(TileDataType.FP32): FP32_SPECIALS + (0x3F800001, 0xBF800001),
        int(TileDataType.S32): S32_SPECIALS,
        int(TileDataType.U32): U32_SPECIALS + (0xFFFFFFFE,),
    }
    for t in types:
        for mabs in (0, 1):
            for c in pats[t]:
                for d in pats[t]:
                    rows.add(acc_type=t, max_abs=mabs, current_bits=c, candidate_bits=d)

    def rnd(r: _Rows) -> None:
        t = types[int(rng.integers(0, len(types)))]
        c = int(rng.integers(0, 1 << 32))
        d = c ^ 0x80000000 if rng.random() < 0.2 else int(rng.integers(0, 1 << 32))
        r.add(acc_type=t, max_abs=int(rng.integers(0, 2)), current_bits=c, candidate_bits=d)

    return _finish(rows, ("acc_type", "max_abs", "current_bits", "candidate_bits"), count, rng, rnd)


_TCVT_LAYOUT = {int(TileDataType.FP16): (16, 10, 15), int(TileDataType.BF16): (16, 7, 127), int(TileDataType.FP32): (32, 23, 127)}


def _tcvt_patterns(t: int) -> List[int]:
    width, fb, bias = _TCVT_LAYOUT[t]
    emax = (1 << (width - 1 - fb)) - 1
    sign = 1 << (width - 1)
    out = [0, sign, 1, (1 << fb) - 1, 1 << fb, (emax << fb), (emax << fb) | 1, (emax << fb) | (1 << (fb - 1)),
           sign | (emax << fb), ((emax - 1) << fb) | ((1 << fb) - 1), sign | (1 << fb), sign | 1]
    # powers of two and the neighbours of the geometric midpoint sqrt(2)*2^F (0x3504F3.. pattern)
    frac_sqrt2 = int((2**0.5 - 1) * (1 << fb))
    for e in (1, bias - 1, bias, bias + 1, emax - 1):
        for f in (0, 1, frac_sqrt2, frac_sqrt2 + 1, (1 << fb) - 1, 1 << (fb - 1)):
            out.append((e << fb) | f)
    if t == int(TileDataType.FP32):  # the 2^-127 and 2^127 edges
        out += [0x00400000, 0x003FFFFF, 0x00400001, 0x00200000, 0x005A8279, 0x7F000000, 0x7F000001, 0x7F7FFFFF, 0x7EFFFFFF]
    return out


def _tcvt_inputs(count: Optional[int], rng: np.random.Generator, flt: Filters) -> Batch:
    rows = _Rows()
    types = _keep(list(_TCVT_LAYOUT), flt.src_type)
    rmodes = _keep([int(m) for m in ALL_RMODES], flt.rmode)
    sats = _keep([0, 1], flt.sat)
    if not types or not rmodes or not sats:
        raise UsageError("gen tcvt_e8m0: the filters select no (src_type FP16/BF16/FP32, rmode, sat)")
    for t in types:
        for b in _tcvt_patterns(t):
            for m in rmodes:
                for s in sats:
                    rows.add(src_type=t, src_bits=b, rmode=m, sat=s)

    def rnd(r: _Rows) -> None:
        t = types[int(rng.integers(0, len(types)))]
        width = _TCVT_LAYOUT[t][0]
        b = int(rng.integers(0, 1 << width))
        if rng.random() < 0.7:
            b &= (1 << (width - 1)) - 1  # mostly positive
        r.add(src_type=t, src_bits=b, rmode=rmodes[int(rng.integers(0, len(rmodes)))], sat=sats[int(rng.integers(0, len(sats)))])

    return _finish(rows, ("src_type", "src_bits", "rmode", "sat"), count, rng, rnd)


def _decomp_inputs(count: Optional[int], rng: np.random.Generator, flt: Filters) -> Batch:
    from ..formats import descriptor

    rows = _Rows()
    types = _keep([int(m) for m in TileDataType], flt.data_type)
    if not types:
        raise UsageError("gen decomposition: --data-type selects no type")
    widths: Dict[int, int] = {}
    for t in types:
        dt = TileDataType(t)
        width = {16: 64, 17: 32, 18: 16, 19: 8, 20: 8, 24: 64, 25: 32, 26: 16, 27: 8, 28: 8}.get(t, 0)
        if not width:
            width = int(descriptor(dt).carrier_bits)
        widths[t] = width
        if width <= 8:
            pats = list(range(1 << width))  # every code of a small format
        else:
            top = 1 << (width - 1)
            pats = [0, top, 1, top | 1, (1 << (width - 1)) - 1, (1 << width) - 1, top >> 1, (top >> 1) - 1,
                    0x0000_1000 % (1 << width), 0x0000_2000 % (1 << width), 0x3F80_0000 % (1 << width)]
            for sh in range(0, width, 4):
                pats += [(1 << sh) % (1 << width), top | ((1 << sh) % top)]
        for p in pats:
            rows.add(data_type=t, encoding=p)

    def rnd(r: _Rows) -> None:
        t = types[int(rng.integers(0, len(types)))]
        w = widths[t]
        r.add(data_type=t, encoding=int(rng.integers(0, 1 << w, dtype=np.uint64)) if w < 64 else int(rng.integers(0, 1 << 63)) * 2 + int(rng.integers(0, 2)))

    return _finish(rows, ("data_type", "encoding"), count, rng, rnd)


def _fp19_inputs(count: Optional[int], rng: np.random.Generator, flt: Filters) -> Batch:
    rows = _Rows()
    pats = list(FP32_SPECIALS)
    for e in (0, 1, 126, 127, 253, 254):
        for lo in (0x0000, 0x0FFF, 0x1000, 0x1001, 0x1FFF, 0x2000, 0x3000, 0x1000 | 0x6000):
            for m in (0, 0x7FE000, 0x7FFFFF & ~0x1FFF, 0x400000):
                b = (e << 23) | (m & ~0x1FFF) | lo
                pats += [b, b | 0x80000000]
    for p in pats:
        rows.add(fp32_bits=p & 0xFFFFFFFF)

    def rnd(r: _Rows) -> None:
        r.add(fp32_bits=int(rng.integers(0, 1 << 32)))

    return _finish(rows, ("fp32_bits",), count, rng, rnd)


def _quant_legal_inputs(count: Optional[int], rng: np.random.Generator, flt: Filters) -> Batch:
    from ..fpatr import MODE_TABLE, quant_param_word, shift_param_word

    rows = _Rows()
    modes = _keep(list(range(64)), flt.mode)
    if not modes:
        raise UsageError("gen quant_param_legal: --mode selects nothing")
    bad_scales = [0x00000, 0x003FF, 0x00001, 0x3FC00, 0x3FE00, 0x3FC01, 0x40000 | 0x1FC00]  # zero, subnormals, inf, nan, negative
    for code in modes:
        info = MODE_TABLE.get(code)
        words: List[int] = [0, 1 << 63, 0xFFFFFFFFFFFFFFFF, 1 << 12, 1 << 36]
        words += [_FP19_ONE << 13, (_FP19_ONE << 13) | 1]
        if info is not None and info.is_shift:
            words += [int(shift_param_word(c)) for c in range(16)] + [int(shift_param_word(0)) | (1 << 36), 1 << 13]
        elif info is not None and info.has_parameter:
            for sc in list(SCALE_CLASSES.values()):
                words.append(int(quant_param_word(sc, 0, mode=code)))
            words += [s << 13 for s in bad_scales]
            if info.offset_width:
                ow = info.offset_width
                for off in (-(1 << (ow - 1)), -1, 1, (1 << (ow - 1)) - 1):
                    words.append(int(quant_param_word(_FP19_ONE, off, mode=code)))
                words.append((_FP19_ONE << 13) | (1 << (37 + ow)))  # first bit above the offset
            else:
                words.append((_FP19_ONE << 13) | (1 << 37))  # an offset where the mode has none
            words += [(_FP19_ONE << 13) | (1 << b) for b in (32, 35, 36, 63)]
        for w in words:
            rows.add(pre_quant_mode=code, word=w)

    def rnd(r: _Rows) -> None:
        code = modes[int(rng.integers(0, len(modes)))]
        info = MODE_TABLE.get(code)
        if info is not None and info.has_parameter and not info.is_shift and rng.random() < 0.5:
            sc = (int(rng.integers(1, 255)) << 10) | int(rng.integers(0, 1024))
            ow = info.offset_width
            off = int(rng.integers(-(1 << (ow - 1)), 1 << (ow - 1))) if ow else 0
            w = int(quant_param_word(sc, off, mode=code))
        else:
            w = int(rng.integers(0, 1 << 63)) * 2 + int(rng.integers(0, 2))
            if rng.random() < 0.5:
                w &= 0xFFFFFFFF
        r.add(pre_quant_mode=code, word=w)

    return _finish(rows, ("pre_quant_mode", "word"), count, rng, rnd, signed=("pre_quant_mode",))


def _relu_legal_inputs(count: Optional[int], rng: np.random.Generator, flt: Filters) -> Batch:
    rows = _Rows()
    words = list(ALPHA_CLASSES.values()) + [0x40000, 0x00001, 0x003FF, 0x3FC00, 0x3FE00, 0x3FC01,
                                            0x40000 | 0x1FC00, 1 << 19, (1 << 63) | 0x1FC00, 0x1FC00 | (1 << 40)]
    for w in words:
        rows.add(word=w)

    def rnd(r: _Rows) -> None:
        if rng.random() < 0.5:
            w = (int(rng.integers(0, 255)) << 10) | int(rng.integers(0, 1024))
        else:
            w = int(rng.integers(0, 1 << 20)) if rng.random() < 0.7 else int(rng.integers(0, 1 << 63))
        r.add(word=w)

    return _finish(rows, ("word",), count, rng, rnd)


_GENERATORS = {
    "postprocess_element": _pp_inputs,
    "reduction_step": _reduction_inputs,
    "tcvt_e8m0": _tcvt_inputs,
    "decomposition": _decomp_inputs,
    "fp32_to_fp19": _fp19_inputs,
    "quant_param_legal": _quant_legal_inputs,
    "relu_param_legal": _relu_legal_inputs,
}


def boundary_count(op: str, filters: Optional[Filters] = None) -> int:
    """Number of boundary-pattern rows ``gen`` writes for ``op`` under ``filters``.

    With ``count`` below this number, ``gen`` writes a seeded sample of them."""
    schema = schema_for(op)
    batch = _GENERATORS[schema.op](None, np.random.default_rng(0), filters or Filters())
    return int(next(iter(batch.values())).size)


#: memory a generated row takes until its text is written (measured peak: 170-600 bytes, by operation)
GEN_BYTES_PER_ROW = 1024


def _check_memory(count: int) -> None:
    """:class:`UsageError` when ``count`` rows would need more memory than is available (the rows are
    built and written whole), before any of it is taken."""
    import psutil

    need = count * GEN_BYTES_PER_ROW
    available = int(psutil.virtual_memory().available)
    if need > available:
        raise UsageError(f"count = {count}: {count} rows need about {need / 2**30:.3g} GiB of memory "
                         f"(a file is built whole); {available / 2**30:.1f} GiB is available: ask for fewer rows")


def generate_inputs(op: str, count: int, seed: int = 0, filters: Optional[Filters] = None) -> Tuple[Schema, Batch]:
    """The input columns of ``count`` rows (boundary patterns first, then random).

    Raises :class:`UsageError` for an unknown operation, a filter that does not apply, a negative
    ``count`` or ``seed``, or a ``count`` whose rows would not fit the available memory.
    """
    schema = schema_for(op)
    (filters or Filters()).check_applies(schema.op)
    if count < 0:
        raise UsageError(f"count = {count}: expected a non-negative row count")
    if seed < 0:  # numpy's generators take non-negative seeds only
        raise UsageError(f"seed = {seed}: expected a non-negative integer (0 or more)")
    _check_memory(count)
    rng = np.random.default_rng(seed)
    batch = _GENERATORS[schema.op](count, rng, filters or Filters())
    return schema, batch


def generate(op: str, count: int, seed: int = 0, filters: Optional[Filters] = None) -> Tuple[Schema, Batch]:
    """Inputs plus expected columns computed by the model's reference engine.

    Raises :class:`UsageError` for an unknown operation, filters that select
    nothing, or when the model rejects a generated row (a generator bug).
    """
    schema, batch = generate_inputs(op, count, seed, filters)
    res = schema.run(batch, "reference")
    if res.errors:
        i = min(res.errors)
        raise UsageError(f"gen {schema.op}: the model rejected generated row {i}: {res.errors[i]}")
    out = dict(batch)
    for c in schema.outputs:
        out[c.name] = res.got[c.name]
    return schema, out


def write_vectors(path: Optional[str], op: str, count: int, seed: int = 0, filters: Optional[Filters] = None) -> str:
    """Generate and write a vector file (gzip if ``path`` ends .gz); returns the CSV text."""
    schema, batch = generate(op, count, seed, filters)
    return write_rows(path, schema, batch)
