"""The model card (README.md) of a pretrained-model folder, from its files and results.

Everything in the card is read, counted or measured, never typed in:

* configuration, vocabulary, tokens seen, training hours: the folder's ``config.json``;
* words per training file: counted in the recipe's files (whitespace words), with each
  file's licence and required attribution from the data's ``SOURCES.md``;
* held-out perplexity on every held-out slice, next to en-small's, and the feature
  scores under the suite's protocol beside TF-IDF, all-MiniLM-L6-v2 and en-small: the
  model's row in ``benchmarks/results/general_recipe.json`` (``python
  benchmarks/general_recipe.py NAME=FOLDER`` writes it; ``--row`` names a row scored
  under another name, and the row of the recipe's name, an earlier build, is then
  shown beside it);
* the word vectors the word layer starts from, and their licence: the recipe's
  ``pretrained_vectors`` file, named in ``card_facts.VECTORS``;
* with ``--suite``, the rows of a full ``elmofeat benchmark`` run whose general model
  is this one (its ``results.json``): the default features, adapted and in the hybrid,
  beside TF-IDF and all-MiniLM-L6-v2, and their paired differences on the same splits
  (also written to ``benchmarks/results/<NAME>_on_suite.{json,md}``, the results file
  the card's figures are checked against);
* hardware and precision: the machine that writes the card, which must be the one that
  trained the model (``--trained-here``), or, with ``--host-from-card``, what the
  folder's card written there gives (the training precision is what ``precision``
  resolves to there).

Run: python benchmarks/model_card.py FOLDER --recipe NAME --trained-here|--host-from-card [--data-home DIR]
     [--row ROW] [--suite REPORT/results.json]
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

# first: the command's process settings (_common) apply before torch loads
from _common import RESULTS, environment, markdown_table, write_results, write_text_atomically
from card_facts import (LICENCE_TERMS, licence_of, licence_section, paired_cell, sources_table,
                        suite_general_model_is, suite_row, training_speed, vectors_of)

import elmofeat
from elmofeat import BiLM
from elmofeat.bilm.corpus import TextFiles
from elmofeat.datasets import get_data_home
from elmofeat.models import recipes

TASKS = ("ag_news", "r8", "cr", "mpqa")
REFERENCE_ROWS = {"tfidf": "TF-IDF + LR", "minilm": "all-MiniLM-L6-v2 + LR",
                  "en-small": "en-small + LR"}
HELDOUT = {"wikipedia": "Wikipedia", "wikinews": "Wikinews", "dialogue": "dialogue",
           "gutenberg": "Gutenberg"}
WEIGHTS_LICENCE = "BSD-3-Clause, as elmofeat"
#: The suite's rows of the general model a card shows, and the references they are paired with.
SUITE_ROWS = {"general-concat": "default `ElmoVectorizer()` + LR",
              "general-adapted": "adapted (`adapt_epochs=1`) + LR",
              "general-hybrid": "`make_hybrid()` + LR"}
SUITE_REFERENCES = {"tfidf": "TF-IDF + LR", "minilm": "all-MiniLM-L6-v2 + LR"}


def word_counts(files) -> dict[str, int]:
    return {Path(f).name: sum(len(p.split()) for p in TextFiles([f])) for f in files}


def suite_section(path: Path, history: list, name: str) -> str:
    """The card's section on a full suite run (``--suite``), or "" without one."""
    results = json.loads(path.read_text())
    if results["settings"].get("quick"):
        raise SystemExit(f"{path} is a quick run: its numbers are not evidence")
    if not suite_general_model_is(results, history):
        raise SystemExit(f"the general rows of {path} were not measured with this model "
                         "(their biLM's training history differs)")
    tasks = list(results["datasets"])
    titles = [results["datasets"][t]["title"] for t in tasks]
    rows = {key: (label, suite_row(results, key))
            for key, label in [*SUITE_REFERENCES.items(), *SUITE_ROWS.items()]}
    rows = {key: (label, row) for key, (label, row) in rows.items() if row is not None}

    def cell(row, task):
        stats = row["scores"].get(task)
        if stats is None:
            return ""
        return (f"{stats['mean']:.4f}" if len(stats["splits"]) == 1
                else f"{stats['mean']:.4f} ± {stats['std']:.4f}")

    score_rows = [[label, *(cell(row, t) for t in tasks)] for label, row in rows.values()]
    paired_rows = [[f"{rows[key][0]} minus {rows[other][0]}",
                    *(paired_cell(rows[key][1], rows[other][1], t, ddof=0)
                      if t in rows[key][1]["scores"] and t in rows[other][1]["scores"] else ""
                      for t in tasks)]
                   for key in SUITE_ROWS if key in rows
                   for other in SUITE_REFERENCES if other in rows]
    def split_of(task):
        splits = results["datasets"][task]["splits"]
        if len(splits) > 1:
            return f"{len(splits)} folds"
        if results["settings"].get(f"{task}_train_documents"):  # a sample of the split
            return (f"a sample of {splits[0]['train_size']:,} / {splits[0]['test_size']:,} "
                    "documents of its standard split")
        return "its standard split"

    folds = ", ".join(f"{results['datasets'][t]['title']} {split_of(t)}" for t in tasks)
    return f"""
## On the suite

The rows of {name} in the suite (`elmofeat benchmark`, the README's main command, run of
{results['started'][:10]}; {folds}; every row followed by LogisticRegression with C chosen
by inner 3-fold cross-validation). Mean accuracy ± std over the splits:

{markdown_table(["row", *titles], score_rows)}

The same splits, paired: the difference in accuracy split by split, in points, mean ±
std (the population std over the splits, ddof=0, as the suite's report gives it) and
the splits on which the first
row is above. A mean inside its spread is not a win.

{markdown_table(["rows", *titles], paired_rows)}
"""


