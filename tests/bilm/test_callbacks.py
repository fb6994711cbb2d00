"""elmofeat.bilm.callbacks: early stopping, time budget and checkpoints with exact resume."""

import math
import time

import pytest
import torch

from elmofeat import BiLM
from elmofeat.bilm.batching import make_windows
from elmofeat.bilm.callbacks import Callback, EarlyStopping, TimeBudget
from elmofeat.bilm.model import BiLSTMEncoder, LanguageModel
from elmofeat.bilm.softmax import FullSoftmax
from elmofeat.bilm.token_layers import WordEmbedding
from elmofeat.bilm.train import Pretrainer, TrainConfig
from elmofeat.text import Vocabulary
from .conftest import TINY, weights_of


class FakeTrainer:
    """What a callback sees of a Pretrainer: the model and a way to stop."""

    def __init__(self):
        self.lm = torch.nn.Linear(2, 1)
        self.stopped = False

    def stop(self):
        self.stopped = True


def test_early_stopping_alone_keeps_the_best_weights_and_stops_after_patience():
    trainer, stopping = FakeTrainer(), EarlyStopping(patience=2)
    for ppl, weight in [(10.0, 1.0), (8.0, 2.0), (9.0, 3.0), (None, 4.0)]:
        trainer.lm.weight.data.fill_(weight)
        stopping.on_epoch_end(trainer, {"validation_perplexity": ppl})
    assert not trainer.stopped  # one bad epoch; an epoch without validation does not count
    trainer.lm.weight.data.fill_(5.0)
    stopping.on_epoch_end(trainer, {"validation_perplexity": 8.5})
    assert trainer.stopped and stopping.best_perplexity == 8.0
    stopping.on_train_end(trainer)
    assert torch.all(trainer.lm.weight == 2.0)  # the best epoch's weights
    restored = EarlyStopping(patience=2)
    restored.load_state_dict(stopping.state_dict())
    assert restored.bad_epochs == 2 and restored.best_perplexity == 8.0


def test_early_stopping_without_patience_never_stops():
    trainer, stopping = FakeTrainer(), EarlyStopping(patience=None)
    for ppl in [5.0, 6.0, 7.0, 8.0, 9.0]:
        stopping.on_epoch_end(trainer, {"validation_perplexity": ppl})
    assert not trainer.stopped and stopping.bad_epochs == 4


def test_time_budget_stops_once_its_seconds_are_spent():
    trainer, budget = FakeTrainer(), TimeBudget(0.05)
    budget.on_train_begin(trainer)
    budget.on_step_end(trainer)
    assert not trainer.stopped
    time.sleep(0.06)
    budget.on_step_end(trainer)
    assert trainer.stopped


class Recorder(Callback):
    def __init__(self, log, stop_at_step=None):
        self.log, self.stop_at_step = log, stop_at_step

    def on_train_begin(self, trainer):
        self.log.append("begin")

    def on_epoch_begin(self, trainer):
        self.log.append(f"epoch {trainer.epoch}")

    def on_step_end(self, trainer):
        self.log.append("step")
        if trainer.global_step == self.stop_at_step:
            trainer.stop()

    def on_epoch_end(self, trainer, record):
        self.log.append(f"end {record['epoch']}")

    def on_train_end(self, trainer):
        self.log.append("train end")

    def close(self, trainer):
        self.log.append("close")


def _tiny_pretrainer(callbacks, max_epochs=2):
    docs = [["a", "b", "c"], ["b", "c", "a", "a"]] * 4
    vocabulary = Vocabulary.build(docs, min_count=1, specials=("<pad>", "<unk>", "<bos>", "<eos>"),
                                  unknown="<unk>")
    windows = make_windows(docs, vocabulary, max_len=8, with_types=False)
    torch.manual_seed(0)
    encoder = BiLSTMEncoder(WordEmbedding(len(vocabulary), 4), hidden_dim=4, dropout=0.0)
    lm = LanguageModel(encoder, FullSoftmax(4, len(vocabulary)), dropout=0.0)
    config = TrainConfig(max_epochs=max_epochs, batch_size=4, learning_rate=1e-2,
                         weight_decay=0.0, clip_norm=1.0, patience=None, bf16=False, seed=0,
                         checkpoint_dir=None, checkpoint_every=None, verbose=False,
                         device="cpu")
    return Pretrainer(lm, config, callbacks), windows


