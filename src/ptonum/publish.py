"""Publishing a set of output files and directories all together, or none of them.

Every ptonum command that writes (``postprocess``, ``tcvt``, ``gen``, ``compare``'s
reports, the Zarr writers) goes through :class:`Publication`:

.. code-block:: python

    from ptonum.publish import Publication

    with Publication() as pub:
        with pub.open(out / "acc.d.npy") as fh:          # a staged temporary file
            np.lib.format.write_array(fh, d)
        pub.write_text(out / "acc.flags.json", text)
        with pub.directory(out / "acc.zarr") as store:    # a staged temporary directory
            zarr.save_array(str(store), d)
    # here every output is in place; on any exception none of them is

Each output is first written under a temporary name next to its destination
(``.NAME.XXXXXXXX.tmp``, so the final rename never crosses a file system).
When the ``with`` block ends normally the publication *commits*: it checks
every destination (a directory where a file goes, a file where a directory
goes, an existing directory not allowed to be replaced, a missing parent)
before the first rename, then moves every output into place; a rename that
still fails rolls back the ones already done (earlier contents restored).
When the block ends with an exception -- including :class:`KeyboardInterrupt`
and :class:`Terminated` (SIGTERM, see :func:`install_sigterm_handler`) --
every temporary is removed and nothing is published.  While it commits or
cleans up, SIGINT and SIGTERM are held back (main thread) and delivered
afterwards, so a signal never leaves half a set of outputs.

Errors are :class:`PublishError` (a :class:`ptonum.errors.UsageError`) and
name the *destination* path, never a temporary one, e.g.
``cannot write out/acc.d.npy: No space left on device``.

:func:`remove_temporaries` removes whatever a publication interrupted at an
unlucky instant left (the CLI calls it before exiting on a signal), and
:func:`published` lists what this process has published (since a
:func:`published_count`), so an interrupted command can say whether anything
was written.

Without :func:`install_sigterm_handler` (a library call rather than the
``ptonum`` command), SIGTERM keeps its default action: the process ends at
once, and neither cleanup nor rollback can run.
"""

from __future__ import annotations

import collections
import contextlib
import errno
import itertools
import os
import re
import signal
import stat
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from types import FrameType, TracebackType
from typing import IO, Any, Dict, Iterator, List, Optional, Set, Tuple, Type, Union

from .errors import UsageError

__all__ = [
    "Publication",
    "PublishError",
    "Terminated",
    "install_sigterm_handler",
    "raise_for_signal",
    "published",
    "published_count",
    "published_summary",
    "remove_temporaries",
    "check_destination",
    "write_protected",
    "unreplaceable",
    "output_directory_lock",
    "EXIT_SIGINT",
    "EXIT_SIGTERM",
]

#: exit status of a command interrupted by SIGINT (Ctrl-C): 128 + 2
EXIT_SIGINT = 130
#: exit status of a command stopped by SIGTERM: 128 + 15
EXIT_SIGTERM = 143

PathLike = Union[str, "os.PathLike[str]"]


class PublishError(UsageError):
    """An output could not be written or put in place; the message names the destination path."""


class Terminated(BaseException):
    """SIGTERM, raised in the main thread by the handler of :func:`install_sigterm_handler`.

    A :class:`BaseException` (like :class:`KeyboardInterrupt`), so ``except Exception`` does not swallow it
    and every ``finally``/cleanup runs.
    """

    def __init__(self, signum: int = signal.SIGTERM) -> None:
        super().__init__(f"terminated by signal {signum}")
        self.signum = signum


#: Python functions that C code calls back, where an exception is printed ('Exception ignored ...') and
#: dropped instead of propagated: llvmlite's object-cache callbacks (numba's JIT calls them while it
#: compiles a kernel), by (file name part, function name); and every ``__del__`` and weakref callback
_DROPPING_CALLBACKS = (("llvmlite", "_raw_object_cache_notify"), ("llvmlite", "_raw_object_cache_getbuffer"),
                       ("weakref", "__call__"))


