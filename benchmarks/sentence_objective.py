"""A sentence-level objective on the biLM's pooled layers, without labels: a first screen.

Scaling the language model alone left the suite's features flat
(``general_recipe.py``: 3.6M to 14.4M tokens seen). This tries what a sentence encoder
is trained for: a pretrained candidate biLM (``--model``, a ``general_recipe.py`` model
kept under ``--work``) is trained further on consecutive dialogue turns as
input/response pairs (the ``dialogue_*_train`` files: turn i and turn i + 1 of the same
file; a pair may straddle two conversations where one ends), with an in-batch
contrastive loss (InfoNCE, both directions, temperature ``--temperature``) on what
``ElmoVectorizer``'s default features are made of: each layer mean-pooled over the
turn's tokens and divided by its spread, the three side by side, L2-normalised. The
token layer's frozen vectors stay as they were; every parameter the pretraining trained
learns (the LSTM layers, and a projection of the vectors where the model has one). Then the features of
the trained biLM are scored exactly as ``general_recipe.py`` scores a candidate, and the
row is added to benchmarks/results/general_recipe.{json,md} as ``<model>+pairs`` (or
``--name``).

``--model`` is a ``general_recipe.py`` model kept under ``--work`` or a registered
pretrained model (``en-base``). A run on a lent GPU trains there and scores here, in two
stages: ``--stage train --device cuda --work DIR`` keeps the trained biLM and its
training facts in ``DIR`` (``NAME.pt``, ``NAME.json``); ``--stage score --work DIR``
scores them on this machine and writes the row.

Run: python benchmarks/sentence_objective.py [--model modern-12m] [--minutes 10]
     [--epochs 1] [--batch 128] [--learning-rate 5e-4] [--temperature 0.05]
     [--device cpu] [--stage all|train|score] [--name NAME]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import time
from pathlib import Path

# first: the command's process settings (_common) apply before torch loads
import general_recipe as recipe
from _common import cpu_description

import numpy as np
import torch
from torch.nn import functional as F

from elmofeat import BiLM
from elmofeat.bilm.batching import make_batch
from elmofeat.bilm.hub import registered_name
from elmofeat.datasets import get_data_home


def dialogue_pairs(home: Path, bilm, every: int, seed: int):
    """``(first, second)`` windows of consecutive turns, each turn one window of 1 to
    ``max_len`` tokens; every ``every``-th pair, shuffled."""
    texts = list(recipe.register_files(home, recipe.REGISTERS["dialogue"]))
    starts = range(0, len(texts) - 1, every)
    # only the turns that a kept pair uses are tokenized
    needed = sorted({j for i in starts for j in (i, i + 1)})
    tokens = dict(zip(needed, bilm.tokenize([texts[j] for j in needed])))
    kept = [i for i in starts
            if 0 < len(tokens[i]) <= bilm.max_len and 0 < len(tokens[i + 1]) <= bilm.max_len]
    order = np.random.RandomState(seed).permutation(len(kept))
    first = bilm._windows([tokens[kept[j]] for j in order])
    second = bilm._windows([tokens[kept[j] + 1] for j in order])
    assert len(first) == len(second) == len(kept)
    return first, second


def pooled(encoder, batch, scales) -> torch.Tensor:
    """``(batch, n_layers * dim)``: each layer mean-pooled over the content tokens (not
    ``<bos>``/``<eos>``), divided by its spread, side by side, unit length."""
    layers = encoder.layer_representations(batch.inputs, batch.lengths)  # (b, t, L, d)
    positions = torch.arange(layers.shape[1], device=layers.device)
    content = (positions[None, :] >= 1) & (positions[None, :] < (batch.lengths[:, None] - 1))
    mask = content.to(layers.dtype)[:, :, None, None]
    means = (layers * mask).sum(1) / mask.sum(1)
    return F.normalize((means / scales[None, :, None]).flatten(1), dim=1)


def train(bilm, first, second, args) -> dict:
    """Up to ``args.epochs`` passes over the pairs (each in a new seeded order), stopped
    after ``args.minutes``."""
    lm = bilm.language_model_
    encoder = lm.encoder
    device = next(encoder.parameters()).device
    scales = torch.as_tensor(np.asarray(bilm.layer_scales_, dtype=np.float32), device=device)
    params = [p for p in encoder.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=args.learning_rate)
    torch.manual_seed(args.seed)
    rng = np.random.RandomState(args.seed)
    lm.train()
    labels = torch.arange(args.batch, device=device)
    start, step, losses = time.perf_counter(), 0, []
    n_batches = len(first) // args.batch
    order = np.arange(len(first))
    while time.perf_counter() - start < 60 * args.minutes and step < n_batches * args.epochs:
        if step and step % n_batches == 0:
            order = rng.permutation(len(first))
        rows = order[(step % n_batches) * args.batch:(step % n_batches + 1) * args.batch]
        a = pooled(encoder, make_batch(first, rows, None, device), scales)
        b = pooled(encoder, make_batch(second, rows, None, device), scales)
        logits = a @ b.T / args.temperature
        loss = (F.cross_entropy(logits, labels) + F.cross_entropy(logits.T, labels)) / 2
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimizer.step()
        losses.append(loss.item())
        step += 1
        if step % 50 == 0:
            print(f"step {step}: loss {np.mean(losses[-50:]):.3f}", flush=True)
    lm.eval()
    return {"steps": step, "pairs": step * args.batch, "distinct_pairs": len(first),
            "epochs": step / n_batches, "minutes": (time.perf_counter() - start) / 60,
            "device": str(device), "device_name": device_name(device),
            "first_loss": float(np.mean(losses[:20])), "last_loss": float(np.mean(losses[-20:]))}


def training_settings(args) -> dict:
    return {"batch": args.batch, "learning_rate": args.learning_rate,
            "temperature": args.temperature, "every": args.every, "seed": args.seed}


def device_name(device) -> str:
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    return f"{os.cpu_count()} CPUs, {cpu_description()}"


def load_base(model: str, work: Path, device: str):
    """A registered pretrained model by name, else a ``general_recipe.py`` model file."""
    if registered_name(model, prefer_local=False):
        return BiLM.from_pretrained(model, device=device)
    return copy.deepcopy(BiLM.load(work / f"{model}.pt", device=device))


def score(name: str, bilm, facts: dict, args, home: Path) -> None:
    rows = recipe.stored_rows()
    heldout = recipe.heldout_slices(home, args.heldout_words)
    base = rows.get(args.model, {})
    base_config = base.get("config", {})
    rows[name] = recipe.model_row(
        bilm, heldout, recipe.suite_splits(home),
        config={"corpus": base_config.get("corpus", "") if isinstance(base_config, dict) else "",
                "from": args.model,
                "objective": "dialogue next-turn InfoNCE on the pooled default features",
                # the training stage's settings (a score stage's own flags may differ)
                **facts.get("settings", training_settings(args))},
        note=f"{args.model} + {facts['pairs']:,} dialogue pairs ({facts['epochs']:.2f} passes "
             f"over {facts['distinct_pairs']:,}; {facts['minutes']:.1f} min on "
             f"{facts['device_name']}), loss {facts['first_loss']:.2f} -> {facts['last_loss']:.2f}",
        sentence_objective=facts)
    recipe.write(rows, args.heldout_words)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="modern-12m")
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--epochs", type=float, default=1,
                        help="passes over the pairs at most (training also stops at --minutes)")
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--learning-rate", type=float, default=5e-4)
    parser.add_argument("--temperature", type=float, default=0.05)
    parser.add_argument("--every", type=int, default=2, help="keep every k-th pair")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data-home", default=None)
    parser.add_argument("--work", default=os.path.expanduser("~/elmofeat-work/recipe"))
    parser.add_argument("--heldout-words", type=int, default=100_000)
    parser.add_argument("--device", default="cpu", help="where to train (cpu, cuda)")
    parser.add_argument("--stage", choices=["all", "train", "score"], default="all",
                        help="train: keep NAME.pt and NAME.json under --work, write no row; "
                        "score: score what a train stage kept")
    parser.add_argument("--name", default=None, help="the row's name (default MODEL+pairs)")
    parser.add_argument("--no-score", action="store_true",
                        help="train only: no model saved, no row written (a smoke run)")
    args = parser.parse_args()
    home, work = Path(get_data_home(args.data_home)), Path(args.work)
    name = args.name or f"{args.model}+pairs"
    if args.stage == "score":
        facts = json.loads((work / f"{name}.json").read_text())
        score(name, BiLM.load(work / f"{name}.pt"), facts, args, home)
        return
    bilm = load_base(args.model, work, args.device)
    first, second = dialogue_pairs(home, bilm, args.every, args.seed)
    print(f"{len(first):,} pairs", flush=True)
    facts = {**train(bilm, first, second, args), "settings": training_settings(args)}
    print(facts, flush=True)
    if args.no_score:
        return
    work.mkdir(parents=True, exist_ok=True)
    bilm.save(work / f"{name}.pt")
    if args.stage == "train":
        (work / f"{name}.json").write_text(json.dumps(facts, indent=1))
        return
    score(name, BiLM.load(work / f"{name}.pt"), facts, args, home)


if __name__ == "__main__":
    main()
