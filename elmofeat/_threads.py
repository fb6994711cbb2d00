"""Torch threads that give way when other processes keep cores busy.

torch's CPU kernels split each operation over its threads and wait at a barrier for
the slowest. When another process keeps one of the cores busy, the thread that shares
that core runs a fraction of the time and every barrier waits for it: on 2 cores with
one busy neighbour, 2 threads pretrain about 20x slower than 1 thread. So with
``n_threads=None`` the thread count follows the cores that other processes leave
free, measured from ``/proc/stat`` (all CPU time of the usable cores) minus this
process's own CPU time, and re-decided about once a second while the work runs
(:func:`tick`, called between batches). Where the load cannot be measured (not Linux,
a container whose CPU quota is smaller than the cores it sees) the count stays at
torch's setting. The thread count never changes the results: each output element of
torch's CPU kernels is computed by one thread (``tests/test_threads.py`` checks that
1 and 2 threads pretrain identical weights).
"""

from __future__ import annotations

import math
import os
import threading
import time
from contextlib import contextmanager

from numbers import Integral

import torch
from joblib import cpu_count

from ._validation import check_scalar

# Re-decide at most this often (seconds); a decision needs a load sample this old.
INTERVAL = 1.0
# Cores that others leave free count when at least this much of a core is free.
_FREE_CORE = 0.7
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


class CpuLoad:
    """CPU time that other processes use on the cores this process may run on.

    ``sample()`` reads the cumulative counters; :meth:`others_busy_cores` compares two
    samples. ``read_stat`` (a callable returning ``/proc/stat``'s text) is a parameter
    so that tests can feed it a machine of their own.
    """

    def __init__(self, read_stat=None, own_cpu_seconds=time.process_time, cores=None):
        self._read_stat = read_stat or _read_proc_stat
        self._own_cpu_seconds = own_cpu_seconds
        self.cores = _usable_cores() if cores is None else cores

    def sample(self) -> tuple[float, float, float] | None:
        """(busy ticks, total ticks, own CPU ticks) now, or None where unmeasurable."""
        if self.cores is None:
            return None
        text = self._read_stat()
        if text is None:
            return None
        busy = total = 0.0
        for line in text.splitlines():
            name, *fields = line.split()
            if not (name.startswith("cpu") and name[3:].isdigit() and int(name[3:]) in self.cores):
                continue
            # user nice system idle iowait irq softirq steal
            values = [float(v) for v in fields[:8]]
            total += sum(values)
            busy += sum(values) - values[3] - values[4]
        if total == 0:
            return None
        return busy, total, self._own_cpu_seconds() * _CLOCK_TICKS

    def others_busy_cores(self, before, after) -> float | None:
        """Cores' worth of CPU that other processes used between two samples."""
        if before is None or after is None or after[1] <= before[1]:
            return None
        busy = (after[0] - before[0]) - (after[2] - before[2])
        return max(0.0, busy / (after[1] - before[1]) * len(self.cores))


def _read_proc_stat() -> str | None:
    try:
        with open("/proc/stat", encoding="ascii") as file:
            return file.read()
    except OSError:
        return None


def _usable_cores() -> set[int] | None:
    """The cores this process may run on, or None if their load says nothing about ours
    (no affinity API, or a CPU quota below the visible cores, as in many containers)."""
    if not hasattr(os, "sched_getaffinity"):
        return None
    cores = os.sched_getaffinity(0)
    if cpu_count() < len(cores):  # a quota: /proc/stat counts other containers too
        return None
    return cores


class _Governor:
    """Decides the thread count of one ``adaptive_threads`` block."""

    def __init__(self, load: CpuLoad, most: int):
        self.load, self.most = load, most
        self.sample = load.sample()
        self.last = time.monotonic()

    def decide(self) -> int | None:
        global _recent
        now = self.load.sample()
        others = self.load.others_busy_cores(self.sample, now)
        self.sample, self.last = now, time.monotonic()
        if others is None:
            return None
        free = len(self.load.cores) - others
        threads = max(1, min(self.most, math.floor(free + 1 - _FREE_CORE)))
        _recent = (self.last, threads)
        return threads


_local = threading.local()
_shared_load: CpuLoad | None = None
# (when, threads) of the last decision: a block that starts soon after begins there
# rather than at full width (the load rarely changes within seconds).
_recent: tuple[float, int] | None = None
_RECENT = 10.0


def _load() -> CpuLoad:
    global _shared_load
    if _shared_load is None:
        _shared_load = CpuLoad()
    return _shared_load


@contextmanager
def adaptive_threads(n_threads: int | None):
    """Use ``n_threads`` torch threads in the block, or (None) as many as other processes
    leave cores free, at most torch's current setting; restore the setting afterwards.

    Long loops call :func:`tick` between steps so that the count follows the load.
    """
    if n_threads is not None:
        check_scalar(n_threads, "n_threads", Integral, min_val=1)  # before torch sees it
    old = torch.get_num_threads()
    stack = _local.__dict__.setdefault("governors", [])
    governor = None if n_threads is not None else _Governor(_load(), old)
    if n_threads is not None:
        torch.set_num_threads(n_threads)
    elif _recent is not None and time.monotonic() - _recent[0] < _RECENT:
        torch.set_num_threads(min(old, _recent[1]))
    stack.append(governor)
    try:
        yield
    finally:
        stack.pop()
        torch.set_num_threads(old)


def tick() -> None:
    """Re-decide the innermost adaptive block's thread count if a second has passed."""
    stack = getattr(_local, "governors", None)
    governor = stack[-1] if stack else None
    if governor is None or time.monotonic() - governor.last < INTERVAL:
        return
    threads = governor.decide()
    if threads is not None and threads != torch.get_num_threads():
        torch.set_num_threads(threads)
