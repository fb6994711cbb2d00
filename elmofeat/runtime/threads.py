"""Torch threads that give way when other processes keep cores busy.

torch's CPU kernels split each operation over its threads and wait at a barrier for
the slowest. When another process keeps one of the cores busy, the thread that shares
that core runs a fraction of the time and every barrier waits for it: on 2 cores with
one busy neighbour, 2 threads pretrained at about a third of their idle speed and 1
thread at nearly all of its own (``benchmarks/busy_machine.py``). An adaptive
block follows the cores that other processes leave free, measured from ``/proc/stat``
(all CPU time of the usable cores) minus this process's own CPU time, and re-decided
about once a second while the work runs (:meth:`Threads.tick`, called between batches). Where
the load cannot be measured (not Linux, a container whose CPU quota is smaller than the
cores it sees) the count stays at torch's setting.

Inference adapts by default: its results do not depend on the thread count (tested).
Training does not: with more threads some kernels split their sums differently, so the
weights would depend on what else ran on the machine. ``n_threads=None`` therefore keeps
torch's setting while training (the same data and seed give the same weights), and
``n_threads="auto"`` adapts there too, for speed on a busy machine, giving up
bit-reproducibility.

The policy is data (:class:`ThreadPolicy`), applied once by the outermost call that
runs kernels (a vectorizer's ``fit``, a biLM's ``fit`` called alone) and passed down as
the :class:`Threads` in force: an inner call (the biLM a vectorizer pretrains, the mix
it trains, the layers it embeds) uses it instead of applying its own, so the outermost
caller's ``n_threads`` holds throughout and an adaptive count keeps following the load.
"""

from __future__ import annotations

import math
import os
import time
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from numbers import Integral
from typing import Iterator

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


_shared_load: CpuLoad | None = None
# (when, sample) of the last load reading, and (when, threads) of the last decision: a
# block that starts soon after begins there rather than at full width. Measurements of
# the machine, shared by every policy in force; the policy itself is passed as data.
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


def usable_threads(n_threads: int) -> int:
    """An int ``n_threads`` capped at the CPUs this process may use (``joblib.cpu_count``:
    quotas and affinity included): more threads than that never run faster, and torch
    crashes the process on absurd counts (a million: the sixth probe's D5). A pickle
    from a larger machine keeps working on a smaller one."""
    return max(1, min(int(n_threads), cpu_count()))


def check_n_threads(n_threads) -> None:
    """``n_threads`` must be None, ``"auto"`` or an int >= 1 (a clear error otherwise)."""
    validate_parameter_constraints({"n_threads": N_THREADS_CONSTRAINTS},
                                   {"n_threads": n_threads}, caller_name="elmofeat")


@dataclass(frozen=True)
class ThreadPolicy:
    """How many torch threads the kernels of one call run on: data, passed down.

    Parameters
    ----------
    n_threads : int, "auto" or None, default=None
        An int: that many threads. ``"auto"``: as many as other processes leave cores
        free, re-decided about once a second (:meth:`Threads.tick`). ``None``: torch's
        setting while ``training`` (reproducible weights), ``"auto"``'s rule otherwise
        (inference does not depend on the thread count).
    training : bool, default=False
        Whether the call trains weights.

    Examples
    --------
    >>> import torch
    >>> before = torch.get_num_threads()
    >>> with ThreadPolicy(1).applied() as threads:
    ...     torch.get_num_threads()
    1
    >>> torch.get_num_threads() == before  # restored, whatever happened inside
    True
    """

    n_threads: object = None
    training: bool = False

    def __post_init__(self):
        check_n_threads(self.n_threads)  # before torch sees it

    @property
    def adapts(self) -> bool:
        """Whether the count follows the machine's load."""
        return self.n_threads == "auto" or (self.n_threads is None and not self.training)

    @contextmanager
    def applied(self) -> Iterator["Threads"]:
        """Put the policy in force for a block; torch's setting is restored afterwards
        (after an exception or a KeyboardInterrupt too). Yields the :class:`Threads` to
        pass to the calls inside, so that none of them applies a policy of its own."""
        old = torch.get_num_threads()
        try:
            yield Threads(self, most=old)
        finally:
            torch.set_num_threads(old)


class Threads:
    """A :class:`ThreadPolicy` in force: torch's thread count set for it.

    Long loops call :meth:`tick` between steps so that an adaptive count follows the
    load; for a fixed count (or torch's own) it does nothing.
    """

    def __init__(self, policy: ThreadPolicy, most: int):
        self.policy = policy
        self._governor = _Governor(_load(), most) if policy.adapts else None
        if isinstance(policy.n_threads, Integral):
            torch.set_num_threads(usable_threads(policy.n_threads))
        elif self._governor is not None:
            threads = self._governor.decide() if self._governor.due() else None
            if threads is None and _recent is not None and time.monotonic() - _recent[0] < _RECENT:
                threads = min(most, _recent[1])
            if threads is not None and threads != torch.get_num_threads():
                torch.set_num_threads(threads)

    def tick(self) -> None:
        """Re-decide an adaptive thread count if a second has passed."""
        governor = self._governor
        if governor is None or not governor.due():
            return
        threads = governor.decide()
        if threads is not None and threads != torch.get_num_threads():
            torch.set_num_threads(threads)

    def __repr__(self):
        return f"Threads({self.policy.n_threads!r}, training={self.policy.training})"


def in_force(threads: Threads | None, n_threads, *, training: bool = False):
    """The caller's ``threads`` where it passed some (the outermost caller's choice
    wins), else ``ThreadPolicy(n_threads, training)`` applied for this call: a context
    manager yielding the :class:`Threads` to use."""
    if threads is not None:
        return nullcontext(threads)
    return ThreadPolicy(n_threads, training).applied()
