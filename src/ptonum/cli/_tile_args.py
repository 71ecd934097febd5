"""Options and input reading shared by the commands that run the B.FPATR tile operation
(``ptonum postprocess`` and ``ptonum compare``): reading tiles from .npy/.npz/.bin,
the attribute and parameter options, and turning them into one
:func:`ptonum.fpatr.postprocess` call.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Optional, Tuple, TypeVar

import numpy as np
import rich_click as click

from .._util import int_text, shape_text
from ..errors import PtonumError, UsageError
from ..npyfile import check_numpy_file, numpy_read_error, zip_errors
from ..rounding import RoundingMode
from ._common import ASCII_INT, AsciiIntRange, RMODE_HELP, input_file, parse_rmode

F = TypeVar("F", bound=Callable[..., Any])

#: element types a raw ACC .bin file may hold
BIN_DTYPES = {"uint32": np.uint32, "int32": np.int32, "float32": np.float32}

#: the option names of :func:`tile_options`, in the order they are declared (for help panels)
INPUT_OPTIONS = ["--key", "--dtype", "--shape", "--acc-type"]
OPERATION_OPTIONS = ["--attributes", "--mode", "--relu", "--group-n", "--row-max", "--group-max",
                     "--row-max-init", "--max-abs", "--rmode", "--sat"]
PARAMETER_OPTIONS = ["--scale", "--offset", "--scale-tile", "--offset-tile", "--scale-rounding", "--shift",
                     "--quant-param", "--quant-tile", "--alpha", "--alpha-tile", "--relu-param", "--relu-tile",
                     "--row-max-in"]


def split_key(spec: str) -> Tuple[str, Optional[str]]:
    """``file.npz:key`` -> (file.npz, key); anything else -> (spec, None)."""
    low = spec.lower()
    i = low.rfind(".npz:")
    if i >= 0:
        return spec[: i + 4], spec[i + 5 :]
    return spec, None


def parse_shape(text: str) -> Tuple[int, ...]:
    parts = [p for p in text.replace("x", ",").replace("X", ",").split(",") if p.strip()]
    try:
        shape = tuple(int_text(p, decimal_only=True) for p in parts)
    except ValueError:
        raise UsageError(f"--shape = {text!r}: expected M x N, e.g. 256x32 or 256,32") from None
    if not shape or any(s < 1 for s in shape):
        raise UsageError(f"--shape = {text!r}: dimensions must be positive integers")
    return shape


def native(arr: np.ndarray) -> np.ndarray:
    """The same values in native byte order (a big-endian ``>i4`` file becomes ``int32``)."""
    if not arr.dtype.isnative:
        return arr.astype(arr.dtype.newbyteorder("="))
    return arr


def read_tile(name: str, spec: str, *, key: Optional[str] = None, bin_dtype: Any = None,
              bin_shape: Optional[Tuple[int, ...]] = None) -> np.ndarray:
    """Read one tile from ``.npy``, ``.npz`` (``key`` or ``file.npz:key``; a single-array npz needs none)
    or raw little-endian ``.bin`` (``bin_dtype`` and ``bin_shape`` give the layout, row-major).

    A .npy/.npz array is returned with its own shape, in native byte order (values unchanged).
    Raises :class:`UsageError` naming the option, the file and the problem.
    """
    path_text, inline_key = split_key(spec)
    if key is not None and inline_key is not None and key != inline_key:
        raise UsageError(f"{name}: {spec} names the array {inline_key!r} and --key names {key!r}; give one")
    key = key or inline_key
    path = input_file(name, path_text, "a .npy, .npz or .bin file")
    suffix = path.suffix.lower()
    if suffix in (".npy", ".npz"):
        check_numpy_file(name, path, key if suffix == ".npz" else None)
    try:
        if suffix == ".npy":
            if key:
                raise UsageError(f"{name}: {path} is a .npy file; a key applies only to .npz")
            return native(np.load(path, allow_pickle=False))
        if suffix == ".npz":
            with np.load(path, allow_pickle=False) as z:
                # only the .npy members are arrays (numpy returns any other member as raw bytes)
                members = z.zip.namelist()
                keys = [m[:-4] for m in members if m.endswith(".npy")]
                if key is not None and key not in keys and key in members:
                    raise UsageError(f"{name}: {path} member {key}: not a .npy array"
                                     + (f" (the arrays: {', '.join(keys)})" if keys else ""))
                if not keys:
                    raise UsageError(f"{name}: {path} holds no .npy array (members: {', '.join(members) or 'none'})")
                if key is None:
                    if len(keys) != 1:
                        raise UsageError(
                            f"{name}: {path} holds {len(keys)} arrays ({', '.join(keys)}); choose one with "
                            f"{'--key' if name == 'ACC' else 'FILE.npz:KEY'}"
                        )
                    key = keys[0]
                if key not in keys:
                    raise UsageError(f"{name}: {path} has no array {key!r} (it has {', '.join(keys)})")
                return native(z[key])
        if suffix == ".bin":
            if key:
                raise UsageError(f"{name}: {path} is a raw .bin file; a key applies only to .npz")
            if bin_dtype is None or bin_shape is None:
                raise UsageError(f"{name}: a raw .bin file needs --dtype and --shape (e.g. --dtype int32 --shape 256x32)")
            dt = np.dtype(bin_dtype).newbyteorder("<")
            want = math.prod(bin_shape)
            if path.stat().st_size != want * dt.itemsize:  # checked before anything is read
                raise UsageError(
                    f"{name}: {path} has {path.stat().st_size} bytes; shape {'x'.join(map(str, bin_shape))} of "
                    f"{np.dtype(bin_dtype).name} needs {want * dt.itemsize}"
                )
            raw = np.fromfile(path, dtype=dt)
            return raw.astype(np.dtype(bin_dtype).newbyteorder("="), copy=False).reshape(bin_shape)
    except UsageError:
        raise
    except (ValueError, EOFError, NotImplementedError, *zip_errors()) as exc:  # type: ignore[misc]
        raise (numpy_read_error(name, path, exc) if suffix in (".npy", ".npz")
               else UsageError(f"{name}: cannot read {path}: {exc}")) from None
    except OSError as exc:
        raise UsageError(f"{name}: cannot read {path}: {exc}") from None
    raise UsageError(f"{name}: {path}: unknown file type {suffix!r}; expected .npy, .npz or .bin")


def is_bin(spec: str) -> bool:
    return Path(split_key(spec)[0]).suffix.lower() == ".bin"


def accumulator_values(acc: np.ndarray, acc_type: Optional[str]) -> Tuple[np.ndarray, Optional[str]]:
    """Make common file dtypes acceptable without changing any value.

    int64/int16/int8 values with ``--acc-type S32`` become int32 when they fit;
    float64/float16 values with ``--acc-type FP32`` become float32 when exact.
    Everything else goes to the model unchanged (it names what is wrong).
    """
    t = acc_type.upper() if acc_type else None
    if acc.dtype.kind == "i" and acc.dtype != np.int32 and t == "S32":
        if acc.size and (acc.min() < -(2**31) or acc.max() >= 2**31):
            bad = tuple(int(i) for i in np.argwhere((acc < -(2**31)) | (acc >= 2**31))[0])
            raise UsageError(f"acc{list(bad)} = {int(acc[bad])}: does not fit S32")
        return acc.astype(np.int32), t
    if acc.dtype.kind == "f" and acc.dtype != np.float32 and t == "FP32":
        conv = acc.astype(np.float32)
        same = (conv.astype(acc.dtype) == acc) | (np.isnan(acc) & np.isnan(conv))
        if not np.all(same):
            bad = tuple(int(i) for i in np.argwhere(~same)[0])
            raise UsageError(
                f"acc{list(bad)} = {acc[bad]!r}: {acc.dtype} value is not an FP32 value; "
                "convert the accumulator to float32 (or pass raw 32-bit encodings)"
            )
        return conv, t
    return acc, t


def int_word(name: str, text: str, width: int = 64) -> int:
    try:
        v = int_text(text)
    except ValueError:
        raise UsageError(f"{name} = {text!r}: expected an integer word (ASCII decimal digits, or 0x/0o/0b and their "
                         "digits; no separators)") from None
    if v < 0 or v >> width:
        raise UsageError(f"{name} = {text}: does not fit in {width} bits")
    return v


def attributes_from_word(option: str, text: str) -> Any:
    """``--attributes WORD`` -> :class:`ptonum.fpatr.FPATRAttributes`; every refusal names ``option`` (the
    model names its argument ``word``).  Raises the model's typed errors."""
    from ..fpatr.attributes import FPATRAttributes

    word = int_word(option, text, 32)
    try:
        return FPATRAttributes.from_word(word)
    except PtonumError as exc:
        msg = str(exc)
        if not msg.startswith("word = "):
            raise
        raise type(exc)(f"{option} = {msg[len('word = '):]}") from None


