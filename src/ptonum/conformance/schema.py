"""Vector-file schemas: one per operation (= one per vector file).

A schema knows a file's columns, how to parse a whole file into numpy columns
(vectorized: a 1.9M-row file parses in a few seconds), how to run the model on a
batch of rows in a given engine (grouped by the scalar parameters, so the fast
engine sees a few large vectorized calls), how to compare the model with the
expected columns, and how to write rows back (used by ``ptonum gen``).

The file format is the one of the shared ASL vectors (``vectors/README.md``):
gzip-compressed or plain CSV, a header row, ``0x``-prefixed hex fields, ``rmode``
as a name (RNE RTM RTP RTZ RNA RTO RHB), ``sat``/booleans as 0/1, flags as the
5-bit NV DZ OF UF NX value.

Nothing here computes a numeric result: every expected value comes from the
model functions named in ``docs/design.md`` (imported lazily, so the schemas
can be used for parsing before the model is importable).
"""

from __future__ import annotations

import gzip
import inspect
import io
import os
import re
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Generator, List, Optional, Sequence, Tuple

import numpy as np

from .._util import int_text, printable, surrogate_byte
from ..errors import PtonumError, UsageError, short_text
from ..flags import flag_names
from ..formats import TileDataType
from ..publish import Publication
from ..rounding import RoundingMode

__all__ = [
    "builtin_vectors_dir",
    "builtin_vector_files",
    "Column",
    "Schema",
    "SCHEMAS",
    "ParsedFile",
    "RunResult",
    "schema_for",
    "detect_schema",
    "closest_schema",
    "header_columns",
    "header_difference",
    "same_columns",
    "unquote_lines",
    "read_text",
    "read_text_through",
    "read_text_rows",
    "describe_content",
    "TILE_FILE",
    "parse_text",
    "parse_file",
    "write_rows",
    "dst_hex_digits",
]

Batch = Dict[str, np.ndarray]


# --------------------------------------------------------------------------
# Columns
# --------------------------------------------------------------------------

#: Column kinds: ``hex`` (0x-prefixed, up to ``width`` bits, stored uint64),
#: ``dec`` (signed decimal, int64), ``bool`` (0/1), ``rmode`` (RoundingMode
#: name, stored as the B.DATR code), ``dtype`` (Tile DataType name, stored as the
#: code).
KINDS = ("hex", "dec", "bool", "rmode", "dtype")



def builtin_vectors_dir() -> Path:
    """The folder of the ASL conformance vectors shipped inside the package (``ptonum/data/vectors``).

    The files are the ones of pto-spec commit e599a3d3 computed by ASLRef (provenance and schema in
    the folder's ``README.md``); they are installed with the package, so a clone or a
    ``pip install`` is enough to run ``ptonum check --builtin`` and the tests.
    """
    return Path(__file__).resolve().parents[1] / "data" / "vectors"


def builtin_vector_files() -> List[Path]:
    """Every shipped vector file (the ``*.csv.gz`` files, then ``tiles.json.gz``), sorted by name.

    Raises :class:`UsageError` when the folder holds none (a broken installation).
    """
    folder = builtin_vectors_dir()
    files = sorted(folder.glob("*.csv.gz")) + sorted(folder.glob("*.json.gz"))
    if not files:
        raise UsageError(f"no built-in vector files in {folder} (broken installation?)")
    return files

@dataclass(frozen=True)
class Column:
    name: str
    kind: str
    width: int = 64  #: bits, for ``hex`` validation
    expected: bool = False  #: an expected (output) column
    digits: Optional[int] = None  #: fixed hex digits when writing; None = per-row rule
    choices: Optional[Tuple[str, ...]] = None  #: legal names for ``dtype`` columns
    lo: Optional[int] = None  #: legal range of ``dec`` columns
    hi: Optional[int] = None


_RMODE_NAMES = {m.name: int(m) for m in RoundingMode if m is not RoundingMode.NONE}
_RMODE_BY_CODE = {v: k for k, v in _RMODE_NAMES.items()}
_DTYPE_NAMES = {m.name: int(m) for m in TileDataType}
_DTYPE_UPPER = {k.upper(): v for k, v in _DTYPE_NAMES.items()}
_DTYPE_BY_CODE = {int(m): m.name for m in TileDataType}

_HEX_DIGITS_BY_TYPE = {
    "FP32": 8, "S32": 8, "U32": 8, "FP16": 4, "BF16": 4, "S16": 4,
    "S8": 2, "E4M3": 2, "HiF8": 2, "S4X2": 1, "E8M0": 2,
}


def dst_hex_digits(type_name: str) -> int:
    """Hex digits of a destination element at its own width (S4X2 element: 1)."""
    return _HEX_DIGITS_BY_TYPE[type_name]


# --------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------


#: memory a vector or tile file needs while it is parsed and checked, per byte and per line of its text,
#: used to refuse a file before it exhausts the machine.  Measured (peak RSS): 15-25 bytes per byte for the
#: shipped files in the column and the line-by-line parsers, 25 per byte for blank lines (50 MB of them: 1.3 GiB);
#: a line that is not blank costs offsets and list slots (64), a malformed line up to ~700 (its text, pieces and
#: message are kept); a blank line holds no row and costs only its bytes (:func:`_check_parse_memory`).
PARSE_BYTES_PER_BYTE = 26
PARSE_BYTES_PER_LINE = 64
PARSE_BYTES_PER_BAD_LINE = 720


def _available_memory() -> int:
    import psutil

    return int(psutil.virtual_memory().available)


def _gib(n: int) -> str:
    return f"{n / 2**30:.1f} GiB"


#: the first two bytes of every gzip member (RFC 1952)
_GZIP_MAGIC = b"\x1f\x8b"


def _is_gzip_start(raw: bytes) -> bool:
    """True when ``raw`` is read as gzip: it begins with the gzip magic ``1f 8b``, or it is a non-empty proper
    prefix of it (``1f`` alone: a gzip file cut short inside its magic).  A file that begins with ``1f`` and
    then another byte is not gzip at all and is read as text."""
    return bool(raw) and raw[:2] == _GZIP_MAGIC[:len(raw[:2])]


_ZLIB_PREFIX = re.compile(r"^Error -?\d+ while (?:decompressing data|preparing to decompress data): ")


def _gzip_damaged(path: "str | Path", member: int, exc: Exception) -> UsageError:
    """The error for gzip data zlib refused (in member ``member``, 1-based)."""
    where = f" in gzip member {member}" if member > 1 else ""
    return UsageError(f"{path}: not a readable gzip file (damaged{where}: {_ZLIB_PREFIX.sub('', str(exc))})")


def _gzip_truncated(path: "str | Path", size: int) -> UsageError:
    """The error for a gzip file of ``size`` bytes that ends inside its gzip data."""
    return UsageError(f"{path}: not a readable gzip file (truncated: the file ends after {size} "
                      f"byte{'' if size == 1 else 's'}, inside its gzip data)")


def _gunzip(raw: bytes, limit: int, path: "str | Path") -> bytes:
    """The text of the gzip file ``raw`` (every member, as ``gzip`` and ``zcat`` read them), decompressed up to
    ``limit + 1`` bytes (more than ``limit`` means "too large": the caller refuses it).

    One rule tells a truncated file from a damaged one, by its bytes: zlib's gzip decoder is given the rest of
    the file, one member at a time; when it takes every byte without an error and has still not reached the end
    of the member (its header, deflate data and CRC/length trailer), the file was cut short -- in its magic (``1f``), its header
    (``1f 8b 08``, the first 10 bytes), its data or its trailer.  An error from the decoder (a wrong method,
    flag, block, CRC or length, or data after a member that is not another member) means damaged data.  Zero
    bytes after a member are padding and skipped, as ``gzip`` does.

    Raises :class:`UsageError` naming ``path``: ``not a readable gzip file (truncated: ...)`` or
    ``not a readable gzip file (damaged: ...)``.
    """
    pieces: List[bytes] = []
    total = 0
    rest: "bytes | memoryview" = memoryview(raw)
    member = 1
    while True:
        decoder = zlib.decompressobj(16 + zlib.MAX_WBITS)  # gzip wrapper only: header, data, CRC-32 and length
        try:
            piece = decoder.decompress(rest, limit + 1 - total)
        except zlib.error as exc:
            raise _gzip_damaged(path, member, exc) from None
        pieces.append(piece)
        total += len(piece)
        if total > limit:  # stopped at limit + 1 bytes of text: too large, whatever follows
            break
        if not decoder.eof:  # every byte taken, no error, and the member has not ended: the file was cut short
            raise _gzip_truncated(path, len(raw))
        rest = decoder.unused_data.lstrip(b"\x00")
        if not rest:
            break
        member += 1
    return pieces[0] if len(pieces) == 1 else b"".join(pieces)


