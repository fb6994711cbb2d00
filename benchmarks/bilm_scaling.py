"""biLM pretraining wall time and peak memory against corpus size (one epoch each).

Default-size BiLM (256/256), one epoch, no validation split, on the first N AG News
documents (N doubled up to the whole 7,600-row partition, then AG News repeated), each
size in a fresh process so that its peak resident memory is its own.

Writes benchmarks/results/bilm_scaling.{json,md}.
Run: python benchmarks/bilm_scaling.py [--sizes 1900 3800 7600 15200] [--onednn-cache 4]
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
texts = (base * (n // len(base) + 1))[:n]
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
bilm = BiLM(max_epochs=1, validation_fraction=0.0, random_state=0).fit(texts)
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
h = bilm.history_[0]
print(json.dumps({"documents": n, "targets": h["tokens_per_second"] * h["seconds"],
                  "vocabulary": len(bilm.vocabulary_), "seconds": seconds,
                  "tokens_per_second": h["tokens_per_second"], "peak_rss_mb": peak / 1024,
                  "fit_extra_rss_mb": (peak - before) / 1024}))
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1900, 3800, 7600, 15200])
    parser.add_argument("--data-home", default="")
    parser.add_argument("--onednn-cache", type=int, default=4,
                        help="also run every size with ONEDNN_PRIMITIVE_CACHE_CAPACITY set to this")
    args = parser.parse_args()
    runs = run_in_fresh_processes(CHILD, args.sizes, args.data_home)
    capped = run_in_fresh_processes(
        CHILD, args.sizes, args.data_home,
        env={"ONEDNN_PRIMITIVE_CACHE_CAPACITY": str(args.onednn_cache)})
    rows = [[f"{r['documents']:,}", f"{r['targets']:,.0f}", f"{r['vocabulary']:,}",
             f"{r['seconds']:.1f}", f"{r['tokens_per_second']:,.0f}",
             f"{r['fit_extra_rss_mb']:,.0f}", f"{r['peak_rss_mb']:,.0f}",
             f"{c['seconds']:.1f}", f"{c['fit_extra_rss_mb']:,.0f}"] for r, c in zip(runs, capped)]
    markdown = (
        "### biLM pretraining cost against corpus size (one epoch)\n\n"
        "Default BiLM (256/256, adaptive softmax, bf16), AG News documents (repeated past "
        "7,600), one fresh process per size; then the same with oneDNN's primitive cache "
        f"capped at {args.onednn_cache} entries (`ONEDNN_PRIMITIVE_CACHE_CAPACITY`; the LSTM "
        "kernels are cached per sequence length and batch shape).\n\n"
        + markdown_table(["documents", "LM targets", "vocabulary", "fit seconds", "targets/s",
                          "fit extra peak RSS (MB)", "process peak RSS (MB)",
                          "fit seconds, cache capped", "fit extra peak RSS (MB), cache capped"],
                         rows)
    )
    write_results("bilm_scaling", {"runs": runs, "capped_runs": capped,
                                   "onednn_cache": args.onednn_cache}, markdown)


if __name__ == "__main__":
    main()