def _drops_exceptions(frame: Optional[FrameType]) -> bool:
    """True when ``frame`` (where a signal handler was called) runs inside a function whose exceptions
    Python drops (:data:`_DROPPING_CALLBACKS`, ``__del__``)."""
    f = frame
    while f is not None:
        code = f.f_code
        if code.co_name == "__del__" or any(code.co_name == name and part in code.co_filename
                                            for part, name in _DROPPING_CALLBACKS):
            return True
        f = f.f_back
    return False


def _send_again_soon(signum: int) -> None:
    """Send ``signum`` to this process again in 10 ms, from a short-lived daemon thread."""
    def again() -> None:
        time.sleep(0.01)
        try:
            os.kill(os.getpid(), signum)
        except OSError:  # pragma: no cover - the process is ending
            pass

    threading.Thread(target=again, name=f"ptonum-signal-{signum}-again", daemon=True).start()


def raise_for_signal(exc: BaseException, signum: int, frame: Optional[FrameType]) -> None:
    """Raise ``exc`` (KeyboardInterrupt, :class:`Terminated`) from a handler of ``signum``; but when the
    handler runs inside a callback whose exceptions Python drops (numba's JIT in llvmlite's object cache,
    a ``__del__``), where raising would print a traceback and lose the signal (the command would run on
    to the end), return instead and have the signal sent again in 10 ms, when the callback has returned."""
    if _drops_exceptions(frame):
        _send_again_soon(signum)
        return
    raise exc


def _raise_terminated(signum: int, frame: Optional[FrameType]) -> None:
    raise_for_signal(Terminated(signum), signum, frame)


def install_sigterm_handler() -> bool:
    """Make SIGTERM raise :class:`Terminated` in the main thread (so publications clean up).

    Call it from a program's entry point (the ``ptonum`` command does).  Does nothing and returns False
    outside the main thread or when SIGTERM is ignored (``SIG_IGN``); True when installed.
    """
    if threading.current_thread() is not threading.main_thread():
        return False
    if signal.getsignal(signal.SIGTERM) == signal.SIG_IGN:
        return False
    signal.signal(signal.SIGTERM, _raise_terminated)
    return True


# ---------------------------------------------------------------------------
# Process-wide bookkeeping: live temporaries and what was published

# No lock here: a KeyboardInterrupt can land between a lock's acquire and the ``with`` block that
# would release it (the lock then stays held and the next cleanup deadlocks).  Every update is one
# set/deque operation or one ``next`` of a counter, each atomic under the GIL.
_TEMPORARIES: Set[Path] = set()
_MADE_DIRS: Set[Path] = set()  # directories made for outputs not yet published (removed when empty)
#: temporaries a discard removed: :func:`remove_temporaries` removes them again if they came back (a
#: worker process of a local cluster still writing Zarr chunks into a discarded temporary recreates its
#: directories until the cluster is torn down; the names are this process's own, unique)
_DISCARDED: Set[Path] = set()
#: how many recent destinations :func:`published` remembers
PUBLISHED_KEPT = 10_000
_PUBLISHED: "collections.deque[Tuple[int, Path]]" = collections.deque(maxlen=PUBLISHED_KEPT)
_SEQUENCE = itertools.count(1)


def published_count() -> int:
    """How many destinations this process has published so far (complete sets only)."""
    entries = list(_PUBLISHED)
    return max(entries)[0] if entries else 0


def published(since: int = 0) -> List[Path]:
    """The destinations this process published after the first ``since`` (a :func:`published_count`
    taken earlier), in order; only the latest :data:`PUBLISHED_KEPT` are remembered."""
    return [path for seq, path in sorted(list(_PUBLISHED)) if seq > since]


def published_summary(since: int = 0) -> str:
    """What this process published after the first ``since`` (see :func:`published`), in words for
    the one line an interrupted command prints: ``nothing was written``, ``its outputs were already
    written in full: a, b`` (up to four named) or ``N outputs were already written in full (first ...
    last)`` (e.g. a sweep's partition records, each one whole)."""
    wrote = published(since)
    if not wrote:
        return "nothing was written"
    if len(wrote) <= 4:
        return "its outputs were already written in full: " + ", ".join(str(p) for p in wrote)
    return f"{len(wrote)} outputs were already written in full ({wrote[0]} ... {wrote[-1]})"