def read_text(path: "str | Path", name: Optional[str] = None) -> bytes:
    """Return the raw bytes of a vector file, gunzipping when it is gzip.

    A file is read whole, so one whose text would need more memory to parse than the machine has
    available is refused before that memory is taken: a gzip file is decompressed only up to that budget, so a small
    file that expands without bound (a "gzip bomb") raises instead of bringing the machine down.  The need
    is :data:`PARSE_BYTES_PER_BYTE` per byte plus :data:`PARSE_BYTES_PER_LINE` per line, or
    :data:`PARSE_BYTES_PER_BAD_LINE` per line if more (every line malformed).

    Raises :class:`UsageError` (path and reason) for an unreadable file, gzip data that is truncated or
    damaged (one rule, :func:`_gunzip`; a file that is only ``1f``, a prefix of the magic, is gzip cut short),
    UTF-32 text (by its byte-order mark: UTF-8 and UTF-16 are read), or text too large for the available memory.  ``name`` is what the messages call the file when it is not ``path``
    (``-`` for standard input read through ``/dev/stdin``, as the parse errors and reports call it).
    """
    if not str(path).strip():
        raise UsageError("vector file: the path is empty; give a file name")
    p = Path(path)
    if name is not None:
        path = name
    available = _available_memory()
    budget = available // PARSE_BYTES_PER_BYTE
    if str(p) == "/dev/stdin" and not _fd_open(0):  # `<&-`: /dev/stdin names no file ("No such file or directory")
        raise UsageError(f"{path}: standard input is closed (started with <&-): there is nothing to read; "
                         "redirect a file into it (< FILE) or give the file's name")
    try:
        size = p.stat().st_size
    except OSError as exc:
        raise UsageError(f"{path}: cannot read vector file ({exc.strerror or exc})") from None
    if size > budget:
        raise UsageError(f"{path}: {_gib(size)} of text needs about {_gib(size * PARSE_BYTES_PER_BYTE)} of memory "
                         f"to parse; {_gib(available)} is available (a file is read whole: split it)")
    _peek_header(p, path)  # a header line too long for any schema: refused before the file is read whole
    raw = _read_bounded(p, path, budget, available)
    if _is_gzip_start(raw):
        raw = _gunzip(raw, budget, path)
        if len(raw) > budget:
            raise UsageError(f"{path}: decompresses to more than {_gib(budget)} of text, and parsing that much needs "
                             f"more than the {_gib(available)} of memory available (a file is read whole: split it)")
    return _finish_text(raw, path, available)


#: bytes read from a file (and text decompressed) at a time by :func:`read_text_through`
_STREAM_CHUNK = 1 << 20


def _fd_open(fd: int) -> bool:
    """Whether file descriptor ``fd`` is open in this process."""
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def _read_bounded(p: Path, path: "str | Path", budget: int, available: int) -> bytes:
    """The bytes of ``p``, read whole.  A regular file's size was checked against ``budget`` (its stat); a pipe or a
    device (standard input, ``/dev/zero``, a FIFO) tells no size, so it is read a piece at a time and refused
    (:class:`UsageError` naming ``path``) as soon as it holds more than ``budget`` bytes, before the memory its
    parse would need is taken (was: read whole, without bound, until the OOM killer ended the command).  Also
    raises :class:`UsageError` for a read error."""
    import stat

    try:
        with p.open("rb") as f:
            if stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                return f.read()
            pieces: List[bytes] = []
            total = 0
            while True:
                piece = f.read(min(_STREAM_CHUNK, budget + 1 - total))
                if not piece:
                    return b"".join(pieces)
                pieces.append(piece)
                total += len(piece)
                if total > budget:
                    raise UsageError(f"{path}: more than {_gib(budget)} of text, and parsing that much needs more than "
                                     f"the {_gib(available)} of memory available (it is read whole: split it)")
    except OSError as exc:
        raise UsageError(f"{path}: cannot read vector file ({exc.strerror or exc})") from None

#: ASCII whitespace as :meth:`bytes.lstrip` strips it (the blank lines before a header)
_BLANK_BYTES = b" \t\n\r\x0b\x0c"

#: the blanks :meth:`bytes.lstrip` strips at the start of a text, matched without copying the text
_BLANKS = re.compile(rb"[ \t\n\r\x0b\x0c]*")

#: a line end (LF, or the CR of CR LF and of CR-only text)
_LINE_END = re.compile(rb"[\r\n]")

#: the longest header line read, in bytes: a schema's header is under 200 bytes, and with a ``source`` and a
#: ``comment`` column, quotes and blanks well under this; a longer first line is refused after this many bytes,
#: without reading the rest of it or comparing it with the schemas
HEADER_MAX_BYTES = 4096

#: characters of a refused header line shown in its message
_HEADER_SHOWN = 40


def _check_header_length(text: bytes, path: "str | Path", first_line: int = 1) -> None:
    """Refuse (:class:`UsageError` naming ``path`` and the line) CSV text whose header line, the first line that is
    not blank, is longer than :data:`HEADER_MAX_BYTES`: it is no vector file's header, and reading all of it (a
    file of hundreds of MB with no line break) or comparing it with every schema would take long.  ``text`` is the
    file's text or its beginning (after a UTF-8 byte-order mark); the work is bounded (only the blanks before the
    header and :data:`HEADER_MAX_BYTES` after them are looked at), and a beginning too short to tell passes.  The
    message shows the line's first characters, escaped, not the line.  Text that is not CSV (a tile file's JSON
    list, binary data, UTF-16) passes: other messages name it.  ``first_line`` is the file's line ``text`` begins."""
    if describe_content(text[:4096]) is not None:
        return
    start = _BLANKS.match(text).end()  # type: ignore[union-attr]  # (always matches)
    if len(text) - start <= HEADER_MAX_BYTES or _LINE_END.search(text, start, start + HEADER_MAX_BYTES + 1):
        return
    blank = text[:start]
    line = (blank.count(b"\n") if b"\n" in blank or b"\r" not in blank else blank.count(b"\r")) + first_line
    shown = printable(text[start:start + _HEADER_SHOWN].decode("utf-8", "surrogateescape"))
    raise UsageError(f"{path}:{line}: header line longer than {HEADER_MAX_BYTES} bytes (it begins '{shown}...'): "
                     f"not a vector file's header, which names a schema's columns (such as "
                     f"{SCHEMAS['relu_param_legal'].header()}) on one line")


def _peek_header(p: Path, path: "str | Path") -> None:
    """:func:`_check_header_length` on the beginning of the regular file ``p`` (its text: gunzipped when it is
    gzip), read before the whole file is; a file that cannot be read, a pipe, or gzip data zlib refuses passes (the
    whole read says why)."""
    import stat

    try:
        if not stat.S_ISREG(p.stat().st_mode):
            return
        with p.open("rb") as f:
            head = f.read(4 * HEADER_MAX_BYTES)
            if _is_gzip_start(head):
                head += f.read(1 << 16)
                try:
                    head = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, 4 * HEADER_MAX_BYTES)
                except zlib.error:
                    return
    except OSError:
        return
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    _check_header_length(head, path)


def _text_chunks(p: Path, path: "str | Path") -> Generator[bytes, None, None]:
    """The text of the file ``p`` in pieces, gunzipped (every member) when it is gzip, read as it is needed: the
    rule of :func:`_gunzip` for a truncated or damaged file, applied to the bytes read so far (data after the
    text a reader takes is never read).  ``path`` is what the messages call the file."""
    try:
        f = p.open("rb")
    except OSError as exc:
        raise UsageError(f"{path}: cannot read vector file ({exc.strerror or exc})") from None
    with f:
        def more() -> bytes:
            try:
                return f.read(_STREAM_CHUNK)
            except OSError as exc:
                raise UsageError(f"{path}: cannot read vector file ({exc.strerror or exc})") from None

        head = more()
        while len(head) < 2:  # enough to tell gzip (a pipe may give less than asked)
            got = more()
            if not got:
                break
            head += got
        size = len(head)
        if not _is_gzip_start(head):
            while head:
                yield head
                head = more()
            return
        rest = head
        member = 1
        while True:
            decoder = zlib.decompressobj(16 + zlib.MAX_WBITS)
            while not decoder.eof:
                if not rest:
                    rest = more()
                    size += len(rest)
                    if not rest:  # every byte taken, no error, and the member has not ended: cut short
                        raise _gzip_truncated(path, size)
                try:
                    piece = decoder.decompress(rest, _STREAM_CHUNK)
                except zlib.error as exc:
                    raise _gzip_damaged(path, member, exc) from None
                rest = decoder.unconsumed_tail
                if piece:
                    yield piece
            rest = decoder.unused_data.lstrip(b"\x00")
            while not rest:  # zero bytes after a member are padding
                got = more()
                if not got:
                    return
                size += len(got)
                rest = got.lstrip(b"\x00")
            member += 1


def _check_parse_memory(text: bytes, path: "str | Path", available: int, hint: str) -> None:
    """Refuse ``text`` (:class:`UsageError` naming ``path``, ``hint`` after the message) when parsing it needs more
    than the ``available`` memory (:data:`PARSE_BYTES_PER_BYTE` a byte plus :data:`PARSE_BYTES_PER_LINE` a line,
    or :data:`PARSE_BYTES_PER_BAD_LINE` a line when every row is malformed).  A blank line holds no row, malformed
    or not: it costs only its bytes.  The lines are first all counted (cheap); only when that estimate is too
    large are the blank ones told apart (:func:`_nonblank_lines`), so that 50 MB of blank lines is not refused
    as 50 million malformed rows (33.5 GiB) but needs its 1.2 GiB."""
    lines = text.count(b"\n")
    need = max(len(text) * PARSE_BYTES_PER_BYTE + lines * PARSE_BYTES_PER_LINE, lines * PARSE_BYTES_PER_BAD_LINE)
    if need <= available:
        return
    rows = _nonblank_lines(text)
    need = max(len(text) * PARSE_BYTES_PER_BYTE + rows * PARSE_BYTES_PER_LINE, rows * PARSE_BYTES_PER_BAD_LINE)
    if need > available:
        blank = f" ({rows} not blank)" if rows != lines else ""
        raise UsageError(f"{path}: {len(text)} bytes of text in {lines} lines{blank} need about {_gib(need)} of "
                         f"memory to parse; {_gib(available)} is available{hint}")


#: the characters :meth:`str.strip` strips that are ASCII (a line of only these is blank)
_ASCII_SPACE = " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f"

#: the bytes of a blank line other than its newline: the ASCII blanks str.strip strips (:data:`_ASCII_SPACE`)
_BLANK_BYTE = np.zeros(256, dtype=bool)
_BLANK_BYTE[[ord(c) for c in _ASCII_SPACE if c != "\n"]] = True


