"""The suite's classifier: how long its search for C takes, in parallel folds or not.

Every row of ``elmofeat benchmark`` ends with ``elmofeat.suite.methods.classifier``:
``LogisticRegressionCV`` choosing C among six values by stratified 3-fold CV. Its
folds run in worker processes with one BLAS thread each; this times that against the
same search in one process (``n_jobs=1``, BLAS with the process's threads), on the
default ``ElmoVectorizer("en-small")`` features of the first suite split of each task
(``--tasks``), the two taken in turn for ``--rounds`` rounds (median, range), with the
C each chose and its test accuracy.

Writes benchmarks/results/classifier_speed.{json,md}.
Run: python benchmarks/classifier_speed.py [--tasks cr ag_news] [--rounds 2]
"""

from __future__ import annotations

import argparse
import time

# first: the command's process settings (_common) apply before torch loads
from _common import markdown_table, write_results

import numpy as np

from elmofeat import ElmoVectorizer
from elmofeat.datasets import get_data_home
from elmofeat.suite.data import load_dataset
from elmofeat.suite.methods import classifier
from elmofeat.suite.settings import BenchmarkSettings


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", nargs="+", default=["cr", "ag_news"])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--data-home", default=None)
    args = parser.parse_args()
    home = get_data_home(args.data_home)
    settings = BenchmarkSettings(folds=5)
    rows, payload = [], {}
    for task in args.tasks:
        split = load_dataset(task, settings, home).splits[0]
        vectorizer = ElmoVectorizer("en-small", cache_dir=None, random_state=0)
        train = vectorizer.fit_transform(split.X_train)
        test = vectorizer.transform(split.X_test)
        runs = {"parallel folds": [], "one process": []}
        for _ in range(args.rounds):
            for name in runs:
                model = classifier(None, seed=0)
                if name == "one process":
                    model.set_params(n_jobs=1)
                start = time.perf_counter()
                model.fit(train, split.y_train)
                runs[name].append({"seconds": time.perf_counter() - start,
                                   "C": float(np.ravel(model.C_)[0]),
                                   "accuracy": float(np.mean(model.predict(test) == split.y_test))})
                print(task, name, runs[name][-1], flush=True)
        payload[task] = {"train": len(split.X_train), "features": int(train.shape[1]), **runs}
        serial = np.median([r["seconds"] for r in runs["one process"]])
        for name, results in runs.items():
            seconds = [r["seconds"] for r in results]
            rows.append([task, f"{len(split.X_train):,}", name,
                         f"{np.median(seconds):.1f} ({min(seconds):.1f}-{max(seconds):.1f})",
                         f"{serial / np.median(seconds):.1f}x", f"{results[-1]['C']:g}",
                         f"{results[-1]['accuracy']:.4f}"])
    markdown = (
        "## The suite's classifier: C searched in parallel folds or in one process\n\n"
        "`LogisticRegressionCV` over C in 0.03 .. 10 (stratified 3-fold) on the default "
        f"`ElmoVectorizer(\"en-small\")` features of each task's first suite split; median of "
        f"{args.rounds} rounds taken in turn (range).\n\n"
        + markdown_table(["task", "training documents", "search", "seconds", "speed-up",
                          "C chosen", "test accuracy"], rows))
    write_results("classifier_speed", {"tasks": payload}, markdown)
    print(markdown)


if __name__ == "__main__":
    main()
