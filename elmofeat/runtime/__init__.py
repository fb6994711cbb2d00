"""Runtime tuning: how elmofeat's work shares the process and the machine.

Everything elmofeat does to the process it runs in lives here, one concern per module,
and nothing here acts at import:

* :mod:`~elmofeat.runtime.threads`: torch's thread count during a call, as a
  :class:`~elmofeat.runtime.threads.ThreadPolicy` passed down the calls that run
  kernels (a fixed count, torch's own, or ``"auto"``: follow the cores other processes
  leave free), restored afterwards;
* :mod:`~elmofeat.runtime.parallel`: the thread budget of each parallel worker;
* :mod:`~elmofeat.runtime.openmp`: the OpenMP wait policy, an opt-in
  (:func:`limit_openmp_spinning`, exported as ``elmofeat.limit_openmp_spinning``);
* :mod:`~elmofeat.runtime.malloc`: large freed blocks kept in glibc's heap while torch
  trains, an opt-in (``elmofeat.set_config(malloc_tuning=True)``);
* :mod:`~elmofeat.runtime.torch_helpers`: devices, bfloat16 support, AdamW and seeded
  random states shared by the biLM and the mixes;
* :mod:`~elmofeat.runtime.host`: what of the machine shapes the numbers (CPU model,
  bfloat16 training), which resumable runs compare before keeping a finished part.

The user guide's "What elmofeat changes in your process" lists every effect and how to
turn it off. The names below are the entry point; the modules hold the details.
"""

from .._lazy import lazy_attributes
from .openmp import limit_openmp_spinning

_EXPORTS = {
    "ThreadPolicy": ".threads",
    "numerics_fingerprint": ".host",
    "reuse_large_blocks": ".malloc",
    "worker_thread_budget": ".parallel",
}
__getattr__, __dir__ = lazy_attributes(__name__, _EXPORTS, globals())

__all__ = ["ThreadPolicy", "limit_openmp_spinning", "numerics_fingerprint", "reuse_large_blocks",
           "worker_thread_budget"]