def remove_temporaries() -> List[Path]:
    """Remove every temporary file or directory a publication of this process still holds; returns them.

    Publications clean up after themselves; this is the safety net for an exception that arrived
    between two statements of the cleanup itself, and for a discarded temporary directory that came
    back (a cluster's worker still writing into it).  Signals are held back while it runs.
    """
    with _hold_signals():
        paths = sorted(list(_TEMPORARIES))
        for p in paths:
            _remove(p)
            _TEMPORARIES.discard(p)
        for p in sorted(list(_DISCARDED)):
            if os.path.lexists(p):
                _remove(p)
                paths.append(p)
            _DISCARDED.discard(p)
        for d in sorted(list(_MADE_DIRS), key=lambda d: len(d.parts), reverse=True):
            try:
                os.rmdir(d)  # only when empty: never anything but what a publication made
            except OSError:
                pass
            _MADE_DIRS.discard(d)
    return paths


def _remove(path: Path) -> None:
    """Remove a file, symlink or directory tree; missing is fine; errors are ignored (best effort)."""
    try:
        if path.is_dir() and not path.is_symlink():
            import shutil  # here: shutil loads bz2/lzma, which a small run never needs (start-up)

            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
    except OSError:
        pass


def _track(path: Path) -> None:
    _TEMPORARIES.add(path)


def _untrack(path: Path) -> None:
    _TEMPORARIES.discard(path)


# ---------------------------------------------------------------------------
# Holding signals back during commit and cleanup


@contextlib.contextmanager
def _hold_signals() -> Iterator[None]:
    """Defer SIGINT/SIGTERM (their Python handlers) to the end of the block; main thread only.

    Python runs signal handlers in the main thread between bytecodes, whichever thread the OS
    delivered to, so swapping the Python-level handler is what defers them (``pthread_sigmask`` would
    not: another thread may take the signal).  A handler that is not a Python callable (``SIG_DFL``,
    ``SIG_IGN``) is left alone.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: List[int] = []
    saved: List[Tuple[int, Any]] = []

    def _note(signum: int, frame: Optional[FrameType]) -> None:
        pending.append(signum)

    try:
        for sig in (signal.SIGINT, signal.SIGTERM):
            old = signal.getsignal(sig)
            if callable(old):
                saved.append((sig, old))  # remembered before it is swapped: always restored
                signal.signal(sig, _note)
        yield
    finally:
        _restore_handlers(saved)
        for signum in pending:
            handler = dict(saved).get(signum)
            if handler is not None:
                handler(signum, None)  # raises KeyboardInterrupt / Terminated now, after the block


def _restore_handlers(saved: List[Tuple[int, Any]]) -> None:
    """Put the saved handlers back, each in a ``finally`` of the one before, so a signal that the
    first restored handler raises for cannot leave the next one swapped."""
    if not saved:
        return
    try:
        signal.signal(saved[0][0], saved[0][1])
    finally:
        _restore_handlers(saved[1:])


# ---------------------------------------------------------------------------
# Checks


def write_protected(path: PathLike) -> Optional[str]:
    """Why the existing regular file or directory ``path`` may not be replaced or removed -- ``"it is
    write-protected (mode 0444)"`` when no one may write it (no ``w`` bit; root included, as ``rm`` asks
    first) or this process may not; for a directory (e.g. a Zarr store), when the directory or any file or
    directory in its tree is (``"it holds d/c/0/0, which is write-protected (mode 0444)"``) -- else None
    (also for a missing path or a symbolic link, which a rename replaces without touching what it points
    to).

    A rename into place would need only the folder's permission; a file or tree the user made read-only (a
    golden output kept on purpose) is not replaced behind that protection, nor half removed.  A directory's
    tree is walked (every entry lstat-ed once, as removing it would), stopping at the first protected one."""
    def protected(p: str, st: os.stat_result) -> bool:
        return not (st.st_mode & 0o222 and os.access(p, os.W_OK, follow_symlinks=False))

    try:
        st = os.lstat(path)
    except OSError:
        return None
    if stat.S_ISDIR(st.st_mode):
        if protected(os.fspath(path), st):
            return f"it is a write-protected directory (mode {stat.S_IMODE(st.st_mode):04o})"
        for top, dirs, files in os.walk(path):
            for name in dirs + files:
                p = os.path.join(top, name)
                try:
                    est = os.lstat(p)
                except OSError:
                    continue
                if (stat.S_ISDIR(est.st_mode) or stat.S_ISREG(est.st_mode)) and protected(p, est):
                    return (f"it holds {os.path.relpath(p, path)}, which is write-protected "
                            f"(mode {stat.S_IMODE(est.st_mode):04o})")
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    if not protected(os.fspath(path), st):
        return None
    return f"it is write-protected (mode {stat.S_IMODE(st.st_mode):04o})"


_PROTECTED_HINT = ("ptonum does not replace a write-protected file or directory: make it writable (chmod u+w; "
                   "chmod -R u+w for a directory) or remove it")
_SPECIAL_HINT = ("an output is written whole under a temporary name and renamed into place, which would replace "
                 "it: give a regular file name")
#: what a path that is neither a regular file nor a directory is, by its ``stat.S_IS*`` test
_SPECIAL_FILES = ((stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISCHR, "a character device"),
                  (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def unreplaceable(path: PathLike) -> Optional[str]:
    """Why an existing ``path`` may not be replaced by a published file output (the reason and what to do),
    else None: a named pipe, device or socket, or a symbolic link to one (a rename would replace the pipe,
    the device node or the link with a regular file, not write into it), or a write-protected file
    (:func:`write_protected`)."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return None
    link = stat.S_ISLNK(mode)
    if link:
        try:
            mode = os.stat(path).st_mode
        except OSError:  # a dangling or looping link: replaced like a missing file
            return None
    for test, kind in _SPECIAL_FILES:
        if test(mode):
            return f"it is {'a symbolic link to ' if link else ''}{kind}; {_SPECIAL_HINT}"
    why = None if link else write_protected(path)
    return f"{why}; {_PROTECTED_HINT}" if why else None


