"""Small torch helpers shared by the biLM, the layer mixes and ElmoVectorizer: devices,
bfloat16 support, autocast and the optimizer.

Kept apart from the pretraining engine so that code which only runs a model (or trains
a layer mix) does not import the engine.
"""

from __future__ import annotations

import contextlib

import functools

import torch


#: The fewest rows a product of inference is run with. BLAS sums a row of a product with
#: few rows in another order than a row of a larger one (one row takes the
#: matrix-vector path), so a document embedded alone would get values about 1e-6 apart
#: from the same document among others. Measured on an AVX-512 x86 CPU with torch's
#: MKL and oneDNN kernels, 1 and 2 threads: rows are summed alike from 12 rows on; 16
#: leaves a margin, and tests/test_batch_invariance.py checks it wherever the tests run.
#: Small inference batches, and the character CNN's set of distinct words, are filled
#: up to it with copies of their own rows.
MIN_PRODUCT_ROWS = 16


def fill_rows(x: torch.Tensor, n_rows: int = MIN_PRODUCT_ROWS) -> torch.Tensor:
    """``x`` with its rows repeated in turn up to ``n_rows`` rows, unchanged when it has
    that many (or none): the first ``len(x)`` rows of the result are ``x``."""
    if len(x) == 0 or len(x) >= n_rows:
        return x
    return x[torch.arange(n_rows, device=x.device) % len(x)]


def check_device(device) -> None:
    """Raise unless ``device`` is ``"auto"`` or a device string torch understands
    (``"cpu"``, ``"cuda"``, ``"cuda:1"``, ``"mps"``...); availability is checked on use."""
    if isinstance(device, str) and device == "auto":
        return
    if not isinstance(device, (str, torch.device)):
        raise TypeError(f"device must be 'auto' or a torch device string, got {device!r}")
    try:
        torch.device(device)
    except (RuntimeError, ValueError):
        raise ValueError("device must be 'auto' or a torch device such as 'cpu', 'cuda', "
                         f"'cuda:1' or 'mps', got {device!r}") from None


def resolve_device(device) -> torch.device:
    """``"auto"`` -> CUDA when available, else CPU; otherwise the named device, which
    must be available."""
    check_device(device)
    if isinstance(device, str) and device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    resolved = torch.device(device)
    if resolved.type == "cpu":
        return resolved
    backend = torch.backends.mps if resolved.type == "mps" else getattr(torch, resolved.type, None)
    if backend is None or not backend.is_available():
        raise ValueError(f"device={str(device)!r} but torch sees no {resolved.type} device")
    if (resolved.type == "cuda" and resolved.index is not None
            and resolved.index >= torch.cuda.device_count()):
        raise ValueError(f"device={str(device)!r} but torch sees {torch.cuda.device_count()} "
                         "CUDA device(s)")
    return resolved


def bf16_supported(device: torch.device) -> bool:
    """Whether ``device`` does bfloat16 arithmetic natively (what ``precision="auto"`` needs)."""
    if device.type == "cuda":
        return torch.cuda.is_bf16_supported()
    # CPUs without AVX512-BF16 or AMX emulate bf16, which can be slower than fp32.
    # (benchmarks/bilm_precision.py measures bf16 against fp32 on a CPU that has it.)
    try:
        return bool(torch.cpu._is_avx512_bf16_supported() or torch.cpu._is_amx_tile_supported())
    except AttributeError:  # private helpers missing from this torch build: play safe
        return False


@functools.cache
def bf16_runs(device_type: str) -> bool:
    """Whether torch can run the biLM's kernels in bfloat16 on this device type at all.

    Checked by running a one-step LSTM under bfloat16 autocast (once per process):
    oneDNN has no bfloat16 LSTM for CPUs without AVX-512, where it fails with a
    RuntimeError instead of falling back.
    """
    try:
        lstm = torch.nn.LSTM(2, 2, batch_first=True).to(device_type)
        with torch.no_grad(), torch.autocast(device_type, dtype=torch.bfloat16):
            lstm(torch.zeros(1, 1, 2, device=device_type))
        return True
    except RuntimeError:
        return False


def autocast(device, bf16: bool):
    """bfloat16 autocast on ``device``'s type when ``bf16``, a no-op context otherwise."""
    return torch.autocast(device_type=torch.device(device).type, dtype=torch.bfloat16, enabled=bf16)


