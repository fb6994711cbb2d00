"""How long torch's idle OpenMP threads spin before they sleep.

torch's CPU wheel runs its kernels on GNU OpenMP (libgomp). Between two kernels its
threads spin, by libgomp's default for up to 300,000 iterations (a fraction of a
millisecond), before they sleep. On a machine where another process keeps a core busy,
those spinning threads take the time slices that the thread sharing its core with the
neighbour needs to reach the next barrier, and every kernel waits for that thread:
pretraining a small biLM on 2 threads beside one busy process ran at 0.08 of its idle
speed with libgomp's default spin count and at 0.45 with 1,000 spins on an Intel host,
0.25 and 0.35 on an AMD one, and the shorter spin cost the default biLM 2 to 6% on an
idle machine (``benchmarks/busy_machine.py``, one run on each host).

libgomp reads ``GOMP_SPINCOUNT`` once, when torch is imported, and every process
started afterwards inherits the environment. A library changes neither unasked:
``import elmofeat`` sets nothing. :func:`limit_openmp_spinning` is the opt-in: called
before torch is imported, it sets ``GOMP_SPINCOUNT`` to :data:`SPIN_COUNT` unless the
user has set ``GOMP_SPINCOUNT`` or ``OMP_WAIT_POLICY`` (their setting wins). Exporting
``GOMP_SPINCOUNT=1000`` in the shell does the same. The ``elmofeat`` command, which
owns its process, opts in. Other OpenMP runtimes ignore the variable. Without it, the
busy-machine figures are those of libgomp's spin count (``benchmarks/busy_machine.py``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import MutableMapping

#: Spins before an idle libgomp thread sleeps, where the user has not chosen.
SPIN_COUNT = 1000

#: Variables with which the user chooses the wait policy; any of them keeps ours out.
USER_SETTINGS = ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")


def limit_openmp_spinning(environ: MutableMapping[str, str] | None = None) -> bool:
    """Opt in: set ``GOMP_SPINCOUNT`` to :data:`SPIN_COUNT` unless a wait policy is set.

    Call it before anything imports torch (libgomp reads the variable once); processes
    started afterwards inherit it. It changes ``os.environ`` (or ``environ``).

    Parameters
    ----------
    environ : mutable mapping, default=None
        The environment to change; ``os.environ`` when None.

    Returns
    -------
    takes_effect : bool
        Whether torch will see the setting in this process: False when the user's own
        setting stands or torch was imported first (child processes still inherit it).

    Examples
    --------
    >>> import elmofeat
    >>> environ = {}
    >>> _ = elmofeat.limit_openmp_spinning(environ)
    >>> environ
    {'GOMP_SPINCOUNT': '1000'}
    """
    environ = os.environ if environ is None else environ
    if any(name in environ for name in USER_SETTINGS):
        return False
    environ["GOMP_SPINCOUNT"] = str(SPIN_COUNT)
    return "torch" not in sys.modules
