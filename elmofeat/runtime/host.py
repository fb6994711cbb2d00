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


def _cpuinfo(text: str | None = None) -> dict[str, str]:
    """The fields of the first processor in ``/proc/cpuinfo`` (``text``: its contents,
    for tests); empty where the file cannot be read (not Linux)."""
    if text is None:
        try:
            text = Path("/proc/cpuinfo").read_text()
        except OSError:
            return {}
    fields = {}
    for line in text.splitlines():
        if not line.strip():
            if fields:
                break  # the end of the first processor's block
            continue
        name, _, value = line.partition(":")
        fields.setdefault(name.strip(), value.strip())
    return fields


def cpu_description(cpuinfo: str | None = None) -> str:
    """The CPU's model name and its bf16 matrix units, from ``/proc/cpuinfo`` (Linux;
    ``platform.processor()`` elsewhere). ``cpuinfo``: that file's text, for tests.

    Shared machines are not all alike: virtual machines often report the same model name
    for hosts with and without bf16 units, and a host with AMX multiplies bf16 matrices
    about 6x faster than one without.

    Examples
    --------
    >>> cpu_description("model name : AMD EPYC\\nflags : fpu avx512_bf16\\n")
    'AMD EPYC (AVX-512 BF16)'
    """
    fields = _cpuinfo(cpuinfo)
    if not fields:
        import platform

        return platform.processor() or "unknown CPU"
    model = fields.get("model name") or "unknown CPU"
    flags = set(fields.get("flags", "").split())
    units = [name for name, flag in (("AMX", "amx_bf16"), ("AVX-512 BF16", "avx512_bf16"))
             if flag in flags]
    return f"{model} ({', '.join(units) if units else 'no bf16 matrix units'})"


def cpu_identity(cpuinfo: str | None = None) -> str:
    """The CPU's vendor, family, model and stepping numbers from ``/proc/cpuinfo``
    (x86; ARM's implementer, part and variant), or ``""`` where there are none.

    The model name alone does not tell hosts apart: the project's virtual machines all
    read "AMD EPYC" with the same bf16 flag, while their matrix products ran twice as
    fast on some as on others (the matmul peaks of ``benchmarks/results/host_speed.md``
    and ``bilm_step_profile.md``). Benchmarks record it beside :func:`cpu_description`,
    so that two results are compared only where they name the same CPU.
    ``cpuinfo``: that file's text, for tests.

    Examples
    --------
    >>> cpu_identity("vendor_id : AuthenticAMD\\ncpu family : 25\\nmodel : 17\\n"
    ...              "stepping : 1\\n")
    'AuthenticAMD family 25 model 17 stepping 1'
    >>> cpu_identity("")
    ''
    """
    fields = _cpuinfo(cpuinfo)
    if "cpu family" in fields:
        keys = (("vendor_id", ""), ("cpu family", "family "), ("model", "model "),
                ("stepping", "stepping "))
    else:
        keys = (("CPU implementer", "implementer "), ("CPU part", "part "),
                ("CPU variant", "variant "))
    return " ".join(f"{label}{fields[key]}" for key, label in keys if fields.get(key))


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
