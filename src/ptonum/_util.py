"""Small shared helpers: engine selection and argument validation.

Nothing here has a spec counterpart; it keeps argument checking in one place so
every public function rejects bad input the same way (a :class:`UsageError`
naming the argument and the offending value, raised before any work).
"""

from __future__ import annotations

import functools
import os
import re
import stat
import sys
from typing import Any, Callable, Literal, Optional, Sequence, Tuple, TypeVar

import numpy as np

from .errors import UsageError

__all__ = ["Engine", "ENGINES", "check_engine", "as_bits", "check_bool", "native", "scalar_int", "as_array", "shaped", "is_digits", "digits_int", "int_text", "count_text", "shape_text", "unmasked"]

Engine = Literal["reference", "fast"]
ENGINES: Tuple[str, ...] = ("reference", "fast")


def printable(text: str) -> str:
    """``text`` with each character that is not printable written as its Python escape: a control character
    (a newline ``\\n``, the ESC of an escape sequence ``\\x1b``, DEL ``\\x7f``, a C1 code) or an invisible
    format character (``\\u202e``, which reorders what follows).  Printable text, non-ASCII included (``é``,
    ``−``), and the space stay as they are.  Every path or file text a command prints goes through it, so one
    line stays one line and a file name cannot recolour, erase, retitle or spoof the terminal."""
    if text.isprintable():
        return text
    return "".join(map(char_shown, text))


def char_shown(c: str) -> str:
    """One character as :func:`printable` shows it: itself when printable (the space included), else its
    escape (:func:`char_escape`).  The one per-character rule for text a command prints, also used by the
    command line's shell quoting."""
    return c if c.isprintable() else char_escape(c)


def char_escape(c: str) -> str:
    """One character as its escape: ``\\xNN`` for the byte of a file name that is not text in the locale's
    encoding (Python holds it as the lone surrogate U+DC80..U+DCFF, :pep:`383`), so that a shell's ``$'...'``
    gives the same byte back; Python's own escape otherwise (``\\x1b``, ``\\n``, ``\\u202e``)."""
    byte = surrogate_byte(c)
    if byte is not None:
        return f"\\x{byte:02x}"
    return c.encode("unicode_escape").decode("ascii")


def surrogate_byte(c: str) -> Optional[int]:
    """The byte that the character ``c`` stands for when it is one of :pep:`383`'s lone surrogates
    U+DC80..U+DCFF (a byte of a file name or text that did not decode, held by ``surrogateescape``), else
    None.  The one rule for showing such a byte (:func:`char_escape`) and for writing it back (the command
    line's output error handler)."""
    if "\udc80" <= c <= "\udcff":
        return ord(c) - 0xDC00
    return None


def check_engine(engine: object) -> Engine:
    """Return ``engine`` if it names an engine, else raise :class:`UsageError`.

    Source: ADR-0085 D174 (two engines, one result); no ASL counterpart (argument check).
    """
    if not isinstance(engine, str) or engine not in ENGINES:
        raise UsageError(f"engine = {engine!r}: expected one of {', '.join(ENGINES)}")
    return engine  # type: ignore[return-value]


def unmasked(name: str, value: Any, origin: Sequence[int] = ()) -> Any:
    """``value``, or the data of a numpy masked array with no masked element; a :class:`UsageError`
    naming ``name`` and the first masked element when any is masked.  ``origin``: where ``value``
    starts in the whole array ``name`` when it is one chunk of it (a dask array's block); the
    element is then named by its index in the whole array and the count is the chunk's.

    ptonum computes every element of an array (an accumulator tile has no "absent" element), so a
    masked element is refused rather than computed on from whatever its data slot holds.  Costs one
    type test for a plain array.

    Source: no ASL counterpart (argument check).
    """
    if type(value) is np.ndarray or not isinstance(value, np.ndarray):
        return value
    ma = sys.modules.get("numpy.ma")  # no masked array can exist before numpy.ma is imported
    if ma is None or not isinstance(value, ma.MaskedArray):
        return value
    mask = ma.getmaskarray(value)
    if mask.any():
        idx = tuple(int(i) for i in np.argwhere(mask)[0]) if mask.ndim else ()
        if origin:
            idx = tuple(int(o) + i for o, i in zip(origin, idx))
        what = "a chunk that is a numpy masked array" if origin else "a numpy masked array"
        raise UsageError(
            f"{name}[{', '.join(map(str, idx))}]: masked ({what} with {int(mask.sum())} of "
            f"{mask.size} elements masked); ptonum computes every element and never skips a masked one: "
            f"pass {name}.filled(v) with the value each masked element should have, or leave them out")
    return np.asarray(value.data)


