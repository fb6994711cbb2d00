"""Input validation, tokenization and the vocabulary, shared by every vectorizer.

Documents flow through three steps:

1. :func:`validate_documents` turns the user's iterable into a list of ``str`` and
   rejects anything else with an error that names the offending index;
2. a :class:`TextTokenizer` (scikit-learn's ``lowercase`` / ``token_pattern`` /
   ``tokenizer`` conventions) turns each document into a list of tokens;
3. a :class:`Vocabulary` maps tokens to integer ids for a whole corpus at once and
   returns them as a :class:`RaggedIds` (one flat id array plus offsets), which is the
   form every hot path (pooling, co-occurrence counting, batching) works on.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from itertools import chain
from numbers import Integral
from typing import Callable, Iterable, Sequence

import numpy as np
import pandas as pd
from sklearn.feature_extraction.text import CountVectorizer

from ._token_patterns import (  # noqa: F401 (re-exported: elmofeat.text is their home)
    DEFAULT_TOKEN_PATTERN, VETTED_TOKEN_PATTERNS, check_token_pattern,
    set_trusted_token_patterns, trusted_token_patterns)


def validate_documents(X, *, name: str = "X", offset: int = 0) -> list[str]:
    """Return ``X`` as a list of str, or raise an error that says what is wrong.

    Parameters
    ----------
    X : iterable of str
        A list, tuple, 1-D array, pandas Series or any other iterable of documents.
    name : str, default="X"
        Name used in error messages.
    offset : int, default=0
        Added to the indices in error messages (``X`` is a chunk of a longer stream).

    Returns
    -------
    documents : list of str

    Raises
    ------
    TypeError
        ``X`` is a bare string or bytes, ``None``, not iterable, a 2-D container, or one
        of its items is not a ``str`` (``None``, bytes, numbers...). The message gives the
        index of the first bad item.
    ValueError
        One of the items is a missing value (NaN / ``pd.NA``).

    Examples
    --------
    >>> validate_documents(["a b", "c"])
    ['a b', 'c']
    >>> validate_documents("a b")
    Traceback (most recent call last):
    ...
    TypeError: X must be an iterable of str documents, got a single str; wrap it in a list: [X]
    """
    if X is None:
        raise TypeError(f"{name} must be an iterable of str documents, got None")
    if isinstance(X, (str, bytes, bytearray)):
        kind = "str" if isinstance(X, str) else "bytes object"
        raise TypeError(
            f"{name} must be an iterable of str documents, got a single {kind}; "
            f"wrap it in a list: [{name}]"
        )
    if isinstance(X, pd.DataFrame):
        raise TypeError(
            f"{name} must be a 1-D iterable of str documents, got a DataFrame; "
            f"select the text column, e.g. df['text']"
        )
    if isinstance(X, np.ndarray) and X.ndim != 1:
        raise TypeError(
            f"{name} must be a 1-D iterable of str documents, got an array of shape {X.shape}"
        )
    if isinstance(X, dict):
        raise TypeError(f"{name} must be an iterable of str documents, got a dict")
    try:
        docs = list(X)
    except TypeError:
        raise TypeError(
            f"{name} must be an iterable of str documents, got {type(X).__name__}"
        ) from None
    for i, doc in enumerate(docs):
        if type(doc) is str:  # fast path: the common case costs one type check
            continue
        if isinstance(doc, str):
            docs[i] = str(doc)  # np.str_ and other str subclasses
            continue
        if doc is None:
            raise TypeError(f"{name}[{i + offset}] is None; every document must be a str")
        if doc is pd.NA or doc is pd.NaT or (isinstance(doc, (float, np.floating))
                                             and math.isnan(doc)):
            raise ValueError(
                f"{name}[{i + offset}] is a missing value (NaN); drop or fill missing "
                "documents first"
            )
        if isinstance(doc, (bytes, bytearray)):
            raise TypeError(
                f"{name}[{i + offset}] is bytes; decode it to str first, e.g. "
                "doc.decode('utf-8')"
            )
        raise TypeError(
            f"{name}[{i + offset}] is of type {type(doc).__name__}; every document must be a str"
        )
    return docs


class TextTokenizer:
    """Turn documents into token lists with scikit-learn's conventions.

    Uses :class:`~sklearn.feature_extraction.text.CountVectorizer`'s own preprocessing
    and tokenization, so ``lowercase``, ``token_pattern`` and ``tokenizer`` behave
    exactly as they do for ``TfidfVectorizer``.

    Parameters
    ----------
    lowercase : bool, default=True
    token_pattern : str, default=r"(?u)\\b\\w\\w+\\b"
        Regular expression of a token; ignored when ``tokenizer`` is given.
    tokenizer : callable, default=None
        ``str -> list of str``; overrides ``token_pattern``.

    Examples
    --------
    >>> TextTokenizer()(["Hello, World!", ""])
    [['hello', 'world'], []]
    """

    def __init__(
        self,
        lowercase: bool = True,
        token_pattern: str | None = DEFAULT_TOKEN_PATTERN,
        tokenizer: Callable[[str], list[str]] | None = None,
    ):
        if tokenizer is not None and not callable(tokenizer):
            raise TypeError(f"tokenizer must be callable or None, got {type(tokenizer).__name__}")
        if tokenizer is None and not isinstance(token_pattern, str):
            raise TypeError("token_pattern must be a str when tokenizer is None")
        if tokenizer is None:
            try:
                re.compile(token_pattern)
            except re.error as exc:
                raise ValueError(f"token_pattern {token_pattern!r} is not a valid regular "
                                 f"expression: {exc}") from None
        self._analyze = CountVectorizer(
            lowercase=lowercase,
            token_pattern=token_pattern if tokenizer is None else None,
            tokenizer=tokenizer,
        ).build_analyzer()

    def __call__(self, documents: Sequence[str]) -> list[list[str]]:
        analyze = self._analyze
        return [analyze(doc) for doc in documents]


@dataclass(frozen=True)
class RaggedIds:
    """Token ids of a corpus: ``ids[offsets[i]:offsets[i + 1]]`` are document ``i``'s.

    Attributes
    ----------
    ids : ndarray of shape (n_tokens,), int64
        Token ids; out-of-vocabulary tokens are ``-1`` unless the vocabulary has an
        unknown token.
    offsets : ndarray of shape (n_documents + 1,), int64
    """

    ids: np.ndarray
    offsets: np.ndarray

    @property
    def n_documents(self) -> int:
        return len(self.offsets) - 1

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    def document_index(self) -> np.ndarray:
        """Index of the document each token belongs to, shape (n_tokens,)."""
        return np.repeat(np.arange(self.n_documents), self.lengths)

    def __getitem__(self, i: int) -> np.ndarray:
        return self.ids[self.offsets[i] : self.offsets[i + 1]]

    def drop(self, mask: np.ndarray) -> "RaggedIds":
        """Remove the tokens where ``mask`` is true, keeping document boundaries."""
        keep = ~np.asarray(mask, dtype=bool)
        kept_per_doc = np.bincount(self.document_index()[keep], minlength=self.n_documents)
        offsets = np.zeros(self.n_documents + 1, dtype=np.int64)
        np.cumsum(kept_per_doc, out=offsets[1:])
        return RaggedIds(self.ids[keep], offsets)


class Vocabulary:
    """A frequency-ordered token vocabulary with optional special tokens.

    Build one with :meth:`build`. Ids ``0 .. len(specials) - 1`` are the special
    tokens, in the order given; the other tokens follow by decreasing count, ties
    broken alphabetically so that the same corpus always gives the same ids.

    Parameters
    ----------
    tokens : sequence of str
        All tokens, specials first.
    counts : ndarray of shape (len(tokens),)
        Corpus counts (0 for the special tokens).
    unknown : str or None
        The token that out-of-vocabulary words map to; ``None`` maps them to ``-1``.

    Examples
    --------
    >>> vocab = Vocabulary.build([["a", "b", "a"], ["b", "c"]], min_count=2)
    >>> vocab.tokens
    ['a', 'b']
    >>> vocab.encode([["b", "zzz", "a"]]).ids
    array([ 1, -1,  0])
    """

    def __init__(self, tokens: Sequence[str], counts: np.ndarray, unknown: str | None = None):
        self.tokens = list(tokens)
        self.counts = np.asarray(counts, dtype=np.int64)
        self.unknown = unknown
        self._index = None

    @classmethod
    def build(
        cls,
        token_lists: Iterable[Sequence[str]],
        *,
        min_count: int = 1,
        max_features: int | None = None,
        specials: Sequence[str] = (),
        unknown: str | None = None,
    ) -> "Vocabulary":
        """Count tokens and keep those seen ``min_count`` times, at most ``max_features``.

        ``max_features`` counts ordinary tokens only, not the specials.
        """
        if not isinstance(min_count, Integral) or min_count < 1:
            raise ValueError(f"min_count must be an integer >= 1, got {min_count!r}")
        if max_features is not None and (not isinstance(max_features, Integral) or max_features < 1):
            raise ValueError(f"max_features must be None or an integer >= 1, got {max_features!r}")
        if unknown is not None and unknown not in specials:
            raise ValueError(f"unknown token {unknown!r} must be one of the specials {specials}")
        counter: Counter = Counter()
        for tokens in token_lists:
            counter.update(tokens)
        for special in specials:
            counter.pop(special, None)
        items = [(tok, c) for tok, c in counter.items() if c >= min_count]
        items.sort(key=lambda tc: (-tc[1], tc[0]))
        if max_features is not None:
            items = items[:max_features]
        tokens = list(specials) + [tok for tok, _ in items]
        counts = np.array([0] * len(specials) + [c for _, c in items], dtype=np.int64)
        return cls(tokens, counts, unknown=unknown)

    def __len__(self) -> int:
        return len(self.tokens)

    def __contains__(self, token: str) -> bool:
        return self.index.get_indexer(_objects([token]))[0] >= 0

    @property
    def index(self) -> pd.Index:
        """Hash index of the tokens, built on first use (and not pickled)."""
        if self._index is None:
            self._index = pd.Index(self.tokens, dtype=object)
        return self._index

    @property
    def unknown_id(self) -> int:
        return -1 if self.unknown is None else self.tokens.index(self.unknown)

    def encode(self, token_lists: Sequence[Sequence[str]]) -> RaggedIds:
        """Map every token of every document to its id in one vectorized lookup."""
        lengths = np.fromiter((len(t) for t in token_lists), dtype=np.int64, count=len(token_lists))
        offsets = np.zeros(len(token_lists) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        flat = list(chain.from_iterable(token_lists))
        ids = (self.index.get_indexer(_objects(flat)).astype(np.int64) if flat
               else np.zeros(0, np.int64))
        if self.unknown is not None:
            ids[ids < 0] = self.unknown_id
        return RaggedIds(ids, offsets)

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_index"] = None  # derived; rebuilt lazily after loading
        return state


def _objects(tokens) -> pd.Index:
    """Tokens as an object Index: with pyarrow installed, pandas would otherwise convert
    them to Arrow strings, which cannot hold a lone surrogate (``"\\ud800"``, valid in a
    Python str) and fail deep inside pyarrow."""
    return pd.Index(tokens, dtype=object)


def read_once(X):
    """``X`` as a list of documents if it is a one-shot iterable (an iterator, a
    generator), which a fit followed by a transform would find empty; else ``X`` as it is."""
    try:
        one_shot = iter(X) is X
    except TypeError:
        return X  # validate_documents says what is wrong with it
    return validate_documents(X) if one_shot else X

