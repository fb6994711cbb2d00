"""Words of every shipped model's training files and word vectors, counted (the figures
its card gives).

For each recipe of ``elmofeat.models.recipes`` (en-small, en-base): the whitespace
words of each of its corpus files under the data home, and their total, counted the way
``benchmarks/model_card.py`` counts them for the card; and the words of each word-vector
file a recipe starts from (GloVe 6B 50d in the data home; 100d as
``benchmarks/convert_glove_100d.py`` writes it, ``--glove-100d``). Writes
``benchmarks/results/corpus_words.{json,md}``, the results file behind the cards' and
the docs' word counts.

Run: python benchmarks/corpus_words.py [--data-home DIR]
"""

from __future__ import annotations

import argparse
import gzip
from pathlib import Path

# first: the command's process settings (_common) apply before torch loads
from _common import markdown_table, write_results
from model_card import word_counts

from elmofeat.datasets import get_data_home
from elmofeat.models import recipes


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-home", default=None)
    parser.add_argument("--glove-100d", type=Path,
                        default=Path("~/elmofeat-work/glove/glove.6B.100d.txt.gz").expanduser())
    args = parser.parse_args()
    home = Path(get_data_home(args.data_home))
    counts, table = {}, []
    for name, recipe in recipes.RECIPES.items():
        words = word_counts(recipe.corpus(home).files)
        counts[name] = {"files": words, "total": sum(words.values())}
        table += [[name, file, f"{n:,}"] for file, n in words.items()]
        table.append([name, "all", f"{counts[name]['total']:,}"])
    vectors = {}
    for path in (home / "glove" / "glove.6B.50d.txt.gz", args.glove_100d):
        if path.is_file():
            with gzip.open(path, "rt", encoding="utf-8") as handle:
                vectors[path.name] = sum(1 for _ in handle)
    table += [["word vectors", name, f"{n:,}"] for name, n in vectors.items()]
    markdown = ("## Words of the shipped models' training files\n\n"
                "Whitespace-separated words of each file of each recipe's corpus "
                "(`elmofeat.models.recipes`), counted in the staged data home; words (lines) of "
                "each word-vector file.\n\n"
                + markdown_table(["recipe", "file", "words"], table) + "\n")
    write_results("corpus_words", {"recipes": counts, "word_vectors": vectors}, markdown)


if __name__ == "__main__":
    main()
