"""Large freed blocks kept in the heap while elmofeat's torch work runs (elmofeat.runtime.malloc)."""

import json
import os
import platform
import subprocess
import sys
import threading

import numpy as np
import pytest

import elmofeat
from elmofeat import BiLM, ElmoVectorizer, clear_caches
from elmofeat.runtime import malloc as _malloc
from elmofeat.runtime.malloc import (DYNAMIC_LIMITS, M_MMAP_THRESHOLD, M_TRIM_THRESHOLD, MMAP_THRESHOLD,
                              TRIM_THRESHOLD, reuse_large_blocks, user_tunes_malloc)

from .estimator_checks import make_topic_corpus

SET = [("mallopt", M_MMAP_THRESHOLD, MMAP_THRESHOLD), ("mallopt", M_TRIM_THRESHOLD, TRIM_THRESHOLD)]
RESTORED = [("mallopt", M_MMAP_THRESHOLD, DYNAMIC_LIMITS[0]),
            ("mallopt", M_TRIM_THRESHOLD, DYNAMIC_LIMITS[1]), ("malloc_trim", 0)]


class FakeLibc:
    """Records the calls a glibc would receive."""

    def __init__(self):
        self.calls = []

    def mallopt(self, parameter, value):
        self.calls.append(("mallopt", parameter, value))
        return 1

    def malloc_trim(self, pad):
        self.calls.append(("malloc_trim", pad))
        return 1


@pytest.fixture
def fake_libc(monkeypatch):
    """A fake glibc, with the opt-in (``set_config(malloc_tuning=True)``) on."""
    libc = FakeLibc()
    monkeypatch.setattr(_malloc, "_glibc", lambda: libc)
    monkeypatch.setattr(_malloc, "enabled", True)
    for name in _malloc.USER_SETTINGS + ("GLIBC_TUNABLES",):
        monkeypatch.delenv(name, raising=False)
    return libc


def test_sets_the_thresholds_inside_and_restores_and_trims_after(fake_libc):
    with reuse_large_blocks() as active:
        assert active is True
        assert fake_libc.calls == SET
    assert fake_libc.calls == SET + RESTORED


def test_nested_and_concurrent_blocks_set_once_and_restore_once(fake_libc):
    inside, leave = threading.Event(), threading.Event()

    def other_thread():
        with reuse_large_blocks():
            inside.set()
            leave.wait(5)

    with reuse_large_blocks():
        with reuse_large_blocks():
            assert fake_libc.calls == SET
        worker = threading.Thread(target=other_thread)
        worker.start()
        assert inside.wait(5)
    assert fake_libc.calls == SET  # the other thread's block still runs
    leave.set()
    worker.join()
    assert fake_libc.calls == SET + RESTORED


def test_an_error_inside_still_restores(fake_libc):
    with pytest.raises(RuntimeError, match="boom"):
        with reuse_large_blocks():
            raise RuntimeError("boom")
    assert fake_libc.calls == SET + RESTORED
    assert _malloc._depth == 0


def test_off_unless_the_user_opts_in(fake_libc, monkeypatch):
    """glibc cannot restore its dynamic rule nor a user's own threshold: by default a
    fit, a transform and clearing the caches leave malloc alone."""
    monkeypatch.setattr(_malloc, "enabled", False)
    assert elmofeat.get_config()["malloc_tuning"] is False
    clear_caches()
    docs, y = make_topic_corpus(40)
    elmo = ElmoVectorizer(BiLM(embedding_dim=8, hidden_dim=8, max_epochs=1, random_state=0),
                          layer_mix="trainable", cv=2, cache_dir=None).fit(docs, y)
    elmo.transform(docs[:3])
    clear_caches()
    assert fake_libc.calls == []
    with elmofeat.config_context(malloc_tuning=True):
        assert elmofeat.get_config()["malloc_tuning"] is True
        with reuse_large_blocks() as active:
            assert active is True
        _malloc.release_free_memory()
    assert fake_libc.calls == SET + RESTORED + [("malloc_trim", 0)]
    assert elmofeat.get_config()["malloc_tuning"] is False
    with pytest.raises(TypeError, match="malloc_tuning must be True or False"):
        elmofeat.set_config(malloc_tuning="yes")


@pytest.mark.parametrize("setting", [{"MALLOC_MMAP_THRESHOLD_": "65536"}, {"MALLOC_TRIM_THRESHOLD_": "0"},
                                     {"MALLOC_TOP_PAD_": "0"},
                                     {"GLIBC_TUNABLES": "glibc.malloc.mmap_threshold=65536"}])
def test_the_users_malloc_setting_wins(fake_libc, setting):
    assert user_tunes_malloc(setting)
    with reuse_large_blocks(environ=setting) as active:
        assert active is False
    assert fake_libc.calls == []


def test_other_tunables_are_not_a_malloc_setting():
    assert not user_tunes_malloc({"GLIBC_TUNABLES": "glibc.cpu.hwcaps=-AVX512F", "PATH": "/bin"})


def test_does_nothing_without_glibc(monkeypatch):
    monkeypatch.setattr(_malloc, "_glibc", lambda: None)
    with reuse_large_blocks() as active:
        assert active is False


