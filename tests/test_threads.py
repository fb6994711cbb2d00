"""Torch threads that give way to busy cores (elmofeat.runtime.threads)."""

import subprocess
import sys
import time

import numpy as np
import pytest
import torch

from elmofeat import BiLM
from elmofeat.runtime import threads as _threads
from elmofeat.runtime.threads import CpuLoad, ThreadPolicy

from .estimator_checks import make_topic_corpus


def _stat(per_core):
    """A /proc/stat text with (busy, idle) ticks per core."""
    lines = ["cpu  0 0 0 0 0 0 0 0 0 0"]
    lines += [f"cpu{i} {busy} 0 0 {idle} 0 0 0 0 0 0" for i, (busy, idle) in enumerate(per_core)]
    return "\n".join(lines + ["intr 1 2 3", "ctxt 4"])


class FakeMachine:
    """Two cores; ``advance`` runs a second of work: this process's and a neighbour's."""

    def __init__(self):
        self.ticks = [[500, 1500], [700, 1300]]  # since boot
        self.own = 0.0

    def read(self):
        return _stat(self.ticks)

    def advance(self, own_cores, other_cores, seconds=1.0):
        hz = _threads._CLOCK_TICKS
        busy = own_cores + other_cores
        for core in range(2):
            used = min(1.0, max(0.0, busy - core)) * hz * seconds
            self.ticks[core][0] += used
            self.ticks[core][1] += hz * seconds - used
        self.own += own_cores * seconds


def _install(monkeypatch, machine, interval=None):
    """Make ``machine`` the one elmofeat.runtime.threads measures, with no earlier reading."""
    load = CpuLoad(read_stat=machine.read, own_cpu_seconds=lambda: machine.own, cores={0, 1})
    monkeypatch.setattr(_threads, "_shared_load", load)
    monkeypatch.setattr(_threads, "_recent", None)
    monkeypatch.setattr(_threads, "_last_sample", None)
    if interval is not None:
        monkeypatch.setattr(_threads, "INTERVAL", interval)
    return machine


@pytest.mark.parametrize("own, other, threads", [
    (2.0, 0.0, 2),   # an idle neighbourhood: all cores
    (1.0, 1.0, 1),   # a neighbour keeps a core busy: give it way
    (1.2, 0.8, 1),
    (1.8, 0.2, 2),   # a little background noise does not cost a thread
])
def test_threads_follow_the_cores_that_others_leave_free(monkeypatch, own, other, threads):
    machine = _install(monkeypatch, FakeMachine())
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        with ThreadPolicy(None).applied() as in_force:
            assert torch.get_num_threads() == 2  # no measurement yet: torch's setting
            machine.advance(own, other)
            monkeypatch.setattr(_threads, "INTERVAL", 0.0)
            in_force.tick()
            assert torch.get_num_threads() == threads
        assert torch.get_num_threads() == 2  # restored
    finally:
        torch.set_num_threads(before)


def test_short_successive_blocks_still_adapt(monkeypatch):
    # transform opens one block per chunk of documents, each shorter than the interval:
    # the load is measured across blocks, not from each block's start.
    machine = _install(monkeypatch, FakeMachine(), interval=0.0)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        with ThreadPolicy(None).applied() as in_force:
            machine.advance(1.0, 1.0)  # no tick inside: the block is short
        with ThreadPolicy(None).applied() as in_force:
            assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


def test_fixed_threads_and_unmeasurable_machines_keep_their_count(monkeypatch):
    before = torch.get_num_threads()
    with ThreadPolicy(1).applied() as in_force:
        assert torch.get_num_threads() == 1
        in_force.tick()  # a fixed count is never re-decided
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    # No /proc/stat (another OS), or a CPU quota below the visible cores: no adapting.
    assert CpuLoad(read_stat=lambda: None, cores={0, 1}).sample() is None
    assert CpuLoad(read_stat=lambda: _stat([(0, 0), (0, 0)]), cores=None).sample() is None
    monkeypatch.setattr(_threads, "cpu_count", lambda: 1)
    assert _threads._usable_cores() is None or len(_threads._usable_cores()) <= 1


def test_a_real_busy_process_is_seen_as_busy():
    load = CpuLoad()
    if load.cores is None:
        pytest.fail("this test machine's CPU load should be measurable (Linux, no quota)")
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.3)  # the interpreter has started
        before = load.sample()
        time.sleep(1.0)
        after = load.sample()
    finally:
        spinner.kill()
        spinner.wait()
    assert load.others_busy_cores(before, after) >= 0.7


def test_training_keeps_its_thread_count_unless_auto(monkeypatch):
    machine = _install(monkeypatch, FakeMachine(), interval=0.0)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        with ThreadPolicy(None, training=True).applied() as in_force:  # reproducible weights: no adapting
            machine.advance(1.0, 1.0)
            in_force.tick()
            assert torch.get_num_threads() == 2
        with ThreadPolicy("auto", training=True).applied() as in_force:  # asked for: adapts
            machine.advance(1.0, 1.0)
            in_force.tick()
            assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


class BusyMachine(FakeMachine):
    """Every reading finds that a neighbour kept one core busy since the last one."""

    def read(self):
        self.advance(1.0, 1.0)
        return super().read()


def _thread_counts_during(monkeypatch, fit):
    machine = _install(monkeypatch, BusyMachine(), interval=0.0)
    counts, real_set = [], torch.set_num_threads
    monkeypatch.setattr(torch, "set_num_threads", lambda n: (counts.append(n), real_set(n))[1])
    before = torch.get_num_threads()
    real_set(2)
    try:
        result = fit()
    finally:
        real_set(before)
    return result, counts