def as_array(name: str, value: Any) -> np.ndarray:
    """``np.asarray(value)`` in native byte order; a :class:`UsageError` naming ``name`` when numpy
    cannot read it (ragged nested lists, ...).

    Source: no ASL counterpart (argument normalisation).
    """
    value = unmasked(name, value)
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError) as exc:
        raise UsageError(f"{name}: cannot be read as an array ({exc})") from None
    return native(arr)


def is_digits(text: str) -> bool:
    """True for a non-empty run of the ASCII digits 0-9 (``str.isdigit`` also takes other scripts'
    digits such as ``'٣'``, and superscripts).

    Source: no ASL counterpart (argument parsing).
    """
    return text.isascii() and text.isdigit()


#: an integer as the command line reads it: an optional sign, then ASCII decimal digits (leading zeros
#: allowed, still decimal) or a ``0x``/``0o``/``0b`` prefix and its digits; blanks around it ignored
_DECIMAL_INT = re.compile(r"[+-]?[0-9]+", re.ASCII)
_PREFIXED_INT = re.compile(r"[+-]?0(?:[xX][0-9a-fA-F]+|[oO][0-7]+|[bB][01]+)", re.ASCII)


def digits_int(digits: str) -> int:
    """The exact integer of a string of ASCII decimal digits of any length.  Python's ``int`` refuses
    more than 4300 digits (``sys.get_int_max_str_digits``, a guard against slow conversions); a
    longer string is split in halves, each converted and joined by a multiplication, so that a
    long decimal (``1.000...0`` with 5000 zeros) is read exactly instead of raising ValueError.

    Source: no ASL counterpart (argument parsing).
    """
    if len(digits) <= 4000:
        return int(digits, 10)
    low = len(digits) // 2
    return digits_int(digits[:-low]) * 10 ** low + digits_int(digits[-low:])


def int_text(text: str, *, decimal_only: bool = False) -> int:
    """The one rule for an integer read from text (an integer option, a word such as
    ``--quant-param``, a number inside a list or a shape): an optional sign, then ASCII decimal digits
    (``010`` is ten) or, unless ``decimal_only``, ``0x``/``0o``/``0b`` and their digits; blanks around it
    are ignored.  Raises ValueError for anything else, such as digit separators (``1_000``, which
    Python's ``int`` reads), other scripts' digits (``'٣'``, which ``int`` reads as 3) or an empty text.

    Source: no ASL counterpart (argument parsing).
    """
    s = text.strip(" \t\n\r\f\v")
    if _DECIMAL_INT.fullmatch(s):
        magnitude = digits_int(s.lstrip("+-"))
        return -magnitude if s.startswith("-") else magnitude
    if not decimal_only and _PREFIXED_INT.fullmatch(s):
        return int(s, 0)
    raise ValueError(f"{text!r}: not an integer ({'ASCII decimal digits' if decimal_only else 'ASCII decimal digits or 0x/0o/0b'}, no separators)")


def count_text(text: str) -> int:
    """A count read from text (an environment setting such as ``PTONUM_KERNEL_MIN_ELEMENTS``): ASCII
    decimal digits, an optional ``+``, blanks around ignored (:func:`int_text` with ``decimal_only``).
    Raises ValueError for anything else, a negative number included (``-5`` is no count of elements or
    MiB), so the caller keeps its default and the command line says so.

    Source: no ASL counterpart (argument parsing).
    """
    value = int_text(text, decimal_only=True)
    if value < 0:
        raise ValueError(f"{text!r}: not a whole number (a count cannot be negative)")
    return value


