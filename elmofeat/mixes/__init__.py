"""Layer mixes: how :class:`~elmofeat.ElmoVectorizer` turns a token's biLM layers into
one vector.

One concept, one package:

* :mod:`~elmofeat.mixes.registry`: :class:`MixSpec` and the registry, the only place a
  mix is declared (the lines below); ``ElmoVectorizer(layer_mix=...)``, the suite's ELMo
  rows and the types :func:`elmofeat.load` trusts come from it;
* :mod:`~elmofeat.mixes.base`: the fitted mix's interface (:class:`~elmofeat.mixes.base.FittedMix`:
  ``n_features``, ``apply``, ``pool``), the data and settings a mix is fitted with;
* :mod:`~elmofeat.mixes.head`: the training loop of a mix learned from labels, which
  knows no concrete mix;
* one module per family: :mod:`~elmofeat.mixes.scalar` (fixed or learned scalar
  weights), :mod:`~elmofeat.mixes.concat` (the layers side by side),
  :mod:`~elmofeat.mixes.mlp` (the MLP with its alignment).

A new mix is a module with a ``fit(data, docs, settings) -> FittedMix`` and one
:func:`register` call. Importing this package loads no torch, scikit-learn or SciPy.
"""

from .registry import MixSpec, get_mix, mix_names, register, trusted_type_names, unregister

register(MixSpec(
    "trainable", "trainable", fit="elmofeat.mixes.scalar:fit_trainable",
    fitted_types=("elmofeat.mixes.scalar.LinearMix",), learning_rate=0.01,
    commutes_with_mean_pooling=True, parameters=("cv", "mix_epochs", "mix_learning_rate",
                                                 "mix_batch_size"),
    description="ELMo's gamma * sum_j softmax(s)_j h_j, s and gamma learned from labels"))
register(MixSpec(
    "frozen", "frozen", fit="elmofeat.mixes.scalar:fit_frozen",
    fitted_types=("elmofeat.mixes.scalar.LinearMix",), needs_labels=False,
    parameters=("mix_weights",),
    description="sum_j w_j h_j with fixed weights (mix_weights), no labels needed"))
register(MixSpec(
    "concat", "concatenated", fit="elmofeat.mixes.concat:fit_concat",
    fitted_types=("elmofeat.mixes.concat.ConcatMix",), needs_labels=False,
    commutes_with_mean_pooling=True, parameters=("mix_weights",),
    description="[w_0 h_0; w_1 h_1; w_2 h_2]: the frozen mix's terms side by side, "
                "no labels needed"))
# A learning rate of 0.01 loses most of the wide layer's ReLU units on small training
# sets (its features then collapse).
register(MixSpec(
    "mlp", "MLP", fit="elmofeat.mixes.mlp:fit_mlp", fitted_types=("elmofeat.mixes.mlp.ReluMix",),
    learning_rate=0.001, parameters=("cv", "mlp_dim", "mix_epochs", "mix_learning_rate",
                                     "mix_batch_size"),
    description="relu(W [h_0; h_1; h_2] + b), mlp_dim wide, learned from labels"))

#: ``ElmoVectorizer``'s ``layer_mix`` by default. On the development suite, with the
#: shipped en-small model, the concatenated mix scored above the frozen mix on the two
#: sentence tasks and level with it on the two topic tasks (``elmofeat benchmark``; the
#: paired differences are in docs/choosing_features.md), and it needs no labels either.
DEFAULT_LAYER_MIX = "concat"

__all__ = ["DEFAULT_LAYER_MIX", "MixSpec", "get_mix", "mix_names", "register",
           "trusted_type_names", "unregister"]
