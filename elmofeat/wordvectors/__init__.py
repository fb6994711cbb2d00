"""Static word vectors: one vector per word, pooled into document features.

* :mod:`~elmofeat.wordvectors.base`: what the three vectorizers share
  (:class:`~elmofeat.wordvectors.base.BaseWordVectorizer`: ``keyed_vectors_``, lookup,
  pooling);
* :mod:`~elmofeat.wordvectors.svd`: :class:`~elmofeat.SVDVectorizer` (co-occurrence,
  PPMI, randomized SVD) and :func:`~elmofeat.wordvectors.svd.svd_word_vectors`;
* :mod:`~elmofeat.wordvectors.skipgram`: :class:`~elmofeat.SkipGramVectorizer` (gensim);
* :mod:`~elmofeat.wordvectors.pretrained`: :class:`~elmofeat.WordVectorsVectorizer`,
  pooled existing vectors (GloVe, word2vec, fastText text files, ``KeyedVectors``);
* :mod:`~elmofeat.wordvectors.io`: reading a vectors file
  (:func:`~elmofeat.wordvectors.io.load_word_vectors`), which the biLM's word layer
  uses too.

This package imports nothing of :mod:`elmofeat.bilm`; the biLM imports from here.
"""

from .._lazy import lazy_attributes

_EXPORTS = {
    "BaseWordVectorizer": ".base",
    "SVDVectorizer": ".svd",
    "SkipGramVectorizer": ".skipgram",
    "WordVectorsVectorizer": ".pretrained",
    "load_word_vectors": ".io",
    "svd_word_vectors": ".svd",
}
__getattr__, __dir__ = lazy_attributes(__name__, _EXPORTS, globals())

__all__ = sorted(_EXPORTS)