def check_destination(dest: PathLike, *, directory: bool = False, replace: bool = True) -> Path:
    """Refuse ``dest`` as an output before any work: returns it as a :class:`Path`.

    A file output (``directory=False``) may not be an existing directory, nor an existing file that
    :func:`unreplaceable` refuses (a pipe, device or socket, a link to one, a write-protected file); a directory output may not be an existing non-directory, nor an
    existing directory unless ``replace``, nor one that :func:`write_protected` refuses (a read-only tree is
    never half replaced).  The parent must be an existing directory (create it first;
    see :meth:`Publication.open`).

    Raises:
        PublishError: naming ``dest`` and the reason.
    """
    p = Path(dest)
    parent = p.parent
    if not parent.is_dir():
        what = "does not exist" if not parent.exists() else "is not a directory"
        raise PublishError(f"cannot write {p}: {parent} {what}")
    if directory:
        if p.is_symlink() or (p.exists() and not p.is_dir()):
            raise PublishError(f"cannot write {p}: it exists and is not a directory")
        if p.is_dir() and not replace:
            raise PublishError(f"cannot write {p}: the directory exists (remove it or choose another name)")
        why = write_protected(p) if p.is_dir() else None
        if why:
            raise PublishError(f"cannot write {p}: {why}; {_PROTECTED_HINT}")
    elif p.is_dir() and not p.is_symlink():
        raise PublishError(f"cannot write {p}: it is a directory")
    elif p.is_dir():
        raise PublishError(f"cannot write {p}: it is a symbolic link to a directory")
    else:
        why = unreplaceable(p)
        if why:
            raise PublishError(f"cannot write {p}: {why}")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise PublishError(f"cannot write {p}: {parent} is not writable")
    return p


#: numpy's ``tofile`` reports a short write (a full disk, a quota) without an errno
_SHORT_WRITE = re.compile(r"(\d+) requested and (\d+) written")


def _file_size_limit() -> Optional[int]:
    """The process's file size limit in bytes (RLIMIT_FSIZE, ``ulimit -f``), None when unlimited."""
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
        return None if soft == resource.RLIM_INFINITY else int(soft)
    except (ImportError, OSError, ValueError, AttributeError):
        return None


