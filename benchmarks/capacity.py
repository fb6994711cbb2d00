"""The capacity curve (issue 52): what LSTM width buys, against tokens read.

Each configuration is en-base's recipe (``elmofeat.models.recipes.RECIPES["en-base"]``:
its corpus, its frozen GloVe 6B 100d word layer, its seed) with one change, the LSTM
cell width (``hidden_dim``); a width above ``embedding_dim`` is projected back to it, as
ELMo's cells are (``nn.LSTM(proj_size=...)``), so the features keep en-base's 768
columns and ``transform`` stays affordable. A run keeps a snapshot of its weights
after about 4M, 10M and 20M tokens and after every epoch (41M tokens each), so that
one run gives the whole curve of its width.

Stages (each resumes where a stopped run left off):

``train NAME``
    Pretrain the configuration, checkpointing to ``WORK/ckpt/NAME`` every
    ``--checkpoint-every`` steps; snapshots go to ``WORK/NAME@TOKENS.pt``. The same
    command resumes a stopped run (with any ``--threads``; the thread count may change
    how some kernels sum, so a run resumed with another count is not bit-identical to
    an uninterrupted one). ``--device cuda`` trains on a GPU (bf16 where it has it).
``score [NAME ...]``
    Score every snapshot not yet scored under the suite's protocol, as
    ``benchmarks/general_recipe.py`` scores its candidates (the same splits, features
    and C search), with the held-out perplexity of each held-out slice, and write
    ``benchmarks/results/capacity.{json,md}`` and the curve ``capacity.png``. The
    128-wide point at one epoch is the shipped en-base itself (its recipe unchanged),
    whose row ``general_recipe.py`` scored on the same splits.
``status``
    Tokens done, snapshots kept and the last checkpoint of every configuration.
``leg-pack NAME --out DIR`` / ``leg-unpack NAME --returned DIR``
    Train the next part of a run on a lent GPU (``device_leg.py``, which says what a
    leg carries): pack it here, run ``python benchmarks/device_leg.py DIR --out OUT``
    there, and turn what comes back into the run's checkpoint and snapshots here.

Run: python benchmarks/capacity.py train w256p [--threads 1] [--work DIR]
     python benchmarks/capacity.py score
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

# first: the command's process settings (_common) apply before torch loads
from _common import RESULTS, environment, markdown_table, write_results
from card_facts import paired_cell

import numpy as np
import torch

from elmofeat import BiLM
from elmofeat.bilm import estimator as bilm_estimator
from elmofeat.bilm.callbacks import CHECKPOINT_NAME, Callback
from elmofeat.datasets import get_data_home
from elmofeat.models.recipes import RECIPES

import device_leg
import general_recipe

RECIPE = "en-base"
#: general_recipe.json's row of the shipped en-base (GloVe 100d build).
SHIPPED_ROW = "en-base-glove100"
#: general_recipe.json's rows of the same configuration at width 128 on fewer tokens:
#: the recipe screen's slice (its register shares, 40/25/35, are not en-base's).
SCREEN_ROWS = {"modern-3m-glove100": "128 wide, GloVe 6B 100d, the recipe screen's "
                                     "3M-word slice of the modern mix (not en-base's shares)"}
#: Snapshot points inside an epoch, in training tokens (every epoch's end is one too).
SNAPSHOT_TOKENS = (4_000_000, 10_000_000, 20_000_000)
DEFAULT_WORK = Path("~/elmofeat-work/capacity").expanduser()
DEFAULT_GLOVE = Path("~/elmofeat-work/glove/glove.6B.100d.txt.gz").expanduser()


@dataclass(frozen=True)
class Width:
    """One configuration of the curve: en-base's recipe at another LSTM width."""

    hidden_dim: int
    embedding_dim: int = 128
    epochs: int = 1
    note: str = ""

    @property
    def label(self) -> str:
        if self.hidden_dim == self.embedding_dim:
            return f"{self.hidden_dim} cells"
        return f"{self.hidden_dim} cells -> {self.embedding_dim}"


