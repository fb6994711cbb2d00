"""How long ``ElmoVectorizer().fit_transform`` takes on 10,000 sentences of ~20 words.

The sentences are cut at sentence ends from AG News documents (the 7,600-row
partition), then, as those hold only about 7,300 such sentences, from R8's training
documents and CR's reviews, keeping those of 10 to 35 words (about 22 on average),
each labelled with its document's class (each data set's classes kept apart). The
vectorizer runs with every default (biLM pretrained on the sentences, frozen mix with
its layers measured on the sentences) in a fresh process, with ``verbose=True`` so that its own estimate of the
pretraining time is recorded beside the measured one. Target: at most 3 minutes on 2
cores.

Writes benchmarks/results/elmo_fit_time.{json,md}.
Run: python benchmarks/elmo_fit_time.py [--sentences 10000] [--data-home DIR]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys

from _common import markdown_table, write_results

CHILD = r"""
import json, re, sys, time
import numpy as np
from elmofeat import ElmoVectorizer
from elmofeat.datasets import load_ag_news, load_cr, load_r8

n, home = int(sys.argv[1]), sys.argv[2]
sentences, labels = [], []
for offset, corpus in ((0, load_ag_news(home, subset="test")),
                       (4, load_r8(home, subset="train")), (12, load_cr(home))):
    for text, label in zip(corpus.data, corpus.target):
        for sentence in re.split(r"(?<=[.!?])\s+", text):
            if 10 <= len(sentence.split()) <= 35:
                sentences.append(sentence)
                labels.append(offset + int(label))
    if len(sentences) >= n:
        break
order = np.random.RandomState(0).permutation(len(sentences))[:n]
X = [sentences[i] for i in order]
y = np.asarray(labels)[order]
start = time.perf_counter()
vectorizer = ElmoVectorizer(random_state=0, verbose=True)
features = vectorizer.fit_transform(X, y)
seconds = time.perf_counter() - start
history = vectorizer.bilm_.history_
print(json.dumps({"sentences": len(X), "words": sum(len(s.split()) for s in X),
                  "seconds": seconds, "shape": list(features.shape),
                  "pretrain_seconds": sum(h["seconds"] for h in history),
                  "epochs": len(history)}))
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=10_000)
    parser.add_argument("--data-home", default=None)
    args = parser.parse_args()
    from elmofeat.datasets import get_data_home

    home = str(get_data_home(args.data_home))
    run = subprocess.run([sys.executable, "-c", CHILD, str(args.sentences), home],
                         capture_output=True, text=True, check=True)
    result = json.loads(run.stdout.strip().splitlines()[-1])
    progress = run.stderr.replace("\r", "\n")
    said = [line for line in progress.splitlines() if line.startswith("pretraining the biLM")]
    bars = [line for line in progress.splitlines() if "biLM epoch 1/" in line and "<" in line]
    # The bar's first estimate of the whole pretraining, read once a few batches ran.
    early = next((b for b in bars if re.search(r"\| *([2-9]\d)/", b)), bars[-1] if bars else "")
    result["said"] = said[0] if said else ""
    result["early_bar"] = early.strip()
    rows = [["sentences", f"{result['sentences']:,} ({result['words']:,} words)"],
            ["fit_transform wall time", f"{result['seconds']:.0f} s (target: at most 180 s)"],
            ["of which biLM pretraining (training steps)",
             f"{result['pretrain_seconds']:.0f} s, {result['epochs']} epochs"],
            ["features", f"{result['shape'][0]:,} x {result['shape'][1]}"],
            ["what verbose=True said first", f"`{result['said']}`"],
            ["its progress bar after a few batches", f"`{result['early_bar']}`"]]
    markdown = ("### ElmoVectorizer().fit_transform on 10,000 sentences\n\n"
                "Defaults (biLM pretrained on the sentences, frozen mix with its layers "
                "scaled on the sentences), fresh process, 2 CPU threads.\n\n"
                + markdown_table(["measure", "value"], rows) + "\n")
    write_results("elmo_fit_time", result, markdown)


if __name__ == "__main__":
    main()
