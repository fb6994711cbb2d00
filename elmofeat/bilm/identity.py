"""What names a fitted biLM's weights and its layers, checked by their values.

:class:`WeightsIdentityMixin` gives :class:`~elmofeat.BiLM` ``weights_key``,
``representation_key``, ``encoder_reads`` and ``word_ids``: the keys its caches, pickles
and adaptations use, each computed from the weights' values through a
:class:`~elmofeat.bilm.integrity.WeightsFingerprint`, so that no in-place change, by any
route, keeps an old key. It needs the fitted ``language_model_`` and ``vocabulary_``.
"""

from __future__ import annotations

from itertools import chain

import numpy as np
import pandas as pd

from ..runtime.torch_helpers import weights_stamp
from . import sharing
from .batching import BOS, EOS, UNK
from .integrity import WeightsFingerprint


class WeightsIdentityMixin:
    """Keys of a fitted biLM's weights and layers, from their values."""

    def weights_key(self, reads=None) -> str:
        """Names the current weights (their SHA-256), so that a biLM fitted again, or
        changed in place by any route (``load_state_dict``, an optimizer's step, an edit
        under ``torch.no_grad()``, through ``.data``, a NumPy view or inside
        ``torch.inference_mode()``, ``.half()``), never gets the layers of its old
        weights back.

        The digest is computed again when a tensor's identity, storage, dtype or version
        counter moved, or when the values ``reads`` names differ from the fingerprint
        taken with the digest (:class:`~elmofeat.bilm.integrity.WeightsFingerprint`).
        ``reads``: what a call reads (:meth:`encoder_reads`); None: every value (a tenth
        of a second for en-base: for pickles and adaptation keys, not per call). A
        shared biLM whose values changed is refused (:func:`~elmofeat.bilm.sharing.check_values`).
        """
        from .io import weights_digest

        lm = self.language_model_
        tensors = lm.state_dict(keep_vars=True)
        stamp = weights_stamp(lm, tensors)
        cached = getattr(self, "_weights_key_", None)
        if cached is not None and cached[0] == stamp:
            changed = cached[2].changed(tensors, reads)
            if not changed:
                return cached[1]
            sharing.check_values(self, changed)
        fingerprint = WeightsFingerprint(tensors, self._row_tables())
        self._weights_key_ = (stamp, weights_digest(self), fingerprint)
        return self._weights_key_[1]

    def _row_tables(self) -> set[str]:
        """The tensors the token layer reads row by row (its word embedding), by name."""
        table = getattr(self.language_model_.encoder.token_layer, "row_table", None)
        return set() if table is None else {f"encoder.token_layer.{table}"}

    def encoder_reads(self, word_ids=None) -> dict:
        """What embedding documents reads of the weights, for :meth:`weights_key`: every
        tensor of the encoder, and of its word table only the rows ``word_ids`` and the
        padding row, which batches read too (None: every row)."""
        cached = getattr(self, "_weights_key_", None)  # its names: no walk of the modules
        if cached is not None:
            names = cached[2].encoder_names
        else:
            names = [n for n in self.language_model_.state_dict(keep_vars=True)
                     if n.startswith("encoder.")]
        reads = dict.fromkeys(names)
        if word_ids is not None:
            # the padding row too: batches read it (word_ids from :meth:`word_ids` hold it)
            ids = np.asarray(word_ids, dtype=np.int64)
            if not (ids.size and ids[0] == 0):
                ids = np.union1d(ids, [0])
            for name in self._row_tables():
                reads[name] = ids
        return reads

    def representation_key(self, word_ids=None) -> str:
        """What the layers of a document depend on: the current weights, the
        tokenization and windows, the device. Cached layers are keyed by it.
        ``word_ids``: the word ids of the documents whose layers are looked up or
        computed (:meth:`word_ids`): their rows of the word table are checked, with the
        rest of the encoder; None: every row. A shared biLM changed in place is refused
        (:func:`~elmofeat.bilm.sharing.check_intact`, :meth:`weights_key`)."""
        sharing.check_intact(self)
        return self.weights_key(self.encoder_reads(word_ids)) + repr(
            (self.lowercase, self.token_pattern, self.max_len, str(self._device)))

    def word_ids(self, token_lists) -> np.ndarray:
        """The vocabulary ids of ``token_lists``' distinct tokens (documents cut by
        :meth:`tokenize`), with the padding and marker rows: the rows of the word table
        their layers read (none for a character token layer, which has no such table)."""
        if not self._row_tables():
            return np.zeros(0, np.int64)
        # The distinct tokens only: a tenth of the lookups of cutting the windows.
        distinct = pd.Index(list(set(chain.from_iterable(token_lists))), dtype=object)
        ids = self.vocabulary_.index.get_indexer(distinct)
        # the padding row (0) first, and the markers' rows: every batch reads them. The
        # ids of distinct tokens are distinct: no sort (a repeated marker is harmless).
        markers = [0, *(self.vocabulary_.tokens.index(token) for token in (BOS, EOS, UNK))]
        return np.concatenate([np.asarray(markers, np.int64), ids[ids >= 0]])

