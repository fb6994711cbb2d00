"""biLM pretraining wall time and peak memory against corpus size (one epoch each).

Default-size BiLM (256/256), one epoch, no validation split, on N AG News documents:
the first N of the 7,600-row partition, then the partition repeated. Repeating text
would grow the vocabulary (a word seen once becomes a word seen twice), so with k
copies of the text ``min_count`` is ``2 * k``: every size past 7,600 trains the same
model on the same vocabulary, and its time per target and memory measure the engine
alone. Each size runs in a fresh process, so its peak resident memory is its own.

Writes benchmarks/results/bilm_scaling.{json,md}.
Run: python benchmarks/bilm_scaling.py [--sizes 1900 3800 7600 15200 30400 60800]
     [--onednn-cache N]
"""

from __future__ import annotations

import argparse

from _common import markdown_table, run_in_fresh_processes, write_results

CHILD = r"""
import json, resource, sys, time
from elmofeat import BiLM
from elmofeat.datasets import load_ag_news
n, data_home = int(sys.argv[1]), (sys.argv[2] or None)
base = load_ag_news(data_home, subset="test").data
copies = max(1, n // len(base))
texts = (base * (n // len(base) + 1))[:n]
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
bilm = BiLM(max_epochs=1, validation_fraction=0.0, min_count=2 * copies, random_state=0).fit(texts)
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
h = bilm.history_[0]
print(json.dumps({"documents": n, "copies": copies, "targets": h["tokens_per_second"] * h["seconds"],
                  "vocabulary": len(bilm.vocabulary_), "seconds": seconds,
                  "epoch_seconds": h["seconds"], "tokens_per_second": h["tokens_per_second"],
                  "peak_rss_mb": peak / 1024, "fit_extra_rss_mb": (peak - before) / 1024}))
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+",
                        default=[1900, 3800, 7600, 15200, 30400, 60800])
    parser.add_argument("--data-home", default="")
    parser.add_argument("--onednn-cache", type=int, default=None,
                        help="also run every size with ONEDNN_PRIMITIVE_CACHE_CAPACITY set to this")
    args = parser.parse_args()
    runs = run_in_fresh_processes(CHILD, args.sizes, args.data_home)
    header = ["documents", "copies of the text", "LM targets", "vocabulary", "fit seconds",
              "epoch targets/s", "fit seconds per million targets", "fit extra peak RSS (MB)",
              "process peak RSS (MB)"]
    rows = [[f"{r['documents']:,}", str(r["copies"]), f"{r['targets']:,.0f}",
             f"{r['vocabulary']:,}", f"{r['seconds']:.1f}", f"{r['tokens_per_second']:,.0f}",
             f"{1e6 * r['seconds'] / r['targets']:.1f}", f"{r['fit_extra_rss_mb']:,.0f}",
             f"{r['peak_rss_mb']:,.0f}"] for r in runs]
    capped = []
    if args.onednn_cache is not None:
        capped = run_in_fresh_processes(
            CHILD, args.sizes, args.data_home,
            env={"ONEDNN_PRIMITIVE_CACHE_CAPACITY": str(args.onednn_cache)})
        header += ["fit seconds, cache capped", "fit extra peak RSS (MB), cache capped"]
        for row, c in zip(rows, capped):
            row += [f"{c['seconds']:.1f}", f"{c['fit_extra_rss_mb']:,.0f}"]
    markdown = (
        "### biLM pretraining cost against corpus size (one epoch)\n\n"
        "Default BiLM (256/256, adaptive softmax, bf16 where supported), one epoch, one fresh "
        "process per size, on AG News documents (the 7,600-row partition repeated past "
        "7,600, with `min_count` = 2 x copies so that every size past 7,600 trains the same "
        "model on the same vocabulary). Flat seconds per million targets and flat memory "
        "mean the engine's cost grows only with the text.\n\n"
        + (f"The last two columns cap oneDNN's primitive cache at {args.onednn_cache} entries "
           "(`ONEDNN_PRIMITIVE_CACHE_CAPACITY`).\n\n" if capped else "")
        + markdown_table(header, rows)
    )
    write_results("bilm_scaling", {"runs": runs, "capped_runs": capped,
                                   "onednn_cache": args.onednn_cache}, markdown)


if __name__ == "__main__":
    main()
