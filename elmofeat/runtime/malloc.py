"""Large freed blocks kept for reuse while elmofeat's torch work runs (glibc only).

glibc's malloc serves every block above its mmap threshold with a fresh ``mmap`` and
gives it back to the operating system when it is freed; its dynamic rule raises that
threshold to at most 32 MiB, and trims the heap's top when more than twice the threshold
lies free. A biLM training step no longer allocates blocks above 16 MiB (the softmax is
scored a block of rows at a time, the LSTM layers run in blocks of positions): on this
project's Intel host a default 1-epoch fit on AG News took 502,035 page faults and 5.3 s
of system time, against 2,704,563 and 8.9 s before (``benchmarks/training_memory.py``).
What is left is the heap's top given back between steps and faulted in again; this
opt-in keeps it (176,129 faults, 3.6 s), though its fits there were no faster (1.00x the
time of the default's). Before that change the opt-in made fits 1.10x
as fast on an AMD host (``benchmarks/malloc_policy.py``).

This is an opt-in, off by default: glibc has no way to read its thresholds back nor to
turn its dynamic rule on again once ``mallopt`` has set them, so a library that sets
them cannot give the user's process back what it had, and it would overwrite a
threshold the user set in code. ``elmofeat.set_config(malloc_tuning=True)`` (or
``config_context``) turns it on; the ``elmofeat`` command, which owns its process, does.
With it on, inside :func:`reuse_large_blocks` (``BiLM.fit`` and ``ElmoVectorizer``'s
fits use it; ``embed`` and ``transform`` do not, as they gained nothing measurable and a
call on one document would pay the trim at its end) blocks up to
:data:`MMAP_THRESHOLD` come from the heap and the heap is not trimmed
(:data:`TRIM_THRESHOLD`): memory a step freed serves the next one. When the outermost block ends, the thresholds are set to the
limits of glibc's dynamic rule (32 MiB and 64 MiB, where a process that has used torch
usually is anyway) and ``malloc_trim`` gives the free heap back to the operating
system. Clearing elmofeat's caches trims the heap too (:func:`release_free_memory`),
again only with the opt-in. Nothing changes but where memory comes from: results are
identical. ``mallopt`` takes glibc's main-arena lock; a user thread allocating while a
fit sets it is safe (tested).

Where the user tunes malloc (``MALLOC_MMAP_THRESHOLD_``, ``MALLOC_TRIM_THRESHOLD_``,
``MALLOC_TOP_PAD_`` or ``glibc.malloc`` tunables in ``GLIBC_TUNABLES``), or the C
library is not glibc, nothing is changed even with the opt-in.
"""

from __future__ import annotations

import ctypes
import functools
import os
import platform
import threading
from contextlib import contextmanager

#: Blocks up to this size come from the heap inside :func:`reuse_large_blocks`.
MMAP_THRESHOLD = 128 * 2**20
#: Free memory the heap keeps at its top inside :func:`reuse_large_blocks`: all of it
#: (-1, glibc's "never trim"); the block's end trims the heap. A step's working set
#: swings by hundreds of MB from batch to batch: with 256 MiB the top was given back at
#: large swings and faulted in again at the next, so the same fit's page faults varied
#: from run to run (``benchmarks/malloc_policy.py``: a bf16 fit's median 691,750
#: against 241,500, an fp32 fit's 798,675 against 228,918; fit times within the pairs'
#: spread, the bf16 fit's peak 77 MB higher without the trims).
TRIM_THRESHOLD = -1
#: Where the thresholds go afterwards: the limits of glibc's dynamic rule.
DYNAMIC_LIMITS = (32 * 2**20, 64 * 2**20)

# mallopt's parameter numbers (malloc.h).
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3

USER_SETTINGS = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_")

_lock = threading.Lock()
_depth = 0
#: The opt-in (``set_config(malloc_tuning=...)``).
enabled = False


def user_tunes_malloc(environ=None) -> bool:
    """Whether the environment sets any of glibc's malloc thresholds."""
    environ = os.environ if environ is None else environ
    return (any(name in environ for name in USER_SETTINGS)
            or "glibc.malloc" in environ.get("GLIBC_TUNABLES", ""))


@functools.cache
def _glibc():
    """glibc's ``mallopt`` and ``malloc_trim``, or None where the C library is another."""
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return None
    try:
        libc = ctypes.CDLL(None)
        libc.mallopt.argtypes, libc.mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
        libc.malloc_trim.argtypes, libc.malloc_trim.restype = [ctypes.c_size_t], ctypes.c_int
    except (OSError, AttributeError):
        return None
    return libc


def _set_thresholds(mmap_threshold: int, trim_threshold: int, libc) -> None:
    libc.mallopt(M_MMAP_THRESHOLD, mmap_threshold)
    libc.mallopt(M_TRIM_THRESHOLD, trim_threshold)


@contextmanager
def reuse_large_blocks(libc=None, environ=None):
    """Keep freed blocks of up to :data:`MMAP_THRESHOLD` in the heap inside the block.

    Does nothing unless the opt-in is on (``set_config(malloc_tuning=True)``). Nested
    and concurrent blocks share one setting: the first to enter sets it, the last
    to leave restores glibc's dynamic limits and trims the heap. ``libc`` and
    ``environ`` are for tests (a fake C library, an environment of their own).
    """
    global _depth
    active = enabled and not user_tunes_malloc(environ)
    if active:
        libc = _glibc() if libc is None else libc
        active = libc is not None
    if active:
        with _lock:
            if _depth == 0:
                _set_thresholds(MMAP_THRESHOLD, TRIM_THRESHOLD, libc)
            _depth += 1
    try:
        yield active
    finally:
        if active:
            with _lock:
                _depth -= 1
                if _depth == 0:
                    _set_thresholds(*DYNAMIC_LIMITS, libc)
                    libc.malloc_trim(0)


def release_free_memory() -> None:
    """Give freed heap memory back to the operating system (with the opt-in, on glibc).

    Thousands of per-document arrays freed at once leave glibc's heap fragmented, and
    the process's resident memory would not fall after clearing the cache.
    """
    if not enabled or user_tunes_malloc():
        return
    libc = _glibc()
    if libc is not None:
        libc.malloc_trim(0)
