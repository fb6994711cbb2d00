"""Pretraining on corpora streamed from files or iterables (elmofeat.bilm.corpus,
shards, training_data)."""

import gzip
import pathlib

import numpy as np
import pytest
import torch

from elmofeat import BiLM
from elmofeat.text import TextTokenizer, Vocabulary
from elmofeat.bilm import shards, training_data
from elmofeat.bilm.batching import SPECIALS, UNK
from elmofeat.bilm.corpus import TextFiles
from elmofeat.bilm.estimator import BILM_TOKEN_PATTERN

from .conftest import TINY, weights_of


@pytest.fixture
def small_shards(monkeypatch):
    """Shards of ~300 tokens and blocks of 2 shards: a small corpus spans many blocks."""
    monkeypatch.setattr(shards, "SHARD_TOKENS", 300)
    monkeypatch.setattr(shards, "BUFFER_SHARDS", 2)


@pytest.fixture
def corpus_files(corpus, tmp_path):
    folder = tmp_path / "corpus"
    folder.mkdir()
    half = len(corpus) // 2
    (folder / "a.txt").write_text("\n".join(corpus[:half]) + "\n\n", encoding="utf-8")
    with gzip.open(folder / "b.txt.gz", "wt", encoding="utf-8") as handle:
        handle.write("\n".join(corpus[half:]))
    return folder


