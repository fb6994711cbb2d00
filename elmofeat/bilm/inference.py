"""Running a fitted biLM: layer representations of documents, and perplexity.

:class:`EmbeddingMixin` gives :class:`~elmofeat.BiLM` its inference methods; it needs
the fitted ``language_model_``, ``vocabulary_`` and the text and batch parameters.
"""

from __future__ import annotations

import contextlib
import math
from typing import Iterator

import numpy as np
import torch
from sklearn.utils.validation import check_is_fitted
from tqdm.auto import tqdm

from ..text import validate_documents
from ..runtime.threads import in_force
from ..runtime.torch_helpers import autocast
from .batching import inference_batches, iter_batches
from . import sharing
from .train import evaluate_perplexity


@contextlib.contextmanager
def eval_mode(module):
    """Run ``module`` in eval mode (dropout off), putting back the modes it had: a
    user's ``.train()`` on the modules never reaches features."""
    training = [m for m in module.modules() if m.training]
    for m in training:
        m.training = False
    try:
        yield module
    finally:
        for m in training:
            m.training = True


class EmbeddingMixin:
    """``embed``, ``iter_embed``, ``embed_flat``, ``perplexity`` and ``score`` of a fitted BiLM."""

    @contextlib.contextmanager
    def _inference_context(self, threads=None):
        """Inference mode, eval mode, autocast, and the thread policy: the caller's
        ``threads`` where it passed some, else this biLM's ``n_threads``. Yields the
        ``Threads``. A shared biLM changed in place is refused first."""
        sharing.check_intact(self)
        with in_force(threads, self.n_threads) as threads, torch.inference_mode(), \
                eval_mode(self.language_model_), \
                autocast(str(self._device), self._bf16(False)):
            yield threads

    def iter_embed(self, X, batch_size: int | None = None, chunk_size: int = 1024) -> Iterator[np.ndarray]:
        """Stream the layer representations, one document at a time, in order.

        Documents are read ``chunk_size`` at a time (``X`` may be a generator over a
        corpus that does not fit in memory); within a chunk, windows are bucketed by
        length into batches of ``batch_size`` windows (default ``4 * self.batch_size``, at
        least 16: see :func:`~elmofeat.bilm.batching.inference_batches`).

        Yields
        ------
        layers : ndarray of shape (n_tokens, n_layers + 1, 2 * embedding_dim), float32
            ``n_tokens`` is the document's token count (0 for an empty document).
        """
        check_is_fitted(self, "language_model_")
        if isinstance(X, (str, bytes)) or X is None:
            validate_documents(X)  # raises the usual, precise error
        total = len(X) if hasattr(X, "__len__") else None
        with tqdm(total=total, unit="doc", desc="BiLM.embed", disable=not self.verbose,
                  leave=False) as bar:
            for layers in self._iter_embed(X, batch_size, chunk_size):
                bar.update(1)
                yield layers

    def _iter_embed(self, X, batch_size, chunk_size):
        chunk: list = []
        start = 0
        for item in X:
            chunk.append(item)
            if len(chunk) == chunk_size:
                # Errors name the document's index in X, not in its chunk.
                yield from self._embed_chunk(validate_documents(chunk, offset=start), batch_size)
                start += len(chunk)
                chunk = []
        if chunk:
            yield from self._embed_chunk(validate_documents(chunk, offset=start), batch_size)

    def embed_flat(self, X, batch_size: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Layer representations of all tokens of ``X`` in one array, with offsets.

        The form that vectorized consumers (mixing, pooling) want: no per-document arrays.

        Returns
        -------
        layers : ndarray of shape (n_tokens_total, n_layers + 1, 2 * embedding_dim), float32
        offsets : ndarray of shape (n_documents + 1,)
            Document ``i`` owns ``layers[offsets[i]:offsets[i + 1]]``.
        """
        check_is_fitted(self, "language_model_")
        return self.embed_tokens(self.tokenize(X), batch_size)

    def tokenize(self, X) -> list[list[str]]:
        """The tokens of each document, as the biLM reads them (its ``lowercase`` and
        ``token_pattern``)."""
        return self._tokenize(X)

    def embed_tokens(self, token_lists, batch_size=None, *, threads=None,
                     weights_checked: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`embed_flat` of documents already cut into tokens (by :meth:`tokenize`).

        Parameters
        ----------
        token_lists : list of list of str
        batch_size : int, default=None
            Windows per inference batch (default ``4 * self.batch_size``, at least 16).
        threads : Threads, default=None
            The thread policy in force of the caller (see :meth:`fit`); None: this
            biLM's ``n_threads``.
        weights_checked : bool, default=False
            The caller has just checked the weights' values these tokens read
            (:meth:`representation_key` with their :meth:`word_ids`, as the layer cache
            does): a shared biLM skips checking them again.
        """
        windows = self._windows(token_lists)
        if sharing.is_shared(self) and not weights_checked:  # the values they read, as marked
            self.weights_key(self.encoder_reads(np.unique(windows.word_ids)))
        chars = self._chars(windows)
        lengths = windows.lengths
        content_offsets = np.concatenate([[0], np.cumsum(lengths - 2)])
        out = np.empty((content_offsets[-1], self.n_representations_, self.output_dim_), np.float32)
        batches = inference_batches(lengths, batch_size or 4 * self.batch_size)
        lm = self.language_model_
        to_host = _HostCopy(self._device, batches, lengths, out.shape[1:])
        with self._inference_context(threads) as threads:
            for batch in iter_batches(windows, batches, chars, self._device):
                threads.tick()
                if to_host.staging is None:  # CPU: each layer's states copied straight
                    to_host.copy_parts(lm.encoder(batch.inputs, batch.lengths),
                                       batch.windows, content_offsets, out)
                else:
                    layers = lm.encoder.layer_representations(batch.inputs, batch.lengths)
                    to_host(layers, batch.windows, content_offsets, out)
        # Windows of a document are consecutive, so its tokens are too.
        doc_lengths = np.fromiter((len(t) for t in token_lists), np.int64, len(token_lists))
        return out, np.concatenate([[0], np.cumsum(doc_lengths)])

    def _embed_chunk(self, documents, batch_size):
        out, offsets = self.embed_flat(documents, batch_size)
        for i in range(len(offsets) - 1):
            yield out[offsets[i] : offsets[i + 1]]

    def embed(self, X, batch_size: int | None = None) -> list[np.ndarray]:
        """Layer representations of every token of every document.

        Parameters
        ----------
        X : iterable of str
        batch_size : int, default=None
            Windows per inference batch (default ``4 * self.batch_size``, at least 16).

        Returns
        -------
        layers : list of ndarray, one per document, shape (n_tokens, n_layers + 1, 2 * embedding_dim)
            float32; representation 0 is the token layer, 1.. the LSTM layers. A
            document's arrays do not depend on the other documents in ``X``, nor on
            ``batch_size`` (on a CPU to the last bit; on a GPU up to float rounding).
        """
        documents = validate_documents(X)
        return [layers.copy() for layers in self.iter_embed(documents, batch_size, chunk_size=max(1, len(documents)))]

    def perplexity(self, X) -> float:
        """Exact perplexity of both directions on the documents ``X``.

        Raises
        ------
        ValueError
            If ``X`` has no token at all (a perplexity of nothing is undefined).
        """
        check_is_fitted(self, "language_model_")
        windows = self._windows(self._tokenize(X))
        if len(windows) == 0:
            raise ValueError("X has no token: perplexity needs at least one word")
        with in_force(None, self.n_threads) as threads:
            return evaluate_perplexity(self.language_model_, windows, self._chars(windows),
                                       4 * self.batch_size, self._bf16(False), str(self._device),
                                       desc="BiLM.perplexity" if self.verbose else None,
                                       threads=threads)

    def score(self, X, y=None) -> float:
        """Minus the mean per-token negative log-likelihood of both directions on ``X``
        (``-log(perplexity(X))``): greater is better, so that ``GridSearchCV(BiLM(),
        {"hidden_dim": [...]})`` tunes the language model by held-out likelihood.

        Parameters
        ----------
        X : iterable of str
        y : None
            Ignored.

        Returns
        -------
        score : float

        Examples
        --------
        >>> from sklearn.model_selection import GridSearchCV
        >>> from elmofeat import BiLM
        >>> texts = ["the cat sat on the mat .", "the dog sat on the log ."] * 20
        >>> search = GridSearchCV(BiLM(embedding_dim=8, max_epochs=1, random_state=0),
        ...                       {"hidden_dim": [8, 16]}, cv=2).fit(texts)
        >>> search.best_params_["hidden_dim"] in (8, 16)
        True
        """
        return -math.log(self.perplexity(X))


class _HostCopy:
    """Copies a batch's layer representations into the flat output, without padding and
    without the <bos>/<eos> positions.

    On a CPU, row by row from the padded batch. On an accelerator, a copy to pageable
    host memory is slow (it bound ``embed`` on an H100: ``benchmarks/gpu.py``): the real
    positions are gathered on the device and copied through one pinned buffer, sized
    for the largest batch.
    """

    def __init__(self, device, batches, lengths, shape, gather: bool | None = None):
        device = torch.device(device)
        self.lengths, self.staging = lengths, None
        if gather is None:
            gather = device.type != "cpu"
        if gather:
            most = max((int((lengths[b] - 2).sum()) for b in batches), default=0)
            self.staging = torch.empty((most, *shape), dtype=torch.float32,
                                       pin_memory=device.type == "cuda")

    def __call__(self, layers, windows, content_offsets, out):
        """``layers``: (batch, width, n_layers + 1, dim) on the device; ``windows``:
        the batch's window indices."""
        n = self.lengths[windows] - 2
        if self.staging is None:
            layers = layers.float().cpu().numpy()
            for row, window in enumerate(windows):
                start = content_offsets[window]
                out[start : start + n[row]] = layers[row, 1 : n[row] + 1]  # strip <bos>, <eos>
            return
        rows = np.repeat(np.arange(len(windows)), n)
        positions = np.arange(n.sum()) - np.repeat(np.cumsum(n) - n, n) + 1
        content = layers[torch.from_numpy(rows).to(layers.device),
                         torch.from_numpy(positions).to(layers.device)]
        host = self.staging[: len(rows)]
        host.copy_(content)  # waits for the device: the buffer is reused by the next batch
        destination = np.repeat(content_offsets[windows], n) + positions - 1
        out[destination] = host.numpy()

    def copy_parts(self, parts, windows, content_offsets, out):
        """What ``__call__`` copies row by row, from the encoder's output
        ``(tokens, forward_states, backward_states)`` (each ``(batch, width, dim)``, on
        the CPU) instead of their stack by ``layer_representations``: measured, writing
        that stack and then copying it cost a tenth of a CPU transform; this writes each
        value once."""
        tokens, forwards, backwards = (parts[0].float().numpy(),
                                       [s.float().numpy() for s in parts[1]],
                                       [s.float().numpy() for s in parts[2]])
        dim = tokens.shape[-1]
        n = self.lengths[windows] - 2
        for row, window in enumerate(windows):
            block = out[content_offsets[window] : content_offsets[window] + n[row]]
            content = slice(1, n[row] + 1)  # strip <bos>, <eos>
            block[:, 0, :dim] = block[:, 0, dim:] = tokens[row, content]
            for i, (forward, backward) in enumerate(zip(forwards, backwards), start=1):
                block[:, i, :dim] = forward[row, content]
                block[:, i, dim:] = backward[row, content]

