"""Highway layers (Srivastava et al. 2015), as used on top of ELMo's character CNN."""

from __future__ import annotations

import torch
from torch import nn


class Highway(nn.Module):
    """``y = g * relu(W_h x) + (1 - g) * x`` with a learned gate ``g = sigmoid(W_g x)``.

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
            # Bias the gate towards carrying the input through at the start (as ELMo does).
            nn.init.constant_(layer.bias[self.dim :], 1.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            transform, gate = layer(x).chunk(2, dim=-1)
            gate = torch.sigmoid(gate)
            x = gate * torch.relu(transform) + (1 - gate) * x
        return x
