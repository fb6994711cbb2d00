"""Reading word-vector files: GloVe (no header) or word2vec (header) text, optionally
gzipped, every number checked finite. Used by :class:`~elmofeat.WordVectorsVectorizer`
and by the biLM's word layer (``BiLM(pretrained_vectors=...)``)."""

from __future__ import annotations

import os
import zlib

import numpy as np


def check_finite_vectors(vectors, source) -> "KeyedVectors":  # noqa: F821
    """``vectors`` (KeyedVectors) if every number is finite; a ``ValueError`` naming
    ``source`` and the first bad word otherwise (NaN vectors would make NaN features)."""
    finite = np.isfinite(vectors.vectors).all(axis=1)
    if not finite.all():
        bad = int(np.flatnonzero(~finite)[0])
        raise ValueError(f"{source}: the vector of {vectors.index_to_key[bad]!r} (row {bad}) "
                         f"holds NaN or infinite values ({int((~finite).sum()):,} such rows)")
    return vectors


def load_word_vectors(path, words=None, first: int = 0) -> "KeyedVectors":  # noqa: F821
    """Read a GloVe (no header) or word2vec (header) text file, optionally gzipped.

    A file that cannot be read as one (truncated gzip, not text, unparsable numbers) or
    holds NaN or infinite values is a ``ValueError`` that names it.

    Parameters
    ----------
    path : str or path-like
    words : collection of str, default=None
        Keep only these words (a lookup before any number is parsed: reading GloVe 6B
        for one corpus' vocabulary takes seconds instead of a minute).
    first : int, default=0
        With ``words``, also keep the file's first ``first`` rows (the most frequent
        words, in the usual frequency-sorted files).
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"pretrained_vectors file not found: {path}")
    try:
        vectors = _read_word_vectors(path, words, first)
    except (EOFError, OSError, zlib.error, UnicodeDecodeError) as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        raise ValueError(f"{path} cannot be read as a word-vector file "
                         f"({type(exc).__name__}: {exc or 'truncated'})") from exc
    except ValueError as exc:
        if str(exc).startswith(path):
            raise
        raise ValueError(f"{path} is not a word-vector text file: {exc}") from exc
    return check_finite_vectors(vectors, path)


def _read_word_vectors(path: str, words, first: int):
    """Every row (``words=None``), or the first ``first`` rows and those of ``words``.

    Each row is checked to hold as many numbers as the first (and as a word2vec header
    says): gensim's reader copied a row of one number into every dimension.
    """
    from gensim import utils
    from gensim.models import KeyedVectors

    with utils.open(path, "rb") as f:
        head = f.readline().split()
    has_header = len(head) == 2 and all(part.isdigit() for part in head)
    width = int(head[1]) if has_header else None
    wanted = None if words is None else set(words)
    keys, rows = [], []
    with utils.open(path, "rb") as f:
        if has_header:
            f.readline()
        for row, line in enumerate(f):
            word, _, numbers = line.rstrip().partition(b" ")
            word = word.decode("utf-8", "replace")
            if wanted is not None and row >= first and word not in wanted:
                continue
            values = np.array(numbers.split(), dtype=np.float32)
            if width is None:
                width = len(values)
            if len(values) != width or not width:
                line_number = row + 1 + has_header
                raise ValueError(f"{path}: line {line_number:,} ({word!r}) holds "
                                 f"{len(values)} numbers where the vectors have {width}; "
                                 "a damaged or truncated word-vector file")
            keys.append(word)
            rows.append(values)
    if not rows:
        if wanted is None:
            raise ValueError(f"{path}: no vectors in the file")
        raise ValueError(f"{path}: none of the {len(wanted):,} words asked for is in the file")
    vectors = KeyedVectors(vector_size=width, dtype=np.float32)
    vectors.add_vectors(keys, np.vstack(rows))
    return vectors
