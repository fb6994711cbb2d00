import gzip

import numpy as np
import pytest
from sklearn.base import clone

from elmofeat import WordVectorsVectorizer


def _glove(path, words, dim=3, header=False):
    rng = np.random.RandomState(0)
    rows = [f"{w} " + " ".join(f"{x:.4f}" for x in rng.randn(dim)) for w in words]
    text = ((f"{len(words)} {dim}\n" if header else "") + "\n".join(rows) + "\n").encode()
    if str(path).endswith(".gz"):
        path.write_bytes(gzip.compress(text))
    else:
        path.write_bytes(text)


@pytest.mark.parametrize("name, header", [("glove.txt", False), ("glove.txt.gz", False),
                                          ("vectors.vec", True)])
def test_reads_glove_and_word2vec_text_files(tmp_path, name, header):
    _glove(tmp_path / name, ["cat", "dog", "mat"], header=header)
    vec = WordVectorsVectorizer(str(tmp_path / name)).fit(["ignored"])
    kv = vec.keyed_vectors_
    features = vec.transform(["The cat sat on the mat", "nothing known", ""])
    np.testing.assert_allclose(features[0], (kv["cat"] + kv["mat"]) / 2, rtol=1e-6)
    np.testing.assert_array_equal(features[1:], 0)
    assert list(vec.get_feature_names_out()[:2]) == ["wordvectors_mean0", "wordvectors_mean1"]


def test_clones_share_the_vectors_and_bad_vectors_are_refused(tmp_path):
    _glove(tmp_path / "g.txt", ["cat"])
    vec = WordVectorsVectorizer(str(tmp_path / "g.txt")).fit(["x"])
    loaded = WordVectorsVectorizer(vec.keyed_vectors_)
    assert clone(loaded).vectors is loaded.vectors
    with pytest.raises(TypeError, match="vectors must be a path"):
        WordVectorsVectorizer(None).fit(["x"])
    with pytest.raises(FileNotFoundError, match="not found"):
        WordVectorsVectorizer(str(tmp_path / "missing.txt")).fit(["x"])


def test_a_file_is_read_once_for_all_clones(tmp_path, monkeypatch):
    import elmofeat.bilm.pretrained as pretrained

    _glove(tmp_path / "g.txt", ["cat", "dog"])
    reads = []
    original = pretrained.load_word_vectors
    monkeypatch.setattr(pretrained, "load_word_vectors", lambda *a: reads.append(a) or original(*a))
    vec = WordVectorsVectorizer(str(tmp_path / "g.txt"))
    for _ in range(3):
        clone(vec).fit(["x"])
    assert len(reads) == 1
    _glove(tmp_path / "g.txt", ["cat", "dog", "mat"], dim=4)  # a changed file is read again
    assert clone(vec).fit(["x"]).keyed_vectors_.vector_size == 4 and len(reads) == 2