def test_default_pretraining_on_a_busy_machine_gives_the_idle_weights(monkeypatch):
    # The thread count changes how some training kernels sum (at some widths the weights
    # differ between 1 and 2 threads: benchmarks/thread_invariance.py), so the default
    # must not follow the load.
    from elmofeat.bilm.io import weights_digest

    texts = make_topic_corpus(200)[0]
    params = dict(embedding_dim=16, hidden_dim=16, max_epochs=1, batch_size=16,
                  validation_fraction=0.2, random_state=0)
    torch.set_num_threads(2)
    idle = weights_digest(BiLM(**params).fit(texts))
    busy, counts = _thread_counts_during(monkeypatch, lambda: weights_digest(BiLM(**params).fit(texts)))
    assert busy == idle
    assert 1 not in counts  # never gave way while training
    # "auto" gives way (on this fake machine, at once).
    _, counts = _thread_counts_during(monkeypatch, lambda: BiLM(**params, n_threads="auto").fit(texts))
    assert 1 in counts


def test_embedding_does_not_depend_on_the_thread_count():
    texts = make_topic_corpus(200)[0]
    bilm = BiLM(embedding_dim=64, hidden_dim=64, max_epochs=1, batch_size=16, random_state=0).fit(texts)
    one = np.concatenate(bilm.set_params(n_threads=1).embed(texts[:50]))
    two = np.concatenate(bilm.set_params(n_threads=2).embed(texts[:50]))
    np.testing.assert_array_equal(one, two)


@pytest.mark.parametrize("value, error, match", [
    ("many", ValueError, "'n_threads' parameter .* str among {'auto'} or None. Got 'many'"),
    (0, ValueError, "'n_threads' parameter .* Got 0 instead"),
    (True, TypeError, "'n_threads' parameter .* Got True instead"),
    (2.5, TypeError, "'n_threads' parameter .* Got 2.5 instead"),
])
def test_bad_thread_counts_are_refused_before_torch_sees_them(value, error, match):
    with pytest.raises(error, match=match):
        ThreadPolicy(value)


def test_mlp_features_do_not_depend_on_blas_threads():
    """The MLP mix's products ran on however many threads BLAS had: a fresh process
    under load (another BLAS thread count) gave features 1e-6 apart."""
    from threadpoolctl import threadpool_limits

    from elmofeat import ElmoVectorizer

    texts, y = make_topic_corpus(60)
    vec = ElmoVectorizer(BiLM(embedding_dim=8, hidden_dim=8, max_epochs=1, random_state=0),
                         layer_mix="mlp", cache_dir=None, random_state=0).fit(texts, y)
    reference = vec.transform(texts)
    for limit in (1, 2):
        with threadpool_limits(limits=limit, user_api="blas"):
            np.testing.assert_array_equal(vec.transform(texts), reference)


# ------------------------------------------- one policy, passed down (the outermost wins)
def _threads_during_steps(monkeypatch):
    """Record torch's thread count at every pretraining step, mix-training batch and
    embedding batch."""
    from elmofeat.bilm import inference, train
    from elmofeat.mixes import head

    seen = {"pretraining": [], "mix": [], "embedding": []}
    real_step = train.Pretrainer._step
    monkeypatch.setattr(train.Pretrainer, "_step", lambda self, batch: (
        seen["pretraining"].append(torch.get_num_threads()), real_step(self, batch))[1])
    real_segment_pool = head.segment_pool
    monkeypatch.setattr(head, "segment_pool", lambda *a: (
        seen["mix"].append(torch.get_num_threads()), real_segment_pool(*a))[1])
    real_iter = inference.iter_batches

    def iter_batches(*args):
        for batch in real_iter(*args):
            seen["embedding"].append(torch.get_num_threads())
            yield batch
    monkeypatch.setattr(inference, "iter_batches", iter_batches)
    return seen


def test_a_vectorizers_thread_count_holds_through_its_bilm_and_mix(monkeypatch):
    """ElmoVectorizer(n_threads=1) runs everything at 1 thread, even with a biLM whose own
    n_threads says otherwise: the outermost caller's choice wins."""
    from elmofeat import ElmoVectorizer, clear_caches

    texts, y = make_topic_corpus(60)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        seen = _threads_during_steps(monkeypatch)
        clear_caches()
        vec = ElmoVectorizer(BiLM(embedding_dim=8, hidden_dim=8, max_epochs=1, random_state=0,
                                  n_threads=2),
                             layer_mix="mlp", mix_epochs=1, mlp_dim=8, n_threads=1, cache_dir=None,
                             random_state=0).fit(texts, y)
        vec.transform(texts[:5])
        assert seen["pretraining"] and seen["mix"] and seen["embedding"]
        assert {n for counts in seen.values() for n in counts} == {1}
        assert torch.get_num_threads() == 2  # the caller's count, restored
    finally:
        torch.set_num_threads(before)


def test_auto_re_decides_during_the_pretraining_a_vectorizer_runs(monkeypatch):
    """ElmoVectorizer(n_threads="auto") with a biLM of its own (n_threads=None): the
    pretraining follows the load (it gave way on this busy fake machine), where the
    biLM's own None would keep torch's count."""
    from elmofeat import ElmoVectorizer, clear_caches

    texts = make_topic_corpus(200)[0]
    seen = _threads_during_steps(monkeypatch)

    def fit(n_threads):
        clear_caches()
        ElmoVectorizer(BiLM(embedding_dim=8, hidden_dim=8, max_epochs=1, batch_size=16,
                            random_state=0),
                       n_threads=n_threads, cache_dir=None).fit(texts)

    _thread_counts_during(monkeypatch, lambda: fit("auto"))
    assert 1 in seen["pretraining"]
    seen["pretraining"].clear()
    _thread_counts_during(monkeypatch, lambda: fit(None))
    assert set(seen["pretraining"]) == {2}  # reproducible: torch's count throughout
