"""The biLM cache folder: private, never following planted links, never losing a fit;
and saving to a full disk."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from elmofeat import BiLM, ElmoVectorizer
from elmofeat.elmo import caches as _bilm_cache
from elmofeat._paths import default_cache_dir
from elmofeat.exceptions import CacheWarning

from .estimator_checks import make_topic_corpus

TINY = dict(embedding_dim=8, hidden_dim=8, max_epochs=1, batch_size=16, random_state=0)
posix_only = pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX modes and rlimits")


@pytest.fixture(autouse=True)
def _fresh():
    _bilm_cache.BILMS.clear()
    yield
    _bilm_cache.BILMS.clear()


@pytest.fixture(scope="module")
def texts():
    return make_topic_corpus(60)[0]


def test_default_folder_is_the_users_cache_folder(monkeypatch, tmp_path):
    monkeypatch.delenv("ELMOFEAT_CACHE", raising=False)
    import platformdirs

    assert default_cache_dir() == __import__("pathlib").Path(
        platformdirs.user_cache_dir("elmofeat", appauthor=False))
    monkeypatch.setenv("ELMOFEAT_CACHE", str(tmp_path / "mine"))
    assert default_cache_dir() == tmp_path / "mine"


@posix_only
def test_a_new_folder_is_private_and_used(texts, tmp_path):
    folder = tmp_path / "cache"
    ElmoVectorizer(BiLM(**TINY), cache_dir=folder).fit(texts)
    assert oct(folder.stat().st_mode & 0o777) == "0o700"
    assert len(list(folder.glob("bilm-*.pt"))) == 1
    assert (folder / "pretrain.log").read_text().count("\n") == 1


@posix_only
@pytest.mark.parametrize("kind", ["world-writable", "link"])
def test_an_unsafe_folder_is_not_used(texts, tmp_path, kind):
    real = tmp_path / "shared"
    real.mkdir()
    if kind == "world-writable":
        real.chmod(0o777)
        folder = real
    else:
        folder = tmp_path / "link"
        folder.symlink_to(real, target_is_directory=True)
    with pytest.warns(CacheWarning, match="not using the biLM cache folder"):
        features = ElmoVectorizer(BiLM(**TINY), cache_dir=folder,
                                  bag_size=None).fit_transform(texts)
    assert np.isfinite(features).all() and features.shape == (len(texts), 48)
    assert list(real.iterdir()) == []  # nothing written into it


@posix_only
def test_a_planted_log_link_is_not_followed(texts, tmp_path):
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (folder / "pretrain.log").symlink_to(victim)
    with pytest.warns(CacheWarning, match="could not write the biLM cache"):
        vec = ElmoVectorizer(BiLM(**TINY), cache_dir=folder, bag_size=None).fit(texts)
    assert victim.read_text() == "precious\n"
    assert vec.transform(texts[:2]).shape == (2, 48)


def _run_with_file_size_limit(code: str, limit_bytes: int, cwd) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh Python whose files may not grow beyond ``limit_bytes``
    (``ulimit -f``): every larger write fails as on a full disk."""
    import resource

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))

    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=300, preexec_fn=limit, cwd=cwd)


@posix_only
def test_a_full_disk_keeps_the_old_model_and_says_so(tmp_path):
    small = BiLM(**TINY).fit(["a b c d"] * 5)
    small.save(tmp_path / "m.pt")
    before = (tmp_path / "m.pt").read_bytes()
    code = f"""
        from elmofeat import BiLM
        from tests.estimator_checks import make_topic_corpus
        bilm = BiLM(embedding_dim=64, hidden_dim=64, max_epochs=1, random_state=0)
        bilm.fit(make_topic_corpus(60)[0])
        try:
            bilm.save({str(tmp_path / "m.pt")!r})
        except OSError as exc:
            print("ERROR", type(exc).__name__, exc)
    """
    result = _run_with_file_size_limit(code, len(before) + 4096, cwd=os.getcwd())
    assert "ERROR DiskFullError could not write" in result.stdout, result.stderr[-2000:]
    assert "is full, or the file size limit" in result.stdout
    assert (tmp_path / "m.pt").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.pt"]  # no temporary left


@posix_only
def test_a_full_cache_disk_warns_and_the_fit_goes_on(tmp_path):
    code = f"""
        import warnings
        from elmofeat import BiLM, ElmoVectorizer
        from tests.estimator_checks import make_topic_corpus
        texts = make_topic_corpus(60)[0]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            vec = ElmoVectorizer(BiLM(embedding_dim=64, hidden_dim=64, max_epochs=1,
                                      random_state=0), cache_dir={str(tmp_path / "c")!r},
                                 bag_size=None)
            features = vec.fit_transform(texts)
        print("SHAPE", features.shape)
        print("WARN", [str(w.message) for w in caught if "cache" in str(w.message)])
    """
    result = _run_with_file_size_limit(code, 20_000, cwd=os.getcwd())
    assert "SHAPE (60, 384)" in result.stdout  # 3 concatenated 128-wide layers, result.stderr[-2000:]
    assert "could not write the biLM cache" in result.stdout
    assert "is full" in result.stdout