WIDTHS = {
    "w128": Width(128, note="en-base's own width (its recipe, with snapshots)"),
    "w256p": Width(256, note="256 cells projected to 128: en-base's features, twice the cells"),
    "w512p": Width(512, epochs=2, note="512 cells projected to 128, two epochs"),
    "w256": Width(256, embedding_dim=256, note="256 cells, 256 wide: features of 1,536 columns"),
}


def params(width: Width, home: Path, glove: Path) -> dict:
    """The recipe's BiLM parameters with the width's changes."""
    recipe = RECIPES[RECIPE]
    values = {**recipe.params(home), "pretrained_vectors": str(glove),
              "hidden_dim": width.hidden_dim, "embedding_dim": width.embedding_dim,
              "max_epochs": width.epochs, "patience": None}
    recipe.check_files(values)
    return values


class TokenSnapshots(Callback):
    """Save the model being pretrained as a BiLM file when the tokens read pass each of
    ``at_tokens`` and at every epoch's end, into ``folder`` as ``NAME@TOKENS.pt``.

    A resumed run skips the snapshots already on disk; the seconds of training so far
    travel in the checkpoint, so that each snapshot records the time it cost.
    """

    def __init__(self, bilm: BiLM, name: str, folder: Path, at_tokens):
        self.bilm, self.name, self.folder = bilm, name, Path(folder)
        self.at_tokens = sorted(at_tokens)
        self.seconds_before, self._start = 0.0, None

    def path(self, tokens: int) -> Path:
        return self.folder / f"{self.name}@{tokens}.pt"

    def on_train_begin(self, trainer):
        self.n_tokens = int(trainer.train.n_tokens)
        self.steps = trainer.steps_per_epoch
        self._start = time.perf_counter()

    def seconds(self) -> float:
        return self.seconds_before + (time.perf_counter() - self._start)

    def tokens(self, trainer) -> int:
        return int(round((trainer.epoch + trainer.step_in_epoch / self.steps) * self.n_tokens))

    def on_step_end(self, trainer):
        seen = self.tokens(trainer)
        epoch_start = trainer.epoch * self.n_tokens
        for target in self.at_tokens:
            point = epoch_start + target
            if target < self.n_tokens and point <= seen and not self.path(point).exists():
                self.save(trainer, point, seen, None)

    def on_epoch_end(self, trainer, record):
        # ``trainer.epoch`` already counts the finished epoch
        self.save(trainer, trainer.epoch * self.n_tokens, trainer.epoch * self.n_tokens, record)

    def save(self, trainer, point: int, seen: int, record: dict | None) -> None:
        if self.path(point).exists():
            return
        save_snapshot(self.bilm, copy.deepcopy(trainer.lm), self.path(point), len(trainer.history), {
            "epoch": trainer.epoch if record else trainer.epoch + 1,
            "snapshot_tokens": point, "training_tokens": seen,
            "seconds": round(self.seconds(), 1), "global_step": trainer.global_step,
            "validation_perplexity": record["validation_perplexity"] if record else None,
            "train_perplexity": record["train_perplexity"] if record else trainer.running_stats()[1],
            "threads": torch.get_num_threads(), "device": str(trainer.config.device),
            "bf16": bool(trainer.config.bf16)})
        print(f"\nsnapshot {self.path(point)} ({seen:,} tokens, {self.seconds() / 60:.1f} min)",
              file=sys.stderr, flush=True)

    def state_dict(self):
        return {"capacity_seconds": self.seconds() if self._start is not None else 0.0}

    def load_state_dict(self, state):
        self.seconds_before = float(state.get("capacity_seconds", 0.0))
        self._start = time.perf_counter()