def test_the_engine_calls_every_hook_in_order_and_a_callback_can_stop_it():
    log = []
    trainer, windows = _tiny_pretrainer([Recorder(log)])
    history = trainer.run(windows, None)
    assert log == ["begin", "epoch 0", "step", "step", "end 1",
                   "epoch 1", "step", "step", "end 2", "close", "train end"]
    assert [h["epoch"] for h in history] == [1, 2]
    log.clear()
    trainer, windows = _tiny_pretrainer([Recorder(log, stop_at_step=1)], max_epochs=5)
    history = trainer.run(windows, None)
    # The partial epoch is still recorded, then training ends.
    assert log == ["begin", "epoch 0", "step", "end 1", "close", "train end"]
    assert len(history) == 1 and math.isfinite(history[0]["train_perplexity"])


def test_close_runs_even_when_training_fails():
    log = []

    class Boom(Callback):
        def on_step_end(self, trainer):
            raise RuntimeError("boom")

    trainer, windows = _tiny_pretrainer([Recorder(log), Boom()])
    with pytest.raises(RuntimeError, match="boom"):
        trainer.run(windows, None)
    assert log[-1] == "close" and "train end" not in log


def test_early_stopping_keeps_the_best_epoch(corpus):
    bilm = BiLM(**{**TINY, "max_epochs": 30, "patience": 1, "learning_rate": 0.05,
                   "validation_fraction": 0.3}).fit(corpus)
    ppl = [h["validation_perplexity"] for h in bilm.history_]
    assert bilm.n_epochs_ < 30
    assert ppl[-1] >= min(ppl)


def test_interrupted_fit_resumes_to_the_same_weights(corpus, tmp_path, monkeypatch):
    params = {**TINY, "max_epochs": 3, "patience": None, "checkpoint_every": 3}
    uninterrupted = BiLM(**params, checkpoint_dir=tmp_path / "a").fit(corpus)
    assert (tmp_path / "a" / "checkpoint.pt").is_file()

    original_step = torch.optim.AdamW.step
    calls = {"n": 0}

    def step_then_crash(self, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 17:  # mid-epoch 2, two steps after the checkpoint at step 15
            raise KeyboardInterrupt
        return original_step(self, *args, **kwargs)

    monkeypatch.setattr(torch.optim.AdamW, "step", step_then_crash)
    with pytest.raises(KeyboardInterrupt):
        BiLM(**params, checkpoint_dir=tmp_path / "b").fit(corpus)
    monkeypatch.setattr(torch.optim.AdamW, "step", original_step)
    state = torch.load(tmp_path / "b" / "checkpoint.pt", weights_only=True)
    assert state["global_step"] == 15 and state["epoch"] == 1
    resumed = BiLM(**params, checkpoint_dir=tmp_path / "b").fit(corpus)
    for (name, x), y in zip(weights_of(uninterrupted).items(), weights_of(resumed).values()):
        assert torch.equal(x, y), name
    # A checkpoint of other texts is refused, not silently resumed.
    with pytest.raises(ValueError, match="other texts or parameters"):
        BiLM(**params, checkpoint_dir=tmp_path / "b").fit(corpus[:50])
    # So is one written by another elmofeat version, or a foreign file.
    state["format"] = "elmofeat-bilm-checkpoint-1"
    torch.save(state, tmp_path / "b" / "checkpoint.pt")
    with pytest.raises(ValueError, match="another elmofeat version"):
        BiLM(**params, checkpoint_dir=tmp_path / "b").fit(corpus)
    torch.save({"weights": torch.zeros(2)}, tmp_path / "b" / "checkpoint.pt")
    with pytest.raises(ValueError, match="not an elmofeat biLM checkpoint"):
        BiLM(**params, checkpoint_dir=tmp_path / "b").fit(corpus)
