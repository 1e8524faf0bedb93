"""Writing a file so that readers see the old or the new content, never half:
the one atomic writer `portagpu lint --fix` and `portagpu hipify` share."""

from __future__ import annotations

import os
import stat
import tempfile


def write_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    """Same-folder temp file + os.replace; an existing file keeps its mode
    (and stays a symlink: the file it points to is replaced)."""
    real = os.path.realpath(path)
    folder = os.path.dirname(real) or "."
    try:
        mode: int | None = stat.S_IMODE(os.stat(real).st_mode)
    except FileNotFoundError:
        mode = None  # a new file keeps the temp file's private mode
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".portagpu-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, real)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
