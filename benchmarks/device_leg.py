"""Train one leg of a streamed pretraining on another machine (a lent GPU), and bring
it back as if it had run here.

A lent machine takes at most 64 MiB with each call and gives back at most 64 MiB, while
a run of the capacity curve (``benchmarks/capacity.py``) holds 41M tokens of shards
(180 MB), a 204k-word frozen GloVe layer (82 MB) and its optimizer. A leg carries only
what its steps read:

* the trainer's state at the leg's start (the run's checkpoint, or its step 0: the
  weights as built under the run's seed), less the frozen word layer;
* the shards of the shuffle blocks its steps read (each epoch reads the shards in a
  seeded order, eight to a block), their word ids renumbered so that the layer's rows
  they use come first: the softmax's words keep their ids, so the targets are the
  same, and the other words (which the softmax reads as ``<unk>``) follow;
* those rows, in float16 (finer than the bf16 a GPU step casts them to), LZMA-packed.

There the leg replays the run's batches from its step (the same plan, seed and
epoch), keeps a snapshot of the trainable weights at every token point it passes and
stops at the end of its last block, at an epoch's end or when its time is up; what it
gives back (the trainer's state, split into parts under the size limit, and the
snapshots) becomes, here, the run's checkpoint and ``NAME@TOKENS.pt`` snapshots with
the full word layer. A run then resumes here (``capacity.py train NAME``) or in the
next leg as if uninterrupted: on the CPU, a leg run there and resumed gives the very
weights of an uninterrupted run (``tests/test_device_leg.py``).

The leg's folder must be inside the checkout and ignored by git (``.leg/`` is), so that
the call carries it (``carry: [".leg"]``).

Run: python benchmarks/capacity.py leg-pack w512p --out .leg        (here)
     python benchmarks/device_leg.py .leg --out $OUT --seconds 420     (there)
     python benchmarks/capacity.py leg-unpack w512p --returned DIR      (here)
"""

from __future__ import annotations

# first: the command's process settings (_common) apply before torch loads
import _common  # noqa: F401

import argparse
import copy
import io
import json
import lzma
import os
import shutil
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch

from elmofeat.bilm.callbacks import CHECKPOINT_FORMAT, CHECKPOINT_NAME, Callback, Checkpoint
from elmofeat.bilm.callbacks import EarlyStopping
from elmofeat.bilm.model import build_language_model
from elmofeat.bilm.shards import EncodedCorpus, ShardPlan, StreamedData
from elmofeat.bilm.train import Pretrainer, TrainConfig

EMBEDDING = "encoder.token_layer.embedding.weight"
#: A part of the returned state stays under the lent machine's 16 MiB a file.
PART_BYTES = 15 * 2**20
#: What one call carries, less the checkout: 64 MiB travel, and the checkout's code alone
#: (``elmofeat/`` without the shipped weights, ``benchmarks/*.py``) is about 1.1 MB; move
#: the weights, ``docs/``, ``tests/`` and ``benchmarks/results/`` out for the call (git
#: restores them; no script may write results meanwhile, or it writes a new folder).
CARRY_BUDGET = 62 * 2**20
#: What one call gives back.
RETURN_BUDGET = 62 * 2**20
BUILD_PARAMS = ("token_layer", "embedding_dim", "hidden_dim", "n_layers", "dropout",
                "softmax", "n_samples", "tie_weights", "char_dim", "char_filters",
                "n_highway")


def tokens_read(trainer, n_tokens: int, steps_per_epoch: int) -> int:
    """Training tokens read so far: epochs done plus the epoch's share of steps."""
    return int(round((trainer.epoch + trainer.step_in_epoch / steps_per_epoch) * n_tokens))


# ------------------------------------------------------------------------- here: pack
class _Captured(Exception):
    pass


class _Capture(Callback):
    """At the start of training (after a checkpoint is loaded), keep what a leg needs
    and stop the fit."""

    def on_train_begin(self, trainer):
        self.state = trainer.state_dict()
        self.config = asdict(trainer.config)
        self.steps_per_epoch = trainer.steps_per_epoch
        self.train = trainer.train
        self.lm = copy.deepcopy(trainer.lm).to("cpu")
        self.embedding = self.lm.state_dict()[EMBEDDING].detach().clone()
        self.fingerprint = next((c.fingerprint for c in trainer.callbacks
                                 if isinstance(c, Checkpoint)), None)
        raise _Captured