@posix_only
def test_cli_pretrain_on_a_full_disk_prints_one_line(tmp_path):
    corpus = tmp_path / "texts.txt"
    corpus.write_text("\n".join(make_topic_corpus(60)[0]))
    code = f"""
        import sys
        from elmofeat.cli import main
        sys.exit(main(["pretrain", {str(corpus)!r}, "-o", {str(tmp_path / "m.pt")!r},
                       "--embedding-dim", "64", "--hidden-dim", "64", "--epochs", "1", "--quiet"]))
    """
    result = _run_with_file_size_limit(code, 20_000, cwd=os.getcwd())
    assert result.returncode == 1, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "elmofeat pretrain: error: could not write" in lines[0]
    assert not (tmp_path / "m.pt").exists()


def test_clear_caches_forgets_pretrained_models_and_representations(texts):
    import elmofeat

    vec = ElmoVectorizer(BiLM(**TINY), cache_dir=None).fit(texts)
    assert len(_bilm_cache.BILMS._memory) and _bilm_cache.REPRESENTATIONS.n_bytes > 0
    elmofeat.clear_caches()
    assert not len(_bilm_cache.BILMS._memory) and _bilm_cache.REPRESENTATIONS.n_bytes == 0
    vec.transform(texts[:3])  # a fitted vectorizer does not need them


def test_an_unseeded_biLM_is_shared_in_the_process_and_never_kept_on_disk(texts, tmp_path):
    """random_state=None is not reproducible: a later session must pretrain afresh, so
    nothing goes to the folder; within the process a search still pretrains once."""
    folder = tmp_path / "cache"
    unseeded = {**TINY, "random_state": None}
    first = ElmoVectorizer(BiLM(**unseeded), cache_dir=folder).fit(texts)
    second = ElmoVectorizer(BiLM(**unseeded), cache_dir=folder).fit(texts)
    assert second.bilm_ is first.bilm_  # shared within the process
    assert list(folder.glob("bilm-*.pt")) == []
    _bilm_cache.BILMS.clear()  # a new session, as far as the cache can tell
    third = ElmoVectorizer(BiLM(**unseeded), cache_dir=folder).fit(texts)
    assert third.bilm_ is not first.bilm_
    assert not np.array_equal(third.bilm_.embed_flat(texts[:2])[0], first.bilm_.embed_flat(texts[:2])[0])
    ElmoVectorizer(BiLM(**TINY), cache_dir=folder).fit(texts)  # a seeded one is kept
    assert len(list(folder.glob("bilm-*.pt"))) == 1


def test_a_vectors_file_rewritten_at_the_same_path_is_a_new_key(texts, tmp_path):
    """The key held only the path of pretrained_vectors: rewriting the file brought the
    old model back, from memory and from disk."""
    import os

    vectors = tmp_path / "vectors.txt"
    words = sorted({w for t in texts for w in t.split()})
    vectors.write_text("".join(f"{w} 0.1 0.2 0.3 0.4 0.5 0.6 0.7 0.8\n" for w in words))
    params = {**TINY, "pretrained_vectors": str(vectors)}
    key_before = _bilm_cache.bilm_key(BiLM(**params), texts)
    first = ElmoVectorizer(BiLM(**params), cache_dir=tmp_path / "cache").fit(texts)
    vectors.write_text("".join(f"{w} -0.5 0.3 0.1 0.9 -0.2 0.4 0.8 -0.7\n" for w in words))
    os.utime(vectors, ns=(1, 1))  # even with an old modification time: the content differs
    assert _bilm_cache.bilm_key(BiLM(**params), texts) != key_before
    second = ElmoVectorizer(BiLM(**params), cache_dir=tmp_path / "cache").fit(texts)
    assert second.bilm_ is not first.bilm_
    assert len(list((tmp_path / "cache").glob("bilm-*.pt"))) == 2


def test_a_model_planted_under_a_key_is_checked_before_use(texts, tmp_path):
    """A valid model of another width saved under the key's file name was used as is."""
    folder = tmp_path / "cache"
    key = _bilm_cache.bilm_key(BiLM(**TINY), texts)
    _bilm_cache.private_folder(folder)
    BiLM(**{**TINY, "embedding_dim": 4, "hidden_dim": 4}).fit(texts).save(folder / f"bilm-{key}.pt")
    fitted = ElmoVectorizer(BiLM(**TINY), cache_dir=folder).fit(texts)
    assert fitted.bilm_.embedding_dim == 8 and fitted.bilm_.output_dim_ == 16
    assert (folder / "pretrain.log").is_file()  # it pretrained the model asked for
    assert BiLM.load(folder / f"bilm-{key}.pt").embedding_dim == 8  # and replaced the plant


