"""The names of the suite's datasets and methods: plain data, importable without the
estimators (the command line lists them in ``--help``)."""

DATASETS = ("ag_news", "r8", "cr", "mpqa")
# The methods, in report order (each is defined in methods.py).
METHOD_NAMES = (
    "tfidf", "tfidf-c10", "glove", "svd", "skipgram",
    "elmo-trainable", "elmo-frozen", "elmo-mlp", "elmo-frozen-unscaled", "elmo-trainable-unscaled",
    "elmo-glove-trainable", "elmo-glove-frozen", "elmo-glove-mlp", "elmo-glove-frozen-unscaled",
    "hybrid", "hybrid-search",
    "general-trainable", "general-frozen", "general-mlp", "general-adapted",
    "general-hybrid", "general-hybrid-search",
)
# Names that select several methods on the command line.
ALIASES = {
    "elmo": ("elmo-trainable", "elmo-frozen", "elmo-mlp"),
    "elmo-glove": ("elmo-glove-trainable", "elmo-glove-frozen", "elmo-glove-mlp"),
    "anchors": ("tfidf", "tfidf-c10", "glove"),
    "general": ("general-trainable", "general-frozen", "general-mlp", "general-adapted",
                "general-hybrid", "general-hybrid-search"),
}

# What the suite runs unless told otherwise: every method but the ablations of the
# layer scaling and the from-scratch ELMo + GloVe rows, whose per-split GloVe biLM and
# MLP mix took 46 of the 117 minutes of the last full run; the general model
# (en-small), which reads GloVe's vectors too, took their place, and keeps the suite
# within 2 hours. Name them (--methods elmo-glove ...) to run them.
DEFAULT_METHODS = tuple(m for m in METHOD_NAMES
                        if not m.startswith("elmo-glove") and not m.endswith("-unscaled"))