def save_snapshot(bilm: BiLM, lm, path: Path, n_epochs: int, record: dict) -> None:
    """``bilm`` (fitted up to its weights) with the weights of ``lm`` as a BiLM file: a
    snapshot of a run, its facts in ``history_``."""
    partial = bilm.shared_copy()
    partial.language_model_ = lm.to("cpu").eval()
    partial.device = "cpu"
    partial.history_ = [record]
    partial.n_epochs_ = n_epochs
    partial.output_dim_ = 2 * partial.embedding_dim
    partial.n_representations_ = partial.n_layers + 1
    partial.layer_scales_ = None  # the suite's features measure the spread on the task
    partial.save(path)


def run_bilm(name: str, home: Path, work: Path, glove: Path, **settings) -> BiLM:
    """The configuration's BiLM, checkpointing into ``work/ckpt/NAME``."""
    return BiLM(**params(WIDTHS[name], home, glove), checkpoint_dir=str(work / "ckpt" / name),
                **settings)


def share_encoded_corpus(name: str, work: Path) -> None:
    """Every configuration reads the same encoded corpus (the recipe's texts, split by
    its seed): a run without one links another run's files instead of encoding afresh
    (EncodedCorpus.open checks that they encode the same files the same way)."""
    target = work / "ckpt" / name / "corpus"
    sources = [p for p in (work / "ckpt").glob("*/corpus") if p != target
               and (p / "meta.json").is_file()]
    if target.exists() or not sources:
        return
    target.mkdir(parents=True)
    for path in sources[0].iterdir():
        os.link(path, target / path.name)


def train(name: str, home: Path, work: Path, glove: Path, threads, device: str,
          checkpoint_every: int, at_tokens=SNAPSHOT_TOKENS) -> None:
    share_encoded_corpus(name, work)
    bilm = run_bilm(name, home, work, glove, n_threads=threads, device=device,
                    checkpoint_every=checkpoint_every, verbose=True)
    snapshots = TokenSnapshots(bilm, name, work, at_tokens)
    original = bilm_estimator.standard_callbacks
    bilm_estimator.standard_callbacks = lambda *a, **k: [*original(*a, **k), snapshots]
    try:
        bilm.fit(RECIPES[RECIPE].corpus(home))
    finally:
        bilm_estimator.standard_callbacks = original
    bilm.save(work / f"{name}.pt")  # the finished model, layer scales measured
    print(f"saved {work / f'{name}.pt'}", flush=True)


def pack_leg(name: str, home: Path, work: Path, glove: Path, out: Path, blocks,
             budget: float) -> None:
    """Write the next leg of the run ``name`` for a lent machine into ``out`` (see
    ``device_leg.py``); keep here, in ``work/legs/NAME``, what its return needs."""
    share_encoded_corpus(name, work)
    bilm = run_bilm(name, home, work, glove, device="cpu", checkpoint_every=None)
    seconds = TokenSnapshots(bilm, name, work, ())  # carries the run's seconds so far
    grab = device_leg.capture(bilm, RECIPES[RECIPE].corpus(home), [seconds])
    leg = device_leg.pack(grab, bilm, out, blocks, budget, SNAPSHOT_TOKENS)
    keep = work / "legs" / name
    keep.mkdir(parents=True, exist_ok=True)
    torch.save(grab.embedding, keep / "embedding.pt")
    save_snapshot(bilm, grab.lm, keep / "base.pt", len(grab.state["history"]), {})
    (keep / "leg.json").write_text(json.dumps({k: leg[k] for k in (
        "start", "stop_step", "blocks", "fingerprint", "n_tokens", "steps_per_epoch")}))
    size = sum(p.stat().st_size for p in Path(out).rglob("*") if p.is_file())
    print(f"leg of {name}: epoch {leg['start']['epoch'] + 1}, steps {leg['start']['step']} to "
          f"{leg['stop_step']} of {leg['steps_per_epoch']} (blocks {leg['blocks']}), "
          f"{leg['n_device_words']:,} word rows, {size / 2**20:.1f} MiB in {out}")


