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
    import elmofeat.wordvectors.io as pretrained

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


def test_vectors_shared_by_the_process_are_read_only(tmp_path):
    import pickle

    _glove(tmp_path / "g.txt", ["cat", "dog"])
    a = WordVectorsVectorizer(str(tmp_path / "g.txt")).fit(["x"])
    b = WordVectorsVectorizer(str(tmp_path / "g.txt")).fit(["x"])
    assert a.keyed_vectors_.vectors is b.keyed_vectors_.vectors  # one array, two views
    before = b.transform(["cat"])
    with pytest.raises(ValueError, match="read-only"):
        a.keyed_vectors_.vectors[0] = 0  # would change b's features too
    np.testing.assert_array_equal(b.transform(["cat"]), before)
    # A pickle's copy is the user's own again.
    own = pickle.loads(pickle.dumps(a)).keyed_vectors_
    own.vectors[0] = 0
    np.testing.assert_array_equal(b.transform(["cat"]), before)


@pytest.mark.parametrize("content, message", [
    ("the 0.1 nan\ncat 0.2 0.3\n", r"the vector of 'the' \(row 0\) holds NaN or infinite"),
    ("the 0.1 0.2\ncat inf 0.3\n", r"the vector of 'cat' \(row 1\) holds NaN or infinite"),
])
def test_nan_or_inf_in_a_vectors_file_is_refused(tmp_path, content, message):
    """They used to give NaN features (and a misleading 'lower learning_rate' from BiLM)."""
    from elmofeat import BiLM

    path = tmp_path / "vectors.txt"
    path.write_text(content)
    with pytest.raises(ValueError, match=message):
        WordVectorsVectorizer(str(path)).fit(["the cat"])
    with pytest.raises(ValueError, match=message):
        BiLM(embedding_dim=2, hidden_dim=4, max_epochs=1, pretrained_vectors=str(path),
             min_count=1).fit(["the cat sat", "the cat ran"] * 4)


def test_a_truncated_gzip_vectors_file_names_the_file(tmp_path):
    import gzip

    whole = gzip.compress(("\n".join(f"w{i} 0.1 0.2" for i in range(2000)) + "\n").encode())
    path = tmp_path / "vectors.txt.gz"
    path.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(ValueError, match=r"vectors.txt.gz cannot be read as a word-vector file"):
        WordVectorsVectorizer(str(path)).fit(["w1 w2"])


@pytest.mark.parametrize("content, line, found, width", [
    ("the 1 1 1 1 1\ncat 2\n", 2, 1, 5),  # gensim copied the 2 into every dimension
    ("the 1 1 1\ncat 2 2\n", 2, 2, 3),
    ("the 1 1\ncat 2 2 2\n", 2, 3, 2),
    ("2 5\nthe 1 1 1 1 1\ncat 2\n", 3, 1, 5),  # a word2vec header: line numbers count it
    ("2 5\nthe 1 1 1\ncat 2 2 2\n", 2, 3, 5),  # rows narrower than the header says
])
def test_rows_of_the_wrong_width_are_refused_on_every_reading_path(tmp_path, content, line,
                                                                    found, width):
    from elmofeat import BiLM

    path = tmp_path / "vectors.txt"
    path.write_text(content)
    message = rf"line {line} \('\w+'\) holds {found} numbers where the vectors have {width}"
    with pytest.raises(ValueError, match=message):  # every row read
        WordVectorsVectorizer(str(path)).fit(["the cat"])
    with pytest.raises(ValueError, match=message):  # the rows of a vocabulary only
        BiLM(embedding_dim=2, hidden_dim=4, max_epochs=1, pretrained_vectors=str(path),
             min_count=1).fit(["the cat sat", "the cat ran"] * 4)
