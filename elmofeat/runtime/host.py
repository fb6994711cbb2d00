"""What of the machine shapes elmofeat's numbers: its CPU (the kernels torch picks),
whether training runs in bfloat16 (``precision="auto"`` uses it where the device has it
natively), and the installed versions of the packages that compute them. Two runs of the
same settings agree to the last bit only on machines with the same fingerprint, so
resumable runs keep a finished part only when it matches.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from pathlib import Path


def installed_versions(packages) -> dict[str, str | None]:
    """Installed version of each distribution in ``packages`` (None where it is not
    installed); ``"elmofeat"`` is this running copy's ``__version__``.

    Examples
    --------
    >>> installed_versions(["elmofeat", "no-such-package"])["no-such-package"] is None
    True
    """
    from .._version import __version__

    found = {}
    for package in packages:
        try:
            found[package] = __version__ if package == "elmofeat" else version(package)
        except PackageNotFoundError:
            found[package] = None
    return found


def cpu_description() -> str:
    """The CPU's model name and its bf16 matrix units, from ``/proc/cpuinfo`` (Linux;
    ``platform.processor()`` elsewhere).

    Shared machines are not all alike: virtual machines often report the same model name
    for hosts with and without bf16 units, and a host with AMX multiplies bf16 matrices
    about 6x faster than one without.
    """
    try:
        info = Path("/proc/cpuinfo").read_text()
    except OSError:
        import platform

        return platform.processor() or "unknown CPU"
    model = next((line.split(":", 1)[1].strip() for line in info.splitlines()
                  if line.startswith("model name")), "unknown CPU")
    flags = set(next((line.split(":", 1)[1].split() for line in info.splitlines()
                      if line.startswith("flags")), []))
    units = [name for name, flag in (("AMX", "amx_bf16"), ("AVX-512 BF16", "avx512_bf16"))
             if flag in flags]
    return f"{model} ({', '.join(units) if units else 'no bf16 matrix units'})"


def numerics_fingerprint() -> dict:
    """``{"cpu": ..., "bf16_training": ..., "device": ...}``: the CPU (model and bf16
    units, :func:`cpu_description`), whether the
    default device trains in bfloat16 (``BiLM(precision="auto")``), and that device.

    Examples
    --------
    >>> sorted(numerics_fingerprint())
    ['bf16_training', 'cpu', 'device']
    """
    from .torch_helpers import bf16_supported, resolve_device

    device = resolve_device("auto")
    return {"cpu": cpu_description(), "bf16_training": bool(bf16_supported(device)),
            "device": device.type}
