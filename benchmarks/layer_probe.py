"""Probe: each biLM layer alone (frozen mix with one weight) against SVDVectorizer, on
the first split of a suite task (the suite's split and seed, default BiLM).

Prints accuracy with LogisticRegression(max_iter=3000) for each layer, the default frozen
mix and the three layers concatenated; writes nothing. A diagnostic
for issue 10 (does pretraining keep what the SVD start of the token layer knows?).
With --train-embedding the biLM's word embedding learns during pretraining
(``freeze_embedding=False``, the default before it kept its SVD start): what does
pretraining a small corpus do to the token layer and to the layers built on it?
With --scales it probes the features' overall scale instead: LogisticRegression's
penalty is fixed (C=1), so multiplying every feature by c acts as C * c**2; the frozen and
trainable mixes' features are scored at several multipliers, at a total variance of 1
(the scale of TF-IDF's unit-norm rows; C=1 and C=10), per-feature standardised, and
(trainable) without its learned gamma, to see how much of a mix's accuracy is its
scale rather than its content.
With --test-texts it asks whether the biLM memorises its training texts, so that the
classifier learns from features of texts the biLM has seen and is scored on features of
texts it has not: a second biLM is pretrained on the training and the test texts (no
labels), and the frozen and trainable mixes of both are scored, next to each biLM's
last-epoch training and held-out perplexity.
With --coverage it counts the vocabulary words that get no SVD start (so keep a random,
frozen vector): the start comes from the training share of the texts (not the
validation texts), the vocabulary from all of them.
With --hybrid it scores make_hybrid (TF-IDF + the frozen mix, LogisticRegression(C=10))
at several weights of the ELMo block, next to TF-IDF alone.
Run: python benchmarks/layer_probe.py {ag_news,r8,cr,mpqa} [--train-embedding] [--scales]
     [--test-texts] [--hybrid] [--coverage]
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
if "--coverage" in sys.argv[2:]:
    from sklearn.utils import check_random_state
    from elmofeat.bilm.batching import SPECIALS
    from elmofeat.bilm.pretrained import corpus_vectors
    # The default fit's own draws: its seed, then the validation split (BiLM.fit).
    probe, random_state = BiLM(random_state=settings.seed), check_random_state(settings.seed)
    random_state.randint(2**31 - 1)
    _, _, start = probe._training_data(split.X_train, random_state)
    without = int(np.isnan(start[len(SPECIALS):]).any(axis=1).sum())
    every_text, _ = corpus_vectors(probe._tokenize(split.X_train), probe.vocabulary_,
                                   len(SPECIALS), probe.embedding_dim, np.random.RandomState(0))
    still = int(np.isnan(every_text[len(SPECIALS):]).any(axis=1).sum())
    print(key, f"vocabulary {len(probe.vocabulary_) - len(SPECIALS)} words; without an SVD "
          f"start (random, frozen): {without} from the training share, {still} from every "
          "text", flush=True)
    sys.exit()
bilm = BiLM(random_state=settings.seed,
            freeze_embedding="--train-embedding" not in sys.argv[2:]).fit(split.X_train)
def acc(vec, C=1.0):
    m = make_pipeline(vec, LogisticRegression(max_iter=3000, C=C)).fit(split.X_train, split.y_train)
    return np.mean(m.predict(split.X_test) == np.asarray(split.y_test))
if "--scales" in sys.argv[2:]:
    from sklearn.preprocessing import StandardScaler
    def scored(train, test, C=1.0):
        clf = LogisticRegression(max_iter=3000, C=C).fit(train, split.y_train)
        return round(float(np.mean(clf.predict(test) == np.asarray(split.y_test))), 4)
    for mix in ("frozen", "trainable"):
        vec = ElmoVectorizer(bilm, layer_mix=mix, cache_dir=None, random_state=0)
        train = vec.fit_transform(split.X_train, split.y_train)
        test = vec.transform(split.X_test)
        rms = float(np.sqrt(np.mean(train ** 2)))
        gamma = float(getattr(vec.mix_, "gamma", 1.0))
        print(key, mix, f"gamma {gamma:.3g}, feature rms {rms:.3g}", flush=True)
        for c in (0.25, 0.5, 1, 2, 4, 8):
            print(key, mix, f"x{c}", scored(c * train, c * test), flush=True)
        # TF-IDF's scale: rows of unit norm have a total variance below 1, for which
        # LogisticRegression's default C is made; the mixes' layers have unit variance
        # per feature, a total variance of about their width.
        unit = 1 / np.sqrt(train.astype(np.float64).var(axis=0).sum())
        print(key, mix, "unit total variance", scored(unit * train, unit * test),
              "C=10:", scored(unit * train, unit * test, C=10), flush=True)
        scaler = StandardScaler().fit(train)
        print(key, mix, "standardised", scored(scaler.transform(train), scaler.transform(test)), flush=True)
        if mix == "trainable":
            print(key, mix, "without gamma", scored(train / gamma, test / gamma), flush=True)
    sys.exit()
if "--hybrid" in sys.argv[2:]:
    from elmofeat import make_hybrid
    from sklearn.feature_extraction.text import TfidfVectorizer
    print(key, "TF-IDF alone (C=10)", round(acc(TfidfVectorizer(sublinear_tf=True), C=10), 4),
          flush=True)
    for weight in (0.05, 0.1, 0.2, 0.35, 0.5, 1.0):
        hybrid = make_hybrid(ElmoVectorizer(bilm, layer_mix="frozen", cache_dir=None,
                                            random_state=0), elmo_weight=weight)
        print(key, f"hybrid, elmo_weight={weight} (C=10)", round(acc(hybrid, C=10), 4), flush=True)
    sys.exit()
if "--test-texts" in sys.argv[2:]:
    both = BiLM(random_state=settings.seed).fit(list(split.X_train) + list(split.X_test))
    for name, model in (("pretrained on training texts", bilm),
                        ("pretrained on training + test texts", both)):
        last = model.history_[-1]
        print(key, name, f"perplexity: training {last['train_perplexity']:.1f}, "
              f"held-out {last['validation_perplexity']:.1f}", flush=True)
        for mix in ("frozen", "trainable"):
            vec = ElmoVectorizer(model, layer_mix=mix, cache_dir=None, random_state=0)
            print(key, name, mix, round(acc(vec), 4), flush=True)
    sys.exit()
print(key, "svd", round(acc(SVDVectorizer(random_state=0)), 4), flush=True)
for w in ([1, 0, 0], [0, 1, 0], [0, 0, 1], None):
    print(key, w, round(acc(ElmoVectorizer(bilm, mix_weights=w, cache_dir=None, random_state=0)), 4), flush=True)
# The three layers side by side (each scaled as the frozen mix scales it): does keeping
# them apart carry more than any mix of them?
from sklearn.pipeline import make_union
one_hot = ([1, 0, 0], [0, 1, 0], [0, 0, 1])
print(key, "concatenated", round(acc(make_union(*[
    ElmoVectorizer(bilm, mix_weights=w, cache_dir=None, random_state=0) for w in one_hot])), 4), flush=True)
