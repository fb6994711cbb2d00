"""Probe: each biLM layer alone (frozen mix with one weight) against SVDVectorizer, on
the first split of a suite task (the suite's split and seed, default BiLM).

Prints accuracy with LogisticRegression(max_iter=3000) for each layer, the default frozen
mix and the three layers concatenated; writes nothing. A diagnostic
for issue 10 (does pretraining keep what the SVD start of the token layer knows?).
With --freeze-token-layer the word embedding keeps its SVD start during pretraining (a
diagnostic patch, not a BiLM option): does the token layer then carry what SVD does,
and do the mixes built on it beat SVD?
Run: python benchmarks/layer_probe.py {ag_news,r8,cr,mpqa} [--freeze-token-layer]
"""
import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from elmofeat import BiLM, ElmoVectorizer, SVDVectorizer
from elmofeat.benchmark import BenchmarkSettings
from elmofeat.benchmark.data import load_dataset
from elmofeat.datasets import get_data_home
import sys
key = sys.argv[1]
if "--freeze-token-layer" in sys.argv[2:]:
    build = BiLM._build_language_model

    def build_with_frozen_embedding(self, *args, **kwargs):
        lm = build(self, *args, **kwargs)
        lm.encoder.token_layer.embedding.weight.requires_grad_(False)
        return lm

    BiLM._build_language_model = build_with_frozen_embedding
settings = BenchmarkSettings(datasets=(key,))
split = load_dataset(key, settings, get_data_home(None)).splits[0]
bilm = BiLM(random_state=settings.seed).fit(split.X_train)
def acc(vec):
    m = make_pipeline(vec, LogisticRegression(max_iter=3000)).fit(split.X_train, split.y_train)
    return np.mean(m.predict(split.X_test) == np.asarray(split.y_test))
print(key, "svd", round(acc(SVDVectorizer(random_state=0)), 4), flush=True)
for w in ([1, 0, 0], [0, 1, 0], [0, 0, 1], None):
    print(key, w, round(acc(ElmoVectorizer(bilm, mix_weights=w, cache_dir=None, random_state=0)), 4), flush=True)
# The three layers side by side (each scaled as the frozen mix scales it): does keeping
# them apart carry more than any mix of them?
from sklearn.pipeline import make_union
one_hot = ([1, 0, 0], [0, 1, 0], [0, 0, 1])
print(key, "concatenated", round(acc(make_union(*[
    ElmoVectorizer(bilm, mix_weights=w, cache_dir=None, random_state=0) for w in one_hot])), 4), flush=True)
