"""The ``elmofeat`` command line: pretrain, embed, and its error handling."""

import subprocess
import sys

import joblib
import numpy as np
import pandas as pd
import pytest

from elmofeat import BiLM, SVDVectorizer
from elmofeat.bilm.io import weights_digest
from elmofeat.cli import main

TINY = ["--embedding-dim", "8", "--hidden-dim", "8", "--epochs", "2", "--quiet"]
TEXTS = ["the market fell as oil prices rose", "the team won the final match",
         "new chip doubles battery life", "rebels seized the capital city"] * 12


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("corpus")
    (folder / "texts.txt").write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    pd.DataFrame({"id": range(len(TEXTS)), "body": TEXTS}).to_csv(folder / "texts.csv", index=False)
    pd.DataFrame({"text": TEXTS}).to_parquet(folder / "texts.parquet")
    return folder


@pytest.fixture(scope="module")
def saved_bilm(corpus):
    path = corpus / "bilm.pt"
    assert main(["pretrain", str(corpus / "texts.txt"), "-o", str(path), "--seed", "1", *TINY]) == 0
    return path


def test_pretrain_saves_a_bilm_that_loads(saved_bilm, capsys):
    bilm = BiLM.load(saved_bilm)
    assert bilm.embedding_dim == 8 and bilm.n_epochs_ == 2 and bilm.random_state == 1
    expected = BiLM(embedding_dim=8, hidden_dim=8, max_epochs=2, random_state=1).fit(TEXTS)
    assert weights_digest(bilm) == weights_digest(expected)


@pytest.mark.parametrize("name, column", [("texts.csv", "body"), ("texts.parquet", None)])
def test_pretrain_reads_a_table_column(corpus, tmp_path, name, column, capsys):
    args = ["pretrain", str(corpus / name), "-o", str(tmp_path / "m.pt"), *TINY]
    assert main(args + (["--column", column] if column else [])) == 0
    assert f"pretraining on {len(TEXTS)} documents" in capsys.readouterr().out


def test_pretrain_resumes_from_its_checkpoint(corpus, tmp_path, capsys):
    checkpoints = tmp_path / "checkpoints"
    args = ["pretrain", str(corpus / "texts.txt"), "--checkpoint-dir", str(checkpoints),
            "--embedding-dim", "8", "--hidden-dim", "8", "--epochs", "2"]
    assert main([*args, "-o", str(tmp_path / "a.pt")]) == 0
    assert (checkpoints / "checkpoint.pt").is_file()
    capsys.readouterr()
    assert main([*args, "-o", str(tmp_path / "b.pt")]) == 0
    assert "resuming from" in capsys.readouterr().err  # with the progress bar, on stderr
    assert weights_digest(BiLM.load(tmp_path / "a.pt")) == weights_digest(BiLM.load(tmp_path / "b.pt"))


def test_embed_with_a_bilm_writes_npy_and_parquet(saved_bilm, corpus, tmp_path):
    assert main(["embed", str(saved_bilm), str(corpus / "texts.txt"), "-o", str(tmp_path / "f.npy")]) == 0
    features = np.load(tmp_path / "f.npy")
    # The default mix, as ElmoVectorizer's: the three 16-wide layers side by side.
    assert features.shape == (len(TEXTS), 48) and features.dtype == np.float32
    assert np.isfinite(features).all() and np.abs(features).sum() > 0
    assert main(["embed", str(saved_bilm), str(corpus / "texts.parquet"), "-o",
                 str(tmp_path / "f.parquet"), "--pooling", "meanmax"]) == 0
    frame = pd.read_parquet(tmp_path / "f.parquet")
    assert frame.shape == (len(TEXTS), 96) and frame.columns[0].startswith("elmo")
    np.testing.assert_allclose(frame.to_numpy()[:, :48], features, rtol=1e-5, atol=1e-6)


