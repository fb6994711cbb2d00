"""Threads for one parallel worker, counted on the machine where the worker runs.

A part of a parallel ``transform`` runs torch and BLAS kernels; if every concurrent
part used all the cores of its machine, the parts would oversubscribe them (2 parts
of 2 threads on 2 cores run about 4x slower). The budget must be computed where the
part runs: on a Dask cluster the client's ``cpu_count`` says nothing about a worker's
machine, nor how many tasks share it.
"""

from __future__ import annotations

from joblib import cpu_count


def worker_thread_budget(n_parts: int) -> int:
    """Torch/BLAS threads for one of ``n_parts`` concurrent parts, on this machine.

    In a Dask worker, the cores of the worker's machine are shared among the task slots
    of every worker on that host (as the scheduler reports them); elsewhere (loky or
    threads on the client's machine) among the ``n_parts`` parts.
    """
    slots = _dask_host_slots()
    return max(1, cpu_count() // (slots or max(1, n_parts)))


def _dask_host_slots() -> int | None:
    """Task slots of all Dask workers on this worker's host, or None outside Dask."""
    try:
        from distributed import get_client, get_worker
    except ImportError:
        return None
    try:
        worker = get_worker()
    except ValueError:  # not running in a Dask worker
        return None
    try:
        workers = get_client().scheduler_info().get("workers", {})
    except Exception:  # scheduler unreachable: this worker's own slots are known
        return worker.state.nthreads
    host = workers.get(worker.address, {}).get("host")
    slots = sum(info.get("nthreads", 0) for info in workers.values()
                if host is not None and info.get("host") == host)
    return slots or worker.state.nthreads