def adamw(parameters, **options) -> torch.optim.AdamW:
    """AdamW with the fused kernel where torch has one for the device.

    On CPU torch's default AdamW loops over the parameters tensor by tensor; the fused
    kernel (torch >= 2.4) makes the optimizer step several times faster, which is a
    sizeable share of a biLM training step (see benchmarks/bilm_pretrain_speed.py).
    """
    parameters = list(parameters)
    try:
        return torch.optim.AdamW(parameters, fused=True, **options)
    except (RuntimeError, TypeError, ValueError):  # older torch, or no fused kernel here
        return torch.optim.AdamW(parameters, **options)


def _cuda_index(device: torch.device) -> int | None:
    if device.type != "cuda":
        return None
    return device.index if device.index is not None else torch.cuda.current_device()


@contextlib.contextmanager
def seeded(seed: int, device="cpu"):
    """A block whose random draws start from ``seed``: the CPU generator's and, for a
    CUDA device, that device's (dropout draws there). The global random state is put
    back afterwards, on the CPU and on the GPU alike, and no other device is touched
    (``torch.manual_seed`` would reseed every GPU)."""
    index = _cuda_index(torch.device(device))
    with torch.random.fork_rng(devices=[] if index is None else [index]):
        torch.random.default_generator.manual_seed(seed)
        if index is not None:
            with torch.cuda.device(index):
                torch.cuda.manual_seed(seed)
        yield


def rng_state(device) -> dict:
    """The generators a training step on ``device`` draws from: ``{"torch_rng": CPU}``,
    plus ``"cuda_rng"`` on a CUDA device (a checkpoint keeps both)."""
    state = {"torch_rng": torch.get_rng_state()}
    index = _cuda_index(torch.device(device))
    if index is not None:
        state["cuda_rng"] = torch.cuda.get_rng_state(index)
    return state


def set_rng_state(state: dict, device) -> None:
    """Restore what :func:`rng_state` returned (a CUDA state only on a CUDA device)."""
    torch.set_rng_state(state["torch_rng"])
    index = _cuda_index(torch.device(device))
    if index is not None and state.get("cuda_rng") is not None:
        torch.cuda.set_rng_state(state["cuda_rng"], index)


def tensor_version(tensor: torch.Tensor) -> int:
    """The version counter torch bumps at every in-place change of ``tensor`` (``copy_``
    of ``load_state_dict``, an optimizer's step, ``mul_`` under ``torch.no_grad()``); -1
    for an inference tensor, which has none (and cannot be changed in place outside
    inference mode). ``Tensor._version`` is not in torch's documented API: the tested
    range is torch 2.13 (``tests/test_torch.py`` checks each of those routes), and
    without the attribute every call counts as a change (the caller recomputes)."""
    if tensor.is_inference():
        return -1
    try:
        version = getattr(tensor, "_version", None)
    except RuntimeError:  # a tensor made from an inference tensor's values (.half())
        return -1
    return object() if version is None else version


def weights_stamp(module: torch.nn.Module, tensors=None) -> tuple:
    """What changes whenever ``module``'s weights may have: every tensor's name,
    identity, storage, dtype, device, shape and version counter (microseconds, where
    a digest of the values takes a tenth of a second for a model of tens of MB).
    ``tensors``: the module's ``state_dict(keep_vars=True)``, where the caller has it."""
    if tensors is None:
        tensors = module.state_dict(keep_vars=True)
    return tuple((name, id(t), t.data_ptr(), t.dtype, t.device, tuple(t.shape),
                  tensor_version(t))
                 for name, t in tensors.items())


_HOOK_REGISTRIES = ("_forward_hooks", "_forward_pre_hooks")


def forward_hooks(module: torch.nn.Module) -> list[str]:
    """Where a forward hook would change what ``module`` computes: the names of its
    submodules with a forward (pre-)hook, and ``"global"`` when one is registered for
    every module (``torch.nn.modules.module.register_module_forward_hook``).

    The registries (``Module._forward_hooks``, ``_forward_pre_hooks`` and the module's
    globals) are not in torch's documented API: the tested range is torch 2.13
    (``tests/test_torch.py`` registers each kind). A registry torch no longer has is
    taken as empty."""
    hooked = [name or "the model" for name, m in module.named_modules()
              if any(getattr(m, registry, None) for registry in _HOOK_REGISTRIES)]
    registries = torch.nn.modules.module
    if any(getattr(registries, f"_global{registry}", None) for registry in _HOOK_REGISTRIES):
        hooked.append("global")
    return hooked
