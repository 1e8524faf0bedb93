"""Writing a file so that readers see the old or the new content, never half:
the one atomic writer `portagpu lint --fix` and `portagpu hipify` share.

An existing file keeps what makes it the same file to its users: its mode,
owner and group, its hard links and its symlinks (the file a link points to
is written). Where a new inode cannot keep them (a hard-linked file, an
owner we may not give it back to) the content is written in place instead,
after the caller has verified it. With `expect`, a file that no longer holds
those bytes (saved by someone else meanwhile) is left alone."""

from __future__ import annotations

import os
import stat
import tempfile


class NotRegularFile(OSError):
    """A FIFO, socket or device where a source file was expected: reading it
    could block forever, so it is never read."""

    def __str__(self) -> str:
        return str(self.strerror)


_KINDS = {stat.S_IFIFO: "a FIFO", stat.S_IFSOCK: "a socket", stat.S_IFCHR: "a character device",
          stat.S_IFBLK: "a block device", stat.S_IFDIR: "a folder"}


def not_regular(mode: int) -> str | None:
    """None for a regular file, else what it is ("not a regular file (a FIFO)")."""
    if stat.S_ISREG(mode):
        return None
    return f"not a regular file ({_KINDS.get(stat.S_IFMT(mode), 'special file')})"


def read_regular(path: str | os.PathLike[str]) -> bytes:
    """The bytes of a regular file. Opened without blocking, so a FIFO named
    like a source file is refused at once (NotRegularFile) instead of hanging."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        why = not_regular(os.fstat(fd).st_mode)
        if why is not None:
            raise NotRegularFile(95, why, str(path))
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
    finally:
        os.close(fd)


class FileChanged(OSError):
    """The file is no longer what the caller read: someone else wrote it."""

    def __str__(self) -> str:
        return str(self.strerror)


def _umask() -> int:
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)  # no /proc: read it the only other way (and put it back)
    os.umask(mask)
    return mask


def new_file_mode(like: str | os.PathLike[str] | None = None) -> int:
    """What a new file gets: the mode of `like` (a translation's source), else
    what open() would give (0o666 less the umask), never mkstemp's 0o600."""
    if like is not None:
        try:
            return stat.S_IMODE(os.stat(like).st_mode)
        except OSError:
            pass
    return 0o666 & ~_umask()


def write_atomic(
    path: str | os.PathLike[str],
    data: bytes,
    *,
    expect: bytes | None = None,
    mode: int | None = None,
) -> None:
    """Same-folder temp file + os.replace. `expect`: the bytes the file must
    still hold (else FileChanged, nothing written). `mode`: for a new file
    (default: new_file_mode())."""
    real = os.path.realpath(path)
    folder = os.path.dirname(real) or "."
    try:
        st: os.stat_result | None = os.stat(real)
    except FileNotFoundError:
        st = None
        if expect is not None:
            raise FileChanged(2, "removed during the run; not written", str(path)) from None
    if expect is not None:
        _check_unchanged(real, expect, path)
    if st is not None and (st.st_nlink > 1 or not _may_keep_owner(st)):
        _write_in_place(real, data, expect, path)
        return
    in_place = False
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".portagpu-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if st is None:
            os.chmod(tmp, mode if mode is not None else new_file_mode())
        else:
            os.chmod(tmp, stat.S_IMODE(st.st_mode))
            in_place = not _give_back(tmp, st)
        if not in_place:
            if expect is not None:  # last look: an editor may have saved meanwhile
                _check_unchanged(real, expect, path)
            os.replace(tmp, real)
    except BaseException:
        _unlink(tmp)
        raise
    if in_place:  # the owner could not be given back to a new inode
        _unlink(tmp)
        _write_in_place(real, data, expect, path)


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _check_unchanged(real: str, expect: bytes, shown: str | os.PathLike[str]) -> None:
    try:
        with open(real, "rb") as fh:
            now = fh.read(len(expect) + 1)
    except FileNotFoundError:
        raise FileChanged(2, "removed during the run; not written", str(shown)) from None
    if now != expect:
        raise FileChanged(16, "changed on disk during the run; not written (run again)", str(shown))


def _may_keep_owner(st: os.stat_result) -> bool:
    """Can a file we create be given st's owner and group? (Root can; anyone
    can keep their own uid and a group they belong to.)"""
    if os.geteuid() == 0:
        return True
    if st.st_uid != os.geteuid():
        return False
    return st.st_gid == os.getegid() or st.st_gid in os.getgroups()


def _give_back(tmp: str, st: os.stat_result) -> bool:
    mine = os.stat(tmp)
    if (mine.st_uid, mine.st_gid) == (st.st_uid, st.st_gid):
        return True
    try:
        os.chown(tmp, st.st_uid, st.st_gid)
    except OSError:
        return False
    return True


def _write_in_place(
    real: str, data: bytes, expect: bytes | None, shown: str | os.PathLike[str]
) -> None:
    """Rewrite the same inode (hard links, owner kept); not atomic, so the
    caller has already checked that `data` parses."""
    with open(real, "r+b") as fh:
        if expect is not None and fh.read(len(expect) + 1) != expect:
            raise FileChanged(
                16, "changed on disk during the run; not written (run again)", str(shown)
            )
        fh.seek(0)
        fh.write(data)
        fh.truncate()
        fh.flush()
        os.fsync(fh.fileno())
