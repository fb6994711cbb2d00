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
