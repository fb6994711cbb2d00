"""The pretraining engine: length-bucketed batches, AdamW, bf16 autocast, validation
perplexity, and data parallelism when run under ``torchrun`` (see
:mod:`elmofeat.bilm.collectives`). Early stopping, checkpoints with exact resume,
progress and a time budget are callbacks (:mod:`elmofeat.bilm.callbacks`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from ..runtime.torch_helpers import adamw, autocast, rng_state, set_rng_state
from .batching import Windows, bucket_batches, iter_batches, make_batch
from .collectives import all_reduce_sum, average_gradients, broadcast_parameters, world
from .model import LanguageModel


@dataclass
class TrainConfig:
    max_epochs: int
    batch_size: int
    learning_rate: float
    weight_decay: float
    clip_norm: float
    patience: int | None
    bf16: bool
    seed: int
    checkpoint_dir: str | None
    checkpoint_every: int | None
    verbose: bool
    device: str
    max_time: float | None = None


def perplexity(mean_nll: float) -> float:
    """``exp(mean_nll)``, infinite rather than an OverflowError for a diverged model."""
    return math.exp(mean_nll) if mean_nll < 700 else math.inf


def evaluate_perplexity(lm: LanguageModel, windows: Windows, chars, batch_size: int,
                        bf16: bool, device: str, desc: str | None = None,
                        threads=None) -> float:
    """Exact perplexity of both directions over ``windows`` (this rank's share, reduced).

    ``desc``: show a progress bar with this description (rank 0 only; it disappears when
    done). ``threads``: the :class:`~elmofeat.runtime.threads.Threads` in force, told
    between batches (an adaptive count follows the machine's load).
    """
    from tqdm.auto import tqdm

    rank, size = world()
    batches = bucket_batches(windows.lengths, batch_size)[rank::size]
    was_training = lm.training
    lm.eval()
    total, count = 0.0, 0
    with torch.inference_mode(), autocast(device, bf16), \
            tqdm(total=len(batches), desc=desc, unit="batch", leave=False,
                 disable=desc is None or rank != 0) as bar:
        for batch in iter_batches(windows, batches, chars, device):
            if threads is not None:
                threads.tick()
            log_likelihood, n = lm.log_likelihood(batch.inputs, batch.word_ids, batch.lengths)
            total, count = total + log_likelihood, count + n
            bar.update(1)
    lm.train(was_training)
    total, count = all_reduce_sum([total, float(count)])
    return perplexity(-total / count) if count else float("nan")


class WindowsData:
    """Training windows held in memory, and the batches of each epoch.

    The batch order of an epoch depends only on ``(seed, epoch)``: a resumed run replays
    exactly the batches an uninterrupted one would have seen. See
    :class:`~elmofeat.bilm.shards.StreamedData` for a corpus streamed from disk: both
    give ``n_tokens`` and ``plan(...)``, a sized object whose ``batch(i)`` is the
    epoch's ``i``-th batch.
    """

    def __init__(self, windows: Windows, chars=None):
        self.windows, self.chars = windows, chars

    @property
    def n_tokens(self) -> int:
        return int((self.windows.lengths - 2).sum())

    def plan(self, seed: int, epoch: int, batch_size: int, rank: int, world_size: int,
             device) -> "_WindowsPlan":
        rng = np.random.default_rng([seed, epoch])
        batches = bucket_batches(self.windows.lengths, batch_size, rng)
        usable = len(batches) - len(batches) % world_size  # equal steps on every rank
        return _WindowsPlan(self, batches[:usable][rank::world_size], device)


class _WindowsPlan:
    def __init__(self, data: WindowsData, batches, device):
        self.data, self.batches, self.device = data, batches, device

    def __len__(self) -> int:
        return len(self.batches)

    def batch(self, i: int):
        return make_batch(self.data.windows, self.batches[i], self.data.chars, self.device)


class Pretrainer:
    """Runs the epochs of one pretraining: batches, steps, validation.

    Everything else (early stopping, checkpoints, progress, a time budget) is a
    callback (see :mod:`elmofeat.bilm.callbacks`).

    Parameters
    ----------
    lm : LanguageModel
    config : TrainConfig
    callbacks : sequence of Callback
        Called in this order at every hook.
    threads : Threads, default=None
        The thread policy in force (:mod:`elmofeat.runtime.threads`), told between steps.
    """

    def __init__(self, lm: LanguageModel, config: TrainConfig, callbacks=(), threads=None):
        self.lm = lm
        self.config = config
        self.callbacks = list(callbacks)
        self.threads = threads
        self.rank, self.world_size = world()
        broadcast_parameters(lm)
        self.optimizer = adamw(lm.parameters(), lr=config.learning_rate,
                               weight_decay=config.weight_decay)
        self.history: list[dict] = []
        self.epoch, self.step_in_epoch, self.global_step = 0, 0, 0
        self.stopped_early = False
        self.train: WindowsData | None = None
        self._running = (0.0, 0, 0.0)  # loss sum, targets, start time of this epoch

    def stop(self) -> None:
        """End training after this step (the epoch is still validated and recorded)."""
        self.stopped_early = True

    # ---------------------------------------------------------------------- state
    def state_dict(self) -> dict:
        """Everything a resumed run needs to continue as if never interrupted."""
        state = {
            "epoch": self.epoch,
            "step_in_epoch": self.step_in_epoch,
            "global_step": self.global_step,
            "lm": self.lm.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            **rng_state(self.config.device),
            "history": self.history,
            "stopped_early": self.stopped_early,
        }
        for callback in self.callbacks:
            state.update(callback.state_dict())
        return state

    def load_state_dict(self, state: dict) -> None:
        self.lm.load_state_dict(state["lm"])
        self.optimizer.load_state_dict(state["optimizer"])
        set_rng_state(state, self.config.device)
        self.epoch, self.step_in_epoch = state["epoch"], state["step_in_epoch"]
        self.global_step, self.history = state["global_step"], state["history"]
        self.stopped_early = state["stopped_early"]
        for callback in self.callbacks:
            callback.load_state_dict(state)

    # -------------------------------------------------------------------- training
    def _epoch_plan(self, train):
        cfg = self.config
        return train.plan(cfg.seed, self.epoch, cfg.batch_size, self.rank, self.world_size,
                          cfg.device)

    @property
    def steps_per_epoch(self) -> int:
        return len(self._epoch_plan(self.train))

    def running_stats(self) -> tuple[float, float]:
        """(LM targets per second, perplexity) of the epoch so far."""
        loss_sum, token_count, start = self._running
        elapsed = time.perf_counter() - start
        return token_count / max(elapsed, 1e-9), perplexity(loss_sum / max(token_count, 1))

    def _step(self, batch) -> float:
        cfg = self.config
        with autocast(cfg.device, cfg.bf16):
            loss = self.lm(batch.inputs, batch.word_ids, batch.lengths)
        if not torch.isfinite(loss):
            raise FloatingPointError(
                f"the LM loss became {loss.item()} at step {self.global_step}; lower "
                "learning_rate or clip_norm"
            )
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        average_gradients(self.lm.parameters())
        nn.utils.clip_grad_norm_(self.lm.parameters(), cfg.clip_norm)
        self.optimizer.step()
        return loss.item()

    def _train_epoch(self, train) -> tuple[float, float, float]:
        plan = self._epoch_plan(train)
        self.lm.train()
        loss_sum, token_count, start = 0.0, 0, time.perf_counter()
        for i in range(self.step_in_epoch, len(plan)):
            if self.threads is not None:  # an adaptive count follows the machine's load
                self.threads.tick()
            batch = plan.batch(i)
            loss = self._step(batch)
            n_targets = 2 * int((batch.lengths - 1).sum())
            loss_sum += loss * n_targets
            token_count += n_targets
            self._running = (loss_sum, token_count, start)
            self.step_in_epoch, self.global_step = i + 1, self.global_step + 1
            for callback in self.callbacks:
                callback.on_step_end(self)
            if self.stopped_early:
                break
        elapsed = time.perf_counter() - start
        loss_sum, token_count, total_elapsed = all_reduce_sum([loss_sum, float(token_count), elapsed])
        if not token_count:
            return float("nan"), 0.0, elapsed
        return (perplexity(loss_sum / token_count), token_count / (total_elapsed / self.world_size),
                elapsed)

    def run(self, train, valid: Windows | None, train_chars=None,
            valid_chars=None) -> list[dict]:
        """Train until ``max_epochs`` or a callback stops it; return the history.

        ``train``: the training data (:class:`WindowsData`, a streamed
        :class:`~elmofeat.bilm.shards.StreamedData`, or bare ``Windows`` with
        ``train_chars``). ``train_chars`` / ``valid_chars`` are the byte tables of each
        set's word types (character CNN only): each ``Windows`` numbers its own types.
        """
        if isinstance(train, Windows):
            train = WindowsData(train, train_chars)
        self.train = train
        try:
            for callback in self.callbacks:
                callback.on_train_begin(self)
            while self.epoch < self.config.max_epochs and not self.stopped_early:
                for callback in self.callbacks:
                    callback.on_epoch_begin(self)
                train_ppl, tokens_per_s, seconds = self._train_epoch(train)
                record = self._end_epoch(train_ppl, tokens_per_s, seconds, valid, valid_chars)
                for callback in self.callbacks:
                    callback.on_epoch_end(self, record)
        finally:
            for callback in self.callbacks:
                callback.close(self)
        for callback in self.callbacks:
            callback.on_train_end(self)
        return self.history

    def _end_epoch(self, train_ppl, tokens_per_s, seconds, valid, valid_chars) -> dict:
        """Validate and record the epoch."""
        cfg = self.config
        if math.isinf(train_ppl):
            raise FloatingPointError(
                f"pretraining diverged: the training perplexity of epoch {self.epoch + 1} "
                f"overflows; lower learning_rate (now {cfg.learning_rate:g}) or clip_norm"
            )
        record = {"epoch": self.epoch + 1, "train_perplexity": train_ppl,
                  "tokens_per_second": tokens_per_s, "seconds": seconds,
                  "validation_perplexity": None}
        if valid is not None and len(valid):
            show = cfg.verbose and self.rank == 0
            record["validation_perplexity"] = evaluate_perplexity(
                self.lm, valid, valid_chars, cfg.batch_size, cfg.bf16, cfg.device,
                desc=f"biLM validation, epoch {self.epoch + 1}" if show else None,
                threads=self.threads)
        self.history.append(record)
        self.epoch, self.step_in_epoch = self.epoch + 1, 0
        return record