#: the BundleFPATRFieldsLegal rules between fields (not a reserved code), as the model's message starts
_FIELD_RULES = ("RowMaxInit requires", "GroupNCode = ", "GroupMaxEn requires", "MaxAbsEn requires")


def _word_fields_legal(text: str, attrs: Any) -> None:
    """An ``--attributes`` word whose reduction fields break a BundleFPATRFieldsLegal rule: the model's
    :class:`ptonum.errors.TileLegalityError` led by ``--attributes = WORD:``, so the command line does not
    word it as the field options (``--max-abs needs --row-max ...``) the user did not give."""
    from ..errors import TileLegalityError
    from ..fpatr.attributes import check_fields

    try:
        check_fields(attrs)
    except TileLegalityError as exc:
        if str(exc).startswith(_FIELD_RULES):
            raise TileLegalityError(f"--attributes = {text.strip()}: {exc}") from None
        raise


def mode_fields(mode: str, relu: Optional[str]) -> Tuple[Any, Any]:
    """``--mode`` and ``--relu`` (code, ``0x`` code or name; ``--relu`` NONE when not given) -> the
    PreQuantMode and ReluMode, refusals naming the option."""
    from ..fpatr.attributes import parse_pre_quant_mode, parse_relu_mode

    def code_or_name(text: str) -> Any:
        try:
            return int_text(text)
        except ValueError:
            return text.strip()

    return (parse_pre_quant_mode(code_or_name(mode), "--mode"),
            parse_relu_mode("NONE" if relu is None else code_or_name(relu), "--relu"))


