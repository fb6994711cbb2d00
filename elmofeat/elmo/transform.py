"""How ElmoVectorizer.transform keeps memory bounded, whatever the corpus.

Documents are transformed ``CHUNK`` at a time, grouped so that at most about
``TOKEN_BUDGET`` tokens' layer representations are held at once (about 100 MB with the
default biLM); a longer document is read in pieces of whole windows and pooled as it
goes. With several joblib workers, each transforms a part of the documents with its
share of the machine's threads.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from threadpoolctl import threadpool_limits

from ..runtime.parallel import worker_thread_budget
from ..runtime.threads import ThreadPolicy, usable_threads

CHUNK = 512
TOKEN_BUDGET = 16_384


def chunks(documents, size):
    return [documents[start : start + size] for start in range(0, len(documents), size)]


def transform_part(bilm, mix, pooling, documents, n_parts, batch_size, n_threads=None):
    """Features of one of ``n_parts`` parts of the documents, in a worker whose thread
    budget (unless ``n_threads`` fixes it) is counted on the machine it runs on."""
    if not isinstance(n_threads, Integral):  # None or "auto": this machine's share
        n_threads = worker_thread_budget(n_parts)
    with ThreadPolicy(n_threads).applied() as threads, \
            threadpool_limits(usable_threads(n_threads)):
        return np.concatenate([
            document_features(bilm, mix, pooling, chunk,
                              lambda docs, tokens: bilm.embed_tokens(tokens, batch_size,
                                                                     threads=threads),
                              batch_size, threads)
            for chunk in chunks(documents, CHUNK)
        ])


def document_features(bilm, mix, pooling, documents, layers_of, batch_size=None,
                      threads=None) -> np.ndarray:
    """Features of a chunk of documents with at most about ``TOKEN_BUDGET`` tokens' layers
    in memory at once: documents are grouped up to that many tokens, and a document longer
    than that is read in pieces of whole windows and pooled as it goes.

    ``layers_of(documents, token_lists) -> (layers, offsets)`` computes (or looks up)
    representations; the documents are tokenized once, here.
    """
    out, group, group_tokens = [], [], 0

    def flush():
        if group:
            docs, tokens = zip(*group)
            out.append(mix.pool(*layers_of(list(docs), list(tokens)), pooling))
            group.clear()

    for document, tokens in zip(documents, bilm.tokenize(documents)):
        if len(tokens) > TOKEN_BUDGET:
            flush()
            group_tokens = 0
            out.append(_stream_document(bilm, mix, pooling, tokens, batch_size, threads)[None, :])
            continue
        if group_tokens + len(tokens) > TOKEN_BUDGET:
            flush()
            group_tokens = 0
        group.append((document, tokens))
        group_tokens += len(tokens)
    flush()
    return np.concatenate(out) if out else np.zeros((0, 0), np.float32)


def _stream_document(bilm, mix, pooling, tokens, batch_size=None, threads=None) -> np.ndarray:
    """Features of one long document, its layers computed a piece of whole windows at a
    time (windows are independent, so the pieces give the same layers as the whole)."""
    piece = max(1, TOKEN_BUDGET // bilm.max_len) * bilm.max_len
    pieces = (bilm.embed_tokens([tokens[start : start + piece]], batch_size, threads=threads)[0]
              for start in range(0, len(tokens), piece))
    return mix.pool_stream(pieces, pooling)
