"""Highway layers (Srivastava et al. 2015), as used on top of ELMo's character CNN."""

from __future__ import annotations

import torch
from torch import nn


class Highway(nn.Module):
    """``y = g * x + (1 - g) * relu(W_h x)`` with a learned carry gate ``g = sigmoid(W_g x + b_g)``.

    Parameters
    ----------
    dim : int
        Input and output width.
    n_layers : int
        Number of stacked highway layers.

    Shape
    -----
    ``(..., dim) -> (..., dim)``
    """

    def __init__(self, dim: int, n_layers: int = 1):
        super().__init__()
        self.dim = dim
        self.layers = nn.ModuleList(nn.Linear(dim, 2 * dim) for _ in range(n_layers))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        for layer in self.layers:
            nn.init.xavier_uniform_(layer.weight)
            nn.init.zeros_(layer.bias)
            # b_g = 1: the gate starts open (g ~ 0.73), carrying most of the input
            # through, as in ELMo.
            nn.init.constant_(layer.bias[self.dim :], 1.0)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, n_layers={len(self.layers)}"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            transform, gate = layer(x).chunk(2, dim=-1)
            gate = torch.sigmoid(gate)
            x = gate * x + (1 - gate) * torch.relu(transform)
        return x
