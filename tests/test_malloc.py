"""Large freed blocks kept in the heap while elmofeat's torch work runs (elmofeat._malloc)."""

import platform
import threading

import numpy as np
import pytest

from elmofeat import BiLM, ElmoVectorizer, clear_caches
from elmofeat import _malloc
from elmofeat._malloc import (DYNAMIC_LIMITS, M_MMAP_THRESHOLD, M_TRIM_THRESHOLD, MMAP_THRESHOLD,
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
    libc = FakeLibc()
    monkeypatch.setattr(_malloc, "_glibc", lambda: libc)
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

    def spy(self, X):
        seen.append(_malloc._depth)
        return original(self, X)

    monkeypatch.setattr(BiLM, "_fit", spy)
    clear_caches()  # a biLM pretrained by another test would not be pretrained again
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
