"""Overhead of SkipGramVectorizer.fit over plain gensim Word2Vec on the same tokens.

Both train the same skip-gram model (SkipGramVectorizer._gensim_params) on AG News
repeated to about --tokens tokens. The gensim side gets pre-tokenized sentences; our
side starts from raw strings, so tokenization and the vocabulary checks count as
overhead. Runs alternate and the median of --repeats runs per side is compared.
Target: overhead at most 10%.

Writes benchmarks/results/speed_skipgram.{json,md}.
Run: python benchmarks/speed_skipgram.py [--tokens 1000000] [--repeats 3] [--workers 1]
"""

from __future__ import annotations

import argparse
import logging
import time

# first: the command's process settings (_common) apply before torch loads
from _common import markdown_table, write_results

import numpy as np
from gensim.models import Word2Vec
from sklearn.utils import check_random_state

from elmofeat import SkipGramVectorizer
from elmofeat.text import TextTokenizer
from elmofeat.datasets import load_ag_news


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--data-home", default=None)
    args = parser.parse_args()
    logging.getLogger("gensim").setLevel(logging.WARNING)

    base = load_ag_news(args.data_home, subset="test").data
    base_tokens = sum(len(t) for t in TextTokenizer()(base))
    texts = base * max(1, round(args.tokens / base_tokens))
    estimator = SkipGramVectorizer(workers=args.workers, epochs=5, min_count=5, random_state=0)
    seed = int(check_random_state(0).randint(2**31 - 1))
    sentences = TextTokenizer()(texts)
    n_tokens = sum(len(s) for s in sentences)

    ours, plain = [], []
    for _ in range(args.repeats):
        start = time.perf_counter()
        Word2Vec(sentences=sentences, **estimator._gensim_params(seed, estimator.epochs))
        plain.append(time.perf_counter() - start)
        start = time.perf_counter()
        estimator.fit(texts)
        ours.append(time.perf_counter() - start)
        print(f"gensim {plain[-1]:.1f}s  SkipGramVectorizer {ours[-1]:.1f}s", flush=True)
    ratio = float(np.median(ours) / np.median(plain))
    rows = [
        ["gensim Word2Vec (pre-tokenized)", f"{np.median(plain):.2f}",
         f"{n_tokens * estimator.epochs / np.median(plain):,.0f}"],
        ["SkipGramVectorizer.fit (raw text)", f"{np.median(ours):.2f}",
         f"{n_tokens * estimator.epochs / np.median(ours):,.0f}"],
    ]
    markdown = (
        "### SkipGramVectorizer.fit vs plain gensim Word2Vec\n\n"
        f"{len(texts):,} documents, {n_tokens:,} tokens, vector_size={estimator.vector_size}, "
        f"epochs={estimator.epochs}, workers={args.workers}; median of {args.repeats} "
        "alternating runs.\n\n"
        + markdown_table(["fit", "seconds", "tokens/s (x epochs)"], rows)
        + f"\n\nOverhead: **{100 * (ratio - 1):+.1f}%** (target: at most +10%).\n"
    )
    write_results(
        "speed_skipgram",
        {"n_documents": len(texts), "n_tokens": n_tokens, "workers": args.workers,
         "seconds_gensim": plain, "seconds_elmofeat": ours, "ratio": ratio,
         "params": estimator._gensim_params(seed, estimator.epochs)},
        markdown,
    )


if __name__ == "__main__":
    main()