def unpack_leg(name: str, work: Path, returned: Path) -> None:
    """What a leg gave back (``returned``) becomes the run's checkpoint and snapshots."""
    keep = work / "legs" / name
    leg = json.loads((keep / "leg.json").read_text())
    embedding = torch.load(keep / "embedding.pt", map_location="cpu", weights_only=True)
    result, state = device_leg.returned_state(returned, embedding)
    base = BiLM.load(keep / "base.pt")
    for file in result["snapshots"]:
        snap, weights = device_leg.snapshot_weights(returned, file, embedding)
        lm = copy.deepcopy(base.language_model_)
        lm.load_state_dict(weights)
        record = snap["record"]
        path = work / f"{name}@{snap['point']}.pt"
        save_snapshot(base, lm, path, snap["epochs_done"], {
            "epoch": leg["start"]["epoch"] + 1 if record is None else record["epoch"],
            "snapshot_tokens": snap["point"], "training_tokens": snap["seen"],
            "seconds": round(snap["seconds"], 1), "global_step": snap["global_step"],
            "validation_perplexity": record["validation_perplexity"] if record else None,
            "train_perplexity": record["train_perplexity"] if record else snap["train_perplexity"],
            "threads": None, "device": result["gpu"] or result["device"],
            "bf16": result["bf16"], "weights_dtype": "float16"})
        print(f"snapshot {path}")
    path = device_leg.write_checkpoint(state, leg["fingerprint"], work / "ckpt" / name)
    record_leg(name, leg, result)
    print(f"{path}: epoch {result['epoch'] + 1}, step {result['step_in_epoch']} "
          f"({result['tokens']:,} tokens; the leg: {result['steps']:,} steps in "
          f"{result['seconds']:.0f} s on {result['gpu'] or result['device']}, paused: "
          f"{result['paused']})")


def record_leg(name: str, leg: dict, result: dict) -> None:
    """Keep the facts of a leg trained elsewhere in ``results/capacity_legs.json``."""
    path = RESULTS / "capacity_legs.json"
    legs = json.loads(path.read_text())["legs"] if path.is_file() else {}
    start = leg["start"]["epoch"] * leg["steps_per_epoch"] + leg["start"]["step"]
    start_tokens = int(round(start / leg["steps_per_epoch"] * leg["n_tokens"]))
    legs[f"{name}@{start}"] = {
        "start_step": start, "end_step": result["global_step"],
        "start_tokens": start_tokens, "end_tokens": result["tokens"], "steps": result["steps"],
        "seconds": round(result["seconds"], 1),
        "steps_per_second": round(result["steps_per_second"], 2),
        "tokens_per_second": round((result["tokens"] - start_tokens) / result["seconds"]),
        "paused": result["paused"], "finished": result["finished"],
        **{k: result[k] for k in ("device", "gpu", "bf16", "torch", "bf16_matmul_peak_flops")}}
    path.write_text(json.dumps({"benchmark": "capacity_legs", "command":
                                "python benchmarks/capacity.py leg-unpack NAME --returned DIR",
                                "legs": legs}, indent=2) + "\n")


def snapshot_files(work: Path, names) -> list[tuple[str, int, Path]]:
    found = []
    for name in names:
        for path in work.glob(f"{name}@*.pt"):
            found.append((name, int(path.stem.split("@")[1]), path))
    return sorted(found, key=lambda item: (item[0], item[1]))


def stored_rows() -> dict:
    path = RESULTS / "capacity.json"
    return json.loads(path.read_text())["rows"] if path.is_file() else {}


