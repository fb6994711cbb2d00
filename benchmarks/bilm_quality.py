"""biLM quality: held-out perplexity on AG News and R8 for each token layer.

Default-size BiLMs (embedding = hidden = 256, 2 layers per direction) with the token
layers "word", "word" initialised from GloVe 6B 50d (projected to 256), and "char".
AG News: the 7,600-row partition, a seeded 10% of the documents held out. R8: trained
on its training split, scored on its test split. The output vocabulary (words seen
twice in the training texts) is the same for the three token layers of a dataset, so
their perplexities are comparable.

Writes benchmarks/results/bilm_quality.{json,md}.
Rows already in the JSON are kept, so a run can be split, e.g. --layers char.
Run: python benchmarks/bilm_quality.py [--max-epochs 5] [--layers word glove char]
     [--datasets ag_news r8] [--data-home DIR]
"""

from __future__ import annotations

import argparse
import json
import time

# first: the command's process settings (_common) apply before torch loads
from _common import RESULTS, markdown_table, write_results

import numpy as np

from elmofeat import BiLM
from elmofeat.datasets import get_data_home, load_ag_news, load_r8


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-epochs", type=int, default=5)
    parser.add_argument("--layers", nargs="+", default=["word", "glove", "char"])
    parser.add_argument("--datasets", nargs="+", default=["ag_news", "r8"])
    parser.add_argument("--data-home", default=None)
    args = parser.parse_args()
    home = get_data_home(args.data_home)
    glove = str(home / "glove" / "glove.6B.50d.txt.gz")
    news = load_ag_news(home, subset="test").data
    held_out = np.random.default_rng(0).permutation(len(news))[: len(news) // 10]
    mask = np.zeros(len(news), dtype=bool)
    mask[held_out] = True
    datasets = {
        "AG News": ([t for t, m in zip(news, mask) if not m], [t for t, m in zip(news, mask) if m]),
        "R8": (load_r8(home, subset="train").data, load_r8(home, subset="test").data),
    }
    datasets = {k: v for k, v in datasets.items()
                if {"AG News": "ag_news", "R8": "r8"}[k] in args.datasets}
    layers = {
        "word": ("word", dict(token_layer="word")),
        "word + GloVe 50d": ("glove", dict(token_layer="word", pretrained_vectors=glove)),
        "char CNN": ("char", dict(token_layer="char")),
    }
    layers = {name: params for name, (key, params) in layers.items() if key in args.layers}
    previous = RESULTS / "bilm_quality.json"
    results = json.loads(previous.read_text())["results"] if previous.is_file() else {}
    for dataset, (train, test) in datasets.items():
        for name, params in layers.items():
            start = time.perf_counter()
            bilm = BiLM(max_epochs=args.max_epochs, random_state=0, **params).fit(train)
            seconds = time.perf_counter() - start
            results[f"{dataset} / {name}"] = {
                "dataset": dataset, "token_layer": name, "perplexity": bilm.perplexity(test),
                "epochs": bilm.n_epochs_, "fit_seconds": seconds, "history": bilm.history_,
                "vocabulary": len(bilm.vocabulary_),
            }
            print(dataset, name, results[f"{dataset} / {name}"]["perplexity"], seconds, flush=True)
            _write(args, results)


def _write(args, results):
    order = [f"{d} / {n}" for d in ("AG News", "R8") for n in ("word", "word + GloVe 50d", "char CNN")]
    results = {k: results[k] for k in order if k in results}
    rows = [[r["dataset"], r["token_layer"], f"{r['perplexity']:.1f}", r["epochs"],
             f"{r['vocabulary']:,}", f"{r['fit_seconds'] / 60:.1f}"] for r in results.values()]
    markdown = (
        "### biLM held-out perplexity by token layer\n\n"
        f"Default BiLM (256/256, adaptive softmax, bf16), at most {args.max_epochs} epochs with "
        "early stopping on a 5% validation split. AG News: 10% of the 7,600-row partition held "
        "out; R8: train -> test.\n\n"
        + markdown_table(["dataset", "token layer", "held-out perplexity", "epochs",
                          "vocabulary", "fit minutes"], rows)
    )
    write_results("bilm_quality", {"max_epochs": args.max_epochs, "results": results}, markdown)


if __name__ == "__main__":
    main()
