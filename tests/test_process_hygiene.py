"""elmofeat is a guest in the user's process: importing it, fitting and transforming
leave the environment, warnings filters, malloc, torch's thread count and the global
random states as they were, after a normal call, an error or a KeyboardInterrupt."""

import json
import os
import subprocess
import sys

import pytest
import torch

from elmofeat import BiLM, clear_caches

from .estimator_checks import make_topic_corpus

SCRIPT = r"""
import importlib, json, os, pkgutil, random, sys, warnings
import numpy as np
import torch
# What a user of the field has loaded already; some of these add warnings filters of
# their own when first imported (scipy does), which are not elmofeat's to answer for.
import pandas, scipy.sparse, scipy.special, sklearn.linear_model, sklearn.model_selection

torch.set_num_threads(2)
# torch's first optimizer imports torch._dynamo, which sets TORCHINDUCTOR_CACHE_DIR: a
# change of torch's own that any torch user gets (docs/user_guide.md lists it).
torch.optim.AdamW([torch.zeros(1, requires_grad=True)])
warnings.simplefilter("default", DeprecationWarning)  # the user's own filter
before = {"environ": dict(os.environ), "filters": repr(warnings.filters),
          "threads": torch.get_num_threads(), "torch_rng": torch.get_rng_state().sum().item(),
          "numpy_rng": repr(np.random.get_state()[1][:4]), "random": random.getstate()[1][:4]}

import elmofeat
from elmofeat import BiLM, ElmoVectorizer
from elmofeat.runtime import malloc as _malloc
for module in pkgutil.walk_packages(elmofeat.__path__, "elmofeat."):  # every import-time effect
    if module.name not in ("elmofeat.__main__",):
        importlib.import_module(module.name)

sys.path.insert(0, os.path.dirname({tests!r}))
from tests.estimator_checks import make_topic_corpus

docs, y = make_topic_corpus(60)
bilm = BiLM(embedding_dim=8, hidden_dim=16, max_epochs=1, random_state=0)  # projected LSTMs
vec = ElmoVectorizer(bilm, layer_mix="trainable", cv=2, cache_dir=None, random_state=0)
vec.fit(docs, y)
vec.transform(docs[:5])
ElmoVectorizer(bilm, layer_mix="frozen", cache_dir=None, n_threads=1).fit_transform(docs)
# Every way a fitted biLM comes back: the shipped model (its first load in this process),
# a file, a model folder, a pickle.
ElmoVectorizer(cache_dir=None, random_state=0).fit(docs[:5])
import tempfile, joblib
with tempfile.TemporaryDirectory() as folder:
    vec.bilm_.save(folder + "/bilm.pt")
    BiLM.load(folder + "/bilm.pt")
    vec.bilm_.save_pretrained(folder + "/model")
    BiLM.from_pretrained(folder + "/model")
    joblib.dump(vec, folder + "/vec.joblib")
    joblib.load(folder + "/vec.joblib")
elmofeat.clear_caches()

after = {"environ": dict(os.environ), "filters": repr(warnings.filters),
         "threads": torch.get_num_threads(), "torch_rng": torch.get_rng_state().sum().item(),
         "numpy_rng": repr(np.random.get_state()[1][:4]), "random": random.getstate()[1][:4]}
after["malloc_touched"] = _malloc._glibc.cache_info().currsize > 0
print(json.dumps({"before": before, "after": after}))
"""


def test_import_fit_and_transform_leave_the_process_as_it_was():
    tests = os.path.dirname(__file__)
    environment = {k: v for k, v in os.environ.items() if k not in ("GOMP_SPINCOUNT",)}
    out = subprocess.run([sys.executable, "-c", SCRIPT.replace("{tests!r}", repr(tests))],
                         env=environment, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    before, after = result["before"], result["after"]
    assert after.pop("malloc_touched") is False  # no mallopt, no malloc_trim by default
    assert set(after["environ"]) - set(before["environ"]) == set()
    assert after["environ"] == before["environ"]
    assert after["filters"] == before["filters"]
    assert after == before
    # torch's notice about projected LSTMs stayed silent all the same
    assert "LSTM with projections" not in out.stderr


class Interrupt(KeyboardInterrupt):
    pass


@pytest.mark.parametrize("error", [RuntimeError("boom"), Interrupt()])
@pytest.mark.parametrize("n_threads", [1, "auto", None])
def test_the_thread_count_is_restored_after_an_error_or_an_interrupt(monkeypatch, error, n_threads):
    docs, _ = make_topic_corpus(40)
    original = torch.get_num_threads()
    torch.set_num_threads(2)
    fitted = BiLM(embedding_dim=8, hidden_dim=8, max_epochs=1, random_state=0).fit(docs)

    def fail():
        torch.set_num_threads(1)  # as an adaptive block would on a busy machine
        raise error

    monkeypatch.setattr("elmofeat.runtime.threads.Threads.tick", lambda threads: fail())
    clear_caches()
    try:
        for call in (lambda: BiLM(embedding_dim=8, hidden_dim=8, max_epochs=1, random_state=0,
                                  n_threads=n_threads).fit(docs),
                     lambda: fitted.set_params(n_threads=n_threads).embed(docs)):
            with pytest.raises(type(error)):
                call()
            assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(original)