#: the spellings :func:`bool_text` reads (after blanks are dropped and letters lowered)
TRUE_WORDS = ("1", "true", "yes", "on")
FALSE_WORDS = ("", "0", "false", "no", "off")


def bool_text(text: str) -> bool:
    """The one rule for an on/off setting read from text (an environment variable such as
    ``PTONUM_DISABLE_NUMBA``): ``1``/``true``/``yes``/``on`` are True, ``0``/``false``/``no``/``off``
    and the empty text False, case-insensitive, blanks around ignored.  Raises ValueError for
    anything else (``maybe``, ``2``), so the caller can keep its default and say so.

    Source: no ASL counterpart (argument parsing).
    """
    s = text.strip(" \t\n\r\f\v").lower()
    if s in TRUE_WORDS:
        return True
    if s in FALSE_WORDS:
        return False
    raise ValueError(f"{text!r}: not an on/off word ({'/'.join(TRUE_WORDS)} or {'/'.join(w for w in FALSE_WORDS if w)})")


def write_protected_mode(path: Any) -> Optional[int]:
    """The permission bits of ``path`` when no one may write it (no ``w`` bit at all, e.g. ``chmod 555``),
    else None.  ptonum refuses to write into such a directory even as root, who is not stopped by the
    mode: the one test of that rule (command-line output folders, a sweep's state directory).

    Source: no ASL counterpart (file handling).
    """
    mode = stat.S_IMODE(os.stat(path).st_mode)
    return None if mode & 0o222 else mode


def shape_text(shape: Optional[Tuple[int, ...]]) -> str:
    """``(64, 48)`` -> ``64x48`` (``-`` for None, ``scalar`` for ``()``), as every message writes a shape.

    Source: no ASL counterpart (message text).
    """
    if shape is None:
        return "-"
    return "x".join(str(int(s)) for s in shape) if len(shape) else "scalar"


def shaped(shape: Tuple[int, ...], *arrays: Any) -> Tuple[np.ndarray, ...]:
    """Each of ``arrays`` as an ``np.ndarray`` of ``shape`` (a 0-d array for a scalar input's ``()``), so a
    public function returns the same documented types whichever engine computed it (numpy's element
    indexing yields numpy scalars, ``np.ascontiguousarray`` turns 0-d into 1-d).  An array already of
    that shape is returned as is; otherwise a view or a 0-d wrap (no copy of the data).

    Source: no ASL counterpart (result normalisation).
    """
    return tuple(a if type(a) is np.ndarray and a.shape == shape else np.asarray(a).reshape(shape)
                 for a in arrays)


def native(arr: np.ndarray) -> np.ndarray:
    """``arr`` in the machine's byte order (a converted copy only when it is byte-swapped, e.g. ``'>f4'``).

    Every public function reads arrays through this, so a big-endian input
    gives the result of the same values in native order.

    Source: no ASL counterpart (argument normalisation).
    """
    if arr.dtype.isnative:
        return arr
    return arr.astype(arr.dtype.newbyteorder("="))


def scalar_int(value: Any) -> Any:
    """``value`` as a Python ``int`` when it is one integer (int, numpy integer, 0-d integer array),
    else ``None``; booleans are not integers here.

    Source: no ASL counterpart (argument normalisation for codes and enumerations).
    """
    if isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iu":
        return int(value)
    return None


def check_bool(name: str, value: Any) -> bool:
    """Accept ``True/False/0/1`` (numpy bools too); anything else is a UsageError.

    Source: ADR-0085 D175/D178 (the B.FPATR enables and the B.DATR Sat bit are single bits); no
    ASL counterpart (argument check).
    """
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)) and int(value) in (0, 1):
        return bool(int(value))
    raise UsageError(f"{name} = {value!r}: expected a boolean (True/False or 0/1)")


