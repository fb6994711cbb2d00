"""A file lock between processes that never waits in silence nor for ever.

Processes that share a cache folder (joblib workers of a search, two notebooks) wait for
the one that is making an entry, so that it is made once. Waiting is right while that
process works; it is wrong when the holder is stopped (Ctrl-Z) or stuck. So the lock
holder writes its process id beside the lock; a waiter says after :data:`NOTICE_AFTER`
seconds what it waits for, gives up at once when the holder is stopped, and in any case
after :data:`GIVE_UP_AFTER` seconds. A lock that cannot be taken at all (a folder that
cannot be written, a link planted where the lock goes) is not an error either: the
caller goes on without the shared entry, warned.
"""

from __future__ import annotations

import os
import time
import warnings
from contextlib import contextmanager
from pathlib import Path

from .exceptions import CacheWarning

#: Seconds of waiting before the waiter says what it waits for.
NOTICE_AFTER = 10.0
#: Seconds after which a waiter gives up on a holder that is still running.
GIVE_UP_AFTER = 3600.0
_POLL = 0.5


def _holder(owner: Path) -> int | None:
    try:
        return int(owner.read_text().strip())
    except (OSError, ValueError):
        return None


def _stopped(pid: int | None) -> bool:
    """Whether process ``pid`` is stopped (Ctrl-Z, SIGSTOP); False where unknown."""
    if pid is None:
        return False
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] in ("T", "t")
    except (OSError, IndexError):
        return False


@contextmanager
def shared_lock(path: Path, what: str, stacklevel: int = 3):
    """Hold the lock at ``path`` for making ``what``; yields whether it is held.

    Yields False, after a :class:`~elmofeat.exceptions.CacheWarning`, when the lock
    cannot be created or the wait is given up: the caller then does the work without
    the shared entry.
    """
    from filelock import FileLock, Timeout

    owner = path.with_name(path.name + ".owner")
    lock = FileLock(str(path))
    start, noticed, held = time.monotonic(), False, False
    try:
        while True:
            try:
                lock.acquire(timeout=_POLL)
                held = True
                break
            except Timeout:
                waited = time.monotonic() - start
                pid = _holder(owner)
                if _stopped(pid):
                    warnings.warn(f"{path} is held by process {pid}, which is stopped "
                                  f"(suspended); not waiting for it: making {what} without the "
                                  "cache", CacheWarning, stacklevel=stacklevel)
                    break
                if waited >= GIVE_UP_AFTER:
                    warnings.warn(f"gave up after {waited:.0f} s waiting for {path} (held by "
                                  f"process {pid}): making {what} without the cache",
                                  CacheWarning, stacklevel=stacklevel)
                    break
                if not noticed and waited >= NOTICE_AFTER:
                    noticed = True
                    warnings.warn(f"waiting for process {pid if pid else '(unknown)'}, which "
                                  f"holds {path} while it makes {what}; giving up after "
                                  f"{GIVE_UP_AFTER:.0f} s", CacheWarning, stacklevel=stacklevel)
    except OSError as exc:  # the lock file cannot be created or opened
        warnings.warn(f"cannot lock {path}: {exc}; making {what} without the cache",
                      CacheWarning, stacklevel=stacklevel)
    if not held:
        yield False
        return
    try:
        try:
            owner.write_text(str(os.getpid()))
        except OSError:
            pass  # waiters then only learn less about the holder
        yield True
    finally:
        try:
            owner.unlink(missing_ok=True)
        except OSError:
            pass
        lock.release()