def tile_options(fn: F) -> F:
    """Add the accumulator, B.FPATR/B.DATR and parameter options to a click command."""
    options = [
        click.option("--key", help="Array name inside an ACC .npz file (or write ACC as FILE.npz:KEY)."),
        click.option("--dtype", "bin_dtype", type=click.Choice(sorted(BIN_DTYPES)),
                     help="Element type of a raw little-endian ACC .bin file."),
        click.option("--shape", "bin_shape", help="M x N of a raw ACC .bin file, e.g. 256x32 (256,32 also works)."),
        click.option("--acc-type", type=click.Choice(["FP32", "S32", "U32"], case_sensitive=False),
                     help="Accumulator type (default: from the array dtype: float32 -> FP32, int32 -> S32)."),
        click.option("--attributes", "attributes_word", metavar="WORD",
                     help="The 32-bit B.FPATR word (e.g. 0x08842023), instead of --mode and the field options."),
        click.option("--mode", help="PreQuantMode name or code (e.g. VREQ8, QF322FP8_PRE, 26)."),
        click.option("--relu", default=None,
                     help="ReluMode: NONE, RELU, LRELU (scalar alpha) or PRELU (per-column tile)."),
        click.option("--group-n", type=ASCII_INT, default=None,
                     help="GroupN columns (8, 16, 32, 48, 64, 80, 96, 112, 128)."),
        click.option("--row-max", is_flag=True, help="RowMaxEn: RowMaxOut (M x 1, accumulator type)."),
        click.option("--group-max", is_flag=True, help="GroupMaxEn: GroupMaxOut (needs --group-n)."),
        click.option("--row-max-init", is_flag=True, help="RowMaxInit: fold RowMaxIn (--row-max-in) into RowMax."),
        click.option("--max-abs", is_flag=True, help="MaxAbsEn: reduce |acc| instead of acc."),
        click.option("--rmode", default="NONE", show_default=True,
                     help=RMODE_HELP + " Fixed-rounding, shift and NoQuant modes require NONE."),
        click.option("--sat", is_flag=True, help="B.DATR Sat=1: clamp on overflow (default: wrap / Inf)."),
        click.option("--scale", default=None, metavar="NUMBER",
                     help="Quantization scale as a decimal (read exactly, converted to FP19; see --scale-rounding)."),
        click.option("--offset", type=ASCII_INT, default=0, show_default=True,
                     help="Signed offset (S5/S9/S17 by mode); with --scale-tile, the offset of every column."),
        click.option("--scale-tile", metavar="FILE",
                     help="Per-column scales of a vector mode as numbers: N or 1 x N floats (.npy, FILE.npz:KEY or "
                          "little-endian float32 .bin), each converted to FP19 as --scale is (see --scale-rounding)."),
        click.option("--offset-tile", metavar="FILE",
                     help="Per-column signed offsets (N or 1 x N integers; little-endian int32 .bin) that go with "
                          "--scale-tile."),
        click.option("--scale-rounding", type=click.Choice(["exact", "rne"]), default="exact", show_default=True,
                     help="exact: refuse a scale or alpha (also in --scale-tile, --alpha-tile) FP19 cannot hold; rne: "
                          "round it once to FP32 and then to FP19 (FP32ToFP19, nearest even)."),
        click.option("--shift", type=AsciiIntRange(1, 16), default=None,
                     help="Shift modes 12/13 (VSHIFTS322S16, SHIFTS322S16): the arithmetic right shift, 1..16 "
                          "bits (the word shift_param_word(N) makes; mode 12 gets it in every column)."),
        click.option("--quant-param", metavar="WORD",
                     help="Raw 64-bit quantization word (decimal or 0x-hex) of a scalar mode; for a vector mode "
                          "it is used in every column."),
        click.option("--quant-tile", metavar="FILE",
                     help="Per-column words of a vector mode (VREQ8, VDEQS16, VQF322B8_PRE, VSHIFTS322S16, ...): "
                          "a 1 x N uint64 array (.npy, FILE.npz:KEY or little-endian .bin) of words made by "
                          "quant_param(scale, offset, mode=...) of ptonum.fpatr."),
        click.option("--alpha", default=None, metavar="NUMBER",
                     help="LReLU/PReLU alpha, replacing the scale on the negative path (FP19, >= 0; a decimal read "
                          "exactly, see --scale-rounding)."),
        click.option("--alpha-tile", metavar="FILE",
                     help="Per-column PReLU alphas as numbers (N or 1 x N floats; little-endian float32 .bin), each "
                          "converted to FP19 as --alpha is (see --scale-rounding)."),
        click.option("--relu-param", metavar="WORD", help="Raw activation word (FP19 in bits [18:0])."),
        click.option("--relu-tile", metavar="FILE",
                     help="1 x N uint64 activation words for --relu PRELU (words made by relu_param(alpha) of ptonum.fpatr)."),
        click.option("--row-max-in", metavar="FILE",
                     help="RowMaxIn, M x 1 of the accumulator type (with --row-max-init)."),
    ]
    for opt in reversed(options):
        fn = opt(fn)
    return fn


