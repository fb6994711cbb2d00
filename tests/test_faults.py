"""Faults a real process meets: ``kill -9`` while saving and while pretraining."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest
import torch

from elmofeat import BiLM

from .estimator_checks import make_topic_corpus

posix_only = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
TINY = dict(embedding_dim=8, hidden_dim=8, batch_size=8, random_state=0)


def _start(code: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], cwd=os.getcwd(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for(path, process, timeout=120):
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert process.poll() is None, process.stderr.read()[-2000:]
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


@posix_only
@pytest.mark.parametrize("delay", [0.0, 0.15, 0.4])
def test_kill_during_save_leaves_a_loadable_file(tmp_path, delay):
    """A process saving two models in turn onto one path, killed at some moment: the
    path holds one of the two, complete (saves go through a temporary file)."""
    corpus = make_topic_corpus(40)[0]
    models = [BiLM(**TINY, max_epochs=1).fit(corpus), BiLM(**{**TINY, "random_state": 1},
                                                             max_epochs=1).fit(corpus)]
    for i, model in enumerate(models):
        model.save(tmp_path / f"model{i}.pt")
    target = tmp_path / "model.pt"
    code = f"""
        from elmofeat import BiLM
        models = [BiLM.load({str(tmp_path / "model0.pt")!r}), BiLM.load({str(tmp_path / "model1.pt")!r})]
        models[0].save({str(target)!r})
        i = 0
        while True:
            i += 1
            models[i % 2].save({str(target)!r})
    """
    process = _start(code)
    _wait_for(target, process)
    time.sleep(delay)
    process.send_signal(signal.SIGKILL)
    process.wait()
    loaded = BiLM.load(target)  # never a half-written file
    digests = [torch.cat([p.flatten() for p in m.language_model_.state_dict().values()])
               for m in models]
    mine = torch.cat([p.flatten() for p in loaded.language_model_.state_dict().values()])
    assert any(torch.equal(mine, d) for d in digests)


@posix_only
def test_kill_during_pretraining_resumes_to_the_same_weights(tmp_path):
    corpus = make_topic_corpus(120)[0]
    params = {**TINY, "max_epochs": 4, "patience": None, "checkpoint_every": 5}
    uninterrupted = BiLM(**params, checkpoint_dir=tmp_path / "a").fit(corpus)
    (tmp_path / "corpus.txt").write_text("\n".join(corpus))
    checkpoint = tmp_path / "b" / "checkpoint.pt"
    code = f"""
        import time, torch
        from elmofeat import BiLM
        texts = open({str(tmp_path / "corpus.txt")!r}).read().split("\\n")
        step = torch.optim.AdamW.step
        def slow_step(self, *args, **kwargs):
            time.sleep(0.02)  # leaves time to be killed between checkpoints
            return step(self, *args, **kwargs)
        torch.optim.AdamW.step = slow_step
        BiLM(**{params!r}, checkpoint_dir={str(tmp_path / "b")!r}).fit(texts)
        print("finished")
    """
    process = _start(code)
    _wait_for(checkpoint, process)
    time.sleep(0.3)
    process.send_signal(signal.SIGKILL)
    out, _ = process.communicate()
    assert "finished" not in out  # it really was killed mid-fit
    state = torch.load(checkpoint, weights_only=True)
    assert 0 < state["global_step"]
    resumed = BiLM(**params, checkpoint_dir=tmp_path / "b").fit(corpus)
    for (name, a), b in zip(uninterrupted.language_model_.state_dict().items(),
                            resumed.language_model_.state_dict().values()):
        assert torch.equal(a, b), name
