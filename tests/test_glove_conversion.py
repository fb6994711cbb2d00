"""benchmarks/convert_glove_100d.py: the npm package's JSON vectors as GloVe text."""

import gzip
import importlib.util
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "convert_glove_100d.py"


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("convert_glove_100d", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def package(words, rng=np.random.RandomState(0), width=3):
    vectors = {}
    for index, word in enumerate(words):
        values = np.round(rng.randn(width), 6).tolist()
        vectors[word] = [*values, float(np.linalg.norm(values)), index]
    return {"precision": 6, "l2NormIndex": width, "wordIndex": width + 1, "size": len(words),
            "dimensions": width, "words": list(words), "vectors": vectors}


def test_vectors_are_written_as_glove_text_in_the_package_order(script, tmp_path):
    from elmofeat.wordvectors.pretrained import WordVectorsVectorizer

    data = package(["the", ",", "cat"])
    output = tmp_path / "glove" / "vectors.txt.gz"
    assert script.convert(data, output) == 3
    lines = gzip.open(output, "rt").read().splitlines()
    assert [line.split()[0] for line in lines] == ["the", ",", "cat"]
    np.testing.assert_allclose([float(v) for v in lines[2].split()[1:]],
                               data["vectors"]["cat"][:3])
    vec = WordVectorsVectorizer(str(output)).fit(["the cat"])
    expected = np.mean([data["vectors"]["the"][:3], data["vectors"]["cat"][:3]], axis=0)
    np.testing.assert_allclose(vec.transform(["the cat"])[0], expected, rtol=1e-5)


def test_a_vector_that_disagrees_with_its_stored_norm_is_refused_and_nothing_replaced(
        script, tmp_path):
    output = tmp_path / "vectors.txt.gz"
    script.convert(package(["a", "b"]), output)
    before = output.read_bytes()
    bad = package(["a", "b", "c"])
    bad["vectors"]["b"][3] += 1.0  # the stored norm
    with pytest.raises(ValueError, match="'b': stored index 1 or norm"):
        script.convert(bad, output)
    assert output.read_bytes() == before and list(tmp_path.iterdir()) == [output]
    short = package(["a"])
    short["size"] = 2
    with pytest.raises(ValueError, match="lists 1 words"):
        script.convert(short, output)