def _os_text(exc: OSError, path: Optional[Path] = None) -> str:
    """An OSError as text; numpy's errno-less short write of ``path`` is said as what it (almost always)
    is: no space left on the device, when the file system has less room than the bytes missing."""
    text = exc.strerror or str(exc)
    short = _SHORT_WRITE.fullmatch(str(exc)) if exc.errno is None else None
    if short and path is not None:
        missing = int(short.group(1)) - int(short.group(2))
        try:
            st = os.statvfs(path.parent)
            room: Optional[int] = st.f_bavail * st.f_frsize
        except (OSError, AttributeError):
            room = None
        limit = _file_size_limit()
        try:
            size: Optional[int] = os.path.getsize(path)
        except OSError:
            size = None
        if limit is not None and size is not None and size >= limit:
            why = f"{os.strerror(errno.EFBIG)} (the file size limit, ulimit -f, is {limit} bytes)"
        else:
            why = os.strerror(errno.ENOSPC) if room is not None and room < missing else "short write"
        return f"{why} ({short.group(1)} bytes requested, {short.group(2)} written)"
    if exc.errno == errno.EFBIG:  # a write past RLIMIT_FSIZE: say the limit, as for numpy's short write
        limit = _file_size_limit()
        if limit is not None:
            return f"{text} (the file size limit, ulimit -f, is {limit} bytes)"
    return text


# ---------------------------------------------------------------------------
# The publication


@dataclass
class _Item:
    dest: Path
    temp: Path
    directory: bool
    replace: bool
    remove: bool = False  # a stale output to take away (:meth:`Publication.remove`); ``temp`` unused