def _hold_lock(lock):
    """Another process that takes ``lock`` (it prints True once it holds it) and keeps it."""
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import time
        from pathlib import Path
        from elmofeat._file_lock import shared_lock
        with shared_lock(Path({str(lock)!r}), "a model") as held:
            print(held, flush=True)
            time.sleep(60)
        """)], stdout=subprocess.PIPE, text=True)


@posix_only
def test_a_lock_that_cannot_be_taken_warns_and_the_fit_goes_on(texts, tmp_path):
    """A link planted where the lock goes (or a folder that cannot be written): the lock
    was taken outside the guarded save, and the fit crashed."""
    folder = _bilm_cache.private_folder(tmp_path / "cache")
    key = _bilm_cache.bilm_key(BiLM(**TINY), texts)
    (folder / f"bilm-{key}.lock").symlink_to(tmp_path / "missing" / "x.lock")
    with pytest.warns(CacheWarning, match="cannot lock"):
        fitted = ElmoVectorizer(BiLM(**TINY), cache_dir=folder).fit(texts)
    assert fitted.bilm_.output_dim_ == 16


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="process states from /proc")
def test_a_stopped_lock_holder_is_not_waited_for(texts, tmp_path, monkeypatch):
    """A process holding the cache lock and suspended (Ctrl-Z) made a second one wait
    with no message and no end."""
    import signal
    import time

    from elmofeat import _file_lock

    folder = _bilm_cache.private_folder(tmp_path / "cache")
    key = _bilm_cache.bilm_key(BiLM(**TINY), texts)
    lock = folder / f"bilm-{key}.lock"
    holder = _hold_lock(lock)
    try:
        assert holder.stdout.readline().strip() == "True"
        os.kill(holder.pid, signal.SIGSTOP)
        monkeypatch.setattr(_file_lock, "NOTICE_AFTER", 0.0)
        start = time.monotonic()
        with pytest.warns(CacheWarning, match=rf"held by process {holder.pid}, which is stopped"):
            fitted = ElmoVectorizer(BiLM(**TINY), cache_dir=folder).fit(texts)
        assert time.monotonic() - start < 30 and fitted.bilm_.output_dim_ == 16
    finally:
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait()


def test_a_running_lock_holder_is_announced_then_given_up_on(tmp_path, monkeypatch):
    from elmofeat import _file_lock

    lock = tmp_path / "x.lock"
    monkeypatch.setattr(_file_lock, "NOTICE_AFTER", 0.2)
    monkeypatch.setattr(_file_lock, "GIVE_UP_AFTER", 1.5)
    holder = _hold_lock(lock)
    try:
        assert holder.stdout.readline().strip() == "True"
        with pytest.warns(CacheWarning) as caught:
            with _file_lock.shared_lock(lock, "a model") as held:
                assert held is False
        messages = [str(w.message) for w in caught]
        assert any(f"waiting for process {holder.pid}" in m for m in messages)
        assert any("gave up after" in m for m in messages)
    finally:
        holder.kill()
        holder.wait()


def test_the_caches_are_safe_to_share_between_threads(texts):
    """GridSearchCV under the threading backend with a small layer budget raised
    KeyError (an entry evicted by one thread between another's check and read)."""
    import joblib
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import Pipeline

    import elmofeat

    from .estimator_checks import make_topic_corpus

    docs, y = make_topic_corpus(90)
    bilm = BiLM(**TINY).fit(docs)
    for _ in range(2):
        elmofeat.clear_caches()
        with elmofeat.config_context(representation_cache_bytes=20_000):
            pipe = Pipeline([("elmo", ElmoVectorizer(bilm, cv=2, cache_dir=None, random_state=0)),
                             ("clf", LogisticRegression(max_iter=200))])
            with joblib.parallel_backend("threading", n_jobs=2):
                search = GridSearchCV(pipe, {"elmo__layer_mix": ["frozen", "trainable", "mlp"]},
                                      cv=3, n_jobs=2, error_score="raise").fit(docs, y)
        assert search.best_score_ > 0
    # Fits from threads that ask for the same unfitted biLM pretrain it once.
    from concurrent.futures import ThreadPoolExecutor

    elmofeat.clear_caches()
    with ThreadPoolExecutor(4) as pool:
        fitted = list(pool.map(lambda _: ElmoVectorizer(BiLM(**TINY), layer_mix="frozen",
                                                        cache_dir=None).fit(texts), range(4)))
    assert len({id(vec.bilm_) for vec in fitted}) == 1
