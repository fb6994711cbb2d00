"""Torch threads that give way to busy cores (elmofeat._threads)."""

import subprocess
import sys
import time

import pytest
import torch

from elmofeat import BiLM, _threads
from elmofeat._threads import CpuLoad, adaptive_threads, tick

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


@pytest.mark.parametrize("own, other, threads", [
    (2.0, 0.0, 2),   # an idle neighbourhood: all cores
    (1.0, 1.0, 1),   # a neighbour keeps a core busy: give it way
    (1.2, 0.8, 1),
    (1.8, 0.2, 2),   # a little background noise does not cost a thread
])
def test_threads_follow_the_cores_that_others_leave_free(monkeypatch, own, other, threads):
    machine = FakeMachine()
    load = CpuLoad(read_stat=machine.read, own_cpu_seconds=lambda: machine.own, cores={0, 1})
    monkeypatch.setattr(_threads, "_shared_load", load)
    monkeypatch.setattr(_threads, "_recent", None)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        with adaptive_threads(None):
            assert torch.get_num_threads() == 2  # no measurement yet: torch's setting
            machine.advance(own, other)
            monkeypatch.setattr(_threads, "INTERVAL", 0.0)
            tick()
            assert torch.get_num_threads() == threads
        assert torch.get_num_threads() == 2  # restored
    finally:
        torch.set_num_threads(before)


def test_fixed_threads_and_unmeasurable_machines_keep_their_count(monkeypatch):
    before = torch.get_num_threads()
    with adaptive_threads(1):
        assert torch.get_num_threads() == 1
        tick()  # a fixed count is never re-decided
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


def test_the_thread_count_does_not_change_the_weights():
    from elmofeat.bilm.io import weights_digest

    texts = make_topic_corpus(200)[0]
    params = dict(embedding_dim=32, hidden_dim=32, max_epochs=1, batch_size=16, random_state=0)
    one = BiLM(**params, n_threads=1).fit(texts)
    two = BiLM(**params, n_threads=2).fit(texts)
    assert weights_digest(one) == weights_digest(two)