@dataclass
class TileCall:
    """One fully read :func:`ptonum.fpatr.postprocess` call (nothing computed yet)."""

    acc: np.ndarray
    acc_type: Optional[str]
    attributes: Any  # FPATRAttributes
    rmode: RoundingMode
    sat: bool
    params: Dict[str, Any] = field(default_factory=dict)
    #: the ACC file (as given), named in the model's messages about the accumulator
    acc_source: Optional[str] = None

    def parameter_record(self) -> Dict[str, Any]:
        """The parameter words of the call as a run record keeps them (JSON-ready): ``quant_param`` /
        ``relu_param`` as 16-digit hex words, ``quant_tile`` / ``relu_tile`` as the list of the N column
        words, ``row_max_in`` as its shape (the values are the file's).  Only what the call has."""
        out: Dict[str, Any] = {}
        for key in ("quant_param", "relu_param"):
            if self.params.get(key) is not None:
                out[key] = f"{int(self.params[key]):#018x}"
        for key in ("quant_tile", "relu_tile"):
            if self.params.get(key) is not None:
                out[key] = [f"{int(w):#018x}" for w in np.asarray(self.params[key]).reshape(-1)]
        if self.params.get("row_max_in") is not None:
            out["row_max_in"] = {"shape": list(np.shape(self.params["row_max_in"]))}
        return out

    def run(self, *, engine: str = "fast", progress: Optional[Callable[[int, int], None]] = None) -> Any:
        from ..fpatr.tile import postprocess

        extra: Dict[str, Any] = {"progress": progress} if progress is not None else {}
        return self._explained(lambda: postprocess(self.acc, acc_type=self.acc_type, attributes=self.attributes,
                                                   rmode=self.rmode, sat=self.sat, engine=engine, **self.params,
                                                   **extra))

    def run_chunked(self, *, engine: str = "fast") -> Any:
        """The same call on a chunked ``dask.array`` ACC (:func:`ptonum.dask.postprocess`): everything is
        checked now, nothing is computed; returns the lazy :class:`ptonum.dask.DaskPostprocessResult`."""
        from ..dask import postprocess as chunked_postprocess

        return self._explained(lambda: chunked_postprocess(self.acc, acc_type=self.acc_type,
                                                           attributes=self.attributes, rmode=self.rmode,
                                                           sat=self.sat, engine=engine, **self.params))

    def _explained(self, call: Callable[[], Any]) -> Any:
        """Run ``call``; an error about an inferred ``acc_type`` says it came from ACC's dtype."""
        from ..errors import PtonumError

        try:
            return call()
        except PtonumError as exc:
            msg = str(exc)
            where = f"ACC: {self.acc_source}: " if self.acc_source else "ACC: "
            if self.acc_type is None and msg.startswith("acc_type = "):  # inferred, not given: say so
                head, sep, tail = msg.partition(": ")
                raise type(exc)(f"{where[:-2]} is {head[len('acc_type = '):]} (from its dtype {self.acc.dtype})"
                                f"{sep}{tail}") from None
            if msg.startswith("acc: "):  # the model's accumulator is this file
                raise type(exc)(where + msg[len("acc: "):]) from None
            if msg.startswith("acc["):
                raise type(exc)(where + msg) from None
            raise

    def element_param(self, scalar: str, tile: str, column: int) -> int:
        """The quantization or activation word the element in ``column`` uses."""
        if tile in self.params:
            return int(np.asarray(self.params[tile]).reshape(-1)[column])
        return int(self.params.get(scalar, 0) or 0)


