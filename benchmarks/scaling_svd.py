"""SVDVectorizer.fit wall time and peak memory against corpus size.

The corpus is AG News repeated (real text) up to each size; each size runs in a fresh
subprocess so that its peak resident memory (ru_maxrss, minus the memory held after
loading the data) is its own.

Writes benchmarks/results/scaling_svd.{json,md}.
Run: python benchmarks/scaling_svd.py [--sizes 500000 1000000 2500000 5000000]
"""

from __future__ import annotations

import argparse
from _common import markdown_table, run_in_fresh_processes, write_results

CHILD = r"""
import json, resource, sys, time
from elmofeat import SVDVectorizer
from elmofeat.text import TextTokenizer
from elmofeat.datasets import load_ag_news
n_tokens, data_home = int(sys.argv[1]), (sys.argv[2] or None)
base = load_ag_news(data_home, subset="test").data
per_pass = sum(len(t) for t in TextTokenizer()(base))
texts = (base * (n_tokens // per_pass + 1))
tokens = TextTokenizer()(texts)
# Trim to the requested number of tokens, whole documents.
total, keep = 0, 0
for keep, t in enumerate(tokens):
    total += len(t)
    if total >= n_tokens:
        break
texts = texts[: keep + 1]
del tokens
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
vec = SVDVectorizer(random_state=0).fit(texts)
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"tokens": total, "documents": len(texts), "vocabulary": len(vec.keyed_vectors_),
                  "seconds": seconds, "peak_rss_mb": peak / 1024,
                  "fit_extra_rss_mb": (peak - before) / 1024}))
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+",
                        default=[500_000, 1_000_000, 2_500_000, 5_000_000])
    parser.add_argument("--data-home", default="")
    args = parser.parse_args()
    runs = run_in_fresh_processes(CHILD, args.sizes, args.data_home)
    rows = [[f"{r['tokens']:,}", f"{r['documents']:,}", f"{r['vocabulary']:,}",
             f"{r['seconds']:.1f}", f"{r['fit_extra_rss_mb']:,.0f}", f"{r['peak_rss_mb']:,.0f}"]
            for r in runs]
    markdown = (
        "### SVDVectorizer.fit cost against corpus size\n\n"
        "AG News text repeated to each size; defaults (n_components=300, window=5, PPMI, "
        "min_count=2); one fresh process per size.\n\n"
        + markdown_table(["tokens", "documents", "vocabulary", "fit seconds",
                          "fit extra peak RSS (MB)", "process peak RSS (MB)"], rows)
    )
    write_results("scaling_svd", {"runs": runs}, markdown)


if __name__ == "__main__":
    main()