def _nonblank_lines(text: bytes) -> int:
    """The lines of ``text`` that hold a byte other than an ASCII blank (the others are blank lines, no row), the
    last one counted whether or not a newline ends it.  Read 16 MiB at a time: a few bytes of memory per byte of
    a piece, not of the text.  (A line of quotes only, ``""``, is counted: an estimate may only be too large.)"""
    view = np.frombuffer(text, dtype=np.uint8)
    count = 0
    open_line = False  # the line that runs into the next piece has a byte that is not blank
    step = 16 * _STREAM_CHUNK
    for start in range(0, view.size, step):
        piece = view[start:start + step]
        kept = piece[~_BLANK_BYTE[piece]]  # the newlines and the bytes that are not blank, in order
        if not kept.size:
            continue
        newline = kept == 10
        after_text = np.empty(kept.size, dtype=bool)  # the byte kept before it is not a newline
        after_text[0] = open_line
        after_text[1:] = ~newline[:-1]
        count += int(np.count_nonzero(newline & after_text))
        open_line = not bool(newline[-1])
    return count + int(open_line)


def _finish_text(raw: bytes, path: "str | Path", available: int) -> bytes:
    """The text ``raw`` read from a file as :func:`read_text` returns it: refused when parsing it needs more than
    the ``available`` memory, a UTF-8 byte-order mark dropped, UTF-16 text (by its mark) decoded, UTF-32 refused."""
    _check_parse_memory(raw, path, available, " (a file is read whole: split it)")
    if raw.startswith(b"\xef\xbb\xbf"):  # a UTF-8 byte-order mark before the header
        raw = raw[3:]
    elif raw.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):  # UTF-32's mark (its LE one begins as UTF-16's)
        raise UsageError(f"{path}: UTF-32 text (by its byte-order mark); save it as UTF-8, or as UTF-16 with its mark")
    elif raw.startswith((b"\xff\xfe", b"\xfe\xff")):  # UTF-16 with its mark ("Unicode text" of a spreadsheet)
        try:
            raw = raw.decode("utf-16").encode("utf-8")
        except UnicodeDecodeError as exc:
            raise UsageError(f"{path}: UTF-16 text (by its byte-order mark) that does not decode: {exc.reason} at "
                             f"byte {exc.start}") from None
    return raw


def _unquoted(line: bytes) -> bytes:
    return unquote_lines(line) if b'"' in line else line


def _is_data_line(line: bytes) -> bool:
    """A line after the header that :func:`parse_text` reads as a data row (well-formed or not): not blank once
    its quoted fields are read."""
    return bool(_unquoted(line).decode("ascii", errors="replace").strip())


#: bytes other than the newline that :meth:`str.strip` may strip (a line holding only these is blank) and the quote
_SPECIAL_BYTES = tuple(c.encode("ascii") for c in _ASCII_SPACE + '"' if c != "\n")


def _data_lines(block: bytes) -> int:
    """The data rows among the complete lines ``block`` (each ending ``\\n``) after a file's header."""
    if b"\r" in block:  # a line ending CR LF is blank as the line without its CR
        block = block.replace(b"\r\n", b"\n")
    if not any(c in block for c in _SPECIAL_BYTES):  # only empty lines are blank
        if b"\n\n" not in block and not block.startswith(b"\n"):
            return block.count(b"\n")
        b = np.frombuffer(block, dtype=np.uint8)
        nl = np.flatnonzero(b == 10)
        starts = np.concatenate(([0], nl[:-1] + 1))
        return int(np.count_nonzero(nl > starts))
    return sum(_is_data_line(ln) for ln in block.split(b"\n")[:-1])


def _read_head(path: "str | Path", name: Optional[str], line: Optional[int],
               rows: Optional[int]) -> Tuple[bytes, bool, int]:
    """The text of a vector file through its line ``line`` (and its header line), or through its header and first
    ``rows`` data rows, read only as far as that (with ``rows`` the data rows after them are counted, their text
    not kept).  Returns ``(text, whole, more)``: ``whole`` when the whole file was read (it ended first, or its
    first 4096 bytes are not CSV text, or it is UTF-16/32 by its mark): ``text`` is then what :func:`read_text`
    returns; else ``text`` is the file's first lines (without a UTF-8 byte-order mark) and ``more`` the data rows
    counted after them."""
    if not str(path).strip():
        raise UsageError("vector file: the path is empty; give a file name")
    shown = path if name is None else name
    available = _available_memory()
    budget = available // PARSE_BYTES_PER_BYTE
    buf = bytearray()
    whole_read = False  # read to the end whatever follows (not CSV text, UTF-16/32)
    base: Optional[int] = None  # where the text begins (after a UTF-8 mark), once the first bytes were looked at
    done = 0  # offset up to which complete lines were taken
    nlines = 0  # complete lines taken
    header = False  # the header line was taken
    data = 0  # data rows among the lines taken after the header
    cut: Optional[int] = None
    more = 0
    dropped = 0  # lines left out between the header and ``line``
    carry = b""
    chunks = _text_chunks(Path(path), shown)
    try:
        for piece in chunks:
            if cut is not None:  # counting the data rows after the text taken, a line at a time
                piece = carry + piece
                end = piece.rfind(b"\n") + 1
                more += _data_lines(piece[:end])
                carry = piece[end:]
                continue
            buf += piece
            if len(buf) > budget:
                raise UsageError(f"{shown}: the text read is more than {_gib(budget)}, and parsing that much needs "
                                 f"more than the {_gib(available)} of memory available")
            if whole_read:
                continue
            if base is None:
                if len(buf) < 4096 + 3:
                    continue
                base = 3 if buf.startswith(b"\xef\xbb\xbf") else 0
                if buf.startswith((b"\xff\xfe", b"\xfe\xff")) or describe_content(
                        bytes(buf[base:base + 4096])) is not None:
                    whole_read = True
                    continue
                done = base
            if not header:  # a header line too long for any schema: refused before more of it is read
                _check_header_length(bytes(buf[done:done + 4 * HEADER_MAX_BYTES]), shown, nlines + 1)
            end = buf.rfind(b"\n") + 1
            while not header and done < end:  # the header, after any blank lines
                stop = buf.index(b"\n", done) + 1
                nlines += 1
                header = bool(_unquoted(bytes(buf[done:stop])).strip())
                done = stop
            if not header:
                continue
            if line is not None and nlines >= line:
                cut = done
            elif done < end:
                block = bytes(buf[done:end])
                if line is not None:  # the lines between the header and that line are counted, not kept
                    n = block.count(b"\n")
                    if nlines + n < line:
                        nlines += n
                        dropped += n
                        del buf[done:end]
                        continue
                    at = -1
                    for _ in range(line - nlines - 1):
                        at = block.index(b"\n", at + 1)
                    dropped += line - nlines - 1
                    cut = done + block.index(b"\n", at + 1) + 1
                    del buf[done:done + at + 1]
                    cut -= at + 1
                else:
                    assert rows is not None
                    n = _data_lines(block)
                    if data + n < rows:
                        data += n
                        done = end
                        continue
                    start = 0
                    while data < rows:
                        stop = block.index(b"\n", start) + 1
                        data += _is_data_line(block[start:stop])
                        start = stop
                    cut = done + start
            elif rows is not None and rows == 0:
                cut = done
            if cut is not None:
                if line is not None:
                    break
                rest = bytes(buf[cut:])
                del buf[cut:]
                end = rest.rfind(b"\n") + 1
                more += _data_lines(rest[:end])
                carry = rest[end:]
    finally:
        chunks.close()
    if cut is None and dropped:  # the file ended before that line ends: the lines left out are gone
        assert base is not None
        tail = bytes(buf[done:])
        if not (header and line is not None and nlines + 1 == line and tail):
            tail = b""  # no line ``line`` (the caller reads the whole file to say how many there are)
        return bytes(buf[base:done]) + tail, False, dropped
    if cut is None:  # the whole file
        return _finish_text(bytes(buf), shown, available), True, 0
    if carry:
        more += _is_data_line(carry)
    assert base is not None
    text = bytes(buf[base:cut])
    _check_parse_memory(text, shown, available, "")
    return text, False, more if line is None else dropped


def read_text_through(path: "str | Path", line: int, name: Optional[str] = None) -> Tuple[bytes, bool, int]:
    """The text of a vector file through its header line and then its line ``line`` (1-based), read only as far
    as that, the lines between them counted but left out: ``(text, whole, dropped)``, ``dropped`` the lines left
    out (a line of ``text`` after the header is the file's line ``dropped`` further on).  ``whole`` when the
    whole file was read (it ended first, or its first 4096 bytes are not CSV text, or it is UTF-16/32 by its
    byte-order mark): ``text`` is then what :func:`read_text` returns and ``dropped`` 0.  When the file ends
    before line ``line`` after lines were left out, ``text`` is its text through the header (``whole`` False).
    A gzip file truncated or damaged after that line is not found out.  Raises :class:`UsageError` as
    :func:`read_text` does."""
    return _read_head(path, name, line, None)


def read_text_rows(path: "str | Path", rows: int, name: Optional[str] = None) -> Tuple[bytes, int]:
    """The text of a vector file through its header and first ``rows`` data rows (lines that are not blank), read
    as far as that, and how many data rows follow them, counted (their text is not kept): ``(text, more)``;
    ``text`` is what :func:`read_text` returns when the file has no more than ``rows`` data rows (or is not
    CSV text, or is UTF-16/32 by its byte-order mark).  Raises :class:`UsageError` as :func:`read_text` does."""
    text, _, more = _read_head(path, name, None, rows)
    return text, more


