"""Streamed pretraining against corpus size: peak memory and throughput, 1M to 100M tokens.

Each size runs in a fresh process: a generator yields the general corpus's training
paragraphs (``$ELMOFEAT_DATA/corpus``, read again from the start when it runs out, so
100M tokens is the corpus about 1.5 times) until the size is reached, and
``BiLM.fit`` streams it with the en-small recipe's configuration: one pass encodes
the corpus into shards on disk, then training runs for ``--seconds`` (a time budget:
the per-step cost is what is measured, not a whole epoch of 100M tokens). Recorded:
the encoding's time and rate, the training rate (LM targets per second of both
directions, over the budget), the process's peak resident memory, and the corpus's
distinct token types (the one table that grows with the corpus: with its vocabulary,
not its length).

The recipe's model predicts the corpus's most frequent words up to its ``max_features``
cap, so its softmax is smaller on a small corpus (1M tokens hold fewer such words): its
rows compare what a user gets at each size. The same sizes are then run again with
``max_features`` lowered to ``--same-model-words`` (a count the smallest size reaches),
so that every size trains the same model and only the corpus's size differs: the rows
that say whether streaming itself costs throughput or memory as the corpus grows.

Writes benchmarks/results/bilm_streaming.{json,md}.
Run: python benchmarks/bilm_streaming.py [--sizes 1e6 1e7 5e7 1e8] [--seconds 120]
     [--same-model-words 20000] [--data-home DIR]
"""

from __future__ import annotations

import argparse

from _common import markdown_table, run_in_fresh_processes, write_results

CHILD = r"""
import itertools, json, re, resource, sys, time
from elmofeat import BiLM
from elmofeat.bilm import shards
from elmofeat.models import recipes
from elmofeat.datasets import get_data_home

size, data_home, seconds = int(float(sys.argv[1])), (sys.argv[2] or None), float(sys.argv[3])
max_features = int(sys.argv[4]) if sys.argv[4] else None
recipe = recipes.RECIPES["en-small"]
files = recipe.corpus(data_home)
words = re.compile(r"\w+|[^\w\s]")
seen = {"tokens": 0}

def stream():
    for text in itertools.cycle(files):  # TextFiles is re-iterable: cycle restarts it
        if seen["tokens"] >= size:
            return
        seen["tokens"] += len(words.findall(text))
        yield text

encode = shards.EncodedCorpus.encode.__func__
timing = {}
def timed_encode(cls, *args, **kwargs):
    start = time.perf_counter()
    out = encode(cls, *args, **kwargs)
    timing["seconds"] = time.perf_counter() - start
    timing["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    timing["types"] = len(out.types)
    timing["tokens"] = out.meta["train_tokens"] + out.meta["valid_tokens"]
    timing["shards"] = out.n_shards
    return out
shards.EncodedCorpus.encode = classmethod(timed_encode)

params = {**recipe.params(data_home), "max_time": seconds}
if max_features is not None:
    params["max_features"] = max_features
bilm = BiLM(**params)
start = time.perf_counter()
bilm.fit(stream())
history = bilm.history_[0]
print(json.dumps({
    "size": size, "tokens": timing["tokens"], "types": timing["types"],
    "predicted_words": bilm.n_output_words_,
    "shards": timing["shards"], "encode_seconds": timing["seconds"],
    "encode_tokens_per_second": timing["tokens"] / timing["seconds"],
    "rss_after_encoding_mb": timing["rss_mb"],
    "train_seconds": history["seconds"], "targets_per_second": history["tokens_per_second"],
    "fit_seconds": time.perf_counter() - start,
    "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
}))
"""


HEADER = ["training tokens", "token types", "words predicted", "shards", "encoding (s)",
          "encoding tokens/s", "peak RSS after encoding (MB)", "training (s)",
          "training targets/s", "process peak RSS (MB)"]


def table(runs) -> str:
    rows = [[f"{r['tokens']:,}", f"{r['types']:,}", f"{r['predicted_words']:,}",
             str(r["shards"]), f"{r['encode_seconds']:.0f}",
             f"{r['encode_tokens_per_second']:,.0f}", f"{r['rss_after_encoding_mb']:,.0f}",
             f"{r['train_seconds']:.0f}", f"{r['targets_per_second']:,.0f}",
             f"{r['peak_rss_mb']:,.0f}"] for r in runs]
    smallest, largest = runs[0], runs[-1]
    return (markdown_table(HEADER, rows)
            + f"\n\nFrom {smallest['tokens']:,} to {largest['tokens']:,} tokens: peak memory "
            f"{smallest['peak_rss_mb']:,.0f} -> {largest['peak_rss_mb']:,.0f} MB, training "
            f"{smallest['targets_per_second']:,.0f} -> {largest['targets_per_second']:,.0f} "
            "targets/s.\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[1e6, 1e7, 5e7, 1e8])
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--same-model-words", type=int, default=20_000,
                        help="max_features of the same-model runs (0: skip them)")
    parser.add_argument("--data-home", default="")
    args = parser.parse_args()
    sizes = [f"{s:.0f}" for s in args.sizes]
    runs = run_in_fresh_processes(CHILD, sizes, args.data_home, str(args.seconds), "")
    same = []
    if args.same_model_words:
        same = run_in_fresh_processes(CHILD, sizes, args.data_home, str(args.seconds),
                                      str(args.same_model_words))
        predicted = {r["predicted_words"] for r in same}  # the cap plus the specials
        if len(predicted) != 1:
            raise SystemExit(f"the same-model runs predict {sorted(predicted)} words: the "
                             "smallest size does not reach --same-model-words; lower it")
    report(args.seconds, runs, args.same_model_words, same)


def report(seconds: float, runs: list, same_model_words: int, same: list) -> None:
    """Write the results and their markdown from the runs' JSON records."""
    markdown = (
        "## Streamed pretraining: memory and throughput against corpus size\n\n"
        f"The en-small recipe's biLM, streamed (`BiLM.fit` on a generator), each size in a "
        f"fresh process, {seconds:.0f} s of training after the encoding pass (less where "
        "the size's one epoch ends first).\n\n"
        "### The recipe as a user runs it\n\n"
        "The words predicted (the softmax's size) grow with the corpus until the recipe's "
        "cap (`max_features`), so these rows train a smaller model on a small corpus; the "
        "token types (read, not predicted) are the one table that grows with the corpus, "
        "with its vocabulary, not its length.\n\n"
        + table(runs))
    if same:
        markdown += (
            f"\n### One model at every size (`max_features={same_model_words:,}`)\n\n"
            f"The same sizes with the softmax capped at {same_model_words:,} words (and the "
            "4 specials), a count every size reaches: the same model trains at every size, "
            "so only the corpus's size differs.\n\n" + table(same))
    write_results("bilm_streaming", {"seconds": seconds, "runs": runs,
                                     "same_model_words": same_model_words,
                                     "same_model_runs": same}, markdown)


if __name__ == "__main__":
    main()