def as_bits(name: str, value: Any, width: int) -> np.ndarray:
    """Validate raw encodings and return them as a ``uint64`` array.

    ``value`` may be a Python int, a sequence of ints or an integer numpy array
    (signed arrays are accepted when every element is non-negative).  Every
    element must fit in ``width`` bits.  Floats, bools, strings and objects are
    rejected: raw encodings are integers.

    Raises :class:`UsageError` naming ``name``, the first offending element
    (its index and value) and the width.

    Source: ADR-0085 D174 (operands are raw encodings, ``bits(N)`` in the ASL); no ASL counterpart
    (argument check).
    """
    if type(value) is int and 0 <= value and not value >> width:  # one encoding that fits (the common small call)
        return np.array(value, dtype=np.uint64)
    if isinstance(value, (bool, np.bool_)):
        raise UsageError(f"{name} = {value!r}: expected integer encodings, got a boolean")
    if isinstance(value, (int, np.integer)):
        iv = int(value)
        if iv < 0:
            raise UsageError(f"{name} = {iv}: raw encodings are unsigned {width}-bit patterns; "
                             f"pass {iv} & {(1 << width) - 1:#x} = {iv & ((1 << width) - 1):#x} for its two's-complement bits")
        if iv >> width:
            raise UsageError(f"{name} = {iv:#x}: does not fit in {width} bits")
        return np.asarray(iv, dtype=np.uint64)
    value = unmasked(name, value)
    try:
        arr = np.asarray(value)
    except Exception as exc:  # pragma: no cover - numpy raises many types here
        raise UsageError(f"{name}: cannot be read as an integer array ({exc})") from None
    if arr.dtype == object:
        try:
            ints = [int(v) for v in arr.ravel()]
        except (TypeError, ValueError):
            raise UsageError(f"{name}: expected integer encodings, got dtype object with non-integers") from None
        if any(isinstance(v, bool) for v in arr.ravel()):
            raise UsageError(f"{name}: expected integer encodings, got booleans")
        for i, v in enumerate(ints):
            if v < 0 or v >> width:
                pos = np.unravel_index(i, arr.shape) if arr.ndim else ()
                raise UsageError(f"{name}[{', '.join(map(str, pos))}] = {v:#x}: does not fit in {width} bits")
        return np.array(ints, dtype=np.uint64).reshape(arr.shape)
    if arr.dtype.kind not in "iu":
        raise UsageError(
            f"{name}: expected integer encodings (a uint/int array), got dtype {arr.dtype}"
        )
    if arr.size:
        if arr.dtype.kind == "i":
            bad = arr < 0
            if width < 64:
                bad = bad | (arr.astype(np.int64) >> np.int64(min(width, 63)) != 0)
        else:
            bad = (arr.astype(np.uint64) >> np.uint64(width)) != 0 if width < 64 else np.zeros(arr.shape, bool)
        if np.any(bad):
            idx = tuple(int(i) for i in np.argwhere(bad)[0])
            v = int(arr[idx])
            where = f"[{', '.join(map(str, idx))}]" if arr.ndim else ""
            if v < 0:
                raise UsageError(
                    f"{name}{where} = {v}: raw encodings are unsigned {width}-bit patterns; "
                    f"reinterpret signed values first (e.g. np.asarray(x, np.int{width if width in (8, 16, 32, 64) else 64})"
                    f".view(np.uint{width if width in (8, 16, 32, 64) else 64}))"
                )
            raise UsageError(f"{name}{where} = {v:#x}: does not fit in {width} bits")
    return arr.astype(np.uint64, copy=False)


_R = TypeVar("_R")


def remembered(fn: Callable[..., _R], maxsize: int) -> Callable[..., _R]:
    """``fn`` with its results remembered per spelling of its (positional) arguments, for argument
    parsing that would otherwise cost a small call more than its work.  ``typed``: ``1`` and ``True``
    are separate entries; a call that raises is never remembered (it raises every time); a call with an
    unhashable argument (e.g. a 0-d array) runs ``fn`` every time.  ``fn`` must return an immutable value.
    """
    cached = functools.lru_cache(maxsize=maxsize, typed=True)(fn)

    @functools.wraps(fn)
    def call(*args: Any) -> _R:
        try:
            return cached(*args)
        except TypeError:  # an unhashable argument
            return fn(*args)

    return call