@dataclass
class ParsedFile:
    """A parsed vector file.

    ``rows`` holds one numpy array per column for the *well-formed* rows only;
    ``lines`` their 1-based line numbers in the file; ``bad`` the malformed rows
    as ``(line, message)``; ``total`` the number of data rows (good + bad).
    """

    path: str
    schema: "Schema"
    rows: Batch
    lines: np.ndarray
    bad: List[Tuple[int, str]]
    total: int
    #: the extra columns of each data line (1-based line -> {"source": ..., "comment": ...}); empty without them
    extras: Dict[int, Dict[str, str]] = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.lines.size)

    def take(self, idx: np.ndarray) -> Batch:
        return {k: v[idx] for k, v in self.rows.items()}



def _split_lines(raw: bytes) -> Tuple[str, List[str], List[int]]:
    """Split into header and data lines, keeping 1-based line numbers (blank lines skipped)."""
    text = raw.decode("utf-8", "surrogateescape")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    lines = [ln[:-1] if ln.endswith("\r") else ln for ln in lines]
    if not lines:
        return "", [], []
    header = lines[0]
    data = []
    numbers = []
    for i in range(1, len(lines)):
        if lines[i].strip(_ASCII_SPACE) == "":  # (the blanks of a line read as ASCII, as _data_lines counts it)
            continue
        data.append(lines[i])
        numbers.append(i + 1)
    return header, data, numbers


def _fast_columns(raw: bytes, ncols: int) -> Optional[Tuple[str, List[List[str]], int]]:
    """Column split without a per-line Python loop; ``None`` if any line is irregular."""
    b = np.frombuffer(raw, dtype=np.uint8)
    if b.size == 0 or np.any(b == 13):
        return None
    nl = np.flatnonzero(b == 10)
    if nl.size == 0:
        return None
    end = len(raw)
    if nl[-1] != end - 1:  # no final newline: treat as if there were one
        nl = np.append(nl, end)
    starts = np.concatenate(([0], nl[:-1] + 1))
    if np.any(nl - starts == 0):  # blank line somewhere
        return None
    commas = np.flatnonzero(b == 44)
    before = np.searchsorted(commas, nl)
    per_line = np.diff(np.concatenate(([0], before)))
    if np.any(per_line[1:] != ncols - 1):
        return None
    header = raw[: nl[0]].decode("utf-8", "surrogateescape")
    body = raw[nl[0] + 1 : end].decode("utf-8", "surrogateescape")
    if body.endswith("\n"):
        body = body[:-1]
    nrows = int(nl.size - 1)
    if nrows == 0:
        return header, [[] for _ in range(ncols)], 0
    toks = body.replace("\n", ",").split(",")
    if len(toks) != nrows * ncols:
        return None
    return header, [toks[i::ncols] for i in range(ncols)], nrows


def _parse_hex(col: Sequence[str], width: int, separators: bool = False) -> Tuple[np.ndarray, Dict[int, str]]:
    """A column of ``0x`` hex words; ``separators``: the file holds a ``_`` somewhere, so each element
    is checked for digit separators (``int`` reads ``0x1_0``; the command line's integers refuse them)."""
    bad: Dict[int, str] = {}
    try:
        if separators and any("_" in s for s in col):
            raise ValueError
        vals = [int(s, 16) for s in col]
        ok = all(s.startswith("0x") for s in col) or all(s[:2] in ("0x", "0X") for s in col)
        arr = np.array(vals, dtype=np.uint64) if vals else np.zeros(0, np.uint64)
        if not ok:
            raise ValueError
    except (ValueError, OverflowError):
        arr = np.zeros(len(col), dtype=np.uint64)
        for i, s in enumerate(col):
            t = s.strip()
            if t[:2] not in ("0x", "0X") or "_" in t:
                bad[i] = f"bad hex {s!r} (expected 0x-prefixed hex)"
                continue
            try:
                v = int(t, 16)
            except ValueError:
                bad[i] = f"bad hex {s!r}"
                continue
            if v >> 64:
                bad[i] = f"{s} does not fit in {width} bits"
                continue
            arr[i] = v
    if width < 64 and arr.size:
        over = np.flatnonzero(arr >> np.uint64(width))
        for i in over.tolist():
            bad.setdefault(i, f"{col[i]} does not fit in {width} bits")
    return arr, bad


def _parse_dec(col: Sequence[str], lo: Optional[int], hi: Optional[int], what: str,
               separators: bool = False) -> Tuple[np.ndarray, Dict[int, str]]:
    """A column of decimal integers (ASCII digits, :func:`ptonum._util.int_text`); ``separators`` as
    for :func:`_parse_hex`."""
    bad: Dict[int, str] = {}
    try:
        if separators and any("_" in s for s in col):
            raise ValueError
        arr = np.fromiter(map(int, col), dtype=np.int64, count=len(col))
    except (ValueError, OverflowError):
        arr = np.zeros(len(col), dtype=np.int64)
        for i, s in enumerate(col):
            try:
                v = int_text(s, decimal_only=True)
            except ValueError:
                bad[i] = f"bad {what} {s!r} (expected a decimal integer)"
                continue
            try:
                arr[i] = v
            except OverflowError:  # a decimal integer all the same: say so, not "expected a decimal integer"
                bad[i] = (f"{what} = {s.strip()} out of range {lo}..{hi}" if lo is not None and hi is not None
                          else f"{what} = {s.strip()} does not fit in 64 bits")
    if arr.size and (lo is not None or hi is not None):
        out = np.zeros(arr.shape, bool)
        if lo is not None:
            out |= arr < lo
        if hi is not None:
            out |= arr > hi
        for i in np.flatnonzero(out).tolist():
            bad.setdefault(i, f"{what} = {col[i]} out of range {lo}..{hi}")
    return arr, bad


def _parse_named(col: Sequence[str], table: Dict[str, int], what: str, choices: Optional[Tuple[str, ...]]) -> Tuple[np.ndarray, Dict[int, str]]:
    bad: Dict[int, str] = {}
    if not len(col):
        return np.zeros(0, np.int64), bad
    uniq, inv = np.unique(np.asarray(col, dtype=str), return_inverse=True)
    codes = np.zeros(uniq.size, dtype=np.int64)
    bad_u = np.zeros(uniq.size, dtype=bool)
    for j, name in enumerate(uniq.tolist()):
        key = name.strip()
        code = table.get(key, table.get(key.upper()))
        if code is None or (choices is not None and _DTYPE_BY_CODE.get(code, key) not in choices):
            bad_u[j] = True
        else:
            codes[j] = code
    arr = codes[inv]
    if bad_u.any():
        allowed = ", ".join(choices) if choices else ", ".join(sorted(table))
        for i in np.flatnonzero(bad_u[inv]).tolist():
            bad[i] = f"unknown {what} {col[i]!r} (expected one of {allowed})"
    return arr, bad


#: what :func:`describe_content` calls a JSON list (the tile files, ``tiles.json.gz``)
TILE_FILE = "a tile file (a JSON list of tile cases)"

#: what a vector file is, for messages about a file that is not one
VECTOR_FILE = "a vector file (CSV text whose header names a schema's columns, or a JSON list of tile cases)"


def describe_content(raw: bytes) -> Optional[str]:
    """What the (decompressed) bytes of a file are when they are not CSV text, from their first bytes:
    :data:`TILE_FILE`, ``"a JSON object"``, ``"an .npy array"``, ``"a zip archive (an .npz?)"``, UTF-16
    text without a byte-order mark, or ``"binary data"``; None for anything that may be CSV text.  Lets a message say what a file is
    instead of reading its first bytes as a header that matches no schema.

    Source: no spec counterpart (file formats of the vector tools).
    """
    if raw.startswith(b"\x93NUMPY"):
        return "an .npy array"
    if raw.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return "a zip archive (an .npz?)"
    start = _BLANKS.match(raw).end()  # type: ignore[union-attr]  # (always matches; raw.lstrip() would copy raw)
    first = raw[start:start + 1]
    if first == b"[":
        return TILE_FILE
    if first == b"{":
        return "a JSON object"
    if b"\x00" in raw[:4096]:
        head = raw[:4096]
        even, odd = head[0::2], head[1::2]
        for zeros, text in ((odd, even), (even, odd)):  # every other byte NUL: ASCII text as UTF-16 LE / BE
            if len(zeros) > 8 and zeros.count(0) == len(zeros) and 0 not in text:
                return "UTF-16 text without a byte-order mark (save it as UTF-8, or as UTF-16 with its mark)"
        return "binary data"
    return None


def unquote_lines(raw: bytes) -> bytes:
    """The CSV text with the double-quoted fields of each line that holds a ``"`` unquoted, as Python's
    :mod:`csv` module reads them (``"0x3F800000","1"`` -> ``0x3F800000,1``; ``""`` inside a quoted field
    is one ``"``); lines without a quote are kept as they are.  A line is read on its own (a quoted
    field does not continue on the next line).  A field whose value holds a comma keeps it: a trailing
    ``comment`` takes the rest of the line as before; a quoted ``source`` field (any column, named by the
    header) holds its commas as U+FDD0 until :func:`parse_text` takes the column out; a schema column's comma
    splits it (a malformed row).

    Source: no spec counterpart (RFC 4180 quoting of the vector files).
    """
    return _unquote(raw, None, lambda i: i + 1)


def _open_quote(text: str) -> Optional[int]:
    """The 0-based field of the CSV line ``text`` whose opening double quote the line does not close (read as
    :mod:`csv` reads it: a quote opens a field only at its start, ``""`` inside it is one quote), or None."""
    field_no, start, quoted, after_quote = 0, True, False, False
    for c in text:
        if quoted:
            if c == '"':
                quoted, after_quote = False, True
        elif after_quote and c == '"':  # "" inside a quoted field
            quoted, after_quote = True, False
        elif c == ",":
            field_no, start, after_quote = field_no + 1, True, False
        else:
            quoted, start, after_quote = start and c == '"', False, False
    return field_no if quoted else None


