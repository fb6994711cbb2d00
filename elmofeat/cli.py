"""The ``elmofeat`` command line.

``elmofeat demo`` runs a small end-to-end example: AG News (the 7,600-row partition,
a seeded stratified 80/20 split), SVD and skip-gram features, logistic regression.
"""

from __future__ import annotations

import argparse
import sys
import time


def _demo(args) -> int:
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import accuracy_score, f1_score
    from sklearn.model_selection import train_test_split
    from sklearn.pipeline import make_pipeline

    from . import SkipGramVectorizer, SVDVectorizer
    from .datasets import load_ag_news

    news = load_ag_news(args.data_home, subset="test")
    X_train, X_test, y_train, y_test = train_test_split(
        news.data, news.target, test_size=0.2, stratify=news.target, random_state=args.seed
    )
    print(
        f"AG News: {len(X_train)} training and {len(X_test)} test documents "
        f"(stratified split of the {len(news.data)}-row partition, seed {args.seed})"
    )
    vectorizers = {
        "SVDVectorizer": SVDVectorizer(random_state=args.seed),
        "SkipGramVectorizer": SkipGramVectorizer(random_state=args.seed),
    }
    print(f"{'features':<20} {'accuracy':>9} {'macro-F1':>9} {'seconds':>8}")
    for name, vectorizer in vectorizers.items():
        start = time.perf_counter()
        model = make_pipeline(vectorizer, LogisticRegression(max_iter=2000))
        model.fit(X_train, y_train)
        predicted = model.predict(X_test)
        print(
            f"{name:<20} {accuracy_score(y_test, predicted):>9.4f} "
            f"{f1_score(y_test, predicted, average='macro'):>9.4f} "
            f"{time.perf_counter() - start:>8.1f}"
        )
    words = vectorizers["SVDVectorizer"].keyed_vectors_
    probe = "oil" if "oil" in words.key_to_index else words.index_to_key[50]
    neighbours = ", ".join(w for w, _ in words.most_similar(probe, topn=5))
    print(f"SVD neighbours of {probe!r}: {neighbours}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = argparse.ArgumentParser(
        prog="elmofeat", description="Contextual and word-vector text features for scikit-learn."
    )
    parser.add_argument("--version", action="version", version=f"elmofeat {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    demo = commands.add_parser(
        "demo",
        help="small end-to-end example on AG News",
        description="Fit SVD and skip-gram features + logistic regression on AG News "
        "and print test accuracy and macro-F1.",
    )
    demo.add_argument(
        "--data-home", default=None, help="dataset folder (default: $ELMOFEAT_DATA or ~/elmofeat_data)"
    )
    demo.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    demo.set_defaults(run=_demo)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except (FileNotFoundError, ValueError) as exc:
        print(f"elmofeat {args.command}: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
