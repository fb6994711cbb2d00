"""What of the machine shapes elmofeat's numbers: its CPU (the kernels torch picks) and
whether training runs in bfloat16 (``precision="auto"`` uses it where the device has it
natively). Two runs of the same settings agree to the last bit only on machines with the
same fingerprint, so resumable runs keep a finished part only when it matches.
"""

from __future__ import annotations

from pathlib import Path


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``), or ``platform.processor()`` elsewhere."""
    try:
        info = Path("/proc/cpuinfo").read_text()
    except OSError:
        import platform

        return platform.processor() or "unknown CPU"
    return next((line.split(":", 1)[1].strip() for line in info.splitlines()
                 if line.startswith("model name")), "unknown CPU")


def numerics_fingerprint() -> dict:
    """``{"cpu": ..., "bf16_training": ..., "device": ...}``: the CPU model, whether the
    default device trains in bfloat16 (``BiLM(precision="auto")``), and that device.

    Examples
    --------
    >>> sorted(numerics_fingerprint())
    ['bf16_training', 'cpu', 'device']
    """
    from .torch_helpers import bf16_supported, resolve_device

    device = resolve_device("auto")
    return {"cpu": cpu_model(), "bf16_training": bool(bf16_supported(device)),
            "device": device.type}