def test_embed_takes_any_mix_that_needs_no_labels(saved_bilm, corpus, tmp_path, capsys):
    args = ["embed", str(saved_bilm), str(corpus / "texts.txt"), "--quiet"]
    assert main([*args, "-o", str(tmp_path / "c.npy")]) == 0
    assert main([*args, "-o", str(tmp_path / "f.npy"), "--layer-mix", "frozen"]) == 0
    concat, frozen = np.load(tmp_path / "c.npy"), np.load(tmp_path / "f.npy")
    assert frozen.shape == (len(TEXTS), 16)
    # The frozen mix is the sum of the concatenation's blocks.
    np.testing.assert_allclose(concat.reshape(len(TEXTS), 3, 16).sum(1), frozen,
                               rtol=1e-4, atol=1e-5)
    with pytest.raises(SystemExit):  # a mix learned from labels: embed has none
        main([*args, "-o", str(tmp_path / "t.npy"), "--layer-mix", "trainable"])
    assert "invalid choice: 'trainable'" in capsys.readouterr().err


def test_embed_with_a_dumped_or_trusted_joblib_vectorizer_matches_transform(corpus, tmp_path, capsys):
    import elmofeat

    vectorizer = SVDVectorizer(n_components=5, min_count=1, random_state=0).fit(TEXTS)
    elmofeat.dump(vectorizer, tmp_path / "svd.skops")
    assert main(["embed", str(tmp_path / "svd.skops"), str(corpus / "texts.txt"),
                 "-o", str(tmp_path / "f.npy")]) == 0
    np.testing.assert_array_equal(np.load(tmp_path / "f.npy"), vectorizer.transform(TEXTS))
    joblib.dump(vectorizer, tmp_path / "svd.joblib")
    # A pickle is refused unless the user says they trust it.
    assert main(["embed", str(tmp_path / "svd.joblib"), str(corpus / "texts.txt"),
                 "-o", str(tmp_path / "g.npy")]) == 1
    assert "--trust-pickle" in capsys.readouterr().err and not (tmp_path / "g.npy").exists()
    assert main(["embed", str(tmp_path / "svd.joblib"), str(corpus / "texts.txt"),
                 "-o", str(tmp_path / "g.npy"), "--trust-pickle"]) == 0
    np.testing.assert_array_equal(np.load(tmp_path / "g.npy"), vectorizer.transform(TEXTS))


class _Evil:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))  # creating the marker file = code ran


def test_embed_never_unpickles_without_trust_pickle(corpus, tmp_path, capsys):
    import pickle

    marker = tmp_path / "pwned"
    for name in ("evil.pt", "evil.joblib", "evil.pkl"):
        (tmp_path / name).write_bytes(pickle.dumps(_Evil(str(marker))))
        assert main(["embed", str(tmp_path / name), str(corpus / "texts.txt"),
                     "-o", str(tmp_path / "f.npy")]) == 1
        assert "not an elmofeat model file" in capsys.readouterr().err
    assert not marker.exists()


def test_a_failed_embed_keeps_the_previous_output(saved_bilm, corpus, tmp_path):
    out = tmp_path / "f.npy"
    np.save(out, np.ones(3))
    assert main(["embed", str(saved_bilm), str(corpus / "texts.csv"), "-o", str(out),
                 "--column", "missing"]) == 1
    np.testing.assert_array_equal(np.load(out), np.ones(3))


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "elmofeat", *args], capture_output=True, text=True)