def capture(bilm, corpus, extra_callbacks=()) -> _Capture:
    """Run ``bilm.fit(corpus)`` up to its first step and return what it held there: its
    checkpoint's state when ``checkpoint_dir`` holds one, else step 0's."""
    from elmofeat.bilm import estimator as bilm_estimator

    if bilm.checkpoint_dir is None:
        raise ValueError("a leg resumes a run: give the BiLM a checkpoint_dir")
    if not (bilm.freeze_embedding and bilm.pretrained_vectors is not None
            and bilm.token_layer == "word"):
        raise ValueError("a leg carries a frozen word layer (token_layer='word', "
                         "pretrained_vectors, freeze_embedding=True) as the rows it reads")
    grab = _Capture()
    original = bilm_estimator.standard_callbacks
    bilm_estimator.standard_callbacks = lambda *a, **k: [*original(*a, **k),
                                                         *extra_callbacks, grab]
    try:
        bilm.fit(corpus)
    except _Captured:
        pass
    finally:
        bilm_estimator.standard_callbacks = original
    if not hasattr(grab, "state"):
        raise RuntimeError("the fit ended before its first step")
    return grab


def save_xz(array: np.ndarray, path: Path) -> None:
    with lzma.open(path, "wb", preset=6) as f:
        np.save(f, array, allow_pickle=False)


def load_xz(path: Path) -> np.ndarray:
    with lzma.open(path, "rb") as f:
        return np.load(f, allow_pickle=False)


def _without_embedding(state: dict) -> dict:
    """The trainer state without the frozen word layer (in ``lm`` and ``best_state``)."""
    out = dict(state)
    out["lm"] = {k: v for k, v in state["lm"].items() if k != EMBEDDING}
    if state.get("best_state") is not None:
        out["best_state"] = {k: v for k, v in state["best_state"].items() if k != EMBEDDING}
    return out


def _with_embedding(state: dict, embedding: torch.Tensor) -> dict:
    out = dict(state)
    out["lm"] = {**state["lm"], EMBEDDING: embedding}
    if state.get("best_state") is not None:
        out["best_state"] = {**state["best_state"], EMBEDDING: embedding}
    return out