def _unquote(raw: bytes, path: Optional[str], line_of: Callable[[int], int]) -> bytes:
    """:func:`unquote_lines`; with ``path``, a line whose opening quote the line does not close is refused
    (:class:`UsageError` naming ``path``, the line ``line_of(i)`` of the ``i``-th (0-based) line of ``raw``, the
    field and its header column): ``csv`` would read the rest of the line into that field, and a quoted field that
    continues on the next line (a line break inside quotes) is not read, as each row is one line."""
    import csv

    lines = raw.split(b"\n")
    names: Optional[List[str]] = None
    head = -1  # the header line's index (the first line that is not blank), once a quoted line was met
    src_at: Optional[int] = None  # the header's source column (:func:`extra_columns`)
    for i, line in enumerate(lines):
        if b'"' in line:
            if head < 0:
                head = next((k for k, ln in enumerate(lines) if ln.strip()), 0)
                htext = lines[head].decode("utf-8", "surrogateescape")
                if '"' in htext:
                    htext = ",".join(next(csv.reader([htext]), []))
                src_at = extra_columns(htext)[0]
            text = line.decode("latin-1")
            try:
                fields = next(csv.reader([text], strict=path is not None), [])
            except csv.Error:
                at = _open_quote(text)
                if at is not None:
                    if names is None:  # the header's names, for the field's column (the header is the first line)
                        first = next((ln for ln in lines if ln.strip()), b"")
                        names = [] if first is line else header_columns(first.decode("utf-8", "surrogateescape"))
                    col = f" ({printable(names[at])})" if at < len(names) else ""
                    raise UsageError(
                        f"{path}:{line_of(i)}: field {at + 1}{col} opens a double quote that the line does not "
                        "close (a quoted field cannot hold a line break: each row is one line; a quote inside a "
                        'quoted field is written "")') from None
                try:
                    fields = next(csv.reader([text]), [])  # text after a closing quote: read as before
                except csv.Error:  # a CR outside quotes (mixed line ends): kept as it is, its row malformed for it
                    continue
            if i > head and src_at is not None and src_at < len(fields) and "," in fields[src_at]:
                # a quoted source text with a comma ("gen, seed 3", as spreadsheets write it): the comma held as
                # _SOURCE_COMMA until the column is taken out (_strip_extra_columns), so that it splits no column
                fields[src_at] = fields[src_at].replace(",", _SOURCE_COMMA_LATIN1)
            lines[i] = ",".join(fields).encode("latin-1")
    return b"\n".join(lines)


#: a comma of a quoted ``source`` field while the line is split into columns (:func:`_unquote`): the noncharacter
#: U+FDD0, never text of a vector file, as its UTF-8 bytes (``_unquote`` works on the bytes as Latin-1 text)
_SOURCE_COMMA = "\ufdd0"
_SOURCE_COMMA_LATIN1 = _SOURCE_COMMA.encode("utf-8").decode("latin-1")


def _non_ascii_text(value: str) -> str:
    """What is wrong with ``value``, a field of a schema column holding a character other than ASCII (decoded from
    UTF-8 with ``surrogateescape``): the value shown by :func:`~ptonum._util.printable`, and its first such
    character or byte."""
    c = next(ch for ch in value if not ch.isascii())
    byte = surrogate_byte(c)
    if byte is not None:
        what = f"the byte 0x{byte:02x}, which is not UTF-8 text"
    else:
        what = f"the character U+{ord(c):04X}" + (f" {c!r}" if c.isprintable() else "")
    return f"'{printable(value)}' holds {what} (the schema's columns are ASCII text)"


def parse_text(raw: bytes, path: str = "<vectors>", schema: Optional["Schema"] = None, dropped: int = 0) -> ParsedFile:
    """Parse raw CSV bytes. The schema is detected from the header when not given; blank lines before the
    header are skipped (line numbers still count them, as blank lines between rows).  Lines end in LF, CR LF,
    or CR alone when the text holds no LF (classic Mac OS text).  The text is UTF-8: the ``source`` and
    ``comment`` columns are kept as text (a byte that is not UTF-8 shown as ``\\xNN``), the schema's columns
    are ASCII (a row with another character in one is malformed, naming it).  ``dropped``: the text is
    :func:`read_text_through`'s, that many lines left out after its header, so the lines after the header are
    numbered that much further on.

    Raises :class:`UsageError` when the bytes are not CSV text (saying what they are: a tile file, a
    JSON object, an .npy array, ...), the header line is longer than :data:`HEADER_MAX_BYTES`, no schema
    matches the header, or a line opens a double quote it does not close (the only whole-file failures);
    malformed rows are returned in ``bad``.
    """
    what = describe_content(raw)
    if what == TILE_FILE:
        raise UsageError(f"{path}: {what}, not a CSV vector file")
    if what is not None:
        raise UsageError(f"{path}: {what}, not {VECTOR_FILE}")
    _check_header_length(raw, path)
    if b"\r" in raw:
        raw = raw.replace(b"\r\n", b"\n")
        if b"\n" not in raw:  # CR-only line ends (classic Mac OS text): each CR ends a line
            raw = raw.replace(b"\r", b"\n")
    if b'"' in raw:  # quoted fields (as spreadsheet tools write them): unquoted line by line
        at = raw.count(b"\n", 0, _BLANKS.match(raw).end())  # type: ignore[union-attr]  # the header's index
        raw = _unquote(raw, path, lambda i: i + 1 + (dropped if i > at else 0))
    if not raw.strip():
        raise UsageError(f"{path}: empty file (no header row)")
    blank = raw[:len(raw) - len(raw.lstrip())]  # blank lines before the header: skipped, still counted
    skipped = blank.count(b"\n")
    if skipped:
        raw = raw[blank.rfind(b"\n") + 1:]
    first = raw.split(b"\n", 1)[0].decode("utf-8", "backslashreplace").strip()
    source, trail = extra_columns(first)
    extras: Dict[int, Dict[str, str]] = {}
    if source is not None or trail:
        first, raw, extras = _strip_extra_columns(raw, source, trail)
    if schema is None:
        schema = detect_schema(first, path, 1 + skipped)
    names = [c.name for c in schema.columns]
    ncols = len(names)
    got_header = header_columns(first)
    if not same_columns(got_header, schema):
        raise UsageError(
            f"{path}:{1 + skipped}: header {_header_shown(first)} does not match the {schema.op} schema "
            f"({','.join(names)}): "
            f"{header_difference(got_header, schema)}"
        )
    fast = _fast_columns(raw, ncols)
    bad: Dict[int, str] = {}
    pre_bad: List[Tuple[int, str]] = []
    if fast is not None:
        _, cols, nrows = fast
        line_no = np.arange(2, nrows + 2, dtype=np.int64)
    else:
        _, data, numbers = _split_lines(raw)
        good_rows: List[List[str]] = []
        good_lines: List[int] = []
        bad_lines: List[Tuple[int, str]] = []
        for ln, text in zip(numbers, data):
            parts = text.split(",")
            if "\r" in text.rstrip("\r"):  # a lone CR in LF or CR LF text (mixed line ends)
                bad_lines.append((ln, "holds a CR that ends no line (a lone CR in text whose lines end in LF or "
                                      "CR LF: mixed line ends, which may run rows together; save the file with "
                                      "one kind of line end)"))
            elif len(parts) != ncols:
                bad_lines.append((ln, f"expected {ncols} columns ({','.join(got_header)}), got {len(parts)}"))
            else:
                good_rows.append(parts)
                good_lines.append(ln)
        cols = [list(c) for c in zip(*good_rows)] if good_rows else [[] for _ in range(ncols)]
        line_no = np.asarray(good_lines, dtype=np.int64)
        nrows = len(good_rows)
        pre_bad = bad_lines
    if got_header != names:  # the header names the columns in another order: each is read by its name
        by_name = dict(zip(got_header, cols))
        cols = [by_name[n] for n in names]
    rows: Batch = {}
    separators = b"_" in raw  # one memchr: only then is each number column searched for a digit separator
    ascii_text = raw.isascii()  # else the values holding another character are found and named
    for c, colvals in zip(schema.columns, cols):
        if c.kind == "hex":
            arr, b = _parse_hex(colvals, c.width, separators)
        elif c.kind == "dec":
            arr, b = _parse_dec(colvals, c.lo, c.hi, c.name, separators)
        elif c.kind == "bool":
            arr, b = _parse_dec(colvals, 0, 1, c.name, separators)
        elif c.kind == "rmode":
            arr, b = _parse_named(colvals, _RMODE_NAMES, "rounding mode", None)
        elif c.kind == "dtype":
            arr, b = _parse_named(colvals, {**_DTYPE_NAMES, **_DTYPE_UPPER}, f"{c.name}", c.choices)
        else:  # pragma: no cover - schema definition error
            raise AssertionError(c.kind)
        rows[c.name] = arr
        if not ascii_text:  # before the column's own message: int() reads other scripts' digits, upper() 'ſ' as S
            for i, v in enumerate(colvals):
                if not v.isascii():
                    bad.setdefault(i, short_text(f"{c.name}: {_non_ascii_text(v)}"))
        for i, msg in b.items():
            bad.setdefault(i, short_text(f"{c.name}: {msg}"))  # a field of megabytes: not all of it in the message
    for i in bad:  # a line repeating the header (files joined): one message, not its first column's complaint
        if all(col[i].strip() == name for col, name in zip(cols, names)):
            bad[i] = ("the header line again, not a data row (two vector files joined, as by `cat a.csv b.csv`? "
                      "only a file's first line is its header)")
    bad_list: List[Tuple[int, str]] = [] if fast is not None else list(pre_bad)
    if bad:
        idx = np.array(sorted(bad), dtype=np.int64)
        bad_list.extend((int(line_no[i]), bad[int(i)]) for i in idx)
        keep = np.ones(nrows, dtype=bool)
        keep[idx] = False
        rows = {k: v[keep] for k, v in rows.items()}
        line_no = line_no[keep]
    extra = schema.validate(rows)
    if extra:
        keep = np.ones(line_no.size, dtype=bool)
        for i, msg in extra.items():
            bad_list.append((int(line_no[i]), msg))
            keep[i] = False
        rows = {k: v[keep] for k, v in rows.items()}
        line_no = line_no[keep]
    bad_list.sort()
    if skipped or dropped:  # line numbers of the file as it is, the blank lines before the header counted
        line_no = line_no + (skipped + dropped)
        bad_list = [(ln + skipped + dropped, msg) for ln, msg in bad_list]
        extras = {ln + skipped + dropped: e for ln, e in extras.items()}
    return ParsedFile(path=path, schema=schema, rows=rows, lines=line_no, bad=bad_list,
                      total=int(line_no.size) + len(bad_list), extras=extras)


