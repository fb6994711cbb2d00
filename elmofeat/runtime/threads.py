"""Torch threads that give way when other processes keep cores busy.

torch's CPU kernels split each operation over its threads and wait at a barrier for
the slowest. When another process keeps one of the cores busy, the thread that shares
that core runs a fraction of the time and every barrier waits for it: on 2 cores with
one busy neighbour, 2 threads pretrained at about a third of their idle speed and 1
thread at nearly all of its own (``benchmarks/busy_machine.py``). An adaptive
block follows the cores that other processes leave free, measured from ``/proc/stat``
(all CPU time of the usable cores) minus this process's own CPU time, and re-decided
about once a second while the work runs (:func:`tick`, called between batches). Where
the load cannot be measured (not Linux, a container whose CPU quota is smaller than the
cores it sees) the count stays at torch's setting.

Inference adapts by default: its results do not depend on the thread count (tested).
Training does not: with more threads some kernels split their sums differently, so the
weights would depend on what else ran on the machine. ``n_threads=None`` therefore keeps
torch's setting while training (the same data and seed give the same weights), and
``n_threads="auto"`` adapts there too, for speed on a busy machine, giving up
bit-reproducibility.
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

from .._param_validation import StrOptions, positive_int, validate_parameter_constraints

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
    """The thread limit of one adaptive block; the load samples and the last decision
    are shared by all blocks, so that short successive blocks (one per chunk of
    documents) still measure over a full interval."""

    def __init__(self, load: CpuLoad, most: int):
        self.load, self.most = load, most

    def decide(self) -> int | None:
        """Threads for the load since the previous sample (None: nothing to compare)."""
        global _last_sample, _recent
        now, sample = time.monotonic(), self.load.sample()
        previous = _last_sample
        _last_sample = (now, sample)
        if previous is None or previous[1] is None:
            return None
        others = self.load.others_busy_cores(previous[1], sample)
        if others is None:
            return None
        free = len(self.load.cores) - others
        threads = max(1, math.floor(free + 1 - _FREE_CORE))
        _recent = (now, threads)
        return min(self.most, threads)

    def due(self) -> bool:
        return _last_sample is None or time.monotonic() - _last_sample[0] >= INTERVAL


_local = threading.local()
_shared_load: CpuLoad | None = None
# (when, sample) of the last load reading, and (when, threads) of the last decision: a
# block that starts soon after begins there rather than at full width.
_last_sample: tuple[float, tuple | None] | None = None
_recent: tuple[float, int] | None = None
_RECENT = 10.0


def _load() -> CpuLoad:
    global _shared_load
    if _shared_load is None:
        _shared_load = CpuLoad()
    return _shared_load


#: What ``n_threads`` accepts, in every estimator that has it.
N_THREADS_CONSTRAINTS = [positive_int(), StrOptions({"auto"}), None]


def check_n_threads(n_threads) -> None:
    """``n_threads`` must be None, ``"auto"`` or an int >= 1 (a clear error otherwise)."""
    validate_parameter_constraints({"n_threads": N_THREADS_CONSTRAINTS},
                                   {"n_threads": n_threads}, caller_name="elmofeat")


@contextmanager
def adaptive_threads(n_threads, *, training: bool = False):
    """Use ``n_threads`` torch threads in the block; restore torch's setting afterwards.

    ``None``: while ``training``, torch's setting (reproducible weights); otherwise as
    many threads as other processes leave cores free, at most torch's setting.
    ``"auto"``: adapt in both cases. Long loops call :func:`tick` between steps so that an
    adaptive count follows the load.
    """
    check_n_threads(n_threads)  # before torch sees it
    old = torch.get_num_threads()
    adapt = n_threads == "auto" or (n_threads is None and not training)
    stack = _local.__dict__.setdefault("governors", [])
    governor = _Governor(_load(), old) if adapt else None
    if isinstance(n_threads, Integral):
        torch.set_num_threads(n_threads)
    elif adapt:
        threads = governor.decide() if governor.due() else None
        if threads is None and _recent is not None and time.monotonic() - _recent[0] < _RECENT:
            threads = min(old, _recent[1])
        if threads is not None and threads != old:
            torch.set_num_threads(threads)
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
    if governor is None or not governor.due():
        return
    threads = governor.decide()
    if threads is not None and threads != torch.get_num_threads():
        torch.set_num_threads(threads)
