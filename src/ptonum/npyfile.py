"""Input ``.npy`` / ``.npz`` files checked before numpy reads them: the one place that parses a
.npy header and compares what it claims with the bytes the file holds.

The command line (``cli._tile_args.read_tile``, ``ptonum tcvt``) and the chunked inputs of
``ptonum.dask`` (``open_tile``) call :func:`check_numpy_file` before ``np.load``, so a truncated,
padded or lying file is refused with the same one-line message everywhere, before numpy allocates
anything.

No spec counterpart (file access only).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Optional, Tuple, Type

import numpy as np

from ._util import shape_text
from .errors import UsageError

__all__ = ["check_numpy_file", "numpy_read_error", "zip_errors"]

_NPY_MAGIC = b"\x93NUMPY"


def zip_errors() -> Tuple[Type[BaseException], ...]:
    """The exceptions of a damaged .npz (zipfile, zlib imported only when one is read or fails:
    CLI start-up)."""
    import zipfile
    import zlib

    return (zipfile.BadZipFile, zlib.error)


def check_numpy_file(name: str, path: Path, key: Optional[str] = None) -> None:
    """Refuse a .npy/.npz file that is not one, or whose header claims more data than the file holds,
    before numpy allocates anything; ``name`` (the option) and the path are in every message.

    For a .npy file the header's shape x itemsize must equal the bytes after the header (fewer: a
    truncated file; more: data numpy would silently ignore).  For a
    .npz file every member (or only ``KEY.npy`` when ``key`` is given) is checked the same way against
    its uncompressed size, and that size against what its compressed bytes can hold (stored: equal;
    deflate: at most 1032 x; the bytes themselves inside the archive).

    Raises:
        UsageError: not a .npy/.npz file, an unreadable or malformed header, an object array, or a
            header claiming more or less data than there is (one line: the claimed shape, dtype and
            both sizes).
    """

    suffix = path.suffix.lower()
    try:
        if suffix == ".npz":
            import zipfile

            if not zipfile.is_zipfile(path):
                raise UsageError(f"{name}: {path}: not a valid .npz file (not a zip archive of .npy arrays)")
            archive_size = path.stat().st_size
            with zipfile.ZipFile(path) as zf:
                for info in zf.infolist():
                    if not info.filename.endswith(".npy"):
                        continue
                    if key is not None and info.filename != f"{key}.npy":
                        continue
                    where = f"{path} member {info.filename}"
                    _check_zip_sizes(name, where, info, archive_size)
                    with zf.open(info) as fh:
                        _check_stream(name, where, fh, info.file_size)
            return
        with open(path, "rb") as fh:
            head = fh.read(len(_NPY_MAGIC))
            if head != _NPY_MAGIC:
                raise UsageError(f"{name}: {path}: not a valid .npy file (no NumPy header; "
                                 f"{path.stat().st_size} bytes)")
            fh.seek(0)
            _check_stream(name, str(path), fh, path.stat().st_size)
    except UsageError:
        raise
    except OSError as exc:
        raise UsageError(f"{name}: cannot read {path}: {exc.strerror or exc}") from None
    except (EOFError, ValueError, NotImplementedError, RuntimeError, *zip_errors()) as exc:  # type: ignore[misc]
        raise UsageError(f"{name}: {path}: not a valid {suffix} file ({exc})") from None


#: deflate expands at most about 1032:1 (RFC 1951 longest match per two bytes)
_DEFLATE_RATIO = 1032


def _check_zip_sizes(name: str, where: str, info: Any, archive_size: int) -> None:
    """A zip member's claimed sizes against the archive: compressed bytes inside it, and the
    uncompressed size within what those bytes can expand to."""
    import zipfile

    if info.header_offset + info.compress_size > archive_size:
        raise UsageError(f"{name}: {where}: claims {info.compress_size} compressed bytes at offset "
                         f"{info.header_offset}, but the archive has {archive_size} bytes")
    if info.compress_type == zipfile.ZIP_STORED:
        limit = info.compress_size
    elif info.compress_type == zipfile.ZIP_DEFLATED:
        limit = info.compress_size * _DEFLATE_RATIO + 1024
    else:
        return  # another compression (not written by numpy): the .npy header check still applies
    if info.file_size > limit:
        raise UsageError(f"{name}: {where}: claims {info.file_size} bytes uncompressed, more than its "
                         f"{info.compress_size} compressed bytes can hold")


def _check_stream(name: str, where: str, fh: Any, size: int) -> None:
    """Parse the .npy header at the start of ``fh`` (``size`` bytes in all) and check its claim."""
    import ast
    import struct

    magic = fh.read(8)
    if len(magic) < 8 or magic[:6] != _NPY_MAGIC:
        raise UsageError(f"{name}: {where}: not a valid .npy file (no NumPy header)")
    major = magic[6]
    if major == 1:
        raw_len = fh.read(2)
        hlen = struct.unpack("<H", raw_len)[0] if len(raw_len) == 2 else -1
        start = 10
    elif major in (2, 3):
        raw_len = fh.read(4)
        hlen = struct.unpack("<I", raw_len)[0] if len(raw_len) == 4 else -1
        start = 12
    else:
        raise UsageError(f"{name}: {where}: unsupported .npy format version {major}.{magic[7]}")
    if hlen < 0 or start + hlen > size or hlen > 1 << 20:
        raise UsageError(f"{name}: {where}: truncated .npy header ({size} bytes in the file)")
    text = fh.read(hlen)
    try:
        try:
            header = ast.literal_eval(text.decode("utf-8" if major == 3 else "latin1"))
        except ValueError as exc:  # "malformed node or string ...: <ast.Call object at 0x7f...>": no use to a reader
            raise ValueError("not a Python literal: a call, a name or an operator where numpy writes a dict of "
                             "literals") from exc
        descr, shape = header["descr"], header["shape"]
        dtype = np.lib.format.descr_to_dtype(descr)
        if not isinstance(shape, tuple) or not all(isinstance(d, int) and d >= 0 for d in shape):
            raise ValueError(f"shape {shape!r}")
    except (ValueError, SyntaxError, KeyError, TypeError, MemoryError, RecursionError) as exc:
        raise UsageError(f"{name}: {where}: malformed .npy header ({exc})") from None
    if dtype.hasobject:
        raise UsageError(f"{name}: {where} holds Python objects (an object array); ptonum reads numeric "
                         "arrays only")
    claimed = math.prod(shape) * dtype.itemsize
    available = size - start - hlen
    if claimed > available:
        raise UsageError(f"{name}: {where}: not a valid .npy file (truncated or lying header): the header "
                         f"claims {shape_text(shape)} {dtype} ({claimed} bytes) but the file holds {available} "
                         "bytes of data")
    if claimed < available:  # numpy would ignore the rest: a golden-results tool does not drop data
        raise UsageError(f"{name}: {where}: not a valid .npy file (trailing data or lying header): the header "
                         f"claims {shape_text(shape)} {dtype} ({claimed} bytes) but the file holds {available} "
                         f"bytes of data ({available - claimed} bytes after the array)")


def numpy_read_error(name: str, path: Path, exc: Exception) -> UsageError:
    """A numpy load failure as a :class:`UsageError` naming the option and the file."""
    if "allow_pickle" in str(exc):
        return UsageError(f"{name}: {path} holds Python objects (an object array); ptonum reads numeric arrays only")
    return UsageError(f"{name}: {path}: not a valid {path.suffix.lower() or 'NumPy'} file ({exc})")
