"""The file-system boundary: every file edgecc reads from the user and every file or folder it
writes.

Owns, for reading: `read_regular` (a regular file only, so a FIFO or a device is refused in one
line instead of blocking or never ending; its size checked against a cap before a byte is read;
opened with O_NONBLOCK so the check itself never blocks).

Owns, for writing, the one output layer every verb uses (compile -o, report -o, plan --svg,
inspect --dump-ir, verify --keep, budget --keep, the firmware files of --emit):

- A folder output (`staged_folder`, `write_folder`) is written into a fresh private folder
  (mode 0700, `.edgecc-stage-*`) inside the destination and committed at the end: each entry is
  renamed into place under an exclusive lock on the destination (two concurrent compiles into one
  folder commit one after the other, never interleaved) with SIGINT/SIGTERM/SIGHUP held, so an
  interrupted run leaves the old output or the new one, never a mix, and no staging folder (it is
  removed on any exception, KeyboardInterrupt included). Entries of the destination the output
  does not name are left alone.
- A file output (`write_file`) is written to a temporary file beside it and renamed over it.
- No write follows a symbolic link: the destination itself must not be a link (refused in one
  line: the link may have been planted where the output goes); inside it, every folder is opened
  with O_NOFOLLOW relative to its parent's descriptor, a link found where a folder or file goes is
  replaced (removed, never followed), and files are created with O_EXCL|O_NOFOLLOW. The path
  leading to the destination is the user's, resolved as given.
- Every relative path stays inside the destination (`check_relpath`: no absolute path, no `..`,
  no empty or `.` part, no backslash or control character).
"""
from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import shutil
import signal
import stat
import tempfile
from pathlib import Path
from typing import Iterator

from edgecc.errors import EdgeccError

STAGE_PREFIX = ".edgecc-stage-"
_HELD = tuple(s for s in (getattr(signal, n, None) for n in ("SIGINT", "SIGTERM", "SIGHUP"))
              if s is not None)
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


# ---------------------------------------------------------------- reading


def _check_stat(st: os.stat_result, p: Path, what: str, limit: int, error) -> int:
    if not stat.S_ISREG(st.st_mode):
        kind = "a folder" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        raise error(f"{what} {p}: is {kind}")
    if st.st_size > limit:
        raise error(f"{what} {p}: {st.st_size:,} bytes, over edgecc's limit of {limit:,} bytes")
    return st.st_size


def _missing(p: Path, what: str, e: OSError, error) -> Exception:
    if isinstance(e, FileNotFoundError):
        return error(f"{what} {p}: no such file")
    return error(f"{what} {p}: cannot read: {e.strerror}")


def read_regular(path: str | Path, what: str, limit: int, error=EdgeccError) -> bytes:
    """The bytes of `path`, which must be a regular file of at most `limit` bytes (else one
    `error` line naming `what` and the path)."""
    p = Path(path)
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise _missing(p, what, e, error) from None
    try:
        _check_stat(os.fstat(fd), p, what, limit, error)
        with os.fdopen(os.dup(fd), "rb") as f:
            data = f.read(limit + 1)
    except OSError as e:
        raise _missing(p, what, e, error) from None
    finally:
        os.close(fd)
    if len(data) > limit:  # grew while read
        raise error(f"{what} {p}: over edgecc's limit of {limit:,} bytes")
    return data


def check_regular(path: str | Path, what: str, limit: int, error=EdgeccError) -> int:
    """Refuse `path` unless it is a regular file of at most `limit` bytes; its size. Never opens
    it (stat only), so a FIFO cannot block."""
    p = Path(path)
    try:
        st = os.stat(p)
    except OSError as e:
        raise _missing(p, what, e, error) from None
    return _check_stat(st, p, what, limit, error)


# ---------------------------------------------------------------- paths


def check_relpath(rel: str) -> list[str]:
    """The parts of a relative output path that stays inside its folder, or EdgeccError."""
    parts = rel.split("/")
    if (not rel or rel.startswith("/") or "\\" in rel
            or any(p in ("", ".", "..") for p in parts)
            or any(ord(c) < 32 or ord(c) == 127 for c in rel)):
        raise EdgeccError(f"output file name {rel!r} would leave the output folder")
    return parts


