"""The pretraining engine: length-bucketed batches, AdamW, bf16 autocast, validation
perplexity with early stopping, atomic checkpoints with exact resume, and data
parallelism when run under ``torchrun`` (see :mod:`elmofeat.bilm.distributed`).
"""

from __future__ import annotations

import copy
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from .._threads import tick
from .batching import Windows, bucket_batches, iter_batches
from .distributed import all_reduce_sum, average_gradients, broadcast_parameters, world
from .dropout import ByteDropout
from .io import save_atomically
from .model import reverse_padded

CHECKPOINT_NAME = "checkpoint.pt"
# 2: dropout random numbers drawn differently and the char CNN's feature norm; a
# format-1 checkpoint would not resume to the weights an uninterrupted fit gives.
CHECKPOINT_FORMAT = "elmofeat-bilm-checkpoint-2"


class LanguageModel(nn.Module):
    """The biLM and its output layer; ``forward`` returns the mean LM loss of a batch.

    Forward states at positions ``0 .. n-2`` predict tokens ``1 .. n-1``; backward
    states at ``1 .. n-1`` predict ``0 .. n-2``. One softmax serves both directions
    (as in ELMo).
    """

    def __init__(self, bilm: nn.Module, softmax: nn.Module, dropout: float = 0.1):
        super().__init__()
        self.bilm = bilm
        self.softmax = softmax
        self.dropout = ByteDropout(dropout)

    def _hidden_and_targets(self, inputs, word_ids, lengths):
        # The backward direction is scored in its own reading order: reversed, its
        # state at t predicts reversed token t + 1, just as the forward one does.
        _, forward_states, reversed_states = self.bilm.run_directions(inputs, lengths)
        reversed_ids = reverse_padded(word_ids, lengths)
        steps = word_ids.shape[1] - 1
        mask = torch.arange(steps, device=word_ids.device)[None, :] < (lengths - 1)[:, None]
        hidden = torch.cat([forward_states[-1][:, :-1][mask], reversed_states[-1][:, :-1][mask]])
        targets = torch.cat([word_ids[:, 1:][mask], reversed_ids[:, 1:][mask]])
        return hidden, targets

    def forward(self, inputs, word_ids, lengths) -> torch.Tensor:
        hidden, targets = self._hidden_and_targets(inputs, word_ids, lengths)
        return self.softmax.loss(self.dropout(hidden), targets)

    def log_likelihood(self, inputs, word_ids, lengths) -> tuple[float, int]:
        """Summed exact log-likelihood of both directions and the number of targets."""
        hidden, targets = self._hidden_and_targets(inputs, word_ids, lengths)
        return float(self.softmax.log_likelihood(hidden, targets).sum()), len(targets)


@dataclass
class TrainConfig:
    max_epochs: int
    batch_size: int
    max_tokens: int | None
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


def adamw(parameters, **options) -> torch.optim.AdamW:
    """AdamW with the fused kernel where torch has one for the device.

    On CPU torch's default AdamW loops over the parameters tensor by tensor; the fused
    kernel (torch >= 2.4) makes the optimizer step several times faster, which is a
    sizeable share of a biLM training step (see benchmarks/bilm_pretrain_speed.py).
    """
    parameters = list(parameters)
    try:
        return torch.optim.AdamW(parameters, fused=True, **options)
    except (RuntimeError, TypeError, ValueError):  # older torch, or no fused kernel here
        return torch.optim.AdamW(parameters, **options)


def autocast(device: str, bf16: bool):
    return torch.autocast(device_type=torch.device(device).type, dtype=torch.bfloat16, enabled=bf16)


def perplexity(mean_nll: float) -> float:
    """``exp(mean_nll)``, infinite rather than an OverflowError for a diverged model."""
    return math.exp(mean_nll) if mean_nll < 700 else math.inf