@contextlib.contextmanager
def output_directory_lock(directory: PathLike) -> Iterator[Path]:
    """Hold an exclusive advisory lock (``flock``) on the output directory ``directory`` for the block,
    so that processes publishing into the same directory do it one after another.

    Two ``ptonum postprocess`` runs writing the same STEM into one ``--out-dir`` would otherwise
    interleave their checks (which files an earlier run wrote) and their renames, and leave a mixed set
    (``STEM.flags.json`` of one run beside ``STEM.d.bin`` of the other) or refuse each other's files.
    The lock is on the directory itself, so a missing ``directory`` (and its missing parents) is created
    first and removed again, if still empty, when the block raises.  Where the file system has no
    ``flock``, the directory cannot be opened for reading (mode ``-wx``) or the platform has no
    :mod:`fcntl`, the block runs unlocked.  Yields ``directory``.

    Raises:
        PublishError: ``directory`` cannot be created (naming it) or is not a directory.
    """
    p = Path(directory)
    missing = []
    d = p
    while not os.path.lexists(d) and d != d.parent:
        missing.append(d)
        d = d.parent
    made: List[Path] = []
    fd = -1
    ok = False
    try:
        for d in reversed(missing):  # outermost first; each remembered before it exists
            made.append(d)
            _MADE_DIRS.add(d)
            try:
                os.mkdir(d, 0o777)
            except FileExistsError:
                made.pop()
                _MADE_DIRS.discard(d)
            except OSError as exc:
                made.pop()
                _MADE_DIRS.discard(d)
                raise PublishError(f"cannot write in {p}: cannot create {d}: {_os_text(exc)}") from None
        flock: Any = None
        try:
            import fcntl

            flock = fcntl.flock
        except ImportError:  # no flock on this platform (Windows): unlocked
            pass
        if flock is not None:
            try:
                fd = os.open(p, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
            except OSError:  # a directory that can be written but not read (mode -wx): unlocked
                fd = -1
            if fd >= 0:
                try:
                    flock(fd, fcntl.LOCK_EX)
                except OSError:  # no flock on this file system (some network file systems): unlocked
                    pass
        yield p
        ok = True
    finally:
        if fd >= 0:
            os.close(fd)  # releases the lock
        for d in reversed(made):
            if not ok:
                try:
                    os.rmdir(d)  # only when empty: nothing was published there
                except OSError:
                    pass
            _MADE_DIRS.discard(d)


class Publication:
    """A set of outputs written under temporary names and published together when the ``with`` block ends.

    Use it as a context manager (or call :meth:`commit` / :meth:`discard` yourself).  Outputs:

    * :meth:`open` -- a binary (or text) file object on a staged temporary file;
    * :meth:`write_bytes`, :meth:`write_text` -- a whole file at once;
    * :meth:`directory` -- a staged temporary directory to fill (a Zarr store, a folder of files);
    * :meth:`remove` -- an earlier output to take away in the same commit (it vanishes exactly when
      the new outputs appear, and stays if they are not published).

    Files get the permissions of a normally created file (``0o666`` less the umask), directories
    ``0o777`` less the umask.  An existing destination file is replaced; an existing destination
    directory only when staged with ``replace=True``.  Parent directories are created when missing
    (``make_parents=True``, the default) and removed again (when still empty) if nothing is published.

    After :meth:`commit`, :attr:`paths` lists the destinations in the order they were staged and
    :attr:`removed` the earlier outputs taken away.  A Publication is for one thread.

    Raises:
        PublishError: a destination cannot be written or put in place (naming the destination);
            nothing is published and no temporary remains.
    """

    def __init__(self, *, make_parents: bool = True) -> None:
        self._items: List[_Item] = []
        self._make_parents = make_parents
        self._made_dirs: List[Path] = []  # created for the outputs; removed again when nothing is published
        self._state = "open"  # open -> committed | discarded
        self.paths: List[Path] = []
        self.removed: List[Path] = []

    # -- context manager
    def __enter__(self) -> "Publication":
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        try:
            if exc_type is None:
                self.commit()
                return
        except BaseException:
            if self._state != "committed":
                self.discard()
            raise
        self.discard()

    # -- staging
    def _stage(self, dest: PathLike, directory: bool, replace: bool) -> _Item:
        if self._state != "open":
            raise PublishError(f"cannot write {dest}: the publication is already {self._state}")
        p = Path(dest)
        if any(it.dest == p for it in self._items):
            raise PublishError(f"cannot write {p}: the same output is written twice")
        if self._make_parents:
            parent = p.parent
            if parent.exists() and not parent.is_dir():
                raise PublishError(f"cannot write {p}: {parent} is not a directory")
            missing = []
            d = parent
            while not os.path.lexists(d) and d != d.parent:
                missing.append(d)
                d = d.parent
            for d in reversed(missing):  # outermost first; each remembered before it exists
                self._made_dirs.append(d)
                _MADE_DIRS.add(d)
                try:
                    os.mkdir(d, 0o777)
                except FileExistsError:
                    self._made_dirs.pop()
                    _MADE_DIRS.discard(d)
                except OSError as exc:
                    self._made_dirs.pop()
                    _MADE_DIRS.discard(d)
                    raise PublishError(f"cannot write {p}: cannot create {d}: {_os_text(exc)}") from None
        check_destination(p, directory=directory, replace=replace)
        mask = _umask()
        for _ in range(100):
            item = _Item(p, _temp_name(p), directory, replace)
            # listed (here and process-wide) before it exists: no instant where it exists unlisted
            self._items.append(item)
            _track(item.temp)
            try:
                if directory:
                    os.mkdir(item.temp, 0o777 & ~mask)
                else:
                    os.close(os.open(item.temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666 & ~mask))
            except FileExistsError:  # another's name: not ours to remove
                self._items.pop()
                _untrack(item.temp)
                continue
            except OSError as exc:
                self._items.pop()
                _untrack(item.temp)
                raise PublishError(f"cannot write {p}: {_os_text(exc)}") from None
            return item
        raise PublishError(f"cannot write {p}: no free temporary name")  # pragma: no cover

    @contextlib.contextmanager
    def open(self, dest: PathLike, mode: str = "wb", **kwargs: Any) -> Iterator[IO[Any]]:
        """A file object writing the staged temporary of ``dest`` (``mode`` ``"wb"`` or ``"w"``;
        ``kwargs`` go to :func:`open`, e.g. ``encoding``).  An :class:`OSError` while writing becomes a
        :class:`PublishError` naming ``dest``."""
        if mode not in ("wb", "w"):
            raise PublishError(f"cannot write {dest}: mode {mode!r} (expected 'wb' or 'w')")
        item = self._stage(dest, False, True)
        try:
            with open(item.temp, mode, **kwargs) as fh:
                yield fh
        except OSError as exc:
            raise PublishError(f"cannot write {item.dest}: {_os_text(exc, item.temp)}") from None

    def write_bytes(self, dest: PathLike, data: bytes) -> None:
        """Stage ``dest`` with the bytes ``data``."""
        with self.open(dest, "wb") as fh:
            fh.write(data)

    def write_text(self, dest: PathLike, text: str, encoding: str = "utf-8") -> None:
        """Stage ``dest`` with ``text`` (``encoding``, no newline translation)."""
        self.write_bytes(dest, text.encode(encoding))

    @contextlib.contextmanager
    def directory(self, dest: PathLike, *, replace: bool = False) -> Iterator[Path]:
        """An empty staged directory to fill for ``dest`` (e.g. a Zarr store); published as ``dest``.

        ``replace=True`` lets an existing directory at ``dest`` be replaced (the old tree is removed after
        the commit succeeds; restored on rollback).  An :class:`OSError` inside the block becomes a
        :class:`PublishError` naming ``dest``."""
        item = self._stage(dest, True, replace)
        try:
            yield item.temp
        except OSError as exc:
            raise PublishError(f"cannot write {item.dest}: {_os_text(exc)}") from None

    def remove(self, dest: PathLike) -> None:
        """Take the existing file or directory ``dest`` away when the publication commits, together
        with the new outputs (e.g. an output of an earlier run that this run does not write, so that
        a directory never mixes two runs' outputs); on rollback or :meth:`discard` it stays.  A
        ``dest`` that no longer exists at the commit is skipped.

        Raises:
            PublishError: ``dest`` is also written by this publication, or the publication has ended.
        """
        if self._state != "open":
            raise PublishError(f"cannot remove {dest}: the publication is already {self._state}")
        p = Path(dest)
        if any(it.dest == p for it in self._items):
            raise PublishError(f"cannot remove {p}: it is also an output of this publication")
        why = write_protected(p)
        if why:
            raise PublishError(f"cannot remove {p}: {why}; {_PROTECTED_HINT}")
        self._items.append(_Item(p, p, os.path.isdir(p) and not os.path.islink(p), True, remove=True))

    # -- ending
    def discard(self) -> None:
        """Remove every staged temporary; nothing is published (idempotent)."""
        with _hold_signals():
            items, self._items = self._items, []
            if self._state == "open":
                self._state = "discarded"
            for it in items:
                if it.remove:  # not ours: the earlier output stays
                    continue
                _remove(it.temp)
                _untrack(it.temp)
                if it.directory:
                    _DISCARDED.add(it.temp)
            made, self._made_dirs = self._made_dirs, []
            for d in reversed(made):  # the directories this publication created, if still empty
                try:
                    os.rmdir(d)
                except OSError:
                    pass
                _MADE_DIRS.discard(d)

    def commit(self) -> List[Path]:
        """Put every staged output in place, all of them or (on any error) none; returns the destinations.

        Every destination is checked before the first rename; an existing output is kept under a
        temporary name until all are in place, so a rename that fails restores the earlier contents.

        Raises:
            PublishError: naming the destination that failed; every temporary is removed.
        """
        if self._state != "open":
            raise PublishError(f"the publication is already {self._state}")
        try:
            with _hold_signals():
                for it in self._items:
                    if it.remove:
                        why = write_protected(it.dest)
                        if why:
                            raise PublishError(f"cannot remove {it.dest}: {why}; {_PROTECTED_HINT}")
                        continue
                    check_destination(it.dest, directory=it.directory, replace=it.replace)
                    if not os.path.lexists(it.temp):
                        raise PublishError(f"cannot write {it.dest}: its temporary {it.temp.name} vanished")
                done = self._rename_all()
                self._state = "committed"
                self.paths = [it.dest for it in self._items if not it.remove]
                self.removed = [d for d in done if d not in self.paths]
                done = self.paths
                _PUBLISHED.extend([(next(_SEQUENCE), d) for d in done])
                for d in self._made_dirs:  # they hold outputs now
                    _MADE_DIRS.discard(d)
                self._made_dirs = []
        except BaseException:
            # a failure, or a signal before the renames (held-back ones arrive after a complete commit)
            if self._state != "committed":
                self.discard()
            raise
        return list(self.paths)

    def _rename_all(self) -> List[Path]:
        """Move every temporary into place; on any failure undo what was done and re-raise."""
        steps: List[Tuple[_Item, Optional[Path], bool]] = []  # (item, backup, placed)
        gone: List[Path] = []  # removals done (stale outputs set aside)
        try:
            for it in self._items:
                if it.remove:
                    if not os.path.lexists(it.dest):
                        continue
                    aside = _free_name(it.dest)
                    _track(aside)
                    try:
                        os.rename(it.dest, aside)  # out of the way; restored on rollback
                    except OSError as exc:
                        _untrack(aside)
                        raise PublishError(f"cannot remove {it.dest}: {_os_text(exc)}") from None
                    steps.append((it, aside, True))
                    gone.append(it.dest)
                    continue
                steps.append((it, None, False))
                backup = self._set_aside(it)
                steps[-1] = (it, backup, False)
                try:
                    if it.directory:
                        os.rename(it.temp, it.dest)
                    else:
                        os.replace(it.temp, it.dest)
                except OSError as exc:
                    raise PublishError(f"cannot write {it.dest}: {_os_text(exc)}") from None
                _untrack(it.temp)
                steps[-1] = (it, backup, True)
        except BaseException:
            for it, backup, placed in reversed(steps):
                _undo(it, backup, placed)
            raise
        for _, backup, _ in steps:
            if backup is not None:
                _remove(backup)
                _untrack(backup)
        return [it.dest for it in self._items if not it.remove] + gone

    @staticmethod
    def _set_aside(it: _Item) -> Optional[Path]:
        """Keep an existing destination under a temporary name until the whole set is in place (a hard
        link for a file, so the destination stays in place until its atomic replace); None when there is
        none."""
        if not os.path.lexists(it.dest):
            return None
        backup = _free_name(it.dest)
        _track(backup)
        try:
            if it.directory:
                os.rename(it.dest, backup)
            else:
                try:
                    os.link(it.dest, backup, follow_symlinks=False)
                except OSError:
                    os.rename(it.dest, backup)
        except OSError as exc:
            _untrack(backup)
            raise PublishError(f"cannot replace {it.dest}: {_os_text(exc)}") from None
        return backup


def _name_max(directory: Path) -> int:
    """The longest file name (bytes) the file system of ``directory`` takes (255 when it does not say)."""
    try:
        return int(os.pathconf(directory, "PC_NAME_MAX"))
    except (OSError, ValueError, AttributeError):
        return 255


def _temp_name(dest: Path) -> Path:
    """A temporary name next to ``dest``: ``.NAME.XXXXXXXX.tmp``, NAME cut short when the whole would pass
    the file system's name limit (a legal output name of up to that limit stays writable)."""
    tail = f".{os.urandom(4).hex()}.tmp"
    name = dest.name
    room = _name_max(dest.parent) - len(tail) - 1
    raw = os.fsencode(name)
    if len(raw) > room:  # cut on a character boundary
        name = raw[:max(room, 1)].decode("utf-8", "ignore") or "o"
    return dest.parent / f".{name}{tail}"


def _free_name(dest: Path) -> Path:
    """A temporary name next to ``dest`` that does not exist yet."""
    while True:
        p = _temp_name(dest)
        if not os.path.lexists(p):
            return p


def _undo(it: _Item, backup: Optional[Path], placed: bool) -> None:
    """Roll one output back (best effort; what cannot be undone stays tracked for removal)."""
    try:
        if it.remove:  # a stale output set aside: back in place
            if backup is not None:
                os.rename(backup, it.dest)
                _untrack(backup)
            return
        if placed:
            if backup is not None and not it.directory:
                os.replace(backup, it.dest)  # the earlier file back, atomically
                _untrack(backup)
                return
            trash = _free_name(it.dest)
            _track(trash)
            os.rename(it.dest, trash)  # our new output out of the way
            _remove(trash)
            _untrack(trash)
        if backup is not None:
            if os.path.lexists(it.dest):  # a hard-link backup: the destination was never touched
                _remove(backup)
            else:
                os.rename(backup, it.dest)
            _untrack(backup)
    except OSError:
        pass


def _umask() -> int:
    """The process umask; read from /proc where it can be (``os.umask`` would change it for an instant,
    under every other thread)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask

