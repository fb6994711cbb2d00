"""The contextual bag on a biLM pretrained on the task's own training texts.

``ElmoVectorizer(bag_size=2000)`` (the default since issue 53) was chosen on the shipped
``en-base``'s representations (``long_documents.py``). The suite's reference rows pass a
``BiLM()`` pretrained on each split's training texts instead, a few thousand documents.
This script scores that case: per split one ``BiLM(random_state=0)`` fitted on the
training texts, then ``ElmoVectorizer(bilm, layer_mix=mix, bag_size=...)`` for the
concatenated (default) and frozen mixes, without the bag, with it, and with the bag as it
was before its layer weights (``-unweighted``: the layers as they come, not each divided
by its spread; this script reproduces it by calling ``bag.fit_bag`` without the
weights), each followed by the suite's classifier (``elmofeat.suite.methods.classifier``:
C searched by inner 3-fold CV).

Splits: the suite's (``elmofeat benchmark``'s) first fold of AG News, R8's standard split,
the five folds of CR and of MPQA, and 20 Newsgroups' suite sample. The fitted biLMs and
each finished split are kept under ``--work`` (default ``~/elmofeat-work/bag_own_bilm``)
so that a stopped run continues where it stopped; a row missing from a stored split is
scored and added to it.

The stored rows were scored when the bag's weighted row length was a BLAS product; it is
a sum per row since (the same method, whose rounding may draw another codebook).

Writes benchmarks/results/bag_own_bilm.{json,md}.
Run: python benchmarks/bag_own_bilm.py [--data-home DIR] [--work DIR]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from _common import markdown_table, write_results
from card_facts import paired_cell

import joblib
import numpy as np

from elmofeat import BiLM, ElmoVectorizer
from elmofeat.elmo import bag as _bag
from elmofeat.datasets import get_data_home
from elmofeat.suite import BenchmarkSettings
from elmofeat.suite.data import load_dataset
from elmofeat.suite.methods import classifier

#: task -> the suite's splits scored (None: all of them)
SPLITS = {"ag_news": 1, "r8": None, "cr": None, "mpqa": None, "20ng": None}
MIXES = ("concat", "frozen")
#: The C grid of the stored rows: the suite's when they were scored (0.001, 0.003 and
#: 100 joined it since), pinned so that resumed splits stay comparable.
PENALTIES = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0)
#: (bag_size, the bag's layers weighted as the library weighs them)
BAGS = ((None, True), (2000, True), (2000, False))


def row_name(mix: str, bag) -> str:
    size, weighted = bag
    return f"{mix}" + ("" if size is None else f"+bag{size}" + ("" if weighted else "-unweighted"))


def fit_unweighted(layers, offsets, *args, layer_weights=None, **kwargs):
    """``bag.fit_bag`` as it was before the layer weights."""
    return FIT_BAG(layers, offsets, *args, **kwargs)


FIT_BAG = _bag.fit_bag


def score_split(split, bilm, scores: dict) -> dict:
    """Accuracy, chosen C and seconds of every row on one split missing from ``scores``."""
    from sklearn.pipeline import make_pipeline

    from elmofeat.suite.centring import CentreDense

    for mix in MIXES:
        for bag in BAGS:
            if row_name(mix, bag) in scores:
                continue
            begin = time.perf_counter()
            _bag.fit_bag = FIT_BAG if bag[1] else fit_unweighted
            try:
                model = make_pipeline(
                    ElmoVectorizer(bilm, layer_mix=mix, cache_dir=None, random_state=0,
                                   bag_size=bag[0]),
                    CentreDense(), classifier(None, seed=0).set_params(Cs=list(PENALTIES)),
                ).fit(split.X_train, split.y_train)
            finally:
                _bag.fit_bag = FIT_BAG
            accuracy = float(np.mean(model.predict(split.X_test) == split.y_test))
            scores[row_name(mix, bag)] = {
                "accuracy": accuracy, "C": float(np.ravel(model[-1].C_)[0]),
                "seconds": time.perf_counter() - begin}
            print(f"    {row_name(mix, bag)}: {accuracy:.4f}", flush=True)
    return scores


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-home", default=None)
    parser.add_argument("--work", default=str(Path.home() / "elmofeat-work" / "bag_own_bilm"))
    args = parser.parse_args()
    home, work = Path(get_data_home(args.data_home)), Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    settings = BenchmarkSettings()
    splits_done = {}
    for task, n_splits in SPLITS.items():
        splits = load_dataset(task, settings, home).splits[:n_splits]
        for index, split in enumerate(splits):
            stored = work / f"{task}-{index}.json"
            entry = json.loads(stored.read_text()) if stored.exists() else {"scores": {}}
            if all(row_name(m, b) in entry["scores"] for m in MIXES for b in BAGS):
                splits_done.setdefault(task, []).append(entry)
                continue
            print(f"{task} split {index + 1}/{len(splits)}", flush=True)
            cached = work / f"{task}-{index}-bilm.joblib"
            begin = time.perf_counter()
            if cached.exists():
                bilm = joblib.load(cached)
            else:
                bilm = BiLM(random_state=0).fit(split.X_train)
                joblib.dump(bilm, cached)
            entry.setdefault("bilm_seconds", time.perf_counter() - begin)
            entry.update(train=len(split.X_train), test=len(split.X_test),
                         scores=score_split(split, bilm, entry["scores"]))
            stored.write_text(json.dumps(entry))
            splits_done.setdefault(task, []).append(entry)

    tasks = list(splits_done)
    rows = {name: {"scores": {task: {
        "splits": [s["scores"][name]["accuracy"] for s in splits_done[task]],
        "C": [s["scores"][name]["C"] for s in splits_done[task]]} for task in tasks}}
        for name in (row_name(m, b) for m in MIXES for b in BAGS)}
    for row in rows.values():
        for score in row["scores"].values():
            score["mean"] = float(np.mean(score["splits"]))
    table = [[name, *(f"{row['scores'][t]['mean']:.4f}" for t in tasks)]
             for name, row in rows.items()]
    paired = [[f"{row_name(m, b)} minus {m}",
               *(paired_cell(rows[row_name(m, b)], rows[m], t) for t in tasks)]
              for m in MIXES for b in BAGS if b[0] is not None]
    chosen = [[name, *(", ".join(f"{c:g}" for c in row["scores"][t]["C"]) for t in tasks)]
              for name, row in rows.items()]
    counts = ", ".join(f"{t}: {len(splits_done[t])}" for t in tasks)
    markdown = (
        "## The contextual bag on a biLM pretrained on the task's own texts\n\n"
        "Per split one `BiLM(random_state=0)` fitted on its training texts, then "
        "`ElmoVectorizer(bilm, layer_mix=mix, bag_size=...)`, the suite's centring and "
        "`LogisticRegressionCV` (C from "
        f"{', '.join(f'{c:g}' for c in PENALTIES)} by inner 3-fold CV). The suite's splits "
        f"(splits per task: {counts}; AG News: its first fold).\n\n"
        + markdown_table(["row", *tasks], table)
        + "\n\nWith the bag minus without, same splits, in points: mean ± std of the "
        "differences (ddof=1) and the splits above.\n\n"
        + markdown_table(["rows", *tasks], paired)
        + "\n\nC chosen per split:\n\n" + markdown_table(["row", *tasks], chosen) + "\n")
    write_results("bag_own_bilm", {"rows": rows, "splits": splits_done,
                                   "penalties": list(PENALTIES)}, markdown)


if __name__ == "__main__":
    main()