@pytest.mark.parametrize("args, message", [
    (["pretrain", "no-such-file.txt", "-o", "x.pt"], "no such file, and not a dataset name"),
    (["embed", "no-such-model.pt", "x.txt", "-o", "f.npy"], "no model file or folder at no-such-model.pt"),
    (["benchmark", "--folds", "1", "--output", "r"], "folds must be an integer >= 2"),
    # one line before anything runs, naming the command that fetches what is missing
    (["benchmark", "--data-home", "/nonexistent", "--methods", "tfidf"],
     "fetch them with: elmofeat download ag_news r8 cr mpqa 20ng --data-home /nonexistent"),
    (["download", "bogus", "--check"], "unknown datasets ['bogus']"),
])
def test_cli_errors_are_the_whole_message_without_traceback(args, message):
    result = _cli(*args)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    first, *rest = result.stderr.rstrip().splitlines()
    assert first.startswith(f"elmofeat {args[0]}: error: ") and message in result.stderr
    assert all(line.startswith("  ") for line in rest)  # the message's own lines, indented


def test_cli_error_messages_name_the_problem(saved_bilm, corpus, tmp_path, capsys):
    assert main(["embed", str(saved_bilm), str(corpus / "texts.txt"), "-o", str(tmp_path / "f.csv")]) == 1
    assert "--output must end in .npy or .parquet" in capsys.readouterr().err
    assert main(["embed", str(saved_bilm), str(corpus / "texts.csv"), "-o", str(tmp_path / "f.npy")]) == 1
    assert "choose one with --column" in capsys.readouterr().err
    assert main(["embed", str(corpus / "texts.txt"), str(corpus / "texts.txt"), "-o",
                 str(tmp_path / "f.npy")]) == 1
    assert "not an elmofeat model file" in capsys.readouterr().err
    assert main(["pretrain", str(corpus / "texts.txt"), "--column", "x", "-o", "m.pt"]) == 1
    assert "--column applies to CSV" in capsys.readouterr().err


def test_argument_errors_exit_2_with_one_line():
    result = _cli("benchmark", "--methods", "bert")
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "invalid choice: 'bert'" in result.stderr


@pytest.mark.parametrize("command", ["pretrain", "embed", "benchmark"])
def test_every_subcommand_has_help(command, capsys):
    with pytest.raises(SystemExit) as info:
        main([command, "--help"])
    assert info.value.code == 0
    assert "--output" in capsys.readouterr().out


def test_embed_a_file_of_blank_lines(tmp_path):
    from elmofeat import BiLM

    from .estimator_checks import make_topic_corpus

    BiLM(embedding_dim=8, hidden_dim=8, max_epochs=1, random_state=0).fit(
        make_topic_corpus(40)[0]).save(tmp_path / "bilm.pt")
    (tmp_path / "blank.txt").write_text("\n  \n\n")
    assert main(["embed", str(tmp_path / "bilm.pt"), str(tmp_path / "blank.txt"),
                 "-o", str(tmp_path / "f.npy")]) == 0
    features = np.load(tmp_path / "f.npy")
    assert features.shape == (3, 48) and not features.any()


def test_embed_uses_the_feature_steps_of_a_pipeline_with_a_classifier(corpus, tmp_path, capsys):
    import elmofeat
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    labels = [i % 2 for i in range(len(TEXTS))]
    pipe = make_pipeline(SVDVectorizer(n_components=4, min_count=1, random_state=0),
                         LogisticRegression()).fit(TEXTS, labels)
    elmofeat.dump(pipe, tmp_path / "pipe.skops")
    assert main(["embed", str(tmp_path / "pipe.skops"), str(corpus / "texts.txt"),
                 "-o", str(tmp_path / "f.npy")]) == 0
    assert "every step before its final LogisticRegression" in capsys.readouterr().out
    np.testing.assert_array_equal(np.load(tmp_path / "f.npy"), pipe[0].transform(TEXTS))


