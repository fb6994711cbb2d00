"""ElmoVectorizer.transform throughput against n_jobs (joblib workers).

A default-size BiLM (256/256) is trained briefly on AG News (speed does not depend on
training), then ``transform`` of --docs AG News documents runs with each n_jobs (frozen
mix, mean pooling; loky workers, each with cpu_count // n_jobs torch threads). Every
setting runs --repeats times (best kept; the first parallel call also starts the
workers, which later calls reuse; the in-process representation cache is cleared
before every call); the features are checked against n_jobs=1.

Writes benchmarks/results/transform_scaling.{json,md}.
Run: python benchmarks/transform_scaling.py [--docs 7600] [--n-jobs 1 2 4] [--repeats 2]
"""

from __future__ import annotations

import argparse
import time

# first: the command's process settings (_common) apply before torch loads
from _common import markdown_table, write_results

import numpy as np
from joblib import cpu_count

import elmofeat
from elmofeat import BiLM, ElmoVectorizer
from elmofeat.datasets import load_ag_news


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=7600)
    parser.add_argument("--n-jobs", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--data-home", default=None)
    args = parser.parse_args()
    news = load_ag_news(args.data_home, subset="test").data
    bilm = BiLM(max_epochs=1, max_time=30, random_state=0).fit(news[:2000])
    documents = news[: args.docs]
    reference, rows, runs = None, [], {}
    for n_jobs in args.n_jobs:
        vectorizer = ElmoVectorizer(bilm, layer_mix="frozen", n_jobs=n_jobs, cache_dir=None)
        vectorizer.fit(documents[:10])
        seconds = []
        for _ in range(args.repeats):
            elmofeat.clear_caches()  # time the biLM, not the in-process cache
            start = time.perf_counter()
            features = vectorizer.transform(documents)
            seconds.append(time.perf_counter() - start)
        if reference is None:
            reference = features
        difference = float(np.abs(features - reference).max())
        best = min(seconds)
        runs[n_jobs] = {"seconds": seconds, "documents_per_second": args.docs / best,
                        "max_abs_difference_to_n_jobs_1": difference,
                        "threads_per_worker": max(1, cpu_count() // n_jobs)}
        rows.append([n_jobs, runs[n_jobs]["threads_per_worker"], f"{args.docs / best:,.0f}",
                     f"{best:.1f}", f"{min(runs[args.n_jobs[0]]['seconds']) / best:.2f}x",
                     f"{difference:.1e}"])
        print(rows[-1], flush=True)
    markdown = (
        "### ElmoVectorizer.transform and n_jobs\n\n"
        f"{args.docs:,} AG News documents, default-size biLM (256/256), frozen mix, mean "
        f"pooling; best of {args.repeats}; {cpu_count()} CPUs.\n\n"
        + markdown_table(["n_jobs", "torch threads per worker", "documents/s", "seconds",
                          "speed-up", "max |difference| to n_jobs=1"], rows)
    )
    write_results("transform_scaling", {"settings": vars(args), "runs": runs}, markdown)


if __name__ == "__main__":
    main()
