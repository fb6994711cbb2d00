"""The ELMo-style bidirectional language model (torch).

``BiLM`` is the public, scikit-learn-style entry point; the modules below are its parts:
``token_layers`` (word embedding, character CNN), ``highway``, ``model`` (LSTM stacks),
``softmax`` (adaptive / sampled / full), ``batching``, ``train`` (the pretraining engine),
``pretrained`` (initial word vectors) and ``io`` (safe persistence).
"""

from .estimator import BiLM

__all__ = ["BiLM"]