@pytest.mark.parametrize("args, message", [
    (["pretrain", "x.txt", "-o", "m.pt", "--epochs", "0"], "argument --epochs: must be an integer >= 1, got 0"),
    (["pretrain", "x.txt", "-o", "m.pt", "--hidden-dim", "-4"], "argument --hidden-dim: must be an integer >= 1"),
    (["pretrain", "x.txt", "-o", "m.pt", "--batch-size", "x"], "argument --batch-size: must be an integer >= 1, got 'x'"),
])
def test_bad_options_are_refused_before_any_data_is_read(args, message):
    result = _cli(*args)  # x.txt does not exist: the option is checked first
    assert result.returncode == 2 and message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_binary_input_file_names_the_file(tmp_path, capsys):
    (tmp_path / "binary.bin").write_bytes(b"caf\xe9 \xd0\x00\xff" * 10)
    (tmp_path / "binary.csv").write_bytes(b"text\n\xd0\xff\n")
    for name in ("binary.bin", "binary.csv"):
        assert main(["pretrain", str(tmp_path / name), "-o", str(tmp_path / "m.pt")]) == 1
        err = capsys.readouterr().err
        assert f"{tmp_path / name} is not UTF-8 text (byte 0x" in err, err


def test_ctrl_c_during_pretraining_says_how_to_resume(corpus, tmp_path, capsys, monkeypatch):
    from elmofeat import BiLM

    def interrupted(self, X, y=None):
        (tmp_path / "ck").mkdir(exist_ok=True)
        (tmp_path / "ck" / "checkpoint.pt").write_bytes(b"")
        raise KeyboardInterrupt

    monkeypatch.setattr(BiLM, "fit", interrupted)
    args = ["pretrain", str(corpus / "texts.txt"), "-o", str(tmp_path / "m.pt"), "--quiet"]
    assert main(args) == 130
    assert "nothing saved. Add --checkpoint-dir DIR" in capsys.readouterr().err
    assert main([*args, "--checkpoint-dir", str(tmp_path / "ck")]) == 130
    err = capsys.readouterr().err
    assert f"the last checkpoint is in {tmp_path / 'ck'}" in err
    assert "run the same command to resume from it: elmofeat pretrain" in err


def test_pretrain_streams_folders_globs_and_several_files(tmp_path, capsys):
    import gzip

    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "a.txt").write_text("\n".join(TEXTS[:24]) + "\n", encoding="utf-8")
    with gzip.open(folder / "b.txt.gz", "wt", encoding="utf-8") as handle:
        handle.write("\n".join(TEXTS[24:]) + "\n")
    expected = BiLM(embedding_dim=8, hidden_dim=8, max_epochs=2, random_state=0).fit(
        text for text in TEXTS)
    for i, inputs in enumerate(([str(folder)], [str(folder / "*.txt*")],
                                [str(folder / "a.txt"), str(folder / "b.txt.gz")])):
        output = tmp_path / f"m{i}.pt"  # an existing output is replaced only with --force
        assert main(["pretrain", *inputs, "-o", str(output), *TINY]) == 0
        assert "pretraining on 2 files (streamed)" in capsys.readouterr().out
        assert weights_digest(BiLM.load(output)) == weights_digest(expected)


def test_pretrain_a_recipe_from_a_data_home_into_a_model_folder(tmp_path, monkeypatch, capsys):
    from elmofeat.models import recipes

    home = tmp_path / "home"
    (home / "corpus").mkdir(parents=True)
    (home / "corpus" / "train.txt.gz").write_bytes(__import__("gzip").compress(
        ("\n".join(TEXTS) + "\n").encode()))
    (home / "corpus" / "heldout.txt.gz").write_bytes(__import__("gzip").compress(b"not this\n"))
    monkeypatch.setitem(recipes.RECIPES, "tiny", recipes.Recipe(
        "tiny", files=("corpus/*.txt.gz",), exclude=("*heldout*",),
        parameters=dict(embedding_dim=8, hidden_dim=8, max_epochs=1, random_state=3)))
    assert [f.name for f in recipes.RECIPES["tiny"].corpus(home).files] == ["train.txt.gz"]
    output = tmp_path / "tiny-model"
    monkeypatch.setattr("elmofeat.cli.pretrain.RECIPES", recipes.RECIPES)
    assert main(["pretrain", "--recipe", "tiny", "--data-home", str(home), "--pretrained",
                 "-o", str(output), "--epochs", "2", "--quiet"]) == 0
    bilm = BiLM.from_pretrained(output)
    assert bilm.random_state == 3 and bilm.n_epochs_ == 2  # the recipe's seed, the option's epochs
    assert (output / "config.json").is_file()


