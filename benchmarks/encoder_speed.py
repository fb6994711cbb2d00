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

``--fine-tuned`` also times the fine-tuned biLM (``ElmoClassifier("en-base")``'s
``predict_proba`` and ``ElmoVectorizer("en-base", fine_tune_epochs=...)``'s ``transform``),
each fine-tuned beforehand, outside the timing, on the first ``--fine-tune-docs`` labelled
texts of the partition (disjoint from the timed ones): a fine-tuned copy has the shipped
biLM's shape, so its features should cost what the shipped biLM's cost.

Writes benchmarks/results/encoder_speed.{json,md} (with ``--fine-tuned``:
encoder_speed_fine_tuned.{json,md}, so that the shipped models' figures stay with the
run that measured them).
Run: python benchmarks/encoder_speed.py [--docs 2000] [--rounds 3] [--models en-base en-small]
     [--fine-tuned [--fine-tune-docs 500] [--fine-tune-epochs 1]]
"""

from __future__ import annotations

import argparse
import time

# first: the command's process settings (_common) apply before torch loads
from _common import markdown_table, write_results

import numpy as np
import torch

import elmofeat
from elmofeat import ElmoClassifier, ElmoVectorizer
from elmofeat.datasets import load_ag_news
from elmofeat.suite.sentence_encoder import SentenceEncoderVectorizer


class _Probabilities:
    """A classifier timed through the same ``transform`` call as the encoders."""

    def __init__(self, classifier):
        self.classifier = classifier

    def transform(self, docs):
        return self.classifier.predict_proba(docs)


def timed(vectorizer, docs) -> float:
    start = time.perf_counter()
    vectorizer.transform(docs)
    return time.perf_counter() - start


def fine_tuned_encoders(dataset, n_docs: int, epochs: int) -> dict:
    texts, labels = dataset.data[:n_docs], dataset.target[:n_docs]
    classifier = ElmoClassifier("en-base", epochs=epochs, cache_dir=None, random_state=0)
    vectorizer = ElmoVectorizer("en-base", fine_tune_epochs=epochs, cache_dir=None, random_state=0)
    return {f"ElmoClassifier('en-base', epochs={epochs}) predict_proba":
            _Probabilities(classifier.fit(texts, labels)),
            f"ElmoVectorizer('en-base', fine_tune_epochs={epochs})": vectorizer.fit(texts, labels)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--models", nargs="+", default=["en-base", "en-small"],
                        help="shipped biLMs to time (ElmoVectorizer's default mix)")
    parser.add_argument("--fine-tuned", action="store_true",
                        help="also time en-base fine-tuned on labelled texts (see above)")
    parser.add_argument("--fine-tune-docs", type=int, default=500)
    parser.add_argument("--fine-tune-epochs", type=int, default=1)
    parser.add_argument("--data-home", default=None)
    args = parser.parse_args()
    dataset = load_ag_news(args.data_home, subset="test")
    if args.fine_tuned and args.fine_tune_docs + args.docs > len(dataset.data):
        parser.error("--fine-tune-docs and --docs overlap: the timed texts must be unseen")
    docs = dataset.data[-args.docs:]
    encoders = {f"ElmoVectorizer(bilm={name!r})": ElmoVectorizer(name, cache_dir=None).fit(docs[:50])
                for name in args.models}
    if args.fine_tuned:
        encoders.update(fine_tuned_encoders(dataset, args.fine_tune_docs, args.fine_tune_epochs))
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
    title = ("Feature speed of a fine-tuned biLM against all-MiniLM-L6-v2" if args.fine_tuned
             else "Feature speed against all-MiniLM-L6-v2")
    markdown = (
        f"## {title}\n\n"
        f"{len(docs):,} AG News texts ({words:,} words), {threads} torch threads, "
        f"median of {args.rounds} rounds (range), encoders taken in turn within a round; "
        "ElmoVectorizer without its representation cache"
        + (f"; the fine-tuned rows were fine-tuned ({args.fine_tune_epochs} epoch(s)) on the "
           f"partition's first {args.fine_tune_docs:,} labelled texts beforehand"
           if args.fine_tuned else "") + ".\n\n"
        + markdown_table(["features", "seconds", "texts/s", "speed-up over MiniLM"], rows))
    name = "encoder_speed_fine_tuned" if args.fine_tuned else "encoder_speed"
    write_results(name, {"docs": len(docs), "words": words, "threads": threads,
                                    "rounds": args.rounds, "fine_tuned": args.fine_tuned,
                                    "fine_tune_docs": args.fine_tune_docs if args.fine_tuned else 0,
                                    "fine_tune_epochs": args.fine_tune_epochs, "results": payload}, markdown,
                  command=f"python benchmarks/encoder_speed.py{' --fine-tuned' if args.fine_tuned else ''}")
    print(markdown)


if __name__ == "__main__":
    main()
