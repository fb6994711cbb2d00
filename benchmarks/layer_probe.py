"""Probe: each biLM layer alone (frozen mix with one weight) against SVDVectorizer, on
the first split of a suite task (the suite's split and seed, default BiLM).

Prints accuracy with LogisticRegression(max_iter=3000) for each layer, the default frozen
mix and the three layers concatenated; writes nothing. A diagnostic
for issue 10 (does pretraining keep what the SVD start of the token layer knows?).
With --train-embedding the biLM's word embedding learns during pretraining
(``freeze_embedding=False``, the default before it kept its SVD start): what does
pretraining a small corpus do to the token layer and to the layers built on it?
Run: python benchmarks/layer_probe.py {ag_news,r8,cr,mpqa} [--train-embedding]
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
settings = BenchmarkSettings(datasets=(key,))
split = load_dataset(key, settings, get_data_home(None)).splits[0]
bilm = BiLM(random_state=settings.seed,
            freeze_embedding="--train-embedding" not in sys.argv[2:]).fit(split.X_train)
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