def refuse_link(dest: Path, what: str) -> None:
    """EdgeccError when `dest` is a symbolic link (edgecc never writes through one)."""
    if os.path.islink(dest):
        raise EdgeccError(f"{what} {dest}: is a symbolic link; edgecc does not write through "
                          f"links (name the real path)")


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP held back (delivered when the block ends)."""
    try:
        old = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)
    except (AttributeError, ValueError, OSError):  # no pthread_sigmask on this platform
        yield
        return
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _open_dir(name: str, dir_fd: int | None, what: str, create: bool) -> int:
    """A descriptor of folder `name` (relative to dir_fd), never through a link: a link (or file)
    where the folder goes is removed when `create` (inside the destination), refused otherwise."""
    for _ in range(3):
        try:
            return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
        except FileNotFoundError:
            if not create:
                raise
        except OSError as e:
            if e.errno not in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                raise
            if not create:
                raise EdgeccError(f"{what}: is a symbolic link or not a folder; edgecc does "
                                  f"not write through links") from None
            os.unlink(name, dir_fd=dir_fd)  # the link itself, never its target
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, 0o777, dir_fd=dir_fd)
    raise EdgeccError(f"{what}: the folder keeps changing while edgecc writes it")


def _write_at(dir_fd: int, name: str, data: bytes) -> None:
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                 | getattr(os, "O_CLOEXEC", 0), 0o666, dir_fd=dir_fd)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def _as_bytes(text: str | bytes) -> bytes:
    return text.encode("utf-8") if isinstance(text, str) else text


# ---------------------------------------------------------------- folders


def _commit(stage_fd: int, dest_fd: int, what: str, dry: bool = False) -> None:
    """Rename every entry of the staging folder into the destination, folders merged entry by
    entry (a link or file where a folder goes is replaced). `dry`: only look for what would stop
    the commit half-way (a folder where a file goes), so that it is refused before any rename."""
    for entry in sorted(os.listdir(stage_fd)):
        st = os.stat(entry, dir_fd=stage_fd, follow_symlinks=False)
        try:
            dst = os.stat(entry, dir_fd=dest_fd, follow_symlinks=False)
        except FileNotFoundError:
            dst = None
        if not stat.S_ISDIR(st.st_mode):
            if dst is not None and stat.S_ISDIR(dst.st_mode):
                raise EdgeccError(f"{what}/{entry}: is a folder where edgecc writes a file")
            if not dry:
                os.rename(entry, entry, src_dir_fd=stage_fd, dst_dir_fd=dest_fd)
            continue
        if dst is None or not stat.S_ISDIR(dst.st_mode):
            if not dry:  # a link or file where the folder goes is removed, never followed
                if dst is not None:
                    os.unlink(entry, dir_fd=dest_fd)
                os.rename(entry, entry, src_dir_fd=stage_fd, dst_dir_fd=dest_fd)
            continue
        sub_src = os.open(entry, _DIR_FLAGS, dir_fd=stage_fd)
        try:
            sub_dst = _open_dir(entry, dest_fd, f"{what}/{entry}", create=not dry)
            try:
                _commit(sub_src, sub_dst, f"{what}/{entry}", dry)
            finally:
                os.close(sub_dst)
        finally:
            os.close(sub_src)


@contextlib.contextmanager
def staged_folder(dest: str | Path, what: str, commit_on_error: bool = False) -> Iterator[Path]:
    """A fresh, private, empty folder inside `dest` (created if missing) to write the whole output
    into; committed into `dest` when the block ends normally (and, with `commit_on_error`, after
    an Exception too: a kept build folder is most useful when the build failed); removed in every
    case. `dest` must not be a symbolic link."""
    dest = Path(dest)
    refuse_link(dest, what)
    try:
        dest.mkdir(parents=True, exist_ok=True)
        dest_fd = _open_dir(str(dest), None, f"{what} {dest}", create=False)
    except FileExistsError:
        raise EdgeccError(f"{what} {dest}: exists and is not a folder") from None
    except NotADirectoryError:
        raise EdgeccError(f"{what} {dest}: a part of the path is not a folder") from None
    try:
        stage = Path(tempfile.mkdtemp(prefix=STAGE_PREFIX, dir=dest))
        try:
            ok = False
            try:
                yield stage
                ok = True
            except Exception:
                if commit_on_error:
                    _commit_stage(stage, dest_fd, f"{what} {dest}")
                raise
            if ok:
                _commit_stage(stage, dest_fd, f"{what} {dest}")
        finally:
            with signals_held():
                shutil.rmtree(stage, ignore_errors=True)
    finally:
        os.close(dest_fd)


def _commit_stage(stage: Path, dest_fd: int, what: str) -> None:
    stage_fd = os.open(stage, _DIR_FLAGS)
    try:
        with signals_held():
            try:
                fcntl.flock(dest_fd, fcntl.LOCK_EX)  # one committer at a time per folder
                locked = True
            except OSError:  # a file system without locks (some network mounts): commit alone
                locked = False
            try:
                _commit(stage_fd, dest_fd, what, dry=True)  # refuse before the first rename
                _commit(stage_fd, dest_fd, what)
            finally:
                if locked:
                    fcntl.flock(dest_fd, fcntl.LOCK_UN)
    finally:
        os.close(stage_fd)


def write_tree(files: dict[str, str | bytes], root: Path) -> list[Path]:
    """Write `files` (relative path -> text or bytes) under `root`, a folder edgecc just created
    (a staging folder): every path checked to stay inside, folders opened without following
    links, files created exclusively."""
    root_fd = os.open(root, _DIR_FLAGS)
    out = []
    try:
        for rel in sorted(files):
            parts = check_relpath(rel)
            fd = os.dup(root_fd)
            try:
                for part in parts[:-1]:
                    nfd = _open_dir(part, fd, f"{root}/{rel}", create=True)
                    os.close(fd)
                    fd = nfd
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(parts[-1], dir_fd=fd)
                _write_at(fd, parts[-1], _as_bytes(files[rel]))
            finally:
                os.close(fd)
            out.append(root / rel)
    finally:
        os.close(root_fd)
    return out


def write_folder(files: dict[str, str | bytes], dest: str | Path, what: str = "-o") -> list[Path]:
    """Write a whole output folder (relative path -> text or bytes) as one commit: the old output
    or the new one, never a mix. The paths of the written files in `dest`."""
    dest = Path(dest)
    with staged_folder(dest, what) as stage:
        write_tree(files, stage)
    return [dest / rel for rel in sorted(files)]


# ---------------------------------------------------------------- single files


def write_file(dest: str | Path, data: str | bytes, what: str) -> Path:
    """Write one file: a temporary file beside it, renamed over it at the end; `dest` must not be
    a symbolic link (nor a folder)."""
    dest = Path(dest)
    refuse_link(dest, what)
    if dest.is_dir():
        raise EdgeccError(f"{what} {dest}: is a folder")
    parent = dest.parent
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{dest.name[:60]}.", suffix=".edgecc-tmp",
                                   dir=parent)
    except OSError as e:
        raise EdgeccError(f"{what} {dest}: cannot write: {e.strerror or e}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(_as_bytes(data))
        os.chmod(tmp, 0o666 & ~_umask())
        with signals_held():
            os.replace(tmp, dest)  # replaces a link planted meanwhile, never follows it
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return dest


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def work_folder(keep: str | Path | None, prefix: str, what: str = "--keep") -> Iterator[Path]:
    """A build folder: a temporary one, or with `keep` a staged one committed into `keep` at the
    end (after a failure too: that is when a kept build folder is read)."""
    if keep is None:
        with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
            yield Path(tmp)
    else:
        with staged_folder(keep, what, commit_on_error=True) as stage:
            yield stage