def test_the_en_base_recipe_says_how_to_make_the_vectors_the_data_home_lacks(tmp_path, capsys):
    """en-base reads GloVe 6B 100d, which the staged data does not hold: the error names
    where the recipe looks and the command that writes the file there."""
    home = tmp_path / "home"
    (home / "glove").mkdir(parents=True)
    output = tmp_path / "en-base"
    assert main(["pretrain", "--recipe", "en-base", "--data-home", str(home), "--pretrained",
                 "-o", str(output), "--quiet"]) == 1
    err = " ".join(capsys.readouterr().err.split())
    expected = home / "glove" / "glove.6B.100d.txt.gz"
    assert f"python benchmarks/convert_glove_100d.py --output {expected}" in err
    assert "--glove PATH" in err and not output.exists()
    # --glove in its place: the recipe's file is no longer needed, the given one is
    missing = tmp_path / "elsewhere.txt.gz"
    assert main(["pretrain", "--recipe", "en-base", "--data-home", str(home), "--pretrained",
                 "-o", str(output), "--glove", str(missing), "--quiet"]) == 1
    assert f"--glove: no such file: {missing}" in capsys.readouterr().err


def test_the_en_base_recipe_reads_glove_100d_from_the_data_home(tmp_path):
    from elmofeat.models.recipes import RECIPES

    params = RECIPES["en-base"].params(tmp_path)
    assert params["pretrained_vectors"] == str(tmp_path / "glove" / "glove.6B.100d.txt.gz")
    assert RECIPES["en-small"].params(tmp_path)["pretrained_vectors"].endswith("glove.6B.50d.txt.gz")
    vectors = tmp_path / "glove" / "glove.6B.100d.txt.gz"
    vectors.parent.mkdir()
    vectors.write_bytes(__import__("gzip").compress(b"the " + b"0.1 " * 99 + b"0.1\n"))
    RECIPES["en-base"].check_files(params)  # present: nothing to say


@pytest.mark.parametrize("output", ["texts.txt", "{folder}", "{folder}/model.pt", "glob"])
def test_pretrain_refuses_an_output_that_is_an_input(tmp_path, output, capsys):
    """It used to exit 0 and replace the corpus with the model."""
    folder = tmp_path / "books"
    folder.mkdir()
    corpus = folder / "texts.txt"
    corpus.write_text("\n".join(TEXTS) + "\n")
    given = str(folder / "*.txt") if output == "glob" else str(corpus if "{" not in output else folder)
    target = {"texts.txt": corpus, "glob": corpus}.get(output) or output.format(folder=folder)
    assert main(["pretrain", given, "-o", str(target), *TINY]) == 1
    assert "the input" in capsys.readouterr().err
    assert corpus.read_text() == "\n".join(TEXTS) + "\n"


def test_embed_features_do_not_depend_on_the_other_documents_of_the_file(saved_bilm, tmp_path):
    """A query embedded alone and inside a corpus gets the same features: the frozen
    mix's scales are the model's (measured on its pretraining texts), not the file's."""
    from elmofeat import BiLM

    (tmp_path / "corpus.txt").write_text("\n".join(TEXTS[:8]) + "\n")
    (tmp_path / "query.txt").write_text(TEXTS[2] + "\n")
    (tmp_path / "empty.txt").write_text("")
    for name in ("corpus", "query", "empty"):
        assert main(["embed", str(saved_bilm), str(tmp_path / f"{name}.txt"), "-o",
                     str(tmp_path / f"{name}.npy"), "--quiet"]) == 0
    corpus, query = np.load(tmp_path / "corpus.npy"), np.load(tmp_path / "query.npy")
    np.testing.assert_allclose(query[0], corpus[2], rtol=1e-5, atol=1e-6)
    assert np.load(tmp_path / "empty.npy").shape == (0, corpus.shape[1])  # documented: no error
    scales = BiLM.load(saved_bilm).layer_scales_
    assert scales.shape == (3,) and np.isfinite(scales).all() and (scales > 0).all()
    assert not np.allclose(scales, 1)


