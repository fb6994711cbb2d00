"""elmofeat.dump / elmofeat.load: fitted estimators in a file that loads without running code."""

import pickle
import zipfile

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

import elmofeat
from elmofeat import BiLM, ElmoVectorizer, SVDVectorizer, make_hybrid

from .estimator_checks import make_topic_corpus


@pytest.fixture(scope="module")
def corpus():
    return make_topic_corpus(80)


def test_a_hybrid_pipeline_round_trips(corpus, tmp_path):
    X, y = corpus
    bilm = BiLM(embedding_dim=8, hidden_dim=8, max_epochs=1, random_state=0)
    pipe = make_pipeline(make_hybrid(ElmoVectorizer(bilm, cache_dir=None)),
                         LogisticRegression(max_iter=300)).fit(X, y)
    loaded = elmofeat.load(elmofeat.dump(pipe, tmp_path / "hybrid.skops"))
    np.testing.assert_array_equal(loaded.predict_proba(X), pipe.predict_proba(X))


def test_a_file_naming_an_untrusted_type_is_refused_before_anything_is_built(corpus, tmp_path):
    X, y = corpus
    import os

    pipe = make_pipeline(FunctionTransformer(os.system), LogisticRegression())
    elmofeat.dump(pipe, tmp_path / "evil.skops")
    with pytest.raises(ValueError, match="types that elmofeat does not trust: .*system"):
        elmofeat.load(tmp_path / "evil.skops")


def test_foreign_and_damaged_files_give_clear_errors(corpus, tmp_path):
    X, _ = corpus
    (tmp_path / "pickle.skops").write_bytes(pickle.dumps({"a": 1}))
    with pytest.raises(ValueError, match="not a file written by elmofeat.dump"):
        elmofeat.load(tmp_path / "pickle.skops")
    with pytest.raises(FileNotFoundError, match="no file at"):
        elmofeat.load(tmp_path / "missing.skops")
    good = elmofeat.dump(SVDVectorizer(n_components=3, min_count=1, random_state=0).fit(X),
                         tmp_path / "svd.skops")
    # A schema that is not JSON any more.
    with zipfile.ZipFile(good) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    members["schema.json"] = members["schema.json"][:-20]
    with zipfile.ZipFile(tmp_path / "damaged.skops", "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    with pytest.raises(ValueError, match="damaged"):
        elmofeat.load(tmp_path / "damaged.skops")
    # Truncated archive: not a skops file any more.
    (tmp_path / "cut.skops").write_bytes(good.read_bytes()[:200])
    with pytest.raises(ValueError, match="not a file written by elmofeat.dump"):
        elmofeat.load(tmp_path / "cut.skops")


def test_a_failed_dump_keeps_the_previous_file(corpus, tmp_path):
    X, _ = corpus
    path = elmofeat.dump(SVDVectorizer(n_components=3, min_count=1, random_state=0).fit(X),
                         tmp_path / "m.skops")
    before = path.read_bytes()

    class Unsavable:
        def __getstate__(self):
            raise RuntimeError("cannot save this")

    with pytest.raises(Exception):
        elmofeat.dump(Unsavable(), path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["m.skops"]


def test_temporaries_of_killed_saves_are_removed_by_the_next_save(tmp_path):
    """A save killed by SIGKILL cannot remove its temporary file: the next save of the
    same file, and the biLM cache's eviction, remove those nobody has written for an hour."""
    import os
    import time

    from elmofeat.elmo.caches import _evict
    from elmofeat._files import STALE_SECONDS, atomic_path

    target = tmp_path / "model.pt"
    stale = tmp_path / ".model.pt.abc12_45.tmp"  # named as tempfile.mkstemp names them
    fresh = tmp_path / ".model.pt.def45678.tmp"  # another writer, at work now
    other = tmp_path / ".bilm-0123.pt.xyz12345.tmp"
    for path in (stale, fresh, other):
        path.write_bytes(b"partial")
    old = time.time() - STALE_SECONDS - 60
    os.utime(stale, (old, old))
    os.utime(other, (old, old))
    with atomic_path(target) as temporary:
        temporary.write_text("done")
    assert target.read_text() == "done"
    assert not stale.exists() and fresh.exists() and other.exists()
    _evict(tmp_path, keep=8)
    assert not other.exists() and fresh.exists()


def test_glob_characters_in_a_saved_name_never_widen_what_is_deleted(tmp_path):
    """Saving to ``victim*`` cleans up the temporaries of ``victim*`` only: other files
    that a glob of the name would match, links and files of other shapes stay."""
    import os
    import time

    from elmofeat._files import STALE_SECONDS, atomic_path

    old = time.time() - STALE_SECONDS - 60
    others = [tmp_path / ".victim_data.pt.abcdefgh.tmp",  # ".victim*.*.tmp" would match
              tmp_path / ".victim[1].abcdefgh.tmp", tmp_path / ".victim*.notes.tmp"]
    for path in others:
        path.write_bytes(b"someone's work")
        os.utime(path, (old, old))
    link = tmp_path / ".victim*.abcdefgh.tmp"  # the right name, but a link
    link.symlink_to(others[0])
    own = tmp_path / ".victim*.zz_99_zz.tmp"
    own.write_bytes(b"partial")
    os.utime(own, (old, old))
    with atomic_path(tmp_path / "victim*") as temporary:
        temporary.write_text("saved")
    assert (tmp_path / "victim*").read_text() == "saved"
    assert all(path.exists() for path in others) and link.is_symlink()
    assert not own.exists()  # a stale temporary of this very name is removed