def test_fits_run_inside_the_block_and_transform_does_not(fake_libc, monkeypatch):
    seen = []
    original = BiLM._fit

    def spy(self, X, threads):
        seen.append(_malloc._depth)
        return original(self, X, threads)

    monkeypatch.setattr(BiLM, "_fit", spy)
    clear_caches()  # a biLM pretrained by another test would not be pretrained again
    fake_libc.calls.clear()  # (clearing layers another test left trims the heap)
    docs, y = make_topic_corpus(60)
    elmo = ElmoVectorizer(BiLM(embedding_dim=8, hidden_dim=8, max_epochs=1, random_state=0),
                          layer_mix="trainable", cv=2, cache_dir=None).fit(docs, y)
    assert seen == [2]  # inside ElmoVectorizer.fit's block and BiLM.fit's own
    assert fake_libc.calls == SET + RESTORED  # set once, restored once
    # transform leaves malloc alone: a call on one document would pay the trim each time
    elmo.transform(["stocks fell as the markets closed", "the team won its match"])  # not cached
    elmo.bilm_.embed(["one more new text"])
    assert fake_libc.calls == SET + RESTORED


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's malloc only")
def test_the_real_glibc_setting_changes_no_result(monkeypatch):
    """Only where memory comes from changes: the same fit gives the same weights and
    features with the setting and without it (a user's own malloc setting)."""
    assert _malloc._glibc() is not None
    monkeypatch.setattr(_malloc, "enabled", True)
    docs, _ = make_topic_corpus(80)
    params = dict(embedding_dim=8, hidden_dim=8, max_epochs=1, batch_size=16, random_state=0)
    with_setting = BiLM(**params).fit(docs)
    layers_with = with_setting.embed_flat(docs)[0]
    monkeypatch.setenv("MALLOC_TOP_PAD_", str(128 * 1024))  # keeps ours out
    with reuse_large_blocks() as active:
        assert active is False
    without = BiLM(**params).fit(docs)
    for (name, a), b in zip(with_setting.language_model_.state_dict().items(),
                            without.language_model_.state_dict().values()):
        assert np.array_equal(a.numpy(), b.numpy()), name
    np.testing.assert_array_equal(layers_with, without.embed_flat(docs)[0])


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's malloc only")
def test_a_user_thread_allocating_during_a_tuned_fit_is_safe(monkeypatch):
    """mallopt runs while another thread allocates and frees blocks on both sides of the
    thresholds: that thread's data stays intact and the fit's weights are the same."""
    monkeypatch.setattr(_malloc, "enabled", True)
    docs, _ = make_topic_corpus(60)
    params = dict(embedding_dim=8, hidden_dim=8, max_epochs=1, batch_size=16, random_state=0)
    reference = BiLM(**params).fit(docs)
    stop, errors, rounds = threading.Event(), [], [0]

    def allocate():
        sizes = [1 << 10, 1 << 20, 40 << 20, 200 << 20]  # below, between and above both
        try:
            while not stop.is_set():
                for n, size in enumerate(sizes):
                    block = np.full(size // 8, float(n + rounds[0]))
                    if not (block[0] == block[-1] == n + rounds[0]):
                        errors.append(size)
                    del block
                rounds[0] += 1
        except Exception as exc:  # pragma: no cover - what the test looks for
            errors.append(exc)

    worker = threading.Thread(target=allocate)
    worker.start()
    try:
        for _ in range(3):  # each fit sets the thresholds and sets them back
            tuned = BiLM(**params).fit(docs)
    finally:
        stop.set()
        worker.join()
    assert errors == [] and rounds[0] > 0
    for a, b in zip(reference.language_model_.state_dict().values(),
                    tuned.language_model_.state_dict().values()):
        assert np.array_equal(a.numpy(), b.numpy())


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's malloc only")
def test_freed_memory_stays_in_the_heap_during_the_block_and_is_given_back_after():
    """A training step frees hundreds of MB that the next step allocates again: inside
    the block glibc keeps all of it at the heap's top (no trim, so no fresh page faults
    at the next step); when the block ends the heap is trimmed. Run in a child: the
    opt-in changes the process's malloc for good."""
    code = r"""
import ctypes, json
import elmofeat
from elmofeat.runtime.malloc import reuse_large_blocks

libc = ctypes.CDLL(None)
libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]

class Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
        "uordblks", "fordblks", "keepcost")]

libc.mallinfo2.restype = Mallinfo2

def churn():  # five 80 MB blocks (below the 128 MiB threshold), touched, then freed
    blocks = [libc.malloc(80 << 20) for _ in range(5)]
    for block in blocks:
        ctypes.memset(block, 1, 80 << 20)
    for block in reversed(blocks):
        libc.free(block)
    return libc.mallinfo2().keepcost >> 20  # free MB at the heap's top

elmofeat.set_config(malloc_tuning=True)
with reuse_large_blocks() as active:
    kept = churn()
after = libc.mallinfo2().keepcost >> 20
print(json.dumps({"active": active, "kept_mb": kept, "after_mb": after}))
"""
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True, env={k: v for k, v in os.environ.items()
                                         if not k.startswith("MALLOC_") and k != "GLIBC_TUNABLES"})
    found = json.loads(out.stdout.strip().splitlines()[-1])
    assert found["active"] is True
    assert found["kept_mb"] >= 400  # all five blocks' memory stayed at the top
    assert found["after_mb"] < 64  # trimmed when the block ended
