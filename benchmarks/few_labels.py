"""Few labels, many texts: a learning curve on AG News and CR.

For every fold of the suite's splits (the same folds as ``elmofeat benchmark``), every
text of the training part is available unlabelled: the biLM (and SVD) learn from all
of them, and the classifier sees the labels of only 50, 200, 1,000 or all training
documents (a stratified draw, the same for every method). TF-IDF + LR and GloVe mean +
LR get the same labels. Rows:

* TF-IDF + LR, C=1 and C=10 (the labelled documents only: TF-IDF has no use for the rest);
* GloVe 6B 50d mean + LR;
* SVDVectorizer fitted on every training text, LR on the labelled ones;
* ElmoVectorizer, frozen / trainable / mlp, with a biLM pretrained on every training
  text (defaults), LR on the labelled ones;
* the same frozen features with ``SelfTrainingClassifier(LogisticRegression())``, fed
  every training text with ``y = -1`` for the unlabelled ones;
* TF-IDF, SVD and the frozen and trainable mixes followed by ``LogisticRegressionCV``:
  the classifier's C chosen by stratified 3-fold cross-validation on the labelled
  documents alone (a dense feature's scale acts as C, and the C that suits 50 labels
  is not the one that suits 3,800; the other rows keep the library's C=1 or 10);
* a diagnostic: the frozen mix's token layer alone (``mix_weights=(1, 0, 0)``), the
  biLM's word embedding, which starts from (and keeps) the same PPMI + SVD vectors;
* ELMo + GloVe, frozen and trainable mixes: a second biLM pretrained on every training
  text with ``pretrained_vectors=<GloVe 6B 50d>`` (its token layer starts from GloVe).

Writes benchmarks/results/few_labels.{json,md}.
Run: python benchmarks/few_labels.py [--datasets ag_news cr] [--folds 5] [--data-home DIR]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression, LogisticRegressionCV
from sklearn.model_selection import StratifiedKFold, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.semi_supervised import SelfTrainingClassifier
from threadpoolctl import threadpool_limits

from _common import markdown_table, write_results
from elmofeat import BiLM, ElmoVectorizer, SVDVectorizer
from elmofeat import WordVectorsVectorizer
from elmofeat.benchmark import BenchmarkSettings
from elmofeat.benchmark.data import load_dataset
from elmofeat.benchmark.run import load_glove
from elmofeat.datasets import get_data_home

SIZES = (50, 200, 1000, None)  # None: every training label
ROWS = ("tfidf", "tfidf-c10", "tfidf-cv", "glove", "svd", "svd-cv", "elmo-frozen",
        "elmo-trainable", "elmo-mlp", "elmo-frozen-selftraining", "elmo-frozen-cv",
        "elmo-trainable-cv", "elmo-token", "elmo-glove-frozen", "elmo-glove-trainable")
DEFAULT_ELMO = tuple(r for r in ROWS if r.startswith("elmo-") and not r.startswith("elmo-glove")
                     and r != "elmo-token")
GLOVE_ELMO = ("elmo-glove-frozen", "elmo-glove-trainable")
TFIDF_ROWS = ("tfidf", "tfidf-c10", "tfidf-cv")
# C searched on the labelled documents: 1e-3 ... 1e3, three per decade.
CS = np.logspace(-3, 3, 19)
LABELS = {"tfidf": "TF-IDF + LR", "tfidf-c10": "TF-IDF + LR (C=10)", "glove": "GloVe 50d mean",
          "svd": "SVDVectorizer (all texts)", "elmo-frozen": "ELMo frozen (all texts)",
          "elmo-trainable": "ELMo trainable (all texts)", "elmo-mlp": "ELMo MLP (all texts)",
          "elmo-frozen-selftraining": "ELMo frozen + SelfTrainingClassifier (all texts)",
          "tfidf-cv": "TF-IDF + LR (C searched)", "svd-cv": "SVDVectorizer (all texts), C searched",
          "elmo-frozen-cv": "ELMo frozen (all texts), C searched",
          "elmo-trainable-cv": "ELMo trainable (all texts), C searched",
          "elmo-token": "ELMo token layer alone (all texts; diagnostic)",
          "elmo-glove-frozen": "ELMo + GloVe frozen (all texts)",
          "elmo-glove-trainable": "ELMo + GloVe trainable (all texts)"}


def _labelled(y, size, seed):
    """Indices of a stratified draw of ``size`` labelled documents (all if None)."""
    if size is None or size >= len(y):
        return np.arange(len(y))
    chosen, _ = train_test_split(np.arange(len(y)), train_size=size, stratify=y,
                                 random_state=seed)
    return np.sort(chosen)


def _score(model, X_fit, y_fit, X_test, y_test):
    with threadpool_limits(1, user_api="blas"):
        model.fit(X_fit, y_fit)
        return float(np.mean(model.predict(X_test) == y_test))


def _tuned(seed):
    """LogisticRegression whose C is chosen on the labelled documents it is fitted on."""
    return LogisticRegressionCV(Cs=CS, cv=StratifiedKFold(3, shuffle=True, random_state=seed),
                                l1_ratios=(0.0,), scoring="accuracy", max_iter=3000,
                                use_legacy_attributes=False)


def run_split(split, seed, glove):
    X_train, y_train = split.X_train, np.asarray(split.y_train)
    start = time.perf_counter()
    bilm = BiLM(random_state=seed).fit(X_train)  # every training text, no label
    pretrain = time.perf_counter() - start
    glove_bilm = BiLM(random_state=seed, pretrained_vectors=glove).fit(X_train)
    svd = SVDVectorizer(random_state=seed).fit(X_train)
    out = {"pretrain_seconds": pretrain, "scores": {}}
    for size in SIZES:
        chosen = _labelled(y_train, size, seed)
        X_l, y_l = [X_train[i] for i in chosen], y_train[chosen]
        scores = {}
        scores["tfidf"] = _score(make_pipeline(TfidfVectorizer(sublinear_tf=True),
                                               LogisticRegression(max_iter=3000)),
                                 X_l, y_l, split.X_test, split.y_test)
        scores["tfidf-c10"] = _score(make_pipeline(TfidfVectorizer(sublinear_tf=True),
                                                   LogisticRegression(max_iter=3000, C=10)),
                                     X_l, y_l, split.X_test, split.y_test)
        scores["glove"] = _score(make_pipeline(WordVectorsVectorizer(glove),
                                               LogisticRegression(max_iter=3000)),
                                 X_l, y_l, split.X_test, split.y_test)
        # Frozen: fitted on every training text, not refitted on the labelled ones.
        scores["svd"] = _score(make_pipeline(FrozenEstimator(svd), LogisticRegression(max_iter=3000)),
                               X_l, y_l, split.X_test, split.y_test)
        scores["tfidf-cv"] = _score(make_pipeline(TfidfVectorizer(sublinear_tf=True), _tuned(seed)),
                                    X_l, y_l, split.X_test, split.y_test)
        scores["svd-cv"] = _score(make_pipeline(FrozenEstimator(svd), _tuned(seed)),
                                  X_l, y_l, split.X_test, split.y_test)
        for mix in ("frozen", "trainable", "mlp"):
            def vectorizer():
                return ElmoVectorizer(bilm, layer_mix=mix, cache_dir=None, random_state=seed,
                                      cv=min(5, int(np.bincount(y_l).min())) if mix != "frozen" else 5)
            scores[f"elmo-{mix}"] = _score(make_pipeline(vectorizer(), LogisticRegression(max_iter=3000)),
                                           X_l, y_l, split.X_test, split.y_test)
            if mix != "mlp":
                scores[f"elmo-{mix}-cv"] = _score(make_pipeline(vectorizer(), _tuned(seed)),
                                                  X_l, y_l, split.X_test, split.y_test)
        # Diagnostic: the frozen mix's token layer alone (the SVD start of the biLM's
        # word embedding, kept during pretraining) against SVDVectorizer's features.
        token = ElmoVectorizer(bilm, layer_mix="frozen", mix_weights=(1, 0, 0), cache_dir=None)
        scores["elmo-token"] = _score(make_pipeline(token, LogisticRegression(max_iter=3000)),
                                      X_l, y_l, split.X_test, split.y_test)
        for mix in ("frozen", "trainable"):
            vectorizer = ElmoVectorizer(glove_bilm, layer_mix=mix, cache_dir=None, random_state=seed,
                                        cv=min(5, int(np.bincount(y_l).min())) if mix != "frozen" else 5)
            scores[f"elmo-glove-{mix}"] = _score(
                make_pipeline(vectorizer, LogisticRegression(max_iter=3000)),
                X_l, y_l, split.X_test, split.y_test)
        partial = np.full(len(y_train), -1)
        partial[chosen] = y_l
        self_training = make_pipeline(
            ElmoVectorizer(bilm, layer_mix="frozen", cache_dir=None, random_state=seed),
            SelfTrainingClassifier(LogisticRegression(max_iter=3000)))
        scores["elmo-frozen-selftraining"] = _score(self_training, X_train, partial,
                                                    split.X_test, split.y_test)
        label = "all" if size is None else str(size)
        out["scores"][label] = scores
        print(f"  {label} labels: " + ", ".join(f"{k} {v:.3f}" for k, v in scores.items()),
              flush=True)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["ag_news", "cr"], choices=["ag_news", "cr"])
    parser.add_argument("--folds", type=int, default=None,
                        help="folds (default: the suite's, AG News 5 and CR 10)")
    parser.add_argument("--data-home", default=None)
    args = parser.parse_args()
    home = get_data_home(args.data_home)
    settings = BenchmarkSettings(datasets=tuple(args.datasets), folds=args.folds)
    datasets = [load_dataset(key, settings, home) for key in settings.datasets]
    glove = load_glove(home, datasets)
    results, sections = {}, []
    for dataset in datasets:
        splits = []
        for index, split in enumerate(dataset.splits):
            print(f"{dataset.title} {split.name}", flush=True)
            splits.append(run_split(split, settings.seed + index, glove))
        results[dataset.key] = splits
        sizes = list(splits[0]["scores"])
        rows = []
        for row in ROWS:
            cells = []
            for size in sizes:
                values = [s["scores"][size][row] for s in splits]
                cells.append(f"{np.mean(values):.4f} ± {np.std(values):.4f}")
            rows.append([LABELS[row], *cells])
        n_train = len(dataset.splits[0].X_train)
        header = ["method", *[f"{s} labels" if s != "all" else f"all ({n_train:,})" for s in sizes]]
        def best(family, size):
            return max(np.mean([sp["scores"][size][r] for sp in splits]) for r in family)

        def gaps(family):
            return ", ".join(f"{s}: {best(family, s) - best(TFIDF_ROWS, s):+.4f}" for s in sizes)
        sections.append(
            f"#### {dataset.title}\n\n{dataset.protocol}; biLM pretrained on the {n_train:,} "
            f"training texts of each fold, labels drawn from them (stratified, seeded).\n\n"
            + markdown_table(header, rows)
            + f"\n\nBest ELMo row (default biLM) minus the best TF-IDF row, by number of "
            f"labels: {gaps(DEFAULT_ELMO)}; best ELMo + GloVe row minus it: {gaps(GLOVE_ELMO)}. "
            f"biLM pretraining {np.mean([s['pretrain_seconds'] for s in splits]):.0f} s per fold.\n")
    markdown = ("### Accuracy with few labels and many unlabelled texts\n\n"
                "Mean ± std over folds. Every LogisticRegression has max_iter=3000; \"C searched\": "
                "`LogisticRegressionCV`, C from 1e-3 to 1e3 (19 values) by stratified 3-fold "
                "cross-validation on the labelled documents.\n\n"
                + "\n".join(sections))
    write_results("few_labels", {"sizes": [str(s) for s in SIZES], "results": results}, markdown)


if __name__ == "__main__":
    main()