def score(names, home: Path, work: Path, heldout_words: int) -> None:
    rows = stored_rows()
    todo = [(n, t, p) for n, t, p in snapshot_files(work, names) if f"{n}@{t}" not in rows]
    if "en-base" not in rows:
        # The shipped en-base is this recipe at width 128 after one epoch; general_recipe.py
        # scored it under the same protocol, splits and held-out sample (row SHIPPED_ROW).
        recipe_rows = general_recipe.stored_rows()
        if SHIPPED_ROW in recipe_rows:
            rows["en-base"] = {**recipe_rows[SHIPPED_ROW], "width": "w128",
                               "hidden_dim": 128, "embedding_dim": 128,
                               "note": f"the shipped en-base: general_recipe.json, row {SHIPPED_ROW}"}
        else:
            todo.insert(0, ("w128", None, None))
    for name, note in SCREEN_ROWS.items():
        recipe_rows = general_recipe.stored_rows()
        if name not in rows and name in recipe_rows:
            rows[name] = {**recipe_rows[name], "width": "w128-screen", "hidden_dim": 128,
                          "embedding_dim": 128, "note": note}
    if not todo:
        print("every snapshot is scored")
        write(rows, heldout_words)
        return
    splits = general_recipe.suite_splits(home)
    heldout = general_recipe.heldout_slices(home, heldout_words)
    for name, tokens, path in todo:
        if path is None:  # the shipped model: en-base's recipe at width 128, one epoch
            bilm, key = BiLM.from_pretrained("en-base"), "en-base"
            facts = {"width": "w128", "tokens_seen": sum(h["training_tokens"] for h in bilm.history_),
                     "note": "the shipped en-base"}
        else:
            bilm, key = BiLM.load(path), f"{name}@{tokens}"
            record = bilm.history_[-1]
            facts = {"width": name, "snapshot_tokens": tokens,
                     "tokens_seen": record["training_tokens"],
                     "train_minutes": round(record["seconds"] / 60, 1),
                     "trained_on": {k: record.get(k) for k in ("device", "threads", "bf16")}}
        print(f"== {key}", flush=True)
        row = general_recipe.model_row(bilm, heldout, splits, **facts)
        if path is not None:
            row.pop("fit_minutes", None)  # a snapshot's minutes are train_minutes
        row["hidden_dim"], row["embedding_dim"] = bilm.hidden_dim, bilm.embedding_dim
        rows[key] = row
        write(rows, heldout_words)


def trained_on(facts: dict | None) -> str:
    """"CPU, 1 thread, fp32" or "NVIDIA H200, bf16": where a snapshot's minutes ran."""
    if not facts:
        return ""
    precision = "bf16" if facts.get("bf16") else "fp32"
    if facts.get("device") in (None, "cpu"):
        threads = facts.get("threads")
        return f"CPU, {threads} thread{'s' if threads != 1 else ''}, {precision}"
    return f"{facts['device']}, {precision}"


def suite_mean(row: dict) -> float:
    return float(np.mean([row["scores"][t]["mean"] for t in general_recipe.TASKS]))