def scale_word(scale: str, offset: int, mode: Any, rounding: str) -> int:
    """``--scale``/``--offset`` -> the quantization word; suggests ``--scale-rounding rne`` only when it works."""
    from ..fpatr.params import quant_param as make_quant_param

    try:
        return int(make_quant_param(scale, offset, mode=mode, rounding=rounding))
    except UsageError as exc:
        if rounding != "exact" or "rounding='rne'" not in str(exc):
            raise UsageError(_option_name(str(exc), "scale", "--scale")) from None
        try:
            make_quant_param(scale, offset, mode=mode, rounding="rne")
        except UsageError as rne_exc:  # rounding would not help: say why
            raise UsageError(f"--scale = {scale}: {_after_name(str(rne_exc))}") from None
        raise UsageError(_option_name(str(exc), "scale", "--scale")) from None


def alpha_word(alpha: str, rounding: str) -> int:
    from ..fpatr.params import relu_param as make_relu_param

    try:
        return int(make_relu_param(alpha, rounding=rounding))
    except UsageError as exc:
        if rounding != "exact" or "rounding='rne'" not in str(exc):
            raise UsageError(_option_name(str(exc), "alpha", "--alpha")) from None
        try:
            make_relu_param(alpha, rounding="rne")
        except UsageError as rne_exc:
            raise UsageError(f"--alpha = {alpha}: {_after_name(str(rne_exc))}") from None
        raise UsageError(_option_name(str(exc), "alpha", "--alpha")) from None


def _column_vector(option: str, spec: str, n: int, bin_dtype: Any) -> np.ndarray:
    """A per-column tile read from ``spec`` as a length-``n`` vector (N or 1 x N accepted)."""
    arr = read_tile(option, spec, bin_dtype=bin_dtype, bin_shape=(1, n))
    if arr.shape not in ((n,), (1, n)):
        raise UsageError(f"{option}: shape {shape_text(arr.shape)}; expected N or 1 x N with N = {n} "
                         "(one value per column of ACC)")
    return arr.reshape(n)


def _word_tile(option: str, spec: str, n: int, numbers_option: str) -> np.ndarray:
    """A 1 x N tile of U64 words; a float array is refused with the option that takes numbers."""
    arr = read_tile(option, spec, bin_dtype=np.uint64, bin_shape=(1, n))
    if arr.dtype.kind == "f":
        raise UsageError(f"{option}: {spec} holds {arr.dtype} numbers, not U64 parameter words; give the numbers "
                         f"with {numbers_option} FILE (converted to FP19 words as --scale/--alpha are)")
    return arr


def _real_vector(option: str, spec: str, n: int) -> np.ndarray:
    arr = _column_vector(option, spec, n, np.float32)
    if arr.dtype.kind not in "fiu" or arr.dtype.kind == "b":
        raise UsageError(f"{option}: dtype {arr.dtype}: expected real numbers (float or integer)")
    return arr


