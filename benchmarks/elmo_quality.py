"""ElmoVectorizer feature quality: the three layer mixes + LogisticRegression.

AG News (the 7,600-row partition, stratified 5-fold CV, the biLM pretrained on the
training folds only) and R8 (standard split). One biLM per training set, shared by
the three mixes (as a fitted ``bilm``). Rows of the other feature extractors are read
from benchmarks/results/quality.json (run benchmarks/quality.py first; same folds).

Writes benchmarks/results/elmo_quality.{json,md}.
Run: python benchmarks/elmo_quality.py [--epochs 5] [--mix-epochs 5] [--glove] [--pooling mean]
     [--folds 5] [--datasets ag_news r8]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, f1_score
from sklearn.model_selection import StratifiedKFold
from sklearn.pipeline import make_pipeline
from threadpoolctl import threadpool_limits

from _common import RESULTS, markdown_table, write_results
from elmofeat import BiLM, ElmoVectorizer
from elmofeat.datasets import get_data_home, load_ag_news, load_r8

SEED = 0
MIXES = ("mlp", "trainable", "frozen")


def bilm_params(args, home):
    params = dict(embedding_dim=args.dim, hidden_dim=args.dim, max_epochs=args.epochs,
                  token_layer=args.token_layer, random_state=SEED)
    if args.glove:
        params["pretrained_vectors"] = str(home / "glove" / "glove.6B.50d.txt.gz")
    return params


def evaluate_mixes(bilm, X_train, y_train, X_test, y_test, pooling, mix_epochs):
    out = {}
    for mix in MIXES:
        start = time.perf_counter()
        vectorizer = ElmoVectorizer(bilm, layer_mix=mix, pooling=pooling, random_state=SEED,
                                    mix_epochs=mix_epochs, cache_dir=None)
        model = make_pipeline(vectorizer, LogisticRegression(max_iter=3000))
        with threadpool_limits(1, user_api="blas"):
            model.fit(X_train, y_train)
            predicted = model.predict(X_test)
        out[mix] = {"accuracy": accuracy_score(y_test, predicted),
                    "macro_f1": f1_score(y_test, predicted, average="macro"),
                    "seconds": time.perf_counter() - start,
                    "layer_weights": None if vectorizer.layer_weights_ is None
                    else vectorizer.layer_weights_.tolist()}
        print(f"  {mix}: accuracy {out[mix]['accuracy']:.4f} ({out[mix]['seconds']:.0f} s)", flush=True)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--mix-epochs", type=int, default=5)
    parser.add_argument("--dim", type=int, default=256)
    parser.add_argument("--token-layer", default="word", choices=["word", "char"])
    parser.add_argument("--glove", action="store_true", help="initialise from GloVe 6B 50d")
    parser.add_argument("--pooling", default="mean")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--datasets", nargs="+", default=["ag_news", "r8"])
    parser.add_argument("--data-home", default=None)
    args = parser.parse_args()
    home = get_data_home(args.data_home)
    params = bilm_params(args, home)
    results = {}
    if "ag_news" in args.datasets:
        news = load_ag_news(home, subset="test")
        X, y = np.asarray(news.data, dtype=object), news.target
        folds = []
        for k, (tr, te) in enumerate(StratifiedKFold(args.folds, shuffle=True, random_state=SEED).split(X, y)):
            start = time.perf_counter()
            bilm = BiLM(**params).fit(list(X[tr]))
            pretrain = time.perf_counter() - start
            print(f"AG News fold {k}: biLM {pretrain:.0f} s, {bilm.n_epochs_} epochs, "
                  f"validation perplexity {bilm.history_[-1]['validation_perplexity']:.1f}", flush=True)
            fold = evaluate_mixes(bilm, list(X[tr]), y[tr], list(X[te]), y[te], args.pooling,
                                  args.mix_epochs)
            folds.append({"pretrain_seconds": pretrain, "epochs": bilm.n_epochs_, "mixes": fold,
                          "history": bilm.history_})
        results["ag_news"] = folds
    if "r8" in args.datasets:
        train, test = load_r8(home, subset="train"), load_r8(home, subset="test")
        start = time.perf_counter()
        bilm = BiLM(**params).fit(train.data)
        pretrain = time.perf_counter() - start
        print(f"R8: biLM {pretrain:.0f} s, {bilm.n_epochs_} epochs", flush=True)
        results["r8"] = {"pretrain_seconds": pretrain, "epochs": bilm.n_epochs_,
                         "mixes": evaluate_mixes(bilm, train.data, train.target, test.data,
                                                 test.target, args.pooling, args.mix_epochs),
                         "history": bilm.history_}

    anchors = json.loads((RESULTS / "quality.json").read_text())["results"] if (
        RESULTS / "quality.json").is_file() else {"ag_news": {}, "r8": {}}
    rows = []
    for mix in MIXES:
        row = [f"ElmoVectorizer layer_mix={mix!r}"]
        if "ag_news" in results:
            acc = [f["mixes"][mix]["accuracy"] for f in results["ag_news"]]
            f1 = [f["mixes"][mix]["macro_f1"] for f in results["ag_news"]]
            row += [f"{np.mean(acc):.4f} ± {np.std(acc):.4f}", f"{np.mean(f1):.4f} ± {np.std(f1):.4f}"]
        else:
            row += ["", ""]
        if "r8" in results:
            r = results["r8"]["mixes"][mix]
            row += [f"{r['accuracy']:.4f}", f"{r['macro_f1']:.4f}"]
        else:
            row += ["", ""]
        rows.append(row)
    for name in anchors["ag_news"]:
        ag, r8 = anchors["ag_news"][name], anchors["r8"].get(name, {})
        rows.append([name, f"{ag['accuracy']['mean']:.4f} ± {ag['accuracy']['std']:.4f}",
                     f"{ag['macro_f1']['mean']:.4f} ± {ag['macro_f1']['std']:.4f}",
                     f"{r8.get('accuracy', float('nan')):.4f}", f"{r8.get('macro_f1', float('nan')):.4f}"])
    setting = (f"biLM: token layer {args.token_layer}{' + GloVe 6B 50d' if args.glove else ''}, "
               f"embedding = hidden = {args.dim}, 2 LSTM layers per direction, at most "
               f"{args.epochs} epochs (early stopping), adaptive softmax, bf16; pooling "
               f"{args.pooling!r}; mix_epochs={args.mix_epochs}; LogisticRegression(max_iter=3000).")
    timing = []
    if "ag_news" in results:
        timing.append(f"AG News: biLM pretraining {np.mean([f['pretrain_seconds'] for f in results['ag_news']]) / 60:.1f} "
                      f"min per fold; mixes + LR: " + ", ".join(
                          f"{m} {np.mean([f['mixes'][m]['seconds'] for f in results['ag_news']]):.0f} s"
                          for m in MIXES) + " per fold.")
    if "r8" in results:
        timing.append(f"R8: biLM pretraining {results['r8']['pretrain_seconds'] / 60:.1f} min; mixes + LR: "
                      + ", ".join(f"{m} {results['r8']['mixes'][m]['seconds']:.0f} s" for m in MIXES) + ".")
    markdown = (
        "### ElmoVectorizer + LogisticRegression against the other features\n\n"
        f"AG News: 7,600-row partition, stratified {args.folds}-fold CV, biLM pretrained on each "
        "training fold only (mean ± std). R8: standard train/test split. " + setting + "\n\n"
        + markdown_table(["features", "AG News accuracy", "AG News macro-F1", "R8 accuracy",
                          "R8 macro-F1"], rows)
        + "\n\nWall time on 2 cores: " + " ".join(timing) + "\n"
    )
    write_results("elmo_quality", {"settings": vars(args), "bilm_params": params,
                                   "results": results}, markdown)


if __name__ == "__main__":
    main()
