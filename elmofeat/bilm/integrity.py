"""Content fingerprints of a biLM's weights: a check of the values a call reads.

Cached layers are keyed by the weights' SHA-256, and the shared pretrained model is
read by every vectorizer of the process, so both must follow the weights' *values*.
torch's version counter does not: writes through ``tensor.data``, a NumPy view, the
storage or ``torch.inference_mode()`` leave it as it was, and an inference tensor has
none (the sixth probe's D1, D4 and D6). A SHA-256 of all of en-base's weights (87 MB in
float32) takes about a tenth of a second, more than transforming 100 texts. So a
:class:`WeightsFingerprint` is taken with the digest, and each call checks against it
exactly what it reads: every tensor it uses in full, and of a table read row by row
(the word embedding: 204,462 rows in en-base) only the rows of the call's tokens.

Signatures: a tensor's bits as integers (64-bit words for a tensor read whole, one
integer per value for a row of a table), times odd multipliers drawn at random per
process, summed modulo 2**64 (one sum per tensor, or one per row of a table). A change of
any one value always changes the signature: its word changes by a non-zero amount, and an
odd multiplier is invertible modulo 2**64. Several changes cancel only by design, which
would need the multipliers. (A CRC-32 of the bytes, the first design, took four times as
long: ``benchmarks/integrity_check.py`` holds the check to 2% of a 100-text transform.)

A fingerprint never keeps a tensor alive: it holds signatures and the tensors' names.
"""

from __future__ import annotations

import secrets
from typing import Mapping

import numpy as np
import torch

#: Rows signed per chunk when a whole table is fingerprinted: bounds the int64 copy.
_CHUNK_ROWS = 16_384

_BITS = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}


def _host_bytes(tensor: torch.Tensor) -> np.ndarray:
    """The tensor's values as raw bytes on the host (a view where it already is)."""
    tensor = tensor.detach()
    if tensor.device.type != "cpu":
        tensor = tensor.cpu()
    return tensor.contiguous().view(-1).view(torch.uint8).numpy()


def _words(tensor: torch.Tensor) -> np.ndarray:
    """The tensor's bytes as 64-bit words (zero-padded to a whole word)."""
    raw = _host_bytes(tensor)
    if raw.size % 8:
        raw = np.concatenate([raw, np.zeros(8 - raw.size % 8, np.uint8)])
    return raw.view(np.int64)


def _value_bits(table: torch.Tensor) -> np.ndarray:
    """A 2-D tensor's values as integers of their width (their bit patterns), shape
    ``(rows, columns)``, on the host."""
    return _host_bytes(table).view(_BITS[table.element_size()]).reshape(table.shape)


class WeightsFingerprint:
    """Signatures of every tensor of a module, taken once; :meth:`changed` compares
    the tensors a call reads with them.

    Parameters
    ----------
    tensors : mapping of str to Tensor
        The module's ``state_dict(keep_vars=True)``.
    row_tables : iterable of str
        Names of 2-D tensors read by rows (word embeddings): signed row by row, so that
        a call checks only the rows it reads.
    """

    def __init__(self, tensors: Mapping[str, torch.Tensor], row_tables=()):
        self.row_tables = frozenset(n for n in row_tables if n in tensors
                                    and tensors[n].dim() == 2)
        self._drawn = {}
        self._whole = {}
        self._rows = {}
        for name, tensor in tensors.items():
            if name in self.row_tables:
                self._rows[name] = self._sign_all_rows(name, tensor)
            else:
                self._whole[name] = self._sign_whole(tensor)
        self.names = frozenset(tensors)
        # what embedding documents reads (a biLM's encoder), named once
        self.encoder_names = tuple(n for n in tensors if n.startswith("encoder."))

    def _multipliers(self, key, n: int) -> np.ndarray:
        """``n`` odd 64-bit multipliers for ``key`` (a row table's name, or "words" for
        every tensor read whole: the first ``len`` of them), drawn once."""
        drawn = self._drawn.get(key)
        if drawn is None or len(drawn) < n:
            more = np.frombuffer(secrets.token_bytes(8 * (n - (0 if drawn is None else len(drawn)))),
                                 dtype=np.int64) | 1  # odd: invertible modulo 2**64
            drawn = more if drawn is None else np.concatenate([drawn, more])
            self._drawn[key] = drawn
        return drawn[:n]

    def _sign_whole(self, tensor: torch.Tensor) -> int:
        words = _words(tensor)
        # int64 products and sums wrap modulo 2**64: the signature's arithmetic.
        return int(np.dot(words, self._multipliers("words", len(words))))

    def _sign_rows(self, name: str, bits: np.ndarray) -> np.ndarray:
        """Signatures of the rows ``bits`` (integers, as :func:`_value_bits` gives)."""
        return bits.astype(np.int64) @ self._multipliers(name, bits.shape[1])

    def _sign_all_rows(self, name: str, table: torch.Tensor) -> np.ndarray:
        bits = _value_bits(table)
        return np.concatenate([np.zeros(0, np.int64)] + [
            self._sign_rows(name, bits[i : i + _CHUNK_ROWS])
            for i in range(0, len(bits), _CHUNK_ROWS)])

    def changed(self, tensors: Mapping[str, torch.Tensor],
                reads: Mapping[str, np.ndarray | None] | None = None) -> list[str]:
        """Names of the tensors, among those ``reads`` names, whose values differ from
        the fingerprint's (a tensor added or removed counts as changed).

        Parameters
        ----------
        tensors : mapping of str to Tensor
            The module's tensors now (``state_dict(keep_vars=True)``).
        reads : mapping of str to ndarray of int or None, default=None
            The tensors a call reads: for a row table, the ids of its rows (None: all
            rows); names absent are not checked. None: every tensor, every row.
        """
        if reads is None:
            if frozenset(tensors) != self.names:
                return sorted(self.names.symmetric_difference(tensors))
            reads = dict.fromkeys(tensors)
        out = []
        for name, ids in reads.items():
            tensor = tensors.get(name)
            if tensor is None or name not in self.names:
                out.append(name)
            elif name in self.row_tables:
                if not self._rows_match(name, tensor, ids):
                    out.append(name)
            elif self._sign_whole(tensor) != self._whole[name]:
                out.append(name)
        return out

    def _rows_match(self, name, table, ids) -> bool:
        signed = self._rows[name]
        if table.dim() != 2 or len(table) != len(signed):
            return False
        if ids is None:
            return np.array_equal(self._sign_all_rows(name, table), signed)
        ids = np.asarray(ids, dtype=np.int64)
        if ids.size and (ids.min() < 0 or ids.max() >= len(signed)):
            return False
        if table.device.type == "cpu":
            rows = _value_bits(table)[ids]
        else:  # gathered where the table is: only the rows cross to the host
            rows = _value_bits(table.index_select(0, torch.from_numpy(ids).to(table.device)))
        return np.array_equal(self._sign_rows(name, rows), signed[ids])
