"""Context-independent token representations: a word embedding or ELMo's character CNN.

Both map a batch of tokens to vectors of width ``output_dim``; the biLM stacks its
LSTMs on top. Inputs are integer tensors:

* :class:`WordEmbedding` takes word ids ``(batch, time)``;
* :class:`CharCNN` takes byte ids ``(batch, time, max_word_length)`` (see
  :func:`encode_words_as_bytes`), so that every word, seen in training or not, gets a
  vector.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from ..runtime.torch_helpers import fill_rows
from .highway import Highway

# Byte-level character ids: 0 is padding, bytes are 1..256, then four markers.
CHAR_PAD, BEGIN_WORD, END_WORD, BEGIN_SENTENCE, END_SENTENCE = 0, 257, 258, 259, 260
N_CHARS = 261


def encode_words_as_bytes(
    words: Sequence[str], max_word_length: int, specials: dict[str, int] | None = None
) -> np.ndarray:
    """Byte ids of each word, ``[BEGIN_WORD, b1 + 1, ..., END_WORD, 0, ...]``.

    Words longer than ``max_word_length - 2`` bytes are cut (as in ELMo). ``specials``
    maps marker tokens such as ``"<bos>"`` to a single marker id.

    Returns
    -------
    ids : ndarray of shape (len(words), max_word_length), int64
    """
    out = np.zeros((len(words), max_word_length), dtype=np.int64)
    out[:, 0] = BEGIN_WORD
    room = max_word_length - 2
    for i, word in enumerate(words):
        if specials and word in specials:
            codes = np.array([specials[word]], dtype=np.int64)
        else:
            # surrogatepass: a lone surrogate (from a badly decoded file) is bytes too
            codes = np.frombuffer(word.encode("utf-8", "surrogatepass")[:room],
                                  dtype=np.uint8).astype(np.int64) + 1
        out[i, 1 : 1 + len(codes)] = codes
        out[i, 1 + len(codes)] = END_WORD
    return out


class WordEmbedding(nn.Module):
    """A word embedding, optionally initialised from pretrained vectors.

    Parameters
    ----------
    n_words : int
        Vocabulary size (id 0 is padding and stays zero).
    dim : int
        Output width.
    pretrained : ndarray of shape (n_words, pretrained_dim), optional
        Initial vectors; rows that are all NaN (words the pretrained set lacks) are
        initialised randomly with the pretrained vectors' mean and standard deviation.
        When ``pretrained_dim != dim``, the embedding keeps the pretrained width and a
        learned linear projection maps it to ``dim``.
    input_dim : int, optional
        Width of the embedding table when no ``pretrained`` is given (default ``dim``).
    freeze : bool, default=False
        Keep the table at its ``pretrained`` start (no gradient); the projection, if
        any, still learns. Ignored without ``pretrained``.

    Shape
    -----
    ``(batch, time) -> (batch, time, dim)``
    """

    #: The table ``forward`` reads one row per input id: a call's integrity check
    #: (:mod:`elmofeat.bilm.integrity`) reads only the rows of its ids.
    row_table = "embedding.weight"

    def __init__(self, n_words: int, dim: int, pretrained: np.ndarray | None = None,
                 input_dim: int | None = None, freeze: bool = False):
        super().__init__()
        self.output_dim = dim
        self._pretrained = pretrained
        # input_dim rebuilds a model that was initialised from pretrained vectors
        # without needing those vectors again (the weights are loaded afterwards).
        width = pretrained.shape[1] if pretrained is not None else (input_dim or dim)
        self.embedding = nn.Embedding(n_words, width, padding_idx=0)
        self.projection = nn.Linear(width, dim, bias=False) if width != dim else None
        self.frozen = bool(freeze and pretrained is not None)
        self.embedding.weight.requires_grad_(not self.frozen)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        weight = self.embedding.weight
        if self._pretrained is None:
            nn.init.normal_(weight, std=weight.shape[1] ** -0.5)
        else:
            vectors = np.array(self._pretrained, dtype=np.float32)
            known = ~np.isnan(vectors).all(axis=1)
            mean = vectors[known].mean(0) if known.any() else np.zeros(vectors.shape[1])
            std = vectors[known].std(0) if known.any() else np.full(vectors.shape[1], 0.1)
            generator = np.random.default_rng(int(torch.randint(2**31, (1,)).item()))
            vectors[~known] = mean + std * generator.standard_normal(
                ((~known).sum(), vectors.shape[1])
            )
            with torch.no_grad():
                weight.copy_(torch.from_numpy(vectors))
        with torch.no_grad():
            weight[0].zero_()
        if self.projection is not None:
            nn.init.xavier_uniform_(self.projection.weight)

    def add_rows(self, vectors: np.ndarray) -> None:
        """Append rows (words) to the table, as trainable as the others."""
        old = self.embedding.weight
        table = torch.cat([old.detach(), torch.as_tensor(vectors, dtype=old.dtype,
                                                         device=old.device)])
        self.embedding = nn.Embedding.from_pretrained(table, freeze=self.frozen, padding_idx=0)

    def forward(self, word_ids: torch.Tensor) -> torch.Tensor:
        out = self.embedding(word_ids)
        return out if self.projection is None else self.projection(out)

    def extra_repr(self) -> str:
        return f"output_dim={self.output_dim}, frozen={self.frozen}"


class CharCNN(nn.Module):
    """ELMo's character CNN: byte embeddings, convolutions, max-pool, highway, projection.

    Each filter width ``w`` with ``n`` filters slides over the byte embeddings of a word;
    the maximum over positions of each filter (after a ReLU, as in the released ELMo
    models) gives one feature; all features go through a layer norm, highway layers
    and a linear projection to ``dim``. The distinct words of a batch are encoded once.

    The layer norm is not in ELMo. Max-pooled ReLU features are all positive and share
    a large common part, so without it every word's vector starts out pointing nearly
    the same way and the LM learns far more slowly than with a word embedding.
    Centring and scaling each word's features removes that common part
    (``benchmarks/bilm_quality.py`` compares the token layers).

    Parameters
    ----------
    dim : int
        Output width.
    char_dim : int
        Width of the byte embeddings.
    filters : sequence of (width, n_filters)
    n_highway : int

    Shape
    -----
    ``(batch, time, max_word_length) -> (batch, time, dim)``
    """

    def __init__(
        self,
        dim: int,
        char_dim: int = 16,
        filters: Sequence[tuple[int, int]] = ((1, 32), (2, 32), (3, 64), (4, 128), (5, 256)),
        n_highway: int = 2,
    ):
        super().__init__()
        self.output_dim = dim
        self.char_embedding = nn.Embedding(N_CHARS, char_dim, padding_idx=CHAR_PAD)
        self.convolutions = nn.ModuleList(
            nn.Conv1d(char_dim, n_filters, kernel_size=width) for width, n_filters in filters
        )
        n_features = sum(n for _, n in filters)
        self.feature_norm = nn.LayerNorm(n_features)
        self.highway = Highway(n_features, n_highway)
        self.projection = nn.Linear(n_features, dim)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        nn.init.uniform_(self.char_embedding.weight, -1.0, 1.0)
        with torch.no_grad():
            self.char_embedding.weight[CHAR_PAD].zero_()
        for conv in self.convolutions:
            conv.reset_parameters()
        self.feature_norm.reset_parameters()
        self.highway.reset_parameters()
        nn.init.xavier_uniform_(self.projection.weight)
        nn.init.zeros_(self.projection.bias)

    def forward(self, char_ids: torch.Tensor) -> torch.Tensor:
        batch, time, length = char_ids.shape
        flat = char_ids.reshape(-1, length)
        unique, inverse = torch.unique(flat, dim=0, return_inverse=True)
        # Filled up to a minimum of rows: a word's vector then does not depend on how
        # many distinct words its batch has (see fill_rows).
        chars = self.char_embedding(fill_rows(unique)).transpose(1, 2)  # (n_unique, char_dim, length)
        features = torch.cat(
            [F.relu(conv(chars)).amax(dim=-1) for conv in self.convolutions], dim=-1
        )
        words = self.projection(self.highway(self.feature_norm(features)))
        return words[inverse].reshape(batch, time, -1)

    def extra_repr(self) -> str:
        return f"output_dim={self.output_dim}"