def write(rows: dict, heldout_words: int) -> None:
    now = environment()
    tasks = general_recipe.TASKS
    ppl_names = list(general_recipe.HELDOUT)
    header = ["row", "cells -> width", "tokens seen", "train min", "trained on", *tasks, "mean",
              *(f"ppl {n}" for n in ppl_names), "measured on"]
    table = []
    ordered = sorted(rows.items(), key=lambda kv: (kv[1]["hidden_dim"], kv[1]["embedding_dim"],
                                                   kv[1]["tokens_seen"]))
    for name, row in ordered:
        row.setdefault("measured", {key: now[key] for key in ("cpu", "cpu_count", "date")})
        ppl = row["heldout_perplexity"]
        table.append([name, f"{row['hidden_dim']} -> {row['embedding_dim']}",
                      f"{row['tokens_seen']:,}", row.get("train_minutes", ""),
                      trained_on(row.get("trained_on")),
                      *(f"{row['scores'][t]['mean']:.4f}" for t in tasks),
                      f"{suite_mean(row):.4f}", *(f"{ppl[n]:.1f}" for n in ppl_names),
                      f"{row['measured']['cpu']}, {row['measured']['date'][:10]}"])
    references = general_recipe.stored_rows()
    anchors = {name: suite_mean(references[name]) for name in ("tfidf", "minilm")
               if name in references}
    markdown = (
        "## Capacity: what LSTM width buys, against tokens read\n\n"
        "en-base's recipe (its corpus, GloVe 6B 100d word layer and seed) at other LSTM "
        "cell widths; cells above the width are projected back to it. Snapshots of each "
        "run's weights after about 4M, 10M and 20M tokens and at every epoch's end "
        "(`NAME@TOKENS`). Scored as `benchmarks/general_recipe.py` scores its candidates: "
        "`ElmoVectorizer(bilm)`'s defaults, C chosen by inner 3-fold CV, CR and MPQA "
        "stratified 5-fold, AG News one stratified 80/20 split, R8 its standard split. "
        f"Held-out perplexity on about {heldout_words:,} words of each held-out slice "
        "(every k-th paragraph). `train min`: minutes of training to the snapshot, on the "
        "device the row names (`trained_on` in the json), wall time on a machine shared with "
        "other work where the json's `note` says so. `en-base` and `modern-3m-glove100` are "
        "general_recipe.json's rows (the latter: 128 wide, GloVe 6B 100d, the recipe "
        "screen's 3M-word slice of the modern mix, whose register shares are not "
        "en-base's).\n\n"
        + markdown_table(header, table) + "\n")
    if anchors:
        markdown += ("\nReference suite means on the same splits (general_recipe.json): "
                     + ", ".join(f"{k} {v:.4f}" for k, v in anchors.items()) + ".\n")
    if "en-base" in rows:
        paired = [[f"{n} minus en-base", *(paired_cell(r, rows["en-base"], t)
                                            for t in tasks)]
                  for n, r in ordered if n != "en-base"]
        if paired:
            markdown += ("\nEach snapshot minus en-base on the same splits, paired (points, "
                         "mean ± std over the splits and the splits above; AG News and R8 "
                         "one split each). A mean inside its spread is not a win.\n\n"
                         + markdown_table(["rows", *tasks], paired) + "\n")
    for screen in (n for n in SCREEN_ROWS if n in rows):
        early = [[f"{n} minus {screen}", *(paired_cell(r, rows[screen], t) for t in tasks)]
                 for n, r in ordered if "@" in n and r["tokens_seen"] < 10_000_000]
        if early:
            markdown += (f"\nThe early snapshots minus {screen} (128 wide, about as many tokens, "
                         "another slice of the same registers), paired as above.\n\n"
                         + markdown_table(["rows", *tasks], early) + "\n")
    write_results("capacity", {"rows": rows, "heldout_words": heldout_words,
                               "anchors": anchors}, markdown)
    figure(rows, anchors)


