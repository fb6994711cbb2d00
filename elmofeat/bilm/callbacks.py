"""The concerns of a pretraining run beside the training step, one class each.

:class:`~elmofeat.bilm.train.Pretrainer` runs the epochs and calls every callback at
fixed points (as skorch's callbacks are): when training begins, when an epoch begins,
after every optimizer step, after every validated epoch, when training ends, and
``close`` on the way out whatever happened. A callback that carries state across a
checkpoint returns it from ``state_dict`` (its keys join the checkpoint's).

Hooks run in the order of the callback list; :func:`standard_callbacks` gives the order
that makes them agree (early stopping decides before the checkpoint records it, the
checkpoint resumes before the progress bar counts where it starts).
"""

from __future__ import annotations

import copy
import math
import sys
import time
from pathlib import Path

import torch

from .._files import save_torch_atomically

CHECKPOINT_NAME = "checkpoint.pt"
# 2: dropout random numbers drawn differently and the char CNN's feature norm; a
# format-1 checkpoint would not resume to the weights an uninterrupted fit gives.
CHECKPOINT_FORMAT = "elmofeat-bilm-checkpoint-2"


class Callback:
    """A callback that does nothing: subclasses override the hooks they need.

    ``trainer`` is the running :class:`~elmofeat.bilm.train.Pretrainer`; a callback
    stops training with ``trainer.stop()``.
    """

    def on_train_begin(self, trainer) -> None:
        pass

    def on_epoch_begin(self, trainer) -> None:
        pass

    def on_step_end(self, trainer) -> None:
        pass

    def on_epoch_end(self, trainer, record: dict) -> None:
        pass

    def on_train_end(self, trainer) -> None:
        pass

    def close(self, trainer) -> None:
        """Release what the callback holds; called after training, even after an error."""

    def state_dict(self) -> dict:
        return {}

    def load_state_dict(self, state: dict) -> None:
        pass


class EarlyStopping(Callback):
    """Keep the weights of the best validated epoch; stop after ``patience`` epochs
    without improvement (``None``: never stop, still keep the best weights).

    Epochs without a validation perplexity are ignored.
    """

    def __init__(self, patience: int | None):
        self.patience = patience
        self.best_perplexity, self.best_state, self.bad_epochs = math.inf, None, 0

    def on_epoch_end(self, trainer, record):
        ppl = record["validation_perplexity"]
        if ppl is None:
            return
        if ppl < self.best_perplexity:
            self.best_perplexity, self.bad_epochs = ppl, 0
            self.best_state = copy.deepcopy(trainer.lm.state_dict())
        else:
            self.bad_epochs += 1
            if self.patience is not None and self.bad_epochs >= self.patience:
                trainer.stop()

    def on_train_end(self, trainer):
        if self.best_state is not None:
            trainer.lm.load_state_dict(self.best_state)

    def state_dict(self):
        return {"best_perplexity": self.best_perplexity, "best_state": self.best_state,
                "bad_epochs": self.bad_epochs}

    def load_state_dict(self, state):
        self.best_perplexity, self.best_state = state["best_perplexity"], state["best_state"]
        self.bad_epochs = state["bad_epochs"]


class TimeBudget(Callback):
    """Stop after ``seconds`` of training, checked after every step (the partial epoch
    is still validated and recorded)."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self._deadline = None

    def on_train_begin(self, trainer):
        self._deadline = time.perf_counter() + self.seconds

    def on_step_end(self, trainer):
        if time.perf_counter() > self._deadline:
            trainer.stop()


class Checkpoint(Callback):
    """Resume from ``folder/checkpoint.pt`` when there is one; write it (atomically, on
    rank 0) after every epoch and every ``every`` steps.

    Parameters
    ----------
    folder : str or path
    every : int or None
    fingerprint : str
        Identifies the data and configuration; a checkpoint with another fingerprint is
        refused rather than resumed.
    announce : bool
        Say on stderr when a run resumes.
    """

    def __init__(self, folder, every: int | None, fingerprint: str, announce: bool = False):
        self.path = Path(folder) / CHECKPOINT_NAME
        self.every = every
        self.fingerprint = fingerprint
        self.announce = announce

    def on_train_begin(self, trainer):
        if not self.path.is_file():
            return
        trainer.load_state_dict(self._read())
        if self.announce:
            from tqdm.auto import tqdm

            tqdm.write(f"resuming from {self.path} (epoch {trainer.epoch + 1}, "
                       f"step {trainer.step_in_epoch})", file=sys.stderr)

    def on_step_end(self, trainer):
        if self.every and trainer.global_step % self.every == 0:
            self.save(trainer)

    def on_epoch_end(self, trainer, record):
        self.save(trainer)

    def save(self, trainer) -> None:
        if trainer.rank != 0:
            return
        state = {"format": CHECKPOINT_FORMAT, "fingerprint": self.fingerprint,
                 **trainer.state_dict()}
        save_torch_atomically(state, self.path)

    def _read(self) -> dict:
        path = self.path
        try:
            state = torch.load(path, map_location="cpu", weights_only=True)
        except Exception as exc:  # truncated or foreign file: torch's words would mislead
            raise ValueError(
                f"{path} is not an elmofeat biLM checkpoint, or it is damaged (it cannot be "
                f"read as one: {type(exc).__name__}); move it away, or use another "
                "checkpoint folder") from None
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
        return state


class ProgressBar(Callback):
    """One tqdm bar over every epoch (so that its time left is the fit's, not the
    epoch's), with tokens/s and the running perplexity, on stderr."""

    def __init__(self):
        self.bar = None

    def on_train_begin(self, trainer):
        from tqdm.auto import tqdm

        steps = trainer.steps_per_epoch
        n_tokens = trainer.train.n_tokens
        max_epochs = trainer.config.max_epochs
        tqdm.write(f"pretraining the biLM: {n_tokens:,} tokens in {steps:,} batches per "
                   f"epoch, at most {max_epochs} epochs (early stopping may end sooner)",
                   file=sys.stderr)
        self.bar = tqdm(total=steps * max_epochs,
                        initial=trainer.epoch * steps + trainer.step_in_epoch,
                        desc="biLM pretraining", unit="batch")

    def on_epoch_begin(self, trainer):
        self.bar.set_description(f"biLM epoch {trainer.epoch + 1}/{trainer.config.max_epochs}")

    def on_step_end(self, trainer):
        tokens_per_second, ppl = trainer.running_stats()
        self.bar.update(1)
        self.bar.set_postfix(tok_s=f"{tokens_per_second:,.0f}", ppl=f"{ppl:.1f}")

    def on_epoch_end(self, trainer, record):
        ppl = record["validation_perplexity"]
        self.bar.set_postfix(val_ppl="-" if ppl is None else f"{ppl:.1f}", refresh=False)

    def close(self, trainer):
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def standard_callbacks(config, fingerprint: str | None, rank: int = 0) -> list[Callback]:
    """The callbacks a :class:`~elmofeat.bilm.train.TrainConfig` asks for, in order
    (``fingerprint`` is needed only with a ``checkpoint_dir``)."""
    callbacks: list[Callback] = [EarlyStopping(config.patience)]
    if config.checkpoint_dir is not None:
        callbacks.append(Checkpoint(config.checkpoint_dir, config.checkpoint_every, fingerprint,
                                    announce=config.verbose and rank == 0))
    if config.verbose and rank == 0:
        callbacks.append(ProgressBar())
    if config.max_time is not None:
        callbacks.append(TimeBudget(config.max_time))
    return callbacks
