"""Output layers of the language model: adaptive, sampled or full softmax.

All three share one interface: ``loss(hidden, targets)`` gives the mean negative
log-likelihood used for training, and ``log_likelihood(hidden, targets)`` the exact
per-token log-probability used for validation perplexity (sampled softmax trains on a
sample of the vocabulary but is evaluated over all of it). The vocabulary must be
sorted by decreasing frequency (as :class:`~elmofeat.text.Vocabulary` is), which
adaptive and log-uniform sampled softmax rely on.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

from .chunked_cross_entropy import cross_entropy_sum, log_likelihoods
from .shapes import bucketed_rows, pad_rows

SOFTMAX_KINDS = ("adaptive", "sampled", "full")


def default_cutoffs(n_words: int) -> list[int]:
    """Cluster boundaries for adaptive softmax.

    The head holds about the 8% most frequent words, at most 2,000 (its cost is paid for
    every target), the first tail five times as many, at most 10,000, then one more
    tail up to 50,000 words. Measured on AG News (13k words): head 1,100 trains 18%
    faster than head 2,000.
    """
    head = min(2000, max(100, n_words // 12))
    cutoffs = [c for c in (head, min(10000, 5 * head), 50000) if c < n_words - 1]
    cutoffs = sorted(set(cutoffs))
    return cutoffs or [max(1, n_words // 2)]


class FullSoftmax(nn.Module):
    """A linear layer over the whole vocabulary and cross-entropy.

    Parameters
    ----------
    dim, n_words : int
    tied_weight : nn.Parameter, optional
        The input embedding ``(n_words, dim)`` to share as output weight.
    """

    def __init__(self, dim: int, n_words: int, tied_weight: nn.Parameter | None = None):
        super().__init__()
        self.tied = tied_weight is not None
        self.weight = tied_weight if self.tied else nn.Parameter(torch.empty(n_words, dim))
        self.bias = nn.Parameter(torch.empty(n_words))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if not self.tied:
            nn.init.normal_(self.weight, std=self.weight.shape[1] ** -0.5)
        nn.init.zeros_(self.bias)

    def extra_repr(self) -> str:
        n_words, dim = self.weight.shape
        return f"dim={dim}, n_words={n_words}, tied={self.tied}"

    def log_likelihood(self, hidden: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return log_likelihoods(hidden, self.weight, targets, self.bias)

    def loss(self, hidden: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        # In blocks of rows: the (n, n_words) scores are never all held at once.
        return cross_entropy_sum(hidden, self.weight, targets, self.bias) / len(targets)


class SampledSoftmax(FullSoftmax):
    """Softmax over the target and ``n_samples`` shared negatives (Jean et al. 2015).

    Negatives are drawn once per batch from the log-uniform (Zipfian) distribution over
    frequency-ranked ids, and every logit is corrected by ``-log(expected count)`` so
    that the loss estimates the full softmax; negatives equal to a row's target are
    masked out. Evaluation (``log_likelihood``) uses the full softmax.
    """

    def __init__(self, dim: int, n_words: int, n_samples: int = 1024,
                 tied_weight: nn.Parameter | None = None):
        super().__init__(dim, n_words, tied_weight)
        self.n_samples = min(n_samples, n_words)
        ranks = torch.arange(n_words, dtype=torch.float64)
        # P(id) = log((id + 2) / (id + 1)) / log(n_words + 1)
        self.register_buffer(
            "log_q",
            (torch.log1p(1.0 / (ranks + 1.0)) / math.log(n_words + 1.0)).log().float(),
            persistent=False,
        )

    def extra_repr(self) -> str:
        return f"{super().extra_repr()}, n_samples={self.n_samples}"

    def loss(self, hidden: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        if not self.training:
            return super().loss(hidden, targets)
        n_words = self.weight.shape[0]
        # Inverse-CDF sampling of the log-uniform distribution, with replacement.
        uniform = torch.rand(self.n_samples, device=hidden.device)
        samples = (torch.exp(uniform * math.log(n_words + 1.0)) - 1.0).long().clamp_(0, n_words - 1)
        # Expected number of times each id is drawn: n_samples * P(id).
        log_expected = self.log_q + math.log(self.n_samples)
        true_logits = (hidden * self.weight[targets]).sum(-1) + self.bias[targets]
        true_logits = true_logits.float() - log_expected[targets]
        padded = pad_rows(hidden, bucketed_rows(len(hidden)))
        sampled_logits = F.linear(padded, self.weight[samples], self.bias[samples])
        sampled_logits = sampled_logits[: len(hidden)].float()
        sampled_logits = sampled_logits - log_expected[samples]
        sampled_logits = sampled_logits.masked_fill(samples.unsqueeze(0) == targets.unsqueeze(1), -1e4)
        logits = torch.cat([true_logits.unsqueeze(1), sampled_logits], dim=1)
        return F.cross_entropy(logits, torch.zeros_like(targets))


class AdaptiveSoftmax(nn.Module):
    """Adaptive softmax (Grave et al. 2017) with the parameters of
    :class:`torch.nn.AdaptiveLogSoftmaxWithLoss`, scored in blocks of bucketed rows.

    Frequent words sit in a small head; rare words in tail clusters of reduced width,
    which makes training cost grow far slower than the vocabulary. The scores are those
    of torch's module (in float32). The head and every cluster are scored a block of
    rows at a time (:mod:`~elmofeat.bilm.chunked_cross_entropy`), on
    :func:`bucketed_rows` rows: no step allocates ``rows x head`` scores, and the
    engine meets a bounded set of matmul shapes whatever the corpus size.
    """

    def __init__(self, dim: int, n_words: int, cutoffs: list[int] | None = None,
                 div_value: float = 4.0):
        super().__init__()
        self.adaptive = nn.AdaptiveLogSoftmaxWithLoss(
            dim, n_words, cutoffs or default_cutoffs(n_words), div_value=div_value
        )

    def reset_parameters(self) -> None:
        self.adaptive.reset_parameters()

    def _clusters(self, targets: torch.Tensor):
        """The head's column of every target, and each non-empty tail cluster's rows.

        targets : LongTensor (n,), ids in ``[0, n_words)``. Returns ``head_column``
        (n,) and a list of ``(tail index, rows, ids within the cluster)``.
        """
        module = self.adaptive
        head_column = targets.clone()  # shortlist words score in the head directly
        clusters = []
        for i, (low, high) in enumerate(zip(module.cutoffs[:-1], module.cutoffs[1:])):
            rows = ((targets >= low) & (targets < high)).nonzero().squeeze(1)
            if len(rows):
                head_column[rows] = module.shortlist_size + i
                clusters.append((i, rows, targets[rows] - low))
        return head_column, clusters

    def _projected(self, hidden: torch.Tensor, i: int, rows: torch.Tensor) -> torch.Tensor:
        """Tail ``i``'s reduced-width input for ``rows``: ``(len(rows), width)``."""
        # Rows padded with index 0: their projections are computed and dropped.
        padded = F.pad(rows, (0, bucketed_rows(len(rows)) - len(rows)))
        return self.adaptive.tail[i][0](hidden.index_select(0, padded))[: len(rows)]

    def log_likelihood(self, hidden: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """Exact float32 log-probability of every target ``(n,)`` (no autocast)."""
        module = self.adaptive
        with torch.autocast(hidden.device.type, enabled=False):
            hidden = hidden.float()
            head_column, clusters = self._clusters(targets)
            scores = log_likelihoods(hidden, module.head.weight, head_column, module.head.bias)
            for i, rows, within in clusters:
                scores[rows] += log_likelihoods(self._projected(hidden, i, rows),
                                                module.tail[i][1].weight, within)
        return scores

    def loss(self, hidden: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """Mean NLL of the targets; the scores are never all held at once (see
        :mod:`~elmofeat.bilm.chunked_cross_entropy`)."""
        module = self.adaptive
        head_column, clusters = self._clusters(targets)
        total = cross_entropy_sum(hidden, module.head.weight, head_column, module.head.bias)
        for i, rows, within in clusters:
            total = total + cross_entropy_sum(self._projected(hidden, i, rows),
                                              module.tail[i][1].weight, within)
        return total / len(targets)


def build_softmax(kind: str, dim: int, n_words: int, *, n_samples: int = 1024,
                  tied_weight: nn.Parameter | None = None) -> nn.Module:
    """The output layer named by ``kind`` (see :data:`SOFTMAX_KINDS`)."""
    if kind == "full":
        return FullSoftmax(dim, n_words, tied_weight)
    if kind == "sampled":
        return SampledSoftmax(dim, n_words, n_samples, tied_weight)
    if kind == "adaptive":
        if tied_weight is not None:
            raise ValueError("tie_weights=True needs softmax='full' or 'sampled'")
        return AdaptiveSoftmax(dim, n_words)
    raise ValueError(f"softmax must be one of {SOFTMAX_KINDS}, got {kind!r}")
