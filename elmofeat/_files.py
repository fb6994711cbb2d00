"""Writing files so that a failure never destroys the previous version."""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import tempfile
import time
from pathlib import Path

from .exceptions import DiskFullError


def _current_umask() -> int:
    """The process's umask, read without changing it where the system tells (Linux);
    elsewhere set and set back at once (the only portable way)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _current_umask()


#: A temporary file untouched for this long belongs to a writer that was killed.
STALE_SECONDS = 3600.0


#: The random part of a ``tempfile.mkstemp`` name: 8 characters of this alphabet.
_MKSTEMP_PART = r"[a-z0-9_]{8}"


def remove_stale_temporaries(folder, names: str) -> int:
    """Delete :func:`atomic_path`'s temporary files in ``folder`` that nobody has written
    for :data:`STALE_SECONDS` (left by a save that was killed: a ``finally`` cannot run
    after SIGKILL); return how many. A writer at work keeps its file fresh.

    ``names``: a regular expression of the target file names whose temporaries to
    remove (``re.escape(name)`` for one). Only regular files named exactly as
    ``atomic_path`` names its temporaries (``.NAME.XXXXXXXX.tmp``) and owned by this
    process's user are removed: a glob character in a file name, or another user's
    file, never widens what is deleted.
    """
    pattern = re.compile(rf"\.(?:{names})\.{_MKSTEMP_PART}\.tmp")
    removed, now = 0, time.time()
    try:
        candidates = [p for p in Path(folder).iterdir() if pattern.fullmatch(p.name)]
    except OSError:
        return 0
    owner = os.getuid() if hasattr(os, "getuid") else None
    for leftover in candidates:
        try:
            info = leftover.lstat()
            if (stat.S_ISREG(info.st_mode) and (owner is None or info.st_uid == owner)
                    and now - info.st_mtime > STALE_SECONDS):
                leftover.unlink()
                removed += 1
        except OSError:
            pass  # gone already, or not ours to remove
    return removed


@contextlib.contextmanager
def atomic_path(path):
    """Yield a temporary path beside ``path``; move it onto ``path`` if the block succeeds.

    A failure at any point leaves an existing ``path`` untouched and no temporary file.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "notes.txt"
    >>> with atomic_path(target) as tmp:
    ...     _ = tmp.write_text("done")
    >>> target.read_text()
    'done'
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(path.parent, re.escape(path.name))
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(handle)
    temporary = Path(temporary)
    try:
        try:
            yield temporary
        except (OSError, RuntimeError) as exc:
            if _out_of_space(exc):
                raise DiskFullError(path, exc) from exc
            raise
        os.chmod(temporary, 0o666 & ~_UMASK)  # mkstemp makes it private; give it the usual mode
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def refuse_to_replace_folder(folder, overwrite: bool, what: str,
                             option: str = "overwrite=True") -> None:
    """The output-safety rule for folders (``save_pretrained``, ``elmofeat pretrain
    --pretrained``): a folder that exists and holds anything is written into only when
    the caller said so (``option``), checked before any work. A project folder given by
    mistake (``-o .``) keeps its ``config.json``."""
    folder = Path(folder).expanduser()
    if overwrite or not folder.is_dir():
        return
    held = sorted(p.name for p in folder.iterdir())
    if held:
        shown = ", ".join(held[:4]) + (f" and {len(held) - 4} more" if len(held) > 4 else "")
        raise FileExistsError(
            f"{folder} is a folder that holds files already ({shown}): saving {what} there "
            "would write over its config.json, bilm.pt and README.md. Give a new or empty "
            f"folder, or {option} to write into this one")


def save_torch_atomically(obj, path) -> None:
    """``torch.save`` to a temporary file beside ``path``, then rename it into place.

    A failure at any point leaves an existing ``path`` untouched and no temporary file.
    The same object always gives the same bytes: written through a file object, the
    zip archive's folder is torch's fixed ``archive``, not the temporary file's random
    name, so a saved model's SHA-256 can be reproduced.
    """
    import torch  # only the biLM's files need it

    with atomic_path(path) as temporary:
        with open(temporary, "wb") as handle:
            torch.save(obj, handle)


_FULL = (errno.ENOSPC, errno.EFBIG, getattr(errno, "EDQUOT", errno.ENOSPC))


def _out_of_space(exc: BaseException) -> bool:
    """Whether a write failed because the disk (or the file size limit) is full.

    torch's zip writer reports a short write as ``RuntimeError: ... unexpected pos``
    instead of passing on the ``OSError``.
    """
    while exc is not None:
        if isinstance(exc, OSError) and exc.errno in _FULL:
            return True
        # NumPy's short write (ndarray.tofile, np.save) raises an OSError without errno
        if (isinstance(exc, OSError) and exc.errno is None
                and re.search(r"\d+ requested and \d+ written", str(exc))):
            return True
        if isinstance(exc, RuntimeError) and ("unexpected pos" in str(exc)
                                              or "file write failed" in str(exc)):
            return True
        exc = exc.__cause__ or exc.__context__
    return False