def pack(grab: _Capture, bilm, leg: Path, max_blocks: int | None = None,
         carry_budget: int = CARRY_BUDGET, snapshot_tokens=(), rows_dtype=np.float16) -> dict:
    """Write the leg that starts where ``grab`` (see :func:`capture`) stands into the
    folder ``leg`` (refused if it holds files); returns its description.

    ``rows_dtype``: the word layer's rows as carried. float16 is finer than the bf16 a
    GPU step casts them to; a leg on the CPU in float32 needs float32 to be exact.
    """
    leg = Path(leg)
    if leg.exists() and any(leg.iterdir()):
        raise ValueError(f"{leg} holds files: a leg is written into an empty folder")
    (leg / "corpus").mkdir(parents=True, exist_ok=True)
    data: StreamedData = grab.train
    corpus: EncodedCorpus = data.corpus
    epoch, step = int(grab.state["epoch"]), int(grab.state["step_in_epoch"])
    config = grab.config
    if epoch >= config["max_epochs"]:
        raise ValueError("this run has finished: there is no leg left to train")
    plan = ShardPlan(corpus, data.id_map, None, config["seed"], epoch, config["batch_size"],
                     data.buffer_shards)
    first = int(np.searchsorted(plan.starts, step, side="right")) - 1
    n_out = int(bilm.n_output_words_)
    valid = [np.load(corpus.folder / s["ids"]) for s in corpus.meta["valid_shards"]]
    state = _without_embedding(grab.state)
    # preset 9's 64 MiB window finds the early-stopping callback's copy of the best
    # weights (at an epoch's end, the weights themselves): 49 MiB packs to 34, not 45
    packed_state = lzma.compress(_dumps(state), preset=9)
    state_bytes = len(packed_state)
    # Blocks are added while the packed size stays inside the budget.
    blocks, used, packed = [], np.zeros(len(grab.embedding), bool), 0
    used[:n_out] = True
    for ids in valid:
        used[data.id_map[ids]] = True
    shard_ids, row_bytes = {}, 0.9 * np.dtype(rows_dtype).itemsize
    for b in range(first, len(plan.blocks) if max_blocks is None
                   else min(len(plan.blocks), first + max_blocks)):
        trial_used = used.copy()
        trial = {}
        for s in plan.blocks[b]:
            ids = data.id_map[np.load(corpus.folder / corpus.meta["shards"][s]["ids"])]
            trial_used[ids] = True
            trial[int(s)] = ids
        # about 0.95 byte a token packed; a row packs to about 90% of its bytes
        estimate = (packed + sum(len(v) for v in trial.values()) * 0.95 + state_bytes
                    + trial_used.sum() * grab.embedding.shape[1] * row_bytes)
        if blocks and estimate > carry_budget:
            break
        blocks.append(b)
        used, packed = trial_used, packed + sum(len(v) for v in trial.values()) * 0.95
        shard_ids.update(trial)
    device_to_model = np.flatnonzero(used)  # the softmax's words first, in their order
    model_to_device = np.full(len(grab.embedding), -1, np.int64)
    model_to_device[device_to_model] = np.arange(len(device_to_model))
    for s, ids in shard_ids.items():
        save_xz(model_to_device[ids].astype(np.int32), leg / "corpus" / f"train-{s:05d}.npy.xz")
        save_xz(np.load(corpus.folder / corpus.meta["shards"][s]["lengths"]),
                 leg / "corpus" / f"train-{s:05d}-lengths.npy.xz")
    for i, ids in enumerate(valid):
        save_xz(model_to_device[data.id_map[ids]].astype(np.int32),
                 leg / "corpus" / f"valid-{i:05d}.npy.xz")
        save_xz(np.load(corpus.folder / corpus.meta["valid_shards"][i]["lengths"]),
                 leg / "corpus" / f"valid-{i:05d}-lengths.npy.xz")
    rows = grab.embedding[torch.from_numpy(device_to_model)].numpy().astype(rows_dtype)
    save_xz(rows, leg / "rows.npy.xz")
    (leg / "state.pt.xz").write_bytes(packed_state)
    last = blocks[-1]
    stop_step = int(plan.starts[last + 1])
    description = {
        "format": "elmofeat-device-leg-1",
        "build": {k: getattr(bilm, k) for k in BUILD_PARAMS},
        "n_output_words": n_out, "unknown_id": int(bilm.vocabulary_.tokens.index("<unk>")),
        "n_model_words": int(len(grab.embedding)), "n_device_words": int(len(device_to_model)),
        "config": config, "buffer_shards": int(data.buffer_shards),
        "corpus_meta": corpus.meta, "n_tokens": int(data.n_tokens),
        "steps_per_epoch": int(grab.steps_per_epoch),
        "start": {"epoch": epoch, "step": step}, "stop_step": stop_step,
        "blocks": [int(b) for b in blocks], "fingerprint": grab.fingerprint,
        "snapshot_tokens": sorted(int(t) for t in snapshot_tokens),
    }
    (leg / "leg.json").write_text(json.dumps(description, indent=1))
    return description


# ------------------------------------------------------------------------ there: run
class _Pause(Exception):
    pass


