"""Feature speed against the sentence encoder a user would pick instead: the default
``ElmoVectorizer()`` (and each shipped biLM) against all-MiniLM-L6-v2's ``encode``, on
the same texts with the same threads, in one run.

``--docs`` AG News texts (the last ones of the 7,600-row partition); each encoder is
fitted once (loading its weights, outside the timing), then timed on the texts
``--rounds`` times, the encoders taken in turn within each round; the median of the
rounds is reported, with the range. ElmoVectorizer runs without its representation
cache (``representation_cache_bytes=0``) so that every round computes its features;
MiniLM runs sentence-transformers' ``encode`` (batch 64, normalised), the suite's
anchor. Needs the optional ``minilm`` extra.

Writes benchmarks/results/encoder_speed.{json,md}.
Run: python benchmarks/encoder_speed.py [--docs 2000] [--rounds 3] [--models en-base en-small]
"""

from __future__ import annotations

import argparse
import time

# first: the command's process settings (_common) apply before torch loads
from _common import markdown_table, write_results

import numpy as np
import torch

import elmofeat
from elmofeat import ElmoVectorizer
from elmofeat.datasets import load_ag_news
from elmofeat.suite.sentence_encoder import SentenceEncoderVectorizer


def timed(vectorizer, docs) -> float:
    start = time.perf_counter()
    vectorizer.transform(docs)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--models", nargs="+", default=["en-base", "en-small"],
                        help="shipped biLMs to time (ElmoVectorizer's default mix)")
    parser.add_argument("--data-home", default=None)
    args = parser.parse_args()
    docs = load_ag_news(args.data_home, subset="test").data[-args.docs:]
    encoders = {f"ElmoVectorizer(bilm={name!r})": ElmoVectorizer(name, cache_dir=None).fit(docs[:50])
                for name in args.models}
    encoders["all-MiniLM-L6-v2 encode"] = SentenceEncoderVectorizer().fit(docs[:50])
    seconds = {name: [] for name in encoders}
    with elmofeat.config_context(representation_cache_bytes=0):
        for name, encoder in encoders.items():  # warm-up: first kernels, first allocations
            encoder.transform(docs[:64])
        for _ in range(args.rounds):
            for name, encoder in encoders.items():
                seconds[name].append(timed(encoder, docs))
                print(name, f"{seconds[name][-1]:.2f} s", flush=True)
    minilm = float(np.median(seconds["all-MiniLM-L6-v2 encode"]))
    rows, payload = [], {}
    words = sum(len(d.split()) for d in docs)
    for name, values in seconds.items():
        median = float(np.median(values))
        payload[name] = {"seconds": values, "median": median,
                         "docs_per_second": len(docs) / median,
                         "speedup_over_minilm": minilm / median}
        rows.append([name, f"{median:.2f} ({min(values):.2f}-{max(values):.2f})",
                     f"{len(docs) / median:,.0f}", f"{minilm / median:.1f}x"])
    threads = torch.get_num_threads()
    markdown = (
        "## Feature speed against all-MiniLM-L6-v2\n\n"
        f"{len(docs):,} AG News texts ({words:,} words), {threads} torch threads, "
        f"median of {args.rounds} rounds (range), encoders taken in turn within a round; "
        "ElmoVectorizer without its representation cache.\n\n"
        + markdown_table(["features", "seconds", "texts/s", "speed-up over MiniLM"], rows))
    write_results("encoder_speed", {"docs": len(docs), "words": words, "threads": threads,
                                    "rounds": args.rounds, "results": payload}, markdown)
    print(markdown)


if __name__ == "__main__":
    main()
