"""The user guide's recipes, run small: a DataFrame text column, polars output."""

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

from elmofeat import BiLM, ElmoVectorizer, SVDVectorizer

from .estimator_checks import make_topic_corpus


@pytest.fixture(scope="module")
def frame():
    texts, labels = make_topic_corpus(80)
    rng = np.random.RandomState(0)
    return pd.DataFrame({"review": texts, "price": rng.rand(len(texts)), "label": labels})


def test_a_text_column_in_a_column_transformer(frame):
    bilm = BiLM(embedding_dim=8, hidden_dim=8, max_epochs=1, random_state=0).fit(frame["review"])
    features = ColumnTransformer([("review", ElmoVectorizer(bilm, cache_dir=None), "review"),
                                  ("price", StandardScaler(), ["price"])])
    model = Pipeline([("features", features), ("clf", LogisticRegression(max_iter=2000))])
    model.fit(frame, frame["label"])
    assert model.score(frame, frame["label"]) > 0.5
    names = model[0].get_feature_names_out()
    assert names[0] == "review__elmo_mean0" and names[-1] == "price__price"
    n_codes = model[0].named_transformers_["review"].bag_.n_features
    assert n_codes > 1 and f"review__elmo_bag{n_codes - 1}" in names
    assert model[0].transform(frame).shape == (len(frame), 3 * 16 + n_codes + 1)


def test_polars_output(frame):
    polars = pytest.importorskip("polars")
    vec = SVDVectorizer(n_components=4, min_count=1, random_state=0).set_output(transform="polars")
    out = vec.fit_transform(frame["review"])
    assert isinstance(out, polars.DataFrame) and out.columns == list(vec.get_feature_names_out())
