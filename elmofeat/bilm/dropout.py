"""Dropout with byte-sized random numbers: the same regularisation, half the cost on CPU.

``torch.nn.Dropout`` draws one float per element (``bernoulli_``), which took 12% of a
biLM training step on CPU here; drawing one random byte per element and comparing it
with a threshold takes about half as long. The drop probability is rounded to a
multiple of 1/256 (0.1 becomes 26/256 = 0.1016).
"""

from __future__ import annotations

import torch
from torch import nn


class ByteDropout(nn.Module):
    """Inverted dropout: zero each element with probability ``round(256 p) / 256``.

    Shape
    -----
    Any; the output has the input's shape and dtype.
    """

    def __init__(self, p: float):
        super().__init__()
        if not 0.0 <= p < 1.0:
            raise ValueError(f"dropout probability must be in [0, 1), got {p}")
        self.threshold = int(round(256 * p))
        self.scale = 256.0 / (256 - self.threshold)

    @property
    def p(self) -> float:
        return self.threshold / 256

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training or self.threshold == 0:
            return x
        # random_() on uint8 draws uniformly from 0..255.
        draws = torch.empty(x.shape, dtype=torch.uint8, device=x.device).random_()
        mask = (draws >= self.threshold).to(x.dtype).mul_(self.scale)
        return x * mask