class LegRun(Callback):
    """The leg's own concerns: snapshots of the trainable weights at token points, the
    pause at the leg's last step, at the next epoch or when time is up, progress."""

    def __init__(self, leg: dict, out: Path, seconds: float | None, dtype=torch.float16):
        self.leg, self.out, self.seconds, self.dtype = leg, out, seconds, dtype
        self.n_tokens, self.steps = leg["n_tokens"], leg["steps_per_epoch"]
        self.epoch0 = leg["start"]["epoch"]
        self.seconds_before, self.paused = 0.0, None
        self.snapshots: list[str] = []
        self.done: set[int] = set()

    def on_train_begin(self, trainer):
        self.start = time.perf_counter()
        self.step0 = trainer.global_step
        self.seen0 = tokens_read(trainer, self.n_tokens, self.steps)

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def on_epoch_begin(self, trainer):
        if trainer.epoch > self.epoch0:  # another epoch reads other shards
            self.paused = "epoch end"
            raise _Pause

    def on_step_end(self, trainer):
        seen = tokens_read(trainer, self.n_tokens, self.steps)
        for target in self.leg["snapshot_tokens"]:
            point = trainer.epoch * self.n_tokens + target
            if target < self.n_tokens and self.seen0 < point <= seen and point not in self.done:
                self.done.add(point)
                self.snapshot(trainer, point, seen, None)
        if trainer.global_step % 1000 == 0:
            steps = trainer.global_step - self.step0
            print(f"step {trainer.global_step} ({seen:,} tokens): "
                  f"{steps / self.elapsed():.1f} steps/s, "
                  f"{trainer.running_stats()[0]:,.0f} tokens/s, ppl "
                  f"{trainer.running_stats()[1]:.1f}", flush=True)
        if trainer.step_in_epoch == self.leg["stop_step"] < self.steps:
            self.paused = "last block"
            raise _Pause
        if self.seconds is not None and self.elapsed() > self.seconds:
            self.paused = "time"
            raise _Pause

    def on_epoch_end(self, trainer, record):
        point = trainer.epoch * self.n_tokens
        self.snapshot(trainer, point, point, record)

    def snapshot(self, trainer, point: int, seen: int, record) -> None:
        weights = {k: v.detach().to("cpu", self.dtype) for k, v in trainer.lm.state_dict().items()
                   if k != EMBEDDING}
        name = f"snap-{point}.pt"
        torch.save({"weights": weights, "point": point, "seen": seen,
                    "global_step": trainer.global_step, "record": record,
                    "epochs_done": len(trainer.history),
                    "seconds": self.seconds_before + self.elapsed(),
                    "train_perplexity": trainer.running_stats()[1]}, self.out / name)
        self.snapshots.append(name)
        print(f"snapshot {name} at step {trainer.global_step}", flush=True)

    def state_dict(self):
        return {"capacity_seconds": self.seconds_before + self.elapsed()}

    def load_state_dict(self, state):
        self.seconds_before = float(state.get("capacity_seconds", 0.0))