def trained_on(card: Path) -> tuple[str, str]:
    """The training hardware and precision a card written on the training host gives."""
    import re

    match = re.search(r"^\| training \| [\d.]+ hours on (.+?\)), ([^,]+), batches",
                      card.read_text(), re.M)
    if match is None:
        raise SystemExit(f"{card} gives no training hardware: write the card with "
                         "--trained-here on the machine that trained the model")
    return match.group(1), match.group(2)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--recipe", required=True, choices=sorted(recipes.RECIPES))
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--trained-here", action="store_true",
                       help="confirm that this machine trained the model (its hardware "
                       "and precision go into the card)")
    where.add_argument("--host-from-card", action="store_true",
                       help="the card is written again elsewhere: keep the training hardware "
                       "and precision that the folder's card (written on the training host) "
                       "gives")
    parser.add_argument("--data-home", default=None)
    parser.add_argument("--row", default=None, help="the model's row in general_recipe.json "
                        "(default: the recipe's name)")
    parser.add_argument("--suite", type=Path, default=None,
                        help="a full suite run's results.json whose general model is this one")
    args = parser.parse_args()
    home = Path(get_data_home(args.data_home))
    recipe = recipes.RECIPES[args.recipe]
    name = recipe.name
    config = json.loads((args.folder / "config.json").read_text())
    params, history = config["params"], config["history"]
    bilm = BiLM.from_pretrained(args.folder)
    if args.host_from_card:
        hardware, precision = trained_on(args.folder / "README.md")
    else:
        precision = "bf16 autocast" if bilm._bf16(training=True) else "fp32"
        host = environment()
        hardware = f"{host['cpu_count']} CPU cores ({host['cpu']})"
    rows = json.loads((RESULTS / "general_recipe.json").read_text())["rows"]
    row = args.row or name
    if row not in rows:
        raise SystemExit(f"no {row} row in general_recipe.json: run "
                         f"python benchmarks/general_recipe.py {row}={args.folder}")
    references = dict(REFERENCE_ROWS)
    if row != name and name in rows:  # an earlier build of the same name
        references[name] = f"{name}, earlier build (row {name}) + LR"
    vectors, attribution = vectors_of(recipe)

    files = recipe.corpus(home).files
    words = word_counts(files)
    total = sum(words.values())
    table = sources_table(home)
    tokens = sum(h.get("training_tokens", 0) for h in history)
    hours = sum(h["seconds"] for h in history) / 3600
    corpus_rows = [[f.name, f"{words[f.name]:,}", f"{words[f.name] / total:.1%}",
                    licence_of(f, table)] for f in files]
    named = " ".join([*(row[-1] for row in corpus_rows), attribution])
    licences = [k for k in LICENCE_TERMS if k in named]

    ppl_rows = []
    beside = [k for k in ("en-small", name) if k in references]  # name: an earlier build
    for key, label in [(row, name), *((k, references[k].removesuffix(" + LR")) for k in beside)]:
        ppl = rows[key].get("heldout_perplexity", {})
        ppl_rows.append([label, *(f"{ppl[h]:.1f}" if h in ppl else "" for h in HELDOUT)])
    # files the staged data lacks (GloVe 6B 100d), written first where the recipe reads them
    making = "".join(command.format(path=recipe.parameters[param].replace("{data_home}", "DATA"))
                     + "\n" for param, command in recipe.made_by.items())
    score_rows = []
    for key, label in [*references.items(), (row, f"{name} + LR")]:
        if key in rows:
            means = [rows[key]["scores"][t]["mean"] for t in TASKS]
            score_rows.append([label, *(f"{m:.4f}" for m in means)])
    paired_rows = [[f"{name} minus {references[other].removesuffix(' + LR')}",
                    *(paired_cell(rows[row], rows[other], t) for t in TASKS)]
                   for other in references if other in rows]
    scored_as = "" if row == name else f", row `{row}`"

    on_suite = suite_section(args.suite, history, name) if args.suite else ""
    if args.suite:
        write_results(f"{name}_on_suite", {"suite": str(args.suite), "model": name},
                      on_suite.strip() + "\n",
                      command="python benchmarks/model_card.py " + shlex.join(sys.argv[1:]))
    card = f"""# {name}: a general English biLM for elmofeat

{recipe.description[:1].upper() + recipe.description[1:]}. Load it with
`BiLM.from_pretrained("{name}")` or use it through `ElmoVectorizer(bilm="{name}")`;
`ElmoVectorizer(bilm="{name}", adapt_epochs=1)` adapts a copy to your texts first.

| | |
|---|---|
| architecture | word layer: {vectors} vectors (kept frozen) projected to {params['embedding_dim']}; {params['n_layers']} LSTM layers per direction, {params['hidden_dim']} wide, residual; adaptive softmax. `bilm.pt` holds the word layer's table of {config['vocabulary_size']:,} vectors, {config['weights_dtype']}: for the words {vectors} covers, its vectors themselves |
| vocabulary | {config['vocabulary_size']:,} words read; the {config['n_output_words']:,} most frequent corpus words predicted (min count {params['min_count']}) |
| corpus | {total:,} words in {len(files)} files (below), read once: {tokens:,} training tokens ({len(history)} epoch, {params['validation_fraction']:.0%} of the windows held out for validation) |
| training | {hours:.2f} hours on {hardware}, {precision}, batches of {params['batch_size']} windows of at most {params['max_len']} tokens, AdamW at {params['learning_rate']}, seed {params['random_state']} |
| representations | {config['n_representations']} layers per token, {config['output_dim']} wide |
| weights | `bilm.pt`, {config['weights_dtype']}, SHA-256 `{config['weights_sha256']}` |
| licence of the weights | {WEIGHTS_LICENCE} (see "Licences and the weights") |
| card written with | elmofeat {elmofeat.__version__} (the suite rows below: the version their report names) |

## Training data, licences and attributions

Words counted in the files; licence and origin as the data's `SOURCES.md` gives them.
Besides the corpus: {attribution}; the model's word layer starts from them and keeps them
frozen.

{markdown_table(["file", "words", "share", "licence, origin and required attribution"], corpus_rows)}

Word counts, of these files and of the word-vector lists:
`benchmarks/results/corpus_words.md`.

## Licences and the weights

{licence_section(args.folder, licences)}

## Held-out perplexity

Both directions, on about 100,000 words of each held-out slice: every k-th paragraph
of its files, k chosen to give that many (`benchmarks/results/general_recipe.md`; the
models have different vocabularies, so the figures compare the models only roughly):

{markdown_table(["model", *HELDOUT.values()], ppl_rows)}

## What its features are worth

Mean accuracy under the suite's protocol (`benchmarks/results/general_recipe.md`{scored_as}: CR and
MPQA stratified 5-fold, AG News one 80/20 split of its 7,600 rows, R8 its standard split;
`ElmoVectorizer(bilm)`'s defaults; LogisticRegression's C searched by inner 3-fold CV):

{markdown_table(["row", *TASKS], score_rows)}

The same splits, paired: the difference in accuracy split by split, in points, mean ±
std (the sample std of the differences, ddof=1, as `general_recipe.md` gives it) and the
splits on which {name} is above (AG News and R8: one split each). A mean
inside its spread is not a win.

{markdown_table(["rows", *TASKS], paired_rows)}
{on_suite}
## How it was made
{training_speed(history, name, RESULTS / "bilm_step_profile.json")}

```bash
{making}elmofeat pretrain --recipe {name} --data-home DATA --pretrained -o FOLDER \\
    --checkpoint-dir CHECKPOINTS --checkpoint-every 2000 --threads 2
python benchmarks/general_recipe.py {row}=FOLDER --data-home DATA
python benchmarks/corpus_words.py --data-home DATA
python benchmarks/model_card.py FOLDER --recipe {name} --trained-here --data-home DATA{"" if row == name else f" --row {row}"}{" --suite docs/report/results.json" if args.suite else ""}
```

A stopped pretraining resumes from its last checkpoint when the same command runs again.

## Limits

No product, film or place reviews are in the corpus: opinion reaches the model through
the dialogue files only. Words neither the corpus nor GloVe's first 200,000 hold are
`<unk>` unless adaptation (`adapt_epochs`) adds them from your texts. Its LSTMs are
small ({params['hidden_dim']} wide) and read {tokens / 1e6:.0f}M tokens; ELMo's original
model read a corpus many times larger (the 1B Word Benchmark, for several epochs).
"""
    write_text_atomically(args.folder / "README.md", card)
    print(card)


if __name__ == "__main__":
    main()