def _scale_tile_words(spec: str, offset_spec: Optional[str], offset: int, n: int, mode: Any,
                      rounding: str) -> np.ndarray:
    """``--scale-tile`` (and ``--offset-tile``) -> the 1 x N U64 words (``quant_param`` per distinct column)."""
    from ..fpatr.params import quant_param as make_quant_param

    scales = _real_vector("--scale-tile", spec, n)
    if offset_spec is not None:
        offs = _column_vector("--offset-tile", offset_spec, n, np.int32)
        if offs.dtype.kind not in "iu":
            raise UsageError(f"--offset-tile: dtype {offs.dtype}: expected integers (the signed offsets)")
        offsets = [int(v) for v in offs.tolist()]  # Python ints: a uint64 2**64 - 1 must not wrap to -1
    else:
        offsets = [int(offset)] * n
    words = np.empty((1, n), dtype=np.uint64)
    done: Dict[Tuple[Any, int], int] = {}
    for j in range(n):
        key = (scales[j].item(), int(offsets[j]))
        if key not in done:
            try:
                done[key] = int(make_quant_param(scales[j], int(offsets[j]), mode=mode, rounding=rounding))
            except UsageError as exc:
                msg = str(exc)
                where = "--offset-tile" if msg.startswith("offset ") else "--scale-tile"
                head, sep, tail = msg.partition(" ")
                raise UsageError(f"{where}[{j}] {tail}") from None
        words[0, j] = done[key]
    return words


def _alpha_tile_words(spec: str, n: int, rounding: str) -> np.ndarray:
    """``--alpha-tile`` -> the 1 x N U64 activation words (``relu_param`` per distinct column)."""
    from ..fpatr.params import relu_param as make_relu_param

    alphas = _real_vector("--alpha-tile", spec, n)
    words = np.empty((1, n), dtype=np.uint64)
    done: Dict[Any, int] = {}
    for j in range(n):
        key = alphas[j].item()
        if key not in done:
            try:
                done[key] = int(make_relu_param(alphas[j], rounding=rounding))
            except UsageError as exc:
                msg = str(exc)
                raise UsageError(f"--alpha-tile[{j}] {msg.partition(' ')[2]}") from None
        words[0, j] = done[key]
    return words


def _option_name(msg: str, param: str, option: str) -> str:
    """``scale = 0.01 is ...`` -> ``--scale = 0.01 is ...`` (the model names its Python parameter)."""
    if msg.startswith("offset "):
        return "--offset" + msg[len("offset"):]
    return option + msg[len(param):] if msg.startswith(param + " ") else msg


def _after_name(msg: str) -> str:
    """``scale = 1e-40: encodes as ...`` -> ``encodes as ...``."""
    head, sep, tail = msg.partition(": ")
    return tail if sep and " = " in head else msg


def _named(option: str, spec: str, fn: Callable[[], Any]) -> Any:
    """``fn()``; a :class:`UsageError` about ``acc[...]`` elements names the option and the file."""
    try:
        return fn()
    except UsageError as exc:
        raise UsageError(f"{option}: {spec}: {exc}") from None


