"""Choosing the general model's configuration by the features it gives.

``candidates``: pretrain each candidate configuration on the same slice of the general
corpus (every k-th paragraph of its training files, about ``--tokens`` tokens, one
epoch), then score its features on the first split of every suite task (the split the
suite's first fold uses): ``ElmoVectorizer(bilm, layer_mix="frozen")`` +
``LogisticRegression``, beside TF-IDF + LR on the same split. The held-out perplexity
on the corpus's held-out books is recorded too, but the choice is made on the features.

Writes benchmarks/results/general_model.{json,md} (each run adds or replaces its rows).
Run: python benchmarks/general_model.py candidates [--tokens 3000000] [--data-home DIR]
     [--work DIR] [--only NAME ...]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

from _common import RESULTS, markdown_table, write_results
from elmofeat import BiLM, ElmoVectorizer
from elmofeat.benchmark.data import load_dataset
from elmofeat.benchmark.settings import BenchmarkSettings
from elmofeat.bilm.corpus import TextFiles
from elmofeat.datasets import get_data_home

TASKS = ("ag_news", "r8", "cr", "mpqa")
CANDIDATES = {
    "char-256": dict(token_layer="char"),
    "glove-256": dict(token_layer="word", pretrained_vectors="GLOVE", pretrained_words=100_000),
    "glove-128": dict(token_layer="word", embedding_dim=128, hidden_dim=128,
                      pretrained_vectors="GLOVE", pretrained_words=100_000),
}


def corpus_files(home: Path) -> list[Path]:
    corpus = home / "corpus"
    return sorted(p for p in corpus.glob("*.txt.gz") if "heldout" not in p.name)


def corpus_slice(home: Path, n_words: int) -> list[str]:
    """About ``n_words`` words: every k-th paragraph of every training file."""
    total = 54_743_460  # words of the training files (SOURCES.md)
    every = max(1, total // n_words)
    return [text for i, text in enumerate(TextFiles(corpus_files(home))) if i % every == 0]


def heldout_slice(home: Path, n_paragraphs: int = 2000) -> list[str]:
    texts = TextFiles(home / "corpus" / "gutenberg_heldout.txt.gz")
    return [text for i, text in enumerate(texts) if i % 10 == 0][:n_paragraphs]


def first_splits(home: Path) -> dict:
    settings = BenchmarkSettings()
    return {task: load_dataset(task, settings, home).splits[0] for task in TASKS}


def accuracy(vectorizer, split, C=1.0) -> float:
    model = make_pipeline(vectorizer, LogisticRegression(max_iter=3000, C=C))
    model.fit(split.X_train, split.y_train)
    return float(np.mean(model.predict(split.X_test) == split.y_test))


def probe(bilm, splits) -> dict:
    """Frozen-mix accuracy of ``bilm``'s features on each task's first split."""
    return {task: accuracy(ElmoVectorizer(bilm, cache_dir=None, random_state=0), split)
            for task, split in splits.items()}


def run_candidates(args, home: Path) -> None:
    splits = first_splits(home)
    texts = corpus_slice(home, args.tokens)
    heldout = heldout_slice(home)
    n_words = sum(len(t.split()) for t in texts)
    print(f"{len(texts):,} paragraphs, {n_words:,} words", flush=True)
    path = RESULTS / "general_model.json"
    previous = json.loads(path.read_text())["rows"] if path.is_file() else {}
    rows = dict(previous)
    if "tfidf" not in rows:
        rows["tfidf"] = {"config": "TF-IDF + LR (C=1), for reference",
                         "accuracy": {task: accuracy(TfidfVectorizer(sublinear_tf=True), split)
                                      for task, split in splits.items()}}
    glove = str(home / "glove" / "glove.6B.50d.txt.gz")
    for name in args.only or CANDIDATES:
        params = {k: (glove if v == "GLOVE" else v) for k, v in CANDIDATES[name].items()}
        start = time.perf_counter()
        bilm = BiLM(max_epochs=1, validation_fraction=0.01, random_state=0, **params).fit(texts)
        minutes = (time.perf_counter() - start) / 60
        if args.work:
            Path(args.work).mkdir(parents=True, exist_ok=True)
            bilm.save(Path(args.work) / f"{name}.pt")
        rows[name] = {
            "config": json.dumps(CANDIDATES[name]),
            "words": n_words,
            "fit_minutes": round(minutes, 1),
            "heldout_perplexity": bilm.perplexity(heldout),
            "accuracy": probe(bilm, splits),
        }
        print(name, rows[name], flush=True)
        write(rows, args.tokens)


def run_probe(args, home: Path) -> None:
    """Score saved models (``NAME=PATH``) as the candidates are scored."""
    splits = first_splits(home)
    heldout = heldout_slice(home)
    path = RESULTS / "general_model.json"
    rows = json.loads(path.read_text())["rows"] if path.is_file() else {}
    for item in args.models:
        name, _, model_path = item.partition("=")
        bilm = BiLM.from_pretrained(model_path)
        rows[name] = {
            "config": json.dumps({k: v for k, v in bilm.get_params().items()
                                  if k in ("token_layer", "embedding_dim", "hidden_dim",
                                           "pretrained_words")}),
            "words": args.words,
            "fit_minutes": round(sum(h["seconds"] for h in bilm.history_) / 60, 1),
            "heldout_perplexity": bilm.perplexity(heldout),
            "accuracy": probe(bilm, splits),
        }
        print(name, rows[name], flush=True)
        write(rows, args.tokens)


def write(rows: dict, tokens: int) -> None:
    table = [["row", "words", "fit min", "held-out ppl", *TASKS]]
    for name, row in rows.items():
        ppl = row.get("heldout_perplexity")
        table.append([name, f"{row['words']:,}" if row.get("words") else "",
                      row.get("fit_minutes", ""), "" if ppl is None else f"{ppl:.1f}",
                      *(f"{row['accuracy'][t]:.4f}" for t in TASKS)])
    markdown = (
        "## General model: candidate configurations\n\n"
        "Each candidate pretrained one epoch on the same slice of the general corpus (every "
        f"k-th paragraph of its training files, about {tokens:,} words); features scored on "
        "the first split of each suite task with the frozen mix + LogisticRegression (C=1). "
        "Held-out perplexity on 2,000 paragraphs of the corpus's held-out books (not "
        "comparable across token layers with different vocabularies read).\n\n"
        + markdown_table(table[0], table[1:]))
    write_results("general_model", {"rows": rows}, markdown)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stage", choices=["candidates", "probe"])
    parser.add_argument("models", nargs="*", help="probe: NAME=PATH of saved models")
    parser.add_argument("--tokens", type=int, default=3_000_000)
    parser.add_argument("--words", type=int, default=None,
                        help="probe: words the probed models were pretrained on")
    parser.add_argument("--data-home", default=None)
    parser.add_argument("--work", default=None, help="keep the candidate models here")
    parser.add_argument("--only", nargs="*", choices=list(CANDIDATES))
    args = parser.parse_args()
    home = Path(get_data_home(args.data_home))
    (run_candidates if args.stage == "candidates" else run_probe)(args, home)


if __name__ == "__main__":
    main()
