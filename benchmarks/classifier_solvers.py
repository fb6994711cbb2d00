"""The suite's C search on ELMo features: lbfgs on the features as they are, on centred
features, and newton-cholesky.

The suite's rows on a biLM pretrained on the split (``elmo-*``) spent far longer in
their C search than the same mix on the shipped model (``general-*``): on MPQA the
concatenated mix took 91.6 s a split against 6.6 (docs/report). This measures why and what
would change it, on the first suite split of each task (``--tasks``): the default,
concatenated features of ``en-base`` and of ``BiLM(random_state=0)`` pretrained on the
split's training texts (the suite's ``elmo-concat`` row), each searched by
``elmofeat.suite.methods.classifier`` (lbfgs) on the features as they are, the same on
the features minus their training mean (what the suite runs since this measurement,
``elmofeat.suite.centring``; the model is the same: the intercept is not penalised, so
centring changes only the problem's conditioning),
and with ``solver="newton-cholesky"`` (a second-order solver, whose iterations do not
grow with the conditioning): seconds, the most iterations any fit of the search took,
the C chosen and the test accuracy; and the features' spread (the smallest and largest
per-feature standard deviation) and the norm of their mean.

Writes benchmarks/results/classifier_solvers.{json,md}.
Run: python benchmarks/classifier_solvers.py [--tasks cr mpqa ag_news] [--data-home DIR]
"""

from __future__ import annotations

import argparse
import time

# first: the command's process settings (_common) apply before torch loads
from _common import markdown_table, write_results

import numpy as np

from elmofeat import BiLM, ElmoVectorizer
from elmofeat.datasets import get_data_home
from elmofeat.suite.centring import CentreDense
from elmofeat.suite.data import load_dataset
from elmofeat.suite.methods import classifier
from elmofeat.suite.settings import BenchmarkSettings

SOLVERS = ("lbfgs", "lbfgs, centred", "newton-cholesky")


def search(train, y_train, test, y_test, solver) -> dict:
    model = classifier(None, seed=0).set_params(solver=solver.split(",")[0])
    if solver.endswith("centred"):  # what the suite's pipeline does before the classifier
        centre = CentreDense().fit(train)
        train, test = centre.transform(train), centre.transform(test)
    start = time.perf_counter()
    model.fit(train, y_train)
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "max_iterations": int(np.max(model.n_iter_)),
            "C": float(np.ravel(model.C_)[0]),
            "accuracy": float(np.mean(model.predict(test) == y_test))}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", nargs="+", default=["cr", "mpqa", "ag_news"])
    parser.add_argument("--data-home", default=None)
    args = parser.parse_args()
    home = get_data_home(args.data_home)
    settings = BenchmarkSettings()
    payload, rows = {}, []
    for task in args.tasks:
        split = load_dataset(task, settings, home).splits[0]
        payload[task] = {}
        for source in ("en-base", "pretrained on the split"):
            bilm = "en-base" if source == "en-base" else BiLM(random_state=0).fit(split.X_train)
            vectorizer = ElmoVectorizer(bilm, cache_dir=None, random_state=0)
            train = vectorizer.fit_transform(split.X_train)
            test = vectorizer.transform(split.X_test)
            spread = train.std(0)
            entry = {"features": int(train.shape[1]), "train": len(split.X_train),
                     "std_min": float(spread.min()), "std_max": float(spread.max()),
                     "mean_norm": float(np.linalg.norm(train.mean(axis=0)))}
            for solver in SOLVERS:
                entry[solver] = search(train, split.y_train, test, split.y_test, solver)
                print(task, source, solver, entry[solver], flush=True)
                rows.append([task, source, f"{entry['std_min']:.3f} - {entry['std_max']:.2f}",
                             f"{entry['mean_norm']:.1f}",
                             solver, f"{entry[solver]['seconds']:.1f}",
                             entry[solver]["max_iterations"], f"{entry[solver]['C']:g}",
                             f"{entry[solver]['accuracy']:.4f}"])
            payload[task][source] = entry
    markdown = (
        "## The suite's C search on ELMo features: lbfgs, centred features, newton-cholesky\n\n"
        "`elmofeat.suite.methods.classifier` (`LogisticRegressionCV` over C in 0.03 .. 10, "
        "stratified 3-fold, folds in parallel) on the default, concatenated features of "
        "each task's first suite split, from `en-base` and from `BiLM(random_state=0)` "
        "pretrained on the split's training texts; lbfgs is the suite's solver, \"centred\": "
        "on the features minus their training mean (the same model). Iterations: the most "
        "any fit of the search took.\n\n"
        + markdown_table(["task", "biLM", "feature std (min - max)", "norm of the mean",
                          "solver", "seconds",
                          "iterations", "C chosen", "test accuracy"], rows) + "\n")
    write_results("classifier_solvers", {"tasks": payload}, markdown)


if __name__ == "__main__":
    main()