def build_tile_call(acc: str, *, key: Optional[str], bin_dtype: Optional[str], bin_shape: Optional[str],
                    acc_type: Optional[str], attributes_word: Optional[str], mode: Optional[str],
                    relu: Optional[str], group_n: Optional[int], row_max: bool, group_max: bool,
                    row_max_init: bool, max_abs: bool, rmode: str, sat: bool, scale: Optional[str],
                    offset: int, scale_rounding: str, quant_param: Optional[str], quant_tile: Optional[str],
                    alpha: Optional[str], relu_param: Optional[str], relu_tile: Optional[str],
                    row_max_in: Optional[str], shift: Optional[int] = None, scale_tile: Optional[str] = None,
                    offset_tile: Optional[str] = None, alpha_tile: Optional[str] = None,
                    acc_array: Any = None) -> TileCall:
    """Read ACC and the parameter files and build the attributes from the options of :func:`tile_options`.

    ``acc_array``: an already opened accumulator (e.g. a chunked ``dask.array`` from
    :func:`ptonum.dask.open_tile`) used as is instead of reading ACC; its dtype must already be
    an accumulator dtype (no value conversion is attempted on it).

    Raises :class:`UsageError` (or the model's typed errors) naming the option and the problem.
    """
    from ..fpatr.attributes import FPATRAttributes, mode_info
    from ..fpatr.params import shift_param_word

    rm = parse_rmode(rmode, "--rmode")

    # ---- attributes
    field_opts = [n for n, v in (("--mode", mode), ("--relu", relu), ("--group-n", group_n),
                                 ("--row-max", row_max or None), ("--group-max", group_max or None),
                                 ("--row-max-init", row_max_init or None), ("--max-abs", max_abs or None))
                  if v is not None]
    if attributes_word is not None:
        if field_opts:
            raise UsageError(f"--attributes and {field_opts[0]} both describe B.FPATR; give one or the other")
        attrs = attributes_from_word("--attributes", attributes_word)
        _word_fields_legal(attributes_word, attrs)
    else:
        if mode is None:
            raise UsageError("give --mode NAME (and field options) or --attributes WORD")
        mode_value, relu_value = mode_fields(mode, relu)
        attrs = FPATRAttributes.from_fields(
            pre_quant_mode=mode_value, relu_mode=relu_value,
            group_n=group_n if group_n is not None else 0, row_max_en=row_max, group_max_en=group_max,
            row_max_init=row_max_init, max_abs_en=max_abs,
        )
    info = mode_info(attrs.pre_quant_mode)
    mode_tag = f"PreQuantMode {info.name} ({int(info.code)})"

    # ---- accumulator
    if (bin_dtype is not None or bin_shape is not None) and not is_bin(acc):
        given = "--dtype" if bin_dtype is not None else "--shape"
        raise UsageError(f"{given}: --dtype/--shape describe a raw .bin ACC file; ACC {split_key(acc)[0]} "
                         "carries its own dtype and shape")
    shape = parse_shape(bin_shape) if bin_shape else None
    if shape is not None and len(shape) != 2:
        raise UsageError(f"--shape = {bin_shape!r}: expected M x N (the two dimensions of the ACC tile), e.g. 256x32")
    if acc_array is not None:
        acc_arr, acc_t = acc_array, (acc_type.upper() if acc_type else None)
    else:
        acc_arr = read_tile("ACC", acc, key=key, bin_dtype=BIN_DTYPES.get(bin_dtype or ""), bin_shape=shape)
        acc_arr, acc_t = _named("ACC", acc, lambda: accumulator_values(acc_arr, acc_type))
    if acc_arr.ndim != 2 or 0 in acc_arr.shape:
        raise UsageError(f"ACC: {acc}: expected an M x N tile (M, N >= 1), got shape {shape_text(acc_arr.shape)}")
    m, n = acc_arr.shape

    # ---- quantization parameter
    given_q = [o for o, v in (("--scale", scale), ("--scale-tile", scale_tile), ("--shift", shift),
                              ("--quant-param", quant_param), ("--quant-tile", quant_tile)) if v is not None]
    if len(given_q) > 1:
        raise UsageError(f"{given_q[0]} and {given_q[1]} both give the quantization parameter: give one of "
                         "--scale (with --offset), --scale-tile (with --offset-tile), --shift N, --quant-param WORD "
                         "or --quant-tile FILE")
    if offset and scale is None and scale_tile is None:
        raise UsageError("--offset goes with --scale or --scale-tile (a raw --quant-param word carries its own offset)")
    if offset_tile is not None and scale_tile is None:
        raise UsageError("--offset-tile goes with --scale-tile (per-column scales and offsets); a --quant-tile word "
                         "carries its own offset")
    if offset_tile is not None and offset:
        raise UsageError("--offset and --offset-tile both give the offset: give one")
    if given_q and info.parameter == "none":
        raise UsageError(f"{given_q[0]}: {mode_tag} takes no quantization parameter")
    if info.is_shift and (scale is not None):
        raise UsageError(f"--scale: {mode_tag} is a shift mode: give the arithmetic right shift with --shift N "
                         "(1..16), or a raw --quant-param word (shift code N-1 at bits [35:32])")
    if shift is not None and not info.is_shift:
        raise UsageError(f"--shift: {mode_tag} is not a shift mode (only 12 VSHIFTS322S16 and 13 SHIFTS322S16 "
                         "take a shift); give --scale/--quant-param" + (" or --quant-tile" if info.parameter == "vector" else ""))
    if not given_q and info.parameter != "none":
        how = ("--shift N (or --quant-param WORD)" if info.is_shift else
               "--scale S (or --quant-param WORD)" if info.parameter == "scalar" else
               "--scale S (one scale for every column), --quant-param WORD or --quant-tile FILE")
        raise UsageError(f"{mode_tag} takes a {info.parameter} quantization parameter: give {how}")
    for tile_opt, v in (("--quant-tile", quant_tile), ("--scale-tile", scale_tile)):
        if v is not None and info.parameter == "scalar":
            what = "--shift/--quant-param" if info.is_shift else "--scale/--quant-param"
            raise UsageError(f"{tile_opt}: {mode_tag} takes a scalar parameter: use {what}, not {tile_opt}")
    if scale_tile is not None and info.is_shift:
        raise UsageError(f"--scale-tile: {mode_tag} is a shift mode: it takes shift codes, not scales "
                         "(--shift N for every column, or a --quant-tile of shift words)")
    qword: Optional[int] = None
    if scale is not None:
        qword = scale_word(scale, offset, attrs.pre_quant_mode, scale_rounding)
    elif shift is not None:
        qword = shift_param_word(shift=shift)
    elif quant_param is not None:
        qword = int_word("--quant-param", quant_param)
    params: Dict[str, Any] = {}
    if qword is not None:
        if info.parameter == "vector" and quant_param is not None:  # refused as the word the user gave,
            from ..fpatr.params import check_quant_param  # not as a --quant-tile they did not give

            check_quant_param(attrs.pre_quant_mode, qword, "--quant-param")
        if info.parameter == "vector":
            params["quant_tile"] = np.full((1, n), qword, dtype=np.uint64)
        else:
            params["quant_param"] = qword
    if quant_tile is not None:
        params["quant_tile"] = _word_tile("--quant-tile", quant_tile, n, "--scale-tile")
    if scale_tile is not None:
        params["quant_tile"] = _scale_tile_words(scale_tile, offset_tile, offset, n, attrs.pre_quant_mode,
                                                 scale_rounding)

    # ---- activation parameter
    given_r = [o for o, v in (("--alpha", alpha), ("--alpha-tile", alpha_tile), ("--relu-param", relu_param),
                              ("--relu-tile", relu_tile)) if v is not None]
    if len(given_r) > 1:
        raise UsageError(f"{given_r[0]} and {given_r[1]} both give the activation parameter: give one of "
                         "--alpha, --alpha-tile FILE, --relu-param WORD or --relu-tile FILE")
    relu_code = int(attrs.relu_mode)
    relu_tag = f"ReluMode {attrs.relu_mode.name} ({relu_code})"
    if given_r and relu_code in (0, 1):
        raise UsageError(f"{given_r[0]}: {relu_tag} takes no activation parameter (LRELU takes --alpha, "
                         "PRELU takes --alpha, --alpha-tile or --relu-tile)")
    if not given_r and relu_code in (2, 3):
        how = "--alpha A (or --relu-param WORD)" + (", --alpha-tile FILE or --relu-tile FILE" if relu_code == 3 else "")
        raise UsageError(f"{relu_tag} takes an activation parameter: give {how}")
    for tile_opt, v in (("--relu-tile", relu_tile), ("--alpha-tile", alpha_tile)):
        if v is not None and relu_code == 2:
            raise UsageError(f"{tile_opt}: {relu_tag} takes a scalar parameter: use --alpha/--relu-param, "
                             f"not {tile_opt}")
    rword: Optional[int] = None
    if alpha is not None:
        rword = alpha_word(alpha, scale_rounding)
    elif relu_param is not None:
        rword = int_word("--relu-param", relu_param)
    if rword is not None:
        if relu_code == 3 and relu_param is not None:
            from ..fpatr.params import check_relu_param

            check_relu_param(rword, "--relu-param")
        if relu_code == 3:
            params["relu_tile"] = np.full((1, n), rword, dtype=np.uint64)
        else:
            params["relu_param"] = rword
    if relu_tile is not None:
        params["relu_tile"] = _word_tile("--relu-tile", relu_tile, n, "--alpha-tile")
    if alpha_tile is not None:
        params["relu_tile"] = _alpha_tile_words(alpha_tile, n, scale_rounding)
    if row_max_in is not None:
        rdt = {"FP32": np.float32, "S32": np.int32}.get(acc_t or "", np.uint32)
        params["row_max_in"] = read_tile("--row-max-in", row_max_in, bin_dtype=rdt, bin_shape=(m, 1))
    return TileCall(acc=acc_arr, acc_type=acc_t, attributes=attrs, rmode=rm, sat=sat, params=params, acc_source=acc)