# ------------------------------------------------------------------------- TextFiles
def test_text_files_read_folders_globs_and_gzip_lazily_on_every_pass(corpus, corpus_files):
    by_folder = TextFiles(corpus_files)
    assert [p.name for p in by_folder.files] == ["a.txt", "b.txt.gz"]
    assert list(by_folder) == corpus  # blank lines skipped, gzip decompressed
    assert list(by_folder) == corpus  # a second pass reads again
    by_glob = TextFiles(str(corpus_files / "*.txt*"))
    assert by_glob.files == by_folder.files
    assert list(TextFiles([corpus_files / "b.txt.gz"])) == corpus[len(corpus) // 2:]


def test_text_files_say_what_is_wrong(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file or folder"):
        TextFiles(tmp_path / "missing.txt")
    with pytest.raises(FileNotFoundError, match="no file matches"):
        TextFiles(str(tmp_path / "*.gz"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="holds no text file"):
        TextFiles(tmp_path / "empty")
    with pytest.raises(ValueError, match="at least one path"):
        TextFiles([])
    with pytest.raises(TypeError, match="str or path-like"):
        TextFiles([3])
    bad = tmp_path / "latin.txt"
    bad.write_bytes(b"fine\ncaf\xe9\n")
    with pytest.raises(ValueError, match=r"latin.txt, line 2: not utf-8 text"):
        list(TextFiles(bad))
    assert list(TextFiles(bad, errors="replace")) == ["fine", "caf\ufffd"]
    truncated = tmp_path / "cut.txt.gz"
    truncated.write_bytes(gzip.compress(b"a b c\n" * 1000)[:50])
    with pytest.raises(ValueError, match="cannot be read"):
        list(TextFiles(truncated))


def test_the_fingerprint_follows_the_files(corpus_files):
    before = TextFiles(corpus_files).fingerprint()
    assert TextFiles(corpus_files).fingerprint() == before
    (corpus_files / "a.txt").write_text("changed\n")
    assert TextFiles(corpus_files).fingerprint() != before


# -------------------------------------------------------------------- what streams
def test_sized_documents_stay_in_memory_files_and_iterators_stream(corpus, corpus_files):
    assert training_data.streamed_source(corpus) is None
    assert training_data.streamed_source(np.array(corpus, dtype=object)) is None
    assert isinstance(training_data.streamed_source(corpus_files), TextFiles)  # a Path
    generator = (d for d in corpus)
    assert training_data.streamed_source(generator) is generator
    assert training_data.streamed_source("one document") is None  # validate_documents says why


def test_a_single_string_is_still_refused_with_the_way_to_stream_files():
    with pytest.raises(TypeError, match="single str"):
        BiLM(**TINY).fit("corpus/*.txt")


# -------------------------------------------------------------------- encoding
def test_the_encoded_corpus_has_every_window_and_the_in_memory_vocabulary(corpus, tmp_path,
                                                                           small_shards):
    tokenize = TextTokenizer(True, BILM_TOKEN_PATTERN)
    encoded = shards.EncodedCorpus.encode(
        iter(corpus), tokenize, tmp_path / "enc", max_len=7, validation_fraction=0.0,
        max_validation_tokens=0, seed=0, source={"test": 1})
    token_lists = tokenize(corpus)
    assert encoded.n_shards > 4 and encoded.meta["n_documents"] == len(corpus)
    assert encoded.meta["train_tokens"] == sum(map(len, token_lists))
    expected = Vocabulary.build(token_lists, min_count=2, max_features=50, specials=SPECIALS,
                                unknown=UNK)
    vocabulary = encoded.vocabulary(2, 50)
    assert vocabulary.tokens == expected.tokens
    np.testing.assert_array_equal(vocabulary.counts, expected.counts)
    # The windows of all shards are the in-memory windows of the same documents.
    from elmofeat.bilm.batching import make_windows

    windows = encoded.windows(range(encoded.n_shards), encoded.id_map(vocabulary))
    reference = make_windows(token_lists, vocabulary, 7, with_types=False)
    np.testing.assert_array_equal(windows.word_ids, reference.word_ids)
    np.testing.assert_array_equal(windows.offsets, reference.offsets)
    # Reopened only for the same source.
    assert shards.EncodedCorpus.open(tmp_path / "enc", {"test": 1}).meta == encoded.meta
    assert shards.EncodedCorpus.open(tmp_path / "enc", {"test": 2}) is None


def test_an_epoch_visits_every_window_once_a_block_at_a_time(corpus, tmp_path, small_shards):
    tokenize = TextTokenizer(True, BILM_TOKEN_PATTERN)
    encoded = shards.EncodedCorpus.encode(
        corpus, tokenize, tmp_path / "enc", max_len=7, validation_fraction=0.0,
        max_validation_tokens=0, seed=0, source={})
    id_map = np.arange(len(encoded.types))  # batches then hold type ids: countable
    data = shards.StreamedData(encoded, id_map)
    plan = data.plan(seed=3, epoch=0, batch_size=5, rank=0, world_size=1, device="cpu")
    assert len(plan.blocks) == -(-encoded.n_shards // 2)
    seen = []
    for i in range(len(plan)):
        batch = plan.batch(i)
        for row, length in zip(batch.word_ids, batch.lengths):
            seen.append(tuple(row[:length].tolist()))
    everything = encoded.windows(range(encoded.n_shards), id_map)
    expected = [tuple(everything.word_ids[a:b].tolist())
                for a, b in zip(everything.offsets[:-1], everything.offsets[1:])]
    assert sorted(seen) == sorted(expected)
    # The order depends on (seed, epoch) only; each rank gets an equal, disjoint share.
    again = data.plan(seed=3, epoch=0, batch_size=5, rank=0, world_size=1, device="cpu")
    assert all(torch.equal(plan.batch(i).word_ids, again.batch(i).word_ids) for i in range(len(plan)))
    other = data.plan(seed=3, epoch=1, batch_size=5, rank=0, world_size=1, device="cpu")
    assert not all(torch.equal(plan.batch(i).word_ids, other.batch(i).word_ids)
                   for i in range(min(len(plan), len(other))))
    ranks = [data.plan(3, 0, 5, r, 2, "cpu") for r in range(2)]
    assert len(ranks[0]) == len(ranks[1]) <= len(plan) // 2 + len(plan.blocks)


def test_validation_is_held_out_up_to_its_cap(corpus, tmp_path):
    tokenize = TextTokenizer(True, BILM_TOKEN_PATTERN)
    encoded = shards.EncodedCorpus.encode(
        corpus, tokenize, tmp_path / "enc", max_len=64, validation_fraction=0.5,
        max_validation_tokens=100, seed=0, source={})
    assert 0 < encoded.meta["valid_tokens"] <= 100
    total = sum(map(len, tokenize(corpus)))
    assert encoded.meta["valid_tokens"] + encoded.meta["train_tokens"] == total


# ------------------------------------------------------------------------ fitting
@pytest.mark.parametrize("token_layer", ["word", "char"])
def test_a_streamed_fit_is_deterministic_and_files_equal_their_lines(
        corpus, corpus_files, small_shards, token_layer):
    params = {**TINY, "token_layer": token_layer, "max_len": 12}
    from_files = BiLM(**params).fit(TextFiles(corpus_files))
    from_generator = BiLM(**params).fit(d for d in corpus)
    for (name, x), y in zip(weights_of(from_files).items(), weights_of(from_generator).values()):
        assert torch.equal(x, y), name
    assert [h["validation_perplexity"] for h in from_files.history_] == \
        [h["validation_perplexity"] for h in from_generator.history_]
    assert from_files.history_[-1]["validation_perplexity"] < from_files.history_[0][
        "train_perplexity"]
    layers = from_files.embed(["the first topic words"])[0]
    assert layers.shape == (4, 3, 32) and np.isfinite(layers).all()


def test_a_streamed_fit_learns_like_an_in_memory_one(corpus, small_shards):
    params = {**TINY, "max_epochs": 4, "patience": None}
    streamed = BiLM(**params).fit(d for d in corpus)
    in_memory = BiLM(**params).fit(corpus)
    assert streamed.vocabulary_.tokens == in_memory.vocabulary_.tokens
    # Different batches and validation documents, the same kind of model.
    ratio = streamed.perplexity(corpus) / in_memory.perplexity(corpus)
    assert 0.8 < ratio < 1.25


def test_an_interrupted_streamed_fit_resumes_without_encoding_again(
        corpus_files, tmp_path, monkeypatch, small_shards):
    params = {**TINY, "max_epochs": 2, "patience": None, "checkpoint_every": 4}
    uninterrupted = BiLM(**params, checkpoint_dir=tmp_path / "a").fit(TextFiles(corpus_files))

    encodings = []
    original_encode = shards.EncodedCorpus.encode.__func__

    def counting_encode(cls, *args, **kwargs):
        encodings.append(1)
        return original_encode(cls, *args, **kwargs)

    monkeypatch.setattr(shards.EncodedCorpus, "encode", classmethod(counting_encode))
    original_step = torch.optim.AdamW.step
    calls = {"n": 0}

    def step_then_crash(self, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 10:
            raise KeyboardInterrupt
        return original_step(self, *args, **kwargs)

    monkeypatch.setattr(torch.optim.AdamW, "step", step_then_crash)
    with pytest.raises(KeyboardInterrupt):
        BiLM(**params, checkpoint_dir=tmp_path / "b").fit(TextFiles(corpus_files))
    monkeypatch.setattr(torch.optim.AdamW, "step", original_step)
    assert encodings == [1]
    resumed = BiLM(**params, checkpoint_dir=tmp_path / "b").fit(TextFiles(corpus_files))
    assert encodings == [1]  # the files did not change: their shards were reused
    for (name, x), y in zip(weights_of(uninterrupted).items(), weights_of(resumed).values()):
        assert torch.equal(x, y), name
    # Changed files are encoded again, and their checkpoint is refused.
    (corpus_files / "a.txt").write_text("other words entirely\n" * 50)
    with pytest.raises(ValueError, match="other texts or parameters"):
        BiLM(**params, checkpoint_dir=tmp_path / "b").fit(TextFiles(corpus_files))
    assert encodings == [1, 1]


def test_streamed_corpora_without_text_say_so(tmp_path):
    with pytest.raises(ValueError, match="X is empty"):
        BiLM(**TINY).fit(iter([]))
    with pytest.raises(ValueError, match="vocabulary is empty"):
        BiLM(**TINY, min_count=5).fit(iter(["one two", "three"]))
    with pytest.raises(TypeError, match=r"X\[1\] is None"):
        BiLM(**TINY).fit(iter(["a b", None]))


def test_the_temporary_shards_are_removed_after_the_fit(corpus, tmp_path, monkeypatch):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    BiLM(**{**TINY, "max_epochs": 1}).fit(d for d in corpus)
    assert not list(pathlib.Path(tmp_path).glob("elmofeat-corpus-*"))
