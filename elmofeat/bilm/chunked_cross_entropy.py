"""Cross-entropy of a linear layer's scores, computed a block of rows at a time.

A softmax over ``n`` rows and ``V`` words materialises ``n x V`` scores, and autograd
keeps them, their log-softmax and two gradients of the same size: for the adaptive
softmax's head on one AG News batch that is five blocks of 35-40 MB per step, each above
glibc's largest mmap threshold (32 MiB), so every step had the kernel map and zero them
afresh (``benchmarks/training_memory.py``). Here the scores of at most
:func:`rows_per_block` rows exist at a time, in two buffers reused by every block of the
call; when a gradient is wanted it is computed in the same pass (softmax minus one-hot,
times the inputs and the weight), as the loss is a sum whose gradient needs nothing
else, and autograd keeps only ``grad_x`` (``n x k``) and ``grad_weight`` (``V x k``).

The values are those of ``F.cross_entropy(F.linear(x, weight, bias), targets,
reduction="sum")``: the matmuls run in ``compute_dtype`` (bf16 under autocast, as
``F.linear`` would), everything after them in float32.
"""

from __future__ import annotations

import torch

from torch.autograd.function import once_differentiable

from .shapes import bucketed_rows, pad_rows

#: Scores held at a time on a CPU: about 8 MB in float32, below glibc's mmap threshold.
BLOCK_ELEMENTS = 1 << 21
#: Scores held at a time on other devices (about 256 MB in float32): their allocators
#: cache blocks, so small blocks would only multiply kernel launches.
DEVICE_BLOCK_ELEMENTS = 1 << 26


def rows_per_block(n_words: int, device_type: str = "cpu") -> int:
    """Rows scored at a time for ``n_words`` columns: a power of two, at least 16, at most
    4,096 on a CPU (bounded oneDNN shapes)."""
    budget = BLOCK_ELEMENTS if device_type == "cpu" else DEVICE_BLOCK_ELEMENTS
    rows = max(16, budget // max(n_words, 1))
    rows = 1 << (rows.bit_length() - 1)
    return min(4096, rows) if device_type == "cpu" else rows


def _blockwise(x, weight, bias, targets, compute_dtype, want=(False, False, False)):
    """Per-row NLL (float32 ``(n,)``) and, where wanted, the gradients of their sum.

    x : (n, k); weight : (V, k); bias : (V,) or None; targets : LongTensor (n,).
    ``want``: which of the gradients of ``(x, weight, bias)`` to compute. Returns
    ``(nll, grad_x, grad_weight, grad_bias)``, float32; a gradient not wanted is None.
    """
    n, n_words = len(x), len(weight)
    want_x, want_w, want_b = want[0], want[1], want[2] and bias is not None
    block = rows_per_block(n_words, x.device.type)
    w = weight.to(compute_dtype)
    w_t = w.t()
    b = None if bias is None else bias.to(compute_dtype)
    f32 = {"dtype": torch.float32, "device": x.device}
    scores = torch.empty((min(block, bucketed_rows(n)), n_words), **f32)
    # The matmul's own output where it is not float32 (bf16 under autocast).
    raw = scores if compute_dtype == torch.float32 else torch.empty_like(scores, dtype=compute_dtype)
    nll = torch.empty(n, **f32)
    grad_x = torch.empty((n, x.shape[1]), **f32) if want_x else None
    grad_w = torch.zeros(weight.shape, **f32) if want_w else None
    grad_b = torch.zeros(n_words, **f32) if want_b else None
    for start in range(0, n, block):
        rows = min(block, n - start)
        padded = min(len(scores), bucketed_rows(rows))  # bounded matmul shapes (oneDNN)
        x_block = pad_rows(x[start:start + rows].to(compute_dtype), padded)
        out = raw[:padded]
        if b is None:
            torch.mm(x_block, w_t, out=out)
        else:
            torch.addmm(b, x_block, w_t, out=out)
        s = scores[:rows]
        if raw is not scores:
            s.copy_(out[:rows])
        t = targets[start:start + rows].unsqueeze(1)
        s.sub_(s.amax(1, keepdim=True))  # shifted scores: exp cannot overflow
        target_score = s.gather(1, t).squeeze(1)
        sum_exp = s.exp_().sum(1, keepdim=True)
        torch.sub(sum_exp.log().squeeze(1), target_score, out=nll[start:start + rows])
        if not (want_x or want_w or want_b):
            continue
        # d(sum of NLL)/d(scores) = softmax - one-hot, written over the scores. Padded
        # rows keep their raw scores: they meet only zero rows of x_block (grad_weight)
        # or are cut (grad_x).
        s.div_(sum_exp).scatter_add_(1, t, s.new_full(t.shape, -1.0))
        if raw is not scores:
            out[:rows].copy_(s)
        g = out
        if want_x:
            grad_x[start:start + rows] = (g @ w)[:rows]
        if want_w:
            if g.dtype == torch.float32:
                grad_w.addmm_(g.t(), x_block)
            else:
                grad_w.add_(g.t() @ x_block)
        if want_b:
            grad_b.add_(s.sum(0))
    return nll, grad_x, grad_w, grad_b


class _SummedCrossEntropy(torch.autograd.Function):
    """``sum(NLL)`` whose backward only scales the gradients its forward computed."""

    @staticmethod
    def forward(ctx, x, weight, bias, targets, compute_dtype):
        nll, *grads = _blockwise(x, weight, bias, targets, compute_dtype,
                                 ctx.needs_input_grad[:3])
        ctx.save_for_backward(*(g for g in grads if g is not None))
        ctx.present = [g is not None for g in grads]
        ctx.dtypes = [x.dtype, weight.dtype, None if bias is None else bias.dtype]
        return nll.sum()

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        saved = iter(ctx.saved_tensors)
        grads = [(next(saved) * grad_output).to(dtype) if present else None
                 for present, dtype in zip(ctx.present, ctx.dtypes)]
        return (*grads, None, None)


def _compute_dtype(x: torch.Tensor) -> torch.dtype:
    """The dtype ``F.linear`` would multiply in: autocast's where it is on."""
    device = x.device.type
    if torch.is_autocast_enabled(device):
        return torch.get_autocast_dtype(device)
    return x.dtype


def cross_entropy_sum(x: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor,
                      bias: torch.Tensor | None = None) -> torch.Tensor:
    """``F.cross_entropy(F.linear(x, weight, bias), targets, reduction="sum")`` in blocks.

    x : (n, k); weight : (V, k); bias : (V,) or None; targets : LongTensor (n,) in
    ``[0, V)``. Returns a float32 scalar. Under autograd the gradients are computed in
    the forward pass (see the module's docstring).
    """
    dtype = _compute_dtype(x)
    if not torch.is_grad_enabled():
        with torch.autocast(x.device.type, enabled=False):
            return _blockwise(x, weight, bias, targets, dtype)[0].sum()
    with torch.autocast(x.device.type, enabled=False):
        return _SummedCrossEntropy.apply(x, weight, bias, targets, dtype)


def log_likelihoods(x: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor,
                    bias: torch.Tensor | None = None) -> torch.Tensor:
    """Each row's ``log_softmax(F.linear(x, weight, bias))[target]``, float32 ``(n,)``.

    No gradient flows through it: it scores, it does not train.
    """
    dtype = _compute_dtype(x)
    with torch.no_grad(), torch.autocast(x.device.type, enabled=False):
        return -_blockwise(x, weight, bias, targets, dtype)[0]