def _to_cpu(value):
    if isinstance(value, torch.Tensor):
        return value.detach().cpu()
    if isinstance(value, dict):
        return {k: _to_cpu(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_to_cpu(v) for v in value]
    return value


def run(leg_dir: Path, out: Path, device: str, seconds: float | None) -> dict:
    """Train the leg in ``leg_dir`` on ``device``; write the snapshots, the trainer's
    state (in parts) and ``result.json`` into ``out``."""
    leg_dir, out = Path(leg_dir), Path(out)
    out.mkdir(parents=True, exist_ok=True)
    leg = json.loads((leg_dir / "leg.json").read_text())
    packed = leg_dir / "corpus"
    folder = Path(tempfile.mkdtemp(prefix="elmofeat-leg-"))  # the shards, unpacked
    meta = copy.deepcopy(leg["corpus_meta"])
    for part in ("shards", "valid_shards"):
        for i, shard in enumerate(meta[part]):
            stem = f"{'train' if part == 'shards' else 'valid'}-{i:05d}"
            if (packed / f"{stem}.npy.xz").exists():
                np.save(folder / f"{stem}.npy", load_xz(packed / f"{stem}.npy.xz"))
                np.save(folder / f"{stem}-lengths.npy", load_xz(packed / f"{stem}-lengths.npy.xz"))
            shard["ids"], shard["lengths"] = f"{stem}.npy", f"{stem}-lengths.npy"
    corpus = EncodedCorpus(folder, meta, [], np.zeros(0, np.int64))
    id_map = np.arange(leg["n_device_words"], dtype=np.int64)
    data = StreamedData(corpus, id_map, buffer_shards=leg["buffer_shards"])
    rows = torch.from_numpy(load_xz(leg_dir / "rows.npy.xz").astype(np.float32))
    lm = build_language_model(leg["n_device_words"], **leg["build"], pretrained=rows.numpy(),
                              freeze_embedding=True, n_output_words=leg["n_output_words"])
    state = _with_embedding(_loads(lzma.decompress((leg_dir / "state.pt.xz").read_bytes())),
                            rows)
    lm.to(device)
    bf16 = device.startswith("cuda") and torch.cuda.is_bf16_supported()
    config = TrainConfig(**{**leg["config"], "device": device, "bf16": bf16 or
                            (leg["config"]["bf16"] and device == "cpu"),
                            "checkpoint_dir": None, "verbose": False, "max_time": None})
    peak = gpu_matmul_peak() if device.startswith("cuda") else None
    here = LegRun(leg, out, seconds)
    trainer = Pretrainer(lm, config, [EarlyStopping(config.patience), here])
    trainer.load_state_dict(state)
    if device.startswith("cuda"):  # dropout draws on the GPU: seeded by the leg's start
        torch.cuda.manual_seed(config.seed + trainer.global_step)
    step0, start = trainer.global_step, time.perf_counter()
    try:
        trainer.run(data, corpus.validation_windows(id_map))
        finished = True
    except _Pause:
        finished = False
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    wall = time.perf_counter() - start
    final = _to_cpu(_without_embedding(trainer.state_dict()))
    blob = _dumps(final)
    parts = [blob[i: i + PART_BYTES] for i in range(0, len(blob), PART_BYTES)]
    for i, part in enumerate(parts):
        (out / f"state.part{i}").write_bytes(part)
    steps = trainer.global_step - step0
    result = {
        "finished": finished, "paused": here.paused, "epoch": trainer.epoch,
        "step_in_epoch": trainer.step_in_epoch, "global_step": trainer.global_step,
        "steps": steps, "seconds": wall, "steps_per_second": steps / wall if wall else None,
        "tokens": tokens_read(trainer, leg["n_tokens"], leg["steps_per_epoch"]),
        "parts": len(parts), "snapshots": here.snapshots, "device": device, "bf16": bf16,
        "gpu": torch.cuda.get_device_name() if device.startswith("cuda") else None,
        "torch": torch.__version__, "bf16_matmul_peak_flops": peak,
        "history": trainer.history,
    }
    (out / "result.json").write_text(json.dumps(result, indent=1))
    print(json.dumps({k: v for k, v in result.items() if k != "history"}), flush=True)
    return result


def gpu_matmul_peak(n: int = 8192, repeats: int = 10) -> float:
    """The best FLOP/s of three timings of ``repeats`` bf16 n x n products on the GPU:
    the peak a training step's matmul work is measured against."""
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    best = 0.0
    for _ in range(4):  # the first round warms up
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(repeats):
            a @ b
        torch.cuda.synchronize()
        best = max(best, 2 * n**3 * repeats / (time.perf_counter() - start))
    return best


def _dumps(obj) -> bytes:
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    return buffer.getvalue()


def _loads(blob: bytes):
    return torch.load(io.BytesIO(blob), map_location="cpu", weights_only=False)


# ---------------------------------------------------------------------- here: unpack
def returned_state(returned: Path, embedding: torch.Tensor) -> tuple[dict, dict]:
    """The leg's result and the trainer state it gave back, with the full word layer."""
    result = json.loads((returned / "result.json").read_text())
    state = _loads(b"".join((returned / f"state.part{i}").read_bytes()
                            for i in range(result["parts"])))
    return result, _with_embedding(state, embedding)


def write_checkpoint(state: dict, fingerprint: str, checkpoint_dir: Path) -> Path:
    """The trainer state as the run's checkpoint (written beside, then renamed in)."""
    path = Path(checkpoint_dir) / CHECKPOINT_NAME
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        torch.save({"format": CHECKPOINT_FORMAT, "fingerprint": fingerprint, **state}, temporary)
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
    return path


def snapshot_weights(returned: Path, name: str, embedding: torch.Tensor) -> tuple[dict, dict]:
    """A snapshot the leg gave back: (its facts, its full state dict in float32)."""
    snap = torch.load(returned / name, map_location="cpu", weights_only=False)
    weights = {k: v.float() for k, v in snap.pop("weights").items()}
    weights[EMBEDDING] = embedding
    return snap, weights


def main():
    parser = argparse.ArgumentParser(description="train a leg written by `capacity.py "
                                                 "leg-pack` (on the lent machine)")
    parser.add_argument("leg", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--seconds", type=float, default=None,
                        help="stop training after this many seconds")
    args = parser.parse_args()
    run(args.leg, args.out, args.device, args.seconds)


if __name__ == "__main__":
    main()
