"""ElmoVectorizer speed: transform throughput, and what reusing layer representations
saves in a GridSearchCV over the three mixes.

A default-size BiLM is trained briefly on AG News (speed does not depend on training),
then, in one run:

* ``transform`` of --docs AG News documents, in documents/second (cold caches);
* ``GridSearchCV(Pipeline([ElmoVectorizer(fitted_bilm), LogisticRegression]),
  {"elmo__layer_mix": ["trainable", "frozen", "mlp"]}, cv=3)`` on --search-docs
  documents, once with the layer-representation cache (the default) and once with it
  disabled (every candidate runs the biLM again), n_jobs=1.

Writes benchmarks/results/elmo_speed.{json,md}.
Run: python benchmarks/elmo_speed.py [--docs 3000] [--search-docs 1500]
"""

from __future__ import annotations

import argparse
import time

# first: the command's process settings (_common) apply before torch loads
from _common import markdown_table, write_results

from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline

import elmofeat
from elmofeat import BiLM, ElmoVectorizer
from elmofeat.datasets import load_ag_news


def search_seconds(bilm, X, y, cache_bytes):
    elmofeat.clear_caches()
    pipe = Pipeline([("elmo", ElmoVectorizer(bilm, mix_epochs=5, cache_dir=None, random_state=0)),
                     ("clf", LogisticRegression(max_iter=2000))])
    start = time.perf_counter()
    with elmofeat.config_context(representation_cache_bytes=cache_bytes):
        GridSearchCV(pipe, {"elmo__layer_mix": ["trainable", "frozen", "mlp"]}, cv=3).fit(X, y)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=3000)
    parser.add_argument("--search-docs", type=int, default=1500)
    parser.add_argument("--train-seconds", type=float, default=30)
    parser.add_argument("--data-home", default=None)
    args = parser.parse_args()
    news = load_ag_news(args.data_home, subset="test")
    bilm = BiLM(max_time=args.train_seconds, max_epochs=1, random_state=0).fit(news.data)

    vectorizer = ElmoVectorizer(bilm, layer_mix="frozen", cache_dir=None).fit(news.data[:10])
    elmofeat.clear_caches()
    docs = news.data[-args.docs:]
    start = time.perf_counter()
    vectorizer.transform(docs)
    transform_seconds = time.perf_counter() - start
    docs_per_second = len(docs) / transform_seconds
    print(f"transform: {docs_per_second:.0f} documents/s", flush=True)

    X, y = news.data[: args.search_docs], news.target[: args.search_docs]
    default_budget = elmofeat.get_config()["representation_cache_bytes"]
    with_cache = search_seconds(bilm, X, y, default_budget)
    without_cache = search_seconds(bilm, X, y, 0)
    print(f"search: {with_cache:.0f} s with reuse, {without_cache:.0f} s without", flush=True)
    markdown = (
        "### ElmoVectorizer speed\n\n"
        f"Default-size BiLM (256/256, 2 layers per direction), {bilm.n_representations_} layers of "
        f"width {bilm.output_dim_}; 2 CPU threads.\n\n"
        + markdown_table(["measure", "value"], [
            [f"transform, {len(docs):,} AG News documents (frozen mix, mean pooling)",
             f"{docs_per_second:,.0f} documents/s ({transform_seconds:.1f} s)"],
            [f"GridSearchCV over 3 mixes, cv=3, {len(X):,} documents, layer representations reused",
             f"{with_cache:.1f} s"],
            ["the same search, representations recomputed for every candidate",
             f"{without_cache:.1f} s"],
            ["speed-up from reuse", f"{without_cache / with_cache:.2f}x"],
        ])
    )
    write_results("elmo_speed", {"transform_documents_per_second": docs_per_second,
                                 "transform_seconds": transform_seconds, "transform_docs": len(docs),
                                 "search_docs": len(X), "search_seconds_with_reuse": with_cache,
                                 "search_seconds_without_reuse": without_cache}, markdown)


if __name__ == "__main__":
    main()
