"""How long ``ElmoVectorizer().fit_transform`` takes: short sentences and long documents.

Two workloads, each in a fresh process with 2 CPU threads and ``verbose=True``:

* **sentences**: 10,000 sentences of 10 to 35 words (about 22 on average), cut at
  sentence ends from AG News documents (the 7,600-row partition), then R8's training
  documents and CR's reviews, each labelled with its document's class. Target: 20 s.
* **long documents**: 3,000 documents of 300 words (newsgroup-post length): the words
  of R8's and AG News's documents in order, cut every 300 words. Target: 60 s.

Each workload runs with the library's defaults (``ElmoVectorizer()``: the shipped
general model, concatenated mix, nothing pretrained) and, with ``--scratch``, with the
from-scratch biLM of the reference experiment (``ElmoVectorizer(BiLM())``: pretrained on
the texts themselves), whose own time estimate (what ``verbose=True`` said) is kept,
and, with ``--bag-size N``, with another contextual bag (``ElmoVectorizer(bag_size=N)``;
``--bag-size none``: the pooled features alone, the default before the bag). The
defaults include the bag (``bag_size=2000``) since 0.4.0.

Writes benchmarks/results/elmo_fit_time.{json,md}.
Run: python benchmarks/elmo_fit_time.py [--sentences 10000] [--documents 3000]
     [--scratch] [--bag-size N] [--data-home DIR]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

from _common import markdown_table, write_results

from elmofeat.mixes import DEFAULT_LAYER_MIX

CHILD = r"""
import bisect, json, re, sys, time
import numpy as np
from elmofeat import BiLM, ElmoVectorizer
from elmofeat.datasets import load_ag_news, load_cr, load_r8

kind, n, home, scratch = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4] == "1"
bag_size = sys.argv[5]  # "default", "none" or a number of codes
X, labels = [], []
if kind == "sentences":
    for offset, corpus in ((0, load_ag_news(home, subset="test")),
                           (4, load_r8(home, subset="train")), (12, load_cr(home))):
        for text, label in zip(corpus.data, corpus.target):
            for sentence in re.split(r"(?<=[.!?])\s+", text):
                if 10 <= len(sentence.split()) <= 35:
                    X.append(sentence)
                    labels.append(offset + int(label))
        if len(X) >= n:
            break
else:
    sources = [(text, int(label)) for corpus in (load_r8(home, subset="all"),
                                                 load_ag_news(home, subset="test"))
               for text, label in zip(corpus.data, corpus.target)]
    # The documents' words in order, cut into pieces of 300 (a long R8 document gives
    # several), each labelled with the document its first word comes from.
    words, starts, document_labels = [], [], []
    for text, label in sources:
        starts.append(len(words))
        document_labels.append(label)
        words += text.split()
    for begin in range(0, len(words) - 299, 300):
        X.append(" ".join(words[begin:begin + 300]))
        labels.append(document_labels[bisect.bisect_right(starts, begin) - 1])
        if len(X) >= n:
            break
order = np.random.RandomState(0).permutation(len(X))[:n]
X = [X[i] for i in order]
y = np.asarray(labels)[order]
start = time.perf_counter()
# the default: the shipped general model (ElmoVectorizer()'s bilm), or a from-scratch biLM
params = {"bilm": BiLM(random_state=0)} if scratch else {}
if bag_size != "default":
    params["bag_size"] = None if bag_size == "none" else int(bag_size)
vectorizer = ElmoVectorizer(**params, random_state=0, verbose=True, cache_dir=None)
features = vectorizer.fit_transform(X, y)
seconds = time.perf_counter() - start
history = vectorizer.bilm_.history_ if scratch else []
print(json.dumps({"kind": kind, "scratch": scratch, "bag_size": bag_size, "documents": len(X),
                  "words": sum(len(s.split()) for s in X), "seconds": seconds,
                  "shape": list(features.shape),
                  "pretrain_seconds": sum(h["seconds"] for h in history),
                  "epochs": len(history)}))
"""

TARGETS = {"sentences": 20.0, "documents": 60.0}


def run(kind, n, home, scratch, bag_size=None):
    out = subprocess.run([sys.executable, "-c", CHILD, kind, str(n), home, "1" if scratch else "0",
                          str(bag_size or "default")], capture_output=True, text=True, check=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    progress = out.stderr.replace("\r", "\n")
    said = [line for line in progress.splitlines() if line.startswith("pretraining the biLM")]
    result["said"] = said[0] if said else ""
    print(result, flush=True)
    return result


def bag_size_arg(text: str) -> str:
    if text != "none" and not (text.isdigit() and int(text) > 0):
        raise argparse.ArgumentTypeError("a positive number of codes, or none")
    return text


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=10_000)
    parser.add_argument("--documents", type=int, default=3_000)
    parser.add_argument("--scratch", action="store_true",
                        help="also time the from-scratch biLM (pretrained on the texts)")
    parser.add_argument("--bag-size", type=bag_size_arg, default=None,
                        help="also time ElmoVectorizer(bag_size=N) (N codes, or none)")
    parser.add_argument("--data-home", default=None)
    args = parser.parse_args()
    from elmofeat.datasets import get_data_home

    home = str(get_data_home(args.data_home))
    runs = []
    for kind, n in (("sentences", args.sentences), ("documents", args.documents)):
        runs.append(run(kind, n, home, scratch=False))
        if args.bag_size:
            runs.append(run(kind, n, home, scratch=False, bag_size=args.bag_size))
        if args.scratch:
            runs.append(run(kind, n, home, scratch=True))
    write(runs, args.bag_size)


def write(runs, bag_size=None, environment=None) -> None:
    """The table of ``runs``; with the bag's rows in ``results/elmo_fit_time_bagN`` (the
    plain run's file keeps the figures earlier releases cite)."""
    rows = []
    for r in runs:
        what = ("`ElmoVectorizer(BiLM())` (pretrained on the texts)" if r["scratch"]
                else f"`ElmoVectorizer(bag_size={r['bag_size'].title() if r['bag_size'] == 'none' else r['bag_size']})`"
                if r.get("bag_size") not in (None, "default")
                else "`ElmoVectorizer()` (defaults: the contextual bag of 2,000 codes)"
                if r.get("bag_size") == "default"
                else "`ElmoVectorizer()` (defaults)")
        target = "" if r["scratch"] else f"{TARGETS[r['kind']]:.0f} s"
        rows.append([what, f"{r['documents']:,} {r['kind']} ({r['words']:,} words)",
                     f"{r['seconds']:.1f}", target,
                     f"{r['pretrain_seconds']:.0f} s, {r['epochs']} epochs" if r["scratch"] else "none",
                     f"`{r['said']}`" if r["said"] else ""])
    markdown = ("### ElmoVectorizer().fit_transform: sentences and long documents\n\n"
                f"Fresh process per row, 2 CPU threads, the default layer mix (`{DEFAULT_LAYER_MIX}`: "
                "no labels needed), features of every document returned.\n\n"
                + markdown_table(["vectorizer", "texts", "fit_transform seconds", "target",
                                  "of which biLM pretraining", "what verbose=True said first"],
                                 rows) + "\n")
    name = "elmo_fit_time" + (f"_bag{bag_size}" if bag_size else "")
    command = "python benchmarks/elmo_fit_time.py" + (f" --bag-size {bag_size}" if bag_size else "")
    write_results(name, {"runs": runs}, markdown, environment=environment, command=command)


if __name__ == "__main__":
    main()