#: extra columns a vector file may carry around its schema's columns (ignored for checking, shown with failures)
LEADING_EXTRA = "source"
TRAILING_EXTRA = "comment"


def extra_columns(header: str) -> Tuple[Optional[int], bool]:
    """(index of the ``source`` column, or ``None``; trailing ``comment`` column) in a header line.

    ``source`` may be any column, as the schema's columns are read by name in any order; ``comment``
    must be the last one (it takes the rest of the line, commas included).  A header naming
    ``source`` more than once has no source column here (the header is then refused, naming it as
    repeated)."""
    cols = [h.strip() for h in header.strip().split(",")]
    trail = len(cols) > 1 and cols[-1] == TRAILING_EXTRA
    found = [i for i, c in enumerate(cols[:len(cols) - 1] if trail else cols) if c == LEADING_EXTRA]
    return (found[0] if len(found) == 1 and len(cols) > 1 else None), trail


def _strip_extra_columns(raw: bytes, source: Optional[int],
                         trail: bool) -> Tuple[str, bytes, Dict[int, Dict[str, str]]]:
    """Remove the ``source`` column (at index ``source``, any position) and a trailing ``comment`` column
    from every line.

    The comment is everything after the other columns (it may hold commas; surrounding double
    quotes are dropped).  Returns (header without them, the data without them, line -> extras);
    a line too short to hold them is kept as it is (and reported malformed by the schema).
    """
    lines = raw.decode("utf-8", "surrogateescape").split("\n")  # the core's bytes kept as they are
    header_cols = [h.strip() for h in lines[0].split(",")]
    before = header_cols[:len(header_cols) - 1] if trail else header_cols  # the columns before a comment
    core = [c for i, c in enumerate(before) if i != source]
    nbefore = len(before)
    out = [",".join(core)]
    extras: Dict[int, Dict[str, str]] = {}
    for i, line in enumerate(lines[1:], start=2):
        if not line.strip():
            out.append(line)
            continue
        parts = line.split(",", nbefore) if trail else line.split(",")
        need = nbefore + (1 if trail else 0)
        if len(parts) < need or (not trail and len(parts) != need) or "\r" in line:
            # (a CR left inside a line, after CR LF ends were read, ends no line: rows run together into a
            # comment would be lost in it; the line is kept whole, and the schema's reader names the CR)
            out.append(line)
            continue
        extra: Dict[str, str] = {}
        # (ASCII blanks stripped: a line or paragraph separator U+2028/U+2029 or NEL U+0085 at an end is text
        # of the field, shown escaped, not dropped as str.strip would)
        if source is not None:
            extra[LEADING_EXTRA] = printable(parts[source].strip(_ASCII_SPACE).replace(_SOURCE_COMMA, ","))
        if trail:
            comment = parts[nbefore].strip(_ASCII_SPACE)
            if len(comment) >= 2 and comment[0] == comment[-1] == '"':
                comment = comment[1:-1]
            extra[TRAILING_EXTRA] = printable(comment)
        extras[i] = extra
        out.append(",".join(p for k, p in enumerate(parts[:nbefore]) if k != source))
    header = out[0].encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return header, "\n".join(out).encode("utf-8", "surrogateescape"), extras


def parse_file(path: "str | Path", schema: Optional["Schema"] = None) -> ParsedFile:
    """Read and parse a vector file (gzip or plain)."""
    return parse_text(read_text(path), str(path), schema)


# --------------------------------------------------------------------------
# Running the model
# --------------------------------------------------------------------------


@dataclass
class RunResult:
    """Model outputs for a batch: one array per expected column, plus rows where
    the model raised (``errors``: row index -> message)."""

    got: Batch
    errors: Dict[int, str] = field(default_factory=dict)


def _accepts_engine(fn: Callable[..., Any]) -> bool:
    try:
        return "engine" in inspect.signature(fn).parameters
    except (TypeError, ValueError):  # pragma: no cover
        return True


def _call(fn: Callable[..., Any], engine: str, *args: Any, **kwargs: Any) -> Any:
    if _accepts_engine(fn):
        kwargs["engine"] = engine
    return fn(*args, **kwargs)


def _groups(keys: Sequence[np.ndarray]) -> List[Tuple[Tuple[int, ...], np.ndarray]]:
    """Indices of rows sharing every key value (keys are int arrays)."""
    n = keys[0].size if keys else 0
    if n == 0:
        return []
    stacked = np.stack([np.asarray(k, dtype=np.int64) for k in keys], axis=1)
    uniq, inv = np.unique(stacked, axis=0, return_inverse=True)
    inv = inv.reshape(-1)
    order = np.argsort(inv, kind="stable")
    bounds = np.flatnonzero(np.diff(inv[order])) + 1
    parts = np.split(order, bounds)
    return [(tuple(int(x) for x in uniq[inv[p[0]]]), p) for p in parts]


def _run_groups(
    batch: Batch,
    keys: Sequence[str],
    outputs: Sequence[str],
    call: Callable[[Tuple[int, ...], Batch], Tuple[np.ndarray, ...]],
) -> RunResult:
    """Run ``call(key, sub_batch)`` per group; on a model error, re-run the group
    row by row so the failing rows are named."""
    n = next(iter(batch.values())).size if batch else 0
    got = {o: np.zeros(n, dtype=np.int64) for o in outputs}
    errors: Dict[int, str] = {}
    for key, idx in _groups([batch[k] for k in keys]):
        sub = {k: v[idx] for k, v in batch.items()}
        try:
            res = call(key, sub)
            for o, r in zip(outputs, res):
                got[o][idx] = np.asarray(r).astype(np.int64).reshape(-1)
        except PtonumError:
            for j, i in enumerate(idx.tolist()):
                one = {k: v[idx[j : j + 1]] for k, v in batch.items()}
                try:
                    res = call(key, one)
                    for o, r in zip(outputs, res):
                        got[o][i] = int(np.asarray(r).reshape(-1)[0])
                except PtonumError as exc:
                    errors[i] = f"model raised {type(exc).__name__}: {exc}"
    return RunResult(got, errors)


def _u(a: np.ndarray) -> np.ndarray:
    return np.asarray(a, dtype=np.uint64)


# --------------------------------------------------------------------------
# Schemas
# --------------------------------------------------------------------------

FLOAT_SRC = ("FP16", "BF16", "FP32")
ACC_TYPES = ("FP32", "S32", "U32")
DST_TYPES = ("FP32", "S32", "U32", "FP16", "BF16", "HiF8", "E4M3", "S8", "S16", "S4X2")
DECOMP_TYPES = tuple(m.name for m in TileDataType)


def _name(code: int) -> str:
    return _DTYPE_BY_CODE.get(int(code), str(code))


class Schema:
    """Base class: subclasses define ``op``, ``columns`` and ``_run``."""

    op: str = ""
    asl: str = ""
    columns: Tuple[Column, ...] = ()
    #: input columns that select the scalar parameters of a model call
    group_keys: Tuple[str, ...] = ()

    @property
    def names(self) -> List[str]:
        return [c.name for c in self.columns]

    @property
    def inputs(self) -> List[Column]:
        return [c for c in self.columns if not c.expected]

    @property
    def outputs(self) -> List[Column]:
        return [c for c in self.columns if c.expected]

    def header(self) -> str:
        return ",".join(self.names)

    # -- validation beyond single columns (returns row index -> message)
    def validate(self, rows: Batch) -> Dict[int, str]:
        return {}

    # -- model
    def run(self, batch: Batch, engine: str) -> RunResult:
        raise NotImplementedError

    def mismatch(self, batch: Batch, got: Batch) -> np.ndarray:
        """Boolean mask of rows whose expected columns differ from ``got``."""
        n = next(iter(batch.values())).size
        bad = np.zeros(n, dtype=bool)
        for c in self.outputs:
            bad |= batch[c.name].astype(np.int64) != got[c.name].astype(np.int64)
        return bad

    # -- text
    def format_value(self, col: Column, value: int, row: Dict[str, int]) -> str:
        v = int(value)
        if col.kind == "hex":
            digits = col.digits if col.digits is not None else self.digits_for(col, row)
            if digits is None:
                return hex(v)
            return f"0x{v:0{digits}x}"
        if col.kind in ("dec", "bool"):
            return str(v)
        if col.kind == "rmode":
            return _RMODE_BY_CODE[v]
        if col.kind == "dtype":
            return _name(v)
        raise AssertionError(col.kind)  # pragma: no cover

    def digits_for(self, col: Column, row: Dict[str, int]) -> Optional[int]:
        return None

    def row_dict(self, batch: Batch, i: int) -> Dict[str, int]:
        return {k: int(v[i]) for k, v in batch.items()}

    def format_rows(self, batch: Batch) -> List[str]:
        n = next(iter(batch.values())).size if batch else 0
        out = []
        for i in range(n):
            row = self.row_dict(batch, i)
            out.append(",".join(self.format_value(c, row[c.name], row) for c in self.columns))
        return out

    def describe_inputs(self, row: Dict[str, int]) -> str:
        return " ".join(f"{c.name}={self.format_value(c, row[c.name], row)}" for c in self.inputs)

    def describe_value(self, col: Column, value: int, row: Dict[str, int]) -> str:
        text = self.format_value(col, value, row)
        if col.name.endswith("flags"):
            text += f" ({flag_names(int(value))})"
        return text

    def explain_request(self, row: Dict[str, int]) -> Optional[Tuple[str, Dict[str, Any]]]:
        """The ``explain`` operation and keyword arguments for one row (None if no trace)."""
        return None


