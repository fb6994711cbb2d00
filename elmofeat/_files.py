"""Writing files so that a failure never destroys the previous version."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

_UMASK = os.umask(0o022)
os.umask(_UMASK)


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
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(handle)
    temporary = Path(temporary)
    try:
        yield temporary
        os.chmod(temporary, 0o666 & ~_UMASK)  # mkstemp makes it private; give it the usual mode
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
