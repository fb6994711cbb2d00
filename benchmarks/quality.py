"""Feature quality: SVD and skip-gram features + LogisticRegression on AG News and R8.

Rows: SVDVectorizer, SkipGramVectorizer and the anchors TfidfVectorizer and mean-pooled
GloVe 6B 50d, each followed by the same LogisticRegression.

* AG News: the 7,600-row partition (the 120k training file is not on these machines),
  stratified 5-fold cross-validation, the same folds for every row; mean and std.
* R8: its standard train/test split.

Writes benchmarks/results/quality.{json,md}. Needs $ELMOFEAT_DATA (or --data-home).
Run: python benchmarks/quality.py [--folds 5] [--data-home ../shared/data]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from gensim.models import KeyedVectors
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, f1_score
from sklearn.model_selection import StratifiedKFold
from sklearn.pipeline import make_pipeline
from threadpoolctl import threadpool_limits

from _common import markdown_table, write_results
from elmofeat import SkipGramVectorizer, SVDVectorizer
from elmofeat.comparison import PretrainedVectorsVectorizer
from elmofeat.datasets import get_data_home, load_ag_news, load_r8

SEED = 0


def methods(glove):
    return {
        "SVDVectorizer (300d, PPMI)": lambda: SVDVectorizer(random_state=SEED),
        "SkipGramVectorizer (300d, defaults: 5 epochs)": lambda: SkipGramVectorizer(
            random_state=SEED
        ),
        # A 6k-document corpus is small for SGNS: more passes make up for it.
        "SkipGramVectorizer (300d, epochs=20, min_count=2)": lambda: SkipGramVectorizer(
            epochs=20, min_count=2, random_state=SEED
        ),
        "TfidfVectorizer (anchor)": lambda: TfidfVectorizer(sublinear_tf=True),
        "GloVe 6B 50d mean (anchor)": lambda: PretrainedVectorsVectorizer(glove),
    }


def evaluate(make_vectorizer, X_train, y_train, X_test, y_test):
    start = time.perf_counter()
    model = make_pipeline(make_vectorizer(), LogisticRegression(max_iter=3000))
    model.fit(X_train, y_train)
    predicted = model.predict(X_test)
    return {
        "accuracy": accuracy_score(y_test, predicted),
        "macro_f1": f1_score(y_test, predicted, average="macro"),
        "seconds": time.perf_counter() - start,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--data-home", default=None)
    args = parser.parse_args()
    home = get_data_home(args.data_home)
    glove = KeyedVectors.load_word2vec_format(
        str(home / "glove" / "glove.6B.50d.txt.gz"), binary=False, no_header=True
    )
    results = {"ag_news": {}, "r8": {}}
    news = load_ag_news(home, subset="test")
    X, y = np.asarray(news.data, dtype=object), news.target
    folds = list(StratifiedKFold(args.folds, shuffle=True, random_state=SEED).split(X, y))
    r8_train, r8_test = load_r8(home, subset="train"), load_r8(home, subset="test")
    with threadpool_limits(1):  # same BLAS budget for every row
        for name, make in methods(glove).items():
            scores = [
                evaluate(make, list(X[tr]), y[tr], list(X[te]), y[te]) for tr, te in folds
            ]
            results["ag_news"][name] = {
                key: {"mean": float(np.mean([s[key] for s in scores])),
                      "std": float(np.std([s[key] for s in scores])),
                      "folds": [float(s[key]) for s in scores]}
                for key in ("accuracy", "macro_f1", "seconds")
            }
            results["r8"][name] = evaluate(
                make, r8_train.data, r8_train.target, r8_test.data, r8_test.target
            )
            ag = results["ag_news"][name]
            print(f"{name}: AG {ag['accuracy']['mean']:.4f}  R8 {results['r8'][name]['accuracy']:.4f}",
                  flush=True)
    rows = []
    for name in results["ag_news"]:
        ag, r8 = results["ag_news"][name], results["r8"][name]
        rows.append([
            name,
            f"{ag['accuracy']['mean']:.4f} ± {ag['accuracy']['std']:.4f}",
            f"{ag['macro_f1']['mean']:.4f} ± {ag['macro_f1']['std']:.4f}",
            f"{r8['accuracy']:.4f}",
            f"{r8['macro_f1']:.4f}",
            f"{ag['seconds']['mean']:.1f}",
        ])
    markdown = (
        "### Feature quality (+ LogisticRegression)\n\n"
        f"AG News: 7,600-row partition, stratified {args.folds}-fold CV (mean ± std). "
        "R8: standard train/test split.\n\n"
        + markdown_table(
            ["features", "AG News accuracy", "AG News macro-F1", "R8 accuracy", "R8 macro-F1",
             "AG s/fold"],
            rows,
        )
    )
    write_results(
        "quality",
        {"folds": args.folds, "seed": SEED, "classifier": "LogisticRegression(max_iter=3000)",
         "results": results},
        markdown,
    )


if __name__ == "__main__":
    main()