def figure(rows: dict, anchors: dict) -> Path | None:
    """Suite mean and Wikipedia held-out perplexity against tokens read, a line per width."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker  # noqa: F401 (matplotlib.ticker below)
    except ImportError:
        return None
    by_width = {}
    for row in rows.values():
        if row.get("width") == "w128-screen":
            continue  # another corpus slice: a marker of its own, not a point of the line
        by_width.setdefault((row["hidden_dim"], row["embedding_dim"]), []).append(row)
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    for (cells, width), points in sorted(by_width.items()):
        points.sort(key=lambda r: r["tokens_seen"])
        tokens = [r["tokens_seen"] / 1e6 for r in points]
        label = f"{cells} cells" + (f" -> {width}" if cells != width else "")
        left.plot(tokens, [suite_mean(r) for r in points], "o-", label=label)
        right.plot(tokens, [r["heldout_perplexity"]["wikipedia"] for r in points], "o-",
                   label=label)
    for name, row in rows.items():
        if row.get("width") == "w128-screen":
            left.plot([row["tokens_seen"] / 1e6], [suite_mean(row)], "x", color="grey",
                      label=f"{name} (128 cells, screen slice)")
            right.plot([row["tokens_seen"] / 1e6], [row["heldout_perplexity"]["wikipedia"]],
                       "x", color="grey", label=f"{name} (128 cells, screen slice)")
    for name, value in anchors.items():
        left.axhline(value, ls="--", lw=1, color="grey")
        left.text(0.01, value, {"tfidf": "TF-IDF", "minilm": "all-MiniLM-L6-v2"}.get(name, name),
                  transform=left.get_yaxis_transform(), fontsize=8, va="bottom")
    for axis in (left, right):
        axis.set_xscale("log")
        axis.set_xticks([2, 4, 10, 20, 40, 80])
        axis.get_xaxis().set_major_formatter(matplotlib.ticker.ScalarFormatter())
        axis.get_xaxis().set_minor_formatter(matplotlib.ticker.NullFormatter())
        axis.set_xlabel("training tokens (millions)")
        axis.legend(fontsize=8)
    left.set_ylabel("suite mean accuracy (4 tasks)")
    right.set_ylabel("held-out perplexity, Wikipedia")
    fig.tight_layout()
    path = RESULTS / "capacity.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def status(work: Path) -> None:
    for name, width in WIDTHS.items():
        checkpoint = work / "ckpt" / name / CHECKPOINT_NAME
        snaps = [t for n, t, _ in snapshot_files(work, [name])]
        line = f"{name} ({width.label}, {width.epochs} epoch(s)): snapshots {snaps or 'none'}"
        if checkpoint.is_file():
            state = torch.load(checkpoint, map_location="cpu", weights_only=True)
            line += (f"; checkpoint at epoch {state['epoch'] + 1}, step {state['step_in_epoch']}, "
                     f"{state.get('capacity_seconds', 0) / 3600:.2f} h trained")
        print(line)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stage", choices=("train", "score", "status", "leg-pack", "leg-unpack"))
    parser.add_argument("names", nargs="*", help=f"configurations ({', '.join(WIDTHS)})")
    parser.add_argument("--data-home", default=None)
    parser.add_argument("--work", type=Path, default=DEFAULT_WORK,
                        help="snapshots and checkpoints (outside the work tree)")
    parser.add_argument("--glove-100d", type=Path, default=DEFAULT_GLOVE,
                        help="GloVe 6B 100d text file (benchmarks/convert_glove_100d.py)")
    parser.add_argument("--threads", type=int, default=None,
                        help="torch threads for training (default: torch's setting)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--checkpoint-every", type=int, default=500, help="steps")
    parser.add_argument("--snapshot-tokens", type=int, nargs="*", default=list(SNAPSHOT_TOKENS),
                        help="snapshot points inside an epoch, in training tokens")
    parser.add_argument("--heldout-words", type=int, default=100_000)
    parser.add_argument("--out", type=Path, help="leg-pack: the leg's folder (empty)")
    parser.add_argument("--blocks", type=int, default=None,
                        help="leg-pack: at most this many shuffle blocks")
    parser.add_argument("--budget-mb", type=float, default=device_leg.CARRY_BUDGET / 2**20,
                        help="leg-pack: the most the leg may weigh")
    parser.add_argument("--returned", type=Path,
                        help="leg-unpack: the folder the lent machine's files came back in")
    args = parser.parse_args()
    unknown = [n for n in args.names if n not in WIDTHS]
    if unknown:
        parser.error(f"unknown configurations {unknown}; known: {list(WIDTHS)}")
    home = Path(get_data_home(args.data_home))
    args.work.mkdir(parents=True, exist_ok=True)
    if args.stage == "train":
        if len(args.names) != 1:
            parser.error("train takes one configuration")
        train(args.names[0], home, args.work, args.glove_100d, args.threads, args.device,
              args.checkpoint_every, args.snapshot_tokens)
    elif args.stage in ("leg-pack", "leg-unpack"):
        if len(args.names) != 1:
            parser.error(f"{args.stage} takes one configuration")
        if args.stage == "leg-pack":
            if args.out is None:
                parser.error("leg-pack needs --out")
            pack_leg(args.names[0], home, args.work, args.glove_100d, args.out, args.blocks,
                     args.budget_mb * 2**20)
        else:
            if args.returned is None:
                parser.error("leg-unpack needs --returned")
            unpack_leg(args.names[0], args.work, args.returned)
    elif args.stage == "score":
        score(args.names or list(WIDTHS), home, args.work, args.heldout_words)
    else:
        status(args.work)


if __name__ == "__main__":
    main()