def _output_type_name(pre_quant_mode: int, acc_type: int) -> Optional[str]:
    """The name of the destination type of PreQuantMode ``pre_quant_mode`` with accumulator ``acc_type`` (a
    code), or None when the model has none (a reserved mode).  Source: ``BundleFPATROutputType`` (ADR-0085 D179),
    :func:`ptonum.fpatr.output_type`."""
    from ..fpatr import output_type

    try:
        return output_type(int(pre_quant_mode), TileDataType(int(acc_type))).name
    except (PtonumError, ValueError):
        return None


class PostprocessElementSchema(Schema):
    op = "postprocess_element"
    asl = "TileProfileMatrixPostProcessWithFlags"
    columns = (
        Column("pre_quant_mode", "dec", lo=0, hi=63),
        Column("relu_mode", "dec", lo=0, hi=7),
        Column("acc_type", "dtype", choices=ACC_TYPES),
        Column("dst_type", "dtype", choices=DST_TYPES),
        Column("acc_bits", "hex", 32, digits=8),
        Column("quant_param", "hex", 64, digits=16),
        Column("relu_param", "hex", 64, digits=5),
        Column("rmode", "rmode"),
        Column("sat", "bool"),
        Column("expected_bits", "hex", 32, expected=True),
        Column("expected_flags", "hex", 5, expected=True, digits=2),
    )
    group_keys = ("pre_quant_mode", "relu_mode", "acc_type", "rmode", "sat")

    def digits_for(self, col: Column, row: Dict[str, int]) -> Optional[int]:
        if col.name == "expected_bits":
            return dst_hex_digits(_name(row["dst_type"]))
        return None

    def describe_value(self, col: Column, value: int, row: Dict[str, int]) -> str:
        """As :meth:`Schema.describe_value`; but ``expected_bits`` of a row whose ``dst_type`` is not the mode's
        destination type (a damaged row, which :meth:`run` reports as an error) is shown at the width of the
        mode's destination, not at the width of the type the row names: ``0x0003`` of an S16 mode whose row
        says S8 was shown as the S8 value ``0x03``."""
        if col.name == "expected_bits":
            model = _output_type_name(row["pre_quant_mode"], row["acc_type"])
            if model is not None and model != _name(row["dst_type"]):
                return f"0x{int(value):0{dst_hex_digits(model)}x}"
        return super().describe_value(col, value, row)

    def run(self, batch: Batch, engine: str) -> RunResult:
        from ..fpatr import postprocess_element

        try:
            from ..fpatr import output_type
        except ImportError:  # pragma: no cover - older model without the helper
            output_type = None  # type: ignore[assignment]

        def call(key: Tuple[int, ...], sub: Batch) -> Tuple[np.ndarray, ...]:
            mode, relu, acc, rm, sat = key
            bits, flags = _call(
                postprocess_element,
                engine,
                _u(sub["acc_bits"]),
                pre_quant_mode=mode,
                relu_mode=relu,
                acc_type=TileDataType(acc),
                quant_param=_u(sub["quant_param"]),
                relu_param=_u(sub["relu_param"]),
                rmode=RoundingMode(rm),
                sat=bool(sat),
            )
            return bits, flags

        res = _run_groups(batch, self.group_keys, ("expected_bits", "expected_flags"), call)
        # The destination type column is an input the model determines; check it.
        if output_type is not None:
            for (mode, acc), idx in _groups([batch["pre_quant_mode"], batch["acc_type"]]):
                try:
                    want = int(output_type(mode, TileDataType(acc)))
                except PtonumError as exc:
                    for i in idx.tolist():
                        res.errors.setdefault(i, f"model raised {type(exc).__name__}: {exc}")
                    continue
                wrong = idx[batch["dst_type"][idx] != want]
                for i in wrong.tolist():
                    res.errors.setdefault(
                        i, f"dst_type {_name(int(batch['dst_type'][i]))} but the model's output type is {_name(want)}"
                    )
        return res

    def explain_request(self, row: Dict[str, int]) -> Optional[Tuple[str, Dict[str, Any]]]:
        return "postprocess", dict(
            acc_bits=row["acc_bits"],
            pre_quant_mode=row["pre_quant_mode"],
            relu_mode=row["relu_mode"],
            acc_type=TileDataType(row["acc_type"]),
            quant_param=row["quant_param"],
            relu_param=row["relu_param"],
            rmode=RoundingMode(row["rmode"]),
            sat=bool(row["sat"]),
        )


class ReductionStepSchema(Schema):
    op = "reduction_step"
    asl = "TileProfileMatrixReductionStepWithFlags"
    columns = (
        Column("acc_type", "dtype", choices=ACC_TYPES),
        Column("max_abs", "bool"),
        Column("current_bits", "hex", 32, digits=8),
        Column("candidate_bits", "hex", 32, digits=8),
        Column("expected_bits", "hex", 32, expected=True, digits=8),
        Column("expected_flags", "hex", 5, expected=True, digits=2),
    )
    group_keys = ("acc_type", "max_abs")

    def run(self, batch: Batch, engine: str) -> RunResult:
        from ..fpatr import reduction_step

        def call(key: Tuple[int, ...], sub: Batch) -> Tuple[np.ndarray, ...]:
            acc, mabs = key
            return tuple(
                _call(
                    reduction_step,
                    engine,
                    _u(sub["current_bits"]),
                    _u(sub["candidate_bits"]),
                    acc_type=TileDataType(acc),
                    max_abs=bool(mabs),
                )
            )

        return _run_groups(batch, self.group_keys, ("expected_bits", "expected_flags"), call)

    def explain_request(self, row: Dict[str, int]) -> Optional[Tuple[str, Dict[str, Any]]]:
        return "reduction", dict(
            current=row["current_bits"],
            candidate=row["candidate_bits"],
            acc_type=TileDataType(row["acc_type"]),
            max_abs=bool(row["max_abs"]),
        )


class TcvtE8M0Schema(Schema):
    op = "tcvt_e8m0"
    asl = "ReferenceFloatToE8M0"
    columns = (
        Column("src_type", "dtype", choices=FLOAT_SRC),
        Column("src_bits", "hex", 32),
        Column("rmode", "rmode"),
        Column("sat", "bool"),
        Column("expected_bits", "hex", 8, expected=True, digits=2),
        Column("expected_flags", "hex", 5, expected=True, digits=2),
    )
    group_keys = ("src_type", "rmode", "sat")

    def digits_for(self, col: Column, row: Dict[str, int]) -> Optional[int]:
        if col.name == "src_bits":
            return dst_hex_digits(_name(row["src_type"]))
        return None

    def validate(self, rows: Batch) -> Dict[int, str]:
        if not rows["src_type"].size:
            return {}
        width = np.where(rows["src_type"] == int(TileDataType.FP32), 32, 16).astype(np.uint64)
        over = np.flatnonzero(rows["src_bits"] >> width)
        return {int(i): f"src_bits: {int(rows['src_bits'][i]):#x} does not fit in the {_name(int(rows['src_type'][i]))} width" for i in over}

    def run(self, batch: Batch, engine: str) -> RunResult:
        from ..tcvt import to_e8m0

        def call(key: Tuple[int, ...], sub: Batch) -> Tuple[np.ndarray, ...]:
            st, rm, sat = key
            return tuple(
                _call(to_e8m0, engine, _u(sub["src_bits"]), src_type=TileDataType(st), rmode=RoundingMode(rm), sat=bool(sat))
            )

        return _run_groups(batch, self.group_keys, ("expected_bits", "expected_flags"), call)

    def explain_request(self, row: Dict[str, int]) -> Optional[Tuple[str, Dict[str, Any]]]:
        return "tcvt", dict(
            src_bits=row["src_bits"],
            src_type=TileDataType(row["src_type"]),
            rmode=RoundingMode(row["rmode"]),
            sat=bool(row["sat"]),
        )


class DecompositionSchema(Schema):
    op = "decomposition"
    asl = "TileNumericFiniteDecomposition"
    columns = (
        Column("data_type", "dtype", choices=DECOMP_TYPES),
        Column("encoding", "hex", 64),
        Column("available", "bool", expected=True),
        Column("negative", "bool", expected=True),
        Column("significand", "hex", 64, expected=True),
        Column("exponent", "dec", expected=True),
    )
    group_keys = ("data_type",)

    def run(self, batch: Batch, engine: str) -> RunResult:
        from ..formats import decompose

        def call(key: Tuple[int, ...], sub: Batch) -> Tuple[np.ndarray, ...]:
            (dt,) = key
            d = _call(decompose, engine, TileDataType(dt), _u(sub["encoding"]))
            return (
                np.asarray(d.available).astype(np.int64),
                np.asarray(d.negative).astype(np.int64),
                np.asarray(d.significand).astype(np.uint64).astype(np.int64),
                np.asarray(d.exponent).astype(np.int64),
            )

        return _run_groups(batch, self.group_keys, ("available", "negative", "significand", "exponent"), call)

    def mismatch(self, batch: Batch, got: Batch) -> np.ndarray:
        """``available`` always; sign and significand when available; the
        exponent only for a nonzero significand (a zero's exponent carries no
        meaning, vectors/README.md)."""
        avail = batch["available"] != 0
        bad = batch["available"] != got["available"]
        bad |= avail & (batch["negative"] != got["negative"])
        bad |= avail & (batch["significand"].astype(np.int64) != got["significand"])
        bad |= avail & (batch["significand"] != 0) & (batch["exponent"] != got["exponent"])
        return bad