def test_embed_with_a_model_saved_without_layer_scales_says_it_mixes_unscaled(saved_bilm, tmp_path,
                                                                              capsys):
    from elmofeat import BiLM

    old = BiLM.load(saved_bilm)
    old.layer_scales_ = None  # as files written before biLMs measured it
    old.save(tmp_path / "old.pt")
    (tmp_path / "query.txt").write_text(TEXTS[2] + "\n")
    assert main(["embed", str(tmp_path / "old.pt"), str(tmp_path / "query.txt"), "-o",
                 str(tmp_path / "q.npy"), "--quiet"]) == 0
    assert "mixed unscaled" in capsys.readouterr().err


def test_embed_by_name_uses_the_shipped_models_own_scales(tmp_path):
    """en-small's weights predate BiLM.layer_scales_: its folder's config.json holds the
    spread measured on the corpus's held-out books (benchmarks/general_model.py scales),
    so `elmofeat embed en-small` is scaled and does not depend on the file either."""
    from elmofeat import BiLM

    general = BiLM.from_pretrained("en-small")
    assert general.layer_scales_ is not None and (general.layer_scales_ > 0).all()
    (tmp_path / "corpus.txt").write_text("\n".join(TEXTS[:6]) + "\n")
    (tmp_path / "query.txt").write_text(TEXTS[1] + "\n")
    for name in ("corpus", "query"):
        assert main(["embed", "en-small", str(tmp_path / f"{name}.txt"), "-o",
                     str(tmp_path / f"{name}.npy"), "--quiet"]) == 0
    np.testing.assert_allclose(np.load(tmp_path / "query.npy")[0],
                               np.load(tmp_path / "corpus.npy")[1], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["texts.parquet", "texts.txt"])
def test_embed_refuses_an_output_that_is_its_input_and_keeps_the_texts(saved_bilm, corpus,
                                                                       tmp_path, name, capsys):
    # The probe's case: embed MODEL docs.parquet -o docs.parquet replaced the corpus.
    source = tmp_path / name.replace("texts", "docs")
    source.write_bytes((corpus / name).read_bytes())
    before = source.read_bytes()
    output = source if name.endswith(".parquet") else source.with_suffix(".npy")
    if output != source:  # a .txt input cannot be a .npy output: name the model instead
        output = tmp_path / "model.npy"
        (tmp_path / "model.npy").write_bytes(saved_bilm.read_bytes())
        assert main(["embed", str(output), str(source), "-o", str(output)]) == 1
        assert output.read_bytes() == saved_bilm.read_bytes()
    else:
        assert main(["embed", str(saved_bilm), str(source), "-o", str(output)]) == 1
    assert source.read_bytes() == before
    assert "is the input" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["embed", "pretrain", "pretrain-folder", "benchmark"])
