"""Choosing the general model's configuration by the features it gives.

``candidates``: pretrain each candidate configuration on the same slice of the general
corpus (every k-th paragraph of its training files, about ``--tokens`` tokens, one
epoch), then score its features on the first split of every suite task (the split the
suite's first fold uses): ``ElmoVectorizer(bilm, layer_mix="frozen")`` +
``LogisticRegression``, beside TF-IDF + LR on the same split. The held-out perplexity
on the corpus's held-out books is recorded too, but the choice is made on the features.

Writes benchmarks/results/general_model.{json,md} (each run adds or replaces its rows).
``probe NAME=PATH``: score saved models the same way (the shipped model's own row).
``train FOLDER``: pretrain the recipe's model as ``elmofeat pretrain --recipe`` does,
keeping snapshots of its weights after fractions of its steps (the tokens-seen
measurement: ``probe`` them), and save it as a model folder.
``adapt NAME=PATH``: adaptation settings (learning rate, epochs) of a pretrained model,
each adapted on the first split's training texts and scored as above.
``pooling NAME=PATH``: the frozen mix of a pretrained model with each pooling (mean,
max, meanmax), scored as above.
``hybrid NAME=PATH``: ``make_hybrid`` of a pretrained model with each mix (weight 0.2,
``LogisticRegression(C=10)``), beside TF-IDF alone at C=10, on the same splits.
``penalty NAME=PATH``: LogisticRegression's C (0.03 to 10) for TF-IDF and for the
frozen and concatenated mixes of a pretrained model, scored as above.
``card FOLDER``: the model card (README.md) of a pretrained-model folder, from these
results, the held-out perplexity and (``--suite results.json``) the suite's rows.

Run: python benchmarks/general_model.py candidates [--tokens 3000000] [--data-home DIR]
     [--work DIR] [--only NAME ...]
     python benchmarks/general_model.py probe NAME=PATH [--words N]
     python benchmarks/general_model.py card FOLDER [--suite docs/report/results.json]
     python benchmarks/general_model.py train FOLDER [--fractions 0.125 0.5] [--work DIR]
     python benchmarks/general_model.py adapt NAME=PATH [--learning-rates ...] [--epochs ...]
     python benchmarks/general_model.py pooling NAME=PATH
     python benchmarks/general_model.py hybrid NAME=PATH
     python benchmarks/general_model.py penalty NAME=PATH
     python benchmarks/general_model.py scales FOLDER   (layer scales into config.json)
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

# first: the command's process settings (_common) apply before torch loads
from _common import RESULTS, environment, markdown_table, write_results, write_text_atomically

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

from elmofeat import BiLM, ElmoVectorizer
from elmofeat.suite.data import load_dataset
from elmofeat.suite.settings import BenchmarkSettings
from elmofeat.bilm.corpus import TextFiles
from elmofeat.datasets import get_data_home

TASKS = ("ag_news", "r8", "cr", "mpqa")
PENALTIES = (0.03, 0.1, 0.3, 1.0, 10.0)  # the C of the penalty stage
CANDIDATES = {
    "char-256": dict(token_layer="char"),
    "glove-256": dict(token_layer="word", pretrained_vectors="GLOVE", pretrained_words=100_000),
    "glove-128": dict(token_layer="word", embedding_dim=128, hidden_dim=128,
                      pretrained_vectors="GLOVE", pretrained_words=100_000),
}


def corpus_files(home: Path) -> list[Path]:
    corpus = home / "corpus"
    return sorted(p for p in corpus.glob("*.txt.gz") if "heldout" not in p.name)


def corpus_slice(home: Path, n_words: int) -> list[str]:
    """About ``n_words`` words: every k-th paragraph of every training file."""
    total = 54_743_460  # words of the training files (SOURCES.md)
    every = max(1, total // n_words)
    return [text for i, text in enumerate(TextFiles(corpus_files(home))) if i % every == 0]


def heldout_slice(home: Path, n_paragraphs: int = 2000) -> list[str]:
    texts = TextFiles(home / "corpus" / "gutenberg_heldout.txt.gz")
    return [text for i, text in enumerate(texts) if i % 10 == 0][:n_paragraphs]


def stored_rows() -> dict:
    """The rows of earlier runs (each run adds or replaces its own)."""
    path = RESULTS / "general_model.json"
    return json.loads(path.read_text())["rows"] if path.is_file() else {}


def first_splits(home: Path) -> dict:
    settings = BenchmarkSettings()
    return {task: load_dataset(task, settings, home).splits[0] for task in TASKS}


def accuracy(vectorizer, split, C=1.0) -> float:
    model = make_pipeline(vectorizer, LogisticRegression(max_iter=3000, C=C))
    model.fit(split.X_train, split.y_train)
    return float(np.mean(model.predict(split.X_test) == split.y_test))


def elmo(bilm, layer_mix="frozen", **settings) -> ElmoVectorizer:
    """The vectorizer every probe scores: the frozen mix unless a row names another
    (not ``ElmoVectorizer``'s default, which the candidates' rows predate), seeded, no
    disk cache."""
    return ElmoVectorizer(bilm, layer_mix=layer_mix, cache_dir=None, random_state=0,
                          **settings)


def probe(bilm, splits) -> dict:
    """Frozen-mix accuracy of ``bilm``'s features on each task's first split."""
    return {task: accuracy_of(bilm, split) for task, split in splits.items()}


def run_candidates(args, home: Path) -> None:
    splits = first_splits(home)
    texts = corpus_slice(home, args.tokens)
    heldout = heldout_slice(home)
    n_words = sum(len(t.split()) for t in texts)
    print(f"{len(texts):,} paragraphs, {n_words:,} words", flush=True)
    rows = stored_rows()
    if "tfidf" not in rows:
        rows["tfidf"] = {"config": "TF-IDF + LR (C=1), for reference",
                         "accuracy": {task: accuracy(TfidfVectorizer(sublinear_tf=True), split)
                                      for task, split in splits.items()}}
    glove = str(home / "glove" / "glove.6B.50d.txt.gz")
    for name in args.only or CANDIDATES:
        params = {k: (glove if v == "GLOVE" else v) for k, v in CANDIDATES[name].items()}
        start = time.perf_counter()
        bilm = BiLM(max_epochs=1, validation_fraction=0.01, random_state=0, **params).fit(texts)
        minutes = (time.perf_counter() - start) / 60
        if args.work:
            Path(args.work).mkdir(parents=True, exist_ok=True)
            bilm.save(Path(args.work) / f"{name}.pt")
        rows[name] = {
            "config": json.dumps(CANDIDATES[name]),
            "words": n_words,
            "fit_minutes": round(minutes, 1),
            "heldout_perplexity": bilm.perplexity(heldout),
            "accuracy": probe(bilm, splits),
        }
        print(name, rows[name], flush=True)
        write(rows, args.tokens)


def run_probe(args, home: Path) -> None:
    """Score saved models (``NAME=PATH``) as the candidates are scored."""
    splits = first_splits(home)
    heldout = heldout_slice(home)
    rows = stored_rows()
    for item in args.models:
        name, _, model_path = item.partition("=")
        bilm = BiLM.from_pretrained(model_path)
        rows[name] = {
            "config": json.dumps({k: v for k, v in bilm.get_params().items()
                                  if k in ("token_layer", "embedding_dim", "hidden_dim",
                                           "pretrained_words")}),
            "words": args.words,
            "tokens_seen": sum(h.get("training_tokens", 0) for h in bilm.history_),
            "fit_minutes": round(sum(h["seconds"] for h in bilm.history_) / 60, 1),
            "heldout_perplexity": bilm.perplexity(heldout),
            "accuracy": probe(bilm, splits),
        }
        print(name, rows[name], flush=True)
        write(rows, args.tokens)


class Snapshots:
    """A callback that keeps copies of the weights after given numbers of steps (it reads
    the model only: the run is the recipe's own)."""

    def __init__(self, fractions):
        self.fractions, self.states = fractions, {}

    def on_train_begin(self, trainer):
        steps = trainer.steps_per_epoch * trainer.config.max_epochs
        self.at = {max(1, int(round(f * steps))): f for f in self.fractions}
        self.steps = steps

    def on_step_end(self, trainer):
        if trainer.global_step in self.at:
            import copy

            self.states[self.at[trainer.global_step]] = copy.deepcopy(trainer.lm.state_dict())

    def __getattr__(self, name):  # the hooks it does not use
        if name.startswith("on_") or name in ("close", "load_state_dict"):
            return lambda *args: None
        if name == "state_dict":
            return lambda: {}
        raise AttributeError(name)


def run_train(args, home: Path) -> None:
    """Pretrain the recipe's model (as ``elmofeat pretrain --recipe``), keeping snapshots
    at fractions of its steps; save the model folder and each snapshot as a model."""
    import copy

    from elmofeat.bilm import estimator
    from elmofeat.models import recipes

    recipe = recipes.RECIPES[args.recipe]
    snapshots = Snapshots([f for f in args.fractions if f < 1])
    original = estimator.standard_callbacks
    estimator.standard_callbacks = lambda *a, **k: [*original(*a, **k), snapshots]
    try:
        bilm = BiLM(**recipe.params(home), verbose=True).fit(recipe.corpus(home))
    finally:
        estimator.standard_callbacks = original
    output = Path(args.models[0])
    bilm.save_pretrained(output)
    tokens = bilm.history_[-1]["training_tokens"]
    for fraction, state in snapshots.states.items():
        partial = copy.deepcopy(bilm)
        partial.language_model_.load_state_dict(state)
        partial.history_ = [{**bilm.history_[-1], "fraction_of_steps": fraction,
                             "training_tokens": int(round(fraction * tokens))}]
        partial.save(Path(args.work or output.parent) / f"{args.recipe}-{fraction:g}.pt")
    print(f"saved {output} and {len(snapshots.states)} snapshots", flush=True)


SUITE_ROWS = ("tfidf", "tfidf-c10", "glove", "general-concat", "general-frozen",
              "general-trainable", "general-mlp", "general-adapted", "general-hybrid",
              "general-hybrid-search")


def suite_table(path: Path) -> str:
    """Mean accuracy of the suite's rows for the general model, from a suite results file."""
    if not path.is_file():
        return ""
    results = json.loads(path.read_text())
    keys = [k for k in TASKS if k in results["datasets"]]
    header = ["row", *(results["datasets"][k]["title"] for k in keys)]
    rows = []
    for method in SUITE_ROWS:
        cells = []
        for key in keys:
            splits = results["datasets"][key]["splits"]
            values = [s["methods"][method]["accuracy"] for s in splits if method in s["methods"]]
            cells.append(f"{np.mean(values):.4f}" if len(values) == len(splits) else "")
        if any(cells):
            from elmofeat.suite.methods import METHODS

            rows.append([METHODS[method].label, *cells])
    # The general rows may come from a run joined to the report later (--add-to).
    started = next((run["started"] for run in results.get("added_runs", [])
                    if "general-frozen" in run["methods"]), results["started"])
    return ("Mean accuracy over the suite's splits (`elmofeat benchmark`; AG News 5 folds, "
            "R8 its standard split, CR and MPQA 10 folds; the en-small rows of "
            + started[:10] + "):\n\n"
            + markdown_table(header, rows) + "\n")


def run_card(args, home: Path) -> None:
    """Held-out perplexity of a model folder, then its model card (README.md) from the
    results files: the candidates' table, the first-split probe and the suite."""
    from elmofeat.models import recipes

    from model_card import word_counts

    folder = Path(args.models[0])
    config = json.loads((folder / "config.json").read_text())
    recipe = recipes.RECIPES[args.recipe]
    words = word_counts(home / f for f in recipe.files)  # counted, never typed in
    total_words = sum(words.values())
    books = sum(n for f, n in words.items() if f.startswith("gutenberg")) / total_words
    per_file = ", ".join(f"{f} ({n:,} words)" for f, n in words.items())
    # Held-out perplexity: the model's row of general_recipe.json, which measures every
    # model the same way on the first words of each held-out slice.
    recipe_results = json.loads((RESULTS / "general_recipe.json").read_text())
    ppl = recipe_results["rows"][args.recipe]["heldout_perplexity"]
    heldout_words = recipe_results["heldout_words"]
    ppl_cell = ", ".join(f"{slice_} {value:.1f}" for slice_, value in ppl.items())
    history = config["history"]
    tokens = sum(h.get("training_tokens", 0) for h in history)
    hours = sum(h["seconds"] for h in history) / 3600
    rows = json.loads((RESULTS / "general_model.json").read_text())["rows"]
    name = args.recipe
    environment = rows[name]["measured"]  # the machine that ran `train`
    params = config["params"]
    candidates = [["row", "words", "ag_news", "r8", "cr", "mpqa"]]
    for key, row in rows.items():
        candidates.append([key, f"{row['words']:,}" if row.get("words") else "",
                           *(f"{row['accuracy'][t]:.4f}" for t in TASKS)])
    card = f"""# {name}: a general English biLM for elmofeat

{recipe.description[:1].upper() + recipe.description[1:]}. Load it with `BiLM.from_pretrained("{name}")` or use it through
`ElmoVectorizer(bilm="{name}")`; `ElmoVectorizer(bilm="{name}", adapt_epochs=1)` adapts a
copy to your texts first.

| | |
|---|---|
| architecture | word embedding of {config['params']['embedding_dim']}-wide projection over GloVe 6B 50d vectors (kept frozen), {params['n_layers']} LSTM layers per direction, {params['hidden_dim']} wide, residual; adaptive softmax |
| vocabulary | {config['vocabulary_size']:,} words read; the {config['n_output_words']:,} most frequent corpus words predicted (min count {params['min_count']}) |
| corpus | {per_file} of the staged general corpus (see the data's SOURCES.md): {total_words:,} words (whitespace-separated), {tokens:,} training tokens, read once ({len(history)} epoch) |
| training | {hours:.2f} hours on {environment['cpu_count']} CPU cores ({environment['cpu']}), fp32, batches of {params['batch_size']} windows of at most {params['max_len']} tokens, AdamW at {params['learning_rate']}, seed {params['random_state']} |
| representations | {config['n_representations']} layers per token, {config['output_dim']} wide |
| weights | `bilm.pt`, {config['weights_dtype']}, SHA-256 `{config['weights_sha256']}` (pinned in `elmofeat/bilm/hub.py`) |
| licence | weights: BSD-3-Clause, as elmofeat. Trained on public-domain Project Gutenberg books, the Brown Corpus (redistribution permitted) and US presidential speeches (public domain); GloVe 6B vectors are public domain (PDDL) |

Held-out perplexity, both directions, on about {heldout_words:,} words of each
held-out slice of the corpus (`benchmarks/results/general_recipe.json`): {ppl_cell}.

## What its features are worth

{suite_table(Path(args.suite)) if args.suite else ""}
Configuration chosen by the features (`python benchmarks/general_model.py candidates`):
each candidate pretrained on the same {rows.get('glove-256', {}).get('words', 0):,}-word
slice of the corpus, scored on the first split of each suite task with the frozen mix
and LogisticRegression (C=1); `{name}` itself, scored the same way, after them, then
the rows that name another setting (adaptation, pooling, a hybrid and its C).

{markdown_table(candidates[0], candidates[1:])}

## How it was made

```bash
elmofeat pretrain --recipe {name} --data-home DATA --pretrained -o elmofeat/models/{name}
elmofeat benchmark --output docs/report --data-home DATA
python benchmarks/general_model.py card elmofeat/models/{name} --data-home DATA \\
    --suite docs/report/results.json
```

## Limits

{books:.0%} of the corpus's words are Project Gutenberg books, mostly of 1800-1925 (the rest:
the Brown corpus of 1961 and US presidential speeches): modern words reach the
model through their GloVe vectors (trained on Wikipedia and news), not through
contexts it has read, and words neither the corpus nor GloVe's first 200,000 hold are
`<unk>` unless adaptation (`adapt_epochs`) adds them from your texts. Its LSTMs are
small ({params['hidden_dim']} wide) and saw {tokens / 1e6:.0f}M tokens; ELMo's original model saw about 800M.
"""
    write_text_atomically(folder / "README.md", card)
    print(card)


def run_adapt(args, home: Path) -> None:
    """Adaptation settings, scored as the candidates are: on each task's first split, a
    copy of the model pretrained further on the split's training texts (``warm_start``)
    for each learning rate and number of epochs, then the frozen mix."""
    import copy

    splits = first_splits(home)
    rows = stored_rows()
    name, _, model_path = args.models[0].partition("=")
    base = BiLM.from_pretrained(model_path)
    for learning_rate in args.learning_rates:
        for epochs in args.epochs:
            accuracy = {}
            for task, split in splits.items():
                adapted = copy.deepcopy(base).set_params(
                    warm_start=True, max_epochs=epochs, learning_rate=learning_rate,
                    random_state=0).fit(split.X_train)
                accuracy[task] = accuracy_of(adapted, split)
            key = f"{name} adapted, lr {learning_rate:g}, {epochs} epoch{'s' * (epochs > 1)}"
            rows[key] = {"config": json.dumps({"learning_rate": learning_rate,
                                               "epochs": epochs}),
                         "accuracy": accuracy}
            print(key, accuracy, flush=True)
            write(rows, args.tokens)


def run_pooling(args, home: Path) -> None:
    """The frozen mix of a pretrained model with each pooling, scored as the candidates
    are."""
    splits = first_splits(home)
    rows = stored_rows()
    name, _, model_path = args.models[0].partition("=")
    bilm = BiLM.from_pretrained(model_path)
    for pooling in ("mean", "max", "meanmax"):
        scores = {task: accuracy(elmo(bilm, pooling=pooling), split)
                  for task, split in splits.items()}
        key = f"{name}, frozen mix, pooling={pooling}"
        rows[key] = {"config": json.dumps({"pooling": pooling}), "accuracy": scores}
        print(key, scores, flush=True)
        write(rows, args.tokens)


def run_hybrid(args, home: Path) -> None:
    """``make_hybrid`` with each registered mix of a pretrained model, beside TF-IDF
    alone, both at C=10 (the suite's hybrid rows use the frozen mix)."""
    from elmofeat import make_hybrid
    from elmofeat.mixes import mix_names

    splits = first_splits(home)
    rows = stored_rows()
    name, _, model_path = args.models[0].partition("=")
    bilm = BiLM.from_pretrained(model_path)
    rows["tfidf, C=10"] = {
        "config": "TF-IDF + LR (C=10), for the hybrid rows",
        "accuracy": {task: accuracy(TfidfVectorizer(sublinear_tf=True), split, C=10)
                     for task, split in splits.items()}}
    for mix in mix_names():
        scores = {task: accuracy(make_hybrid(elmo(bilm, layer_mix=mix)), split, C=10)
                  for task, split in splits.items()}
        key = f"TF-IDF + {name} ({mix} mix), make_hybrid, C=10"
        rows[key] = {"config": json.dumps({"layer_mix": mix, "elmo_weight": 0.2, "C": 10}),
                     "accuracy": scores}
        print(key, scores, flush=True)
        write(rows, args.tokens)


def accuracy_of(bilm, split) -> float:
    return accuracy(elmo(bilm), split)


def write(rows: dict, tokens: int, stored_environment: dict | None = None) -> None:
    """Write the results; a row measured now records this machine and the date (rows of
    earlier runs keep theirs: fit minutes depend on the machine). ``stored_environment``:
    the file's own, where the markdown is written again from stored rows."""
    now = stored_environment or environment()
    table = [["row", "words", "tokens seen", "fit min", "held-out ppl", *TASKS, "measured on"]]
    for name, row in rows.items():
        row.setdefault("measured", {key: now[key] for key in ("cpu", "cpu_count", "date")})
        ppl = row.get("heldout_perplexity")
        table.append([name, f"{row['words']:,}" if row.get("words") else "",
                      f"{row['tokens_seen']:,}" if row.get("tokens_seen") else "",
                      row.get("fit_minutes", ""), "" if ppl is None else f"{ppl:.1f}",
                      *(f"{row['accuracy'][t]:.4f}" for t in TASKS),
                      f"{row['measured']['cpu']}, {row['measured']['date'][:10]}"])
    markdown = (
        "## General model: candidate configurations\n\n"
        "Each candidate pretrained one epoch on the same slice of the general corpus (every "
        f"k-th paragraph of its training files, about {tokens:,} words); features scored on "
        "the first split of each suite task with the frozen mix + LogisticRegression (C=1), "
        "unless the row names another setting (adaptation, pooling, a hybrid and its C). "
        "Held-out perplexity on 2,000 paragraphs of the corpus's held-out books (not "
        "comparable across token layers with different vocabularies read).\n\n"
        + markdown_table(table[0], table[1:]))
    write_results("general_model", {"rows": rows}, markdown, environment=stored_environment)


def run_scales(args, home: Path) -> None:
    """The layer scales of a model folder whose weights have none (saved before biLMs
    measured them), measured as ``BiLM.fit`` measures them, on the corpus's held-out
    books (the first 2,000 of every tenth paragraph), written into its config.json:
    ``elmofeat embed`` divides by them. The weights file, and its pinned SHA-256, stay."""
    from elmofeat.mixes.base import layer_spread

    folder = Path(args.models[0])
    bilm = BiLM.from_pretrained(folder)
    scales = layer_spread(*bilm.embed_flat(heldout_slice(home)))
    config = json.loads((folder / "config.json").read_text())
    config["layer_scales"] = [round(float(v), 6) for v in scales]
    config["layer_scales_measured_on"] = ("2,000 paragraphs of the corpus's held-out books "
                                          "(benchmarks/general_model.py scales)")
    write_text_atomically(folder / "config.json", json.dumps(config, indent=2) + "\n")
    print(folder, config["layer_scales"])


def run_penalty(args, home: Path) -> None:
    """LogisticRegression's C for the label-free mixes of a pretrained model (frozen, and
    concatenated: ``ElmoVectorizer``'s default) and for TF-IDF, scored as the candidates
    are: what a search over ``clf__C`` should span for each."""
    splits = first_splits(home)
    rows = stored_rows()
    name, _, model_path = args.models[0].partition("=")
    bilm = BiLM.from_pretrained(model_path)
    features = {"TF-IDF": lambda: TfidfVectorizer(sublinear_tf=True)}
    for mix in ("frozen", "concat"):
        features[f"{name} ({mix} mix)"] = lambda mix=mix: elmo(bilm, layer_mix=mix)
    for label, make in features.items():
        scores = {C: {} for C in PENALTIES}
        for task, split in splits.items():
            vectorizer = make()  # the features once per task, then every C on them
            train = vectorizer.fit_transform(split.X_train)
            test = vectorizer.transform(split.X_test)
            for C in PENALTIES:
                clf = LogisticRegression(max_iter=3000, C=C).fit(train, split.y_train)
                scores[C][task] = float(np.mean(clf.predict(test) == split.y_test))
        for C, accuracy_by_task in scores.items():
            key = f"{label} + LR (C={C:g})"
            rows[key] = {"config": json.dumps({"C": C}), "accuracy": accuracy_by_task}
            print(key, accuracy_by_task, flush=True)
        write(rows, args.tokens)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stage", choices=["candidates", "probe", "card", "train", "adapt",
                                          "pooling", "hybrid", "penalty", "scales"])
    parser.add_argument("--learning-rates", type=float, nargs="+", default=[2e-3, 5e-4],
                        help="adapt: learning rates to try")
    parser.add_argument("--epochs", type=int, nargs="+", default=[1],
                        help="adapt: epochs to try")
    parser.add_argument("--fractions", type=float, nargs="*", default=[0.125, 0.5],
                        help="train: keep the weights after these fractions of the steps")
    parser.add_argument("models", nargs="*", help="probe: NAME=PATH of saved models; card: "
                        "the model folder")
    parser.add_argument("--recipe", default="en-small")
    parser.add_argument("--suite", default=None, help="card: a suite results.json with the "
                        "general model's rows")
    parser.add_argument("--tokens", type=int, default=3_000_000)
    parser.add_argument("--words", type=int, default=None,
                        help="probe: words the probed models were pretrained on")
    parser.add_argument("--data-home", default=None)
    parser.add_argument("--work", default=None, help="keep the candidate models here")
    parser.add_argument("--only", nargs="*", choices=list(CANDIDATES))
    args = parser.parse_args()
    home = Path(get_data_home(args.data_home))
    stages = {"candidates": run_candidates, "probe": run_probe, "card": run_card,
              "train": run_train, "adapt": run_adapt, "pooling": run_pooling,
              "hybrid": run_hybrid, "penalty": run_penalty,
              "scales": run_scales}
    stages[args.stage](args, home)


if __name__ == "__main__":
    main()