class FP32ToFP19Schema(Schema):
    op = "fp32_to_fp19"
    asl = "FP32ToFP19"
    columns = (
        Column("fp32_bits", "hex", 32, digits=8),
        Column("expected_fp19", "hex", 19, expected=True, digits=5),
    )

    def run(self, batch: Batch, engine: str) -> RunResult:
        from ..fp19 import from_fp32

        def call(key: Tuple[int, ...], sub: Batch) -> Tuple[np.ndarray, ...]:
            return (_call(from_fp32, engine, _u(sub["fp32_bits"])),)

        n = batch["fp32_bits"].size
        return _run_groups({**batch, "_k": np.zeros(n, np.int64)}, ("_k",), ("expected_fp19",), call)


class QuantParamLegalSchema(Schema):
    op = "quant_param_legal"
    asl = "BundleFPATRQuantParameterWordLegal"
    columns = (
        Column("pre_quant_mode", "dec", lo=0, hi=63),
        Column("word", "hex", 64, digits=16),
        Column("legal", "bool", expected=True),
    )
    group_keys = ("pre_quant_mode",)

    def run(self, batch: Batch, engine: str) -> RunResult:
        from ..fpatr import quant_param_legal

        def call(key: Tuple[int, ...], sub: Batch) -> Tuple[np.ndarray, ...]:
            return (np.asarray(_call(quant_param_legal, engine, key[0], _u(sub["word"]))).astype(np.int64),)

        return _run_groups(batch, self.group_keys, ("legal",), call)


class ReluParamLegalSchema(Schema):
    op = "relu_param_legal"
    asl = "BundleFPATRReluParameterWordLegal"
    columns = (
        Column("word", "hex", 64, digits=16),
        Column("legal", "bool", expected=True),
    )

    def run(self, batch: Batch, engine: str) -> RunResult:
        from ..fpatr import relu_param_legal

        def call(key: Tuple[int, ...], sub: Batch) -> Tuple[np.ndarray, ...]:
            return (np.asarray(_call(relu_param_legal, engine, _u(sub["word"]))).astype(np.int64),)

        n = batch["word"].size
        return _run_groups({**batch, "_k": np.zeros(n, np.int64)}, ("_k",), ("legal",), call)


SCHEMAS: Dict[str, Schema] = {
    s.op: s
    for s in (
        PostprocessElementSchema(),
        ReductionStepSchema(),
        TcvtE8M0Schema(),
        DecompositionSchema(),
        FP32ToFP19Schema(),
        QuantParamLegalSchema(),
        ReluParamLegalSchema(),
    )
}

_ALIASES = {"tcvt": "tcvt_e8m0", "postprocess": "postprocess_element", "reduction": "reduction_step", "fp19": "fp32_to_fp19"}


def schema_for(op: str) -> Schema:
    """Schema by operation name (file stem); a few short aliases are accepted."""
    key = _ALIASES.get(op, op)
    if key not in SCHEMAS:
        raise UsageError(f"operation = {op!r}: expected one of {', '.join(SCHEMAS)}")
    return SCHEMAS[key]


def header_columns(header: str) -> List[str]:
    """The column names of a header line (quoted names unquoted as :func:`unquote_lines` does)."""
    if '"' in header:
        header = unquote_lines(header.encode("utf-8", "surrogateescape")).decode("utf-8", "surrogateescape")
    return [h.strip() for h in header.strip().split(",")]


#: field separators a spreadsheet may write instead of commas (a header read as one column holding them)
_OTHER_SEPARATORS = (";", "\t", "|")


def _other_separator(cols: Sequence[str]) -> Optional[str]:
    """The separator other than a comma that splits a header read as the single column ``cols[0]``."""
    if len(cols) == 1:
        for sep in _OTHER_SEPARATORS:
            if sep in cols[0]:
                return sep
    return None


def same_columns(cols: Sequence[str], schema: Schema) -> bool:
    """True when the header columns ``cols`` are ``schema``'s, each once, in any order (a file's columns
    are read by the names of its header row, ``vectors/README.md``: "CSV with a header row")."""
    return len(cols) == len(schema.names) and set(cols) == set(schema.names)


#: names a message lists, and the characters of each it shows (a long header is not repeated)
_NAMES_SHOWN = 8
_NAME_CHARS = 40


def _names_text(names: Sequence[str]) -> str:
    """``names`` joined by commas for a message: the first :data:`_NAMES_SHOWN`, each cut to
    :data:`_NAME_CHARS` characters (``...`` after a cut one), then how many more there are."""
    shown = [n if len(n) <= _NAME_CHARS else n[:_NAME_CHARS] + "..." for n in names[:_NAMES_SHOWN]]
    more = len(names) - len(shown)
    return ",".join(shown) + (f" and {more} more" if more else "")


def header_difference(cols: Sequence[str], schema: Schema) -> str:
    """How the columns ``cols`` differ from ``schema``'s: the ones missing, the ones not in the schema,
    or the expected order when only the order differs (``""`` when equal); a header whose fields are
    separated by ``;``, a tab or ``|`` says so first."""
    sep = _other_separator(cols)
    if sep is not None:
        said = f"the fields are separated by {sep!r}, not by commas (ptonum reads comma-separated values)"
        rest = header_difference([c.strip() for c in cols[0].split(sep)], schema)
        return said + ("; " + rest if rest else "")
    names = schema.names
    if list(cols) == names:
        return ""
    missing = [c for c in names if c not in cols]
    # a source column repeated, or a comment column before the last, is named as such (extra_columns
    # took neither out of the header)
    extra_said = [f"{LEADING_EXTRA} repeated"] if list(cols).count(LEADING_EXTRA) > 1 else []
    if TRAILING_EXTRA in cols and TRAILING_EXTRA not in names:
        extra_said.append(f"{TRAILING_EXTRA} is not the last column (it takes the rest of the line)")
    unexpected = [c for c in cols if c not in names and not (extra_said and c in (LEADING_EXTRA, TRAILING_EXTRA))]
    if same_columns([c.lower() for c in cols], schema):  # in any order, as they are read
        return "column names are lower-case"
    parts = list(extra_said)
    if missing:
        parts.append("missing " + ",".join(missing))
    if unexpected:
        parts.append("not in the schema " + _names_text([c if c else "(empty name)" for c in unexpected])
                     + f" (only a {LEADING_EXTRA} column, anywhere, and a trailing {TRAILING_EXTRA} column may be "
                     "added)")
    if not parts:
        repeated = sorted({c for c in cols if list(cols).count(c) > 1})
        parts.append(f"{','.join(repeated)} repeated" if repeated else "the columns are in another order")
    return "; ".join(parts)


def closest_schema(cols: Sequence[str]) -> Schema:
    """The known schema nearest to the columns ``cols``: most columns in common, then fewest columns
    differing, then the most similar header text (a misspelt column name)."""
    import difflib

    sep = _other_separator(cols)
    # names compared case-folded, and split at a spreadsheet's other separator, so that an upper-case
    # or ';'-separated header of one schema is not matched with another by its text alone
    folded = [c.strip().lower() for c in (cols[0].split(sep) if sep is not None else cols)]
    text = ",".join(folded)

    def score(s: Schema) -> Tuple[int, int, float]:
        common = len(set(folded) & set(s.names))
        return (common, -len(set(folded) ^ set(s.names)), difflib.SequenceMatcher(None, text, s.header()).ratio())
    return max(SCHEMAS.values(), key=score)


def _header_shown(header: str) -> str:
    """A header line as a message shows it: stripped, cut to 120 characters, in single quotes, its characters
    as :func:`~ptonum._util.printable` shows them.  The header was decoded with ``backslashreplace`` (a byte
    that is not UTF-8 is already the text ``\\xff``), so it is not quoted by ``repr``, which doubled that
    backslash (``'word\\\\xff'``)."""
    shown = header.strip()
    return "'" + printable(shown if len(shown) <= 120 else shown[:117] + "...") + "'"


def detect_schema(header: str, path: str = "", line: int = 1) -> Schema:
    """The schema whose columns ``header`` (line ``line`` of the file) names, in any order (each once); else
    the one named by the file stem.

    Raises :class:`UsageError` when neither gives a schema, naming the closest known schema (its
    columns) and how the header differs from it.
    """
    cols = header_columns(header)
    for s in SCHEMAS.values():
        if s.names == cols:
            return s
    for s in SCHEMAS.values():
        if same_columns(cols, s):
            return s
    stem = Path(path).name.split(".")[0]
    if stem in SCHEMAS:
        return SCHEMAS[stem]
    shown = _header_shown(header)
    near = closest_schema(cols)
    raise UsageError(f"{path}:{line}: header {shown} matches no vector schema; the closest is {near.op} "
                     f"({near.header()}): {header_difference(cols, near)} (schemas: {', '.join(SCHEMAS)})")


def write_rows(path: "str | Path | None", schema: Schema, batch: Batch) -> str:
    """Write ``batch`` as a vector file (gzip when the name ends ``.gz``; gzip
    header without timestamp or name, so equal content gives equal bytes).
    Returns the CSV text (also written when ``path`` is given).

    Raises:
        PublishError: the file cannot be written (naming it); nothing is left behind.
    """
    text = schema.header() + "\n" + "".join(line + "\n" for line in schema.format_rows(batch))
    if path is None:
        return text
    p = Path(path)
    data = text.encode("ascii")
    if p.name.endswith(".gz"):
        buf = io.BytesIO()
        with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0) as gz:
            gz.write(data)
        data = buf.getvalue()
    with Publication() as pub:  # whole or not at all; missing directories are created
        pub.write_bytes(p, data)
    return text