@pytest.mark.parametrize("where", ["under-a-file", "proc", "is-a-folder-or-file"])
def test_every_command_checks_its_output_before_any_work(saved_bilm, corpus, tmp_path, command,
                                                          where, capsys, monkeypatch):
    """A file where a folder should be, a folder nothing can be written in (/proc), or a
    folder where a file should be (and the reverse): refused in one line, before the
    texts are read or anything is trained."""
    from pathlib import Path

    for module in ("embed", "pretrain"):
        monkeypatch.setattr(f"elmofeat.cli.{module}.read_texts",
                            lambda *a, **k: pytest.fail("texts were read"))
    blocker = tmp_path / "blocker.txt"
    blocker.write_text("a file")
    taken = tmp_path / "taken.npy"  # a folder with a file's name
    taken.mkdir()
    wants_folder = command in ("pretrain-folder", "benchmark")
    output = {"under-a-file": blocker / ("out" if wants_folder else "out.npy"),
              "proc": Path("/proc/self") / ("elmofeat-out" if wants_folder else "out.npy"),
              "is-a-folder-or-file": blocker if wants_folder else taken}[where]
    args = {"embed": ["embed", str(saved_bilm), str(corpus / "texts.txt"), "-o", str(output)],
            "pretrain": ["pretrain", str(corpus / "texts.txt"), "-o", str(output), *TINY],
            "pretrain-folder": ["pretrain", str(corpus / "texts.txt"), "--pretrained", "-o",
                                str(output), *TINY],
            "benchmark": ["benchmark", "--quick", "--no-figures", "--output", str(output)]}[command]
    assert main(args) == 1
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and "--output" in error, error
    expected = {"under-a-file": "is a file, not a folder", "proc": "cannot write in",
                "is-a-folder-or-file": "not a folder" if wants_folder else "is a folder"}[where]
    assert expected in error, error


def test_pretrain_checks_its_checkpoint_folder_before_any_work(corpus, tmp_path, capsys):
    blocker = tmp_path / "blocker.txt"
    blocker.write_text("a file")
    assert main(["pretrain", str(corpus / "texts.txt"), "-o", str(tmp_path / "m.pt"),
                 "--checkpoint-dir", str(blocker), *TINY]) == 1
    assert "exists and is not a folder" in capsys.readouterr().err
    assert not (tmp_path / "m.pt").exists()


def test_embed_gives_ElmoVectorizer_with_the_models_scales(saved_bilm, corpus, tmp_path):
    """What the README says of `embed`: `ElmoVectorizer(bilm, scale_layers="bilm")`'s
    features; the default `ElmoVectorizer(bilm)` measures the scales on its fit texts,
    so it differs by those scales alone."""
    from elmofeat import BiLM, ElmoVectorizer

    assert main(["embed", str(saved_bilm), str(corpus / "texts.txt"), "-o",
                 str(tmp_path / "f.npy"), "--quiet"]) == 0
    embedded = np.load(tmp_path / "f.npy")
    bilm = BiLM.load(saved_bilm)
    same = ElmoVectorizer(bilm, scale_layers="bilm", bag_size=None,
                          cache_dir=None).fit_transform(TEXTS)
    np.testing.assert_allclose(embedded, same, rtol=1e-5, atol=1e-6)
    default = ElmoVectorizer(bilm, bag_size=None, cache_dir=None).fit(TEXTS)
    assert not np.allclose(embedded, default.transform(TEXTS), atol=1e-3)
    # The difference is each layer's scale: the 16-wide blocks of the concatenation.
    ratio = bilm.layer_scales_ / default.layer_scales_
    blocks = np.repeat(ratio, embedded.shape[1] // len(ratio))
    np.testing.assert_allclose(embedded * blocks, default.transform(TEXTS), rtol=1e-4, atol=1e-5)


def test_the_benchmark_names_only_the_data_it_lacks_before_it_runs(tmp_path, data_home, capsys):
    """CR is there, GloVe is not: one line names `elmofeat download glove-50d`, before any
    split runs (it used to fail after the tasks had loaded, with no command to run)."""
    import shutil

    home = tmp_path / "data"
    shutil.copytree(data_home / "cr", home / "cr")
    assert main(["benchmark", "--quick", "--datasets", "cr", "--methods", "tfidf", "glove",
                 "--data-home", str(home), "--output", str(tmp_path / "out"),
                 "--no-figures", "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert f"fetch them with: elmofeat download glove-50d --data-home {home}" in err
    assert "cr" not in err.split("missing from the data home")[1].split(";")[0].replace(str(home), "")
    assert not (tmp_path / "out" / "results.json").exists()
