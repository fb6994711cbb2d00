"""ElmoVectorizer on long documents (issue 53): transform time and peak memory, with and
without the contextual bag (``bag_size``), on the shipped default model.

Every measurement runs in a fresh process: it loads ``en-base``, fits the vectorizer on
the same 1,000 posts of 20 Newsgroups' training part (each cut to its first 300
words), records its resident memory (RSS) as the baseline, resets the peak counter
(VmHWM) and runs one operation:

* ``transform`` of 3,000 documents of 300 words (the training posts' words in order, cut
  into pieces of 300 words), timed from call to return;
* ``transform`` of one document of 1,000 / 10,000 / 100,000 / 300,000 words (the same
  words, repeated): its peak above the baseline, which must not follow the document's
  length (a document over 16,384 tokens is read a piece of whole windows at a time, so
  its peak stops growing once it has a few pieces).

Each row runs with ``ElmoVectorizer(bag_size=None)`` (the pooled features alone) and with
``ElmoVectorizer()`` (the default: the contextual bag of 2,000 codes after them); the
fit's seconds are reported beside them. The
corpus rows run ``--repeats`` times, each in a fresh process: the median, with the
range (a shared host's speed varies from minute to minute).
Target: 3,000 documents of ~300 words within 60 s.

Writes benchmarks/results/long_transform.{json,md}.
Run: python benchmarks/long_transform.py [--data-home DIR] [--threads 2] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

from _common import PEAK_MEMORY_HELPERS, markdown_table, write_results

CHILD = r"""
import json, sys, time
import torch
from elmofeat import ElmoVectorizer
from elmofeat.datasets import load_20newsgroups

""" + PEAK_MEMORY_HELPERS + r"""
home, kind, size, bag_size, threads = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
torch.set_num_threads(threads)
posts = load_20newsgroups(home, subset="train").data
words = " ".join(posts).split()
train = [" ".join(post.split()[:300]) for post in posts[:1000]]
params = {} if bag_size == "default" else {"bag_size": None if bag_size == "none" else int(bag_size)}
vec = ElmoVectorizer(**params, cache_dir=None,
                     random_state=0)
start = time.perf_counter()
vec.fit(train)
fit_seconds = time.perf_counter() - start
vec.transform(train[:20])  # warm: kernels, caches of small shapes
if kind == "corpus":
    operation = [" ".join(words[i * 300 : (i + 1) * 300]) for i in range(size)]
else:
    operation = [" ".join((words * (size // len(words) + 1))[:size])]
base = rss_mb()
reset_peak()
start = time.perf_counter()
features = vec.transform(operation)
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "fit_seconds": fit_seconds, "base_mb": base,
                  "peak_mb": peak_mb() - base, "n_features": features.shape[1],
                  "finite": bool(abs(features).max() < float("inf"))}))
"""

OPERATIONS = [("corpus", 3_000, "3,000 documents of 300 words"),
              ("document", 1_000, "1 document of 1,000 words"),
              ("document", 10_000, "1 document of 10,000 words"),
              ("document", 100_000, "1 document of 100,000 words"),
              ("document", 300_000, "1 document of 300,000 words")]
BAGS = ("none", "default")


def measure(home: str, kind: str, size: int, bag_size: str, threads: int) -> dict:
    result = subprocess.run([sys.executable, "-c", CHILD, home, kind, str(size), bag_size,
                             str(threads)], capture_output=True, text=True)
    if result.returncode:
        raise RuntimeError(f"{kind} {size} bag {bag_size} failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-home", default=None)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3,
                        help="fresh-process runs of each corpus row (the median is reported)")
    args = parser.parse_args()
    from elmofeat.datasets import get_data_home

    home = str(get_data_home(args.data_home))
    results, rows = [], []
    for kind, size, label in OPERATIONS:
        row = [label]
        for bag_size in BAGS:
            runs = [measure(home, kind, size, bag_size, args.threads)
                    for _ in range(args.repeats if kind == "corpus" else 1)]
            assert all(run["finite"] for run in runs), (kind, size, bag_size)
            measured = sorted(runs, key=lambda run: run["seconds"])[len(runs) // 2]
            seconds = [run["seconds"] for run in runs]
            results.append({"kind": kind, "size": size, "bag_size": bag_size, **measured,
                            "seconds_all": seconds})
            spread = f" ({min(seconds):.1f}-{max(seconds):.1f})" if len(runs) > 1 else ""
            row += [f"{measured['seconds']:.1f}{spread}", f"{measured['peak_mb']:,.0f}"]
            print(results[-1], flush=True)
        rows.append(row)
    fits = {r["bag_size"]: r["fit_seconds"] for r in results if r["kind"] == "corpus"}
    markdown = (
        "### ElmoVectorizer on long documents: transform time and peak memory\n\n"
        f"`en-base`, {args.threads} torch threads, each row in a fresh process after a fit on "
        "1,000 posts of 20 Newsgroups' training part cut to 300 words (fit: "
        f"{fits['none']:.1f} s for `ElmoVectorizer(bag_size=None)`, {fits['default']:.1f} s "
        "for `ElmoVectorizer()`, whose contextual bag has 2,000 codes). Corpus rows: the median of "
        f"{args.repeats} fresh-process runs, their range in brackets. Peak: resident "
        "memory above the fitted vectorizer's.\n\n"
        + markdown_table(["operation", "bag_size=None: seconds", "bag_size=None: peak MB",
                          "default (bag): seconds", "default (bag): peak MB"], rows)
        + "\n")
    write_results("long_transform", {"threads": args.threads, "results": results}, markdown)


if __name__ == "__main__":
    main()
