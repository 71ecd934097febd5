"""ptonum compare: injected differences are reported exactly (positions, counts, histogram, exit code)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from ptonum.cli import main
from ptonum.conformance.compare import compare_arrays, distance
from ptonum.formats import TileDataType

RUN = CliRunner(env={"COLUMNS": "250"})


def _model_d(acc: np.ndarray, tmp: Path) -> np.ndarray:
    from ptonum.fpatr.tile import postprocess

    res = postprocess(acc, attributes={"pre_quant_mode": "REQ8", "row_max_en": True}, quant_param=0x1FC00 << 13)
    return res.d_bits.copy(), res.row_max_bits.copy()


def test_compare_injected_int(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    acc = rng.integers(-100, 100, size=(6, 10)).astype(np.int32)
    np.save(tmp_path / "acc.npy", acc)
    d, rmax = _model_d(acc, tmp_path)
    np.save(tmp_path / "same.npy", d)
    r = RUN.invoke(main, ["compare", str(tmp_path / "acc.npy"), "--mode", "REQ8", "--quant-param",
                          hex(0x1FC00 << 13), "--device-d", str(tmp_path / "same.npy")])
    assert r.exit_code == 0, r.output
    assert "MATCH" in r.output
    bad = d.copy()
    bad[0, 3] = (int(bad[0, 3]) + 1) & 0xFF
    bad[2, 9] = (int(bad[2, 9]) - 5) & 0xFF
    bad[5, 0] = (int(bad[5, 0]) + 2) & 0xFF
    np.save(tmp_path / "dev.npy", bad)
    r = RUN.invoke(main, ["compare", str(tmp_path / "acc.npy"), "--mode", "REQ8", "--quant-param",
                          hex(0x1FC00 << 13), "--device-d", str(tmp_path / "dev.npy")])
    assert r.exit_code == 1
    assert "first 3 of 3 mismatches" in r.output
    for pos, dist in (("[0, 3]", 1), ("[2, 9]", 5), ("[5, 0]", 2)):
        assert f"D{pos}:" in r.output and f"distance {dist}" in r.output.split(f"D{pos}:")[1].splitlines()[0]
    assert "histogram (integer difference): 1: 1, 2: 1, 5-8: 1" in r.output
    assert "explain D[0, 3]" in r.output


def test_compare_rowmax_dump(tmp_path: Path) -> None:
    acc = np.arange(24, dtype=np.int32).reshape(4, 6) - 10
    np.save(tmp_path / "acc.npy", acc)
    d, rmax = _model_d(acc, tmp_path)
    np.save(tmp_path / "d.npy", d)
    bad = rmax.copy()
    bad[2, 0] ^= 1
    np.save(tmp_path / "rm.npy", bad)
    r = RUN.invoke(main, ["compare", str(tmp_path / "acc.npy"), "--mode", "REQ8", "--row-max",
                          "--quant-param", hex(0x1FC00 << 13), "--device-d", str(tmp_path / "d.npy"),
                          "--device-row-max", str(tmp_path / "rm.npy")])
    assert r.exit_code == 1
    assert "RowMaxOut[2, 0]" in r.output and "first 1 of 1 mismatches" in r.output


def test_ulp_distance_and_class_mismatch() -> None:
    # FP16: 0x3c00 (1.0) vs 0x3c03 -> 3 ulps; 0x0001 vs 0x8001 -> 2 ulps across zero; NaN vs finite is a class mismatch
    model = np.array([0x3C00, 0x0001, 0x7E00, 0x8000], dtype=np.uint64)
    dev = np.array([0x3C03, 0x8001, 0x3C00, 0x0000], dtype=np.uint64)
    d, cls = distance(TileDataType.FP16, model, dev)
    assert d.tolist()[:2] == [3, 2] and cls.tolist() == [False, False, True, False] and d[3] == 0
    rep = compare_arrays("D", TileDataType.FP16, model, dev)
    assert rep.mismatches == 4 and rep.class_mismatches == 1
    assert rep.hist == [("2", 1), ("3-4", 1)]
    # HiF8 (code order is not value order): 0x08 = 1.0, 0x10 = 2.0 differ by 8 finite values (1.0 .. 1.875, 2.0)
    d, _ = distance(TileDataType.HiF8, np.array([0x08], np.uint64), np.array([0x10], np.uint64))
    assert d.tolist() == [8]


# ---------------------------------------------------------------------------
# New-user defects (regressions)

QP = hex(0x1FC00 << 13)  # FP19 1.0 at [31:13]


def _setup(tmp_path: Path):
    acc = (np.arange(64 * 48, dtype=np.int32).reshape(64, 48) % 300) - 150
    np.save(tmp_path / "acc.npy", acc)
    d, rmax = _model_d(acc, tmp_path)
    return acc, d, rmax


def _cmp(tmp_path: Path, dev: str, *extra: str):
    return RUN.invoke(main, ["compare", str(tmp_path / "acc.npy"), "--mode", "REQ8", "--row-max", "--quant-param", QP,
                             "--device-d", dev, *extra])


def test_compare_refuses_dumps_of_another_shape(tmp_path: Path) -> None:
    _, d, rmax = _setup(tmp_path)
    for name, arr in (("t", d.T), ("flat", d.reshape(-1)), ("wide", d.reshape(32, 96)), ("3d", d.reshape(64, 48, 1))):
        np.save(tmp_path / f"{name}.npy", np.ascontiguousarray(arr))
        r = _cmp(tmp_path, str(tmp_path / f"{name}.npy"))
        assert r.exit_code == 2, (name, r.output)
        want = "x".join(map(str, arr.shape))
        assert f"--device-d: {tmp_path / name}.npy: shape {want} does not match the model's D 64x48" in r.stderr, \
            r.stderr
        assert r.stderr.count("\n") == 1 and r.stdout == "" and "MATCH" not in r.output
    np.save(tmp_path / "d.npy", d)
    np.save(tmp_path / "rm_flat.npy", rmax.reshape(-1))
    r = _cmp(tmp_path, str(tmp_path / "d.npy"), "--device-row-max", str(tmp_path / "rm_flat.npy"))
    assert r.exit_code == 2 and (f"--device-row-max: {tmp_path / 'rm_flat.npy'}: shape 64 does not match the model's "
                                 "RowMaxOut 64x1") in r.stderr
    # a raw .bin dump takes the model's shape
    d.tofile(tmp_path / "d.bin")
    r = _cmp(tmp_path, str(tmp_path / "d.bin"))
    assert r.exit_code == 0 and "MATCH" in r.stdout, r.output


def test_compare_errors_go_to_stderr(tmp_path: Path) -> None:
    _setup(tmp_path)
    r = _cmp(tmp_path, str(tmp_path / "missing.npy"))
    assert r.exit_code == 2 and r.stdout == "" and r.stderr.startswith("ptonum compare: error: --device-d")


def test_compare_device_flags(tmp_path: Path) -> None:
    from ptonum.fpatr.tile import postprocess

    acc, d, _ = _setup(tmp_path)
    np.save(tmp_path / "d.npy", d)
    flags = postprocess(acc, attributes={"pre_quant_mode": "REQ8"}, quant_param=0x1FC00 << 13).flags
    assert flags & 0x04  # acc 128..149 with scale 1 overflow S8 (plumbing test: the model's own flags are the reference)
    r = _cmp(tmp_path, str(tmp_path / "d.npy"), "--device-flags", hex(flags))
    assert r.exit_code == 0, r.output
    r = _cmp(tmp_path, str(tmp_path / "d.npy"), "--device-flags", hex(flags ^ 0x10))
    assert r.exit_code == 1 and "the sticky flags differ" in r.stdout


def test_nan_payload_is_not_a_class_mismatch() -> None:
    # FP16 0x7e00 and 0x7e01 are both NaN (numpy float16 view); 0x7e00 vs 0x3c00 is a class mismatch
    codes = np.array([0x7E00, 0x7E01, 0x3C00], np.uint16).view(np.float16)
    assert np.isnan(codes[0]) and np.isnan(codes[1]) and not np.isnan(codes[2])
    rep = compare_arrays("D", TileDataType.FP16, np.array([0x7E00, 0x7E00], np.uint64),
                         np.array([0x7E01, 0x3C00], np.uint64))
    assert rep.mismatches == 2 and rep.nan_payload_mismatches == 1 and rep.class_mismatches == 1
    assert rep.first[0].description == "NaN payload differs (both NaN)"
    assert rep.first[1].description.startswith("class mismatch")


def test_signed_zero_is_shown_as_such_not_as_distance_0() -> None:
    """+0 against -0 differs in its encoding (a mismatch) but not in value: it is its own kind of
    mismatch ('sign of zero differs'), counted apart, with no distance and out of the histogram (was:
    'distance 0' on a counted mismatch).  FP32 and FP16 zeros from IEEE 754; BF16/E4M3/HiF8 too."""
    for dst, pos, neg, one in ((TileDataType.FP32, 0, 0x80000000, 0x3F800000), (TileDataType.FP16, 0, 0x8000, 0x3C00),
                               (TileDataType.BF16, 0, 0x8000, 0x3F80), (TileDataType.E4M3, 0, 0x80, 0x38)):
        model = np.array([pos, neg, one, one], np.uint64)
        device = np.array([neg, pos, one + 1, one], np.uint64)
        rep = compare_arrays("D", dst, model, device)
        assert rep.mismatches == 3 and rep.signed_zero_mismatches == 2 and rep.class_mismatches == 0
        assert [m.distance for m in rep.first] == [None, None, 1]
        assert [m.description for m in rep.first[:2]] == ["sign of zero differs (+0 vs -0)",
                                                          "sign of zero differs (-0 vs +0)"]
        assert rep.hist == [("1", 1)] and rep.distances.tolist() == [-1, -1, 1]
        d, cls = distance(dst, model[:2], device[:2])
        assert d.tolist() == [0, 0] and not cls.any()  # the value distance itself is 0
    # HiF8's one zero (0x00; 0x80 is NaN) and integer types have no signed zero
    rep = compare_arrays("D", TileDataType.S8, np.array([0], np.uint64), np.array([0x80], np.uint64))
    assert rep.signed_zero_mismatches == 0 and rep.first[0].distance == 128


def test_cli_signed_zero_mismatch_line_and_table(tmp_path: Path) -> None:
    np.save(tmp_path / "z.npy", np.array([[0.0, 1.0, -0.0, 2.0]], np.float32))
    np.save(tmp_path / "zd.npy", np.array([[0x8000, 0x3C00, 0x0000, 0x4000]], np.uint16))  # FP16 -0, 1, +0, 2
    r = RUN.invoke(main, ["compare", str(tmp_path / "z.npy"), "--mode", "F322F16", "--device-d",
                          str(tmp_path / "zd.npy")])
    assert r.exit_code == 1, r.output
    assert "D[0, 0]: model 0x0000 = 0, device 0x8000 = -0, sign of zero differs (+0 vs -0)" in r.stdout
    assert "D[0, 2]: model 0x8000 = -0, device 0x0000 = 0, sign of zero differs (-0 vs +0)" in r.stdout
    assert "distance 0" not in r.stdout and "histogram" not in r.stdout
    assert "signed zero" in r.stdout and "MISMATCH: 2 element(s) differ" in r.stdout
    pytest.importorskip("matplotlib")
    from ptonum.cli._plot import compare_figure

    rep = compare_arrays("D", TileDataType.FP16, np.array([[0, 0x3C00, 0x8000]], np.uint64),
                         np.array([[0x8000, 0x3C01, 0]], np.uint64))
    hist = next(ax for ax in compare_figure(rep, "t").axes if ax.get_title() == "distance histogram")
    assert [t.get_text() for t in hist.get_xticklabels()] == ["1", "+0 vs -0"]


def test_integer_dump_of_values_for_a_floating_destination_says_it_holds_encodings() -> None:
    """try14 #17: an int32 dump of FP16 *values* (-439) was refused with "a signed dump holds values",
    while for a floating destination an integer dump is read as encodings."""
    import numpy as np
    import pytest

    from ptonum.conformance.compare import as_device_bits
    from ptonum.errors import UsageError
    from ptonum.formats import TileDataType

    enc = np.array([[0x3C00, 0xC000]], dtype=np.uint16)  # FP16 1.0, -2.0 (IEEE binary16 encodings)
    assert as_device_bits("--device-d", enc.astype(np.int32), TileDataType.FP16, (1, 2)).tolist() == [[0x3C00, 0xC000]]
    assert as_device_bits("--device-d", enc.view(np.int16), TileDataType.FP16, (1, 2)).tolist() == [[0x3C00, 0xC000]]
    with pytest.raises(UsageError) as exc:
        as_device_bits("--device-d", np.array([[1, -2]], dtype=np.int32), TileDataType.FP16, (1, 2))
    assert str(exc.value) == ("--device-d[0, 1] = -2: not an encoding of the 16-bit FP16 element (0 .. 65535); for a "
                              "floating destination an integer dump holds raw encodings (a 16-bit signed one is read bit "
                              "for bit), not values: give values as a floating array of the same width")


def test_unsigned_s4x2_dump_refuses_bits_outside_the_nibble() -> None:
    """try h-break (stop 21): an unsigned S4X2 dump was masked to its low nibble, so a device word 0xF0 where the
    model has 0x0 (or a uint16 0x100) compared as MATCH.  A nibble 0..15 or a negative nibble (0x8..0xF, i.e.
    -8..-1 in two's complement) sign-extended to the dump's width is accepted; any other high bit is refused."""
    from ptonum.conformance.compare import as_device_bits
    from ptonum.errors import UsageError

    # two's complement by hand: -8..-1 as 4-bit nibbles 0x8..0xF, and sign-extended to 8 and 16 bits
    nib = [v & 0xF for v in range(-8, 8)]
    ext8 = [v & 0xFF for v in range(-8, 8)]
    ext16 = [v & 0xFFFF for v in range(-8, 8)]
    assert as_device_bits("--device-d", np.array([nib], np.uint8), TileDataType.S4X2, (1, 16)).tolist() == [nib]
    assert as_device_bits("--device-d", np.array([ext8], np.uint8), TileDataType.S4X2, (1, 16)).tolist() == [nib]
    assert as_device_bits("--device-d", np.array([ext16], np.uint16), TileDataType.S4X2, (1, 16)).tolist() == [nib]
    for dt, word, shown in ((np.uint8, 0xF0, "0xf0"), (np.uint8, 0x10, "0x10"), (np.uint8, 0xF7, "0xf7"),
                            (np.uint16, 0x100, "0x100"), (np.uint16, 0xFF, "0xff"), (np.uint32, 0xFFFF, "0xffff")):
        bad = np.zeros((2, 3), dt)
        bad[1, 2] = word
        with pytest.raises(UsageError) as exc:
            as_device_bits("--device-d", bad, TileDataType.S4X2, (2, 3))
        assert str(exc.value).startswith(f"--device-d[1, 2] = {shown}: does not fit the 4-bit S4X2 element"), str(exc.value)


def test_cli_s4x2_dump_with_a_high_bit_is_not_a_match(tmp_path: Path) -> None:
    """The h-break reproduction: REQ4's D saved as uint16 with 0x100 set in one element must not report MATCH."""
    from ptonum.fpatr.tile import postprocess

    acc = np.random.default_rng(1).integers(-100000, 100000, (16, 64), dtype=np.int32)
    np.save(tmp_path / "acc.npy", acc)
    d = postprocess(acc, attributes={"pre_quant_mode": "REQ4"}, quant_param=0x1FC00 << 13).d_bits.astype(np.uint16)
    d[0, 0] |= 0x100
    np.save(tmp_path / "dev.npy", d)
    r = RUN.invoke(main, ["compare", str(tmp_path / "acc.npy"), "--mode", "REQ4", "--quant-param", hex(0x1FC00 << 13),
                          "--device-d", str(tmp_path / "dev.npy")])
    assert r.exit_code == 2, r.output
    assert "dev.npy[0, 0] = 0x1" in r.stderr and "does not fit the 4-bit S4X2 element" in r.stderr


def test_parse_mode_and_relu_take_enum_members_by_value() -> None:
    """parse_mode/parse_relu applied str() to any value: str() of an enum member is not its code or name
    ("PreQuantMode.REQ8" for the IntEnum on Python 3.10, "M.REQ8" for a plain Enum on every version), so a
    member was refused as an unknown name.  A member is now taken by its value (its name when the value is
    neither an int nor a str)."""
    import enum

    from ptonum.conformance.compare import parse_mode, parse_relu
    from ptonum.errors import UsageError
    from ptonum.fpatr import PreQuantMode, ReluMode

    # ADR-0085 D179: REQ8 is PreQuantMode 3; ReluMode LRELU is 2
    assert parse_mode(PreQuantMode.REQ8) == 3
    assert parse_relu(ReluMode.LRELU) == 2

    class ByCode(enum.Enum):  # str(ByCode.REQ8) == "ByCode.REQ8" on every Python version
        REQ8 = 3
        LRELU = 2

    class ByName(enum.Enum):
        REQ8 = "REQ8"
        RELU = "relu"

    class Opaque(enum.Enum):  # neither an int nor a str: taken by its name
        REQ8 = (3,)
        LRELU = (2,)

    assert [parse_mode(ByCode.REQ8), parse_mode(ByName.REQ8), parse_mode(Opaque.REQ8)] == [3, 3, 3]
    assert [parse_relu(ByCode.LRELU), parse_relu(ByName.RELU), parse_relu(Opaque.LRELU)] == [2, 1, 2]
    with pytest.raises(UsageError, match="--mode"):
        parse_mode(ByName.RELU)  # "relu" is no PreQuantMode name
