"""Tests for ptonum.formats: descriptors, value classes, exact decomposition, float64 decode.

Expected values come from (a) the ASL conformance vectors
(``decomposition.csv.gz``), (b) the pto-spec ASL tests, transcribed below with
the file each came from (``ASL_FORMAT_TESTS``) and the ASL descriptor
functions (``ASL_DESCRIPTORS``, from ``asl/arch/data-types/formats/*.asl``), and
(c) the independent libraries ml_dtypes, en_dtypes and numpy.  Where the ASL
deliberately differs from a library, the differing codes are listed by name in
``DELIBERATE_DIFFERENCES`` and checked against the ASL behaviour.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from typing import Any, Callable, Dict, List, Tuple

import en_dtypes
import ml_dtypes
import numpy as np
import pytest

from ptonum import formats as F
from ptonum.errors import PtonumError, UsageError
from ptonum.formats import FormatKind, TileDataType, ValueClass

K = FormatKind
ENGINES = ("fast", "reference")
FLOAT_TYPES = [t for t in TileDataType if t.is_floating]
INTEGER_TYPES = [t for t in TileDataType if t.is_integer]

# ---------------------------------------------------------------------------
# Transcribed from the ASL descriptor functions asl/arch/data-types/formats/<format>.asl
# (<Format>NumericFormatDescriptor), in the field order of NumericFormatDescriptor.
# ---------------------------------------------------------------------------

DESCRIPTOR_FIELDS = [
    "available",
    "kind",
    "carrier_bits",
    "lane_bits",
    "lanes_per_carrier",
    "sign_bits",
    "sign_bit",
    "exponent_bits_min",
    "exponent_bits_max",
    "fraction_bits_min",
    "fraction_bits_max",
    "exponent_bias_available",
    "exponent_bias",
    "required_low_zero_bits",
    "required_high_zero_bits",
    "has_zero",
    "has_signed_zero",
    "has_subnormal",
    "has_infinity",
    "has_quiet_nan",
    "has_signaling_nan",
]
ASL_DESCRIPTORS: Dict[str, Tuple[Any, ...]] = {
    "FP64": (True, K.FIXED_BINARY, 64, 64, 1, 1, 63, 11, 11, 52, 52, True, 1023, 0, 0, True, True, True, True, True, True),
    "FP32": (True, K.FIXED_BINARY, 32, 32, 1, 1, 31, 8, 8, 23, 23, True, 127, 0, 0, True, True, True, True, True, True),
    "TF32": (True, K.FIXED_BINARY, 32, 32, 1, 1, 31, 8, 8, 10, 10, True, 127, 13, 0, True, True, True, True, True, True),
    "HF32": (True, K.FIXED_BINARY, 32, 32, 1, 1, 31, 8, 8, 11, 11, True, 127, 12, 0, True, True, True, True, True, True),
    "FP16": (True, K.FIXED_BINARY, 16, 16, 1, 1, 15, 5, 5, 10, 10, True, 15, 0, 0, True, True, True, True, True, True),
    "BF16": (True, K.FIXED_BINARY, 16, 16, 1, 1, 15, 8, 8, 7, 7, True, 127, 0, 0, True, True, True, True, True, True),
    "HiF8": (True, K.HIF8, 8, 8, 1, 1, 7, 0, 4, 1, 3, False, 0, 0, 0, True, False, True, True, True, False),
    "E4M3": (True, K.FIXED_BINARY, 8, 8, 1, 1, 7, 4, 4, 3, 3, True, 7, 0, 0, True, True, True, False, True, False),
    "E5M2": (True, K.FIXED_BINARY, 8, 8, 1, 1, 7, 5, 5, 2, 2, True, 15, 0, 0, True, True, True, True, True, True),
    "E3M2": (True, K.FIXED_BINARY, 8, 6, 1, 1, 5, 3, 3, 2, 2, True, 3, 0, 2, True, True, True, False, False, False),
    "E2M3": (True, K.FIXED_BINARY, 8, 6, 1, 1, 5, 2, 2, 3, 3, True, 1, 0, 2, True, True, True, False, False, False),
    "E2M1X2": (True, K.FIXED_BINARY, 8, 4, 2, 1, 3, 2, 2, 1, 1, True, 1, 0, 0, True, True, False, False, False, False),
    "E1M2X2": (True, K.FIXED_BINARY, 8, 4, 2, 1, 3, 1, 1, 2, 2, True, 1, 0, 0, True, True, False, False, False, False),
    "E8M0": (True, K.E8M0, 8, 8, 1, 0, 0, 8, 8, 0, 0, True, 127, 0, 0, False, False, False, False, True, False),
    "HiF4X2": (True, K.FIXED_BINARY, 8, 4, 2, 1, 3, 1, 1, 2, 2, True, 1, 0, 0, True, True, False, False, False, False),
}


# Transcribed from the pto-spec ASL tests tests/asl/arch/data-types/formats/<format>/*-decomp-001.asl:
# the descriptor fields each asserts, AssertNumericFiniteDecomposition (code, negative, significand,
# exponent), AssertNumericFiniteDecompositionUnavailable, TileNumericValueClass, HiF8DecodeDotField and
# TileNumericCanonicalNaN assertions.  (E8M0 also asserts HardwareNumericScaleBlockElements() == 32, a
# scale-block constant outside this module.)
ASL_FORMAT_TESTS: Dict[str, Dict[str, Any]] = {
    "arch-bound-bf16-decomp-001": dict(
        file="tests/asl/arch/data-types/formats/bf16/arch-bound-bf16-decomp-001.asl",
        data_type="BF16",
        descriptor=dict(available=True, kind=FormatKind.FIXED_BINARY, carrier_bits=16, lane_bits=16, sign_bit=15, exponent_bits_min=8, exponent_bits_max=8, fraction_bits_min=7, fraction_bits_max=7, exponent_bias_available=True, exponent_bias=127, has_infinity=True, has_quiet_nan=True, has_signaling_nan=True),
        decomposition=[(0x0, False, 0x0, 0), (0x8000, True, 0x0, 0), (0x1, False, 0x1, -133), (0x7f, False, 0x7f, -133), (0x80, False, 0x80, -133), (0x7f7f, False, 0xff, 120)],
        unavailable=[0x7f80, 0x7fc0],
        value_classes=[(0x7f80, ValueClass.POSITIVE_INFINITY), (0xff80, ValueClass.NEGATIVE_INFINITY), (0x7fc0, ValueClass.QUIET_NAN), (0x7f81, ValueClass.SIGNALING_NAN)],
        canonical_nan=0x7fc0,
    ),
    "arch-bound-e1m2x2-decomp-001": dict(
        file="tests/asl/arch/data-types/formats/e1m2x2/arch-bound-e1m2x2-decomp-001.asl",
        data_type="E1M2X2",
        descriptor=dict(available=True, kind=FormatKind.FIXED_BINARY, carrier_bits=8, lane_bits=4, lanes_per_carrier=2, sign_bit=3, exponent_bits_min=1, fraction_bits_min=2, exponent_bias=1, has_zero=True, has_signed_zero=True, has_subnormal=False, has_infinity=False),
        decomposition=[(0x0, False, 0x0, 0), (0x1, False, 0x1, -2), (0x2, False, 0x2, -2), (0x3, False, 0x3, -2), (0x4, False, 0x4, -2), (0x5, False, 0x5, -2), (0x6, False, 0x6, -2), (0x7, False, 0x7, -2), (0x8, True, 0x0, 0), (0x9, True, 0x1, -2), (0xa, True, 0x2, -2), (0xb, True, 0x3, -2), (0xc, True, 0x4, -2), (0xd, True, 0x5, -2), (0xe, True, 0x6, -2), (0xf, True, 0x7, -2)],
        unavailable=[],
        value_classes=[(0x0, ValueClass.POSITIVE_ZERO), (0x8, ValueClass.NEGATIVE_ZERO), (0x1, ValueClass.POSITIVE_NORMAL), (0x9, ValueClass.NEGATIVE_NORMAL)],
    ),
    "arch-bound-e2m1x2-decomp-001": dict(
        file="tests/asl/arch/data-types/formats/e2m1x2/arch-bound-e2m1x2-decomp-001.asl",
        data_type="E2M1X2",
        descriptor=dict(available=True, kind=FormatKind.FIXED_BINARY, carrier_bits=8, lane_bits=4, lanes_per_carrier=2, sign_bit=3, exponent_bits_min=2, fraction_bits_min=1, exponent_bias=1, has_zero=True, has_signed_zero=True, has_subnormal=False, has_infinity=False, has_quiet_nan=False, has_signaling_nan=False),
        decomposition=[(0x0, False, 0x0, 0), (0x1, False, 0x1, -1), (0x2, False, 0x2, -1), (0x3, False, 0x3, -1), (0x4, False, 0x2, 0), (0x5, False, 0x3, 0), (0x6, False, 0x2, 1), (0x7, False, 0x3, 1), (0x8, True, 0x0, 0), (0x9, True, 0x1, -1), (0xa, True, 0x2, -1), (0xb, True, 0x3, -1), (0xc, True, 0x2, 0), (0xd, True, 0x3, 0), (0xe, True, 0x2, 1), (0xf, True, 0x3, 1)],
        unavailable=[],
        value_classes=[(0x0, ValueClass.POSITIVE_ZERO), (0x8, ValueClass.NEGATIVE_ZERO), (0x1, ValueClass.POSITIVE_NORMAL), (0x9, ValueClass.NEGATIVE_NORMAL)],
    ),
    "arch-bound-e2m3-decomp-001": dict(
        file="tests/asl/arch/data-types/formats/e2m3/arch-bound-e2m3-decomp-001.asl",
        data_type="E2M3",
        descriptor=dict(available=True, kind=FormatKind.FIXED_BINARY, carrier_bits=8, lane_bits=6, sign_bit=5, exponent_bits_min=2, fraction_bits_min=3, exponent_bias=1, required_high_zero_bits=2, has_infinity=False, has_quiet_nan=False, has_signaling_nan=False, has_subnormal=True),
        decomposition=[(0x1, False, 0x1, -3), (0x7, False, 0x7, -3), (0x8, False, 0x8, -3), (0x1f, False, 0xf, -1), (0x20, True, 0x0, 0)],
        unavailable=[0x80],
        value_classes=[(0x1f, ValueClass.POSITIVE_NORMAL), (0x20, ValueClass.NEGATIVE_ZERO)],
    ),
    "arch-bound-e3m2-decomp-001": dict(
        file="tests/asl/arch/data-types/formats/e3m2/arch-bound-e3m2-decomp-001.asl",
        data_type="E3M2",
        descriptor=dict(available=True, kind=FormatKind.FIXED_BINARY, carrier_bits=8, lane_bits=6, sign_bit=5, exponent_bits_min=3, fraction_bits_min=2, exponent_bias=3, required_high_zero_bits=2, has_infinity=False, has_quiet_nan=False, has_signaling_nan=False, has_subnormal=True),
        decomposition=[(0x1, False, 0x1, -4), (0x3, False, 0x3, -4), (0x4, False, 0x4, -4), (0x1f, False, 0x7, 2), (0x20, True, 0x0, 0)],
        unavailable=[0x40],
        value_classes=[(0x1f, ValueClass.POSITIVE_NORMAL), (0x20, ValueClass.NEGATIVE_ZERO)],
    ),
    "arch-bound-e4m3-decomp-001": dict(
        file="tests/asl/arch/data-types/formats/e4m3/arch-bound-e4m3-decomp-001.asl",
        data_type="E4M3",
        descriptor=dict(available=True, kind=FormatKind.FIXED_BINARY, carrier_bits=8, lane_bits=8, lanes_per_carrier=1, sign_bit=7, exponent_bits_min=4, fraction_bits_min=3, exponent_bias=7, has_zero=True, has_signed_zero=True, has_subnormal=True, has_infinity=False, has_quiet_nan=True, has_signaling_nan=False),
        decomposition=[(0x1, False, 0x1, -9), (0x7, False, 0x7, -9), (0x8, False, 0x8, -9), (0x7e, False, 0xe, 5), (0x80, True, 0x0, 0)],
        unavailable=[0x7f, 0xff],
        value_classes=[(0x7f, ValueClass.QUIET_NAN), (0xff, ValueClass.QUIET_NAN)],
        not_infinity=[0x78],
        canonical_nan=0x7f,
    ),
    "arch-bound-e5m2-decomp-001": dict(
        file="tests/asl/arch/data-types/formats/e5m2/arch-bound-e5m2-decomp-001.asl",
        data_type="E5M2",
        descriptor=dict(available=True, kind=FormatKind.FIXED_BINARY, carrier_bits=8, lane_bits=8, sign_bit=7, exponent_bits_min=5, fraction_bits_min=2, exponent_bias=15, has_infinity=True, has_quiet_nan=True, has_signaling_nan=True, has_subnormal=True),
        decomposition=[(0x1, False, 0x1, -16), (0x3, False, 0x3, -16), (0x4, False, 0x4, -16), (0x7b, False, 0x7, 13)],
        unavailable=[0x7c, 0xfc, 0x7e, 0x7d],
        value_classes=[(0x7c, ValueClass.POSITIVE_INFINITY), (0xfc, ValueClass.NEGATIVE_INFINITY), (0x7e, ValueClass.QUIET_NAN), (0x7d, ValueClass.SIGNALING_NAN)],
        canonical_nan=0x7e,
    ),
    "arch-bound-e8m0-decomp-001": dict(
        file="tests/asl/arch/data-types/formats/e8m0/arch-bound-e8m0-decomp-001.asl",
        data_type="E8M0",
        descriptor=dict(available=True, kind=FormatKind.E8M0, carrier_bits=8, lane_bits=8, lanes_per_carrier=1, sign_bits=0, exponent_bits_min=8, exponent_bits_max=8, fraction_bits_min=0, fraction_bits_max=0, exponent_bias_available=True, exponent_bias=127, has_zero=False, has_signed_zero=False, has_subnormal=False, has_infinity=False, has_quiet_nan=True, has_signaling_nan=False),
        decomposition=[(0x0, False, 0x1, -127), (0x1, False, 0x1, -126), (0x7f, False, 0x1, 0), (0x80, False, 0x1, 1), (0xfe, False, 0x1, 127)],
        unavailable=[0xff],
        value_classes=[(0x0, ValueClass.POSITIVE_NORMAL), (0xff, ValueClass.QUIET_NAN)],
        canonical_nan=0xff,
    ),
    "arch-bound-fp16-decomp-001": dict(
        file="tests/asl/arch/data-types/formats/fp16/arch-bound-fp16-decomp-001.asl",
        data_type="FP16",
        descriptor=dict(available=True, kind=FormatKind.FIXED_BINARY, carrier_bits=16, lane_bits=16, sign_bit=15, exponent_bits_min=5, exponent_bits_max=5, fraction_bits_min=10, fraction_bits_max=10, exponent_bias_available=True, exponent_bias=15, has_infinity=True, has_quiet_nan=True, has_signaling_nan=True),
        decomposition=[(0x0, False, 0x0, 0), (0x8000, True, 0x0, 0), (0x1, False, 0x1, -24), (0x3ff, False, 0x3ff, -24), (0x400, False, 0x400, -24), (0x7bff, False, 0x7ff, 5)],
        unavailable=[0x7c00, 0x7e00],
        value_classes=[(0x7c00, ValueClass.POSITIVE_INFINITY), (0xfc00, ValueClass.NEGATIVE_INFINITY), (0x7e00, ValueClass.QUIET_NAN), (0x7c01, ValueClass.SIGNALING_NAN)],
        canonical_nan=0x7e00,
    ),
    "arch-bound-fp32-decomp-001": dict(
        file="tests/asl/arch/data-types/formats/fp32/arch-bound-fp32-decomp-001.asl",
        data_type="FP32",
        descriptor=dict(available=True, kind=FormatKind.FIXED_BINARY, carrier_bits=32, lane_bits=32, lanes_per_carrier=1, sign_bits=1, sign_bit=31, exponent_bits_min=8, exponent_bits_max=8, fraction_bits_min=23, fraction_bits_max=23, exponent_bias_available=True, exponent_bias=127, has_zero=True, has_signed_zero=True, has_subnormal=True, has_infinity=True, has_quiet_nan=True, has_signaling_nan=True),
        decomposition=[(0x0, False, 0x0, 0), (0x80000000, True, 0x0, 0), (0x1, False, 0x1, -149), (0x7fffff, False, 0x7fffff, -149), (0x800000, False, 0x800000, -149), (0x7f7fffff, False, 0xffffff, 104), (0xbf800000, True, 0x800000, -23)],
        unavailable=[0x7f800000, 0x7fc00000],
        value_classes=[(0x7f800000, ValueClass.POSITIVE_INFINITY), (0xff800000, ValueClass.NEGATIVE_INFINITY), (0x7fc00000, ValueClass.QUIET_NAN), (0x7f800001, ValueClass.SIGNALING_NAN)],
        canonical_nan=0x7fc00000,
    ),
    "arch-bound-fp64-decomp-001": dict(
        file="tests/asl/arch/data-types/formats/fp64/arch-bound-fp64-decomp-001.asl",
        data_type="FP64",
        descriptor=dict(available=True, kind=FormatKind.FIXED_BINARY, carrier_bits=64, lane_bits=64, lanes_per_carrier=1, sign_bits=1, sign_bit=63, exponent_bits_min=11, exponent_bits_max=11, fraction_bits_min=52, fraction_bits_max=52, exponent_bias_available=True, exponent_bias=1023, required_low_zero_bits=0, required_high_zero_bits=0, has_zero=True, has_signed_zero=True, has_subnormal=True, has_infinity=True, has_quiet_nan=True, has_signaling_nan=True),
        decomposition=[(0x0, False, 0x0, 0), (0x8000000000000000, True, 0x0, 0), (0x1, False, 0x1, -1074), (0xfffffffffffff, False, 0xfffffffffffff, -1074), (0x10000000000000, False, 0x10000000000000, -1074), (0x7fefffffffffffff, False, 0x1fffffffffffff, 971), (0xbff0000000000000, True, 0x10000000000000, -52)],
        unavailable=[0x7ff0000000000000, 0x7ff8000000000000],
        value_classes=[(0x7ff0000000000000, ValueClass.POSITIVE_INFINITY), (0xfff0000000000000, ValueClass.NEGATIVE_INFINITY), (0x7ff8000000000000, ValueClass.QUIET_NAN), (0x7ff0000000000001, ValueClass.SIGNALING_NAN)],
        canonical_nan=0x7ff8000000000000,
    ),
    "arch-bound-hf32-decomp-001": dict(
        file="tests/asl/arch/data-types/formats/hf32/arch-bound-hf32-decomp-001.asl",
        data_type="HF32",
        descriptor=dict(available=True, kind=FormatKind.FIXED_BINARY, carrier_bits=32, lane_bits=32, sign_bit=31, exponent_bits_min=8, exponent_bits_max=8, fraction_bits_min=11, fraction_bits_max=11, exponent_bias_available=True, exponent_bias=127, required_low_zero_bits=12, has_infinity=True, has_quiet_nan=True, has_signaling_nan=True),
        decomposition=[(0x0, False, 0x0, 0), (0x80000000, True, 0x0, 0), (0x1000, False, 0x1, -137), (0x7ff000, False, 0x7ff, -137), (0x800000, False, 0x800, -137), (0x7f7ff000, False, 0xfff, 116)],
        unavailable=[0x1, 0x7f800000, 0x7fc00000],
        value_classes=[(0x7f800000, ValueClass.POSITIVE_INFINITY), (0xff800000, ValueClass.NEGATIVE_INFINITY), (0x7fc00000, ValueClass.QUIET_NAN), (0x7f801000, ValueClass.SIGNALING_NAN)],
        canonical_nan=0x7fc00000,
    ),
    "arch-bound-hif4x2-decomp-001": dict(
        file="tests/asl/arch/data-types/formats/hif4x2/arch-bound-hif4x2-decomp-001.asl",
        data_type="HiF4X2",
        descriptor=dict(available=True, kind=FormatKind.FIXED_BINARY, carrier_bits=8, lane_bits=4, lanes_per_carrier=2, sign_bit=3, exponent_bits_min=1, fraction_bits_min=2, exponent_bias=1, has_zero=True, has_signed_zero=True, has_subnormal=False, has_infinity=False),
        decomposition=[(0x0, False, 0x0, 0), (0x1, False, 0x1, -2), (0x2, False, 0x2, -2), (0x3, False, 0x3, -2), (0x4, False, 0x4, -2), (0x5, False, 0x5, -2), (0x6, False, 0x6, -2), (0x7, False, 0x7, -2), (0x8, True, 0x0, 0), (0x9, True, 0x1, -2), (0xa, True, 0x2, -2), (0xb, True, 0x3, -2), (0xc, True, 0x4, -2), (0xd, True, 0x5, -2), (0xe, True, 0x6, -2), (0xf, True, 0x7, -2)],
        unavailable=[],
        value_classes=[(0x0, ValueClass.POSITIVE_ZERO), (0x8, ValueClass.NEGATIVE_ZERO), (0x1, ValueClass.POSITIVE_NORMAL), (0x9, ValueClass.NEGATIVE_NORMAL)],
    ),
    "arch-bound-hif8-decomp-001": dict(
        file="tests/asl/arch/data-types/formats/hif8/arch-bound-hif8-decomp-001.asl",
        data_type="HiF8",
        descriptor=dict(available=True, kind=FormatKind.HIF8, carrier_bits=8, lane_bits=8, lanes_per_carrier=1, sign_bits=1, sign_bit=7, exponent_bits_min=0, exponent_bits_max=4, fraction_bits_min=1, fraction_bits_max=3, exponent_bias_available=False, has_zero=True, has_signed_zero=False, has_subnormal=True, has_infinity=True, has_quiet_nan=True, has_signaling_nan=False),
        decomposition=[(0x0, False, 0x0, 0), (0x1, False, 0x1, -22), (0x7, False, 0x1, -16), (0x81, True, 0x1, -22), (0x8, False, 0x8, -3), (0xf, False, 0xf, -3), (0x10, False, 0x8, -2), (0x18, False, 0x8, -4), (0x20, False, 0x8, -1), (0x28, False, 0x8, 0), (0x30, False, 0x8, -5), (0x38, False, 0x8, -6), (0x40, False, 0x4, 2), (0x4c, False, 0x4, 5), (0x50, False, 0x4, -6), (0x5c, False, 0x4, -9), (0x60, False, 0x2, 7), (0x6e, False, 0x2, 14), (0x70, False, 0x2, -9), (0x7e, False, 0x2, -16)],
        unavailable=[0x80, 0x6f, 0xef],
        value_classes=[(0x80, ValueClass.QUIET_NAN), (0x6f, ValueClass.POSITIVE_INFINITY), (0xef, ValueClass.NEGATIVE_INFINITY)],
        hif8_dot_fields=[(0x0, "Denormal", 0, 3), (0x8, "D0", 0, 3), (0x10, "D1", 1, 3), (0x20, "D2", 2, 3), (0x40, "D3", 3, 2), (0x60, "D4", 4, 1)],
        canonical_nan=0x80,
    ),
    "arch-bound-tf32-decomp-001": dict(
        file="tests/asl/arch/data-types/formats/tf32/arch-bound-tf32-decomp-001.asl",
        data_type="TF32",
        descriptor=dict(available=True, kind=FormatKind.FIXED_BINARY, carrier_bits=32, lane_bits=32, sign_bit=31, exponent_bits_min=8, exponent_bits_max=8, fraction_bits_min=10, fraction_bits_max=10, exponent_bias_available=True, exponent_bias=127, required_low_zero_bits=13, has_infinity=True, has_quiet_nan=True, has_signaling_nan=True),
        decomposition=[(0x0, False, 0x0, 0), (0x80000000, True, 0x0, 0), (0x2000, False, 0x1, -136), (0x7fe000, False, 0x3ff, -136), (0x800000, False, 0x400, -136), (0x7f7fe000, False, 0x7ff, 117)],
        unavailable=[0x1, 0x7f800000, 0x7fc00000],
        value_classes=[(0x7f800000, ValueClass.POSITIVE_INFINITY), (0xff800000, ValueClass.NEGATIVE_INFINITY), (0x7fc00000, ValueClass.QUIET_NAN), (0x7f802000, ValueClass.SIGNALING_NAN)],
        canonical_nan=0x7fc00000,
    ),
}


# ---------------------------------------------------------------------------
# Conformance vectors (every row, both engines)
# ---------------------------------------------------------------------------


def _vector_groups(vectors: Callable[[str], List[Dict[str, str]]]) -> Dict[str, Tuple[np.ndarray, ...]]:
    groups: Dict[str, List[Dict[str, str]]] = {}
    for row in vectors("decomposition"):
        groups.setdefault(row["data_type"], []).append(row)
    out = {}
    for name, rows in groups.items():
        out[name] = (
            np.array([int(r["encoding"], 16) for r in rows], np.uint64),
            np.array([r["available"] == "1" for r in rows]),
            np.array([r["negative"] == "1" for r in rows]),
            np.array([int(r["significand"], 16) for r in rows], np.uint64),
            np.array([int(r["exponent"]) for r in rows], np.int64),
        )
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_decomposition_vectors_every_row(vectors: Any, engine: str) -> None:
    groups = _vector_groups(vectors)
    assert sum(len(g[0]) for g in groups.values()) == 236720
    # Every floating/scale type and some integer types are in the file.
    assert {t.name for t in FLOAT_TYPES} <= set(groups)
    for name, (enc, avail, neg, sig, exp) in groups.items():
        d = F.decompose(name, enc, engine=engine)
        for field, got, want in zip(d._fields, d, (avail, neg, sig, exp)):
            bad = np.nonzero(got != want)[0]
            assert bad.size == 0, (
                f"{name} {field} {engine}: encoding {int(enc[bad[0]]):#x} got {got[bad[0]]} want {want[bad[0]]}"
                f" ({bad.size} rows differ)"
            )


# ---------------------------------------------------------------------------
# ASL descriptor functions, field by field
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(ASL_DESCRIPTORS))
def test_descriptor_equals_asl_descriptor_function(name: str) -> None:
    fields = [f.name for f in F.FormatDescriptor.__dataclass_fields__.values()]
    assert fields == DESCRIPTOR_FIELDS  # exactly the ASL record's fields, in order
    got = F.descriptor(name)
    assert tuple(getattr(got, f) for f in fields) == ASL_DESCRIPTORS[name]
    assert F.descriptor(TileDataType[name]) == got == F.descriptor(int(TileDataType[name]))


def test_descriptor_is_frozen() -> None:
    d = F.descriptor("FP32")
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.carrier_bits = 16  # type: ignore[misc]
    assert F.descriptor("FP32").carrier_bits == 32


def test_asl_arch_bound_format_descriptor_empty_001() -> None:
    """tests/asl/arch/data-types/format-descriptor/arch-bound-format-descriptor-empty-001.asl"""
    for dt in INTEGER_TYPES:
        d = F.descriptor(dt)
        assert not d.available and d.kind is K.UNAVAILABLE
        assert (d.carrier_bits, d.lane_bits, d.lanes_per_carrier, d.sign_bits) == (0, 0, 0, 0)
        assert (d.exponent_bits_min, d.exponent_bits_max, d.fraction_bits_min, d.fraction_bits_max) == (0, 0, 0, 0)
        assert not d.exponent_bias_available
        assert d.required_low_zero_bits == 0 and d.required_high_zero_bits == 0
        assert not (d.has_zero or d.has_signed_zero or d.has_subnormal or d.has_infinity
                    or d.has_quiet_nan or d.has_signaling_nan)


# HardwareNumericTypeHasSubnormals and HardwareNumericSignedZeroEncodings
# (asl/arch/features/mx-formats.asl), used by the domain test below.
_HAS_SUBNORMALS = {"FP64", "FP32", "TF32", "HF32", "FP16", "BF16", "HiF8", "E4M3", "E5M2", "E3M2", "E2M3"}
_SIGNED_ZERO = {"FP64", "FP32", "TF32", "HF32", "FP16", "BF16", "E4M3", "E5M2", "E3M2", "E2M3",
                "E2M1X2", "E1M2X2", "HiF4X2"}


@pytest.mark.parametrize("engine", ENGINES)
def test_asl_arch_bound_numeric_formats_domain_001(engine: str) -> None:
    """tests/asl/arch/data-types/numeric-formats/arch-bound-numeric-formats-domain-001.asl"""
    s32 = F.descriptor("S32")
    assert not s32.available and s32.kind is K.UNAVAILABLE and s32.carrier_bits == 0
    d = F.decompose("S32", 1, engine=engine)
    assert (bool(d.available), bool(d.negative), int(d.significand), int(d.exponent)) == (False, False, 0, 0)
    assert len(FLOAT_TYPES) == 15 and all(F.descriptor(t).available for t in FLOAT_TYPES)
    assert len(INTEGER_TYPES) == 10 and not any(F.descriptor(t).available for t in INTEGER_TYPES)
    for t in TileDataType:
        desc = F.descriptor(t)
        assert desc.has_subnormal == (t.name in _HAS_SUBNORMALS), t
        assert desc.has_signed_zero == (t.name in _SIGNED_ZERO), t
        assert desc.has_quiet_nan == (F.canonical_nan(t) is not None), t


# ---------------------------------------------------------------------------
# The ASL per-format decomposition tests, one named pytest test per file
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("asl_test", list(ASL_FORMAT_TESTS))
def test_asl_format_decomposition_file(asl_test: str, engine: str) -> None:
    case = ASL_FORMAT_TESTS[asl_test]
    dt = case["data_type"]
    desc = F.descriptor(dt)
    for field, want in case["descriptor"].items():
        assert getattr(desc, field) == want, f"{case['file']}: descriptor.{field}"
    for code, neg, sig, exp in case["decomposition"]:
        d = F.decompose(dt, code, engine=engine)
        got = (bool(d.available), bool(d.negative), int(d.significand), int(d.exponent))
        assert got == (True, neg, sig, exp), f"{case['file']}: {dt} {code:#x}"
    for code in case["unavailable"]:
        d = F.decompose(dt, code, engine=engine)
        got = (bool(d.available), bool(d.negative), int(d.significand), int(d.exponent))
        assert got == (False, False, 0, 0), f"{case['file']}: {dt} {code:#x}"
    for code, cls in case["value_classes"]:
        assert ValueClass(int(F.value_class(dt, code, engine=engine))) is cls, f"{case['file']}: {dt} {code:#x}"
    for code in case.get("not_infinity", []):
        assert not ValueClass(int(F.value_class(dt, code, engine=engine))).is_infinity
    for code, dot, ebits, fbits in case.get("hif8_dot_fields", []):
        assert F.hif8_dot_field(code) == (dot, ebits, fbits)
    if "canonical_nan" in case:
        assert F.canonical_nan(dt) == case["canonical_nan"]


# The static-invariant pto-spec tests tests/asl/arch/data-types/formats/<format>/arch-static-<format>-contract-001.asl
# assert only that each format unit compiles as an independent normative unit (their body is "assert TRUE").
# Their Python counterpart: the format stands on its own in ptonum -- its own descriptor, equal field by field
# to the ASL descriptor function, and its own decode path (the -decomp-001 files above check the values).
ASL_STATIC_FORMAT_CONTRACTS = {
    "arch-static-bf16-contract-001": "BF16", "arch-static-e1m2x2-contract-001": "E1M2X2",
    "arch-static-e2m1x2-contract-001": "E2M1X2", "arch-static-e2m3-contract-001": "E2M3",
    "arch-static-e3m2-contract-001": "E3M2", "arch-static-e4m3-contract-001": "E4M3",
    "arch-static-e5m2-contract-001": "E5M2", "arch-static-e8m0-contract-001": "E8M0",
    "arch-static-fp16-contract-001": "FP16", "arch-static-fp32-contract-001": "FP32",
    "arch-static-fp64-contract-001": "FP64", "arch-static-hf32-contract-001": "HF32",
    "arch-static-hif4x2-contract-001": "HiF4X2", "arch-static-hif8-contract-001": "HiF8",
    "arch-static-tf32-contract-001": "TF32",
}


@pytest.mark.parametrize("asl_test", list(ASL_STATIC_FORMAT_CONTRACTS))
def test_asl_arch_static_format_contract_001(asl_test: str) -> None:
    dt = ASL_STATIC_FORMAT_CONTRACTS[asl_test]
    assert asl_test == f"arch-static-{dt.lower()}-contract-001"
    d = F.descriptor(dt)
    assert d.available and tuple(getattr(d, f) for f in DESCRIPTOR_FIELDS) == ASL_DESCRIPTORS[dt]
    for engine in ENGINES:
        assert F.decompose(dt, 0, engine=engine).available.shape == ()


def test_asl_static_format_contracts_cover_every_floating_type() -> None:
    assert set(ASL_STATIC_FORMAT_CONTRACTS.values()) == {t.name for t in FLOAT_TYPES}


def test_asl_format_tests_cover_every_floating_type() -> None:
    assert {c["data_type"] for c in ASL_FORMAT_TESTS.values()} == {t.name for t in FLOAT_TYPES}


# ---------------------------------------------------------------------------
# Exhaustive comparison with independent libraries
# ---------------------------------------------------------------------------

LIBRARIES: Dict[str, Any] = {
    "E4M3": ml_dtypes.float8_e4m3fn,
    "E5M2": ml_dtypes.float8_e5m2,
    "E3M2": ml_dtypes.float6_e3m2fn,
    "E2M3": ml_dtypes.float6_e2m3fn,
    "E2M1X2": ml_dtypes.float4_e2m1fn,
    "E8M0": ml_dtypes.float8_e8m0fnu,
    "FP16": np.float16,
    "BF16": ml_dtypes.bfloat16,
    "HiF8": en_dtypes.hifloat8,
    "E1M2X2": en_dtypes.float4_e1m2,
    "HiF4X2": en_dtypes.float4_e1m2,
}


def _smallest_normal(lib: Any) -> float:
    if lib in (en_dtypes.hifloat8, en_dtypes.float4_e1m2):
        return float(en_dtypes.finfo(lib).smallest_normal)
    if lib is np.float16:
        return float(np.finfo(np.float16).smallest_normal)
    return float(ml_dtypes.finfo(lib).smallest_normal)


def _x2_numeric_subnormal(lane_code: np.ndarray, dt: str) -> np.ndarray:
    if dt == "E2M1X2":  # exponent bits 2:1 zero, fraction bit 0 set: +-0.5
        return (lane_code & 0x7) == 0x1
    return ((lane_code & 0x4) == 0) & ((lane_code & 0x3) != 0)  # E1M2: +-0.25, 0.5, 0.75


# Codes where the ASL deliberately differs from the library, by name.  Each
# entry: (types, description, predicate over (carrier codes, lane codes)).
DELIBERATE_DIFFERENCES: Dict[str, Tuple[Tuple[str, ...], str, Callable[[np.ndarray, np.ndarray, str], np.ndarray]]] = {
    "fp6-high-bits-invalid": (
        ("E3M2", "E2M3"),
        "carrier bits 7:6 nonzero (codes 0x40-0xff): the ASL (E3M2EncodingValid/E2M3EncodingValid,"
        " TileNumericEncodingValid) makes them invalid encodings -- class InvalidEncoding, decomposition"
        " unavailable, to_float64 NaN -- while ml_dtypes ignores the high bits",
        lambda carrier, lane, dt: carrier >= 0x40,
    ),
    "fp4-lanes-have-no-subnormal-class": (
        ("E2M1X2", "E1M2X2", "HiF4X2"),
        "lane codes with a zero exponent field and a nonzero fraction: the ASL classifies them Normal"
        " (Classify<X2> passes subnormal=FALSE; descriptor has_subnormal=FALSE) while the library's finfo"
        " puts them below smallest_normal; their values agree",
        lambda carrier, lane, dt: _x2_numeric_subnormal(lane, dt),
    ),
}


def _lib_values(dt: str, lane_codes: np.ndarray) -> np.ndarray:
    lib = LIBRARIES[dt]
    raw = lane_codes.astype(np.uint16 if F.carrier_bits(dt) == 16 else np.uint8)
    with np.errstate(invalid="ignore"):  # signaling NaNs quieten when widened
        return raw.view(lib).astype(np.float64)


def _value_from_decomposition(d: F.Decomposition) -> np.ndarray:
    mag = np.ldexp(d.significand.astype(np.float64), d.exponent.astype(np.int32))
    return np.where(d.negative, -mag, mag)


CASES = [(dt, lane) for dt in LIBRARIES for lane in range(F.lanes_per_carrier(dt))]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("dt,lane", CASES, ids=[f"{dt}-lane{lane}" for dt, lane in CASES])
def test_every_code_matches_independent_library(dt: str, lane: int, engine: str) -> None:
    width = F.carrier_bits(dt)
    codes = np.arange(1 << width, dtype=np.uint16 if width == 16 else np.uint8)
    lane_codes = ((codes >> (4 * lane)) & 0xF) if F.lanes_per_carrier(dt) == 2 else codes
    lib = _lib_values(dt, lane_codes)
    d = F.decompose(dt, codes, lane, engine=engine)
    cls = F.value_class(dt, codes, lane, engine=engine)
    f64 = F.to_float64(dt, codes, lane)

    deliberate = {name: pred(codes, lane_codes, dt) for name, (types, _, pred) in DELIBERATE_DIFFERENCES.items()
                  if dt in types}
    invalid = deliberate.get("fp6-high-bits-invalid", np.zeros(codes.shape, bool))
    no_sub = deliberate.get("fp4-lanes-have-no-subnormal-class", np.zeros(codes.shape, bool))
    ok = ~invalid

    # Values: finite library values are exactly our decomposition and our float64.
    finite = np.isfinite(lib) & ok
    assert np.array_equal(d.available[ok], finite[ok])
    val = _value_from_decomposition(d)
    assert np.array_equal(val[finite], lib[finite])
    assert np.array_equal(np.signbit(val[finite]), np.signbit(lib[finite]))  # -0 stays -0
    assert np.array_equal(f64[ok].view(np.uint64)[~np.isnan(lib[ok])],
                          lib[ok].view(np.uint64)[~np.isnan(lib[ok])])
    # Specials: NaN and infinity classes agree with the library.
    nan_cls = (cls == ValueClass.QUIET_NAN) | (cls == ValueClass.SIGNALING_NAN)
    assert np.array_equal(nan_cls[ok], np.isnan(lib[ok]))
    assert np.array_equal(np.isnan(f64[ok]), np.isnan(lib[ok]))
    assert np.array_equal(cls[ok] == ValueClass.POSITIVE_INFINITY, (lib == np.inf)[ok])
    assert np.array_equal(cls[ok] == ValueClass.NEGATIVE_INFINITY, (lib == -np.inf)[ok])
    # Zeros and subnormals.
    zero = (lib == 0) & ok
    assert np.array_equal(cls[zero], np.where(np.signbit(lib[zero]), ValueClass.NEGATIVE_ZERO,
                                              ValueClass.POSITIVE_ZERO).astype(np.uint8))
    sub_lib = finite & (lib != 0) & (np.abs(np.where(finite, lib, 0)) < _smallest_normal(LIBRARIES[dt]))
    sub_ours = (cls == ValueClass.POSITIVE_SUBNORMAL) | (cls == ValueClass.NEGATIVE_SUBNORMAL)
    assert np.array_equal(sub_ours[~no_sub], sub_lib[~no_sub])
    normal_lib = finite & (lib != 0) & ~sub_lib
    assert np.array_equal(cls[normal_lib], np.where(lib[normal_lib] < 0, ValueClass.NEGATIVE_NORMAL,
                                                    ValueClass.POSITIVE_NORMAL).astype(np.uint8))

    # The deliberate differences: the library really differs, and we follow the ASL.
    if invalid.any():
        assert np.isfinite(lib[invalid]).all()  # ml_dtypes decodes them
        assert (cls[invalid] == ValueClass.INVALID_ENCODING).all()
        assert not d.available[invalid].any() and np.isnan(f64[invalid]).all()
        assert (d.significand[invalid] == 0).all() and (d.exponent[invalid] == 0).all()
    if no_sub.any():
        assert (sub_lib[no_sub]).all()
        assert np.array_equal(cls[no_sub], np.where(lib[no_sub] < 0, ValueClass.NEGATIVE_NORMAL,
                                                    ValueClass.POSITIVE_NORMAL).astype(np.uint8))


def _ieee_sample(width: int, low_zero: int, n: int) -> np.ndarray:
    rng = np.random.default_rng(20260601 + width + low_zero)
    dtype = np.uint64 if width == 64 else np.uint32
    edges: List[int] = []
    frac = 52 if width == 64 else 23
    for sign in (0, 1 << (width - 1)):
        for e in (0, 1, 2, (1 << (width - frac - 1)) - 2, (1 << (width - frac - 1)) - 1):
            for f in (0, 1 << low_zero, 1 << (frac - 1), ((1 << frac) - 1) & ~((1 << low_zero) - 1)):
                edges.append(sign | (e << frac) | f)
    rand = rng.integers(0, 1 << min(width, 63), n, dtype=np.uint64) << np.uint64(1 if width == 64 else 0)
    if width == 64:
        rand |= rng.integers(0, 2, n, dtype=np.uint64)
    rand &= np.uint64((1 << width) - 1)
    rand &= ~np.uint64((1 << low_zero) - 1)
    return np.concatenate([np.array(edges, np.uint64), rand]).astype(dtype)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("dt,width,low_zero", [("FP32", 32, 0), ("TF32", 32, 13), ("HF32", 32, 12), ("FP64", 64, 0)])
def test_wide_types_match_numpy(dt: str, width: int, low_zero: int, engine: str) -> None:
    n = 20000 if engine == "reference" else 200000
    codes = _ieee_sample(width, low_zero, n)
    with np.errstate(invalid="ignore"):  # signaling NaNs quieten when widened
        lib = codes.view(np.float64 if width == 64 else np.float32).astype(np.float64)
    d = F.decompose(dt, codes, engine=engine)
    cls = F.value_class(dt, codes, engine=engine)
    finite = np.isfinite(lib)
    assert np.array_equal(d.available, finite)
    val = _value_from_decomposition(d)
    assert np.array_equal(val[finite], lib[finite])
    assert np.array_equal(np.signbit(val[finite]), np.signbit(lib[finite]))
    f64 = F.to_float64(dt, codes)
    assert np.array_equal(np.isnan(f64), np.isnan(lib))
    assert np.array_equal(f64[~np.isnan(lib)], lib[~np.isnan(lib)])
    nan_cls = (cls == ValueClass.QUIET_NAN) | (cls == ValueClass.SIGNALING_NAN)
    assert np.array_equal(nan_cls, np.isnan(lib))
    tiny = np.finfo(np.float64 if width == 64 else np.float32).smallest_normal
    sub = finite & (lib != 0) & (np.abs(np.where(finite, lib, 0)) < tiny)
    assert np.array_equal((cls == ValueClass.POSITIVE_SUBNORMAL) | (cls == ValueClass.NEGATIVE_SUBNORMAL), sub)


@pytest.mark.parametrize("dt,bad", [("TF32", 0x3F800001), ("TF32", 0x00001000), ("HF32", 0x3F800800),
                                    ("HF32", 0x7F800001)])
@pytest.mark.parametrize("engine", ENGINES)
def test_tf32_hf32_low_bits_are_invalid(dt: str, bad: int, engine: str) -> None:
    # TF32FiniteDecomposition / HF32FiniteDecomposition and TileNumericEncodingValid.
    assert int(F.value_class(dt, bad, engine=engine)) == ValueClass.INVALID_ENCODING
    assert not bool(F.decompose(dt, bad, engine=engine).available)
    assert np.isnan(F.to_float64(dt, bad))
    assert F.exact_value(dt, bad) is None


def test_x2_lane_one_is_the_high_nibble(vectors: Any) -> None:
    # The vectors decompose the low nibble; the high nibble of (n << 4) must decode the same.
    groups = _vector_groups(vectors)
    for name in ("E2M1X2", "E1M2X2", "HiF4X2"):
        enc, avail, neg, sig, exp = groups[name]
        swapped = ((enc & np.uint64(0xF)) << np.uint64(4)) | (enc >> np.uint64(4))
        for engine in ENGINES:
            d = F.decompose(name, swapped, 1, engine=engine)
            assert np.array_equal(d.available, avail) and np.array_equal(d.negative, neg)
            assert np.array_equal(d.significand, sig) and np.array_equal(d.exponent, exp)


# ---------------------------------------------------------------------------
# exact_value, to_float64, integer classification, shapes and dtypes
# ---------------------------------------------------------------------------


def test_exact_value_matches_vectors_and_libraries() -> None:
    assert F.exact_value("FP32", 0x3F800000) == 1
    assert F.exact_value("FP64", 1) == Fraction(1, 2 ** 1074)
    assert F.exact_value("E8M0", 0) == Fraction(1, 2 ** 127)
    assert F.exact_value("E8M0", 0xFE) == 2 ** 127
    assert F.exact_value("HiF8", 0x81) == Fraction(-1, 2 ** 22)
    assert F.exact_value("E2M1X2", 0x7A, lane=1) == 6 and F.exact_value("E2M1X2", 0x7A) == -1
    assert F.exact_value("FP16", 0x7C00) is None and F.exact_value("S8", 3) is None
    for code in range(256):
        lib = float(np.uint8(code).view(ml_dtypes.float8_e4m3fn))
        v = F.exact_value("E4M3", code)
        assert (v is None) == np.isnan(lib) and (v is None or v == Fraction(lib))


def test_integer_value_class_and_to_float64() -> None:
    # ClassifySignedInteger / ClassifyUnsignedInteger (asl/arch/features/mx-formats.asl).
    assert list(F.value_class("S8", [0, 1, 0x7F, 0x80, 0xFF])) == [
        ValueClass.POSITIVE_ZERO, ValueClass.POSITIVE_NORMAL, ValueClass.POSITIVE_NORMAL,
        ValueClass.NEGATIVE_NORMAL, ValueClass.NEGATIVE_NORMAL]
    assert list(F.value_class("U8", [0, 0xFF], engine="reference")) == [
        ValueClass.POSITIVE_ZERO, ValueClass.POSITIVE_NORMAL]
    for engine in ENGINES:
        assert int(F.value_class("S4X2", 0x80, 1, engine=engine)) == ValueClass.NEGATIVE_NORMAL
        assert int(F.value_class("S4X2", 0x80, 0, engine=engine)) == ValueClass.POSITIVE_ZERO
    assert list(F.to_float64("S8", [0x8C, 0x7F])) == [-116.0, 127.0]
    assert list(F.to_float64("S4X2", [0x9F], 1)) == [-7.0]
    assert list(F.to_float64("U32", [0xFFFFFFFF])) == [4294967295.0]
    with pytest.raises(UsageError, match="S64"):
        F.to_float64("S64", 1)


@pytest.mark.parametrize("engine", ENGINES)
def test_shapes_and_dtypes(engine: str) -> None:
    for dt in ("E4M3", "FP16", "FP32", "FP64", "E2M1X2", "S16"):
        d = F.decompose(dt, 1, engine=engine)
        assert all(a.shape == () for a in d)
        assert [a.dtype for a in d] == [np.dtype(bool), np.dtype(bool), np.dtype(np.uint64), np.dtype(np.int64)]
        grid = np.ones((2, 3), np.int32)
        d = F.decompose(dt, grid, engine=engine)
        assert all(a.shape == (2, 3) for a in d)
        assert F.value_class(dt, grid, engine=engine).dtype == np.uint8
        assert F.value_class(dt, 1, engine=engine).shape == ()
        assert F.to_float64(dt, grid).shape == (2, 3) and F.to_float64(dt, grid).dtype == np.float64
        assert F.decompose(dt, np.zeros(0, np.uint8), engine=engine).available.shape == (0,)
    assert F.decompose("FP16", [1, 2], engine=engine).significand.tolist() == [1, 2]


def test_lut_results_are_not_shared_between_calls() -> None:
    a = F.decompose("E4M3", np.array([0x38], np.uint8))
    a.significand[...] = 99
    assert int(F.decompose("E4M3", 0x38).significand) == 8


# ---------------------------------------------------------------------------
# Bad input: the right ptonum error, naming argument and value, for both engines
# ---------------------------------------------------------------------------

BAD_INPUTS = [
    ("unknown type", dict(data_type="FP8", encoding=1), r"data_type = 'FP8'"),
    ("reserved type code", dict(data_type=15, encoding=1), r"data_type = 15"),
    ("code wider than E4M3", dict(data_type="E4M3", encoding=0x100), r"encoding = 0x100: does not fit in 8 bits"),
    ("code wider than FP16 (array)", dict(data_type="FP16", encoding=np.array([1, 0x10000])),
     r"encoding\[1\] = 0x10000: does not fit in 16 bits"),
    ("code wider than X2 carrier", dict(data_type="E2M1X2", encoding=[0x1FF]), r"encoding\[0\] = 0x1ff"),
    ("negative code", dict(data_type="S8", encoding=np.array([3, -1], np.int8)), r"encoding\[1\] = -1: raw encodings are unsigned"),
    ("lane 2 of an X2 type", dict(data_type="E2M1X2", encoding=1, lane=2), r"lane = 2: E2M1X2"),
    ("lane 1 of a scalar type", dict(data_type="FP16", encoding=1, lane=1), r"lane = 1: FP16 has only lane 0"),
    ("bool lane", dict(data_type="HiF4X2", encoding=1, lane=True), r"lane = True"),
    ("float dtype", dict(data_type="FP16", encoding=np.array([1.0])), r"encoding: .*dtype float64"),
    ("python float", dict(data_type="FP32", encoding=1.5), r"encoding: .*float64"),
    ("unknown engine", dict(data_type="FP16", encoding=1, engine="slow"), r"engine = 'slow'"),
]


BAD_CASES = [
    (func, engine, label, kwargs, message)
    for func in ("decompose", "value_class", "to_float64", "exact_value")
    for engine in (ENGINES if func in ("decompose", "value_class") else ("-",))
    for label, kwargs, message in BAD_INPUTS
    if func in ("decompose", "value_class") or "engine" not in kwargs
]


@pytest.mark.parametrize("func,engine,label,kwargs,message", BAD_CASES,
                         ids=[f"{c[0]}-{c[1]}-{c[2]}" for c in BAD_CASES])
def test_bad_input_raises_usage_error(func: str, engine: str, label: str, kwargs: Dict[str, Any],
                                      message: str) -> None:
    kwargs = dict(kwargs)
    if engine != "-":
        kwargs.setdefault("engine", engine)
    with pytest.raises(UsageError, match=message) as info:
        getattr(F, func)(**kwargs)
    assert isinstance(info.value, PtonumError) and isinstance(info.value, ValueError)


def test_exact_value_rejects_arrays() -> None:
    with pytest.raises(UsageError, match=r"encoding: exact_value takes one encoding"):
        F.exact_value("FP16", [1, 2])


@pytest.mark.parametrize("engine", ["fast", "reference"])
@pytest.mark.parametrize("dt,code,expected", [
    ("FP32", 0x3F800000, (True, False, 1 << 23, -23)),   # 1.0 = 2^23 * 2^-23 (binary32: 23 fraction bits)
    ("FP16", 0xBC00, (True, True, 1 << 10, -10)),        # -1.0 (binary16: 10 fraction bits)
    ("E4M3", 0x38, (True, False, 8, -3)),                # 1.0 (OCP E4M3: 3 fraction bits, bias 7)
])
def test_decompose_scalar_gives_0d_arrays_in_both_engines(engine: str, dt: str, code: int, expected: Any) -> None:
    d = F.decompose(dt, code, engine=engine)
    assert all(type(x) is np.ndarray and x.shape == () for x in d)
    assert [x.dtype for x in d] == [np.dtype(bool), np.dtype(bool), np.dtype(np.uint64), np.dtype(np.int64)]
    assert tuple(x.item() for x in d) == expected
    v = F.to_float64(dt, code)
    assert type(v) is np.ndarray and v.shape == () and float(v) == (-1.0 if expected[1] else 1.0)
    lane = F.to_float64("U4X2", 0x21, lane=1)  # the high nibble: 2
    assert type(lane) is np.ndarray and lane.shape == () and float(lane) == 2.0