def evaluate_perplexity(lm: LanguageModel, windows: Windows, chars, batch_size: int,
                        bf16: bool, device: str, desc: str | None = None) -> float:
    """Exact perplexity of both directions over ``windows`` (this rank's share, reduced).

    ``desc``: show a progress bar with this description (rank 0 only; it disappears when
    done).
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
            tick()
            log_likelihood, n = lm.log_likelihood(batch.inputs, batch.word_ids, batch.lengths)
            total, count = total + log_likelihood, count + n
            bar.update(1)
    lm.train(was_training)
    total, count = all_reduce_sum([total, float(count)])
    return perplexity(-total / count) if count else float("nan")


class Pretrainer:
    """Runs the epochs of one pretraining, with checkpoints and early stopping.

    Parameters
    ----------
    lm : LanguageModel
    config : TrainConfig
    fingerprint : str
        Identifies the data and configuration; a checkpoint with another fingerprint is
        refused rather than resumed.
    """

    def __init__(self, lm: LanguageModel, config: TrainConfig, fingerprint: str):
        self.lm = lm
        self.config = config
        self.fingerprint = fingerprint
        self.rank, self.world_size = world()
        broadcast_parameters(lm)
        self.optimizer = adamw(lm.parameters(), lr=config.learning_rate,
                               weight_decay=config.weight_decay)
        self.history: list[dict] = []
        self.epoch, self.step_in_epoch, self.global_step = 0, 0, 0
        self.best_perplexity, self.best_state, self.bad_epochs = math.inf, None, 0
        self.stopped_early = False
        self._deadline = None if config.max_time is None else time.perf_counter() + config.max_time

    # ----------------------------------------------------------------- checkpoints
    @property
    def checkpoint_path(self) -> Path | None:
        if self.config.checkpoint_dir is None:
            return None
        return Path(self.config.checkpoint_dir) / CHECKPOINT_NAME

    def _state(self) -> dict:
        return {
            "format": CHECKPOINT_FORMAT,
            "fingerprint": self.fingerprint,
            "epoch": self.epoch,
            "step_in_epoch": self.step_in_epoch,
            "global_step": self.global_step,
            "lm": self.lm.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "torch_rng": torch.get_rng_state(),
            "history": self.history,
            "best_perplexity": self.best_perplexity,
            "best_state": self.best_state,
            "bad_epochs": self.bad_epochs,
            "stopped_early": self.stopped_early,
        }

    def save_checkpoint(self) -> None:
        path = self.checkpoint_path
        if path is None or self.rank != 0:
            return
        save_atomically(self._state(), path)

    def maybe_resume(self) -> bool:
        """Load the checkpoint if there is one; return whether training resumes from it."""
        path = self.checkpoint_path
        if path is None or not path.is_file():
            return False
        try:
            state = torch.load(path, map_location="cpu", weights_only=True)
        except Exception as exc:  # truncated or foreign file
            raise ValueError(f"cannot read checkpoint {path}: {exc}") from exc
        found = state.get("format") if isinstance(state, dict) else None
        if not isinstance(found, str) or not found.startswith("elmofeat-bilm-checkpoint-"):
            raise ValueError(f"{path} is not an elmofeat biLM checkpoint")
        if found != CHECKPOINT_FORMAT:
            raise ValueError(
                f"the checkpoint in {path.parent} was written by another elmofeat version "
                f"({found}; this one resumes {CHECKPOINT_FORMAT}); use another "
                "checkpoint_dir or delete it to start afresh"
            )
        if state["fingerprint"] != self.fingerprint:
            raise ValueError(
                f"the checkpoint in {path.parent} was written for other texts or parameters; "
                "use another checkpoint_dir or delete it to start afresh"
            )
        self.lm.load_state_dict(state["lm"])
        self.optimizer.load_state_dict(state["optimizer"])
        torch.set_rng_state(state["torch_rng"])
        self.epoch, self.step_in_epoch = state["epoch"], state["step_in_epoch"]
        self.global_step, self.history = state["global_step"], state["history"]
        self.best_perplexity, self.best_state = state["best_perplexity"], state["best_state"]
        self.bad_epochs, self.stopped_early = state["bad_epochs"], state["stopped_early"]
        return True

    # -------------------------------------------------------------------- training
    def _epoch_batches(self, train: Windows) -> list[np.ndarray]:
        # The batch order of an epoch depends only on (seed, epoch): a resumed run
        # replays exactly the batches an uninterrupted one would have seen.
        rng = np.random.default_rng([self.config.seed, self.epoch])
        batches = bucket_batches(train.lengths, self.config.batch_size, rng, self.config.max_tokens)
        usable = len(batches) - len(batches) % self.world_size  # equal steps on every rank
        return batches[:usable][self.rank :: self.world_size]

    def _train_epoch(self, train: Windows, chars, progress) -> tuple[float, float, float]:
        cfg = self.config
        batches = self._epoch_batches(train)
        self.lm.train()
        loss_sum, token_count, start = 0.0, 0, time.perf_counter()
        for i in range(self.step_in_epoch, len(batches)):
            tick()  # follow the machine's load (see elmofeat._threads)
            batch = next(iter_batches(train, [batches[i]], chars, cfg.device))
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
            n_targets = 2 * int((batch.lengths - 1).sum())
            loss_sum += loss.item() * n_targets
            token_count += n_targets
            self.step_in_epoch, self.global_step = i + 1, self.global_step + 1
            if progress is not None:
                elapsed = time.perf_counter() - start
                progress.update(1)
                progress.set_postfix(
                    tok_s=f"{token_count / max(elapsed, 1e-9):,.0f}",
                    ppl=f"{perplexity(loss_sum / token_count):.1f}",
                )
            if cfg.checkpoint_every and self.global_step % cfg.checkpoint_every == 0:
                self.save_checkpoint()
            if self._deadline is not None and time.perf_counter() > self._deadline:
                self.stopped_early = True  # time budget spent: validate and stop
                break
        elapsed = time.perf_counter() - start
        loss_sum, token_count, total_elapsed = all_reduce_sum([loss_sum, float(token_count), elapsed])
        if not token_count:
            return float("nan"), 0.0, elapsed
        return (perplexity(loss_sum / token_count), token_count / (total_elapsed / self.world_size),
                elapsed)

    def run(self, train: Windows, valid: Windows | None, train_chars=None,
            valid_chars=None) -> list[dict]:
        """Train until ``max_epochs`` or early stopping; keep the best validated weights.

        ``train_chars`` / ``valid_chars`` are the byte tables of each set's word types
        (character CNN only): each ``Windows`` numbers its own types.
        """
        cfg = self.config
        from tqdm.auto import tqdm

        if self.maybe_resume() and cfg.verbose and self.rank == 0:
            tqdm.write(f"resuming from {self.checkpoint_path} (epoch {self.epoch + 1}, "
                       f"step {self.step_in_epoch})", file=sys.stderr)

        progress = None
        if cfg.verbose and self.rank == 0:
            # One bar over every epoch, so that its time left is the fit's, not the epoch's.
            steps = len(self._epoch_batches(train))
            n_tokens = int((train.lengths - 2).sum())
            tqdm.write(f"pretraining the biLM: {n_tokens:,} tokens in {steps:,} batches per "
                       f"epoch, at most {cfg.max_epochs} epochs (early stopping may end sooner)",
                       file=sys.stderr)
            progress = tqdm(total=steps * cfg.max_epochs,
                            initial=self.epoch * steps + self.step_in_epoch,
                            desc="biLM pretraining", unit="batch")
        try:
            while self.epoch < cfg.max_epochs and not self.stopped_early:
                if progress is not None:
                    progress.set_description(f"biLM epoch {self.epoch + 1}/{cfg.max_epochs}")
                train_ppl, tokens_per_s, seconds = self._train_epoch(train, train_chars, progress)
                self._end_epoch(train_ppl, tokens_per_s, seconds, valid, valid_chars, progress)
        finally:
            if progress is not None:
                progress.close()
        if self.best_state is not None:
            self.lm.load_state_dict(self.best_state)
        return self.history

    def _end_epoch(self, train_ppl, tokens_per_s, seconds, valid, valid_chars, progress) -> None:
        """Validate, record the epoch, decide on early stopping, checkpoint."""
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
            desc = None if progress is None else f"biLM validation, epoch {self.epoch + 1}"
            ppl = evaluate_perplexity(self.lm, valid, valid_chars, cfg.batch_size, cfg.bf16,
                                      cfg.device, desc=desc)
            record["validation_perplexity"] = ppl
            if ppl < self.best_perplexity:
                self.best_perplexity, self.bad_epochs = ppl, 0
                self.best_state = copy.deepcopy(self.lm.state_dict())
            else:
                self.bad_epochs += 1
                if cfg.patience is not None and self.bad_epochs >= cfg.patience:
                    self.stopped_early = True
        self.history.append(record)
        self.epoch, self.step_in_epoch = self.epoch + 1, 0
        self.save_checkpoint()
        if progress is not None:
            progress.set_postfix(val_ppl="-" if record["validation_perplexity"] is None
                                 else f"{record['validation_perplexity']:.1f}", refresh=False)
